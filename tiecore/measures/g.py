"""G, trec_eval's ``G``: each gain discounted by how far the ranking trails the ideal.

``G = sum_i g_i / log2(2 + C_i - S_i) / sum_i max(I_i, 0)`` over the docs of non-zero
gain, ``C_i = sum_{j <= i} max(I_j, 1)`` (each rank costs at least 1) and ``S_i =
sum_{j <= i} g_j`` (trec_eval's ``m_G.c``; notation of :mod:`tiecore.measures.gains`);
with gains 0 and 1 it is binG.

Under ties a doc's term depends on the sum of the gains above it, through a logarithm:
its mean over the orderings sums over the compositions of those gains in its tie group
(:func:`g_aware`).  The gains above a group are fixed, so groups add independent
terms; inside one the terms follow the composition of the gains placed so far, a Markov
chain position by position, whose backward pass gives the exact variance and the exact
min and max (:func:`g_spread`; higher gains first is not always the maximum).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("G(gains=1:3;2:9)"))
'G(gains=1:3.0;2:9.0)'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine import budget as budgets
from tiecore.engine.binomial import log_choose
from tiecore.engine.budget import check_cost
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.gains import _gains, _ideal_at, _rows, register_gain_family
from tiecore.measures.orderings import (
    GAINS_PARAM,
    gain_table,
    ideal_gains,
    row_gains,
    segment_cumsum,
    segment_last,
)
from tiecore.measures.registry import Doc, Words, describe


def g_measure(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """Per query trec_eval's G of the ranking's own order."""
    keep, starts, counts = _rows(ranking, depth)
    nq = len(counts)
    query = ranking.query[keep]
    index = np.arange(keep.size) - np.repeat(starts, counts)
    _, table = gain_table(judgments, gains)
    gain = row_gains(ranking, table)[keep]
    cost = np.maximum(_ideal_at(judgments, gains, query, index), 1.0)
    sum_cost = segment_cumsum(cost, starts)
    sum_results = segment_cumsum(gain, starts)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(gain != 0, gain / np.log2(2.0 + sum_cost - sum_results), 0.0)
    total = segment_last(segment_cumsum(term, starts), starts, nq, np.arange(nq))
    values, ideal_starts = ideal_gains(judgments, gains)
    positive = np.where(values > 0, values, 0.0)
    ideal = segment_last(
        segment_cumsum(positive, ideal_starts[:-1]), ideal_starts[:-1], nq, np.arange(nq)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ideal > 0, total / ideal, 0.0)


#: Most (doc gain, others' composition, position) terms G's exact mean sums in one run.
G_BUDGET = 5e7


def _group_terms(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """What G's terms of a tie group share, whatever the order inside it: each row's gain
    ``g``, the ideal's cost ``C`` through each retrieved row, the gains ``S`` above each
    group and each group's retrieved positions (``slots``, the depth cut applied)."""
    _, table = gain_table(judgments, gains)
    g = row_gains(ranking, table)
    keep, starts_ret, counts_ret = _rows(ranking, depth)
    query = ranking.query[keep]
    index = np.arange(keep.size) - np.repeat(starts_ret, counts_ret)
    cost = np.zeros(ranking.rank.size)
    cost[keep] = segment_cumsum(
        np.maximum(_ideal_at(judgments, gains, query, index), 1.0), starts_ret
    )
    above = np.cumsum(g) - g  # gains above each row, within its query
    above -= above[ranking.starts[ranking.query]]
    size = ranking.size
    slots = size if depth is None else np.clip(depth - ranking.offset, 0, size)
    return g, cost, above[ranking.group_start], slots


def g_aware(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """G's exact mean over the orderings.

    A doc of gain ``v != 0`` at 0-based position ``p`` of a tie group (row ``t + p``)
    adds ``v / log2(2 + C_{t+p} - S - v - W)``: ``C`` the ideal's cost through the row
    (fixed), ``S`` the gains above the group (fixed) and ``W`` the gains of the ``p``
    group docs above it, a uniformly random ``p``-subset of the group's other ``n - 1``
    docs.  With ``c_u`` of those others at each non-zero gain ``u`` and ``c_0`` at gain
    0, ``k_u`` of each among the ``p`` has chance ``prod_u C(c_u, k_u) C(c_0, p - K) /
    C(n - 1, p)`` (``K = sum k_u``, ``W = sum k_u u``), and each of the group's docs is at
    ``p`` with chance ``1 / n``: the mean sums over the gains ``v``, the compositions
    ``k`` and the retrieved positions ``p`` (refused past :data:`G_BUDGET` terms).
    """
    nq = len(ranking.counts)
    g, cost, s_before, slots = _group_terms(ranking, judgments, gains, depth)
    gstart, size = ranking.group_start, ranking.size
    # the (group, non-zero gain) pairs and their counts
    nonzero = np.flatnonzero(g != 0)
    pair_key = np.stack([ranking.group[nonzero], g[nonzero]])
    if not nonzero.size:
        return np.zeros(nq)
    pairs, count = np.unique(pair_key, axis=1, return_counts=True)
    pgroup, pvalue = pairs[0].astype(np.int64), pairs[1]
    width = int(np.bincount(pgroup).max())  # distinct non-zero gains of a group, at most
    first = np.searchsorted(pgroup, np.arange(len(gstart)))
    # per type (group, gain v of the doc): the others' counts per non-zero gain, padded
    tgroup, tvalue, tcount = pgroup, pvalue, count
    t_first = first[tgroup]
    column = np.arange(width)
    member = t_first[:, None] + column[None, :]
    inside = column[None, :] < np.bincount(pgroup, minlength=len(gstart))[tgroup][:, None]
    member = np.where(inside, member, 0)
    others = np.where(inside, count[member] - (pvalue[member] == tvalue[:, None]), 0)
    values = np.where(inside, pvalue[member], 0.0)
    zeros = size[tgroup] - 1 - others.sum(axis=1)
    radix = others + 1
    combos = np.prod(radix, axis=1)
    live = slots[tgroup] > 0
    terms = float(np.sum(np.where(live, combos * slots[tgroup], 0)))
    check_cost(
        np.array([terms]), G_BUDGET, run=ranking.name, what="G mean (its sum)", unit="terms",
        instead="ties='oblivious' or 'sampled' for G on this run",
    )  # fmt: skip
    types = np.flatnonzero(live)
    owner = np.repeat(types, combos[types])
    code = np.arange(owner.size) - np.repeat(
        np.cumsum(combos[types]) - combos[types], combos[types]
    )
    k = np.zeros((owner.size, width), np.int64)
    for j in range(width):  # a handful of distinct gains
        k[:, j] = code % radix[owner, j]
        code //= radix[owner, j]
    big_k = k.sum(axis=1)
    w_sum = (k * values[owner]).sum(axis=1)
    ln_weight = log_choose(others[owner], k, table=True).sum(axis=1)
    # positions p = K .. min(K + zeros, slots - 1)
    last = np.minimum(big_k + zeros[owner], slots[tgroup[owner]] - 1)
    span = np.maximum(last - big_k + 1, 0)
    row = np.repeat(np.arange(owner.size), span)
    p = np.arange(row.size) - np.repeat(np.cumsum(span) - span, span) + big_k[row]
    t = owner[row]
    grp = tgroup[t]
    ln_zero = log_choose(zeros[t], p - big_k[row], table=True)
    ln_all = log_choose(size[grp] - 1, p, table=True)
    chance = np.exp(ln_weight[row] + ln_zero - ln_all)
    v = tvalue[t]
    at = gstart[grp] + p
    with np.errstate(divide="ignore", invalid="ignore"):
        term = v / np.log2(2.0 + cost[at] - s_before[grp] - v - w_sum[row])
    share = tcount[t] / size[grp]
    total = np.bincount(ranking.query[at], weights=share * chance * term, minlength=nq)
    ideal_values, ideal_starts = ideal_gains(judgments, gains)
    positive = np.where(ideal_values > 0, ideal_values, 0.0)
    ideal = np.bincount(
        np.repeat(np.arange(nq), np.diff(ideal_starts)), weights=positive, minlength=nq
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ideal > 0, total / ideal, 0.0)


#: Seconds per (composition, position, next gain) step of G's variance and bounds, and
#: per position (one numpy step over the groups), on a 2-core x86-64 machine, rounded up.
G_STEP_SECONDS, G_POSITION_SECONDS = 4e-7, 2e-4


def _check_spread_cost(ranking: Ranking, combos: np.ndarray, d: np.ndarray, width: int):
    """Refuse (:class:`~tiecore.errors.Refusal`) G's variance and bounds whose backward
    pass passes the budgets (:mod:`tiecore.engine.budget`): ``sum combos d (width + 1)``
    steps and ``max d`` positions of time, each composition's arrays of memory."""
    steps = float(np.sum(combos * d * (width + 1.0)))
    seconds = steps * G_STEP_SECONDS + float(d.max(initial=0)) * G_POSITION_SECONDS
    memory = float(combos.sum()) * 8.0 * (4 * width + 24)
    if budgets.within(seconds, memory):
        return
    budgets.check(
        f"run {ranking.name}",
        f"G's exact variance and bounds ({steps:.3g} steps over its groups' compositions)",
        seconds,
        memory,
        "G's tie-aware mean without the spread (ties='aware', no --spread), or "
        "ties='sampled' for G on this run",
    )


def g_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """G's exact ``value, var, min, max`` over the orderings.

    Every term of a tie group depends on its own docs only (the gains above the group are
    fixed), so groups add independent values ``Y``.  Inside a group (``n`` docs, ``d`` of
    its slots retrieved) the term at position ``p`` is ``phi(p, s, v) = v / log2(2 +
    C_{t+p} - S - W(s) - v)``, a function of the gain ``v`` placed there and of the
    composition ``s`` (how many docs of each non-zero gain, ``W(s)`` their gains) of the
    ``p`` docs above it: a uniform ordering draws the next gain with chance ``(c_v - s_v)
    / (n - p)``, a Markov chain on ``(p, s)``.  Backwards from ``p = d`` (all 0):

        F_p(s) = sum_v P_v (phi_v + F_{p+1}(s + e_v))                  (the mean to come)
        V_p(s) = sum_v P_v (V_{p+1}(s + e_v) + (phi_v + F_{p+1}(s + e_v) - F_p(s))^2)
        max_p(s) = max_{P_v > 0} (phi_v + max_{p+1}(s + e_v)), min likewise

    (the law of total variance; the extremes of a path's sum).  ``V_0``, ``max_0`` and
    ``min_0`` at the empty composition are the group's variance and extremes: exact for
    any gains (higher gains first is not always G's maximum).  One numpy step per
    position, over every group's compositions at once, refused past the budgets
    (:func:`_check_spread_cost`).  The value is :func:`g_aware`'s.
    """
    gains = _gains(measure)
    nq = len(ranking.counts)
    value = g_aware(ranking, judgments, gains, depth)
    g, cost, s_before, slots = _group_terms(ranking, judgments, gains, depth)
    ideal_values, ideal_starts = ideal_gains(judgments, gains)
    positive = np.where(ideal_values > 0, ideal_values, 0.0)
    ideal = np.bincount(
        np.repeat(np.arange(nq), np.diff(ideal_starts)), weights=positive, minlength=nq
    )
    zero = np.zeros(nq)
    nonzero = np.flatnonzero(g != 0)
    if not nonzero.size:
        return {"value": value, "var": zero, "min": zero.copy(), "max": zero.copy()}
    gstart, size = ranking.group_start, ranking.size
    pairs, count = np.unique(
        np.stack([ranking.group[nonzero], g[nonzero]]), axis=1, return_counts=True
    )
    pgroup, pvalue = pairs[0].astype(np.int64), pairs[1]
    kinds = np.bincount(pgroup, minlength=len(gstart))
    live = np.flatnonzero((kinds > 0) & (slots > 0))
    if not live.size:
        return {"value": value, "var": zero, "min": zero.copy(), "max": zero.copy()}
    width = int(kinds.max())
    first = np.searchsorted(pgroup, np.arange(len(gstart)))
    column = np.arange(width)
    inside = column[None, :] < kinds[live][:, None]
    member = np.where(inside, first[live][:, None] + column[None, :], 0)
    counts = np.where(inside, count[member], 0)  # per live group, per gain: its docs
    values = np.where(inside, pvalue[member], 0.0)
    zeros = size[live] - counts.sum(axis=1)
    radix = counts + 1
    stride = np.cumprod(np.c_[np.ones(live.size, np.int64), radix[:, :-1]], axis=1)
    combos = np.prod(radix, axis=1)
    d = slots[live]
    _check_spread_cost(ranking, combos, d, width)
    order = np.argsort(-d, kind="stable")  # deepest first: the active groups a prefix
    live, d = live[order], d[order]
    groups = {
        "counts": counts[order],
        "values": values[order],
        "zeros": zeros[order],
        "stride": stride[order],
        "combos": combos[order],
        "d": d,
        "n": size[live].astype(np.float64),
        "row": gstart[live],
        "above": s_before[live],
    }
    var, high, low = _backward_pass(groups, cost)
    offset = np.cumsum(combos[order]) - combos[order]
    gq = ranking.group_query[live]
    out = {
        name: np.bincount(gq, weights=field[offset], minlength=nq)
        for name, field in (("var", var), ("max", high), ("min", low))
    }
    scale = np.where(ideal > 0, 1.0 / np.where(ideal > 0, ideal, 1.0), 0.0)
    return {
        "value": value,
        "var": out["var"] * scale * scale,
        "min": out["min"] * scale,
        "max": out["max"] * scale,
    }


def _backward_pass(groups: dict, cost: np.ndarray):
    """Per composition code of the groups (sorted deepest first, their codes one after the
    other) the variance, max and min of the terms to come from position 0 (at each group's
    first code: the empty composition): :func:`g_spread`'s recursion, one vectorised step
    per position, over the groups whose slots reach it (a prefix of the codes).

    ``groups`` holds per group ``counts`` and ``values`` (per non-zero gain), ``zeros``,
    ``stride`` (of each gain's digit in the code), ``combos``, ``d`` (slots), ``n``,
    ``row`` (its first row) and ``above`` (the gains above it); ``cost`` the ideal's
    running cost per row."""
    counts, values, zeros = groups["counts"], groups["values"], groups["zeros"]
    stride, combos, d = groups["stride"], groups["combos"], groups["d"]
    width = counts.shape[1]
    offset = np.cumsum(combos) - combos
    owner = np.repeat(np.arange(combos.size), combos)
    rest = np.arange(owner.size) - offset[owner]
    k = np.zeros((owner.size, width), np.int64)
    for j in range(width):  # a handful of distinct gains
        k[:, j] = rest % (counts[owner, j] + 1)
        rest //= counts[owner, j] + 1
    big_k = k.sum(axis=1)
    fixed = groups["above"][owner] + (k * values[owner]).sum(axis=1)  # S + W(s)
    n, row = groups["n"][owner], groups["row"][owner]
    mean, var = np.zeros(owner.size), np.zeros(owner.size)
    high, low = np.zeros(owner.size), np.zeros(owner.size)
    active = np.cumsum(combos)  # codes of the groups with d > p: a prefix
    for p in range(int(d[0]) - 1, -1, -1):  # one vectorised step per position
        a = int(active[np.searchsorted(-d, -p, side="left") - 1])
        o, kk = owner[:a], k[:a]
        rem = n[:a] - p
        used = p - big_k[:a]
        valid = (used >= 0) & (used <= zeros[o])
        chance = np.where(valid, (zeros[o] - used) / rem, 0.0)
        new_mean = np.where(chance > 0, chance * mean[:a], 0.0)
        outcomes = [(chance, mean[:a], var[:a], high[:a], low[:a], 0.0)]
        for j in range(width):
            cj = np.where(valid, (counts[o, j] - kk[:, j]) / rem, 0.0)
            go = cj > 0
            nxt = np.where(go, np.arange(a) + stride[o, j], 0)
            v = values[o, j]
            with np.errstate(divide="ignore", invalid="ignore"):
                phi = np.where(go, v / np.log2(2.0 + cost[row[:a] + p] - fixed[:a] - v), 0.0)
            outcomes.append((cj, mean[nxt], var[nxt], high[nxt], low[nxt], phi))
            new_mean = new_mean + np.where(go, cj * (phi + mean[nxt]), 0.0)
        new_var = np.zeros(a)
        new_high, new_low = np.full(a, -np.inf), np.full(a, np.inf)
        for cj, m_next, v_next, h_next, l_next, phi in outcomes:
            go = cj > 0
            gap = phi + m_next - new_mean
            new_var = new_var + np.where(go, cj * (v_next + gap * gap), 0.0)
            new_high = np.where(go, np.maximum(new_high, phi + h_next), new_high)
            new_low = np.where(go, np.minimum(new_low, phi + l_next), new_low)
        mean[:a], var[:a] = new_mean, new_var
        high[:a] = np.where(np.isfinite(new_high), new_high, 0.0)
        low[:a] = np.where(np.isfinite(new_low), new_low, 0.0)
    return var, high, low


register_gain_family(
    "G",
    "g",
    "trec_eval's G: sum of gain / log2(2 + ideal cost - gain so far), / the ideal's "
    "gain (each rank costing at least 1)",
    {"gains": GAINS_PARAM},
    g_measure,
    aware=g_aware,
    spread=g_spread,
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "G",
    words=Words(
        whole=(
            "normalised gain G",
            "each document's gain divided by log2(2 + the gain the best order has collected by "
            "its rank − the gain collected so far), summed and divided by the best order's total "
            "gain (trec_eval's G)",
        ),
    ),
    docs=(
        Doc(
            "`G`, `G(gains=…)`",
            "`G`, `G.1=3,2=9`",
            "trec_eval's G: Σ over the docs of gain g ≠ 0 of g / log2(2 + C_i − S_i), C_i the "
            "ideal's gains through rank i (each rank costing at least 1), S_i the ranking's; / "
            "the ideal's total positive gain. With levels 0 and 1 it is binG. Its aware value is "
            "exact (a sum over each doc's gain, the compositions of the gains above it in its tie "
            "group and its positions); so are its variance and bounds: tie groups add independent "
            "terms, and each group's variance, min and max come from one backward pass over the "
            "compositions of the gains placed so far, position by position (the law of total "
            "variance; a path's extremes: higher gains first is not always G's maximum), refused "
            "past the time budget (`tiecore/measures/g.py`)",
            "trec_eval 9.0.8",
        ),
    ),
)

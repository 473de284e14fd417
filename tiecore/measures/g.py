"""G, trec_eval's ``G``: each gain discounted by how far the ranking trails the ideal.

``G = sum_i g_i / log2(2 + C_i - S_i) / sum_i max(I_i, 0)`` over the docs of non-zero
gain, ``C_i = sum_{j <= i} max(I_j, 1)`` (each rank costs at least 1) and ``S_i =
sum_{j <= i} g_j`` (trec_eval's ``m_G.c``; notation of :mod:`tiecore.measures.gains`);
with gains 0 and 1 it is binG.

Under ties a doc's term depends on the sum of the gains above it, through a logarithm:
its mean over the orderings sums over the compositions of those gains in its tie group
(:func:`g_aware`); its variance is not derived yet.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("G(gains=1:3;2:9)"))
'G(gains=1:3.0;2:9.0)'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.gains import _ideal_at, _rows, register_gain_family
from tiecore.measures.orderings import (
    GAINS_PARAM,
    gain_table,
    ideal_gains,
    row_gains,
    segment_cumsum,
    segment_last,
)


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
    from scipy.special import gammaln

    nq = len(ranking.counts)
    _, table = gain_table(judgments, gains)
    g = row_gains(ranking, table)
    keep, starts_ret, counts_ret = _rows(ranking, depth)
    query = ranking.query[keep]
    index = np.arange(keep.size) - np.repeat(starts_ret, counts_ret)
    cost = np.zeros(ranking.rank.size)
    cost[keep] = segment_cumsum(
        np.maximum(_ideal_at(judgments, gains, query, index), 1.0), starts_ret
    )
    gstart, size = ranking.group_start, ranking.size
    above = np.cumsum(g) - g  # gains above each row, within its query
    above -= above[ranking.starts[ranking.query]]
    s_before = above[gstart]
    slots = size if depth is None else np.clip(depth - ranking.offset, 0, size)
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
    if terms > G_BUDGET:
        from tiecore.errors import Refusal

        raise Refusal(
            f"run {ranking.name}", None,
            f"G's exact mean would sum {terms:.3g} terms, more than the {G_BUDGET:.3g} it takes",
            "ties='oblivious' or 'sampled' for G on this run",
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
    ln_weight = (
        gammaln(others[owner] + 1.0) - gammaln(k + 1.0) - gammaln(others[owner] - k + 1.0)
    ).sum(axis=1)
    # positions p = K .. min(K + zeros, slots - 1)
    last = np.minimum(big_k + zeros[owner], slots[tgroup[owner]] - 1)
    span = np.maximum(last - big_k + 1, 0)
    row = np.repeat(np.arange(owner.size), span)
    p = np.arange(row.size) - np.repeat(np.cumsum(span) - span, span) + big_k[row]
    t = owner[row]
    grp = tgroup[t]
    n1 = size[grp] - 1.0
    z = zeros[t].astype(np.float64)
    ln_zero = gammaln(z + 1.0) - gammaln(p - big_k[row] + 1.0) - gammaln(z - p + big_k[row] + 1.0)
    ln_all = gammaln(n1 + 1.0) - gammaln(p + 1.0) - gammaln(n1 - p + 1.0)
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


register_gain_family(
    "G",
    "g",
    "trec_eval's G: sum of gain / log2(2 + ideal cost - gain so far), / the ideal's "
    "gain (each rank costing at least 1)",
    {"gains": GAINS_PARAM},
    g_measure,
    aware=g_aware,
    inexact_spread="its variance needs pairs of terms over the joint gains above two docs, "
    "not derived yet",
)

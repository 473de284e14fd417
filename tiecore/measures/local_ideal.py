"""nDCG with the local ideal: the best ordering of the top k docs of the ranking itself.

``nDCG(ideal=local)@k = DCG@k / IDCG_local``, where ``IDCG_local`` is the DCG
of the docs in the top ``k`` of this ordering re-sorted by gain descending
(the seed blog's "Local: best ordering possible from the top N search
results").  Gains and discount are nDCG's (level or ``2**level - 1``, 0 for
levels <= 0 and unjudged docs; ``1 / log2(rank + 1)``); ``k`` is ``min(k,
depth, retrieved)``, all retrieved without a cutoff; a query whose top k holds
no positive gain scores 0.  So the value is 1 exactly when the top k are in
gain order, whatever sits below them.

Under ties the docs in the top k depend on the order of the group straddling
rank k (at most one per query), so the value is a ratio with a random
denominator.  Write ``X = (A + B) / I``:

- ``A``, the DCG of the groups wholly in the top k: their docs are fixed, only
  their orders move, independently of the straddling group;
- the straddling group (``n`` docs after ``t`` ranked above it, ``m = k - t``
  slots in the top k) puts a uniformly random ``m``-subset ``S`` of its docs in
  uniformly random order at ranks ``t + 1 .. k``; ``B`` is their DCG;
- ``I = I(S)``, fixed given ``S``.

``S`` matters only through its counts per gain level ``a_l`` (multivariate
hypergeometric, ``P(a) = prod_l C(n_l, a_l) / C(n, m)``).  Given ``a``,
``E[B | a] = g_mean(a) sum_p w_p`` and, a random permutation of the subset's
gains over the ``m`` discounts ``w_p = 1 / log2(t + p + 1)``,
``Var(B | a) = sum_S (g - g_mean)^2 sum_p (w_p - w_mean)^2 / (m - 1)``; ``A``
has the aware mean and variance of its groups (the same formula per group).
Then, over the compositions ``a`` of ``m``,

    E[X] = sum_a P(a) mu_a,   mu_a = (E[A] + E[B | a]) / I(a)
    Var X = sum_a P(a) (Var A + Var(B | a)) / I(a)^2 + sum_a P(a) (mu_a - E[X])^2

(the law of total variance), and the extremes are
``max_a (max A + max(B | a)) / I(a)`` (``max A`` every wholly-in group sorted
by gain descending, ``max(B | a)`` the subset sorted descending) and likewise
the minimum: not the optimistic and pessimistic orders, since pushing a high
gain into the top k raises the ideal too.  Exp gains are scaled per
composition by its largest level (exact powers of two, as
:func:`tiecore.engine.judgments.gain_of`), so a top k of small levels keeps its gains
even when the query's qrels hold a huge one.  A group whose compositions
number more than :data:`BUDGET`, or whose count and sum would pass the time or
memory budget (:mod:`tiecore.engine.budget`, priced by :func:`_priced_counts`), is
refused (:class:`~tiecore.errors.InputError`) with the largest cutoff that fits.

Examples
--------
>>> import pandas as pd
>>> from tiecore.engine.judgments import Judgments
>>> from tiecore.engine.ranking import Ranking
>>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "level": [1, 2, 0]})
>>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
>>> j = Judgments.from_qrels(qrels)
>>> r = Ranking.build(run, j, tiebreak="file_order")  # a, b, c
>>> round(float(local_oblivious(r, j, 2)[0]), 4)  # (1 + 2/log2 3) / (2 + 1/log2 3)
0.8597
>>> found = local_spread(r, j, 2)  # b or c at rank 2: 0.8597 or 1, each half the time
>>> [round(float(found[key][0]), 4) for key in ("value", "min", "max")]
[0.9299, 0.8597, 1.0]
"""

from __future__ import annotations

import numpy as np

from tiecore.engine import budget as budgets
from tiecore.engine.binomial import log_choose
from tiecore.engine.budget import check_cost
from tiecore.engine.judgments import Judgments, gain_of
from tiecore.engine.ranking import Ranking

#: The most compositions of its slots one straddling tie group may need.
BUDGET = 2_000_000
#: Composition rows handled at once (several groups together, each within BUDGET).
CHUNK = 2_000_000
#: Seconds and bytes per cell of the sum over compositions (one composition times one
#: gain class; measured 0.2-0.4 us and 90-115 bytes with temporaries, rounded up).
SUM_SECONDS, SUM_BYTES = 6e-7, 128
#: Seconds per cell (query x slot x gain class) and bytes per cell (query x slot) of the
#: compositions' count (:func:`_composition_table`; measured 15-40 ns, 48 bytes).
COUNT_SECONDS, COUNT_BYTES = 5e-8, 64


def _levels(ranking: Ranking) -> np.ndarray:
    """Each row's gain level: its judged level when positive, else 0 (gain 0)."""
    return np.where(ranking.judged & (ranking.level > 0), ranking.level, 0).astype(np.int64)


def _prefix_discounts(width: int) -> np.ndarray:
    """``D[x] = sum_{i <= x} 1 / log2(i + 1)``, ``x = 0 .. width``."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2.0, width + 2.0)))])


def _query_max(values: np.ndarray, query: np.ndarray, nq: int) -> np.ndarray:
    out = np.zeros(nq, dtype=np.int64)
    np.maximum.at(out, query, values)
    return out


def _ideal_of_own_top(ranking, judgments, cut, gain) -> tuple[np.ndarray, np.ndarray]:
    """Per query the local ideal of the ranking's own top ``cut`` (the same in every
    order when no tie group straddles the cut), exp gains scaled by ``2**-shift``, the
    top level there: ``(ideal, shift)``."""
    nq = len(ranking.counts)
    rows = np.flatnonzero(ranking.rank <= cut[ranking.query])
    query, level = ranking.query[rows], _levels(ranking)[rows]
    shift = _query_max(level, query, nq) if gain != "linear" else np.zeros(nq, np.int64)
    g = gain_of(level, gain, shift[query])
    order = np.lexsort((-level, query))
    place = np.arange(rows.size) - np.searchsorted(query[order], query[order], side="left")
    ideal = np.bincount(query[order], weights=g[order] / np.log2(place + 2.0), minlength=nq)
    return ideal.astype(np.float64), shift  # (bincount of nothing is int64)


def local_oblivious(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    gain: str = "linear",
    depth: int | None = None,
) -> np.ndarray:
    """Per-query nDCG(ideal=local)@cutoff of the ranking's own order.

    ``sum_{j<=k} g_j / log2(j + 1) / sum_{i<=k} g_(i) / log2(i + 1)``, ``g_(i)``
    the top k's gains sorted descending; 0 when they are all 0.
    """
    nq = len(ranking.counts)
    cut = ranking.cut(cutoff, depth)
    ideal, shift = _ideal_of_own_top(ranking, judgments, cut, gain)
    rows = np.flatnonzero(ranking.rank <= cut[ranking.query])
    query = ranking.query[rows]
    g = gain_of(_levels(ranking)[rows], gain, shift[query])
    dcg = np.bincount(query, weights=g / np.log2(ranking.rank[rows] + 1.0), minlength=nq)
    out = np.zeros(nq)
    np.divide(dcg, ideal, out=out, where=ideal > 0)
    return out


def _fixed_part(ranking, level, rows, gain, nq):
    """Mean, variance, max and min of ``A``, the DCG of the groups wholly in the top k,
    with exp gains scaled by ``2**-shift`` (``shift`` per query, returned too)."""
    query, group, rank = ranking.query[rows], ranking.group[rows], ranking.rank[rows]
    shift = _query_max(level[rows], query, nq) if gain != "linear" else np.zeros(nq, np.int64)
    g = gain_of(level[rows], gain, shift[query])
    w = 1.0 / np.log2(rank + 1.0)
    ng = len(ranking.size)
    n = np.maximum(ranking.size, 1).astype(np.float64)
    g_mean = np.bincount(group, weights=g, minlength=ng) / n
    w_mean = np.bincount(group, weights=w, minlength=ng) / n
    mean = np.bincount(query, weights=g_mean[group] * w, minlength=nq)
    spread_g = np.bincount(group, weights=(g - g_mean[group]) ** 2, minlength=ng)
    spread_w = np.bincount(group, weights=(w - w_mean[group]) ** 2, minlength=ng)
    per_group = np.zeros(ng)
    np.divide(spread_g * spread_w, n - 1.0, out=per_group, where=n > 1)
    var = np.bincount(ranking.group_query, weights=per_group, minlength=nq)
    extremes = []
    for sign in (-1, 1):  # levels descending (max), then ascending (min) inside each group
        order = rows[np.lexsort((sign * level[rows], group))]
        sorted_g = gain_of(level[order], gain, shift[query])
        extremes.append(np.bincount(query, weights=sorted_g * w, minlength=nq))
    return mean, var, extremes[0], extremes[1], shift


def _classes(query, level, nq):
    """Each row's class (its query's distinct levels, descending), classes per query."""
    order = np.lexsort((-level, query))
    q, lv = query[order], level[order]
    new = np.r_[True, (q[1:] != q[:-1]) | (lv[1:] != lv[:-1])] if q.size else np.zeros(0, bool)
    code = np.cumsum(new) - 1
    first_of_query = np.r_[True, q[1:] != q[:-1]] if q.size else new
    first_code = np.maximum.accumulate(np.where(first_of_query, code, 0)) if q.size else code
    out = np.empty_like(order)
    out[order] = code - first_code
    count = np.zeros(nq, dtype=np.int64)
    np.maximum.at(count, q, code - first_code + 1)
    return out, count


def _composition_table(n_class: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Per row and ``m' = 0 .. max(m)``, the number of ``a`` with ``0 <= a_l <=
    n_class[l]`` and ``sum a = m'`` (capped at 1e18): the coefficient of ``x^m'`` in
    ``prod_l (1 + x + .. + x^n_l)``; ``(rows, max(m) + 1)``."""
    width = int(m.max(initial=0)) + 1
    poly = np.zeros((len(m), width))
    poly[:, 0] = 1.0
    column = np.arange(width)
    for n_l in n_class.T:
        total = np.cumsum(poly, axis=1)
        back = column[None, :] - n_l[:, None] - 1
        lower = np.take_along_axis(total, np.maximum(back, 0), axis=1)
        poly = np.minimum(total - np.where(back >= 0, lower, 0.0), 1e18)
    return poly


def _compositions(n_class: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ``a`` of :func:`_composition_table` for ``m``: ``(owner row, a)``, owners
    ascending."""
    rows, width = n_class.shape
    rest = np.cumsum(n_class[:, ::-1], axis=1)[:, ::-1] - n_class  # capacity after l
    owner = np.arange(rows)
    remaining = m.astype(np.int64)
    parts = np.zeros((rows, 0), dtype=np.int64)
    for column in range(width):
        low = np.maximum(0, remaining - rest[owner, column])
        high = np.minimum(n_class[owner, column], remaining)
        choices = high - low + 1
        pick = np.repeat(np.arange(owner.size), choices)
        within = np.arange(pick.size) - np.repeat(np.cumsum(choices) - choices, choices)
        a = low[pick] + within
        parts = np.column_stack([parts[pick], a])
        owner, remaining = owner[pick], remaining[pick] - a
    return owner, parts


def local_spread(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    gain: str = "linear",
    depth: int | None = None,
    budget: float = BUDGET,
) -> dict[str, np.ndarray]:
    """Per-query tie-aware nDCG(ideal=local)@cutoff with its exact variance, min and max.

    Sums over the compositions of the straddling group's slots (module
    docstring); a group needing more than ``budget`` of them is an
    :class:`~tiecore.errors.InputError` naming run and query.

    Returns
    -------
    dict
        ``value, var, min, max``, arrays in the judgments' query order.
    """
    nq = len(ranking.counts)
    cut = ranking.cut(cutoff, depth)
    level = _levels(ranking)
    gq = ranking.group_query
    t, n, c = ranking.offset, ranking.size, cut[gq]
    whole = t + n <= c
    straddle = (t < c) & (t + n > c)
    fixed_rows = np.flatnonzero(whole[ranking.group])
    mean_a, var_a, max_a, min_a, shift_a = _fixed_part(ranking, level, fixed_rows, gain, nq)
    # the straddling group of each query: its docs, its slots above the cut
    tied_rows = np.flatnonzero(straddle[ranking.group])
    sq = ranking.query[tied_rows]
    groups = np.flatnonzero(straddle)
    t_q, n_q, m_q = np.zeros(nq, np.int64), np.zeros(nq, np.int64), np.zeros(nq, np.int64)
    t_q[gq[groups]], n_q[gq[groups]] = t[groups], n[groups]
    m_q[gq[groups]] = c[groups] - t[groups]
    head = tied_rows[ranking.rank[tied_rows] <= cut[sq]]
    w = 1.0 / np.log2(ranking.rank[head] + 1.0)
    w_sum = np.bincount(ranking.query[head], weights=w, minlength=nq)
    w_mean = w_sum / np.maximum(m_q, 1)
    w_spread = np.bincount(
        ranking.query[head], weights=(w - w_mean[ranking.query[head]]) ** 2, minlength=nq
    )
    # classes: each query's distinct levels among the fixed and straddling docs, descending
    rows = np.concatenate([fixed_rows, tied_rows])
    query = ranking.query[rows]
    klass, count = _classes(query, level[rows], nq)
    width = max(int(count.max(initial=0)), 1)
    fixed_n = np.zeros((nq, width), np.int64)
    tied_n = np.zeros((nq, width), np.int64)
    class_level = np.zeros((nq, width), np.int64)
    np.add.at(fixed_n, (query[: fixed_rows.size], klass[: fixed_rows.size]), 1)
    np.add.at(tied_n, (query[fixed_rows.size :], klass[fixed_rows.size :]), 1)
    class_level[query, klass] = level[rows]
    total = _priced_counts(ranking, judgments, (tied_n, t_q, n_q, m_q, cut), budget)
    prefix = _prefix_discounts(int(cut.max(initial=0)))
    context = (fixed_n, tied_n, class_level, t_q, m_q, w_sum, w_spread)
    fixed = (mean_a, var_a, max_a, min_a, shift_a)
    out = {key: np.zeros(nq) for key in ("value", "var", "min", "max")}
    chunk = np.cumsum(total) // CHUNK
    for part in np.unique(chunk):
        at = np.flatnonzero(chunk == part)
        found = _over_compositions(at, context, fixed, prefix, gain)
        for key, values in found.items():
            out[key][at] = values
    return out


def _priced_counts(ranking: Ranking, judgments: Judgments, straddling, budget: float):
    """Per query the compositions of its straddling group's slots (1 for none), after
    pricing the count and then the sum over them (:mod:`tiecore.engine.budget`); refused
    (InputError) with the largest cutoff that fits, when a group needs more than
    ``budget`` compositions or the work passes the time or memory budget.

    Cost: the count is a DP over ``queries x slots x classes`` cells
    (:data:`COUNT_SECONDS`, :data:`COUNT_BYTES` per ``query x slot``), the sum
    ``compositions x classes`` cells (:data:`SUM_SECONDS`; :data:`SUM_BYTES` for the
    largest chunk's).  A smaller cutoff ``k`` is priced on the same groups with
    ``min(m, k - t)`` slots, each count taken as the largest for at most that many
    (so the price grows with ``k``).
    """
    tied_n, t_q, n_q, m_q, cut = straddling
    live = np.flatnonzero(m_q > 0)
    classes = tied_n.shape[1]
    deepest = int((t_q + m_q).max(initial=0))

    def count_price(k: int) -> tuple[float, float]:
        width = min(int(m_q.max(initial=0)), k) + 1
        return live.size * width * classes * COUNT_SECONDS, live.size * width * COUNT_BYTES

    seconds, memory = count_price(deepest)
    if not budgets.within(seconds, memory):
        what = f"counting the compositions of {live.size} tie groups' slots at the cut"
        _refuse(ranking, what, seconds, memory, budgets.largest(count_price, deepest))
    table = _composition_table(tied_n[live], m_q[live])
    total = np.ones(len(m_q))
    total[live] = table[np.arange(live.size), m_q[live]]
    table = np.maximum.accumulate(table, axis=1)  # at most m' slots: grows with m'

    def price(k: int) -> tuple[float, float]:
        slots = np.clip(k - t_q[live], 0, m_q[live])
        found = np.ones(len(m_q))
        found[live] = np.where(slots == m_q[live], total[live], table[np.arange(live.size), slots])
        if found.max(initial=0) > budget:
            return np.inf, np.inf
        chunk = (np.cumsum(found) // CHUNK).astype(np.int64)  # as local_spread chunks
        rows = np.bincount(chunk, weights=found).max(initial=0)
        return found.sum() * classes * SUM_SECONDS, rows * classes * SUM_BYTES

    seconds, memory = price(deepest)
    if np.isfinite(seconds) and budgets.within(seconds, memory):
        return total
    fits = budgets.largest(price, deepest)

    def group(w: int) -> str:
        return (
            f"query {judgments.qids[w]} has a tie group of {n_q[w]} docs in "
            f"{int((tied_n[w] > 0).sum())} gain levels with {m_q[w]} of its slots in the top "
            f"{cut[w]}"
        )

    check_cost(
        total, budget, run=ranking.name, what="nDCG(ideal=local) value",
        unit="compositions of those slots", instead=_fits(fits), group=group,
    )  # fmt: skip
    worst = int(np.argmax(total))
    what = (
        f"{group(worst)}: nDCG(ideal=local)'s exact value needs {total[worst]:.3g} "
        f"compositions of those slots ({total.sum():.3g} in all, over every query)"
    )
    _refuse(ranking, what, seconds, memory, fits)


def _fits(cutoff: int) -> str:
    """What would fit: a cutoff of at most ``cutoff`` (when one does), or sampled ties."""
    smaller = f"nDCG(ideal=local)@k with k at most {cutoff}, or " if cutoff else ""
    return f"{smaller}ties='sampled' for this run"


def _refuse(ranking: Ranking, what: str, seconds: float, memory: float, cutoff: int) -> None:
    """Refuse (:func:`tiecore.engine.budget.check`) work past the time or memory budget."""
    budgets.check(
        f"run {ranking.name}", what, seconds, memory,
        f"{_fits(cutoff)}, or a larger {budgets.TIME_ENV} or {budgets.MEMORY_ENV}",
    )  # fmt: skip


def _over_compositions(at, context, fixed, prefix, gain) -> dict[str, np.ndarray]:
    """``value, var, max, min`` of the queries ``at``, summing over their compositions."""
    fixed_n, tied_n, class_level, t_q, m_q, w_sum, w_spread = (x[at] for x in context)
    mean_a, var_a, max_a, min_a, shift_a = (x[at] for x in fixed)
    owner, a = _compositions(tied_n, m_q)
    n_l = tied_n[owner]
    log_p = np.sum(log_choose(n_l, a), axis=1)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    log_p -= np.maximum.reduceat(log_p, starts)[owner]
    p = np.exp(log_p)
    p /= np.add.reduceat(p, starts)[owner]  # sums to 1: C(n, m) without overflow
    docs = fixed_n[owner] + a
    lv = class_level[owner]
    if gain == "linear":
        scale = np.ones(owner.size)
        g = gain_of(lv, gain)
    else:  # scaled by the composition's own largest level: an exact power of two
        lv = np.where(docs > 0, lv, 0)  # a class absent from the top k has no gain
        shift = np.max(lv, axis=1)
        scale = np.ldexp(1.0, shift_a[owner] - shift)
        g = gain_of(lv, gain, shift[:, None])
    upto = np.cumsum(docs, axis=1)
    ideal = np.sum(g * (prefix[upto] - prefix[upto - docs]), axis=1)
    m = m_q[owner]
    g_mean = np.sum(a * g, axis=1) / np.maximum(m, 1)
    spread_g = np.sum(a * (g - g_mean[:, None]) ** 2, axis=1)
    var_b = np.zeros(owner.size)
    np.divide(spread_g * w_spread[owner], m - 1.0, out=var_b, where=m > 1)
    t = t_q[owner][:, None]
    took = np.cumsum(a, axis=1)
    best_b = np.sum(g * (prefix[t + took] - prefix[t + took - a]), axis=1)
    left = m[:, None] - took  # ascending: the smallest gains first, the largest last
    worst_b = np.sum(g * (prefix[t + left + a] - prefix[t + left]), axis=1)
    live = ideal > 0
    safe = np.where(live, ideal, 1.0)
    mu = np.where(live, (mean_a[owner] * scale + g_mean * w_sum[owner]) / safe, 0.0)
    var = np.where(live, (var_a[owner] * scale**2 + var_b) / safe**2, 0.0)
    high = np.where(live, (max_a[owner] * scale + best_b) / safe, 0.0)
    low = np.where(live, (min_a[owner] * scale + worst_b) / safe, 0.0)
    value = np.add.reduceat(p * mu, starts)
    between = np.add.reduceat(p * (mu - value[owner]) ** 2, starts)
    return {
        "value": value,
        "var": np.add.reduceat(p * var, starts) + between,
        "max": np.maximum.reduceat(high, starts),
        "min": np.minimum.reduceat(low, starts),
    }


def local_sample(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    gain: str = "linear",
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
) -> np.ndarray:
    """nDCG(ideal=local)@cutoff under ``samples`` random tie-breaks: ``(samples, queries)``.

    The orders are :mod:`tiecore.engine.sampling`'s keyed draws (the same for a run's
    queries evaluated together or apart); each is scored as
    :func:`local_oblivious` scores an order.
    """
    from tiecore.engine.sampling import Sampler  # lazy: sampling (~7 ms) only when sampled

    nq = len(ranking.counts)
    cut = ranking.cut(cutoff, depth)
    level = _levels(ranking)
    width = int(cut.max(initial=0))
    out = np.zeros((samples, nq))
    if width == 0:
        return out
    sampler = Sampler(ranking, judgments, width)
    # a query whose cut falls inside a tie group draws the docs of its ideal ("moving");
    # the others keep the ideal (and the exp gains' scale) of the ranking's own top k
    c = cut[ranking.group_query]
    cuts_group = (ranking.offset < c) & (ranking.offset + ranking.size > c)
    moving = np.unique(ranking.group_query[cuts_group])
    at = np.full(nq, -1)
    at[moving] = np.arange(moving.size)
    ideal, _ = _ideal_of_own_top(ranking, judgments, cut, gain)
    reach = np.flatnonzero(ranking.offset[ranking.group] < cut[ranking.query])  # can be in
    shift = _query_max(level[reach], ranking.query[reach], nq)  # (a moving query's is redone)
    fixed = np.ones(len(level), dtype=bool)
    fixed[sampler.cleared] = False
    rows = np.flatnonzero(fixed & (ranking.rank <= cut[ranking.query]))
    weight = gain_of(level[rows], gain, shift[ranking.query[rows]])
    weight /= np.log2(ranking.rank[rows] + 1.0)
    fixed_dcg = np.bincount(ranking.query[rows], weights=weight, minlength=nq).astype(float)
    column = np.arange(width)
    discount = 1.0 / np.log2(column + 2.0)
    valid = column < cut[moving, None]
    index = np.where(valid, ranking.starts[moving, None] + column, 0)
    head = np.where(valid, (level * fixed)[index], 0) if level.size else index
    draws = sampler.draws(samples, rng, max(moving.size * width, nq))
    query = ranking.query[sampler.rows]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if query.size else query
    for first, size, doc, slot in draws:
        dcg = np.broadcast_to(fixed_dcg, (size, nq)).copy()
        levels = np.broadcast_to(head, (size, moving.size, width)).copy()
        if doc is not None:
            rank = ranking.rank[slot]
            inside = rank <= cut[query][None, :]
            drawn = np.where(inside, level[doc], 0)
            term = gain_of(drawn, gain, shift[query][None, :]) / np.log2(rank + 1.0)
            dcg[:, query[starts]] += np.add.reduceat(term, starts, axis=1)
            pick = inside & (at[query] >= 0)[None, :]
            sample = np.broadcast_to(np.arange(size)[:, None], slot.shape)
            where = np.broadcast_to(at[query], slot.shape)
            levels[sample[pick], where[pick], rank[pick] - 1] = level[doc[pick]]
        bound = np.broadcast_to(ideal, dcg.shape).copy()
        if moving.size:  # scaled by the top level of each draw's top k
            top = levels.max(axis=2, keepdims=True) if gain != "linear" else 0
            g = gain_of(levels, gain, top)
            dcg[:, moving] = g @ discount
            bound[:, moving] = -np.sort(-g, axis=2) @ discount
        values = np.zeros_like(dcg)
        np.divide(dcg, bound, out=values, where=bound > 0)
        out[first : first + size] = values
    return out


# ------------------------------------------------- nDCG(ideal=local)'s family hooks (ndcg.py)


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query nDCG(ideal=local) in the profile's mode (``oblivious`` or ``aware``)."""
    if profile.mode == "aware":
        return local_spread(ranking, judgments, measure.cutoff, gain=measure.gain, depth=depth)[
            "value"
        ]
    return local_oblivious(ranking, judgments, measure.cutoff, gain=measure.gain, depth=depth)


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Per-query ``value, var, min, max`` of nDCG(ideal=local) (all exact)."""
    return local_spread(ranking, judgments, measure.cutoff, gain=measure.gain, depth=depth)


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` nDCG(ideal=local) under random tie-breaks (:func:`local_sample`)."""
    return local_sample(
        ranking,
        judgments,
        measure.cutoff,
        gain=measure.gain,
        samples=samples,
        rng=rng,
        depth=depth,
    )

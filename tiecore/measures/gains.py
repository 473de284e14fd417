"""trec_eval's gain-based measures beside ndcg: ``G``, ``binG``, ``ndcg_rel``, ``Rndcg``.

Each has one family (:data:`FAMILIES` ``G``, ``BinG``, ``NDCGRel``, ``Rndcg``), all
computed here from the ranking's order, as trec_eval's ``m_G.c``, ``m_binG.c``,
``m_ndcg_rel.c`` and ``m_Rndcg.c`` define them.  ``g_i`` is the gain of the doc at
0-based index ``i`` (its qrels level, or a ``gains`` parameter's value for it: 0 for a
doc not in the qrels); the ideal ranking takes the qrels docs by decreasing gain,
``I_i`` its gain at index ``i`` (0 past its end), ``n+`` the number of its positive
gains, ``DCG@k = sum_{i < k} g_i / log2(i + 2)`` and ``IDCG@k`` the same of the ideal's
positive gains.

``binG``
    ``sum_{relevant retrieved} 1 / log2(2 + nonrel_above) / R`` (``nonrel_above``: the
    docs above it that are not relevant, judged or not; ``R`` the relevant docs).
``G``
    ``sum_i g_i / log2(2 + C_i - S_i) / sum_i max(I_i, 0)``, ``C_i = sum_{j <= i}
    max(I_j, 1)`` (each rank costs at least 1) and ``S_i = sum_{j <= i} g_j``; with
    gains 0 and 1 it is ``binG``.
``ndcg_rel``
    ``(sum_{retrieved i, g_i > 0} DCG@(i + 1) / IDCG@min(i + 1, n+) + (n+ - m)
    DCG@NR / IDCG@n+) / n+`` (``m`` the retrieved docs of positive gain, ``NR`` the
    retrieved docs): nDCG at each relevant doc, the relevant docs not retrieved at the
    end of the ranking.
``Rndcg``
    The mean of ``DCG@min(k, NR) / IDCG@k`` over the ``k`` where the ideal's gain
    changes (the R levels: ``1 <= k <= n+`` with ``I_k != I_{k-1}``, and ``k = n+``),
    and ``k = NR`` where ``n+ + 1 < NR`` (trec_eval's loop reaches that last point only
    then); 0 for a query without relevant docs.

Sums run one after the other, as trec_eval's loops add.  Under ties:

* G is no sum of per-doc values (a doc's term depends on the sum of the gains above
  it, through a logarithm): its mean over the orderings sums over the compositions of
  those gains in its tie group (:func:`g_aware`); its variance is not derived yet;
* binG's term depends on the count above it only, which inside a tie group is uniform
  (hypergeometric where the depth cuts it): its exact spread is :func:`_bin_g_spread`'s;
* ndcg_rel's mean over the orderings is a sum over pairs of docs
  (:func:`ndcg_rel_aware`); its variance is not derived yet;
* Rndcg is ``sum_rows g * w`` with the row weight ``w = sum_{points k: rank <= min(k,
  NR)} 1 / (points IDCG@k) / log2(rank + 1)`` fixed by the qrels and the number
  retrieved (:func:`rndcg_weights`), so its mean over the orderings, variance and
  bounds are those of a linear permutation statistic per tie group
  (:func:`tiecore.measures.orderings.linear_statistic`).
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.orderings import (
    GAINS_PARAM,
    gain_table,
    ideal_gains,
    linear_statistic,
    parse_gains,
    retrieved,
    row_gains,
    sample_orders,
    segment_cumsum,
    segment_last,
)
from tiecore.measures.registry import Family, register


def _rows(ranking: Ranking, depth: int | None):
    """The retrieved rows (up to the depth), their query starts among them, and per
    query how many."""
    keep = np.flatnonzero(retrieved(ranking, depth))
    nq = len(ranking.counts)
    counts = np.bincount(ranking.query[keep], minlength=nq)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    return keep, starts, counts


def bin_g(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """Per query trec_eval's binG of the ranking's own order."""
    keep, starts, counts = _rows(ranking, depth)
    nq = len(counts)
    rel = ranking.rel[keep]
    index = np.arange(keep.size) - np.repeat(starts, counts)
    rel_so_far = segment_cumsum(rel.astype(np.float64), starts)
    term = np.where(rel, 1.0 / np.log2(3.0 + index - rel_so_far), 0.0)
    total = segment_last(segment_cumsum(term, starts), starts, nq, np.arange(nq))
    found = segment_last(rel_so_far, starts, nq, np.arange(nq)) > 0
    num_rel = judgments.num_rel.astype(np.float64)
    return np.where(found, total / np.maximum(num_rel, 1.0), 0.0)


def _ideal_at(judgments: Judgments, gains: dict, query: np.ndarray, index: np.ndarray):
    """The ideal's gain at ``index`` of each ``query`` (0 past its end)."""
    values, starts = ideal_gains(judgments, gains)
    length = np.diff(starts)
    inside = index < length[query]
    at = np.where(inside, starts[query] + index, 0)
    return np.where(inside, values[at] if values.size else 0.0, 0.0)


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


def _dcg(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """Retrieved rows' running DCG and gains, with their starts and counts."""
    keep, starts, counts = _rows(ranking, depth)
    index = np.arange(keep.size) - np.repeat(starts, counts)
    _, table = gain_table(judgments, gains)
    gain = row_gains(ranking, table)[keep]
    running = segment_cumsum(np.where(gain != 0, gain / np.log2(index + 2.0), 0.0), starts)
    return running, gain, starts, counts, index


def _ideal_dcg(judgments: Judgments, gains: dict):
    """The ideal's gains, its running IDCG over its positive gains, starts and ``n+``."""
    values, starts = ideal_gains(judgments, gains)
    length = np.diff(starts)
    index = np.arange(values.size) - np.repeat(starts[:-1], length)
    positive = values > 0
    running = segment_cumsum(np.where(positive, values / np.log2(index + 2.0), 0.0), starts[:-1])
    n_pos = np.bincount(np.repeat(np.arange(len(length)), length)[positive], minlength=len(length))
    return values, running, starts, n_pos


def ndcg_rel(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """Per query trec_eval's ndcg_rel of the ranking's own order."""
    nq = len(ranking.counts)
    running, gain, starts, counts, index = _dcg(ranking, judgments, gains, depth)
    query = np.repeat(np.arange(nq), counts)
    _, ideal_running, ideal_starts, n_pos = _ideal_dcg(judgments, gains)
    at = np.minimum(index, np.maximum(n_pos[query] - 1, 0))
    idcg = np.where(
        n_pos[query] > 0,
        ideal_running[np.minimum(ideal_starts[query] + at, max(ideal_running.size - 1, 0))]
        if ideal_running.size
        else 0.0,
        0.0,
    )
    counted = gain > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(counted, running / idcg, 0.0)
    total = segment_last(segment_cumsum(term, starts), starts, nq, np.arange(nq))
    found = np.bincount(query[counted], minlength=nq)
    dcg = segment_last(running, starts, nq, np.arange(nq))
    final = np.zeros(nq)
    has = n_pos > 0
    final[has] = ideal_running[ideal_starts[:-1][has] + n_pos[has] - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + (n_pos - found) * dcg / final
        return np.where(total > 0, total / n_pos, 0.0)


def _r_levels(judgments: Judgments, gains: dict, counts: np.ndarray):
    """Rndcg's points ``(k, query, IDCG)``, sorted by query then ``k``: the R levels ``k``
    (IDCG@k the ideal's running sum at ``k - 1``: a change of positive gain, and ``k = n+``
    where the gain falls to 0 or below), and ``k = NR`` (``counts``) where ``n+ + 1 < NR``
    with the whole ideal's IDCG, last."""
    nq = len(counts)
    values, ideal_running, ideal_starts, n_pos = _ideal_dcg(judgments, gains)
    length = np.diff(ideal_starts)
    index = np.arange(values.size) - np.repeat(ideal_starts[:-1], length)
    query = np.repeat(np.arange(nq), length)
    previous = np.r_[0.0, values[:-1]]
    changed = (index >= 1) & (index < n_pos[query]) & (values != previous)
    ends = (index == n_pos[query] - 1) & (n_pos[query] > 0)
    k = np.r_[index[changed], index[ends] + 1]
    owner = np.r_[query[changed], query[ends]]
    idcg = np.r_[ideal_running[np.flatnonzero(changed) - 1], ideal_running[np.flatnonzero(ends)]]
    extra = np.flatnonzero((n_pos > 0) & (n_pos + 1 < counts))  # NR after n+ + 1
    k = np.r_[k, counts[extra]]
    owner = np.r_[owner, extra]
    idcg = np.r_[idcg, ideal_running[ideal_starts[extra] + n_pos[extra] - 1]]
    order = np.lexsort((k, owner))  # by query, then k (the extra point comes last)
    return k[order], owner[order], idcg[order]


def rndcg(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """Per query trec_eval's Rndcg of the ranking's own order."""
    nq = len(ranking.counts)
    running, _, starts, counts, _ = _dcg(ranking, judgments, gains, depth)
    k, owner, idcg = _r_levels(judgments, gains, counts)
    depth_k = np.minimum(k, counts[owner])
    dcg = np.where(
        depth_k > 0,
        running[np.maximum(starts[owner] + depth_k - 1, 0)] if running.size else 0.0,
        0.0,
    )
    ratio = dcg / idcg
    point_starts = np.searchsorted(owner, np.arange(nq))
    total = segment_last(segment_cumsum(ratio, point_starts), point_starts, nq, np.arange(nq))
    points = np.bincount(owner, minlength=nq)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = total / points
    return np.where(judgments.num_rel > 0, value, 0.0)


def rndcg_weights(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """Per row Rndcg's weight: ``sum_{R levels k: rank <= min(k, NR)} 1 / (points IDCG@k)
    / log2(rank + 1)`` (0 past the depth, and for a query without relevant docs), so that
    Rndcg is ``sum_rows gain * weight`` (:func:`rndcg` as a linear statistic)."""
    nq = len(ranking.counts)
    keep, starts, counts = _rows(ranking, depth)
    k, owner, idcg = _r_levels(judgments, gains, counts)
    points = np.bincount(owner, minlength=nq)
    reach = np.minimum(k, counts[owner])
    live = (reach > 0) & (judgments.num_rel[owner] > 0)
    add = np.zeros(keep.size + 1)
    np.add.at(add, starts[owner[live]] + reach[live] - 1, 1.0 / (points[owner[live]] * idcg[live]))
    # per retrieved row, the sum over the R levels at or below it: a reversed running sum
    ends = starts + counts
    total = np.cumsum(add[::-1])[::-1]
    query = np.repeat(np.arange(nq), counts)
    weight = (total[:-1] - total[ends[query]]) / np.log2(np.arange(keep.size) - starts[query] + 2.0)
    out = np.zeros(ranking.rank.size)
    out[keep] = weight
    return out


def _bin_g_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """binG's exact ``value, var, min, max`` over the orderings.

    A relevant doc adds ``f(y) = 1 / log2(2 + y)``, ``y`` the docs above it that are not
    relevant.  In a tie group of ``n`` docs, ``r`` relevant and ``m = n - r`` not, after
    ``a`` docs that are not relevant, with ``d`` of its slots retrieved (the depth), let
    ``L`` of the ``m`` fall in those slots (``L ~ Hypergeom(n, m, d)``; ``L = m`` when the
    whole group is retrieved) and ``K = d - L`` relevant docs with them, in a uniform order:
    each relevant doc sees ``a + U`` above, ``U`` uniform on ``0..L``, two of them a pair
    of such draws, so with ``F1 = sum_{u <= L} f(a + u)`` and ``F2`` the same of ``f^2``
    (as Bpref's terms, :func:`tiecore.measures.bpref._bpref_moments`)

        E[S | L] = K F1 / (L + 1),
        E[S^2 | L] = K F2 / (L + 1) + K (K - 1) (F1^2 + F2) / ((L + 1)(L + 2)).

    Groups are shuffled independently: the query's mean and variance sum over them, /
    ``num_rel`` (and its square).  The maximum puts the relevant docs first (``min(r, d)``
    of them at ``f(a)``), the minimum last (``max(0, d - m)`` at ``f(a + min(m, d))``).
    """
    nq = len(ranking.counts)
    n, r = ranking.size, ranking.rel_count
    m = n - r
    a = ranking.offset - ranking.rel_before
    d = n if depth is None else np.clip(depth - ranking.offset, 0, n)
    top = int(ranking.counts.max(initial=0)) + 2
    f = 1.0 / np.log2(2.0 + np.arange(top))
    p1, p2 = np.r_[0.0, np.cumsum(f)], np.r_[0.0, np.cumsum(f * f)]
    live = np.flatnonzero((r > 0) & (d > 0))
    low = np.maximum(0, d - r)[live]  # the least L: the slots the relevant docs leave
    high = np.minimum(m, d)[live]
    width = high - low + 1
    owner = np.repeat(np.arange(live.size), width)
    ell = np.arange(owner.size) - np.repeat(np.cumsum(width) - width, width) + low[owner]
    g = live[owner]
    whole = d[g] == n[g]
    chance = np.ones(owner.size)
    if not whole.all():
        from scipy import stats  # only here: importing scipy.stats takes seconds

        cut = ~whole
        chance[cut] = stats.hypergeom.pmf(ell[cut], n[g][cut], m[g][cut], d[g][cut])
    k = (d[g] - ell).astype(np.float64)
    f1 = p1[a[g] + ell + 1] - p1[a[g]]
    f2 = p2[a[g] + ell + 1] - p2[a[g]]
    count = ell + 1.0
    first = k * f1 / count
    second = k * f2 / count + k * (k - 1) * (f1 * f1 + f2) / (count * (count + 1))
    mean = np.bincount(owner, weights=chance * first, minlength=live.size)
    square = np.bincount(owner, weights=chance * second, minlength=live.size)
    var = np.maximum(square - mean * mean, 0.0)
    best = np.minimum(r, d)[live] * f[a[live]]
    fixed = m[live] == 0  # relevant docs only: their terms are f(a) each, no variance
    mean[fixed], var[fixed] = best[fixed], 0.0
    worst = np.maximum(0, d - m)[live] * f[np.minimum(a[live] + high, top - 1)]
    q = ranking.group_query[live]
    scale = 1.0 / np.maximum(judgments.num_rel, 1).astype(np.float64)
    total = {
        name: np.bincount(q, weights=values, minlength=nq)
        for name, values in (("value", mean), ("var", var), ("min", worst), ("max", best))
    }
    return {
        "value": total["value"] * scale,
        "var": total["var"] * scale * scale,
        "min": total["min"] * scale,
        "max": total["max"] * scale,
    }


def ndcg_rel_aware(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """ndcg_rel's exact mean over the orderings (gains of 0 or more).

    With ``w_i = 1 / log2(i + 2)`` at retrieved row ``i`` (0 past the depth), ``h_i = 1 /
    IDCG@min(i + 1, n+)``, ``p = [g > 0]``, ``D = sum_j g_j w_j`` and ``M = sum_i p_i``
    (the retrieved docs of positive gain), ``n+ ndcg_rel = T1 + (n+ D - M D) / IDCG@n+``
    with ``T1 = sum_i p_i h_i sum_{j <= i} g_j w_j``: sums of products of two docs'
    values at two rows.  Inside a tie group (``n`` docs) a row holds a doc of mean gain
    ``mu``, positive with chance ``pi``, mean ``p g`` ``nu``, and two rows two distinct
    docs, ``E[p_a g_b] = (sum p sum g - sum p g) / (n (n - 1))`` (``rho``); rows of two
    groups hold independent docs.  So ``E[T1] = sum_i h_i (nu w_i + rho sum_{j < i in
    the group} w_j + pi sum_{j before the group} mu_j w_j)`` and ``E[M D]`` likewise over
    all pairs.  With gains of 0 or more every ordering's sum is at least 0, so trec_eval's
    ``0 unless the sum is positive`` changes no term: the mean is exact.
    """
    nq = len(ranking.counts)
    _, table = gain_table(judgments, gains)
    g = row_gains(ranking, table)
    if (g < 0).any():
        from tiecore.errors import InputError

        raise InputError(
            "measure", None,
            "NDCGRel with a negative gain has no exact tie-aware value (trec_eval's "
            "ndcg_rel is 0 where its sum is not positive, no sum of pairs then)",
            "gains of 0 or more, or ties='oblivious' / 'sampled'",
        )  # fmt: skip
    if not g.size:
        return np.zeros(nq)
    p = (g > 0).astype(np.float64)
    starts, size, group = ranking.group_start, ranking.size, ranking.group
    sum_g, sum_p = np.add.reduceat(g, starts), np.add.reduceat(p, starts)
    sum_pg = np.add.reduceat(p * g, starts)
    mu, pi, nu = sum_g / size, sum_p / size, sum_pg / size
    rho = np.where(size > 1, (sum_p * sum_g - sum_pg) / np.maximum(size * (size - 1), 1), 0.0)
    ret = retrieved(ranking, depth)
    w = np.where(ret, 1.0 / np.log2(ranking.rank + 1.0), 0.0)
    _, ideal_running, ideal_starts, n_pos = _ideal_dcg(judgments, gains)
    q = ranking.query
    index = ranking.rank - 1
    at = ideal_starts[q] + np.minimum(index, np.maximum(n_pos[q] - 1, 0))
    has = n_pos[q] > 0
    idcg = np.where(has, ideal_running[np.minimum(at, max(ideal_running.size - 1, 0))]
                    if ideal_running.size else 1.0, 1.0)  # fmt: skip
    h = np.where(has, 1.0 / idcg, 0.0)
    first = ranking.starts[q]
    muw = mu[group] * w

    def before(values: np.ndarray, start: np.ndarray) -> np.ndarray:
        total = np.cumsum(values)
        return total - values - (total[start] - values[start])

    above_group = before(muw, first)[starts][group]  # sum of mu w over the earlier groups
    in_group = before(w, starts[group])  # sum of w over the group's rows above
    t1 = np.where(ret, h * (nu[group] * w + rho[group] * in_group + pi[group] * above_group), 0.0)
    expected_d = np.bincount(q, weights=muw, minlength=nq)
    w_group = np.add.reduceat(w, starts)
    md = np.where(
        ret,
        nu[group] * w
        + rho[group] * (w_group[group] - w)
        + pi[group] * (expected_d[q] - mu[group] * w_group[group]),
        0.0,
    )
    final = np.zeros(nq)
    final[n_pos > 0] = ideal_running[ideal_starts[:-1][n_pos > 0] + n_pos[n_pos > 0] - 1]
    total = np.bincount(q, weights=t1, minlength=nq)
    total_md = np.bincount(q, weights=md, minlength=nq)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (total + (n_pos * expected_d - total_md) / final) / n_pos
    return np.where(n_pos > 0, value, 0.0)


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
        from tiecore.errors import InputError

        raise InputError(
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


def _gains(measure) -> dict:
    return parse_gains(measure.param("gains")) if "gains" in measure.spec.params else {}


#: The scorer of each family: ``(ranking, judgments, gains, depth) -> per-query values``.
SCORERS = {
    "BinG": lambda ranking, judgments, gains, depth: bin_g(ranking, judgments, depth),
    "G": g_measure,
    "NDCGRel": ndcg_rel,
    "Rndcg": rndcg,
}


def _rndcg_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Rndcg's exact ``value, var, min, max`` over the orderings: a linear statistic of
    the docs' gains and the rows' weights (:func:`rndcg_weights`)."""
    gains = _gains(measure)
    _, table = gain_table(judgments, gains)
    weights = rndcg_weights(ranking, judgments, gains, depth)
    return linear_statistic(ranking, row_gains(ranking, table), weights)


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query values of the ranking's own order (aware: the mean over orderings)."""
    if profile.mode == "aware" and measure.family == "NDCGRel":
        return ndcg_rel_aware(ranking, judgments, _gains(measure), depth)
    if profile.mode == "aware" and measure.family == "G":
        return g_aware(ranking, judgments, _gains(measure), depth)
    if profile.mode == "aware":
        return SPREADS[measure.family](measure, ranking, judgments, depth)["value"]
    return SCORERS[measure.family](ranking, judgments, _gains(measure), depth)


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` under random tie-breaks."""
    scorer, gains = SCORERS[measure.family], _gains(measure)
    return sample_orders(
        lambda order: scorer(order, judgments, gains, depth),
        ranking,
        judgments,
        samples=samples,
        rng=rng,
        depth=depth,
    )


#: The exact spread of the families that have one.
SPREADS = {"BinG": _bin_g_spread, "Rndcg": _rndcg_spread}

_NO_VARIANCE = {
    "NDCGRel": "its variance needs the moments of products of up to four docs' values, not "
    "derived yet",
    "G": "its variance needs pairs of terms over the joint gains above two docs, not derived yet",
}
_INEXACT = "a doc's term depends on the docs above it; no exact tie-aware value derived yet"

for _name, _alias, _convention, _params in (
    (
        "BinG",
        "bing",
        "trec_eval's binG: sum over relevant retrieved of 1 / log2(2 + non-relevant docs "
        "above), / num_rel",
        {},
    ),
    (
        "G",
        "g",
        "trec_eval's G: sum of gain / log2(2 + ideal cost - gain so far), / the ideal's "
        "gain (each rank costing at least 1)",
        {"gains": GAINS_PARAM},
    ),
    (
        "NDCGRel",
        "ndcg_rel",
        "trec_eval's ndcg_rel: nDCG at each doc of positive gain (at the end of the "
        "ranking for those not retrieved), averaged over them",
        {"gains": GAINS_PARAM},
    ),
    (
        "Rndcg",
        "rndcg",
        "trec_eval's Rndcg: nDCG averaged over the ranks where the ideal's gain changes",
        {"gains": GAINS_PARAM},
    ),
):
    register(
        Family(
            _name,
            _convention,
            (_alias,),
            "none",
            params=_params,
            component=None,
            values=family_values,
            sample=family_sample,
            **(
                {"spread": SPREADS[_name]}
                if _name in SPREADS
                else {"inexact_spread": _NO_VARIANCE[_name]}
                if _name in _NO_VARIANCE
                else {"inexact": _INEXACT}
            ),
        )
    )

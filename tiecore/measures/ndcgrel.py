"""NDCGRel, trec_eval's ``ndcg_rel``: nDCG averaged over the docs of positive gain.

``(sum_{retrieved i, g_i > 0} DCG@(i + 1) / IDCG@min(i + 1, n+) + (n+ - m) DCG@NR /
IDCG@n+) / n+`` (``m`` the retrieved docs of positive gain, ``NR`` the retrieved docs;
trec_eval's ``m_ndcg_rel.c``, notation of :mod:`tiecore.measures.gains`): nDCG at each
relevant doc, the relevant docs not retrieved at the end of the ranking; 0 unless the
sum is positive.

Under ties it is a bilinear statistic of the docs at the rows, ``sum_{i,j} B_ij p_i g_j``
plus a linear one, with ``B`` fixed by the qrels and the depth: its mean over the
orderings is a sum over pairs of docs (:func:`ndcg_rel_aware`), its variance one over
up to four docs (:func:`ndcg_rel_spread`), its extremes the groups sorted by gain
(gains of 0 or more, no more docs of positive gain retrieved than the ideal holds).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("ndcg_rel"))
'NDCGRel'
"""

from __future__ import annotations

import math

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.measures.gains import _gains, _ideal_dcg, _rows, register_gain_family
from tiecore.measures.orderings import (
    GAINS_PARAM,
    gain_table,
    retrieved,
    row_gains,
    segment_cumsum,
    segment_last,
)
from tiecore.measures.registry import Doc, Words, describe


def ndcg_rel(ranking: Ranking, judgments: Judgments, gains: dict, depth: int | None):
    """Per query trec_eval's ndcg_rel of the ranking's own order."""
    _, table = gain_table(judgments, gains)
    return _ndcg_rel_of(ranking, judgments, gains, depth, row_gains(ranking, table))


def _ndcg_rel_of(ranking, judgments, gains: dict, depth, row_gain: np.ndarray) -> np.ndarray:
    """Per query ndcg_rel of the ranking with ``row_gain`` at its rows (its own gains, or
    another ordering's: the bounds' sorted groups), as trec_eval adds."""
    nq = len(ranking.counts)
    keep, starts, counts = _rows(ranking, depth)
    index = np.arange(keep.size) - np.repeat(starts, counts)
    gain = row_gain[keep]
    running = segment_cumsum(np.where(gain != 0, gain / np.log2(index + 2.0), 0.0), starts)
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


def _checked_gains(ranking: Ranking, judgments: Judgments, gains: dict, depth) -> np.ndarray:
    """The rows' gains, refused (:class:`~tiecore.errors.InputError`) where some ordering's
    sum could be negative, which trec_eval's ndcg_rel makes 0 (no sum of pairs then): a
    negative gain, or a query retrieving more docs of positive gain than its ideal holds
    (``M > n+``: a level -1 or -2 given a positive gain)."""
    _, table = gain_table(judgments, gains)
    g = row_gains(ranking, table)
    if (g < 0).any():
        raise InputError(
            "measure", None,
            "NDCGRel with a negative gain has no exact tie-aware value (trec_eval's "
            "ndcg_rel is 0 where its sum is not positive, no sum of pairs then)",
            "gains of 0 or more, or ties='oblivious' / 'sampled'",
        )  # fmt: skip
    nq = len(ranking.counts)
    positive = np.bincount(ranking.query[(g > 0) & retrieved(ranking, depth)], minlength=nq)
    if (positive > _ideal_dcg(judgments, gains)[3]).any():
        raise InputError(
            "measure", None,
            "NDCGRel retrieving more docs of positive gain than the ideal holds (a level "
            "-1 or -2 given a positive gain) has no exact tie-aware value (trec_eval's "
            "ndcg_rel is 0 where its sum is not positive, no sum of pairs then)",
            "no positive gain for levels -1 and -2, or ties='oblivious' / 'sampled'",
        )  # fmt: skip
    return g


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
    all pairs.  With gains of 0 or more and ``M <= n+`` every ordering's sum is at least
    0, so trec_eval's ``0 unless the sum is positive`` changes no term: the mean is exact
    (:func:`_checked_gains` refuses the rest).
    """
    nq = len(ranking.counts)
    g = _checked_gains(ranking, judgments, gains, depth)
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


def _set_partitions(items: tuple) -> list[tuple[tuple, ...]]:
    """Every partition of ``items`` into blocks (tuples)."""
    if not items:
        return [()]
    first, rest = items[0], items[1:]
    out = []
    for partition in _set_partitions(rest):
        out.append(((first,), *partition))
        for b in range(len(partition)):
            merged = ((first, *partition[b]),)
            out.append(partition[:b] + merged + partition[b + 1 :])
    return out


def _key(partition) -> frozenset:
    """A partition as the set of its blocks of two or more positions."""
    return frozenset(frozenset(block) for block in partition if len(block) > 1)


def _permutation_moment(labels: str, sums: dict, powers: dict, n: np.ndarray) -> np.ndarray:
    """Per group ``E[sum_{rows r_1..r_m} c(r) prod_t z_t(doc at r_t)]`` over the uniform
    orderings of the group's docs: ``labels[t]`` (``x`` or ``y``) names the centred doc
    value ``z_t``, ``sums[key]`` the coefficients' sum over the row tuples equal within
    the blocks of a partition (``key``: :func:`_key`), ``powers[a, b]`` the docs' sum of
    ``x^a y^b``.

    A tuple of rows equal exactly on the blocks of a partition ``pi`` holds distinct docs
    on distinct blocks, whose products have mean ``sum over distinct docs / (n)_|pi|``;
    both the tuples' and the docs' sums over "exactly equal on ``pi``" come from sums over
    "equal at least on ``sigma``" by Moebius inversion on the partition lattice (``mu =
    prod (-1)^(k-1) (k-1)!`` over the blocks of ``sigma`` merging ``k`` of ``pi``).
    """
    total = np.zeros(n.shape)
    for fine in _set_partitions(tuple(range(len(labels)))):
        exact = np.zeros(n.shape)
        docs = np.zeros(n.shape)
        for coarse in _set_partitions(fine):  # partitions of fine's blocks
            mu = math.prod((-1) ** (len(b) - 1) * math.factorial(len(b) - 1) for b in coarse)
            blocks = [sum(b, ()) for b in coarse]
            exact = exact + mu * sums[_key(blocks)]
            product = np.ones(n.shape)
            for block in blocks:
                xs = sum(labels[t] == "x" for t in block)
                product = product * powers[xs, len(block) - xs]
            docs = docs + mu * product
        m = len(fine)
        falling = np.ones(n.shape)
        for t in range(m):
            falling = falling * (n - t)
        with np.errstate(divide="ignore", invalid="ignore"):
            total += np.where(n >= m, exact * docs / np.where(n >= m, falling, 1.0), 0.0)
    return total


def ndcg_rel_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """ndcg_rel's exact ``value, var, min, max`` over the orderings (gains of 0 or more,
    ``M <= n+``: :func:`_checked_gains`).

    In :func:`ndcg_rel_aware`'s notation ``X = n+ ndcg_rel = sum_{rows i, j} B_ij p_i g_j
    + sum_j c_j g_j`` with ``B_ij = w_j (a_i [j <= i] - beta r_i [j > i])``, ``a_i = r_i
    (h_i - beta)``, ``beta = 1 / IDCG@n+``, ``c_j = n+ beta w_j`` and ``r_i`` 1 at the
    retrieved rows.  With each row's doc values centred on its group's means, ``x = p -
    pi``, ``y = g - mu``, ``X = X_0 + L + W``: ``L = sum_i (u_i x_i + v_i y_i)`` (``u_i =
    sum_j B_ij mu_j``, ``v_j = sum_i B_ij pi_i + c_j``) and ``W = sum_{i,j} B_ij x_i y_j``.
    Groups are shuffled independently and their centred values have mean 0, so

    - ``Var L`` is a sum over groups of linear permutation statistics: ``(S_uu S_xx + 2
      S_uv S_xy + S_vv S_yy) / (n - 1)`` (``S`` sums of centred products);
    - ``Cov(L, W)`` and ``Var W`` within a group are moments of three and four rows'
      docs under a uniform ordering (:func:`_permutation_moment`), from sums of ``B`` over
      equal rows (its sum, trace, row and column sums, ``sum B_ij^2``, ``sum B_ij B_ji``:
      ``O(n)`` each, ``B`` being triangular plus rank one);
    - between two groups ``G`` before ``G'`` the blocks of ``B`` are of rank one, ``B_{G'G}
      = a w^T`` and ``B_{GG'} = -beta r w^T``, and the pairs add ``kx_G' |P a|^2 ky_G |P
      w|^2 + kx_G beta^2 |P r|^2 ky_G' |P w|^2 + 2 kxy_G' <P w, P a> kxy_G <P w, -beta P
      r>`` (``P`` centring in the group, ``k = S / (n - 1)``): running sums over the groups
      (:func:`_within_groups` and :func:`_pairs_of_groups` give the two parts).

    The value is :func:`ndcg_rel_aware`'s.  Every swap of two docs of a group that puts
    the higher gain above raises ``X`` (the nDCG at each doc of positive gain, the final
    DCG and, with ``M <= n+``, the trade of a doc past the depth), so the groups sorted
    by decreasing gain give the maximum, by increasing gain the minimum.
    """
    nq = len(ranking.counts)
    gains = _gains(measure)
    g = _checked_gains(ranking, judgments, gains, depth)
    value = ndcg_rel_aware(ranking, judgments, gains, depth)
    zero = np.zeros(nq)
    if not g.size:
        return {"value": value, "var": zero, "min": zero.copy(), "max": zero.copy()}
    group, starts, size = ranking.group, ranking.group_start, ranking.size
    q = ranking.query
    nf = size.astype(np.float64)
    p = (g > 0).astype(np.float64)
    pi, mu = np.add.reduceat(p, starts) / nf, np.add.reduceat(g, starts) / nf
    x, y = p - pi[group], g - mu[group]
    powers = {(a, b): np.add.reduceat(x**a * y**b, starts) for a in range(5) for b in range(5)
              if 2 <= a + b <= 4}  # fmt: skip
    powers[0, 0] = nf
    powers[1, 0] = powers[0, 1] = np.zeros(starts.size)  # centred
    w, a, b, beta, n_pos = _row_factors(ranking, judgments, gains, depth)

    def across(values):  # running sums restarted at each query
        total = np.cumsum(values)
        first = ranking.starts[q]
        return total - (total[first] - values[first])

    # L's coefficients: u_i = sum_j B_ij mu_j, v_j = sum_i B_ij pi_i + c_j over the query
    mw = w * mu[group]
    mw_in = across(mw)
    expected_d = np.bincount(q, weights=mw, minlength=nq)
    u = a * mw_in + b * (expected_d[q] - mw_in)
    api, bpi = a * pi[group], b * pi[group]
    v = w * (np.bincount(q, weights=api, minlength=nq)[q] - across(api) + api + across(bpi)
             - bpi + n_pos[q] * beta[q])  # fmt: skip
    per = _within_groups(ranking, (a, b, w), (u, v), powers) + _pairs_of_groups(
        ranking, (a, b, w), powers
    )
    var = np.bincount(ranking.group_query, weights=per, minlength=nq)
    scale = np.where(n_pos > 0, 1.0 / np.maximum(n_pos, 1), 0.0)
    extremes = {}
    for name, sign in (("max", -1.0), ("min", 1.0)):
        order = np.lexsort((sign * g, group))
        extremes[name] = _ndcg_rel_of(ranking, judgments, gains, depth, g[order])
    return {
        "value": value,
        "var": np.maximum(var, 0.0) * scale * scale,
        "min": extremes["min"],
        "max": extremes["max"],
    }


def _row_factors(ranking: Ranking, judgments: Judgments, gains: dict, depth):
    """Per row ``w`` (``1 / log2(rank + 1)``, 0 past the depth) and ``B``'s row factors
    at and below the diagonal (``a = r (h - beta)``) and above it (``b = -beta r``); per
    query ``beta = 1 / IDCG@n+`` (0 without positive gains) and ``n+``."""
    nq, q = len(ranking.counts), ranking.query
    ret = retrieved(ranking, depth)
    r = ret.astype(np.float64)
    w = np.where(ret, 1.0 / np.log2(ranking.rank + 1.0), 0.0)
    _, ideal_running, ideal_starts, n_pos = _ideal_dcg(judgments, gains)
    has = n_pos[q] > 0
    at = ideal_starts[q] + np.minimum(ranking.rank - 1, np.maximum(n_pos[q] - 1, 0))
    idcg = np.where(has, ideal_running[np.minimum(at, max(ideal_running.size - 1, 0))]
                    if ideal_running.size else 1.0, 1.0)  # fmt: skip
    final = np.ones(nq)
    final[n_pos > 0] = ideal_running[ideal_starts[:-1][n_pos > 0] + n_pos[n_pos > 0] - 1]
    beta = np.where(n_pos > 0, 1.0 / final, 0.0)
    h = np.where(has & ret, 1.0 / idcg, 0.0)
    return w, r * h - beta[q] * r, -beta[q] * r, beta, n_pos


def _centred(ranking: Ranking, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per group ``sum (s - mean s)(t - mean t)`` over its rows."""
    starts = ranking.group_start
    return np.add.reduceat(s * t, starts) - (
        np.add.reduceat(s, starts) * np.add.reduceat(t, starts) / ranking.size
    )


def _within_groups(ranking: Ranking, factors: tuple, linear: tuple, powers: dict) -> np.ndarray:
    """Per group ``Var L_G + 2 Cov(L_G, W_GG) + Var W_GG`` (:func:`ndcg_rel_spread`):
    ``factors`` ``(a, b, w)`` give ``B``, ``linear`` ``(u, v)`` L's coefficients."""
    (a, b, w), (u, v) = factors, linear
    group, starts, size = ranking.group, ranking.group_start, ranking.size
    nf = size.astype(np.float64)

    def within(values):  # running sums restarted at each group
        total = np.cumsum(values)
        return total - (total[starts] - values[starts])[group]

    def per_group(values):
        return np.add.reduceat(values, starts)

    w_in, w2_in = within(w), within(w * w)
    w_all, w2_all = per_group(w)[group], per_group(w * w)[group]
    row = a * w_in + b * (w_all - w_in)  # row sums of B within the group
    col = w * (per_group(a)[group] - within(a) + a + within(b) - b)
    diag = a * w
    total, trace = per_group(row), per_group(diag)
    k = frozenset
    four = {
        k(): total**2,
        k([k([0, 1])]): trace * total,
        k([k([2, 3])]): trace * total,
        k([k([0, 2])]): per_group(row * row),
        k([k([1, 3])]): per_group(col * col),
        k([k([0, 3])]): per_group(row * col),
        k([k([1, 2])]): per_group(row * col),
        k([k([0, 1]), k([2, 3])]): trace**2,
        k([k([0, 2]), k([1, 3])]): per_group(a * a * w2_in + b * b * (w2_all - w2_in)),
        k([k([0, 3]), k([1, 2])]): per_group(diag * diag + 2 * a * w * (within(b * w) - b * w)),
        k([k([0, 1, 2])]): per_group(diag * row),
        k([k([0, 2, 3])]): per_group(diag * row),
        k([k([0, 1, 3])]): per_group(diag * col),
        k([k([1, 2, 3])]): per_group(diag * col),
        k([k([0, 1, 2, 3])]): per_group(diag * diag),
    }
    mean_w = _permutation_moment("xy", {k(): total, k([k([0, 1])]): trace}, powers, nf)
    out = _permutation_moment("xyxy", four, powers, nf) - mean_w**2
    for coefficient, labels in ((u, "xxy"), (v, "yxy")):
        three = {
            k(): total * per_group(coefficient),
            k([k([1, 2])]): trace * per_group(coefficient),
            k([k([0, 1])]): per_group(coefficient * row),
            k([k([0, 2])]): per_group(coefficient * col),
            k([k([0, 1, 2])]): per_group(coefficient * diag),
        }
        out += 2.0 * _permutation_moment(labels, three, powers, nf)
    c = _centred
    linear_var = (c(ranking, u, u) * powers[2, 0] + 2 * c(ranking, u, v) * powers[1, 1]
                  + c(ranking, v, v) * powers[0, 2]) / np.maximum(nf - 1, 1)  # fmt: skip
    return out + np.where(size > 1, linear_var, 0.0)


def _pairs_of_groups(ranking: Ranking, factors: tuple, powers: dict) -> np.ndarray:
    """Per group what ``W``'s blocks between it and the other groups of its query add to
    the variance (:func:`ndcg_rel_spread`): of rank one, ``a w^T`` below the diagonal,
    ``b w^T`` above, each pair counted once."""
    a, b, w = factors
    nq = len(ranking.counts)
    kappa = 1.0 / np.maximum(ranking.size - 1.0, 1.0)
    kx, ky, kxy = powers[2, 0] * kappa, powers[0, 2] * kappa, powers[1, 1] * kappa
    y_part = ky * _centred(ranking, w, w)
    later_x = kx * _centred(ranking, a, a)  # this group after the other (B's rows below)
    earlier_x = kx * _centred(ranking, b, b)  # this group before the other
    later_xy = kxy * _centred(ranking, w, a)
    earlier_xy = kxy * _centred(ranking, w, b)
    gq = ranking.group_query
    gfirst = np.searchsorted(gq, gq)

    def before(values):  # per group the sum over the earlier groups of its query
        total = np.cumsum(values) - values
        return total - total[gfirst]

    def after(values):
        return np.bincount(gq, weights=values, minlength=nq)[gq] - before(values) - values

    return (later_x * before(y_part) + earlier_x * after(y_part)
            + 2.0 * later_xy * before(earlier_xy))  # fmt: skip


register_gain_family(
    "NDCGRel",
    "ndcg_rel",
    "trec_eval's ndcg_rel: nDCG at each doc of positive gain (at the end of the ranking "
    "for those not retrieved), averaged over them",
    {"gains": GAINS_PARAM},
    ndcg_rel,
    aware=ndcg_rel_aware,
    spread=ndcg_rel_spread,
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "NDCGRel",
    words=Words(
        whole=(
            "nDCG averaged over the relevant documents",
            "nDCG at the rank of each document of positive gain (at the end of the list for those "
            "not retrieved), averaged over them (trec_eval's ndcg_rel)",
        ),
    ),
    docs=(
        Doc(
            "`NDCGRel`, `NDCGRel(gains=…)`",
            "`ndcg_rel`, `ndcg_rel.1=3,2=9`",
            "trec_eval's ndcg_rel: nDCG at each retrieved doc of positive gain (the ideal cut at "
            "the same rank), the ideal's docs not retrieved at the end of the ranking, averaged "
            "over the ideal's docs of positive gain. Its aware value is exact (sums over pairs of "
            "docs; gains of 0 or more, and no more docs of positive gain retrieved than the ideal "
            "holds: a level −1 or −2 given a positive gain is refused), and so are its variance "
            "(a bilinear statistic of the rows' docs: moments of up to four rows within a group, "
            "pairs of groups through rank-one blocks) and its bounds (each group sorted by "
            "decreasing gain for the max, increasing for the min) (`tiecore/measures/ndcgrel.py`)",
            "trec_eval 9.0.8",
        ),
    ),
)

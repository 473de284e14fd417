"""NDCGRel, trec_eval's ``ndcg_rel``: nDCG averaged over the docs of positive gain.

``(sum_{retrieved i, g_i > 0} DCG@(i + 1) / IDCG@min(i + 1, n+) + (n+ - m) DCG@NR /
IDCG@n+) / n+`` (``m`` the retrieved docs of positive gain, ``NR`` the retrieved docs;
trec_eval's ``m_ndcg_rel.c``, notation of :mod:`tiecore.measures.gains`): nDCG at each
relevant doc, the relevant docs not retrieved at the end of the ranking; 0 unless the
sum is positive.

Under ties its mean over the orderings is a sum over pairs of docs
(:func:`ndcg_rel_aware`, gains of 0 or more); its variance is not derived yet.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("ndcg_rel"))
'NDCGRel'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.gains import _dcg, _ideal_dcg, register_gain_family
from tiecore.measures.orderings import (
    GAINS_PARAM,
    gain_table,
    retrieved,
    row_gains,
    segment_cumsum,
    segment_last,
)


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


register_gain_family(
    "NDCGRel",
    "ndcg_rel",
    "trec_eval's ndcg_rel: nDCG at each doc of positive gain (at the end of the ranking "
    "for those not retrieved), averaged over them",
    {"gains": GAINS_PARAM},
    ndcg_rel,
    aware=ndcg_rel_aware,
    inexact_spread="its variance needs the moments of products of up to four docs' "
    "values, not derived yet",
)

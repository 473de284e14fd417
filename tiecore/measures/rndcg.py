"""Rndcg, trec_eval's ``Rndcg``: nDCG averaged over the ranks where the ideal's gain changes.

The mean of ``DCG@min(k, NR) / IDCG@k`` over the ``k`` where the ideal's gain changes
(the R levels: ``1 <= k <= n+`` with ``I_k != I_{k-1}``, and ``k = n+``), and ``k = NR``
where ``n+ + 1 < NR`` (trec_eval's loop reaches that last point only then); 0 for a
query without relevant docs (trec_eval's ``m_Rndcg.c``, notation of
:mod:`tiecore.measures.gains`).

It is ``sum_rows g * w`` with the row weight ``w = sum_{points k: rank <= min(k, NR)} 1
/ (points IDCG@k) / log2(rank + 1)`` fixed by the qrels and the number retrieved
(:func:`rndcg_weights`), so its mean over the orderings, variance and bounds are those
of a linear permutation statistic per tie group
(:func:`tiecore.measures.orderings.linear_statistic`).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("Rndcg"))
'Rndcg'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.gains import _dcg, _gains, _ideal_dcg, _rows, register_gain_family
from tiecore.measures.orderings import (
    GAINS_PARAM,
    gain_table,
    linear_statistic,
    row_gains,
    segment_cumsum,
    segment_last,
)
from tiecore.measures.registry import Doc, Words, describe


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


def rndcg_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Rndcg's exact ``value, var, min, max`` over the orderings: a linear statistic of
    the docs' gains and the rows' weights (:func:`rndcg_weights`)."""
    gains = _gains(measure)
    _, table = gain_table(judgments, gains)
    weights = rndcg_weights(ranking, judgments, gains, depth)
    return linear_statistic(ranking, row_gains(ranking, table), weights)


register_gain_family(
    "Rndcg",
    "rndcg",
    "trec_eval's Rndcg: nDCG averaged over the ranks where the ideal's gain changes",
    {"gains": GAINS_PARAM},
    rndcg,
    spread=rndcg_spread,
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "Rndcg",
    words=Words(
        whole=(
            "nDCG averaged over the R levels",
            "nDCG at each rank where the best order's gain changes (and at the end of the list), "
            "averaged (trec_eval's Rndcg)",
        ),
    ),
    docs=(
        Doc(
            "`Rndcg`, `Rndcg(gains=…)`",
            "`Rndcg`, `Rndcg.1=3,2=9`",
            "trec_eval's Rndcg: the mean of DCG@min(k, retrieved) / IDCG@k over the ranks k where "
            'the ideal\'s gain changes (the "R levels", the last one where the positive gains '
            "end), and the number retrieved when that is past the last R level + 1; 0 without "
            "relevant docs. A sum of gain × a rank weight that the qrels and the number retrieved "
            "fix, so exact in every mode (a linear permutation statistic per tie group)",
            "trec_eval 9.0.8",
        ),
    ),
)

"""Shared parts of trec_eval's gain-based measures beside ndcg: ``G`` (:mod:`.g`), ``binG``
(:mod:`.bing`), ``ndcg_rel`` (:mod:`.ndcgrel`), ``Rndcg`` (:mod:`.rndcg`).

Their notation, as trec_eval's ``m_G.c``, ``m_binG.c``, ``m_ndcg_rel.c`` and ``m_Rndcg.c``
compute them: ``g_i`` is the gain of the doc at 0-based index ``i`` (its qrels level, or
a ``gains`` parameter's value for it: 0 for a doc not in the qrels); the ideal ranking
takes the qrels docs by decreasing gain, ``I_i`` its gain at index ``i`` (0 past its
end), ``n+`` the number of its positive gains, ``DCG@k = sum_{i < k} g_i / log2(i + 2)``
and ``IDCG@k`` the same of the ideal's positive gains.  Sums run one after the other,
as trec_eval's loops add.  :func:`register_gain_family` declares each family's hooks:
oblivious values from its scorer, sampled ones from the scorer on drawn orders
(:func:`tiecore.measures.orderings.sample_orders`), aware ones from its own function.
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.orderings import (
    gain_table,
    ideal_gains,
    parse_gains,
    retrieved,
    row_gains,
    sample_orders,
    segment_cumsum,
)
from tiecore.measures.registry import Family, each, register


def _rows(ranking: Ranking, depth: int | None):
    """The retrieved rows (up to the depth), their query starts among them, and per
    query how many."""
    keep = np.flatnonzero(retrieved(ranking, depth))
    nq = len(ranking.counts)
    counts = np.bincount(ranking.query[keep], minlength=nq)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    return keep, starts, counts


def _ideal_at(judgments: Judgments, gains: dict, query: np.ndarray, index: np.ndarray):
    """The ideal's gain at ``index`` of each ``query`` (0 past its end)."""
    values, starts = ideal_gains(judgments, gains)
    length = np.diff(starts)
    inside = index < length[query]
    at = np.where(inside, starts[query] + index, 0)
    return np.where(inside, values[at] if values.size else 0.0, 0.0)


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


def _gains(measure) -> dict:
    return parse_gains(measure.param("gains")) if "gains" in measure.spec.params else {}


def register_gain_family(
    name: str,
    alias: str,
    convention: str,
    params: dict,
    scorer,
    *,
    aware=None,
    spread=None,
    inexact: str = "",
    inexact_spread: str = "",
) -> Family:
    """Register one family: ``scorer(ranking, judgments, gains, depth)`` gives one
    ordering's per-query values; ``spread(measure, ranking, judgments, depth)`` the exact
    ``value, var, min, max``; ``aware(ranking, judgments, gains, depth)`` the exact mean
    alone, which the aware mode takes where given (cheaper than the spread, whose value
    it is); without ``spread``, ``inexact_spread`` says why the variance is not derived."""

    def values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
        if profile.mode == "aware" and aware is not None:
            return aware(ranking, judgments, _gains(measure), depth)
        if profile.mode == "aware":
            return spread(measure, ranking, judgments, depth)["value"]
        return scorer(ranking, judgments, _gains(measure), depth)

    def sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
        gains = _gains(measure)
        return sample_orders(
            lambda order: scorer(order, judgments, gains, depth),
            ranking,
            judgments,
            samples=samples,
            rng=rng,
            depth=depth,
        )

    return register(
        Family(
            name,
            convention,
            (alias,),
            "none",
            params=params,
            component=None,
            values=each(values),
            spread=each(spread),
            sample=each(sample),
            inexact=inexact,
            inexact_spread=inexact_spread,
        )
    )

"""SDCG@k, scaled DCG: ``sum_{j <= k} g_j / log2(j + 1)  /  sum_{j <= k} 1 / log2(j + 1)``.

ir_measures' ``SDCG(max_rel=m)@k`` (its provider is cwl_eval's ``NDCG-k``): nDCG as if at
least ``k`` docs of the top level ``m`` existed, so the ideal DCG is that of ``k`` docs
of gain 1 and a query's value does not depend on how many relevant docs its qrels hold.
A doc's gain is ``g = min(level, m) / m``, 0 for a doc not in the qrels or at a level of
0 or below (cwl_eval clips the levels to ``[0, m]`` and scales them to ``[0, 1]``;
ir_measures' ``min_rel`` shifts that range, and tiecore takes its default 0 only).

A document value weighted by rank over a fixed denominator: under ties a linear
permutation statistic, so the aware value, exact variance and bounds, and sampled values
are the engine's (:data:`~tiecore.measures.registry.LINEAR_MOMENTS`).  cwl_eval reads the
top 1000 docs of a ranking, so past ``k = 1000`` ir_measures' values are SDCG@1000's;
tiecore's are SDCG@k's.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("SDCG(max_rel=3)@10")), Measure.parse("SDCG(max_rel=3.0)@5").param("max_rel")
('SDCG(max_rel=3)@10', '3')
"""

from __future__ import annotations

import threading

import numpy as np

from tiecore.engine.profiles import COMPONENTS, LOG2, doc_component, register_component
from tiecore.measures.ndcg import log2_discount_sum
from tiecore.measures.registry import LINEAR_MOMENTS, Doc, Family, Param, Words, register

#: Guards the first registration of a ``max_rel``'s component (evaluations may run in threads).
_LOCK = threading.Lock()


def _gain(top: int):
    """The doc value ``min(max(level, 0), top) / top`` (0 for a doc not in the qrels)."""

    def value(ranking, judgments, rows) -> np.ndarray:
        levels = np.clip(ranking.level[rows], 0, top).astype(np.float64)
        return np.where(ranking.judged[rows], levels / top, 0.0)

    return value


def sdcg_component(measure) -> str:
    """The component of ``measure``'s ``max_rel`` (registered on first use)."""
    top = int(measure.param("max_rel"))
    key = f"sdcg:max_rel={top}"
    if key not in COMPONENTS:
        with _LOCK:
            if key not in COMPONENTS:
                register_component(doc_component(key, _gain(top)))
    return key


def ideal_of_k_top_docs(measure, judgments, ranking, cut) -> np.ndarray:
    """``sum_{j <= k} 1 / log2(j + 1)`` for every query: ``k`` docs of gain 1."""
    return np.full(len(judgments.qids), log2_discount_sum(measure.cutoff))


register(
    Family(
        "SDCG",
        "ir_measures' SDCG (cwl_eval's NDCG-k): DCG@k with gains min(level, max_rel) / "
        "max_rel, over the DCG of k docs of gain 1",
        cutoff="required",
        params={
            "max_rel": Param(
                "",
                low=1,
                high=2**31 - 1,
                closed=True,
                integer=True,
                required=True,
                description="the top relevance level: a doc's gain is min(level, max_rel) / "
                "max_rel",
            ),
            "dcg": Param("log2", ("log2",), description="the discount: 1 / log2(rank + 1)"),
        },
        component=sdcg_component,
        divisor=LOG2,
        denominator=ideal_of_k_top_docs,
        **LINEAR_MOMENTS,
        words=Words(
            cut=(
                "scaled discounted cumulative gain of the top {k} documents",
                "each document's gain (its relevance level divided by {max_rel}, a higher "
                "level counting as {max_rel}) divided by log2(rank + 1), summed over the top "
                "{k}, and divided by the same sum for {k} documents at level {max_rel}: nDCG "
                "as if at least {k} fully relevant documents existed",
            )
        ),
        docs=(
            Doc(
                "`SDCG(max_rel=m)@k`",
                "",
                "Σ over ranks j ≤ k of g_j / log2(j + 1), divided by Σ over j ≤ k of 1 / "
                "log2(j + 1): DCG@k over the DCG of k docs of the top level, with g = min(level, "
                "m) / m (0 for a doc not in the qrels or at a level of 0 or below), as "
                "ir_measures' SDCG (cwl_eval's NDCG-k) with its default min_rel 0, the only "
                "one tiecore takes; a document value, so exact in every mode. cwl_eval reads "
                "the top 1000 docs, so past k = 1000 its values are SDCG@1000's",
                "cwl_eval's definition, transcribed (`tests/measures/test_sdcg.py`; cwl_eval "
                "itself is not installed)",
            ),
        ),
    )
)

"""Unjudged@k, trec_eval 10's ``unj``: the share of the top ``k`` that the qrels do not judge.

``Unjudged@k = (unjudged docs in the top min(k, depth)) / k``, where a doc is unjudged
when the qrels do not list it for the query or list it with a negative level
(trec_eval's "in the pool but not judged", ``m_unjudged.c``); ranks past the docs
retrieved count as judged, so the denominator is ``k`` however few were retrieved
(trec_eval 10: ``unj_5``, ``unj_10``, ``unj_20`` by default).  It is not ``1 -
Judged@k``: ir_measures' Judged@k divides by ``min(k, retrieved)`` and counts a
negative level as judged.

It is computed as ``(min(k, depth, retrieved) - J) / k`` with ``J`` the judged docs
(component ``trec_judged``: in the qrels at a level ``>= 0``) in the top k, a document
value that is 0 on docs outside the qrels (as every component is, for the sampled
mode's draws), so under ties a linear permutation statistic (the exact variance,
minimum and maximum of :data:`~tiecore.measures.registry.LINEAR_MOMENTS`).

>>> from tiecore.measures import FAMILIES, Measure
>>> str(Measure.parse("unj@10")), FAMILIES["Unjudged"].cutoff
('Unjudged@10', 'required')
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.profiles import doc_component, register_component
from tiecore.measures.registry import (
    LINEAR_MOMENTS,
    Doc,
    Family,
    Words,
    describe,
    register,
    retrieved_in_cut,
)


def trec_judged(ranking, judgments, rows) -> np.ndarray:
    """1 where trec_eval 10 calls the doc judged: in the qrels at a level ``>= 0``."""
    return (ranking.judged[rows] & (ranking.level[rows] >= 0)).astype(np.float64)


register_component(doc_component("trec_judged", trec_judged))


def cutoff_denominator(measure, judgments, ranking, cut) -> np.ndarray:
    """``k`` for every query: trec_eval's ``unj`` divides by the cutoff, not by the docs
    retrieved."""
    return np.full(len(judgments.qids), float(measure.cutoff))


def ranked_share(measure, judgments, ranking, cut) -> np.ndarray:
    """``min(k, depth, retrieved) / k``: the share of the top k the run fills."""
    return retrieved_in_cut(measure, judgments, ranking, cut) / float(measure.cutoff)


register(
    Family(
        "Unjudged",
        "trec_eval 10's unj: docs in the top k not in the qrels or at a negative level, "
        "divided by k (ranks past the retrieved docs count as judged)",
        ("unj",),
        "required",
        component="trec_judged",
        denominator=cutoff_denominator,
        scale=-1.0,
        offset=ranked_share,
        **LINEAR_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "Unjudged",
    words=Words(
        cut=(
            "unjudged share of the top {k}",
            "the documents in the top {k} without a relevance judgment (or with a negative one), "
            "divided by {k} (trec_eval 10's unj)",
        ),
        whole=(
            "unjudged share",
            "the retrieved documents without a relevance judgment (or with a negative one), "
            "divided by their number",
        ),
    ),
    docs=(
        Doc(
            "`Unjudged@k`",
            "`unj@k`, `unj_10` (`--trec-eval 10`)",
            "docs in the top k not in the qrels or at a negative level, / k (ranks past the "
            "retrieved docs count as judged)",
            "trec_eval 10.0's `unj`",
        ),
    ),
)

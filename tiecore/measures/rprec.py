"""Rprec: precision at rank ``num_rel``, the relevant docs in the top ``num_rel`` / ``num_rel``.

trec_eval's ``Rprec``; the depth (``-M``) cuts it too.  Under ties a count,
hypergeometric in the group rank ``num_rel`` cuts.

``Rprec(mult=m)`` is trec_eval's ``Rprec_mult_m``: precision at rank ``k = (long)(m *
num_rel + 0.9)`` (C's truncation of a double, as trec_eval 9.0.x computes it), the
relevant docs in the top ``k`` / ``k`` (0 when ``k`` is 0); ``m = 1`` is Rprec itself.
It shows whether a run is precision- or recall-oriented at the same milestones of
every query.

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["Rprec"].cutoff
'none'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.measures.registry import COUNT_MOMENTS, Doc, Family, Param, Words, describe, register

if TYPE_CHECKING:
    from tiecore.engine.judgments import Judgments
    from tiecore.engine.kernels import HeadSum as Measure


def _cutoffs(measure: Measure, judgments: Judgments) -> np.ndarray:
    """Per query the rank ``(long)(mult * num_rel + 0.9)``: ``num_rel`` for ``mult=1``."""
    mult = float(measure.param("mult"))
    if mult == 1.0:
        return judgments.num_rel
    return (mult * judgments.num_rel.astype(np.float64) + 0.9).astype(np.int64)


def cut_at_num_rel(measure: Measure, judgments: Judgments, cut: np.ndarray) -> np.ndarray:
    """Ranks ``1 .. num_rel`` (``mult`` times it; and the depth)."""
    return np.minimum(cut, _cutoffs(measure, judgments))


def divide_by_cutoff(measure: Measure, judgments: Judgments, ranking, cut) -> np.ndarray:
    """The rank cut at, ``num_rel`` (``mult`` times it), before the depth: the docs
    missing above it count as not relevant."""
    return _cutoffs(measure, judgments).astype(np.float64)


register(
    Family(
        "Rprec",
        "relevant in the top num_rel / num_rel; mult=m: in the top (long)(m num_rel + 0.9) / "
        "that rank (trec_eval's Rprec_mult)",
        (),
        "none",
        params={
            "mult": Param(
                "1.0",
                low=0.0,
                high=float("inf"),
                closed=True,
                description="the multiple of num_rel cut at (trec_eval's Rprec_mult)",
            )
        },
        cut=cut_at_num_rel,
        denominator=divide_by_cutoff,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "Rprec",
    words=Words(
        whole=(
            "R-precision",
            "the precision at rank R, where R is the query's number of relevant documents: the "
            "share of the top R documents that are relevant (a perfect ranking scores 1)",
        ),
        extra=(
            (
                "mult",
                "*",
                "; here at rank int({mult} × R + 0.9) instead of R (trec_eval's Rprec_mult)",
            ),
        ),
    ),
    docs=(
        Doc(
            "`Rprec`, `Rprec(mult=m)`",
            "`Rprec`, `Rprec_mult_m`",
            "relevant docs in the top num_rel / num_rel; with `mult`, in the top k = "
            "int(m·num_rel + 0.9) / k, as trec_eval's `Rprec_mult`",
            "trec_eval (pytrec_eval, its test outputs; trec_eval 9.0.8 for `Rprec_mult`)",
        ),
    ),
)

"""IPrecAvg, trec_eval's ``11pt_avg``: interpolated precision averaged over recall levels.

trec_eval (``m_11pt_avg.c``) averages the interpolated precision
(:mod:`tiecore.measures.iprec`, its recall levels rounded as IPrec's ``round``: ``up``,
9.0.x's ``+ 0.9``, or ``nearest``, trec_eval 10.0's) at the recall levels given
(``11pt_avg..25,.5,.75``; by default the eleven levels 0.0, 0.1, ..., 1.0):

    11pt_avg = sum_c IPrec(c) / (number of levels)

summed from the highest level down, as trec_eval adds them.  tiecore's name is
``IPrecAvg(levels=0.25;0.5;0.75)``.

Under ties its mean over the orderings is the mean of the levels' exact tie-aware
IPrec values (linearity: aware mode gives it), but its variance needs the covariances
of the levels' maxima, which tiecore does not derive yet: ``--spread`` refuses it.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("IPrecAvg(levels=0.25;0.5;.75)"))
'IPrecAvg(levels=0.25;0.5;0.75)'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.iprec import RECALL_LEVELS, ROUND, iprec_oblivious
from tiecore.measures.iprec import _moments as iprec_moments
from tiecore.measures.orderings import sample_orders
from tiecore.measures.registry import Family, Param, register


class LevelsParam(Param):
    """A list of recall levels from 0 to 1, separated by ``;``."""

    def canonical(self, value: str) -> str:
        try:
            levels = [float(part) for part in value.split(";") if part.strip()]
        except ValueError:
            raise ValueError("must be recall levels separated by ';', as 0.25;0.5") from None
        if not levels or not all(0.0 <= level <= 1.0 for level in levels):
            raise ValueError("must be recall levels from 0 to 1, separated by ';'")
        return ";".join(map(repr, levels))


def levels_of(measure) -> tuple[float, ...]:
    """The measure's recall levels."""
    return tuple(float(part) for part in measure.param("levels").split(";"))


def iprec_avg_oblivious(
    ranking: Ranking, judgments: Judgments, levels, depth: int | None, rounding: str = "up"
) -> np.ndarray:
    """Per query the mean interpolated precision over ``levels``, summed from the last."""
    curve = iprec_oblivious(ranking, judgments, levels, depth=depth, rounding=rounding)
    total = np.zeros(curve.shape[0])
    for column in range(curve.shape[1] - 1, -1, -1):  # a handful of levels
        total += curve[:, column]
    return total / len(levels)


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query mean interpolated precision of the ranking's own order, or (aware) the
    mean of the levels' exact tie-aware IPrec values."""
    levels, rounding = levels_of(measure), measure.param("round")
    if profile.mode == "aware":
        mean, _ = iprec_moments(
            ranking, judgments, levels, depth=depth, rounding=rounding, within=str(measure)
        )
        return mean[:, ::-1].sum(axis=1) / len(levels)
    return iprec_avg_oblivious(ranking, judgments, levels, depth, rounding)


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` under random tie-breaks."""
    levels, rounding = levels_of(measure), measure.param("round")
    return sample_orders(
        lambda order: iprec_avg_oblivious(order, judgments, levels, depth, rounding),
        ranking,
        judgments,
        samples=samples,
        rng=rng,
        depth=depth,
    )


register(
    Family(
        "IPrecAvg",
        "trec_eval's 11pt_avg: the mean of iprec_at_recall over recall levels (default the "
        "eleven 0.0, 0.1, ..., 1.0)",
        ("11pt_avg",),
        "none",
        params={
            "levels": LevelsParam(
                ";".join(map(repr, RECALL_LEVELS)),
                description="the recall levels averaged, separated by ';' (trec_eval's "
                "11pt_avg..25,.5,.75 is levels=0.25;0.5;0.75)",
            ),
            "round": ROUND,
        },
        component=None,
        values=family_values,
        sample=family_sample,
        inexact_spread="its variance needs the covariances of the levels' interpolated "
        "precisions, not derived yet",
    )
)

"""RBP (Moffat & Zobel 2008), rank-biased precision, and its residual.

``RBP@k = sum_{j <= k} g_j (1 - p) p^(j-1)`` with persistence ``p``: the expected
gain of a user who reads on from each rank with probability ``p``.  The gain is the
level (``gain=linear``, ir_measures'), ``2^level - 1`` (``exp``), relevant or not
(``binary``, Moffat & Zobel's), the level / the qrels' largest level (``scaled``,
rbp_eval's, which TREC-COVID published) or the level / the query's own largest qrels
level where that is above 1 (``query_scaled``: trec_eval 10's ``rbp``, whose
``m_rbp.c`` maps the query's gains onto ``[0, 1]`` when the largest is above 1).

``RBP_residual`` is the weight RBP leaves undecided: the weight of the unjudged ranks
``j <= k`` plus the tail ``p^min(k, retrieved)``, that is ``1 - judged weight``.  Both
live here because they are one model read twice: the same persistence parameter and
geometric rank weight, RBP over the gains and its residual over the judged flags.
Both are document values, so under ties linear permutation statistics.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("rbp.p=0.5")), FAMILIES["RBP_residual"].offset
('RBP(p=0.5,gain=scaled)', 1.0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.profiles import GAINS, Divisor, geometric
from tiecore.measures.registry import (
    LINEAR_MOMENTS,
    Family,
    Param,
    ones,
    register,
    unscaled_gain_component,
)

if TYPE_CHECKING:
    from tiecore.engine.kernels import HeadSum as Measure


def _rbp_component(measure: Measure) -> str:
    """Binary: relevant or not; ``scaled``, ``query_scaled``: the level (divided by
    :func:`rbp_denominator`)."""
    if measure.gain == "binary":
        return "rel"
    if measure.gain in ("scaled", "query_scaled"):
        return "gain:linear"
    return unscaled_gain_component(measure)


def rbp_denominator(measure, judgments, ranking, cut) -> np.ndarray:
    """1, or with ``gain=scaled`` the largest level of the whole qrels (every query), or
    with ``gain=query_scaled`` each query's own largest qrels level, at least 1.

    ``gain=scaled`` is rbp_eval's graded gain, which TREC-COVID published: ``level /
    top`` with ``top`` the qrels' largest level, so every gain is in ``[0, 1]`` and
    RBP at most 1 (a qrels without a positive level scores 0, as its gains are 0).
    """
    if measure.gain == "scaled":
        top = max(int(judgments._levels.max(initial=0)), 0)
        return np.full(len(judgments.qids), float(top))
    if measure.gain == "query_scaled":
        return np.maximum(query_top_level(judgments), 1).astype(np.float64)
    return ones(measure, judgments, ranking, cut)


def query_top_level(judgments) -> np.ndarray:
    """Per query the largest level ``>= 0`` of its qrels docs, retrieved or not (0 when it
    has none): trec_eval's ``num_rel_levels - 1`` (``form_res_rels.c``).

    trec_eval 10's ``rbp`` then divides the gains (the levels) by it when it is above 1;
    its ``m_rbp.c`` reads the smallest and largest gain from variables it never sets,
    and this is the reading its test outputs bear out (the smallest gain 0, level 0's).
    """
    top = np.zeros(len(judgments.qids), np.int64)
    if len(judgments._levels):
        np.maximum.at(top, judgments._query_of_key, np.maximum(judgments._levels, 0))
    return top


def _rbp_divisor(measure: Measure) -> Divisor:
    return geometric(float(measure.param("p")))


PERSISTENCE = Param("0.8", description="the chance of reading on from one rank to the next")
RBP_GAIN = Param(
    "linear",
    (*GAINS, "binary", "scaled", "query_scaled"),
    description="linear: the level; exp: 2^level - 1; binary: relevant or not; scaled: "
    "the level / the qrels' largest level (rbp_eval's); query_scaled: the level / the "
    "query's largest qrels level when above 1 (trec_eval 10's rbp)",
)

register(
    Family(
        "RBP",
        "sum over ranks j <= k of gain (1 - p) p^(j-1); gain the level (linear, "
        "ir_measures'), 2^level - 1 (exp), relevant (binary, Moffat & Zobel's) or the level "
        "/ the qrels' largest level (scaled, rbp_eval's and TREC-COVID's) or / the query's "
        "largest level when above 1 (query_scaled, trec_eval 10's rbp)",
        params={"p": PERSISTENCE, "gain": RBP_GAIN},
        component=_rbp_component,
        divisor=_rbp_divisor,
        denominator=rbp_denominator,
        **LINEAR_MOMENTS,
    )
)
register(
    Family(
        "RBP_residual",
        "RBP's residual: the weight (1 - p) p^(j-1) of the unjudged ranks "
        "j <= k plus the tail p^min(k, retrieved), = 1 - judged weight",
        ("rbp_res",),
        params={"p": PERSISTENCE},
        component="judged",
        divisor=_rbp_divisor,
        denominator=ones,
        scale=-1.0,
        offset=1.0,
        **LINEAR_MOMENTS,
    )
)

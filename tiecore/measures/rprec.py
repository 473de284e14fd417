"""Rprec: precision at rank ``num_rel``, the relevant docs in the top ``num_rel`` / ``num_rel``.

trec_eval's ``Rprec``; the depth (``-M``) cuts it too.  Under ties a count,
hypergeometric in the group rank ``num_rel`` cuts.

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["Rprec"].cutoff
'none'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.measures.registry import COUNT_MOMENTS, Family, num_rel, register

if TYPE_CHECKING:
    from tiecore.engine.judgments import Judgments
    from tiecore.engine.kernels import HeadSum as Measure


def cut_at_num_rel(measure: Measure, judgments: Judgments, cut: np.ndarray) -> np.ndarray:
    """Ranks ``1 .. num_rel`` (and the depth)."""
    return np.minimum(cut, judgments.num_rel)


register(
    Family(
        "Rprec",
        "relevant in the top num_rel / num_rel",
        (),
        "none",
        cut=cut_at_num_rel,
        denominator=num_rel,
        **COUNT_MOMENTS,
    )
)

"""SetF, trec_eval's ``set_F`` (beta = 1): the harmonic mean of SetP and SetR.

trec_eval computes ``(beta^2 + 1) P R / (beta^2 P + R)`` with ``P = num_rel_ret /
num_ret`` and ``R = num_rel_ret / num_rel`` (0 when nothing relevant is retrieved);
with ``beta = 1`` that is ``2 num_rel_ret / (num_ret + num_rel)``, a count over a
denominator fixed by the depth, so under ties it moves only when the depth cuts a
tie group (``num_rel_ret`` hypergeometric there) and its mean over orderings is
``2 E[num_rel_ret] / (num_ret + num_rel)``.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("set_F")), FAMILIES["SetF"].scale
('SetF', 2.0)
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import (
    COUNT_MOMENTS,
    Family,
    num_rel,
    register,
    retrieved_in_cut,
)


def retrieved_plus_num_rel(measure, judgments, ranking, cut) -> np.ndarray:
    """``num_ret + num_rel``: SetF = 2 num_rel_ret / (num_ret + num_rel)."""
    retrieved = retrieved_in_cut(measure, judgments, ranking, cut)
    return retrieved + num_rel(measure, judgments, ranking, cut)


register(
    Family(
        "SetF",
        "trec_eval's set_F (beta = 1): 2 relevant retrieved / (retrieved + num_rel), the "
        "harmonic mean of SetP and SetR",
        ("set_f",),
        "none",
        denominator=retrieved_plus_num_rel,
        scale=2.0,
        **COUNT_MOMENTS,
    )
)

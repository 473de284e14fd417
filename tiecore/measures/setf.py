"""SetF, trec_eval's ``set_F``: the weighted harmonic mean of SetP and SetR.

trec_eval computes ``(x + 1) P R / (x P + R)`` with ``P = num_rel_ret / num_ret``, ``R =
num_rel_ret / num_rel`` and ``x`` its parameter, the weight of recall against precision
(default 1, the harmonic mean; ``set_F.0.5``, printed ``set_F_0.5``, is ``SetF(x=0.5)``;
trec_eval uses ``x`` where van Rijsbergen's F has ``beta^2``), 0 when nothing relevant
is retrieved.  That is ``(x + 1) num_rel_ret / (num_ret + x num_rel)``, a count over a
denominator fixed by the depth, so under ties it moves only when the depth cuts a tie
group (``num_rel_ret`` hypergeometric there) and its mean over orderings is
``(x + 1) E[num_rel_ret] / (num_ret + x num_rel)``.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("set_F")), FAMILIES["SetF"].scale, str(Measure.parse("SetF(x=0.5)"))
('SetF', 2.0, 'SetF(x=0.5)')
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import (
    COUNT_MOMENTS,
    Family,
    Param,
    num_rel,
    register,
    retrieved_in_cut,
)


def retrieved_plus_num_rel(measure, judgments, ranking, cut) -> np.ndarray:
    """``(num_ret + x num_rel) 2 / (x + 1)``, so that SetF = 2 num_rel_ret / that is
    ``(x + 1) num_rel_ret / (num_ret + x num_rel)``; at ``x = 1`` exactly ``num_ret +
    num_rel``."""
    x = float(measure.param("x"))
    retrieved = retrieved_in_cut(measure, judgments, ranking, cut)
    relevant = num_rel(measure, judgments, ranking, cut)
    if x == 1.0:
        return retrieved + relevant
    return (retrieved + x * relevant) * (2.0 / (x + 1.0))


register(
    Family(
        "SetF",
        "trec_eval's set_F: (x + 1) relevant retrieved / (retrieved + x num_rel), the "
        "weighted harmonic mean of SetP and SetR (x = 1: the harmonic mean)",
        ("set_f",),
        "none",
        params={
            "x": Param(
                "1.0",
                low=0.0,
                high=float("inf"),
                closed=True,
                description="trec_eval's set_F parameter: the weight of recall against "
                "precision, (x + 1) P R / (x P + R)",
            )
        },
        denominator=retrieved_plus_num_rel,
        scale=2.0,
        **COUNT_MOMENTS,
    )
)

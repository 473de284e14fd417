"""CG@k, cumulative gain: the sum of the gains of the top ``k``, unnormalised.

Gains as DCG's; no discount.  Under ties only the group the cutoff cuts moves it
(a linear permutation statistic).

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["CG"].divisor.name
'one'
"""

from __future__ import annotations

from tiecore.measures.registry import (
    GAIN,
    LINEAR_MOMENTS,
    Family,
    ones,
    register,
    unscaled_gain_component,
)

register(
    Family(
        "CG",
        "sum of the gains of the top k, unnormalised",
        params={"gain": GAIN},
        component=unscaled_gain_component,
        denominator=ones,
        **LINEAR_MOMENTS,
    )
)

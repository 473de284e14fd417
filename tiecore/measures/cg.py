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
    Doc,
    Family,
    Words,
    describe,
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


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "CG",
    words=Words(
        cut=(
            "cumulative gain of the top {k} documents",
            "each document's gain ({gain}), summed over the top {k}",
        ),
        whole=(
            "cumulative gain",
            "each document's gain ({gain}), summed over all retrieved documents",
        ),
    ),
    docs=(
        Doc(
            "`CG`, `CG@k`",
            "",
            "Σ of the gains of the top k, unnormalised",
            "–",
        ),
    ),
)

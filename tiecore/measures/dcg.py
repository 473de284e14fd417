"""DCG@k, unnormalised: ``sum_{j <= k} g(level_j) / log2(j + 1)``.

Gains as nDCG's (``linear`` the level, ``exp`` ``2^level - 1`` as it is, ``inf``
past level 1023); under ties a linear permutation statistic.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> FAMILIES["DCG"].component_of(Measure.parse("DCG(gain=exp)"))
'gain:exp_unscaled'
"""

from __future__ import annotations

from tiecore.engine.profiles import LOG2
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
        "DCG",
        "sum over ranks j <= k of gain / log2(j + 1), unnormalised",
        params={"gain": GAIN},
        component=unscaled_gain_component,
        divisor=LOG2,
        denominator=ones,
        **LINEAR_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "DCG",
    words=Words(
        cut=(
            "discounted cumulative gain of the top {k} documents",
            "each document's gain ({gain}) divided by log2(rank + 1), summed over the top {k} "
            "(not normalised)",
        ),
        whole=(
            "discounted cumulative gain",
            "each document's gain ({gain}) divided by log2(rank + 1), summed over the whole "
            "ranked list (not normalised)",
        ),
    ),
    docs=(
        Doc(
            "`DCG`, `DCG@k`",
            "",
            "Σ over ranks j ≤ k of gain / log2(j + 1), unnormalised",
            "scikit-learn's `dcg_score`, whose tie-averaged value is the aware one",
        ),
    ),
)

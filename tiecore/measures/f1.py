"""F1@k: the harmonic mean of P@k and R@k, ``2 rel_k / (k + num_rel)``.

``2 P R / (P + R)`` with ``P = rel_k / k`` and ``R = rel_k / num_rel`` is
``2 rel_k / (k + num_rel)``: a count over a fixed denominator, so under ties
it moves with ``rel_k`` alone (hypergeometric in the group the cutoff cuts).

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["F1"].scale
2.0
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import COUNT_MOMENTS, Doc, Family, Words, describe, register


def cutoff_plus_num_rel(measure, judgments, ranking, cut) -> np.ndarray:
    """``k + num_rel`` (F1@k = 2 rel_k / (k + num_rel))."""
    return measure.cutoff + judgments.num_rel.astype(np.float64)


register(
    Family(
        "F1",
        "2 rel_k / (k + num_rel), the harmonic mean of P@k and R@k",
        (),
        "required",
        denominator=cutoff_plus_num_rel,
        scale=2.0,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "F1",
    words=Words(
        cut=(
            "F1 at {k}",
            "the harmonic mean of precision and recall at {k}: 2 × (relevant in the top {k}) / "
            "({k} + the query's number of relevant documents)",
        ),
    ),
    docs=(
        Doc(
            "`F1@k`",
            "",
            "2·rel_k / (k + num_rel), the harmonic mean of P@k and R@k",
            "–",
        ),
    ),
)

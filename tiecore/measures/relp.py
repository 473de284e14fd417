"""RelP@k, trec_eval's ``relative_P``: the relevant docs in the top ``k`` / ``min(k, R)``.

Precision at ``k`` relative to the largest precision any ranking has at ``k``: the
relevant docs among the first ``k`` ranks over ``min(k, R)`` (``R`` the query's
relevant docs), so precision up to ``R`` and recall past it; 0 for a query with no
relevant doc.  ``k`` counts even when fewer docs were retrieved (as ``P_k``).  Under
ties a count of relevant docs scaled per query, hypergeometric in the group the
cutoff cuts (:data:`~tiecore.measures.registry.COUNT_MOMENTS`).

>>> from tiecore.measures import FAMILIES, Measure
>>> str(Measure.parse("relative_P_10")), FAMILIES["RelP"].cutoff
('RelP@10', 'required')
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import COUNT_MOMENTS, Family, register


def relative_cutoff(measure, judgments, ranking, cut) -> np.ndarray:
    """``min(k, R)``: the most relevant docs the top ``k`` can hold."""
    return np.minimum(float(measure.cutoff), judgments.num_rel.astype(np.float64))


register(
    Family(
        "RelP",
        "trec_eval's relative_P: relevant in the top k / min(k, num_rel)",
        ("relative_p",),
        "required",
        denominator=relative_cutoff,
        **COUNT_MOMENTS,
    )
)

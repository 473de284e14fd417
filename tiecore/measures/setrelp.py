"""SetRelP, trec_eval's ``set_relative_P``: relevant retrieved / ``min(retrieved, R)``.

The set precision over the largest a set of that size can have (``R`` the query's
relevant docs); "retrieved" stops at the depth (``-M``); 0 when nothing was retrieved
or nothing is relevant.  Under ties it moves only when the depth cuts a tie group:
a count, hypergeometric there (:data:`~tiecore.measures.registry.COUNT_MOMENTS`).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("set_relative_P"))
'SetRelP'
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import COUNT_MOMENTS, Family, register, retrieved_in_cut


def set_relative_denominator(measure, judgments, ranking, cut) -> np.ndarray:
    """``min(retrieved, R)``, retrieved up to the depth."""
    retrieved = retrieved_in_cut(measure, judgments, ranking, cut)
    return np.minimum(retrieved, judgments.num_rel.astype(np.float64))


register(
    Family(
        "SetRelP",
        "trec_eval's set_relative_P: relevant retrieved / min(retrieved, num_rel) (up to "
        "the depth)",
        ("set_relative_p",),
        "none",
        denominator=set_relative_denominator,
        **COUNT_MOMENTS,
    )
)

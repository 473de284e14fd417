"""Judged@k (ir_measures'): the share of the top ``k`` found in the qrels.

``judged docs in the top k / min(k, retrieved)``; the component ``judged`` is a
document value, so under ties a linear permutation statistic.

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["Judged"].denominator is retrieved_in_cut
True
"""

from __future__ import annotations

from tiecore.measures.registry import (
    LINEAR_MOMENTS,
    Family,
    register,
    retrieved_in_cut,
)

register(
    Family(
        "Judged",
        "judged docs in the top k / min(k, retrieved) (ir_measures')",
        component="judged",
        denominator=retrieved_in_cut,
        **LINEAR_MOMENTS,
    )
)

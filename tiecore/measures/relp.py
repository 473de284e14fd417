"""RelP@k, trec_eval's ``relative_P``: P@k over the best P@k the query allows.

``RelP@k = rel_k / min(k, num_rel)`` with ``rel_k`` the relevant docs among the first
``k`` ranks (up to the depth): precision while ``k <= num_rel``, recall past it; a query
without relevant docs scores 0, as in trec_eval's ``relative_P_k``.  Under ties
``rel_k`` is hypergeometric in the group the cutoff cuts
(:data:`~tiecore.measures.registry.COUNT_MOMENTS`), as P@k's.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("relative_P_10")), str(Measure.parse("RelP@5"))
('RelP@10', 'RelP@5')
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import COUNT_MOMENTS, Doc, Family, Words, describe, num_rel, register


def smaller_of_cutoff_and_relevant(measure, judgments, ranking, cut) -> np.ndarray:
    """Per query ``min(k, num_rel)`` (``k`` the cutoff, whatever the depth)."""
    return np.minimum(float(measure.cutoff), num_rel(measure, judgments, ranking, cut))


register(
    Family(
        "RelP",
        "trec_eval's relative_P: relevant in the top k / min(k, num_rel)",
        ("relative_p",),
        "required",
        denominator=smaller_of_cutoff_and_relevant,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "RelP",
    words=Words(
        cut=(
            "relative precision at {k}",
            "the relevant documents in the top {k}, divided by the smaller of {k} and the query's "
            "number of relevant documents: precision up to that number, recall past it "
            "(trec_eval's relative_P)",
        ),
    ),
    docs=(
        Doc(
            "`RelP@k`",
            "`relative_P_k`, `relative_P.k`",
            "relevant docs in the top k / min(k, num_rel): P@k while k ≤ num_rel, R@k past it; 0 "
            "without relevant docs",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

"""P@k, precision at k: the relevant docs in the top ``k``, divided by ``k``.

``P@k = rel_k / k`` with ``rel_k`` the relevant docs among the first ``k`` ranks,
``k`` even when fewer docs were retrieved (trec_eval's ``P_k``).  Under ties
``rel_k`` is hypergeometric in the group the cutoff cuts
(:data:`~tiecore.measures.registry.COUNT_MOMENTS`).

>>> from tiecore.measures import FAMILIES, lookup
>>> lookup("precision").name, FAMILIES["P"].cutoff
('P', 'required')
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import COUNT_MOMENTS, Doc, Family, Words, describe, register


def per_cutoff(measure, judgments, ranking, cut) -> np.ndarray:
    """``k``, even when fewer docs were retrieved (trec_eval's P@k)."""
    return np.full(len(judgments.qids), float(measure.cutoff))


register(
    Family(
        "P",
        "relevant in the top k / k (k even when fewer were retrieved)",
        ("precision",),
        "required",
        denominator=per_cutoff,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "P",
    words=Words(
        cut=(
            "precision at {k}",
            "the share of the top {k} documents that are relevant (relevant documents in the top "
            "{k}, divided by {k})",
        ),
    ),
    docs=(
        Doc(
            "`P@k`",
            "`P_k`",
            "relevant docs in the top k / k (k even when fewer docs were retrieved)",
            "trec_eval (pytrec_eval, its test outputs)",
        ),
    ),
)

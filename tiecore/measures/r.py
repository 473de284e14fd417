"""R@k, recall at k: the relevant docs in the top ``k``, divided by ``num_rel``.

``R@k = rel_k / num_rel`` (trec_eval's ``recall_k``; a query without relevant docs
scores 0).  Under ties ``rel_k`` is hypergeometric in the group the cutoff cuts.

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["R"].denominator is num_rel
True
"""

from __future__ import annotations

from tiecore.measures.registry import COUNT_MOMENTS, Doc, Family, Words, describe, num_rel, register

register(
    Family(
        "R",
        "relevant in the top k / num_rel",
        ("recall",),
        "required",
        denominator=num_rel,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "R",
    words=Words(
        cut=(
            "recall at {k}",
            "the share of the query's relevant documents that appear in the top {k}",
        ),
    ),
    docs=(
        Doc(
            "`R@k`",
            "`recall_k`",
            "relevant docs in the top k / num_rel",
            "trec_eval (pytrec_eval, its test outputs)",
        ),
    ),
)

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
    Doc,
    Family,
    Words,
    describe,
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


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "Judged",
    words=Words(
        cut=(
            "judged share of the top {k}",
            "the share of the top {k} documents that have a relevance judgment",
        ),
        whole=(
            "judged share",
            "the share of the retrieved documents that have a relevance judgment",
        ),
    ),
    docs=(
        Doc(
            "`Judged@k`, `Judged`",
            "",
            "docs in the qrels (at any level) among the top k / min(k, retrieved)",
            "ir_measures' own provider, which breaks ties by docno ascending (`--tiebreak "
            "docno_asc`)",
        ),
    ),
)

"""SetRelP, trec_eval's ``set_relative_P``: SetP over the best SetP a set of its size can have.

``SetRelP = num_rel_ret / min(num_ret, num_rel)`` over the whole retrieved set (cut at
the depth, trec_eval's ``-M``): a set of ``num_ret`` docs holds at most ``min(num_ret,
num_rel)`` relevant ones.  A query with nothing retrieved or nothing relevant scores 0,
as in trec_eval.  ir_measures calls it ``SetP(relative=True)``.  It is a count over a
denominator fixed by the depth, so under ties it moves only when the depth cuts a tie
group (``num_rel_ret`` hypergeometric there,
:data:`~tiecore.measures.registry.COUNT_MOMENTS`).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("set_relative_P"))
'SetRelP'
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import (
    COUNT_MOMENTS,
    Doc,
    Family,
    Words,
    describe,
    num_rel,
    register,
    retrieved_in_cut,
)


def smaller_of_retrieved_and_relevant(measure, judgments, ranking, cut) -> np.ndarray:
    """Per query ``min(num_ret, num_rel)`` (0 when either is: the query scores 0)."""
    retrieved = retrieved_in_cut(measure, judgments, ranking, cut)
    return np.minimum(retrieved, num_rel(measure, judgments, ranking, cut))


register(
    Family(
        "SetRelP",
        "trec_eval's set_relative_P: relevant retrieved (up to the depth) / min(retrieved, "
        "num_rel)",
        ("set_relative_p",),
        "none",
        denominator=smaller_of_retrieved_and_relevant,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "SetRelP",
    words=Words(
        whole=(
            "relative set precision",
            "the relevant documents retrieved over the most a set of that size could hold: "
            "divided by the smaller of the number retrieved and the query's number of relevant "
            "documents (trec_eval's set_relative_P)",
        ),
    ),
    docs=(
        Doc(
            "`SetRelP`",
            "`set_relative_P`",
            "relevant retrieved docs (up to `-M`) / min(retrieved docs, num_rel): SetP over the "
            "best SetP a set of that size can have (ir_measures' `SetP(relative=True)`, "
            "`SetRelP`); moves under ties only when the depth cuts a tie group",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

"""SetP, trec_eval's ``set_P``: the relevant retrieved docs / the retrieved docs.

``SetP = num_rel_ret / num_ret`` over the whole retrieved set (cut at the depth,
trec_eval's ``-M``), with no cutoff.  Under ties it moves only when the depth cuts
a tie group: then ``num_rel_ret`` is hypergeometric in that group
(:data:`~tiecore.measures.registry.COUNT_MOMENTS`) and ``num_ret`` fixed.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("set_P")), FAMILIES["SetP"].cutoff
('SetP', 'none')
"""

from __future__ import annotations

from tiecore.measures.registry import (
    COUNT_MOMENTS,
    Doc,
    Family,
    Words,
    describe,
    register,
    retrieved_in_cut,
)

register(
    Family(
        "SetP",
        "trec_eval's set_P: relevant retrieved / retrieved (up to the depth)",
        ("set_p",),
        "none",
        denominator=retrieved_in_cut,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "SetP",
    words=Words(
        whole=(
            "set precision",
            "the share of all retrieved documents that are relevant (trec_eval's set_P)",
        ),
    ),
    docs=(
        Doc(
            "`SetP`",
            "`set_P`",
            "relevant retrieved docs / retrieved docs, over the whole ranking cut at `-M`; moves "
            "under ties only when the depth cuts a tie group",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

"""SetR, trec_eval's ``set_recall``: the relevant retrieved docs / ``num_rel``.

``SetR = num_rel_ret / num_rel`` over the whole retrieved set (cut at the depth);
a query without relevant docs scores 0.  Under ties it moves only when the depth
cuts a tie group (``num_rel_ret`` hypergeometric there).

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("set_recall")), FAMILIES["SetR"].denominator is num_rel
('SetR', True)
"""

from __future__ import annotations

from tiecore.measures.registry import COUNT_MOMENTS, Doc, Family, Words, describe, num_rel, register

register(
    Family(
        "SetR",
        "trec_eval's set_recall: relevant retrieved (up to the depth) / num_rel",
        ("set_recall",),
        "none",
        denominator=num_rel,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "SetR",
    words=Words(
        whole=(
            "set recall",
            "the share of the query's relevant documents that were retrieved (trec_eval's "
            "set_recall)",
        ),
    ),
    docs=(
        Doc(
            "`SetR`",
            "`set_recall`",
            "relevant retrieved docs (up to `-M`) / num_rel",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

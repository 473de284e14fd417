"""NumRelRet, trec_eval's ``num_rel_ret``: the relevant docs retrieved (up to the depth).

A count of relevant docs over the ranks up to the depth: under ties it moves only
when the depth cuts a tie group, hypergeometric there.  trec_eval's summary line
sums it over the queries; tiecore's summary is the mean.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("num_rel_ret")), FAMILIES["NumRelRet"].component
('NumRelRet', 'rel')
"""

from __future__ import annotations

from tiecore.measures.registry import COUNT_MOMENTS, Doc, Family, Words, describe, ones, register

register(
    Family(
        "NumRelRet",
        "trec_eval's num_rel_ret: relevant docs retrieved (up to the depth); summed over "
        "queries by trec_eval's summary, averaged by tiecore's",
        ("num_rel_ret",),
        "none",
        denominator=ones,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "NumRelRet",
    words=Words(
        whole=(
            "relevant documents retrieved",
            "the number of relevant documents retrieved for the query (trec_eval's num_rel_ret)",
        ),
    ),
    docs=(
        Doc(
            "`NumRelRet`",
            "`num_rel_ret`",
            "relevant docs retrieved (up to `-M`); trec_eval's summary sums it over queries, "
            "tiecore's takes the mean (asked for by trec_eval's name, the command line prints "
            "trec_eval's sum)",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

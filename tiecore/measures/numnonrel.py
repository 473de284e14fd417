"""NumNonRelJudgedRet, trec_eval's ``num_nonrel_judged_ret``: judged non-relevant docs retrieved.

The retrieved docs (up to the depth, ``-M``) judged with a level from 0 to below the
relevance level: neither relevant nor unjudged (absent from the qrels, or a negative
level).  A count of a document value over the ranks up to the depth, so under ties it
moves only when the depth cuts a tie group (:data:`~tiecore.measures.registry.
LINEAR_MOMENTS` of the component ``nonrel``).  trec_eval's summary line sums it over
the queries; tiecore's summary is the mean.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("num_nonrel_judged_ret"))
'NumNonRelJudgedRet'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.profiles import doc_component, register_component
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import LINEAR_MOMENTS, Doc, Family, Words, describe, ones, register


def _nonrel_value(ranking: Ranking, judgments: Judgments, rows) -> np.ndarray:
    """1 for a doc judged non-relevant (``0 <= level < rel_level``), else 0."""
    return ranking.nonrel[rows].astype(np.float64)


register_component(doc_component("nonrel", _nonrel_value))

register(
    Family(
        "NumNonRelJudgedRet",
        "trec_eval's num_nonrel_judged_ret: docs retrieved (up to the depth) judged "
        "non-relevant; summed over queries by trec_eval's summary, averaged by tiecore's",
        ("num_nonrel_judged_ret",),
        "none",
        component="nonrel",
        denominator=ones,
        **LINEAR_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "NumNonRelJudgedRet",
    words=Words(
        whole=(
            "judged non-relevant documents retrieved",
            "the number of retrieved documents judged not relevant, unjudged ones left out "
            "(trec_eval's num_nonrel_judged_ret)",
        ),
    ),
    docs=(
        Doc(
            "`NumNonRelJudgedRet`",
            "`num_nonrel_judged_ret`",
            "docs retrieved (up to `-M`) judged with a level from 0 to below the relevance level "
            "(neither relevant nor unjudged); trec_eval's summary sums it",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

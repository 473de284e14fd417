"""NumNonrelJudgedRet, trec_eval's ``num_nonrel_judged_ret``: judged non-relevant docs retrieved.

The retrieved docs (up to the depth) found in the qrels with a level from 0 up to
below the relevance level.  A count of document values over the ranks up to the
depth: it moves under ties only where the depth cuts a tie group (a linear
permutation statistic there, :data:`~tiecore.measures.registry.LINEAR_MOMENTS`).
trec_eval's summary line sums it over the queries; tiecore's summary is the mean.

>>> from tiecore.measures import FAMILIES, Measure
>>> str(Measure.parse("num_nonrel_judged_ret")), FAMILIES["NumNonrelJudgedRet"].component
('NumNonrelJudgedRet', 'nonrel')
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.profiles import doc_component, register_component
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import LINEAR_MOMENTS, Family, ones, register


def _nonrel_value(ranking: Ranking, judgments: Judgments, rows) -> np.ndarray:
    return ranking.nonrel[rows].astype(np.float64)


register_component(doc_component("nonrel", _nonrel_value))

register(
    Family(
        "NumNonrelJudgedRet",
        "trec_eval's num_nonrel_judged_ret: judged non-relevant docs retrieved (up to the "
        "depth); summed over queries by trec_eval's summary, averaged by tiecore's",
        ("num_nonrel_judged_ret",),
        "none",
        component="nonrel",
        denominator=ones,
        **LINEAR_MOMENTS,
    )
)

"""NumRet, trec_eval's ``num_ret``: the docs retrieved (up to the depth, ``-M``).

``min(retrieved, depth)``: every ordering of the tie groups retrieves as many, so it
is the same in every mode (variance 0, min = max).  It is no head sum of a per-rank
component: the sampler draws only the docs a component tells apart and counts every
other doc as 0, which a count of every doc would break; its hooks give the count
directly.  trec_eval's summary line sums it over the queries; tiecore's summary is
the mean, as for every measure (``-m all_trec`` prints trec_eval's sum).

>>> from tiecore.measures import FAMILIES, Measure
>>> str(Measure.parse("num_ret")), FAMILIES["NumRet"].component
('NumRet', None)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import Doc, Family, Words, describe, each, register

if TYPE_CHECKING:
    from tiecore.engine.profiles import Profile


def num_ret_values(ranking: Ranking, depth: int | None) -> np.ndarray:
    """Per query (the judgments' order) ``min(retrieved, depth)``, as floats."""
    counts = ranking.counts.astype(np.float64)
    return counts if depth is None else np.minimum(counts, float(depth))


def family_values(measure, profile: Profile, ranking: Ranking, judgments: Judgments, depth=None):
    """``num_ret`` per query, in every mode."""
    return num_ret_values(ranking, depth)


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """``value`` = ``min`` = ``max`` = ``num_ret``, ``var`` 0."""
    value = num_ret_values(ranking, depth)
    return {"value": value, "var": np.zeros_like(value), "min": value, "max": value.copy()}


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)``: ``num_ret`` in every sampled ordering."""
    return np.tile(num_ret_values(ranking, depth), (samples, 1))


register(
    Family(
        "NumRet",
        "trec_eval's num_ret: docs retrieved (up to the depth); summed over queries by "
        "trec_eval's summary, averaged by tiecore's",
        ("num_ret",),
        "none",
        component=None,
        values=each(family_values),
        spread=each(family_spread),
        sample=each(family_sample),
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "NumRet",
    words=Words(
        whole=(
            "documents retrieved",
            "the number of documents retrieved for the query (trec_eval's num_ret)",
        ),
    ),
    docs=(
        Doc(
            "`NumRet`",
            "`num_ret`",
            "docs retrieved (up to `-M`); trec_eval's summary sums it over queries, tiecore's "
            "takes the mean (asked for by trec_eval's name, the command line prints trec_eval's "
            "sum)",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

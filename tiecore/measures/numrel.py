"""NumRel, trec_eval's ``num_rel``: the relevant docs of the query in the qrels.

It does not depend on the ranking at all (retrieved or not, whatever the depth), so
it is no head sum: its hooks give ``num_rel`` in every mode, with variance 0.
trec_eval's summary line sums it over the queries; tiecore's summary is the mean.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("num_rel")), FAMILIES["NumRel"].component
('NumRel', None)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import Doc, Family, Words, describe, each, register

if TYPE_CHECKING:
    from tiecore.engine.profiles import Profile


def num_rel_values(judgments: Judgments) -> np.ndarray:
    """Per query (the judgments' order) its relevant qrels docs, as floats."""
    return judgments.num_rel.astype(np.float64)


def family_values(measure, profile: Profile, ranking: Ranking, judgments: Judgments, depth=None):
    """``num_rel`` per query, in every mode."""
    return num_rel_values(judgments)


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """``value`` = ``min`` = ``max`` = ``num_rel``, ``var`` 0."""
    value = num_rel_values(judgments)
    return {"value": value, "var": np.zeros_like(value), "min": value, "max": value.copy()}


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)``: ``num_rel`` in every sampled ordering."""
    return np.tile(num_rel_values(judgments), (samples, 1))


register(
    Family(
        "NumRel",
        "trec_eval's num_rel: the relevant qrels docs of the query, retrieved or not; "
        "summed over queries by trec_eval's summary, averaged by tiecore's",
        ("num_rel",),
        "none",
        component=None,
        values=each(family_values),
        spread=each(family_spread),
        sample=each(family_sample),
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "NumRel",
    words=Words(
        whole=(
            "relevant documents",
            "the query's number of relevant documents in the judgments, retrieved or not "
            "(trec_eval's num_rel)",
        ),
    ),
    docs=(
        Doc(
            "`NumRel`",
            "`num_rel`",
            "relevant docs in the qrels, retrieved or not; trec_eval's summary sums it over "
            "queries, tiecore's takes the mean (asked for by trec_eval's name, the command line "
            "prints trec_eval's sum)",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

"""Success@k: 1 when a relevant doc is in the top ``k``, else 0.

trec_eval's ``success_k``.  It reads RR's ``first`` component unweighted (the first
relevant rank is at most ``k``); under ties a Bernoulli whose chance of a miss is
``C(n - r, d) / C(n, d)`` in the first group holding a relevant doc
(:func:`tiecore.measures.rr.miss_probability`).

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["Success"].component
'first'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.moments import Context
from tiecore.measures.registry import Doc, Family, Words, describe, ones, register
from tiecore.measures.rr import bounds_first, first_groups, miss_probability

if TYPE_CHECKING:
    from tiecore.engine.kernels import Plan


def var_success(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Bernoulli: ``q (1 - q)`` with ``q`` the chance of no relevant doc above the cut."""
    q = miss_probability(context, d)
    return np.where(first_groups(context), q * (1.0 - q), 0.0)


def success_distribution(context: Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bernoulli: a relevant doc above the cut or not."""
    hit = np.where(first_groups(context), 1.0 - miss_probability(context, d), 0.0).sum()
    return np.array([0.0, 1.0]), np.array([1.0 - hit, hit])


register(
    Family(
        "Success",
        "1 when a relevant doc is in the top k",
        (),
        "required",
        component="first",
        denominator=ones,
        variance=var_success,
        bounds=bounds_first,
        distribution=success_distribution,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "Success",
    words=Words(
        cut=(
            "success at {k}",
            "a query scores 1 when at least one relevant document is in the top {k}, else 0",
        ),
    ),
    docs=(
        Doc(
            "`Success@k`",
            "`success_k`",
            "1 when a relevant doc is in the top k",
            "trec_eval (pytrec_eval, its test outputs)",
        ),
    ),
)

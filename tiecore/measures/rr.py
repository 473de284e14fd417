"""RR, reciprocal rank: ``1 / rank`` of the first relevant doc (0 past k); MRR is its mean.

trec_eval's ``recip_rank``.  The per-rank component ``first_j`` flags the first
relevant rank; under ties the first relevant doc of the first group holding one
sits at 0-based position ``p`` with probability ``C(n-1-p, r-1) / C(n, r)``
(McSherry & Najork 2008), so RR's expectation, variance and whole distribution
come from that one group.  Success@k reads the same component
(:mod:`tiecore.measures.success`).

>>> from tiecore.measures import FAMILIES, lookup
>>> lookup("MRR").name, lookup("recip_rank").name
('RR', 'RR')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.moments import Context, expand, top_bottom
from tiecore.engine.profiles import (
    RANK,
    Component,
    Draws,
    cum_rel,
    register_component,
    segment_products,
)
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import Doc, Family, Words, describe, ones, register

if TYPE_CHECKING:
    from tiecore.engine.kernels import Plan


# ----------------------------------------------------------------- the component


def _first_oblivious(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    return (ranking.rel & (cum_rel(ranking) == 1)).astype(np.float64)


def _first_aware(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """P(first relevant doc at this position): only in the first group holding one.

    With ``n`` docs and ``r`` relevant ones in random order the first relevant
    one is at 0-based position ``p`` with probability ``C(n-1-p, r-1) / C(n, r)``,
    taken as the running product ``r/n * prod_{1<=i<=p} (n-r-i+1) / (n-i)`` down the
    group (:func:`~tiecore.engine.profiles.segment_products`): each factor is rounded
    once, so the error is a few ulp even in groups of 10^5 docs, where a difference
    of ``log k!`` of about 10^6 would lose 10^-10.
    """
    g = ranking.group
    n, r = ranking.size[g], ranking.rel_count[g]
    p = ranking.position
    live = (ranking.rel_before[g] == 0) & (r > 0) & (p <= n - r)
    out = np.zeros(len(g))
    n, r, p = n[live], r[live], p[live]
    with np.errstate(divide="ignore", invalid="ignore"):  # p = 0 rows take r/n
        factor = np.where(p == 0, r / n, (n - r - p + 1) / (n - p))
    out[live] = segment_products(factor, np.flatnonzero(p == 0))
    return out


def _first_sampled(draws: Draws) -> np.ndarray:
    return (draws.ranking.rel[draws.doc] & (draws.cum_rel == 1)).astype(np.float64)


FIRST_COMPONENT = register_component(
    Component("first", _first_oblivious, _first_aware, _first_sampled)
)


# ------------------------------------------------ first groups, variance, bounds


def first_groups(context: Context) -> np.ndarray:
    """Per query, the group holding its first relevant doc (boolean per group)."""
    return (context.R == 0) & (context.r > 0)


def miss_probability(context: Context, d: np.ndarray) -> np.ndarray:
    """P(no relevant doc in the first ``d`` slots) of first groups, 0 elsewhere.

    ``C(n - r, d) / C(n, d)``; 1 when ``d = 0``, 0 when ``d > n - r``.  Taken as the
    running product ``prod_{i<d} (n-r-i) / (n-i)``, each factor rounded once: a
    difference of ``log k!`` loses 10^-11 already at ``n = 2000``.
    """
    n, r = context.n, context.r
    live = np.flatnonzero(first_groups(context) & (d > 0) & (d <= n - r))
    out = np.where(first_groups(context) & (d == 0), 1.0, 0.0)
    length = d[live].astype(np.int64)
    owner, i = expand(np.zeros(live.size, np.int64), length)
    factor = (n - r)[live][owner] - i
    factor = factor / (n[live][owner] - i)
    ends = np.cumsum(length)
    out[live] = segment_products(factor, ends - length)[ends - 1]
    return out


def var_rr(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """``E[W^2] - E[W]^2``, ``W = 1/rank`` of the first relevant doc (0 past the cut).

    The first relevant doc sits at position ``p`` with the aware profile's
    probability ``C(n-1-p, r-1) / C(n, r)``; only the first group can move it.
    """
    first = first_groups(context) & (context.r < context.n)
    reach = np.where(first, np.minimum(d, context.n - context.r + 1), 0)
    owner, rows = expand(context.group_start, reach)
    w = 1.0 / context.ranking.rank[rows]
    chance = context.profile.component("first")[rows]
    size = len(context.n)
    mean = np.bincount(owner, weights=chance * w, minlength=size)
    square = np.bincount(owner, weights=chance * w * w, minlength=size)
    return np.where(first, square - mean * mean, 0.0)


def bounds_first(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """The first relevant doc at the group's first slot, or after its ``n - r`` others."""
    t, gap = context.t, context.n - context.r
    top, bottom = top_bottom(context, d)
    lead = (context.r > 0) & (context.R == 0)
    best = recipe.divisor.weigh((lead & (top > 0)) * 1.0, t + 1.0)
    worst = recipe.divisor.weigh((lead & (bottom > 0)) * 1.0, t + gap + 1.0)
    return worst, best


def first_rank_distribution(context: Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``1/rank`` of the first relevant doc (0 when past the cut or never)."""
    first = np.flatnonzero(first_groups(context))
    if first.size == 0:
        return np.zeros(1), np.ones(1)
    (g,) = first
    rows = context.group_start[g] + np.arange(context.n[g] - context.r[g] + 1)
    rank = context.ranking.rank[rows]
    values = np.where(rank <= context.t[g] + d[g], 1.0 / rank, 0.0)
    return values, context.profile.component("first")[rows]


register(
    Family(
        "RR",
        "1 / rank of the first relevant doc (0 past k); MRR is its mean",
        ("mrr", "recip_rank"),
        component="first",
        divisor=RANK,
        denominator=ones,
        variance=var_rr,
        bounds=bounds_first,
        distribution=first_rank_distribution,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "RR",
    words=Words(
        cut=(
            "reciprocal rank within the top {k}",
            "1 / the rank of the first relevant document (1 when it is first, 1/2 when second, "
            "...), or 0 when none is in the top {k}",
        ),
        whole=(
            "reciprocal rank",
            "1 / the rank of the first relevant document (1 when it is first, 1/2 when second, "
            "...), or 0 when none is retrieved; its mean over queries is MRR",
        ),
    ),
    docs=(
        Doc(
            "`RR`, `RR@k`",
            "`recip_rank`, `MRR`",
            "1 / rank of the first relevant doc, 0 when it is past k; MRR is its mean over queries",
            "trec_eval (pytrec_eval, its test outputs)",
        ),
    ),
)

"""AP, average precision: the precision at each relevant rank, summed, / ``num_rel``.

``AP@k = sum_{relevant rank j <= k} P@j / num_rel`` (trec_eval's ``map`` and
``map_cut_k``); with ``denom=min`` divided by ``min(k, num_rel)`` instead (the seed
notes' MAP@k).  Per rank the component is ``ap_j = rel_j * (relevant in 1..j)``
weighted by ``1/j``.  Under ties (McSherry & Najork 2008, per position) its
expectation at 0-based position ``p`` of a group of ``n`` docs, ``r`` relevant, after
``R`` relevant docs is ``r/n (R + 1 + p (r-1)/(n-1))``; its variance is a quadratic
form in the relevance flags (:func:`var_ap`).

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["AP"].component, lookup("map_cut").name
('ap', 'AP')
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.moments import Context, group_sum, top_bottom
from tiecore.engine.profiles import RANK, Component, Draws, cum_rel, register_component
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import Doc, Family, Param, Words, describe, num_rel, register

if TYPE_CHECKING:
    from tiecore.engine.kernels import Plan


# ----------------------------------------------------------------- the component


def _ap_oblivious(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    return ranking.rel * cum_rel(ranking).astype(np.float64)


def _ap_aware(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """``r/n (R + 1 + p (r-1)/(n-1))`` per row; 0 in groups without a relevant doc, so
    where those hold most rows (a run with few ties) only the other groups' rows are
    computed, by the same expression."""
    live = np.flatnonzero(ranking.rel_count > 0)
    size = ranking.size[live]
    if 2 * int(size.sum()) > len(ranking.group):  # mostly live (tie-heavy): every row
        live = rows = slice(None)
        size = ranking.size
        g, p = ranking.group, ranking.position
    else:  # each live group's rows, and each row's 0-based position in its group
        start = ranking.group_start[live]
        rows = np.repeat(start - np.cumsum(size) + size, size)
        rows += np.arange(len(rows))
        g = np.repeat(np.arange(len(size)), size)
        p = rows - start[g]
    n = size.astype(np.float64)
    r = ranking.rel_count[live].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        pair = np.where(n > 1, (r - 1) / (n - 1), 0.0)
    values = (r / n)[g] * (ranking.rel_before[live][g] + 1 + p * pair[g])
    if isinstance(rows, slice):
        return values
    out = np.zeros(len(ranking.group))
    out[rows] = values
    return out


def _ap_sampled(draws: Draws) -> np.ndarray:
    return draws.ranking.rel[draws.doc] * draws.cum_rel.astype(np.float64)


AP_COMPONENT = register_component(Component("ap", _ap_oblivious, _ap_aware, _ap_sampled))


# ------------------------------------------------------------- variance, bounds


def _falling_ratios(r: np.ndarray, n: np.ndarray, k: int) -> list[np.ndarray]:
    """``r (r-1) ... (r-j+1) / (n (n-1) ... (n-j+1))`` for ``j = 1..k``: P(``j`` given
    slots all relevant)."""
    top = np.ones(len(r))
    bottom = np.ones(len(r))
    out = []
    for j in range(k):
        top *= np.maximum(r - j, 0)
        bottom *= np.maximum(n - j, 1)
        out.append(np.where(n >= j + 1, top / bottom, 0.0))
    return out


def var_ap(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Variance of the AP head sum ``S = (R+1) sum_i w_i x_i + sum_{j<i} w_i x_i x_j``.

    With ``w_i = 1/rank`` above the cut (0 below), ``T = sum_i i w_i``,
    ``V_m = m w_m + sum_{i>m} w_i`` (the weight of the pairs holding ``m``) and
    ``mu_k`` the falling-factorial ratios, the first two moments of ``S`` are
    ``E S = (R+1) mu_1 sum w + mu_2 T`` and ``E S^2 = E A^2 + 2 E AB + E B^2``:
    ``E A^2 = (R+1)^2 (mu_1 sum w^2 + mu_2 ((sum w)^2 - sum w^2))``,
    ``E AB = (R+1) (mu_3 T sum w + (mu_2 - mu_3) (sum i w^2 + ((sum w)^2 - sum w^2)/2))``,
    ``E B^2 = mu_4 T^2 + (mu_3 - mu_4) (sum V^2 - sum i w^2) + (mu_2 - mu_3) sum i w^2``
    (pairs of pairs sharing 0, 1 or 2 positions).
    """
    n, r = context.n.astype(np.float64), context.r.astype(np.float64)
    live = np.where((context.r > 0) & (context.r < context.n), d, 0)
    sums, part = context.whole_sums(live, ("ap sums",), lambda: _ap_sums(context))
    head = context.head(part)  # the groups the cut falls inside (or all, when few)
    rank = context.ranking.rank[head.rows]
    cut = (context.t + d)[head.owner]
    sums = sums + _ap_sums(context, head.rows, rank, cut, head.sum)
    sum_w, sum_w2, big_t, sum_iw2, sum_v2 = sums
    mu1, mu2, mu3, mu4 = _falling_ratios(r, n, 4)
    c = context.R + 1.0
    pairs = sum_w * sum_w - sum_w2
    e_a2 = c * c * (mu1 * sum_w2 + mu2 * pairs)
    e_ab = c * (mu3 * big_t * sum_w + (mu2 - mu3) * (sum_iw2 + pairs / 2))
    e_b2 = mu4 * big_t * big_t + (mu3 - mu4) * (sum_v2 - sum_iw2) + (mu2 - mu3) * sum_iw2
    mean = c * mu1 * sum_w + mu2 * big_t
    return e_a2 + 2 * e_ab + e_b2 - mean * mean


def _ap_sums(context: Context, rows=None, rank=None, cut=None, total=None) -> np.ndarray:
    """``sum w, sum w^2, T = sum i w, sum i w^2, sum V^2`` (:func:`var_ap`) per group,
    over ``rows`` (summed by ``total``) whose groups end at rank ``cut``; by default
    over every row of the ranking, each group whole."""
    ranking = context.ranking
    if rows is None:
        rows, rank = slice(None), ranking.rank
        cut = (ranking.offset + ranking.size)[ranking.group]
        total = partial(group_sum, ranking=ranking)
    i = context.position[rows].astype(np.float64)
    w = 1.0 / rank
    iw = i * w
    harmonic = context.prefix(RANK)
    v = iw + harmonic[cut] - harmonic[rank]  # + sum_{i>m} w_i
    return np.stack([total(x) for x in (w, w * w, iw, iw * w, v * v)])


def bounds_ap(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """``sum_{i<k} (R + 1 + i) / (t + 1 + i) = k + (R - t) (P(t + k) - P(t))``."""
    t, big_r, gap = context.t, context.R, context.n - context.r
    top, bottom = top_bottom(context, d)
    harmonic = context.prefix(RANK)
    best = top + (big_r - t) * (harmonic[t + top] - harmonic[t])
    worst = bottom + (big_r - gap - t) * (harmonic[t + d] - harmonic[t + d - bottom])
    return worst * 1.0, best * 1.0


def ap_denominator(measure, judgments, ranking, cut) -> np.ndarray:
    """``num_rel`` (trec_eval, the seed notes), or ``min(k, num_rel)`` with ``denom=min``."""
    if measure.param("denom") == "min" and measure.cutoff is not None:
        return np.minimum(judgments.num_rel, measure.cutoff).astype(np.float64)
    return num_rel(measure, judgments, ranking, cut)


#: AP's and GMAP's ``denom`` parameter.
DENOM = Param(
    "num_rel",
    ("num_rel", "min"),
    description="num_rel: trec_eval's map_cut; min: min(k, num_rel), the seed notes' MAP@k",
)

register(
    Family(
        "AP",
        "sum of P@j over relevant ranks j <= k, / num_rel (trec_eval's map, map_cut; "
        "the seed notes' MAP@k); denom=min divides by min(k, num_rel)",
        ("map", "map_cut"),
        params={"denom": DENOM},
        component="ap",
        divisor=RANK,
        denominator=ap_denominator,
        variance=var_ap,
        bounds=bounds_ap,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "AP",
    words=Words(
        cut=(
            "average precision over the top {k}",
            "the precision at the rank of each relevant document in the top {k}, summed and "
            "divided by the query's number of relevant documents (a relevant document below rank "
            "{k} adds 0)",
        ),
        whole=(
            "average precision",
            "the precision at the rank of each relevant document, summed and divided by the "
            "query's number of relevant documents (one not retrieved adds 0); its mean over "
            "queries is MAP",
        ),
        extra=(
            (
                "denom",
                "min",
                "; here divided by the smaller of {k} and the query's number of relevant "
                "documents instead",
            ),
        ),
    ),
    docs=(
        Doc(
            "`AP`, `AP@k`",
            "`map`, `map_cut_k`, `MAP@k`",
            "Σ P@j over the relevant ranks j ≤ k, / num_rel",
            "trec_eval (pytrec_eval, its test outputs)",
        ),
        Doc(
            "`AP(denom=min)@k`",
            "",
            "the same sum / min(k, num_rel), as recommender libraries define MAP@k",
            "–",
        ),
    ),
)

"""Bpref (Buckley & Voorhees 2004), as trec_eval computes it.

``Bpref = sum_{relevant retrieved u} (1 - min(N_u, R) / min(N, R)) / R`` with ``R``
relevant and ``N`` judged non-relevant qrels docs and ``N_u`` the judged
non-relevant docs ranked above ``u`` (a term is 1 when ``N = 0``).  Under ties a
relevant doc of a group with ``m`` judged non-relevant docs is preceded by ``b`` of
them, ``b`` uniform on ``0..m``: the aware term and the variance are sums over ``b``
(:func:`var_bpref`); in a group the depth cuts, hypergeometric ones.

>>> from tiecore.measures import FAMILIES, lookup
>>> FAMILIES["Bpref"].component, FAMILIES["Bpref"].cutoff
('bpref', 'none')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.moments import Context, expand, top_bottom
from tiecore.engine.profiles import Component, Draws, register_component, running_count
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import Doc, Family, Words, describe, num_rel, register

if TYPE_CHECKING:
    from tiecore.engine.kernels import Plan


# -------------------------------------------------------------------- the term


def bpref_denominator(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    """Per-query ``min(N, R)``; ``R`` relevant and ``N`` judged non-relevant qrels docs."""
    return np.minimum(judgments.num_nonrel, judgments.num_rel).astype(np.float64)


def bpref_term(nonrel_above: np.ndarray, num_rel: np.ndarray, denominator: np.ndarray):
    """trec_eval's Bpref term of a relevant doc: ``1 - min(N_j, R) / min(N, R)``.

    ``N_j`` judged non-relevant docs above it, ``R`` relevant and ``N`` judged
    non-relevant docs of the query; 1 when ``N = 0`` (then ``N_j = 0`` too).
    """
    return 1.0 - np.minimum(nonrel_above, num_rel) / np.maximum(denominator, 1.0)


def _caps(context: Context) -> tuple[np.ndarray, np.ndarray]:
    """Per group of ``context`` the query's ``R`` and ``max(min(N, R), 1)``: the cap and
    the scale of ``f(y) = 1 - min(y, cap) / scale``."""
    q = context.group_query
    judgments = context.judgments
    scale = np.maximum(np.minimum(judgments.num_nonrel, judgments.num_rel), 1).astype(np.float64)
    return judgments.num_rel[q], scale[q]


# ----------------------------------------------------------------- the component


def _bpref_oblivious(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    before_query = ranking.starts[ranking.query]
    nonrel_above = running_count(ranking.nonrel, before_query) - ranking.nonrel
    q = ranking.query
    term = bpref_term(nonrel_above, judgments.num_rel[q], bpref_denominator(ranking, judgments)[q])
    return np.where(ranking.rel, term, 0.0)


def sum_min(y: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``sum_{x=0}^{y} min(x, cap)`` in closed form (0 for ``y < 0``)."""
    y = y.astype(np.float64)
    low = np.minimum(y, cap)
    return np.where(y < 0, 0.0, low * (low + 1) / 2 + np.maximum(y - cap, 0) * cap)


def _aware_bpref(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """Expected Bpref term per position.

    A relevant doc of a group with ``m`` judged non-relevant docs is preceded by
    ``b`` of them, ``b`` uniform on ``0..m``; so the group adds
    ``r (1 - sum_b min(N_g + b, R) / ((m+1) min(N, R)))`` spread evenly over
    its ``n`` positions.  A group cut by ``depth`` needs the term at each
    position ``p``: ``b`` is then hypergeometric (``p`` draws from ``n - 1``).
    """
    live = np.flatnonzero(ranking.rel_count > 0)  # the other groups add 0
    q = ranking.query[ranking.group_start[live]]
    num_rel = judgments.num_rel[q].astype(np.float64)
    denom = np.minimum(judgments.num_nonrel[q], judgments.num_rel[q]).astype(np.float64)
    a, m = ranking.nonrel_before[live], ranking.nonrel_count[live]
    mean_min = (sum_min(a + m, num_rel) - sum_min(a - 1, num_rel)) / (m + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(denom > 0, 1.0 - mean_min / denom, 1.0)
    per_group = np.zeros(len(ranking.group_start))
    per_group[live] = ranking.rel_count[live] * term / ranking.size[live]
    per_row = per_group[ranking.group]
    if depth is not None:
        cut = (
            (ranking.offset < depth)
            & (ranking.offset + ranking.size > depth)
            & (ranking.rel_count > 0)
        )
        rows = np.flatnonzero(cut[ranking.group] & (ranking.rank <= depth))
        if rows.size:
            per_row[rows] = _bpref_at_position(ranking, judgments, rows)
    return per_row


def _bpref_at_position(ranking: Ranking, judgments: Judgments, rows: np.ndarray) -> np.ndarray:
    """Expected Bpref term at given positions: ``r/n (1 - E[min(N_g + X, R)] / min(N, R))``.

    ``X ~ Hypergeom(n - 1, m, p)`` counts the judged non-relevant docs of the
    group ahead of a relevant doc at 0-based position ``p``.
    """
    g = ranking.group[rows]
    q = ranking.query[rows]
    n, m, r = ranking.size[g], ranking.nonrel_count[g], ranking.rel_count[g]
    a, p = ranking.nonrel_before[g], ranking.position[rows]
    cap = judgments.num_rel[q]
    denom = np.minimum(judgments.num_nonrel[q], cap).astype(np.float64)
    support = np.minimum(p, m)
    # E[min(a + X, cap)] = a + E[X] - E[(a + X - cap)+]; the last part only where a + X can pass cap
    expected = a + np.where(n > 1, p * m / np.maximum(n - 1, 1), 0.0)
    over = np.flatnonzero(a + support > cap)
    if over.size:
        from scipy import stats  # only here: importing scipy.stats takes seconds

        width = support[over] + 1
        owner = np.repeat(over, width)
        x = np.arange(width.sum()) - np.repeat(np.cumsum(width) - width, width)
        pmf = stats.hypergeom.pmf(x, n[owner] - 1, m[owner], p[owner])
        excess = np.maximum(a[owner] + x - cap[owner], 0) * pmf
        expected[over] -= np.bincount(
            np.searchsorted(over, owner), weights=excess, minlength=over.size
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(denom > 0, 1.0 - expected / denom, 1.0)
    return r / n * term


def _bpref_sampled(draws: Draws) -> np.ndarray:
    q = draws.query
    judgments = draws.judgments
    denominator = bpref_denominator(draws.ranking, judgments)[q]
    term = bpref_term(draws.nonrel_above, judgments.num_rel[q], denominator)
    return np.where(draws.ranking.rel[draws.doc], term, 0.0)


BPREF_COMPONENT = register_component(
    Component("bpref", _bpref_oblivious, _aware_bpref, _bpref_sampled)
)


# ------------------------------------------------------------- variance, bounds


def _sum_min_sq(y: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``sum_{z=0}^{y} min(z, cap)**2`` (0 for ``y < 0``)."""
    low = np.clip(y, 0, cap).astype(np.float64)
    tail = np.maximum(y - cap, 0) * cap.astype(np.float64) ** 2
    return np.where(y < 0, 0.0, low * (low + 1) * (2 * low + 1) / 6 + tail)


def _bpref_moments(k1, k2, ell, a, cap, scale) -> tuple[np.ndarray, np.ndarray]:
    """``E[S | L]`` and ``E[S^2 | L]`` of a group's Bpref terms.

    ``k1 = E[K | L]``, ``k2 = E[K (K-1) | L]`` for ``K`` relevant and ``L = ell``
    judged non-relevant docs above the cut, after ``a`` judged non-relevant
    docs above the group.  With ``F1 = sum_{x=0}^{L} f(a + x)`` and ``F2`` the
    same of ``f^2``: ``E[S | K, L] = K F1 / (L + 1)`` and
    ``E[S^2 | K, L] = K F2 / (L + 1) + K (K - 1) (F1^2 + F2) / ((L + 1)(L + 2))``.
    """
    mins = sum_min(a + ell, cap) - sum_min(a - 1, cap)
    squares = _sum_min_sq(a + ell, cap) - _sum_min_sq(a - 1, cap)
    count = ell + 1.0
    f1 = count - mins / scale
    f2 = count - 2 * mins / scale + squares / (scale * scale)
    mean = k1 * f1 / count
    second = k1 * f2 / count + k2 * (f1 * f1 + f2) / (count * (count + 1))
    return mean, second


def var_bpref(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Variance of a group's Bpref terms; see :func:`_bpref_moments`.

    Whole groups above the cut have ``K = r`` and ``L = m``.  In the group the
    depth cuts, ``L ~ Hypergeom(n, m, d)`` and ``K | L ~ Hypergeom(n - m, r, d - L)``:
    one term per possible ``L``.
    """
    n, r, m = context.n, context.r, context.m
    cap, scale = _caps(context)
    whole = (d == n) & (r > 0) & (r < n) & (m > 0)
    out = np.zeros(len(n))
    mean, second = _bpref_moments(
        r[whole], r[whole] * (r[whole] - 1.0), m[whole],
        context.A[whole], cap[whole], scale[whole],
    )  # fmt: skip
    out[whole] = second - mean * mean
    cut = np.flatnonzero((d > 0) & (d < n) & (r > 0))
    if cut.size == 0:
        return out
    low = np.maximum(0, d[cut] - (n[cut] - m[cut]))
    high = np.minimum(d[cut], m[cut])
    owner, ell = expand(low, high - low + 1)
    g = cut[owner]
    chance = context.hypergeom_pmf(ell, n[g], m[g], d[g])
    rest, draws = (n[g] - m[g]).astype(np.float64), (d[g] - ell).astype(np.float64)
    rg = r[g].astype(np.float64)
    k1 = draws * rg / rest
    k2 = np.zeros_like(k1)
    np.divide(draws * (draws - 1) * rg * (rg - 1), rest * (rest - 1), out=k2, where=rest > 1)
    mean, second = _bpref_moments(k1, k2, ell, context.A[g], cap[g], scale[g])
    mean = np.bincount(owner, weights=chance * mean, minlength=cut.size)
    second = np.bincount(owner, weights=chance * second, minlength=cut.size)
    out[cut] = second - mean * mean
    return out


def bounds_bpref(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """Relevant docs above (best) or below (worst) the group's judged non-relevant ones."""
    top, bottom = top_bottom(context, d)
    cap, scale = _caps(context)
    best = top * bpref_term(context.A, cap, scale)
    worst = bottom * bpref_term(context.A + context.m, cap, scale)
    return worst * 1.0, best * 1.0


register(
    Family(
        "Bpref",
        "trec_eval's: sum over relevant retrieved of 1 - min(N_j, R) / min(N, R), / R",
        (),
        "none",
        component="bpref",
        denominator=num_rel,
        variance=var_bpref,
        bounds=bounds_bpref,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "Bpref",
    words=Words(
        whole=(
            "binary preference",
            "for each relevant document retrieved, 1 minus the share of judged non-relevant "
            "documents ranked above it (at most R of them count, R = the query's number of "
            "relevant documents), summed and divided by R; documents without a judgment are "
            "skipped",
        ),
    ),
    docs=(
        Doc(
            "`Bpref`",
            "`bpref`",
            "Σ over the relevant retrieved docs of 1 − min(N_j, R) / min(N, R), / R (N_j judged "
            "non-relevant docs above it)",
            "trec_eval (pytrec_eval, its test outputs)",
        ),
    ),
)

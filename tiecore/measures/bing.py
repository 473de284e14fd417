"""BinG, trec_eval's ``binG``: relevant docs discounted by the non-relevant docs above them.

``binG = sum_{relevant retrieved} 1 / log2(2 + y) / R``, ``y`` the docs above it that
are not relevant (judged or not), ``R`` the relevant docs (trec_eval's ``m_binG.c``; 0
when no relevant doc is retrieved).  With gains 0 and 1, trec_eval's G is binG.

Under ties a relevant doc's term depends on the count above it only, which inside a
tie group is uniform (hypergeometric where the depth cuts the group): its exact mean,
variance and bounds are :func:`bin_g_spread`'s, as Bpref's.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("binG"))
'BinG'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.gains import _rows, register_gain_family
from tiecore.measures.orderings import segment_cumsum, segment_last
from tiecore.measures.registry import Doc, Words, describe


def bin_g(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """Per query trec_eval's binG of the ranking's own order."""
    keep, starts, counts = _rows(ranking, depth)
    nq = len(counts)
    rel = ranking.rel[keep]
    index = np.arange(keep.size) - np.repeat(starts, counts)
    rel_so_far = segment_cumsum(rel.astype(np.float64), starts)
    term = np.where(rel, 1.0 / np.log2(3.0 + index - rel_so_far), 0.0)
    total = segment_last(segment_cumsum(term, starts), starts, nq, np.arange(nq))
    found = segment_last(rel_so_far, starts, nq, np.arange(nq)) > 0
    num_rel = judgments.num_rel.astype(np.float64)
    return np.where(found, total / np.maximum(num_rel, 1.0), 0.0)


def bin_g_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """binG's exact ``value, var, min, max`` over the orderings.

    A relevant doc adds ``f(y) = 1 / log2(2 + y)``, ``y`` the docs above it that are not
    relevant.  In a tie group of ``n`` docs, ``r`` relevant and ``m = n - r`` not, after
    ``a`` docs that are not relevant, with ``d`` of its slots retrieved (the depth), let
    ``L`` of the ``m`` fall in those slots (``L ~ Hypergeom(n, m, d)``; ``L = m`` when the
    whole group is retrieved) and ``K = d - L`` relevant docs with them, in a uniform order:
    each relevant doc sees ``a + U`` above, ``U`` uniform on ``0..L``, two of them a pair
    of such draws, so with ``F1 = sum_{u <= L} f(a + u)`` and ``F2`` the same of ``f^2``
    (as Bpref's terms, :func:`tiecore.measures.bpref._bpref_moments`)

        E[S | L] = K F1 / (L + 1),
        E[S^2 | L] = K F2 / (L + 1) + K (K - 1) (F1^2 + F2) / ((L + 1)(L + 2)).

    Groups are shuffled independently: the query's mean and variance sum over them, /
    ``num_rel`` (and its square).  The maximum puts the relevant docs first (``min(r, d)``
    of them at ``f(a)``), the minimum last (``max(0, d - m)`` at ``f(a + min(m, d))``).
    """
    nq = len(ranking.counts)
    n, r = ranking.size, ranking.rel_count
    m = n - r
    a = ranking.offset - ranking.rel_before
    d = n if depth is None else np.clip(depth - ranking.offset, 0, n)
    top = int(ranking.counts.max(initial=0)) + 2
    f = 1.0 / np.log2(2.0 + np.arange(top))
    p1, p2 = np.r_[0.0, np.cumsum(f)], np.r_[0.0, np.cumsum(f * f)]
    live = np.flatnonzero((r > 0) & (d > 0))
    low = np.maximum(0, d - r)[live]  # the least L: the slots the relevant docs leave
    high = np.minimum(m, d)[live]
    width = high - low + 1
    owner = np.repeat(np.arange(live.size), width)
    ell = np.arange(owner.size) - np.repeat(np.cumsum(width) - width, width) + low[owner]
    g = live[owner]
    whole = d[g] == n[g]
    chance = np.ones(owner.size)
    if not whole.all():
        from scipy import stats  # only here: importing scipy.stats takes seconds

        cut = ~whole
        chance[cut] = stats.hypergeom.pmf(ell[cut], n[g][cut], m[g][cut], d[g][cut])
    k = (d[g] - ell).astype(np.float64)
    f1 = p1[a[g] + ell + 1] - p1[a[g]]
    f2 = p2[a[g] + ell + 1] - p2[a[g]]
    count = ell + 1.0
    first = k * f1 / count
    second = k * f2 / count + k * (k - 1) * (f1 * f1 + f2) / (count * (count + 1))
    mean = np.bincount(owner, weights=chance * first, minlength=live.size)
    square = np.bincount(owner, weights=chance * second, minlength=live.size)
    var = np.maximum(square - mean * mean, 0.0)
    best = np.minimum(r, d)[live] * f[a[live]]
    fixed = m[live] == 0  # relevant docs only: their terms are f(a) each, no variance
    mean[fixed], var[fixed] = best[fixed], 0.0
    worst = np.maximum(0, d - m)[live] * f[np.minimum(a[live] + high, top - 1)]
    q = ranking.group_query[live]
    scale = 1.0 / np.maximum(judgments.num_rel, 1).astype(np.float64)
    total = {
        name: np.bincount(q, weights=values, minlength=nq)
        for name, values in (("value", mean), ("var", var), ("min", worst), ("max", best))
    }
    return {
        "value": total["value"] * scale,
        "var": total["var"] * scale * scale,
        "min": total["min"] * scale,
        "max": total["max"] * scale,
    }


register_gain_family(
    "BinG",
    "bing",
    "trec_eval's binG: sum over relevant retrieved of 1 / log2(2 + non-relevant docs "
    "above), / num_rel",
    {},
    lambda ranking, judgments, gains, depth: bin_g(ranking, judgments, depth),
    spread=bin_g_spread,
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "BinG",
    words=Words(
        whole=(
            "binary G",
            "for each relevant document retrieved, 1 / log2(2 + the documents above it that are "
            "not relevant), summed and divided by the query's number of relevant documents "
            "(trec_eval's binG)",
        ),
    ),
    docs=(
        Doc(
            "`BinG`",
            "`binG`",
            "Σ over the relevant retrieved docs of 1 / log2(2 + the docs above it that are not "
            "relevant), / num_rel (trec_eval's binG). Under ties each relevant doc of a group "
            "sees a uniform number of the group's other docs above it, hypergeometric where the "
            "depth cuts the group: exact mean, variance and bounds as Bpref's "
            "(`tiecore/measures/bing.py`)",
            "trec_eval 9.0.8",
        ),
    ),
)

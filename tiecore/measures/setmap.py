"""SetMAP, trec_eval's ``set_map``: ``RR^2 / (NR R)``, set precision times set recall.

``RR`` relevant retrieved, ``NR`` retrieved (both up to the depth, ``-M``), ``R``
relevant; 0 when ``NR`` or ``R`` is 0.  trec_eval calls it the unranked average
precision (each relevant doc retrieved at the set's precision, the others at 0).

Under ties only the depth can move it: inside the one tie group it cuts (``n`` docs,
``r`` relevant, ``d`` above the depth), ``X`` of the relevant docs fall above it,
``X ~ Hypergeom(n, r, d)``, and ``RR = a + X`` with ``a`` the relevant docs above
the group.  The value is ``c RR^2`` (``c = 1 / (NR R)`` fixed), so its mean over the
orderings is ``c E[RR^2]``, its variance ``c^2 (E[RR^4] - E[RR^2]^2)`` (sums over the
support of ``X``), and it grows with ``RR``: its minimum and maximum are at the least
and most relevant docs the cut can hold, ``a + max(0, d - (n - r))`` and
``a + min(r, d)``.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("set_map"))
'SetMAP'
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.moments import expand
from tiecore.engine.ranking import Ranking
from tiecore.measures.orderings import retrieved, sample_orders
from tiecore.measures.registry import Family, register


def _counts(ranking: Ranking, depth: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per query ``(RR, NR)`` of the ranking's own order, up to the depth."""
    nq = len(ranking.counts)
    keep = retrieved(ranking, depth)
    rr = np.bincount(ranking.query[keep & ranking.rel], minlength=nq)
    nr = np.bincount(ranking.query[keep], minlength=nq)
    return rr.astype(np.float64), nr.astype(np.float64)


def _scale(judgments: Judgments, nr: np.ndarray) -> np.ndarray:
    """``1 / (NR R)``, 0 where either is 0."""
    product = nr * judgments.num_rel
    return np.divide(1.0, product, out=np.zeros_like(nr), where=product > 0)


def set_map_oblivious(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """Per query ``RR^2 / (NR R)`` of the ranking's own order (trec_eval's product order)."""
    rr, nr = _counts(ranking, depth)
    product = nr * judgments.num_rel
    return np.divide(rr * rr, product, out=np.zeros_like(rr), where=product > 0)


def _cut_groups(ranking: Ranking, depth: int | None):
    """Per query ``a`` (relevant docs of the groups wholly above the depth) and, where
    the depth cuts a group, that group's ``n, r, d``."""
    nq = len(ranking.counts)
    end = ranking.offset + ranking.size
    whole = np.ones(len(end), bool) if depth is None else end <= depth
    q = ranking.group_query
    a = np.bincount(q[whole], weights=ranking.rel_count[whole], minlength=nq).astype(np.int64)
    n = np.zeros(nq, np.int64)
    r = np.zeros(nq, np.int64)
    d = np.zeros(nq, np.int64)
    if depth is not None:
        cut = np.flatnonzero((ranking.offset < depth) & (end > depth))
        n[q[cut]] = ranking.size[cut]
        r[q[cut]] = ranking.rel_count[cut]
        d[q[cut]] = depth - ranking.offset[cut]
    return a, n, r, d


def _moments(ranking: Ranking, judgments: Judgments, depth: int | None):
    """Per query ``E[RR^2]``, ``E[RR^4]`` over the orderings and the least and most ``RR``."""
    a, n, r, d = _cut_groups(ranking, depth)
    low = a + np.maximum(0, d - (n - r))
    high = a + np.minimum(r, d)
    second, fourth = low.astype(np.float64) ** 2, low.astype(np.float64) ** 4  # fixed RR
    live = np.flatnonzero(high > low)
    if live.size:
        from scipy import stats  # only here: importing scipy.stats takes seconds

        lo = (low - a)[live]
        owner, x = expand(lo, (high - low)[live] + 1)
        chance = stats.hypergeom.pmf(x, n[live][owner], r[live][owner], d[live][owner])
        value = (a[live][owner] + x).astype(np.float64)
        second[live] = np.bincount(owner, weights=chance * value**2, minlength=live.size)
        fourth[live] = np.bincount(owner, weights=chance * value**4, minlength=live.size)
    return second, fourth, low.astype(np.float64), high.astype(np.float64)


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query SetMAP, in the profile's mode."""
    if profile.mode == "aware":
        _, nr = _counts(ranking, depth)
        return _scale(judgments, nr) * _moments(ranking, judgments, depth)[0]
    return set_map_oblivious(ranking, judgments, depth)


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Per-query ``value, var, min, max`` over the orderings (exact)."""
    _, nr = _counts(ranking, depth)
    c = _scale(judgments, nr)
    second, fourth, low, high = _moments(ranking, judgments, depth)
    return {
        "value": c * second,
        "var": np.maximum(c * c * (fourth - second * second), 0.0),
        "min": c * low * low,
        "max": c * high * high,
    }


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` SetMAP under random tie-breaks."""
    return sample_orders(
        lambda order: set_map_oblivious(order, judgments, depth),
        ranking,
        judgments,
        samples=samples,
        rng=rng,
        depth=depth,
    )


register(
    Family(
        "SetMAP",
        "trec_eval's set_map: relevant retrieved^2 / (retrieved num_rel), up to the depth",
        ("set_map",),
        "none",
        component=None,
        values=family_values,
        spread=family_spread,
        sample=family_sample,
    )
)

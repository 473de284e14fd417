"""SetAP, trec_eval's ``set_map``: SetP times SetR, the unranked AP of the retrieved set.

``SetAP = num_rel_ret^2 / (num_ret num_rel)`` over the whole retrieved set (cut at the
depth, trec_eval's ``-M``); a query with nothing retrieved or nothing relevant scores
0, as in trec_eval (ir_measures' ``SetAP``).  It is no head sum (a square of one), so
its hooks give its values directly: the count ``N = num_rel_ret`` moves under ties only
when the depth cuts a tie group, where ``N = f + X`` with ``f`` the relevant docs of the
groups above the cut and ``X`` hypergeometric (``d`` of the group's ``n`` slots above
the cut, ``r`` of its docs relevant).  From ``X``'s factorial moments
``E[X (X - 1) ... (X - k + 1)] = d_(k) r_(k) / n_(k)`` (falling factorials):

    E[N^2]   = f^2 + 2 f E[X] + E[X^2]
    Var[N^2] = Var[X^2] + 4 f Cov[X^2, X] + 4 f^2 Var[X]

(``X``'s raw moments only, small numbers: no cancellation of large ones), divided by
``num_ret num_rel`` (squared for the variance).  ``N^2`` grows with ``N``, so the min and
max are those of ``N``'s bounds, squared.  Oblivious and sampled values square the count
of the ordering (the sampled orderings are :mod:`tiecore.engine.sampling`'s, the same as
every other measure's).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("set_map")), str(Measure.parse("SetAP"))
('SetAP', 'SetAP')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine import kernels, sampling
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.measure import Measure
from tiecore.measures.registry import Doc, Family, Words, describe, each, register

if TYPE_CHECKING:
    from tiecore.engine.profiles import Profile


def _num_rel_ret():
    """tiecore's NumRelRet, the count whose square SetAP is (parsed on first use)."""
    return Measure.parse("NumRelRet")


def _denominator(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """Per query ``num_ret num_rel`` (0: the query scores 0)."""
    retrieved = ranking.counts.astype(np.float64)
    if depth is not None:
        retrieved = np.minimum(retrieved, float(depth))
    return retrieved * judgments.num_rel.astype(np.float64)


def _ratio(squares: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``squares / denominator`` (broadcast over samples), 0 where the denominator is."""
    out = np.zeros(np.broadcast_shapes(squares.shape, denominator.shape))
    np.divide(squares, denominator, out=out, where=denominator > 0)
    return out


def _falling(x: np.ndarray, k: int) -> np.ndarray:
    """``x (x - 1) ... (x - k + 1)``."""
    out = np.ones_like(x)
    for i in range(k):
        out = out * (x - i)
    return out


def count_moments(ranking: Ranking, judgments: Judgments, depth: int | None) -> dict:
    """Per query (judgments' order) the fixed part ``f`` of ``num_rel_ret``, the first
    four raw moments of its hypergeometric part ``X`` and ``X``'s least and largest
    values (all 0 for a query the depth cuts no tie group of)."""
    nq = len(judgments.qids)
    n = ranking.size.astype(np.float64)
    r = ranking.rel_count.astype(np.float64)
    t = ranking.offset.astype(np.float64)
    query = ranking.group_query
    d = n if depth is None else np.clip(float(depth) - t, 0.0, n)
    whole = d == n
    fixed = np.bincount(query[whole], weights=r[whole], minlength=nq)
    cut = (d > 0) & (d < n)  # at most one group a query: the cut is one rank
    q, n, r, d = query[cut], n[cut], r[cut], d[cut]
    factorial = []
    for k in (1, 2, 3, 4):  # 0 where n < k: then d < k too, and so is X
        out = np.zeros_like(n)
        np.divide(_falling(d, k) * _falling(r, k), _falling(n, k), out=out, where=n >= k)
        factorial.append(out)
    f1, f2, f3, f4 = factorial
    raw = [f1, f2 + f1, f3 + 3 * f2 + f1, f4 + 6 * f3 + 7 * f2 + f1]
    moments = {"fixed": fixed}
    for name, values in zip(("m1", "m2", "m3", "m4"), raw, strict=True):
        moments[name] = np.bincount(q, weights=values, minlength=nq)
    moments["low"] = np.bincount(q, weights=np.maximum(0.0, d - (n - r)), minlength=nq)
    moments["high"] = np.bincount(q, weights=np.minimum(d, r), minlength=nq)
    return moments


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Per query the mean over orderings, exact variance, min and max (module docstring)."""
    m = count_moments(ranking, judgments, depth)
    f, m1, m2, m3, m4 = m["fixed"], m["m1"], m["m2"], m["m3"], m["m4"]
    denominator = _denominator(ranking, judgments, depth)
    second = f * f + 2 * f * m1 + m2
    var_x = np.maximum(m2 - m1 * m1, 0.0)
    var_square = np.maximum(m4 - m2 * m2 + 4 * f * (m3 - m2 * m1) + 4 * f * f * var_x, 0.0)
    low, high = f + m["low"], f + m["high"]
    return {
        "value": _ratio(second, denominator),
        "var": _ratio(var_square, denominator * denominator),
        "min": _ratio(low * low, denominator),
        "max": _ratio(high * high, denominator),
    }


def family_values(measure, profile: Profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Aware: the mean over orderings; else the square of the profile's ``num_rel_ret``."""
    if profile.mode == "aware":
        return family_spread(measure, ranking, judgments, depth)["value"]
    measure_ = _num_rel_ret()
    count = kernels.values([measure_], profile, ranking, judgments, depth)[measure_]
    return _ratio(count * count, _denominator(ranking, judgments, depth))


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)``: the square of ``num_rel_ret`` in each sampled ordering."""
    measure_ = _num_rel_ret()
    count = sampling.sample_values(
        ranking, judgments, [measure_], samples=samples, rng=rng, depth=depth
    )[measure_]
    return _ratio(count * count, _denominator(ranking, judgments, depth))


register(
    Family(
        "SetAP",
        "trec_eval's set_map: relevant retrieved^2 / (retrieved num_rel), SetP times SetR "
        "(up to the depth)",
        ("set_map",),
        "none",
        component=None,
        values=each(family_values),
        spread=each(family_spread),
        sample=each(family_sample),
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "SetAP",
    words=Words(
        whole=(
            "set average precision",
            "set precision times set recall: (relevant retrieved)² / (retrieved × the query's "
            "number of relevant documents) (trec_eval's set_map)",
        ),
    ),
    docs=(
        Doc(
            "`SetAP`",
            "`set_map`",
            "relevant retrieved² / (retrieved · num_rel), SetP · SetR (up to `-M`; ir_measures' "
            "`SetAP`); a square of a count, so its aware value, exact variance and min/max come "
            "from the hypergeometric count's moments where the depth cuts a tie group",
            "trec_eval (pytrec_eval)",
        ),
    ),
)

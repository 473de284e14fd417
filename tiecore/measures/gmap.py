"""Geometric means over queries: trec_eval's ``gm_map`` (GMAP), oblivious and sampled.

trec_eval (``m_gm_map.c``) keeps per query ``log(max(AP, MIN_GEO_MEAN))`` with
``MIN_GEO_MEAN = 1e-5`` (that log is pytrec_eval's per-query ``gm_map``) and
reports ``exp`` of their mean over the queries (``-c``: a missing query has
AP 0, so it adds ``log(1e-5)``).

Under ties the queries are shuffled independently, so the exact mean over
orderings of GMAP is ``prod_q E[max(AP_q, eps)^(1/Q)]``: it needs every query's
whole AP distribution, which has no closed form (its support grows with the
number of ways to place the relevant docs of each group).  tiecore therefore
gives no tie-aware GMAP (:func:`tiecore.measures.registry.refuse_inexact` says so):
sampled mode estimates that mean, with its standard error, and the minimum and
maximum over orderings are exact -- GMAP grows with every AP, so they are the
geometric means of the per-query minimum and maximum APs (the pessimistic and
optimistic orders).
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.profiles import RANK
from tiecore.measures.ap import DENOM, ap_denominator, bounds_ap, var_ap
from tiecore.measures.registry import Doc, Family, Words, describe, register

#: trec_eval's ``MIN_GEO_MEAN``: APs below it count as it.
MIN_GEO_MEAN = 1e-5


def log_floor(values: np.ndarray) -> np.ndarray:
    """Per query ``log(max(value, 1e-5))``, trec_eval's per-query ``gm_map``.

    >>> log_floor(np.array([0.5, 0.0])).round(6).tolist()
    [-0.693147, -11.512925]
    """
    return np.log(np.maximum(np.asarray(values, dtype=np.float64), MIN_GEO_MEAN))


def geometric_mean(logs: np.ndarray, axis: int = -1) -> np.ndarray:
    """``exp`` of the mean of per-query ``log_floor`` values (trec_eval's summary).

    >>> float(geometric_mean(log_floor(np.array([0.5, 0.0]))))  # sqrt(0.5 * 1e-5)
    0.0022360679774997894
    """
    return np.exp(np.mean(logs, axis=axis))


def gmap(ap: np.ndarray, axis: int = -1) -> np.ndarray:
    """GMAP of per-query APs: ``exp(mean log max(AP, 1e-5))``.

    Given the pessimistic and optimistic APs it is GMAP's exact minimum and
    maximum; given one sampled ordering's APs, that ordering's GMAP.

    >>> float(gmap(np.array([0.25, 1.0])))
    0.5
    """
    return geometric_mean(log_floor(ap), axis=axis)


register(
    Family(
        "GMAP",
        "AP per query; over queries trec_eval's gm_map, exp(mean log max(AP, "
        "1e-5)). Oblivious and sampled (an estimate of the mean GMAP over orderings); no "
        "aware value: that mean needs each query's whole AP distribution",
        ("gm_map",),
        params={"denom": DENOM},
        component="ap",
        divisor=RANK,
        denominator=ap_denominator,
        variance=var_ap,
        bounds=bounds_ap,
        aggregate="geometric",
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "GMAP",
    words=Words(
        cut=(
            "geometric mean of average precision over the top {k}",
            "average precision over the top {k} of each query, averaged over the queries with a "
            "geometric mean (AP floored at 0.00001), so queries with low values weigh more",
        ),
        whole=(
            "geometric mean of average precision",
            "average precision of each query, averaged over the queries with a geometric mean (AP "
            "floored at 0.00001), so queries with low values weigh more",
        ),
        extra=(
            (
                "denom",
                "min",
                "; each query's AP divided by the smaller of {k} and its number of relevant "
                "documents instead of that number",
            ),
        ),
    ),
    docs=(
        Doc(
            "`GMAP`",
            "`gm_map`",
            "AP per query; over queries exp(mean log max(AP, 10^−5)), trec_eval's gm_map; "
            "oblivious and sampled only (below)",
            "pytrec_eval",
        ),
    ),
)

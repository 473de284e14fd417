"""Geometric mean of bpref over queries: trec_eval's ``gm_bpref``, oblivious and sampled.

trec_eval (``m_gm_bpref.c``) keeps per query ``log(max(bpref, MIN_GEO_MEAN))`` with
``MIN_GEO_MEAN = 1e-5`` (that log is pytrec_eval's per-query ``gm_bpref``) and reports
``exp`` of their mean over the queries, as ``gm_map`` does with AP
(:mod:`tiecore.measures.gmap`).  tiecore's per-query value is bpref
(:mod:`tiecore.measures.bpref`'s component, variance and bounds); the summary is the
geometric mean.  As for GMAP, the mean over orderings of a geometric mean needs each
query's whole bpref distribution, so tiecore gives no tie-aware value
(:func:`tiecore.measures.registry.refuse_inexact`): sampled mode estimates it, and the
pessimistic and optimistic orders give its min and max (bpref, as a head sum of counts
of relevant docs above, grows when a relevant doc moves up).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("gm_bpref"))
'GMBpref'
"""

from __future__ import annotations

from tiecore.measures.bpref import bounds_bpref, var_bpref
from tiecore.measures.registry import Doc, Family, Words, describe, num_rel, register

register(
    Family(
        "GMBpref",
        "bpref per query; over queries trec_eval's gm_bpref, exp(mean log max(bpref, "
        "1e-5)). Oblivious and sampled; no aware value: that mean needs each query's whole "
        "bpref distribution",
        ("gm_bpref",),
        "none",
        component="bpref",
        denominator=num_rel,
        variance=var_bpref,
        bounds=bounds_bpref,
        aggregate="geometric",
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "GMBpref",
    words=Words(
        whole=(
            "geometric mean of bpref",
            "binary preference of each query, averaged over the queries with a geometric mean "
            "(bpref floored at 0.00001), so queries with low values weigh more (trec_eval's "
            "gm_bpref)",
        ),
    ),
    docs=(
        Doc(
            "`GMBpref`",
            "`gm_bpref`",
            "Bpref per query; over queries exp(mean log max(Bpref, 10^−5)), trec_eval's gm_bpref "
            "(printed for `all` only); oblivious and sampled only, as GMAP",
            "pytrec_eval; trec_eval 9.0.8",
        ),
    ),
)

"""GMBpref, trec_eval's ``gm_bpref``: Bpref per query, averaged geometrically over queries.

trec_eval (``m_gm_bpref.c``) keeps per query ``log(max(Bpref, 1e-5))`` and reports
``exp`` of their mean, as ``gm_map`` does with AP (:mod:`tiecore.measures.gmap`); it
prints the summary only.  Per query the value is Bpref (:mod:`tiecore.measures.bpref`).
Under ties, as for GMAP, the mean over orderings of a geometric mean needs every
query's whole Bpref distribution: oblivious and sampled only (the minimum and maximum
are those of the pessimistic and optimistic orders).

>>> from tiecore.measures import FAMILIES, lookup
>>> lookup("gm_bpref").name, FAMILIES["GMBpref"].aggregate
('GMBpref', 'geometric')
"""

from __future__ import annotations

from tiecore.measures.bpref import bounds_bpref, var_bpref
from tiecore.measures.registry import Family, num_rel, register

register(
    Family(
        "GMBpref",
        "Bpref per query; over queries trec_eval's gm_bpref, exp(mean log max(Bpref, 1e-5)). "
        "Oblivious and sampled (an estimate of the mean over orderings); no aware value",
        ("gm_bpref",),
        "none",
        component="bpref",
        denominator=num_rel,
        variance=var_bpref,
        bounds=bounds_bpref,
        aggregate="geometric",
    )
)

"""NumRet, trec_eval's ``num_ret``: the docs retrieved (up to the depth, ``-M``).

A sum of the component ``ret`` (1 per retrieved doc) over the ranks up to the depth:
the same in every ordering (its variance is 0, its min and max equal).  trec_eval's
summary line sums it over the queries; tiecore's summary is the mean, as for every
measure (``-m all_trec`` prints trec_eval's sum).

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("num_ret")), FAMILIES["NumRet"].component
('NumRet', 'ret')
"""

from __future__ import annotations

from tiecore.measures.registry import LINEAR_MOMENTS, Family, ones, register

register(
    Family(
        "NumRet",
        "trec_eval's num_ret: docs retrieved (up to the depth); summed over queries by "
        "trec_eval's summary, averaged by tiecore's",
        ("num_ret",),
        "none",
        component="ret",
        denominator=ones,
        **LINEAR_MOMENTS,
    )
)

"""Utility, trec_eval's ``utility``: a weighted sum of the retrieved set's contingency table.

trec_eval's ``utility.a,b,c,d`` scores a query ``a`` per relevant doc retrieved, ``b``
per non-relevant doc retrieved, ``c`` per relevant doc not retrieved and ``d`` per
non-relevant doc not retrieved (default ``1, -1, 0, 0``); "retrieved" stops at the
depth.  The last cell needs the collection's size ``N``, which trec_eval takes from
``-N`` and otherwise counts as 0; here it is the parameter ``docs`` (default 0), which
``tiecore eval -N`` sets.  With ``RR`` the relevant docs retrieved, ``NR`` the docs
retrieved and ``R`` the relevant ones, the non-relevant docs not retrieved are
``N + RR - NR - R`` (trec_eval's count, negative when ``N`` is too small), and

    utility = (a - b - c + d) RR + b NR + c R + d (N - NR - R)

a count of relevant docs above the depth (``RR``, hypergeometric where the depth cuts
a tie group) times a constant, plus a per-query constant: its tie-aware value, exact
variance, minimum and maximum are those of ``RR`` scaled.  trec_eval's summary
averages it over the queries, as tiecore's does.

>>> from tiecore.measures import Measure
>>> str(Measure.parse("Utility")), str(Measure.parse("Utility(a=2,b=-1,docs=100)"))
('Utility', 'Utility(a=2.0,docs=100.0)')
"""

from __future__ import annotations

import numpy as np

from tiecore.measures.registry import (
    COUNT_MOMENTS,
    Doc,
    Family,
    Param,
    Words,
    describe,
    num_rel,
    ones,
    register,
    retrieved_in_cut,
)


def _weights(measure) -> tuple[float, float, float, float]:
    return tuple(float(measure.param(name)) for name in "abcd")


def relevant_retrieved_weight(measure) -> float:
    """The weight of a relevant doc retrieved, net of the cells it leaves: ``a - b - c + d``."""
    a, b, c, d = _weights(measure)
    return a - b - c + d


def fixed_part(measure, judgments, ranking, cut) -> np.ndarray:
    """Per query ``b NR + c R + d (N - NR - R)``, ``N`` the collection's size (``docs``)."""
    _, b, c, d = _weights(measure)
    docs = float(measure.param("docs"))
    retrieved = retrieved_in_cut(measure, judgments, ranking, cut)
    relevant = num_rel(measure, judgments, ranking, cut)
    return b * retrieved + c * relevant + d * (docs - retrieved - relevant)


def _weight(default: str, cell: str) -> Param:
    return Param(
        default,
        low=-np.inf,
        high=np.inf,
        description=f"trec_eval's utility: the worth of each {cell}",
    )


register(
    Family(
        "Utility",
        "trec_eval's utility.a,b,c,d: a per relevant doc retrieved, b per non-relevant doc "
        "retrieved, c per relevant doc not retrieved, d per non-relevant doc not retrieved "
        "(docs: the number of docs in the collection, trec_eval's -N; default 0)",
        ("utility",),
        "none",
        params={
            "a": _weight("1.0", "relevant doc retrieved"),
            "b": _weight("-1.0", "non-relevant doc retrieved"),
            "c": _weight("0.0", "relevant doc not retrieved"),
            "d": _weight("0.0", "non-relevant doc not retrieved"),
            "docs": Param(
                "0.0",
                low=0.0,
                high=np.inf,
                closed=True,
                description="the number of docs in the collection (trec_eval's -N), which "
                "the non-relevant docs not retrieved (d) are counted from",
            ),
        },
        denominator=ones,
        scale=relevant_retrieved_weight,
        offset=fixed_part,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "Utility",
    words=Words(
        whole=(
            "utility",
            "{a} per relevant document retrieved, {b} per non-relevant document retrieved, {c} "
            "per relevant document not retrieved and {d} per non-relevant document not retrieved, "
            "summed (trec_eval's utility; the collection counted as {docs} documents, trec_eval's "
            "-N)",
        ),
    ),
    docs=(
        Doc(
            "`Utility(a=…,b=…,c=…,d=…,docs=…)`",
            "`utility`, `utility.a,b,c,d`",
            "a·relevant retrieved + b·non-relevant retrieved + c·relevant not retrieved + "
            "d·non-relevant not retrieved (up to `-M`; default 1, -1, 0, 0; the last cell counted "
            "as docs + relevant retrieved − retrieved − relevant, `docs` the collection's size: "
            "trec_eval's `-N`, which `tiecore eval -N` sets, default 0); under ties it moves only "
            "when the depth cuts a tie group",
            "trec_eval 9.0.8",
        ),
    ),
)

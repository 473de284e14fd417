"""SetF, trec_eval's ``set_F``: the weighted harmonic mean of SetP and SetR.

trec_eval computes ``(x + 1) P R / (x P + R)`` with ``P = num_rel_ret / num_ret``, ``R =
num_rel_ret / num_rel`` and ``x`` its parameter, the weight of recall against precision
(default 1, the harmonic mean; ``set_F.0.5``, printed ``set_F_0.5``, is ``SetF(x=0.5)``;
trec_eval uses ``x`` where van Rijsbergen's F has ``beta^2``), 0 when nothing relevant
is retrieved.  That is ``(x + 1) num_rel_ret / (num_ret + x num_rel)``, a count over a
denominator fixed by the depth, so under ties it moves only when the depth cuts a tie
group (``num_rel_ret`` hypergeometric there) and its mean over orderings is
``(x + 1) E[num_rel_ret] / (num_ret + x num_rel)``.  The value is computed as trec_eval
computes it (``P`` and ``R`` first, :func:`trec_eval_formula`), so that oblivious doubles
are trec_eval's bit for bit; the variance and bounds read the linear form.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("set_F")), FAMILIES["SetF"].scale, str(Measure.parse("SetF(x=0.5)"))
('SetF', 2.0, 'SetF(x=0.5)')
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
    register,
    retrieved_in_cut,
)


def retrieved_plus_num_rel(measure, judgments, ranking, cut) -> np.ndarray:
    """``(num_ret + x num_rel) 2 / (x + 1)``, so that SetF = 2 num_rel_ret / that is
    ``(x + 1) num_rel_ret / (num_ret + x num_rel)``; at ``x = 1`` exactly ``num_ret +
    num_rel``."""
    x = float(measure.param("x"))
    retrieved = retrieved_in_cut(measure, judgments, ranking, cut)
    relevant = num_rel(measure, judgments, ranking, cut)
    if x == 1.0:
        return retrieved + relevant
    return (retrieved + x * relevant) * (2.0 / (x + 1.0))


def trec_eval_formula(measure, judgments, ranking, cut, sums: np.ndarray) -> np.ndarray:
    """``(x + 1) P R / (x P + R)`` with ``P = S / num_ret`` and ``R = S / num_rel``, ``S``
    the (expected) relevant docs retrieved; 0 where ``S`` is 0 (trec_eval's order of
    operations, so its doubles are reproduced bit for bit)."""
    x = float(measure.param("x"))
    retrieved = retrieved_in_cut(measure, judgments, ranking, cut).astype(np.float64)
    relevant = num_rel(measure, judgments, ranking, cut).astype(np.float64)
    live = sums > 0
    safe = np.where(live, sums, 1.0)
    precision = safe / np.where(live, retrieved, 1.0)
    recall = safe / np.where(live, relevant, 1.0)
    return np.where(live, (x + 1.0) * precision * recall / (x * precision + recall), 0.0)


register(
    Family(
        "SetF",
        "trec_eval's set_F: (x + 1) relevant retrieved / (retrieved + x num_rel), the "
        "weighted harmonic mean of SetP and SetR (x = 1: the harmonic mean)",
        ("set_f",),
        "none",
        params={
            "x": Param(
                "1.0",
                low=0.0,
                high=float("inf"),
                closed=True,
                description="trec_eval's set_F parameter: the weight of recall against "
                "precision, (x + 1) P R / (x P + R)",
            )
        },
        denominator=retrieved_plus_num_rel,
        scale=2.0,
        formula=trec_eval_formula,
        **COUNT_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "SetF",
    words=Words(
        whole=(
            "set F1",
            "the harmonic mean of set precision and set recall: 2 × (relevant retrieved) / "
            "(retrieved + the query's number of relevant documents) (trec_eval's set_F)",
        ),
        extra=(
            (
                "x",
                "*",
                "; here weighted: ({x} + 1) × P × R / ({x} × P + R), P and R the set measures",
            ),
        ),
    ),
    docs=(
        Doc(
            "`SetF`, `SetF(x=x)`",
            "`set_F`, `set_F.x`",
            "2·num_rel_ret / (num_ret + num_rel), trec_eval's set_F; with `x`, trec_eval's (x + "
            "1)·P·R / (x·P + R) = (x + 1)·num_rel_ret / (num_ret + x·num_rel) (x weighs recall "
            "against precision, where van Rijsbergen's F has β²)",
            "trec_eval (pytrec_eval; trec_eval 9.0.8 for `x`)",
        ),
    ),
)

"""nDCG (Järvelin & Kekäläinen 2002): DCG@k divided by the ideal DCG@k.

``DCG@k = sum_{j <= k} g(level_j) / log2(j + 1)`` with gain ``g`` the level
(``gain=linear``, trec_eval's ``ndcg``) or ``2^level - 1`` (``gain=exp``, Burges et
al.).  The ideal is ``global`` (the query's judged docs sorted by gain, cut at k:
trec_eval's ``ndcg_cut``), ``max`` (the qrels' top gain at each of the ``k`` ranks)
or ``local`` (the ranking's own top k sorted by gain), which is no head sum: its
values, spread and samples come from :mod:`tiecore.measures.local_ideal`.  ``gains``
(``nDCG(gains=1:3;2:9)``, trec_eval's ``ndcg.1=3,2=9``) gives levels gains of their own
(the others gain their level; a doc not in the qrels 0), the global ideal of those
gains.  The gain
is a document value, so under ties the DCG is a linear permutation statistic
(:data:`~tiecore.measures.registry.LINEAR_MOMENTS`; sklearn's ``_tie_averaged_dcg``
gives the same mean).

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> FAMILIES["nDCG"].component_of(Measure.parse("nDCG(gain=exp)@10"))
'gain:exp'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.judgments import gain_of
from tiecore.engine.profiles import LOG2
from tiecore.measures import local_ideal
from tiecore.measures.orderings import (
    GAINS_PARAM,
    gain_map_component,
    ideal_dcg_of,
    parse_gains,
)
from tiecore.measures.registry import (
    GAIN,
    LINEAR_MOMENTS,
    Doc,
    Family,
    Param,
    Words,
    describe,
    each,
    register,
)

if TYPE_CHECKING:
    from tiecore.engine.kernels import HeadSum as Measure


def ideal_dcg(measure, judgments, ranking, cut) -> np.ndarray:
    """nDCG's ideal DCG: ``global`` (the query's judged docs sorted by gain, cut at k)
    or ``max`` (the top gain of the qrels at each of the ``k`` ranks); with ``gains``,
    the global ideal of those gains."""
    if measure.param("gains"):
        return ideal_dcg_of(judgments, parse_gains(measure.param("gains")), measure.cutoff)
    if measure.param("ideal") == "max":
        levels = judgments.levels
        top = np.full(len(judgments.qids), int(levels.max(initial=0)))
        shift = judgments.gain_shift(measure.gain)
        discounts = log2_discount_sum(measure.cutoff)
        with np.errstate(over="ignore"):  # 2**(top - shift) past the float range: value 0
            return gain_of(top, measure.gain, shift) * discounts
    return judgments.ideal_dcg(measure.cutoff, measure.gain)


#: Past this many ranks :func:`log2_discount_sum` adds the tail by Euler-Maclaurin.
_DIRECT_DISCOUNTS = 1 << 20


def log2_discount_sum(k: int) -> float:
    """``sum_{j=1..k} 1 / log2(j + 1)``: directly up to 2^20 ranks, beyond by Euler-Maclaurin.

    The tail ``j = n .. k`` of ``f(x) = ln 2 / ln(x + 1)`` is ``ln 2 (li(k + 1) - li(n +
    1)) + (f(n) + f(k)) / 2 + (f'(k) - f'(n)) / 12`` (``li(x) = Ei(ln x)``); the next term
    is below 1e-30 at n = 2^20, so any cutoff costs 2^20 ranks, not k of memory and time.

    >>> n = 3 * 2**20
    >>> exact = float(np.sum(1.0 / np.log2(np.arange(2.0, n + 2))))
    >>> abs(log2_discount_sum(n) - exact) < 1e-13 * exact
    True
    """
    if k <= _DIRECT_DISCOUNTS:
        return float(np.sum(LOG2.inverse(np.arange(1.0, k + 1))))
    from scipy.special import expi

    n = _DIRECT_DISCOUNTS
    head = float(np.sum(LOG2.inverse(np.arange(1.0, n))))  # ranks 1 .. n - 1
    ln2 = np.log(2.0)

    def f(x: float) -> float:
        return ln2 / np.log1p(x)

    def df(x: float) -> float:
        return -ln2 / ((x + 1.0) * np.log1p(x) ** 2)

    tail = ln2 * (expi(np.log1p(k)) - expi(np.log1p(n))) + (f(n) + f(k)) / 2
    return head + float(tail + (df(k) - df(n)) / 12.0)


def _ndcg_component(measure: Measure) -> str | None:
    """nDCG's gains, or None for ``ideal=local`` (no head sum: :mod:`.local_ideal`)."""
    if measure.param("gains"):
        return gain_map_component(measure.param("gains"))
    return None if measure.param("ideal") == "local" else f"gain:{measure.gain}"


def _needs_cutoff_for_max(measure: Measure) -> None:
    if measure.param("gains") and (measure.gain != "linear" or measure.param("ideal") != "global"):
        raise ValueError(
            "nDCG's gains (trec_eval's level=gain pairs) go with gain=linear and ideal=global"
        )
    if measure.param("ideal") == "max" and measure.cutoff is None:
        raise ValueError("nDCG(ideal=max) needs a cutoff, as in nDCG(ideal=max)@10")


IDEAL = Param(
    "global",
    ("global", "max", "local"),
    description="global: the query's judged docs sorted by gain; max: the qrels' top gain "
    "at every rank; local: the ranking's own top k sorted by gain",
)

register(
    Family(
        "nDCG",
        "DCG@k / ideal DCG@k; gain level (linear) or 2^level - 1 (exp), discount "
        "log2(rank + 1); ideal global (the query's judged docs sorted), max (the qrels' "
        "top gain at every rank) or local (the ranking's own top k sorted by gain; all "
        "retrieved without a cutoff)",
        ("ndcg_cut",),
        params={"gain": GAIN, "ideal": IDEAL, "gains": GAINS_PARAM},
        component=_ndcg_component,
        divisor=LOG2,
        denominator=ideal_dcg,
        check=_needs_cutoff_for_max,
        **LINEAR_MOMENTS,
        values=each(local_ideal.family_values),
        spread=each(local_ideal.family_spread),
        sample=each(local_ideal.family_sample),
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "nDCG",
    words=Words(
        cut=(
            "normalised discounted cumulative gain of the top {k} documents",
            "each document's gain ({gain}) divided by log2(rank + 1), summed over the top {k}, "
            "and divided by the same sum for the best possible order (1 = the ideal order)",
        ),
        whole=(
            "normalised discounted cumulative gain",
            "each document's gain ({gain}) divided by log2(rank + 1), summed over the whole "
            "ranked list, and divided by the same sum for the best possible order (1 = the ideal "
            "order)",
        ),
        extra=(
            ("ideal", "max", "; the best order puts the qrels' top gain at every rank"),
            ("ideal", "local", "; the best order is the ranking's own documents sorted by gain"),
        ),
    ),
    docs=(
        Doc(
            "`nDCG`, `nDCG@k`",
            "`ndcg`, `ndcg_cut_k`",
            "DCG@k / ideal DCG@k; three ideals: the query's judged docs sorted by gain (the "
            "*global* ideal, the default), `ideal=max` and `ideal=local` (next rows). "
            "scikit-learn's `ndcg_score` normalises by the best order of the whole scored row "
            "(the ideal of `tiecore.metrics.ndcg`, whose rows hold every judged candidate): the "
            "local ideal equals it only without a cutoff",
            "trec_eval (pytrec_eval, its test outputs)",
        ),
        Doc(
            "`nDCG(ideal=max)@k`",
            "",
            "DCG@k / (the top grade of the whole qrels at each of the k ranks): a scaled DCG, the "
            "*maximum* ideal",
            "–",
        ),
        Doc(
            "`nDCG(ideal=local)`, `nDCG(ideal=local)@k`",
            "",
            "DCG@k / the DCG of the same top k docs sorted by gain (the *local* ideal: 1 when the "
            "top k are in gain order; all retrieved docs without k); a top k without a positive "
            "gain scores 0. Under ties the docs of the group the cutoff cuts decide the ideal: "
            "the exact mean, variance and bounds sum over the level counts that group can put in "
            "the top k (`tiecore/measures/local_ideal.py`), refused with a message naming run and "
            "query past 2·10^6 of them (use `--ties sampled`); its bounds are not the optimistic "
            "and pessimistic orders",
            "scikit-learn's `ndcg_score` of the top k docs alone",
        ),
        Doc(
            "`nDCG(gains=1:3;2:9)`",
            "`ndcg.1=3,2=9`",
            "nDCG whose levels gain the values given (trec_eval's level=gain pairs, written "
            "level:gain separated by `;`; the other levels gain their level, a doc absent from "
            "the qrels 0), over the global ideal of those gains; a document value, so exact in "
            "every mode",
            "trec_eval 9.0.8 (quicktest's meas_params)",
        ),
    ),
)

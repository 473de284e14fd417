"""Every measure family in one place: one :class:`Family` entry per family.

A family declares everything tiecore needs to compute it in the three modes
(oblivious, aware, sampled) with its exact variance, minimum and maximum:

``name``, ``aliases``
    The ir_measures name (``nDCG``) and the other names accepted, lower case
    (trec_eval's ``ndcg``, ``ndcg_cut``; ``map``, ``mrr``, ...).
``cutoff``
    ``"required"``, ``"optional"`` or ``"none"``.
``params``
    Parameters accepted in ``Name(key=value)``, each a :class:`Param` with its
    default and choices; ``gain`` is kept on :attr:`Measure.gain`, the others
    in :attr:`Measure.params`.
``component``, ``divisor``
    The per-position component (a key of :data:`tiecore.engine.profiles.COMPONENTS`,
    or a function of the measure giving one) and the rank weight (a
    :class:`~tiecore.engine.profiles.Divisor`, or a function of the measure).
``cut``, ``denominator``, ``scale``, ``offset``
    Per query the ranks summed (``cut(measure, judgments, cut)`` from the
    cutoff-and-depth cut) and ``value = offset + scale * S / denominator``
    (``denominator(measure, judgments, ranking, cut)``; a query whose
    denominator is 0 scores 0).
``variance``, ``bounds``, ``distribution``
    Hooks of :mod:`tiecore.engine.moments`, called ``(context, d, plan)`` per tie
    group: the variance of the group's head sum ``S_g``, its ``(worst, best)``
    head sums, and (optionally) the exact distribution of one query's ``S``.
``convention``
    One line saying which convention the family follows.

So every measure is ``offset + scale * sum_{rank j <= cut} c_j / w(j) /
denominator`` (:mod:`tiecore.engine.kernels`).  Adding such a measure is adding one
entry to :data:`FAMILIES` (or calling :func:`register`); only a new component,
rank weight or moment needs new math, in :mod:`tiecore.engine.profiles` or
:mod:`tiecore.engine.moments`.

A family that is no head sum (ERR, whose expectation over orders is not a
per-position sum) leaves ``component`` None and gives instead ``values(measure,
profile, ranking, judgments, depth)`` (per-query values; ``profile.mode`` says
the mode), ``spread(measure, ranking, judgments, depth)`` (a dict of per-query
arrays ``value, var, min, max``) and ``sample(measure, ranking, judgments,
samples, rng, depth)`` (``(samples, queries)``).  ``aggregate`` names how the
per-query values are averaged (``mean``, or ``geometric`` for GMAP-like
families; the evaluation honours it).

Examples
--------
>>> FAMILIES["AP"].divisor is RANK, lookup("map").name, lookup("MRR").name
(True, 'AP', 'RR')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine import moments
from tiecore.engine.judgments import Judgments, gain_of
from tiecore.engine.profiles import COMPONENTS, GAINS, LOG2, ONE, RANK, Divisor, geometric

if TYPE_CHECKING:
    from tiecore.measures import Measure


@dataclass(frozen=True)
class Param:
    """A measure parameter: its default, its choices (None: a number in ``(low, high)``)."""

    default: str
    choices: tuple[str, ...] | None = None
    low: float = 0.0
    high: float = 1.0

    def canonical(self, value: str) -> str:
        """The value as :class:`Measure` keeps it; ValueError when not allowed."""
        if self.choices is not None:
            if value not in self.choices:
                raise ValueError(f"must be one of {', '.join(self.choices)}")
            return value
        try:
            number = float(value)
        except ValueError:
            raise ValueError("must be a number") from None
        if not self.low < number < self.high:
            raise ValueError(f"must be between {self.low:g} and {self.high:g} (exclusive)")
        return repr(number)


@dataclass(frozen=True)
class Family:
    """One measure family; see the module docstring for every field."""

    name: str
    convention: str
    aliases: tuple[str, ...] = ()
    cutoff: str = "optional"
    params: dict[str, Param] = field(default_factory=dict)
    component: str | Callable | None = "rel"
    divisor: Divisor | Callable = ONE
    cut: Callable | None = None
    denominator: Callable | None = None
    scale: float = 1.0
    offset: float = 0.0
    variance: Callable | None = None
    bounds: Callable | None = None
    distribution: Callable | None = None
    check: Callable | None = None
    values: Callable | None = None
    spread: Callable | None = None
    sample: Callable | None = None
    aggregate: str = "mean"

    def component_of(self, measure: Measure) -> str | None:
        """The component key of ``measure`` (None: no head sum, see :meth:`hooked`)."""
        return self.component(measure) if callable(self.component) else self.component

    def hooked(self, measure: Measure) -> bool:
        """True when ``measure`` is no head sum and goes through the family's ``values``,
        ``spread`` and ``sample`` hooks (its component is None, as ERR's, or the component
        function gives None for it, as nDCG's for ``ideal=local``)."""
        return self.component_of(measure) is None

    def divisor_of(self, measure: Measure) -> Divisor:
        """The rank weight of ``measure``."""
        return self.divisor if isinstance(self.divisor, Divisor) else self.divisor(measure)


# ------------------------------------------------------------------ cut rules


def cut_at_rank(measure: Measure, judgments: Judgments, cut: np.ndarray) -> np.ndarray:
    """Ranks ``1 .. min(k, depth)``: the cutoff and trec_eval's ``-M``."""
    return cut


def cut_at_num_rel(measure: Measure, judgments: Judgments, cut: np.ndarray) -> np.ndarray:
    """Rprec: ranks ``1 .. num_rel`` (and the depth)."""
    return np.minimum(cut, judgments.num_rel)


# ---------------------------------------------------------------- denominators


def per_cutoff(measure, judgments, ranking, cut) -> np.ndarray:
    """``k``, even when fewer docs were retrieved (trec_eval's P@k)."""
    return np.full(len(judgments.qids), float(measure.cutoff))


def num_rel(measure, judgments, ranking, cut) -> np.ndarray:
    """``num_rel``: the relevant qrels docs, retrieved or not."""
    return judgments.num_rel.astype(np.float64)


def cutoff_plus_num_rel(measure, judgments, ranking, cut) -> np.ndarray:
    """``k + num_rel`` (F1@k = 2 rel_k / (k + num_rel))."""
    return measure.cutoff + judgments.num_rel.astype(np.float64)


def ap_denominator(measure, judgments, ranking, cut) -> np.ndarray:
    """``num_rel`` (trec_eval, the seed notes), or ``min(k, num_rel)`` with ``denom=min``."""
    if measure.param("denom") == "min" and measure.cutoff is not None:
        return np.minimum(judgments.num_rel, measure.cutoff).astype(np.float64)
    return num_rel(measure, judgments, ranking, cut)


def ideal_dcg(measure, judgments, ranking, cut) -> np.ndarray:
    """nDCG's ideal DCG: ``global`` (the query's judged docs sorted by gain, cut at k)
    or ``max`` (the top gain of the qrels at each of the ``k`` ranks)."""
    if measure.param("ideal") == "max":
        levels = judgments._levels
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


def retrieved_in_cut(measure, judgments, ranking, cut) -> np.ndarray:
    """``min(k, retrieved)``: the docs in the top k (ir_measures' Judged@k)."""
    if ranking is None:
        raise ValueError(f"{measure} needs the ranking for its denominator")
    return np.minimum(cut, ranking.counts).astype(np.float64)


def ones(measure, judgments, ranking, cut) -> np.ndarray:
    """1 for every query."""
    return np.ones(len(judgments.qids))


# ------------------------------------------------------------------- families


def _gain_component(measure: Measure) -> str:
    return f"gain:{measure.gain}"


def _ndcg_component(measure: Measure) -> str | None:
    """nDCG's gains, or None for ``ideal=local`` (no head sum: :mod:`tiecore.measures.local_ideal`)."""
    return None if measure.param("ideal") == "local" else _gain_component(measure)


def _unscaled_gain_component(measure: Measure) -> str:
    """Unnormalised sums take exp gains as they are (``inf`` past level 1023, refused by
    the command), not scaled per query as nDCG's ratio allows."""
    return "gain:exp_unscaled" if measure.gain == "exp" else f"gain:{measure.gain}"


def _rbp_component(measure: Measure) -> str:
    """Binary: relevant or not; ``scaled``: the level (divided by :func:`rbp_denominator`)."""
    if measure.gain == "binary":
        return "rel"
    return "gain:linear" if measure.gain == "scaled" else _unscaled_gain_component(measure)


def rbp_denominator(measure, judgments, ranking, cut) -> np.ndarray:
    """1, or with ``gain=scaled`` the largest level of the whole qrels (every query).

    ``gain=scaled`` is rbp_eval's graded gain, which TREC-COVID published: ``level /
    top`` with ``top`` the qrels' largest level, so every gain is in ``[0, 1]`` and
    RBP at most 1 (a qrels without a positive level scores 0, as its gains are 0).
    """
    if measure.gain == "scaled":
        top = max(int(judgments._levels.max(initial=0)), 0)
        return np.full(len(judgments.qids), float(top))
    return ones(measure, judgments, ranking, cut)


def _rbp_divisor(measure: Measure) -> Divisor:
    return geometric(float(measure.param("p")))


def _needs_cutoff_for_max(measure: Measure) -> None:
    if measure.param("ideal") == "max" and measure.cutoff is None:
        raise ValueError("nDCG(ideal=max) needs a cutoff, as in nDCG(ideal=max)@10")


def _hook(module: str, name: str) -> Callable:
    """``tiecore.<module>.<name>``, imported on the first call (no head-sum families)."""

    def call(*args, **kwargs):
        import importlib

        return getattr(importlib.import_module(f"tiecore.{module}"), name)(*args, **kwargs)

    return call


GAIN = Param("linear", GAINS)
PERSISTENCE = Param("0.8")
_COUNT = {"variance": moments.var_count, "bounds": moments.bounds_count}
_LINEAR = {"variance": moments.var_linear, "bounds": moments.bounds_linear}

#: Every family by its ir_measures name.
FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add ``family`` to :data:`FAMILIES` (its name and aliases must be new)."""
    taken = {alias for other in FAMILIES.values() for alias in _names(other)}
    clash = set(_names(family)) & taken
    if clash:
        raise ValueError(f"measure names already taken: {sorted(clash)}")
    if isinstance(family.component, str) and family.component not in COMPONENTS:
        raise ValueError(f"unknown component {family.component!r}")
    FAMILIES[family.name] = family
    return family


def _names(family: Family) -> tuple[str, ...]:
    return (family.name.lower(), *family.aliases)


def lookup(name: str) -> Family | None:
    """The family named ``name`` (any case, or an alias), or None."""
    name = name.lower()
    for family in FAMILIES.values():
        if name in _names(family):
            return family
    return None


for _family in (
    Family(
        "P", "relevant in the top k / k (k even when fewer were retrieved)",
        ("precision",), "required", denominator=per_cutoff, **_COUNT,
        distribution=moments.count_distribution,
    ),
    Family(
        "R", "relevant in the top k / num_rel", ("recall",), "required",
        denominator=num_rel, **_COUNT, distribution=moments.count_distribution,
    ),
    Family(
        "F1", "2 rel_k / (k + num_rel), the harmonic mean of P@k and R@k", (), "required",
        denominator=cutoff_plus_num_rel, scale=2.0, **_COUNT,
        distribution=moments.count_distribution,
    ),
    Family(
        "AP", "sum of P@j over relevant ranks j <= k, / num_rel (trec_eval's map, map_cut; "
        "the seed notes' MAP@k); denom=min divides by min(k, num_rel)",
        ("map", "map_cut"), params={"denom": Param("num_rel", ("num_rel", "min"))},
        component="ap", divisor=RANK, denominator=ap_denominator,
        variance=moments.var_ap, bounds=moments.bounds_ap,
    ),
    Family(
        "RR", "1 / rank of the first relevant doc (0 past k); MRR is its mean",
        ("mrr", "recip_rank"), component="first", divisor=RANK, denominator=ones,
        variance=moments.var_rr, bounds=moments.bounds_first,
        distribution=moments.first_rank_distribution,
    ),
    Family(
        "Success", "1 when a relevant doc is in the top k", (), "required",
        component="first", denominator=ones, variance=moments.var_success,
        bounds=moments.bounds_first, distribution=moments.success_distribution,
    ),
    Family(
        "Rprec", "relevant in the top num_rel / num_rel", (), "none", cut=cut_at_num_rel,
        denominator=num_rel, **_COUNT, distribution=moments.count_distribution,
    ),
    Family(
        "Bpref", "trec_eval's: sum over relevant retrieved of 1 - min(N_j, R) / min(N, R), / R",
        (), "none", component="bpref", denominator=num_rel,
        variance=moments.var_bpref, bounds=moments.bounds_bpref,
    ),
    Family(
        "nDCG", "DCG@k / ideal DCG@k; gain level (linear) or 2^level - 1 (exp), discount "
        "log2(rank + 1); ideal global (the query's judged docs sorted), max (the qrels' "
        "top gain at every rank) or local (the ranking's own top k sorted by gain; all "
        "retrieved without a cutoff)",
        ("ndcg_cut",),
        params={"gain": GAIN, "ideal": Param("global", ("global", "max", "local"))},
        component=_ndcg_component, divisor=LOG2, denominator=ideal_dcg,
        check=_needs_cutoff_for_max, **_LINEAR,
        values=_hook("measures.local_ideal", "family_values"),
        spread=_hook("measures.local_ideal", "family_spread"),
        sample=_hook("measures.local_ideal", "family_sample"),
    ),
    Family(
        "DCG", "sum over ranks j <= k of gain / log2(j + 1), unnormalised",
        params={"gain": GAIN}, component=_unscaled_gain_component, divisor=LOG2,
        denominator=ones, **_LINEAR,
    ),
    Family(
        "CG", "sum of the gains of the top k, unnormalised", params={"gain": GAIN},
        component=_unscaled_gain_component, denominator=ones, **_LINEAR,
    ),
    Family(
        "Judged", "judged docs in the top k / min(k, retrieved) (ir_measures')",
        component="judged", denominator=retrieved_in_cut, **_LINEAR,
    ),
    Family(
        "RBP", "sum over ranks j <= k of gain (1 - p) p^(j-1); gain the level (linear, "
        "ir_measures'), 2^level - 1 (exp), relevant (binary, Moffat & Zobel's) or the level "
        "/ the qrels' largest level (scaled, rbp_eval's and TREC-COVID's; trec-style name "
        "rbp.p=0.5)",
        params={"p": PERSISTENCE, "gain": Param("linear", (*GAINS, "binary", "scaled"))},
        component=_rbp_component, divisor=_rbp_divisor, denominator=rbp_denominator,
        **_LINEAR,
    ),
    Family(
        "RBP_residual", "RBP's residual: the weight (1 - p) p^(j-1) of the unjudged ranks "
        "j <= k plus the tail p^min(k, retrieved), = 1 - judged weight",
        ("rbp_res",), params={"p": PERSISTENCE}, component="judged", divisor=_rbp_divisor,
        denominator=ones, scale=-1.0, offset=1.0, **_LINEAR,
    ),
):  # fmt: skip
    register(_family)


def refuse_inexact(measures: Iterable[Measure], where: str) -> None:
    """Refuse families with no exact tie-aware summary (``aggregate="geometric"``: GMAP).

    The mean over orderings of a geometric mean over queries is
    ``prod_q E[max(AP_q, eps)^(1/Q)]``: it needs every query's whole AP
    distribution, so tiecore gives GMAP oblivious (one ordering, its min and max
    through the pessimistic and optimistic tie-breaks) and sampled (an unbiased
    estimate of that mean with its standard error), never a plausible stand-in.

    >>> from tiecore.measures import Measure
    >>> refuse_inexact([Measure.parse("AP")], "ties='aware'") is None
    True
    """
    from tiecore.errors import InputError

    inexact = [str(m) for m in measures if not m.exact_spread]
    if inexact:
        raise InputError(
            "measure",
            None,
            f"{', '.join(inexact)} has no exact value under {where}: the mean over orderings "
            "of a geometric mean needs every query's whole AP distribution",
            "ties='sampled' (an estimate of that mean, with its standard error), or "
            "ties='oblivious' with tiebreak='pessimistic' / 'optimistic' for its exact "
            "min and max",
        )


#: trec_eval's recall levels of iprec_at_recall, as IPrec's ``recall`` accepts them.
RECALL_CHOICES = tuple(f"{level / 10:.1f}" for level in range(11))

for _family in (
    Family(
        "ERR", "cascade model (Chapelle et al.): sum_{j<=k} R_j prod_{i<j} (1 - R_i) / j, "
        "R = (2^level - 1) / 2^max_rel with max_rel 4 (gdeval's, ir_measures' provider; a "
        "larger level is an error); a query without a positive level scores 0 (gdeval "
        "leaves it out)", ("err",),
        params={"max_rel": Param("4", tuple(str(i) for i in range(1, 31)))}, component=None,
        values=_hook("measures.err", "family_values"), spread=_hook("measures.err", "family_spread"),
        sample=_hook("measures.err", "family_sample"),
    ),
    Family(
        "IPrec", "trec_eval's iprec_at_recall: the largest precision at or below the rank "
        "of relevant doc number max(1, (long)(recall * num_rel + 0.9)) (round=up: trec_eval "
        "9.0.x, pytrec_eval, ir_measures' IPrec@r) or + 0.5 (round=nearest: the later "
        "trec_eval of the test outputs; trec_eval's names iprec_at_recall_r); 0 when too few "
        "are retrieved", ("iprec_at_recall",), "none",
        params={"recall": Param("0.0", RECALL_CHOICES), "round": Param("up", ("up", "nearest"))},
        component=None,
        values=_hook("measures.iprec", "family_values"),
        spread=_hook("measures.iprec", "family_spread"),
        sample=_hook("measures.iprec", "family_sample"),
    ),
    Family(
        "infAP", "trec_eval's inferred AP (Yilmaz & Aslam): sum over relevant retrieved "
        "of (1 + (r + m + u) (r + 1e-5) / (r + m + 2e-5)) / k, / num_rel (r relevant, m "
        "judged non-relevant, u pooled unjudged (negative level) docs above rank k; docs "
        "absent from the qrels count as non-relevant); exact variance and bounds up to a "
        "budget per tie group", ("infap",), "none", component=None,
        values=_hook("measures.infap", "family_values"), spread=_hook("measures.infap", "family_spread"),
        sample=_hook("measures.infap", "family_sample"),
    ),
    Family(
        "GMAP", "AP per query; over queries trec_eval's gm_map, exp(mean log max(AP, "
        "1e-5)). Oblivious and sampled (an estimate of the mean GMAP over orderings); no "
        "aware value: that mean needs each query's whole AP distribution",
        ("gm_map",), params={"denom": Param("num_rel", ("num_rel", "min"))}, component="ap",
        divisor=RANK, denominator=ap_denominator, variance=moments.var_ap,
        bounds=moments.bounds_ap, aggregate="geometric",
    ),
):  # fmt: skip
    register(_family)

"""The measure registry: :class:`Family`, :class:`Param`, :func:`register`, :func:`lookup`.

Each family lives in its own module of :mod:`tiecore.measures` (``ap.py``, ``ndcg.py``
...), which declares its names, parameters, per-rank component and its own moments, and
calls :func:`register` at the bottom.  :data:`FAMILIES` imports a family's module when
one of its names is first looked up (:data:`HOMES` says which module registers which
names), and every family module when the table is listed, so ``tiecore eval -m map``
imports ``ap.py`` alone and ``import tiecore.measures`` none of them.

A :class:`Family` declares everything tiecore needs to compute it in the three modes
(oblivious, aware, sampled) with its exact variance, minimum and maximum:

``name``, ``aliases``
    The ir_measures name (``nDCG``) and the other names accepted, lower case
    (trec_eval's ``ndcg``, ``ndcg_cut``; ``map``, ``mrr``, ...).
``cutoff``
    ``"required"``, ``"optional"`` or ``"none"``.
``params``
    Parameters accepted in ``Name(key=value)``, each a :class:`Param` with its
    default, choices and description; ``gain`` is kept on ``Measure.gain``, the
    others in ``Measure.params``.
``component``, ``divisor``
    The per-position component (a key of :data:`tiecore.engine.profiles.COMPONENTS`,
    or a function of the measure giving one) and the rank weight (a
    :class:`~tiecore.engine.profiles.Divisor`, or a function of the measure).
``cut``, ``denominator``, ``scale``, ``offset``
    Per query the ranks summed (``cut(measure, judgments, cut)`` from the
    cutoff-and-depth cut) and ``value = offset + scale * S / denominator``
    (``denominator(measure, judgments, ranking, cut)``; a query whose
    denominator is 0 scores 0).  ``scale`` is a number or a function of the measure
    (its parameters); ``offset`` a number or, where it differs by query (trec_eval's
    utility), ``offset(measure, judgments, ranking, cut)``.
``formula``
    Where the reference tool's arithmetic is not ``offset + scale * S / denominator``
    (trec_eval's set_F divides P and R), ``formula(measure, judgments, ranking, cut,
    sums)`` gives the values from the head sums ``S`` (any leading axes) in its order of
    operations, equal in exact arithmetic, so oblivious doubles are the tool's bit for bit.
``variance``, ``bounds``, ``distribution``
    Hooks called ``(context, d, plan)`` per tie group (``context`` a
    :class:`tiecore.engine.moments.Context`): the variance of the group's head sum
    ``S_g``, its ``(worst, best)`` head sums, and (optionally) the exact distribution
    of one query's ``S``.  :data:`COUNT_MOMENTS` and :data:`LINEAR_MOMENTS` are the
    shared ones (relevant docs counted; document values weighted).
``convention``
    One line saying which convention the family follows.
``inexact``, ``inexact_spread``
    Why the family has no exact tie-aware value (empty: it has one); such a family is
    oblivious and sampled only, refused by the exact modes as GMAP is.  Why it has an
    exact tie-aware value but no exact variance (its ``values`` give the aware mean;
    ``--spread``, ``evaluate_spread`` and ``compare`` refuse it).

So every measure is ``offset + scale * sum_{rank j <= cut} c_j / w(j) /
denominator`` (:mod:`tiecore.engine.kernels`).

A family that is no head sum (ERR, whose expectation over orders is not a
per-position sum) leaves ``component`` None and gives instead three hooks, each
called once with all of the family's measures asked for (``measures``, a list) and
answering one result per measure, in that order: ``values(measures, profile,
ranking, judgments, depth)`` (per-query values; ``profile.mode`` says the mode),
``spread(measures, ranking, judgments, depth)`` (dicts of per-query arrays
``value, var, min, max``) and ``sample(measures, ranking, judgments, samples,
rngs, depth)`` (``(samples, queries)`` arrays; ``rngs`` one stream key per
measure).  Measures that share work take it together (IPrec's recall levels share
one counting DP); a family whose measures share nothing writes its hooks for one
measure and registers :func:`each` of them.  ``aggregate`` names how the
per-query values are averaged (``mean``, or ``geometric`` for GMAP-like
families; the evaluation honours it).

``words``, ``docs``
    What the family means, written once beside its kernel: ``words`` (a :class:`Words`)
    is the plain-words definition the explorer's glossary shows
    (``app_lib/glossary.py``), ``docs`` (:class:`Doc` rows) its lines of the table in
    ``docs/measures.md``, which :func:`docs_table` writes (``python
    scripts/measures_table.py``) and a test compares with the page.  A family module
    declares them at its end with :func:`describe` (or passes them to :class:`Family`).

How to add a measure
--------------------
Write one file, ``tiecore/measures/<name>.py``: the family's docstring (its formula
and the tool whose convention it follows), any component of its own
(:class:`tiecore.engine.profiles.Component` in its three modes, added with
:func:`tiecore.engine.profiles.register_component`), its variance and bounds
hooks (or :data:`COUNT_MOMENTS` / :data:`LINEAR_MOMENTS`), and
``register(Family(..., words=Words(...), docs=(Doc(...),)))`` at the bottom, and its
line in :data:`HOMES` (its module and the names it registers; without it the module is
still found, by listing the package, but a lookup of its names imports every family
module first, and ``tests/measures/test_registry.py`` says which line is missing).
The glossary and the docs table read its words; run ``python
scripts/measures_table.py`` to write its rows into ``docs/measures.md``.  Its tests:
its slow, obvious value on one ordering in ``tests/reference.py`` (``@reference``,
which ``tests/reference.py``'s ``measure`` dispatches to by family name), and a test
against brute force over every ordering (``tests/evaluation/test_against_bruteforce.py``
shows the pattern) and against its reference tool (``tests/measures/test_sdcg.py`` is a
small example).

Examples
--------
>>> from tiecore.engine.profiles import RANK
>>> FAMILIES["AP"].divisor is RANK, lookup("map").name, lookup("MRR").name
(True, 'AP', 'RR')
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from tiecore.engine import moments
from tiecore.engine.profiles import COMPONENTS, GAINS, ONE, Divisor
from tiecore.errors import InputError

if TYPE_CHECKING:
    from tiecore.engine.kernels import HeadSum as Measure


@dataclass(frozen=True)
class Param:
    """A measure parameter: its default, its choices (None: a number in ``(low, high)``,
    or in ``[low, high]`` when ``closed``; a whole number when ``integer``)
    and what it means (``description``, shown in the glossary and the docs); a ``required``
    one has no default: a name must give it (ir_measures' ``SDCG(max_rel=3)@10``)."""

    default: str
    choices: tuple[str, ...] | None = None
    low: float = 0.0
    high: float = 1.0
    closed: bool = False
    description: str = ""
    integer: bool = False
    required: bool = False

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
        if self.closed and not self.low <= number <= self.high:
            raise ValueError(f"must be from {self.low:g} to {self.high:g}")
        if not self.closed and not self.low < number < self.high:
            raise ValueError(f"must be between {self.low:g} and {self.high:g} (exclusive)")
        if self.integer:
            if not number.is_integer():
                raise ValueError("must be an integer")
            return str(int(number))
        return repr(number)


@dataclass(frozen=True)
class Words:
    """What a family means in plain words, for a student (the explorer's glossary).

    ``cut`` is ``(name, text)`` for a measure with a cutoff, ``whole`` for one without
    (None: the family has no such form, or it reads the same).  In both ``{k}`` is the
    cutoff, ``{gain}`` what a document's gain is, and ``{name}`` the value of each
    parameter ``name`` of the family (``{p}``, ``{recall}``, ...).  ``extra`` holds
    ``(parameter, value, text)``: ``text`` is added to the definition of a measure whose
    parameter has that value (``"*"``: any value but its default); one that speaks of the
    cutoff (``{k}``) only where the measure has one.
    """

    cut: tuple[str, str] | None = None
    whole: tuple[str, str] | None = None
    extra: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.cut is None and self.whole is None:
            raise ValueError("a family's words need a cut or a whole form")

    def form(self, cutoff: int | None) -> tuple[str, str]:
        """``(name, text)`` for a measure with ``cutoff`` (None: without one)."""
        if cutoff is not None and self.cut is not None:
            return self.cut
        return self.whole if self.whole is not None else self.cut


@dataclass(frozen=True)
class Doc:
    """One row of the table of measures in ``docs/measures.md``: the names (``measure``,
    markdown), the other names accepted (``accepted``), the formula and convention as
    the page prints it (``formula``) and what it is checked against besides brute force
    (``checked``, ``–`` for nothing)."""

    measure: str
    accepted: str
    formula: str
    checked: str = "–"

    def row(self) -> str:
        """The markdown row."""
        cells = (self.measure, self.accepted, self.formula, self.checked)
        if any("|" in cell or "\n" in cell for cell in cells):
            raise ValueError(f"a docs row holds a | or a line break: {self.measure}")
        return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"


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
    scale: float | Callable = 1.0
    offset: float | Callable = 0.0
    variance: Callable | None = None
    bounds: Callable | None = None
    distribution: Callable | None = None
    check: Callable | None = None
    values: Callable | None = None
    spread: Callable | None = None
    sample: Callable | None = None
    aggregate: str = "mean"
    formula: Callable | None = None
    inexact: str = ""
    inexact_spread: str = ""
    words: Words | None = None
    docs: tuple[Doc, ...] = ()

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


# ------------------------------------------------------ shared by several families


def each(hook: Callable | None) -> Callable | None:
    """A family hook over all its measures at once, from ``hook`` written for one.

    ``each(hook)(measures, *args, **kwargs)`` is ``[hook(m, *args, **kwargs) for m in
    measures]``; for ``sample``, the measure's own stream key of ``rngs`` is its
    ``rng``.  None stays None (a family without that hook).
    """
    if hook is None:
        return None

    def over(measures: Sequence, *args: Any, rngs: Sequence | None = None, **kwargs: Any) -> list:
        if rngs is None:
            return [hook(measure, *args, **kwargs) for measure in measures]
        return [
            hook(measure, *args, rng=key, **kwargs)
            for measure, key in zip(measures, rngs, strict=True)
        ]

    over.__name__ = over.__qualname__ = f"each({hook.__name__})"
    over.__doc__ = hook.__doc__
    return over


def num_rel(measure, judgments, ranking, cut) -> np.ndarray:
    """``num_rel``: the relevant qrels docs, retrieved or not (R, Rprec, Bpref, AP, SetR)."""
    return judgments.num_rel.astype(np.float64)


def ones(measure, judgments, ranking, cut) -> np.ndarray:
    """1 for every query (the unnormalised sums)."""
    return np.ones(len(judgments.qids))


def retrieved_in_cut(measure, judgments, ranking, cut) -> np.ndarray:
    """``min(cut, retrieved)``: the docs in the top k, or retrieved up to the depth
    (ir_measures' Judged@k; trec_eval's set_P)."""
    if ranking is None:
        raise ValueError(f"{measure} needs the ranking for its denominator")
    return np.minimum(cut, ranking.counts).astype(np.float64)


def unscaled_gain_component(measure: Measure) -> str:
    """Unnormalised sums (DCG, CG, RBP) take exp gains as they are (``inf`` past level
    1023, refused by the command), not scaled per query as nDCG's ratio allows."""
    return "gain:exp_unscaled" if measure.gain == "exp" else f"gain:{measure.gain}"


#: The gain parameter of nDCG, DCG and CG.
GAIN = Param(
    "linear", GAINS, description="linear: the qrels level; exp: 2^level - 1 (Burges et al.)"
)
#: The variance and bounds of a count of relevant docs above the cut (hypergeometric).
COUNT_MOMENTS = {
    "variance": moments.var_count,
    "bounds": moments.bounds_count,
    "distribution": moments.count_distribution,
}
#: The variance and bounds of a sum of document values weighted by rank.
LINEAR_MOMENTS = {"variance": moments.var_linear, "bounds": moments.bounds_linear}

#: Each family module of this package -> the names its families answer to (each family's
#: name in lower case, then its aliases), in :data:`FAMILIES`' order (the docs table's and
#: the messages'); the module is imported when one of its names is first looked up.  A
#: test imports every module and checks this against what each registers, so it cannot
#: drift; a module missing here is still found (:func:`family_modules`), only later.
HOMES: dict[str, tuple[str, ...]] = {
    "p": ("p", "precision"),
    "r": ("r", "recall"),
    "f1": ("f1",),
    "ap": ("ap", "map", "map_cut"),
    "rr": ("rr", "mrr", "recip_rank"),
    "success": ("success",),
    "rprec": ("rprec",),
    "bpref": ("bpref",),
    "ndcg": ("ndcg", "ndcg_cut"),
    "dcg": ("dcg",),
    "cg": ("cg",),
    "judged": ("judged",),
    "rbp": ("rbp", "rbp_residual", "rbp_res"),
    "err": ("err",),
    "iprec": ("iprec", "iprec_at_recall"),
    "infap": ("infap",),
    "gmap": ("gmap", "gm_map"),
    "unjudged": ("unjudged", "unj"),
    "setp": ("setp", "set_p"),
    "setr": ("setr", "set_recall"),
    "setf": ("setf", "set_f"),
    "numret": ("numret", "num_ret"),
    "numrel": ("numrel", "num_rel"),
    "numrelret": ("numrelret", "num_rel_ret"),
    "utility": ("utility",),
    "setrelp": ("setrelp", "set_relative_p"),
    "setap": ("setap", "set_map"),
    "relp": ("relp", "relative_p"),
    "numnonrel": ("numnonreljudgedret", "num_nonrel_judged_ret"),
    "gmbpref": ("gmbpref", "gm_bpref"),
    "elevenpt": ("iprecavg", "11pt_avg"),
    "bing": ("bing",),
    "g": ("g",),
    "ndcgrel": ("ndcgrel", "ndcg_rel"),
    "rndcg": ("rndcg",),
    "sdcg": ("sdcg",),
}
#: The modules of this package that register no family: the families import the helpers
#: they need, and the command line the rest where it uses them (``relstring`` only for
#: trec_eval's relstring).
NOT_FAMILIES = frozenset(
    {"registry", "measure", "ir_names", "orderings", "gains", "iprec_count", "local_ideal"}
    | {"prefs", "relstring", "trec_eval_table"}
)
#: Each name of :data:`HOMES` -> (its module, its place in FAMILIES' order).
_HOME_OF = {
    name: (module, place)
    for place, (module, name) in enumerate(
        (module, name) for module, names in HOMES.items() for name in names
    )
}


def family_modules() -> list[str]:
    """Every family module of this package: those of :data:`HOMES`, in its order, then any
    other module of the folder (not :data:`NOT_FAMILIES`), by name."""
    found = sorted(
        name[:-3]
        for name in os.listdir(os.path.dirname(__file__))
        if name.endswith(".py") and not name.startswith("_")
    )
    return [*HOMES, *(name for name in found if name not in {*HOMES, *NOT_FAMILIES})]


class _Families(MutableMapping):
    """:data:`FAMILIES`: the families registered, each imported with its module on first
    look-up (:data:`HOMES`), all of them when the table is listed, and listed in
    :data:`HOMES`' order whatever order they were imported in."""

    def __init__(self) -> None:
        self._found: dict[str, Family] = {}
        self._complete = self._listing = False

    def loaded(self) -> dict[str, Family]:
        """The families imported so far (no module is imported)."""
        return self._found

    def load(self, name: str) -> None:
        """Import the module that registers ``name`` (any case, or an alias); every family
        module when :data:`HOMES` does not name it, or its module does not register it."""
        home = _HOME_OF.get(name.lower())
        if home is not None:
            # __import__, not importlib's: -X importtime sees it
            __import__(f"{__package__}.{home[0]}")  # lazy: -m map: 1 of 36 (29 -> 20 ms)
        if not any(name.lower() in _names(f) for f in self._found.values()):
            self.load_all()

    def load_all(self) -> None:
        """Import every family module (:func:`family_modules`), once."""
        if self._complete or self._listing:  # (a module imported here may list the table)
            return
        self._listing = True
        try:
            for module in family_modules():
                __import__(f"{__package__}.{module}")  # lazy: all 36 only when listed
            self._complete = True
        finally:
            self._listing = False

    def __getitem__(self, name: str) -> Family:
        if name not in self._found:
            self.load(name)
        return self._found[name]

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str) and name not in self._found:
            self.load(name)
        return name in self._found

    def __setitem__(self, name: str, family: Family) -> None:
        self._found[name] = family

    def __delitem__(self, name: str) -> None:
        del self._found[name]

    def __iter__(self) -> Iterator[str]:
        self.load_all()
        return iter(sorted(self._found, key=_place))

    def __len__(self) -> int:
        self.load_all()
        return len(self._found)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def _place(name: str) -> tuple[int, str]:
    """A family's place in :data:`FAMILIES`' order: its line of :data:`HOMES`, and a
    family :data:`HOMES` lacks after all the others, by name."""
    return _HOME_OF.get(name.lower(), (None, len(_HOME_OF)))[1], name


#: Every family by its ir_measures name, in :data:`HOMES`' order (each family module
#: imported on first use of one of its names; listing the table imports all of them).
FAMILIES: MutableMapping[str, Family] = _Families()


def _registered() -> Iterable[Family]:
    """The families registered so far, importing none (a test may swap in a plain dict)."""
    found = FAMILIES.loaded() if isinstance(FAMILIES, _Families) else FAMILIES
    return found.values()


def register(family: Family) -> Family:
    """Add ``family`` to :data:`FAMILIES` (its name and aliases must be new)."""
    taken = {alias for other in _registered() for alias in _names(other)}
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
    for family in _registered():
        if name in _names(family):
            return family
    if isinstance(FAMILIES, _Families):
        FAMILIES.load(name)  # its module (every family module for an unknown name)
        for family in _registered():
            if name in _names(family):
                return family
    return None


def describe(name: str, *, words: Words, docs: tuple[Doc, ...]) -> Family:
    """Give the registered family ``name`` its ``words`` and ``docs`` (the declaration
    block at the end of a family module; a new module may pass both to :class:`Family`).
    """
    family = FAMILIES[name]
    if family.words is not None or family.docs:
        raise ValueError(f"{name} is described already")
    FAMILIES[name] = replace(family, words=words, docs=tuple(docs))
    return FAMILIES[name]


#: The header of the table of measures in ``docs/measures.md``.
DOCS_HEADER = (
    "| measure | also accepted | convention | checked against (besides brute force) |\n"
    "|---|---|---|---|\n"
)


def docs_table() -> str:
    """The table of measures of ``docs/measures.md``: every family's :class:`Doc` rows,
    in :data:`FAMILIES`' order (``scripts/measures_table.py`` writes it into the page;
    ``tests/test_readme.py`` checks the page holds it as written here).

    >>> docs_table().splitlines()[2].startswith("| `P@k` | `P_k` |")
    True
    """
    return DOCS_HEADER + "".join(
        doc.row() + "\n" for family in FAMILIES.values() for doc in family.docs
    )


def refuse_inexact(measures: Iterable[Measure], where: str, *, spread: bool = True) -> None:
    """Refuse families with no exact tie-aware summary (``aggregate="geometric"``: GMAP).

    The mean over orderings of a geometric mean over queries is
    ``prod_q E[max(AP_q, eps)^(1/Q)]``: it needs every query's whole AP
    distribution, so tiecore gives GMAP oblivious (one ordering, its min and max
    through the pessimistic and optimistic tie-breaks) and sampled (an unbiased
    estimate of that mean with its standard error), never a plausible stand-in.  With
    ``spread`` False only the value must be exact (a family's ``inexact_spread`` passes).

    >>> from tiecore.measures import Measure
    >>> refuse_inexact([Measure.parse("AP")], "ties='aware'") is None
    True
    """
    inexact = [m for m in measures if not (m.exact_spread if spread else m.exact_value)]
    if inexact:
        reasons = dict.fromkeys(
            m.spec.inexact
            or m.spec.inexact_spread
            or "the mean over orderings of a geometric mean needs every query's whole distribution"
            for m in inexact
        )
        raise InputError(
            "measure",
            None,
            f"{', '.join(map(str, inexact))} has no exact value under {where}: "
            f"{'; '.join(reasons)}",
            "ties='sampled' (an estimate of that mean, with its standard error), or "
            "ties='oblivious' with tiebreak='pessimistic' / 'optimistic' for its exact "
            "min and max",
        )

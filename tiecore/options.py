"""One declaration of every keyword option: the API checks it, the CLI and the app offer it.

Each option's constraint is declared once here, as small objects in the spirit of
scikit-learn's ``validate_params``: :class:`Options` (one of some strings),
:class:`Interval` (an integer or a real number between bounds, each end open or
closed), :class:`Boolean`, ``None`` (allowed as is) and :class:`Satisfies` (a
predicate, for special cases).  A value is valid when it meets any one constraint of
its list.  :func:`validate_params` checks a public function's arguments against such
a dict; the CLI takes its ``choices`` and numeric parsers (:func:`cli_type`) and the
app its widgets' options and bounds from the same objects.

A violation is one :class:`tiecore.errors.InputError` (a ``ValueError``) naming the
option, the value given and what was expected:

>>> check("depth", 0, DEPTH)
Traceback (most recent call last):
...
tiecore.errors.InputError: depth: 0 is out of range (expected a positive integer or None)
>>> check("correction", "hochberg", CORRECTION)
Traceback (most recent call last):
...
tiecore.errors.InputError: correction: unknown correction 'hochberg' (expected one of none, \
holm, bonferroni, bh)

This module imports no numpy, pandas or scipy (the CLI builds its parser from it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any, TypeVar, cast

from tiecore.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])


# --------------------------------------------------------------------------- constraints


class Constraint:
    """One kind of valid value: :meth:`accepts` it, :meth:`describe` it, say what is wrong."""

    def accepts(self, value: object) -> bool:
        """Whether ``value`` meets the constraint."""
        raise NotImplementedError

    def describe(self) -> str:
        """What is expected, for people: ``"an integer >= 2"``."""
        raise NotImplementedError

    def of_kind(self, value: object) -> bool:
        """Whether ``value`` has the constraint's type (then :meth:`problem` says why not)."""
        return False

    def problem(self, name: str, value: object) -> str:
        """What is wrong with a ``value`` of the right kind that is not accepted."""
        return f"{value!r} is not valid"


class Options(Constraint):
    """One of a fixed set of strings (``choices`` keeps their order, for CLI and app).

    >>> Options("linear", "exp").accepts("exp"), Options("linear", "exp").describe()
    (True, 'one of linear, exp')
    """

    def __init__(self, *choices: str) -> None:
        self.choices = tuple(choices)

    def accepts(self, value: object) -> bool:
        return isinstance(value, str) and value in self.choices

    def of_kind(self, value: object) -> bool:
        return isinstance(value, str)

    def describe(self) -> str:
        return "one of " + ", ".join(self.choices)

    def problem(self, name: str, value: object) -> str:
        return f"unknown {name} {value!r}"

    def __repr__(self) -> str:
        return f"Options{self.choices!r}"


def _is_bool(value: object) -> bool:
    """``True``/``False`` or a numpy bool (which is not a ``numbers.Integral``)."""
    return isinstance(value, bool) or type(value).__name__ in ("bool_", "bool")


class Interval(Constraint):
    """An integer (``kind=Integral``) or a real number (``kind=Real``) between bounds.

    ``low``/``high`` None means unbounded; ``closed`` is ``"both"``, ``"left"``,
    ``"right"`` or ``"neither"``.  Booleans are never numbers here, NaN never is
    one, and an integral float (``2.0``) is not an integer.  ``noun`` words the
    out-of-range problem (``"1.5 is not a level"``) instead of ``"is out of range"``;
    ``note`` follows the description (why the bound).  ``quiet_high``: a technical upper
    bound (past any real value) left out of the description and named only when exceeded.

    >>> Interval(Integral, 1, None).describe(), Interval(Real, 0, 1, "neither").describe()
    ('a positive integer', 'a number in (0, 1)')
    >>> Interval(Integral, 1, None).accepts(True), Interval(Real, 0, 1).accepts(float("nan"))
    (False, False)
    """

    def __init__(
        self,
        kind: type,
        low: float | None,
        high: float | None,
        closed: str = "both",
        *,
        noun: str | None = None,
        note: str | None = None,
        quiet_high: bool = False,
    ) -> None:
        if kind not in (Integral, Real) or closed not in ("both", "left", "right", "neither"):
            raise TypeError(f"Interval({kind!r}, closed={closed!r}) is not a constraint")
        self.kind, self.low, self.high, self.closed, self.noun = kind, low, high, closed, noun
        self.note, self.quiet_high = note, quiet_high

    def of_kind(self, value: object) -> bool:
        return isinstance(value, self.kind) and not _is_bool(value)

    def accepts(self, value: object) -> bool:
        kind = type(value)  # plain int and float first: ABC checks cost microseconds
        if not (kind is int or (kind is float and self.kind is Real) or self.of_kind(value)):
            return False
        return value == value and self.within(cast(float, value))  # NaN is not equal to itself

    def within(self, value: float) -> bool:
        """Whether a number lies between the bounds (an ``inf`` does not past a bound)."""
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def describe(self) -> str:
        return self._bounds() + (f"; {self.note}" if self.note else "")

    def _bounds(self) -> str:
        integer = self.kind is Integral
        what = "an integer" if integer else "a number"
        low, high = self.low, None if self.quiet_high else self.high
        if low is None and high is None:
            return what
        if high is None:
            left = self.closed in ("both", "left")
            if integer and left and low == 1:
                return "a positive integer"
            if integer and left and low == 0:
                return "a non-negative integer"
            return f"{what} {'>=' if left else '>'} {low}"
        if low is None:
            return f"{what} {'<=' if self.closed in ('both', 'right') else '<'} {high}"
        opening = "[" if self.closed in ("both", "left") else "("
        closing = "]" if self.closed in ("both", "right") else ")"
        return f"{what} in {opening}{low}, {high}{closing}"

    def problem(self, name: str, value: object) -> str:
        if _is_nan(value):
            return f"{value!r} is not a number"
        if self.quiet_high and self.of_kind(value) and cast(float, value) > cast(float, self.high):
            return f"{value!r} is out of range (at most {self.high})"
        return f"{value!r} is not a {self.noun}" if self.noun else f"{value!r} is out of range"

    def parse(self, text: str) -> int | float:
        """A command-line string as this interval's kind (``ValueError`` when it is not)."""
        return int(text) if self.kind is Integral else float(text)

    def __repr__(self) -> str:
        name = self.kind.__name__
        return f"Interval({name}, {self.low!r}, {self.high!r}, {self.closed!r})"


class Boolean(Constraint):
    """``True`` or ``False`` (a numpy bool too; not 0 or 1)."""

    def accepts(self, value: object) -> bool:
        return _is_bool(value)

    def describe(self) -> str:
        return "True or False"

    def __repr__(self) -> str:
        return "Boolean()"


class Satisfies(Constraint):
    """Whatever ``predicate`` accepts, described by ``description`` (special cases).

    ``kind``: the type of the values it words as ``"... is not valid"`` (others get
    their type named).

    >>> odd = Satisfies(lambda v: isinstance(v, int) and v % 2 == 1, "an odd integer", int)
    >>> odd.accepts(3), odd.describe(), problem("n", 4, odd)
    (True, 'an odd integer', '4 is not valid')
    """

    def __init__(
        self,
        predicate: Callable[[object], bool],
        description: str,
        kind: type | tuple[type, ...] | None = None,
    ) -> None:
        self.predicate, self.description, self.kind = predicate, description, kind

    def of_kind(self, value: object) -> bool:
        return self.kind is not None and isinstance(value, self.kind)

    def accepts(self, value: object) -> bool:
        return bool(self.predicate(value))

    def describe(self) -> str:
        return self.description

    def __repr__(self) -> str:
        return f"Satisfies({self.description!r})"


class _NoneConstraint(Constraint):
    """``None``, written as ``None`` in a constraint list."""

    def accepts(self, value: object) -> bool:
        return value is None

    def describe(self) -> str:
        return "None"


def _is_nan(value: object) -> bool:
    try:
        return isinstance(value, Real) and math.isnan(value)
    except (TypeError, ValueError):
        return False


Spec = Constraint | None | Sequence[Constraint | None]


def constraints_of(spec: Spec) -> tuple[Constraint, ...]:
    """A spec (one constraint, ``None``, or a list of them) as a tuple of constraints."""
    items = spec if isinstance(spec, (list, tuple)) else (spec,)
    return tuple(_NoneConstraint() if item is None else item for item in items)


def expected(spec: Spec) -> str:
    """What a spec expects, its constraints joined by ``or``.

    >>> expected([Interval(Integral, 1, None), None])
    'a positive integer or None'
    """
    return " or ".join(c.describe() for c in constraints_of(spec))


def problem(name: str, value: object, spec: Spec) -> str | None:
    """What is wrong with ``value`` for option ``name`` (None when it is valid).

    The first constraint of the value's kind words it (``unknown ties 'x'``,
    ``0 is out of range``); a value of no listed kind gets its type (``True is a bool``).
    """
    found = constraints_of(spec)
    if any(c.accepts(value) for c in found):
        return None
    if _is_nan(value):
        return f"{value!r} is not a number"
    if value is None:
        return "None is not allowed"
    for constraint in found:
        if constraint.of_kind(value):
            return constraint.problem(name, value)
    kind = type(value).__name__
    article = "an" if kind[:1] in "aeiou" else "a"
    return f"{value!r} is {article} {kind}"


def check(name: str, value: object, spec: Spec) -> None:
    """Raise one :class:`InputError` naming ``name``, the value and what is expected.

    >>> check("depth", None, DEPTH)  # valid: nothing happens
    """
    _check(name, value, constraints_of(spec))


def _check(name: str, value: object, found: tuple[Constraint, ...]) -> None:
    """:func:`check` with the constraints already listed (the decorator's fast path)."""
    for constraint in found:
        if constraint.accepts(value):
            return
    raise InputError(name, None, cast(str, problem(name, value, found)), expected(found))


def validate_params(params: Mapping[str, Spec]) -> Callable[[F], F]:
    """Decorate a function so that the arguments named in ``params`` are checked first.

    Only the arguments given are checked (the defaults are valid by construction),
    with :func:`check`, in the function's parameter order; the decorated function
    keeps its name, signature and docstring, and ``func.params`` holds ``params``.
    Arguments are matched to names from the function's code object (a few
    microseconds a call; ``inspect.signature().bind`` costs ten times that).

    >>> @validate_params({"ties": TIES})
    ... def f(*, ties="aware"):
    ...     return ties
    >>> f(ties="sampled")
    'sampled'
    >>> f(ties="x")
    Traceback (most recent call last):
    ...
    tiecore.errors.InputError: ties: unknown ties 'x' (expected one of oblivious, aware, sampled)
    """

    def decorate(function: F) -> F:
        code = function.__code__
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        unknown = set(params) - set(names)
        if unknown:  # a declaration that names no parameter is a bug, found at import
            raise TypeError(f"{function.__qualname__} has no parameter {sorted(unknown)}")
        # (name, its position when it can be passed positionally, else None, its spec)
        order = [
            (name, at if at < code.co_argcount else None, constraints_of(params[name]))
            for at, name in enumerate(names)
            if name in params
        ]

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            for name, at, spec in order:
                if name in kwargs:
                    _check(name, kwargs[name], spec)
                elif at is not None and at < len(args):
                    _check(name, args[at], spec)
            return function(*args, **kwargs)

        checked.params = dict(params)  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]

    return decorate


def pick(table: Mapping[str, Spec], *names: str) -> dict[str, Spec]:
    """The specs of ``names`` from a table of declarations (each declared once).

    >>> list(pick(EVALUATE, "ties", "depth"))
    ['ties', 'depth']
    """
    return {name: table[name] for name in names}


# --------------------------------------------------------------------------- command line


def cli_type(spec: Spec) -> Callable[[str], object]:
    """An argparse ``type=``: the text, parsed as the spec's :class:`Interval` if it has one,
    checked against the spec (``None`` cannot be typed, so it is left out).

    A violation is an ``ArgumentTypeError`` with the API's text (``1 is out of range
    (expected ...)``), which argparse prints after ``argument --NAME:``.

    >>> cli_type(SAMPLES)("7"), cli_type(DASK_SPEC)("local:2")
    (7, 'local:2')
    """
    import argparse  # lazy: argparse (~1.5 ms), the command line's only (not the API's)

    found = tuple(c for c in constraints_of(spec) if not isinstance(c, _NoneConstraint))
    numeric = next((c for c in found if isinstance(c, Interval)), None)
    wanted = expected(found)

    def parse(text: str) -> object:
        value: object = text
        if numeric is not None:
            try:
                value = numeric.parse(text)
            except ValueError:
                what = "an integer" if numeric.kind is Integral else "a number"
                raise argparse.ArgumentTypeError(
                    f"{text!r} is not {what} (expected {wanted})"
                ) from None
        wrong = problem("", value, found)
        if wrong is not None:
            raise argparse.ArgumentTypeError(f"{wrong} (expected {wanted})")
        return value

    parse.__name__ = wanted  # argparse names the type in some messages
    return parse


# --------------------------------------------------------------------------- declarations

#: Tie modes of :func:`tiecore.evaluate`.
MODES = ("oblivious", "aware", "sampled")
#: Tie-break policies of the oblivious mode (:mod:`tiecore.engine.ranking`).
TIEBREAKS = (
    "trec_eval",
    "trec_eval_double",
    "docno_asc",
    "file_order",
    "optimistic",
    "pessimistic",
    "random",
)
#: trec_eval versions whose conventions ``tiecore eval --trec-eval`` follows (9.0.8 first,
#: the default; 10.0: see docs/cli.md).
TREC_EVAL_VERSIONS = ("9", "10")
#: The oblivious tie-break of each version: 9.0.8 compares scores as C floats, 10.0 as
#: doubles (``sim`` became a double in its trec_format.h).
TREC_EVAL_TIEBREAK = {"9": "trec_eval", "10": "trec_eval_double"}
#: Multiple-comparison corrections over all unordered pairs (``tiecore.stats.corrections``).
CORRECTIONS = ("none", "holm", "bonferroni", "bh")
#: Treatments of zero differences in the Wilcoxon test (as :func:`scipy.stats.wilcoxon`).
ZERO_METHODS = ("wilcox", "pratt", "zsplit")
#: Bootstrap interval methods (as :func:`scipy.stats.bootstrap`).
CI_METHODS = ("BCa", "percentile", "basic")
#: nDCG gains: the level, or ``2**level - 1``.
GAINS = ("linear", "exp")
#: Output formats of ``tiecore eval`` and of ``tiecore compare`` (``format_comparison``).
EVAL_FORMATS = ("trec", "csv", "json")
COMPARE_FORMATS = ("text", "csv", "json")

TIES = Options(*MODES)
TIEBREAK = Options(*TIEBREAKS)
#: The exact modes (one value per query, no sampling): the metrics' and the small path's.
EXACT_MODES = tuple(mode for mode in MODES if mode != "sampled")
#: The tie-breaks that need no seed (one fixed order: the report's oblivious column).
FIXED_TIEBREAKS = tuple(t for t in TIEBREAKS if t != "random")
#: The tie modes and tie-breaks of :mod:`tiecore.metrics` (no sampling there).
METRIC_TIES = Options(*sorted(EXACT_MODES))
METRIC_TIEBREAK = Options(*FIXED_TIEBREAKS)
FIXED_TIEBREAK = METRIC_TIEBREAK
GAIN = Options(*GAINS)
CORRECTION = Options(*CORRECTIONS)
ZERO_METHOD = Options(*ZERO_METHODS)
CI_METHOD = Options(*CI_METHODS)
COMPARE_FORMAT = Options(*COMPARE_FORMATS)

#: Random tie-breaks: at least two, so that a std exists.
SAMPLES = Interval(Integral, 2, None, note="a std needs at least 2 samples")
#: Seeds of numpy's generators are non-negative.
SEED = Interval(Integral, 0, None)
#: A relevance level: an integer a qrels level (int64) can reach (above, none is relevant).
REL_LEVEL = Interval(Integral, None, 2**63 - 1, quiet_high=True)
#: The largest depth and cutoff (trec_eval's are C ints; past int64 numpy cannot hold one,
#: and ``-M 99999999999999999999`` raised an OverflowError): ``tiecore.measures.MAX_CUTOFF``.
LARGEST_CUT = 2**31 - 1
#: trec_eval ``-M``: cut every ranking at this many documents, or not at all.
DEPTH = [Interval(Integral, 1, LARGEST_CUT, quiet_high=True), None]
#: A cutoff ``k`` (``None``: no cutoff, where that is allowed).
CUTOFF = Interval(Integral, 1, LARGEST_CUT, quiet_high=True)
POSITIVE = Interval(Integral, 1, None)
NON_NEGATIVE = Interval(Integral, 0, None)
#: A number of score levels (:func:`tiecore.explain.builder.quantise`), None for the
#: scores as they are.
LEVELS = [Interval(Integral, 1, None, noun="number of levels"), None]
#: A probability (``closest_pairs``' band) and a non-negative width (in tie sd).
PROBABILITY = Interval(Real, 0, 1)
WIDTH = Interval(Real, 0, None)
#: Confidence level of intervals.
CONFIDENCE = Interval(Real, 0, 1, "neither", noun="level")
#: Significance level of verdicts: 0 < alpha < 1 (at 1 every p-value is below it).
SIGNIFICANCE = Interval(Real, 0, 1, "neither", noun="significance level")
BOOL = Boolean()
#: A run's name (:func:`tiecore.compare.compare`'s ``baseline``; the runs check the rest).
RUN_NAME = Satisfies(lambda value: isinstance(value, str), "a run's name")


def _is_measure(value: object) -> bool:
    """A measure object, told by its shape: tiecore's :class:`~tiecore.measures.Measure`
    (``family`` and ``cutoff``) or an ir_measures measure (``NAME``, as
    :func:`tiecore.measures.parse_measures` tells them).  Duck-typed, so that the
    declarations import nothing above them."""
    return hasattr(value, "NAME") or (hasattr(value, "family") and hasattr(value, "cutoff"))


def _measures(value: object) -> bool:
    """A measure name, a measure object (:func:`_is_measure`), or an iterable of them (a
    list, a tuple, a generator; the items of a list or tuple are checked here, the
    others by the parser)."""
    if isinstance(value, str) or _is_measure(value):
        return True
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, str) or _is_measure(v) for v in value)
    return isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping))


MEASURES = Satisfies(
    _measures, "a measure name such as 'AP' or 'P@10' (or a measure object), or a list of them"
)


def _dask_spec(value: object) -> bool:
    if not isinstance(value, str) or not value.strip():
        return False
    if value.startswith("local:"):
        count = value.partition(":")[2]
        return count.isdigit() and int(count) >= 1
    return True


#: ``tiecore.distributed.connect``: ``local:N`` or a scheduler address (or None).
DASK_SPEC = [
    Satisfies(_dask_spec, "local:N with N >= 1 workers, a scheduler address", str),
    None,
]

#: The options of :func:`tiecore.evaluate` (and of the modes it shares with others).
EVALUATE: dict[str, Spec] = {
    "measures": MEASURES,
    "ties": TIES,
    "tiebreak": TIEBREAK,
    "samples": SAMPLES,
    "seed": SEED,
    "rel_level": REL_LEVEL,
    "depth": DEPTH,
    "complete": BOOL,
    "per_query": BOOL,
}
#: The options of :func:`tiecore.spread.evaluate_spread`.
SPREAD = {k: EVALUATE[k] for k in ("measures", "rel_level", "depth", "complete", "per_query")}
#: The statistics options of :func:`tiecore.compare.compare` and its helpers.
STATISTICS: dict[str, Spec] = {
    "correction": CORRECTION,
    "confidence": CONFIDENCE,
    "ci_method": CI_METHOD,
    "n_bootstrap": POSITIVE,
    "zero_method": ZERO_METHOD,
    "n_resamples": POSITIVE,
    "tukey": BOOL,
    "alpha": SIGNIFICANCE,
}
#: The options of :func:`tiecore.compare.compare`.
COMPARE: dict[str, Spec] = {
    **{k: EVALUATE[k] for k in ("samples", "seed", "rel_level", "depth", "complete")},
    **{k: v for k, v in STATISTICS.items() if k != "alpha"},
    "baseline": [RUN_NAME, None],
}
#: The options of the array metrics (:mod:`tiecore.metrics`); ``k`` where it may be None.
METRICS: dict[str, Spec] = {
    "k": [CUTOFF, None],
    "ties": METRIC_TIES,
    "tiebreak": METRIC_TIEBREAK,
    "rel_level": REL_LEVEL,
    "average": BOOL,
    "gain": GAIN,
    "spread": BOOL,
}
#: The metrics whose ``k`` is required.
METRICS_AT_K: dict[str, Spec] = {**METRICS, "k": CUTOFF}


def _tiebreak_list(value: object) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(v, str) and v in TIEBREAKS for v in value)
    )


#: Tie-break policies to compare (:func:`tiecore.explain.policies.policy_values`, ``rank_ranges``).
POLICIES = Satisfies(
    _tiebreak_list, "a non-empty list of tie-breaks (" + ", ".join(TIEBREAKS) + ")", (list, tuple)
)


def _level_list(value: object) -> bool:
    return isinstance(value, (list, tuple, range)) and all(
        any(c.accepts(v) for c in constraints_of(LEVELS)) for v in value
    )


#: The numbers of score levels :func:`tiecore.explain.builder.sweep` tries.
LEVEL_LIST = Satisfies(
    _level_list, "a list of numbers of levels (positive integers, or None)", (list, tuple, range)
)

#: The options of :func:`tiecore.spread.tie_groups` and ``distribution`` (and others).
TIE_GROUPS = {k: EVALUATE[k] for k in ("rel_level", "depth")}
#: The options of :func:`tiecore.spread.tie_profile`: ``top`` is a rank.
TIE_PROFILE: dict[str, Spec] = {**TIE_GROUPS, "top": [CUTOFF, None]}
#: The options of :mod:`tiecore.explain.anatomy` (each function picks its own).
ANATOMY: dict[str, Spec] = {
    "rel_level": REL_LEVEL,
    "gain": GAIN,
    "tiebreak": TIEBREAK,
    "samples": SAMPLES,
    "seed": SEED,
    "k": NON_NEGATIVE,  # paper_quantities: R-prec of a query without relevant docs cuts at 0
    "limit": NON_NEGATIVE,
    "policies": POLICIES,
    "top": [CUTOFF, None],
}
#: The options of :mod:`tiecore.explain.builder` (``levels``: one for ``quantise``, a list
#: for ``sweep``).
BUILDER: dict[str, Spec] = {"rel_level": REL_LEVEL, "tiebreak": TIEBREAK}
#: The options of :mod:`tiecore.interop`.
INTEROP: dict[str, Spec] = {**TIE_GROUPS, "per_query": BOOL}
#: The options of :mod:`tiecore.report` (its CLI offers the :data:`FIXED_TIEBREAKS`).
REPORT: dict[str, Spec] = {
    "tiebreak": TIEBREAK,
    "samples": [SAMPLES, None],
    "seed": SEED,
    **TIE_GROUPS,
    "alpha": SIGNIFICANCE,
    "digits": NON_NEGATIVE,
    "low": PROBABILITY,
    "high": PROBABILITY,
    "width": WIDTH,
    "count": POSITIVE,
}

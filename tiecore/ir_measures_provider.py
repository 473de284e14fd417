"""tiecore as an ir_measures provider: ir_measures' API, tiecore's values.

Importing this module registers three providers with ir_measures
(``ir_measures.providers.registry``), one per tie mode:

* ``"tiecore"``: tie-aware, the exact mean over all orderings of tied documents
  (McSherry & Najork, ECIR 2008); the same values as :func:`tiecore.evaluate`;
* ``"tiecore_oblivious"``: one ordering, trec_eval's (scores as 32-bit floats, then
  docno descending): the values of ir_measures' ``pytrec_eval`` provider;
* ``"tiecore_sampled"``: the mean of 1000 random tie-breaks (seed 0).

They take ir_measures' measure objects, qrels and runs (namedtuples, DataFrames,
``{qid: {docno: value}}`` dicts) and answer through ir_measures' own API
(``evaluator(measures, qrels)``, ``calc_aggregate``, ``iter_calc``, ``calc``)::

    import ir_measures
    from tiecore.ir_measures_provider import tiecore_aware
    tiecore_aware.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.AP], qrels, run)

Other settings: ``TiecoreProvider(ties="sampled", samples=200, seed=1)``.
:func:`as_default` puts a provider first in ``ir_measures.DefaultPipeline``, which
``ir_measures.iter_calc`` / ``calc_aggregate`` / ``evaluator`` use, and so does
PyTerrier's ``pt.Experiment`` (it calls ``ir_measures.iter_calc``)::

    with as_default():  # tie-aware values for every measure tiecore has
        pt.Experiment([bm25], topics, qrels, eval_metrics=[ir_measures.nDCG @ 10])

As with ir_measures' pytrec_eval provider, a query of the qrels that the run lacks scores
the measure's default (0) in ``iter_calc`` and the aggregate averages over every qrels
query (tiecore's ``complete=True``); queries only the run has are ignored; an empty run
scores every qrels query 0 and empty qrels give nothing (NaN aggregates), where
:func:`tiecore.evaluate` refuses empty input as a likely mistake.

A measure is supported when tiecore has it with the same definition
(:func:`tiecore.interop.measure_name`); :meth:`TiecoreProvider.supports` says False
for the others (such as ``ERR``, ``alpha_nDCG``, ``Judged`` with ``judged_only``,
non-integer nDCG gains; GMAP-like measures in the aware mode) and ``evaluator`` raises
``ValueError`` naming them, as ir_measures' providers do.  As ir_measures' pytrec_eval
provider reads them: a measure's ``rel`` is the evaluation's relevance level;
``judged_only=True`` removes the run's docs without a judgment of level 0 or more
first (trec_eval's ``-J``); ``nDCG(gains={0: 0, 1: 1, 2: 3})`` maps each qrels level to
its gain (levels not named kept); ``SetP(relative=True)`` (``SetRelP``) is trec_eval's
``set_relative_P``, ``SetAP`` its ``set_map``, ``SetF(beta=b)`` its ``set_F.b``; measures
that differ in these are evaluated in separate passes.  ``NumQ`` is 1 for each query of
the run that has judgments (summed by ir_measures' aggregate).

What the user reads does not show the mode (ir_measures' measure objects and PyTerrier's
columns are the same whoever computed them), so the mode is said where it can be:

* in each provider's ``NAME`` and ``repr`` (``TiecoreProvider(ties='aware', ...)``), which
  ``with as_default() as provider`` gives;
* within :func:`as_default`, measures tiecore lacks still come from ir_measures' other
  providers, and each evaluation that takes some says so in one
  :class:`~tiecore.errors.TieCoreWarning` naming them and their providers (one table
  would otherwise mix tie-aware and trec_eval numbers unsaid); ``as_default(strict=True)``
  refuses them instead;
* results follow the order the measures were given (ir_measures' own pipeline keeps them
  in sets, so PyTerrier's columns would change with the hash seed).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import typing
import warnings
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import ir_measures
import pandas as pd
from ir_measures import Metric
from ir_measures.providers.base import NOT_PROVIDED, Any, Evaluator, Provider
from ir_measures.util import QrelsConverter, RunConverter

from tiecore.errors import InputError, TieCoreWarning
from tiecore.evaluation.core import evaluate
from tiecore.evaluation.evaluator import check_measures
from tiecore.interop import measure_name
from tiecore.io import read_qrels, read_run
from tiecore.measures import Measure
from tiecore.options import BOOL, SAMPLES, SEED, TIEBREAK, TIES, check

if TYPE_CHECKING:
    from types import FrameType

__all__ = [
    "TiecoreEvaluator",
    "TiecoreProvider",
    "as_default",
    "tiecore_aware",
    "tiecore_oblivious",
    "tiecore_sampled",
]

_NAMES = {"aware": "tiecore", "oblivious": "tiecore_oblivious", "sampled": "tiecore_sampled"}


def _rel(measure: typing.Any) -> int:
    """The relevance level a measure asks for (1 when it has no ``rel``)."""
    if "rel" in getattr(measure, "SUPPORTED_PARAMS", {}):
        rel = measure["rel"]
        if rel is not NOT_PROVIDED and rel is not None:
            return int(rel)
    return 1


#: ir_measures' NumQ: 1 for each query the run and the qrels have (summed by its
#: aggregator), no measure of a ranking: the provider counts it itself.
_NUM_Q = "NumQ"


def _pass(measure: object) -> tuple[int, bool, tuple | None]:
    """How the inputs are read for ``measure``: its relevance level, whether only judged
    docs are kept (``judged_only``) and its gains (``nDCG(gains=...)``, sorted pairs)."""
    params = getattr(measure, "params", {})
    gains = params.get("gains")
    gains = None if gains is None or gains is NOT_PROVIDED else tuple(sorted(gains.items()))
    return _rel(measure), bool(params.get("judged_only", False)), gains


def _plain(measure: object) -> object:
    """``measure`` without ``judged_only`` and ``gains``, which the provider applies to
    its inputs rather than to the measure."""
    params = getattr(measure, "params", None)
    if not params or not {"judged_only", "gains"} & set(params):
        return measure
    kept = {k: v for k, v in params.items() if k not in ("judged_only", "gains")}
    return type(measure)(**kept)


def _listed(measures: Iterable[object]) -> list:
    """The measures once each, in the order given (ir_measures' measures are equal by name).

    ir_measures' own fallback pipeline keeps measures in sets, whose order follows
    Python's string hash seed; a list keeps the user's order from run to run.
    """
    return list(dict.fromkeys(measures))


def _braced(measures: Iterable[object]) -> str:
    """``{SetAP, NumQ}``: measures as ir_measures' errors write them, in the given order."""
    return "{" + ", ".join(str(m) for m in measures) + "}"


class TiecoreProvider(Provider):
    """An ir_measures provider whose values are tiecore's, in one tie mode.

    The mode is part of the provider's ``NAME`` (``tiecore``, ``tiecore_oblivious``,
    ``tiecore_sampled``; other settings appended) and of its ``repr``, since the measure
    objects and the numbers ir_measures and PyTerrier print do not show it.

    Parameters
    ----------
    ties : {"aware", "oblivious", "sampled"}
        ``aware`` (default): the exact mean over all orderings of tied documents;
        ``oblivious``: one ordering chosen by ``tiebreak``; ``sampled``: the mean
        of ``samples`` random tie-breaks.
    tiebreak : str
        The oblivious ordering (``trec_eval``: as pytrec_eval; see :func:`tiecore.evaluate`).
    samples, seed : int
        Sampled mode: how many random tie-breaks (at least 2), which seed (>= 0).

    Raises
    ------
    InputError
        An unknown ``ties`` or ``tiebreak``, or ``samples`` / ``seed`` out of range,
        checked here so that the mistake shows where the provider is made.

    Examples
    --------
    >>> import ir_measures
    >>> qrels = [ir_measures.Qrel("1", "c", 1)]
    >>> run = [ir_measures.ScoredDoc("1", d, s) for d, s in [("a", 2.0), ("b", 1.0), ("c", 1.0)]]
    >>> TiecoreProvider().calc_aggregate([ir_measures.RR], qrels, run)
    {RR: 0.41666666666666663}
    >>> TiecoreProvider(ties="oblivious").calc_aggregate([ir_measures.RR], qrels, run)
    {RR: 0.5}
    >>> TiecoreProvider(ties="sampled", samples=200, seed=1)
    TiecoreProvider(ties='sampled', tiebreak='trec_eval', samples=200, seed=1)
    """

    NAME = "tiecore"
    SUPPORTED_MEASURES: list = [  # noqa: RUF012 (declared so by ir_measures' Provider)
        ir_measures.measures._P(cutoff=Any(), rel=Any()),
        ir_measures.measures._R(cutoff=Any()),
        ir_measures.measures._AP(cutoff=Any(), rel=Any()),
        ir_measures.measures._RR(cutoff=Any(), rel=Any()),
        ir_measures.measures._Rprec(rel=Any()),
        ir_measures.measures._nDCG(cutoff=Any(), dcg=Any()),
        ir_measures.measures._Bpref(rel=Any()),
        ir_measures.measures._Success(cutoff=Any(), rel=Any()),
        ir_measures.measures._IPrec(recall=Any()),
        ir_measures.measures._infAP(rel=Any()),
        ir_measures.measures._Judged(cutoff=Any()),
        ir_measures.measures._RBP(p=Any(), rel=Any()),
        ir_measures.measures._SetP(rel=Any(), relative=Any(), judged_only=Any()),
        ir_measures.measures._SetR(rel=Any()),
        ir_measures.measures._SetF(rel=Any(), beta=Any(), judged_only=Any()),
        ir_measures.measures._SetAP(rel=Any(), judged_only=Any()),
        ir_measures.measures._NumQ(),
    ]  # and judged_only / gains where ir_measures' pytrec_eval provider takes them

    def __init__(
        self, ties: str = "aware", tiebreak: str = "trec_eval", samples: int = 1000, seed: int = 0
    ) -> None:
        super().__init__()
        check("ties", ties, TIES)
        check("tiebreak", tiebreak, TIEBREAK)
        check("samples", samples, SAMPLES)
        check("seed", seed, SEED)
        self.ties, self.tiebreak, self.samples, self.seed = ties, tiebreak, samples, seed
        self.NAME = _NAMES[ties]
        if (tiebreak, samples, seed) != ("trec_eval", 1000, 0):
            self.NAME += f"(tiebreak={tiebreak}, samples={samples}, seed={seed})"

    def __repr__(self) -> str:
        text = f"TiecoreProvider(ties={self.ties!r}, tiebreak={self.tiebreak!r}"
        if self.ties == "sampled" or (self.samples, self.seed) != (1000, 0):
            text += f", samples={self.samples}, seed={self.seed}"
        return text + ")"

    def name_of(self, measure: object) -> str:
        """tiecore's name of an ir_measures measure (``judged_only`` and ``gains`` aside:
        :func:`_pass`); InputError when tiecore lacks it."""
        if getattr(measure, "NAME", None) == _NUM_Q:
            return _NUM_Q
        _, _, gains = _pass(measure)
        if gains is not None and any(not isinstance(g, int) for _, g in gains):
            raise InputError(
                "measure", None, f"{measure}: gains {dict(gains)}",
                "integer gains (pytrec_eval's qrels take integer levels)",
            )  # fmt: skip
        name = measure_name(_plain(measure), rel_level=_rel(measure))
        check_measures([Measure.parse(name)], self.ties)  # the evaluator's own rule
        return name

    def supports(self, measure: typing.Any) -> bool:
        """Whether tiecore computes this measure as ir_measures defines it, in this mode."""
        measure.validate_params()
        try:
            self.name_of(measure)
        except (InputError, TypeError):
            return False
        return True

    def _evaluator(self, measures: Iterable[object], qrels: object) -> TiecoreEvaluator:
        measures = _listed(measures)
        refused = [m for m in measures if not self.supports(m)]
        if refused:
            raise ValueError(
                f"Unsupported measures {_braced(refused)} for provider {self.NAME} (tiecore has "
                "no measure with their definition)"
            )
        return TiecoreEvaluator(self, measures, _qrels_frame(qrels))

    def install_instructions(self) -> str:
        return 'pip install tiecore (from a checkout: pip install -e ".")'


class TiecoreEvaluator(Evaluator):
    """Scores runs against one set of qrels (see :class:`TiecoreProvider`).

    ``iter_calc`` yields measure by measure in the order the measures were given, each
    over the qrels' queries: those the run has, then the others with the measure's
    default (0), so that tables built from it (PyTerrier's per-query ones) keep the
    user's column order.  Run queries the qrels lack are ignored, and empty qrels give
    nothing (NaN aggregates), as ir_measures' pytrec_eval provider does.
    """

    def __init__(
        self, provider: TiecoreProvider, measures: list, qrels: pd.DataFrame | None
    ) -> None:
        qids = [] if qrels is None else list(dict.fromkeys(qrels["qid"]))
        super().__init__(measures, qids)
        self.provider, self.qrels = provider, qrels
        #: (rel level, judged only, gains) -> tiecore name -> measures; NumQ's apart
        self.passes: dict[tuple, dict[str, list]] = {}
        self.counted = [m for m in measures if provider.name_of(m) == _NUM_Q]
        for measure in measures:
            if measure not in self.counted:
                names = self.passes.setdefault(_pass(measure), {})
                names.setdefault(provider.name_of(measure), []).append(measure)

    def __repr__(self) -> str:
        return f"TiecoreEvaluator({self.provider.NAME}, {list(self.measures)})"

    def _iter_calc(self, run: object) -> Iterator[Metric]:
        values = self._values(run)
        for measure in self.measures:
            found = values.get(measure, {})
            for qid, value in found.items():
                yield Metric(query_id=qid, measure=measure, value=value)
            for qid in sorted(q for q in self.qrel_qids if q not in found):
                yield Metric(query_id=qid, measure=measure, value=measure.DEFAULT)

    def _values(self, run: typing.Any) -> dict:
        """measure -> {qid: value} over the queries both the run and the qrels have."""
        values: dict = {}
        run = _run_frame(run)
        if run is None or self.qrels is None:
            return values
        run = run[run["qid"].isin(set(self.qrel_qids))]
        if not len(run):
            return values
        for measure in self.counted:  # NumQ: 1 for each query of the run with judgments
            values[measure] = dict.fromkeys(map(str, run["qid"].unique()), 1.0)
        p = self.provider
        for (rel_level, judged_only, gains), names in self.passes.items():
            qrels = self.qrels if gains is None else _with_gains(self.qrels, dict(gains))
            kept = _judged(run, qrels) if judged_only else run
            if not len(kept):
                continue  # every query at its default, as for a run without them
            found = evaluate(
                kept,
                qrels,
                list(names),
                ties=p.ties,
                tiebreak=p.tiebreak,
                samples=p.samples,
                seed=p.seed,
                rel_level=rel_level,
                per_query=True,
            )
            found = found[found["qid"].notna()]
            for name, qid, value in zip(
                found["measure"], found["qid"], found["value"], strict=True
            ):
                for measure in names[name]:
                    values.setdefault(measure, {})[qid] = float(value)
        return values


def _ordered_evaluator(
    pipeline: typing.Any, first: TiecoreProvider, strict: bool, measures: Iterable, qrels: object
) -> Evaluator:
    """ir_measures' fallback pipeline with ``first`` first, kept in the user's order.

    Each measure goes to ``first`` when it supports it, else to the pipeline's first
    available provider that does (as :class:`ir_measures.providers.FallbackProvider`
    does, but over lists rather than sets, so the order of the results does not follow
    the hash seed).  Measures that come from another provider are said in one
    :class:`~tiecore.errors.TieCoreWarning` per evaluator, or refused when ``strict``.
    """
    measures = _listed(measures)
    others = [p for p in pipeline.providers if p is not first]
    owner: dict = {}  # measure -> provider, in the user's order
    unsupported = []
    for measure in measures:
        if first.supports(measure):
            owner[measure] = first
            continue
        chosen = next((p for p in others if p.supports(measure) and p.is_available()), None)
        if chosen is None:
            unsupported.append(measure)
        else:
            owner[measure] = chosen
    if unsupported:
        missing = [p for p in others if any(p.supports(m) for m in unsupported)]
        hint = "".join(
            f"; {p.NAME} would"
            + (f" ({p.install_instructions()})" if p.install_instructions() else "")
            for p in missing
        )
        raise ValueError(f"Unsupported measures {_braced(unsupported)}{hint}.")
    elsewhere = [m for m in measures if owner[m] is not first]
    if elsewhere and strict:
        raise InputError(
            f"as_default({first.NAME!r}, strict=True)",
            None,
            f"{first.NAME} does not compute {', '.join(map(str, elsewhere))}",
            "only measures tiecore has, or strict=False to take these from "
            + ", ".join(dict.fromkeys(owner[m].NAME for m in elsewhere)),
        )
    if elsewhere:
        said = "; ".join(f"{m} from {owner[m].NAME}" for m in elsewhere)
        warnings.warn(
            f"{first.NAME} does not compute {len(elsewhere)} of the measures, whose values come "
            f"from other providers, without tiecore's tie handling: {said}",
            TieCoreWarning,
            stacklevel=_outside_level(),
        )
    groups: dict = {}  # provider -> its measures, in the user's order
    for measure in measures:
        groups.setdefault(owner[measure], []).append(measure)
    if list(groups) == [first]:
        return first.evaluator(measures, qrels)  # already in the measures' order
    teed = QrelsConverter(qrels).tee(len(groups))
    evaluators = [
        provider.evaluator(mine, q.qrels)
        for (provider, mine), q in zip(groups.items(), teed, strict=True)
    ]
    return _OrderedEvaluator(measures, evaluators)


def _outside_level() -> int:
    """The ``stacklevel`` of the first caller outside tiecore and ir_measures.

    ir_measures reaches the pipeline through one to three of its own calls
    (``iter_calc``, ``calc_aggregate``, ``evaluator``), so a fixed level would point
    the warning at ir_measures' code rather than at the user's line.
    """
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in {
        "tiecore",
        "ir_measures",
    }:
        frame, level = frame.f_back, level + 1
    return level


class _OrderedEvaluator(Evaluator):
    """Several providers' evaluators whose results come back in the measures' order."""

    def __init__(self, measures: list, evaluators: list) -> None:
        super().__init__(measures, evaluators[0].qrel_qids)
        self.evaluators = evaluators

    def _iter_calc(self, run: object) -> Iterator[Metric]:
        found: dict = {m: [] for m in self.measures}
        teed = RunConverter(run).tee(len(self.evaluators))
        for evaluator, one in zip(self.evaluators, teed, strict=True):
            for metric in evaluator.iter_calc(one.run):
                found.setdefault(metric.measure, []).append(metric)
        for metrics in found.values():
            yield from metrics


@contextlib.contextmanager
def as_default(
    provider: str | TiecoreProvider = "aware", *, strict: bool = False
) -> Iterator[TiecoreProvider]:
    """Within the block, ir_measures' default pipeline asks ``provider`` first.

    ``ir_measures.iter_calc``, ``calc_aggregate``, ``calc`` and ``evaluator`` (and
    PyTerrier's ``pt.Experiment``, which calls them) then take every measure this
    provider supports from tiecore, and the others from ir_measures' usual providers:
    one :class:`~tiecore.errors.TieCoreWarning` per evaluation names those measures and
    the provider each came from, since one table would otherwise mix tie-aware and
    trec_eval numbers unsaid.  Results follow the order the measures were given (ir_measures'
    own pipeline keeps them in sets, whose order changes with the hash seed).

    Parameters
    ----------
    provider : {"aware", "oblivious", "sampled"} or TiecoreProvider
        A tie mode (the registered provider) or a provider of your own settings.
    strict : bool
        Refuse, with one :class:`~tiecore.errors.InputError` naming them, measures that
        tiecore does not compute instead of taking them from other providers.

    Raises
    ------
    InputError
        ``provider`` is neither a tie mode nor a :class:`TiecoreProvider`.

    Examples
    --------
    >>> import ir_measures
    >>> qrels = [ir_measures.Qrel("1", "c", 1)]
    >>> run = [ir_measures.ScoredDoc("1", d, 1.0) for d in "abc"]
    >>> with as_default():
    ...     ir_measures.calc_aggregate([ir_measures.P @ 1], qrels, run)
    {P@1: 0.3333333333333333}
    >>> ir_measures.calc_aggregate([ir_measures.P @ 1], qrels, run)  # pytrec_eval's again
    {P@1: 1.0}
    """
    if isinstance(provider, str) and provider in _NAMES:
        provider = ir_measures.providers.registry[_NAMES[provider]]  # type: ignore[assignment]
    if not isinstance(provider, TiecoreProvider):
        problem = (
            f"unknown tie mode {provider!r}"
            if isinstance(provider, str)
            else f"{getattr(provider, 'NAME', type(provider).__name__)} is not a tiecore provider"
        )
        raise InputError(
            "as_default", None, problem, "one of " + ", ".join(_NAMES) + ", or a TiecoreProvider"
        )
    check("strict", strict, BOOL)
    pipeline: typing.Any = ir_measures.DefaultPipeline  # its private _evaluator is replaced here
    before = pipeline.__dict__.get("_evaluator")  # an enclosing block's, or none
    pipeline.providers.insert(0, provider)  # what supports() and run_inputs() ask
    pipeline._evaluator = functools.partial(_ordered_evaluator, pipeline, provider, strict)
    try:
        yield provider
    finally:
        pipeline.providers.remove(provider)
        if before is None:
            del pipeline._evaluator
        else:
            pipeline._evaluator = before


def _records(data: object) -> object | None:
    """``data`` ready for tiecore's readers, or None when it holds no record.

    ir_measures gives empty qrels or runs a meaning (no values, NaN aggregates; every
    qrels query at its default), where tiecore's readers refuse them as a likely mistake;
    an iterator is listed here so that it can be looked at and still read.
    """
    if isinstance(data, pd.DataFrame):
        return data if len(data) else None
    if isinstance(data, dict):
        return data if any(len(docs) for docs in data.values()) else None
    if isinstance(data, str | bytes | os.PathLike) or not isinstance(data, Iterable):
        return data  # a file, or something the reader will refuse in its own words
    data = list(data)
    return data if data else None


def _with_gains(qrels: pd.DataFrame, gains: dict) -> pd.DataFrame:
    """The qrels with each level mapped to its gain (levels not in ``gains`` kept), as
    ir_measures' pytrec_eval provider maps them for ``nDCG(gains=...)``."""
    mapped = qrels[["qid", "docno", "level"]].copy()
    mapped["level"] = mapped["level"].replace(gains)
    return read_qrels(mapped)


def _judged(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """The run's docs judged at a level of 0 or more (trec_eval's ``-J``, which
    ``judged_only=True`` asks of pytrec_eval: a negative level counts as unjudged)."""
    judged = qrels.loc[qrels["level"] >= 0, ["qid", "docno"]]
    return run.merge(judged, on=["qid", "docno"], how="inner")


def _qrels_frame(qrels: object) -> pd.DataFrame | None:
    """ir_measures' qrels (namedtuples, DataFrame, dict of dicts) as tiecore's frame."""
    qrels = _records(qrels)
    if qrels is None:
        return None
    if isinstance(qrels, pd.DataFrame) and "relevance" in qrels.columns:
        qrels = qrels[["query_id", "doc_id", "relevance"]]
    return read_qrels(qrels)


def _run_frame(run: object) -> pd.DataFrame | None:
    """ir_measures' run (namedtuples, DataFrame, dict of dicts) as tiecore's frame."""
    run = _records(run)
    if run is None:
        return None
    if isinstance(run, pd.DataFrame) and "query_id" in run.columns:
        run = run[["query_id", "doc_id", "score"]]
    return read_run(run, name="run")


#: The registered providers, one per tie mode (ir_measures.providers.registry["tiecore"], ...).
tiecore_aware = ir_measures.providers.register(TiecoreProvider("aware"))
tiecore_oblivious = ir_measures.providers.register(TiecoreProvider("oblivious"))
tiecore_sampled = ir_measures.providers.register(TiecoreProvider("sampled"))

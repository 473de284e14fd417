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

As with every ir_measures provider, a query of the qrels that the run lacks scores the
measure's default (0) in ``iter_calc`` and the aggregate averages over every qrels
query (tiecore's ``complete=True``); queries only the run has are ignored.

A measure is supported when tiecore has it with the same definition
(:func:`tiecore.interop.measure_name`); :meth:`TiecoreProvider.supports` says False
for the others (such as ``SetAP``, ``NumQ``, custom nDCG gains, ``judged_only``; GMAP-like
measures in the aware mode) and ``evaluator`` raises ``ValueError`` naming them, as
ir_measures' providers do.  A measure's ``rel`` is the evaluation's relevance level
(measures with different ``rel`` are evaluated in separate passes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import ClassVar

import ir_measures
import pandas as pd
from ir_measures import Metric
from ir_measures.providers.base import NOT_PROVIDED, Any, Evaluator, Provider

from tiecore.errors import InputError
from tiecore.options import MODES

__all__ = [
    "TiecoreEvaluator",
    "TiecoreProvider",
    "as_default",
    "tiecore_aware",
    "tiecore_oblivious",
    "tiecore_sampled",
]

_NAMES = {"aware": "tiecore", "oblivious": "tiecore_oblivious", "sampled": "tiecore_sampled"}


def _rel(measure: object) -> int:
    """The relevance level a measure asks for (1 when it has no ``rel``)."""
    if "rel" in getattr(measure, "SUPPORTED_PARAMS", {}):
        rel = measure["rel"]
        if rel is not NOT_PROVIDED and rel is not None:
            return int(rel)
    return 1


class TiecoreProvider(Provider):
    """An ir_measures provider whose values are tiecore's, in one tie mode.

    Parameters
    ----------
    ties : {"aware", "oblivious", "sampled"}
        ``aware`` (default): the exact mean over all orderings of tied documents;
        ``oblivious``: one ordering chosen by ``tiebreak``; ``sampled``: the mean
        of ``samples`` random tie-breaks.
    tiebreak : str
        The oblivious ordering (``trec_eval``: as pytrec_eval; see :func:`tiecore.evaluate`).
    samples, seed : int
        Sampled mode: how many random tie-breaks, which seed.

    Examples
    --------
    >>> import ir_measures
    >>> qrels = [ir_measures.Qrel("1", "c", 1)]
    >>> run = [ir_measures.ScoredDoc("1", d, s) for d, s in [("a", 2.0), ("b", 1.0), ("c", 1.0)]]
    >>> TiecoreProvider().calc_aggregate([ir_measures.RR], qrels, run)
    {RR: 0.41666666666666663}
    >>> TiecoreProvider(ties="oblivious").calc_aggregate([ir_measures.RR], qrels, run)
    {RR: 0.5}
    """

    NAME = "tiecore"
    SUPPORTED_MEASURES: ClassVar[list] = [
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
    ]

    def __init__(
        self, ties: str = "aware", tiebreak: str = "trec_eval", samples: int = 1000, seed: int = 0
    ) -> None:
        super().__init__()
        if ties not in MODES:
            raise InputError("ties", ties, f"unknown tie mode {ties!r}", " or ".join(MODES))
        self.ties, self.tiebreak, self.samples, self.seed = ties, tiebreak, samples, seed
        self.NAME = (
            _NAMES[ties]
            if (tiebreak, samples, seed) == ("trec_eval", 1000, 0)
            else (f"tiecore({ties}, {tiebreak})")
        )

    def __repr__(self) -> str:
        return f"TiecoreProvider(ties={self.ties!r}, tiebreak={self.tiebreak!r})"

    def name_of(self, measure: object) -> str:
        """tiecore's name of an ir_measures measure; InputError when tiecore lacks it."""
        from tiecore.evaluation.evaluator import check_measures
        from tiecore.interop import measure_name
        from tiecore.measures import Measure

        name = measure_name(measure, rel_level=_rel(measure))
        check_measures([Measure.parse(name)], self.ties)  # the evaluator's own rule
        return name

    def supports(self, measure: object) -> bool:
        """Whether tiecore computes this measure as ir_measures defines it, in this mode."""
        measure.validate_params()
        try:
            self.name_of(measure)
        except (InputError, TypeError):
            return False
        return True

    def _evaluator(self, measures: Iterable[object], qrels: object) -> TiecoreEvaluator:
        measures = list(measures)
        refused = [m for m in measures if not self.supports(m)]
        if refused:
            raise ValueError(
                f"Unsupported measures {set(refused)} for provider {self.NAME} (tiecore has "
                "no measure with their definition)"
            )
        return TiecoreEvaluator(self, measures, _qrels_frame(qrels))

    def install_instructions(self) -> str:
        return 'pip install tiecore (from a checkout: pip install -e ".")'


class TiecoreEvaluator(Evaluator):
    """Scores runs against one set of qrels (see :class:`TiecoreProvider`)."""

    def __init__(self, provider: TiecoreProvider, measures: list, qrels: pd.DataFrame) -> None:
        super().__init__(measures, set(qrels["qid"]))
        self.provider, self.qrels = provider, qrels
        self.passes: dict[int, dict[str, list]] = {}  # rel level -> tiecore name -> measures
        for measure in measures:
            names = self.passes.setdefault(_rel(measure), {})
            names.setdefault(provider.name_of(measure), []).append(measure)

    def _iter_calc(self, run: object) -> Iterator[Metric]:
        from tiecore.evaluation.core import evaluate

        run = _run_frame(run)
        if not len(run):
            return
        p = self.provider
        for rel_level, names in self.passes.items():
            found = evaluate(
                run,
                self.qrels,
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
                    yield Metric(query_id=qid, measure=measure, value=float(value))


@contextlib.contextmanager
def as_default(provider: str | TiecoreProvider = "aware") -> Iterator[TiecoreProvider]:
    """Within the block, ir_measures' default pipeline asks ``provider`` first.

    ``ir_measures.iter_calc``, ``calc_aggregate``, ``calc`` and ``evaluator`` (and
    PyTerrier's ``pt.Experiment``, which calls them) then take every measure this
    provider supports from tiecore, and the others from ir_measures' usual providers.

    Parameters
    ----------
    provider : {"aware", "oblivious", "sampled"} or TiecoreProvider
        A tie mode (the registered provider) or a provider of your own settings.

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
    if isinstance(provider, str):
        if provider not in _NAMES:
            raise InputError("provider", provider, "unknown tie mode", " or ".join(_NAMES))
        provider = ir_measures.providers.registry[_NAMES[provider]]
    providers = ir_measures.DefaultPipeline.providers
    providers.insert(0, provider)
    try:
        yield provider
    finally:
        providers.remove(provider)


def _qrels_frame(qrels: object) -> pd.DataFrame:
    """ir_measures' qrels (namedtuples, DataFrame, dict of dicts) as tiecore's frame."""
    from tiecore.io import read_qrels

    if isinstance(qrels, pd.DataFrame) and "relevance" in qrels.columns:
        qrels = qrels[["query_id", "doc_id", "relevance"]]
    return read_qrels(qrels)


def _run_frame(run: object) -> pd.DataFrame:
    """ir_measures' run (namedtuples, DataFrame, dict of dicts) as tiecore's frame."""
    from tiecore.io import read_run

    if isinstance(run, pd.DataFrame) and "query_id" in run.columns:
        run = run[["query_id", "doc_id", "score"]]
    return read_run(run, name="run")


#: The registered providers, one per tie mode (ir_measures.providers.registry["tiecore"], ...).
tiecore_aware = ir_measures.providers.register(TiecoreProvider("aware"))
tiecore_oblivious = ir_measures.providers.register(TiecoreProvider("oblivious"))
tiecore_sampled = ir_measures.providers.register(TiecoreProvider("sampled"))

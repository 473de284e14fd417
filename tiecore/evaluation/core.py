"""``evaluate``: every measure of every run in one of three tie modes, as a tidy frame."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tiecore.engine.judgments import Judgments, as_arrow_strings
from tiecore.engine.ranking import Ranking, check_known, skipped_message
from tiecore.evaluation.evaluator import Evaluator, Summary, check_measures
from tiecore.evaluation.parallel import map_runs
from tiecore.io.frames import check_run, check_runs
from tiecore.io.runs import Run, run_name
from tiecore.measures import Measure, parse_measures
from tiecore.options import EVALUATE, validate_params

Runs: TypeAlias = pd.DataFrame | Mapping[str, pd.DataFrame]
#: What :func:`evaluate` accepts: also paths, iterators and ``(name, run)`` pairs.
RunsOrFiles: TypeAlias = Runs | Mapping[str, object] | Iterable[object]


def as_run_dict(runs: Runs) -> dict[str, Run]:
    """One run or a mapping of runs -> ``{name: run}`` (a lone run keeps its name)."""
    if isinstance(runs, pd.DataFrame):
        runs = {run_name(runs): runs}
    return check_runs(runs)  # the rules of the loaders (tiecore.io.frames)


@validate_params(EVALUATE)
def evaluate(
    runs: RunsOrFiles,
    qrels: pd.DataFrame,
    measures: str | Measure | Sequence[str | Measure],
    *,
    ties: str = "aware",
    tiebreak: str = "trec_eval",
    samples: int = 1000,
    seed: int = 0,
    rel_level: int = 1,
    depth: int | None = None,
    complete: bool = False,
    per_query: bool = False,
    progress: Callable[[int, int | None, str], None] | None = None,
    client: object = None,
) -> pd.DataFrame:
    """Evaluate runs against qrels with tie-oblivious, tie-aware or sampled measures.

    Parameters
    ----------
    runs : DataFrame, mapping, iterable of runs or paths
        Each run has columns ``qid``, ``docno``, ``score`` (see :func:`tiecore.read_run`).
        A mapping of names to runs, or to run files; an iterable (a generator
        too) of runs, run files or ``(name, run)`` pairs. Files are read one at a
        time (the next while one is evaluated) and dropped once evaluated, so memory
        is bounded by two runs; they are named as :func:`tiecore.read_runs` names them.
    qrels : DataFrame
        Columns ``qid``, ``docno``, ``level`` (see :func:`tiecore.read_qrels`).
    measures : str, Measure or list of them
        Names such as ``"P@10"``, ``"AP"``, ``"nDCG(gain=exp)@10"``.
    ties : {"aware", "oblivious", "sampled"}
        ``aware``: exact mean over all orderings of tied docs; ``oblivious``:
        one ordering chosen by ``tiebreak``; ``sampled``: ``samples`` random
        tie-breaks, reported as mean, ``std`` and ``stderr``.  Aware and
        sampled tie the scores that are equal as given (float64).
    tiebreak : str
        Oblivious order inside ties: ``trec_eval`` (trec_eval 9.0.x, as
        pytrec_eval and ir_measures: scores compared as 32-bit C floats, so
        scores equal in float32 tie too, then docno descending),
        ``trec_eval_double`` (trec_eval 10: scores as given, then docno
        descending), ``docno_asc``, ``file_order``, ``optimistic``,
        ``pessimistic``, ``random``.
    samples, seed : int
        Sampled mode (and the ``random`` tie-break): how many draws, which seed.
    rel_level : int
        Lowest relevant qrels level (trec_eval ``-l``).
    depth : int, optional
        Cut every ranking at this many docs first (trec_eval ``-M``).
    complete : bool
        Average over every qrels query, missing ones scoring 0 (trec_eval ``-c``).
    per_query : bool
        Also return one row per query, before the summary row (``qid`` NA, the
        mean over queries; missing, so that no query id can be mistaken for it).
    progress : callable, optional
        Called as ``progress(done, total, name)`` after each run (``total`` is None
        for an iterator).
    client : dask.distributed.Client, optional
        Evaluate on this cluster, one task per run; a run of more than 2M rows (a
        frame, or a :class:`tiecore.io.parquet_parts.ParquetRun` cut at query
        boundaries) is split into query partitions.  The result is identical to
        the local one, bit for bit (sampled draws depend on run and query only).

    Returns
    -------
    DataFrame
        Columns ``run, qid, measure, value`` (sampled adds ``std, stderr``).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["c"], "level": [1]})
    >>> evaluate(run, qrels, ["P@2", "RR"], ties="aware")[["measure", "value"]].round(4)
      measure   value
    0     P@2  0.2500
    1      RR  0.4167
    >>> float(evaluate(run, qrels, "RR", ties="oblivious")["value"].iloc[0])
    0.5
    """
    measures = parse_measures(
        list(measures) if not isinstance(measures, str | Measure) else measures
    )
    check_measures(measures, ties)  # before the qrels are read, as the option's error
    judgments = Judgments.from_qrels(qrels, rel_level)
    evaluator = Evaluator(
        judgments, tuple(measures), ties, tiebreak, samples, seed, depth, complete
    )
    job = _RunJob(evaluator, per_query)
    merge = job.merge if evaluator.splittable else None
    frames = map_runs(job, runs, client=client, progress=progress, merge=merge)
    if not frames:
        raise ValueError("no runs to evaluate")
    return Rows.frame(frames)


@dataclass(frozen=True)
class _RunJob:
    """The work of :func:`evaluate` for one run: a picklable callable for dask workers.

    Called on a whole run it returns the run's tidy rows; called on one query
    partition (:attr:`~tiecore.io.runs.Run.part`, on a cluster) it returns the partition's
    per-query values, which :meth:`merge` joins and tidies exactly as if the run
    had been evaluated whole.
    """

    evaluator: Evaluator
    per_query: bool = False

    def __call__(self, name: str, run: pd.DataFrame) -> Rows | PartValues:
        if Run.of(run).part is None:
            ranking, found = self.values(name, run)
            return self.tidy(name, ranking.counts > 0, found)
        return part_values(name, run, self.evaluator.judgments, self.values)

    def values(self, name: str, run: pd.DataFrame) -> tuple[Ranking, dict[Measure, np.ndarray]]:
        """The run's ranking and per-query values (seeded by the seed and the run name)."""
        run = check_run(run, name)  # the rules of the loaders (tiecore.io.frames)
        return self.evaluator.run(name, partial(Ranking.build, run))

    def tidy(self, name: str, present: np.ndarray, found: dict) -> Rows:
        return Rows.of(name, self.evaluator.summary(present, found), self.per_query)

    def merge(self, name: str, parts: list[PartValues]) -> Rows:
        """One run's tidy rows from its query partitions (disjoint sets of queries)."""
        shapes = {m: self.evaluator.shape for m in self.evaluator.measures}
        present, found = merge_parts(name, parts, shapes)
        return self.tidy(name, present, found)


@dataclass
class PartValues:
    """One query partition's values: the queries it holds and their per-query values."""

    present: np.ndarray  # (queries,) bool, the judgments' order
    values: dict  # key -> (..., present queries)
    skipped: np.ndarray  # its queries without judgments


def part_values(
    name: str,
    run: pd.DataFrame,
    judgments: Judgments,
    compute: Callable[[str, pd.DataFrame], tuple[Ranking, Mapping[Any, np.ndarray]]],
) -> PartValues:
    """One query partition of a run (:attr:`~tiecore.io.runs.Run.part`) as :class:`PartValues`.

    ``compute(name, run)`` gives the partition's ranking and per-query arrays
    (queries last, the judgments' order); what a query gets depends on its own
    rows only, so :func:`merge_parts` puts together the arrays of the whole run.
    The warning about queries without judgments is left to :func:`merge_parts`
    (one for the run, not one per partition).
    """
    qid = as_arrow_strings(run["qid"])
    judged = pc.is_in(qid, value_set=pa.array(judgments.qids, pa.string()))
    if not pc.any(judged).as_py():  # a partition without judged queries: nothing to do
        skipped = np.unique(np.asarray(qid.to_numpy(zero_copy_only=False), dtype=object))
        return PartValues(np.zeros(len(judgments.qids), bool), {}, skipped)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranking, found = compute(name, run)
    for warning in caught:
        if not str(warning.message).startswith(skipped_message(name, ranking.skipped)):
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    present = ranking.counts > 0
    return PartValues(present, {k: v[..., present] for k, v in found.items()}, ranking.skipped)


def merge_parts(
    name: str, parts: list[PartValues], shapes: Mapping[Any, tuple[int, ...]]
) -> tuple[np.ndarray, dict[Any, np.ndarray]]:
    """The queries present in any partition and every key's per-query array ``(*shape,
    queries)`` put together (0 for the queries of no partition), as computed whole.

    Raises the error, and gives the warning, that :meth:`Ranking.build` gives a whole run.
    """
    nq = len(parts[0].present)
    present = np.zeros(nq, bool)
    for part in parts:
        present |= part.present
    check_known(name, present, np.unique(np.concatenate([p.skipped for p in parts])))
    found = {key: np.zeros((*shape, nq)) for key, shape in shapes.items()}
    for part in parts:
        for key, value in part.values.items():
            found[key][..., part.present] = value
    return present, found


@dataclass
class Rows:
    """One run's tidy rows as columns (numpy arrays), made a DataFrame with the other
    runs' at the end: one frame for all runs instead of one per run and a concat."""

    name: str
    columns: dict[str, np.ndarray]  # qid, measure, value[, std, stderr]

    @staticmethod
    def frame(rows: list[Rows]) -> pd.DataFrame:
        """The rows of all runs, in order, as one DataFrame ``run, qid, measure, ...``."""
        sizes = [len(r.columns["qid"]) for r in rows]
        names = np.empty(len(rows), dtype=object)
        names[:] = [r.name for r in rows]
        columns = {"run": np.repeat(names, sizes)}
        for key in rows[0].columns:
            columns[key] = np.concatenate([r.columns[key] for r in rows])
        return pd.DataFrame(columns)

    @staticmethod
    def of(name: str, summary: Summary, per_query: bool) -> Rows:
        """Rows ``qid, measure, value[, std, stderr]``: per measure, its queries (with
        ``per_query``) then the summary, whose ``qid`` is None so no query id can clash."""
        keep = slice(None) if per_query else slice(-1, None)
        shown = summary.qids[keep]
        labels = np.empty(len(summary.labels), dtype=object)
        labels[:] = summary.labels
        columns = {key: value[:, keep].ravel() for key, value in summary.columns.items()}
        qid = np.tile(shown, len(labels))
        return Rows(name, {"qid": qid, "measure": np.repeat(labels, len(shown)), **columns})

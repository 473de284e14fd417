"""``evaluate``: every measure of every run in one of three tie modes, as a tidy frame."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tiecore.engine import kernels, profiles
from tiecore.engine.budget import check_sample_time
from tiecore.engine.judgments import Judgments, as_arrow_strings
from tiecore.engine.ranking import Ranking, check_known, skipped_message
from tiecore.engine.sampling import sample_values
from tiecore.evaluation.parallel import map_runs
from tiecore.evaluation.summaries import geometric_summaries as _geometric_summaries
from tiecore.evaluation.summaries import mean as _mean
from tiecore.evaluation.summaries import run_seed
from tiecore.io.frames import check_run, check_runs
from tiecore.measures import Measure, parse_measures
from tiecore.measures.registry import refuse_inexact
from tiecore.options import DEPTH, EVALUATE, check, validate_params
from tiecore.options import MODES as MODES  # the tie modes, declared there

Runs = pd.DataFrame | Mapping[str, pd.DataFrame]
#: What :func:`evaluate` accepts: also paths, iterators and ``(name, run)`` pairs.
RunsOrFiles = Runs | Mapping[str, object] | Iterable[object]


def as_run_dict(runs: Runs) -> dict[str, pd.DataFrame]:
    """One run or a mapping of runs -> ``{name: run}`` (a lone run keeps ``attrs['name']``)."""
    if isinstance(runs, pd.DataFrame):
        runs = {runs.attrs.get("name") or "run": runs}
    return check_runs(runs)  # the rules of the loaders (tiecore.io.frames)


#: Share of the available memory that sampled mode may plan to use.
MEMORY_SHARE = 0.5
#: Copies of the ``(samples, queries)`` values per measure alive at the peak (the draws,
#: their stack, the concatenated means and two centred temporaries; measured).
_VALUE_COPIES = 5
#: Bytes per cell of a batch of draws (keys, orders, profile components, contributions).
_CELL_BYTES = 96


def available_memory() -> int:
    """Bytes of memory available now: ``MemAvailable`` of /proc/meminfo, else all RAM."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 1 << 33


def sample_memory(samples: int, queries: int, measures: int, rows: int) -> int:
    """Bytes sampled mode needs for one run: its per-query values and a batch of draws.

    ``5 * 8 * samples * queries * measures`` (about five copies of the float64 values
    are alive at the peak) plus 96 bytes per cell of a batch of draws, which holds
    ``min(samples * rows, 2_000_000)`` cells, or one draw of ``rows`` when that is more.

    >>> sample_memory(1000, 50, 10, 50_000)  # 20 MB of values, 192 MB of draws
    212000000
    """
    from tiecore.engine.sampling import BATCH_CELLS

    values = _VALUE_COPIES * 8 * samples * max(queries, 1) * max(measures, 1)
    return values + _CELL_BYTES * max(min(samples * rows, BATCH_CELLS), rows)


def check_samples(
    samples: int,
    queries: int,
    measures: int,
    rows: int,
    *,
    budget: int | None = None,
    name: str = "samples",
) -> None:
    """Refuse a sample count whose memory (:func:`sample_memory`) exceeds the budget.

    The budget is :data:`MEMORY_SHARE` of :func:`available_memory` unless given; the
    message says how much the count would need and the largest count that fits.
    """
    samples, queries, measures, rows = map(int, (samples, queries, measures, rows))
    need = sample_memory(samples, queries, measures, rows)
    budget = int(MEMORY_SHARE * available_memory()) if budget is None else budget
    if need <= budget:
        return
    low, high = 0, samples  # the largest count that fits: need grows with the count
    while low < high:
        mid = (low + high + 1) // 2
        if sample_memory(mid, queries, measures, rows) <= budget:
            low = mid
        else:
            high = mid - 1
    fits = f"use at most {low} samples" if low >= 2 else "not even 2 samples fit"
    raise ValueError(
        f"{name} {samples} would need about {_size(need)} of memory ({queries} queries x "
        f"{measures} measures x 8 bytes per sample, about {_VALUE_COPIES} copies, plus "
        f"random draws for {rows} rows), more than the {_size(budget)} allowed "
        f"({MEMORY_SHARE:.0%} of the memory available); {fits}"
    )


def _size(n: int) -> str:
    """Bytes for people: ``3.2 GB``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


def check_depth(depth: int | None) -> None:
    """``depth`` (trec_eval ``-M``) is None or a positive integer (an ``InputError``)."""
    check("depth", depth, DEPTH)


def query_values(
    ranking: Ranking,
    judgments: Judgments,
    measures: Sequence[Measure],
    *,
    ties: str = "aware",
    depth: int | None = None,
    samples: int = 1000,
    rng: np.random.Generator | None = None,
) -> dict[Measure, np.ndarray]:
    """Per-query values of ``measures`` on one ranking, in the judgments' query order.

    Oblivious and aware give one value per query (arrays ``(queries,)``); sampled
    gives ``(samples, queries)``.  ``ranking`` must have been built with the
    wanted tie-break for the oblivious mode; the other modes ignore its order.
    """
    if ties == "sampled":
        check_samples(samples, len(judgments.qids), len(measures), ranking.rank.size)
        tied = int(ranking.size[ranking.size > 1].sum())  # the rows a sample draws, at most
        check_sample_time(samples, tied, len(judgments.qids), len(measures))
        rng = rng if rng is not None else np.random.default_rng(0)
        return sample_values(
            ranking, judgments, list(measures), samples=samples, rng=rng, depth=depth
        )
    profile = (
        profiles.aware(ranking, judgments, depth)
        if ties == "aware"
        else profiles.oblivious(ranking, judgments)
    )
    return {m: kernels.values(m, profile, ranking, judgments, depth) for m in measures}


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
        frame, or a :class:`tiecore.distributed.ParquetRun` cut at query
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
    if ties == "aware":
        refuse_inexact(measures, "ties='aware'")
    judgments = Judgments.from_qrels(qrels, rel_level)
    job = _RunJob(judgments, tuple(measures), ties, tiebreak, samples, seed, depth)
    job = replace(job, complete=complete, per_query=per_query)
    # The random tie-break permutes a run's rows as a whole: such runs are never split.
    split = not (ties == "oblivious" and tiebreak == "random")
    frames = map_runs(
        job, runs, client=client, progress=progress, merge=job.merge if split else None
    )
    if not frames:
        raise ValueError("no runs to evaluate")
    return _Rows.frame(frames)


@dataclass(frozen=True)
class _RunJob:
    """The work of :func:`evaluate` for one run: a picklable callable for dask workers.

    Called on a whole run it returns the run's tidy rows; called on one query
    partition (``run.attrs["part"]``, on a cluster) it returns the partition's
    per-query values, which :meth:`merge` joins and tidies exactly as if the run
    had been evaluated whole.
    """

    judgments: Judgments
    measures: tuple[Measure, ...]
    ties: str
    tiebreak: str
    samples: int
    seed: int
    depth: int | None
    complete: bool = False
    per_query: bool = False

    def __call__(self, name: str, run: pd.DataFrame) -> _Rows | _PartValues:
        if run.attrs.get("part") is None:
            ranking, found = self.values(name, run)
            return self.tidy(name, ranking.counts > 0, found)
        return part_values(name, run, self.judgments, self.values)

    def values(self, name: str, run: pd.DataFrame) -> tuple[Ranking, dict[Measure, np.ndarray]]:
        """The run's ranking and per-query values (seeded by the seed and the run name)."""
        run = check_run(run, name)  # the rules of the loaders (tiecore.io.frames)
        rng = run_seed(self.seed, name)
        order = self.tiebreak if self.ties == "oblivious" else "file_order"
        ranking = Ranking.build(run, self.judgments, tiebreak=order, seed=rng, name=name)
        found = query_values(
            ranking,
            self.judgments,
            self.measures,
            ties=self.ties,
            depth=self.depth,
            samples=self.samples,
            rng=rng,
        )
        return ranking, found

    def tidy(self, name: str, present: np.ndarray, found: dict) -> _Rows:
        return _value_rows(
            name, self.judgments, present, found, self.complete, self.per_query, self.ties
        )

    def merge(self, name: str, parts: list[_PartValues]) -> _Rows:
        """One run's tidy rows from its query partitions (disjoint sets of queries)."""
        shape = () if self.ties != "sampled" else (self.samples,)
        present, found = merge_parts(name, parts, {m: shape for m in self.measures})
        return self.tidy(name, present, found)


@dataclass
class _PartValues:
    """One query partition's values: the queries it holds and their per-query values."""

    present: np.ndarray  # (queries,) bool, the judgments' order
    values: dict  # key -> (..., present queries)
    skipped: np.ndarray  # its queries without judgments


def part_values(
    name: str,
    run: pd.DataFrame,
    judgments: Judgments,
    compute: Callable[[str, pd.DataFrame], tuple[Ranking, dict[object, np.ndarray]]],
) -> _PartValues:
    """One query partition of a run (``run.attrs["part"]``) as :class:`_PartValues`.

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
        return _PartValues(np.zeros(len(judgments.qids), bool), {}, skipped)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranking, found = compute(name, run)
    for warning in caught:
        if not str(warning.message).startswith(skipped_message(name, ranking.skipped)):
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    present = ranking.counts > 0
    return _PartValues(present, {k: v[..., present] for k, v in found.items()}, ranking.skipped)


def merge_parts(
    name: str, parts: list[_PartValues], shapes: dict[object, tuple[int, ...]]
) -> tuple[np.ndarray, dict[object, np.ndarray]]:
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
class _Rows:
    """One run's tidy rows as columns (numpy arrays), made a DataFrame with the other
    runs' at the end: one frame for all runs instead of one per run and a concat."""

    name: str
    columns: dict[str, np.ndarray]  # qid, measure, value[, std, stderr]

    @staticmethod
    def frame(rows: list[_Rows]) -> pd.DataFrame:
        """The rows of all runs, in order, as one DataFrame ``run, qid, measure, ...``."""
        sizes = [len(r.columns["qid"]) for r in rows]
        names = np.empty(len(rows), dtype=object)
        names[:] = [r.name for r in rows]
        columns = {"run": np.repeat(names, sizes)}
        for key in rows[0].columns:
            columns[key] = np.concatenate([r.columns[key] for r in rows])
        return pd.DataFrame(columns)


def _value_frame(name, judgments, present, found, complete, per_query, ties) -> pd.DataFrame:
    """:func:`_value_rows` as a DataFrame."""
    return _Rows.frame([_value_rows(name, judgments, present, found, complete, per_query, ties)])


def _value_rows(name, judgments, present, found, complete, per_query, ties) -> _Rows:
    """Rows ``run, qid, measure, value[, std, stderr]``: per measure, queries then the
    summary (the mean over queries), whose ``qid`` is None so no query id can clash with it.

    ``present`` flags the queries the run has (the mean is over them unless ``complete``).
    """
    chosen = np.ones(len(judgments.qids), bool) if complete else present
    qids = np.append(judgments.qids[chosen].astype(object), None)
    stacked = np.stack([value[..., chosen] for value in found.values()])  # measures first
    if ties == "sampled":  # (measures, samples, queries)
        means = _mean(stacked, axis=2)
        _geometric_summaries(found, stacked, means)
        draws = np.concatenate([stacked, means], axis=2)
        first = draws[:, :1]  # shifted sums: a query that never varies keeps its value, std 0
        columns = {
            "value": first[:, 0] + _mean(draws - first, axis=1)[:, 0],
            "std": (draws - first).std(axis=1, ddof=1),
        }
        columns["stderr"] = columns["std"] / np.sqrt(stacked.shape[1])
    else:
        mean = _mean(stacked, axis=1) if stacked.shape[1] else np.zeros((len(found), 1))
        _geometric_summaries(found, stacked, mean)
        columns = {"value": np.concatenate([stacked, mean], axis=1)}
    keep = slice(None) if per_query else slice(-1, None)
    columns = {key: value[:, keep].ravel() for key, value in columns.items()}
    shown = qids[keep]
    labels = np.empty(len(found), dtype=object)
    labels[:] = [str(m) for m in found]
    return _Rows(
        name,
        {
            "qid": np.tile(shown, len(found)),
            "measure": np.repeat(labels, len(shown)),
            **columns,
        },
    )

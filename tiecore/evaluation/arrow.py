"""``tiecore eval`` on TREC text files of any size without pandas: the arrow path.

Importing pandas costs more than evaluating a million-row run, so ``tiecore eval``
(aware or oblivious, not ``--spread``, ``-m all_trec``, sampled mode or dask) reads
TREC text files (plain or gzip, regular files) with :mod:`tiecore.io`'s own parser
into arrow columns (:func:`tiecore.io.trec.read_qrels_columns`,
:func:`tiecore.io.trec.read_run_columns`: the same rules, errors and values as
:func:`tiecore.read_run`), builds the judgments and rankings from them
(:meth:`~tiecore.engine.judgments.Judgments.from_columns`,
:meth:`~tiecore.engine.ranking.Ranking.build_columns`), evaluates them with
:class:`~tiecore.evaluation.evaluator.Evaluator` and gives the rows of
:func:`tiecore.cli.eval.evaluate_runs` as :mod:`tiecore.evaluation.small` gives them, bit
for bit (tests/evaluation/test_small.py checks both paths agree).

Runs are read one at a time, the next one in a thread while this one is evaluated
(most of reading and evaluating runs outside the GIL: 0.66x the time on 120 runs),
and dropped once evaluated (memory bounded by two runs, not by the collection) and
named as :func:`tiecore.evaluate` names run files: a guess from
each file's first line, settled once the file is read, and a run whose name
changes once every file is read is evaluated again under its right name.
Warnings, progress and errors come as the normal path's, in the same order
(an error about a run names its file, as :mod:`tiecore.evaluation.parallel` does).

A big run file (:func:`tiecore.io.batches.batchable`) is read and evaluated in
batches of whole queries (:func:`tiecore.io.batches.run_batches`: the next batch parsed
in a thread while this one is evaluated), so that memory holds a few batches and the
qrels, not the run.  What a query gets depends on its own rows only, so each batch's
values of its queries are put in place in the judgments' order, and the summary is
then made as for a run read whole (the same mean, added in the same order): the
values are the same, bit for bit.  A file the batches cannot settle
(:class:`~tiecore.io.batches.NotBatched`: an error to name by its line, a query in two
stretches of the file) is read and evaluated whole.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking, check_known
from tiecore.errors import InputError
from tiecore.evaluation.evaluator import Evaluator, check_measures
from tiecore.evaluation.small import _OTHER_FORMATS, Table, add_rows
from tiecore.io import batches as _batches
from tiecore.io import files as _runs
from tiecore.io import trec
from tiecore.io.arrays import Kernels, kernel, to_arrow, to_numpy
from tiecore.io.ids import RunIds
from tiecore.measures import Measure


def claimed(paths: Sequence[str]) -> bool:
    """Whether these inputs are all TREC text files (regular files: not stdin, Parquet,
    JSON Lines or a directory)."""
    for path in paths:
        name = os.fspath(path).lower().removesuffix(".gz")
        if path == "-" or name.endswith(_OTHER_FORMATS) or not os.path.isfile(path):
            return False
    return True


def evaluate_files(
    qrels_path: str,
    run_paths: Sequence[str],
    measures: list[Measure],
    *,
    ties: str = "aware",
    tiebreak: str = "trec_eval",
    seed: int = 0,
    rel_level: int = 1,
    depth: int | None = None,
    complete: bool = False,
    per_query: bool = False,
    progress: Callable[[int, int, str, float], None] | None = None,
) -> Table:
    """``tiecore eval QRELS RUN ...``'s rows (aware or oblivious mode), in
    :func:`tiecore.cli.eval.evaluate_runs`'s order, the summary rows only unless
    ``per_query``; ``progress(done, total, name, seconds)`` after each run.

    Warnings go out as they come; errors are raised as the normal path raises them.
    """
    paths = [os.fspath(path) for path in run_paths]
    # the first run is read while the qrels are: tiecore.io.files.read_ahead starts at once
    # (a big run is read in batches when its turn comes: None here)
    with contextlib.ExitStack() as stack:
        reads = stack.enter_context(contextlib.closing(_runs.read_ahead(_whole_read, paths)))
        # a big run's first batches are parsed ahead: the first run's while the qrels are
        # read, each next one's while this one is evaluated
        started: dict[int, _batches.RunBatches] = {}

        def start(i: int) -> None:
            if i < len(paths) and _batches.batchable(paths[i]):
                started[i] = _batches.run_batches(paths[i])
                stack.callback(started[i].close)

        start(0)
        qrels = trec.read_qrels_columns(qrels_path)
        check_measures(measures, ties)  # after the qrels' errors, before the judgments'
        judgments = Judgments.from_columns(qrels["qid"], qrels["docno"], qrels["level"], rel_level)
        del qrels
        evaluator = Evaluator(
            judgments, tuple(measures), ties, tiebreak, seed=seed, depth=depth, complete=complete
        )
        peeked = [None if (tag := _runs.first_tag(path)) is None else [tag] for path in paths]
        tags: list[list[str] | None] = [None] * len(paths)
        names = _runs.file_names(paths, peeked)
        tables: list[Table] = []
        options = {"evaluator": evaluator, "measures": measures, "per_query": per_query}
        clock = time.perf_counter()
        for i, path in enumerate(paths):
            run = next(reads)  # (not through zip: its reused tuple would keep the last run)
            if evaluator.splittable:
                start(i + 1)
            if run is None:
                run = _batched_values(path, evaluator, names[i], started.pop(i, None))
            tags[i] = list(run.tags)
            if (
                tags[i] != peeked[i]
            ):  # settled as soon as read (tiecore.evaluation.parallel._settler)
                known = [t if t is not None else p for t, p in zip(tags, peeked, strict=True)]
                names[i] = _runs.file_names(paths, known)[i]
            tables.append(_run_table(names[i], path, run, **options))
            del run
            if progress is not None:
                now = time.perf_counter()
                progress(i + 1, len(paths), names[i], now - clock)
                clock = now
    for i, name in enumerate(_runs.file_names(paths, tags)):  # tiecore.evaluation.parallel._rename
        if name != names[i]:
            names[i] = name
            again = _whole_read(paths[i]) or _batched_values(paths[i], evaluator, name)
            tables[i] = _run_table(name, paths[i], again, **options)
    table = Table({"run": [], "qid": [], "measure": [], "value": []}, {})
    for part in tables:
        for key, values in part.columns.items():
            table.columns[key] += values
        table.num_q.update(part.num_q)
    return table


def _whole_read(path: str) -> trec.RunColumns | None:
    """The run file's checked columns, or None for a file read in batches."""
    return None if _batches.batchable(path) else trec.read_run_columns(path)


def _run_table(
    name: str,
    path: str,
    run: trec.RunColumns | _Batched,
    *,
    evaluator: Evaluator,
    measures: Sequence[Measure],
    per_query: bool,
) -> Table:
    """One run's rows; an error about ``run NAME`` names its file too."""
    table = Table({"run": [], "qid": [], "measure": [], "value": []}, {})
    try:
        if isinstance(run, _Batched):
            present, found = run.merged(name)
        else:
            build = partial(Ranking.build_columns, run.ids, run.docno, to_numpy(run.score))
            ranking, found = evaluator.run(name, build)
            present = ranking.counts > 0
    except InputError as error:  # tiecore.evaluation.parallel._named_errors
        if error.source != f"run {name}":
            raise
        where = f"{path} (run {name})"
        raise type(error)(where, error.line, error.problem, error.expected) from None
    add_rows(table, name, evaluator.summary(present, found), measures, per_query)
    return table


class _Batched:
    """A run evaluated in batches of whole queries: the queries present, their values in
    the judgments' order (each put in place by the batch that holds it), the run's
    queries without judgments and its tags; :meth:`merged` checks them as
    :meth:`Ranking.build <tiecore.engine.ranking.Ranking.build>` checks a whole run."""

    def __init__(self, tags: list[str]) -> None:
        self.tags = tags
        self.present: np.ndarray | None = None
        self.found: dict[Measure, np.ndarray] = {}
        self.skipped: list[str] = []

    def add(self, present: np.ndarray, found: dict[Measure, np.ndarray]) -> None:
        """One batch's values: the first batch's arrays are kept whole (a query of no
        batch keeps the value an empty ranking gives it), a later one's are copied in
        at its queries."""
        if self.present is None:
            self.present = present.copy()
            self.found = {measure: np.array(value) for measure, value in found.items()}
            return
        self.present |= present
        for measure, value in found.items():
            self.found[measure][..., present] = value[..., present]

    def merged(self, name: str) -> tuple[np.ndarray, dict[Measure, np.ndarray]]:
        """The run's present queries and values; the error of a run without judged
        queries, the warning about those without judgments."""
        present = np.zeros(0, bool) if self.present is None else self.present
        skipped = np.empty(len(set(self.skipped)), dtype=object)
        skipped[:] = sorted(set(self.skipped))
        check_known(name, present, skipped)
        return present, self.found


def _batched_values(
    path: str, evaluator: Evaluator, name: str, started: _batches.RunBatches | None = None
) -> trec.RunColumns | _Batched:
    """The run file evaluated batch by batch (:func:`tiecore.io.batches.run_batches`,
    or its batches ``started`` already), or read whole (its columns) when the batches
    cannot settle it."""
    if not evaluator.splittable:  # the random tie-break permutes the run's rows whole
        if started is not None:
            started.close()
        return trec.read_run_columns(path)
    judgments = evaluator.judgments
    done: _Batched | None = None
    try:
        with contextlib.closing(started or _batches.run_batches(path)) as batches:
            done = _Batched(batches.tags)
            for run in batches:
                part = _judged(run, judgments, done.skipped)
                del run
                if part is None:
                    continue
                build = partial(Ranking.build_columns, *part)
                ranking, found = evaluator.run(name, build)
                del part, build
                done.add(ranking.counts > 0, found)
                del ranking, found
    except _batches.NotBatched:
        del done
        return trec.read_run_columns(path)
    return done


def _judged(
    run: trec.RunColumns, judgments: Judgments, skipped: list[str]
) -> tuple[RunIds, object, np.ndarray] | None:
    """A batch's ids, docnos and scores, its rows of queries without judgments left out
    (their qids added to ``skipped``); None when none of its queries has judgments.
    Left out here, a batch's unjudged queries raise no warning (nor an error when all
    are): :meth:`_Batched.merged` gives the run's one warning."""
    ids = run.ids
    code = to_numpy(
        kernel("index_in", ids.qids, options=Kernels.SetLookupOptions(judgments.qid_array)), -1
    )
    known = code >= 0
    score = to_numpy(run.score)
    if known.all():
        return ids, run.docno, score
    skipped += kernel("filter", ids.qids, to_arrow(~known)).to_pylist()
    if not known.any():
        return None
    rows = np.flatnonzero(known[ids.query])
    renumber = (np.cumsum(known) - 1).astype(np.int32)
    kept = RunIds(
        kernel("filter", ids.qids, to_arrow(known)),
        renumber[ids.query[rows]],
        ids.docno_hash[rows],
    )
    return kept, kernel("take", run.docno, to_arrow(rows)), score[rows]

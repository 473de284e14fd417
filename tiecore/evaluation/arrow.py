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
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from functools import partial

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.evaluation.evaluator import Evaluator, check_measures
from tiecore.evaluation.small import _OTHER_FORMATS, Table, add_rows
from tiecore.io import files as _runs
from tiecore.io import trec
from tiecore.io.arrays import to_numpy
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
    with contextlib.closing(_runs.read_ahead(trec.read_run_columns, paths)) as reads:
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
            tables[i] = _run_table(name, paths[i], trec.read_run_columns(paths[i]), **options)
    table = Table({"run": [], "qid": [], "measure": [], "value": []}, {})
    for part in tables:
        for key, values in part.columns.items():
            table.columns[key] += values
        table.num_q.update(part.num_q)
    return table


def _run_table(
    name: str,
    path: str,
    run: trec.RunColumns,
    *,
    evaluator: Evaluator,
    measures: Sequence[Measure],
    per_query: bool,
) -> Table:
    """One run's rows; an error about ``run NAME`` names its file too."""
    table = Table({"run": [], "qid": [], "measure": [], "value": []}, {})
    build = partial(Ranking.build_columns, run.ids, run.docno, to_numpy(run.score))
    try:
        ranking, found = evaluator.run(name, build)
    except InputError as error:  # tiecore.evaluation.parallel._named_errors
        if error.source != f"run {name}":
            raise
        where = f"{path} (run {name})"
        raise type(error)(where, error.line, error.problem, error.expected) from None
    add_rows(table, name, evaluator.summary(ranking.counts > 0, found), measures, per_query)
    return table

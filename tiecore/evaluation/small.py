"""``tiecore eval`` on small inputs without pandas or pyarrow: the start-up path.

Importing pandas and pyarrow takes longer than evaluating a few thousand lines, so
``tiecore eval`` on small TREC text files (plain or gzip, :data:`SMALL_BYTES` on disk
in all) reads them here with Python's own whitespace split, builds the judgments and
the rankings with :meth:`~tiecore.engine.judgments.Judgments.from_small` and
:meth:`~tiecore.engine.ranking.Ranking.build_small`, evaluates them with the one core,
:class:`~tiecore.evaluation.evaluator.Evaluator`, as :func:`tiecore.evaluate` does, and
gives the rows :func:`tiecore.cli.eval.evaluate_runs` would give, bit for bit
(tests/evaluation/test_small.py checks both paths agree).

The reader accepts only what :mod:`tiecore.io` reads without complaint, to the same
values (its careful path's rules: lines end at ``\\n``, ``\\r\\n`` or ``\\r``; ASCII
whitespace separates fields; blank lines and ``#`` lines are skipped; numbers are
those arrow parses, to the same float). Anything else -- a bad or odd line, a
duplicate, a number spelled otherwise, a run file with several tags, a run without a
judged query, a value that is not finite -- makes :func:`evaluate_files` return
None, and the normal path reads the files again: errors and warnings are then
:mod:`tiecore.io`'s and :func:`tiecore.evaluate`'s own, word for word.
"""

from __future__ import annotations

import os
import re
import time
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.evaluation.evaluator import Evaluator, Summary
from tiecore.io import files as _runs
from tiecore.measures import Measure
from tiecore.options import EXACT_MODES

#: Inputs up to this many bytes on disk (qrels and runs together) take this path.
SMALL_BYTES = 1 << 20
#: ... and up to this many bytes once decompressed.
SMALL_TEXT = 1 << 22

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
#: The numbers arrow's float64 cast reads and Python's float() reads alike (both round
#: correctly); arrow also takes nan/inf (never finite) and refuses ``1_0`` or `` 1``.
_SCORE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: arrow's int64 cast: no sign ``+``, leading zeros allowed.
_LEVEL = re.compile(rb"-?[0-9]+")
#: File names that tiecore.io.sources reads (Parquet, JSON Lines), not tiecore.io.
_OTHER_FORMATS = (".parquet", ".jsonl", ".ndjson")


class Refused(Exception):
    """The input is not for this path (or not valid): the normal path reads it."""


@dataclass
class SmallRun:
    """A run file as :func:`tiecore.read_run` reads it: columns as lists, its tags."""

    qid: list[str]
    docno: list[str]
    score: np.ndarray
    tags: list[str]


@dataclass
class Table:
    """``tiecore eval``'s rows as plain columns (``qid`` None on summary rows), each
    run's ``num_q``, and what happened on the way (warnings and progress), in order."""

    columns: dict[str, list]
    num_q: dict[str, int]
    events: list[tuple[str, object]] = field(default_factory=list)


# ------------------------------------------------------------------------- reading


def claimed(paths: Sequence[str]) -> bool:
    """Whether these inputs are all small TREC text files (regular files, not stdin,
    Parquet or JSON Lines), :data:`SMALL_BYTES` in all."""
    total = 0
    for path in paths:
        name = os.fspath(path).lower().removesuffix(".gz")
        if path == "-" or name.endswith(_OTHER_FORMATS) or not os.path.isfile(path):
            return False
        total += os.path.getsize(path)
        if total > SMALL_BYTES:
            return False
    return True


def _text(path: str) -> bytes:
    """The file's bytes, decompressed, without a BOM; refused unless UTF-8 text."""
    data = Path(path).read_bytes()
    if data[:2] == _GZIP_MAGIC:  # inflated no further than a small text can reach
        inflater = zlib.decompressobj(wbits=31)
        try:
            data = inflater.decompress(data, SMALL_TEXT + 1)
        except zlib.error:
            raise Refused from None
        if not inflater.eof or inflater.unused_data:  # bigger, cut, or several members
            raise Refused
    if len(data) > SMALL_TEXT:
        raise Refused
    if data[:3] == _BOM:
        data = data[3:]
    if b"\x00" in data:
        raise Refused
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused from None
    return data


def _records(data: bytes) -> list[list[bytes]]:
    """Fields of every line that is neither blank nor a ``#`` comment (bytes.split
    splits at ASCII whitespace, bytes.splitlines at ``\\n``, ``\\r\\n`` and ``\\r``)."""
    out = []
    for line in data.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            out.append(fields)
    return out


def _unique_pairs(qid: list, docno: list) -> None:
    if len(set(zip(qid, docno, strict=True))) != len(qid):
        raise Refused


def read_run(path: str) -> SmallRun:
    """A run file: 5 or 6 fields on every line as on the first (at least 6 on every
    line when the first has more, and more than 6 on another line too), finite scores,
    each docno once per query."""
    records = _records(_text(path))
    if not records:
        raise Refused
    first = len(records[0])
    if first < 5:
        raise Refused
    if first > 6:
        if any(len(r) < 6 for r in records):
            raise Refused
        if len(records) > 1 and all(len(r) == 6 for r in records[1:]):
            raise Refused  # the first line alone has more: refused as anywhere else (io)
    elif any(len(r) != first for r in records):
        raise Refused
    if not all(_SCORE.fullmatch(r[4]) for r in records):
        raise Refused
    score = np.array([float(r[4]) for r in records], dtype=np.float64)
    if not np.isfinite(score).all():
        raise Refused
    qid = [r[0].decode() for r in records]
    docno = [r[2].decode() for r in records]
    _unique_pairs(qid, docno)
    tags = list(dict.fromkeys(r[5] for r in records)) if first >= 6 else []
    return SmallRun(qid, docno, score, [t.decode() for t in tags])


def read_qrels(path: str) -> tuple[list[str], list[str], np.ndarray]:
    """Qrels: 4 fields on every line, an int64 level, one judgment per query and docno."""
    records = _records(_text(path))
    if not records or any(len(r) != 4 or not _LEVEL.fullmatch(r[3]) for r in records):
        raise Refused
    levels = [int(r[3]) for r in records]
    if any(not -(2**63) <= v < 2**63 for v in levels):
        raise Refused
    qid = [r[0].decode() for r in records]
    docno = [r[2].decode() for r in records]
    _unique_pairs(qid, docno)
    return qid, docno, np.array(levels, dtype=np.int64)


# ---------------------------------------------------------------------- evaluating


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
    trec: bool = False,
) -> Table | None:
    """``tiecore eval QRELS RUN ...``'s rows, or None when the normal path must run.

    The rows are :func:`tiecore.cli.eval.evaluate_runs`'s in its order (runs as given;
    per run its queries in qrels order, then the summary, whose ``qid`` is None;
    measures as asked), the summary rows only unless ``per_query``. None, before
    anything is printed, for sampled mode (its memory guard is the normal path's),
    for inputs this path does not take (see the module), for
    any error (the normal path then reports it), for a value that is not finite
    (an error there too) and, with ``trec``, for a query named ``all``. Warnings and
    progress (``(done, total, name, seconds)`` after each run) are kept in
    :attr:`Table.events`, in order, for the caller to replay.
    """
    paths = [qrels_path, *run_paths]
    if ties not in EXACT_MODES or not claimed(paths):
        return None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            return _evaluate(
                qrels_path, run_paths, measures, caught, ties=ties, tiebreak=tiebreak,
                seed=seed, rel_level=rel_level, depth=depth, complete=complete,
                per_query=per_query, trec=trec,
            )  # fmt: skip
    except Exception:  # any doubt: the normal path decides and reports
        return None


def _evaluate(
    qrels_path, run_paths, measures, caught, *, ties, tiebreak, seed, rel_level,
    depth, complete, per_query, trec,
) -> Table | None:  # fmt: skip
    qrels = read_qrels(qrels_path)
    runs = [read_run(path) for path in run_paths]
    if any(len(run.tags) > 1 for run in runs):  # the normal path may rename such a run late
        raise Refused
    names = _runs.file_names(list(run_paths), [run.tags for run in runs])
    judgments = Judgments.from_small(*qrels, rel_level)
    evaluator = Evaluator(
        judgments, tuple(measures), ties, tiebreak, seed=seed, depth=depth, complete=complete
    )
    table = Table({"run": [], "qid": [], "measure": [], "value": []}, {})
    events = table.events
    seen = 0
    clock = time.perf_counter()
    for done, (name, run) in enumerate(zip(names, runs, strict=True), start=1):
        build = partial(Ranking.build_small, run.qid, run.docno, run.score)
        ranking, found = evaluator.run(name, build)
        add_rows(table, name, evaluator.summary(ranking.counts > 0, found), measures, per_query)
        events += [("warning", w) for w in caught[seen:]]
        seen = len(caught)
        now = time.perf_counter()
        events.append(("progress", (done, len(runs), name, now - clock)))
        clock = now
    if not np.isfinite(table.columns["value"]).all():
        return None  # an error on the normal path (tiecore.cli.eval._check_rows)
    if trec and per_query and "all" in table.columns["qid"]:
        return None
    return table


def add_rows(
    table: Table, name: str, summary: Summary, measures: Sequence[Measure], per_query: bool
) -> None:
    """Append a run's rows (:meth:`Evaluator.summary`) to ``table`` as
    :func:`tiecore.cli.eval.evaluate_runs` orders them: its queries in qrels order (with
    ``per_query``), then the summary (``qid`` None); per row the measures as asked."""
    rank = {str(m): i for i, m in enumerate(measures)}
    shown = sorted(range(len(summary.labels)), key=lambda i: rank[summary.labels[i]])
    start = 0 if per_query else len(summary.qids) - 1
    qids = summary.qids[start:]
    table.num_q[name] = len(summary.qids) - 1
    table.columns["run"] += [name] * (len(qids) * len(shown))
    table.columns["qid"] += np.repeat(qids, len(shown)).tolist()
    table.columns["measure"] += [summary.labels[i] for i in shown] * len(qids)
    for key, values in summary.columns.items():  # (measures, queries): query-major rows
        table.columns[key] += values[shown, start:].T.ravel().tolist()

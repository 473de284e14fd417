"""Runs and qrels from anywhere: Parquet, JSON Lines, stdin, DataFrames and records.

:func:`tiecore.read_run` and :func:`tiecore.read_qrels` hand a source to this module
when it is not a TREC text file:

* a path ending in ``.parquet``, or ``.jsonl`` / ``.ndjson`` (optionally ``.gz``);
* ``"-"``: standard input, whose format is recognised by its first bytes
  (Parquet's ``PAR1`` magic, a JSON object's ``{``, else TREC text; gzip is undone first);
* a file object (an upload) holding Parquet or JSON Lines, recognised the same way;
* a pandas DataFrame;
* records: an iterable of ir_measures' ``ScoredDoc(query_id, doc_id, score)`` or
  ``Qrel(query_id, doc_id, relevance, iteration)`` (ir_datasets' ``qrels_iter()`` too),
  of dicts, or pytrec_eval's nested ``{qid: {docno: value}}``.

Columns are those of tiecore's DataFrames, ``qid, docno, score`` for runs and
``qid, docno, level`` for qrels; ir_measures' names ``query_id, doc_id`` and
``relevance`` are accepted when tiecore's are absent.  A run's ``tag`` names it as
in a text run (JSON Lines and records; Parquet runs are named by their file, as
:mod:`tiecore.distributed` names them); ``rank``, ``iteration`` and other columns
are ignored.  Everything then passes the checks of :mod:`tiecore.io.frames`, and an
:class:`~tiecore.errors.InputError` names the file and its line (JSON Lines), its
1-based row (Parquet), or the record's 0-based position.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import operator
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from tiecore.errors import InputError
from tiecore.io import trec
from tiecore.io.files import dataset_stem
from tiecore.io.frames import check_qrels, check_run
from tiecore.io.runs import Qrels, Run, run_name
from tiecore.io.text import encodable, load_text

__all__ = ["claims", "read_qrels", "read_run", "run_sources"]

STDIN = "-"
PARQUET_SUFFIXES = (".parquet",)
JSONL_SUFFIXES = (".jsonl", ".ndjson")

#: Columns of each kind, with the other names accepted for them.
COLUMNS = {
    "run": {"qid": ("query_id",), "docno": ("doc_id",), "score": ()},
    "qrels": {"qid": ("query_id",), "docno": ("doc_id",), "level": ("relevance",)},
}
_EXPECTED = {
    "run": "columns qid, docno, score (or ir_measures' query_id, doc_id, score)",
    "qrels": "columns qid, docno, level (or ir_measures' query_id, doc_id, relevance)",
}
_PARQUET_MAGIC = b"PAR1"
_GZIP_MAGIC = b"\x1f\x8b"
_ID_NAMES = ("qid", "query_id", "docno", "doc_id")
_ROW = re.compile(r"^row (\d+): (.*)$", re.S)


@dataclass(frozen=True)
class _Raw:
    """A frame as a format gave it, before the checks: ``lines`` when its index holds
    the file's line numbers (JSON Lines: an error names the line), ``columns`` the
    file's own columns (Parquet: all of them, for a missing column's message)."""

    frame: pd.DataFrame
    lines: bool = False
    columns: list[str] | None = None


# ------------------------------------------------------------------ dispatch


def _suffix_kind(path: str) -> str | None:
    """``"parquet"``, ``"jsonl"`` or None (TREC text) from a file name."""
    name = path.lower().removesuffix(".gz")
    if name.endswith(PARQUET_SUFFIXES) and not path.lower().endswith(".gz"):
        return "parquet"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    return None


def _sniff(data: bytes) -> str | None:
    """The format of some bytes: ``"parquet"``, ``"jsonl"`` or None (TREC text)."""
    if data[:4] == _PARQUET_MAGIC:
        return "parquet"
    body = data.lstrip(b" \t\r\n\v\f\xef\xbb\xbf")
    if body[:1] != b"{":
        return None
    # JSON Lines only when the first line is a JSON object: a TREC line may start with "{"
    first = body.replace(b"\r", b"\n").split(b"\n", 1)[0]
    try:
        return "jsonl" if isinstance(json.loads(first), dict) else None
    except ValueError:
        return None


def _is_path(source: object) -> bool:
    return isinstance(source, (str, os.PathLike))


def _is_records(source: object) -> bool:
    return not (
        _is_path(source)
        or isinstance(source, (bytes, bytearray, memoryview, pd.DataFrame))
        or hasattr(source, "read")
    ) and isinstance(source, Iterable)


def claims(source: object) -> bool:
    """Whether this module reads ``source`` (else it is TREC text for :mod:`tiecore.io`).

    >>> claims("run.parquet"), claims("qrels.jsonl.gz"), claims("-"), claims("run.txt")
    (True, True, True, False)
    """
    if _is_path(source):
        path = os.fspath(source)
        return path == STDIN or _suffix_kind(path) is not None
    if isinstance(source, pd.DataFrame) or _is_records(source):
        return True
    if hasattr(source, "getvalue"):  # an in-memory file or an upload: look at its bytes
        head = source.getvalue()[:4096]
        if isinstance(head, str):
            head = head.encode("utf-8", "replace")
        if head[:2] == _GZIP_MAGIC:
            head = _gunzip_head(bytes(source.getvalue()))
        return _sniff(bytes(head)) is not None
    return False


def run_sources(sources: object) -> Any:
    """What :func:`tiecore.read_runs` should iterate: one run in a list, or the runs.

    A DataFrame or a records iterable is one run; a generator is peeked at and
    chained back together.
    """
    if isinstance(sources, pd.DataFrame) or _is_path(sources) or hasattr(sources, "read"):
        return [sources]
    if isinstance(sources, Mapping):
        first = next(iter(sources.values()), None)
        return [sources] if isinstance(first, Mapping) else sources
    if not isinstance(sources, Iterable):
        return sources
    if not isinstance(sources, (list, tuple)):
        sources = iter(sources)
        first = next(sources, None)
        sources = itertools.chain([] if first is None else [first], sources)
    else:
        first = sources[0] if sources else None
    return [sources] if _is_record(first) else sources


def _is_record(value: object) -> bool:
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return True
    return isinstance(value, Mapping) and not isinstance(value, pd.DataFrame)


# ------------------------------------------------------------------- readers


def read_run(source: object, *, name: str | None = None) -> Run:
    """A run from a source that :func:`claims` (see the module's docstring).

    Returns the :class:`~tiecore.io.runs.Run` :func:`tiecore.read_run` returns (``qid,
    docno, score``, with its ``name``, ``source``, ``tags``).

    Examples
    --------
    >>> from collections import namedtuple
    >>> ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")  # ir_measures' own
    >>> run = read_run([ScoredDoc("q1", "d1", 2.0), ScoredDoc("q1", "d2", 1.0)])
    >>> run.values.tolist(), run.source
    ([['q1', 'd1', 2.0], ['q1', 'd2', 1.0]], 'run records')
    >>> read_run([ScoredDoc("q1", "d1", 2.0), ScoredDoc("q1", "d1", 1.0)])
    Traceback (most recent call last):
    ...
    tiecore.errors.InputError: run records: row 1: docno 'd1' appears twice for query 'q1' \
(first at row 0) (expected each docno at most once per query)
    """
    raw, where, tags = _load("run", source)
    run = _checked("run", raw, where)
    if name is None and len(tags) == 1:
        name = tags[0]
    elif name is None and isinstance(source, pd.DataFrame):
        name = run_name(source)
    elif name is None:
        name = "run" if _is_records(source) else dataset_stem(where)
    run.name, run.source, run.tags = name, where, tags
    return run


def read_qrels(source: object) -> Qrels:
    """Qrels from a source that :func:`claims` (see the module's docstring).

    Examples
    --------
    >>> qrels = read_qrels({"q1": {"d1": 1, "d2": 0}})  # pytrec_eval's layout
    >>> qrels.values.tolist()
    [['q1', 'd1', 1], ['q1', 'd2', 0]]
    """
    raw, where, _ = _load("qrels", source)
    qrels = _checked("qrels", raw, where)
    qrels.source = where
    return qrels


def _load(kind: str, source: object) -> tuple[_Raw, str, list[str]]:
    """The raw frame (with its line numbers as index when known), its name and its tags."""
    if isinstance(source, pd.DataFrame):
        where = str((Run if kind == "run" else Qrels).of(source).source or f"{kind} DataFrame")
        raw = _Raw(source)
    elif _is_records(source):
        where = f"{kind} records"
        raw = _Raw(_records(kind, source, where))
    elif _is_path(source) and os.fspath(source) == STDIN:
        return _stdin(kind)
    elif _is_path(source):
        where = os.fspath(source)
        if _suffix_kind(where) == "parquet":
            raw = _parquet(kind, where, where)
        else:
            raw = _jsonl(kind, _text_bytes(source), where)
    else:
        where, data = _display(source), _bytes_of(source)
        found = _by_content(kind, data, where)
        if found is None:
            raise InputError(where, None, "not Parquet or JSON Lines", _EXPECTED[kind])
        raw = found
    raw = _columns(kind, raw, where)
    frame = raw.frame
    tags: list[str] = []
    if kind == "run" and "tag" in frame.columns and not where.lower().endswith(".parquet"):
        tags = [str(t) for t in pd.unique(frame["tag"].dropna())]
    return raw, where, tags


def _stdin(kind: str) -> tuple[_Raw, str, list[str]]:
    """Standard input: Parquet, JSON Lines or TREC text, recognised by its bytes."""
    where = "<stdin>"
    data = sys.stdin.buffer.read()
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, where)
    found = _by_content(kind, data, where)
    if found is not None:
        raw = _columns(kind, found, where)
        tags = []
        if kind == "run" and "tag" in raw.frame.columns:
            tags = [str(t) for t in pd.unique(raw.frame["tag"].dropna())]
        return raw, where, tags
    buffer = io.BytesIO(data)
    buffer.name = where
    if kind == "qrels":
        parsed = trec.read_qrels(buffer)
        return _Raw(parsed), where, []
    run = trec.read_run(buffer)
    return _Raw(run), where, run.tags


def _by_content(kind: str, data: bytes, where: str) -> _Raw | None:
    found = _sniff(data[:4096])
    if found == "parquet":
        import pyarrow as pa

        return _parquet(kind, pa.BufferReader(data), where)
    if found == "jsonl":
        buffer = io.BytesIO(data)
        buffer.name = where
        text, _ = load_text(buffer)  # gzip, BOM and UTF-8 as for text files
        return _jsonl(kind, text, where)
    return None


def _display(source: object) -> str:
    name = getattr(source, "name", None)
    return str(name) if isinstance(name, (str, os.PathLike)) and str(name) else "<upload>"


def _bytes_of(source: object) -> bytes:
    raw = source.getvalue() if hasattr(source, "getvalue") else source.read()
    data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, _display(source))
    return data


def _gunzip(data: bytes, where: str) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(
            where, None, f"corrupt gzip data ({exc})", "a complete gzip file"
        ) from None


def _gunzip_head(data: bytes) -> bytes:
    try:
        return zlib.decompressobj(wbits=31).decompress(data[:65536], 4096)
    except zlib.error:
        return b""


def _text_bytes(path: object) -> bytes:
    """A text file's checked, decompressed bytes (the rules of :mod:`tiecore.io`)."""
    data, _ = load_text(path)
    return data


# ------------------------------------------------------------------- formats


def _parquet(kind: str, source: object, where: str) -> _Raw:
    """The needed columns of a Parquet file; index: 1-based row numbers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(source)
        names = handle.schema_arrow.names
        wanted = [c for c in names if c in _all_names(kind) or c == "tag"]
        table = handle.read(columns=wanted)
    except FileNotFoundError:
        raise InputError(where, None, "no such file", "an existing file") from None
    except (OSError, pa.ArrowException) as error:
        raise InputError(where, None, f"cannot read Parquet ({error})", "a Parquet file") from None
    frame = table.to_pandas()
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return _Raw(frame, columns=names)


def _jsonl(kind: str, data: bytes, where: str) -> _Raw:
    """JSON Lines: one object per line (blank lines skipped); index: the line numbers."""
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        table = pj.read_json(io.BytesIO(data))
        fast = table.num_rows == data.count(b"\n") + (not data.endswith(b"\n"))
        ids = [table.schema.field(c).type for c in _ID_NAMES if c in table.column_names]
        # pyarrow infers timestamps from id-like strings ("2020-01-01"): parse those exactly
        fast = fast and all(pa.types.is_string(t) or pa.types.is_integer(t) for t in ids)
    except pa.ArrowException:
        table, fast = None, False
    if fast and table is not None:  # no blank lines: row k is line k + 1
        frame = table.to_pandas()
        frame.index = pd.RangeIndex(1, len(frame) + 1)
    else:  # mixed types, blank lines or a bad line: line by line, to name the line
        rows, lines = [], []
        for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line, object_pairs_hook=_object)
            except json.JSONDecodeError as error:
                raise InputError(
                    where, number, f"not valid JSON ({error.msg})", "one JSON object per line"
                ) from None
            except _TwiceError as error:
                raise InputError(
                    where, number, f"key {error.key!r} appears twice in the object",
                    "each key once per object",
                ) from None  # fmt: skip
            if not isinstance(record, dict):
                raise InputError(
                    where, number, f"a JSON {type(record).__name__}", "one JSON object per line"
                )
            rows.append(record)
            lines.append(number)
        if not rows:
            raise InputError(where, None, "no records (the file is empty)", _EXPECTED[kind])
        try:
            frame = pd.DataFrame.from_records(rows, index=lines)
        except UnicodeEncodeError:  # a lone surrogate ("\\ud800"), which pandas' str refuses
            _unencodable(rows, lines, where)
            raise
    return _Raw(frame, lines=True)


def _unencodable(rows: list[dict], lines: list[int], where: str) -> None:
    """Fail on the first string that UTF-8 cannot encode, naming its line and key (the
    error path: a JSON escape such as ``"\\ud800"`` gives Python a lone surrogate)."""
    for record, number in zip(rows, lines, strict=True):
        for key, value in record.items():
            if isinstance(value, str) and not encodable(value):
                raise InputError(
                    where, number,
                    f"{key} {value!r} is not valid text (a lone surrogate)",
                    "text that UTF-8 can encode",
                )  # fmt: skip


class _TwiceError(ValueError):
    """A JSON object names a key twice (``json`` would keep the last value silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object's dict, refusing a key given twice (``{"score": 1, "score": 5}``)."""
    record = dict(pairs)
    if len(record) < len(pairs):
        seen: set[str] = set()
        raise _TwiceError(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return record


def _records(kind: str, source: Iterable, where: str) -> pd.DataFrame:
    """ir_measures namedtuples, dicts or pytrec_eval's ``{qid: {docno: value}}``; a
    string that UTF-8 cannot encode (a lone surrogate, which pandas refuses) is named."""
    if not isinstance(source, Mapping):
        source = list(source)
    try:
        return _records_frame(kind, source, where)
    except UnicodeEncodeError:
        bad = next(text for text in _texts(source) if not encodable(text))
        raise InputError(
            where, None, f"{bad!r} is not valid text (a lone surrogate)",
            "text that UTF-8 can encode",
        ) from None  # fmt: skip


def _texts(source: Mapping | list) -> Iterator[str]:
    """Every string of ``{qid: {docno: value}}`` or of a list of records."""
    if isinstance(source, Mapping):
        for qid, docs in source.items():
            yield from (text for text in (qid, *docs) if isinstance(text, str))
        return
    for row in source:
        cells = row.values() if isinstance(row, Mapping) else row
        yield from (cell for cell in cells if isinstance(cell, str))


def _records_frame(kind: str, source: Mapping | list, where: str) -> pd.DataFrame:
    value = "score" if kind == "run" else "level"
    if isinstance(source, Mapping):  # one pass over the queries in C (map, chain), no loop
        docs = list(source.values())
        if not all(map(isinstance, docs, itertools.repeat(Mapping))):
            qid, bad = next((q, d) for q, d in source.items() if not isinstance(d, Mapping))
            raise InputError(
                where, None, f"query {qid!r} maps to a {type(bad).__name__}",
                f"{{qid: {{docno: {value}}}}}, as pytrec_eval takes",
            )  # fmt: skip
        counts = np.fromiter(map(len, docs), dtype=np.intp, count=len(docs))
        rows = np.arange(len(docs)).repeat(counts)  # each doc's query
        values = list(itertools.chain.from_iterable(map(operator.methodcaller("values"), docs)))
        return pd.DataFrame(
            {
                "qid": _ids(list(source), rows),
                "docno": _ids(list(itertools.chain.from_iterable(docs)), None),
                value: values,
            }
        )
    rows = list(source)
    if not rows:
        raise InputError(where, None, "no records (an empty iterable)", "at least one record")
    first = rows[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        fields = list(first._fields)
        for position, row in enumerate(rows):
            if not (isinstance(row, tuple) and len(row) == len(fields)):
                raise InputError(
                    where, None, f"row {position}: {row!r} differs from the first record",
                    f"records like {first!r}",
                )  # fmt: skip
        return pd.DataFrame.from_records(rows, columns=fields)
    if all(isinstance(row, Mapping) for row in rows):
        return pd.DataFrame.from_records(rows)
    bad = next(i for i, row in enumerate(rows) if not isinstance(row, Mapping))
    raise InputError(
        where, None, f"row {bad}: {rows[bad]!r} is a {type(rows[bad]).__name__}",
        "ir_measures' ScoredDoc/Qrel namedtuples or dicts",
    )  # fmt: skip


def _ids(items: list, rows: np.ndarray | None) -> object:
    """A column of ids (taken at ``rows`` when given): pandas' string array straight from
    pyarrow's, which reads a list of ``str`` in C (pandas' own inference checks each item
    in Python: 3 times slower on a large run); other ids (integers, mixed, missing) as
    objects, which :func:`tiecore.io.frames.check_run` converts or refuses as before."""
    try:
        strings = pa.array(items, type=pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        strings = None
    if strings is None or strings.null_count:
        objects = np.fromiter(items, dtype=object, count=len(items))
        return objects if rows is None else objects[rows]
    return pd.array(strings if rows is None else strings.take(rows), dtype="str")


def _all_names(kind: str) -> set[str]:
    return {name for column, others in COLUMNS[kind].items() for name in (column, *others)}


def _columns(kind: str, raw: _Raw, where: str) -> _Raw:
    """tiecore's column names, taking ir_measures' when tiecore's are absent."""
    frame = raw.frame
    renames = {}
    for column, others in COLUMNS[kind].items():
        if column in frame.columns:
            continue
        found = [name for name in others if name in frame.columns]
        if not found:
            has = ", ".join(map(str, raw.columns or frame.columns)) or "none"
            raise InputError(
                where, None, f"no column {column!r} (its columns: {has})", _EXPECTED[kind]
            )
        renames[found[0]] = column
    if renames:
        frame = frame.rename(columns=renames)
    for column in COLUMNS[kind]:
        if (frame.columns == column).sum() > 1:  # frame[column] would be a DataFrame
            raise InputError(
                where, None, f"column {column!r} appears more than once", _EXPECTED[kind]
            )
    return replace(raw, frame=frame)


def _checked(kind: str, raw: _Raw, where: str) -> Any:
    """The rules of :mod:`tiecore.io.frames`; an error names ``where`` and the line or row."""
    frame = raw.frame
    columns = list(COLUMNS[kind])
    try:
        if kind == "run":
            checked = check_run(frame[columns], where)
        else:
            checked = check_qrels(frame[columns])
    except InputError as error:
        match = _ROW.match(error.problem)
        if match and raw.lines:
            raise InputError(where, int(match[1]), match[2], error.expected) from None
        raise InputError(where, None, error.problem, error.expected) from None
    ids = checked.checked_ids() if kind == "run" else None
    out = checked.reset_index(drop=True)  # the same id arrays, just checked
    out.attrs.clear()  # a given frame's own attrs are not carried: the caller sets the fields
    out.mark_checked(ids)
    return out

"""TREC runs and qrels as text: ``qid Q0 docno rank score tag`` and ``qid iter docno level``.

The fast path (:mod:`tiecore.io.fastpath`) parses with pyarrow where that provably
splits as trec_eval does; anything else (mixed whitespace, a bad value, an error to
name) goes to a careful vectorised tokenizer (:mod:`tiecore.io.text`) that works in
batches of lines and keeps the line number of every record. Duplicates are refused
by the test of :mod:`tiecore.io.ids`, whose codes and hashes a run keeps.
:func:`read_run_columns` and :func:`read_qrels_columns` give the checked columns
without pandas (``tiecore eval``'s arrow path).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from tiecore.errors import InputError
from tiecore.io.arrays import kernel, to_numpy
from tiecore.io.fastpath import Text, fast_table
from tiecore.io.files import stem
from tiecore.io.ids import RunIds, first_duplicate
from tiecore.io.text import (
    TEXT,
    TOKEN,
    Locator,
    NeedLines,
    Source,
    Tokens,
    cast_column,
    decimal_levels,
    display_name,
    fields_phrase,
    text_lines,
)

if TYPE_CHECKING:
    import pandas as pd

    from tiecore.io.runs import Qrels, Run

__all__ = ["RunColumns", "read_qrels", "read_qrels_columns", "read_run", "read_run_columns"]

RUN_FIELDS = "6 fields 'qid Q0 docno rank score tag' (or 5 without the tag)"
QRELS_FIELDS = "4 fields 'qid iter docno level'"

_BATCH = 1 << 18  # lines per batch on the careful path
_RUN_TYPES = {0: TEXT, 2: TEXT, 4: pa.float64(), 5: TOKEN}
_QRELS_TYPES = {0: TEXT, 2: TEXT, 3: TOKEN}  # the level as text: decimal is checked


def _batches(text: Text) -> Iterator[tuple[Tokens, np.ndarray, Locator]]:
    """Tokens of the text in batches of lines, with the content rows of each batch and
    a locator for them (records of a batch -> file lines); batches without content
    are skipped. Batching bounds the memory the whitespace split needs."""
    lines = text_lines(text.data())
    pool = pa.default_memory_pool()
    for start in range(0, len(lines), _BATCH):
        tokens = Tokens.split(lines.slice(start, _BATCH))
        rows = tokens.content_rows()
        if len(rows):
            yield tokens, rows, Locator(text.where, rows + (start + 1))
        del tokens
        pool.release_unused()  # hand the split's memory back before the next batch


def _check_unique(
    qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray, loc: Locator, what: str
) -> RunIds:
    """Fail on the second occurrence of a (qid, docno) pair, naming the first; return the
    ids as the test read them."""
    ids = RunIds.of(qid, docno)
    dup = first_duplicate(qid, docno, ids=ids)
    if dup is not None:
        first, second = dup
        first_line = loc.line(first)
        loc.fail(
            second,
            f"docno {docno[second].as_py()!r} appears twice for query {qid[second].as_py()!r}"
            + (f" (first on line {first_line})" if first_line is not None else ""),
            f"each docno at most once per query in a {what}",
        )
    return ids


# ---------------------------------------------------------------------------- runs


def _first_tokens(tokens: Tokens, rows: np.ndarray) -> list[str]:
    """The tokens of the first content line of a batch."""
    k = int(rows[0])
    return tokens.flat.slice(int(tokens.first[k]), int(tokens.count[k])).to_pylist()


def _is_number(token: str, *, integer: bool = False) -> bool:
    if integer:
        return re.fullmatch(r"[+-]?[0-9]+", token) is not None
    try:
        float(token)
    except ValueError:
        return False
    return True


def _looks_like_qrels(tokens: Tokens, rows: np.ndarray) -> bool:
    """Every line has 4 fields and the first ends with an integer: ``qid iter docno level``."""
    first = _first_tokens(tokens, rows)
    return (
        len(first) == 4
        and _is_number(first[3], integer=True)
        and bool((tokens.count[rows] == 4).all())
    )


def _looks_like_run(tokens: Tokens, rows: np.ndarray) -> bool:
    """Every line has the 5 or 6 fields of the first, which reads ``qid Q0 docno rank score``."""
    first = _first_tokens(tokens, rows)
    return (
        len(first) in (5, 6)
        and re.fullmatch(r"[Qq]?[0-9]+", first[1]) is not None
        and _is_number(first[3], integer=True)
        and _is_number(first[4])
        and bool((tokens.count[rows] == len(first)).all())
    )


def _careful_run(text: Text) -> tuple[dict[str, pa.ChunkedArray], Locator]:
    """Whitespace-split every line; the first content line fixes the number of fields.

    With 5 or 6 fields every line must have as many: another count is a docno or tag
    with a space, or a missing field, which trec_eval would silently read shifted.
    A first line with fields after the tag declares trec_eval's ignored trailing
    fields (its own ``results.trunc``): then every line needs at least 6, and some
    other line must have trailing fields too; a first line that alone has more than 6
    is refused as a 7-field line among 6-field lines is anywhere else.
    """
    parts: list[dict[str, pa.Array]] = []
    lines: list[np.ndarray] = []
    first_count = first_line = 0
    trailing = others = 0  # lines after the first: with fields after the tag, in all
    for tokens, rows, loc in _batches(text):
        count = tokens.count[rows]
        trailing += int(np.count_nonzero(count[1 if not parts else 0 :] > 6))
        others += len(count) - (not parts)
        if not parts:
            first_count, first_line = int(count[0]), loc.line(0)
            if first_count < 5:
                problem = fields_phrase(first_count)
                if _looks_like_qrels(tokens, rows):
                    problem += ": this looks like TREC qrels, not a run"
                loc.fail(0, problem, RUN_FIELDS)
        # fields after the tag vary freely only in a file whose first line has some
        bad = np.flatnonzero(count < 6 if first_count > 6 else count != first_count)
        if len(bad):
            k = int(bad[0])
            problem = f"{fields_phrase(count[k])} but line {first_line} has {first_count}"
            if count[k] > first_count == 6:
                problem += " (a space inside a docno or a tag?)"
            loc.fail(k, problem, RUN_FIELDS + ", as many on every line")
        tagged = first_count >= 6
        score_text = tokens.field(rows, 4)
        score, k = cast_column(score_text, pa.float64())
        if k is None:
            infinite = np.flatnonzero(~np.isfinite(to_numpy(score)))
            k = int(infinite[0]) if len(infinite) else None
            problem = "score {!r} is not finite"
        else:
            problem = "score {!r} is not a number"
        if k is not None:
            loc.fail(k, problem.format(score_text[k].as_py()), "a finite number")
        part = {"qid": tokens.field(rows, 0), "docno": tokens.field(rows, 2), "score": score}
        if tagged:
            part["tag"] = tokens.field(rows, 5)
        parts.append(part)
        lines.append(loc.lines)
    if not parts:
        raise InputError(text.where, None, "no run lines (the file is empty)", RUN_FIELDS)
    if (
        first_count > 6 and others and not trailing
    ):  # the first line alone has more: as anywhere else
        raise InputError(
            text.where,
            first_line,
            f"{fields_phrase(first_count)} but every other line has 6"
            " (a space inside a docno or a tag?)",
            RUN_FIELDS + ", as many on every line",
        )
    fields = {key: pa.chunked_array([part[key] for part in parts]) for key in parts[0]}
    return fields, Locator(text.where, np.concatenate(lines))


def _fast_run(text: Text) -> tuple[dict[str, pa.ChunkedArray], Locator, list[str]] | None:
    """Fields and tags, or None when the careful path must read the text."""
    parsed = fast_table(text, _RUN_TYPES, 5, last=5)
    if parsed is None:
        return None
    fields, tags, _ = run_fields(*parsed)
    return fields, Locator(text.where, None), tags


def run_fields(
    table: pa.Table, tag: str | None
) -> tuple[dict[str, pa.ChunkedArray], list[str], int]:
    """The run fields of :func:`~tiecore.io.fastpath.fast_table`'s table (``tag`` in a
    column when its lines' tags differ), the tags known already and the number of
    fields on every line (the table holds the last one, or all of them)."""
    fields = {"qid": table["f0"], "docno": table["f2"], "score": table["f4"]}
    if tag is None and "f5" in table.column_names:
        fields["tag"] = table["f5"]
    n_fields = 1 + max(int(name[1:]) for name in table.column_names)
    return fields, [tag] if tag is not None else [], n_fields


@dataclass
class RunColumns:
    """A run file's checked columns, before any DataFrame: what :func:`read_run` wraps
    (and ``tiecore eval`` evaluates as they are, without pandas).

    ``qid`` and ``docno`` are large_string, ``score`` one chunk of finite float64;
    each (qid, docno) pair is unique; ``ids`` are the duplicate test's
    :class:`RunIds`, ``tags`` the distinct tags in order of appearance.
    """

    qid: pa.ChunkedArray
    docno: pa.ChunkedArray
    score: pa.ChunkedArray
    tags: list[str]
    ids: RunIds


def distinct_tags(tag: pa.ChunkedArray) -> list[str]:
    """The distinct tags of a (non-empty) tag column, in order of appearance."""
    first = tag[0]
    if kernel("all", kernel("equal", tag, first)).as_py():
        return [first.as_py()]
    return kernel("unique", tag).to_pylist()


def _run_columns(
    fields: dict[str, pa.ChunkedArray],
    loc: Locator,
    tags: list[str] | None = None,
    *,
    release: bool = True,
) -> RunColumns:
    """Validate parsed run fields; the tags are given, or found in the ``tag`` field.
    ``release``: hand the parser's unused memory back to the system first (not between
    batches, whose next one would take it again, page by page)."""
    if not kernel("all", kernel("is_finite", fields["score"])).as_py():  # careful: the line
        infinite = np.flatnonzero(~np.isfinite(to_numpy(fields["score"])))
        loc.fail(int(infinite[0]), "score is not finite", "a finite number")
    tags = list(tags or [])
    if "tag" in fields:
        tags = distinct_tags(fields.pop("tag"))  # freed before the duplicate check
    if release:
        pa.default_memory_pool().release_unused()  # the parser's buffers: the test's memory
    ids = _check_unique(fields["qid"], fields["docno"], loc, "run")
    # one chunk of scores, in arrow's pool: pandas then shares it instead of copying (a
    # run read in one chunk is kept as it is: combine_chunks would copy it all the same)
    score = fields.pop("score")
    if score.num_chunks != 1:
        score = pa.chunked_array([score.combine_chunks()])
    return RunColumns(fields.pop("qid"), fields.pop("docno"), score, tags, ids)


def _run_frame(columns: RunColumns) -> Run:
    """The :class:`Run` of checked run columns, marked checked with its ids."""
    from tiecore.io.runs import Run  # lazy: pandas, not on tiecore eval's arrow path

    table = pa.table({"qid": columns.qid, "docno": columns.docno, "score": columns.score})
    frame = Run(table.to_pandas(split_blocks=True), copy=False)
    del table
    # checked here: evaluation does not test it again, and reuses the qid codes and hashes
    frame.mark_checked(columns.ids)
    return frame


def _parse_run_columns(text: Text, *, fast: bool = True) -> RunColumns:
    """Parse a run: the fast path first, the careful one for messy layouts and errors."""
    parsed = _fast_run(text) if fast else None
    if parsed is not None:
        try:
            return _run_columns(*parsed)
        except NeedLines:
            pass
    return _run_columns(*_careful_run(text))


def _parse_run(text: Text, *, fast: bool = True) -> tuple[Run, list[str]]:
    """:func:`_parse_run_columns` as a DataFrame, and the tags."""
    columns = _parse_run_columns(text, fast=fast)
    return _run_frame(columns), columns.tags


def read_run_columns(path: str | os.PathLike) -> RunColumns:
    """:func:`read_run`'s checked columns of a TREC run file (plain or gzip), without
    a DataFrame: the same rules, errors and values, for ``tiecore eval``'s arrow path."""
    text = Text(path)
    columns = _parse_run_columns(text)
    del text
    pa.default_memory_pool().release_unused()
    return columns


def read_run(source: Source, *, name: str | None = None) -> Run:
    """:func:`tiecore.io.read_run` of a TREC text run (a path or file object, plain or gzip)."""
    text = Text(source)
    frame, tags = _parse_run(text)
    del text
    pa.default_memory_pool().release_unused()
    if name is None:
        name = tags[0] if len(tags) == 1 else stem(display_name(source))
    frame.name, frame.source, frame.tags = name, display_name(source), tags
    return frame


# --------------------------------------------------------------------------- qrels


def _careful_qrels(text: Text) -> tuple[dict[str, pa.ChunkedArray], Locator]:
    """Whitespace-split every line: exactly 4 fields, an integer level."""
    parts: list[dict[str, pa.Array]] = []
    lines: list[np.ndarray] = []
    for tokens, rows, loc in _batches(text):
        count = tokens.count[rows]
        bad = np.flatnonzero(count != 4)
        if len(bad):
            k = int(bad[0])
            problem = fields_phrase(count[k])
            if not parts and k == 0 and _looks_like_run(tokens, rows):
                problem += ": this looks like a TREC run, not qrels"
            loc.fail(k, problem, QRELS_FIELDS)
        level_text = tokens.field(rows, 3)
        level, k = decimal_levels(level_text)
        if k is not None:
            loc.fail(k, f"level {level_text[k].as_py()!r} is not an integer", "a decimal integer")
        parts.append({"qid": tokens.field(rows, 0), "docno": tokens.field(rows, 2), "level": level})
        lines.append(loc.lines)
    if not parts:
        raise InputError(text.where, None, "no qrels lines (the file is empty)", QRELS_FIELDS)
    fields = {key: pa.chunked_array([part[key] for part in parts]) for key in parts[0]}
    return fields, Locator(text.where, np.concatenate(lines))


def _parse_qrels_columns(text: Text, *, fast: bool = True) -> dict[str, pa.ChunkedArray]:
    """Parse qrels: the fast path first, the careful one for messy layouts and errors;
    the checked columns ``qid``, ``docno`` (large_string) and ``level`` (int64)."""
    parsed = fast_table(text, _QRELS_TYPES, 4, 4) if fast else None
    if parsed is not None:
        table = parsed[0]
        level, bad = decimal_levels(table["f3"])
        fields = {"qid": table["f0"], "docno": table["f2"], "level": level}
        try:
            if bad is not None:
                raise NeedLines  # the careful path names the line
            _check_unique(fields["qid"], fields["docno"], Locator(text.where, None), "qrels")
        except NeedLines:
            pass
        else:
            return fields
    fields, loc = _careful_qrels(text)
    _check_unique(fields["qid"], fields["docno"], loc, "qrels")
    return fields


def _parse_qrels(text: Text, *, fast: bool = True) -> pd.DataFrame:
    """:func:`_parse_qrels_columns` as a DataFrame."""
    return pa.table(_parse_qrels_columns(text, fast=fast)).to_pandas()


def read_qrels_columns(path: str | os.PathLike) -> dict[str, pa.ChunkedArray]:
    """:func:`read_qrels`'s checked columns of a TREC qrels file, without a DataFrame."""
    columns = _parse_qrels_columns(Text(path))
    pa.default_memory_pool().release_unused()
    return columns


def read_qrels(source: Source) -> Qrels:
    """:func:`tiecore.io.read_qrels` of TREC text qrels (a path or file object, plain or gzip)."""
    frame = _parse_qrels(Text(source))
    pa.default_memory_pool().release_unused()
    from tiecore.io.runs import Qrels  # lazy: pandas, not on tiecore eval's arrow path

    qrels = Qrels(frame, copy=False)
    qrels.source = display_name(source)
    qrels.mark_checked()
    return qrels

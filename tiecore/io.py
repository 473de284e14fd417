"""Read TREC runs, TREC qrels and LETOR (svmlight) files into pandas DataFrames.

Formats
-------
run
    ``qid Q0 docno rank score tag``, fields separated by any mix of spaces and tabs.
    The ``Q0`` and ``rank`` fields are ignored (trec_eval ranks by score), the ``tag``
    may be missing on every line (5 fields), and fields after the tag are ignored as
    trec_eval does. A docno may appear only once per query (trec_eval refuses it too).
qrels
    ``qid iter docno level`` with an integer ``level`` (negative levels allowed), one
    judgment per (qid, docno).
LETOR / svmlight
    ``label qid:Q i:v i:v ... # comment`` with an integer label and strictly increasing
    1-based feature indexes; a missing feature counts as 0.

Every format: plain text or gzip (recognised by its magic bytes, not by the name),
UTF-8, lines split at ``\\n`` (a ``\\r`` counts as whitespace); blank lines and lines
whose first field starts with ``#`` are skipped, like trec_eval does. Line numbers in
errors are physical lines of the (decompressed) file.

Strategy
--------
Speed comes from :mod:`pyarrow.csv`: when one single delimiter (a tab or a space)
separates every field, the file is parsed by pyarrow in parallel and checked with
vectorised tests. Anything unusual (mixed whitespace, blank or comment lines, a bad
value) falls back to a careful vectorised tokenizer that keeps the line number of
every record, so that the :class:`~tiecore.errors.InputError` names the exact line.
"""

from __future__ import annotations

import codecs
import gzip
import os
import zlib
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NoReturn

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from tiecore.errors import InputError

__all__ = ["read_letor", "read_qrels", "read_run", "read_runs"]

Source = str | os.PathLike[str] | IO[bytes] | IO[str]

RUN_FIELDS = "6 fields 'qid Q0 docno rank score tag' (or 5 without the tag)"
QRELS_FIELDS = "4 fields 'qid iter docno level'"
LETOR_FIELDS = "'label qid:<id> index:value ...'"

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 24  # bytes per numpy pass when scanning big buffers
_PIECE = 1 << 18  # rows per piece when hashing on several threads


# --------------------------------------------------------------------------- bytes


def _display_name(source: Source) -> str:
    """Name used in error messages: the path, or a file object's ``.name``."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return str(name) if isinstance(name, (str, os.PathLike)) and str(name) else "<upload>"


def _stem(display: str) -> str:
    """File name without its directory, ``.gz`` and ``.txt`` (``run.txt.gz`` -> ``run``)."""
    name = Path(display).name or display
    for suffix in (".gz", ".txt"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _load(source: Source) -> tuple[bytes, str]:
    """Return the (decompressed) bytes of ``source`` and its display name."""
    where = _display_name(source)
    if isinstance(source, (str, os.PathLike)):
        try:
            data = Path(source).read_bytes()
        except FileNotFoundError:
            raise InputError(where, None, "no such file", "an existing file") from None
        except IsADirectoryError:
            raise InputError(where, None, "is a directory", "a file") from None
        except OSError as exc:
            raise InputError(where, None, f"cannot read the file ({exc.strerror})") from None
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        raw = source.getvalue() if hasattr(source, "getvalue") else source.read()
        if isinstance(raw, str):
            try:
                data = raw.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputError(where, None, f"unencodable text ({exc.reason})") from None
        else:
            data = bytes(raw)
    else:
        raise TypeError(f"expected a path or a file object, got {type(source).__name__}")
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(
                where, None, f"corrupt gzip data ({exc})", "a complete gzip file"
            ) from None
    if data[:3] == _BOM:
        data = data[3:]
    _check_text(data, where)
    return data, where


def _line_at(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def _check_text(data: bytes, where: str) -> None:
    """Reject binary data: NUL bytes and bytes that are not UTF-8 (with their line)."""
    nul = data.find(b"\x00")
    bad = -1
    if not data.isascii():
        decoder = codecs.getincrementaldecoder("utf-8")()
        view = memoryview(data)
        for start in range(0, len(data), _CHUNK):
            try:
                decoder.decode(view[start : start + _CHUNK], start + _CHUNK >= len(data))
            except UnicodeDecodeError:
                bad = _first_bad_utf8(data, start)
                break
    if nul < 0 and bad < 0:
        return
    pos = min(p for p in (nul, bad) if p >= 0)
    if pos == nul:
        raise InputError(where, _line_at(data, pos), "NUL byte (binary data)", "a text file")
    raise InputError(
        where,
        _line_at(data, pos),
        f"byte 0x{data[pos]:02x} is not UTF-8 text (binary data or another encoding?)",
        "a UTF-8 text file",
    )


def _first_bad_utf8(data: bytes, start: int) -> int:
    """Offset of the first invalid UTF-8 byte, known to lie in the chunk at ``start``."""
    begin = max(start - 4, 0)  # the decoder may have held back an unfinished character
    while begin > 0 and 0x80 <= data[begin] < 0xC0:
        begin -= 1
    try:
        data[begin : start + _CHUNK + 4].decode("utf-8")
    except UnicodeDecodeError as exc:
        return begin + exc.start
    return start


# ------------------------------------------------------------------------- records


class _NeedLines(Exception):
    """The fast path saw a problem; redo the file carefully to name the line."""


class _Locator:
    """Turn a record index into an :class:`InputError` naming the file line.

    ``lines`` holds the 1-based file line of every record; ``None`` (fast path)
    means line numbers are unknown and the careful path must take over.
    """

    def __init__(self, where: str, lines: np.ndarray | None) -> None:
        self.where = where
        self.lines = lines

    def fail(self, record: int, problem: str, expected: str | None = None) -> NoReturn:
        if self.lines is None:
            raise _NeedLines
        raise InputError(self.where, int(self.lines[record]), problem, expected)

    def line(self, record: int) -> int | None:
        return None if self.lines is None else int(self.lines[record])


@dataclass(frozen=True)
class _Tokens:
    """Whitespace-separated tokens of every physical line of a file.

    ``flat`` holds all tokens (plus empty artefacts of leading/trailing whitespace);
    line ``i`` owns ``count[i]`` real tokens starting at ``flat[first[i]]``.
    """

    flat: pa.Array
    first: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, data: bytes, *, inline_comments: bool = False) -> _Tokens:
        arr = np.frombuffer(data, np.uint8)
        newlines = [
            np.flatnonzero(arr[i : i + _CHUNK] == 10) + i for i in range(0, len(arr), _CHUNK)
        ]
        ends = np.concatenate([*newlines, np.zeros(0, np.int64)]) + 1
        if len(data) and data[-1:] != b"\n":
            ends = np.append(ends, len(data))
        large = len(data) >= 2**31 - 1
        offsets = np.zeros(len(ends) + 1, np.int64 if large else np.int32)
        offsets[1:] = ends
        lines = pa.Array.from_buffers(
            pa.large_string() if large else pa.string(),
            len(ends),
            [None, pa.py_buffer(offsets), pa.py_buffer(data)],
        )
        if inline_comments and b"#" in data:
            lines = pc.replace_substring_regex(lines, "#.*", "")
        tokens = pc.ascii_split_whitespace(lines)
        flat = tokens.values
        toff = tokens.offsets.to_numpy().astype(np.int64)
        # empty tokens only come from whitespace at either end of a line (runs collapse)
        char_off = _offsets(flat)
        size = toff[1:] - toff[:-1]
        head = np.minimum(toff[:-1], max(len(flat) - 1, 0))  # split never gives []
        tail = np.maximum(toff[1:] - 1, head)
        lead_empty = (size > 0) & (char_off[head + 1] == char_off[head])
        trail_empty = (size > 1) & (char_off[tail + 1] == char_off[tail])
        count = np.maximum(size - lead_empty - trail_empty, 0)
        return cls(flat, toff[:-1] + lead_empty, count)

    def field(self, rows: np.ndarray, j: int) -> pa.Array:
        """Token ``j`` (0-based) of every line in ``rows`` (which must have it)."""
        return self.flat.take(pa.array(self.first[rows] + j))

    def content_rows(self) -> np.ndarray:
        """Lines with at least one token whose first token does not start with ``#``."""
        rows = np.flatnonzero(self.count > 0)
        if len(rows):
            comment = pc.starts_with(self.field(rows, 0), "#").to_numpy(zero_copy_only=False)
            rows = rows[~comment]
        return rows


def _offsets(arr: pa.Array) -> np.ndarray:
    """The offsets of a (large) string array as a zero-copy numpy view."""
    kind = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    buf = arr.buffers()[1]
    return np.frombuffer(buf, kind, count=len(arr) + 1, offset=arr.offset * np.dtype(kind).itemsize)


def _fields(n: int) -> str:
    return f"{n} field" if n == 1 else f"{n} fields"


def _cast(values: pa.Array | pa.ChunkedArray, typ: pa.DataType) -> tuple[pa.Array, int | None]:
    """Cast strings to ``typ``; on failure return the index of the first bad value.

    The bad value is found by bisection with the same arrow parser, so what counts as
    a number is exactly what arrow (and :mod:`pyarrow.csv`) accepts.
    """
    try:
        return pc.cast(values, typ), None
    except pa.ArrowInvalid:
        pass
    lo, hi = 0, len(values)  # the first bad value lies in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            pc.cast(values.slice(lo, mid - lo), typ)
        except pa.ArrowInvalid:
            hi = mid
        else:
            lo = mid
    return values, lo


def _only_crlf(data: bytes) -> bool:
    """True when every ``\\r`` is part of a ``\\r\\n`` line end."""
    arr = np.frombuffer(data, np.uint8)
    for i in range(0, len(arr), _CHUNK):
        after = np.flatnonzero(arr[i : i + _CHUNK] == 13) + (i + 1)
        if len(after) and (after[-1] >= len(arr) or (arr[after] != 10).any()):
            return False
    return True


def _fast_table(data: bytes, layout: dict[int, pa.DataType], min_fields: int) -> pa.Table | None:
    """Parse ``data`` with :mod:`pyarrow.csv` when that is provably the same as splitting
    each line on whitespace; return ``None`` when the careful path is needed.

    The delimiter is the tab, or the space when the file has no tab. Then no field may
    be empty (that means a doubled, leading or trailing delimiter) and, with tabs, no
    text field may hold a space (pyarrow trims the spaces around numbers itself, as in
    trec_eval's own test runs). Every line must have as many fields as the first (else
    pyarrow raises); ``\\v``, ``\\f`` and a ``\\r`` outside ``\\r\\n`` need the careful path.
    pyarrow skips blank lines, so line numbers are unknown here; the caller redoes the
    file carefully when it needs one.
    """
    if not data or b"\x0b" in data or b"\x0c" in data:
        return None
    if b"\r" in data and not _only_crlf(data):
        return None
    has_tab, has_space = b"\t" in data, b" " in data
    if not (has_tab or has_space):
        return None
    delim = b"\t" if has_tab else b" "
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)].rstrip(b"\r")
    n_fields = first.count(delim) + 1
    if not first or first[:1] in (delim, b"#") or n_fields < min_fields:
        return None
    names = [f"f{j}" for j in range(n_fields)]
    keep = [j for j in sorted(layout) if j < n_fields]
    try:
        table = pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=delim.decode(), quote_char=False),
            convert_options=pacsv.ConvertOptions(
                column_types={names[j]: layout[j] for j in keep},
                include_columns=[names[j] for j in keep],
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowException:  # ragged lines, a line longer than a block...
        return None
    for j in keep:
        column = table.column(names[j])
        if pa.types.is_string(column.type) and len(column):
            if pc.min(pc.binary_length(column)).as_py() == 0:
                return None
            if has_tab and has_space and pc.any(pc.match_substring(column, " ")).as_py():
                return None
    if b"#" in data and pc.any(pc.starts_with(table.column("f0"), "#")).as_py():
        return None
    return table


# --------------------------------------------------------------------- duplicates

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)


def _hash_chunk(arr: pa.Array) -> np.ndarray:
    """64-bit hash of every string: length plus (up to) four 8-byte words.

    Strings longer than 32 bytes hash their first 16 and last 16 bytes only; equal
    strings always get equal hashes, which is all the duplicate test needs.
    """
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.uint64)
    data_buf = arr.buffers()[2]
    off = _offsets(arr).astype(np.int64)
    base = int(off[0])
    raw = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    raw = raw[base : int(off[-1])]
    # every row may read 5 words from its start: pad the last row's reads with zeros
    padded = np.zeros((len(raw) // 8 + 6) * 8, np.uint8)
    padded[: len(raw)] = raw
    words = padded.view(np.uint64)
    starts = off[:-1] - base
    length = off[1:] - off[:-1]
    longest = int(length.max())
    h = length.astype(np.uint64) * _M1
    with np.errstate(over="ignore"):
        if longest <= 32:  # every byte: words at starts, starts + 8, ...
            h = _mix_words(h, words, starts, length, (longest + 7) // 8)
        else:  # first 16 and last 16 bytes
            h = _mix_words(h, words, starts, length, 2)
            tail = np.maximum(starts + length - 16, starts)
            h = _mix_words(h, words, tail, length - (tail - starts), 2)
    return h


def _mix_words(
    h: np.ndarray, words: np.ndarray, pos: np.ndarray, left: np.ndarray, n_words: int
) -> np.ndarray:
    """Mix ``n_words`` unaligned little-endian 8-byte words read at byte ``pos`` into ``h``;
    bytes beyond ``left`` (the end of each string) are masked to zero."""
    i = pos >> 3
    shift = ((pos & 7) * 8).astype(np.uint64)
    back = np.uint64(63) - shift
    low = words[i]
    for k in range(n_words):
        high = words[i + (k + 1)]
        w = (low >> shift) | ((high << np.uint64(1)) << back)
        w &= _MASKS[np.clip(left - 8 * k, 0, 8)]
        h = (h ^ w) * _M1
        h ^= h >> np.uint64(31)
        low = high
    return h


def _query_blocks(qid: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Block number of every record when each query is one contiguous block, else None.

    Runs are nearly always grouped by query; then the block number identifies the
    query and the qid strings need no hashing.
    """
    if len(qid) < 2:
        return np.zeros(len(qid), np.uint64)
    change = pc.not_equal(qid[1:], qid[:-1]).to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(change) + 1
    heads = [qid[0].as_py(), *pc.take(qid, pa.array(starts)).to_pylist()]
    if len(set(heads)) != len(heads):
        return None
    block = np.zeros(len(qid), np.uint64)
    block[starts] = 1
    return np.cumsum(block, out=block)


def _pieces(values: pa.Array | pa.ChunkedArray, sizes: list[int]) -> list[pa.Array]:
    """Cut ``values`` into consecutive zero-copy pieces of the given lengths."""
    if isinstance(values, pa.ChunkedArray):
        if [len(c) for c in values.chunks] == sizes:
            return list(values.chunks)
        values = values.combine_chunks()
    starts = np.cumsum([0, *sizes[:-1]])
    return [values.slice(int(a), n) for a, n in zip(starts, sizes, strict=True)]


def _pair_hashes(qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """64-bit hash of every (qid, docno) pair, computed piecewise on all cores."""
    if isinstance(docno, pa.ChunkedArray) and docno.num_chunks > 1:
        sizes = [len(c) for c in docno.chunks]
    else:
        sizes = [min(_PIECE, len(docno) - s) for s in range(0, len(docno), _PIECE)]
    bounds = np.cumsum([0, *sizes])
    blocks = _query_blocks(qid)
    docnos = _pieces(docno, sizes)
    qids = _pieces(qid, sizes) if blocks is None else [None] * len(sizes)

    def piece(k: int) -> np.ndarray:
        with np.errstate(over="ignore"):
            if blocks is None:
                group = _hash_chunk(qids[k])
            else:
                group = blocks[bounds[k] : bounds[k + 1]] + np.uint64(1)
            return ((group * _M2) ^ _hash_chunk(docnos[k])) * _M1

    if len(sizes) < 2:
        return np.concatenate([np.zeros(0, np.uint64), *map(piece, range(len(sizes)))])
    with ThreadPoolExecutor(min(len(sizes), os.cpu_count() or 1)) as pool:
        return np.concatenate(list(pool.map(piece, range(len(sizes)))))


def _first_duplicate(
    qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray
) -> tuple[int, int] | None:
    """Records ``(first, second)`` of the earliest repeated (qid, docno) pair, or ``None``.

    Hash the pairs, sort the 64-bit keys (numpy's SIMD sort) and look for equal
    neighbours; only on a hit are the strings compared exactly.
    """
    keys = _pair_hashes(qid, docno)
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return None
    candidates = np.flatnonzero(np.isin(keys, ordered[1:][same]))
    pairs = pd.DataFrame(
        {
            "q": pc.take(qid, pa.array(candidates)).to_pylist(),
            "d": pc.take(docno, pa.array(candidates)).to_pylist(),
        }
    )
    repeated = pairs.duplicated(keep="first").to_numpy()
    if not repeated.any():
        return None  # a hash collision, not a duplicate
    k = int(np.flatnonzero(repeated)[0])
    match = (pairs["q"] == pairs["q"].iloc[k]) & (pairs["d"] == pairs["d"].iloc[k])
    return int(candidates[int(np.flatnonzero(match.to_numpy())[0])]), int(candidates[k])


def _check_unique(qid, docno, loc: _Locator, what: str) -> None:
    dup = _first_duplicate(qid, docno)
    if dup is not None:
        first, second = dup
        first_line = loc.line(first)
        loc.fail(
            second,
            f"docno {docno[second].as_py()!r} appears twice for query {qid[second].as_py()!r}"
            + (f" (first on line {first_line})" if first_line is not None else ""),
            f"each docno at most once per query in a {what}",
        )


def _check_finite(values: np.ndarray, texts, loc: _Locator, what: str) -> None:
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        loc.fail(
            int(bad[0]), f"{what} {texts[int(bad[0])].as_py()!r} is not finite", "a finite number"
        )


# ---------------------------------------------------------------------------- runs

_RUN_TYPES = {0: pa.string(), 1: pa.string(), 2: pa.string(), 3: pa.string(), 4: pa.float64()}
_RUN_TYPES_TAG = {**_RUN_TYPES, 5: pa.string()}


def _careful_run(data: bytes, where: str) -> tuple[dict[str, pa.Array], _Locator]:
    tokens = _Tokens.of(data)
    rows = tokens.content_rows()
    if not len(rows):
        raise InputError(where, None, "no run lines (the file is empty)", RUN_FIELDS)
    count = tokens.count[rows]
    loc = _Locator(where, rows + 1)
    tagged = count[0] >= 6
    if count[0] < 5:
        loc.fail(0, f"{_fields(count[0])}", RUN_FIELDS)
    bad = np.flatnonzero(count < 6 if tagged else count != 5)
    if len(bad):
        k = int(bad[0])
        problem = _fields(count[k])
        if count[k] >= 5:
            problem += f" but line {loc.line(0)} has {count[0]}"
        loc.fail(k, problem, RUN_FIELDS + ", the same on every line")
    fields = {"qid": tokens.field(rows, 0), "docno": tokens.field(rows, 2)}
    fields["score_text"] = tokens.field(rows, 4)
    score, bad_score = _cast(fields["score_text"], pa.float64())
    if bad_score is not None:
        text = fields["score_text"][bad_score].as_py()
        loc.fail(bad_score, f"score {text!r} is not a number", "a finite number")
    fields["score"] = score
    if tagged:
        fields["tag"] = tokens.field(rows, 5)
    return fields, loc


def _fast_run(data: bytes, where: str) -> tuple[dict[str, pa.ChunkedArray], _Locator] | None:
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)]
    tagged = len(first.split()) >= 6
    table = _fast_table(data, _RUN_TYPES_TAG if tagged else _RUN_TYPES, 6 if tagged else 5)
    if table is None or table.num_columns != (6 if tagged else 5):
        return None
    fields = {"qid": table["f0"], "docno": table["f2"], "score": table["f4"]}
    fields["score_text"] = table["f4"]
    if tagged:
        fields["tag"] = table["f5"]
    return fields, _Locator(where, None)


def _run_frame(fields: Mapping[str, pa.Array], loc: _Locator) -> tuple[pd.DataFrame, list[str]]:
    """Validate parsed run fields and build the DataFrame and the list of tags."""
    score_np = fields["score"].to_numpy()
    _check_finite(score_np, fields["score_text"], loc, "score")
    _check_unique(fields["qid"], fields["docno"], loc, "run")
    tags: list[str] = []
    if "tag" in fields:
        tag = fields["tag"]
        first = tag[0]
        if pc.all(pc.equal(tag, first)).as_py():
            tags = [first.as_py()]
        else:
            tags = pc.unique(tag).to_pylist()
    frame = pa.table({"qid": fields["qid"], "docno": fields["docno"]}).to_pandas()
    frame["score"] = score_np
    return frame, tags


def _parse_run(data: bytes, where: str, *, fast: bool = True) -> tuple[pd.DataFrame, list[str]]:
    """Parse run bytes: the fast path first, the careful one for line numbers."""
    parsed = _fast_run(data, where) if fast else None
    if parsed is not None:
        try:
            return _run_frame(*parsed)
        except _NeedLines:
            pass
    return _run_frame(*_careful_run(data, where))


def read_run(source: Source, *, name: str | None = None) -> pd.DataFrame:
    """Read a TREC run file.

    Parameters
    ----------
    source : str, path or file object
        ``qid Q0 docno rank score tag`` lines, separated by any spaces and tabs, plain
        or gzip. A file object may be binary or text (e.g. a Streamlit upload).
    name : str, optional
        Name of the run; by default the run tag, or the file name (without ``.gz`` and
        ``.txt``) when the tag is missing or the file holds several different tags.

    Returns
    -------
    pandas.DataFrame
        Columns ``qid`` (str), ``docno`` (str), ``score`` (float64) in file order.
        ``attrs`` holds ``name``, ``source`` (the file name) and ``tags`` (the distinct
        tags, in order of appearance).

    Raises
    ------
    InputError
        A missing or binary file, a line with the wrong number of fields, a score that
        is not a finite number or a docno repeated within a query, with its line.

    Notes
    -----
    The rank column is ignored, as in trec_eval; so are ``Q0`` and fields after the
    tag. Blank lines and lines starting with ``#`` are skipped.

    Examples
    --------
    >>> import io
    >>> text = b"301 Q0 doc1 1 2.5 bm25\\n301\\tQ0\\tdoc2\\t2\\t  1.5\\tbm25\\n"
    >>> run = read_run(io.BytesIO(text))
    >>> run
       qid docno  score
    0  301  doc1    2.5
    1  301  doc2    1.5
    >>> run.attrs["name"]
    'bm25'
    """
    data, where = _load(source)
    frame, tags = _parse_run(data, where)
    del data
    if name is None:
        name = tags[0] if len(tags) == 1 else _stem(where)
    frame.attrs.update(name=name, source=where, tags=tags)
    return frame


def read_runs(sources: Iterable[Source] | Source) -> dict[str, pd.DataFrame]:
    """Read several run files, keyed by run name.

    Parameters
    ----------
    sources : iterable of paths or file objects
        The run files (a single path is accepted too).

    Returns
    -------
    dict of str to pandas.DataFrame
        Each value as :func:`read_run` returns it, in the order given. The key is the
        run tag; a run without a single tag, or whose tag another run shares, is keyed
        by its file name instead, with a suffix ``-2``, ``-3``... when that name is a
        tag or an earlier file name. ``attrs["name"]`` equals the key.
    """
    if isinstance(sources, (str, os.PathLike)) or hasattr(sources, "read"):
        sources = [sources]
    frames = [read_run(s) for s in sources]
    tags = [f.attrs["tags"][0] if len(f.attrs["tags"]) == 1 else None for f in frames]
    by_tag = [t if t is not None and tags.count(t) == 1 else None for t in tags]
    used = {t for t in by_tag if t is not None}
    runs: dict[str, pd.DataFrame] = {}
    for frame, tag in zip(frames, by_tag, strict=True):
        key = tag
        if key is None:  # file name, made unique against tags and earlier file names
            base = key = _stem(frame.attrs["source"])
            k = 1
            while key in used:
                k += 1
                key = f"{base}-{k}"
            used.add(key)
        frame.attrs["name"] = key
        runs[key] = frame
    return runs


# --------------------------------------------------------------------------- qrels

_QRELS_TYPES = {0: pa.string(), 1: pa.string(), 2: pa.string(), 3: pa.int64()}


def _careful_qrels(data: bytes, where: str) -> tuple[dict[str, pa.Array], _Locator]:
    tokens = _Tokens.of(data)
    rows = tokens.content_rows()
    if not len(rows):
        raise InputError(where, None, "no qrels lines (the file is empty)", QRELS_FIELDS)
    count = tokens.count[rows]
    loc = _Locator(where, rows + 1)
    bad = np.flatnonzero(count != 4)
    if len(bad):
        k = int(bad[0])
        loc.fail(k, _fields(count[k]), QRELS_FIELDS)
    text = tokens.field(rows, 3)
    level, bad_level = _cast(text, pa.int64())
    if bad_level is not None:
        loc.fail(bad_level, f"level {text[bad_level].as_py()!r} is not an integer", "an integer")
    return {"qid": tokens.field(rows, 0), "docno": tokens.field(rows, 2), "level": level}, loc


def _parse_qrels(data: bytes, where: str, *, fast: bool = True) -> pd.DataFrame:
    table = _fast_table(data, _QRELS_TYPES, 4) if fast else None
    if table is not None and table.num_columns == 4:
        fields = {"qid": table["f0"], "docno": table["f2"], "level": table["f3"]}
        try:
            _check_unique(fields["qid"], fields["docno"], _Locator(where, None), "qrels")
        except _NeedLines:
            pass
        else:
            return pa.table(fields).to_pandas()
    fields, loc = _careful_qrels(data, where)
    _check_unique(fields["qid"], fields["docno"], loc, "qrels")
    return pa.table(fields).to_pandas()


def read_qrels(source: Source) -> pd.DataFrame:
    """Read TREC relevance judgments.

    Parameters
    ----------
    source : str, path or file object
        ``qid iter docno level`` lines (``iter`` is ignored), plain or gzip.

    Returns
    -------
    pandas.DataFrame
        Columns ``qid`` (str), ``docno`` (str), ``level`` (int64) in file order;
        ``attrs["source"]`` names the file.

    Raises
    ------
    InputError
        Wrong number of fields, a level that is not an integer, a (qid, docno) pair
        judged twice (trec_eval refuses it too), an empty or binary file.
    """
    data, where = _load(source)
    frame = _parse_qrels(data, where)
    frame.attrs["source"] = where
    return frame


# --------------------------------------------------------------------------- LETOR


def _ragged_take(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for every start ``s`` and length ``n``."""
    total = int(lengths.sum())
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return shift + np.arange(total)


def read_letor(
    source: Source, *, features: Iterable[int] | None = None
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Read a LETOR / svmlight file as one run per feature plus qrels.

    Parameters
    ----------
    source : str, path or file object
        Lines ``label qid:Q i:v i:v ... # comment``; the label must be an integer
        (``2`` or ``2.0``), indexes 1-based and strictly increasing within a line.
    features : iterable of int, optional
        1-based feature indexes to turn into runs; default every index that occurs.

    Returns
    -------
    runs : dict of str to pandas.DataFrame
        ``"f{index}"`` -> columns ``qid``, ``docno``, ``score`` (the feature value, 0
        where the line lacks it). ``docno`` is the 1-based line number zero-padded to
        the width of the last line number, so string order equals line order.
    qrels : pandas.DataFrame
        Columns ``qid``, ``docno``, ``level`` (the labels, int64).

    Raises
    ------
    InputError
        A malformed line (with its number), or a requested feature absent from the file.
    """
    data, where = _load(source)
    tokens = _Tokens.of(data, inline_comments=True)
    n_lines = len(tokens.count)
    rows = np.flatnonzero(tokens.count > 0)
    if not len(rows):
        raise InputError(where, None, "no data lines (the file is empty)", LETOR_FIELDS)
    loc = _Locator(where, rows + 1)
    count = tokens.count[rows]
    short = np.flatnonzero(count < 2)
    if len(short):
        loc.fail(int(short[0]), "a label without qid:<id>", LETOR_FIELDS)

    label_text = tokens.field(rows, 0)
    label, bad = _cast(label_text, pa.float64())
    if bad is None:
        label_np = label.to_numpy()
        integral = np.isfinite(label_np) & (label_np == np.round(label_np))
        wrong = np.flatnonzero(~integral | (np.abs(label_np) >= 2.0**63))
        bad = int(wrong[0]) if len(wrong) else None
    if bad is not None:
        loc.fail(bad, f"label {label_text[bad].as_py()!r} is not an integer", "an integer label")

    qid_text = tokens.field(rows, 1)
    ok = pc.and_(pc.starts_with(qid_text, "qid:"), pc.greater(pc.binary_length(qid_text), 4))
    wrong = np.flatnonzero(~ok.to_numpy(zero_copy_only=False))
    if len(wrong):
        k = int(wrong[0])
        loc.fail(k, f"second field {qid_text[k].as_py()!r} is not qid:<id>", LETOR_FIELDS)
    qid = pc.utf8_slice_codeunits(qid_text, 4)

    # feature tokens: everything after the qid token
    n_pairs = count - 2
    pair_record = np.repeat(np.arange(len(rows)), n_pairs)
    pairs = tokens.flat.take(pa.array(_ragged_take(tokens.first[rows] + 2, n_pairs)))
    parts = pc.split_pattern(pairs, ":")
    wrong = np.flatnonzero(pc.list_value_length(parts).to_numpy(zero_copy_only=False) != 2)
    if len(wrong):
        k = int(wrong[0])
        loc.fail(
            int(pair_record[k]), f"feature {pairs[k].as_py()!r} is not index:value", LETOR_FIELDS
        )
    index_text = pc.list_element(parts, 0)
    value_text = pc.list_element(parts, 1)
    index, bad = _cast(index_text, pa.int64())
    index_np = index.to_numpy() if bad is None else None
    if bad is None:
        small = np.flatnonzero(index_np < 1)
        bad = int(small[0]) if len(small) else None
    if bad is not None:
        loc.fail(
            int(pair_record[bad]),
            f"feature index {index_text[bad].as_py()!r} in {pairs[bad].as_py()!r}"
            " is not a positive integer",
            "index:value with a 1-based integer index",
        )
    value, bad = _cast(value_text, pa.float64())
    if bad is not None:
        loc.fail(
            int(pair_record[bad]),
            f"feature value {value_text[bad].as_py()!r} in {pairs[bad].as_py()!r} is not a number",
            "index:value with a finite number",
        )
    value_np = value.to_numpy()
    bad_values = np.flatnonzero(~np.isfinite(value_np))
    if len(bad_values):
        k = int(bad_values[0])
        loc.fail(
            int(pair_record[k]), f"feature {pairs[k].as_py()!r} is not finite", "a finite value"
        )
    unordered = np.flatnonzero(
        (pair_record[1:] == pair_record[:-1]) & (index_np[1:] <= index_np[:-1])
    )
    if len(unordered):
        k = int(unordered[0]) + 1
        loc.fail(
            int(pair_record[k]),
            f"feature index {index_np[k]} after {index_np[k - 1]}",
            "strictly increasing feature indexes",
        )

    present = np.unique(index_np)
    if features is None:
        chosen = present
    else:
        chosen_list: list[int] = []
        for f in features:
            if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or f < 1:
                raise InputError(
                    where, None, f"feature {f!r} is not a 1-based index", "an int >= 1"
                )
            if f not in chosen_list:
                chosen_list.append(int(f))
        missing = sorted(set(chosen_list) - set(present.tolist()))
        if missing:
            raise InputError(
                where,
                None,
                f"feature {missing[0]} does not occur in the file",
                f"features among {present.min()}..{present.max()}" if len(present) else None,
            )
        chosen = np.array(chosen_list, np.int64)

    width = len(str(n_lines))
    docno = pc.utf8_lpad(pc.cast(pa.array(rows + 1), pa.string()), width, "0")
    base = pa.table({"qid": qid, "docno": docno}).to_pandas()
    matrix = np.zeros((len(chosen), len(rows)))
    if len(chosen):
        order = np.argsort(chosen, kind="stable")
        slot = np.minimum(np.searchsorted(chosen[order], index_np), len(chosen) - 1)
        hit = chosen[order][slot] == index_np
        matrix[order[slot[hit]], pair_record[hit]] = value_np[hit]
    runs: dict[str, pd.DataFrame] = {}
    for j, f in enumerate(chosen.tolist()):
        run = pd.DataFrame(
            {"qid": base["qid"], "docno": base["docno"], "score": matrix[j]}, copy=False
        )
        run.attrs.update(name=f"f{f}", source=where, tags=[])
        runs[f"f{f}"] = run
    qrels = pd.DataFrame(
        {"qid": base["qid"], "docno": base["docno"], "level": label_np.astype(np.int64)}
    )
    qrels.attrs["source"] = where
    return runs, qrels

"""Read TREC runs, TREC qrels and LETOR (svmlight) files into pandas DataFrames (or arrow).

Formats
-------
run
    ``qid Q0 docno rank score tag``, fields separated by any mix of spaces and tabs.
    The ``Q0`` and ``rank`` fields are ignored (trec_eval ranks by score) and the
    ``tag`` may be missing on every line (5 fields). The first line fixes the number
    of fields and every line must have as many: a docno or tag with a space would
    otherwise be read shifted, as trec_eval silently does. Fields after the tag are
    ignored, as trec_eval does, and may vary once the first line has some (as in
    trec_eval's own ``results.trunc``) and another line has some too: a first line
    alone with more fields is refused, as such a line is anywhere else. A docno may
    appear only once per query.
qrels
    ``qid iter docno level``: exactly 4 fields, an integer ``level`` written in decimal
    (negative levels allowed, a leading ``+`` read as trec_eval's ``atol`` reads it;
    ``0x1`` refused), one judgment per (qid, docno). A run given as qrels, or qrels given
    as a run, is named as such in the error.
LETOR / svmlight
    ``label qid:Q i:v i:v ... # comment`` with a non-negative integer label (a grade)
    and strictly increasing 1-based decimal feature indexes; a missing feature counts
    as 0; some line must have one. A ``#`` anywhere starts a comment, as in svmlight.

Every format: plain text or gzip (recognised by its magic bytes, not by the name),
UTF-8; a line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac files), and
``\\v``, ``\\f`` are whitespace; blank lines and lines whose first field starts with
``#`` are skipped, like trec_eval does. Line numbers in errors are physical lines of
the (decompressed) file.

Strategy
--------
Speed comes from :mod:`pyarrow.csv`, which parses the text in parallel (straight from
disk for big plain files, while a thread inflates it block by block for big gzip files)
on the layout of the first line: its delimiter (the tab if it has one, else the space)
and its number of fields. Only the needed columns are
read; the run tag is read as pyarrow's null type, the first line's tag being the only
null value, which checks every tag for free. Meanwhile a thread (for a big text)
scans the bytes in cache-sized windows (``memchr``-speed searches, and numpy for
pairs of bytes) for what would make pyarrow differ from splitting on whitespace: a
tab or a space the first line did not have, a doubled delimiter (an empty field),
``\\v``, ``\\f``, a NUL byte, invalid UTF-8. Duplicates are found by sorting 62-bit
keys of the (qid, docno) pairs: each qid's code (only the first row of each stretch of
equal qids is looked up) mixed with the docno's hash, computed in numpy from a few
words of each string (in a thread, for a big run, while arrow codes the qids); a run
keeps the codes and hashes (:class:`RunIds`) for the judgments' lookup. Anything else
(mixed whitespace, a bad value) goes to a careful vectorised tokenizer that works in
batches of lines and keeps the line number of every record, so that the
:class:`~tiecore.errors.InputError` names the exact line.

``tiecore eval`` evaluates the checked columns themselves (:func:`read_run_columns`,
:func:`read_qrels_columns`) without pandas, and without :mod:`pyarrow.compute`, whose
import wraps every kernel (:func:`kernel` calls them; :func:`to_arrow` and
:func:`to_numpy` convert without pyarrow's pandas shim, which imports pandas).
"""

from __future__ import annotations

import codecs
import gzip
import os
import re
import stat
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

import numpy as np
import pyarrow as pa
import pyarrow._compute as _kernels  # arrow's kernels; pyarrow.compute wraps them (see kernel)
import pyarrow.csv as pacsv

from tiecore.errors import InputError
from tiecore.io import _checked
from tiecore.io.files import file_names
from tiecore.io.files import stem as _stem

if TYPE_CHECKING:  # pandas loads when a frame is made (tiecore eval's arrow path needs none)
    import pandas as pd

__all__ = ["read_letor", "read_qrels", "read_run", "read_runs"]


class _LazyCompute:
    """:mod:`pyarrow.compute`, imported on first use: the import wraps every kernel in a
    function with a parsed docstring, 0.1-0.25 s, which ``tiecore eval`` of a run file
    does not need (its path calls the kernels through :func:`kernel`)."""

    def __getattr__(self, name: str) -> object:
        import pyarrow.compute

        return getattr(pyarrow.compute, name)


pc = _LazyCompute()


def kernel(name: str, *args: object, options: object = None) -> object:
    """Arrow's compute function ``name`` on ``args``, as ``pyarrow.compute.<name>`` calls
    it (``call_function``, default options unless given), without importing
    :mod:`pyarrow.compute`.

    >>> found = Kernels.SetLookupOptions(pa.array(["b"]))
    >>> kernel("index_in", pa.array(["b", "x"]), options=found).to_pylist()
    [0, None]
    """
    return _kernels.call_function(name, list(args), options)


#: The kernels' option classes (``SetLookupOptions``, ``SortOptions``, ``CastOptions``...).
Kernels = _kernels

Source = str | os.PathLike[str] | IO[bytes] | IO[str]

RUN_FIELDS = "6 fields 'qid Q0 docno rank score tag' (or 5 without the tag)"
QRELS_FIELDS = "4 fields 'qid iter docno level'"
LETOR_FIELDS = "'label qid:<id> index:value ...'"

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 24  # bytes per numpy pass when scanning big buffers
_BLOCK = 1 << 20  # bytes per block of pyarrow's parser (small blocks: less memory in flight)
_MEMORY_BLOCK = 1 << 18  # ... for a text in memory (more blocks in parallel: faster up to 5 MB)
_SCAN = 1 << 18  # bytes per window of the scan before the fast path (fits the CPU cache)
_PIECE = 1 << 16  # rows per piece when hashing on several threads (small temporaries)
_OVERLAP = 1 << 18  # rows from which docnos are hashed while the qids are coded
_THREADED_PIECES = 64  # pieces from which hashing runs on several threads (their memory
# arenas keep the temporaries: below that, the peak memory of a read matters more)
_STREAM = 1 << 25  # plain files from this size on are parsed by pyarrow from disk
_INFLATE = 1 << 20  # gzip files that inflate to this size on are parsed while inflated
_INFLATE_BLOCK = 1 << 20  # bytes per block of pyarrow's parser for an inflated text
_INFLATE_AHEAD = 4  # blocks inflated ahead of pyarrow's reads (the memory in flight)
_SCAN_THREAD = 1 << 22  # texts from this size on are scanned in a thread during the parse
_BATCH = 1 << 18  # lines per batch on the careful path
_FIRST_LINE = 1 << 20  # a longer first line sends the text to the careful path


# --------------------------------------------------------------------------- bytes


def _display_name(source: Source) -> str:
    """Name used in error messages: the path, or a file object's ``.name``."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return str(name) if isinstance(name, (str, os.PathLike)) and str(name) else "<upload>"


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
    """1-based line number of byte ``offset`` (line breaks as in :func:`_lines`)."""
    breaks = data.count(b"\n", 0, offset)
    if b"\r" in data:  # a lone CR is a line break too; CR LF counts once
        breaks += data.count(b"\r", 0, offset) - data.count(b"\r\n", 0, offset + 1)
    return breaks + 1


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


def _line_ends(data: bytes) -> np.ndarray:
    """Offset of the last byte of every line break: each ``\\n`` and each ``\\r`` not
    followed by ``\\n`` (old Mac files), found in ``_CHUNK``-byte numpy passes."""
    arr = np.frombuffer(data, np.uint8)
    ends = []
    has_cr = b"\r" in data
    for i in range(0, len(arr), _CHUNK):
        chunk = arr[i : i + _CHUNK]
        found = np.flatnonzero(chunk == 10)
        if has_cr:
            cr = np.flatnonzero(chunk == 13)
            nxt = np.minimum(cr + (i + 1), len(arr) - 1)  # a final CR is a lone one
            lone = cr[(arr[nxt] != 10) | (cr + i + 1 == len(arr))]
            if len(lone):
                found = np.union1d(found, lone)
        ends.append(found + i)
    return np.concatenate([np.zeros(0, np.int64), *ends])


def _lines(data: bytes, *, inline_comments: bool = False) -> pa.Array:
    """Every physical line of ``data`` as a zero-copy string array.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``; each keeps its line break,
    which the whitespace split drops. With ``inline_comments`` everything from a ``#``
    to the end of its line is removed.
    """
    ends = _line_ends(data)
    n_lines = len(ends) + (len(data) > 0 and (not len(ends) or ends[-1] != len(data) - 1))
    offsets = np.empty(n_lines + 1, np.int64)  # line k is data[offsets[k]:offsets[k + 1]]
    offsets[0], offsets[-1] = 0, len(data)
    offsets[1 : len(ends) + 1] = ends + 1
    del ends
    # large_string all the way: the tokens taken from it are what pandas keeps
    lines = pa.Array.from_buffers(
        pa.large_string(), n_lines, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    if inline_comments and b"#" in data:
        lines = pc.replace_substring_regex(lines, "#.*", "")
    return lines


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
    def split(cls, lines: pa.Array) -> _Tokens:
        """Split every line (a string array) at runs of ASCII whitespace."""
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


def _batches(text: _Text) -> Iterator[tuple[_Tokens, np.ndarray, _Locator]]:
    """Tokens of the text in batches of lines, with the content rows of each batch and
    a locator for them (records of a batch -> file lines); batches without content
    are skipped. Batching bounds the memory the whitespace split needs."""
    lines = _lines(text.data())
    pool = pa.default_memory_pool()
    for start in range(0, len(lines), _BATCH):
        tokens = _Tokens.split(lines.slice(start, _BATCH))
        rows = tokens.content_rows()
        if len(rows):
            yield tokens, rows, _Locator(text.where, rows + (start + 1))
        del tokens
        pool.release_unused()  # hand the split's memory back before the next batch


def to_arrow(values: np.ndarray) -> pa.Array:
    """A numpy array of numbers or booleans as an arrow array, without pandas: ``pa.array``
    asks pyarrow's pandas shim about its input, which imports pandas (half a second of
    ``tiecore eval``'s start); numbers share the numpy memory.

    >>> to_arrow(np.array([3, 1])).to_pylist(), to_arrow(np.array([True, False])).type
    ([3, 1], DataType(bool))
    """
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    typ = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])


def to_numpy(values: pa.Array | pa.ChunkedArray, fill: object = None) -> np.ndarray:
    """A numeric or boolean arrow array as numpy, nulls replaced by ``fill`` (an error
    if there are nulls and no ``fill``), without pandas: ``Array.to_numpy`` goes through
    arrow's pandas conversion, which imports pandas.

    >>> import pyarrow.compute as pc
    >>> to_numpy(pc.index_in(pa.array(["b", "x", "a"]), value_set=pa.array(["a", "b"])), -1)
    array([ 1, -1,  0], dtype=int32)
    """
    if isinstance(values, pa.ChunkedArray):
        chunks = [to_numpy(chunk, fill) for chunk in values.chunks]
        dtype = values.type.to_pandas_dtype() if not chunks else chunks[0].dtype
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype)
    n, start = len(values), values.offset
    validity, data = values.buffers()[:2]
    if pa.types.is_boolean(values.type):
        out = _bits(data, start, n)
    else:
        dtype = np.dtype(values.type.to_pandas_dtype())
        out = (
            np.frombuffer(data, dtype, count=n, offset=start * dtype.itemsize)
            if n
            else (np.zeros(0, dtype))
        )
    if values.null_count:
        if fill is None:
            raise ValueError("nulls without a fill value")
        out = np.where(_bits(validity, start, n), out, np.asarray(fill, out.dtype))
    return out


def _bits(buffer: pa.Buffer, start: int, n: int) -> np.ndarray:
    """Bits ``start .. start + n`` of an arrow bitmap as a numpy bool array."""
    if not n:
        return np.zeros(0, bool)
    raw = np.frombuffer(buffer, np.uint8, count=(start + n + 7) // 8)
    return np.unpackbits(raw, bitorder="little", count=start + n)[start:].astype(bool)


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

    def cast(part):  # pyarrow.compute.cast without importing pyarrow.compute (see kernel)
        return kernel("cast", part, options=Kernels.CastOptions.safe(typ))

    try:
        return cast(values), None
    except pa.ArrowInvalid:
        pass
    lo, hi = 0, len(values)  # the first bad value lies in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            cast(values.slice(lo, mid - lo))
        except pa.ArrowInvalid:
            hi = mid
        else:
            lo = mid
    return values, lo


_DECIMAL = r"^[+-]?[0-9]+$"  # an integer in decimal: what trec_eval's atol reads whole


def _decimal_levels(text: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, int | None]:
    """Integer levels written in decimal (an optional sign, digits), as int64; on failure
    the index of the first bad value. Arrow's cast also reads ``0x1f`` as hexadecimal,
    which trec_eval's ``atol`` reads as 0: such a level is refused, not read either way.
    A leading ``+`` is read as trec_eval reads it (``+1`` is 1)."""
    if kernel("all", kernel("ascii_is_decimal", text)).as_py():  # digits only: 6x faster
        return _cast(text, pa.int64())
    decimal = kernel("match_substring_regex", text, options=Kernels.MatchSubstringOptions(_DECIMAL))
    if not kernel("all", decimal).as_py():
        return text, int(np.flatnonzero(~to_numpy(decimal, False))[0])
    if kernel(
        "any", kernel("starts_with", text, options=Kernels.MatchSubstringOptions("+"))
    ).as_py():
        text = kernel("utf8_ltrim", text, options=Kernels.TrimOptions("+"))
    return _cast(text, pa.int64())


@dataclass
class _Scan:
    """What decides whether :mod:`pyarrow.csv` may parse a text, gathered in one pass."""

    empty: bool = True
    tab: bool = False
    space: bool = False
    hash: bool = False
    bom: bool = False
    awkward: bool = False  # \\v or \\f: whitespace to trec_eval, only the careful path is exact
    double_space: bool = False  # two spaces in a row before the first tab
    double_tab: bool = False  # two tabs in a row

    def window(self, buf: bytes | bytearray, end: int, previous: int) -> None:
        """Scan ``buf[:end]``; ``previous`` is the byte before it (-1 at the start)."""
        find = buf.find
        tab = find(b"\t", 0, end) >= 0
        self.tab = self.tab or tab
        self.space = self.space or find(b" ", 0, end) >= 0
        self.hash = self.hash or find(b"#", 0, end) >= 0
        self.awkward = self.awkward or find(b"\x0b", 0, end) >= 0 or find(b"\x0c", 0, end) >= 0
        if not self.tab and not self.double_space:
            self.double_space = _doubled(buf, end, previous, 32)
        if tab and not self.double_tab:
            self.double_tab = _doubled(buf, end, previous, 9)


def _doubled(buf: bytes | bytearray, end: int, previous: int, byte: int) -> bool:
    """Whether ``byte`` appears twice in a row in ``buf[:end]`` (after ``previous``): the
    byte pairs at even offsets, then at odd ones, compared as 16-bit words by numpy (a
    substring search of two spaces stops at every space: ten times slower).

    >>> _doubled(b"a  b", 4, -1, 32), _doubled(b" a", 2, 32, 32), _doubled(b"a b ", 3, -1, 32)
    (True, True, False)
    >>> _doubled(b"ab  ", 4, -1, 32), _doubled(bytes([97, 9, 9]), 3, -1, 9)
    (True, True)
    >>> _doubled(bytes([97, 32, 9]), 3, -1, 32), _doubled(b"a", 1, 32, 32), _doubled(b"", 0, 32, 32)
    (False, False, False)
    """
    if end > 0 and buf[0] == byte == previous:
        return True
    pair = np.uint16(byte * 257)  # the byte twice, in either byte order
    even = np.frombuffer(buf, np.uint16, count=end // 2)
    if (even == pair).any():
        return True
    odd = np.frombuffer(buf, np.uint16, count=max(end - 1, 0) // 2, offset=min(end, 1))
    return bool((odd == pair).any())


def _scan(
    windows: Iterable[tuple[bytes | bytearray, int]],
    *,
    check_text: bool,
    stop: threading.Event | None = None,
) -> _Scan | None:
    """Scan consecutive windows ``buf[:end]`` of a text, each at most ``_SCAN`` bytes so
    that the searches run in the CPU cache; ``None`` when ``check_text`` finds a NUL
    byte or invalid UTF-8 (the caller then loads the text to name the line), or when
    ``stop`` is set (nobody needs the scan any more)."""
    scan = _Scan()
    decoder = codecs.getincrementaldecoder("utf-8")()
    previous = -1
    for buf, end in windows:
        if stop is not None and stop.is_set():
            return None
        if not end:
            continue
        if scan.empty:
            scan.empty = False
            scan.bom = buf[:3] == _BOM
        if check_text:
            if buf.find(b"\x00", 0, end) >= 0:
                return None
            part = buf if end == len(buf) else bytes(buf[:end])
            if not part.isascii() or decoder.getstate()[0]:  # or a character cut in two
                try:
                    decoder.decode(part)
                except UnicodeDecodeError:
                    return None
        scan.window(buf, end, previous)
        previous = buf[end - 1]
    if check_text:
        try:
            decoder.decode(b"", True)
        except UnicodeDecodeError:
            return None
    return scan


def _first_line(head: bytes) -> bytes | None:
    """The first line of a text from its first ``_FIRST_LINE + 1`` bytes (``None``: longer)."""
    ends = [k for k in (head.find(b"\n"), head.find(b"\r")) if k >= 0]
    if ends:
        return head[: min(ends)]
    return head if len(head) <= _FIRST_LINE else None


class _Scanning:
    """A scan running in its own thread while pyarrow parses the same text (or, for a
    small text, done at once: a thread costs more than it saves there)."""

    def __init__(
        self,
        windows: Callable[[], Iterable[tuple[bytes | bytearray, int]]],
        check: bool,
        *,
        threaded: bool = True,
    ):
        self._stop = threading.Event()
        self._result: _Scan | None = None
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, args=(windows, check), daemon=True)
            self._thread.start()
        else:
            self._run(windows, check)

    def _run(self, windows, check: bool) -> None:
        try:
            self._result = _scan(windows(), check_text=check, stop=self._stop)
        except OSError:  # _load will say what is wrong
            self._result = None

    def result(self) -> _Scan | None:
        if self._thread is not None:
            self._thread.join()
        return self._result

    def cancel(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def gzip_size(handle: IO[bytes], size: int) -> int:
    """The uncompressed size (mod 2^32) that a gzip file of ``size`` bytes records in
    its trailer (ISIZE, its last 4 bytes); -1 when it is too short to have one."""
    if size < 18:  # a header and a trailer
        return -1
    handle.seek(-4, os.SEEK_END)
    return int.from_bytes(handle.read(4), "little")


class _Text:
    """One input text, loaded lazily.

    A big plain file is scanned in windows and parsed by pyarrow straight from disk,
    so its bytes never sit in memory whole; anything else (gzip, file objects, small
    files, or the careful path) loads the checked, decompressed bytes once.
    """

    def __init__(self, source: Source | None, data: bytes | None = None, where: str = "") -> None:
        self.source = source
        self.where = where or _display_name(source)
        self._data = data
        self._inflated = False  # the fast path inflated the gzip file in a thread

    def data(self) -> bytes:
        if self._data is None:
            self._data, _ = _load(self.source)
        return self._data

    def reopen(self) -> pa.NativeFile:
        """The text again, for a second pass of pyarrow (an inflated gzip file is loaded
        now: its first pass kept no text)."""
        if self._data is None and not self._inflated:
            return pa.OSFile(os.fspath(self.source))
        return pa.BufferReader(pa.py_buffer(self.data()))

    def fast_input(self) -> tuple[bytes, _Scanning, pa.NativeFile]:
        """The first bytes of the text, its scan (started) and a stream for pyarrow."""
        if self._data is None and isinstance(self.source, (str, os.PathLike)):
            streamed = self._stream()
            if streamed is not None:
                return streamed
        data = self.data()
        # _load checked the text
        scanning = _Scanning(lambda: _copied(data), False, threaded=len(data) >= _SCAN_THREAD)
        return data[: _FIRST_LINE + 1], scanning, pa.BufferReader(pa.py_buffer(data))

    def _stream(self) -> tuple[bytes, _Scanning | _Inflating, pa.NativeFile] | None:
        path = os.fspath(self.source)
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):  # a pipe reads once: _load reads it
                return None
            size = info.st_size
            with open(path, "rb") as fh:
                head = fh.read(_FIRST_LINE + 1 if size >= _STREAM else 2)
                inflated = gzip_size(fh, size) if head[:2] == _GZIP_MAGIC else -1
            if head[:2] == _GZIP_MAGIC:  # a small one is left to _load, read once
                return self._inflate(path) if inflated >= _INFLATE else None
            if size < _STREAM or head[:3] == _BOM:  # _load: strip the BOM
                return None
            return head, _Scanning(lambda: _read_windows(path), True), pa.OSFile(path)
        except (OSError, pa.ArrowException):  # _load will say what is wrong
            return None

    def _inflate(self, path: str) -> tuple[bytes, _Inflating, pa.NativeFile] | None:
        """A big gzip file inflated in a thread while pyarrow parses it (the thread scans
        it as well): the inflating and the parse overlap, and the whole text never sits
        in memory. ``None`` (load the text) for a BOM or bad data."""
        raw = Path(path).read_bytes()
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip: checks CRC and size
        head, tail = b"", raw
        try:  # the first line, in steps (the rest is inflated in the thread)
            while tail and not (b"\n" in head or b"\r" in head or len(head) > _FIRST_LINE):
                head += inflater.decompress(tail, 1 << 16)
                tail = inflater.unconsumed_tail
        except zlib.error:
            return None
        if head[:3] == _BOM:
            return None
        self._inflated = True
        inflating = _Inflating(inflater, tail, head)
        return head[: _FIRST_LINE + 1], inflating, pa.PythonFile(inflating, mode="r")


class _Inflating:
    """A gzip member inflated in a thread, block by block, for a reader (pyarrow, through
    :class:`pyarrow.PythonFile`) while the thread scans every block as :func:`_scan` does;
    :meth:`result` is the scan, ``None`` too when the gzip data is bad or has more than
    one member (then :func:`_load` reads the file, or says what is wrong). At most
    ``_INFLATE_AHEAD`` blocks wait for the reader; once the reader is closed, the thread
    only scans."""

    def __init__(self, inflater: zlib._Decompress, tail: bytes, head: bytes) -> None:
        self._blocks: list[bytes] = []
        self._done = self._closed = False
        self._ready = threading.Condition()
        self._stop = threading.Event()
        self._result: _Scan | None = None
        self._thread = threading.Thread(target=self._run, args=(inflater, tail, head), daemon=True)
        self._thread.start()

    def _inflated(self, inflater: zlib._Decompress, tail: bytes, head: bytes) -> Iterator[bytes]:
        """The blocks of the text; a :class:`zlib.error` unless it is one whole member."""
        yield head
        size = _INFLATE_BLOCK - len(head) % _INFLATE_BLOCK  # then reads take whole blocks
        while not inflater.eof:
            block = inflater.decompress(tail, size)
            size = _INFLATE_BLOCK
            tail = inflater.unconsumed_tail
            if block:
                yield block
            elif not tail:
                break  # the data ends within the member
        if not inflater.eof or inflater.unused_data:
            raise zlib.error("not one whole gzip member")

    def _run(self, inflater: zlib._Decompress, tail: bytes, head: bytes) -> None:
        def windows() -> Iterator[tuple[bytearray, int]]:
            for block in self._inflated(inflater, tail, head):
                self._put(block)
                yield from _copied(block)

        try:
            self._result = _scan(windows(), check_text=True, stop=self._stop)
        except (zlib.error, EOFError):
            self._result = None
        finally:
            with self._ready:
                self._done = True
                self._ready.notify_all()

    def _put(self, block: bytes) -> None:
        with self._ready:
            while len(self._blocks) >= _INFLATE_AHEAD and not self._closed:
                self._ready.wait()
            if not self._closed:
                self._blocks.append(block)
                self._ready.notify_all()

    # the file object pyarrow reads
    closed = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        """The next ``size`` bytes of the text (all the rest if negative), fewer only at
        its end: pyarrow's parser fails when a line straddles more than two reads."""
        parts: list[bytes] = []
        wanted = size if size >= 0 else float("inf")
        with self._ready:
            while wanted:
                while not self._blocks and not self._done:
                    self._ready.wait()
                if not self._blocks:
                    break
                block = self._blocks[0]
                if wanted < len(block):
                    self._blocks[0] = block[wanted:]
                    block = block[:wanted]
                else:
                    self._blocks.pop(0)
                    self._ready.notify_all()
                parts.append(block)
                wanted -= len(block)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        with self._ready:
            self.closed = self._closed = True
            self._blocks.clear()
            self._ready.notify_all()

    # as _Scanning
    def result(self) -> _Scan | None:
        self.close()
        self._thread.join()
        return self._result

    def cancel(self) -> None:
        self._stop.set()
        self.result()


def _copied(data: bytes) -> Iterator[tuple[bytearray, int]]:
    """``data`` in windows of ``_SCAN`` bytes, copied into one reused buffer."""
    buf = bytearray(_SCAN)
    for i in range(0, len(data), _SCAN):
        n = min(_SCAN, len(data) - i)
        buf[:n] = memoryview(data)[i : i + n]
        yield buf, n


def _read_windows(path: str) -> Iterator[tuple[bytearray, int]]:
    """A file in windows of ``_SCAN`` bytes, read into one reused buffer."""
    buf = bytearray(_SCAN)
    with open(path, "rb") as fh:
        while n := fh.readinto(buf):
            yield buf, n


def _fast_table(
    text: _Text,
    layout: dict[int, pa.DataType],
    min_fields: int,
    max_fields: int | None = None,
    *,
    last: int | None = None,
) -> tuple[pa.Table, str | None] | None:
    """Parse ``text`` with :mod:`pyarrow.csv` when that is provably the same as splitting
    each line on whitespace; return ``None`` when the careful path is needed.

    The delimiter is the tab, or the space when the text has no tab. The columns of
    ``layout`` are read, as ``f0``, ``f1``...; whitespace splitting differs only where
    pyarrow sees an empty field, from a delimiter at either end of a line (the first
    or the last field is empty: both are read and checked) or a doubled delimiter
    (the scan looks for one). With tabs and spaces both, every field is read and no
    text field may hold a space (pyarrow trims the spaces around numbers itself, as
    in trec_eval's own test runs). Every line must have as many fields as the first
    (else pyarrow raises); ``\\v`` and ``\\f`` need the careful path. Lines end at
    ``\\n``, ``\\r\\n`` or ``\\r`` for pyarrow as for :func:`_lines`; pyarrow skips
    blank lines, so line numbers are unknown here and the caller redoes the text
    carefully when it needs one. pyarrow also skips a BOM at the start of the text:
    a text that still starts with one once :func:`_load` took the file's own (a first
    field that starts with U+FEFF) is read carefully, which keeps that character.

    The scan runs in a thread while pyarrow parses, on what the first line tells
    (its delimiter, tab and space both, its number of fields); the scan then checks
    the whole text agrees, else the text is parsed again, or carefully.

    ``last`` names a column that is the last field (the run tag): it is read as
    pyarrow's null type with the first line's value as the only null value, which
    checks that every line has that value and costs no memory; the value is then
    returned with the table (else ``None``, and the column is read as text).
    """
    head, scanning, stream = text.fast_input()
    with stream:
        first = _first_line(head)
        if not first or first[:3] == _BOM or not (b"\t" in first or b" " in first):
            scanning.cancel()
            return None
        delim = b"\t" if b"\t" in first else b" "
        mixed = b"\t" in first and b" " in first
        n_fields = first.count(delim) + 1
        too_many = max_fields is not None and n_fields > max_fields
        if first[:1] in (delim, b"#") or n_fields < min_fields or too_many:
            scanning.cancel()
            return None  # the careful path names the line or reads the layout
        parsed = _parse_fields(stream, layout, n_fields, delim, mixed, first, last)
    scan = scanning.result()
    if scan is None or scan.empty or scan.awkward or scan.tab != (delim == b"\t"):
        return None  # bad text, or a tab after a first line without one: carefully
    if scan.tab and scan.space and not mixed:  # spaces after a first line without: again
        mixed = True
        with text.reopen() as stream:
            parsed = _parse_fields(stream, layout, n_fields, delim, mixed, first, last)
    if not mixed and (scan.double_tab if scan.tab else scan.double_space):
        return None
    table, known, types, again = parsed
    if again:  # another tag somewhere: read the column as text
        with text.reopen() as stream:
            table = _read_csv(stream, n_fields, delim, types)
    if table is None:
        return None
    for name in types:
        column = table.column(name)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            if any(_has_empty(chunk) for chunk in column.chunks):
                return None
            if mixed and _any_match(column, " ", "match_substring"):
                return None
    if scan.hash and _any_match(table.column("f0"), "#", "starts_with"):
        return None
    return table, known


def _parse_fields(
    stream: pa.NativeFile,
    layout: dict[int, pa.DataType],
    n_fields: int,
    delim: bytes,
    mixed: bool,
    first: bytes,
    last: int | None,
) -> tuple[pa.Table | None, str | None, dict[str, pa.DataType], bool]:
    """Read the columns of ``layout`` and those that may be empty (all of them with
    tabs and spaces both, else the last one): the table (``None`` if pyarrow refuses
    the text), the tag when column ``last`` was checked to hold only the first
    line's value, the column types, and whether to read again with that column as
    text (another value somewhere)."""
    types = {f"f{j}": layout[j] for j in sorted(layout) if j < n_fields}
    for j in range(n_fields) if mixed else [n_fields - 1]:
        types.setdefault(f"f{j}", _TOKEN)
    cut = first.rfind(delim)
    if last == n_fields - 1 and not mixed and 0 < cut < len(first) - 1:
        tag = first[cut + 1 :].decode("utf-8", "replace")  # the scan checks the text
        table, again = _read_tagged(stream, n_fields, delim, types, f"f{last}", tag)
        return table, tag if table is not None else None, types, again
    return _read_csv(stream, n_fields, delim, types), None, types, False


def _read_csv(
    stream: pa.NativeFile, n_fields: int, delim: bytes, types: dict[str, pa.DataType]
) -> pa.Table | None:
    """Columns ``types`` of a text with ``n_fields`` fields per line; ``None`` when pyarrow
    refuses the text (ragged lines, a line longer than a block, a bad value...)."""
    try:
        return _csv(stream, n_fields, delim, types, [])
    except pa.ArrowException:
        return None


def _read_tagged(
    stream: pa.NativeFile,
    n_fields: int,
    delim: bytes,
    types: dict[str, pa.DataType],
    last: str,
    tag: str,
) -> tuple[pa.Table | None, bool]:
    """Read with column ``last`` as nulls, ``tag`` being the only null value: every line
    must end with it. Returns the table, or ``None`` and whether to read again with the
    column as text (another tag somewhere, or a number equal to the tag read as null)."""
    try:
        table = _csv(stream, n_fields, delim, {**types, last: pa.null()}, [tag])
    except pa.ArrowInvalid as error:
        return None, "to null" in str(error)
    except pa.ArrowException:
        return None, False
    if any(table.column(name).null_count for name in types if name != last):
        return None, True
    return table, False


def _csv(
    stream: pa.NativeFile,
    n_fields: int,
    delim: bytes,
    types: dict[str, pa.DataType],
    nulls: list[str],
) -> pa.Table:
    """pyarrow's parse, in blocks of 1 MiB for a file read from disk (little memory in
    flight) or of 256 KiB for a text in memory (more blocks to parse in parallel: a run
    of 1 to 5 MB parses 20-35% faster than in 1 MiB blocks)."""
    return pacsv.read_csv(
        stream,
        read_options=pacsv.ReadOptions(
            column_names=[f"f{j}" for j in range(n_fields)],
            block_size=(
                _BLOCK
                if isinstance(stream, pa.OSFile)
                else _INFLATE_BLOCK
                if isinstance(stream, pa.PythonFile)
                else _MEMORY_BLOCK
            ),
        ),
        parse_options=pacsv.ParseOptions(delimiter=delim.decode(), quote_char=False),
        convert_options=pacsv.ConvertOptions(
            column_types=types,
            include_columns=list(types),
            null_values=nulls,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=False,  # the scan or _load checked it
        ),
    )


def _any_match(column: pa.ChunkedArray, pattern: str, how: str) -> bool:
    """``pc.any(pc.<how>(column, pattern))``."""
    found = kernel(how, column, options=_kernels.MatchSubstringOptions(pattern))
    return bool(kernel("any", found).as_py())


def _has_empty(arr: pa.Array) -> bool:
    """Whether a string array holds an empty string (two equal offsets)."""
    off = _offsets(arr)
    return bool((off[1:] == off[:-1]).any())


# --------------------------------------------------------------------- duplicates

_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)
_C1, _C2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
#: Odd factors per word (first, last, second, before last) of a qid and of a docno.
_FACTORS = {
    "qid": [np.uint64(x) for x in (0xA0761D6478BD642F, 0xE7037ED1A0B428DB,
                                    0x8EBC6AF09C88C6E3, 0x589965CC75374CC3)],
    "docno": [np.uint64(x) for x in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F,
                                      0x165667B19E3779F9, 0xD6E8FEB86659FD93)],
}  # fmt: skip


def _mix(word: np.ndarray, factor: np.uint64) -> np.ndarray:
    """A strong bijective mix of every word, in place (multiply, xorshift, multiply,
    xorshift); it keeps 0 at 0."""
    word *= factor
    word ^= word >> np.uint64(32)
    word *= _C1
    word ^= word >> np.uint64(29)
    return word


def _hash_chunk(arr: pa.Array, kind: str = "docno") -> np.ndarray:
    """64-bit key of every string from its length, its first 16 and its last 16 bytes.

    Each word is an unaligned 8-byte read at a byte offset (a strided uint64 view of
    the string bytes, no copy) that holds the string's own bytes only, or is zero
    when the string is too short for it. The words are mixed, each with its own
    factor, and xor-ed with the length times a factor: a zero word adds
    nothing, so rounds that no string of the chunk needs may be skipped. A string's
    key thus depends on its bytes alone, never on its neighbours, which is all the
    duplicate test needs (a hit is then checked exactly). ``kind`` picks the factors,
    so that a qid and a docno key never cancel out in a pair.
    """
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.uint64)
    first, last, second, before = _FACTORS[kind]
    off = _offsets(arr)
    if off.dtype != np.int64:
        off = off.astype(np.int64)
    raw = np.frombuffer(arr.buffers()[2] or b"", np.uint8)
    if len(raw) < 64:  # a few bytes: pad them, so that every read stays inside
        raw = np.concatenate([raw, np.zeros(64, np.uint8)])
    at = np.ndarray((len(raw) - 7,), "<u8", raw, 0, (1,))  # at[i]: bytes i..i+7
    starts, ends = off[:-1], off[1:]
    length = ends - starts
    longest, shortest = int(length.max()), int(length.min())
    with np.errstate(over="ignore"):
        h = _heads(raw, at, starts)  # bytes 0..7, cut to the string
        if shortest < 8:
            h &= _MASKS[np.minimum(length, 8)]
        _mix(h, first)
        h ^= length.view(np.uint64) * last  # strings may end in the bytes of another
        if longest > 8:  # the last 8 bytes
            tail = at[np.maximum(ends - 8, 0)]
            if shortest <= 8:
                tail *= length > 8
            h ^= _mix(tail, last)
        if longest > 16:  # bytes 8..15 and the 8 before the last 8
            word = at[np.minimum(starts + 8, len(at) - 1)]
            if shortest <= 16:
                word *= length > 16
            h ^= _mix(word, second)
            word = at[np.maximum(ends - 16, 0)]
            if shortest <= 16:
                word *= length > 16
            h ^= _mix(word, before)
        return h


def _heads(raw: np.ndarray, at: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The 8 bytes from every start; the few strings that start in the last 7 bytes of
    the buffer read from a zero-padded copy of them."""
    inside = len(at)
    if not len(starts) or starts[-1] < inside:
        return at[starts]
    k = int(np.searchsorted(starts, inside))
    tail = np.zeros(8 + 16, np.uint8)
    tail[: len(raw) - inside] = raw[inside:]
    heads = np.empty(len(starts), np.uint64)
    heads[:k] = at[starts[:k]]
    heads[k:] = np.ndarray((17,), "<u8", tail, 0, (1,))[starts[k:] - inside]
    return heads


@dataclass(frozen=True)
class RunIds:
    """A run's ids as its duplicate test reads them, kept for its evaluation.

    ``qids`` holds the distinct qids in order of first appearance and ``query``
    each row's index into it (integer work from then on: the rows of a query
    usually follow each other, so only the first row of each stretch is hashed
    by arrow); ``docno_hash`` holds each row's :func:`docno_hashes`, which
    :meth:`tiecore.engine.judgments.Judgments.lookup` probes instead of hashing the
    docnos again.
    """

    qids: pa.Array
    query: np.ndarray
    docno_hash: np.ndarray

    @classmethod
    def of(cls, qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray) -> RunIds:
        """Encode the qids and hash the docnos of a run's rows (of a big run at the same
        time: arrow codes the qids while numpy hashes the docnos in a thread)."""
        if len(docno) < _OVERLAP:
            qids, query = _query_codes(qid)
            return cls(qids, query, docno_hashes(docno))
        with ThreadPoolExecutor(1) as pool:
            hashing = pool.submit(docno_hashes, docno)
            qids, query = _query_codes(qid)
            return cls(qids, query, hashing.result())

    def pair_keys(self) -> np.ndarray:
        """62-bit hash of every (qid, docno) pair, from the qid's code and the docno's hash.

        The top two bits are cleared: seen as float64, every key is then a positive
        finite number (no NaN), and such floats sort exactly as their bit patterns do.
        """
        n = len(self.query)
        keys = np.frombuffer(pa.allocate_buffer(8 * max(n, 1)), np.uint64)[:n]
        with np.errstate(over="ignore"):
            for start in range(0, n, _PIECE):  # in pieces: small temporaries
                key = keys[start : start + _PIECE]
                key[:] = self.query[start : start + _PIECE]
                key += np.uint64(1)  # _mix keeps 0 at 0
                _mix(key, _FACTORS["qid"][0])
                key ^= self.docno_hash[start : start + _PIECE]
                key >>= np.uint64(2)
        return keys


def _query_codes(qid: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """The distinct qids (first appearance order) and each row's index among them (int32).

    Rows of one query mostly follow each other: only the first row of each
    stretch of equal qids is looked up (a comparison of neighbours finds them).
    """
    n = len(qid)
    if n == 0:
        return pa.array([], qid.type), np.zeros(0, np.int32)
    change = np.ones(n, bool)
    if n > 1:
        change[1:] = to_numpy(kernel("not_equal", qid.slice(1), qid.slice(0, n - 1)), True)
    heads = np.flatnonzero(change)
    head_qid = _take_ascending(qid, heads)
    qids = kernel("unique", head_qid)
    codes = kernel("index_in", head_qid, options=_kernels.SetLookupOptions(qids))
    codes = to_numpy(codes).astype(np.int32)
    return qids, np.repeat(codes, np.diff(np.append(heads, n)))


def _take_ascending(column: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``column.take(rows)`` for ascending ``rows``, chunk by chunk (arrow's take of a
    chunked array first joins all its chunks).

    >>> import pyarrow as pa
    >>> _take_ascending(pa.chunked_array([["a", "b"], ["c"]]), np.array([0, 2])).to_pylist()
    ['a', 'c']
    """
    if not isinstance(column, pa.ChunkedArray):
        return kernel("take", column, to_arrow(rows))
    bounds = np.cumsum([0] + [len(chunk) for chunk in column.chunks])
    which = np.searchsorted(bounds, rows, side="right") - 1
    cuts = np.searchsorted(which, np.arange(len(column.chunks) + 1))
    parts = [
        kernel("take", chunk, to_arrow(rows[cuts[k] : cuts[k + 1]] - bounds[k]))
        for k, chunk in enumerate(column.chunks)
        if cuts[k + 1] > cuts[k]
    ]
    return pa.concat_arrays(parts) if parts else pa.array([], column.type)


def _docno_pieces(docno: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    """Zero-copy slices of the column, at most ``_PIECE`` rows each."""
    chunks = docno.chunks if isinstance(docno, pa.ChunkedArray) else [docno]
    return [c.slice(start, _PIECE) for c in chunks for start in range(0, len(c), _PIECE)]


def docno_hashes(docno: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """:func:`_hash_chunk` of every docno (uint64), computed piecewise, on all cores when
    there are many; the hashes live in arrow's memory pool, which reuses what the
    parser freed.

    >>> import pyarrow as pa
    >>> h = docno_hashes(pa.chunked_array([["FBIS3-1", "FBIS3-10"], ["FBIS3-1"]]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    pieces = _docno_pieces(docno)
    n = len(docno)
    out = np.frombuffer(pa.allocate_buffer(8 * max(n, 1)), np.uint64)[:n]
    starts = np.cumsum([0] + [len(p) for p in pieces])

    def piece(k: int) -> None:
        out[starts[k] : starts[k + 1]] = _hash_chunk(pieces[k], "docno")

    if len(pieces) < _THREADED_PIECES:  # threads cost more than they save
        for k in range(len(pieces)):
            piece(k)
    else:
        with ThreadPoolExecutor(min(len(pieces), os.cpu_count() or 1)) as pool:
            list(pool.map(piece, range(len(pieces))))
    return out


_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, odd


#: Keys below which :class:`HashIndex` keeps a load under 1/4 (2^21 slots at most).
_SPARSE_KEYS = 1 << 19


class HashIndex:
    """Positions of distinct uint64 keys, found by an open-addressing hash table in numpy:
    ``pandas.Index(keys).get_indexer`` without pandas.

    A key's home slot is the top bits of ``key * 0x9E37...`` (Fibonacci hashing); the
    table has over 4 slots per key up to :data:`_SPARSE_KEYS` keys and over 1.5 beyond
    (a worker's memory: 1.2M qrels keys take 25 MB), and collisions go to the next free slot
    (linear probing, no wrap-around: the table ends with a free slot).  Keys are
    placed in order of their home slot, so that key ``i`` lands at ``max(home_i,
    place_{i-1} + 1)``, a running maximum.  A probe reads slots from the home slot
    on until it meets its key or an empty slot (key 0, which a real key 0 cannot
    take: it is kept aside), every probe at once, a round per slot.

    >>> index = HashIndex(np.array([7, 0, 2**64 - 1, 12], np.uint64))
    >>> index.get_indexer(np.array([12, 5, 0, 7, 2**64 - 1], np.uint64)).tolist()
    [3, -1, 1, 0, 2]
    """

    def __init__(self, keys: np.ndarray) -> None:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        zero = np.flatnonzero(keys == 0)
        self._zero = int(zero[0]) if zero.size else -1
        rows = np.flatnonzero(keys != 0)
        n = len(rows)
        # sparse (load under 1/4: short probe chains, as most probes of a run miss) while
        # the table stays within 2^21 slots (25 MB); denser past that (load under 2/3)
        bits = max((4 * n if n < _SPARSE_KEYS else n + n // 2).bit_length(), 3)
        self._shift = np.uint64(64 - bits)
        home = self._home(keys[rows])
        order = np.argsort(home)
        home, rows = home[order], rows[order]
        step = np.arange(len(rows))
        place = step + np.maximum.accumulate(home - step) if len(rows) else home
        size = max(1 << bits, int(place[-1]) + 2 if len(rows) else 0)
        self._keys = np.zeros(size, np.uint64)  # 0: an empty slot
        # int32 positions where they fit: the table is a worker's largest object when the
        # qrels are (1.2M keys: 25 MB, not 134 MB at 4 slots a key and int64)
        self._index = np.full(size, -1, np.int32 if len(keys) < 2**31 else np.int64)
        self._keys[place] = keys[rows]
        self._index[place] = rows

    def _home(self, keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            home = keys * _FIBONACCI
        home >>= self._shift
        return home.view(np.int64)

    def get_indexer(self, probe: np.ndarray) -> np.ndarray:
        """Position of each probed key among the keys, -1 when absent."""
        probe = np.asarray(probe, dtype=np.uint64)
        out = np.full(len(probe), -1, np.int64)
        slot = self._home(probe)
        found = np.take(self._keys, slot)
        hit = found == probe
        out[hit] = np.take(self._index, slot[hit])
        todo = np.flatnonzero(~hit & (found != 0))
        slot, key = slot[todo], probe[todo]
        while todo.size:
            slot += 1
            found = np.take(self._keys, slot)
            hit = found == key
            out[todo[hit]] = np.take(self._index, slot[hit])
            more = ~hit & (found != 0)
            todo, slot, key = todo[more], slot[more], key[more]
        if self._zero >= 0:
            out[probe == 0] = self._zero
        return out


def _pair_keys(qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """:meth:`RunIds.pair_keys` of the rows."""
    return RunIds.of(qid, docno).pair_keys()


def first_duplicate(
    qid: pa.Array | pa.ChunkedArray,
    docno: pa.Array | pa.ChunkedArray,
    *,
    ids: RunIds | None = None,
) -> tuple[int, int] | None:
    """Records ``(first, second)`` of the earliest repeated (qid, docno) pair, or ``None``.

    Hash the pairs (:meth:`RunIds.pair_keys`; ``ids`` when the caller has them),
    sort the 62-bit keys (numpy's SIMD sort, as float64, its fastest) and look for
    equal neighbours; only on a hit are the docnos compared exactly.
    """
    ids = RunIds.of(qid, docno) if ids is None else ids
    ordered = ids.pair_keys()
    ordered.view(np.float64).sort()  # in place: the file order is recomputed on a hit only
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return None
    import pandas as pd

    candidates = np.flatnonzero(np.isin(ids.pair_keys(), ordered[1:][same]))
    pairs = pd.DataFrame(
        {
            "q": ids.query[candidates],
            "d": pc.take(docno, pa.array(candidates)).to_pylist(),
        }
    )
    repeated = pairs.duplicated(keep="first").to_numpy()
    if not repeated.any():
        return None  # a hash collision, not a duplicate
    k = int(np.flatnonzero(repeated)[0])
    match = (pairs["q"] == pairs["q"].iloc[k]) & (pairs["d"] == pairs["d"].iloc[k])
    return int(candidates[int(np.flatnonzero(match.to_numpy())[0])]), int(candidates[k])


def _check_unique(
    qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray, loc: _Locator, what: str
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


def run_ids_of(frame: pd.DataFrame) -> RunIds | None:
    """The :class:`RunIds` the reader kept for ``frame``, while its id columns are the
    arrays the reader made (:func:`tiecore.io._checked.ids_of`: arrow arrays are immutable,
    so any change of the ids replaces them)."""
    return _checked.ids_of(frame)


# ---------------------------------------------------------------------------- runs

# qid and docno as large_string: what pandas keeps, so the DataFrame shares the buffers
_TEXT, _TOKEN = pa.large_string(), pa.string()
_RUN_TYPES = {0: _TEXT, 2: _TEXT, 4: pa.float64(), 5: _TOKEN}


def _first_tokens(tokens: _Tokens, rows: np.ndarray) -> list[str]:
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


def _looks_like_qrels(tokens: _Tokens, rows: np.ndarray) -> bool:
    """Every line has 4 fields and the first ends with an integer: ``qid iter docno level``."""
    first = _first_tokens(tokens, rows)
    return (
        len(first) == 4
        and _is_number(first[3], integer=True)
        and bool((tokens.count[rows] == 4).all())
    )


def _looks_like_run(tokens: _Tokens, rows: np.ndarray) -> bool:
    """Every line has the 5 or 6 fields of the first, which reads ``qid Q0 docno rank score``."""
    first = _first_tokens(tokens, rows)
    return (
        len(first) in (5, 6)
        and re.fullmatch(r"[Qq]?[0-9]+", first[1]) is not None
        and _is_number(first[3], integer=True)
        and _is_number(first[4])
        and bool((tokens.count[rows] == len(first)).all())
    )


def _careful_run(text: _Text) -> tuple[dict[str, pa.ChunkedArray], _Locator]:
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
                problem = _fields(first_count)
                if _looks_like_qrels(tokens, rows):
                    problem += ": this looks like TREC qrels, not a run"
                loc.fail(0, problem, RUN_FIELDS)
        # fields after the tag vary freely only in a file whose first line has some
        bad = np.flatnonzero(count < 6 if first_count > 6 else count != first_count)
        if len(bad):
            k = int(bad[0])
            problem = f"{_fields(count[k])} but line {first_line} has {first_count}"
            if count[k] > first_count == 6:
                problem += " (a space inside a docno or a tag?)"
            loc.fail(k, problem, RUN_FIELDS + ", as many on every line")
        tagged = first_count >= 6
        score_text = tokens.field(rows, 4)
        score, k = _cast(score_text, pa.float64())
        if k is None:
            infinite = np.flatnonzero(~np.isfinite(score.to_numpy()))
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
            f"{_fields(first_count)} but every other line has 6 (a space inside a docno or a tag?)",
            RUN_FIELDS + ", as many on every line",
        )
    fields = {key: pa.chunked_array([part[key] for part in parts]) for key in parts[0]}
    return fields, _Locator(text.where, np.concatenate(lines))


def _fast_run(text: _Text) -> tuple[dict[str, pa.ChunkedArray], _Locator, list[str]] | None:
    """Fields and tags, or None when the careful path must read the text."""
    parsed = _fast_table(text, _RUN_TYPES, 5, last=5)
    if parsed is None:
        return None
    table, tag = parsed
    fields = {"qid": table["f0"], "docno": table["f2"], "score": table["f4"]}
    if tag is None and "f5" in table.column_names:
        fields["tag"] = table["f5"]
    return fields, _Locator(text.where, None), [tag] if tag is not None else []


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


def _run_columns(
    fields: dict[str, pa.ChunkedArray], loc: _Locator, tags: list[str] | None = None
) -> RunColumns:
    """Validate parsed run fields; the tags are given, or found in the ``tag`` field."""
    if not kernel("all", kernel("is_finite", fields["score"])).as_py():  # careful: the line
        infinite = np.flatnonzero(~np.isfinite(fields["score"].to_numpy()))
        loc.fail(int(infinite[0]), "score is not finite", "a finite number")
    tags = list(tags or [])
    if "tag" in fields:
        tag = fields.pop("tag")  # freed before the duplicate check needs memory
        first = tag[0]
        if kernel("all", kernel("equal", tag, first)).as_py():
            tags = [first.as_py()]
        else:
            tags = kernel("unique", tag).to_pylist()
        del tag
    pa.default_memory_pool().release_unused()  # the parser's buffers: the test's memory
    ids = _check_unique(fields["qid"], fields["docno"], loc, "run")
    # one chunk of scores, in arrow's pool: pandas then shares it instead of copying
    score = pa.chunked_array([fields.pop("score").combine_chunks()])
    return RunColumns(fields.pop("qid"), fields.pop("docno"), score, tags, ids)


def _run_frame(columns: RunColumns) -> pd.DataFrame:
    """The DataFrame of checked run columns, remembered as checked with its ids."""
    table = pa.table({"qid": columns.qid, "docno": columns.docno, "score": columns.score})
    frame = table.to_pandas(split_blocks=True)
    del table
    # checked here: evaluation does not test it again, and reuses the qid codes and hashes
    _checked.mark(frame, "run", columns.ids)
    return frame


def _parse_run_columns(text: _Text, *, fast: bool = True) -> RunColumns:
    """Parse a run: the fast path first, the careful one for messy layouts and errors."""
    parsed = _fast_run(text) if fast else None
    if parsed is not None:
        try:
            return _run_columns(*parsed)
        except _NeedLines:
            pass
    return _run_columns(*_careful_run(text))


def _parse_run(text: _Text, *, fast: bool = True) -> tuple[pd.DataFrame, list[str]]:
    """:func:`_parse_run_columns` as a DataFrame, and the tags."""
    columns = _parse_run_columns(text, fast=fast)
    return _run_frame(columns), columns.tags


def read_run_columns(path: str | os.PathLike) -> RunColumns:
    """:func:`read_run`'s checked columns of a TREC run file (plain or gzip), without
    a DataFrame: the same rules, errors and values, for ``tiecore eval``'s arrow path."""
    text = _Text(path)
    columns = _parse_run_columns(text)
    del text
    pa.default_memory_pool().release_unused()
    return columns


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
    from tiecore.interop import peer_frame  # ranx and trectools runs
    from tiecore.io import sources as _sources  # Parquet, JSON Lines, stdin, frames, records

    source = peer_frame(source, "run")
    if _sources.claims(source):
        return _sources.read_run(source, name=name)
    text = _Text(source)
    frame, tags = _parse_run(text)
    del text
    pa.default_memory_pool().release_unused()
    if name is None:
        name = tags[0] if len(tags) == 1 else _stem(_display_name(source))
    frame.attrs.update(name=name, source=_display_name(source), tags=tags)
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
    from tiecore.interop import is_peer

    if isinstance(sources, (str, os.PathLike)) or hasattr(sources, "read") or is_peer(sources):
        sources = [sources]
    from tiecore.io import sources as _sources

    sources = _sources.run_sources(sources)  # a DataFrame or records: one run
    frames = [read_run(s) for s in sources]
    names = file_names([f.attrs["source"] for f in frames], [f.attrs["tags"] for f in frames])
    for frame, name in zip(frames, names, strict=True):
        frame.attrs["name"] = name
    return dict(zip(names, frames, strict=True))


# --------------------------------------------------------------------------- qrels

_QRELS_TYPES = {0: _TEXT, 2: _TEXT, 3: _TOKEN}  # the level as text: decimal is checked


def _careful_qrels(text: _Text) -> tuple[dict[str, pa.ChunkedArray], _Locator]:
    """Whitespace-split every line: exactly 4 fields, an integer level."""
    parts: list[dict[str, pa.Array]] = []
    lines: list[np.ndarray] = []
    for tokens, rows, loc in _batches(text):
        count = tokens.count[rows]
        bad = np.flatnonzero(count != 4)
        if len(bad):
            k = int(bad[0])
            problem = _fields(count[k])
            if not parts and k == 0 and _looks_like_run(tokens, rows):
                problem += ": this looks like a TREC run, not qrels"
            loc.fail(k, problem, QRELS_FIELDS)
        level_text = tokens.field(rows, 3)
        level, k = _decimal_levels(level_text)
        if k is not None:
            loc.fail(k, f"level {level_text[k].as_py()!r} is not an integer", "a decimal integer")
        parts.append({"qid": tokens.field(rows, 0), "docno": tokens.field(rows, 2), "level": level})
        lines.append(loc.lines)
    if not parts:
        raise InputError(text.where, None, "no qrels lines (the file is empty)", QRELS_FIELDS)
    fields = {key: pa.chunked_array([part[key] for part in parts]) for key in parts[0]}
    return fields, _Locator(text.where, np.concatenate(lines))


def _parse_qrels_columns(text: _Text, *, fast: bool = True) -> dict[str, pa.ChunkedArray]:
    """Parse qrels: the fast path first, the careful one for messy layouts and errors;
    the checked columns ``qid``, ``docno`` (large_string) and ``level`` (int64)."""
    parsed = _fast_table(text, _QRELS_TYPES, 4, 4) if fast else None
    if parsed is not None:
        table = parsed[0]
        level, bad = _decimal_levels(table["f3"])
        fields = {"qid": table["f0"], "docno": table["f2"], "level": level}
        try:
            if bad is not None:
                raise _NeedLines  # the careful path names the line
            _check_unique(fields["qid"], fields["docno"], _Locator(text.where, None), "qrels")
        except _NeedLines:
            pass
        else:
            return fields
    fields, loc = _careful_qrels(text)
    _check_unique(fields["qid"], fields["docno"], loc, "qrels")
    return fields


def _parse_qrels(text: _Text, *, fast: bool = True) -> pd.DataFrame:
    """:func:`_parse_qrels_columns` as a DataFrame."""
    return pa.table(_parse_qrels_columns(text, fast=fast)).to_pandas()


def read_qrels_columns(path: str | os.PathLike) -> dict[str, pa.ChunkedArray]:
    """:func:`read_qrels`'s checked columns of a TREC qrels file, without a DataFrame."""
    columns = _parse_qrels_columns(_Text(path))
    pa.default_memory_pool().release_unused()
    return columns


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
    from tiecore.interop import peer_frame  # ranx and trectools qrels
    from tiecore.io import sources as _sources  # Parquet, JSON Lines, stdin, frames, records

    source = peer_frame(source, "qrels")
    if _sources.claims(source):
        return _sources.read_qrels(source)
    frame = _parse_qrels(_Text(source))
    pa.default_memory_pool().release_unused()
    frame.attrs["source"] = _display_name(source)
    _checked.mark(frame, "qrels")
    return frame


# --------------------------------------------------------------------------- LETOR

#: The largest feature index read without a choice of features: LETOR sets number theirs
#: from 1 (MSLR-WEB 136, Yahoo! 700, Istella 220); an index of 10^15 is a typo or another
#: format, not 10^15 features to evaluate.
MAX_FEATURE_INDEX = 100_000
#: The most distinct features evaluated without a choice of features (each is a run: its
#: scores, its measures); 3,000 took 5.6 s, which a file with stray indexes should not cost.
MAX_FEATURES = 1_000
#: The most features one choice may name (as the command line's ``--features``).
MAX_CHOSEN_FEATURES = 100_000


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
        Lines ``label qid:Q i:v i:v ... # comment``; the label must be a non-negative
        integer (``2`` or ``2.0``: a relevance grade, so svmlight's ``-1`` class is
        refused), indexes 1-based, in decimal and strictly increasing within a line.
        As in svmlight, a ``#`` anywhere starts a comment that runs to the end of the
        line: ``qid:1#x`` is query ``1`` followed by the comment ``x``.
    features : iterable of int, optional
        1-based feature indexes to turn into runs, at most :data:`MAX_CHOSEN_FEATURES`;
        default every index that occurs, which must then be at most
        :data:`MAX_FEATURE_INDEX`, and at most :data:`MAX_FEATURES` distinct ones.

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
        A malformed line (with its number), a file without any feature, a
        requested feature absent from the file, too many features or too large an
        index without a choice of features.
    """
    import pandas as pd

    data, where = _load(source)
    tokens = _Tokens.split(_lines(data, inline_comments=True))
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
    negative = np.flatnonzero(label_np < 0)
    if len(negative):  # svmlight's -1/+1 classes are no LETOR grades (trec_eval's would be)
        k = int(negative[0])
        loc.fail(
            k,
            f"label {label_text[k].as_py()!r} is negative",
            "a relevance grade 0, 1, 2, ... (svmlight's -1/+1 classes are no LETOR grades)",
        )

    qid_text = tokens.field(rows, 1)
    ok = pc.and_(pc.starts_with(qid_text, "qid:"), pc.greater(pc.binary_length(qid_text), 4))
    wrong = np.flatnonzero(~ok.to_numpy(zero_copy_only=False))
    if len(wrong):
        k = int(wrong[0])
        loc.fail(k, f"second field {qid_text[k].as_py()!r} is not qid:<id>", LETOR_FIELDS)
    qid = pc.utf8_slice_codeunits(qid_text, 4)

    # feature tokens: everything after the qid token
    n_pairs = count - 2
    if not n_pairs.any():
        raise InputError(where, None, "no line has a feature", LETOR_FIELDS)
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
    digits = kernel(
        "match_substring_regex", index_text, options=Kernels.MatchSubstringOptions(r"^[0-9]+$")
    )
    if kernel("all", digits).as_py():  # decimal digits only: arrow's cast reads 0x2 as 2
        index, bad = _cast(index_text, pa.int64())
    else:
        bad = int(np.flatnonzero(~to_numpy(digits, False))[0])
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
        if present[-1] > MAX_FEATURE_INDEX:
            k = int(np.flatnonzero(index_np > MAX_FEATURE_INDEX)[0])
            loc.fail(
                int(pair_record[k]),
                f"feature index {index_np[k]:,} is above {MAX_FEATURE_INDEX:,}, the largest "
                "evaluated without a choice of features",
                "feature indexes up to that, or a choice of features (--features)",
            )
        if len(present) > MAX_FEATURES:
            raise InputError(
                where,
                None,
                f"{len(present):,} distinct feature indexes, each one a run to evaluate",
                f"at most {MAX_FEATURES:,} features at once: choose some (--features)",
            )
    else:
        chosen_set: dict[int, None] = {}  # unique, in order, in linear time
        for f in features:
            if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or f < 1:
                raise InputError(
                    where, None, f"feature {f!r} is not a 1-based index", "an int >= 1"
                )
            chosen_set[int(f)] = None
            if len(chosen_set) > MAX_CHOSEN_FEATURES:  # stops a range(1, 10**11) early
                raise InputError(
                    where,
                    None,
                    f"more than {MAX_CHOSEN_FEATURES:,} features chosen",
                    f"at most {MAX_CHOSEN_FEATURES:,} features at once",
                )
        chosen_list = list(chosen_set)
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
        _checked.mark(run, "run")  # docnos are line numbers: unique by construction
        runs[f"f{f}"] = run
    qrels = pd.DataFrame(
        {"qid": base["qid"], "docno": base["docno"], "level": label_np.astype(np.int64)}
    )
    qrels.attrs["source"] = where
    _checked.mark(qrels, "qrels")
    pa.default_memory_pool().release_unused()
    return runs, qrels

"""The readers' fast path: pyarrow's CSV parser, where it provably splits as trec_eval does.

:mod:`pyarrow.csv` parses a text in parallel (straight from disk for a big plain
file, while a thread inflates it block by block for a big gzip file) on the layout
of its first line: its delimiter (the tab if it has one, else the space) and its
number of fields. Meanwhile a thread (for a big text) scans the bytes in cache-sized
windows (``memchr``-speed searches, and numpy for pairs of bytes) for what would
make pyarrow differ from splitting on whitespace: a tab or a space the first line
did not have, a doubled delimiter (an empty field), ``\\v``, ``\\f``, a NUL byte,
invalid UTF-8. :func:`fast_table` returns ``None`` whenever the careful path
(:mod:`tiecore.io.text`) must read the text.
"""

from __future__ import annotations

import codecs
import os
import stat
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from tiecore.errors import InputError
from tiecore.io.arrays import Kernels, kernel, offsets
from tiecore.io.text import BOM, GZIP_MAGIC, TOKEN, Source, display_name, load_text

_BLOCK = 1 << 20  # bytes per block of pyarrow's parser (small blocks: less memory in flight)
_MEMORY_BLOCK = 1 << 18  # ... for a text in memory (more blocks in parallel: faster up to 5 MB)
_SCAN = 1 << 18  # bytes per window of the scan before the fast path (fits the CPU cache)
_STREAM = 1 << 25  # plain files from this size on are parsed by pyarrow from disk
_INFLATE = 1 << 20  # gzip files that inflate to this size on are parsed while inflated
_INFLATE_BLOCK = 1 << 20  # bytes per block of pyarrow's parser for an inflated text
_INFLATE_AHEAD = 4  # blocks inflated ahead of pyarrow's reads (the memory in flight)
_SCAN_THREAD = 1 << 22  # texts from this size on are scanned in a thread during the parse
_FIRST_LINE = 1 << 20  # a longer first line sends the text to the careful path


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

    def window(self, buf: bytes | bytearray, end: int, previous: int, start: int = 0) -> None:
        """Scan ``buf[start:end]``; ``previous`` is the byte before it (-1 at the start)."""
        find = buf.find
        tab = find(b"\t", start, end) >= 0
        self.tab = self.tab or tab
        self.space = self.space or find(b" ", start, end) >= 0
        self.hash = self.hash or find(b"#", start, end) >= 0
        self.awkward = (
            self.awkward or find(b"\x0b", start, end) >= 0 or find(b"\x0c", start, end) >= 0
        )
        if not self.tab and not self.double_space:
            self.double_space = _doubled(buf, end, previous, 32, start)
        if tab and not self.double_tab:
            self.double_tab = _doubled(buf, end, previous, 9, start)


def _doubled(buf: bytes | bytearray, end: int, previous: int, byte: int, start: int = 0) -> bool:
    """Whether ``byte`` appears twice in a row in ``buf[start:end]`` (after ``previous``): the
    byte pairs at even offsets, then at odd ones, compared as 16-bit words by numpy (a
    substring search of two spaces stops at every space: ten times slower).

    >>> _doubled(b"a  b", 4, -1, 32), _doubled(b" a", 2, 32, 32), _doubled(b"a b ", 3, -1, 32)
    (True, True, False)
    >>> _doubled(b"ab  ", 4, -1, 32), _doubled(bytes([97, 9, 9]), 3, -1, 9)
    (True, True)
    >>> _doubled(bytes([97, 32, 9]), 3, -1, 32), _doubled(b"a", 1, 32, 32), _doubled(b"", 0, 32, 32)
    (False, False, False)
    >>> _doubled(b"  a b", 5, 97, 32, 2), _doubled(b"  a  ", 5, 97, 32, 2)
    (False, True)
    """
    size = end - start
    if size > 0 and buf[start] == byte == previous:
        return True
    pair = np.uint16(byte * 257)  # the byte twice, in either byte order
    even = np.frombuffer(buf, np.uint16, count=size // 2, offset=start)
    if (even == pair).any():
        return True
    odd = np.frombuffer(buf, np.uint16, count=max(size - 1, 0) // 2, offset=start + min(size, 1))
    return bool((odd == pair).any())


def _scan(
    windows: Iterable[tuple[bytes | bytearray, int, int]],
    *,
    check_text: bool,
    stop: threading.Event | None = None,
) -> _Scan | None:
    """Scan consecutive windows ``buf[start:end]`` of a text, each at most ``_SCAN`` bytes so
    that the searches run in the CPU cache; ``None`` when ``check_text`` finds a NUL
    byte or invalid UTF-8 (the caller then loads the text to name the line), or when
    ``stop`` is set (nobody needs the scan any more)."""
    scan = _Scan()
    decoder = codecs.getincrementaldecoder("utf-8")()
    previous = -1
    for buf, start, end in windows:
        if stop is not None and stop.is_set():
            return None
        if end <= start:
            continue
        if scan.empty:
            scan.empty = False
            scan.bom = buf[start : start + 3] == BOM
        if check_text:
            if buf.find(b"\x00", start, end) >= 0:
                return None
            part = buf if start == 0 and end == len(buf) else bytes(buf[start:end])
            if not part.isascii() or decoder.getstate()[0]:  # or a character cut in two
                try:
                    decoder.decode(part)
                except UnicodeDecodeError:
                    return None
        scan.window(buf, end, previous, start)
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


def _head(data: bytes) -> bytes:
    """What :func:`_first_line` needs of a text in memory: its first line with the line's
    end, or its first ``_FIRST_LINE + 1`` bytes when no line ends there. A slice of the
    first ``_FIRST_LINE + 1`` bytes would copy a whole small text and search all of it
    for a ``\\r`` (59 us of every 1 MB run file; this: 1 us).

    >>> _head(b"a b\\nc d\\n"), _head(b"a\\r\\nb"), _head(b"ab"), _first_line(_head(b"x\\ry\\n"))
    (b'a b\\n', b'a\\r', b'ab', b'x')
    """
    end = data.find(b"\n", 0, _FIRST_LINE + 1)
    cr = data.find(b"\r", 0, end if end >= 0 else _FIRST_LINE + 1)
    if cr >= 0:
        end = cr
    return data[: end + 1] if end >= 0 else data[: _FIRST_LINE + 1]


class _Scanning:
    """A scan running in its own thread while pyarrow parses the same text (or, for a
    small text, done at once: a thread costs more than it saves there)."""

    def __init__(
        self,
        windows: Callable[[], Iterable[tuple[bytes | bytearray, int, int]]],
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
        except OSError:  # load_text will say what is wrong
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


def file_rows(path: str | os.PathLike, unknown: int = 500_000) -> int:
    """About how many rows a run file holds: its bytes / 40, uncompressed (``unknown``
    when it cannot be read).

    A gzip file's trailer records its uncompressed size (modulo 2**32): the
    compressed size alone says little, Robust03's runs of 100,000 rows each
    take 0.7 to 1.7 MB.
    """
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            if handle.read(2) == GZIP_MAGIC:
                size = max(size, gzip_size(handle, size))
    except OSError:
        return unknown
    return size // 40


class Text:
    """One input text, loaded lazily.

    A big plain file is scanned in windows and parsed by pyarrow straight from disk,
    so its bytes never sit in memory whole; anything else (gzip, file objects, small
    files, or the careful path) loads the checked, decompressed bytes once.
    """

    def __init__(self, source: Source | None, data: bytes | None = None, where: str = "") -> None:
        self.source = source
        self.where = where or display_name(source)
        self._data = data
        self._inflated = False  # the fast path inflated the gzip file in a thread

    def data(self) -> bytes:
        if self._data is None:
            self._data, _ = load_text(self.source)
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
        # load_text checked the text
        scanning = _Scanning(lambda: _in_place(data), False, threaded=len(data) >= _SCAN_THREAD)
        return _head(data), scanning, pa.BufferReader(pa.py_buffer(data))

    def _stream(self) -> tuple[bytes, _Scanning | _Inflating, pa.NativeFile] | None:
        path = os.fspath(self.source)
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):  # a pipe reads once: load_text reads it
                return None
            size = info.st_size
            with open(path, "rb") as fh:
                head = fh.read(_FIRST_LINE + 1 if size >= _STREAM else 2)
                inflated = gzip_size(fh, size) if head[:2] == GZIP_MAGIC else -1
            if head[:2] == GZIP_MAGIC:  # a small one is left to load_text, read once
                return self._inflate(path) if inflated >= _INFLATE else None
            if size < _STREAM or head[:3] == BOM:  # load_text: strip the BOM
                return None
            return head, _Scanning(lambda: _read_windows(path), True), pa.OSFile(path)
        except (OSError, pa.ArrowException):  # load_text will say what is wrong
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
        if head[:3] == BOM:
            return None
        self._inflated = True
        inflating = _Inflating(inflater, tail, head)
        return head[: _FIRST_LINE + 1], inflating, pa.PythonFile(inflating, mode="r")


class _Inflating:
    """A gzip member inflated in a thread, block by block, for a reader (pyarrow, through
    :class:`pyarrow.PythonFile`) while the thread scans every block as :func:`_scan` does;
    :meth:`result` is the scan, ``None`` too when the gzip data is bad or has more than
    one member (then :func:`load_text` reads the file, or says what is wrong). At most
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
        def windows() -> Iterator[tuple[bytearray, int, int]]:
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


def _copied(data: bytes) -> Iterator[tuple[bytearray, int, int]]:
    """``data`` in windows of ``_SCAN`` bytes, copied into one reused buffer (whole
    windows, which the UTF-8 check reads without another copy)."""
    buf = bytearray(_SCAN)
    for i in range(0, len(data), _SCAN):
        n = min(_SCAN, len(data) - i)
        buf[:n] = memoryview(data)[i : i + n]
        yield buf, 0, n


def _in_place(data: bytes) -> Iterator[tuple[bytes, int, int]]:
    """``data`` in windows of ``_SCAN`` bytes, as bounds into it: a text in memory,
    checked already, is scanned where it lies (a copy cost 55 us of every 1 MB run)."""
    for i in range(0, len(data), _SCAN):
        yield data, i, min(i + _SCAN, len(data))


def _read_windows(path: str) -> Iterator[tuple[bytearray, int, int]]:
    """A file in windows of ``_SCAN`` bytes, read into one reused buffer."""
    buf = bytearray(_SCAN)
    with open(path, "rb") as fh:
        while n := fh.readinto(buf):
            yield buf, 0, n


def fast_table(
    text: Text,
    layout: dict[int, pa.DataType],
    min_fields: int,
    max_fields: int | None = None,
    *,
    last: int | None = None,
) -> tuple[pa.Table, str | None] | None:
    """Parse ``text`` with :mod:`pyarrow.csv` as splitting each line on whitespace would
    (:func:`direct_table`); a text laid out otherwise (runs of blanks, tabs and spaces
    both, blanks at either end of a line, ``\\v`` or ``\\f``: what trec_eval reads, and
    published files have) is first rewritten by :func:`normalise` to the layout pyarrow
    splits exactly, then parsed; ``None`` when the careful path is needed.

    Every column of the table is a whitespace-split token of its line and every line
    has as many, so both paths give the same values; an error to name (a bad value,
    a duplicate) is named by the careful path, which keeps the file's lines."""
    parsed = direct_table(text, layout, min_fields, max_fields, last=last)
    if parsed is not None:
        return parsed
    try:
        data = text.data()
    except InputError:  # the careful path names it
        return None
    normal = normalise(data)
    if normal is None:
        return None
    return direct_table(Text(None, normal, text.where), layout, min_fields, max_fields, last=last)


#: :func:`normalise`'s classes of bytes, a ``bytes.translate`` table: 1 a blank (space,
#: ``\\t``, ``\\v``, ``\\f``), 3 a line end (``\\n``, ``\\r``), 0 a byte of a token.
_CLASS = bytes(1 if b in (9, 11, 12, 32) else 3 if b in (10, 13) else 0 for b in range(256))
#: Blanks as spaces (``bytes.translate``).
_SPACES = bytes(32 if b in (9, 11, 12) else b for b in range(256))
_PIECE = 1 << 22  # bytes per numpy pass of normalise (small temporaries)


def normalise(data: bytes | bytearray) -> bytes | None:
    """``data`` with its fields split by single spaces: each run of ASCII whitespace
    (space, ``\\t``, ``\\v``, ``\\f``: what trec_eval's ``isspace`` and arrow's
    ``ascii_split_whitespace`` skip) inside a line becomes one space, whitespace at
    either end of a line goes, and so do line ends at the start of the text; line ends
    (``\\n``, ``\\r\\n``, ``\\r``: :func:`~tiecore.io.text.text_lines`' and pyarrow's)
    stay, and pyarrow skips the lines left empty. The tokens of every line are kept, in
    order: splitting the result's lines on single spaces is the whitespace split of
    ``data``. ``None`` when nothing changes.

    In numpy passes over pieces of ``_PIECE`` bytes (each byte classed by
    ``bytes.translate``, 2.5x as fast as a numpy lookup): a blank is kept when a token
    byte follows it (the last of its run), then a blank right after a line end (or at
    the start) is dropped; blanks other than spaces become spaces. 47 MB in 0.1 s.

    >>> normalise(b"  1 Q0\\t\\td1  2 \\r\\n \\r\\n3\\x0b4\\r")
    b'1 Q0 d1 2\\r\\n\\r\\n3 4\\r'
    >>> normalise(b"\\n\\n1 2\\n"), normalise(b"1 2\\r\\n3 4\\n") is None
    (b'1 2\\n', True)
    """
    arr = np.frombuffer(data, np.uint8)
    n = len(arr)
    pieces: list[bytes] = []
    after_end = True  # the byte kept before the piece ends a line (or the text starts)
    changed = False
    for i in range(0, n, _PIECE):
        j = min(i + _PIECE, n)
        cls = np.frombuffer(data[i : j + 1].translate(_CLASS), np.uint8)
        separator = (cls[1:] & 1).view(bool)  # a blank or a line end follows
        if j == n:
            separator = np.append(separator, True)  # the text's end follows the last byte
        kept = arr[i:j][~((cls[: j - i] == 1) & separator)]
        del cls, separator
        ends = (kept == 10) | (kept == 13)
        leading = np.empty(len(kept), bool)  # right after a line end
        if len(kept):
            leading[0] = after_end
            leading[1:] = ends[:-1]
            after_end = bool(ends[-1])
        leading &= _is_blank(kept)
        if leading.any():
            kept = kept[~leading]
        piece = kept.tobytes()
        if b"\t" in piece or b"\x0b" in piece or b"\x0c" in piece:  # memchr: fast
            piece, changed = piece.translate(_SPACES), True
        changed = changed or len(kept) != j - i
        pieces.append(piece)
    out = b"".join(pieces)
    text = out.lstrip(b"\r\n")
    return text if changed or len(text) != len(out) else None


def _is_blank(values: np.ndarray) -> np.ndarray:
    """Which bytes are blanks (space, ``\\t``, ``\\v``, ``\\f``)."""
    return (values == 32) | (values == 9) | (values == 11) | (values == 12)


def direct_table(
    text: Text,
    layout: dict[int, pa.DataType],
    min_fields: int,
    max_fields: int | None = None,
    *,
    last: int | None = None,
) -> tuple[pa.Table, str | None] | None:
    """Parse ``text`` with :mod:`pyarrow.csv` when that is provably the same as splitting
    each line on whitespace; return ``None`` when it is not.

    The delimiter is the tab, or the space when the text has no tab. The columns of
    ``layout`` are read, as ``f0``, ``f1``...; whitespace splitting differs only where
    pyarrow sees an empty field, from a delimiter at either end of a line (the first
    or the last field is empty: both are read and checked) or a doubled delimiter
    (the scan looks for one). With tabs and spaces both, every field is read and no
    text field may hold a space (pyarrow trims the spaces around numbers itself, as
    in trec_eval's own test runs). Every line must have as many fields as the first
    (else pyarrow raises); ``\\v`` and ``\\f`` need the careful path. Lines end at
    ``\\n``, ``\\r\\n`` or ``\\r`` for pyarrow as for :func:`text_lines`; pyarrow skips
    blank lines, so line numbers are unknown here and the caller redoes the text
    carefully when it needs one. pyarrow also skips a BOM at the start of the text:
    a text that still starts with one once :func:`load_text` took the file's own (a first
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
        if not first or first[:3] == BOM or not (b"\t" in first or b" " in first):
            scanning.cancel()
            return None
        delim = b"\t" if b"\t" in first else b" "
        mixed = b"\t" in first and b" " in first
        n_fields = first.count(delim) + 1
        too_many = max_fields is not None and n_fields > max_fields
        if first[:1] in (delim, b"#") or n_fields < min_fields or too_many or _blank_runs(first):
            scanning.cancel()
            return None  # rewritten first (fast_table), or the careful path names the line
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


def _blank_runs(first: bytes) -> bool:
    """Whether the first line shows a layout that only :func:`normalise` makes pyarrow's:
    a run of blanks, a blank at its end, ``\\v`` or ``\\f`` (then the text is rewritten
    before any parse, not parsed in vain first).

    >>> _blank_runs(b"1 0  d 1"), _blank_runs(b"1\\t0\\td\\t1 "), _blank_runs(b"1\\t0 d 1")
    (True, True, False)
    """
    return (
        b"  " in first
        or b"\t\t" in first
        or first[-1:] in (b" ", b"\t")
        or b"\x0b" in first
        or b"\x0c" in first
    )


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
        types.setdefault(f"f{j}", TOKEN)
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
            check_utf8=False,  # the scan or load_text checked it
        ),
    )


def _any_match(column: pa.ChunkedArray, pattern: str, how: str) -> bool:
    """``pc.any(pc.<how>(column, pattern))``."""
    found = kernel(how, column, options=Kernels.MatchSubstringOptions(pattern))
    return bool(kernel("any", found).as_py())


def _has_empty(arr: pa.Array) -> bool:
    """Whether a string array holds an empty string (two equal offsets)."""
    off = offsets(arr)
    return bool((off[1:] == off[:-1]).any())

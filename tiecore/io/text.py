"""A text's bytes, lines and tokens: the careful path of the TREC and LETOR readers.

:func:`load_text` gives the checked, decompressed bytes of a path or file object (gzip by
its magic bytes, a BOM dropped, NUL bytes and invalid UTF-8 refused with their line);
:func:`text_lines` cuts them into physical lines (``\\n``, ``\\r\\n`` or a lone ``\\r``) and
:class:`Tokens` splits those at runs of ASCII whitespace, as trec_eval does, keeping
the line of every record for the :class:`~tiecore.errors.InputError`
(:class:`Locator`). :func:`cast_column` and :func:`decimal_levels` turn tokens into numbers
with arrow's parser and name the first bad one.
"""

from __future__ import annotations

import codecs
import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NoReturn

import numpy as np
import pyarrow as pa

from tiecore.errors import InputError
from tiecore.io.arrays import Kernels, kernel, offsets, to_arrow, to_numpy

Source = str | os.PathLike[str] | IO[bytes] | IO[str]

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 24  # bytes per numpy pass when scanning big buffers
#: Bytes of a file (inflated, when gzip) checked as text before the rest is read.
HEAD = 1 << 20
# qid and docno as large_string: what pandas keeps, so the DataFrame shares the buffers
TEXT, TOKEN = pa.large_string(), pa.string()


# --------------------------------------------------------------------------- bytes


def encodable(text: str) -> bool:
    """Whether UTF-8 can encode ``text`` (not a lone surrogate such as ``"\\ud800"``, which a
    JSON escape or a Python dict can hold and pandas and arrow refuse).

    >>> encodable("d1"), encodable("d\\ud800")
    (True, False)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display_name(source: Source) -> str:
    """Name used in error messages: the path, or a file object's ``.name``."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return str(name) if isinstance(name, (str, os.PathLike)) and str(name) else "<upload>"


def load_text(source: Source) -> tuple[bytes, str]:
    """Return the (decompressed) bytes of ``source`` and its display name."""
    where = display_name(source)
    if isinstance(source, (str, os.PathLike)):
        try:
            with Path(source).open("rb") as handle:
                first = handle.read(HEAD)
                _check_head(first, where)  # a binary file or a bomb fails before the rest
                data = first + handle.read()
        except FileNotFoundError:
            raise InputError(where, None, "no such file", "an existing file") from None
        except IsADirectoryError:
            raise InputError(where, None, "is a directory", "a file") from None
        except OSError as exc:
            raise InputError(where, None, f"cannot read the file ({exc.strerror})") from None
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        if hasattr(source, "getvalue"):
            raw = source.getvalue()
        else:
            first = source.read(HEAD)
            if isinstance(first, bytes):
                _check_head(first, where)
            raw = first + source.read()
        if isinstance(raw, str):
            try:
                data = raw.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputError(where, None, f"unencodable text ({exc.reason})") from None
        else:
            data = bytes(raw)
    else:
        raise TypeError(f"expected a path or a file object, got {type(source).__name__}")
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(
                where, None, f"corrupt gzip data ({exc})", "a complete gzip file"
            ) from None
    if data[:3] == BOM:
        data = data[3:]
    _check_text(data, where)
    return data, where


def _check_head(first: bytes, where: str) -> None:
    """The first :data:`HEAD` bytes of a file checked as text (:func:`_check_text`),
    inflated first (at most :data:`HEAD` bytes) when they are gzip, before the rest is
    read: a binary file, ``/dev/zero`` or a gzip of NUL bytes that would inflate to
    gigabytes is refused at once.  The head is checked up to its last line break, so
    that a character cut at its end is no error; a shorter text (all of it), a damaged
    or cut gzip are left to the whole read, which names them as it always has."""
    head = first
    if head[:2] == GZIP_MAGIC:
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, HEAD)
        except zlib.error:
            return
    if len(head) < HEAD:  # the whole text, or a cut gzip: the whole read checks it
        return
    if head[:3] == BOM:
        head = head[3:]
    end = max(head.rfind(b"\n"), head.rfind(b"\r"))
    _check_text(head[: end + 1] if end >= 0 else head[:-3], where)  # no character cut


def _line_at(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset`` (line breaks as in :func:`text_lines`)."""
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


class NeedLines(Exception):
    """The fast path saw a problem; redo the file carefully to name the line."""


class Locator:
    """Turn a record index into an :class:`InputError` naming the file line.

    ``lines`` holds the 1-based file line of every record; ``None`` (fast path)
    means line numbers are unknown and the careful path must take over.
    """

    def __init__(self, where: str, lines: np.ndarray | None) -> None:
        self.where = where
        self.lines = lines

    def fail(self, record: int, problem: str, expected: str | None = None) -> NoReturn:
        if self.lines is None:
            raise NeedLines
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


def text_lines(data: bytes, *, inline_comments: bool = False) -> pa.Array:
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
        lines = kernel(
            "replace_substring_regex", lines, options=Kernels.ReplaceSubstringOptions("#.*", "")
        )
    return lines


@dataclass(frozen=True)
class Tokens:
    """Whitespace-separated tokens of every physical line of a file.

    ``flat`` holds all tokens (plus empty artefacts of leading/trailing whitespace);
    line ``i`` owns ``count[i]`` real tokens starting at ``flat[first[i]]``.
    """

    flat: pa.Array
    first: np.ndarray
    count: np.ndarray

    @classmethod
    def split(cls, lines: pa.Array) -> Tokens:
        """Split every line (a string array) at runs of ASCII whitespace."""
        tokens = kernel("ascii_split_whitespace", lines)
        flat = tokens.values
        toff = to_numpy(tokens.offsets).astype(np.int64)  # arrow's to_numpy imports pandas
        # empty tokens only come from whitespace at either end of a line (runs collapse)
        char_off = offsets(flat)
        size = toff[1:] - toff[:-1]
        head = np.minimum(toff[:-1], max(len(flat) - 1, 0))  # split never gives []
        tail = np.maximum(toff[1:] - 1, head)
        lead_empty = (size > 0) & (char_off[head + 1] == char_off[head])
        trail_empty = (size > 1) & (char_off[tail + 1] == char_off[tail])
        count = np.maximum(size - lead_empty - trail_empty, 0)
        return cls(flat, toff[:-1] + lead_empty, count)

    def field(self, rows: np.ndarray, j: int) -> pa.Array:
        """Token ``j`` (0-based) of every line in ``rows`` (which must have it)."""
        return self.flat.take(to_arrow(self.first[rows] + j))

    def content_rows(self) -> np.ndarray:
        """Lines with at least one token whose first token does not start with ``#``."""
        rows = np.flatnonzero(self.count > 0)
        if len(rows):
            starts = Kernels.MatchSubstringOptions("#")
            comment = to_numpy(kernel("starts_with", self.field(rows, 0), options=starts))
            rows = rows[~comment]
        return rows


def fields_phrase(n: int) -> str:
    return f"{n} field" if n == 1 else f"{n} fields"


def cast_column(
    values: pa.Array | pa.ChunkedArray, typ: pa.DataType
) -> tuple[pa.Array, int | None]:
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


def decimal_levels(text: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, int | None]:
    """Integer levels written in decimal (an optional sign, digits), as int64; on failure
    the index of the first bad value. Arrow's cast also reads ``0x1f`` as hexadecimal,
    which trec_eval's ``atol`` reads as 0: such a level is refused, not read either way.
    A leading ``+`` is read as trec_eval reads it (``+1`` is 1)."""
    if kernel("all", kernel("ascii_is_decimal", text)).as_py():  # digits only: 6x faster
        return cast_column(text, pa.int64())
    decimal = kernel("match_substring_regex", text, options=Kernels.MatchSubstringOptions(_DECIMAL))
    if not kernel("all", decimal).as_py():
        return text, int(np.flatnonzero(~to_numpy(decimal, False))[0])
    if kernel(
        "any", kernel("starts_with", text, options=Kernels.MatchSubstringOptions("+"))
    ).as_py():
        text = kernel("utf8_ltrim", text, options=Kernels.TrimOptions("+"))
    return cast_column(text, pa.int64())

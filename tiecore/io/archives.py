"""Runs from an archive (zip, tar, tar.gz) or a folder: a whole track in one go.

A TREC track ships its runs as one archive (or one folder) of 80 to 150 files, each
plain or gzip.  :func:`read_archive` and :func:`read_folder` read every run file in
it with :func:`tiecore.read_run`, one member at a time, so memory holds one member's
text besides the runs read; the total text is bounded (``max_text``: a small archive
that inflates to gigabytes is refused once past it, before it is held).  A bad member
is named in the error as ``archive/member`` with its line, as the reader names a file.
Folders inside the archive are walked; hidden files and macOS's ``__MACOSX`` copies are
skipped.  Runs are named as :func:`tiecore.read_runs` names them (tag, else file name).
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING

from tiecore.errors import InputError
from tiecore.io.files import file_names

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["archive_members", "read_archive", "read_folder"]

#: Text bytes an archive or folder may hold by default (2 GiB: 150 runs of 1,000 docs for
#: 50 queries hold about 0.4 GB).
MAX_TEXT = 2 << 30
#: A member's text is read in chunks of this many bytes (and stopped once past the limit).
CHUNK = 1 << 20

Progress = Callable[[int, int | None, str], None]


def _skipped(name: str) -> bool:
    """Folders' hidden files and macOS's resource copies, which hold no run."""
    parts = PurePosixPath(name).parts
    return any(p.startswith(".") or p == "__MACOSX" for p in parts) or not parts


def _text(label: str, stream: IO[bytes], left: int) -> bytes:
    """The text of one member (gunzipped when it is gzip), refused once past ``left`` bytes."""
    head = stream.read(2)
    body = io.BytesIO()
    if head == b"\x1f\x8b":
        source: IO[bytes] | gzip.GzipFile = gzip.GzipFile(fileobj=_Prefixed(head, stream))
    else:
        body.write(head)
        source = stream
    try:
        while chunk := source.read(CHUNK):
            body.write(chunk)
            if body.tell() > left:
                raise InputError(
                    label,
                    None,
                    "the archive's runs hold more text than this reader takes at once",
                    f"at most {left:,} more bytes of text",
                )
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(
            label, None, f"cannot be gunzipped ({error})", "a whole gzip file"
        ) from None
    return body.getvalue()


class _Prefixed(io.RawIOBase):
    """A stream whose first bytes were read already (to test for gzip's magic number)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _open(source: str | os.PathLike | bytes | IO[bytes]) -> tuple[str, IO[bytes]]:
    """The archive's label (its file name) and a seekable binary stream over it."""
    if isinstance(source, bytes):
        return "archive", io.BytesIO(source)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise InputError(str(source), None, "no such file", "a zip or tar archive of runs")
        return path.name, open(path, "rb")  # closed by the caller
    name = Path(str(getattr(source, "name", "archive"))).name
    return name, source


def archive_members(
    source: str | os.PathLike | bytes | IO[bytes], *, max_text: int = MAX_TEXT
) -> Iterator[tuple[str, bytes]]:
    """``(label, text)`` of each file in a zip or tar archive (gzip members gunzipped).

    ``label`` is ``archive/member``; members come in the archive's order, folders,
    hidden files and ``__MACOSX`` skipped.  Raises :class:`InputError` for a file that
    is neither zip nor tar, a member that cannot be gunzipped, or text past
    ``max_text`` bytes in all.

    Examples
    --------
    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w") as archive:
    ...     archive.writestr("runs/a.txt", "1 Q0 d 1 1.0 a\\n")
    >>> [label for label, _ in archive_members(buffer.getvalue())]
    ['archive/runs/a.txt']
    """
    label, stream = _open(source)
    try:
        if zipfile.is_zipfile(stream):
            stream.seek(0)
            yield from _zip_members(label, stream, max_text)
            return
        stream.seek(0)
        try:
            archive = tarfile.open(fileobj=stream, mode="r:*")
        except (tarfile.TarError, OSError, EOFError, zlib.error):
            raise InputError(
                label, None, "is neither a zip nor a tar archive", "a .zip, .tar or .tar.gz file"
            ) from None
        with archive:
            left = max_text
            try:
                for member in archive:
                    if not member.isfile() or _skipped(member.name):
                        continue
                    where = f"{label}/{member.name}"
                    file = archive.extractfile(member)
                    if file is None:
                        continue
                    text = _text(where, file, left)
                    left -= len(text)
                    yield where, text
            except (tarfile.TarError, EOFError, zlib.error) as error:
                raise InputError(
                    label, None, f"the tar archive is cut or damaged ({error})"
                ) from None
    finally:
        if isinstance(source, (str, os.PathLike)):
            stream.close()


def _zip_members(label: str, stream: IO[bytes], max_text: int) -> Iterator[tuple[str, bytes]]:
    try:
        archive = zipfile.ZipFile(stream)
    except zipfile.BadZipFile as error:
        raise InputError(label, None, f"the zip archive is damaged ({error})") from None
    with archive:
        left = max_text
        for info in archive.infolist():
            if info.is_dir() or _skipped(info.filename):
                continue
            where = f"{label}/{info.filename}"
            try:
                with archive.open(info) as file:
                    text = _text(where, file, left)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as error:
                raise InputError(where, None, f"cannot be read from the zip ({error})") from None
            left -= len(text)
            yield where, text


def folder_members(
    folder: str | os.PathLike, *, max_text: int = MAX_TEXT
) -> Iterator[tuple[str, bytes]]:
    """``(label, text)`` of each file under ``folder`` (sorted by path, gzip gunzipped,
    hidden files skipped); ``label`` is ``folder/relative path``."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(str(folder), None, "no such folder", "a folder of run files")
    left = max_text
    paths = sorted(p for p in root.rglob("*") if p.is_file())
    for path in paths:
        relative = path.relative_to(root).as_posix()
        if _skipped(relative):
            continue
        where = f"{root.name}/{relative}"
        with open(path, "rb") as file:
            text = _text(where, file, left)
        left -= len(text)
        yield where, text


def _read(
    members: Iterator[tuple[str, bytes]], source: str, progress: Progress | None, total: int | None
) -> dict[str, pd.DataFrame]:
    from tiecore.io.readers import read_run  # lazy: pandas and pyarrow on first use only

    frames = []
    for done, (where, text) in enumerate(members, start=1):
        stream = io.BytesIO(text)
        stream.name = where
        frames.append(read_run(stream))
        del text, stream
        if progress is not None:
            progress(done, total, where)
    if not frames:
        raise InputError(source, None, "holds no run file", "TREC run files, plain or gzip")
    names = file_names([f.source or "" for f in frames], [f.tags for f in frames])
    for frame, name in zip(frames, names, strict=True):
        frame.name = name
    return dict(zip(names, frames, strict=True))


def _count(source: str | os.PathLike | bytes | IO[bytes]) -> int | None:
    """How many run files the archive lists (for a progress bar), None when not known cheaply."""
    _label, stream = _open(source)
    try:
        if zipfile.is_zipfile(stream):
            stream.seek(0)
            with zipfile.ZipFile(stream) as archive:
                return sum(
                    1 for i in archive.infolist() if not i.is_dir() and not _skipped(i.filename)
                )
        return None  # a tar is listed by reading it through
    except zipfile.BadZipFile:
        return None
    finally:
        if isinstance(source, (str, os.PathLike)):
            stream.close()
        else:
            stream.seek(0)


def read_archive(
    source: str | os.PathLike | bytes | IO[bytes],
    *,
    progress: Progress | None = None,
    max_text: int = MAX_TEXT,
) -> dict[str, pd.DataFrame]:
    """Every run file in a zip or tar archive (tar.gz too; gzip members allowed).

    Parameters
    ----------
    source : path, bytes or binary file object
        The archive.
    progress : callable, optional
        Called as ``progress(done, total, label)`` after each run read (``total`` None for
        a tar, whose members are only known once read through).
    max_text : int
        Bytes of text (gunzipped) the runs may hold in all; past it the archive is
        refused, before the member that passes it is held whole.

    Returns
    -------
    dict of str to pandas.DataFrame
        As :func:`tiecore.read_runs` returns it: keyed by run tag, else file name.

    Raises
    ------
    InputError
        Not an archive, no run file in it, a damaged member, too much text, or a bad
        line in a run (named ``archive/member, line N``).

    Examples
    --------
    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w") as archive:
    ...     archive.writestr("a.txt", "1 Q0 d1 1 2.0 bm25\\n1 Q0 d2 2 1.0 bm25\\n")
    ...     archive.writestr("b.txt", "1 Q0 d1 1 1.0 dense\\n")
    >>> sorted(read_archive(buffer.getvalue()))
    ['bm25', 'dense']
    """
    label = _open(source)[0] if not isinstance(source, (str, os.PathLike)) else Path(source).name
    total = _count(source)
    return _read(archive_members(source, max_text=max_text), label, progress, total)


def read_folder(
    folder: str | os.PathLike, *, progress: Progress | None = None, max_text: int = MAX_TEXT
) -> dict[str, pd.DataFrame]:
    """Every run file under a local folder (sub-folders too, by path; gzip allowed).

    As :func:`read_archive`, for a folder: errors name ``folder/file, line N``.
    """
    root = Path(folder)
    files = [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    total = sum(1 for p in files if not _skipped(p.relative_to(root).as_posix())) or None
    return _read(folder_members(folder, max_text=max_text), str(folder), progress, total)

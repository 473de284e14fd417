"""A run's name (from its file name or tag) and runs read one ahead.

Shared by the normal path (:mod:`tiecore.io`, :mod:`tiecore.evaluation.parallel`,
:mod:`tiecore.evaluation.core`, which load pandas) and ``tiecore eval``'s paths without
pandas (:mod:`tiecore.evaluation.small`, :mod:`tiecore.evaluation.arrow`), so that all name, seed
and average a run the same way, bit for bit, and read runs ahead alike.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

Source = TypeVar("Source")
Run = TypeVar("Run")

#: Endings a run file's name loses (``.gz`` first: ``run.txt.gz`` -> ``run``); the
#: formats of :mod:`tiecore.io.sources` too.
_SUFFIXES = (".gz", ".txt", ".jsonl", ".ndjson", ".parquet")


def stem(display: str) -> str:
    """The file name without its directory, ``.gz``, ``.txt`` (and the other formats'
    endings), in any case; a name that is nothing but an ending stays whole.

    >>> stem("runs/bm25.TXT.gz"), stem("q/.gz"), stem("z.run")
    ('bm25', '.gz', 'z.run')
    """
    name = Path(display).name or display
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def dataset_stem(display: str) -> str:
    """A run's name from its file or dataset folder: :func:`stem`, less a hive
    partition's ``run=`` (``runs/run=bm25`` is run ``bm25``).

    >>> dataset_stem("runs/run=bm25"), dataset_stem("run=bm25.parquet"), dataset_stem("run=")
    ('bm25', 'bm25', 'run=')
    """
    name = stem(display)
    return name.removeprefix("run=") or name


#: The longest line :func:`first_tag` reads (a run's line is far shorter).
_LINE = 1 << 20


def first_tag(path: str | os.PathLike) -> str | None:
    """The tag (6th field) of a run file's first record, or None (no tag, unreadable).

    Reads only the first line that is not blank or a ``#`` comment, plain or gzip.
    """
    try:
        with open(path, "rb") as raw:
            magic = raw.read(2)
            raw.seek(0)
            handle = gzip.open(raw) if magic == b"\x1f\x8b" else raw
            for _ in range(1000):
                line = handle.readline(_LINE)  # at most a MiB: a binary file has no lines
                if not line or len(line) >= _LINE:
                    return None
                fields = line.removeprefix(b"\xef\xbb\xbf").split()
                if fields and not fields[0].startswith(b"#"):
                    return fields[5].decode() if len(fields) >= 6 else None
    except (OSError, EOFError, UnicodeDecodeError, ValueError, zlib.error):  # read again later
        return None
    return None


def file_names(displays: Sequence[str], tags: Sequence[list[str] | None]) -> list[str]:
    """Names of run files as :func:`tiecore.read_runs` gives them.

    The tag when the file holds exactly one tag that no other file holds; else the
    file name (:func:`stem`), with ``-2``, ``-3``... when a tag or an earlier file
    name has it. ``tags`` lists each file's tags (None: not known, as no tag).

    >>> file_names(["a/x.txt", "b/x.txt.gz", "y.txt", "z"], [["t"], ["t"], [], ["x-2"]])
    ['x', 'x-3', 'y', 'x-2']
    """
    single = [t[0] if t is not None and len(t) == 1 else None for t in tags]
    by_tag = [t if t is not None and single.count(t) == 1 else None for t in single]
    used = {t for t in by_tag if t is not None}
    names = []
    for display, tag in zip(displays, by_tag, strict=True):
        key = tag
        if key is None:
            base = key = stem(display)
            k = 1
            while key in used:
                k += 1
                key = f"{base}-{k}"
            used.add(key)
        names.append(key)
    return names


def read_ahead(read: Callable[[Source], Run], sources: Sequence[Source]) -> ReadAhead:
    """``read(source)`` of each source in order, the next one read in a thread while the
    caller works on this one: reading runs mostly outside the GIL, the two overlap.

    The first read starts at once, so that it overlaps whatever the caller does before
    it asks for that run (``tiecore eval`` reads the qrels meanwhile).  At most two
    runs are alive (the caller's and the next); an error comes when its source's turn
    comes.  Close it (``contextlib.closing``) to stop early: a read not started yet is
    then cancelled, one under way finished and dropped.

    >>> list(read_ahead(str.upper, ["a", "b", "c"]))
    ['A', 'B', 'C']
    """
    return ReadAhead(read, sources)


class ReadAhead(Iterator[Run]):
    """The iterator of :func:`read_ahead`: one reading thread, one read ahead."""

    def __init__(self, read: Callable[[Source], Run], sources: Sequence[Source]) -> None:
        from concurrent.futures import ThreadPoolExecutor  # lazy: loads logging, ~4 ms a start

        self._read, self._sources, self._next = read, list(sources), 0
        self._pool = ThreadPoolExecutor(1) if self._sources else None
        self._ahead = self._submit()

    def _submit(self):
        if self._pool is None or self._next >= len(self._sources):
            return None
        self._next += 1
        return self._pool.submit(self._read, self._sources[self._next - 1])

    def __next__(self) -> Run:
        done = self._ahead
        if done is None:
            self.close()
            raise StopIteration
        self._ahead = self._submit()
        return done.result()

    def close(self) -> None:
        """Cancel the read not started yet; wait for one under way."""
        self._ahead = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

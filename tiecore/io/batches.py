"""A big run file read in batches of whole queries, the next batch parsed in a thread.

``tiecore eval`` evaluates a big run batch by batch (:mod:`tiecore.evaluation.arrow`)
instead of reading it whole: memory holds a few batches and the qrels, not the run,
and parsing overlaps evaluating (pyarrow's parser and numpy's loops release the GIL).

The file (plain, or gzip inflated in the same thread) is cut into texts of about
:func:`batch_bytes` bytes at line ends, each
parsed by the fast path (:func:`tiecore.io.fastpath.fast_table`, with its rewrite of
runs of whitespace); the rows of the last query of a text wait for the next one, so
that a batch holds whole queries, and each batch is checked by the rules of
:func:`tiecore.io.trec.read_run_columns` (finite scores, each pair once). Whatever
only the whole read can settle raises :class:`NotBatched`, after which the caller
reads the file whole (its errors name their lines): a line the fast path does not
read, a bad value, a duplicate, lines with another number of fields than the first,
or a query whose rows are not one stretch of the file (trec_eval takes queries in
any order: the file is then evaluated whole, not in batches).
"""

from __future__ import annotations

import os
import queue
import stat
import threading
import zlib
from collections.abc import Iterator
from typing import IO

import numpy as np
import pyarrow as pa

from tiecore.io import trec
from tiecore.io.arrays import Kernels, kernel, to_numpy
from tiecore.io.fastpath import Text, fast_table, gzip_size
from tiecore.io.text import BOM, GZIP_MAGIC, TEXT, Locator, NeedLines

__all__ = ["BATCH_ENV", "NotBatched", "batch_bytes", "batchable", "run_batches"]

#: Bytes of text per batch (8 MiB: about 200,000 rows; a few batches are alive at once).
#: On 7M rows (2 cores) 8 MiB took 3.3 s of CPU and 350 MB at the peak, 32 MiB 3.8 s and
#: 450-500 MB: a batch's arrays then stay below the mmap threshold that
#: :mod:`tiecore.io.allocators` sets (4 MiB), reused from batch to batch instead of
#: faulted in afresh (165,000 page faults against 350,000); 2 MiB spent more per batch.
_BATCH = 1 << 23
#: The environment variable that sets :func:`batch_bytes` (for tests: tiny batches).
BATCH_ENV = "TIECORE_BATCH_BYTES"
_RAW = 1 << 20  # bytes of a gzip file read at a time


class NotBatched(Exception):
    """The run file must be read whole (:mod:`tiecore.io.batches` says when)."""


def batch_bytes() -> int:
    """Bytes of text per batch: ``$TIECORE_BATCH_BYTES``, else 8 MiB."""
    return int(os.environ.get(BATCH_ENV, _BATCH))


def batchable(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular file of more than two batches of text (a gzip file
    by the size its trailer records), without a BOM: a smaller one is read whole (one
    batch would only add a thread)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return False
        with open(path, "rb") as handle:
            head = handle.read(3)
            size = gzip_size(handle, info.st_size) if head[:2] == GZIP_MAGIC else info.st_size
    except OSError:
        return False
    return size > 2 * batch_bytes() and head != BOM


def _texts(path: str, size: int) -> Iterator[bytearray]:
    """The file in texts of about ``size`` bytes, each ending at a ``\\n`` (the last one
    where the file ends): ``size`` bytes read in place, then the rest of their last line
    (a text is copied once, from the system's cache); a gzip file inflated."""
    with open(path, "rb") as handle:
        if handle.read(2) == GZIP_MAGIC:
            handle.seek(0)
            yield from _inflated(handle, size)
            return
        handle.seek(0)
        while True:
            text = bytearray(size)
            n = handle.readinto(text)
            if n < size:
                del text[n:]
            elif text[-1] != 10:
                text += handle.readline()
            if not text:
                return
            yield text
            del text


def _inflated(handle: IO[bytes], size: int) -> Iterator[bytearray]:
    """:func:`_texts` of a gzip file, inflated ``size`` bytes at a time; one whole gzip
    member, else :class:`NotBatched` (the whole read names a cut or bad file, and reads
    one of several members)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # checks the CRC and the size
    text, target = bytearray(), size
    try:
        while True:
            while len(text) < target and not inflater.eof:
                raw = inflater.unconsumed_tail or handle.read(_RAW)
                if not raw:
                    raise NotBatched  # cut short
                text += inflater.decompress(raw, target - len(text))
            if inflater.eof:
                if inflater.unused_data or handle.read(1):
                    raise NotBatched  # another member, or bytes after this one
                if text:
                    yield text
                return
            end = text.rfind(b"\n")
            if end < 0:  # a line longer than a batch
                target += size
                continue
            yield text[: end + 1]
            del text[: end + 1]
            target = size
    except zlib.error:
        raise NotBatched from None


def _is_text(data: bytes) -> bool:
    """No NUL byte, and UTF-8 (the texts end at line ends: no character is cut)."""
    if data.find(b"\x00") >= 0:
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _stretch_start(qid: pa.ChunkedArray) -> int:
    """The first row of the last stretch of equal qids."""
    same = to_numpy(kernel("equal", qid, qid[len(qid) - 1]))
    other = np.flatnonzero(~same)
    return int(other[-1]) + 1 if len(other) else 0


def _batches(path: str, size: int, tags: list[str]) -> Iterator[trec.RunColumns]:
    """The checked batches of whole queries (``tags`` gets the file's tags, in order of
    appearance, as the texts are read); :class:`NotBatched` as the module says."""
    where = os.fspath(path)
    n_fields = None
    waiting: list[dict[str, pa.ChunkedArray]] = []  # rows of the last query so far
    seen: list[pa.Array] = []  # the qids of the batches so far
    had: set[str] = set()  # the tags so far
    for data in _texts(where, size):
        if not _is_text(data) or (n_fields is None and data[:3] == BOM):
            raise NotBatched
        parsed = fast_table(Text(None, data, where), trec._RUN_TYPES, 5, last=5)
        del data
        if parsed is None:
            raise NotBatched
        fields, known, fields_here = trec.run_fields(*parsed)
        del parsed
        if n_fields is None:
            n_fields = fields_here
        if fields_here != n_fields or len(fields["qid"]) == 0:
            raise NotBatched
        if "tag" in fields:
            known = trec.distinct_tags(fields.pop("tag"))
        new = [tag for tag in known if tag not in had]  # (tags are few: one, or a handful)
        had.update(new)
        tags.extend(new)
        cut = _stretch_start(fields["qid"])
        if cut == 0:  # one query so far: it goes on in the next text
            waiting.append(fields)
            continue
        head = {key: column.slice(0, cut) for key, column in fields.items()}
        yield _checked([*waiting, head], where, seen)
        waiting = [{key: column.slice(cut) for key, column in fields.items()}]
    if waiting:
        yield _checked(waiting, where, seen)


def _checked(
    parts: list[dict[str, pa.ChunkedArray]], where: str, seen: list[pa.Array]
) -> trec.RunColumns:
    """One batch as :func:`tiecore.io.trec.read_run_columns` checks a run; its queries
    must be new (``seen``: the qids of the batches before, extended)."""
    fields = {
        key: pa.chunked_array(
            [chunk for part in parts for chunk in part[key].chunks],
            TEXT if key != "score" else pa.float64(),
        )
        for key in ("qid", "docno", "score")
    }
    try:
        run = trec._run_columns(fields, Locator(where, None), [], release=False)
    except NeedLines:
        raise NotBatched from None
    if seen:
        before = Kernels.SetLookupOptions(pa.concat_arrays(seen))
        if kernel("any", kernel("is_in", run.ids.qids, options=before)).as_py():
            raise NotBatched  # a query in two stretches of the file
    seen.append(run.ids.qids)
    return run


class RunBatches(Iterator[trec.RunColumns]):
    """:func:`run_batches`' iterator: a thread parses the next batch while the caller
    works on this one (at most one batch waits); errors come in turn."""

    _END = object()

    def __init__(self, path: str | os.PathLike, size: int | None = None) -> None:
        self.tags: list[str] = []
        self._queue: queue.Queue = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        size = batch_bytes() if size is None else size
        self._thread = threading.Thread(target=self._run, args=(os.fspath(path), size), daemon=True)
        self._thread.start()

    def _run(self, path: str, size: int) -> None:
        try:
            for batch in _batches(path, size, self.tags):
                if not self._put(batch):
                    return
                del batch
            self._put(self._END)
        except BaseException as error:  # handed to the caller
            self._put(error)

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __next__(self) -> trec.RunColumns:
        item = self._queue.get()
        if item is self._END:
            self._thread.join()
            raise StopIteration
        if isinstance(item, BaseException):
            self._thread.join()
            raise item
        return item

    def close(self) -> None:
        """Stop the thread (a batch under way is finished and dropped)."""
        self._stop.set()
        self._thread.join()


def run_batches(path: str | os.PathLike, size: int | None = None) -> RunBatches:
    """The run file ``path`` in checked batches of whole queries (:class:`RunColumns
    <tiecore.io.trec.RunColumns>`, each query in one batch), the next parsed while the
    caller works on this one; ``.tags`` holds the tags read so far. Raises
    :class:`NotBatched` (perhaps after some batches) when the file must be read whole;
    ``size`` is the bytes of text per batch (:func:`batch_bytes`). Close it
    (``contextlib.closing``) to stop early."""
    return RunBatches(path, size)

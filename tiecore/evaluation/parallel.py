"""Run by run: a plain loop that holds one run at a time, or tasks on a dask cluster.

Everything that evaluates many runs (:func:`tiecore.evaluate`,
:func:`tiecore.spread.evaluate_spread`, :func:`tiecore.compare.compare`) hands each
run to one function ``fn(name, run)`` through :func:`map_runs`:

* locally, a run given as a path (or Parquet) is read while the run before it is
  evaluated and dropped once ``fn`` is done with it, so memory is bounded by two runs,
  not by the collection;
* with ``threads=N`` (:func:`tiecore.compare.compare`'s heavy scoring), N threads
  each read a run and evaluate it, so that N runs are alive;
* with a ``dask.distributed`` client, each run is a task and its file is read
  by the worker; a run too big for one task is cut into query partitions
  (Parquet row groups, or slices of an in-memory frame) whose small per-query
  results are merged on the client.

Runs may be given as a DataFrame, a mapping of names to DataFrames or paths (or
:class:`tiecore.io.parquet_parts.ParquetRun`), or an iterable (a generator too) of
those or of ``(name, run)`` pairs.  Paths are named as :func:`tiecore.read_runs`
names them: by the run tag, or by the file name when a file has no single tag or
shares its tag with another file; the name is first guessed from the file's first
line and, in the rare case that reading every file proves the guess wrong, the
run is evaluated again under its right name (its seed depends on the name).
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tiecore.errors import InputError
from tiecore.io.fastpath import file_rows
from tiecore.io.files import file_names, first_tag, read_ahead
from tiecore.io.parquet_parts import ParquetRun
from tiecore.io.peers import peer_frame
from tiecore.io.runs import Run, run_name

#: ``progress(done, total, name)`` after each run; ``total`` is None for an iterator.
Progress = Callable[[int, "int | None", str], None]

#: Rows above which a run evaluated on a cluster is split into query partitions.
SPLIT_ROWS = 2_000_000

#: Tasks kept in flight per worker thread when the runs come from an iterator.
IN_FLIGHT = 2

#: Threads of the local loop for heavy per-run work (:func:`tiecore.compare.compare`):
#: the cores, at most 4 (each holds a run and its samples).
THREADS = min(4, os.cpu_count() or 1)


# ------------------------------------------------------------------------ items


@dataclass
class Item:
    """One run to evaluate: its name and where it comes from.

    ``source`` is a DataFrame, a path or a :class:`~tiecore.io.parquet_parts.ParquetRun`.
    ``file`` marks a path named after its tag (its name may change once every
    file has been read); ``display`` is the path, for error messages.
    """

    name: str
    source: object
    file: bool = False
    display: str = ""
    tags: list[str] | None = None  # filled once the file has been read
    peeked: list[str] | None = None  # the tag of its first line, the guess before reading


def _is_path(value: object) -> bool:
    return isinstance(value, str | os.PathLike)


def _is_parquet(value: object) -> bool:
    return isinstance(value, ParquetRun)


def run_items(runs: object) -> Iterator[Item] | list[Item]:
    """The runs as named :class:`Item` objects, in order (a list when ``runs`` is sized).

    Files are not read here: their names are guessed from their first line's tag.
    ranx and trectools runs are converted (:func:`tiecore.io.peers.peer_frame`).
    """
    runs = peer_frame(runs, "run")
    if isinstance(runs, pd.DataFrame):
        return [Item(run_name(runs), runs)]
    if _is_path(runs) or _is_parquet(runs):
        runs = [runs]
    if isinstance(runs, Mapping):
        items = [_pair(name, value) for name, value in runs.items()]
        _distinct_names(list(runs), items)
        return items
    if not isinstance(runs, Iterable):
        raise TypeError(f"runs must be a DataFrame, a mapping or an iterable, got {type(runs)}")
    items = _named(runs)
    return list(items) if isinstance(runs, Sequence) else items


def _distinct_names(keys: list, items: list[Item]) -> None:
    """Two keys that print alike (``1`` and ``"1"``) would give two runs one name."""
    first: dict[str, object] = {}
    for key, item in zip(keys, items, strict=True):
        if item.name in first:
            raise InputError(
                "runs",
                None,
                f"the keys {first[item.name]!r} and {key!r} both name a run {item.name!r}",
                "a distinct name for each run",
            )
        first[item.name] = key


def _named(entries: Iterable) -> Iterator[Item]:
    """Items of an iterable of frames, paths, Parquet runs or (name, run) pairs."""
    taken: set[str] = set()
    if isinstance(entries, Sequence):  # every file's first tag up front: right names at once
        entries = [_file_item(e) if _is_path(e) else e for e in entries]
        files = [e for e in entries if isinstance(e, Item)]
        for item, name in zip(files, _guess(files), strict=True):
            item.name = name
    seen: list[Item] = []
    for entry in entries:
        entry = peer_frame(entry, "run")
        if isinstance(entry, Item):
            item = entry
        elif isinstance(entry, tuple) and len(entry) == 2:
            item = _pair(*entry)
        elif isinstance(entry, pd.DataFrame):
            item = Item(_unique(run_name(entry), taken), entry)
        elif _is_parquet(entry) or _is_parquet_path(entry):
            run = _parquet(entry)
            item = Item(_unique(run.name, taken), run, display=run.path)
        elif _is_path(entry):  # from an iterator: guess from the files so far
            item = _file_item(entry)
            seen.append(item)
            item.name = _guess(seen)[-1]
        elif hasattr(entry, "read"):  # a file object: read now (it cannot be read twice)
            from tiecore.io import read_run  # lazy: the file readers (~8 ms), for file runs only

            frame = read_run(entry)
            item = Item(_unique(frame.name, taken), frame)
        else:
            raise TypeError(f"cannot evaluate a {type(entry).__name__} as a run")
        taken.add(item.name)
        yield item


def _pair(name: object, value: object) -> Item:
    """A run named by the caller: a frame, a run file or Parquet."""
    value = peer_frame(value, "run")  # ranx, trectools
    if _is_parquet_path(value) or _is_parquet(value):
        run = _parquet(value, str(name))
        return Item(str(name), run, display=run.path)
    return Item(str(name), value, display=os.fspath(value) if _is_path(value) else "")


def _is_parquet_path(value: object) -> bool:
    return _is_path(value) and (
        os.fspath(value).endswith(".parquet") or os.path.isdir(os.fspath(value))
    )


def _parquet(source: object, name: str | None = None) -> object:
    """A :class:`~tiecore.io.parquet_parts.ParquetRun`: ``source`` itself, or found at that path."""
    if _is_parquet(source):
        return source
    return ParquetRun.of(source, name)


def _file_item(path: str | os.PathLike) -> Item | object:
    """A run file, not read yet (a pipe such as ``<(zcat run.gz)`` is read now).

    A ``.parquet`` file or a directory is a :class:`~tiecore.io.parquet_parts.ParquetRun`.
    """
    if _is_parquet_path(path):
        return _parquet(path)
    display = os.fspath(path)
    if os.path.isfile(display) or not os.path.exists(display):
        return Item(display, display, file=True, display=display)
    from tiecore.io import read_run  # lazy: the file readers (~8 ms), for file runs only

    frame = read_run(display)
    return Item(display, frame, file=True, display=display, tags=frame.tags)


def _guess(files: list[Item]) -> list[str]:
    """Names from the tags read so far, or else from each file's first line."""
    for item in files:
        if item.tags is None and item.peeked is None:
            tag = first_tag(item.display)
            item.peeked = None if tag is None else [tag]
    tags = [item.tags if item.tags is not None else item.peeked for item in files]
    return file_names([item.display for item in files], tags)


def _unique(name: str, taken: set[str]) -> str:
    key, k = name, 1
    while key in taken:
        k += 1
        key = f"{name}-{k}"
    return key


def load(item: Item, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The run of ``item`` as a DataFrame: ``frame`` when it was read ahead, else read
    here when it is a file."""
    frame = _read(item.source) if frame is None else frame
    if _is_path(item.source):
        item.tags = Run.of(frame).tags
    return frame


def _read(source: object) -> pd.DataFrame:
    """The run at ``source``: a DataFrame as it is, a Parquet run or a file read (no
    warnings, no state: safe in the read-ahead thread)."""
    if isinstance(source, pd.DataFrame):
        return source
    if _is_parquet(source):
        return source.read()
    if _is_path(source):
        from tiecore.io import read_run  # lazy: the file readers (~8 ms), for file runs only

        return read_run(source)
    raise TypeError(f"cannot read a {type(source).__name__} as a run")


# -------------------------------------------------------------------- execution


@dataclass
class _Task:
    """A run, or one query partition of it, as sent to ``fn``."""

    index: int
    item: Item
    part: int = 0
    parts: int = 1
    source: object = None  # the partition's rows (a frame or a Parquet part)


@dataclass
class _Done:
    result: object
    tags: list[str] | None
    caught: list = field(default_factory=list)


def _call(
    fn: Callable,
    task: _Task,
    capture: bool,
    data: pd.DataFrame | None = None,
    settle: Callable[[], None] | None = None,
) -> _Done:
    """Read the run (or its partition) and apply ``fn``; keep warnings for the client.

    ``data`` is the run's (or the partition's) frame when the client sent it.
    """
    with warnings.catch_warnings(record=capture) as caught:
        if capture:
            warnings.simplefilter("always")
        result = _apply(fn, task, data, settle)
    kept = [(str(w.message), w.category) for w in caught or []]
    return _Done(result, task.item.tags, kept)


def _apply(
    fn: Callable,
    task: _Task,
    data: pd.DataFrame | None = None,
    settle: Callable[[], None] | None = None,
) -> object:
    """``fn`` of the task's run (or partition): ``data``, else read here; the file's
    name settled first (``settle``), so that ``fn`` sees it."""
    item = task.item
    if task.parts > 1:
        run = data if data is not None else task.source.read()
        run = Run.of(run, name=item.name, part=(task.part, task.parts))
    else:
        run = data if data is not None else load(item)
    if settle is not None:
        settle()
    return _named_errors(fn, item, run)


def _named_errors(fn: Callable, item: Item, run: pd.DataFrame) -> object:
    """``fn(name, run)``; an error about ``run NAME`` read from a file names the file too."""
    try:
        return fn(item.name, run)
    except InputError as error:
        if not item.display or error.source != f"run {item.name}":
            raise
        where = f"{item.display} (run {item.name})"
        raise type(error)(where, error.line, error.problem, error.expected) from None


def map_runs(
    fn: Callable[[str, pd.DataFrame], object],
    items: object,
    *,
    client: object = None,
    progress: Progress | None = None,
    merge: Callable[[str, list], object] | None = None,
    split_rows: int | None = None,
    threads: int = 1,
) -> list:
    """``[fn(name, run) for each run]`` in input order, locally or on a dask cluster.

    Parameters
    ----------
    fn : callable
        Called as ``fn(name, run)`` with ``run`` a DataFrame (columns ``qid, docno,
        score``); a run given as a path is read first, by the worker on a cluster.
        On a cluster ``fn`` is sent once to every worker, so it may carry the
        judgments.
    items : runs
        A DataFrame, a mapping of names to DataFrames or paths, or an iterable of
        frames, paths, :class:`~tiecore.io.parquet_parts.ParquetRun` or ``(name, run)``.
    client : dask.distributed.Client, optional
        Run the calls as tasks on this cluster; ``None`` is a plain loop that holds
        two runs in memory at a time (the next one is read meanwhile).
    progress : callable, optional
        ``progress(done, total, name)`` after each run.
    merge : callable, optional
        With a client: runs of more than ``split_rows`` rows (in-memory frames, or
        Parquet runs whose row groups are cut at query boundaries) are split into
        query partitions, ``fn`` sees each partition (a :class:`~tiecore.io.runs.Run`
        whose ``part == (i, n)``) and ``merge(name, results)`` combines the partitions' results.
    threads : int
        Without a client: evaluate up to this many runs at once, on threads (for an
        ``fn`` whose work is mostly numpy's, which releases the GIL); results are the
        same and come in order, warnings are held back until every run is done.

    Returns
    -------
    list
        One result per run, in the order of ``items``.

    Examples
    --------
    >>> runs = {"a": pd.DataFrame({"qid": ["1"], "docno": ["d"], "score": [1.0]})}
    >>> map_runs(lambda name, run: (name, len(run)), runs)
    [('a', 1)]
    """
    entries = run_items(items)
    split_rows = SPLIT_ROWS if split_rows is None else split_rows
    if client is not None and _declined(client, entries):
        client = None
    if client is None:
        done = _local(fn, entries, progress, threads=threads)
    else:
        done = _on_cluster(fn, entries, client, progress, merge, split_rows)
    done = _rename(fn, done, client, merge, split_rows)
    for _, outcome in done:  # warnings held back (workers', or files' of an iterator)
        for message, category in outcome.caught:
            warnings.warn(message, category, stacklevel=3)
    return [outcome.result for _, outcome in done]


def _declined(client: object, entries: object) -> bool:
    """Whether ``client`` (a one-off cluster not started yet,
    :class:`tiecore.distributed.OneOffClient`) would rather the runs be evaluated
    locally: too few rows to pay for its start.  Other clients never decline."""
    declines = getattr(type(client), "declines", None)
    if declines is None:
        return False
    rows = sum(_weight(_Task(0, item)) for item in entries) if isinstance(entries, list) else None
    return declines(client, rows)


def _local(
    fn, entries, progress, *, final: bool = False, threads: int = 1
) -> list[tuple[Item, _Done]]:
    """One run after the other; a file's name is settled as soon as it is read.

    From an iterator, a later file may still rename an earlier one (a shared tag):
    the warnings of files are then held back until every name is final.
    """
    sized = isinstance(entries, list)
    if threads > 1 and sized and len(entries) > 1 and not final:
        return _threaded(fn, entries, progress, threads)
    files = [item for item in entries if item.file] if sized and not final else None
    total = len(entries) if sized else None
    out = []
    with _read_ahead(entries if sized else []) as reads:
        for count, item in enumerate(entries, start=1):
            settle = _settler(item, files) if files else None
            task = _Task(count - 1, item)
            data = load(item, next(reads)) if sized and _on_disk(item) else None
            done = _call(fn, task, capture=item.file and not sized, data=data, settle=settle)
            del data  # before the next read is started: two runs in memory, not three
            out.append((item, done))
            if progress is not None:
                progress(count, total, item.name)
    return out


def _threaded(fn, entries: list[Item], progress, threads: int) -> list[tuple[Item, _Done]]:
    """:func:`_local` with ``fn`` on ``threads`` threads, each of which reads its run
    and evaluates it (pyarrow's parser and numpy release the GIL in most of that work):
    at most ``threads`` runs are alive, a thread starts on the next run as soon as it is
    done with one (whether or not the runs before are done), and results, errors and
    progress come in input order.  Warnings are held back and given in input order once
    every run is done, as on a cluster.  A file is named as soon as it is read, from the
    tags read so far; :func:`_rename` evaluates again any run whose name changes later."""
    files = [item for item in entries if item.file]
    out: list[tuple[Item, _Done]] = []
    with ThreadPoolExecutor(threads) as pool, _held_warnings():
        futures = [pool.submit(_held_call, fn, item, files) for item in entries]
        try:
            for item, future in zip(entries, futures, strict=True):
                out.append((item, future.result()))
                if progress is not None:
                    progress(len(out), len(entries), item.name)
        except BaseException:  # the first error in input order: nothing else starts
            for future in futures:
                future.cancel()
            raise
    return out


#: The warnings of the run this thread evaluates (:func:`_threaded`).
_held = threading.local()


@contextlib.contextmanager
def _held_warnings() -> Iterator[None]:
    """While open, a warning raised in :func:`_held_call` is kept in its run's list
    instead of shown (``warnings.catch_warnings`` is not thread-safe before Python 3.14,
    so one hook serves every thread); elsewhere it is shown as usual."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # each run's own, as a worker keeps them
        show = warnings.showwarning

        def hold(message, category, filename, lineno, file=None, line=None) -> None:
            caught = getattr(_held, "caught", None)
            if caught is None:
                show(message, category, filename, lineno, file, line)
            else:
                caught.append((str(message), category))

        warnings.showwarning = hold
        yield


def _held_call(fn: Callable, item: Item, files: list[Item]) -> _Done:
    """Read ``item``'s run and apply ``fn`` in a thread of :func:`_threaded`, its
    warnings kept."""
    _held.caught = caught = []
    try:
        result = _apply(fn, _Task(0, item), settle=_settler(item, files))
    finally:
        _held.caught = None
    return _Done(result, item.tags, caught)


def _read_ahead(items: list[Item]) -> contextlib.closing[Iterator[pd.DataFrame]]:
    """The runs of the ``items`` on disk (files, Parquet), in order, each read while the
    one before it is evaluated (:func:`tiecore.io.files.read_ahead`)."""
    return contextlib.closing(read_ahead(_read, [i.source for i in items if _on_disk(i)]))


def _on_disk(item: Item) -> bool:
    """Whether ``item``'s run must be read (a file or Parquet, not a frame in memory)."""
    return not isinstance(item.source, pd.DataFrame)


def _settler(item: Item, files: list[Item]) -> Callable[[], None] | None:
    """Once ``item`` is read: if its tags are not what its first line said, rename it."""
    if not item.file:
        return None

    def settle() -> None:
        if item.tags != item.peeked:
            tags = [f.tags if f.tags is not None else f.peeked for f in files]
            item.name = file_names([f.display for f in files], tags)[files.index(item)]

    return settle


def _rename(
    fn, done: list[tuple[Item, _Done]], client, merge, split_rows
) -> list[tuple[Item, _Done]]:
    """Put every file under its :func:`tiecore.read_runs` name; evaluate renamed ones again."""
    files = [(i, item) for i, (item, _) in enumerate(done) if item.file]
    if files:
        names = file_names([item.display for _, item in files], [done[i][1].tags for i, _ in files])
        again = [
            (i, item) for (i, item), name in zip(files, names, strict=True) if name != item.name
        ]
        for (_, item), name in zip(files, names, strict=True):
            item.name = name
        if again:
            redo = [item for _, item in again]
            if client is None:
                fresh = _local(fn, redo, None, final=True)
            else:
                fresh = _on_cluster(fn, redo, client, None, merge, split_rows)
            for (i, _), pair in zip(again, fresh, strict=True):
                done[i] = pair
    return done


def _on_cluster(fn, entries, client, progress, merge, split_rows) -> list[tuple[Item, _Done]]:
    """Submit one task per run (or per query partition); results back in input order.

    Frames are scattered and results gathered in batches (one round trip each, not
    one per run); from an iterator, at most :data:`IN_FLIGHT` tasks per worker thread wait.
    """
    from distributed import as_completed

    total = len(entries) if isinstance(entries, list) else None
    remote_fn = client.scatter(fn, broadcast=True, hash=False)
    workers = max(sum(client.nthreads().values()), 1)  # task slots: threads of all workers
    limit = None if total is not None else IN_FLIGHT * workers
    pending = as_completed()
    parts: dict[int, dict[int, _Done]] = {}
    items: dict[int, Item] = {}
    counts: dict[int, int] = {}
    finished: dict[int, _Done] = {}
    done_runs = 0

    def collect(futures: list) -> None:
        nonlocal done_runs
        for task, outcome in (pair for chunk in client.gather(futures) for pair in chunk):
            if isinstance(outcome.result, InputError):  # bad input: drop the others
                pending.clear()
                raise outcome.result
            parts.setdefault(task.index, {})[task.part] = outcome
            if len(parts[task.index]) < counts[task.index]:
                continue
            got = parts.pop(task.index)
            pieces = [got[p] for p in range(counts[task.index])]
            finished[task.index] = _merged(task.item.name, pieces, merge)
            done_runs += 1
            if progress is not None:
                progress(done_runs, total, task.item.name)
        for future in futures:
            future.release()

    def submit(tasks: list[tuple[_Task, object]]) -> int:
        """Send ``tasks`` as chunks (several small runs per task); returns the chunk count."""
        frames = [data for _, data in tasks if isinstance(data, pd.DataFrame)]
        scattered = iter(client.scatter(frames, hash=False) if frames else [])
        sent = []
        for task, data in tasks:
            weight = _weight(task)
            if isinstance(data, pd.DataFrame):  # the frame travels on its own, not in the task
                data = next(scattered)
                task = _Task(
                    task.index,
                    Item(task.item.name, None, False, task.item.display, task.item.tags),
                    task.part,
                    task.parts,
                )
            else:  # a file or a Parquet part: the worker reads it
                data = None
            sent.append((task, data, weight))
        chunks = _chunks(largest_first(sent), workers)
        for chunk in chunks:
            tasks_, data_ = [t for t, _, _ in chunk], [d for _, d, _ in chunk]
            pending.add(client.submit(_remote, remote_fn, tasks_, data_, pure=False))
        return len(chunks)

    waiting: list[tuple[_Task, object]] = []
    in_flight = 0
    for index, item in enumerate(entries):
        items[index] = item
        tasks = _tasks(index, item, split_rows if merge is not None else None)
        counts[index] = len(tasks)
        waiting += [(task, task.source if task.parts > 1 else item.source) for task in tasks]
        if limit is None:
            continue
        in_flight += submit(waiting)
        waiting = []
        while in_flight >= limit:
            batch = next(pending.batches())
            collect(batch)
            in_flight -= len(batch)
    submit(waiting)
    for batch in pending.batches():
        collect(batch)
    out = []
    for index in range(len(items)):
        outcome = finished[index]
        items[index].tags = outcome.tags
        out.append((items[index], outcome))
    return out


def _remote(fn: Callable, tasks: list[_Task], data: list) -> list[tuple[_Task, _Done]]:
    """A task's body on a worker: runs one after the other (scattered frames as values).

    Bad input ends the task with its :class:`~tiecore.errors.InputError` as the
    result, not raised: the client raises it, and the worker does not log it as a
    failed computation with a traceback.
    """
    out = []
    for task, frame in zip(tasks, data, strict=True):
        try:
            out.append((task, _call(fn, task, capture=True, data=frame)))
        except InputError as error:
            return [(task, _Done(error, None))]
    return out


#: A chunk of small runs sent as one task holds at most this much (rows, or file bytes / 40).
CHUNK_ROWS = 500_000


#: Runs of fewer rows are too small to order: they keep their order, after the others.
ORDERED_ROWS = 10_000


def largest_first(sent: list[tuple[_Task, object, int]]) -> list[tuple[_Task, object, int]]:
    """The tasks by weight, heaviest first (input order among equals), then the small
    ones (below :data:`ORDERED_ROWS` rows) in input order, to be chunked together.

    The cluster starts them in this order as workers free up (greedy list
    scheduling, largest first): what is left for the end are the small runs
    that fill the gaps, not a big run that keeps one worker busy while the
    others idle.  The results still come back in input order.
    """
    return sorted(sent, key=lambda entry: -entry[2] if entry[2] >= ORDERED_ROWS else 0)


def _chunks(sent: list[tuple[_Task, object, int]], workers: int) -> list[list]:
    """Consecutive whole runs grouped into tasks of decreasing size (guided scheduling).

    A task costs the scheduler and the network some milliseconds whatever its size;
    small runs sent one by one would spend more on that than on evaluating.  Each
    chunk takes about ``1 / (2 * workers)`` of the rows still to send (``workers``
    counts the cluster's threads; at least one run, at most :data:`CHUNK_ROWS` rows;
    a file's bytes / 40 count as its rows): the first tasks are big, the last ones
    single runs, so that the workers run out of work together (equal chunks leave
    one worker idle while another finishes its last one).  A query partition is a
    task of its own.
    """
    left = sum(weight for _, _, weight in sent)
    chunks: list[list] = []
    rows = goal = 0.0
    for task, data, weight in sent:
        if not chunks or task.parts > 1 or chunks[-1][0][0].parts > 1 or rows + weight > goal:
            chunks.append([])
            rows = 0
            goal = min(CHUNK_ROWS, left / (2 * workers))
        chunks[-1].append((task, data, weight))
        rows += weight
        left -= weight
    return chunks


def _weight(task: _Task) -> int:
    """About how many rows a task holds (without reading it)."""
    source = task.item.source
    if task.parts > 1:
        return CHUNK_ROWS
    if isinstance(source, pd.DataFrame):
        return len(source)
    if _is_parquet(source):
        return source.rows
    if _is_path(source):
        return file_rows(source, CHUNK_ROWS)
    return CHUNK_ROWS


def _merged(name: str, pieces: list[_Done], merge) -> _Done:
    if len(pieces) == 1:
        return pieces[0]
    caught = [c for piece in pieces for c in piece.caught]
    with warnings.catch_warnings(record=True) as extra:
        warnings.simplefilter("always")
        result = merge(name, [piece.result for piece in pieces])
    caught += [(str(w.message), w.category) for w in extra]
    return _Done(result, pieces[0].tags, list(dict.fromkeys(caught)))


def _tasks(index: int, item: Item, split_rows: int | None) -> list[_Task]:
    """The run whole, or its query partitions when it is big and can be split."""
    source = item.source
    if split_rows is not None and _is_parquet(source) and len(source.parts) > 1:
        pieces = source.partitions(split_rows)
        if len(pieces) > 1:
            return [_Task(index, item, p, len(pieces), piece) for p, piece in enumerate(pieces)]
    if split_rows is not None and isinstance(source, pd.DataFrame) and len(source) > split_rows:
        pieces = split_by_query(source, -(-len(source) // split_rows))
        if len(pieces) > 1:
            return [_Task(index, item, p, len(pieces), piece) for p, piece in enumerate(pieces)]
    return [_Task(index, item)]


def split_by_query(run: pd.DataFrame, parts: int) -> list[pd.DataFrame]:
    """``run``'s rows in ``parts`` frames, each query whole, rows in their original order.

    Queries are dealt out in order of first appearance so that the parts hold
    about the same number of rows.  Each part keeps the run's row labels, so that
    an error names the row of the whole run.
    """
    codes, _ = pd.factorize(run["qid"], sort=False)
    sizes = np.bincount(codes)
    before = np.cumsum(sizes) - sizes
    _, part = np.unique((before * parts // max(len(run), 1))[codes], return_inverse=True)
    return [run.iloc[np.flatnonzero(part == p)] for p in range(part.max() + 1)]

"""Scale-out: runs stored as Parquet, and a dask.distributed client for ``evaluate``.

:func:`tiecore.evaluate`, :func:`tiecore.spread.evaluate_spread` and
:func:`tiecore.compare.compare` take ``client=``: each run becomes a task whose
worker reads the run itself, and a big run is cut into query partitions whose
per-query values are merged on the client.  The values are identical to the
local ones, bit for bit: every number a query gets depends on that query's rows,
and sampled draws on the run, the query and the rank (:mod:`tiecore.engine.seeding`).

Parquet runs (columns ``qid, docno, score``) let the workers read their own
partitions: :func:`write_parquet_runs` sorts each run by qid (keeping the file
order inside a query) and cuts its row groups at query boundaries;
:func:`read_parquet_runs` finds, from the row groups' qid statistics, where a run
may be cut, without reading any rows.

Examples
--------
>>> import tempfile
>>> run = pd.DataFrame({"qid": ["2", "1", "1"], "docno": ["a", "b", "c"], "score": [1.0, 2, 2]})
>>> with tempfile.TemporaryDirectory() as folder:
...     _ = write_parquet_runs({"bm25": run}, folder, row_group_rows=1)
...     runs = read_parquet_runs(folder)
...     (list(runs), len(runs["bm25"].parts), runs["bm25"].read()["qid"].tolist())
(['bm25'], 2, ['1', '1', '2'])
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tiecore.errors import InputError
from tiecore.io.files import dataset_stem
from tiecore.options import DASK_SPEC, POSITIVE, validate_params

#: Columns of a Parquet run.
COLUMNS = ("qid", "docno", "score")


@dataclass(frozen=True)
class ParquetPart:
    """Row groups of one run that hold whole queries: ``((file, (group, ...)), ...)``.

    ``first`` is the run's row number of the part's first row (the rows' index
    starts there, so that an error names the row of the whole run).
    """

    pieces: tuple[tuple[str, tuple[int, ...]], ...]
    rows: int
    first: int = 0

    def read(self) -> pd.DataFrame:
        """The rows, columns ``qid, docno, score``, in stored order."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables = []
        for path, groups in self.pieces:
            try:
                table = pq.ParquetFile(path).read_row_groups(list(groups), columns=list(COLUMNS))
            except (OSError, pa.ArrowException) as error:
                raise InputError(path, None, f"cannot read Parquet ({error})") from None
            tables.append(table)
        table = pa.concat_tables(tables) if len(tables) != 1 else tables[0]
        frame = table.to_pandas()
        if self.first:
            frame.index = pd.RangeIndex(self.first, self.first + len(frame))
        return frame


@dataclass(frozen=True)
class ParquetRun:
    """One run stored as Parquet: its name and its smallest query-aligned parts.

    Consecutive row groups are one part unless the qid statistics prove that no
    query spans the cut between them (all qids before it sort below all after).
    ``path`` is the file or directory it was found at (for error messages).
    """

    name: str
    parts: tuple[ParquetPart, ...]
    path: str = ""

    @property
    def rows(self) -> int:
        return sum(part.rows for part in self.parts)

    def read(self) -> pd.DataFrame:
        """The whole run as a DataFrame (``attrs["name"]`` set)."""
        frames = [part.read() for part in self.parts]
        frame = pd.concat(frames, ignore_index=True) if len(frames) != 1 else frames[0]
        frame.attrs.update(name=self.name, source=self.parts[0].pieces[0][0])
        return frame

    def partitions(self, rows: int) -> list[ParquetPart]:
        """Consecutive parts grouped into partitions of about ``rows`` rows each."""
        sizes = np.array([part.rows for part in self.parts])
        count = max(1, min(len(sizes), round(sizes.sum() / max(rows, 1))))
        before = np.cumsum(sizes) - sizes
        label = np.minimum(before * count // max(sizes.sum(), 1), count - 1)
        out = []
        for value in np.unique(label):
            chosen = [self.parts[i] for i in np.flatnonzero(label == value)]
            pieces = _join([piece for part in chosen for piece in part.pieces])
            rows = sum(part.rows for part in chosen)
            out.append(ParquetPart(pieces, rows, chosen[0].first))
        return out

    @classmethod
    def of(cls, path: str | os.PathLike, name: str | None = None) -> ParquetRun:
        """A run from one Parquet file or a directory of them (read in name order)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(path)
        files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
        if not files:
            raise InputError(str(path), None, "no Parquet files", "*.parquet files")
        groups = []  # (file, group, rows, min qid, max qid)
        for file in files:
            try:
                meta = pq.ParquetFile(file).metadata
            except (OSError, pa.ArrowException) as error:
                raise InputError(str(file), None, f"cannot read Parquet ({error})") from None
            names = meta.schema.names
            missing = [c for c in COLUMNS if c not in names]
            if missing:
                raise InputError(str(file), None, f"missing columns {missing}", "qid, docno, score")
            column = names.index("qid")
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                stats = group.column(column).statistics
                bounds = (stats.min, stats.max) if stats is not None and stats.has_min_max else None
                groups.append((str(file), g, group.num_rows, bounds))
        if name is None:
            name = dataset_stem(str(path))
        return cls(name, _units(groups), str(path))


def _join(pieces: list[tuple[str, tuple[int, ...]]]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Adjacent pieces of one file as one piece."""
    out: list[tuple[str, tuple[int, ...]]] = []
    for path, groups in pieces:
        if out and out[-1][0] == path:
            out[-1] = (path, out[-1][1] + groups)
        else:
            out.append((path, groups))
    return tuple(out)


def _units(groups: list[tuple]) -> tuple[ParquetPart, ...]:
    """Row groups joined into parts, cut only where no query can span the cut.

    A cut after group ``k`` is safe when the largest qid up to ``k`` sorts below
    the smallest qid after it; without statistics for every group, no cut.
    """
    bounds = [entry[3] for entry in groups]
    cut_after = []
    if all(b is not None for b in bounds):
        highest = np.maximum.accumulate(np.array([b[1] for b in bounds], dtype=object))
        lowest = np.minimum.accumulate(np.array([b[0] for b in bounds], dtype=object)[::-1])[::-1]
        cut_after = [k for k in range(len(groups) - 1) if highest[k] < lowest[k + 1]]
    edges = [0, *(k + 1 for k in cut_after), len(groups)]
    before = np.cumsum([0, *(entry[2] for entry in groups)])
    return tuple(
        ParquetPart(
            _join([(e[0], (e[1],)) for e in groups[a:b]]),
            int(before[b] - before[a]),
            int(before[a]),
        )
        for a, b in itertools.pairwise(edges)
    )


def read_parquet_runs(path: str | os.PathLike) -> dict[str, ParquetRun]:
    """Parquet runs found at ``path``, by name, without reading their rows.

    Parameters
    ----------
    path : str or path
        A Parquet file (one run); or a directory holding one ``NAME.parquet`` file
        per run and/or one sub-directory of Parquet files per run (``NAME/`` or
        hive style ``run=NAME/``).  Columns ``qid, docno, score``; other columns
        are ignored.

    Returns
    -------
    dict of str to ParquetRun
        In file-name order; pass it (or its values) to :func:`tiecore.evaluate`.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), None, "no such file or directory", "Parquet runs")
    if path.is_file():
        run = ParquetRun.of(path)
        return {run.name: run}
    entries = sorted(
        p
        for p in path.iterdir()
        if (p.is_file() and p.suffix == ".parquet") or (p.is_dir() and any(p.glob("*.parquet")))
    )
    if not entries:
        raise InputError(str(path), None, "no Parquet runs", "NAME.parquet files or NAME/ folders")
    runs: dict[str, ParquetRun] = {}
    for entry in entries:
        run = ParquetRun.of(entry)
        if run.name in runs:
            raise InputError(str(entry), None, f"a second run named {run.name!r}", "unique names")
        runs[run.name] = run
    return runs


@validate_params({"row_group_rows": POSITIVE})
def write_parquet_runs(
    runs: Mapping[str, pd.DataFrame] | object,
    directory: str | os.PathLike,
    *,
    row_group_rows: int = 1_000_000,
) -> dict[str, Path]:
    """Write runs as ``DIRECTORY/NAME.parquet``, sorted by qid, row groups cut between queries.

    Inside a query the rows keep their order (the ``file_order`` tie-break stays
    the same).  ``runs`` is anything :func:`tiecore.evaluate` accepts (paths are
    read one at a time).  Returns the file of each run.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tiecore.evaluation.parallel import file_names, load, run_items

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    done = []  # (item, temporary file): names are final once every file has been read
    for index, item in enumerate(run_items(runs)):
        run = load(item)
        codes, qids = pd.factorize(run["qid"].astype(str), sort=True)
        order = np.argsort(codes, kind="stable")
        table = pa.table(
            {
                "qid": pa.array(np.asarray(run["qid"].astype(str))[order], pa.string()),
                "docno": pa.array(np.asarray(run["docno"].astype(str))[order], pa.string()),
                "score": pa.array(np.asarray(run["score"], dtype=np.float64)[order]),
            }
        )
        sizes = np.bincount(codes, minlength=len(qids))
        ends = np.cumsum(sizes)
        target = np.arange(row_group_rows, len(run), row_group_rows)
        cuts = np.unique(ends[np.minimum(np.searchsorted(ends, target), len(ends) - 1)])
        bounds = np.concatenate([[0], cuts[cuts < len(run)], [len(run)]])
        temporary = directory / f".tiecore-{os.getpid()}-{index}.parquet.part"
        with pq.ParquetWriter(temporary, table.schema) as writer:
            for start, stop in itertools.pairwise(bounds):
                writer.write_table(table.slice(start, stop - start), row_group_size=len(run) + 1)
        done.append((item, temporary))
        del run, table
    files = [item for item, _ in done if item.file]
    settled = file_names([f.display for f in files], [f.tags for f in files])
    for item, name in zip(files, settled, strict=True):
        item.name = name
    names = [item.name for item, _ in done]
    for name in names:
        if (
            not name
            or "/" in name
            or os.sep in name
            or name.startswith(".")
            or names.count(name) > 1
        ):
            for _, temporary in done:
                temporary.unlink(missing_ok=True)
            raise ValueError(f"run name {name!r} cannot be a file name of its own")
    written: dict[str, Path] = {}
    for (_, temporary), name in zip(done, names, strict=True):
        written[name] = directory / f"{name}.parquet"
        temporary.replace(written[name])
    return written


@contextlib.contextmanager
@validate_params({"spec": DASK_SPEC})
def connect(spec: str | None) -> Iterator[object]:
    """A dask client for ``spec``: ``None`` (none), ``local:N`` or a scheduler address.

    ``local:N`` starts a ``LocalCluster`` of N single-threaded worker processes for
    the duration of the block; any other string is the address of a running
    scheduler (``tcp://host:8786``).
    """
    if spec is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            'dask is not installed: pip install "dask[distributed]" (or, installing tiecore, '
            'pip install "tiecore[dask]"; from a checkout, pip install -e ".[dask]")'
        ) from None
    if spec.startswith("local:"):
        count = spec.partition(":")[2]
        with local_cluster(int(count)) as cluster, Client(cluster) as client:
            try:
                yield client
            except BaseException:  # closing cancels running tasks: not news for the user
                with contextlib.suppress(Exception):
                    client.run(_quiet)
                raise
    else:
        with Client(spec) as client:
            yield client


def _quiet() -> None:
    """On a worker: log only dask's errors (not the warnings of cancelled tasks)."""
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)


def local_cluster(workers: int, **options: object) -> object:
    """A ``LocalCluster`` of ``workers`` single-threaded processes, as ``local:N`` starts it.

    One thread per process, and dask's ``OMP_NUM_THREADS=1`` (pyarrow follows it):
    on N cores, N workers do not oversubscribe them.  Three dask defaults are
    changed, each of which costs the workers CPU time that the evaluation needs:

    * ``MALLOC_TRIM_THRESHOLD_=65536`` is left unset: setting it freezes glibc's
      mmap threshold at 128 KiB, so that every array above that size is a fresh
      ``mmap`` whose pages fault in again (8x the page faults, 1.6x the CPU time
      of evaluating the same runs in a plain process);
    * the statistical profiler of the dashboard (a stack sample every 10 ms) is off;
    * the event-loop health check ticks every second, not every 20 ms, and the
      dashboard's system monitor every 2 s: idle, the scheduler and the workers
      then use a tenth of the CPU time they otherwise do.

    ``options`` go to ``LocalCluster`` (``memory_limit=`` for instance).
    """
    import dask
    from distributed import LocalCluster

    with dask.config.set(LOCAL_CONFIG):
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            **options,
        )


#: Dask settings of :func:`local_cluster` (see there why).
LOCAL_CONFIG = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}

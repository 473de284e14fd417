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
from pathlib import Path

import numpy as np
import pandas as pd

from tiecore.options import DASK_SPEC, POSITIVE, validate_params


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

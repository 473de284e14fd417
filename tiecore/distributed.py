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
>>> import pandas as pd
>>> from tiecore.distributed import read_parquet_runs
>>> run = pd.DataFrame({"qid": ["2", "1", "1"], "docno": ["a", "b", "c"], "score": [1.0, 2, 2]})
>>> with tempfile.TemporaryDirectory() as folder:
...     _ = write_parquet_runs({"bm25": run}, folder, row_group_rows=1)
...     runs = read_parquet_runs(folder)
...     (list(runs), len(runs["bm25"].parts), runs["bm25"].read()["qid"].tolist())
(['bm25'], 2, ['1', '1', '2'])
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import itertools
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tiecore.errors import InputError
from tiecore.io import allocators
from tiecore.options import DASK_SPEC, POSITIVE, validate_params

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client, LocalCluster

    from tiecore.io.parquet_parts import ParquetRun

__all__ = [
    "LOCAL_CONFIG",
    "OneOffClient",
    "connect",
    "dask_setup",
    "local_cluster",
    "local_declines",
    "pays_off",
    "read_parquet_runs",
    "warm_up",
    "write_parquet_runs",
]


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
    import numpy as np  # lazy: numpy (~0.1 s): this module loads none (local_declines)
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tiecore.evaluation.parallel import file_names, load, run_items  # lazy: pandas

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


def read_parquet_runs(path: str | os.PathLike) -> dict[str, ParquetRun]:
    """Parquet runs found at ``path`` (a file, or a directory of runs), by name, without
    reading their rows: :func:`tiecore.io.parquet_parts.read_parquet_runs`, which says
    what a directory may hold; pass the result (or its values) to :func:`tiecore.evaluate`.
    """
    from tiecore.io import parquet_parts  # lazy: pandas (~0.5 s), local_declines loads none

    return parquet_parts.read_parquet_runs(path)


def require_dask() -> None:
    """ImportError, with the line that installs it, when dask.distributed is missing
    (found without importing it)."""
    if importlib.util.find_spec("distributed") is None:
        raise ImportError(
            'dask is not installed: pip install "dask[distributed]" (or, installing tiecore, '
            'pip install "tiecore[dask]"; from a checkout, pip install -e ".[dask]")'
        )


@contextlib.contextmanager
@validate_params({"spec": DASK_SPEC})
def connect(spec: str | None) -> Iterator[object]:
    """A dask client for ``spec``: ``None`` (none), ``local:N`` or a scheduler address.

    ``local:N`` is a :class:`OneOffClient`: a ``LocalCluster`` of N single-threaded
    worker processes (:func:`local_cluster`), started at its first use and closed
    with the block; a collection too small for the cluster to pay off is
    evaluated locally instead, without starting it (:func:`pays_off`).  Any
    other string is the address of a running scheduler (``tcp://host:8786``),
    whose workers (those that join later too) import tiecore once, when the
    plugin :class:`~tiecore.evaluation.dask_plugin.WarmUp` (:func:`warm_up`) is
    registered, not in their first task.
    """
    if spec is None:
        yield None
        return
    require_dask()  # not imported yet: local:N may not need it
    if spec.startswith("local:"):
        with contextlib.ExitStack() as stack:
            client = OneOffClient(int(spec.partition(":")[2]), stack)
            try:
                yield client
            except BaseException:  # closing cancels running tasks: not news for the user
                if client.started:
                    with contextlib.suppress(Exception):
                        client.run(_quiet)
                raise
    else:
        from distributed import Client

        from tiecore.evaluation.dask_plugin import WarmUp  # lazy: dask, local:N may not need it

        try:
            remote = Client(spec, timeout=CONNECT_SECONDS)
        except (ValueError, OSError) as error:  # a bad scheme, no scheduler there
            raise InputError(
                "dask", None, f"{spec}: {error}", "a scheduler address (tcp://host:8786) or local:N"
            ) from None
        with remote:
            remote.register_plugin(WarmUp(warm_up), name=PLUGIN)
            yield remote


class OneOffClient:
    """The client of ``connect("local:N")``: the cluster starts when first used.

    Any attribute of a ``distributed.Client`` (``submit``, ``run``, ``scheduler``)
    starts :func:`local_cluster` and a client of it, once, and is that client's.
    :func:`tiecore.evaluation.parallel.map_runs` first asks :meth:`declines`:
    a collection that the cluster cannot evaluate faster than the local loop is
    then evaluated locally, and the cluster is never started.

    Why decline rather than only warn: measured on 2 cores, a one-off ``local:2``
    costs 2.5-5 s more than its evaluation (start 1-3 s, close 0.5-1.8 s, a first
    call 0.3 s slower than the next), while 2 workers save at most half of the
    local loop's 0.4 s per million rows; on 16 cores (issue 26) ``local:4`` and
    ``local:16`` took 8.2 and 9.7 s for what the local loop did in 5.5 s.  A
    note alone would leave the user to pay that; evaluated locally the values
    are the same, bit for bit, and the note says from how many rows the
    cluster would pay off (:func:`least_rows`).
    """

    def __init__(self, workers: int, stack: contextlib.ExitStack) -> None:
        self.workers = workers
        self._stack = stack
        self._client: Client | None = None

    @property
    def started(self) -> bool:
        """Whether the cluster is running (its cost paid)."""
        return self._client is not None

    def start(self) -> Client:
        """The ``distributed.Client`` of the cluster, started on the first call."""
        if self._client is None:
            from distributed import Client

            cluster = self._stack.enter_context(local_cluster(self.workers))
            self._client = self._stack.enter_context(Client(cluster))
        return self._client

    def declines(self, rows: int | None) -> bool:
        """True (and a note on stderr) when ``rows`` rows are better evaluated locally.

        Only before the cluster has started: once it runs, its cost is paid.
        ``rows`` is None when unknown (runs from an iterator): the cluster runs.
        """
        if self.started or rows is None:
            return False
        return _declined(self.workers, rows)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not the client's (copy, pickle): no start for those
            raise AttributeError(name)
        return getattr(self.start(), name)


#: Seconds of the local loop per run row (default measures, one core, files read).
ROW_SECONDS = 0.4e-6

#: Seconds that a one-off ``local:N`` costs whatever N: scheduler and client, the
#: first call's round trips, closing the cluster (2 cores: start 1.0-2.9 s, close 0.5-1.8 s).
START_SECONDS = 2.0

#: Seconds of each worker's start (its process, dask, pandas, pyarrow, tiecore), run
#: ``cores`` at a time.
WORKER_SECONDS = 0.5

#: Speed of one worker against the local loop (which reads the next run on a thread).
WORKER_SPEED = 0.75

#: Amdahl's serial fraction of an evaluation on a cluster (the client's scatter,
#: merge and tidying, task overhead, the last tasks' imbalance): with N workers the
#: cluster is ``WORKER_SPEED / (SERIAL + (1 - SERIAL) / N)`` times as fast as the
#: local loop, 1.4, 2.3, 3.5, 4.8 for N = 2, 4, 8, 16 (measured on 16 cores: 1.4,
#: 2.5, 3.7, 5.7).
SERIAL = 0.1


def local_declines(spec: str | None, files: Iterable[str | os.PathLike]) -> bool:
    """Whether ``--dask spec`` is a one-off ``local:N`` too costly for these run files
    (then a note on stderr says so): the caller evaluates them locally instead.

    For a command line to decide before it chooses its path (the local one may
    be faster than the one a client takes); imports neither dask nor pandas.
    The rows are the files' bytes / 40 (:func:`tiecore.io.fastpath.file_rows`).
    """
    if spec is None or not spec.startswith("local:"):
        return False
    require_dask()  # asked for: its absence is said, whether or not the cluster would pay
    from tiecore.io.fastpath import file_rows  # lazy: numpy (~0.13 s), a --dask run only

    return _declined(int(spec.partition(":")[2]), sum(file_rows(path) for path in files))


def _declined(workers: int, rows: int) -> bool:
    """:func:`pays_off`'s answer for ``rows`` on ``local:workers``, the note on stderr
    when it is no."""
    if pays_off(rows, workers):
        return False
    cores = _cores()
    least = least_rows(workers, cores)
    floor = "never" if least is None else f"below about {least:,.0f} rows"
    print(
        f"tiecore: note: local:{workers} on {cores} core(s) does not pay off {floor} "
        f"(starting it costs about {start_seconds(workers, cores):.1f}s); "
        f"{rows:,} rows evaluated locally",
        file=sys.stderr,
    )
    return True


def _cores() -> int:
    """The cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def start_seconds(workers: int, cores: int) -> float:
    """Seconds to start ``local:N``: the fixed part, and the workers' start, ``cores`` at a time."""
    return START_SECONDS + WORKER_SECONDS * workers / max(min(workers, cores), 1)


def least_rows(workers: int, cores: int) -> float | None:
    """The rows above which a one-off ``local:N`` beats the local loop; None: never.

    With ``m = min(N, cores)`` workers at work the cluster is
    ``v = WORKER_SPEED / (SERIAL + (1 - SERIAL) / m)`` times as fast as the local
    loop once started; with a start of ``s`` seconds (:func:`start_seconds`),
    ``r`` rows take ``s + r t / v`` seconds on it and ``r t`` locally (``t`` =
    :data:`ROW_SECONDS`): the cluster wins from ``r = s / (t (1 - 1 / v))`` rows,
    never when ``v <= 1``.
    """
    m = min(workers, cores)
    speed = WORKER_SPEED / (SERIAL + (1 - SERIAL) / max(m, 1))
    if speed <= 1:
        return None
    return start_seconds(workers, cores) / (ROW_SECONDS * (1 - 1 / speed))


def pays_off(rows: int, workers: int, cores: int | None = None) -> bool:
    """Whether a one-off ``local:N`` evaluates ``rows`` rows faster than the local loop.

    >>> pays_off(1_000_000, 4, cores=16), pays_off(50_000_000, 4, cores=16)
    (False, True)
    >>> pays_off(10**9, 2, cores=1)  # two workers on one core: never
    False
    """
    least = least_rows(workers, _cores() if cores is None else cores)
    return least is not None and rows > least


#: The worker plugin's name: registered once per cluster (it is idempotent).
PLUGIN = "tiecore-warm-up"
#: How long :func:`connect` waits for a scheduler address to answer (distributed's
#: default is 30 s).
CONNECT_SECONDS = 10

#: What a worker imports before its first task (:func:`warm_up`); the measure
#: families (every module of :mod:`tiecore.measures`) come too.
WORKER_MODULES = (
    "pyarrow.csv",
    "pyarrow.parquet",
    "pyarrow.pandas_compat",
    "tiecore.io.readers",
    "tiecore.io.trec",
    "tiecore.io.fastpath",
    "tiecore.io.parquet_parts",
    "tiecore.evaluation.core",
    "tiecore.evaluation.parallel",
)


def warm_up() -> list[str]:
    """Import what a task needs (:data:`WORKER_MODULES`, the measure families); returns
    the modules imported.

    A worker does it as it starts (:func:`dask_setup`, or the plugin that
    :func:`connect` registers on a running cluster), so that no task pays the
    imports (about a second of CPU for pandas, pyarrow and tiecore).
    """
    import pkgutil  # lazy: a worker's start only, not the command's

    import tiecore.measures as measures  # lazy: numpy (~0.13 s), a worker's start only

    families = [f"tiecore.measures.{m.name}" for m in pkgutil.iter_modules(measures.__path__)]
    names = [*WORKER_MODULES, *families]
    for name in names:
        importlib.import_module(name)
    return names


def dask_setup(worker: object = None) -> None:
    """dask's preload hook: :func:`local_cluster`'s workers run it as they start
    (``preload=["tiecore.distributed"]``), before they take any task.

    These processes are tiecore's own, started to evaluate runs: they take the
    command line's allocator settings (:func:`tiecore.io.allocators.tune`) too. The
    plugin that :func:`connect` registers on a user's cluster does not change its
    workers' allocators."""
    allocators.tune()
    warm_up()


def _quiet() -> None:
    """On a worker: log only dask's errors (not the warnings of cancelled tasks)."""
    import logging  # lazy: logging (~6 ms), on a worker only

    logging.getLogger("distributed").setLevel(logging.ERROR)


def local_cluster(workers: int, **options: object) -> LocalCluster:
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

    Each worker imports tiecore as it starts (``preload``: :func:`dask_setup`), so
    that its first task does not.

    ``options`` go to ``LocalCluster`` (``memory_limit=`` for instance; ``preload=[]``
    leaves the imports to the first task).
    """
    import dask
    from distributed import LocalCluster

    with dask.config.set(LOCAL_CONFIG):
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            **{"preload": ["tiecore.distributed"], **options},
        )


#: Dask settings of :func:`local_cluster` (see there why).
LOCAL_CONFIG = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}

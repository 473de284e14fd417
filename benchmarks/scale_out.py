"""Section ``dask``: ``evaluate(paths, client=)`` on local clusters (speed-up, the one-off
``--dask local:2``, a collection bigger than a worker's memory); their child processes.

(Not named ``dask.py``: a script run from this folder would then shadow the package.)
"""

from __future__ import annotations

import contextlib
import gc
import os
import tempfile
import time

from benchmarks.common import Result, _rss_mb, best_child, best_children, child_cmd, tiecore_cmd
from benchmarks.datasets import Dataset


def bench_dask(ds: Dataset, measures, repeat: int) -> list[Result]:
    """Speed-up of ``evaluate(paths, client=)`` on 2 workers (``--dask local:2``) over 1
    worker (``local:1``), and over the local loop.

    As a user with a running cluster sees it: the clusters are started and every
    path warmed up once before timing; the local loop and the clusters then take
    turns (so that all meet the same load of the machine), best of ``repeat`` each.

    The goal is the scaling from 1 core to 2: each worker pinned to a core of its own
    (all its threads; the client and scheduler are free).  Unpinned, one worker
    already uses part of the second core (a gzip run is inflated in a thread while
    it is parsed), so the two figures without pinning are information: the same
    clusters free to use both cores, and the local loop, which also reads the next
    run in a thread while it evaluates one.  The CPU seconds (the local process;
    the client, scheduler and workers) show the overhead of the cluster.
    """
    files = [str(ds.qrels), *map(str, ds.runs)]
    child = best_child(child_cmd("dask", ",".join(measures), str(repeat), *files), 1)
    rep = child.report()
    speedup = rep["one_pinned"] / rep["dask_pinned"]
    serial = 2 / speedup - 1  # Amdahl: S = 1 / (f + (1 - f) / N), N = 2
    common = (
        f"interleaved, best of {repeat}; load average {rep['load'][0]:.1f} -> "
        f"{rep['load'][1]:.1f}; cluster start {rep['start']:.1f}s not counted; identical "
        f"results: {rep['equal']}"
    )
    return [
        Result(
            ds.name,
            "dask: 1 worker on 1 core / 2 workers on 2 cores (speed-up)",
            rep["one_pinned"],
            rep["dask_pinned"],
            ">= 1.5",
            note=(
                f"evaluate(files, client=) on local_cluster(1) vs local_cluster(2), each "
                f"worker pinned to a core of its own ({rep['cores']} cores), {common}; CPU "
                f"{rep['one_pinned_cpu']:.1f}s vs {rep['dask_pinned_cpu']:.1f}s (workers + "
                f"client); serial fraction (Amdahl, f = 2/S - 1) {serial:.3f}; task stream of "
                f"2 workers: {rep['stream']['tasks']} tasks, workers idle "
                f"{rep['stream']['idle']:.1%} of the wall time, first task after "
                f"{rep['stream']['first']:.3f}s, last done {rep['stream']['after']:.3f}s before "
                f"the end"
            ),
            extra=rep | {"serial": serial},
        ),
        Result(
            ds.name,
            "dask: 1 worker / 2 workers, free to use every core",
            rep["one"],
            rep["dask"],
            "info",
            note=(
                f"the same clusters unpinned: one worker may use part of a second core (a "
                f"gzip run is inflated in a thread) (CPU {rep['one_cpu']:.1f}s in "
                f"{rep['one']:.2f}s; "
                f"2 workers: {rep['dask_cpu']:.1f}s in {rep['dask']:.2f}s)"
            ),
        ),
        Result(
            ds.name,
            "dask: local loop / 2 workers",
            rep["local"],
            rep["dask"],
            "info",
            note=(
                f"the local loop (reading ahead on a thread: CPU {rep['local_cpu']:.1f}s in "
                f"{rep['local']:.2f}s) vs local_cluster(2) unpinned (CPU {rep['dask_cpu']:.1f}s)"
            ),
        ),
        *bench_dask_one_off(ds, measures, repeat),
    ]


def bench_dask_one_off(ds: Dataset, measures, repeat: int) -> list[Result]:
    """``tiecore eval --dask local:2`` against the plain ``tiecore eval``, as a user runs
    them (fresh processes, interleaved, best of ``repeat``): once as it is (a collection
    too small for the cluster to pay off is evaluated locally, with a note), once with
    the cluster forced (``tiecore.distributed.ROW_SECONDS`` set so high that it always
    pays off): start, imports, evaluation and close of the cluster, all counted."""
    from tiecore.distributed import least_rows

    base = tiecore_cmd(ds, measures, "oblivious")
    commands = {
        "local": base,
        "asked": [*base, "--dask", "local:2"],
        "forced": [*child_cmd("dask_forced"), *base[4:], "--dask", "local:2"],
    }
    best = best_children(commands, repeat)
    least = least_rows(2, len(os.sched_getaffinity(0)))
    limit = "never" if least is None else f"{least:,.0f} rows"
    declined = "note:" in best["asked"].stderr
    return [
        Result(
            ds.name,
            "dask: tiecore eval / --dask local:2 one-off, cluster forced",
            best["local"].wall,
            best["forced"].wall,
            "info",
            note=(
                f"fresh processes, interleaved, best of {repeat}: start, worker imports "
                f"(preloaded), evaluation and close of local:2 all counted; {ds.rows:,} rows"
            ),
        ),
        Result(
            ds.name,
            "dask: tiecore eval / --dask local:2 one-off, as run",
            best["local"].wall,
            best["asked"].wall,
            ">= 0.8",
            note=(
                f"local:2 pays off from {limit} here (tiecore.distributed.least_rows): "
                f"{'declined, evaluated locally' if declined else 'ran on the cluster'}"
            ),
        ),
    ]


def bench_dask_memory(ds: Dataset, measures, limit_mb: int, split_rows: int) -> list[Result]:
    """A run bigger than a worker's memory limit, from Parquet, in query partitions."""
    files = [str(ds.qrels), *map(str, ds.runs)]
    args = [",".join(measures), str(limit_mb), str(split_rows), *files]
    child = best_child(child_cmd("dask_memory", *args), 1)
    rep = child.report()
    return [
        Result(
            ds.name,
            "dask: collection / worker memory limit",
            rep["loaded_mb"],
            rep["limit_mb"],
            "info",
            unit="MB",
            note=(
                f"{rep['rows']:,} rows as Parquet, {rep['partitions']} query partitions of "
                f"<= {split_rows:,} rows on 2 workers; worker peaks "
                f"{', '.join(f'{x:.0f}' for x in rep['worker_peaks_mb'])}MB, "
                f"failures: {rep['failures']}, identical to local: {rep['equal']}, "
                f"{rep['dask']:.1f}s on the cluster vs {rep['local']:.1f}s locally"
            ),
            extra=rep,
        )
    ]


def _worker_peak_mb() -> float:
    return _rss_mb("VmHWM")


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all its threads)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _pin(cores: list[int]) -> list[int]:
    """On a worker: every thread of the process (and so the threads it starts later)
    on ``cores`` only; returns the process's cores."""
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):  # a thread that has just ended
            os.sched_setaffinity(int(tid), cores)
    return sorted(os.sched_getaffinity(0))


def child_dask(names: list[str], repeat: int, qrels: str, runs: list[str]) -> dict:
    """Local loop, ``local:1`` and ``local:2`` on the same files: warmed up, interleaved,
    best of each; the clusters once free to use every core, once with each worker
    pinned to a core of its own (1 worker on core 0; 2 workers on cores 0 and 1)."""
    import pandas as pd
    from distributed import Client

    import tiecore
    from tiecore.distributed import local_cluster

    judged = tiecore.read_qrels(qrels)
    load = os.getloadavg()[0]
    everywhere = sorted(os.sched_getaffinity(0))
    start = time.perf_counter()
    with (
        local_cluster(2) as cluster,
        Client(cluster) as client,
        local_cluster(1) as single,
        Client(single) as one,
    ):
        started = time.perf_counter() - start
        expected = tiecore.evaluate(runs, judged, names)  # warm-ups: imports, first calls
        first = tiecore.evaluate(runs, judged, names, client=client)
        alone = tiecore.evaluate(runs, judged, names, client=one)
        workers = sorted(client.scheduler_info()["workers"])

        def pin(pinned: bool) -> None:
            for core, worker in enumerate(workers):
                cores = [everywhere[core % len(everywhere)]] if pinned else everywhere
                client.run(_pin, cores, workers=[worker])
            one.run(_pin, everywhere[:1] if pinned else everywhere)

        keys = ("local", "dask", "one", "dask_pinned", "one_pinned")
        times: dict[str, list[float]] = {key: [] for key in keys}
        cpus: dict[str, list[float]] = {key: [] for key in keys}
        for _ in range(max(repeat, 1)):
            for key in keys:
                on = {"local": None, "dask": client, "one": one}.get(key.partition("_")[0])
                pin(key.endswith("_pinned"))
                gc.collect()
                workers_cpu = sum(on.run(_cpu_seconds).values()) if on is not None else 0.0
                cpu, begin = _cpu_seconds(), time.perf_counter()
                tiecore.evaluate(runs, judged, names, client=on)
                times[key].append(time.perf_counter() - begin)
                spent = _cpu_seconds() - cpu
                if on is not None:
                    spent += sum(on.run(_cpu_seconds).values()) - workers_cpu
                cpus[key].append(spent)
        pin(False)
        stream = _task_stream(client, lambda: tiecore.evaluate(runs, judged, names, client=client))
    pd.testing.assert_frame_equal(first, expected, check_exact=True)
    pd.testing.assert_frame_equal(alone, expected, check_exact=True)
    report = {key: min(times[key]) for key in keys}
    report["stream"] = stream
    report |= {f"{key}_all": times[key] for key in keys}
    report |= {f"{key}_cpu": min(cpus[key]) for key in keys}
    report |= {
        "cores": len(everywhere),
        "load": [load, os.getloadavg()[0]],
        "start": started,
        "equal": True,
    }
    return report


def _task_stream(client, call) -> dict:
    """Where the wall time of ``call()`` on ``client`` goes, from dask's task stream: the
    tasks, the share of worker time idle, the wait before the first task starts (the
    client's scatter and submit) and after the last one ends (merging, tidying)."""
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        begin, start = time.time(), time.perf_counter()
        call()
        wall = time.perf_counter() - start
    spans = [
        (s["start"] - begin, s["stop"] - begin)
        for task in stream.data
        for s in task["startstops"]
        if s["action"] == "compute"
    ]
    busy = sum(stop - start for start, stop in spans)
    workers = len(client.scheduler_info()["workers"])
    return {
        "wall": wall,
        "tasks": len(spans),
        "idle": 1 - busy / (workers * wall),
        "first": min(start for start, _ in spans),
        "after": wall - max(stop for _, stop in spans),
    }


def child_dask_memory(
    names: list[str], limit_mb: int, split_rows: int, qrels: str, runs: list[str]
) -> dict:
    """The runs written as Parquet, evaluated on 2 workers of ``limit_mb`` each."""
    import pandas as pd
    from distributed import Client, LocalCluster

    import tiecore
    from tiecore.distributed import read_parquet_runs, write_parquet_runs
    from tiecore.evaluation import parallel as _parallel

    judged = tiecore.read_qrels(qrels)
    with tempfile.TemporaryDirectory() as folder:
        loaded = 0.0
        rows = 0
        for path in runs:  # one at a time: the collection is never whole in this process
            run = tiecore.read_run(path)
            loaded += run.memory_usage(deep=True, index=False).sum() / 2**20
            rows += len(run)
            write_parquet_runs([run], folder, row_group_rows=split_rows)
            del run
        stored = read_parquet_runs(folder)
        _parallel.SPLIT_ROWS = split_rows
        start = time.perf_counter()
        local = tiecore.evaluate(stored, judged, names)
        t_local = time.perf_counter() - start
        failures = []
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                memory_limit=f"{limit_mb}MiB",
                dashboard_address=":0",
            ) as cluster,
            Client(cluster) as client,
        ):
            start = time.perf_counter()
            try:
                remote = tiecore.evaluate(stored, judged, names, client=client)
            except Exception as error:  # KilledWorker and the like: the figure to report
                failures.append(f"{type(error).__name__}: {error}")
                remote = None
            t_dask = time.perf_counter() - start
            peaks = list(client.run(_worker_peak_mb).values())
        partitions = sum(len(r.partitions(split_rows)) for r in stored.values())
    equal = remote is not None
    if equal:
        try:
            pd.testing.assert_frame_equal(remote, local, check_exact=True)
        except AssertionError:
            equal = False
    return {
        "rows": rows,
        "loaded_mb": loaded,
        "limit_mb": limit_mb,
        "partitions": partitions,
        "worker_peaks_mb": peaks,
        "failures": failures or "none",
        "equal": equal,
        "local": t_local,
        "dask": t_dask,
    }

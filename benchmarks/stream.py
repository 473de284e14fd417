"""Section ``stream``: the peak memory of ``tiecore eval`` on every run against the largest
run alone, and against loading every run first (the ``eager`` child)."""

from __future__ import annotations

from benchmarks.common import Result, best_child, child_cmd, tiecore_cmd
from benchmarks.datasets import Dataset


def bench_stream(ds: Dataset, measures) -> list[Result]:
    """Peak memory of ``tiecore eval`` on every run vs on the largest run alone."""
    largest = max(ds.runs, key=lambda p: p.stat().st_size)
    one = Dataset(ds.name, ds.qrels, [largest], ds.sep)
    every = best_child(tiecore_cmd(ds, measures, "aware"), 1)
    alone = best_child(tiecore_cmd(one, measures, "aware"), 1)
    files = [str(ds.qrels), *map(str, ds.runs)]
    eager = best_child(child_cmd("eager", ",".join(measures), *files), 1)
    return [
        Result(
            ds.name,
            f"stream: peak RSS {len(ds.runs)} runs / largest run",
            every.max_rss_mb,
            alone.max_rss_mb,
            "<= 1.5",
            unit="MB",
            note=(
                f"tiecore eval --ties aware, runs read one at a time; loading all of them "
                f"first (read_runs + evaluate) peaks at {eager.max_rss_mb:.0f}MB"
            ),
        )
    ]


def child_eager(names: list[str], qrels: str, runs: list[str]) -> dict:
    """Every run loaded first (read_runs), then evaluated: what streaming avoids."""
    import tiecore

    loaded = tiecore.read_runs(runs)
    tiecore.evaluate(loaded, tiecore.read_qrels(qrels), names)
    return {}

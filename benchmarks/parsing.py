"""Section ``parse``: ``read_run`` against pandas and pyarrow.csv, and ``tiecore eval``
against the parse floor (a process that only reads the file); their child processes."""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import (
    Result,
    _reset_peak,
    _rss_mb,
    best_children,
    best_of,
    child_cmd,
    tiecore_cmd,
)
from benchmarks.datasets import Dataset


def bench_parse(ds: Dataset, repeat: int) -> list[Result]:
    """read_run vs pandas(pyarrow) and pyarrow.csv, each in its own process.

    The readers take turns, a process each per round (best of two reads in it),
    so that a change of the machine's speed hits them alike; the fastest round
    of each is kept.
    """
    files = [str(p) for p in ds.runs]
    commands = {
        k: child_cmd("parse", k, ds.sep, "2", *files) for k in ("tiecore", "pandas", "pyarrow")
    }
    rounds = max(2, (repeat + 1) // 2)
    found = best_children(commands, rounds, timed=lambda child: child.report()["time"])
    reports = {kind: child.report() for kind, child in found.items()}
    ours = reports["tiecore"]
    out = [
        Result(
            ds.name,
            f"read_run / {peer}",
            ours["time"],
            reports[peer]["time"],
            goal,
            note=label,
        )
        for peer, goal, label in (
            ("pyarrow", "info", "pyarrow.csv.read_csv, qid/docno/score typed, gzip by extension"),
            (
                "pandas",
                "<= 1.0",
                "pandas.read_csv(engine='pyarrow'), all 6 columns: usecols with names fails "
                "in pandas 3.1 ('fqid' not in include_columns)",
            ),
        )
    ]
    out.append(
        Result(
            ds.name,
            "read_run peak memory / column bytes",
            ours["peak_mb"],
            ours["column_mb"],
            "<= 3",
            unit="MB",
            note=(
                "peak RSS growth during the read (VmHWM after /proc/self/clear_refs) vs "
                "DataFrame.memory_usage(deep=True); pyarrow.csv peak "
                f"{reports['pyarrow']['peak_mb']:.0f}MB for {reports['pyarrow']['column_mb']:.0f}MB"
                f", pandas {reports['pandas']['peak_mb']:.0f}MB for "
                f"{reports['pandas']['column_mb']:.0f}MB"
            ),
            extra=reports,
        )
    )
    return out


def bench_floor(ds: Dataset, measures, peer_repeat: int) -> list[Result]:
    """``tiecore eval`` against the parse floor: a process that only reads the file.

    The floor child imports pyarrow and pyarrow.csv and nothing else, and reads the
    three columns any evaluation needs, typed (qid and docno strings, score float64):
    what no tool reading TREC text with pyarrow can beat. All three processes take
    turns, the fastest of ``peer_repeat`` (at least 2) kept.
    """
    files = [str(p) for p in ds.runs]
    commands = {
        "aware": tiecore_cmd(ds, measures, "aware"),
        "oblivious": tiecore_cmd(ds, measures, "oblivious"),
        "floor": child_cmd("floor", ds.sep, *files),
    }
    found = best_children(commands, max(peer_repeat, 2))
    aware, ours, floor = found["aware"], found["oblivious"], found["floor"]
    rep = floor.report()
    split = (
        f"floor process: import pyarrow+pyarrow.csv {rep['import']:.2f}s, read "
        f"{rep['read']:.2f}s ({rep['rows']:,} rows; numpy imported by pyarrow: "
        f"{rep['numpy']}), peak RSS {floor.max_rss_mb:.0f}MB, CPU {floor.cpu:.2f}s"
    )
    return [
        Result(
            ds.name,
            "floor: tiecore eval aware / pyarrow.csv read (e2e)",
            aware.wall,
            floor.wall,
            "<= 3",
            note=(
                f"{split}; tiecore aware ({len(measures)} measures) peak RSS "
                f"{aware.max_rss_mb:.0f}MB, CPU {aware.cpu:.2f}s; aware / the read alone "
                f"{aware.wall / rep['read']:.1f}"
            ),
            extra={"report": rep, "cpu": [aware.cpu, floor.cpu]},
        ),
        Result(
            ds.name,
            "  floor: tiecore eval oblivious / pyarrow.csv read",
            ours.wall,
            floor.wall,
            note=f"oblivious peak RSS {ours.max_rss_mb:.0f}MB, CPU {ours.cpu:.2f}s",
        ),
    ]


def child_parse(kind: str, sep: str, repeat: int, files: list[str]) -> dict:
    """Time one reader over ``files`` (best of ``repeat``); peak RSS growth of one read."""
    import gzip

    import pandas as pd
    import pyarrow as pa

    import tiecore

    names = ["qid", "q0", "docno", "rank", "score", "tag"]

    def read(path):
        if kind == "tiecore":
            return tiecore.read_run(path)
        if kind == "pandas":
            return pd.read_csv(
                path,
                engine="pyarrow",
                sep=sep,
                header=None,
                names=names,
                dtype={"qid": "str", "docno": "str", "score": "float64"},
            )
        return pyarrow_columns(path, sep)

    def size(obj) -> int:
        if isinstance(obj, pa.Table):
            return obj.nbytes
        return int(obj.memory_usage(deep=True, index=False).sum())

    with tempfile.TemporaryDirectory() as tiny_dir:  # warm up: lazy imports, thread pools
        tiny = Path(tiny_dir) / "tiny.trec"
        opener = gzip.open if files[0].endswith(".gz") else open
        with opener(files[0], "rt") as handle:
            tiny.write_text("".join(line for _, line in zip(range(50), handle, strict=False)))
        read(str(tiny))
    gc.collect()
    before = _rss_mb("VmRSS")
    _reset_peak()
    loaded = [read(f) for f in files]
    peak = _rss_mb("VmHWM") - before
    column = sum(size(x) for x in loaded) / 2**20
    rows = sum(len(x) for x in loaded)
    del loaded
    t, times = best_of(lambda: [read(f) for f in files], repeat)
    return {"time": t, "times": times, "peak_mb": peak, "column_mb": column, "rows": rows}


def pyarrow_columns(path: str, sep: str):
    """A run file's qid, docno and score read by ``pyarrow.csv`` alone, typed: the peer
    of ``read_run`` and the parse floor (imports pyarrow only, for the floor's child)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=["qid", "q0", "docno", "rank", "score", "tag"]),
        parse_options=pacsv.ParseOptions(delimiter=sep),
        convert_options=pacsv.ConvertOptions(
            column_types={"qid": pa.string(), "docno": pa.string(), "score": pa.float64()},
            include_columns=["qid", "docno", "score"],
        ),
    )


def child_floor(sep: str, runs: list[str]) -> dict:
    """The parse floor: pyarrow.csv reads each run's qid, docno and score, typed.

    Imports pyarrow and pyarrow.csv only (``numpy`` says whether pyarrow pulled it in)."""
    t0 = time.perf_counter()
    import pyarrow.csv  # noqa: F401  (its import timed apart from the reads)

    t1 = time.perf_counter()
    rows = 0
    for path in runs:
        table = pyarrow_columns(path, sep)
        rows += table.num_rows
        del table
    t2 = time.perf_counter()
    return {"import": t1 - t0, "read": t2 - t1, "rows": rows, "numpy": "numpy" in sys.modules}

"""Section ``startup``: a one-line ``tiecore eval`` and ``import tiecore.cli`` against the
peers' imports and the libraries tiecore needs, in fresh interpreters."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from benchmarks.common import Result, best_children, child_cmd, run_child


def bench_imports(repeat: int) -> list[Result]:
    """Start-up: ``import tiecore.cli`` vs the libraries it cannot do without."""
    floor = ["numpy", "pandas", "pyarrow", "pyarrow.compute", "pyarrow.csv"]
    found = best_children(
        {"ours": child_cmd("import", "tiecore.cli"), "base": child_cmd("import", *floor)}, repeat
    )
    ours, base = found["ours"], found["base"]
    return [
        Result(
            "-",
            "import tiecore.cli / numpy+pandas+pyarrow",
            ours.wall,
            base.wall,
            note=(
                "fresh interpreters; every end-to-end figure pays this once "
                f"(in-process import {ours.report()['import']:.2f}s vs "
                f"{base.report()['import']:.2f}s)"
            ),
        )
    ]


def bench_startup(repeat: int) -> list[Result]:
    """``tiecore eval`` on a one-line run vs ``python -c "import ir_measures, pytrec_eval"``.

    Fresh interpreters, best of ``repeat`` (hyperfine-like) after one warm-up round,
    interleaved so that a change of load hits all of them; the floor imports the
    libraries tiecore's data model needs.
    """
    commands = {
        "tiecore": [sys.executable, "-m", "tiecore", "eval", "QRELS", "RUN"],
        "ir_measures": [sys.executable, "-c", "import ir_measures, pytrec_eval"],
        "floor": [sys.executable, "-c", "import numpy, pandas, pyarrow.compute, pyarrow.csv"],
        "numpy": [sys.executable, "-c", "import numpy"],
    }
    times: dict[str, list[float]] = {k: [] for k in commands}
    with tempfile.TemporaryDirectory() as folder:
        run, qrels = Path(folder) / "one.run", Path(folder) / "one.qrels"
        run.write_text("301 Q0 doc1 1 2.5 one\n")
        qrels.write_text("301 0 doc1 1\n")
        commands["tiecore"][-2:] = [str(qrels), str(run)]
        for cmd in commands.values():  # warm-up, not timed: file cache, bytecode cache
            run_child(cmd)
        for _ in range(max(repeat, 1)):
            for key, cmd in commands.items():
                child = run_child(cmd)
                if child.returncode != 0:
                    raise RuntimeError(f"{cmd} failed: {child.stderr[-500:]}")
                times[key].append(child.wall)
    best = {k: min(v) for k, v in times.items()}
    return [
        Result(
            "-",
            "start-up: tiecore eval 1 line / import ir_measures",
            best["tiecore"],
            best["ir_measures"],
            "<= 1.5",
            note=(
                f"best of {repeat} fresh processes each; floor `import numpy, pandas, "
                f"pyarrow.compute, pyarrow.csv` {best['floor']:.3f}s "
                f"({best['floor'] / best['ir_measures']:.2f}x ir_measures), "
                f"`import numpy` {best['numpy']:.3f}s"
            ),
            extra=times,
        )
    ]


def import_profile(top: int = 14) -> str:
    """The slowest imports behind ``import tiecore.cli`` (``python -X importtime``)."""
    child = run_child([sys.executable, "-X", "importtime", "-c", "import tiecore.cli"])
    entries = []
    for line in child.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, own, cumulative, name = (x.strip() for x in line.replace(":", "|", 1).split("|"))
            entries.append((int(cumulative), int(own), name))
    wanted = [e for e in entries if "." not in e[2] or e[2].startswith(("tiecore", "scipy."))]
    wanted.sort(reverse=True)
    text = "\n".join(
        f"{c / 1e6:8.3f}s cumulative {o / 1e6:7.3f}s self  {n}" for c, o, n in wanted[:top]
    )
    print("\n=== profile: python -X importtime -c 'import tiecore.cli' ===")
    print(text)
    return text

"""What every benchmark shares: paths, measure names, timing, child processes, result lines.

Only the standard library is imported here (and in every module of the suite at module
level), so that a child process (:mod:`benchmarks.child`) pays for nothing but the tool
it times.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The shared data's root: ``$TIECORE_BENCH_DATA``, by default ``../shared/data`` beside
#: the repository (Robust03 in ``robust03/``).
DATA = Path(os.environ.get("TIECORE_BENCH_DATA") or REPO.parent / "shared" / "data")
ROBUST = DATA / "robust03"


#: The measures of every race: those ir_measures computes with pytrec_eval (trec_eval), the
#: provider it really uses for them, and ranx too. Not F1@10 (pytrec_eval has none) nor
#: RR@10 (ir_measures sends it to its slow pure-Python msmarco provider, with other ties).
RACE_MEASURES = (
    "P@10",
    "P@5",
    "R@100",
    "AP",
    "AP@100",
    "RR",
    "nDCG@10",
    "nDCG",
    "Rprec",
    "Bpref",
    "Success@10",
)


#: ranx's metric names for tiecore's families.
RANX_FAMILIES = {
    "P": "precision",
    "R": "recall",
    "F1": "f1",
    "AP": "map",
    "RR": "mrr",
    "nDCG": "ndcg",
    "Rprec": "r-precision",
    "Bpref": "bpref",
    "Success": "hit_rate",
}


#: The measures of the track lines: TREC-COVID's official ones (P@5, nDCG@10, MAP, bpref),
#: the 4 measures of issue 26's track rows.
TRACK_MEASURES = ("P@5", "nDCG@10", "AP", "Bpref")


#: pytrec_eval's (trec_eval's) names of tiecore's measures, for plain pytrec_eval.
PYTREC_NAMES = {"P@5": "P_5", "nDCG@10": "ndcg_cut_10", "AP": "map", "Bpref": "bpref"}


#: A child process's last stderr line: its peak resident memory (VmHWM) in MB.
HWM_MARK = "BENCH_VMHWM_MB"


#: Where every child keeps its bytecode (see :func:`run_child`).
PYCACHE = Path(tempfile.gettempdir()) / "tiecore-bench-pycache"


def ranx_name(measure: str) -> str:
    """``P@10`` -> ``precision@10``, ``AP`` -> ``map``, ``Success@10`` -> ``hit_rate@10``."""
    family, _, cutoff = measure.partition("@")
    return RANX_FAMILIES[family] + (f"@{cutoff}" if cutoff else "")


def ir_measures_name(measure: str) -> str:
    """tiecore and ir_measures share the names of the race measures."""
    return measure


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    """Minimum and all wall times (seconds) of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(max(repeat, 1)):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), times


@dataclass
class Child:
    """One finished child process: wall time, peak RSS, its output and its CPU time."""

    wall: float
    max_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    cpu: float = 0.0  # user + system seconds, its own threads and its waited-for children

    def report(self) -> dict:
        """The JSON object a ``--child`` process prints on its last stdout line."""
        for line in reversed(self.stdout.strip().splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        return {}


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> Child:
    """Run ``cmd`` from the repo root: its wall time and its own peak RSS.

    The peak is the ``VmHWM`` a child (:mod:`benchmarks.child`) prints on stderr as it exits
    (``ru_maxrss`` from ``os.wait4`` would include the forked parent's pages).
    """
    full_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    full_env.setdefault("PYTHONWARNINGS", "ignore")
    # Bytecode as an installed package has it, for every tool alike: compiled once into
    # this benchmark's own cache, then read. With PYTHONDONTWRITEBYTECODE (set in some
    # environments) every child would compile tiecore's modules from source again, while
    # the peers' come installed with their .pyc files.
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)
    full_env.setdefault("PYTHONPYCACHEPREFIX", str(PYCACHE))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        peak = usage.ru_maxrss / 1024
        for line in stderr.splitlines():
            if line.startswith(HWM_MARK):
                peak = float(line.split()[1])
        stdout = out.read().decode(errors="replace")
        cpu = usage.ru_utime + usage.ru_stime
        return Child(wall, peak, proc.returncode, stdout, stderr, cpu)


def best_child(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> Child:
    """The fastest of ``repeat`` runs of ``cmd``; raises with its stderr if it fails."""
    best = None
    for _ in range(max(repeat, 1)):
        child = run_child(cmd, env)
        if child.returncode != 0:
            tail = "\n".join(child.stderr.strip().splitlines()[-15:])
            raise RuntimeError(f"{' '.join(cmd[:6])} ... exited {child.returncode}:\n{tail}")
        if best is None or child.wall < best.wall:
            best = child
    return best


def best_children(
    commands: dict[str, list[str]],
    repeat: int,
    env: dict[str, str] | None = None,
    timed: Callable[[Child], float] = lambda child: child.wall,
) -> dict[str, Child]:
    """The fastest run of each command by ``timed`` (its wall time by default), the commands taken
    in turn ``repeat`` times.

    Interleaved (a, b, a, b ... rather than a, a, b, b), so that a change of the
    machine's load hits every command alike: the ratios of a shared machine stay fair.
    """
    best: dict[str, Child] = {}
    for _ in range(max(repeat, 1)):
        for key, cmd in commands.items():
            child = run_child(cmd, env)
            if child.returncode != 0:
                tail = "\n".join(child.stderr.strip().splitlines()[-15:])
                raise RuntimeError(f"{' '.join(cmd[:6])} ... exited {child.returncode}:\n{tail}")
            if key not in best or timed(child) < timed(best[key]):
                best[key] = child
    return best


@dataclass
class Result:
    """One line of the table: tiecore's figure, the peer's, their ratio and the goal."""

    dataset: str
    what: str
    tiecore: float | None
    peer: float | None
    goal: str = "info"  # "<= 1.1", "< 1", "info"
    unit: str = "s"
    note: str = ""
    ratio: float | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.ratio is None and self.tiecore is not None and self.peer:
            self.ratio = self.tiecore / self.peer

    @property
    def verdict(self) -> str:
        if self.ratio is None:
            return "n/a"
        if self.goal == "info":
            return "info"
        op, _, bound = self.goal.partition(" ")
        checks = {"<=": float.__le__, "<": float.__lt__, ">=": float.__ge__}
        return "pass" if checks[op](float(self.ratio), float(bound)) else "FAIL"


def print_table(results: list[Result]) -> None:
    """The compact table: what, tiecore, peer, ratio, goal, verdict."""

    def fmt(value: float | None, unit: str) -> str:
        if value is None:
            return "-"
        if unit == "s":
            return f"{value:.3f}s"
        if unit == "MB":
            return f"{value:.0f}MB"
        return f"{value:.4g}{unit}"

    header = ("dataset", "what", "tiecore", "peer", "ratio", "goal", "")
    rows = [
        (
            r.dataset,
            r.what,
            fmt(r.tiecore, r.unit),
            fmt(r.peer, r.unit),
            "-" if r.ratio is None else f"{r.ratio:.3f}",
            r.goal,
            r.verdict,
        )
        for r in results
    ]
    print_aligned(header, rows, left=2)
    notes = [f"  [{r.dataset}] {r.what}: {r.note}" for r in results if r.note]
    if notes:
        print("notes:")
        print("\n".join(notes))


def print_aligned(header: tuple, rows: list[tuple], left: int) -> None:
    """``rows`` under ``header`` in aligned columns: the first ``left`` to the left, the
    others (figures) to the right, a rule of dashes under the header."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = "  ".join(f"{{:{'<' if i < left else '>'}{w}}}" for i, w in enumerate(widths))
    print(line.format(*header))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line.format(*row))


def print_progress(section: list[Result]) -> None:
    for r in section:
        print(
            f"  {r.what}: {r.tiecore} vs {r.peer} -> "
            f"{'-' if r.ratio is None else f'{r.ratio:.3f}'} ({r.verdict})",
            flush=True,
        )


def child_cmd(kind: str, *args: str) -> list[str]:
    """The command of one measured job in a fresh interpreter (:mod:`benchmarks.child`)."""
    return [sys.executable, "-m", "benchmarks.child", kind, *args]


def tiecore_cmd(ds, measures, ties: str) -> list[str]:
    """``tiecore eval`` (the child ``cli``: the same as ``python -m tiecore eval``)."""
    cmd = ["eval", "--ties", ties, "--format", "json"]
    for m in measures:
        cmd += ["-m", m]
    return child_cmd("cli", *cmd, str(ds.qrels), *map(str, ds.runs))


def tiecore_values(child: Child) -> dict[str, dict[str, float]]:
    """``{run: {measure: mean}}`` from ``tiecore eval --format json`` (summary rows: no qid)."""
    out: dict[str, dict[str, float]] = {}
    for rec in json.loads(child.stdout):
        if rec.get("qid") in (None, "all"):
            out.setdefault(rec["run"], {})[rec["measure"]] = rec["value"]
    return out


def compare_values(ours, theirs, translate) -> dict[str, float]:
    """Largest |tiecore - peer| per measure over the runs (both list them in file order)."""
    diffs: dict[str, float] = {}
    for values, peer in zip(ours.values(), theirs.values(), strict=False):
        for m, v in values.items():
            name = translate(m)
            if name in peer:
                diffs[m] = max(diffs.get(m, 0.0), abs(v - peer[name]))
    return diffs


def _fmt_diffs(diffs: dict[str, float]) -> str:
    return ", ".join(f"{m} {d:.2g}" for m, d in diffs.items()) or "n/a"


def _rss_mb(key: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def commit() -> str:
    """The repository's short commit hash (``+`` if the work tree differs from it, stored
    results aside), or ``?``."""
    try:
        head = subprocess.run(
            ["git", "log", "-1", "--format=%h"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--", ".", ":!benchmarks/results"], cwd=REPO
        ).returncode
    except OSError:
        return "?"
    return (head or "?") + ("+" if dirty else "")

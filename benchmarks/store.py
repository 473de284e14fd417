"""Results stored per commit, and a commit compared with its base side by side.

Every ``python -m benchmarks run`` (and ``explorer``, ``app-memory``) adds its figures to
``benchmarks/results/<commit>.json`` (``$TIECORE_BENCH_RESULTS`` to store them elsewhere),
one file per commit, the figures of each mode (``full``, ``quick``, ``explorer``,
``app_memory``) under their own key, a later run of the same line replacing the earlier.
A work tree that differs from its commit stores under ``<commit>+.json`` (ignored by git:
only figures of a commit as it is are worth committing).  The files are small (one line
of text per figure: its two sides, their ratio, unit and goal, 4 significant digits) and
committed, so that a later session can compare against them::

    python -m benchmarks compare BASE [HEAD]    # every line of both, ratios side by side
    python -m benchmarks results                # the commits stored, their modes and lines

``BASE`` and ``HEAD`` are anything git names (a commit, a branch, ``HEAD~3``), or a stored
file's name (``abc1234+``) or path; a commit without figures of its own is read from its
nearest ancestor that has some (first parents, said so when printed).  ``HEAD`` is by
default the work tree's own figures (``<commit>+``) where there are some, else the commit's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

from benchmarks.common import REPO, Result, commit, print_aligned

RESULTS = Path(os.environ.get("TIECORE_BENCH_RESULTS") or REPO / "benchmarks" / "results")
#: How far back (first parents) a commit without stored figures looks for some.
ANCESTORS = 200


def _round(value: float | None) -> float | None:
    """4 significant digits: what a ratio of two timings on a shared machine can carry."""
    if value is None or value != value:  # None or NaN
        return None
    return float(f"{value:.4g}")


def line(
    dataset: str,
    what: str,
    tiecore: float | None,
    peer: float | None = None,
    *,
    ratio: float | None = None,
    unit: str = "s",
    goal: str = "info",
) -> dict:
    """One stored figure: its two sides, their ratio, unit and goal."""
    if ratio is None and tiecore is not None and peer:
        ratio = tiecore / peer
    return {
        "dataset": dataset,
        "what": what.strip(),
        "tiecore": _round(tiecore),
        "peer": _round(peer),
        "ratio": _round(ratio),
        "unit": unit.strip(),
        "goal": goal,
    }


def lines_of(results: list[Result]) -> list[dict]:
    """The stored form of :class:`benchmarks.common.Result` lines (notes and extras stay in
    ``--json``)."""
    return [
        line(r.dataset, r.what, r.tiecore, r.peer, ratio=r.ratio, unit=r.unit, goal=r.goal)
        for r in results
    ]


def meta(**more: object) -> dict:
    """What a stored run says about itself: when, where, under what load."""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": round(os.getloadavg()[0], 1),
        **more,
    }


def _key(record: dict) -> str:
    return f"{record['dataset']} | {record['what']}"


def _dump(data: dict) -> str:
    """JSON with one line per figure (small diffs, easy to read)."""
    out = ["{", f' "commit": {json.dumps(data["commit"])},', ' "modes": {']
    modes = list(data["modes"].items())
    for m, (mode, entry) in enumerate(modes):
        out.append(f"  {json.dumps(mode)}: {{")
        out.append('   "runs": [')
        runs = entry["runs"]
        out += [f"    {json.dumps(run)}" + ("," if i < len(runs) - 1 else "") for i, run in
                enumerate(runs)]  # fmt: skip
        out.append("   ],")
        out.append('   "lines": {')
        items = list(entry["lines"].items())
        for i, (key, record) in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            out.append(f"    {json.dumps(key)}: {json.dumps(record)}{comma}")
        out.append("   }")
        out.append("  }" + ("," if m < len(modes) - 1 else ""))
    out += [" }", "}", ""]
    return "\n".join(out)


def record(mode: str, lines: list[dict], about: dict, folder: Path | None = None) -> Path:
    """Add ``lines`` (figures of ``mode``) to the stored results of the work tree's commit."""
    folder = folder or RESULTS
    sha = commit()
    if sha.startswith("?"):
        raise SystemExit("not in a git work tree: no commit to store the figures under")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sha}.json"
    data = json.loads(path.read_text()) if path.exists() else {"commit": sha, "modes": {}}
    entry = data["modes"].setdefault(mode, {"runs": [], "lines": {}})
    entry["runs"].append(about)
    for figure in lines:
        entry["lines"][_key(figure)] = {k: v for k, v in figure.items() if k not in ("dataset",
                                        "what")}  # fmt: skip
    path.write_text(_dump(data))
    return path


# ------------------------------------------------------------------------------ compare


def _git(*args: str) -> str:
    found = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else ""


def _stored(folder: Path) -> dict[str, Path]:
    return {p.stem: p for p in folder.glob("*.json")}


def resolve(ref: str, folder: Path) -> tuple[Path, str]:
    """The stored file for ``ref`` and a note on how it was found."""
    stored = _stored(folder)
    if Path(ref).is_file():
        return Path(ref), ""
    if ref in stored:
        return stored[ref], ""
    full = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if not full:
        raise SystemExit(f"{ref}: neither a stored result in {folder} nor a commit git knows")
    for depth, sha in enumerate(_git("rev-list", "--first-parent", "-n", str(ANCESTORS),
                                     full).split()):  # fmt: skip
        for stem, path in sorted(stored.items()):
            if not stem.endswith("+") and sha.startswith(stem):
                note = "" if depth == 0 else f" (nearest measured ancestor of {ref}, {depth} back)"
                return path, note
    raise SystemExit(f"{ref}: no stored results for {full[:12]} or its last {ANCESTORS} ancestors")


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if unit in ("s", "s cpu", "") else f"{value:.4g}"


def compare(base: str, head: str | None, modes: list[str] | None, folder: Path) -> int:
    """Print every line of ``base`` and ``head`` side by side: both figures, head / base,
    and each side's own ratio (tiecore / peer)."""
    if head is None:
        own = commit()
        head = own if own in _stored(folder) else "HEAD"
    base_path, base_note = resolve(base, folder)
    head_path, head_note = resolve(head, folder)
    old, new = json.loads(base_path.read_text()), json.loads(head_path.read_text())
    common = [m for m in new["modes"] if m in old["modes"] and (not modes or m in modes)]
    print(f"base {old['commit']}{base_note}: {base_path}")
    print(f"head {new['commit']}{head_note}: {head_path}")
    if not common:
        print(f"no mode in both: base {sorted(old['modes'])}, head {sorted(new['modes'])}")
        return 1
    for mode in common:
        before, after = old["modes"][mode], new["modes"][mode]
        print(f"\n=== {mode}: base {_runs(before['runs'])}; head {_runs(after['runs'])}")
        keys = list(after["lines"]) + [k for k in before["lines"] if k not in after["lines"]]
        rows = []
        for key in keys:
            was, now = before["lines"].get(key, {}), after["lines"].get(key, {})
            unit = now.get("unit") or was.get("unit", "")
            a, b = was.get("tiecore"), now.get("tiecore")
            change = b / a if a and b is not None else None
            dataset, _, what = key.partition(" | ")
            rows.append((dataset, what, unit, _fmt(a, unit), _fmt(b, unit), _fmt(change),
                         _fmt(was.get("ratio")), _fmt(now.get("ratio")),
                         now.get("goal") or was.get("goal", "")))  # fmt: skip
        header = ("dataset", "what", "unit", "base", "head", "head/base", "ratio base",
                  "ratio head", "goal")  # fmt: skip
        print_aligned(header, rows, left=3)
    print("\nbase, head: tiecore's figure of each line; ratio: tiecore / peer within a run")
    return 0


def _runs(runs: list[dict]) -> str:
    return "; ".join(
        f"{r.get('date', '?')} load {r.get('load', '?')}"
        + (f" {r['sections']}" if r.get("sections") else "")
        for r in runs[-3:]
    )


def listing(folder: Path) -> int:
    """The commits with stored figures, newest first, with their modes and line counts."""
    stored = sorted(_stored(folder).items(), key=lambda kv: kv[1].stat().st_mtime, reverse=True)
    if not stored:
        print(f"no stored results in {folder}")
    for stem, path in stored:
        data = json.loads(path.read_text())
        modes = ", ".join(f"{m} ({len(e['lines'])} lines)" for m, e in data["modes"].items())
        subject = _git("log", "-1", "--format=%s", stem.rstrip("+"))[:60]
        print(f"{stem:10s} {modes}  {subject}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``compare BASE [HEAD] [--mode M]`` or ``results``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split(
        "\n\n")[0])  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser("compare", help="a commit's figures beside its base's")
    cmp.add_argument("base", help="a commit (or branch, HEAD~1, ...) or a stored file")
    cmp.add_argument("head", nargs="?", help="the same (default: this work tree, or HEAD)")
    cmp.add_argument("--mode", action="append", help="full, quick, explorer, app_memory")
    cmp.add_argument("--results", type=Path, default=RESULTS, help="the stored results' folder")
    listed = sub.add_parser("results", help="the commits stored")
    listed.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.command == "compare":
        return compare(args.base, args.head, args.mode, args.results)
    return listing(args.results)

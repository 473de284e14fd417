"""``python -m benchmarks run``: every section, a table, the JSON and the stored results."""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

from benchmarks import store
from benchmarks.arrays import bench_arrays
from benchmarks.common import (
    RACE_MEASURES,
    REPO,
    ROBUST,
    TRACK_MEASURES,
    Result,
    commit,
    print_progress,
    print_table,
)
from benchmarks.compare import bench_compare
from benchmarks.datasets import QUICK_ROBUST, Dataset, generate, generate_collection, robust
from benchmarks.end_to_end import bench_end_to_end
from benchmarks.families import bench_families
from benchmarks.modes import bench_modes, bench_sampled, load, profile_hot_spots
from benchmarks.parsing import bench_floor, bench_parse
from benchmarks.scale_out import bench_dask, bench_dask_memory
from benchmarks.spread import bench_spread
from benchmarks.startup import bench_imports, bench_startup, import_profile
from benchmarks.stream import bench_stream
from benchmarks.track import LAYOUTS, bench_tracks


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks run", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke test")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    parser.add_argument(
        "--repeat", type=int, help="repeats of in-process timings (5, 3 above 2M rows; quick 2)"
    )
    parser.add_argument("--peer-repeat", type=int, help="repeats of each subprocess (2; quick 1)")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {','.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--datasets", help="comma-separated dataset names to run (default: all of the mode)"
    )
    parser.add_argument(
        "--profile",
        nargs="?",
        const="",
        metavar="DATASETS",
        help="cProfile tiecore on these datasets (comma-separated; default the first) and "
        "time its imports",
    )
    parser.add_argument(
        "--ranx",
        action=argparse.BooleanOptionalAction,
        help="time ranx (default: on, off with --quick: its cold start alone takes a minute)",
    )
    parser.add_argument(
        "--no-fresh-jit",
        action="store_true",
        help="skip ranx with an empty numba cache (one extra minute or two of JIT compilation)",
    )
    parser.add_argument("--keep", metavar="DIR", help="write generated data here and keep it")
    parser.add_argument(
        "--track-layouts",
        default=",".join(LAYOUTS),
        help="the layouts of the generated tracks: plain (as generated), published (qrels as "
        "TREC-COVID's are published); default both",
    )
    parser.add_argument(
        "--tracks",
        metavar="DIR",
        default=os.environ.get("TIECORE_BENCH_TRACKS"),
        help="also time the tracks of real files in DIR (a folder per track holding its qrels "
        "and its runs, see benchmarks/README.md; default $TIECORE_BENCH_TRACKS)",
    )
    parser.add_argument(
        "--store",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add the figures to benchmarks/results/<commit>.json (default: on)",
    )
    return parser.parse_args(argv)


#: Every section, in the order they run for each dataset.
SECTIONS = (
    "startup", "arrays", "modes", "sampled", "families", "parse", "e2e", "stream", "spread",
    "compare", "dask", "track",
)  # fmt: skip


#: The sections that run on each data set (the others have data of their own).
PER_DATASET = {
    "modes", "sampled", "families", "parse", "e2e", "stream", "spread", "compare", "dask",
}  # fmt: skip


def make_datasets(args: argparse.Namespace, directory: Path, sections: set[str]) -> list[Dataset]:
    """The data sets of the mode (generated into ``directory``), those of ``--datasets``
    only; none where no section runs on them."""
    if not sections & PER_DATASET and args.profile is None:
        return []
    sizes = [(50, 1000)] if args.quick else [(1000, 1000), (7000, 1000)]
    collection = (12, 20, 200) if args.quick else (120, 50, 500)
    wanted = set(args.datasets.split(",")) if args.datasets else None
    datasets = []
    for queries, docs in sizes:
        if wanted is not None and f"tie{queries * docs // 1000}k" not in wanted:
            continue
        start = time.perf_counter()
        ds = generate(directory, queries, docs)
        print(f"generated {ds.name} ({ds.note}) in {time.perf_counter() - start:.1f}s")
        datasets.append(ds)
    rob = robust(QUICK_ROBUST if args.quick else None)
    if rob is None:
        print(f"{ROBUST} not found: robust03 skipped")
    else:
        datasets.append(rob)
    if wanted is None or f"coll{collection[0]}" in wanted:
        start = time.perf_counter()
        coll = generate_collection(directory, *collection)
        print(f"generated {coll.name} ({coll.note}) in {time.perf_counter() - start:.1f}s")
        datasets.append(coll)
    if wanted is not None:
        datasets = [d for d in datasets if d.name in wanted]
    return datasets


def bench_dataset(ds: Dataset, args, sections, measures, repeat, peer_repeat, *, last: bool):
    """Every per-dataset section on ``ds``: its results and its cProfile (or ``None``)."""
    print(f"\n--- {ds.name} ---", flush=True)
    runs, qrels = load(ds)
    print(f"{ds.rows:,} rows in {len(runs)} run(s), {len(qrels):,} qrels", flush=True)
    with_ranx = args.ranx if args.ranx is not None else not args.quick
    obliv = profile = None
    section: list[Result] = []
    reps = repeat if args.repeat or ds.rows <= 2_000_000 else 3
    many = len(ds.runs) > 1
    if "modes" in sections or "sampled" in sections:
        found, obliv = bench_modes(ds, runs, qrels, measures, reps)
        section += found if "modes" in sections else []
    if "sampled" in sections and (args.quick or ds.rows <= 2_000_000):
        section += bench_sampled(ds, runs, qrels, measures, reps, obliv)
    if "spread" in sections and (args.quick or ds.rows <= 3_000_000):
        section += bench_spread(ds, measures, runs, qrels, peer_repeat, reps)
    if "families" in sections and ds.name.startswith("robust03"):  # real ties, not generated
        section += bench_families(ds, runs, qrels, reps)
    if args.profile is not None and ds.name in (args.profile or ds.name).split(","):
        profile = profile_hot_spots(ds, runs, qrels, measures, 18)
    del runs, qrels
    gc.collect()
    if "parse" in sections and len(ds.runs) <= 20:
        section += bench_parse(ds, reps)
    if "parse" in sections and ds.name.startswith("tie"):
        section += bench_floor(ds, measures, peer_repeat)
    if "e2e" in sections:
        fresh_jit = with_ranx and not args.no_fresh_jit and last
        section += bench_end_to_end(ds, measures, peer_repeat, ranx=with_ranx, fresh_jit=fresh_jit)
    if "stream" in sections and many:
        section += bench_stream(ds, measures)
    if "compare" in sections and many:
        section += bench_compare(ds, peer_repeat)
    if "dask" in sections and ds.name.startswith(("coll", "robust03")):
        section += bench_dask(ds, measures, reps)
    print_progress(section)
    return section, profile


def write_json(path: str, args, measures, datasets, results, profiles) -> None:
    """Every figure, with its notes and extras, as JSON."""
    payload = {
        "mode": "quick" if args.quick else "full",
        "commit": commit(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "measures": measures,
        "datasets": {
            d.name: {"rows": d.rows, "runs": len(d.runs), "note": d.note} for d in datasets
        },
        "results": [
            {
                "dataset": r.dataset,
                "what": r.what.strip(),
                "tiecore": r.tiecore,
                "peer": r.peer,
                "unit": r.unit.strip(),
                "ratio": r.ratio,
                "goal": r.goal,
                "verdict": r.verdict,
                "note": r.note,
                "extra": r.extra,
            }
            for r in results
        ],
        "profiles": profiles,
    }
    Path(path).write_text(json.dumps(payload, indent=1, default=str))
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(REPO))
    warnings.simplefilter("ignore")
    import tiecore

    measures = list(RACE_MEASURES)
    repeat = args.repeat or (2 if args.quick else 5)
    peer_repeat = args.peer_repeat or (1 if args.quick else 2)
    sections = set(args.sections.split(","))
    unknown = sections - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    keep = Path(args.keep) if args.keep else None
    tmp = tempfile.TemporaryDirectory(prefix="tiecore-bench-") if keep is None else None
    directory = keep or Path(tmp.name)
    directory.mkdir(parents=True, exist_ok=True)
    mode, load = "quick" if args.quick else "full", round(os.getloadavg()[0], 1)
    argv = sys.argv[1:] if argv is None else argv

    print(
        f"tiecore {tiecore.__version__} ({commit()}) | python {platform.python_version()} | "
        f"{os.cpu_count()} cpus | load average {os.getloadavg()[0]:.1f} | "
        f"{'quick' if args.quick else 'full'} mode | repeats {repeat} in-process, "
        f"{peer_repeat} per subprocess (best taken)"
    )
    print(f"measures: {', '.join(measures)}")
    datasets = make_datasets(args, directory, sections)
    results: list[Result] = []
    profiles: dict[str, dict[str, str]] = {}
    if "startup" in sections:
        results += bench_imports(peer_repeat)
        results += bench_startup(5 if args.quick else 15)
        if args.profile is not None:
            profiles["imports"] = {"python -X importtime -c 'import tiecore.cli'": import_profile()}
        print_progress(results)
    if "arrays" in sections:
        section = bench_arrays(repeat, peer_repeat, args.quick)
        print_progress(section)
        results += section
    if args.profile == "" and datasets:
        args.profile = datasets[0].name
    for ds in datasets:
        section, profile = bench_dataset(
            ds, args, sections, measures, repeat, peer_repeat, last=ds is datasets[-1]
        )
        results += section
        if profile is not None:
            profiles[ds.name] = profile
    wanted = set(args.datasets.split(",")) if args.datasets else None
    if "dask" in sections and (wanted is None or "dask" in wanted):
        queries = 200 if args.quick else 12_000
        print(f"\n--- dask memory: tie{queries}k ---", flush=True)
        (directory / "dask").mkdir(parents=True, exist_ok=True)
        big = generate(directory / "dask", queries, 1000, seed=3)
        section = bench_dask_memory(big, measures, 400, 20_000 if args.quick else 100_000)
        print_progress(section)
        results += section
    if "track" in sections:
        print(f"\ntrack measures: {', '.join(TRACK_MEASURES)}")
        results += bench_tracks(args, directory, peer_repeat)

    print()
    print_table(results)
    if args.json:
        write_json(args.json, args, measures, datasets, results, profiles)
    if args.store and results:
        about = store.meta(sections=args.sections, load_start=load, argv=" ".join(argv or []))
        print(f"stored in {store.record(mode, store.lines_of(results), about)}")
    if tmp is not None:
        tmp.cleanup()
    return 0

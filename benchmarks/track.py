"""Section ``track``: TREC-COVID-sized tracks, ``tiecore eval`` against ir_measures and plain
pytrec_eval, each a process reading every run file."""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from benchmarks.common import (
    PYTREC_NAMES,
    TRACK_MEASURES,
    Result,
    _fmt_diffs,
    best_child,
    best_children,
    child_cmd,
    compare_values,
    ir_measures_name,
    print_progress,
    tiecore_cmd,
    tiecore_values,
)
from benchmarks.datasets import Dataset, generate_collection

#: Tracks shaped like TREC-COVID: name -> (runs, queries, docs per query, seed). Round 2 had
#: 136 runs on 35 topics (4.2M rows), round 3 79 runs on 40 topics (2.8M rows).
TRACKS = {"covid2": (136, 35, 900, 2), "covid3": (79, 40, 900, 3)}


#: Quick mode's: real-sized runs, a tenth of them.
QUICK_TRACKS = {"covid2": (14, 35, 900, 2), "covid3": (8, 40, 900, 3)}
#: The layouts a generated track is timed in: ``plain`` as :func:`generate_collection`
#: writes it (single spaces, iteration 0), ``published`` with its qrels laid out as
#: TREC-COVID's are published (:func:`published_qrels`; the runs are ordinary TREC runs,
#: ``qid Q0 docno rank score tag``, as the published ones are).
LAYOUTS = ("plain", "published")


def bench_track(ds: Dataset, peer_repeat: int) -> list[Result]:
    """A track of many real-sized runs: ``tiecore eval`` vs ir_measures and plain
    pytrec_eval, each a process reading every run file, taking turns.

    The 4 measures of TREC-COVID (:data:`TRACK_MEASURES`); the oblivious run (once,
    after) gives the values checked against both peers'.
    """
    measures = list(TRACK_MEASURES)
    files = [str(ds.qrels), *map(str, ds.runs)]
    trec_names = ",".join(PYTREC_NAMES[m] for m in measures)
    commands = {
        "aware": tiecore_cmd(ds, measures, "aware"),
        "ir_measures": child_cmd("ir_measures", ",".join(measures), *files),
        "pytrec_eval": child_cmd("pytrec_eval", trec_names, *files),
    }
    found = best_children(commands, peer_repeat)
    aware, irm, pte = found["aware"], found["ir_measures"], found["pytrec_eval"]
    ours = best_child(tiecore_cmd(ds, measures, "oblivious"), 1)
    values = tiecore_values(ours)
    irm_rep, pte_rep = irm.report(), pte.report()
    diffs = {
        "pytrec_eval": compare_values(values, pte_rep["values"], PYTREC_NAMES.__getitem__),
        "ir_measures": compare_values(values, irm_rep["values"], ir_measures_name),
    }
    worst = max((d for peer in diffs.values() for d in peer.values()), default=float("nan"))
    agree = (
        f"max |mean oblivious - pytrec_eval| {_fmt_diffs(diffs['pytrec_eval'])}; "
        f"vs ir_measures max {max(diffs['ir_measures'].values(), default=float('nan')):.2g}"
        + (" -- VALUES DIFFER" if not worst <= 1e-9 else "")
    )
    return [
        Result(
            ds.name,
            "track: tiecore eval aware / ir_measures (e2e)",
            aware.wall,
            irm.wall,
            "<= 0.2",
            note=(
                f"ir_measures: import {irm_rep['import']:.2f}s, evaluator (qrels) "
                f"{irm_rep['qrels']:.2f}s, runs {irm_rep['eval']:.2f}s; tiecore oblivious "
                f"{ours.wall:.2f}s"
            ),
            extra={"diffs": diffs, "report": irm_rep},
        ),
        Result(
            ds.name,
            "track: tiecore eval aware / pytrec_eval (e2e)",
            aware.wall,
            pte.wall,
            "<= 0.3",
            note=(
                f"pytrec_eval: import {pte_rep['import']:.2f}s, parse_qrel + evaluator "
                f"{pte_rep['qrels']:.2f}s, parse_run + evaluate {pte_rep['eval']:.2f}s; {agree}"
            ),
            extra={"report": pte_rep},
        ),
        Result(
            ds.name,
            "track: peak RSS tiecore aware / ir_measures",
            aware.max_rss_mb,
            irm.max_rss_mb,
            "<= 2",
            unit="MB",
            note=(
                f"pytrec_eval {pte.max_rss_mb:.0f}MB, tiecore oblivious "
                f"{ours.max_rss_mb:.0f}MB; the largest run file "
                f"{max(p.stat().st_size for p in ds.runs) / 2**20:.1f}MB"
            ),
        ),
        Result(ds.name, "track: CPU aware / ir_measures", aware.cpu, irm.cpu, unit="s cpu"),
        Result(ds.name, "track: CPU aware / pytrec_eval", aware.cpu, pte.cpu, unit="s cpu"),
    ]


def published_qrels(ds: Dataset, round_: int) -> Path:
    """``ds``'s qrels written again as TREC-COVID's are published, beside them.

    anserini-tools' ``topics-and-qrels/qrels.covid-round2.txt`` begins ``1 1.5  08efpohc 0``:
    the iteration column holds the round's judging iteration (``1.5`` in round 2, ``2.5`` in
    round 3), and two spaces stand before the docno.  The same judgments, only laid out so.
    """
    path = ds.qrels.with_name("qrels.published.txt")
    iteration = f"{round_ - 0.5:g}"
    with ds.qrels.open() as source, path.open("w") as out:
        for row in source:
            qid, _, docno, level = row.split()
            out.write(f"{qid} {iteration}  {docno} {level}\n")
    return path


def folder_tracks(root: Path) -> list[Dataset]:
    """The tracks of real files under ``root``: each folder in it holding exactly one file
    whose name contains ``qrels`` is a track of that folder's name; its runs are the files
    of its ``runs/`` folder, or where it has none, every other file beside the qrels."""
    if not root.is_dir():
        raise SystemExit(f"--tracks {root}: not a folder")
    tracks = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.name[0] != ".")
        qrels = [p for p in files if "qrels" in p.name.lower()]
        if len(qrels) != 1:
            print(f"{folder}: skipped, {len(qrels)} files named *qrels* (one wanted)")
            continue
        inner = folder / "runs"
        runs = (
            sorted(p for p in inner.iterdir() if p.is_file() and p.name[0] != ".")
            if inner.is_dir()
            else [p for p in files if p != qrels[0]]
        )
        if not runs:
            print(f"{folder}: skipped, no run files")
            continue
        size = sum(p.stat().st_size for p in runs) / 2**20
        note = f"{len(runs)} run files ({size:.0f} MB) from {folder}"
        tracks.append(Dataset(folder.name, qrels[0], runs, " ", note=note))
    return tracks


def bench_tracks(args: argparse.Namespace, directory: Path, peer_repeat: int) -> list[Result]:
    """Section ``track``: the TREC-COVID-like tracks (:data:`TRACKS`) generated and timed in
    each of ``args.track_layouts`` (:data:`LAYOUTS`; the published layout's lines have the
    data set ``covid2/published``), then the tracks of real files under ``args.tracks``."""
    wanted = set(args.datasets.split(",")) if args.datasets else None
    layouts = [x for x in args.track_layouts.split(",") if x]
    unknown = set(layouts) - set(LAYOUTS)
    if unknown:
        raise SystemExit(f"unknown track layouts {sorted(unknown)}; choose from {LAYOUTS}")
    results: list[Result] = []

    def run(ds: Dataset) -> None:
        section = bench_track(ds, peer_repeat)
        print_progress(section)
        results.extend(section)

    for name, (runs, queries, docs, seed) in (QUICK_TRACKS if args.quick else TRACKS).items():
        names = {"plain": name, "published": f"{name}/published"}
        chosen = [x for x in layouts if wanted is None or name in wanted or names[x] in wanted]
        if not chosen:
            continue
        start = time.perf_counter()
        ds = generate_collection(directory / name, runs, queries, docs, seed)
        ds.name, ds.note = name, f"like TREC-COVID round {name[-1]}: {ds.note}"
        took = time.perf_counter() - start
        print(f"\n--- {name}: {ds.rows:,} rows ({ds.note}), generated in {took:.1f}s ---")
        for layout in chosen:
            if layout == "published":
                qrels = published_qrels(ds, int(name[-1]))
                print(f"--- {names[layout]}: the same runs, the qrels laid out as published ---")
                run(Dataset(names[layout], qrels, ds.runs, ds.sep, ds.rows, ds.note))
            else:
                run(ds)
        if args.keep is None:  # hundreds of MB each
            shutil.rmtree(directory / name, ignore_errors=True)
    for ds in folder_tracks(Path(args.tracks)) if args.tracks else []:
        if wanted is None or ds.name in wanted:
            print(f"\n--- {ds.name}: {ds.note} ---")
            run(ds)
    return results

"""Section ``e2e``: ``tiecore eval`` from the files against ir_measures (pytrec_eval) and
ranx, each tool a fresh process; and the peers' child processes."""

from __future__ import annotations

import tempfile
import time

from benchmarks.common import (
    Child,
    Result,
    _fmt_diffs,
    best_child,
    best_children,
    child_cmd,
    compare_values,
    ir_measures_name,
    ranx_name,
    run_child,
    tiecore_cmd,
    tiecore_values,
)


def bench_end_to_end(ds, measures, peer_repeat, *, ranx: bool, fresh_jit: bool) -> list[Result]:
    """``tiecore eval`` vs ir_measures vs ranx, each a subprocess reading the files.

    The goal line is tie-aware tiecore against ir_measures at its best (one evaluator,
    pytrec_eval); the oblivious run gives the values compared with the peers'.
    """
    out: list[Result] = []
    files = [str(ds.qrels), *map(str, ds.runs)]
    names = [ir_measures_name(m) for m in measures]
    commands = {
        "aware": tiecore_cmd(ds, measures, "aware"),
        "oblivious": tiecore_cmd(ds, measures, "oblivious"),
        "ir_measures": child_cmd("ir_measures", ",".join(names), *files),
    }
    try:  # interleaved: tiecore and its peer see the same load
        found = best_children(commands, peer_repeat)
    except RuntimeError:
        found = {}
    aware = found.get("aware") or best_child(commands["aware"], peer_repeat)
    ours = found.get("oblivious") or best_child(commands["oblivious"], peer_repeat)
    values = tiecore_values(ours)
    rss = f"peak RSS aware {aware.max_rss_mb:.0f}MB, oblivious {ours.max_rss_mb:.0f}MB"
    out.append(
        Result(ds.name, "tiecore eval aware / oblivious (e2e)", aware.wall, ours.wall, note=rss)
    )
    try:
        irm = found.get("ir_measures") or best_child(commands["ir_measures"], peer_repeat)
    except RuntimeError as error:
        out.append(Result(ds.name, "eval e2e / ir_measures", aware.wall, None, note=str(error)))
    else:
        rep = irm.report()
        diffs = compare_values(values, rep["values"], ir_measures_name)
        split = (
            f"ir_measures: import {rep['import']:.2f}s, evaluator (qrels) {rep['qrels']:.2f}s, "
            f"runs {rep['eval']:.2f}s; providers {rep['providers']}"
        )
        out += [
            Result(
                ds.name,
                "tiecore eval aware / ir_measures (e2e)",
                aware.wall,
                irm.wall,
                "<= 0.3",
                note=(
                    f"{split}; peak RSS ir_measures {irm.max_rss_mb:.0f}MB, tiecore aware "
                    f"{aware.max_rss_mb:.0f}MB"
                ),
                extra={"report": rep, "rss": [aware.max_rss_mb, irm.max_rss_mb]},
            ),
            Result(
                ds.name,
                "  tiecore eval oblivious / ir_measures",
                ours.wall,
                irm.wall,
                note=f"max |mean oblivious - pytrec_eval| {_fmt_diffs(diffs)}",
                extra={"diffs": diffs},
            ),
        ]
    if ranx:
        out += _ranx_lines(ds, measures, aware, values, peer_repeat, fresh_jit=fresh_jit)
    return out


def _ranx_lines(ds, measures, aware: Child, values, peer_repeat, *, fresh_jit) -> list[Result]:
    """``tiecore eval`` aware (``aware``) vs ranx cold, warm and (``fresh_jit``) first use;
    ``values``: the oblivious means its values are compared with."""
    out: list[Result] = []
    files = [str(ds.qrels), *map(str, ds.runs)]
    rnames = [ranx_name(m) for m in measures]
    try:
        rx = best_child(child_cmd("ranx", ",".join(rnames), *files), peer_repeat)
    except RuntimeError as error:
        out.append(Result(ds.name, "eval e2e / ranx", aware.wall, None, note=str(error)))
        return out
    rep = rx.report()
    cold = rx.wall - rep["pass2"]
    warm = rx.wall - rep["pass1"]
    diffs = compare_values(values, rep["values"], ranx_name)
    out += [
        Result(
            ds.name,
            "tiecore eval aware / ranx cold (e2e)",
            aware.wall,
            cold,
            "< 1",
            note=(
                f"ranx: import {rep['import']:.2f}s, first pass load {rep['load1']:.2f}s + "
                f"evaluate {rep['eval1']:.2f}s (numba code from its disk cache), second pass "
                f"load {rep['load2']:.2f}s + evaluate {rep['eval2']:.2f}s; peak RSS "
                f"{rx.max_rss_mb:.0f}MB; max |diff| vs oblivious {_fmt_diffs(diffs)}"
            ),
            extra={"diffs": diffs, "report": rep, "wall": rx.wall},
        ),
        Result(
            ds.name,
            "tiecore eval aware / ranx warm (e2e)",
            aware.wall,
            warm,
            "< 1",
            note="warm = process wall minus the first pass: import + a second load + evaluate",
        ),
    ]
    if fresh_jit:
        with tempfile.TemporaryDirectory() as cache:
            fresh = run_child(
                child_cmd("ranx", ",".join(rnames), *files), {"NUMBA_CACHE_DIR": cache}
            )
        if fresh.returncode == 0:
            rep = fresh.report()
            out.append(
                Result(
                    ds.name,
                    "tiecore eval aware / ranx first use (e2e)",
                    aware.wall,
                    fresh.wall - rep["pass2"],
                    "info",
                    note=(
                        "ranx with an empty NUMBA_CACHE_DIR (JIT compiles everything): "
                        f"load {rep['load1']:.1f}s + evaluate {rep['eval1']:.1f}s"
                    ),
                )
            )
    return out


def child_ir_measures(names: list[str], qrels: str, runs: list[str]) -> dict:
    """ir_measures used at its best: ``evaluator(measures, qrels)`` built once (the qrels
    read and indexed once), then ``calc_aggregate`` per run, all through pytrec_eval."""
    t0 = time.perf_counter()
    import ir_measures

    t1 = time.perf_counter()
    measures = [ir_measures.parse_measure(n) for n in names]
    evaluator = ir_measures.evaluator(measures, ir_measures.read_trec_qrels(qrels))
    t2 = time.perf_counter()
    values = {}
    for path in runs:
        result = evaluator.calc_aggregate(ir_measures.read_trec_run(path))
        values[path] = {str(m): float(v) for m, v in result.items()}
    t3 = time.perf_counter()
    providers = {}
    for m in measures:
        chosen = next(p for p in ir_measures.DefaultPipeline.providers if p.supports(m))
        providers.setdefault(chosen.NAME, []).append(str(m))
    if set(providers) != {"pytrec_eval"}:
        raise SystemExit(f"not all through pytrec_eval: {providers}")
    return {
        "import": t1 - t0,
        "qrels": t2 - t1,
        "eval": t3 - t2,
        "values": values,
        "providers": {k: ",".join(v) for k, v in providers.items()},
    }


def child_pytrec_eval(names: list[str], qrels: str, runs: list[str]) -> dict:
    """Plain pytrec_eval as its README shows it: ``parse_qrel`` and one
    ``RelevanceEvaluator`` built once, then ``parse_run`` + ``evaluate`` per run file;
    each measure's mean over the run's queries by ``compute_aggregated_measure``."""
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()
    with open(qrels) as handle:
        evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(handle), set(names))
    t2 = time.perf_counter()
    values = {}
    for path in runs:
        with open(path) as handle:
            per_query = evaluator.evaluate(pytrec_eval.parse_run(handle))
        values[path] = {
            n: pytrec_eval.compute_aggregated_measure(n, [q[n] for q in per_query.values()])
            for n in names
        }
    t3 = time.perf_counter()
    return {"import": t1 - t0, "qrels": t2 - t1, "eval": t3 - t2, "values": values}


def child_ranx(names: list[str], qrels: str, runs: list[str]) -> dict:
    """ranx Qrels/Run.from_file + evaluate, twice in one process (cold, then warm JIT)."""
    t0 = time.perf_counter()
    import ranx

    report: dict = {"import": time.perf_counter() - t0}
    for attempt in (1, 2):
        start = time.perf_counter()
        judged = ranx.Qrels.from_file(qrels)
        loaded = [ranx.Run.from_file(p, kind="gz" if p.endswith(".gz") else "trec") for p in runs]
        middle = time.perf_counter()
        values = {}
        for path, run in zip(runs, loaded, strict=True):
            result = ranx.evaluate(judged, run, names, make_comparable=True)
            values[path] = {k: float(v) for k, v in result.items()}
        end = time.perf_counter()
        report |= {
            f"load{attempt}": middle - start,
            f"eval{attempt}": end - middle,
            f"pass{attempt}": end - start,
        }
        del judged, loaded, result
    report["values"] = values
    return report

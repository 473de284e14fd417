"""ir_measures measures as tiecore names, and ``tiecore eval -m all_trec`` against trec_eval.

* converted measures give, on trec_eval's test files and Robust03, the per-query
  values ir_measures (pytrec_eval) computes for the original measure objects;
* ``-m all_trec`` prints, line for line and in trec_eval's order, what trec_eval's
  own expected outputs hold for every measure tiecore has (``out.test.a*``).
"""

from __future__ import annotations

import re
import subprocess
import sys

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, RR, Bpref, P, R, Rprec, Success, nDCG
from shared_data import ROBUST_QRELS, TREC_EVAL, robust_run

import tiecore
from tiecore.errors import InputError
from tiecore.interop import (
    ALL_TREC,
    all_trec_measures,
    count_rows,
    count_runs,
    expand_all_trec,
    measure_name,
)

MEASURES = [P @ 5, P @ 10, R @ 100, AP, AP @ 10, RR, nDCG, nDCG @ 10, Rprec, Success @ 5, Bpref]
MEASURES.append(ir_measures.Judged @ 10)  # ir_measures' own provider, not pytrec_eval


def test_names():
    assert [measure_name(m) for m in MEASURES] == [
        "P@5", "P@10", "R@100", "AP", "AP@10", "RR", "nDCG", "nDCG@10", "Rprec", "Success@5",
        "Bpref", "Judged@10",
    ]  # fmt: skip
    assert measure_name(P(rel=2) @ 5, rel_level=2) == "P@5"
    assert measure_name("RR(rel=2)", rel_level=2) == "RR"
    assert measure_name(nDCG(dcg="exp-log2") @ 10) == "nDCG(gain=exp)@10"
    assert measure_name(nDCG(gains={0: 0, 1: 1, 2: 2})) == "nDCG"  # the levels themselves
    assert measure_name("ndcg_cut_10") == "nDCG@10"  # tiecore's own names pass through


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        (P(rel=2) @ 5, r"P\(rel=2\)@5: rel=2, but tiecore takes one relevance level .*"
         r"\(expected rel_level=2 \(tiecore eval -l 2\) for the evaluation, with P@5\)"),
        (P(judged_only=True) @ 5, r"judged_only=True has no tiecore equivalent"),
        (nDCG(gains={0: 0, 1: 1, 2: 3}), r"custom gains have no tiecore equivalent"),
        (nDCG(dcg="log2-unsmoothed"), r"dcg='log2-unsmoothed' has no tiecore equivalent"),
        (ir_measures.NumQ, r"^measure: NumQ: unknown measure"),
        ("nonsense@3", r"^measure: unknown measure 'nonsense@3'"),
        # tiecore's own family with a value it refuses: said by tiecore, not a KeyError of
        # ir_measures' parser
        ("ERR(max_rel=0)@5", r"ERR's max_rel must be one of 1, 2"),
        ("P@0", r"a cutoff must be an integer from 1"),
    ],
)  # fmt: skip
def test_refused(measure, message):
    with pytest.raises(InputError, match=message):
        measure_name(measure)


@pytest.mark.parametrize(
    ("qrels", "run", "rel_level"),
    [
        (TREC_EVAL / "qrels.test", TREC_EVAL / "results.test", 1),
        (TREC_EVAL / "qrels.rel_level", TREC_EVAL / "results.test", 2),
        (ROBUST_QRELS, robust_run("input.rutcor03100.gz"), 1),  # tie-heavy
        (ROBUST_QRELS, robust_run("input.MU03rob01.gz"), 2),
    ],
)
def test_converted_measures_equal_ir_measures(qrels, run, rel_level):
    measures = [m(rel=rel_level) if "rel" in m.SUPPORTED_PARAMS else m for m in MEASURES]
    measures = [m @ c if (c := dict(o.params).get("cutoff")) else m for m, o in zip(
        measures, MEASURES, strict=True)]  # fmt: skip
    theirs = {
        (str(r.measure), r.query_id): r.value
        for r in ir_measures.iter_calc(
            measures, ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run))
        )
    }
    names = {measure_name(m, rel_level=rel_level): str(m) for m in measures}
    frames = tiecore.read_run(run), tiecore.read_qrels(qrels)
    options = {"ties": "oblivious", "rel_level": rel_level, "per_query": True}
    ours = pd.concat(
        [
            tiecore.evaluate(*frames, [n for n in names if n != "Judged@10"], **options),
            # ir_measures' own Judged provider breaks ties by docno ascending, unlike its
            # pytrec_eval measures (trec_eval's docno descending): 27 of Robust03's 100
            # queries of rutcor03100 differ under trec_eval's order
            tiecore.evaluate(*frames, "Judged@10", tiebreak="docno_asc", **options),
        ]
    )
    ours = ours[ours["qid"].notna()]
    compared = 0
    for measure, qid, value in zip(ours["measure"], ours["qid"], ours["value"], strict=True):
        key = (names[measure], qid)
        if key in theirs:
            assert value == pytest.approx(theirs[key], rel=1e-12, abs=1e-15), key
            compared += 1
    assert compared >= 0.9 * len(theirs)


# ------------------------------------------------------------------------ all_trec


def lines(text: str) -> list[tuple[str, str, str]]:
    return [tuple(line.split("\t")) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("expected", "args"),
    [
        ("out.test.a", ["qrels.test", "results.test"]),
        ("out.test.aq", ["qrels.test", "results.test", "-q"]),
        ("out.test.aqc", ["qrels.test", "results.trunc", "-q", "-c"]),
        ("out.test.aqcM", ["qrels.test", "results.trunc", "-q", "-c", "-M", "100"]),
        ("out.test.aql", ["qrels.rel_level", "results.test", "-q", "-l", "2"]),
    ],
)
def test_all_trec_equals_trec_eval(expected, args):
    files = [str(TREC_EVAL / a) if a.startswith(("qrels", "results")) else a for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "tiecore", "eval", *files, "-m", "all_trec", "--ties", "oblivious"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # relstring and 11pt_avg: trec_eval 10's outputs here print no relstring for every
    # query and round 11pt_avg's levels to nearest; tests/cli/test_trec_eval_lines.py
    # checks both (and every other line) against trec_eval 9.0.8's bytes
    later = ("relstring", "11pt_avg")
    ours = [line for line in lines(done.stdout) if line[0].strip() not in later]
    keys = {(name.strip(), qid) for name, qid, _ in ours}
    theirs = [
        line for line in lines((TREC_EVAL / expected).read_text()) if line[0].strip() not in later
    ]
    shared = [line for line in theirs if (line[0].strip(), line[1]) in keys]
    # the iprec lines: trec_eval 9.0.x's rounding (round=up), not the later trec_eval's
    # that wrote these outputs; those lines must match round=nearest, asked for by name
    iprec = [i for i, line in enumerate(shared) if line[0].startswith("iprec_at_recall_")]
    assert len(iprec) >= 11
    nearest = _iprec_nearest(files)
    assert [shared[i][2] for i in iprec] == [nearest[shared[i][:2]] for i in iprec]
    shared = [ours[i] if i in iprec else line for i, line in enumerate(shared)]
    assert ours == shared  # same lines, same layout, same order
    printed = {name.strip() for name, _, _ in ours}
    core = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref"}
    core |= {"recip_rank", "ndcg", "success_1", "success_10", "P_5", "P_1000", "recall_1000"}
    core |= {"ndcg_cut_1000", "map_cut_5"}
    assert core <= printed
    has = {trec for trec, _ in all_trec_measures()}
    assert has - set(later) <= printed  # every measure of all_trec is listed


def _iprec_nearest(files: list[str]) -> dict[tuple[str, str], str]:
    """``IPrec(recall=r,round=nearest)`` printed by ``tiecore eval --format trec``, keyed
    by trec_eval's line (``iprec_at_recall_r`` padded, qid)."""
    levels = [f"{r / 10:.1f}" for r in range(11)]
    asked = [arg for r in levels for arg in ("-m", f"IPrec(recall={r},round=nearest)")]
    done = subprocess.run(
        [sys.executable, "-m", "tiecore", "eval", *files, *asked, "--ties", "oblivious",
         "--format", "trec"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = {}
    for name, qid, value in lines(done.stdout):
        level = re.fullmatch(r"IPrec\((?:recall=([0-9.]+),)?round=nearest\)", name.strip())
        if level:  # recall 0.0 is the default, left out of the name
            found[f"iprec_at_recall_{float(level[1] or 0):.2f}".ljust(22), qid] = value
    return found


def test_all_trec_names_are_trec_eval_s():
    listed = [name.strip() for name, qid, _ in lines((TREC_EVAL / "out.test.a").read_text())]
    ours = [trec for trec, _ in ALL_TREC]
    assert ours == [name for name in listed if name in ours]  # trec_eval's order
    assert set(ours) <= set(listed)


def test_all_trec_with_other_measures_and_formats(tmp_path):
    names, printed = expand_all_trec(["P@7", "all_trec"])
    assert names[0] == "P@7" and printed["P@7"] == "P@7" and printed["AP"] == "map"
    done = subprocess.run(
        [sys.executable, "-m", "tiecore", "eval", str(TREC_EVAL / "qrels.test"),
         str(TREC_EVAL / "results.test"), "-m", "all_trec", "--format", "csv"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith("STANDARD,,NumRet,")  # csv: tiecore's names


def test_count_runs_counts_each_run_as_evaluate_names_it(tmp_path):
    """count_runs over files (read one at a time): each run's count_rows, keyed and
    ordered as read_runs names the runs (a copy shares its tag: both go by file name)."""
    paths = [robust_run("input.MU03rob01.gz"), robust_run("input.rutcor03100.gz")]
    paths.append(tmp_path / "copy.gz")
    paths[-1].write_bytes(paths[0].read_bytes())
    qrels = tiecore.read_qrels(ROBUST_QRELS)
    options = {"rel_level": 2, "depth": 100}
    counted = count_runs(paths, qrels, **options)
    frames = tiecore.read_runs(paths)
    assert list(counted) == list(frames) == ["input.MU03rob01", "rutcor03100", "copy"]
    for name, frame in frames.items():
        pd.testing.assert_frame_equal(counted[name], count_rows(frame, qrels, **options))
    with pytest.raises(InputError, match=r"^rel_level: .*'2'") as error:
        count_runs(paths, qrels, rel_level="2")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("mode", [["--ties", "aware"], ["--ties", "aware", "--spread"]])
def test_all_trec_aware_leaves_out_gm_map_with_a_note(mode):
    def listing(*extra: str) -> subprocess.CompletedProcess:
        files = [str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")]
        return subprocess.run(
            [sys.executable, "-m", "tiecore", "eval", *files, "-m", "all_trec", *extra],
            capture_output=True, text=True, check=False,
        )  # fmt: skip

    aware, oblivious = listing(*mode), listing("--ties", "oblivious")
    assert aware.returncode == 0, aware.stderr
    assert "leaves out gm_map" in aware.stderr and "Traceback" not in aware.stderr
    # and trec_eval's extras without an exact tie-aware value (11pt_avg, ndcg_rel and G
    # have an exact variance too: --spread keeps them)
    inexact = {"gm_map", "gm_bpref"}
    assert all(f"leaves out {name}:" in aware.stderr for name in inexact)
    if "--spread" in mode:
        return
    names = [name.strip() for name, _, _ in lines(aware.stdout)]
    expected = [name.strip() for name, _, _ in lines(oblivious.stdout)]
    assert names == ["ties"] + [name for name in expected if name not in inexact]


def test_cli_takes_ir_measures_names():
    def run(*measures: str, level: str = "2") -> subprocess.CompletedProcess:
        files = [str(TREC_EVAL / "qrels.rel_level"), str(TREC_EVAL / "results.test")]
        return subprocess.run(
            [sys.executable, "-m", "tiecore", "eval", *files, "-l", level, "--format", "csv",
             *(arg for m in measures for arg in ("-m", m))],
            capture_output=True, text=True, check=False,
        )  # fmt: skip

    ours = run("P(rel=2)@5", "nDCG(dcg='exp-log2')@10")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == run("P@5", "nDCG(gain=exp)@10").stdout
    refused = run("P(rel=2)@5", level="1")
    assert refused.returncode == 2 and "tiecore eval -l 2" in refused.stderr


def test_parse_measures_and_evaluate_take_ir_measures_objects():
    from tiecore.measures import parse_measures

    assert parse_measures([nDCG @ 10, "P(rel=1)@5", AP]) == parse_measures(["nDCG@10", "P@5", "AP"])
    assert parse_measures(RR) == parse_measures("RR")
    run = tiecore.read_run(TREC_EVAL / "results.test")
    qrels = tiecore.read_qrels(TREC_EVAL / "qrels.test")
    ours = tiecore.evaluate(run, qrels, [AP, P @ 10, nDCG(dcg="exp-log2") @ 10])
    named = tiecore.evaluate(run, qrels, ["AP", "P@10", "nDCG(gain=exp)@10"])
    pd.testing.assert_frame_equal(ours, named)

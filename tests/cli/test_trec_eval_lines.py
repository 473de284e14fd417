"""``tiecore eval --ties oblivious`` with trec_eval's ``-m`` flags prints trec_eval's lines.

The expected outputs are trec_eval 9.0.8's own, printed for these command lines on
trec_eval's test files (``trec_eval_908/``, provenance in its README.md; one of
trec_eval 10.0 in ``trec_eval_10/``): compared byte for byte.  Bare families expand to
trec_eval's default parameters (``P`` is P_5 ... P_1000), several ``-m`` add up, lines
come in trec_eval's table order, counts are integers summed in ``all``, ``runid`` and
``num_q`` print only when asked for, and trec_eval's parameter lists (``P.5,7,3``,
``ndcg_cut.10,20,23.4``, ``iprec_at_recall..10,.25``) read as trec_eval reads them.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import pytest
from shared_data import ROBUST_QRELS, ROBUST_RUNS, TREC_EVAL, robust_run

import tiecore
from tiecore.cli import main
from tiecore.cli.trec_eval_names import NICKNAMES, TABLE, trec_plan
from tiecore.interop import ALL_TREC

GOLDEN = Path(__file__).parent / "trec_eval_908"
TEST = [str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")]
TRUNC = [str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.trunc")]
LEVELS = [str(TREC_EVAL / "qrels.rel_level"), str(TREC_EVAL / "results.test")]
#: quicktest's meas_params command line.
MEAS_PARAMS = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000"]
MEAS_PARAMS += ["Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75"]
MEAS_PARAMS += ["ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20"]


def eval_out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["eval", "--ties", "oblivious", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def flags(*names: str) -> list[str]:
    return [a for name in names for a in ("-m", name)]


CASES = {
    "official.q": ["-q", *flags("official"), *TEST],
    "P_recall.q": ["-q", *flags("P", "recall"), *TEST],
    "cuts_map": [*flags("ndcg_cut", "map_cut", "map"), *TEST],
    "success_iprec.q": ["-q", *flags("success", "iprec_at_recall"), *TEST],
    "counts.q": ["-q", *flags("num_ret", "num_rel", "num_rel_ret", "num_q"), *TEST],
    "gm_map.q": ["-q", *flags("gm_map"), *TEST],
    "params.q": [
        "-q",
        *flags("P.5,7,3", "recall.20,2000", "ndcg_cut.10,20,23.4", "success.2,5,20"),
        "-miprec_at_recall..10,.20,.50",
        *TEST,
    ],
    "official.cM": ["-c", "-M", "100", *flags("official"), *TRUNC],
    "set_F_Rprec_mult.qM": ["-q", "-M", "100", *flags("set_F.0.5", "set_P", "Rprec_mult"), *TEST],
    "official.ql2": ["-q", "-l", "2", *flags("official"), *LEVELS],
    "set.q": ["-q", *flags("set"), *TEST],
    # quicktest's all_trec command lines (trec_eval 9.0.8's outputs)
    "all_trec": [*flags("all_trec"), *TEST],
    "all_trec.q": [*flags("all_trec"), "-q", *TEST],
    "all_trec.qc": [*flags("all_trec"), "-q", "-c", *TRUNC],
    "all_trec.qcM": [*flags("all_trec"), "-q", "-c", "-M100", *TRUNC],
    "out.test.aql": [*flags("all_trec"), "-mrelstring.20", "-q", "-l2", *LEVELS],
    "out.test": ["--trec-eval", "9", *TEST],  # trec_eval's default measures: official
}


@pytest.mark.parametrize("golden", list(CASES))
def test_trec_eval_command_lines_print_trec_eval_s_bytes(capsys, golden):
    code, out, err = eval_out(capsys, *CASES[golden])
    assert code == 0, err
    assert out == (GOLDEN / golden).read_text()
    assert err == ""


def test_one_flag_with_commas_is_several_flags(capsys):
    """tiecore's comma list (trec_eval takes one name per -m) means the same flags."""
    _, out, _ = eval_out(capsys, "-q", "-m", "num_ret,num_rel,num_rel_ret,num_q", *TEST)
    assert out == (GOLDEN / "counts.q").read_text()
    _, out, _ = eval_out(capsys, "-m", "map,map_cut", "-m", "ndcg_cut", *TEST)
    assert out == (GOLDEN / "cuts_map").read_text()
    _, out, _ = eval_out(capsys, "-m", "P.5,7,3,map", *TEST)  # a name ends the list
    assert [line.split()[0] for line in out.splitlines()] == ["map", "P_3", "P_5", "P_7"]


def test_flags_in_any_order_print_trec_eval_s_order(capsys):
    _, out, _ = eval_out(capsys, *flags("map", "ndcg_cut", "map_cut"), *TEST)
    assert out == (GOLDEN / "cuts_map").read_text()
    # trec_eval's printed names typed back are the same measures
    _, out, _ = eval_out(capsys, "-q", *flags("P_5", "ndcg_cut_10", "iprec_at_recall_0.20"), *TEST)
    names = list(dict.fromkeys(line.split()[0] for line in out.splitlines()))
    assert names == ["iprec_at_recall_0.20", "P_5", "ndcg_cut_10"]


def test_set_prints_every_set_measure(capsys):
    """``-m set``: trec_eval's lines, set_relative_P and set_map included."""
    code, out, err = eval_out(capsys, "-q", "-m", "set", *TEST)
    assert code == 0
    assert out == (GOLDEN / "set.q").read_text()
    assert err == ""


def test_relstring_names_one_ordering(capsys):
    """relstring (trec_eval's string of the top docs' levels) prints per query only, as
    trec_eval prints it; outside oblivious mode it is refused by name and left out of a
    nickname with a note (a string has no mean over orderings)."""
    _, out, _ = eval_out(capsys, "-q", "-m", "relstring.3", *TEST)
    assert out == "".join(
        f"relstring_3           \t{qid}\t'{text}'\n"
        for qid, text in (("301", "000"), ("302", "110"), ("303", "000"))
    )
    _, out, _ = eval_out(capsys, "-m", "relstring", *TEST)
    assert out == ""
    code = main(["eval", "-q", "-m", "relstring", *TEST])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.count("\n") == 1
    assert "names the relevance values of one ordering" in captured.err
    assert main(["eval", "-q", "-m", "all_trec", *TEST]) == 0
    captured = capsys.readouterr()
    assert "all_trec leaves out relstring: it names one ordering" in captured.err
    assert "relstring" not in captured.out and "\tall\taware\n" in captured.out
    code = main(["eval", "-q", "-m", "relstring", "-m", "P@10", *TEST])
    assert code == 2 and "trec_eval's layout only" in capsys.readouterr().err
    code, out, err = eval_out(capsys, "-q", "-m", "relstring", "--format", "csv", *TEST)
    assert code == 2 and out == "" and "expected --format trec" in err
    code, out, err = eval_out(capsys, "-q", "-m", "all_trec", "--format", "csv", *TEST)
    assert code == 0 and "all_trec leaves out relstring: it prints in trec format only" in err


def test_quicktest_meas_params(capsys):
    """quicktest's out.test.meas_params, byte for byte: iprec at 0.25 and 0.75,
    Rprec_mult at 0.2, 0.35 and 5, utility.2,-1,0,0, 11pt_avg over .25, .5, .75 and
    ndcg with trec_eval's gains 1=3,2=9,4=4.5 (printed as typed)."""
    code, out, err = eval_out(capsys, "-q", *flags(*MEAS_PARAMS), *TEST)
    assert code == 0, err
    assert out == (GOLDEN / "meas_params.q").read_text()
    assert err == ""


def test_rbp_prints_as_trec_eval_10_names_it(capsys):
    _, out, _ = eval_out(capsys, "-q", *flags("rbp.p=0.5", "map"), *TEST)
    assert out == (GOLDEN.parent / "trec_eval_10" / "rbp_map.q").read_text()
    _, out, _ = eval_out(capsys, *flags("rbp", "rbp.p=0.5@10"), *TEST)  # tiecore's RBP
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == [
        "runid", "num_q", "RBP", "RBP(p=0.5,gain=scaled)@10",
    ]  # fmt: skip


def test_first_parameters_win_as_in_trec_eval(capsys):
    code, out, err = eval_out(capsys, *flags("P.5", "P", "P.10"), *TEST)
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["P_5"]
    assert "trec_eval takes the first parameters given for P (P.5)" in err


def test_mixed_with_tiecore_names_keeps_tiecore_s_layout(capsys):
    """A tiecore name on the line: tiecore's layout (runid, num_q, the order asked for),
    trec_eval's names with trec_eval's meaning (counts summed, as integers; gm_map for
    all only; bare families expanded)."""
    _, out, _ = eval_out(capsys, "-q", *flags("P@10", "num_ret", "gm_map", "success"), *TEST)
    lines = [line.split("\t") for line in out.splitlines()]
    assert [name.strip() for name, _, _ in lines[:2]] == ["runid", "num_q"]
    assert ["num_ret               ", "301", "500"] in lines
    assert ["num_ret               ", "all", "1500"] in lines
    assert [qid for name, qid, _ in lines if name.strip() == "gm_map"] == ["all"]
    assert [n.strip() for n, q, _ in lines if q == "all"][2:] == [
        "P@10", "num_ret", "gm_map", "success_1", "success_5", "success_10",
    ]  # fmt: skip
    _, out, _ = eval_out(capsys, *flags("num_ret", "NumRet"), "--format", "csv", *TEST)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["measure"], float(r["value"])) for r in rows] == [("num_ret", 1500.0)]
    _, out, _ = eval_out(capsys, *flags("NumRet", "P@10"), *TEST)  # tiecore's: the mean
    assert "NumRet                \tall\t500.0000\n" in out


def test_tie_aware_keeps_trec_eval_s_layout(capsys):
    code = main(["eval", "-m", "official", *TEST])  # aware: gm_map has no exact value
    captured = capsys.readouterr()
    assert code == 0
    golden = (GOLDEN / "official.q").read_text().splitlines()
    names = [line.split("\t")[0] for line in golden if "\tall\t" in line and "gm_map" not in line]
    first, *rest = captured.out.splitlines()  # the mode named first, then trec_eval's lines
    assert first == f"{'ties':<22}\tall\taware"
    assert [line.split("\t")[0] for line in rest] == names
    assert "official leaves out gm_map" in captured.err


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("11pt_avg..5,.25", "out of order"),
        ("11pt_avg..5,1.5", "outside 0 to 1"),
        ("G.1", "no level=gain pair"),
        ("utility.1,2", "four: utility.a,b,c,d"),
        ("Rprec_mult.-1,0.5", "mult must be from 0"),
        ("P.0", "cutoff 0"),
        ("P.5,5", "given twice"),
        ("P.", "no parameters"),
        ("P.abc", "'abc' is no number"),
        ("map.5", "map takes no parameters"),
        ("set_F.abc", "'abc' is no list of numbers"),
        ("official.5", "nickname"),
        ("iprec_at_recall.1.5", "from 0 to 1"),
        ("ndcg.1", "no level=gain pair"),
        ("all_prefs", "measures of other judgments than qrels (expected -R prefs"),
    ],
)
def test_bad_trec_eval_flags_are_one_line_errors(capsys, value, needle):
    code, out, err = eval_out(capsys, "-m", value, *TEST)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_table_and_nicknames_agree_with_all_trec():
    """The table's all_trec lines are interop.ALL_TREC's and pytrec's keys, in its order."""
    from tiecore import pytrec

    plan = trec_plan(["all_trec"])
    listed = [printed for printed, _ in plan.lines]
    assert [p for p in listed if p != "relstring"] == [t for t, _ in ALL_TREC]
    keys = [key for keys in pytrec._DEFAULTS.values() for key in keys]
    assert [k for k in keys if k not in ("runid", "num_q")] == listed
    assert listed.index("Rprec_mult_0.20") == listed.index("infAP") + 2  # trec_eval's order
    assert listed.index("gm_bpref") == listed.index("infAP") + 1
    assert ("Rprec_mult_1.00", "Rprec") in plan.lines and ("Rprec", "Rprec") in plan.lines
    assert plan.runid and plan.num_q and plan.trec
    assert set(NICKNAMES["official"]) <= set(TABLE)
    assert trec_plan(["P"]).names == [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]


def test_a_count_s_summary_is_the_sum_in_every_mode(capsys):
    """num_rel_ret cut at 67 docs, inside query 301's tie of a relevant and a judged
    non-relevant doc (ranks 67-68): a fraction tie-aware, whose all row is the sum of the
    queries' rows, with the variance, min and max of that sum (queries independent)."""
    argv = [*flags("num_rel_ret"), "-M", "67", "-q", "--spread", "--format", "csv"]
    code = main(["eval", *TEST, *argv])
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert code == 0 and {r["measure"] for r in rows} == {"num_rel_ret"}
    queries = [r for r in rows if r["qid"]]
    (summary,) = [r for r in rows if not r["qid"]]
    assert float(summary["var"]) > 0
    for column in ("value", "var", "min", "max"):
        total = sum(float(r[column]) for r in queries)
        assert float(summary[column]) == pytest.approx(total, rel=1e-12, abs=1e-12), column
    assert main(["eval", *TEST, *flags("num_rel_ret"), "-M", "67"]) == 0
    total = sum(float(r["value"]) for r in queries)
    assert total != round(total)
    assert (
        capsys.readouterr().out
        == f"{'ties':<22}\tall\taware\nnum_rel_ret           \tall\t{total:.4f}\n"
    )
    _, out, _ = eval_out(capsys, *flags("num_rel_ret"), "-M", "67", *TEST)  # one order
    assert out == f"num_rel_ret           \tall\t{round(float(summary['min']))}\n" or out == (
        f"num_rel_ret           \tall\t{round(float(summary['max']))}\n"
    )


MEANS = ["-m", "P.200,1000", "-m", "set_P", "-m", "map"]


@pytest.mark.parametrize(
    ("golden", "flags"),
    [
        ("robust03_SABIR03BASE.means", MEANS),
        ("robust03_SABIR03BASE.cM.means", ["-c", "-M", "100", *MEANS]),
        ("robust03_rutcor03100.means", MEANS),
        ("robust03_rutcor03100.cM.means", ["-c", "-M", "100", *MEANS]),
        ("robust03_VTcdhgp1.l2.means", ["-l", "2", "-m", "map", "-m", "P.200,1000"]),
    ],
)
def test_means_are_summed_in_trec_eval_s_order(golden, flags, capsys):
    """The mean over queries adds the queries one after the other, as trec_eval does:
    numpy's pairwise sum printed P_200 0.0961 where trec_eval prints 0.0960 (SABIR03BASE's
    exact mean is 0.09605)."""
    run = robust_run(f"input.{golden.split('_', 1)[1].split('.')[0]}.gz")
    code = main(["eval", "--ties", "oblivious", *flags, str(ROBUST_QRELS), str(run)])
    assert code == 0
    assert capsys.readouterr().out == (GOLDEN / golden).read_text()


def test_a_query_s_terms_are_summed_in_rank_order(capsys):
    """Per query, AP, map_cut, nDCG, bpref add their terms rank by rank as trec_eval's
    loops do, and set_F divides as it divides: numpy's pairwise sums printed MU03rob01's
    query 419 map_cut_15 as 0.1312 where trec_eval prints 0.1313 (exactly 0.13125)."""
    argv = ["-q", *flags("map_cut", "ndcg", "bpref", "set_F", "map")]
    code = main(
        [
            "eval",
            "--ties",
            "oblivious",
            *argv,
            str(ROBUST_QRELS),
            str(robust_run("input.MU03rob01.gz")),
        ]
    )
    assert code == 0
    assert capsys.readouterr().out == (GOLDEN / "robust03_MU03rob01.sums.q").read_text()


def test_the_mean_is_trec_eval_s_loop():
    """Every summary double of every shared Robust03 run: the per-query values added one
    after the other in the queries' order, divided by their count (trec_eval's loop)."""
    qrels = tiecore.read_qrels(ROBUST_QRELS)
    for path in ROBUST_RUNS:
        found = tiecore.evaluate(
            tiecore.read_run(path), qrels, ["AP", "P@200", "nDCG@10", "Bpref"],
            ties="oblivious", per_query=True,
        )  # fmt: skip
        for measure, rows in found.groupby("measure", sort=False):
            values = rows.loc[rows["qid"].notna(), "value"].tolist()
            total = 0.0
            for value in values:
                total += value
            (mean,) = rows.loc[rows["qid"].isna(), "value"]
            assert mean == total / len(values), (path.name, measure)


#: The shared Robust03 runs whose -q -m all_trec the fast tier checks (the slow one, all 17).
FAST_RUNS = ("SABIR03BASE", "rutcor03100", "VTcdhgp1")


def _all_trec_matches(name: str, capsys) -> None:
    run = robust_run(f"input.{name}.gz")
    code = main(
        ["eval", "--ties", "oblivious", "-q", "-m", "all_trec", str(ROBUST_QRELS), str(run)]
    )
    assert code == 0
    out = capsys.readouterr().out
    golden = gzip.decompress((GOLDEN / "robust03_all_trec" / f"{name}.q.gz").read_bytes())
    assert out == golden.decode()  # byte for byte, MU03rob01's query 419 map_cut_15 too


@pytest.mark.parametrize("name", FAST_RUNS)
def test_robust03_all_trec_per_query(name, capsys):
    """``-q -m all_trec`` on shared Robust03 runs: trec_eval 9.0.8's bytes, every line."""
    _all_trec_matches(name, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("path", ROBUST_RUNS, ids=lambda path: path.name)
def test_robust03_all_trec_per_query_every_run(path, capsys):
    """The same on all 17 shared Robust03 runs."""
    _all_trec_matches(path.name.removeprefix("input.").removesuffix(".gz"), capsys)

"""trec_eval's input flags in ``tiecore eval``: ``-Z``, ``-N``, ``-R``.

Goldens are trec_eval 9.0.8's own outputs for quicktest's command lines
(``trec_eval_908/``, provenance in its README.md), compared byte for byte; the tie-aware
values are checked against the mean, variance and range over every ordering of the
tied docs, each ordering evaluated in oblivious mode.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from reference import orderings
from shared_data import TREC_EVAL

from tiecore.cli import main
from tiecore.cli.trec_eval_names import TABLE

GOLDEN = Path(__file__).parent / "trec_eval_908"
TEST = [str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")]


def eval_out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["eval", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _family(printed: str) -> str:
    """trec_eval's measure of a printed name (``ZP_10`` -> ``P``, ``Zset_F`` -> ``set_F``)."""
    name = printed.strip()
    if name not in TABLE and name.startswith("Z"):
        name = name[1:]
    return name if name in TABLE else name.rsplit("_", 1)[0]


def tiecore_has(golden: str) -> tuple[str, set[str]]:
    """The golden's lines of the measures tiecore has, and the measures it lacks.

    Once every measure of trec_eval's table is tiecore's (another branch adds the
    rest of all_trec), the lines are the whole golden: the test is then byte for
    byte over the whole output, with nothing to switch.
    """
    lines = golden.splitlines(keepends=True)
    lacking = {_family(line.split("\t")[0]) for line in lines}
    lacking = {name for name in lacking if TABLE[name].ours is None}
    kept = [line for line in lines if _family(line.split("\t")[0]) not in lacking]
    return "".join(kept), lacking


# ---------------------------------------------------------------------------- -Z


def test_zscore_all_trec_prints_trec_eval_s_lines(capsys):
    """quicktest's ``-q -m all_trec -Z zscores_file`` (out.test.aqZ): every line of a
    measure tiecore has, byte for byte; -1000000 where the file lacks a pair (gm_map)
    or a zero stddev meets another value (num_rel), ``   nan`` for its nan rows."""
    zscores = str(GOLDEN / "zscores_file")
    code, out, err = eval_out(
        capsys, "--ties", "oblivious", "-q", "-m", "all_trec", "-Z", zscores, *TEST
    )
    assert code == 0, err
    expected, lacking = tiecore_has((GOLDEN / "all_trec.qZ").read_text())
    assert out == expected
    if not lacking:  # every measure of all_trec is tiecore's: the whole file
        assert out == (GOLDEN / "all_trec.qZ").read_text()
    assert "Znum_rel               \tall\t-2000000.0000\n" in out
    assert "Zset_F                 \tall\t   nan\n" in out
    assert "has no mean and stddev for 6 query and measure pairs (301 gm_map, 302 gm_map" in err


def test_zscore_without_q_prints_the_all_lines(capsys):
    zscores = str(GOLDEN / "zscores_file")
    _, out, _ = eval_out(capsys, "--ties", "oblivious", "-m", "all_trec", "-Z", zscores, *TEST)
    expected, _ = tiecore_has((GOLDEN / "all_trec.qZ").read_text())
    assert out == "".join(line for line in expected.splitlines(True) if "\tall\t" in line)


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _csv(text: str) -> dict[tuple[str, str], dict[str, float]]:
    import csv
    import io

    rows = csv.DictReader(io.StringIO(text))
    return {
        (row["qid"], row["measure"]): {
            k: float(row[k]) for k in ("value", "var", "min", "max") if k in row
        }
        for row in rows
    }


def test_zscore_aware_is_the_mean_over_orderings(capsys, tmp_path):
    """Aware -Z: the value, variance and range of the z-score over every ordering of
    the tied docs, each ordering evaluated oblivious (a negative stddev swaps the
    bounds); the mean's value, variance (sum over Q**2) and range alike."""
    qrels = _write(tmp_path / "qrels", "1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 d 0\n2 0 a 1\n2 0 e 1\n")
    scores = {"1": {"a": 2.0, "b": 2.0, "c": 2.0, "d": 1.0}, "2": {"a": 1.0, "e": 1.0, "b": 1.0}}
    zfile = _write(
        tmp_path / "z",
        "1 map 0.4 0.2\n1 P_2 0.5 -0.25\n2 map 0.9 0.1\n2 P_2 0.5 0.5\n"
        "1 num_ret 3 1\n2 num_ret 3 0\n",
    )
    flags = ["-q", "-m", "map", "-m", "P.2", "-m", "num_ret", "-Z", zfile, "--format", "csv"]

    def run_text(order: dict[str, list[str]]) -> str:
        return "".join(
            f"{qid} Q0 {doc} {r} {len(docs) - r} t\n"
            for qid, docs in order.items()
            for r, doc in enumerate(docs)
        )

    per_order = []
    groups = {qid: list(orderings(list(s.values()), list(s))) for qid, s in scores.items()}
    for first in groups["1"]:
        for second in groups["2"]:
            run = _write(tmp_path / "run", run_text({"1": list(first), "2": list(second)}))
            code, out, err = eval_out(capsys, "--ties", "oblivious", *flags, qrels, run)
            assert code == 0, err
            per_order.append(_csv(out))
    run = _write(
        tmp_path / "tied",
        "".join(f"{q} Q0 {d} 0 {s} t\n" for q, docs in scores.items() for d, s in docs.items()),
    )
    code, out, err = eval_out(capsys, "--ties", "aware", "--spread", *flags, qrels, run)
    assert code == 0, err
    aware = _csv(out)
    assert set(aware) == set(per_order[0])
    for key, got in aware.items():
        values = [each[key]["value"] for each in per_order]
        mean = sum(values) / len(values)
        assert got["value"] == pytest.approx(mean, abs=1e-12)
        assert got["min"] == pytest.approx(min(values), abs=1e-12)
        assert got["max"] == pytest.approx(max(values), abs=1e-12)
        if key[0] != "":  # a query: its variance over its orderings
            var = sum((v - mean) ** 2 for v in values) / len(values)
            assert got["var"] == pytest.approx(var, abs=1e-12)
        assert got["min"] - 1e-12 <= got["value"] <= got["max"] + 1e-12
    mean_var = aware[("", "Zmap")]["var"]
    assert mean_var == pytest.approx(
        (aware[("1", "Zmap")]["var"] + aware[("2", "Zmap")]["var"]) / 4
    )


def test_zscore_aware_refuses_a_zero_stddev_of_a_varying_value(capsys, tmp_path):
    qrels = _write(tmp_path / "qrels", "1 0 a 1\n1 0 b 0\n")
    run = _write(tmp_path / "run", "1 Q0 a 0 1 t\n1 Q0 b 0 1 t\n")
    zfile = _write(tmp_path / "z", "1 P_1 0.5 0\n")
    code, _, err = eval_out(capsys, "--ties", "aware", "-m", "P.1", "-Z", zfile, qrels, run)
    assert code != 0
    assert err.count("\n") == 1 and "stddev 0 for query 1, measure P_1" in err


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("1 map 0.1\n", "line 1", "3 fields (expected 4 fields: qid measure mean stddev)"),
        ("1 map 0.1 0.2\n\n", "line 2", "a blank line"),
        ("1 map 0.1 0.2\n1 P_5 x 0.2\n", "line 2", "mean 'x' is no number"),
        ("1 map 0.1 0.2 9\n", "line 1", "5 fields"),
        ("1 map 0.1 0.2\n1 map 0.1 0.2\n", "line 2", "given again (first on line 1)"),
        ("", "", "is empty"),
    ],
)
def test_zscore_file_errors_name_file_and_line(capsys, tmp_path, text, where, what):
    zfile = _write(tmp_path / "z", text)
    code, out, err = eval_out(capsys, "--ties", "oblivious", "-m", "map", "-Z", zfile, *TEST)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and zfile in err and where in err and what in err


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["-m", "P@10"], "-Z goes with trec_eval's -m names only"),
        (["-m", "map", "--ties", "sampled"], "not sampled"),
        (["-m", "map", "-c"], "-Z with -c"),
    ],
)
def test_zscore_usage_errors(capsys, argv, what):
    code, _, err = eval_out(capsys, *argv, "-Z", str(GOLDEN / "zscores_file"), *TEST)
    assert code == 2 and what in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "tiebreak"),
    [
        ([], "trec_eval"),
        (["--trec-eval", "10"], "trec_eval_double"),
        (["--tiebreak", "docno_asc"], "docno_asc"),
    ],
)
def test_zscore_csv_names_the_ordering_eval_used(capsys, argv, tiebreak):
    """-Z's csv names the oblivious ordering as eval's own csv does: trec_eval 10's
    doubles under --trec-eval 10 (it said trec_eval, 9.0.8's float32 ordering, before)."""
    flags = ["--ties", "oblivious", "-m", "map", "--format", "csv", *argv]
    code, plain, err = eval_out(capsys, *flags, *TEST)
    assert code == 0, err
    code, zscored, err = eval_out(capsys, *flags, "-Z", str(GOLDEN / "zscores_file"), *TEST)
    assert code == 0, err
    for out in (plain, zscored):
        header, first = out.splitlines()[:2]
        assert dict(zip(header.split(","), first.split(","), strict=True))["tiebreak"] == tiebreak


def test_zscore_nan_prints_as_c_does():
    assert f"{math.nan:6.4f}" == "   nan"


# ---------------------------------------------------------------------------- -N


@pytest.mark.parametrize(
    ("golden", "argv"),
    [
        ("utility_N.q", ["-q", "-N", "200000", "-m", "utility.2,-1,-0.5,0.001", "-m", "num_ret"]),
        ("set_N", ["-N", "5000", "-m", "set"]),
    ],
)
def test_num_docs_in_coll_fills_utility_s_fourth_cell(capsys, golden, argv):
    """``-N`` counts the non-relevant docs not retrieved as N + RR - NR - R (trec_eval
    9.0.8's own lines; ``set`` lacks set_relative_P and set_map in tiecore)."""
    code, out, err = eval_out(capsys, "--ties", "oblivious", *argv, *TEST)
    assert code == 0, err
    expected, _ = tiecore_has((GOLDEN / golden).read_text())
    assert out == expected


def test_num_docs_in_coll_reaches_tiecore_s_utility_and_aware_mode(capsys):
    """-N sets tiecore's Utility too, in every mode: a constant d * N added per query."""
    base = ["-m", "Utility(d=0.5)", "--format", "csv", *TEST]
    _, plain, _ = eval_out(capsys, "--ties", "aware", "--spread", *base)
    _, with_n, _ = eval_out(capsys, "--ties", "aware", "--spread", "-N", "1000", *base)
    rows, shifted = _csv(plain), _csv(with_n)
    assert len(rows) == len(shifted) > 0
    for (qid, _), row in rows.items():
        other = shifted[qid, "Utility(d=0.5,docs=1000.0)"]
        for k in ("value", "min", "max"):  # shifted by d * N
            assert other[k] == pytest.approx(row[k] + 500.0)
        assert other["var"] == pytest.approx(row["var"])  # unchanged


@pytest.mark.parametrize("value", ["abc", "-5"])
def test_num_docs_in_coll_refuses_what_is_no_count(capsys, value):
    code, _, err = eval_out(capsys, "-N", value, "-m", "utility", *TEST)
    assert code == 2 and "no number of docs" in err


# ------------------------------------------------------------------ -R qrels_jg

QRELS_JG = str(GOLDEN / "qrels.123")
TRUNC = str(TREC_EVAL / "results.trunc")


@pytest.mark.parametrize(
    ("golden", "argv"),
    [
        ("qrels_jg.q", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", QRELS_JG, TEST[1]]),
        (
            "qrels_jg.cM",
            ["-c", "-M", "100", "-m", "qrels_jg", "-R", "qrels_jg", QRELS_JG, TRUNC],
        ),
    ],
)
def test_qrels_jg_prints_trec_eval_s_bytes(capsys, golden, argv):
    """quicktest's ``-m qrels_jg -q -R qrels_jg qrels.123 results.test``
    (out.test.qrels_jg), and with -c -M 100 on the truncated run."""
    code, out, err = eval_out(capsys, "--ties", "oblivious", *argv)
    assert code == 0, err
    assert out == (GOLDEN / golden).read_text()


def test_qrels_jg_aware_is_the_mean_over_orderings(capsys, tmp_path):
    """Aware avgjg: the mean over every ordering of the tied docs of the oblivious
    average over groups (one ordering shared by the groups)."""
    qrels = _write(
        tmp_path / "jg",
        "1 u a 1\n1 u b 0\n1 u c 1\n1 v a 0\n1 v b 1\n1 v d 1\n2 u a 1\n2 w e 2\n",
    )
    scores = {"1": {"a": 2.0, "b": 2.0, "c": 2.0, "d": 1.0}, "2": {"a": 1.0, "e": 1.0, "b": 1.0}}
    flags = ["-q", "-m", "map_avgjg", "-m", "P_avgjg.1,2", "-m", "Rprec_mult_avgjg.0.5,1.0"]
    flags += ["-R", "qrels_jg", "--format", "csv"]
    per_order = []
    groups = {qid: list(orderings(list(s.values()), list(s))) for qid, s in scores.items()}
    for first in groups["1"]:
        for second in groups["2"]:
            text = "".join(
                f"{qid} Q0 {doc} {r} {len(docs) - r} t\n"
                for qid, docs in (("1", first), ("2", second))
                for r, doc in enumerate(docs)
            )
            run = _write(tmp_path / "run", text)
            code, out, err = eval_out(capsys, "--ties", "oblivious", *flags, qrels, run)
            assert code == 0, err
            per_order.append(_csv(out))
    run = _write(
        tmp_path / "tied",
        "".join(f"{q} Q0 {d} 0 {s} t\n" for q, docs in scores.items() for d, s in docs.items()),
    )
    code, out, err = eval_out(capsys, "--ties", "aware", *flags, qrels, run)
    assert code == 0, err
    aware = _csv(out)
    assert set(aware) == set(per_order[0]) and len(aware) == 3 * 5
    for key, got in aware.items():
        values = [each[key]["value"] for each in per_order]
        assert got["value"] == pytest.approx(sum(values) / len(values), abs=1e-12)


def test_qrels_jg_spread_in_csv(capsys, tmp_path):
    """--spread: var, min and max of the average over the groups, which share the
    ordering (tests/evaluation/test_judgment_groups.py: against every ordering).  Here
    P@1's groups are never both fulfilled: var 0 although each group's P@1 varies."""
    qrels = _write(tmp_path / "jg", "1 u a 1\n1 u b 0\n1 v a 0\n1 v b 1\n")
    run = _write(tmp_path / "run", "1 Q0 a 0 1 t\n1 Q0 b 0 1 t\n1 Q0 c 0 2 t\n")
    argv = ["--spread", "--format", "csv", "-q", "-m", "P_avgjg.1,2", "-m", "map_avgjg"]
    code, out, err = eval_out(capsys, *argv, "-R", "qrels_jg", qrels, run)
    assert code == 0, err
    rows = _csv(out)
    assert rows["1", "P_avgjg_2"] == {"value": 0.25, "var": 0.0, "min": 0.25, "max": 0.25}
    assert rows["1", "map_avgjg"]["var"] == pytest.approx(0.0, abs=1e-15)
    for row in rows.values():
        assert row["min"] - 1e-12 <= row["value"] <= row["max"] + 1e-12


def test_qrels_jg_sampled_prints_the_mean_and_its_uncertainty(capsys, tmp_path):
    """--ties sampled: the mode line, trec_eval's lines of the means, std and stderr in
    csv, the same numbers for the same seed (tests/evaluation/test_judgment_groups.py:
    each draw one ordering shared by the groups)."""
    qrels = _write(tmp_path / "jg", "1 u a 1\n1 u b 0\n1 v a 0\n1 v b 1\n")
    run = _write(tmp_path / "run", "1 Q0 a 0 1 t\n1 Q0 b 0 1 t\n1 Q0 c 0 2 t\n")
    argv = ["--ties", "sampled", "--samples", "400", "-m", "P_avgjg.2", "-R", "qrels_jg"]
    code, out, err = eval_out(capsys, *argv, qrels, run)
    assert code == 0, err
    # P@2: c first, then a (u's 1/2, v's 0) or b (0, 1/2): 1/4 in every ordering
    assert out == (
        "ties                  \tall\tsampled(samples=400,seed=0)\n"
        "P_avgjg_2             \tall\t0.2500\n"
    )
    code, out, err = eval_out(capsys, *argv, "-m", "map_avgjg", "--format", "csv", qrels, run)
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header == "run,qid,measure,value,std,stderr,ties,tiebreak,samples,seed"
    ap = [row.split(",") for row in rows if ",map_avgjg," in row]
    # AP per group: 1/2 (its doc second) or 1/3 (third); the average 5/12 whatever the order
    assert ap and all(float(r[3]) == pytest.approx(5 / 12) and float(r[4]) < 1e-12 for r in ap)
    assert eval_out(capsys, *argv, "-m", "map_avgjg", "--format", "csv", qrels, run)[1] == out


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("1 u a 1\n1 u b\n", "line 2", "3 fields (expected 4 fields: qid jg docno rel)"),
        ("1 u a 1\n1 u b x\n", "line 2", "rel 'x' is no integer"),
        ("1 u a 1\n1 v a 0\n1 u a 0\n", "line 3", "judged again for query 1, group u"),
    ],
)
def test_qrels_jg_errors_name_file_and_line(capsys, tmp_path, text, where, what):
    qrels = _write(tmp_path / "jg", text)
    code, out, err = eval_out(capsys, "-m", "qrels_jg", "-R", "qrels_jg", qrels, TEST[1])
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and qrels in err and where in err and what in err


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["-m", "map", "-R", "qrels_jg"], "-R qrels_jg: map cannot read these judgments"),
        (["-m", "P@10", "-R", "qrels_jg"], "tiecore's names cannot read"),
        (["-m", "map_avgjg"], "(expected -R qrels_jg)"),
    ],
)
def test_qrels_jg_usage_errors(capsys, argv, what):
    code, _, err = eval_out(capsys, *argv, QRELS_JG, TEST[1])
    assert code == 2 and what in err and err.count("\n") == 1


# ------------------------------------------------------------ -R prefs, qrels_prefs


def _golden_file(name: str) -> str:
    return str(GOLDEN / name)


TIES = ["prefs.ties", "results.ties"]
QP_TIES = ["qrels_prefs.ties", "results.ties"]
PREFS_CASES = {
    "prefs.q": ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"],
    "qrels_prefs.q": ["-m", "all_prefs", "-q", "-R", "qrels_prefs", *TEST],
    "prefs.ties.qM": ["-q", "-M", "4", "-m", "all_prefs", "-R", "prefs", *TIES],
    "qrels_prefs.ties.qc": ["-q", "-c", "-m", "all_prefs", "-R", "qrels_prefs", *QP_TIES],
}


@pytest.mark.parametrize("golden", list(PREFS_CASES))
def test_prefs_print_trec_eval_s_bytes(capsys, golden):
    """quicktest's ``-m all_prefs -q -R prefs prefs.test prefs.results.test``
    (out.test.prefs) and ``-m all_prefs -q -R qrels_prefs qrels.test results.test``
    (out.test.qrels_prefs); judgments with tied scores, a JG of three sub-groups, -M 4,
    and qrels_prefs with -c."""
    argv = PREFS_CASES[golden]
    argv = [*argv[:-2], _golden_file(argv[-2]), _golden_file(argv[-1])]
    if golden == "qrels_prefs.q":  # trec_eval's own qrels and run (shared test data)
        argv[-2:] = TEST
    code, out, err = eval_out(capsys, "--ties", "oblivious", *argv)
    assert code == 0, err
    assert out == (GOLDEN / golden).read_text()


def test_prefs_of_a_large_run_print_trec_eval_s_bytes(capsys):
    """robust03's qrels as qrels_prefs (one JG of two or three classes per query, 100
    queries, 8.7 million preferences) and MU03rob01: trec_eval 9.0.8's lines, per query
    and summary (prefs_pair's terms summed pair by pair in its row order)."""
    from shared_data import ROBUST_QRELS, robust_run

    argv = ["--ties", "oblivious", "-q", "-m", "all_prefs", "-R", "qrels_prefs"]
    code, out, err = eval_out(
        capsys, *argv, str(ROBUST_QRELS), str(robust_run("input.MU03rob01.gz"))
    )
    assert code == 0, err
    assert out == (GOLDEN / "robust03_MU03rob01.qrels_prefs.q").read_text()


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("1 g s a 1\n1 g s b\n", "line 2", "4 fields (expected 5 fields: qid jg jsg docno"),
        ("1 g s a 1\n1 g s b one\n", "line 2", "rel_level 'one' is no number"),
        ("1 g s a 1\n\n1 g s b 0\n", "line 2", "a blank line"),
        ("1 g s a 1\n1 g s b 0\n1 g t a 0\n", "line 3", "both level 0 and a level above 0"),
        ("1 g s a 2\n1 g s b 1\n1 g t b 2\n1 g t a 1\n", "line", "inconsistent preferences"),
        ("1 g s a 2\n1 g s a 1\n", "line", "two different rel_levels in one judgment sub-group"),
    ],
)
def test_prefs_errors_name_file_and_line(capsys, tmp_path, text, where, what):
    prefs = _write(tmp_path / "prefs", text)
    run = _write(tmp_path / "run", "1 Q0 a 0 2 t\n1 Q0 b 0 1 t\n")
    argv = ["--ties", "oblivious", "-m", "all_prefs", "-R", "prefs", prefs, run]
    code, out, err = eval_out(capsys, *argv)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and prefs in err and where in err and what in err


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["-m", "map", "-R", "prefs"], "-R prefs: map cannot read these judgments"),
        (["-m", "prefs_simp"], "(expected -R prefs or -R qrels_prefs)"),
        (["-m", "prefs_avgjg_Rnonrel", "-R", "prefs", "--spread"], "no exact variance and range"),
    ],
)
def test_prefs_usage_errors(capsys, argv, what):
    files = [_golden_file("prefs.test"), _golden_file("prefs.results.test")]
    code, _, err = eval_out(capsys, *argv, *files)
    assert code == 2 and what in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("1 g a 1\n1 g b\n", "line 2", "3 fields (expected 4 fields: qid jg docno rel_level)"),
        ("1 g a 1\n1 g b x\n", "line 2", "rel_level 'x' is no number"),
        ("1 g a 1\n1 g a 0\n", "line", "two different rel_levels in one judgment sub-group"),
    ],
)
def test_qrels_prefs_errors_name_file_and_line(capsys, tmp_path, text, where, what):
    prefs = _write(tmp_path / "qprefs", text)
    run = _write(tmp_path / "run", "1 Q0 a 0 2 t\n1 Q0 b 0 1 t\n")
    argv = ["--ties", "oblivious", "-m", "all_prefs", "-R", "qrels_prefs", prefs, run]
    code, out, err = eval_out(capsys, *argv)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and prefs in err and where in err and what in err


def test_zscore_of_the_preference_measures(capsys):
    """-Z with -R qrels_prefs: trec_eval 9.0.8's lines (the file has the prefs_* rows)."""
    argv = ["-q", "-m", "all_prefs", "-R", "qrels_prefs", "-Z", _golden_file("zscores_file")]
    code, out, err = eval_out(capsys, "--ties", "oblivious", *argv, *TEST)
    assert code == 0, err
    assert out == (GOLDEN / "qrels_prefs.qZ").read_text()


def test_aware_prefs_name_their_mode_and_leave_out_the_recounts(capsys):
    """Aware all_prefs: the mode line and the exact expectations, the Rnonrel ones too
    (tests/evaluation/test_prefs.py); with --spread a note leaves those out (they have
    no exact variance and range)."""
    argv = ["-m", "all_prefs", "-R", "prefs", *map(_golden_file, TIES)]
    code, out, err = eval_out(capsys, "--ties", "aware", *argv)
    assert code == 0 and err == ""
    assert out.startswith("ties                  \tall\taware\n")
    assert "prefs_num_prefs_ful   \tall\t30.5000\n" in out
    assert "prefs_avgjg_Rnonrel   \tall\t" in out and "prefs_avgjg_Rnonrel_ret\tall\t" in out
    code, out, err = eval_out(capsys, "--spread", *argv)
    assert code == 0 and "Rnonrel" not in out
    assert err == (
        "tiecore: all_prefs --spread leaves out prefs_avgjg_Rnonrel, prefs_avgjg_Rnonrel_ret: "
        "no exact variance and range (use --ties aware without --spread, or --ties "
        "sampled, for them)\n"
    )


def test_aware_rnonrel_without_an_exact_value_is_one_line(capsys, tmp_path):
    """A JG whose retrieved-only recount keeps 2 of 3 tied non-relevant docs, only one
    of which holds a preference among the retrieved docs: its ratio is 0/0 in a third
    of the orderings, which makes trec_eval's query value 0 there, so the expectation
    is no mean over the JGs: asked for, one line naming sampled mode; brought by
    all_prefs, left out with a note.  prefs_avgjg_Rnonrel
    itself has its exact value: trec_eval 9.0.8 gives 0.5 in 4 of the 6 orderings and
    0 in 2, mean 1/3."""
    prefs = _write(tmp_path / "prefs", "1 g s a 5\n1 g s b 0\n1 g t e 6\n1 g t c 0\n1 g t d 0\n")
    run = _write(tmp_path / "run", "1 Q0 a 0 2 r\n1 Q0 b 0 1 r\n1 Q0 c 0 1 r\n1 Q0 d 0 1 r\n")
    code, out, err = eval_out(capsys, "-q", "-m", "prefs_avgjg_Rnonrel", "-R", "prefs", prefs, run)
    assert code == 0, err
    assert "prefs_avgjg_Rnonrel   \t1\t0.3333\n" in out
    argv = ["-m", "prefs_avgjg_Rnonrel_ret", "-R", "prefs", prefs, run]
    code, out, err = eval_out(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "prefs_avgjg_Rnonrel_ret has no exact tie-aware value" in err
    assert "--ties sampled" in err
    code, out, err = eval_out(capsys, "-q", "-m", "all_prefs", "-R", "prefs", prefs, run)
    assert code == 0 and "Rnonrel_ret" not in out and "prefs_avgjg_Rnonrel   \t1\t0.3333\n" in out
    assert err == (
        "tiecore: all_prefs leaves out prefs_avgjg_Rnonrel_ret: no exact tie-aware value for "
        "some query (use --ties sampled for them)\n"
    )


def test_aware_prefs_spread_in_csv(capsys):
    """--spread: var, min and max of every measure but the left-out Rnonrel ones, the
    value within its range."""
    argv = ["--spread", "--format", "csv", "-q", "-m", "all_prefs", "-R", "prefs"]
    code, out, err = eval_out(capsys, *argv, *map(_golden_file, TIES))
    assert code == 0, err
    rows = _csv(out)
    assert rows and not any("Rnonrel" in measure for _, measure in rows)
    for row in rows.values():
        assert row["min"] - 1e-12 <= row["value"] <= row["max"] + 1e-12
        assert row["var"] >= 0


@pytest.mark.parametrize(
    "flags",
    [
        ["--ties", "oblivious", "-R", "prefs"],
        ["--ties", "aware", "-R", "prefs"],
        ["--ties", "aware", "--spread", "-R", "prefs"],
        ["--ties", "aware", "-c", "-R", "prefs"],
        ["--ties", "sampled", "--samples", "5", "-R", "prefs"],
    ],
)
def test_prefs_without_a_judged_query_is_one_line(capsys, flags):
    """prefs.test's queries are not results.test's: trec_eval 9.0.8 stops ("No queries
    with both results and relevance info", -c too); one line naming the run's file."""
    argv = [*flags, "-m", "all_prefs", _golden_file("prefs.test"), TEST[1]]
    code, out, err = eval_out(capsys, *argv)
    assert code == 2 and out == ""
    last = err.splitlines()[-1]
    assert "Traceback" not in err and TEST[1] in last
    assert "none of its queries has preference judgments" in last


def test_qrels_jg_without_a_judged_query_is_one_line(capsys):
    argv = ["-m", "qrels_jg", "-R", "qrels_jg", QRELS_JG, _golden_file("prefs.results.test")]
    code, out, err = eval_out(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "none of its queries has judgments in the qrels_jg file" in err


def test_prefs_with_no_judged_doc_retrieved(capsys, tmp_path):
    """A query whose run retrieves no judged doc (its tied docs unjudged): trec_eval's
    values in every mode, zero spread."""
    prefs = _write(tmp_path / "prefs", "1 g s a 1\n1 g s b 0\n2 g s a 2\n2 g s c 0\n")
    run = _write(tmp_path / "run", "1 Q0 x 1 1 r\n1 Q0 y 2 1 r\n2 Q0 a 1 2 r\n2 Q0 c 1 1 r\n")
    flags = ["-q", "-m", "prefs_num_prefs_poss", "-m", "prefs_simp", "-R", "prefs"]
    code, out, err = eval_out(capsys, "--ties", "oblivious", *flags, prefs, run)
    assert code == 0, err
    assert out == (
        "prefs_num_prefs_poss  \t1\t1\nprefs_simp            \t1\t0.0000\n"
        "prefs_num_prefs_poss  \t2\t1\nprefs_simp            \t2\t1.0000\n"
        "prefs_num_prefs_poss  \tall\t2\nprefs_simp            \tall\t0.5000\n"
    )
    code, out, err = eval_out(capsys, "--spread", "--format", "csv", *flags, prefs, run)
    assert code == 0, err
    rows = _csv(out)
    assert rows["1", "prefs_simp"] == {"value": 0.0, "var": 0.0, "min": 0.0, "max": 0.0}


def test_sampled_prefs_print_the_mean_and_its_uncertainty(capsys):
    """--ties sampled: the mode line, every measure (the Rnonrel ones recounted per
    drawn ordering), the same numbers for the same seed, std and stderr in csv; the
    sampled means (tests/evaluation/test_prefs.py) near aware's exact ones."""
    argv = ["-m", "all_prefs", "-R", "prefs", *map(_golden_file, TIES)]
    code, out, err = eval_out(capsys, "--ties", "sampled", "--samples", "200", *argv)
    assert code == 0, err
    assert out.startswith("ties                  \tall\tsampled(samples=200,seed=0)\n")
    assert "prefs_avgjg_Rnonrel_ret\tall\t" in out
    assert eval_out(capsys, "--ties", "sampled", "--samples", "200", *argv)[1] == out
    flags = ["--ties", "sampled", "--samples", "200", "--format", "csv", "-q"]
    code, csv_out, err = eval_out(capsys, *flags, *argv)
    assert code == 0, err
    assert csv_out.splitlines()[0] == (
        "run,qid,measure,value,std,stderr,ties,tiebreak,samples,seed"
    )
    _, aware, _ = eval_out(capsys, "--format", "csv", "-q", *argv)
    exact = _csv(aware)
    import csv
    import io

    for row in csv.DictReader(io.StringIO(csv_out)):
        key = (row["qid"], row["measure"])
        if key in exact:
            mean, stderr = float(row["value"]), float(row["stderr"])
            assert abs(mean - exact[key]["value"]) <= 4 * stderr + 1e-9, key


def test_zscore_keeps_a_text_line_as_trec_eval_prints_relstring():
    """A measure whose value is text (trec_eval's relstring, which another branch adds)
    prints per query as is, without 'Z', and has no summary line (out.test.aqZ)."""
    from tiecore.cli.trec_eval_names import TrecPlan
    from tiecore.cli.zscores import zscore_columns, zscore_text

    plan = TrecPlan(names=["RS", "AP"], lines=[("relstring", "RS"), ("map", "AP")], trec=True)
    columns = {
        "run": ["r"] * 4,
        "qid": ["1", "1", None, None],
        "measure": ["RS", "AP", "RS", "AP"],
        "value": ["'01'", 0.5, "", 0.5],
    }
    z, missing = zscore_columns(columns, {"r": 1}, plan, {("1", "map"): (0.25, 0.5)}, "f")
    assert missing == []
    assert zscore_text(z, {"r": 1}, plan, per_query=True) == (
        "relstring             \t1\t'01'\n"
        "Zmap                   \t1\t0.5000\n"
        "Zmap                   \tall\t0.5000\n"
    )

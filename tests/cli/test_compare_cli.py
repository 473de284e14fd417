"""``tiecore compare`` on the command line: -c, progress lines, refusals, undefined values.

Every output is checked against :func:`tiecore.compare.compare` called on the
same files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tiecore
from tiecore.cli import main
from tiecore.compare import compare
from tiecore.report.comparison import format_comparison

QRELS = """\
q1 0 d1 2
q1 0 d2 0
q1 0 d3 1
q2 0 e1 1
q2 0 e2 0
q3 0 x1 1
"""

RUN_A = """\
q1 Q0 d1 1 0.5 alpha
q1 Q0 d2 2 0.5 alpha
q1 Q0 d3 3 0.5 alpha
q2 Q0 e1 1 3 alpha
q2 Q0 e2 2 1 alpha
"""

RUN_B = """\
q1 Q0 d3 1 9 beta
q1 Q0 d2 2 8 beta
q1 Q0 d1 3 8 beta
q2 Q0 e2 1 2 beta
q2 Q0 e1 2 2 beta
"""

NON_NUMBER = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for key, text in [("qrels", QRELS), ("a", RUN_A), ("b", RUN_B)]:
        paths[key] = tmp_path / f"{key}.txt"
        paths[key].write_text(text)
    paths["twin"] = tmp_path / "twin.txt"
    paths["twin"].write_text(RUN_A.replace("alpha", "gamma"))
    return paths


def run_main(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_complete_averages_over_every_qrels_query(files, capsys, fmt) -> None:
    options = ["-m", "AP", "--samples", "10", "--resamples", "20", "--format", fmt]
    code, out, err = run_main(
        capsys, "compare", files["qrels"], files["a"], files["b"], "-c", *options
    )
    assert code == 0, err
    runs = tiecore.read_runs([files["a"], files["b"]])
    qrels = tiecore.read_qrels(files["qrels"])
    expected = compare(runs, qrels, "AP", samples=10, n_resamples=20, complete=True)
    assert out == format_comparison(expected, fmt)
    plain = compare(runs, qrels, "AP", samples=10, n_resamples=20)
    assert out != format_comparison(plain, fmt)  # q3 (no run has it) counts as 0


def test_progress_lines_on_stderr(files, capsys) -> None:
    argv = ["compare", files["qrels"], files["a"], files["b"], "--samples", "5", "--progress"]
    code, _, err = run_main(capsys, *argv)
    assert code == 0, err
    lines = err.splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "tiecore: [1/4] alpha",
        "tiecore: [2/4] beta",
        "tiecore: [3/4] pairs",
        "tiecore: [4/4] agreement",
    ]
    assert all(re.search(r"\(\d+\.\d\ds\)$", line) for line in lines)
    code, _, err = run_main(capsys, *argv[:-1], "--no-progress")
    assert code == 0 and err == ""


def test_too_many_samples_are_refused_in_one_line(files, capsys) -> None:
    argv = ["compare", files["qrels"], files["a"], files["b"], "--samples", "1000000000"]
    code, out, err = run_main(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.search(r"--samples: .* need \d+\.\d GiB .* at most \d+ samples fit", err)


@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_undefined_statistics_print_as_undefined(files, capsys, fmt) -> None:
    """A run and its twin: every ordering ties them, their difference never varies."""
    argv = ["compare", files["qrels"], files["a"], files["twin"], "--samples", "5"]
    code, out, err = run_main(capsys, *argv, "--format", fmt)
    assert code == 0, err
    assert not NON_NUMBER.search(out)
    if fmt == "text":
        assert "undefined" in out


# --------------------------------------------------------------------------- reviewer options


def test_the_cli_choices_are_compares(files, capsys) -> None:
    from tiecore import compare as module
    from tiecore.cli.main import build_parser

    actions = {a.dest: a for a in build_parser()._subparsers._group_actions[0].choices[
        "compare"]._actions}  # fmt: skip
    assert tuple(actions["correction"].choices) == module.CORRECTIONS
    assert tuple(actions["ci_method"].choices) == module.CI_METHODS
    assert tuple(actions["zero_method"].choices) == module.ZERO_METHODS


@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_reviewer_options_reach_every_format(files, capsys, fmt) -> None:
    argv = [
        "compare", files["qrels"], files["a"], files["b"], files["twin"], "--samples", "5",
        "--correction", "bonferroni", "--baseline", "alpha", "--confidence", "0.9",
        "--bootstrap", "300", "--ci-method", "percentile", "--zero-method", "pratt", "--tukey",
        "--format", fmt,
    ]  # fmt: skip
    code, out, err = run_main(capsys, *argv)
    assert code == 0, err
    assert not NON_NUMBER.search(out)
    runs = tiecore.read_runs([files["a"], files["b"], files["twin"]])
    expected = compare(
        runs, tiecore.read_qrels(files["qrels"]), "AP", samples=5, correction="bonferroni",
        baseline="alpha", confidence=0.9, n_bootstrap=300, ci_method="percentile",
        zero_method="pratt", tukey=True,
    )  # fmt: skip
    assert out == format_comparison(expected, fmt)
    if fmt == "text":
        assert "bonferroni-corrected" in out and "against the baseline alpha" in out
        assert "tukey_p" in out and "ci90%" in out
    elif fmt == "csv":
        assert ",help_hurt," in out and ",help_hurt_queries," in out and "tukey_pvalue" in out
    else:
        document = json.loads(out)
        assert document["correction"] == "bonferroni" and document["baseline"] == "alpha"
        assert {row["run"] for row in document["help_hurt"]} == {"beta", "gamma"}
        assert "wilcoxon_pvalue_adj" in document["pairs"][0]


def test_no_significant_pair_is_said_in_one_sentence(files, capsys) -> None:
    code, out, err = run_main(capsys, "compare", files["qrels"], files["a"], files["twin"])
    assert code == 0, err
    assert "no pair of runs differs significantly at alpha = 0.05 (holm-corrected" in out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--baseline", "delta"], "--baseline: 'delta' is not one of the runs (expected one of"),
        (["--correction", "hochberg"], "argument --correction: invalid choice: 'hochberg'"),
        (["--confidence", "95"], "argument --confidence: 95.0 is not a level (expected a number"),
        (["--bootstrap", "0"], "argument --bootstrap: 0 is out of range (expected a positive int"),
    ],
)
def test_bad_reviewer_options_exit_2_in_one_line(files, capsys, options, message) -> None:
    code, out, err = run_main(capsys, "compare", files["qrels"], files["a"], files["b"], *options)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"tiecore: error: {message}")

"""The ``tiecore`` command line: options, formats, files, and clean failures on bad input.

Every number the command prints is checked against :func:`tiecore.evaluate`
called on the same files, so these tests pin the command line to the API.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tiecore
from tiecore.cli import main
from tiecore.measures import DEFAULT_MEASURES, split_measures
from tiecore.report.formats import format_csv, format_json

ROOT = Path(__file__).resolve().parents[2]

QRELS = """\
q1 0 d1 2
q1 0 d2 0
q1 0 d3 1
q1 0 d5 1
q1 0 d9 0
q2 0 e1 1
q2 0 e2 0
q2 0 e3 -1
q2 0 e9 3
q3 0 x1 1
"""

# Both runs tie a lot, so the tie modes and tie-breaks give different numbers.
RUN_A = """\
q1 Q0 d1 1 0.5 alpha
q1 Q0 d2 2 0.5 alpha
q1 Q0 d3 3 0.5 alpha
q1 Q0 d4 4 0.2 alpha
q1 Q0 d5 5 0.2 alpha
q1 Q0 d6 6 0.1 alpha
q2 Q0 e1 1 3 alpha
q2 Q0 e2 2 3 alpha
q2 Q0 e3 3 3 alpha
q2 Q0 e9 4 1 alpha
"""

RUN_B = """\
q1 Q0 d6 1 9 beta
q1 Q0 d5 2 8 beta
q1 Q0 d1 3 8 beta
q1 Q0 d9 4 7 beta
q2 Q0 e9 1 2 beta
q2 Q0 e2 2 2 beta
q2 Q0 e4 3 2 beta
"""

LETOR = """\
2 qid:10 1:3 2:0.5 # doc a
0 qid:10 1:3 2:0.1
1 qid:10 1:1 2:0.5
0 qid:10 2:0.7
0 qid:11 1:0 2:1
1 qid:11 1:0 2:2
3 qid:11 1:4 2:2
"""

MEASURES = ["P@2", "R@3", "F1@2", "AP", "RR", "nDCG@3", "nDCG(gain=exp)", "Rprec", "Bpref"]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "qrels": tmp_path / "qrels.txt",
        "a": tmp_path / "run_a.txt",
        "b": tmp_path / "run_b.txt",
        "letor": tmp_path / "letor.txt",
    }
    for key, text in [("qrels", QRELS), ("a", RUN_A), ("b", RUN_B), ("letor", LETOR)]:
        paths[key].write_text(text)
    return paths


def run_main(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def parse_csv(text: str) -> list[dict[str, object]]:
    """CSV rows with the numbers parsed by ``float`` (exact for repr-written floats);
    the empty qid of a summary row becomes None, as in JSON (so does an empty tiebreak)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        row["qid"] = row["qid"] or None
        if "tiebreak" in row:
            row["tiebreak"] = row["tiebreak"] or None
        for key in ("value", "std", "stderr"):
            if key in row:
                row[key] = float(row[key])
    return rows


def mode_of(rows: list[dict[str, object]], options: dict) -> list[dict[str, object]]:
    """The rows without their ``ties`` and ``tiebreak`` fields (and sampled mode's
    ``samples`` and ``seed``), which must name the mode."""
    ties = options.get("ties", "aware")
    tiebreak = options.get("tiebreak", "trec_eval") if ties == "oblivious" else None
    assert {(row.pop("ties"), row.pop("tiebreak")) for row in rows} == {(ties, tiebreak)}
    if ties == "sampled":
        drawn = {(int(row.pop("samples")), int(row.pop("seed"))) for row in rows}
        assert drawn == {(options["samples"], options["seed"])}
    return rows


def mode_line(out: str, mode: str = "aware") -> str:
    """trec format's text below its first line, which names the tie mode (aware, sampled)."""
    first, rest = out.split("\n", 1)
    assert [part.strip() for part in first.split("\t")] == ["ties", "all", mode]
    return rest


def records(frame) -> list[dict[str, object]]:
    """evaluate's frame as plain records, in a canonical order; its summary rows
    (qid NA) get qid None, as in the CLI's json."""
    columns = [c for c in ("run", "qid", "measure", "value", "std", "stderr") if c in frame]
    rows = [
        dict(zip(columns, values, strict=True))
        for values in zip(*(frame[c].tolist() for c in columns), strict=True)
    ]
    for row in rows:
        row["qid"] = None if row["qid"] != row["qid"] else row["qid"]  # NA (NaN) -> None
    return canonical(rows)


def canonical(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return sorted(rows, key=lambda r: (r["run"], r["qid"] or "", r["qid"] is None, r["measure"]))


def reference(files: dict[str, Path], runs: list[str], measures=MEASURES, **options):
    qrels = tiecore.read_qrels(files["qrels"])
    read = tiecore.read_runs([files[r] for r in runs])
    return tiecore.evaluate(read, qrels, measures, **options)


# --- default table, trec format -----------------------------------------------------------


def test_defaults_are_aware_mode_and_default_measures(files, capsys) -> None:
    code, out, err = run_main(capsys, "eval", files["qrels"], files["a"])
    assert code == 0 and err == ""
    lines = [line.split("\t") for line in mode_line(out).splitlines()]
    assert [p.strip() for p in lines[0]] == ["runid", "all", "alpha"]
    assert [p.strip() for p in lines[1]] == ["num_q", "all", "2"]
    assert [name.strip() for name, _, _ in lines[2:]] == list(DEFAULT_MEASURES)
    expected = reference(files, ["a"], list(DEFAULT_MEASURES), ties="aware")
    want = dict(zip(expected["measure"], expected["value"], strict=True))
    for name, qid, value in lines[2:]:
        assert qid == "all" and value == f"{want[name.strip()]:.4f}"


def test_trec_lines_look_like_trec_eval(files, capsys) -> None:
    code, out, _ = run_main(capsys, "eval", files["qrels"], files["a"], files["b"], "-q")
    assert code == 0
    out = mode_line(out)  # once, above every run's block
    for line in out.splitlines():
        name, qid, value = line.split("\t")
        assert len(name) == 22 or (len(name) > 22 and name == name.rstrip())
        if name.strip() == "runid":
            assert qid == "all" and value in {"alpha", "beta"}
        elif name.strip() == "num_q":
            assert qid == "all" and value.isdigit()
        else:
            assert len(value.split(".")[1]) == 4
    # One block per run, each opened by its runid line; "all" rows close the block.
    blocks = out.split(f"{'runid':<22}\tall\t")[1:]
    assert [b.split("\n", 1)[0] for b in blocks] == ["alpha", "beta"]
    for block in blocks:
        qids = [line.split("\t")[1] for line in block.splitlines()[2:]]
        assert qids[-len(DEFAULT_MEASURES) :] == ["all"] * len(DEFAULT_MEASURES)
        assert set(qids[: -len(DEFAULT_MEASURES)]) == {"q1", "q2"}


def test_measure_option_forms(files, capsys) -> None:
    code, out, _ = run_main(
        capsys,
        "eval",
        files["qrels"],
        files["a"],
        "-m",
        "P@5,P@10",
        "--measure",
        "AP",
        "-m",
        "nDCG(gain=exp)@10",
        "-m",
        "map,ndcg_cut_3",
    )
    assert code == 0
    names = [line.split("\t")[0].strip() for line in mode_line(out).splitlines()[2:]]
    # trec_eval's names come out as typed (AP, typed first as AP, stays AP)
    assert names == ["P@5", "P@10", "AP", "nDCG(gain=exp)@10", "ndcg_cut_3"]


# --- every mode and option agrees with tiecore.evaluate ---------------------------------------

OPTION_CASES = [
    ([], {}),
    (["--ties", "aware"], {"ties": "aware"}),
    (["--ties", "oblivious"], {"ties": "oblivious"}),
    *[
        (["--ties", "oblivious", "--tiebreak", tb], {"ties": "oblivious", "tiebreak": tb})
        for tb in ("trec_eval", "docno_asc", "file_order", "optimistic", "pessimistic")
    ],
    (
        ["--ties", "oblivious", "--tiebreak", "random", "--seed", "3"],
        {"ties": "oblivious", "tiebreak": "random", "seed": 3},
    ),
    (
        ["--ties", "sampled", "--samples", "50", "--seed", "11"],
        {"ties": "sampled", "samples": 50, "seed": 11},
    ),
    (["-q"], {"per_query": True}),
    (["--per-query", "-c"], {"per_query": True, "complete": True}),
    (["-c"], {"complete": True}),
    (["-M", "3", "-q"], {"depth": 3, "per_query": True}),
    (["--depth", "2", "--ties", "oblivious"], {"depth": 2, "ties": "oblivious"}),
    (["-l", "2", "-q"], {"rel_level": 2, "per_query": True}),
    (["--rel-level", "2", "-c", "-q"], {"rel_level": 2, "complete": True, "per_query": True}),
]


@pytest.mark.parametrize(("argv", "options"), OPTION_CASES, ids=lambda x: " ".join(x))
def test_csv_agrees_with_evaluate(files, capsys, argv, options) -> None:
    code, out, err = run_main(
        capsys,
        "eval",
        files["qrels"],
        files["a"],
        files["b"],
        "-m",
        ",".join(MEASURES),
        "--format",
        "csv",
        *argv,
    )
    assert code == 0, err
    rows = mode_of(parse_csv(out), options)
    expected = records(reference(files, ["a", "b"], **options))
    assert canonical(rows) == expected
    header = out.splitlines()[0].split(",")
    if options.get("ties") == "sampled":
        assert header == [
            "run", "qid", "measure", "value", "std", "stderr", "ties", "tiebreak", "samples", "seed"
        ]  # fmt: skip
    else:
        assert header == ["run", "qid", "measure", "value", "ties", "tiebreak"]


@pytest.mark.parametrize(("argv", "options"), OPTION_CASES[::3], ids=lambda x: " ".join(x))
def test_json_agrees_with_evaluate(files, capsys, argv, options) -> None:
    code, out, err = run_main(
        capsys,
        "eval",
        files["qrels"],
        files["a"],
        files["b"],
        "-m",
        ",".join(MEASURES),
        "--format",
        "json",
        *argv,
    )
    assert code == 0, err
    rows = json.loads(out)
    assert isinstance(rows, list)
    assert canonical(mode_of(rows, options)) == records(reference(files, ["a", "b"], **options))


@pytest.mark.parametrize(("argv", "options"), OPTION_CASES, ids=lambda x: " ".join(x))
def test_trec_agrees_with_evaluate(files, capsys, argv, options) -> None:
    code, out, err = run_main(
        capsys, "eval", files["qrels"], files["a"], files["b"], "-m", ",".join(MEASURES), *argv
    )
    assert code == 0, err
    expected = reference(files, ["a", "b"], **options)
    want = {
        (r["run"], r["qid"] or "all", r["measure"]): f"{r['value']:.4f}" for r in records(expected)
    }
    got, run = {}, None
    ties = options.get("ties", "aware")
    if ties != "oblivious":  # the mode named above the blocks, as trec_eval's layout
        out = mode_line(out, ties if ties == "aware" else "sampled(samples=50,seed=11)")
    for line in out.splitlines():
        name, qid, value = (p.strip() for p in line.split("\t"))
        if name == "runid":
            run = value
        elif name != "num_q":
            got[(run, qid, name)] = value
    assert got == want


def test_modes_and_tiebreaks_reach_evaluate(files, capsys) -> None:
    """On these runs every mode and tie-break gives other numbers, so the cases above bite."""
    outputs = [
        run_main(capsys, "eval", files["qrels"], files["a"], files["b"], "-q", *argv)[1]
        for argv, _ in OPTION_CASES[:9]
    ]
    # The defaults: no option means aware; oblivious alone means the trec_eval tie-break.
    assert outputs[0] == outputs[1] and outputs[2] == outputs[3]
    assert len(set(outputs)) == len(outputs) - 2


def test_num_q_counts_averaged_queries(files, capsys) -> None:
    _, plain, _ = run_main(capsys, "eval", files["qrels"], files["b"])
    _, complete, _ = run_main(capsys, "eval", files["qrels"], files["b"], "-c")
    assert mode_line(plain).splitlines()[1].split("\t")[2] == "2"
    assert mode_line(complete).splitlines()[1].split("\t")[2] == "3"  # q3: in the qrels only


def test_progress_goes_to_stderr_only(files, capsys) -> None:
    args = ("eval", files["qrels"], files["a"], files["b"])
    _, quiet, quiet_err = run_main(capsys, *args)
    assert quiet_err == ""  # stderr is not a terminal under pytest
    code, out, err = run_main(capsys, *args, "--progress")
    assert code == 0 and out == quiet
    lines = err.splitlines()
    assert len(lines) == 2
    assert "[1/2] alpha" in lines[0] and "[2/2] beta" in lines[1]
    _, out, err = run_main(capsys, *args, "--no-progress")
    assert out == quiet and err == ""


def test_progress_by_default_on_a_terminal(files, capsys, monkeypatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["eval", str(files["qrels"]), str(files["a"])]) == 0
    assert terminal.getvalue().startswith("tiecore: [1/1] alpha")
    assert main(["eval", str(files["qrels"]), str(files["a"]), "--no-progress"]) == 0
    assert terminal.getvalue().count("\n") == 1


# --- files -----------------------------------------------------------------------------------


def test_output_file(files, capsys, tmp_path) -> None:
    target = tmp_path / "result.csv"
    args = ("eval", files["qrels"], files["a"], "-q", "--format", "csv")
    _, to_stdout, _ = run_main(capsys, *args)
    code, out, err = run_main(capsys, *args, "-o", target)
    assert code == 0 and out == "" and err == ""
    assert target.read_text() == to_stdout


@pytest.mark.parametrize("command", ["eval", "compare", "report"])
@pytest.mark.parametrize("which", ["run", "qrels", "link to the run"])
def test_output_naming_an_input_is_refused(files, capsys, tmp_path, command, which) -> None:
    """``-o`` naming an input (or a link to one) would overwrite it: refused, input intact."""
    inputs = [files["qrels"], files["a"], files["b"]]
    target = {"run": files["a"], "qrels": files["qrels"]}.get(which)
    if target is None:
        target = tmp_path / "link"
        target.symlink_to(files["a"])
    before = {path: Path(path).read_bytes() for path in inputs}
    code, out, err = run_main(capsys, command, *inputs, "-o", target)
    assert code == 2 and out == ""
    assert str(target) in err and "would destroy it" in err
    assert {path: Path(path).read_bytes() for path in inputs} == before


def test_closed_pipe_ends_quietly(files, monkeypatch, capsys) -> None:
    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["eval", str(files["qrels"]), str(files["a"])]) == 141
    assert capsys.readouterr().err == ""


def test_gzipped_run(files, capsys, tmp_path) -> None:
    gz = tmp_path / "run_a.txt.gz"
    gz.write_bytes(gzip.compress(RUN_A.encode()))
    _, plain, _ = run_main(capsys, "eval", files["qrels"], files["a"], "-q", "--format", "csv")
    code, zipped, err = run_main(capsys, "eval", files["qrels"], gz, "-q", "--format", "csv")
    assert code == 0 and err == ""
    assert zipped == plain


def test_several_runs_keep_order_and_names(files, capsys, tmp_path) -> None:
    code, out, _ = run_main(capsys, "eval", files["qrels"], files["b"], files["a"])
    assert code == 0
    runids = [line.split("\t")[2] for line in out.splitlines() if line.startswith("runid")]
    assert runids == ["beta", "alpha"]
    # Two runs with the same tag: read_runs names them by file, and so does the output.
    twin = tmp_path / "twin.txt"
    twin.write_text(RUN_A)
    code, out, _ = run_main(capsys, "eval", files["qrels"], files["a"], twin, "--format", "csv")
    assert code == 0
    names = list(dict.fromkeys(row["run"] for row in parse_csv(out)))
    assert names == list(tiecore.read_runs([files["a"], twin]))
    assert len(set(names)) == 2


def test_letor_input(files, capsys) -> None:
    argv = ("eval", "--letor", files["letor"], "-m", "P@2,nDCG@3,AP", "-q", "--format", "csv")
    code, out, err = run_main(capsys, *argv, "--features", "1,2")
    assert code == 0, err
    runs, qrels = tiecore.read_letor(files["letor"], features=[1, 2])
    expected = tiecore.evaluate(runs, qrels, ["P@2", "nDCG@3", "AP"], per_query=True)
    assert canonical(mode_of(parse_csv(out), {})) == records(expected)
    assert list(dict.fromkeys(row["run"] for row in parse_csv(out))) == ["f1", "f2"]
    _, ranged, _ = run_main(capsys, *argv, "--features", "1-2")
    assert ranged == out
    _, every, _ = run_main(capsys, *argv)  # no --features: all of them
    assert every == out
    _, second, _ = run_main(capsys, *argv, "--features", "2")
    assert [r["run"] for r in parse_csv(second)] == ["f2"] * len(parse_csv(second))


def test_python_dash_m(files, capsys) -> None:
    args = ["eval", str(files["qrels"]), str(files["a"]), "-q", "--format", "json"]
    _, in_process, _ = run_main(capsys, *args)
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    }
    done = subprocess.run(
        [sys.executable, "-m", "tiecore", *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == in_process and done.stderr == ""


def test_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["tiecore"] == "tiecore.cli:main"


def test_help_and_version(capsys) -> None:
    code, out, _ = run_main(capsys, "eval", "--help")
    assert code == 0 and "default: aware" in out and "--letor" in out
    code, out, _ = run_main(capsys, "--version")
    assert code == 0 and out.startswith("tiecore ")


# --- warnings --------------------------------------------------------------------------------


def test_unknown_query_warns_once_per_run(files, capsys, tmp_path) -> None:
    extra = tmp_path / "extra.txt"
    extra.write_text(RUN_A + "q9 Q0 z1 1 1 alpha\nq9 Q0 z2 2 1 alpha\nq8 Q0 z3 1 1 alpha\n")
    code, out, err = run_main(capsys, "eval", files["qrels"], extra, files["b"])
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tiecore: warning: ")
    _, plain, _ = run_main(capsys, "eval", files["qrels"], files["a"], files["b"])
    assert out == plain


@pytest.mark.parametrize(
    "argv",
    [["--tiebreak", "pessimistic"], ["--ties", "sampled", "--tiebreak", "docno_asc"]],
)
def test_tiebreak_outside_oblivious_warns(files, capsys, argv) -> None:
    code, _, err = run_main(capsys, "eval", files["qrels"], files["a"], *argv)
    assert code == 0 and err.startswith("tiecore: warning: --tiebreak")


def test_samples_outside_sampled_warns(files, capsys) -> None:
    code, _, err = run_main(capsys, "eval", files["qrels"], files["a"], "--samples", "5")
    assert code == 0 and err.startswith("tiecore: warning: --samples")


# --- bad input: exit 2, one line, no traceback -------------------------------------------------


def bad_cases(files: dict[str, Path], tmp: Path) -> dict[str, tuple[list[object], list[str]]]:
    """name -> (argv, strings the one-line message must contain)."""
    bad_run = tmp / "bad_run.txt"
    bad_run.write_text(RUN_A.replace("q1 Q0 d3 3 0.5 alpha", "q1 Q0 d3 3 abc alpha"))
    bad_qrels = tmp / "bad_qrels.txt"
    bad_qrels.write_text(QRELS.replace("q1 0 d2 0", "q1 0 d2 x"))
    short_run = tmp / "short_run.txt"
    short_run.write_text(RUN_A + "q2 Q0\n")
    stranger = tmp / "stranger.txt"
    stranger.write_text("q7 Q0 z1 1 1 other\nq8 Q0 z2 1 1 other\n")
    bad_letor = tmp / "bad.letor"
    bad_letor.write_text(LETOR + "1 10 1:2\n")
    broken = tmp / "broken.parquet"
    broken.write_bytes(b"PAR1 not a Parquet file PAR1")
    folder = tmp / "runs"
    folder.mkdir(exist_ok=True)
    (folder / "bm25.parquet").write_bytes(b"")
    q, a = files["qrels"], files["a"]
    return {
        "missing qrels": (["eval", tmp / "nope.qrels", a], ["nope.qrels"]),
        "missing run": (["eval", q, a, tmp / "nope.run"], ["nope.run"]),
        "missing letor": (["eval", "--letor", tmp / "nope.letor"], ["nope.letor"]),
        "bad run line": (["eval", q, bad_run], ["bad_run.txt", "line 3"]),
        "short run line": (["eval", q, short_run], ["short_run.txt", "line 11"]),
        "bad qrels line": (["eval", bad_qrels, a], ["bad_qrels.txt", "line 2"]),
        "bad letor line": (["eval", "--letor", bad_letor], ["bad.letor", "line 8"]),
        "no run query in qrels": (["eval", q, stranger], ["stranger.txt", "other"]),
        "unknown measure": (["eval", q, a, "-m", "P@5,XYZ@3"], ["XYZ@3"]),
        # (a bare "P" is trec_eval's family, P_5 ... P_1000; "Success" is tiecore's, cut needed)
        "measure without cutoff": (["eval", q, a, "-m", "Success"], ["Success"]),
        "bad tiebreak": (["eval", q, a, "--tiebreak", "coin"], ["--tiebreak", "coin"]),
        "bad ties": (["eval", q, a, "--ties", "maybe"], ["--ties"]),
        "bad format": (["eval", q, a, "--format", "xml"], ["--format"]),
        "zero samples": (["eval", q, a, "--ties", "sampled", "--samples", "0"], ["--samples"]),
        "one sample": (["eval", q, a, "--ties", "sampled", "--samples", "1"], ["--samples"]),
        "negative seed": (["eval", q, a, "--seed", "-1"], ["--seed"]),
        "zero depth": (["eval", q, a, "-M", "0"], ["-M"]),
        "text rel level": (["eval", q, a, "-l", "two"], ["-l"]),
        "bad features": (["eval", "--letor", files["letor"], "--features", "1,x"], ["x"]),
        "features without letor": (["eval", q, a, "--features", "1"], ["--features"]),
        "letor and files": (["eval", q, a, "--letor", files["letor"]], ["--letor"]),
        "qrels only": (["eval", q], ["RUN"]),
        "no command": ([], []),
        "unknown command": (["score", q, a], ["score"]),
        "unwritable output": (["eval", q, a, "-o", tmp / "no" / "dir.txt"], ["dir.txt"]),
        "output is a directory": (["eval", q, a, "-o", tmp], [str(tmp)]),
        "broken parquet run": (["eval", q, broken], ["broken.parquet", "cannot read Parquet"]),
        "directory of parquet runs": (["eval", q, folder], ["is a directory", "runs/*.parquet"]),
    }


BAD_NAMES = [
    "missing qrels",
    "missing run",
    "missing letor",
    "bad run line",
    "short run line",
    "bad qrels line",
    "bad letor line",
    "no run query in qrels",
    "unknown measure",
    "measure without cutoff",
    "bad tiebreak",
    "bad ties",
    "bad format",
    "zero samples",
    "one sample",
    "negative seed",
    "zero depth",
    "text rel level",
    "bad features",
    "features without letor",
    "letor and files",
    "qrels only",
    "no command",
    "unknown command",
    "unwritable output",
    "output is a directory",
    "broken parquet run",
    "directory of parquet runs",
]


def test_the_first_bad_run_in_file_order_is_reported(files, capsys, tmp_path) -> None:
    """tiecore eval reads the next run while it evaluates one: still the error of the
    first bad file, whether its reading or its evaluation fails, and nothing after it."""
    bad_line = [tmp_path / f"bad{k}.txt" for k in range(2)]
    for path in bad_line:
        path.write_text(RUN_A.replace("q1 Q0 d3 3 0.5 alpha", "q1 Q0 d3 3 abc alpha"))
    stranger = tmp_path / "stranger.txt"  # read fine; its evaluation fails
    stranger.write_text("q7 Q0 z1 1 1 other\nq8 Q0 z2 1 1 other\n")
    q, a = files["qrels"], files["a"]
    cases = [
        ([a, *bad_line], f"{bad_line[0]}, line 3: score 'abc'"),
        ([a, stranger, *bad_line], f"{stranger} (run other): none of its queries"),
        ([bad_line[1], stranger], f"{bad_line[1]}, line 3: score 'abc'"),
    ]
    for runs, message in cases:
        code, out, err = run_main(capsys, "eval", q, *runs)
        assert (code, out) == (2, "") and err.startswith(f"tiecore: error: {message}"), err


def test_bad_cases_are_all_run(files, tmp_path) -> None:
    assert list(bad_cases(files, tmp_path)) == BAD_NAMES


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_input_exits_2_with_one_line(files, capsys, tmp_path, name) -> None:
    argv, needles = bad_cases(files, tmp_path)[name]
    code, out, err = run_main(capsys, *argv)
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert lines[-1].startswith("tiecore: error: ")
    assert all(line.startswith("tiecore: warning: ") for line in lines[:-1])
    for needle in needles:
        assert needle in lines[-1]


@pytest.mark.parametrize("name", ["missing run", "bad run line", "bad tiebreak", "no command"])
def test_bad_input_in_a_real_process(files, tmp_path, name) -> None:
    argv, needles = bad_cases(files, tmp_path)[name]
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    }
    done = subprocess.run(
        [sys.executable, "-m", "tiecore", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("tiecore: error: ")
    assert all(needle in done.stderr for needle in needles)


# --- formats round-trip exactly -----------------------------------------------------------------


@given(
    st.lists(
        st.tuples(
            st.floats(allow_nan=False, allow_infinity=False),
            st.floats(min_value=0, allow_infinity=False),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_csv_and_json_round_trip_floats(values) -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "run": "r,1",
            "qid": [str(i) for i in range(len(values))],
            "measure": "nDCG(gain=exp)@10",
            "value": [v for v, _ in values],
            "std": [s for _, s in values],
            "stderr": [s / 3 for _, s in values],
        }
    )
    expected = records(frame)
    assert canonical(parse_csv(format_csv(frame, {}))) == expected
    assert canonical(json.loads(format_json(frame, {}))) == expected


def test_nan_becomes_empty_or_null() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {"run": ["r"], "qid": ["all"], "measure": ["AP"], "value": [0.5], "std": [float("nan")]}
    )
    assert format_csv(frame, {}).splitlines()[1] == "r,all,AP,0.5,"
    assert json.loads(format_json(frame, {}))[0]["std"] is None


@given(st.lists(st.sampled_from(["P@5", "AP", "nDCG(gain=exp)@10", "RR@3", "Bpref"]), min_size=1))
def test_split_measures_inverts_joining(names) -> None:
    assert split_measures([",".join(names)]) == names
    assert split_measures(names) == names


# --- --spread and the compare command -------------------------------------------------------


def test_spread_adds_exact_var_min_max(files, capsys) -> None:
    from tiecore.spread import evaluate_spread

    code, out, err = run_main(
        capsys,
        "eval",
        files["qrels"],
        files["a"],
        "-m",
        "P@2,AP",
        "--spread",
        "-q",
        "--format",
        "csv",
    )
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == [
        "run",
        "qid",
        "measure",
        "value",
        "var",
        "min",
        "max",
        "ties",
        "tiebreak",
    ]
    qrels = tiecore.read_qrels(files["qrels"])
    want = evaluate_spread(tiecore.read_runs([files["a"]]), qrels, ["P@2", "AP"], per_query=True)
    assert len(rows) == len(want)
    for row in rows:
        same = want["qid"] == row["qid"] if row["qid"] else want["qid"].isna()  # summary: empty
        match = want[same & (want["measure"] == row["measure"])]
        for column in ("value", "var", "min", "max"):
            assert float(row[column]) == match[column].iloc[0]
    assert any(float(row["var"]) > 0 for row in rows)


def test_spread_needs_aware_mode(files, capsys) -> None:
    code, out, err = run_main(
        capsys, "eval", files["qrels"], files["a"], "--spread", "--ties", "oblivious"
    )
    assert code == 2 and out == "" and "--spread goes with --ties aware" in err


@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_compare_prints_rankings_and_swaps(files, capsys, fmt) -> None:
    from tiecore.compare import compare
    from tiecore.report.comparison import format_comparison

    argv = ["compare", files["qrels"], files["a"], files["b"], "-m", "AP", "--samples", "20"]
    code, out, err = run_main(capsys, *argv, "--resamples", "50", "--format", fmt)
    assert code == 0, err
    runs = tiecore.read_runs([files["a"], files["b"]])
    qrels = tiecore.read_qrels(files["qrels"])
    expected = compare(runs, qrels, "AP", samples=20, n_resamples=50)
    assert out == format_comparison(expected, fmt)


def test_compare_letor_features(files, capsys) -> None:
    code, out, err = run_main(
        capsys,
        "compare",
        "--letor",
        files["letor"],
        "-m",
        "nDCG@2",
        "--samples",
        "10",
        "--resamples",
        "10",
    )
    assert code == 0, err
    assert "f1" in out and "f2" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-m", "AP,P@2"], "compare takes one measure"),
        (["-m", "nope"], "unknown measure"),
        (["--samples", "1"], "at least 2 samples"),
    ],
)
def test_compare_bad_options(files, capsys, extra, message) -> None:
    code, out, err = run_main(capsys, "compare", files["qrels"], files["a"], files["b"], *extra)
    assert code == 2 and out == "" and message in err and "Traceback" not in err


def test_compare_needs_two_runs(files, capsys) -> None:
    code, out, err = run_main(capsys, "compare", files["qrels"], files["a"])
    assert code == 2 and out == "" and "at least two runs" in err


# --- a query named "all" never merges with the summary rows --------------------------------

QRELS_ALL = QRELS + "all 0 d1 1\nall 0 d2 0\n"
RUN_ALL = RUN_A + "all Q0 d1 1 0.5 alpha\nall Q0 d2 2 0.5 alpha\nall Q0 d7 3 0.9 alpha\n"


@pytest.fixture
def all_files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels_all.txt", tmp_path / "run_all.txt"
    qrels.write_text(QRELS_ALL)
    run.write_text(RUN_ALL)
    return qrels, run


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_query_named_all_stays_apart_from_the_summary(all_files, capsys, fmt) -> None:
    qrels, run = all_files
    code, out, err = run_main(capsys, "eval", qrels, run, "-q", "-m", "P@2,AP", "--format", fmt)
    assert code == 0, err
    rows = parse_csv(out) if fmt == "csv" else json.loads(out)
    per_query = [r for r in rows if r["qid"] is not None]
    summary = [r for r in rows if r["qid"] is None]
    assert sorted({r["qid"] for r in per_query}) == ["all", "q1", "q2"]
    assert [r["measure"] for r in summary] == ["P@2", "AP"]  # one summary row per measure
    for row in summary:  # the mean over the three queries, the one named "all" included
        values = [r["value"] for r in per_query if r["measure"] == row["measure"]]
        assert row["value"] == pytest.approx(sum(values) / 3, abs=1e-15)
    # the query "all" scores what evaluate gives it, query by query
    frame = tiecore.evaluate(
        tiecore.read_runs([run]), tiecore.read_qrels(qrels), ["P@2", "AP"], per_query=True
    )
    first_all = frame[frame["qid"] == "all"].groupby("measure").head(1)
    want = dict(zip(first_all["measure"], first_all["value"], strict=True))
    assert {r["measure"]: r["value"] for r in per_query if r["qid"] == "all"} == want


def test_query_named_all_in_trec_format(all_files, capsys) -> None:
    qrels, run = all_files
    code, out, err = run_main(capsys, "eval", qrels, run, "-m", "P@2,AP")
    assert code == 0, err
    lines = [[p.strip() for p in line.split("\t")] for line in mode_line(out).splitlines()]
    assert lines[1] == ["num_q", "all", "3"]  # the query "all" counts
    assert [(name, qid) for name, qid, _ in lines[2:]] == [("P@2", "all"), ("AP", "all")]
    # with -q the query's rows would read as summary rows: refused, with what to do instead
    code, out, err = run_main(capsys, "eval", qrels, run, "-m", "P@2,AP", "-q")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "'all'" in err and "--format csv" in err
    assert str(qrels) in err


def test_format_trec_refuses_a_query_named_all() -> None:
    import pandas as pd

    from tiecore.report.formats import format_trec

    frame = pd.DataFrame({"run": "r", "qid": ["all", None], "measure": "AP", "value": [0.5, 0.25]})
    with pytest.raises(ValueError, match="named 'all'"):
        format_trec(frame, {"r": 1})
    assert format_trec(frame.iloc[1:], {"r": 1}).splitlines()[2].split("\t")[1] == "all"


# --- --samples is refused up front when it cannot fit -------------------------------------


def test_huge_sample_count_is_refused_up_front(files, capsys) -> None:
    argv = ("eval", files["qrels"], files["a"], "--ties", "sampled")
    code, out, err = run_main(capsys, *argv, "--samples", str(10**20))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--samples 100000000000000000000 would need about" in err
    assert "memory" in err and "use at most" in err


def test_sample_guard_names_a_count_that_fits(files, capsys, monkeypatch) -> None:
    """With a small budget, the count the message suggests runs and one more does not."""
    import importlib
    import re

    budget = importlib.import_module("tiecore.engine.budget")  # the module, not a function
    monkeypatch.setattr(budget, "available_memory", lambda: 2 * 3_000_000)
    argv = ("eval", files["qrels"], files["a"], "--ties", "sampled", "-m", "P@2,AP")
    code, _, err = run_main(capsys, *argv, "--samples", "100000")
    assert code == 2 and "more than the 3 MB allowed" in err
    fits = int(re.search(r"use at most (\d+) samples", err).group(1))
    assert 2 <= fits < 100000
    assert run_main(capsys, *argv, "--samples", str(fits))[0] == 0
    code, _, err = run_main(capsys, *argv, "--samples", str(fits + 1))
    assert code == 2 and f"use at most {fits} samples" in err
    # the API applies the same guard
    runs, qrels = tiecore.read_runs([files["a"]]), tiecore.read_qrels(files["qrels"])
    with pytest.raises(ValueError, match=f"samples {fits + 1} would need"):
        tiecore.evaluate(runs, qrels, ["P@2", "AP"], ties="sampled", samples=fits + 1)
    with pytest.raises(ValueError, match="memory"):
        tiecore.evaluate(runs, qrels, "AP", ties="sampled", samples=10**20)


def test_sample_memory_estimate_bounds_the_real_peak(files) -> None:
    """The estimate the guard uses is at least the memory sampled mode really takes."""
    import tracemalloc

    from tiecore.evaluation.evaluator import sample_memory

    runs, qrels = tiecore.read_runs([files["a"]]), tiecore.read_qrels(files["qrels"])
    measures = ["P@2", "AP", "nDCG@3", "RR"]
    for samples in (20_000, 200_000):
        tracemalloc.start()
        try:
            tiecore.evaluate(runs, qrels, measures, ties="sampled", samples=samples, per_query=True)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        need = sample_memory(samples, qrels["qid"].nunique(), len(measures), len(runs["alpha"]))
        assert peak <= need, (samples, peak, need)


# --- --features: linear parsing, checked against the file ----------------------------------


@given(
    st.lists(
        st.one_of(
            st.integers(1, 60).map(lambda n: (n, n)),
            st.tuples(st.integers(1, 60), st.integers(0, 8)).map(lambda t: (t[0], t[0] + t[1])),
        ),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([",", ", ", " ,"]),
)
def test_feature_list_matches_a_plain_expansion(parts, comma) -> None:
    from tiecore.cli.common import feature_list as _feature_list

    text = comma.join(str(a) if a == b else f"{a}-{b}" for a, b in parts)
    want: list[int] = []
    for a, b in parts:
        want += [f for f in range(a, b + 1) if f not in want]
    assert _feature_list(text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5-2", "reversed range"),
        ("0-3", "numbered from 1"),
        ("1-99999999999999999999999", "too large"),
        ("1-" + "9" * 5000, "too large"),
        ("1-200000", "more than 100000 features"),
        ("1-60000,60001-120000", "more than 100000 features"),
        ("1,x", "'x'"),
        ("1--3", "'1--3'"),
        (",", "no feature"),
    ],
)
def test_bad_feature_lists(files, capsys, text, message) -> None:
    code, out, err = run_main(capsys, "eval", "--letor", files["letor"], "--features", text)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_feature_range_is_checked_against_the_file_in_linear_time(files, capsys) -> None:
    """1-100000 on a file with features 1 and 2 fails, naming the first absent one (the
    range is checked against the file's features, never deduplicated in quadratic time:
    that took minutes here)."""
    code, out, err = run_main(capsys, "eval", "--letor", files["letor"], "--features", "1-100000")
    assert code == 2 and out == "" and "feature 3 does not occur" in err
    code, out, err = run_main(capsys, "eval", "--letor", files["letor"], "--features", "2,1,2")
    assert code == 0 and [
        r["run"]
        for r in parse_csv(
            run_main(
                capsys, "eval", "--letor", files["letor"], "--features", "2,1,2", "--format", "csv"
            )[1]
        )
    ][::9] == ["f2", "f1"]


# --- signals, closed streams, -o and unusual input files -----------------------------------


def _env() -> dict[str, str]:
    return os.environ | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    }


def _tie_heavy(tmp_path: Path, queries: int, docs: int, runs: int) -> list[Path]:
    """A qrels file and ``runs`` tie-heavy runs of ``queries`` x ``docs`` rows."""
    import random

    draw = random.Random(7)
    qrels = tmp_path / "big.qrels"
    qrels.write_text(
        "".join(f"q{q} 0 d{d} {draw.randint(0, 2)}\n" for q in range(queries) for d in range(docs))
    )
    paths = [qrels]
    for r in range(runs):
        path = tmp_path / f"big{r}.run"
        path.write_text(
            "".join(
                f"q{q} Q0 d{d} {d} {draw.randint(0, 4)} tag{r}\n"
                for q in range(queries)
                for d in range(docs)
            )
        )
        paths.append(path)
    return paths


def test_ctrl_c_exits_130_with_one_line(tmp_path) -> None:
    import signal

    paths = _tie_heavy(tmp_path, 20, 200, 4)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tiecore",
            "eval",
            *map(str, paths),
            "--progress",
            "--ties",
            "sampled",
            "--samples",
            "2000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        # a shell's background jobs ignore SIGINT, and Python keeps an ignored SIGINT
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    first = child.stderr.readline()  # the first run is done: the work is under way
    assert first.startswith("tiecore: [1/4]"), first
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 130
    assert out == "" and "Traceback" not in err
    assert err.splitlines()[-1] == "tiecore: interrupted"
    assert all(line.startswith("tiecore: [") for line in err.splitlines()[:-1]), err


def test_reader_going_away_ends_quietly(tmp_path) -> None:
    """``tiecore eval ... | head -1``: exit 141 (128 + SIGPIPE), nothing on stderr."""
    paths = _tie_heavy(tmp_path, 3000, 2, 1)
    argv = [sys.executable, "-m", "tiecore", "eval", *map(str, paths), "-q", "--format", "csv"]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert child.stdout.readline() == b"run,qid,measure,value,ties,tiebreak\n"
    child.stdout.close()  # far more than a pipe buffer is still to come
    err = child.stderr.read()
    assert child.wait(timeout=120) == 141 and err == b""
    # the same through a shell pipeline
    line = " ".join(f"'{a}'" for a in argv)
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {line} | head -1"], capture_output=True, env=_env()
    )
    assert done.stdout == b"run,qid,measure,value,ties,tiebreak\n" and done.stderr == b""
    assert done.returncode == 141


@pytest.mark.parametrize(
    ("redirect", "extra", "code", "out"),
    [
        ("2>&-", ["--samples", "5"], 0, True),  # a warning to a closed stderr
        ("2>&-", ["-M", "0"], 2, False),  # an error to a closed stderr
        (">&-", [], 141, False),  # no stdout at all
    ],
)
def test_closed_standard_streams(files, redirect, extra, code, out) -> None:
    argv = [sys.executable, "-m", "tiecore", "eval", str(files["qrels"]), str(files["a"]), *extra]
    line = " ".join(f"'{a}'" for a in argv)
    done = subprocess.run(["bash", "-c", f"{line} {redirect}"], capture_output=True, env=_env())
    assert done.returncode == code
    assert done.stderr == b"" or (redirect == ">&-" and done.stderr == b"")
    assert bool(done.stdout) == out and b"Traceback" not in done.stdout


def test_broken_stderr_never_stops_the_work(files, capsys, monkeypatch) -> None:
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stderr", Broken())
    code = main(["eval", str(files["qrels"]), str(files["a"]), "--samples", "5", "--progress"])
    assert code == 0 and capsys.readouterr().out.startswith("ties")


@pytest.mark.parametrize("case", ["directory", "missing directory", "under a file"])
def test_output_is_checked_before_the_work(files, capsys, monkeypatch, tmp_path, case) -> None:
    from tiecore.cli import eval as cli_eval

    def no_work(*args, **kwargs):
        raise AssertionError("evaluated before -o was checked")

    monkeypatch.setattr(cli_eval, "evaluate_runs", no_work)
    target = {
        "directory": tmp_path,
        "missing directory": tmp_path / "nope" / "out.txt",
        "under a file": files["a"] / "out.txt",
    }[case]
    code, out, err = run_main(capsys, "eval", files["qrels"], files["a"], "-o", target)
    assert code == 2 and out == "" and err.count("\n") == 1 and str(target) in err


def test_dev_null_is_a_readable_empty_input(files, capsys) -> None:
    code, out, err = run_main(capsys, "eval", files["qrels"], os.devnull)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert os.devnull in err and "empty" in err and "no such file" not in err
    code, out, err = run_main(capsys, "eval", os.devnull, files["a"])
    assert code == 2 and os.devnull in err and "empty" in err


@pytest.mark.parametrize("which", ["qrels", "run", "gzipped run", "letor"])
def test_fifo_inputs(files, capsys, tmp_path, which) -> None:
    """A named pipe (or ``<(zcat run.gz)``) cannot seek nor tell its size; it still reads."""
    from named_pipes import fed_pipe

    fifo = tmp_path / "pipe"
    source = {"qrels": "qrels", "run": "a", "gzipped run": "a", "letor": "letor"}[which]
    data = files[source].read_bytes()
    data = gzip.compress(data) if which == "gzipped run" else data
    inputs = {
        "qrels": [fifo, files["a"]],
        "run": [files["qrels"], fifo],
        "gzipped run": [files["qrels"], fifo],
        "letor": ["--letor", fifo],
    }[which]
    plain = {
        "qrels": [files["qrels"], files["a"]],
        "run": [files["qrels"], files["a"]],
        "gzipped run": [files["qrels"], files["a"]],
        "letor": ["--letor", files["letor"]],
    }[which]
    with fed_pipe(fifo, data):
        code, out, err = run_main(capsys, "eval", *inputs, "-q", "--format", "csv")
    assert code == 0, err
    _, want, _ = run_main(capsys, "eval", *plain, "-q", "--format", "csv")
    assert out == want.replace(str(files["letor"]), str(fifo))


def test_resource_warnings_are_not_shown(files, capsys, monkeypatch) -> None:
    """An interrupted read may leave a file to the garbage collector: no warning line for it."""
    import warnings

    from tiecore.cli import eval as cli_eval

    def formatter(result, num_q):
        warnings.warn("unclosed file <_io.BufferedReader name='x'>", ResourceWarning, stacklevel=1)
        return "text\n"

    monkeypatch.setitem(cli_eval._TEXTS, "csv", formatter)
    code, out, err = run_main(capsys, "eval", files["qrels"], files["a"], "--format", "csv")
    assert code == 0 and out == "text\n" and err == ""


@pytest.mark.parametrize("failure", ["full disk", "interrupted"])
def test_output_is_replaced_whole_or_not_at_all(files, capsys, monkeypatch, tmp_path, failure):
    """``-o`` writes a temporary file beside the target and renames it into place: a write
    that fails (a full disk) or is interrupted leaves the old file byte for byte, and no
    temporary file behind."""
    import os

    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "result.txt"
    target.write_bytes(b"the old results\n")
    if failure == "full disk":

        def no_space(descriptor: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", no_space)
    else:

        def interrupted(*args) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(os, "replace", interrupted)
    code, out, err = run_main(capsys, "eval", files["qrels"], files["a"], "-o", target)
    assert code == (2 if failure == "full disk" else 130) and out == ""
    assert err.count("\n") == 1 and ("No space" in err or "interrupted" in err)
    assert target.read_bytes() == b"the old results\n"
    assert sorted(path.name for path in target.parent.iterdir()) == ["result.txt"]


def test_output_through_a_link_replaces_its_target(files, capsys, tmp_path) -> None:
    """A link named by ``-o`` stays a link: the file it points to gets the results, with
    the permissions it had."""
    target = tmp_path / "target.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    code, out, _ = run_main(capsys, "eval", files["qrels"], files["a"], "-o", link)
    assert code == 0 and out == "" and link.is_symlink()
    assert target.read_text().startswith("ties") and (target.stat().st_mode & 0o777) == 0o640
    code, _, _ = run_main(capsys, "eval", files["qrels"], files["a"], "-o", os.devnull)
    assert code == 0 and Path(os.devnull).exists() and not Path(os.devnull).is_file()

"""tiecore eval's small-input path (tiecore.evaluation.small) against the normal one.

Both paths must print the same bytes, warnings and errors: the small path reads
what tiecore.io accepts to the same values (or hands the input back), builds the
same judgments and rankings, and formats without pandas.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import warnings
from dataclasses import fields
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from shared_data import GOOD, ROBUST_QRELS, TREC_EVAL, robust_run
from strategies import FLOAT32_COLLIDING, cases, run_files

import tiecore
from tiecore import cli
from tiecore.cli import eval as cli_eval
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import TIEBREAKS, Ranking
from tiecore.errors import InputError
from tiecore.evaluation import arrow as _arrow_eval
from tiecore.evaluation import small as _small
from tiecore.io import files as _runs

#: a tie-heavy Robust03 run (integer scores), a short one and an ordinary one
SOME_ROBUST_RUNS = ("input.MU03rob01.gz", "input.NLPR03vb10.gz", "input.humR03dc.gz")
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 d 1\n"
RUN = "1 Q0 a 1 2 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 d 1 5 r\n2 Q0 e 2 5 r\n"


def run_cli(capsys, *argv: object, small: bool, arrow: bool = False) -> tuple[int, str, str, bool]:
    """``tiecore eval`` through the small path when it takes the input (size limits
    raised), through the arrow path (``arrow``: the small path's limits lowered), or
    through the normal one; returns code, stdout, stderr, and whether the small (or
    with ``arrow``, the arrow) path was taken."""
    taken = []
    small_original, arrow_original = _small.evaluate_files, _arrow_eval.evaluate_files

    def spy(*args, **kwargs):
        taken.append(small_original(*args, **kwargs))
        return taken[-1]

    def arrow_spy(*args, **kwargs):
        taken.append(True)
        return arrow_original(*args, **kwargs)

    limit = 1 << 40 if small else -1
    with (
        mock.patch.object(_small, "SMALL_BYTES", limit),
        mock.patch.object(_small, "SMALL_TEXT", 1 << 40),
        mock.patch.object(_small, "evaluate_files", spy),
        mock.patch.object(_arrow_eval, "evaluate_files", arrow_spy),
        mock.patch.object(_arrow_eval, "claimed", _arrow_eval.claimed if arrow else no_files),
    ):
        code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, any(t is not None for t in taken)


def no_files(paths) -> bool:
    return False


def both(capsys, *argv: object, small_expected: bool | None = True) -> tuple[int, str, str]:
    """Run the three paths; the small and the arrow path must agree with the normal one
    byte for byte."""
    code, out, err, taken = run_cli(capsys, *argv, small=True)
    if small_expected is not None:
        assert taken == small_expected, (argv, err)
    normal = run_cli(capsys, *argv, small=False)
    assert not normal[3]
    assert (code, out, err) == normal[:3], argv
    arrow = run_cli(capsys, *argv, small=False, arrow=True)
    assert arrow[:3] == normal[:3], argv
    return code, out, err


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ------------------------------------------------------------------- whole command


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["-q"],
        ["-q", "--format", "csv"],
        ["-q", "--format", "json", "-c"],
        ["--ties", "oblivious", "-q"],
        ["--ties", "oblivious", "--tiebreak", "docno_asc", "-q", "-M", "100"],
        ["--ties", "oblivious", "--tiebreak", "random", "--seed", "3", "-q", "--format", "csv"],
        ["--ties", "oblivious", "--tiebreak", "optimistic", "-c", "-q"],
        ["-m", "P@5,map,ndcg_cut_10,nDCG(gain=exp)@10,RR,Bpref,Rprec,ERR@20,IPrec@0.5", "-q"],
        ["-l", "2", "-M", "10", "-q", "--format", "json"],
    ],
)
@pytest.mark.parametrize("results", ["results.test", "results.trunc"])
def test_trec_eval_test_files(capsys, options, results) -> None:
    code, out, _ = both(capsys, "eval", TREC_EVAL / "qrels.test", TREC_EVAL / results, *options)
    assert code == 0 and out


def test_trec_eval_rel_level_file(capsys) -> None:
    both(capsys, "eval", TREC_EVAL / "qrels.rel_level", TREC_EVAL / "results.test", "-l", "2", "-q")


@pytest.mark.parametrize("ties", ["aware", "oblivious"])
def test_robust03_runs(capsys, ties) -> None:
    runs = [robust_run(name) for name in SOME_ROBUST_RUNS]
    code, out, _ = both(
        capsys, "eval", ROBUST_QRELS, *runs, "--ties", ties, "-q", "--format", "csv"
    )
    assert code == 0 and out.count("\n") > 1000


def test_several_runs_warnings_and_progress(capsys, tmp_path) -> None:
    """Names as read_runs gives them (a shared tag: file names), a skipped query's warning
    before its run's progress line, as the normal path prints them."""
    qrels = write(tmp_path, "q.txt", QRELS)
    a = write(tmp_path, "a.txt", RUN + "9 Q0 a 1 1 r\n")
    b = write(tmp_path, "b.txt.gz", gzip.compress(RUN.encode()))
    c = write(tmp_path, "c", RUN.replace(" r\n", "\n"))
    code, _, err, taken = run_cli(capsys, "eval", qrels, a, b, c, "-q", "--progress", small=True)
    assert code == 0 and taken
    lines = err.splitlines()
    assert lines[0] == "tiecore: warning: run a: 1 queries without judgments skipped (9)"
    assert [re.sub(r"\(.*s\)", "", line) for line in lines[1:]] == [
        f"tiecore: [{k}/3] {name} " for k, name in enumerate(["a", "b", "c"], start=1)
    ]
    both(capsys, "eval", qrels, a, b, c, "-q", "--format", "json")


BAD_RUNS = [
    "1 Q0 c 3 1.0\n",
    "1 Q0 c 3\n",
    "1 Q0 c 3 abc r\n",
    "1 Q0 c 3 1,5 r\n",
    "1 Q0 c 3 NaN r\n",
    "1 Q0 c 3 inf r\n",
    "1 Q0 c 3 1e999 r\n",
    "1 Q0 c 3 NA r\n",
    "1 Q0 c 3 1_0 r\n",
    "1 Q0 c 3 0x1p3 r\n",
    "1 Q0 b 3 1.0 r\n",
    "1 Q0 c 3 1.0 other\n",
    "1 Q0 doc x 3 1.0 r\n",
    "1 Q0 c 3 1.0 r \xff\n",
    "1 Q0 c 3 1.0 r \x00\n",
    "1 Q0 c 3 1.0 r\x0b\n",
    "7 Q0 c 3 1.0 r\n",
]
BAD_QRELS = [
    "1 0 c 1.5\n",
    "1 0 c x\n",
    "1 0 c +1\n",
    "1 0 c 1 extra\n",
    "1 0 c\n",
    "1 0 b 0\n",
    "1 0 c 9223372036854775808\n",
    "1 Q0 c 1 2.5 tag\n",
]


@pytest.mark.parametrize("line", BAD_RUNS)
def test_bad_run_lines(capsys, tmp_path, line) -> None:
    """Errors, warnings and accepted oddities alike: the output of the normal path."""
    qrels = write(tmp_path, "q.txt", QRELS)
    run = write(tmp_path, "r.txt", RUN.encode() + line.encode("utf-8", "surrogateescape"))
    if "\xff" in line:
        run.write_bytes(RUN.encode() + line.encode("latin-1"))
    both(capsys, "eval", qrels, run, "-q", small_expected=None)


@pytest.mark.parametrize("line", BAD_QRELS)
def test_bad_qrels_lines(capsys, tmp_path, line) -> None:
    qrels = write(tmp_path, "q.txt", QRELS + line)
    run = write(tmp_path, "r.txt", RUN)
    code, _, err = both(capsys, "eval", qrels, run, small_expected=False)
    assert code == 2 and err.startswith("tiecore: error: ")


@pytest.mark.parametrize(
    "text",
    ["", "\n\n", "# only a comment\n", "1 Q0 a 1 2\n1 Q0 b 2 1 r\n", "1 Q0 a\n", "\xef\xbb\xbf"],
)
def test_empty_or_short_runs(capsys, tmp_path, text) -> None:
    qrels = write(tmp_path, "q.txt", QRELS)
    run = write(tmp_path, "r.txt", text)
    code, _, _ = both(capsys, "eval", qrels, run, small_expected=False)
    assert code == 2


def test_problems_found_while_evaluating(capsys, tmp_path) -> None:
    """No judged query, GMAP tie-aware, a query named 'all' with -q: the normal path's."""
    qrels = write(tmp_path, "q.txt", QRELS + "all 0 a 1\n")
    none = write(tmp_path, "none.txt", "8 Q0 a 1 1 r\n")
    named_all = write(tmp_path, "all.txt", RUN + "all Q0 a 1 1 r\n")
    assert both(capsys, "eval", qrels, none, small_expected=False)[0] == 2
    assert both(capsys, "eval", qrels, named_all, "-m", "gm_map", small_expected=False)[0] == 2
    assert both(capsys, "eval", qrels, named_all, "-q", small_expected=False)[0] == 2
    assert both(capsys, "eval", qrels, named_all, "-q", "--format", "csv")[0] == 0


def test_other_inputs_take_the_normal_path(capsys, tmp_path) -> None:
    """Sampled mode, --spread, JSON Lines and big files are not for the small path."""
    qrels = write(tmp_path, "q.txt", QRELS)
    run = write(tmp_path, "r.txt", RUN)
    jsonl = write(tmp_path, "r.jsonl", '{"qid": "1", "docno": "a", "score": 1}\n')
    for argv in (
        ("eval", qrels, run, "--ties", "sampled", "--samples", "10"),
        ("eval", qrels, run, "--spread"),
        ("eval", qrels, jsonl),
    ):
        both(capsys, *argv, small_expected=False)
    assert not _small.claimed([str(qrels), str(run), "-"])
    with mock.patch.object(_small, "SMALL_BYTES", len(QRELS) + len(RUN) - 1):
        assert not _small.claimed([str(qrels), str(run)])


# ------------------------------------------------------------------------ reading


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_files(), st.booleans())
def test_reader_reads_what_read_run_reads(tmp_path_factory, generated, zipped) -> None:
    data, _ = generated
    path = tmp_path_factory.mktemp("runs") / "my.run.txt"
    path.write_bytes(gzip.compress(data) if zipped else data)
    frame = tiecore.read_run(path)
    small = _small.read_run(str(path))
    assert small.qid == frame["qid"].tolist()
    assert small.docno == frame["docno"].tolist()
    assert small.score.tobytes() == frame["score"].to_numpy().tobytes()
    assert small.tags == frame.attrs["tags"]


#: Bytes that break or bend a line: each is refused by io, or read alike by both.
NOISE = [b" ", b"\t", b"\r", b"\n", b"\x0b", b"#", b"x", b"1", b".", b"e", b"-", b"+", b"_"]
NOISE += [b"\xff", b"\x00", b"\xc3\xa9", b"\xa0", b"nan", b"inf", b"0x", b"\r\n", b"Q0"]


def with_noise(data: bytes, edits: list[tuple[int, bytes]]) -> bytes:
    """``data`` with each ``(position, noise)`` inserted in turn (positions wrap around)."""
    for at, noise in edits:
        at %= len(data) + 1
        data = data[:at] + noise + data[at:]
    return data


def read_alike(path: Path, normal, small) -> tuple | None:
    """``(normal(path), small(path))``, or None when either refuses the file: what
    tiecore.io refuses, the small reader must refuse too (the normal path then reads
    and reports it); what only the small reader refuses goes to the normal path."""
    try:
        frame = normal(path)
    except InputError:
        with pytest.raises(_small.Refused):
            small(str(path))
        return None
    try:
        return frame, small(str(path))
    except _small.Refused:
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_files(), st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(NOISE)), max_size=3))
def test_reader_never_reads_what_read_run_refuses(tmp_path_factory, generated, edits) -> None:
    path = tmp_path_factory.mktemp("runs") / "run.txt"
    path.write_bytes(with_noise(generated[0], edits))
    read = read_alike(path, tiecore.read_run, _small.read_run)
    if read is None:
        return
    frame, small = read
    assert (small.qid, small.docno) == (frame["qid"].tolist(), frame["docno"].tolist())
    assert small.score.tobytes() == frame["score"].to_numpy().tobytes()
    assert small.tags == frame.attrs["tags"]


QRELS_LINE = st.tuples(
    st.sampled_from(["1", "2", "q3", "é"]),
    st.sampled_from(["0", "Q0", "x"]),
    st.sampled_from(["a", "b", "doc-1", "文"]),
    st.sampled_from(["0", "1", "-1", "007", "2", "-0"]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(QRELS_LINE, min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(NOISE)), max_size=2),
    st.sampled_from([" ", "\t", " \t"]),
)
def test_qrels_reader_agrees(tmp_path_factory, lines, edits, sep) -> None:
    data = "\n".join(sep.join(line) for line in lines).encode()
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    path.write_bytes(with_noise(data, edits))
    read = read_alike(path, tiecore.read_qrels, _small.read_qrels)
    if read is None:
        return
    frame, (qid, docno, level) = read
    assert (qid, docno) == (frame["qid"].tolist(), frame["docno"].tolist())
    assert level.tolist() == frame["level"].tolist() and level.dtype == np.int64


def test_score_spellings_read_alike(tmp_path) -> None:
    """Every spelling the small reader takes is a number arrow reads to the same float."""
    spellings = ["1", "1.", ".5", "+1", "-0", "00.1", "1e5", "1E+05", "-.5e3", "1e-400"]
    spellings += ["4.9e-324", "2.4703282292062328e-324", "123456789012345678901234567890"]
    lines = "".join(f"1 Q0 d{k} 1 {s} r\n" for k, s in enumerate(spellings))
    path = write(tmp_path, "r.txt", lines)
    small = _small.read_run(str(path))
    assert small.score.tobytes() == tiecore.read_run(path)["score"].to_numpy().tobytes()


def test_names_are_read_runs_names(tmp_path) -> None:
    """The small path names runs with tiecore.io.files.file_names, as read_runs does: the
    rule spelled out (a shared tag, a name taken by a tag, a bare ending, case)."""
    displays = ["a/x.txt", "b/x.txt.gz", "y", "z.run", "q/.gz", "w.TXT"]
    tags = [["t"], ["t"], [], ["u"], ["x"], ["x-2"]]
    expected = ["x-3", "x-4", "y", "u", "x", "x-2"]
    assert _runs.file_names(displays, tags) == expected
    assert [_runs.stem(d) for d in displays] == ["x", "x", "y", "z.run", ".gz", "w"]
    files = []
    for display, tag in zip(displays, tags, strict=True):
        folder = tmp_path / str(len(files))
        folder.mkdir()
        files.append(
            write(folder, Path(display).name, RUN.replace(" r\n", f" {tag[0]}\n" if tag else "\n"))
        )
    assert list(tiecore.read_runs(files)) == expected


# ------------------------------------------------------------- judgments, rankings


@settings(max_examples=200, deadline=None)
@given(
    cases(max_queries=4, max_docs=9, score_pool=FLOAT32_COLLIDING, max_score_values=4),
    st.sampled_from(TIEBREAKS),
    st.integers(-1, 2),
)
def test_build_small_equals_build(case, tiebreak, rel_level) -> None:
    qrels, run = case.qrels_frame(), case.run_frame()
    assume(len(qrels) and run["qid"].isin(qrels["qid"]).any())
    big = Judgments.from_qrels(qrels, rel_level)
    small = Judgments.from_small(
        qrels["qid"].tolist(), qrels["docno"].tolist(), qrels["level"].to_numpy(), rel_level
    )
    for f in ("qids", "num_rel", "num_nonrel", "_keys", "_levels", "_query_of_key"):
        a, b = getattr(big, f), getattr(small, f)
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), f
    assert big._docnos.to_pylist() == small._docnos.tolist()
    seed = np.random.default_rng(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries without judgments: tested above
        want = Ranking.build(run, big, tiebreak=tiebreak, seed=np.random.default_rng(7))
        got = Ranking.build_small(
            run["qid"].tolist(), run["docno"].tolist(), run["score"].to_numpy(), small,
            tiebreak=tiebreak, seed=seed, name="run",
        )  # fmt: skip
    for f in fields(Ranking):
        a, b = getattr(want, f.name), getattr(got, f.name)
        if f.name == "docno":
            assert a.to_pylist() == b.tolist()
        elif isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), f.name
        else:
            assert a == b, f.name
    for policy in TIEBREAKS:  # retie moves numpy docnos as it moves arrow ones
        assert want.retie(policy).docno.to_pylist() == got.retie(policy).docno.tolist()


def test_constants_agree() -> None:
    from tiecore.evaluation.evaluator import MODE
    from tiecore.options import MODES

    assert cli_eval.TIES == MODES == tuple(MODE)


# ------------------------------------------------------------------------ start-up


def test_eval_of_a_small_run_loads_neither_pandas_nor_pyarrow(tmp_path) -> None:
    qrels = write(tmp_path, "q.txt", QRELS)
    run = write(tmp_path, "r.txt", GOOD.replace(" t\n", " r\n"))
    code = (
        "import sys\nfrom tiecore.cli import main\n"
        f"status = main(['eval', {str(qrels)!r}, {str(run)!r}, '-q'])\n"
        "heavy = [m for m in ('pandas', 'pyarrow', 'scipy') if m in sys.modules]\n"
        "print(status, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.splitlines()[-1] == "0 []", done.stderr
    assert done.stdout.splitlines()[:2] == [f"{'ties':<22}\tall\taware", f"{'runid':<22}\tall\tr"]


# -------------------------------------------------------------------- arrow path


def big_inputs(folder: Path, queries: int = 150, docs: int = 1000) -> tuple[Path, list[Path]]:
    """Qrels and three runs (one gzip, one without tags) of ``queries x docs`` rows with
    many ties, above the small path's limits (a run of more than 4 MB)."""
    rng = np.random.default_rng(5)
    qrels, runs = [], []
    for q in range(queries):
        judged = rng.choice(docs + 50, 80, replace=False)
        levels = rng.choice(3, len(judged), p=[0.6, 0.25, 0.15])
        qrels += [f"{301 + q} 0 FBIS3-{d:06d} {v}\n" for d, v in zip(judged, levels, strict=True)]
    qrels_path = write(folder, "qrels.txt", "".join(qrels))
    for r, name in enumerate(["a.run", "b.run.gz", "c.run"]):
        lines = []
        for q in range(queries + 2):  # two queries without judgments
            score = -np.sort(-rng.poisson(3.0, docs)) if r != 1 else -np.sort(-rng.random(docs))
            picked = rng.permutation(docs + 50)[:docs]
            tag = "" if r == 2 else f" sys{r}"
            lines += [
                f"{301 + q} Q0 FBIS3-{d:06d} {k + 1} {s}{tag}\n"
                for k, (d, s) in enumerate(zip(picked, score, strict=True))
            ]
        data = "".join(lines).encode()
        runs.append(write(folder, name, gzip.compress(data) if name.endswith(".gz") else data))
    assert runs[0].stat().st_size > 4 << 20
    return qrels_path, runs


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, list[Path]]:
    return big_inputs(tmp_path_factory.mktemp("big"))


def test_arrow_path_loads_no_pandas_and_prints_the_normal_output(capsys, big) -> None:
    """``tiecore eval`` on a run of more than 4 MB (and a gzip one, several runs) reads
    with pyarrow and never imports pandas (nor pyarrow.compute, a slow import); it
    prints what the normal path prints."""
    qrels, runs = big
    argv = ["eval", str(qrels), *map(str, runs), "-q", "--format", "csv"]
    code = (
        "import sys\nfrom tiecore.cli import main\n"
        f"status = main({argv!r})\n"
        "heavy = [m for m in ('pandas', 'scipy', 'pyarrow.compute') if m in sys.modules]\n"
        "print(status, heavy, 'pyarrow' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.splitlines()[-1] == "0 [] True", done.stderr
    normal = run_cli(capsys, *argv, small=False)
    assert normal[0] == 0 and done.stdout == normal[1]
    assert done.stderr.splitlines()[:-1] == normal[2].splitlines()  # the skipped-query warnings
    assert normal[2].count("warning") == 3


#: Layouts trec_eval reads alike, as published files have them: (which file, how a line
#: is rewritten from its fields).
LAYOUTS = {
    "qrels double spaces": ("qrels", lambda f: f"{f[0]} {f[1]}  {f[2]} {f[3]}\n"),
    "qrels fractional iteration": ("qrels", lambda f: f"{f[0]} 1.5 {f[2]} {f[3]}\n"),
    "qrels tabs and CRLF": ("qrels", lambda f: "\t".join(f) + "\r\n"),
    "run runs of spaces": ("run", lambda f: "  ".join(f[:3]) + "   " + " ".join(f[3:]) + "\n"),
    "run CRLF": ("run", lambda f: " ".join(f) + "\r\n"),
    "run tabs and spaces": ("run", lambda f: f"{f[0]}\t{f[1]} {f[2]}\t{f[3]} {f[4]}\t{f[5]}\n"),
    "run tag with a space": ("run", lambda f: " ".join(f) + " x\n"),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_published_layouts_load_no_pandas(capsys, big, tmp_path, layout) -> None:
    """Runs of spaces (TREC-COVID's published qrels), a fractional iteration, tabs,
    CR LF and a tag with a space take a path that never imports pandas (before, the
    careful reader's arrow conversions imported it: 300 modules, 45 MB), with the
    values of the plain layout."""
    qrels, runs = big
    which, line = LAYOUTS[layout]
    source = qrels if which == "qrels" else runs[0]
    rewritten = tmp_path / source.name
    rewritten.write_text("".join(line(text.split()) for text in source.read_text().splitlines()))
    files = [rewritten, runs[0]] if which == "qrels" else [qrels, rewritten]
    argv = ["eval", *map(str, files), "-q", "--format", "csv", "-m", "map,P@10,ndcg_cut_10"]
    code = (
        "import sys\nfrom tiecore.cli import main\n"
        f"status = main({argv!r})\n"
        "print(status, 'pandas' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.splitlines()[-1] == "0 False", done.stderr
    plain = run_cli(capsys, "eval", str(qrels), str(runs[0]), *argv[3:], small=False)
    assert plain[0] == 0 and done.stdout == plain[1]


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--ties", "oblivious", "-q", "--format", "json"],
        ["--ties", "oblivious", "--tiebreak", "random", "--seed", "2", "-c"],
        ["-m", "P@5,map,ndcg_cut_10,Bpref,Rprec,ERR@20", "-M", "100", "-q", "-l", "2"],
    ],
)
def test_arrow_path_agrees_on_big_runs(capsys, big, options) -> None:
    qrels, runs = big
    argv = ["eval", qrels, *runs, *options]
    arrow = run_cli(capsys, *argv, small=False, arrow=True)
    assert arrow[3] and arrow[0] == 0
    assert arrow[:3] == run_cli(capsys, *argv, small=False)[:3]


def test_arrow_path_progress_and_renames(capsys, tmp_path) -> None:
    """Progress lines after each run, as the normal path prints them; a run whose tags
    prove its first line's guess wrong is renamed (and one it names evaluated again)."""
    qrels = write(tmp_path, "q.txt", QRELS)
    a = write(tmp_path, "a.txt", RUN.replace(" r\n", " x\n"))
    b = write(tmp_path, "b.txt", RUN.replace("2 Q0 e 2 5 r\n", "2 Q0 e 2 5 x\n"))  # r, then x
    c = write(tmp_path, "x", RUN)
    argv = ["eval", qrels, a, b, c, "-q", "--progress", "--ties", "oblivious"]
    argv += ["--tiebreak", "random"]
    arrow = run_cli(capsys, *argv, small=False, arrow=True)
    normal = run_cli(capsys, *argv, small=False)
    assert arrow[3] and arrow[:2] == normal[:2]

    def untimed(err: str) -> list[str]:
        return [re.sub(r"\(.*s\)", "", line) for line in err.splitlines()]

    assert untimed(arrow[2]) == untimed(normal[2])
    # c is guessed x-2 (its tag r was b's first one too), named r once b is read whole
    assert [line.split("] ")[1] for line in untimed(arrow[2])] == ["x ", "b ", "x-2 "]
    assert [line.split("\t")[2] for line in arrow[1].splitlines() if line.startswith("runid")] == [
        "x",
        "b",
        "r",
    ]


# ---------------------------------------------------------------------- one core


@pytest.mark.parametrize(("ties", "tiebreak"), [("aware", "trec_eval"), ("oblivious", "random")])
def test_every_path_runs_the_one_core(tmp_path, ties, tiebreak) -> None:
    """The small path, the arrow path and :func:`tiecore.evaluate` evaluate each run
    through :meth:`Evaluator.run` with the same order and seed, to the same values;
    the evaluator pickles whole (dask sends it to the workers)."""
    import pickle

    from tiecore.evaluation.evaluator import Evaluator
    from tiecore.measures import parse_measures

    qrels, run = write(tmp_path, "q.txt", QRELS), write(tmp_path, "r.txt", RUN)
    measures = parse_measures(["P@2", "AP", "nDCG@3", "RR"])
    options = {"ties": ties, "tiebreak": tiebreak, "seed": 3}
    calls, values, original = [], [], Evaluator.run

    def spy(self, name, build):
        calls.append((name, self.order, self.rng(name) is None))
        return original(self, name, build)

    with mock.patch.object(Evaluator, "run", spy):
        for module in (_small, _arrow_eval):
            table = module.evaluate_files(str(qrels), [str(run)], measures, **options)
            values.append(table.columns["value"])
        frame = tiecore.evaluate(
            tiecore.read_runs([run]), tiecore.read_qrels(qrels), measures, **options
        )
        values.append(frame["value"].tolist())
    order = tiebreak if ties == "oblivious" else "file_order"
    assert calls == [("r", order, order != "random")] * 3
    assert values[0] == values[1] == values[2]
    evaluator = Evaluator(Judgments.from_small(["1"], ["a"], np.array([1])), measures, **options)
    again = pickle.loads(pickle.dumps(evaluator))
    kept = ("measures", "ties", "tiebreak", "samples", "seed", "depth", "complete")
    assert all(getattr(again, key) == getattr(evaluator, key) for key in kept)
    assert again.judgments.qids.tolist() == ["1"]

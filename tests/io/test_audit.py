"""The second audit's reproducers (issue 33): each gives one clean error line, exit 2.

Each case is one the audit found raising a traceback; the test fails on the traceback
(``main`` lets a non-tiecore exception through) and on a message that does not name
the input and what was expected.
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys

import ir_measures
import pytest
from shared_data import TREC_EVAL

import tiecore
from tiecore import pytrec
from tiecore.cli import main
from tiecore.errors import InputError
from tiecore.explain import precision

QRELS, RUN = str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")


def one_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The error line of ``tiecore ARGV``, which must exit 2 with it alone."""
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("tiecore: error: ")
    return line


@pytest.mark.parametrize(
    ("measure", "needles"),
    [
        ("ERR(max_grade=5)@5", ["max_grade", "max_rel"]),  # ERR's parameter is max_rel
        ("P(foo=1)@10", ["foo", "P"]),  # ir_measures parses any keyword
    ],
)
def test_unknown_measure_parameters_are_named(capsys, measure, needles):
    line = one_error(capsys, "eval", QRELS, RUN, "-m", measure)
    assert all(needle in line for needle in needles), line


def test_err_above_its_grade_advises_max_rel(capsys):
    line = one_error(
        capsys, "eval", str(TREC_EVAL / "qrels.rel_level"), RUN, "-m", "ERR(max_rel=1)@5"
    )
    assert "ERR(max_rel=" in line and "max_grade" not in line, line


def test_an_ir_measures_object_with_an_unknown_parameter():
    with pytest.raises(InputError, match="foo is no parameter of ir_measures' P"):
        tiecore.evaluate(
            tiecore.read_run(RUN), tiecore.read_qrels(QRELS), [ir_measures.P(foo=1) @ 10]
        )


def test_a_dask_address_of_an_unknown_scheme(capsys):
    line = one_error(capsys, "eval", QRELS, RUN, "-m", "AP", "--dask", "foo://bar")
    assert "foo://bar" in line and "unknown address scheme" in line and "local:N" in line


def test_a_score_beyond_float64_in_coarsen():
    with pytest.raises(InputError, match="too large for a 64-bit float"):
        precision.coarsen([10**400], "bf16")


@pytest.mark.parametrize("where", ["qrels", "run query", "run docno", "run records"])
def test_a_lone_surrogate_in_dictionaries_and_records(where):
    bad = "d\ud800"
    with pytest.raises(InputError, match=r"'d\\ud800' is not valid text"):
        if where == "qrels":
            pytrec.RelevanceEvaluator({"q1": {bad: 1}}, {"map"})
        elif where == "run query":
            pytrec.RelevanceEvaluator({"q1": {"d1": 1}}, {"map"}).evaluate({bad: {"d1": 1.0}})
        elif where == "run docno":
            pytrec.RelevanceEvaluator({"q1": {"d1": 1}}, {"map"}).evaluate({"q1": {bad: 1.0}})
        else:
            tiecore.read_run([ir_measures.ScoredDoc("q1", bad, 1.0)])


@pytest.mark.parametrize("command", ["eval", "compare"])
def test_damaged_deflate_blocks(capsys, tmp_path, command):
    """Two bytes flipped at 40 places of a gzip run (a damaged block header, distance or
    CRC): one line naming the file each time.  Before, the run-name peek let zlib's own
    error through (``invalid stored block lengths``)."""
    data = gzip.compress((TREC_EVAL / "results.test").read_bytes())
    damaged = tmp_path / "run.gz"
    for at in range(10, len(data) - 8, (len(data) - 18) // 40):
        flipped = bytearray(data)
        flipped[at] ^= 0x55
        flipped[at + 1] ^= 0xAA
        damaged.write_bytes(bytes(flipped))
        runs = [str(damaged)] if command == "eval" else [str(damaged), RUN]
        line = one_error(capsys, command, QRELS, *runs, "-m", "AP")
        assert "run.gz: corrupt gzip data" in line, (at, line)


@pytest.mark.parametrize("command", ["eval", "compare"])
def test_o_never_overwrites_the_file_on_stdin(tmp_path, command):
    """``tiecore eval QRELS - -o r.txt < r.txt``: stdin's file is an input, whatever it is
    named; exit 2, the file byte-identical."""
    taken = tmp_path / ("run.txt" if command == "eval" else "qrels.txt")
    original = (TREC_EVAL / ("results.test" if command == "eval" else "qrels.test")).read_bytes()
    taken.write_bytes(original)
    argv = [QRELS, "-"] if command == "eval" else ["-", RUN, str(TREC_EVAL / "results.trunc")]
    with open(taken, "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "tiecore", command, *argv, "-m", "AP", "-o", str(taken)],
            stdin=stdin, capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "is the standard input's file" in done.stderr and "Traceback" not in done.stderr
    assert taken.read_bytes() == original


KILLED_WRITE = """
import os, signal, sys
from tiecore.cli import output
def fsync(fd):  # the signal arrives mid-write, after the temporary file is filled
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))
output.os.fsync = fsync
output.write_output(sys.argv[1], "x" * 100_000)
"""


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP"])
def test_a_signalled_write_leaves_no_temporary_file(tmp_path, signal_name):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITE, str(target), signal_name],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 128 + getattr(signal, signal_name), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert target.read_text() == "old\n"


def test_the_next_write_removes_a_killed_write_s_file(tmp_path, capsys):
    """SIGKILL leaves the temporary file (named with the dead writer's pid): the next
    ``-o`` to the same file removes it; a live writer's is left alone."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = tmp_path / f".out.txt.tiecore-{dead.stdout.strip()}-abc123.tmp"
    live = tmp_path / f".out.txt.tiecore-{os.getppid()}-def456.tmp"
    other = tmp_path / f".other.txt.tiecore-{dead.stdout.strip()}-abc123.tmp"
    for path in (stale, live, other):
        path.write_text("x" * 1000)
    assert main(["eval", QRELS, RUN, "-m", "AP", "-o", str(tmp_path / "out.txt")]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.txt", live.name, other.name])


@pytest.mark.parametrize("command", [["eval", "--ties", "sampled"], ["report"]])
def test_sampled_mode_honours_the_memory_budget(capsys, monkeypatch, command):
    """10 million samples need about 1.4 GB here: over a 200 MB TIECORE_MEMORY_BUDGET
    both commands refuse them in one line (report raised a traceback; the guard read
    half the available memory and ignored the budget)."""
    monkeypatch.setenv("TIECORE_MEMORY_BUDGET", "200000000")
    line = one_error(capsys, *command, QRELS, RUN, "-m", "AP", "--samples", "10000000")
    assert "more than the 200 MB allowed (TIECORE_MEMORY_BUDGET" in line, line
    assert "use at most" in line


def test_listing_orderings_checks_its_limit_without_huge_factorials(monkeypatch):
    """3 million tied scores: ``orderings`` says None (more than its 5,040) after a few
    multiplications; it computed 3,000,000! first (31 s in the audit)."""
    import math

    from tiecore.explain import orderings

    def small_factorial(n):
        assert n <= 10, f"{n}! computed"
        return math.factorial(n)

    monkeypatch.setattr(orderings.math, "factorial", small_factorial)
    assert orderings.orderings([0.5] * 3_000_000) is None
    assert orderings.count_orderings([0.5] * 3_000_000, above=5040) > 5040
    assert orderings.count_orderings([0.9, 0.7, 0.7, 0.7, 0.4, 0.4], above=5040) == 12


BIG = 1_700_000_000_000_000_000  # nanoseconds since 1970: past 2**53
#: A relevant doc "a" scored one above two others: as float64 all three tie (RR 1/3 to
#: 1 by the tie-break), where the integers rank it first (RR 1).
TIED_AS_FLOATS = {"a": BIG + 2, "b": BIG + 1, "c": BIG, "d": 5}


@pytest.mark.parametrize("door", ["frame", "parquet", "pytrec dict", "metrics array"])
def test_integer_scores_that_float64_would_tie_are_refused(tmp_path, door):
    """Integer scores past 2**53 were cast to float64, so distinct scores tied: RR 0.75
    where it is 1.0.  Each door now refuses them in one line naming both values."""
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame(
        {"qid": "q1", "docno": list(TIED_AS_FLOATS), "score": list(TIED_AS_FLOATS.values())}
    )
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["a"], "level": [1]})
    with pytest.raises(InputError, match=r"differs from .* but not as a 64-bit float"):
        if door == "frame":
            tiecore.evaluate(frame, qrels, ["RR"])
        elif door == "parquet":
            frame.to_parquet(tmp_path / "run.parquet")
            tiecore.evaluate(tiecore.read_run(tmp_path / "run.parquet"), qrels, ["RR"])
        elif door == "pytrec dict":
            pytrec.RelevanceEvaluator({"q1": {"a": 1}}, {"recip_rank"}).evaluate(
                {"q1": TIED_AS_FLOATS}
            )
        else:
            scores = np.array([list(TIED_AS_FLOATS.values())], dtype=np.int64)
            tiecore.metrics.reciprocal_rank(np.array([[1, 0, 0, 0]]), scores)


def test_large_integer_scores_that_float64_tells_apart_keep_their_order():
    """Past 2**53 but 4,096 apart: distinct as float64, so they rank as the integers do."""
    import pandas as pd

    scores = {"a": BIG + 8192, "b": BIG + 4096, "c": BIG}
    frame = pd.DataFrame({"qid": "q1", "docno": list(scores), "score": list(scores.values())})
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["a"], "level": [1]})
    found = tiecore.evaluate(frame, qrels, ["RR"])
    assert found["value"].tolist() == [1.0]


def _bounded(argv: list[str]) -> subprocess.CompletedProcess:
    """``tiecore ARGV`` in a process of at most 3 GB of address space (the command alone
    needs well under 1 GB): reading a bomb whole fails there with 'out of memory'."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [sys.executable, "-m", "tiecore", *argv],
        capture_output=True, text=True, check=False, timeout=300, preexec_fn=limit,
    )  # fmt: skip


@pytest.mark.parametrize("source", ["gzip bomb", "/dev/zero"])
@pytest.mark.parametrize("role", ["run", "qrels"])
def test_binary_input_is_refused_before_it_is_read_whole(tmp_path, source, role):
    """A 4 MB gzip of 4 GiB of NUL bytes (256 gzip members of 16 MiB each) and /dev/zero:
    the first MiB (inflated) is checked before the rest is read, so the command says 'NUL
    byte' in a process of 3 GB; before, it read (and inflated) the whole input first (3 GB
    for a 4 MB gzip; /dev/zero until memory was gone)."""
    path = "/dev/zero"
    if source == "gzip bomb":
        member = gzip.compress(bytes(1 << 24), compresslevel=9)
        bomb = tmp_path / "bomb.gz"
        bomb.write_bytes(member * 256)
        path = str(bomb)
    argv = ["eval", QRELS, path] if role == "run" else ["eval", path, RUN]
    done = _bounded([*argv, "-m", "AP"])
    assert done.returncode == 2, done.stderr
    assert done.stderr.endswith(f"tiecore: error: {path}, line 1: NUL byte (binary data) "
                                "(expected a text file)\n"), done.stderr  # fmt: skip


def test_a_refusal_loses_no_other_run_or_measure(capsys, monkeypatch, tmp_path):
    """Two runs, one with a tie group of 7 docs, 2 of them relevant: with the exact
    IPrec's budget at 0 its IPrec is refused; every other value of both runs prints (the
    same as each evaluated alone), the refusal is one line naming the run, query and
    measure, and the exit status is 3.  Before, the command stopped at the refusal (exit
    2) and printed nothing."""
    from tiecore.measures import iprec

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q1 0 d{i} {int(i % 3 == 0)}\n" for i in range(9)))
    tied, ranked = tmp_path / "tied.run", tmp_path / "ranked.run"
    tied.write_text(
        "".join(f"q1 Q0 d{i} {i + 1} {1.0 if i < 6 else 9 - i} tied\n" for i in range(9))
    )
    ranked.write_text("".join(f"q1 Q0 d{i} {i + 1} {9 - i} ranked\n" for i in range(9)))
    monkeypatch.setattr(iprec, "BUDGET", 0.0)
    argv = ["eval", str(qrels), str(tied), str(ranked), "-m", "map", "-m", "iprec_at_recall.0.5"]
    assert main(argv) == 3
    captured = capsys.readouterr()
    (refusal,) = captured.err.splitlines()
    assert refusal.startswith("tiecore: refused: run tied: query q1 has a tie group of 7 docs")
    assert "IPrec" in refusal and "(expected ties='oblivious' or 'sampled'" in refusal
    alone = {}
    for run, measures in ((tied, ["map"]), (ranked, ["map", "iprec_at_recall.0.5"])):
        flags = [a for m in measures for a in ("-m", m)]
        assert main(["eval", str(qrels), str(run), *flags]) == 0
        alone[run.name] = capsys.readouterr().out.splitlines()[1:]  # less the mode line
    assert captured.out.splitlines() == [
        "ties                  \tall\taware",
        *alone["tied.run"],
        *alone["ranked.run"],
    ]


def test_the_pass_after_a_refusal_runs_where_the_first_ran(capsys, monkeypatch, tmp_path):
    """With ``--dask``, the per-measure pass after a refusal evaluates on the same
    client as the first pass (it ran locally before, whatever ``--dask`` said)."""
    import contextlib

    from tiecore.cli import eval as eval_command
    from tiecore.measures import iprec

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q1 0 d{i} {int(i % 3 == 0)}\n" for i in range(9)))
    tied = tmp_path / "tied.run"
    tied.write_text("".join(f"q1 Q0 d{i} {i + 1} 1.0 tied\n" for i in range(9)))
    marker, clients = object(), []

    @contextlib.contextmanager
    def fake_client(spec):
        yield marker if spec == "tcp://scheduler:8786" else None

    evaluate_runs = eval_command.evaluate_runs

    def recording(*args, client=None, **kwargs):
        clients.append(client)
        return evaluate_runs(*args, **kwargs)  # run here: the marker is no client

    monkeypatch.setattr(eval_command, "dask_client", fake_client)
    monkeypatch.setattr(eval_command, "_local_declines", lambda spec, files: False)
    monkeypatch.setattr(eval_command, "evaluate_runs", recording)
    monkeypatch.setattr(iprec, "BUDGET", 0.0)
    argv = ["eval", str(qrels), str(tied), "-m", "map", "-m", "iprec_at_recall.0.5"]
    assert main([*argv, "--dask", "tcp://scheduler:8786"]) == 3
    assert "tiecore: refused: run tied" in capsys.readouterr().err
    assert len(clients) == 3 and all(client is marker for client in clients)

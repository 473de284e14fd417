"""The second audit's reproducers (issue 33): each gives one clean error line, exit 2.

Each case is one the audit found raising a traceback; the test fails on the traceback
(``main`` lets a non-tiecore exception through) and on a message that does not name
the input and what was expected.
"""

from __future__ import annotations

import gzip

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


@pytest.mark.parametrize("where", ["qrels", "run records"])
def test_a_lone_surrogate_in_dictionaries_and_records(where):
    bad = "d\ud800"
    with pytest.raises(InputError, match=r"'d\\ud800' is not valid text"):
        if where == "qrels":
            pytrec.RelevanceEvaluator({"q1": {bad: 1}}, {"map"})
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

"""``tiecore eval`` of a big run in batches of whole queries (issue 36, item 2).

The batches are made tiny (``$TIECORE_BATCH_BYTES``) so that queries span the
texts they are read in; the output must be byte for byte that of the run read
whole (values, mean over queries, warnings, errors), the batched path must really be
taken (the whole read is made to fail), and a file it cannot settle (interleaved
queries, a bad line in a later batch) is read whole, its error naming the line.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from tiecore import cli
from tiecore.evaluation import small as _small
from tiecore.io import batches, trec

WHOLE = 1 << 40  # no file is batchable


def _qrels(path: Path, rng: np.random.Generator, qids: list[str]) -> None:
    lines = []
    for q in qids:
        for d in rng.choice(80, size=int(rng.integers(1, 25)), replace=False):
            lines.append(f"{q} 0 d{d} {int(rng.choice(3, p=[0.5, 0.3, 0.2]))}\n")
    path.write_text("".join(lines))


def _run(
    path: Path,
    rng: np.random.Generator,
    qids: list[str],
    *,
    line=lambda f: " ".join(f) + "\n",
    tags=("tag",),
) -> list[str]:
    """Queries in the order given, each one stretch of rows, integer scores (ties)."""
    lines = []
    for q in qids:
        n = int(rng.integers(1, 60))
        docs = rng.choice(80, size=n, replace=False)
        scores = -np.sort(-rng.integers(0, 6, size=n))
        for r, (d, s) in enumerate(zip(docs, scores, strict=True)):
            tag = tags[int(rng.integers(len(tags)))]
            lines.append(line([q, "Q0", f"d{d}", str(r), f"{s}.0", tag]))
    path.write_text("".join(lines), newline="")
    return lines


def _eval(capsys, monkeypatch, argv: list, batch: int, *, whole_read_fails: bool = False):
    monkeypatch.setenv(batches.BATCH_ENV, str(batch))
    read = trec.read_run_columns

    def refuse(path):
        raise AssertionError(f"{path} was read whole")

    with (
        mock.patch.object(_small, "SMALL_BYTES", -1),  # not the small-input path
        mock.patch.object(trec, "read_run_columns", refuse if whole_read_fails else read),
    ):
        code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def collection(tmp_path) -> tuple[Path, Path]:
    rng = np.random.default_rng(7)
    qids = [str(q) for q in rng.permutation(np.arange(1, 120))]
    judged = sorted(qids[: len(qids) - 9])  # 9 run queries without judgments
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    _qrels(qrels, rng, [*judged, "999"])  # and a judged query not in the run
    _run(run, rng, qids)
    return qrels, run


OPTIONS = [
    [],
    ["-q"],
    ["--ties", "oblivious", "-q", "--format", "json"],
    ["-c", "-M", "7", "-l", "2", "-q"],
]
MEASURES = ["-m", "map,P@5,ndcg_cut_10,Rprec,recip_rank,bpref,ERR@20,recall_10"]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("batch", [300, 2000, 9000])
def test_batched_is_byte_identical(capsys, monkeypatch, collection, options, batch) -> None:
    """Batches of 300 bytes cut most queries; the mean adds the queries in the same
    order: the output is byte for byte the whole read's."""
    qrels, run = collection
    argv = ["eval", qrels, run, *MEASURES, *options]
    whole = _eval(capsys, monkeypatch, argv, WHOLE)
    assert whole[0] == 0 and "without judgments" in whole[2]
    assert _eval(capsys, monkeypatch, argv, batch, whole_read_fails=True) == whole


def test_batched_layouts_tags_and_several_runs(capsys, monkeypatch, tmp_path) -> None:
    """A published layout (runs of spaces, CR LF) and tags that vary, read in batches;
    a small run beside it is read whole; the runs' names come from their tags."""
    rng = np.random.default_rng(3)
    qids = [str(q) for q in range(1, 60)]
    qrels, spaced, tagged = tmp_path / "qrels", tmp_path / "spaced", tmp_path / "tagged"
    _qrels(qrels, rng, qids)
    _run(spaced, rng, qids, line=lambda f: "  ".join(f) + " \r\n", tags=("spaced",))
    _run(tagged, rng, qids[5:], tags=("a", "b"))
    small = tmp_path / "small"
    small.write_text("1 Q0 d1 1 2.0 small\n")
    argv = ["eval", qrels, spaced, tagged, small, *MEASURES, "-q"]
    whole = _eval(capsys, monkeypatch, argv, WHOLE)
    assert whole[0] == 0 and "spaced" in whole[1] and "tagged" in whole[1]
    assert _eval(capsys, monkeypatch, argv, 700) == whole


def test_interleaved_queries_are_read_whole(capsys, monkeypatch, tmp_path) -> None:
    """trec_eval takes a query's rows wherever they are: a query in two stretches of
    the file sends it to the whole read, with the same output."""
    rng = np.random.default_rng(5)
    qids = [str(q) for q in range(1, 40)]
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    _qrels(qrels, rng, qids)
    lines = _run(run, rng, qids)
    half = len(lines) // 2
    lines[half:] = lines[half:][::-1]  # the query at the cut, in two stretches (scores rise)
    run.write_text("".join([*lines, "1 Q0 d999 99 0.5 tag\n"]))  # query 1 again, at the end
    argv = ["eval", qrels, run, *MEASURES]
    whole = _eval(capsys, monkeypatch, argv, WHOLE)
    read = mock.Mock(wraps=trec.read_run_columns)
    with mock.patch.object(trec, "read_run_columns", read):
        assert _eval(capsys, monkeypatch, argv, 500) == whole
    assert read.call_count == 1
    with pytest.raises(batches.NotBatched):
        monkeypatch.setenv(batches.BATCH_ENV, "500")
        list(batches.run_batches(run))


@pytest.mark.parametrize(
    "bad",
    [
        ("5 Q0 d1 3 abc tag\n", "score 'abc' is not a number"),
        ("5 Q0 d1 3 1.0\n", "5 fields but line 1 has 6"),
        ("DUP", "appears twice for query"),
    ],
)
def test_errors_in_a_later_batch_name_their_line(capsys, monkeypatch, tmp_path, bad) -> None:
    rng = np.random.default_rng(9)
    qids = [str(q) for q in range(1, 40)]
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    _qrels(qrels, rng, qids)
    lines = _run(run, rng, qids)
    at = len(lines) - 20  # in the last batches
    text, problem = bad
    if text == "DUP":
        text = lines[at - 1]
    lines.insert(at, text)
    run.write_text("".join(lines))
    argv = ["eval", qrels, run, *MEASURES]
    whole = _eval(capsys, monkeypatch, argv, WHOLE)
    assert whole[0] != 0 and f"{run}, line {at + 1}:" in whole[2] and problem in whole[2], whole[2]
    assert _eval(capsys, monkeypatch, argv, 400) == whole


def test_a_gzip_run_in_batches(capsys, monkeypatch, collection, tmp_path) -> None:
    """A gzip run is inflated batch by batch: the output is the whole read's."""
    import gzip

    qrels, run = collection
    packed = tmp_path / "run.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    argv = ["eval", qrels, packed, *MEASURES, "-q"]
    whole = _eval(capsys, monkeypatch, argv, WHOLE)
    assert whole[0] == 0
    assert _eval(capsys, monkeypatch, argv, 1000, whole_read_fails=True) == whole


def test_the_random_tiebreak_reads_whole(capsys, monkeypatch, collection) -> None:
    """The random tie-break permutes a run's rows as a whole: such a run is read whole,
    with the same output."""
    qrels, run = collection
    argv = ["eval", qrels, run, *MEASURES, "--ties", "oblivious", "--tiebreak", "random"]
    whole = _eval(capsys, monkeypatch, argv, WHOLE)
    assert whole[0] == 0
    assert _eval(capsys, monkeypatch, argv, 500) == whole


def test_a_run_without_judged_queries(capsys, monkeypatch, tmp_path) -> None:
    """The error of a run none of whose queries has judgments, as the whole read's."""
    rng = np.random.default_rng(2)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    _qrels(qrels, rng, ["1", "2"])
    _run(run, rng, [str(q) for q in range(10, 40)])
    argv = ["eval", qrels, run, *MEASURES]
    whole = _eval(capsys, monkeypatch, argv, WHOLE)
    assert whole[0] != 0 and "none of its queries has judgments" in whole[2]
    assert _eval(capsys, monkeypatch, argv, 300, whole_read_fails=True) == whole

"""Runs and qrels from Parquet, JSON Lines, stdin, DataFrames and ir_measures records.

Every format is checked against the TREC text reader on the same rows (real
Robust03 runs, trec_eval's test files), against ir_measures' own readers, and
against tiecore.distributed's Parquet reading; bad input names file and line.
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import ir_measures
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_data import ROBUST_QRELS, TREC_EVAL, robust_run

import tiecore
from tiecore.errors import InputError
from tiecore.io.frames import check_run

RUN = robust_run("input.uwmtCR0.gz")
TIED = robust_run("input.rutcor03100.gz")
QRELS = ROBUST_QRELS


def plain(frame: pd.DataFrame) -> list[tuple]:
    return list(frame.itertuples(index=False, name=None))


def write_jsonl(path: Path, records: list[dict], *, compress: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.write_bytes(gzip.compress(text) if compress else text)
    return path


@pytest.fixture(scope="module")
def text_run() -> pd.DataFrame:
    return tiecore.read_run(RUN)


# ------------------------------------------------------------------ same rows, same frame


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".ndjson", ".jsonl.gz"])
def test_formats_equal_the_text_reader(tmp_path, text_run, suffix):
    path = tmp_path / f"bm25{suffix}"
    records = text_run.assign(rank=range(len(text_run)), tag="uwmtCR0")
    if suffix == ".parquet":
        records.to_parquet(path, index=False)
    else:
        write_jsonl(path, records.to_dict("records"), compress=suffix.endswith(".gz"))
    run = tiecore.read_run(path)
    assert plain(run) == plain(text_run)
    assert list(run.columns) == ["qid", "docno", "score"]
    assert run.attrs["source"] == str(path)
    # JSON Lines takes its name from the tag, as text runs do; Parquet from its file
    # name, as tiecore.distributed names Parquet runs
    assert run.attrs["name"] == ("bm25" if suffix == ".parquet" else "uwmtCR0")
    assert list(tiecore.read_runs([path])) == [run.attrs["name"]]


def test_parquet_agrees_with_distributed(tmp_path, text_run):
    from tiecore.distributed import read_parquet_runs

    path = tmp_path / "run=bm25.parquet"
    text_run.assign(qid=text_run["qid"].astype(int)).to_parquet(path, index=False)  # int qids
    ours = tiecore.read_run(path)
    theirs = read_parquet_runs(path)
    assert list(theirs) == [ours.attrs["name"]] == ["bm25"]
    assert plain(check_run(theirs["bm25"].read())) == plain(ours) == plain(text_run)


def test_qrels_formats(tmp_path):
    qrels = tiecore.read_qrels(TREC_EVAL / "qrels.test")
    parquet, jsonl = tmp_path / "q.parquet", tmp_path / "q.jsonl"
    qrels.assign(iteration="0").to_parquet(parquet, index=False)
    renamed = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "level": "relevance"})
    write_jsonl(jsonl, renamed.to_dict("records"))  # ir_measures' column names
    for path in (parquet, jsonl):
        assert plain(tiecore.read_qrels(path)) == plain(qrels)


def test_ir_measures_records_equal_the_text_readers(text_run):
    run = tiecore.read_run(ir_measures.read_trec_run(str(RUN)))  # a generator of ScoredDoc
    assert plain(run) == plain(text_run)
    qrels = tiecore.read_qrels(ir_measures.read_trec_qrels(str(QRELS)))  # Qrel tuples
    assert plain(qrels) == plain(tiecore.read_qrels(QRELS))
    runs = tiecore.read_runs(ir_measures.read_trec_run(str(RUN)))  # one run, not many
    assert len(runs) == 1


def test_evaluate_is_the_same_whatever_the_source(tmp_path):
    """Tie-heavy run: values (aware and trec_eval order) do not depend on the format."""
    text = tiecore.read_run(TIED)
    qrels = tiecore.read_qrels(QRELS)
    path = tmp_path / "tied.parquet"
    text.to_parquet(path, index=False)
    pytrec = {}
    for qid, docno, score in plain(text):
        pytrec.setdefault(qid, {})[docno] = score
    measures = ["AP", "P@10", "nDCG@10", "RR"]
    for ties in ("aware", "oblivious"):
        expected = tiecore.evaluate(text, qrels, measures, ties=ties, per_query=True)
        for source in (path, pytrec, text):
            got = tiecore.evaluate(
                tiecore.read_run(source), qrels, measures, ties=ties, per_query=True
            )
            pd.testing.assert_frame_equal(got.drop(columns="run"), expected.drop(columns="run"))


def test_pytrec_eval_dicts():
    run = tiecore.read_run({"q1": {"d1": 1.5, "d2": 0.5}, "q2": {"d1": 3}})
    assert plain(run) == [("q1", "d1", 1.5), ("q1", "d2", 0.5), ("q2", "d1", 3.0)]
    assert run.attrs["name"] == "run"
    assert len(tiecore.read_runs({"q1": {"d1": 1.0}})) == 1  # one run, not a mapping of runs


def test_a_dataframe_is_checked():
    frame = pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [1, 2]})
    assert plain(tiecore.read_run(frame)) == [("1", "a", 1.0), ("1", "b", 2.0)]
    with pytest.raises(InputError, match=r"^run DataFrame: row 1: score is missing"):
        tiecore.read_run(frame.assign(score=[1.0, None]))


IDS = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8),
    st.integers(0, 10**6),
    st.sampled_from(["2020-01-01", "2020-01-01 10:00:00", "1e5", "true", "null", " a b "]),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(IDS, IDS, st.floats(allow_nan=False, allow_infinity=False)),
        min_size=1,
        max_size=12,
        unique_by=lambda row: (str(row[0]), str(row[1])),
    ),
    ints=st.booleans(),
)
def test_round_trip(tmp_path_factory, rows, ints):
    """Any ids (spaces, unicode, dates, numbers) and scores come back as check_run gives them."""
    if ints:  # one type per column, as Parquet needs
        rows = [(i, j, score) for i, (_, _, score) in enumerate(rows) for j in [i * 7]]
    else:
        rows = [(str(q), str(d), score) for q, d, score in rows]
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    expected = plain(check_run(frame))
    folder = tmp_path_factory.mktemp("round")
    frame.to_parquet(folder / "r.parquet", index=False)
    write_jsonl(folder / "r.jsonl", frame.to_dict("records"))
    for name in ("r.parquet", "r.jsonl"):
        assert plain(tiecore.read_run(folder / name)) == expected


# ------------------------------------------------------------------------ stdin


def test_stdin_api(monkeypatch, text_run):
    data = RUN.read_bytes()  # gzip on stdin
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    run = tiecore.read_run("-")
    assert plain(run) == plain(text_run) and run.attrs["source"] == "<stdin>"
    jsonl = "".join(json.dumps(r) + "\n" for r in text_run.head(5).to_dict("records"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(jsonl.encode())))
    assert plain(tiecore.read_run("-")) == plain(text_run.head(5))
    buffer = io.BytesIO()
    text_run.head(7).to_parquet(buffer, index=False)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(buffer.getvalue())))
    assert plain(tiecore.read_run("-")) == plain(text_run.head(7))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1 0 a x\n")))
    with pytest.raises(InputError, match=r"^<stdin>, line 1: level 'x' is not an integer"):
        tiecore.read_qrels("-")


def test_uploads_are_recognised_by_their_bytes(text_run):
    buffer = io.BytesIO()
    text_run.head(3).to_parquet(buffer, index=False)
    buffer.name = "upload.bin"
    assert plain(tiecore.read_run(buffer)) == plain(text_run.head(3))


# ------------------------------------------------------------------------- errors


def test_jsonl_errors_name_the_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"qid": "1", "docno": "a", "score": 1}\n\n{"qid": "1", "docno": "b"}\n')
    with pytest.raises(InputError, match=r"run.jsonl, line 3: score is missing"):
        tiecore.read_run(path)
    path.write_text(
        '{"qid": "1", "docno": "a", "score": 1}\n{"qid": 1, "docno": "a", "score": 2}\n'
    )
    with pytest.raises(InputError, match=r"run.jsonl, line 2: docno 'a' appears twice"):
        tiecore.read_run(path)  # mixed types: the careful path, still the right line
    path.write_text('{"qid": "1", "docno": "a", "score": 1}\n{"qid": "1", oops\n')
    with pytest.raises(InputError, match=r"run.jsonl, line 2: not valid JSON"):
        tiecore.read_run(path)
    path.write_text('{"qid": "1", "docno": "a", "score": "high"}\n')
    with pytest.raises(InputError, match=r"run.jsonl, line 1: score 'high' is a string"):
        tiecore.read_run(path)
    path.write_text('{"qid": "1", "doc": "a", "score": 1}\n')
    with pytest.raises(InputError, match=r"run.jsonl: no column 'docno' \(its columns: qid, doc"):
        tiecore.read_run(path)
    path.write_bytes(b'{"qid": "1", "docno": "\xff", "score": 1}\n')
    with pytest.raises(InputError, match=r"run.jsonl, line 1: byte 0xff is not UTF-8"):
        tiecore.read_run(path)


def test_parquet_errors(tmp_path):
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, None]}), path)
    with pytest.raises(InputError, match=r"^\S*run.parquet: row 2: score is missing"):
        tiecore.read_run(path)
    pq.write_table(pa.table({"qid": ["1"], "docno": ["a"], "relevance": [1.5]}), path)
    with pytest.raises(InputError, match=r"run.parquet: row 1: level 1.5 is not an integer"):
        tiecore.read_qrels(path)
    path.write_bytes(b"qid docno score\n")
    with pytest.raises(InputError, match=r"run.parquet: cannot read Parquet"):
        tiecore.read_run(path)
    with pytest.raises(InputError, match=r"nothing.parquet: no such file"):
        tiecore.read_run(tmp_path / "nothing.parquet")


def test_record_errors():
    Qrel = ir_measures.Qrel
    with pytest.raises(InputError, match=r"^qrels records: row 1: level 2.5 is not an integer"):
        tiecore.read_qrels([Qrel("1", "a", 1, "0"), Qrel("1", "b", 2.5, "0")])
    with pytest.raises(InputError, match=r"^run records: no records"):
        tiecore.read_run(iter([]))
    with pytest.raises(InputError, match=r"^run records: row 1: \('1', 'b'\) is a tuple"):
        tiecore.read_run([{"qid": "1", "docno": "a", "score": 1}, ("1", "b")])
    with pytest.raises(InputError, match=r"query '1' maps to a float"):
        tiecore.read_run({"1": 2.0})


# --------------------------------------------------------------------------- CLI


def cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tiecore", *args], input=stdin, capture_output=True, check=False
    )


def test_cli_reads_stdin_and_other_formats(tmp_path):
    qrels, run = TREC_EVAL / "qrels.test", TREC_EVAL / "results.test"
    expected = cli("eval", str(qrels), str(run), "-m", "AP,P@10", "--format", "csv")
    assert expected.returncode == 0, expected.stderr
    jsonl = tmp_path / "STANDARD.jsonl"
    write_jsonl(jsonl, tiecore.read_run(run).assign(tag="STANDARD").to_dict("records"))
    for args, stdin in [
        ((str(qrels), "-"), run.read_bytes()),
        (("-", str(run)), qrels.read_bytes()),
        ((str(qrels), str(jsonl)), b""),
    ]:
        got = cli("eval", *args, "-m", "AP,P@10", "--format", "csv", stdin=stdin)
        assert got.returncode == 0, got.stderr
        assert got.stdout == expected.stdout
    parquet_run, parquet_qrels = tmp_path / "STANDARD.parquet", tmp_path / "qrels.parquet"
    tiecore.read_run(run).to_parquet(parquet_run, index=False)
    tiecore.read_qrels(qrels).to_parquet(parquet_qrels, index=False)
    got = cli("eval", str(parquet_qrels), str(parquet_run), "-m", "AP,P@10", "--format", "csv")
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout
    twice = cli("eval", "-", "-", "-m", "AP", stdin=b"")
    assert twice.returncode == 2
    assert b"stdin" in twice.stderr and b"at most one" in twice.stderr

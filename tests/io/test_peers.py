"""ranx and trectools runs and qrels, read by the real packages, give tiecore's numbers.

Each object is evaluated as tiecore evaluates the file it came from: the same values,
bit for bit, in every tie mode, through :func:`tiecore.evaluate`, :func:`tiecore.read_run`,
:func:`tiecore.read_qrels` and :func:`tiecore.read_runs`.
"""

from __future__ import annotations

import pandas as pd
import pytest
import ranx
from shared_data import ROBUST_QRELS, TREC_EVAL, robust_run
from trectools import TrecQrel, TrecRun

import tiecore
from tiecore.errors import InputError
from tiecore.io.peers import is_peer, peer_frame

MEASURES = ["P@10", "AP", "nDCG@10", "RR", "Bpref", "R@100"]
RUN = robust_run("input.rutcor03100.gz")  # tie-heavy


#: ranx compiles its numba functions on first use, 50-100 s in a new environment on two
#: cores: its tests are the slow tier's (tests/conftest.py); trectools' stay in the fast one.
ranx_compiles = pytest.mark.slow


def ranx_frame(frame: pd.DataFrame, value: str) -> pd.DataFrame:
    """ranx's column names and types (object ids, as its ``from_df`` requires)."""
    names = {"qid": "q_id", "docno": "doc_id", value: "score"}
    return frame[list(names)].rename(columns=names).astype({"q_id": object, "doc_id": object})


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns="run").reset_index(drop=True)


@pytest.fixture(scope="module")
def frames():
    """The first 25 queries of the tie-heavy run (ranx's conversions loop in Python)."""
    run = tiecore.read_run(RUN)
    return run[run["qid"].isin(run["qid"].unique()[:25])], tiecore.read_qrels(ROBUST_QRELS)


@ranx_compiles
@pytest.mark.parametrize("ties", ["aware", "oblivious"])
def test_ranx_objects_evaluate_as_frames(frames, ties):
    run, qrels = frames
    theirs = ranx.Run.from_df(ranx_frame(run, "score"), name="rutcor")
    their_qrels = ranx.Qrels.from_df(ranx_frame(qrels, "level"))
    options = {"ties": ties, "samples": 20, "per_query": True}
    expected = tiecore.evaluate({"rutcor": run}, qrels, MEASURES, **options)
    found = tiecore.evaluate(theirs, their_qrels, MEASURES, **options)
    assert set(found["run"]) == {"rutcor"}  # ranx's name
    pd.testing.assert_frame_equal(plain(found), plain(expected))
    # in a mapping, a list and (name, run) pairs, beside a plain frame
    # sampled draws follow the rows' order, which ranx keeps its own way: as its rows give
    sampled = tiecore.evaluate(theirs, their_qrels, MEASURES, ties="sampled", samples=20)
    converted = tiecore.read_run(theirs)
    assert converted.attrs["name"] == "rutcor"
    expected = tiecore.evaluate(converted, qrels, MEASURES, ties="sampled", samples=20)
    pd.testing.assert_frame_equal(sampled, expected)
    both = tiecore.evaluate({"a": theirs, "b": run}, their_qrels, MEASURES, ties=ties, samples=20)
    again = tiecore.evaluate([("a", theirs), ("b", run)], qrels, MEASURES, ties=ties, samples=20)
    pd.testing.assert_frame_equal(both, again)


def test_trectools_objects_read_from_files(tmp_path):
    """trectools reads the files itself; its objects give what tiecore's readers give."""
    for run_path, qrels_path in [
        (TREC_EVAL / "results.test", TREC_EVAL / "qrels.test"),
        (TREC_EVAL / "results.test", TREC_EVAL / "qrels.rel_level"),
        (RUN, ROBUST_QRELS),
    ]:
        run, qrels = TrecRun(str(run_path)), TrecQrel(str(qrels_path))
        assert is_peer(run) and is_peer(qrels)
        ours = tiecore.read_run(run_path), tiecore.read_qrels(qrels_path)
        converted = tiecore.read_run(run)
        assert converted.attrs["name"] == ours[0].attrs["name"]  # the run's tag
        for ties in ["aware", "oblivious"]:
            expected = tiecore.evaluate(ours[0], ours[1], MEASURES, ties=ties, per_query=True)
            found = tiecore.evaluate(run, qrels, MEASURES, ties=ties, per_query=True)
            pd.testing.assert_frame_equal(found, expected)
            found = tiecore.evaluate(converted, tiecore.read_qrels(qrels), MEASURES, ties=ties)
            pd.testing.assert_frame_equal(
                found, tiecore.evaluate(ours[0], ours[1], MEASURES, ties=ties)
            )
        assert list(tiecore.read_runs(run)) == [ours[0].attrs["name"]]


@ranx_compiles
def test_ranx_from_file_and_read_functions():
    run = ranx.Run.from_file(str(TREC_EVAL / "results.test"), kind="trec")
    qrels = ranx.Qrels.from_file(str(TREC_EVAL / "qrels.test"), kind="trec")
    frame = tiecore.read_run(run)
    expected = tiecore.read_run(TREC_EVAL / "results.test")
    merged = frame.merge(expected, on=["qid", "docno"], suffixes=("", "_file"))
    assert len(merged) == len(frame) == len(expected)
    assert (merged["score"] == merged["score_file"]).all()
    levels = tiecore.read_qrels(qrels)
    file_levels = tiecore.read_qrels(TREC_EVAL / "qrels.test")
    assert set(levels["qid"]) <= set(file_levels["qid"])
    # ranx keeps the relevant judgments: measures that need only those agree
    names = ["P@10", "AP", "nDCG@10", "RR"]
    for ties in ["aware", "oblivious"]:
        found = tiecore.evaluate(run, qrels, names, ties=ties, per_query=True)
        ours = tiecore.evaluate(expected, file_levels, names, ties=ties, per_query=True)
        ours = ours[ours["qid"].isin(set(levels["qid"])) | ours["qid"].isna()]
        rows = found[found["qid"].notna()].reset_index(drop=True)
        pd.testing.assert_frame_equal(
            rows.drop(columns="run"),
            ours[ours["qid"].notna()].reset_index(drop=True).drop(columns="run"),
        )


@ranx_compiles
def test_wrong_kind_and_other_objects():
    run = ranx.Run({"1": {"a": 1.0}}, name="x")
    qrels = ranx.Qrels({"1": {"a": 1}})
    with pytest.raises(InputError, match="a ranx Run was given where qrels are expected"):
        tiecore.evaluate(run, run, "P@1")
    with pytest.raises(InputError, match="a ranx Qrels was given where run are expected"):
        tiecore.evaluate(qrels, qrels, "P@1")
    with pytest.raises(InputError, match="trectools TrecRun holds no data"):
        tiecore.read_run(TrecRun())
    frame = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]})
    assert peer_frame(frame, "run") is frame and not is_peer(frame)

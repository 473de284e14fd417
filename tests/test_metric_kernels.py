"""tiecore.metrics on the engine's kernels directly (no DataFrame round trip).

The array API builds the engine's :class:`~tiecore.engine.judgments.Judgments` and
:class:`~tiecore.engine.ranking.Ranking` from the score matrix itself (one sort; with a
cutoff ``k``, a partition of each row and a sort of the tie groups that start within the
first ``k`` ranks) and runs the core's profiles and kernels on them.  Checked here on
inputs larger than tests/test_metrics.py draws (more than ten rows, so the judgments'
order of the row numbers as text differs from their numeric order, and cuts inside the
rows):

* every function equals :func:`tiecore.evaluate` on the same data as frames, bit for
  bit, per query and the mean, in every mode and tie-break (trec_eval's float32 ties
  included), on matrices with left-out (NaN) cells and on ragged input;
* nDCG@k equals ``sklearn.metrics.ndcg_score`` (tie-averaged) to 1e-12 on bfloat16
  scores, whose rounding makes many ties;
* the frames path is not taken.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score
from test_metrics import FUNCTIONS, frames, name

import tiecore
from tiecore import metrics
from tiecore.engine.ranking import Ranking

TIEBREAKS = ["file_order", "optimistic", "pessimistic", "trec_eval", "trec_eval_double",
             "docno_asc"]  # fmt: skip


@st.composite
def big_matrices(draw):
    """(y_true, y_score): 11 to 24 rows, up to 40 columns, few distinct scores (float32
    neighbours too, which only trec_eval's float32 comparison ties), some NaN cells."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    queries, candidates = draw(st.integers(11, 24)), draw(st.integers(1, 40))
    y_true = rng.integers(0, 4, (queries, candidates)) * (rng.random((queries, candidates)) < 0.4)
    choices = np.array([0.0, 0.5, 1.0, 1.0 + 1e-12, 2.0, -0.0, math.nan])
    y_score = rng.choice(choices, (queries, candidates), p=[0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1])
    empty = np.isnan(y_score).all(axis=1)
    y_score[empty, 0] = 1.0
    return y_true, y_score


@settings(max_examples=40, deadline=None)
@given(
    data=big_matrices(),
    k=st.integers(1, 45),
    function=st.sampled_from(list(FUNCTIONS)),
    ties=st.sampled_from(["aware", *TIEBREAKS]),
)
def test_equals_evaluate_on_larger_matrices(data, k, function, ties):
    y_true, y_score = data
    family = FUNCTIONS[function][0]
    options = {"ties": "aware"} if ties == "aware" else {"ties": "oblivious", "tiebreak": ties}
    run, qrels = frames(y_true, y_score)
    # a candidate's docno is its flat index as text (what the docno tie-breaks compare)
    flat = np.flatnonzero(~np.isnan(y_score)).astype(str)
    run["docno"], qrels["docno"] = flat, flat
    run["qid"] = qrels["qid"] = qrels["qid"].str[1:]  # the row numbers, ordered as text
    expected = tiecore.evaluate(run, qrels, name(family, k), per_query=True, **options)
    per_query = expected[expected["qid"].notna()].set_index("qid")["value"]
    got = function(y_true, y_score, k=k, average=False, **options)
    assert got.tolist() == [per_query[str(i)] for i in range(len(y_true))]
    assert function(y_true, y_score, k=k, **options) == expected["value"].iloc[-1]


@settings(max_examples=25, deadline=None)
@given(
    data=big_matrices(),
    k=st.integers(1, 45),
    function=st.sampled_from(list(FUNCTIONS)),
    tiebreak=st.sampled_from(TIEBREAKS),
)
def test_spread_equals_evaluate_spread(data, k, function, tiebreak):
    """spread=True: evaluate_spread's value, var, min and max per query (widened to hold
    the oblivious value), and the oblivious evaluation of ``tiebreak`` (trec_eval's cut
    keeps its float32 tie groups whole)."""
    y_true, y_score = data
    run, qrels = frames(y_true, y_score)
    flat = np.flatnonzero(~np.isnan(y_score)).astype(str)
    run["docno"], qrels["docno"] = flat, flat
    run["qid"] = qrels["qid"] = qrels["qid"].str[1:]
    measure = name(FUNCTIONS[function][0], k)
    found = tiecore.evaluate_spread(run, qrels, measure, per_query=True)
    found = found[found["qid"].notna()].set_index("qid")
    one = tiecore.evaluate(run, qrels, measure, ties="oblivious", tiebreak=tiebreak, per_query=True)
    one = one[one["qid"].notna()].set_index("qid")["value"]
    rows = [str(i) for i in range(len(y_true))]
    got = function(y_true, y_score, k=k, average=False, spread=True, tiebreak=tiebreak)
    assert got.oblivious.tolist() == one[rows].tolist()
    assert got.value.tolist() == found.loc[rows, "value"].tolist()
    assert got.var.tolist() == found.loc[rows, "var"].tolist()
    assert got.min.tolist() == np.minimum(found.loc[rows, "min"], one[rows]).tolist()
    assert got.max.tolist() == np.maximum(found.loc[rows, "max"], one[rows]).tolist()


@settings(max_examples=25, deadline=None)
@given(data=big_matrices(), k=st.integers(1, 45), seed=st.integers(0, 2**32 - 1))
def test_ragged_input_equals_the_matrix(data, k, seed):
    """The cells of a matrix in any order, with qid=: the matrix's values (the queries in
    order of first appearance), through the same kernels."""
    y_true, y_score = data
    keep = ~np.isnan(y_score)
    labels = np.repeat(np.arange(len(y_true)), y_true.shape[1]).reshape(y_true.shape)[keep]
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(keep.sum())  # cells in any order: one lexsort
    # each query's cells one after another, queries in any order: laid out in rows
    grouped = np.argsort(rng.permutation(len(y_true))[labels], kind="stable")
    for order in (shuffled, grouped):
        qid = labels[order]
        for function in FUNCTIONS:
            whole = function(y_true, y_score, k=k, average=False)
            ragged = function(
                y_true[keep][order], y_score[keep][order], k=k, qid=qid, average=False
            )
            assert ragged.tolist() == whole[list(dict.fromkeys(qid.tolist()))].tolist()


@pytest.mark.parametrize("k", [1, 5, 10, None])
def test_ndcg_equals_sklearn_on_bfloat16_scores(k):
    rng = np.random.default_rng(7)
    y_true = rng.integers(0, 4, (60, 200)) * (rng.random((60, 200)) < 0.1)
    y_score = rng.random((60, 200)).astype(ml_dtypes.bfloat16)  # 128 values in [0.5, 1)
    scores = y_score.astype(np.float32)
    assert len(np.unique(scores[0])) < 180  # ties (among the top scores most)
    ours = metrics.ndcg(y_true, y_score, k=k, average=False)
    theirs = [ndcg_score([t], [s], k=k) for t, s in zip(y_true, scores, strict=True)]
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    assert metrics.ndcg(y_true, y_score, k=k) == pytest.approx(
        ndcg_score(y_true, scores, k=k), rel=1e-12
    )


def test_no_frames_round_trip(monkeypatch):
    """Neither evaluate nor the frames' ranking is called: the matrix goes to the engine."""

    def refuse(*args, **kwargs):
        raise AssertionError("the DataFrame path was taken")

    monkeypatch.setattr(tiecore.evaluation.core, "evaluate", refuse)
    monkeypatch.setattr(tiecore.spread, "evaluate_spread", refuse)
    monkeypatch.setattr(Ranking, "build", refuse)
    y_true, y_score = [[1, 0, 1], [0, 1, 0]], [[3, 2, 2], [1, 1, 1]]
    # row 0: (1 + 1/2 * 2/2) / 2; row 1: its relevant one at rank 1, 2 or 3: (1 + 1/2) / 3
    assert metrics.average_precision(y_true, y_score, k=2) == pytest.approx((0.75 + 0.5) / 2)
    assert metrics.ndcg(y_true, y_score, spread=True, tiebreak="optimistic").max > 0

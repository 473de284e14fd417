"""tiecore.metrics (the array API) against the DataFrame path, brute force and sklearn.

* every function equals :func:`tiecore.evaluate` on the same data written as run and
  qrels DataFrames, bit for bit (hypothesis);
* tie-aware values equal the brute-force mean over all orderings (tests/reference.py);
* nDCG equals ``sklearn.metrics.ndcg_score`` (which averages the gains of tied
  candidates, i.e. tie-aware with a linear gain and the row's own ideal);
* AP equals ``sklearn.metrics.average_precision_score`` on rows without ties (with ties
  sklearn puts a whole tie group at one threshold, which is neither convention);
* link prediction: tie-aware MRR and Hits@k equal their closed forms from the count of
  candidates scored above and level with the true one.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference import Spec, reference_aware
from sklearn.metrics import average_precision_score, ndcg_score

import tiecore
from tiecore import metrics
from tiecore.errors import InputError

FUNCTIONS = {  # function -> (tiecore family, takes a cutoff, needs one)
    metrics.average_precision: ("AP", True, False),
    metrics.reciprocal_rank: ("RR", True, False),
    metrics.ndcg: ("nDCG", True, False),
    metrics.hits_at_k: ("Success", True, True),
    metrics.precision_at_k: ("P", True, True),
    metrics.recall_at_k: ("R", True, True),
}


@st.composite
def matrices(draw, *, nan: bool = True, negative: bool = True):
    """(y_true, y_score): few distinct scores (many ties), some NaN cells (left out)."""
    queries = draw(st.integers(1, 4))
    candidates = draw(st.integers(1, 7))
    levels = st.integers(-1 if negative else 0, 3)
    y_true = draw(hnp.arrays(np.int64, (queries, candidates), elements=levels))
    choices = [0.0, 0.5, 1.0, 2.0] + ([math.nan] if nan else [])
    y_score = draw(hnp.arrays(np.float64, (queries, candidates), elements=st.sampled_from(choices)))
    for row in range(queries):  # every row keeps a candidate
        if np.isnan(y_score[row]).all():
            y_score[row, draw(st.integers(0, candidates - 1))] = 1.0
    return y_true, y_score


def frames(y_true: np.ndarray, y_score: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same data as DataFrames, written out cell by cell; every cell is judged."""
    run, qrels = [], []
    for i, (levels, scores) in enumerate(zip(y_true, y_score, strict=True)):
        for j, (level, score) in enumerate(zip(levels, scores, strict=True)):
            if not math.isnan(score):
                run.append((f"q{i}", f"doc{j}", float(score)))
                qrels.append((f"q{i}", f"doc{j}", int(level)))
    return (
        pd.DataFrame(run, columns=["qid", "docno", "score"]),
        pd.DataFrame(qrels, columns=["qid", "docno", "level"]),
    )


def name(family: str, k: int | None, gain: str = "linear") -> str:
    return Spec(family, k, gain).name


@settings(max_examples=60, deadline=None)
@given(
    data=matrices(),
    k=st.integers(1, 8),
    function=st.sampled_from(list(FUNCTIONS)),
    ties=st.sampled_from(["aware", "file_order", "optimistic", "pessimistic"]),
    rel_level=st.integers(1, 2),
    gain=st.sampled_from(["linear", "exp"]),
)
def test_equals_the_dataframe_path(data, k, function, ties, rel_level, gain):
    y_true, y_score = data
    family, _, needs = FUNCTIONS[function]
    options = {"ties": "aware"} if ties == "aware" else {"ties": "oblivious", "tiebreak": ties}
    if function is metrics.ndcg:  # nDCG takes a gain, and no relevance level
        ours, rel_level = {**options, "gain": gain}, 1
    else:
        ours, gain = {**options, "rel_level": rel_level}, "linear"
    theirs = {**options, "rel_level": rel_level, "per_query": True}
    run, qrels = frames(y_true, y_score)
    got = function(y_true, y_score, k=k, average=False, **ours)
    expected = tiecore.evaluate(run, qrels, name(family, k, gain), **theirs)
    per_query = expected[expected["qid"].notna()].set_index("qid")["value"]
    assert got.tolist() == [per_query[f"q{i}"] for i in range(len(y_true))]
    mean = function(y_true, y_score, k=k, **ours)
    assert mean == expected.loc[expected["qid"].isna(), "value"].item()
    if not needs:  # the whole ranking
        whole = function(y_true, y_score, average=False, **ours)
        full = tiecore.evaluate(run, qrels, name(family, None, gain), **theirs)
        assert whole.tolist() == full.loc[full["qid"].notna(), "value"].tolist()


@settings(max_examples=60, deadline=None)
@given(data=matrices(), k=st.integers(1, 8), function=st.sampled_from(list(FUNCTIONS)))
def test_aware_equals_brute_force(data, k, function):
    y_true, y_score = data
    family = FUNCTIONS[function][0]
    got = function(y_true, y_score, k=k, average=False)
    for row, value in enumerate(got):
        keep = ~np.isnan(y_score[row])
        scores, labels = y_score[row][keep].tolist(), y_true[row][keep].tolist()
        spec = Spec(family, k)
        expected = reference_aware([spec], scores, labels, labels)[spec]
        assert value == pytest.approx(expected, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(data=matrices(nan=False, negative=False), k=st.one_of(st.none(), st.integers(1, 8)))
def test_ndcg_equals_sklearn(data, k):
    y_true, y_score = data
    if y_true.shape[1] < 2:  # sklearn needs two candidates
        y_true, y_score = np.hstack([y_true, y_true * 0]), np.hstack([y_score, y_score - 1])
    ours = metrics.ndcg(y_true, y_score, k=k, average=False)
    theirs = [ndcg_score([t], [s], k=k) for t, s in zip(y_true, y_score, strict=True)]
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    assert metrics.ndcg(y_true, y_score, k=k) == pytest.approx(
        ndcg_score(y_true, y_score, k=k), rel=1e-12
    )


@settings(max_examples=80, deadline=None)
@given(
    y_true=hnp.arrays(np.int64, st.integers(2, 12), elements=st.integers(0, 1)),
    seed=st.integers(0, 2**32 - 1),
    ties=st.sampled_from(["aware", "oblivious"]),
)
def test_average_precision_equals_sklearn_without_ties(y_true, seed, ties):
    if not y_true.any():
        y_true[0] = 1  # sklearn's AP needs a positive
    y_score = np.random.default_rng(seed).permutation(len(y_true)).astype(float)  # distinct
    ours = metrics.average_precision([y_true], [y_score], ties=ties)
    assert ours == pytest.approx(average_precision_score(y_true, y_score), rel=1e-12)


def test_sklearn_average_precision_is_another_convention_under_ties():
    """sklearn counts a whole tie group at one threshold: 1 relevant of 2 tied -> 0.5;
    the exact mean over the two orders is (1 + 1/2) / 2 = 0.75."""
    assert average_precision_score([1, 0], [1.0, 1.0]) == 0.5
    assert metrics.average_precision([[1, 0]], [[1.0, 1.0]]) == 0.75


# ------------------------------------------------------------------ link prediction


@settings(max_examples=80, deadline=None)
@given(
    scores=hnp.arrays(np.float64, st.integers(2, 30), elements=st.sampled_from([0.0, 1.0, 2.0])),
    true=st.integers(0, 29),
    k=st.integers(1, 10),
)
def test_link_prediction_closed_forms(scores, true, k):
    """One true entity per row: above it ``g`` candidates, ``n`` tied with it (itself
    included); its rank is uniform on ``g+1 .. g+n``."""
    true %= len(scores)
    y_true = np.zeros(len(scores), int)
    y_true[true] = 1
    g = int((scores > scores[true]).sum())
    n = int((scores == scores[true]).sum())
    mrr = metrics.reciprocal_rank([y_true], [scores])
    hits = metrics.hits_at_k([y_true], [scores], k=k)
    assert mrr == pytest.approx(sum(1 / (g + p) for p in range(1, n + 1)) / n, rel=1e-12)
    assert hits == pytest.approx(min(max(k - g, 0), n) / n, rel=1e-12)
    best = metrics.reciprocal_rank([y_true], [scores], ties="oblivious", tiebreak="optimistic")
    worst = metrics.reciprocal_rank([y_true], [scores], ties="oblivious", tiebreak="pessimistic")
    assert (best, worst) == (1 / (g + 1), 1 / (g + n))


def test_filtered_setting_and_ragged_input():
    """NaN leaves a cell out (the filtered setting); ragged input gives the same values."""
    y_true = np.array([[0, 1, 1, 0], [1, 0, 0, 0]])
    y_score = np.array([[3.0, 2.0, 5.0, 2.0], [1.0, 1.0, 1.0, math.nan]])
    filtered = np.where([[False, False, True, False], [False] * 4], math.nan, y_score)
    rr = metrics.reciprocal_rank(y_true, filtered, average=False)
    assert rr.tolist() == pytest.approx([(1 / 2 + 1 / 3) / 2, (1 + 1 / 2 + 1 / 3) / 3])
    keep = ~np.isnan(filtered)
    qid = np.array([["b", "b", "b", "b"], ["a", "a", "a", "a"]])[keep]
    ragged = metrics.reciprocal_rank(y_true[keep], filtered[keep], qid=qid, average=False)
    assert ragged.tolist() == rr.tolist()  # queries in order of first appearance
    order = np.random.default_rng(1).permutation(keep.sum())  # rows in any order
    shuffled = metrics.reciprocal_rank(
        y_true[keep][order], filtered[keep][order], qid=qid[order], average=False
    )
    first = list(dict.fromkeys(qid[order]))
    assert shuffled.tolist() == [rr[["b", "a"].index(q)] for q in first]


# ---------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: metrics.ndcg([[1, 0]], [[1, 2]], k=0),
            r"^k: 0 is out of range \(expected a positive integer or None\)$",
        ),
        (
            lambda: metrics.hits_at_k([[1, 0]], [[1, 2]], k=None),
            r"^k: None is not allowed \(expected a positive integer\)",
        ),
        (lambda: metrics.average_precision([[1]], [[1]], ties="x"), r"^ties: unknown ties 'x'"),
        (
            lambda: metrics.average_precision([[1]], [[1]], tiebreak="random"),
            r"^tiebreak: unknown tiebreak 'random' \(expected one of trec_eval,",
        ),
        (
            lambda: metrics.average_precision([[1]], [[1]], average=1),
            r"^average: 1 is an int \(expected True or False\)",
        ),
        (
            lambda: metrics.ndcg([[1]], [[1]], gain="log"),
            r"^gain: unknown gain 'log' \(expected one of linear, exp\)",
        ),
        (lambda: metrics.ndcg([[1, 0]], [[1, 2, 3]]), r"y_score: shape \(1, 3\) differs"),
        (lambda: metrics.ndcg([[1, 0.5]], [[1, 2]]), r"y_true\[0, 1\] = 0.5 is not an integer"),
        (lambda: metrics.ndcg([[1, 0]], [[1, np.inf]]), r"y_score\[0, 1\] = inf is not finite"),
        (lambda: metrics.ndcg([[1, 0]], [[np.nan] * 2]), r"row 0 has no candidates"),
        (lambda: metrics.ndcg([1, 0], [1, 2]), r"a 1-D array without qid="),
        (lambda: metrics.ndcg([[1], [0, 1]], [[1], [1, 2]]), r"rows of different lengths"),
        (lambda: metrics.ndcg([["a"]], [[1]]), r"y_true: a <U1 array"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises((ValueError, InputError), match=message):
        call()


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        metrics.precision_at_k([[1]], [[1]], 1)

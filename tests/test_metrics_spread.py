"""tiecore.metrics with ``spread=True``: mean, variance, min, max, oblivious value and bias.

* per query, every field equals the enumeration of every ordering of the tied scores
  (tests/reference.py), and the oblivious value the brute force of the columns' order;
* for the mean: the queries' means, the variances summed over ``Q**2``;
* ``min <= value <= max`` and ``min <= oblivious <= max`` exactly, ``bias = oblivious - value``;
* nDCG's value equals ``sklearn.metrics.ndcg_score`` (ties averaged), and without ties its
  oblivious value equals ``ndcg_score(ignore_ties=True)``;
* every field equals trm's (tie-aware-retrieval-metrics, Yang et al., ACL 2026) where the
  two overlap: binary levels, at least ``k`` candidates (trm divides P@k by the
  candidates shown), and Hits@k only with at most one relevant candidate (trm counts them);
* array-likes: lists, objects with ``__array__``, tensors numpy cannot take as they are
  (torch's bfloat16: ``__array__`` fails, ``detach``/``cpu``/``float`` give float32), and
  ml_dtypes' (JAX's) bfloat16 arrays.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import trm
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import Spec, label_sequences, measure, reference_oblivious
from sklearn.metrics import ndcg_score
from test_metrics import FUNCTIONS, matrices

from tiecore import metrics
from tiecore.errors import InputError

FIELDS = ("value", "var", "min", "max", "oblivious", "bias")


def enumerated(spec: Spec, scores: list[float], labels: list[int]) -> dict[str, float]:
    """Mean, variance, min and max of ``spec`` over every ordering, and the file order's."""
    sequences = label_sequences(scores, labels)
    total = sum(sequences.values())
    pairs = [(measure(spec, s, labels), c) for s, c in sequences.items()]
    mean = math.fsum(v * c for v, c in pairs) / total
    var = math.fsum((v - mean) ** 2 * c for v, c in pairs) / total
    docnos = [f"{j:04d}" for j in range(len(scores))]
    one = reference_oblivious([spec], scores, docnos, labels, labels, "file_order")[spec]
    values = [v for v, _ in pairs]
    return {"value": mean, "var": var, "min": min(values), "max": max(values), "oblivious": one}


@settings(max_examples=80, deadline=None)
@given(
    data=matrices(),
    k=st.one_of(st.none(), st.integers(1, 8)),
    function=st.sampled_from(list(FUNCTIONS)),
    gain=st.sampled_from(["linear", "exp"]),
)
def test_spread_equals_the_enumeration(data, k, function, gain):
    y_true, y_score = data
    family, _, needs = FUNCTIONS[function]
    k = k or (3 if needs else None)
    options = {"gain": gain} if function is metrics.ndcg else {}
    gain = gain if function is metrics.ndcg else "linear"
    got = function(y_true, y_score, k=k, average=False, spread=True, **options)
    assert isinstance(got, metrics.Spread)
    spec = Spec(family, k, gain)
    for row in range(len(y_true)):
        keep = ~np.isnan(y_score[row])
        scores, labels = y_score[row][keep].tolist(), y_true[row][keep].tolist()
        expected = enumerated(spec, scores, labels)
        for field, value in expected.items():
            assert getattr(got, field)[row] == pytest.approx(value, abs=1e-12), (row, field)
    assert np.all(got.min <= got.value) and np.all(got.value <= got.max)
    assert np.all(got.min <= got.oblivious) and np.all(got.oblivious <= got.max)
    assert np.array_equal(got.bias, got.oblivious - got.value)
    # the arrays are the plain calls' values, bit for bit
    assert np.array_equal(got.value, function(y_true, y_score, k=k, average=False, **options))
    plain = function(y_true, y_score, k=k, average=False, ties="oblivious", **options)
    assert np.array_equal(got.oblivious, plain)
    # the mean: means of the fields, the variance of a mean of independent queries
    mean = function(y_true, y_score, k=k, spread=True, **options)
    q = len(y_true)
    assert mean.value == function(y_true, y_score, k=k, **options)
    assert mean.var == pytest.approx(got.var.sum() / q**2, abs=1e-15)
    for field in ("min", "max", "oblivious"):
        assert getattr(mean, field) == pytest.approx(getattr(got, field).mean(), abs=1e-15)
    assert mean.bias == mean.oblivious - mean.value
    assert mean.min <= mean.value <= mean.max
    frame = got.to_frame()
    assert list(frame.columns) == list(FIELDS) and len(frame) == q
    assert np.array_equal(frame["var"].to_numpy(), got.var)
    np.testing.assert_array_equal(got.std, np.sqrt(got.var))


@settings(max_examples=60, deadline=None)
@given(data=matrices(nan=False, negative=False), k=st.one_of(st.none(), st.integers(1, 8)))
def test_ndcg_spread_equals_sklearn(data, k):
    y_true, y_score = data
    if y_true.shape[1] < 2:  # sklearn needs two candidates
        y_true, y_score = np.hstack([y_true, y_true * 0]), np.hstack([y_score, y_score - 1])
    got = metrics.ndcg(y_true, y_score, k=k, average=False, spread=True)
    theirs = [ndcg_score([t], [s], k=k) for t, s in zip(y_true, y_score, strict=True)]
    np.testing.assert_allclose(got.value, theirs, rtol=1e-12, atol=1e-15)
    distinct = y_score + np.arange(y_score.shape[1])[::-1] * 1e-3  # no ties, same order
    untied = metrics.ndcg(y_true, distinct, k=k, average=False, spread=True)
    pairs = zip(y_true, distinct, strict=True)
    their_one = [ndcg_score([t], [s], k=k, ignore_ties=True) for t, s in pairs]
    np.testing.assert_allclose(untied.oblivious, their_one, rtol=1e-12, atol=1e-15)
    assert np.all(untied.var == 0) and np.all(untied.bias == 0)
    assert np.array_equal(untied.min, untied.max)


class ArrayLike:
    """Anything with ``__array__`` (as JAX, CuPy and torch tensors have)."""

    def __init__(self, values) -> None:
        self.values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


class BFloat16Like:
    """A tensor numpy cannot take as it is (torch's bfloat16, or a GPU tensor): its
    ``__array__`` fails, ``detach().cpu().float()`` gives float32 numbers."""

    def __init__(self, values, *, converted: bool = False) -> None:
        self.values, self.converted = np.asarray(values, np.float32), converted

    def __array__(self, dtype=None, copy=None):
        if not self.converted:
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self.values

    def detach(self):
        return self

    def cpu(self):
        return self

    def float(self):
        return BFloat16Like(self.values, converted=True)


def tensors(y_true: np.ndarray, y_score: np.ndarray) -> list[tuple]:
    """The same data as several array-likes: lists, ``__array__``, a tensor as torch's
    bfloat16 behaves, and ml_dtypes' bfloat16 arrays (JAX's)."""
    return [
        (y_true.tolist(), y_score.tolist()),
        (ArrayLike(y_true), ArrayLike(y_score)),
        (y_true, BFloat16Like(y_score)),
        (y_true, y_score.astype(ml_dtypes.bfloat16)),
    ]


def test_array_likes_and_tensors_give_the_numpy_values():
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 3, size=(5, 40))
    y_score = np.round(rng.normal(size=(5, 40)), 1).astype(np.float32)  # ties
    bf16 = (y_score.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)  # exact in bf16
    expected = metrics.ndcg(y_true, bf16, k=10, average=False, spread=True)
    for true, score in tensors(y_true, bf16):
        got = metrics.ndcg(true, score, k=10, average=False, spread=True)
        for field in FIELDS:
            assert np.array_equal(getattr(got, field), getattr(expected, field)), type(score)
        assert metrics.average_precision(true, score) == metrics.average_precision(y_true, bf16)


TRM = {  # tiecore.metrics function -> trm's name of the same metric
    metrics.ndcg: "ndcg",
    metrics.reciprocal_rank: "mrr",
    metrics.average_precision: "map",
    metrics.recall_at_k: "recall",
    metrics.precision_at_k: "precision",
    metrics.hits_at_k: "hits",
}


@settings(max_examples=80, deadline=None)
@given(
    data=matrices(nan=False, negative=False),
    k=st.integers(1, 8),
    function=st.sampled_from(list(TRM)),
)
def test_spread_equals_trm(data, k, function):
    y_true, y_score = data
    y_true = (y_true > 0).astype(np.int64)  # trm's relevance is binary
    k = min(k, y_true.shape[1])  # trm's P@k divides by the candidates shown
    if function is metrics.hits_at_k:  # trm's hits counts the relevant candidates
        y_true[np.cumsum(y_true, axis=1) > 1] = 0
    got = function(y_true, y_score, k=k, average=False, spread=True)
    theirs = trm.evaluate(y_score.tolist(), (y_true > 0).tolist(), [TRM[function]], [k])
    rows = theirs.per_query[TRM[function]][k]
    for field, their in (
        ("value", "expected"), ("min", "minimum"), ("max", "maximum"),
        ("oblivious", "oblivious"), ("bias", "bias"),
    ):  # fmt: skip
        expected = [getattr(row, their) for row in rows]
        np.testing.assert_allclose(getattr(got, field), expected, rtol=1e-12, atol=1e-12)


def test_the_hand_example():
    """Two of three tied candidates relevant; P@1 is 2/3 on average, 0 or 1."""
    got = metrics.precision_at_k([[1, 1, 0]], [[0.5, 0.5, 0.5]], k=1, spread=True)
    assert got.value == pytest.approx(2 / 3) and got.var == pytest.approx(2 / 9)
    assert (got.min, got.max, got.oblivious) == (0.0, 1.0, 1.0)
    assert got.bias == pytest.approx(1 / 3)


def test_spread_goes_with_the_aware_mode():
    with pytest.raises(InputError, match=r"^ties: ties='oblivious' with spread=True"):
        metrics.ndcg([[1, 0]], [[1, 1]], ties="oblivious", spread=True)
    with pytest.raises(InputError, match=r"^spread: 1 is an int"):
        metrics.ndcg([[1, 0]], [[1, 1]], spread=1)

"""tiecore.engine.assignment against every ordering of small tie groups."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiecore.engine.assignment import linear_spread, pairwise_spread, type_bounds


def _types(rows: np.ndarray):
    _, first, inverse, counts = np.unique(
        rows, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    return first, inverse.reshape(-1), counts


@st.composite
def inputs(draw: st.DrawFn):
    n = draw(st.integers(1, 6))
    columns = draw(st.integers(1, 3))
    rel = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from((0.0, 1.0)), min_size=columns, max_size=columns),
                min_size=n,
                max_size=n,
            )
        )
    )
    d = np.array(
        draw(st.lists(st.sampled_from((0.25, 0.5, 1.0)), min_size=columns, max_size=columns))
    )
    cut = draw(st.integers(0, n))
    w = np.where(np.arange(n) < cut, 1.0 / (np.arange(n) + 3), 0.0)
    above = np.array(draw(st.lists(st.integers(0, 3), min_size=columns, max_size=columns)), float)
    return rel, d, w, above


@settings(max_examples=150, deadline=None)
@given(inputs())
def test_pairwise_statistic_over_every_order(case):
    rel, d, w, above = case
    n = len(rel)
    a = rel @ (d * (above + 1))
    b = (rel * d) @ rel.T
    values = []
    for p in itertools.permutations(range(n)):
        values.append(
            sum(w[i] * (a[p[i]] + sum(b[p[i], p[j]] for j in range(i))) for i in range(n))
        )
    values = np.array(values)
    mean, var = pairwise_spread(w, a, b)
    assert mean == pytest.approx(values.mean(), abs=1e-12)
    assert var == pytest.approx(values.var(), abs=1e-12)
    first, _, counts = _types(rel)
    low, high = type_bounds(
        counts, np.zeros((len(counts), n)), w, a[first], b[np.ix_(first, first)]
    )
    assert low == pytest.approx(values.min(), abs=1e-12)
    assert high == pytest.approx(values.max(), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(inputs(), st.data())
def test_linear_statistic_over_every_order(case, data):
    rel, d, _, _ = case
    n, columns = rel.shape
    u = rel * d
    cuts = data.draw(st.lists(st.integers(0, n), min_size=columns, max_size=columns))
    v = (np.arange(n)[:, None] < np.array(cuts)[None, :]).astype(float)
    values = np.array(
        [sum(u[p[i]] @ v[i] for i in range(n)) for p in itertools.permutations(range(n))]
    )
    mean, var = linear_spread(u, v)
    assert mean == pytest.approx(values.mean(), abs=1e-12)
    assert var == pytest.approx(values.var(), abs=1e-12)
    first, _, counts = _types(u)
    low, high = type_bounds(counts, u[first] @ v.T)
    assert low == pytest.approx(values.min(), abs=1e-12)
    assert high == pytest.approx(values.max(), abs=1e-12)


def test_pairwise_bounds_refuse_too_many_count_vectors():
    """The pairwise statistic's range has no transportation problem: past
    MAX_STATES count vectors it is a ValueError (eval: one refusal line)."""
    w, a, b = np.ones(20), np.zeros(20), np.zeros((20, 20))
    with pytest.raises(ValueError, match="count vectors"):
        type_bounds(np.full(20, 1), np.zeros((20, 20)), w, a, b)


@settings(max_examples=60, deadline=None)
@given(inputs(), st.data())
def test_linear_bounds_by_transport_equal_the_dynamic_programme(case, data):
    """The transportation problem (many count vectors) gives the programme's range."""
    from tiecore.engine.assignment import _transport_bounds

    rel, d, _, _ = case
    n, columns = rel.shape
    u = rel * d
    cuts = data.draw(st.lists(st.integers(0, n), min_size=columns, max_size=columns))
    v = (np.arange(n)[:, None] < np.array(cuts)[None, :]).astype(float)
    first, _, counts = _types(u)
    low, high = _transport_bounds(counts, u[first] @ v.T)
    assert (low, high) == pytest.approx(type_bounds(counts, u[first] @ v.T), abs=1e-12)

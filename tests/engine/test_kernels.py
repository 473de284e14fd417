"""``tiecore.engine.kernels.ordered_sums``: a query's terms added rank by rank, as a C loop."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tiecore.engine.kernels import head_sums, ordered_sums

TERMS = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)


def loop_sum(terms) -> float:
    """The obvious reference: ``total += term`` from the first to the last."""
    total = 0.0
    for term in terms:
        total += float(term)
    return total


@st.composite
def segments(draw):
    """Terms (with the trailing 0 the kernels keep) and segments of any length, some
    empty, some overlapping, some long enough for several padding widths."""
    terms = draw(st.lists(TERMS, min_size=1, max_size=600))
    values = np.append(np.asarray(terms, dtype=np.float64), 0.0)
    n = len(terms)
    count = draw(st.integers(0, 80))  # 32 or more of one width: added rank by rank
    starts = np.asarray(draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count)))
    lengths = np.asarray([draw(st.integers(0, n - s)) for s in starts], dtype=np.int64)
    return values, starts.astype(np.int64), lengths


@given(segments())
def test_each_segment_is_the_loop_s_double(case):
    values, starts, lengths = case
    found = ordered_sums(values, starts, lengths)
    expected = [loop_sum(values[s : s + n]) for s, n in zip(starts, lengths, strict=True)]
    assert found.tolist() == expected  # ==, not close: the same double


@given(segments())
def test_rows_of_a_2d_array_are_summed_each(case):
    values, starts, lengths = case
    both = np.stack([values, -2.0 * values])
    found = ordered_sums(both, starts, lengths)
    assert found.shape == (2, len(starts))
    assert found[0].tolist() == ordered_sums(values, starts, lengths).tolist()
    assert found[1].tolist() == ordered_sums(both[1], starts, lengths).tolist()


def test_numpy_s_pairwise_sum_would_differ():
    """Where numpy's ``add.reduceat`` (pairwise, in blocks) is not the loop's double,
    ``ordered_sums`` is: the property above can tell the two apart."""
    values = np.append(np.random.default_rng(7).random(1000) / 3.0, 0.0)
    starts, lengths = np.arange(0, 1000, 100), np.full(10, 100)
    loops = [loop_sum(values[s : s + 100]) for s in starts]
    assert np.add.reduceat(values[:-1], starts).tolist() != loops
    assert ordered_sums(values, starts, lengths).tolist() == loops


def test_head_sums_cut_each_query():
    values = np.append(np.arange(1.0, 11.0), 0.0)
    starts, counts = np.array([0, 4, 9]), np.array([4, 5, 1])
    found = head_sums(values, starts, counts, np.array([2, 10, 0]))
    assert found.tolist() == [1.0 + 2.0, 5.0 + 6 + 7 + 8 + 9, 0.0]

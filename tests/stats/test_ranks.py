"""Integer ranks with ties (``tiecore.stats.ranks``) against scipy and obvious definitions.

- without near-ties, :func:`tie_ranks` equals
  ``scipy.stats.rankdata(-values, method="min")``; with them, it equals that
  ranking of :func:`tie_levels` (the ties :mod:`tiecore.compare` uses), and
  crafted near-equal values (rounding noise, chains) tie as documented;
- every row of a 2-D or 3-D input is ranked on its own;
- NaN ranks after every number; infinities tie with each other;
- :func:`rank_labels` equals a plain loop over a counter; :func:`rank_change`
  has the documented sign;
- ``tiecore.compare`` ranks with these functions, and importing
  ``tiecore.stats.ranks`` does not import it.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from tiecore import compare
from tiecore.errors import InputError
from tiecore.stats.ranks import (
    RTOL,
    mean_ranks,
    rank_change,
    rank_labels,
    tie_levels,
    tie_ranks,
)

#: Multiples of 1/8: exact, so equal values are equal and unequal ones far apart.
EIGHTHS = st.integers(-80, 80).map(lambda i: i / 8)


def scipy_ranks(values: np.ndarray) -> np.ndarray:
    return stats.rankdata(-np.asarray(values, np.float64), method="min", axis=-1).astype(np.int64)


@given(st.lists(EIGHTHS, min_size=1, max_size=30))
def test_equals_scipy_on_exact_values(values):
    assert tie_ranks(values).tolist() == scipy_ranks(values).tolist()


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30))
def test_equals_scipy_without_near_ties(values):
    x = np.sort(np.asarray(values))
    gaps = np.diff(x)
    assume(np.all((gaps == 0) | (gaps > 1e-9 * np.abs(x).max(initial=0.0))))
    assert tie_ranks(values).tolist() == scipy_ranks(values).tolist()


@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.1, 0.3, 1.0, -2.0]), st.integers(-3, 3)),
        min_size=1,
        max_size=30,
    )
)
def test_ties_are_those_of_tie_levels(pairs):
    """Values a few units of rounding noise apart: ranked as compare ranks them."""
    values = np.array([base * (1 + noise * 1e-15) for base, noise in pairs])
    assert tie_ranks(values).tolist() == scipy_ranks(tie_levels(values)).tolist()
    # and those near-equal values tie: ranks as of the values without the noise
    assert tie_ranks(values).tolist() == scipy_ranks([base for base, _ in pairs]).tolist()


def test_crafted_near_ties():
    assert tie_ranks([0.1 + 0.2, 0.3, 0.5, 0.1]).tolist() == [2, 2, 1, 4]
    # a chain: each neighbour within RTOL * 1 of the next, the ends 1.2e-12 apart
    chain = [1.0, 1.0 + 0.6e-12, 1.0 + 1.2e-12, 0.5]
    assert tie_ranks(chain).tolist() == [1, 1, 1, 4]
    assert tie_ranks([1.0, 1.0 + 2e-12, 0.5]).tolist() == [2, 1, 3]
    # the tolerance is relative to the row's largest magnitude
    assert tie_ranks([1e-20, 2e-20, 100.0]).tolist() == [2, 2, 1]
    assert tie_ranks([1e-20, 2e-20]).tolist() == [2, 1]
    # rtol=0: only equal values tie
    assert tie_ranks([0.1 + 0.2, 0.3], rtol=0.0).tolist() == [1, 2]
    assert tie_ranks([0.1 + 0.2, 0.3], rtol=RTOL).tolist() == [1, 1]


@given(st.lists(st.lists(EIGHTHS, min_size=4, max_size=4), min_size=1, max_size=6))
def test_rows_along_the_last_axis(rows):
    x = np.array(rows)
    ranks = tie_ranks(x)
    assert ranks.shape == x.shape and ranks.dtype == np.int64
    assert ranks.tolist() == [tie_ranks(row).tolist() for row in x]
    assert ranks.tolist() == scipy_ranks(x).tolist()
    cube = np.stack([x, -x])
    assert tie_ranks(cube).tolist() == [ranks.tolist(), tie_ranks(-x).tolist()]


def test_nan_and_infinity():
    nan, inf = float("nan"), float("inf")
    assert tie_ranks([nan, 1.0, nan, 2.0]).tolist() == [3, 2, 3, 1]
    assert tie_ranks([nan, nan]).tolist() == [1, 1]
    assert tie_ranks([-inf, nan, 0.0]).tolist() == [2, 3, 1]
    assert tie_ranks([inf, 1.0, inf, -inf, -inf]).tolist() == [1, 3, 1, 4, 4]
    # the finite values keep their own tolerance beside an infinity
    assert tie_ranks([0.1 + 0.2, 0.3, inf]).tolist() == [2, 2, 1]


def test_empty_and_refused():
    assert tie_ranks([]).tolist() == []
    assert tie_ranks(np.zeros((3, 0))).shape == (3, 0)
    with pytest.raises(InputError, match="a single number has no rank"):
        tie_ranks(1.0)
    with pytest.raises(InputError, match="not all numbers"):
        tie_ranks(["a", "b"])


# --------------------------------------------------------------------------- labels, change


def labels_reference(ranks: list[int]) -> list[str]:
    count = Counter(ranks)
    return [("=" if count[r] > 1 else "") + str(r) for r in ranks]


@given(st.lists(EIGHTHS, max_size=30))
def test_labels_equal_a_plain_loop(values):
    ranks = tie_ranks(values).tolist() if values else []
    assert rank_labels(ranks) == labels_reference(ranks)


def test_labels():
    assert rank_labels([1, 2, 2, 4]) == ["1", "=2", "=2", "4"]
    assert rank_labels(np.array([3.0, 1.0, 1.0])) == ["3", "=1", "=1"]
    assert rank_labels([]) == []
    with pytest.raises(InputError, match=r"rank 2\.5 is not a whole number"):
        rank_labels([1, 2.5])
    with pytest.raises(InputError, match="one rank per item"):
        rank_labels([[1, 2]])


def test_rank_change():
    # rank 5 -> 2 moved up three places: -3; 2 -> 5 moved down: +3
    assert rank_change([5, 2, 1], [2, 5, 1]).tolist() == [-3, 3, 0]
    assert rank_change(np.array([1.0, 2.0]), [2, 1]).dtype == np.int64
    with pytest.raises(InputError, match="not a whole number"):
        rank_change([1, float("nan")], [1, 2])
    with pytest.raises(InputError, match=r"shapes \(3,\) and \(2,\)"):
        rank_change([1, 2, 3], [1, 2])


# --------------------------------------------------------------------------- the move


def test_compare_ties_with_these_names():
    """compare ranks with stats.ranks (RTOL is declared there only, not re-exported)."""
    assert compare.tie_levels is tie_levels and compare.tie_ranks is tie_ranks
    assert RTOL == 1e-12 and not hasattr(compare, "RTOL")


def test_ranks_does_not_import_compare():
    code = "import sys, tiecore.stats.ranks; print('tiecore.compare' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_compare_loads_scipy_stats_when_a_test_needs_it():
    """Importing compare (the explorer does at start-up) leaves scipy.stats (~0.5 s) for the
    first statistical test; a p-value then loads it and equals scipy's."""
    code = (
        "import sys, numpy as np, tiecore.compare\n"
        "print('scipy.stats' in sys.modules)\n"
        "from tiecore.stats.paired import paired_t\n"
        "p = paired_t(np.array([[0.1, 0.3], [0.2, 0.2], [0.4, 0.9]]), np.array([0]), "
        "np.array([1]))[0][0]\n"
        "from scipy import stats\n"
        "print(p == stats.ttest_rel([0.1, 0.2, 0.4], [0.3, 0.2, 0.9]).pvalue)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


@given(
    st.integers(1, 6).flatmap(
        lambda items: st.lists(
            st.lists(EIGHTHS, min_size=items, max_size=items), min_size=1, max_size=20
        )
    )
)
def test_mean_ranks_equal_scipy_averaged(rows):
    """Exact values: scipy's average ranks per row (1 = highest), averaged over the rows."""
    expected = stats.rankdata(-np.asarray(rows), method="average", axis=1).mean(axis=0)
    assert np.allclose(mean_ranks(rows), expected, rtol=0, atol=1e-12)


def test_mean_ranks_tie_within_the_tolerance():
    """0.3 and 0.1 + 0.2 tie, as compare ties them (scipy alone would split them)."""
    rows = [[0.3, 0.1 + 0.2, 0.5], [0.5, 0.3, 0.1]]
    # row 1: 0.5 first, the two 0.3s share places 2 and 3; row 2: 0.5, 0.3, 0.1
    assert mean_ranks(rows).tolist() == [(2.5 + 1) / 2, (2.5 + 2) / 2, (1 + 3) / 2]


def test_mean_ranks_refuse_a_vector():
    with pytest.raises(InputError, match="matrix"):
        mean_ranks([0.1, 0.2])


@given(st.lists(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=12), min_size=1, max_size=5))
def test_average_ranks_are_compares_old_ranks(rows):
    """``average``: scipy's average ranks of :func:`tie_levels`, what compare used before."""
    width = min(len(r) for r in rows)
    x = np.array([r[:width] for r in rows])
    old = stats.rankdata(-tie_levels(x), method="average", axis=-1)
    assert tie_ranks(x, "average").tolist() == old.tolist()
    noisy = x * (1 + 1e-15)
    assert (
        tie_ranks(np.c_[x, noisy], "average").tolist()
        == stats.rankdata(-tie_levels(np.c_[x, noisy]), method="average", axis=-1).tolist()
    )


def test_unknown_method_refused():
    with pytest.raises(InputError, match="not a ranking"):
        tie_ranks([0.1, 0.2], "dense")

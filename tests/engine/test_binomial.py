"""tiecore.engine.binomial.log_choose against Python's exact integers."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tiecore.engine.binomial import SMALL, log_choose


@st.composite
def pairs(draw, largest: int = 40_000) -> tuple[int, int]:
    n = draw(st.one_of(st.integers(0, 2 * SMALL + 2), st.integers(0, largest)))
    return n, draw(st.integers(0, n))


@settings(max_examples=300, deadline=None)
@given(st.lists(pairs(), min_size=1, max_size=8))
def test_log_choose_is_within_a_few_ulp_of_the_exact_value(cases):
    n, k = (np.array(column) for column in zip(*cases, strict=True))
    got = log_choose(n, k)
    for (a, b), value in zip(cases, got.tolist(), strict=True):
        exact = math.log(math.comb(a, b)) if math.comb(a, b) > 1 else 0.0
        # a few ulp of the value itself (a log k! difference is off by ulps of log n!)
        assert abs(value - exact) <= 8 * math.ulp(max(exact, 1.0)), (a, b)


def test_log_choose_beats_a_difference_of_log_factorials_in_big_groups():
    n, k = 100_000, 37
    exact = math.log(math.comb(n, k))
    table = [math.lgamma(x + 1.0) for x in (n, k, n - k)]
    assert abs(table[0] - table[1] - table[2] - exact) > 1e-11  # the old way's loss
    assert abs(float(log_choose(np.array(n), np.array(k))) - exact) < 1e-13

"""The Variance page's numbers (tiecore.explain.variance) against numpy by hand.

References: ``numpy.std`` of the values of every ordering (brute force over
:func:`tests.reference.orderings`-style permutations of one tie group), a loop for
the running mean, and hand-made tie groups.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tiecore
from tiecore.explain import variance
from tiecore.spread import evaluate_spread


@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_tie_sd_is_the_square_root_of_the_variance(values):
    var = np.asarray(values) ** 2
    assert np.allclose(variance.tie_sd(var), np.sqrt(var), rtol=0, atol=1e-15)
    assert variance.tie_sd([-1e-17]).tolist() == [0.0]


def test_tie_sd_is_the_sd_over_every_ordering():
    """One query, four tied documents, two relevant: sqrt(var) = numpy's sd of P@2 over all
    24 orderings."""
    docs = ["d1", "d2", "d3", "d4"]
    run = pd.DataFrame({"qid": "q", "docno": docs, "score": 1.0})
    qrels = pd.DataFrame({"qid": "q", "docno": docs, "level": [1, 1, 0, 0]})
    values = [
        sum(qrels.set_index("docno").loc[list(order[:2]), "level"] > 0) / 2
        for order in itertools.permutations(docs)
    ]
    spread = evaluate_spread({"r": run}, qrels, ["P@2"], per_query=True)
    var = spread.loc[spread["qid"].notna(), "var"].to_numpy()
    assert variance.tie_sd(var)[0] == pytest.approx(np.std(values), abs=1e-12)
    assert tiecore  # the package's facade imports


@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=50),
    st.floats(0, 1),
    st.floats(0, 0.1),
)
def test_convergence_is_the_running_mean_within_two_sd_over_root_n(means, aware, var):
    frame = variance.convergence(means, aware, var)
    running = [sum(means[: k + 1]) / (k + 1) for k in range(len(means))]
    assert frame["n"].tolist() == list(range(1, len(means) + 1))
    assert np.allclose(frame["running"], running, rtol=0, atol=1e-12)
    half = 2 * np.sqrt(var / np.arange(1, len(means) + 1))
    assert np.allclose(frame["high"] - aware, half, rtol=0, atol=1e-12)
    assert np.allclose(aware - frame["low"], half, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("k", "words"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                     (13, "13th"), (21, "21st"), (22, "22nd"), (101, "101st"), (111, "111th")]
)  # fmt: skip
def test_ordinals(k, words):
    assert variance.ordinal(k) == words


def test_group_parts_split_each_query_by_hand():
    groups = pd.DataFrame(
        {
            "qid": ["a", "a", "a", "b", "c"],
            "var_share": [0.5, 0.0, 0.5, 1.0, 1.0],
            "start_rank": [1, 3, 7, 2, 1],
        }
    )
    parts = variance.group_parts(groups, pd.Series({"a": 0.2, "b": 0.1, "c": 0.3}), ["a", "b"])
    assert parts["qid"].tolist() == ["a", "a", "b"]  # c not chosen; a's zero share dropped
    assert np.allclose(parts["var_part"], [0.1, 0.1, 0.1])
    assert parts["place"].tolist() == [1, 2, 1]
    assert parts["label"].tolist()[1] == "2nd tie group from the top"
    # the parts of a query add up to its variance
    assert parts.groupby("qid")["var_part"].sum().to_dict() == pytest.approx({"a": 0.2, "b": 0.1})


@given(st.lists(st.lists(st.floats(0, 1), min_size=3, max_size=3), min_size=2, max_size=30))
def test_sampled_summary_is_numpys_mean_and_sample_sd(rows):
    samples = pd.DataFrame(rows, columns=["q1", "q2", "q3"])
    got = variance.sampled_summary(samples)
    means = np.asarray(rows).mean(axis=1)
    assert np.allclose(got["means"], means, rtol=0, atol=1e-12)
    assert got["mean"] == pytest.approx(means.mean(), abs=1e-12)
    assert got["sd"] == pytest.approx(np.std(means, ddof=1), abs=1e-12)
    assert np.allclose(got["query_sd"], np.std(rows, axis=0, ddof=1), rtol=0, atol=1e-12)
    assert np.allclose(got["query_mean"], np.mean(rows, axis=0), rtol=0, atol=1e-12)

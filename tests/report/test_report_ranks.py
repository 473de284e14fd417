"""Ranks under every tie treatment (tiecore.report.ranks) and the counts that reconcile
"values changed as printed" with "flagged" (tiecore.report.effects).

References: scipy's ``rankdata(method="min")`` for competition ranks, ``numpy``'s
``lexsort`` for the slots, hand-made cases for the moves and the counts, and Python's
``%f`` formatting for the printed numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import rankdata

from tiecore import report
from tiecore.report import ranks as rk

ORDERINGS = ["trec_eval", "aware", "docno_asc"]

# a few distinct levels so that ties (shared ranks) happen often
levels = st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.75]), min_size=2, max_size=9)


@given(levels, levels)
def test_competition_ranks_are_scipys_min_ranks(a, b):
    n = min(len(a), len(b))
    scores = pd.DataFrame(
        {"trec_eval": a[:n], "aware": b[:n], "docno_asc": a[:n][::-1]},
        index=[f"s{i}" for i in range(n)],
    )
    r = rk.ordering_ranks(scores, ORDERINGS)
    for c in ORDERINGS:
        expected = rankdata(-scores[c].to_numpy(), method="min")
        assert r.ranks[c].tolist() == expected.tolist()
        shared = [(expected == x).sum() > 1 for x in expected]
        assert [label.startswith("=") for label in r.labels[c]] == shared
    # the order: by tie-aware rank, then trec_eval's rank, then as given
    keyed = sorted(
        range(n), key=lambda i: (r.ranks["aware"].iloc[i], r.ranks["trec_eval"].iloc[i], i)
    )
    assert r.order == [f"s{i}" for i in keyed]


@given(levels, levels)
def test_moves_are_every_system_whose_rank_differs_largest_first(a, b):
    n = min(len(a), len(b))
    scores = pd.DataFrame({"trec_eval": a[:n], "aware": b[:n]}, index=[f"s{i}" for i in range(n)])
    r = rk.ordering_ranks(scores, ["trec_eval", "aware"])
    moves = rk.rank_moves(r)
    differ = {s for s in scores.index if r.ranks.loc[s, "trec_eval"] != r.ranks.loc[s, "aware"]}
    assert set(moves["system"]) == differ
    for row in moves.itertuples():
        assert row.change == r.ranks.loc[row.system, "aware"] - r.ranks.loc[row.system, "trec_eval"]
        assert row.label_after == r.labels.loc[row.system, "aware"]
    sizes = moves["change"].abs().tolist()
    assert sizes == sorted(sizes, reverse=True)


def test_moves_by_hand():
    scores = pd.DataFrame(
        {"trec_eval": [0.1, 0.5, 0.3, 0.2], "aware": [0.6, 0.5, 0.3, 0.2]},
        index=["a", "b", "c", "d"],
    )
    moves = rk.rank_moves(rk.ordering_ranks(scores, ["trec_eval", "aware"]))
    assert moves[["system", "rank_before", "rank_after", "change"]].values.tolist() == [
        ["a", 4, 1, -3],
        ["b", 1, 2, 1],
        ["c", 2, 3, 1],
        ["d", 3, 4, 1],
    ]


def test_no_move_is_an_empty_table():
    scores = pd.DataFrame({"trec_eval": [0.1, 0.5], "aware": [0.2, 0.6]}, index=["a", "b"])
    assert rk.rank_moves(rk.ordering_ranks(scores, ["trec_eval", "aware"])).empty


@given(st.lists(st.lists(st.integers(1, 4), min_size=3, max_size=3), min_size=1, max_size=8))
def test_slots_sort_each_column_keeping_row_order_on_equal_ranks(rows):
    ranks = np.array(rows)
    slots = rk.slope_slots(ranks)
    for j in range(ranks.shape[1]):
        order = np.lexsort((np.arange(len(ranks)), ranks[:, j]))
        assert slots[order, j].tolist() == list(range(1, len(ranks) + 1))
    assert rk.movers(ranks).tolist() == [len(set(row)) > 1 for row in rows]


def test_agreement_matrices_and_all_agree():
    index = pd.MultiIndex.from_product([["x", "y"], ["x", "y"]])
    agreement = pd.DataFrame({"kendall_tau": [1.0, 0.5, 0.5, 1.0]}, index=index)
    m = rk.agreement_matrices(agreement, ["x", "y"])
    assert m["kendall_tau"].tolist() == [[1.0, 0.5], [0.5, 1.0]]
    assert not rk.all_agree(m)
    assert rk.all_agree({"kendall_tau": np.ones((2, 2))})
    assert not rk.all_agree({"kendall_tau": np.array([[1.0, np.nan], [np.nan, 1.0]])})


def test_pairs_in_order_keep_each_pair_once_above_below():
    pairs = pd.DataFrame(
        {
            "a": ["x", "y", "x", "z", "y", "z"],
            "b": ["y", "x", "z", "x", "z", "y"],
            "mean_diff": [0.1, -0.1, 0.2, -0.2, 0.1, -0.1],
            "t_pvalue_adj": [0.01, 0.01, 0.2, 0.2, np.nan, np.nan],
        }
    ).set_index(["a", "b"])
    upper = rk.pairs_in_order(pairs, ["x", "y", "z"], alpha=0.05)
    assert upper[["a", "b"]].values.tolist() == [["x", "y"], ["x", "z"], ["y", "z"]]
    assert upper["significant"].tolist() == [True, False, False]
    assert upper["abs_diff"].tolist() == [0.1, 0.2, 0.1]


def _table(visible, flagged, sd):
    return pd.DataFrame({"visible": visible, "flagged": flagged, "tie_sd": sd})


def test_flag_counts_reconcile_visible_with_flagged():
    counts = report.flag_counts(
        _table([True, True, False, True, False], [True, False, False, False, False],
               [0.1, 0.1, 0.0, 0.2, 0.3])
    )  # fmt: skip
    assert counts == {"values": 5, "with_noise": 4, "visible": 3, "flagged": 1, "within_noise": 2}
    assert counts["visible"] == counts["flagged"] + counts["within_noise"]


@pytest.mark.parametrize(
    ("visible", "flagged", "said"),
    [
        (0, 0, "None of the 45 values changes at 4 decimals."),
        (17, 0, "17 of 45 values change at 4 decimals; none of them moved by more than 2 tie sd "
         "(flagged): all 17 are within what random tie-breaking alone gives."),
        (1, 0, "1 of 45 values change at 4 decimals; none of them moved by more than 2 tie sd "
         "(flagged): it is within what random tie-breaking alone gives."),
        (3, 3, "3 of 45 values change at 4 decimals; all 3 moved by more than 2 tie sd (flagged)."),
        (5, 1, "5 of 45 values change at 4 decimals; 1 of them moved by more than 2 tie sd "
         "(flagged), the other 4 are within what random tie-breaking alone gives."),
    ],
)  # fmt: skip
def test_the_reconciling_sentence(visible, flagged, said):
    counts = {
        "values": 45,
        "visible": visible,
        "flagged": flagged,
        "within_noise": visible - flagged,
    }
    assert report.reconcile_sentence(counts, 4) == said


def test_largest_shift_is_by_size_not_by_z():
    table = pd.DataFrame(
        {
            "measure": ["nDCG", "RR", "P@10"],
            "delta": [0.00004, -0.0083, np.nan],
            "z": [30.0, -1.2, 0.0],
        }
    )
    assert report.largest_shift(table)["measure"] == "RR"
    assert report.largest_shift(table.assign(delta=0.0)) is None
    assert report.largest_shift(table.iloc[:0]) is None


@given(st.floats(-1, 1, allow_nan=False), st.integers(1, 6))
def test_printed_numbers_are_never_minus_zero(value, digits):
    for text in (report.format_value(value, digits), report.format_shift(value, digits)):
        assert float(text) == 0 or text.lstrip("+-") != f"{0:.{digits}f}"
        assert not text.startswith("-") or float(text) < 0, text
    # format_value is Python's %f but for the sign of a zero
    assert float(report.format_value(value, digits)) == float(f"{value:.{digits}f}")


@given(st.floats(-1, 1, allow_nan=False))
def test_percentage_points_are_a_hundred_times_the_change_never_minus_zero(change):
    text = report.format_points(change)
    number = float(text.removesuffix(" percentage points"))
    assert number == float(f"{100 * change:.1f}")
    assert not text.startswith("-0.0 ")


@given(st.floats(allow_nan=True))
def test_z_is_printed_signed_with_two_decimals_never_minus_zero(z):
    text = report.format_z(z)
    if np.isnan(z):
        assert text == report.MISSING
    elif np.isinf(z):
        assert text in ("+∞", "−∞")
    else:
        assert float(text) == float(f"{z:+.2f}")
        assert text[0] in "+-" and text != "-0.00"


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=12),
    st.sampled_from([0.001, 0.01, 0.05, 0.1]),
    st.sampled_from(["holm", "bonferroni", "bh", "none"]),
)
def test_the_significance_sentence_counts_each_test(rows, alpha, correction):
    upper = pd.DataFrame(
        rows, columns=["t_pvalue_adj", "randomization_pvalue_adj", "wilcoxon_pvalue_adj"]
    )
    said = rk.significance_sentence(upper, alpha, correction)
    counts = [sum(p < alpha for p in column) for column in zip(*rows, strict=True)]
    assert f"{len(rows)} pair" in said and f"α = {alpha:g}" in said
    if not any(counts):
        assert said.startswith("No pair of systems differs significantly")
    else:
        t, randomization, wilcoxon = (str(k) if k else "none" for k in counts)
        assert f"the paired t-test finds {t} pair" in said
        assert f"the randomization test {randomization}" in said
        assert f"the Wilcoxon signed-rank test {wilcoxon}." in said
    assert "alpha" not in said and "_" not in said


@given(st.integers(2, 12), st.integers(0, 70), st.randoms(use_true_random=False))
def test_nearest_in_rank_keeps_the_closest_pairs(n, limit, rnd):
    """Against an obvious reference: every pair's distance, the smallest ones kept."""
    order = [f"s{i}" for i in range(n)]
    pairs = [(order[i], order[j]) for i in range(n) for j in range(i + 1, n)]
    rnd.shuffle(pairs)
    upper = pd.DataFrame(pairs, columns=["a", "b"])
    kept = rk.nearest_in_rank(upper, order, limit)
    assert len(kept) == min(limit, len(pairs))
    assert list(kept.index) == sorted(kept.index)  # upper's order
    dist = {p: order.index(p[1]) - order.index(p[0]) for p in pairs}
    ranked = sorted(pairs, key=lambda p: (dist[p], order.index(p[0])))
    assert set(zip(kept["a"], kept["b"], strict=True)) == set(ranked[: len(kept)])


def test_compared_systems_are_the_top_and_the_marked_in_rank_order():
    best = ["a", "b", "c", "d", "e"]
    assert rk.compared_systems(best, 3) == ["a", "b", "c"]
    assert rk.compared_systems(best, 2, ["e", "a"]) == ["a", "b", "e"]
    assert rk.compared_systems(best, 9, ["x"]) == best  # an unknown name is ignored
    assert rk.compared_systems(best, 2, ["e", "c"], only_marked=True) == ["c", "e"]

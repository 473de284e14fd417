"""Systems and rankings (``tiecore.compare``) against slow definitions and real runs.

- ``tau_ap`` equals Yilmaz, Aslam & Robertson's definition, written as a loop and
  averaged over every ordering consistent with tied scores;
- ``kendall_tau`` equals :func:`scipy.stats.kendalltau` (tau-b);
- ``p_beats`` equals the double loop over sample pairs, and P(a beats b) +
  P(b beats a) = 1 for the sampled and the normal estimate;
- the oblivious columns equal :func:`tiecore.evaluate` with each tie-break, the
  aware column its aware value and the sample means its sampled value;
- a run that differs from another only by ties swaps places with it between
  trec_eval's order and tie-aware scoring;
- on the 17 TREC 2003 Robust runs some pair swaps between trec_eval and aware;
- the randomization test is reproducible with its seed.
"""

from __future__ import annotations

import itertools
import json
import warnings
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from strategies import cases, depths, rel_levels

import tiecore
from tiecore.compare import (
    OBLIVIOUS,
    ORDERINGS,
    Comparison,
    compare,
    format_comparison,
    kendall_tau,
    p_beats,
    swapped_pairs,
    tau_ap,
)

ROBUST = Path("/work/shared/data/robust03")
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MEASURES = ["AP", "P@3", "RR", "nDCG@5", "Rprec", "Bpref", "R@4", "Success@2"]


# --------------------------------------------------------------------------- slow references


def tau_ap_strict(order: list[int], truth: list[int]) -> float:
    """Yilmaz et al.'s tau_AP of the list ``order`` against the list ``truth`` (no ties).

    ``2/(N-1) sum_{i=2..N} C(i)/(i-1) - 1``, ``C(i)`` = items above position ``i``
    in ``order`` that ``truth`` also ranks above that item.
    """
    place = {item: k for k, item in enumerate(truth)}
    total = 0.0
    for i in range(1, len(order)):
        correct = sum(1 for j in range(i) if place[order[j]] < place[order[i]])
        total += correct / i
    return 2.0 / (len(order) - 1) * total - 1.0


def orderings(scores: list[float]) -> list[list[int]]:
    """Every list of item indexes by scores descending, ties in every possible order."""
    levels = sorted(set(scores), reverse=True)
    groups = [[k for k, s in enumerate(scores) if s == level] for level in levels]
    return [
        [item for group in choice for item in group]
        for choice in itertools.product(*(itertools.permutations(g) for g in groups))
    ]


def tau_ap_slow(x: list[float], y: list[float]) -> float:
    """Mean of the strict tau_AP over every ordering of ``x`` and every ordering of ``y``."""
    values = [tau_ap_strict(a, b) for a in orderings(x) for b in orderings(y)]
    return sum(values) / len(values)


def p_beats_slow(a: np.ndarray, b: np.ndarray) -> float:
    wins = sum(1.0 if u > v else 0.5 if u == v else 0.0 for u in a for v in b)
    return wins / (len(a) * len(b))


score_lists = st.integers(2, 5).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=n, max_size=n),
        st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=n, max_size=n),
    )
)


# --------------------------------------------------------------------------- rank correlations


@PROPERTY
@given(score_lists)
def test_tau_ap_equals_definition_averaged_over_tie_orders(pair):
    x, y = pair
    assert tau_ap(np.array(x), np.array(y)) == pytest.approx(tau_ap_slow(x, y), abs=1e-12)


@given(st.permutations(range(7)), st.permutations(range(7)))
def test_tau_ap_without_ties_is_the_definition(x, y):
    by_x = sorted(range(7), key=lambda k: -x[k])
    by_y = sorted(range(7), key=lambda k: -y[k])
    expected = tau_ap_strict(by_x, by_y)
    assert tau_ap(np.array(x, float), np.array(y, float)) == pytest.approx(expected, abs=1e-12)


def test_tau_ap_is_one_for_the_same_order_and_minus_one_reversed():
    x = np.arange(6.0)
    assert tau_ap(x, x) == pytest.approx(1.0)
    assert tau_ap(x, -x) == pytest.approx(-1.0)


def test_tau_ap_works_along_the_last_axis():
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 4, (5, 6)).astype(float), rng.integers(0, 4, 6).astype(float)
    expected = [tau_ap(row, y) for row in x]
    np.testing.assert_allclose(tau_ap(x, y), expected)


@PROPERTY
@given(score_lists)
def test_kendall_tau_is_scipys_tau_b(pair):
    x, y = np.array(pair[0]), np.array(pair[1])
    expected = stats.kendalltau(x, y).statistic if np.ptp(x) and np.ptp(y) else np.nan
    np.testing.assert_allclose(kendall_tau(x, y), expected, atol=1e-12)


@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=8).filter(np.ptp))
def test_kendall_tau_of_identical_rankings_is_one(x):
    x = np.array(x)
    assert kendall_tau(x, x) == pytest.approx(1.0)
    assert kendall_tau(x, 2 * x) == pytest.approx(1.0)  # exact scaling keeps the order


# --------------------------------------------------------------------------- P(a beats b)


samples_pair = st.tuples(
    st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.4]), min_size=1, max_size=12),
    st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.4]), min_size=1, max_size=12),
)


@given(samples_pair)
def test_p_beats_is_the_double_loop_and_complements(pair):
    a, b = np.array(pair[0]), np.array(pair[1])
    assert p_beats(a, b) == pytest.approx(p_beats_slow(a, b), abs=1e-12)
    assert p_beats(a, b) + p_beats(b, a) == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- small comparisons


def two_runs() -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Run B is run A with its three docs of query 1 tied.

    Query 1: relevant docs y, z and non-relevant a.  A ranks z, a, y (AP 5/6).
    B ties all three: trec_eval (docno descending) gives z, y, a (AP 1), the
    mean over the 3 label orders is (1 + 5/6 + 7/12) / 3 < 5/6.  Query 2 is
    identical in both runs, and a third run C sits far below.
    """
    qrels = pd.DataFrame(
        {"qid": ["1", "1", "1", "2", "2"], "docno": ["y", "z", "a", "p", "q"], "level": 1}
    )
    qrels.loc[2, "level"] = 0
    q2 = {"qid": ["2", "2", "2"], "docno": ["p", "x", "q"], "score": [3.0, 2.0, 1.0]}
    a = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["z", "a", "y"], "score": [3.0, 2.0, 1.0]})
    b = a.assign(score=1.0)
    c = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "z", "y"], "score": [9.0, 1.0, 0.0]})
    runs = {
        name: pd.concat([run, pd.DataFrame(q2)]) for name, run in zip("ABC", (a, b, c), strict=True)
    }
    return {name: run.reset_index(drop=True) for name, run in runs.items()}, qrels


def test_a_run_that_differs_only_by_ties_swaps_with_its_twin():
    runs, qrels = two_runs()
    result = compare(runs, qrels, "AP", samples=300, n_resamples=200)
    scores = result.scores
    assert scores.loc["B", "trec_eval"] > scores.loc["A", "trec_eval"]
    assert scores.loc["B", "aware"] < scores.loc["A", "aware"]
    swaps = result.swaps.set_index("run")
    assert set(swaps.index) == {"A", "B"}
    assert swaps.loc["A", "shift"] == 1 and swaps.loc["B", "shift"] == -1
    assert swaps.loc["B", "rank_trec_eval"] == 1 and swaps.loc["B", "rank_aware"] == 2
    flipped = swapped_pairs(result)
    assert flipped[["a", "b"]].values.tolist() == [["B", "A"]]
    # A has no ties: no noise of its own; the difference sits inside B's tie noise
    assert result.tie_var["A"] == 0 and result.tie_var["B"] > 0
    assert bool(result.pairs.loc[("A", "B"), "within_tie_noise"])
    # B's three label orders give AP above, equal to and below A's: P(A beats B) = 1/2
    assert result.pairs.loc[("A", "B"), "p_beats_sampled"] == pytest.approx(0.5, abs=0.06)
    assert result.pairs.loc[("A", "B"), "p_beats_normal"] > 0.5
    # the agreement table sees the same swap
    assert result.agreement.loc[("trec_eval", "aware"), "kendall_tau"] < 1
    assert result.agreement.loc[("trec_eval", "optimistic"), "kendall_tau"] == pytest.approx(1)
    assert result.agreement.loc[("trec_eval", "optimistic"), "tau_ap"] == pytest.approx(1)


def test_pairs_are_complementary_and_antisymmetric():
    runs, qrels = two_runs()
    pairs = compare(runs, qrels, "RR", samples=50, n_resamples=100).pairs
    for a, b in pairs.index:
        ab, ba = pairs.loc[(a, b)], pairs.loc[(b, a)]
        assert ab["p_beats_sampled"] + ba["p_beats_sampled"] == pytest.approx(1.0)
        assert ab["p_beats_normal"] + ba["p_beats_normal"] == pytest.approx(1.0)
        assert ab["mean_diff"] == -ba["mean_diff"]
        assert ab["t_pvalue"] == ba["t_pvalue"] or np.isnan(ab["t_pvalue"])
        assert ab["n_queries"] == ba["n_queries"] == 2


def test_randomization_pvalue_is_reproducible_with_the_seed():
    rng = np.random.default_rng(7)
    qids = [str(q) for q in range(30) for _ in range(6)]
    docnos = [f"d{k}" for k in range(6)] * 30
    qrels = pd.DataFrame({"qid": qids, "docno": docnos, "level": rng.integers(0, 3, len(qids))})
    runs = {
        name: pd.DataFrame({"qid": qids, "docno": docnos, "score": rng.integers(0, 3, len(qids))})
        for name in ("u", "v", "w")
    }
    options = {"samples": 20, "n_resamples": 500}
    first = compare(runs, qrels, "AP", seed=3, **options).pairs["randomization_pvalue"]
    again = compare(runs, qrels, "AP", seed=3, **options).pairs["randomization_pvalue"]
    pd.testing.assert_series_equal(first, again)
    other = compare(runs, qrels, "AP", seed=4, **options).pairs["randomization_pvalue"]
    assert not first.equals(other)
    # a pair's p-value depends on the seed and the pair, not on the other runs
    alone = compare({k: runs[k] for k in "uv"}, qrels, "AP", seed=3, **options).pairs
    assert alone.loc[("u", "v"), "randomization_pvalue"] == first.loc[("u", "v")]
    assert ((first > 0) & (first <= 1)).all()


@PROPERTY
@given(cases(max_queries=3, max_docs=7), st.sampled_from(MEASURES), rel_levels, depths)
def test_columns_are_what_evaluate_reports(case, measure, rel_level, depth):
    run, qrels = case.run_frame(), case.qrels_frame()
    runs = {"one": run, "two": run.assign(score=-run["score"])}
    options = {"rel_level": rel_level, "depth": depth}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tiecore.TieCoreWarning)
        result = compare(runs, qrels, measure, samples=5, n_resamples=20, **options)
        for policy in OBLIVIOUS:
            found = tiecore.evaluate(
                runs, qrels, measure, ties="oblivious", tiebreak=policy, **options
            )
            np.testing.assert_array_equal(result.scores[policy], found["value"])
        aware = tiecore.evaluate(runs, qrels, measure, ties="aware", **options)
        sampled = tiecore.evaluate(runs, qrels, measure, ties="sampled", samples=5, **options)
    np.testing.assert_array_equal(result.scores["aware"], aware["value"])
    np.testing.assert_allclose(result.sample_scores.mean(), sampled["value"], rtol=1e-12)
    np.testing.assert_allclose(result.per_query.mean(), aware["value"], rtol=1e-12)
    assert list(result.scores.columns) == list(ORDERINGS)
    assert (result.ranks.isin([1.0, 1.5, 2.0])).all().all()


def test_format_comparison_prints_every_table():
    runs, qrels = two_runs()
    result = compare(runs, qrels, "AP", samples=20, n_resamples=50)
    text = format_comparison(result)
    assert "AP" in text and all(name in text for name in runs)
    assert "rank changes trec_eval -> aware" in text
    table = pd.read_csv(StringIO(format_comparison(result, "csv")))
    assert list(table.columns) == ["measure", "table", "run", "other", "field", "value"]
    assert set(table["table"]) == {"scores", "swaps", "pairs", "agreement"}
    document = json.loads(format_comparison(result, "json"))
    assert document["measure"] == "AP"
    assert len(document["pairs"]) == 6 and len(document["scores"]) == 3
    with pytest.raises(ValueError, match="fmt"):
        format_comparison(result, "xml")


def test_bad_arguments_are_refused():
    runs, qrels = two_runs()
    with pytest.raises(ValueError, match="two runs"):
        compare({"A": runs["A"]}, qrels, "AP")
    with pytest.raises(ValueError, match="one measure"):
        compare(runs, qrels, ["AP", "P@5"])
    with pytest.raises(ValueError, match="samples"):
        compare(runs, qrels, "AP", samples=1)


# --------------------------------------------------------------------------- TREC 2003 Robust


@pytest.fixture(scope="module")
def robust() -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    runs = tiecore.read_runs(sorted((ROBUST / "runs").glob("*.gz")))
    return runs, tiecore.read_qrels(ROBUST / "qrels.txt")


def test_robust03_has_a_pair_that_tie_breaking_reorders(robust):
    """trec_eval's docno order and the tie-aware mean put some pair of runs in opposite order.

    R-precision is the measure where it happens on these runs (AP, P@10 and
    nDCG@10 keep trec_eval's order); which pair swaps is computed, not assumed.
    """
    runs, qrels = robust
    result = compare(runs, qrels, "Rprec", samples=50, n_resamples=200)
    assert isinstance(result, Comparison) and len(result.scores) == 17
    flipped = swapped_pairs(result)
    assert len(flipped) >= 1
    assert not result.swaps.empty
    for row in flipped.itertuples():
        assert row.trec_eval_a > row.trec_eval_b and row.aware_a <= row.aware_b
        assert {row.a, row.b} <= set(result.swaps["run"])
    assert result.agreement.loc[("trec_eval", "aware"), "kendall_tau"] < 1
    shifts = result.ranks["trec_eval"] - result.ranks["aware"]
    assert shifts.sum() == 0  # ranks are a permutation under both orderings

"""Systems and rankings (``tiecore.compare``) against slow definitions and real runs.

- ``tau_ap`` equals Urbano & Marrero's tie-aware AP correlation written as a
  loop (Yilmaz et al.'s definition when nothing ties), and a ranking judged
  against itself scores exactly 1, ties or not;
- ``kendall_tau`` equals :func:`scipy.stats.kendalltau` (tau-b);
- ``p_beats`` equals the double loop over sample pairs, and P(a beats b) +
  P(b beats a) = 1 for the sampled and the normal estimate;
- the oblivious columns equal :func:`tiecore.evaluate` with each tie-break, the
  aware column its aware value and the sample means its sampled value, with
  and without ``complete``;
- scores that differ by rounding noise are tied (average ranks, no swap);
- a run that differs from another only by ties swaps places with it between
  trec_eval's order and tie-aware scoring, and the swap list names the runs
  as documented;
- undefined statistics print as undefined, never as NaN, inf or p = 0;
- on the 17 TREC 2003 Robust runs some pair swaps between trec_eval and aware.

The pairwise statistics against scipy and brute force are in
``test_compare_stats.py``, the command line in ``test_compare_cli.py``.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import re
import warnings
from functools import partial
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from shared_data import ROBUST_QRELS, ROBUST_RUNS
from strategies import FLOAT32_COLLIDING, SCORES, cases, depths, rel_levels

import tiecore
from tiecore.compare import (
    OBLIVIOUS,
    ORDERINGS,
    Comparison,
    TooLarge,
    compare,
    pair_table,
    score_run,
    swapped_pairs,
)
from tiecore.engine.judgments import Judgments
from tiecore.measures import parse_measures
from tiecore.report.comparison import _ranking_table, format_comparison
from tiecore.spread import evaluate_spread
from tiecore.stats.beats import p_beats
from tiecore.stats.correlation import kendall_tau, tau_ap, tau_ap_b
from tiecore.stats.ranks import tie_levels

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MEASURES = ["AP", "P@3", "RR", "nDCG@5", "Rprec", "Bpref", "R@4", "Success@2"]
#: A number, NaN or infinity as printed by Python, numpy, pandas or json.
NON_NUMBER = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


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


def tau_ap_ties_slow(x: list[float], y: list[float]) -> float:
    """Urbano & Marrero's tau_AP of the scores ``x`` against the scores ``y``, as a loop.

    Over every item ``i`` below the top tie group of ``x``: the share of the
    items strictly above ``i`` in ``x`` that are strictly above ``i`` in ``y``
    too; ``2 * mean share - 1``.  NaN when ``x`` or ``y`` ties everything.
    """
    if len(set(x)) == 1 or len(set(y)) == 1:
        return float("nan")
    shares = []
    for i in range(len(x)):
        above = [j for j in range(len(x)) if x[j] > x[i]]
        if above:
            shares.append(sum(1 for j in above if y[j] > y[i]) / len(above))
    return 2.0 * sum(shares) / len(shares) - 1.0


def p_beats_slow(a: np.ndarray, b: np.ndarray) -> float:
    wins = sum(1.0 if u > v else 0.5 if u == v else 0.0 for u in a for v in b)
    return wins / (len(a) * len(b))


score_lists = st.integers(2, 6).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=n, max_size=n),
        st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=n, max_size=n),
    )
)


# --------------------------------------------------------------------------- rank correlations


@PROPERTY
@given(score_lists)
def test_tau_ap_is_the_tie_aware_definition(pair):
    x, y = pair
    expected = tau_ap_ties_slow(x, y)
    np.testing.assert_allclose(tau_ap(np.array(x), np.array(y)), expected, atol=1e-12)
    both = (expected + tau_ap_ties_slow(y, x)) / 2
    np.testing.assert_allclose(tau_ap_b(np.array(x), np.array(y)), both, atol=1e-12)


@settings(deadline=None)
@given(st.permutations(range(7)), st.permutations(range(7)))
def test_tau_ap_without_ties_is_the_definition(x, y):
    by_x = sorted(range(7), key=lambda k: -x[k])
    by_y = sorted(range(7), key=lambda k: -y[k])
    expected = tau_ap_strict(by_x, by_y)
    assert tau_ap(np.array(x, float), np.array(y, float)) == pytest.approx(expected, abs=1e-12)


@settings(deadline=None)  # a first call can take longer than 200 ms on a busy machine
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=2, max_size=8).filter(np.ptp))
def test_an_ordering_with_ties_against_itself_is_exactly_one(x):
    x = np.array(x)
    assert float(tau_ap(x, x)) == 1.0
    assert float(tau_ap_b(x, x)) == 1.0
    assert float(kendall_tau(x, x)) == 1.0


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant input and returns NaN
        expected = stats.kendalltau(x, y).statistic
    np.testing.assert_allclose(kendall_tau(x, y), expected, atol=1e-12)


def test_correlations_of_a_constant_ordering_are_undefined():
    x, flat = np.array([3.0, 2.0, 1.0]), np.ones(3)
    for function in (kendall_tau, tau_ap, tau_ap_b):
        assert np.isnan(function(x, flat)) and np.isnan(function(flat, x))


def test_rounding_noise_is_a_tie():
    noisy = np.array([0.1 + 0.2, 0.3, 0.5])
    assert noisy[0] != noisy[1]
    assert tie_levels(noisy).tolist() == [0, 0, 1]
    assert float(kendall_tau(noisy, np.array([1.0, 1.0, 2.0]))) == 1.0
    assert float(tau_ap(noisy, np.array([1.0, 1.0, 2.0]))) == 1.0
    assert p_beats(np.array([noisy[0]]), np.array([noisy[1]])) == 0.5


# --------------------------------------------------------------------------- P(a beats b)


samples_pair = st.tuples(
    st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.4]), min_size=1, max_size=12),
    st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.4]), min_size=1, max_size=12),
)


@settings(deadline=None)
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


def test_swapped_pairs_names_the_run_ahead_under_aware_when_trec_eval_ties():
    """``a`` is ahead under trec_eval, or under aware when trec_eval ties the pair."""
    runs, qrels = two_runs()
    result = compare(runs, qrels, "AP", samples=20, n_resamples=20)
    scores = pd.DataFrame(
        {o: [0.5, 0.5, 0.1] for o in ORDERINGS}, index=pd.Index(list("ABC"), name="run")
    )
    scores["aware"] = [0.4, 0.6, 0.1]  # trec_eval ties A and B; aware puts B ahead
    flipped = swapped_pairs(dataclasses.replace(result, scores=scores))
    assert flipped[["a", "b"]].values.tolist() == [["B", "A"]]
    assert flipped.loc[0, "aware_a"] > flipped.loc[0, "aware_b"]
    scores["trec_eval"] = [0.5, 0.7, 0.1]  # an ordinary swap: B ahead under trec_eval
    scores["aware"] = [0.6, 0.6, 0.1]  # ... and tied under aware
    flipped = swapped_pairs(dataclasses.replace(result, scores=scores))
    assert flipped[["a", "b"]].values.tolist() == [["B", "A"]]


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
    names = list(dict.fromkeys(pairs.index.get_level_values("a")))
    assert list(pairs.index) == [(a, b) for a in names for b in names if a != b]


def precision_runs(per_query: dict[str, list[int]]) -> tuple[dict, pd.DataFrame]:
    """Runs with no ties whose P@10 on query ``q`` is ``per_query[run][q] / 10``."""
    queries = len(next(iter(per_query.values())))
    qrels = pd.DataFrame(
        [(f"q{q}", f"r{k}", 1) for q in range(queries) for k in range(10)],
        columns=["qid", "docno", "level"],
    )
    runs = {}
    for name, hits in per_query.items():
        rows = [
            (f"q{q}", f"r{k}" if k < hit else f"n{k}", 10.0 - k)
            for q, hit in enumerate(hits)
            for k in range(10)
        ]
        runs[name] = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    return runs, qrels


def test_trec_eval_and_its_double_differ_where_float32_merges_scores():
    """Scores 1 + 1e-9 and 1 are one float32: trec_eval breaks that tie by docno
    descending, the doubles' order (trec_eval_double) keeps 1 + 1e-9 first."""
    qrels = pd.DataFrame({"qid": ["q"] * 2, "docno": ["a", "b"], "level": [1, 0]})
    runs = {
        name: pd.DataFrame({"qid": ["q"] * 2, "docno": ["a", "b"], "score": scores})
        for name, scores in {"merged": [1.0 + 1e-9, 1.0], "apart": [1.0 + 1e-6, 1.0]}.items()
    }
    result = compare(runs, qrels, "RR", samples=2)
    assert result.scores.loc["merged", ["trec_eval", "trec_eval_double"]].tolist() == [0.5, 1.0]
    assert result.scores.loc["apart", ["trec_eval", "trec_eval_double"]].tolist() == [1.0, 1.0]


def test_means_equal_up_to_rounding_are_tied():
    """P@10 of 0.1, 0.2, 0.3 and of 0.3, 0.2, 0.1: equal means, different rounding."""
    runs, qrels = precision_runs({"A": [1, 2, 3], "B": [3, 2, 1], "C": [0, 1, 0]})
    result = compare(runs, qrels, "P@10", samples=4, n_resamples=10)
    assert result.scores.loc["A", "aware"] != result.scores.loc["B", "aware"]  # the noise
    assert result.ranks.loc["A"].tolist() == [1.5] * len(ORDERINGS)
    assert result.ranks.loc["B"].tolist() == [1.5] * len(ORDERINGS)
    pair = result.pairs.loc[("A", "B")]
    assert pair["mean_diff"] == 0 and pair["p_beats_normal"] == 0.5
    assert pair["p_beats_sampled"] == 0.5 and bool(pair["within_tie_noise"])
    table = format_comparison(result, "json")
    ranks = {row["run"]: row["rank_random"] for row in json.loads(table)["scores"]}
    assert ranks["A"] == ranks["B"] == 1.5


def test_undefined_statistics_are_never_printed_as_numbers():
    """Identical runs tie under every ordering and their difference never varies."""
    runs, qrels = precision_runs({"A": [1, 2, 3], "B": [1, 2, 3]})
    result = compare(runs, qrels, "P@10", samples=4, n_resamples=10)
    assert result.agreement["kendall_tau"].isna().all()
    pair = result.pairs.loc[("A", "B")]
    assert np.isnan(pair["t_pvalue"]) and np.isnan(pair["effect_size"])
    assert pair["randomization_pvalue"] == 1.0
    text = format_comparison(result)
    assert not NON_NUMBER.search(text) and "undefined" in text
    table = pd.read_csv(StringIO(format_comparison(result, "csv")), keep_default_na=False)
    assert not NON_NUMBER.search(table.to_csv())
    agreement = table[(table["table"] == "agreement") & (table["field"] == "kendall_tau")]
    assert (agreement["value"] == "").all()
    document = format_comparison(result, "json")
    assert not NON_NUMBER.search(document)
    assert all(row["kendall_tau"] is None for row in json.loads(document)["agreement"])


def test_a_constant_difference_has_no_t_test_and_an_exact_randomization_p():
    """Two queries, B scores 0.1 below A on both: t-test undefined, exact p = 2/4."""
    runs, qrels = precision_runs({"A": [3, 5], "B": [2, 4]})
    result = compare(runs, qrels, "P@10", samples=4, n_resamples=2000)
    pair = result.pairs.loc[("A", "B")]
    assert np.isnan(pair["t_pvalue"]) and np.isnan(pair["effect_size"])
    assert pair["randomization_pvalue"] == 0.5 and bool(pair["randomization_exact"])
    for fmt in ("text", "csv", "json"):
        assert not NON_NUMBER.search(format_comparison(result, fmt))
    document = json.loads(format_comparison(result, "json"))
    for row in document["pairs"]:
        assert row["t_pvalue"] is None and row["effect_size"] is None
        assert row["randomization_pvalue"] > 0


@PROPERTY
@given(
    st.sampled_from([SCORES, FLOAT32_COLLIDING]).flatmap(
        lambda pool: cases(max_queries=3, max_docs=7, score_pool=pool)
    ),
    st.sampled_from(MEASURES),
    rel_levels,
    depths,
    st.booleans(),
)
def test_columns_are_what_evaluate_reports(case, measure, rel_level, depth, complete):
    run, qrels = case.run_frame(), case.qrels_frame()
    runs = {"one": run, "two": run.assign(score=-run["score"])}
    options = {"rel_level": rel_level, "depth": depth, "complete": complete}
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
        spread = evaluate_spread(runs, qrels, measure, **options)
    np.testing.assert_array_equal(result.scores["aware"], aware["value"])
    np.testing.assert_allclose(result.sample_scores.mean(), sampled["value"], rtol=1e-12)
    np.testing.assert_allclose(result.per_query.mean(), aware["value"], rtol=1e-12)
    np.testing.assert_allclose(result.tie_var, spread["var"], rtol=1e-12, atol=1e-300)
    assert list(result.scores.columns) == list(ORDERINGS)
    assert (result.ranks.isin([1.0, 1.5, 2.0])).all().all()
    if complete:
        assert list(result.per_query.index) == list(Judgments.from_qrels(qrels).qids)
        assert not result.per_query.isna().any().any()


def test_complete_averages_over_every_qrels_query():
    runs, qrels = two_runs()
    qrels = pd.concat([qrels, pd.DataFrame({"qid": ["3"], "docno": ["w"], "level": [1]})])
    plain = compare(runs, qrels, "AP", samples=10, n_resamples=10)
    full = compare(runs, qrels, "AP", samples=10, n_resamples=10, complete=True)
    pd.testing.assert_frame_equal(full.scores, plain.scores * 2 / 3)
    assert full.pairs["n_queries"].eq(3).all() and plain.pairs["n_queries"].eq(2).all()
    np.testing.assert_allclose(full.tie_var, plain.tie_var * 4 / 9)
    assert "every qrels query" in format_comparison(full)


def test_progress_reports_every_run_then_the_pairs():
    runs, qrels = two_runs()
    calls = []
    compare(runs, qrels, "AP", samples=5, n_resamples=5, progress=lambda *a: calls.append(a))
    assert calls == [
        (1, 5, "A"),
        (2, 5, "B"),
        (3, 5, "C"),
        (4, 5, "pairs"),
        (5, 5, "agreement"),
    ]


def test_score_run_pickles_for_other_processes():
    runs, qrels = two_runs()
    work = partial(
        score_run,
        judgments=Judgments.from_qrels(qrels),
        measure=parse_measures("AP")[0],
        samples=5,
        seed=0,
        depth=None,
    )
    again = pickle.loads(pickle.dumps(work))
    first, second = work("B", runs["B"]), again("B", runs["B"])
    assert first.scores == second.scores
    np.testing.assert_array_equal(first.samples, second.samples)


def test_too_many_samples_are_refused_up_front():
    runs, qrels = two_runs()
    with pytest.raises(TooLarge, match=r"need \d+\.\d GiB .* at most \d+ samples fit"):
        compare(runs, qrels, "AP", samples=10**9)


def test_format_comparison_prints_every_table():
    runs, qrels = two_runs()
    result = compare(runs, qrels, "AP", samples=20, n_resamples=50)
    text = format_comparison(result)
    assert "AP" in text and all(name in text for name in runs)
    assert "rank changes trec_eval -> aware" in text
    assert "runs next to each other under aware" in text
    table = pd.read_csv(StringIO(format_comparison(result, "csv")))
    assert list(table.columns) == ["measure", "table", "run", "other", "field", "value"]
    assert set(table["table"]) == {"scores", "swaps", "pairs", "agreement"}
    document = json.loads(format_comparison(result, "json"))
    assert document["measure"] == "AP"
    assert len(document["pairs"]) == 6 and len(document["scores"]) == 3
    with pytest.raises(ValueError, match="fmt"):
        format_comparison(result, "xml")


def test_json_numbers_read_back_exactly():
    """Every float of the json document is the Comparison's, bit for bit (pandas' to_json
    kept 15 decimals: a tie variance of 8.2e-12 printed with 3 digits, p-values near
    1e-15 as 1e-15 or 2e-15)."""
    runs, qrels = two_runs()
    result = compare(runs, qrels, "AP", samples=20, n_resamples=50)
    document = json.loads(format_comparison(result, "json"))
    tables = {
        "scores": _ranking_table(result).rename_axis("run").reset_index(),
        "tie_var": result.tie_var.rename_axis("run").reset_index(),
        "pairs": pair_table(result).reset_index(),
    }
    compared = 0
    for name, frame in tables.items():
        assert len(document[name]) == len(frame)
        for record, (_, row) in zip(document[name], frame.iterrows(), strict=True):
            for column, value in row.items():
                if isinstance(value, float):
                    compared += 1
                    assert record[column] == (None if np.isnan(value) else value), column
    assert compared > 50


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
    runs = tiecore.read_runs(ROBUST_RUNS)
    return runs, tiecore.read_qrels(ROBUST_QRELS)


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
        ahead = row.trec_eval_a > row.trec_eval_b and row.aware_a <= row.aware_b
        tied = row.trec_eval_a == row.trec_eval_b and row.aware_a > row.aware_b
        assert ahead or tied
        assert {row.a, row.b} <= set(result.swaps["run"])
    assert result.agreement.loc[("trec_eval", "aware"), "kendall_tau"] < 1
    shifts = result.ranks["trec_eval"] - result.ranks["aware"]
    assert shifts.sum() == 0  # ranks are a permutation under both orderings
    for fmt in ("text", "csv", "json"):
        assert not NON_NUMBER.search(format_comparison(result, fmt))


def test_runs_over_different_queries_are_warned_of_unless_complete():
    """Run a has queries 1 and 2, run b only 1: a's mean (and mean_diff) is over a query b
    lacks while the paired tests use query 1 alone, so compare warns, naming the run with
    fewest queries; with complete, or with the same queries, it does not."""
    qrels = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": ["d1", "d2", "d3", "d1"]})
    qrels["level"] = [1, 0, 2, 1]
    a = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": ["d1", "d2", "d3", "d1"]})
    a["score"] = 1.0
    b = pd.DataFrame({"qid": ["1"] * 3, "docno": ["d3", "d2", "d1"], "score": [3.0, 2, 1]})
    with pytest.warns(tiecore.TieCoreWarning, match=r"different queries \(b: 1 of 2\)") as w:
        result = compare({"a": a, "b": b}, qrels, "AP", samples=10)
    assert w[0].filename == __file__  # where compare was called
    assert set(result.pairs["n_queries"]) == {1}  # the shared query alone
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compare({"a": a, "b": b}, qrels, "AP", samples=10, complete=True)
        compare({"a": a, "b": a.assign(score=[3.0, 2, 1, 1])}, qrels, "AP", samples=10)

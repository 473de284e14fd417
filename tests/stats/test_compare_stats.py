"""compare's pairwise statistics against independent references.

- the paired t-test and the effect size against :func:`scipy.stats.ttest_rel`
  and numpy called directly on the per-query values;
- the randomization test against brute-force enumeration of every sign flip
  (exact when ``2**n`` fits the budget), and its Monte Carlo estimate
  ``(b + 1) / (R + 1)`` against the exact value;
- each run's tie-aware mean, the exact variance of its mean over random
  tie-breaks (so the tie noise and the normal approximation of P(a beats b)),
  and P(a beats b) itself against brute-force enumeration of every ordering of
  every query of both runs;
- memory stays bounded however many resamples are asked for.
"""

from __future__ import annotations

import itertools
import math
import tracemalloc
import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from scipy import special, stats
from strategies import SCORES, cases, depths, rel_levels

import tiecore
from tiecore.compare import compare
from tiecore.stats import SMALLEST_P
from tiecore.stats.bootstrap import BOOTSTRAP_KEY, bootstrap_intervals
from tiecore.stats.corrections import adjust_pvalues
from tiecore.stats.paired import paired_t, paired_tests
from tiecore.stats.ranks import RTOL
from tiecore.stats.summary import system_table
from tiecore.stats.tukey import tukey_hsd
from tiecore.stats.wilcoxon import wilcoxon_pvalues

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPECS = {
    "AP": ref.Spec("AP"),
    "P@3": ref.Spec("P", 3),
    "RR": ref.Spec("RR"),
    "nDCG@5": ref.Spec("nDCG", 5),
    "Rprec": ref.Spec("Rprec"),
    "Bpref": ref.Spec("Bpref"),
    "R@4": ref.Spec("R", 4),
    "Success@2": ref.Spec("Success", 2),
}


# --------------------------------------------------------------------------- brute force


def sign_flip_pvalue(d: np.ndarray) -> float:
    """Share of all ``2**n`` sign vectors whose ``|sum s d|`` reaches ``|sum d|``.

    Sums of equal magnitude tie (within 1e-9 of ``sum |d|``; the values are
    measure values, rounding noise is far below that).
    """
    observed = abs(math.fsum(d))
    slack = 1e-9 * math.fsum(abs(v) for v in d)
    signs = list(itertools.product((1.0, -1.0), repeat=len(d)))
    hits = sum(
        1
        for s in signs
        if abs(math.fsum(a * b for a, b in zip(s, d, strict=True))) >= observed - slack
    )
    return hits / len(signs)


def random_runs(seed: int, n_runs: int = 3, queries: int = 8, docs: int = 6):
    """Tie-heavy runs on shared queries, with some queries missing from some runs."""
    rng = np.random.default_rng(seed)
    qids = [f"q{q}" for q in range(queries) for _ in range(docs)]
    docnos = [f"d{k}" for k in range(docs)] * queries
    qrels = pd.DataFrame({"qid": qids, "docno": docnos, "level": rng.integers(0, 3, len(qids))})
    runs = {}
    for r in range(n_runs):
        run = pd.DataFrame({"qid": qids, "docno": docnos, "score": rng.integers(0, 3, len(qids))})
        if r == n_runs - 1:  # the last run lacks a query
            run = run[run["qid"] != "q0"]
        runs[f"r{r}"] = run.reset_index(drop=True)
    return runs, qrels


# --------------------------------------------------------------------------- t-test and effect


@pytest.mark.parametrize("seed", range(6))
def test_t_test_and_effect_size_are_scipys_and_randomization_is_brute_force(seed):
    runs, qrels = random_runs(seed)
    result = compare(runs, qrels, "AP", samples=5, n_resamples=2**8)
    per_query = result.per_query
    for (a, b), row in result.pairs.iterrows():
        both = per_query[[a, b]].dropna()
        x, y = both[a].to_numpy(), both[b].to_numpy()
        d = x - y
        assert row["n_queries"] == len(d)
        if d.std(ddof=1) > 1e-9:
            expected = stats.ttest_rel(x, y).pvalue
            assert row["t_pvalue"] == pytest.approx(expected, rel=1e-9)
            assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-9)
        else:
            assert np.isnan(row["t_pvalue"]) and np.isnan(row["effect_size"])
        assert bool(row["randomization_exact"]) == (2 ** len(d) <= 2**8)
        assert row["randomization_pvalue"] == pytest.approx(sign_flip_pvalue(d), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [7, 1 << 21])
def test_paired_t_is_scipys_ttest_rel_on_each_pairs_shared_queries(seed, chunk, monkeypatch):
    """The one t-test of compare and of the Rankings stars, per pair over the queries
    both columns have (NaN elsewhere), in one chunk and in chunks of a pair or two."""
    monkeypatch.setattr(tiecore.stats.paired, "CHUNK_CELLS", chunk)
    rng = np.random.default_rng(seed)
    values = rng.random((12, 7)).round(2)
    values[:, 1] = values[:, 0] - 0.1  # a constant difference: no t-test
    values[rng.random(values.shape) < 0.25] = np.nan
    values[1:, 6] = np.nan  # one query only: no t-test
    i, j = np.triu_indices(values.shape[1], 1)
    p, mean, sd, n = paired_t(values, i, j)
    for k in range(len(i)):
        both = ~np.isnan(values[:, i[k]]) & ~np.isnan(values[:, j[k]])
        x, y = values[both, i[k]], values[both, j[k]]
        assert n[k] == both.sum()
        if n[k]:
            assert mean[k] == pytest.approx(np.mean(x - y), rel=1e-12, abs=1e-15)
        if n[k] > 1:
            assert sd[k] == pytest.approx(np.std(x - y, ddof=1), rel=1e-9, abs=1e-15)
        if n[k] > 1 and np.ptp(x - y) > 1e-9:
            assert p[k] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-9)
        else:
            assert np.isnan(p[k])
    assert (n < 2).any() and (n[~np.isnan(p)] > 1).all()  # both kinds of pair occurred
    assert np.isnan(p[0])  # the constant difference, whatever queries the pair shares


def test_a_t_test_whose_tail_underflows_still_reports_a_positive_p():
    rng = np.random.default_rng(0)
    x = rng.random((50, 1))
    y = x - 0.25 + 1e-9 * rng.standard_normal((50, 1))  # varies, but barely
    out = paired_tests(np.hstack([x, y]), np.array([0]), np.array([1]))
    assert stats.t.sf(abs(0.25 / (1e-9 / math.sqrt(50))), 49) == 0.0  # scipy's tail underflows
    assert out["t_pvalue"][0] == SMALLEST_P > 0
    assert np.isfinite(out["effect_size"][0])


def test_a_constant_difference_gives_no_t_test_and_no_p_of_zero():
    x = np.array([0.5, 0.25, 0.75, 0.125, 0.375])
    values = np.column_stack([x, x - 0.125, x])
    out = paired_tests(values, np.array([0, 0]), np.array([1, 2]), n_resamples=10)
    assert np.isnan(out["t_pvalue"]).all() and np.isnan(out["effect_size"]).all()
    # constant 0.125 on 5 queries, 10 < 2**5 random flips: p = (b + 1) / 11 > 0
    assert out["randomization_pvalue"][0] >= 1 / 11
    assert out["randomization_pvalue"][1] == 1.0  # no difference at all
    exact = paired_tests(values, np.array([0]), np.array([1]), n_resamples=32)
    assert exact["randomization_pvalue"][0] == 2 / 32  # only s = +1 and s = -1 reach it


def test_topic_noise_of_constant_values_is_zero_not_a_rounding_residue():
    """0.1 on 300 queries: numpy's std gives ~1.4e-17 (the mean's rounding); the
    topic sd of the run, and of a pair whose difference is constant, is 0."""
    x = np.full(300, 0.1)
    assert x.std(ddof=1) > 0  # the residue this guards against
    values = np.column_stack([3 * x, x])
    out = paired_tests(values, np.array([0]), np.array([1]), n_resamples=10)
    assert out["topic_sd"][0] == 0.0
    per_query = pd.DataFrame(values, columns=["A", "B"])
    systems = system_table(per_query, pd.Series({"A": 0.0, "B": 0.0}))
    assert systems["topic_sd"].tolist() == [0.0, 0.0]


def test_two_queries_enumerate_all_four_sign_flips():
    out = paired_tests(np.array([[0.5, 0.25], [0.75, 0.5]]), np.array([0]), np.array([1]))
    assert out["randomization_pvalue"][0] == 0.5 and out["randomization_exact"][0]


# --------------------------------------------------------------------------- randomization test


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 10).flatmap(
        lambda n: st.lists(
            st.lists(st.integers(-8, 8), min_size=3, max_size=3), min_size=n, max_size=n
        )
    )
)
def test_exact_randomization_is_the_enumeration_of_every_sign_flip(rows):
    values = np.array(rows, dtype=float) / 8  # sums of these are exact
    i, j = np.triu_indices(3, k=1)
    out = paired_tests(values, i, j, n_resamples=2 ** len(rows))
    assert out["randomization_exact"].all()
    for k in range(3):
        d = values[:, i[k]] - values[:, j[k]]
        assert out["randomization_pvalue"][k] == sign_flip_pvalue(d)


def test_monte_carlo_randomization_is_b_plus_one_over_r_plus_one_near_the_exact_p():
    rng = np.random.default_rng(5)
    values = rng.integers(0, 9, (12, 4)) / 8
    i, j = np.triu_indices(4, k=1)
    budget = 999
    out = paired_tests(values, i, j, seed=3, n_resamples=budget)
    assert not out["randomization_exact"].any()
    p = out["randomization_pvalue"]
    hits = p * (budget + 1)
    np.testing.assert_allclose(hits, np.round(hits), atol=1e-9)
    assert (hits >= 1).all()
    for k in range(len(i)):
        exact = sign_flip_pvalue(values[:, i[k]] - values[:, j[k]])
        tolerance = 5 * math.sqrt(exact * (1 - exact) / budget) + 2 / budget
        assert abs(p[k] - exact) <= tolerance
    # the same sign flips serve every pair: a pair alone gets the same p
    alone = paired_tests(values[:, [0, 2]], np.array([0]), np.array([1]), seed=3, n_resamples=999)
    assert alone["randomization_pvalue"][0] == p[1]


def test_randomization_memory_is_bounded_whatever_the_resamples():
    """Ten million sign flips of 30 queries would be 2.2 GiB as one array of doubles."""
    rng = np.random.default_rng(0)
    values = rng.random((30, 3))
    i, j = np.triu_indices(3, k=1)
    tracemalloc.start()
    try:
        out = paired_tests(values, i, j, n_resamples=2 * 10**6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20
    assert ((out["randomization_pvalue"] > 0) & (out["randomization_pvalue"] <= 1)).all()


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


# --------------------------------------------------------------------------- tie noise, P(beats)


@st.composite
def two_run_cases(draw):
    """One small case's run and a second run re-scoring the same rows."""
    case = draw(cases(max_queries=3, max_docs=5, max_label_kinds=2))
    first = case.run_frame()
    scores = draw(st.lists(st.sampled_from(SCORES), min_size=len(first), max_size=len(first)))
    return {"A": first, "B": first.assign(score=scores)}, case.qrels_frame()


def mean_distribution(run, qrels, spec, *, rel_level, depth, complete) -> dict[float, float]:
    """Every value of the run's mean over every ordering of every query, with its probability.

    Each query's label orders come from :func:`reference.label_sequences`
    (orderings counted); the run's mean is the sum over queries divided by
    the number of queries averaged.
    """
    judged = {
        qid: dict(zip(group["docno"], group["level"], strict=True))
        for qid, group in qrels.groupby("qid")
    }
    queries = [qid for qid in dict.fromkeys(run["qid"]) if qid in judged]
    count = len(judged) if complete else len(queries)
    sums = {0.0: 1.0}
    for qid in queries:
        rows = run[run["qid"] == qid]
        labels = [judged[qid].get(docno) for docno in rows["docno"]]
        levels = list(judged[qid].values())
        sequences = ref.label_sequences(list(rows["score"]), labels)
        total = sum(sequences.values())
        per_query = defaultdict(float)
        for sequence, weight in sequences.items():
            value = ref.measure(spec, sequence, levels, rel_level=rel_level, depth=depth)
            per_query[value] += weight / total
        merged = defaultdict(float)
        for partial, p in sums.items():
            for value, q in per_query.items():
                merged[partial + value] += p * q
        sums = dict(merged)
    return {total / count: p for total, p in sums.items()}


def moments(distribution: dict[float, float]) -> tuple[float, float]:
    mean = math.fsum(v * p for v, p in distribution.items())
    return mean, math.fsum((v - mean) ** 2 * p for v, p in distribution.items())


@PROPERTY
@given(two_run_cases(), st.sampled_from(sorted(SPECS)), rel_levels, depths, st.booleans())
def test_tie_noise_and_p_beats_are_brute_force_over_every_ordering(
    pair, measure, rel_level, depth, complete
):
    runs, qrels = pair
    options = {"rel_level": rel_level, "depth": depth, "complete": complete}
    samples = 2000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tiecore.TieCoreWarning)
        result = compare(runs, qrels, measure, samples=samples, n_resamples=10, **options)
    found = {
        name: mean_distribution(run, qrels, SPECS[measure], **options) for name, run in runs.items()
    }
    (mean_a, var_a), (mean_b, var_b) = moments(found["A"]), moments(found["B"])
    note(f"A {found['A']}\nB {found['B']}")
    assert result.scores.loc["A", "aware"] == pytest.approx(mean_a, abs=1e-12)
    assert result.tie_var["A"] == pytest.approx(var_a, abs=1e-12)
    assert result.tie_var["B"] == pytest.approx(var_b, abs=1e-12)
    row = result.pairs.loc[("A", "B")]
    sd = math.sqrt(var_a + var_b)
    assert row["tie_noise"] == pytest.approx(2 * sd, abs=1e-9)
    diff = mean_a - mean_b
    if sd > 1e-6:
        assert row["p_beats_normal"] == pytest.approx(special.ndtr(diff / sd), abs=1e-6)
    elif abs(diff) > 1e-9:
        assert row["p_beats_normal"] == float(diff > 0)
    # the exact P(A beats B) over every pair of orderings, equality counting half
    exact = 0.0
    for u, p in found["A"].items():
        for v, q in found["B"].items():
            close = abs(u - v) <= RTOL * max(abs(u), abs(v), 1e-300) + 1e-12
            exact += p * q * (0.5 if close else float(u > v))
    # independent samples of both runs: the estimate's sd is at most 0.5 sqrt(2 / samples)
    assert abs(row["p_beats_sampled"] - exact) <= 6 * 0.5 * math.sqrt(2 / samples)


# --------------------------------------------------------------------------- reviewer statistics

P_VALUES = st.lists(
    st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.01, 0.05, 0.5, 1.0, math.nan])),
    min_size=0,
    max_size=30,
)


def holm_by_counting(p: np.ndarray) -> np.ndarray:
    """Holm from its definition: p_i is rejected at level a iff every p_j <= p_i is below
    a / (m - rank_j + 1); so adj_i = max over p_j <= p_i of (m - #{p_l < p_j}) p_j."""
    defined = p[~np.isnan(p)]
    m = len(defined)
    out = np.full(len(p), np.nan)
    for k, value in enumerate(p):
        if not np.isnan(value):
            out[k] = max(
                min(1.0, (m - np.sum(defined < other)) * other)
                for other in defined
                if other <= value
            )
    return out


@settings(max_examples=200, deadline=None)
@given(P_VALUES)
def test_corrections_against_scipy_and_the_definitions(values):
    p = np.array(values, dtype=float)
    defined = ~np.isnan(p)
    m = int(defined.sum())
    bh = adjust_pvalues(p, "bh")
    holm = adjust_pvalues(p, "holm")
    bonferroni = adjust_pvalues(p, "bonferroni")
    for adjusted in (bh, holm, bonferroni, adjust_pvalues(p, "none")):
        assert np.array_equal(np.isnan(adjusted), ~defined)
    if m:
        expected = stats.false_discovery_control(p[defined], method="bh")
        np.testing.assert_allclose(bh[defined], expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(holm, holm_by_counting(p), rtol=1e-12, atol=0)
    np.testing.assert_allclose(bonferroni, np.minimum(1.0, m * p), rtol=1e-12, atol=0)
    # each correction is at least the raw p, BH <= Holm <= Bonferroni, all at most 1
    assert (bh[defined] >= p[defined] - 1e-15).all() and (bonferroni[defined] <= 1).all()
    assert (bh[defined] <= holm[defined] + 1e-15).all()
    assert (holm[defined] <= bonferroni[defined] + 1e-15).all()


def sign_rank_columns(d: np.ndarray, zero_method: str) -> list[float]:
    """scipy.stats.wilcoxon called on each column alone; NaN when no difference is nonzero."""
    out = []
    for column in d.T:
        if (column == 0).all():
            out.append(math.nan)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(float(stats.wilcoxon(column, zero_method=zero_method).pvalue))
    return out


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from([0, 1, 2, 5, 9, 13, 14, 30, 51]),
    st.sampled_from(tiecore.compare.ZERO_METHODS),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_wilcoxon_is_scipys_on_each_pair_alone(n, zero_method, seed, continuous):
    """Batched over pairs with zeros, ties, exact, flipped and normal columns mixed."""
    rng = np.random.default_rng(seed)
    if continuous:
        d = rng.standard_normal((n, 6))
    else:
        d = rng.integers(-4, 5, (n, 6)) / 8.0  # zeros and tied magnitudes, exact in binary
    found = wilcoxon_pvalues(d, zero_method)
    expected = sign_rank_columns(d, zero_method)
    np.testing.assert_allclose(found, expected, rtol=1e-10, atol=1e-300)
    assert (found[~np.isnan(found)] > 0).all()


def test_wilcoxon_treats_rounding_noise_as_ties_and_zeros():
    noisy = np.array([[0.1 + 0.2, 1e-17, 0.3, -0.3, 0.5, 0.7, -0.9]]).T
    clean = np.array([[0.3, 0.0, 0.3, -0.3, 0.5, 0.7, -0.9]]).T
    assert wilcoxon_pvalues(noisy)[0] == sign_rank_columns(clean, "wilcox")[0]


def test_wilcoxon_of_no_difference_is_undefined_and_never_zero():
    d = np.column_stack([np.zeros(8), np.full(8, 1.0), np.linspace(1, 2, 8)])
    found = wilcoxon_pvalues(np.vstack([d] * 30))  # n = 240: normal tail
    assert np.isnan(found[0]) and (found[1:] > 0).all()


@pytest.mark.parametrize(
    ("method", "n"),
    [(m, n) for m in ("percentile", "basic") for n in (2, 7, 40)] + [("BCa", 2), ("BCa", 40)],
)
def test_bootstrap_intervals_are_scipys(method, n):
    """BCa's bias correction counts the resamples whose mean is the observed one; scipy
    decides that by rounding noise, tiecore within RTOL.  With 7 queries about 6 of 999
    resamples are permutations of the data, so BCa is compared where none is (n = 40) or
    where rounding agrees (n = 2: a + b == b + a)."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 4)) + np.arange(4)
    i, j = np.triu_indices(4, k=1)
    seed, confidence, resamples = 11, 0.9, 999
    low, high = bootstrap_intervals(
        x, confidence=confidence, method=method, n_resamples=resamples, seed=seed
    )
    pair_low, pair_high = bootstrap_intervals(
        x, i, j, confidence=confidence, method=method, n_resamples=resamples, seed=seed
    )

    def scipys(sample):
        rng = np.random.default_rng([seed, BOOTSTRAP_KEY])
        return stats.bootstrap(
            (sample,),
            np.mean,
            confidence_level=confidence,
            n_resamples=resamples,
            method=method,
            rng=rng,
        ).confidence_interval

    for c in range(4):
        expected = scipys(x[:, c])
        assert low[c] == pytest.approx(expected.low, abs=1e-12)
        assert high[c] == pytest.approx(expected.high, abs=1e-12)
    for k in range(len(i)):
        expected = scipys(x[:, i[k]] - x[:, j[k]])
        assert pair_low[k] == pytest.approx(expected.low, abs=1e-12)
        assert pair_high[k] == pytest.approx(expected.high, abs=1e-12)


def test_bootstrap_of_constant_data_is_a_point_and_of_one_query_undefined():
    x = np.array([[0.5, 0.25], [0.5, 0.5], [0.5, 0.75]])
    low, high = bootstrap_intervals(x)
    assert (low[0], high[0]) == (0.5, 0.5) and low[1] < 0.5 < high[1]
    pair = bootstrap_intervals(np.column_stack([x[:, 0], x[:, 0] - 0.125]), [0], [1])
    assert (pair[0][0], pair[1][0]) == (0.125, 0.125)
    one = bootstrap_intervals(x[:1])
    assert np.isnan(one[0]).all() and np.isnan(one[1]).all()


def test_tukey_is_scipys_and_for_two_groups_the_pooled_t_test():
    rng = np.random.default_rng(4)
    groups = [rng.random(n) + k / 4 for k, n in enumerate((6, 9, 7, 8))]
    found = tukey_hsd(groups, 0.9)
    expected = stats.tukey_hsd(*groups)
    interval = expected.confidence_interval(0.9)
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose(found["pvalue"][off], expected.pvalue[off], rtol=1e-9)
    np.testing.assert_allclose(found["low"][off], interval.low[off], rtol=1e-9)
    np.testing.assert_allclose(found["high"][off], interval.high[off], rtol=1e-9)
    # two groups: Tukey's q is sqrt(2) |t| of the pooled two-sample t-test, so the same p
    two = tukey_hsd(groups[:2])
    assert two["pvalue"][0, 1] == pytest.approx(stats.ttest_ind(*groups[:2]).pvalue, rel=1e-6)
    flat = tukey_hsd([np.ones(3), np.ones(4)])
    assert np.isnan(flat["pvalue"]).all()


@pytest.fixture(scope="module")
def reviewed():
    runs, qrels = random_runs(2, n_runs=4, queries=9)
    return compare(
        runs, qrels, "AP", samples=5, n_resamples=64, seed=2, tukey=True, baseline="r1",
        correction="bh", n_bootstrap=500, confidence=0.9, ci_method="percentile",
    )  # fmt: skip


def test_compare_pairs_hold_the_tests_of_their_per_query_values(reviewed):
    pairs, per_query, names = reviewed.pairs, reviewed.per_query, list(reviewed.per_query.columns)
    upper = [(a, b) for a, b in pairs.index if names.index(a) < names.index(b)]
    for column in tiecore.compare.CORRECTED:
        raw = pairs.loc[upper, column].to_numpy()
        adjusted = adjust_pvalues(raw, "bh")
        np.testing.assert_allclose(pairs.loc[upper, f"{column}_adj"], adjusted, rtol=1e-12)
        swapped = [(b, a) for a, b in upper]
        np.testing.assert_array_equal(
            pairs.loc[swapped, f"{column}_adj"].to_numpy(), pairs.loc[upper, f"{column}_adj"]
        )
    tukey_p = stats.tukey_hsd(*[per_query[r].dropna().to_numpy() for r in names]).pvalue
    for (a, b), row in pairs.iterrows():
        both = per_query[[a, b]].dropna()
        d = both[a].to_numpy() - both[b].to_numpy()
        d[np.abs(d) < 1e-12] = 0.0
        assert row["wilcoxon_pvalue"] == pytest.approx(
            sign_rank_columns(d[:, None], "wilcox")[0], rel=1e-10, nan_ok=True
        )
        topic = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else math.nan
        assert row["topic_sd"] == pytest.approx(topic, rel=1e-9, abs=1e-15, nan_ok=True)
        tie = math.sqrt(reviewed.tie_var[a] + reviewed.tie_var[b])
        assert row["tie_sd"] == pytest.approx(tie, rel=1e-12, abs=0)
        if d.std() > 1e-12:
            expected = stats.bootstrap(
                (d,), np.mean, n_resamples=500, confidence_level=0.9, method="percentile",
                rng=np.random.default_rng([2, BOOTSTRAP_KEY]),
            ).confidence_interval  # fmt: skip
            assert (row["diff_low"], row["diff_high"]) == pytest.approx(
                (expected.low, expected.high), abs=1e-12
            )
        tukey = tukey_p[names.index(a), names.index(b)]
        assert reviewed.tukey.loc[(a, b), "tukey_pvalue"] == pytest.approx(tukey, rel=1e-9)


def test_systems_put_tie_noise_beside_topic_noise(reviewed):
    systems = reviewed.systems
    for run in reviewed.per_query.columns:
        values = reviewed.per_query[run].dropna().to_numpy()
        assert systems.loc[run, "mean"] == pytest.approx(reviewed.scores.loc[run, "aware"])
        assert systems.loc[run, "n_queries"] == len(values)
        assert systems.loc[run, "topic_sd"] == pytest.approx(
            values.std(ddof=1) / math.sqrt(len(values)), rel=1e-12
        )
        # the tie sd of the mean is the per-query tie variances' sum over Q^2
        var = reviewed.per_query_var[run].dropna().to_numpy()
        assert systems.loc[run, "tie_sd"] == pytest.approx(math.sqrt(var.sum()) / len(var))
        assert systems.loc[run, "ci_low"] <= systems.loc[run, "mean"] <= systems.loc[run, "ci_high"]


def test_help_hurt_counts_and_lists_every_shared_query(reviewed):
    counts, queries = reviewed.help_hurt, reviewed.help_hurt_queries
    per_query, var = reviewed.per_query, reviewed.per_query_var
    assert "r1" not in counts.index and len(counts) == 3
    for run in counts.index:
        expected = defaultdict(int)
        close = 0
        for qid in per_query.index:
            x, y = per_query.loc[qid, run], per_query.loc[qid, "r1"]
            if np.isnan(x) or np.isnan(y):
                continue
            kind = "equal" if abs(x - y) <= 1e-12 else "help" if x > y else "hurt"
            expected[kind] += 1
            sd = math.sqrt(var.loc[qid, run] + var.loc[qid, "r1"])
            close += kind != "equal" and abs(x - y) <= 2 * sd
            row = queries[(queries["run"] == run) & (queries["qid"] == qid)]
            assert row["outcome"].tolist() == [kind]
        for kind in ("help", "hurt", "equal"):
            assert counts.loc[run, kind] == expected[kind]
        assert counts.loc[run, "n_queries"] == sum(expected.values())
        assert counts.loc[run, "within_tie_noise"] == close
        assert counts.loc[run, "mean_diff"] == reviewed.pairs.loc[(run, "r1"), "mean_diff"]


def test_with_options_recorrects_and_rebases_without_rescoring(reviewed):
    holm = reviewed.with_options(correction="holm", baseline="r0")
    assert holm.correction == "holm" and holm.baseline == "r0"
    assert "r0" not in holm.help_hurt.index and "r1" in holm.help_hurt.index
    assert holm.pairs["t_pvalue"].equals(reviewed.pairs["t_pvalue"])
    none = reviewed.with_options(correction="none", baseline="")
    assert none.help_hurt.empty and none.baseline is None
    np.testing.assert_array_equal(none.pairs["t_pvalue_adj"], none.pairs["t_pvalue"])
    significant = holm.significant(0.999)  # nearly every pair (alpha must lie in (0, 1))
    assert (significant["mean_diff"] > 0).all()
    plain = reviewed.with_options(tukey=False)
    assert plain.tukey is None
    pd.testing.assert_frame_equal(plain.with_options(tukey=True).tukey, reviewed.tukey)


def test_the_verdict_counts_the_corrected_significant_pairs(reviewed):
    pairs = reviewed.pairs
    names = list(reviewed.per_query.columns)
    upper = pairs[[names.index(a) < names.index(b) for a, b in pairs.index]]
    alpha = float(np.nanmedian(upper["t_pvalue_adj"]))
    counted = int((upper["t_pvalue_adj"] < alpha).sum())
    verdict = reviewed.verdict(alpha)
    assert f"(bh-corrected, of {len(upper)}): t {counted}," in verdict
    assert reviewed.verdict(1e-300).startswith(
        "no pair of runs differs significantly at alpha = 1e-300 "
        "(bh-corrected p-values over 6 pairs"
    )


def test_the_verdict_says_when_the_randomization_floor_hides_every_difference():
    """16 runs, each ahead of the next on all 20 queries: no sign flip is as extreme, so
    every randomization p-value is at its floor 1/(N+1), which Holm over 120 pairs lifts
    to 0.06 with N = 2000 (the verdict says why it finds none) but not with N = 5000."""
    queries, runs = 20, {}
    qrels = pd.DataFrame({"qid": [f"q{q}" for q in range(queries)], "docno": "rel", "level": 1})
    for k in range(16):
        rows = []
        for q in range(queries):
            rank = 3 * k + q % 3  # the relevant doc's rank: later for later runs, always
            docs = [f"d{i}" for i in range(rank)] + ["rel"]
            rows += [(f"q{q}", doc, float(60 - i)) for i, doc in enumerate(docs)]
        runs[f"r{k:02d}"] = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    floor = compare(runs, qrels, "RR", samples=2)
    upper = floor.pairs[floor.pairs["mean_diff"] > 0]
    assert len(upper) == 120 and (upper["randomization_pvalue"] == 1 / 2001).all()
    verdict = floor.verdict()
    assert "randomization 0" in verdict and "t 120" in verdict
    assert verdict.endswith(
        "; randomization cannot find any: with N = 2000 sign flips its p-values are at least "
        "1/(N+1) = 0.0005, and the 120 pairs at that floor stay at or above alpha once "
        "holm-corrected: raise the resamples (--resamples)"
    )
    assert (
        floor.with_options(correction="none").verdict().endswith("randomization 120, wilcoxon 120")
    )
    finer = compare(runs, qrels, "RR", samples=2, n_resamples=5000)
    assert finer.verdict().endswith("randomization 120, wilcoxon 120")


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"correction": "hochberg"}, "correction: unknown correction 'hochberg' (expected one of"),
        ({"baseline": "nope"}, "baseline: 'nope' is not one of the runs (expected one of r0, r1"),
        ({"ci_method": "bca"}, "ci_method: unknown ci_method 'bca'"),
        ({"zero_method": "drop"}, "zero_method: unknown zero_method 'drop'"),
        ({"confidence": 1.5}, "confidence: 1.5 is not a level (expected a number in (0, 1))"),
    ],
)
def test_bad_options_are_one_line_input_errors(option, message):
    runs, qrels = random_runs(0, n_runs=2, queries=3)
    with pytest.raises(tiecore.InputError) as error:
        compare(runs, qrels, "AP", samples=2, **option)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)

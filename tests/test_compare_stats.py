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
from tiecore.compare import RTOL, SMALLEST_P, compare, paired_tests

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

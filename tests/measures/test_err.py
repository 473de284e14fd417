"""ERR@k (tiecore.measures.err) against brute force over all orderings, fractions and gdeval."""

from __future__ import annotations

import math
import re
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_data import ROBUST_QRELS, plain_copy, robust_run
from strategies import cases

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.measures.err import (
    err_aware,
    err_bounds,
    err_oblivious,
    err_sample,
    err_variance,
    subset_product_means,
)

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


#: ERR@k of one label sequence, straight from the definition (tests/reference.py's).
reference_err = ref.expected_reciprocal_rank


def per_query(case, function, *, tiebreak="file_order", **options) -> dict[str, float]:
    judgments = Judgments.from_qrels(case.qrels_frame())
    ranking = Ranking.build(case.run_frame(), judgments, tiebreak=tiebreak)
    values = function(ranking, judgments, **options)
    return {qid: v for qid, v, c in zip(judgments.qids, values, ranking.counts, strict=True) if c}


def cut(k, depth):
    return min(x for x in (k, depth, 10**9) if x is not None)


options = st.fixed_dictionaries(
    {
        "cutoff": st.one_of(st.none(), st.integers(1, 8)),
        "depth": st.one_of(st.none(), st.integers(1, 6)),
        "max_grade": st.sampled_from([3, 4, 6]),
    }
)


@settings(PROPERTY)
@given(cases(), options)
def test_aware_is_the_mean_over_all_orderings(case, opts):
    found = per_query(case, err_aware, **opts)
    for qid in case.both_qids:
        q = case.queries[qid]
        sequences = ref.label_sequences(q.scores, q.labels)
        total = sum(sequences.values())
        k = cut(opts["cutoff"], opts["depth"])
        expected = math.fsum(
            count * reference_err(seq, k, opts["max_grade"]) for seq, count in sequences.items()
        )
        assert found[qid] == pytest.approx(expected / total, abs=1e-12)


@settings(PROPERTY)
@given(cases(), options, st.sampled_from(ref.DETERMINISTIC_POLICIES))
def test_oblivious_is_the_policys_order(case, opts, policy):
    found = per_query(case, err_oblivious, tiebreak=policy, **opts)
    for qid in case.both_qids:
        q = case.queries[qid]
        order = ref.order_indices(q.scores, q.docnos, q.labels, policy)
        labels = [q.labels[i] for i in order]
        k = cut(opts["cutoff"], opts["depth"])
        assert found[qid] == pytest.approx(reference_err(labels, k, opts["max_grade"]), abs=1e-15)


@settings(PROPERTY)
@given(cases(max_docs=9, max_label_kinds=4), options)
def test_variance_is_the_variance_over_all_orderings(case, opts):
    found = per_query(case, err_variance, **opts)
    k = cut(opts["cutoff"], opts["depth"])
    for qid in case.both_qids:
        q = case.queries[qid]
        sequences = ref.label_sequences(q.scores, q.labels)
        total = sum(sequences.values())
        values = {s: reference_err(s, k, opts["max_grade"]) for s in sequences}
        mean = math.fsum(c * values[s] for s, c in sequences.items()) / total
        variance = math.fsum(c * (values[s] - mean) ** 2 for s, c in sequences.items()) / total
        assert found[qid] == pytest.approx(variance, abs=1e-12)


def test_variance_refuses_groups_beyond_its_budget():
    docnos = [f"d{i}" for i in range(400)]
    run = pd.DataFrame({"qid": "1", "docno": docnos, "score": 1.0})
    qrels = pd.DataFrame({"qid": "1", "docno": docnos[:100], "level": 2})
    judgments = Judgments.from_qrels(qrels)
    with pytest.raises(InputError, match="tie group of 400 docs, 100 of them with a stop"):
        err_variance(Ranking.build(run, judgments), judgments)


@settings(PROPERTY, max_examples=60)
@given(cases(), options)
def test_bounds_are_the_min_and_max_over_all_orderings(case, opts):
    judgments = Judgments.from_qrels(case.qrels_frame())
    ranking = Ranking.build(case.run_frame(), judgments, tiebreak="file_order")
    low, high = err_bounds(ranking, judgments, **opts)
    k = cut(opts["cutoff"], opts["depth"])
    for qid in case.both_qids:
        q = case.queries[qid]
        values = [
            reference_err(s, k, opts["max_grade"]) for s in ref.label_sequences(q.scores, q.labels)
        ]
        at = list(judgments.qids).index(qid)
        assert low[at] == pytest.approx(min(values), abs=1e-15)
        assert high[at] == pytest.approx(max(values), abs=1e-15)


def exact_subset_means(xs: list[Fraction], top: int) -> list[Fraction]:
    """Mean product over j-subsets by adding one doc at a time (a different recurrence):
    a random j-subset of N + 1 docs holds the new doc with probability j / (N + 1)."""
    means = [Fraction(1)]
    for size, x in enumerate(xs, start=1):
        grown = [Fraction(1)]
        for j in range(1, min(size, top) + 1):
            old = means[j] if j < len(means) else Fraction(0)
            grown.append((1 - Fraction(j, size)) * old + Fraction(j, size) * x * means[j - 1])
        means = grown
    return means


@pytest.mark.parametrize("size, top", [(60, 60), (300, 25), (1000, 12)])
def test_subset_means_of_a_large_group_equal_exact_fractions(size, top):
    """Against exact rationals; 1e-12 relative up to 300 docs, 3e-12 at 1000."""
    rng = np.random.default_rng(size)
    grades = rng.choice(5, size=size, p=[0.7, 0.15, 0.08, 0.05, 0.02])
    xs = [1 - Fraction(2 ** int(g) - 1, 16) for g in grades]
    expected = exact_subset_means(xs, top)
    values = np.array([1.0 - (2.0**g - 1) / 16 for g in range(5)])
    counts = np.bincount(grades, minlength=5)[None, :]
    found = subset_product_means(np.array([size]), np.array([top]), counts, values)
    relative = [abs(f - float(e)) / float(e) for f, e in zip(found, expected, strict=True)]
    # the hypergeometric weights come from log-gamma: relative error ~ eps * log(size!)
    assert max(relative) < 1e-12 * max(1.0, size / 300)


def test_a_large_tied_group_equals_the_exact_expectation():
    """200 docs tied after 3 untied ones, ERR@40: against exact rational arithmetic."""
    rng = np.random.default_rng(7)
    grades = rng.choice(4, size=203, p=[0.6, 0.25, 0.1, 0.05])
    docnos = [f"d{i}" for i in range(203)]
    run = pd.DataFrame({"qid": "1", "docno": docnos, "score": [5.0, 4.0, 3.0] + [1.0] * 200})
    qrels = pd.DataFrame({"qid": "1", "docno": docnos, "level": grades})
    judgments = Judgments.from_qrels(qrels)
    found = err_aware(Ranking.build(run, judgments, tiebreak="file_order"), judgments, 40)
    stop = [Fraction(2 ** int(g) - 1, 16) for g in grades]
    head, decay = Fraction(0), Fraction(1)
    for j in range(3):
        head += stop[j] * decay / (j + 1)
        decay *= 1 - stop[j]
    means = exact_subset_means([1 - s for s in stop[3:]], 41)
    tied = sum((means[p] - means[p + 1]) / (3 + p + 1) for p in range(37))
    assert found[0] == pytest.approx(float(head + decay * tied), rel=1e-12)


def test_a_level_above_the_largest_grade_is_an_input_error():
    qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": [5]})
    run = pd.DataFrame({"qid": "1", "docno": ["a"], "score": [1.0]})
    judgments = Judgments.from_qrels(qrels)
    with pytest.raises(InputError, match="level 5 is above ERR's largest grade 4"):
        err_aware(Ranking.build(run, judgments), judgments, 10)


def run_gdeval(qrels: Path, run: Path, k: int, tmp: Path) -> dict[str, float]:
    """ir_measures' gdeval.pl with its output printed at full precision (%.17g)."""
    import ir_measures

    source = (Path(ir_measures.__file__).parent / "bin" / "gdeval.pl").read_text()
    script = tmp / "gdeval_full.pl"
    script.write_text(
        source.replace(
            '"$runid,$topicCurrent,%.5f,%.5f\\n"', '"$runid,$topicCurrent,%.17g,%.17g\\n"'
        )
    )
    out = subprocess.run(
        ["perl", str(script), str(qrels), str(run), str(k)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split(",") for line in out.strip().splitlines()[1:]]
    assert rows and all(re.fullmatch(r"[-0-9.e]+", row[3]) for row in rows)
    return {row[1]: float(row[3]) for row in rows}


@pytest.mark.parametrize("name, k", [("input.MU03rob01.gz", 20), ("input.aplrob03a.gz", 1000)])
def test_oblivious_equals_gdeval_on_robust03(tmp_path, name, k):
    import tiecore

    run_path = plain_copy(robust_run(name), tmp_path)  # gdeval reads plain text
    expected = run_gdeval(ROBUST_QRELS, run_path, k, tmp_path)
    judgments = Judgments.from_qrels(tiecore.read_qrels(ROBUST_QRELS))
    ranking = Ranking.build(tiecore.read_run(run_path), judgments, tiebreak="trec_eval_double")
    found = dict(zip(judgments.qids, err_oblivious(ranking, judgments, k), strict=True))
    assert set(expected) <= set(found)
    for qid, value in expected.items():
        assert found[qid] == pytest.approx(value, rel=1e-15, abs=1e-300)


@settings(PROPERTY, max_examples=40, derandomize=True)
@given(cases(max_queries=3), options)
def test_sampled_orders_are_orderings_and_average_to_the_aware_value(case, opts):
    judgments = Judgments.from_qrels(case.qrels_frame())
    ranking = Ranking.build(case.run_frame(), judgments, tiebreak="file_order")
    draws = err_sample(ranking, judgments, samples=400, rng=3, **opts)
    aware = err_aware(ranking, judgments, **opts)
    k = cut(opts["cutoff"], opts["depth"])
    for qid in case.both_qids:
        q = case.queries[qid]
        at = list(judgments.qids).index(qid)
        possible = {
            reference_err(s, k, opts["max_grade"]) for s in ref.label_sequences(q.scores, q.labels)
        }
        column = draws[:, at]
        assert all(min(abs(v - p) for p in possible) < 1e-12 for v in set(column.tolist()))
        stderr = column.std(ddof=1) / np.sqrt(column.size)
        assert abs(column.mean() - aware[at]) <= 5 * stderr + 1e-12


def test_evaluate_and_evaluate_spread_give_the_module_values():
    """ERR through tiecore.evaluate / evaluate_spread (the registry family) in every mode."""
    import tiecore

    qrels = tiecore.read_qrels(ROBUST_QRELS)
    run = tiecore.read_run(robust_run("input.MU03rob01.gz"))
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    present = ranking.counts > 0
    for ties, expected in (
        ("aware", err_aware(ranking, judgments, 20)),
        ("oblivious", err_oblivious(ranking.retie("trec_eval_double"), judgments, 20)),
    ):
        frame = tiecore.evaluate(
            run, qrels, "ERR@20", ties=ties, tiebreak="trec_eval_double", per_query=True
        )
        values = frame["value"].to_numpy()
        np.testing.assert_array_equal(values[:-1], expected[present])
        assert values[-1] == pytest.approx(expected[present].mean(), rel=1e-14)
    spread = tiecore.evaluate_spread(run, qrels, "err@20", per_query=True)
    low, high = err_bounds(ranking, judgments, 20)
    value = spread["value"].to_numpy()[:-1]
    variance = err_variance(ranking, judgments, 20)[present]
    shown = list(map(ref.consistent_spread, value, variance, low[present], high[present]))
    # where the bounds meet, the module's variance is cancellation's (up to 1e-17 here)
    assert any(v > 0 and s[0] == 0 for v, s in zip(variance, shown, strict=True))
    for column, wanted in zip(("var", "min", "max"), zip(*shown, strict=True), strict=True):
        assert spread[column].to_numpy()[:-1].tolist() == list(wanted), column
    sampled = tiecore.evaluate(run, qrels, "ERR(max_rel=5)@20", ties="sampled", samples=200)
    exact = err_aware(ranking, judgments, 20, max_grade=5)[present].mean()
    assert abs(sampled["value"].iloc[0] - exact) <= 5 * sampled["stderr"].iloc[0] + 1e-12

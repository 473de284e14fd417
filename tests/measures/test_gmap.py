"""gm_map (tiecore.measures.gmap) against pytrec_eval and brute force over all orderings."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import pytrec_eval
import reference as ref
from hypothesis import HealthCheck, given, settings
from shared_data import ROBUST_QRELS, plain_copy, pytrec_values, robust_run
from strategies import cases

import tiecore
from tiecore.measures.gmap import MIN_GEO_MEAN, geometric_mean, gmap, log_floor

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def per_query_ap(run, qrels, ties, tiebreak="trec_eval") -> dict[str, float]:
    frame = tiecore.evaluate(run, qrels, "AP", ties=ties, tiebreak=tiebreak, per_query=True)
    frame = frame[frame["qid"].notna()]
    return dict(zip(frame["qid"], frame["value"], strict=True))


@pytest.mark.parametrize(
    "name", ["input.MU03rob01.gz", "input.rutcor03100.gz", "input.aplrob03a.gz"]
)
def test_oblivious_equals_pytrec_eval_on_robust03(tmp_path, name):
    qrels = tiecore.read_qrels(ROBUST_QRELS)
    run = tiecore.read_run(plain_copy(robust_run(name), tmp_path))
    expected = pytrec_values(run, qrels, {"gm_map"})
    ap = per_query_ap(run, qrels, "oblivious")
    assert set(ap) == set(expected)
    logs = {qid: float(log_floor(np.array([v]))[0]) for qid, v in ap.items()}
    for qid, value in expected.items():
        # tiecore's AP equals trec_eval's to the last bits (not bit for bit: another summation)
        assert logs[qid] == pytest.approx(value["gm_map"], rel=1e-14, abs=1e-15)
    summary = pytrec_eval.compute_aggregated_measure(
        "gm_map", [v["gm_map"] for v in expected.values()]
    )
    qids = sorted(logs)
    assert float(geometric_mean(np.array([logs[q] for q in qids]))) == pytest.approx(
        summary, rel=1e-14
    )


def test_the_epsilon_is_trec_evals():
    assert MIN_GEO_MEAN == 0.00001
    # pytrec_eval's per-query gm_map of a query whose AP is 0
    evaluator = pytrec_eval.RelevanceEvaluator({"1": {"a": 1}}, {"gm_map"})
    assert evaluator.evaluate({"1": {"b": 1.0}})["1"]["gm_map"] == math.log(MIN_GEO_MEAN)


@settings(PROPERTY)
@given(cases(max_queries=3, max_docs=6))
def test_bounds_against_every_ordering_and_no_aware_value(case):
    """min and max of gm_map over orderings = the GM of the per-query pessimistic and
    optimistic APs = brute force; a tie-aware gm_map is refused (it would not be the mean)."""
    qrels, run = case.qrels_frame(), case.run_frame()
    qids = sorted(case.both_qids)
    per_query_values = []
    for qid in qids:
        q = case.queries[qid]
        sequences = ref.label_sequences(q.scores, q.labels)
        spec = ref.Spec("AP")
        per_query_values.append([ref.measure(spec, s, q.levels, rel_level=1) for s in sequences])
    gmaps = [float(gmap(np.array(combo))) for combo in itertools.product(*per_query_values)]
    pessimistic = per_query_ap(run, qrels, "oblivious", tiebreak="pessimistic")
    optimistic = per_query_ap(run, qrels, "oblivious", tiebreak="optimistic")
    low = float(gmap(np.array([pessimistic[q] for q in qids])))
    high = float(gmap(np.array([optimistic[q] for q in qids])))
    assert low == pytest.approx(min(gmaps), rel=1e-12)
    assert high == pytest.approx(max(gmaps), rel=1e-12)
    with pytest.raises(tiecore.InputError, match="no exact value under ties='aware'"):
        tiecore.evaluate(run, qrels, "GMAP", ties="aware")


def test_evaluate_gm_map_summary_in_every_mode(tmp_path):
    """gm_map through tiecore.evaluate: per query AP, summary trec_eval's GMAP (pytrec_eval's
    aggregate); refused where the value would be a tie-aware mean (aware, spread, compare)."""
    qrels = tiecore.read_qrels(ROBUST_QRELS)
    run = tiecore.read_run(plain_copy(robust_run("input.MU03rob01.gz"), tmp_path))
    logs = pytrec_values(run, qrels, {"gm_map"})
    expected = pytrec_eval.compute_aggregated_measure(
        "gm_map", [v["gm_map"] for v in logs.values()]
    )
    frame = tiecore.evaluate(run, qrels, "gm_map", ties="oblivious", per_query=True)
    assert frame["measure"].iloc[0] == "GMAP"
    assert frame["value"].iloc[-1] == pytest.approx(expected, rel=1e-13)
    ap = per_query_ap(run, qrels, "oblivious")
    assert frame["value"].iloc[:-1].tolist() == [ap[q] for q in frame["qid"].iloc[:-1]]
    for refused in (
        lambda: tiecore.evaluate(run, qrels, "GMAP", ties="aware"),
        lambda: tiecore.evaluate_spread(run, qrels, "gm_map"),
        lambda: tiecore.compare.compare({"a": run, "b": run}, qrels, "GMAP"),
    ):
        with pytest.raises(tiecore.InputError, match="GMAP has no exact value"):
            refused()


@settings(PROPERTY, max_examples=25, derandomize=True)
@given(cases(max_queries=3, max_docs=6))
def test_sampled_gm_map_estimates_the_mean_over_orderings(case):
    qids = sorted(case.both_qids)
    per_query_values = []
    for qid in qids:
        q = case.queries[qid]
        sequences = ref.label_sequences(q.scores, q.labels)
        total = sum(sequences.values())
        per_query_values.append(
            [(ref.measure(ref.Spec("AP"), s, q.levels), c / total) for s, c in sequences.items()]
        )
    mean_gmap = sum(
        math.prod(p for _, p in combo) * float(gmap(np.array([v for v, _ in combo])))
        for combo in itertools.product(*per_query_values)
    )
    frame = tiecore.evaluate(
        case.run_frame(), case.qrels_frame(), "gm_map", ties="sampled", samples=500
    )
    assert abs(frame["value"].iloc[0] - mean_gmap) <= 5 * frame["stderr"].iloc[0] + 1e-12

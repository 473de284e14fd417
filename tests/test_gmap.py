"""gm_map (tiecore.geomean) against pytrec_eval and brute force over all orderings."""

from __future__ import annotations

import gzip
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
import reference as ref
from hypothesis import HealthCheck, given, settings
from strategies import cases

import tiecore
from tiecore.geomean import MIN_GEO_MEAN, geometric_mean, gmap, log_floor

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def per_query_ap(run, qrels, ties, tiebreak="trec_eval") -> dict[str, float]:
    frame = tiecore.evaluate(run, qrels, "AP", ties=ties, tiebreak=tiebreak, per_query=True)
    frame = frame[frame["qid"].notna()]
    return dict(zip(frame["qid"], frame["value"], strict=True))


@pytest.mark.parametrize(
    "name", ["input.MU03rob01.gz", "input.rutcor03100.gz", "input.aplrob03a.gz"]
)
def test_oblivious_equals_pytrec_eval_on_robust03(tmp_path, name):
    qrels = tiecore.read_qrels(DATA / "robust03" / "qrels.txt")
    path = tmp_path / "run.txt"
    path.write_bytes(gzip.decompress((DATA / "robust03" / "runs" / name).read_bytes()))
    run = tiecore.read_run(path)
    qrel_dict: dict = {}
    for q, d, lv in zip(qrels["qid"], qrels["docno"], qrels["level"], strict=True):
        qrel_dict.setdefault(q, {})[d] = int(lv)
    run_dict: dict = {}
    for q, d, s in zip(run["qid"], run["docno"], run["score"], strict=True):
        run_dict.setdefault(q, {})[d] = float(s)
    expected = pytrec_eval.RelevanceEvaluator(qrel_dict, {"gm_map"}).evaluate(run_dict)
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
def test_aware_bounds_and_jensen_against_every_ordering(case):
    """Aware gm_map = GM of the exact mean APs; >= the mean GMAP over all orderings of all
    queries; min and max = the GM of per-query pessimistic and optimistic APs = brute force."""
    qrels, run = case.qrels_frame(), case.run_frame()
    qids = sorted(case.both_qids)
    per_query_values = []
    for qid in qids:
        q = case.queries[qid]
        sequences = ref.label_sequences(q.scores, q.labels)
        spec = ref.Spec("AP")
        values = {seq: ref.measure(spec, seq, q.levels, rel_level=1) for seq in sequences}
        total = sum(sequences.values())
        per_query_values.append([(values[s], c / total) for s, c in sequences.items()])
    mean_gmap = 0.0
    for combo in itertools.product(*per_query_values):
        weight = math.prod(p for _, p in combo)
        mean_gmap += weight * float(gmap(np.array([v for v, _ in combo])))
    all_values = [[v for v, _ in query] for query in per_query_values]
    low = float(gmap(np.array([min(v) for v in all_values])))
    high = float(gmap(np.array([max(v) for v in all_values])))
    mean_ap = np.array([math.fsum(v * p for v, p in query) for query in per_query_values])

    aware = per_query_ap(run, qrels, "aware")
    found = float(gmap(np.array([aware[q] for q in qids])))
    assert found == pytest.approx(float(gmap(mean_ap)), rel=1e-12)
    assert found >= mean_gmap * (1 - 1e-12)
    pessimistic = per_query_ap(run, qrels, "oblivious", tiebreak="pessimistic")
    optimistic = per_query_ap(run, qrels, "oblivious", tiebreak="optimistic")
    assert float(gmap(np.array([pessimistic[q] for q in qids]))) == pytest.approx(low, rel=1e-12)
    assert float(gmap(np.array([optimistic[q] for q in qids]))) == pytest.approx(high, rel=1e-12)
    assert low * (1 - 1e-12) <= mean_gmap <= high * (1 + 1e-12)


def test_evaluate_gm_map_summary_in_every_mode(tmp_path):
    """gm_map through tiecore.evaluate: per query AP, summary trec_eval's GMAP (pytrec_eval's
    aggregate); aware = GM of the aware APs; evaluate_spread's min/max = GM of the bounds."""
    qrels = tiecore.read_qrels(DATA / "robust03" / "qrels.txt")
    path = tmp_path / "run.txt"
    path.write_bytes(gzip.decompress((DATA / "robust03/runs/input.MU03rob01.gz").read_bytes()))
    run = tiecore.read_run(path)
    qrel_dict: dict = {}
    for q, d, lv in zip(qrels["qid"], qrels["docno"], qrels["level"], strict=True):
        qrel_dict.setdefault(q, {})[d] = int(lv)
    run_dict: dict = {}
    for q, d, s in zip(run["qid"], run["docno"], run["score"], strict=True):
        run_dict.setdefault(q, {})[d] = float(s)
    logs = pytrec_eval.RelevanceEvaluator(qrel_dict, {"gm_map"}).evaluate(run_dict)
    expected = pytrec_eval.compute_aggregated_measure(
        "gm_map", [v["gm_map"] for v in logs.values()]
    )
    frame = tiecore.evaluate(run, qrels, "gm_map", ties="oblivious", per_query=True)
    assert frame["measure"].iloc[0] == "GMAP"
    assert frame["value"].iloc[-1] == pytest.approx(expected, rel=1e-13)
    ap = per_query_ap(run, qrels, "oblivious")
    assert frame["value"].iloc[:-1].tolist() == [ap[q] for q in frame["qid"].iloc[:-1]]
    aware = tiecore.evaluate(run, qrels, "GMAP", ties="aware")["value"].iloc[0]
    aware_ap = per_query_ap(run, qrels, "aware")
    assert aware == pytest.approx(float(gmap(np.array(list(aware_ap.values())))), rel=1e-14)
    spread = tiecore.evaluate_spread(run, qrels, "GMAP")
    low = per_query_ap(run, qrels, "oblivious", tiebreak="pessimistic")
    high = per_query_ap(run, qrels, "oblivious", tiebreak="optimistic")
    assert spread["min"].iloc[0] == pytest.approx(float(gmap(np.array(list(low.values())))))
    assert spread["max"].iloc[0] == pytest.approx(float(gmap(np.array(list(high.values())))))
    assert math.isnan(spread["var"].iloc[0])


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

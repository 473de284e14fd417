"""gm_bpref (tiecore.measures.gmbpref) against pytrec_eval and brute force over all orderings."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import pytrec_eval
import reference as ref
from hypothesis import HealthCheck, given, settings
from shared_data import ROBUST_QRELS, plain_copy, pytrec_values, robust_run
from strategies import cases

import tiecore
from tiecore.measures.gmap import geometric_mean, log_floor

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")


def per_query(run, qrels, ties, tiebreak="trec_eval") -> dict[str, float]:
    frame = tiecore.evaluate(run, qrels, "GMBpref", ties=ties, tiebreak=tiebreak, per_query=True)
    return dict(zip(frame["qid"], frame["value"], strict=True))  # the summary's qid: NaN


@pytest.mark.parametrize("name", ["input.MU03rob01.gz", "input.rutcor03100.gz"])
def test_oblivious_equals_pytrec_eval_on_robust03(tmp_path, name):
    """Per query bpref, whose floored log is pytrec_eval's per-query gm_bpref; the summary
    is pytrec_eval's aggregate (exp of the mean log)."""
    qrels = tiecore.read_qrels(ROBUST_QRELS)
    run = tiecore.read_run(plain_copy(robust_run(name), tmp_path))
    expected = pytrec_values(run, qrels, {"gm_bpref"})
    found = per_query(run, qrels, "oblivious")
    summary = found.pop(next(q for q in found if not isinstance(q, str)))
    assert set(found) == set(expected)
    for qid, value in expected.items():  # bpref to the last bits (another summation)
        mine = float(log_floor(np.array([found[qid]]))[0])
        assert mine == pytest.approx(value["gm_bpref"], rel=1e-14, abs=1e-15)
    real = pytrec_eval.compute_aggregated_measure(
        "gm_bpref", [v["gm_bpref"] for v in expected.values()]
    )
    assert summary == pytest.approx(real, rel=1e-13)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(max_queries=3, max_docs=6))
def test_bounds_against_every_ordering_and_no_aware_value(case):
    """min and max of gm_bpref over orderings = the geometric means of the per-query
    pessimistic and optimistic bprefs = brute force; a tie-aware value is refused."""
    qrels, run = case.qrels_frame(), case.run_frame()
    qids = sorted(case.both_qids)
    values = []
    for qid in qids:
        q = case.queries[qid]
        orders = ref.label_sequences(q.scores, q.labels)
        values.append([ref.measure(ref.Spec("Bpref"), s, q.levels, rel_level=1) for s in orders])
    every = [float(geometric_mean(log_floor(np.array(c)))) for c in itertools.product(*values)]
    low = per_query(run, qrels, "oblivious", tiebreak="pessimistic")
    high = per_query(run, qrels, "oblivious", tiebreak="optimistic")
    summary = next(q for q in low if not isinstance(q, str))
    assert low[summary] == pytest.approx(min(every), rel=1e-12)
    assert high[summary] == pytest.approx(max(every), rel=1e-12)
    with pytest.raises(tiecore.InputError, match="GMBpref has no exact value under ties='aware'"):
        tiecore.evaluate(run, qrels, "gm_bpref", ties="aware")

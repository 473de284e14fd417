"""tiecore's ir_measures provider, against ir_measures' pytrec_eval provider and tiecore.

* oblivious: the values, per query and aggregated, of ir_measures' ``pytrec_eval``
  provider on trec_eval's test files and tie-heavy Robust03 runs;
* aware and sampled: the values of :func:`tiecore.evaluate` (aggregates with
  ``complete=True``, ir_measures' convention of averaging over every qrels query);
* measures tiecore lacks are not supported, and ``evaluator`` names them.
"""

from __future__ import annotations

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, RR, Bpref, P, R, Rprec, SetAP, Success, infAP, nDCG
from shared_data import ROBUST_QRELS, TREC_EVAL, robust_run

import tiecore
from tiecore.ir_measures_provider import (
    TiecoreProvider,
    as_default,
    tiecore_aware,
    tiecore_oblivious,
    tiecore_sampled,
)

PYTREC = [P @ 5, P @ 10, R @ 100, AP, AP @ 10, RR, nDCG, nDCG @ 10, Rprec, Success @ 5, Bpref]
PYTREC += [infAP, P(rel=2) @ 10, AP(rel=2)]
CASES = [
    (TREC_EVAL / "qrels.test", TREC_EVAL / "results.test"),
    (TREC_EVAL / "qrels.rel_level", TREC_EVAL / "results.test"),
    (ROBUST_QRELS, robust_run("input.rutcor03100.gz")),  # tie-heavy
    (ROBUST_QRELS, robust_run("input.MU03rob01.gz")),
]


def ir_inputs(qrels, run):
    return list(ir_measures.read_trec_qrels(str(qrels))), list(ir_measures.read_trec_run(str(run)))


def per_query(metrics) -> dict:
    return {(m.measure, m.query_id): m.value for m in metrics}


def test_registered_with_ir_measures():
    registry = ir_measures.providers.registry
    assert registry["tiecore"] is tiecore_aware and tiecore_aware.ties == "aware"
    assert registry["tiecore_oblivious"] is tiecore_oblivious
    assert registry["tiecore_sampled"].ties == "sampled" == tiecore_sampled.ties


@pytest.mark.parametrize(("qrels", "run"), CASES)
def test_oblivious_equals_pytrec_eval(qrels, run):
    qrels, run = ir_inputs(qrels, run)
    theirs = ir_measures.pytrec_eval.evaluator(PYTREC, qrels)
    ours = tiecore_oblivious.evaluator(PYTREC, qrels)
    expected, found = per_query(theirs.iter_calc(run)), per_query(ours.iter_calc(run))
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        assert found[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    aggregate = ours.calc_aggregate(run)
    for measure, value in theirs.calc_aggregate(run).items():
        assert aggregate[measure] == pytest.approx(value, rel=1e-12, abs=1e-15), measure


@pytest.mark.parametrize(("qrels", "run"), CASES[1:3])
def test_aware_and_sampled_equal_evaluate(qrels, run):
    measures = [P @ 10, AP, nDCG @ 10, RR, P(rel=2) @ 5]
    # named "run", as the provider names the run it is given (sampled draws depend on it)
    frames = {"run": tiecore.read_run(run)}, tiecore.read_qrels(qrels)
    qrels, run = ir_inputs(qrels, run)
    for provider, options in [
        (tiecore_aware, {"ties": "aware"}),
        (TiecoreProvider("sampled", samples=50, seed=3), {"ties": "sampled", "samples": 50}),
    ]:
        found = provider.calc(measures, qrels, run)
        per = per_query(found.per_query)
        for measure in measures:
            rel = 2 if "(rel=2)" in str(measure) else 1
            name = str(measure).replace("(rel=2)", "")
            options["seed"] = 3
            expected = tiecore.evaluate(*frames, name, rel_level=rel, per_query=True, **options)
            rows = expected[expected["qid"].notna()]
            for qid, value in zip(rows["qid"], rows["value"], strict=True):
                assert per[(measure, qid)] == value, (measure, qid)
            # the run's queries as evaluate averages them; all the qrels' with complete=True
            whole = tiecore.evaluate(*frames, name, rel_level=rel, complete=True, **options)
            assert found.aggregated[measure] == pytest.approx(whole["value"].iloc[0], rel=1e-12)


def test_aware_differs_from_oblivious_under_ties():
    qrels = [ir_measures.Qrel("1", "c", 1)]
    run = [ir_measures.ScoredDoc("1", d, s) for d, s in [("a", 2.0), ("b", 1.0), ("c", 1.0)]]
    assert tiecore_aware.calc_aggregate([RR], qrels, run) == {RR: pytest.approx(5 / 12)}
    assert tiecore_oblivious.calc_aggregate([RR], qrels, run) == {
        RR: 0.5
    }  # b before c (docno descending? no: c)
    assert ir_measures.pytrec_eval.calc_aggregate([RR], qrels, run) == {RR: 0.5}


def test_inputs_in_ir_measures_formats():
    qrels = {"1": {"c": 1, "d": 2}, "2": {"x": 1}}
    run = {"1": {"a": 2.0, "c": 1.0, "d": 1.0}, "3": {"x": 1.0}}
    frame = pd.DataFrame(
        {"query_id": ["1"] * 3 + ["3"], "doc_id": list("acdx"), "score": [2.0, 1, 1, 1]}
    )
    expected = tiecore_aware.calc_aggregate([AP, P @ 2], qrels, run)
    assert tiecore_aware.calc_aggregate([AP, P @ 2], qrels, frame) == expected
    # query 2 has no ranking: 0, as in every ir_measures provider; query 3 is unjudged
    assert expected[P @ 2] == pytest.approx((0.5 + 0.0) / 2)


def test_unsupported_measures_said_the_ir_measures_way():
    for measure in [
        SetAP,  # (tiecore has SetP, SetR, SetF and the counts, not SetAP nor NumQ)
        ir_measures.NumQ,
        nDCG(gains={0: 0, 1: 1, 2: 3}),
        P(judged_only=True) @ 5,
    ]:
        assert not tiecore_aware.supports(measure)
    assert tiecore_oblivious.supports(ir_measures.parse_measure("P(rel=2)@5"))
    with pytest.raises(ValueError, match=r"Unsupported measures \{SetAP\}"):
        tiecore_aware.evaluator([P @ 5, SetAP], [ir_measures.Qrel("1", "c", 1)])
    with pytest.raises(tiecore.InputError, match="unknown tie mode"):
        TiecoreProvider("optimistic")


def test_as_default_is_what_pyterrier_calls():
    """pt.Experiment computes its eval_metrics with ir_measures.iter_calc (PyTerrier 1.1's
    pyterrier/_evaluation/_execution.py): within as_default that call gives tiecore's
    values, and measures tiecore lacks still come from ir_measures' own providers."""
    qrels, run = ir_inputs(*CASES[2])
    measures = [nDCG @ 10, AP, SetAP]
    plain = per_query(ir_measures.iter_calc(measures, qrels, run))
    with as_default() as provider:
        assert provider is tiecore_aware
        found = per_query(ir_measures.iter_calc(measures, qrels, run))
    aware = per_query(tiecore_aware.iter_calc([nDCG @ 10, AP], qrels, run))
    assert {k: v for k, v in found.items() if k[0] != SetAP} == aware
    assert {k: v for k, v in found.items() if k[0] == SetAP} == {
        k: v for k, v in plain.items() if k[0] == SetAP
    }
    assert any(aware[k] != plain[k] for k in aware)  # the ties matter on this run
    assert tiecore_aware not in ir_measures.DefaultPipeline.providers  # restored
    with as_default("oblivious"):
        again = per_query(ir_measures.iter_calc([nDCG @ 10, AP], qrels, run))
    assert again == pytest.approx({k: v for k, v in plain.items() if k[0] != SetAP}, rel=1e-12)

"""tiecore's ir_measures provider, against ir_measures' pytrec_eval provider and tiecore.

* oblivious: the values, per query and aggregated, of ir_measures' ``pytrec_eval``
  provider on trec_eval's test files and tie-heavy Robust03 runs;
* aware and sampled: the values of :func:`tiecore.evaluate` (aggregates with
  ``complete=True``, ir_measures' convention of averaging over every qrels query);
* measures tiecore lacks are not supported, and ``evaluator`` names them (those it has
  since, SetAP, NumQ, SetF's beta, SetRelP, judged_only and nDCG's gains, are checked
  against ir_measures' own tests in tests/test_ir_measures_own_suite.py);
* empty runs and qrels give what the pytrec_eval provider gives;
* ``as_default`` says (or, strict, refuses) measures other providers compute, and keeps
  the user's order of measures whatever the hash seed;
* bad settings are one-line ``InputError`` s naming the setting.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import (
    AP,
    RR,
    Bpref,
    Compat,
    NumQ,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    Success,
    infAP,
    nDCG,
)
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


#: Measures tiecore lacks that another installed provider computes (ir_measures' compat).
COMPAT, COMPAT_HALF = Compat(p=0.8), Compat(p=0.5)


def test_unsupported_measures_said_the_ir_measures_way():
    for measure in [COMPAT, nDCG(gains={0: 0, 1: 2.5})]:  # (pytrec_eval takes integer levels)
        assert not tiecore_aware.supports(measure)
    for measure in [SetAP, NumQ, SetF(beta=2.0), SetP(relative=True), nDCG(gains={0: 0, 2: 3})]:
        assert tiecore_aware.supports(measure) and tiecore_oblivious.supports(measure)
    assert tiecore_oblivious.supports(ir_measures.parse_measure("P(rel=2)@5"))
    assert tiecore_aware.supports(P(judged_only=True) @ 5)
    with pytest.raises(ValueError, match=r"Unsupported measures \{Compat\(p=0.8\)\}"):
        tiecore_aware.evaluator([P @ 5, COMPAT], [ir_measures.Qrel("1", "c", 1)])
    with pytest.raises(
        ValueError, match=r"Unsupported measures \{Compat\(p=0.5\), Compat\(p=0.8\)\}"
    ):
        tiecore_aware.evaluator([COMPAT_HALF, P @ 5, COMPAT], [ir_measures.Qrel("1", "c", 1)])


def test_as_default_is_what_pyterrier_calls():
    """pt.Experiment computes its eval_metrics with ir_measures.iter_calc (PyTerrier 1.1's
    pyterrier/_evaluation/_execution.py): within as_default that call gives tiecore's
    values, and measures tiecore lacks still come from ir_measures' own providers."""
    qrels, run = ir_inputs(*CASES[2])
    measures = [nDCG @ 10, AP, COMPAT]
    plain = per_query(ir_measures.iter_calc(measures, qrels, run))
    with as_default() as provider, pytest.warns(tiecore.TieCoreWarning, match="Compat"):
        assert provider is tiecore_aware
        found = per_query(ir_measures.iter_calc(measures, qrels, run))
    aware = per_query(tiecore_aware.iter_calc([nDCG @ 10, AP], qrels, run))
    assert {k: v for k, v in found.items() if k[0] != COMPAT} == aware
    assert {k: v for k, v in found.items() if k[0] == COMPAT} == {
        k: v for k, v in plain.items() if k[0] == COMPAT
    }
    assert any(aware[k] != plain[k] for k in aware)  # the ties matter on this run
    assert tiecore_aware not in ir_measures.DefaultPipeline.providers  # restored
    with as_default("oblivious"):
        again = per_query(ir_measures.iter_calc([nDCG @ 10, AP], qrels, run))
    assert again == pytest.approx({k: v for k, v in plain.items() if k[0] != COMPAT}, rel=1e-12)


# -- empty inputs: what ir_measures' pytrec_eval provider gives ------------------------------

QRELS = [ir_measures.Qrel(q, d, r) for q, d, r in [("0", "a", 1), ("0", "b", 2), ("1", "c", 1)]]
RUN = [ir_measures.ScoredDoc(q, d, s) for q, d, s in [("0", "a", 2.0), ("0", "b", 1.0)]]
ABSENT = [ir_measures.ScoredDoc("9", "a", 1.0)]  # a query the qrels lack
EMPTY_FRAME = pd.DataFrame({"query_id": [], "doc_id": [], "score": []})
EMPTY_INPUTS = {
    "empty run": (QRELS, []),
    "empty run frame": (QRELS, EMPTY_FRAME),
    "empty run dict": (QRELS, {}),
    "empty qrels": ([], RUN),
    "empty qrels dict": ({}, {"0": {"a": 1.0}}),
    "both empty": ([], []),
    "run queries all absent": (QRELS, ABSENT),
    "partial run": (QRELS, RUN),
    "run with an unjudged query too": (QRELS, RUN + ABSENT),
}


def same(found, expected) -> bool:
    """Equal values (to rounding), NaN equal to NaN (an aggregate over no query)."""
    if math.isnan(expected):
        return math.isnan(found)
    return found == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("case", list(EMPTY_INPUTS))
@pytest.mark.parametrize("provider", [tiecore_oblivious, tiecore_aware])
def test_empty_inputs_give_what_pytrec_eval_gives(case, provider):
    measures = [P @ 5, AP, nDCG @ 10, RR, P(rel=2) @ 5]
    qrels, run = EMPTY_INPUTS[case]
    theirs = ir_measures.pytrec_eval
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing said: these inputs are ordinary to ir_measures
        found = provider.calc(measures, qrels, run)
        once = iter(run) if isinstance(run, list) else run  # an iterator, read once
        listed = per_query(provider.iter_calc(measures, qrels, once))
    expected = theirs.calc(measures, qrels, run)
    assert listed == pytest.approx(per_query(expected.per_query), rel=1e-12)
    assert per_query(found.per_query) == listed
    assert found.aggregated.keys() == expected.aggregated.keys()
    for measure, value in expected.aggregated.items():
        assert same(found.aggregated[measure], value), case
    assert same(provider.calc_aggregate(measures, qrels, run)[AP], expected.aggregated[AP])


# -- as_default: measures from other providers are said, or refused -------------------------

MIXED = [nDCG @ 10, COMPAT, P @ 5, SetAP, COMPAT_HALF, P(judged_only=True) @ 5]
ELSEWHERE = [COMPAT, COMPAT_HALF]  # tiecore has neither


def tiecore_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, tiecore.TieCoreWarning)]


def test_as_default_warns_once_naming_what_came_from_elsewhere():
    qrels, run = ir_inputs(*CASES[0])
    with as_default("oblivious"), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        found = ir_measures.calc_aggregate(MIXED, qrels, run)
        evaluator = ir_measures.evaluator(MIXED, qrels)
        evaluator.calc_aggregate(run), list(evaluator.iter_calc(run))  # no new warning
    said = tiecore_warnings(record)
    assert len(said) == 2, said  # one per evaluator: calc_aggregate's and evaluator's
    assert said[0] == said[1] and "\n" not in said[0]
    assert said[0].startswith("tiecore_oblivious does not compute 2 of the measures")
    for measure in ELSEWHERE:
        assert f"{measure} from compat" in said[0]
    assert "nDCG@10" not in said[0] and "P@5 " not in said[0] and "SetAP" not in said[0]
    ours = [m for m in MIXED if m not in ELSEWHERE]
    expected = ir_measures.pytrec_eval.calc_aggregate(ours, qrels, run)
    expected |= ir_measures.providers.registry["compat"].calc_aggregate(ELSEWHERE, qrels, run)
    assert found == pytest.approx(expected)
    with as_default(), warnings.catch_warnings():
        warnings.simplefilter("error")  # every measure tiecore's: nothing to say
        ir_measures.calc_aggregate([nDCG @ 10, P @ 5, RR], qrels, run)


def test_as_default_strict_refuses_them_in_one_line():
    qrels, run = ir_inputs(*CASES[0])
    with as_default("aware", strict=True):
        with pytest.raises(tiecore.InputError) as raised:
            ir_measures.calc_aggregate(MIXED, qrels, run)
        found = ir_measures.calc_aggregate([nDCG @ 10, P @ 5], qrels, run)
    message = str(raised.value)
    assert "\n" not in message and message.startswith("as_default('tiecore', strict=True)")
    assert "does not compute Compat(p=0.8), Compat(p=0.5) (expected" in message
    assert "strict=False to take these from compat" in message
    assert found == tiecore_aware.calc_aggregate([nDCG @ 10, P @ 5], qrels, run)
    assert ir_measures.DefaultPipeline.providers[0] is not tiecore_aware  # restored
    assert "_evaluator" not in vars(ir_measures.DefaultPipeline)


def test_as_default_blocks_nest():
    qrels, run = ir_inputs(*CASES[0])
    with as_default("aware", strict=True), as_default("oblivious"):
        with pytest.warns(tiecore.TieCoreWarning, match="tiecore_oblivious does not"):
            ir_measures.calc_aggregate([COMPAT, AP], qrels, run)
    with as_default("aware", strict=True):
        with as_default("oblivious"):
            pass
        with pytest.raises(tiecore.InputError, match="strict=True"):
            ir_measures.calc_aggregate([COMPAT, AP], qrels, run)


# -- the order of the results is the order of the measures -----------------------------------

ORDERED = [COMPAT, nDCG @ 10, P(rel=2) @ 5, AP, NumQ, RR, P @ 10, SetF(beta=2.0), Rprec]
ORDERED += [SetAP(rel=2), COMPAT_HALF, SetAP]


def orders(measures, qrels, run) -> tuple[list, list, list]:
    """The measures' order in calc_aggregate, iter_calc, and each query's in iter_calc."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tiecore.TieCoreWarning)
        aggregate = list(ir_measures.calc_aggregate(measures, qrels, run))
        metrics = list(ir_measures.iter_calc(measures, qrels, run))
    per_query: dict = {}
    for metric in metrics:  # PyTerrier's per-query table: qid -> measure -> value
        per_query.setdefault(metric.query_id, {})[metric.measure] = metric.value
    first = list(dict.fromkeys(m.measure for m in metrics))
    return aggregate, first, [list(row) for row in per_query.values()]


@settings(deadline=None)  # the first call imports pytrec_eval's parts: no clock asserted
@given(st.lists(st.sampled_from(ORDERED), min_size=1, unique=True))
def test_as_default_keeps_the_order_of_the_measures(measures):
    """Any choice of measures, tiecore's, compat's or both, in any order."""
    qrels, run = QRELS, [*RUN, ir_measures.ScoredDoc("1", "c", 1.0)]
    with as_default():
        aggregate, first, rows = orders(measures, qrels, run)
    assert aggregate == first == measures
    assert rows == [measures, measures]


_ORDER_SCRIPT = """
import json, sys
import ir_measures
from ir_measures import *
from tiecore.ir_measures_provider import as_default
sys.path.insert(0, "tests")
from test_ir_measures_provider import ORDERED, QRELS, RUN, orders
with as_default():
    print(json.dumps([[str(m) for m in part] for part in orders(ORDERED, QRELS, RUN)[:2]]))
"""


def test_order_does_not_follow_the_hash_seed():
    """pt.Experiment's columns follow iter_calc's order; ir_measures' own pipeline keeps
    measures in sets, so without tiecore's ordering they change with PYTHONHASHSEED."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run(
            [sys.executable, "-c", _ORDER_SCRIPT],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        found.append(json.loads(done.stdout))
    expected = [str(m) for m in ORDERED]
    assert found[0] == found[1] == [expected, expected]


# -- the mode is shown; bad settings said in one line ---------------------------------------


def test_the_mode_is_in_the_name_and_repr():
    assert repr(tiecore_aware) == "TiecoreProvider(ties='aware', tiebreak='trec_eval')"
    assert repr(tiecore_oblivious) == "TiecoreProvider(ties='oblivious', tiebreak='trec_eval')"
    mine = TiecoreProvider("sampled", samples=200, seed=1)
    assert (
        repr(mine) == "TiecoreProvider(ties='sampled', tiebreak='trec_eval', samples=200, seed=1)"
    )
    assert mine.NAME == "tiecore_sampled(tiebreak=trec_eval, samples=200, seed=1)"
    evaluator = tiecore_oblivious.evaluator([P @ 5, AP], QRELS)
    assert repr(evaluator) == "TiecoreEvaluator(tiecore_oblivious, [P@5, AP])"


@pytest.mark.parametrize(
    ("settings", "start"),
    [
        ({"ties": "bogus"}, "ties: unknown ties 'bogus' (expected one of oblivious, aware"),
        ({"tiebreak": "bogus"}, "tiebreak: unknown tiebreak 'bogus' (expected one of trec_eval"),
        ({"samples": -1}, "samples: -1 is out of range (expected an integer >= 2"),
        ({"samples": True}, "samples: True is a bool"),
        ({"seed": -1}, "seed: -1 is out of range"),
    ],
)
def test_bad_settings_said_in_one_line(settings, start):
    with pytest.raises(tiecore.InputError) as raised:
        TiecoreProvider(**settings)
    assert str(raised.value).startswith(start) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("bogus",), "as_default: unknown tie mode 'bogus' (expected one of aware, oblivious"),
        ((ir_measures.pytrec_eval,), "as_default: pytrec_eval is not a tiecore provider"),
        (("aware", "yes"), "strict: 'yes' is a str"),
    ],
)
def test_as_default_bad_arguments_said_in_one_line(args, message):
    provider, *strict = args
    before = list(ir_measures.DefaultPipeline.providers)
    with (
        pytest.raises(tiecore.InputError) as raised,
        as_default(provider, strict=(strict or [False])[0]),
    ):
        pass
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)
    assert ir_measures.DefaultPipeline.providers == before

"""pytrec_eval's own test suite, case by case, against ``tiecore.pytrec`` in oblivious mode.

pytrec_eval's ``tests/pytrec_eval_tests.py`` (github.com/cvangysel/pytrec_eval) holds five
unit tests (``test_ndcg``, ``test_nicknames``, ``test_ndcg_cut``, ``test_empty``,
``test_measure_params``) and two integration tests that score trec_eval's test files
against trec_eval's expected ``all`` lines (``results.test`` on ``qrels.test``, checked
against ``out.test``; on ``qrels.rel_level`` at ``relevance_level=2``, against
``out.test.aql``).  None of its code is used here: each test below gives the same inputs
to the real pytrec_eval and to ``tiecore.pytrec.RelevanceEvaluator(..., ties="oblivious")``
and asserts that they answer alike, keys and values, and that the values are what the
suite expects.  Each test's docstring names the test it mirrors.

tiecore offers every measure pytrec_eval does (:data:`LACKING` is empty; a measure it
lacked would be left out of the nicknames and refused by name, and the tests would say
which).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import pytrec_eval
from shared_data import TREC_EVAL
from test_pytrec_evaluator import _base

from tiecore import pytrec

#: trec_eval 9.0.8's expected outputs of its own test files (provenance in its README.md).
GOLDEN = Path(__file__).parent / "cli" / "trec_eval_908"

#: trec_eval's measures tiecore does not have (pytrec_eval computes them).
LACKING: frozenset[str] = frozenset()

#: The judgments every unit test of pytrec_eval's suite uses: two queries, d2 the only
#: relevant doc of q1, d2 and d3 both relevant for q2.
QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}


#: How pytrec_eval is run apart: the evaluator's arguments in, its result out, as JSON;
#: first a warm-up on a run that retrieves one judged doc per query (see below).
APART = (
    "import json, sys, pytrec_eval\n"
    "qrels, measures, run, options = json.load(sys.stdin)\n"
    "warm = {q: {next(iter(docs)): 1.0} for q, docs in qrels.items() if docs}\n"
    "if warm and measures:\n"
    "    pytrec_eval.RelevanceEvaluator(qrels, set(measures), **options).evaluate(warm)\n"
    "found = pytrec_eval.RelevanceEvaluator(qrels, set(measures), **options).evaluate(run)\n"
    "json.dump(found, sys.stdout)\n"
)


def pytrec_eval_apart(qrels: dict, measures, run: dict, **options) -> dict:
    """pytrec_eval's result for a run with an empty query, in a process of its own.

    pytrec_eval 0.5's C code crashes (SIGSEGV) on ``all_trec`` or ``official`` of a run
    whose queries are all empty when it is the process's first evaluation, and not after
    an evaluation that retrieved something (cvangysel/pytrec_eval#13: empty inputs kill
    the kernel).  In a shared test process that made the outcome depend on the tests
    that ran before (a pytest-xdist worker was lost once).  So pytrec_eval runs apart,
    after a warm-up evaluation; a crash all the same is retried twice, and would fail
    this test only.  JSON keeps the doubles exact.
    """
    sent = json.dumps([qrels, sorted(measures), run, options])
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", APART], input=sent, capture_output=True, text=True
        )
        if done.returncode >= 0:  # not killed by a signal
            break
    assert done.returncode == 0, f"pytrec_eval failed: {done.returncode} {done.stderr[-500:]}"
    return json.loads(done.stdout)


def side_by_side(qrels: dict, measures, run: dict, **options) -> tuple[dict, dict]:
    """(tiecore's result, pytrec_eval's) for the same evaluator and run (pytrec_eval in a
    process of its own where a query is empty: :func:`pytrec_eval_apart`)."""
    if any(not docs for docs in run.values()):
        theirs = pytrec_eval_apart(qrels, measures, run, **options)
    else:
        theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, **options).evaluate(run)
    ours = pytrec.RelevanceEvaluator(qrels, measures, ties="oblivious", **options).evaluate(run)
    return ours, theirs


def assert_alike(ours: dict, theirs: dict, empty: frozenset = frozenset()) -> None:
    """Same queries; per query pytrec_eval's keys less those of :data:`LACKING`, in its
    order; every value ``==``.  ``runid`` is 0 (pytrec_eval leaves that double unset).  In
    the queries of ``empty`` (given as ``{}``) tiecore scores iprec_at_recall and 11pt_avg 0
    where pytrec_eval gives NaN for some of them."""
    assert list(ours) == [q for q in theirs if q in ours] and set(ours) == set(theirs)
    for qid, values in theirs.items():
        kept = [k for k in values if _base(k) not in LACKING]
        assert list(ours[qid]) == kept, qid
        for key in kept:
            mine, real = ours[qid][key], values[key]
            assert type(mine) is float, key
            if key == "runid":
                assert mine == 0.0
            elif qid in empty and math.isnan(real):
                assert _base(key) in ("iprec_at_recall", "11pt_avg") and mine == 0.0, key
            else:
                assert mine == real, (qid, key, mine, real)


# ------------------------------------------------------------------ the unit tests


@pytest.mark.parametrize(
    ("scores", "with_q2", "ndcg"),
    [
        ({"d1": 1.0, "d2": 0.0, "d3": 1.5}, True, 0.5),  # d2 third
        ({"d1": 1.0, "d2": 2.0, "d3": 1.5}, True, 1.0),  # d2 first
        ({"d1": 4.0, "d2": 2.0, "d3": 1.5}, True, 0.6309297535714575),  # d2 second
        ({"d1": 1.0, "d2": 2.0, "d3": 1.5}, False, 1.0),  # the run without q2
    ],
)
def test_ndcg(scores, with_q2, ndcg):
    """Mirrors ``test_ndcg``: ``{'map', 'ndcg'}`` with q1's relevant doc at rank 3, 1 and
    2 (nDCG 1/log2(4), 1, 1/log2(3)), q2 given as an empty dict or not at all."""
    run = {"q1": scores, **({"q2": {}} if with_q2 else {})}
    ours, theirs = side_by_side(QRELS, {"map", "ndcg"}, run)
    assert_alike(ours, theirs, frozenset({"q2"}))
    assert ours["q1"]["ndcg"] == pytest.approx(ndcg, abs=1e-7)


@pytest.mark.parametrize(
    ("nickname", "lacking"),
    [
        ("all_trec", LACKING),
        ("set", set()),
        ("official", set()),
    ],
)
def test_nicknames(nickname, lacking):
    """Mirrors ``test_nicknames``: each nickname gives pytrec_eval's keys (those of the
    measures trec_eval's nickname names), less exactly those of :data:`LACKING`, on a run
    whose queries are empty dicts."""
    run = {"q1": {}, "q2": {}}
    ours, theirs = side_by_side(QRELS, {nickname}, run)
    assert_alike(ours, theirs, frozenset(run))
    left_out = {_base(k) for k in set(theirs["q1"]) - set(ours["q1"])}
    assert left_out == lacking
    assert set(pytrec.supported_nicknames[nickname]) == (
        set(pytrec_eval.supported_nicknames[nickname]) - lacking
    )


def test_nicknames_together():
    """Mirrors ``test_nicknames``' last case: ``official``, ``set`` and ``ndcg`` at once
    give the union of their keys."""
    run = {"q1": {}, "q2": {}}
    ours, theirs = side_by_side(QRELS, {"official", "set", "ndcg"}, run)
    assert_alike(ours, theirs, frozenset(run))
    apart = [side_by_side(QRELS, {name}, run)[0]["q1"] for name in ("official", "set", "ndcg")]
    assert set(ours["q1"]) == set().union(*apart)


def test_every_measure_of_pytrec_eval_is_offered():
    """Nothing is left out: tiecore.pytrec's measures and nicknames are pytrec_eval's."""
    assert pytrec.supported_measures == set(pytrec_eval.supported_measures)
    for nickname, measures in pytrec.supported_nicknames.items():
        assert set(measures) == set(pytrec_eval.supported_nicknames[nickname]), nickname
    # pytrec_eval's preference and judgment-group nicknames name measures of other
    # judgments (trec_eval's -R), which neither evaluator takes
    others = set(pytrec_eval.supported_nicknames) - set(pytrec.supported_nicknames)
    assert others == {"all_prefs", "prefs", "qrels_jg"}


@pytest.mark.parametrize(
    ("measures", "scores", "expected"),
    [
        ({"ndcg_cut.3"}, {"d1": 1.0, "d2": 0.0, "d3": 1.5}, {"ndcg_cut_3": 0.5}),
        ({"ndcg_cut.1"}, {"d1": 1.0, "d2": 2.0, "d3": 1.5}, {"ndcg_cut_1": 1.0}),
        (
            {"ndcg_cut.1,2,3,1000"},
            {"d1": 1.0, "d2": 0.0, "d3": 1.5},
            {"ndcg_cut_1": 0.0, "ndcg_cut_2": 0.0, "ndcg_cut_3": 0.5, "ndcg_cut_1000": 0.5},
        ),
    ],
)
def test_ndcg_cut(measures, scores, expected):
    """Mirrors ``test_ndcg_cut``: one cutoff, then several in one name."""
    ours, theirs = side_by_side(QRELS, measures, {"q1": scores, "q2": {}})
    assert_alike(ours, theirs, frozenset({"q2"}))
    assert ours["q1"] == pytest.approx(expected, abs=1e-7)


RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}


@pytest.mark.parametrize(
    ("qrels", "measures", "run", "expected"),
    [
        (QRELS, {"map", "ndcg"}, {}, {}),  # an empty run
        (QRELS, set(), RUN, {"q1": {}, "q2": {}}),  # no measures
        ({}, {"map", "ndcg"}, RUN, {}),  # no judgments
        ({}, {"map", "ndcg"}, {}, {}),  # no judgments, an empty run
        (QRELS, set(), {}, {}),  # no measures, an empty run
        ({}, set(), RUN, {}),  # no judgments, no measures
        ({}, {}, {}, {}),  # nothing at all (the measures an empty dict)
    ],
)
def test_empty(qrels, measures, run, expected):
    """Mirrors ``test_empty``: every combination of empty judgments, measures and run."""
    ours, theirs = side_by_side(qrels, measures, run)
    assert ours == theirs == expected


def test_measure_params():
    """Mirrors ``test_measure_params``: a bare family (its default cutoffs) and the same
    family with parameters (only theirs), ``.`` and ``_`` forms, lists and repeats."""
    measures = ["ndcg_cut", "ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000", "P"]
    ours, theirs = side_by_side(QRELS, measures, RUN)
    assert_alike(ours, theirs, frozenset({"q2"}))
    cuts = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
    assert set(ours["q1"]) == {
        "ndcg_cut_1", "ndcg_cut_4", "ndcg_cut_15", "ndcg_cut_20", "recall_1000",
        *(f"P_{k}" for k in cuts),
    }  # fmt: skip


# ------------------------------------------------------------------ the integration tests


def trec_eval_summary(name: str) -> dict[str, float]:
    """trec_eval's ``all`` lines of an expected output: printed name -> value (``runid``'s
    value, a name, left out)."""
    summary = {}
    for line in (GOLDEN / name).read_text().splitlines():
        measure, qid, value = line.split()
        if qid == "all" and measure != "runid":
            summary[measure] = float(value)
    return summary


def measure_of(printed: str) -> str | None:
    """The measure a printed name is of (``P_5`` -> ``P``, ``gm_map`` -> ``gm_map``): the
    longest of pytrec_eval's measures that it starts with; None for none."""
    known = [m for m in pytrec_eval.supported_measures if printed.startswith(m)]
    return max(known, key=len, default=None)


@pytest.mark.parametrize(
    ("qrels_name", "expected_name", "options"),
    [
        ("qrels.test", "out.test", {}),
        ("qrels.rel_level", "out.test.aql", {"relevance_level": 2}),
    ],
)
def test_trec_eval_files(qrels_name, expected_name, options):
    """Mirrors the integration tests (``test_results.test-qrels.test-out.test`` and
    ``...-out.test.aql-relevance_level=2``): the measures of trec_eval's expected ``all``
    lines, asked for by their family names, on ``results.test``; per query tiecore answers
    as pytrec_eval, and the mean (or sum, or geometric mean) over queries from
    ``compute_aggregated_measure`` equals trec_eval's to 3 places, as the suite checks,
    and pytrec_eval's own aggregate with ``==``.

    The expected outputs are trec_eval 9.0.8's (``tests/cli/trec_eval_908/``: the shared
    ``out.test`` comes from a later trec_eval, whose iprec_at_recall means differ, and
    pytrec_eval computes 9.0.x's)."""
    with open(TREC_EVAL / qrels_name) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(TREC_EVAL / "results.test") as f:
        run = pytrec_eval.parse_run(f)
    assert pytrec.parse_qrel((TREC_EVAL / qrels_name).read_text().splitlines()) == qrels
    assert pytrec.parse_run((TREC_EVAL / "results.test").read_text().splitlines()) == run
    summary = trec_eval_summary(expected_name)
    families = {measure_of(printed) for printed in summary} - {None}
    assert families - pytrec.supported_measures == (LACKING & families)
    kept = families & pytrec.supported_measures
    ours, theirs = side_by_side(qrels, kept, run, **options)
    assert_alike(ours, theirs)
    checked = [printed for printed in summary if measure_of(printed) in kept]
    assert len(checked) >= 29
    for printed in checked:
        mine = pytrec.compute_aggregated_measure(printed, [v[printed] for v in ours.values()])
        real = pytrec_eval.compute_aggregated_measure(
            printed, [v[printed] for v in theirs.values()]
        )
        assert mine == pytest.approx(summary[printed], abs=5e-4), printed
        assert mine == real, printed

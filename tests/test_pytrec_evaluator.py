"""``tiecore.pytrec``: pytrec_eval's ``RelevanceEvaluator``, checked against pytrec_eval itself.

* ``ties="oblivious"``: every per-query value and every mean of every measure both
  offer equals pytrec_eval's, on trec_eval's test files, on Robust03 runs and on small
  tie-heavy random cases; the result keys are pytrec_eval's.
* ``ties="aware"`` (the default): :func:`tiecore.evaluate`'s tie-aware values, and on
  small random cases the mean over every ordering of the tied documents of what
  pytrec_eval computes for each ordering (the brute force).
* pytrec_eval's conventions: nicknames, parameters, empty inputs, queries without
  judgments, ``relevance_level``, ``judged_docs_only_flag``, and its module's helpers.
"""

from __future__ import annotations

import gzip
import math
import re
from collections import defaultdict

import pytest
import pytrec_eval
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference import orderings
from shared_data import ROBUST_QRELS, ROBUST_RUNS, TREC_EVAL, pytrec_dicts, robust_run
from strategies import FLOAT32_COLLIDING, cases

import tiecore
from tiecore import pytrec
from tiecore.errors import InputError

#: Random qrels may have no level as high as relevance_level 2: tiecore says so, rightly.
pytestmark = pytest.mark.filterwarnings(
    "ignore:relevance level 2 is above every level:tiecore.errors.TieCoreWarning"
)

#: Robust03 runs: with and without many ties (scores equal as 32-bit floats).
ROBUST = ["input.Sel50.gz", "input.MU03rob01.gz", "input.pircRBa1.gz"]


def _base(key: str) -> str:
    return re.sub(r"_[0-9][0-9.]*$", "", key)


def _read(qrels_path, run_path) -> tuple[dict, dict]:
    opener = gzip.open if str(run_path).endswith(".gz") else open
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with opener(run_path, "rt") as f:
        run = pytrec_eval.parse_run(f)
    return qrels, run


#: Measures pytrec_eval gives NaN for a query without documents (0 / 0), where tiecore
#: gives trec_eval -c's 0 (see :func:`assert_as_pytrec_eval`).
NAN_WHEN_EMPTY = ("iprec_at_recall", "11pt_avg")


def assert_as_pytrec_eval(ours: dict, theirs: dict, run: dict | None = None, qrels=None) -> None:
    """Same queries, the same keys as far as tiecore has the measure, and the values
    ``==``; the means (pytrec_eval's ``compute_aggregated_measure``) likewise.

    One known difference: a judged query whose dict in ``run`` is empty (or, with
    ``qrels``, trec_eval's ``-J``, holds no doc judged 0 or more) scores 0 in every
    measure, trec_eval ``-c``'s value for a query without documents; pytrec_eval gives
    NaN for its iprec_at_recall (all of them, or only iprec_at_recall_0.00 when the
    query has relevant docs) and its 11pt_avg (trec_eval never sees such a query: a run
    file cannot hold it).  There the test wants 0 from tiecore and 0 or NaN from
    pytrec_eval, and leaves those means out.
    """
    assert set(ours) == set(theirs)
    judged = {q: [d for d in docs if qrels is None or qrels[q].get(d, -1) >= 0]
              for q, docs in (run or {}).items()}  # fmt: skip
    empty = {qid for qid, docs in judged.items() if not docs}
    for qid, values in theirs.items():
        assert set(ours[qid]) == {k for k in values if _base(k) in pytrec.supported_measures}
    for qid, values in ours.items():
        for key, value in values.items():
            if qid in empty and _base(key) in NAN_WHEN_EMPTY:
                assert value == 0.0, (key, qid)
                assert theirs[qid][key] == 0.0 or math.isnan(theirs[qid][key]), (key, qid)
            else:
                _check(key, value, theirs[qid][key], qid)
    keys = next(iter(ours.values()), {})
    for key in keys:
        if empty & set(ours) and _base(key) in NAN_WHEN_EMPTY:
            continue
        mine = pytrec.compute_aggregated_measure(key, [ours[q][key] for q in ours])
        real = pytrec_eval.compute_aggregated_measure(key, [theirs[q][key] for q in ours])
        _check(key, mine, real, "mean")


def _check(key: str, ours: float, theirs: float, where: str) -> None:
    assert type(ours) is float, (key, where)
    if key == "runid":  # pytrec_eval's per-query runid is a double it never sets
        assert ours == 0.0, (key, where)
        return
    assert ours == theirs, (key, where, ours, theirs)


def padded(case) -> tuple[dict, dict]:
    """A random case as pytrec_eval's dicts, every qrels query with one judged
    non-relevant doc that no run retrieves: trec_eval reads uninitialized memory when
    all of a query's levels are negative, and pytrec_eval then crashes or hangs."""
    for qid in case.qrels_qids:
        case.queries[qid].qrels["~pad"] = 0
    return pytrec_dicts(case.run_frame(), case.qrels_frame())


def both(qrels: dict, run: dict, measures, **options) -> tuple[dict, dict]:
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, **options).evaluate(run)
    ours = pytrec.RelevanceEvaluator(qrels, measures, ties="oblivious", **options).evaluate(run)
    return ours, theirs


# ------------------------------------------------------------------ oblivious = pytrec_eval


@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize(("qrels_name", "level"), [("qrels.test", 1), ("qrels.rel_level", 2)])
def test_oblivious_trec_eval_files(qrels_name, level, judged_only):
    qrels, run = _read(TREC_EVAL / qrels_name, TREC_EVAL / "results.test")
    ours, theirs = both(
        qrels, run, {"all_trec"}, relevance_level=level, judged_docs_only_flag=judged_only
    )
    assert_as_pytrec_eval(ours, theirs)


@pytest.mark.parametrize(
    "name",
    [
        name if name in ROBUST else pytest.param(name, marks=pytest.mark.slow)
        for name in [path.name for path in ROBUST_RUNS]
    ],
)
def test_oblivious_robust03(name):
    """Every shared Robust03 run (three in the fast tier): every double ``==``."""
    qrels, run = _read(ROBUST_QRELS, robust_run(name))
    assert_as_pytrec_eval(*both(qrels, run, {"all_trec"}))
    assert_as_pytrec_eval(*both(qrels, run, {"official", "ndcg_cut.3,10"}, relevance_level=2))
    assert_as_pytrec_eval(*both(qrels, run, {"map", "P.5"}, judged_docs_only_flag=True))


def test_all_trec_covers_every_supported_measure():
    """The ``all_trec`` comparisons above reach every measure the evaluator offers."""
    qrels, run = _read(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test")
    ours = pytrec.RelevanceEvaluator(qrels, {"all_trec"}, ties="oblivious").evaluate(run)
    assert {_base(key) for values in ours.values() for key in values} == pytrec.supported_measures


@settings(max_examples=60, deadline=None)
@given(
    case=cases(score_pool=(*FLOAT32_COLLIDING, 0.25, 2.0)),
    level=st.sampled_from([1, 2]),
    judged_only=st.booleans(),
    empty=st.booleans(),
)
def test_oblivious_random_ties(case, level, judged_only, empty):
    """Tie-heavy runs, scores that tie only as 32-bit floats, queries without judgments,
    judgments without documents and (``empty``) a judged query with an empty dict."""
    qrels, run = padded(case)
    if empty:
        run.update({qid: {} for qid in qrels if qid not in run})
    judged = {q: [d for d in docs if qrels.get(q, {}).get(d, -1) >= 0] for q, docs in run.items()}
    assume(any(judged.values()) if judged_only else True)  # pytrec_eval crashes on no doc
    ours, theirs = both(
        qrels, run, {"all_trec"}, relevance_level=level, judged_docs_only_flag=judged_only
    )
    judged_qrels = {q: qrels.get(q, {}) for q in run} if judged_only else None
    assert_as_pytrec_eval(ours, theirs, run, judged_qrels)


# ------------------------------------------------------------------ aware


#: runid left out too: pytrec_eval's per-query runid is a double it never sets.
ALL_BUT_GM = pytrec.supported_measures - {*pytrec._OBLIVIOUS_ONLY, "runid"}


@pytest.mark.parametrize("name", ["input.pircRBa1.gz", "input.Sel50.gz"])
def test_aware_is_tiecore_evaluate(name):
    qrels, run = _read(ROBUST_QRELS, robust_run(name))
    evaluator = pytrec.RelevanceEvaluator(qrels, {"all_trec"})
    ours = evaluator.evaluate(run)
    names = {k: n for k, n in evaluator._keys.items() if n is not None}  # constants: below
    found = tiecore.evaluate(
        tiecore.read_run(run), tiecore.read_qrels(qrels), list(dict.fromkeys(names.values())),
        ties="aware", per_query=True,
    )  # fmt: skip
    found = found[found["qid"].notna()]
    expected: dict = defaultdict(dict)
    for qid, measure, value in zip(found["qid"], found["measure"], found["value"], strict=True):
        expected[qid][measure] = value
    assert set(ours) == set(expected)
    constants = {"runid": 0.0, "num_q": 1.0, "relstring": 0.0}
    for qid, values in ours.items():
        assert values == {
            key: constants[key] if key in constants else expected[qid][names[key]] for key in values
        }


def brute_force(qrels: dict, run: dict, measures, level: int) -> dict:
    """Per judged query: pytrec_eval's values averaged over every ordering of its docs
    that agrees with the scores (each ordering given as distinct scores)."""
    result = {}
    for qid, docs in run.items():
        if qid not in qrels or not qrels[qid]:
            continue
        evaluator = pytrec_eval.RelevanceEvaluator(
            {qid: qrels[qid]}, measures, relevance_level=level
        )
        totals: dict = defaultdict(float)
        count = 0
        for order in orderings(list(docs.values()), list(docs)):
            ranked = {qid: {docno: float(len(order) - i) for i, docno in enumerate(order)}}
            for key, value in evaluator.evaluate(ranked)[qid].items():
                totals[key] += value
            count += 1
        result[qid] = {key: total / count for key, total in totals.items()}
    return result


@settings(max_examples=40, deadline=None)
@given(case=cases(max_docs=6, max_queries=3), level=st.sampled_from([1, 2]))
def test_aware_is_the_mean_over_orderings(case, level):
    qrels, run = padded(case)
    ours = pytrec.RelevanceEvaluator(qrels, ALL_BUT_GM, relevance_level=level).evaluate(run)
    expected = brute_force(qrels, run, ALL_BUT_GM, level)
    assert set(ours) == set(expected)
    for qid, values in expected.items():
        assert set(ours[qid]) == {k for k in values if _base(k) in pytrec.supported_measures}
        for key, value in ours[qid].items():
            assert math.isclose(value, values[key], rel_tol=1e-12, abs_tol=1e-12), (qid, key)


def test_aware_differs_where_ties_matter():
    qrels = {"q1": {"d1": 1}}
    run = {"q1": {"d1": 1.0, "d2": 1.0, "d3": 1.0}}  # d1 sorts last in trec_eval's order
    assert pytrec.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run) == {
        "q1": {"recip_rank": pytest.approx((1 + 1 / 2 + 1 / 3) / 3)}
    }
    oblivious = pytrec.RelevanceEvaluator(qrels, {"recip_rank"}, ties="oblivious")
    assert oblivious.evaluate(run) == pytrec_eval.RelevanceEvaluator(
        qrels, {"recip_rank"}
    ).evaluate(run)


def test_sampled_without_ties_is_oblivious():
    qrels, run = _read(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test")
    sampled = pytrec.RelevanceEvaluator(qrels, {"P.5,10", "recip_rank"}, ties="sampled")
    oblivious = pytrec.RelevanceEvaluator(qrels, {"P.5,10", "recip_rank"}, ties="oblivious")
    untied = {q: {d: float(i) for i, d in enumerate(docs)} for q, docs in run.items()}
    assert sampled.evaluate(untied) == oblivious.evaluate(untied)


# ------------------------------------------------------------------ pytrec_eval's conventions

QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 2}, "q2": {"d2": 1, "d3": 1}, "q3": {}}
RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}, "q9": {"d1": 1.0}}


@pytest.mark.parametrize(
    "measures",
    [
        {"official"}, {"set"}, {"official", "set", "ndcg"}, {"P", "P.7"}, {"all_trec", "P_3"},
        ["ndcg_cut", "ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000", "P"],
        {"success.2,1", "iprec_at_recall.0.5", "set_F.1", "map_cut.2"}, set(),
        {"iprec_at_recall.0.25,0.75", "iprec_at_recall"}, {"set_F.0.5", "set_F.2"},
        {"utility.1,2,3,4"}, {"Rprec_mult.0.5,1", "Rprec_mult_1.5"}, {"num_q", "relstring"},
        {"set_relative_P", "gm_bpref", "runid"},
    ],
)  # fmt: skip
def test_names_and_keys(measures):
    """Nicknames, bare names (their default parameters), parameters and their union, as
    pytrec_eval reads them; the keys come in trec_eval's order."""
    ours, theirs = both(QRELS, RUN, measures)
    assert_as_pytrec_eval(ours, theirs, RUN)
    for qid in ours:
        keys = [k for k in theirs[qid] if k in ours[qid]]
        assert list(ours[qid]) == keys


@pytest.mark.parametrize(
    "measures", [{"iprec_at_recall.0.333,0.1"}, {"Rprec_mult.0.3351,1.27"}, {"P.05,10"}]
)
def test_real_parameters_computed_as_given(measures):
    """A real parameter is computed as given and printed with 2 decimals, as trec_eval
    does: with 1000 relevant docs ``iprec_at_recall_0.33`` of 0.333 needs 333 of them
    (0.33: 330), ``Rprec_mult_0.34`` of 0.3351 ranks 335 (0.34: 340)."""
    qrels = {"q1": {f"d{i}": 1 for i in range(0, 3000, 3)}}
    run = {"q1": {f"d{i}": float(3000 - i) + 0.5 * (i % 7 == 0) for i in range(3000)}}
    ours, theirs = both(qrels, run, measures)
    assert_as_pytrec_eval(ours, theirs, run)
    rounded = {k: v for k, v in ours["q1"].items() if k.endswith(("0.33", "0.34"))}
    if rounded:  # the 2 decimals alone would give another value
        names = {k.replace("_0.", ".0.") for k in rounded}
        again = pytrec.RelevanceEvaluator(qrels, names, ties="oblivious").evaluate(run)
        assert again["q1"].keys() == rounded.keys() and again["q1"] != rounded


@pytest.mark.parametrize(
    "run",
    [{}, {"q9": {"d1": 1.0}}, {"q2": {}}, {"q1": {}, "q2": {}}, RUN, {"q3": {"d1": 1.0}}],
)
def test_empty_inputs(run):
    """An empty run, queries without judgments (skipped), judged queries without
    documents (scored 0, with their num_rel); empty qrels and no measures."""
    measures = {"map", "ndcg", "num_rel", "P.2", "iprec_at_recall", "recip_rank"}
    if any(run.values()):  # pytrec_eval may crash on a run without any doc
        assert_as_pytrec_eval(*both(QRELS, run, measures), run)
    else:
        ours = pytrec.RelevanceEvaluator(QRELS, measures).evaluate(run)
        for values in ours.values():  # both queries have two relevant docs
            assert all(v == (2.0 if k == "num_rel" else 0.0) for k, v in values.items())
        assert set(ours) == set(run) & {"q1", "q2"}
    assert_as_pytrec_eval(*both({}, run, {"map"}))
    assert_as_pytrec_eval(*both(QRELS, run, set()))


def test_judged_docs_only():
    """trec_eval's -J removes unjudged docs, a negative level counting as unjudged."""
    qrels = {"q": {"a": -2, "b": 1, "c": -1, "d": 0}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    for flag in (False, True):
        assert_as_pytrec_eval(*both(qrels, run, {"all_trec"}, judged_docs_only_flag=flag))
    ours = pytrec.RelevanceEvaluator(qrels, {"num_ret"}, judged_docs_only_flag=True)
    assert ours.evaluate(run) == {"q": {"num_ret": 2.0}}


@pytest.mark.parametrize(
    ("measures", "ties", "message"),
    [
        ({"foo"}, "aware", r"^measures: unsupported measure foo \(expected one of"),
        ({"utility.2,1,0,0"}, "aware", r"^measures: utility.0,1,2: 3 weights \(pytrec_eval"),
        ({"gm_bpref"}, "aware", r"gm_bpref: no exact tie-aware value \(a log of bpref"),
        ({"gm_map"}, "aware", r"gm_map: no exact tie-aware value .*ties='oblivious'"),
        ({"gm_map"}, "sampled", r"gm_map: no exact tie-aware value"),
        ({"map.5"}, "aware", r"map.5: tiecore's map takes no parameter"),
        ({"num_q.5"}, "aware", r"num_q.5: tiecore's num_q takes no parameter"),
        ({"P_5x"}, "aware", r"^measures: unsupported measure P_5x"),  # pytrec_eval: P_5
        ({"P.5.5"}, "aware", r"P.5.5: P's cutoffs \(expected positive integers\)"),
        ({"P.0"}, "aware", r"P.0: P's cutoffs \(expected positive integers\)"),
        ({"map"}, "best", r"^ties: unknown ties 'best' \(expected one of oblivious, aware"),
        ([3], "aware", r"^measures: 3 is no measure name"),
    ],
)
def test_errors(measures, ties, message):
    with pytest.raises(InputError, match=message):
        pytrec.RelevanceEvaluator(QRELS, measures, ties=ties)


def test_unknown_measures_are_pytrec_evals_error():
    """pytrec_eval raises ValueError for a measure it does not know; InputError is one."""
    with pytest.raises(ValueError, match="unsupported measure foo"):
        pytrec_eval.RelevanceEvaluator(QRELS, {"foo"})
    with pytest.raises(ValueError, match="unsupported measure foo"):
        pytrec.RelevanceEvaluator(QRELS, {"foo"})


def test_bad_inputs():
    with pytest.raises(InputError, match="query 'q1' maps to a int"):
        pytrec.RelevanceEvaluator({"q1": 3}, {"map"})
    with pytest.raises(InputError, match=r"^run: a list"):
        pytrec.RelevanceEvaluator(QRELS, {"map"}).evaluate([("q1", "d1", 1.0)])
    with pytest.raises(InputError, match="score"):
        pytrec.RelevanceEvaluator(QRELS, {"map"}).evaluate({"q1": {"d1": "high"}})


def test_nicknames_and_measures_are_pytrec_eval_s():
    for nickname, measures in pytrec.supported_nicknames.items():
        assert measures == set(pytrec_eval.supported_nicknames[nickname])
    assert pytrec.supported_measures == set(pytrec_eval.supported_measures)
    aware = pytrec.RelevanceEvaluator(QRELS, {"official"}).evaluate(RUN)
    assert "gm_map" not in aware["q1"] and "map" in aware["q1"]


def test_module_helpers():
    run_lines = (TREC_EVAL / "results.test").read_text().splitlines()
    qrels_lines = (TREC_EVAL / "qrels.test").read_text().splitlines()
    assert pytrec.parse_run(run_lines) == pytrec_eval.parse_run(run_lines)
    assert pytrec.parse_qrel(qrels_lines) == pytrec_eval.parse_qrel(qrels_lines)
    with pytest.raises(InputError, match=r"^run, line 2: .* \(expected 6 fields"):
        pytrec.parse_run(["q1 Q0 d1 1 2.5 t", "q1 Q0 d2 1 2.5"])
    with pytest.raises(InputError, match=r"^qrels, line 2: docno 'd1' appears twice"):
        pytrec.parse_qrel(["q1 0 d1 1", "q1 0 d1 0"])
    for measure in ("num_ret", "gm_map", "map"):
        values = [-0.5, 0.25, 3.0]
        assert pytrec.compute_aggregated_measure(
            measure, values
        ) == pytrec_eval.compute_aggregated_measure(measure, values)
    assert tiecore.pytrec is pytrec and "pytrec" in tiecore.__all__

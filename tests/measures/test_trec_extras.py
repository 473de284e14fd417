"""trec_eval's all_trec extras whose tie-aware value test_against_bruteforce does not
check (gm_bpref: none; 11pt_avg: a value, its spread in test_iprec_avg_spread.py;
ndcg_rel and G with their gain maps, a negative gain among them; and binG's and
Rndcg's oblivious and sampled values) against slow references written from
trec_eval's definitions (tests/reference.py), over every ordering of small tie-heavy
runs.

- oblivious: each deterministic tie-break policy gives the reference's value of its order;
- sampled: every draw is the value of some ordering, and the mean over draws is within
  five standard errors of the mean over all orderings;
- aware: the mean over every ordering (and for ndcg_rel and G the variance, min and max),
  or refused with the reason, in one line.
"""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import cases, depths, rel_levels

import tiecore
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError, Refusal
from tiecore.measures import Measure

SPECS = [
    ref.Spec("BinG"),
    ref.Spec("G"),
    ref.Spec("G", params=(("gains", "1:3.0;2:-1.0;0:0.5"),)),
    ref.Spec("NDCGRel"),
    ref.Spec("NDCGRel", params=(("gains", "1:3.0;2:9.0;4:4.5"),)),
    ref.Spec("Rndcg"),
    ref.Spec("Rndcg", params=(("gains", "2:1.0;1:2.5"),)),
    ref.Spec("IPrecAvg"),
    ref.Spec("IPrecAvg", params=(("levels", "0.25;0.5;0.75"),)),
    ref.Spec("GMBpref"),
]
#: Those with an exact tie-aware value (tests/evaluation/test_against_bruteforce.py;
#: IPrecAvg's, NDCGRel's and G's values below; IPrecAvg's spread in
#: test_iprec_avg_spread.py).
EXACT = ("BinG", "Rndcg", "IPrecAvg", "NDCGRel", "G")
#: An exact value checked below (its variance and bounds: test_iprec_avg_spread.py).
VALUE_ONLY = ("IPrecAvg",)
#: An exact value checked below, with its variance and bounds.
SPREAD = ("NDCGRel", "G")
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
options = st.fixed_dictionaries({"rel_level": rel_levels, "depth": depths})


def _per_query(case, ties: str, **options):
    run, qrels = case.run_frame(), case.qrels_frame()
    names = [spec.name for spec in SPECS]
    frame = tiecore.evaluate({"r": run}, qrels, names, per_query=True, ties=ties, **options)
    rows = frame[frame["qid"].notna()]
    return {(q, m): v for q, m, v in zip(rows["qid"], rows["measure"], rows["value"], strict=True)}


@PROPERTY
@given(cases(), options, st.sampled_from(ref.DETERMINISTIC_POLICIES))
def test_oblivious_is_the_reference_of_the_policys_order(case, options, policy):
    got = _per_query(case, "oblivious", tiebreak=policy, **options)
    for qid in case.both_qids:
        q = case.queries[qid]
        expected = ref.reference_oblivious(
            SPECS, q.scores, q.docnos, q.labels, q.levels, policy, **options
        )
        for spec, value in expected.items():
            name = str(Measure.parse(spec.name))
            assert got[qid, name] == pytest.approx(value, rel=1e-12, abs=1e-12), (qid, name)


@settings(PROPERTY, max_examples=40, derandomize=True)
@given(cases(max_queries=3), options)
def test_sampled_draws_are_orderings_and_average_to_the_mean(case, options):
    run, qrels = case.run_frame(), case.qrels_frame()
    judgments = Judgments.from_qrels(qrels, rel_level=options["rel_level"])
    with warnings.catch_warnings():  # run-only queries are skipped, with a warning
        warnings.simplefilter("ignore")
        ranking = Ranking.build(run, judgments)
    samples = 400
    for spec in SPECS:
        measure = Measure.parse(spec.name)
        if not measure.spec.hooked(measure):  # gm_bpref: Bpref's draws (the engine's)
            continue
        (draws,) = measure.spec.sample(
            [measure], ranking, judgments, samples=samples, rngs=[11], depth=options["depth"]
        )
        for i, qid in enumerate(judgments.qids.tolist()):
            if qid not in case.both_qids:
                continue
            q = case.queries[qid]
            every = ref.reference_range([spec], q.scores, q.labels, q.levels, **options)[spec]
            mean = ref.reference_aware([spec], q.scores, q.labels, q.levels, **options)[spec]
            column = draws[:, i]
            for value in set(column.tolist()):
                assert any(math.isclose(value, v, rel_tol=1e-12, abs_tol=1e-12) for v in every)
            stderr = column.std(ddof=1) / math.sqrt(samples)
            assert abs(column.mean() - mean) <= 5 * stderr + 1e-12, (spec.name, qid)


@settings(PROPERTY, max_examples=60)
@given(cases(), options)
def test_aware_value_is_the_mean_over_orderings(case, options):
    """11pt_avg's aware value: the mean of the levels' exact IPrec values (linearity),
    which is the mean over every ordering of the levels' mean; ndcg_rel's: sums over
    pairs of docs (tiecore.measures.ndcgrel.ndcg_rel_aware); G's: sums over the gains
    above each doc (tiecore.measures.g.g_aware)."""
    specs = [spec for spec in SPECS if spec.family in VALUE_ONLY + SPREAD]
    run, qrels = case.run_frame(), case.qrels_frame()
    frame = tiecore.evaluate(
        {"r": run}, qrels, [s.name for s in specs], per_query=True, ties="aware", **options
    )
    rows = frame[frame["qid"].notna()]
    got = {(q, m): v for q, m, v in zip(rows["qid"], rows["measure"], rows["value"], strict=True)}
    for qid in case.both_qids:
        q = case.queries[qid]
        expected = ref.reference_aware(specs, q.scores, q.labels, q.levels, **options)
        for spec, value in expected.items():
            name = str(Measure.parse(spec.name))
            assert got[qid, name] == pytest.approx(value, rel=1e-9, abs=1e-12), (qid, name)


@settings(PROPERTY, max_examples=80)
@given(cases(max_docs=8), options)
def test_spread_is_every_orderings(case, options):
    """ndcg_rel's and G's variance, min and max (tiecore.measures.ndcgrel.ndcg_rel_spread,
    tiecore.measures.g.g_spread) over every ordering, as evaluate_spread shows them
    (reference.consistent_spread)."""
    specs = [spec for spec in SPECS if spec.family in SPREAD]
    run, qrels = case.run_frame(), case.qrels_frame()
    frame = tiecore.evaluate_spread(run, qrels, [s.name for s in specs], per_query=True, **options)
    rows = frame[frame["qid"].notna()]
    got = {(row.qid, row.measure): row for row in rows.itertuples(index=False)}
    for qid in case.both_qids:
        q = case.queries[qid]
        every = ref.label_sequences(q.scores, q.labels)
        total = sum(every.values())
        for spec in specs:
            pairs = [(ref.measure(spec, s, q.levels, **options), c) for s, c in every.items()]
            mean = math.fsum(v * c for v, c in pairs) / total
            var = math.fsum((v - mean) ** 2 * c for v, c in pairs) / total
            values = [v for v, _ in pairs]
            var, low, high = ref.consistent_spread(mean, var, min(values), max(values))
            row = got[qid, str(Measure.parse(spec.name))]
            assert row.value == pytest.approx(mean, rel=1e-9, abs=1e-12), (qid, spec.name)
            assert row.var == pytest.approx(var, rel=1e-9, abs=1e-12), (qid, spec.name)
            assert row.min == pytest.approx(low, rel=1e-12, abs=1e-12), (qid, spec.name)
            assert row.max == pytest.approx(high, rel=1e-12, abs=1e-12), (qid, spec.name)
            assert (row.var == 0) == (row.min == row.max), (qid, spec.name)


@pytest.mark.parametrize(
    ("name", "reason"),
    [("NDCGRel(gains=1:-1)", "negative gain"), ("NDCGRel(gains=-1:2)", "more docs of positive")],
)
def test_ndcg_rel_sums_that_may_be_negative_are_refused(name, reason):
    """trec_eval's ndcg_rel is 0 where its sum is not positive: a negative gain, or more
    docs of positive gain retrieved than the ideal holds (an unjudged doc's gain), breaks
    the sum of pairs, so the aware value and the spread refuse it in one line."""
    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "level": [1, 0]})
    run = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    for call in (tiecore.evaluate, tiecore.evaluate_spread):
        options = {"ties": "aware"} if call is tiecore.evaluate else {}
        with pytest.raises(InputError, match=reason) as error:
            call(run, qrels, [name], **options)
        assert "\n" not in str(error.value)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.family not in EXACT], ids=str)
def test_aware_is_refused_with_the_reason(spec):
    qrels = {"qid": ["1", "1"], "docno": ["a", "b"], "level": [1, 0]}
    run = {"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 1.0]}
    with pytest.raises(InputError) as error:
        tiecore.evaluate(pd.DataFrame(run), pd.DataFrame(qrels), [spec.name], ties="aware")
    message = str(error.value)
    assert "\n" not in message and "no exact value under ties='aware'" in message


@pytest.mark.parametrize("depth", [None, 8])
@pytest.mark.parametrize("name", ["G", "G(gains=1:3;2:9)", "NDCGRel", "NDCGRel(gains=0:0.5)"])
def test_spread_of_a_large_group_is_every_orderings(name, depth):
    """A group of 11 docs (three labels, 11,550 arrangements) between two fixed docs: the
    four-row moments of ndcg_rel and G's backward pass beyond the sizes hypothesis draws."""
    labels = [2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 1]  # the first and last alone
    scores = [3.0, *[2.0] * 11, 1.0]
    docnos = [f"d{i:02d}" for i in range(len(labels))]
    levels = [*labels, 2, 1, 0]
    qrels = pd.DataFrame({"qid": "q", "docno": [*docnos, "x1", "x2", "x3"], "level": levels})
    run = pd.DataFrame({"qid": "q", "docno": docnos, "score": scores})
    frame = tiecore.evaluate_spread(run, qrels, [name], per_query=True, depth=depth)
    row = frame[frame["qid"] == "q"].iloc[0]
    family, _, gains = name.partition("(gains=")
    spec = ref.Spec(family, params=(("gains", gains[:-1]),) if gains else ())
    every = ref.label_sequences(scores, labels)
    pairs = [(ref.measure(spec, s, levels, depth=depth), c) for s, c in every.items()]
    total = sum(every.values())
    mean = math.fsum(v * c for v, c in pairs) / total
    var = math.fsum((v - mean) ** 2 * c for v, c in pairs) / total
    values = [v for v, _ in pairs]
    assert row["value"] == pytest.approx(mean, rel=1e-12)
    assert row["var"] == pytest.approx(var, rel=1e-10)
    assert (row["min"], row["max"]) == pytest.approx((min(values), max(values)), rel=1e-12)


def test_g_spread_is_refused_past_the_time_budget(monkeypatch):
    """G's backward pass is priced first (tiecore.measures.g._check_spread_cost): past the
    budget a one-line refusal names what fits (its mean without the spread)."""
    qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "level": [2, 1, 0]})
    run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    monkeypatch.setenv("TIECORE_TIME_BUDGET", "1e-6")
    with pytest.raises(Refusal, match="G's exact variance and bounds") as error:
        tiecore.evaluate_spread(run, qrels, ["G"])
    assert "\n" not in str(error.value) and "without the spread" in str(error.value)
    assert tiecore.evaluate(run, qrels, ["G"], ties="aware")["value"].notna().all()

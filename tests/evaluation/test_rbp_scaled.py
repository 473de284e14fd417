"""RBP's graded gain as rbp_eval and TREC-COVID computed it: ``gain=scaled`` (``rbp.p=0.5``).

The gain of a doc is its level / the largest level of the whole qrels.  Checked in the
three modes against the brute force of tests/reference.py (every ordering, and the
tie-break policies' orderings), its spread against the enumeration, and against an
independent identity: ``RBP(p,gain=scaled) = RBP(p) / top`` (linear gain) in every mode.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import cases, depths, rel_levels
from test_against_bruteforce import as_table, assert_tables_match, reference_table, run_tiecore

import tiecore
from tiecore.errors import InputError
from tiecore.measures import Measure, parse_measures
from tiecore.spread import evaluate_spread

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCALED = [
    ref.Spec("RBP", k, "scaled", (("p", p),)) for k in (None, 1, 3, 5) for p in ("0.5", "0.9")
]
options = st.fixed_dictionaries(
    {"rel_level": rel_levels, "depth": depths, "complete": st.booleans()}
)


@PROPERTY
@given(cases(), options)
def test_aware_equals_the_mean_over_all_orderings(case, options):
    got = as_table(run_tiecore(case, SCALED, ties="aware", **options))
    expected = reference_table(case, SCALED, None, **options)
    assert_tables_match(got, expected, 1e-12, case, complete=options["complete"], label="aware")


@PROPERTY
@given(cases(), options, st.sampled_from(ref.DETERMINISTIC_POLICIES))
def test_oblivious_equals_the_policys_ordering(case, options, policy):
    got = as_table(run_tiecore(case, SCALED, ties="oblivious", tiebreak=policy, **options))
    expected = reference_table(case, SCALED, policy, **options)
    assert_tables_match(got, expected, 1e-12, case, complete=options["complete"], label=policy)


@settings(PROPERTY, max_examples=30, derandomize=True)
@given(cases(max_queries=3), options)
def test_sampled_mean_is_within_five_stderr_of_aware(case, options):
    sampled = run_tiecore(case, SCALED, ties="sampled", samples=2000, seed=3, **options)
    mean, stderr = as_table(sampled), as_table(sampled, "stderr")
    expected = reference_table(case, SCALED, None, **options)
    for key, value in expected.items():
        assert abs(mean[key] - value) <= 5 * stderr[key] + 1e-12, (key, mean[key], value)


@settings(PROPERTY, max_examples=80)
@given(cases(max_docs=8), rel_levels, depths)
def test_spread_equals_the_enumeration(case, rel_level, depth):
    run, qrels = case.run_frame(), case.qrels_frame()
    names = [spec.name for spec in SCALED]
    frame = evaluate_spread(run, qrels, names, rel_level=rel_level, depth=depth, per_query=True)
    rows = frame.set_index(["qid", "measure"])
    for qid in case.both_qids:
        q = case.queries[qid]
        sequences = ref.label_sequences(q.scores, q.labels)
        total = sum(sequences.values())
        for spec in SCALED:
            pairs = [
                (ref.measure(spec, s, q.levels, rel_level=rel_level, depth=depth,
                             top_level=case.top_level), c)
                for s, c in sequences.items()
            ]  # fmt: skip
            mean = math.fsum(v * c for v, c in pairs) / total
            var = math.fsum((v - mean) ** 2 * c for v, c in pairs) / total
            row = rows.loc[(qid, spec.name)]
            assert row["value"] == pytest.approx(mean, abs=1e-12)
            assert row["var"] == pytest.approx(var, abs=1e-12)
            assert row["min"] == pytest.approx(min(v for v, _ in pairs), abs=1e-12)
            assert row["max"] == pytest.approx(max(v for v, _ in pairs), abs=1e-12)
            assert row["min"] <= row["value"] <= row["max"]


@settings(PROPERTY, max_examples=60)
@given(cases(), st.sampled_from(["aware", "oblivious", "sampled"]), rel_levels)
def test_scaled_is_the_linear_gain_over_the_qrels_largest_level(case, ties, rel_level):
    """TREC-COVID's column is tiecore's RBP(p=0.5) / 2 where the largest level is 2."""
    run, qrels = case.run_frame(), case.qrels_frame()
    top = case.top_level
    extra = {"samples": 500, "seed": 1} if ties == "sampled" else {}
    names = ["RBP(p=0.5)", "rbp.p=0.5", "RBP(p=0.9,gain=scaled)@3", "RBP(p=0.9)@3"]
    frame = tiecore.evaluate(
        run, qrels, names, ties=ties, rel_level=rel_level, per_query=True, **extra
    )
    table = frame.set_index(["qid", "measure"])["value"]
    for qid in table.index.get_level_values(0).unique():
        for linear, scaled in (("RBP(p=0.5)", "RBP(p=0.5,gain=scaled)"),
                               ("RBP(p=0.9)@3", "RBP(p=0.9,gain=scaled)@3")):  # fmt: skip
            want = table[qid, linear] / top if top > 0 else 0.0
            assert table[qid, scaled] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_trec_style_names():
    assert str(Measure.parse("rbp.p=0.5")) == "RBP(p=0.5,gain=scaled)"
    assert str(Measure.parse("RBP.p=0.95@10")) == "RBP(p=0.95,gain=scaled)@10"
    assert Measure.parse("rbp") == Measure.parse("RBP(p=0.8)")  # the bare name: ir_measures'
    assert parse_measures(["rbp.p=0.5", "RBP(p=0.5,gain=scaled)"]) == [Measure.parse("rbp.p=0.5")]
    for bad in ("rbp.p=1.5", "rbp.p=x", "RBP(gain=level)"):
        with pytest.raises(InputError):
            Measure.parse(bad)


def test_a_hand_example():
    """Levels 2, 1, 2 at ranks 1-3 (ranks 2 and 3 tied), largest level 2, p = 0.5:
    oblivious in file order 1/2 (2/2 + 1/2 * 1/2 + 2/2 * 1/4) = 0.75, aware
    1/2 (1 + 1.5/2 * (1/2 + 1/4)) = 0.78125."""
    run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [3.0, 2.0, 2.0]})
    qrels = pd.DataFrame({"qid": "1", "docno": list("abc"), "level": [2, 1, 2]})
    oblivious = tiecore.evaluate(run, qrels, "rbp.p=0.5", ties="oblivious", tiebreak="file_order")
    aware = tiecore.evaluate(run, qrels, "rbp.p=0.5")
    assert oblivious["value"].item() == 0.75 and aware["value"].item() == 0.78125

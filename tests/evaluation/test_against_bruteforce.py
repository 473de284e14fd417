"""tiecore's measures against brute-force enumeration of all orderings.

``reference.py`` holds slow, obvious implementations written from the definitions;
``strategies.py`` generates small tie-heavy runs. Each property test evaluates one
generated case with tiecore and compares every measure, for every query and for the
"all" row, with the reference:

- ``ties="aware"`` equals the mean over all orderings consistent with the scores;
- ``ties="oblivious"`` equals the one ordering each tie-break policy gives, and
  ``"random"`` gives the value of some valid ordering, reproducibly;
- optimistic / pessimistic are the max / min over all orderings and bracket aware;
- ``ties="sampled"`` has its mean within 5 standard errors of the aware value.

The reference itself is checked against the literal enumeration of orderings,
pytrec_eval (through ir_measures) on tie-free rankings, and trec_eval's own
expected outputs.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import reference as ref
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from shared_data import DATA, TREC_EVAL
from strategies import FLOAT32_COLLIDING, HUGE_LEVELS, Case, cases, depths, rel_levels

import tiecore
from tiecore.engine import judgments as jm

SPECS = ref.all_specs(range(1, 11))
RUN = "run"
AWARE_TOL = 1e-9
OBLIVIOUS_TOL = 1e-12

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: run-only queries are generated on purpose; tiecore warns that it skips them
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")

#: The measures of one example: every family without a cutoff, and every family at
#: one to three cutoffs in 1..10 (often beyond the 1-9 retrieved docs). Drawing the
#: cutoffs keeps each tiecore call small; over the examples every cutoff is covered.
measure_sets = st.lists(st.integers(1, 10), min_size=1, max_size=3, unique=True).map(ref.all_specs)

Table = dict[tuple[str, str], float]


# --------------------------------------------------------------------------- helpers


def run_tiecore(case: Case, specs: list[ref.Spec], **options) -> pd.DataFrame:
    """tiecore.evaluate on the case, the given measures, per query."""
    run, qrels = case.run_frame(), case.qrels_frame()
    note(f"run:\n{run.to_string()}\nqrels:\n{qrels.to_string()}\noptions: {options}")
    names = [spec.name for spec in specs]
    return tiecore.evaluate({RUN: run}, qrels, names, per_query=True, **options)


def as_table(frame: pd.DataFrame, column: str = "value") -> Table:
    """(qid, measure) -> value of the run's rows."""
    rows = frame[frame["run"] == RUN]
    keys = zip(
        rows["qid"].fillna("all").astype(str),  # summary (qid None) as "all"
        rows["measure"].astype(str),
        strict=True,
    )
    table = dict(zip(keys, rows[column].astype(float), strict=True))
    assert len(table) == len(rows), "duplicate (qid, measure) rows"
    return table


def reference_table(
    case: Case,
    specs: list[ref.Spec],
    tiebreak: str | None,
    *,
    rel_level: int,
    depth: int | None,
    complete: bool,
) -> Table:
    """Reference values per query (aware when ``tiebreak`` is None) plus the "all" row."""
    table: Table = {}
    for qid in case.both_qids:
        q = case.queries[qid]
        if tiebreak is None:
            values = ref.reference_aware(
                specs, q.scores, q.labels, q.levels,
                rel_level=rel_level, depth=depth, top_level=case.top_level,
            )  # fmt: skip
        else:
            values = ref.reference_oblivious(
                specs, q.scores, q.docnos, q.labels, q.levels, tiebreak,
                rel_level=rel_level, depth=depth, top_level=case.top_level,
            )  # fmt: skip
        table |= {(qid, spec.name): value for spec, value in values.items()}
    # under -c a qrels query the run lacks is an empty ranking (trec_eval -q -c prints it)
    missing = set(case.qrels_qids) - set(case.run_qids) if complete else set()
    for qid in missing:
        for spec in specs:
            table[qid, spec.name] = ref.measure(
                spec, [], case.queries[qid].levels, rel_level=rel_level, depth=depth
            )
    for spec in specs:
        per_query = {qid: table[qid, spec.name] for qid in case.both_qids}
        table["all", spec.name] = ref.mean_over_queries(
            per_query, case.run_qids, case.qrels_qids, complete=complete,
            empty={qid: table[qid, spec.name] for qid in missing},
        )  # fmt: skip
    return table


def assert_tables_match(
    got: Table, expected: Table, tol: float, case: Case, *, complete: bool, label: str
) -> None:
    """Every expected row present and within ``tol``.

    Extra rows are allowed only for qrels-only queries under ``complete`` (trec_eval
    -q -c prints them) and must then be 0 (``expected`` holds them when it knows them).
    """
    problems = []
    for key, value in expected.items():
        if key not in got:
            problems.append(f"{label} missing row qid={key[0]!r} measure={key[1]}")
        elif not abs(got[key] - value) <= tol:
            problems.append(
                f"{label} qid={key[0]!r} {key[1]}: tiecore {got[key]!r} reference {value!r}"
            )
    qrels_only = set(case.qrels_qids) - set(case.run_qids)
    for key, value in got.items():
        if key in expected:
            continue
        if not (complete and key[0] in qrels_only and value == 0):
            problems.append(f"{label} unexpected row qid={key[0]!r} {key[1]} = {value!r}")
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:40])


options = st.fixed_dictionaries(
    {"rel_level": rel_levels, "depth": depths, "complete": st.booleans()}
)


# ----------------------------------------------------------------- property tests


@PROPERTY
@given(cases(), measure_sets, options)
def test_aware_equals_mean_over_all_orderings(case, specs, options):
    got = as_table(run_tiecore(case, specs, ties="aware", **options))
    expected = reference_table(case, specs, None, **options)
    assert_tables_match(got, expected, AWARE_TOL, case, complete=options["complete"], label="aware")


@settings(PROPERTY, max_examples=150)
@given(cases(), measure_sets, options, st.sampled_from(ref.DETERMINISTIC_POLICIES))
def test_oblivious_equals_the_policys_ordering(case, specs, options, policy):
    got = as_table(run_tiecore(case, specs, ties="oblivious", tiebreak=policy, **options))
    expected = reference_table(case, specs, policy, **options)
    assert_tables_match(
        got, expected, OBLIVIOUS_TOL, case, complete=options["complete"], label=policy
    )


#: Runs whose scores tie in float32 but not in float64 (trec_eval 9 vs the scores as given).
colliding_cases = cases(score_pool=FLOAT32_COLLIDING, max_score_values=6)


@settings(PROPERTY, max_examples=100)
@given(colliding_cases, measure_sets, options, st.sampled_from(ref.DETERMINISTIC_POLICIES))
def test_oblivious_with_float32_collisions(case, specs, options, policy):
    """trec_eval breaks float32 ties by docno; every other policy sees the float64 scores."""
    got = as_table(run_tiecore(case, specs, ties="oblivious", tiebreak=policy, **options))
    expected = reference_table(case, specs, policy, **options)
    assert_tables_match(
        got, expected, OBLIVIOUS_TOL, case, complete=options["complete"], label=policy
    )


@settings(PROPERTY, max_examples=60)
@given(colliding_cases, measure_sets, options)
def test_aware_ties_are_the_scores_as_given(case, specs, options):
    got = as_table(run_tiecore(case, specs, ties="aware", **options))
    expected = reference_table(case, specs, None, **options)
    assert_tables_match(got, expected, AWARE_TOL, case, complete=options["complete"], label="aware")


#: nDCG at every cutoff and without one, both gains
NDCG_SPECS = [spec for spec in SPECS if spec.family == "nDCG"]
huge_level_cases = cases(level_pool=HUGE_LEVELS, max_label_kinds=4)


@settings(PROPERTY, max_examples=100)
@given(huge_level_cases, options, st.sampled_from((None, *ref.DETERMINISTIC_POLICIES)))
def test_exp_gain_is_exact_for_huge_levels(case, options, policy):
    """Levels up to 2000: gains 2**level - 1 far past float64, compared with exact fractions."""
    ties = {"ties": "aware"} if policy is None else {"ties": "oblivious", "tiebreak": policy}
    got = as_table(run_tiecore(case, NDCG_SPECS, **ties, **options))
    expected = reference_table(case, NDCG_SPECS, policy, **options)
    assert all(math.isfinite(value) for value in got.values())
    tol = AWARE_TOL if policy is None else OBLIVIOUS_TOL
    assert_tables_match(got, expected, tol, case, complete=options["complete"], label=str(policy))


@settings(PROPERTY, max_examples=60)
@given(huge_level_cases, options)
def test_unnormalised_exp_gains_are_exact_or_infinite(case, options):
    """DCG and CG take 2**level - 1 as is: the float of the exact sum, or inf past float64
    (and inf as soon as one gain is, from level 1024)."""
    names = ["DCG(gain=exp)", "DCG(gain=exp)@3", "CG(gain=exp)@2"]
    got = as_table(run_tiecore(case, [ref.Spec.parse(n) for n in names], ties="oblivious",
                               **options))  # fmt: skip
    depth = options["depth"]
    for qid in case.both_qids:
        q = case.queries[qid]
        order = ref.order_indices(q.scores, q.docnos, q.labels, "trec_eval")
        labels = [q.labels[i] for i in order][:depth]
        for name, k, discounted in zip(names, (None, 3, 2), (True, True, False), strict=True):
            top = labels[:k]
            if discounted:
                exact = ref.exact_dcg(top, "exp")
            else:
                exact = sum(
                    (Fraction(2 ** max(lb, 0) - 1) for lb in top if lb is not None), Fraction(0)
                )
            value = got[qid, name]
            if max((lb for lb in top if lb is not None), default=0) >= 1024:
                assert value == math.inf, (qid, name)  # a gain past float64 (README)
            elif exact > Fraction(2) ** 1023:
                assert value == math.inf or value == pytest.approx(float(exact), rel=1e-12)
            else:
                assert value == pytest.approx(float(exact), rel=1e-12, abs=1e-300), (qid, name)


@settings(PROPERTY, max_examples=100)
@given(cases(), measure_sets, options, st.integers(0, 2**31 - 1))
def test_random_tiebreak_is_a_valid_ordering_and_reproducible(case, specs, options, seed):
    first = run_tiecore(case, specs, ties="oblivious", tiebreak="random", seed=seed, **options)
    again = run_tiecore(case, specs, ties="oblivious", tiebreak="random", seed=seed, **options)
    pd.testing.assert_frame_equal(first, again)
    got = as_table(first)
    rel_level, depth = options["rel_level"], options["depth"]
    top = case.top_level
    problems = []
    for qid in case.both_qids:
        q = case.queries[qid]
        # one ordering of the query must give all of its measures at once
        values = [got.get((qid, spec.name), math.nan) for spec in specs]
        if not any(
            all(
                abs(
                    value
                    - ref.measure(
                        spec, seq, q.levels, rel_level=rel_level, depth=depth, top_level=top
                    )
                )
                <= OBLIVIOUS_TOL
                for spec, value in zip(specs, values, strict=True)
            )
            for seq in ref.label_sequences(q.scores, q.labels)
        ):
            possible = ref.reference_range(
                specs, q.scores, q.labels, q.levels,
                rel_level=rel_level, depth=depth, top_level=top,
            )  # fmt: skip
            problems.append(f"qid={qid!r}: no single ordering gives all of its values")
            problems += [
                f"  {spec}: {value!r} (possible: {possible[spec]})"
                for spec, value in zip(specs, values, strict=True)
            ]
    for spec in specs:
        per_query = {qid: got[qid, spec.name] for qid in case.both_qids}
        missing = set(case.qrels_qids) - set(case.run_qids) if options["complete"] else ()
        mean = ref.mean_over_queries(
            per_query, case.run_qids, case.qrels_qids, complete=options["complete"],
            empty={qid: got[qid, spec.name] for qid in missing},
        )  # fmt: skip
        if not abs(got["all", spec.name] - mean) <= OBLIVIOUS_TOL:
            problems.append(f"all {spec}: {got['all', spec.name]!r} != mean of queries {mean!r}")
    assert not problems, "\n".join(problems[:40])


@settings(PROPERTY, max_examples=80)
@given(cases(), measure_sets, options)
def test_optimistic_and_pessimistic_are_max_and_min(case, specs, options):
    rel_level, depth = options["rel_level"], options["depth"]
    # (Judged and RBP's residual count judged docs, which these orders do not sort; nDCG's
    # local ideal rises with the gains they push into the top k)
    specs = [spec for spec in specs if ref.policies_are_extremes(spec)]
    # the reference's two policies really are the extremes of every measure ...
    for qid in case.both_qids:
        q = case.queries[qid]
        possible = ref.reference_range(
            specs, q.scores, q.labels, q.levels,
            rel_level=rel_level, depth=depth, top_level=case.top_level,
        )  # fmt: skip
        for policy, pick in (("optimistic", max), ("pessimistic", min)):
            values = ref.reference_oblivious(
                specs, q.scores, q.docnos, q.labels, q.levels, policy,
                rel_level=rel_level, depth=depth, top_level=case.top_level,
            )  # fmt: skip
            for spec in specs:
                assert values[spec] == pick(possible[spec]), (qid, policy, spec)
    # ... and tiecore's bracket its aware values (their equality with the reference
    # policies is test_oblivious_equals_the_policys_ordering's job)
    best = as_table(run_tiecore(case, specs, ties="oblivious", tiebreak="optimistic", **options))
    worst = as_table(run_tiecore(case, specs, ties="oblivious", tiebreak="pessimistic", **options))
    aware = as_table(run_tiecore(case, specs, ties="aware", **options))
    problems = [
        f"{key}: optimistic {best[key]!r} aware {value!r} pessimistic {worst[key]!r}"
        for key, value in aware.items()
        if not best[key] + AWARE_TOL >= value >= worst[key] - AWARE_TOL
    ]
    assert not problems, "\n".join(problems[:40])


SAMPLES = 2000


# derandomized: a statistical test must not flake, so the examples are fixed
@settings(PROPERTY, max_examples=40, derandomize=True)
@given(cases(max_queries=3), measure_sets, options)
def test_sampled_mean_is_within_five_stderr_of_aware(case, specs, options):
    sampled = run_tiecore(case, specs, ties="sampled", samples=SAMPLES, seed=7, **options)
    again = run_tiecore(case, specs, ties="sampled", samples=SAMPLES, seed=7, **options)
    pd.testing.assert_frame_equal(sampled, again)
    mean, std, stderr = (as_table(sampled, column) for column in ("value", "std", "stderr"))
    expected = reference_table(case, specs, None, **options)
    problems = []
    for key, value in expected.items():
        if key not in mean:
            problems.append(f"missing row {key}")
            continue
        if not (std[key] >= 0 and math.isclose(stderr[key], std[key] / math.sqrt(SAMPLES))):
            problems.append(f"{key}: std {std[key]!r} stderr {stderr[key]!r}")
        if not abs(mean[key] - value) <= 5 * stderr[key] + 1e-12:
            problems.append(
                f"{key}: sampled mean {mean[key]!r} (stderr {stderr[key]!r}) aware {value!r}"
            )
    assert not problems, "\n".join(problems[:40])


@settings(PROPERTY, max_examples=20, derandomize=True)
@given(cases(max_queries=3, level_pool=HUGE_LEVELS), options)
def test_sampled_exp_gain_for_huge_levels(case, options):
    sampled = run_tiecore(case, NDCG_SPECS, ties="sampled", samples=SAMPLES, seed=3, **options)
    mean, stderr = as_table(sampled), as_table(sampled, "stderr")
    expected = reference_table(case, NDCG_SPECS, None, **options)
    problems = [
        f"{key}: sampled mean {mean[key]!r} (stderr {stderr[key]!r}) aware {value!r}"
        for key, value in expected.items()
        if not abs(mean[key] - value) <= 5 * stderr[key] + 1e-12
    ]
    assert not problems, "\n".join(problems[:40])


@settings(PROPERTY, max_examples=30)
@given(cases(distinct_scores=True), measure_sets, options)
def test_without_ties_every_mode_agrees(case, specs, options):
    expected = reference_table(case, specs, "trec_eval", **options)
    complete = options["complete"]
    aware = as_table(run_tiecore(case, specs, ties="aware", **options))
    assert_tables_match(aware, expected, OBLIVIOUS_TOL, case, complete=complete, label="aware")
    for policy in (*ref.DETERMINISTIC_POLICIES, "random"):
        got = as_table(run_tiecore(case, specs, ties="oblivious", tiebreak=policy, **options))
        assert_tables_match(got, expected, OBLIVIOUS_TOL, case, complete=complete, label=policy)


# ------------------------------------------------------- worked examples by hand


def one_query(rows: list[tuple[str, float]], qrels: dict[str, int]) -> tuple:
    """A single-query run and qrels frames."""
    run = pd.DataFrame([("q", d, s) for d, s in rows], columns=["qid", "docno", "score"])
    judged = pd.DataFrame(
        [("q", d, lv) for d, lv in qrels.items()], columns=["qid", "docno", "level"]
    )
    return run.astype({"score": "float64"}), judged.astype({"level": "int64"})


def aware_value(run: pd.DataFrame, qrels: pd.DataFrame, name: str) -> float:
    frame = tiecore.evaluate({RUN: run}, qrels, [name], ties="aware", per_query=True)
    return as_table(frame)["q", name]


def test_hand_example_precision_with_a_tie_straddling_the_cutoff():
    # one group of n_c = 4 tied docs, r_c = 2 relevant, t_c = 0 docs above it, k = 2:
    # the paper's tie-aware P@k = (k - t_c) * r_c / n_c / k
    run, qrels = one_query([("a", 1), ("b", 1), ("c", 1), ("d", 1)], {"a": 1, "c": 1, "b": 0})
    k, t_c, n_c, r_c = 2, 0, 4, 2
    expected = (k - t_c) * r_c / n_c / k
    assert aware_value(run, qrels, "P@2") == pytest.approx(expected, abs=1e-12)
    p2 = ref.Spec("P", 2)
    mine = ref.reference_aware([p2], [1, 1, 1, 1], [1, 0, 1, None], [1, 0, 1])[p2]
    assert mine == pytest.approx(expected, abs=1e-12)
    # and the oblivious trec_eval order d, c, b, a puts one relevant doc in the top 2
    frame = tiecore.evaluate({RUN: run}, qrels, "P@2", ties="oblivious", per_query=True)
    assert as_table(frame)["q", "P@2"] == pytest.approx(1 / 2, abs=1e-12)


def test_hand_example_reciprocal_rank_after_a_nonrelevant_top_doc():
    # x alone on top (non-relevant), then 3 tied docs of which one is relevant: the
    # relevant doc is equally likely at ranks 2, 3, 4
    run, qrels = one_query([("x", 5), ("a", 1), ("b", 1), ("c", 1)], {"b": 1, "x": 0})
    expected = (1 / 2 + 1 / 3 + 1 / 4) / 3
    assert aware_value(run, qrels, "RR") == pytest.approx(expected, abs=1e-12)
    # RR@3 loses the rank-4 case
    assert aware_value(run, qrels, "RR@3") == pytest.approx((1 / 2 + 1 / 3) / 3, abs=1e-12)


def test_hand_example_average_precision_and_ndcg_of_a_tied_pair():
    # a (level 2) and b (level 0) tied on top, c (level 1) below; rel_level 1: R = 2
    run, qrels = one_query([("a", 1), ("b", 1), ("c", 0)], {"a": 2, "b": 0, "c": 1})
    # order a, b, c: AP = (1 + 2/3) / 2; order b, a, c: AP = (1/2 + 2/3) / 2
    expected_ap = ((1 + 2 / 3) / 2 + (1 / 2 + 2 / 3) / 2) / 2
    assert aware_value(run, qrels, "AP") == pytest.approx(expected_ap, abs=1e-12)
    # DCG: a at rank 1 or 2 (gain 2), c at rank 3 (gain 1); ideal 2, 1 at ranks 1, 2
    ideal = 2 + 1 / math.log2(3)
    dcg_ab, dcg_ba = 2 + 1 / math.log2(4), 2 / math.log2(3) + 1 / math.log2(4)
    expected_ndcg = (dcg_ab + dcg_ba) / 2 / ideal
    assert aware_value(run, qrels, "nDCG") == pytest.approx(expected_ndcg, abs=1e-12)


def test_hand_example_bpref():
    # R = 2 (a, d), N = 2 (b, c); u unjudged. Order a, b, u, c, d ... with d tied to c:
    # a: no judged non-relevant above -> 1; d: above it b and (if c first) c -> 1 - 2/2,
    # else b only -> 1 - 1/2. Bpref = (1 + mean(0, 1/2)) / 2
    run, qrels = one_query(
        [("a", 4), ("b", 3), ("u", 2), ("c", 1), ("d", 1)], {"a": 1, "d": 1, "b": 0, "c": 0}
    )
    expected = (1 + (0 + 1 / 2) / 2) / 2
    assert aware_value(run, qrels, "Bpref") == pytest.approx(expected, abs=1e-12)


# ------------------------------------------------------------- the reference itself


@settings(max_examples=100, deadline=None)
@given(cases(max_queries=1, max_docs=6, max_label_kinds=4))
def test_label_sequences_count_every_ordering(case):
    q = case.queries[case.both_qids[0]]
    label_of = dict(zip(q.docnos, q.labels, strict=True))
    score_of = dict(zip(q.docnos, q.scores, strict=True))
    orders = list(ref.orderings(q.scores, q.docnos))
    assert len(orders) == len(set(orders)) == ref.count_orderings(q.scores)
    for order in orders:
        assert sorted(order) == sorted(q.docnos)
        scores = [score_of[d] for d in order]
        assert scores == sorted(scores, reverse=True)
    literal = Counter(tuple(label_of[d] for d in order) for order in orders)
    assert literal == ref.label_sequences(q.scores, q.labels)


PYTREC_FAMILIES = {"P": "P", "R": "R", "AP": "AP", "nDCG": "nDCG", "Rprec": "Rprec"}
PYTREC_FAMILIES |= {"Success": "Success", "Bpref": "Bpref", "RR": "RR"}
EXP_GAINS = "{1:1,2:3,3:7}"


def ir_measures_name(spec: ref.Spec, rel_level: int) -> str | None:
    """The ir_measures name of ``spec`` for the pytrec_eval provider (None: not there)."""
    if spec.family == "F1" or (spec.family == "RR" and spec.cutoff is not None):
        return None  # no F1@k; ir_measures' pytrec_eval RR@k ignores the cutoff
    if spec.family not in PYTREC_FAMILIES or spec.params:
        return None  # not a trec_eval measure (checked against other peers below)
    params = []
    if spec.family != "nDCG" and rel_level != 1:
        params.append(f"rel={rel_level}")
    if spec.gain == "exp":
        params.append(f"gains={EXP_GAINS}")
    name = spec.family + (f"({','.join(params)})" if params else "")
    return name + (f"@{spec.cutoff}" if spec.cutoff is not None else "")


@settings(max_examples=100, deadline=None)
@given(cases(distinct_scores=True, max_label_kinds=4), rel_levels)
def test_reference_agrees_with_pytrec_eval_without_ties(case, rel_level):
    names = {
        str(ir_measures.parse_measure(name)): spec
        for spec in SPECS
        if (name := ir_measures_name(spec, rel_level))
    }
    measures = [ir_measures.parse_measure(name) for name in names]
    # trec_eval reads uninitialized memory when all of a query's levels are negative
    # (pytrec_eval then crashes or hangs), so every qrels query also gets one judged
    # non-relevant doc that no run retrieves
    for qid in case.qrels_qids:
        case.queries[qid].qrels["~pad"] = 0
    qrels = [ir_measures.Qrel(*row) for row in case.qrels_frame().itertuples(index=False)]
    run = [ir_measures.ScoredDoc(*row) for row in case.run_frame().itertuples(index=False)]
    got = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.pytrec_eval.iter_calc(measures, qrels, run)
    }
    problems = []
    for qid in case.both_qids:
        q = case.queries[qid]
        values = ref.reference_oblivious(
            SPECS, q.scores, q.docnos, q.labels, q.levels, "trec_eval", rel_level=rel_level
        )
        for measure in measures:
            spec = names[str(measure)]
            if not abs(got[qid, str(measure)] - values[spec]) <= 1e-12:
                problems.append(
                    f"{qid} {measure}: pytrec_eval {got[qid, str(measure)]} ref {values[spec]}"
                )
    assert not problems, "\n".join(problems)


def trec_eval_spec(name: str) -> ref.Spec | None:
    """trec_eval's measure name -> Spec (None for measures the reference lacks)."""
    simple = {"map": "AP", "Rprec": "Rprec", "bpref": "Bpref", "recip_rank": "RR", "ndcg": "nDCG"}
    if name in simple:
        return ref.Spec(simple[name])
    prefixes = {"P_": "P", "recall_": "R", "ndcg_cut_": "nDCG", "map_cut_": "AP"}
    prefixes["success_"] = "Success"
    for prefix, family in prefixes.items():
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return ref.Spec(family, int(name[len(prefix) :]))
    return None


def read_trec(path: Path, columns: tuple[int, ...]) -> dict[str, list[tuple]]:
    """qid -> rows of the chosen whitespace-separated columns, in file order."""
    rows: dict[str, list[tuple]] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        rows.setdefault(fields[0], []).append(tuple(fields[i] for i in columns))
    return rows


@pytest.mark.parametrize(
    ("expected", "qrels_file", "run_file", "rel_level", "depth", "complete"),
    [
        ("out.test.aq", "qrels.test", "results.test", 1, None, False),
        ("out.test.aqc", "qrels.test", "results.trunc", 1, None, True),
        ("out.test.aqcM", "qrels.test", "results.trunc", 1, 100, True),
        ("out.test.aql", "qrels.rel_level", "results.test", 2, None, False),
    ],
)
def test_reference_reproduces_trec_eval_outputs(
    expected, qrels_file, run_file, rel_level, depth, complete
):
    assert TREC_EVAL.is_dir(), f"trec_eval's test files are not at {TREC_EVAL}"
    qrels = {
        qid: {docno: int(level) for docno, level in rows}
        for qid, rows in read_trec(TREC_EVAL / qrels_file, (2, 3)).items()
    }
    run = read_trec(TREC_EVAL / run_file, (2, 4))
    per_query: dict[tuple[str, ref.Spec], float] = {}
    for line in (TREC_EVAL / expected).read_text().splitlines():
        name, qid, value = line.split()
        spec = trec_eval_spec(name)
        if spec is not None:
            per_query[qid, spec] = float(value)
    mine: dict[tuple[str, ref.Spec], float] = {}
    for (qid, spec), value in per_query.items():
        if qid == "all":
            continue
        rows = run.get(qid, [])
        docnos = [docno for docno, _ in rows]
        scores = [float(score) for _, score in rows]
        labels = [qrels[qid].get(docno) for docno in docnos]
        levels = list(qrels[qid].values())
        mine[qid, spec] = ref.reference_oblivious(
            [spec], scores, docnos, labels, levels, "trec_eval", rel_level=rel_level, depth=depth
        )[spec]
        assert mine[qid, spec] == pytest.approx(value, abs=5e-5), (qid, spec, mine, value)
    assert len(mine) > 100
    for (qid, spec), value in per_query.items():
        if qid == "all":
            values = {q: mine[q, spec] for q in run if q in qrels}
            mean = ref.mean_over_queries(values, run, qrels, complete=complete)
            assert mean == pytest.approx(value, abs=5e-5), (spec, mean, value)


@settings(max_examples=60, deadline=None)
@given(cases(max_label_kinds=4), st.sampled_from(["string", "large_string"]))
def test_docno_lookup_survives_hash_collisions(case, kind):
    """Judgments.docno_codes equals arrow's exact index_in, even with a hash that collides."""
    qrels, run = case.qrels_frame(), case.run_frame()
    docno = pa.array(run["docno"].tolist(), getattr(pa, kind)())
    values = jm.Judgments.from_qrels(qrels)._docnos
    exact = pc.index_in(docno, value_set=values)
    expected = exact.is_valid().to_numpy(zero_copy_only=False), exact.fill_null(0).to_numpy()
    real = jm.docno_hashes
    for hashes in (real, lambda strings: real(strings) % np.uint64(3)):
        judgments = jm.Judgments.from_qrels(qrels)
        original, jm.docno_hashes = jm.docno_hashes, hashes
        try:
            code, known = judgments.docno_codes(docno)
        finally:
            jm.docno_hashes = original
        np.testing.assert_array_equal(known, expected[0])
        np.testing.assert_array_equal(code, np.where(expected[0], expected[1], 0))


# ------------------------------------------------- the seeds' measures against peers

#: (run, qrels): tie-heavy Robust03 runs and trec_eval's own test files
PEER_DATA = [
    ("robust03/runs/input.rutcor03100.gz", "robust03/qrels.txt"),
    ("robust03/runs/input.MU03rob01.gz", "robust03/qrels.txt"),
    ("trec_eval_tests/results.test", "trec_eval_tests/qrels.test"),
]


def peer_inputs(run_file: str, qrels_file: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    assert (DATA / run_file).exists(), f"{DATA / run_file} is missing"
    return tiecore.read_run(DATA / run_file), tiecore.read_qrels(DATA / qrels_file)


def per_query(frame: pd.DataFrame) -> dict[tuple[str, str], float]:
    rows = frame[frame["qid"].notna()]
    return dict(zip(zip(rows["qid"], rows["measure"], strict=True), rows["value"], strict=True))


@pytest.mark.parametrize(("run_file", "qrels_file"), PEER_DATA)
def test_judged_equals_ir_measures(run_file, qrels_file):
    """ir_measures' Judged@k (its own provider; ties by docno ascending), at full precision."""
    run, qrels = peer_inputs(run_file, qrels_file)
    names = ["Judged@5", "Judged@10", "Judged@100", "Judged"]
    got = per_query(tiecore.evaluate(run, qrels, names, ties="oblivious", tiebreak="docno_asc",
                                     per_query=True))  # fmt: skip
    measures = [ir_measures.parse_measure(name) for name in names]
    qrels_iter = [ir_measures.Qrel(q, d, int(lv)) for q, d, lv in qrels.itertuples(index=False)]
    run_iter = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in run.itertuples(index=False)]
    expected = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.judged.iter_calc(measures, qrels_iter, run_iter)
    }
    assert len(expected) >= 3 * len(names)  # trec_eval's test files hold 3 queries
    assert {key: got[key] for key in expected} == expected


@pytest.mark.parametrize(("run_file", "qrels_file"), PEER_DATA)
@pytest.mark.parametrize("gain", ["linear", "exp"])
def test_aware_dcg_equals_sklearns_tie_averaged_dcg(run_file, qrels_file, gain):
    """scikit-learn's dcg_score averages the gains of tied docs (ignore_ties=False): the
    tie-aware DCG@k, computed independently."""
    from sklearn.metrics import dcg_score

    run, qrels = peer_inputs(run_file, qrels_file)
    names = [("DCG" if gain == "linear" else "DCG(gain=exp)") + f"@{k}" for k in (1, 10, 100)]
    got = per_query(tiecore.evaluate(run, qrels, names, ties="aware", per_query=True))
    rows = run.merge(qrels, on=["qid", "docno"], how="left")
    rows = rows[rows["qid"].isin(set(qrels["qid"]))]
    levels = np.maximum(rows["level"].fillna(0).to_numpy(), 0)
    rows = rows.assign(gain=levels if gain == "linear" else 2.0**levels - 1)
    checked = 0
    for qid, query in rows.groupby("qid"):
        gains, scores = [query["gain"].to_numpy()], [query["score"].to_numpy()]
        for k, name in zip((1, 10, 100), names, strict=True):
            expected = dcg_score(gains, scores, k=k, ignore_ties=False)
            assert got[qid, name] == pytest.approx(expected, rel=1e-12, abs=1e-12), (qid, name)
            checked += 1
    assert checked >= 9


def test_measures_of_the_seeds_by_hand():
    """Worked examples of each new convention, from the definitions."""
    # ranks: a (2), b (unjudged), c (0), d (1); qrels also hold e (3, not retrieved), f (-1)
    run, qrels = one_query(
        [("a", 4), ("b", 3), ("c", 2), ("d", 1)], {"a": 2, "c": 0, "d": 1, "e": 3, "f": -1}
    )
    values = per_query(tiecore.evaluate(run, qrels, [
        "CG@3", "CG(gain=exp)@4", "DCG@4", "nDCG(ideal=max)@2", "AP@2", "AP(denom=min)@2",
        "Judged@3", "Judged@10", "RBP(p=0.5)", "RBP(p=0.5,gain=binary)@2", "RBP_residual(p=0.5)@3",
    ], ties="oblivious", per_query=True))  # fmt: skip
    expected = {
        "CG@3": 2 + 0 + 0,
        "CG(gain=exp)@4": 3 + 0 + 0 + 1,
        "DCG@4": 2 / math.log2(2) + 1 / math.log2(5),
        # the qrels' top grade (3) at both ranks
        "nDCG(ideal=max)@2": (2 / math.log2(2)) / (3 / math.log2(2) + 3 / math.log2(3)),
        "AP@2": (1 / 1) / 3,  # num_rel = 3 (a, d, e)
        "AP(denom=min)@2": (1 / 1) / 2,  # min(k, num_rel) = 2
        "Judged@3": 2 / 3,
        "Judged@10": 3 / 4,  # four retrieved
        "RBP(p=0.5)": 0.5 * (2 * 1 + 1 * 0.125),
        "RBP(p=0.5,gain=binary)@2": 0.5,
        "RBP_residual(p=0.5)@3": 0.5 * 0.5 + 0.5**3,  # b unjudged, then the tail
    }
    for name, value in expected.items():
        assert values["q", name] == pytest.approx(value, abs=1e-15), name

"""tiecore.spread against the enumeration of every ordering of the tie groups.

For small tie-heavy runs (``strategies.py``) every distinct label sequence the
orderings produce is enumerated with its multiplicity (``reference.py``); the
population variance, min, max and distribution over those orderings must equal
what :mod:`tiecore.spread` computes in closed form.  A larger case checks the
variance against the sampled mode, and single large groups check the AP and
Bpref moment formulas beyond the sizes hypothesis draws.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from strategies import FLOAT32_COLLIDING, HUGE_LEVELS, Case, cases, depths, rel_levels

import tiecore
from tiecore import spread
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.evaluation.evaluator import query_values
from tiecore.measures import Measure

SPECS = ref.all_specs((1, 2, 3, 5, 9))
NAMES = [spec.name for spec in SPECS]
DISTRIBUTION_SPECS = [s for s in SPECS if s.family in spread.DISTRIBUTION_FAMILIES]
RUN = "run"
TOL = 1e-9

#: generated runs hold queries the qrels lack; Ranking.build warns about them
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.TieCoreWarning")

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------ brute-force helpers


def weighted_values(
    spec, sequences: Counter, levels, *, rel_level, depth, top_level=None
) -> list[tuple]:
    """(value, orderings giving it) for every distinct label sequence."""
    options = {"rel_level": rel_level, "depth": depth, "top_level": top_level}
    return [
        (ref.measure(spec, sequence, levels, **options), count)
        for sequence, count in sequences.items()
    ]


def moments(pairs: list[tuple]) -> dict[str, float]:
    """Population mean, variance, min and max of weighted values."""
    total = sum(count for _, count in pairs)
    mean = math.fsum(value * count for value, count in pairs) / total
    var = math.fsum((value - mean) ** 2 * count for value, count in pairs) / total
    values = [value for value, _ in pairs]
    return {"value": mean, "var": var, "min": min(values), "max": max(values)}


def brute_spread(case: Case, specs, *, rel_level: int, depth: int | None) -> dict:
    """(qid, measure name) -> moments over every ordering, for queries in run and qrels."""
    table = {}
    for qid in case.both_qids:
        q = case.queries[qid]
        sequences = ref.label_sequences(q.scores, q.labels)
        for spec in specs:
            pairs = weighted_values(
                spec, sequences, q.levels, rel_level=rel_level, depth=depth,
                top_level=case.top_level,
            )  # fmt: skip
            table[qid, spec.name] = moments(pairs)
    return table


def empty_ranking(case: Case, qid: str, spec, rel_level, depth) -> dict:
    """A qrels query the run lacks (under -c): an empty ranking, no spread."""
    value = ref.measure(spec, [], case.queries[qid].levels, rel_level=rel_level, depth=depth)
    return {"value": value, "var": 0.0, "min": value, "max": value}


def brute_distribution(q, spec, *, rel_level, depth=None) -> list[tuple[float, float]]:
    """Sorted (value, probability) of one query's measure over every ordering."""
    sequences = ref.label_sequences(q.scores, q.labels)
    pairs = weighted_values(spec, sequences, q.levels, rel_level=rel_level, depth=depth)
    total = sum(count for _, count in pairs)
    merged: dict[float, float] = {}
    for value, count in pairs:
        key = next((v for v in merged if abs(v - value) <= 1e-12), value)
        merged[key] = merged.get(key, 0.0) + count / total
    return sorted(merged.items())


def one_group_spread(q, group_index, spec, *, rel_level, depth, top_level=None) -> float:
    """Variance of the value when only one tie group is shuffled, the others in one order."""
    scores = [0.0] * len(q.scores)
    position = 0
    for index, group in enumerate(ref.tie_groups(q.scores)):
        start = position
        for member in group:  # the other groups' docs get distinct, descending scores
            scores[member] = -float(start if index == group_index else position)
            position += 1
    sequences = ref.label_sequences(scores, q.labels)
    pairs = weighted_values(
        spec, sequences, q.levels, rel_level=rel_level, depth=depth, top_level=top_level
    )
    return moments(pairs)["var"]


def spread_table(case: Case, names, **options) -> pd.DataFrame:
    run, qrels = case.run_frame(), case.qrels_frame()
    note(f"run:\n{run.to_string()}\nqrels:\n{qrels.to_string()}\noptions: {options}")
    return spread.evaluate_spread({RUN: run}, qrels, names, per_query=True, **options)


def rows_of(frame: pd.DataFrame) -> dict[tuple[str, str], dict]:
    frame = frame.assign(qid=frame["qid"].fillna("all"))  # the summary row (qid NA) as "all"
    return {(row.qid, row.measure): row._asdict() for row in frame.itertuples(index=False)}


# ----------------------------------------------------------------- property tests


def some(specs):
    """A few of ``specs`` per example (the brute force per group is slow)."""
    return st.lists(st.sampled_from(specs), min_size=1, max_size=6, unique=True)


@PROPERTY
@given(cases(max_docs=8), rel_levels, depths, st.booleans())
def test_variance_and_bounds_equal_every_ordering(case, rel_level, depth, complete):
    frame = spread_table(case, NAMES, rel_level=rel_level, depth=depth, complete=complete)
    assert list(frame.columns) == [
        "run", "qid", "measure", "value", "var", "min", "max", "var_method",
    ]  # fmt: skip
    assert (frame["var_method"] == "exact").all()
    got = rows_of(frame)
    expected = brute_spread(case, SPECS, rel_level=rel_level, depth=depth)
    problems = []
    for key, truth in expected.items():
        for column, value in truth.items():
            if not abs(got[key][column] - value) <= TOL:
                problems.append(f"{key} {column}: spread {got[key][column]!r} brute {value!r}")
    # the "all" row: queries are shuffled independently
    chosen = case.qrels_qids if complete else case.both_qids
    for name in NAMES:
        spec = SPECS[NAMES.index(name)]
        per_query = [expected.get((qid, name)) or empty_ranking(case, qid, spec, rel_level, depth)
                     for qid in chosen]  # fmt: skip
        count = len(per_query)
        summary = {
            "value": math.fsum(p["value"] for p in per_query) / count,
            "var": math.fsum(p["var"] for p in per_query) / count**2,
            "min": math.fsum(p["min"] for p in per_query) / count,
            "max": math.fsum(p["max"] for p in per_query) / count,
        }
        for column, value in summary.items():
            if not abs(got["all", name][column] - value) <= TOL:
                problems.append(f"all {name} {column}: {got['all', name][column]!r} != {value!r}")
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:40])


@PROPERTY
@given(cases(max_docs=8), rel_levels, depths, some(SPECS))
def test_bounds_are_the_optimistic_and_pessimistic_orders(case, rel_level, depth, specs):
    run, qrels = case.run_frame(), case.qrels_frame()
    names = [spec.name for spec in specs if ref.policies_are_extremes(spec)]
    if not names:  # their bounds: test_variance_and_bounds_equal_every_ordering
        return
    frame = rows_of(spread_table(case, names, rel_level=rel_level, depth=depth))
    for policy, column in (("optimistic", "max"), ("pessimistic", "min")):
        oblivious = tiecore.evaluate(
            {RUN: run}, qrels, names, ties="oblivious", tiebreak=policy,
            rel_level=rel_level, depth=depth, per_query=True,
        )  # fmt: skip
        for row in rows_of(oblivious).values():
            assert frame[row["qid"], row["measure"]][column] == pytest.approx(
                row["value"], abs=1e-12
            )


@PROPERTY
@given(cases(max_docs=8), rel_levels, depths, some(SPECS))
def test_each_group_carries_its_own_variance(case, rel_level, depth, specs):
    run, qrels = case.run_frame(), case.qrels_frame()
    specs = [spec for spec in specs if ref.is_head_sum(spec)]  # a ratio's variance does not split
    totals = rows_of(spread_table(case, NAMES, rel_level=rel_level, depth=depth))
    for spec in specs:
        groups = spread.tie_groups(run, qrels, spec.name, rel_level=rel_level, depth=depth)
        assert list(groups.columns) == [
            "qid", "group", "start_rank", "end_rank", "size", "relevant",
            "judged_nonrelevant", "gain", "straddles_cutoff", "var", "var_share",
        ]  # fmt: skip
        assert set(groups["qid"]) == set(case.both_qids)
        cutoff = spec.cutoff if spec.cutoff is not None else math.inf
        cutoff = min(cutoff, depth if depth is not None else math.inf)
        for qid, rows in groups.groupby("qid"):
            q = case.queries[qid]
            if spec.family == "Rprec":  # the rank int(mult * num_rel + 0.9); num_rel at 1
                mult = float(spec.param("mult", "1.0"))
                rank = int(mult * ref.num_relevant(q.levels, rel_level) + 0.9)
                cutoff = min(rank, depth or math.inf)
            reference_groups = ref.tie_groups(q.scores)
            assert rows["group"].tolist() == list(range(1, len(reference_groups) + 1))
            start = 1
            for row, members in zip(rows.itertuples(), reference_groups, strict=True):
                labels = [q.labels[i] for i in members]
                assert (row.start_rank, row.size) == (start, len(members))
                assert row.end_rank == start + len(members) - 1
                assert row.relevant == sum(ref.is_relevant(lb, rel_level) for lb in labels)
                assert row.judged_nonrelevant == sum(
                    ref.is_judged_nonrelevant(lb, rel_level) for lb in labels
                )
                kind = spec.gain if spec.gain in ("linear", "exp") else "linear"
                assert row.gain == sum(ref.gain(lb, kind) for lb in labels)
                assert row.straddles_cutoff == (start - 1 < cutoff < start - 1 + len(members))
                alone = one_group_spread(
                    q, row.group - 1, spec, rel_level=rel_level, depth=depth,
                    top_level=case.top_level,
                )  # fmt: skip
                assert row.var == pytest.approx(alone, abs=TOL), (qid, spec.name, row.group)
                start += len(members)
            query_var = totals[qid, spec.name]["var"]
            assert rows["var"].sum() == pytest.approx(query_var, abs=TOL)
            if query_var > TOL:
                assert rows["var_share"].sum() == pytest.approx(1.0, abs=1e-9)


@PROPERTY
@given(cases(max_docs=8), rel_levels, depths, some(DISTRIBUTION_SPECS))
def test_distribution_equals_every_ordering(case, rel_level, depth, specs):
    run, qrels = case.run_frame(), case.qrels_frame()
    for qid in case.both_qids:
        q = case.queries[qid]
        for spec in specs:
            got = spread.distribution(run, qrels, spec.name, qid, rel_level=rel_level, depth=depth)
            assert list(got.columns) == ["value", "probability"]
            assert got["probability"].sum() == pytest.approx(1.0, abs=1e-12)
            expected = brute_distribution(q, spec, rel_level=rel_level, depth=depth)
            assert len(got) == len(expected), (qid, spec.name, got, expected)
            for (value, probability), row in zip(expected, got.itertuples(), strict=True):
                assert row.value == pytest.approx(value, abs=1e-12), (qid, spec.name)
                assert row.probability == pytest.approx(probability, abs=TOL), (qid, spec.name)


NDCG_SPECS = [spec for spec in SPECS if spec.family == "nDCG"]


@PROPERTY
@given(cases(max_docs=8, level_pool=HUGE_LEVELS, max_label_kinds=4), rel_levels, depths)
def test_exp_gain_spread_is_exact_for_huge_levels(case, rel_level, depth):
    """Levels up to 2000 (gains 2**level - 1 past float64): value, variance and bounds
    against every ordering, each ordering's nDCG in exact fractions."""
    frame = spread_table(case, [spec.name for spec in NDCG_SPECS], rel_level=rel_level, depth=depth)
    got = rows_of(frame)
    expected = brute_spread(case, NDCG_SPECS, rel_level=rel_level, depth=depth)
    problems = [
        f"{key} {column}: spread {got[key][column]!r} brute {value!r}"
        for key, truth in expected.items()
        for column, value in truth.items()
        if not abs(got[key][column] - value) <= TOL
    ]
    assert not problems, "\n".join(problems[:40])


UNSCALED_EXP_SPECS = [
    spec for spec in SPECS if spec.family in ("DCG", "CG", "RBP") and spec.gain == "exp"
]


@PROPERTY
@given(cases(max_docs=8, level_pool=(-1, 0, 1, 2, 52, 53, 300), max_label_kinds=4), depths)
def test_unscaled_exp_gain_spread_is_exact_relative_to_each_value(case, depth):
    """DCG/CG/RBP with gains 2**level - 1 as they are: a gain of 2**300 beside gains of
    1 must not swallow the min (summed apart, not as value - mean) nor the variance
    (deviations summed in a second pass): each figure to 1e-9 of its own size (the
    variance also to 1e-12 of the mean squared, the brute force's own rounding)."""
    frame = spread_table(case, [spec.name for spec in UNSCALED_EXP_SPECS], depth=depth)
    got = rows_of(frame)
    expected = brute_spread(case, UNSCALED_EXP_SPECS, rel_level=1, depth=depth)

    def close(key: tuple, column: str, value: float, truth: dict) -> bool:
        floor = 1e-12 * (1.0 + (truth["value"] ** 2 if column == "var" else 0.0))
        return math.isclose(got[key][column], value, rel_tol=1e-9, abs_tol=floor)

    problems = [
        f"{key} {column}: spread {got[key][column]!r} brute {value!r}"
        for key, truth in expected.items()
        for column, value in truth.items()
        if not close(key, column, value, truth)
    ]
    assert not problems, "\n".join(problems[:40])


@settings(PROPERTY, max_examples=50)
@given(cases(distinct_scores=True), rel_levels, depths, st.booleans())
def test_a_tie_free_run_has_no_spread(case, rel_level, depth, complete):
    frame = spread_table(case, NAMES, rel_level=rel_level, depth=depth, complete=complete)
    assert (frame["var"] == 0).all()
    assert np.allclose(frame["min"], frame["value"], rtol=0, atol=1e-12)
    assert np.allclose(frame["max"], frame["value"], rtol=0, atol=1e-12)
    aware = tiecore.evaluate(
        {RUN: case.run_frame()}, case.qrels_frame(), NAMES, rel_level=rel_level, depth=depth,
        complete=complete, per_query=True,
    )  # fmt: skip
    assert np.allclose(frame["value"], aware["value"], rtol=0, atol=1e-12)
    profile = spread.tie_profile(case.run_frame())
    assert profile["share_tied_rows"] == 0.0
    assert profile["largest_group"] == 1


@PROPERTY
@given(cases(), st.sampled_from([s.name for s in SPECS if ref.is_head_sum(s)]), st.integers(1, 6))
def test_tie_profile_counts_the_groups(case, name, top):
    run, qrels = case.run_frame(), case.qrels_frame()
    sizes = Counter(Counter(zip(run["qid"], run["score"], strict=True)).values())
    profile = spread.tie_profile(run, qrels, name, top=top)
    assert profile["group_sizes"].to_dict() == dict(sorted(sizes.items()))
    assert profile["largest_group"] == max(sizes)
    tied = sum(size * count for size, count in sizes.items() if size > 1)
    assert profile["share_tied_rows"] == pytest.approx(tied / len(run), abs=1e-15)
    groups = spread.tie_groups(run, qrels, name)
    total = groups["var"].sum()
    top_var = groups.loc[groups["start_rank"] <= top, "var"].sum()
    expected = top_var / total if total > 0 else 0.0
    assert profile["var_share_top"] == pytest.approx(expected, abs=1e-12)
    assert 0.0 <= profile["var_share_straddling"] <= 1.0 + 1e-12


@settings(PROPERTY, max_examples=80)
@given(cases(score_pool=FLOAT32_COLLIDING, max_score_values=6))
def test_tie_profile_counts_the_ties_only_float32_sees(case):
    run = case.run_frame()
    rows = list(zip(run["qid"], run["score"], strict=True))
    hit = [
        any(q == q2 and ref.as_c_float(x) == ref.as_c_float(y) and x != y for q2, y in rows)
        for q, x in rows
    ]
    queries = {q for (q, _), h in zip(rows, hit, strict=True) if h}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profile = spread.tie_profile(run)
    assert profile["float32_tied_rows"] == sum(hit)
    assert profile["float32_tied_queries"] == len(queries)
    said = [w for w in caught if issubclass(w.category, tiecore.TieCoreWarning)]
    assert len(said) == (1 if queries else 0)
    if said:
        assert f"{sum(hit)} rows in {len(queries)} queries" in str(said[0].message)


@settings(PROPERTY, max_examples=50)
@given(cases(max_docs=8), rel_levels, depths)
def test_query_spread_is_indexed_by_the_judged_queries(case, rel_level, depth):
    judgments = Judgments.from_qrels(case.qrels_frame(), rel_level)
    ranking = Ranking.build(case.run_frame(), judgments, tiebreak="file_order")
    found = spread.query_spread(ranking, judgments, NAMES, depth=depth)
    aware = query_values(ranking, judgments, list(found), ties="aware", depth=depth)
    assert [str(m) for m in found] == NAMES
    for measure, frame in found.items():
        assert list(frame.columns) == ["value", "var", "min", "max"]
        assert frame.index.tolist() == judgments.qids.tolist()
        assert np.array_equal(frame["value"].to_numpy(), aware[measure])
        assert (frame["min"] <= frame["value"] + 1e-12).all()
        assert (frame["value"] <= frame["max"] + 1e-12).all()
        assert (frame["var"] >= 0).all()
        # a value in [min, max] has variance at most (max - min)**2 / 4
        assert (frame["var"] <= (frame["max"] - frame["min"]) ** 2 / 4 + 1e-12).all()


# ------------------------------------------------------------------ interface


def small_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    run = pd.DataFrame(
        {
            "qid": ["1"] * 5 + ["2"] * 3,
            "docno": list("abcdeabc"),
            "score": [3.0, 2, 2, 2, 1, 1, 1, 0],
        }
    )
    qrels = pd.DataFrame(
        {"qid": ["1", "1", "1", "2", "3"], "docno": list("bcaax"), "level": [1, 0, 2, 1, 1]}
    )
    return run, qrels


def test_distribution_refuses_other_measures_and_unknown_queries():
    run, qrels = small_case()
    for name in ("AP", "AP@5", "nDCG", "nDCG@3", "Bpref"):
        with pytest.raises(ValueError, match="no exact distribution"):
            spread.distribution(run, qrels, name, "1")
    with pytest.raises(ValueError, match="no judgments"):
        spread.distribution(run, qrels, "P@2", "nope")
    # judged but not retrieved: the value is 0 in every ordering
    got = spread.distribution(run, qrels, "P@2", "3")
    assert got.to_dict("list") == {"value": [0.0], "probability": [1.0]}


def test_tie_groups_of_one_query_and_bad_options():
    run, qrels = small_case()
    every = spread.tie_groups(run, qrels, "AP")
    one = spread.tie_groups(run, qrels, "AP", qid="1")
    pd.testing.assert_frame_equal(one, every[every["qid"] == "1"].reset_index(drop=True))
    assert spread.tie_groups(run, qrels, "AP", qid="3").empty
    with pytest.raises(ValueError, match="no judgments"):
        spread.tie_groups(run, qrels, "AP", qid="nope")
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="depth"):
            spread.evaluate_spread(run, qrels, "AP", depth=bad)
    with pytest.raises(tiecore.InputError):
        spread.evaluate_spread(run, qrels, "XY@3")


def test_tie_groups_takes_the_head_sums_and_refuses_the_others():
    """Measure.has_tie_groups is the reference's head sums (ERR and GMAP are none: ERR's
    terms depend on the docs above, GMAP has no exact spread); tie_groups refuses the
    others by name, as evaluate_spread refuses GMAP."""
    for spec in ref.all_specs(cutoffs=(1, 5)):
        assert Measure.parse(spec.name).has_tie_groups == ref.is_head_sum(spec), spec.name
    run, qrels = small_case()
    for name in ("ERR@10", "ERR", "infAP", "nDCG(ideal=local)@5", "GMAP"):
        assert not Measure.parse(name).has_tie_groups
        with pytest.raises(tiecore.InputError, match="does not split by tie group"):
            spread.tie_groups(run, qrels, name)
    assert not Measure.parse("GMAP").exact_spread and Measure.parse("infAP").exact_spread
    with pytest.raises(tiecore.InputError, match="GMAP has no exact value"):
        spread.evaluate_spread(run, qrels, "GMAP")


def test_several_runs_get_their_own_rows():
    run, qrels = small_case()
    shifted = run.assign(score=run["score"] * 0 + 1.0)
    frame = spread.evaluate_spread({"a": run, "b": shifted}, qrels, ["P@2", "RR"], per_query=True)
    assert frame["run"].tolist() == ["a"] * 6 + ["b"] * 6
    alone = spread.evaluate_spread({"b": shifted}, qrels, ["P@2", "RR"], per_query=True)
    pd.testing.assert_frame_equal(frame[frame["run"] == "b"].reset_index(drop=True), alone)


# -------------------------------------------------------- larger groups, by hand


def single_query(labels: list, scores: list[float], extra: dict[str, int]):
    """One query "q": docs d0, d1, ... with the given labels (None = unjudged)."""
    docnos = [f"d{i:02d}" for i in range(len(labels))]
    run = pd.DataFrame({"qid": "q", "docno": docnos, "score": np.asarray(scores, float)})
    judged = {d: lv for d, lv in zip(docnos, labels, strict=True) if lv is not None} | extra
    qrels = pd.DataFrame({"qid": "q", "docno": list(judged), "level": list(judged.values())})
    return run, qrels.astype({"level": "int64"})


LARGE_SPECS = [ref.Spec(f, k) for f in ("AP", "Bpref", "RR", "nDCG", "P") for k in (None, 6)]
LARGE_SPECS = [s for s in LARGE_SPECS if not (s.family == "P" and s.cutoff is None)]
LARGE_SPECS = [s for s in LARGE_SPECS if not (s.family == "Bpref" and s.cutoff)]


@pytest.mark.parametrize("depth", [None, 5, 9])
@pytest.mark.parametrize(
    ("labels", "extra"),
    [
        # two docs above an 11-doc group: 3 relevant, 4 judged non-relevant, 4 unjudged
        ([1, 0, 2, 1, 1, 0, 0, 0, 0, None, None, None, None], {"x": 1, "y": 0}),
        # many judged non-relevant docs, so Bpref's min(., R) caps inside the group
        ([0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 2, None, -1], {"x": 0}),
    ],
)
def test_large_group_moments(labels, extra, depth):
    scores = [3.0, 2.0] + [1.0] * (len(labels) - 2)
    run, qrels = single_query(labels, scores, extra)
    levels = qrels["level"].tolist()
    got = rows_of(spread.evaluate_spread(run, qrels, [s.name for s in LARGE_SPECS], depth=depth,
                                         per_query=True))  # fmt: skip
    sequences = ref.label_sequences(scores, labels)
    for spec in LARGE_SPECS:
        truth = moments(weighted_values(spec, sequences, levels, rel_level=1, depth=depth))
        for column, value in truth.items():
            assert got["q", spec.name][column] == pytest.approx(value, abs=TOL), (spec, column)


# --------------------------------------------------------- against the sampled mode


def tie_heavy_case(queries: int, docs: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A generated run with scores from 6 values and random qrels levels."""
    rng = np.random.default_rng(seed)
    qid = np.repeat([f"q{i}" for i in range(queries)], docs)
    docno = np.tile([f"d{i}" for i in range(docs)], queries)
    run = pd.DataFrame({"qid": qid, "docno": docno, "score": rng.integers(0, 6, qid.size) * 1.0})
    judged = rng.random(qid.size) < 0.6
    levels = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], qid.size)
    qrels = pd.DataFrame({"qid": qid[judged], "docno": docno[judged], "level": levels[judged]})
    return run, qrels


SAMPLED_NAMES = ["P@10", "R@20", "F1@10", "AP", "AP@10", "RR", "RR@5", "nDCG", "nDCG@10"]
SAMPLED_NAMES += ["nDCG(gain=exp)@10", "Rprec", "Success@3", "Bpref"]


@pytest.mark.parametrize("depth", [None, 25])
def test_variance_agrees_with_sampling(depth):
    run, qrels = tie_heavy_case(12, 60, seed=3)
    measures = [Measure.parse(name) for name in SAMPLED_NAMES]
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    exact = spread.query_spread(ranking, judgments, measures, depth=depth)
    draws = 4000
    sampled = query_values(
        ranking, judgments, measures, ties="sampled", samples=draws, depth=depth,
        rng=np.random.default_rng(11),
    )  # fmt: skip
    problems = []
    for measure in measures:
        values = sampled[measure]  # (samples, queries)
        centred = values - values.mean(axis=0)
        s2 = values.var(axis=0, ddof=1)
        m4 = (centred**4).mean(axis=0)
        stderr = np.sqrt(np.maximum(m4 - s2**2, 0) / draws)
        var = exact[measure]["var"].to_numpy()
        bad = np.abs(s2 - var) > 5 * stderr + 1e-12
        problems += [
            f"{measure} query {i}: sampled {s2[i]} exact {var[i]}" for i in np.flatnonzero(bad)
        ]
        assert (values.min(axis=0) >= exact[measure]["min"].to_numpy() - 1e-12).all()
        assert (values.max(axis=0) <= exact[measure]["max"].to_numpy() + 1e-12).all()
    assert not problems, "\n".join(problems)
    assert sum(exact[m]["var"].sum() for m in measures) > 0

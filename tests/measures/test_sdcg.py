"""SDCG (tiecore/measures/sdcg.py), the family that proves a measure is one file: its
aware value, exact variance and bounds equal the enumeration of every ordering, and its
oblivious value equals cwl_eval's NDCG-k (ir_measures' SDCG provider), transcribed here
from its definition as a C/W/L measure because cwl_eval is not installed."""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from strategies import Case, cases, depths

import tiecore
from tiecore.errors import InputError
from tiecore.measures import Measure, parse_measures

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.TieCoreWarning")
#: cwl_eval's ranking length: gains padded with 0 or cut to it (its ``max_n``).
CWL_DOCS = 1000


def cwl_ndcg_k(levels_in_rank_order: list[int | None], k: int, max_rel: int) -> float:
    """cwl_eval's NDCG-k as ir_measures runs it: each level clipped to ``[0, max_rel]`` and
    scaled to ``[0, 1]`` (a doc not in the qrels: gain 0), the gains padded or cut to 1000
    ranks; a user goes on from rank i with ``C_i = log2(i + 1) / log2(i + 2)`` while ``i <
    k`` (else stops), so rank i is weighed ``W_i`` = the chance of reaching it over the
    expected ranks read, and the value is ``sum_i W_i g_i``."""
    gains = [
        0.0 if level is None else (min(max(level, 0), max_rel) - 0) / (max_rel - 0)
        for level in levels_in_rank_order
    ]
    gains = (gains + [0.0] * CWL_DOCS)[:CWL_DOCS]
    reach, reached = 1.0, []
    for i in range(1, CWL_DOCS + 1):
        reached.append(reach)
        reach *= math.log(i + 1, 2) / math.log(i + 2, 2) if i < k else 0.0
    total = sum(reached)
    return sum(w / total * g for w, g in zip(reached, gains, strict=True))


def per_query(frame: pd.DataFrame, column: str = "value") -> dict[str, float]:
    rows = frame[frame["qid"].notna()]
    return dict(zip(rows["qid"].astype(str), rows[column].astype(float), strict=True))


@PROPERTY
@given(
    cases(distinct_scores=True, max_label_kinds=5),
    st.integers(1, 12),
    st.integers(1, 4),
)
def test_oblivious_equals_cwl_evals_ndcg_k(case: Case, k: int, max_rel: int):
    name = f"SDCG(max_rel={max_rel})@{k}"
    run, qrels = case.run_frame(), case.qrels_frame()
    note(f"run:\n{run}\nqrels:\n{qrels}")
    got = per_query(tiecore.evaluate(run, qrels, name, ties="oblivious", per_query=True))
    for qid in case.both_qids:
        q = case.queries[qid]
        order = sorted(range(len(q.scores)), key=lambda i: -q.scores[i])
        expected = cwl_ndcg_k([q.labels[i] for i in order], k, max_rel)
        assert got[qid] == pytest.approx(expected, abs=1e-12), (qid, name)


@PROPERTY
@given(cases(max_label_kinds=5), st.integers(1, 9), st.integers(1, 3), depths)
def test_aware_variance_and_bounds_are_those_of_every_ordering(case, k, max_rel, depth):
    spec = ref.Spec("SDCG", k, params=(("max_rel", str(max_rel)),))
    run, qrels = case.run_frame(), case.qrels_frame()
    note(f"run:\n{run}\nqrels:\n{qrels}\ndepth {depth}")
    frame = tiecore.evaluate_spread(run, qrels, spec.name, depth=depth, per_query=True)
    got = {column: per_query(frame, column) for column in ("value", "var", "min", "max")}
    for qid in case.both_qids:
        q = case.queries[qid]
        pairs = [
            (ref.measure(spec, sequence, q.levels, depth=depth), count)
            for sequence, count in ref.label_sequences(q.scores, q.labels).items()
        ]
        total = sum(count for _, count in pairs)
        mean = math.fsum(value * count for value, count in pairs) / total
        var = math.fsum((value - mean) ** 2 * count for value, count in pairs) / total
        values = [value for value, _ in pairs]
        assert got["value"][qid] == pytest.approx(mean, abs=1e-12)
        assert got["var"][qid] == pytest.approx(var, abs=1e-12)
        assert got["min"][qid] == pytest.approx(min(values), abs=1e-12)
        assert got["max"][qid] == pytest.approx(max(values), abs=1e-12)
        assert got["min"][qid] <= got["value"][qid] <= got["max"][qid]


@settings(PROPERTY, max_examples=15, derandomize=True)
@given(cases(max_queries=2, max_label_kinds=4), st.integers(1, 6))
def test_sampled_mean_is_within_five_stderr_of_aware(case, k):
    run, qrels = case.run_frame(), case.qrels_frame()
    name = f"SDCG(max_rel=2)@{k}"
    aware = per_query(tiecore.evaluate(run, qrels, name, per_query=True))
    sampled = tiecore.evaluate(
        run, qrels, name, ties="sampled", samples=2000, seed=3, per_query=True
    )
    mean, stderr = per_query(sampled), per_query(sampled, "stderr")
    for qid, value in aware.items():
        assert abs(mean[qid] - value) <= 5 * stderr[qid] + 1e-12, (qid, mean[qid], value)


def test_a_hand_example_with_a_tied_pair():
    """Levels 2 and 0 tied at the top, a level 5 (counted as max_rel = 3) third, and a doc
    at level -1: SDCG@3 = (g1 + g2 / log2 3 + 1 / 2) / (1 + 1 / log2 3 + 1 / 2)."""
    qrels = pd.DataFrame({"qid": "q", "docno": ["a", "b", "c", "d"], "level": [2, 0, 5, -1]})
    run = pd.DataFrame({"qid": "q", "docno": list("abcd"), "score": [3.0, 3.0, 2.0, 1.0]})
    ideal = 1 + 1 / math.log2(3) + 1 / 2
    first, second = 2 / 3 + 1 / 2, 2 / 3 / math.log2(3) + 1 / 2  # a first, or b first
    frame = tiecore.evaluate_spread(run, qrels, "SDCG(max_rel=3)@3")
    assert frame["value"].iloc[0] == pytest.approx((first + second) / 2 / ideal, abs=1e-15)
    assert frame["max"].iloc[0] == pytest.approx(first / ideal, abs=1e-15)
    assert frame["min"].iloc[0] == pytest.approx(second / ideal, abs=1e-15)
    assert frame["var"].iloc[0] == pytest.approx(((first - second) / 2 / ideal) ** 2)


def test_ir_measures_names_and_objects():
    assert [str(m) for m in parse_measures(ir_measures.SDCG(max_rel=3) @ 10)] == [
        "SDCG(max_rel=3)@10"
    ]
    assert str(Measure.parse("SDCG(max_rel=2.0,dcg=log2)@5")) == "SDCG(max_rel=2)@5"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("SDCG@10", "SDCG needs max_rel="),
        ("SDCG(max_rel=3)", "needs a cutoff"),
        ("SDCG(max_rel=2.5)@10", "must be an integer"),
        ("SDCG(max_rel=0)@10", "max_rel must be from 1"),
        ("SDCG(max_rel=3,min_rel=1)@10", "unknown parameter"),
    ],
)
def test_names_it_refuses_say_why_in_one_line(name, why):
    with pytest.raises(InputError, match=why) as error:
        Measure.parse(name)
    assert "\n" not in str(error.value)


def test_robust03_oblivious_equals_cwl_evals_ndcg_k():
    """A real run (sample_data): per query, tiecore's oblivious SDCG on trec_eval's order
    equals the transcription on the same order."""
    qrels = tiecore.read_qrels("sample_data/robust03/qrels.txt.gz")
    run = tiecore.read_run("sample_data/robust03/runs/input.MU03rob01.gz")
    got = per_query(
        tiecore.evaluate(run, qrels, "SDCG(max_rel=2)@20", ties="oblivious", per_query=True)
    )
    levels = {
        (q, d): int(v) for q, d, v in qrels[["qid", "docno", "level"]].itertuples(index=False)
    }
    ordered = run.assign(key=run["score"].astype(np.float32)).sort_values(
        ["qid", "key", "docno"], ascending=[True, False, False]
    )
    for qid, rows in ordered.groupby("qid"):
        if qid not in got:
            continue
        ranked = [levels.get((qid, d)) for d in rows["docno"]]
        assert got[qid] == pytest.approx(cwl_ndcg_k(ranked, 20, 2), abs=1e-12), qid

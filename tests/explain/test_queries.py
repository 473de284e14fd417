"""tiecore.explain.queries against brute force over every ordering and against tiecore.evaluate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tiecore
from tiecore.errors import InputError
from tiecore.explain import queries

MEASURES = ("RR", "P@3", "AP", "nDCG@3", "R@2")
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")


@st.composite
def tracks(draw):
    """Two or three runs over up to three queries, up to six docs each, heavy ties; qrels
    with levels -1..2 (some docs unjudged, some judged docs not retrieved)."""
    qids = [str(q) for q in range(1, draw(st.integers(1, 3)) + 1)]
    docs = [f"d{i}" for i in range(8)]
    levels = {}
    for qid in qids:
        for doc in docs:
            level = draw(st.sampled_from([None, None, 0, 1, 2, -1]))
            if level is not None:
                levels[(qid, doc)] = level
    if not levels:
        levels[(qids[0], "d0")] = 1
    runs = {}
    for r in range(draw(st.integers(2, 3))):
        rows = []
        for qid in qids:
            chosen = draw(st.lists(st.sampled_from(docs), min_size=0, max_size=6, unique=True))
            for doc in chosen:
                rows.append((qid, doc, float(draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])))))
        if not rows:
            rows.append((qids[0], "d1", 1.0))
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    qrels = pd.DataFrame(
        [(q, d, lv) for (q, d), lv in levels.items()], columns=["qid", "docno", "level"]
    )
    return runs, qrels


def _case(run: pd.DataFrame, qrels: pd.DataFrame, qid: str):
    rows = run[run["qid"] == qid]
    judged = qrels[qrels["qid"] == qid]
    level = dict(zip(judged["docno"], judged["level"], strict=True))
    scores = rows["score"].tolist()
    docnos = rows["docno"].tolist()
    labels = [level.get(d) for d in docnos]
    return scores, docnos, labels, judged["level"].tolist()


def _top(qrels: pd.DataFrame) -> int:
    return int(qrels["level"].max())


@PROPERTY
@given(tracks(), st.sampled_from(MEASURES), st.sampled_from(["trec_eval", "file_order"]))
def test_values_equal_brute_force_over_orderings(track, name, tiebreak):
    runs, qrels = track
    spec = ref.Spec.parse(name)
    judged = set(qrels["qid"])
    for qid in sorted(judged):
        found = queries.query_values(runs, qrels, qid, name, tiebreak=tiebreak, other="docno_asc")
        retrieving = [n for n, r in runs.items() if (r["qid"] == qid).any()]
        assert found["run"].tolist() == retrieving
        for row in found.itertuples():
            scores, docnos, labels, levels = _case(runs[row.run], qrels, qid)
            options = {"top_level": _top(qrels)}
            aware = ref.reference_aware([spec], scores, labels, levels, **options)[spec]
            every = ref.reference_range([spec], scores, labels, levels, **options)[spec]
            first = ref.reference_oblivious(
                [spec], scores, docnos, labels, levels, tiebreak, **options
            )[spec]
            then = ref.reference_oblivious(
                [spec], scores, docnos, labels, levels, "docno_asc", **options
            )[spec]
            assert row.aware == pytest.approx(aware, abs=1e-12)
            assert row.min == pytest.approx(every[0], abs=1e-12)
            assert row.max == pytest.approx(every[-1], abs=1e-12)
            assert row.min - 1e-12 <= row.aware <= row.max + 1e-12
            assert row.oblivious == pytest.approx(first, abs=1e-12)
            assert row.other == pytest.approx(then, abs=1e-12)
            assert row.shift == pytest.approx(aware - first, abs=1e-12)
            assert row.other_shift == pytest.approx(then - first, abs=1e-12)


@PROPERTY
@given(tracks(), st.sampled_from(MEASURES))
def test_shift_matrix_is_evaluate_aware_minus_oblivious(track, name):
    runs, qrels = track
    matrix = queries.shift_matrix(runs, qrels, name)
    aware = tiecore.evaluate(runs, qrels, name, ties="aware", per_query=True)
    oblivious = tiecore.evaluate(runs, qrels, name, ties="oblivious", per_query=True)
    expected = {}
    for frame, sign in ((aware, 1.0), (oblivious, -1.0)):
        for row in frame[frame["qid"].notna()].itertuples():
            expected[(row.qid, row.run)] = expected.get((row.qid, row.run), 0.0) + sign * row.value
    cells = {
        (qid, run): value
        for qid, row in matrix.iterrows()
        for run, value in row.items()
        if not math.isnan(value)
    }
    assert cells.keys() == expected.keys()
    for key, value in expected.items():
        assert cells[key] == pytest.approx(value, abs=1e-12)
    # and each cell equals query_values' shift for that query
    for qid in matrix.index:
        for row in queries.query_values(runs, qrels, qid, name).itertuples():
            assert matrix.loc[qid, row.run] == pytest.approx(row.shift, abs=1e-12)
    # the largest moves lead: rows and columns by their largest |shift|, descending
    size = np.nan_to_num(np.abs(matrix.to_numpy(float)), nan=-1.0)
    assert np.all(np.diff(size.max(axis=1)) <= 0)
    assert np.all(np.diff(size.max(axis=0)) <= 0)


@PROPERTY
@given(tracks(), st.sampled_from(["trec_eval", "file_order", "docno_asc"]))
def test_ranked_lists_orders_and_groups(track, other):
    runs, qrels = track
    for qid in sorted(set(qrels["qid"])):
        lists = queries.ranked_lists(runs, qrels, qid, other=other)
        for name, run in runs.items():
            shown = lists[lists["run"] == name]
            scores, docnos, labels, _ = _case(run, qrels, qid)
            if not scores:
                assert shown.empty
                continue
            order = ref.order_indices(scores, docnos, labels, "trec_eval")
            assert shown["docno"].tolist() == [docnos[i] for i in order]
            assert shown["rank"].tolist() == list(range(1, len(order) + 1))
            then = ref.order_indices(scores, docnos, labels, other)
            ranks = {docnos[i]: k + 1 for k, i in enumerate(then)}
            assert shown["other_rank"].tolist() == [ranks[d] for d in shown["docno"]]
            groups = ref.tie_groups(scores)  # by score, descending
            for number, group in enumerate(groups, start=1):
                members = shown[shown["group"] == number]
                assert sorted(members["docno"]) == sorted(docnos[i] for i in group)
                assert (members["group_size"] == len(group)).all()
                assert (members["first"] == members["rank"].min()).all()
                assert (members["last"] == members["rank"].max()).all()
            expected = [labels[i] is not None and ref.is_relevant(labels[i], 1) for i in order]
            assert shown["relevant"].tolist() == expected
            levels = [labels[i] for i in order]
            assert [None if pd.isna(v) else v for v in shown["level"]] == levels


def test_nothing_for_a_query_no_run_retrieves():
    run = pd.DataFrame({"qid": "1", "docno": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "b"], "level": [1, 1]})
    assert queries.ranked_lists({"r": run}, qrels, "2").empty
    assert queries.query_values({"r": run}, qrels, "2", "RR").empty


def test_unknown_tiebreak_is_refused():
    run = pd.DataFrame({"qid": "1", "docno": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": [1]})
    with pytest.raises(InputError, match="unknown tie-break 'docno'"):
        queries.query_values({"r": run}, qrels, "1", "RR", other="docno")


TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations.
</top>

<top>
<num> Number: 302 <title> Topic: Poliomyelitis
  and Post-Polio
<narr> Narrative: ...
</top>
"""


def test_topics():
    assert queries.parse_topics(TOPICS) == {
        "301": "International Organized Crime",
        "302": "Poliomyelitis and Post-Polio",
    }
    assert queries.parse_topics(TOPICS.encode()) == queries.parse_topics(TOPICS)
    assert queries.topic_label("302", queries.parse_topics(TOPICS), width=14) == (
        "302 · Poliomyelitis…"
    )


def test_bad_topics_name_file_and_line():
    with pytest.raises(InputError, match=r"^topics.txt: no <top> found"):
        queries.parse_topics("301 crime\n", "topics.txt")
    with pytest.raises(InputError, match=r"^topics.txt, line 15: a topic without <num>"):
        queries.parse_topics(TOPICS + "\n<top>\n<title> x\n</top>\n", "topics.txt")
    with pytest.raises(InputError, match=r"line 9: topic 301 given twice"):
        queries.parse_topics(TOPICS.replace("302", "301"), "topics.txt")


def _matrix(cells, qids, runs):
    return pd.DataFrame(cells, index=pd.Index(qids, name="qid"), columns=pd.Index(runs, name="run"))


def test_movement_by_hand():
    """Queries 1 and 3 move visibly; 2 moves below 4 decimals; system c retrieves only
    query 3 (NaN elsewhere); the largest |shift| is negative."""
    matrix = _matrix(
        [[0.25, -0.5, np.nan], [0.00004, 0.0, np.nan], [0.0, 0.0001, 0.1]],
        ["1", "2", "3"],
        ["a", "b", "c"],
    )
    moved = queries.movement(matrix)
    assert (moved.queries_moved, moved.queries) == (2, 3)
    assert (moved.systems_moved, moved.systems) == (3, 3)
    assert moved.largest == ("1", "b", -0.5)
    assert moved.per_query == {"1": 0.5, "2": 0.00004, "3": 0.1}
    assert moved.systems_of(matrix, "1") == ["b", "a"]  # c does not retrieve query 1
    assert moved.systems_of(matrix, "3") == ["c", "b", "a"]
    assert queries.movement(matrix, visible=0.00004).queries_moved == 3


def test_movement_ties_keep_the_matrix_order():
    """Equal sizes: the first cell in row-major order is the largest, systems keep their
    column order; a NaN-only column neither moves nor wins."""
    matrix = _matrix([[np.nan, 0.5, -0.5], [np.nan, -0.5, 0.5]], ["7", "8"], ["x", "y", "z"])
    moved = queries.movement(matrix)
    assert moved.largest == ("7", "y", 0.5)
    assert (moved.systems_moved, moved.systems) == (2, 3)
    assert moved.systems_of(matrix, "8") == ["y", "z"]


def test_movement_of_an_all_zero_matrix():
    matrix = _matrix([[0.0, 0.0], [0.0, np.nan]], ["1", "2"], ["a", "b"])
    moved = queries.movement(matrix)
    assert (moved.queries_moved, moved.systems_moved) == (0, 0)
    assert (moved.queries, moved.systems) == (2, 2)
    assert moved.largest == ("1", "a", 0.0)
    assert moved.per_query == {"1": 0.0, "2": 0.0}
    assert moved.systems_of(matrix, "2") == ["a"]


def test_movement_of_an_empty_matrix():
    moved = queries.movement(_matrix(np.empty((0, 0)), [], []))
    assert moved == queries.Movement(0, 0, 0, 0, None, {})


@given(tracks())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_movement_agrees_with_the_shift_matrix(track):
    """On shift_matrix's output: a moved query has a visible cell, the largest is the
    largest |cell| and matrix rows come largest first."""
    runs, qrels = track
    matrix = queries.shift_matrix(runs, qrels, "RR")
    moved = queries.movement(matrix)
    cells = matrix.abs().fillna(0.0)
    assert moved.queries_moved == int((cells >= 0.5e-4).any(axis=1).sum())
    assert list(moved.per_query.values()) == sorted(moved.per_query.values(), reverse=True)
    if len(matrix):
        qid, run, shift = moved.largest
        assert abs(shift) == cells.to_numpy().max() == moved.per_query[qid]
        assert matrix.loc[qid, run] == shift

"""Judgments (lookup, relevance levels) and the ranking order of a file's query stretches."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tiecore
from tiecore.engine import judgments as jm
from tiecore.engine.ranking import _IN_ORDER, Ranking, _stretch_order
from tiecore.errors import InputError
from tiecore.io.ids import RunIds


def _case(seed: int) -> tuple[pd.DataFrame, np.ndarray, pa.Array]:
    """Qrels over a few queries and docnos of varied lengths, and run rows partly judged."""
    rng = np.random.default_rng(seed)
    names = [f"d{'x' * int(rng.integers(0, 40))}{i}" for i in range(60)] + ["", "é" * 9]
    drawn = zip(rng.integers(0, 5, 150), rng.integers(0, 61, 150), strict=True)
    pairs = {(str(q), names[d]) for q, d in drawn}
    qrels = pd.DataFrame(sorted(pairs), columns=["qid", "docno"])
    qrels = qrels[qrels["docno"] != ""].reset_index(drop=True)
    qrels["level"] = rng.integers(-1, 4, len(qrels))
    query = rng.integers(0, 5, 400)
    docno = pa.array([names[d] for d in rng.integers(0, 62, 400)], pa.string())
    return qrels, query, docno


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("given_hashes", [False, True])
def test_lookup_equals_a_dictionary(seed, collide, given_hashes, monkeypatch) -> None:
    qrels, query, docno = _case(seed)
    judgments = jm.Judgments.from_qrels(qrels)
    qids = judgments.qids.tolist()
    query = np.minimum(query, len(qids) - 1)
    levels = {(q, d): int(v) for q, d, v in qrels.itertuples(index=False)}
    expected = [levels.get((qids[q], d)) for q, d in zip(query, docno.to_pylist(), strict=True)]
    if collide:  # every hash in one of 3 values: the exact path must answer
        real = jm.docno_hashes
        monkeypatch.setattr(jm, "docno_hashes", lambda s: real(s) % np.uint64(3))
    for kind in (pa.string(), pa.large_string()):
        column = docno.cast(kind)
        # the hashes the reader keeps (tiecore.io.ids.RunIds) or none: the same answer
        hashes = jm.docno_hashes(column) if given_hashes else None
        level, judged = judgments.lookup(query, column, hashes)
        assert judged.tolist() == [e is not None for e in expected]
        assert level.tolist() == [0 if e is None else e for e in expected]


def test_the_readers_hashes_are_the_lookups() -> None:
    """Ranking.build probes with the hashes of the reader's duplicate test."""
    docno = pa.chunked_array([["FBIS3-1", "LA0101-9"], ["FT911-3"]], pa.large_string())
    ids = RunIds.of(pa.chunked_array([["301", "301"], ["302"]]), docno)
    assert ids.docno_hash.tolist() == jm.docno_hashes(docno.combine_chunks()).tolist()
    assert ids.qids.to_pylist() == ["301", "302"] and ids.query.tolist() == [0, 0, 1]


# ------------------------------------------------------------------ relevance levels


def _num_rel_trec_eval(levels: list[int], rel_level: int) -> int:
    """trec_eval 9.0.x's num_rel (form_res_rels.c): it counts the docs of each level
    ``i >= 0`` (negative levels are "in the pool, not judged") with ``i >= rel_level``."""
    counts: dict[int, int] = {}
    for level in levels:
        if level >= 0:
            counts[level] = counts.get(level, 0) + 1
    return sum(n for i, n in counts.items() if i >= rel_level)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(-3, 4)), min_size=1, max_size=30),
    st.integers(-3, 5),
)
def test_num_rel_is_trec_evals(rows, rel_level) -> None:
    qrels = pd.DataFrame(
        {
            "qid": [str(q) for q, _ in rows],
            "docno": [f"d{i}" for i in range(len(rows))],
            "level": [level for _, level in rows],
        }
    )
    judgments = jm.Judgments.from_qrels(qrels, rel_level)
    small = jm.Judgments.from_small(
        qrels["qid"].tolist(), qrels["docno"].tolist(), qrels["level"].to_numpy(), rel_level
    )
    for q, qid in enumerate(judgments.qids):
        levels = qrels.loc[qrels["qid"] == qid, "level"].tolist()
        assert judgments.num_rel[q] == small.num_rel[q] == _num_rel_trec_eval(levels, rel_level)
        # bpref's judged non-relevant: 0 <= level < rel_level
        nonrel = sum(0 <= level < rel_level for level in levels)
        assert judgments.num_nonrel[q] == small.num_nonrel[q] == nonrel


def test_a_negative_level_is_never_relevant() -> None:
    """With rel_level <= 0 every level >= 0 is relevant and negative ones are not, as in
    trec_eval: -l-1 and -l0 give the same values, and a doc at level -1 counts as
    neither relevant nor judged non-relevant."""
    qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c", "d"], "level": [-1, 0, 1, -2]})
    run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c", "d", "e"],
                        "score": [5.0, 4.0, 4.0, 2.0, 1.0]})  # fmt: skip
    measures = ["P@2", "AP", "RR", "Rprec", "Bpref", "nDCG", "R@5"]
    for ties in ("aware", "oblivious"):
        values = [
            tiecore.evaluate(run, qrels, measures, rel_level=level, ties=ties)["value"].tolist()
            for level in (-3, -1, 0)
        ]
        assert values[0] == values[1] == values[2]
    # the relevant docs are b and c (levels 0 and 1), a and d are neither
    ranking = Ranking.build(run, jm.Judgments.from_qrels(qrels, -1), tiebreak="file_order")
    assert ranking.rel.tolist() == [False, True, True, False, False]
    assert ranking.nonrel.tolist() == [False] * 5
    obl = tiecore.evaluate(run, qrels, ["P@2", "R@5"], rel_level=-1, ties="oblivious")
    # trec_eval's order (score, then docno descending): a, c, b, d, e
    assert obl["value"].tolist() == [0.5, 1.0]


@pytest.mark.parametrize("bad", [1.5, "1", True, None])
def test_from_qrels_checks_rel_level(bad) -> None:
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["a"], "level": [1]})
    with pytest.raises(InputError, match="rel_level"):
        jm.Judgments.from_qrels(qrels, bad)
    with pytest.raises(InputError, match="rel_level"):
        jm.Judgments.from_small(["1"], ["a"], np.array([1]), bad)


# --------------------------------------------------------------- file order by stretches


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3)), max_size=40),
    st.booleans(),
)
def test_stretch_order_is_the_stable_sort(rows, stretched) -> None:
    """Runs list each query's docs by score in some order of queries: the stretches are
    put in query order without a sort, exactly as the stable sort orders the rows."""
    if stretched:  # each query one stretch, scores descending in it, queries shuffled
        rows = sorted(rows, key=lambda r: (r[0] * 7919) % 5)
        rows = sorted(rows, key=lambda r: ((r[0] * 7919) % 5, -r[1]))
    query = np.array([q for q, _ in rows], np.int32)
    key = np.array([s for _, s in rows], np.float64)
    stable = np.lexsort((-key, query))  # by query, then key descending, ties in file order
    order = _stretch_order(query, key)
    if order is _IN_ORDER:
        assert stable.tolist() == list(range(len(rows)))
    elif order is not None:
        assert order.tolist() == stable.tolist()
    if stretched:
        assert order is not None


def test_a_run_of_shuffled_queries_ranks_as_the_sorted_one() -> None:
    qrels = pd.DataFrame({"qid": ["1", "2", "10"], "docno": ["a", "b", "c"], "level": 1})
    run = pd.DataFrame(
        {
            "qid": ["2", "2", "10", "10", "1"],
            "docno": ["b", "x", "c", "y", "a"],
            "score": [3.0, 3.0, 2.0, 1.0, 1.0],
        }
    )
    judgments = jm.Judgments.from_qrels(qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shuffled = Ranking.build(run, judgments, tiebreak="file_order")
    ordered = run.iloc[[4, 2, 3, 0, 1]].reset_index(drop=True)  # qrels order: 1, 10, 2
    assert judgments.qids.tolist() == ["1", "10", "2"]
    expected = Ranking.build(ordered, judgments, tiebreak="file_order")
    assert shuffled.docno.to_pylist() == expected.docno.to_pylist() == ["a", "c", "y", "b", "x"]
    assert shuffled.row.tolist() == [4, 2, 3, 0, 1]
    assert shuffled.group.tolist() == expected.group.tolist()

"""A run's rows in the ranking: queries in the judgments' (byte) order, each query's
rows as the file lists them (file order), every row's judgment found -- against a
plain sort and a dict lookup, on runs whose query stretches are out of that order
(qids 1..12: "10" sorts before "2") and with queries the qrels lack."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.io import trec


@st.composite
def _track(draw):
    queries = draw(st.lists(st.integers(1, 12), min_size=1, max_size=6, unique=True))
    judged = draw(st.sets(st.sampled_from(queries), min_size=1))
    run, qrels = [], {}
    for q in queries:  # one stretch per query, in the drawn (not sorted) order
        docs = draw(st.lists(st.integers(0, 30), min_size=1, max_size=12, unique=True))
        scores = sorted(draw(st.lists(st.integers(0, 3), min_size=len(docs), max_size=len(docs))))
        run += [(str(q), f"D{d}", s) for d, s in zip(docs, reversed(scores), strict=True)]
        if q in judged:
            for d in draw(st.lists(st.integers(0, 30), max_size=10, unique=True)):
                qrels[(str(q), f"D{d}")] = draw(st.integers(0, 2))
    if not qrels:  # a run needs a judged query
        qrels[(str(min(judged)), "D0")] = 1
    return run, qrels


@settings(max_examples=150, deadline=None)
@given(_track())
def test_file_order_ranking_against_a_plain_sort(tmp_path_factory, track):
    run, qrels = track
    folder = tmp_path_factory.mktemp("order")
    (folder / "run.txt").write_text(
        "".join(f"{q} Q0 {d} {k + 1} {s} t\n" for k, (q, d, s) in enumerate(run))
    )
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {v}\n" for (q, d), v in qrels.items()))
    columns = trec.read_qrels_columns(folder / "qrels.txt")
    judgments = Judgments.from_columns(columns["qid"], columns["docno"], columns["level"])
    read = trec.read_run_columns(folder / "run.txt")
    score = np.asarray(read.score.to_pylist(), dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries without judgments: a warning
        ranking = Ranking.build_columns(
            read.ids, read.docno, score, judgments, tiebreak="file_order"
        )
    qids = sorted({q for q, _ in qrels})  # byte order of these ASCII qids
    code = {q: i for i, q in enumerate(qids)}
    kept = [k for k, (q, _, _) in enumerate(run) if q in code]
    expected = sorted(kept, key=lambda k: (code[run[k][0]], k))  # stable: file order
    assert ranking.row.tolist() == expected
    assert ranking.query.tolist() == [code[run[k][0]] for k in expected]
    assert ranking.docno.to_pylist() == [run[k][1] for k in expected]
    assert ranking.score.tolist() == [float(run[k][2]) for k in expected]
    assert ranking.level.tolist() == [qrels.get(run[k][:2], 0) for k in expected]
    assert ranking.judged.tolist() == [run[k][:2] in qrels for k in expected]
    skipped = sorted({q for q, _, _ in run} - set(code))
    assert ranking.skipped.tolist() == skipped


def test_cut_and_head_read_the_top_rows_of_each_query():
    """Ranking.cut: min(retrieved, bounds); Ranking.head: each query's top rows' values,
    padded, against a loop over the queries."""
    import pandas as pd

    run = pd.DataFrame(
        {"qid": ["1"] * 5 + ["2"] * 2, "docno": list("abcdeab"), "score": [5, 4, 4, 2, 1, 3, 3.0]}
    )
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "b"], "level": [1, 1]})
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    assert ranking.cut().tolist() == [5, 2]
    assert ranking.cut(3, None).tolist() == [3, 2] and ranking.cut(None, 1).tolist() == [1, 1]
    values = np.arange(len(ranking.rank)) * 10.0
    cut = ranking.cut(4)
    head = ranking.head(values, cut, -1.0)
    for q, (start, count) in enumerate(zip(ranking.starts, cut, strict=True)):
        expected = list(values[start : start + count]) + [-1.0] * (head.shape[1] - count)
        assert head[q].tolist() == expected
    rows, valid = ranking.head_rows(cut)
    assert valid.sum(axis=1).tolist() == cut.tolist() and (rows[~valid] == 0).all()

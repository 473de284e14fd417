"""What the explorer's pages show (tiecore.explain.views), against brute force and by hand.

The IPrec curve's exact columns equal the mean, the population sd, the minimum and the
maximum of interpolated precision over every ordering of the tied docs, computed here
by hand from its definition; its refused form equals tiecore's sampled mode.  The
unjudged queries equal a set difference written with Python sets.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import tiecore
from tiecore.explain import anatomy, views

DOCS = ["d1", "d2", "d3", "d4", "d5"]
#: One query: d1 alone on top, d2..d5 tied, d2 and d3 relevant, d9 relevant but not retrieved.
RUN = pd.DataFrame({"qid": "q", "docno": DOCS, "score": [2.0, 1.0, 1.0, 1.0, 1.0]})
QRELS = pd.DataFrame({"qid": "q", "docno": [*DOCS, "d9"], "level": [0, 1, 1, 0, 0, 1]})


def iprec_by_hand(order: list[str], level: float) -> float:
    """Interpolated precision at recall ``level``: the highest precision at a rank with at
    least trec_eval's ``(long) (level * R + 0.9)`` relevant docs above it (0 where none is;
    C's double arithmetic is Python's float's)."""
    relevant = set(QRELS.loc[QRELS["level"] > 0, "docno"])
    needed = int(level * len(relevant) + 0.9)
    found, best = 0, 0.0
    for rank, doc in enumerate(order, 1):
        found += doc in relevant
        if found >= needed:
            best = max(best, found / rank)
    return best


def test_the_exact_curve_is_the_mean_sd_min_and_max_over_every_ordering():
    curve = views.iprec_curve(RUN, QRELS)
    table = curve["table"]
    assert curve["refused"] is None and curve["samples"] == 0
    assert table["recall"].tolist() == pytest.approx([k / 10 for k in range(11)])
    orders = [["d1", *rest] for rest in itertools.permutations(DOCS[1:])]
    values = np.array([[iprec_by_hand(o, r) for r in views.IPREC_LEVELS] for o in orders])
    assert np.allclose(table["aware"], values.mean(axis=0), rtol=0, atol=1e-12)
    assert np.allclose(table["sd"], values.std(axis=0), rtol=0, atol=1e-12)
    assert np.allclose(table["min"], values.min(axis=0), rtol=0, atol=1e-12)
    assert np.allclose(table["max"], values.max(axis=0), rtol=0, atol=1e-12)
    # trec_eval's order: score descending, then docno descending (d5 d4 d3 d2 after d1)
    oblivious = [iprec_by_hand(["d1", "d5", "d4", "d3", "d2"], r) for r in views.IPREC_LEVELS]
    assert np.allclose(table["oblivious"], oblivious, rtol=0, atol=1e-12)
    by_docno = views.iprec_curve(RUN, QRELS, tiebreak="docno_asc")["table"]
    ascending = [iprec_by_hand(DOCS, r) for r in views.IPREC_LEVELS]
    assert np.allclose(by_docno["oblivious"], ascending, rtol=0, atol=1e-12)


def test_a_refused_curve_is_sampled_with_the_refusal_said():
    curve = views.iprec_curve(RUN, QRELS, budget=0.0, samples=50, seed=3, name="mine")
    assert curve["samples"] == 50 and curve["refused"].startswith("run mine: query q has a tie")
    table = curve["table"]
    assert "aware" not in table.columns
    drawn = tiecore.evaluate(
        {"mine": RUN}, QRELS, list(views.iprec_measures()), ties="sampled", samples=50, seed=3
    )
    assert np.array_equal(table["sampled"], drawn["value"])
    assert np.array_equal(table["sampled_sd"], drawn["std"])


def test_iprec_measures_are_the_eleven_levels():
    names = views.iprec_measures()
    assert len(names) == 11 and len(set(names)) == 11
    assert [str(tiecore.Measure.parse(n)) for n in names] == list(names)  # canonical
    assert names[1] == "IPrec(recall=0.1)" and names[5] == "IPrec(recall=0.5)"


def test_query_parts_are_the_anatomy_of_the_query():
    parts = views.query_parts(RUN, QRELS, "q", "P@3")
    assert parts["num_rel"] == 3 and len(parts["query"]) == 5
    assert parts["groups"]["size"].tolist() == [1, 4]
    # P@3 over the 24 orderings of the tie: d1 then 2 of the 4 tied, each relevant w.p. 1/2
    assert parts["formula"].value == pytest.approx(1 / 3, abs=1e-12)
    assert parts["ranks"] is not None
    assert parts["listing"]["docno"].tolist() == ["d1", "d5", "d4", "d3", "d2"]
    query = anatomy.QueryList.of(RUN, QRELS, "q")
    assert parts["quantities"] == anatomy.paper_quantities(anatomy.tie_groups(query), 3)


def test_unjudged_queries_are_a_set_difference():
    runs = {
        "a": pd.DataFrame({"qid": ["2", "1", "9", "1", "10"]}),
        "b": pd.DataFrame({"qid": [7, 8]}),  # ids compare as text
        "c": pd.DataFrame({"qid": pd.Series([], dtype=object)}),
    }
    qrels = pd.DataFrame({"qid": ["1", "2", "7"]})
    found = views.unjudged_queries(runs, qrels)
    for name, run in runs.items():
        queries = set(run["qid"].astype(str))
        assert found[name][0].tolist() == sorted(queries)
        assert found[name][1].tolist() == sorted(queries - set(qrels["qid"]))


def test_judged_runs_keep_the_runs_with_a_judged_query_and_say_what_went():
    runs = {
        "a": pd.DataFrame({"qid": ["1", *map(str, range(20, 27))]}),
        "ghost": pd.DataFrame({"qid": ["5", "6"]}),
        "full": pd.DataFrame({"qid": ["1"]}),
    }
    kept, notes = views.judged_runs(runs, pd.DataFrame({"qid": ["1"]}))
    assert list(kept) == ["a", "full"] and kept["a"] is runs["a"]
    assert notes == (
        "run a: 7 queries without judgments skipped (20, 21, 22, 23, 24 ...)",
        "run ghost left out: none of its 2 queries is in the qrels (5, 6)",
    )


def test_the_skip_note_is_tiecores_warning():
    run = pd.DataFrame({"qid": ["q", "x"], "docno": ["d1", "d1"], "score": [1.0, 1.0]})
    with pytest.warns(tiecore.TieCoreWarning) as said:
        tiecore.evaluate({"r": run}, QRELS, ["P@5"])
    _, notes = views.judged_runs({"r": run}, QRELS)
    assert notes == (str(said[0].message),)

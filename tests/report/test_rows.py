"""Rows of a tidy frame (tiecore.report.rows) equal what tiecore gives when asked for them."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

import tiecore
from tiecore.report import rows

RUN = pd.DataFrame(
    {"qid": ["1", "1", "2", "2"], "docno": ["a", "b", "a", "c"], "score": [1.0, 1.0, 2.0, 1.0]}
)
QRELS = pd.DataFrame({"qid": ["1", "2", "2"], "docno": ["a", "a", "c"], "level": [1, 1, 0]})
RUNS = {"x": RUN, "y": RUN.assign(score=[3.0, 1.0, 1.0, 1.0]), "z": RUN.iloc[:2]}
MEASURES = ["P@1", "AP", "nDCG@2"]


@pytest.mark.parametrize("ties", ["oblivious", "aware"])
def test_selected_rows_equal_a_call_for_them(ties):
    every = tiecore.evaluate(RUNS, QRELS, MEASURES, ties=ties, per_query=True)
    for names in (["z", "x"], ["y"], ["x", "y", "z"]):
        for measures in itertools.permutations(MEASURES, 2):
            alone = tiecore.evaluate(
                {n: RUNS[n] for n in names}, QRELS, list(measures), ties=ties, per_query=True
            )
            pd.testing.assert_frame_equal(rows.select_rows(every, measures, names), alone)


def test_summary_rows_equal_a_call_without_per_query():
    every = tiecore.evaluate(RUNS, QRELS, MEASURES, ties="aware", per_query=True)
    means = tiecore.evaluate(RUNS, QRELS, MEASURES, ties="aware")
    pd.testing.assert_frame_equal(rows.summary_rows(every), means)


def test_rows_of_names_not_in_the_frame_are_none():
    frame = pd.DataFrame({"run": ["a"], "measure": ["P"], "value": [1.0]})
    assert rows.select_rows(frame, ["R"], ["a"]).empty
    assert rows.select_rows(frame, ["P"], ["b"]).empty

"""Sampled mode: the same seed draws the same tie-breaks whatever else is asked."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import tiecore


def tie_heavy(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows = 200
    run = pd.DataFrame(
        {
            "qid": rng.choice(["q1", "q2", "q3"], rows),
            "docno": [f"d{i}" for i in range(rows)],
            "score": rng.integers(0, 4, rows).astype(float),
        }
    )
    judged = rng.random(rows) < 0.5
    qrels = pd.DataFrame(
        {
            "qid": run["qid"][judged].to_numpy(),
            "docno": run["docno"][judged].to_numpy(),
            "level": rng.integers(0, 3, judged.sum()),
        }
    )
    return run, qrels


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**16), st.sampled_from(["P@5", "RR@3", "nDCG@10", "Success@2"]))
def test_a_measure_draws_the_same_orders_alone_or_with_others(seed, measure):
    run, qrels = tie_heavy(seed)
    alone = tiecore.evaluate(run, qrels, [measure], ties="sampled", samples=30, seed=seed)
    together = tiecore.evaluate(
        run, qrels, ["AP", measure, "Bpref"], ties="sampled", samples=30, seed=seed
    )
    together = together[together["measure"] == measure].reset_index(drop=True)
    pd.testing.assert_frame_equal(alone, together)


def test_samples_are_reproducible_and_seed_dependent():
    run, qrels = tie_heavy(7)
    first = tiecore.evaluate(run, qrels, ["AP"], ties="sampled", samples=40, seed=1)
    again = tiecore.evaluate(run, qrels, ["AP"], ties="sampled", samples=40, seed=1)
    other = tiecore.evaluate(run, qrels, ["AP"], ties="sampled", samples=40, seed=2)
    pd.testing.assert_frame_equal(first, again)
    assert first["value"].iloc[0] != other["value"].iloc[0]


def test_a_query_without_ties_keeps_its_value_and_zero_spread():
    run, qrels = tie_heavy(3)
    run["score"] = np.arange(len(run), dtype=float)  # no ties at all
    measures = ["P@5", "AP", "nDCG@10", "Bpref"]
    sampled = tiecore.evaluate(run, qrels, measures, ties="sampled", samples=25, per_query=True)
    oblivious = tiecore.evaluate(run, qrels, measures, ties="oblivious", per_query=True)
    assert (sampled["std"] == 0).all() and (sampled["stderr"] == 0).all()
    np.testing.assert_array_equal(sampled["value"], oblivious["value"])

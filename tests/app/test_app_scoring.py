"""Scoring functions and Build a scoring function on TREC runs and LETOR features (AppTest).

Both pages work on the sidebar's data whatever its source: the Robust03 runs are
compared and coarsened as the MSLR features are.  What they show is recomputed
with :mod:`tiecore` (and ranks with :func:`scipy.stats.rankdata`) and must agree.
"""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats
from test_app import (  # noqa: F401  (no_warm_up: an autouse fixture)
    QRELS_FILE,
    RUN_FILES,
    assert_clean,
    chart_specs,
    close,
    goto,
    new_app,
    no_warm_up,
    table,
)

import tiecore
from app_lib import cache, data
from tiecore.explain import builder


@pytest.fixture(scope="module")
def sample():
    return tiecore.read_runs(RUN_FILES), tiecore.read_qrels(QRELS_FILE)


def test_scoring_functions_compare_the_robust03_runs(sample):
    runs, qrels = sample
    at = goto(new_app(), "scoring_functions")
    assert_clean(at)
    assert not at.info  # no fallback to the MSLR sample
    captions = " ".join(c.value for c in at.caption)
    assert "Robust03 sample" in captions and "Each run is a scoring function" in captions
    measure = at.selectbox(key="features_measure").value
    shown = table(at, columns={"aware", "trec_eval", "rank_trec_eval"}).set_index("run")
    assert sorted(shown.index) == sorted(runs)
    for policy in ("trec_eval", "docno_asc", "file_order", "optimistic", "pessimistic"):
        expected = tiecore.evaluate(runs, qrels, measure, ties="oblivious", tiebreak=policy)
        expected = expected.set_index("run")["value"]
        assert close(shown.loc[expected.index, policy], expected), policy
        if policy in ("trec_eval", "docno_asc", "file_order"):
            ranks = stats.rankdata(-expected.round(12).to_numpy(), method="min")
            assert shown.loc[expected.index, f"rank_{policy}"].tolist() == ranks.tolist()
    aware = tiecore.evaluate(runs, qrels, measure).set_index("run")["value"]
    assert close(shown.loc[aware.index, "aware"], aware)
    bias = shown["trec_eval"] - shown["aware"]
    assert close(shown["trec_eval_minus_aware"].where(bias.abs() >= 1e-12, 0.0), bias.where(
        bias.abs() >= 1e-12, 0.0
    ))  # fmt: skip
    for name, run in runs.items():
        sizes = run.groupby(["qid", "score"]).size()
        assert close(shown.loc[name, "share_tied_rows"], sizes[sizes > 1].sum() / len(run))
    assert "name" not in shown.columns  # runs have no feature names to show


def test_builder_coarsens_a_run_and_ranks_it_among_the_other_runs(sample):
    runs, qrels = sample
    at = goto(new_app(), "builder")
    assert_clean(at)
    name = "aplrob03a"
    at.selectbox(key="builder_run").set_value(name).run()
    assert_clean(at)
    measure = at.selectbox(key="builder_measure").value
    shown = table(at, columns={"levels", "share_tied_rows", "tie_sd", "rank_aware"})
    others = {n: r for n, r in runs.items() if n != name}
    features = pd.DataFrame(
        {
            "aware": tiecore.evaluate(others, qrels, measure).set_index("run")["value"],
            "trec_eval": tiecore.evaluate(others, qrels, measure, ties="oblivious").set_index(
                "run"
            )["value"],
        }
    )
    levels = [None, 1000, 300, 100, 30, 10, 5, 3, 2]
    expected = builder.sweep(
        runs, qrels, {name: 1.0}, levels, measure, features=features
    )  # ranked against the other 4 runs
    for column in ("share_tied_rows", "oblivious", "aware", "min", "max", "tie_sd"):
        assert close(shown[column], expected[column]), column
    assert shown["rank_aware"].tolist() == expected["rank_aware"].tolist()
    assert (expected["features"] == len(others)).all()
    assert shown["share_tied_rows"].iloc[-1] > shown["share_tied_rows"].iloc[0]
    # the rank line only when the rank moves; a sentence when it stays put
    ranks = expected[["rank_aware", "rank_oblivious"]].to_numpy()
    flat = bool((ranks == ranks[0, 0]).all())
    assert ("builder_rank" in chart_specs(at)) is not flat
    said = " ".join(m.value for m in at.info)
    assert ("at every level count" in said) is flat
    # the continuous score keeps the run's order and ties: its tie-aware value is the run's
    assert close(expected["aware"].iloc[0], tiecore.evaluate({name: runs[name]}, qrels, measure)[
        "value"
    ].iloc[0])  # fmt: skip


def test_features_are_picked_by_name_and_shown_whole():
    at = new_app()
    at.sidebar.radio(key="source").set_value("mslr").run()
    dataset = cache.mslr_sample()
    chooser = at.sidebar.multiselect(key=f"features_{dataset.key}")
    assert chooser.value == []  # none chosen: every feature
    labels = [dataset.describe(f"f{n}") for n in range(16, 21)]
    assert labels[0] == "f16 · IDF (Inverse document frequency), body"
    assert len(set(labels)) == 5 and all(label in chooser.options for label in labels)
    chooser.set_value(["f16", "f128", "f134"]).run()
    at = goto(at, "scoring_functions")
    assert_clean(at)
    shown = table(at, columns={"aware", "name"}).set_index("run")
    assert sorted(shown.index) == ["f128", "f134", "f16"]
    assert shown.loc["f16", "name"] == "IDF (Inverse document frequency), body"
    at = goto(at, "builder")
    assert_clean(at)
    built = table(at, columns={"levels", "features"})
    assert (built["features"] == 3).all()  # ranked among the three chosen features


def test_select_features_by_names_or_ranges_and_refuses_unknown_ones():
    full = data.dataset_from_letor(data.MSLR_FILE.name, data.MSLR_FILE.read_bytes())
    by_names = data.select_features(full, ["f3", "f1", "f2"])
    by_text = data.select_features(full, "1-3")
    assert list(by_names.runs) == list(by_text.runs) == ["f1", "f2", "f3"]
    assert by_names.key == by_text.key != full.key
    assert data.select_features(full, "all") is full
    with pytest.raises(tiecore.InputError, match="feature f999 is not in the file"):
        data.select_features(full, ["f1", "f999"])
    assert data.tidy_feature_name("IDF(Inverse document frequency): body") == (
        "IDF (Inverse document frequency), body"
    )

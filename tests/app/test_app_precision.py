"""The Precision what-if page, driven by streamlit's AppTest.

Every number the page shows for a run at a lower precision is recomputed here
from the sample files: the rounding with :func:`tiecore.explain.precision.coarsen_run`,
the ties counted with pandas, the values with :func:`tiecore.evaluate` and
:func:`tiecore.spread.evaluate_spread`, the ranks with :func:`scipy.stats.rankdata`.
"""

from __future__ import annotations

import app_edge_data as edge
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_app import (  # noqa: F401  (no_warm_up: an autouse fixture)
    MEASURES,
    QRELS_FILE,
    RUN_FILES,
    assert_clean,
    close,
    goto,
    new_app,
    no_warm_up,
    table,
)

import tiecore
from app_lib import cache, data
from tiecore import spread
from tiecore.explain import builder, policies
from tiecore.explain.precision import coarsen_run


@pytest.fixture(scope="module")
def sample():
    return tiecore.read_runs(RUN_FILES), tiecore.read_qrels(QRELS_FILE)


def shown_metric(at, label: str) -> tuple[str, str]:
    """Value and delta of the metric whose label starts with ``label``."""
    found = [(m.value, m.delta) for m in at.metric if m.label.startswith(label)]
    assert found, [m.label for m in at.metric]
    return found[0]


def ties_of(run: pd.DataFrame) -> tuple[int, int]:
    """Tie groups (two or more docs of one query with one score) and the rows in them."""
    sizes = run.groupby(["qid", "score"]).size()
    return int((sizes > 1).sum()), int(sizes[sizes > 1].sum())


def test_a_run_at_bf16_shows_tiecores_ties_values_and_ranges(sample):
    runs, qrels = sample
    at = goto(new_app(), "precision")
    assert_clean(at)
    name = at.selectbox(key="precision_run").value
    assert at.segmented_control(key="precision_choice").value == "bf16"
    coarse = coarsen_run(runs[name], "bf16")
    groups, rows = ties_of(runs[name])
    groups_after, rows_after = ties_of(coarse)
    assert rows_after >= rows
    assert shown_metric(at, "tie groups") == (f"{groups_after:,}", f"was {groups:,}")
    assert shown_metric(at, "tied rows") == (f"{rows_after:,}", f"was {rows:,}")
    said = " ".join(m.value for m in at.markdown)
    assert f"{rows_after:,} of its {len(coarse):,} rows" in said

    shown = table(at, columns={"measure", "aware_after", "oblivious_after"}).set_index("measure")
    assert list(shown.index) == MEASURES
    for when, frame in (("before", runs[name]), ("after", coarse)):
        oblivious = tiecore.evaluate({name: frame}, qrels, MEASURES, ties="oblivious")
        exact = spread.evaluate_spread({name: frame}, qrels, MEASURES).set_index("measure")
        oblivious = oblivious.set_index("measure")["value"]
        assert close(shown[f"oblivious_{when}"], oblivious.loc[MEASURES])
        assert close(shown[f"aware_{when}"], exact.loc[MEASURES, "value"])
        ranges = [f"{lo:.4f} … {hi:.4f}" for lo, hi in exact.loc[MEASURES, ["min", "max"]].values]
        assert shown[f"range_{when}"].tolist() == ranges
    assert (shown["aware_after"] != shown["aware_before"]).any()  # bf16 moves this run


def test_every_run_at_one_decimal_reranks_as_scipy_does(sample):
    runs, qrels = sample
    at = goto(new_app(), "precision")
    at.segmented_control(key="precision_choice").set_value("decimals").run()
    at.number_input(key="precision_decimals").set_value(1).run()
    at.toggle(key="precision_every").set_value(True).run()
    assert_clean(at)
    measure = at.selectbox(key="precision_measure").value
    board = table(at, columns={"label_after_aware", "label_before"})
    coarse = {n: coarsen_run(r, 1) for n, r in runs.items()}
    for suffix, frames in (("before", runs), ("after", coarse)):
        aware = tiecore.evaluate(frames, qrels, measure).set_index("run")["value"]
        order = board.index if board.index.name == "run" else board["system"]
        values = aware.loc[list(order)].to_numpy()
        ranks = stats.rankdata(-np.round(values, 12), method="min").astype(int)
        shared = pd.Series(ranks).duplicated(keep=False).to_numpy()
        labels = [("=" if s else "") + str(r) for r, s in zip(ranks, shared, strict=True)]
        assert board[f"label_{suffix}_aware"].tolist() == labels, suffix
        assert close(board[f"{suffix}_aware"], values)
    said = " ".join(m.value for m in at.markdown)
    assert "when every run is at 1 decimal" in said


def test_the_page_on_mslr_features_names_them_whole():
    at = new_app()
    at.sidebar.radio(key="source").set_value("mslr").run()
    at = goto(at, "precision")
    at.selectbox(key="precision_run").set_value("f16").run()
    at.segmented_control(key="precision_choice").set_value("fp16").run()
    assert_clean(at)
    assert (
        "f16 · IDF (Inverse document frequency), body" in at.selectbox(key="precision_run").options
    )
    dataset = cache.mslr_sample()
    groups, rows = ties_of(dataset.runs["f16"])
    after = ties_of(coarsen_run(dataset.runs["f16"], "fp16"))
    assert shown_metric(at, "tie groups") == (f"{after[0]:,}", f"was {groups:,}")
    assert shown_metric(at, "tied rows") == (f"{after[1]:,}", f"was {rows:,}")


def test_tie_change_and_leaderboard_change_agree_with_direct_counts(sample):
    runs, _ = sample

    coarse = {n: coarsen_run(r, "bf16") for n, r in runs.items()}
    found = builder.tie_change(policies.tie_profiles(runs)[0], policies.tie_profiles(coarse)[0])
    for name in runs:
        assert found.loc[name, ["tie_groups_before", "tied_rows_before"]].tolist() == list(
            ties_of(runs[name])
        )
        assert found.loc[name, ["tie_groups_after", "tied_rows_after"]].tolist() == list(
            ties_of(coarse[name])
        )
    before = pd.Series({"a": 0.3, "b": 0.5, "c": 0.1 + 0.2, "d": 0.2})
    board = builder.leaderboard_change(before, pd.Series({"d": 0.6}))
    assert board["rank_before"].tolist() == [2, 1, 2, 4]  # 0.1 + 0.2 ties 0.3
    assert board["rank_after"].tolist() == [3, 2, 3, 1]
    assert board["places"].tolist() == [1, 1, 1, -3] and board["moved"].all()
    with pytest.raises(tiecore.InputError, match="run e has no value before"):
        builder.leaderboard_change(before, pd.Series({"e": 0.1}))


@pytest.mark.parametrize("name", list(edge.TREC_SETS))
def test_the_page_on_every_edge_data_set(name):
    """No ties, one run, an unjudged run, 120 runs ...: the page says what it finds."""
    files, qrels = edge.TREC_SETS[name]()
    at = new_app(uploaded_trec=data.dataset_from_trec(files, qrels))
    at.sidebar.radio(key="source").set_value("trec").run()
    at = goto(at, "precision")
    assert_clean(at)
    assert at.metric and "Ties at bfloat16" in [h.value for h in at.subheader]
    at.toggle(key="precision_every").set_value(True).run()
    assert_clean(at)

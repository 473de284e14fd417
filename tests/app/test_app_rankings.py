"""The System rankings page's statistics for reviewers, driven by streamlit's AppTest.

Every number the page shows is recomputed here with :func:`tiecore.compare.compare` and
:meth:`tiecore.compare.Comparison.with_options` and must agree.
"""

from __future__ import annotations

import json

import app_edge_data as edge
import numpy as np
import pytest
from scipy import stats
from streamlit.runtime.media_file_manager import MediaFileManager
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
from app_lib import data
from tiecore import compare, report


@pytest.fixture(scope="module")
def reference():
    """The sample's runs and tiecore's comparison with the page's settings."""
    runs = tiecore.read_runs(RUN_FILES)
    qrels = tiecore.read_qrels(QRELS_FILE)
    return runs, compare.compare(runs, qrels, "P@10", samples=200, seed=0, n_resamples=1000)


def test_rankings_page_shows_corrections_noise_and_help_hurt(reference):
    runs, result = reference
    at = goto(new_app(), "rankings")
    assert_clean(at)
    baseline = sorted(runs)[0]
    at.selectbox(key="rankings_correction").set_value("bonferroni")
    box = next(b for b in at.selectbox if b.key.startswith("rankings_baseline_"))
    box.set_value(baseline)
    at.run()
    assert_clean(at)
    reviewed = result.with_options(correction="bonferroni", baseline=baseline)
    pairs = table(at, columns={"a", "b", "t_pvalue_adj", "wilcoxon_pvalue", "tie_sd"})
    shown = list(zip(pairs["a"], pairs["b"], strict=True))  # runs are shown by their names
    expected = reviewed.pairs.loc[shown]
    for column in ("tie_sd", "topic_sd", "diff_low", "diff_high"):
        assert close(pairs[column], expected[column]), column
    for column in (  # p-values as papers print them: "< 0.001", three digits, "—"
        "t_pvalue_adj", "randomization_pvalue_adj", "wilcoxon_pvalue", "wilcoxon_pvalue_adj",
    ):  # fmt: skip
        assert list(pairs[column]) == [report.format_pvalue(p) for p in expected[column]], column
    hovered = 0  # the scatter's hover prints p-values as compare's text does (<1e-300 floor)
    for chart in at.get("plotly_chart"):
        for trace in json.loads(chart.proto.spec)["data"]:
            if "t-test p" in trace.get("hovertemplate", ""):
                for a, b, t_p, rand_p, *_ in trace["customdata"]:
                    row = reviewed.pairs.loc[(a, b)]
                    assert t_p == report.format_pvalue(row["t_pvalue_adj"])
                    assert rand_p == report.format_pvalue(row["randomization_pvalue"])
                    hovered += 1
    assert hovered > 0
    systems = table(at, columns={"system", "tie_sd", "topic_sd", "ci_low", "ci_high"})
    assert len(systems) == len(runs)
    expected = reviewed.systems.loc[systems["system"]]
    for column in ("mean", "tie_sd", "topic_sd", "ci_low", "ci_high"):
        assert close(systems[column], expected[column]), column
    counts = table(at, columns={"system", "help", "hurt", "equal", "within_tie_noise"})
    expected = reviewed.help_hurt.loc[counts["system"]]
    for column in ("help", "hurt", "equal", "within_tie_noise", "mean_diff"):
        assert close(counts[column], expected[column]), column
    said = " ".join(m.value for m in (*at.info, *at.markdown))
    upper = report.ranks.pairs_in_order(reviewed.pairs, list(reviewed.scores.index), 0.05)
    assert report.ranks.significance_sentence(upper, 0.05, "bonferroni") in said
    assert "alpha" not in said and "--" not in said  # plain words, no option names


def test_rankings_page_says_so_when_nothing_is_significant(reference):
    at = goto(new_app(), "rankings")
    at.select_slider(key="rankings_alpha").set_value(0.001)
    at.selectbox(key="rankings_correction").set_value("bonferroni")
    at.run()
    assert_clean(at)
    said = " ".join(m.value for m in at.info)
    reviewed = reference[1].with_options(correction="bonferroni")
    upper = report.ranks.pairs_in_order(reviewed.pairs, list(reviewed.scores.index), 0.001)
    verdict = report.ranks.significance_sentence(upper, 0.001, "bonferroni")
    if verdict.startswith("No pair"):
        assert f"Nothing is significant. {verdict}" in said
    else:
        assert "Nothing is significant" not in said


def test_rankings_page_adds_tukey_on_request(reference):
    at = goto(new_app(), "rankings")
    at.checkbox(key="rankings_tukey").check()
    at.run()
    assert_clean(at)
    pairs = table(at, columns={"a", "b", "tukey_pvalue", "tukey_low", "tukey_high"})
    expected = reference[1].with_options(tukey=True).tukey
    expected = expected.loc[list(zip(pairs["a"], pairs["b"], strict=True))]
    for column in ("tukey_low", "tukey_high"):
        assert close(pairs[column], expected[column]), column
    assert list(pairs["tukey_pvalue"]) == [
        report.format_pvalue(p) for p in expected["tukey_pvalue"]
    ]


# ----------------------------------------------------------------------------- readable rankings


def rank_numbers(labels) -> np.ndarray:
    """``["1", "=2", "=2", "4"]`` as the integers ``[1, 2, 2, 4]``."""
    return np.array([int(label.removeprefix("=")) for label in labels])


def test_no_rank_moving_is_said_in_a_sentence_not_a_flat_chart(reference):
    """The sample: every tie-break ranks the systems alike; a sentence, no flat chart."""
    _, result = reference
    at = goto(new_app(), "rankings")
    assert_clean(at)
    ranks = report.ordering_ranks(result.scores, ["trec_eval", "aware"]).ranks
    assert (ranks["trec_eval"] == ranks["aware"]).all()  # the premise
    assert "rankings_bump" not in chart_specs(at)
    said = " ".join(m.value for m in at.success)
    assert "a slope chart would be flat lines" in said


def test_the_slope_chart_names_every_system_at_both_ends():
    """Tie-heavy runs whose ranks move: every system named on the left and the right."""
    from test_app import synthetic_trec

    files, qrels = synthetic_trec()
    at = new_app(uploaded_trec=data.dataset_from_trec(files, qrels))
    at.sidebar.radio(key="source").set_value("trec").run()
    goto(at, "rankings")
    assert_clean(at)
    bump = chart_specs(at)["rankings_bump"]
    texts = [note["text"] for note in bump["layout"]["annotations"]]
    names = ("alpha", "beta", "gamma")  # the runs' tags
    for name in names:  # every system named on the left and on the right, in the SVG's text
        assert sum(name in text for text in texts) == 2, (name, texts)
    assert len(bump["data"]) == len(names)
    ticks = bump["layout"]["xaxis"]["ticktext"]
    assert ticks[0] == "trec_eval" and ticks[-1] == "tie-aware"


def test_ranks_are_whole_numbers_with_ties_marked(reference):
    _, result = reference
    at = goto(new_app(), "rankings")
    shown = table(at, columns={"system", "rank_aware", "rank_trec_eval", "mean_rank_sampled"})
    aware = result.scores.loc[shown["system"], "aware"].to_numpy()
    expected = stats.rankdata(-np.round(aware, 10), method="min")
    assert (rank_numbers(shown["rank_aware"]) == expected).all()
    shared = np.array([(expected == r).sum() > 1 for r in expected])
    assert (shown["rank_aware"].str.startswith("=").to_numpy() == shared).all()
    mean_rank = result.sample_scores.rank(axis=1, ascending=False).mean()
    assert close(shown["mean_rank_sampled"], mean_rank.loc[shown["system"]])


@pytest.fixture
def latex_downloads(monkeypatch):
    """The page's deferred downloads by file name (their data is built when asked for)."""
    found = {}
    original = MediaFileManager.add_deferred

    def spy(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        found[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    return found


def test_rankings_download_as_latex_and_csv_with_every_system(reference, latex_downloads):
    runs, _ = reference
    at = goto(new_app(), "rankings")
    assert_clean(at)
    latex = latex_downloads["rankings_P_10.tex"]()
    assert r"\begin{tabular}" in latex and r"\toprule" in latex
    for name in runs:
        assert name in latex, name
    csv = latex_downloads["rankings_P_10.csv"]()
    for name in runs:
        assert name in csv, name
    assert {"pairs_P_10.tex", "pairs_P_10.csv", "systems_P_10.tex"} <= set(latex_downloads)


def edge_app(name: str):
    files, qrels = edge.TREC_SETS[name]()
    at = new_app(uploaded_trec=data.dataset_from_trec(files, qrels))
    at.sidebar.radio(key="source").set_value("trec").run()
    return goto(at, "rankings")


def test_orderings_that_all_agree_are_said_in_a_sentence():
    """No ties at all: every tie-break gives one ranking; a sentence, not a matrix of 1.00."""
    at = edge_app("no_ties")
    at.selectbox(key="rankings_measure").set_value("AP").run()  # P@10: both runs score alike
    assert_clean(at)
    said = " ".join(m.value for m in at.success)
    assert "All orderings rank the systems identically" in said
    assert "rankings_agreement" not in chart_specs(at)
    assert "rankings_significance" not in chart_specs(at)  # one pair: said in words
    assert "One pair:" in " ".join(m.value for m in at.markdown)


def test_orderings_that_differ_get_the_matrix():
    """Tie-heavy runs whose tie-breaks disagree: the matrix of Kendall's tau is drawn."""
    from test_app import synthetic_trec

    files, qrels = synthetic_trec()
    at = new_app(uploaded_trec=data.dataset_from_trec(files, qrels))
    at.sidebar.radio(key="source").set_value("trec").run()
    goto(at, "rankings")
    assert_clean(at)
    heat = chart_specs(at)["rankings_agreement"]["data"][0]
    cells = np.array(heat["text"], dtype=object)  # the values as the cells print them
    assert cells.shape[0] >= 2 and set(cells.ravel()) - {"1.00", "—"}  # some pair disagrees
    assert "All orderings rank" not in " ".join(m.value for m in at.success)


def test_150_systems_top_20_highlighted_from_the_address_pairs_capped():
    """A whole track: 20 systems compared at first (the best tie-aware), the address's
    measure and runs chosen and highlighted, and with all 150 compared the pairs' chart and
    table keep the 300 pairs closest in rank, saying how many were left out."""
    from streamlit.testing.v1 import AppTest
    from test_app import ROOT, TIMEOUT
    from test_app_words import BAD, shown_words

    from app_pages import rankings

    files, qrels = edge.many_runs(150)
    dataset = data.dataset_from_trec(files, qrels)
    names = dataset.names
    picked = [names[5], names[140]]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["measure"] = "P@5"
    at.query_params["runs"] = ",".join(picked)
    at.session_state["uploaded_trec"] = dataset
    at.session_state["source"] = "trec"
    at.run()
    goto(at, "rankings")
    assert_clean(at)
    assert at.selectbox(key="rankings_measure").value == "P@5"
    assert at.number_input(key=f"rankings_top_{dataset.key}_150").value == 20
    assert at.multiselect(key=f"rankings_marked_{dataset.key}").value == picked
    aware = tiecore.evaluate(dataset.runs, dataset.qrels, "P@5", ties="aware")
    aware = aware.set_index("run")["value"]
    shown = table(at, columns={"system", "aware_value"})
    starred = shown["system"].str.startswith("★ ")
    shown["system"] = shown["system"].str.removeprefix("★ ")
    assert set(shown.loc[starred, "system"]) == set(picked)
    assert close(shown["aware_value"], aware.loc[shown["system"]])
    top = [r for r in shown["system"] if r not in picked]
    assert len(top) == 20 - sum(r in top for r in picked) and len(shown) <= 22
    rest = aware.drop(shown["system"])
    assert aware.loc[top].min() >= rest.max()  # the best tie-aware systems
    bump = chart_specs(at).get("rankings_bump")
    if bump is not None:  # drawn when a rank moves: the highlighted ones in black
        black = [t for t in bump["data"] if t["line"]["color"] == rankings.MARK_COLOR]
        assert len(black) == 2

    at.checkbox(key=f"rankings_only_{dataset.key}").check().run()  # the highlighted alone
    alone = table(at, columns={"system", "aware_value"})["system"].str.removeprefix("★ ")
    assert sorted(alone) == sorted(picked)
    at.checkbox(key=f"rankings_only_{dataset.key}").uncheck().run()
    at.number_input(key=f"rankings_top_{dataset.key}_150").set_value(150).run()
    assert_clean(at)
    order = list(table(at, columns={"system", "aware_value"})["system"].str.removeprefix("★ "))
    assert len(order) == 150
    pairs = table(at, columns={"a", "b", "t_pvalue_adj"})
    assert len(pairs) == rankings.PAIRS_SHOWN
    place = {r: i for i, r in enumerate(order)}
    distance = [abs(place[b] - place[a]) for a, b in zip(pairs["a"], pairs["b"], strict=True)]
    assert sorted(distance) == [1] * 149 + [2] * 148 + [3] * 3  # neighbours first
    said = " ".join(c.value for c in at.caption)
    assert "300 pairs closest in rank" in said and "of all 11,175 pairs" in said
    assert "the other 10,875 are left out" in said
    bad = [(kind, text[:120]) for kind, text in shown_words(at) if BAD.search(text)]
    assert bad == []

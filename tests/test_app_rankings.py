"""The System rankings page's statistics for reviewers, driven by streamlit's AppTest.

Every number the page shows is recomputed here with :func:`tiecore.compare.compare` and
:meth:`tiecore.compare.Comparison.with_options` and must agree.
"""

from __future__ import annotations

import json

import pytest
from test_app import (  # noqa: F401  (navigation_only, no_warm_up: autouse fixtures)
    QRELS_FILE,
    RUN_FILES,
    assert_clean,
    close,
    goto,
    navigation_only,
    new_app,
    no_warm_up,
    table,
)

import tiecore
from tiecore import compare


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
    for column in (
        "t_pvalue_adj", "randomization_pvalue_adj", "wilcoxon_pvalue", "wilcoxon_pvalue_adj",
        "tie_sd", "topic_sd", "diff_low", "diff_high",
    ):  # fmt: skip
        assert close(pairs[column], expected[column]), column
    hovered = 0  # the scatter's hover prints p-values as compare's text does (<1e-300 floor)
    for chart in at.get("plotly_chart"):
        for trace in json.loads(chart.proto.spec)["data"]:
            if "t-test p" in trace.get("hovertemplate", ""):
                for a, b, t_p, rand_p, *_ in trace["customdata"]:
                    row = reviewed.pairs.loc[(a, b)]
                    assert t_p == compare.format_pvalue(row["t_pvalue_adj"])
                    assert rand_p == compare.format_pvalue(row["randomization_pvalue"])
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
    verdict = reviewed.verdict(0.05)
    assert verdict[1:] in said


def test_rankings_page_says_so_when_nothing_is_significant(reference):
    at = goto(new_app(), "rankings")
    at.select_slider(key="rankings_alpha").set_value(0.001)
    at.selectbox(key="rankings_correction").set_value("bonferroni")
    at.run()
    assert_clean(at)
    said = " ".join(m.value for m in at.info)
    verdict = reference[1].with_options(correction="bonferroni").verdict(0.001)
    if verdict.startswith("no pair"):
        assert f"Nothing is significant: {verdict}." in said
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
    for column in ("tukey_pvalue", "tukey_low", "tukey_high"):
        assert close(pairs[column], expected[column]), column

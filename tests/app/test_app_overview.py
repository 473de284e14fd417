"""The Overview page in the units a paper prints, driven by streamlit's AppTest.

The heat map, the banner, the metrics and the report downloads are recomputed
here with :func:`tiecore.report.modes_table`, :func:`tiecore.report.expected_flags`
and :func:`tiecore.report.significance_vs_best`, and Python's own formatting of
the values (what a paper prints), and must agree.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from test_app import (  # noqa: F401  (no_warm_up: an autouse fixture)
    MEASURES,
    QRELS_FILE,
    RUN_FILES,
    assert_clean,
    chart_specs,
    close,
    goto,
    metric,
    new_app,
    no_warm_up,
    table,
)

import tiecore
from tiecore import report


@pytest.fixture(scope="module")
def sample():
    runs = tiecore.read_runs(RUN_FILES)
    qrels = tiecore.read_qrels(QRELS_FILE)
    return runs, qrels


@pytest.fixture
def downloads(monkeypatch):
    """The page's deferred downloads by file name (their data is built when asked for)."""
    found = {}
    original = MediaFileManager.add_deferred

    def spy(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        found[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    return found


def _said(at) -> str:
    return " ".join(m.value for m in (*at.warning, *at.info, *at.success))


def test_the_heat_map_and_the_banner_speak_in_absolute_shifts(sample):
    runs, qrels = sample
    at = goto(new_app(), "overview")
    assert_clean(at)
    expected = report.modes_table(runs, qrels, MEASURES)
    keyed = expected.set_index(["run", "measure"])
    heat = chart_specs(at)["overview_z"]["data"][0]
    assert heat["colorscale"] and heat["zmid"] == 0 and heat["zmin"] == -heat["zmax"]
    grid = np.array(heat["z"], dtype=float)
    for i, label in enumerate(heat["y"]):
        run = next(r for r in runs if label.startswith(r[:20]))
        for j, measure in enumerate(heat["x"]):
            row = keyed.loc[(run, measure)]
            assert close(grid[i, j], row["delta"])  # the colour is the absolute shift
            text = f"{row['delta']:+.4f}" if abs(row["delta"]) >= 5e-5 else None
            if text is not None and row["delta"] != 0:
                assert heat["text"][i][j] == text + ("†" if row["flagged"] else "")
            assert "tie sd" in heat["customdata"][i][j]  # the hover adds z
    assert abs(heat["zmax"]) == pytest.approx(np.nanmax(np.abs(grid)))
    flagged = int(expected["flagged"].sum())
    base = report.expected_flags(expected, 4)
    said = _said(at)
    assert f"{flagged} of {len(expected)} values moved by more than the tie noise" in said
    assert f"would flag about {base:.0f} of them (the base rate)" in said or (
        f"would flag about {base:.1f} of them (the base rate)" in said
    )
    assert report.flag_verdict(flagged, base)[1] in said
    largest = expected.loc[expected["delta"].abs().idxmax()]
    assert metric(at, "largest shift") == f"{largest['delta']:+.4f}"
    assert metric(at, "flagged") == str(flagged)
    assert "a shift of +" in said or "a shift of -" in said  # the shift first, in units
    # the count a reader sees on the landing page, reconciled with the flags in plain words
    visible = int(expected["visible"].sum())
    assert metric(at, "change at 4 decimals") == f"{visible} of {len(expected)}"
    assert report.reconcile_sentence(report.flag_counts(expected), 4) in said


def test_the_decimals_a_paper_prints_decide_what_is_flagged(sample):
    runs, qrels = sample
    at = goto(new_app(), "overview")
    at.number_input(key="overview_digits").set_value(2).run()
    assert_clean(at)
    expected = report.modes_table(runs, qrels, MEASURES, digits=2)
    shown = table(at, columns={"visible", "flagged", "delta"}).set_index(["run", "measure"])
    keyed = expected.set_index(["run", "measure"])
    assert (shown.loc[keyed.index, "visible"] == keyed["visible"]).all()
    assert (shown.loc[keyed.index, "flagged"] == keyed["flagged"]).all()
    prints = [
        f"{o:.2f}" != f"{a:.2f}" for o, a in zip(keyed["oblivious"], keyed["aware"], strict=True)
    ]
    assert (keyed["visible"] == np.array(prints)).all()  # what a paper prints at 2 decimals
    printed = [report.format_shift(d, 2) for d in keyed["delta"]]  # never -0.00
    assert shown.loc[keyed.index, "delta"].tolist() == printed
    assert metric(at, "flagged") == str(int(keyed["flagged"].sum()))
    at_four = report.modes_table(runs, qrels, MEASURES)["flagged"].sum()
    assert keyed["flagged"].sum() < at_four  # 2 decimals hide shifts that 4 show
    base = report.expected_flags(expected, 2)
    shown_base = metric(at, "flags expected by chance")
    assert shown_base == (f"{base:.0f}" if base >= 1 else f"{base:.1f}")
    assert "show at 2 decimals" in _said(at) or "shows at 2 decimals" in _said(at)
    assert "nan" not in " ".join(shown["position"].astype(str)).lower()


def test_the_report_downloads_carry_the_holm_verdict_and_the_chosen_measures(sample, downloads):
    runs, qrels = sample
    at = goto(new_app(), "overview")
    at.multiselect(key="overview_report_measures").set_value(["AP", "P@10"]).run()
    assert_clean(at)
    latex = downloads["tiecore_report.tex"]()
    markdown = downloads["tiecore_report.md"]()
    spec = re.search(r"\\begin\{tabular\}\{([lr]+)\}", latex).group(1)
    assert spec == "lrr" and "System & AP & P@10" in latex
    assert "\\resizebox{\\columnwidth}{!}{" in latex and "graphicx" in latex
    assert "Holm-corrected" in latex and "Holm-corrected" in markdown
    per_query = tiecore.evaluate(runs, qrels, MEASURES, per_query=True)
    marks = report.significance_vs_best(per_query)
    table_ = report.modes_table(runs, qrels, MEASURES)
    assert (
        latex.split("\\begin{table}")[1]
        == report.to_latex(table_, marks, measures=["AP", "P@10"]).split("\\begin{table}")[1]
    )
    assert (
        markdown.count("*") - 2 * markdown.count("**")
        == marks[marks["measure"].isin(["AP", "P@10"])]["significant"].sum() + 1
    )  # the stars and the legend's

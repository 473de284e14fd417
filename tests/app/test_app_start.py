"""The "Start here" page, driven by ``streamlit.testing.v1.AppTest``.

The app opens on it; it shows the three-document example's RR under three tools'
tie rules and the tie-aware mean over every order, each recomputed here with
:func:`tiecore.evaluate` (never typed in), links to every page, and says the
tie effect on the loaded data with the numbers of :func:`app_lib.cache.modes`'
source, :func:`tiecore.report.combine_modes`.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
from test_app import (  # noqa: F401  (no_warm_up: an autouse fixture)
    QRELS_FILE,
    ROOT,
    RUN_FILES,
    assert_clean,
    new_app,
    no_warm_up,
    table,
)

import app
import tiecore
from app_lib import glossary
from tiecore import report, spread

#: The page's example, as the page builds it: tied d2 d1 d3 in the file, d1 relevant.
RUN = pd.DataFrame({"qid": "q1", "docno": ["d2", "d1", "d3"], "score": [1.0, 1.0, 1.0]})
QRELS = pd.DataFrame({"qid": "q1", "docno": ["d1", "d2", "d3"], "level": [1, 0, 0]})


def fraction(value: float) -> str:
    return str(Fraction(float(value)).limit_denominator(100))


def rr(ties: str, tiebreak: str = "trec_eval") -> float:
    return float(tiecore.evaluate(RUN, QRELS, "RR", ties=ties, tiebreak=tiebreak)["value"].iloc[0])


def test_the_app_opens_on_the_start_page_and_it_shows_the_example_from_tiecore():
    at = new_app(page=None)
    assert at.title[0].value.startswith("Start here")
    shown = table(at, columns={"Tool", "RR"}).set_index("Tool")
    expected = {
        "trec_eval": rr("oblivious", "trec_eval"),
        "id-ascending tool": rr("oblivious", "docno_asc"),
        "file-order tool": rr("oblivious", "file_order"),
    }
    for tool, value in expected.items():
        exact = fraction(value)  # a whole number alone, else the fraction ≈ 4 decimals
        said = exact if "/" not in exact else f"{exact} ≈ {report.format_value(value)}"
        assert shown.loc[tool, "RR"] == said
    assert len({round(v, 9) for v in expected.values()}) == 3  # three tools, three answers
    # the relevant document's rank is the reciprocal of each RR
    assert np.allclose(1 / shown["Rank of d1"].to_numpy(float), list(expected.values()))

    aware = rr("aware")
    orders = [list(p) for p in itertools.permutations(range(3))]  # brute force, independent
    by_hand = np.mean([1 / (1 + order.index(1)) for order in orders])  # d1 is row 1 of RUN
    assert np.isclose(aware, by_hand)
    assert fraction(aware) == str(Fraction(1 + 1 + Fraction(1, 2) * 2 + Fraction(1, 3) * 2) / 6)
    metric = next(m for m in at.metric if m.label.startswith("Tie-aware RR"))
    assert metric.value == f"{fraction(aware)} ≈ {report.format_value(aware)}"
    every = table(at, columns={"Order", "Ranked list", "RR"})
    assert len(every) == len(orders)
    listed = [Fraction(v) for v in every["RR"]]
    assert sum(listed) / len(listed) == Fraction(fraction(aware))


def test_the_start_page_links_every_page_and_skips_to_the_data():
    at = new_app(page=None)
    links = at.get("page_link")
    targets = [link.proto.page for link in links]
    labels = [link.proto.label for link in links]
    assert labels[0] == "Skip to the data →"
    app_pages = [name for name, _, _ in app.PAGES]
    assert app_pages[0] == "start" and len(app_pages) == 10
    assert targets[0] == "overview" and targets[1:] == app_pages[1:]  # each page once, in order
    assert labels[1:] == [
        "Overview", "Tie anatomy", "Variance", "System rankings", "Per-query drill-down",
        "Scoring functions",
        "Build a scoring function", "Precision what-if", "Playground",
    ]  # fmt: skip
    assert "try it yourself" in " ".join(c.value for c in at.caption)


def test_the_start_page_says_the_effect_on_the_loaded_data_from_tiecore():
    at = new_app(page=None)
    runs = tiecore.read_runs(RUN_FILES)
    qrels = tiecore.read_qrels(QRELS_FILE)
    measures = list(tiecore.measures.DEFAULT_MEASURES)
    oblivious = tiecore.evaluate(runs, qrels, measures, ties="oblivious")
    combined = report.combine_modes(oblivious, spread.evaluate_spread(runs, qrels, measures))
    row = combined.loc[combined["delta"].abs().idxmax()]
    said = " ".join(m.value for m in at.markdown)
    assert f"as **{report.format_value(row['oblivious'])}**" in said
    assert f"tie-aware value is **{report.format_value(row['aware'])}**" in said
    assert f"a shift of {row['delta']:+.4f}" in said
    assert str(row["measure"]) in said and str(row["run"]) in said
    if "visible" in combined:
        assert f"{int(combined['visible'].sum())} of {len(combined)} values change" in said


def test_the_sidebar_defines_the_chosen_measures():
    at = new_app(page=None)
    said = [c.value for c in at.sidebar.caption]
    for name in tiecore.measures.DEFAULT_MEASURES:
        assert glossary.define(name) in said, name
    at.sidebar.multiselect(key="measures").set_value(["P@7"]).run()
    assert "P@7: precision at 7: the share of the top 7 documents" in " ".join(
        c.value for c in at.sidebar.caption
    )


def test_no_legacy_pages_folder() -> None:
    """A ``pages/`` folder beside app.py switches Streamlit to its legacy multipage mode for
    a visitor who opens a page's address directly (checked in the browser tour too)."""
    assert not (ROOT / "pages").exists()


def test_a_pages_first_run_on_a_data_set_says_at_once_what_it_computes():
    """The sentence of a page's first run on a data set (shown at once, in a running status
    line) names what the page computes and on which data; once drawn it is gone."""
    assert {title for _, title, _ in app.PAGES} == set(app.FIRST_WORK)
    assert app.first_words("Tie anatomy", "mslr") == (
        "Taking the ranked lists apart into their tie groups on the MSLR-WEB10K sample "
        "(136 features as systems); the first time takes a few seconds ..."
    )
    assert app.first_words("Overview", "trec").endswith("on your data; the first time takes "
                                                         "a few seconds ...")  # fmt: skip
    at = new_app(page=None)
    assert ("Start here", "robust03") in at.session_state["_seen_pages"]
    at.sidebar.radio(key="source").set_value("mslr").run()
    assert_clean(at)
    assert ("Start here", "mslr") in at.session_state["_seen_pages"]
    assert not [s for s in at.get("expander") if "first time" in str(s.label)]  # gone

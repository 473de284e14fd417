"""Every page in plain words: no raw None or nan, no developer names, no "-0.0000", and a
"How it works" box, on the sample and on an edge data set (one query: undefined numbers).

The page's text is read from what AppTest holds: Markdown, captions, messages, metrics,
table cells and headers as configured, and the charts' titles, axes and trace names.
"""

from __future__ import annotations

import json
import re

import app_edge_data as edge
import pandas as pd
import pytest
from test_app import assert_clean, goto, new_app, no_warm_up  # noqa: F401

from app_lib import data

#: The pages this test reads (every page but the drill-down, which has its own tests).
PAGES = ("start", "overview", "tie_anatomy", "variance", "rankings", "scoring_functions",
         "builder", "precision", "playground")  # fmt: skip
#: What a reader must never see: a raw None or nan, a limit or a name from the code, a
#: negative zero.
BAD = re.compile(
    r"\bNone\b|\bnan\b|\bNaN\b|2147483647|iprec_at_recall|docno_asc|trec_eval_double"
    r"|file_order|[-−]0\.0+(?![0-9])"
)


def shown_words(at) -> list[tuple[str, str]]:
    """(where, text) for everything the page shows in words."""
    found = [
        (kind, str(e.value))
        for kind in ("markdown", "caption", "info", "warning", "success", "subheader", "title")
        for e in at.get(kind)
    ]
    found += [("metric", f"{m.label}: {m.value}") for m in at.metric]
    for frame in at.dataframe:
        value, config = frame.value, json.loads(frame.proto.columns or "{}")
        for column in value.columns:
            label = (config.get(str(column)) or {}).get("label") or str(column)
            found.append(("header", label))
            cells = value[column]
            if cells.dtype == object:
                found += [("cell", "None" if c is None else str(c)) for c in cells]
            elif pd.api.types.is_float_dtype(cells.dtype) and cells.isna().any():
                found.append(("cell", f"None (an undefined number in {label})"))
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        layout = spec.get("layout", {})
        title = layout.get("title", {})
        found.append(
            ("chart title", str(title.get("text", "") if isinstance(title, dict) else title))
        )
        for axis in [k for k in layout if k.startswith(("xaxis", "yaxis"))]:
            found.append(("axis", json.dumps(layout[axis].get("title", ""))))
            found.append(("ticks", json.dumps(layout[axis].get("ticktext", []))))
        found += [("trace", str(t.get("name", ""))) for t in spec.get("data", [])]
    return found


def check(at, where: str) -> None:
    bad = [(kind, text[:200]) for kind, text in shown_words(at) if BAD.search(text)]
    assert bad == [], where
    # the page's method in a collapsed box
    assert any(e.label == "How it works" for e in at.expander), where


@pytest.mark.parametrize("page", PAGES)
def test_the_sample_in_plain_words(page):
    at = goto(new_app(), page)
    assert_clean(at)
    check(at, page)


@pytest.mark.parametrize("page", ("overview", "rankings", "variance", "tie_anatomy"))
def test_one_query_in_plain_words(page):
    """One query: no topic sd, no interval, no effect size; printed as dashes."""
    files, qrels = edge.TREC_SETS["one_query"]()
    at = new_app(uploaded_trec=data.dataset_from_trec(files, qrels))
    at.sidebar.radio(key="source").set_value("trec").run()
    goto(at, page)
    assert_clean(at)
    check(at, f"one_query/{page}")


def test_a_tie_break_is_named_in_words_where_the_sidebar_sets_it():
    at = new_app()
    at.sidebar.selectbox(key="tiebreak").set_value("docno_asc").run()
    for page in ("overview", "builder", "tie_anatomy"):
        goto(at, page)
        assert_clean(at)
        check(at, f"docno_asc/{page}")


def test_the_sidebar_names_tie_breaks_and_bad_measures_in_words():
    at = new_app()
    options = at.sidebar.selectbox(key="tiebreak").options
    assert "docno ascending" in options and "file order" in options
    assert not [o for o in options if BAD.search(o)]
    at.sidebar.text_input(key="more_measures").set_value("P@x, AP").run()
    said = " ".join(e.value for e in at.error).replace("\\", "")
    assert "'P@x': the cutoff after @ must be a whole number, such as P@10" in said
    assert not BAD.search(said) and "measure: " not in said
    assert "AP" in at.session_state["context"][1].measures  # the good name kept

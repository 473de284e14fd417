"""User-provided names (run tags, query ids, docnos) are shown as text in the explorer.

An uploaded run whose tag or query ids are written as Markdown or HTML (``[x](http://..)``,
``**b**``, ``<b>..</b>``) must not become a link, emphasis or markup anywhere: in the
page's words (Markdown, captions, alerts, headings, expander and tab labels, widget
labels and radio options, which Streamlit renders as Markdown) and in the charts'
titles, legends, axes and hover texts (which plotly renders as its HTML subset).
Selectbox and multiselect options and table cells are shown as plain text anyway.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_app import (  # noqa: F401  (no_warm_up)
    PAGES,
    assert_clean,
    goto,
    new_app,
    no_warm_up,
)

from app_lib import data
from tiecore.report import escape_markdown

#: Run tags and query ids that Markdown or plotly would render as something else.
TAGS = ("[click](http://x.test)", "**bold**", "<b>tag</b>")
QIDS = ("**q1**", "[q2](http://y.test)", "<i>q3</i>", "q_4_")
#: What must never reach a renderer as written: Markdown syntax, then HTML.
MARKDOWN_RAW = ("[click](http", "[q2](http", "**bold**", "**q1**", "<b>tag</b>", "<i>q3</i>")
HTML_RAW = ("<b>tag</b>", "<i>q3</i>")


def markdown_upload(seed: int = 4) -> tuple[list[tuple[str, bytes]], tuple[str, bytes]]:
    """Three tie-heavy runs on four queries, tags and qids (and so docnos) as above."""
    rng = np.random.default_rng(seed)
    qrels = []
    for q in QIDS:
        levels = rng.integers(0, 3, 8)
        levels[0], levels[1] = 1, 0
        qrels += [f"{q} 0 {q}-d{i} {lv}" for i, lv in enumerate(levels)]
    runs = []
    for n, tag in enumerate(TAGS):
        lines = [
            f"{q} Q0 {q}-d{i} {i + 1} {int(rng.integers(1, 3))} {tag}"
            for q in QIDS
            for i in range(8)
        ]
        runs.append((f"run{n}.txt", ("\n".join(lines) + "\n").encode()))
    return runs, ("names.qrels", ("\n".join(qrels) + "\n").encode())


def _strings(value) -> list[str]:
    """Every string in a parsed JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


#: Elements whose ``body`` Streamlit renders as Markdown.
BODIES = {"markdown", "caption", "title", "header", "subheader", "info", "warning", "success",
          "error", "exception", "latex"}  # fmt: skip
#: Elements whose options Streamlit renders as Markdown (selectbox and multiselect: text).
MARKDOWN_OPTIONS = {"radio", "button_group"}


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def rendered(at) -> tuple[list[str], list[str]]:
    """The page's texts that Streamlit renders as Markdown (bodies; labels, help and
    radio or pill options of widgets; expander and tab labels), and every string of its
    plotly figures (rendered as plotly's HTML subset)."""
    markdown, charts = [], []
    for element in _walk(at._tree):
        proto = getattr(element, "proto", None)
        if element.type == "plotly_chart":
            charts += _strings(json.loads(proto.spec))
        elif element.type in BODIES:
            markdown.append(proto.body)
        elif proto is not None:
            for field in ("label", "help", "placeholder", "text"):
                text = getattr(proto, field, None)
                markdown += [text] if isinstance(text, str) else []
            if element.type in MARKDOWN_OPTIONS:
                options = getattr(proto, "options", [])
                markdown += [getattr(o, "content", o) for o in options]
    return markdown, charts


@pytest.fixture(scope="module")
def dataset():
    runs, qrels = markdown_upload()
    return data.dataset_from_trec(runs, qrels)


@pytest.mark.parametrize("page", PAGES)
def test_markdown_names_are_shown_as_text(dataset, page):
    at = new_app(page=None, uploaded_trec=dataset)
    at.sidebar.radio(key="source").set_value("trec").run()
    goto(at, page)
    assert_clean(at)
    markdown, charts = rendered(at)
    live = [text for text in markdown if any(raw in text for raw in MARKDOWN_RAW)]
    assert live == []
    marked = sorted({text for text in charts if any(raw in text for raw in HTML_RAW)})
    assert marked == []
    if page == "overview":  # the names are there, escaped
        assert any(escape_markdown("**bold**") in text for text in markdown)
        assert any("&lt;b&gt;tag&lt;/b&gt;" in text for text in charts)


def test_markdown_names_in_messages_and_single_run_notes():
    """An upload error quoting a name, the notes about a left-out run and query, and the
    one-run note of the scoring-functions page: escaped too."""
    runs, qrels = markdown_upload()
    extra = ("stray.txt", b"<i>q9</i> Q0 x 1 1 **stray**\n")  # a run no query of which is judged
    at = new_app(page=None)
    at.sidebar.radio(key="source").set_value("trec").run()
    at.sidebar.file_uploader(key="upload_runs").set_value(
        [(name, content, "text/plain") for name, content in [runs[1], extra]]
    )
    at.sidebar.file_uploader(key="upload_qrels").set_value((qrels[0], qrels[1], "text/plain"))
    at.run()
    assert_clean(at)
    for page in ("overview", "scoring_functions"):
        goto(at, page)
        assert_clean(at)
        markdown, _ = rendered(at)
        assert [t for t in markdown if any(r in t for r in (*MARKDOWN_RAW, "**stray**"))] == []
        assert any(escape_markdown("**stray**") in text for text in markdown)
    bad = (runs[0][0], runs[0][1] + b"**q1** Q0 **doc** 9 oops **bold**\n")
    at.sidebar.file_uploader(key="upload_runs").set_value([(bad[0], bad[1], "text/plain")])
    at.run()
    (message,) = [e.proto.body for e in at.error]
    assert "oops" in message and "**" not in message

"""A whole track in Chromium: an archive of 110 generated runs, the per-query drill-down at
1440 and 390 px, and a shared link that reopens a view in a fresh browser; then every page
of the explorer on the uploaded track at both widths (fast tier: about 40 s on 2 cores).

State-based (each step waits for the page to be idle and drawn; nothing is timed).
Screenshots: ``screenshots/track_drilldown_1440.png``, ``track_drilldown_390.png`` and
``track_link_390.png``.  On the drill-down page a reader meets no error, no raw
None/nan, nothing cut or too wide (:func:`browser_kit.page_problems`), no label cut
with an ellipsis (:func:`browser_kit.cut_text`) and none of the
code's names for the tie-breaks; no request leaves the machine.  The every-page test
(one upload, one session: each page opened from the sidebar at 1440 px, then the window
narrowed to 390 px) leaves ``screenshots/track_<page>_<width>.png`` for each page of
``app.PAGES``.
"""

from __future__ import annotations

import re

import pytest
from app_edge_data import track_archive
from browser_kit import (
    SETTLED,
    choose_option,
    cut_text,
    launch,
    new_tab,
    outside,
    page_problems,
    page_text,
    record_requests,
    screenshot,
    serve,
    timed,
    wait_until_rendered,
)

from app import PAGES

RUNS = 110
QUERIES = 20
DOCS = 30
#: The code's names a reader should not meet on the drill-down (the tie-breaks' keys).
DEVELOPER = ("docno_asc", "trec_eval_double", "file_order", "dd_", "shift_matrix", "qid")
SELECTS = ("Measure", "Query (largest shift first)", "First system", "Second system")


def _track(folder) -> tuple:
    """A zip of ``RUNS`` gzip run files (coarse scores: many ties), qrels and topics."""
    return track_archive(folder, RUNS, QUERIES, DOCS, seed=34)


def _choices(tab) -> dict[str, str]:
    """The value each of the drill-down's select boxes shows."""
    main = tab.locator('[data-testid="stMain"]')
    return {
        label: main.get_by_role("combobox", name=label, exact=True).input_value()
        for label in SELECTS
    }


def _pick(tab, label: str, option: str):
    """Type ``option`` into the select box ``label`` (its list shows the first options only)
    -> the click that picks it."""
    box = tab.get_by_role("combobox", name=label)
    box.click()
    box.press_sequentially(option)
    exact = re.compile(f"^{re.escape(option)}$")
    return tab.get_by_role("option").filter(has_text=exact).click


def _problems(tab) -> list[str]:
    text = page_text(tab)
    found = page_problems(tab) + cut_text(tab)
    found += [f"developer name {name!r}" for name in DEVELOPER if name in text]
    return found


@pytest.fixture(scope="module")
def server():
    with serve("streamlit_track.log") as url:
        yield url


def _upload(tab, server: str, archive, qrels) -> None:
    """Open the app and upload the qrels and the archive of runs from the sidebar."""
    tab.goto(server)
    wait_until_rendered(tab)
    source = tab.locator("label").filter(has_text="Upload TREC runs and qrels").first
    timed(tab, source.click)
    inputs = tab.locator('[data-testid="stSidebar"] [data-testid="stFileUploaderDropzoneInput"]')
    timed(tab, lambda: inputs.nth(1).set_input_files(str(qrels)))
    timed(tab, lambda: inputs.nth(2).set_input_files(str(archive)))
    sidebar = tab.locator('[data-testid="stSidebar"]').inner_text()
    assert "Still showing" not in sidebar
    assert f"{RUNS} runs from the archive track.zip" in page_text(tab)


def test_an_archive_the_drilldown_and_a_shared_link(server, tmp_path):
    archive, qrels, topics = _track(tmp_path)
    with launch() as browser:
        context, tab = new_tab(browser, width=1440, height=900)
        requests = [record_requests(context)]
        _upload(tab, server, archive, qrels)

        link = tab.locator('[data-testid="stSidebarNav"] a[href$="/queries"]').first
        timed(tab, link.click)
        assert "Per-query drill-down" in tab.locator("h1").first.inner_text()
        fold = tab.locator("summary").filter(has_text="Label queries with their topics")
        fold.click()
        main_inputs = tab.locator(
            '[data-testid="stMain"] [data-testid="stFileUploaderDropzoneInput"]'
        )
        timed(tab, lambda: main_inputs.first.set_input_files(str(topics)))
        timed(tab, _pick(tab, "Second system", "sys042"))
        chosen = _choices(tab)
        assert chosen["Second system"] == "sys042"
        assert re.match(r"4\d\d · generated topic 4\d\d", chosen["Query (largest shift first)"])
        text = page_text(tab)
        assert "sys042" in text and "tie-aware" in text
        assert "Uploads cannot travel in a link" in text
        assert _problems(tab) == []
        screenshot(tab, "track_drilldown_1440")
        tab.set_viewport_size({"width": 390, "height": 900})
        wait_until_rendered(tab)
        assert _problems(tab) == []
        screenshot(tab, "track_drilldown_390")
        context.close()

        # a view of the bundled sample, sent as a link, opens the same in a fresh browser
        context, tab = new_tab(browser, width=1440, height=900)
        requests.append(record_requests(context))
        tab.goto(f"{server}/queries")
        wait_until_rendered(tab)
        timed(
            tab,
            choose_option(
                tab, "Compare with the tie-break", "relevant documents last (worst case)"
            ),
        )
        shown = _choices(tab).values()
        others = [o for o in ("pircRBa1", "uwmtCR0", "aplrob03a") if o not in shown]
        timed(tab, choose_option(tab, "Second system", others[0]))
        tab.wait_for_function(f"() => location.search.includes('{others[0]}')")
        sent = tab.url
        seen = _choices(tab)
        context.close()
        context, fresh = new_tab(browser, width=390, height=900)
        requests.append(record_requests(context))
        fresh.goto(sent)
        wait_until_rendered(fresh)
        assert "Per-query drill-down" in fresh.locator("h1").first.inner_text()
        assert _choices(fresh) == seen
        other = fresh.get_by_role("combobox", name="Compare with the tie-break").input_value()
        assert other == "relevant documents last (worst case)"
        assert _problems(fresh) == []
        screenshot(fresh, "track_link_390")
        context.close()
    assert outside([url for urls in requests for url in urls]) == []


def _open(tab, name: str, title: str) -> None:
    """Open the page ``name`` from the sidebar's page list (unfolding the sidebar if the
    narrow window folded it away)."""
    nav = tab.locator('[data-testid="stSidebarNav"]')
    if not nav.is_visible():
        tab.locator('[data-testid="stExpandSidebarButton"]').click()
        nav.wait_for(state="visible")
    href = "/" if name == "start" else f"/{name}"
    link = nav.locator("a").filter(has_text=title).first
    assert link.get_attribute("href").endswith(href), (name, link.get_attribute("href"))
    timed(tab, link.click)
    assert title in tab.locator("h1").first.inner_text(), name


def _at_width(tab, width: int) -> None:
    """Set the window's width and wait until the page and its charts are laid out for it."""
    tab.set_viewport_size({"width": width, "height": 900})
    tab.evaluate("() => { window.__sizes = null; }")
    tab.wait_for_function(SETTLED, polling="raf")
    wait_until_rendered(tab)


def test_every_page_on_the_uploaded_track_at_both_widths(server, tmp_path):
    """After one upload of the archive, every page of the explorer at 1440 and 390 px: the
    session keeps the track across pages, and no page shows a reader an error, raw
    None/nan, something cut or too wide, or a developer name; no request leaves the
    machine."""
    archive, qrels, _ = _track(tmp_path)
    problems: dict[str, list[str]] = {}
    with launch() as browser:
        context, tab = new_tab(browser, width=1440, height=900)
        requests = record_requests(context)
        _upload(tab, server, archive, qrels)
        for name, title, _icon in PAGES:
            _at_width(tab, 1440)
            _open(tab, name, title)
            picked = tab.locator('[data-testid="stSidebar"] label').filter(
                has_text="Upload TREC runs and qrels"
            )
            assert picked.first.locator("input").is_checked(), name  # the track is kept
            for width in (1440, 390):
                _at_width(tab, width)
                found = _problems(tab)
                if found:
                    problems[f"{name} at {width} px"] = found
                screenshot(tab, f"track_{name}_{width}")
        context.close()
    assert problems == {}
    assert outside(requests) == []

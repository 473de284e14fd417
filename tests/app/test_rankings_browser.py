"""System rankings for a whole track in Chromium: an archive of 150 generated runs, the
page at 1440 and 390 px, two systems found by name and highlighted; the page's first run
on the upload says at once what it computes (a running status line, gone once drawn).

State-based (each step waits for the page to be idle and drawn; nothing is timed).
Screenshots: ``screenshots/rankings_150_1440.png`` and ``rankings_150_390.png``.  A reader
meets no error, no raw None/nan, nothing cut or too wide (:func:`browser_kit.page_problems`)
and none of the code's names for the tie-breaks; no request leaves the machine.
"""

from __future__ import annotations

import re

import pytest
from app_edge_data import track_archive
from browser_kit import (
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

RUNS = 150
QUERIES = 20
DOCS = 30
DEVELOPER = ("docno_asc", "trec_eval_double", "file_order", "rankings_", "2147483647")
PICKED = ("sys042", "sys137")
#: The running status line a page's first run on a data set shows (app.py): its icon.
SPINNING = "stExpanderIconSpinner"
#: Records whether that status line appeared (the page is not reloaded between pages).
STATUS = f"""() => {{
    window.__status = false;
    new MutationObserver(() => {{
        if (document.querySelector('[data-testid="{SPINNING}"]')) window.__status = true;
    }}).observe(document.body, {{childList: true, subtree: true}});
}}"""


def _track(folder) -> tuple:
    """A zip of ``RUNS`` gzip run files (coarse scores: many ties) and their qrels."""
    return track_archive(folder, RUNS, QUERIES, DOCS, seed=150)[:2]


def _highlight(tab, name: str):
    """Type ``name`` into the highlight box -> the click that picks it."""
    box = tab.get_by_role("combobox", name="Find and highlight systems")
    box.click()
    box.press_sequentially(name)
    return tab.get_by_role("option").filter(has_text=re.compile(f"^{name}$")).click


def _problems(tab) -> list[str]:
    text = page_text(tab)
    return page_problems(tab) + [f"developer name {n!r}" for n in DEVELOPER if n in text]


@pytest.fixture(scope="module")
def server():
    with serve("streamlit_rankings.log") as url:
        yield url


def test_150_runs_on_the_rankings_page_at_both_widths(server, tmp_path):
    archive, qrels = _track(tmp_path)
    with launch() as browser:
        context, tab = new_tab(browser, width=1440, height=900)
        requests = record_requests(context)
        tab.goto(server)
        wait_until_rendered(tab)
        source = tab.locator("label").filter(has_text="Upload TREC runs and qrels").first
        timed(tab, source.click)
        inputs = tab.locator(
            '[data-testid="stSidebar"] [data-testid="stFileUploaderDropzoneInput"]'
        )
        timed(tab, lambda: inputs.nth(1).set_input_files(str(qrels)))
        timed(tab, lambda: inputs.nth(2).set_input_files(str(archive)))
        assert f"{RUNS} runs from the archive track.zip" in page_text(tab)

        link = tab.locator('[data-testid="stSidebarNav"] a[href$="/rankings"]').first
        tab.evaluate(STATUS)
        timed(tab, link.click)
        # the page's first run on these data said at once what it computes, and is done
        assert tab.evaluate("() => window.__status") is True
        assert tab.locator(f'[data-testid="{SPINNING}"]').count() == 0
        assert "System rankings" in tab.locator("h1").first.inner_text()
        assert f"Comparing 20 of {RUNS} systems" in page_text(tab)
        for name in PICKED:
            timed(tab, _highlight(tab, name))
            tab.keyboard.press("Escape")
        tab.wait_for_function("() => location.search.includes('sys137')")
        text = page_text(tab)
        assert "2 highlighted" in text and "Highlighted (black" in text
        assert all(name in text for name in PICKED)
        screenshot(tab, "rankings_150_1440")
        assert _problems(tab) == []
        tab.set_viewport_size({"width": 390, "height": 900})
        wait_until_rendered(tab)
        screenshot(tab, "rankings_150_390")
        assert _problems(tab) == []
        context.close()
    assert outside(requests) == []

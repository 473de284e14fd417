"""The explorer as first-time users meet it, in Chromium, on a server of its own.

- A fresh server: how long the first visitor waits for the first words on the page
  and for a usable Overview, then a new visitor on the warm server (the goals:
  1 s, 4 s and 2 s on the 2-core development machine; the figures go to
  ``screenshots/timings.md``).
- Every page at 1440 and 390 px on the bundled sample, then at 1440 px on the MSLR
  sample and on five uploaded runs: a screenshot of each (``tour_<data>_<width>_<page>.png``),
  and what a reader would stumble on (:func:`browser_kit.page_problems`: errors, raw
  None/nan, a page wider than the window, a table or chart text cut off).
- The rankings chart names every system of the sample.
- Two visitors who upload different runs never see each other's run names.
- No request leaves the machine (the icon and every asset are served locally).
"""

from __future__ import annotations

import os
from math import nan

import pytest
from browser_kit import (
    ROOT,
    TIMINGS,
    launch,
    new_tab,
    outside,
    page_problems,
    record_requests,
    screenshot,
    serve,
    timed,
    wait_until_rendered,
    write_timings,
)
from playwright import sync_api

import app
from app_lib import data

#: The pages by url path (the landing page has none).
PATHS = (
    "",
    "overview",
    "tie_anatomy",
    "variance",
    "rankings",
    "scoring_functions",
    "builder",
    "precision",
    "playground",
)
SAMPLE = ROOT / "sample_data" / "robust03"
#: The goals of a first visit (seconds), on the 2-core development machine.
FIRST_CONTENT = 1.0
OVERVIEW_USABLE = 4.0
WARM_VISITOR = 2.0
#: Every request the tour's browser contexts made (checked at the end of each test).
REQUESTS: list[str] = []

#: Installed before any script of the page runs: when the main area first shows words
#: (a title), and when the page is first idle with every chart drawn, on the page's clock
#: (milliseconds since the navigation started).
CLOCK = """
window.__seen = {};
const tick = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    const app = document.querySelector('[data-testid="stApp"]');
    const now = performance.now();
    if (!window.__seen.content && main && main.querySelector('h1')
        && main.innerText.trim().length > 0) window.__seen.content = now;
    if (app && app.getAttribute('data-test-script-state') === 'running') window.__seen.ran = true;
    const busy = document.querySelector(
        '[data-testid="stSpinner"], [data-testid="stProgress"], [data-stale="true"], '
        + '[data-testid="stSkeleton"]');
    const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
        .every(chart => chart.querySelector('.main-svg'));
    if (window.__seen.ran && !window.__seen.usable && main && !busy && charts
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && main.innerText.trim().length > 0) window.__seen.usable = now;
    if (!window.__seen.usable) requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
"""


@pytest.fixture(scope="module")
def server():
    with serve("streamlit_tour.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with launch() as chromium:
        yield chromium


#: Streamlit's own floor on this machine: an app with the explorer's page config and page list
#: (a server's first run reads the icon with PIL and numpy; the browser draws the list) whose
#: pages show a title only, or a title and one chart.
FLOOR_APP = """
import streamlit as st
st.set_page_config(page_title="Floor", page_icon=ICON, layout="wide")
def floor():
    st.title("Floor")
    if st.query_params.get("chart"):
        st.plotly_chart({"data": [{"type": "bar", "x": [1, 2], "y": [2, 1]}], "layout": {}})
st.navigation([
    st.Page(floor, title=title, icon=f":material/{icon}:", url_path=name,
            default=name == "start")
    for name, title, icon in PAGES
]).run()
"""


@pytest.fixture(scope="module")
def floor(browser, tmp_path_factory) -> dict[str, float]:
    """The best of three new visitors to the floor app's landing page: seconds to its first
    words and, with one plotly chart, to usable (the browser loads Streamlit's and plotly's
    scripts); and its fresh server's first visitor's first words (``fresh words``)."""
    folder = tmp_path_factory.mktemp("floor")
    script = FLOOR_APP.replace("ICON", repr(str(app.ICON))).replace("PAGES", repr(app.PAGES))
    (folder / "floor.py").write_text(script)
    found: dict[str, list[float]] = {"words": [], "chart": []}
    with serve("streamlit_floor.log", "floor.py", folder) as url:
        for _ in range(3):
            for kind, path in (("words", "/"), ("chart", "/?chart=1")):
                context, tab = visitor(browser)
                content, usable = first_visit(tab, url + path, None)
                context.close()
                found[kind].append(content if kind == "words" else usable)
    best = {kind: min(values) for kind, values in found.items()}
    best["fresh words"] = found["words"][0]  # the first visitor of the fresh server
    load = os.getloadavg()[0]
    TIMINGS["floor: a title-only page, first words"] = (best["words"], load, False, nan)
    first = "floor: its fresh server's first visitor, first words"
    TIMINGS[first] = (best["fresh words"], load, False, nan)
    TIMINGS["floor: a page with a title and one chart, usable"] = (best["chart"], load, False, nan)
    write_timings()
    return best


def visitor(browser, width: int = 1440):
    """A new visitor: a browser context of its own (a Streamlit session), requests recorded."""
    context, tab = new_tab(browser, width=width, height=900)
    urls = record_requests(context)
    context.on("close", lambda _: REQUESTS.extend(urls))
    return context, tab


def first_visit(tab, url: str, label: str | None) -> tuple[float, float]:
    """Open ``url`` in a fresh tab -> (seconds to the first words, seconds to usable); noted
    in ``timings.md`` under ``label`` (None: not noted)."""
    tab.add_init_script(CLOCK)
    tab.goto(url)
    tab.wait_for_function("() => window.__seen && window.__seen.usable", polling=100)
    wait_until_rendered(tab)
    content, usable = tab.evaluate("() => [window.__seen.content, window.__seen.usable]")
    if label:
        note_visit(label, content / 1000, usable / 1000)
    return content / 1000, usable / 1000


def note_visit(label: str, content: float, usable: float) -> None:
    """Write a visit's seconds to the first words and to usable to ``timings.md``."""
    load = os.getloadavg()[0]
    TIMINGS[f"{label}: first words"] = (content, load, True, nan)
    TIMINGS[f"{label}: usable"] = (usable, load, True, nan)
    write_timings()


def no_outside_requests() -> None:
    assert outside(REQUESTS) == [], sorted(set(outside(REQUESTS)))[:10]


# ----------------------------------------------------------------------------- start-up


def test_fresh_server_then_a_new_visitor(server, browser, floor):
    """The first visitor of a fresh server opens the Overview; later visitors find it warm.

    The goals, scaled by the load beyond the machine's two cores (a busy CI machine): the
    first words within 1 s (or within 0.25 s of Streamlit's own first words, where those
    alone take longer: a fresh server's first visitor against the floor's), a fresh
    server's Overview usable within 4 s, and a new visitor's landing page within 2 s (the
    best of three new visitors, as the floor is).  A new visitor who opens the Overview by
    its address also waits for plotly's scripts and three charts: within 1.5 s of
    Streamlit's one-chart floor.  Every figure is written to ``timings.md`` as measured.
    """
    scale = max(1.0, os.getloadavg()[0] / 2)
    words = max(FIRST_CONTENT, floor["words"] + 0.25) * scale
    fresh_words = max(FIRST_CONTENT, floor["fresh words"] + 0.25) * scale
    context, tab = visitor(browser)
    content, usable = first_visit(tab, f"{server}/overview", "fresh server, Overview")
    # opened by its address, the page still runs inside app.py: wide, the app's page list
    nav = tab.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
    width = tab.evaluate(
        """() => document.querySelector('[data-testid="stMainBlockContainer"]').clientWidth"""
    )
    context.close()
    names = [text.split("\n")[-1] for text in nav]  # each link: its icon's name, then its text
    assert names[:2] == ["Start here", "Overview"] and width > 1000, (names, width)
    goals = {"": WARM_VISITOR, "overview": max(WARM_VISITOR, floor["chart"] + 1.5)}
    for path, label in (("", "warm server, landing page"), ("overview", "warm server, Overview")):
        # the best of three new visitors, as the floor it is held against
        seen = []
        for _ in range(3):
            context, tab = visitor(browser)
            seen.append(first_visit(tab, f"{server}/{path}", None))
            assert not page_problems(tab), (label, page_problems(tab))
            context.close()
        warm_content = min(content for content, _ in seen)
        warm_usable = min(usable for _, usable in seen)
        note_visit(label, warm_content, warm_usable)
        assert warm_content < words, (label, warm_content, floor)
        assert warm_usable < goals[path] * scale, (label, warm_usable, floor)
    assert content < fresh_words, ("fresh server: first words", content, floor)
    assert usable < OVERVIEW_USABLE * scale, ("fresh server: Overview usable", usable)
    no_outside_requests()


# ----------------------------------------------------------------------------- every page


def tour(tab, base: str, label: str, width: int) -> dict[str, list[str]]:
    """Every page -> the problems found on each; a full-page screenshot of each.

    At 1440 px through the sidebar's links (one session: uploads stay); at phone width the
    sidebar is folded away, so each page is opened by its address (the sample's data).
    """
    problems = {}
    for path in PATHS:
        if width < 800:
            tab.goto(f"{base}/{path}")
            wait_until_rendered(tab)
        elif path:
            link = tab.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').first
            timed(tab, link.click, f"{label}: {path}")
        found = page_problems(tab)
        if found:
            problems[path or "landing"] = found
        screenshot(tab, f"tour_{label}_{width}_{path or 'landing'}")
    return problems


@pytest.mark.parametrize("width", [1440, 390])
def test_every_page_on_the_sample(server, browser, width):
    context, tab = visitor(browser, width)
    tab.goto(server)
    wait_until_rendered(tab)
    problems = tour(tab, server, "sample", width)
    context.close()
    assert problems == {}
    no_outside_requests()


def choose_source(tab, text: str) -> None:
    """Pick a data source in the sidebar (a radio button labelled ``text``)."""
    label = tab.locator('[data-testid="stSidebar"] label').filter(has_text=text).first
    if not label.locator("input").is_checked():
        timed(tab, label.click)


def upload_runs(tab, runs, qrels) -> None:
    choose_source(tab, "Upload TREC runs and qrels")
    inputs = tab.locator('[data-testid="stFileUploaderDropzoneInput"]')
    timed(tab, lambda: inputs.nth(1).set_input_files(str(qrels)))
    timed(tab, lambda: inputs.nth(0).set_input_files([str(p) for p in runs]))


def test_every_page_on_mslr_and_on_uploaded_runs(server, browser):
    context, tab = visitor(browser)
    tab.goto(server)
    wait_until_rendered(tab)
    choose_source(tab, "MSLR-WEB10K sample")
    mslr = tour(tab, server, "mslr", 1440)
    overview = tab.locator('[data-testid="stSidebarNav"] a[href$="/overview"]').first
    timed(tab, overview.click)  # a page that names the data it shows
    upload_runs(tab, sorted((SAMPLE / "runs").glob("*.gz")), SAMPLE / "qrels.txt.gz")
    sync_api.expect(tab.locator('[data-testid="stMain"]')).to_contain_text("5 uploaded runs")
    uploaded = tour(tab, server, "uploaded", 1440)
    context.close()
    assert mslr == {}
    assert uploaded == {}
    no_outside_requests()


def test_the_rankings_chart_names_every_system(server, browser):
    sample = data.robust03_sample()
    context, tab = visitor(browser)
    tab.goto(f"{server}/rankings")
    wait_until_rendered(tab)
    chart = tab.locator('[data-testid="stPlotlyChart"]').first
    drawn = chart.locator("text").all_text_contents()
    context.close()
    missing = [name for name in sample.names if not any(name in t for t in drawn)]
    assert missing == [], (missing, drawn[:40])


# ----------------------------------------------------------------------------- two users


def test_two_visitors_never_see_each_others_uploads(server, browser):
    """Visitor A uploads two runs, visitor B the other three: each sees only their own."""
    runs = sorted((SAMPLE / "runs").glob("*.gz"))
    tags = {path: path.name.removeprefix("input.").removesuffix(".gz") for path in runs}
    first, second = runs[:2], runs[2:]
    (context_a, a), (context_b, b) = visitor(browser), visitor(browser)
    for tab in (a, b):
        tab.goto(f"{server}/overview")
        wait_until_rendered(tab)
    upload_runs(a, first, SAMPLE / "qrels.txt.gz")
    upload_runs(b, second, SAMPLE / "qrels.txt.gz")
    for tab, mine, theirs in ((a, first, second), (b, second, first)):
        # a rerun after the other's upload: the page and its charts, with every text they hold
        link = tab.locator('[data-testid="stSidebarNav"] a[href$="/overview"]').first
        timed(tab, link.click)
        text = tab.locator('[data-testid="stApp"]').text_content()
        assert [tags[p] for p in mine if tags[p] not in text] == []
        assert [tags[p] for p in theirs if tags[p] in text] == []
    context_a.close()
    context_b.close()
    no_outside_requests()

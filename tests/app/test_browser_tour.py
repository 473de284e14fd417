"""The explorer as first-time users meet it, in Chromium, on a server of its own.

- A fresh server's first visitor opens the Overview by its address: the page runs inside
  the app (wide, the app's page list); new visitors on the warm server, on the landing
  page and the Overview, meet no problem.  (How long they wait is measured by
  ``benchmarks/explorer.py``, never asserted here.)
- Every page at 1440 and 390 px on the bundled sample, then at 1440 px on the MSLR
  sample and on five uploaded runs: a screenshot of each (``tour_<data>_<width>_<page>.png``),
  and what a reader would stumble on (:func:`browser_kit.page_problems`: errors, raw
  None/nan, a page wider than the window, a table or chart text cut off).
- The rankings chart names every system of the sample.
- Two visitors who upload different runs never see each other's run names.
- No request leaves the machine (the icon and every asset are served locally).
"""

from __future__ import annotations

import pytest
from browser_kit import (
    ROOT,
    launch,
    new_tab,
    outside,
    page_problems,
    record_requests,
    screenshot,
    serve,
    timed,
    wait_until_rendered,
)
from playwright import sync_api

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
#: The slow tier (tests/conftest.py): every page, two widths, three data sets.
pytestmark = pytest.mark.slow
#: Every request the tour's browser contexts made (checked at the end of each test).
REQUESTS: list[str] = []


@pytest.fixture(scope="module")
def server():
    with serve("streamlit_tour.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with launch() as chromium:
        yield chromium


def visitor(browser, width: int = 1440):
    """A new visitor: a browser context of its own (a Streamlit session), requests recorded."""
    context, tab = new_tab(browser, width=width, height=900)
    urls = record_requests(context)
    context.on("close", lambda _: REQUESTS.extend(urls))
    return context, tab


def no_outside_requests() -> None:
    assert outside(REQUESTS) == [], sorted(set(outside(REQUESTS)))[:10]


# ----------------------------------------------------------------------------- start-up


def test_a_page_opened_by_its_address_then_new_visitors(server, browser):
    """The first visitor of a fresh server opens the Overview by its address: it runs inside
    app.py (wide, the app's page list, no problem a reader would meet); then new visitors
    open the landing page and the Overview on the warm server and meet none either."""
    context, tab = visitor(browser)
    tab.goto(f"{server}/overview")
    wait_until_rendered(tab)
    nav = tab.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
    width = tab.evaluate(
        """() => document.querySelector('[data-testid="stMainBlockContainer"]').clientWidth"""
    )
    problems = page_problems(tab)
    context.close()
    names = [text.split("\n")[-1] for text in nav]  # each link: its icon's name, then its text
    assert names[:2] == ["Start here", "Overview"] and width > 1000, (names, width)
    assert problems == []
    for path, title in (("", "Start here"), ("overview", "Overview")):
        context, tab = visitor(browser)
        tab.goto(f"{server}/{path}")
        wait_until_rendered(tab)
        assert title in tab.locator("h1").first.inner_text()
        assert page_problems(tab) == [], path
        context.close()
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
            timed(tab, link.click)
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

"""The explorer in a real browser: every page renders, on the samples, uploads and edge data.

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 and drives Debian's
Chromium through Playwright (no browser download).  It

- opens on the bundled sample (screenshots ``sample_start.png``, ``sample_overview.png``);
- uploads the five Robust03 sample runs and their qrels through the real file
  inputs, changes every setting and visits every page (full-page screenshots
  ``uploaded_<page>.png``): each step ends idle, with no error;
- shows a spinner during a step made slow on purpose (``TIECORE_APP_TEST_DELAY``), and
  none during a fast one;
- uploads each edge data set of ``app_edge_data`` (and a 136-feature LETOR file)
  and visits every page that draws it: no exception, no error element;
- uploads a broken run file: the message names file and line and the data stay.

Screenshots go to ``screenshots/`` (git-ignored).  Nothing here is timed: what a user
waits for is measured by ``benchmarks/explorer.py``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import app_edge_data as edge
import pytest
from browser_kit import (
    ROOT,
    choose_option,
    error_messages,
    launch,
    new_tab,
    page_text,
    screenshot,
    serve,
    sidebar_number,
    timed,
    wait_until_rendered,
)
from playwright import sync_api

#: url path -> what the page's title says.
PAGES = {
    "": "Start here",
    "overview": "Overview",
    "tie_anatomy": "Tie anatomy",
    "variance": "Variance from tie-breaking",
    "rankings": "System rankings",
    "scoring_functions": "Scoring functions side by side",
    "builder": "Build a scoring function",
    "precision": "Precision what-if",
    "playground": "Playground",
}
SAMPLE = ROOT / "sample_data" / "robust03"


@pytest.fixture(scope="module")
def server():
    """``streamlit run app.py`` on a free port; yields its base URL, then stops it."""
    with serve() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with launch() as chromium:
        yield chromium


@pytest.fixture
def page(browser):
    """A fresh tab (its own Streamlit session) per test."""
    context, tab = new_tab(browser)
    yield tab
    context.close()


def go_to(page, path: str) -> None:
    """Another page through the sidebar's navigation (same session, so uploads stay)."""
    link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').first
    timed(page, link.click)
    assert PAGES[path] in page.locator("h1").first.inner_text()


def upload(page, runs: list[Path] | None, qrels: Path | None, letor: Path | None = None) -> None:
    """Choose the upload source and put files into the real file inputs."""
    source = "Upload a LETOR / svmlight file" if letor else "Upload TREC runs and qrels"
    if page.get_by_text(source).is_visible():
        label = page.locator("label").filter(has_text=source).first
        if not label.locator("input").is_checked():
            timed(page, label.click)
    inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    if letor:
        timed(page, lambda: inputs.nth(0).set_input_files(str(letor)))
        return
    timed(page, lambda: inputs.nth(1).set_input_files(str(qrels)))
    timed(page, lambda: inputs.nth(0).set_input_files([str(p) for p in runs]))


#: Pages that draw the uploaded TREC runs (the scoring-function pages show a LETOR file, the
#: MSLR sample when TREC runs are loaded; the playground draws its own list).
TREC_PAGES = (
    "overview",
    "tie_anatomy",
    "variance",
    "rankings",
    "scoring_functions",
    "builder",
    "precision",
)
#: Pages that draw an uploaded LETOR file.
LETOR_PAGES = TREC_PAGES


def visit_every_page(page, label: str, paths=tuple(PAGES), shots: bool = False) -> None:
    for path in paths:
        go_to(page, path)
        errors = error_messages(page)
        assert errors == [], f"{label} {path}: {errors}"
        assert page.locator('[data-testid="stException"]').count() == 0
        text = page_text(page)
        charts = page.locator('[data-testid="stPlotlyChart"]').count()
        assert charts >= 1 or len(text) > 200, f"{label} {path}: nothing shown"
        if shots:
            screenshot(page, f"{label}_{path}")
    go_to(page, "overview")


# ----------------------------------------------------------------------------- the sample


def test_the_app_opens_on_the_sample(server, page):
    page.goto(server)
    wait_until_rendered(page)
    assert "Start here" in page.locator("h1").first.inner_text()
    assert page.locator('[data-testid="stSidebar"]').is_visible()
    assert "Robust03 sample" in page_text(page)
    screenshot(page, "sample_start")
    go_to(page, "overview")
    assert "What the tie-break does to the reported numbers" in page_text(page)
    screenshot(page, "sample_overview")
    assert error_messages(page) == []
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 2


# ----------------------------------------------------------------------------- uploaded runs


def test_uploaded_real_runs_every_setting_and_page(server, page):
    """The five Robust03 runs uploaded; every setting changed; each page screenshot."""
    page.goto(f"{server}/overview")
    wait_until_rendered(page)
    runs = sorted((SAMPLE / "runs").glob("*.gz"))
    qrels = SAMPLE / "qrels.txt.gz"
    label = page.locator("label").filter(has_text="Upload TREC runs and qrels").first
    timed(page, label.click)
    inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    timed(page, lambda: inputs.nth(1).set_input_files(str(qrels)))
    timed(page, lambda: inputs.nth(0).set_input_files([str(p) for p in runs]))
    assert "5 uploaded runs" in page_text(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    choose, number = partial(choose_option, page), partial(sidebar_number, page)

    settings = {
        "tie-break docno_asc": lambda: choose("Tie-break (oblivious mode)", "docno ascending"),
        "tie-break back to trec_eval": lambda: choose("Tie-break (oblivious mode)", "trec_eval"),
        "nDCG gain exp": lambda: sidebar.get_by_text("exp", exact=True).click,
        "relevance level 2": lambda: number("Relevance level", 2),
        "relevance level 1": lambda: number("Relevance level", 1),
        "seed 1 on Overview": lambda: number("Seed", 1),
        "seed 2 on Overview": lambda: number("Seed", 2),
        "nDCG gain back to linear": lambda: sidebar.get_by_text("linear", exact=True).click,
    }
    for name, prepare in settings.items():
        timed(page, prepare())
        assert error_messages(page) == [], name
    main = page.locator('[data-testid="stMain"]')  # the modes chart: one measure at a time

    def chart_shows(text: str) -> str:  # the modes chart redrawn with ``text`` in its titles
        return f"""() => [...document.querySelectorAll('.gtitle, .g-ytitle')]
                         .some(title => title.textContent.includes({text!r}))"""

    timed(page, main.get_by_role("radio", name="AP", exact=True).click, chart_shows("AP:"))
    assert page.locator(".gtitle").filter(has_text="AP:").count() == 1
    by_z = choose("Systems ordered by", "|z| (most affected in tie sd first)")
    timed(page, by_z, chart_shows("(|z|"))
    assert error_messages(page) == []
    mslr = page.get_by_text("MSLR-WEB10K sample").first
    timed(page, mslr.click)  # the default settings, as a new user's first visit
    assert error_messages(page) == []
    screenshot(page, "mslr_overview")
    back = page.locator("label").filter(has_text="Upload TREC runs and qrels").first
    timed(page, back.click)
    assert "5 uploaded runs" in page_text(page)
    toggle = page.get_by_text("Also draw the sampled mode")
    timed(page, toggle.click)  # sampled mode on, 200 samples
    timed(page, number("Seed", 3))
    timed(page, number("Samples", 2000))
    assert error_messages(page) == []
    timed(page, number("Samples", 200))
    timed(page, toggle.click)  # sampled mode off
    for path in PAGES:
        if path:
            link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').first
            timed(page, link.click)
            assert PAGES[path] in page.locator("h1").first.inner_text()
        assert error_messages(page) == [], path
        screenshot(page, f"uploaded_{path or 'start'}")
    go_to(page, "variance")
    timed(page, number("Samples", 2000))
    timed(page, number("Samples", 200))
    go_to(page, "tie_anatomy")
    query = page.get_by_role("combobox", name="Query (most tie variance first)")
    query.click()
    query.press("ArrowDown")
    timed(page, page.get_by_role("option").nth(1).click)
    assert error_messages(page) == []


# ----------------------------------------------------------------------------- progress shown

#: The page a step is made slow on, and for how long: well past Streamlit's half second
#: (its spinner's delay) whatever the load, so the spinner must have shown.
SLOW_PAGE, SLOW_SECONDS = "Playground", 3.0


@pytest.fixture(scope="module")
def slow_server():
    """A server whose Playground waits :data:`SLOW_SECONDS` on every run (test-only)."""
    env = {"TIECORE_APP_TEST_DELAY": f"{SLOW_PAGE}={SLOW_SECONDS}", "TIECORE_APP_WARM": "0"}
    with serve("streamlit_slow.log", env=env) as url:
        yield url


def test_a_slow_step_shows_a_spinner_and_a_quick_one_none(slow_server, page):
    """Anything a user waits for past half a second shows progress; a quick step does not.

    The Playground is made slow on purpose (3 s on every run): opening it shows the run's
    spinner, which is gone once the page is drawn.  Choosing another measure in the
    Overview's chart reruns the chart alone (a fragment: no data read, no page run) and
    shows no progress sign: none flickers for a step that needs none.  States only, no
    clock: the slow step is slow by construction, the quick one by what it runs.
    """
    page.goto(f"{slow_server}/overview")
    wait_until_rendered(page)
    slow = page.locator('[data-testid="stSidebarNav"] a[href$="/playground"]').first
    step = timed(page, slow.click)
    assert step.shown, "a step made 3 s slow showed no spinner or progress bar"
    assert page.locator('[data-testid="stSpinner"]').count() == 0  # gone once drawn
    assert "Playground" in page.locator("h1").first.inner_text()
    go_to(page, "overview")
    main = page.locator('[data-testid="stMain"]')
    for measure in ("AP", "P@10"):
        choice = main.get_by_role("radio", name=measure, exact=True)
        title = f"""() => [...document.querySelectorAll('.gtitle')]
                    .some(t => t.textContent.startsWith({measure + ":"!r}))"""
        step = timed(page, choice.click, title)
        assert page.locator(".gtitle").filter(has_text=f"{measure}:").count() == 1
        assert not step.shown, f"choosing {measure} in the chart showed a progress sign"


# ----------------------------------------------------------------------------- edge data


@pytest.fixture(scope="module")
def edge_files(tmp_path_factory):
    """The edge data sets written to files, as a user would upload them."""
    folder = tmp_path_factory.mktemp("edge")
    out = {}
    for name, make in edge.TREC_SETS.items():
        runs, qrels = make()
        paths = []
        for run_name, content in runs:
            path = folder / name / run_name
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(content)
            paths.append(path)
        qrels_path = folder / name / qrels[0]
        qrels_path.write_bytes(qrels[1])
        out[name] = (paths, qrels_path)
    letor_name, content = edge.letor_136()
    (folder / letor_name).write_bytes(content)
    out["letor_136"] = (None, folder / letor_name)
    return out


@pytest.mark.slow  # each page on each edge data set is in the fast tier too, through AppTest
@pytest.mark.parametrize("name", [*edge.TREC_SETS, "letor_136"])
def test_edge_data_uploaded_every_page(server, page, edge_files, name):
    page.goto(f"{server}/overview")
    wait_until_rendered(page)
    runs, path = edge_files[name]
    if name == "letor_136":
        upload(page, None, None, letor=path)
    else:
        upload(page, runs, path)
    expected = "LETOR file" if name == "letor_136" else "uploaded run"
    # the upload's caption: a slow rerun (many runs on a busy machine) may still be drawing
    main = page.locator('[data-testid="stMain"]')
    sync_api.expect(main).to_contain_text(expected, timeout=120_000)
    wait_until_rendered(page)
    assert error_messages(page) == [], name
    paths = LETOR_PAGES if name == "letor_136" else TREC_PAGES
    visit_every_page(page, f"edge_{name}", paths, shots=name in ("many_runs", "letor_136"))


def test_bad_upload_shows_message_and_keeps_data(server, page, tmp_path):
    """A run file with a bad score line: the page names file and line and keeps working."""
    page.goto(f"{server}/overview")
    wait_until_rendered(page)
    bad = tmp_path / "broken.run"
    bad.write_text("303 Q0 doc1 1 1.5 tag\n303 Q0 doc2 2 oops tag\n")
    label = page.locator("label").filter(has_text="Upload TREC runs and qrels").first
    timed(page, label.click)
    inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    timed(page, lambda: inputs.nth(1).set_input_files(str(SAMPLE / "qrels.txt.gz")))
    timed(page, lambda: inputs.nth(0).set_input_files(str(bad)))
    message = page.locator('[data-testid="stAlertContentError"]').first.inner_text()
    assert "broken.run" in message and "line 2" in message and "oops" in message
    assert "previous data were kept" in message
    assert "Robust03 sample" in page_text(page)
    screenshot(page, "bad_upload")
    assert page.locator('[data-testid="stException"]').count() == 0

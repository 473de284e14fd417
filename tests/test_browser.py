"""The explorer in a real browser: every page renders without an error element.

Starts ``streamlit run app.py`` on a free port of 127.0.0.1, drives Debian's
Chromium through Playwright (no browser download), opens every page, waits
until the script has finished and the charts are drawn, checks for exception
and error elements, and saves a full-page screenshot under ``screenshots/``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright import sync_api

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: url path -> what the page's title says.
PAGES = {
    "": "Overview",
    "tie_anatomy": "Tie anatomy",
    "variance": "Variance from tie-breaking",
    "rankings": "System rankings",
    "scoring_functions": "Scoring functions side by side",
    "playground": "Playground",
}
#: First visits compute (sampling, 136 LETOR features); later ones hit the cache.
RENDER_TIMEOUT_MS = 240_000

assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """``streamlit run app.py`` on a free port; yields its base URL, then stops it."""
    port = _free_port()
    SHOTS.mkdir(exist_ok=True)
    log = open(SHOTS / "streamlit.log", "w")  # closed after the server stops
    process = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", "app.py",
            "--server.headless", "true", "--server.port", str(port),
            "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start (see {log.name})")
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def page(server):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        tab = context.new_page()
        tab.set_default_timeout(RENDER_TIMEOUT_MS)
        yield tab
        context.close()
        browser.close()


def wait_until_rendered(page) -> None:
    """Wait for the script run to finish: the app is idle and no spinner or progress bar is left."""
    page.wait_for_selector('[data-testid="stApp"]', state="attached")
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            const running = document.querySelector('[data-testid="stStatusWidget"]');
            const busy = document.querySelector(
                '[data-testid="stSpinner"], [data-testid="stProgress"], [data-stale="true"]');
            const main = document.querySelector('[data-testid="stMain"]');
            return app && app.getAttribute('data-test-script-state') === 'notRunning'
                && !running && !busy && main && main.innerText.trim().length > 0;
        }""",
        polling=250,
    )
    # Plotly draws asynchronously after the element arrives.
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
                 .every(chart => chart.querySelector('.main-svg'))""",
        polling=250,
    )
    page.wait_for_timeout(500)


def error_messages(page) -> list[str]:
    """Text of exception elements and of error alerts on the page."""
    found = [e.inner_text() for e in page.query_selector_all('[data-testid="stException"]')]
    for alert in page.query_selector_all('[data-testid="stAlert"]'):
        kind = alert.query_selector('[data-testid="stAlertContentError"]')
        if kind is not None:
            found.append(alert.inner_text())
    return found


def screenshot(page, name: str) -> None:
    """The whole page: the main area scrolls inside the window, so grow the window to fit it."""
    height = page.evaluate(
        """() => document.querySelector('[data-testid="stMain"]').scrollHeight"""
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(max(height, 600), 12_000)})
    page.wait_for_timeout(800)  # let the charts resize
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)


@pytest.mark.parametrize("path", list(PAGES))
def test_page_renders_without_errors(server, page, path):
    page.goto(f"{server}/{path}")
    wait_until_rendered(page)
    title = page.locator("h1").first.inner_text()
    assert PAGES[path] in title
    assert page.locator('[data-testid="stSidebar"]').is_visible()
    errors = error_messages(page)
    name = path or "overview"
    screenshot(page, name)
    assert errors == [], f"{name}: {errors}"
    if path != "playground":
        assert page.locator('[data-testid="stPlotlyChart"]').count() >= 1


def test_bad_upload_shows_message_and_keeps_data(server, page, tmp_path):
    """A run file with a bad score line: the page names file and line and keeps working."""
    page.goto(server)
    wait_until_rendered(page)
    page.get_by_text("Upload TREC runs and qrels").click()
    wait_until_rendered(page)
    bad = tmp_path / "broken.run"
    bad.write_text("303 Q0 doc1 1 1.5 tag\n303 Q0 doc2 2 oops tag\n")
    qrels = ROOT / "sample_data" / "robust03" / "qrels.txt.gz"
    uploaders = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    uploaders.nth(1).set_input_files(str(qrels))
    wait_until_rendered(page)
    uploaders.nth(0).set_input_files(str(bad))
    page.wait_for_selector('[data-testid="stAlertContentError"]')
    wait_until_rendered(page)
    message = page.locator('[data-testid="stAlertContentError"]').first.inner_text()
    assert "broken.run" in message and "line 2" in message and "oops" in message
    assert "Robust03 sample" in page.locator('[data-testid="stMain"]').inner_text()
    screenshot(page, "bad_upload")
    assert page.locator('[data-testid="stException"]').count() == 0

"""What the browser tests share: a Streamlit server, Debian's Chromium, and waits for states.

``serve()`` starts ``streamlit run app.py`` on a free port of 127.0.0.1 (its log in
``screenshots/``); ``launch()`` starts Chromium through Playwright (no browser download);
``timed()`` does an action and waits until the rerun it starts is drawn, and says what the
user saw meanwhile (a :class:`Step`: seconds, script run, progress shown).  The tests only
wait for states; the seconds are read by ``benchmarks/explorer.py``, never asserted.  The
checks a page must pass as a user would read it (``page_problems``) are here too, so that
every browser test applies the same ones.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from playwright import sync_api

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: How long a wait for a state may last before the test fails: first visits compute
#: (sampling, 136 LETOR features) and a busy machine is slow; a wait ends at the state.
RENDER_TIMEOUT_MS = 240_000

assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium"


#: The process id of each running server, by its base URL (the memory checks read its memory).
SERVERS: dict[str, int] = {}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serve(
    log_name: str = "streamlit.log",
    script: str = "app.py",
    folder: Path = ROOT,
    env: Mapping[str, str] | None = None,
    *,
    prefix: Sequence[str] = (),
    as_configured: bool = False,
) -> Iterator[str]:
    """``streamlit run SCRIPT`` (in ``folder``, with ``env`` added to the environment) on a
    free port; yields its base URL, then stops it.  ``prefix``: a command that runs the
    server (``strace ...``); ``as_configured``: the address and usage statistics left to
    the project's ``.streamlit/config.toml``, as ``streamlit run app.py`` has them."""
    port = _free_port()
    SHOTS.mkdir(exist_ok=True)
    log = open(SHOTS / log_name, "w")  # closed after the server stops
    settings = [] if as_configured else [
        "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    process = subprocess.Popen(
        [
            *prefix, sys.executable, "-m", "streamlit", "run", script,
            "--server.headless", "true", "--server.port", str(port), *settings,
            "--server.fileWatcherType", "none",
        ],
        cwd=folder,
        env={**os.environ, **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + RENDER_TIMEOUT_MS / 1000
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
        SERVERS[url] = process.pid
        yield url
    finally:
        SERVERS.pop(url, None)
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@contextlib.contextmanager
def launch() -> Iterator[sync_api.Browser]:
    """Debian's Chromium, headless, through Playwright."""
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


def new_tab(browser, width: int = 1400, height: int = 1000):
    """A fresh context (its own Streamlit session) and its tab -> (context, tab)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    tab = context.new_page()
    watch_messages(tab)
    tab.set_default_timeout(RENDER_TIMEOUT_MS)
    return context, tab


#: Records every change of the app's script state with the browser's clock, and when a
#: progress bar, spinner or running status line (st.status's spinning icon) was on the page.
WATCH = """() => {
    if (window.__states) return;
    window.__states = [];
    window.__progress = [];
    const app = document.querySelector('[data-testid="stApp"]');
    // a fast rerun may go running -> notRunning before the callback: keep the old values too
    new MutationObserver(changes => {
        for (const c of changes) {
            const now = performance.now();
            if (c.oldValue) window.__states.push([now, c.oldValue]);
            window.__states.push([now, c.target.getAttribute('data-test-script-state')]);
        }
    }).observe(app, {attributes: true, attributeOldValue: true,
                     attributeFilter: ['data-test-script-state']});
    new MutationObserver(() => {
        if (document.querySelector('[data-testid="stProgress"], [data-testid="stSpinner"], '
                                   + '[data-testid="stExpanderIconSpinner"]'))
            window.__progress.push(performance.now());
    }).observe(app, {childList: true, subtree: true});
}"""
IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const busy = document.querySelector(
        '[data-testid="stSpinner"], [data-testid="stProgress"], [data-stale="true"], '
        + '[data-testid="stStatusWidget"], [data-testid="stSkeleton"]');
    const main = document.querySelector('[data-testid="stMain"]');
    return app && app.getAttribute('data-test-script-state') === 'notRunning'
        && !busy && main && main.innerText.trim().length > 0;
}"""
CHARTS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
                   .every(chart => chart.querySelector('.main-svg'))"""


def wait_until_rendered(page) -> None:
    """Wait for the script run to finish: the app is idle, nothing stale, the charts drawn."""
    page.wait_for_selector('[data-testid="stApp"]', state="attached")
    # checked on every animation frame: the time taken is the user's wait, not a poll's
    page.wait_for_function(f"() => ({IDLE})() && ({CHARTS})()", polling="raf")


#: When each tab last received a message from the server (time.monotonic()), by id(tab).
RECEIVED: dict[int, float] = {}


def watch_messages(tab) -> None:
    """Note every websocket message the server sends ``tab`` (a rerun always sends some)."""

    def on_socket(socket) -> None:
        socket.on("framereceived", lambda _: RECEIVED.__setitem__(id(tab), time.monotonic()))

    tab.on("websocket", on_socket)


def wait_for_rerun(page, start: float, sent: float, changed: str) -> bool:
    """Until the page shows a rerun begun after ``start`` (its clock) / ``sent`` (monotonic).

    The script state going to ``running`` shows it (True).  A quick rerun (a fragment's,
    or one that redraws nothing) can finish within one frame, so that the state never
    changes on the page: ``changed()`` true also counts (True), and so do messages from
    the server after ``sent`` with the page still idle a second later (False).
    """
    running = f"() => window.__states.some(([t, s]) => t > {start} && s === 'running')"
    deadline = time.monotonic() + RENDER_TIMEOUT_MS / 1000
    while True:
        try:
            page.wait_for_function(f"() => ({running})() || ({changed})()", polling=20, timeout=250)
            return True
        except sync_api.TimeoutError:
            now = time.monotonic()
            if RECEIVED.get(id(page), -1.0) > sent and now > sent + 1.0:
                return False
            if now > deadline:
                raise


@dataclass(frozen=True)
class Step:
    """What a user saw of one step: ``seconds`` from the action until the page was idle
    with its charts drawn, ``ran`` seconds of script run as the browser saw it (nan: a
    fragment's run, unseen), and whether a spinner or progress bar was ``shown``."""

    seconds: float
    ran: float
    shown: bool


def timed(page, action, changed: str = "() => false") -> Step:
    """Do ``action`` and wait until the rerun it starts has finished and its charts are
    drawn -> what the user saw (:class:`Step`).

    The rerun is recognised by :func:`wait_for_rerun`; ``changed`` (a JavaScript
    predicate on the page, e.g. a chart's new title) also counts as the rerun begun.
    """
    page.wait_for_selector('[data-testid="stApp"]', state="attached")
    page.evaluate(WATCH)
    start = page.evaluate("() => performance.now()")
    sent = time.monotonic()
    action()
    seen = wait_for_rerun(page, start, sent, changed)
    wait_until_rendered(page)
    seconds = (page.evaluate("() => performance.now()") - start) / 1000
    if not seen:  # the rerun finished unseen: until its last message, not the grace second
        seconds = RECEIVED[id(page)] - sent
    shown = page.evaluate(f"() => window.__progress.some(t => t > {start})")
    # how long the script ran: from the browser's first sign of it running to its last
    # sign of it done (the spinner's 0.5 s count from the run's start, not the click)
    ran = page.evaluate(
        f"""() => {{
            const states = window.__states.filter(([t]) => t > {start});
            const begun = states.find(([, s]) => s === 'running');
            const done = Math.max(
                ...states.filter(([, s]) => s === 'notRunning').map(([t]) => t));
            return begun && done >= begun[0] ? done - begun[0] : null;
        }}"""
    )
    return Step(seconds, ran / 1000 if ran is not None else float("nan"), bool(shown))


# Each helper does what precedes a setting's change (open a list, type a number) and returns
# the one action that changes it, the one a test or the benchmark passes to timed().


def choose_option(page, select_label: str, option: str):
    """Open the select box ``select_label``; return the click that picks ``option``."""
    import re

    box = page.get_by_role("combobox", name=select_label)
    box.click()
    box.press("ArrowDown")  # opens the list of options
    exact = re.compile(f"^{re.escape(option)}$")
    return page.get_by_role("option").filter(has_text=exact).click


def sidebar_number(page, input_label: str, value: int):
    """Type ``value`` into the sidebar's number input ``input_label``; return the Enter
    that applies it."""
    field = page.locator('[data-testid="stSidebar"]').get_by_label(input_label, exact=True)
    field.fill(str(value))
    return lambda: field.press("Enter")


def error_messages(page) -> list[str]:
    """Text of exception elements and of error alerts on the page."""
    found = [e.inner_text() for e in page.query_selector_all('[data-testid="stException"]')]
    for alert in page.query_selector_all('[data-testid="stAlert"]'):
        if alert.query_selector('[data-testid="stAlertContentError"]') is not None:
            found.append(alert.inner_text())
    return found


#: True once every chart's drawing has kept its size for ten animation frames in a row
#: (plotly redraws a chart after its box changes size): a state, not a fixed pause.
SETTLED = """() => {
    const sizes = [...document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg')]
        .map(svg => `${svg.clientWidth}x${svg.clientHeight}`).join(',');
    if (window.__sizes !== sizes) { window.__sizes = sizes; window.__same = 0; }
    return ++window.__same >= 10;
}"""


def screenshot(page, name: str) -> None:
    """The whole page: the main area scrolls inside the window, so grow the window to fit it."""
    height = page.evaluate(
        """() => document.querySelector('[data-testid="stMain"]').scrollHeight"""
    )
    size = page.viewport_size
    page.evaluate("() => { window.__sizes = null; }")
    page.set_viewport_size({"width": size["width"], "height": min(max(height, 600), 16_000)})
    page.wait_for_function(SETTLED, polling="raf")  # the charts laid out for the new size
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)


# ----------------------------------------------------------------------------- what a user reads

#: Raw tokens that must never reach a reader: Python's and pandas' missing values and
#: infinities ("None of the systems" is English, not a token).
RAW = r"(?<![\w.])(None(?! of\b)|nan|NaN|NaT|<NA>|inf|-inf)(?![\w.])"

#: Layout faults as a reader meets them, found in the page itself -> list of descriptions.
LAYOUT = """() => {
    const faults = [];
    const width = window.innerWidth;
    const main = document.querySelector('[data-testid="stMain"]');
    if (document.documentElement.scrollWidth > width + 1)
        faults.push(`page ${document.documentElement.scrollWidth} px wide in ${width} px`);
    if (main && main.scrollWidth > main.clientWidth + 1)
        faults.push(`main area ${main.scrollWidth} px wide in ${main.clientWidth} px`);
    // a table whose columns do not fit: its scroller is wider than its box (on a phone a
    // table may scroll sideways inside its box: the page itself must still fit)
    const frames = document.querySelectorAll('[data-testid="stDataFrame"]');
    for (const frame of width < 800 ? [] : frames) {
        if (!frame.checkVisibility()) continue;  // in a folded expander: not seen
        const scroller = frame.querySelector('.dvn-scroller');
        if (scroller && scroller.scrollWidth > scroller.clientWidth + 2) {
            const fold = frame.closest('[data-testid="stExpander"]');
            const heads = [...frame.querySelectorAll('[role="columnheader"]')]
                .map(h => h.textContent.trim()).filter(t => t).slice(0, 4).join(', ')
                + (fold ? ` in "${fold.querySelector('summary').innerText.trim()}"` : '');
            faults.push(`table cut on the right (${scroller.scrollWidth} px in `
                + `${scroller.clientWidth} px; columns ${heads})`);
        }
    }
    // chart text a reader should see (titles, tick labels, annotations, legend) outside its
    // chart; text in the plot area is clipped by plotly on purpose and not counted
    const shown = 'text.gtitle, text.xtitle, text.ytitle, .xtick text, .ytick text, '
        + '.annotation text, text.legendtext, .cbtitle text, .cbaxis text';
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
        const svg = chart.querySelector('.main-svg');
        if (!svg) continue;
        const box = svg.getBoundingClientRect();
        for (const text of chart.querySelectorAll(shown)) {
            const r = text.getBoundingClientRect();
            if (!text.textContent.trim() || r.width === 0) continue;
            if (r.left < box.left - 2 || r.right > box.right + 2)
                faults.push(`chart text cut: "${text.textContent.slice(0, 40)}"`);
        }
    }
    return faults;
}"""


def page_problems(page) -> list[str]:
    """What a reader would stumble on: errors, raw None/nan, things cut off or too wide."""
    import re

    found = [f"error: {message[:200]}" for message in error_messages(page)]
    if page.locator('[data-testid="stException"]').count():
        found.append("exception box")
    text = page_text(page)
    for match in re.finditer(RAW, text):
        around = text[max(0, match.start() - 40) : match.end() + 40].replace("\n", " ")
        found.append(f"raw {match.group(1)!r}: ...{around}...")
    found += page.evaluate(LAYOUT)
    return found


def page_text(page) -> str:
    """The visible text of the main area."""
    return page.locator('[data-testid="stMain"]').inner_text()


def record_requests(context) -> list[str]:
    """Every URL the context requests (filled as it goes): to find requests leaving the host."""
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))
    return urls


def outside(urls) -> list[str]:
    """The URLs that go to another host than this machine's loopback."""
    from urllib.parse import urlsplit

    local = {"127.0.0.1", "localhost", "::1", ""}
    return [
        u
        for u in urls
        if urlsplit(u).scheme in ("http", "https", "ws", "wss")
        and urlsplit(u).hostname not in local
    ]


#: Text the browser cut with an ellipsis ("…") because it did not fit its box (a label, a
#: select box's value, a metric): what the reader cannot finish reading -> list of texts.
ELLIPSIS = """() => {
    const cut = [];
    const main = document.querySelector('[data-testid="stMain"]');
    for (const el of main ? main.querySelectorAll('*') : []) {
        if (!el.textContent.trim() || !el.checkVisibility()) continue;
        const style = getComputedStyle(el);
        if (style.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1)
            cut.push(el.textContent.trim().slice(0, 60));
    }
    return cut;
}"""


def cut_text(page) -> list[str]:
    """Texts in the main area shown cut with an ellipsis (see ``ELLIPSIS``)."""
    return [f'text cut: "{text}"' for text in page.evaluate(ELLIPSIS)]

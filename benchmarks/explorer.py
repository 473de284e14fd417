"""What a user of the explorer waits for, measured in Chromium and printed beside its goal.

    python benchmarks/explorer.py                  # every section, a Markdown table
    python benchmarks/explorer.py --repeat 5       # best of 5 new visitors (default 3)
    python benchmarks/explorer.py --out timings.md # the table written to a file too
    python -m benchmarks explorer ...              # the same, from the suite's entry point

It starts ``streamlit run app.py`` (and a floor app: Streamlit alone, with the explorer's
page config and page list, whose pages show a title or a title and one chart) on free
ports of 127.0.0.1 and drives Debian's Chromium through Playwright, with the browser
tests' own helpers (``tests/browser_kit.py``).  Sections:

- **start-up**: a fresh server's first visitor opening the Overview by its address
  (first words, usable), then new visitors on the warm server (the landing page and the
  Overview; the best of ``--repeat``), each beside the floor's own figures;
- **steps**: the five Robust03 sample runs uploaded, then every setting changed and every
  page's first visit, each from the action until the page is idle with its charts drawn,
  with the script's own run time and whether a spinner or progress bar showed.

The goals are the explorer's (``docs/explorer.md``): first words within 1 s, a fresh
server's Overview usable within 4 s, a new visitor's page within 2 s, and progress shown
for any step whose script runs past half a second.  It is a script that prints numbers,
not a test: nothing fails, a miss is printed as one.  The 1-minute load average is printed
beside every figure: on a busy machine every figure grows.  The seconds are stored under
the commit measured (mode ``explorer`` of ``benchmarks/results/<commit>.json``, see
``benchmarks/store.py``; ``--no-store`` not), so that ``python -m benchmarks compare``
sets them beside a base's.
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0] or ".").resolve() == REPO / "benchmarks":
    sys.path.pop(0)  # run as a script: the suite's modules are not top-level ones
sys.path[:0] = [str(REPO / "tests"), str(REPO)]  # browser_kit, and app for its page list

from browser_kit import (  # noqa: E402
    choose_option,
    launch,
    new_tab,
    serve,
    sidebar_number,
    timed,
    wait_until_rendered,
)

import app  # noqa: E402
from benchmarks import store  # noqa: E402

SAMPLE = REPO / "sample_data" / "robust03"
#: Goals in seconds (None: no goal, a figure for the record).
FIRST_WORDS, OVERVIEW_USABLE, NEW_VISITOR, SPINNER_AFTER = 1.0, 4.0, 2.0, 0.5

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

#: Streamlit's own floor: an app with the explorer's page config and page list (a server's
#: first run reads the icon with PIL and numpy; the browser draws the list) whose pages show
#: a title only, or a title and one chart (``?chart=1``).
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


class Table:
    """The figures as they come: printed at once, kept for ``--out``."""

    def __init__(self) -> None:
        self.rows = [
            "| what | seconds | goal | script ran (s) | progress shown | load (1 min) |",
            "|---|---:|---|---:|---|---:|",
        ]
        self.lines: list[dict] = []  # the figures as stored (benchmarks/store.py)
        print(*self.rows, sep="\n", flush=True)

    def add(self, what: str, seconds: float, goal: str = "", ran=None, shown=None) -> None:
        ran_text = "" if ran is None or ran != ran else f"{ran:.2f}"
        shown_text = "" if shown is None else ("yes" if shown else "no")
        row = (
            f"| {what} | {seconds:.2f} | {goal} | {ran_text} | {shown_text} "
            f"| {os.getloadavg()[0]:.1f} |"
        )
        self.rows.append(row)
        self.lines.append(store.line("explorer", what, seconds, goal=goal or "info"))
        print(row, flush=True)


def verdict(seconds: float, goal: float | None) -> str:
    """``≤ 1 s`` when met, ``≤ 1 s: missed`` when not."""
    if goal is None:
        return ""
    return f"≤ {goal:g} s" + ("" if seconds <= goal else ": **missed**")


def first_visit(browser, url: str) -> tuple[float, float]:
    """A new visitor opens ``url`` -> (seconds to the first words, seconds to usable)."""
    context, tab = new_tab(browser, width=1440, height=900)
    tab.add_init_script(CLOCK)
    tab.goto(url)
    tab.wait_for_function("() => window.__seen && window.__seen.usable", polling=100)
    wait_until_rendered(tab)
    content, usable = tab.evaluate("() => [window.__seen.content, window.__seen.usable]")
    context.close()
    return content / 1000, usable / 1000


def floor_figures(browser, folder: Path, repeat: int, table: Table) -> None:
    """Streamlit alone: its fresh server's first visitor, then the best of ``repeat``."""
    script = FLOOR_APP.replace("ICON", repr(str(app.ICON))).replace("PAGES", repr(app.PAGES))
    (folder / "floor.py").write_text(script)
    with serve("streamlit_floor.log", "floor.py", folder) as url:
        fresh, _ = first_visit(browser, url)
        words = min(first_visit(browser, url)[0] for _ in range(repeat))
        chart = min(first_visit(browser, f"{url}/?chart=1")[1] for _ in range(repeat))
    table.add("floor: its fresh server's first visitor, first words", fresh)
    table.add(f"floor: a title-only page, first words (best of {repeat})", words)
    table.add(f"floor: a page with a title and one chart, usable (best of {repeat})", chart)


def startup_figures(browser, repeat: int, table: Table) -> None:
    """A fresh explorer's first visitor, then new visitors on the warm server."""
    with serve("streamlit_bench.log") as url:
        words, usable = first_visit(browser, f"{url}/overview")
        table.add("fresh server, Overview: first words", words, verdict(words, FIRST_WORDS))
        table.add("fresh server, Overview: usable", usable, verdict(usable, OVERVIEW_USABLE))
        for path, name in (("", "landing page"), ("overview", "Overview")):
            seen = [first_visit(browser, f"{url}/{path}") for _ in range(repeat)]
            words, usable = min(s[0] for s in seen), min(s[1] for s in seen)
            label = f"new visitor, warm server, {name}"
            table.add(f"{label}: first words (best of {repeat})", words, verdict(words, 1.0))
            table.add(f"{label}: usable (best of {repeat})", usable, verdict(usable, NEW_VISITOR))


def step_figures(browser, table: Table) -> None:
    """Uploads, setting changes and first visits, each a :class:`browser_kit.Step`."""
    with serve("streamlit_bench.log") as url:
        context, page = new_tab(browser, width=1440, height=900)
        page.goto(f"{url}/overview")
        wait_until_rendered(page)

        def note(what: str, step) -> None:
            late = step.ran == step.ran and step.ran > SPINNER_AFTER + 0.2 and not step.shown
            goal = "progress if it runs past 0.5 s" + (": **missed**" if late else "")
            table.add(what, step.seconds, goal, step.ran, step.shown)

        sidebar = page.locator('[data-testid="stSidebar"]')
        label = page.locator("label").filter(has_text="Upload TREC runs and qrels").first
        timed(page, label.click)
        inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
        timed(page, lambda: inputs.nth(1).set_input_files(str(SAMPLE / "qrels.txt.gz")))
        runs = [str(p) for p in sorted((SAMPLE / "runs").glob("*.gz"))]
        note("an upload of 5 runs", timed(page, lambda: inputs.nth(0).set_input_files(runs)))
        choose, number = partial(choose_option, page), partial(sidebar_number, page)

        steps = {
            "tie-break docno_asc": lambda: choose("Tie-break (oblivious mode)", "docno ascending"),
            "tie-break back to trec_eval": lambda: choose(
                "Tie-break (oblivious mode)", "trec_eval"
            ),
            "nDCG gain exp": lambda: sidebar.get_by_text("exp", exact=True).click,
            "relevance level 2": lambda: number("Relevance level", 2),
            "relevance level 1": lambda: number("Relevance level", 1),
            "seed 1 on the Overview": lambda: number("Seed", 1),
            "nDCG gain back to linear": lambda: sidebar.get_by_text("linear", exact=True).click,
        }
        for what, prepare in steps.items():
            note(what, timed(page, prepare()))
        main = page.locator('[data-testid="stMain"]')
        note("another measure in the Overview's chart (AP)",
             timed(page, main.get_by_role("radio", name="AP", exact=True).click))  # fmt: skip
        toggle = page.get_by_text("Also draw the sampled mode")
        note("sampled mode on, 200 samples", timed(page, toggle.click))
        note("2,000 samples on the Overview", timed(page, number("Samples", 2000)))
        timed(page, number("Samples", 200))
        timed(page, toggle.click)
        links = {}
        for name, title, _ in app.PAGES[2:]:
            links[name] = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{name}"]').first
            note(f"first visit with 5 runs uploaded: {title}", timed(page, links[name].click))
        timed(page, links["variance"].click)
        note("2,000 samples on Variance", timed(page, number("Samples", 2000)))
        timed(page, number("Samples", 200))
        timed(page, links["tie_anatomy"].click)
        query = page.get_by_role("combobox", name="Query (most tie variance first)")
        query.click()
        query.press("ArrowDown")
        note("another query on Tie anatomy", timed(page, page.get_by_role("option").nth(1).click))
        mslr = page.get_by_text("MSLR-WEB10K sample").first
        note("the MSLR sample's first view (136 features)", timed(page, mslr.click))
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks explorer", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeat", type=int, default=3, help="new visitors per figure")
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    parser.add_argument(
        "--sections", default="startup,steps", help="comma-separated: startup, steps"
    )
    parser.add_argument(
        "--store",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add the seconds to benchmarks/results/<commit>.json (default: on)",
    )
    args = parser.parse_args(argv)
    sections = set(args.sections.split(","))
    load = round(os.getloadavg()[0], 1)
    print(f"{os.cpu_count()} cpus, load average {load:.1f} at the start\n")
    table = Table()
    import tempfile

    with launch() as browser, tempfile.TemporaryDirectory() as folder:
        if "startup" in sections:
            floor_figures(browser, Path(folder), args.repeat, table)
            startup_figures(browser, args.repeat, table)
        if "steps" in sections:
            step_figures(browser, table)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    if args.out:
        args.out.write_text("\n".join(table.rows) + "\n")
    if args.store and table.lines:
        about = store.meta(sections=args.sections, load_start=load, repeat=args.repeat)
        print(f"stored in {store.record('explorer', table.lines, about)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

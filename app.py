"""tiecore explorer: ``streamlit run app.py``.

A multipage Streamlit app over :mod:`tiecore` for exploring how tied scores
change IR evaluation.  It opens on the bundled ``sample_data/``; the sidebar
(data and settings) is drawn here, once, for every page.  The app layer lives in
``app_lib/`` (data, sidebar, cache, charts); every number comes from tiecore.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import streamlit as st

#: The tab's icon, an SVG shipped with the app (sent inline: nothing is fetched from a font host).
ICON = Path(__file__).parent / "app_lib" / "icon.svg"
#: The pages, by file, with their titles and icons (the start page's map links each, in
#: this order).  They live in app_pages/: a folder named
#: pages/ beside this file would switch Streamlit to its legacy multipage mode for a visitor
#: who opens a page's address directly (that page run without this file: narrow, its file
#: names as the page list, no shared sidebar).
PAGES = (
    ("start", "Start here", "school"),
    ("overview", "Overview", "bar_chart"),
    ("tie_anatomy", "Tie anatomy", "biotech"),
    ("variance", "Variance", "casino"),
    ("rankings", "System rankings", "leaderboard"),
    ("queries", "Per-query drill-down", "zoom_in"),
    ("scoring_functions", "Scoring functions", "functions"),
    ("builder", "Build a scoring function", "tune"),
    ("precision", "Precision what-if", "target"),
    ("playground", "Playground", "toys"),
)
#: The pages that draw no plotly chart (the others load plotly's scripts at once, see main).
CHARTLESS = {"Start here", "Precision what-if"}
#: An invisible chart drawn under the page's name on a fresh server's first run: the browser
#: fetches and starts plotly's scripts (about 3.5 MB) while the server reads the data and
#: computes the page, not after them (later visitors' pages follow their names at once).
PRELOAD = {
    "data": [{"type": "scatter", "x": [], "y": []}],
    "layout": {
        "height": 10,
        "margin": {"t": 0, "b": 0, "l": 0, "r": 0},
        "xaxis": {"visible": False},
        "yaxis": {"visible": False},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
    },
}
#: What each page computes the first time it is opened on a data set, in a sentence shown at
#: once (not after Streamlit's half second): those runs are the slow ones (measured with
#: AppTest on the 2-core machine: the MSLR sample's Overview 4.6 s after switching to it
#: without the warm-up, its Tie anatomy 1.9 s, System rankings 1.1 s on Robust03).
FIRST_WORK = {
    "Start here": "Measuring the tie effect",
    "Overview": "Scoring every system under trec_eval's order and tie-aware",
    "Tie anatomy": "Taking the ranked lists apart into their tie groups",
    "Variance": "Computing each query's tie variance and drawing random tie-breaks",
    "System rankings": "Ranking the systems under every tie-break and comparing them pair by pair",
    "Per-query drill-down": "Scoring every query of every system",
    "Scoring functions": "Measuring how often each scoring function ties",
    "Build a scoring function": "Coarsening the scores level by level",
    "Precision what-if": "Rounding the scores and scoring them again",
    "Playground": "Enumerating every order of the tied documents",
}
#: The data a link or the sidebar may choose, as the first-run sentence names them.
SOURCE_WORDS = {
    "robust03": "the Robust03 sample",
    "mslr": "the MSLR-WEB10K sample (136 features as systems)",
}


def first_words(title: str, source: object) -> str:
    """The sentence a page's first run on a data set shows at once (:data:`FIRST_WORK`).

    >>> first_words("Overview", "mslr")  # doctest: +ELLIPSIS
    "Scoring every system under trec_eval's order and tie-aware on the MSLR-WEB10K ...
    """
    work = FIRST_WORK.get(title, "Computing the page")
    where = SOURCE_WORDS.get(str(source), "your data")
    return f"{work} on {where}; the first time takes a few seconds ..."


#: Seconds a new visitor's first run waits after sending the page's name: the browser draws
#: what arrives together in one pass, so on a warm server, where the page follows within
#: milliseconds, the name would wait for the whole page (0.1-0.2 s); one frame's pause
#: lets it show first.
FIRST_PAINT = 0.04


def main() -> None:
    """One run of the app for one visitor: the page list, its name at once, the sidebar,
    the page."""
    st.set_page_config(page_title="tiecore explorer", page_icon=str(ICON), layout="wide")
    page = st.navigation(
        [
            st.Page(f"app_pages/{name}.py", title=title, icon=f":material/{icon}:",
                    default=name == "start")
            for name, title, icon in PAGES
        ]
    )  # fmt: skip
    # The page's name at once, before the app layer is imported (pandas, plotly, tiecore:
    # about a second on a fresh server) and before the sidebar reads the data; the page's
    # own title takes its place.
    heading = st.empty()
    top = heading.container()
    top.title(page.title)
    new_visitor = "_visited" not in st.session_state
    st.session_state["_visited"] = True
    if new_visitor:
        time.sleep(FIRST_PAINT)  # the name painted before anything else arrives
    # One spinner over the whole run, the sidebar and the page: Streamlit shows it once the
    # run has taken half a second, so a visitor never waits longer without a sign, however
    # the time splits between reading the data and drawing the page.  Its words say what a
    # run spends its time on: on a fresh server importing the app layer (pandas, plotly,
    # tiecore: about a second) and reading the data, later the page's computations.
    fresh = "app_lib.sidebar" not in sys.modules
    # A page's first run on a data set (a data switch included) is the slow one: its sentence
    # shows at once, in a running status line, gone once the page is drawn.  The slot is
    # drawn on every run, so the page's elements keep their places from run to run.
    first = st.empty()
    seen = st.session_state.setdefault("_seen_pages", set())
    linked = st.query_params.get("data")  # a link's data set, chosen by the sidebar below
    source = st.session_state.get("source", linked if linked in SOURCE_WORDS else "robust03")
    where = (page.title, source)
    if where not in seen:
        first.status(first_words(*where), state="running")
    try:
        run(page, heading, top, fresh, where in seen)
    finally:  # st.stop() too: the status line goes once the run ends, however it ends
        first.empty()
        seen.add((page.title, st.session_state.get("source", source)))


def run(page, heading, top, fresh: bool, seen: bool) -> None:
    """The sidebar and the page under one spinner (Streamlit's: after half a second)."""
    with st.spinner(
        "Loading the data ..." if fresh else "Computing ..." if seen else "Still computing ..."
    ):
        from app_lib import recent, settings, sidebar, warm  # after the first words
        from tiecore.errors import InputError
        from tiecore.report import escape_markdown

        if fresh and page.title not in CHARTLESS:
            top.plotly_chart(PRELOAD, config={"staticPlot": True, "displayModeBar": False})
        warm.start()  # once per server: the MSLR sample's first view, computed ahead
        recent.register()  # this session, closed once its visitor has left (recent.sweep)
        recent.trimmer()  # once per server: closes left sessions, hands freed memory back
        sidebar.sidebar()  # its messages (a bad upload, say) stay at the top of the page
        heading.empty()
        time.sleep(settings.step_delay(page.title))  # 0 unless a test asks for a slow step
        try:
            page.run()
        except InputError as error:  # a budget tiecore keeps (samples, a tie group's size)
            st.error(f"Refused: {escape_markdown(str(error))}", icon=":material/error:")
        finally:  # st.stop() too
            recent.run_ended()  # memory the run freed (a new upload's) handed back soon


# Streamlit runs this file as __main__; a process that only imports it (multiprocessing's
# spawn re-imports the main module of a process where Streamlit ran it) draws nothing.
if __name__ == "__main__":
    main()

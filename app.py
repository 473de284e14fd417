"""tiecore explorer: ``streamlit run app.py``.

A multipage Streamlit app over :mod:`tiecore` for exploring how tied scores
change IR evaluation.  It opens on the bundled ``sample_data/``; the sidebar
(data and settings) is drawn here, once, for every page.  The app layer lives in
``app_lib/`` (data, sidebar, cache, charts); every number comes from tiecore.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

#: The tab's icon, an SVG shipped with the app (sent inline: nothing is fetched from a font host).
ICON = Path(__file__).parent / "app_lib" / "icon.svg"
#: The pages, by file, with their titles and icons.  They live in app_pages/: a folder named
#: pages/ beside this file would switch Streamlit to its legacy multipage mode for a visitor
#: who opens a page's address directly (that page run without this file: narrow, its file
#: names as the page list, no shared sidebar).
PAGES = (
    ("start", "Start here", "school"),
    ("overview", "Overview", "bar_chart"),
    ("tie_anatomy", "Tie anatomy", "biotech"),
    ("variance", "Variance", "casino"),
    ("rankings", "System rankings", "leaderboard"),
    ("scoring_functions", "Scoring functions", "functions"),
    ("builder", "Build a scoring function", "tune"),
    ("precision", "Precision what-if", "target"),
    ("playground", "Playground", "toys"),
)


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
    heading.title(page.title)
    with st.spinner("Loading the data ..."):
        from app_lib import recent, sidebar, warm  # after the first words (see above)
        from tiecore.errors import InputError
        from tiecore.report import escape_markdown

        warm.start()  # once per server: the MSLR sample's first view, computed ahead
        recent.trimmer()  # once per server: freed memory handed back to the system
        sidebar.sidebar()  # its messages (a bad upload, say) stay at the top of the page
    heading.empty()
    # a spinner whenever the page computes for more than half a second (Streamlit shows it
    # after 0.5 s), whatever the page: a setting change never waits without a sign
    with st.spinner("Computing ..."):
        try:
            page.run()
        except InputError as error:  # a budget tiecore keeps (samples, a tie group's size)
            st.error(f"Refused: {escape_markdown(str(error))}", icon=":material/error:")


# Streamlit runs this file as __main__; a process that only imports it (multiprocessing's
# spawn re-imports the main module of a process where Streamlit ran it) draws nothing.
if __name__ == "__main__":
    main()

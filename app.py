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
st.set_page_config(page_title="tiecore explorer", page_icon=str(ICON), layout="wide")

# The pages live in app_pages/: a folder named pages/ beside this file would switch Streamlit
# to its legacy multipage mode for a visitor who opens a page's address directly (that page
# run without this file: narrow, its file names as the page list, no shared sidebar).
PAGES = [
    st.Page("app_pages/start.py", title="Start here", icon=":material/school:", default=True),
    st.Page("app_pages/overview.py", title="Overview", icon=":material/bar_chart:"),
    st.Page("app_pages/tie_anatomy.py", title="Tie anatomy", icon=":material/biotech:"),
    st.Page("app_pages/variance.py", title="Variance", icon=":material/casino:"),
    st.Page("app_pages/rankings.py", title="System rankings", icon=":material/leaderboard:"),
    st.Page(
        "app_pages/scoring_functions.py", title="Scoring functions", icon=":material/functions:"
    ),
    st.Page("app_pages/builder.py", title="Build a scoring function", icon=":material/tune:"),
    st.Page("app_pages/precision.py", title="Precision what-if", icon=":material/target:"),
    st.Page("app_pages/playground.py", title="Playground", icon=":material/toys:"),
]

page = st.navigation(PAGES)
# The page's name at once, before the app layer is imported (pandas, plotly, tiecore: about
# a second on a fresh server) and before the sidebar reads the data; the page's own title
# takes its place.
heading = st.empty()
heading.title(page.title)
with st.spinner("Loading the data ..."):
    from app_lib import sidebar, warm  # after the first words (see above)

    warm.start()  # once per server: the MSLR sample's first view, computed ahead
    sidebar.sidebar()  # its messages (a bad upload, say) stay at the top of the page
heading.empty()
page.run()

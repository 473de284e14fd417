"""The Streamlit explorer's app layer (``app.py`` and ``app_pages/``), split by concern.

From the bottom up (a module imports only those above it in this list; none imports
``app_pages``; ``tests/app/test_app_layers.py`` checks it, imports inside functions too):

- :mod:`app_lib.settings`: the sidebar's :class:`~app_lib.settings.Settings`, the offered
  measures, and the limits (upload size, cache age) as data;
- :mod:`app_lib.glossary`: every measure's definition in words;
- :mod:`app_lib.recent`: a store bounded by count and age, for results kept outside
  Streamlit's caches;
- :mod:`app_lib.charts`: the one chart helper, tables with CSV downloads, and the glossary;
- :mod:`app_lib.rank_tables`: the System rankings page's names, headers and tables;
- :mod:`app_lib.data`: data sets (bundled samples and uploads) as :class:`~app_lib.data.Dataset`;
- :mod:`app_lib.warm`: starts the warm-up process and reads its results;
- :mod:`app_lib.cache`: cached calls into :mod:`tiecore` (every number the pages show);
- :mod:`app_lib.warmup`: the warm-up process itself (``python -m app_lib.warmup DIR``);
- :mod:`app_lib.track`: the per-query drill-down's cached calls and the links that
  reopen a view (``st.query_params``);
- :mod:`app_lib.sidebar`: the shared sidebar -> the data set and settings in use.

Every measure value comes from :mod:`tiecore` (``tiecore.explain.anatomy``, ``tiecore.report``,
``tiecore.explain.builder`` and the core); the pages only lay out and draw.
"""

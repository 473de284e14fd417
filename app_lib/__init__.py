"""The Streamlit explorer's app layer (``app.py`` and ``app_pages/``), split by concern.

- :mod:`app_lib.data`: data sets (bundled samples and uploads) as :class:`~app_lib.data.Dataset`;
- :mod:`app_lib.sidebar`: the shared sidebar -> :class:`~app_lib.sidebar.Settings`;
- :mod:`app_lib.cache`: cached calls into :mod:`tiecore` (every number the pages show);
- :mod:`app_lib.charts`: the one chart helper, tables with CSV downloads, and the glossary.

Every measure value comes from :mod:`tiecore` (``tiecore.explain.anatomy``, ``tiecore.report``,
``tiecore.explain.builder`` and the core); the pages only lay out and draw.
"""

"""Cached calls and links of the per-query drill-down (``app_pages/queries.py``).

Every number comes from :mod:`tiecore.explain.queries` (tested against brute force over
orderings and against :func:`tiecore.evaluate`); results are kept as the other pages'
are (:func:`app_lib.cache.memo`: per server for the bundled samples, per session for
uploads, bounded in bytes).  The links: a view's choices are written to the address
(``st.query_params``) on every run and read back once, on a session's first run, so
an address opened in a fresh browser lands on the same view (:func:`remember`,
:func:`from_link`); uploads cannot travel in one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import streamlit as st

from app_lib import cache
from app_lib.data import Dataset
from app_lib.settings import Settings
from tiecore.explain import queries

#: The tie-break every shift is measured from (the drill-down's reference order).
REFERENCE = "trec_eval"
#: Shift matrices kept (one per data set, measure and relevance level) and one-query views.
SHIFTS_KEPT = 32
LISTS_KEPT = 256


def shifts(dataset: Dataset, settings: Settings, measure: str) -> pd.DataFrame:
    """Query x system shifts of ``measure`` (:func:`tiecore.explain.queries.shift_matrix`,
    from trec_eval's order), computed once under a progress bar."""
    key = (dataset.key, measure, settings.rel_level)

    def compute() -> pd.DataFrame:
        bar, report = cache.progress_bar("Scoring every query of every system ...")
        try:
            return queries.shift_matrix(
                dataset.runs,
                dataset.qrels,
                measure,
                tiebreak=REFERENCE,
                rel_level=settings.rel_level,
                progress=report,
            )
        finally:
            bar.empty()

    return cache.memo("shifts", key, compute, SHIFTS_KEPT, dataset.shared)


def one_query(
    dataset: Dataset,
    settings: Settings,
    measure: str,
    qid: str,
    names: Sequence[str],
    other: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ranked lists (:func:`~tiecore.explain.queries.ranked_lists`) and the values
    (:func:`~tiecore.explain.queries.query_values`) of query ``qid`` for runs ``names``."""
    names = tuple(names)
    seed = settings.seed if other == "random" else 0
    key = (dataset.key, measure, qid, names, other, settings.rel_level, seed)

    def compute() -> tuple[pd.DataFrame, pd.DataFrame]:
        runs = {name: dataset.runs[name] for name in names}
        options = {"tiebreak": REFERENCE, "other": other, "rel_level": settings.rel_level}
        lists = queries.ranked_lists(runs, dataset.qrels, qid, **options)
        values = queries.query_values(runs, dataset.qrels, qid, measure, seed=seed, **options)
        return lists, values

    return cache.memo("lists", key, compute, LISTS_KEPT, dataset.shared)


# ----------------------------------------------------------------------------- links

#: Session-state key: the address's parameters as the session's first run found them.
LINK = "_link_params"


def read_link() -> None:
    """Keep the address's parameters of a session's first run (``app.py`` calls it before
    the sidebar): the sidebar and the page take their first choices from them."""
    if LINK not in st.session_state:
        st.session_state[LINK] = {k: st.query_params.get(k) for k in st.query_params}


def from_link(name: str) -> str | None:
    """The value ``name`` of the address that opened this session, once (later runs keep
    the reader's own choices)."""
    params = st.session_state.get(LINK) or {}
    return params.pop(name, None)


def remember(values: Mapping[str, object]) -> None:
    """Write a view's choices into the address (empty ones removed): a copy of it opens
    this view.  Writing does not rerun the page."""
    for name, value in values.items():
        text = "" if value is None else str(value)
        if text:
            if st.query_params.get(name) != text:
                st.query_params[name] = text
        elif name in st.query_params:
            del st.query_params[name]

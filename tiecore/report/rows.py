"""Rows of a tidy result frame: its summary rows, or the rows of some runs and measures.

:func:`tiecore.evaluate` and :func:`tiecore.spread.evaluate_spread` give one row per
run, measure and query, each run's summary row (the mean over its queries) last per
measure with ``qid`` missing.  A caller that computed every run and measure once (the
explorer's caches) takes what a table shows from that frame with these two functions,
so that the rows equal those of a call asked for them alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def summary_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The summary rows (``qid`` missing) of a per-query frame, as tiecore gives them when
    called without ``per_query``: ``qid`` an object column of None, the index 0..n-1.

    Examples
    --------
    >>> frame = pd.DataFrame({"run": ["a", "a"], "qid": ["1", None], "value": [0.5, 0.5]})
    >>> summary_rows(frame).to_dict("list")
    {'run': ['a'], 'qid': [None], 'value': [0.5]}
    """
    rows = frame[frame["qid"].isna()].reset_index(drop=True)
    return rows.assign(qid=pd.Series([None] * len(rows), dtype=object))


def select_rows(frame: pd.DataFrame, measures: Sequence[str], runs: Sequence[str]) -> pd.DataFrame:
    """The rows of ``measures`` and ``runs`` of a tidy frame, in the order asked for.

    Order: runs as ``runs``, then measures as ``measures``, then the rows' own order
    (queries, the summary row last), as :func:`tiecore.evaluate` orders a call asked
    for exactly these runs and measures.  A sort by one integer code per row
    (``run position * len(measures) + measure position``, stable), no loop.

    Examples
    --------
    >>> frame = pd.DataFrame({"run": ["a", "a", "b", "b"], "measure": ["P", "R", "P", "R"],
    ...                       "value": [1.0, 2.0, 3.0, 4.0]})
    >>> select_rows(frame, ["R", "P"], ["b"])["value"].tolist()
    [4.0, 3.0]
    """
    measure_codes = pd.Index(list(measures)).get_indexer(frame["measure"])  # -1: not asked for
    run_codes = pd.Index(list(runs)).get_indexer(frame["run"])
    keep = np.flatnonzero((measure_codes >= 0) & (run_codes >= 0))
    order = run_codes[keep].astype(np.int64) * len(measures) + measure_codes[keep]
    return frame.iloc[keep[np.argsort(order, kind="stable")]].reset_index(drop=True)

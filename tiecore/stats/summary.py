"""Each run's mean with its two noises: tie noise beside topic noise, and its interval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tiecore.options import SEED, STATISTICS, pick, validate_params
from tiecore.stats.bootstrap import bootstrap_intervals


@validate_params({"seed": SEED} | pick(STATISTICS, "confidence", "ci_method", "n_bootstrap"))
def system_table(
    per_query: pd.DataFrame,
    tie_var: pd.Series,
    *,
    confidence: float = 0.95,
    ci_method: str = "BCa",
    n_bootstrap: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Each run's tie-aware mean with its tie noise, topic noise and bootstrap interval.

    Columns: ``mean`` over the run's ``n_queries`` (its non-NaN rows of
    ``per_query``); ``tie_sd = sqrt(tie_var)``, the exact sd of the mean over
    random tie-breaks; ``topic_sd = sd(values) / sqrt(n)`` (``ddof=1``), the
    standard error from the spread between topics; ``ci_low, ci_high``:
    :func:`bootstrap_intervals` of the mean.  ``topic_sd`` and the interval
    are NaN (undefined) below two queries.
    """
    values = per_query.to_numpy(np.float64)
    present = ~np.isnan(values)
    out = pd.DataFrame(index=per_query.columns)
    n = present.sum(axis=0)
    out["mean"] = np.where(n > 0, np.nansum(values, axis=0) / np.maximum(n, 1), 0.0)
    out["n_queries"] = n
    out["tie_sd"] = np.sqrt(tie_var.reindex(per_query.columns).to_numpy())
    topic = np.full(len(n), np.nan)
    low, high = np.full(len(n), np.nan), np.full(len(n), np.nan)
    patterns, code = np.unique(present.T, axis=0, return_inverse=True)
    for g, pattern in enumerate(patterns):
        members = np.flatnonzero(code.ravel() == g)
        x = values[np.ix_(pattern, members)]
        if len(x) > 1:
            constant = np.ptp(x, axis=0) == 0  # std's rounding residue, not topic noise
            topic[members] = np.where(constant, 0.0, x.std(axis=0, ddof=1)) / math.sqrt(len(x))
        low[members], high[members] = bootstrap_intervals(
            x, confidence=confidence, method=ci_method, n_resamples=n_bootstrap, seed=seed
        )
    out["topic_sd"] = topic
    out["ci_low"], out["ci_high"] = low, high
    out.index.name = "run"
    return out

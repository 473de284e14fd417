"""What the Variance page draws: tie sd, the convergence of the sampled mean, tie groups.

The exact variance of a value over uniformly random tie-breaks comes from
:func:`tiecore.spread.evaluate_spread`; these functions turn it into what a reader
looks at.  The mean of ``n`` independent random tie-breaks has variance ``var / n``,
so about 95% of running means lie within ``aware ± 2 sqrt(var / n)`` (the band of the
convergence chart); each tie group's share of a query's variance splits its bar.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike


def tie_sd(var: ArrayLike) -> np.ndarray:
    """The standard deviation over random tie-breaks, ``sqrt(var)``; a variance a rounding
    residue put below zero is 0.

    Examples
    --------
    >>> tie_sd([0.04, 0.0, -1e-18]).tolist()
    [0.2, 0.0, 0.0]
    """
    return np.sqrt(np.maximum(np.asarray(var, np.float64), 0.0))


def convergence(sample_means: ArrayLike, aware: float, var_of_mean: float) -> pd.DataFrame:
    """The running mean of the first ``n`` sampled means beside its expected spread.

    Parameters
    ----------
    sample_means : array_like
        One value per random tie-break (the mean over queries), in the order drawn.
    aware : float
        The exact tie-aware mean (what the running mean converges to).
    var_of_mean : float
        The exact variance of one sampled mean over random tie-breaks.

    Returns
    -------
    DataFrame
        ``n`` (1, 2, ...), ``running`` (mean of the first ``n``), ``low`` and ``high``:
        ``aware ∓ 2 sqrt(var_of_mean / n)``.

    Examples
    --------
    >>> convergence([0.5, 0.3, 0.4], 0.4, 0.04).round(4).values.tolist()
    [[1.0, 0.5, 0.0, 0.8], [2.0, 0.4, 0.1172, 0.6828], [3.0, 0.4, 0.1691, 0.6309]]
    """
    values = np.asarray(sample_means, np.float64)
    n = np.arange(1, len(values) + 1)
    band = 2.0 * np.sqrt(max(float(var_of_mean), 0.0) / n)
    return pd.DataFrame(
        {"n": n, "running": np.cumsum(values) / n, "low": aware - band, "high": aware + band}
    )


def ordinal(k: int) -> str:
    """``1`` -> ``1st``, ``2`` -> ``2nd``, ``11`` -> ``11th``, ``23`` -> ``23rd``."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def group_parts(groups: pd.DataFrame, query_var: pd.Series, queries: list) -> pd.DataFrame:
    """Each tie group's part of its query's variance, for the stacked bars.

    ``groups`` has one row per tie group (``qid``, ``var_share``: its share of the
    query's variance, ``start_rank`` ...), ``query_var`` each query's exact variance.
    Keeps the groups of ``queries`` that carry variance, with ``var_part = var *
    var_share``, ``place`` (1 for the query's highest group with variance, 2 for the
    next, ...) and ``label``: the place in words (``1st tie group from the top``).

    Examples
    --------
    >>> g = pd.DataFrame({"qid": ["a", "a", "a", "b"], "var_share": [0.25, 0.0, 0.75, 1.0],
    ...                   "start_rank": [1, 4, 9, 2]})
    >>> group_parts(g, pd.Series({"a": 0.08, "b": 0.01}), ["a", "b"])[
    ...     ["qid", "var_part", "place", "label"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['a', 0.02, 1, '1st tie group from the top'], ['a', 0.06, 2, '2nd tie group from the top'],
     ['b', 0.01, 1, '1st tie group from the top']]
    """
    out = groups[groups["qid"].isin(queries) & (groups["var_share"] > 0)].copy()
    out["var_part"] = out["qid"].map(query_var).to_numpy(np.float64) * out["var_share"]
    out["place"] = out.groupby("qid").cumcount() + 1
    out["label"] = [f"{ordinal(int(k))} tie group from the top" for k in out["place"]]
    return out.reset_index(drop=True)


def sampled_summary(samples: pd.DataFrame) -> dict:
    """What a draws x queries matrix of sampled values says, beside the exact values.

    Returns
    -------
    dict
        ``means``: each draw's mean over the queries (the system's value under that
        tie-break); ``mean`` and ``sd``: their mean and sample sd (``ddof=1``), estimates of
        the tie-aware value and the tie sd of the mean; ``query_mean`` and ``query_sd``:
        each query's mean and sample sd over the draws.

    Examples
    --------
    >>> s = sampled_summary(pd.DataFrame({"q1": [0.0, 1.0], "q2": [0.5, 0.5]}))
    >>> s["means"].tolist(), s["mean"], round(s["sd"], 4), s["query_sd"].round(4).tolist()
    ([0.25, 0.75], 0.5, 0.3536, [0.7071, 0.0])
    """
    means = samples.mean(axis=1)
    return {
        "means": means,
        "mean": float(means.mean()),
        "sd": float(means.std(ddof=1)) if len(means) > 1 else float("nan"),
        "query_mean": samples.mean(),
        "query_sd": samples.std(ddof=1),
    }

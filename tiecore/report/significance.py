"""Which systems are significantly below the best one: the marks of the report's tables.

:func:`significance_vs_best` runs the paired t-test of every system against the
best (tie-aware per-query values) and corrects the p-values over all pairs of
systems, as ``tiecore compare`` does (:mod:`tiecore.stats`).  pandas loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.options import CORRECTION, REPORT, pick, validate_params
from tiecore.stats.corrections import adjust_pvalues

if TYPE_CHECKING:
    import pandas as pd


#: What the significance marks mean, per correction (the legends' words).
CORRECTION_NAMES = {
    "holm": "Holm-corrected",
    "bonferroni": "Bonferroni-corrected",
    "bh": "Benjamini-Hochberg-corrected",
    "none": "uncorrected",
}


@validate_params({**pick(REPORT, "alpha"), "correction": CORRECTION})
def significance_vs_best(
    per_query: pd.DataFrame, alpha: float = 0.05, correction: str = "holm"
) -> pd.DataFrame:
    """Per measure, is every run significantly below the best run (tie-aware values)?

    The test and correction of the Rankings page and ``tiecore compare`` by
    default, so a star here and a significant pair there are one verdict: a
    paired t-test (:func:`tiecore.stats.paired.paired_t`) on the per-query values of
    the queries both runs have, ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n -
    1`` degrees of freedom, for every unordered pair of the measure's runs; the
    p-values are corrected over those pairs by
    :func:`tiecore.stats.corrections.adjust_pvalues` (Holm by default); the rows are the
    pairs of each run with the best.

    Parameters
    ----------
    per_query : DataFrame
        :func:`tiecore.evaluate` output with ``per_query=True`` (tie-aware).
    alpha : float
        Significance level of the corrected p-value.
    correction : {"holm", "bonferroni", "bh", "none"}
        The multiple-comparison correction over a measure's pairs.

    Returns
    -------
    DataFrame
        ``run, measure, best, p_value, p_value_adj, significant``: ``best`` is
        the run with the highest mean (over its own queries: runs that retrieved
        for different queries are warned of); ``p_value`` is NaN for the best
        run itself, with fewer than two shared queries, or when the differences
        do not vary (their sd at most :data:`tiecore.stats.ranks.RTOL` times the
        largest ``|value|``, as ``tiecore compare`` decides, so rounding noise
        in a constant difference is no significance), and at least
        :data:`tiecore.stats.SMALLEST_P`; ``significant = p_value_adj <
        alpha``.  ``attrs["correction"]`` names the correction.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "qid": ["1", "2", "3"] * 2,
    ...                      "measure": "AP", "value": [0.9, 0.8, 0.7, 0.1, 0.2, 0.2]})
    >>> significance_vs_best(rows)[["run", "best", "significant"]]
      run best  significant
    0   a    a        False
    1   b    a         True
    """
    import pandas as pd

    from tiecore.stats.paired import paired_t, warn_unequal_queries  # lazy: scipy (~165 ms)

    rows = per_query[per_query["qid"].notna()]
    if len(rows):  # the runs' query sets (the same under every measure)
        first = rows[rows["measure"] == rows["measure"].iloc[0]]
        present = first.pivot(index="qid", columns="run", values="value").notna()
        warn_unequal_queries(list(present.columns), present.to_numpy().T, stacklevel=3)
    out = []
    for measure, part in rows.groupby("measure", sort=False):
        wide = part.pivot(index="qid", columns="run", values="value")
        order = list(dict.fromkeys(part["run"]))
        means = wide.mean()
        best = str(means.idxmax()) if len(means) else None
        i, j = np.triu_indices(wide.shape[1], 1)
        p = paired_t(wide.to_numpy(np.float64), i, j)[0]
        adjusted = adjust_pvalues(p, correction)
        at = wide.columns.get_loc(best) if best is not None else -1
        with_best = {}
        for k in np.flatnonzero((i == at) | (j == at)):
            other = wide.columns[j[k] if i[k] == at else i[k]]
            with_best[other] = (p[k], adjusted[k])
        for run in order:
            found = with_best.get(run, (np.nan, np.nan))
            out.append({"run": run, "measure": measure, "best": best, "p_value": found[0],
                        "p_value_adj": found[1]})  # fmt: skip
    columns = ["run", "measure", "best", "p_value", "p_value_adj"]
    table = pd.DataFrame(out, columns=columns)
    table["significant"] = table["p_value_adj"] < alpha
    table.attrs["correction"] = correction
    return table

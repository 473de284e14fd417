"""Corrections of p-values for multiple comparisons (Holm, Bonferroni, Benjamini-Hochberg)."""

from __future__ import annotations

import numpy as np

from tiecore.errors import InputError
from tiecore.options import CORRECTION, validate_params


@validate_params({"method": CORRECTION})
def adjust_pvalues(pvalues: np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values corrected for multiple comparisons; NaN (undefined) ones are left out.

    Over the ``m`` defined p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:

    - ``bonferroni``: ``min(1, m p)``;
    - ``holm`` (step-down): ``max_{k <= i} min(1, (m - k + 1) p_(k))``;
    - ``bh`` (Benjamini-Hochberg, the false discovery rate, as
      :func:`scipy.stats.false_discovery_control`): ``min_{k >= i} min(1, m p_(k) / k)``;
    - ``none``: unchanged.

    >>> adjust_pvalues(np.array([0.01, 0.04, np.nan, 0.03]), "holm").round(6).tolist()
    [0.03, 0.06, nan, 0.06]
    >>> adjust_pvalues(np.array([0.01, 0.04, 0.03]), "bh").round(6).tolist()
    [0.03, 0.04, 0.04]
    """
    p = np.asarray(pvalues, np.float64)
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    found = p[defined]
    if ((found < 0) | (found > 1)).any():  # inf too: no p-value, so no corrected one
        bad = found[(found < 0) | (found > 1)][0]
        raise InputError(
            "pvalues", None, f"{float(bad)!r} is not a p-value", "numbers in [0, 1] or NaN"
        )
    m = found.size
    if method == "none" or m == 0:
        out[defined] = found
        return out
    if method == "bonferroni":
        out[defined] = np.minimum(1.0, m * found)
        return out
    order = np.argsort(found, kind="stable")
    ordered = found[order]
    k = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - k + 1) * ordered))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ordered / k)[::-1])[::-1]
    result = np.empty(m)
    result[order] = adjusted
    out[defined] = result
    return out

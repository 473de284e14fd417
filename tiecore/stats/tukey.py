"""Tukey's honestly significant difference over independent groups (Tukey-Kramer)."""

from __future__ import annotations

import numpy as np

from tiecore.options import CONFIDENCE, validate_params
from tiecore.stats import SMALLEST_P
from tiecore.stats.ranks import RTOL


@validate_params({"confidence": CONFIDENCE})
def tukey_hsd(groups: list[np.ndarray], confidence: float = 0.95) -> dict[str, np.ndarray]:
    """Tukey's HSD over independent groups, as :func:`scipy.stats.tukey_hsd`: ``(k, k)`` arrays.

    With the pooled within-group variance ``s2`` (``N - k`` degrees of
    freedom) and ``se = sqrt(s2 / 2 (1/n_a + 1/n_b))`` (Tukey-Kramer),
    ``pvalue[a, b] = P(Q > |mean_a - mean_b| / se)`` for the studentized range
    ``Q`` of ``k`` groups, and ``[low, high] = mean_a - mean_b -+ q_conf se``
    the simultaneous interval.  scipy's studentized range is slow, so each
    unordered pair is computed once.  The test ignores the pairing by query.
    NaN (undefined) when a group is empty, no degree of freedom is left or the
    pooled variance is 0; p at least :data:`SMALLEST_P`.
    """
    from scipy import stats  # here, not at import: scipy.stats takes ~0.5 s to import

    k = len(groups)
    out = {name: np.full((k, k), np.nan) for name in ("pvalue", "low", "high")}
    sizes = np.array([len(g) for g in groups], np.float64)
    if k < 2 or sizes.min() < 1 or sizes.sum() <= k:
        return out
    means = np.array([g.mean() for g in groups])
    df = sizes.sum() - k
    pooled = sum(float(((g - g.mean()) ** 2).sum()) for g in groups) / df
    scale = max(float(np.abs(np.concatenate(groups)).max()), 1e-300)
    if pooled <= (RTOL * scale) ** 2:
        return out
    a, b = np.triu_indices(k, 1)
    diff = means[a] - means[b]
    se = np.sqrt(pooled / 2.0 * (1.0 / sizes[a] + 1.0 / sizes[b]))
    with np.errstate(all="ignore"):
        p = np.maximum(stats.studentized_range.sf(np.abs(diff) / se, k, df), SMALLEST_P)
        critical = float(stats.studentized_range.ppf(confidence, k, df))
    for rows, cols, sign in ((a, b, 1.0), (b, a, -1.0)):
        out["pvalue"][rows, cols] = p
        out["low"][rows, cols] = sign * diff - critical * se
        out["high"][rows, cols] = sign * diff + critical * se
    return out

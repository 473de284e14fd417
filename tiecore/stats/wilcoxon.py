"""Wilcoxon's signed-rank test of many columns of paired differences at once.

Each column gets what :func:`scipy.stats.wilcoxon` gives it alone; differences
within a tolerance of 0 are zero and magnitudes that close are tied, so
rounding noise neither breaks a tie of ranks nor hides a zero.
"""

from __future__ import annotations

import numpy as np

from tiecore.options import ZERO_METHOD, validate_params
from tiecore.stats import CHUNK_CELLS, SMALLEST_P
from tiecore.stats.ranks import RTOL


@validate_params({"zero_method": ZERO_METHOD})
def wilcoxon_pvalues(
    d: np.ndarray, zero_method: str = "wilcox", scale: np.ndarray | None = None
) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-value of each column of ``d`` (``queries x pairs``).

    Each column gets what :func:`scipy.stats.wilcoxon` (``method="auto"``)
    gives that column alone: the exact null distribution when ``n <= 50`` and
    no difference is zero or tied in magnitude; else an exact enumeration of
    every sign flip (a permutation test, :func:`_wilcoxon_flips`) when ``n <=
    13``; else the normal approximation.  scipy decides that once per call,
    so the columns are grouped by the choice and each group is one call along
    ``axis=0``.
    Differences within ``RTOL * scale`` (default: the column's largest
    ``|d|``) of 0 are zero and magnitudes that close are tied
    (:func:`_snap`).  NaN (undefined) when no difference is nonzero, or a
    column holds NaN or inf (as scipy's ``nan_policy="propagate"``); never
    below :data:`SMALLEST_P`.  A 1-D ``d`` is one column (one sample).

    >>> wilcoxon_pvalues(np.array([[0.5, 0.0], [0.25, 0.0], [0.125, 0.0]])).tolist()
    [0.25, nan]
    >>> wilcoxon_pvalues(np.array([0.5, 0.25, 0.125])).tolist()
    [0.25]
    """
    from scipy import stats  # here, not at import: scipy.stats takes ~0.5 s to import

    d = np.array(d, np.float64)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2:
        raise ValueError(f"d must be 1-D or 2-D (queries x pairs), got {d.ndim}-D")
    n, width = d.shape
    out = np.full(width, np.nan)
    if n == 0 or width == 0:
        return out
    finite = np.isfinite(d).all(axis=0)
    if not finite.all():  # undefined columns: computed as all-zero (NaN), so set back
        out[finite] = wilcoxon_pvalues(
            d[:, finite], zero_method, None if scale is None else np.asarray(scale)[finite]
        )
        return out
    if scale is None:
        scale = np.abs(d).max(axis=0)
    scale = np.broadcast_to(np.asarray(scale, np.float64), (width,))
    d[np.abs(d) <= RTOL * scale] = 0.0
    d = _snap(d, scale)
    zeros = d == 0
    ordered = np.sort(np.abs(d), axis=0)
    tied = ((np.diff(ordered, axis=0) == 0) & (ordered[1:] > 0)).any(axis=0)
    plain = ~(tied | zeros.any(axis=0))
    defined = ~zeros.all(axis=0)
    if n > 50:
        kinds = [("asymptotic", defined)]
    else:
        kinds = [
            ("exact", defined & plain),
            ("asymptotic" if n > 13 else "flips", defined & ~plain),
        ]
    for method, chosen in kinds:
        if not chosen.any():
            continue
        if method == "flips":
            out[chosen] = _wilcoxon_flips(d[:, chosen], zero_method)
            continue
        with np.errstate(all="ignore"):
            found = stats.wilcoxon(d[:, chosen], zero_method=zero_method, method=method, axis=0)
        out[chosen] = np.maximum(np.atleast_1d(found.pvalue), SMALLEST_P)
    return out


def _wilcoxon_flips(d: np.ndarray, zero_method: str) -> np.ndarray:
    """Two-sided p of the signed-rank sum ``W+`` over all ``2**n`` sign flips, per column.

    What ``scipy.stats.wilcoxon(..., method=PermutationMethod())`` enumerates
    for ``n <= 13``, as one product: with ``b`` the rows of flip bits, ``W+
    = sum r [d > 0] + b @ (r ([d < 0] - [d > 0]))`` (+ half the zeros' ranks
    for ``zsplit``), where ``r`` are the average ranks of ``|d|`` (zeros
    unranked for ``wilcox``).  ``p = min(1, 2 min(P(W+ <= w), P(W+ >= w)))``;
    rank sums are multiples of 1/2, so they compare exactly.
    """
    from scipy import stats  # here, not at import: scipy.stats takes ~0.5 s to import

    n = len(d)
    zeros = d == 0
    magnitude = np.where(zeros, np.inf, np.abs(d)) if zero_method == "wilcox" else np.abs(d)
    ranks = stats.rankdata(magnitude, axis=0)
    if zero_method == "wilcox":
        ranks[zeros] = 0.0
    positive, negative = ranks * (d > 0), ranks * (d < 0)
    base = positive.sum(axis=0)
    if zero_method == "zsplit":
        base = base + (ranks * zeros).sum(axis=0) / 2.0
    bits = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
    out = np.empty(d.shape[1])
    step = max(1, CHUNK_CELLS // 2**n)
    for start in range(0, d.shape[1], step):
        part = slice(start, start + step)
        null = base[part] + bits @ (negative[:, part] - positive[:, part])
        observed = base[part]
        below = np.count_nonzero(null <= observed + 0.25, axis=0)
        above = np.count_nonzero(null >= observed - 0.25, axis=0)
        out[part] = np.minimum(1.0, 2.0 * np.minimum(below, above) / 2**n)
    return out


def _snap(d: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``d`` with magnitudes within ``RTOL * scale`` of a smaller one in the column made equal.

    Each column's sorted ``|d|`` splits into groups where consecutive values
    are closer than ``RTOL * scale``; every member takes its group's first
    (smallest) magnitude and keeps its sign, so rounding noise neither breaks
    a tie of ranks nor hides a zero.
    """
    magnitude = np.abs(d)
    order = np.argsort(magnitude, axis=0, kind="stable")
    ordered = np.take_along_axis(magnitude, order, axis=0)
    start = np.ones(ordered.shape, bool)
    start[1:] = np.diff(ordered, axis=0) > RTOL * scale
    first = np.maximum.accumulate(np.where(start, np.arange(len(d))[:, None], 0), axis=0)
    snapped = np.empty_like(magnitude)
    np.put_along_axis(snapped, order, np.take_along_axis(ordered, first, axis=0), axis=0)
    return np.sign(d) * snapped

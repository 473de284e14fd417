"""Bootstrap confidence intervals of column means and of paired mean differences.

The mean is linear, so one matrix product of resample counts with the values
gives every column's bootstrap means at once; the intervals (percentile, basic,
BCa: Efron, JASA 1987) equal :func:`scipy.stats.bootstrap`'s with the same
generator.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from tiecore.options import CI_METHOD, CONFIDENCE, POSITIVE, SEED, validate_params
from tiecore.stats import CHUNK_CELLS
from tiecore.stats.ranks import RTOL

#: Key of the bootstrap resamples' generator, beside the seed.
BOOTSTRAP_KEY = 0x426F_6F74


@validate_params({"n_resamples": POSITIVE, "seed": SEED})
def resample_counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, n)``: how often each of ``n`` items is drawn by each bootstrap resample.

    Row ``r`` counts the indices of row ``r`` of
    ``default_rng([seed, BOOTSTRAP_KEY]).integers(0, n, (n_resamples, n))``,
    the resamples :func:`scipy.stats.bootstrap` draws from that generator.
    """
    rng = np.random.default_rng([seed, BOOTSTRAP_KEY])
    counts = np.zeros((n_resamples, n))
    step = max(1, CHUNK_CELLS // max(n, 1))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        drawn = rng.integers(0, n, (rows, n))
        flat = (np.arange(rows)[:, None] * n + drawn).ravel()
        counts[start : start + rows] = np.bincount(flat, minlength=rows * n).reshape(rows, n)
    return counts


@validate_params(
    {"confidence": CONFIDENCE, "method": CI_METHOD, "n_resamples": POSITIVE, "seed": SEED}
)
def bootstrap_intervals(
    x: np.ndarray,
    i: np.ndarray | None = None,
    j: np.ndarray | None = None,
    *,
    confidence: float = 0.95,
    method: str = "BCa",
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap confidence intervals of column means of ``x`` or of paired differences.

    ``x`` is ``(n, columns)`` without NaN.  Without ``i, j`` the statistic
    of column ``c`` is ``mean(x[:, c])``; with them, pair ``k`` is
    ``mean(x[:, i[k]] - x[:, j[k]])``.  The result equals
    :func:`scipy.stats.bootstrap` of that statistic with ``method``,
    ``confidence_level=confidence``, ``n_resamples`` and ``rng =
    default_rng([seed, BOOTSTRAP_KEY])``, but the mean is linear: one matrix
    product of the :func:`resample_counts` with ``x`` gives every column's
    bootstrap means, a pair's are a difference of two columns, and the
    jackknife means are ``(sum - x_q) / (n - 1)``; so all pairs cost array
    operations on ``resamples x pairs``.  Bootstrap means within ``RTOL`` of
    the observed one count as equal to it (BCa's bias correction), so
    rounding noise does not move the interval.  A statistic whose data do not
    vary has the interval ``[mean, mean]``; ``n < 2``: NaN (undefined).

    >>> x = np.array([[0.0], [1.0], [0.5], [0.25]])
    >>> low, high = bootstrap_intervals(x, method="percentile")
    >>> bool(0.0 <= low[0] < 0.4375 < high[0] <= 1.0)
    True
    """
    x = np.asarray(x, np.float64)
    n = len(x)
    paired = i is not None
    width = len(i) if i is not None else x.shape[1]
    low, high = np.full(width, np.nan), np.full(width, np.nan)
    if n < 2 or width == 0:
        return low, high
    alpha = (1.0 - confidence) / 2.0
    counts = resample_counts(n, n_resamples, seed)
    means = counts @ x / n  # (resamples, columns)
    jack = (x.sum(axis=0) - x) / (n - 1)  # (n, columns)
    observed = x.mean(axis=0)
    magnitude = np.abs(x).max(axis=0)
    step = max(1, CHUNK_CELLS // max(n_resamples, n))
    for start in range(0, width, step):
        part = slice(start, start + step)
        if paired:
            assert i is not None and j is not None  # both given, or neither
            a, b = i[part], j[part]
            boot, theta = means[:, a] - means[:, b], observed[a] - observed[b]
            leave = jack[:, a] - jack[:, b]
            d = x[:, a] - x[:, b]
            scale = np.maximum(magnitude[a], magnitude[b])
        else:
            boot, theta, leave, d = means[:, part], observed[part], jack[:, part], x[:, part]
            scale = magnitude[part]
        varies = d.std(axis=0) > RTOL * scale
        lo, hi = _interval(boot, theta, leave, alpha, method, RTOL * np.maximum(scale, 1e-300))
        low[part] = np.where(varies, lo, theta)
        high[part] = np.where(varies, hi, theta)
    return low, high


def _interval(boot, theta, leave, alpha, method, tol) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of :func:`bootstrap_intervals`: columns of bootstrap and jackknife statistics."""
    ordered = np.sort(boot, axis=0)
    if method == "BCa":
        below = np.count_nonzero(boot < theta - tol, axis=0)
        equal = np.count_nonzero(np.abs(boot - theta) <= tol, axis=0)
        z0 = special.ndtri((2 * below + equal) / (2.0 * len(boot)))
        n = len(leave)
        u = (n - 1) * (leave.mean(axis=0) - leave)
        with np.errstate(divide="ignore", invalid="ignore"):
            accel = (u**3).sum(axis=0) / n**3 / 6.0 / ((u**2).sum(axis=0) / n**2) ** 1.5
            z = special.ndtri(alpha)
            levels = [
                special.ndtr(z0 + (z0 + edge) / (1 - accel * (z0 + edge))) for edge in (z, -z)
            ]
    else:
        levels = [np.full(boot.shape[1], alpha), np.full(boot.shape[1], 1.0 - alpha)]
    lo, hi = (_quantile(ordered, level) for level in levels)
    if method == "basic":
        lo, hi = 2 * theta - hi, 2 * theta - lo
    return lo, hi


def _quantile(ordered: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Per column, the ``level`` quantile of sorted columns (numpy's linear method); NaN stays."""
    size = len(ordered)
    position = np.clip(np.nan_to_num(level, nan=0.0), 0.0, 1.0) * (size - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, size - 1)
    frac = position - below
    columns = np.arange(ordered.shape[1])
    value = ordered[below, columns] * (1 - frac) + ordered[above, columns] * frac
    value = np.where(frac == 0, ordered[below, columns], value)
    return np.where(np.isnan(level), np.nan, value)

"""P(a beats b): one random draw of a run's score against an independent draw of another's.

Over two samples ``X`` and ``Y`` (a run's scores under random tie-breaks),
``P(X > Y) + P(X = Y) / 2``, values within ``RTOL`` of the largest magnitude
counting as equal; so ``p(a, b) + p(b, a) = 1``.
"""

from __future__ import annotations

import numpy as np

from tiecore.stats import CHUNK_CELLS
from tiecore.stats.ranks import RTOL


def p_beats(first: np.ndarray, second: np.ndarray, rtol: float = RTOL) -> float:
    """P(X > Y) + P(X = Y) / 2 for X, Y drawn independently from two samples.

    Values within ``rtol`` times the largest magnitude count as equal.

    >>> p_beats(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    0.875
    """
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    if (
        first.size == 0
        or second.size == 0
        or not (np.isfinite(first).all() and np.isfinite(second).all())
    ):
        return float("nan")  # undefined: no sample, or a NaN / inf one
    tol = rtol * max(float(np.abs(first).max()), float(np.abs(second).max()))
    ordered = np.sort(second)
    below = np.searchsorted(ordered, first - tol, side="left").sum()
    at_most = np.searchsorted(ordered, first + tol, side="right").sum()
    return float((below + at_most) / (2.0 * first.size * second.size))


def p_beats_all(samples: np.ndarray) -> np.ndarray:
    """``[a, b]``: :func:`p_beats` of the sample columns ``a`` and ``b``, for all pairs.

    One sort per run, then per run ``b`` one vectorized search of every
    sample of every run (in row chunks of at most :data:`CHUNK_CELLS` cells).
    """
    size, n_runs = samples.shape
    tol = RTOL * float(np.abs(samples).max(initial=0.0))
    ordered = np.sort(samples, axis=0)
    counts = np.zeros((n_runs, n_runs))
    rows = max(1, CHUNK_CELLS // max(n_runs, 1))
    for start in range(0, size, rows):
        chunk = samples[start : start + rows]
        low, high = (chunk - tol).ravel(), (chunk + tol).ravel()
        for b in range(n_runs):
            below = np.searchsorted(ordered[:, b], low, side="left")
            at_most = np.searchsorted(ordered[:, b], high, side="right")
            counts[:, b] += (below + at_most).reshape(chunk.shape).sum(axis=0)
    return counts / (2.0 * size * size)

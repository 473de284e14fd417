"""``log C(n, k)`` to a few ulp of its own value, vectorized (numpy only).

A difference of ``log k!`` values carries the rounding of the largest one:
``lgamma(20001)`` is about 1.8e5, so ``log C(20000, 10)`` (about 78) loses 2e-11.
Here the terms are of the size of the result: for ``k = min(k, n - k)`` below
:data:`SMALL` the sum ``sum_{j<=k} log((n - k + j) / j)``; above, Stirling's
series with the large parts combined before they are rounded,

    log C(n, k) = k log(n / k) + m log1p(k / m) + log(n / (2 pi k m)) / 2
                  + d(n) - d(k) - d(m),        m = n - k,

``d(x) = 1/(12x) - 1/(360x^3) + ...`` (five terms: the next is below 1e-17 for
``x >= SMALL``).

With ``table=True`` the same function reads a kept table of ``log n!``
(scipy's ``gammaln``, correctly rounded at the integers, where glibc's
``math.lgamma`` is off by an ulp from ``n = 2`` on) and returns
``log n! - log k! - log (n - k)!``: three lookups, for the hot loops that take
millions of terms (ERR's subset DP, G's and RBP's hypergeometric weights), at
the cost of the largest term's rounding.  (The sampler's hypergeometric draws take
the sum above: numpy only, no scipy import on the sampling path.)
One table serves every caller, so the values of a caller do not depend on which
other caller ran first.
"""

from __future__ import annotations

import math

import numpy as np

#: Below this ``min(k, n - k)`` the sum of logs; from it Stirling's series.
SMALL = 20

#: Coefficients of Stirling's correction ``d(x) = sum c_i / x^(2i+1)``.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)


def log_choose(n: np.ndarray, k: np.ndarray, *, table: bool = False) -> np.ndarray:
    """``log C(n, k)`` for integers ``0 <= k <= n`` (arrays of one shape).

    ``table=True``: ``log n! - log k! - log (n - k)!`` from :func:`log_factorials`
    (integer arrays only; exact to the rounding of ``log n!``, about ``n log n``
    times 1e-16).

    >>> import math
    >>> exact = math.log(math.comb(20000, 10))
    >>> abs(float(log_choose(np.array(20000), np.array(10))) - exact) < 1e-13
    True
    >>> log_choose(np.array([5, 40, 7]), np.array([0, 20, 7])).round(6).tolist()
    [0.0, 25.649407, 0.0]
    >>> log_choose(np.array([5, 40]), np.array([0, 20]), table=True).round(6).tolist()
    [0.0, 25.649407]
    """
    if table:
        n, k = np.asarray(n), np.asarray(k)
        logs = log_factorials(int(n.max(initial=0)))
        return logs[n] - logs[k] - logs[n - k]
    n = np.asarray(n, dtype=np.float64)
    k = np.minimum(np.asarray(k, dtype=np.float64), n - np.asarray(k, dtype=np.float64))
    n, k = np.broadcast_arrays(n, k)
    m = n - k
    out = np.zeros(n.shape)
    small = k < SMALL
    for j in range(1, SMALL):  # at most SMALL - 1 terms, each of the result's size
        take = small & (k >= j)
        out[take] += np.log((m[take] + j) / j)
    big = ~small
    nb, kb, mb = n[big], k[big], m[big]
    out[big] = (
        kb * np.log(nb / kb)
        + mb * np.log1p(kb / mb)
        + 0.5 * np.log(nb / (2 * math.pi * kb * mb))
        + _correction(nb)
        - _correction(kb)
        - _correction(mb)
    )
    return out


_LOG_FACTORIALS = np.zeros(1)


def log_factorials(top: int) -> np.ndarray:
    """``log(n!)`` for ``n = 0 .. top`` at least (``gammaln(n + 1)``; one table kept and
    extended, doubling, so a run of calls costs about one; scipy is imported on the
    first call only: tiecore loads it lazily).

    >>> bool(log_factorials(4)[4] == math.log(24))
    True
    """
    global _LOG_FACTORIALS
    table = _LOG_FACTORIALS  # this thread's copy: another may replace the global meanwhile
    have = table.size
    if top >= have:
        from scipy.special import gammaln  # on first use: tiecore loads scipy lazily

        more = gammaln(np.arange(have, max(top + 1, 2 * have)) + 1.0)
        table = _LOG_FACTORIALS = np.concatenate([table, more])
    return table


def _correction(x: np.ndarray) -> np.ndarray:
    """Stirling's ``log x! - (x + 1/2) log x + x - log(2 pi) / 2`` for ``x >= SMALL``."""
    inverse = 1.0 / x
    square = inverse * inverse
    total = np.zeros_like(x)
    for coefficient in reversed(_STIRLING):  # Horner in 1/x^2
        total = total * square + coefficient
    return total * inverse

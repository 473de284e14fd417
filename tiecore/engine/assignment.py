"""Exact mean, variance and range of a tie group's contribution over its orderings.

A tie group of ``n`` docs is put in a uniformly random order into its ``n`` positions
(``sigma``: position -> doc).  Two statistics of that order cover the measures whose
value per query is an average of several judgments' measures of *one* ordering
(``-R qrels_jg``: the judgment groups share the run's order):

linear (:func:`linear_spread`)
    ``S = sum_i A[sigma_i, i]`` with ``A[x, i] = sum_c U[x, c] V[i, c]``: P@k and
    ``Rprec_mult`` averaged over judgment groups (``U``: a doc's relevance to each
    group over the group's denominator, ``V``: whether position ``i`` is above the
    group's cut).  Hoeffding's combinatorial theorem: ``E S = sum_{x,i} A / n`` and
    ``Var S = sum_{x,i} d[x, i]**2 / (n - 1)`` with ``d`` the doubly centred ``A``,
    here ``sum_{c,c'} (U~' U~)[c, c'] (V~' V~)[c, c']`` (``~``: columns centred).
pairwise (:func:`pairwise_spread`)
    ``S = sum_i w_i (a[sigma_i] + sum_{j<i} B[sigma_i, sigma_j])`` with ``B``
    symmetric: AP averaged over judgment groups (``w_i = 1/rank``, ``B = U D U'``
    over the groups' relevance, ``D = 1 / (G R_g)``, ``a`` the relevant docs above
    the group plus one, weighted alike).  A product of two terms of ``sigma`` at
    positions with 2, 3 or 4 distinct positions has the mean of the doc tuples of
    that many distinct docs (the moments below), so ``E S**2`` sums those moments
    times the position weights of each pattern of coinciding positions.

The range is a dynamic programme over how many docs of each *type* (equal rows of
the inputs: interchangeable docs) are placed first (:func:`type_bounds`): the gain of
placing a doc depends only on that count vector and the doc's type.
"""

from __future__ import annotations

import numpy as np

#: Count vectors (states) :func:`type_bounds` visits at most.
MAX_STATES = 400_000


def linear_spread(u: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """Mean and variance of ``sum_i sum_c u[sigma_i, c] v[i, c]`` over uniform
    orderings (``u``, ``v``: ``(n, C)``; Hoeffding's formula, module docstring)."""
    n = len(u)
    mean = float((u.sum(axis=0) * v.sum(axis=0)).sum() / n) if n else 0.0
    if n < 2:
        return mean, 0.0
    uc = u - u.mean(axis=0)
    vc = v - v.mean(axis=0)
    return mean, max(float(((uc.T @ uc) * (vc.T @ vc)).sum() / (n - 1)), 0.0)


def _falling(n: int, k: int) -> float:
    out = 1.0
    for j in range(k):
        out *= n - j
    return out


def pairwise_spread(w: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean and variance of ``S = sum_i w_i (a[sigma_i] + sum_{j<i} b[sigma_i, sigma_j])``
    over uniform orderings (``b`` symmetric; its diagonal unused).

    With ``F_k = n (n-1) ... (n-k+1)``, ``s = sum a``, ``r`` the row sums of ``b`` off
    its diagonal, ``S_B = sum r``, ``Q = sum_{x != y} b**2``, ``P = sum r**2 - Q``:
    the distinct-tuple sums are ``sum a_x a_y = s**2 - sum a**2``, ``sum a_x b_xy =
    a . r``, ``sum a_x b_yz = s S_B - 2 a . r``, ``sum b_xy b_xz = P`` and ``sum b_xy
    b_zt = S_B**2 - 4 P - 2 Q``; the position weights of each pattern are sums of
    ``w`` (``T = sum i w_i``, ``H_i = sum_{j<i} w_j``, ``G_i = sum_{j<i} j w_j``).
    """
    n = len(w)
    if n < 2:
        mean = float(w.sum() * a.sum()) if n else 0.0
        return mean, 0.0
    w = w.astype(np.float64)
    i = np.arange(n, dtype=np.float64)
    off = b - np.diag(np.diag(b))
    r = off.sum(axis=1)
    s, q2 = float(a.sum()), float((a * a).sum())
    s_b, q_b = float(r.sum()), float((off * off).sum())
    p3 = float((r * r).sum()) - q_b
    d4 = s_b * s_b - 4 * p3 - 2 * q_b
    ar = float(a @ r)
    ab3 = s * s_b - 2 * ar
    f2, f3, f4 = _falling(n, 2), _falling(n, 3), _falling(n, 4)

    def per(total: float, count: float) -> float:
        return total / count if count else 0.0

    sw, sw2, t = float(w.sum()), float((w * w).sum()), float((i * w).sum())
    h = np.cumsum(w) - w  # sum_{j<i} w_j
    g = np.cumsum(i * w) - i * w  # sum_{j<i} j w_j
    tail = w.sum() - np.cumsum(w)  # sum_{i>j} w_i
    tail2 = (w * w).sum() - np.cumsum(w * w)
    mean = s / n * sw + per(s_b, f2) * t
    e_a2 = q2 / n * sw2 + per(s * s - q2, f2) * (sw * sw - sw2)
    near = float((i * w * w).sum() + (w * h).sum())  # i' = i or i' = j
    e_aq = per(ar, f2) * near + per(ab3, f3) * (sw * t - near)
    w2 = float((i * w * w).sum())  # i = k, j = l
    w3 = float((w * w * i * (i - 1)).sum() + 2 * (w * g).sum() + (tail * tail - tail2).sum())
    w4 = t * t - w2 - w3
    e_q2 = per(q_b, f2) * w2 + per(p3, f3) * w3 + per(d4, f4) * w4
    second = e_a2 + 2 * e_aq + e_q2
    return mean, max(second - mean * mean, 0.0)


def type_bounds(
    kinds: np.ndarray,
    linear: np.ndarray,
    w: np.ndarray | None = None,
    a: np.ndarray | None = None,
    b: np.ndarray | None = None,
) -> tuple[float, float]:
    """Min and max over orderings of ``sum_i linear[t_i, i]`` (plus, with ``w``, the
    pairwise statistic's ``w_i (a[t_i] + sum_{j<i} b[t_i, t_j])``), where ``t_i`` is
    the type of the doc at position ``i``, ``kinds`` the number of docs of each type
    (``linear``: ``(types, n)``; ``a``, ``b``: per type).

    A dynamic programme over count vectors: the gain of placing a doc of type ``t``
    after ``c`` (a count per type) is ``linear[t, |c|] + w_|c| (a_t + c . b[t])``.
    More than :data:`MAX_STATES` count vectors is a ValueError.
    """
    kinds = np.asarray(kinds, dtype=np.int64)
    types = len(kinds)
    radix = kinds + 1
    states = int(np.prod(radix.astype(np.float64)))
    if states > MAX_STATES and w is None:
        return _transport_bounds(kinds, linear)
    if states > MAX_STATES:
        raise ValueError(
            f"the range over orderings of a tie group of {int(kinds.sum())} docs of "
            f"{types} kinds needs {states:,} count vectors (more than {MAX_STATES:,})"
        )
    stride = np.cumprod(np.r_[1, radix[:-1]]).astype(np.int64)
    index = np.arange(states, dtype=np.int64)
    counts = (index[:, None] // stride[None, :]) % radix[None, :]  # (states, types)
    total = counts.sum(axis=1)
    low = np.full(states, np.inf)
    high = np.full(states, -np.inf)
    low[0] = high[0] = 0.0
    pair = counts @ b.T if b is not None else None  # (states, types): c . b[t]
    for k in range(int(kinds.sum())):  # one layer per position
        layer = np.flatnonzero(total == k)
        for t in range(types):  # a loop over types (equal docs) only
            room = layer[counts[layer, t] < kinds[t]]
            if not len(room):
                continue
            gain = np.full(len(room), linear[t, k], dtype=np.float64)
            if w is not None:
                gain = gain + w[k] * (a[t] + pair[room, t])
            nxt = room + stride[t]
            np.minimum.at(low, nxt, low[room] + gain)
            np.maximum.at(high, nxt, high[room] + gain)
    return float(low[-1]), float(high[-1])


def _transport_bounds(kinds: np.ndarray, linear: np.ndarray) -> tuple[float, float]:
    """:func:`type_bounds` of a linear statistic as a transportation problem: ``f[t, c]``
    docs of type ``t`` in the positions of class ``c`` (equal columns of ``linear``),
    its rows summing to the types' counts and its columns to the classes' sizes.  Its
    constraint matrix is totally unimodular, so the simplex optimum (HiGHS) is a whole
    flow; rounded, its objective is summed again exactly."""
    from scipy.optimize import linprog

    columns, size = np.unique(linear.T, axis=0, return_counts=True)  # (classes, types)
    gain = columns.T  # (types, classes)
    types, classes = gain.shape
    rows = np.zeros((types + classes, types * classes))
    for t in range(types):  # a loop over types and classes (few)
        rows[t, t * classes : (t + 1) * classes] = 1.0
    for c in range(classes):
        rows[types + c, c::classes] = 1.0
    bounds = np.r_[kinds, size].astype(np.float64)
    out = []
    for sign in (1.0, -1.0):
        found = linprog(sign * gain.ravel(), A_eq=rows, b_eq=bounds, method="highs")
        if found.status != 0:  # never met: the problem always has a solution
            raise ValueError(f"the range over orderings: {found.message}")
        flow = np.rint(found.x).reshape(types, classes)
        out.append(float((flow * gain).sum()))
    return out[0], out[1]

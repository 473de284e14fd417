"""One tie group's maximum precision for IPrec (:mod:`tiecore.measures.iprec`), counted.

The support points of ``M = max_{k >= k1} (before + k) / (offset + s_k + 1)``
over the placements ``s_1 < ... < s_r`` of a group's relevant docs, the
lower bounds ``L_k`` each point puts on them (:func:`_support_points`, which
also counts the cells the DP will visit, so that a caller can price it
before it runs), and the lattice-path DP that counts the placements meeting
the bounds (:func:`_fraction`), whose shares are ``P(M <= v)``
(:func:`_support`).  :mod:`tiecore.measures.iprec` holds the derivation.
"""

from __future__ import annotations

import bisect
import itertools

import numpy as np

#: Entries (support points x relevant docs) of the bounds worked out at once.
SUPPORT_CHUNK = 1 << 21


def _support(size: int, rel: int, before, offset, slots, unit, k1, floor=None):
    """``(pair, value, F(value))``: the distribution of ``M = max_{k >= k1} (before + k) /
    (offset + s_k + 1)`` (0 past ``slots``) over the ``C(size, rel)`` placements
    ``s_1 < ... < s_rel`` of the relevant docs of groups of ``size`` docs.

    ``before``, ``offset``, ``slots`` hold one entry per group (unit); ``unit``,
    ``k1`` and ``floor`` (default none) one per pair (a group at a level).  The
    candidate values ``a / b`` are ``(before + k) / (offset + p + 1)`` for ``k``
    at least the group's least ``k1`` and every position ``p`` the ``k``-th
    relevant doc can take within ``slots``, and 0.  ``M <= a / b`` exactly when
    every counted ``s_k`` reaches ``L_k = min(ceil((before + k) b / a) - offset -
    1, slots)`` (integers, so a ratio equal to ``a / b`` counts as at most it);
    :func:`_fraction` counts those placements, once per point for all of a
    group's levels.  A pair keeps its points of positive probability from its
    last at or below its ``floor`` (the part of the curve the group cannot
    change: below it the cell's ``F`` is 0) up to its first of probability 1,
    sorted.
    """
    return _support_cdf(_support_points(size, rel, before, offset, slots, unit, k1, floor))


class _Support:
    """What :func:`_support_points` found: the pairs' points, the rows the DP counts and
    their cells (per unit, :attr:`cells`), for :func:`_support_cdf`."""

    def __init__(self, **parts) -> None:
        self.__dict__.update(parts)

    def cells_from(self, pairs, least: int) -> float:
        """The DP cells of the rows that ``pairs`` (indices into this pass's pairs) count,
        from relevant doc ``least`` on: the cost of asking only for their levels."""
        mine = np.isin(self.pair, pairs) & self.middle
        rows = np.unique(self.index[self.point[mine]])
        return float(_row_cells(self.bound[rows], self.width, np.full(rows.size, least - 1)).sum())


def _row_cells(bound, width: int, start) -> np.ndarray:
    """Per row, the DP's cells from relevant doc ``start + 1`` on: ``sum_{k > start} (width
    + 1 - bound_k)^+`` (the DP's row for relevant doc ``k`` is live on that many
    diagonals), a few rows at a time."""
    out = np.zeros(bound.shape[0])
    step = max(1, SUPPORT_CHUNK // max(bound.shape[1], 1))
    k = np.arange(bound.shape[1])
    for lo in range(0, bound.shape[0], step):
        live = np.maximum(width + 1 - bound[lo : lo + step], 0)
        live[k[None, :] < start[lo : lo + step, None]] = 0
        out[lo : lo + step] = live.sum(axis=1)
    return out


def _bounds(k, before, offset, slots, a, b) -> np.ndarray:
    """``(points, rel)``: at a point ``a / b``, the least ``j_k = s_k - (k - 1)`` with ``(before
    + k) / (offset + s_k + 1) <= a / b``: ``ceil((before + k) b / a) - offset - 1`` (all of
    ``slots`` where ``a`` is 0), at most ``slots``, less ``k - 1``, at least 0; worked in
    place, one array."""
    bound = before[:, None] + k[None, :]
    bound *= b[:, None]  # (before + k) * b
    np.floor_divide(bound, -np.maximum(a, 1)[:, None], out=bound)  # -ceil(. / a)
    np.negative(bound, out=bound)
    bound -= offset[:, None] + 1
    zero = a == 0
    bound[zero] = slots[zero][:, None]
    np.minimum(bound, slots[:, None], out=bound)
    bound -= k[None, :] - 1
    return np.maximum(bound, 0, out=bound)


def _support_points(size: int, rel: int, before, offset, slots, unit, k1, floor=None):
    """The support points of :func:`_support` and the bounds its DP counts, with the DP's
    cells per unit: a row (point) runs ``sum_{k >= k*} (width + 1 - bound_k)^+`` cells
    (``k*`` the least ``k`` it records), the diagonals each relevant doc is live on."""
    width = size - rel  # j_k = s_k - (k - 1): nondecreasing in [0, width]
    units = before.size
    kmin = np.full(units, rel + 1)
    np.minimum.at(kmin, unit, k1)
    k = np.arange(1, rel + 1)
    p = k[:, None] - 1 + np.arange(width + 1)[None, :]  # (rel, width + 1)
    counted = (k[None, :, None] >= kmin[:, None, None]) & (p[None] < slots[:, None, None])
    owner, kk, jj = np.nonzero(counted)
    owner = np.r_[owner, np.arange(units)]  # and the value 0 (past the depth)
    a = np.r_[before[owner[: kk.size]] + kk + 1, np.zeros(units, np.int64)]
    b = np.r_[offset[owner[: kk.size]] + p[kk, jj] + 1, np.ones(units, np.int64)]
    value = a / b  # correctly rounded: equal ratios give equal floats
    order = np.lexsort((value, owner))
    owner, a, b, value = owner[order], a[order], b[order], value[order]
    keep = np.r_[True, (owner[1:] != owner[:-1]) | (value[1:] != value[:-1])]
    owner, a, b, value = owner[keep], a[keep], b[keep], value[keep]
    # (pair, point) rows: each pair takes its group's points
    starts = np.searchsorted(owner, np.arange(units))
    counts = np.diff(np.r_[starts, owner.size])[unit]
    pair = np.repeat(np.arange(unit.size), counts)
    point = np.arange(pair.size) - np.repeat(np.cumsum(counts) - counts, counts)
    point += starts[unit][pair]
    if floor is not None:  # a pair's points below its floor, but the last, change nothing
        below = value[point] <= floor[pair]
        last = ~np.r_[below[1:] & (pair[1:] == pair[:-1]), False]
        pair, point = pair[~below | last], point[~below | last]
    level = k1[pair] - 1
    # lower bounds of j_k at each point, (points, rel), in chunks of points: only the
    # counted points' rows are kept
    high = np.empty(pair.size, np.int64)
    by_point = np.argsort(point, kind="stable")
    step = max(1, SUPPORT_CHUNK // rel)
    edges = np.searchsorted(point[by_point], np.arange(0, owner.size + 1, step))
    kept = []
    counted = np.zeros(owner.size, bool)
    for chunk, (lo, hi) in enumerate(itertools.pairwise(np.r_[edges, by_point.size])):
        first = chunk * step
        last = min(first + step, owner.size)
        if first >= last:
            break
        at = slice(first, last)
        bound = _bounds(k, before[owner[at]], offset[owner[at]], slots[owner[at]], a[at], b[at])
        top = np.maximum.accumulate(bound[:, ::-1], axis=1)[:, ::-1]  # max over k' >= k
        entries = by_point[lo:hi]
        high[entries] = top[point[entries] - first, level[entries]]
        del top
        mine = entries[(high[entries] > 0) & (high[entries] <= width)]
        counted[point[mine]] = True
        kept.append(bound[counted[at]].astype(np.int32))  # at most slots
    middle = (high > 0) & (high <= width)
    rows = np.flatnonzero(counted)
    bound = np.concatenate(kept) if kept else np.zeros((0, rel), np.int32)
    index = np.full(owner.size, -1)
    index[rows] = np.arange(rows.size)
    wanted = np.zeros((rows.size, rel), bool)
    wanted[index[point[middle]], level[middle]] = True
    row_cells = _row_cells(bound, width, np.argmax(wanted, axis=1))
    cells = np.bincount(owner[rows], weights=row_cells, minlength=units)
    return _Support(
        width=width,
        pair=pair,
        point=point,
        level=level,
        high=high,
        middle=middle,
        index=index,
        bound=bound,
        wanted=wanted,
        value=value,
        cells=cells,
    )


def _support_cdf(support: _Support):
    """``(pair, value, F(value))`` of :func:`_support` from its points: the DP's shares at
    the counted rows, 0 or 1 elsewhere."""
    s = support
    share = _fraction(s.bound, s.width, s.wanted)
    cdf = np.where(s.high == 0, 1.0, 0.0)
    cdf[s.middle] = share[s.index[s.point[s.middle]], s.level[s.middle]]
    pair = s.pair
    new = np.r_[True, pair[1:] != pair[:-1]]
    keep = (cdf > 0) & (new | (cdf != np.r_[0.0, cdf[:-1]]))
    keep &= new | (np.r_[0.0, cdf[:-1]] < 1.0)
    return pair[keep], s.value[s.point[keep]], cdf[keep]


#: Floats in one block of the counting DP by steps (positions x rows; kept within a CPU cache).
BLOCK = 1 << 16
#: Floats in one block of the counting DP by diagonals (relevant docs x rows).
DIAGONAL_BLOCK = 1 << 17
#: Least relevant docs for which :func:`_fraction` runs by diagonals: fewer, and its
#: ``width + r`` Python-level diagonals cost more than the ``r`` steps' slower sums.
DIAGONAL_FROM = 6


def _fraction(
    bound: np.ndarray, width: int, wanted: np.ndarray | None = None, method: str | None = None
) -> np.ndarray:
    """``(rows, r)``: at ``[row, k - 1]``, the share of the nondecreasing ``j_1 <= ... <=
    j_r`` in ``[0, width]`` with ``j_m >= bound[row, m - 1]`` for every ``m >= k``
    (where ``wanted``, a boolean ``(rows, r)``, says so: all by default; 0 elsewhere).

    Lattice paths counted from ``m = r`` down: ``g_r(j) = [j >= bound_r]``,
    ``g_m(j) = [j >= bound_m] sum_{i >= j} g_{m+1}(i)``, and the count for ``k``
    is ``sum_j g_k(j) W_k(j)``, ``W_k(j) = C(j + k - 1, k - 1)`` the free choices
    of ``j_1 .. j_{k-1} <= j``: ``O(r * width)`` per row, vectorized over rows in
    blocks, by ``method`` ``"steps"`` (:func:`_fraction_steps`) or ``"diagonals"``
    (:func:`_fraction_diagonals`; the default from :data:`DIAGONAL_FROM` relevant
    docs): the same sums in the same order, so the same floats.  The share is the
    ratio to the count with no bounds, ``C(width + r, r)``, taken through the same
    steps, and both are divided by the same number whenever the unbounded count
    passes ``1e200``, so nothing overflows.

    >>> _fraction(np.array([[0, 1]]), 1).tolist()  # (0,1), (1,1) of (0,0), (0,1), (1,1)
    [[0.6666666666666666, 0.6666666666666666]]
    """
    rows, rel = bound.shape
    wanted = np.ones((rows, rel), bool) if wanted is None else wanted
    if method is None:
        method = "diagonals" if rel >= DIAGONAL_FROM else "steps"
    run = {"steps": _fraction_steps, "diagonals": _fraction_diagonals}[method]
    return run(bound, width, wanted, *_free_counts(rel, width))


def _free_counts(rel: int, width: int):
    """``(free, scales, totals)`` of :func:`_fraction`: ``free[k]`` the ``W_{k+1}`` over
    reversed positions ``i = width - j``, each scaled to at most 1; ``scales[k]`` the
    factor step ``k`` multiplies by (1 but past ``1e200``); ``totals[k]`` the unbounded
    count for ``k + 1`` through the same steps."""
    free = np.ones((rel, width + 1))
    for k in range(1, rel):
        free[k] = np.cumsum(free[k - 1])
        free[k] /= free[k, -1]
    free = np.ascontiguousarray(free[:, ::-1])
    scales = np.ones(rel)
    whole = np.ones(width + 1)
    totals = np.empty(rel)
    totals[rel - 1] = whole @ free[rel - 1]
    for k in range(rel - 2, -1, -1):  # the count with no bounds, and where to rescale
        np.cumsum(whole, out=whole)
        if whole[-1] > 1e200:
            scales[k] = 1.0 / whole[-1]
            whole *= scales[k]
        totals[k] = whole @ free[k]
    return free, scales, totals


def _fraction_steps(bound, width, wanted, free, scales, totals) -> np.ndarray:
    """:func:`_fraction` one relevant doc at a time: ``g`` kept as ``(positions, rows)``,
    reversed, so the suffix sums are cumulative sums down the first axis, and only down
    to the block's largest ``width - bound`` (below, every entry is 0)."""
    rows, rel = bound.shape
    i = np.arange(width + 1)[:, None]
    cut = np.ascontiguousarray((width - bound).T)  # j >= bound  <=>  i = width - j <= cut
    out = np.zeros((rows, rel))
    step = max(1, BLOCK // (width + 1))
    for start in range(0, rows, step):  # blocks of rows
        bounds = cut[:, start : start + step]
        record = wanted[start : start + step].any(axis=0)
        least = int(np.argmax(record))
        g = np.zeros((width + 1, bounds.shape[1]))
        live = 0  # g is 0 from position `live` on: the band left by the bounds
        for k in range(rel - 1, least - 1, -1):  # relevant docs, last to first
            reach = max(0, min(int(bounds[k].max()), width) + 1)
            if k == rel - 1:
                g[:reach] = i[:reach] <= bounds[k]
            else:
                np.cumsum(g[:reach], axis=0, out=g[:reach])
                np.multiply(g[:reach], i[:reach] <= bounds[k], out=g[:reach])
            g[reach:live] = 0.0
            live = reach
            if scales[k] != 1.0:
                g[:live] *= scales[k]
            if record[k]:
                weighted = g[:live] * free[k][:live, None]
                out[start : start + step, k] = weighted.sum(axis=0) / totals[k]
    return out


def _fraction_diagonals(bound, width, wanted, free, scales, totals) -> np.ndarray:
    """:func:`_fraction` by anti-diagonals: with ``D = r - 1 - k`` and ``i = width - j``,
    cell ``(D, i)`` needs ``(D - 1, i)`` and ``(D, i - 1)`` only, so each diagonal
    ``d = D + i`` is one vectorized step over all relevant docs and rows (numpy's
    cumulative sum, which the steps lean on, is several times slower than an add).

    ``S[D + 1]`` holds row ``D``'s running sum ``sum_{i' <= i} g``, ``S[0] = 1``; on
    diagonal ``d`` row ``D`` adds ``g = [i <= width - bound] S[D]`` (the old ``S[D]``:
    ``S`` is read from one buffer and written to the other, in turn).
    Step ``D`` of a support point (a column of the block) is live up to diagonal
    ``last = D + width - bound``; where every column is live, ``S[D + 1] += S[D]``
    with no mask.  Support points come sorted by value from :func:`_support`, so
    ``last`` rises along the block and a step's live columns are a suffix, added as
    a slice (else through a mask).  The recorded steps' weighted sums run in the
    steps' order, so the floats are theirs.
    """
    rows, rel = bound.shape
    span = np.arange(rel)
    last = (width - np.minimum(bound[:, ::-1], width + 1) + span).T  # (D, rows)
    scale_d, free_d = scales[::-1].copy(), free[::-1]
    out = np.zeros((rows, rel))
    step = max(1, DIAGONAL_BLOCK // rel)
    diagonals = np.arange(width + rel)
    for start in range(0, rows, step):  # blocks of rows
        record = wanted[start : start + step].any(axis=0)[::-1]  # by D
        depth = rel - int(np.argmax(record[::-1]))  # steps D < depth
        c = np.ascontiguousarray(last[:depth, start : start + step])
        cols = c.shape[1]
        end = width + depth
        high, low = c.max(axis=1), c.min(axis=1)
        # rows below first_of[d] are done, rows from full_of[d] on live in every column
        first_of = np.searchsorted(np.maximum.accumulate(high), diagonals[:end]).tolist()
        full_of = np.searchsorted(np.minimum.accumulate(low[::-1])[::-1], diagonals[:end])
        full_of = full_of.tolist()
        ordered = bool(np.all(c[:, 1:] >= c[:, :-1]))
        scaled = bool(np.any(scale_d[:depth] != 1.0))
        # ordered: on diagonal d, row D is live from column live[D][d] on
        live = [np.searchsorted(c[D], diagonals[:end]).tolist() for D in range(depth)]
        rec = np.flatnonzero(record[:depth])
        recs = rec.tolist()
        # S read (R) and written (W) in turn; rows below `done` hold their sums in both
        buffers = np.zeros((2, depth + 1, cols))
        buffers[:, 0] = 1.0
        acc = np.zeros((rec.size, cols))
        held = np.empty((rec.size, cols))
        # weight[r, d]: W of recorded row rec[r] at position d - rec[r] (0 off the grid)
        weight = np.zeros((rec.size, end + 1))
        for r, D in enumerate(recs):
            weight[r, D : D + width + 1] = free_d[D]
        done = turn = 0
        for d in range(end):
            lo, hi = first_of[d], min(d, depth - 1) + 1
            if lo >= hi:
                continue
            R, W = buffers[turn], buffers[1 - turn]
            turn = 1 - turn
            if lo > done:  # rows done .. lo - 1 are over: their sums, last written to R
                W[done + 1 : lo + 1] = R[done + 1 : lo + 1]
                done = lo
            p = min(max(full_of[d], lo), hi)  # rows lo .. p - 1 live in part
            r0, r1 = bisect.bisect_left(recs, lo), bisect.bisect_left(recs, hi)
            if r1 > r0:  # the recorded rows' g
                g = np.take(R, rec[r0:r1], axis=0, out=held[: r1 - r0], mode="clip")
                for r in range(r0, bisect.bisect_left(recs, p, r0, r1)):  # rows live in part
                    if ordered:
                        g[r - r0, : live[recs[r]][d]] = 0.0
                    else:
                        g[r - r0] *= c[recs[r]] >= d
                if scaled:
                    g *= scale_d[rec[r0:r1], None]
                g *= weight[r0:r1, d, None]
                np.add(acc[r0:r1], g, out=acc[r0:r1])
            if hi > p and scaled:
                np.multiply(R[p:hi], scale_d[p:hi, None], out=W[p + 1 : hi + 1])
                np.add(W[p + 1 : hi + 1], R[p + 1 : hi + 1], out=W[p + 1 : hi + 1])
            elif hi > p:
                np.add(R[p + 1 : hi + 1], R[p:hi], out=W[p + 1 : hi + 1])
            for D in range(lo, p):  # every row lo .. hi - 1 written whole
                if ordered:
                    q = live[D][d]
                    W[D + 1, :q] = R[D + 1, :q]
                    if q < cols and scaled:
                        np.multiply(R[D, q:], scale_d[D], out=W[D + 1, q:])
                        W[D + 1, q:] += R[D + 1, q:]
                    elif q < cols:
                        np.add(R[D + 1, q:], R[D, q:], out=W[D + 1, q:])
                else:
                    g = R[D] * (c[D] >= d)
                    if scaled:
                        g *= scale_d[D]
                    np.add(R[D + 1], g, out=W[D + 1])
        k = rel - 1 - rec
        out[start : start + step, k] = (acc / totals[k][:, None]).T
    return out

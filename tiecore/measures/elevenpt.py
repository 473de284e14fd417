"""IPrecAvg, trec_eval's ``11pt_avg``: interpolated precision averaged over recall levels.

trec_eval (``m_11pt_avg.c``) averages the interpolated precision
(:mod:`tiecore.measures.iprec`, its recall levels rounded as IPrec's ``round``: ``up``,
9.0.x's ``+ 0.9``, or ``nearest``, trec_eval 10.0's) at the recall levels given
(``11pt_avg..25,.5,.75``; by default the eleven levels 0.0, 0.1, ..., 1.0):

    11pt_avg = sum_c IPrec(c) / (number of levels)

summed from the highest level down, as trec_eval adds them.  tiecore's name is
``IPrecAvg(levels=0.25;0.5;0.75)``.

Under ties its mean over the orderings is the mean of the levels' exact tie-aware
IPrec values (linearity: aware mode gives it), and its variance

    Var(11pt_avg) = (1 / L^2) sum_{c, c'} Cov(IPrec(c), IPrec(c'))

needs the covariances of the levels' maxima (:func:`iprec_avg_spread`).  Levels
with one count ``k`` share one maximum (their covariance is its variance, from
:mod:`tiecore.measures.iprec`).  For ``k(c) < k(c')``, ``X = IPrec(c) >= Y =
IPrec(c')`` and

    E[X Y] = sum_{i, j} D_i D_j P(X > p_i, Y > p_j)

over the query's support points ``p`` (``D_i = p_{i+1} - p_i``): ``1 - F_Y(p_j)``
where ``j >= i``, else ``1 - F_X(p_i) - F_Y(p_j) + G(p_i, p_j)``, ``G`` the joint
CDF.  The tie groups are independent and each counts its relevant docs from one
ordinal on, so every group enters ``G`` through its own maxima's CDFs but the one
mixed group ``g`` holding ordinal ``k(c')`` and one before it: ``G(u, v) = F_U(u)
F_Z(v) H(u, v)``, ``Z`` the maximum over the ordinals from ``k(c')`` (both levels
count them) outside ``g``, ``U`` over those in ``[k(c), k(c'))`` outside ``g``, and
``H`` the joint CDF of ``g``'s two maxima: the placements whose ``k``-th relevant
position reaches the bound of ``u`` for ``k < k(c')`` and of ``v`` from ``k(c')``
(IPrec's lattice paths, :mod:`tiecore.measures.iprec`), ``x_u . h_v`` with ``x_u``
the forward counting sweep to ``k(c') - 1`` and ``h_v`` the backward one down to
``k(c')``.  Both vectors change only where one of ``g``'s bounds does, so the
points fall in runs: within a run ``H(u, v) = F_g(u)``; across runs the weighted
``h`` of the earlier runs is carried as one vector, so ``E[X Y]`` costs two sweeps
of ``g`` per run, not one per pair of points (vectorised over the pairs of levels,
queries and groups of one shape; refused past :data:`tiecore.measures.iprec.BUDGET`
steps, as IPrec is).  The bounds are the pessimistic and optimistic orders, which
bound every level at once (each ``m / rank_m`` falls as ``rank_m`` grows).

>>> from tiecore.measures import Measure
>>> str(Measure.parse("IPrecAvg(levels=0.25;0.5;.75)"))
'IPrecAvg(levels=0.25;0.5;0.75)'
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tiecore.engine.budget import check_cost, step_budget
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.iprec import (
    BUDGET,
    RECALL_LEVELS,
    ROUND,
    _expected_max,
    _parts,
    iprec_oblivious,
    relevant_counts,
)
from tiecore.measures.iprec import _moments as iprec_moments
from tiecore.measures.orderings import sample_orders
from tiecore.measures.registry import Doc, Family, Param, Words, describe, each, register

#: Floats in one block of the covariances' arrays (points x pairs, runs x positions).
BLOCK = 1 << 21
#: A counting sweep's step is divided by its largest unbounded entry once that passes this.
RESCALE = 1e100


class LevelsParam(Param):
    """A list of recall levels from 0 to 1, separated by ``;``."""

    def canonical(self, value: str) -> str:
        try:
            levels = [float(part) for part in value.split(";") if part.strip()]
        except ValueError:
            raise ValueError("must be recall levels separated by ';', as 0.25;0.5") from None
        if not levels or not all(0.0 <= level <= 1.0 for level in levels):
            raise ValueError("must be recall levels from 0 to 1, separated by ';'")
        return ";".join(map(repr, levels))


def levels_of(measure) -> tuple[float, ...]:
    """The measure's recall levels."""
    return tuple(float(part) for part in measure.param("levels").split(";"))


def iprec_avg_oblivious(
    ranking: Ranking, judgments: Judgments, levels, depth: int | None, rounding: str = "up"
) -> np.ndarray:
    """Per query the mean interpolated precision over ``levels``, summed from the last."""
    curve = iprec_oblivious(ranking, judgments, levels, depth=depth, rounding=rounding)
    total = np.zeros(curve.shape[0])
    for column in range(curve.shape[1] - 1, -1, -1):  # a handful of levels
        total += curve[:, column]
    return total / len(levels)


def iprec_avg_spread(
    ranking: Ranking,
    judgments: Judgments,
    levels,
    *,
    depth: int | None = None,
    budget: float | None = None,
    rounding: str = "up",
    within: str | None = None,
) -> dict[str, np.ndarray]:
    """Per query the exact ``value``, ``var``, ``min`` and ``max`` of the mean interpolated
    precision over ``levels`` across all orderings of the ties (see the module docstring;
    ``within``: the measure's name, which a refusal names).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "c"], "level": 1})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [1.0, 1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> out = iprec_avg_spread(Ranking.build(run, j), j, (0.0, 1.0))
    >>> [round(float(out[k][0]), 6) for k in ("value", "var", "min", "max")]
    [0.833333, 0.018519, 0.666667, 1.0]
    """
    budget = step_budget(BUDGET, budget)
    first = relevant_counts(judgments, levels, rounding)
    nq, nl = first.shape
    within = within or "IPrecAvg"
    constant, events = _parts(ranking, judgments, first, depth, budget, levels, rounding, within)
    if events is None:
        mean, square = constant, constant**2
    else:
        mean, square = (m.reshape(nq, nl) for m in _expected_max(constant.ravel(), *events))
    variance = np.maximum(square - mean**2, 0.0)
    same = first[:, :, None] == first[:, None, :]  # one level's maximum, counted twice
    total = (same * variance[:, :, None]).sum(axis=(1, 2))
    if events is not None:
        own = np.argmax(same, axis=2) == np.arange(nl)  # the first level of each count
        touched = np.zeros(nq * nl, bool)
        touched[events[0]] = True
        moving = (own & touched.reshape(nq, nl))[:, :, None]
        q, a, b = np.nonzero(
            (first[:, :, None] < first[:, None, :]) & moving & moving.swapaxes(1, 2)
        )
        if q.size:
            product = _cross_moments(
                ranking, judgments, first, constant, events, q, a, b, depth, (budget, within)
            )
            many = same.sum(axis=2)
            cov = product - mean[q, a] * mean[q, b]
            total += np.bincount(q, weights=2.0 * many[q, a] * many[q, b] * cov, minlength=nq)
    low, high = (
        iprec_avg_oblivious(ranking.retie(policy), judgments, levels, depth, rounding)
        for policy in ("pessimistic", "optimistic")
    )
    return {
        "value": mean[:, ::-1].sum(axis=1) / nl,
        "var": np.maximum(total, 0.0) / nl**2,
        "min": low,
        "max": high,
    }


def _cdf_at(constant, events, at_cell, at_value) -> np.ndarray:
    """``F_cell(value)``, the distribution function of a cell's maximum (``constant`` and
    every mixed group's, ``events`` as :func:`tiecore.measures.iprec._group_distributions`
    gives them), at each ``(at_cell, at_value)``.

    Events and asked points sorted together by cell, value (events first at equal
    values: ``F`` is right-continuous); ``F`` is the product of the factors, kept as a
    sum of logs and a count of the factors lifted from 0, as ``_expected_max`` keeps it.
    """
    cells, values, cdf, previous = events
    touched = np.unique(at_cell)
    cells = np.r_[cells, touched]
    values = np.r_[values, constant[touched]]
    lift = np.r_[previous, np.zeros(touched.size)] == 0
    cdf = np.r_[cdf, np.ones(touched.size)]
    previous = np.where(lift, 1.0, np.r_[previous, np.ones(touched.size)])
    step = np.log(cdf) - np.log(previous)
    ne, na = cells.size, at_cell.size
    cell = np.r_[cells, at_cell]
    kind = np.r_[np.zeros(ne, np.int8), np.ones(na, np.int8)]
    order = np.lexsort((kind, np.r_[values, at_value], cell))
    cell, kind = cell[order], kind[order]
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    segment = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, cell.size]))
    logs = np.cumsum(np.r_[step, np.zeros(na)][order])
    logs -= np.r_[0.0, logs][starts][segment]
    lifted = np.cumsum(np.r_[lift, np.zeros(na, bool)][order])
    lifted -= np.r_[0, lifted][starts][segment]
    factors = lifted[np.r_[starts[1:], cell.size] - 1][segment]  # every factor of the cell
    value = np.where(lifted == factors, np.exp(np.minimum(logs, 0.0)), 0.0)
    out = np.empty(na)
    asked = kind == 1
    out[order[asked] - ne] = value[asked]
    return out


def _least_positions(number, offset, slots, value) -> np.ndarray:
    """The least position ``s`` (0-based, in ``[0, slots]``) of a group's relevant doc of
    ordinal ``number`` whose precision ``number / (offset + s + 1)`` is at most ``value``
    (``slots``, past the depth, when none is).

    The ratios are compared as correctly rounded floats, as the support points are
    (equal ratios give equal floats, and ratios of ranks this small never round to
    one float), so the float guess is corrected by whole steps to the exact one.
    """
    positive = value > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        guess = np.ceil(number / np.where(positive, value, 1.0) - offset - 1)
    s = np.where(positive, np.clip(guess, 0, slots), slots).astype(np.int64)
    with np.errstate(divide="ignore"):
        for _ in range(2):
            s = np.where((s > 0) & (number / (offset + s) <= value), s - 1, s)
        for _ in range(2):
            s = np.where((s < slots) & ~(number / (offset + s + 1) <= value), s + 1, s)
    return s


def _free_sweeps(rel: int, width: int):
    """``(forward, backward, scale_f, scale_b, norm)``: the counting sweeps of a group of
    ``rel`` relevant docs with no bounds, a step divided by its largest entry where that
    passes :data:`RESCALE` (1 elsewhere: no division; the bounded sweeps take the same
    scales), and ``norm[k]``, the unbounded count split at relevant doc ``k``
    (``forward[k - 1] . backward[k]``) in those scales, so nothing overflows."""
    forward = np.ones((rel + 1, width + 1))
    scale_f = np.ones(rel + 1)
    for m in range(1, rel):
        row = np.cumsum(forward[m - 1])
        scale_f[m] = row[-1] if row[-1] > RESCALE else 1.0
        forward[m] = row / scale_f[m]
    backward = np.ones((rel + 1, width + 1))
    scale_b = np.ones(rel + 1)
    for m in range(rel - 1, 0, -1):
        row = np.cumsum(backward[m + 1][::-1])[::-1]
        scale_b[m] = row[0] if row[0] > RESCALE else 1.0
        backward[m] = row / scale_b[m]
    norm = np.ones(rel + 1)
    norm[2:] = np.einsum("kj,kj->k", forward[1:rel], backward[2:])
    return forward, backward, scale_f, scale_b, norm


def _sweep_forward(bounds, width: int, record, scale) -> np.ndarray:
    """Rows ``x = 1^T D_1 S ... D_m S`` (``D_m`` keeps ``j_m >= bounds[:, m - 1]``, ``S``
    the suffix sums), taken after step ``m = record``, in the free sweep's scales.

    Kept as ``(positions, rows)``, so the sums run down the first axis (numpy adds whole
    rows there, several times faster than along the last), each row only up to its own
    step (rows sorted by it, so the live ones are a prefix).
    """
    order = np.argsort(-record, kind="stable")
    bounds, record = np.ascontiguousarray(bounds[order].T), record[order]
    j = np.arange(width + 1)[:, None]
    x = np.ones((width + 1, record.size))
    out = np.empty_like(x)
    for m in range(1, int(record.max(initial=0)) + 1):  # relevant docs
        live = int(np.count_nonzero(record >= m))
        y = x[:, :live]
        y *= j >= bounds[m - 1, :live]
        np.cumsum(y, axis=0, out=y)
        if scale[m] != 1.0:
            y /= scale[m]
        done = int(np.count_nonzero(record > m))
        out[:, done:live] = y[:, done:]
    result = np.empty((record.size, width + 1))
    result[order] = out.T
    return result


def _sweep_backward(bounds, width: int, record, scale) -> np.ndarray:
    """Rows ``g_m = D_m S g_{m + 1}`` from ``g_r = D_r 1``, taken at ``m = record``: as
    :func:`_sweep_forward`, each row down to its own step, the positions reversed
    (``i = width - j``) so the suffix sums are cumulative sums."""
    order = np.argsort(record, kind="stable")
    bounds, record = bounds[order], record[order]
    rel = bounds.shape[1]
    cut = np.ascontiguousarray((width - bounds).T)  # j >= bound  <=>  i <= cut
    i = np.arange(width + 1)[:, None]
    g = (i <= cut[rel - 1]).astype(np.float64)
    out = np.empty_like(g)
    done = int(np.count_nonzero(record < rel))
    out[:, done:] = g[:, done:]
    for m in range(rel - 1, int(record.min(initial=rel)) - 1, -1):  # relevant docs
        live = int(np.count_nonzero(record <= m))
        y = g[:, :live]
        np.cumsum(y, axis=0, out=y)  # the suffix sums over j
        if scale[m] != 1.0:
            y /= scale[m]
        y *= i <= cut[m - 1, :live]
        done = int(np.count_nonzero(record < m))
        out[:, done:live] = y[:, done:]
    result = np.empty((record.size, width + 1))
    result[order] = out[::-1].T
    return result


def _joint_groups(ranking: Ranking, q, kb, slots):
    """Per pair the mixed tie group holding relevant ordinal ``kb`` and one before it
    (-1: none), the only group whose maxima at both levels differ and depend."""
    n, r, before = ranking.size, ranking.rel_count, ranking.rel_before
    mixed = (r > 0) & (r < n) & (slots > 0)
    holding = np.flatnonzero(r > 0)
    big = int((before + r).max(initial=0)) + 2
    key = ranking.group_query[holding].astype(np.int64) * big + before[holding] + r[holding]
    order = np.argsort(key, kind="stable")
    key, holding = key[order], holding[order]
    at = np.searchsorted(key, q.astype(np.int64) * big + kb)
    at = np.minimum(at, max(holding.size - 1, 0))
    if not holding.size:
        return np.full(q.size, -1)
    g = holding[at]
    ok = (ranking.group_query[g] == q) & (before[g] + 1 < kb) & (before[g] + r[g] >= kb)
    return np.where(ok & mixed[g], g, -1)


def _cross_moments(ranking, judgments, first, constant, events, q, a, b, depth, refusal):
    """``E[X_a X_b]`` per pair ``(q, a, b)`` of levels with ``k(a) < k(b)``, so ``X_a >= X_b``.

    With the query's support points ``0 = p_0 < ... < p_N`` (both levels', all groups')
    and ``D_i = p_{i+1} - p_i``,

        E[X_a X_b] = sum_{i, j} D_i D_j P(X_a > p_i, X_b > p_j),

    which is ``1 - F_b(p_j)`` for ``j >= i`` and ``1 - F_a(p_i) - F_b(p_j) + G(p_i, p_j)``
    for ``j < i``, ``G`` the joint distribution function.  Every group but one enters
    ``G`` through its own maxima's CDFs: ``G(u, v) = F_U(u) F_Z(v) H(u, v)``, ``Z`` the
    maximum of the part both levels count, ``U`` of the part only ``a`` counts, ``H``
    the joint CDF of the one mixed group holding ordinal ``k(b)`` and one before it
    (:func:`_joint_groups`; ``H = 1`` when none): ``F_U F_Z = F_a F_b`` over the
    group's own ``F^a``, ``F^b``.  ``H(u, v)`` counts the placements whose relevant
    positions reach the bounds of ``u`` before ordinal ``k(b)`` and of ``v`` from it:
    ``x_u . h_v`` over the unbounded count, ``x_u`` the forward counting sweep up to
    ``k(b) - 1``, ``h_v`` the backward one down to ``k(b)``.  Both change only where a
    bound does, so the points fall in runs of one ``(x, h)``; within a run ``H(u, v) =
    F^a(u)``, across runs ``sum_{j < i} D_j F_Z(p_j) h_j`` is carried as one vector.
    """
    nq, nl = first.shape
    cells, values = events[0], events[1]
    pairs = q.size
    t, n = ranking.offset, ranking.size
    slots = n if depth is None else np.clip(depth - t, 0, n)
    # the queries' support points, and every level's F there
    wanted = np.zeros(nq, bool)
    wanted[q] = True
    asked = np.flatnonzero(wanted)
    pick = wanted[cells // nl]
    point_q = np.r_[cells[pick] // nl, np.repeat(asked, nl), asked]
    point_v = np.r_[values[pick], constant[asked].ravel(), np.zeros(asked.size)]
    order = np.lexsort((point_v, point_q))
    point_q, point_v = point_q[order], point_v[order]
    keep = np.r_[True, (point_q[1:] != point_q[:-1]) | (point_v[1:] != point_v[:-1])]
    point_q, point_v = point_q[keep], point_v[keep]
    start = np.searchsorted(point_q, np.arange(nq))
    count = np.diff(np.r_[start, point_q.size])
    at_cell = (point_q[None, :] * nl + np.arange(nl)[:, None]).ravel()
    cdf = _cdf_at(constant.ravel(), events, at_cell, np.tile(point_v, nl)).reshape(nl, -1)
    nxt = np.r_[point_v[1:], 0.0]
    last = np.r_[point_q[1:] != point_q[:-1], True]
    nxt = np.where(last, point_v, nxt)
    delta = nxt - point_v
    top = point_v[start[point_q] + count[point_q] - 1]
    # the pairs' joint groups
    kb = first[q, b]
    joint = _joint_groups(ranking, q, kb, slots)
    before = ranking.rel_before
    k1a = np.where(joint >= 0, np.maximum(first[q, a] - before[joint], 1), 0)
    k1b = np.where(joint >= 0, kb - before[joint], 0)
    pairing = _Pairs(q, a, b, joint, k1a, k1b, slots)
    points = _Points(start, count, point_v, nxt, delta, top, cdf)
    out = np.zeros(pairs)
    runs = []  # (pair, value, sum of D F_b, sum of gamma) of each run of the joint pairs
    rel_of = np.where(joint >= 0, ranking.rel_count[joint], 0)
    by_size = np.argsort(-count[q], kind="stable")  # the largest first in each block
    done = 0
    while done < pairs:  # blocks of pairs, padded to their most points
        width = int(count[q[by_size[done]]])
        step = max(1, BLOCK // max(width * max(int(rel_of.max(initial=1)), 1), 1))
        chosen = by_size[done : done + step]
        done += chosen.size
        out[chosen], found = _one_dimension(ranking, pairing, points, chosen)
        runs.append(found)
    found = _Runs(*(np.concatenate(c) for c in zip(*runs, strict=True)))
    if found.pair.size:
        order = np.argsort(found.pair, kind="stable")  # by pair, each pair's runs in order
        runs = _Runs(*(c[order] for c in found))
        out += _across_runs(ranking, judgments, pairing, runs, *refusal)
    return out


class _Pairs(NamedTuple):
    """Pairs of levels ``(q, a, b)`` with their joint groups (-1: none), those groups'
    first counted relevant doc for ``a`` and ``b`` (``k1a``, ``k1b``), and every group's
    slots within the depth."""

    q: np.ndarray
    a: np.ndarray
    b: np.ndarray
    joint: np.ndarray
    k1a: np.ndarray
    k1b: np.ndarray
    slots: np.ndarray


class _Points(NamedTuple):
    """The queries' support points: per query ``start`` and ``count``; per point its
    ``value``, the next one (itself last), ``delta`` between them, the query's ``top``
    point and ``cdf[level, point]``."""

    start: np.ndarray
    count: np.ndarray
    value: np.ndarray
    nxt: np.ndarray
    delta: np.ndarray
    top: np.ndarray
    cdf: np.ndarray


class _Runs(NamedTuple):
    """Runs of a joint pair's points with one pair of counting vectors: the ``pair``, the
    first point's ``value``, the sum of ``D_j F_b(p_j)`` and of ``gamma_i`` over the run."""

    pair: np.ndarray
    value: np.ndarray
    weight: np.ndarray
    gamma: np.ndarray


def _one_dimension(ranking: Ranking, pairing: _Pairs, points: _Points, chosen: np.ndarray):
    """``E[X_a X_b]`` of the chosen pairs less the part across a joint group's runs
    (``gamma_i = D_i F_a(p_i) / F_b(p_i)``), and those runs (:class:`_Runs`)."""
    q, a, b, joint, k1a, _, slots = pairing
    start, count, point_v, nxt, delta, top, cdf = points
    cnt = count[q[chosen]]
    width = int(cnt.max())
    col = np.arange(width)
    valid = col < cnt[:, None]
    idx = start[q[chosen]][:, None] + np.minimum(col, cnt[:, None] - 1)
    p, d, pn = point_v[idx], np.where(valid, delta[idx], 0.0), nxt[idx]
    fa, fb = cdf[a[chosen][:, None], idx], cdf[b[chosen][:, None], idx]
    hi = top[idx]
    total = (d * ((1.0 - fb) * pn + (1.0 - fa) * p - fb * (hi - pn))).sum(axis=1)
    gamma = d * np.where(fb > 0, fa / np.where(fb > 0, fb, 1.0), 0.0)
    breaks = np.zeros(idx.shape, bool)
    breaks[:, 0] = True
    inner = np.flatnonzero(joint[chosen] >= 0)
    if inner.size:
        seen = _points_passed(ranking, joint[chosen[inner]], k1a[chosen[inner]], slots, p[inner])
        breaks[inner, 1:] = seen[:, 1:] != seen[:, :-1]
    breaks &= valid
    x = d * fb
    cs = np.cumsum(x, axis=1)
    begin = np.maximum.accumulate(np.where(breaks, col, 0), axis=1)
    before = cs - x
    total += (gamma * (before - np.take_along_axis(before, begin, axis=1))).sum(axis=1)
    row, at = np.nonzero(breaks[inner])
    if not row.size:
        empty = np.zeros(0)
        return total, (np.zeros(0, np.int64), empty, empty, empty)
    pair = inner[row]
    same = np.r_[row[1:] == row[:-1], False]
    end = np.where(same, np.r_[at[1:], 0], cnt[pair])
    cg = np.cumsum(gamma, axis=1)

    def run_sum(c):
        upper = c[pair, end - 1]
        lower = np.where(at > 0, c[pair, np.maximum(at - 1, 0)], 0.0)
        return upper - lower

    return total, (chosen[pair], p[pair, at], run_sum(cs), run_sum(cg))


def _points_passed(ranking: Ranking, g, k1a, slots, p) -> np.ndarray:
    """``(pairs, points)``: how many of group ``g``'s ratios ``(R + m) / (t + s + 1)`` are
    at most each point ``p`` (rows sorted), for ``m`` from ``k1a`` and the positions
    ``s`` the ``m``-th relevant doc can take within the slots.  Between two points with
    one count every bound ``j_m >= L_m`` of the counting sweeps is the same (a bound
    moves only as a point passes such a ratio), so they share ``x`` and ``h``.
    """
    n, r = ranking.size[g], ranking.rel_count[g]
    width = n - r
    # (pair, m) rows, then (pair, m, s) candidates: s from m - 1 to m - 1 + width, < slots
    many_m = np.maximum(r - k1a + 1, 0)
    pair_m = np.repeat(np.arange(g.size), many_m)
    m = k1a[pair_m] + np.arange(pair_m.size) - np.repeat(np.cumsum(many_m) - many_m, many_m)
    last = np.minimum(m - 1 + width[pair_m], slots[g][pair_m] - 1)
    many_s = np.maximum(last - (m - 1) + 1, 0)
    pair = np.repeat(pair_m, many_s)
    s = np.repeat(m - 1, many_s) + np.arange(pair.size)
    s -= np.repeat(np.cumsum(many_s) - many_s, many_s)
    mm = np.repeat(m, many_s)
    ratio = (ranking.rel_before[g][pair] + mm) / (ranking.offset[g][pair] + s + 1)
    rows, cols = p.shape
    owner = np.r_[pair, np.repeat(np.arange(rows), cols)]
    kind = np.r_[np.zeros(pair.size, np.int8), np.ones(rows * cols, np.int8)]
    order = np.lexsort((kind, np.r_[ratio, p.ravel()], owner))
    passed = np.cumsum(kind[order] == 0)
    passed -= np.r_[0, passed][np.searchsorted(owner[order], np.arange(rows))][owner[order]]
    out = np.empty(pair.size + rows * cols, np.int64)
    out[order] = passed
    return out[pair.size :].reshape(rows, cols)


def _across_runs(
    ranking: Ranking, judgments: Judgments, pairing: _Pairs, runs: _Runs, budget, within
):
    """``sum_i gamma_i F^b(run_i) (x_i . C_i) / (x_i . h_i)`` per joint pair, ``C_i`` the
    carried ``sum_j D_j F_Z(p_j) h_j`` of the earlier runs (see :func:`_cross_moments`):
    one pass per joint-group shape ``(n, r)``, blocks of pairs padded to their most runs."""
    joint = pairing.joint
    pairs = joint.size
    out = np.zeros(pairs)
    first_run = np.searchsorted(runs.pair, np.arange(pairs))
    runs_of = np.diff(np.r_[first_run, runs.pair.size])
    n, r = ranking.size, ranking.rel_count
    # refuse before any work: per run, r steps (forward to k1b - 1, backward down to
    # k1b) over n - r + 1 positions
    cells = np.zeros(n.size)
    has = np.flatnonzero(runs_of > 0)
    g = joint[has]
    np.add.at(cells, g, 1.0 * runs_of[has] * r[g] * (n[g] - r[g] + 1))
    check_cost(
        cells, budget, run=ranking.name, what=f"{within} variance",
        instead=f"ties='aware' without the spread (its exact value), 'oblivious' or "
        f"'sampled' for {within} on this run",
        group=lambda w: f"query {judgments.qids[ranking.group_query[w]]} has a tie group "
        f"of {n[w]} docs with {r[w]} relevant",
    )  # fmt: skip
    shapes, shape_of = np.unique(np.stack([n[g], r[g]], axis=1), axis=0, return_inverse=True)
    for s, (size, rel) in enumerate(shapes):  # one pass per distinct (n, r) shape
        size, rel = int(size), int(rel)
        width = size - rel
        free = _free_sweeps(rel, width)
        chosen = has[shape_of.ravel() == s]
        chosen = chosen[np.argsort(-runs_of[chosen], kind="stable")]  # the most first
        done = 0
        while done < chosen.size:  # blocks of pairs
            most = int(runs_of[chosen[done]])
            step = max(1, BLOCK // max(most * (width + 1) * max(rel // 4, 1), 1))
            block = chosen[done : done + step]
            done += block.size
            most = int(runs_of[block].max())
            window = max(1, BLOCK // max(block.size * (width + 1) * max(rel // 4, 1), 1))
            carry = np.zeros((block.size, width + 1))
            for lo in range(0, most, window):  # runs in windows, the sums carried
                hi = min(most, lo + window)
                at = first_run[block][:, None] + np.minimum(
                    lo + np.arange(hi - lo), runs_of[block][:, None] - 1
                )
                live = lo + np.arange(hi - lo) < runs_of[block][:, None]
                window_runs = _Runs(
                    block,
                    runs.value[at],
                    np.where(live, runs.weight[at], 0.0),
                    np.where(live, runs.gamma[at], 0.0),
                )
                out[block] += _run_window(ranking, pairing, window_runs, free, carry)
    return out


def _run_window(ranking: Ranking, pairing: _Pairs, runs: _Runs, free, carry) -> np.ndarray:
    """The part of :func:`_across_runs` of a window of runs, ``(pairs, runs)`` arrays of a
    block of pairs of one group shape (``runs.pair`` the block; ``carry`` the vectors
    carried in, updated)."""
    forward, _, scale_f, scale_b, norm = free
    block, value, weight, gamma = runs
    _, _, _, joint, k1a, k1b, slots = pairing
    g = joint[block]
    rel, width = forward.shape[0] - 1, forward.shape[1] - 1
    m = np.arange(1, rel + 1)
    place = _least_positions(
        ranking.rel_before[g][:, None, None] + m,
        ranking.offset[g][:, None, None],
        slots[g][:, None, None],
        value[:, :, None],
    )
    bound = np.maximum(np.minimum(place, slots[g][:, None, None]) - (m - 1), 0)
    ka, kb = k1a[block][:, None, None], k1b[block][:, None, None]
    rows = bound.shape[0] * bound.shape[1]
    repeat = np.repeat(kb[:, 0, 0], bound.shape[1])
    h = _sweep_backward(
        np.where(m >= kb, bound, 0).reshape(rows, rel), width, repeat, scale_b
    ).reshape(*bound.shape[:2], width + 1)
    x = _sweep_forward(
        np.where((m >= ka) & (m < kb), bound, 0).reshape(rows, rel), width, repeat - 1, scale_f
    ).reshape(*bound.shape[:2], width + 1)
    kbs = k1b[block]
    f_b = np.einsum("pw,prw->pr", forward[kbs - 1], h) / norm[kbs][:, None]
    share = np.where(f_b > 0, weight / np.where(f_b > 0, f_b, 1.0), 0.0)
    hb = h * share[:, :, None]
    carried = carry[:, None, :] + np.cumsum(hb, axis=1) - hb
    across = np.einsum("prw,prw->pr", x, carried)
    within = np.einsum("prw,prw->pr", x, h)
    ratio = np.where(within > 0, across / np.where(within > 0, within, 1.0), 0.0)
    carry += hb.sum(axis=1)
    return (gamma * f_b * ratio).sum(axis=1)


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query mean interpolated precision of the ranking's own order, or (aware) the
    mean of the levels' exact tie-aware IPrec values."""
    levels, rounding = levels_of(measure), measure.param("round")
    if profile.mode == "aware":
        mean, _ = iprec_moments(
            ranking, judgments, levels, depth=depth, rounding=rounding, within=str(measure)
        )
        return mean[:, ::-1].sum(axis=1) / len(levels)
    return iprec_avg_oblivious(ranking, judgments, levels, depth, rounding)


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Per-query ``value, var, min, max``, exact (:func:`iprec_avg_spread`; refused past
    :data:`tiecore.measures.iprec.BUDGET`)."""
    return iprec_avg_spread(
        ranking,
        judgments,
        levels_of(measure),
        depth=depth,
        rounding=measure.param("round"),
        within=str(measure),
    )


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` under random tie-breaks."""
    levels, rounding = levels_of(measure), measure.param("round")
    return sample_orders(
        lambda order: iprec_avg_oblivious(order, judgments, levels, depth, rounding),
        ranking,
        judgments,
        samples=samples,
        rng=rng,
        depth=depth,
    )


register(
    Family(
        "IPrecAvg",
        "trec_eval's 11pt_avg: the mean of iprec_at_recall over recall levels (default the "
        "eleven 0.0, 0.1, ..., 1.0)",
        ("11pt_avg",),
        "none",
        params={
            "levels": LevelsParam(
                ";".join(map(repr, RECALL_LEVELS)),
                description="the recall levels averaged, separated by ';' (trec_eval's "
                "11pt_avg..25,.5,.75 is levels=0.25;0.5;0.75)",
            ),
            "round": ROUND,
        },
        component=None,
        values=each(family_values),
        spread=each(family_spread),
        sample=each(family_sample),
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "IPrecAvg",
    words=Words(
        whole=(
            "interpolated precision averaged over recall levels",
            "the interpolated precision (the highest precision at any rank where recall reaches "
            "the level) averaged over the recall levels 0, 0.1, …, 1 by default (trec_eval's "
            "11pt_avg)",
        ),
    ),
    docs=(
        Doc(
            "`IPrecAvg`, `IPrecAvg(levels=0.25;0.5;0.75)`",
            "`11pt_avg`, `11pt_avg..25,.5,.75`",
            "the mean of trec_eval's interpolated precision (`IPrec`, +0.9 rounding) over the "
            "recall levels (default 0, 0.1, …, 1; given in increasing order), trec_eval's "
            "11pt_avg; its aware value is the mean of the levels' exact IPrec values; its exact "
            "variance sums the covariances of the levels' interpolated precisions (below) and its "
            "min and max are the pessimistic and optimistic orders",
            "trec_eval 9.0.8",
        ),
    ),
)

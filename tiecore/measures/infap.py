"""trec_eval's infAP (inferred AP, Yilmaz & Aslam, CIKM 2006), exact under ties.

trec_eval 9.0.x (``m_infAP.c``, with ``form_res_rels.c``) sorts every retrieved
doc (within ``-M``) into one of four kinds:

* ``R`` judged relevant: a qrels level ``>= rel_level`` (and ``>= 0``);
* ``N`` judged non-relevant: ``0 <= level < rel_level``;
* ``U`` pooled but unjudged: any negative qrels level (``-1`` by convention);
* ``O`` not in the pool: absent from the qrels.

A relevant doc at rank ``k`` with ``r`` relevant, ``m`` non-relevant and ``u``
pooled-unjudged docs above it scores

    T = 1/k + ((k-1)/k) * ((r + m + u)/(k-1)) * (r + eps)/(r + m + 2 eps)
      = (1 + (r + m + u) (r + eps)/(r + m + 2 eps)) / k,      eps = 1e-5

(``T = 1`` at rank 1): the precision among the judged docs above, smoothed,
stands for the pooled docs above and the docs outside the pool count as
non-relevant.  ``infAP = sum T / num_rel`` with ``num_rel`` the qrels docs of
level ``>= max(rel_level, 0)``; 0 when ``num_rel`` is 0.  trec_eval has no cut
variant.  The oblivious value repeats trec_eval's arithmetic operation by
operation (its sum in rank order), so it equals pytrec_eval's bit for bit.

Tie-aware.  A doc's term depends on the counts of the kinds above it; those of
the groups above its own group are fixed (``rA, nA, uA`` above the group, ``t``
docs in all), so the terms of a group depend on its own order alone: the
groups are independent and ``Var = sum_g Var S_g`` (no covariance across
groups).  In a group of ``n`` docs (``R, N, U, O`` of each kind, ``d`` slots
above the cut, ``J = R + N`` judged and ``M = U + O`` others) a uniform order
is three independent ones: which slots hold judged docs, which judged docs
are relevant, which others are pooled.  The judged doc number ``i`` (0-based)
of the group at slot ``p = i + x``, when relevant, scores ``T = (1 + X Y) / k``
with ``k = t + p + 1``, ``X = P + i + c`` (``P = rA + nA + uA``) and ``Y = (rA +
eps + a) / (rA + nA + i + 2 eps)``: ``a`` relevant among the ``i`` judged docs
above and ``c`` pooled among the ``x`` others above are independent
hypergeometric counts, ``X`` is linear in ``c`` and ``Y`` in ``a``, so

    E[S_g] = R/J sum_{p<d} sum_i pi(i, x) q(i, x) (1 + E[X] E[Y]) / k,

with ``pi(i, x)`` the chance that the ``p`` slots above hold ``i`` judged docs
and ``q = (J - i) / (n - p)`` that slot ``p`` holds the next; ``E[T^2]`` takes
the first and second moments of ``a`` and ``c`` likewise.  ``E[S_g^2]`` adds
the pairs of judged docs ``i < j`` (both relevant with chance ``R (R-1) / (J
(J-1))``): ``E[T_i T_j] = (1 + E X_i E Y_i + E X_j E Y_j + E[X_i X_j] E[Y_i
Y_j]) / (k_i k_j)``, each factor a sum of products ``u(i, x_i) v(j, x_j)`` (six
in all).  One forward pass over the slots keeps per cell ``(i, x = p - i)``
the chance ``pi`` and ``G_k``, the sum of ``u_k`` over the judged docs
passed, times their chance; cell ``(i, x)`` moves to ``(i+1, x)`` with chance
``q``, to ``(i, x+1)`` with ``1 - q``, and the doc at slot ``p`` adds ``q
sum_k G_k v_k``.  That is ``O(d min(J, d))`` cells a group, plus numpy's
fixed cost per slot (a group needing more than ``budget`` steps is refused,
InputError, pointing to ``ties='sampled'``).

Bounds.  A rank change of a doc of kind ``O`` only moves the relevant docs it
passes (each term falls with ``k``), so the maximum puts a group's ``O`` docs
last and the minimum first.  Swapping a relevant doc with an ``N`` or ``U`` doc
next to it changes only that relevant doc's term, and a ``U`` doc above can
raise it (it adds ``Y`` to the numerator while ``k`` grows by 1: a gain when
``Y`` times the docs outside the pool above exceeds about 1), so no fixed order
is the extreme: a dynamic program over the counts ``(b, c)`` of ``N`` and ``U``
docs above the ``i``-th relevant doc of the group (a monotone path) gives the
exact maximum and minimum, ``O(R (N+1) (U+1))`` per group (refused past
``budget`` too).
"""

from __future__ import annotations

import itertools

import numpy as np

from tiecore.engine import budget as budgets
from tiecore.engine.budget import check_cost
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.err import _ragged
from tiecore.measures.registry import Doc, Family, Words, describe, each, register

#: trec_eval's ``INFAP_EPSILON``.
EPSILON = 0.00001
#: Kinds of docs (:func:`doc_kinds`).
OTHER, UNJUDGED, NONREL, REL = 0, 1, 2, 3
#: Most steps one group may need (the variance's slots times cells, the bounds' cells).
BUDGET = 2e7
#: Seconds per step of :func:`_chain_cost`, for the mean and for the variance
#: (measured 0.5e-8 to 1.0e-8, and 2.1e-8 to 3.0e-8, on one core).
STEP_SECONDS, VARIANCE_STEP_SECONDS = 1.2e-8, 4e-8
#: Cells of the bounds' program at once (memory); the variance's pass takes a 16th.
_CHUNK = 2_000_000
#: A slot of the variance's pass costs about as much as this many cells besides its
#: own (its numpy calls: 0.2 ms), so a long group with few judged docs still counts.
_SLOT = 1000


def doc_kinds(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    """Each row's kind: 0 not in the qrels, 1 pooled but unjudged (negative level),
    2 judged non-relevant, 3 relevant (trec_eval's ``form_res_rels``).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abc"), "level": [2, 0, -1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abcd"), "score": [4.0, 3, 2, 1]})
    >>> j = Judgments.from_qrels(qrels)
    >>> doc_kinds(Ranking.build(run, j), j).tolist()
    [3, 2, 1, 0]
    """
    judged, level = ranking.judged, ranking.level
    kinds = np.where(judged, UNJUDGED, OTHER).astype(np.int8)
    kinds[judged & (level >= 0)] = NONREL
    kinds[judged & (level >= 0) & (level >= judgments.rel_level)] = REL
    return kinds


def num_relevant(judgments: Judgments) -> np.ndarray:
    """trec_eval's ``num_rel``: qrels docs of level ``>= max(rel_level, 0)``, per query."""
    levels = judgments.levels
    rel = (levels >= 0) & (levels >= judgments.rel_level)
    counts = np.bincount(judgments.query_of_key, weights=rel, minlength=len(judgments.qids))
    return counts.astype(np.int64)


def _terms(kinds: np.ndarray) -> np.ndarray:
    """Each relevant slot's term, 0 elsewhere, along the last axis (ranks 1, 2, ...),
    with trec_eval's operations in its order."""
    above = {}
    for kind in (REL, NONREL, UNJUDGED):
        hits = (kinds == kind).astype(np.int64)
        above[kind] = np.cumsum(hits, axis=-1) - hits
    r, m, u = above[REL], above[NONREL], above[UNJUDGED]
    fj = np.broadcast_to(np.arange(kinds.shape[-1], dtype=np.float64), kinds.shape)
    safe = np.where(fj > 0, fj, 1.0)
    smoothed = (r + EPSILON) / ((r + m) + 2 * EPSILON)
    term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + m + u) / safe) * smoothed
    return np.where(kinds == REL, np.where(fj > 0, term, 1.0), 0.0)


def _divide(total: np.ndarray, num_rel: np.ndarray) -> np.ndarray:
    out = np.array(total, dtype=np.float64)
    np.divide(out, num_rel, out=out, where=num_rel > 0)
    return out


def infap_oblivious(
    ranking: Ranking, judgments: Judgments, *, depth: int | None = None
) -> np.ndarray:
    """Per-query infAP of the ranking's own order, as trec_eval 9.0.x computes it.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": list("abc"), "level": [1, -1, 1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abdc"), "score": [4.0, 3, 2, 1]})
    >>> j = Judgments.from_qrels(qrels)
    >>> # rank 1: 1; rank 4 (1 rel, 1 pooled, 1 unpooled above): (1 + 2 (1+e)/(1+2e)) / 4
    >>> round(float(infap_oblivious(Ranking.build(run, j), j)[0]), 12)
    0.87499750005
    """
    kinds = doc_kinds(ranking, judgments)
    head = ranking.head(kinds, ranking.cut(depth), OTHER).astype(np.int8)
    if head.shape[1] == 0:
        return np.zeros(len(ranking.counts))
    total = np.cumsum(_terms(head), axis=1)[:, -1]  # in rank order, as trec_eval adds
    return _divide(total, num_relevant(judgments))


# ------------------------------------------------------------------ per-group facts


class _Groups:
    """The tie groups with a relevant doc above the cut, and the counts they need."""

    def __init__(self, ranking: Ranking, judgments: Judgments, depth: int | None):
        kinds = doc_kinds(ranking, judgments)
        cut = ranking.cut(depth)
        gq = ranking.group_query
        starts = ranking.group_start
        count = {}
        before = {}
        for kind in (REL, NONREL, UNJUDGED, OTHER):
            hits = (kinds == kind).astype(np.int64)
            count[kind] = np.add.reduceat(hits, starts) if hits.size else hits
            running = np.cumsum(hits) - hits
            before[kind] = running[starts] - running[ranking.starts[gq]] if hits.size else hits
        slots = np.clip(cut[gq] - ranking.offset, 0, ranking.size)
        live = np.flatnonzero((count[REL] > 0) & (slots > 0)) if kinds.size else slots[:0]
        self.live, self.query = live, gq[live]
        self.t = ranking.offset[live].astype(np.int64)
        self.n = ranking.size[live].astype(np.int64)
        self.d = slots[live].astype(np.int64)
        self.R, self.N = count[REL][live], count[NONREL][live]
        self.U, self.O = count[UNJUDGED][live], count[OTHER][live]
        self.rA, self.nA, self.uA = before[REL][live], before[NONREL][live], before[UNJUDGED][live]
        self.num_rel = num_relevant(judgments)
        self.queries = len(judgments.qids)
        self.name, self.qids, self.sizes = ranking.name, judgments.qids, ranking.size

    def total(self, per_group: np.ndarray) -> np.ndarray:
        return np.bincount(self.query, weights=per_group, minlength=self.queries)

    def refuse(self, cost: np.ndarray, what: str, budget: float) -> None:
        check_cost(
            cost, budget, run=self.name, what=f"infAP {what}",
            instead="ties='sampled' for infAP on this run (or a smaller depth)",
            group=lambda w: f"query {self.qids[self.query[w]]} has a tie group of {self.n[w]} "
            f"docs ({self.R[w]} relevant, {self.N[w]} judged non-relevant, {self.U[w]} pooled "
            "unjudged)",
        )  # fmt: skip


def _chunks(cost: np.ndarray, size: float = _CHUNK):
    """Index arrays of consecutive groups of about ``size`` total cost."""
    if not cost.size:
        return
    part = np.cumsum(cost) // max(size, 1.0)
    edges = np.flatnonzero(np.r_[True, part[1:] != part[:-1], True])
    for begin, end in itertools.pairwise(edges):
        yield np.arange(begin, end)


def _ratio(top, bottom):
    """``top / bottom``, 0 where ``bottom <= 0`` (a count with nothing to draw from)."""
    top = np.asarray(top, dtype=np.float64)
    return np.divide(top, bottom, out=np.zeros(top.shape), where=np.asarray(bottom) > 0)


def _chain(groups: _Groups, at: np.ndarray, second: bool) -> tuple[np.ndarray, np.ndarray]:
    """``E[S_g]`` and (``second``) ``E[S_g^2]`` of every group of ``at``, by one forward
    pass over the slots ``p < d`` (module docstring).

    A cell is a group and the judged count ``i`` above the slot (``x = p - i``
    others above it).  Per cell the pass keeps ``pi``, the chance that the
    slots above ``p`` hold ``i`` judged docs, and the six ``G_k``: the sum of
    ``u_k`` over the judged docs above, times the chance of each.  Groups go
    longest first, so the groups still running at slot ``p`` are a prefix of
    the cells.
    """
    n, d, R, N, U = groups.n[at], groups.d[at], groups.R[at], groups.N[at], groups.U[at]
    judged, others = R + N, U + groups.O[at]
    rA, nA, uA, t = groups.rA[at], groups.nA[at], groups.uA[at], groups.t[at]
    order = np.argsort(-d, kind="stable")
    width = (np.minimum(judged, d - 1) + 1)[order]  # judged counts 0..min(J, d - 1)
    owner, i = _ragged(width)
    g = order[owner]  # each cell's group (in ``at``)
    inner = (i < width[owner] - 1).astype(np.float64)  # the top cell passes nothing on
    fi = i.astype(np.float64)
    # per cell, what does not change along the pass
    cn, cj, cm, ct = n[g] * 1.0, judged[g] * 1.0, others[g] * 1.0, t[g] + 1.0
    theta, kappa_c = _ratio(U, others)[g], _ratio(U * (U - 1.0), others * (others - 1.0))[g]
    Pi = (rA + nA + uA)[g] + fi  # X but c: the docs above the group in the pool, i judged
    alpha, D = rA[g] + EPSILON, (rA + nA)[g] + fi + 2 * EPSILON
    # one relevant doc: the others of the J - 1 judged hold R - 1 relevant
    rho1 = _ratio(R - 1.0, judged - 1.0)[g]
    kappa1 = _ratio((R - 1.0) * (R - 2.0), (judged - 1.0) * (judged - 2.0))[g]
    ey = (alpha + fi * rho1) / D
    ey2 = (alpha * alpha + (2.0 * alpha + 1.0) * fi * rho1 + fi * (fi - 1.0) * kappa1) / D**2
    share = _ratio(R, judged)
    # two relevant docs, judged docs i < j: the other J - 2 hold R - 2 relevant
    rho = _ratio(R - 2.0, judged - 2.0)[g]
    kappa_a = _ratio((R - 2.0) * (R - 3.0), (judged - 2.0) * (judged - 3.0))[g]
    both = _ratio(R * (R - 1.0), judged * (judged - 1.0))
    ey_first = (alpha + fi * rho) / D
    ey_second = (alpha + 1.0 + np.maximum(fi - 1.0, 0.0) * rho) / D
    by_y = np.stack([1.0 / D, fi / D])  # the first doc's side of E[Y_i Y_j] D_i D_j: 1, i
    y_parts = (
        np.stack(
            [
                alpha * (alpha + 1.0) + alpha * rho * np.maximum(fi - 1.0, 0.0),
                (alpha + 2.0) * rho + kappa_a * np.maximum(fi - 2.0, 0.0),
            ]
        )
        / D
    )
    x_plus = theta * Pi + theta - kappa_c  # the second doc's side of E[X_i X_j]: x_i (P_i ex)
    u_fixed = by_y * Pi
    judged_left, others_left = cj - fi, cm + fi  # J - i; M - x + p
    alive = np.searchsorted(-d[order], -np.arange(int(d.max(initial=0))), side="left")
    ends = np.r_[np.cumsum(width) - width, owner.size][alive]  # cells of the groups with d > p
    pi = np.where(i == 0, 1.0, 0.0)
    G = np.zeros((6, owner.size))
    mean, square, pairs = np.zeros(owner.size), np.zeros(owner.size), np.zeros(owner.size)
    for p, end in enumerate(ends.tolist()):
        c = slice(0, end)
        x = p - fi[c]
        left = cn[c] - p
        q = judged_left[c] / left  # slot p holds judged doc i
        stay = (others_left[c] - p) / left  # slot p holds one of the others
        k = 1.0 / (ct[c] + p)
        w = pi[c] * q * k
        xt = x * theta[c]
        ex = Pi[c] + xt
        exy = ex * ey[c]
        mean[c] += w * (1.0 + exy)
        if second:
            ex2 = Pi[c] * (ex + xt) + xt + x * (x - 1.0) * kappa_c[c]
            square[c] += w * k * (1.0 + 2.0 * exy + ex2 * ey2[c])
            # doc j here after docs i above: sum_k G_k v_k, E[X_i X_j] = P_i ex_j + x_i xs_j
            Gc = G[:, c]
            by_x = Gc[2:4] * ex + Gc[4:6] * (x_plus[c] + x * kappa_c[c])
            later = Gc[0] * (1.0 + ex * ey_second[c]) + Gc[1]
            later += by_x[0] * y_parts[0, c] + by_x[1] * y_parts[1, c]
            pairs[c] += q * k * later
            # doc i here, for the docs j below: G_k + u_k w, u = 1, E X_i E Y_i, P_i or x_i
            # times 1 / D_i or i / D_i
            wi = w * inner[c]
            moved = Gc * (q * inner[c])
            moved[0] += wi
            moved[1] += wi * ex * ey_first[c]
            moved[2:4] += wi * u_fixed[:, c]
            moved[4:6] += (wi * x) * by_y[:, c]
            Gc *= stay
            G[:, 1:end] += moved[:, :-1]
        step = pi[c] * q * inner[c]
        pi[c] *= stay
        pi[1:end] += step[:-1]
    first = share * np.bincount(g, mean, at.size)
    total = share * np.bincount(g, square, at.size) + 2.0 * both * np.bincount(g, pairs, at.size)
    return first, total


def _chain_cost(groups: _Groups) -> np.ndarray:
    """:func:`_chain`'s steps per group: its slots times its cells plus :data:`_SLOT`."""
    return groups.d * (np.minimum(groups.R + groups.N, groups.d - 1) + 1.0 + _SLOT)


def _check_time(groups: _Groups, step: float) -> None:
    """Refuse (InputError) a pass whose :func:`_chain_cost` steps, at ``step`` seconds
    each, pass the time budget (:mod:`tiecore.engine.budget`), with the largest depth that fits."""
    if not groups.live.size:
        return
    t, n = groups.t, groups.n
    full = np.clip(groups.d + t, 0, None)  # the cut of each group's query

    def price(depth: int) -> tuple[float, float]:
        d = np.clip(np.minimum(full, depth) - t, 0, n)
        cells = np.minimum(groups.R + groups.N, np.maximum(d - 1, 0)) + 1.0
        return float((d * (cells + _SLOT)).sum()) * step, 0.0

    deepest = int(full.max())
    seconds, _ = price(deepest)
    if seconds <= budgets.time_budget():
        return
    worst = int(np.argmax(n))
    fits = budgets.largest(price, deepest)
    budgets.check(
        f"run {groups.name}",
        f"query {groups.qids[groups.query[worst]]} has a tie group of {n[worst]} docs "
        f"({groups.R[worst]} relevant, {groups.N[worst]} judged non-relevant): infAP's "
        f"exact {'variance' if step > STEP_SECONDS else 'mean'} over its orderings",
        seconds,
        0.0,
        f"a depth of at most {fits}, or ties='sampled' for infAP on this run"
        if fits
        else "ties='sampled' for infAP on this run",
    )


def _group_moments(groups: _Groups, *, second: bool, budget: float = BUDGET):
    """``E[S_g]`` (and ``E[S_g^2]`` when ``second``) of every live group."""
    if not groups.live.size:
        return np.zeros(0), np.zeros(0)
    if second:
        groups.refuse(_chain_cost(groups), "variance", budget)
    _check_time(groups, VARIANCE_STEP_SECONDS if second else STEP_SECONDS)
    mean, square = np.zeros(groups.live.size), np.zeros(groups.live.size)
    order = np.argsort(-groups.d, kind="stable")  # similar lengths together
    cells = np.minimum(groups.R + groups.N, groups.d - 1) + 1.0
    for part in _chunks(cells[order], _CHUNK / 16):  # about 20 rows of floats a cell
        at = order[part]
        mean[at], square[at] = _chain(groups, at, second)
    return mean, square


def infap_aware(ranking: Ranking, judgments: Judgments, *, depth: int | None = None) -> np.ndarray:
    """Per-query infAP averaged exactly over all orderings of every tie group.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [1, -1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [1.0, 1, 1]})
    >>> j = Judgments.from_qrels(qrels)
    >>> # a at rank 1: 1; rank 2 below b or c: (1 + 1/2)/2 or 1/2; rank 3: (1 + 1/2)/3
    >>> round(float(infap_aware(Ranking.build(run, j), j)[0]), 12)  # (1 + 0.625 + 0.5) / 3
    0.708333333333
    """
    groups = _Groups(ranking, judgments, depth)
    mean, _ = _group_moments(groups, second=False)
    return _divide(groups.total(mean), groups.num_rel)


def infap_variance(
    ranking: Ranking, judgments: Judgments, *, depth: int | None = None, budget: float = BUDGET
) -> np.ndarray:
    """Per-query exact variance of infAP over all orderings: ``sum_g Var S_g / num_rel^2``.

    InputError when a group needs more than ``budget`` steps (:func:`_chain_cost`).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": [1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("ab"), "score": [1.0, 1]})
    >>> j = Judgments.from_qrels(qrels)
    >>> float(infap_variance(Ranking.build(run, j), j)[0])  # 1 or 1/2
    0.0625
    """
    groups = _Groups(ranking, judgments, depth)
    mean, square = _group_moments(groups, second=True, budget=budget)
    variance = np.maximum(square - mean**2, 0.0)
    fixed = (groups.n == 1) | (groups.R == groups.n)  # one order: exactly 0, not a rounding
    variance[fixed] = 0.0
    return _divide(groups.total(variance), groups.num_rel.astype(np.float64) ** 2)


def _extreme_group_sums(groups: _Groups, best: bool, budget: float) -> np.ndarray:
    """Max (``best``) or min of every live group's sum of terms: a program over the
    counts ``(b, c)`` of judged non-relevant and pooled-unjudged docs above the
    ``i``-th relevant doc, ``V_i(b, c) = T_i(b, c) + max_{b' <= b, c' <= c} V_{i-1}``;
    the docs outside the pool go last (max) or first (min)."""
    cells = (groups.N + 1.0) * (groups.U + 1.0)
    groups.refuse(cells * groups.R, "minimum and maximum", budget)
    out = np.zeros(groups.live.size)
    # chunks of like shapes (N + 1, U + 1 and R within a factor 2), padded to their largest
    shape = np.log2(np.stack([groups.N + 1.0, groups.U + 1.0, groups.R])).astype(np.int64)
    _, bucket = np.unique(shape, axis=1, return_inverse=True)
    order = np.lexsort((groups.R, cells, bucket.ravel()))
    cost = cells[order] * groups.R[order]
    edges = np.flatnonzero(np.r_[True, np.diff(bucket.ravel()[order]) != 0, True])
    for begin, end in itertools.pairwise(edges):
        for part in _chunks(cost[begin:end]):
            at = order[begin + part]
            out[at] = _extreme_chunk(groups, at, best)
    return out


def _extreme_chunk(groups: _Groups, at: np.ndarray, best: bool) -> np.ndarray:
    N, U, R = groups.N[at], groups.U[at], groups.R[at]
    b = np.arange(int(N.max()) + 1)[None, :, None]
    c = np.arange(int(U.max()) + 1)[None, None, :]
    col = (slice(None), None, None)
    valid = (b <= N[col]) & (c <= U[col])
    other = np.where(best, 0, groups.O[at])[col]
    rA, nA, uA = groups.rA[at][col], groups.nA[at][col], groups.uA[at][col]
    t, d = groups.t[at][col], groups.d[at][col]
    pick = np.maximum if best else np.minimum
    worst = -np.inf if best else np.inf
    value = np.zeros(valid.shape)
    for i in range(int(R.max())):  # the i-th relevant doc of each group
        p = i + b + c + other
        r, m = rA + i, nA + b
        term = (1.0 + (r + m + uA + c) * (r + EPSILON) / (r + m + 2 * EPSILON)) / (t + p + 1.0)
        term = np.where(p < d, term, 0.0)
        if i:
            value = pick.accumulate(pick.accumulate(value, axis=1), axis=2)
        step = np.where(valid, value + term, worst)
        value = np.where((i < R)[col], step, value)
    flat = value.reshape(len(at), -1)
    return flat.max(axis=1) if best else flat.min(axis=1)


def infap_bounds(
    ranking: Ranking, judgments: Judgments, *, depth: int | None = None, budget: float = BUDGET
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query min and max of infAP over all orderings (exact; see the module docstring).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [1, -1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [1.0, 1, 1]})
    >>> j = Judgments.from_qrels(qrels)
    >>> [round(float(v[0]), 12) for v in infap_bounds(Ranking.build(run, j), j)]
    [0.5, 1.0]
    """
    groups = _Groups(ranking, judgments, depth)
    low = groups.total(_extreme_group_sums(groups, False, budget))
    high = groups.total(_extreme_group_sums(groups, True, budget))
    return _divide(low, groups.num_rel), _divide(high, groups.num_rel)


def _above(hits: np.ndarray, ranking: Ranking) -> np.ndarray:
    """Per row, how many rows above it in its query have ``hits``."""
    running = np.cumsum(hits) - hits
    return running - running[ranking.starts[ranking.query]] if hits.size else running


def _term(r, m, u, k):
    """A relevant doc's term from the counts above it and its rank (any order of sums)."""
    return (1.0 + (r + m + u) * (r + EPSILON) / ((r + m) + 2 * EPSILON)) / k


def infap_sample(
    ranking: Ranking,
    judgments: Judgments,
    *,
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
) -> np.ndarray:
    """infAP under ``samples`` random tie-breaks: ``(samples, queries)``.

    The orders are :mod:`tiecore.engine.sampling`'s keyed draws.  Only the relevant
    docs of the drawn groups change terms (the counts above every other doc
    are the same in each order): the rest is summed once.
    """
    from tiecore.engine.sampling import Sampler  # lazy: sampling (~7 ms) only when sampled

    kinds = doc_kinds(ranking, judgments)
    cut = ranking.cut(depth)
    nq = len(ranking.counts)
    num_rel = num_relevant(judgments)
    sampler = Sampler(ranking, judgments, int(cut.max(initial=0)))
    counts = {
        kind: _above((kinds == kind).astype(np.int64), ranking) for kind in (REL, NONREL, UNJUDGED)
    }
    keep = (kinds == REL) & (ranking.rank <= cut[ranking.query])
    keep[sampler.cleared] = False
    rows = np.flatnonzero(keep)
    fixed = np.bincount(
        ranking.query[rows],
        _term(counts[REL][rows], counts[NONREL][rows], counts[UNJUDGED][rows], ranking.rank[rows]),
        nq,
    )
    out = np.broadcast_to(fixed.astype(np.float64), (samples, nq)).copy()
    columns = sampler.rows.size
    if columns:
        start = ranking.group_start[ranking.group[sampler.rows]]  # the group's counts above
        r0, m0, u0 = (counts[kind][start] for kind in (REL, NONREL, UNJUDGED))
        compact = sampler.group_of_column
        first = np.flatnonzero(np.r_[True, compact[1:] != compact[:-1]])
        lead = np.repeat(first, np.diff(np.r_[first, columns]))  # each column's group start
        query = ranking.query[sampler.rows]
        query_start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
        for begin, size, doc, slot in sampler.draws(samples, rng):
            kind = kinds[doc]
            inside = {}
            for code in (REL, NONREL, UNJUDGED):
                hits = (kind == code).astype(np.int64)
                running = np.cumsum(hits, axis=1) - hits
                inside[code] = running - running[:, lead]
            rank = ranking.rank[slot]
            term = _term(r0 + inside[REL], m0 + inside[NONREL], u0 + inside[UNJUDGED], rank)
            term = np.where((kind == REL) & (rank <= cut[query]), term, 0.0)
            out[begin : begin + size, query[query_start]] += np.add.reduceat(
                term, query_start, axis=1
            )
    return _divide(out, num_rel)


# ------------------------------------------------- the family's hooks and registration


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query infAP in the profile's mode (``oblivious`` or ``aware``)."""
    function = infap_aware if profile.mode == "aware" else infap_oblivious
    return function(ranking, judgments, depth=depth)


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Per-query ``value, var, min, max`` of infAP (all exact; InputError past the budget)."""
    variance = infap_variance(ranking, judgments, depth=depth)  # first: it may refuse
    low, high = infap_bounds(ranking, judgments, depth=depth)
    return {
        "value": infap_aware(ranking, judgments, depth=depth),
        "var": variance,
        "min": low,
        "max": high,
    }


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` infAP under random tie-breaks (:func:`infap_sample`)."""
    return infap_sample(ranking, judgments, samples=samples, rng=rng, depth=depth)


register(
    Family(
        "infAP",
        "trec_eval's inferred AP (Yilmaz & Aslam): sum over relevant retrieved "
        "of (1 + (r + m + u) (r + 1e-5) / (r + m + 2e-5)) / k, / num_rel (r relevant, m "
        "judged non-relevant, u pooled unjudged (negative level) docs above rank k; docs "
        "absent from the qrels count as non-relevant); exact variance and bounds up to a "
        "budget per tie group",
        ("infap",),
        "none",
        component=None,
        values=each(family_values),
        spread=each(family_spread),
        sample=each(family_sample),
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "infAP",
    words=Words(
        whole=(
            "inferred average precision",
            "an estimate of average precision when only a random sample of the pooled documents "
            "was judged (Yilmaz & Aslam): the unjudged pooled documents are inferred from the "
            "judged ones",
        ),
    ),
    docs=(
        Doc(
            "`infAP`",
            "`infap`",
            "trec_eval's inferred AP (Yilmaz & Aslam): Σ over the relevant retrieved docs of (1 + "
            "(r + m + u)·(r + ε)/(r + m + 2ε)) / k, / num_rel, with r relevant, m judged "
            "non-relevant and u pooled-but-unjudged (negative level) docs above rank k, ε = "
            "10^−5; docs absent from the qrels count as non-relevant. Exact aware value, variance "
            "and min/max (not the optimistic/pessimistic orders: an unjudged doc above can raise "
            "a term); the variance and bounds refuse a tie group past a budget of 2·10^7 steps "
            "(use `--ties sampled`; each of the 17 TREC 2003 Robust runs of the shared data, "
            "which `sample_data/` samples five of, needs at most 1.2·10^6)",
            "pytrec_eval (bit for bit), trec_eval's test outputs",
        ),
    ),
)

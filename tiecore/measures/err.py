"""ERR@k, the cascade model's expected reciprocal rank, exact under ties.

A doc of qrels level ``g`` stops the user with probability
``R = (2**g - 1) / 2**g_max`` (0 for levels <= 0 and unjudged docs), and

    ERR@k = sum_{j <= k} (1/j) R_j prod_{i < j} (1 - R_i)

(Chapelle et al., CIKM 2009), with gdeval's conventions, the provider of
ir_measures' ``ERR@k``: ``g_max = 4`` (its ``MAX_JUDGMENT``, a fixed constant,
not the query's largest level; a larger level is an error there and here).

Tie-aware: write ``x = 1 - R``.  The product over the groups above a tie group
does not depend on their internal orders (call it ``S``), so ERR is
``sum_g S_g Y_g`` with independent ``Y_g = sum_{p < d} T_p / (t + p + 1)``,
``d`` the group's slots above the cut, ``t`` the docs above it and
``T_p = R_(p) prod_{i < p} x_(i)`` (positions inside the group).  As
``T_p = prod_{i < p} x_(i) - prod_{i <= p} x_(i)``,

    E[T_p] = m_p - m_{p+1},  m_j = mean of prod_{i in A} x_i over j-subsets A

(``m_j = e_j(x) / C(n, j)``, an elementary symmetric polynomial over a
binomial).  ``m_j`` comes from a DP over the group's grade counts: adding
``c`` docs of value ``x`` to ``N`` docs, a random ``j``-subset holds ``a`` of
them with hypergeometric probability, so
``m'_j = sum_a Hyp(a; N + c, c, j) x^a m_{j-a}`` -- convex combinations of
positive numbers, no huge binomials.

Bounds: swapping adjacent docs ``u, v`` (``R_u < R_v``) at ranks ``j, j+1``
changes ERR by ``D (R_v - R_u)(1/j - 1/(j+1)) >= 0`` (``D`` the product
above them; past the cut the gain is ``D (R_v - R_u)/j``), so the maximum over
orderings sorts every group by level descending (the ``optimistic``
tie-break) and the minimum ascending (``pessimistic``).
"""

from __future__ import annotations

import numpy as np

from tiecore.engine import budget as budgets
from tiecore.engine.binomial import log_choose
from tiecore.engine.budget import check_cost
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.measures.registry import Doc, Family, Param, Words, describe, each, register

#: gdeval's ``MAX_JUDGMENT``: ``R = (2**level - 1) / 2**MAX_GRADE``.
MAX_GRADE = 4
#: Seconds and bytes per term of :func:`subset_product_means` (measured: 1.9e-7 to 3.5e-7 s
#: and 75 to 88 bytes a term, the pass's index, weight and temporary arrays).
TERM_SECONDS, TERM_BYTES = 3.5e-7, 96.0
#: Seconds per term of :func:`err_variance`'s pair program (measured 3.4e-8).
VARIANCE_TERM_SECONDS = 5e-8


def stop_probabilities(
    ranking: Ranking, judgments: Judgments, max_grade: int = MAX_GRADE
) -> np.ndarray:
    """Each row's ``R = (2**level - 1) / 2**max_grade``, 0 for levels <= 0 and unjudged docs.

    A qrels level above ``max_grade`` is an :class:`InputError` (gdeval refuses it too).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [4, 1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> stop_probabilities(Ranking.build(run, j), j).tolist()
    [0.9375, 0.0625, 0.0]
    """
    levels = judgments.levels
    if levels.size and levels.max() > max_grade:
        raise InputError(
            "qrels",
            None,
            f"level {int(levels.max())} is above ERR's largest grade {max_grade}",
            f"levels up to {max_grade}, or a larger max_rel (ERR(max_rel=N))",
        )
    table = np.ldexp(np.ldexp(1.0, np.arange(max_grade + 1)) - 1.0, -max_grade)
    return table[np.where(ranking.judged & (ranking.level > 0), ranking.level, 0)]


def _head(ranking: Ranking, stop: np.ndarray, cut: np.ndarray):
    """Rows above the cut as a padded ``(queries, L)`` matrix: ``R``, the product of
    ``1 - R`` above each slot (exclusive, in the ranking's order) and the ranks."""
    stop_head = ranking.head(stop, cut, 0.0)
    decay = np.ones_like(stop_head)
    if stop_head.shape[1] > 1:
        decay[:, 1:] = np.cumprod(1.0 - stop_head[:, :-1], axis=1)
    return stop_head, decay, np.arange(stop_head.shape[1]) + 1.0


def err_oblivious(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    depth: int | None = None,
    max_grade: int = MAX_GRADE,
) -> np.ndarray:
    """Per-query ERR@cutoff of the ranking's own order (gdeval's sums, in its order).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [4, 1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [2.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> float(err_oblivious(Ranking.build(run, j), j, 10)[0])  # 15/16 + (1/16)(1/16)/2
    0.939453125
    """
    stop = stop_probabilities(ranking, judgments, max_grade)
    stop_head, decay, rank = _head(ranking, stop, ranking.cut(cutoff, depth))
    if stop_head.shape[1] == 0:
        return np.zeros(len(ranking.counts))
    return np.cumsum(stop_head * decay / rank, axis=1)[:, -1]


def err_aware(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    depth: int | None = None,
    max_grade: int = MAX_GRADE,
) -> np.ndarray:
    """Per-query ERR@cutoff averaged exactly over all orderings of every tie group.

    ``E[ERR] = sum_g S_g sum_{p < d_g} (m_p - m_{p+1}) / (t_g + p + 1)`` (module docstring).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [4, 1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> float(err_aware(Ranking.build(run, j), j, 1)[0])  # (15/16 + 1/16) / 2
    0.5
    """
    stop = stop_probabilities(ranking, judgments, max_grade)
    cut = ranking.cut(cutoff, depth)
    stop_head, decay, rank = _head(ranking, stop, cut)
    if stop_head.shape[1] == 0:
        return np.zeros(len(ranking.counts))
    gq = ranking.group_query
    slots = np.clip(cut[gq] - ranking.offset, 0, ranking.size)
    nonzero = np.add.reduceat(stop > 0, ranking.group_start) if stop.size else slots
    live = np.flatnonzero((ranking.size > 1) & (slots > 0) & (nonzero > 0))
    # deterministic rows: every head row outside the live tied groups
    in_live = np.zeros(len(ranking.size), dtype=bool)
    in_live[live] = True
    head_rows, valid = ranking.head_rows(cut)
    keep = valid & ~in_live[ranking.group[head_rows]]
    terms = np.where(keep, stop_head * decay / rank, 0.0)
    value = np.cumsum(terms, axis=1)[:, -1]
    if live.size:
        value += np.bincount(
            gq[live],
            weights=_tied_group_means(ranking, stop, decay, live, slots, judgments.qids),
            minlength=len(cut),
        )
    return value


def _check_cost(ranking: Ranking, qids, live: np.ndarray, d: np.ndarray, counts) -> None:
    """Refuse (InputError) an exact mean whose :func:`subset_cost` passes the budgets
    (:mod:`tiecore.engine.budget`), with the largest cutoff that fits (``d``: each live group's
    slots above the cut)."""
    n, t = ranking.size[live], ranking.offset[live]

    def price(cut: int) -> tuple[float, float]:
        return subset_cost(n, np.minimum(np.clip(cut - t, 0, n), d) + 1, counts)

    deepest = int((t + d).max(initial=0))
    seconds, memory = price(deepest)
    if budgets.within(seconds, memory):
        return
    worst = live[np.argmax(n)]
    fits = budgets.largest(price, deepest)
    budgets.check(
        f"run {ranking.name}",
        f"query {qids[ranking.group_query[worst]]} has a tie group of {ranking.size[worst]} "
        f"docs: ERR's exact mean over its orderings",
        seconds,
        memory,
        f"ERR@k with k at most {fits}, or ties='sampled' for ERR on this run"
        if fits
        else "ties='sampled' for ERR on this run",
    )


def _tied_group_means(ranking, stop, decay, live, slots, qids) -> np.ndarray:
    """``S_g E[Y_g]`` of the live tied groups."""
    n, t, d = ranking.size[live], ranking.offset[live], slots[live]
    top = np.minimum(d + 1, n)
    owner, local = _ragged(n)
    grades, grade_of_row = np.unique(
        stop[ranking.group_start[live][owner] + local], return_inverse=True
    )
    cell = owner * grades.size + grade_of_row
    counts = np.bincount(cell, minlength=live.size * grades.size).reshape(live.size, -1)
    # the stop-free grade (x = 1) last: its docs then only dilute, and a DP step's
    # terms are bounded by the few docs with R > 0 (not by the group size)
    _check_cost(ranking, qids, live, d, counts[:, ::-1])
    means = subset_product_means(n, top, counts[:, ::-1], 1.0 - grades[::-1])
    base = np.cumsum(top + 1) - (top + 1)
    owner, p = _ragged(d)
    at = base[owner] + p
    expected = np.bincount(owner, weights=(means[at] - means[at + 1]) / (t[owner] + p + 1.0))
    start_decay = decay[ranking.group_query[live], t]
    return start_decay * np.pad(expected, (0, live.size - expected.size))


def _ragged(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Owner and 0-based index of every item of consecutive runs of ``counts`` items."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(counts.size), counts)
    local = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, local


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``log C(n, k)`` from the kept table of ``log(i!)`` (:mod:`tiecore.engine.binomial`)."""
    return log_choose(n, k, table=True)


def subset_terms(top: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per group, the terms :func:`subset_product_means` sums (its cost, O(groups x grades)).

    Adding ``c`` docs to ``s`` others, the pass sums ``min(c, j) - max(0, j - s) + 1``
    terms for each ``j = 0 .. J``, ``J = min(s + c, top)``, in closed form:
    ``sum_j min(c, j)`` is ``J (J + 1) / 2`` up to ``J = c``, then ``c`` more per ``j``;
    ``sum_j max(0, j - s)`` is ``(J - s)(J - s + 1) / 2`` past ``s``.

    >>> subset_terms(np.array([3]), np.array([[2, 1]])).tolist()  # 1+1+1, then 1+2+2+1
    [9.0]
    """
    return _grade_terms(top, counts).sum(axis=1)


def _grade_terms(top: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """:func:`subset_terms` per group and grade (the terms of each pass), ``(groups, grades)``."""
    c = np.asarray(counts, np.float64)
    seen = np.cumsum(c, axis=1) - c
    top = np.asarray(top, np.float64)[:, None]
    last = np.minimum(seen + c, top)
    below = np.minimum(last, c)
    low = below * (below + 1.0) / 2.0 + c * (last - below)
    past = np.maximum(last - seen, 0.0)
    high = past * (past + 1.0) / 2.0
    return np.where(c > 0, low - high + last + 1.0, 0.0)


def subset_cost(size: np.ndarray, top: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """``(seconds, bytes)`` of :func:`subset_product_means` on these groups: its terms
    times :data:`TERM_SECONDS`, and the largest pass's terms (a pass takes every group's
    docs of one grade at once) times :data:`TERM_BYTES`.

    >>> seconds, memory = subset_cost(np.array([20_000]), np.array([20_000]),
    ...                               np.array([[4_000, 4_000, 12_000]]))
    >>> round(seconds), round(memory / 1e9, 1)  # ERR without a cutoff on a 20,000-doc group
    (39, 9.2)
    """
    terms = _grade_terms(np.minimum(top, size), counts)
    return float(terms.sum()) * TERM_SECONDS, float(terms.sum(axis=0).max(initial=0.0)) * TERM_BYTES


def subset_product_means(
    size: np.ndarray, top: np.ndarray, counts: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """Mean of ``prod_{i in A} x_i`` over the ``j``-subsets ``A`` of each group, ``j = 0..top``.

    Group ``g`` holds ``counts[g, v]`` docs of value ``values[v]`` (``size[g]`` in all).
    Returned flat: group ``g``'s ``top[g] + 1`` means follow those of the groups
    before it.  One pass per value (grade): ``m'_j = sum_a Hyp(a; N + c, c, j)
    x^a m_{j-a}``, hypergeometric weights from log-gamma.

    >>> subset_product_means(np.array([3]), np.array([3]), np.array([[2, 1]]),
    ...                      np.array([0.5, 1.0])).round(12).tolist()
    [1.0, 0.666666666667, 0.416666666667, 0.25]
    """
    width = top + 1
    base = np.cumsum(width) - width
    means = np.zeros(int(width.sum()))
    means[base] = 1.0
    seen = np.zeros(size.size, dtype=np.int64)
    for v, x in enumerate(values):
        c = counts[:, v]
        chosen = np.flatnonzero(c > 0)
        if not chosen.size:
            continue
        after = seen[chosen] + c[chosen]
        owner, j = _ragged(np.minimum(after, top[chosen]) + 1)
        group = chosen[owner]
        low = np.maximum(0, j - seen[group])
        high = np.minimum(c[group], j)
        inner, offset = _ragged(high - low + 1)
        g, jj = group[inner], j[inner]
        a = low[inner] + offset
        log_weight = (
            _log_choose(c[g], a) + _log_choose(seen[g], jj - a) - _log_choose(seen[g] + c[g], jj)
        )
        weight = np.exp(log_weight) * np.power(x, a) * means[base[g] + jj - a]
        target = base[group] + j
        means[target] = np.bincount(inner, weights=weight, minlength=target.size)
        seen[chosen] = after
    return means


def err_variance(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    depth: int | None = None,
    max_grade: int = MAX_GRADE,
    budget: float = 2e7,
) -> np.ndarray:
    """Per-query exact variance of ERR over all orderings of every tie group.

    ``ERR = const + sum_g S_g Y_g`` with independent ``Y_g``, so ``Var = sum_g
    S_g^2 Var Y_g``.  Telescoping, ``Y = sum_{p=0}^{d} v_p P_p`` with
    ``P_p = prod_{i<p} x_(i)``, ``v_0 = w_0``, ``v_p = w_p - w_{p-1}``,
    ``v_d = -w_{d-1}`` (``w_p = 1/(t+p+1)``), and for ``p <= q``
    ``E[P_p P_q] = M(p, q - p)``, the mean of ``prod x^2`` over the first ``p``
    and ``prod x`` over the next ``q - p`` docs of a random order: a DP over the
    grade counts with bivariate hypergeometric weights, about ``c^2 (d^2/2 + c^2)``
    terms for ``c`` docs with ``R > 0`` (the others come last and only dilute).  Groups
    go in chunks of about ``budget`` terms; a group needing more is refused (InputError).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [4, 1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> float(err_variance(Ranking.build(run, j), j, 1)[0])  # ((15/16 - 1/16) / 2)^2
    0.19140625
    """
    stop = stop_probabilities(ranking, judgments, max_grade)
    cut = ranking.cut(cutoff, depth)
    out = np.zeros(len(ranking.counts))
    stop_head, decay, _ = _head(ranking, stop, cut)
    if stop_head.shape[1] == 0:
        return out
    gq = ranking.group_query
    slots = np.clip(cut[gq] - ranking.offset, 0, ranking.size)
    nonzero = np.add.reduceat(stop > 0, ranking.group_start)
    live = np.flatnonzero((ranking.size > 1) & (slots > 0) & (nonzero > 0))
    if not live.size:
        return out
    n, t, d = ranking.size[live], ranking.offset[live], slots[live]
    # terms of the pair DP: states (d+1)^2/2, each with up to (c+1)^2 splits of the
    # docs with R > 0 (the stop-free docs come last and only dilute)
    cost = _variance_terms(nonzero[live], d)
    check_cost(
        cost, budget, run=ranking.name, what="ERR variance", unit="terms",
        instead="a smaller cutoff, or ties='sampled' for this run",
        group=lambda w: f"query {judgments.qids[gq[live[w]]]} has a tie group of "
        f"{n[w]} docs, {nonzero[live[w]]} of them with a stop probability, and {d[w]} slots "
        "above the cut",
    )  # fmt: skip
    _check_variance_time(ranking, judgments.qids, live, nonzero[live], d, cost)
    owner, local = _ragged(n)
    grades, grade_of_row = np.unique(
        stop[ranking.group_start[live][owner] + local], return_inverse=True
    )
    cell = owner * grades.size + grade_of_row
    counts = np.bincount(cell, minlength=live.size * grades.size).reshape(live.size, -1)
    x, counts = 1.0 - grades[::-1], counts[:, ::-1]  # x = 1 last (see err_aware)
    variance = np.zeros(live.size)
    chunk = np.cumsum(cost) // budget  # groups in chunks of about `budget` terms
    for part in np.unique(chunk):  # a few chunks
        at = np.flatnonzero(chunk == part)
        variance[at] = _group_variances(n[at], t[at], d[at], counts[at], x)
    start = decay[gq[live], t]
    np.add.at(out, gq[live], start**2 * variance)
    return out


def _variance_terms(nonzero: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Terms of the variance's pair program per group: ``c^2 ((d + 1)^2 / 2 + c^2)``,
    ``c = min(nonzero, d) + 1`` (see :func:`err_variance`)."""
    c = np.minimum(nonzero, d) + 1.0
    return c**2 * ((d + 1.0) ** 2 / 2 + c**2)


def _check_variance_time(ranking, qids, live, nonzero, d, cost) -> None:
    """Refuse (InputError) a variance whose terms, at :data:`VARIANCE_TERM_SECONDS`, pass
    the time budget (:mod:`tiecore.engine.budget`) summed over all groups, with the largest
    cutoff that fits."""
    seconds = float(cost.sum()) * VARIANCE_TERM_SECONDS
    if budgets.within(seconds, 0.0):
        return
    t = ranking.offset[live]

    def price(cut: int) -> tuple[float, float]:
        slots = np.minimum(np.clip(cut - t, 0, None), d)
        terms = np.where(slots > 0, _variance_terms(nonzero, slots), 0.0)
        return float(terms.sum()) * VARIANCE_TERM_SECONDS, 0.0

    fits = budgets.largest(price, int((t + d).max()))
    budgets.check(
        f"run {ranking.name}",
        f"ERR's exact variance over {live.size} tie groups (the largest "
        f"{int(ranking.size[live].max())} docs, in query "
        f"{qids[ranking.group_query[live[np.argmax(cost)]]]})",
        seconds,
        0.0,
        f"ERR@k with k at most {fits}, or ties='sampled' for this run"
        if fits
        else "ties='sampled' for this run",
    )


def _group_variances(n, t, d, counts, x) -> np.ndarray:
    """``Var Y_g`` of tied groups, ``E[Y^2] - E[Y]^2`` (see :func:`err_variance`)."""
    means = subset_product_means(n, d, counts, x)  # m_0 .. m_d
    pair = _pair_product_means(n, d, counts, x)  # M(a, b), a + b <= d, (d+1)^2 layout
    # v_p for p = 0..d
    owner, p = _ragged(d + 1)
    w = 1.0 / (t[owner] + p + 1.0)
    w_before = np.where(p > 0, 1.0 / np.maximum(t[owner] + p, 1.0), 0.0)
    v = np.where(p < d[owner], w, 0.0) - w_before
    base_m = np.cumsum(d + 1) - (d + 1)
    mean = np.bincount(owner, weights=v * means[base_m[owner] + p], minlength=n.size)
    # E[Y^2] = sum_{p <= q} (2 - [p == q]) v_p v_q M(p, q - p)
    first = base_m[owner]
    row, offset = _ragged(d[owner] + 1 - p)  # q = p .. d
    g = owner[row]
    pp, qq = p[row], p[row] + offset
    side = d[g] + 1
    base_pair = np.cumsum((d + 1) ** 2) - (d + 1) ** 2
    weight = np.where(offset == 0, 1.0, 2.0) * v[row] * v[first[row] + qq]
    second = np.bincount(
        g, weights=weight * pair[base_pair[g] + pp * side + (qq - pp)], minlength=n.size
    )
    return np.maximum(second - mean**2, 0.0)


def _pair_product_means(
    size: np.ndarray, top: np.ndarray, counts: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """``M(a, b)``: mean of ``prod x^2`` over the first ``a`` and ``prod x`` over the next
    ``b`` docs of a uniformly random order, for ``a + b <= top``; flat, group ``g``'s
    ``(top + 1)**2`` cells at ``a * (top + 1) + b``.

    Adding ``c`` docs of value ``x`` to ``N`` others: ``a2`` of them fall in the first
    ``a`` and ``a1`` in the next ``b`` with probability
    ``C(c, a2) C(c - a2, a1) C(N, a - a2) C(N - a + a2, b - a1) / (C(N', a) C(N' - a, b))``.

    >>> m = _pair_product_means(np.array([2]), np.array([2]), np.array([[1, 1]]),
    ...                         np.array([0.5, 1.0]))
    >>> m.reshape(3, 3).round(6).tolist()  # M(1,0) = (0.25 + 1)/2, M(1,1) = (0.25 + 0.5)/2
    [[1.0, 0.75, 0.5], [0.625, 0.375, 0.0], [0.25, 0.0, 0.0]]
    """
    side = top + 1
    base = np.cumsum(side**2) - side**2
    out = np.zeros(int((side**2).sum()))
    out[base] = 1.0
    seen = np.zeros(size.size, dtype=np.int64)
    for v, x in enumerate(values):
        c = counts[:, v]
        chosen = np.flatnonzero(c > 0)
        if not chosen.size:
            continue
        after = seen[chosen] + c[chosen]
        reach = np.minimum(after, top[chosen])
        # states (a, b) with a + b <= reach
        owner, a = _ragged(reach + 1)
        group = chosen[owner]
        b_count = reach[owner] - a + 1
        row, b = _ragged(b_count)
        g, aa = group[row], a[row]
        old = seen[g]
        # a2 in [max(0, aa - old), min(c, aa)]
        low2 = np.maximum(0, aa - old)
        high2 = np.minimum(c[g], aa)
        inner, step = _ragged(np.maximum(high2 - low2 + 1, 0))
        g2, a2 = g[inner], low2[inner] + step
        A, B = aa[inner], b[inner]
        rest = old[inner] - (A - a2)  # old docs outside the first A
        low1 = np.maximum(0, B - rest)
        high1 = np.minimum(c[g2] - a2, B)
        leaf, step1 = _ragged(np.maximum(high1 - low1 + 1, 0))
        gg, a2l, a1 = g2[leaf], a2[leaf], low1[leaf] + step1
        Al, Bl, olds = A[leaf], B[leaf], old[inner][leaf]
        cc = c[gg]
        log_weight = (
            _log_choose(cc, a2l)
            + _log_choose(cc - a2l, a1)
            + _log_choose(olds, Al - a2l)
            + _log_choose(olds - Al + a2l, Bl - a1)
            - _log_choose(olds + cc, Al)
            - _log_choose(olds + cc - Al, Bl)
        )
        source = base[gg] + (Al - a2l) * side[gg] + (Bl - a1)
        weight = np.exp(log_weight) * np.power(x, 2 * a2l + a1) * out[source]
        target = base[g] + aa * side[g] + b  # one per state
        out[target] = np.bincount(inner[leaf], weights=weight, minlength=target.size)
        seen[chosen] = after
    return out


def err_bounds(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    depth: int | None = None,
    max_grade: int = MAX_GRADE,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query min and max of ERR over all orderings: every group sorted by ``R``
    ascending (min) or descending (max), the pessimistic and optimistic orders.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [4, 1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> [float(v[0]) for v in err_bounds(Ranking.build(run, j), j, 1)]
    [0.0625, 0.9375]
    """
    stop = stop_probabilities(ranking, judgments, max_grade)
    cut = ranking.cut(cutoff, depth)
    slots = np.clip(cut[ranking.group_query] - ranking.offset, 0, ranking.size)
    rows = np.flatnonzero((slots > 0)[ranking.group])  # the groups that reach the head
    out = []
    for sign in (1.0, -1.0):  # ascending (min), then descending (max) inside each group
        order = rows[np.lexsort((sign * stop[rows], ranking.group[rows]))]
        sorted_stop = stop.copy()
        sorted_stop[rows] = stop[order]
        stop_head, decay, rank = _head(ranking, sorted_stop, cut)
        if stop_head.shape[1] == 0:
            out.append(np.zeros(len(ranking.counts)))
        else:
            out.append(np.cumsum(stop_head * decay / rank, axis=1)[:, -1])
    return out[0], out[1]


def err_sample(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
    max_grade: int = MAX_GRADE,
) -> np.ndarray:
    """ERR@cutoff under ``samples`` random tie-breaks: ``(samples, queries)``.

    The orders are :mod:`tiecore.engine.sampling`'s keyed draws (the same for a run's
    queries evaluated together or apart); every draw is then scored as
    :func:`err_oblivious` scores an order.
    """
    from tiecore.engine.sampling import Sampler  # lazy: sampling (~7 ms) only when sampled

    stop = stop_probabilities(ranking, judgments, max_grade)
    cut = ranking.cut(cutoff, depth)
    nq = len(ranking.counts)
    sampler = Sampler(ranking, judgments, int(cut.max(initial=0)))
    fixed = stop.copy()
    fixed[sampler.cleared] = 0.0
    stop_head, _, rank = _head(ranking, fixed, cut)
    width = stop_head.shape[1]
    out = np.zeros((samples, nq))
    if width == 0:
        return out
    query = ranking.query[sampler.rows]
    for first, size, doc, slot in sampler.draws(samples, rng, nq * width):
        heads = np.broadcast_to(stop_head, (size, nq, width)).copy()
        if doc is not None:
            place = ranking.rank[slot] - 1
            inside = place < cut[query][None, :]
            sample = np.broadcast_to(np.arange(size)[:, None], slot.shape)
            heads[sample[inside], np.broadcast_to(query, slot.shape)[inside], place[inside]] = stop[
                doc[inside]
            ]
        decay = np.ones_like(heads)
        if width > 1:
            decay[:, :, 1:] = np.cumprod(1.0 - heads[:, :, :-1], axis=2)
        out[first : first + size] = np.cumsum(heads * decay / rank, axis=2)[:, :, -1]
    return out


# ------------------------------------------------- the family's hooks and registration


def _max_grade(measure) -> int:
    """The measure's ``max_rel`` parameter when its family declares one, else gdeval's 4."""
    try:
        return int(float(measure.param("max_rel")))
    except (KeyError, AttributeError, TypeError):
        return MAX_GRADE


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query ERR of ``measure`` in the profile's mode (``oblivious`` or ``aware``)."""
    function = err_aware if profile.mode == "aware" else err_oblivious
    return function(ranking, judgments, measure.cutoff, depth=depth, max_grade=_max_grade(measure))


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Per-query ``value, var, min, max`` of ERR (all exact)."""
    options = {"depth": depth, "max_grade": _max_grade(measure)}
    low, high = err_bounds(ranking, judgments, measure.cutoff, **options)
    return {
        "value": err_aware(ranking, judgments, measure.cutoff, **options),
        "var": err_variance(ranking, judgments, measure.cutoff, **options),
        "min": low,
        "max": high,
    }


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` ERR under random tie-breaks (:func:`err_sample`)."""
    return err_sample(
        ranking,
        judgments,
        measure.cutoff,
        samples=samples,
        rng=rng,
        depth=depth,
        max_grade=_max_grade(measure),
    )


register(
    Family(
        "ERR",
        "cascade model (Chapelle et al.): sum_{j<=k} R_j prod_{i<j} (1 - R_i) / j, "
        "R = (2^level - 1) / 2^max_rel with max_rel 4 (gdeval's, ir_measures' provider; a "
        "larger level is an error); a query without a positive level scores 0 (gdeval "
        "leaves it out)",
        ("err",),
        params={
            "max_rel": Param(
                "4",
                tuple(str(i) for i in range(1, 31)),
                description="the largest level: R = (2^level - 1) / 2^max_rel",
            )
        },
        component=None,
        values=each(family_values),
        spread=each(family_spread),
        sample=each(family_sample),
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "ERR",
    words=Words(
        cut=(
            "expected reciprocal rank within the top {k}",
            "a reader scans the top {k} and stops at each document with a probability that grows "
            "with its relevance level; the value is the expected 1 / rank where the reader stops",
        ),
        whole=(
            "expected reciprocal rank",
            "a reader scans the ranked list and stops at each document with a probability that "
            "grows with its relevance level; the value is the expected 1 / rank where they stop",
        ),
    ),
    docs=(
        Doc(
            "`ERR@k`, `ERR(max_rel=g)@k`",
            "`err@k`",
            "Σ over ranks j ≤ k of R_j / j · Π_{i<j} (1 − R_i), R = (2^level − 1) / 2^g, g = 4 "
            "(gdeval's largest grade; a higher level is refused unless `max_rel` raises g); a "
            "query without a positive judgment scores 0, where gdeval leaves it out",
            "gdeval.pl (ir_measures' ERR provider), at full precision",
        ),
    ),
)

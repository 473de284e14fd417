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
from scipy import special

from tiecore.errors import InputError
from tiecore.judgments import Judgments
from tiecore.ranking import Ranking

#: gdeval's ``MAX_JUDGMENT``: ``R = (2**level - 1) / 2**MAX_GRADE``.
MAX_GRADE = 4


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
    levels = judgments._levels
    if levels.size and levels.max() > max_grade:
        raise InputError(
            "qrels",
            None,
            f"level {int(levels.max())} is above ERR's largest grade {max_grade}",
            f"levels up to {max_grade}, or a larger max_grade",
        )
    level = np.where(ranking.judged & (ranking.level > 0), ranking.level, 0)
    return np.ldexp(np.ldexp(1.0, level) - 1.0, -max_grade)


def _cuts(ranking: Ranking, cutoff: int | None, depth: int | None) -> np.ndarray:
    """Per query the ranks that count: ``min(count, cutoff, depth)``."""
    cut = ranking.counts.astype(np.int64)
    for bound in (cutoff, depth):
        if bound is not None:
            cut = np.minimum(cut, bound)
    return cut


def _head(ranking: Ranking, stop: np.ndarray, cut: np.ndarray):
    """Rows above the cut as a padded ``(queries, L)`` matrix: ``R``, the product of
    ``1 - R`` above each slot (exclusive, in the ranking's order) and the ranks."""
    width = int(cut.max(initial=0))
    column = np.arange(width)
    valid = column < cut[:, None]
    rows = np.where(valid, ranking.starts[:, None] + column, 0)
    stop_head = np.where(valid, stop[rows] if stop.size else 0.0, 0.0)
    decay = np.ones_like(stop_head)
    if width > 1:
        decay[:, 1:] = np.cumprod(1.0 - stop_head[:, :-1], axis=1)
    return stop_head, decay, column + 1.0


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
    stop_head, decay, rank = _head(ranking, stop, _cuts(ranking, cutoff, depth))
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
    cut = _cuts(ranking, cutoff, depth)
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
    column = np.arange(stop_head.shape[1])
    head_rows = np.where(column < cut[:, None], ranking.starts[:, None] + column, 0)
    keep = (column < cut[:, None]) & ~in_live[ranking.group[head_rows]]
    terms = np.where(keep, stop_head * decay / rank, 0.0)
    value = np.cumsum(terms, axis=1)[:, -1]
    if live.size:
        value += np.bincount(
            gq[live],
            weights=_tied_group_means(ranking, stop, decay, live, slots),
            minlength=len(cut),
        )
    return value


def _tied_group_means(ranking, stop, decay, live, slots) -> np.ndarray:
    """``S_g E[Y_g]`` of the live tied groups."""
    n, t, d = ranking.size[live], ranking.offset[live], slots[live]
    top = np.minimum(d + 1, n)
    grades, grade_of_row = np.unique(stop, return_inverse=True)
    owner, local = _ragged(n)
    cell = owner * grades.size + grade_of_row[ranking.group_start[live][owner] + local]
    counts = np.bincount(cell, minlength=live.size * grades.size).reshape(live.size, -1)
    means = subset_product_means(n, top, counts, 1.0 - grades)
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
    return special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)


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


def err_bounds(
    ranking: Ranking,
    judgments: Judgments,
    cutoff: int | None = None,
    *,
    depth: int | None = None,
    max_grade: int = MAX_GRADE,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query min and max of ERR over all orderings: the pessimistic and optimistic orders.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "level": [4, 1]})
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> [float(v[0]) for v in err_bounds(Ranking.build(run, j), j, 1)]
    [0.0625, 0.9375]
    """
    low, high = (
        err_oblivious(ranking.retie(policy), judgments, cutoff, depth=depth, max_grade=max_grade)
        for policy in ("pessimistic", "optimistic")
    )
    return low, high

"""trec_eval's ``iprec_at_recall``: interpolated precision at 11 recall levels, exact under ties.

trec_eval (``m_iprec_at_recall.c``) turns each recall level ``c`` into a
count of relevant docs ``k(c) = (long)(c * num_rel + 0.9)`` and reports

    iprec(c) = max_{max(k(c), 1) <= m <= RR} m / rank_m

(``rank_m`` the rank of the ``m``-th relevant doc retrieved, ``RR`` how many
were retrieved within the depth; 0 when no ``m`` qualifies): the precision
interpolated as the maximum precision at any rank at or below.  That ``+ 0.9``
is trec_eval 9.0.x's (pytrec_eval, ir_measures); trec_eval 10.0, which wrote
trec_eval's test outputs, rounds to nearest (``lround(c * num_rel)``, halves away
from 0): ``rounding="nearest"``.

Tie-aware.  The tie groups' relevant counts and offsets are fixed, so the
ordinals ``R + 1 .. R + r`` of a group's relevant docs and the ranks around
them are too; only the positions of the relevant docs inside each group move.
The maximum over ``m`` is the maximum of independent per-group maxima
``M_g = max_k (R_g + k) / (t_g + s_k)`` (``s_k`` the ``k``-th relevant
position, uniform over the ``C(n, r)`` placements), so with ``F_g`` their
distribution functions

    E[iprec] = sum_v v (F(v) - F(v-)),   F = prod_g F_g

over the merged support points.  Groups whose placement is fixed (all
relevant, none, or one doc) enter as constants.  A mixed group's ``F_g`` is
counted, not enumerated: ``M_g <= v`` exactly when every counted ``s_k``
reaches ``L_k(v) = ceil((R_g + k) / v - t_g)`` (in integers: ``(R_g + k) b <=
a (t_g + s_k)`` for ``v = a / b``, so a ratio equal to ``v`` counts), and the
placements meeting such lower bounds are lattice paths counted by a DP over
``k`` with cumulative sums, ``O(r n)`` per support point and vectorized over
the points (:func:`~tiecore.measures.iprec_count._fraction`; from
:data:`~tiecore.measures.iprec_count.DIAGONAL_FROM` relevant docs run
by anti-diagonals of the ``(k, position)`` grid, plain adds instead of numpy's
slow cumulative sums); a group's levels share it.  No fewer points will do:
``L_k(v) - k`` is nondecreasing in ``k`` (``v <= 1``) and every candidate ratio
moves some ``L_k``, so the distinct bound vectors are the distinct ratios.  A
cell's points below its constant part, but the last, are left out (``F`` is 0
there).  The DP is priced before it runs by the cells it will visit, counted
from the support points (a point's relevant docs from its least level on, each
live on ``width + 1 - L_k`` diagonals): 1.6e9 for 769 docs with 131 relevant,
where the bound ``points x relevant x positions`` says 6.5e9.  A group past
:data:`BUDGET` cells is refused (:class:`~tiecore.errors.Refusal`, naming the
measure at its recall level and the higher levels that fit).  The bounds are
the optimistic and pessimistic orders: every ``m / rank_m`` falls as
``rank_m`` grows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from tiecore.engine.budget import budget_scope as budget_scope  # a scope lowers BUDGET
from tiecore.engine.budget import check_cost, step_budget
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.measures.iprec_count import _support_cdf, _support_points
from tiecore.measures.registry import Doc, Family, Param, Words, describe, register

#: How a recall level becomes a count of relevant docs (IPrec's and IPrecAvg's ``round``).
ROUND = Param(
    "up",
    ("up", "nearest"),
    description="up: + 0.9 (trec_eval 9.0.x); nearest: to nearest (trec_eval 10.0)",
)
#: trec_eval's default recall levels (C doubles, as written there).
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: Most cells of one tie group's counting DP that the tie-aware curve computes, counted from
#: its support points before it runs (1-1.5e9 cells/s with 20 relevant docs or more, 0.5e9
#: with 12, on a 2-core x86-64 machine with numpy 2: about 3 to 8 s at the limit).
BUDGET = 4e9


def level_names(levels=RECALL_LEVELS) -> list[str]:
    """trec_eval's measure names: ``iprec_at_recall_0.00`` ...

    >>> level_names((0.0, 0.5))
    ['iprec_at_recall_0.00', 'iprec_at_recall_0.50']
    """
    return [f"iprec_at_recall_{c:.2f}" for c in levels]


#: How trec_eval turns a recall level into a count of relevant docs: ``(long)(c * num_rel
#: + 0.9)`` in trec_eval 9.0.x (pytrec_eval, ir_measures), ``lround(c * num_rel)`` (to
#: nearest, halves up) in trec_eval 10.0, which produced the trec_eval test outputs.
ROUNDINGS = {"up": 0.9, "nearest": 0.5}


def relevant_counts(judgments: Judgments, levels=RECALL_LEVELS, rounding: str = "up") -> np.ndarray:
    """``(queries, levels)``: the ordinal ``max(k(c), 1)`` of the first relevant doc that counts.

    >>> import pandas as pd
    >>> j = Judgments.from_qrels(pd.DataFrame({"qid": "1", "docno": list("abc"), "level": 1}))
    >>> relevant_counts(j, (0.0, 0.1, 0.5, 1.0)).tolist()
    [[1, 1, 2, 3]]
    >>> relevant_counts(j, (0.0, 0.1, 0.5, 1.0), "nearest").tolist()
    [[1, 1, 2, 3]]

    ``nearest`` is C's ``lround`` of the product, exactly: ``floor(x) + (x - floor(x) >=
    0.5)`` (the difference is exact), not ``(long)(x + 0.5)``, whose sum rounds up an
    ``x`` just below a half.
    """
    x = np.asarray(levels, dtype=np.float64) * judgments.num_rel[:, None]
    if rounding == "nearest":
        whole = np.floor(x)
        cut = (whole + (x - whole >= 0.5)).astype(np.int64)
    else:
        cut = (x + ROUNDINGS[rounding]).astype(np.int64)
    return np.maximum(cut, 1)


def _retrieved(ranking: Ranking, depth: int | None) -> np.ndarray:
    """Rows within the depth (trec_eval ``-M``)."""
    return ranking.rank <= depth if depth is not None else np.ones(ranking.rank.size, bool)


def iprec_oblivious(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    rounding: str = "up",
) -> np.ndarray:
    """``(queries, levels)`` interpolated precision of the ranking's own order.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "c"], "level": 1})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [3.0, 2.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> iprec_oblivious(Ranking.build(run, j), j, (0.0, 0.5, 1.0)).round(4).tolist()
    [[1.0, 1.0, 0.6667]]
    """
    keep = np.flatnonzero(ranking.rel & _retrieved(ranking, depth))
    query = ranking.query[keep]
    ordinal = np.arange(keep.size) - np.searchsorted(query, query) + 1
    precision = ordinal / ranking.rank[keep].astype(np.float64)
    return _max_from(query, ordinal, precision, relevant_counts(judgments, levels, rounding))


def _max_from(query, ordinal, precision, first) -> np.ndarray:
    """Per query and level, the max of ``precision`` over rows with ``ordinal >= first``
    (0 if none); rows sorted by query."""
    nq, nl = first.shape
    out = np.zeros((nq, nl))
    if not query.size:
        return out
    for level in range(nl):  # 11 levels
        value = np.where(ordinal >= first[query, level], precision, 0.0)
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
        out[query[starts], level] = np.maximum.reduceat(value, starts)
    return out


def iprec_bounds(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    rounding: str = "up",
) -> tuple[np.ndarray, np.ndarray]:
    """Min and max over all orderings: the pessimistic and optimistic orders."""
    return tuple(
        iprec_oblivious(ranking.retie(policy), judgments, levels, depth=depth, rounding=rounding)
        for policy in ("pessimistic", "optimistic")
    )


def iprec_aware(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    budget: float | None = None,
    rounding: str = "up",
) -> np.ndarray:
    """``(queries, levels)`` interpolated precision averaged exactly over all orderings.

    Raises InputError when a tie group's counting DP would take more than
    ``budget`` steps (default :data:`BUDGET`; see the module docstring).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": 1})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("ab"), "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> iprec_aware(Ranking.build(run, j), j, (0.0,)).tolist()  # (1 + 1/2) / 2
    [[0.75]]
    """
    return _moments(ranking, judgments, levels, depth=depth, budget=budget, rounding=rounding)[0]


def iprec_variance(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    budget: float | None = None,
    rounding: str = "up",
) -> np.ndarray:
    """``(queries, levels)`` exact variance over all orderings: ``sum v^2 dF - E^2``.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": 1})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("ab"), "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> iprec_variance(Ranking.build(run, j), j, (0.0,)).tolist()  # values 1 and 1/2
    [[0.0625]]
    """
    mean, square = _moments(
        ranking, judgments, levels, depth=depth, budget=budget, rounding=rounding
    )
    return np.maximum(square - mean**2, 0.0)


def _moments(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    budget: float | None = None,
    rounding: str = "up",
    within: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, second moment)`` arrays ``(queries, levels)`` (see :func:`iprec_aware`);
    ``within``: the measure the levels make up (IPrecAvg), which a refusal names."""
    first = relevant_counts(judgments, levels, rounding)
    nq, nl = first.shape
    constant, events = _parts(
        ranking, judgments, first, depth, step_budget(BUDGET, budget), levels, rounding, within
    )
    if events is None:
        return constant, constant**2
    mean, square = _expected_max(constant.ravel(), *events)
    return mean.reshape(nq, nl), square.reshape(nq, nl)


def _parts(ranking: Ranking, judgments: Judgments, first, depth, budget, levels, rounding, within):
    """``(constant, events)``: per query and level (``first`` their first ordinals) the
    maximum over the relevant rows no order moves, and the CDF events of every mixed
    group's maximum (:func:`_group_distributions`; None when no group is mixed)."""
    retrieved = _retrieved(ranking, depth)
    t, n = ranking.offset, ranking.size
    slots = n if depth is None else np.clip(depth - t, 0, n)
    r, before = ranking.rel_count, ranking.rel_before
    mixed = (r > 0) & (r < n) & (slots > 0)
    # constant part: relevant rows (within the depth) of groups whose placement is fixed
    fixed_row = ranking.rel & retrieved & ~mixed[ranking.group]
    rows = np.flatnonzero(fixed_row)
    g = ranking.group[rows]
    ordinal = before[g] + ranking.position[rows] + 1  # fixed groups: relevant docs first
    precision = ordinal / ranking.rank[rows].astype(np.float64)
    constant = _max_from(ranking.query[rows], ordinal, precision, first)
    groups = np.flatnonzero(mixed)
    if not groups.size:
        return constant, None
    events = _group_distributions(
        groups, ranking, slots, first, budget, judgments.qids, constant.ravel(), levels, rounding,
        within,
    )  # fmt: skip
    return constant, events


def _group_distributions(
    groups, ranking, slots, first, budget, judgments_qids, floor, levels, rounding, within=None
):
    """Events ``(cell, value, F_g(value), F_g(previous value))`` of every mixed group's
    maximum, per level.

    ``cell = query * levels + level``; a group whose relevant docs all fall
    below the level's first ordinal is left out of that cell, and a cell's
    points below its constant part ``floor`` (but the last one) are left out, as
    ``F`` is 0 there.  One pass per distinct group shape ``(n, r)``, vectorized
    over that shape's groups, levels and support points
    (:func:`~tiecore.measures.iprec_count._support`).

    The cost is priced before any DP runs: a group's DP takes the cells of its
    counted support points (:func:`~tiecore.measures.iprec_count._support_points`);
    a group whose count passes ``budget`` is refused
    (:class:`~tiecore.errors.Refusal`).  Where the support itself would pass
    :data:`SUPPORT_LIMIT` entries, the bound ``support points x relevant docs x
    positions`` prices it instead.
    """
    nl = first.shape[1]
    n, r = ranking.size[groups], ranking.rel_count[groups]
    query = ranking.group_query[groups]
    k1 = first[query] - ranking.rel_before[groups][:, None]  # (groups, levels)
    gi, li = np.nonzero(k1 <= r[:, None])  # (group, level) pairs where the group counts
    k1 = np.maximum(k1[gi, li], 1)
    kmin = np.full(groups.size, np.iinfo(np.int64).max)
    np.minimum.at(kmin, gi, k1)
    width = n - r + 1
    points = (r - kmin + 1) * width + 1
    bound = points.astype(np.float64) * r * width  # support points x relevant x positions
    bound[kmin > r] = 0.0
    refuse = _Refuser(
        ranking.name, judgments_qids, query, n, r, gi, li, k1, levels, rounding, within
    )
    huge = (bound > budget) & (points.astype(np.float64) * r > SUPPORT_LIMIT)
    if huge.any():  # refused before any work: too large even to count
        refuse(np.where(huge, bound, 0.0), budget, "up to ")
    cells = np.zeros(groups.size)
    prepared = []
    used = np.unique(gi)
    shapes, shape_of = np.unique(np.stack([n[used], r[used]], axis=1), axis=0, return_inverse=True)
    unit_of = np.zeros(groups.size, np.int64)
    for s, (size, rel) in enumerate(shapes):  # one pass per distinct (n, r) shape
        chosen = used[shape_of.ravel() == s]
        unit_of[chosen] = np.arange(chosen.size)
        at = np.flatnonzero(np.isin(gi, chosen))
        support = _support_points(
            int(size),
            int(rel),
            ranking.rel_before[groups[chosen]],
            ranking.offset[groups[chosen]],
            slots[groups[chosen]],
            unit_of[gi[at]],
            k1[at],
            floor[query[gi[at]] * nl + li[at]],
        )
        cells[chosen] = support.cells
        prepared.append((at, support))
    if cells.size and cells.max() > budget:  # refused before any DP runs
        refuse(cells, budget, "", prepared)
    out = []
    for at, support in prepared:
        pair, value, cdf = _support_cdf(support)
        same = np.r_[False, pair[1:] == pair[:-1]]
        out.append(
            (
                query[gi[at]][pair] * nl + li[at][pair],
                value,
                cdf,
                np.where(same, np.r_[0.0, cdf[:-1]], 0.0),
            )
        )
    if not out:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0)
    return tuple(np.concatenate(column) for column in zip(*out, strict=True))


def measure_name(level: float, rounding: str = "up") -> str:
    """How a refusal names IPrec at one recall level: its name and trec_eval's.

    >>> measure_name(0.3)
    'IPrec@0.3 (iprec_at_recall_0.30)'
    >>> measure_name(0.25, "nearest")
    'IPrec(recall=0.25,round=nearest)'
    """
    if rounding == "nearest":
        return f"IPrec(recall={level},round=nearest)"
    return f"IPrec@{level} ({level_names((level,))[0]})"


class _Refuser:
    """Raises the :class:`~tiecore.errors.Refusal` of the group whose DP costs most: the
    run, query, group, measure at its recall level (the least level it counts for, as
    the levels from it up share one DP), the cells, and what to ask instead (where
    the counted supports say so, the least higher level that fits; for a measure made of
    the levels, ``within``, that measure)."""

    def __init__(self, name, qids, query, n, r, gi, li, k1, levels, rounding, within=None):
        self.name, self.qids, self.query, self.n, self.r = name, qids, query, n, r
        self.gi, self.li, self.k1 = gi, li, k1
        self.levels, self.rounding, self.within = tuple(levels), rounding, within

    def __call__(self, cost, budget, up_to, prepared=()) -> None:
        worst = int(np.argmax(cost))
        mine = self.gi == worst
        level = int(self.li[mine].min())  # the least level: the most support points
        measure = measure_name(self.levels[level], self.rounding)
        if self.within is not None:
            instead = f"ties='oblivious' or 'sampled' for {self.within} on this run"
            measure = f"{self.within} count (at its level {measure})"
        else:
            instead = f"ties='oblivious' or 'sampled' for {measure} on this run"
            fits = self._least_level_that_fits(worst, budget, prepared)
            if fits is not None:
                instead += f", or recall levels from {self.levels[fits]} up, which fit"
            measure += " count"
        check_cost(
            cost, budget, run=self.name, what=measure, instead=instead, bound=bool(up_to),
            group=lambda g: f"query {self.qids[self.query[g]]} has a tie group of {self.n[g]} "
            f"docs with {self.r[g]} relevant",
        )  # fmt: skip

    def _least_level_that_fits(self, worst, budget, prepared):
        """The least recall level above the refused one whose own DP (its points and
        relevant docs from its ``k1`` on) fits ``budget``, for group ``worst``."""
        for at, support in prepared:
            mine = np.flatnonzero(self.gi[at] == worst)
            if not mine.size:
                continue
            pairs = at[mine]
            for level in np.unique(self.li[pairs])[1:]:
                least = int(self.k1[pairs][self.li[pairs] >= level].min())
                if support.cells_from(mine[self.li[pairs] >= level], least) <= budget:
                    return int(level)
        return None


#: Most entries (candidate support points x relevant docs) of a group whose DP the
#: budget check counts exactly; past it, the bound ``points x relevant x positions`` is
#: the price (counting would hold arrays of that size).
SUPPORT_LIMIT = 3e7


def _expected_max(constant, cells, values, cdf, previous) -> tuple[np.ndarray, np.ndarray]:
    """``E[V]`` and ``E[V^2]``, ``V = max(constant, M_1, M_2, ...)``, per cell from the
    groups' CDF events.

    ``F(v) = [constant <= v] prod_g F_g(v)``; sweeping a cell's events by value,
    ``E = sum v (F after the event - F before it)``.  An event moves one factor
    from ``previous`` to ``cdf``; a group's first event (``previous`` 0) lifts it
    from 0, so the product is kept as a sum of logs and a count of factors at 0.
    Cells are swept together in buckets of like event counts (up to a power of 2).
    """
    out, square = constant.copy(), constant**2
    touched = np.unique(cells)
    if not touched.size:
        return out, square
    cells = np.concatenate([cells, touched])  # the constant: one event of probability 1
    values = np.concatenate([values, constant[touched]])
    cdf = np.concatenate([cdf, np.ones(touched.size)])
    previous = np.concatenate([previous, np.zeros(touched.size)])
    order = np.lexsort((values, cells))
    cells, values, cdf, previous = cells[order], values[order], cdf[order], previous[order]
    starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
    count = np.diff(np.r_[starts, cells.size])
    lift = previous == 0
    log_step = np.log(cdf) - np.where(lift, 0.0, np.log(np.where(lift, 1.0, previous)))
    # cells padded to their bucket's longest sweep, not the longest of all
    bucket = np.ceil(np.log2(count)).astype(np.int64)
    for size in np.unique(bucket):
        chosen = np.flatnonzero(bucket == size)
        many = count[chosen]
        row = np.repeat(np.arange(chosen.size), many)
        col = np.arange(row.size) - np.repeat(np.cumsum(many) - many, many)
        event = starts[chosen][row] + col
        shape = (chosen.size, int(many.max()))
        first, steps, value = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        first[row, col] = lift[event]
        steps[row, col] = log_step[event]
        value[row, col] = values[event]
        at_zero = first.sum(axis=1, keepdims=True) - np.cumsum(first, axis=1)
        after = np.where(at_zero == 0, np.exp(np.cumsum(steps, axis=1)), 0.0)
        before = np.zeros(shape)
        before[:, 1:] = after[:, :-1]
        mass = after - before
        out[cells[starts[chosen]]] = np.sum(value * mass, axis=1)
        square[cells[starts[chosen]]] = np.sum(value**2 * mass, axis=1)
    return out, square


def iprec_sample(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
    rounding: str = "up",
) -> np.ndarray:
    """``(samples, queries, levels)`` interpolated precision under random tie-breaks.

    The orders are :mod:`tiecore.engine.sampling`'s keyed draws; each draw moves the
    relevant docs of the drawn groups to their drawn slots, and the curve is
    read as :func:`iprec_oblivious` reads one order.
    """
    from tiecore.engine.sampling import Sampler  # lazy: sampling (~7 ms) only when sampled

    first = relevant_counts(judgments, levels, rounding)
    nq, nl = first.shape
    deepest = depth if depth is not None else int(ranking.counts.max(initial=0))
    sampler = Sampler(ranking, judgments, deepest)
    drawn = np.zeros(ranking.rank.size, bool)
    drawn[sampler.cleared] = True
    # queries without a drawn group keep one curve (their order does not matter)
    out = np.broadcast_to(
        iprec_oblivious(ranking, judgments, levels, depth=depth, rounding=rounding),
        (samples, nq, nl),
    ).copy()
    varies = np.zeros(nq, bool)
    varies[ranking.query[sampler.cleared]] = True
    keep = ranking.rel & (_retrieved(ranking, depth) | drawn) & varies[ranking.query]
    rows = np.flatnonzero(keep)
    if not rows.size:
        return out
    query = ranking.query[rows]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    ordinal = np.arange(rows.size) - np.repeat(starts, np.diff(np.r_[starts, rows.size])) + 1
    index = np.full(ranking.rank.size, -1)
    index[rows] = np.arange(rows.size)
    beyond = int(ranking.counts.max(initial=0)) + 1  # a rank past every depth
    fixed = np.where(ranking.rank[rows] <= deepest, ranking.rank[rows], beyond)
    for start, size, doc, slot in sampler.draws(samples, rng, rows.size):
        rank = np.broadcast_to(fixed, (size, rows.size)).copy()
        if doc is not None:
            moved = ranking.rel[doc]
            sample = np.broadcast_to(np.arange(size)[:, None], doc.shape)
            new = ranking.rank[slot][moved]
            rank[sample[moved], index[doc[moved]]] = np.where(new <= deepest, new, beyond)
        key = np.sort(query.astype(np.int64) * (beyond + 1) + rank, axis=1)
        rank = key - query.astype(np.int64) * (beyond + 1)
        precision = np.where(rank < beyond, ordinal / rank, 0.0)
        for level in range(nl):  # 11 levels
            value = np.where(ordinal >= first[query, level], precision, 0.0)
            out[start : start + size, query[starts], level] = np.maximum.reduceat(
                value, starts, axis=1
            )
    return out


# ------------------------------------------------- the family's hooks and registration


def _rounding(measure) -> str:
    """The measure's ``round`` parameter (``up``: trec_eval 9.0.x; ``nearest``: 10.0)."""
    return measure.param("round")


def _level(measure) -> tuple[float]:
    """The measure's recall level (parameter ``recall``), as a one-level tuple."""
    return (float(measure.param("recall")),)


def _shared_levels(levels: Iterable[float]) -> list[tuple[float, ...]]:
    """The level sets that one counting DP each computes for the ``levels`` asked.

    trec_eval's levels from the least one asked up share one DP (their supports lie
    within that level's), as a single level asked alone computes them; any other
    level is computed alone.
    """
    asked = set(levels)
    standard = [c for c in RECALL_LEVELS if c in asked]
    shared = [tuple(c for c in RECALL_LEVELS if c >= standard[0])] if standard else []
    return shared + [(c,) for c in sorted(asked - set(RECALL_LEVELS))]


def _per_rounding(measures: Sequence) -> dict[str, list[float]]:
    """The recall levels asked, per ``round`` parameter (in the order first asked)."""
    found: dict[str, list[float]] = {}
    for measure in measures:
        found.setdefault(_rounding(measure), []).append(_level(measure)[0])
    return found


def _moments_of(measures: Sequence, ranking: Ranking, judgments: Judgments, depth) -> list:
    """``(mean, second moment)`` per query of each measure, each DP of
    :func:`_shared_levels` run once for all the measures that read it."""
    found = {}
    for rounding, levels in _per_rounding(measures).items():
        for shared in _shared_levels(levels):
            mean, square = _moments(ranking, judgments, shared, depth=depth, rounding=rounding)
            for i, level in enumerate(shared):
                found[rounding, level] = mean[:, i].copy(), square[:, i].copy()
    return [found[_rounding(m), _level(m)[0]] for m in measures]


def _per_level(compute: Callable, measures: Sequence, *args, depth) -> list:
    """``compute(*args, levels, depth=, rounding=)`` (arrays ``(queries, levels)``)
    called once per ``round`` over its levels, read back as one column per measure."""
    found = {}
    for rounding, levels in _per_rounding(measures).items():
        levels = tuple(dict.fromkeys(levels))
        columns = compute(*args, levels, depth=depth, rounding=rounding)
        for i, level in enumerate(levels):
            found[rounding, level] = columns[:, i].copy()
    return [found[_rounding(m), _level(m)[0]] for m in measures]


def family_values(measures, profile, ranking: Ranking, judgments: Judgments, depth=None) -> list:
    """Per-query interpolated precision at each measure's recall level, in the profile's
    mode: aware, one DP for the levels that share it (:func:`_shared_levels`)."""
    if profile.mode == "aware":
        return [mean for mean, _ in _moments_of(measures, ranking, judgments, depth)]
    return _per_level(iprec_oblivious, measures, ranking, judgments, depth=depth)


def family_spread(measures, ranking: Ranking, judgments: Judgments, depth=None) -> list[dict]:
    """Per-query ``value, var, min, max`` of each measure (exact; InputError past
    :data:`BUDGET`)."""
    moments = _moments_of(measures, ranking, judgments, depth)
    bounds = _per_level(_bounds, measures, ranking, judgments, depth=depth)
    return [
        {"value": mean, "var": np.maximum(square - mean**2, 0.0), "min": b[:, 0], "max": b[:, 1]}
        for (mean, square), b in zip(moments, bounds, strict=True)
    ]


def _bounds(ranking: Ranking, judgments: Judgments, levels, *, depth, rounding) -> np.ndarray:
    """:func:`iprec_bounds` as one array ``(queries, levels, 2)``: min, then max."""
    low, high = iprec_bounds(ranking, judgments, levels, depth=depth, rounding=rounding)
    return np.stack([low, high], axis=-1)


def family_sample(measures, ranking: Ranking, judgments: Judgments, *, samples, rngs, depth=None):
    """``(samples, queries)`` interpolated precision of each measure under random
    tie-breaks, each from its own stream key of ``rngs``."""
    return [
        iprec_sample(
            ranking,
            judgments,
            _level(measure),
            samples=samples,
            rng=key,
            depth=depth,
            rounding=_rounding(measure),
        )[:, :, 0]
        for measure, key in zip(measures, rngs, strict=True)
    ]


register(
    Family(
        "IPrec",
        "trec_eval's iprec_at_recall: the largest precision at or below the rank "
        "of relevant doc number max(1, (long)(recall * num_rel + 0.9)) (round=up: trec_eval "
        "9.0.x and its names iprec_at_recall_r, pytrec_eval, ir_measures' IPrec@r) or "
        "lround(recall * num_rel) (round=nearest: trec_eval 10.0); 0 when too few are "
        "retrieved",
        ("iprec_at_recall",),
        "none",
        params={
            "recall": Param(
                "0.0",
                closed=True,
                description="the recall level, 0 to 1 (trec_eval's defaults: 0.0, 0.1, ..., 1.0; "
                "it takes any, as in iprec_at_recall..25,.75)",
            ),
            "round": ROUND,
        },
        component=None,
        values=family_values,
        spread=family_spread,
        sample=family_sample,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "IPrec",
    words=Words(
        whole=(
            "interpolated precision at recall {recall}",
            "the highest precision reached at any rank where recall is at least {recall} "
            "(trec_eval's iprec_at_recall); 0 when recall {recall} is never reached",
        ),
    ),
    docs=(
        Doc(
            "`IPrec@r`, `IPrec(recall=r)`",
            "`iprec_at_recall_r`",
            "trec_eval's interpolated precision at recall r (any r from 0 to 1; trec_eval's "
            "defaults 0, 0.1, …, 1): the largest precision at a relevant rank whose recall "
            "reaches r; `IPrec@r` and `iprec_at_recall_r` need int(r·num_rel + 0.9) relevant "
            "docs, as trec_eval 9.0.x (pytrec_eval, ir_measures) does; "
            "`IPrec(recall=r,round=nearest)` rounds to nearest (+ 0.5), as the later trec_eval of "
            "the test outputs does",
            "pytrec_eval, trec_eval's test outputs",
        ),
    ),
)

"""Per tie group: the variance, bounds and distributions of a measure's head sum.

The hooks shared by several families live here, with the facts about tie groups
every hook uses (:class:`Context`); a family's own hooks (AP's, RR's, Success's,
Bpref's) live in its module of :mod:`tiecore.measures`.

Every measure is ``offset + scale * S / denominator`` with ``S`` a head sum of
per-position terms (:mod:`tiecore.engine.kernels`).  The groups are shuffled
independently and the terms of a group depend on its own order alone (the
relevant docs ``R`` and judged non-relevant docs ``A`` ranked above it are
counts, the same in every order), so ``S = sum_g S_g`` with independent ``S_g``
and ``Var S = sum_g Var S_g``.  A group has ``n`` docs, ``r`` relevant, ``m``
judged non-relevant, starts after ``t`` docs, and ``d = clip(cut - t, 0, n)``
of its slots count (``cut`` is the measure's cutoff and the depth); ``x_i``
flags a relevant doc at its 0-based position ``i``, a uniformly random
``r``-subset.

* Counts (P, R, F1, Rprec, SetP, SetR, SetF, NumRelRet): ``S_g`` relevant docs in
  ``d`` slots, hypergeometric: ``d r/n (1 - r/n) (n - d)/(n - 1)``.
* Document values (nDCG, DCG, CG, Judged, RBP): ``sum_i a_pi(i) w_i`` is a
  linear permutation statistic: ``sum (a - mean a)^2 sum (w - mean w)^2 / (n - 1)``.

The bounds are the values of the optimistic and pessimistic orders (relevant and
higher-valued docs first, or last, inside every group), which the tests check
against every ordering.  Binomial coefficients come from
:func:`tiecore.engine.binomial.log_choose` (numpy only: no scipy import slows a spread
down), probabilities down a group from running products.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine import profiles
from tiecore.engine.binomial import log_choose
from tiecore.engine.judgments import Judgments
from tiecore.engine.profiles import Divisor, Profile
from tiecore.engine.ranking import Ranking

if TYPE_CHECKING:
    from tiecore.engine.kernels import Plan


# ------------------------------------------------------------ shared group facts


@dataclass
class Context:
    """One ranking's tie groups with the facts every variance needs."""

    ranking: Ranking
    judgments: Judgments
    depth: int | None
    profile: Profile = field(init=False)
    _value_sums: dict = field(default_factory=dict, init=False)
    _tables: dict = field(default_factory=dict, init=False)  # per row or rank: shared
    _slots: dict = field(default_factory=dict, init=False)  # per group: this selection's

    def __post_init__(self) -> None:
        ranking = self.ranking
        self.profile = profiles.aware(ranking, self.judgments, self.depth)
        self.group_query = ranking.group_query
        self.t = ranking.offset
        self.n = ranking.size
        self.r = ranking.rel_count
        self.m = ranking.nonrel_count
        self.R = ranking.rel_before
        self.A = ranking.nonrel_before
        self.position = ranking.position
        self.group_start = ranking.group_start
        self.selected = None  # a selection's groups among all (None: all of them)
        self._root = self
        self._parent, self._picked = None, None  # a selection's context, and its groups there

    def weights(self, divisor: Divisor) -> np.ndarray:
        """Per row the multiplier ``1 / w(rank)`` of the rank weight (cached)."""
        key = ("weights", divisor.key)
        if key not in self._tables:
            self._tables[key] = divisor.inverse(self.ranking.rank)
        return self._tables[key]

    def slots(self, recipe: Plan) -> np.ndarray:
        """Per group, how many of its slots are above the cut: ``clip(cut - t, 0, n)``."""
        key = recipe.cut.tobytes()
        if key not in self._slots:
            if self._parent is not None and key in self._parent._slots:
                self._slots[key] = self._parent._slots[key][self._picked]
            else:
                d = recipe.cut[self.group_query] - self.t
                self._slots[key] = np.minimum(np.maximum(d, 0, out=d), self.n, out=d)
        return self._slots[key]

    def select(self, groups: np.ndarray) -> Context:
        """The same context restricted to some groups (indices into this one's groups).

        Per-row tables are shared (what a selection computes, the others reuse);
        per-group arrays and caches are taken at ``groups``.
        """
        out = copy.copy(self)
        for name in _PER_GROUP:
            setattr(out, name, getattr(self, name)[groups])
        out.selected = groups if self.selected is None else self.selected[groups]
        out._slots, out._parent, out._picked = {}, self, groups
        out._value_sums = {k: (a[groups], b[groups]) for k, (a, b) in self._value_sums.items()}
        return out

    def owner(self, rows: np.ndarray) -> np.ndarray:
        """Each row's group among this context's groups (-1 for a group left out)."""
        group = self.ranking.group[rows]
        if self.selected is None:
            return group
        index = np.full(len(self.ranking.group_start), -1, dtype=np.int64)
        index[self.selected] = np.arange(len(self.selected))
        return index[group]

    def hypergeom_pmf(self, k, total, good, draws) -> np.ndarray:
        """P(``k`` good in ``draws`` of ``total`` with ``good`` good): ``C(good, k)
        C(total - good, draws - k) / C(total, draws)``, for ``k`` in the support."""
        return np.exp(
            log_choose(good, k) + log_choose(total - good, draws - k) - log_choose(total, draws)
        )

    def values(self, key: str) -> np.ndarray:
        """Document value of every row for a document-value component (cached)."""
        if ("values", key) not in self._tables:
            part = profiles.COMPONENTS[key]
            self._tables["values", key] = part.value(self.ranking, self.judgments, slice(None))
        return self._tables["values", key]

    def value_sums(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """Per group ``sum a`` and ``sum (a - mean a)**2`` of its docs' values of ``key``.

        The squared deviations are summed in a second pass, not as ``sum a**2 -
        (sum a)**2 / n``, which cancels to 0 (or to ``inf - inf``) for unscaled
        exponential gains far above the group's other values.
        """
        if key not in self._value_sums:
            if self.selected is not None:
                total, spread = self._root.value_sums(key)
                self._value_sums[key] = (total[self.selected], spread[self.selected])
            else:
                a = self.values(key)
                total = group_sum(a, self.ranking)
                deviation = a - (total / np.maximum(self.n, 1))[self.ranking.group]
                self._value_sums[key] = (total, group_sum(deviation * deviation, self.ranking))
        return self._value_sums[key]

    def prefix(self, divisor: Divisor) -> np.ndarray:
        """``P(k) = sum_{j=1}^{k} 1 / w(j)`` for ``k = 0 .. longest ranking`` (cached)."""
        key = ("prefix", divisor.key)
        if key not in self._tables:
            rank = np.arange(1.0, int(self.ranking.counts.max(initial=0)) + 1)
            self._tables[key] = np.concatenate(([0.0], np.cumsum(divisor.inverse(rank))))
        return self._tables[key]

    def whole_sums(self, d: np.ndarray, key: tuple, table) -> tuple[np.ndarray, np.ndarray]:
        """Per-group sums of a group's whole rows, for the groups above the cut.

        ``table()`` gives such sums (rows of an array) for every group of the
        ranking from its full columns: cheaper than gathering the rows of each
        group when these groups hold a quarter of the rows or more, or when it is
        cached already.  Returns the sums (0 for other groups) and ``d`` with the
        groups so summed set to 0, which are left to sum over their heads.
        """
        whole = (d == self.n) & (d > 0)
        if key not in self._tables and 4 * int(self.n[whole].sum()) < len(self.ranking.rank):
            return np.zeros((1, len(d))), d
        if key not in self._tables:
            self._tables[key] = table()
        found = self._tables[key]
        found = found if self.selected is None else found[:, self.selected]
        return np.where(whole, found, 0.0), np.where(whole, 0, d)

    def head(self, d: np.ndarray) -> _Head:
        """The rows of every group's first ``d`` slots."""
        if self.selected is None and np.array_equal(d, self.n):
            every = np.arange(len(d))
            return _Head(slice(None), self.ranking.group, every, self.group_start, len(d))
        return _Head.of(self.group_start, d)


#: The per-group arrays of a :class:`Context`, taken at a selection's groups.
_PER_GROUP = ("group_query", "t", "n", "r", "m", "R", "A", "group_start")


@dataclass
class _Head:
    """Rows in the first ``d`` slots of each group, grouped for per-group sums."""

    rows: np.ndarray | slice
    owner: np.ndarray  # group of each row
    run_owner: np.ndarray  # the groups with rows
    run_start: np.ndarray  # their first row (in ``rows``)
    groups: int

    @classmethod
    def of(cls, group_start: np.ndarray, d: np.ndarray) -> _Head:
        owner, rows = expand(group_start, d)
        some = np.flatnonzero(d > 0)
        return cls(rows, owner, some, (np.cumsum(d) - d)[some], len(d))

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per group sum of ``values`` (one per head row)."""
        out = np.zeros(self.groups)
        if values.size:
            out[self.run_owner] = np.add.reduceat(values, self.run_start)
        return out


def expand(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``owner`` and ``starts[owner] + 0..lengths[owner]-1``, concatenated."""
    owner = np.repeat(np.arange(len(starts)), lengths)
    within = np.arange(owner.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return owner, starts[owner] + within


def group_sum(values: np.ndarray, ranking: Ranking) -> np.ndarray:
    return np.add.reduceat(values, ranking.group_start) if len(values) else values[:0]


# ------------------------------------------------------------------- variances


def var_count(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Relevant docs in ``d`` of ``n`` slots: ``d r (n - r) (n - d) / (n^2 (n - 1))``."""
    n, r = context.n.astype(np.float64), context.r.astype(np.float64)
    out = np.zeros_like(n)
    np.divide(d * r * (n - r) * (n - d), n * n * (n - 1), out=out, where=n > 1)
    return out


def var_linear(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Linear permutation statistic ``sum_i a_pi(i) w_i`` of each group.

    ``a`` the docs' values of a document-value component (gains, relevance,
    judged), ``w = 1 / w(rank)`` the rank weights of the group's slots, 0 below
    the cut: ``Var = sum (a - mean a)^2 * sum (w - mean w)^2 / (n - 1)``.
    """
    n = context.n.astype(np.float64)
    _, spread_a = context.value_sums(recipe.component)
    d = np.where(spread_a > 0, d, 0)  # groups of equal values add nothing
    weights = context.weights(recipe.divisor)
    spread_w, part = context.whole_sums(
        d, ("weight spread", recipe.divisor.key), lambda: _weight_spreads(context, weights)
    )
    head = context.head(part)  # the groups the cut falls inside (or all, when few)
    w = weights[head.rows]
    mean_w = head.sum(w) / n
    deviation = w - mean_w[head.owner]
    spread_w = spread_w[0] + head.sum(deviation * deviation) + (n - part) * mean_w * mean_w
    out = np.zeros_like(n)
    np.divide(spread_a * spread_w, n - 1, out=out, where=(n > 1) & (d > 0))
    return out


def _weight_spreads(context: Context, weights: np.ndarray) -> np.ndarray:
    """``sum (w - mean w)^2`` over the rows of every group of the ranking."""
    ranking = context.ranking
    mean = group_sum(weights, ranking) / np.maximum(ranking.size, 1)
    deviation = weights - mean[ranking.group]
    return group_sum(deviation * deviation, ranking)[None, :]


# ---------------------------------------------------------------------- bounds
#
# Each bounds hook gives per group the lowest and highest head sum of its terms
# (pessimistic and optimistic orders: the group's relevant docs, or largest
# values, last or first, as ``Ranking.build(..., tiebreak=...)`` orders them),
# as ``(worst, best)``: sums of ``c_j / w(j)`` over the group's slots above the
# cut (0 for a group with none).  With ``r`` relevant docs in slots ``0..r-1``
# (best) or ``n-r..n-1`` (worst), ``top = min(d, r)`` or ``bottom = max(0, d -
# (n - r))`` of them are above the cut.


def top_bottom(context: Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group ``top = min(d, r)`` and ``bottom = max(0, d - (n - r))``: the relevant
    docs above the cut in the best and in the worst order."""
    gap = context.n - context.r
    return np.minimum(d, context.r), np.maximum(d - gap, 0)


def bounds_count(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """Relevant docs above the cut: ``bottom`` and ``top``."""
    top, bottom = top_bottom(context, d)
    return bottom * 1.0, top * 1.0


def bounds_linear(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """Document values sorted descending (best) or ascending (worst) into the slots.

    The rank weights ``1 / w`` do not increase with the rank, so by the
    rearrangement inequality these are the extremes of ``sum_i a_pi(i) / w_i``.
    Only the nonzero values are sorted (most docs are unjudged, gain 0): a group
    with ``z`` zeros puts its ``j``-th smallest nonzero value in slot ``j`` if it
    is negative, else ``z + j``; its ``j``-th largest in slot ``j`` if positive,
    else ``z + j``.
    """
    rows = _sorted_nonzero(context, recipe.component)
    owner = context.owner(rows)
    rows, owner = rows[owner >= 0], owner[owner >= 0]
    values = context.values(recipe.component)[rows]
    count = np.bincount(owner, minlength=len(d))  # nonzero values per group
    zeros = (context.n - count)[owner]
    up = np.arange(len(rows)) - (np.cumsum(count) - count)[owner]  # j-th smallest nonzero
    down = count[owner] - 1 - up  # j-th largest
    negative = values < 0
    out = []
    for slot in (np.where(negative, up, up + zeros), np.where(negative, down + zeros, down)):
        head = slot < d[owner]  # worst (ascending), then best (descending)
        rank = context.t[owner[head]] + slot[head] + 1
        terms = recipe.divisor.weigh(values[head], rank)
        out.append(np.bincount(owner[head], weights=terms, minlength=len(d)))
    return out[0], out[1]


def _sorted_nonzero(context: Context, key: str) -> np.ndarray:
    """The rows with a nonzero value of component ``key``, by group, then by value
    ascending (every group's; cached)."""
    if ("nonzero", key) not in context._tables:
        values = context.values(key)
        rows = np.flatnonzero(values)
        order = np.lexsort((values[rows], context.ranking.group[rows]))
        context._tables["nonzero", key] = rows[order]
    return context._tables["nonzero", key]


# ---------------------------------------------------------------- distributions
#
# Distribution hooks give one query's head sum ``S`` as ``(values, probability)``.


def count_distribution(context: Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relevant docs above the cut: whole groups fixed, the cut group hypergeometric."""
    n, r = context.n, context.r
    fixed = r[d == n].sum()
    cut = np.flatnonzero((d > 0) & (d < n))
    if cut.size == 0:
        return np.array([float(fixed)]), np.ones(1)
    (g,) = cut  # one query: the cut falls inside at most one group
    support = np.arange(max(0, d[g] - (n[g] - r[g])), min(d[g], r[g]) + 1)
    chance = context.hypergeom_pmf(support, n[g], r[g], d[g])
    return (fixed + support).astype(np.float64), chance


#: A spread ``max - min`` at most this share of ``max(|min|, |max|)`` (1,024 units in
#: the last place) is rounding's, not the orderings': see :func:`within_bounds`.
FLAT = 2.0**-42


def within_bounds(spread: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Bounds that hold the value, and a variance of 0 exactly where they meet.

    The mean over orderings lies in ``[min, max]``, but value, min, max and variance are
    float sums taken in different orders: where no order moves the value (``min = value
    = max`` in exact arithmetic, variance 0) min and max may differ by rounding (up to
    2e-14 on real runs, a hundred units in the last place) and the variance come out a
    tiny positive number.  So a spread of at most :data:`FLAT` of the bounds' magnitude
    is none: variance 0 and ``min = max = value``;
    elsewhere the bounds widen to the value (by no more than rounding), so that
    ``min <= value <= max`` holds exactly as printed and variance 0 holds exactly when
    ``min = max``.  The value stays bit for bit the aware value of
    the evaluation; the summary's means keep the order (rounded sums are
    monotone).  A true spread that small (2e-13 of the value: RBP's terms past rank 130
    at p = 0.8) is far below what any printed digit shows.
    """
    value = np.asarray(spread["value"], dtype=np.float64)
    low = np.minimum(np.asarray(spread["min"], dtype=np.float64), value)
    high = np.maximum(np.asarray(spread["max"], dtype=np.float64), value)
    scale = np.maximum(np.abs(low), np.abs(high))
    flat = high - low <= FLAT * scale
    var = np.asarray(spread["var"], dtype=np.float64)
    # a real spread whose variance underflowed (a rare order far off): positive still
    var = np.where(flat, 0.0, np.where(var > 0, var, np.finfo(np.float64).tiny))
    return {
        **spread,
        "value": value,
        "var": var,
        "min": np.where(flat, value, low),
        "max": np.where(flat, value, high),
    }

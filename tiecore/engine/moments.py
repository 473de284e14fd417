"""Per tie group: the variance, bounds and distributions of a measure's head sum.

The variance, bounds and distribution hooks of :mod:`tiecore.measures.registry` live
here, with the facts about tie groups they share (:class:`Context`).

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

* P, R, F1, Rprec: ``S_g`` relevant docs in ``d`` slots, hypergeometric:
  ``d r/n (1 - r/n) (n - d)/(n - 1)``.
* Success: Bernoulli on the first group holding a relevant doc.
* RR: ``E[1/J^2] - E[1/J]^2`` for the first relevant rank ``J`` (0 past the cut).
* Document values (nDCG, DCG, CG, Judged, RBP): ``sum_i a_pi(i) w_i`` is a
  linear permutation statistic: ``sum (a - mean a)^2 sum (w - mean w)^2 / (n - 1)``.
* AP: ``S_g = sum_i w_i x_i (R + 1 + sum_{j<i} x_j)``, a quadratic form in the
  ``x``; its second moment needs ``E[x_i x_j ...] = r^(k) / n^(k)`` (falling
  factorials) for 1 to 4 distinct positions, and per-group sums of the weights.
* Bpref: ``S_g = sum_{relevant u above the cut} f(A + b_u)`` with
  ``f(y) = 1 - min(y, R*) / min(N, R*)``.  Given ``K`` relevant and ``L`` judged
  non-relevant docs above the cut, each ``b_u`` is uniform on ``0..L`` and a pair
  ``(b_u, b_v)`` is uniform on ``0 <= x <= y <= L``; ``L`` is hypergeometric and
  ``K | L`` too, which gives ``E[S_g^2]`` as one sum over ``L``.

The bounds are the values of the optimistic and pessimistic orders (relevant and
higher-valued docs first, or last, inside every group), which the tests check
against every ordering.  Binomial coefficients come from
:func:`tiecore.engine.binomial.log_choose` (numpy only: no scipy import slows a spread
down), probabilities down a group from running products.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine import profiles
from tiecore.engine.binomial import log_choose
from tiecore.engine.judgments import Judgments
from tiecore.engine.profiles import RANK, Divisor, Profile
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
        num_rel = self.judgments.num_rel
        # Bpref's f(y) = 1 - min(y, cap) / scale per query; trec_eval's 1 when y = 0
        self.cap = num_rel[self.group_query]
        self.bpref_scale = np.maximum(profiles.bpref_denominator(ranking, self.judgments), 1.0)[
            self.group_query
        ]

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

    def bpref_term(self, judged_above: np.ndarray) -> np.ndarray:
        """Per group :func:`tiecore.engine.profiles.bpref_term` of ``judged_above``."""
        return profiles.bpref_term(judged_above, self.cap, self.bpref_scale)

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
_PER_GROUP = ("group_query", "t", "n", "r", "m", "R", "A", "group_start", "cap", "bpref_scale")


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


def first_groups(context: Context) -> np.ndarray:
    """Per query, the group holding its first relevant doc (boolean per group)."""
    return (context.R == 0) & (context.r > 0)


def miss_probability(context: Context, d: np.ndarray) -> np.ndarray:
    """P(no relevant doc in the first ``d`` slots) of first groups, 0 elsewhere.

    ``C(n - r, d) / C(n, d)``; 1 when ``d = 0``, 0 when ``d > n - r``.  Taken as the
    running product ``prod_{i<d} (n-r-i) / (n-i)``, each factor rounded once: a
    difference of ``log k!`` loses 10^-11 already at ``n = 2000``.
    """
    n, r = context.n, context.r
    live = np.flatnonzero(first_groups(context) & (d > 0) & (d <= n - r))
    out = np.where(first_groups(context) & (d == 0), 1.0, 0.0)
    length = d[live].astype(np.int64)
    owner, i = expand(np.zeros(live.size, np.int64), length)
    factor = (n - r)[live][owner] - i
    factor = factor / (n[live][owner] - i)
    ends = np.cumsum(length)
    out[live] = profiles._segment_products(factor, ends - length)[ends - 1]
    return out


def var_success(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Bernoulli: ``q (1 - q)`` with ``q`` the chance of no relevant doc above the cut."""
    q = miss_probability(context, d)
    return np.where(first_groups(context), q * (1.0 - q), 0.0)


def var_rr(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """``E[W^2] - E[W]^2``, ``W = 1/rank`` of the first relevant doc (0 past the cut).

    The first relevant doc sits at position ``p`` with the aware profile's
    probability ``C(n-1-p, r-1) / C(n, r)``; only the first group can move it.
    """
    first = first_groups(context) & (context.r < context.n)
    reach = np.where(first, np.minimum(d, context.n - context.r + 1), 0)
    owner, rows = expand(context.group_start, reach)
    w = 1.0 / context.ranking.rank[rows]
    chance = context.profile.component("first")[rows]
    size = len(context.n)
    mean = np.bincount(owner, weights=chance * w, minlength=size)
    square = np.bincount(owner, weights=chance * w * w, minlength=size)
    return np.where(first, square - mean * mean, 0.0)


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


def _falling_ratios(r: np.ndarray, n: np.ndarray, k: int) -> list[np.ndarray]:
    """``r (r-1) ... (r-j+1) / (n (n-1) ... (n-j+1))`` for ``j = 1..k``: P(``j`` given
    slots all relevant)."""
    top = np.ones(len(r))
    bottom = np.ones(len(r))
    out = []
    for j in range(k):
        top *= np.maximum(r - j, 0)
        bottom *= np.maximum(n - j, 1)
        out.append(np.where(n >= j + 1, top / bottom, 0.0))
    return out


def var_ap(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Variance of the AP head sum ``S = (R+1) sum_i w_i x_i + sum_{j<i} w_i x_i x_j``.

    With ``w_i = 1/rank`` above the cut (0 below), ``T = sum_i i w_i``,
    ``V_m = m w_m + sum_{i>m} w_i`` (the weight of the pairs holding ``m``) and
    ``mu_k`` the falling-factorial ratios, the first two moments of ``S`` are
    ``E S = (R+1) mu_1 sum w + mu_2 T`` and ``E S^2 = E A^2 + 2 E AB + E B^2``:
    ``E A^2 = (R+1)^2 (mu_1 sum w^2 + mu_2 ((sum w)^2 - sum w^2))``,
    ``E AB = (R+1) (mu_3 T sum w + (mu_2 - mu_3) (sum i w^2 + ((sum w)^2 - sum w^2)/2))``,
    ``E B^2 = mu_4 T^2 + (mu_3 - mu_4) (sum V^2 - sum i w^2) + (mu_2 - mu_3) sum i w^2``
    (pairs of pairs sharing 0, 1 or 2 positions).
    """
    n, r = context.n.astype(np.float64), context.r.astype(np.float64)
    live = np.where((context.r > 0) & (context.r < context.n), d, 0)
    sums, part = context.whole_sums(live, ("ap sums",), lambda: _ap_sums(context))
    head = context.head(part)  # the groups the cut falls inside (or all, when few)
    rank = context.ranking.rank[head.rows]
    cut = (context.t + d)[head.owner]
    sums = sums + _ap_sums(context, head.rows, rank, cut, head.sum)
    sum_w, sum_w2, big_t, sum_iw2, sum_v2 = sums
    mu1, mu2, mu3, mu4 = _falling_ratios(r, n, 4)
    c = context.R + 1.0
    pairs = sum_w * sum_w - sum_w2
    e_a2 = c * c * (mu1 * sum_w2 + mu2 * pairs)
    e_ab = c * (mu3 * big_t * sum_w + (mu2 - mu3) * (sum_iw2 + pairs / 2))
    e_b2 = mu4 * big_t * big_t + (mu3 - mu4) * (sum_v2 - sum_iw2) + (mu2 - mu3) * sum_iw2
    mean = c * mu1 * sum_w + mu2 * big_t
    return e_a2 + 2 * e_ab + e_b2 - mean * mean


def _ap_sums(context: Context, rows=None, rank=None, cut=None, total=None) -> np.ndarray:
    """``sum w, sum w^2, T = sum i w, sum i w^2, sum V^2`` (:func:`var_ap`) per group,
    over ``rows`` (summed by ``total``) whose groups end at rank ``cut``; by default
    over every row of the ranking, each group whole."""
    ranking = context.ranking
    if rows is None:
        rows, rank = slice(None), ranking.rank
        cut = (ranking.offset + ranking.size)[ranking.group]
        total = partial(group_sum, ranking=ranking)
    i = context.position[rows].astype(np.float64)
    w = 1.0 / rank
    iw = i * w
    harmonic = context.prefix(RANK)
    v = iw + harmonic[cut] - harmonic[rank]  # + sum_{i>m} w_i
    return np.stack([total(x) for x in (w, w * w, iw, iw * w, v * v)])


def _sum_min_sq(y: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``sum_{z=0}^{y} min(z, cap)**2`` (0 for ``y < 0``)."""
    low = np.clip(y, 0, cap).astype(np.float64)
    tail = np.maximum(y - cap, 0) * cap.astype(np.float64) ** 2
    return np.where(y < 0, 0.0, low * (low + 1) * (2 * low + 1) / 6 + tail)


def _bpref_moments(k1, k2, ell, a, cap, scale) -> tuple[np.ndarray, np.ndarray]:
    """``E[S | L]`` and ``E[S^2 | L]`` of a group's Bpref terms.

    ``k1 = E[K | L]``, ``k2 = E[K (K-1) | L]`` for ``K`` relevant and ``L = ell``
    judged non-relevant docs above the cut, after ``a`` judged non-relevant
    docs above the group.  With ``F1 = sum_{x=0}^{L} f(a + x)`` and ``F2`` the
    same of ``f^2``: ``E[S | K, L] = K F1 / (L + 1)`` and
    ``E[S^2 | K, L] = K F2 / (L + 1) + K (K - 1) (F1^2 + F2) / ((L + 1)(L + 2))``.
    """
    mins = profiles.sum_min(a + ell, cap) - profiles.sum_min(a - 1, cap)
    squares = _sum_min_sq(a + ell, cap) - _sum_min_sq(a - 1, cap)
    count = ell + 1.0
    f1 = count - mins / scale
    f2 = count - 2 * mins / scale + squares / (scale * scale)
    mean = k1 * f1 / count
    second = k1 * f2 / count + k2 * (f1 * f1 + f2) / (count * (count + 1))
    return mean, second


def var_bpref(context: Context, d: np.ndarray, recipe: Plan) -> np.ndarray:
    """Variance of a group's Bpref terms; see :func:`_bpref_moments`.

    Whole groups above the cut have ``K = r`` and ``L = m``.  In the group the
    depth cuts, ``L ~ Hypergeom(n, m, d)`` and ``K | L ~ Hypergeom(n - m, r, d - L)``:
    one term per possible ``L``.
    """
    n, r, m = context.n, context.r, context.m
    whole = (d == n) & (r > 0) & (r < n) & (m > 0)
    out = np.zeros(len(n))
    mean, second = _bpref_moments(
        r[whole], r[whole] * (r[whole] - 1.0), m[whole],
        context.A[whole], context.cap[whole], context.bpref_scale[whole],
    )  # fmt: skip
    out[whole] = second - mean * mean
    cut = np.flatnonzero((d > 0) & (d < n) & (r > 0))
    if cut.size == 0:
        return out
    low = np.maximum(0, d[cut] - (n[cut] - m[cut]))
    high = np.minimum(d[cut], m[cut])
    owner, ell = expand(low, high - low + 1)
    g = cut[owner]
    chance = context.hypergeom_pmf(ell, n[g], m[g], d[g])
    rest, draws = (n[g] - m[g]).astype(np.float64), (d[g] - ell).astype(np.float64)
    rg = r[g].astype(np.float64)
    k1 = draws * rg / rest
    k2 = np.zeros_like(k1)
    np.divide(draws * (draws - 1) * rg * (rg - 1), rest * (rest - 1), out=k2, where=rest > 1)
    mean, second = _bpref_moments(k1, k2, ell, context.A[g], context.cap[g], context.bpref_scale[g])
    mean = np.bincount(owner, weights=chance * mean, minlength=cut.size)
    second = np.bincount(owner, weights=chance * second, minlength=cut.size)
    out[cut] = second - mean * mean
    return out


# ---------------------------------------------------------------------- bounds
#
# Each bounds hook gives per group the lowest and highest head sum of its terms
# (pessimistic and optimistic orders: the group's relevant docs, or largest
# values, last or first, as ``Ranking.build(..., tiebreak=...)`` orders them),
# as ``(worst, best)``: sums of ``c_j / w(j)`` over the group's slots above the
# cut (0 for a group with none).  With ``r`` relevant docs in slots ``0..r-1``
# (best) or ``n-r..n-1`` (worst), ``top = min(d, r)`` or ``bottom = max(0, d -
# (n - r))`` of them are above the cut.


def _top_bottom(context: Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gap = context.n - context.r
    return np.minimum(d, context.r), np.maximum(d - gap, 0)


def bounds_count(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """Relevant docs above the cut: ``bottom`` and ``top``."""
    top, bottom = _top_bottom(context, d)
    return bottom * 1.0, top * 1.0


def bounds_ap(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """``sum_{i<k} (R + 1 + i) / (t + 1 + i) = k + (R - t) (P(t + k) - P(t))``."""
    t, big_r, gap = context.t, context.R, context.n - context.r
    top, bottom = _top_bottom(context, d)
    harmonic = context.prefix(RANK)
    best = top + (big_r - t) * (harmonic[t + top] - harmonic[t])
    worst = bottom + (big_r - gap - t) * (harmonic[t + d] - harmonic[t + d - bottom])
    return worst * 1.0, best * 1.0


def bounds_first(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """The first relevant doc at the group's first slot, or after its ``n - r`` others."""
    t, gap = context.t, context.n - context.r
    top, bottom = _top_bottom(context, d)
    lead = (context.r > 0) & (context.R == 0)
    best = recipe.divisor.weigh((lead & (top > 0)) * 1.0, t + 1.0)
    worst = recipe.divisor.weigh((lead & (bottom > 0)) * 1.0, t + gap + 1.0)
    return worst, best


def bounds_bpref(context: Context, d: np.ndarray, recipe: Plan) -> tuple:
    """Relevant docs above (best) or below (worst) the group's judged non-relevant ones."""
    top, bottom = _top_bottom(context, d)
    best = top * context.bpref_term(context.A)
    worst = bottom * context.bpref_term(context.A + context.m)
    return worst * 1.0, best * 1.0


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


def first_rank_distribution(context: Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``1/rank`` of the first relevant doc (0 when past the cut or never)."""
    first = np.flatnonzero(first_groups(context))
    if first.size == 0:
        return np.zeros(1), np.ones(1)
    (g,) = first
    rows = context.group_start[g] + np.arange(context.n[g] - context.r[g] + 1)
    rank = context.ranking.rank[rows]
    values = np.where(rank <= context.t[g] + d[g], 1.0 / rank, 0.0)
    return values, context.profile.component("first")[rows]


def success_distribution(context: Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bernoulli: a relevant doc above the cut or not."""
    hit = np.where(first_groups(context), 1.0 - miss_probability(context, d), 0.0).sum()
    return np.array([0.0, 1.0]), np.array([1.0 - hit, hit])

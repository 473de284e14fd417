"""Per-position components, in each mode, from which every measure is a head sum.

For one ordering of a ranked list, every measure of :mod:`tiecore.measures.registry` is a
head sum ``sum_{j <= k} c_j / w_j`` of one of these per-position components ``c``
(the rank weight ``w`` is the measure's :class:`Divisor`):

===============  =========================================  ==========================
component        oblivious (one ordering)                   aware (mean over orderings)
===============  =========================================  ==========================
``rel``          ``rel_j``                                  ``r/n``
``judged``       ``[doc j is in the qrels]``                ``(judged in group) / n``
``gain:G``       ``g(level_j)`` (:data:`GAINS`)             ``(sum of the group's gains) / n``
``ap``           ``rel_j * (relevant in 1..j)``             ``r/n (R + 1 + p (r-1)/(n-1))``
``first``        ``[j is the first relevant rank]``          ``C(n-1-p, r-1) / C(n, r)`` (R = 0)
``bpref``        ``rel_j (1 - min(N_j, R*) / min(N, R*))``  ``r/n E_b[...]``, see below
===============  =========================================  ==========================

Here ``p`` is the 0-based position inside the tie group, ``n, r`` its size and
relevant count, ``R`` the relevant docs ranked above the group and ``N_j`` the
judged non-relevant docs above rank ``j``.  Every aware entry is the expected
value of the oblivious entry under a uniformly random order of each group, so
by linearity every aware measure is the mean over all orderings (McSherry &
Najork 2008, with their AP and RR formulas written per position).  The first
three are *document values* (a function of the doc alone, wherever it sits);
the others depend on what is ranked above.  ``gain:linear`` and ``gain:exp``
are scaled per query (exact for any level, for nDCG's ratio);
``gain:exp_unscaled`` is ``2**level - 1`` as is, for the unnormalised sums.

Each component is one :class:`Component` of :data:`COMPONENTS`, with its three
modes side by side: ``oblivious`` and ``aware`` give one value per row of a
:class:`~tiecore.engine.ranking.Ranking`; ``sampled`` one per drawn doc of a
:class:`Draws` (samples x columns, :mod:`tiecore.engine.sampling`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tiecore.engine.judgments import Judgments, gain_of
from tiecore.engine.ranking import Ranking

# nDCG's, DCG's, CG's and RBP's gains of a qrels level (GAINS, declared in _validation):
# ``linear`` the level, ``exp`` ``2**level - 1`` (0 for levels <= 0 and unjudged docs).
from tiecore.options import GAINS as GAINS

# ------------------------------------------------------------------ rank weights


@dataclass(frozen=True)
class Divisor:
    """A rank weight ``w(j)``: a measure sums ``c_j / w(j)`` over ranks ``j``.

    ``one`` (``w = 1``), ``rank`` (``w = j``), ``log2`` (``w = log2(j + 1)``),
    and ``geometric`` with persistence ``p`` (RBP: ``1 / w = (1 - p) p^(j-1)``).
    Every ``1 / w`` is positive and non-increasing in ``j`` (so the best order
    of a tie group puts its largest values first).
    """

    name: str
    p: float | None = None

    @property
    def key(self) -> tuple:
        """A hashable identity (name and parameter)."""
        return (self.name, self.p)

    def weigh(self, values: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """``values / w(rank)``, divided as trec_eval divides (``one`` returns ``values``)."""
        if self.name == "one":
            return values
        if self.name == "geometric":
            return values * self.inverse(rank)
        return values / self.divisor(rank)

    def divisor(self, rank: np.ndarray) -> np.ndarray:
        """``w(rank)``."""
        rank = np.asarray(rank, dtype=np.float64)
        if self.name == "one":
            return np.ones_like(rank)
        if self.name == "rank":
            return rank
        if self.name == "log2":
            return np.log2(rank + 1.0)
        return 1.0 / self.inverse(rank)

    def inverse(self, rank: np.ndarray) -> np.ndarray:
        """``1 / w(rank)``, the multiplier (``(1 - p) p^(j-1)`` for ``geometric``)."""
        rank = np.asarray(rank, dtype=np.float64)
        if self.name == "geometric":
            return (1.0 - self.p) * np.power(self.p, rank - 1.0)
        return 1.0 / self.divisor(rank)


#: ``w = 1``: counts (P, R, F1, Rprec, Success, Bpref, CG, Judged).
ONE = Divisor("one")
#: ``w = j``: AP's precision at ``j``, RR's reciprocal rank.
RANK = Divisor("rank")
#: ``w = log2(j + 1)``: DCG's discount.
LOG2 = Divisor("log2")


def geometric(p: float) -> Divisor:
    """RBP's weight with persistence ``0 < p < 1``: ``1 / w(j) = (1 - p) p^(j-1)``."""
    return Divisor("geometric", float(p))


# ------------------------------------------------------------------------- bpref


def bpref_denominator(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    """Per-query ``min(N, R)``; ``R`` relevant and ``N`` judged non-relevant qrels docs."""
    return np.minimum(judgments.num_nonrel, judgments.num_rel).astype(np.float64)


def bpref_term(nonrel_above: np.ndarray, num_rel: np.ndarray, denominator: np.ndarray):
    """trec_eval's Bpref term of a relevant doc: ``1 - min(N_j, R) / min(N, R)``.

    ``N_j`` judged non-relevant docs above it, ``R`` relevant and ``N`` judged
    non-relevant docs of the query; 1 when ``N = 0`` (then ``N_j = 0`` too).
    """
    return 1.0 - np.minimum(nonrel_above, num_rel) / np.maximum(denominator, 1.0)


# --------------------------------------------------------------------- components


@dataclass(frozen=True)
class Component:
    """One per-position component in the three modes.

    ``oblivious(ranking, judgments)`` and ``aware(ranking, judgments, depth)``
    give one float per row; ``sampled(draws)`` one per drawn doc
    ``(samples, columns)``.  ``value(ranking, judgments, rows)``, for document
    values only, gives the value of the docs at ``rows`` (any shape), which
    the three modes, the variance and the bounds of a linear statistic use.
    """

    key: str
    oblivious: Callable
    aware: Callable
    sampled: Callable
    value: Callable | None = None

    @property
    def doc_value(self) -> bool:
        """Whether the component is a function of the doc alone (a linear statistic)."""
        return self.value is not None


def doc_component(key: str, value: Callable) -> Component:
    """A document-value component: the same value wherever the doc is ranked."""

    def aware(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
        values = value(ranking, judgments, slice(None))
        with np.errstate(over="ignore"):  # unscaled exp gains past float64: inf
            totals = np.add.reduceat(values, ranking.group_start) if len(values) else values
        return (totals / ranking.size)[ranking.group]

    return Component(
        key,
        oblivious=lambda ranking, judgments: value(ranking, judgments, slice(None)),
        aware=aware,
        sampled=lambda draws: value(draws.ranking, draws.judgments, draws.doc),
        value=value,
    )


def _rel_value(ranking: Ranking, judgments: Judgments, rows) -> np.ndarray:
    return ranking.rel[rows].astype(np.float64)


def _judged_value(ranking: Ranking, judgments: Judgments, rows) -> np.ndarray:
    return ranking.judged[rows].astype(np.float64)


def _gain_value(gain: str) -> Callable:
    def value(ranking: Ranking, judgments: Judgments, rows) -> np.ndarray:
        shift = judgments.gain_shift(gain)[ranking.query[rows]]
        return np.where(ranking.judged[rows], gain_of(ranking.level[rows], gain, shift), 0.0)

    return value


def _unscaled_exp_value(ranking: Ranking, judgments: Judgments, rows) -> np.ndarray:
    """``2**level - 1`` as is: past level 1023 it is ``inf`` (for unnormalised sums)."""
    with np.errstate(over="ignore"):
        return np.where(ranking.judged[rows], gain_of(ranking.level[rows], "exp"), 0.0)


def row_gains(ranking: Ranking, judgments: Judgments, gain: str) -> np.ndarray:
    """Each row's gain, 0 for an unjudged doc (exp gains scaled per query, see
    :func:`tiecore.engine.judgments.gain_of`)."""
    return _gain_value(gain)(ranking, judgments, slice(None))


# ---------------------------------------------------------------- oblivious parts


def _inclusive_within(flags: np.ndarray, before_query: np.ndarray) -> np.ndarray:
    """Running count of ``flags`` within each query (integers, exact)."""
    total = np.cumsum(flags, dtype=np.int64)
    return total - (total[before_query] - flags[before_query])


def _cum_rel(ranking: Ranking) -> np.ndarray:
    return _inclusive_within(ranking.rel, ranking.starts[ranking.query])


def _ap_oblivious(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    return ranking.rel * _cum_rel(ranking).astype(np.float64)


def _first_oblivious(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    return (ranking.rel & (_cum_rel(ranking) == 1)).astype(np.float64)


def _bpref_oblivious(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    before_query = ranking.starts[ranking.query]
    nonrel_above = _inclusive_within(ranking.nonrel, before_query) - ranking.nonrel
    q = ranking.query
    term = bpref_term(nonrel_above, judgments.num_rel[q], bpref_denominator(ranking, judgments)[q])
    return np.where(ranking.rel, term, 0.0)


# ------------------------------------------------------------------- aware parts


def _ap_aware(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    g = ranking.group
    n = ranking.size.astype(np.float64)
    r = ranking.rel_count.astype(np.float64)
    p = ranking.position.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        pair = np.where(n > 1, (r - 1) / (n - 1), 0.0)[g]
    return (r / n)[g] * (ranking.rel_before[g] + 1 + p * pair)


def _first_aware(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """P(first relevant doc at this position): only in the first group holding one.

    With ``n`` docs and ``r`` relevant ones in random order the first relevant
    one is at 0-based position ``p`` with probability ``C(n-1-p, r-1) / C(n, r)``,
    taken as the running product ``r/n * prod_{1<=i<=p} (n-r-i+1) / (n-i)`` down the
    group (:func:`_segment_products`): each factor is rounded once, so the error is
    a few ulp even in groups of 10^5 docs, where a difference of ``log k!`` of about
    10^6 would lose 10^-10.
    """
    g = ranking.group
    n, r = ranking.size[g], ranking.rel_count[g]
    p = ranking.position
    live = (ranking.rel_before[g] == 0) & (r > 0) & (p <= n - r)
    out = np.zeros(len(g))
    n, r, p = n[live], r[live], p[live]
    with np.errstate(divide="ignore", invalid="ignore"):  # p = 0 rows take r/n
        factor = np.where(p == 0, r / n, (n - r - p + 1) / (n - p))
    out[live] = _segment_products(factor, np.flatnonzero(p == 0))
    return out


def _segment_products(factor: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running products of ``factor`` restarted at each of ``starts`` (the first is 0).

    Segments of like length (up to the next power of two) are one padded
    ``cumprod`` along rows: at most ~20 passes, at most twice the memory.

    >>> _segment_products(np.array([2.0, 3.0, 0.5, 4.0, 5.0, 0.5]), np.array([0, 3, 4])).tolist()
    [2.0, 6.0, 3.0, 4.0, 5.0, 2.5]
    """
    out = np.empty(len(factor))
    if not len(factor):
        return out
    length = np.diff(np.r_[starts, len(factor)])
    bucket = np.ceil(np.log2(length)).astype(np.int64)
    for b in np.unique(bucket):
        chosen = np.flatnonzero(bucket == b)
        width = int(length[chosen].max())
        step = np.arange(width)
        inside = step[None, :] < length[chosen][:, None]
        index = np.where(inside, starts[chosen][:, None] + step[None, :], 0)
        products = np.cumprod(np.where(inside, factor[index], 1.0), axis=1)
        out[index[inside]] = products[inside]
    return out


def sum_min(y: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``sum_{x=0}^{y} min(x, cap)`` in closed form (0 for ``y < 0``)."""
    y = y.astype(np.float64)
    low = np.minimum(y, cap)
    return np.where(y < 0, 0.0, low * (low + 1) / 2 + np.maximum(y - cap, 0) * cap)


def _aware_bpref(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """Expected Bpref term per position.

    A relevant doc of a group with ``m`` judged non-relevant docs is preceded by
    ``b`` of them, ``b`` uniform on ``0..m``; so the group adds
    ``r (1 - sum_b min(N_g + b, R) / ((m+1) min(N, R)))`` spread evenly over
    its ``n`` positions.  A group cut by ``depth`` needs the term at each
    position ``p``: ``b`` is then hypergeometric (``p`` draws from ``n - 1``).
    """
    q = ranking.group_query
    num_rel = judgments.num_rel[q].astype(np.float64)
    denom = np.minimum(judgments.num_nonrel[q], judgments.num_rel[q]).astype(np.float64)
    a, m = ranking.nonrel_before, ranking.nonrel_count
    mean_min = (sum_min(a + m, num_rel) - sum_min(a - 1, num_rel)) / (m + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(denom > 0, 1.0 - mean_min / denom, 1.0)
    per_row = (ranking.rel_count * term / ranking.size)[ranking.group]
    if depth is not None:
        cut = (
            (ranking.offset < depth)
            & (ranking.offset + ranking.size > depth)
            & (ranking.rel_count > 0)
        )
        rows = np.flatnonzero(cut[ranking.group] & (ranking.rank <= depth))
        if rows.size:
            per_row[rows] = _bpref_at_position(ranking, judgments, rows)
    return per_row


def _bpref_at_position(ranking: Ranking, judgments: Judgments, rows: np.ndarray) -> np.ndarray:
    """Expected Bpref term at given positions: ``r/n (1 - E[min(N_g + X, R)] / min(N, R))``.

    ``X ~ Hypergeom(n - 1, m, p)`` counts the judged non-relevant docs of the
    group ahead of a relevant doc at 0-based position ``p``.
    """
    g = ranking.group[rows]
    q = ranking.query[rows]
    n, m, r = ranking.size[g], ranking.nonrel_count[g], ranking.rel_count[g]
    a, p = ranking.nonrel_before[g], ranking.position[rows]
    cap = judgments.num_rel[q]
    denom = np.minimum(judgments.num_nonrel[q], cap).astype(np.float64)
    support = np.minimum(p, m)
    # E[min(a + X, cap)] = a + E[X] - E[(a + X - cap)+]; the last part only where a + X can pass cap
    expected = a + np.where(n > 1, p * m / np.maximum(n - 1, 1), 0.0)
    over = np.flatnonzero(a + support > cap)
    if over.size:
        from scipy import stats  # only here: importing scipy.stats takes seconds

        width = support[over] + 1
        owner = np.repeat(over, width)
        x = np.arange(width.sum()) - np.repeat(np.cumsum(width) - width, width)
        pmf = stats.hypergeom.pmf(x, n[owner] - 1, m[owner], p[owner])
        excess = np.maximum(a[owner] + x - cap[owner], 0) * pmf
        expected[over] -= np.bincount(
            np.searchsorted(over, owner), weights=excess, minlength=over.size
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(denom > 0, 1.0 - expected / denom, 1.0)
    return r / n * term


# ------------------------------------------------------------------ sampled parts


@dataclass
class Draws:
    """One batch of sampled orders: the drawn docs in their drawn order.

    ``doc`` ``(samples, columns)``: inside each drawn group (``layout.compact``
    numbers them, columns contiguous), the rows in drawn order; ``layout`` is
    :class:`tiecore.engine.sampling._Layout`.  Counts above a doc add the group's own
    docs drawn before it to what is ranked above the group.
    """

    ranking: Ranking
    judgments: Judgments
    layout: object
    doc: np.ndarray
    _cache: dict = field(default_factory=dict)

    @property
    def query(self) -> np.ndarray:
        """Query of each column."""
        return self.ranking.query[self.layout.docs]

    def _within(self, flags: np.ndarray) -> np.ndarray:
        """Inclusive running count of ``flags`` (samples x columns) inside each group."""
        compact = self.layout.compact
        starts = np.flatnonzero(np.r_[True, compact[1:] != compact[:-1]])
        total = np.cumsum(flags, axis=1, dtype=np.int64)
        before = total[:, starts] - flags[:, starts]
        return total - before[:, compact]

    @property
    def cum_rel(self) -> np.ndarray:
        """Relevant docs ranked at or above each drawn doc."""
        if "cum_rel" not in self._cache:
            group = self.ranking.group[self.layout.docs]
            rel = self.ranking.rel[self.doc]
            self._cache["cum_rel"] = self._within(rel) + self.ranking.rel_before[group]
        return self._cache["cum_rel"]

    @property
    def nonrel_above(self) -> np.ndarray:
        """Judged non-relevant docs ranked above each drawn doc."""
        group = self.ranking.group[self.layout.docs]
        nonrel = self.ranking.nonrel[self.doc]
        return self._within(nonrel) - nonrel + self.ranking.nonrel_before[group]


def _ap_sampled(draws: Draws) -> np.ndarray:
    return draws.ranking.rel[draws.doc] * draws.cum_rel.astype(np.float64)


def _first_sampled(draws: Draws) -> np.ndarray:
    return (draws.ranking.rel[draws.doc] & (draws.cum_rel == 1)).astype(np.float64)


def _bpref_sampled(draws: Draws) -> np.ndarray:
    q = draws.query
    judgments = draws.judgments
    denominator = bpref_denominator(draws.ranking, judgments)[q]
    term = bpref_term(draws.nonrel_above, judgments.num_rel[q], denominator)
    return np.where(draws.ranking.rel[draws.doc], term, 0.0)


#: Every component by key; ``gain:linear`` and ``gain:exp`` for the gains of :data:`GAINS`.
COMPONENTS: dict[str, Component] = {
    "rel": doc_component("rel", _rel_value),
    "judged": doc_component("judged", _judged_value),
    **{f"gain:{gain}": doc_component(f"gain:{gain}", _gain_value(gain)) for gain in GAINS},
    "gain:exp_unscaled": doc_component("gain:exp_unscaled", _unscaled_exp_value),
    "ap": Component("ap", _ap_oblivious, _ap_aware, _ap_sampled),
    "first": Component("first", _first_oblivious, _first_aware, _first_sampled),
    "bpref": Component("bpref", _bpref_oblivious, _aware_bpref, _bpref_sampled),
}


# ------------------------------------------------------------------------ profiles


class Profile:
    """A ranking's components in one mode, computed on first use and kept.

    ``oblivious`` and ``aware`` profiles hold one value per row plus a trailing
    0 (length ``rows + 1``, so that every head-sum bound is a valid index);
    ``sampled`` ones ``(samples, columns)`` of a :class:`Draws`.
    """

    def __init__(
        self,
        mode: str,
        ranking: Ranking,
        judgments: Judgments,
        depth: int | None = None,
        draws: Draws | None = None,
    ) -> None:
        self.mode, self.ranking, self.judgments = mode, ranking, judgments
        self.depth, self.draws = depth, draws
        self._values: dict[str, np.ndarray] = {}

    def component(self, key: str) -> np.ndarray:
        """The values of component ``key`` (see :data:`COMPONENTS`)."""
        if key not in self._values:
            part = COMPONENTS[key]
            if self.mode == "sampled":
                self._values[key] = part.sampled(self.draws)
            elif self.mode == "aware":
                self._values[key] = _padded(part.aware(self.ranking, self.judgments, self.depth))
            else:
                self._values[key] = _padded(part.oblivious(self.ranking, self.judgments))
        return self._values[key]

    def __getattr__(self, name: str) -> np.ndarray:
        if name.startswith("_") or name not in COMPONENTS:
            raise AttributeError(name)
        return self.component(name)


def _padded(values: np.ndarray) -> np.ndarray:
    out = np.zeros(len(values) + 1)
    out[:-1] = values
    return out


def oblivious(ranking: Ranking, judgments: Judgments) -> Profile:
    """Components of the ranking's own order (its tie-break decides)."""
    return Profile("oblivious", ranking, judgments)


def aware(ranking: Ranking, judgments: Judgments, depth: int | None = None) -> Profile:
    """Expected components over all orderings of every tie group.

    ``depth`` (trec_eval ``-M``) matters only for Bpref, whose per-position
    term inside a group cut by the depth depends on the position.
    """
    return Profile("aware", ranking, judgments, depth)


def sampled(draws: Draws) -> Profile:
    """Oblivious components of the drawn docs in their drawn order ``(samples, columns)``."""
    return Profile("sampled", draws.ranking, draws.judgments, draws=draws)

"""Per-position components, in each mode, from which every measure is a head sum.

For one ordering of a ranked list, every head-sum measure of :mod:`tiecore.measures` is
``sum_{j <= k} c_j / w_j`` of one per-position component ``c`` (the rank weight ``w`` is
the measure's :class:`Divisor`).  The generic components live here:

===============  =========================================  ==========================
component        oblivious (one ordering)                   aware (mean over orderings)
===============  =========================================  ==========================
``rel``          ``rel_j``                                  ``r/n``
``judged``       ``[doc j is in the qrels]``                ``(judged in group) / n``
``gain:G``       ``g(level_j)`` (:data:`GAINS`)             ``(sum of the group's gains) / n``
===============  =========================================  ==========================

These are *document values* (a function of the doc alone, wherever it sits).  A
measure family whose component depends on what is ranked above (AP's ``ap``, RR's
``first``, Bpref's ``bpref``) declares it in its own module of :mod:`tiecore.measures`
and adds it with :func:`register_component`: the engine sees it only as a
:class:`Component`.  Every aware entry is the expected value of the oblivious entry
under a uniformly random order of each group, so by linearity every aware measure is
the mean over all orderings (McSherry & Najork 2008).  ``gain:linear`` and
``gain:exp`` are scaled per query (exact for any level, for nDCG's ratio);
``gain:exp_unscaled`` is ``2**level - 1`` as is, for the unnormalised sums.

Each component has its three modes side by side: ``oblivious`` and ``aware`` give one
value per row of a :class:`~tiecore.engine.ranking.Ranking`; ``sampled`` one per drawn
doc of a :class:`Draws` (samples x columns, :mod:`tiecore.engine.sampling`).
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


# ----------------------------------------------------------- running counts, products


def running_count(flags: np.ndarray, before_query: np.ndarray) -> np.ndarray:
    """Running count of ``flags`` within each query, inclusive (integers, exact).

    ``before_query`` is each row's query start (``ranking.starts[ranking.query]``).
    """
    total = np.cumsum(flags, dtype=np.int64)
    return total - (total[before_query] - flags[before_query])


def cum_rel(ranking: Ranking) -> np.ndarray:
    """Relevant docs at or above each row of its query (the ranking's own order)."""
    return running_count(ranking.rel, ranking.starts[ranking.query])


def segment_products(factor: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running products of ``factor`` restarted at each of ``starts`` (the first is 0).

    Segments of like length (up to the next power of two) are one padded
    ``cumprod`` along rows: at most ~20 passes, at most twice the memory.

    >>> segment_products(np.array([2.0, 3.0, 0.5, 4.0, 5.0, 0.5]), np.array([0, 3, 4])).tolist()
    [2.0, 6.0, 3.0, 4.0, 5.0, 2.5]
    """
    out = np.empty(len(factor))
    if not len(factor):
        return out
    length = np.diff(np.r_[starts, len(factor)])
    bucket = np.ceil(np.log2(length)).astype(np.int64)
    for b in np.flatnonzero(np.bincount(bucket)):  # (np.unique would import numpy.ma: 6 ms)
        chosen = np.flatnonzero(bucket == b)
        width = int(length[chosen].max())
        step = np.arange(width)
        inside = step[None, :] < length[chosen][:, None]
        index = np.where(inside, starts[chosen][:, None] + step[None, :], 0)
        products = np.cumprod(np.where(inside, factor[index], 1.0), axis=1)
        out[index[inside]] = products[inside]
    return out


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


#: Every component by key; ``gain:linear`` and ``gain:exp`` for the gains of :data:`GAINS`.
COMPONENTS: dict[str, Component] = {
    "rel": doc_component("rel", _rel_value),
    "judged": doc_component("judged", _judged_value),
    **{f"gain:{gain}": doc_component(f"gain:{gain}", _gain_value(gain)) for gain in GAINS},
    "gain:exp_unscaled": doc_component("gain:exp_unscaled", _unscaled_exp_value),
}


def register_component(component: Component) -> Component:
    """Add a measure family's own component to :data:`COMPONENTS` (its key must be new).

    The measure modules call it at import, so the engine computes a component it
    never names (AP's ``ap``, RR's ``first``, Bpref's ``bpref``).
    """
    if component.key in COMPONENTS:
        raise ValueError(f"component {component.key!r} is registered already")
    COMPONENTS[component.key] = component
    return component


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

    ``depth`` (trec_eval ``-M``) matters only for a component whose per-position
    term inside a group cut by the depth depends on the position (Bpref's).
    """
    return Profile("aware", ranking, judgments, depth)


def sampled(draws: Draws) -> Profile:
    """Oblivious components of the drawn docs in their drawn order ``(samples, columns)``."""
    return Profile("sampled", draws.ranking, draws.judgments, draws=draws)

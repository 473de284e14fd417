"""Per-query values of every measure as head sums of a profile's components.

Each measure reads ``value(q) = offset + scale * S(q) / denominator(q)`` where
``S(q) = sum_{rank j <= cut(q)} c_j / w(j)`` for one profile component ``c``
and a rank weight ``w`` (:class:`tiecore.engine.profiles.Divisor`); a zero
denominator gives 0 (a query without relevant docs, or with an ideal DCG of 0).
Which component, weight, cut and denominator: the measure's family (its module in
:mod:`tiecore.measures`).  The engine never imports the measures: it reads a measure
through :class:`HeadSum` (its ``spec`` is a family, :class:`FamilyLike`).

A family that is no head sum computes its values itself: :func:`families` groups such
measures by family, so that each family's hook gets all of its measures in one call (and
shares what they have in common, as IPrec's recall levels share one counting DP).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Protocol

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.profiles import Divisor, Profile
from tiecore.engine.ranking import Ranking


class FamilyLike(Protocol):
    """What the engine reads of a measure family (:class:`tiecore.measures.registry.Family`)."""

    # read-only (properties): a frozen dataclass's fields satisfy them
    @property
    def cut(self) -> Callable | None: ...
    @property
    def denominator(self) -> Callable | None: ...
    @property
    def scale(self) -> float | Callable: ...
    @property
    def offset(self) -> float | Callable: ...
    @property
    def values(self) -> Callable | None: ...  # the hooks of a family that is no head sum
    @property
    def spread(self) -> Callable | None: ...
    @property
    def sample(self) -> Callable | None: ...
    @property
    def formula(self) -> Callable | None: ...
    @property
    def variance(self) -> Callable | None: ...  # tiecore.engine.moments' hooks (spread)
    @property
    def bounds(self) -> Callable | None: ...
    def hooked(self, measure: HeadSum) -> bool: ...
    def component_of(self, measure: HeadSum) -> str | None: ...
    def divisor_of(self, measure: HeadSum) -> Divisor: ...


class HeadSum(Protocol):
    """What the engine and the family modules read of a measure
    (:class:`tiecore.measures.Measure`): its cutoff, gain, parameters and family."""

    @property
    def cutoff(self) -> int | None: ...
    @property
    def gain(self) -> str | None: ...
    def param(self, name: str) -> str: ...

    @property
    def spec(self) -> FamilyLike: ...


@dataclass(frozen=True)
class Plan:
    """How one measure reads a profile: component, rank weight, cut and normaliser."""

    measure: HeadSum
    family: FamilyLike
    component: str
    divisor: Divisor
    cut: np.ndarray  # per query: ranks 1..cut count
    scale: float
    denominator: np.ndarray  # per query
    offset: float | np.ndarray = 0.0  # one per query where the family's varies
    formula: Callable[[np.ndarray], np.ndarray] | None = None  # the family's, bound


def plan(
    measure: HeadSum,
    judgments: Judgments,
    depth: int | None = None,
    ranking: Ranking | None = None,
) -> Plan:
    """The head-sum recipe of ``measure`` (its family's declaration, depth as ``-M``).

    ``ranking`` is needed only by denominators that count retrieved docs (Judged).
    """
    family = measure.spec
    if family.hooked(measure):
        raise ValueError(f"{measure} is no head sum: use its family's own hooks")
    nq = len(judgments.qids)
    unbounded = np.iinfo(np.int64).max
    k = measure.cutoff if measure.cutoff is not None else unbounded
    cut = np.full(nq, min(k, depth if depth is not None else unbounded), dtype=np.int64)
    if family.cut is not None:
        cut = family.cut(measure, judgments, cut)
    offset = family.offset
    if callable(offset):  # per query (trec_eval's utility)
        offset = np.asarray(offset(measure, judgments, ranking, cut), np.float64)
    return Plan(
        measure=measure,
        family=family,
        component=family.component_of(measure),
        divisor=family.divisor_of(measure),
        cut=cut,
        scale=family.scale(measure) if callable(family.scale) else family.scale,
        denominator=np.asarray(family.denominator(measure, judgments, ranking, cut), np.float64),
        offset=offset,
        formula=None
        if family.formula is None
        else partial(family.formula, measure, judgments, ranking, cut),
    )


def weighted(component: np.ndarray, divisor: Divisor, rank: np.ndarray) -> np.ndarray:
    """``c_j / w(j)`` (division, as trec_eval computes it); the trailing 0 kept."""
    if divisor.name == "one":
        return component
    out = np.zeros_like(component)
    out[:-1] = divisor.weigh(component[:-1], rank)
    return out


def head_sums(
    values: np.ndarray, starts: np.ndarray, counts: np.ndarray, cut: np.ndarray
) -> np.ndarray:
    """Per query, the sum of ``values`` over its first ``min(count, cut)`` rows.

    ``values`` carries a trailing 0 so that every bound is a valid index; rows of
    a 2-d ``values`` are summed each (along the last axis).  The terms are added in
    rank order (:func:`ordered_sums`), as trec_eval's loops add them.
    """
    lengths = np.maximum(np.minimum(counts, cut), 0)
    with np.errstate(over="ignore", invalid="ignore"):  # unscaled exp gains: inf
        return ordered_sums(values, starts, lengths)


#: The most terms :func:`ordered_sums` gathers at once (bounds its scratch memory).
_BLOCK = 1 << 20
#: From this many segments of one width on, :func:`ordered_sums` adds rank by rank
#: across them (one numpy step per rank); below, it gathers each segment whole.
_ACROSS = 256


def ordered_sums(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per segment ``values[..., start:start + length]``, added first to last.

    ``((v_0 + v_1) + v_2) + ...``: the double a C loop over the ranks gives (numpy's
    ``sum`` and ``add.reduceat`` add in pairs and blocks, which may differ in the last
    bits).  Zero terms leave a running sum as it is (``x + 0 == x``), so only the
    nonzero ones are kept (most of a query's terms are 0 in oblivious mode: a precision
    or a gain counts at relevant docs only).  The segments are then taken by width
    (their lengths' next power of two): many segments of a width are added rank by
    rank, all at once (``sums += terms[first + j]``, the shorter ones dropping out);
    a few long ones are gathered whole, padded with a trailing 0 to the width, and
    accumulated (``cumsum``) in blocks of at most :data:`_BLOCK` terms.  An empty
    segment sums to 0.
    """
    out = np.zeros((*values.shape[:-1], len(starts)))
    nonzero = values[..., :-1] != 0
    if nonzero.ndim > 1:
        nonzero = nonzero.any(axis=tuple(range(nonzero.ndim - 1)))
    kept = np.flatnonzero(nonzero)
    first = np.searchsorted(kept, starts)
    counts = np.searchsorted(kept, starts + lengths) - first
    live = np.flatnonzero(counts > 0)
    if not len(live):
        return out
    terms = np.concatenate([values[..., kept], np.zeros((*values.shape[:-1], 1))], axis=-1)
    live = live[np.argsort(-counts[live], kind="stable")]  # longest first
    width = np.ceil(np.log2(counts[live])).astype(np.int64)
    edges = np.flatnonzero(np.diff(width)) + 1
    for rows in np.split(live, edges):
        if len(rows) >= _ACROSS:
            out[..., rows] = _rank_by_rank(terms, first[rows], counts[rows])
        else:
            out[..., rows] = _whole(terms, first[rows], counts[rows])
    return out


def _rank_by_rank(terms: np.ndarray, first: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of segments (``counts`` descending), each term added at its rank: at rank
    ``j`` the segments longer than ``j`` (a prefix) add their ``j``-th term."""
    sums = np.zeros((*terms.shape[:-1], len(first)))
    longer = np.searchsorted(-counts, -np.arange(int(counts[0])), side="left")
    for j, active in enumerate(longer.tolist()):
        sums[..., :active] += terms[..., first[:active] + j]
    return sums


def _whole(terms: np.ndarray, first: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of a few segments, each gathered whole (padded with the trailing 0)."""
    last = terms.shape[-1] - 1
    columns = np.arange(int(counts.max()))
    sums = np.empty((*terms.shape[:-1], len(first)))
    step = max(1, _BLOCK // len(columns))
    for at in range(0, len(first), step):
        part = slice(at, at + step)
        index = first[part, None] + columns
        index[columns >= counts[part, None]] = last
        sums[..., part] = np.cumsum(terms[..., index], axis=-1)[..., -1]
    return sums


def weighted_head_sums(
    component: np.ndarray, divisor: Divisor, ranking: Ranking, cut: np.ndarray
) -> np.ndarray:
    """Per query, ``sum_{rank j <= cut} c_j / w(j)``, weighting only the rows summed.

    A short cut (``P@10`` on lists of 1,000) gathers the few head rows; a long
    one weights the whole column and sums slices of it.
    """
    return head_sums_apart(component, divisor, ranking, cut)[0]


def head_sums_apart(
    component: np.ndarray,
    divisor: Divisor,
    ranking: Ranking,
    cut: np.ndarray,
    moved: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`weighted_head_sums`, and (given ``moved``, a flag per tie group) the
    same sums over the rows of the other groups alone (else ``None``).

    Both from one weighted column: the terms of the moved groups' rows are set to
    0 after weighting, which is what weighting their zeroed component gives.
    """
    lengths = np.minimum(ranking.counts, cut)
    total = int(lengths.sum())
    if 4 * total > len(ranking.rank):
        column = weighted(component, divisor, ranking.rank)
        starts, counts, group = ranking.starts, ranking.counts, ranking.group
    else:
        starts = np.cumsum(lengths) - lengths
        rows = np.arange(total) - np.repeat(starts - ranking.starts, lengths)
        column = weighted(np.append(component[rows], 0.0), divisor, ranking.rank[rows])
        counts = cut = lengths
        group = ranking.group[rows] if moved is not None else None
    if moved is None:
        return head_sums(column, starts, counts, cut), None
    both = np.stack([column, column])  # the second row: the trailing 0 kept
    both[1, :-1][moved[group]] = 0.0
    sums, rest = head_sums(both, starts, counts, cut)
    return sums, rest


def finish(plan_: Plan, sums: np.ndarray) -> np.ndarray:
    """``offset + scale * S / denominator``, 0 where the denominator is 0 (or the
    family's ``formula`` of ``S``, where it has one)."""
    if plan_.formula is not None:
        return plan_.formula(sums)
    out = np.zeros_like(sums)
    live = plan_.denominator > 0
    np.divide(plan_.scale * sums, plan_.denominator, out=out, where=live)
    if np.any(plan_.offset):  # a number, or one per query
        out += np.where(live, plan_.offset, 0.0)
    return out


def families(measures: Iterable[HeadSum]) -> list[tuple[FamilyLike, list[HeadSum]]]:
    """The measures that are no head sum (:meth:`FamilyLike.hooked`), grouped by family.

    Families in the order of their first measure, measures in the order given, each
    once: a family's ``values``, ``spread`` and ``sample`` hooks take such a group in
    one call and answer one result per measure, in its order.
    """
    groups: dict[int, tuple[FamilyLike, list[HeadSum]]] = {}
    for measure in measures:
        family = measure.spec
        if family.hooked(measure):
            group = groups.setdefault(id(family), (family, []))[1]
            if measure not in group:
                group.append(measure)
    return list(groups.values())


def values(
    measures: Iterable[HeadSum],
    profile: Profile,
    ranking: Ranking,
    judgments: Judgments,
    depth: int | None = None,
) -> dict[HeadSum, np.ndarray]:
    """Per-query values of each measure for ``profile``, in the judgments' query order.

    A head sum is its plan's kernel over the profile's component; the measures of a
    family that is no head sum come from its ``values`` hook, all in one call.
    """
    measures = list(measures)
    out: dict[HeadSum, np.ndarray] = {}
    for family, group in families(measures):
        assert family.values is not None  # a family that is no head sum gives its values
        found = family.values(group, profile, ranking, judgments, depth)
        out.update(zip(group, found, strict=True))
    for measure in measures:
        if measure not in out:
            recipe = plan(measure, judgments, depth, ranking)
            component = profile.component(recipe.component)
            sums = weighted_head_sums(component, recipe.divisor, ranking, recipe.cut)
            out[measure] = finish(recipe, sums)
    return {measure: out[measure] for measure in measures}

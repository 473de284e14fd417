"""Monte Carlo tie-breaking: measure values under random orders of the tie groups.

Only *mixed* groups, whose docs do not all carry the same judgment, and that
start above the deepest cutoff, can change a measure; every other row keeps the
contribution it has in any order.  A sample re-draws the mixed groups alone and
adds their contributions to the fixed part.

Inside a group only the *active* docs count: the judged ones (relevant, judged
non-relevant, or at a negative level, which Judged@k and RBP's residual
count).  The others (unjudged) add nothing to any measure and are
interchangeable, so a uniformly random order of the group is, as far as any
measure can tell, a uniformly random placement of its active docs in distinct
slots of the group.  A group whose active docs are at most half of it draws
that placement directly: each active doc draws a slot uniformly, and draws
that land on a slot already taken, or on one an earlier doc of the same round
also drew, are drawn again.  These rules compare slots for equality only, so
the placement they give is invariant under any relabelling of the slots, and
is therefore uniform over all placements (the relabellings reach every one).
A denser group is shuffled whole: its rows sorted by uniform 64-bit keys.

The head-sum measures (:func:`sample_values`) draw less, in two stages
(:meth:`_Layout.for_components`).  Only docs with a gain (level > 0) count for
P, R, F1, RR, Success, AP, nDCG, DCG, CG and RBP, so only groups holding one
and whose levels differ are drawn, and their gain docs are placed first (a
group where they are more than half is shuffled whole).  Bpref also counts
the judged non-relevant docs above a relevant one, but only up to R: its
groups that hold both and whose count above them is still below R place, in a
second stage, the other judged docs into the slots left (the same rules, the
first stage's slots taken), or, when those docs are more than half of the
slots left, let all remaining docs fill them in the order of uniform 64-bit
keys; Judged does so in every drawn group.  Conditional on the first stage the
second is uniform over the slots left, so the joint placement is uniform; the
first stage never depends on the second, so a measure draws the same orders
whatever other measures are asked.

Every draw is a hash of run, query, rank, round and sample
(:func:`tiecore.seeding.stream_key`): the same values whether a run's queries
are evaluated together or apart, in whatever batches of samples, with whatever
other measures.  (Drawing the judged docs' places instead of shuffling whole
groups changed the draws, and so did the two stages, which draw far fewer docs
on heavily tied runs (MU03rob01: 3,200 instead of 21,000 columns a sample): a
seed gives other values than it did before, with the same distribution.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tiecore import kernels
from tiecore.judgments import Judgments
from tiecore.measures import Measure
from tiecore.profiles import Draws, oblivious, sampled
from tiecore.ranking import Ranking
from tiecore.seeding import mix, stream_key, string_hashes

#: Cells (samples x drawn columns, or samples x slots of placed groups / 4) of one batch.
BATCH_CELLS = 2_000_000
#: Kinds of drawn columns (:class:`_Layout`).
WHOLE, FIRST, SECOND, FILL = 0, 1, 2, 3
#: Components :meth:`_Layout.for_components` knows which docs they tell apart (and ``gain:*``).
STAGED = frozenset({"rel", "ap", "first", "bpref", "judged"})

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_ROUND = np.uint64(0xD6E8FEB86659FD93)


def mixed_rows(ranking: Ranking, depth: int) -> np.ndarray:
    """Rows of the groups above ``depth`` whose judgments differ, in ranked order."""
    code = ranking.level * 2 + ranking.judged
    if code.size == 0:
        return np.zeros(0, dtype=np.int64)
    low = np.minimum.reduceat(code, ranking.group_start)
    high = np.maximum.reduceat(code, ranking.group_start)
    mixed = (low != high) & (ranking.offset < depth)
    return np.flatnonzero(mixed[ranking.group])


def drawn_rows(ranking: Ranking, depth: int) -> np.ndarray:
    """Rows whose place a sample draws, for measures cut at ``depth`` (see the module doc)."""
    return _Layout.of(ranking, depth).docs


@dataclass
class _Layout:
    """What a sample draws: one column per drawn row, the groups' columns contiguous.

    ``docs``: the row of each column, in ranked order; ``cleared``: every row
    of the drawn groups (their contributions come from the draws).  Per
    column: ``kind`` (:data:`WHOLE`: a row of a group shuffled whole;
    :data:`FIRST`, :data:`SECOND`: a doc placed in the first or second stage;
    :data:`FILL`: a doc that fills the slots the first stage left, in random
    order), ``compact`` (number of its group among the drawn ones), ``size``
    and ``start`` (first row) of its group, ``base`` (first slot of a placed
    group in the slots of all placed groups, which number ``slots``).
    """

    docs: np.ndarray
    cleared: np.ndarray
    kind: np.ndarray
    compact: np.ndarray
    size: np.ndarray
    start: np.ndarray
    base: np.ndarray
    slots: int

    @property
    def dense(self) -> np.ndarray:
        """Columns of the groups shuffled whole."""
        return self.kind == WHOLE

    @classmethod
    def of(cls, ranking: Ranking, depth: int) -> _Layout:
        """Every judged doc of the mixed groups above ``depth`` placed in one stage."""
        active = ranking.judged
        if active.size == 0:
            return cls._build(ranking, np.zeros(0, bool), active, active, np.zeros(0, bool))
        code = ranking.level * 2 + ranking.judged
        low = np.minimum.reduceat(code, ranking.group_start)
        high = np.maximum.reduceat(code, ranking.group_start)
        count = np.add.reduceat(active.astype(np.int64), ranking.group_start)
        drawn = (low != high) & (count > 0) & (ranking.offset < depth)
        return cls._build(ranking, drawn, active, np.zeros_like(active), np.zeros_like(drawn))

    @classmethod
    def for_components(
        cls, ranking: Ranking, judgments: Judgments, depth: int, components: set[str]
    ) -> _Layout:
        """Only the docs the components can tell apart (see the module doc).

        First stage: the docs with a gain (level > 0) of the groups whose levels
        differ.  Second stage: the other judged docs, of every drawn group for
        ``judged``, of the groups where Bpref's count of judged non-relevant
        docs above a relevant one is still below R for ``bpref``.  Components
        outside :data:`STAGED` draw as :meth:`of`.
        """
        if not all(c in STAGED or c.startswith("gain:") for c in components):
            return cls.of(ranking, depth)
        gainful = ranking.judged & (ranking.level > 0)
        if gainful.size == 0:
            return cls.of(ranking, depth)
        starts = ranking.group_start
        gains = np.add.reduceat(gainful.astype(np.int64), starts)
        varies = np.minimum.reduceat(ranking.level, starts) != np.maximum.reduceat(
            ranking.level, starts
        )
        drawn = (gains > 0) & varies
        second = np.zeros_like(drawn)
        if "bpref" in components:
            cap = judgments.num_rel[ranking.query[starts]]
            second |= (
                (ranking.rel_count > 0) & (ranking.nonrel_count > 0) & (ranking.nonrel_before < cap)
            )
        if "judged" in components:
            code = ranking.level * 2 + ranking.judged
            judged = np.add.reduceat(ranking.judged.astype(np.int64), starts)
            mixed = np.minimum.reduceat(code, starts) != np.maximum.reduceat(code, starts)
            drawn |= mixed & (judged > 0)
            second = drawn.copy()
        drawn &= ranking.offset < depth
        return cls._build(ranking, drawn, gainful, ranking.judged & ~gainful, second & drawn)

    @classmethod
    def _build(cls, ranking, drawn, first, later, second) -> _Layout:
        """Columns of the groups ``drawn``: a group whose ``first`` docs are more than
        half of it is shuffled whole; in the others the ``first`` docs are placed,
        then, in the groups ``second``, the ``later`` docs: placed when at most half
        of the slots left, else all the docs left fill those slots."""
        if first.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty.astype(np.int8), empty, empty, empty, empty, 0)
        n, group = ranking.size, ranking.group
        a = np.add.reduceat(first.astype(np.int64), ranking.group_start)
        b = np.add.reduceat(later.astype(np.int64), ranking.group_start)
        whole = drawn & (2 * a > n)
        placed = drawn & ~whole
        stage_two = placed & second & (b > 0)
        fill = stage_two & (2 * b > n - a)
        stage_two &= ~fill
        kind_of_row = np.full(group.size, -1, dtype=np.int8)
        kind_of_row[whole[group]] = WHOLE
        kind_of_row[placed[group] & first] = FIRST
        kind_of_row[stage_two[group] & later] = SECOND
        kind_of_row[fill[group] & ~first] = FILL
        docs = np.flatnonzero(kind_of_row >= 0)
        g = group[docs]
        compact = np.cumsum(np.r_[True, g[1:] != g[:-1]]) - 1 if docs.size else g
        placed_size = np.where(placed, n, 0)
        base = (np.cumsum(placed_size) - placed_size)[g]
        return cls(
            docs=docs,
            cleared=np.flatnonzero(drawn[group]),
            kind=kind_of_row[docs],
            compact=compact,
            size=n[g],
            start=ranking.group_start[g],
            base=base,
            slots=int(placed_size.sum()),
        )


class _Words:
    """Keyed 64-bit random words of the drawn columns: ``(sample, column, round)``."""

    def __init__(self, key: int, judgments: Judgments, ranking: Ranking, docs: np.ndarray):
        with np.errstate(over="ignore"):
            run = mix(np.array([key], dtype=np.uint64))
            per_query = mix(string_hashes(judgments.qids) ^ run)
            rank = ranking.rank[docs].astype(np.uint64)
            self.column = mix(mix(per_query[ranking.query[docs]] + (rank + np.uint64(1)) * _GOLDEN))

    @staticmethod
    def _samples(samples: np.ndarray) -> np.ndarray:
        return mix(samples.astype(np.uint64) * _GOLDEN + _GOLDEN)

    def grid(self, columns: np.ndarray, first: int, size: int, round_: int) -> np.ndarray:
        """Words ``(size, len(columns))`` of samples ``first ..``, one round."""
        with np.errstate(over="ignore"):
            column = mix(self.column[columns] + np.uint64(round_) * _ROUND)
            sample = self._samples(np.arange(first, first + size))
            return mix(sample[:, None] ^ column[None, :])

    def pairs(self, columns: np.ndarray, samples: np.ndarray, round_: int) -> np.ndarray:
        """Words of the pairs ``(samples[i], columns[i])``, one round."""
        with np.errstate(over="ignore"):
            column = mix(self.column[columns] + np.uint64(round_) * _ROUND)
            return mix(self._samples(samples) ^ column)


def sample_values(
    ranking: Ranking,
    judgments: Judgments,
    measures: list[Measure],
    *,
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
) -> dict[Measure, np.ndarray]:
    """Per-query values of each measure under ``samples`` random tie-breaks.

    Returns
    -------
    dict
        Measure -> array ``(samples, queries)`` in the judgments' query order.
    """
    custom = [m for m in measures if m.spec.hooked(m)]
    out = {
        m: m.spec.sample(m, ranking, judgments, samples=samples, rng=rng, depth=depth)
        for m in custom
    }
    plans = {m: kernels.plan(m, judgments, depth, ranking) for m in measures if m not in custom}
    deepest = max((int(p.cut.max(initial=0)) for p in plans.values()), default=0)
    components = {recipe.component for recipe in plans.values()}
    layout = _Layout.for_components(ranking, judgments, deepest, components)
    base = oblivious(ranking, judgments)
    fixed = {}
    for measure, recipe in plans.items():
        component = base.component(recipe.component).copy()
        component[layout.cleared] = 0.0
        fixed[measure] = kernels.weighted_head_sums(component, recipe.divisor, ranking, recipe.cut)
    out |= {m: np.empty((samples, len(judgments.qids))) for m in plans}
    width = max(layout.docs.size, layout.slots // 4, 1)
    batch = max(1, min(samples, BATCH_CELLS // width))
    words = _Words(stream_key(rng), judgments, ranking, layout.docs)
    for first in range(0, samples, batch):
        size = min(batch, samples - first)
        doc, slot = draw(layout, words, first, size)
        delta = _drawn_sums(ranking, judgments, plans, layout, doc, slot)
        for measure, recipe in plans.items():
            out[measure][first : first + size] = kernels.finish(
                recipe, fixed[measure] + delta[measure]
            )
    return out


def draw(layout: _Layout, words: _Words, first: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Samples ``first .. first + size - 1``: which row sits in which slot.

    Returns ``doc`` and ``slot``, ``(size, columns)``: inside each drawn group
    the rows in their drawn order and the slots (rows of the ranking) they
    take, ascending.  Groups shuffled whole sort 64-bit keys; the others place
    their first-stage docs, then their second-stage ones (:func:`_place`), or
    fill the slots left with the remaining docs in the order of 64-bit keys.
    """
    columns = layout.docs.size
    if columns == 0:
        empty = np.zeros((size, 0), dtype=np.int64)
        return empty, empty
    # sort keys: the group's number in the high bits, the draw in the low ones
    low_bits = 63 - int(layout.compact[-1]).bit_length()
    keys = np.empty((size, columns), dtype=np.int64)
    high = layout.compact.astype(np.int64) << low_bits
    whole = np.flatnonzero(layout.kind == WHOLE)
    if whole.size:
        noise = words.grid(whole, first, size, 0) >> np.uint64(64 - low_bits)
        keys[:, whole] = high[whole] + noise.astype(np.int64)
    position = np.zeros((size, columns), dtype=np.int64)
    taken = np.zeros(size * layout.slots, dtype=bool)
    for stage in (FIRST, SECOND):
        placed = np.flatnonzero(layout.kind == stage)
        if placed.size:
            position[:, placed] = _place(layout, words, placed, first, size, taken)
    fill = np.flatnonzero(layout.kind == FILL)
    if fill.size:
        position[:, fill] = _fill(layout, words, fill, first, size, taken, low_bits)
    placed = np.flatnonzero(layout.kind != WHOLE)
    keys[:, placed] = high[placed] + position[:, placed]
    order = np.argsort(keys, axis=1)
    doc = layout.docs[order]
    slot = np.where(
        layout.kind == WHOLE,
        layout.docs,
        layout.start[order] + np.take_along_axis(position, order, 1),
    )
    return doc, slot


def _fill(layout, words, columns, first, size, taken, low_bits) -> np.ndarray:
    """Slots (0-based in the group) of the filling columns: ``(size, columns)``.

    Each group's filling docs, in the order of their 64-bit keys, take the
    slots its first stage left free, ascending: a uniformly random order of
    them over those slots.
    """
    high = layout.compact[columns].astype(np.int64) << low_bits
    noise = words.grid(columns, first, size, 0) >> np.uint64(64 - low_bits)
    order = np.argsort(high + noise.astype(np.int64), axis=1)
    # the slots of the filling groups, group after group, and which are free per sample
    starts = np.flatnonzero(
        np.r_[True, layout.compact[columns][1:] != layout.compact[columns][:-1]]
    )
    c = columns[starts]
    n = layout.size[c]
    local = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
    spots = np.repeat(layout.base[c], n) + local
    free = ~taken.reshape(size, layout.slots)[:, spots]
    free_local = local[np.nonzero(free)[1]].reshape(size, columns.size)
    out = np.empty((size, columns.size), dtype=np.int64)
    np.put_along_axis(out, order, free_local, 1)
    return out


def _place(
    layout: _Layout, words: _Words, columns: np.ndarray, first: int, size: int, taken: np.ndarray
):
    """Slot (0-based in its group) of each placed column's doc per sample: ``(size, columns)``.

    Round ``k``: every doc still unplaced draws a 32-bit word; it is kept when
    below the largest multiple of the group size (so that ``word % size`` is
    exactly uniform), when that slot is free (``taken``, flat ``(sample, slot)``,
    updated), and when no doc before it in column order drew the same slot in
    this round.
    """
    count = columns.size
    n = layout.size[columns]
    limit = (1 << 32) - (1 << 32) % n
    out = np.empty((size, count), dtype=np.int64)
    sample = np.repeat(np.arange(size), count)
    column = np.tile(np.arange(count), size)
    # the earliest draw of each slot wins: np.minimum.at over the slots (faster than np.unique)
    index = np.int32 if size * count < 2**31 else np.int64
    nobody = np.iinfo(index).max
    claim = np.full(taken.size, nobody, dtype=index)
    round_ = 0
    while sample.size:
        if round_ == 0:
            word = words.grid(columns, first, size, 0).ravel()
        else:
            word = words.pairs(columns[column], first + sample, round_)
        word = (word >> np.uint64(32)).astype(np.int64)
        spot = word % n[column]
        code = sample * layout.slots + layout.base[columns[column]] + spot
        free = np.flatnonzero((word < limit[column]) & ~taken[code])
        wanted = code[free]
        np.minimum.at(claim, wanted, free.astype(index))
        placed = free[claim[wanted] == free]
        claim[wanted] = nobody
        taken[code[placed]] = True
        out[sample[placed], column[placed]] = spot[placed]
        left = np.ones(sample.size, dtype=bool)
        left[placed] = False
        sample, column = sample[left], column[left]
        round_ += 1
    return out


def _drawn_sums(ranking, judgments, plans, layout, doc, slot) -> dict[Measure, np.ndarray]:
    """Head sums over the drawn columns, one row per sample: ``(samples, queries)``.

    Rank weights and cutoff masks are computed once per batch and shared by the
    measures that use them (weighed as :meth:`tiecore.profiles.Divisor.weigh` does).
    """
    nq, size = len(judgments.qids), len(doc)
    if layout.docs.size == 0:
        return {m: np.zeros((size, nq)) for m in plans}
    query = ranking.query[layout.docs]
    query_start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    profile = sampled(Draws(ranking, judgments, layout, doc))
    rank = ranking.rank[slot]
    deepest = int(rank.max(initial=0))
    weights: dict[tuple, np.ndarray] = {}
    masks: dict[bytes, np.ndarray] = {}
    sums = {}
    for measure, recipe in plans.items():
        divisor = recipe.divisor
        terms = profile.component(recipe.component)
        if divisor.name != "one":
            if divisor.key not in weights:
                geometric = divisor.name == "geometric"
                weights[divisor.key] = divisor.inverse(rank) if geometric else divisor.divisor(rank)
            if divisor.name == "geometric":
                terms = terms * weights[divisor.key]
            else:
                terms = terms / weights[divisor.key]
        cut = recipe.cut[query]
        if int(cut.min(initial=deepest)) < deepest:
            key = cut.tobytes()
            if key not in masks:
                masks[key] = rank <= cut
            terms = np.where(masks[key], terms, 0.0)
        full = np.zeros((size, nq))
        full[:, query[query_start]] = np.add.reduceat(terms, query_start, axis=1)
        sums[measure] = full
    return sums

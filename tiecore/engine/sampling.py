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

The head-sum measures (:func:`sample_values`) draw less
(:meth:`_Layout.for_components`).  Only docs with a gain (level > 0) or
relevant count for P, R, F1, RR, Success, AP, nDCG, DCG, CG and RBP, so only
groups holding one and where gain or relevance differ are drawn, and those docs
are placed first (a group where they are more than half is shuffled whole).
Bpref also counts the judged non-relevant docs above each relevant one, but
only up to R and never where they are: in its groups whose count above them is
still below R, given the first stage those docs (without a gain) take a
uniformly random subset of the slots left, so how many lie above each relevant
doc is drawn directly, by hypergeometric draws between consecutive relevant
docs (:class:`_Tally`, :func:`tally`), not by placing every one.  Judged needs
the judged docs' places: in every drawn group it places, in a second stage,
the other judged docs into the slots left (the same rules, the first stage's
slots taken), or, when those docs are more than half of the slots left, lets
all remaining docs fill them in the order of uniform 64-bit keys.  Conditional
on the first stage the counts and the second stage are each those of a uniform
order of the slots left, so each measure's draw is that of a uniform order; the
first stage never depends on them, and Bpref counts even when Judged places
(within a sample, Bpref's counts and Judged's places are then separate draws
after the same first stage), so a measure draws the same orders whatever other
measures are asked.

Every draw is a hash of run, query, rank, round and sample
(:func:`tiecore.engine.seeding.stream_key`): the same values whether a run's queries
are evaluated together or apart, in whatever batches of samples, with whatever
other measures.  (Drawing the judged docs' places instead of shuffling whole
groups changed the draws, and so did the two stages, which draw far fewer docs
on heavily tied runs (MU03rob01: 3,200 instead of 21,000 columns a sample), and
Bpref's counts, which replaced its second stage (rutcor03100: 736 columns and
~560 counts a sample instead of 6,900 columns): a seed gives other Bpref values
than it did before, with the same distribution; the other measures keep theirs.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tiecore.engine import kernels
from tiecore.engine.binomial import log_choose
from tiecore.engine.judgments import Judgments
from tiecore.engine.kernels import HeadSum
from tiecore.engine.profiles import Draws, oblivious, sampled
from tiecore.engine.ranking import Ranking
from tiecore.engine.seeding import stream_key
from tiecore.io.hashing import fnv1a, mix

#: Cells (samples x drawn columns, or samples x slots of placed groups / 4) of one batch.
BATCH_CELLS = 2_000_000
#: Slots per placed doc above which :func:`_place` finds a round's collisions by sorting.
SPARSE = 16
#: :func:`_place`'s first round goes layer by layer up to this many placed docs per group.
LAYERS = 32
#: Kinds of drawn columns (:class:`_Layout`).
WHOLE, FIRST, SECOND, FILL = 0, 1, 2, 3
#: Components :meth:`_Layout.for_components` knows which docs they tell apart (and ``gain:*``).
STAGED = frozenset({"rel", "ap", "first", "bpref", "judged"})

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_ROUND = np.uint64(0xD6E8FEB86659FD93)
#: The round of the words :func:`tally` draws (placement rounds count up from 0).
_TALLY_ROUND = 1 << 40


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
    group in the slots of all placed groups, which number ``slots``);
    ``tally``: the groups whose judged non-relevant docs are counted, not
    placed (:class:`_Tally`).
    """

    docs: np.ndarray
    cleared: np.ndarray
    kind: np.ndarray
    compact: np.ndarray
    size: np.ndarray
    start: np.ndarray
    base: np.ndarray
    slots: int
    tally: _Tally | None = None

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

        First stage: the docs with a gain (level > 0) and the relevant ones (at
        a level of at most 0 too when ``rel_level <= 0``), of the groups where
        gain or relevance differ.  Then, for ``bpref``, the judged non-relevant
        docs above each relevant one are counted (:class:`_Tally`) in the groups
        where Bpref's count above a relevant doc is still below R.  For
        ``judged``, the other judged docs of every drawn group are placed in a
        second stage instead.  Components outside :data:`STAGED` draw as
        :meth:`of`.
        """
        if not all(c in STAGED or c.startswith("gain:") for c in components):
            return cls.of(ranking, depth)
        first_stage = ranking.judged & ((ranking.level > 0) | ranking.rel)
        if first_stage.size == 0:
            return cls.of(ranking, depth)
        starts = ranking.group_start
        gains = np.add.reduceat(first_stage.astype(np.int64), starts)
        told = np.where(first_stage, np.maximum(ranking.level, 0) * 2 + ranking.rel, 0)
        varies = np.minimum.reduceat(told, starts) != np.maximum.reduceat(told, starts)
        drawn = (gains > 0) & varies
        second = np.zeros_like(drawn)
        counted = np.zeros_like(drawn)
        if "bpref" in components:  # (judged non-relevant docs exist only when rel_level >= 1)
            cap = judgments.num_rel[ranking.query[starts]]
            counted = (
                (ranking.rel_count > 0) & (ranking.nonrel_count > 0) & (ranking.nonrel_before < cap)
            )
        if "judged" in components:
            code = ranking.level * 2 + ranking.judged
            judged = np.add.reduceat(ranking.judged.astype(np.int64), starts)
            mixed = np.minimum.reduceat(code, starts) != np.maximum.reduceat(code, starts)
            drawn |= mixed & (judged > 0)
            second = drawn.copy()  # (Bpref still counts: its draws do not depend on Judged)
        drawn &= ranking.offset < depth
        later = ranking.judged & ~first_stage
        return cls._build(ranking, drawn, first_stage, later, second & drawn, counted & drawn)

    @classmethod
    def _build(cls, ranking, drawn, first, later, second, counted=None) -> _Layout:
        """Columns of the groups ``drawn``: a group whose ``first`` docs are more than
        half of it is shuffled whole; in the others the ``first`` docs are placed,
        then, in the groups ``second``, the ``later`` docs: placed when at most half
        of the slots left, else all the docs left fill those slots.  In the placed
        groups ``counted``, the judged non-relevant ``later`` docs are counted above
        each relevant doc instead (:class:`_Tally`)."""
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
        tally = None
        if counted is not None:
            good = np.add.reduceat((later & ranking.nonrel).astype(np.int64), ranking.group_start)
            counted = counted & placed & (good > 0)
            if counted.any():
                tally = _Tally.of(ranking, docs, g, counted, n - a, good, first, later)
        return cls(
            docs=docs,
            cleared=np.flatnonzero(drawn[group]),
            kind=kind_of_row[docs],
            compact=compact,
            size=n[g],
            start=ranking.group_start[g],
            base=base,
            slots=int(placed_size.sum()),
            tally=tally,
        )


@dataclass
class _Tally:
    """Groups whose judged non-relevant docs without a gain are counted, not placed.

    Given the first stage, those ``good`` docs take a uniformly random subset of
    the group's ``free`` slots (the others hold unjudged docs and judged ones at
    a negative level), so how many of them lie among the first ``f`` free slots
    is hypergeometric.  Per group, with the relevant docs in slot order, ``f_k``
    free slots above the ``k``-th and ``C_k`` good docs among them (``f_0 = C_0
    = 0``, ``f_{r+1}`` every free slot, ``C_{r+1}`` every good doc), the counts
    are drawn by bisection: given ``C_lo`` and ``C_hi``, ``C_mid - C_lo`` is the
    number of good docs among the ``f_mid - f_lo`` free slots after ``f_lo``,
    of ``f_hi - f_lo`` that hold ``C_hi - C_lo`` good ones, in a uniformly random
    subset: hypergeometric, and independent of the other intervals.

    ``columns``: the layout columns of these groups (the first-stage docs, and
    the second stage's when Judged places them too), group after group;
    ``heads``: where each group starts in ``columns``, ``owner``: each column's
    group (0, 1, ...); ``within``: each column's index in its group when all
    are first-stage docs (else None); ``first``: per row of the ranking, placed in the first
    stage; ``hidden``: per row, counted here (so not where Judged places it);
    ``rel_column``: per relevant doc of these groups (group after group, in
    ranked order) the column whose words the ``k``-th relevant doc in slot order
    draws with; ``ext``: where ``f_k`` and ``C_k`` (``k = 1 .. r``) go in the
    per-sample arrays of ``sum(r + 2)`` entries, ``low`` and ``high`` where
    ``k = 0`` and ``k = r + 1`` go; ``free`` and ``good`` per group; ``levels``:
    per bisection level, ``(lo, mid, hi, relevant doc)``.
    """

    columns: np.ndarray
    heads: np.ndarray
    owner: np.ndarray
    within: np.ndarray | None
    first: np.ndarray
    hidden: np.ndarray
    rel_column: np.ndarray
    ext: np.ndarray
    low: np.ndarray
    high: np.ndarray
    free: np.ndarray
    good: np.ndarray
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]

    @classmethod
    def of(cls, ranking, docs, g, counted, free, good, first, later) -> _Tally:
        """The groups ``counted`` (per group of the ranking) among a layout's ``docs``
        (of groups ``g``); ``free`` and ``good`` per group, ``first`` and ``later``
        (the judged docs of neither stage) per row of the ranking."""
        columns = np.flatnonzero(counted[g])
        owner = g[columns]
        heads = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        groups = owner[heads]
        within = np.arange(columns.size) - np.repeat(heads, np.diff(np.r_[heads, columns.size]))
        r = ranking.rel_count[groups].astype(np.int64)
        span = r + 2
        low = np.cumsum(span) - span
        high = low + r + 1
        ext = np.repeat(low + 1, r) + np.arange(r.sum()) - np.repeat(np.cumsum(r) - r, r)
        # bisect each group's [0, r + 1]: midpoint k of group i is relevant doc ext[k - 2i - 1]
        levels = []
        lo, hi, which = low, high, np.arange(groups.size)
        while True:
            split = hi - lo >= 2
            lo, hi, which = lo[split], hi[split], which[split]
            if not lo.size:
                break
            mid = (lo + hi) // 2
            levels.append((lo, mid, hi, mid - 2 * which - 1))
            lo, hi, which = np.r_[lo, mid], np.r_[mid, hi], np.r_[which, which]
        return cls(
            columns=columns,
            heads=heads,
            owner=np.cumsum(np.r_[True, owner[1:] != owner[:-1]]) - 1,
            within=within if first[docs[columns]].all() else None,
            first=first,
            hidden=later & ranking.nonrel & counted[ranking.group],
            rel_column=columns[ranking.rel[docs[columns]]],
            ext=ext,
            low=low,
            high=high,
            free=free[groups].astype(np.int64),
            good=good[groups].astype(np.int64),
            levels=levels,
        )


class _Words:
    """Keyed 64-bit random words of the drawn columns: ``(sample, column, round)``."""

    def __init__(self, key: int, judgments: Judgments, ranking: Ranking, docs: np.ndarray):
        with np.errstate(over="ignore"):
            run = mix(np.array([key], dtype=np.uint64))
            per_query = mix(fnv1a(judgments.qids) ^ run)
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


class Sampler:
    """Keyed random orders of a ranking's mixed tie groups above ``depth``, drawn in
    batches: the one sampler of the families that score each order themselves.

    ``rows``: the rows a draw places (its columns, in ranked order: every judged doc of
    the mixed groups above ``depth``, :meth:`_Layout.of`); ``cleared``: every row of
    the drawn groups (their contributions come from the draws); ``group_of_column``:
    the number of each column's group among the drawn ones.  :meth:`draws` gives, per
    batch, ``(first, size, doc, slot)``: samples ``first .. first + size - 1``, and
    which row sits in which slot (:func:`draw`; None when nothing is drawn).  The
    draws are keyed by run, query, rank and sample (:mod:`tiecore.engine.seeding`), so
    a query's draws do not depend on the others or on the batches.
    """

    def __init__(self, ranking: Ranking, judgments: Judgments, depth: int) -> None:
        self.ranking, self.judgments = ranking, judgments
        self.layout = _Layout.of(ranking, depth)
        self.rows, self.cleared = self.layout.docs, self.layout.cleared

    @property
    def group_of_column(self) -> np.ndarray:
        """Each column's group, numbered among the drawn groups (ascending)."""
        return self.layout.compact

    def draws(self, samples: int, rng: np.random.Generator | int, cells: int = 1):
        """Batches ``(first, size, doc, slot)`` of ``samples`` draws, each batch at most
        :data:`BATCH_CELLS` cells of ``max(columns, cells)`` per sample (``cells``: what
        the caller holds per sample besides the columns).  The run key is taken from
        ``rng`` now (:func:`~tiecore.engine.seeding.stream_key`), once.
        """
        words = _Words(stream_key(rng), self.judgments, self.ranking, self.rows)
        batch = max(1, min(samples, BATCH_CELLS // max(self.rows.size, cells, 1)))
        return self._batches(words, samples, batch)

    def _batches(self, words, samples, batch):
        for first in range(0, samples, batch):
            size = min(batch, samples - first)
            if self.rows.size:
                yield first, size, *draw(self.layout, words, first, size)
            else:
                yield first, size, None, None


def sample_values(
    ranking: Ranking,
    judgments: Judgments,
    measures: list[HeadSum],
    *,
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
) -> dict[HeadSum, np.ndarray]:
    """Per-query values of each measure under ``samples`` random tie-breaks.

    Returns
    -------
    dict
        Measure -> array ``(samples, queries)`` in the judgments' query order.
    """
    # one stream per measure, drawn in the order asked (as when the hooks took one each)
    keys = {m: stream_key(rng) for m in measures if m.spec.hooked(m)}
    groups = kernels.families(measures)
    drawn: dict[HeadSum, np.ndarray] = {}
    for family, group in groups:
        assert family.sample is not None  # a family that is no head sum samples itself
        found = family.sample(
            group, ranking, judgments, samples=samples, rngs=[keys[m] for m in group], depth=depth
        )
        drawn.update(zip(group, found, strict=True))
    out = {m: drawn[m] for m in keys}  # in the order asked
    plans = {m: kernels.plan(m, judgments, depth, ranking) for m in measures if m not in out}
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
        later = tally(ranking, layout, words, doc, slot, first)
        delta = _drawn_sums(ranking, judgments, plans, layout, doc, slot, later)
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
    order = np.argsort(keys, axis=1, kind="stable")  # runs of columns: timsort's best case
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
    order = np.argsort(high + noise.astype(np.int64), axis=1, kind="stable")
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
    n32 = n.astype(np.uint32)  # (32-bit division: the words have 32 bits)
    limit = (1 << 32) - (1 << 32) % n
    base = layout.base[columns]
    out = np.empty(size * count, dtype=np.int64)
    # sample * count + column: the draws still to place (round 0 done unless None)
    cell = _first_round(layout, words, columns, first, size, taken, out)
    cell, round_ = (np.arange(size * count), 0) if cell is None else (cell, 1)
    # the earliest draw of each slot wins: np.minimum.at over the slots, or, when the
    # slots outnumber the draws (an array of them would cost more), a stable sort
    sparse = taken.size > SPARSE * size * count
    if not sparse:
        index = np.int32 if size * count < 2**31 else np.int64
        nobody = np.iinfo(index).max
        claim = np.full(taken.size, nobody, dtype=index)
    while cell.size:
        if round_ == 0:  # every draw: (size, count) by broadcasting
            drawn = _first_draws(layout, words, columns, first, size)
            spot, code, kept = (a.ravel() for a in drawn)
        else:
            sample, column = np.divmod(cell, count)
            word = words.pairs(columns[column], first + sample, round_)
            word = (word >> np.uint64(32)).astype(np.uint32)
            spot = (word % n32[column]).astype(np.int64)
            code = sample * layout.slots + base[column] + spot
            kept = word < limit[column]
        free = np.flatnonzero(kept & ~taken[code])
        wanted = code[free]
        if sparse:
            order = np.argsort(wanted, kind="stable")
            ordered = wanted[order]
            earliest = np.ones(ordered.size, dtype=bool)  # of each slot drawn
            earliest[1:] = ordered[1:] != ordered[:-1]
            placed = free[order[earliest]]  # (any order: what follows scatters)
        else:
            np.minimum.at(claim, wanted, free.astype(index))
            placed = free[claim[wanted] == free]
            claim[wanted] = nobody
        taken[code[placed]] = True
        out[cell[placed]] = spot[placed]
        left = np.ones(cell.size, dtype=bool)
        left[placed] = False
        cell = cell[left]
        round_ += 1
    return out.reshape(size, count)


def _first_draws(layout, words, columns, first, size) -> tuple[np.ndarray, ...]:
    """Round 0 of :func:`_place`, every ``(sample, column)``: ``spot`` (the drawn slot in
    its group), ``code`` (``sample * slots + base + spot``) and ``kept`` (the word is below
    the largest multiple of the group size), each ``(size, columns)``."""
    n = layout.size[columns]
    word = (words.grid(columns, first, size, 0) >> np.uint64(32)).astype(np.uint32)
    spot = (word % n.astype(np.uint32)).astype(np.int64)
    code = np.arange(size)[:, None] * layout.slots + layout.base[columns] + spot
    return spot, code, word < (1 << 32) - (1 << 32) % n


def _first_round(layout, words, columns, first, size, taken, out) -> np.ndarray | None:
    """:func:`_place`'s round 0 layer by layer, without its sort: the cells still to place
    (as :func:`_place` numbers them), or None when a group has more than
    :data:`LAYERS` placed columns (then :func:`_place` sorts).

    Layer ``k`` holds each group's ``k``-th placed column; a sample's draws in one layer
    fall in distinct groups, so they never collide with each other, and a draw taken by
    an earlier layer is exactly one an earlier column drew in this round (the earliest
    keeps a slot): the same slots as the sort finds.
    """
    count = columns.size
    group = layout.compact[columns]
    heads = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    layer = np.arange(count) - np.repeat(heads, np.diff(np.r_[heads, count]))
    if count == 0 or layer.max() >= LAYERS:
        return None
    spot, code, placed = _first_draws(layout, words, columns, first, size)
    for k in range(int(layer.max()) + 1):
        at = np.flatnonzero(layer == k)
        codes = code[:, at]
        free = placed[:, at] & ~taken[codes]
        taken[codes[free]] = True
        placed[:, at] = free
    cells = np.flatnonzero(placed)
    out[cells] = spot.ravel()[cells]
    return np.flatnonzero(~placed.ravel())


def tally(
    ranking: Ranking, layout: _Layout, words: _Words, doc: np.ndarray, slot: np.ndarray, first: int
) -> np.ndarray | None:
    """Judged non-relevant docs of the :class:`_Tally` groups above each drawn doc.

    ``doc`` and ``slot`` of samples ``first ..`` (:func:`draw`); returns ``(samples,
    columns)``, the count of the good docs of :class:`_Tally` (not placed) above
    each relevant doc of those groups, 0 elsewhere; None without such groups.
    Each count draws one word per sample, keyed by the ``k``-th relevant column
    of the group in ranked order (round :data:`_TALLY_ROUND`).
    """
    t = layout.tally
    if t is None:
        return None
    size = doc.shape[0]
    block = doc[:, t.columns]
    if t.within is not None:  # every column placed in the first stage
        placed = t.within  # first-stage docs above
    else:
        first_stage = t.first[block]
        placed = np.cumsum(first_stage, axis=1, dtype=np.int64)
        placed -= (placed[:, t.heads] - first_stage[:, t.heads])[:, t.owner] + first_stage
    free = slot[:, t.columns] - layout.start[t.columns] - placed  # free slots above
    relevant = ranking.rel[block]  # per sample: group after group, in slot order
    width = t.high[-1] + 1
    f = np.empty((size, width), dtype=np.int64)
    c = np.empty((size, width), dtype=np.int64)
    f[:, t.low] = c[:, t.low] = 0
    f[:, t.high], c[:, t.high] = t.free, t.good
    f[:, t.ext] = free[relevant].reshape(size, t.ext.size)
    for lo, mid, hi, which in t.levels:
        good = c[:, hi] - c[:, lo]
        total = f[:, hi] - f[:, lo]
        word = words.grid(t.rel_column[which], first, size, _TALLY_ROUND)
        u = ((word >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
        c[:, mid] = c[:, lo] + hypergeometric(good, total - good, f[:, mid] - f[:, lo], u)
    counts = np.zeros(block.shape, dtype=np.int64)
    counts[relevant] = c[:, t.ext].ravel()
    out = np.zeros(doc.shape, dtype=np.int64)
    out[:, t.columns] = counts
    return out


def hypergeometric(
    good: np.ndarray, bad: np.ndarray, draws: np.ndarray, u: np.ndarray
) -> np.ndarray:
    """Good items among ``draws`` taken without replacement from ``good + bad``, by
    inversion of uniforms ``u`` in (0, 1) (same shapes).

    The support is searched from the mode outwards (mode, mode + 1, mode - 1,
    mode + 2, ...; past its end a side adds nothing): the value returned is the
    first whose cumulative probability in that order reaches ``u``, so each value
    has its probability, ``C(good, x) C(bad, draws - x) / C(good + bad, draws)``
    (the mode's from :func:`~tiecore.engine.binomial.log_choose`, the others by the
    ratios of neighbours; exact up to rounding: within 5e-12 relative for groups of a
    thousand docs), and the search takes about a standard deviation's steps.

    >>> u = (np.arange(10_000) + 0.5) / 10_000  # evenly spread: the mean is d g / (g + b)
    >>> float(hypergeometric(5, 15, 8, u).mean())
    2.0
    >>> hypergeometric(np.array([3, 0, 5]), np.array([4, 9, 0]), np.array([7, 4, 2]), 0.5).tolist()
    [3, 0, 2]
    """
    good, bad, draws, u = np.broadcast_arrays(good, bad, draws, u)
    shape = u.shape
    g, b, d = (np.asarray(x, dtype=np.int64).ravel() for x in (good, bad, draws))
    low, high = np.maximum(d - b, 0), np.minimum(d, g)
    out = low.copy()  # a single value when low == high
    some = np.flatnonzero(low < high)
    g, b, d, low, high = g[some], b[some], d[some], low[some], high[some]
    u = np.asarray(u, dtype=np.float64).ravel()[some]
    mode = np.clip((d + 1) * (g + 1) // (g + b + 2), low, high)

    p = np.exp(log_choose(g, mode) + log_choose(b, d - mode) - log_choose(g + b, d))
    out[some] = mode
    todo = np.flatnonzero(p < u)
    # the search's state in one float array (integers below 2**53 are exact), so that
    # dropping the finished draws is one copy.  Past its end a side's probability is
    # 0 (the ratio is 0 at the end, finite beyond), so both sides step every time.
    rows = (np.arange(g.size), g, b - d, d, low, high, mode, mode, u, p, p, p)
    state = np.stack([row[todo] for row in rows]).astype(np.float64)
    while state.shape[1]:
        index, g, bd, d, low, high, up, down, u, p_up, p_down, cum = state  # views
        p_up *= (g - up) * (d - up) / ((up + 1) * (bd + up + 1))  # p(x + 1) / p(x)
        up += 1
        cum += p_up
        hit_up = cum >= u
        p_down *= down * (bd + down) / ((g - down + 1) * (d - down + 1))  # p(x - 1) / p(x)
        down -= 1
        cum += p_down
        done = (cum >= u) | ((up >= high) & (down <= low))  # or rounding left cum below u
        where = index[done].astype(np.int64)
        out[some[where]] = np.where(hit_up[done], up[done], np.maximum(down[done], low[done]))
        state = state[:, ~done]
    return out.reshape(shape)


@dataclass
class _Tallied(Draws):
    """:class:`tiecore.engine.profiles.Draws` whose judged non-relevant counts above a doc
    are ``later`` (:func:`tally`) and those of the placed docs the tally does not
    count."""

    later: np.ndarray | None = None

    @property
    def nonrel_above(self) -> np.ndarray:
        if self.later is None:
            return super().nonrel_above
        group = self.ranking.group[self.layout.docs]
        nonrel = self.ranking.nonrel[self.doc] & ~self.layout.tally.hidden[self.doc]
        return self._within(nonrel) - nonrel + self.ranking.nonrel_before[group] + self.later


def _drawn_sums(
    ranking, judgments, plans, layout, doc, slot, later=None
) -> dict[HeadSum, np.ndarray]:
    """Head sums over the drawn columns, one row per sample: ``(samples, queries)``.

    Rank weights and cutoff masks are computed once per batch and shared by the
    measures that use them (weighed as :meth:`tiecore.engine.profiles.Divisor.weigh` does).
    """
    nq, size = len(judgments.qids), len(doc)
    if layout.docs.size == 0:
        return {m: np.zeros((size, nq)) for m in plans}
    query = ranking.query[layout.docs]
    query_start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    profile = sampled(_Tallied(ranking, judgments, layout, doc, later=later))
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

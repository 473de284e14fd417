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

Every draw is a hash of run, query, rank, round and sample
(:func:`tiecore.seeding.stream_key`): the same values whether a run's queries
are evaluated together or apart, in whatever batches of samples, with whatever
other measures.  (Drawing the judged docs' places instead of shuffling whole
groups changed the draws: a seed gives other values than it did before, with
the same distribution.)
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

#: Cells (samples x drawn columns, or samples x slots of sparse groups / 4) of one batch.
BATCH_CELLS = 2_000_000

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

    ``docs``: the row of each column (every row of a dense group, the active
    rows of a sparse one), in ranked order; ``cleared``: every row of the drawn
    groups (their contributions come from the draws).  Per column: ``dense``,
    ``compact`` (number of its group among the drawn ones), ``size`` and
    ``start`` (first row) of its group, ``base`` (first slot of a sparse
    group in the slots of all sparse groups, which number ``slots``).
    """

    docs: np.ndarray
    cleared: np.ndarray
    dense: np.ndarray
    compact: np.ndarray
    size: np.ndarray
    start: np.ndarray
    base: np.ndarray
    slots: int

    @classmethod
    def of(cls, ranking: Ranking, depth: int) -> _Layout:
        active = ranking.judged
        if active.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty.astype(bool), empty, empty, empty, empty, 0)
        code = ranking.level * 2 + ranking.judged
        low = np.minimum.reduceat(code, ranking.group_start)
        high = np.maximum.reduceat(code, ranking.group_start)
        count = np.add.reduceat(active.astype(np.int64), ranking.group_start)
        drawn = (low != high) & (count > 0) & (ranking.offset < depth)
        dense = drawn & (2 * count > ranking.size)
        sparse = drawn & ~dense
        group = ranking.group
        docs = np.flatnonzero(dense[group] | (sparse[group] & active))
        g = group[docs]
        compact = np.cumsum(np.r_[True, g[1:] != g[:-1]]) - 1 if docs.size else g
        sparse_size = np.where(sparse, ranking.size, 0)
        base = (np.cumsum(sparse_size) - sparse_size)[g]
        return cls(
            docs=docs,
            cleared=np.flatnonzero(drawn[group]),
            dense=dense[g],
            compact=compact,
            size=ranking.size[g],
            start=ranking.group_start[g],
            base=base,
            slots=int(sparse_size.sum()),
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
    layout = _Layout.of(ranking, deepest)
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
    take, ascending.  Dense groups sort 64-bit keys; sparse ones place their
    active docs (:func:`_place`).
    """
    columns = layout.docs.size
    if columns == 0:
        empty = np.zeros((size, 0), dtype=np.int64)
        return empty, empty
    # sort keys: the group's number in the high bits, the draw in the low ones
    low_bits = 63 - int(layout.compact[-1]).bit_length()
    keys = np.empty((size, columns), dtype=np.int64)
    high = layout.compact.astype(np.int64) << low_bits
    dense = np.flatnonzero(layout.dense)
    if dense.size:
        noise = words.grid(dense, first, size, 0) >> np.uint64(64 - low_bits)
        keys[:, dense] = high[dense] + noise.astype(np.int64)
    sparse = np.flatnonzero(~layout.dense)
    position = np.zeros((size, columns), dtype=np.int64)
    if sparse.size:
        position[:, sparse] = _place(layout, words, sparse, first, size)
        keys[:, sparse] = high[sparse] + position[:, sparse]
    order = np.argsort(keys, axis=1)
    doc = layout.docs[order]
    slot = np.where(
        layout.dense, layout.docs, layout.start[order] + np.take_along_axis(position, order, 1)
    )
    return doc, slot


def _place(layout: _Layout, words: _Words, columns: np.ndarray, first: int, size: int):
    """Slot (0-based in its group) of each sparse column's doc per sample: ``(size, columns)``.

    Round ``k``: every doc still unplaced draws a 32-bit word; it is kept when
    below the largest multiple of the group size (so that ``word % size`` is
    exactly uniform), when that slot is free, and when no doc before it in
    column order drew the same slot in this round.
    """
    count = columns.size
    n = layout.size[columns]
    limit = (1 << 32) - (1 << 32) % n
    out = np.empty((size, count), dtype=np.int64)
    taken = np.zeros(size * layout.slots, dtype=bool)
    sample = np.repeat(np.arange(size), count)
    column = np.tile(np.arange(count), size)
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
        codes, earliest = np.unique(code[free], return_index=True)
        placed = free[earliest]
        taken[codes] = True
        out[sample[placed], column[placed]] = spot[placed]
        left = np.ones(sample.size, dtype=bool)
        left[placed] = False
        sample, column = sample[left], column[left]
        round_ += 1
    return out


def _drawn_sums(ranking, judgments, plans, layout, doc, slot) -> dict[Measure, np.ndarray]:
    """Head sums over the drawn columns, one row per sample: ``(samples, queries)``."""
    nq, size = len(judgments.qids), len(doc)
    if layout.docs.size == 0:
        return {m: np.zeros((size, nq)) for m in plans}
    query = ranking.query[layout.docs]
    query_start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    profile = sampled(Draws(ranking, judgments, layout, doc))
    rank = ranking.rank[slot]
    sums = {}
    for measure, recipe in plans.items():
        terms = recipe.divisor.weigh(profile.component(recipe.component), rank)
        contrib = np.where(rank <= recipe.cut[query], terms, 0.0)
        full = np.zeros((size, nq))
        full[:, query[query_start]] = np.add.reduceat(contrib, query_start, axis=1)
        sums[measure] = full
    return sums

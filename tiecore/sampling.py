"""Monte Carlo tie-breaking: measure values under random orders of the tie groups.

Only *mixed* groups, whose docs do not all carry the same judgment, and that
start above the deepest cutoff, can change a measure; every other row keeps the
contribution it has in any order.  A sample therefore re-draws the order of
the mixed groups alone and adds their contributions to the fixed part.
"""

from __future__ import annotations

import numpy as np

from tiecore import kernels
from tiecore.judgments import Judgments, gain_of
from tiecore.measures import Measure
from tiecore.profiles import Profile, bpref_denominator, oblivious
from tiecore.ranking import Ranking
from tiecore.seeding import query_uniforms, stream_key

#: Rows x samples drawn at once; bounds the memory of a batch.
BATCH_CELLS = 2_000_000


def mixed_rows(ranking: Ranking, depth: int) -> np.ndarray:
    """Rows of the groups above ``depth`` whose judgments differ, in ranked order."""
    code = ranking.level * 2 + ranking.judged
    if code.size == 0:
        return np.zeros(0, dtype=np.int64)
    low = np.minimum.reduceat(code, ranking.group_start)
    high = np.maximum.reduceat(code, ranking.group_start)
    mixed = (low != high) & (ranking.offset < depth)
    return np.flatnonzero(mixed[ranking.group])


def sample_values(
    ranking: Ranking,
    judgments: Judgments,
    measures: list[Measure],
    *,
    samples: int,
    rng: np.random.Generator,
    depth: int | None = None,
) -> dict[Measure, np.ndarray]:
    """Per-query values of each measure under ``samples`` random tie-breaks.

    Returns
    -------
    dict
        Measure -> array ``(samples, queries)`` in the judgments' query order.
    """
    plans = {m: kernels.plan(m, judgments, depth) for m in measures}
    deepest = max((int(p.cut.max(initial=0)) for p in plans.values()), default=0)
    every = mixed_rows(ranking, np.iinfo(np.int64).max)
    # Draw keys for every mixed row, so that a seed gives the same orders whatever the measures.
    used = np.flatnonzero(ranking.offset[ranking.group[every]] < deepest)
    rows = every[used]
    base = oblivious(ranking, judgments)
    fixed = {}
    for measure, recipe in plans.items():
        component = base.component(recipe.component).copy()
        component[rows] = 0.0
        fixed[measure] = kernels.weighted_head_sums(component, recipe.weight, ranking, recipe.cut)
    out = {m: np.empty((samples, len(judgments.qids))) for m in measures}
    batch = max(1, min(samples, BATCH_CELLS // max(every.size, 1)))
    # Keyed by run, query, rank and sample: the same draws however queries or samples are split.
    key, query_of, rank_of = stream_key(rng), ranking.query[rows], ranking.rank[rows]
    for first in range(0, samples, batch):
        size = min(batch, samples - first)
        keys = query_uniforms(key, judgments.qids, query_of, rank_of, first, size)
        delta = _mixed_sums(ranking, judgments, plans, rows, keys)
        for measure, recipe in plans.items():
            out[measure][first : first + size] = kernels.finish(
                recipe, fixed[measure] + delta[measure]
            )
    return out


def _mixed_sums(ranking, judgments, plans, rows, keys) -> dict[Measure, np.ndarray]:
    """Head sums over the mixed rows for random orders, one per row of ``keys``.

    Each group's rows are put in the order of their uniform ``keys``; returns
    ``(samples, queries)`` sums per measure.
    """
    nq, size = len(judgments.qids), len(keys)
    if rows.size == 0:
        return {m: np.zeros((size, nq)) for m in plans}
    group = ranking.group[rows]
    compact = np.cumsum(np.r_[True, group[1:] != group[:-1]]) - 1
    order = np.argsort(compact + keys, axis=1)
    perm = rows[order]
    profile = _sample_profile(ranking, judgments, rows, group, compact, perm)
    query = ranking.query[rows]
    query_start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    sums = {}
    for measure, recipe in plans.items():
        component = profile.component(recipe.component)
        divisor = 1.0 if recipe.weight == "one" else _divisor(recipe.weight, ranking.rank[rows])
        keep = ranking.rank[rows] <= recipe.cut[query]
        contrib = np.where(keep, component / divisor, 0.0)
        full = np.zeros((size, nq))
        full[:, query[query_start]] = np.add.reduceat(contrib, query_start, axis=1)
        sums[measure] = full
    return sums


def _divisor(weight: str, rank: np.ndarray) -> np.ndarray:
    return rank if weight == "rank" else np.log2(rank + 1.0)


def _sample_profile(ranking, judgments, rows, group, compact, perm) -> Profile:
    """Oblivious components of the mixed rows after re-drawing: arrays ``(samples, rows)``."""
    rel = ranking.rel[perm]
    nonrel = ranking.nonrel[perm]
    starts = np.flatnonzero(np.r_[True, compact[1:] != compact[:-1]])
    cum_rel = _within_group_cumsum(rel, starts, compact) + ranking.rel_before[group]
    nonrel_above = (
        _within_group_cumsum(nonrel, starts, compact) - nonrel + ranking.nonrel_before[group]
    )
    query = ranking.query[rows]
    num_rel = judgments.num_rel[query]
    denominator = bpref_denominator(ranking, judgments)[query]
    relf = rel.astype(np.float64)
    bpref = np.where(
        rel,
        1.0 - np.minimum(nonrel_above, num_rel) / np.where(denominator > 0, denominator, 1),
        0.0,
    )
    return Profile(
        rel=relf,
        ap=relf * cum_rel,
        first=relf * (cum_rel == 1),
        bpref=bpref,
        _gain_source=lambda gain: np.where(
            ranking.judged[perm],
            gain_of(ranking.level[perm], gain, judgments.gain_shift(gain)[query]),
            0.0,
        ),
    )


def _within_group_cumsum(flags: np.ndarray, starts: np.ndarray, compact: np.ndarray) -> np.ndarray:
    """Inclusive running count of ``flags`` (samples x rows) inside each group."""
    total = np.cumsum(flags, axis=1, dtype=np.int64)
    before = total[:, starts] - flags[:, starts]
    return total - before[:, compact]

"""Shared parts of trec_eval's order-dependent measures that are no head sum.

:func:`sample_orders` scores a measure on sampled orderings of the tie groups (its
oblivious scorer applied to each drawn order), :func:`retrieved` cuts at the depth
(trec_eval's ``-M``), :func:`trec_levels` gives each row's level as trec_eval's
``results_rel_list`` holds it, and :func:`gain_table` / :func:`ideal_gains` give a
query's gains as trec_eval's ``ndcg``, ``ndcg_rel``, ``Rndcg`` and ``G`` set them up
(each qrels level ``0 .. max`` gains its own value unless a ``level=gain`` parameter
says otherwise; the ideal ranking takes the qrels docs by decreasing gain).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from tiecore.engine.judgments import Judgments
from tiecore.engine.profiles import COMPONENTS, doc_component, register_component
from tiecore.engine.ranking import Ranking
from tiecore.measures.registry import Param

#: trec_eval's relevance value of a retrieved doc not in the qrels (``RELVALUE_NONPOOL``)
#: and of one in the qrels with a negative level (``RELVALUE_UNJUDGED``).
NONPOOL, UNJUDGED = -1, -2
_REGISTER = threading.Lock()


def retrieved(ranking: Ranking, depth: int | None) -> np.ndarray:
    """Rows within the depth (trec_eval ``-M``)."""
    return ranking.rank <= depth if depth is not None else np.ones(ranking.rank.size, bool)


def trec_levels(ranking: Ranking) -> np.ndarray:
    """Per row trec_eval's relevance value: the qrels level (0 and up), ``-1`` for a doc
    not in the qrels, ``-2`` for one whose qrels level is negative."""
    level = np.where(ranking.judged, ranking.level, NONPOOL)
    return np.where(ranking.judged & (ranking.level < 0), UNJUDGED, level)


def parse_gains(text: str) -> dict[int, float]:
    """``"1:3;2:9;4:4.5"`` (tiecore's spelling of trec_eval's ``1=3,2=9,4=4.5``) as
    ``{level: gain}``; ``""`` is none.

    >>> parse_gains("1:3;2:9;4:4.5")
    {1: 3.0, 2: 9.0, 4: 4.5}
    """
    gains: dict[int, float] = {}
    for part in filter(None, text.split(";")):
        level, _, gain = part.partition(":")
        gains.setdefault(int(level), float(gain))  # trec_eval takes the first pair given
    return gains


def canonical_gains(text: str) -> str:
    """The ``gains`` parameter checked and written back: ValueError names what is wrong.

    >>> canonical_gains("1:3;2:9.0")
    '1:3.0;2:9.0'
    """
    try:
        gains = parse_gains(text)
    except ValueError:
        raise ValueError(
            "must be level:gain pairs separated by ';' (trec_eval's 1=3,2=9 is 1:3;2:9)"
        ) from None
    return ";".join(f"{level}:{gain!r}" for level, gain in gains.items())


class GainsParam(Param):
    """trec_eval's ``level=gain`` pairs, written ``level:gain`` separated by ``;``."""

    def canonical(self, value: str) -> str:
        return canonical_gains(value)


#: The ``gains`` parameter of nDCG, G, NDCGRel and Rndcg.
GAINS_PARAM = GainsParam(
    "",
    description="trec_eval's level=gain pairs as level:gain;level:gain (ndcg.1=3,2=9 is "
    "gains=1:3;2:9); the other levels gain their level",
)


def gain_map_component(text: str) -> str:
    """The key of the document-value component of a ``gains`` parameter (registered on
    first use): a doc's gain by its trec_eval relevance value (:func:`gain_table`).  Its
    key does not start ``gain:``, so the sampler tells every judged doc apart (level 0
    and negative levels may gain here)."""
    key = f"gainmap:{text}"
    if key not in COMPONENTS:
        gains = parse_gains(text)

        def value(ranking: Ranking, judgments: Judgments, rows) -> np.ndarray:
            _, table = gain_table(judgments, gains)
            return row_gains(ranking, table)[rows]

        with _REGISTER:
            if key not in COMPONENTS:
                register_component(doc_component(key, value))
    return key


def ideal_dcg_of(judgments: Judgments, gains: dict, cutoff: int | None) -> np.ndarray:
    """Per query the ideal DCG of the ``gains`` (their positive values, largest first,
    ``/ log2(rank + 1)``, cut at ``cutoff``), added one after the other as trec_eval adds."""
    values, starts = ideal_gains(judgments, gains)
    nq = len(starts) - 1
    length = np.diff(starts)
    index = np.arange(values.size) - np.repeat(starts[:-1], length)
    keep = (values > 0) & (index < (cutoff if cutoff is not None else values.size + 1))
    running = segment_cumsum(np.where(keep, values / np.log2(index + 2.0), 0.0), starts[:-1])
    return segment_last(running, starts[:-1], nq, np.arange(nq))


def gain_table(judgments: Judgments, gains: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """``(top, table)``: per query its largest qrels level (``-1`` where none is 0 or more),
    and ``table[q, level + 2]`` the gain of trec_eval's relevance value ``level`` (``-2``
    .. the largest level of all queries) in query ``q``: a parameter's gain for a level
    named there, else the level itself for ``0 .. top[q]``, else 0."""

    def build() -> tuple[np.ndarray, np.ndarray]:
        nq = len(judgments.qids)
        levels = judgments.levels
        query = judgments.query_of_key
        top = np.full(nq, -1, np.int64)
        if levels.size:
            np.maximum.at(top, query, levels)
        width = int(max(top.max(initial=-1), max(gains, default=-1), 0)) + 3
        column = np.arange(width) - 2
        table = np.where((column >= 0) & (column <= top[:, None]), column, 0).astype(np.float64)
        for level, gain in gains.items():
            if -2 <= level < width - 2:
                table[:, level + 2] = gain
        return top, table

    return judgments.derived(("trec_gain_table", tuple(gains.items())), build)


def row_gains(ranking: Ranking, table: np.ndarray) -> np.ndarray:
    """Per row the gain of its trec_eval relevance value (:func:`gain_table`)."""
    level = np.minimum(trec_levels(ranking), table.shape[1] - 3)
    return table[ranking.query, level + 2]


def ideal_gains(judgments: Judgments, gains: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """``(values, starts)``: per query the gains of its qrels docs of level 0 or more,
    sorted decreasing (trec_eval's ideal ranking), queries one after the other;
    ``starts`` has one entry per query and a last one (the total)."""

    def build() -> tuple[np.ndarray, np.ndarray]:
        nq = len(judgments.qids)
        _, table = gain_table(judgments, gains)
        levels = judgments.levels
        query = judgments.query_of_key
        keep = levels >= 0
        values = table[query[keep], levels[keep] + 2]
        query = query[keep]
        order = np.lexsort((-values, query))
        counts = np.bincount(query, minlength=nq)
        return values[order], np.r_[0, np.cumsum(counts)]

    return judgments.derived(("trec_ideal_gains", tuple(gains.items())), build)


def sample_orders(
    score: Callable[[Ranking], np.ndarray],
    ranking: Ranking,
    judgments: Judgments,
    *,
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
) -> np.ndarray:
    """``(samples, queries)``: ``score`` (one ordering's per-query values) of sampled
    orderings of the tie groups.

    The orders are :mod:`tiecore.engine.sampling`'s keyed draws (the same for a run's
    queries evaluated together or apart); each is the ranking with the drawn groups'
    judged docs moved to their drawn rows (their unjudged docs, all alike to trec_eval,
    fill the rest), scored as the ranking's own order is: one scoring of the whole run
    per sample (a Python loop over the samples, each vectorised over the rows).
    """
    from tiecore.engine.sampling import Sampler  # lazy: sampling (~7 ms) only when sampled

    nq = len(ranking.counts)
    deepest = depth if depth is not None else int(ranking.counts.max(initial=0))
    sampler = Sampler(ranking, judgments, deepest)
    own = score(ranking)
    out = np.broadcast_to(own, (samples, nq)).copy()
    if not sampler.rows.size:
        return out
    cleared = sampler.cleared
    base = {
        "level": ranking.level.copy(),
        "judged": ranking.judged.copy(),
        "rel": ranking.rel.copy(),
        "nonrel": ranking.nonrel.copy(),
    }
    for name in base:
        base[name][cleared] = 0
    for first, size, doc, slot in sampler.draws(samples, rng):
        for i in range(size):  # one scoring of the whole run per sample
            fields = {}
            for name, values in base.items():
                moved = values.copy()
                moved[slot[i]] = getattr(ranking, name)[doc[i]]
                fields[name] = moved
            out[first + i] = score(replace(ranking, **fields))
    return out


def segment_cumsum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` restarted at each of ``starts`` (sorted, the first 0),
    each added one after the other from 0, as trec_eval's loops add (a cumulative sum
    of the whole array less the sum before the segment would round otherwise).

    >>> segment_cumsum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 2])).tolist()
    [1.0, 3.0, 3.0, 7.0]
    """
    out = np.empty(len(values))
    if not len(values):
        return out
    length = np.diff(np.r_[starts, len(values)])
    keep = length > 0
    starts, length = starts[keep], length[keep]
    bucket = np.ceil(np.log2(length)).astype(np.int64)
    for b in np.flatnonzero(np.bincount(bucket)):
        chosen = np.flatnonzero(bucket == b)
        width = int(length[chosen].max())
        step = np.arange(width)
        inside = step[None, :] < length[chosen][:, None]
        index = np.where(inside, starts[chosen][:, None] + step[None, :], 0)
        sums = np.cumsum(np.where(inside, values[index], 0.0), axis=1)
        out[index[inside]] = sums[inside]
    return out


def segment_last(running: np.ndarray, starts: np.ndarray, nq: int, owner: np.ndarray):
    """Per segment (query ``owner[i]`` of segment ``i``) the last running sum; 0 for
    queries with no segment."""
    out = np.zeros(nq)
    ends = np.r_[starts[1:], len(running)] - 1
    nonempty = ends >= starts
    out[owner[nonempty]] = running[ends[nonempty]]
    return out


def linear_statistic(ranking: Ranking, values: np.ndarray, weights: np.ndarray) -> dict:
    """Per query ``value, var, min, max`` over the orderings of ``sum_rows values[doc at
    the row] * weights[row]``: doc values shuffled inside each tie group, row weights fixed
    (0 past the depth).

    Inside a group of ``n`` docs the mean is ``n`` times the mean value times the mean
    weight, the variance ``sum (v - mean v)^2 sum (w - mean w)^2 / (n - 1)`` (a linear
    permutation statistic, Hoeffding 1951), the extremes the values and weights sorted
    alike or opposite (the rearrangement inequality); groups are shuffled independently,
    so each sums over the query's groups.
    """
    nq = len(ranking.counts)
    group, starts, size = ranking.group, ranking.group_start, ranking.size
    if not values.size:
        zero = np.zeros(nq)
        return {"value": zero, "var": zero.copy(), "min": zero.copy(), "max": zero.copy()}
    v_sum = np.add.reduceat(values, starts)
    w_sum = np.add.reduceat(weights, starts)
    v_mean, w_mean = v_sum / size, w_sum / size
    mean = v_mean * w_sum
    v_dev = np.add.reduceat((values - v_mean[group]) ** 2, starts)
    w_dev = np.add.reduceat((weights - w_mean[group]) ** 2, starts)
    var = np.where(size > 1, v_dev * w_dev / np.maximum(size - 1, 1), 0.0)
    by_value = np.lexsort((values, group))
    by_weight = np.lexsort((weights, group))
    ascending = weights[by_weight]
    high = np.add.reduceat(values[by_value] * ascending, starts)
    low = np.add.reduceat(values[by_value] * ascending[_flip(starts, size)], starts)
    q = ranking.group_query
    return {
        "value": np.bincount(q, weights=mean, minlength=nq),
        "var": np.bincount(q, weights=var, minlength=nq),
        "min": np.bincount(q, weights=low, minlength=nq),
        "max": np.bincount(q, weights=high, minlength=nq),
    }


def _flip(starts: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The index that reverses each group's slice: ``start + size - 1 - position``."""
    owner = np.repeat(np.arange(len(starts)), size)
    position = np.arange(owner.size) - np.repeat(starts, size)
    return starts[owner] + size[owner] - 1 - position

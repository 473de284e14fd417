"""trec_eval's ``iprec_at_recall``: interpolated precision at 11 recall levels, exact under ties.

trec_eval (``m_iprec_at_recall.c``) turns each recall level ``c`` into a
count of relevant docs ``k(c) = (long)(c * num_rel + 0.9)`` and reports

    iprec(c) = max_{max(k(c), 1) <= m <= RR} m / rank_m

(``rank_m`` the rank of the ``m``-th relevant doc retrieved, ``RR`` how many
were retrieved within the depth; 0 when no ``m`` qualifies): the precision
interpolated as the maximum precision at any rank at or below.  That ``+ 0.9``
is trec_eval 9.0.x's (pytrec_eval, ir_measures); the later trec_eval that wrote
trec_eval's test outputs rounds to nearest (``+ 0.5``): ``rounding="nearest"``.

Tie-aware.  The tie groups' relevant counts and offsets are fixed, so the
ordinals ``R + 1 .. R + r`` of a group's relevant docs and the ranks around
them are too; only the positions of the relevant docs inside each group move.
The maximum over ``m`` is the maximum of independent per-group maxima
``M_g = max_k (R_g + k) / (t_g + s_k)`` (``s_k`` the ``k``-th relevant
position, uniform over the ``C(n, r)`` placements), so with ``F_g`` their
distribution functions

    E[iprec] = sum_v v (F(v) - F(v-)),   F = prod_g F_g

over the merged support points.  Groups whose placement is fixed (all
relevant, none, or one doc) enter as constants.  Each mixed group's
distribution comes from enumerating its ``C(n, r)`` placements, so the
tie-aware curve is exact but refuses (InputError) a group with more than
``limit`` placements.  The bounds are the optimistic and pessimistic orders:
every ``m / rank_m`` falls as ``rank_m`` grows.
"""

from __future__ import annotations

import itertools

import numpy as np

from tiecore.errors import InputError
from tiecore.judgments import Judgments
from tiecore.ranking import Ranking

#: trec_eval's default recall levels (C doubles, as written there).
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: Most placements of one tie group's relevant docs that the tie-aware curve enumerates.
LIMIT = 200_000


def level_names(levels=RECALL_LEVELS) -> list[str]:
    """trec_eval's measure names: ``iprec_at_recall_0.00`` ...

    >>> level_names((0.0, 0.5))
    ['iprec_at_recall_0.00', 'iprec_at_recall_0.50']
    """
    return [f"iprec_at_recall_{c:.2f}" for c in levels]


#: How trec_eval turns a recall level into a count of relevant docs: ``(long)(c * num_rel
#: + 0.9)`` in trec_eval 9.0.x (pytrec_eval, ir_measures), ``+ 0.5`` (to nearest) in the
#: later trec_eval that produced the trec_eval test outputs.
ROUNDINGS = {"up": 0.9, "nearest": 0.5}


def relevant_counts(judgments: Judgments, levels=RECALL_LEVELS, rounding: str = "up") -> np.ndarray:
    """``(queries, levels)``: the ordinal ``max(k(c), 1)`` of the first relevant doc that counts.

    >>> import pandas as pd
    >>> j = Judgments.from_qrels(pd.DataFrame({"qid": "1", "docno": list("abc"), "level": 1}))
    >>> relevant_counts(j, (0.0, 0.1, 0.5, 1.0)).tolist()
    [[1, 1, 2, 3]]
    >>> relevant_counts(j, (0.0, 0.1, 0.5, 1.0), "nearest").tolist()
    [[1, 1, 2, 3]]
    """
    shift = ROUNDINGS[rounding]
    cut = (np.asarray(levels, dtype=np.float64) * judgments.num_rel[:, None] + shift).astype(
        np.int64
    )
    return np.maximum(cut, 1)


def _retrieved(ranking: Ranking, depth: int | None) -> np.ndarray:
    """Rows within the depth (trec_eval ``-M``)."""
    return ranking.rank <= depth if depth is not None else np.ones(ranking.rank.size, bool)


def iprec_oblivious(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    rounding: str = "up",
) -> np.ndarray:
    """``(queries, levels)`` interpolated precision of the ranking's own order.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "c"], "level": 1})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [3.0, 2.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> iprec_oblivious(Ranking.build(run, j), j, (0.0, 0.5, 1.0)).round(4).tolist()
    [[1.0, 1.0, 0.6667]]
    """
    keep = np.flatnonzero(ranking.rel & _retrieved(ranking, depth))
    query = ranking.query[keep]
    ordinal = np.arange(keep.size) - np.searchsorted(query, query) + 1
    precision = ordinal / ranking.rank[keep].astype(np.float64)
    return _max_from(query, ordinal, precision, relevant_counts(judgments, levels, rounding))


def _max_from(query, ordinal, precision, first) -> np.ndarray:
    """Per query and level, the max of ``precision`` over rows with ``ordinal >= first``
    (0 if none); rows sorted by query."""
    nq, nl = first.shape
    out = np.zeros((nq, nl))
    if not query.size:
        return out
    for level in range(nl):  # 11 levels
        value = np.where(ordinal >= first[query, level], precision, 0.0)
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
        out[query[starts], level] = np.maximum.reduceat(value, starts)
    return out


def iprec_bounds(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    rounding: str = "up",
) -> tuple[np.ndarray, np.ndarray]:
    """Min and max over all orderings: the pessimistic and optimistic orders."""
    return tuple(
        iprec_oblivious(ranking.retie(policy), judgments, levels, depth=depth, rounding=rounding)
        for policy in ("pessimistic", "optimistic")
    )


def iprec_aware(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    limit: int = LIMIT,
    rounding: str = "up",
) -> np.ndarray:
    """``(queries, levels)`` interpolated precision averaged exactly over all orderings.

    Raises InputError when a tie group mixing relevant and other docs has more
    than ``limit`` placements of its relevant docs (see the module docstring).

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": 1})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("ab"), "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> iprec_aware(Ranking.build(run, j), j, (0.0,)).tolist()  # (1 + 1/2) / 2
    [[0.75]]
    """
    return _moments(ranking, judgments, levels, depth=depth, limit=limit, rounding=rounding)[0]


def iprec_variance(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    limit: int = LIMIT,
    rounding: str = "up",
) -> np.ndarray:
    """``(queries, levels)`` exact variance over all orderings: ``sum v^2 dF - E^2``.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": 1})
    >>> run = pd.DataFrame({"qid": "1", "docno": list("ab"), "score": [1.0, 1.0]})
    >>> j = Judgments.from_qrels(qrels)
    >>> iprec_variance(Ranking.build(run, j), j, (0.0,)).tolist()  # values 1 and 1/2
    [[0.0625]]
    """
    mean, square = _moments(ranking, judgments, levels, depth=depth, limit=limit, rounding=rounding)
    return np.maximum(square - mean**2, 0.0)


def _moments(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    depth: int | None = None,
    limit: int = LIMIT,
    rounding: str = "up",
) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, second moment)`` arrays ``(queries, levels)`` (see :func:`iprec_aware`)."""
    first = relevant_counts(judgments, levels, rounding)
    nq, nl = first.shape
    retrieved = _retrieved(ranking, depth)
    t, n = ranking.offset, ranking.size
    slots = n if depth is None else np.clip(depth - t, 0, n)
    r, before = ranking.rel_count, ranking.rel_before
    mixed = (r > 0) & (r < n) & (slots > 0)
    # constant part: relevant rows (within the depth) of groups whose placement is fixed
    fixed_row = ranking.rel & retrieved & ~mixed[ranking.group]
    rows = np.flatnonzero(fixed_row)
    g = ranking.group[rows]
    ordinal = before[g] + ranking.position[rows] + 1  # fixed groups: relevant docs first
    precision = ordinal / ranking.rank[rows].astype(np.float64)
    constant = _max_from(ranking.query[rows], ordinal, precision, first)
    groups = np.flatnonzero(mixed)
    if not groups.size:
        return constant, constant**2
    events = _group_distributions(groups, ranking, slots, first, limit, judgments.qids)
    mean, square = _expected_max(constant.ravel(), *events)
    return mean.reshape(nq, nl), square.reshape(nq, nl)


def _group_distributions(groups, ranking, slots, first, limit, judgments_qids):
    """Events ``(cell, value, F_g(value), F_g(previous value))`` of every mixed group's
    maximum, per level.

    ``cell = query * levels + level``; a group whose relevant docs all fall
    below the level's first ordinal is left out of that cell.
    """
    nl = first.shape[1]
    n, r = ranking.size[groups], ranking.rel_count[groups]
    from scipy import special  # on first use: tiecore loads scipy lazily

    sizes = special.comb(n, r)  # placements (as floats: only compared with the limit)
    if sizes.max() > limit:
        worst = int(np.argmax(sizes))
        raise InputError(
            f"run {ranking.name}",
            None,
            f"query {judgments_qids[ranking.group_query[groups[worst]]]} has a tie group of "
            f"{n[worst]} docs with {r[worst]} relevant: {sizes[worst]:.3g} placements, more "
            f"than the {limit} the exact IPrec (iprec_at_recall) enumerates",
            "ties='oblivious' or 'sampled' for IPrec on this run",
        )
    out_cells, out_values, out_cdf, out_previous = [], [], [], []
    shapes = np.unique(np.stack([n, r], axis=1), axis=0)
    for size, rel in shapes:  # one pass per distinct (n, r) shape
        placements = np.array(list(itertools.combinations(range(size), rel)), dtype=np.int64)
        chosen = groups[(n == size) & (r == rel)]
        t = ranking.offset[chosen][:, None, None]
        before = ranking.rel_before[chosen][:, None, None]
        k = np.arange(1, rel + 1)[None, None, :]
        s = placements[None, :, :]
        precision = (before + k) / (t + s + 1.0)
        precision = np.where(s < slots[chosen][:, None, None], precision, 0.0)
        # suffix maxima over k: the group's maximum when ordinals below k don't count
        suffix = np.maximum.accumulate(precision[:, :, ::-1], axis=2)[:, :, ::-1]
        query = ranking.group_query[chosen]
        k1 = first[query] - ranking.rel_before[chosen][:, None]  # (groups, levels)
        present = k1 <= rel
        gi, li = np.nonzero(present)
        column = np.maximum(k1[gi, li], 1) - 1
        maxima = np.sort(suffix[gi, :, column], axis=1)  # (pairs, placements)
        last = np.ones(maxima.shape, bool)
        last[:, :-1] = maxima[:, 1:] != maxima[:, :-1]
        pair, at = np.nonzero(last)
        cdf = (at + 1) / placements.shape[0]
        same = np.r_[False, pair[1:] == pair[:-1]]
        out_cells.append((query[gi] * nl + li)[pair])
        out_values.append(maxima[pair, at])
        out_cdf.append(cdf)
        out_previous.append(np.where(same, np.r_[0.0, cdf[:-1]], 0.0))
    return tuple(map(np.concatenate, (out_cells, out_values, out_cdf, out_previous)))


def _expected_max(constant, cells, values, cdf, previous) -> tuple[np.ndarray, np.ndarray]:
    """``E[V]`` and ``E[V^2]``, ``V = max(constant, M_1, M_2, ...)``, per cell from the
    groups' CDF events.

    ``F(v) = [constant <= v] prod_g F_g(v)``; sweeping a cell's events by value,
    ``E = sum v (F after the event - F before it)``.  An event moves one factor
    from ``previous`` to ``cdf``; a group's first event (``previous`` 0) lifts it
    from 0, so the product is kept as a sum of logs and a count of factors at 0.
    """
    out, square = constant.copy(), constant**2
    touched = np.unique(cells)
    if not touched.size:
        return out, square
    cells = np.concatenate([cells, touched])  # the constant: one event of probability 1
    values = np.concatenate([values, constant[touched]])
    cdf = np.concatenate([cdf, np.ones(touched.size)])
    previous = np.concatenate([previous, np.zeros(touched.size)])
    order = np.lexsort((values, cells))
    cells, values, cdf, previous = cells[order], values[order], cdf[order], previous[order]
    starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
    count = np.diff(np.r_[starts, cells.size])
    row = np.repeat(np.arange(starts.size), count)
    col = np.arange(cells.size) - np.repeat(starts, count)
    shape = (starts.size, int(count.max()))
    first = np.zeros(shape)
    log_step = np.zeros(shape)
    value = np.zeros(shape)
    lift = previous == 0
    first[row, col] = lift
    log_step[row, col] = np.log(cdf) - np.where(lift, 0.0, np.log(np.where(lift, 1.0, previous)))
    value[row, col] = values
    at_zero = first.sum(axis=1, keepdims=True) - np.cumsum(first, axis=1)
    after = np.where(at_zero == 0, np.exp(np.cumsum(log_step, axis=1)), 0.0)
    before = np.zeros(shape)
    before[:, 1:] = after[:, :-1]
    mass = after - before
    out[cells[starts]] = np.sum(value * mass, axis=1)
    square[cells[starts]] = np.sum(value**2 * mass, axis=1)
    return out, square


def iprec_sample(
    ranking: Ranking,
    judgments: Judgments,
    levels=RECALL_LEVELS,
    *,
    samples: int,
    rng: np.random.Generator | int,
    depth: int | None = None,
    rounding: str = "up",
) -> np.ndarray:
    """``(samples, queries, levels)`` interpolated precision under random tie-breaks.

    The orders are :mod:`tiecore.sampling`'s keyed draws; each draw moves the
    relevant docs of the drawn groups to their drawn slots, and the curve is
    read as :func:`iprec_oblivious` reads one order.
    """
    from tiecore import sampling
    from tiecore.seeding import stream_key

    first = relevant_counts(judgments, levels, rounding)
    nq, nl = first.shape
    deepest = depth if depth is not None else int(ranking.counts.max(initial=0))
    layout = sampling._Layout.of(ranking, deepest)
    drawn = np.zeros(ranking.rank.size, bool)
    drawn[layout.cleared] = True
    # queries without a drawn group keep one curve (their order does not matter)
    out = np.broadcast_to(
        iprec_oblivious(ranking, judgments, levels, depth=depth, rounding=rounding),
        (samples, nq, nl),
    ).copy()
    varies = np.zeros(nq, bool)
    varies[ranking.query[layout.cleared]] = True
    keep = ranking.rel & (_retrieved(ranking, depth) | drawn) & varies[ranking.query]
    rows = np.flatnonzero(keep)
    if not rows.size:
        return out
    query = ranking.query[rows]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    ordinal = np.arange(rows.size) - np.repeat(starts, np.diff(np.r_[starts, rows.size])) + 1
    index = np.full(ranking.rank.size, -1)
    index[rows] = np.arange(rows.size)
    beyond = int(ranking.counts.max(initial=0)) + 1  # a rank past every depth
    fixed = np.where(ranking.rank[rows] <= deepest, ranking.rank[rows], beyond)
    words = sampling._Words(stream_key(rng), judgments, ranking, layout.docs)
    batch = max(1, min(samples, sampling.BATCH_CELLS // max(layout.docs.size, rows.size, 1)))
    for start in range(0, samples, batch):
        size = min(batch, samples - start)
        rank = np.broadcast_to(fixed, (size, rows.size)).copy()
        if layout.docs.size:
            doc, slot = sampling.draw(layout, words, start, size)
            moved = ranking.rel[doc]
            sample = np.broadcast_to(np.arange(size)[:, None], doc.shape)
            new = ranking.rank[slot][moved]
            rank[sample[moved], index[doc[moved]]] = np.where(new <= deepest, new, beyond)
        key = np.sort(query.astype(np.int64) * (beyond + 1) + rank, axis=1)
        rank = key - query.astype(np.int64) * (beyond + 1)
        precision = np.where(rank < beyond, ordinal / rank, 0.0)
        for level in range(nl):  # 11 levels
            value = np.where(ordinal >= first[query, level], precision, 0.0)
            out[start : start + size, query[starts], level] = np.maximum.reduceat(
                value, starts, axis=1
            )
    return out


# ---------------------------------------------- hooks of a registry family (tiecore.registry)


def _rounding(measure) -> str:
    """The measure's ``round`` parameter (``up``: trec_eval 9.0.x; ``nearest``: later)."""
    return measure.param("round")


def _level(measure) -> tuple[float]:
    """The measure's recall level (parameter ``recall``), as a one-level tuple."""
    return (float(measure.param("recall")),)


def family_values(measure, profile, ranking: Ranking, judgments: Judgments, depth=None):
    """Per-query interpolated precision at the measure's recall level, in the profile's mode."""
    function = iprec_aware if profile.mode == "aware" else iprec_oblivious
    return function(ranking, judgments, _level(measure), depth=depth, rounding=_rounding(measure))[
        :, 0
    ]


def family_spread(measure, ranking: Ranking, judgments: Judgments, depth=None) -> dict:
    """Per-query ``value, var, min, max`` (exact; InputError past :data:`LIMIT`)."""
    levels = _level(measure)
    rounding = _rounding(measure)
    mean, square = _moments(ranking, judgments, levels, depth=depth, rounding=rounding)
    low, high = iprec_bounds(ranking, judgments, levels, depth=depth, rounding=rounding)
    return {
        "value": mean[:, 0],
        "var": np.maximum(square - mean**2, 0.0)[:, 0],
        "min": low[:, 0],
        "max": high[:, 0],
    }


def family_sample(measure, ranking: Ranking, judgments: Judgments, *, samples, rng, depth=None):
    """``(samples, queries)`` interpolated precision under random tie-breaks."""
    return iprec_sample(
        ranking,
        judgments,
        _level(measure),
        samples=samples,
        rng=rng,
        depth=depth,
        rounding=_rounding(measure),
    )[:, :, 0]

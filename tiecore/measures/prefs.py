"""trec_eval's preference measures (``-R prefs`` / ``-R qrels_prefs``, ``-m all_prefs``).

Judgments are preferences: within a judgment sub-group (JSG) of a judgment group (JG,
one user's information need) a doc of a higher level is preferred to one of a lower
level.  A JG of one JSG keeps its docs in equivalence classes (ECs) by level, every
doc of a higher class preferred to every doc of a lower one; a JG of several JSGs is a
preference relation closed under transitivity (A > B in one JSG and B > C in another
give A > C; a preference both ways is an error).

A run ranks the judged docs it retrieved (its "judged retrieved" docs, ranked
``0 .. NJR-1`` in the run's order; the judged docs it did not retrieve come after, in
docno order).  Each preference ``A > B`` of a JG falls into one of:

* retrieved: both retrieved; *fulfilled* when A ranks above B;
* implied: one retrieved; fulfilled when it is A;
* not occurring: neither retrieved (never fulfilled).

Per JG trec_eval 9.0.x counts ``ful_ret``, ``poss_ret`` (all retrieved preferences),
``ful_imp``, ``poss_imp`` and ``notoccur``, its relevant docs (level > 0) and
non-relevant ones (level 0), retrieved or not, and, over all JGs, ``C[a, b]``: the
number of JGs preferring a to b.  Its measures (:data:`PREFS_MEASURES`, in its order):

``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``
    counts summed over the JGs (``poss_ret + poss_imp + notoccur``, ``ful_ret +
    ful_imp``, ``ful_ret``), summed over the queries in the summary;
``prefs_simp`` (``_ret``, ``_imp``)
    fulfilled / possible, both summed over the JGs (retrieved only; retrieved and
    implied);
``prefs_avgjg`` (``_ret``, ``_imp``)
    the same ratio per JG (a JG without preferences adds 0), averaged over the JGs;
``prefs_pair`` (``_ret``, ``_imp``)
    per pair of docs some JG has a preference on, ``C[hi, lo] / (C[hi, lo] + C[lo,
    hi])`` (``hi`` the doc ranked higher), averaged over those pairs; a pair of
    unretrieved docs adds 0 (``_imp``: not counted; ``_ret``: both retrieved only);
``prefs_avgjg_Rnonrel`` (``_ret``)
    per JG with ``R`` relevant and ``N`` non-relevant docs (retrieved: ``_ret``): for
    ``R >= N`` the JG's ratio with ``R - N`` extra fulfilled non-relevant docs below
    each relevant one; for ``R < N`` recounted over the relevant docs and the first
    ``R`` non-relevant ones only; averaged over the JGs.  The recount follows
    trec_eval's code as it is (which compares the last class with itself).

Every value here is trec_eval 9.0.8's, to the bit: sums in its order, levels as 32-bit
floats.  Under ties without a depth cut, the retrieved set is fixed and a tied pair
is fulfilled with probability 1/2, so the counts, ``simp``, ``avgjg`` and ``pair``
measures have an exact expectation: :func:`query_values` takes ``groups`` (the tie
group of each judged retrieved doc) and counts each tied preference as 1/2; their
exact variance and range follow from the same pairs (:func:`tied_spread`).  The
``Rnonrel`` measures recount by rank; their exact expectation weighs which docs the
recount keeps (:func:`_rnonrel_aware`), without a spread.  Sampled orderings
(:func:`query_draws`) are the tie-aware value moved by each tied pair's order, and
the ``Rnonrel`` measures recounted per ordering.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

#: trec_eval 9.0.8's preference measures, in its table (and print) order.
PREFS_MEASURES = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
#: The counts: integers per query, summed (not averaged) over the queries.
PREFS_COUNTS = PREFS_MEASURES[:3]
#: The measures that recount by rank: an exact tie-aware value (:func:`_rnonrel_aware`),
#: no exact variance or range.
RANK_RECOUNTED = ("prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret")


class PrefsError(ValueError):
    """Inconsistent preferences of one JG: ``row`` is the index of a row it concerns."""

    def __init__(self, row: int, problem: str) -> None:
        super().__init__(problem)
        self.row = row
        self.problem = problem


@dataclass
class _Group:
    """One JG's counts and the structure the Rnonrel recount reads."""

    ful_ret: float = 0.0
    poss_ret: float = 0.0
    ful_imp: float = 0.0
    poss_imp: float = 0.0
    notoccur: float = 0.0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    classes: list | None = None  # EC JG: each class's ranks, ascending, levels descending
    prefs: np.ndarray | None = None  # PA JG: the closed relation over the query's docs
    levels: np.ndarray | None = None  # PA JG: each doc's level (-1: not in the JG)
    pairs: tuple = ()  # its preferences (hi, lo) as docid ranks, one per pair of lines


def _above(a: np.ndarray, b: np.ndarray, groups: np.ndarray | None) -> np.ndarray:
    """Whether a ranks above b: 1, 0, or 1/2 for two docs of one tie group."""
    above = (a < b).astype(np.float64)
    if groups is not None:
        n = len(groups)
        inside = (a < n) & (b < n)
        tied = np.zeros(len(a), dtype=bool)
        tied[inside] = groups[a[inside]] == groups[b[inside]]
        above[tied & (a != b)] = 0.5
    return above


def _count_pairs(g: _Group, hi: np.ndarray, lo: np.ndarray, njr: int, groups) -> None:
    """Add preferences ``hi > lo`` (docid ranks) to the JG's five counts."""
    both = (hi < njr) & (lo < njr)
    ful = _above(hi, lo, groups)
    g.ful_ret += float(ful[both].sum())
    g.poss_ret += float(both.sum())
    imp_ful = (hi < njr) & (lo >= njr)
    imp_not = (hi >= njr) & (lo < njr)
    g.ful_imp += float(imp_ful.sum())
    g.poss_imp += float(imp_ful.sum() + imp_not.sum())
    g.notoccur += float(((hi >= njr) & (lo >= njr)).sum())


def _class_group(ranks, levels, rows, njr, counts, groups) -> _Group:
    """A JG of one JSG: classes by level; every pair across classes (duplicates too)."""
    g = _Group()
    order = np.lexsort((ranks, -levels))  # levels descending, then rank
    ranks, levels, rows = ranks[order], levels[order], rows[order]
    _, start = np.unique(-levels, return_index=True)
    bounds = [*start.tolist(), len(levels)]
    g.classes = [ranks[a:b] for a, b in itertools.pairwise(bounds)]
    relevant = levels > 0
    retrieved = ranks < njr
    g.num_rel = int(relevant.sum())
    g.num_rel_ret = int((relevant & retrieved).sum())
    g.num_nonrel = int((~relevant).sum())
    g.num_nonrel_ret = int((~relevant & retrieved).sum())
    cls = np.repeat(np.arange(len(g.classes)), np.diff(bounds))
    i, j = np.nonzero(cls[:, None] < cls[None, :])
    hi, lo = ranks[i], ranks[j]
    same = np.flatnonzero(hi == lo)
    if len(same):
        raise PrefsError(
            int(rows[i[same[0]]]), "a doc has two different rel_levels in one judgment sub-group"
        )
    np.add.at(counts, (hi, lo), 1)
    _count_pairs(g, hi, lo, njr, groups)
    g.pairs = (hi, lo)
    return g


def _relation_group(ranks, subgroups, levels, rows, njr, nj, counts, groups) -> _Group:
    """A JG of several JSGs: the preference relation, closed under transitivity."""
    g = _Group()
    order = np.lexsort((ranks, -levels, subgroups))  # JSG, level descending, rank
    ranks, subgroups, levels, rows = ranks[order], subgroups[order], levels[order], rows[order]
    rel = np.full(nj, -1.0, dtype=np.float32)
    for k in range(len(ranks)):  # trec_eval's check, row by row in its order
        old, new = rel[ranks[k]], levels[k]
        if (old > 0 and new == 0) or (old == 0 and new > 0):
            raise PrefsError(int(rows[k]), "a doc has both level 0 and a level above 0")
        rel[ranks[k]] = new
    docs = np.unique(ranks)
    where = np.searchsorted(docs, ranks)
    m = len(docs)
    local = np.zeros((m, m), dtype=bool)
    pairs = (subgroups[:, None] == subgroups[None, :]) & (levels[:, None] > levels[None, :])
    i, j = np.nonzero(pairs)
    local[where[i], where[j]] = True
    np.fill_diagonal(local, True)
    for k in range(m):  # transitive closure (Warshall)
        local |= local[:, k, None] & local[None, k, :]
    np.fill_diagonal(local, False)
    both = np.argwhere(local & local.T)
    if len(both):
        doc = docs[both[0, 0]]
        raise PrefsError(
            int(rows[np.flatnonzero(ranks == doc)[0]]),
            "inconsistent preferences in one judgment group (a doc preferred both ways, "
            "through its sub-groups)",
        )
    relation = np.zeros((nj, nj), dtype=bool)
    relation[np.ix_(docs, docs)] = local
    g.prefs, g.levels = relation, rel
    retrieved = np.arange(nj) < njr
    g.num_rel_ret = int(((rel > 0) & retrieved).sum())
    g.num_nonrel_ret = int(((rel == 0) & retrieved).sum())
    g.num_rel = int((rel > 0).sum())
    g.num_nonrel = int((rel == 0).sum())
    hi, lo = np.nonzero(relation)
    counts[hi, lo] += 1
    _count_pairs(g, hi, lo, njr, groups)
    g.pairs = (hi, lo)
    return g


def _recount(g: _Group, njr: int, retrieved_only: bool) -> tuple[int, int]:
    """trec_eval's recount of ``prefs_avgjg_Rnonrel`` (``_ret``) for a JG with fewer
    relevant than non-relevant docs: (fulfilled, possible)."""
    ful = poss = 0
    if g.classes is not None:
        keep = g.num_rel_ret if retrieved_only else g.num_rel
        classes = g.classes
        if retrieved_only:
            classes = [c[: int(np.searchsorted(c, njr))] for c in classes]
        nonrel = g.classes[-1][:keep]
        if retrieved_only:
            nonrel = nonrel[: int(np.searchsorted(nonrel, njr))]
        for a in range(len(classes)):
            for b in range(a + 1, len(classes) - 1):
                f = _plain_ful(classes[a], classes[b], njr, retrieved_only)
                ful += f
                poss += len(classes[a]) * len(classes[b]) - f
        for a in range(len(classes)):
            f = _plain_ful(classes[a], nonrel, njr, retrieved_only)
            ful += f
            poss += len(classes[a]) * len(nonrel) - f
        return ful, poss + ful
    rel, prefs = g.levels, g.prefs
    nj = len(rel)
    scan = njr if retrieved_only else nj
    zero = np.flatnonzero(rel[:scan] == 0)
    first = int(zero[g.num_rel]) if len(zero) > g.num_rel else scan
    kept = ~((np.arange(nj) >= first) & (rel == 0))
    sub = prefs & kept[:, None] & kept[None, :]
    i, j = np.nonzero(sub)
    if retrieved_only:
        inside = (i < njr) & (j < njr)
        i, j = i[inside], j[inside]
        ful = int((j > i).sum())
        return ful, int((j < i).sum()) + ful
    ful = int(((i < njr) & (j > i)).sum())
    return ful, int(((i < njr) & (j < i)).sum() + (i >= njr).sum()) + ful


def _plain_ful(a: np.ndarray, b: np.ndarray, njr: int, retrieved_only: bool) -> int:
    """Pairs (x in a, y in b) with x ranked above y (and x retrieved)."""
    if not len(a) or not len(b):
        return 0
    x, y = a[:, None], b[None, :]
    return int(((x < y) if retrieved_only else ((x < y) & (x < njr))).sum())


def _all_pairs(jgs: list[_Group]) -> tuple[np.ndarray, np.ndarray]:
    """Every JG's preferences ``(hi, lo)``, one after the other (``C``'s entries, with
    their multiplicity)."""
    if not jgs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    hi = np.concatenate([np.asarray(g.pairs[0], dtype=np.int64) for g in jgs])
    lo = np.concatenate([np.asarray(g.pairs[1], dtype=np.int64) for g in jgs])
    return hi, lo


def _pair_blocks(
    pairs: tuple[np.ndarray, np.ndarray], nj: int, njr: int, groups
) -> tuple[np.ndarray, np.ndarray, int]:
    """prefs_pair's terms ``C[hi, lo] / (C[hi, lo] + C[lo, hi])`` over the pairs some JG
    has a preference on, in trec_eval's loop order (row by row): those of two retrieved
    docs (a tied pair: 1/2, its expectation), those of a retrieved and an unretrieved
    doc; and the number of pairs of two unretrieved docs.

    Over the nonzero cells of ``C`` only (sorted by row, then column: trec_eval's
    order) from the JGs' preferences ``pairs`` (:func:`_all_pairs`), not the whole
    ``nj x nj`` square."""
    hi, lo = pairs
    a, b = np.minimum(hi, lo), np.maximum(hi, lo)
    key, inverse = np.unique(a * nj + b, return_inverse=True)  # the pairs, row by row
    a, b = key // nj, key % nj
    weight = np.ones(len(hi))
    forward = np.bincount(inverse, weights=np.where(hi < lo, weight, 0.0), minlength=len(key))
    back = np.bincount(inverse, weights=np.where(hi > lo, weight, 0.0), minlength=len(key))
    ratio = forward / (forward + back)  # C[a, b] / (C[a, b] + C[b, a]), a above b
    retrieved_pair = b < njr
    retrieved = ratio[retrieved_pair]
    if groups is not None and len(retrieved):
        tied = groups[a[retrieved_pair]] == groups[b[retrieved_pair]]
        retrieved = np.where(tied, 0.5, retrieved)
    implied = ratio[(a < njr) & (b >= njr)]
    unretrieved = int((a >= njr).sum())
    return retrieved, implied, unretrieved


def _in_order(values: np.ndarray) -> float:
    """The sum added one value after the other, as trec_eval's loops add."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def query_values(
    ranks: np.ndarray,
    group: np.ndarray,
    subgroup: np.ndarray,
    level: np.ndarray,
    num_judged: int,
    num_judged_ret: int,
    groups: np.ndarray | None = None,
    spread: bool = False,
) -> np.ndarray:
    """One query's :data:`PREFS_MEASURES`, trec_eval's values.

    Parameters
    ----------
    ranks : int array
        Per preference row, its doc's docid rank (``0 .. NJR-1`` retrieved in ranked
        order, then the others).
    group, subgroup : int arrays
        Per row its JG and JSG, as codes whose order is their ids' string order.
    level : float32 array
        Per row its level.
    num_judged, num_judged_ret : int
        The query's judged docs, and those the run retrieved (NJR).
    groups : int array, optional
        Tie group of each judged retrieved doc (by docid rank): a preference between
        two docs of one group counts as half fulfilled (the expectation over orderings).

    spread : bool
        With ``groups``: return rows ``value, var, min, max`` per measure (shape
        ``(4, 14)``): the exact variance over uniformly random orderings of the tie
        groups and the range over all of them (:func:`tied_spread`); for the
        ``Rnonrel`` measures the value only (nan where it has no exact one here:
        :class:`RecountError`), var, min and max nan.

    Raises
    ------
    PrefsError
        Inconsistent preferences, naming a row.
    """
    jgs, counts = _judgment_groups(
        ranks, group, subgroup, level, num_judged, num_judged_ret, groups
    )
    values = _measures(jgs, counts, num_judged_ret, groups)
    if not spread:
        return values
    return tied_spread(values, jgs, counts, num_judged_ret, groups)


def _judgment_groups(
    ranks, group, subgroup, level, num_judged, num_judged_ret, groups
) -> tuple[list[_Group], np.ndarray]:
    """The query's JGs, in id order, and ``C[a, b]``, the JGs preferring a to b."""
    counts = np.zeros((num_judged, num_judged), dtype=np.int64)
    jgs: list[_Group] = []
    rows = np.arange(len(ranks))
    for jg in np.unique(group):  # JGs in id order
        mine = group == jg
        args = (ranks[mine], subgroup[mine], level[mine], rows[mine])
        if len(np.unique(subgroup[mine])) > 1:
            jgs.append(_relation_group(*args, num_judged_ret, num_judged, counts, groups))
        else:
            jgs.append(_class_group(args[0], args[2], args[3], num_judged_ret, counts, groups))
    return jgs, counts


#: Cells (samples x tied docs x tied docs) of one batch of :func:`query_draws`.
_BATCH_CELLS = 1 << 21


def query_draws(
    ranks: np.ndarray,
    group: np.ndarray,
    subgroup: np.ndarray,
    level: np.ndarray,
    num_judged: int,
    num_judged_ret: int,
    groups: np.ndarray,
    places: np.ndarray,
    recount: bool = True,
) -> np.ndarray:
    """The :data:`PREFS_MEASURES` of sampled orderings, shape ``(samples, 14)``.

    ``places[s]`` is the judged retrieved docs' order in sample ``s`` (a doc's new
    docid rank; each tie group of ``groups`` keeps its ranks,
    :func:`tiecore.evaluation.tie_draws.drawn_order`); the other arguments are
    :func:`query_values`'.  Every measure but the ``Rnonrel`` ones is the tie-aware
    value plus, per tie group, ``1/2 sum_{x before y} D[x, y]``
    (:func:`_pair_weights`): a tied preference fulfilled adds its weight's half to
    the expectation, one not fulfilled takes it away.  The ``Rnonrel`` ones (with
    ``recount``; else nan) recount each sampled ordering as trec_eval does, one
    ordering at a time, and only in a query where a tie group holds two judged
    retrieved docs (elsewhere the one ordering's values).
    """
    njr = num_judged_ret
    samples = len(places)
    jgs, counts = _judgment_groups(ranks, group, subgroup, level, num_judged, njr, groups)
    sizes = np.bincount(groups, minlength=1) if njr else np.zeros(1, dtype=np.int64)
    tied = np.flatnonzero(sizes[groups] >= 2) if njr else np.zeros(0, dtype=np.int64)
    if not len(tied):  # one ordering: its values
        values = _measures(jgs, counts, njr, None)
        return np.tile(values, (samples, 1))
    values = _measures(jgs, counts, njr, groups, recount=False)
    weights = _pair_weights(jgs, counts, njr)[:, tied][:, :, tied]
    same = groups[tied][:, None] == groups[tied][None, :]
    out = np.tile(values, (samples, 1))
    varying = np.flatnonzero(weights.any(axis=(1, 2)))  # the measures a tied pair moves
    flat_weights = np.ascontiguousarray(weights[varying].reshape(len(varying), -1).T)
    batch = max(1, _BATCH_CELLS // (len(tied) * len(tied)))
    for first in range(0, samples, batch):  # a loop over batches of samples
        place = places[first : first + batch][:, tied]
        before = (place[:, :, None] < place[:, None, :]) & same
        flat = before.reshape(len(before), -1).astype(np.float64)
        out[first : first + batch, varying] += 0.5 * (flat @ flat_weights)
    recounted = [PREFS_MEASURES.index(name) for name in RANK_RECOUNTED]
    out[:, recounted] = np.nan
    if recount:
        for s in range(samples):  # the recount, one sampled ordering at a time
            place = np.r_[places[s], np.arange(njr, num_judged)]
            again = [_moved(g, place, njr) for g in jgs]
            out[s, recounted] = [
                _ratio_mean([_rnonrel(g, njr, only) for g in again], False)
                for only in (False, True)
            ]
    return out


def _moved(g: _Group, place: np.ndarray, njr: int) -> _Group:
    """The JG with each doc at docid rank ``place[rank]`` (an ordering of the tie
    groups): its pairs, counts, classes and relation moved, not rebuilt."""
    hi, lo = (place[np.asarray(x, dtype=np.int64)] for x in g.pairs)
    moved = _Group(
        num_rel=g.num_rel,
        num_rel_ret=g.num_rel_ret,
        num_nonrel=g.num_nonrel,
        num_nonrel_ret=g.num_nonrel_ret,
        pairs=(hi, lo),
    )
    _count_pairs(moved, hi, lo, njr, None)
    if g.classes is not None:
        moved.classes = [np.sort(place[c]) for c in g.classes]
    else:
        back = np.argsort(place)  # the doc now at each rank
        moved.prefs = g.prefs[np.ix_(back, back)]
        moved.levels = g.levels[back]
    return moved


def _ratio_mean(pairs: list[tuple[float, float]], guard: bool) -> float:
    """sum over JGs of ful / poss (those with poss > 0 when ``guard``), / JGs when the
    sum is above 0 (trec_eval's test, false for nan), else 0."""
    total = 0.0
    for ful, poss in pairs:
        if poss or not guard:
            with np.errstate(invalid="ignore", divide="ignore"):
                total += float(np.float64(ful) / np.float64(poss))
    return total / len(pairs) if total > 0.0 else 0.0


def _aware_recount(jgs: list[_Group], njr: int, retrieved_only: bool, groups) -> float:
    """The tie-aware ``Rnonrel`` (``_ret``): nan where a JG's has none here."""
    try:
        return _expected_mean([_rnonrel_aware(g, njr, retrieved_only, groups) for g in jgs])
    except RecountError:
        return float("nan")


def _measures(
    jgs: list[_Group], counts: np.ndarray, njr: int, groups, recount: bool = True
) -> np.ndarray:
    ful_ret = sum(g.ful_ret for g in jgs)
    ful_imp = sum(g.ful_imp for g in jgs)
    poss_ret = sum(g.poss_ret for g in jgs)
    poss_imp = sum(g.poss_imp for g in jgs)
    notoccur = sum(g.notoccur for g in jgs)
    ful, poss = ful_ret + ful_imp, poss_ret + poss_imp + notoccur

    def ratio(a: float, b: float) -> float:
        return a / b if b else 0.0

    retrieved, implied, unretrieved = _pair_blocks(_all_pairs(jgs), len(counts), njr, groups)
    both = _in_order(np.concatenate([retrieved, implied]))
    pair = ratio(both, len(retrieved) + len(implied) + unretrieved)
    pair_ret = ratio(_in_order(retrieved), len(retrieved))
    pair_imp = ratio(both, len(retrieved) + len(implied))
    avgjg = _ratio_mean(
        [(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp + g.notoccur) for g in jgs], True
    )
    avgjg_ret = _ratio_mean([(g.ful_ret, g.poss_ret) for g in jgs], True)
    avgjg_imp = _ratio_mean([(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp) for g in jgs], True)
    if groups is None:
        rnonrel = _ratio_mean([_rnonrel(g, njr, False) for g in jgs], False)
        rnonrel_ret = _ratio_mean([_rnonrel(g, njr, True) for g in jgs], False)
    elif not recount:
        rnonrel = rnonrel_ret = float("nan")
    else:  # nan where the recount has no exact expectation here (RecountError)
        rnonrel, rnonrel_ret = (_aware_recount(jgs, njr, only, groups) for only in (False, True))
    return np.array(
        [
            poss,
            ful,
            ful_ret,
            ratio(ful, poss),
            pair,
            avgjg,
            rnonrel,
            ratio(ful_ret, poss_ret),
            pair_ret,
            avgjg_ret,
            rnonrel_ret,
            ratio(ful_ret + ful_imp, poss_ret + poss_imp),
            pair_imp,
            avgjg_imp,
        ]
    )


def _rnonrel(g: _Group, njr: int, retrieved_only: bool) -> tuple[float, float]:
    """One JG's (fulfilled, possible) of prefs_avgjg_Rnonrel (``_ret``)."""
    if retrieved_only:
        r, n = g.num_rel_ret, g.num_nonrel_ret
        if r >= n:
            return g.ful_ret + g.num_rel_ret * (r - n), g.poss_ret + g.num_rel * (r - n)
    else:
        r, n = g.num_rel, g.num_nonrel
        if r >= n:
            ful = g.ful_ret + g.ful_imp + g.num_rel_ret * (r - n)
            return ful, g.poss_ret + g.poss_imp + g.notoccur + g.num_rel * (r - n)
    return _recount(g, njr, retrieved_only)


class RecountError(ValueError):
    """A JG whose ``Rnonrel`` recount has no exact tie-aware value here."""


def _expected_mean(ratios: list[float]) -> float:
    """The expectation of :func:`_ratio_mean` (unguarded) from each JG's expected
    ratio: the ratios are never negative, so ``total > 0 ? total / JGs : 0`` is
    ``total / JGs``, its expectation the mean of the expectations; a JG whose
    denominator is 0 in every ordering (nan) makes every ordering's value 0."""
    total = float(np.sum(ratios)) if ratios else 0.0
    return total / len(ratios) if total > 0.0 else 0.0


def _tie_of(ranks: np.ndarray, njr: int, groups: np.ndarray) -> np.ndarray:
    """Each docid rank's tie group: ``groups`` for a retrieved doc, else its own."""
    inside = ranks < njr
    return np.where(inside, groups[np.minimum(ranks, max(njr - 1, 0))] if njr else 0, -1 - ranks)


def _above_prob(x: np.ndarray, y: np.ndarray, njr: int, groups: np.ndarray) -> np.ndarray:
    """P(x ranks above y) over the orderings: 1/2 in one tie group, else fixed."""
    same = _tie_of(x, njr, groups) == _tie_of(y, njr, groups)
    return np.where(same & (x != y), 0.5, (x < y).astype(np.float64))


def _rnonrel_aware(g: _Group, njr: int, retrieved_only: bool, groups: np.ndarray) -> float:
    """The expected ratio of one JG's ``Rnonrel`` (``_ret``) over the orderings of
    the tie groups.

    Without the recount (``R >= N``) the ratio's denominator is fixed and its
    numerator linear in the pairs (:func:`_rnonrel` of the tie-aware counts).  The
    recount keeps the non-relevant docs first by rank, up to a number: all those of
    the tie groups above the *boundary* group, and of its ``k`` ones a uniformly
    random ``m``.  Given which, the docs of the boundary group keep a uniform
    relative order: two kept non-relevant ones are in either order with 1/2, another
    doc of the group x is above the ``j``-th of them with ``j / (k + 1)``; so, for a
    kept one y, ``P(y kept, x above y)`` is ``m (m + 1) / (2 k (k + 1))``, and, for x
    non-relevant too, ``m (m - 1) / (2 k (k - 1))``.  A JG of classes (one JSG) keeps
    a fixed number of pairs: the expected numerator over it.  A JG of several JSGs
    counts the preferences among the kept docs, so its denominator depends on which
    are kept: the mean over the kept subsets of the expected numerator over the
    denominator, by a programme over the number drawn and the preferences they add.
    A RecountError where that does not hold (preferences between two non-relevant
    docs of the boundary group; a denominator 0 in some orderings only).
    """
    if retrieved_only:
        r, n = g.num_rel_ret, g.num_nonrel_ret
    else:
        r, n = g.num_rel, g.num_nonrel
    if r >= n:
        ful, poss = _rnonrel(g, njr, retrieved_only)
        return float(np.float64(ful) / np.float64(poss)) if poss else float("nan")
    if g.classes is not None:
        return _class_recount(g, njr, retrieved_only, groups)
    return _relation_recount(g, njr, retrieved_only, groups)


def _kept_odds(tie: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """Per doc of a rank-sorted list whose first ``keep`` are kept: ``m`` and ``k``,
    the kept and all of its tie group's docs in the list (``P(kept) = m / k``)."""
    _, first, inverse, counts = np.unique(
        tie, return_index=True, return_inverse=True, return_counts=True
    )
    k = counts[inverse]
    m = np.clip(keep - first[inverse], 0, k)
    return m.astype(np.float64), k.astype(np.float64)


def _class_recount(g: _Group, njr: int, retrieved_only: bool, groups: np.ndarray) -> float:
    """:func:`_rnonrel_aware` of a JG of classes (:func:`_recount`'s first branch)."""
    keep = g.num_rel_ret if retrieved_only else g.num_rel
    classes = [c[c < njr] for c in g.classes] if retrieved_only else list(g.classes)
    last = g.classes[-1]
    m, k = _kept_odds(_tie_of(last, njr, groups), keep)
    if retrieved_only:
        m = np.where(last < njr, m, 0.0)
    ful = 0.0
    poss = 0.0
    for a in range(len(classes)):  # the classes' pairs, as trec_eval's loops
        for b in range(a + 1, len(classes) - 1):
            x, y = classes[a][:, None], classes[b][None, :]
            p = _above_prob(x, y, njr, groups)
            ful += float((p if retrieved_only else p * (x < njr)).sum())
            poss += len(classes[a]) * len(classes[b])
    kept = round(float((m / np.maximum(k, 1)).sum()))
    for a in range(len(classes)):
        x = classes[a][:, None]
        y = last[None, :]
        same = (_tie_of(x, njr, groups) == _tie_of(y, njr, groups)) & (x != y)
        mm, kk = m[None, :], k[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            inside = np.where(
                a == len(classes) - 1,
                mm * (mm - 1) / (2 * kk * (kk - 1)),
                mm * (mm + 1) / (2 * kk * (kk + 1)),
            )
        p = np.where(same, inside, (x < y) * (mm / np.maximum(kk, 1)))
        ful += float((p if retrieved_only else p * (x < njr)).sum())
        poss += len(classes[a]) * kept
    return ful / poss if poss else float("nan")


def _relation_recount(g: _Group, njr: int, retrieved_only: bool, groups: np.ndarray) -> float:
    """:func:`_rnonrel_aware` of a JG of several JSGs (:func:`_recount`'s second)."""
    rel, prefs = g.levels, g.prefs
    nj = len(rel)
    scan = njr if retrieved_only else nj
    docs = np.arange(nj)
    tie = _tie_of(docs, njr, groups)
    zero = np.flatnonzero(rel[:scan] == 0)
    candidate = np.zeros(nj, dtype=bool)  # the boundary group's non-relevant docs
    m = 0
    if len(zero) > g.num_rel:
        boundary = tie[zero[g.num_rel]]
        candidate = (tie == boundary) & (rel == 0) & (docs < scan)
        first = int(np.flatnonzero(candidate)[0])
        m = g.num_rel - int((zero < first).sum())
        fixed = ~((docs >= first) & (rel == 0))
    else:
        fixed = ~((docs >= scan) & (rel == 0))
    k = int(candidate.sum())
    if retrieved_only:
        fixed &= docs < njr
    i, j = np.nonzero(prefs)
    p = _above_prob(i, j, njr, groups)
    if not retrieved_only:
        p = p * (i < njr)
    both = fixed[i] & fixed[j]
    ful0, poss0 = float(p[both].sum()), int(both.sum())
    if k == 0:
        return ful0 / poss0 if poss0 else float("nan")
    if (candidate[i] & candidate[j]).any():
        raise RecountError(
            "preferences between two non-relevant docs of one tie group at the recount's "
            "cut (through a negative level)"
        )
    # a candidate y with a fixed doc x: x in y's tie group is above y given y kept
    # with (m + 1) / (2 (k + 1)) (the mean of j / (k + 1) over its places j <= m)
    inner = (m + 1) / (2 * (k + 1))
    cross_i = candidate[j] & fixed[i]  # x = i preferred to y = j: fulfilled if x above
    cross_j = candidate[i] & fixed[j]  # y = i preferred to x = j: fulfilled if y above
    same = tie[i] == tie[j]
    gain = np.zeros(nj)
    degree = np.zeros(nj, dtype=np.int64)
    up = np.where(same, inner, (i < j).astype(np.float64))
    if not retrieved_only:
        up = up * (i < njr)
    np.add.at(gain, j[cross_i], up[cross_i])
    down = np.where(same, 1.0 - inner, (i < j).astype(np.float64))
    if not retrieved_only:
        down = down * (i < njr)
    np.add.at(gain, i[cross_j], down[cross_j])
    np.add.at(degree, j[cross_i], 1)
    np.add.at(degree, i[cross_j], 1)
    # the kept subset: each candidate drawn in turn with (m - drawn) / (k - seen)
    top = int(degree[candidate].sum())
    mass = np.zeros((m + 1, top + 1))
    gained = np.zeros((m + 1, top + 1))
    mass[0, 0] = 1.0
    for seen, y in enumerate(np.flatnonzero(candidate)):  # a loop over the candidates
        drawn = np.arange(m + 1, dtype=np.float64)[:, None]
        take = np.clip((m - drawn) / (k - seen), 0.0, 1.0)
        d = int(degree[y])
        new_mass = mass * (1 - take)
        new_gained = gained * (1 - take)
        moved = mass[:-1] * take[:-1]
        new_mass[1:, d:] += moved[:, : top + 1 - d]
        new_gained[1:, d:] += (gained[:-1] * take[:-1] + moved * gain[y])[:, : top + 1 - d]
        mass, gained = new_mass, new_gained
    weight, numerator = mass[m], gained[m] + mass[m] * ful0
    denominator = poss0 + np.arange(top + 1)
    live = weight > 0
    if (denominator[live] == 0).any():
        if (denominator[live] == 0).all():
            return float("nan")
        raise RecountError("a denominator 0 in some orderings only")
    return float((numerator[live] / denominator[live]).sum())


#: The largest tie group of judged docs whose bounds :func:`tied_spread` finds (by a
#: dynamic programme over its subsets: 2**n states).
MAX_BOUNDED_GROUP = 10


def _pair_weights(jgs: list[_Group], counts: np.ndarray, njr: int) -> np.ndarray:
    """Per measure, the antisymmetric matrix ``D`` over the retrieved docs: ``D[x, y]``
    is the measure with x above y minus the measure with y above x, all else equal
    (shape ``(14, njr, njr)``).

    A JG's preference ``x > y`` fulfilled adds 1 to the fulfilled counts (divided by
    the ratio's fixed denominator), a pair of docs adds ``C[hi, lo] / (C[x, y] + C[y,
    x])`` to prefs_pair's sum (divided by its fixed number of pairs).
    """
    weights = np.zeros((len(PREFS_MEASURES), njr, njr))
    hi, lo = _all_pairs(jgs)
    owner = np.repeat(np.arange(len(jgs)), [len(g.pairs[0]) for g in jgs])
    inside = (hi < njr) & (lo < njr)
    hi, lo, owner = hi[inside], lo[inside], owner[inside]

    def oriented(scale: np.ndarray) -> np.ndarray:
        """Each retrieved preference (x, y) adds its JG's ``scale`` at (x, y), less
        the transpose."""
        m = np.zeros((njr, njr))
        np.add.at(m, (hi, lo), scale[owner])
        return m - m.T

    def per(b: np.ndarray | float) -> np.ndarray:
        b = np.asarray(b, dtype=np.float64)
        return np.divide(1.0, b, out=np.zeros_like(b), where=b != 0)

    poss_ret = np.array([g.poss_ret for g in jgs], dtype=np.float64)
    poss_imp = np.array([g.poss_imp for g in jgs], dtype=np.float64)
    notoccur = np.array([g.notoccur for g in jgs], dtype=np.float64)
    fulfilled = oriented(np.ones(len(jgs)))
    weights[1] = weights[2] = fulfilled
    weights[3] = fulfilled * per(poss_ret.sum() + poss_imp.sum() + notoccur.sum())
    weights[7] = fulfilled * per(poss_ret.sum())
    weights[11] = fulfilled * per(poss_ret.sum() + poss_imp.sum())
    n = max(len(jgs), 1)
    weights[5] = oriented(per(n * (poss_ret + poss_imp + notoccur)))
    weights[9] = oriented(per(n * poss_ret))
    weights[13] = oriented(per(n * (poss_ret + poss_imp)))
    c = counts[:njr, :njr].astype(np.float64)
    total = c + c.T
    with np.errstate(invalid="ignore", divide="ignore"):
        pair = np.where(total > 0, (c - c.T) / total, 0.0)
    retrieved, implied, unretrieved = _pair_blocks(_all_pairs(jgs), len(counts), njr, None)
    weights[4] = pair * per(len(retrieved) + len(implied) + unretrieved)
    weights[8] = pair * per(len(retrieved))
    weights[12] = pair * per(len(retrieved) + len(implied))
    return weights


def _linear_ordering(d: np.ndarray) -> tuple[float, float]:
    """The min and max over orders of a group's docs of ``sum over x before y of
    d[x, y]`` (a dynamic programme over subsets: the last doc of each subset)."""
    n = len(d)
    size = 1 << n
    low = np.full(size, np.inf)
    high = np.full(size, -np.inf)
    low[0] = high[0] = 0.0
    for mask in range(1, size):
        for v in range(n):
            bit = 1 << v
            if mask & bit:
                rest = mask ^ bit
                gain = sum(d[x, v] for x in range(n) if rest >> x & 1)
                low[mask] = min(low[mask], low[rest] + gain)
                high[mask] = max(high[mask], high[rest] + gain)
    return float(low[-1]), float(high[-1])


def tied_spread(
    values: np.ndarray, jgs: list[_Group], counts: np.ndarray, njr: int, groups: np.ndarray
) -> np.ndarray:
    """``value, var, min, max`` of each measure over the orderings of the tie groups.

    Per measure the value is a constant plus, per tie group, ``1/2 sum_{x before y}
    D[x, y]`` (:func:`_pair_weights`, ``D`` antisymmetric; its mean over orderings is
    0).  Over a uniformly random order of a group, with ``J_xy = [x before y] - 1/2``:
    ``E[J_xy J_xz] = E[J_xy J_zy] = 1/12``, ``E[J_xy J_yz] = -1/12``, pairs without a
    common doc are independent, so the group's variance is

        sum_{x != y} D[x, y]**2 / 24 + sum_x r_x**2 / 12,   r_x = sum_y D[x, y],

    (two docs: ``d**2 / 4``; n docs of weight 1: the inversions' ``n(n-1)(2n+5)/72``);
    the groups are independent, so their variances add.  The range is each group's
    linear-ordering extreme (:func:`_linear_ordering`), for groups of up to
    :data:`MAX_BOUNDED_GROUP` judged docs (a larger one is a ValueError).
    """
    weights = _pair_weights(jgs, counts, njr)
    out = np.zeros((4, len(PREFS_MEASURES)))
    out[0] = values
    low = np.zeros(len(PREFS_MEASURES))
    high = np.zeros(len(PREFS_MEASURES))
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        if len(members) < 2:
            continue
        if len(members) > MAX_BOUNDED_GROUP:
            raise ValueError(
                f"a tie group of {len(members)} judged docs (more than {MAX_BOUNDED_GROUP}): "
                "its bounds would need too many orderings"
            )
        block = weights[:, members][:, :, members]
        rows = block.sum(axis=2)
        out[1] += (block**2).sum(axis=(1, 2)) / 24 + (rows**2).sum(axis=1) / 12
        for k in range(len(PREFS_MEASURES)):
            if block[k].any():
                a, b = _linear_ordering(block[k])
                low[k] += a / 2
                high[k] += b / 2
    out[2] = values + low
    out[3] = values + high
    for k, name in enumerate(PREFS_MEASURES):
        if name in RANK_RECOUNTED:  # an exact value (query_values), no spread
            out[1:, k] = np.nan
    return out

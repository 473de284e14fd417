"""One run's rankings against the judgments: rows sorted, tie groups found.

Rows are flattened over all queries in the judgments' query order, each query's
rows sorted by score descending and then by a tie-break policy.  A *tie group*
is a maximal run of rows of one query with equal scores; ``offset`` is the
number of rows ranked above it (the paper's ``t_i``), ``size`` its ``n_i``,
``rel`` its ``r_i`` and ``rel_before`` the paper's ``R_i``.

Scores are compared as given (float64), except under the ``trec_eval`` policy:
trec_eval 9.0.x (and pytrec_eval, ir_measures) stores scores as C ``float``,
so two scores equal once rounded to float32 tie there and fall to its docno
tie-break.  That policy compares ``float32(score)``, rounded as C converts a
double (to nearest, ties to even; beyond the float range to +-inf, where all
such scores tie); ``trec_eval_double`` is trec_eval 10's order, in float64.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.judgments import Judgments, as_arrow_strings
from tiecore.errors import InputError, TieCoreWarning
from tiecore.options import TIEBREAK, check
from tiecore.options import TIEBREAKS as TIEBREAKS  # the oblivious tie-breaks, declared there

if TYPE_CHECKING:  # pandas and pyarrow load with the first build (tiecore eval's start-up)
    import pandas as pd
    import pyarrow as pa

    from tiecore.io.ids import RunIds

#: Policies that compare scores as trec_eval 9 stores them (C float).
FLOAT32_POLICIES = ("trec_eval",)
#: Policies that break ties by docno (byte order).
DOCNO_POLICIES = ("trec_eval", "trec_eval_double", "docno_asc")


def float32_scores(score: np.ndarray) -> np.ndarray:
    """Scores as trec_eval 9 keeps them: C's double -> float conversion, -0.0 made 0.0.

    Round to nearest, ties to even; magnitudes past the largest float become
    +-inf (and then tie with each other), as the conversion does on IEEE hardware.

    >>> float32_scores(np.array([1.0, 1.0 + 1e-9, 1e39, 2e39, -0.0])).tolist()
    [1.0, 1.0, inf, inf, 0.0]
    """
    with np.errstate(over="ignore"):
        return np.asarray(score, dtype=np.float64).astype(np.float32) + np.float32(0.0)


def tie_key(score: np.ndarray, tiebreak: str) -> np.ndarray:
    """The score values a policy compares: float32 for ``trec_eval``, else as given."""
    if tiebreak in FLOAT32_POLICIES:
        return float32_scores(score)
    return np.asarray(score, dtype=np.float64) + 0.0


@dataclass
class Ranking:
    """A run's rows in ranked order with their judgments and tie groups.

    Per query ``q`` (judgments order): ``starts[q]`` and ``counts[q]`` locate its
    rows.  Per row: ``query``, ``rank`` (1-based), ``level``, ``judged``,
    ``rel``, ``nonrel`` (judged, ``0 <= level < rel_level``), ``group``, ``docno``
    and ``row`` (its row in the run, for the file-order tie-break).
    Per group: ``group_start`` (row), ``offset``, ``size``, ``rel_count``,
    ``nonrel_count``, ``rel_before`` and ``nonrel_before`` (within its query).
    ``score`` holds each row's score as given; ``float32_ties`` says that the
    groups are those of ``float32(score)`` (the ``trec_eval`` policy), not of
    the scores as given.
    """

    name: str
    starts: np.ndarray
    counts: np.ndarray
    query: np.ndarray
    rank: np.ndarray
    level: np.ndarray
    judged: np.ndarray
    rel: np.ndarray
    nonrel: np.ndarray
    group: np.ndarray
    group_start: np.ndarray
    offset: np.ndarray
    size: np.ndarray
    rel_count: np.ndarray
    nonrel_count: np.ndarray
    rel_before: np.ndarray
    nonrel_before: np.ndarray
    docno: pa.Array
    row: np.ndarray
    skipped: np.ndarray
    score: np.ndarray
    float32_ties: bool = False

    @property
    def group_query(self) -> np.ndarray:
        """Query of each tie group."""
        return self.query[self.group_start]

    @property
    def position(self) -> np.ndarray:
        """0-based position of each row inside its tie group."""
        return np.arange(len(self.query)) - self.group_start[self.group]

    def cut(self, *bounds: int | None) -> np.ndarray:
        """Per query the ranks a measure reads: ``min(retrieved, *bounds)`` (a cutoff, a
        depth; None bounds nothing).
        """
        cut = self.counts.astype(np.int64)
        for bound in bounds:
            if bound is not None:
                cut = np.minimum(cut, bound)
        return cut

    def head_rows(self, cut: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows above ``cut`` (per query) as a padded ``(queries, max(cut))`` matrix in
        ranked order (pads: row 0), and where it holds a real row."""
        column = np.arange(int(cut.max(initial=0)))
        valid = column < cut[:, None]
        return np.where(valid, self.starts[:, None] + column, 0), valid

    def head(self, values: np.ndarray, cut: np.ndarray, fill: float = 0) -> np.ndarray:
        """``values`` (one per row) of the rows above ``cut`` as a padded ``(queries,
        max(cut))`` matrix in ranked order, ``fill`` in the pads."""
        rows, valid = self.head_rows(cut)
        return np.where(valid, values[rows] if values.size else fill, fill)

    @classmethod
    def build(
        cls,
        run: pd.DataFrame,
        judgments: Judgments,
        *,
        tiebreak: str = "trec_eval",
        seed: int | np.random.Generator | None = 0,
        name: str | None = None,
    ) -> Ranking:
        """Sort ``run`` (columns qid, docno, score) against ``judgments``.

        Run queries without judgments are dropped with a warning; a docno
        twice in one query is an error, as in trec_eval.  The tie groups are
        those of the scores the policy compares (:func:`tie_key`).
        """
        from tiecore.io.ids import RunIds, first_duplicate  # lazy: pyarrow (~50 ms)
        from tiecore.io.runs import Run  # lazy: pandas, which tiecore eval's arrow path avoids

        run = Run.of(run)
        name = name or run.name or "run"
        check("tiebreak", tiebreak, TIEBREAK)
        missing = {"qid", "docno", "score"} - set(run.columns)
        if missing:
            raise InputError(
                f"run {name}", None, f"missing columns {sorted(missing)}", "qid, docno, score"
            )
        score = np.asarray(run["score"], dtype=np.float64)
        if not np.isfinite(score).all():
            row = int(np.flatnonzero(~np.isfinite(score))[0])
            raise InputError(
                f"run {name}", None, f"row {row} has score {score[row]}", "a finite number"
            )
        docno = as_arrow_strings(run["docno"])
        # a Run from read_run or check_run was tested once already (Run.is_checked); the
        # reader kept the qid codes and docno hashes of its test (tiecore.io.ids.RunIds)
        checked = run.is_checked()
        ids = run.checked_ids() if checked else None
        qid = as_arrow_strings(run["qid"]) if ids is None else None
        ids = RunIds.of(qid, docno) if ids is None else ids
        duplicate = None if checked else first_duplicate(qid, docno, ids=ids)
        if duplicate is not None:
            row = duplicate[1]
            raise InputError(
                f"run {name}",
                None,
                f"docno {docno[row]} appears twice for query {qid[row]} (rows {duplicate[0]} "
                f"and {row})",
                "each docno at most once per query",
            )
        return cls._build(name, ids, docno, score, judgments, tiebreak, seed)

    @classmethod
    def build_columns(
        cls,
        ids: RunIds,
        docno: pa.Array | pa.ChunkedArray,
        score: np.ndarray,
        judgments: Judgments,
        *,
        tiebreak: str = "trec_eval",
        seed: int | np.random.Generator | None = 0,
        name: str = "run",
    ) -> Ranking:
        """:meth:`build` of a run's checked columns (:class:`tiecore.io.trec.RunColumns`: finite
        scores, each (qid, docno) pair once), without pandas (tiecore eval's arrow path):
        the same ranking, field by field."""
        import pyarrow as pa

        from tiecore.io.arrays import Kernels, kernel  # lazy: pyarrow (~40 ms)

        check("tiebreak", tiebreak, TIEBREAK)
        docno = kernel("cast", docno, options=Kernels.CastOptions.safe(pa.string()))
        docno = docno.combine_chunks() if isinstance(docno, pa.ChunkedArray) else docno
        score = np.asarray(score, dtype=np.float64)
        return cls._build(name, ids, docno, score, judgments, tiebreak, seed)

    @classmethod
    def _build(cls, name, ids, docno, score, judgments, tiebreak, seed) -> Ranking:
        """:meth:`build` once the run is checked: its rows against the judgments."""
        from tiecore.io.arrays import Kernels, kernel, to_arrow, to_numpy  # lazy: pyarrow (~40 ms)

        # the run's distinct qids among the judgments' (integer work per row); numpy and
        # arrow meet through tiecore.io's converters and kernels, which load neither
        # pandas nor pyarrow.compute
        qids = Kernels.SetLookupOptions(judgments.qid_array)
        code = to_numpy(kernel("index_in", ids.qids, options=qids), -1)
        absent = code < 0
        query_or_null = code.astype(np.int32)[ids.query]
        known = query_or_null >= 0
        skipped = np.empty(int(absent.sum()), dtype=object)
        # np.unique's result, without its import of numpy.ma (6 ms of start-up)
        skipped[:] = sorted(set(kernel("filter", ids.qids, to_arrow(absent)).to_pylist()))
        check_known(name, known, skipped)
        hashes = ids.docno_hash
        if skipped.size:
            keep = np.flatnonzero(known)
            docno, score, hashes = kernel("take", docno, to_arrow(keep)), score[keep], hashes[keep]
            query = query_or_null[keep]
        else:
            query = query_or_null
        row = np.flatnonzero(known) if skipped.size else None
        order = _stretch_order(query, score) if tiebreak == "file_order" else None
        if order is not None and order is not _IN_ORDER:
            # the queries' stretches in query order (judgments' order: a run of qids 1..50
            # lists "10" after "1"): moved before the lookup, three columns move, not seven
            query, score, hashes = query[order], score[order], hashes[order]
            docno = _take(docno, order)
            row = order if row is None else row[order]
        level, judged = judgments.lookup(query, docno, hashes)
        row = np.arange(len(query)) if row is None else row
        return cls._sort(name, judgments, query, score, docno, level, judged, row, skipped,
                         tiebreak, seed, stretched=order is not None)  # fmt: skip

    @classmethod
    def build_small(
        cls,
        qid: list[str],
        docno: list[str],
        score: np.ndarray,
        judgments: Judgments,
        *,
        tiebreak: str = "trec_eval",
        seed: int | np.random.Generator | None = 0,
        name: str = "run",
    ) -> Ranking:
        """:meth:`build` of a run given as lists, without pandas or pyarrow (tiecore eval's
        small-input path, :mod:`tiecore.evaluation.small`).

        ``score`` must be finite and each (qid, docno) pair unique (the reader checks
        both); the ranking equals :meth:`build`'s field by field, except that ``docno``
        is a numpy object array.
        """
        codes = {q: i for i, q in enumerate(judgments.qids.tolist())}
        query_or_null = np.fromiter((codes.get(q, -1) for q in qid), np.int32, len(qid))
        known = query_or_null >= 0
        unknown = sorted({q for q, k in zip(qid, known.tolist(), strict=True) if not k})
        skipped = np.array(unknown, dtype=object)  # np.unique's result (without numpy.ma)
        check_known(name, known, skipped)
        docnos = np.array(docno, dtype=object)
        score = np.asarray(score, dtype=np.float64)
        if skipped.size:
            keep = np.flatnonzero(known)
            docnos, score, query = docnos[keep], score[keep], query_or_null[keep]
        else:
            query = query_or_null
        level, judged = judgments.lookup_small(query, docnos)
        row = np.flatnonzero(known) if skipped.size else np.arange(len(query))
        return cls._sort(name, judgments, query, score, docnos, level, judged, row, skipped,
                         tiebreak, seed)  # fmt: skip

    @classmethod
    def build_codes(
        cls,
        query: np.ndarray,
        score: np.ndarray,
        level: np.ndarray,
        judged: np.ndarray,
        judgments: Judgments,
        *,
        row: np.ndarray | None = None,
        docno: np.ndarray | None = None,
        tiebreak: str = "trec_eval",
        seed: int | np.random.Generator | None = 0,
        name: str = "run",
    ) -> Ranking:
        """:meth:`build` of a run given as integer codes, each row's level and judged flag
        known (the array API, :mod:`tiecore.metrics`: a score matrix's cells), without ids
        to look up, pandas or pyarrow.

        ``query`` indexes ``judgments.qids`` (every row's query has judgments); ``score`` is
        finite.  ``row`` is each row's place in the run (default: the order given): rows
        may come already sorted by query and score descending, in ``row`` order inside
        ties, and the file-order policy then keeps them without a sort.  ``docno`` (a
        numpy array, distinct within a query) is needed by the docno policies only.
        """
        check("tiebreak", tiebreak, TIEBREAK)
        row = np.arange(len(query)) if row is None else np.asarray(row)
        docno = row if docno is None else docno
        score = np.asarray(score, dtype=np.float64)
        skipped = np.zeros(0, dtype=object)
        return cls._sort(name, judgments, query, score, docno, level, judged, row, skipped,
                         tiebreak, seed)  # fmt: skip

    @classmethod
    def _sort(
        cls, name, judgments, query, score, docno, level, judged, row, skipped, tiebreak, seed,
        stretched=False,
    ):  # fmt: skip
        """Rows sorted by query, score (as the policy compares it), then the tie-break;
        ``stretched``: the caller put a file's query stretches in query order already
        (:meth:`_build`, before its lookup), so that file order needs no sort."""
        rel = judged & judgments.relevant(level)
        key = tie_key(score, tiebreak)
        # file order: the queries' stretches of the file in query order, if that is sorted
        order = None
        if tiebreak == "file_order":
            order = _IN_ORDER if stretched else _stretch_order(query, key)
        if order is None:
            keys = {"query": (query, "ascending"), "score": (key, "descending")}
            order = _order(keys, docno, level, rel, tiebreak, seed)
        if order is not _IN_ORDER:
            query, score, key, level, judged, rel, row = (
                a[order] for a in (query, score, key, level, judged, rel, row)
            )
            docno = _take(docno, order)
        nonrel = judged & (level >= 0) & ~rel
        return cls._from_sorted(
            name, len(judgments.qids), query, score, key, level, judged, rel, nonrel, docno,
            row, skipped, tiebreak in FLOAT32_POLICIES,
        )  # fmt: skip

    def retie(self, tiebreak: str, *, seed: int | np.random.Generator | None = 0) -> Ranking:
        """The same ranking with each tie group's rows in the order of another policy.

        Groups, offsets and per-group counts stay and only the per-row fields
        move inside their groups, without a second lookup and sort of the whole
        run, unless the policy compares scores in the other precision (float32
        for ``trec_eval``) and that merges or splits groups: then the rows are
        sorted again by score.
        """
        check("tiebreak", tiebreak, TIEBREAK)
        float32_ties = tiebreak in FLOAT32_POLICIES
        if float32_ties != self.float32_ties and self.float32_merges:
            key = tie_key(self.score, tiebreak)
            keys = {"query": (self.query, "ascending"), "score": (key, "descending")}
            order = _order(keys, self.docno, self.level, self.rel, tiebreak, seed, row=self.row)
            return self._from_sorted(
                self.name, len(self.starts), self.query[order], self.score[order], key[order],
                self.level[order], self.judged[order], self.rel[order], self.nonrel[order],
                _take(self.docno, order), self.row[order], self.skipped, float32_ties,
            )  # fmt: skip
        order = self._within_groups(tiebreak, seed)
        if order is None:
            return replace(self, float32_ties=float32_ties)
        return replace(
            self,
            level=self.level[order],
            judged=self.judged[order],
            rel=self.rel[order],
            nonrel=self.nonrel[order],
            row=self.row[order],
            score=self.score[order],
            docno=_take(self.docno, order),
            float32_ties=float32_ties,
        )

    def _within_groups(self, tiebreak: str, seed) -> np.ndarray | None:
        """Row order with each tie group sorted by ``tiebreak``; None when no row moves.

        Rows alone in their group stay, so only the tied rows are sorted (most
        of them on runs with few ties), except under ``random``, whose seeded
        permutation covers every row.  The docno policies share one sort
        (:attr:`_by_docno`).
        """
        if tiebreak in DOCNO_POLICIES:
            order = self._by_docno
            if order is None or tiebreak != "docno_asc":
                return order
            # a query's docnos are distinct: ascending is descending reversed in each group
            start = self.group_start[self.group]
            return order[2 * start + self.size[self.group] - 1 - np.arange(len(order))]
        return self._sorted_within(tiebreak, seed)

    @cached_property
    def float32_merges(self) -> bool:
        """Whether float32 rounding ties scores that differ as given: only then do the
        groups of ``trec_eval`` (float32) and ``trec_eval_double`` differ."""
        return extra_float32_ties(self.query, self.score)[0] > 0

    @cached_property
    def _by_docno(self) -> np.ndarray | None:
        """:meth:`_within_groups` of the docno descending policies (kept for the others)."""
        return self._sorted_within("trec_eval", None)

    def _sorted_within(self, tiebreak: str, seed) -> np.ndarray | None:
        """Row order with each tie group sorted by ``tiebreak`` (see :meth:`_within_groups`)."""
        n = len(self.query)
        if tiebreak == "random":
            tied = np.arange(n)
        else:
            tied = np.flatnonzero(self.size[self.group] > 1)
            if tied.size == 0:
                return None
        fields = self.group, self.docno, self.level, self.rel, self.row
        if tied.size < n:
            fields = (self.group[tied], _take(self.docno, tied), self.level[tied],
                      self.rel[tied], self.row[tied])  # fmt: skip
        group, docno, level, rel, row = fields
        # (distinct docnos leave no tie for the row to break)
        row = None if tiebreak in DOCNO_POLICIES else row
        inside = _order({"group": (group, "ascending")}, docno, level, rel, tiebreak, seed, row=row)
        if tied.size == n:
            return inside
        order = np.arange(n)
        order[tied] = tied[inside]
        return order

    @classmethod
    def _from_sorted(
        cls, name, n_queries, query, score, key, level, judged, rel, nonrel, docno, row, skipped,
        float32_ties,
    ):  # fmt: skip
        n_rows = len(query)
        counts = np.bincount(query, minlength=n_queries)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        new_query = np.ones(n_rows, dtype=bool)
        new_query[1:] = query[1:] != query[:-1]
        if np.count_nonzero(new_query) != np.count_nonzero(counts):
            raise AssertionError("rows of a query are not contiguous")
        boundary = new_query.copy()
        boundary[1:] |= key[1:] != key[:-1]
        group_start = np.flatnonzero(boundary)
        group = np.cumsum(boundary) - 1
        rank = np.arange(1, n_rows + 1)  # 1-based, within the query (rows sorted by query)
        rank -= np.repeat(starts, counts)
        size = np.diff(np.append(group_start, n_rows))
        rel_count = np.add.reduceat(rel.astype(np.int64), group_start) if n_rows else rel[:0]
        nonrel_count = np.add.reduceat(nonrel.astype(np.int64), group_start) if n_rows else rel[:0]
        first_group = group[starts[query[group_start]]]
        return cls(
            name=name,
            starts=starts,
            counts=counts,
            query=query,
            rank=rank,
            level=level,
            judged=judged,
            rel=rel,
            nonrel=nonrel,
            group=group,
            group_start=group_start,
            offset=rank[group_start] - 1,
            size=size,
            rel_count=rel_count,
            nonrel_count=nonrel_count,
            rel_before=_exclusive_within(rel_count, first_group),
            nonrel_before=_exclusive_within(nonrel_count, first_group),
            docno=docno,
            row=row,
            skipped=skipped,
            score=score,
            float32_ties=float32_ties,
        )


def extra_float32_ties(query: np.ndarray, score: np.ndarray) -> tuple[int, int]:
    """Rows and queries where float32 rounding ties scores that differ as float64.

    ``query`` and ``score`` must be sorted by query, then score descending (any
    order inside ties).  A row counts when it shares its float32 score with a
    row of another float64 score of its query: trec_eval 9 sees a tie there
    that the scores as given do not have.

    >>> extra_float32_ties(np.array([0, 0, 0, 1]), np.array([2.0, 1.0 + 1e-9, 1.0, 1.0]))
    (2, 1)
    """
    if len(query) < 2:
        return 0, 0
    wide, narrow = tie_key(score, "file_order"), float32_scores(score)
    same_query = query[1:] == query[:-1]
    merged = same_query & (narrow[1:] == narrow[:-1]) & (wide[1:] != wide[:-1])
    if not merged.any():
        return 0, 0
    # float32 groups holding a merge: every row of them counts
    group = np.cumsum(np.r_[True, ~same_query | (narrow[1:] != narrow[:-1])]) - 1
    hit = np.zeros(group[-1] + 1, dtype=bool)
    hit[group[1:][merged]] = True
    rows = hit[group]
    return int(rows.sum()), int(np.count_nonzero(np.bincount(query[rows])))


def _exclusive_within(counts: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Sum of ``counts`` over the earlier groups of the same query (integers, exact)."""
    total = np.cumsum(counts) - counts
    return total - total[first]


def check_known(name: str, known: np.ndarray, skipped: np.ndarray) -> None:
    """A run without any judged query is an error; its unjudged queries, a warning."""
    if not known.any():
        raise InputError(
            f"run {name}",
            None,
            "none of its queries has judgments in the qrels",
            "query ids that match the qrels",
        )
    if skipped.size:
        warnings.warn(skipped_message(name, skipped), TieCoreWarning, stacklevel=3)


def skipped_message(name: str, skipped: np.ndarray) -> str:
    """The warning of :func:`check_known` about run queries without judgments."""
    shown = ", ".join(map(str, skipped[:5])) + (" ..." if skipped.size > 5 else "")
    return f"run {name}: {skipped.size} queries without judgments skipped ({shown})"


#: :func:`_stretch_order` of rows already in order.
_IN_ORDER = np.zeros(0, np.int64)


def _stretch_order(query: np.ndarray, key: np.ndarray) -> np.ndarray | None:
    """The stable sort's order by query, then key descending, when each query's rows
    are one stretch of the rows, keys not increasing within it (as run files are, in
    whatever order of queries): the stretches in query order, rows in file order
    within them, without a sort; :data:`_IN_ORDER` when that is the order the rows
    have; None when the rows need sorting.

    >>> _stretch_order(np.array([0, 0, 1]), np.array([2.0, 2.0, 5.0])) is _IN_ORDER
    True
    >>> _stretch_order(np.array([1, 1, 0]), np.array([2.0, 2.0, 5.0])).tolist()
    [2, 0, 1]
    >>> print(_stretch_order(np.array([0, 0]), np.array([1.0, 2.0])))
    None
    >>> print(_stretch_order(np.array([0, 1, 0]), np.array([3.0, 2.0, 1.0])))
    None
    """
    n = len(query)
    if n < 2:
        return _IN_ORDER
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(query[1:], query[:-1], out=new[1:])
    if not (new[1:] | (key[1:] <= key[:-1])).all():
        return None  # keys rise within a stretch
    starts = np.flatnonzero(new)
    first = query[starts]
    if (first[1:] > first[:-1]).all():
        return _IN_ORDER
    by_query = np.argsort(first, kind="stable")
    ordered = first[by_query]
    if (ordered[1:] == ordered[:-1]).any():
        return None  # a query in two stretches
    lengths = np.diff(np.append(starts, n))[by_query]
    begin = starts[by_query]
    # concatenation of arange(begin, begin + length) per stretch
    shift = np.repeat(begin - np.cumsum(lengths) + lengths, lengths)
    return shift + np.arange(n)


def _take(docno: pa.Array | np.ndarray, order: np.ndarray) -> pa.Array | np.ndarray:
    """Rows ``order`` of a docno column: a pyarrow array, or a numpy one (build_small)."""
    if isinstance(docno, np.ndarray):
        return docno[order]
    from tiecore.io.arrays import kernel, to_arrow  # lazy: pyarrow (~40 ms)

    return kernel("take", docno, to_arrow(order))


def _order(keys, docno, level, rel, tiebreak, seed, row=None) -> np.ndarray:
    """Stable row order by ``keys`` (name -> (values, direction)), then the tie-break policy.

    Rows the policy leaves tied keep their order, or follow ``row`` when given.

    trec_eval, trec_eval_double: docno descending (byte order); docno_asc;
    file_order: as given;
    optimistic: relevant, then higher levels first (the maximum of every
    measure); pessimistic: the reverse; random: a seeded permutation.
    """
    columns = {name: values for name, (values, _) in keys.items()}
    sort_keys = [(name, direction) for name, (_, direction) in keys.items()]
    if tiebreak in DOCNO_POLICIES:
        columns["docno"] = docno
        sort_keys.append(("docno", "ascending" if tiebreak == "docno_asc" else "descending"))
    elif tiebreak == "random":
        columns["random"] = np.random.default_rng(seed).permutation(len(level))
        sort_keys.append(("random", "ascending"))
    elif tiebreak in ("optimistic", "pessimistic"):
        direction = "descending" if tiebreak == "optimistic" else "ascending"
        columns |= {"rel": rel, "level": level}
        sort_keys += [("rel", direction), ("level", direction)]
    if row is not None:
        columns["row"] = row
        sort_keys.append(("row", "ascending"))
    if isinstance(docno, np.ndarray) or "docno" not in columns:
        # numpy's stable lexsort, same order (and faster on numbers alone); numpy docnos
        # come from build_small
        if "docno" in columns:  # str order is code point order, UTF-8's byte order
            code = {d: i for i, d in enumerate(sorted(set(docno.tolist())))}
            columns["docno"] = np.fromiter(map(code.__getitem__, docno), np.int64, len(docno))
        return np.lexsort([_ascending(columns[k], d) for k, d in reversed(sort_keys)])
    import pyarrow as pa

    from tiecore.io.arrays import Kernels, kernel, to_arrow, to_numpy  # lazy: pyarrow (~40 ms)

    table = pa.table(
        {k: to_arrow(v) if isinstance(v, np.ndarray) else v for k, v in columns.items()}
    )
    return to_numpy(kernel("sort_indices", table, options=Kernels.SortOptions(sort_keys)))


def _ascending(values: np.ndarray, direction: str) -> np.ndarray:
    """A key whose ascending order is ``values``' order in ``direction`` (no overflow:
    integers are complemented, ``~x = -x - 1``)."""
    values = np.asarray(values)
    if direction == "ascending":
        return values
    if values.dtype.kind == "f":
        return -values
    return ~values.astype(np.int64) if values.dtype.kind == "b" else ~values

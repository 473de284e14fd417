"""One run's rankings against the judgments: rows sorted, tie groups found.

Rows are flattened over all queries in the judgments' query order, each query's
rows sorted by score descending and then by a tie-break policy.  A *tie group*
is a maximal run of rows of one query with equal scores; ``offset`` is the
number of rows ranked above it (the paper's ``t_i``), ``size`` its ``n_i``,
``rel`` its ``r_i`` and ``rel_before`` the paper's ``R_i``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tiecore.errors import InputError, TieCoreWarning
from tiecore.io import first_duplicate
from tiecore.judgments import Judgments, as_arrow_strings

#: Tie-break policies of the oblivious mode.
TIEBREAKS = ("trec_eval", "docno_asc", "file_order", "optimistic", "pessimistic", "random")


@dataclass
class Ranking:
    """A run's rows in ranked order with their judgments and tie groups.

    Per query ``q`` (judgments order): ``starts[q]`` and ``counts[q]`` locate its
    rows.  Per row: ``query``, ``rank`` (1-based), ``level``, ``judged``,
    ``rel``, ``nonrel`` (judged, ``0 <= level < rel_level``), ``group``, ``docno``
    and ``row`` (its row in the run, for the file-order tie-break).
    Per group: ``group_start`` (row), ``offset``, ``size``, ``rel_count``,
    ``nonrel_count``, ``rel_before`` and ``nonrel_before`` (within its query).
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

    @property
    def group_query(self) -> np.ndarray:
        """Query of each tie group."""
        return self.query[self.group_start]

    @property
    def position(self) -> np.ndarray:
        """0-based position of each row inside its tie group."""
        return np.arange(len(self.query)) - self.group_start[self.group]

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
        twice in one query is an error, as in trec_eval.
        """
        name = name or run.attrs.get("name") or "run"
        if tiebreak not in TIEBREAKS:
            raise ValueError(f"tiebreak must be one of {TIEBREAKS}, got {tiebreak!r}")
        missing = {"qid", "docno", "score"} - set(run.columns)
        if missing:
            raise InputError(
                f"run {name}", None, f"missing columns {sorted(missing)}", "qid, docno, score"
            )
        qid = as_arrow_strings(run["qid"])
        docno = as_arrow_strings(run["docno"])
        score = np.asarray(run["score"], dtype=np.float64)
        if not np.isfinite(score).all():
            row = int(np.flatnonzero(~np.isfinite(score))[0])
            raise InputError(
                f"run {name}", None, f"row {row} has score {score[row]}", "a finite number"
            )

        duplicate = first_duplicate(qid, docno)
        if duplicate is not None:
            row = duplicate[1]
            raise InputError(
                f"run {name}",
                None,
                f"docno {docno[row]} appears twice for query {qid[row]} (rows {duplicate[0]} "
                f"and {row})",
                "each docno at most once per query",
            )
        query_or_null = pc.index_in(qid, value_set=pa.array(judgments.qids, pa.string()))
        known = query_or_null.is_valid().to_numpy(zero_copy_only=False)
        skipped = np.unique(np.asarray(qid.filter(pa.array(~known)).to_numpy(zero_copy_only=False)))
        if not known.any():
            raise InputError(
                f"run {name}",
                None,
                "none of its queries has judgments in the qrels",
                "query ids that match the qrels",
            )
        if skipped.size:
            warnings.warn(
                f"run {name}: {skipped.size} queries without judgments skipped "
                f"({', '.join(map(str, skipped[:5]))}{' ...' if skipped.size > 5 else ''})",
                TieCoreWarning,
                stacklevel=2,
            )
            keep = np.flatnonzero(known)
            docno, score = docno.take(keep), score[keep]
            query = query_or_null.filter(pa.array(known)).to_numpy()
        else:
            query = query_or_null.to_numpy()
        level, judged = judgments.lookup(query, docno)
        rel = judged & (level >= judgments.rel_level)
        row = np.flatnonzero(known) if skipped.size else np.arange(len(query))
        keys = {"query": (query, "ascending"), "score": (score, "descending")}
        order = _order(keys, docno, level, rel, tiebreak, seed)
        query, score, level, judged, rel, row = (
            a[order] for a in (query, score, level, judged, rel, row)
        )
        docno = docno.take(pa.array(order))
        nonrel = judged & (level >= 0) & ~rel
        return cls._from_sorted(
            name, judgments, query, score, level, judged, rel, nonrel, docno, row, skipped
        )

    def retie(self, tiebreak: str, *, seed: int | np.random.Generator | None = 0) -> Ranking:
        """The same ranking with each tie group's rows in the order of another policy.

        Groups, offsets and per-group counts stay; only the per-row fields move
        inside their groups, without a second lookup and sort of the whole run.
        """
        if tiebreak not in TIEBREAKS:
            raise ValueError(f"tiebreak must be one of {TIEBREAKS}, got {tiebreak!r}")
        keys = {"group": (self.group, "ascending")}
        order = _order(keys, self.docno, self.level, self.rel, tiebreak, seed, row=self.row)
        return replace(
            self,
            level=self.level[order],
            judged=self.judged[order],
            rel=self.rel[order],
            nonrel=self.nonrel[order],
            row=self.row[order],
            docno=self.docno.take(pa.array(order)),
        )

    @classmethod
    def _from_sorted(
        cls, name, judgments, query, score, level, judged, rel, nonrel, docno, row, skipped
    ):
        n_rows, n_queries = len(query), len(judgments.qids)
        counts = np.bincount(query, minlength=n_queries)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        new_query = np.ones(n_rows, dtype=bool)
        new_query[1:] = query[1:] != query[:-1]
        if np.count_nonzero(new_query) != np.count_nonzero(counts):
            raise AssertionError("rows of a query are not contiguous")
        boundary = new_query.copy()
        boundary[1:] |= score[1:] != score[:-1]
        group_start = np.flatnonzero(boundary)
        group = np.cumsum(boundary) - 1
        rank = np.arange(n_rows) - starts[query] + 1
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
        )


def _exclusive_within(counts: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Sum of ``counts`` over the earlier groups of the same query (integers, exact)."""
    total = np.cumsum(counts) - counts
    return total - total[first]


def _order(keys, docno, level, rel, tiebreak, seed, row=None) -> np.ndarray:
    """Stable row order by ``keys`` (name -> (values, direction)), then the tie-break policy.

    Rows the policy leaves tied keep their order, or follow ``row`` when given.

    trec_eval: docno descending (byte order); docno_asc; file_order: as given;
    optimistic: relevant, then higher levels first (the maximum of every
    measure); pessimistic: the reverse; random: a seeded permutation.
    """
    columns = {name: values for name, (values, _) in keys.items()}
    sort_keys = [(name, direction) for name, (_, direction) in keys.items()]
    if tiebreak in ("trec_eval", "docno_asc"):
        columns["docno"] = docno
        sort_keys.append(("docno", "descending" if tiebreak == "trec_eval" else "ascending"))
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
    return pc.sort_indices(pa.table(columns), sort_keys=sort_keys).to_numpy()

"""Relevance judgments (qrels) summarised per query, and their lookup for run rows."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tiecore.errors import InputError


def gain_of(level: np.ndarray, gain: str) -> np.ndarray:
    """nDCG gain of qrels levels: ``level`` (linear) or ``2**level - 1`` (exp); 0 if level <= 0.

    >>> gain_of(np.array([-1, 0, 1, 3]), "exp").tolist()
    [0.0, 0.0, 1.0, 7.0]
    """
    positive = np.maximum(level, 0).astype(np.float64)
    return positive if gain == "linear" else np.exp2(positive) - 1.0


def as_arrow_strings(values: pd.Series | np.ndarray) -> pa.Array:
    """Column of ids as an arrow string array (no copy when already arrow-backed)."""
    array = pa.array(values, type=pa.string()) if not isinstance(values, pa.Array) else values
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


@dataclass
class Judgments:
    """The qrels of one collection at one relevance level, in query order.

    Queries are sorted by qid as strings (trec_eval's order).  Relevant means
    ``level >= rel_level``; judged non-relevant means ``0 <= level < rel_level``
    (trec_eval's bpref); negative levels are judged but neither.

    Parameters
    ----------
    qrels : DataFrame
        Columns ``qid``, ``docno``, ``level``.
    rel_level : int
        Lowest relevant level (trec_eval ``-l``).
    """

    qids: np.ndarray
    num_rel: np.ndarray
    num_nonrel: np.ndarray
    rel_level: int
    _keys: np.ndarray  # sorted (query code, docno code) keys of the qrels
    _levels: np.ndarray  # the level of each key
    _docnos: pa.Array  # docno dictionary of the qrels
    _query_of_key: np.ndarray
    _ideal: dict = field(default_factory=dict)

    @classmethod
    def from_qrels(cls, qrels: pd.DataFrame, rel_level: int = 1) -> Judgments:
        """Summarise ``qrels``; a docno judged twice for one query is an error."""
        missing = {"qid", "docno", "level"} - set(qrels.columns)
        if missing:
            raise InputError(
                "qrels", None, f"missing columns {sorted(missing)}", "qid, docno, level"
            )
        qid = as_arrow_strings(qrels["qid"])
        docno = as_arrow_strings(qrels["docno"])
        levels = np.asarray(qrels["level"], dtype=np.int64)
        qids = np.sort(np.asarray(pc.unique(qid).to_numpy(zero_copy_only=False), dtype=object))
        query = pc.index_in(qid, value_set=pa.array(qids, pa.string())).to_numpy()
        docnos = pc.unique(docno)
        doc = pc.index_in(docno, value_set=docnos).to_numpy().astype(np.int64)
        keys = query.astype(np.int64) * len(docnos) + doc
        order = np.argsort(keys, kind="stable")
        keys, levels, query = keys[order], levels[order], query[order]
        twice = np.flatnonzero(keys[1:] == keys[:-1])
        if twice.size:
            row = int(order[twice[0] + 1])
            raise InputError(
                "qrels",
                None,
                f"docno {docno[row]} is judged twice for query {qid[row]}",
                "one judgment per query and docno",
            )
        nq = len(qids)
        rel = levels >= rel_level
        nonrel = (levels >= 0) & ~rel
        return cls(
            qids=qids,
            num_rel=np.bincount(query, weights=rel, minlength=nq).astype(np.int64),
            num_nonrel=np.bincount(query, weights=nonrel, minlength=nq).astype(np.int64),
            rel_level=rel_level,
            _keys=keys,
            _levels=levels,
            _docnos=docnos,
            _query_of_key=query,
        )

    def lookup(self, query: np.ndarray, docno: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Level and judged flag of run rows given their query codes and docnos."""
        doc = pc.index_in(docno, value_set=self._docnos)
        known = doc.is_valid().to_numpy(zero_copy_only=False)
        keys = query.astype(np.int64) * len(self._docnos) + doc.fill_null(0).to_numpy()
        where = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        judged = known & (self._keys[where] == keys) if len(self._keys) else known & False
        level = np.where(judged, self._levels[where] if len(self._keys) else 0, 0)
        return level, judged

    def ideal_dcg(self, cutoff: int | None, gain: str) -> np.ndarray:
        """Per-query DCG of the ideal ranking of all judged docs, cut at ``cutoff``.

        ``IDCG@k = sum_{i<=k} g_(i) / log2(i + 1)`` with gains sorted descending.
        """
        key = (cutoff, gain)
        if key not in self._ideal:
            gains = gain_of(self._levels, gain)
            order = np.lexsort((-gains, self._query_of_key))
            gains, query = gains[order], self._query_of_key[order]
            start = np.searchsorted(query, query, side="left")
            rank = np.arange(len(query)) - start + 1
            keep = (gains > 0) & (rank <= (cutoff or len(query) + 1))
            self._ideal[key] = np.bincount(
                query[keep],
                weights=gains[keep] / np.log2(rank[keep] + 1.0),
                minlength=len(self.qids),
            ).astype(np.float64)  # bincount of nothing is int64
        return self._ideal[key]

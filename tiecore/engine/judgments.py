"""Relevance judgments (qrels) summarised per query, and their lookup for run rows."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from tiecore.errors import InputError, TieCoreWarning
from tiecore.io.hashing import HashIndex, docno_hashes, pair_hashes
from tiecore.io.peers import peer_frame
from tiecore.options import REL_LEVEL, check

if TYPE_CHECKING:  # pandas and pyarrow load when used (tiecore eval's start-up)
    from collections.abc import Callable, Hashable

    import pandas as pd
    import pyarrow as pa


T = TypeVar("T")


def gain_of(level: np.ndarray, gain: str, shift: np.ndarray | int = 0) -> np.ndarray:
    """nDCG gain of qrels levels: ``level`` (linear) or ``2**level - 1`` (exp); 0 if level <= 0.

    An exp gain is returned scaled by ``2**-shift`` (elementwise), as
    ``2**(level - shift) - 2**-shift``: with ``shift`` the query's largest level
    (:meth:`Judgments.gain_shift`) every gain is at most 1, so no level
    overflows, and nDCG, a ratio of sums of one query's gains, is unchanged
    (scaling by a power of two is exact; gains below ``2**-1074`` of the
    query's largest one vanish).  Linear gains ignore ``shift``.

    >>> gain_of(np.array([-1, 0, 1, 3]), "exp").tolist()
    [0.0, 0.0, 1.0, 7.0]
    >>> gain_of(np.array([1, 3, 2000]), "exp", 2000).tolist()[1:]
    [0.0, 1.0]
    """
    if gain == "linear":
        return np.maximum(level, 0).astype(np.float64)
    level = np.asarray(level, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    scaled = np.ldexp(1.0, level - shift) - np.ldexp(1.0, -shift)
    return np.where(level > 0, scaled, 0.0)


def relevant(level: np.ndarray, rel_level: int) -> np.ndarray:
    """Relevant judged levels: ``level >= rel_level`` and ``level >= 0``, as trec_eval 9.0.x
    (``form_res_rels.c``) counts ``num_rel``: a negative level is never relevant.

    >>> relevant(np.array([-2, -1, 0, 1, 2]), 1).tolist()
    [False, False, False, True, True]
    >>> relevant(np.array([-2, -1, 0, 1, 2]), -1).tolist()
    [False, False, True, True, True]
    """
    level = np.asarray(level)
    return (level >= rel_level) & (level >= 0)


def as_arrow_strings(values: pd.Series | np.ndarray) -> pa.Array:
    """Column of ids as an arrow string array (no copy when already arrow-backed)."""
    import pyarrow as pa

    array = pa.array(values, type=pa.string()) if not isinstance(values, pa.Array) else values
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


@dataclass
class Judgments:
    """The qrels of one collection at one relevance level, in query order.

    Queries are sorted by qid as strings (trec_eval's order).  Relevant means
    ``level >= rel_level`` and ``level >= 0``; judged non-relevant means ``0 <=
    level < rel_level`` (trec_eval's bpref); negative levels are judged but
    neither, whatever ``rel_level``: trec_eval 9.0.x reads them as "in the pool
    but not judged" and counts only levels ``>= 0`` in ``num_rel`` and
    ``num_rel_ret`` (``form_res_rels.c``), so with ``rel_level <= 0`` every
    level ``>= 0`` is relevant and nothing is judged non-relevant.  (pytrec_eval
    refuses a relevance level below 1.)

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
    _derived: dict = field(default_factory=dict)  # see derived()
    _docno_index: tuple | None = None  # the qrels docnos' hashes, built on the first lookup
    _pair_index: tuple | None = None  # the qrels pairs' hashes, built on the first lookup
    _small_index: dict | None = None  # (query code, docno) -> key, for lookup_small
    _qid_array: pa.Array | None = None  # qids as an arrow array, built on first use

    @classmethod
    def from_qrels(cls, qrels: pd.DataFrame, rel_level: int = 1) -> Judgments:
        """Summarise ``qrels``; a docno judged twice for one query is an error."""
        from tiecore.io.frames import check_qrels  # lazy: pandas (~270 ms)

        check("rel_level", rel_level, REL_LEVEL)
        qrels = check_qrels(
            peer_frame(qrels, "qrels")
        )  # ranx / trectools qrels too  # the rules of the loaders (tiecore.io.frames)
        missing = {"qid", "docno", "level"} - set(qrels.columns)
        if missing:
            raise InputError(
                "qrels", None, f"missing columns {sorted(missing)}", "qid, docno, level"
            )
        qid = as_arrow_strings(qrels["qid"])
        docno = as_arrow_strings(qrels["docno"])
        levels = np.asarray(qrels["level"], dtype=np.int64)
        return cls._from_arrow(qid, docno, levels, rel_level)

    @classmethod
    def from_columns(
        cls,
        qid: pa.Array | pa.ChunkedArray,
        docno: pa.Array | pa.ChunkedArray,
        level: pa.Array | pa.ChunkedArray,
        rel_level: int = 1,
    ) -> Judgments:
        """:meth:`from_qrels` of checked arrow columns (:func:`tiecore.io.trec.read_qrels_columns`),
        without pandas (tiecore eval's arrow path): the same fields, bit for bit."""
        import pyarrow as pa

        from tiecore.io.arrays import Kernels, kernel, to_numpy  # lazy: pyarrow (~35 ms)

        check("rel_level", rel_level, REL_LEVEL)
        text = Kernels.CastOptions.safe(pa.string())
        qid, docno = (kernel("cast", c, options=text).combine_chunks() for c in (qid, docno))
        levels = np.asarray(to_numpy(level), dtype=np.int64)
        return cls._from_arrow(qid, docno, levels, rel_level)

    @classmethod
    def _from_arrow(
        cls, qid: pa.Array, docno: pa.Array, levels: np.ndarray, rel_level: int
    ) -> Judgments:
        """The judgments of qrels id columns (string arrays) and levels (without pandas or
        pyarrow.compute: :func:`tiecore.io.arrays.kernel`, :func:`~tiecore.io.arrays.to_numpy`)."""
        from tiecore.io.arrays import kernel, to_numpy  # lazy: pyarrow (~35 ms)

        # one hash pass a column (dictionary_encode: the distinct values in order of first
        # appearance, as unique gives them, and each row's index among them, as index_in
        # does; 3x as fast as the two, which hash every row twice)
        codes = kernel("dictionary_encode", qid)
        # qids sorted by bytes: UTF-8's byte order is str's code point order (np.sort's)
        by_bytes = kernel("array_sort_indices", codes.dictionary)
        distinct = kernel("take", codes.dictionary, by_bytes)
        qids = np.empty(len(distinct), dtype=object)
        qids[:] = distinct.to_pylist()
        place = np.empty(len(distinct), np.int32)
        place[to_numpy(by_bytes)] = np.arange(len(distinct), dtype=np.int32)
        query = place[to_numpy(codes.indices)]
        codes = kernel("dictionary_encode", docno)
        docnos, doc = codes.dictionary, to_numpy(codes.indices).astype(np.int64)
        judgments, order = cls._from_codes(qids, query, docnos, doc, levels, rel_level)
        judgments._qid_array = distinct
        twice = np.flatnonzero(judgments._keys[1:] == judgments._keys[:-1])
        if twice.size:
            row = int(order[twice[0] + 1])
            raise InputError(
                "qrels",
                None,
                f"docno {docno[row]} is judged twice for query {qid[row]}",
                "one judgment per query and docno",
            )
        return judgments

    @classmethod
    def from_small(
        cls, qid: list[str], docno: list[str], level: np.ndarray, rel_level: int = 1
    ) -> Judgments:
        """:meth:`from_qrels` of qrels given as lists, without pandas or pyarrow (tiecore
        eval's small-input path, :mod:`tiecore.evaluation.small`): the same fields, bit for bit,
        except that the docno dictionary is a numpy object array.

        Each (qid, docno) pair must be unique (the reader checks it).
        """
        check("rel_level", rel_level, REL_LEVEL)
        qids = np.sort(np.array(list(dict.fromkeys(qid)), dtype=object))
        codes = {q: i for i, q in enumerate(qids.tolist())}
        query = np.fromiter((codes[q] for q in qid), np.int32, len(qid))
        docnos = dict.fromkeys(docno)  # first appearance order, as pyarrow's unique
        index = {d: i for i, d in enumerate(docnos)}
        doc = np.fromiter((index[d] for d in docno), np.int64, len(docno))
        dictionary = np.array(list(docnos), dtype=object)
        return cls._from_codes(qids, query, dictionary, doc, level, rel_level)[0]

    @classmethod
    def from_codes(
        cls,
        qids: np.ndarray,
        query: np.ndarray,
        doc: np.ndarray,
        level: np.ndarray,
        rel_level: int = 1,
        *,
        docs: int,
    ) -> Judgments:
        """:meth:`from_qrels` of qrels rows given as integer codes, without ids to hash,
        pandas or pyarrow (the array API, :mod:`tiecore.metrics`: a score matrix's cells).

        ``query`` indexes ``qids`` (sorted, as :meth:`from_qrels` sorts them), ``doc`` numbers
        the docs ``0 .. docs - 1``; each (query, doc) pair at most once (the caller's to
        ensure).  The docno dictionary is ``range(docs)``: the judgments of a matrix are
        never looked up by docno (the caller knows each cell's level).
        """
        check("rel_level", rel_level, REL_LEVEL)
        codes = np.asarray(query, dtype=np.int64)
        return cls._from_codes(qids, codes, range(max(docs, 1)), doc, level, rel_level)[0]

    @classmethod
    def _from_codes(
        cls,
        qids: np.ndarray,
        query: np.ndarray,
        docnos: pa.Array | np.ndarray,
        doc: np.ndarray,
        level: np.ndarray,
        rel_level: int,
    ) -> tuple[Judgments, np.ndarray]:
        """The judgments of qrels rows given as codes (``query`` into the sorted ``qids``,
        ``doc`` into the ``docnos`` dictionary), and the order that sorts the rows by
        (query, docno) key (a repeated key is the caller's to refuse)."""
        keys = query.astype(np.int64) * len(docnos) + doc
        order = np.argsort(keys, kind="stable")
        keys, levels, query = keys[order], np.asarray(level, np.int64)[order], query[order]
        nq = len(qids)
        rel = relevant(levels, rel_level)
        nonrel = (levels >= 0) & ~rel
        if rel_level > 1 and len(levels) and rel_level > levels.max():
            warnings.warn(
                f"relevance level {rel_level} is above every level in the qrels (the largest "
                f"is {levels.max()}): no document counts as relevant",
                TieCoreWarning,
                stacklevel=3,
            )
        judgments = cls(
            qids=qids,
            num_rel=np.bincount(query, weights=rel, minlength=nq).astype(np.int64),
            num_nonrel=np.bincount(query, weights=nonrel, minlength=nq).astype(np.int64),
            rel_level=int(rel_level),
            _keys=keys,
            _levels=levels,
            _docnos=docnos,
            _query_of_key=query,
        )
        return judgments, order

    def relevant(self, level: np.ndarray) -> np.ndarray:
        """Which judged levels are relevant here (:func:`relevant` at ``rel_level``)."""
        return relevant(level, self.rel_level)

    @property
    def levels(self) -> np.ndarray:
        """The level of every qrels line (one per judged (query, docno) pair, grouped by
        query in :attr:`qids` order)."""
        return self._levels

    @property
    def query_of_key(self) -> np.ndarray:
        """The query (index into :attr:`qids`) of each entry of :attr:`levels`."""
        return self._query_of_key

    @property
    def qid_array(self) -> pa.Array:
        """:attr:`qids` as an arrow string array (made once)."""
        if self._qid_array is None:
            import pyarrow as pa

            self._qid_array = pa.array(self.qids, pa.string())
        return self._qid_array

    def lookup_small(self, query: np.ndarray, docno: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lookup` for a few rows with docnos as a numpy array of str (a dict probe
        per row, without pyarrow)."""
        if self._small_index is None:
            docnos = self._docnos.tolist() if len(self._keys) else []
            doc = (self._keys % max(len(docnos), 1)).tolist()
            pairs = zip(self._query_of_key.tolist(), doc, strict=True)
            self._small_index = {(q, docnos[d]): k for k, (q, d) in enumerate(pairs)}
        pairs = zip(np.asarray(query).tolist(), docno, strict=True)
        found = np.fromiter((self._small_index.get(p, -1) for p in pairs), np.int64, len(docno))
        judged = found >= 0
        if not len(self._keys):
            return np.zeros(len(docno), np.int64), judged
        return np.where(judged, self._levels[np.maximum(found, 0)], 0), judged

    def lookup(
        self, query: np.ndarray, docno: pa.Array, docno_hash: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Level and judged flag of run rows given their query codes and docnos.

        One hash probe per row: every qrels (query, docno) pair's hash (its
        docno's :func:`docno_hashes` mixed with its query code) goes once into a
        hash table kept on this object, so each run costs a probe of its own
        pairs, whose docno hashes the reader computed already
        (:class:`tiecore.io.ids.RunIds`; ``docno_hash``, else they are computed
        here); a hit is confirmed by comparing the docno strings and the query.
        Rows whose hash two qrels pairs share (a 64-bit collision) are looked up
        exactly (:meth:`docno_codes`, then a binary search).
        """
        from tiecore.io.arrays import kernel, to_arrow, to_numpy  # lazy: pyarrow (~35 ms)

        query = np.asarray(query)
        if not len(self._keys):
            return np.zeros(len(query), np.int64), np.zeros(len(query), bool)
        if self._pair_index is None:
            doc = self._keys % len(self._docnos)
            hashes = pair_hashes(self._query_of_key, docno_hashes(self._docnos)[doc])
            unique, first, count = np.unique(hashes, return_index=True, return_counts=True)
            alone = count == 1
            self._pair_index = (HashIndex(unique[alone]), first[alone], unique[~alone])
        table, rows, shared = self._pair_index
        docno = as_arrow_strings(docno)
        if docno_hash is None:
            docno_hash = docno_hashes(docno)
        hashes = pair_hashes(query, docno_hash)
        found = table.get_indexer(hashes)
        judged = found >= 0
        row = np.where(judged, rows[np.maximum(found, 0)], 0) if len(rows) else found * 0
        if judged.any():  # confirm the hits (only them: most rows of a run are unjudged)
            hit = np.flatnonzero(judged)
            wanted = kernel(
                "take", self._docnos, to_arrow(self._keys[row[hit]] % len(self._docnos))
            )
            same = kernel("equal", kernel("take", docno, to_arrow(hit)), wanted)
            judged[hit] = to_numpy(same, False)
            judged &= self._query_of_key[row] == query
        level = np.where(judged, self._levels[row], 0)
        if shared.size:  # a pair whose hash two qrels pairs share: exact lookup
            slow = np.flatnonzero(np.isin(hashes, shared))
            if slow.size:
                level[slow], judged[slow] = self._lookup_sorted(
                    query[slow], kernel("take", docno, to_arrow(slow))
                )
        return level, judged

    def _lookup_sorted(self, query: np.ndarray, docno: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lookup` by the docnos' codes and a binary search of the sorted keys."""
        doc, known = self.docno_codes(docno)
        keys = query.astype(np.int64) * len(self._docnos) + doc
        where = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        judged = known & (self._keys[where] == keys)
        return np.where(judged, self._levels[where], 0), judged

    def docno_codes(self, docno: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Index of each docno among the qrels docnos (0 when absent) and whether present.

        The qrels docnos' hashes (:func:`docno_hashes`) go once into a hash
        table kept on this object (:class:`tiecore.io.hashing.HashIndex`), so each run costs a hash
        and a probe of its own docnos; a hit is confirmed by comparing the
        strings.  Docnos whose hash two qrels docnos share (a 64-bit
        collision) are looked up exactly.
        """
        from tiecore.io.arrays import Kernels, kernel, to_arrow, to_numpy  # lazy: pyarrow (~35 ms)

        if self._docno_index is None:
            hashes = docno_hashes(self._docnos)
            unique, first, count = np.unique(hashes, return_index=True, return_counts=True)
            alone = count == 1
            self._docno_index = (HashIndex(unique[alone]), first[alone], unique[~alone])
        table, codes, shared = self._docno_index
        docno = as_arrow_strings(docno)
        hashes = docno_hashes(docno)
        found = table.get_indexer(hashes)
        known = found >= 0
        code = np.where(known, codes[np.maximum(found, 0)], 0) if len(codes) else found * 0
        if known.any():
            same = kernel("equal", docno, kernel("take", self._docnos, to_arrow(code)))
            known &= to_numpy(same, False)
        if shared.size:  # a docno whose hash two qrels docnos share: exact lookup
            rows = np.flatnonzero(np.isin(hashes, shared))
            found_in = Kernels.SetLookupOptions(self._docnos)
            exact = kernel("index_in", kernel("take", docno, to_arrow(rows)), options=found_in)
            known[rows] = to_numpy(kernel("is_valid", exact))
            code[rows] = to_numpy(exact, 0)
        return np.where(known, code, 0), known

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value ``build()`` derives from these judgments alone, built on the first
        call with ``key`` and kept with the judgments from then on.

        Ideal rankings, gain tables and per-query shifts depend on the qrels only, while
        every run evaluated against them asks again: a family keys what it derives by
        its own name and parameters (``("trec_gain_table", gains)``).  Two threads that
        ask at once may both build it; the first kept wins, and both are equal.
        """
        if key not in self._derived:
            self._derived.setdefault(key, build())
        return self._derived[key]

    def gain_shift(self, gain: str) -> np.ndarray:
        """Per query the ``shift`` of :func:`gain_of`: its largest level for exp, else 0."""

        def build() -> np.ndarray:
            shift = np.zeros(len(self.qids), dtype=np.int64)
            if gain != "linear" and len(self._levels):
                # keys are sorted by query, and every query has a qrels row
                starts = np.flatnonzero(np.r_[True, np.diff(self._query_of_key) != 0])
                top = np.maximum.reduceat(self._levels, starts)
                shift[self._query_of_key[starts]] = np.maximum(top, 0)
            return shift

        return self.derived(("shift", gain), build)

    def ideal_dcg(self, cutoff: int | None, gain: str) -> np.ndarray:
        """Per-query DCG of the ideal ranking of all judged docs, cut at ``cutoff``.

        ``IDCG@k = sum_{i<=k} g_(i) / log2(i + 1)`` with gains sorted descending
        (exp gains scaled per query, see :func:`gain_of`).
        """

        def build() -> np.ndarray:
            gains = gain_of(self._levels, gain, self.gain_shift(gain)[self._query_of_key])
            order = np.lexsort((-gains, self._query_of_key))
            gains, query = gains[order], self._query_of_key[order]
            start = np.searchsorted(query, query, side="left")
            rank = np.arange(len(query)) - start + 1
            keep = (gains > 0) & (rank <= (cutoff or len(query) + 1))
            return np.bincount(
                query[keep],
                weights=gains[keep] / np.log2(rank[keep] + 1.0),
                minlength=len(self.qids),
            ).astype(np.float64)  # bincount of nothing is int64

        return self.derived(("ideal_dcg", cutoff, gain), build)

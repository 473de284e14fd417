"""A run's ids as its duplicate test reads them: query codes, docno hashes, pair keys.

Duplicates are found by sorting 62-bit keys of the (qid, docno) pairs: each qid's
code (only the first row of each stretch of equal qids is looked up) mixed with the
docno's hash (:mod:`tiecore.io.hashing`), computed in a thread for a big run while
arrow codes the qids; a run keeps the codes and hashes (:class:`RunIds`) for the
judgments' lookup.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tiecore.io.arrays import Kernels, kernel, to_arrow, to_numpy
from tiecore.io.hashing import docno_hashes, pair_hashes

__all__ = ["RunIds", "first_duplicate"]

_PIECE = 1 << 16  # rows per piece of the pair keys (small temporaries)
_OVERLAP = 1 << 18  # rows from which docnos are hashed while the qids are coded


@dataclass(frozen=True)
class RunIds:
    """A run's ids as its duplicate test reads them, kept for its evaluation.

    ``qids`` holds the distinct qids in order of first appearance and ``query``
    each row's index into it (integer work from then on: the rows of a query
    usually follow each other, so only the first row of each stretch is hashed
    by arrow); ``docno_hash`` holds each row's :func:`docno_hashes`, which
    :meth:`tiecore.engine.judgments.Judgments.lookup` probes instead of hashing the
    docnos again.
    """

    qids: pa.Array
    query: np.ndarray
    docno_hash: np.ndarray

    @classmethod
    def of(cls, qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray) -> RunIds:
        """Encode the qids and hash the docnos of a run's rows (of a big run at the same
        time: arrow codes the qids while numpy hashes the docnos in a thread)."""
        if len(docno) < _OVERLAP:
            qids, query = _query_codes(qid)
            return cls(qids, query, docno_hashes(docno))
        with ThreadPoolExecutor(1) as pool:
            hashing = pool.submit(docno_hashes, docno)
            qids, query = _query_codes(qid)
            return cls(qids, query, hashing.result())

    def pair_keys(self) -> np.ndarray:
        """62-bit hash of every (qid, docno) pair, from the qid's code and the docno's hash.

        The top two bits are cleared: seen as float64, every key is then a positive
        finite number (no NaN), and such floats sort exactly as their bit patterns do.
        """
        n = len(self.query)
        keys = np.frombuffer(pa.allocate_buffer(8 * max(n, 1)), np.uint64)[:n]
        for start in range(0, n, _PIECE):  # in pieces: small temporaries
            piece = slice(start, start + _PIECE)
            key = pair_hashes(self.query[piece], self.docno_hash[piece], out=keys[piece])
            key >>= np.uint64(2)
        return keys


def _query_codes(qid: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """The distinct qids (first appearance order) and each row's index among them (int32).

    Rows of one query mostly follow each other: only the first row of each
    stretch of equal qids is looked up (a comparison of neighbours finds them).
    """
    n = len(qid)
    if n == 0:
        return pa.array([], qid.type), np.zeros(0, np.int32)
    change = np.ones(n, bool)
    if n > 1:
        change[1:] = to_numpy(kernel("not_equal", qid.slice(1), qid.slice(0, n - 1)), True)
    heads = np.flatnonzero(change)
    head_qid = _take_ascending(qid, heads)
    qids = kernel("unique", head_qid)
    codes = kernel("index_in", head_qid, options=Kernels.SetLookupOptions(qids))
    codes = to_numpy(codes).astype(np.int32)
    return qids, np.repeat(codes, np.diff(np.append(heads, n)))


def _take_ascending(column: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``column.take(rows)`` for ascending ``rows``, chunk by chunk (arrow's take of a
    chunked array first joins all its chunks).

    >>> import pyarrow as pa
    >>> _take_ascending(pa.chunked_array([["a", "b"], ["c"]]), np.array([0, 2])).to_pylist()
    ['a', 'c']
    """
    if not isinstance(column, pa.ChunkedArray):
        return kernel("take", column, to_arrow(rows))
    bounds = np.cumsum([0] + [len(chunk) for chunk in column.chunks])
    which = np.searchsorted(bounds, rows, side="right") - 1
    cuts = np.searchsorted(which, np.arange(len(column.chunks) + 1))
    parts = [
        kernel("take", chunk, to_arrow(rows[cuts[k] : cuts[k + 1]] - bounds[k]))
        for k, chunk in enumerate(column.chunks)
        if cuts[k + 1] > cuts[k]
    ]
    return pa.concat_arrays(parts) if parts else pa.array([], column.type)


def _pair_keys(qid: pa.Array | pa.ChunkedArray, docno: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """:meth:`RunIds.pair_keys` of the rows."""
    return RunIds.of(qid, docno).pair_keys()


def first_duplicate(
    qid: pa.Array | pa.ChunkedArray,
    docno: pa.Array | pa.ChunkedArray,
    *,
    ids: RunIds | None = None,
) -> tuple[int, int] | None:
    """Records ``(first, second)`` of the earliest repeated (qid, docno) pair, or ``None``.

    Hash the pairs (:meth:`RunIds.pair_keys`; ``ids`` when the caller has them),
    sort the 62-bit keys (numpy's SIMD sort, as float64, its fastest) and look for
    equal neighbours; only on a hit are the docnos compared exactly.
    """
    ids = RunIds.of(qid, docno) if ids is None else ids
    ordered = ids.pair_keys()
    ordered.view(np.float64).sort()  # in place: the file order is recomputed on a hit only
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return None
    import pandas as pd

    candidates = np.flatnonzero(np.isin(ids.pair_keys(), ordered[1:][same]))
    pairs = pd.DataFrame(
        {
            "q": ids.query[candidates],
            "d": kernel("take", docno, to_arrow(candidates)).to_pylist(),
        }
    )
    repeated = pairs.duplicated(keep="first").to_numpy()
    if not repeated.any():
        return None  # a hash collision, not a duplicate
    k = int(np.flatnonzero(repeated)[0])
    match = (pairs["q"] == pairs["q"].iloc[k]) & (pairs["d"] == pairs["d"].iloc[k])
    return int(candidates[int(np.flatnonzero(match.to_numpy())[0])]), int(candidates[k])

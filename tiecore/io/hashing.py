"""The package's 64-bit hashes: one mixer, one string hasher, and a hash table.

Every key the package builds from ids goes through :func:`mix`, SplitMix64's
finaliser (a bijection of 64-bit words with full avalanche, which keeps 0 at 0):

- :func:`string_hashes` hashes each string of an arrow array from its length and
  at most four 8-byte words (the first 16 and the last 16 bytes); the run reader's
  duplicate test, :class:`tiecore.io.ids.RunIds` and the judgments' lookups all use
  it (through :func:`docno_hashes`), and every hit is confirmed on the strings, so
  a collision costs time, never a wrong answer;
- :func:`pair_hashes` keys a (query code, docno) pair from the docno's hash;
- the keyed random draws of sampled mode (:mod:`tiecore.engine.seeding`) mix
  their run, query, rank and sample words with it.

:func:`fnv1a` is kept apart for one reason: the per-query key of the sampled draws
is the FNV-1a hash of the qid, so every seeded tie order derives from its values
and it cannot change without changing sampled results.  It is called once per
query, never per row.

Only numpy is imported here; pyarrow is imported by the functions that take its
arrays (``tiecore eval`` of a small run imports neither pandas nor pyarrow).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["HashIndex", "docno_hashes", "fnv1a", "mix", "pair_hashes", "string_hashes"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
#: Low ``r`` bytes of a little-endian 64-bit word, ``r = 0..8``.
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)
#: Odd factors per word (first, last, second, before last) of a qid and of a docno.
_FACTORS = {
    "qid": [np.uint64(x) for x in (0xA0761D6478BD642F, 0xE7037ED1A0B428DB,
                                    0x8EBC6AF09C88C6E3, 0x589965CC75374CC3)],
    "docno": [np.uint64(x) for x in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F,
                                      0x165667B19E3779F9, 0xD6E8FEB86659FD93)],
}  # fmt: skip
_PIECE = 1 << 16  # rows per piece when hashing on several threads (small temporaries)
_THREADED_PIECES = 64  # pieces from which hashing runs on several threads (their memory
# arenas keep the temporaries: below that, the peak memory of a read matters more)
_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, odd
#: Keys below which :class:`HashIndex` keeps a load under 1/4 (2^21 slots at most).
_SPARSE_KEYS = 1 << 19


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, in place on a uint64 array (wrapping arithmetic).

    ``x ^= x >> 30; x *= 0xBF58...; x ^= x >> 27; x *= 0x94D0...; x ^= x >> 31``: a
    bijection of 64-bit words in which every input bit flips every output bit with
    probability close to 1/2; it maps 0 to 0.

    >>> hex(int(mix(np.array([1], np.uint64))[0]))
    '0x5692161d100b05e5'
    """
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= _M1
        x ^= x >> np.uint64(27)
        x *= _M2
        x ^= x >> np.uint64(31)
    return x


def _offsets(arr: pa.Array) -> np.ndarray:
    """The offsets of a (large) string array as an int64 numpy array (a view if possible)."""
    import pyarrow as pa

    kind = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    buf = arr.buffers()[1]
    off = np.frombuffer(buf, kind, count=len(arr) + 1, offset=arr.offset * np.dtype(kind).itemsize)
    return off if kind is np.int64 else off.astype(np.int64)


def string_hashes(arr: pa.Array, kind: str = "docno") -> np.ndarray:
    """64-bit hash of every string from its length, its first 16 and its last 16 bytes.

    With ``w_0 .. w_3`` the words at bytes 0, ``n - 8``, 8 and ``n - 16`` of a
    string of ``n`` bytes (each zero where the string is too short for it, the
    first masked to the string), the hash is
    ``mix(w_0 f_0) ^ n f_1 ^ mix(w_1 f_1) ^ mix(w_2 f_2) ^ mix(w_3 f_3)``, each
    ``f`` an odd factor of ``kind`` ("qid" or "docno", so that the two never
    cancel in a pair). A word is an unaligned 8-byte read (a strided uint64 view
    of the string bytes, no copy); a zero word adds nothing (:func:`mix` keeps 0),
    so rounds no string of the array needs are skipped. A string's hash depends on
    its bytes alone; strings that differ only in the middle of more than 32 bytes
    collide, which costs an exact comparison.

    >>> import pyarrow as pa
    >>> h = string_hashes(pa.array(["FBIS3-1", "FBIS3-10", "FBIS3-1", ""]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1]), len(set(h.tolist()))
    (True, False, 3)
    """
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.uint64)
    first, last, second, before = _FACTORS[kind]
    off = _offsets(arr)
    raw = np.frombuffer(arr.buffers()[2] or b"", np.uint8)
    if len(raw) < 64:  # a few bytes: pad them, so that every read stays inside
        raw = np.concatenate([raw, np.zeros(64, np.uint8)])
    at = np.ndarray((len(raw) - 7,), "<u8", raw, 0, (1,))  # at[i]: bytes i..i+7
    starts, ends = off[:-1], off[1:]
    length = ends - starts
    longest, shortest = int(length.max()), int(length.min())
    with np.errstate(over="ignore"):
        h = _heads(raw, at, starts)  # bytes 0..7, cut to the string
        if shortest < 8:
            h &= _MASKS[np.minimum(length, 8)]
        h *= first
        mix(h)
        h ^= length.view(np.uint64) * last  # strings may end in the bytes of another
        # the bounds and masks below matter only where some strings are short: with
        # every string longer, each offset is inside its own string already
        if longest > 8:  # the last 8 bytes
            short = shortest <= 8
            where = np.maximum(ends - 8, 0) if short else ends - 8
            h ^= _word(at, where, length > 8 if short else None, last)
        if longest > 16:  # bytes 8..15 and the 8 before the last 8
            short = shortest <= 16
            longer = length > 16 if short else None
            where = np.minimum(starts + 8, len(at) - 1) if short else starts + 8
            h ^= _word(at, where, longer, second)
            h ^= _word(at, np.maximum(ends - 16, 0) if short else ends - 16, longer, before)
        return h


def _word(
    at: np.ndarray, where: np.ndarray, keep: np.ndarray | None, factor: np.uint64
) -> np.ndarray:
    """``mix(word * factor)`` of the word at every offset, 0 where ``keep`` is false
    (``None``: every word is kept)."""
    word = at[where]
    if keep is not None:
        word *= keep
    word *= factor
    return mix(word)


def _heads(raw: np.ndarray, at: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The 8 bytes from every start; the few strings that start in the last 7 bytes of
    the buffer read from a zero-padded copy of them."""
    inside = len(at)
    if not len(starts) or starts[-1] < inside:
        return at[starts]
    k = int(np.searchsorted(starts, inside))
    tail = np.zeros(8 + 16, np.uint8)
    tail[: len(raw) - inside] = raw[inside:]
    heads = np.empty(len(starts), np.uint64)
    heads[:k] = at[starts[:k]]
    heads[k:] = np.ndarray((17,), "<u8", tail, 0, (1,))[starts[k:] - inside]
    return heads


def docno_hashes(docno: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """:func:`string_hashes` of every docno (uint64), computed piecewise, on all cores when
    there are many; the hashes live in arrow's memory pool, which reuses what the
    parser freed.

    >>> import pyarrow as pa
    >>> h = docno_hashes(pa.chunked_array([["FBIS3-1", "FBIS3-10"], ["FBIS3-1"]]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    import pyarrow as pa

    chunks = docno.chunks if isinstance(docno, pa.ChunkedArray) else [docno]
    pieces = [c.slice(start, _PIECE) for c in chunks for start in range(0, len(c), _PIECE)]
    n = len(docno)
    out = np.frombuffer(pa.allocate_buffer(8 * max(n, 1)), np.uint64)[:n]
    starts = np.cumsum([0] + [len(p) for p in pieces])

    def piece(k: int) -> None:
        out[starts[k] : starts[k + 1]] = string_hashes(pieces[k], "docno")

    if len(pieces) < _THREADED_PIECES:  # threads cost more than they save
        for k in range(len(pieces)):
            piece(k)
    else:
        from concurrent.futures import ThreadPoolExecutor  # lazy: loads logging, ~4 ms a start

        with ThreadPoolExecutor(min(len(pieces), os.cpu_count() or 1)) as pool:
            list(pool.map(piece, range(len(pieces))))
    return out


def pair_hashes(
    query: np.ndarray, docno_hash: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """64-bit hash of each (query code, docno) pair: ``mix((q + 1) f) ^ h``, with ``h`` the
    docno's :func:`string_hashes` and ``f`` the qid's first factor (``q + 1``: the
    mix keeps 0 at 0); written into ``out`` when given.

    >>> h = np.array([5, 5], np.uint64)
    >>> a = pair_hashes(np.array([0, 1]), h)
    >>> bool(a[0] != a[1])
    True
    """
    out = np.empty(len(query), np.uint64) if out is None else out
    out[:] = query
    with np.errstate(over="ignore"):
        out += np.uint64(1)
        out *= _FACTORS["qid"][0]
        mix(out)
        out ^= docno_hash
    return out


def fnv1a(values: np.ndarray) -> np.ndarray:
    """FNV-1a (64 bit) of each string's UTF-8 bytes: ``h = (h ^ byte) * 0x100000001b3`` from
    ``0xcbf29ce484222325``, looping over character positions. The per-query key of the
    sampled draws; its values fix every seeded tie order (see the module's note).

    >>> hex(int(fnv1a(np.array(["a"], dtype=object))[0]))  # FNV-1a test vector
    '0xaf63dc4c8601ec8c'
    """
    encoded = [str(v).encode() for v in values]
    width = max((len(b) for b in encoded), default=0)
    data = np.frombuffer(b"".join(b.ljust(width, b"\0") for b in encoded), dtype=np.uint8)
    data = data.reshape(len(encoded), width).astype(np.uint64)
    lengths = np.array([len(b) for b in encoded], dtype=np.int64)
    out = np.full(len(encoded), _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(width):
            live = lengths > j
            out[live] = (out[live] ^ data[live, j]) * _FNV_PRIME
    return out


class HashIndex:
    """Positions of distinct uint64 keys, found by an open-addressing hash table in numpy:
    ``pandas.Index(keys).get_indexer`` without pandas.

    A key's home slot is the top bits of ``key * 0x9E37...`` (Fibonacci hashing); the
    table has over 4 slots per key up to :data:`_SPARSE_KEYS` keys and over 1.5 beyond
    (a worker's memory: 1.2M qrels keys take 25 MB), and collisions go to the next free slot
    (linear probing, no wrap-around: the table ends with a free slot).  Keys are
    placed in order of their home slot, so that key ``i`` lands at ``max(home_i,
    place_{i-1} + 1)``, a running maximum.  A probe reads slots from the home slot
    on until it meets its key or an empty slot (key 0, which a real key 0 cannot
    take: it is kept aside), every probe at once, a round per slot.

    >>> index = HashIndex(np.array([7, 0, 2**64 - 1, 12], np.uint64))
    >>> index.get_indexer(np.array([12, 5, 0, 7, 2**64 - 1], np.uint64)).tolist()
    [3, -1, 1, 0, 2]
    """

    def __init__(self, keys: np.ndarray) -> None:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        zero = np.flatnonzero(keys == 0)
        self._zero = int(zero[0]) if zero.size else -1
        rows = np.flatnonzero(keys != 0)
        n = len(rows)
        # sparse (load under 1/4: short probe chains, as most probes of a run miss) while
        # the table stays within 2^21 slots (25 MB); denser past that (load under 2/3)
        bits = max((4 * n if n < _SPARSE_KEYS else n + n // 2).bit_length(), 3)
        self._shift = np.uint64(64 - bits)
        home = self._home(keys[rows])
        order = np.argsort(home)
        home, rows = home[order], rows[order]
        step = np.arange(len(rows))
        place = step + np.maximum.accumulate(home - step) if len(rows) else home
        size = max(1 << bits, int(place[-1]) + 2 if len(rows) else 0)
        self._keys = np.zeros(size, np.uint64)  # 0: an empty slot
        # int32 positions where they fit: the table is a worker's largest object when the
        # qrels are (1.2M keys: 25 MB, not 134 MB at 4 slots a key and int64)
        self._index = np.full(size, -1, np.int32 if len(keys) < 2**31 else np.int64)
        self._keys[place] = keys[rows]
        self._index[place] = rows

    def _home(self, keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            home = keys * _FIBONACCI
        home >>= self._shift
        return home.view(np.int64)

    def get_indexer(self, probe: np.ndarray) -> np.ndarray:
        """Position of each probed key among the keys, -1 when absent."""
        probe = np.asarray(probe, dtype=np.uint64)
        out = np.full(len(probe), -1, np.int64)
        slot = self._home(probe)
        found = np.take(self._keys, slot)
        hit = found == probe
        out[hit] = np.take(self._index, slot[hit])
        todo = np.flatnonzero(~hit & (found != 0))
        slot, key = slot[todo], probe[todo]
        while todo.size:
            slot += 1
            found = np.take(self._keys, slot)
            hit = found == key
            out[todo[hit]] = np.take(self._index, slot[hit])
            more = ~hit & (found != 0)
            todo, slot, key = todo[more], slot[more], key[more]
        if self._zero >= 0:
            out[probe == 0] = self._zero
        return out

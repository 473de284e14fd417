"""Random draws keyed by run, query and slot: the same numbers however the work is split.

A sampled evaluation must give the same values whether a run is evaluated whole,
split into query partitions on a cluster, or drawn in batches of samples.  So
no draw comes from a sequential stream: the uniform for sample ``s`` of slot
``i`` (a position that means the same inside its query, such as the rank) of
query ``q`` is a hash of ``(run key, qid, i, s)``, where the run key comes
from the seed and the run name (:func:`tiecore.evaluation.core.run_seed`).  The hash is
SplitMix64's finaliser, a bijection of 64-bit words with full avalanche, applied
to keys built from already mixed words; the uniform is its top 53 bits over
``2**53``, as ``numpy.random.Generator.random`` builds its doubles.
"""

from __future__ import annotations

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (a bijection of 64-bit words), in place on a uint64 array
    (wrapping arithmetic); the one mixer of the package's hashes and keyed draws."""
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def stream_key(rng: np.random.Generator | int) -> int:
    """A 64-bit run key: an integer as given, or the next 64-bit word of ``rng``.

    >>> stream_key(np.random.default_rng(0)) == stream_key(np.random.default_rng(0))
    True
    """
    if isinstance(rng, int | np.integer):
        return int(rng) & 0xFFFFFFFFFFFFFFFF
    return int(rng.integers(0, 2**64, dtype=np.uint64))


def string_hashes(values: np.ndarray) -> np.ndarray:
    """FNV-1a (64 bit) of each string's UTF-8 bytes, looping over character positions.

    >>> hex(int(string_hashes(np.array(["a"], dtype=object))[0]))  # FNV-1a test vector
    '0xaf63dc4c8601ec8c'
    """
    encoded = [str(v).encode() for v in values]
    width = max((len(b) for b in encoded), default=0)
    data = np.frombuffer(b"".join(b.ljust(width, b"\0") for b in encoded), dtype=np.uint8)
    data = data.reshape(len(encoded), width).astype(np.uint64)
    lengths = np.array([len(b) for b in encoded], dtype=np.int64)
    out = np.full(len(encoded), _FNV_OFFSET, dtype=np.uint64)
    for j in range(width):
        live = lengths > j
        out[live] = (out[live] ^ data[live, j]) * _FNV_PRIME
    return out

"""Random draws keyed by run, query and slot: the same numbers however the work is split.

A sampled evaluation must give the same values whether a run is evaluated whole,
split into query partitions on a cluster, or drawn in batches of samples.  So
no draw comes from a sequential stream: the uniform for sample ``s`` of slot
``i`` (a position that means the same inside its query, such as the rank) of
query ``q`` is a hash of ``(run key, qid, i, s)``, where the run key comes
from the seed and the run name (:func:`tiecore.evaluation.core.run_seed`).  The hash is
SplitMix64's finaliser (:func:`tiecore.io.hashing.mix`, the package's one mixer), a
bijection of 64-bit words with full avalanche, applied to keys built from already
mixed words, the qid's from its FNV-1a hash (:func:`tiecore.io.hashing.fnv1a`);
the uniform is its top 53 bits over ``2**53``, as ``numpy.random.Generator.random``
builds its doubles.
"""

from __future__ import annotations

import numpy as np

__all__ = ["stream_key"]


def stream_key(rng: np.random.Generator | int) -> int:
    """A 64-bit run key: an integer as given, or the next 64-bit word of ``rng``.

    >>> stream_key(np.random.default_rng(0)) == stream_key(np.random.default_rng(0))
    True
    """
    if isinstance(rng, int | np.integer):
        return int(rng) & 0xFFFFFFFFFFFFFFFF
    return int(rng.integers(0, 2**64, dtype=np.uint64))

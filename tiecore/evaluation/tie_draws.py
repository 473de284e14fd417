"""Random tie-breaks for the evaluations of trec_eval's other judgments (``-R prefs``,
``-R qrels_prefs``, ``-R qrels_jg``) in sampled mode.

Sample ``s`` orders the docs of each tie group (equal scores, as given) of query ``q``
by a 64-bit word, smallest first:

    word(s, q, d) = mix(mix(s * G + G) ^ mix(mix(fnv1a(q) ^ mix(run)) ^ mix(fnv1a(d))))

with ``run`` the run's key (:func:`tiecore.engine.seeding.stream_key` of
:func:`tiecore.evaluation.summaries.run_seed`, the seed and the run's name, as every
sampled evaluation), ``d`` the docno, ``G`` the golden-ratio word and ``mix``
SplitMix64's finaliser (:func:`tiecore.io.hashing.mix`).  Distinct words give every
order of a group the same probability (the words are a hash of distinct inputs, as
:mod:`tiecore.engine.sampling`'s), and the order of two docs does not depend on which
other docs the run holds or which are judged: the same seed draws the same order of a
query whatever else is evaluated, and in whatever batches of samples.
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.seeding import stream_key
from tiecore.evaluation.summaries import run_seed
from tiecore.io.hashing import fnv1a, mix

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def run_key(seed: int, name: str) -> int:
    """The run's 64-bit key: the first word of :func:`run_seed` ``(seed, name)``."""
    return stream_key(run_seed(seed, name))


def doc_words(key: int, qids: np.ndarray, docnos: np.ndarray) -> np.ndarray:
    """Each doc's column word ``mix(mix(fnv1a(q) ^ mix(run)) ^ mix(fnv1a(d)))`` (uint64)."""
    run = mix(np.array([key], dtype=np.uint64))
    query = mix(fnv1a(np.asarray(qids, dtype=object)) ^ run)
    return mix(query ^ mix(fnv1a(np.asarray(docnos, dtype=object))))


def sample_words(columns: np.ndarray, first: int, size: int) -> np.ndarray:
    """Words ``(size, len(columns))`` of samples ``first .. first + size - 1``."""
    with np.errstate(over="ignore"):
        sample = mix(np.arange(first, first + size, dtype=np.uint64) * _GOLDEN + _GOLDEN)
    return mix(sample[:, None] ^ columns[None, :])


def drawn_order(words: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per sample (row of ``words``), the rows' new places: groups (contiguous, in
    ranked order) keep their places, each ordered by its docs' words, smallest first
    (ties of words, never met in practice, by row)."""
    size, n = words.shape
    order = np.lexsort((words, np.broadcast_to(groups, words.shape)), axis=-1)
    place = np.empty_like(order)
    np.put_along_axis(place, order, np.broadcast_to(np.arange(n), (size, n)), axis=-1)
    return place

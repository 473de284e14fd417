"""A run's seed and the summary of its per-query values (numpy only).

Shared by every evaluation path, so that all seed and average a run the same way,
bit for bit.
"""

from __future__ import annotations

import zlib

import numpy as np

from tiecore.measures.gmap import gmap


def run_seed(seed: int, name: str) -> np.random.Generator:
    """A generator for one run: the same seed and name always draw the same orders
    (``default_rng([seed, crc32(name)])``, whatever else is evaluated with it)."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def mean(values: np.ndarray, axis: int) -> np.ndarray:
    """The mean along ``axis`` (kept), as trec_eval averages: the values added one after
    the other in their order (the queries' order, trec_eval's), then divided by their
    count.  numpy's ``sum`` and ``mean`` add pairwise, whose last bits differ from C's
    loop and can flip a printed digit (0.09605 printed 0.0961 where trec_eval prints
    0.0960); ``cumsum`` adds in order.  Where the sum overflows although every value is
    finite (unnormalised exp gains near 2**1023), ``sum(value / n)``.

    >>> mean(np.array([[2.0**1023, 2.0**1023]]), axis=1).tolist() == [[2.0**1023]]
    True
    >>> values = np.random.default_rng(0).random((1, 1000))
    >>> loop = 0.0
    >>> for value in values[0]:  # trec_eval's loop
    ...     loop += value
    >>> bool(mean(values, axis=1)[0, 0] == loop / 1000 != values.mean())
    True
    """
    count = values.shape[axis]
    if count == 0:
        return values.sum(axis=axis, keepdims=True) / count
    with np.errstate(over="ignore"):
        total = np.take(np.cumsum(values, axis=axis), [-1], axis=axis)
        found = total / count
    lost = np.isinf(found) & np.isfinite(values).all(axis=axis, keepdims=True)
    if lost.any():
        scaled = (values / count).sum(axis=axis, keepdims=True)
        found = np.where(lost, scaled, found)
    return found


def geometric_summaries(found: dict, stacked: np.ndarray, summary: np.ndarray) -> None:
    """Families averaged geometrically (``aggregate="geometric"``, gm_map): their summary
    is trec_eval's ``exp(mean log max(value, 1e-5))`` (:func:`tiecore.measures.gmap.gmap`), in
    place; per sample when sampled (the mean over samples then estimates the mean GMAP).

    ``found`` maps the measures to their values, in the order of ``stacked``'s rows
    (``(measures, [samples,] queries)``); ``summary`` holds a row per measure.
    """
    rows = [i for i, m in enumerate(found) if m.spec.aggregate == "geometric"]
    if rows and stacked.shape[-1]:
        summary[rows] = gmap(stacked[rows], axis=-1)[..., None]

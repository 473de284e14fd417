"""Ranks with ties, decided within a tolerance, as integers people read.

Scores computed along different paths differ by rounding noise (``0.1 + 0.2``
is not ``0.3``) where they are mathematically equal.  Two values count as tied
when, sorted, they are within ``RTOL`` times the largest magnitude compared of
each other (a chain of such neighbours is one tie group).  :func:`tie_ranks` is
the one ranking by this rule: the integer ranks a table prints ("standard
competition ranking": 1, 2, 2, 4) or the average ranks :mod:`tiecore.compare`
uses (1, 2.5, 2.5, 4); :func:`mean_ranks` averages a run's rank over draws and
:func:`rank_labels` writes a shared rank as ``=2``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tiecore.errors import InputError

__all__ = ["RTOL", "mean_ranks", "rank_change", "rank_labels", "tie_levels", "tie_ranks"]

#: Relative tolerance of equality: values within ``RTOL * max |value|`` are tied.
RTOL = 1e-12


def tie_levels(values: np.ndarray, rtol: float = RTOL) -> np.ndarray:
    """Integer tie levels along the last axis: higher value, higher level; ties share one.

    Sorted values closer than ``rtol * max |value|`` (of their row) to their
    neighbour are one tie group, so rounding noise does not break a tie.

    >>> tie_levels(np.array([0.3, 0.1 + 0.2, 0.5, 0.1])).tolist()
    [1, 1, 2, 0]
    """
    values = np.asarray(values, np.float64)
    order = np.argsort(values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    scale = np.abs(values).max(axis=-1, keepdims=True) if values.shape[-1] else 0.0
    step = np.diff(ordered, axis=-1) > rtol * scale
    level = np.concatenate(
        [np.zeros((*values.shape[:-1], min(values.shape[-1], 1)), np.int64), np.cumsum(step, -1)],
        axis=-1,
    )
    out = np.empty_like(level)
    np.put_along_axis(out, order, level, axis=-1)
    return out


#: How a tie group is ranked by :func:`tie_ranks`.
METHODS = ("competition", "average")


def tie_ranks(values: ArrayLike, method: str = "competition", rtol: float = RTOL) -> np.ndarray:
    """Ranks along the last axis, 1 = highest, values within a tolerance tied.

    The one ranking of tiecore: the tables and the app print it, ``compare``
    ranks runs with it.  Sorted best first, values whose gap is at most
    ``rtol * max |value|`` (of the row's finite values) are one tie group (a
    chain of such neighbours too; the groups of :func:`tie_levels`).  A group
    holding places ``first .. last`` (1-based) ranks

    - ``competition`` ("standard competition ranking", scipy's ``method="min"``):
      ``first``, so ``0.5, 0.3, 0.3, 0.1`` rank ``1, 2, 2, 4`` and a rank says how
      many items are above (``rank - 1``);
    - ``average`` (scipy's ``method="average"``): ``(first + last) / 2``, so
      ``1, 2.5, 2.5, 4``; the ranks of a row always sum to ``n (n + 1) / 2``,
      so a tie that splits moves its members symmetrically.

    NaN (an undefined value) ranks after every number, NaNs tied with each other;
    ``inf`` ties with ``inf`` and ranks above every finite value.

    Parameters
    ----------
    values : array_like
        Numbers, at least one axis; each row along the last axis is ranked on its own.
    method : {"competition", "average"}
        The rank of a tie group.
    rtol : float
        Relative tolerance of equality.

    Returns
    -------
    numpy.ndarray
        int64 (``competition``) or float64 (``average``), the shape of ``values``.

    Raises
    ------
    InputError
        Values that are not numbers, a single number (nothing to rank it
        against), or an unknown method.

    Examples
    --------
    >>> tie_ranks([0.1, 0.5, 0.1 + 0.2, 0.3]).tolist()
    [4, 1, 2, 2]
    >>> tie_ranks([0.1, 0.5, 0.1 + 0.2, 0.3], "average").tolist()
    [4.0, 1.0, 2.5, 2.5]
    >>> tie_ranks([[3.0, float("nan"), 3.0], [1.0, 2.0, 3.0]]).tolist()
    [[1, 3, 1], [3, 2, 1]]
    """
    if method not in METHODS:
        raise InputError("method", None, f"{method!r} is not a ranking", " or ".join(METHODS))
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("ranks", None, "the values are not all numbers", "numbers") from None
    if v.ndim == 0:
        raise InputError("ranks", None, "a single number has no rank", "a list of values")
    # Sorted best first; NaN sorts last (argsort puts NaN after everything).
    order = np.argsort(-v, axis=-1, kind="stable")
    ordered = np.take_along_axis(v, order, axis=-1)
    scale = np.abs(np.where(np.isfinite(v), v, 0.0)).max(axis=-1, keepdims=True, initial=0.0)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, no step (inf ties with inf)
        gap = -np.diff(ordered, axis=-1)
        step = (gap > rtol * scale) | (np.isnan(ordered[..., 1:]) & ~np.isnan(ordered[..., :-1]))
    edge = np.ones((*v.shape[:-1], min(v.shape[-1], 1)), bool)
    place = np.arange(v.shape[-1])
    # Each item's group starts at `first` (0-based) and ends at `last`.
    first = np.maximum.accumulate(np.where(np.concatenate([edge, step], -1), place, 0), -1)
    if method == "competition":
        rank = first + 1
    else:
        ends = np.where(np.concatenate([step, edge], -1), place, v.shape[-1])
        last = np.flip(np.minimum.accumulate(np.flip(ends, -1), -1), -1)
        rank = (first + last) / 2.0 + 1.0
    out = np.empty(v.shape, rank.dtype)
    np.put_along_axis(out, order, rank, axis=-1)
    return out


def _integers(ranks: ArrayLike, what: str) -> np.ndarray:
    """``ranks`` as int64; InputError when they are not whole numbers."""
    try:
        r = np.asarray(ranks)
        if r.dtype.kind not in "iub":
            r = r.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(what, None, "the ranks are not all numbers", "whole numbers") from None
    if r.dtype.kind == "f":
        bad = ~np.isfinite(r) | (r != np.round(r))
        if bad.any():
            raise InputError(
                what, None, f"rank {float(r[bad].flat[0])!r} is not a whole number", "whole numbers"
            )
    return r.astype(np.int64)


def rank_labels(ranks: ArrayLike) -> list[str]:
    """Ranks as text; a rank that several items share is prefixed with ``=``.

    Parameters
    ----------
    ranks : array_like
        One rank per item (one axis), as :func:`tie_ranks` gives.

    Returns
    -------
    list of str
        ``"1"``, ``"=2"``, ``"=2"``, ``"4"``: one label per item, in order.

    Examples
    --------
    >>> rank_labels([1, 2, 2, 4])
    ['1', '=2', '=2', '4']
    """
    r = _integers(ranks, "rank labels")
    if r.ndim != 1:
        raise InputError("rank labels", None, f"ranks of shape {r.shape}", "one rank per item")
    _, where, counts = np.unique(r, return_inverse=True, return_counts=True)
    shared = counts[where] > 1
    return np.char.add(np.where(shared, "=", ""), r.astype(str)).tolist()


def rank_change(before: ArrayLike, after: ArrayLike) -> np.ndarray:
    """How many places each item moved: ``after - before``; negative means moved up.

    Rank 1 is the top, so an item going from rank 5 to rank 2 moved up three
    places and gets ``-3``; one going from 2 to 5 moved down and gets ``+3``.

    Parameters
    ----------
    before, after : array_like
        Whole-number ranks of the same items, of the same shape (or shapes
        that numpy broadcasts).

    Returns
    -------
    numpy.ndarray
        int64 changes.

    Examples
    --------
    >>> rank_change([1, 2, 2, 4], [2, 1, 4, 2]).tolist()
    [1, -1, 2, -2]
    """
    b = _integers(before, "rank change")
    a = _integers(after, "rank change")
    try:
        return np.subtract(a, b)
    except ValueError:
        raise InputError(
            "rank change", None, f"ranks of shapes {b.shape} and {a.shape}", "one rank per item"
        ) from None


def mean_ranks(scores: ArrayLike, rtol: float = RTOL) -> np.ndarray:
    """Each column's rank averaged over the rows: the mean rank of each item over draws.

    ``scores`` holds one row per draw (e.g. a random tie-break) and one column per
    item (a system).  Within a row, 1 is the highest score and items tied (within
    ``rtol`` as :func:`tie_ranks` decides, so rounding noise does not break a tie)
    share the mean of the places they occupy (``1, 2.5, 2.5, 4``: scipy's
    ``rankdata(method="average")``); the result averages each column over the rows.

    Parameters
    ----------
    scores : array_like
        ``(draws, items)`` scores.
    rtol : float
        Relative tolerance of equality within a row.

    Returns
    -------
    numpy.ndarray
        float64 mean rank of each item, between 1 and the number of items.

    Examples
    --------
    >>> mean_ranks([[0.5, 0.3, 0.3], [0.1, 0.3, 0.2]]).tolist()
    [2.0, 1.75, 2.25]
    """
    values = np.asarray(scores, np.float64)
    if values.ndim != 2:
        raise InputError(
            "mean ranks", None, f"scores of shape {values.shape}", "a (draws, items) matrix"
        )
    if not values.size:
        return np.full(values.shape[1], np.nan)
    return tie_ranks(values, "average", rtol).mean(axis=0)

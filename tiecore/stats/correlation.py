"""Rank correlation of two rankings given by scores, with ties within a tolerance.

Kendall's tau-b and the AP correlation ``tau_AP`` (Yilmaz, Aslam & Robertson,
SIGIR 2008) with Urbano & Marrero's treatment of ties (ICTIR 2017).  Every
statistic comes from the ``above`` matrices of the two rankings (item ``j``
strictly above item ``i``), so whole batches of rankings (one per random
tie-break) are correlated with array operations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from tiecore.stats import CHUNK_CELLS
from tiecore.stats.ranks import RTOL as RTOL  # scores within it are tied
from tiecore.stats.ranks import tie_levels


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of score vectors along the last axis (as :func:`scipy.stats.kendalltau`).

    ``tau_b = (concordant - discordant) / sqrt(pairs untied in x * pairs untied
    in y)``, scores within :data:`RTOL` counting as tied.  Undefined (NaN)
    when either vector ties every item.

    >>> float(kendall_tau(np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])))
    -1.0
    """
    return correlations(above(x), above(y))[0]


def tau_ap(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """AP correlation of the ranking by scores ``x`` judged against the ranking by ``y``.

    Yilmaz, Aslam & Robertson (SIGIR 2008), higher scores ranked first, with
    Urbano & Marrero's treatment of ties (ICTIR 2017, one direction of their
    ``tau_AP_b``)::

        tau_AP = 2 / |I| * sum_{i in I} C(i) / A(i) - 1

    where ``A(i)`` counts the items strictly above item ``i`` in ``x``, ``I``
    the items with ``A(i) > 0`` (all but the top tie group of ``x``), and
    ``C(i)`` the items strictly above ``i`` in both ``x`` and ``y``.  Without
    ties this is the original ``2 / (N - 1) sum_{i=2..N} C(i) / (i - 1) - 1``;
    a ranking judged against itself scores exactly 1, ties or not.  Scores
    within :data:`RTOL` are tied.  Undefined (NaN) when ``x`` or ``y`` ties
    every item.  Works along the last axis.

    >>> float(tau_ap(np.array([3.0, 2.0, 2.0, 1.0]), np.array([3.0, 2.0, 2.0, 1.0])))
    1.0
    >>> float(tau_ap(np.array([3.0, 2.0, 1.0]), np.array([3.0, 1.0, 2.0])))
    0.5
    """
    if np.shape(x)[-1] < 2:
        raise ValueError("tau_ap needs at least two items")
    return correlations(above(x), above(y))[1]


def tau_ap_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Urbano & Marrero's symmetric ``tau_AP_b``: the mean of :func:`tau_ap` both ways.

    >>> float(tau_ap_b(np.array([3.0, 2.0, 1.0]), np.array([2.0, 2.0, 1.0])))
    0.5
    """
    _, forward, backward = correlations(above(x), above(y))
    return (forward + backward) / 2.0


def above(x: np.ndarray) -> np.ndarray:
    """``[..., i, j]``: item ``j`` strictly above item ``i`` (tie levels, :func:`tie_levels`)."""
    level = tie_levels(x)
    return level[..., None, :] > level[..., :, None]


def correlations(ax: np.ndarray, ay: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kendall's tau-b, tau_AP(x vs y) and tau_AP(y vs x) from two :func:`above` arrays.

    With ``A`` the above matrices: concordant pairs ``sum A_x A_y``,
    discordant ``sum A_x A_y^T``, untied pairs ``sum A``; ``C(i)`` of both
    tau_AP directions is the same row sum of ``A_x A_y``.  Broadcasts.
    """
    both = np.logical_and(ax, ay).sum(axis=-1)  # (..., n): above i in both
    crossed = np.logical_and(ax, np.swapaxes(ay, -1, -2)).sum(axis=(-1, -2))
    above_x, above_y = ax.sum(axis=-1), ay.sum(axis=-1)
    untied_x, untied_y = above_x.sum(axis=-1), above_y.sum(axis=-1)
    untied = untied_x * untied_y
    with np.errstate(divide="ignore", invalid="ignore"):
        kendall = np.where(untied > 0, (both.sum(axis=-1) - crossed) / np.sqrt(untied), np.nan)
    defined = untied > 0
    return kendall, _tau_ap_of(both, above_x, defined), _tau_ap_of(both, above_y, defined)


def _tau_ap_of(correct: np.ndarray, above: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """``2 / |I| sum_{i in I} C(i) / A(i) - 1`` over ``I = {i : A(i) > 0}``; NaN where undefined."""
    correct, above = np.broadcast_arrays(correct, above)
    ratio = np.divide(correct, above, out=np.zeros(above.shape), where=above > 0)
    counted = np.count_nonzero(above, axis=-1)
    return np.where(defined, 2.0 * ratio.sum(axis=-1) / np.maximum(counted, 1) - 1.0, np.nan)


def rank_agreement(
    orderings: Mapping[str, np.ndarray], samples: np.ndarray, random: str = "random"
) -> pd.DataFrame:
    """Kendall's tau and tau_AP between every ordered pair of rankings, and with the samples.

    The samples go in batches whose ``(samples, items, items)`` arrays stay
    within :data:`~tiecore.stats.CHUNK_CELLS` cells; each batch serves every ordering.

    Parameters
    ----------
    orderings : mapping of name to ndarray
        Each ordering's scores of the same items (``(items,)``).
    samples : ndarray
        ``(samples, items)``: one more ranking per row (a random tie-break); the
        rows with ``random`` hold the mean over the rows where a statistic is
        defined (:func:`_defined_mean`).
    random : str
        The samples' name in the index.

    Returns
    -------
    DataFrame
        Index ``(ordering_a, ordering_b)``; ``kendall_tau`` (tau-b), ``tau_ap``
        (``a`` judged against ``b``) and ``tau_ap_sym`` (the mean of both
        directions, :func:`tau_ap_b`).  NaN: undefined.

    >>> frame = rank_agreement({"x": np.array([3.0, 2.0, 1.0])}, np.array([[1.0, 2.0, 3.0]]))
    >>> frame.round(3).to_dict("index")[("x", "random")]
    {'kendall_tau': -1.0, 'tau_ap': -1.0, 'tau_ap_sym': -1.0}
    """
    names = list(orderings)
    matrix = {o: above(np.asarray(orderings[o], np.float64)) for o in names}
    rows = {}
    for a in names:
        for b in names:
            if a != b:
                tau, forward, backward = (float(v) for v in correlations(matrix[a], matrix[b]))
                rows[a, b] = (tau, forward, (forward + backward) / 2)
    width = len(next(iter(orderings.values()))) if names else samples.shape[1]
    batch = max(1, CHUNK_CELLS // max(width, 1) ** 2)
    found: dict[str, tuple[list, list, list]] = {o: ([], [], []) for o in names}
    for start in range(0, len(samples), batch):
        drawn = above(samples[start : start + batch])
        for o in names:
            for column, values in zip(found[o], correlations(matrix[o], drawn), strict=True):
                column.append(values)
    for a in names:
        taus, forwards, backwards = (np.concatenate(column) for column in found[a])
        both = (forwards + backwards) / 2
        rows[a, random] = (_defined_mean(taus), _defined_mean(forwards), _defined_mean(both))
        rows[random, a] = (_defined_mean(taus), _defined_mean(backwards), _defined_mean(both))
    frame = pd.DataFrame.from_dict(
        rows, orient="index", columns=["kendall_tau", "tau_ap", "tau_ap_sym"]
    )
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["ordering_a", "ordering_b"])
    return frame


def _defined_mean(values: np.ndarray) -> float:
    """Mean over the defined (non-NaN) values; NaN when none is."""
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else math.nan

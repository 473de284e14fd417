"""Pairs of systems whose order ties could decide (:func:`closest_pairs`), or the nearest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tiecore.options import REPORT, pick, validate_params

if TYPE_CHECKING:
    import pandas as pd


_PAIR_COLUMNS = ["a", "b", "mean_diff", "tie_noise", "p_beats"]


@validate_params(pick(REPORT, "low", "high", "width"))
def closest_pairs(
    pairs: pd.DataFrame,
    *,
    low: float = 0.05,
    high: float = 0.95,
    width: float = 2.0,
    order: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Pairs of systems whose order ties could decide.

    A pair qualifies when ``low < P(a beats b) < high`` or when the gap of their
    tie-aware means is within ``width`` tie sd (``tie_noise`` of
    :attr:`tiecore.compare.Comparison.pairs`), and ties can move it at all
    (``tie_noise > 0``: two systems without tie noise that score the same are
    equal, whatever the tie-break).  Each unordered pair appears once,
    ``a`` the better of the two (or first in ``order``).

    Parameters
    ----------
    pairs : DataFrame
        Index or columns ``a, b``; columns ``mean_diff`` and some of
        ``p_beats_sampled``, ``p_beats_normal``, ``tie_noise``.

    Returns
    -------
    DataFrame
        ``a, b, mean_diff, tie_noise, p_beats`` (sampled, else normal), closest
        to a coin toss first.

    Examples
    --------
    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"a": ["x", "y"], "b": ["y", "x"], "mean_diff": [0.01, -0.01],
    ...                       "tie_noise": [0.03, 0.03], "p_beats_sampled": [0.7, 0.3]})
    >>> closest_pairs(pairs)[["a", "b", "p_beats"]]
       a  b  p_beats
    0  x  y      0.7
    """
    frame = _unordered(pairs, order)
    if frame.empty:
        return frame
    close = ((frame["p_beats"] > low) & (frame["p_beats"] < high)) | (
        frame["mean_diff"].abs() <= width / 2 * frame["tie_noise"]
    )
    close &= frame["tie_noise"] > 0  # without tie noise no tie-break changes the pair
    found = frame[close.fillna(False)].copy()
    found["distance"] = (found["p_beats"] - 0.5).abs()
    found = found.sort_values(["distance", "a", "b"], na_position="last")
    return found[_PAIR_COLUMNS].reset_index(drop=True)


@validate_params(pick(REPORT, "count"))
def nearest_pairs(
    pairs: pd.DataFrame, *, count: int = 3, order: Sequence[str] | None = None
) -> pd.DataFrame:
    """The ``count`` pairs of systems nearest to a swap, close or not.

    Nearness is the gap of the tie-aware means in units of the tie noise,
    ``|mean_diff| / tie_noise`` (``gap_in_tie_noise``; infinite without tie
    noise), then the gap itself: what to show when :func:`closest_pairs` finds
    none.  Rows as :func:`closest_pairs` gives them, nearest first.

    Examples
    --------
    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"a": ["x", "x", "y"], "b": ["y", "z", "z"],
    ...                       "mean_diff": [0.05, 0.2, 0.15], "tie_noise": [0.01, 0.1, 0.0],
    ...                       "p_beats_normal": [1.0, 0.99, 1.0]})
    >>> nearest_pairs(pairs, count=2)[["a", "b", "gap_in_tie_noise"]]
       a  b  gap_in_tie_noise
    0  x  z               2.0
    1  x  y               5.0
    """
    frame = _unordered(pairs, order)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = frame["mean_diff"].abs() / frame["tie_noise"]
    frame["gap_in_tie_noise"] = ratio.where(frame["tie_noise"] > 0, np.inf)
    frame["gap"] = frame["mean_diff"].abs()
    frame = frame.sort_values(["gap_in_tie_noise", "gap", "a", "b"], na_position="last")
    return frame[[*_PAIR_COLUMNS, "gap_in_tie_noise"]].head(count).reset_index(drop=True)


def _unordered(pairs: pd.DataFrame, order: Sequence[str] | None) -> pd.DataFrame:
    """One row per unordered pair (``a`` the better, or first in ``order``), with
    ``p_beats`` (sampled where given, else normal) and numeric ``tie_noise``."""
    import pandas as pd

    frame = pairs.reset_index() if "a" not in pairs.columns else pairs.copy()
    if frame.empty:
        return pd.DataFrame(columns=_PAIR_COLUMNS)
    p = pd.Series(np.nan, index=frame.index)
    for name in ("p_beats_normal", "p_beats_sampled"):  # sampled wins where both exist
        if name in frame:
            values = pd.to_numeric(frame[name], errors="coerce")
            p = values.where(values.notna(), p)
    frame["p_beats"] = p
    noise = pd.to_numeric(frame.get("tie_noise", pd.Series(np.nan, index=frame.index)))
    frame["tie_noise"] = noise
    frame["mean_diff"] = diff = pd.to_numeric(frame["mean_diff"], errors="coerce")
    if order is not None:
        rank = {name: i for i, name in enumerate(order)}
        keep = frame["a"].map(rank) < frame["b"].map(rank)
    else:
        keep = diff > 0
        keep |= (diff == 0) & (frame["a"].astype(str) < frame["b"].astype(str))
    return frame[keep]

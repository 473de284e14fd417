"""Scores at lower precision: the ties a bfloat16, float16 or rounded run would have.

Dense retrievers served in bfloat16 or float16 give equal scores to documents
that their float32 run kept apart (Yang et al., ACL 2026), and a run file
written with few decimals does the same.  :func:`coarsen` returns scores as
they would be after such rounding, so that tie-aware evaluation can show what
the lost precision costs:

- ``"fp32"``: the nearest float32 (round half to even, as numpy casts);
- ``"fp16"``: the nearest float16 (numpy's ``float16``; 11 significant bits,
  largest finite value 65504);
- ``"bf16"``: bfloat16 (8 significant bits, float32's range): the float32
  score's bit pattern rounded to its top 16 bits, half to even, as hardware
  and :mod:`ml_dtypes` do; the score is first a float32, as a float32 model's
  scores are (for a float64 score exactly halfway between two float32 values
  this double rounding can differ from rounding the float64 directly);
- an integer ``k`` from 0 to 15: the exact value rounded half to even to
  ``k`` decimal places, i.e. what writing the score with ``"%.kf"`` and
  reading it back gives.  This is not always :func:`numpy.round`, which
  multiplies by ``10**k`` first and so rounds ``4.35`` (stored as
  ``4.34999...``) to ``4.4``; here it is ``4.3``.

A finite score that the precision cannot hold (beyond 65504 in float16,
beyond about 3.4e38 in float32 and bfloat16) would become infinite, as it
does on hardware.  tiecore does not evaluate infinite scores, so
:func:`coarsen` refuses such scores and says how many there are.  NaN and
infinite input stay as they are.

Everything is numpy over whole arrays.
"""

from __future__ import annotations

import operator
import re

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tiecore.errors import InputError
from tiecore.io.frames import check_run

__all__ = ["PRECISIONS", "coarsen", "coarsen_run", "parse_precision", "precision_label"]

#: The named precisions (an integer number of decimals is accepted as well).
PRECISIONS: tuple[str, ...] = ("fp32", "bf16", "fp16")
#: The most decimals accepted (float64 holds 15 significant decimal digits).
MAX_DECIMALS = 15

_LABELS = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
_ALIASES = {
    "fp32": "fp32", "float32": "fp32", "single": "fp32",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16",
}  # fmt: skip
_DECIMALS = re.compile(r"(\d+)(?:\s*(?:decimals?|decimal places?|dp|places?|digits?))?")
_ACCEPTED = f"bf16, fp16, fp32 or a number of decimals 0-{MAX_DECIMALS}"
#: Largest finite value of each named precision (as float64).
_LARGEST = {
    "fp32": float(np.finfo(np.float32).max),
    "bf16": float.fromhex("0x1.fep127"),
    "fp16": float(np.finfo(np.float16).max),
}
#: Veltkamp's splitting constant for float64: 2**27 + 1.
_SPLIT = 134217729.0


def _canonical(precision: str | int) -> str | int:
    """``precision`` as ``"fp32"``, ``"bf16"``, ``"fp16"`` or an int 0-15; InputError else."""
    if isinstance(precision, str):
        return parse_precision(precision)
    if isinstance(precision, bool | np.bool_):
        raise InputError("precision", None, f"{precision!r} is not a precision", _ACCEPTED)
    try:
        decimals = operator.index(precision)
    except TypeError:
        raise InputError(
            "precision", None, f"{precision!r} is not a precision", _ACCEPTED
        ) from None
    if not 0 <= decimals <= MAX_DECIMALS:
        raise InputError("precision", None, f"{decimals} decimals is out of range", _ACCEPTED)
    return decimals


def parse_precision(text: str) -> str | int:
    """A precision as written by a person, in canonical form.

    Parameters
    ----------
    text : str
        ``"bf16"`` or ``"bfloat16"``; ``"fp16"``, ``"float16"`` or ``"half"``;
        ``"fp32"``, ``"float32"`` or ``"single"``; a number of decimals from 0
        to 15, alone or followed by ``decimals`` / ``places`` / ``dp``.  Case
        and surrounding spaces do not matter.

    Returns
    -------
    str or int
        ``"bf16"``, ``"fp16"``, ``"fp32"`` (see :data:`PRECISIONS`), or the
        number of decimals.

    Raises
    ------
    InputError
        Anything else, with what is accepted.

    Examples
    --------
    >>> parse_precision(" BFloat16 "), parse_precision("half"), parse_precision("3 decimals")
    ('bf16', 'fp16', 3)
    >>> parse_precision("fp8")
    Traceback (most recent call last):
    ...
    tiecore.errors.InputError: precision: 'fp8' is not a precision (expected bf16, fp16, fp32 or a number of decimals 0-15)
    """  # noqa: E501
    if not isinstance(text, str):
        return _canonical(text)
    key = text.strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    match = _DECIMALS.fullmatch(key)
    if match is None:
        raise InputError("precision", None, f"{text!r} is not a precision", _ACCEPTED)
    return _canonical(int(match.group(1)))


def precision_label(precision: str | int) -> str:
    """How a page names a precision: ``"bfloat16"``, ``"float16"``, ``"float32"``, ``"3 decimals"``.

    Examples
    --------
    >>> [precision_label(p) for p in ("bf16", "fp16", "fp32", 3, 1, "0")]
    ['bfloat16', 'float16', 'float32', '3 decimals', '1 decimal', '0 decimals']
    """
    precision = _canonical(precision)
    if isinstance(precision, str):
        return _LABELS[precision]
    return f"{precision} decimal" + ("" if precision == 1 else "s")


def coarsen(scores: ArrayLike, precision: str | int) -> np.ndarray:
    """Scores as float64 after rounding them to a lower precision.

    Parameters
    ----------
    scores : array_like
        Numbers, any shape.
    precision : str or int
        ``"fp32"``, ``"bf16"``, ``"fp16"`` (or a name :func:`parse_precision`
        accepts), or a number of decimals from 0 to 15; rounding is to the
        nearest value, half to even (see the module's description).

    Returns
    -------
    numpy.ndarray
        float64, the shape of ``scores``.  Coarsening never separates equal
        scores, and coarsening again changes nothing.

    Raises
    ------
    InputError
        An unknown precision, scores that are not numbers, or finite scores
        beyond the largest value the precision holds (they would be infinite).

    Examples
    --------
    >>> coarsen([1 + 2**-8, 1 + 3 * 2**-8, 0.1], "bf16").tolist()
    [1.0, 1.015625, 0.10009765625]
    >>> coarsen([0.1, 2049.0], "fp16").tolist()
    [0.0999755859375, 2048.0]
    >>> coarsen([4.35, 0.125, 0.375, -2.5], 1).tolist(), coarsen([0.125, 2.5], 2).tolist()
    ([4.3, 0.1, 0.4, -2.5], [0.12, 2.5])
    >>> coarsen([1e5, 7e4, 2.0], "fp16")
    Traceback (most recent call last):
    ...
    tiecore.errors.InputError: scores: 2 of 3 scores are too large for float16, which would make them infinite (expected scores between -65504 and 65504, the largest finite float16)
    """  # noqa: E501
    precision = _canonical(precision)
    try:
        x = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("scores", None, "the scores are not all numbers", "numbers") from None
    except OverflowError:  # a Python int beyond float64
        raise InputError(
            "scores", None, "a score is too large for a 64-bit float", "numbers below 1.8e308"
        ) from None
    if isinstance(precision, int):
        return _decimals(x, precision)
    with np.errstate(over="ignore"):  # beyond the range -> inf, reported below
        if precision == "fp16":
            out = x.astype(np.float16).astype(np.float64)
        elif precision == "fp32":
            out = x.astype(np.float32).astype(np.float64)
        else:
            out = _bfloat16(x.astype(np.float32))
    overflow = np.isinf(out) & np.isfinite(x)
    if overflow.any():
        largest = f"{_LARGEST[precision]:.5g}"
        label = _LABELS[precision]
        raise InputError(
            "scores",
            None,
            f"{int(overflow.sum())} of {x.size} scores are too large for {label}, "
            "which would make them infinite",
            f"scores between -{largest} and {largest}, the largest finite {label}",
        )
    return out


def _bfloat16(x32: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (top 16 bits, half to even), as float64.

    Adding ``0x7FFF`` plus the lowest kept bit carries into the kept bits exactly
    when the dropped half is above one half, or one half with the kept part odd.
    A carry out of the significand raises the exponent (to infinity past the
    largest finite value).  NaN is set apart: its payload could carry into the
    sign or clear to infinity.
    """
    bits = x32.view(np.uint32)
    lowest_kept = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lowest_kept) & np.uint32(0xFFFF0000)
    out = rounded.view(np.float32).astype(np.float64)
    out[np.isnan(x32)] = np.nan
    return out


def _decimals(x: np.ndarray, k: int) -> np.ndarray:
    """``x`` rounded half to even to ``k`` decimals of its exact value, as float64.

    ``y = x * 10**k`` is computed exactly as ``hi + lo`` (Dekker's product,
    with Veltkamp's split; ``10**k`` is exact for ``k <= 22``).  ``rint(hi)``
    is the right integer ``n`` unless ``hi`` lies exactly halfway, where the
    sign of ``lo`` decides; the result is ``n / 10**k`` correctly rounded.
    Where ``x``'s own spacing is at least ``10**-k``, ``x`` is the double
    nearest any ``k``-decimal value within half a unit of it, so ``x`` stays.
    """
    scale = 10.0**k
    with np.errstate(over="ignore", invalid="ignore"):
        hi = x * scale
        c = _SPLIT * x
        x_hi = c - (c - x)
        x_lo = x - x_hi
        c = _SPLIT * scale
        s_hi = c - (c - scale)
        s_lo = scale - s_hi
        lo = ((x_hi * s_hi - hi) + x_hi * s_lo + x_lo * s_hi) + x_lo * s_lo
        n = np.rint(hi)
        half = hi - n
        n = np.where((half == 0.5) & (lo > 0), n + 1, n)  # np.where keeps -0.0
        n = np.where((half == -0.5) & (lo < 0), n - 1, n)
        coarse = np.spacing(np.abs(x)) >= 10.0**-k
        return np.where(coarse, x, n / scale)


def coarsen_run(run: pd.DataFrame, precision: str | int) -> pd.DataFrame:
    """A copy of a run frame with its scores coarsened (:func:`coarsen`).

    Parameters
    ----------
    run : pandas.DataFrame
        A run frame: columns ``qid``, ``docno`` and ``score`` (finite), as
        :func:`tiecore.read_run` gives; other columns are kept.
    precision : str or int
        As in :func:`coarsen`.

    Returns
    -------
    pandas.DataFrame
        A new frame, same index, columns and ``attrs``; ``score`` is float64.

    Raises
    ------
    InputError
        A run frame tiecore does not accept (:func:`tiecore.io.frames.check_run`),
        or the errors of :func:`coarsen`.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [0.1, 0.10001]})
    >>> coarsen_run(run, "bf16")["score"].tolist()
    [0.10009765625, 0.10009765625]
    """
    precision = _canonical(precision)
    checked = check_run(run)
    out = checked.copy(deep=False)  # a Run, with the run's fields
    out["score"] = coarsen(checked["score"].to_numpy(), precision)
    out.mark_checked(checked.checked_ids())  # ids unchanged: checked
    return out

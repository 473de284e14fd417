"""The tie effect in the units a paper prints: one row per run and measure, its flags and base rate.

:func:`modes_table` scores every run by every measure tie-oblivious (one
tie-break), tie-aware (the exact mean over all orderings) and, optionally,
sampled; beside them the exact standard deviation of the run's mean over random
tie-breaks (the *tie sd*, from :func:`tiecore.spread.evaluate_spread`) and the
min and max over all orderings (:func:`combine_modes`).  ``delta = oblivious -
aware`` is how far the one tie-break moved the reported number, in the measure's
own units, and ``z = delta / tie_sd`` the same in units of the tie noise.  A value
is flagged when the shift shows at the decimals a paper prints *and* exceeds 2 tie
sd; :func:`expected_flags` says how many flags random tie-breaking alone would
raise (the base rate), :func:`flag_verdict` whether a count stands out from it,
:func:`effect_sentence` says one effect in words.  pandas loads on first use.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tiecore.errors import TieCoreWarning
from tiecore.options import REPORT, pick, validate_params

if TYPE_CHECKING:
    import pandas as pd


#: ``|z|`` beyond this (and a shift that shows when printed) is flagged: the tie-break
#: moved the value by more than 2 tie sd.
FLAG_Z = 2.0
#: Decimals a paper prints by default (trec_eval prints 4).
PRINTED_DIGITS = 4
#: Differences below this are float noise (sums in another order), shown as 0.
NOISE = 1e-12
#: Columns of :func:`modes_table`.
COLUMNS = (
    "run",
    "measure",
    "oblivious",
    "aware",
    "tie_sd",
    "min",
    "max",
    "sampled",
    "sampled_sd",
    "delta",
    "z",
    "position",
    "visible",
    "flagged",
)


#: An undefined value in a table: an em dash (LaTeX types it ``---``).
MISSING = "—"


def fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals; :data:`MISSING` when undefined; a value that
    rounds to zero is ``0.0000``, never ``-0.0000``.

    Examples
    --------
    >>> fixed(-1e-9, 4), fixed(-0.0, 2), fixed(-0.00006, 4), fixed(float("nan"), 4)
    ('0.0000', '0.00', '-0.0001', '—')
    """
    if value is None or not np.isfinite(value):
        return MISSING
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def quietly(function, *args, **kwargs):
    """Call ``function`` with tiecore's warnings (queries skipped, ...) silenced: the
    caller shows what the evaluation found in its own words."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        return function(*args, **kwargs)


def printed(values: np.ndarray | Sequence[float], digits: int = PRINTED_DIGITS) -> np.ndarray:
    """``values`` as a paper prints them: ``digits`` decimals, as C's and Python's ``%f`` do.

    The decimal is that of the double's exact binary value (trec_eval's ``printf``
    and Python's ``format`` agree), so comparing these strings asks whether two
    numbers *look* different in a table.  ``-0.0000`` is written ``0.0000`` (a
    rounding residue below zero is no other number); NaN is ``nan``.

    Examples
    --------
    >>> printed([0.26799999999999996, -1e-17, 0.5], 4).tolist()
    ['0.2680', '0.0000', '0.5000']
    """
    fmt = f"%.{int(digits)}f"
    out = np.char.mod(fmt, np.asarray(values, np.float64))
    zero = fmt % 0.0
    out[out == "-" + zero] = zero
    return out


def _visible(oblivious: np.ndarray, aware: np.ndarray, delta: np.ndarray, digits: int):
    """Where the shift shows at ``digits`` decimals: a real shift (``delta != 0``; below
    :data:`NOISE` it is summation-order noise, which can straddle a rounding boundary
    without being a shift) whose two values print differently."""
    real = np.isfinite(delta) & (delta != 0)
    return real & (printed(oblivious, digits) != printed(aware, digits))


@validate_params(pick(REPORT, "digits"))
def combine_modes(
    oblivious: pd.DataFrame,
    aware_spread: pd.DataFrame,
    sampled: pd.DataFrame | None = None,
    digits: int = PRINTED_DIGITS,
) -> pd.DataFrame:
    """Merge the modes' summary rows (``qid`` NA) into one row per run and measure,
    with the tie effect.

    Parameters
    ----------
    oblivious : DataFrame
        :func:`tiecore.evaluate` output (``run, qid, measure, value``), oblivious.
    aware_spread : DataFrame
        :func:`tiecore.spread.evaluate_spread` output (``value`` is the aware value).
    sampled : DataFrame, optional
        :func:`tiecore.evaluate` output in sampled mode (``value, std``).
    digits : int
        Decimals a paper prints (trec_eval prints 4): a shift that does not show at
        them is not flagged.

    Returns
    -------
    DataFrame
        :data:`COLUMNS`: ``tie_sd = sqrt(var)``; ``delta = oblivious - aware``,
        the absolute shift (0 below :data:`NOISE`);
        ``z = delta / tie_sd``: 0 when both are 0 (every ordering gives one
        value), +-inf when only the tie sd is 0 (then the tie-break compared
        scores as float32, as trec_eval 9 does, and tied scores that differ as
        doubles: no ordering of the tie-aware groups gives its value);
        ``position = (oblivious - min) / (max - min)`` (NaN when ``min ==
        max``); ``visible``: the shift shows at ``digits`` decimals
        (``delta != 0`` and the two values :func:`printed` differ);
        ``flagged = visible & (|z| > 2)`` (a float32 shift, ``z = +-inf``,
        counts when visible).

    Examples
    --------
    >>> import pandas as pd
    >>> keys = {"run": ["x"], "qid": [None], "measure": ["P@1"]}
    >>> obl = pd.DataFrame({**keys, "value": [1.0]})
    >>> spr = pd.DataFrame({**keys, "value": [0.5], "var": [0.25], "min": [0.0], "max": [1.0]})
    >>> combine_modes(obl, spr)[["delta", "tie_sd", "z", "position", "visible", "flagged"]]
       delta  tie_sd    z  position  visible  flagged
    0    0.5     0.5  1.0       1.0     True    False
    >>> flat = spr.assign(value=1.0, var=0.0, min=1.0, max=1.0)  # no tie in float64
    >>> combine_modes(obl.assign(value=0.5), flat)[["z", "visible", "flagged"]]  # but float32
         z  visible  flagged
    0 -inf     True     True
    >>> tiny = spr.assign(value=0.38921, var=1e-10)  # 3 tie sd, but both print 0.3892
    >>> combine_modes(obl.assign(value=0.38924), tiny)[["z", "visible", "flagged"]].round(1)
         z  visible  flagged
    0  3.0    False    False
    """
    table = _merged(oblivious, aware_spread, sampled)
    table["tie_sd"] = np.sqrt(np.maximum(table.pop("var").to_numpy(np.float64), 0.0))
    obl = table["oblivious"].to_numpy(np.float64)
    aware = table["aware"].to_numpy(np.float64)
    delta = obl - aware
    delta[np.abs(delta) < NOISE] = 0.0  # summation-order noise, not a tie effect
    sd = table["tie_sd"].to_numpy(np.float64)
    z = np.copysign(np.inf, delta)  # no tie sd: a shift beyond every ordering, or none
    np.divide(delta, sd, out=z, where=sd > 0)
    z[(sd <= 0) & (delta == 0)] = 0.0
    table["delta"] = delta
    table["z"] = z
    table["position"] = _position(table)
    table["visible"] = _visible(obl, aware, delta, digits)
    table["flagged"] = table["visible"] & (np.abs(z) > FLAG_Z)
    return table[list(COLUMNS)].reset_index(drop=True)


def _merged(
    oblivious: pd.DataFrame, aware_spread: pd.DataFrame, sampled: pd.DataFrame | None
) -> pd.DataFrame:
    """The modes' summary rows (``qid`` NA) side by side, one row per run and measure:
    ``aware, var, min, max`` (as ``aware_spread`` has them), ``oblivious``, ``sampled``
    and ``sampled_sd`` (NaN without ``sampled``)."""
    keys = ["run", "measure"]

    def overall(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["qid"].isna()] if "qid" in frame else frame

    table = overall(aware_spread)[[*keys, "value", "var", "min", "max"]].rename(
        columns={"value": "aware"}
    )
    table = table.merge(
        overall(oblivious)[[*keys, "value"]].rename(columns={"value": "oblivious"}),
        on=keys,
        how="left",
    )
    if sampled is not None:
        part = overall(sampled)[[*keys, "value", "std"]]
        table = table.merge(
            part.rename(columns={"value": "sampled", "std": "sampled_sd"}), on=keys, how="left"
        )
    else:
        table["sampled"] = np.nan
        table["sampled_sd"] = np.nan
    return table


def _position(table: pd.DataFrame) -> np.ndarray:
    """Where the oblivious value lies between the min and max over all orderings:
    ``(oblivious - min) / (max - min)``, clipped to [0, 1]; NaN when ``min == max``."""
    width = (table["max"] - table["min"]).to_numpy(np.float64)
    position = np.full(len(table), np.nan)
    np.divide(
        (table["oblivious"] - table["min"]).to_numpy(np.float64),
        width,
        out=position,
        where=width > 0,
    )
    return np.clip(position, 0.0, 1.0)


@validate_params(pick(REPORT, "digits"))
def expected_flags(table: pd.DataFrame, digits: int = PRINTED_DIGITS) -> float:
    """How many of ``table``'s values random tie-breaking alone would flag: the base rate.

    Were the oblivious value one uniformly random tie-break instead of a fixed
    rule, it would be ``X = mean over queries`` of independent per-query
    tie-breaks, with mean ``aware`` and sd ``tie_sd`` (both exact).  A mean over
    many independent queries is close to normal (central limit theorem), so
    ``X ~ Normal(aware, tie_sd^2)``; with few tied queries this is an
    approximation (the true ``X`` is discrete).  :func:`combine_modes` flags
    ``X`` when it prints differently from ``aware`` at ``digits`` decimals (it
    leaves the rounding cell ``[c - h, c + h]`` of ``c``, ``aware`` as printed,
    ``h = 10^-digits / 2``) and ``|X - aware| > 2 tie_sd``, so per row

    ``P = Phi((min(c - h, aware - 2 sd) - aware) / sd)
    + 1 - Phi((max(c + h, aware + 2 sd) - aware) / sd)``,

    summed over the rows with ``tie_sd > 0`` (rows without tie noise give 0).
    Without rounding (``h -> 0``) each row gives ``2 (1 - Phi(2)) = 0.0455``.

    Parameters
    ----------
    table : DataFrame
        :func:`combine_modes` or :func:`modes_table` output (``aware, tie_sd``).
    digits : int
        The decimals of :func:`combine_modes`'s ``visible``.

    Returns
    -------
    float
        The expected number of flagged values.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"aware": [0.3, 0.3, 0.5], "tie_sd": [0.01, 1e-5, 0.0]})
    >>> round(expected_flags(table, 4), 4)  # 0.0455 + (2 sd = 2e-5 < the cell's 5e-5) + 0
    0.0455
    >>> round(expected_flags(table, 12), 4)  # no rounding: 2 x 0.0455
    0.091
    """
    from scipy.special import ndtr  # Phi; scipy.stats.norm costs a 0.5 s import on a page

    aware = table["aware"].to_numpy(np.float64)
    sd = table["tie_sd"].to_numpy(np.float64)
    noisy = np.isfinite(aware) & np.isfinite(sd) & (sd > 0)
    a, s = aware[noisy], sd[noisy]
    if not a.size:
        return 0.0
    center = printed(a, digits).astype(np.float64)
    half = 0.5 * 10.0 ** -float(digits)
    lower = np.minimum(center - half, a - FLAG_Z * s)
    upper = np.maximum(center + half, a + FLAG_Z * s)
    return float((ndtr((lower - a) / s) + ndtr((a - upper) / s)).sum())


@validate_params(pick(REPORT, "tiebreak", "samples", "seed", "rel_level", "depth", "digits"))
def modes_table(
    runs: Mapping[str, pd.DataFrame] | pd.DataFrame,
    qrels: pd.DataFrame,
    measures: str | Sequence[str],
    *,
    tiebreak: str = "trec_eval",
    samples: int | None = None,
    seed: int = 0,
    rel_level: int = 1,
    depth: int | None = None,
    digits: int = PRINTED_DIGITS,
) -> pd.DataFrame:
    """Every run and measure in the three modes with the exact tie sd (see :func:`combine_modes`).

    ``samples=None`` skips the sampled mode (its columns stay NaN); ``depth`` cuts
    every ranking first (trec_eval ``-M``); ``digits``: the decimals a paper prints
    (a shift that does not show at them is not flagged).

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["b"], "level": [1]})
    >>> modes_table({"x": run}, qrels, "P@1")[["oblivious", "aware", "tie_sd", "z"]]
       oblivious  aware  tie_sd    z
    0        1.0    0.5     0.5  1.0
    """
    from tiecore.evaluation.core import evaluate  # lazy: pandas (~0.5 s); effects is light
    from tiecore.spread import evaluate_spread  # lazy: pandas, scipy

    measures = [measures] if isinstance(measures, str) else list(measures)
    oblivious = quietly(
        evaluate,
        runs,
        qrels,
        measures,
        ties="oblivious",
        tiebreak=tiebreak,
        seed=seed,
        rel_level=rel_level,
        depth=depth,
    )
    spread = quietly(evaluate_spread, runs, qrels, measures, rel_level=rel_level, depth=depth)
    sampled = None
    if samples is not None:
        sampled = quietly(
            evaluate,
            runs,
            qrels,
            measures,
            ties="sampled",
            samples=samples,
            seed=seed,
            rel_level=rel_level,
            depth=depth,
        )
    return combine_modes(oblivious, spread, sampled, digits)


@validate_params(pick(REPORT, "digits"))
def format_value(value: float, digits: int = 4) -> str:
    """``0.2680`` for a number, ``—`` for NaN or None.

    Examples
    --------
    >>> format_value(0.26799999999999996), format_value(float("nan"))
    ('0.2680', '—')
    """
    try:
        return fixed(float(value), digits)
    except (TypeError, ValueError):
        return MISSING


def format_shift(delta: float, digits: int = PRINTED_DIGITS) -> str:
    """A signed shift in the measure's units: ``+0.0050`` at ``digits`` decimals; one that
    rounds to zero there keeps one significant digit (``-0.00002``), so it is not ``0``.

    Examples
    --------
    >>> format_shift(0.005), format_shift(-2.1e-5), format_shift(0.0), format_shift(None)
    ('+0.0050', '-0.00002', '0.0000', '—')
    >>> format_shift(-4.9e-5), format_shift(-0.0)
    ('-0.00005', '0.0000')
    """
    try:
        delta = float(delta)
    except (TypeError, ValueError):
        return MISSING
    if not math.isfinite(delta):
        return MISSING
    if delta == 0:
        return f"{0.0:.{digits}f}"
    text = f"{delta:+.{digits}f}"
    if float(text) != 0:  # (a shift just under half the last digit rounds to -0.0000)
        return text
    return np.format_float_positional(delta, precision=1, fractional=False, sign=True)


def format_points(change: float, digits: int = 1) -> str:
    """A change of a share (0-1) in percentage points: ``0.123`` -> ``+12.3 percentage
    points``, ``-0.004`` -> ``-0.4 percentage points``; one that rounds to zero is ``0.0``,
    never ``-0.0``; undefined ``—``.

    A share that goes from 10% to 22% grew by 12 percentage points (and by 120 percent);
    the percent sign alone would not say which.

    Examples
    --------
    >>> format_points(0.123), format_points(-0.004), format_points(-1e-6), format_points(1.0)
    ('+12.3 percentage points', '-0.4 percentage points', '0.0 percentage points', \
'+100.0 percentage points')
    """
    try:
        points = 100.0 * float(change)
    except (TypeError, ValueError):
        return MISSING
    if not math.isfinite(points):
        return MISSING
    text = f"{points:+.{digits}f}"
    if float(text) == 0:
        text = text[1:]
    return f"{text} percentage points"


def format_z(z: float) -> str:
    """A shift in tie sd as a table prints it: ``+2.94`` -> ``+2.94``; a shift beyond every
    ordering (no tie sd, :func:`combine_modes`) ``+∞``; undefined ``—``; never ``-0.00``.

    Examples
    --------
    >>> format_z(2.94), format_z(-0.001), format_z(float("inf")), format_z(float("nan"))
    ('+2.94', '+0.00', '+∞', '—')
    """
    try:
        z = float(z)
    except (TypeError, ValueError):
        return MISSING
    if math.isnan(z):
        return MISSING
    if math.isinf(z):
        return "+∞" if z > 0 else "−∞"
    text = f"{z:+.2f}"
    return "+0.00" if float(text) == 0 else text


def effect_sentence(row: Mapping, tiebreak: str = "trec_eval", digits: int = PRINTED_DIGITS) -> str:
    """``x P@10: trec_eval 0.2680 vs tie-aware 0.2630, a shift of +0.0050 (+2.9 tie sd)``.

    The absolute shift first (``delta``, else ``oblivious - aware``), in the units a
    paper prints; then the same in tie sd (``z``); a shift that does not show at
    ``digits`` decimals says so.

    Examples
    --------
    >>> effect_sentence({"run": "x", "measure": "P@10", "oblivious": 0.268, "aware": 0.263,
    ...                  "z": 2.94})
    'x P@10: trec_eval 0.2680 vs tie-aware 0.2630, a shift of +0.0050 (+2.9 tie sd)'
    >>> effect_sentence({"run": "y", "measure": "nDCG", "oblivious": 0.38918, "aware": 0.3892,
    ...                  "z": -1.8}).split(", ")[-1]
    'a shift of -0.00002 (-1.8 tie sd; both print as 0.3892)'
    """
    oblivious, aware = float(row["oblivious"]), float(row["aware"])
    delta = float(row["delta"]) if "delta" in row else oblivious - aware
    z = float(row["z"])
    if math.isfinite(z) and delta != 0:
        size = f"{z:+.1f} tie sd"
    elif math.isfinite(z):
        size = "no shift: every tie-break gives this value" if z == 0 else f"{z:+.1f} tie sd"
    elif math.isinf(z):  # (combine_modes)
        size = (
            "beyond every ordering of the tied documents: the tie-break compared the scores "
            "as float32 ties"
        )
    else:
        size = "no tie noise"
    shown = printed([oblivious, aware], digits)
    if delta != 0 and math.isfinite(delta) and shown[0] == shown[1]:
        size += f"; both print as {shown[0]}"
    return (
        f"{row['run']} {row['measure']}: {tiebreak} {format_value(oblivious, digits)} vs "
        f"tie-aware {format_value(aware, digits)}, a shift of {format_shift(delta, digits)} "
        f"({size})"
    )


def flag_verdict(flagged: int, expected: float) -> tuple[float, str]:
    """How surprising ``flagged`` flags are when random tie-breaking alone expects
    ``expected`` (:func:`expected_flags`), in plain words.

    The flags of random tie-breaks are independent rare events, so their count is
    close to Poisson with mean ``expected``; ``p = P(N >= flagged)`` is how often
    random tie-breaking alone would flag at least as many.

    Returns
    -------
    (float, str)
        ``p`` and a verdict: more than random tie-breaking explains (``p < 0.05``),
        fewer than it would give, or about as many.

    Examples
    --------
    >>> p, words = flag_verdict(12, 2.5)
    >>> p < 0.001, words
    (True, 'more than random tie-breaking explains: the fixed tie-break itself shifts them')
    >>> flag_verdict(3, 2.5)[1]
    'about what random tie-breaking alone gives: these flags may be chance'
    """
    from scipy.special import pdtr, pdtrc  # Poisson cdf and sf, without scipy.stats' import

    flagged = int(flagged)
    p = float(pdtrc(flagged - 1, expected)) if flagged > 0 else 1.0  # P(N >= flagged)
    if p < 0.05:
        return p, "more than random tie-breaking explains: the fixed tie-break itself shifts them"
    if flagged < expected and float(pdtr(flagged, expected)) < 0.05:  # P(N <= flagged)
        return p, (
            "fewer than random tie-breaking alone would give: no sign that the fixed tie-break "
            "favours or hurts these values beyond chance"
        )
    return p, "about what random tie-breaking alone gives: these flags may be chance"


def flag_counts(table: pd.DataFrame) -> dict[str, int]:
    """The counts that reconcile "N values change as printed" with "M flagged".

    A value of :func:`modes_table` is *visible* when its shift shows at the decimals a
    paper prints and *flagged* when, besides, it exceeds :data:`FLAG_Z` tie sd; every
    flagged value is visible, so ``visible = flagged + within_noise``.

    Returns
    -------
    dict
        ``values`` (rows), ``with_noise`` (``tie_sd > 0``), ``visible``, ``flagged`` and
        ``within_noise`` (visible but within 2 tie sd: a shift random tie-breaking alone
        gives often).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"tie_sd": [0.0, 0.1, 0.1, 0.2], "visible": [False, True, True, False],
    ...                   "flagged": [False, True, False, False]})
    >>> flag_counts(t)
    {'values': 4, 'with_noise': 3, 'visible': 2, 'flagged': 1, 'within_noise': 1}
    """
    visible = table["visible"].fillna(False).to_numpy(bool)
    flagged = table["flagged"].fillna(False).to_numpy(bool) & visible
    return {
        "values": len(table),
        "with_noise": int((table["tie_sd"].fillna(0).to_numpy(np.float64) > 0).sum()),
        "visible": int(visible.sum()),
        "flagged": int(flagged.sum()),
        "within_noise": int((visible & ~flagged).sum()),
    }


def reconcile_sentence(counts: Mapping[str, int], digits: int = PRINTED_DIGITS) -> str:
    """:func:`flag_counts` in plain words: how many values change as printed, and how many of
    those are flagged (beyond 2 tie sd) or within the tie noise.

    Examples
    --------
    >>> reconcile_sentence({"values": 45, "visible": 17, "flagged": 0, "within_noise": 17})
    ... # doctest: +NORMALIZE_WHITESPACE
    '17 of 45 values change at 4 decimals; none of them moved by more than 2 tie sd
    (flagged): all 17 are within what random tie-breaking alone gives.'
    >>> reconcile_sentence({"values": 45, "visible": 5, "flagged": 2, "within_noise": 3}, 3)
    ... # doctest: +NORMALIZE_WHITESPACE
    '5 of 45 values change at 3 decimals; 2 of them moved by more than 2 tie sd (flagged),
    the other 3 are within what random tie-breaking alone gives.'
    """
    values, visible = int(counts["values"]), int(counts["visible"])
    flagged, within = int(counts["flagged"]), int(counts["within_noise"])
    if visible == 0:
        return f"None of the {values:,} values changes at {digits} decimals."
    head = f"{visible:,} of {values:,} values change at {digits} decimals"
    if flagged == 0:
        rest = (
            "none of them moved by more than 2 tie sd (flagged): "
            + ("it is" if visible == 1 else f"all {visible:,} are")
            + " within what random tie-breaking alone gives"
        )
    elif within == 0:
        rest = (
            "it moved" if visible == 1 else f"all {visible:,} moved"
        ) + " by more than 2 tie sd (flagged)"
    else:
        rest = (
            f"{flagged:,} of them moved by more than 2 tie sd (flagged), the other "
            f"{within:,} {'is' if within == 1 else 'are'} within what random tie-breaking "
            "alone gives"
        )
    return f"{head}; {rest}."


def largest_shift(table: pd.DataFrame) -> pd.Series | None:
    """The row of ``table`` with the largest ``|delta|`` (the shift a paper would print);
    the first such row on a tie, None for an empty table or one without a shift.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"measure": ["nDCG", "RR"], "delta": [0.0001, -0.0083],
    ...                   "z": [9.0, -1.5]})
    >>> largest_shift(t)["measure"]
    'RR'
    """
    if table.empty:
        return None
    size = table["delta"].abs().fillna(0.0).to_numpy(np.float64)
    if not (size > 0).any():
        return None
    return table.iloc[int(np.argmax(size))]

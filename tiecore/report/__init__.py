"""Results to take away: systems x measures in the three tie modes, as LaTeX, Markdown or CSV.

:func:`modes_table` scores every run by every measure tie-oblivious (one
tie-break), tie-aware (the exact mean over all orderings) and, optionally,
sampled; beside them the exact standard deviation of the run's mean over random
tie-breaks (the *tie sd*, from :func:`tiecore.spread.evaluate_spread`) and the
min and max over all orderings.  ``delta = oblivious - aware`` is how far the one
tie-break moved the reported number, in the measure's own units (what a paper
prints), and ``z = delta / tie_sd`` the same in units of the tie noise.  A value
is flagged when the shift shows at the decimals a paper prints *and* exceeds 2 tie
sd; :func:`expected_flags` says how many flags random tie-breaking alone would
raise (the base rate to hold the count against).  :func:`to_latex` (booktabs) and
:func:`to_markdown` print one column per measure, tie-aware ``± tie sd`` with
marks (the significance is :func:`significance_vs_best`: the Rankings page's paired
t-test and Holm correction); :func:`frame_to_latex` typesets any small table;
:func:`to_csv` writes any table with its provenance as ``#`` comment lines and
without float noise.  :func:`closest_pairs` lists the pairs of systems whose order
ties could decide.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tiecore.errors import InputError, TieCoreWarning
from tiecore.options import (
    CORRECTION,
    REPORT,
    pick,
    validate_params,
)
from tiecore.options import MODES as MODES  # the tie modes, declared there

#: ``|z|`` beyond this (and a shift that shows when printed) is flagged: the tie-break
#: moved the value by more than 2 tie sd.
FLAG_Z = 2.0
#: Decimals a paper prints by default (trec_eval prints 4).
PRINTED_DIGITS = 4
#: Differences below this are float noise (sums in another order), shown as 0.
NOISE = 1e-12
#: Significant digits kept in CSV output (float noise such as 0.26799999999999996 goes).
DIGITS = 12
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


def _quiet(function, *args, **kwargs):
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
    table["tie_sd"] = np.sqrt(np.maximum(table.pop("var").to_numpy(np.float64), 0.0))
    obl = table["oblivious"].to_numpy(np.float64)
    aware = table["aware"].to_numpy(np.float64)
    delta = obl - aware
    delta[np.abs(delta) < NOISE] = 0.0  # summation-order noise, not a tie effect
    sd = table["tie_sd"].to_numpy(np.float64)
    z = np.copysign(np.inf, delta)  # no tie sd: a shift beyond every ordering, or none
    np.divide(delta, sd, out=z, where=sd > 0)
    z[(sd <= 0) & (delta == 0)] = 0.0
    width = (table["max"] - table["min"]).to_numpy(np.float64)
    position = np.full(len(table), np.nan)
    np.divide(
        (table["oblivious"] - table["min"]).to_numpy(np.float64),
        width,
        out=position,
        where=width > 0,
    )
    table["delta"] = delta
    table["z"] = z
    table["position"] = np.clip(position, 0.0, 1.0)
    table["visible"] = _visible(obl, aware, delta, digits)
    table["flagged"] = table["visible"] & (np.abs(z) > FLAG_Z)
    return table[list(COLUMNS)].reset_index(drop=True)


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
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["b"], "level": [1]})
    >>> modes_table({"x": run}, qrels, "P@1")[["oblivious", "aware", "tie_sd", "z"]]
       oblivious  aware  tie_sd    z
    0        1.0    0.5     0.5  1.0
    """
    from tiecore.evaluation.core import evaluate
    from tiecore.spread import evaluate_spread

    measures = [measures] if isinstance(measures, str) else list(measures)
    oblivious = _quiet(
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
    spread = _quiet(evaluate_spread, runs, qrels, measures, rel_level=rel_level, depth=depth)
    sampled = None
    if samples is not None:
        sampled = _quiet(
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


#: What the significance marks mean, per correction (the legends' words).
CORRECTION_NAMES = {
    "holm": "Holm-corrected",
    "bonferroni": "Bonferroni-corrected",
    "bh": "Benjamini-Hochberg-corrected",
    "none": "uncorrected",
}


@validate_params({**pick(REPORT, "alpha"), "correction": CORRECTION})
def significance_vs_best(
    per_query: pd.DataFrame, alpha: float = 0.05, correction: str = "holm"
) -> pd.DataFrame:
    """Per measure, is every run significantly below the best run (tie-aware values)?

    The test and correction of the Rankings page and ``tiecore compare`` by
    default, so a star here and a significant pair there are one verdict: a
    paired t-test (:func:`tiecore.stats.paired.paired_t`) on the per-query values of
    the queries both runs have, ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n -
    1`` degrees of freedom, for every unordered pair of the measure's runs; the
    p-values are corrected over those pairs by
    :func:`tiecore.stats.corrections.adjust_pvalues` (Holm by default); the rows are the
    pairs of each run with the best.

    Parameters
    ----------
    per_query : DataFrame
        :func:`tiecore.evaluate` output with ``per_query=True`` (tie-aware).
    alpha : float
        Significance level of the corrected p-value.
    correction : {"holm", "bonferroni", "bh", "none"}
        The multiple-comparison correction over a measure's pairs.

    Returns
    -------
    DataFrame
        ``run, measure, best, p_value, p_value_adj, significant``: ``best`` is
        the run with the highest mean (over its own queries: runs that retrieved
        for different queries are warned of); ``p_value`` is NaN for the best
        run itself, with fewer than two shared queries, or when the differences
        do not vary (their sd at most :data:`tiecore.stats.ranks.RTOL` times the
        largest ``|value|``, as ``tiecore compare`` decides, so rounding noise
        in a constant difference is no significance), and at least
        :data:`tiecore.stats.SMALLEST_P`; ``significant = p_value_adj <
        alpha``.  ``attrs["correction"]`` names the correction.

    Examples
    --------
    >>> rows = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "qid": ["1", "2", "3"] * 2,
    ...                      "measure": "AP", "value": [0.9, 0.8, 0.7, 0.1, 0.2, 0.2]})
    >>> significance_vs_best(rows)[["run", "best", "significant"]]
      run best  significant
    0   a    a        False
    1   b    a         True
    """
    from tiecore.stats.corrections import adjust_pvalues
    from tiecore.stats.paired import paired_t, warn_unequal_queries

    rows = per_query[per_query["qid"].notna()]
    if len(rows):  # the runs' query sets (the same under every measure)
        first = rows[rows["measure"] == rows["measure"].iloc[0]]
        present = first.pivot(index="qid", columns="run", values="value").notna()
        warn_unequal_queries(list(present.columns), present.to_numpy().T, stacklevel=3)
    out = []
    for measure, part in rows.groupby("measure", sort=False):
        wide = part.pivot(index="qid", columns="run", values="value")
        order = list(dict.fromkeys(part["run"]))
        means = wide.mean()
        best = str(means.idxmax()) if len(means) else None
        i, j = np.triu_indices(wide.shape[1], 1)
        p = paired_t(wide.to_numpy(np.float64), i, j)[0]
        adjusted = adjust_pvalues(p, correction)
        at = wide.columns.get_loc(best) if best is not None else -1
        with_best = {}
        for k in np.flatnonzero((i == at) | (j == at)):
            other = wide.columns[j[k] if i[k] == at else i[k]]
            with_best[other] = (p[k], adjusted[k])
        for run in order:
            found = with_best.get(run, (np.nan, np.nan))
            out.append({"run": run, "measure": measure, "best": best, "p_value": found[0],
                        "p_value_adj": found[1]})  # fmt: skip
    columns = ["run", "measure", "best", "p_value", "p_value_adj"]
    table = pd.DataFrame(out, columns=columns)
    table["significant"] = table["p_value_adj"] < alpha
    table.attrs["correction"] = correction
    return table


# ----------------------------------------------------------------------------- formatting


#: An undefined value in a table: an em dash (LaTeX types it ``---``).
MISSING = "—"


def _fmt(value: float, digits: int) -> str:
    return MISSING if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _best(aware: pd.Series) -> set:
    """The runs whose tie-aware value is the largest, every one of them when several tie
    (within :data:`tiecore.stats.ranks.RTOL`): bolding one of equal values would rank them.

    >>> sorted(_best(pd.Series([0.5, 0.75, 0.25 + 0.5], index=["a", "b", "c"])))
    ['b', 'c']
    """
    from tiecore.stats.ranks import RTOL

    top = aware.max()
    if not np.isfinite(top):
        return set()
    return set(aware.index[aware >= top - RTOL * abs(top)])


def _chosen(table: pd.DataFrame, measures: str | Sequence[str] | None) -> list[str]:
    """The measures to print, in the order asked (all of the table's by default)."""
    present = list(dict.fromkeys(table["measure"]))
    if measures is None:
        return present
    asked = [measures] if isinstance(measures, str) else list(measures)
    missing = [m for m in asked if m not in present]
    if missing or not asked:
        raise InputError(
            "measures",
            asked,
            f"not in the table: {', '.join(map(str, missing))}" if missing else "none named",
            f"some of {', '.join(present)}",
        )
    return list(dict.fromkeys(asked))


def _cells(
    table: pd.DataFrame,
    significance: pd.DataFrame | None,
    digits: int,
    latex: bool,
    measures: list[str],
) -> list[list[str]]:
    """Rows of formatted cells: the system, then per measure ``aware ± tie sd`` and marks
    (bold: best; ``*``: significantly below it; ``†``: the tie-break's value flagged)."""
    runs = list(dict.fromkeys(table["run"]))
    indexed = table.set_index(["run", "measure"])
    marks = (
        significance.set_index(["run", "measure"])["significant"]
        if significance is not None
        else pd.Series(dtype=bool)
    )
    pm = r" $\pm$ " if latex else " ± "
    best = {m: _best(indexed.xs(m, level="measure")["aware"]) for m in measures}
    rows = []
    for run in runs:
        cells = [run]
        for measure in measures:
            if (run, measure) not in indexed.index:
                cells.append("---" if latex else MISSING)
                continue
            row = indexed.loc[(run, measure)]
            aware = _fmt(row["aware"], digits) + pm + _fmt(row["tie_sd"], digits)
            if run in best[measure]:
                aware = rf"\textbf{{{aware}}}" if latex else f"**{aware}**"
            mark = "*" if bool(marks.get((run, measure), False)) else ""
            if row["flagged"]:
                mark += r"\dag" if latex else "†"
            if mark:
                aware += rf"\textsuperscript{{{mark}}}" if latex else mark
            cells.append(aware.replace("—", "---") if latex else aware)
        rows.append(cells)
    return rows


def _legend(tiebreak: str, alpha: float, digits: int, correction: str | None, latex: bool) -> str:
    """What the cells and marks mean; the significance sentence only when marks are given."""
    pm = r"$\pm$" if latex else "±"
    name = _latex_escape(tiebreak) if latex else tiebreak
    dag = r"\dag" if latex else "†"
    text = (
        f"Tie-aware value: the exact mean over all orderings of tied documents {pm} its exact "
        f"standard deviation over random tie-breaks (tie sd). {dag}: the value reported under "
        f"one tie-break ({name}) differs from it at {digits} decimals by more than "
        f"{FLAG_Z:g} tie sd. Bold: best tie-aware value"
    )
    if correction is None:
        return text + "."
    less = "$<$" if latex else "<"
    return (
        text + f"; *: significantly below it (paired t-test vs the best system, "
        f"{CORRECTION_NAMES[correction]} over all pairs of systems, p {less} {alpha:g}; "
        f"on tie-aware per-query values)."
    )


def _correction(significance: pd.DataFrame | None) -> str | None:
    if significance is None:
        return None
    return str(significance.attrs.get("correction", "holm"))


#: The packages the LaTeX tables need, said in a comment line above them.
_LATEX_NEEDS = "% needs \\usepackage{booktabs}"
_RESIZE_NEEDS = " and \\usepackage{graphicx} (\\resizebox)"


def _table_lines(
    spec: str,
    head: list[str],
    body: list[list[str]],
    caption: str,
    *,
    label: str | None,
    provenance: Mapping[str, object] | None,
    resize: bool,
) -> str:
    """A booktabs ``table`` environment around already typeset cells."""
    lines = [f"% {k}: {v}" for k, v in (provenance or {}).items()]
    lines.append(_LATEX_NEEDS + (_RESIZE_NEEDS if resize else ""))
    lines += [r"\begin{table}", r"\centering"]
    if resize:  # shrinks (or widens) the table to the column's width
        lines.append(r"\resizebox{\columnwidth}{!}{%")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(head) + r" \\"]
    lines.append(r"\midrule")
    lines += [" & ".join(cells) + r" \\" for cells in body]
    lines += [r"\bottomrule", r"\end{tabular}" + ("%" if resize else "")]
    if resize:
        lines.append("}")
    lines.append(rf"\caption{{{caption}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


@validate_params(pick(REPORT, "digits", "tiebreak", "alpha"))
def to_latex(
    table: pd.DataFrame,
    significance: pd.DataFrame | None = None,
    *,
    digits: int = 4,
    tiebreak: str = "trec_eval",
    alpha: float = 0.05,
    caption: str | None = None,
    provenance: Mapping[str, object] | None = None,
    measures: str | Sequence[str] | None = None,
    resize: bool = True,
) -> str:
    r"""A booktabs table a paper can use: one row per system, one column per measure.

    Each cell is the tie-aware value ± tie sd, bold for the best system, ``*``
    where :func:`significance_vs_best` finds a system significantly below it,
    ``†`` where :func:`combine_modes` flagged the tie-break's value; the caption
    (unless given) says what each mark means, including the test and correction.

    Parameters
    ----------
    table : DataFrame
        :func:`modes_table` (or :func:`combine_modes`) output.
    significance : DataFrame, optional
        :func:`significance_vs_best` output; without it no ``*`` marks.
    measures : str or sequence of str, optional
        The measures to print, in this order (default: all of the table's).
    resize : bool
        Wrap the tabular in ``\resizebox{\columnwidth}{!}{...}`` (needs the
        graphicx package), so that it fits a column however many measures.

    Examples
    --------
    >>> keys = {"run": ["x"], "qid": [None], "measure": ["P@1"]}
    >>> obl = pd.DataFrame({**keys, "value": [1.0]})
    >>> spr = pd.DataFrame({**keys, "value": [0.5], "var": [0.25], "min": [0.0], "max": [1.0]})
    >>> print("\n".join(to_latex(combine_modes(obl, spr), resize=False).splitlines()[3:8]))
    \begin{tabular}{lr}
    \toprule
    System & P@1 \\
    \midrule
    x & \textbf{0.5000 $\pm$ 0.5000} \\
    """
    chosen = _chosen(table, measures)
    rows = _cells(table, significance, digits, True, chosen)
    body = [[_latex_escape(cells[0]), *cells[1:]] for cells in rows]
    head = ["System", *(_latex_escape(m) for m in chosen)]
    text = caption or _legend(tiebreak, alpha, digits, _correction(significance), latex=True)
    spec = "l" + "r" * len(chosen)
    return _table_lines(spec, head, body, text, label=None, provenance=provenance, resize=resize)


def frame_to_latex(
    frame: pd.DataFrame,
    *,
    caption: str,
    label: str | None = None,
    provenance: Mapping | None = None,
    resize: bool = True,
) -> str:
    r"""Any small table (rankings, swaps, pairs) as a booktabs LaTeX table.

    Text (column names, cells, the caption) is escaped to typeset as itself;
    integers print as integers, other numbers with 4 decimals, p-values (columns
    whose name holds ``pvalue``, ``p_value``, ``p-value`` or ``p value``) by
    :func:`format_pvalue` (``$<$ 0.001`` below 0.001), booleans as yes/no and
    undefined values (NaN, None) as an em dash (``---``).  A named index (or a
    MultiIndex) becomes leading columns.  Numeric columns are right-aligned.

    Parameters
    ----------
    frame : DataFrame
        The table as shown.
    caption : str
        Plain text (escaped).
    label : str, optional
        A ``\label`` key.
    provenance : mapping, optional
        Settings behind it, written as ``%`` comment lines first.
    resize : bool
        Wrap the tabular in ``\resizebox{\columnwidth}{!}{...}`` (needs graphicx).

    Examples
    --------
    >>> frame = pd.DataFrame({"run_a": ["x&y"], "rank": [2], "mean": [0.25], "t_pvalue": [1e-5],
    ...                       "p_beats": [float("nan")]})
    >>> print("\n".join(frame_to_latex(frame, caption="Runs", resize=False).splitlines()[3:9]))
    \begin{tabular}{lrrrr}
    \toprule
    run\_a & rank & mean & t\_pvalue & p\_beats \\
    \midrule
    x\&y & 2 & 0.2500 & $<$ 0.001 & --- \\
    \bottomrule
    """
    if frame.index.name is not None or isinstance(frame.index, pd.MultiIndex):
        frame = frame.reset_index()
    spec, columns = "", []
    for name in frame.columns:
        column = frame[name]
        numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
        spec += "r" if numeric else "l"
        columns.append([_latex_cell(v, _is_pvalue(str(name))) for v in column.tolist()])
    head = [_latex_escape(str(name)) for name in frame.columns]
    body = [list(cells) for cells in zip(*columns, strict=True)] if columns else []
    return _table_lines(
        spec or "l",
        head,
        body,
        _latex_escape(caption),
        label=label,
        provenance=provenance,
        resize=resize,
    )


_PVALUE_NAME = re.compile(r"p[ _-]?value", re.IGNORECASE)


def _is_pvalue(name: str) -> bool:
    return bool(_PVALUE_NAME.search(name))


def _latex_cell(value: object, pvalue: bool) -> str:
    """One cell of :func:`frame_to_latex`."""
    if value is None or (isinstance(value, float | np.floating) and not np.isfinite(value)):
        return "---" if value is None or np.isnan(value) else f"${'-' if value < 0 else ''}\\infty$"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        if pvalue:
            return format_pvalue(float(value)).replace("<", "$<$").replace(MISSING, "---")
        return f"{float(value):.4f}"
    if value is pd.NA or value is pd.NaT:
        return "---"
    return _latex_escape(str(value))


def format_pvalue(value: float | None) -> str:
    """A p-value as pages and papers print it: ``< 0.001`` below 0.001, else 3 significant
    digits; ``—`` when undefined.

    (:func:`tiecore.report.comparison.format_pvalue` keeps the full resolution for the command
    line's text output; this one is for tables read by people.)

    Examples
    --------
    >>> [format_pvalue(p) for p in (0.0495, 0.5, 0.00012, float("nan"), None)]
    ['0.0495', '0.5', '< 0.001', '—', '—']
    """
    if value is None or not np.isfinite(value):
        return MISSING
    return "< 0.001" if value < 0.001 else f"{value:.3g}"


#: LaTeX's special characters as text, replaced in one pass (a replacement's own braces
#: are not escaped again: ``\\`` is ``\textbackslash{}``, not ``\textbackslash\{\}``).
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",  # OT1 fonts type < > | in text as other glyphs
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_LATEX_SPECIAL = re.compile("|".join(map(re.escape, _LATEX_SPECIALS)))


def _latex_escape(text: str) -> str:
    r"""``text`` typeset as itself in LaTeX.

    >>> print(_latex_escape("a_b&50%~^\\x{}"))
    a\_b\&50\%\textasciitilde{}\textasciicircum{}\textbackslash{}x\{\}
    """
    return _LATEX_SPECIAL.sub(lambda found: _LATEX_SPECIALS[found[0]], text)


#: Markdown's inline syntax in a system name, backslash-escaped (``*bm25*`` is no emphasis,
#: ``a|b`` no extra cell, ``#1`` no heading, ``$x$`` no formula).
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]<>|~$#]")


def escape_markdown(text: str) -> str:
    """``text`` shown as itself in Markdown (a run named ``*bm25*`` is not emphasis).

    >>> print(escape_markdown("*bm25*_v1 [x] $5"))
    \\*bm25\\*\\_v1 \\[x\\] \\$5
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text)


@validate_params(pick(REPORT, "digits", "tiebreak", "alpha"))
def to_markdown(
    table: pd.DataFrame,
    significance: pd.DataFrame | None = None,
    *,
    digits: int = 4,
    tiebreak: str = "trec_eval",
    alpha: float = 0.05,
    provenance: Mapping[str, object] | None = None,
    measures: str | Sequence[str] | None = None,
) -> str:
    """The same table as :func:`to_latex` in GitHub Markdown, the legend below it.

    Examples
    --------
    >>> keys = {"run": ["x"], "qid": [None], "measure": ["P@1"]}
    >>> obl = pd.DataFrame({**keys, "value": [1.0]})
    >>> spr = pd.DataFrame({**keys, "value": [0.5], "var": [0.25], "min": [0.0], "max": [1.0]})
    >>> print("\\n".join(to_markdown(combine_modes(obl, spr)).splitlines()[:3]))
    | system | P@1 |
    |---|---:|
    | x | **0.5000 ± 0.5000** |
    """
    chosen = _chosen(table, measures)
    rows = _cells(table, significance, digits, False, chosen)
    header = ["system", *map(escape_markdown, chosen)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    for cells in rows:
        name = escape_markdown(cells[0])  # a name as itself, not emphasis
        lines.append("| " + " | ".join([name, *cells[1:]]) + " |")
    lines.append("")
    lines.append(_legend(tiebreak, alpha, digits, _correction(significance), latex=False))
    if provenance:
        lines.append("")
        lines += [f"- {k}: {v}" for k, v in provenance.items()]
    return "\n".join(lines) + "\n"


def provenance(**fields: object) -> dict[str, object]:
    """The settings behind a result, in a fixed order, with the tiecore version added.

    Examples
    --------
    >>> list(provenance(measure="AP", seed=0))
    ['measure', 'seed', 'tiecore version']
    """
    from tiecore import __version__

    out = {k.replace("_", " "): v for k, v in fields.items() if v is not None}
    out["tiecore version"] = __version__
    return out


def to_csv(frame: pd.DataFrame, provenance: Mapping[str, object] | None = None) -> str:
    """CSV with ``# key: value`` provenance lines first, floats to 12 significant digits.

    ``pandas.read_csv(..., comment="#")`` reads it back.

    Examples
    --------
    >>> print(to_csv(pd.DataFrame({"v": [0.1 + 0.2]}), {"measure": "P@10"}), end="")
    # measure: P@10
    v
    0.3
    """
    head = "".join(f"# {k}: {v}\n" for k, v in (provenance or {}).items())
    index = frame.index.name is not None or isinstance(frame.index, pd.MultiIndex)
    return head + frame.to_csv(index=index, float_format=f"%.{DIGITS}g")


# ----------------------------------------------------------------------------- comparisons


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


_PAIR_COLUMNS = ["a", "b", "mean_diff", "tie_noise", "p_beats"]


def _unordered(pairs: pd.DataFrame, order: Sequence[str] | None) -> pd.DataFrame:
    """One row per unordered pair (``a`` the better, or first in ``order``), with
    ``p_beats`` (sampled where given, else normal) and numeric ``tie_noise``."""
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


@validate_params(pick(REPORT, "digits"))
def format_value(value: float, digits: int = 4) -> str:
    """``0.2680`` for a number, ``—`` for NaN or None.

    Examples
    --------
    >>> format_value(0.26799999999999996), format_value(float("nan"))
    ('0.2680', '—')
    """
    try:
        return _fmt(float(value), digits)
    except (TypeError, ValueError):
        return MISSING


def format_shift(delta: float, digits: int = PRINTED_DIGITS) -> str:
    """A signed shift in the measure's units: ``+0.0050`` at ``digits`` decimals; one that
    rounds to zero there keeps one significant digit (``-0.00002``), so it is not ``0``.

    Examples
    --------
    >>> format_shift(0.005), format_shift(-2.1e-5), format_shift(0.0), format_shift(None)
    ('+0.0050', '-0.00002', '0.0000', '—')
    """
    try:
        delta = float(delta)
    except (TypeError, ValueError):
        return MISSING
    if not math.isfinite(delta):
        return MISSING
    if delta == 0:
        return f"{0.0:.{digits}f}"
    if abs(delta) >= 0.5 * 10.0**-digits:
        return f"{delta:+.{digits}f}"
    return np.format_float_positional(delta, precision=1, fractional=False, sign=True)


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

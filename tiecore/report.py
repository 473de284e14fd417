"""Results to take away: systems x measures in the three tie modes, as LaTeX, Markdown or CSV.

:func:`modes_table` scores every run by every measure tie-oblivious (one
tie-break), tie-aware (the exact mean over all orderings) and, optionally,
sampled; beside them the exact standard deviation of the run's mean over random
tie-breaks (the *tie sd*, from :func:`tiecore.spread.evaluate_spread`) and the
min and max over all orderings.  ``z = (oblivious - aware) / tie_sd`` says how
far the one tie-break moved the reported number, in units of the tie noise;
``|z| > 2`` is flagged.  :func:`to_latex` (booktabs) and :func:`to_markdown`
print it with ``± tie sd`` and significance marks; :func:`to_csv` writes any
table with its provenance as ``#`` comment lines and without float noise.
:func:`closest_pairs` lists the pairs of systems whose order ties could decide.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tiecore._validation import FIXED_TIEBREAKS, REPORT, SEED, cli_type, pick, validate_params
from tiecore._validation import MODES as MODES  # the tie modes, declared there
from tiecore.errors import TieCoreWarning

#: ``|z|`` beyond this is flagged: the tie-break moved the value by more than 2 tie sd.
FLAG_Z = 2.0
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
    "flagged",
)


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        return function(*args, **kwargs)


def combine_modes(
    oblivious: pd.DataFrame,
    aware_spread: pd.DataFrame,
    sampled: pd.DataFrame | None = None,
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

    Returns
    -------
    DataFrame
        :data:`COLUMNS`: ``tie_sd = sqrt(var)``; ``delta = oblivious - aware``
        (0 below :data:`NOISE`);
        ``z = delta / tie_sd``: 0 when both are 0 (every ordering gives one
        value), +-inf when only the tie sd is 0 (then the tie-break compared
        scores as float32, as trec_eval 9 does, and tied scores that differ as
        doubles: no ordering of the tie-aware groups gives its value);
        ``position = (oblivious - min) / (max - min)`` (NaN when ``min ==
        max``); ``flagged = |z| > 2``.

    Examples
    --------
    >>> keys = {"run": ["x"], "qid": [None], "measure": ["P@1"]}
    >>> obl = pd.DataFrame({**keys, "value": [1.0]})
    >>> spr = pd.DataFrame({**keys, "value": [0.5], "var": [0.25], "min": [0.0], "max": [1.0]})
    >>> combine_modes(obl, spr)[["oblivious", "aware", "tie_sd", "z", "position", "flagged"]]
       oblivious  aware  tie_sd    z  position  flagged
    0        1.0    0.5     0.5  1.0       1.0    False
    >>> flat = spr.assign(value=1.0, var=0.0, min=1.0, max=1.0)  # no tie in float64
    >>> combine_modes(obl.assign(value=0.5), flat)[["z", "flagged"]]  # but one in float32
         z  flagged
    0 -inf     True
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
    delta = (table["oblivious"] - table["aware"]).to_numpy(np.float64, copy=True)
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
    table["flagged"] = np.abs(z) > FLAG_Z
    return table[list(COLUMNS)].reset_index(drop=True)


@validate_params(pick(REPORT, "tiebreak", "samples", "seed", "rel_level", "depth"))
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
) -> pd.DataFrame:
    """Every run and measure in the three modes with the exact tie sd (see :func:`combine_modes`).

    ``samples=None`` skips the sampled mode (its columns stay NaN); ``depth`` cuts
    every ranking first (trec_eval ``-M``).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["b"], "level": [1]})
    >>> modes_table({"x": run}, qrels, "P@1")[["oblivious", "aware", "tie_sd", "z"]]
       oblivious  aware  tie_sd    z
    0        1.0    0.5     0.5  1.0
    """
    from tiecore._evaluate import evaluate
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
    return combine_modes(oblivious, spread, sampled)


@validate_params(pick(REPORT, "alpha"))
def significance_vs_best(per_query: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per measure, a paired t-test of every run against the best run (tie-aware values).

    Parameters
    ----------
    per_query : DataFrame
        :func:`tiecore.evaluate` output with ``per_query=True`` (tie-aware).
    alpha : float
        Significance level.

    Returns
    -------
    DataFrame
        ``run, measure, best, p_value, significant``: ``best`` is the run with the
        highest mean (over its own queries: runs that retrieved for different
        queries are warned of); the test pairs the queries both runs have (``p_value``
        NaN for the best run itself, with fewer than two shared queries, or
        when the differences do not vary: their sd at most
        :data:`tiecore.compare.RTOL` times the largest ``|value|``, as
        ``tiecore compare`` decides, so rounding noise in a constant difference
        is no significance); ``p_value`` is at least
        :data:`tiecore.compare.SMALLEST_P`.

    Examples
    --------
    >>> rows = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "qid": ["1", "2", "3"] * 2,
    ...                      "measure": "AP", "value": [0.9, 0.8, 0.7, 0.1, 0.2, 0.2]})
    >>> significance_vs_best(rows)[["run", "best", "significant"]]
      run best  significant
    0   a    a        False
    1   b    a         True
    """
    from scipy import stats

    from tiecore.compare import RTOL, SMALLEST_P, warn_unequal_queries

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
        for run in order:
            p = np.nan
            if run != best:
                both = wide[[best, run]].dropna().to_numpy(np.float64)
                diff = both[:, 0] - both[:, 1]
                scale = float(np.abs(both).max(initial=0.0))
                if len(diff) >= 2 and diff.std(ddof=1) > RTOL * scale:
                    t = diff.mean() / (diff.std(ddof=1) / math.sqrt(len(diff)))
                    p = max(2.0 * float(stats.t.sf(abs(t), len(diff) - 1)), SMALLEST_P)
            out.append({"run": run, "measure": measure, "best": best, "p_value": p})
    table = pd.DataFrame(out, columns=["run", "measure", "best", "p_value"])
    table["significant"] = table["p_value"] < alpha
    return table


# ----------------------------------------------------------------------------- formatting


def _fmt(value: float, digits: int) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _best(aware: pd.Series) -> set:
    """The runs whose tie-aware value is the largest, every one of them when several tie
    (within :data:`tiecore.compare.RTOL`): bolding one of equal values would rank them.

    >>> sorted(_best(pd.Series([0.5, 0.75, 0.25 + 0.5], index=["a", "b", "c"])))
    ['b', 'c']
    """
    from tiecore.compare import RTOL

    top = aware.max()
    if not np.isfinite(top):
        return set()
    return set(aware.index[aware >= top - RTOL * abs(top)])


def _cells(
    table: pd.DataFrame, significance: pd.DataFrame | None, digits: int, latex: bool
) -> tuple[list[str], list[str], list[list[str]]]:
    """Rows of formatted cells: per measure oblivious, aware ± tie sd, sampled ± sd."""
    measures = list(dict.fromkeys(table["measure"]))
    runs = list(dict.fromkeys(table["run"]))
    sampled = bool(table["sampled"].notna().any())
    modes = [mode for mode in MODES if sampled or mode != "sampled"]  # the table's order
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
                cells += ["–"] * len(modes)
                continue
            row = indexed.loc[(run, measure)]
            oblivious = _fmt(row["oblivious"], digits)
            if row["flagged"]:
                oblivious += r"\textsuperscript{\dag}" if latex else "†"
            aware = _fmt(row["aware"], digits) + pm + _fmt(row["tie_sd"], digits)
            if run in best[measure]:
                aware = rf"\textbf{{{aware}}}" if latex else f"**{aware}**"
            elif bool(marks.get((run, measure), False)):
                aware += r"\textsuperscript{*}" if latex else "*"
            cells += [oblivious, aware]
            if sampled:
                cells.append(_fmt(row["sampled"], digits) + pm + _fmt(row["sampled_sd"], digits))
        rows.append(cells)
    return measures, modes, rows


def _legend(tiebreak: str, alpha: float, sampled: bool, latex: bool) -> str:
    pm = r"$\pm$" if latex else "±"
    name = _latex_escape(tiebreak) if latex else tiebreak
    dag = r"\dag" if latex else "†"
    return (
        f"oblivious: one tie-break ({name}); aware: exact mean over all orderings of tied "
        f"documents {pm} its exact standard deviation over random tie-breaks (tie sd)"
        + (f"; sampled: mean {pm} sd over random tie-breaks" if sampled else "")
        + f". {dag}: the tie-break moved the value by more than {FLAG_Z:g} tie sd. "
        f"Bold: best tie-aware value; *: significantly below it "
        f"(paired t-test on tie-aware per-query values, p < {alpha:g})."
    )


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
) -> str:
    r"""A booktabs table: one row per system, per measure the modes' columns.

    Examples
    --------
    >>> keys = {"run": ["x"], "qid": [None], "measure": ["P@1"]}
    >>> obl = pd.DataFrame({**keys, "value": [1.0]})
    >>> spr = pd.DataFrame({**keys, "value": [0.5], "var": [0.25], "min": [0.0], "max": [1.0]})
    >>> print("\n".join(to_latex(combine_modes(obl, spr)).splitlines()[3:9]))
    \toprule
    System & \multicolumn{2}{c}{P@1} \\
    \cmidrule(lr){2-3}
     & oblivious & aware \\
    \midrule
    x & 1.0000 & \textbf{0.5000 $\pm$ 0.5000} \\
    """
    measures, modes, rows = _cells(table, significance, digits, latex=True)
    sampled = "sampled" in modes
    width = len(modes)
    lines = [f"% {k}: {v}" for k, v in (provenance or {}).items()]
    lines += [
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{l" + "r" * width * len(measures) + "}",
        r"\toprule",
    ]
    lines.append(
        "System & "
        + " & ".join(rf"\multicolumn{{{width}}}{{c}}{{{_latex_escape(m)}}}" for m in measures)
        + r" \\"
    )
    rules = [
        f"\\cmidrule(lr){{{2 + i * width}-{1 + (i + 1) * width}}}" for i in range(len(measures))
    ]
    lines.append(" ".join(rules))
    lines.append(" & " + " & ".join(modes * len(measures)) + r" \\")
    lines.append(r"\midrule")
    for cells in rows:
        lines.append(_latex_escape(cells[0]) + " & " + " & ".join(cells[1:]) + r" \\")
    lines.append(r"\bottomrule")
    lines.append(r"\end{tabular}")
    text = caption or _legend(tiebreak, alpha, sampled, latex=True)
    lines.append(rf"\caption{{{text}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


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
}
_LATEX_SPECIAL = re.compile("|".join(map(re.escape, _LATEX_SPECIALS)))


def _latex_escape(text: str) -> str:
    r"""``text`` typeset as itself in LaTeX.

    >>> print(_latex_escape("a_b&50%~^\\x{}"))
    a\_b\&50\%\textasciitilde{}\textasciicircum{}\textbackslash{}x\{\}
    """
    return _LATEX_SPECIAL.sub(lambda found: _LATEX_SPECIALS[found[0]], text)


#: Markdown's inline syntax in a system name, backslash-escaped (``*bm25*`` is no emphasis,
#: ``a|b`` no extra cell).
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]<>|~$]")


@validate_params(pick(REPORT, "digits", "tiebreak", "alpha"))
def to_markdown(
    table: pd.DataFrame,
    significance: pd.DataFrame | None = None,
    *,
    digits: int = 4,
    tiebreak: str = "trec_eval",
    alpha: float = 0.05,
    provenance: Mapping[str, object] | None = None,
) -> str:
    """The same table as :func:`to_latex` in GitHub Markdown, the legend below it.

    Examples
    --------
    >>> keys = {"run": ["x"], "qid": [None], "measure": ["P@1"]}
    >>> obl = pd.DataFrame({**keys, "value": [1.0]})
    >>> spr = pd.DataFrame({**keys, "value": [0.5], "var": [0.25], "min": [0.0], "max": [1.0]})
    >>> print(to_markdown(combine_modes(obl, spr)).splitlines()[2])
    | x | 1.0000 | **0.5000 ± 0.5000** |
    """
    measures, modes, rows = _cells(table, significance, digits, latex=False)
    header = ["system"] + [f"{m} {mode}" for m in measures for mode in modes]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    for cells in rows:
        name = _MARKDOWN_SPECIAL.sub(r"\\\g<0>", cells[0])  # a name as itself, not emphasis
        lines.append("| " + " | ".join([name, *cells[1:]]) + " |")
    lines.append("")
    lines.append(_legend(tiebreak, alpha, "sampled" in modes, latex=False))
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
    """``0.2680`` for a number, ``–`` for NaN or None.

    Examples
    --------
    >>> format_value(0.26799999999999996), format_value(float("nan"))
    ('0.2680', '–')
    """
    try:
        return _fmt(float(value), digits)
    except (TypeError, ValueError):
        return "–"


def effect_sentence(row: Mapping, tiebreak: str = "trec_eval") -> str:
    """``MU03rob01 P@10: trec_eval 0.2680 vs tie-aware 0.2630 (+2.9 tie sd)``.

    Examples
    --------
    >>> effect_sentence({"run": "x", "measure": "P@10", "oblivious": 0.268, "aware": 0.263,
    ...                  "z": 2.94})
    'x P@10: trec_eval 0.2680 vs tie-aware 0.2630 (+2.9 tie sd)'
    """
    z = float(row["z"])
    if math.isfinite(z):
        shift = f"{z:+.1f} tie sd"
    elif math.isinf(z):  # (combine_modes)
        shift = "no ordering of the tie-aware ties gives it: float32 ties"
    else:
        shift = "no tie noise"
    return (
        f"{row['run']} {row['measure']}: {tiebreak} {format_value(row['oblivious'])} vs "
        f"tie-aware {format_value(row['aware'])} ({shift})"
    )


# ----------------------------------------------------------------------------- command line

#: The measures of ``tiecore report`` without ``-m``.
DEFAULT_MEASURES = ("P@10", "AP", "nDCG@10")
#: Output formats of ``tiecore report``.
FORMATS = ("markdown", "latex", "csv")
_REPORT_HELP = """\
Score every run (or LETOR feature) by every measure tie-oblivious (one tie-break),
tie-aware (the exact mean over all orderings of tied documents, with its exact
standard deviation over random tie-breaks: the tie sd) and, with --samples,
sampled; print systems x measures as a Markdown or LaTeX (booktabs) table or as
CSV, with the settings behind it.  Marks: a dagger where the tie-break moved the
value by more than 2 tie sd; bold for the best tie-aware value; * where a system
is significantly below it (paired t-test on tie-aware per-query values)."""


def add_command(commands, add_inputs, add_options, read_inputs) -> None:
    """Register ``tiecore report`` among the CLI's subcommands (``tiecore.cli.build_parser``).

    ``add_inputs``, ``add_options`` and ``read_inputs`` are the CLI's own helpers
    (QRELS RUN ... or --letor; -M, -l, --format, -o; reading), so the command
    takes its inputs exactly as ``eval`` and ``compare`` do.
    """
    parser = commands.add_parser(
        "report",
        help="systems x measures in the three tie modes as Markdown, LaTeX or CSV "
        "(see tiecore report --help)",
        usage="tiecore report [options] QRELS RUN [RUN ...]\n"
        "       tiecore report [options] --letor FILE [--features LIST]",
        description=_REPORT_HELP,
    )
    add_inputs(parser)
    parser.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="a measure or comma-separated measures; repeatable (default: P@10, AP, nDCG@10)",
    )
    parser.add_argument(
        "--tiebreak",
        choices=FIXED_TIEBREAKS,  # a seeded order would need its seed in the table
        default="trec_eval",
        help="the oblivious mode's order inside ties (default: trec_eval)",
    )
    parser.add_argument(
        "--samples",
        type=cli_type(REPORT["samples"]),
        metavar="N",
        help="also the sampled mode with N random tie-breaks per run (default: none)",
    )
    parser.add_argument(
        "--seed", type=cli_type(SEED), default=0, metavar="S", help="seed (default: 0)"
    )
    parser.add_argument(
        "--alpha",
        type=cli_type(REPORT["alpha"]),
        default=0.05,
        metavar="A",
        help="significance level of the marks (default: 0.05)",
    )
    add_options(parser, FORMATS)
    parser.set_defaults(handler=lambda args, stderr: run_command(args, read_inputs))


def run_command(args, read_inputs) -> str:
    """``tiecore report``: read the inputs, build the table, return the text to write."""
    from tiecore._evaluate import evaluate
    from tiecore.cli import split_measures
    from tiecore.measures import parse_measures

    named = split_measures(args.measures or [])  # -m '' names none: refused, not the defaults
    measures = [str(m) for m in parse_measures(named if args.measures else DEFAULT_MEASURES)]
    runs, qrels, sources = read_inputs(args)
    table = modes_table(
        runs,
        qrels,
        measures,
        tiebreak=args.tiebreak,
        samples=args.samples,
        seed=args.seed,
        rel_level=args.rel_level,
        depth=args.depth,
    )
    data = args.letor or ", ".join([args.files[0], *sorted(set(sources.values()))])
    about = provenance(
        data_set=data,
        measure=", ".join(measures),
        tie_break=args.tiebreak,
        samples=args.samples,
        seed=args.seed,
        relevance_level=args.rel_level,
        depth=args.depth,
    )
    if args.format == "csv":
        return to_csv(table, about)
    per_query = _quiet(
        evaluate,
        runs,
        qrels,
        measures,
        rel_level=args.rel_level,
        depth=args.depth,
        per_query=True,
    )
    marks = significance_vs_best(per_query, args.alpha)
    write = to_latex if args.format == "latex" else to_markdown
    return write(table, marks, tiebreak=args.tiebreak, alpha=args.alpha, provenance=about)

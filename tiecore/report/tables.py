"""What the LaTeX and the Markdown tables share: their cells, marks and legend.

A cell is the tie-aware value ``± tie sd``; bold marks the best system (every one
of equal values), ``*`` one significantly below it
(:func:`tiecore.report.significance.significance_vs_best`) and ``†`` a value the
tie-break moved by more than 2 tie sd (:func:`tiecore.report.effects.combine_modes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tiecore.errors import InputError
from tiecore.report.effects import FLAG_Z, MISSING, fixed
from tiecore.report.escape import latex_escape
from tiecore.report.significance import CORRECTION_NAMES
from tiecore.stats.ranks import RTOL

if TYPE_CHECKING:
    import pandas as pd


def _best(aware: pd.Series) -> set:
    """The runs whose tie-aware value is the largest, every one of them when several tie
    (within :data:`tiecore.stats.ranks.RTOL`): bolding one of equal values would rank them.

    >>> import pandas as pd

    >>> sorted(_best(pd.Series([0.5, 0.75, 0.25 + 0.5], index=["a", "b", "c"])))
    ['b', 'c']
    """
    top = aware.max()
    if not np.isfinite(top):
        return set()
    return set(aware.index[aware >= top - RTOL * abs(top)])


def chosen_measures(table: pd.DataFrame, measures: str | Sequence[str] | None) -> list[str]:
    """The measures to print, in the order asked (all of the table's by default)."""
    present = list(dict.fromkeys(table["measure"]))
    if measures is None:
        return present
    asked = [measures] if isinstance(measures, str) else list(measures)
    missing = [m for m in asked if m not in present]
    if missing or not asked:
        raise InputError(
            "measures",
            None,
            f"not in the table: {', '.join(map(str, missing))}" if missing else "none named",
            f"some of {', '.join(present)}",
        )
    return list(dict.fromkeys(asked))


def table_cells(
    table: pd.DataFrame,
    significance: pd.DataFrame | None,
    digits: int,
    latex: bool,
    measures: list[str],
) -> list[list[str]]:
    """Rows of formatted cells: the system, then per measure ``aware ± tie sd`` and marks
    (bold: best; ``*``: significantly below it; ``†``: the tie-break's value flagged)."""
    import pandas as pd

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
            aware = fixed(row["aware"], digits) + pm + fixed(row["tie_sd"], digits)
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


def legend(tiebreak: str, alpha: float, digits: int, correction: str | None, latex: bool) -> str:
    """What the cells and marks mean; the significance sentence only when marks are given."""
    pm = r"$\pm$" if latex else "±"
    name = latex_escape(tiebreak) if latex else tiebreak
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


def correction_of(significance: pd.DataFrame | None) -> str | None:
    if significance is None:
        return None
    return str(significance.attrs.get("correction", "holm"))


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

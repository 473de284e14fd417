"""LaTeX (booktabs) tables: the report's systems x measures table and any small table."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tiecore.options import REPORT, pick, validate_params
from tiecore.report.escape import latex_escape
from tiecore.report.tables import (
    MISSING,
    chosen_measures,
    correction_of,
    format_pvalue,
    legend,
    table_cells,
)

if TYPE_CHECKING:
    import pandas as pd


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
    >>> import pandas as pd
    >>> from tiecore.report.effects import combine_modes
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
    chosen = chosen_measures(table, measures)
    rows = table_cells(table, significance, digits, True, chosen)
    body = [[latex_escape(cells[0]), *cells[1:]] for cells in rows]
    head = ["System", *(latex_escape(m) for m in chosen)]
    text = caption or legend(tiebreak, alpha, digits, correction_of(significance), latex=True)
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
    >>> import pandas as pd
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
    import pandas as pd

    if frame.index.name is not None or isinstance(frame.index, pd.MultiIndex):
        frame = frame.reset_index()
    spec, columns = "", []
    for name in frame.columns:
        column = frame[name]
        numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
        spec += "r" if numeric else "l"
        columns.append([_latex_cell(v, _is_pvalue(str(name))) for v in column.tolist()])
    head = [latex_escape(str(name)) for name in frame.columns]
    body = [list(cells) for cells in zip(*columns, strict=True)] if columns else []
    return _table_lines(
        spec or "l",
        head,
        body,
        latex_escape(caption),
        label=label,
        provenance=provenance,
        resize=resize,
    )


_PVALUE_NAME = re.compile(r"p[ _-]?value", re.IGNORECASE)


def _is_pvalue(name: str) -> bool:
    return bool(_PVALUE_NAME.search(name))


def _latex_cell(value: object, pvalue: bool) -> str:
    """One cell of :func:`frame_to_latex`."""
    import pandas as pd

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
    return latex_escape(str(value))

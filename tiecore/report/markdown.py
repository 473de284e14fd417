"""The report's systems x measures table in GitHub Markdown, its legend below it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tiecore.options import REPORT, pick, validate_params
from tiecore.report.escape import escape_markdown
from tiecore.report.tables import chosen_measures, correction_of, legend, table_cells

if TYPE_CHECKING:
    import pandas as pd


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
    >>> import pandas as pd
    >>> from tiecore.report.effects import combine_modes
    >>> keys = {"run": ["x"], "qid": [None], "measure": ["P@1"]}
    >>> obl = pd.DataFrame({**keys, "value": [1.0]})
    >>> spr = pd.DataFrame({**keys, "value": [0.5], "var": [0.25], "min": [0.0], "max": [1.0]})
    >>> print("\\n".join(to_markdown(combine_modes(obl, spr)).splitlines()[:3]))
    | system | P@1 |
    |---|---:|
    | x | **0.5000 ± 0.5000** |
    """
    chosen = chosen_measures(table, measures)
    rows = table_cells(table, significance, digits, False, chosen)
    header = ["system", *map(escape_markdown, chosen)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    for cells in rows:
        name = escape_markdown(cells[0])  # a name as itself, not emphasis
        lines.append("| " + " | ".join([name, *cells[1:]]) + " |")
    lines.append("")
    lines.append(legend(tiebreak, alpha, digits, correction_of(significance), latex=False))
    if provenance:
        lines.append("")
        lines += [f"- {k}: {v}" for k, v in provenance.items()]
    return "\n".join(lines) + "\n"

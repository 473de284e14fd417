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

The modules: :mod:`~tiecore.report.effects` (the modes table, flags, base rate,
verdicts), :mod:`~tiecore.report.significance`, :mod:`~tiecore.report.tables` (what
the LaTeX and Markdown tables share), :mod:`~tiecore.report.latex`,
:mod:`~tiecore.report.markdown`, :mod:`~tiecore.report.escape`,
:mod:`~tiecore.report.pairs`, :mod:`~tiecore.report.formats` (every trec, CSV and JSON
writer) and :mod:`~tiecore.report.comparison` (``tiecore compare``'s output).  None
imports pandas until a table is built, so ``tiecore eval`` can write through
:mod:`~tiecore.report.formats` without it; and this package imports its modules on
first use (PEP 562), so that ``tiecore eval``'s writer loads none of the others
(the LaTeX, Markdown, effects and significance modules cost it about 3 ms of start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tiecore.report.effects import (
        COLUMNS,
        FLAG_Z,
        MISSING,
        NOISE,
        PRINTED_DIGITS,
        combine_modes,
        effect_sentence,
        expected_flags,
        flag_verdict,
        format_shift,
        format_value,
        modes_table,
        printed,
    )
    from tiecore.report.escape import escape_markdown
    from tiecore.report.formats import DIGITS, provenance, to_csv
    from tiecore.report.latex import frame_to_latex, to_latex
    from tiecore.report.markdown import to_markdown
    from tiecore.report.pairs import closest_pairs, nearest_pairs
    from tiecore.report.significance import CORRECTION_NAMES, significance_vs_best
    from tiecore.report.tables import format_pvalue

#: The module of each public name, imported on first use.
_HOMES = {
    **dict.fromkeys(
        (
            "COLUMNS",
            "FLAG_Z",
            "MISSING",
            "NOISE",
            "PRINTED_DIGITS",
            "combine_modes",
            "effect_sentence",
            "expected_flags",
            "flag_verdict",
            "format_shift",
            "format_value",
            "modes_table",
            "printed",
        ),
        "effects",
    ),
    "escape_markdown": "escape",
    **dict.fromkeys(("DIGITS", "provenance", "to_csv"), "formats"),
    **dict.fromkeys(("frame_to_latex", "to_latex"), "latex"),
    "to_markdown": "markdown",
    **dict.fromkeys(("closest_pairs", "nearest_pairs"), "pairs"),
    **dict.fromkeys(("CORRECTION_NAMES", "significance_vs_best"), "significance"),
    "format_pvalue": "tables",
}
#: The modules this package imported eagerly before: still attributes without an import.
_MODULES = frozenset(_HOMES.values())


def __getattr__(name: str) -> object:
    """A public name (or one of the modules above), imported on first use (PEP 562)."""
    if name in _MODULES:
        return importlib.import_module(f"tiecore.report.{name}")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'tiecore.report' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tiecore.report.{home}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    """The package's names, those not yet imported included."""
    return sorted([*globals(), *__all__])


__all__ = [
    "COLUMNS",
    "CORRECTION_NAMES",
    "DIGITS",
    "FLAG_Z",
    "MISSING",
    "NOISE",
    "PRINTED_DIGITS",
    "closest_pairs",
    "combine_modes",
    "effect_sentence",
    "escape_markdown",
    "expected_flags",
    "flag_verdict",
    "format_pvalue",
    "format_shift",
    "format_value",
    "frame_to_latex",
    "modes_table",
    "nearest_pairs",
    "printed",
    "provenance",
    "significance_vs_best",
    "to_csv",
    "to_latex",
    "to_markdown",
]

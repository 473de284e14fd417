"""The System rankings page's words and tables: names of the orderings, column headers,
and a table with its CSV and LaTeX downloads.

Kept apart from ``app_pages/rankings.py`` (the page lays out and draws): these are
the pieces that need no data, only the names and formats the page shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import pandas as pd
import streamlit as st

from app_lib import charts as ch
from tiecore import report

#: The orderings as readers know them (compare's column names on the left).
ORDERING_NAMES = {
    "trec_eval": "trec_eval",
    "aware": "tie-aware",
    "trec_eval_double": "trec_eval 10",
    "docno_asc": "docno ascending",
    "file_order": "file order",
    "optimistic": "optimistic",
    "pessimistic": "pessimistic",
    "random": "random (mean)",
}
#: Lines of the systems that move in the slope chart; the others are grey.
MOVER_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                "#17becf", "#bcbd22", "#7f7f7f")  # fmt: skip
STILL_COLOR = "#b5b5b5"
DASH = "—"
#: Names longer than this are cut in the slope chart (while they stay distinct).
NAME_LIMIT = 20


def plain(text: str) -> str:
    """A user's name for Markdown: punctuation escaped, so it shows as typed (no emphasis)."""
    return re.sub(r"([\\`*_{}\[\]()<>#+\-.!|~:$])", r"\\\1", str(text))


def svg_text(text: str) -> str:
    """A name for a plotly text label: its ``<``, ``>`` and ``&`` shown, not read as tags."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def change(delta: int) -> str:
    """A rank change (:func:`tiecore.stats.ranks.rank_change`, negative: up): ``↑ 2``, ``↓ 1``,
    ``=``."""
    return f"↑ {-delta}" if delta < 0 else f"↓ {delta}" if delta > 0 else "="


def printf(fmt: str, value: object) -> str:
    """``value`` in the printf format ``fmt`` (a named format such as "percent": four
    decimals); ``—`` when undefined; a number that rounds to zero is ``0.0000``, never
    ``-0.0000`` or ``+0.0000``."""
    if value is None or pd.isna(value):
        return DASH
    fmt = fmt if "%" in fmt else "%.4f"
    text = fmt % value
    try:
        zero = float(text) == 0
    except ValueError:  # "%d%%" and the like
        return text
    return text.lstrip("+-") if zero else text


def as_shown(frame: pd.DataFrame, config: Mapping) -> pd.DataFrame:
    """``frame`` as the table shows it: human headers, numbers in their printf format, — for
    undefined values, yes/no for flags (the LaTeX download)."""
    out = {}
    for column in frame.columns:
        spec = config.get(column) or {}
        values = frame[column]
        fmt = (spec.get("type_config") or {}).get("format")
        if pd.api.types.is_bool_dtype(values.dtype):
            values = values.map({True: "yes", False: "no"})
        elif fmt and pd.api.types.is_numeric_dtype(values.dtype):
            values = values.map(lambda v, f=fmt: printf(f, v))
        else:
            values = values.map(lambda v: DASH if v is None or v is pd.NA or v != v else v)
        out[spec.get("label") or column] = values.to_numpy()
    return pd.DataFrame(out)


def dashed(frame: pd.DataFrame, config: Mapping) -> tuple[pd.DataFrame, dict]:
    """``frame`` and ``config`` with every number column that holds an undefined value
    (NaN: a single query has no topic sd, equal values no effect size) or a value that
    would print as a signed zero as text (:func:`printf`): a table would otherwise print a
    raw "None" or "-0.0000"."""
    out, config = frame.copy(), dict(config)
    for column in frame.columns:
        values = frame[column]
        if not pd.api.types.is_float_dtype(values.dtype):
            continue
        spec = dict(config.get(column) or {})
        fmt = (spec.get("type_config") or {}).get("format") or ""
        if not values.isna().any() and not any(
            printf(fmt, v) != (fmt if "%" in fmt else "%.4f") % v for v in values
        ):
            continue  # every value prints as it is: the column stays a number column
        out[column] = [printf(fmt, v) for v in values]
        config[column] = st.column_config.TextColumn(
            spec.get("label") or column, help=spec.get("help"), width=spec.get("width")
        )
    return out, config


#: Rows a too-wide table shows wrapped (the rest in the sortable table under it).
PREVIEW = 20
#: The width a table has on a 1440 px screen beside the sidebar, in pixels, and what a
#: character and a column's padding take in a table's cells (measured in Chromium).
PAGE_WIDTH, CHAR_WIDTH, COLUMN_PADDING = 940, 6, 12


def too_wide(shown: pd.DataFrame) -> bool:
    """Whether ``shown`` (as the table prints it) would be wider than the page at 1440 px:
    each column as wide as its longest text, header included."""
    chars = sum(
        max([len(str(column)), *(len(str(v)) for v in shown[column].head(200))])
        for column in shown.columns
    )
    return CHAR_WIDTH * chars + COLUMN_PADDING * len(shown.columns) > PAGE_WIDTH


def table(
    shown: pd.DataFrame,
    name: str,
    *,
    key: str,
    caption: str,
    provenance: Mapping[str, object],
    config: Mapping,
    numbers: pd.DataFrame | None = None,
) -> None:
    """A table with human headers, and its CSV (``numbers``, full precision) and LaTeX (as
    shown, :func:`tiecore.report.frame_to_latex`) downloads.

    A table too wide for the page (long names, such as MSLR's features) shows its first
    :data:`PREVIEW` rows with the text wrapped in the cells, every name and header whole,
    and every row in a folded, sortable table below it."""
    frame, frame_config = dashed(shown, config)
    if too_wide(as_shown(shown, config)):
        st.table(as_shown(shown.head(PREVIEW), config), hide_index=True)
        more = len(shown) - PREVIEW
        label = f"All {len(shown)} rows, sortable" if more > 0 else "As a sortable table"
        with st.expander(label):
            st.dataframe(frame, column_config=frame_config, hide_index=True, width="stretch")
    else:
        st.dataframe(frame, column_config=frame_config, hide_index=True, width="stretch")
    slug = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
    left, right, _ = st.columns([1, 1, 6], gap="small")
    left.download_button(
        "CSV",
        lambda: report.to_csv(shown if numbers is None else numbers, provenance),
        file_name=f"{slug}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
        icon=":material/download:",
        help=f"{name}: full-precision numbers, with the settings behind them as # lines",
    )
    right.download_button(
        "LaTeX",
        lambda: report.frame_to_latex(
            as_shown(shown, config), caption=caption, label=f"tab:{slug}", provenance=provenance
        ),
        file_name=f"{slug}.tex",
        mime="text/x-tex",
        key=f"{key}_tex",
        on_click="ignore",
        icon=":material/download:",
        help=f"{name} as shown, a booktabs table with its caption and the settings behind it",
    )


def columns_config(correction: str, level: str, ci_method: str, measure: str) -> dict:
    """Human headers, help and number formats of every column the rankings tables show
    (``measure`` names the tie-aware mean's column)."""
    fix = "Holm" if correction == "holm" else CORRECTION_NAMES[correction].split(" (")[0]
    number, text = st.column_config.NumberColumn, st.column_config.TextColumn
    adjusted = f"corrected over all pairs ({CORRECTION_NAMES[correction]})"
    return {
        # names as wide as they are (a long feature name is shown whole)
        "system": text("System"),
        "a": text("System A"),
        "b": text("System B"),
        "mean_diff": number("Difference (A − B)", help=ch.GLOSSARY["mean_diff"], format="%+.4f"),
        "tie_noise": number("Tie noise", help=ch.GLOSSARY["tie_noise"], format="%.4f"),
        "within_tie_noise": st.column_config.CheckboxColumn(
            "Within tie noise", help=ch.GLOSSARY["within_tie_noise"]
        ),
        "tie_sd": number("Tie sd", help=HELP["tie_sd"], format="%.4f"),
        "topic_sd": number("Topic sd", help=HELP["topic_sd"], format="%.4f"),
        "p_beats": number("P(A beats B)", help=ch.GLOSSARY["p_beats"], format="%.3f"),
        "p_beats_sampled": number(
            "P(A beats B)", help=ch.GLOSSARY["p_beats_sampled"], format="%.3f"
        ),
        "p_beats_normal": number(
            "P(A beats B), normal approx.", help=ch.GLOSSARY["p_beats_normal"], format="%.3f"
        ),
        "t_pvalue": text("t-test p", help=ch.GLOSSARY["t_pvalue"]),
        "t_pvalue_adj": text(f"t-test p ({fix})", help=f"paired t-test p-value, {adjusted}"),
        "randomization_pvalue": text("Randomization p", help=ch.GLOSSARY["randomization_pvalue"]),
        "randomization_pvalue_adj": text(
            f"Randomization p ({fix})", help=f"randomization test p-value, {adjusted}"
        ),
        "wilcoxon_pvalue": text("Wilcoxon p", help=HELP["wilcoxon_pvalue"]),
        "wilcoxon_pvalue_adj": text(
            f"Wilcoxon p ({fix})", help=f"Wilcoxon signed-rank p-value, {adjusted}"
        ),
        "tukey_pvalue": text("Tukey HSD p", help=HELP["tukey_pvalue"]),
        "diff_low": number(
            f"Difference, {level} CI low",
            help=f"{level} {ci_method} bootstrap interval of the mean difference, low end",
            format="%+.4f",
        ),
        "diff_high": number(
            f"Difference, {level} CI high",
            help=f"{level} {ci_method} bootstrap interval of the mean difference, high end",
            format="%+.4f",
        ),
        "tukey_low": number(f"Tukey {level} low", help=HELP["tukey_low"], format="%+.4f"),
        "tukey_high": number(f"Tukey {level} high", help=HELP["tukey_high"], format="%+.4f"),
        "effect_size": number("Effect size", help=ch.GLOSSARY["effect_size"], format="%.2f"),
        "n_queries": number("Queries", help=ch.GLOSSARY["n_queries"], format="%d"),
        "mean": number(f"Tie-aware mean ({measure})", help=ch.GLOSSARY["aware"], format="%.4f"),
        "ci_low": number(
            f"{level} CI low",
            help=f"{level} {ci_method} bootstrap interval of the mean, low end",
            format="%.4f",
        ),
        "ci_high": number(
            f"{level} CI high",
            help=f"{level} {ci_method} bootstrap interval of the mean, high end",
            format="%.4f",
        ),
        "help": number("Queries helped", help=HELP["help"], format="%d"),
        "hurt": number("Queries hurt", help=HELP["hurt"], format="%d"),
        "equal": number("Queries equal", help=HELP["equal"], format="%d"),
        "within_tie_noise_count": number(
            "Within tie noise", help=HELP["within_tie_noise"], format="%d"
        ),
    }


def readable(frame: pd.DataFrame, describe: Callable[[str], str]) -> pd.DataFrame:
    """``frame`` with its p-values as text (``< 0.001``, — when undefined) and systems named
    by ``describe``."""
    out = frame.copy()
    for column in out.columns:
        if "pvalue" in column:
            out[column] = out[column].map(report.format_pvalue)
    for column in ("a", "b", "system"):
        if column in out.columns:
            out[column] = out[column].map(describe)
    return out


CORRECTION_NAMES = {
    "holm": "Holm (family-wise error)",
    "bonferroni": "Bonferroni (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "none",
}
HELP = {
    "tie_sd": "tie noise: the exact sd over random tie-breaking (of the mean, or of the "
    "difference of two means), from the per-query tie variances",
    "topic_sd": "topic noise: the sd of the per-query values (or differences) / sqrt(queries), "
    "the standard error from the spread between topics",
    "wilcoxon_pvalue": "Wilcoxon signed-rank test on the per-query differences (scipy; exact "
    "where scipy is; zero differences dropped)",
    "tukey_pvalue": "Tukey's HSD p-value (already family-wise; ignores the pairing by query)",
    "tukey_low": "Tukey's simultaneous interval of the difference, low end",
    "tukey_high": "Tukey's simultaneous interval of the difference, high end",
    "help": "queries where the system scores above the baseline (tie-aware values)",
    "hurt": "queries where the system scores below the baseline",
    "equal": "queries where both score the same",
    "within_tie_noise": "helped or hurt queries whose difference is within 2 tie sd of that "
    "query: tie-breaking alone could reverse them",
}

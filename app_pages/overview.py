"""Overview: what ties do to each system's reported numbers, then the three modes and the ties."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import tiecore
from app_lib import cache
from app_lib import charts as ch
from app_lib import sidebar as sb
from app_lib.settings import with_gain
from tiecore import report

dataset, settings = sb.context()
st.title("Overview")
ch.dataset_caption(dataset)
sb.need_measures(settings)

left, right = st.columns([3, 1])
sampled = left.toggle(
    f"Also draw the sampled mode ({settings.samples} random tie-breaks per system)",
    key="overview_sampled",
    help="The tie-aware value and its sd are exact; sampling only estimates them, and takes "
    "a few seconds per system on large runs.",
)
digits = int(
    right.number_input(
        "Decimals a paper prints",
        min_value=1,
        max_value=8,
        value=report.PRINTED_DIGITS,
        step=1,
        key="overview_digits",
        help="A shift is flagged only when it changes the value as printed with this many "
        "decimals (trec_eval prints 4) and is larger than 2 tie sd.",
    )
)
sb.measures_for(settings, "spread")  # says which measures the table leaves out, and why
table = cache.modes(dataset, settings, sampled=sampled, digits=digits)
describe = dataset.describe
#: What the page's words mean where they appear (flags depend on the decimals chosen).
SHOWS = f"the shift changes the value as printed with {digits} decimals"
FLAGGED = f"the shift is larger than 2 tie sd and shows at {digits} decimals"
BASE_RATE = (
    "how many values random tie-breaking alone would flag: were the reported value one "
    "random tie-break, it would shift by more than 2 tie sd and show at "
    f"{digits} decimals in about this many of them (normal approximation over the queries)"
)


def said(row) -> str:
    """One value's effect as a sentence, the names as text (not Markdown)."""
    named = {
        **row,
        "run": report.escape_markdown(describe(row["run"])),
        "measure": report.escape_markdown(str(row["measure"])),
    }
    return report.effect_sentence(named, settings.tiebreak, digits)


# --- the effect, in words
st.subheader("What the tie-break does to the reported numbers")
with st.expander("What the words on this page mean"):
    st.markdown(
        f"**oblivious**: the value under one tie-break, {settings.tiebreak} "
        f"({ch.tiebreak_help(settings.tiebreak)}). **tie-aware**: {ch.GLOSSARY['aware']}. "
        f"**shift**: {ch.GLOSSARY['shift']}. **tie sd**: {ch.GLOSSARY['tie_sd']}; the shift in "
        f"tie sd says whether tie noise alone could explain it. **flagged**: {FLAGGED}. "
        f"**base rate**: {BASE_RATE}."
    )
varies = table["tie_sd"] > 0
size = table["delta"].abs().fillna(0.0)
flagged = table.assign(size=size)[table["flagged"]].sort_values("size", ascending=False)
expected = report.expected_flags(table, digits)
_, verdict = report.flag_verdict(len(flagged), expected)
about = f"{expected:.0f}" if expected >= 1 else f"{expected:.1f}"
counted = f"{len(flagged):,} of {len(table):,} values"
if not varies.any() and flagged.empty:
    st.success(
        "No system has ties that matter for these measures: every tie-break gives the same "
        "values, so oblivious, aware and sampled agree exactly.",
        icon=":material/check_circle:",
    )
elif flagged.empty:
    largest = table.loc[size.idxmax()]
    st.info(
        f"No reported value moved by more than the tie noise (2 tie sd) in a way that shows at "
        f"{digits} decimals. {int(varies.sum()):,} of {len(table):,} values carry tie noise; "
        f"random tie-breaking alone would flag about {about} of them (the base rate). The "
        f"largest shift: {said(largest)}.",
        icon=":material/info:",
    )
else:
    lines = [f"- {said(row)}" for _, row in flagged.head(6).iterrows()]
    more = f"\n- ... and {len(flagged) - 6} more (table below)" if len(flagged) > 6 else ""
    st.warning(
        f"**{counted} moved by more than the tie noise and show at {digits} decimals**: the "
        f"number a paper would print differs from the tie-aware value by more than 2 tie sd. "
        f"Random tie-breaking alone would flag about {about} of them (the base rate), so "
        f"{len(flagged):,} is {verdict}. Largest shifts first:\n" + "\n".join(lines) + more,
        icon=":material/warning:",
    )
cols = st.columns(5)
cols[0].metric(
    "values with tie noise",
    f"{int(varies.sum()):,} of {len(table):,}",
    help=ch.GLOSSARY["tie_sd"],
)
cols[1].metric("flagged", f"{len(flagged):,}", help=FLAGGED)
cols[2].metric("flagged by chance (base rate)", about, help=BASE_RATE)
cols[3].metric(
    "largest shift",
    report.format_shift(table.loc[size.idxmax(), "delta"] if len(table) else None, digits),
    help=ch.GLOSSARY["shift"],
)
cols[4].metric(
    "largest tie sd", report.format_value(table["tie_sd"].max()), help=ch.GLOSSARY["tie_sd"]
)

# --- shift heat map: systems x measures
measures = list(dict.fromkeys(table["measure"]))
worst = table.assign(size=size).groupby("run", sort=False)["size"].max()
order = worst.sort_values(ascending=False, kind="stable").index.tolist()
shown_count = ch.top_slider(
    len(order), "overview_top", "Systems in the charts (most affected first)"
)
chosen = order[:shown_count]
#: What the charts below draw: the table's key, the systems shown, the tie-break named.
drawn = (cache.modes_key(dataset, settings, sampled=sampled, digits=digits), tuple(chosen))


def grids(frame, columns: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``columns`` of the table as systems x measures grids (NaN where there is no row)."""
    rows = pd.Index(chosen).get_indexer(frame["run"])
    cols = pd.Index(measures).get_indexer(frame["measure"])
    keep = (rows >= 0) & (cols >= 0)
    out = {}
    for column in columns:
        grid = np.full((len(chosen), len(measures)), np.nan)
        grid[rows[keep], cols[keep]] = frame[column].to_numpy(np.float64)[keep]
        out[column] = grid
    return out


def in_tie_sd(z: float) -> str:
    """The shift in tie sd for the hover (no tie sd: beyond every ordering, or none)."""
    if np.isfinite(z):
        return f"{z:+.1f} tie sd"
    return "no tie sd: beyond every ordering (float32 ties)" if np.isinf(z) else "—"


def heat_figure() -> dict:
    """The shift heat map (systems x measures), hover text with the values (plotly JSON)."""
    cells = grids(table, ("oblivious", "aware", "tie_sd", "delta", "z", "min", "max", "flagged"))
    ob, aw, sd, dd, zz, lo, hi, fl = cells.values()
    hover = np.empty(dd.shape, dtype=object)
    text = np.empty(dd.shape, dtype=object)
    for i, run in enumerate(chosen):
        for j, measure in enumerate(measures):
            if np.isnan(aw[i, j]):  # no such row
                hover[i, j] = text[i, j] = ""
                continue
            shift = report.format_shift(dd[i, j], digits)
            text[i, j] = shift + ("†" if fl[i, j] == 1 else "")
            hover[i, j] = (
                f"<b>{html.escape(describe(run))}</b> · {html.escape(measure)}<br>"
                f"{settings.tiebreak} {report.format_value(ob[i, j], digits)} vs tie-aware "
                f"{report.format_value(aw[i, j], digits)} ± {report.format_value(sd[i, j])}<br>"
                f"shift {shift} ({in_tie_sd(zz[i, j])})"
                f"{' · flagged' if fl[i, j] == 1 else ''}<br>"
                f"all tie-breaks: {report.format_value(lo[i, j])} … "
                f"{report.format_value(hi[i, j])}"
            )
    top = float(np.nanmax(np.abs(dd))) if np.isfinite(dd).any() else 0.0
    top = top if top > 0 else 1.0  # no shift at all: a flat white map
    heat = {
        "type": "heatmap",
        "z": dd,
        "x": measures,
        "y": ch.short_labels([describe(r) for r in chosen]),
        "zmid": 0,
        "zmin": -top,
        "zmax": top,
        "colorscale": "RdBu_r",
        "text": text,
        "texttemplate": "%{text}",
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>",
        "colorbar": {"title": {"text": "shift"}, "tickformat": "+.4f"},
    }
    return {"data": [heat], "layout": {}}


if varies.any() or (table["delta"] != 0).any():
    ch.show(
        heat_figure,
        "overview_z",
        cache=drawn,
        height=ch.row_height(len(chosen), per_row=24),
        legend=False,
        title=f"{settings.tiebreak} − tie-aware (red: the tie-break flatters the system)",
        yaxis={
            "autorange": "reversed",
            "type": "category",
            "dtick": 1,  # every system labelled (row_height keeps them apart)
            "title": "system (most affected first)",
        },
        xaxis={"side": "top", "title": ""},
    )
    st.caption(
        "Each cell: the shift, oblivious − tie-aware, for one system and measure, in the "
        "measure's own units (darker: larger); † marks a flagged value (larger than 2 tie sd "
        f"and showing at {digits} decimals). Hover for the values and the shift in tie sd. "
        "Systems without tie noise show 0."
    )

# --- one measure at a time: range over tie-breaks, aware ± sd, oblivious (and sampled)
st.subheader("Values in the three modes, within the range of every tie-break")
#: How the systems of the modes chart can be ordered -> the label offered.
SORTS = {
    "aware": "tie-aware value (best first)",
    "z": "|z| (most affected first)",
    "name": "name",
}


def modes_figure(measure: str, order_by: str) -> dict:
    """One measure: the min-max bar over tie-breaks, aware ± tie sd, oblivious (and sampled).

    Systems on the y axis (one labelled row each, full names on hover), values on
    x; plotly's JSON as dicts, 3-4 traces.
    """
    part = table[table["measure"] == measure].set_index("run").reindex(chosen)
    if order_by == "aware":
        part = part.sort_values("aware", ascending=False, kind="stable", na_position="last")
    elif order_by == "z":
        part = part.iloc[np.argsort(-part["z"].abs().to_numpy(np.float64), kind="stable")]
    else:
        part = part.iloc[np.argsort([describe(r).lower() for r in part.index], kind="stable")]
    names = [describe(r) for r in part.index]
    labels = ch.short_labels(names, 28)
    values = {
        c: part[c].to_numpy(np.float64)
        for c in ("min", "max", "aware", "tie_sd", "oblivious", "z", "position")
    }
    flagged_here = part["flagged"].fillna(False).to_numpy(bool)
    common = {"y": labels, "orientation": "h", "hovertext": [ch.plain(n) for n in names]}
    traces = [
        {
            "type": "bar",
            **common,
            "x": values["max"] - values["min"],
            "base": values["min"],
            "name": "min … max over all tie-breaks",
            "marker": {"color": "rgba(150,150,150,0.3)"},
            "customdata": np.column_stack([values["min"], values["max"]]),
            "hovertemplate": "%{hovertext}<br>all tie-breaks: %{customdata[0]:.4f} … "
            "%{customdata[1]:.4f}<extra></extra>",
        },
        {
            "type": "scatter",
            **common,
            "x": values["aware"],
            "mode": "markers",
            "name": "aware ± tie sd",
            "marker": {"symbol": "diamond", "size": 10, "color": ch.MODE_COLORS["aware"]},
            "error_x": {"type": "data", "array": values["tie_sd"], "visible": True},
            "customdata": values["tie_sd"],
            "hovertemplate": "%{hovertext}<br>aware %{x:.4f} ± %{customdata:.4f} (tie sd)"
            "<extra></extra>",
        },
        {
            "type": "scatter",
            **common,
            "x": values["oblivious"],
            "mode": "markers",
            "name": f"oblivious ({settings.tiebreak}); red: flagged",
            "marker": {
                "symbol": "x",
                "size": 10,
                "color": np.where(flagged_here, ch.FLAG_COLOR, "#444444"),
            },
            "customdata": np.column_stack([values["z"], values["position"]]),
            "hovertemplate": "%{hovertext}<br>oblivious %{x:.4f} (z = %{customdata[0]:+.2f}; "
            "position %{customdata[1]:.2f} of the range)<extra></extra>",
        },
    ]
    if sampled:
        sampled_sd = part["sampled_sd"].to_numpy(np.float64)
        traces.append(
            {
                "type": "scatter",
                **common,
                "x": part["sampled"].to_numpy(np.float64),
                "mode": "markers",
                "name": "sampled ± sd",
                "marker": {"symbol": "circle-open", "size": 10, "color": ch.MODE_COLORS["sampled"]},
                "error_x": {"type": "data", "array": sampled_sd, "visible": True},
                "customdata": sampled_sd,
                "hovertemplate": "%{hovertext}<br>sampled %{x:.4f} ± %{customdata:.4f} (sd)"
                "<extra></extra>",
            }
        )
    return {"data": traces, "layout": {}}


@st.fragment
def modes_chart() -> None:
    """The modes chart and its two choices: a choice reruns this part of the page only."""
    pick, sort_by = st.columns([3, 1])
    with pick:
        #: The measure with the largest |z| opens the chart; a choice is kept while it exists.
        most_affected = str(table.loc[table["z"].abs().fillna(0).idxmax(), "measure"])
        measure = ch.pick_one(
            "Measure in the chart",
            measures,
            key="overview_measure",
            default=most_affected,
            follow=lambda old: with_gain([old], settings.gain)[0][0],
            help="One measure's chart at a time (the heat map above shows every measure); the "
            "table below lists them all.",
        )
    with sort_by:
        order_by = st.selectbox(
            "Systems ordered by",
            list(SORTS),
            format_func=SORTS.get,
            key="overview_sort",
            help="|z| = |oblivious − aware| / tie sd",
        )
    ch.show(
        lambda: modes_figure(measure, order_by),
        "overview_modes",
        cache=(drawn, measure, order_by),
        height=ch.row_height(len(chosen), per_row=26, least=260),
        top=50,
        title=f"{measure}: every tie-break's range, tie-aware ± tie sd, {settings.tiebreak}",
        xaxis={"title": {"text": f"{measure} (µ, the mean over queries)"}, "zeroline": False},
        yaxis={
            "autorange": "reversed",
            "type": "category",
            "dtick": 1,
            "title": {"text": f"system ({SORTS[order_by]})"},
        },
    )
    st.caption(
        f"Grey bar: every mean a tie-break can give. Diamond: tie-aware ± 1 tie sd. ×: "
        f"{settings.tiebreak}'s value, red when flagged ({FLAGGED}). "
        f"{ch.GLOSSARY['mu_axis']}. Hover a row for the system's full name and values."
    )


modes_chart()

#: The table's columns in the order shown (the sampled ones only when drawn).
SHOWN = ["run", "measure", "oblivious", "aware", "delta", "tie_sd", "z", "visible", "flagged"]
SHOWN += ["min", "max", "position"] + (["sampled", "sampled_sd"] if sampled else [])
shown = table[SHOWN].assign(
    run=table["run"].map(describe),
    position=report.printed(table["position"], 2),  # undefined (min = max): a dash, not nan
)
shown["position"] = shown["position"].where(table["position"].notna(), report.MISSING)
# z as a paper prints it: +inf (a float32 tie no ordering of the tie-aware groups gives) as ∞
shown["z"] = [
    report.MISSING if np.isnan(z) else f"{z:+.2f}" if np.isfinite(z) else ("+∞" if z > 0 else "−∞")
    for z in table["z"].to_numpy(np.float64)
]
prov = cache.provenance(
    dataset, settings, ties="oblivious, aware" + (", sampled" if sampled else "")
)


def number(label: str, help: str, fmt: str = "%.4f"):
    return st.column_config.NumberColumn(label, help=help, format=fmt, width="small")


ch.show_table(
    shown,
    "scores by mode",
    key="download_modes",
    provenance=prov,
    column_config={
        "run": st.column_config.TextColumn("system", width="medium"),
        "measure": st.column_config.TextColumn("measure", width="small"),
        "oblivious": number(settings.tiebreak, ch.GLOSSARY["oblivious"]),
        "aware": number("tie-aware", ch.GLOSSARY["aware"]),
        "delta": number("shift", ch.GLOSSARY["shift"], "%+.4f"),
        "tie_sd": number("tie sd", ch.GLOSSARY["tie_sd"]),
        "z": st.column_config.TextColumn("z (tie sd)", help=ch.GLOSSARY["z"], width="small"),
        "visible": st.column_config.CheckboxColumn(f"shows at {digits} decimals", help=SHOWS),
        "flagged": st.column_config.CheckboxColumn("flagged", help=FLAGGED, width="small"),
        "min": number("min", ch.GLOSSARY["min"]),
        "max": number("max", ch.GLOSSARY["max"]),
        "position": st.column_config.TextColumn(
            "position in that range", help=ch.GLOSSARY["position"]
        ),
        "sampled": number("sampled", ch.GLOSSARY["sampled"]),
        "sampled_sd": number("sampled sd", "the sd of the sampled values over the tie-breaks"),
    },
    # what fits the page; the CSV keeps every column (shows at N decimals, position)
    column_order=[c for c in SHOWN if c not in ("visible", "position")],
)


def _report(kind: str, chosen_measures: list[str]) -> str:
    """The results report, built on click (tie-aware per-query values for the significance:
    the paired t-test vs the best system, Holm-corrected, as on the Rankings page)."""
    per_query = cache.quiet(
        tiecore.evaluate,
        dict(dataset.runs),
        dataset.qrels,
        list(dict.fromkeys(table["measure"])),  # those with an exact tie-aware value
        rel_level=settings.rel_level,
        per_query=True,
    )
    marks = report.significance_vs_best(per_query)
    options = {"tiebreak": settings.tiebreak, "provenance": prov, "digits": digits}
    if kind == "latex":
        return report.to_latex(table, marks, measures=chosen_measures, **options)
    return report.to_markdown(table, marks, measures=chosen_measures, **options)


in_report = st.multiselect(
    "Measures in the report",
    measures,
    default=measures,
    key="overview_report_measures",
    help="One column per measure; the LaTeX table is scaled to the width of a column "
    "(\\resizebox, graphicx package).",
)
left, right = st.columns(2)
for column, kind, suffix in ((left, "latex", "tex"), (right, "markdown", "md")):
    column.download_button(
        f"Download the results report ({'LaTeX, booktabs' if kind == 'latex' else 'Markdown'})",
        lambda kind=kind: _report(kind, in_report),
        file_name=f"tiecore_report.{suffix}",
        key=f"download_report_{kind}",
        on_click="ignore",
        icon=":material/description:",
        disabled=not in_report,
        help="systems × measures: tie-aware ± tie sd; bold: the best system; *: significantly "
        "below it (paired t-test vs the best system, Holm-corrected over all pairs, p < 0.05, "
        f"as on the Rankings page); †: flagged ({FLAGGED}). Also `tiecore report`.",
    )

# --- tie profile
st.subheader("Tie profile of each run")
st.caption(
    f"Share of tied rows: {ch.GLOSSARY['share_tied_rows']}. A tie group is a maximal set of a "
    "query's rows with one score."
)
profile, sizes = cache.tie_profiles(dataset, dataset.key)
left, right = st.columns([3, 2])  # the table's five columns need the wider side
with left:
    ch.show_table(
        profile.assign(run=profile["run"].map(describe)),
        "tie profile",
        key="download_profile",
        provenance=cache.provenance(dataset, settings, measure="(none)", ties="(none)"),
        column_config={
            "run": st.column_config.TextColumn("run", width="medium"),
            "rows": st.column_config.NumberColumn("rows", width="small"),
            "share_tied_rows": ch.share_tied_column(width="small"),
            "largest_group": st.column_config.NumberColumn(
                "largest group", help=ch.GLOSSARY["largest_group"], width="small"
            ),
            "tie_groups": st.column_config.NumberColumn(
                "tie groups", help=ch.GLOSSARY["tie_groups"], width="small"
            ),
        },
    )
with right:
    most = profile.sort_values("share_tied_rows", ascending=False)["run"].iloc[0]
    run = sb.pick_run(dataset, key="profile_run", label="Group sizes of", default=most)

    def histogram() -> go.Figure:
        """How many tie groups of each size the run has."""
        binned = ch.size_bins(sizes[sizes["run"] == run])
        return go.Figure(
            go.Bar(
                x=binned["sizes"],
                y=binned["groups"],
                marker_color=ch.MODE_COLORS["aware"],
                customdata=binned[["rows", "share_rows"]].to_numpy(),
                hovertemplate="%{y} groups of %{x} docs<br>%{customdata[0]} rows in them "
                "(%{customdata[1]:.1%} of the run)<extra></extra>",
            )
        )

    ch.show(
        histogram,
        "size_histogram",
        cache=(dataset.key, run),
        height=340,
        legend=False,
        title=f"{ch.plain(describe(run))}: tie group sizes",
        xaxis={"title": "tie group size (docs; 1 = untied)", "type": "category"},
        yaxis={"title": "number of groups (log scale)", "type": "log", "dtick": 1},
    )

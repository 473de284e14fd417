"""Overview: what ties do to each system's reported numbers, then the three modes and the ties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import tiecore
from app_lib import cache
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import report

dataset, settings = sb.context()
st.title("Overview")
ch.dataset_caption(dataset)
sb.need_measures(settings)

sampled = st.toggle(
    f"Also draw the sampled mode ({settings.samples} random tie-breaks per system)",
    key="overview_sampled",
    help="The tie-aware value and its sd are exact; sampling only estimates them, and takes "
    "a few seconds per system on large runs.",
)
sb.measures_for(settings, "spread")  # says which measures the table leaves out, and why
table = cache.modes(dataset, settings, sampled=sampled)
describe = dataset.describe

# --- the effect, in words
st.subheader("What the tie-break does to the reported numbers")
st.caption(
    f"**oblivious**: the value under one tie-break, {settings.tiebreak} "
    f"({ch.tiebreak_help(settings.tiebreak)}). **aware**: {ch.GLOSSARY['aware']}. "
    f"**tie sd**: {ch.GLOSSARY['tie_sd']}. **z** = {ch.GLOSSARY['z']}."
)
varies = table["tie_sd"] > 0
flagged = table[table["flagged"]].assign(size=lambda t: t["z"].abs())
flagged = flagged.sort_values("size", ascending=False)
if not varies.any() and flagged.empty:
    st.success(
        "No system has ties that matter for these measures: every tie-break gives the same "
        "values, so oblivious, aware and sampled agree exactly.",
        icon=":material/check_circle:",
    )
elif flagged.empty:
    largest = table.loc[table["z"].abs().idxmax()]
    st.info(
        f"No reported value moved by more than 2 tie sd. {int(varies.sum())} of {len(table)} "
        f"values carry tie noise; the largest shift: "
        f"{report.effect_sentence(largest, settings.tiebreak)}.",
        icon=":material/info:",
    )
else:
    lines = [
        f"- {report.effect_sentence(row, settings.tiebreak)}"
        for _, row in flagged.head(6).iterrows()
    ]
    more = f"\n- ... and {len(flagged) - 6} more (table below)" if len(flagged) > 6 else ""
    st.warning(
        f"**{len(flagged)} of {len(table)} values moved by more than 2 tie sd** — the number a "
        f"paper would report differs from the tie-aware value by more than tie noise:\n"
        + "\n".join(lines)
        + more,
        icon=":material/warning:",
    )
cols = st.columns(4)
cols[0].metric(
    "values with tie noise", f"{int(varies.sum())} of {len(table)}", help=ch.GLOSSARY["tie_sd"]
)
cols[1].metric("beyond 2 tie sd", len(flagged), help=ch.GLOSSARY["flagged"])
cols[2].metric("largest |z|", f"{table['z'].abs().max():.1f}", help=ch.GLOSSARY["z"])
cols[3].metric("largest tie sd", f"{table['tie_sd'].max():.4f}", help=ch.GLOSSARY["tie_sd"])

# --- z heat map: systems x measures
measures = list(dict.fromkeys(table["measure"]))
worst = table.assign(size=table["z"].abs()).groupby("run", sort=False)["size"].max()
order = worst.sort_values(ascending=False, kind="stable").index.tolist()
shown_count = ch.top_slider(
    len(order), "overview_top", "Systems in the charts (most affected first)"
)
chosen = order[:shown_count]
#: What the charts below draw: the table's key, the systems shown, the tie-break named.
drawn = (cache.modes_key(dataset, settings, sampled=sampled), tuple(chosen))


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


def heat_figure() -> dict:
    """The z heat map (systems x measures), hover text with the values (plotly JSON)."""
    cells = grids(table, ("oblivious", "aware", "tie_sd", "z", "min", "max"))
    ob, aw, sd, zz, lo, hi = cells.values()
    hover = np.empty(zz.shape, dtype=object)
    for i, run in enumerate(chosen):
        for j, measure in enumerate(measures):
            hover[i, j] = (
                ""
                if np.isnan(aw[i, j])  # no such row
                else f"<b>{describe(run)}</b> · {measure}<br>{settings.tiebreak} "
                f"{report.format_value(ob[i, j])} vs aware "
                f"{report.format_value(aw[i, j])} ± {sd[i, j]:.4f}<br>"
                f"z = {zz[i, j]:+.2f} · all tie-breaks: {lo[i, j]:.4f} … {hi[i, j]:.4f}"
            )
    z = zz
    heat = {
        "type": "heatmap",
        "z": np.clip(z, -4, 4),
        "x": measures,
        "y": ch.short_labels([describe(r) for r in chosen]),
        "zmid": 0,
        "zmin": -4,
        "zmax": 4,
        "colorscale": "RdBu_r",
        "text": np.where(
            np.isnan(z), "", np.char.mod("%+.1f", np.nan_to_num(z, posinf=np.inf, neginf=-np.inf))
        ),
        "texttemplate": "%{text}",
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>",
        "colorbar": {
            "title": {"text": "z (tie sd)"},
            "tickvals": [-4, -2, 0, 2, 4],
            "ticktext": ["≤ −4", "−2", "0", "+2", "≥ +4"],
        },
    }
    return {"data": [heat], "layout": {}}


if varies.any():
    ch.show(
        heat_figure,
        "overview_z",
        cache=drawn,
        height=ch.row_height(len(chosen), per_row=24),
        legend=False,
        title=f"{settings.tiebreak} − tie-aware, in tie sd (red: the tie-break flatters it)",
        yaxis={
            "autorange": "reversed",
            "type": "category",
            "dtick": 1,  # every system labelled (row_height keeps them apart)
            "title": "system (most affected first)",
        },
        xaxis={"side": "top", "title": ""},
    )
    st.caption(
        "Each cell: (oblivious − aware) / tie sd for one system and measure; |z| > 2 (dark cells) "
        "means the tie-break alone moved the reported value by more than 2 tie sd. Hover for the "
        "values. Systems without tie noise show 0."
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
    common = {"y": labels, "orientation": "h", "hovertext": names}
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
            "name": f"oblivious ({settings.tiebreak}); red: |z| > 2",
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
            follow=lambda old: sb.with_gain([old], settings.gain)[0][0],
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
        f"{settings.tiebreak}'s value, red when it lies more than 2 tie sd from tie-aware. "
        f"{ch.GLOSSARY['mu_axis']}. Hover a row for the system's full name and values."
    )


modes_chart()

shown = table.assign(run=table["run"].map(describe))
if not sampled:
    shown = shown.drop(columns=["sampled", "sampled_sd"])
prov = cache.provenance(
    dataset, settings, ties="oblivious, aware" + (", sampled" if sampled else "")
)
ch.show_table(
    shown,
    "scores by mode",
    key="download_modes",
    provenance=prov,
    column_config={
        "position": st.column_config.NumberColumn(help=ch.GLOSSARY["position"], format="%.2f"),
        "z": st.column_config.NumberColumn(help=ch.GLOSSARY["z"], format="%+.2f"),
    },
)


def _report(kind: str) -> str:
    """The results report, built on click (tie-aware per-query values for the significance)."""
    per_query = cache.quiet(
        tiecore.evaluate,
        dict(dataset.runs),
        dataset.qrels,
        list(dict.fromkeys(table["measure"])),  # those with an exact tie-aware value
        rel_level=settings.rel_level,
        per_query=True,
    )
    marks = report.significance_vs_best(per_query)
    write = report.to_latex if kind == "latex" else report.to_markdown
    return write(table, marks, tiebreak=settings.tiebreak, provenance=prov)


left, right = st.columns(2)
for column, kind, suffix in ((left, "latex", "tex"), (right, "markdown", "md")):
    column.download_button(
        f"Download the results report ({'LaTeX, booktabs' if kind == 'latex' else 'Markdown'})",
        lambda kind=kind: _report(kind),
        file_name=f"tiecore_report.{suffix}",
        key=f"download_report_{kind}",
        on_click="ignore",
        icon=":material/description:",
        help="systems × measures in the modes shown, aware ± tie sd, † beyond 2 tie sd, * "
        "significantly below the best system (paired t-test, p < 0.05); also `tiecore report`",
    )

# --- tie profile
st.subheader("Tie profile of each run")
st.caption(
    f"Share of tied rows: {ch.GLOSSARY['share_tied_rows']}. A tie group is a maximal set of a "
    "query's rows with one score."
)
profile, sizes = cache.tie_profiles(dataset, dataset.key)
left, right = st.columns([1, 1])
with left:
    ch.show_table(
        profile.assign(run=profile["run"].map(describe)),
        "tie profile",
        key="download_profile",
        provenance=cache.provenance(dataset, settings, measure="(none)", ties="(none)"),
        column_config={
            "share_tied_rows": st.column_config.ProgressColumn(
                "share tied",
                format="percent",
                min_value=0.0,
                max_value=1.0,
                help=ch.GLOSSARY["share_tied_rows"],
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
        title=f"{describe(run)}: tie group sizes",
        xaxis={"title": "tie group size (docs; 1 = untied)", "type": "category"},
        yaxis={"title": "number of groups (log scale)", "type": "log", "dtick": 1},
    )

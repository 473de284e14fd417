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

HOW = (
    "For every system and measure tiecore computes three numbers. **Oblivious**: the mean "
    "over queries under one tie-break ({tiebreak}), what trec_eval reports. **Tie-aware**: "
    "the exact mean over every order of the tied documents, and its **tie sd**, the exact "
    "standard deviation of the mean over random tie-breaks (sd = √variance, the variance "
    "summed over the queries' tie groups). The **shift** is oblivious − tie-aware, in the "
    "measure's own units. A value **changes as printed** when the two values differ at the "
    "decimals a paper prints; it is **flagged** when, besides, the shift is larger than 2 tie "
    "sd, more than random tie-breaking gives about 95% of the time. The **base rate** is how "
    "many values a random tie-break alone would flag (a normal approximation over the "
    "queries), the count to hold the flags against."
)


def page() -> None:
    """The page: the choices, the effect in words, the charts, the table, the tie profile."""
    dataset, settings = sb.context()
    st.title("Overview")
    ch.dataset_caption(dataset)
    ch.how_it_works(HOW.format(tiebreak=ch.tiebreak_name(settings.tiebreak)))
    sb.need_measures(settings)
    left, right = st.columns([3, 1])
    sampled = left.toggle(
        "Also draw the sampled mode",  # short: a longer label is cut at phone width
        key="overview_sampled",
        help=f"{settings.samples} random tie-breaks per system. The tie-aware value and its "
        "sd are exact; sampling only estimates them, and takes a few seconds per system on "
        "large runs.",
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
    view = View(dataset, settings, table, digits, sampled)
    st.subheader("What the tie-break does to the reported numbers")
    effect_words(view)
    heat_map(view)
    st.subheader("Values in the three modes, within the range of every tie-break")
    modes_chart(view)
    modes_table_and_report(view)
    tie_profile(view)


class View:
    """What every part of the page reads: the data, the settings, tiecore's modes table."""

    def __init__(self, dataset, settings, table, digits: int, sampled: bool) -> None:
        self.dataset, self.settings, self.table = dataset, settings, table
        self.digits, self.sampled = digits, sampled
        self.describe = dataset.describe
        self.tiebreak = ch.tiebreak_name(settings.tiebreak)
        self.measures = list(dict.fromkeys(table["measure"]))
        self.size = table["delta"].abs().fillna(0.0)
        #: What the page's words mean where they appear (flags depend on the decimals).
        self.shows = f"the shift changes the value as printed with {digits} decimals"
        self.flagged_means = f"the shift is larger than 2 tie sd and shows at {digits} decimals"
        self.base_rate = (
            "how many values random tie-breaking alone would flag: were the reported value one "
            "random tie-break, it would shift by more than 2 tie sd and show at "
            f"{digits} decimals in about this many of them (normal approximation over the "
            "queries)"
        )
        self.chosen: list[str] = []
        self.drawn: tuple = ()

    def said(self, row) -> str:
        """One value's effect as a sentence, the names as text (not Markdown)."""
        named = {
            **row,
            "run": report.escape_markdown(self.describe(row["run"])),
            "measure": report.escape_markdown(str(row["measure"])),
        }
        return report.effect_sentence(named, self.tiebreak, self.digits)


def effect_words(view: View) -> None:
    """The effect in a banner, the count that reconciles "changed" with "flagged", metrics."""
    table, digits = view.table, view.digits
    counts = report.flag_counts(table)
    flagged = table.assign(size=view.size)[table["flagged"]].sort_values("size", ascending=False)
    expected = report.expected_flags(table, digits)
    _, verdict = report.flag_verdict(len(flagged), expected)
    about = f"{expected:.0f}" if expected >= 1 else f"{expected:.1f}"
    reconcile = report.reconcile_sentence(counts, digits)
    largest = report.largest_shift(table)
    if counts["with_noise"] == 0 and flagged.empty:
        st.success(
            "No system has ties that matter for these measures: every tie-break gives the same "
            "values, so oblivious, aware and sampled agree exactly.",
            icon=":material/check_circle:",
        )
    elif flagged.empty:
        st.info(
            f"No reported value moved by more than the tie noise (2 tie sd) in a way that "
            f"shows at {digits} decimals. {reconcile} {counts['with_noise']:,} of "
            f"{len(table):,} values carry tie noise; random tie-breaking alone would flag "
            f"about {about} of them (the base rate)."
            + (f" The largest shift: {view.said(largest)}." if largest is not None else ""),
            icon=":material/info:",
        )
    else:
        lines = [f"- {view.said(row)}" for _, row in flagged.head(6).iterrows()]
        more = f"\n- ... and {len(flagged) - 6} more (table below)" if len(flagged) > 6 else ""
        st.warning(
            f"**{len(flagged):,} of {len(table):,} values moved by more than the tie noise "
            f"and show at {digits} decimals**: the number a paper would print differs from the "
            f"tie-aware value by more than 2 tie sd. {reconcile} Random tie-breaking alone "
            f"would flag about {about} of them (the base rate), so {len(flagged):,} is "
            f"{verdict}. Largest shifts first:\n" + "\n".join(lines) + more,
            icon=":material/warning:",
        )
    first, second = st.columns(3), st.columns(3)  # two rows: every label in full at 1440 px
    first[0].metric(
        "values with tie noise",
        f"{counts['with_noise']:,} of {len(table):,}",
        help=ch.GLOSSARY["tie_sd"],
    )
    first[1].metric(
        f"change at {digits} decimals",
        f"{counts['visible']:,} of {len(table):,}",
        help=f"{view.shows}; of these, {counts['flagged']:,} are flagged and "
        f"{counts['within_noise']:,} are within 2 tie sd",
    )
    first[2].metric("flagged", f"{len(flagged):,}", help=view.flagged_means)
    second[0].metric("flags expected by chance", about, help=view.base_rate)
    second[1].metric(
        "largest shift",
        report.format_shift(largest["delta"] if largest is not None else 0.0, digits),
        help=ch.GLOSSARY["shift"],
    )
    second[2].metric(
        "largest tie sd", report.format_value(table["tie_sd"].max()), help=ch.GLOSSARY["tie_sd"]
    )


def heat_map(view: View) -> None:
    """The shift of every system and measure (systems most affected first)."""
    table = view.table
    worst = table.assign(size=view.size).groupby("run", sort=False)["size"].max()
    order = worst.sort_values(ascending=False, kind="stable").index.tolist()
    count = ch.top_slider(len(order), "overview_top", "Systems in the charts (most affected first)")
    view.chosen = order[:count]
    #: What the charts below draw: the table's key, the systems shown.
    key = cache.modes_key(view.dataset, view.settings, sampled=view.sampled, digits=view.digits)
    view.drawn = (key, tuple(view.chosen))
    if not ((table["tie_sd"] > 0).any() or (table["delta"] != 0).any()):
        return
    ch.show(
        lambda: heat_figure(view),
        "overview_z",
        cache=view.drawn,
        height=ch.row_height(len(view.chosen), per_row=24),
        legend=False,
        title=f"{view.tiebreak} − tie-aware (red: the tie-break flatters the system)",
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
        f"and showing at {view.digits} decimals). Hover for the values and the shift in tie sd. "
        "Systems without tie noise show 0."
    )
    with st.expander("The same shifts as a table (readable on a phone)"):
        cells = grids(view, ("delta", "flagged"))
        text = [
            [
                "" if np.isnan(d) else report.format_shift(d, view.digits) + ("†" if f == 1 else "")
                for d, f in zip(row_d, row_f, strict=True)
            ]
            for row_d, row_f in zip(cells["delta"], cells["flagged"], strict=True)
        ]
        st.dataframe(
            pd.DataFrame(text, index=[view.describe(r) for r in view.chosen], columns=view.measures)
        )


def grids(view: View, columns: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``columns`` of the table as systems x measures grids (NaN where there is no row)."""
    frame = view.table
    rows = pd.Index(view.chosen).get_indexer(frame["run"])
    cols = pd.Index(view.measures).get_indexer(frame["measure"])
    keep = (rows >= 0) & (cols >= 0)
    out = {}
    for column in columns:
        grid = np.full((len(view.chosen), len(view.measures)), np.nan)
        grid[rows[keep], cols[keep]] = frame[column].to_numpy(np.float64)[keep]
        out[column] = grid
    return out


def in_tie_sd(z: float) -> str:
    """The shift in tie sd for the hover (no tie sd: beyond every ordering, or none)."""
    if np.isfinite(z):
        return f"{z:+.1f} tie sd"
    return "no tie sd: beyond every ordering (float32 ties)" if np.isinf(z) else "no tie noise"


def heat_figure(view: View) -> dict:
    """The shift heat map (systems x measures), hover text with the values (plotly JSON)."""
    cells = grids(view, ("oblivious", "aware", "tie_sd", "delta", "z", "min", "max", "flagged"))
    ob, aw, sd, dd, zz, lo, hi, fl = cells.values()
    digits = view.digits
    hover = np.empty(dd.shape, dtype=object)
    text = np.empty(dd.shape, dtype=object)
    for i, run in enumerate(view.chosen):
        for j, measure in enumerate(view.measures):
            if np.isnan(aw[i, j]):  # no such row
                hover[i, j] = text[i, j] = ""
                continue
            shift = report.format_shift(dd[i, j], digits)
            text[i, j] = shift + ("†" if fl[i, j] == 1 else "")
            hover[i, j] = (
                f"<b>{html.escape(view.describe(run))}</b> · {html.escape(measure)}<br>"
                f"{view.tiebreak} {report.format_value(ob[i, j], digits)} vs tie-aware "
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
        "x": view.measures,
        "y": ch.short_labels([view.describe(r) for r in view.chosen]),
        "zmid": 0,
        "zmin": -top,
        "zmax": top,
        "colorscale": "RdBu_r",
        "text": text,
        "texttemplate": "%{text}",
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>",
        "colorbar": {"title": {"text": "shift"}, "tickformat": "+.2~g"},
    }
    return {"data": [heat], "layout": {}}


#: How the systems of the modes chart can be ordered -> the label offered.
SORTS = {
    "aware": "tie-aware value (best first)",
    "shift": "|shift| (most moved first)",
    "z": "|z| (most affected in tie sd first)",
    "name": "name",
}


def modes_order(view: View, part: pd.DataFrame, order_by: str) -> pd.DataFrame:
    """The rows of one measure in the order chosen (a stable sort)."""
    if order_by == "aware":
        return part.sort_values("aware", ascending=False, kind="stable", na_position="last")
    if order_by in ("z", "shift"):
        size = part["z" if order_by == "z" else "delta"].abs().to_numpy(np.float64)
        return part.iloc[np.argsort(-np.nan_to_num(size), kind="stable")]
    return part.iloc[np.argsort([view.describe(r).lower() for r in part.index], kind="stable")]


def modes_figure(view: View, measure: str, order_by: str) -> dict:
    """One measure: the min-max bar over tie-breaks, aware ± tie sd, oblivious (and sampled).

    Systems on the y axis (one labelled row each, full names on hover), values on
    x; plotly's JSON as dicts, 3-4 traces.
    """
    table = view.table
    part = table[table["measure"] == measure].set_index("run").reindex(view.chosen)
    part = modes_order(view, part, order_by)
    names = [view.describe(r) for r in part.index]
    values = {
        c: part[c].to_numpy(np.float64)
        for c in ("min", "max", "aware", "tie_sd", "oblivious", "z", "position")
    }
    flagged_here = part["flagged"].fillna(False).to_numpy(bool)
    common = {
        "y": ch.short_labels(names, 28),
        "orientation": "h",
        "hovertext": [ch.plain(n) for n in names],
    }
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
            "name": f"oblivious ({view.tiebreak}); red: flagged",
            "marker": {
                "symbol": "x",
                "size": 10,
                "color": np.where(flagged_here, ch.FLAG_COLOR, "#444444"),
            },
            "customdata": np.array(  # z (a number), then in words: z, the position
                [
                    [z, in_tie_sd(z), report.format_value(p, 2)]
                    for z, p in zip(values["z"], values["position"], strict=True)
                ],
                dtype=object,
            ),
            "hovertemplate": "%{hovertext}<br>oblivious %{x:.4f} (%{customdata[1]}; position "
            "%{customdata[2]} of the range)<extra></extra>",
        },
    ]
    if view.sampled:
        traces.append(_sampled_trace(part, common))
    return {"data": traces, "layout": {}}


def _sampled_trace(part: pd.DataFrame, common: dict) -> dict:
    """The sampled mean ± its sd, one marker per system (plotly JSON)."""
    sampled_sd = part["sampled_sd"].to_numpy(np.float64)
    return {
        "type": "scatter",
        **common,
        "x": part["sampled"].to_numpy(np.float64),
        "mode": "markers",
        "name": "sampled ± sd",
        "marker": {"symbol": "circle-open", "size": 10, "color": ch.MODE_COLORS["sampled"]},
        "error_x": {"type": "data", "array": sampled_sd, "visible": True},
        "customdata": sampled_sd,
        "hovertemplate": "%{hovertext}<br>sampled %{x:.4f} ± %{customdata:.4f} (sd)<extra></extra>",
    }


@st.fragment
def modes_chart(view: View) -> None:
    """The modes chart and its two choices: a choice reruns this part of the page only."""
    pick, sort_by = st.columns([3, 1])
    with pick:
        #: The measure with the largest shift (what a paper would print) opens the chart; a
        #: choice is kept while it exists.
        largest = report.largest_shift(view.table)
        measure = ch.pick_one(
            "Measure in the chart",
            view.measures,
            key="overview_measure",
            default=str(largest["measure"]) if largest is not None else None,
            follow=lambda old: with_gain([old], view.settings.gain)[0][0],
            help="It opens on the measure with the largest shift; one measure's chart at a "
            "time (the heat map above shows every measure); the table below lists them all.",
        )
    with sort_by:
        order_by = st.selectbox(
            "Systems ordered by",
            list(SORTS),
            format_func=SORTS.get,
            key="overview_sort",
            help="|shift| = |oblivious − aware|; |z| = |shift| / tie sd",
        )
    ch.show(
        lambda: modes_figure(view, measure, order_by),
        "overview_modes",
        cache=(view.drawn, measure, order_by),
        height=ch.row_height(len(view.chosen), per_row=26, least=260),
        top=50,
        title=f"{measure}: every tie-break's range, tie-aware ± tie sd, {view.tiebreak}",
        xaxis={"title": {"text": f"{measure} (µ)"}, "zeroline": False},
        yaxis={
            "autorange": "reversed",
            "type": "category",
            "dtick": 1,
            "title": {"text": f"system ({SORTS[order_by]})"},
        },
    )
    st.caption(
        f"Grey bar: every mean a tie-break can give. Diamond: tie-aware ± 1 tie sd. ×: "
        f"{view.tiebreak}'s value, red when flagged ({view.flagged_means}). "
        f"{ch.GLOSSARY['mu_axis']}. Hover a row for the system's full name and values."
    )


def number(label: str, help: str, fmt: str = "%.4f"):
    return st.column_config.NumberColumn(label, help=help, format=fmt, width="small")


def modes_table_and_report(view: View) -> None:
    """Every value in a table, and the results report (LaTeX or Markdown) to download."""
    table, digits, sampled = view.table, view.digits, view.sampled
    #: The table's columns in the order shown (the sampled ones only when drawn).
    columns = ["run", "measure", "oblivious", "aware", "delta", "tie_sd", "z", "visible"]
    columns += ["flagged", "min", "max", "position"] + (["sampled", "sampled_sd"] * sampled)
    shown = table[columns].assign(
        run=table["run"].map(view.describe),
        # as a paper prints them: a shift too small for the decimals keeps one significant
        # digit (never -0.0000), an undefined position a dash, +inf (beyond every ordering) +∞
        delta=[report.format_shift(d, digits) for d in table["delta"]],
        position=[report.format_value(p, 2) for p in table["position"]],
        z=[report.format_z(z) for z in table["z"]],
    )
    prov = cache.provenance(
        view.dataset, view.settings, ties="oblivious, aware" + (", sampled" if sampled else "")
    )
    ch.show_table(
        shown,
        "scores by mode",
        key="download_modes",
        provenance=prov,
        numbers=table[columns].assign(run=table["run"].map(view.describe)),  # the CSV
        column_config={
            "run": st.column_config.TextColumn("system"),
            "measure": st.column_config.TextColumn("measure", width="small"),
            "oblivious": number(view.tiebreak, ch.GLOSSARY["oblivious"]),
            "aware": number("tie-aware", ch.GLOSSARY["aware"]),
            "delta": st.column_config.TextColumn("shift", help=ch.GLOSSARY["shift"], width="small"),
            "tie_sd": number("tie sd", ch.GLOSSARY["tie_sd"]),
            "z": st.column_config.TextColumn("z (tie sd)", help=ch.GLOSSARY["z"], width="small"),
            "visible": st.column_config.CheckboxColumn(
                f"shows at {digits} decimals", help=view.shows
            ),
            "flagged": st.column_config.CheckboxColumn(
                "flagged", help=view.flagged_means, width="small"
            ),
            "min": number("min", ch.GLOSSARY["min"]),
            "max": number("max", ch.GLOSSARY["max"]),
            "position": st.column_config.TextColumn(
                "position in that range", help=ch.GLOSSARY["position"]
            ),
            "sampled": number("sampled", ch.GLOSSARY["sampled"]),
            "sampled_sd": number("sampled sd", "the sd of the sampled values over the tie-breaks"),
        },
        # what fits the page; the CSV keeps every column (shows at N decimals, position)
        column_order=[c for c in columns if c not in ("visible", "position")],
    )
    report_downloads(view, prov)


def _report(view: View, prov: dict, kind: str, chosen_measures: list[str]) -> str:
    """The results report, built on click (tie-aware per-query values for the significance:
    the paired t-test vs the best system, Holm-corrected, as on the Rankings page)."""
    per_query = cache.quiet(
        tiecore.evaluate,
        dict(view.dataset.runs),
        view.dataset.qrels,
        view.measures,  # those with an exact tie-aware value
        rel_level=view.settings.rel_level,
        per_query=True,
    )
    marks = report.significance_vs_best(per_query)
    options = {"tiebreak": view.settings.tiebreak, "provenance": prov, "digits": view.digits}
    if kind == "latex":
        return report.to_latex(view.table, marks, measures=chosen_measures, **options)
    return report.to_markdown(view.table, marks, measures=chosen_measures, **options)


def report_downloads(view: View, prov: dict) -> None:
    """The measures of the report and its two download buttons."""
    in_report = st.multiselect(
        "Measures in the report",
        view.measures,
        default=view.measures,
        key="overview_report_measures",
        help="One column per measure; the LaTeX table is scaled to the width of a column "
        "(\\resizebox, graphicx package).",
    )
    left, right = st.columns(2)
    for column, kind, suffix in ((left, "latex", "tex"), (right, "markdown", "md")):
        column.download_button(
            f"Download the results report ({'LaTeX, booktabs' if kind == 'latex' else 'Markdown'})",
            lambda kind=kind: _report(view, prov, kind, in_report),
            file_name=f"tiecore_report.{suffix}",
            key=f"download_report_{kind}",
            on_click="ignore",
            icon=":material/description:",
            disabled=not in_report,
            help="systems × measures: tie-aware ± tie sd; bold: the best system; *: "
            "significantly below it (paired t-test vs the best system, Holm-corrected over all "
            f"pairs, p < 0.05, as on the Rankings page); †: flagged ({view.flagged_means}). "
            "Also `tiecore report`.",
        )


def tie_profile(view: View) -> None:
    """Each run's share of tied rows and tie groups, and one run's group sizes."""
    dataset, describe = view.dataset, view.describe
    st.subheader("Tie profile of each run")
    st.caption(
        f"Share of tied rows: {ch.GLOSSARY['share_tied_rows']}. A tie group is a maximal set "
        "of a query's rows with one score."
    )
    profile, sizes = cache.tie_profiles(dataset, dataset.key)
    # the table first, full width (a long name whole), then one run's group sizes
    ch.show_table(
        profile.assign(run=profile["run"].map(describe)),
        "tie profile",
        key="download_profile",
        provenance=cache.provenance(dataset, view.settings, measure="(none)", ties="(none)"),
        column_config={
            "run": st.column_config.TextColumn("run"),
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
    left, _ = st.columns([2, 1])
    with left:
        most = profile.sort_values("share_tied_rows", ascending=False)["run"].iloc[0]
        run = sb.pick_run(dataset, key="profile_run", label="Group sizes of", default=most)
        ch.show(
            lambda: histogram(sizes, run),
            "size_histogram",
            cache=(dataset.key, run),
            height=340,
            legend=False,
            title=f"{ch.plain(describe(run))}: tie group sizes",
            xaxis={"title": "tie group size (docs; 1 = untied)", "type": "category"},
            yaxis={"title": "number of groups (log scale)", "type": "log", "dtick": 1},
        )


def histogram(sizes: pd.DataFrame, run: str) -> go.Figure:
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


page()

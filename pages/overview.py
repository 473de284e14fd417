"""Overview: every chosen measure of every system in the three tie modes, and each run's ties."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

import app_support as sup

dataset, settings = sup.context()
st.title("Overview")
sup.dataset_caption(dataset)
sup.need_measures(settings)

table = sup.modes_table(dataset, settings)

st.subheader("Three ways to score tied documents")
st.caption(
    f"**oblivious**: one order inside each tie ({settings.tiebreak}: "
    f"{sup.TIEBREAK_HELP[settings.tiebreak]}). **aware**: the exact mean over every order "
    f"(McSherry & Najork 2008). **sampled**: the mean over {settings.samples} random orders "
    f"(seed {settings.seed}). Error bars: ±1 standard deviation of the system's mean over random "
    "tie-breaks — exact for *aware*, estimated for *sampled*."
)

measures = list(settings.measures)
layout, axes = sup.stacked_layout(len(measures), titles=measures)
labels = table["run"].map(dataset.describe)
traces = []
for row, (measure, (x_axis, y_axis)) in enumerate(zip(measures, axes, strict=True)):
    part = table["measure"] == measure
    hover = table.loc[part, ["min", "max", "exact_std", "sampled_std"]].to_numpy()
    for mode in ("oblivious", "aware", "sampled"):
        error = {"oblivious": None, "aware": "exact_std", "sampled": "sampled_std"}[mode]
        traces.append(
            go.Bar(
                x=labels[part],
                y=table.loc[part, mode],
                xaxis=x_axis,
                yaxis=y_axis,
                name=mode,
                legendgroup=mode,
                showlegend=row == 0,
                marker_color=sup.MODE_COLORS[mode],
                error_y=dict(array=table.loc[part, error], visible=True) if error else None,
                customdata=hover,
                hovertemplate=(
                    f"<b>%{{x}}</b><br>{measure} ({mode}): %{{y:.4f}}<br>"
                    "over all tie-breaks: min %{customdata[0]:.4f}, max %{customdata[1]:.4f}<br>"
                    "exact sd %{customdata[2]:.4f}, sampled sd %{customdata[3]:.4f}<extra></extra>"
                ),
            )
        )
    layout[y_axis.replace("y", "yaxis")]["title"] = f"{measure} (0–1)"
layout[axes[-1][0].replace("x", "xaxis")]["title"] = "system"
figure = go.Figure(traces, layout)
figure.update_layout(
    barmode="group",
    height=220 + 230 * len(measures),
    legend=dict(title="mode", orientation="h", y=1.02, yanchor="bottom", x=0),
    margin=dict(t=70),
)
st.plotly_chart(figure, key="modes_chart")

shown = table.copy()
shown["run"] = shown["run"].map(dataset.describe)
sup.show_table(
    shown,
    "scores by mode",
    key="download_modes",
    hide_index=True,
    column_config={
        c: st.column_config.NumberColumn(format="%.4f")
        for c in ["oblivious", "aware", "sampled", "sampled_std", "exact_std", "min", "max"]
    },
)
st.caption(
    "min / max: the lowest and highest mean the system can get over every tie-break. "
    "Where oblivious falls outside aware ± a few sd, the tie-break alone moved the score."
)

st.subheader("Tie profile of each run")
st.caption(
    "Share of tied rows: rows whose score equals another row's score in the same query. "
    "A tie group is a maximal set of a query's rows with one score."
)
profile, sizes = sup.tie_profiles(dataset, dataset.key)
left, right = st.columns([1, 1])
with left:
    shown = profile.assign(run=profile["run"].map(dataset.describe))
    sup.show_table(
        shown,
        "tie profile",
        key="download_profile",
        hide_index=True,
        column_config={
            "share_tied_rows": st.column_config.ProgressColumn(
                "share tied", format="percent", min_value=0.0, max_value=1.0
            ),
            "largest_group": st.column_config.NumberColumn("largest group"),
            "tie_groups": st.column_config.NumberColumn("groups of 2+"),
        },
    )
with right:
    run = sup.pick_run(dataset, key="profile_run", label="Group sizes of")
    part = sup.size_bins(sizes[sizes["run"] == run])
    histogram = go.Figure(
        go.Bar(
            x=part["sizes"],
            y=part["groups"],
            marker_color=sup.MODE_COLORS["aware"],
            customdata=part[["rows", "share_rows"]].to_numpy(),
            hovertemplate=(
                "%{y} groups of %{x} docs<br>%{customdata[0]} rows in them "
                "(%{customdata[1]:.1%} of the run)<extra></extra>"
            ),
        )
    )
    histogram.update_layout(
        height=340,
        margin=dict(t=40),
        xaxis=dict(title="tie group size (docs; 1 = untied)", type="category"),
        yaxis=dict(title="number of groups (log scale)", type="log", dtick=1),
        title=f"{dataset.describe(run)}: tie group sizes",
    )
    st.plotly_chart(histogram, key="size_histogram")

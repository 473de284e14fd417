"""Variance: how much random tie-breaking moves a system's value, per query and overall."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import app_support as sup

dataset, settings = sup.context()
st.title("Variance from tie-breaking")
sup.dataset_caption(dataset)
st.caption(
    "Each random tie-break gives one value per query. The tie-aware value is their exact mean; "
    "tiecore also gives their exact variance, so the samples only illustrate what is known."
)

left, right = st.columns(2)
with right:
    measure = sup.pick_measure(settings, key="variance_measure")
overall = sup.spread_table(dataset, settings, measures=[measure])
noisiest = overall.sort_values("var", ascending=False)["run"].iloc[0]
with left:
    run = sup.pick_run(
        dataset, key="variance_run", default=noisiest, label="System (noisiest first chosen)"
    )

samples = sup.sampled_values(dataset, settings, run, measure)
exact = sup.spread_table(dataset, settings, measures=[measure], per_query=True)
exact = exact[(exact["run"] == run) & (exact["qid"] != "all")].set_index("qid")
exact = exact.loc[samples.columns]
exact["sd"] = np.sqrt(exact["var"])
queries = len(exact)
mean_var = float(overall.loc[overall["run"] == run, "var"].iloc[0])  # sum of query vars / Q**2
sample_means = samples.mean(axis=1)

cols = st.columns(4)
cols[0].metric("aware (exact mean)", f"{exact['value'].mean():.4f}")
cols[1].metric(f"sampled mean ({settings.samples})", f"{sample_means.mean():.4f}")
cols[2].metric("exact sd of the mean", f"{np.sqrt(mean_var):.5f}")
cols[3].metric("sampled sd of the mean", f"{sample_means.std(ddof=1):.5f}")

# --- per-query distributions
st.subheader("Sampled values per query")
tied = exact[exact["var"] > 0].sort_values("var", ascending=False)
if tied.empty:
    st.info(
        f"No query of {run} has tie variance for {measure}: every tie-break gives the same value."
    )
    st.stop()
if len(tied) > 1:
    top = st.slider(
        "Queries shown (most tie variance first)",
        1,
        len(tied),
        min(20, len(tied)),
        key="variance_top",
    )
else:
    top = 1
    st.caption(f"Only one query of {run} has tie variance for {measure}: query {tied.index[0]}.")
order = tied.index[:top].tolist()
box = go.Figure()
box.add_trace(
    go.Box(
        x=np.repeat(order, len(samples)),
        y=samples[order].to_numpy().T.ravel(),
        name="sampled",
        marker_color=sup.MODE_COLORS["sampled"],
        boxpoints=False,
        hovertemplate="query %{x}<br>sampled value %{y:.4f}<extra></extra>",
    )
)
box.add_trace(
    go.Scatter(
        x=order,
        y=exact.loc[order, "value"],
        mode="markers",
        name="exact mean ± sd",
        marker=dict(symbol="diamond", size=10, color=sup.MODE_COLORS["aware"]),
        error_y=dict(type="data", array=exact.loc[order, "sd"], visible=True),
        customdata=exact.loc[order, ["sd", "min", "max"]].to_numpy(),
        hovertemplate=(
            "query %{x}<br>exact mean %{y:.4f} ± %{customdata[0]:.4f}<br>"
            "range %{customdata[1]:.4f} … %{customdata[2]:.4f}<extra></extra>"
        ),
    )
)
box.update_layout(
    height=420,
    xaxis=dict(title="query (most tie variance first)", type="category"),
    yaxis=dict(title=f"{measure} of the query (0–1)"),
    legend=dict(orientation="h", y=1.02, yanchor="bottom"),
    margin=dict(t=40),
)
st.plotly_chart(box, key="variance_box")
st.caption(
    "Boxes: the sampled values (quartiles, whiskers). Diamonds: the exact mean ± 1 exact sd."
)

# --- convergence
st.subheader("The sampled mean converges to the tie-aware value")
n = np.arange(1, len(sample_means) + 1)
running = np.cumsum(sample_means.to_numpy()) / n
aware = float(exact["value"].mean())
band = 2 * np.sqrt(mean_var / n)
line = go.Figure()
line.add_trace(
    go.Scatter(
        x=np.concatenate([n, n[::-1]]),
        y=np.concatenate([aware + band, (aware - band)[::-1]]),
        fill="toself",
        fillcolor="rgba(31,119,180,0.15)",
        line=dict(width=0),
        name="aware ± 2 sd/√n",
        hoverinfo="skip",
    )
)
line.add_trace(
    go.Scatter(
        x=n,
        y=running,
        mode="lines",
        name="running sampled mean",
        line=dict(color=sup.MODE_COLORS["sampled"]),
        hovertemplate="%{x} samples: mean %{y:.5f}<extra></extra>",
    )
)
line.add_hline(y=aware, line=dict(color=sup.MODE_COLORS["aware"], dash="dash"))
line.update_layout(
    height=360,
    xaxis=dict(title="number of random tie-breaks (log scale)", type="log"),
    yaxis=dict(title=f"mean {measure} over {queries} queries"),
    legend=dict(orientation="h", y=1.02, yanchor="bottom"),
    margin=dict(t=40),
)
st.plotly_chart(line, key="variance_convergence")
st.caption(
    "Dashed: the exact tie-aware mean. The band is where 95% of sampled means should lie; it "
    "narrows as 1/√n, so each extra digit of accuracy costs 100 times more samples."
)

# --- which tie groups the variance comes from
st.subheader("Queries ordered by tie variance, split by tie group")
groups = sup.tie_groups(dataset, dataset.key, run, measure, settings.rel_level, None)
groups = groups[groups["qid"].isin(order) & (groups["var_share"] > 0)].copy()
groups["var_part"] = groups["qid"].map(exact["var"]) * groups["var_share"]
groups["ordinal"] = groups.groupby("qid").cumcount() + 1
stack = go.Figure()
for ordinal, part in groups.groupby("ordinal"):
    stack.add_trace(
        go.Bar(
            x=part["qid"],
            y=part["var_part"],
            name=f"group #{ordinal}" if ordinal <= 5 else "later groups",
            legendgroup=str(min(ordinal, 6)),
            showlegend=ordinal <= 6,
            customdata=part[["start_rank", "end_rank", "size", "relevant", "var_share"]].to_numpy(),
            hovertemplate=(
                "query %{x}: ranks %{customdata[0]}–%{customdata[1]}, %{customdata[2]} docs, "
                "%{customdata[3]} relevant<br>variance %{y:.3g} (%{customdata[4]:.1%} of the "
                "query's)<extra></extra>"
            ),
        )
    )
stack.update_layout(
    barmode="stack",
    height=400,
    xaxis=dict(title="query", type="category", categoryorder="array", categoryarray=order),
    yaxis=dict(title=f"variance of {measure} (value²)"),
    legend=dict(title="mixed tie group, top down", orientation="h", y=1.02, yanchor="bottom"),
    margin=dict(t=60),
)
st.plotly_chart(stack, key="variance_groups")
zero = queries - len(tied)
st.caption(
    f"Each bar is a query's exact tie variance; its segments are the tie groups whose order "
    f"matters (mixed groups above the cutoff). {zero} of {queries} queries have none."
)
table = exact.drop(columns=["run"], errors="ignore").reset_index()
table["sampled_mean"] = samples.mean().reindex(table["qid"]).to_numpy()
table["sampled_sd"] = samples.std(ddof=1).reindex(table["qid"]).to_numpy()
with st.expander("Per-query table"):
    sup.show_table(
        table.sort_values("var", ascending=False),
        f"variance {run} {measure}",
        key="download_variance",
        hide_index=True,
    )

# --- one query in detail
st.subheader("One query: sampled histogram and exact distribution")
qid = st.selectbox("Query", order, key=f"variance_qid_{run}_{measure}")
values = samples[qid]
histogram = go.Figure()
counts = values.round(12).value_counts(normalize=True).sort_index()
if len(counts) <= 60:  # few distinct values: one bar per value, comparable with the exact dots
    histogram.add_trace(
        go.Bar(
            x=counts.index,
            y=counts.to_numpy(),
            name=f"{len(values)} samples",
            marker_color=sup.MODE_COLORS["sampled"],
            opacity=0.7,
            hovertemplate="value %{x:.4f}<br>share of samples %{y:.3f}<extra></extra>",
        )
    )
else:
    histogram.add_trace(
        go.Histogram(
            x=values,
            histnorm="probability",
            name=f"{len(values)} samples",
            marker_color=sup.MODE_COLORS["sampled"],
            opacity=0.7,
            hovertemplate="values %{x}<br>share of samples %{y:.3f}<extra></extra>",
        )
    )
distribution = sup.distribution(dataset, dataset.key, run, measure, settings.rel_level, qid)
if distribution is not None and len(distribution) <= 400:
    histogram.add_trace(
        go.Scatter(
            x=distribution["value"],
            y=distribution["probability"],
            mode="markers",
            name="exact probability",
            marker=dict(color=sup.MODE_COLORS["aware"], size=7),
            hovertemplate="value %{x:.4f}<br>probability %{y:.4f}<extra></extra>",
        )
    )
mean, sd = float(exact.loc[qid, "value"]), float(exact.loc[qid, "sd"])
for x, dash in ((mean, "solid"), (mean - sd, "dot"), (mean + sd, "dot")):
    histogram.add_vline(x=x, line=dict(color=sup.MODE_COLORS["aware"], dash=dash))
histogram.update_layout(
    height=340,
    xaxis=dict(title=f"{measure} of query {qid}"),
    yaxis=dict(title="probability"),
    legend=dict(orientation="h", y=1.02, yanchor="bottom"),
    margin=dict(t=40),
    bargap=0.05,
)
st.plotly_chart(histogram, key="variance_histogram")
st.caption(
    f"Solid line: the exact mean {mean:.4f}; dotted: ± 1 exact sd ({sd:.4f}). Dots: the exact "
    "probability of each value over all orderings (when few enough to list); bars: the samples."
)

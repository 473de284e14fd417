"""Scoring functions side by side: LETOR features as systems, the paper's feature-selection case."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import app_support as sup

dataset, settings = sup.context()
st.title("Scoring functions side by side")
if dataset.kind != "letor":
    dataset = sup.mslr_sample()
    st.info(
        "This page ranks the features of a LETOR file. The sidebar's source holds TREC runs, so it "
        "shows the bundled MSLR-WEB10K sample (all features); choose that sample or upload a LETOR "
        "file in the sidebar to pick the features."
    )
sup.dataset_caption(dataset)
st.caption(
    "Each feature column used alone as a score is a ranking function. Most features are discrete "
    "(counts, flags), so many documents tie, and the tie-break decides much of their value — "
    "and which features look best (McSherry & Najork 2008, Section 5)."
)
if len(dataset.runs) < 2:
    st.info("Choose at least two features in the sidebar.")
    st.stop()

left, right = st.columns(2)
with left:
    measure = sup.pick_measure(settings, key="features_measure")
with right:
    k = st.number_input(
        "Top-k features for selection",
        1,
        len(dataset.runs),
        min(10, len(dataset.runs)),
        key="features_k",
        help="a feature whose membership of the top k depends on the tie-break is flagged",
    )

values = sup.policy_table(dataset, settings, measure)
profile, _ = sup.tie_profiles(dataset, dataset.key)
profile = profile.set_index("run")
ranks = values.rank(ascending=False, method="min")
arbitrary = ranks[list(sup.ARBITRARY)]
table = values.copy()
table.insert(0, "name", [dataset.descriptions.get(f, "") for f in table.index])
table.insert(1, "share_tied_rows", profile.loc[table.index, "share_tied_rows"])
table["rank_aware"] = ranks["aware"]
table["rank_trec_eval"] = ranks["trec_eval"]
table["best_rank"] = arbitrary.min(axis=1)
table["worst_rank"] = arbitrary.max(axis=1)
table["rank_range"] = table["worst_rank"] - table["best_rank"]
table["rank_depends_on_tiebreak"] = table["rank_range"] > 0
table["top_k_depends_on_tiebreak"] = (table["best_rank"] <= k) & (table["worst_rank"] > k)
table = table.sort_values(["aware", "trec_eval"], ascending=False)

depends = int(table["rank_depends_on_tiebreak"].sum())
flip = table[table["top_k_depends_on_tiebreak"]]
cols = st.columns(4)
cols[0].metric("features", len(table))
cols[1].metric("rank depends on the tie-break", depends)
cols[2].metric("largest rank change", f"{table['rank_range'].max():g} places")
cols[3].metric(f"in or out of the top {k} by tie-break", len(flip))
st.caption(
    f"Tie-breaks compared: {', '.join(sup.ARBITRARY)} — the arbitrary orders evaluation tools "
    "use. Optimistic and pessimistic are bounds, shown as the grey bars below."
)
if len(flip):
    st.markdown(
        f"**Features whose place in the top {k} depends on tie-breaking:** "
        + ", ".join(f"{f} ({dataset.descriptions.get(f, f)})" for f in flip.index)
    )

# --- value range per feature
st.subheader(f"{measure} of each feature: tie-aware and the range over tie-breaks")
labels = table.index.tolist()
names = [dataset.describe(f) for f in table.index]
figure = go.Figure()
figure.add_trace(
    go.Bar(
        x=labels,
        y=table["optimistic"] - table["pessimistic"],
        base=table["pessimistic"],
        name="pessimistic … optimistic",
        marker_color="rgba(127,127,127,0.35)",
        hovertext=names,
        customdata=table[["pessimistic", "optimistic", "share_tied_rows"]].to_numpy(),
        hovertemplate=(
            "%{hovertext}<br>pessimistic %{customdata[0]:.4f} … optimistic "
            "%{customdata[1]:.4f}<br>"
            "share of tied rows %{customdata[2]:.1%}<extra></extra>"
        ),
    )
)
for column, symbol, color in (
    ("aware", "diamond", sup.MODE_COLORS["aware"]),
    ("trec_eval", "x", "#d62728"),
):
    figure.add_trace(
        go.Scatter(
            x=labels,
            y=table[column],
            mode="markers",
            name=column,
            marker=dict(symbol=symbol, size=8, color=color),
            hovertext=names,
            customdata=table[f"rank_{column}"].to_numpy(),
            hovertemplate=(
                f"%{{hovertext}}<br>{column} %{{y:.4f}} (rank %{{customdata:g}})<extra></extra>"
            ),
        )
    )
figure.update_layout(
    height=460,
    xaxis=dict(title="feature (best tie-aware value first)", tickangle=-90, tickfont=dict(size=9)),
    yaxis=dict(title=f"{measure} (0–1)"),
    legend=dict(orientation="h", y=1.02, yanchor="bottom"),
    margin=dict(t=40),
)
st.plotly_chart(figure, key="features_range")
st.caption(
    "Grey bar: every value a tie-break can give, from relevant-last to relevant-first. Diamond: "
    "tie-aware (the mean over all tie-breaks). ×: trec_eval's docno-descending tie-break."
)

# --- ties explain the error
st.subheader("More ties, more arbitrary scores")
scatter = go.Figure(
    go.Scatter(
        x=table["share_tied_rows"],
        y=(table["trec_eval"] - table["aware"]),
        mode="markers",
        text=names,
        marker=dict(
            size=8 + 2 * np.minimum(table["worst_rank"] - table["best_rank"], 10),
            color=np.where(table["rank_depends_on_tiebreak"], "#d62728", "#7f7f7f"),
        ),
        customdata=table[["best_rank", "worst_rank"]].to_numpy(),
        hovertemplate=(
            "%{text}<br>share tied %{x:.1%}<br>trec_eval − aware %{y:+.4f}<br>"
            "rank %{customdata[0]:g} … %{customdata[1]:g} over tie-breaks<extra></extra>"
        ),
    )
)
scatter.add_hline(y=0, line=dict(color="black", dash="dash"))
scatter.update_layout(
    height=400,
    xaxis=dict(title="share of rows tied within their query", tickformat=".0%"),
    yaxis=dict(title=f"trec_eval − tie-aware ({measure})"),
    margin=dict(t=20),
)
st.plotly_chart(scatter, key="features_ties")
st.caption(
    "Red: features whose rank changes with the tie-break (bigger dot: larger rank range). "
    "Far from the dashed line, trec_eval's score owes much to docno order, not to the feature."
)

sup.show_table(
    table.reset_index(),
    f"features {measure}",
    key="download_features",
    hide_index=True,
    column_config={
        "share_tied_rows": st.column_config.ProgressColumn(
            "share tied", format="percent", min_value=0.0, max_value=1.0
        ),
        **{c: st.column_config.NumberColumn(format="%.4f") for c in ["aware", *sup.POLICIES]},
    },
)

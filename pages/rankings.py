"""System rankings: how tie treatment reorders systems, and whether the order means anything."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import app_support as sup

dataset, settings = sup.context()
st.title("System rankings")
sup.dataset_caption(dataset)
st.caption(
    "Systems ranked by one measure under every oblivious tie-break, tie-aware, and the random "
    "tie-breaks; then compared pair by pair (tiecore.compare)."
)
if len(dataset.runs) < 2:
    st.info("Rankings need at least two systems.")
    st.stop()

left, right = st.columns([1, 2])
with left:
    measure = sup.pick_measure(settings, key="rankings_measure")
aware = sup.evaluate(dataset, settings, "aware", measures=[measure])
best = aware.sort_values("value", ascending=False)["run"].tolist()
with right:
    names = st.multiselect(
        "Systems",
        dataset.names,
        default=best[:20] if len(best) > 20 else dataset.names,
        key=f"rankings_runs_{dataset.key}",
        format_func=dataset.describe,
        help="pairwise tests grow with the square of the number of systems",
    )
if len(names) < 2:
    st.info("Choose at least two systems.")
    st.stop()

result = sup.comparison(dataset, settings, measure, names)
ranks = result.ranks.copy()
ranks["sampled (mean rank)"] = (
    result.sample_scores[ranks.index].rank(axis=1, ascending=False).mean().to_numpy()
)
columns = [
    "pessimistic",
    "trec_eval",
    "docno_asc",
    "file_order",
    "optimistic",
    "aware",
    "sampled (mean rank)",
]
order = ranks.sort_values(["aware", "trec_eval"]).index.tolist()

# --- bump chart
st.subheader("Ranks under each tie treatment")
bump = go.Figure()
for run in order:
    scores = [*result.scores.loc[run, columns[:-1]], result.sample_scores[run].mean()]
    bump.add_trace(
        go.Scatter(
            x=columns,
            y=ranks.loc[run, columns],
            mode="lines+markers",
            name=dataset.describe(run),
            customdata=np.array(scores),
            hovertemplate=(
                f"<b>{dataset.describe(run)}</b><br>%{{x}}: rank %{{y:g}}<br>{measure} "
                "%{customdata:.4f}<extra></extra>"
            ),
        )
    )
bump.update_layout(
    height=max(360, 28 * len(order) + 120),
    xaxis=dict(title="tie treatment (oblivious policies, then aware and random tie-breaks)"),
    yaxis=dict(title="rank (1 = best)", autorange="reversed", dtick=1),
    legend=dict(title="system"),
    margin=dict(t=30),
)
st.plotly_chart(bump, key="rankings_bump")
st.caption(
    "Crossing lines are systems whose order depends on how ties are broken. Ties between "
    "systems get their average rank."
)
if not result.swaps.empty:
    st.markdown(
        f"**{len(result.swaps)} systems change rank between trec_eval's order and tie-aware:**"
    )
    sup.show_table(result.swaps, f"rank swaps {measure}", key="download_swaps", hide_index=True)

scores = result.scores.copy()
scores["sampled_mean"] = result.sample_scores[scores.index].mean().to_numpy()
scores["sampled_sd"] = result.sample_scores[scores.index].std(ddof=1).to_numpy()
with st.expander("Scores under each ordering (table)"):
    sup.show_table(scores.loc[order], f"scores by ordering {measure}", key="download_rank_scores")

# --- agreement of orderings
left, right = st.columns(2)
with left:
    st.subheader("Agreement between orderings")
    statistic = st.radio(
        "Statistic",
        ["kendall_tau", "tau_ap", "tau_ap_sym"],
        horizontal=True,
        key="rankings_stat",
        help="tau_ap (Yilmaz et al. 2008) weighs swaps near the top more; row = ranking judged, "
        "column = reference",
    )
    matrix = result.agreement[statistic].unstack("ordering_b")
    labels = [*columns[:-1], "random"]
    matrix = matrix.reindex(index=labels, columns=labels)
    heat = go.Figure(
        go.Heatmap(
            z=matrix.to_numpy(),
            x=labels,
            y=labels,
            zmin=-1,
            zmax=1,
            colorscale="RdBu",
            text=np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.2f}")(matrix.to_numpy()),
            texttemplate="%{text}",
            colorbar=dict(title=statistic),
            hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>",
        )
    )
    heat.update_layout(
        height=460,
        xaxis=dict(title="reference ordering"),
        yaxis=dict(title="ordering", autorange="reversed"),
        margin=dict(t=20),
    )
    st.plotly_chart(heat, key="rankings_agreement")
    st.caption("1 = the same ranking of systems. 'random': the mean over the random tie-breaks.")

with right:
    st.subheader("P(row system beats column system)")
    pairs = result.pairs.reset_index()
    beats = pairs.pivot(index="a", columns="b", values="p_beats_sampled").reindex(
        index=order, columns=order
    )
    shown = [dataset.describe(r) for r in order]
    heat = go.Figure(
        go.Heatmap(
            z=beats.to_numpy(),
            x=shown,
            y=shown,
            zmin=0,
            zmax=1,
            colorscale="RdBu",
            colorbar=dict(title="P(beats)"),
            hovertemplate="P(%{y} beats %{x}) = %{z:.3f}<extra></extra>",
        )
    )
    heat.update_layout(
        height=460,
        xaxis=dict(title="column system"),
        yaxis=dict(title="row system (best first)", autorange="reversed"),
        margin=dict(t=20),
    )
    st.plotly_chart(heat, key="rankings_beats")
    st.caption(
        "Over random tie-breaks of both systems (ties between their scores count half). "
        "Values near 0.5 mean the order of the pair is decided by tie-breaking."
    )

# --- significance next to tie noise
st.subheader("Significance, with tie noise beside it")
alpha = st.select_slider(
    "Significance level α", [0.001, 0.01, 0.05, 0.1], value=0.05, key="rankings_alpha"
)
rank_of = {run: i for i, run in enumerate(order)}
upper = pairs[pairs["a"].map(rank_of) < pairs["b"].map(rank_of)].copy()
upper["significant"] = upper["t_pvalue"] < alpha
upper["abs_diff"] = upper["mean_diff"].abs()
scatter = go.Figure()
for significant, part in upper.groupby("significant"):
    scatter.add_trace(
        go.Scatter(
            x=part["tie_noise"],
            y=part["abs_diff"],
            mode="markers",
            name=f"paired t-test p {'<' if significant else '≥'} {alpha}",
            marker=dict(size=9, color="#d62728" if significant else "#7f7f7f"),
            customdata=part[
                ["a", "b", "t_pvalue", "randomization_pvalue", "p_beats_sampled"]
            ].to_numpy(),
            hovertemplate=(
                "%{customdata[0]} vs %{customdata[1]}<br>|mean difference| %{y:.4f}<br>"
                "tie noise (2 sd) %{x:.4f}<br>t-test p %{customdata[2]:.3g}, randomization p "
                "%{customdata[3]:.3g}<br>P(a beats b) %{customdata[4]:.3f}<extra></extra>"
            ),
        )
    )
top = float(max(upper["tie_noise"].max(), 1e-6)) * 1.2
scatter.add_trace(
    go.Scatter(
        x=[0, top],
        y=[0, top],
        mode="lines",
        name="difference = tie noise",
        line=dict(dash="dash", color="black"),
        hoverinfo="skip",
    )
)
scatter.update_layout(
    height=420,
    xaxis=dict(
        title=f"tie noise: 2 sd of the difference over tie-breaks ({measure})", range=[0, top]
    ),
    yaxis=dict(title=f"|difference of tie-aware means| ({measure})"),
    legend=dict(orientation="h", y=1.02, yanchor="bottom"),
    margin=dict(t=40),
)
st.plotly_chart(scatter, key="rankings_significance")
st.caption(
    "One dot per pair of systems. Below the dashed line the difference is within what tie-breaking "
    "alone can produce — a 'significant' red dot there is an artefact of how ties were broken."
)
table = upper[
    [
        "a",
        "b",
        "mean_diff",
        "tie_noise",
        "within_tie_noise",
        "p_beats_sampled",
        "p_beats_normal",
        "t_pvalue",
        "randomization_pvalue",
        "effect_size",
        "n_queries",
    ]
]
sup.show_table(table, f"pairs {measure}", key="download_pairs", hide_index=True)

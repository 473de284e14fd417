"""Tie anatomy: one query of one system drawn as tie groups around the measure's cutoff."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import app_support as sup
from tiecore.measures import Measure

dataset, settings = sup.context()
st.title("Tie anatomy")
sup.dataset_caption(dataset)
st.caption(
    "One ranked list as its tie groups (docs sharing a score). Only the group that straddles the "
    "cutoff, and mixed groups above it, let the tie-break change the value."
)

left, middle, right = st.columns(3)
with left:
    run = sup.pick_run(dataset, key="anatomy_run")
with middle:
    measure = sup.pick_measure(settings, key="anatomy_measure")
parsed = Measure.parse(measure)

spread = sup.spread_table(dataset, settings, measures=[measure], per_query=True)
spread = spread[(spread["run"] == run) & (spread["qid"] != "all")].sort_values(
    ["var", "qid"], ascending=[False, True]
)
if spread.empty:
    st.warning(f"{run} has no judged queries.")
    st.stop()
sd = dict(zip(spread["qid"], np.sqrt(spread["var"]), strict=True))
with right:
    qid = st.selectbox(
        "Query (most tie variance first)",
        spread["qid"].tolist(),
        key=f"anatomy_qid_{run}_{measure}",
        format_func=lambda q: f"{q}  (sd {sd[q]:.4f})",
    )

groups = sup.tie_groups(dataset, dataset.key, run, measure, settings.rel_level, qid)
judged = dataset.qrels[dataset.qrels["qid"] == qid]
num_rel = int((judged["level"] >= settings.rel_level).sum())
length = int(groups["end_rank"].max()) if len(groups) else 0
if parsed.family == "Rprec":
    cutoff = num_rel
elif parsed.cutoff is not None:
    cutoff = parsed.cutoff
else:
    cutoff = length
quantities = sup.paper_quantities(groups, cutoff)

per_query = {
    ties: sup.evaluate(dataset, settings, ties, measures=[measure], names=[run], per_query=True)
    for ties in ("aware", "oblivious")
}
value = {
    ties: float(frame.loc[frame["qid"] == qid, "value"].iloc[0])
    for ties, frame in per_query.items()
}
row = spread[spread["qid"] == qid].iloc[0]
cols = st.columns(6)
cols[0].metric("aware (exact mean)", f"{value['aware']:.4f}")
cols[1].metric(f"oblivious ({settings.tiebreak})", f"{value['oblivious']:.4f}")
cols[2].metric("sd over tie-breaks", f"{math.sqrt(row['var']):.4f}")
cols[3].metric("min over tie-breaks", f"{row['min']:.4f}")
cols[4].metric("max over tie-breaks", f"{row['max']:.4f}")
cols[5].metric("relevant in qrels", num_rel)

# --- the ranked list as tie groups
straddle = quantities["group"]
focus_end = (
    int(groups.loc[groups["group"] == straddle, "end_rank"].max()) if straddle is not None else 0
)
default_span = min(length, max(30, 2 * min(cutoff, length), focus_end + 10))
span = st.slider(
    "Ranks shown",
    5,
    max(length, 6),
    max(5, default_span),
    key=f"anatomy_span_{run}_{qid}",
    help="the list can hold 1,000 docs; the chart starts at rank 1",
)
shown = groups[groups["start_rank"] <= span]
ranks = sup.per_rank(groups)
ranks = ranks[ranks["rank"] <= span]

straddling = (shown["group"] == straddle).to_numpy()
tied = (shown["size"] > 1).to_numpy()
shade = np.where(straddling, "#f6c9c9", np.where(tied, "#dbe7f3", "#f0f0f0"))
colors = np.where(straddling, "#d62728", np.where(tied, "#3182bd", "#7f7f7f"))
layout, ((x1, y1), (x2, y2)) = sup.stacked_layout(
    2,
    heights=[0.6, 0.4],
    gap=0.1,
    titles=(
        "tie groups: block width = group size, filled height = share of relevant docs",
        "expected gain at each rank (mean over orderings)",
    ),
)
traces = []
centers = (shown["start_rank"] + shown["end_rank"]) / 2
traces.append(
    go.Bar(
        x=centers,
        y=np.ones(len(shown)),
        width=shown["size"],
        marker=dict(color=shade, line=dict(color="white", width=1)),
        hoverinfo="skip",
        showlegend=False,
        xaxis=x1,
        yaxis=y1,
    )
)
traces.append(
    go.Bar(
        x=centers,
        y=shown["relevant"] / shown["size"],
        width=shown["size"],
        marker=dict(color=colors, line=dict(color="white", width=1)),
        text=[
            f"{r}/{n}" if n > 1 else ""
            for r, n in zip(shown["relevant"], shown["size"], strict=True)
        ],
        textposition="outside",
        customdata=shown[
            [
                "group",
                "start_rank",
                "end_rank",
                "size",
                "relevant",
                "judged_nonrelevant",
                "gain",
                "var_share",
            ]
        ].to_numpy(),
        hovertemplate=(
            "group %{customdata[0]}: ranks %{customdata[1]}–%{customdata[2]} "
            "(%{customdata[3]} docs)<br>"
            "%{customdata[4]} relevant, %{customdata[5]} judged non-relevant<br>"
            "total gain %{customdata[6]:.0f}<br>share of the query's tie variance "
            "%{customdata[7]:.1%}<extra></extra>"
        ),
        name="tie group",
        showlegend=False,
        xaxis=x1,
        yaxis=y1,
    )
)
traces.append(
    go.Scatter(
        x=ranks["rank"],
        y=ranks["expected_gain"],
        mode="lines",
        line=dict(shape="hvh", color="#2ca02c"),
        customdata=ranks[["expected_relevance", "group"]].to_numpy(),
        hovertemplate=(
            "rank %{x}: expected gain %{y:.3f}<br>P(relevant) %{customdata[0]:.3f}"
            " (group %{customdata[1]})<extra></extra>"
        ),
        name="expected gain",
        showlegend=False,
        xaxis=x2,
        yaxis=y2,
    )
)
layout["yaxis"].update(title="relevant share (r/n)", range=[0, 1.2])
layout["yaxis2"].update(title=f"gain ({settings.gain})")
layout["xaxis2"].update(title="rank")
if cutoff <= span:
    layout["shapes"] = [
        dict(
            type="line", x0=cutoff + 0.5, x1=cutoff + 0.5, xref=x, y0=0, y1=1,
            yref=f"{y} domain", line=dict(color="black", dash="dash"),
        )
        for x, y in ((x1, y1), (x2, y2))
    ]  # fmt: skip
    layout["annotations"].append(
        dict(
            x=cutoff + 0.5, y=1.12, xref=x1, yref=y1, text=f"cutoff k = {cutoff}",
            showarrow=False, xanchor="left",
        )
    )  # fmt: skip
figure = go.Figure(traces, layout)
figure.update_layout(height=560, bargap=0, barmode="overlay", margin=dict(t=40))
st.plotly_chart(figure, key="anatomy_chart")
st.caption(
    "Each shaded block is a tie group; the filled part is its share of relevant docs, which is "
    "also the probability that any of its ranks holds a relevant doc. Red: the group V_c that "
    "straddles the cutoff — only k − t_c of its n_c docs fall inside. Blue: other tie groups; "
    "grey: untied docs. Labels: relevant / size."
)

# --- the paper's quantities
st.subheader("The paper's quantities")
R_c, t_c, n_c, r_c, k = (quantities[x] for x in ("R_c", "t_c", "n_c", "r_c", "k"))
q = st.columns(4)
q[0].metric("R_c: relevant above V_c", R_c)
q[1].metric("t_c: ranks above V_c", t_c)
q[2].metric("n_c: docs in V_c", n_c)
q[3].metric("r_c: relevant in V_c", r_c)
inside = max(min(k, t_c + n_c) - t_c, 0)
expected_rel = R_c + (inside * r_c / n_c if n_c else 0.0)
if k > t_c + n_c:
    st.caption(
        f"k = {k} is past the end of the list ({length} docs): k − t_c counts {inside} slots."
    )
family = parsed.family
if family in ("P", "R", "F1", "Rprec"):
    denominator = {"P": k, "R": num_rel, "F1": (k + num_rel) / 2, "Rprec": num_rel}[family]
    formula_value = expected_rel / denominator if denominator else 0.0
    name = {"P": f"P@{k}", "R": f"R@{k}", "F1": f"F1@{k}", "Rprec": "Rprec"}[family]
    bottom = {"P": "k", "R": "R", "F1": "(k + R)/2", "Rprec": "R"}[family]
    st.latex(
        rf"{name} = \frac{{R_c + (k - t_c)\,r_c / n_c}}{{{bottom}}}"
        rf" = \frac{{{R_c} + {inside}\cdot {r_c}/{n_c}}}{{{denominator:g}}} = {formula_value:.4f}"
    )
    st.caption(
        f"R = {num_rel} relevant docs in the qrels. This matches the tie-aware value "
        f"{value['aware']:.4f} computed by tiecore."
    )
elif family == "Success":
    slots = inside
    miss = math.comb(n_c - r_c, slots) / math.comb(n_c, slots) if n_c and R_c == 0 else 0.0
    formula_value = 1.0 - miss if (R_c > 0 or r_c > 0) else 0.0
    st.latex(
        rf"Success@{k} = 1 - \frac{{\binom{{n_c - r_c}}{{k - t_c}}}}{{\binom{{n_c}}{{k - t_c}}}}"
        rf"\ (\text{{if }} R_c = 0) = {formula_value:.4f}"
    )
else:
    st.latex(
        r"\text{expected relevant in the top }k:\ R_c + (k - t_c)\frac{r_c}{n_c} = "
        rf"{R_c} + {inside}\cdot\frac{{{r_c}}}{{{n_c}}} = {expected_rel:.3f}"
    )
    st.caption(
        f"{measure} sums a per-rank expectation over the ranks above the cutoff: a doc in a group "
        "of n docs with r relevant ones is relevant with probability r/n and, if relevant, has on "
        "average (r−1)/(n−1) relevant group mates above each free slot (AP), or is the first "
        "relevant doc with probability C(n−1−p, r−1)/C(n, r) (RR). The chart's lower panel is "
        "the nDCG numerator's per-rank gain."
    )

# --- tables
with st.expander("Tie groups of this query (table)"):
    sup.show_table(groups, f"tie groups {run} {qid}", key="download_groups", hide_index=True)
with st.expander("The ranked list (score descending, docno descending inside ties)"):
    rows = dataset.runs[run]
    rows = rows[rows["qid"] == qid].sort_values(["score", "docno"], ascending=False)
    levels = dict(zip(judged["docno"], judged["level"], strict=True))
    listing = pd.DataFrame(
        {
            "rank": np.arange(1, len(rows) + 1),
            "docno": rows["docno"].to_numpy(),
            "score": rows["score"].to_numpy(),
            "level": [levels.get(d) for d in rows["docno"]],
        }
    )
    listing["level"] = listing["level"].astype("Int64")
    sup.show_table(listing, f"ranked list {run} {qid}", key="download_list", hide_index=True)

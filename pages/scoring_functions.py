"""Scoring functions side by side: LETOR features as systems, the paper's feature-selection case."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app_lib import cache, data
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import anatomy, report

dataset, settings = sb.context()
st.title("Scoring functions side by side")
if dataset.kind != "letor":
    dataset = data.mslr_sample()
    st.info(
        "This page ranks the features of a LETOR file. The sidebar's source holds TREC runs, so it "
        "shows the bundled MSLR-WEB10K sample (all features); choose that sample or upload a LETOR "
        "file in the sidebar to pick the features."
    )
ch.dataset_caption(dataset)
st.caption(
    "Each feature column used alone as a score is a ranking function. Most features are discrete "
    "(counts, flags), so many documents tie, and the tie-break decides much of their value — "
    "and which features look best (McSherry & Najork 2008, Section 5)."
)
if len(dataset.runs) < 2:
    st.info(
        f"Only one feature ({dataset.describe(dataset.names[0])}) is chosen: ranking features "
        "needs at least two. Choose more in the sidebar's 'Features as systems'."
    )
    st.stop()

left, right = st.columns(2)
with left:
    measure = sb.pick_measure(settings, key="features_measure", need="spread")
with right:
    k = st.number_input(
        "Top-k features for selection",
        1,
        len(dataset.runs),
        min(10, len(dataset.runs)),
        key="features_k",
        help="a feature whose membership of the top k depends on the tie-break is flagged",
    )

values = cache.policy_table(dataset, settings, measure)
profile, _ = cache.tie_profiles(dataset, dataset.key)
profile = profile.set_index("run")
ranges = anatomy.rank_ranges(values, anatomy.ARBITRARY, top=int(k))
table = values.copy()
table.insert(0, "name", [dataset.descriptions.get(f, "") for f in table.index])
table.insert(1, "share_tied_rows", profile.loc[table.index, "share_tied_rows"])
table = table.join(
    ranges[
        [
            "rank_aware",
            "rank_trec_eval",
            "best_rank",
            "worst_rank",
            "rank_range",
            "rank_depends_on_tiebreak",
            "top_k_depends_on_tiebreak",
        ]
    ]
)
table = table.sort_values(["aware", "trec_eval"], ascending=False)
difference = table["trec_eval"] - table["aware"]
table["trec_eval_minus_aware"] = difference.where(difference.abs() >= report.NOISE, 0.0)

depends = int(table["rank_depends_on_tiebreak"].sum())
flip = table[table["top_k_depends_on_tiebreak"]]
cols = st.columns(4)
cols[0].metric("features", len(table))
cols[1].metric("rank depends on the tie-break", depends, help=ch.GLOSSARY["rank_range"])
cols[2].metric("largest rank change", f"{table['rank_range'].max():g} places")
cols[3].metric(f"in or out of the top {k} by tie-break", len(flip))
st.caption(
    f"Tie-breaks compared: {', '.join(anatomy.ARBITRARY)} — the arbitrary orders evaluation tools "
    "use. Optimistic and pessimistic are bounds, shown as the grey bars below."
)
if len(flip):
    st.markdown(
        f"**Features whose place in the top {k} depends on tie-breaking:** "
        + ", ".join(dataset.describe(f) for f in flip.index)
    )

# --- value range per feature (top N, sorted)
st.subheader(f"{measure} of each feature: tie-aware, trec_eval and the range over tie-breaks")
sort_by = st.radio(
    "Sort features by",
    ["tie-aware value", "|trec_eval − aware|", "share of tied rows"],
    horizontal=True,
    key="features_sort",
)
key_of = {
    "tie-aware value": table["aware"],
    "|trec_eval − aware|": table["trec_eval_minus_aware"].abs(),
    "share of tied rows": table["share_tied_rows"],
}
ordered = table.loc[key_of[sort_by].sort_values(ascending=False, kind="stable").index]
top = ch.top_slider(len(ordered), "features_top", "Features in the chart", 40, unit="features")
part = ordered.head(top)
labels = part.index.tolist()
names = [dataset.describe(f) for f in labels]
figure = go.Figure()
figure.add_trace(
    go.Bar(
        y=labels,
        x=part["optimistic"] - part["pessimistic"],
        base=part["pessimistic"],
        orientation="h",
        name="pessimistic … optimistic",
        marker_color="rgba(160,160,160,0.28)",
        hovertext=names,
        customdata=part[["pessimistic", "optimistic", "share_tied_rows"]].to_numpy(),
        hovertemplate="%{hovertext}<br>pessimistic %{customdata[0]:.4f} … optimistic "
        "%{customdata[1]:.4f}<br>share of tied rows %{customdata[2]:.1%}<extra></extra>",
    )
)
# the difference that matters: a red segment from tie-aware to trec_eval
segment_x, segment_y = [], []
for feature, a, t in zip(labels, part["aware"], part["trec_eval"], strict=True):
    segment_x += [a, t, None]
    segment_y += [feature, feature, None]
figure.add_trace(
    go.Scatter(
        x=segment_x,
        y=segment_y,
        mode="lines",
        name="trec_eval − aware",
        line={"color": ch.FLAG_COLOR, "width": 3},
        hoverinfo="skip",
    )
)
for column, symbol, color in (
    ("aware", "diamond", ch.MODE_COLORS["aware"]),
    ("trec_eval", "x", ch.FLAG_COLOR),
):
    figure.add_trace(
        go.Scatter(
            y=labels,
            x=part[column],
            mode="markers",
            name=column,
            hovertext=names,
            marker={"symbol": symbol, "size": 9, "color": color},
            customdata=part[f"rank_{column}"].to_numpy(),
            hovertemplate=f"%{{hovertext}}<br>{column} %{{x:.4f}} (rank %{{customdata:g}})"
            "<extra></extra>",
        )
    )
ch.show(
    figure,
    "features_range",
    height=ch.row_height(top, per_row=20),
    x_title=f"{measure} (0–1)",
    yaxis={
        "autorange": "reversed",
        "type": "category",
        "title": f"feature (by {sort_by})",
        "tickmode": "array",
        "tickvals": labels,
        "ticktext": ch.short_labels(names, 34),
    },
)
st.caption(
    "Grey bar: every value a tie-break can give, from relevant-last to relevant-first. Diamond: "
    "tie-aware (the mean over all tie-breaks). ×: trec_eval's docno-descending tie-break; the red "
    "segment is how far trec_eval's number is from the tie-aware one."
)

# --- ties explain the error
st.subheader("More ties, more arbitrary scores")
spread = (table["worst_rank"] - table["best_rank"]).to_numpy()
size = 7 + 2.0 * np.minimum(spread, 10)
scatter = go.Figure(
    go.Scatter(
        x=table["share_tied_rows"],
        y=table["trec_eval_minus_aware"],
        mode="markers",
        text=[dataset.describe(f) for f in table.index],
        showlegend=False,
        marker={
            "size": size,
            "color": np.where(table["rank_depends_on_tiebreak"], ch.FLAG_COLOR, "#7f7f7f"),
            "opacity": 0.75,
        },
        customdata=table[["best_rank", "worst_rank"]].to_numpy(),
        hovertemplate="%{text}<br>share tied %{x:.1%}<br>trec_eval − aware %{y:+.4f}<br>"
        "rank %{customdata[0]:g} … %{customdata[1]:g} over tie-breaks<extra></extra>",
    )
)
for places in (0, 2, 5, 10):  # the size legend
    scatter.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=f"rank range {places}{'+' if places == 10 else ''}",
            marker={
                "size": 7 + 2.0 * places,
                "color": "#7f7f7f" if places == 0 else ch.FLAG_COLOR,
                "opacity": 0.75,
            },
        )
    )
scatter.add_hline(y=0, line={"color": "black", "dash": "dash"})
ch.show(
    scatter,
    "features_ties",
    height=420,
    legend="dot size: rank range over tie-breaks",
    x_title="share of rows tied within their query",
    y_title=f"trec_eval − tie-aware ({measure})",
    xaxis={"tickformat": ".0%"},
)
st.caption(
    "Red: features whose rank changes with the tie-break; the bigger the dot, the more places it "
    "moves. Far from the dashed line, trec_eval's score owes much to docno order, not to the "
    "feature."
)

ch.show_table(
    table.reset_index(),
    f"features {measure}",
    key="download_features",
    provenance=cache.provenance(
        dataset, settings, measure=measure, ties="aware and every deterministic tie-break"
    ),
    column_config={
        "share_tied_rows": st.column_config.ProgressColumn(
            "share tied",
            format="percent",
            min_value=0.0,
            max_value=1.0,
            help=ch.GLOSSARY["share_tied_rows"],
        )
    },
)

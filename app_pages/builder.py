"""Build a scoring function from LETOR features (or take a run), coarsen its scores, and watch
ties appear."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app_lib import cache
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import report
from tiecore.explain import policies

#: Level counts of the sweep, from continuous to a handful.
LEVELS = (None, 1000, 300, 100, 30, 10, 5, 3, 2)
#: Features chosen first on the MSLR sample: BM25 of the whole document and the click count.
PREFERRED = ("f110", "f134")

dataset, settings = sb.context()
one, many = dataset.noun
st.title("Build a scoring function")
ch.dataset_caption(dataset)
if dataset.kind == "letor":
    st.caption(
        "Coarse scores tie: in-link and click counts, term counts, model scores rounded to a few "
        "levels. Build a weighted sum of features, then cut its scores to fewer and fewer levels: "
        "ties appear, the tie-break starts to decide the reported number, and the function's "
        "place among the given features starts to depend on document names (McSherry & Najork "
        "2008)."
    )
else:
    st.caption(
        "Coarse scores tie: model outputs rounded for serving, scores bucketed into a few grades. "
        "Take one run and cut its scores to fewer and fewer levels (within each query, between "
        "its lowest and highest score): ties appear, the tie-break starts to decide the reported "
        "number, and the run's place among the other runs starts to depend on document names "
        "(McSherry & Najork 2008). The Precision what-if page rounds to bf16, fp16 or decimals "
        "instead."
    )

names = dataset.names
left, right = st.columns([2, 1])
if dataset.kind == "letor":
    default = [f for f in PREFERRED if f in names] or names[: min(3, len(names))]
    with left:
        chosen = st.multiselect(
            "Features to combine",
            names,
            default=default,
            key=f"builder_features_{dataset.key}",
            format_func=dataset.describe,
            max_selections=8,
            placeholder="type a name or number to find a feature",
            help="each feature is scaled to 0–1 within each query, then weighted",
        )
    with right:
        measure = sb.pick_measure(settings, key="builder_measure", need="spread")
    if not chosen:
        st.info("Choose at least one feature to build a scoring function.")
        st.stop()
    weights = {}
    columns = st.columns(min(len(chosen), 4))
    for i, feature in enumerate(chosen):
        weights[feature] = columns[i % len(columns)].slider(
            f"weight of {report.escape_markdown(dataset.describe(feature))}",
            0.0,
            1.0,
            1.0,
            0.05,
            key=f"builder_weight_{feature}",
        )
    others: list[str] = []  # ranked among all the given features
else:
    with left:
        run = sb.pick_run(dataset, key="builder_run", label="Run to coarsen")
    with right:
        measure = sb.pick_measure(settings, key="builder_measure", need="spread")
    weights = {run: 1.0}
    others = [run]  # ranked among the other runs
if not any(weights.values()):
    st.info("Every weight is 0: give at least one feature a weight.")
    st.stop()

label = {None: "continuous", **{n: f"{n} levels" for n in LEVELS if n}}
level = st.select_slider(
    "Score levels (quantised to equal-width bins)",
    options=list(LEVELS),
    value=10,
    format_func=label.get,
    key="builder_levels",
    help=ch.GLOSSARY["levels"],
)
shown_tiebreak = settings.tiebreak if settings.tiebreak in policies.POLICIES else "trec_eval"
found = cache.sweep(
    dataset, settings, {f: w for f, w in weights.items() if w}, LEVELS, measure, exclude=others
)
found = found.assign(label=[label[n] for n in LEVELS])
row = found.iloc[list(LEVELS).index(level)]
continuous = found.iloc[0]

cols = [*st.columns(3), *st.columns(3)]  # two rows: a range of 4 decimals needs the width
cols[0].metric(
    "share of tied rows",
    f"{row['share_tied_rows']:.1%}",
    delta=f"{row['share_tied_rows'] - continuous['share_tied_rows']:+.1%} vs continuous",
    delta_color="off",
    delta_arrow="off",
    help=ch.GLOSSARY["share_tied_rows"],
)
cols[1].metric(
    f"oblivious ({shown_tiebreak})",
    report.format_value(row["oblivious"]),
    help=ch.GLOSSARY["oblivious"],
)
cols[2].metric("aware", report.format_value(row["aware"]), help=ch.GLOSSARY["aware"])
cols[3].metric("tie sd", f"{row['tie_sd']:.4f}", help=ch.GLOSSARY["tie_sd"])
cols[4].metric(
    "range",
    f"{report.format_value(row['min'])} … {report.format_value(row['max'])}",
    help="the lowest and highest mean any tie-break gives (min … max)",
)
cols[5].metric(
    "rank (aware)",
    f"{int(row['rank_aware'])} of {int(row['features']) + 1}",
    delta=f"{int(row['rank_oblivious'])} under {shown_tiebreak}",
    delta_color="off",
    delta_arrow="off",
    help="among the given features: 1 + the number of features scoring higher"
    if dataset.kind == "letor"
    else "among the other runs (as given): 1 + the number of runs scoring higher",
)

x = found["label"].tolist()
values = go.Figure()
values.add_trace(
    ch.band(
        x, found["min"], found["max"], "min … max over all tie-breaks", "rgba(150,150,150,0.25)"
    )
)
values.add_trace(
    go.Scatter(
        x=x,
        y=found["aware"],
        mode="lines+markers",
        name="aware ± tie sd",
        line={"color": ch.MODE_COLORS["aware"]},
        error_y={"array": found["tie_sd"], "visible": True},
        hovertemplate="%{x}: aware %{y:.4f}<extra></extra>",
    )
)
values.add_trace(
    go.Scatter(
        x=x,
        y=found["oblivious"],
        mode="lines+markers",
        name=f"oblivious ({shown_tiebreak})",
        line={"color": ch.FLAG_COLOR, "dash": "dot"},
        marker={"symbol": "x", "size": 9},
        hovertemplate="%{x}: oblivious %{y:.4f}<extra></extra>",
    )
)
values.add_vline(x=x.index(label[level]), line={"color": "black", "dash": "dash"})
ch.show(
    values,
    "builder_values",
    height=380,
    x_title="score levels (coarser to the right)",
    y_title=f"µ: mean {measure} over the queries",
    xaxis={"type": "category"},
)

left, right = st.columns(2)
with left:
    share = go.Figure(
        go.Bar(
            x=x,
            y=found["share_tied_rows"],
            marker_color=ch.MODE_COLORS["aware"],
            customdata=found[["largest_group", "distinct_scores"]].to_numpy(),
            hovertemplate="%{x}: %{y:.1%} of rows tied<br>largest group %{customdata[0]} docs"
            "<br>at most %{customdata[1]} distinct scores in a query<extra></extra>",
        )
    )
    ch.show(
        share,
        "builder_share",
        height=320,
        legend=False,
        title="share of tied rows",
        xaxis={"type": "category"},
        yaxis={"tickformat": ".0%", "range": [0, 1]},
    )
with right:
    rank = go.Figure()
    for column, name, color in (
        ("rank_aware", "aware", ch.MODE_COLORS["aware"]),
        ("rank_oblivious", shown_tiebreak, ch.FLAG_COLOR),
    ):
        rank.add_trace(
            go.Scatter(x=x, y=found[column], mode="lines+markers", name=name, line={"color": color})
        )
    ch.show(
        rank,
        "builder_rank",
        height=320,
        title=f"rank among the {'given features' if dataset.kind == 'letor' else 'other runs'}"
        " (1 = best)",
        xaxis={"type": "category"},
        yaxis={"autorange": "reversed", "rangemode": "tozero"},
    )
st.caption(
    "Fewer levels merge nearby scores: the share of tied rows grows, the tie sd and the grey "
    "range widen, and the oblivious value drifts from the tie-aware one — the reported number "
    "now depends on how the tool breaks ties, i.e. on document names."
)
ch.show_table(
    found.drop(columns=["label"]).assign(levels=x),
    f"built function {measure}",
    key="download_builder",
    provenance=cache.provenance(
        dataset,
        settings,
        measure=measure,
        ties="oblivious, aware",
        features=", ".join(f"{f}×{w:g}" for f, w in weights.items()),
    ),
    column_config={
        "levels": st.column_config.TextColumn("score levels"),
        "distinct_scores": st.column_config.NumberColumn(
            "distinct scores", format="%d", help="the most distinct scores of one query"
        ),
        "share_tied_rows": st.column_config.NumberColumn(
            "share tied", format="percent", help=ch.GLOSSARY["share_tied_rows"]
        ),
        "largest_group": st.column_config.NumberColumn(
            "largest group", format="%d", help=ch.GLOSSARY["largest_group"]
        ),
        "oblivious": st.column_config.NumberColumn(
            shown_tiebreak, format="%.4f", help=ch.GLOSSARY["oblivious"]
        ),
        "aware": st.column_config.NumberColumn(
            "tie-aware", format="%.4f", help=ch.GLOSSARY["aware"]
        ),
        "min": st.column_config.NumberColumn("min", format="%.4f", help=ch.GLOSSARY["min"]),
        "max": st.column_config.NumberColumn("max", format="%.4f", help=ch.GLOSSARY["max"]),
        "tie_sd": st.column_config.NumberColumn(
            "tie sd", format="%.4f", help=ch.GLOSSARY["tie_sd"]
        ),
        "rank_aware": st.column_config.NumberColumn("rank (aware)", format="%d"),
        "rank_oblivious": st.column_config.NumberColumn(f"rank ({shown_tiebreak})", format="%d"),
    },
    column_order=[c for c in found.columns if c not in ("label", "features")],  # N in the metric
)
if np.isclose(found["tie_sd"].max(), 0):
    st.info(
        f"Even at 2 levels no query's {measure} depends on the tie-break here: the relevant and "
        "non-relevant documents never share a level. Try other features or weights."
    )

"""Build a scoring function from LETOR features (or take a run), coarsen its scores, and watch
ties appear.

The page is :func:`page`: widgets, one :func:`app_lib.cache.sweep` (tiecore's
:func:`tiecore.explain.policies` sweep over score levels) and its charts.
"""

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
#: A level count as the slider and the charts say it.
LABEL = {None: "continuous", **{n: f"{n} levels" for n in LEVELS if n}}
HOW = (
    "The scores are cut to a number of equal-width levels within each query, between its "
    "lowest and highest score: every score in one bin gets the same value, so documents in a "
    "bin tie. At each level count tiecore scores the function three ways: **oblivious** "
    "(one tie-break, {tiebreak}), **tie-aware** (the exact mean over every order of the tied "
    "documents) with its **tie sd**, and the lowest and highest mean any tie-break gives. The "
    "rank is 1 + the number of {others} scoring higher by the same measure. "
    "{features}"
)


def page() -> None:
    """The page: what to coarsen, the level count, then the sweep's numbers and charts."""
    dataset, settings = sb.context()
    st.title("Build a scoring function")
    ch.dataset_caption(dataset)
    st.caption(intro(dataset))
    tiebreak = settings.tiebreak if settings.tiebreak in policies.POLICIES else "trec_eval"
    shown_tiebreak = ch.tiebreak_name(tiebreak)
    letor = dataset.kind == "letor"
    ch.how_it_works(
        HOW.format(
            tiebreak=shown_tiebreak,
            others="given features" if letor else "other runs",
            features="A built function is a weighted sum of the chosen features, each scaled "
            "to 0–1 within each query first."
            if letor
            else "",
        )
    )
    weights, others, measure = choices(dataset, settings)
    level = st.select_slider(
        "Score levels (quantised to equal-width bins)",
        options=list(LEVELS),
        value=10,
        format_func=LABEL.get,
        key="builder_levels",
        help=ch.GLOSSARY["levels"],
    )
    found = cache.sweep(
        dataset, settings, {f: w for f, w in weights.items() if w}, LEVELS, measure, exclude=others
    )
    found = found.assign(label=[LABEL[n] for n in LEVELS])
    view = {"dataset": dataset, "measure": measure, "found": found, "tiebreak": shown_tiebreak}
    metrics(view, found.iloc[list(LEVELS).index(level)], found.iloc[0])
    values_chart(view, level)
    left, right = st.columns(2)
    with left:
        share_chart(view)
    with right:
        rank_chart(view)
    st.caption(
        "Fewer levels merge nearby scores: the share of tied rows grows, the tie sd and the "
        "grey range widen, and the oblivious value drifts from the tie-aware one — the reported "
        "number now depends on how the tool breaks ties, i.e. on document names."
    )
    sweep_table(view, settings, weights)
    if np.isclose(found["tie_sd"].max(), 0):
        st.info(
            f"Even at 2 levels no query's {measure} depends on the tie-break here: the relevant "
            "and non-relevant documents never share a level. Try other features or weights."
        )


def intro(dataset) -> str:
    """What the page does, for features or for runs."""
    if dataset.kind == "letor":
        return (
            "Coarse scores tie: in-link and click counts, term counts, model scores rounded to "
            "a few levels. Build a weighted sum of features, then cut its scores to fewer and "
            "fewer levels: ties appear, the tie-break starts to decide the reported number, and "
            "the function's place among the given features starts to depend on document names "
            "(McSherry & Najork 2008)."
        )
    return (
        "Coarse scores tie: model outputs rounded for serving, scores bucketed into a few "
        "grades. Take one run and cut its scores to fewer and fewer levels (within each query, "
        "between its lowest and highest score): ties appear, the tie-break starts to decide the "
        "reported number, and the run's place among the other runs starts to depend on document "
        "names (McSherry & Najork 2008). The Precision what-if page rounds to bf16, fp16 or "
        "decimals instead."
    )


def choices(dataset, settings) -> tuple[dict, list[str], str]:
    """The features and weights (or the run) and the measure -> (weights, others, measure)."""
    names = dataset.names
    left, right = st.columns([2, 1])
    if dataset.kind != "letor":
        with left:
            run = sb.pick_run(dataset, key="builder_run", label="Run to coarsen")
        with right:
            measure = sb.pick_measure(settings, key="builder_measure", need="spread")
        return {run: 1.0}, [run], measure  # ranked among the other runs
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
    if not any(weights.values()):
        st.info("Every weight is 0: give at least one feature a weight.")
        st.stop()
    return weights, [], measure  # ranked among all the given features


def metrics(view: dict, row, continuous) -> None:
    """The numbers at the chosen level count, two rows of three."""
    tiebreak = view["tiebreak"]
    cols = [*st.columns(3), *st.columns(3)]  # two rows: a range of 4 decimals needs the width
    cols[0].metric(
        "share of tied rows",
        f"{row['share_tied_rows']:.1%}",
        delta=report.format_points(row["share_tied_rows"] - continuous["share_tied_rows"])
        + " vs continuous",
        delta_color="off",
        delta_arrow="off",
        help=ch.GLOSSARY["share_tied_rows"],
    )
    cols[1].metric(
        f"oblivious ({tiebreak})",
        report.format_value(row["oblivious"]),
        help=ch.GLOSSARY["oblivious"],
    )
    cols[2].metric("aware", report.format_value(row["aware"]), help=ch.GLOSSARY["aware"])
    cols[3].metric("tie sd", report.format_value(row["tie_sd"]), help=ch.GLOSSARY["tie_sd"])
    cols[4].metric(
        "range",
        f"{report.format_value(row['min'])} … {report.format_value(row['max'])}",
        help="the lowest and highest mean any tie-break gives (min … max)",
    )
    cols[5].metric(
        "rank (aware)",
        f"{int(row['rank_aware'])} of {int(row['features']) + 1}",
        delta=f"{int(row['rank_oblivious'])} under {tiebreak}",
        delta_color="off",
        delta_arrow="off",
        help="among the given features: 1 + the number of features scoring higher"
        if view["dataset"].kind == "letor"
        else "among the other runs (as given): 1 + the number of runs scoring higher",
    )


def values_chart(view: dict, level) -> None:
    """Aware ± tie sd, oblivious and the min-max range at each level count."""
    found = view["found"]
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
            name=f"oblivious ({view['tiebreak']})",
            line={"color": ch.FLAG_COLOR, "dash": "dot"},
            marker={"symbol": "x", "size": 9},
            hovertemplate="%{x}: oblivious %{y:.4f}<extra></extra>",
        )
    )
    values.add_vline(x=x.index(LABEL[level]), line={"color": "black", "dash": "dash"})
    ch.show(
        values,
        "builder_values",
        height=380,
        x_title="score levels (coarser to the right)",
        y_title=f"µ: mean {view['measure']} over the queries",
        xaxis={"type": "category"},
    )


def share_chart(view: dict) -> None:
    """The share of tied rows at each level count."""
    found = view["found"]
    share = go.Figure(
        go.Bar(
            x=found["label"].tolist(),
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


def rank_chart(view: dict) -> None:
    """The function's rank at each level count, tie-aware and oblivious; a sentence when it
    never changes (a flat line says nothing)."""
    found, tiebreak = view["found"], view["tiebreak"]
    among = "given features" if view["dataset"].kind == "letor" else "other runs"
    ranks = found[["rank_aware", "rank_oblivious"]].to_numpy()
    if (ranks == ranks[0, 0]).all():
        st.markdown(f"**Rank among the {among}**")
        st.info(
            f"Rank {int(ranks[0, 0])} of {int(found['features'].iloc[0]) + 1} at every level "
            f"count, tie-aware and under {tiebreak} alike: coarsening the scores does not move "
            f"this function's place among the {among}.",
            icon=":material/check_circle:",
        )
        return
    x = found["label"].tolist()
    rank = go.Figure()
    for column, name, color in (
        ("rank_aware", "aware", ch.MODE_COLORS["aware"]),
        ("rank_oblivious", tiebreak, ch.FLAG_COLOR),
    ):
        rank.add_trace(
            go.Scatter(x=x, y=found[column], mode="lines+markers", name=name, line={"color": color})
        )
    ch.show(
        rank,
        "builder_rank",
        height=320,
        title=f"rank among the {among} (1 = best)",
        xaxis={"type": "category"},
        yaxis={"autorange": "reversed", "rangemode": "tozero", "dtick": 1},
    )


def sweep_table(view: dict, settings, weights: dict) -> None:
    """Every level count's numbers, with the CSV download."""
    found, tiebreak, measure = view["found"], view["tiebreak"], view["measure"]
    number = st.column_config.NumberColumn
    ch.show_table(
        found.drop(columns=["label"]).assign(levels=found["label"].tolist()),
        f"built function {measure}",
        key="download_builder",
        provenance=cache.provenance(
            view["dataset"],
            settings,
            measure=measure,
            ties="oblivious, aware",
            features=", ".join(f"{f}×{w:g}" for f, w in weights.items()),
        ),
        column_config={
            "levels": st.column_config.TextColumn("score levels"),
            "distinct_scores": number(
                "distinct scores", format="%d", help="the most distinct scores of one query"
            ),
            "share_tied_rows": number(
                "share tied", format="percent", help=ch.GLOSSARY["share_tied_rows"]
            ),
            "largest_group": number(
                "largest group", format="%d", help=ch.GLOSSARY["largest_group"]
            ),
            "oblivious": number(tiebreak, format="%.4f", help=ch.GLOSSARY["oblivious"]),
            "aware": number("tie-aware", format="%.4f", help=ch.GLOSSARY["aware"]),
            "min": number("min", format="%.4f", help=ch.GLOSSARY["min"]),
            "max": number("max", format="%.4f", help=ch.GLOSSARY["max"]),
            "tie_sd": number("tie sd", format="%.4f", help=ch.GLOSSARY["tie_sd"]),
            "rank_aware": number("rank (aware)", format="%d"),
            "rank_oblivious": number(f"rank ({tiebreak})", format="%d"),
        },
        column_order=[c for c in found.columns if c not in ("label", "features")],  # N: metric
    )


page()

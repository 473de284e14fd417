"""Scoring functions side by side: runs or LETOR features as systems (the paper's Section 5).

The page is :func:`page`: widgets, tiecore's values under every tie-break
(:func:`tiecore.explain.policies.scoring_table`) and their charts.
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

HOW = (
    "Every {one} is scored by the measure under each fixed tie-break an evaluation tool may "
    "use (trec_eval's docno descending, docno ascending, file order), tie-aware (the exact "
    "mean over every order of the tied documents) and the two bounds: relevant documents last "
    "inside each tie (the lowest value any order gives) and first (the highest). Each "
    "tie-break ranks the {many} (1 = best, equal values share a rank); the **rank range** is "
    "the worst rank minus the best over the fixed tie-breaks, and a {one} whose rank range "
    "crosses the top k is in or out of the top k by the tie-break alone. The **bias** is "
    "trec_eval's number minus the tie-aware one."
)


def page() -> None:
    """The page: the measure and k, the counts, the range chart, the scatter, the tables."""
    dataset, settings = sb.context()
    one, many = dataset.noun
    st.title("Scoring functions side by side")
    ch.dataset_caption(dataset)
    ch.how_it_works(HOW.format(one=one, many=many))
    if dataset.kind == "letor":
        st.caption(
            "Each feature column used alone as a score is a ranking function. Most features are "
            "discrete (counts, flags), so many documents tie, and the tie-break decides much of "
            "their value — and which features look best (McSherry & Najork 2008, Section 5). Pick "
            "the features in the sidebar's 'Features as systems'."
        )
    else:
        st.caption(
            "Each run is a scoring function: its scores rank the documents of every query. Where "
            "scores tie (rounded model outputs, low-precision serving, counts), the tie-break "
            "decides part of a run's value — and perhaps its place among the others (McSherry & "
            "Najork 2008)."
        )
    if len(dataset.runs) < 2:
        where = "the sidebar's 'Features as systems'" if dataset.kind == "letor" else "the sidebar"
        st.info(
            f"Only one {one} ({report.escape_markdown(dataset.describe(dataset.names[0]))}) is "
            f"loaded: comparing needs at least two. Choose more in {where}."
        )
        st.stop()

    left, right = st.columns(2)
    with left:
        measure = sb.pick_measure(settings, key="features_measure", need="spread")
    with right:
        k = st.number_input(
            f"Top-k {many} for selection",
            1,
            len(dataset.runs),
            min(10, max(1, len(dataset.runs) // 2)),
            key="features_k",
            help=f"a {one} whose place in the top k depends on the tie-break is flagged",
        )
    values = cache.policy_table(dataset, settings, measure)
    profile, _ = cache.tie_profiles(dataset, dataset.key)
    table = policies.scoring_table(values, profile.set_index("run")["share_tied_rows"], int(k))
    if dataset.descriptions:
        table.insert(0, "name", [dataset.descriptions.get(f, "") for f in table.index])
    view = {"dataset": dataset, "measure": measure, "table": table, "k": int(k)}
    counts(view)
    range_chart(view)
    ties_scatter(view)
    every_table(view, settings)


def counts(view: dict) -> None:
    """How many functions move, how far, and which enter or leave the top k."""
    dataset, table, k = view["dataset"], view["table"], view["k"]
    _, many = dataset.noun
    flip = table[table["top_k_depends_on_tiebreak"]]
    cols = st.columns(4)
    cols[0].metric(many, len(table))
    cols[1].metric(
        "rank depends on the tie-break",
        int(table["rank_depends_on_tiebreak"].sum()),
        help=ch.GLOSSARY["rank_range"],
    )
    cols[2].metric("largest rank change", f"{int(table['rank_range'].max())} places")
    cols[3].metric(f"in or out of the top {k} by tie-break", len(flip))
    st.caption(
        "Tie-breaks compared: "
        + ", ".join(ch.tiebreak_name(p) for p in policies.ARBITRARY)
        + " — the arbitrary orders evaluation tools use. Optimistic and pessimistic are bounds, "
        "shown as the grey bars below."
    )
    if len(flip):
        st.markdown(f"**{many.capitalize()} whose place in the top {k} depends on tie-breaking:**")
        st.text(", ".join(dataset.describe(f) for f in flip.index))  # users' names, as text


def range_chart(view: dict) -> None:
    """Each function's tie-aware and trec_eval values inside the range of every tie-break."""
    dataset, table, measure = view["dataset"], view["table"], view["measure"]
    one, many = dataset.noun
    st.subheader(f"{measure} of each {one}: tie-aware, trec_eval and the range over tie-breaks")
    sort_by = st.radio(
        f"Sort {many} by",
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
    top = ch.top_slider(
        len(ordered), "features_top", f"{many.capitalize()} in the chart", 40, unit=many
    )
    part = ordered.head(top)
    labels = [ch.plain(f) for f in part.index]  # run names as plotly text (HTML-escaped)
    names = [dataset.describe(f) for f in part.index]
    figure = go.Figure()
    figure.add_trace(
        go.Bar(
            y=labels,
            x=part["optimistic"] - part["pessimistic"],
            base=part["pessimistic"],
            orientation="h",
            name="pessimistic … optimistic",
            marker_color="rgba(160,160,160,0.28)",
            hovertext=[ch.plain(n) for n in names],
            customdata=part[["pessimistic", "optimistic", "share_tied_rows"]].to_numpy(),
            hovertemplate="%{hovertext}<br>pessimistic %{customdata[0]:.4f} … optimistic "
            "%{customdata[1]:.4f}<br>share of tied rows %{customdata[2]:.1%}<extra></extra>",
        )
    )
    # the difference that matters: a red segment from tie-aware to trec_eval
    segment_x, segment_y = [], []
    for name, a, t in zip(labels, part["aware"], part["trec_eval"], strict=True):
        segment_x += [a, t, None]
        segment_y += [name, name, None]
    figure.add_trace(
        go.Scatter(
            x=segment_x,
            y=segment_y,
            mode="lines",
            name="trec_eval − tie-aware",
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
                name=ch.tiebreak_name(column),
                hovertext=[ch.plain(n) for n in names],
                marker={"symbol": symbol, "size": 9, "color": color},
                customdata=part[f"rank_{column}"].to_numpy(),
                hovertemplate=f"%{{hovertext}}<br>{ch.tiebreak_name(column)} %{{x:.4f}} "
                "(rank %{customdata:g})"
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
            "title": f"{one} (by {sort_by})",
            "tickmode": "array",
            "tickvals": labels,
            "ticktext": ch.short_labels(names, 32),  # a phone holds 32 characters
            "automargin": True,
        },
    )
    st.caption(
        "Grey bar: every value a tie-break can give, from relevant-last to relevant-first. "
        "Diamond: tie-aware (the mean over all tie-breaks). ×: trec_eval's docno-descending "
        "tie-break; the red "
        "segment is how far trec_eval's number is from the tie-aware one."
    )


def ties_scatter(view: dict) -> None:
    """The share of tied rows against trec_eval's bias, dots sized by the rank range."""
    dataset, table, measure = view["dataset"], view["table"], view["measure"]
    one, many = dataset.noun
    st.subheader("More ties, more arbitrary scores")
    spread = (table["worst_rank"] - table["best_rank"]).to_numpy()
    size = 7 + 2.0 * np.minimum(spread, 10)
    scatter = go.Figure(
        go.Scatter(
            x=table["share_tied_rows"],
            y=table["trec_eval_minus_aware"],
            mode="markers",
            text=[ch.plain(dataset.describe(f)) for f in table.index],
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
        f"Red: {many} whose rank changes with the tie-break; the bigger the dot, the more places "
        "it "
        f"moves. Far from the dashed line, trec_eval's score owes much to docno order, not to the "
        f"{one}."
    )


def every_table(view: dict, settings) -> None:
    """Every function's values and ranks, with the download."""
    dataset, table, measure = view["dataset"], view["table"], view["measure"]
    one, many = dataset.noun
    k = view["k"]
    rank_columns = list(policies.RANK_COLUMNS)
    st.subheader(f"Every {one}")
    st.caption(
        "Bias = trec_eval − tie-aware: how far the number trec_eval prints is from the mean over "
        "every "
        "order of the tied documents. Range: the lowest and highest value any tie-break gives. "
        "Ranks: 1 = best; equal values share a rank."
    )
    number = {"format": "%.4f"}
    #: The tie-breaks' names as column labels (trec_eval is a tool's name).
    POLICY = {"aware": "tie-aware", "trec_eval": "trec_eval", "docno_asc": "docno ascending",
              "file_order": "file order"}  # fmt: skip
    LABELS = {
        "run": st.column_config.TextColumn(one),
        "name": st.column_config.TextColumn("name", width="large"),
        "share_tied_rows": ch.share_tied_column(),
        "aware": st.column_config.NumberColumn("tie-aware", help=ch.GLOSSARY["aware"], **number),
        "trec_eval_minus_aware": st.column_config.NumberColumn(
            "bias", format="%+.4f", help="trec_eval − tie-aware"
        ),
        "pessimistic": st.column_config.NumberColumn("min", help=ch.GLOSSARY["min"], **number),
        "optimistic": st.column_config.NumberColumn("max", help=ch.GLOSSARY["max"], **number),
        "best_rank": st.column_config.NumberColumn("best rank", format="%d"),
        "worst_rank": st.column_config.NumberColumn("worst rank", format="%d"),
        "rank_range": st.column_config.NumberColumn(
            "rank range", format="%d", help=ch.GLOSSARY["rank_range"]
        ),
        "rank_depends_on_tiebreak": st.column_config.CheckboxColumn(
            "rank moves", help="the rank differs between the tie-breaks"
        ),
        "top_k_depends_on_tiebreak": st.column_config.CheckboxColumn(
            f"top {k} moves", help=f"in the top {k} under some tie-breaks, out under others"
        ),
        **{
            policy: st.column_config.NumberColumn(
                POLICY[policy], help=ch.tiebreak_help(policy), **number
            )
            for policy in policies.ARBITRARY
        },
        **{
            f"rank_{policy}": st.column_config.NumberColumn(f"rank ({POLICY[policy]})", format="%d")
            for policy in ("aware", *policies.ARBITRARY)
        },
    }
    shown = ["name"] * bool(dataset.descriptions) + [
        "share_tied_rows", "trec_eval", "aware", "trec_eval_minus_aware", "pessimistic",
        "optimistic",
        "docno_asc", "file_order", *rank_columns, "rank_range", "rank_depends_on_tiebreak",
        "top_k_depends_on_tiebreak", "best_rank", "worst_rank",
    ]  # fmt: skip
    every = table[shown].reset_index()
    ch.show_table(  # the values; the download holds every column of both tables
        every,
        f"{many} {measure}",
        key="download_features",
        provenance=cache.provenance(
            dataset, settings, measure=measure, ties="aware and every deterministic tie-break"
        ),
        column_config=LABELS,
        column_order=["run", *["name"] * bool(dataset.descriptions), "share_tied_rows", "trec_eval",
                      "aware", "trec_eval_minus_aware", "pessimistic", "optimistic"],
    )  # fmt: skip
    st.markdown(f"**Rank of each {one} under each tie-break** (1 = best)")
    st.dataframe(
        every.assign(run=[dataset.describe(n) for n in every["run"]]),
        hide_index=True,
        width="stretch",
        column_order=["run", *rank_columns, "rank_range", "rank_depends_on_tiebreak",
                      "top_k_depends_on_tiebreak"],
        column_config={
            **LABELS,
            **{f"rank_{p}": st.column_config.NumberColumn(POLICY[p], format="%d",
                                                          help=ch.tiebreak_help(p))
               for p in ("aware", *policies.ARBITRARY)},
            "rank_aware": st.column_config.NumberColumn(
                "tie-aware", format="%d", help=ch.GLOSSARY["aware"]
            ),
        },
    )  # fmt: skip


page()

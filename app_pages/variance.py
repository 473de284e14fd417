"""Variance: how much random tie-breaking moves a system's value, per query and overall.

The page is :func:`page`: the exact variance of :func:`tiecore.spread.evaluate_spread`,
the sampled values of tiecore's sampled mode, and what :mod:`tiecore.explain.variance`
makes of them (tie sd, the convergence band, each tie group's part), drawn.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app_lib import cache, glossary
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import Measure, report
from tiecore.explain import variance

HOW = (
    "Break the ties of a run at random: each order of the tied documents gives each query a "
    "value, and the tie-aware value is their exact mean over every order. tiecore also "
    "computes their exact **variance**, tie group by tie group, without listing the orders; "
    "the **tie sd** is its square root. The value reported for a system is the mean over "
    "its Q queries, and the queries' tie-breaks are independent, so the variance of that "
    "mean is the sum of the queries' variances divided by Q². The page then draws "
    "{samples} random tie-breaks (the sidebar's setting) only to show that the samples "
    "agree: their running mean stays within aware ± 2·√(variance / n) about 95% of the time "
    "after n draws, which is why each extra digit of accuracy costs 100 times more samples."
)


def page() -> None:
    """The page: a measure and a system, then each part on their exact and sampled values."""
    dataset, settings = sb.context()
    st.title("Variance from tie-breaking")
    ch.dataset_caption(dataset)
    st.caption(
        "Each random tie-break gives one value per query. The tie-aware value is their exact "
        "mean; tiecore also gives their exact variance, so the samples only illustrate what "
        "is known."
    )
    ch.how_it_works(HOW.format(samples=settings.samples))
    left, right = st.columns(2)
    with right:
        measure = sb.pick_measure(settings, key="variance_measure", need="spread")
        st.caption(glossary.define(measure))
    spread = cache.spread_table(dataset, settings, measures=[measure], per_query=True)
    overall = spread[spread["qid"].isna()].set_index("run")["var"]
    order = overall.reindex(dataset.names).fillna(0).sort_values(ascending=False, kind="stable")
    with left:
        run = sb.pick_run(
            dataset,
            key=f"variance_run_{dataset.key}",
            names=order.index.tolist(),
            label="System (most tie variance first)",
        )
    view = {
        "dataset": dataset,
        "settings": settings,
        "measure": measure,
        "run": run,
        "said": report.escape_markdown(dataset.describe(run)),  # a name as text, not Markdown
    }
    exact = spread[(spread["run"] == run) & (spread["qid"].notna())].set_index("qid")
    if exact.empty:
        st.warning(f"{view['said']} has no judged queries: there is nothing to sample.")
        st.stop()
    exact = exact.assign(sd=variance.tie_sd(exact["var"]))
    tied = exact[exact["var"] > 0].sort_values("var", ascending=False)
    if tied.empty:
        st.info(
            f"No query of {view['said']} has tie variance for {measure}: every tie-break "
            "gives the same value, so there is nothing to sample."
            + (
                f" {report.escape_markdown(dataset.describe(order.index[0]))} has the most."
                if order.iloc[0] > 0
                else " No system has any."
            )
        )
        interpolated_precision(view)
        st.stop()
    samples = cache.sampled_matrix(dataset, settings, run, measure)
    view["exact"] = exact.loc[samples.columns]
    view["samples"] = samples
    view["var_of_mean"] = float(overall.get(run, 0.0))  # sum of query variances / Q**2
    metrics(view)
    st.subheader("Sampled values per query")
    chosen = per_query(view, tied)
    st.subheader("The sampled mean converges to the tie-aware value")
    convergence_chart(view)
    st.subheader("Queries ordered by tie variance, split by tie group")
    group_bars(view, chosen, len(tied))
    query_table(view)
    st.subheader("One query: sampled histogram and exact distribution")
    one_query(view, chosen)
    interpolated_precision(view)


def metrics(view: dict) -> None:
    """The exact mean and sd of the system's value beside their sampled estimates."""
    exact, samples, settings = view["exact"], view["samples"], view["settings"]
    sampled = variance.sampled_summary(samples)
    cols = st.columns(4)
    cols[0].metric(
        "aware (exact mean)", report.format_value(exact["value"].mean()), help=ch.GLOSSARY["aware"]
    )
    cols[1].metric(
        f"sampled mean ({settings.samples})",
        report.format_value(sampled["mean"]),
        help=ch.GLOSSARY["sampled"],
    )
    cols[2].metric(
        "exact sd of the mean",
        report.format_value(float(variance.tie_sd(view["var_of_mean"])), 5),
        help=ch.GLOSSARY["tie_sd"],
    )
    cols[3].metric(
        "sampled sd of the mean",
        report.format_value(sampled["sd"], 5),
        help="the sd of the sampled means; it estimates the exact one",
    )


def per_query(view: dict, tied) -> list:
    """The sampled values of the queries with most tie variance beside the exact mean ± sd;
    a sentence when only one query has any (one full-width box says nothing more).
    Returns the queries shown."""
    exact, samples, measure = view["exact"], view["samples"], view["measure"]
    if len(tied) == 1:
        qid = tied.index[0]
        values = samples[qid]
        st.caption(
            f"Only one query of {view['said']} has tie variance for {measure}: query "
            f"{report.escape_markdown(str(qid))}. Its {len(values)} sampled values range from "
            f"{report.format_value(values.min())} to {report.format_value(values.max())} "
            f"(median {report.format_value(values.median())}); the exact mean over every order "
            f"is {report.format_value(exact.loc[qid, 'value'])} ± "
            f"{report.format_value(exact.loc[qid, 'sd'])} (1 sd). Its distribution is drawn "
            "further down."
        )
        return [qid]
    top = st.slider(
        "Queries shown (most tie variance first)",
        1,
        len(tied),
        min(20, len(tied)),
        key="variance_top",
    )
    chosen = tied.index[:top].tolist()
    ticks = [ch.plain(q) for q in chosen]  # query ids as plotly text (HTML-escaped)
    box = go.Figure()
    box.add_trace(
        go.Box(
            x=np.repeat(ticks, len(samples)),
            y=samples[chosen].to_numpy().T.ravel(),
            name="sampled",
            marker_color=ch.MODE_COLORS["sampled"],
            boxpoints=False,
            hovertemplate="query %{x}<br>sampled value %{y:.4f}<extra></extra>",
        )
    )
    box.add_trace(
        go.Scatter(
            x=ticks,
            y=exact.loc[chosen, "value"],
            mode="markers",
            name="exact mean ± sd",
            marker={"symbol": "diamond", "size": 10, "color": ch.MODE_COLORS["aware"]},
            error_y={"type": "data", "array": exact.loc[chosen, "sd"], "visible": True},
            customdata=exact.loc[chosen, ["sd", "min", "max"]].to_numpy(),
            hovertemplate="query %{x}<br>exact mean %{y:.4f} ± %{customdata[0]:.4f}<br>"
            "range %{customdata[1]:.4f} … %{customdata[2]:.4f}<extra></extra>",
        )
    )
    ch.show(
        box,
        "variance_box",
        height=420,
        x_title="query (most tie variance first)",
        y_title=f"{measure} of the query (0–1)",
        xaxis={"type": "category"},
    )
    st.caption("Boxes: the sampled values (quartiles, whiskers). Diamonds: the exact mean ± 1 sd.")
    return chosen


def convergence_chart(view: dict) -> None:
    """The running sampled mean inside aware ± 2 sd/√n, on a log axis of n."""
    exact, measure = view["exact"], view["measure"]
    aware = float(exact["value"].mean())
    means = variance.sampled_summary(view["samples"])["means"]
    frame = variance.convergence(means, aware, view["var_of_mean"])
    line = go.Figure()
    line.add_trace(ch.band(frame["n"], frame["low"], frame["high"], "aware ± 2 sd/√n"))
    line.add_trace(
        go.Scatter(
            x=frame["n"],
            y=frame["running"],
            mode="lines",
            name="running sampled mean",
            line={"color": ch.MODE_COLORS["sampled"]},
            hovertemplate="%{x} samples: mean %{y:.5f}<extra></extra>",
        )
    )
    line.add_hline(y=aware, line={"color": ch.MODE_COLORS["aware"], "dash": "dash"})
    ch.show(
        line,
        "variance_convergence",
        height=360,
        x_title="number of random tie-breaks n (log scale)",
        y_title=f"µ: mean {measure} over {len(exact)} queries",
        # ticks at 1, 10, 100, ... only: a log axis's 2s and 5s crowd a phone's width
        xaxis={"type": "log", "dtick": 1, "tickformat": "d"},
    )
    st.caption(
        f"Dashed: the exact tie-aware mean. {ch.GLOSSARY['two_sd_band']}. The band narrows as "
        f"1/√n, so each extra digit of accuracy costs 100 times more samples. "
        f"{ch.GLOSSARY['mu_axis']}."
    )


def group_bars(view: dict, chosen: list, tied: int) -> None:
    """Each query's exact tie variance, its bar split into the tie groups it comes from."""
    dataset, settings, measure, run = (view[k] for k in ("dataset", "settings", "measure", "run"))
    exact = view["exact"]
    if not Measure.parse(measure).has_tie_groups:
        st.info(
            f"{measure}'s variance does not split by tie group: its per-doc terms depend on "
            "the docs above, so a group's order matters only together with the others'. The "
            "per-query table below gives each query's whole tie variance.",
            icon=":material/info:",
        )
        return
    groups = cache.tie_groups(dataset, dataset.key, run, measure, settings.rel_level, None)
    if groups is None or not {"qid", "var_share", "start_rank"} <= set(groups.columns):
        return
    parts = variance.group_parts(groups, exact["var"], chosen)
    several = parts["place"].max() > 1 if len(parts) else False
    stack = go.Figure()
    for place, part in parts.groupby("place"):
        stack.add_trace(
            go.Bar(
                x=part["qid"].map(ch.plain),
                y=part["var_part"],
                name=part["label"].iloc[0] if place <= 5 else "the groups below",
                legendgroup=str(min(place, 6)),
                showlegend=bool(several and place <= 6),
                customdata=part[
                    ["start_rank", "end_rank", "size", "relevant", "var_share"]
                ].to_numpy(),
                hovertemplate="query %{x}: ranks %{customdata[0]}–%{customdata[1]}, "
                "%{customdata[2]} docs, %{customdata[3]} relevant<br>variance %{y:.3g} "
                "(%{customdata[4]:.1%} of the query's)<extra></extra>",
            )
        )
    ch.show(
        stack,
        "variance_groups",
        height=400,
        legend="tie group (with variance), top down" if several else False,
        barmode="stack",
        x_title="query",
        y_title=f"variance of {measure} (value²)",
        xaxis={"type": "category", "categoryorder": "array", "categoryarray": chosen},
    )
    st.caption(
        (
            "Each bar is a query's exact tie variance; its segments are the tie groups whose "
            "order matters, the highest-ranked first. "
            if several
            else "Each bar is a query's exact tie variance; in every query shown it comes from "
            "one tie group (hover a bar for its ranks). "
        )
        + "A tie group: a query's documents that share one score. "
        + f"{ch.GLOSSARY['value_squared']}. "
        f"{len(exact) - tied} of {len(exact)} queries have no tie variance."
    )


def query_table(view: dict) -> None:
    """Every query's exact mean, variance, sd and range beside its sampled mean and sd."""
    exact, samples = view["exact"], view["samples"]
    table = exact.drop(columns=["run"], errors="ignore").reset_index()
    sampled = variance.sampled_summary(samples)
    table["sampled_mean"] = sampled["query_mean"].reindex(table["qid"]).to_numpy()
    table["sampled_sd"] = sampled["query_sd"].reindex(table["qid"]).to_numpy()
    with st.expander("Per-query table"):
        ch.show_table(
            table.sort_values("var", ascending=False),
            f"variance {view['run']} {view['measure']}",
            key="download_variance",
            provenance=cache.provenance(
                view["dataset"],
                view["settings"],
                measure=view["measure"],
                ties="aware, sampled",
                system=view["run"],
            ),
        )


def one_query(view: dict, chosen: list) -> None:
    """One query's sampled values beside the exact probability of each value."""
    exact, samples, measure, run = view["exact"], view["samples"], view["measure"], view["run"]
    dataset, settings = view["dataset"], view["settings"]
    qid = st.selectbox("Query", chosen, key=f"variance_qid_{run}_{measure}")
    values = samples[qid]
    histogram = go.Figure()
    counts = values.round(12).value_counts(normalize=True).sort_index()
    if len(counts) <= 60:  # few distinct values: one bar per value, beside the exact dots
        histogram.add_trace(
            go.Bar(
                x=counts.index,
                y=counts.to_numpy(),
                name=f"{len(values)} samples",
                marker_color=ch.MODE_COLORS["sampled"],
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
                marker_color=ch.MODE_COLORS["sampled"],
                opacity=0.7,
                hovertemplate="values %{x}<br>share of samples %{y:.3f}<extra></extra>",
            )
        )
    distribution = cache.distribution(dataset, dataset.key, run, measure, settings.rel_level, qid)
    if distribution is not None and len(distribution) <= 400:
        histogram.add_trace(
            go.Scatter(
                x=distribution["value"],
                y=distribution["probability"],
                mode="markers",
                name="exact probability",
                marker={"color": ch.MODE_COLORS["aware"], "size": 7},
                hovertemplate="value %{x:.4f}<br>probability %{y:.4f}<extra></extra>",
            )
        )
    mean, sd = float(exact.loc[qid, "value"]), float(exact.loc[qid, "sd"])
    for x, dash in ((mean, "solid"), (mean - sd, "dot"), (mean + sd, "dot")):
        histogram.add_vline(x=x, line={"color": ch.MODE_COLORS["aware"], "dash": dash})
    ch.show(
        histogram,
        "variance_histogram",
        height=340,
        x_title=f"{measure} of query {ch.plain(qid)}",
        y_title="probability",
        bargap=0.05,
    )
    st.caption(
        f"Solid line: the exact mean {report.format_value(mean)}; dotted: ± 1 exact sd "
        f"({report.format_value(sd)}). Dots: the exact probability of each value over all "
        "orderings (P, R, F1, Rprec, Success, RR, when few enough to list); bars: the samples."
    )


def interpolated_precision(view: dict) -> None:
    """The 11-point interpolated precision curve of the system, when the sidebar's measures
    ask for interpolated precision (else one line saying how to get it)."""
    dataset, settings, run = view["dataset"], view["settings"], view["run"]
    if not any(Measure.parse(m).family == "IPrec" for m in settings.measures):
        st.caption(
            "Add an interpolated precision measure (IPrec@0.5, say) to the sidebar's measures "
            "to see this system's 11-point precision-recall curve under ties here."
        )
        return
    st.subheader("Interpolated precision (11 points)")
    curve = cache.iprec_curve(
        dataset, dataset.key, run, settings.rel_level, settings.samples, settings.seed,
        settings.tiebreak,
    )  # fmt: skip
    order = (
        "trec_eval's order"
        if settings.tiebreak == "trec_eval"
        else f"tie-break {ch.tiebreak_name(settings.tiebreak)}"
    )
    table = curve["table"]
    ch.show(
        _iprec_figure(curve, order),
        "variance_iprec",
        height=360,
        x_title="recall level",
        y_title="interpolated precision, mean over queries (0–1)",
        xaxis={"tickmode": "array", "tickvals": list(table["recall"])},
    )
    _iprec_note(view, curve, order)
    _iprec_table(view, curve)


def _iprec_figure(curve: dict, order: str) -> go.Figure:
    """The curve under ``order``, and the exact aware mean with its min-max band (or the
    sampled mean where tiecore refused the exact one)."""
    table = curve["table"]
    recall = table["recall"]
    figure = go.Figure()
    if curve["refused"] is None:
        figure.add_trace(ch.band(recall, table["min"], table["max"], "min–max over orderings"))
    figure.add_trace(
        go.Scatter(
            x=recall,
            y=table["oblivious"],
            mode="lines+markers",
            name=f"oblivious ({order})",
            line={"color": ch.MODE_COLORS["oblivious"]},
            hovertemplate="recall %{x:.1f}<br>oblivious %{y:.4f}<extra></extra>",
        )
    )
    if curve["refused"] is None:
        figure.add_trace(
            go.Scatter(
                x=recall,
                y=table["aware"],
                mode="lines+markers",
                name="aware (exact mean)",
                line={"color": ch.MODE_COLORS["aware"]},
                customdata=table[["sd", "min", "max"]].to_numpy(),
                hovertemplate="recall %{x:.1f}<br>aware %{y:.4f} ± %{customdata[0]:.4f}<br>"
                "range %{customdata[1]:.4f} … %{customdata[2]:.4f}<extra></extra>",
            )
        )
    else:
        figure.add_trace(
            go.Scatter(
                x=recall,
                y=table["sampled"],
                mode="lines+markers",
                name=f"sampled ({curve['samples']} tie-breaks)",
                line={"color": ch.MODE_COLORS["sampled"]},
                customdata=table[["sampled_sd"]].to_numpy(),
                hovertemplate="recall %{x:.1f}<br>sampled %{y:.4f} (sd %{customdata[0]:.4f})"
                "<extra></extra>",
            )
        )
    return figure


def _iprec_note(view: dict, curve: dict, order: str) -> None:
    """What the curve shows, or why the exact curve is missing."""
    if curve["refused"] is None:
        st.caption(
            "Interpolated precision at the 11 recall levels 0, 0.1, ..., 1 (as trec_eval "
            "reports it). Grey: the value under "
            f"{order}; blue: the exact tie-aware mean over every order of the tied "
            "documents; band: the lowest and highest mean any order gives."
        )
    else:
        # tiecore's reason without its "(expected ties=...)" advice, which names API arguments
        reason = curve["refused"].split(" (expected ")[0]
        st.warning(
            f"There is no exact tie-aware curve for {view['said']}: a tie group has "
            "too many orders of its relevant and non-relevant documents to enumerate for "
            f"interpolated precision, so tiecore refuses rather than guess ({reason}). "
            f"Shown instead: the sampled mean over {curve['samples']} random tie-breaks "
            f"(an estimate of the tie-aware curve), beside {order}.",
            icon=":material/info:",
        )


def _iprec_table(view: dict, curve: dict) -> None:
    """The curve's table, with its CSV download."""
    table, run = curve["table"], view["run"]
    ch.show_table(
        table,
        f"iprec {run}",
        key="download_variance_iprec",
        provenance=cache.provenance(
            view["dataset"],
            view["settings"],
            measure=", ".join(cache.iprec_measures()),
            ties="oblivious, aware" if curve["refused"] is None else "oblivious, sampled",
            system=run,
        ),
        column_config={
            "recall": st.column_config.NumberColumn(
                help="recall level r: IPrec@r is the largest precision at or below the rank "
                "of relevant document number max(1, ⌊r·R + 0.9⌋), R relevant (as trec_eval "
                "computes it); the table's values are means over the queries",
                format="%.1f",
            ),
            "oblivious": st.column_config.NumberColumn(
                help="IPrec under trec_eval's order (score, then docno descending)",
                format="%.4f",
            ),
            "sd": st.column_config.NumberColumn(
                help="exact sd of the mean over uniformly random tie-breaks", format="%.4f"
            ),
            "sampled_sd": st.column_config.NumberColumn(
                help="sd of the sampled mean over the random tie-breaks", format="%.4f"
            ),
        },
    )


page()

"""Tie anatomy: one query of one system drawn as tie groups around the measure's cutoff.

The page is :func:`page`: widgets, tiecore's spread and one query's anatomy
(:func:`tiecore.explain.anatomy`, through :func:`app_lib.cache.query_anatomy`), drawn.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app_lib import cache, glossary
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import report
from tiecore.explain import variance as tie_variance

#: A user's name (run tag, query id) as text in Markdown.
said = report.escape_markdown
HOW = (
    "A **tie group** is a run of documents with one score. Every order of a group is equally "
    "likely, so each of its ranks holds a relevant document with probability r/n (r relevant "
    "of its n documents). For a measure with a cutoff k, only the group **V_c** holding rank "
    "k is cut: k − t_c of its n_c documents fall inside (t_c documents rank above it), so the "
    "expected number of relevant documents in the top k is R_c + (k − t_c)·r_c/n_c. The "
    "measure's tie-aware value follows from these quantities (the formula below, from the "
    "paper), and its variance from how the cut group's documents can fall. A mixed group "
    "wholly above the cutoff moves only measures that weigh ranks differently (AP, nDCG, RR), "
    "never P@k."
)


def page() -> None:
    """The page: a measure, a system and a query, then the query's tie groups."""
    dataset, settings = sb.context()
    st.title("Tie anatomy")
    ch.dataset_caption(dataset)
    st.caption(
        "One ranked list as its tie groups (docs sharing a score). Only the group that "
        "straddles the cutoff, and mixed groups above it, let the tie-break change the value."
    )
    ch.how_it_works(HOW)
    view = choose(dataset, settings)
    parts = cache.query_anatomy(
        dataset,
        dataset.key,
        view["run"],
        view["qid"],
        view["measure"],
        settings.rel_level,
        settings.tiebreak,
    )
    view["parts"] = parts
    groups = parts["groups"]
    view["length"] = int(groups["end_rank"].max()) if len(groups) else 0
    metrics(view)
    if view["length"] == 0:
        st.info(
            f"{said(dataset.describe(view['run']))} retrieved nothing for query "
            f"{said(view['qid'])}."
        )
        st.stop()
    anatomy_chart(view)
    st.subheader("The paper's quantities")
    quantities(view)
    tables(view)


def choose(dataset, settings) -> dict:
    """The measure, the system (most tie variance first) and the query, with what they are."""
    left, middle, right = st.columns(3)
    with middle:
        measure = sb.pick_measure(settings, key="anatomy_measure", need="groups")
        st.caption(glossary.define(measure))
    spread = cache.spread_table(dataset, settings, measures=[measure], per_query=True)
    overall = spread[spread["qid"].isna()].set_index("run")["var"].reindex(dataset.names)
    noisy = overall.fillna(0)
    noisy = noisy[noisy > 0].sort_values(ascending=False)
    with left:
        run = sb.pick_run(
            dataset,
            key=f"anatomy_run_{dataset.key}",
            names=[*noisy.index, *[r for r in dataset.names if r not in noisy.index]],
            label="System (most tie variance first)",
        )
    if noisy.empty:
        st.info(
            f"No system has tie variance for {measure}: whatever the tie-break, every query "
            "keeps its value. The anatomy below still shows the tie groups.",
            icon=":material/info:",
        )
    queries = spread[(spread["run"] == run) & (spread["qid"].notna())].sort_values(
        ["var", "qid"], ascending=[False, True]
    )
    if queries.empty:
        st.warning(f"{said(dataset.describe(run))} has no judged queries: nothing to take apart.")
        st.stop()
    sd = dict(zip(queries["qid"], tie_variance.tie_sd(queries["var"]), strict=True))
    with right:
        qid = st.selectbox(
            "Query (most tie variance first)",
            queries["qid"].tolist(),
            key=f"anatomy_qid_{dataset.key}_{run}_{measure}",
            format_func=lambda q: f"{q}  (sd {report.format_value(sd[q])})",
        )
    if not noisy.empty and noisy.get(run, 0) == 0:
        st.info(
            f"{said(dataset.describe(run))} has no tie variance for {measure}; "
            f"{said(dataset.describe(noisy.index[0]))} has the most."
        )
    elif sd[qid] == 0 and sd[queries["qid"].iloc[0]] > 0:
        st.info(
            f"Query {said(qid)} has no tie variance for {measure}; query "
            f"{said(queries['qid'].iloc[0])} has the most."
        )
    return {
        "dataset": dataset,
        "settings": settings,
        "measure": measure,
        "run": run,
        "qid": qid,
        "sd": sd[qid],
        "row": queries.set_index("qid").loc[qid],
        "tiebreak": ch.tiebreak_name(settings.tiebreak),
    }


def metrics(view: dict) -> None:
    """The query's value in each mode, its sd and range, and R."""
    dataset, settings, row = view["dataset"], view["settings"], view["row"]
    oblivious = cache.evaluate(
        dataset, settings, "oblivious", measures=[view["measure"]], names=[view["run"]],
        per_query=True,
    )  # fmt: skip
    value = oblivious.loc[oblivious["qid"] == view["qid"], "value"]
    cols = st.columns(6)
    cols[0].metric(
        "aware (exact mean)", report.format_value(row["value"]), help=ch.GLOSSARY["aware"]
    )
    cols[1].metric(
        f"oblivious ({view['tiebreak']})",
        report.format_value(value.iloc[0] if len(value) else math.nan),
        help=ch.tiebreak_help(settings.tiebreak),
    )
    cols[2].metric(
        "sd over tie-breaks", report.format_value(view["sd"]), help="exact sd of this query's value"
    )
    cols[3].metric("min over tie-breaks", report.format_value(row["min"]), help=ch.GLOSSARY["min"])
    cols[4].metric("max over tie-breaks", report.format_value(row["max"]), help=ch.GLOSSARY["max"])
    cols[5].metric(
        "relevant in qrels", view["parts"]["num_rel"], help="R: relevant docs of the query"
    )


def anatomy_chart(view: dict) -> None:
    """The ranked list as tie groups (blocks) over the expected gain at each rank."""
    parts, length = view["parts"], view["length"]
    groups, quantities, ranks = parts["groups"], parts["quantities"], parts["ranks"]
    cutoff = quantities["k"]
    focus_end = quantities["t_c"] + quantities["n_c"]
    default_span = min(length, max(30, 2 * min(cutoff, length), focus_end + 10))
    span = (
        st.slider(
            "Ranks shown",
            5,
            length,
            max(5, default_span),
            key=f"anatomy_span_{view['run']}_{view['qid']}",
            help="the list can hold 1,000 docs; the chart starts at rank 1",
        )
        if length > 5
        else length
    )
    shown = groups[groups["start_rank"] <= span]
    layout, ((x1, y1), (x2, y2)) = ch.stacked_layout(
        2,
        heights=[0.6, 0.4],
        gap=0.1,
        titles=(
            "tie groups: block width = group size, filled height = share of relevant docs",
            "expected gain at each rank (mean over orderings)",
        ),
    )
    traces = _group_traces(view, shown, quantities, (x1, y1))
    if ranks is not None:
        part = ranks[ranks["rank"] <= span]
        traces.append(
            go.Scatter(
                x=part["rank"],
                y=part["expected_gain"],
                mode="lines",
                line={"shape": "hvh", "color": "#2ca02c"},
                customdata=part[["p_relevant", "group"]].to_numpy(),
                hovertemplate="rank %{x}: expected gain %{y:.3f}<br>P(relevant) "
                "%{customdata[0]:.3f} (group %{customdata[1]})<extra></extra>",
                xaxis=x2,
                yaxis=y2,
            )
        )
    layout["yaxis"].update(title="relevant share (r/n)", range=[0, 1.2])
    layout["yaxis2"].update(title=f"gain ({view['settings'].gain})")
    layout["xaxis2"].update(title="rank", range=[0.5, span + 0.5])
    if cutoff <= span:
        _cutoff_line(layout, cutoff, ((x1, y1), (x2, y2)))
    ch.show(
        go.Figure(traces, layout),
        "anatomy_chart",
        height=560,
        legend=False,
        bargap=0,
        barmode="overlay",
    )
    st.caption(
        "Each shaded block is a tie group; the filled part is its share of relevant docs, which "
        "is also the probability that any of its ranks holds a relevant doc. Red: the group V_c "
        "that straddles the cutoff — only k − t_c of its n_c docs fall inside. Blue: other tie "
        "groups; grey: untied docs. Labels: relevant / size."
    )


def _group_traces(view: dict, shown, quantities: dict, axes: tuple[str, str]) -> list:
    """The tie groups as blocks: the group's width, filled to its share of relevant docs."""
    dataset, settings = view["dataset"], view["settings"]
    straddling = (shown["group"] == quantities["group"]).to_numpy() & (shown["size"].to_numpy() > 1)
    tied = (shown["size"] > 1).to_numpy()
    shade = np.where(straddling, "#f6c9c9", np.where(tied, "#dbe7f3", "#f0f0f0"))
    colors = np.where(straddling, "#d62728", np.where(tied, "#3182bd", "#7f7f7f"))
    groups = cache.tie_groups(
        dataset, dataset.key, view["run"], view["measure"], settings.rel_level, view["qid"]
    )
    share = (
        shown["start_rank"].map(dict(zip(groups["start_rank"], groups["var_share"], strict=True)))
        if "var_share" in groups and "start_rank" in groups
        else shown["start_rank"] * 0.0
    ).fillna(0.0)
    centers = (shown["start_rank"] + shown["end_rank"]) / 2
    columns = ["group", "start_rank", "end_rank", "size", "relevant", "judged_nonrelevant", "gain"]
    x, y = axes
    return [
        go.Bar(
            x=centers,
            y=np.ones(len(shown)),
            width=shown["size"],
            hoverinfo="skip",
            marker={"color": shade, "line": {"color": "white", "width": 1}},
            xaxis=x,
            yaxis=y,
        ),
        go.Bar(
            x=centers,
            y=shown["relevant"] / shown["size"],
            width=shown["size"],
            marker={"color": colors, "line": {"color": "white", "width": 1}},
            text=[
                f"{r}/{n}" if n > 1 else ""
                for r, n in zip(shown["relevant"], shown["size"], strict=True)
            ],
            textposition="outside",
            customdata=np.column_stack([shown[columns].to_numpy(float), share.to_numpy(float)]),
            hovertemplate="group %{customdata[0]:.0f}: ranks %{customdata[1]:.0f}–"
            "%{customdata[2]:.0f} (%{customdata[3]:.0f} docs)<br>%{customdata[4]:.0f} relevant, "
            "%{customdata[5]:.0f} judged non-relevant<br>total gain %{customdata[6]:.0f}<br>share "
            "of the query's tie variance %{customdata[7]:.1%}<extra></extra>",
            xaxis=x,
            yaxis=y,
        ),
    ]


def _cutoff_line(layout: dict, cutoff: int, axes) -> None:
    """A dashed line after rank k in both panels, named above the upper one."""
    layout["shapes"] = [
        {
            "type": "line",
            "x0": cutoff + 0.5,
            "x1": cutoff + 0.5,
            "xref": x,
            "y0": 0,
            "y1": 1,
            "yref": f"{y} domain",
            "line": {"color": "black", "dash": "dash"},
        }
        for x, y in axes
    ]
    layout["annotations"].append(
        {
            "x": cutoff + 0.5,
            "y": 1.12,
            "xref": axes[0][0],
            "yref": axes[0][1],
            "text": f"cutoff k = {cutoff}",
            "showarrow": False,
            "xanchor": "left",
        }
    )


def quantities(view: dict) -> None:
    """R_c, t_c, n_c, r_c and the formula of the tie-aware value with them."""
    parts, measure, row, length = view["parts"], view["measure"], view["row"], view["length"]
    q, ranks = parts["quantities"], parts["ranks"]
    cutoff = q["k"]
    c = st.columns(4)
    c[0].metric(
        "R_c: relevant above V_c", q["R_c"], help="relevant docs ranked above the group V_c"
    )
    c[1].metric("t_c: ranks above V_c", q["t_c"], help="docs ranked above V_c")
    c[2].metric("n_c: docs in V_c", q["n_c"], help="V_c: the tie group holding rank k")
    c[3].metric("r_c: relevant in V_c", q["r_c"], help="relevant docs inside V_c")
    if cutoff > length:
        st.caption(
            f"k = {cutoff} is past the end of the list ({length} docs): k − t_c counts "
            f"{q['inside']} slots."
        )
    formula = parts["formula"]
    if formula is not None:
        st.latex(formula.latex)
        st.caption(
            f"R = {parts['num_rel']} relevant docs in the qrels. tiecore's tie-aware value: "
            f"{report.format_value(row['value'])}."
        )
        return
    st.latex(
        r"\text{expected relevant in the top }k:\ R_c + (k - t_c)\frac{r_c}{n_c} = "
        rf"{q['R_c']} + {q['inside']}\cdot\frac{{{q['r_c']}}}{{{max(q['n_c'], 1)}}} = "
        rf"{q['expected_relevant']:.3f}"
    )
    if ranks is not None:
        total = float(ranks["term"].sum())
        st.caption(
            f"{measure} sums, over the ranks above its cutoff, each rank's expected term (mean "
            "over all orderings): a doc of a group with n docs, r relevant, is relevant with "
            f"probability r/n. The {len(ranks)} expected terms sum to "
            f"{report.format_value(total)}, the tie-aware value. The chart's lower panel is the "
            "nDCG numerator's per-rank gain."
        )


def tables(view: dict) -> None:
    """The query's tie groups and its ranked list, with their downloads."""
    dataset, settings, measure = view["dataset"], view["settings"], view["measure"]
    run, qid, parts = view["run"], view["qid"], view["parts"]
    with st.expander("Tie groups of this query (table)"):
        ch.show_table(
            parts["groups"],
            f"tie groups {run} {qid}",
            key="download_groups",
            provenance=cache.provenance(
                dataset, settings, measure=measure, ties="aware", query=qid, system=run
            ),
        )
    with st.expander(f"The ranked list in {view['tiebreak']}'s order"):
        ch.show_table(
            parts["listing"],
            f"ranked list {run} {qid}",
            key="download_list",
            provenance=cache.provenance(
                dataset, settings, measure=measure, ties="oblivious", query=qid, system=run
            ),
        )


page()

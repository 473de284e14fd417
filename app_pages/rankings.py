"""System rankings: how tie treatment reorders systems, and whether the order means anything."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_lib import cache
from app_lib import charts as ch
from app_lib import sidebar as sb
from app_lib.rank_tables import (
    CORRECTION_NAMES,
    DASH,
    MOVER_COLORS,
    NAME_LIMIT,
    ORDERING_NAMES,
    STILL_COLOR,
    change,
    columns_config,
    plain,
    readable,
    svg_text,
    table,
)
from tiecore import report
from tiecore.options import CORRECTIONS
from tiecore.stats.ranks import mean_ranks, rank_change, rank_labels, tie_ranks

dataset, settings = sb.context()
st.title("System rankings")
ch.dataset_caption(dataset)
st.caption(
    "Systems ranked by one measure under every tie-break, and tie-aware (the exact mean over "
    "every order of the tied documents); then compared pair by pair. Rank 1 is the best; "
    "“=3” is a rank shared by systems with equal scores."
)
if len(dataset.runs) < 2:
    st.info(
        f"Rankings need at least two systems; this data set has one ({plain(dataset.names[0])}). "
        "Upload more runs, or choose a sample in the sidebar."
    )
    st.stop()

left, right = st.columns([1, 2])
with left:
    measure = sb.pick_measure(settings, key="rankings_measure", need="spread")
aware = cache.spread_table(dataset, settings, measures=[measure])
best = aware.sort_values("value", ascending=False, kind="stable")["run"].tolist()
with right:
    names = st.multiselect(
        "Systems",
        dataset.names,
        default=best[:20] if len(best) > 20 else dataset.names,
        key=f"rankings_runs_{dataset.key}",
        format_func=dataset.describe,
        help="the 20 best tie-aware systems are chosen first; pairwise tests grow with the "
        "square of the number of systems",
    )
if len(names) < 2:
    st.info("Choose at least two systems.")
    st.stop()

result = cache.comparison(dataset, settings, measure, names)
describe = dataset.describe
orderings = [c for c in ORDERING_NAMES if c in result.scores.columns]
# integer competition ranks (1, =2, =2, 4) with compare's tie tolerance, per ordering
rank_of = pd.DataFrame(
    {c: tie_ranks(result.scores[c].to_numpy()) for c in orderings},
    index=result.scores.index,
)
label_of = pd.DataFrame(
    {c: rank_labels(rank_of[c].to_numpy()) for c in orderings}, index=rank_of.index
)
order = rank_of.sort_values(["aware", "trec_eval"], kind="stable").index.tolist()
sample_scores = result.sample_scores[order]
mean_rank = pd.Series(mean_ranks(sample_scores.to_numpy()), index=sample_scores.columns)
prov = cache.provenance(
    dataset, settings, measure=measure, ties="all orderings", systems=len(names)
)
# --- the verdict first: who moves, in words and in a table
st.subheader("Does the tie-break reorder the systems?")
moved = [run for run in order if rank_of.loc[run, "trec_eval"] != rank_of.loc[run, "aware"]]
if not moved:
    st.success(
        f"No system changes rank between trec_eval's order and tie-aware for {measure}.",
        icon=":material/check_circle:",
    )
else:
    shift = pd.Series(
        rank_change(rank_of.loc[moved, "trec_eval"], rank_of.loc[moved, "aware"]), index=moved
    )
    moved = sorted(moved, key=lambda run: -abs(int(shift[run])))  # largest moves first
    said = [
        f"{plain(describe(run))} from {label_of.loc[run, 'trec_eval']} to "
        f"{label_of.loc[run, 'aware']}"
        for run in moved[:5]
    ]
    more = f", and {len(moved) - 5} more (table below)" if len(moved) > 5 else ""
    st.warning(
        f"**{len(moved)} {'system changes' if len(moved) == 1 else 'systems change'} rank "
        f"for {measure}** when tied documents are averaged over every order (tie-aware) "
        f"instead of broken by docno as trec_eval does: {'; '.join(said)}{more}.",
        icon=":material/swap_vert:",
    )
    swaps = pd.DataFrame(
        {
            "system": moved,
            "rank_trec_eval": rank_of.loc[moved, "trec_eval"].to_numpy(),
            "rank_aware": rank_of.loc[moved, "aware"].to_numpy(),
            "rank_change": shift[moved].to_numpy(),
        }
    )
    shown = swaps.assign(
        system=swaps["system"].map(describe),
        rank_trec_eval=label_of.loc[moved, "trec_eval"].to_numpy(),
        rank_aware=label_of.loc[moved, "aware"].to_numpy(),
        rank_change=swaps["rank_change"].map(change),
    )
    table(
        shown,
        f"rank changes {measure}",
        key="download_swaps",
        caption=f"Systems whose rank by {measure} differs between trec_eval's tie-break and "
        "tie-aware scoring (=3: a shared rank; ↑: climbs under tie-aware scoring).",
        provenance=prov,
        numbers=swaps,
        config={
            "system": st.column_config.TextColumn("System"),
            "rank_trec_eval": st.column_config.TextColumn(
                "Rank (trec_eval)", help=ch.tiebreak_help("trec_eval")
            ),
            "rank_aware": st.column_config.TextColumn(
                "Rank (tie-aware)", help=ch.GLOSSARY["aware"]
            ),
            "rank_change": st.column_config.TextColumn(
                "Change", help="places gained (↑) or lost (↓) under tie-aware scoring"
            ),
        },
    )
close = report.closest_pairs(result.pairs, order=order)
if close.empty:
    nearest = report.nearest_pairs(result.pairs, count=3, order=order)
    said = "; ".join(
        f"{plain(describe(row.a))} vs {plain(describe(row.b))}: gap {abs(row.mean_diff):.4f}"
        + (
            f", {row.gap_in_tie_noise:.1f}× the tie noise"
            if np.isfinite(row.gap_in_tie_noise)
            else ", no tie noise"
        )
        for row in nearest.itertuples()
    )
    st.info(
        "No pair is close: for every pair P(A beats B) under random tie-breaking is outside "
        "5–95% and the gap exceeds the tie noise, so tie-breaking alone cannot swap them."
        + (f" Nearest to a swap: {said}." if said else "")
    )
else:
    st.markdown(
        f"**{len(close)} {'pair' if len(close) == 1 else 'pairs'} whose order ties could "
        "decide** (0.05 < P(A beats B) < 0.95, or gap within the tie noise), closest to a coin "
        "toss first:"
    )
    config = columns_config("holm", "95%", "bootstrap", measure)
    close_config = {c: config[c] for c in close.columns if c in config}
    if "gap_in_tie_noise" in close.columns:
        close_config["gap_in_tie_noise"] = st.column_config.NumberColumn(
            "Gap / tie noise",
            help="the gap of the tie-aware means in units of tie noise",
            format="%.2f",
        )
    table(
        readable(close, describe),
        f"closest pairs {measure}",
        key="download_close",
        caption=f"Pairs of systems whose order by {measure} tie-breaking could decide.",
        provenance=prov,
        config=close_config,
        numbers=close,
    )

# --- the slope chart: every system named at both ends
st.subheader("Ranks under each tie treatment")
n = len(order)
left, right = st.columns([1, 2])
with left:
    top = (
        int(
            st.number_input(
                "Systems drawn (best tie-aware first)",
                min_value=2,
                max_value=n,
                value=n if n <= 12 else 10,
                step=1,
                key=f"rankings_slope_top_{dataset.key}_{n}",
                help=f"all {n} systems are in the table below",
            )
        )
        if n > 2
        else n
    )
differ = [  # the other document-order tie-breaks that rank some system differently
    c
    for c in ("trec_eval_double", "docno_asc", "file_order")
    if c in orderings
    and not (rank_of[c].equals(rank_of["trec_eval"]) and rank_of[c].equals(rank_of["aware"]))
]
with right:
    middle = st.multiselect(
        "More tie-breaks between trec_eval and tie-aware",
        [c for c in orderings if c not in ("trec_eval", "aware")],
        default=differ,
        format_func=ORDERING_NAMES.get,
        key=f"rankings_slope_middle_{dataset.key}_{measure}_{n}",
        help="by default the other document-order tie-breaks that rank some system "
        "differently. "
        + " · ".join(
            f"{ORDERING_NAMES[c]}: {ch.tiebreak_help(c)}" for c in orderings if c != "aware"
        ),
    )
axis = ["trec_eval", *middle, "aware"]
drawn = order[:top]
names_drawn = [str(run) for run in drawn]
cut = [ch.short(name, NAME_LIMIT) for name in names_drawn]
labels = cut if len(set(cut)) == len(cut) else names_drawn  # cut only while they stay distinct
ranks_drawn = rank_of.loc[drawn, axis].to_numpy()
movers = ranks_drawn.max(axis=1) > ranks_drawn.min(axis=1)
# each system's slot (1..top) in each ordering: equal ranks side by side, tie-aware order first
slots = np.empty_like(ranks_drawn)
for j in range(len(axis)):
    sorted_rows = np.lexsort((np.arange(top), ranks_drawn[:, j]))
    slots[sorted_rows, j] = np.arange(1, top + 1)
colors = {}
for k, run in enumerate(r for r, m in zip(drawn, movers, strict=True) if m):
    colors[run] = MOVER_COLORS[k % len(MOVER_COLORS)]
x = list(range(len(axis)))
traces, notes = [], []
for i in [*np.flatnonzero(~movers), *np.flatnonzero(movers)]:  # movers drawn on top
    run = drawn[i]
    color = colors.get(run, STILL_COLOR)
    shown_labels = label_of.loc[run, axis].tolist()
    scores = result.scores.loc[run, axis].to_numpy(np.float64)
    traces.append(
        {
            "type": "scatter",
            "x": x,
            "y": slots[i].tolist(),
            "mode": "lines+markers",
            "line": {"color": color, "width": 3.5 if movers[i] else 1.5},
            "marker": {"color": color, "size": 9 if movers[i] else 6},
            "customdata": [
                [ORDERING_NAMES[c], lab, report.format_value(s)]
                for c, lab, s in zip(axis, shown_labels, scores, strict=True)
            ],
            "hovertemplate": f"<b>{svg_text(describe(run))}</b><br>%{{customdata[0]}}: rank "
            f"%{{customdata[1]}}<br>{svg_text(measure)} %{{customdata[2]}}<extra></extra>",
        }
    )
    font = {"color": color if movers[i] else "#6b6b6b", "size": 13 if movers[i] else 12}
    name = svg_text(labels[i])
    for end, text, anchor, nudge in (
        (0, f"{name}  {shown_labels[0]}", "right", -10),
        (len(axis) - 1, f"{shown_labels[-1]}  {name}", "left", 10),
    ):
        notes.append(
            {
                "x": end,
                "y": int(slots[i, end]),
                "xref": "x",
                "yref": "y",
                "text": f"<b>{text}</b>" if movers[i] else text,
                "xanchor": anchor,
                "xshift": nudge,
                "showarrow": False,
                "font": font,
                "hovertext": svg_text(describe(run)),
            }
        )
widest = max(len(label) for label in labels) + 5  # the name, two spaces and "=12"
side = int(7.5 * widest) + 16
ch.show(
    {"data": traces, "layout": {"annotations": notes}},
    "rankings_bump",
    height=ch.row_height(top, per_row=30, least=280),
    legend=False,
    top=48,
    margin={"l": side, "r": side, "t": 48, "b": 16},
    xaxis={
        "tickvals": x,
        "ticktext": [ORDERING_NAMES[c] for c in axis],
        "side": "top",
        "range": [-0.08, len(axis) - 0.92],
        "showgrid": True,
        "zeroline": False,
        "fixedrange": True,
    },
    yaxis={
        "range": [top + 0.6, 0.4],
        "showticklabels": False,
        "showgrid": False,
        "zeroline": False,
        "fixedrange": True,
    },
)
moving = int(movers.sum())
st.caption(
    (
        f"{moving} of the {top} systems drawn change rank (coloured, thick); the grey ones keep "
        "theirs. "
        if moving
        else f"None of the {top} systems drawn changes rank between these tie treatments. "
    )
    + "Each line joins a system's rank under trec_eval's tie-break (score, then docno "
    "descending) on the left to its tie-aware rank on the right; =3 is a rank shared by equal "
    "scores. Hover a line for the full name and the score."
    + (f" The {top} best tie-aware systems of {n} are drawn." if top < n else "")
)

# --- every rank, as a table
rankings = pd.DataFrame({"system": order})
for c in orderings:
    rankings[f"rank_{c}"] = rank_of.loc[order, c].to_numpy()
rankings["mean_rank_sampled"] = mean_rank.loc[order].to_numpy()
rankings["aware_value"] = result.scores.loc[order, "aware"].to_numpy()
rankings["trec_eval_value"] = result.scores.loc[order, "trec_eval"].to_numpy()
shown = rankings.assign(system=rankings["system"].map(describe))
for c in orderings:
    shown[f"rank_{c}"] = label_of.loc[order, c].to_numpy()
rank_config = {  # narrow columns: every ordering fits 1440 px (long names: hover the cell)
    "system": st.column_config.TextColumn("System", width=180)
}
for c in orderings:
    rank_config[f"rank_{c}"] = st.column_config.TextColumn(
        ORDERING_NAMES[c],
        help="rank under "
        + (ch.GLOSSARY["aware"] if c == "aware" else ch.tiebreak_help(c))
        + " (1 = best; =3: a shared rank)",
        width="small",
    )
rank_config["mean_rank_sampled"] = st.column_config.NumberColumn(
    "Mean rank (random)",
    help=f"the system's rank averaged over the {result.sample_scores.shape[0]} random "
    "tie-breaks (a mean, so not a whole number)",
    format="%.1f",
    width="small",
)
rank_config["aware_value"] = st.column_config.NumberColumn(
    f"{measure} tie-aware", help=ch.GLOSSARY["aware"], format="%.4f", width="small"
)
rank_config["trec_eval_value"] = st.column_config.NumberColumn(
    f"{measure} trec_eval", help=ch.tiebreak_help("trec_eval"), format="%.4f", width="small"
)
with st.expander("Every rank and score (table)", expanded=n > top):
    table(
        shown,
        f"rankings {measure}",
        key="download_rankings",
        caption=f"Ranks of the systems by {measure} under each tie treatment (1 = best; =3: "
        "a shared rank; mean rank: averaged over random tie-breaks).",
        provenance=prov,
        config=rank_config,
        numbers=rankings,
    )

# --- agreement of orderings
labels = [c for c in [*orderings, "random"] if c in set(result.agreement.index.get_level_values(0))]
statistics = list(result.agreement.columns)  # kendall_tau, tau_ap, ... as compare names them
matrices = {
    s: pd.to_numeric(result.agreement[s], errors="coerce")
    .unstack(-1)
    .reindex(index=labels, columns=labels)
    .to_numpy(np.float64)
    for s in statistics
}
same = all(
    np.allclose(m[~np.eye(len(labels), dtype=bool)], 1.0, rtol=0, atol=1e-9)
    for m in matrices.values()
)
left, right = st.columns(2)
with left:
    st.subheader("Agreement between orderings")
    if same:
        st.success(
            "All orderings rank the systems identically (Kendall's τ = 1 for every pair of "
            "tie-breaks, and τ_AP too, random tie-breaks included): how ties are broken does "
            f"not change the order of these systems by {measure}.",
            icon=":material/check_circle:",
        )
    else:
        statistic = st.radio(
            "Statistic",
            statistics,
            horizontal=True,
            key="rankings_stat",
            format_func=lambda s: {
                "kendall_tau": "Kendall's τ",
                "tau_ap": "τ_AP",
                "tau_ap_sym": "τ_AP (symmetric)",
            }.get(s, s),
            help=" · ".join(f"{ch.GLOSSARY.get(s, s)}" for s in statistics),
        )
        st.caption(ch.GLOSSARY.get(statistic, ""))
        values = matrices[statistic]
        if np.isnan(values).all():
            st.info(
                "This statistic is undefined for every pair of orderings: each ordering gives "
                "all chosen systems the same score, so there is no order to compare."
            )
        names_axis = [ORDERING_NAMES[c] for c in labels]
        heat = go.Figure(
            go.Heatmap(
                z=values,
                x=names_axis,
                y=names_axis,
                zmin=-1,
                zmax=1,
                colorscale="RdBu",
                text=np.where(np.isnan(values), DASH, np.char.mod("%.2f", np.nan_to_num(values))),
                texttemplate="%{text}",
                colorbar={"thickness": 12},
                hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>",
            )
        )
        ch.show(
            heat,
            "rankings_agreement",
            height=440,
            legend=False,
            yaxis={"autorange": "reversed"},
            xaxis={"tickangle": -45},
            top=20,
        )
        st.caption(
            "Row ordering against column ordering; 1 = the same ranking of systems. 'random "
            "(mean)': the mean over the random tie-breaks. —: undefined (every system scores "
            "the same under one ordering)."
        )

with right:
    st.subheader("P(row system beats column system)")
    top_heat = ch.top_slider(len(order), "rankings_top", "Systems in the heat map (best first)", 25)
    chosen = order[:top_heat]
    pairs = result.pairs.reset_index()
    column = "p_beats_sampled" if "p_beats_sampled" in pairs else "p_beats_normal"
    beats = pairs.pivot(index="a", columns="b", values=column).reindex(index=chosen, columns=chosen)
    full = [describe(r) for r in chosen]
    hover = np.array(
        [[f"P({svg_text(a)} beats {svg_text(b)})" for b in full] for a in full], dtype=object
    )
    names_axis = [str(r) for r in chosen]  # short_labels escapes them for plotly
    heat = go.Figure(
        go.Heatmap(
            z=beats.to_numpy(np.float64),
            x=ch.short_labels(names_axis, 14),
            y=ch.short_labels(names_axis, 20),
            zmin=0,
            zmax=1,
            colorscale="RdBu",
            colorbar={"thickness": 12},
            customdata=hover,
            hovertemplate="%{customdata} = %{z:.3f}<extra></extra>",
        )
    )
    ch.show(
        heat,
        "rankings_beats",
        height=max(440, 18 * top_heat + 160),
        legend=False,
        x_title="column system",
        y_title="row system (best first)",
        top=20,
        yaxis={"autorange": "reversed", "type": "category", "showticklabels": top_heat <= 60},
        xaxis={"type": "category", "tickangle": -60, "showticklabels": top_heat <= 60},
    )
    st.caption(
        f"{ch.GLOSSARY['p_beats_sampled']}. Near 0.5 (white): the order of the pair is decided by "
        "tie-breaking. Hover for the full names."
    )

# --- significance next to tie noise
st.subheader("Significance, with tie noise beside it")
left, middle, right = st.columns(3)
with left:
    alpha = st.select_slider(
        "Significance level α", [0.001, 0.01, 0.05, 0.1], value=0.05, key="rankings_alpha"
    )
with middle:
    correction = st.selectbox(
        "Multiple-comparison correction",
        CORRECTIONS,  # as tiecore.compare checks them; labelled by CORRECTION_NAMES
        index=CORRECTIONS.index("holm"),
        format_func=CORRECTION_NAMES.get,
        key="rankings_correction",
        help="applied over all pairs of the chosen systems, to each test's p-values "
        "separately (tiecore.stats.corrections.adjust_pvalues)",
    )
with right:
    baseline = st.selectbox(
        "Baseline system",
        ["", *order],
        format_func=lambda r: "none" if r == "" else describe(r),
        key=f"rankings_baseline_{dataset.key}_{'|'.join(order)}",
        help="count the queries each system helps and hurts against this one",
    )
tukey = st.checkbox(
    "Add Tukey's HSD",
    key="rankings_tukey",
    help="Tukey's honestly significant difference over all systems (scipy); the studentized "
    "range takes seconds for 20 systems",
)
reviewed = result.with_options(correction=correction, baseline=baseline, tukey=tukey)
level = f"{reviewed.confidence:.0%}"
config = columns_config(correction, level, reviewed.ci_method, measure)
verdict = reviewed.verdict(alpha)
if verdict.startswith("no pair"):
    st.info(f"Nothing is significant: {verdict}.", icon=":material/info:")
else:
    st.markdown(f"**{verdict[0].upper()}{verdict[1:]}.**")

position = {run: i for i, run in enumerate(order)}
pairs = reviewed.pairs.reset_index()
if reviewed.tukey is not None:
    pairs = pairs.merge(reviewed.tukey.reset_index(), on=["a", "b"])
upper = pairs[pairs["a"].map(position) < pairs["b"].map(position)].copy()
upper["significant"] = pd.to_numeric(upper["t_pvalue_adj"], errors="coerce") < alpha
upper["abs_diff"] = upper["mean_diff"].abs()
fix = config["t_pvalue_adj"]["label"]
if len(upper) == 1:  # one dot says nothing a sentence cannot
    row = upper.iloc[0]
    inside = row["abs_diff"] <= row["tie_noise"]
    st.markdown(
        f"One pair: {plain(describe(row['a']))} vs {plain(describe(row['b']))}. The tie-aware "
        f"means differ by {report.format_value(row['abs_diff'])}; the tie noise is "
        f"{report.format_value(row['tie_noise'])}, so the difference is "
        + (
            "**within** what tie-breaking alone can produce"
            if inside
            else "**larger** than what tie-breaking alone can produce"
        )
        + f". {fix}: {report.format_pvalue(row['t_pvalue_adj'])}."
    )
else:
    scatter = go.Figure()
    for significant, part in upper.groupby("significant"):
        scatter.add_trace(
            go.Scatter(
                x=part["tie_noise"],
                y=part["abs_diff"],
                mode="markers",
                name=f"{fix} {'<' if significant else '≥'} {alpha}",
                marker={"size": 9, "color": ch.FLAG_COLOR if significant else "#7f7f7f"},
                customdata=np.column_stack(
                    [
                        part["a"].map(lambda r: svg_text(describe(r))),
                        part["b"].map(lambda r: svg_text(describe(r))),
                        part["t_pvalue_adj"].map(report.format_pvalue),
                        part["randomization_pvalue"].map(report.format_pvalue),
                        part[column].map(report.format_value).to_numpy(dtype=object),
                    ]
                ),
                hovertemplate="%{customdata[0]} vs %{customdata[1]}<br>|mean difference| "
                f"%{{y:.4f}}<br>tie noise %{{x:.4f}}<br>{fix}: %{{customdata[2]}}, "
                "randomization p %{customdata[3]}<br>P(A beats B) %{customdata[4]}"
                "<extra></extra>",
            )
        )
    edge = float(np.nanmax([upper["tie_noise"].max(), 1e-6])) * 1.2
    scatter.add_trace(
        go.Scatter(
            x=[0, edge],
            y=[0, edge],
            mode="lines",
            name="difference = tie noise",
            line={"dash": "dash", "color": "black"},
            hoverinfo="skip",
        )
    )
    ch.show(
        scatter,
        "rankings_significance",
        height=420,
        x_title=f"tie noise ({measure})",
        y_title=f"|difference of means| ({measure})",
        xaxis={"range": [0, edge]},
    )
    st.caption(
        f"One dot per pair of systems: the gap of their tie-aware means against the tie noise "
        f"({ch.GLOSSARY['tie_noise']}). Below the dashed line the difference is within what "
        "tie-breaking alone can produce — a significant (red) dot there is an artefact of how "
        "ties were broken."
    )

wanted = [
    "a", "b", "mean_diff", "tie_noise", "within_tie_noise", "tie_sd", "topic_sd",
    "p_beats_sampled", "p_beats_normal", "t_pvalue", "t_pvalue_adj", "randomization_pvalue",
    "randomization_pvalue_adj", "wilcoxon_pvalue", "wilcoxon_pvalue_adj", "tukey_pvalue",
    "diff_low", "diff_high", "tukey_low", "tukey_high", "effect_size", "n_queries",
]  # fmt: skip
numbers = upper[[c for c in wanted if c in upper.columns]].reset_index(drop=True)
main = [  # what fits 1440 px; every column is in the table under it and in the downloads
    "a", "b", "mean_diff", "tie_noise", "within_tie_noise", column, "t_pvalue_adj",
    "randomization_pvalue_adj", "wilcoxon_pvalue_adj", "tukey_pvalue",
]  # fmt: skip
brief = numbers[[c for c in main if c in numbers.columns]]
table(
    readable(brief, describe),
    f"pairs {measure}",
    key="download_pairs",
    caption=f"Pairs of systems by {measure}: difference of tie-aware means, tie noise, "
    f"P(A beats B) under random tie-breaking and paired tests ({CORRECTION_NAMES[correction]} "
    "correction).",
    provenance=prov,
    # narrow number columns (their headers in full on hover): the table fits 1440 px
    config={c: config[c] if c in ("a", "b") else {**config[c], "width": "small"} for c in brief},
    numbers=numbers,  # the CSV: every column
)
with st.expander("Every column: uncorrected p-values, tie sd and topic sd, intervals, effect size"):
    st.dataframe(
        readable(numbers, describe),
        column_config={c: config[c] for c in numbers.columns},
        hide_index=True,
        width="stretch",
    )

# --- each system: tie noise beside topic noise
st.subheader("Each system: tie noise beside topic noise")
systems = reviewed.systems.loc[order].copy()
systems.insert(0, "system", list(order))
systems = systems.reset_index(drop=True)
table(
    readable(systems, describe),
    f"systems {measure}",
    key="download_systems",
    caption=f"Each system's tie-aware mean {measure} with its tie sd and topic sd.",
    provenance=prov,
    config={c: config[c] for c in systems.columns if c in config},
    numbers=systems,
)
st.caption(
    "Tie sd: how much the mean moves when ties are broken at random (exact); topic sd: how "
    "much it would move with another sample of topics (standard error). When the tie sd is a "
    "sizeable share of the topic sd, ties matter as much as the choice of topics."
)

# --- help and hurt against the baseline
if reviewed.baseline is not None:
    st.subheader(
        f"Per-query help and hurt against {report.escape_markdown(describe(reviewed.baseline))}"
    )
    counts = reviewed.help_hurt.copy()
    counts.insert(0, "system", list(counts.index))
    counts = counts.reset_index(drop=True)
    count_config = {c: config[c] for c in counts.columns if c in config}
    if "within_tie_noise" in counts.columns:
        count_config["within_tie_noise"] = config["within_tie_noise_count"]
    table(
        readable(counts, describe),
        f"help hurt {measure}",
        key="download_help_hurt",
        caption=f"Queries each system helps and hurts against {describe(reviewed.baseline)} "
        f"({measure}, tie-aware values).",
        provenance=prov,
        config=count_config,
        numbers=counts,
    )
    with st.expander("Every query (help, hurt, equal)"):
        queries = reviewed.help_hurt_queries.assign(
            run=reviewed.help_hurt_queries["run"].map(describe)
        )
        ch.show_table(
            queries,
            f"help hurt queries {measure}",
            key="download_help_hurt_queries",
            provenance=prov,
        )

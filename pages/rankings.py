"""System rankings: how tie treatment reorders systems, and whether the order means anything."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_lib import cache
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import report
from tiecore._validation import CORRECTIONS
from tiecore.compare import format_pvalue

dataset, settings = sb.context()
st.title("System rankings")
ch.dataset_caption(dataset)
st.caption(
    "Systems ranked by one measure under every oblivious tie-break, tie-aware, and the random "
    "tie-breaks; then compared pair by pair (tiecore.compare)."
)
if len(dataset.runs) < 2:
    st.info(
        f"Rankings need at least two systems; this data set has one ({dataset.names[0]}). "
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
ranks = result.ranks.copy()
sample_scores = result.sample_scores[ranks.index]
ranks["sampled (mean rank)"] = sample_scores.rank(axis=1, ascending=False).mean().to_numpy()
orderings = [
    c
    for c in (
        "pessimistic",
        "trec_eval",
        "trec_eval_double",
        "docno_asc",
        "file_order",
        "optimistic",
        "aware",
    )
    if c in ranks.columns
]
columns = [*orderings, "sampled (mean rank)"]
order = ranks.sort_values(["aware", "trec_eval"], kind="stable").index.tolist()
prov = cache.provenance(
    dataset, settings, measure=measure, ties="all orderings", systems=len(names)
)

# --- the verdict first: swaps, or the closest pairs
st.subheader("Does the tie-break reorder the systems?")
if result.swaps.empty:
    st.success(
        f"No system changes rank between trec_eval's order and tie-aware for {measure}.",
        icon=":material/check_circle:",
    )
else:
    st.warning(
        f"**{len(result.swaps)} systems change rank between trec_eval's order and tie-aware for "
        f"{measure}.**",
        icon=":material/swap_vert:",
    )
    ch.show_table(result.swaps, f"rank swaps {measure}", key="download_swaps", provenance=prov)
close = report.closest_pairs(result.pairs, order=order)
if close.empty:
    nearest = report.nearest_pairs(result.pairs, count=3, order=order)
    said = "; ".join(
        f"{describe(row.a)} vs {describe(row.b)}: gap {abs(row.mean_diff):.4f}"
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
        f"**{len(close)} pairs whose order ties could decide** (0.05 < P(A beats B) < 0.95, or "
        "gap within the tie noise), closest to a coin toss first:"
    )
    ch.show_table(
        close.assign(a=close["a"].map(describe), b=close["b"].map(describe)),
        f"closest pairs {measure}",
        key="download_close",
        provenance=prov,
        column_config={
            "p_beats": st.column_config.NumberColumn(
                "P(A beats B)", help=ch.GLOSSARY["p_beats"], format="%.3f"
            )
        },
    )

# --- bump chart
st.subheader("Ranks under each tie treatment")
bump = go.Figure()
sample_mean = sample_scores.mean()
for run in order[:40]:
    scores = [*result.scores.loc[run, orderings], sample_mean[run]]
    bump.add_trace(
        go.Scatter(
            x=columns,
            y=ranks.loc[run, columns],
            mode="lines+markers",
            name=ch.short(describe(run)),
            customdata=np.array(scores),
            hovertemplate=f"<b>{describe(run)}</b><br>%{{x}}: rank %{{y:g}}<br>{measure} "
            "%{customdata:.4f}<extra></extra>",
        )
    )
ch.show(
    bump,
    "rankings_bump",
    height=ch.row_height(min(len(order), 40), per_row=26, least=360),
    legend=False,
    x_title="tie treatment (oblivious policies, then aware and random tie-breaks)",
    y_title="rank (1 = best)",
    yaxis={"autorange": "reversed", "dtick": 1 if len(order) <= 40 else None},
)
st.caption(
    "Crossing lines are systems whose order depends on how ties are broken; equal scores share "
    "their average rank. Hover for the names"
    + (
        f" (the {min(len(order), 40)} best tie-aware systems are drawn)."
        if len(order) > 40
        else "."
    )
)
scores = result.scores.copy()
scores["sampled_mean"] = sample_mean.reindex(scores.index).to_numpy()
scores["sampled_sd"] = sample_scores.std(ddof=1).reindex(scores.index).to_numpy()
with st.expander("Scores under each ordering (table)"):
    ch.show_table(
        scores.loc[order],
        f"scores by ordering {measure}",
        key="download_rank_scores",
        provenance=prov,
    )

# --- agreement of orderings
left, right = st.columns(2)
with left:
    st.subheader("Agreement between orderings")
    statistics = list(result.agreement.columns)  # kendall_tau, tau_ap, ... as compare names them
    statistic = st.radio(
        "Statistic",
        statistics,
        horizontal=True,
        key="rankings_stat",
        help=" · ".join(f"{s}: {ch.GLOSSARY.get(s, '')}" for s in statistics),
    )
    st.caption(f"**{statistic}**: {ch.GLOSSARY.get(statistic, '')}")
    matrix = pd.to_numeric(result.agreement[statistic], errors="coerce").unstack(-1)
    labels = [c for c in [*orderings, "random"] if c in matrix.index]
    if matrix.reindex(index=labels, columns=labels).isna().all().all():
        st.info(
            f"{statistic} is undefined for every pair of orderings: each ordering gives all "
            "chosen systems the same score, so there is no order to compare."
        )
    matrix = matrix.reindex(index=labels, columns=labels)
    values = matrix.to_numpy(np.float64)
    heat = go.Figure(
        go.Heatmap(
            z=values,
            x=labels,
            y=labels,
            zmin=-1,
            zmax=1,
            colorscale="RdBu",
            text=np.where(np.isnan(values), "–", np.char.mod("%.2f", np.nan_to_num(values))),
            texttemplate="%{text}",
            colorbar={"title": statistic},
            hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>",
        )
    )
    ch.show(
        heat,
        "rankings_agreement",
        height=460,
        legend=False,
        x_title="reference ordering",
        y_title="ordering",
        yaxis={"autorange": "reversed"},
        top=20,
    )
    st.caption(
        "1 = the same ranking of systems. 'random': the mean over the random tie-breaks. "
        "–: undefined (e.g. every system scores the same under one ordering)."
    )

with right:
    st.subheader("P(row system beats column system)")
    top = ch.top_slider(len(order), "rankings_top", "Systems in the heat map (best first)", 25)
    shown = order[:top]
    pairs = result.pairs.reset_index()
    column = "p_beats_sampled" if "p_beats_sampled" in pairs else "p_beats_normal"
    beats = pairs.pivot(index="a", columns="b", values=column).reindex(index=shown, columns=shown)
    full = [describe(r) for r in shown]
    hover = np.array([[f"P({a} beats {b})" for b in full] for a in full], dtype=object)
    heat = go.Figure(
        go.Heatmap(
            z=beats.to_numpy(np.float64),
            x=ch.short_labels(full, 18),
            y=ch.short_labels(full, 24),
            zmin=0,
            zmax=1,
            colorscale="RdBu",
            colorbar={"title": "P(beats)"},
            customdata=hover,
            hovertemplate="%{customdata} = %{z:.3f}<extra></extra>",
        )
    )
    ch.show(
        heat,
        "rankings_beats",
        height=max(460, 18 * top + 160),
        legend=False,
        x_title="column system",
        y_title="row system (best first)",
        top=20,
        yaxis={"autorange": "reversed", "type": "category", "showticklabels": top <= 60},
        xaxis={"type": "category", "tickangle": -60, "showticklabels": top <= 60},
    )
    st.caption(
        f"{ch.GLOSSARY['p_beats_sampled']}. Near 0.5 (white): the order of the pair is decided by "
        "tie-breaking. Names are cut on the axes; hover for the full names."
    )

# --- significance next to tie noise
st.subheader("Significance, with tie noise beside it")
CORRECTION_NAMES = {
    "holm": "Holm (family-wise error)",
    "bonferroni": "Bonferroni (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "none",
}
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
        "separately (tiecore.compare.adjust_pvalues)",
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
verdict = reviewed.verdict(alpha)
if verdict.startswith("no pair"):
    st.info(f"Nothing is significant: {verdict}.", icon=":material/info:")
else:
    st.markdown(f"**{verdict[0].upper()}{verdict[1:]}.**")

rank_of = {run: i for i, run in enumerate(order)}
pairs = reviewed.pairs.reset_index()
if reviewed.tukey is not None:
    pairs = pairs.merge(reviewed.tukey.reset_index(), on=["a", "b"])
upper = pairs[pairs["a"].map(rank_of) < pairs["b"].map(rank_of)].copy()
upper["significant"] = pd.to_numeric(upper["t_pvalue_adj"], errors="coerce") < alpha
upper["abs_diff"] = upper["mean_diff"].abs()
scatter = go.Figure()
for significant, part in upper.groupby("significant"):
    scatter.add_trace(
        go.Scatter(
            x=part["tie_noise"],
            y=part["abs_diff"],
            mode="markers",
            name=f"paired t-test p ({correction}) {'<' if significant else '≥'} {alpha}",
            marker={"size": 9, "color": ch.FLAG_COLOR if significant else "#7f7f7f"},
            customdata=np.column_stack(
                [
                    part["a"].map(describe),
                    part["b"].map(describe),
                    part["t_pvalue_adj"].map(format_pvalue),  # (an underflowed tail: <1e-300)
                    part["randomization_pvalue"].map(format_pvalue),
                    part[column].to_numpy(dtype=object),
                ]
            ),
            hovertemplate="%{customdata[0]} vs %{customdata[1]}<br>|mean difference| %{y:.4f}<br>"
            "tie noise %{x:.4f}<br>t-test p (corrected) %{customdata[2]}, randomization p "
            "%{customdata[3]}<br>P(a beats b) %{customdata[4]:.3f}<extra></extra>",
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
    x_title=f"tie noise: 2 sd of the difference over tie-breaks ({measure})",
    y_title=f"|difference of tie-aware means| ({measure})",
    xaxis={"range": [0, edge]},
)
st.caption(
    f"One dot per pair of systems. **Tie noise**: {ch.GLOSSARY['tie_noise']}. Below the dashed "
    "line the difference is within what tie-breaking alone can produce — a 'significant' red dot "
    "there is an artefact of how ties were broken."
)
level = f"{reviewed.confidence:.0%}"
HELP = {
    "tie_sd": "tie noise: the exact sd over random tie-breaking (of the mean, or of the "
    "difference of two means), from the per-query tie variances",
    "topic_sd": "topic noise: the sd of the per-query values (or differences) / sqrt(queries), "
    "the standard error from the spread between topics",
    "t_pvalue_adj": f"paired t-test p-value, {correction}-corrected over all pairs",
    "randomization_pvalue_adj": f"randomization test p-value, {correction}-corrected",
    "wilcoxon_pvalue": "Wilcoxon signed-rank test on the per-query differences (scipy; exact "
    "where scipy is; zero differences dropped)",
    "wilcoxon_pvalue_adj": f"Wilcoxon p-value, {correction}-corrected over all pairs",
    "diff_low": f"{level} {reviewed.ci_method} bootstrap interval of the mean difference, low",
    "diff_high": f"{level} {reviewed.ci_method} bootstrap interval of the mean difference, high",
    "tukey_pvalue": "Tukey's HSD p-value (already family-wise; ignores the pairing by query)",
    "tukey_low": f"Tukey's {level} simultaneous interval of the difference, low",
    "tukey_high": f"Tukey's {level} simultaneous interval of the difference, high",
    "ci_low": f"{level} {reviewed.ci_method} bootstrap interval of the mean, low",
    "ci_high": f"{level} {reviewed.ci_method} bootstrap interval of the mean, high",
    "help": "queries where the system scores above the baseline (tie-aware values)",
    "hurt": "queries where the system scores below the baseline",
    "equal": "queries where both score the same",
    "within_tie_noise": "helped or hurt queries whose difference is within 2 tie sd of that "
    "query: tie-breaking alone could reverse them",
}


def configure(frame: pd.DataFrame) -> dict:
    """Column help for the columns this page adds (the glossary covers the others)."""
    config = {}
    for name, text in HELP.items():
        if name in frame.columns:
            numeric = pd.api.types.is_float_dtype(frame[name].dtype)
            spec = "%.2e" if "pvalue" in name or name.endswith("_sd") else "%.4f"
            config[name] = (
                st.column_config.NumberColumn(help=text, format=spec)
                if numeric
                else st.column_config.Column(help=text)
            )
    return config


wanted = [
    "a",
    "b",
    "mean_diff",
    "tie_noise",
    "within_tie_noise",
    "tie_sd",
    "topic_sd",
    "p_beats_sampled",
    "p_beats_normal",
    "t_pvalue",
    "t_pvalue_adj",
    "randomization_pvalue",
    "randomization_pvalue_adj",
    "wilcoxon_pvalue",
    "wilcoxon_pvalue_adj",
    "tukey_pvalue",
    "diff_low",
    "diff_high",
    "tukey_low",
    "tukey_high",
    "effect_size",
    "n_queries",
]
table = upper[[c for c in wanted if c in upper.columns]]
table = table.assign(a=table["a"].map(describe), b=table["b"].map(describe))
ch.show_table(
    table,
    f"pairs {measure}",
    key="download_pairs",
    provenance=prov,
    column_config=configure(table),
)

# --- each system: tie noise beside topic noise
st.subheader("Each system: tie noise beside topic noise")
systems = reviewed.systems.loc[order].copy()
systems.insert(0, "system", [describe(r) for r in systems.index])
systems = systems.reset_index(drop=True)
ch.show_table(
    systems,
    f"systems {measure}",
    key="download_systems",
    provenance=prov,
    column_config=configure(systems),
)
st.caption(
    "tie_sd: how much the mean moves when ties are broken at random (exact); topic_sd: how "
    "much it would move with another sample of topics (standard error). When tie_sd is a "
    "sizeable share of topic_sd, ties matter as much as the choice of topics."
)

# --- help and hurt against the baseline
if reviewed.baseline is not None:
    st.subheader(f"Per-query help and hurt against {describe(reviewed.baseline)}")
    counts = reviewed.help_hurt.copy()
    counts.insert(0, "system", [describe(r) for r in counts.index])
    counts = counts.reset_index(drop=True)
    ch.show_table(
        counts,
        f"help hurt {measure}",
        key="download_help_hurt",
        provenance=prov,
        column_config=configure(counts),
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

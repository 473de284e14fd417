"""System rankings: how tie treatment reorders systems, and whether the order means anything.

The page is :func:`page`: widgets, one :func:`app_lib.cache.comparison` (tiecore's
``compare``) and the ranks, moves, slots and pairs of :mod:`tiecore.report.ranks`;
each section below draws what those give.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_lib import cache, glossary, track
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
    dashed,
    plain,
    readable,
    svg_text,
    table,
)
from tiecore import CORRECTIONS, report
from tiecore.report import ranks as rk

HOW = (
    "tiecore's `compare` scores every chosen system by the measure under each ordering of "
    "the tied documents: trec_eval's tie-break (score, then docno descending), the other "
    "document-order tie-breaks, and **tie-aware** (the exact mean over every order of the "
    "tied documents). Each ordering ranks the systems by competition rank: rank = 1 + the "
    "number of systems scoring higher, and equal scores share a rank (=3). Then it draws "
    "{samples} random tie-breaks and counts how often system A scores above system B: "
    "**P(A beats B)**. **Tie noise** is the exact sd of the difference of two means over "
    "random tie-breaking, from the per-query tie variances; a gap of the tie-aware means "
    "within it could be reversed by tie-breaking alone. The paired tests (t-test, "
    "randomization, Wilcoxon) run on the tie-aware per-query values and are corrected over "
    "all pairs."
)


def page() -> None:
    """The page: the systems and the measure, then each section on one comparison."""
    dataset, settings = sb.context()
    st.title("System rankings")
    ch.dataset_caption(dataset)
    st.caption(
        "Systems ranked by one measure under every tie-break, and tie-aware (the exact mean "
        "over every order of the tied documents); then compared pair by pair. Rank 1 is the "
        "best; “=3” is a rank shared by systems with equal scores."
    )
    ch.how_it_works(HOW.format(samples=settings.samples))
    if len(dataset.runs) < 2:
        st.info(
            "Rankings need at least two systems; this data set has one "
            f"({plain(dataset.names[0])}). Upload more runs, or choose a sample in the sidebar."
        )
        st.stop()
    sb.take_linked_measure(settings, "rankings_measure")
    left, right = st.columns([1, 2])
    with left:
        measure = sb.pick_measure(settings, key="rankings_measure", need="spread")
    with right:
        st.caption(glossary.define(measure))
    aware = cache.spread_table(dataset, settings, measures=[measure])
    best = aware.sort_values("value", ascending=False, kind="stable")["run"].tolist()
    best += [r for r in dataset.names if r not in best]  # a system with no value: last
    names, marked = sb.pick_systems(dataset, best, "rankings", top=TOP_SYSTEMS)
    track.remember({"measure": measure, "runs": ",".join(marked)})
    if len(names) < 2:
        st.info("Choose at least two systems: more in the top, or highlight more.")
        st.stop()
    result = cache.comparison(dataset, settings, measure, names)
    orderings = [c for c in ORDERING_NAMES if c in result.scores.columns]
    ranks = rk.ordering_ranks(result.scores, orderings)
    view = {
        "dataset": dataset,
        "measure": measure,
        "result": result,
        "orderings": orderings,
        "ranks": ranks,
        "describe": dataset.describe,
        "marked": [r for r in marked if r in names],
        "prov": cache.provenance(
            dataset, settings, measure=measure, ties="all orderings", systems=len(names)
        ),
    }
    st.subheader("Does the tie-break reorder the systems?")
    rank_verdict(view)
    close_pairs(view)
    st.subheader("Ranks under each tie treatment")
    top = slope_chart(view)
    rank_table(view, top)
    left, right = st.columns(2)
    with left:
        st.subheader("Agreement between orderings")
        agreement(view)
    with right:
        st.subheader("P(row system beats column system)")
        beats_map(view)
    st.subheader("Significance, with tie noise beside it")
    reviewed = significance(view)
    st.subheader("Each system: tie noise beside topic noise")
    systems_table(view, reviewed)
    if reviewed.baseline is not None:
        help_hurt(view, reviewed)


#: Systems compared at first: the best ones by the tie-aware mean (pairwise tests grow with
#: the square of the number of systems; a track has 79-150 runs).
TOP_SYSTEMS = 20
#: Pairs the significance chart and table show at most, the closest in rank first
#: (:func:`tiecore.report.ranks.nearest_in_rank`); every pair is in the CSV.
PAIRS_SHOWN = 300
#: Rows of the table of pairs that ties could decide, closest to a coin toss first.
CLOSE_SHOWN = 50
#: The colour of a highlighted system in the slope chart.
MARK_COLOR = sb.MARK_COLOR


def rank_verdict(view: dict) -> None:
    """Who changes rank between trec_eval's order and tie-aware, in words and a table."""
    measure, describe = view["measure"], view["describe"]
    moves = rk.rank_moves(view["ranks"])
    if moves.empty:
        st.success(
            f"No system changes rank between trec_eval's order and tie-aware for {measure}.",
            icon=":material/check_circle:",
        )
        return
    said = [
        f"{plain(describe(row.system))} from {row.label_before} to {row.label_after}"
        for row in moves.head(5).itertuples()
    ]
    more = f", and {len(moves) - 5} more (table below)" if len(moves) > 5 else ""
    st.warning(
        f"**{len(moves)} {'system changes' if len(moves) == 1 else 'systems change'} rank "
        f"for {measure}** when tied documents are averaged over every order (tie-aware) "
        f"instead of broken by docno as trec_eval does: {'; '.join(said)}{more}.",
        icon=":material/swap_vert:",
    )
    numbers = pd.DataFrame(
        {
            "system": moves["system"],
            "rank_trec_eval": moves["rank_before"],
            "rank_aware": moves["rank_after"],
            "rank_change": moves["change"],
        }
    )
    shown = numbers.assign(
        system=numbers["system"].map(describe),
        rank_trec_eval=moves["label_before"],
        rank_aware=moves["label_after"],
        rank_change=moves["change"].map(change),
    )
    table(
        shown,
        f"rank changes {measure}",
        key="download_swaps",
        caption=f"Systems whose rank by {measure} differs between trec_eval's tie-break and "
        "tie-aware scoring (=3: a shared rank; ↑: climbs under tie-aware scoring).",
        provenance=view["prov"],
        numbers=numbers,
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


def close_pairs(view: dict) -> None:
    """The pairs whose order ties could decide, or the nearest ones in a sentence."""
    result, order, describe = view["result"], view["ranks"].order, view["describe"]
    measure = view["measure"]
    close = report.closest_pairs(result.pairs, order=order)
    if close.empty:
        nearest = report.nearest_pairs(result.pairs, count=3, order=order)
        said = "; ".join(
            f"{plain(describe(row.a))} vs {plain(describe(row.b))}: gap "
            f"{report.format_value(abs(row.mean_diff))}"
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
        return
    st.markdown(
        f"**{len(close)} {'pair' if len(close) == 1 else 'pairs'} whose order ties could "
        "decide** (0.05 < P(A beats B) < 0.95, or gap within the tie noise), closest to a coin "
        "toss first"
        + (
            f"; the first {CLOSE_SHOWN} below, the other {len(close) - CLOSE_SHOWN:,} in the "
            "CSV download:"
            if len(close) > CLOSE_SHOWN
            else ":"
        )
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
        readable(close.head(CLOSE_SHOWN), describe),
        f"closest pairs {measure}",
        key="download_close",
        caption=f"Pairs of systems whose order by {measure} tie-breaking could decide.",
        provenance=view["prov"],
        config=close_config,
        numbers=close,
    )


def slope_choices(view: dict) -> tuple[int, list[str]]:
    """How many systems the slope chart draws, and which orderings between its two ends."""
    dataset, ranks, orderings = view["dataset"], view["ranks"], view["orderings"]
    n = len(ranks.order)
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
    r = ranks.ranks
    differ = [  # the other document-order tie-breaks that rank some system unlike trec_eval
        c
        for c in ("trec_eval_double", "docno_asc", "file_order")
        if c in orderings and not r[c].equals(r["trec_eval"])
    ]
    with right:
        middle = st.multiselect(
            "More tie-breaks between trec_eval and tie-aware",
            [c for c in orderings if c not in ("trec_eval", "aware")],
            default=differ,
            format_func=ORDERING_NAMES.get,
            key=f"rankings_slope_middle_{dataset.key}_{view['measure']}_{n}",
            help="by default the other document-order tie-breaks that rank some system "
            "unlike trec_eval. "
            + " · ".join(
                f"{ORDERING_NAMES[c]}: {ch.tiebreak_help(c)}" for c in orderings if c != "aware"
            ),
        )
    return top, ["trec_eval", *middle, "aware"]


def slope_chart(view: dict) -> int:
    """Each system's rank under each ordering, joined by a line; a sentence when no rank
    moves between trec_eval's tie-break, the other document-order tie-breaks and tie-aware
    (a flat chart says nothing).  Returns how many systems it draws."""
    ranks, measure = view["ranks"], view["measure"]
    n = len(ranks.order)
    plain_orders = [c for c in ranks.ranks.columns if c not in ("optimistic", "pessimistic")]
    if not rk.movers(ranks.ranks[plain_orders].to_numpy()).any():
        bounds = [c for c in ("optimistic", "pessimistic") if c in ranks.ranks.columns]
        swing = int(rk.movers(ranks.ranks.to_numpy()).sum())
        st.success(
            f"Every tie-break ranks the {n} systems the same way by {measure} (trec_eval's, "
            "the other document orders and tie-aware), so a slope chart would be flat lines: "
            "the table below lists the ranks."
            + (
                f" Only the extreme orders ({' and '.join(bounds)}: relevant documents first "
                f"or last inside each tie) reorder {swing} of them."
                if swing and bounds
                else ""
            ),
            icon=":material/check_circle:",
        )
        return 0
    top, axis = slope_choices(view)
    marked = set(view["marked"])
    drawn = [*ranks.order[:top], *(r for r in ranks.order[top:] if r in marked)]
    cut = [ch.short(str(name), NAME_LIMIT) for name in drawn]
    labels = cut if len(set(cut)) == len(cut) else [str(r) for r in drawn]  # while distinct
    ranks_drawn = ranks.ranks.loc[drawn, axis].to_numpy()
    moving = rk.movers(ranks_drawn)
    slots = rk.slope_slots(ranks_drawn)
    colors = {
        run: MOVER_COLORS[k % len(MOVER_COLORS)]
        for k, run in enumerate(r for r, m in zip(drawn, moving, strict=True) if m)
    }
    colors.update({run: MARK_COLOR for run in drawn if run in marked})  # highlighted: black
    on_top = np.array([run in colors for run in drawn], dtype=bool)
    traces, notes = [], []
    for i in [*np.flatnonzero(~on_top), *np.flatnonzero(on_top)]:  # movers drawn on top
        trace, ends = _slope_line(view, drawn[i], labels[i], axis, slots[i], colors)
        traces.append(trace)
        notes.extend(ends)
    side = int(7.5 * (max(len(label) for label in labels) + 5)) + 16  # name, "  =12"
    ch.show(
        {"data": traces, "layout": {"annotations": notes}},
        "rankings_bump",
        height=ch.row_height(len(drawn), per_row=30, least=280),
        legend=False,
        top=48,
        margin={"l": side, "r": side, "t": 48, "b": 16},
        xaxis={
            "tickvals": list(range(len(axis))),
            "ticktext": [ORDERING_NAMES[c] for c in axis],
            "side": "top",
            "range": [-0.08, len(axis) - 0.92],
            "showgrid": True,
            "zeroline": False,
            "fixedrange": True,
        },
        yaxis={
            "range": [len(drawn) + 0.6, 0.4],
            "showticklabels": False,
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
        },
    )
    count = int(moving.sum())
    st.caption(
        (
            f"{count} of the {len(drawn)} systems drawn change rank (coloured, thick); the "
            "grey ones keep theirs. "
            if count
            else f"None of the {len(drawn)} systems drawn changes rank between these tie "
            "treatments. "
        )
        + "Each line joins a system's rank under trec_eval's tie-break (score, then docno "
        "descending) on the left to its tie-aware rank on the right; =3 is a rank shared by "
        "equal scores. Hover a line for the full name and the score."
        + (f" The {top} best tie-aware systems of {n} are drawn." if top < n else "")
        + (
            " Highlighted (black, drawn even below the best): "
            + ", ".join(plain(view["describe"](r)) for r in view["marked"])
            + "."
            if marked
            else ""
        )
    )
    return top


def _slope_line(view, run, label, axis, slots, colors) -> tuple[dict, list[dict]]:
    """One system's line in the slope chart and its two end labels (plotly JSON)."""
    labels = view["ranks"].labels.loc[run, axis].tolist()
    scores = view["result"].scores.loc[run, axis].to_numpy(np.float64)
    moves = run in colors
    color = colors.get(run, STILL_COLOR)
    trace = {
        "type": "scatter",
        "x": list(range(len(axis))),
        "y": [int(s) for s in slots],
        "mode": "lines+markers",
        "line": {"color": color, "width": 3.5 if moves else 1.5},
        "marker": {"color": color, "size": 9 if moves else 6},
        "customdata": [
            [ORDERING_NAMES[c], lab, report.format_value(s)]
            for c, lab, s in zip(axis, labels, scores, strict=True)
        ],
        "hovertemplate": f"<b>{svg_text(view['describe'](run))}</b><br>%{{customdata[0]}}: "
        f"rank %{{customdata[1]}}<br>{svg_text(view['measure'])} %{{customdata[2]}}"
        "<extra></extra>",
    }
    font = {"color": color if moves else "#6b6b6b", "size": 13 if moves else 12}
    name = svg_text(label)
    ends = [
        {
            "x": end,
            "y": int(slots[end]),
            "xref": "x",
            "yref": "y",
            "text": f"<b>{text}</b>" if moves else text,
            "xanchor": anchor,
            "xshift": nudge,
            "showarrow": False,
            "font": font,
            "hovertext": svg_text(view["describe"](run)),
        }
        for end, text, anchor, nudge in (
            (0, f"{name}  {labels[0]}", "right", -10),
            (len(axis) - 1, f"{labels[-1]}  {name}", "left", 10),
        )
    ]
    return trace, ends


def rank_table(view: dict, top: int) -> None:
    """Every rank and score, in an expander (open when the chart leaves systems out)."""
    result, ranks, orderings = view["result"], view["ranks"], view["orderings"]
    measure, order = view["measure"], ranks.order
    numbers = rk.rankings_table(result, ranks, orderings)
    marked = set(view["marked"])
    shown = numbers.assign(  # a star before each highlighted system
        system=[f"★ {view['describe'](r)}" if r in marked else view["describe"](r)
                for r in numbers["system"]]
    )  # fmt: skip
    for c in orderings:
        shown[f"rank_{c}"] = ranks.labels.loc[order, c].to_numpy()
    same = [  # a tie-break that ranks every system as trec_eval: its column says nothing new
        c
        for c in orderings
        if c not in ("trec_eval", "aware") and ranks.ranks[c].equals(ranks.ranks["trec_eval"])
    ]
    shown = shown.drop(columns=[f"rank_{c}" for c in same])  # in the CSV all the same
    config = {  # as wide as the names
        "system": st.column_config.TextColumn("System", help="★: a highlighted system")
    }
    for c in orderings:  # headers in full: the columns take the width their names need
        config[f"rank_{c}"] = st.column_config.TextColumn(
            ORDERING_NAMES[c],
            help="rank under "
            + (ch.GLOSSARY["aware"] if c == "aware" else ch.tiebreak_help(c))
            + " (1 = best; =3: a shared rank)",
        )
    config["mean_rank_sampled"] = st.column_config.NumberColumn(
        "Mean rank (random)",
        help=f"the system's rank averaged over the {result.sample_scores.shape[0]} random "
        "tie-breaks (a mean, so not a whole number)",
        format="%.1f",
    )
    config["aware_value"] = st.column_config.NumberColumn(
        f"{measure} tie-aware", help=ch.GLOSSARY["aware"], format="%.4f"
    )
    config["trec_eval_value"] = st.column_config.NumberColumn(
        f"{measure} trec_eval", help=ch.tiebreak_help("trec_eval"), format="%.4f"
    )
    with st.expander("Every rank and score (table)", expanded=len(order) > top):
        table(
            shown,
            f"rankings {measure}",
            key="download_rankings",
            caption=f"Ranks of the systems by {measure} under each tie treatment (1 = best; "
            "=3: a shared rank; mean rank: averaged over random tie-breaks)."
            + (
                f" {' and '.join(ORDERING_NAMES[c] for c in same)} "
                f"{'rank' if len(same) > 1 else 'ranks'} every system as trec_eval does: "
                "left out here, in the CSV."
                if same
                else ""
            ),
            provenance=view["prov"],
            config={c: config[c] for c in shown.columns if c in config},
            numbers=numbers,
        )


STATISTIC_NAMES = {"kendall_tau": "Kendall's τ", "tau_ap": "τ_AP", "tau_ap_sym": "τ_AP (symmetric)"}


def agreement(view: dict) -> None:
    """How alike the orderings rank the systems: a sentence when all agree, else a heat map
    (and the same numbers as a table, readable on a phone)."""
    result = view["result"]
    present = set(result.agreement.index.get_level_values(0))
    labels = [c for c in [*view["orderings"], "random"] if c in present]
    matrices = rk.agreement_matrices(result.agreement, labels)
    if rk.all_agree(matrices):
        st.success(
            "All orderings rank the systems identically (Kendall's τ = 1 for every pair of "
            "tie-breaks, and τ_AP too, random tie-breaks included): how ties are broken does "
            f"not change the order of these systems by {view['measure']}.",
            icon=":material/check_circle:",
        )
        return
    statistic = st.radio(
        "Statistic",
        list(matrices),
        horizontal=True,
        key="rankings_stat",
        format_func=lambda s: STATISTIC_NAMES.get(s, s),
        help=" · ".join(f"{ch.GLOSSARY.get(s, s)}" for s in matrices),
    )
    st.caption(ch.GLOSSARY.get(statistic, ""))
    values = matrices[statistic]
    if np.isnan(values).all():
        st.info(
            "This statistic is undefined for every pair of orderings: each ordering gives "
            "all chosen systems the same score, so there is no order to compare."
        )
    names_axis = [ORDERING_NAMES[c] for c in labels]
    text = np.where(np.isnan(values), DASH, np.char.mod("%.2f", np.nan_to_num(values)))
    heat = go.Figure(
        go.Heatmap(
            z=values,
            x=names_axis,
            y=names_axis,
            zmin=-1,
            zmax=1,
            colorscale="RdBu",
            text=text,
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
    with st.expander("The same numbers as a table"):
        st.dataframe(pd.DataFrame(text, index=names_axis, columns=names_axis))


def beats_map(view: dict) -> None:
    """P(row beats column) under random tie-breaking, best systems first."""
    result, order, describe = view["result"], view["ranks"].order, view["describe"]
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
        f"{ch.GLOSSARY['p_beats_sampled']}. Near 0.5 (white): the order of the pair is decided "
        "by tie-breaking. Hover for the full names."
    )


def review_choices(view: dict):
    """The significance level, correction, baseline and Tukey choices -> (alpha, reviewed)."""
    order, describe = view["ranks"].order, view["describe"]
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
            help="applied over all pairs of the chosen systems, to each test's p-values separately",
        )
    with right:
        baseline = st.selectbox(
            "Baseline system",
            ["", *order],
            format_func=lambda r: "none" if r == "" else describe(r),
            key=f"rankings_baseline_{view['dataset'].key}_{'|'.join(order)}",
            help="count the queries each system helps and hurts against this one",
        )
    tukey = st.checkbox(
        "Add Tukey's HSD",
        key="rankings_tukey",
        help="Tukey's honestly significant difference over all systems (scipy); the "
        "studentized range takes seconds for 20 systems",
    )
    return alpha, view["result"].with_options(correction=correction, baseline=baseline, tukey=tukey)


def significance(view: dict):
    """The verdict of the paired tests, the pairs against the tie noise, the pairs' table."""
    alpha, reviewed = review_choices(view)
    describe, measure = view["describe"], view["measure"]
    config = columns_config(
        reviewed.correction, f"{reviewed.confidence:.0%}", reviewed.ci_method, measure
    )
    pairs = reviewed.pairs.reset_index()
    if reviewed.tukey is not None:
        pairs = pairs.merge(reviewed.tukey.reset_index(), on=["a", "b"])
    every = rk.pairs_in_order(pairs, view["ranks"].order, alpha)
    verdict = rk.significance_sentence(every, alpha, reviewed.correction)
    if verdict.startswith("No pair"):
        st.info(f"Nothing is significant. {verdict}", icon=":material/info:")
    else:
        st.markdown(f"**{verdict}**")
    upper = rk.nearest_in_rank(every, view["ranks"].order, PAIRS_SHOWN)
    if len(upper) < len(every):
        st.caption(
            f"The chart and the table show the {len(upper)} pairs closest in rank (neighbours "
            f"first) of all {len(every):,} pairs; the other {len(every) - len(upper):,} are "
            "left out here and are in the CSV download."
        )
    fix = config["t_pvalue_adj"]["label"]
    if len(upper) == 1:  # one dot says nothing a sentence cannot
        row = upper.iloc[0]
        inside = row["abs_diff"] <= row["tie_noise"]
        st.markdown(
            f"One pair: {plain(describe(row['a']))} vs {plain(describe(row['b']))}. The "
            f"tie-aware means differ by {report.format_value(row['abs_diff'])}; the tie noise "
            f"is {report.format_value(row['tie_noise'])}, so the difference is "
            + (
                "**within** what tie-breaking alone can produce"
                if inside
                else "**larger** than what tie-breaking alone can produce"
            )
            + f". {fix}: {report.format_pvalue(row['t_pvalue_adj'])}."
        )
    else:
        _significance_scatter(view, upper, fix, alpha)
    pairs_tables(view, reviewed, upper, config, every)
    return reviewed


def _significance_scatter(view: dict, upper: pd.DataFrame, fix: str, alpha: float) -> None:
    """One dot per pair: the gap of the means against the tie noise, significant in red."""
    describe, measure = view["describe"], view["measure"]
    column = "p_beats_sampled" if "p_beats_sampled" in upper else "p_beats_normal"
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


#: The pairs' columns, every one (the CSV and the expander) and those the page's table shows.
PAIR_COLUMNS = [
    "a", "b", "mean_diff", "tie_noise", "within_tie_noise", "tie_sd", "topic_sd",
    "p_beats_sampled", "p_beats_normal", "t_pvalue", "t_pvalue_adj", "randomization_pvalue",
    "randomization_pvalue_adj", "wilcoxon_pvalue", "wilcoxon_pvalue_adj", "tukey_pvalue",
    "diff_low", "diff_high", "tukey_low", "tukey_high", "effect_size", "n_queries",
]  # fmt: skip
#: What fits 1440 px with every header in full; the others are in the expander and the CSV.
PAIR_MAIN = [
    "a", "b", "mean_diff", "tie_noise", "within_tie_noise", "p_beats_sampled",
    "p_beats_normal", "t_pvalue_adj", "randomization_pvalue_adj", "tukey_pvalue",
]  # fmt: skip


def pairs_tables(
    view: dict, reviewed, upper: pd.DataFrame, config: dict, every: pd.DataFrame
) -> None:
    """The pairs: the main columns with their downloads (every pair in the CSV), every
    column in an expander."""
    describe, measure = view["describe"], view["measure"]
    numbers = upper[[c for c in PAIR_COLUMNS if c in upper.columns]].reset_index(drop=True)
    all_numbers = every[[c for c in PAIR_COLUMNS if c in every.columns]].reset_index(drop=True)
    column = "p_beats_sampled" if "p_beats_sampled" in numbers else "p_beats_normal"
    brief = numbers[
        [c for c in PAIR_MAIN if c in numbers.columns and (c == column or "beats" not in c)]
    ]
    table(
        readable(brief, describe),
        f"pairs {measure}",
        key="download_pairs",
        caption=f"Pairs of systems by {measure}: difference of tie-aware means, tie noise, "
        f"P(A beats B) under random tie-breaking and paired tests "
        f"({CORRECTION_NAMES[reviewed.correction]} correction).",
        provenance=view["prov"],
        config={c: config[c] for c in brief},
        numbers=all_numbers,  # the CSV: every column of every pair
    )
    with st.expander(
        "Every column: uncorrected p-values, tie sd and topic sd, intervals, effect size"
    ):
        every, every_config = dashed(
            readable(numbers, describe), {c: config[c] for c in numbers.columns}
        )
        st.dataframe(every, column_config=every_config, hide_index=True, width="stretch")


def systems_table(view: dict, reviewed) -> None:
    """Each system's tie-aware mean with its tie sd and topic sd."""
    describe, measure, order = view["describe"], view["measure"], view["ranks"].order
    config = columns_config(
        reviewed.correction, f"{reviewed.confidence:.0%}", reviewed.ci_method, measure
    )
    systems = reviewed.systems.loc[order].copy()
    systems.insert(0, "system", list(order))
    systems = systems.reset_index(drop=True)
    table(
        readable(systems, describe),
        f"systems {measure}",
        key="download_systems",
        caption=f"Each system's tie-aware mean {measure} with its tie sd and topic sd.",
        provenance=view["prov"],
        config={c: config[c] for c in systems.columns if c in config},
        numbers=systems,
    )
    st.caption(
        "Tie sd: how much the mean moves when ties are broken at random (exact); topic sd: how "
        "much it would move with another sample of topics (standard error). When the tie sd is "
        "a sizeable share of the topic sd, ties matter as much as the choice of topics."
    )


def help_hurt(view: dict, reviewed) -> None:
    """Per-query help and hurt of each system against the baseline."""
    describe, measure = view["describe"], view["measure"]
    config = columns_config(
        reviewed.correction, f"{reviewed.confidence:.0%}", reviewed.ci_method, measure
    )
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
        provenance=view["prov"],
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
            provenance=view["prov"],
        )


page()

"""Per-query drill-down: which queries move for which systems, and one query side by side.

The page is :func:`page`: the shift matrix of :func:`tiecore.explain.queries.shift_matrix`,
what :func:`tiecore.explain.queries.movement` makes of it, and one query's two ranked lists
with their values (:func:`tiecore.explain.queries.ranked_lists` and the values beside it,
through ``app_lib.track``).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app_lib import cache, glossary, track
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import Measure, report
from tiecore.errors import InputError
from tiecore.explain.queries import movement, parse_topics, topic_label

said = report.escape_markdown
#: The tie-breaks a reader may compare with trec_eval's order, in plain words.
OTHERS = {
    "docno_asc": "docno ascending",
    "trec_eval_double": "trec_eval 10's order (scores not rounded to float32)",
    "file_order": "the file's order",
    "optimistic": "relevant documents first (best case)",
    "pessimistic": "relevant documents last (worst case)",
}
#: Colours of a document's mark: relevant, judged not relevant, not judged.
MARKS = {"relevant": "#2ca02c", "not relevant": "#9e9e9e", "not judged": "#ffffff"}
#: Tie groups' blocks, one after the other in two colours (fill, edge), so that two groups
#: that touch stay apart.
BLOCKS = (("rgba(255,165,0,0.20)", "rgba(230,120,0,0.9)"), ("rgba(31,119,180,0.14)", "#1f77b4"))
#: A shift is said to move a value when it shows at 4 decimals.
VISIBLE = 0.5e-4


def page() -> None:
    """The page: the measure, the movement at a glance, the choice, the heat map, one query."""
    dataset, settings = sb.context()
    st.title("Per-query drill-down")
    ch.dataset_caption(dataset)
    st.caption(
        "Which queries does the tie-break move, and for which systems? Each cell is a **shift**: "
        "the tie-aware value (the exact mean over every order of the tied documents) minus the "
        "value under trec_eval's order (scores compared as 32-bit floats, then docno descending). "
        "Then one query's two ranked lists side by side, with their tie groups."
    )
    label = partial(topic_label, topics=topic_titles())
    measure = pick_measure(settings)
    matrix = track.shifts(dataset, settings, measure)
    if matrix.empty:
        st.info("No system retrieves a judged query: there is nothing to drill into.")
        st.stop()
    view = {
        "dataset": dataset,
        "settings": settings,
        "measure": measure,
        "matrix": matrix,
        "label": label,
        "moved": movement(matrix, VISIBLE),
        "noun": dataset.noun[1],
    }
    summary(view)
    view.update(choose(view))
    heat_map(view)
    largest_table(view)
    side_by_side(view)
    link_note(dataset)


def topic_titles() -> dict[str, str]:
    """The optional topics file, read into query titles (kept in the session)."""
    with st.expander("Label queries with their topics (optional)", icon=":material/label:"):
        upload = st.file_uploader(
            "TREC topics file",
            key="dd_topics_file",
            help="<top> <num> Number: 301 <title> ... </top>; the titles label the queries",
        )
        if upload is not None:
            try:
                st.session_state["dd_topics"] = parse_topics(upload.getvalue(), upload.name)
            except InputError as error:
                st.error(said(str(error)), icon=":material/error:")
        topics = st.session_state.get("dd_topics") or {}
        if topics:
            st.caption(f"{len(topics)} topic titles label the queries.")
    return topics


def pick_measure(settings) -> str:
    """The measure (a link's first), with its definition beside it."""
    linked = track.from_link("measure")
    choices = sb.measures_for(settings, "spread")
    if linked in choices:
        st.session_state["dd_measure"] = linked
    left, right = st.columns([1, 2])
    with left:
        measure = sb.pick_measure(settings, key="dd_measure", need="spread")
    with right:
        st.caption(glossary.define(measure))
    return measure


def summary(view: dict) -> None:
    """How many queries and systems move, and the largest shift, in a sentence."""
    moved, noun = view["moved"], view["noun"]
    if moved.queries_moved:
        qid, run, shift = moved.largest
        st.markdown(
            f"**{moved.queries_moved} of {moved.queries} queries** move at 4 decimals for at "
            f"least one of the {moved.systems} {noun} ({moved.systems_moved} {noun} move on "
            f"some query). The largest shift is **{report.format_shift(shift)}**: "
            f"{said(view['dataset'].describe(run))} on query {said(view['label'](qid))}."
        )
    else:
        st.markdown(
            f"No query moves at 4 decimals for any of the {moved.systems} {noun}: under "
            f"{view['measure']} the tie-break changes nothing visible here."
        )


def choose(view: dict) -> dict:
    """The query, the two systems and the other tie-break (a link's first), remembered."""
    dataset, settings, matrix = view["dataset"], view["settings"], view["matrix"]
    label, largest = view["label"], view["moved"].per_query
    qids = matrix.index.tolist()
    query_key = f"dd_query_{dataset.key}"
    linked = track.from_link("query")
    if linked in qids:
        st.session_state[query_key] = linked
    elif st.session_state.get(query_key) not in qids:
        st.session_state[query_key] = qids[0]
    qid = st.selectbox(
        "Query (largest shift first)",
        qids,
        key=query_key,
        format_func=lambda q: f"{label(q)}  (largest shift {largest[q]:.4f})",
    )
    ranked = view["moved"].systems_of(matrix, qid)
    keys = (f"dd_run_a_{dataset.key}", f"dd_run_b_{dataset.key}")
    linked = (track.from_link("runs") or "").split(",")
    for index, key in enumerate(keys):
        wanted = linked[index] if len(linked) == 2 else None
        if wanted in ranked:
            st.session_state[key] = wanted
        elif st.session_state.get(key) not in ranked:
            st.session_state[key] = ranked[min(index, len(ranked) - 1)]
    two, three, four = st.columns(3)
    with two:
        first = st.selectbox(
            "First system", ranked, key=keys[0], format_func=dataset.describe,
            help="systems that retrieve this query, largest shift first",
        )  # fmt: skip
    with three:
        second = st.selectbox(
            "Second system", ranked, key=keys[1], format_func=dataset.describe,
            help="systems that retrieve this query, largest shift first",
        )  # fmt: skip
    linked = track.from_link("other")
    if linked in OTHERS:
        st.session_state["dd_other"] = linked
    elif "dd_other" not in st.session_state:
        tiebreak = settings.tiebreak
        st.session_state["dd_other"] = tiebreak if tiebreak in OTHERS else "docno_asc"
    with four:
        other = st.selectbox(
            "Compare with the tie-break",
            list(OTHERS),
            key="dd_other",
            format_func=OTHERS.get,
            help="what another fixed order inside the ties would have given",
        )
    runs = f"{first},{second}"
    track.remember({"measure": view["measure"], "query": qid, "runs": runs, "other": other})
    return {"qid": qid, "first": first, "second": second, "other": other}


def heat_map(view: dict) -> None:
    """The heat map of the shifts: the systems found by name, the top queries and systems."""
    dataset, matrix, qid = view["dataset"], view["matrix"], view["qid"]
    first, second, moved = view["first"], view["second"], view["moved"]
    st.subheader("Which queries move, for which systems")
    search = st.text_input(
        "Find systems", key="dd_search", placeholder="part of a name, e.g. bm25",
        help="only the systems whose name holds this text (upper or lower case alike)",
    ).strip().lower()  # fmt: skip
    columns = [c for c in matrix.columns if search in dataset.describe(c).lower()]
    if not columns:
        st.info(f"No system's name holds “{said(search)}”; all are shown.")
        columns = list(matrix.columns)
    qids = matrix.index.tolist()
    n_systems = ch.top_slider(len(columns), "dd_top_systems", "Systems shown", default=30)
    n_queries = ch.top_slider(len(qids), "dd_top_queries", "Queries shown", 25, "queries")
    shown_runs = list(dict.fromkeys([first, second, *columns[:n_systems]]))
    shown_runs = [c for c in matrix.columns if c in shown_runs]  # largest shift first
    shown_qids = list(dict.fromkeys([*qids[:n_queries], qid]))
    st.caption(
        f"{len(shown_qids)} of {moved.queries} queries × {len(shown_runs)} of {moved.systems} "
        f"{view['noun']}, largest shifts at the top left; blue: tie-aware above trec_eval's "
        "order, red: below; blank: the system does not retrieve the query. ▶ marks the query "
        "and systems chosen above."
    )
    ch.show(
        heat_figure(view, shown_qids, shown_runs),
        "drilldown_heatmap",
        cache=(
            dataset.key,
            view["measure"],
            tuple(shown_qids),
            tuple(shown_runs),
            qid,
            first,
            second,
        ),
        height=ch.row_height(len(shown_qids), per_row=20, least=320) + 60,
        legend=False,
    )


def heat_figure(view: dict, shown_qids: list[str], shown_runs: list[str]) -> dict:
    """The heat map's figure: the shown cells, the chosen query and systems marked ▶."""
    dataset, label, qid = view["dataset"], view["label"], view["qid"]
    values = view["matrix"].loc[shown_qids, shown_runs].to_numpy(np.float64)
    limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
    limit = limit or 1.0
    x_labels = [
        f"▶ {name}" if run in (view["first"], view["second"]) else name
        for run, name in zip(shown_runs, ch.short_labels(shown_runs, 24), strict=True)
    ]
    y_labels = [
        f"▶ {name}" if q == qid else name
        for q, name in zip(
            shown_qids, ch.short_labels([label(q) for q in shown_qids], 40), strict=True
        )
    ]
    hover = [
        [
            f"query {ch.plain(label(q))}<br>{ch.plain(dataset.describe(r))}<br>shift "
            + (report.format_shift(v) if np.isfinite(v) else "no value (query not retrieved)")
            for r, v in zip(shown_runs, line, strict=True)
        ]
        for q, line in zip(shown_qids, values, strict=True)
    ]
    return {
        "data": [
            {
                "type": "heatmap",
                "z": np.where(np.isfinite(values), values, None).tolist(),
                "x": x_labels,
                "y": y_labels,
                "text": hover,
                "hoverinfo": "text",
                "colorscale": "RdBu",
                "reversescale": True,  # plotly's RdBu runs blue to red: positive shifts blue
                "zmid": 0.0,
                "zmin": -limit,
                "zmax": limit,
                "xgap": 1,
                "ygap": 1,
                "colorbar": {"title": {"text": "shift"}, "thickness": 12},
            }
        ],
        "layout": {
            "xaxis": {"type": "category", "tickangle": -60, "automargin": True},
            "yaxis": {"type": "category", "autorange": "reversed", "automargin": True},
        },
    }


def largest_table(view: dict) -> None:
    """The 10 largest shifts as a table, in an expander."""
    dataset, settings, label = view["dataset"], view["settings"], view["label"]
    cells = (
        view["matrix"]
        .stack()
        .rename("shift")
        .reset_index()
        .assign(size=lambda f: f["shift"].abs())
        .sort_values(["size", "qid"], ascending=[False, True], kind="stable")
        .head(10)
    )
    table = pd.DataFrame(
        {
            "query": [label(q) for q in cells["qid"]],
            "system": [dataset.describe(r) for r in cells["run"]],
            "shift": [report.format_shift(v) for v in cells["shift"]],
        }
    )
    with st.expander("The 10 largest shifts as a table", expanded=False):
        ch.show_table(
            table,
            "largest shifts",
            key="dd_largest_csv",
            provenance=cache.provenance(
                dataset, settings, measure=view["measure"], ties="aware - trec_eval"
            ),
        )


def sentence(dataset, result, other_words: str) -> str:
    """One system's values on the query, in a sentence."""
    name = said(dataset.describe(result.run))
    low, high = report.format_value(result.min), report.format_value(result.max)
    spread = (
        f"any order of its tied documents gives between {low} and {high}"
        if low != high
        else "no order of its tied documents changes it"
    )
    return (
        f"**{name}**: {report.format_value(result.oblivious)} under trec_eval's order; "
        f"**{report.format_value(result.aware)}** tie-aware ({spread}); "
        f"{report.format_value(result.other)} under {other_words}."
    )


def side_by_side(view: dict) -> None:
    """One query: each system's values, then its two ranked lists with their tie groups."""
    dataset, settings, measure = view["dataset"], view["settings"], view["measure"]
    qid, first, second, other = view["qid"], view["first"], view["second"], view["other"]
    st.subheader(f"Query {said(view['label'](qid))}: two ranked lists side by side")
    lists, results = track.one_query(dataset, settings, measure, qid, (first, second), other)
    other_words = OTHERS[other]
    for result in results.itertuples():
        st.markdown(sentence(dataset, result, other_words))
    values_table = pd.DataFrame(
        {
            "system": [dataset.describe(r) for r in results["run"]],
            "trec_eval's order": [report.format_value(v) for v in results["oblivious"]],
            "tie-aware": [report.format_value(v) for v in results["aware"]],
            "range over all orders": [
                f"[{report.format_value(a)}, {report.format_value(b)}]"
                for a, b in zip(results["min"], results["max"], strict=True)
            ],
            "shift": [report.format_shift(v) for v in results["shift"]],
            other_words: [report.format_value(v) for v in results["other"]],
        }
    )
    st.dataframe(values_table, hide_index=True, width="stretch")
    cutoff = Measure.parse(measure).cutoff
    longest = int(lists.groupby("run").size().max()) if len(lists) else 0
    depth = min(longest, 20)
    if longest > 10:
        depth = int(
            st.slider(
                "Ranks shown", 5, min(longest, 100), min(longest, 20), key="dd_depth",
                help="the top of each list; tie groups that run past it are drawn to the edge",
            )
        )  # fmt: skip
    st.caption(
        "Each row is a document at its rank under trec_eval's order. Shaded blocks (orange and "
        "blue in turn) are tie groups, documents with the same score: every order inside a "
        "block is as likely, and the tie-aware value is the mean over them. "
        f"Marks: green relevant (level ≥ {settings.rel_level}), grey judged not relevant, "
        f"white not judged. “→ k”: its rank under {other_words} when that differs."
        + (
            f" The dashed red line is {measure}'s cutoff: documents below it do not count."
            if cutoff is not None and cutoff < depth
            else ""
        )
    )
    two_lists(view, lists, results, depth, cutoff)


def block_shapes(rows: pd.DataFrame, depth: int, cutoff: int | None) -> list[dict]:
    """The tie groups of ``rows`` (one list's top ranks) as blocks, and the cutoff's line."""
    shapes = []
    blocks = [g for g in rows.drop_duplicates("group").itertuples() if g.group_size > 1]
    for number, group in enumerate(blocks):
        fill, edge = BLOCKS[number % 2]
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "y",
                "x0": 0.0,
                "x1": 1.0,
                "y0": group.first - 0.45,
                "y1": min(group.last, depth) + 0.45,
                "fillcolor": fill,
                "line": {"color": edge, "width": 1.5},
                "layer": "below",
            }
        )
    if cutoff is not None and cutoff < depth:  # the measure's cutoff: below it nothing counts
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "y",
                "x0": 0.0,
                "x1": 1.0,
                "y0": cutoff + 0.5,
                "y1": cutoff + 0.5,
                "line": {"color": "#d62728", "width": 2, "dash": "dash"},
            }
        )
    return shapes


def list_marks(rows: pd.DataFrame) -> tuple[dict, tuple[list, list, list]]:
    """Each document's mark by its kind (x, y, hover) and its docno's text (x, y, text)."""
    marks = {k: ([], [], []) for k in MARKS}
    text_x, text_y, texts = [], [], []
    for doc in rows.itertuples():
        kind = (
            "relevant" if doc.relevant else "not judged" if pd.isna(doc.level) else "not relevant"
        )
        xs, ys, hovers = marks[kind]
        xs.append(0.04)
        ys.append(doc.rank)
        level = "not judged" if pd.isna(doc.level) else f"level {int(doc.level)}"
        tied = f", tied with {doc.group_size - 1} more" if doc.group_size > 1 else ""
        hovers.append(
            f"rank {doc.rank}: {ch.plain(doc.docno)}<br>score {doc.score:.6g}, {level}{tied}"
        )
        moved = f"  → {doc.other_rank}" if doc.other_rank != doc.rank else ""
        text_x.append(0.09)
        text_y.append(doc.rank)
        texts.append(f"{ch.plain(ch.short(str(doc.docno), 26))}{moved}")
    return marks, (text_x, text_y, texts)


def list_figure(lists: pd.DataFrame, run: str, depth: int, cutoff: int | None) -> dict:
    """One system's ranked list down to ``depth``: marks, docnos and tie groups' blocks."""
    rows = lists[(lists["run"] == run) & (lists["rank"] <= depth)]
    marks, (text_x, text_y, texts) = list_marks(rows)
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "x": xs,
            "y": ys,
            "name": kind,
            "text": hovers,
            "hoverinfo": "text",
            "marker": {
                "symbol": "square",
                "size": 12,
                "color": MARKS[kind],
                "line": {"color": "#555555", "width": 1},
            },
        }
        for kind, (xs, ys, hovers) in marks.items()
        if xs
    ]
    data.append(
        {
            "type": "scatter",
            "mode": "text",
            "x": text_x,
            "y": text_y,
            "text": texts,
            "textposition": "middle right",
            "hoverinfo": "skip",
            "showlegend": False,
        }
    )
    return {
        "data": data,
        "layout": {
            "shapes": block_shapes(rows, depth, cutoff),
            "xaxis": {"visible": False, "range": [0, 1], "fixedrange": True},
            "yaxis": {
                "autorange": False,
                "range": [depth + 0.6, 0.4],
                "dtick": 1 if depth <= 30 else 5,
                "title": {"text": "rank"},
                "fixedrange": True,
            },
        },
    }


def two_lists(view: dict, lists: pd.DataFrame, results: pd.DataFrame, depth, cutoff) -> None:
    """The two systems' ranked lists in two columns, each under its values."""
    dataset, settings = view["dataset"], view["settings"]
    sides = st.columns(2)
    for side, run in zip(sides, (view["first"], view["second"]), strict=True):
        with side:
            found = results[results["run"] == run]
            head = said(ch.short(dataset.describe(run), 40))
            if len(found):
                value = found.iloc[0]
                head += (
                    f" · {report.format_value(value['oblivious'])} → "
                    f"{report.format_value(value['aware'])} tie-aware"
                )
            st.markdown(f"**{head}**")
            ch.show(
                lambda run=run: list_figure(lists, run, depth, cutoff),
                f"drilldown_list_{'ab'[sides.index(side)]}",
                cache=(
                    dataset.key, view["measure"], view["qid"], run, view["other"], depth,
                    settings.rel_level,
                ),
                height=ch.row_height(depth, per_row=24, least=260),
                legend=True,
                top=30,
            )  # fmt: skip


def link_note(dataset) -> None:
    """How the address links this view, and why an upload's cannot travel."""
    st.divider()
    st.caption(
        ":material/link: **Link to this view.** The address in your browser's bar now holds "
        "this page, the data set, the measure, the tie-breaks, the seed, the query and the two "
        "systems: send it and it opens this view."
    )
    if not dataset.shared:
        st.info(
            "Uploads cannot travel in a link: the data you uploaded stay in this browser's "
            "session (and on no server but this one). A link opens this page on the bundled "
            "sample; its reader must upload the same files to see this view.",
            icon=":material/info:",
        )


page()

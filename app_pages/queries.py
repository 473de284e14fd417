"""Per-query drill-down: which queries move for which systems, and one query side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app_lib import cache, glossary, track
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import Measure, report
from tiecore.errors import InputError
from tiecore.explain.queries import parse_topics, topic_label

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

dataset, settings = sb.context()
st.title("Per-query drill-down")
ch.dataset_caption(dataset)
st.caption(
    "Which queries does the tie-break move, and for which systems? Each cell is a **shift**: "
    "the tie-aware value (the exact mean over every order of the tied documents) minus the "
    "value under trec_eval's order (scores compared as 32-bit floats, then docno descending). "
    "Then one query's two ranked lists side by side, with their tie groups."
)

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


def label(qid: str) -> str:
    return topic_label(qid, topics)


linked = track.from_link("measure")
choices = sb.measures_for(settings, "spread")
if linked in choices:
    st.session_state["dd_measure"] = linked
left, right = st.columns([1, 2])
with left:
    measure = sb.pick_measure(settings, key="dd_measure", need="spread")
with right:
    st.caption(glossary.define(measure))

matrix = track.shifts(dataset, settings, measure)
if matrix.empty:
    st.info("No system retrieves a judged query: there is nothing to drill into.")
    st.stop()

size = np.abs(matrix.to_numpy(np.float64))
moving = np.nan_to_num(size) >= VISIBLE
by_query = moving.any(axis=1)
noun = dataset.noun[1]
q_moved, q_all = int(by_query.sum()), len(matrix.index)
s_moved, s_all = int(moving.any(axis=0).sum()), len(matrix.columns)
biggest = np.unravel_index(np.nanargmax(np.nan_to_num(size, nan=-1.0)), size.shape)
top_shift = float(matrix.iat[biggest])
if q_moved:
    st.markdown(
        f"**{q_moved} of {q_all} queries** move at 4 decimals for at least one of the "
        f"{s_all} {noun} ({s_moved} {noun} move on some query). The largest shift is "
        f"**{report.format_shift(top_shift)}**: "
        f"{said(dataset.describe(matrix.columns[biggest[1]]))} on query "
        f"{said(label(matrix.index[biggest[0]]))}."
    )
else:
    st.markdown(
        f"No query moves at 4 decimals for any of the {s_all} {noun}: under {measure} the "
        "tie-break changes nothing visible here."
    )

# ----------------------------------------------------------------------------- the choice

qids = matrix.index.tolist()
largest = dict(zip(qids, np.nanmax(np.nan_to_num(size, nan=0.0), axis=1), strict=True))
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
row = matrix.loc[qid]
present = row.dropna()
ranked = present.abs().sort_values(ascending=False, kind="stable").index.tolist()
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
    st.session_state["dd_other"] = settings.tiebreak if settings.tiebreak in OTHERS else "docno_asc"
with four:
    other = st.selectbox(
        "Compare with the tie-break",
        list(OTHERS),
        key="dd_other",
        format_func=OTHERS.get,
        help="what another fixed order inside the ties would have given",
    )
track.remember({"measure": measure, "query": qid, "runs": f"{first},{second}", "other": other})

# ----------------------------------------------------------------------------- the heat map

st.subheader("Which queries move, for which systems")
search = st.text_input(
    "Find systems", key="dd_search", placeholder="part of a name, e.g. bm25",
    help="only the systems whose name holds this text (upper or lower case alike)",
).strip().lower()  # fmt: skip
columns = [c for c in matrix.columns if search in dataset.describe(c).lower()]
if not columns:
    st.info(f"No system's name holds “{said(search)}”; all are shown.")
    columns = list(matrix.columns)
n_systems = ch.top_slider(len(columns), "dd_top_systems", "Systems shown", default=30)
n_queries = ch.top_slider(len(qids), "dd_top_queries", "Queries shown", 25, "queries")
shown_runs = list(dict.fromkeys([first, second, *columns[:n_systems]]))
shown_runs = [c for c in matrix.columns if c in shown_runs]  # largest shift first
shown_qids = list(dict.fromkeys([*qids[:n_queries], qid]))
part = matrix.loc[shown_qids, shown_runs]
values = part.to_numpy(np.float64)
limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
limit = limit or 1.0
x_labels = [
    f"▶ {name}" if run in (first, second) else name
    for run, name in zip(shown_runs, ch.short_labels(shown_runs, 24), strict=True)
]
y_labels = [
    f"▶ {name}" if q == qid else name
    for q, name in zip(shown_qids, ch.short_labels([label(q) for q in shown_qids], 40), strict=True)
]
hover = [
    [
        f"query {ch.plain(label(q))}<br>{ch.plain(dataset.describe(r))}<br>shift "
        + (report.format_shift(v) if np.isfinite(v) else "no value (query not retrieved)")
        for r, v in zip(shown_runs, line, strict=True)
    ]
    for q, line in zip(shown_qids, values, strict=True)
]
figure = {
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
st.caption(
    f"{len(shown_qids)} of {q_all} queries × {len(shown_runs)} of {s_all} {noun}, largest "
    "shifts at the top left; blue: tie-aware above trec_eval's order, red: below; blank: the "
    "system does not retrieve the query. ▶ marks the query and systems chosen above."
)
ch.show(
    figure,
    "drilldown_heatmap",
    cache=(dataset.key, measure, tuple(shown_qids), tuple(shown_runs), qid, first, second),
    height=ch.row_height(len(shown_qids), per_row=20, least=320) + 60,
    legend=False,
)
cells = (
    matrix.stack()
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
        provenance=cache.provenance(dataset, settings, measure=measure, ties="aware - trec_eval"),
    )

# ----------------------------------------------------------------------------- side by side

st.subheader(f"Query {said(label(qid))}: two ranked lists side by side")
lists, results = track.one_query(dataset, settings, measure, qid, (first, second), other)
other_words = OTHERS[other]


def sentence(result) -> str:
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


for result in results.itertuples():
    st.markdown(sentence(result))
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
    "blue in turn) are tie groups, documents with the same score: every order inside a block "
    "is as likely, and the tie-aware value is the mean over them. "
    f"Marks: green relevant (level ≥ {settings.rel_level}), grey judged not relevant, "
    f"white not judged. “→ k”: its rank under {other_words} when that differs."
    + (
        f" The dashed red line is {measure}'s cutoff: documents below it do not count."
        if cutoff is not None and cutoff < depth
        else ""
    )
)


def block_shapes(rows: pd.DataFrame) -> list[dict]:
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


def list_figure(run: str) -> dict:
    rows = lists[(lists["run"] == run) & (lists["rank"] <= depth)]
    shapes, marks = block_shapes(rows), {k: ([], [], []) for k in MARKS}
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
            "shapes": shapes,
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


sides = st.columns(2)
for side, run in zip(sides, (first, second), strict=True):
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
            lambda run=run: list_figure(run),
            f"drilldown_list_{'ab'[sides.index(side)]}",
            cache=(dataset.key, measure, qid, run, other, depth, settings.rel_level),
            height=ch.row_height(depth, per_row=24, least=260),
            legend=True,
            top=30,
        )

st.divider()
st.caption(
    ":material/link: **Link to this view.** The address in your browser's bar now holds this "
    "page, the data set, the measure, the tie-breaks, the seed, the query and the two systems: "
    "send it and it opens this view."
)
if not dataset.shared:
    st.info(
        "Uploads cannot travel in a link: the data you uploaded stay in this browser's session "
        "(and on no server but this one). A link opens this page on the bundled sample; its "
        "reader must upload the same files to see this view.",
        icon=":material/info:",
    )

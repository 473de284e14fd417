"""Playground: edit a small ranked list and see every ordering of its ties, for teaching."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import app_support as sup
import tiecore
from tiecore import spread
from tiecore.errors import InputError

dataset, settings = sup.context()
st.title("Playground")
st.caption(
    "Edit the scores and relevance levels of one small ranked list. Documents with equal scores "
    "form a tie group; every order inside the groups is listed with its value."
)

#: File order d4 d2 d5 d1 d3 d6; the 0.7 tie gives RR 1/2 (trec_eval: d5 d2 d1), 1/4 (docno
#: ascending: d1 d2 d5) and 1/3 (file order: d2 d5 d1).
DEFAULT = pd.DataFrame(
    {
        "docno": ["d4", "d2", "d5", "d1", "d3", "d6"],
        "score": [0.9, 0.7, 0.7, 0.7, 0.4, 0.4],
        "level": [0, 0, 1, 0, 2, 0],
    }
)
OPTIONS = ["RR", "AP", "P@3", "R@3", "F1@3", "nDCG@3", "nDCG", "Success@1", "Rprec", "Bpref"]

left, right = st.columns([3, 2])
with left:
    docs = st.data_editor(
        DEFAULT,
        num_rows="dynamic",
        key="playground_editor",
        hide_index=True,
        column_config={
            "docno": st.column_config.TextColumn("docno", required=True, help="unique document id"),
            "score": st.column_config.NumberColumn("score", required=True, format="%.3f"),
            "level": st.column_config.NumberColumn(
                "level",
                required=True,
                step=1,
                min_value=-1,
                max_value=4,
                help="qrels level; relevant when ≥ the sidebar's relevance level",
            ),
        },
    )
with right:
    typed = st.selectbox(
        "Measure",
        OPTIONS,
        key="playground_measure",
        accept_new_options=True,
        help="type any measure, e.g. P@2 or AP@4",
    )
    names, errors = sup.with_gain([typed], settings.gain) if typed else ((), [])
    measure = names[0] if names else None
    st.caption(
        f"Relevance level {settings.rel_level} and {settings.gain} gain come from the sidebar."
    )

docs = docs.dropna(how="all")
problems = [*errors]
if docs[["docno", "score", "level"]].isna().any().any():
    problems.append("every row needs a docno, a score and a level")
elif docs["docno"].astype(str).duplicated().any():
    problems.append("each docno may appear once")
elif len(docs) == 0:
    problems.append("add at least one row")
if measure is None or problems:
    for problem in problems or ["choose a measure"]:
        st.error(problem)
    st.stop()
docs = docs.assign(
    docno=docs["docno"].astype(str),
    score=docs["score"].astype(float),
    level=docs["level"].astype("int64"),
).reset_index(drop=True)
run, qrels = sup.one_query(docs)

try:
    aware = float(
        tiecore.evaluate(run, qrels, measure, ties="aware", rel_level=settings.rel_level)[
            "value"
        ].iloc[0]
    )
except InputError as error:
    st.error(str(error))
    st.stop()

# --- every ordering
st.subheader("Every ordering consistent with the scores")
orders = sup.orderings(docs["score"].to_numpy())
if orders is None:
    st.warning(
        f"More than {sup.MAX_ORDERINGS} orderings: make the tie groups smaller to list them all."
    )
else:
    values = sup.ordering_values(docs, orders, measure, settings.rel_level)
    listing = pd.DataFrame(
        {
            "ordering": np.arange(1, len(orders) + 1),
            "ranked list": [" ".join(docs["docno"].to_numpy()[o]) for o in orders],
            measure: values,
        }
    )
    cols = st.columns(3)
    cols[0].metric("orderings", len(orders))
    cols[1].metric("mean over orderings", f"{values.mean():.6f}")
    cols[2].metric(
        "tie-aware value (tiecore)",
        f"{aware:.6f}",
        delta="equal" if np.isclose(values.mean(), aware, atol=1e-12) else "differs",
        delta_color="off",
        delta_arrow="off",
    )
    left, right = st.columns([3, 2])
    with left:
        sup.show_table(
            listing, f"orderings {measure}", key="download_orderings", hide_index=True, height=300
        )
    with right:
        counts = listing[measure].round(10).value_counts().sort_index()
        bars = go.Figure(
            go.Bar(
                x=counts.index,
                y=counts.to_numpy() / len(orders),
                marker_color=sup.MODE_COLORS["sampled"],
                hovertemplate=(
                    f"{measure} = %{{x:.4f}}<br>share of orderings %{{y:.3f}}<extra></extra>"
                ),
            )
        )
        bars.add_vline(x=aware, line=dict(color=sup.MODE_COLORS["aware"], dash="dash"))
        bars.update_layout(
            height=300,
            margin=dict(t=30),
            xaxis=dict(title=f"{measure} of an ordering"),
            yaxis=dict(title="share of orderings"),
            title="values over all orderings (dashed: their mean)",
        )
        st.plotly_chart(bars, key="playground_values")

# --- formula pieces
st.subheader("The formula's pieces")
groups = spread.tie_groups(run, qrels, measure, rel_level=settings.rel_level, qid="q")
parsed = tiecore.Measure.parse(measure)
num_rel = int((docs["level"] >= settings.rel_level).sum())
cutoff = num_rel if parsed.family == "Rprec" else parsed.cutoff or len(docs)
q = sup.paper_quantities(groups, cutoff)
cols = st.columns(5)
for col, name in zip(cols, ("k", "R_c", "t_c", "n_c", "r_c"), strict=True):
    col.metric(name, q[name])
st.caption(
    "V_c is the tie group holding rank k; t_c ranks lie above it, R_c of them relevant; it has n_c "
    "docs, r_c relevant. Expected relevant docs in the top k: R_c + (k − t_c)·r_c/n_c = "
    f"{q['R_c'] + (min(q['k'], q['t_c'] + q['n_c']) - q['t_c']) * q['r_c'] / max(q['n_c'], 1):.4f}."
)
ranks = sup.per_rank(groups)
terms = sup.expected_contributions(run, qrels, measure, settings.rel_level)
ranks["expected_term"] = terms.set_index("rank")["term"].reindex(ranks["rank"]).to_numpy()
spans = groups["start_rank"].astype(str) + "–" + groups["end_rank"].astype(str)
ranks.insert(
    1, "tie group ranks", ranks["group"].map(dict(zip(groups["group"], spans, strict=True)))
)
sup.show_table(ranks, f"per-rank expectations {measure}", key="download_ranks", hide_index=True)
st.caption(
    "Each rank of a group with n docs, r relevant and total gain G is relevant with probability "
    f"r/n and has expected gain G/n, whatever the order. expected_term: what the rank adds to "
    f"{measure} on average over the orderings; the terms sum to "
    f"{ranks['expected_term'].sum():.6f}, the tie-aware value."
)

# --- three tie-breaks, three numbers
st.subheader("One run, three numbers")
three = {
    p: tiecore.evaluate(
        run, qrels, measure, ties="oblivious", tiebreak=p, rel_level=settings.rel_level
    )["value"].iloc[0]
    for p in ("trec_eval", "docno_asc", "file_order")
}
cols = st.columns(4)
for col, (policy, value) in zip(cols[:3], three.items(), strict=True):
    col.metric(policy, f"{value:.4f}", help=sup.TIEBREAK_HELP[policy])
cols[3].metric("tie-aware", f"{aware:.4f}")
if len(set(np.round(list(three.values()), 12))) == 3:
    st.success("Your list already gives three different values for the same run.")
st.markdown(
    "The classic case: three documents with the same score, only `a` relevant, written to the run "
    "file in the order `b a c`. trec_eval sorts ties by docno descending (`c b a`), another tool "
    "by docno ascending (`a b c`), a third keeps the file order (`b a c`):"
)
example_run = pd.DataFrame({"qid": "1", "docno": ["b", "a", "c"], "score": [1.0, 1.0, 1.0]})
example_qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "level": [1, 0, 0]})
rows = []
for policy in ("trec_eval", "docno_asc", "file_order"):
    found = tiecore.evaluate(example_run, example_qrels, "RR", ties="oblivious", tiebreak=policy)
    rows.append({"tie-break": policy, "RR": float(found["value"].iloc[0])})
rows.append(
    {
        "tie-break": "tie-aware",
        "RR": float(tiecore.evaluate(example_run, example_qrels, "RR")["value"].iloc[0]),
    }
)
st.dataframe(pd.DataFrame(rows), hide_index=True, width="content")
st.code("1 Q0 b 1 1.0 tied\n1 Q0 a 2 1.0 tied\n1 Q0 c 3 1.0 tied", language="text")
st.caption("RR = 1/3, 1 and 1/2: the same run. Tie-aware gives (1 + 1/2 + 1/3)/3 = 11/18 ≈ 0.611.")

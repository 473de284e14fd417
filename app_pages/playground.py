"""Playground: edit a small ranked list and see every ordering of its ties, for teaching."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import tiecore
from app_lib import cache
from app_lib import charts as ch
from app_lib import sidebar as sb
from app_lib.settings import with_gain
from tiecore import report
from tiecore.errors import InputError
from tiecore.explain import anatomy, orderings, policies

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

HOW = (
    "Documents with equal scores form a tie group; an ordering puts each group's documents in "
    "some order and keeps the groups in score order, so a list with groups of n1, n2, ... "
    "documents has n1!·n2!·... orderings (up to {limit:,} are listed). Each ordering is scored "
    "as trec_eval would score that ranked list; tie-aware evaluation weighs every ordering "
    "equally, so its value is their mean, and tiecore computes it without listing them: each "
    "rank's expected contribution follows from its group's size n and its r relevant "
    "documents (the formula's pieces below). A fixed tie-break (trec_eval's docno descending, "
    "docno ascending, file order) picks one ordering, hence one of the values listed."
)


def page() -> None:
    """The page: the list and the measure, then every ordering, the formula, three numbers."""
    dataset, settings = sb.context()
    st.title("Playground")
    st.caption(
        "Edit the scores and relevance levels of one small ranked list. Documents with equal "
        "scores form a tie group; every order inside the groups is listed with its value."
    )
    ch.how_it_works(HOW.format(limit=orderings.MAX_ORDERINGS))
    docs, measure = edit_list(settings)
    query = anatomy.QueryList.from_docs(docs)
    run, qrels = query.frames()
    try:
        aware = float(
            tiecore.evaluate(run, qrels, measure, ties="aware", rel_level=settings.rel_level)[
                "value"
            ].iloc[0]
        )
    except InputError as error:
        st.error(f"{measure} cannot be computed for this list: {error.problem}.")
        st.stop()
    prov = cache.provenance(dataset, settings, measure=measure, ties="every ordering")
    prov["data set"] = "the playground's list: " + " ".join(
        f"{d}:{s:g}:{lv}"
        for d, s, lv in zip(docs["docno"], docs["score"], docs["level"], strict=True)
    )
    view = {"settings": settings, "docs": docs, "measure": measure, "query": query,
            "aware": aware, "prov": prov}  # fmt: skip
    st.subheader("Every ordering consistent with the scores")
    every_ordering(view)
    st.subheader(f"The formula's pieces: {measure}")
    formula_pieces(view)
    st.subheader("One run, three numbers")
    three_numbers(view, run, qrels)
    classic_example()


def edit_list(settings) -> tuple[pd.DataFrame, str]:
    """The edited list, every row complete and unique, and the measure; the page stops with
    what is wrong otherwise (never stale results)."""
    left, right = st.columns([3, 2])
    with left:
        docs = st.data_editor(
            DEFAULT,
            num_rows="dynamic",
            key="playground_editor",
            hide_index=True,
            column_config={
                "docno": st.column_config.TextColumn(
                    "docno", required=True, help="unique document id"
                ),
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
        names, errors = with_gain([typed], settings.gain) if typed else ((), [])
        measure = names[0] if names else None
        st.caption(
            f"Relevance level {settings.rel_level} and {settings.gain} gain come from the sidebar."
        )
    docs = docs.reset_index(drop=True)
    blank = docs[["docno", "score", "level"]].isna().all(axis=1)
    docs = docs[~blank].reset_index(drop=True)
    problems = [*errors]
    for i, row in docs.iterrows():
        missing = [c for c in ("docno", "score", "level") if pd.isna(row[c]) or str(row[c]) == ""]
        if missing:
            problems.append(
                f"row {i + 1} ({row['docno'] if 'docno' not in missing else 'no docno'}) "
                f"has no {' and no '.join(missing)}"
            )
    seen: dict[str, int] = {}
    for i, docno in enumerate(docs["docno"].astype(str)):
        if docno in seen and docno not in ("nan", "None", ""):
            problems.append(
                f"docno {docno} appears twice (rows {seen[docno] + 1} and {i + 1}); each "
                "docno may appear once"
            )
        seen.setdefault(docno, i)
    if len(docs) == 0:
        problems.append("the list is empty: add at least one row")
    if measure is None or problems:
        for problem in problems or ["choose a measure"]:
            st.error(problem)
        st.caption("Nothing below is computed until every row is complete and unique.")
        st.stop()
    docs = docs.assign(
        docno=docs["docno"].astype(str),
        score=docs["score"].astype(float),
        level=docs["level"].astype("int64"),
    )
    return docs, measure


def every_ordering(view: dict) -> None:
    """Every ordering with its value, their mean beside tiecore's tie-aware value."""
    docs, measure, aware = view["docs"], view["measure"], view["aware"]
    orders = orderings.orderings(docs["score"].to_numpy())
    if orders is None:
        st.warning(
            f"{orderings.count_orderings(docs['score'].to_numpy()):,} orderings, more than "
            f"{orderings.MAX_ORDERINGS:,}: make the tie groups smaller to list them all."
        )
        return
    values = orderings.ordering_values(view["query"], orders, measure, view["settings"].rel_level)
    listing = pd.DataFrame(
        {
            "ordering": np.arange(1, len(orders) + 1),
            "ranked list": [" ".join(docs["docno"].to_numpy()[o]) for o in orders],
            measure: values,
        }
    )
    cols = st.columns(3)
    cols[0].metric("orderings", len(orders))
    cols[1].metric("mean over orderings", report.format_value(values.mean(), 6))
    cols[2].metric(
        "tie-aware value (tiecore)",
        report.format_value(aware, 6),
        delta="equal" if np.isclose(values.mean(), aware, atol=1e-12) else "differs",
        delta_color="off",
        delta_arrow="off",
    )
    left, right = st.columns([3, 2])
    with left:
        ch.show_table(
            listing,
            f"orderings {measure}",
            key="download_orderings",
            height=300,
            provenance=view["prov"],
        )
    with right:
        counts = listing[measure].round(10).value_counts().sort_index()
        bars = go.Figure(
            go.Bar(
                x=counts.index,
                y=counts.to_numpy() / len(orders),
                marker_color=ch.MODE_COLORS["sampled"],
                hovertemplate=f"{measure} = %{{x:.4f}}<br>share of orderings %{{y:.3f}}"
                "<extra></extra>",
            )
        )
        bars.add_vline(x=aware, line={"color": ch.MODE_COLORS["aware"], "dash": "dash"})
        ch.show(
            bars,
            "playground_values",
            height=300,
            legend=False,
            title="values over all orderings (dashed: their mean)",
            x_title=f"{measure} of an ordering",
            y_title="share of orderings",
        )


def formula_pieces(view: dict) -> None:
    """The measure's rank-by-rank formula, the paper's quantities, each group's share."""
    query, measure, aware, prov = view["query"], view["measure"], view["aware"], view["prov"]
    rel_level = view["settings"].rel_level
    num_rel = query.num_rel(rel_level)
    q = anatomy.paper_quantities(
        anatomy.tie_groups(query, rel_level), anatomy.cutoff(measure, num_rel, len(query))
    )
    try:
        contributions, summary = anatomy.group_contributions(query, measure, rel_level)
    except (ValueError, KeyError):
        contributions, summary = None, None
    if summary is None:
        st.info(
            f"{measure} has no rank-by-rank form here; its tie-aware value is "
            f"{report.format_value(aware, 6)}."
        )
        return
    st.latex(summary["formula"])
    st.caption(
        "j: rank; p: its 0-based position inside its tie group of n docs, r of them relevant, m "
        "judged non-relevant, total gain G; R_g / A_g: relevant / judged non-relevant docs above "
        f"the group; R = {num_rel} relevant and N judged non-relevant docs in the qrels. Each "
        "term is the rank's expected contribution over all orderings."
    )
    formula = anatomy.formula(measure, q, num_rel)
    if formula is not None:
        st.markdown(
            "With the paper's quantities at the cutoff (V_c is the tie group holding rank k):"
        )
        for col, name in zip(st.columns(5), ("k", "R_c", "t_c", "n_c", "r_c"), strict=True):
            col.metric(name, q[name])
        st.latex(formula.latex)
    st.markdown(
        f"Per tie group (ranks ≤ {summary['cut']}), summed and divided by "
        f"{summary['normaliser']} = {summary['normaliser_value']:.6g}:"
    )
    ch.show_table(
        contributions, f"group contributions {measure}", key="download_groups_pg", provenance=prov
    )
    terms = [report.format_value(c) for c in contributions["contribution"]]
    total = report.format_value(float(contributions["contribution"].sum()), 6)
    st.latex(
        r"\text{"
        + measure.replace("_", r"\_")
        + "} = "
        + (" + ".join(terms) if len(terms) <= 8 else r"\sum_{\text{groups}} \ldots")
        + f" = {total}"
    )
    st.caption(f"tiecore's tie-aware value: {report.format_value(aware, 6)}.")
    ranks = anatomy.expected_ranks(query, measure, rel_level)
    with st.expander("Per-rank expectations"):
        ch.show_table(
            ranks, f"per-rank expectations {measure}", key="download_ranks", provenance=prov
        )


def three_numbers(view: dict, run: pd.DataFrame, qrels: pd.DataFrame) -> None:
    """The list under three fixed tie-breaks beside its tie-aware value."""
    three = policies.policy_values(
        {"list": run},
        qrels,
        view["measure"],
        rel_level=view["settings"].rel_level,
        policies=policies.ARBITRARY,
    ).loc["list"]
    cols = st.columns(4)
    for col, policy in zip(cols[:3], policies.ARBITRARY, strict=True):
        col.metric(
            ch.tiebreak_name(policy),
            report.format_value(three[policy]),
            help=ch.tiebreak_help(policy),
        )
    cols[3].metric("tie-aware", report.format_value(view["aware"]))
    if len({round(float(three[p]), 12) for p in policies.ARBITRARY}) == 3:
        st.success("Your list already gives three different values for the same run.")


def classic_example() -> None:
    """Three tied documents, one relevant, written b a c: three tools, three values of RR."""
    st.markdown(
        "The classic case: three documents with the same score, only `a` relevant, written to "
        "the run file in the order `b a c`. trec_eval sorts ties by docno descending (`c b a`), "
        "another tool by docno ascending (`a b c`), a third keeps the file order (`b a c`):"
    )
    example_run = pd.DataFrame({"qid": "1", "docno": ["b", "a", "c"], "score": [1.0, 1.0, 1.0]})
    example_qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "level": [1, 0, 0]})
    example = policies.policy_values(
        {"example": example_run}, example_qrels, "RR", policies=policies.ARBITRARY
    ).loc["example"]
    st.dataframe(
        pd.DataFrame(
            {
                "tie-break": [ch.tiebreak_name(p) for p in [*policies.ARBITRARY, "aware"]],
                "RR": [report.format_value(example[p]) for p in [*policies.ARBITRARY, "aware"]],
            }
        ),
        hide_index=True,
        width="content",
    )
    st.code("1 Q0 b 1 1.0 tied\n1 Q0 a 2 1.0 tied\n1 Q0 c 3 1.0 tied", language="text")
    said = {p: str(Fraction(float(example[p])).limit_denominator(100)) for p in example.index}
    st.caption(
        f"RR = {said['trec_eval']}, {said['docno_asc']} and {said['file_order']}: the same run. "
        f"Tie-aware gives their mean over every order of the tie, {said['aware']} ≈ "
        f"{report.format_value(example['aware'])}."
    )


page()

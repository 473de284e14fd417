"""Start here: what a tie is, the classic three-document example, the effect on the data loaded
now, and a map of the pages.  Every number comes from tiecore."""

from __future__ import annotations

import re
from fractions import Fraction

import pandas as pd
import streamlit as st

import tiecore
from app_lib import cache, glossary
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import report
from tiecore.errors import InputError
from tiecore.explain import anatomy, orderings

# --- the classic example: one query, three tied documents, one relevant
RELEVANT = "d1"
#: The run file lists the tied documents d2, d1, d3; only d1 is relevant.
RUN = pd.DataFrame({"qid": "q1", "docno": ["d2", "d1", "d3"], "score": [1.0, 1.0, 1.0]})
QRELS = pd.DataFrame({"qid": "q1", "docno": ["d1", "d2", "d3"], "level": [1, 0, 0]})
#: Tie-break policy -> how a tool following it is described.
TOOLS = {
    "trec_eval": ("trec_eval", "by document id, descending"),
    "docno_asc": ("id-ascending tool", "by document id, ascending"),
    "file_order": ("file-order tool", "as written in the run file"),
}


def fraction(value: float) -> str:
    """A value as the small fraction it is (``1/3``, ``1``), for the three-document example."""
    return str(Fraction(float(value)).limit_denominator(100))


def approx(value: float) -> str:
    """``1/3 ≈ 0.3333``; a whole number alone (``1``)."""
    exact = fraction(value)
    return exact if "/" not in exact else f"{exact} ≈ {report.format_value(value)}"


def listing(docnos) -> str:
    """A ranked list as text, the relevant document marked."""
    return "  ".join(f"{d} ✓" if d == RELEVANT else d for d in docnos)


def example_tools() -> None:
    """The example's run file and three tools' three answers."""
    st.markdown(
        "One query, three documents. The system gives all three the same score; only "
        f"**{RELEVANT}** is relevant. Its run file lists them in this order:"
    )
    st.dataframe(
        pd.DataFrame(
            {
                "Line of the run file": range(1, len(RUN) + 1),
                "Document": RUN["docno"],
                "Score": RUN["score"],
                "Relevant": ["yes ✓" if d == RELEVANT else "no" for d in RUN["docno"]],
            }
        ),
        hide_index=True,
        column_config={"Score": st.column_config.NumberColumn(format="%.1f")},
    )
    st.markdown(
        "The measure is **RR**, "
        + glossary.define("RR").partition(": ")[2].removesuffix(".")
        + ". Three tools, three tie rules, three answers for the same run:"
    )
    rows = []
    for policy, (tool, rule) in TOOLS.items():
        value = tiecore.evaluate(RUN, QRELS, "RR", ties="oblivious", tiebreak=policy)["value"]
        ranked = orderings.ranked_list(RUN, QRELS, "q1", tiebreak=policy)
        rows.append(
            {
                "Tool": tool,
                "RR": approx(value.iloc[0]),
                "Ranked list it scores": listing(ranked["docno"]),
                f"Rank of {RELEVANT}": int(ranked.loc[ranked["docno"] == RELEVANT, "rank"].iloc[0]),
                "Its order for tied documents": rule,
            }
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def example_aware() -> None:
    """Tie-aware RR: every order of the three tied documents, averaged."""
    orders = orderings.orderings(RUN["score"].to_numpy())
    query = anatomy.QueryList.from_docs(
        RUN.merge(QRELS, on=["qid", "docno"])[["docno", "score", "level"]]
    )
    values = orderings.ordering_values(query, orders, "RR")
    aware = float(tiecore.evaluate(RUN, QRELS, "RR", ties="aware")["value"].iloc[0])
    st.markdown(
        f"**Tie-aware** RR takes every order of the tied documents, {len(orders)} here, "
        "as equally likely and averages their RR:"
    )
    left, right = st.columns([3, 2])
    with left:
        st.dataframe(
            pd.DataFrame(
                {
                    "Order": range(1, len(orders) + 1),
                    "Ranked list": [listing(RUN["docno"].to_numpy()[o]) for o in orders],
                    "RR": [fraction(v) for v in values],
                }
            ),
            hide_index=True,
            width="stretch",
        )
    with right:
        st.metric(
            f"Tie-aware RR (mean of {len(orders)} orders)",
            approx(aware),
            help=glossary.term("aware"),
        )
        st.caption(
            f"({' + '.join(fraction(v) for v in values)}) / {len(orders)} = {fraction(aware)}. "
            "No document id decides it, and it is the same for every tool."
        )


# --- the page map
#: The map: (page, title, icon, what it shows); titles and icons as in app.py's navigation.
PAGES = (
    ("overview", "Overview", "bar_chart",
     "every system and measure on the loaded data: the reported value beside the tie-aware "
     "one, and which moved most"),
    ("tie_anatomy", "Tie anatomy", "biotech",
     "one query of one system taken apart into its tie groups, with the paper's formula"),
    ("variance", "Variance", "casino",
     "how much random tie-breaking moves a value, per query and overall"),
    ("rankings", "System rankings", "leaderboard",
     "whether ties can swap the order of two systems"),
    ("queries", "Per-query drill-down", "zoom_in",
     "which queries move and for which systems; one query's two ranked lists side by side, "
     "tie groups and relevant documents marked"),
    ("scoring_functions", "Scoring functions", "functions",
     "your runs or learning-to-rank features as scoring functions: how often each ties, "
     "and how far that moves its numbers"),
    ("builder", "Build a scoring function", "tune",
     "coarsen a run's scores, or combine features, and watch ties appear"),
    ("precision", "Precision what-if", "target",
     "a run served in bfloat16, float16 or k decimals: the ties that appear and what they "
     "do to each measure and to the ranking"),
    ("playground", "Playground", "toys",
     "try it yourself: edit a small ranked list and see every order of its ties"),
)  # fmt: skip


def page_map() -> None:
    """Every page with one line on what it shows."""
    for name, title, icon, what in PAGES:
        with st.container(gap=None):  # the link, its line just below (wraps on a phone)
            st.page_link(f"app_pages/{name}.py", label=title, icon=f":material/{icon}:")
            st.caption(what)


def plain(text: str) -> str:
    """A user's name (run tag, file name) safe inside Markdown: special characters escaped."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", str(text))


def loaded_data() -> None:
    """The same effect on the data loaded now, with the count the Overview reconciles."""
    st.subheader("On the data loaded now")
    dataset, settings = sb.context()
    if not settings.measures:
        st.info("Choose at least one measure in the sidebar to see the effect on this data.")
        st.stop()
    with st.spinner("Measuring the tie effect on the loaded data ..."):
        try:
            table = cache.modes(dataset, settings)
        except InputError as error:
            table = None
            st.info(f"The tie effect could not be measured on this data: {error.problem}.")
    if table is None or not len(table):
        ch.dataset_caption(dataset)
        return
    tool = (
        "trec_eval"
        if settings.tiebreak == "trec_eval"
        else f"the {ch.tiebreak_name(settings.tiebreak)} tie-break"
    )
    data_words = f"On the data loaded now, {plain(dataset.label)},"
    row = report.largest_shift(table)
    if row is None:
        st.markdown(
            f"{data_words} no tie-break moves any of the {len(table)} values: every order of "
            "the tied documents gives the same numbers."
        )
    else:
        counts = report.flag_counts(table)
        st.markdown(
            f"{data_words} the largest shift: {tool} reports {row['measure']} of "
            f"{plain(dataset.describe(row['run']))} as "
            f"**{report.format_value(row['oblivious'])}**, the tie-aware value is "
            f"**{report.format_value(row['aware'])}**, a shift of "
            f"{report.format_shift(row['delta'])}. Over all systems and measures, "
            f"{report.reconcile_sentence(counts, report.PRINTED_DIGITS)} The Overview "
            "flags a value only when its shift shows as printed *and* is larger than 2 tie sd."
        )
        st.caption(f"**{row['measure']}**: {glossary.define(row['measure']).partition(': ')[2]}")
    ch.dataset_caption(dataset)


HOW = (
    "Tie-aware evaluation does not list every order of a long list. For a measure that adds "
    "up a value per rank (P, DCG) the mean over all orders of a tie group is the same sum "
    "with each rank's value averaged over the group's places; for the others (RR, AP and "
    "their kin) tiecore uses exact formulas over how many relevant documents each tie group "
    "holds. Either way it costs about one pass over the list. The small example above lists "
    "every order only to show that the two agree. The **tie sd** on the other pages is the "
    "exact standard deviation over random tie-breaks, from the same per-group arithmetic."
)


def page() -> None:
    """The page: what a tie is, the example, the map, the effect on the loaded data."""
    st.title("Start here: ties in IR evaluation")
    st.page_link(
        "app_pages/overview.py", label="Skip to the data →", icon=":material/fast_forward:"
    )
    st.markdown(
        "A search system gives each document a score and ranks the documents by it. Sometimes "
        "it gives several documents exactly the same score: they are **tied**, and the system "
        "has said nothing about their order. An evaluation tool still has to put them in some "
        "order before it can count anything, and each tool has its own rule, for example "
        "alphabetical by document id. So the same run can get different results from different "
        "tools, decided by document ids rather than by the system. **Tie-aware** evaluation "
        "instead averages over every order of the tied documents: what the system earned, "
        "whatever the rule."
    )

    ch.how_it_works(HOW)
    st.subheader("An example: three tied documents")
    example_tools()
    example_aware()
    # the page map, drawn before the data part below (a moment the first time)
    st.subheader("Where to go next")
    page_map()
    loaded_data()


page()

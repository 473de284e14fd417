"""Precision what-if: a run's scores at bfloat16, float16, float32 or k decimals.

The page is :func:`page`: widgets, tiecore's results before and after rounding, drawn.

The conversion is :func:`tiecore.explain.precision.coarsen_run`; the ties, values,
ranges and ranks shown come from tiecore (``cache.tie_profiles``,
``cache.modes``, :func:`tiecore.explain.builder.tie_change`, ``before_after`` and
``leaderboard_change``) on the data set with the chosen runs rounded, keyed by
content (the data's key, the precision and the runs rounded).
"""

from __future__ import annotations

import re

import streamlit as st

from app_lib import cache, data
from app_lib import charts as ch
from app_lib import sidebar as sb
from tiecore import report
from tiecore.explain import builder
from tiecore.explain.precision import PRECISIONS, precision_label

#: One plain sentence on each precision (bits as IEEE 754 and bfloat16 define them).
MEANING = {
    "bf16": "bfloat16 keeps 8 significant bits (about 2–3 decimal digits) with float32's range, "
    "so scores that agree in their first 2–3 digits become equal: many new ties.",
    "fp16": "float16 keeps 11 significant bits (about 3–4 decimal digits) and a range up to "
    "65,504, so scores that agree in their first 3–4 digits become equal.",
    "fp32": "float32 keeps 24 significant bits (about 7 decimal digits); trec_eval 9 already "
    "compares scores as float32, so its number cannot change here, but the tie-aware value "
    "(which takes the scores as given) can.",
    "decimals": "k decimals rounds every score to k decimal places, as a run file written "
    "with k digits after the point: scores closer than about 10⁻ᵏ become equal.",
}
CHOICES = (*[p for p in ("bf16", "fp16", "fp32") if p in PRECISIONS], "decimals")
CHOICE_LABEL = {"bf16": "bf16", "fp16": "fp16", "fp32": "fp32", "decimals": "k decimals"}
DASH = "—"


def plain(text: str) -> str:
    """A user's name for Markdown: punctuation escaped, so it shows as typed."""
    return re.sub(r"([\\`*_{}\[\]()<>#+\-.!|~:$])", r"\\\1", str(text))


def value(x: float) -> str:
    """``0.2680``; ``—`` when undefined."""
    return report.format_value(x)


def signed(x: float) -> str:
    """A change in the measure's units (:func:`tiecore.report.format_shift`): ``+0.0050``,
    ``-0.00002`` for one too small for 4 decimals, ``0.0000`` for none (never ``-0.0000``)."""
    return report.format_shift(x)


def count(before: int, after: int) -> str:
    return f"{int(before):,} → {int(after):,}"


HOW = (
    "The chosen runs' scores are converted as a server would store them (bfloat16 and float16 "
    "by rounding to the nearest representable number, k decimals by rounding each score), "
    "then everything is computed again on the rounded runs: the tie groups (documents of one "
    "query with one score), each measure's value under the sidebar's tie-break and tie-aware "
    "(the exact mean over every order of the tied documents) with the lowest and highest "
    "value any order gives, and the ranks of the systems (1 = best, equal values share a "
    "place). Before and after are the same computation on the scores as given and as rounded."
)


def page() -> None:
    """The page: the system and the precision, then ties, measures and the leaderboard."""
    dataset, settings = sb.context()
    one = dataset.noun[0]
    st.title("Precision what-if")
    ch.dataset_caption(dataset)
    st.markdown(
        "Dense retrievers served in **bfloat16** or **float16** round their scores, so documents "
        "that the float32 model kept apart can get equal scores — new ties, which the tie-break "
        "then orders arbitrarily (Yang et al., ACL 2026). Pick a system and a precision: this page "
        "rounds "
        "its scores and shows how many ties appear, how each measure's value and range move, and "
        "whether the leaderboard changes."
    )
    ch.how_it_works(HOW)
    with st.expander("What the precisions mean", expanded=False):
        for key in CHOICES:
            st.markdown(f"- **{CHOICE_LABEL[key]}**: {MEANING[key]}")

    left, middle, right = st.columns([2, 2, 1])
    with left:
        run = sb.pick_run(dataset, key="precision_run", label=f"{one.capitalize()} to round")
    with middle:
        choice = st.segmented_control(
            "Precision",
            CHOICES,
            default="bf16",
            key="precision_choice",
            format_func=CHOICE_LABEL.get,
            required=True,
            help=" ".join(MEANING[k] for k in CHOICES),
        )
    with right:
        decimals = st.number_input(
            "Decimals (k)",
            0,
            15,
            3,
            key="precision_decimals",
            disabled=choice != "decimals",
            help="used when the precision is 'k decimals'",
        )
    every = st.toggle(
        f"Round every {one}, not only the chosen one",
        key="precision_every",
        help="off: your system served at this precision against the others as given; on: every "
        "system served at it (does the whole leaderboard change?)",
    )
    precision = int(decimals) if choice == "decimals" else choice
    label = precision_label(precision)
    st.caption(
        MEANING[choice]
        if choice != "decimals"
        else f"{label.capitalize()}: every score rounded to {precision} decimal places, as a run "
        f"file written with {precision} digits after the point."
    )
    rounded = dataset.names if every else [run]
    view = {
        "dataset": dataset,
        "settings": settings,
        "run": run,
        "every": every,
        "label": label,
        "choice": choice,
        "precision": precision,
        "rounded": rounded,
        "coarse": data.coarsened(dataset, precision, rounded),
    }
    ties_section(view)
    measures_section(view)
    leaderboard_section(view)


def ties_section(view: dict) -> None:
    """How many tie groups and tied rows the rounding makes."""
    dataset, run, label, every = view["dataset"], view["run"], view["label"], view["every"]
    coarse, one = view["coarse"], dataset.noun[0]
    before_profile, _ = cache.tie_profiles(dataset, dataset.key)
    after_profile, _ = cache.tie_profiles(coarse, coarse.key)
    ties = builder.tie_change(before_profile, after_profile)
    row = ties.loc[run]
    st.subheader(f"Ties at {label}")
    new_groups = int(row["tie_groups_after"]) - int(row["tie_groups_before"])
    st.markdown(
        f"At {label}, **{plain(run)}** has **{int(row['tie_groups_after']):,} tie groups** (was "
        f"{int(row['tie_groups_before']):,}); **{int(row['tied_rows_after']):,} of its "
        f"{int(row['rows']):,} rows** share their score with another document of the same query "
        f"(**{row['share_tied_rows_after']:.1%}**, was {int(row['tied_rows_before']):,}, "
        f"{row['share_tied_rows_before']:.1%}). A tie group is two or more documents of one query "
        "with the same score."
        if new_groups or row["tied_rows_after"] != row["tied_rows_before"]
        else f"At {label}, **{plain(run)}** gets no new tie: its {int(row['tie_groups_before']):,} "
        f"tie groups and {int(row['tied_rows_before']):,} tied rows "
        f"({row['share_tied_rows_before']:.1%}) stay as they were."
    )
    cols = st.columns(3)
    for col, name, after, before, help_key in (
        (cols[0], "tie groups", f"{int(row['tie_groups_after']):,}",
         f"{int(row['tie_groups_before']):,}", "tie_groups"),
        (cols[1], "tied rows", f"{int(row['tied_rows_after']):,}",
         f"{int(row['tied_rows_before']):,}", "share_tied_rows"),
        (cols[2], "share of tied rows", f"{row['share_tied_rows_after']:.1%}",
         f"{row['share_tied_rows_before']:.1%}", "share_tied_rows"),
    ):  # fmt: skip
        col.metric(
            f"{name} at {label}",
            after,
            delta=f"was {before}",
            delta_color="off",
            delta_arrow="off",
            help=ch.GLOSSARY[help_key],
        )
    if every and len(ties) > 1:
        with st.expander(f"Ties of every {one}, before → after", expanded=False):
            frame = ties.reset_index()
            frame["system"] = [dataset.describe(n) for n in frame["run"]]
            st.dataframe(
                frame[
                    [
                        "system",
                        "rows",
                        "tie_groups_before",
                        "tie_groups_after",
                        "tied_rows_before",
                        "tied_rows_after",
                        "share_tied_rows_before",
                        "share_tied_rows_after",
                    ]
                ],
                hide_index=True,
                width="stretch",
                column_config={
                    "system": st.column_config.TextColumn(one),
                    "rows": st.column_config.NumberColumn("rows", format="%d"),
                    "tie_groups_before": st.column_config.NumberColumn(
                        "tie groups before", format="%d"
                    ),
                    "tie_groups_after": st.column_config.NumberColumn(
                        "tie groups after", format="%d"
                    ),
                    "tied_rows_before": st.column_config.NumberColumn(
                        "tied rows before", format="%d"
                    ),
                    "tied_rows_after": st.column_config.NumberColumn(
                        "tied rows after", format="%d"
                    ),
                    "share_tied_rows_before": st.column_config.NumberColumn(
                        "share tied before", format="percent"
                    ),
                    "share_tied_rows_after": st.column_config.NumberColumn(
                        "share tied after", format="percent"
                    ),
                },
            )


def measures_section(view: dict) -> None:
    """Each measure's value and range before and after, in words and a table."""
    dataset, settings, run, coarse = view["dataset"], view["settings"], view["run"], view["coarse"]
    measures = sb.measures_for(settings, "spread")
    shown_tiebreak = (
        "trec_eval"
        if settings.tiebreak == "trec_eval"
        else f"tie-break {ch.tiebreak_name(settings.tiebreak)}"
    )
    before_modes = cache.modes(dataset, settings)
    after_modes = cache.modes(coarse, settings)
    pick = after_modes[(after_modes["run"] == run) & after_modes["measure"].isin(measures)]
    effect = builder.before_after(
        before_modes, pick, ["run", "measure"], ["oblivious", "aware", "min", "max", "tie_sd"]
    )
    st.subheader(f"What happens to {plain(run)}'s measures")
    st.caption(
        f"{shown_tiebreak} value: what an evaluation tool prints (one arbitrary order "
        "inside each tie). Tie-aware: the exact mean over every order of the tied documents. "
        "Range: the lowest and highest value any order of the tied documents gives."
    )
    lines = []
    for item in effect.itertuples(index=False):
        lines.append(
            f"- **{item.measure}**: {shown_tiebreak} {value(item.oblivious_before)} → "
            f"{value(item.oblivious_after)} ({signed(item.oblivious_change)}); tie-aware "
            f"{value(item.aware_before)} → {value(item.aware_after)} "
            f"({signed(item.aware_change)}); "
            f"range {value(item.min_before)} … {value(item.max_before)} → "
            f"{value(item.min_after)} … {value(item.max_after)}."
        )
    st.markdown("\n".join(lines))
    table = effect.assign(
        oblivious_shift=[signed(x) for x in effect["oblivious_change"]],
        aware_shift=[signed(x) for x in effect["aware_change"]],
        range_before=[f"{value(a)} … {value(b)}"
                      for a, b in zip(effect["min_before"], effect["max_before"], strict=True)],
        range_after=[f"{value(a)} … {value(b)}"
                     for a, b in zip(effect["min_after"], effect["max_after"], strict=True)],
    )  # fmt: skip
    four = {"format": "%.4f"}
    st.dataframe(
        table[["measure", "oblivious_before", "oblivious_after", "oblivious_shift", "aware_before",
               "aware_after", "aware_shift", "range_before", "range_after"]],
        hide_index=True,
        width="stretch",
        column_config={
            "measure": st.column_config.TextColumn("measure"),
            "oblivious_before": st.column_config.NumberColumn(f"{shown_tiebreak} before", **four),
            "oblivious_after": st.column_config.NumberColumn(f"{shown_tiebreak} after", **four),
            "oblivious_shift": st.column_config.TextColumn("change"),
            "aware_before": st.column_config.NumberColumn("tie-aware before", **four),
            "aware_after": st.column_config.NumberColumn("tie-aware after", **four),
            "aware_shift": st.column_config.TextColumn("change "),
            "range_before": st.column_config.TextColumn("range before (min … max)"),
            "range_after": st.column_config.TextColumn("range after (min … max)"),
        },
    )  # fmt: skip


def leaderboard_section(view: dict) -> None:
    """The systems' places before and after, by the oblivious and the tie-aware value."""
    dataset, settings, run, coarse = view["dataset"], view["settings"], view["run"], view["coarse"]
    label, every, choice = view["label"], view["every"], view["choice"]
    one, many = dataset.noun
    shown_tiebreak = (
        "trec_eval"
        if settings.tiebreak == "trec_eval"
        else f"tie-break {ch.tiebreak_name(settings.tiebreak)}"
    )
    before_modes = cache.modes(dataset, settings)
    after_modes = cache.modes(coarse, settings)
    st.subheader("Does the leaderboard change?")
    if len(dataset.runs) < 2:
        st.info(f"Only one {one} is loaded: there is no leaderboard to change.")
        st.stop()
    measure = sb.pick_measure(settings, key="precision_measure", label="Rank by", need="spread")
    #: The two columns compared, each with the name a reader knows it by.
    compared = {"oblivious": shown_tiebreak, "aware": "tie-aware"}
    columns = {}
    for mode in compared:
        before = before_modes[before_modes["measure"] == measure].set_index("run")[mode]
        after = after_modes[after_modes["measure"] == measure].set_index("run")[mode]
        columns[mode] = builder.leaderboard_change(before, after)
    sentences = []
    for mode, name in compared.items():
        found = columns[mode]
        moved = found[found["moved"]]
        when = f"every {one} is at {label}" if every else f"{plain(run)} is at {label}"
        if moved.empty:
            sentences.append(f"- **{name}**: no {one} changes place when {when}.")
        else:
            shown = [
                f"{plain(n)} {r.label_before} → {r.label_after}"
                for n, r in zip(moved.index[:8], moved.itertuples(), strict=False)
            ]
            more = f" and {len(moved) - 8} more" if len(moved) > 8 else ""
            sentences.append(
                f"- **{name}**: {len(moved)} of {len(found)} {many} change place when {when}: "
                f"{', '.join(shown)}{more}."
            )
    st.markdown("\n".join(sentences))
    short = f"at {CHOICE_LABEL[choice] if choice != 'decimals' else label}"
    st.caption(
        f"Each measure's value as given, then {short}, then the rank: 1 = best; =2 means a place "
        "shared by equal values; 2 → 1 means the place before → after rounding."
    )
    leaderboard_table(view, columns, short, shown_tiebreak, measure)


def leaderboard_table(view: dict, columns: dict, short: str, shown_tiebreak: str, measure: str):
    """The places before and after, by the oblivious and the tie-aware value, with the CSV."""
    dataset, settings, label = view["dataset"], view["settings"], view["label"]
    precision, one = view["precision"], view["dataset"].noun[0]
    four = {"format": "%.4f"}
    oblivious, aware = columns["oblivious"], columns["aware"]
    board = oblivious[["label_before", "label_after", "before", "after"]].join(
        aware[["label_before", "label_after", "before", "after"]].add_suffix("_aware")
    )
    board.insert(0, "system", [dataset.describe(n) for n in board.index])
    for suffix, found in (("", oblivious), ("_aware", aware)):
        board[f"rank{suffix}"] = [
            f"{b} → {a}" if b != a else b
            for b, a in zip(found["label_before"], found["label_after"], strict=True)
        ]
    board = board.iloc[aware["rank_after"].to_numpy().argsort(kind="stable")]
    st.dataframe(
        board,
        hide_index=True,
        width="stretch",
        column_order=[
            "system",
            "before",
            "after",
            "rank",
            "before_aware",
            "after_aware",
            "rank_aware",
        ],
        column_config={
            "system": st.column_config.TextColumn(one),
            "before": st.column_config.NumberColumn(shown_tiebreak, help="as given", **four),
            "after": st.column_config.NumberColumn(
                short, help=f"{shown_tiebreak} at {label}", **four
            ),
            "rank": st.column_config.TextColumn(
                "rank", help=f"by {shown_tiebreak}: before → after; 1 = best, =2 a shared place"
            ),
            "before_aware": st.column_config.NumberColumn("tie-aware", help="as given", **four),
            "after_aware": st.column_config.NumberColumn(
                f"{short} ", help=f"tie-aware at {label}", **four
            ),
            "rank_aware": st.column_config.TextColumn(
                "rank ", help="by tie-aware value: before → after; 1 = best, =2 a shared place"
            ),
        },
    )
    st.download_button(
        f"Download the leaderboard at {label} (CSV)",
        lambda: report.to_csv(
            board.reset_index(drop=True),
            cache.provenance(
                dataset,
                settings,
                measure=measure,
                ties="oblivious, aware",
                precision=label,
                rounded=", ".join(view["rounded"]),
            ),
        ),
        file_name=f"leaderboard_{precision}.csv",
        mime="text/csv",
        key="download_precision",
        on_click="ignore",
        icon=":material/download:",
    )


page()

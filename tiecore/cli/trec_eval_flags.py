"""trec_eval's input flags in ``tiecore eval``: ``-Z FILE``, ``-N NUM``, ``-R FORMAT``.

They mean what they mean to trec_eval 9.0.x (``trec_eval -h``):

``-Z FILE`` (``--Zscore``)
    print every value as a z-score against the file's per-query means and standard
    deviations (:mod:`tiecore.cli.zscores`).
``-N NUM`` (``--Number_docs_in_coll``)
    the number of docs in the collection, which utility's fourth cell (non-relevant
    docs not retrieved) needs; 0 by default, as trec_eval.
``-R FORMAT`` (``--Rel_info_format``)
    the format of the judgments file: ``qrels`` (default), ``qrels_jg``, ``prefs`` or
    ``qrels_prefs`` (:mod:`tiecore.io.trec_eval_files`).

None of them clashes with a tiecore option of ``eval``; docs/cli.md lists them.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TextIO

from tiecore.cli.common import UsageError
from tiecore.cli.trec_eval_names import TABLE, TrecPlan
from tiecore.measures.trec_eval_table import PREFS_NAMES as PREFS_MEASURES
from tiecore.report.formats import csv_text, json_text

#: trec_eval's judgment formats (-R), and the measures each one serves.
REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")
#: The measures of the judgment-group format and of the preference formats; every
#: other measure reads qrels.
JG_MEASURES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
PREFS_FORMATS = ("prefs", "qrels_prefs")


def trec_family(printed: str) -> str:
    """trec_eval's measure of a printed line name (``P_avgjg_5`` -> ``P_avgjg``).

    >>> trec_family("P_avgjg_5"), trec_family("map"), trec_family("iprec_at_recall_0.10")
    ('P_avgjg', 'map', 'iprec_at_recall')
    """
    name = printed
    while name not in TABLE and "_" in name:
        name = name.rsplit("_", 1)[0]
    return name


def _formats_match(args: argparse.Namespace, plan: TrecPlan) -> None:
    """Each measure asked for reads the judgments' format (-R), as in trec_eval, where a
    measure of another format stops the run."""
    families = list(dict.fromkeys(trec_family(printed) for printed, _ in plan.lines))
    if args.rel_format == "qrels":
        for names, needs in ((JG_MEASURES, "-R qrels_jg"), (PREFS_MEASURES, "-R prefs")):
            wrong = [name for name in families if name in names]
            if wrong:
                shown = ", ".join(wrong[:3]) + (f" and {len(wrong) - 3} more" * (len(wrong) > 3))
                raise UsageError(
                    f"-m {shown}: measures of other judgments than qrels "
                    f"(expected {needs}{' or -R qrels_prefs' if needs == '-R prefs' else ''})"
                )
        return
    if args.letor is not None:
        raise UsageError(f"-R {args.rel_format} reads QRELS in its format, not --letor")
    prefs = args.rel_format in PREFS_FORMATS
    wanted, nickname = (PREFS_MEASURES, "all_prefs") if prefs else (JG_MEASURES, "qrels_jg")
    wrong = [name for name in families if name not in wanted]
    if not plan.trec or wrong or not families:
        shown = ", ".join(wrong) or "tiecore's names"
        raise UsageError(
            f"-R {args.rel_format}: {shown} cannot read these judgments (expected trec_eval's "
            f"{', '.join(wanted)}: -m {nickname})"
        )


def _atol(text: str) -> int:
    """``-N``'s value as C's ``atol`` reads it (``12.5`` is 12); text with no number at
    its start, or a negative count, is refused (trec_eval would read 0)."""
    found = re.match(r"\s*[+-]?\d+", text)
    if found is None or int(found[0]) < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is no number of docs (expected 0 or more)")
    return int(found[0])


def add_trec_eval_flags(parser: argparse.ArgumentParser) -> None:
    """-Z, -N, -R as trec_eval spells them."""
    parser.add_argument(
        "-Z",
        "--Zscore",
        dest="zscore",
        metavar="FILE",
        help="trec_eval's -Z: print each value as a z-score, (value - mean) / stddev, with "
        "the mean and stddev of its query and measure from FILE (lines: qid measure mean "
        "stddev); trec_eval's -m names only",
    )
    parser.add_argument(
        "-R",
        "--Rel_info_format",
        dest="rel_format",
        choices=REL_FORMATS,
        default="qrels",
        help="trec_eval's -R: the format of QRELS: qrels (default), qrels_jg (qid jg docno "
        "rel, for map_avgjg, P_avgjg, Rprec_mult_avgjg: -m qrels_jg), prefs (qid jg jsg "
        "docno rel_level) or qrels_prefs (qid jg docno rel_level), for the prefs_* measures "
        "(-m all_prefs)",
    )
    parser.add_argument(
        "-N",
        "--Number_docs_in_coll",
        dest="num_docs",
        type=_atol,
        metavar="NUM",
        help="trec_eval's -N: the number of docs in the collection, for utility's "
        "non-relevant docs not retrieved (default: 0, as trec_eval)",
    )


def with_docs(measure_name: Callable[[str], str], docs: int | None) -> Callable[[str], str]:
    """``measure_name`` that gives utility (trec_eval's or tiecore's ``Utility``) the
    collection's size of ``-N`` (its parameter ``docs``; none without ``-N``), and that
    keeps trec_eval's preference measures' names (``prefs_simp``: tiecore.measures.prefs).

    >>> from tiecore.measures import measure_name
    >>> name = with_docs(measure_name, 1000)
    >>> name("utility"), name("Utility(a=2)"), name("P@5")
    ('Utility(docs=1000.0)', 'Utility(a=2.0,docs=1000.0)', 'P@5')
    """

    def name(text: str) -> str:
        if text.startswith("prefs_"):  # trec_eval's preference measures keep their names
            return text
        canonical = measure_name(text)
        if not docs:
            return canonical
        if canonical == "Utility":
            return measure_name(f"Utility(docs={docs})")
        if canonical.startswith("Utility(") and "docs=" not in canonical:
            return measure_name(f"{canonical[:-1]},docs={docs})")
        return canonical

    return name


def check_trec_eval_flags(
    args: argparse.Namespace, plan: TrecPlan
) -> dict[tuple[str, str], tuple[float, float]] | None:
    """The flags checked against the rest of the command line; returns the ``-Z`` table
    (read now, so that a bad file stops the command before any evaluation) or None."""
    _formats_match(args, plan)
    if args.zscore is None:
        return None
    if args.rel_format != "qrels" and args.ties != "oblivious":
        raise UsageError(f"-Z with -R {args.rel_format} takes --ties oblivious")
    if not plan.trec:
        raise UsageError(
            "-Z goes with trec_eval's -m names only (its file names trec_eval's printed "
            "names: P_10, map)"
        )
    if args.ties == "sampled":
        raise UsageError("-Z takes --ties oblivious or aware (not sampled)")
    if args.complete:
        raise UsageError("-Z with -c is not supported")
    from tiecore.io.trec_eval_files import read_zscores  # lazy: -Z only

    return read_zscores(args.zscore)


def zscore_output(
    args: argparse.Namespace,
    columns: dict[str, list],
    num_q: dict[str, int],
    table: dict[tuple[str, str], tuple[float, float]],
    stderr: TextIO,
    tiebreak: str,
) -> str:
    """The text of ``eval -Z``: trec_eval's lines in trec format; csv and json hold the
    same rows, named ``Z`` and the printed name, with the mode columns (``tiebreak``: the
    oblivious ordering, as eval resolves it for the ``--trec-eval`` version)."""
    from tiecore.cli.zscores import MISSING, zscore_columns, zscore_text  # lazy: -Z only

    z, missing = zscore_columns(columns, num_q, args.plan, table, args.zscore)
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        print(
            f"tiecore: {args.zscore} has no mean and stddev for {len(missing)} query and "
            f"measure pairs ({shown}): printed as {MISSING:.0f}, as trec_eval does",
            file=stderr,
        )
    if not args.spread:
        z = {name: column for name, column in z.items() if name not in ("var", "min", "max")}
    if args.format == "trec":
        return zscore_text(z, num_q, args.plan, per_query=args.per_query)
    keep = [i for i, qid in enumerate(z["qid"]) if args.per_query or qid is None]
    z = {name: [column[i] for i in keep] for name, column in z.items()}
    rows = len(z["run"])
    z["measure"] = ["Z" + name for name in z["measure"]]
    z["ties"] = [args.ties] * rows
    z["tiebreak"] = [tiebreak if args.ties == "oblivious" else None] * rows
    return (csv_text if args.format == "csv" else json_text)(z, num_q)

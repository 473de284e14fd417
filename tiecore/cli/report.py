"""``tiecore report``: systems x measures in the three tie modes, as Markdown, LaTeX or CSV.

The table is :func:`tiecore.report.modes_table`'s, the marks
:func:`tiecore.report.significance_vs_best`'s, written by
:func:`tiecore.report.to_markdown`, :func:`~tiecore.report.to_latex` or
:func:`~tiecore.report.to_csv` with the settings behind it.  pandas and scipy load
only when the command runs.
"""

from __future__ import annotations

import argparse
import warnings
from typing import TextIO

from tiecore.cli.common import add_inputs, add_options, check_sample_count, read_inputs
from tiecore.errors import TieCoreWarning
from tiecore.measures import parse_measures, split_measures
from tiecore.options import FIXED_TIEBREAKS, REPORT, SEED, cli_type
from tiecore.report import (
    modes_table,
    provenance,
    significance_vs_best,
    to_csv,
    to_latex,
    to_markdown,
)

#: The measures of ``tiecore report`` without ``-m``.
DEFAULT_MEASURES = ("P@10", "AP", "nDCG@10")
#: Output formats of ``tiecore report``.
FORMATS = ("markdown", "latex", "csv")
_REPORT_HELP = """\
Score every run (or LETOR feature) by every measure tie-oblivious (one tie-break),
tie-aware (the exact mean over all orderings of tied documents, with its exact
standard deviation over random tie-breaks: the tie sd) and, with --samples,
sampled; print systems x measures as a Markdown or LaTeX (booktabs) table or as
CSV, with the settings behind it.  The tables print one column per measure, the
tie-aware value +- tie sd.  Marks: a dagger where the tie-break's value differs from
it at 4 decimals by more than 2 tie sd; bold for the best tie-aware value; * where a
system is significantly below it (paired t-test vs the best system on tie-aware
per-query values, Holm-corrected over all pairs of systems, as tiecore compare)."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``tiecore report`` (:func:`tiecore.cli.main.build_parser`); it takes its
    inputs and the options -M, -l, --format, -o exactly as ``eval`` and ``compare`` do."""
    parser = commands.add_parser(
        "report",
        help="systems x measures in the three tie modes as Markdown, LaTeX or CSV "
        "(see tiecore report --help)",
        usage="tiecore report [options] QRELS RUN [RUN ...]\n"
        "       tiecore report [options] --letor FILE [--features LIST]",
        description=_REPORT_HELP,
    )
    add_inputs(parser)
    parser.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="a measure or comma-separated measures; repeatable (default: P@10, AP, nDCG@10)",
    )
    parser.add_argument(
        "--tiebreak",
        choices=FIXED_TIEBREAKS,  # a seeded order would need its seed in the table
        default="trec_eval",
        help="the oblivious mode's order inside ties (default: trec_eval)",
    )
    parser.add_argument(
        "--samples",
        type=cli_type(REPORT["samples"]),
        metavar="N",
        help="also the sampled mode with N random tie-breaks per run (default: none)",
    )
    parser.add_argument(
        "--seed", type=cli_type(SEED), default=0, metavar="S", help="seed (default: 0)"
    )
    parser.add_argument(
        "--alpha",
        type=cli_type(REPORT["alpha"]),
        default=0.05,
        metavar="A",
        help="significance level of the marks (default: 0.05)",
    )
    add_options(parser, FORMATS)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, stderr: TextIO) -> str:
    """``tiecore report``: read the inputs, build the table, return the text to write."""
    from tiecore.evaluation.core import evaluate  # lazy: pandas (~0.5 s)

    named = split_measures(args.measures or [])  # -m '' names none: refused, not the defaults
    measures = [str(m) for m in parse_measures(named if args.measures else DEFAULT_MEASURES)]
    runs, qrels, sources = read_inputs(args)
    if args.samples:
        check_sample_count(args.samples, runs, qrels, parse_measures(measures))
    table = modes_table(
        runs,
        qrels,
        measures,
        tiebreak=args.tiebreak,
        samples=args.samples,
        seed=args.seed,
        rel_level=args.rel_level,
        depth=args.depth,
    )
    data = args.letor or ", ".join([args.files[0], *sorted(set(sources.values()))])
    about = provenance(
        data_set=data,
        measure=", ".join(measures),
        tie_break=args.tiebreak,
        samples=args.samples,
        seed=args.seed,
        relevance_level=args.rel_level,
        depth=args.depth,
    )
    if args.format == "csv":
        return to_csv(table, about)
    with warnings.catch_warnings():  # modes_table warned of the same inputs already
        warnings.simplefilter("ignore", TieCoreWarning)
        per_query = evaluate(
            runs, qrels, measures, rel_level=args.rel_level, depth=args.depth, per_query=True
        )
    marks = significance_vs_best(per_query, args.alpha)
    write = to_latex if args.format == "latex" else to_markdown
    return write(table, marks, tiebreak=args.tiebreak, alpha=args.alpha, provenance=about)

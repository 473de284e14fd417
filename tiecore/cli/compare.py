"""``tiecore compare``: rank runs by one measure under every tie treatment.

The ranking table, the runs that move between trec_eval's order and tie-aware, and the
pairwise probabilities and significance tests, from :func:`tiecore.compare.compare`,
written by :func:`tiecore.report.comparison.format_comparison`.  The statistics' choices and
ranges are declared once in :mod:`tiecore.options`.
"""

from __future__ import annotations

import argparse
import time
from typing import TextIO

from tiecore.cli.common import (
    UsageError,
    add_complete,
    add_dask,
    add_inputs,
    add_options,
    add_progress,
    dask_client,
    eval_inputs,
    positive_int,
    progress_line,
    sample_count,
    seed_value,
    show_progress,
)
from tiecore.errors import InputError
from tiecore.io import allocators
from tiecore.measures import parse_measures, split_measures
from tiecore.options import (
    CI_METHODS,
    COMPARE_FORMATS,
    CONFIDENCE,
    CORRECTIONS,
    ZERO_METHODS,
    cli_type,
)


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``tiecore compare`` (:func:`tiecore.cli.main.build_parser`)."""
    cmp = commands.add_parser(
        "compare",
        help="rank runs under every tie treatment (see tiecore compare --help)",
        usage="tiecore compare [options] QRELS RUN RUN [RUN ...]\n"
        "       tiecore compare [options] --letor FILE [--features LIST]",
        description="Rank the runs (or LETOR features) by one measure under every "
        "oblivious tie-break, tie-aware and random tie-breaks; print the ranking "
        "table, the runs that move between trec_eval's order and tie-aware, and the "
        "pairwise probabilities and significance tests.",
    )
    add_inputs(cmp)
    cmp.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="the one measure to rank by (default: AP)",
    )
    cmp.add_argument(
        "--samples",
        type=sample_count,
        default=200,
        metavar="N",
        help="random tie-breaks per run (default: 200)",
    )
    cmp.add_argument(
        "--seed", type=seed_value, default=0, metavar="S", help="random seed (default: 0)"
    )
    cmp.add_argument(
        "--resamples",
        type=positive_int,
        default=2000,
        metavar="N",
        help="sign flips of the paired randomization test; all 2^queries of them when "
        "that is fewer (default: 2000)",
    )
    add_complete(cmp)
    add_progress(cmp)
    _add_review_options(cmp)
    add_options(cmp, COMPARE_FORMATS)
    add_dask(cmp)
    cmp.set_defaults(handler=_run_compare)


#: --confidence: a level in (0, 1), as tiecore.options declares it.
_level = cli_type(CONFIDENCE)


def _add_review_options(cmp: argparse.ArgumentParser) -> None:
    """compare's statistics for reviewers: corrections, baseline, intervals, Wilcoxon, Tukey.

    The choices and ranges are those tiecore.compare checks, declared once in
    tiecore.options (which imports no scipy).
    """
    cmp.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="multiple-comparison correction of the pairs' p-values over all pairs "
        "(bh: Benjamini-Hochberg; default: holm)",
    )
    cmp.add_argument(
        "--baseline",
        metavar="RUN",
        help="count the queries each run helps and hurts against this run (its name)",
    )
    cmp.add_argument(
        "--confidence",
        type=_level,
        default=0.95,
        metavar="LEVEL",
        help="level of the bootstrap and Tukey intervals (default: 0.95)",
    )
    cmp.add_argument(
        "--bootstrap",
        type=positive_int,
        default=2000,
        metavar="N",
        help="bootstrap resamples of the intervals (default: 2000)",
    )
    cmp.add_argument(
        "--ci-method",
        choices=CI_METHODS,
        default="BCa",
        help="bootstrap interval method (default: BCa)",
    )
    cmp.add_argument(
        "--zero-method",
        choices=ZERO_METHODS,
        default="wilcox",
        help="zero differences in the Wilcoxon test, as scipy (default: wilcox, dropped)",
    )
    cmp.add_argument(
        "--tukey",
        action="store_true",
        help="add Tukey's HSD over the runs (slow: seconds for 20 runs)",
    )


def _run_compare(args: argparse.Namespace, stderr: TextIO) -> str:
    """Rank the runs under every tie treatment; returns the text to write."""
    from tiecore.compare import TooLarge, compare  # lazy: pandas (~0.5 s)
    from tiecore.report.comparison import format_comparison  # lazy: pandas

    allocators.tune()  # many large arrays (tiecore.io.allocators)
    measures = parse_measures(split_measures(args.measures or ["AP"]))
    if len(measures) != 1:
        raise UsageError("compare takes one measure")
    runs, qrels, _ = eval_inputs(args)  # run files are read one at a time, as scored
    if len(runs) < 2:
        raise UsageError("compare needs at least two runs (or two --features)")
    show = show_progress(args, stderr)
    clock = [time.perf_counter()]

    def progress(done: int, total: int, label: str) -> None:
        now = time.perf_counter()
        progress_line(done, total, label, now - clock[0], stderr)
        clock[0] = now

    try:
        with dask_client(args.dask) as client:
            comparison = compare(
                runs,
                qrels,
                measures[0],
                samples=args.samples,
                seed=args.seed,
                rel_level=args.rel_level,
                depth=args.depth,
                n_resamples=args.resamples,
                complete=args.complete,
                progress=progress if show else None,
                client=client,
                correction=args.correction,
                baseline=args.baseline,
                confidence=args.confidence,
                n_bootstrap=args.bootstrap,
                ci_method=args.ci_method,
                zero_method=args.zero_method,
                tukey=args.tukey,
            )
    except TooLarge as error:
        raise UsageError(f"--samples: {error}") from None
    except InputError as error:
        if error.source != "baseline":
            raise
        raise UsageError(f"--baseline: {error.problem} (expected {error.expected})") from None
    return format_comparison(comparison, args.format)

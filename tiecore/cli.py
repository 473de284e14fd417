"""The ``tiecore`` command line: evaluate run files and print trec_eval-like tables.

``tiecore eval QRELS RUN [RUN ...] -m P@10 --ties aware`` reads the files with
:func:`tiecore.read_qrels` / :func:`tiecore.read_runs` (or a LETOR file with
:func:`tiecore.read_letor`), calls :func:`tiecore.evaluate` once per run and prints
the result as trec_eval-style lines, CSV or JSON. Bad input never ends in a
traceback: it prints ``tiecore: error: <message>`` on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import re
import sys
import textwrap
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from tiecore.errors import InputError
from tiecore.evaluate import MODES
from tiecore.measures import DEFAULT_MEASURES, Measure, parse_measures
from tiecore.ranking import TIEBREAKS

#: Exit status for bad input or bad options (argparse's own convention).
EXIT_USAGE = 2

TIES = MODES
FORMATS = ("trec", "csv", "json")
DEFAULT_SAMPLES = 1000

_USAGE = """\
tiecore eval [options] QRELS RUN [RUN ...]
       tiecore eval [options] --letor FILE [--features LIST]"""

_DESCRIPTION = """\
Evaluate ranking runs against relevance judgments, with an explicit treatment
of documents whose scores tie.

  oblivious  one total order per query (trec_eval's by default: score
             descending, then docno descending); see --tiebreak
  aware      the exact expected value over every ordering consistent with
             the scores (McSherry & Najork, ECIR 2008) -- the default
  sampled    mean, std and stderr over --samples random tie-breaking orders"""

_EPILOG = """\
measures: ir_measures names such as P@10, R@100, F1@10, AP, AP@100, RR, nDCG,
nDCG@10, nDCG(gain=exp)@10, Rprec, Success@5, Bpref; trec_eval names (P_10,
map, ndcg_cut_10, recip_rank ...) work too. Default:
{defaults}

output: "trec" prints one block per run -- a "runid all NAME" line, a "num_q
all N" line, the per-query rows (with -q), then the "all" rows (the mean over
queries) -- as "%-22s\\t%s\\t%.4f" lines; sampled mode prints the mean there.
"csv" and "json" hold run, qid, measure, value (sampled adds std, stderr) at
full precision.

examples:
  tiecore eval qrels.txt run1.gz run2.gz -m P@10,AP --ties aware -q
  tiecore eval qrels.txt run.txt --ties oblivious --tiebreak pessimistic
  tiecore eval --letor train.txt --features 128,129 -m nDCG@10 --format csv"""


class _UsageError(Exception):
    """A bad command line; printed as ``tiecore: error: ...`` with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


def _integer(text: str, least: int, problem: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{text!r}{problem}")
    return value


def _positive_int(text: str) -> int:
    return _integer(text, 1, " is not a positive integer")


def _sample_count(text: str) -> int:
    _positive_int(text)
    return _integer(text, 2, ": need at least 2 samples for a std")


def _non_negative_int(text: str) -> int:
    return _integer(text, 0, " is negative")


def _feature_list(text: str) -> list[int]:
    """Parse ``128,129`` or ``1-5,110`` into 1-based feature numbers, in order, unique."""
    features: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, dash, high = part.partition("-")
        try:
            first = int(low)
            last = int(high) if dash else first
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not a feature number or range such as 128 or 1-5"
            ) from None
        if first < 1 or last < first:
            raise argparse.ArgumentTypeError(f"{part!r} is not a range of 1-based features")
        features.extend(range(first, last + 1))
    if not features:
        raise argparse.ArgumentTypeError("no feature given")
    return list(dict.fromkeys(features))


def split_measures(texts: Sequence[str]) -> list[str]:
    """Split each ``-m`` value on commas that sit outside parentheses.

    >>> split_measures(["P@5,P@10", "nDCG(gain=exp)@10"])
    ['P@5', 'P@10', 'nDCG(gain=exp)@10']
    """
    names: list[str] = []
    for text in texts:
        names.extend(p.strip() for p in re.split(r",(?![^(]*\))", text) if p.strip())
    return names


def _version() -> str:
    try:
        return metadata.version("tiecore")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The ``tiecore`` argument parser: ``eval`` and ``compare``."""
    parser = _Parser(prog="tiecore", description="Tie-aware evaluation of ranking runs.")
    parser.add_argument("--version", action="version", version=f"tiecore {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    ev = commands.add_parser(
        "eval",
        help="evaluate runs against qrels (see tiecore eval --help)",
        usage=_USAGE,
        description=_DESCRIPTION,
        epilog=_EPILOG.format(
            defaults=textwrap.fill(
                ", ".join(DEFAULT_MEASURES), 78, initial_indent="  ", subsequent_indent="  "
            )
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_inputs(ev)
    ev.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="a measure or comma-separated measures; repeatable (default: see below)",
    )
    ev.add_argument(
        "--ties",
        choices=TIES,
        default="aware",
        help="how tied scores are treated (default: aware, the exact expectation)",
    )
    ev.add_argument(
        "--tiebreak",
        choices=TIEBREAKS,
        help="the order inside tie groups for --ties oblivious (default: trec_eval)",
    )
    ev.add_argument(
        "--samples",
        type=_sample_count,
        metavar="N",
        help=f"random orders per query for --ties sampled (default: {DEFAULT_SAMPLES})",
    )
    ev.add_argument(
        "--seed",
        type=_non_negative_int,
        default=0,
        metavar="S",
        help="random seed for --ties sampled and --tiebreak random (default: 0)",
    )
    ev.add_argument(
        "--spread",
        action="store_true",
        help="with --ties aware: add the exact variance over random tie-breaks and the "
        "min and max over all orderings (columns var, min, max in csv and json)",
    )
    ev.add_argument("-q", "--per-query", action="store_true", help="also print one row per query")
    ev.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="average over every qrels query; queries missing from a run score 0",
    )
    _add_options(ev, FORMATS)
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print one progress line per run on stderr (default: when stderr is a terminal)",
    )
    ev.set_defaults(handler=_run_eval)

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
    _add_inputs(cmp)
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
        type=_sample_count,
        default=200,
        metavar="N",
        help="random tie-breaks per run (default: 200)",
    )
    cmp.add_argument(
        "--seed", type=_non_negative_int, default=0, metavar="S", help="random seed (default: 0)"
    )
    cmp.add_argument(
        "--resamples",
        type=_positive_int,
        default=2000,
        metavar="N",
        help="sign flips of the paired randomization test; all 2^queries of them when "
        "that is fewer (default: 2000)",
    )
    cmp.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="average over every qrels query; queries missing from a run score 0",
    )
    cmp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print one progress line per run on stderr (default: when stderr is a terminal)",
    )
    _add_options(cmp, ("text", "csv", "json"))
    cmp.set_defaults(handler=_run_compare)
    return parser


def _add_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """-M, -l, --format (the first of ``formats`` by default) and -o."""
    parser.add_argument(
        "-M", "--depth", type=_positive_int, metavar="N", help="cut every ranking at N docs"
    )
    parser.add_argument(
        "-l",
        "--rel-level",
        type=int,
        default=1,
        metavar="LEVEL",
        help="lowest qrels level that counts as relevant (default: 1)",
    )
    parser.add_argument(
        "--format",
        choices=formats,
        default=formats[0],
        help=f"output format (default: {formats[0]})",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    """QRELS RUN ... or --letor FILE [--features LIST]."""
    parser.add_argument(
        "files",
        nargs="*",
        metavar="QRELS RUN",
        help="the qrels file, then one or more TREC run files (plain or .gz)",
    )
    parser.add_argument(
        "--letor",
        metavar="FILE",
        help="read runs and qrels from one LETOR/svmlight file instead of QRELS RUN",
    )
    parser.add_argument(
        "--features",
        type=_feature_list,
        metavar="LIST",
        help="with --letor: the 1-based features to evaluate as runs, e.g. 128,129 or 1-5 "
        "(default: all)",
    )


def _check_files(args: argparse.Namespace) -> None:
    """Reject impossible combinations and missing files before reading anything."""
    if args.letor is not None:
        if args.files:
            raise _UsageError("give either QRELS RUN ... or --letor FILE, not both")
        paths = [args.letor]
    else:
        if args.features is not None:
            raise _UsageError("--features only applies to --letor")
        if len(args.files) < 2:
            raise _UsageError("expected QRELS and at least one RUN file (or --letor FILE)")
        paths = args.files
    if args.output is not None and not Path(args.output).resolve().parent.is_dir():
        raise InputError(args.output, None, "its directory does not exist", "a writable path")
    for path in paths:
        if not Path(path).is_file():
            problem = "is a directory" if Path(path).is_dir() else "no such file"
            raise InputError(path, None, problem, "a readable file")


def _warn_unused(args: argparse.Namespace) -> None:
    if args.spread and args.ties != "aware":
        raise _UsageError("--spread goes with --ties aware")
    if args.tiebreak is not None and args.ties != "oblivious":
        warnings.warn(
            f"--tiebreak {args.tiebreak} is ignored with --ties {args.ties}", stacklevel=2
        )
    if args.samples is not None and args.ties != "sampled":
        warnings.warn(f"--samples is ignored with --ties {args.ties}", stacklevel=2)


def evaluate_runs(
    runs: dict[str, pd.DataFrame],
    qrels: pd.DataFrame,
    measures: list[Measure],
    *,
    progress: Callable[[int, int, str, float], None] | None = None,
    sources: dict[str, str] | None = None,
    spread: bool = False,
    **options: object,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Evaluate all runs per query in one call, and count each run's queries.

    Returns the tidy result (per-query rows and the ``all`` rows, ordered by
    run, then query with ``all`` last, then measure as requested) and
    ``num_q`` per run: the number of queries the ``all`` row averages over
    (trec_eval's ``num_q``).  ``spread`` evaluates with
    :func:`tiecore.spread.evaluate_spread` (aware mode with var, min, max).
    ``sources`` maps run names to their files, so that an error about a run
    names its file; ``progress(done, total, name, seconds)`` follows each run.
    """
    from tiecore import evaluate

    if spread:
        from tiecore.spread import evaluate_spread

        evaluate = partial(evaluate_spread, **_only(options, "rel_level", "depth", "complete"))
        options = {}
    clock = [time.perf_counter()]

    def report(done: int, total: int, name: str) -> None:
        now = time.perf_counter()
        progress(done, total, name, now - clock[0])
        clock[0] = now

    try:
        result = evaluate(
            runs, qrels, measures, per_query=True, progress=report if progress else None, **options
        )
    except InputError as error:
        names = {f"run {name}": name for name in runs}
        name = names.get(error.source)
        if sources is None or name not in sources:
            raise
        where = f"{sources[name]} (run {name})"
        raise InputError(where, error.line, error.problem, error.expected) from None
    queries = result.loc[result["qid"] != "all"].groupby("run", sort=False)["qid"].nunique()
    num_q = {name: int(queries.get(name, 0)) for name in runs}
    run_rank = result["run"].astype(str).map({name: i for i, name in enumerate(runs)})
    pair_rank = pd.factorize(result["run"].astype(str) + "\0" + result["qid"].astype(str))[0]
    measure_rank = result["measure"].astype(str).map({str(m): i for i, m in enumerate(measures)})
    # Run order as given; in a run, queries in evaluate's order with "all" last; then the
    # measures in the order asked for.
    order = np.lexsort((measure_rank, pair_rank, result["qid"] == "all", run_rank))
    result = result.iloc[order].reset_index(drop=True)
    return result, num_q


def _only(options: dict, *names: str) -> dict:
    return {name: options[name] for name in names}


def format_trec(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """trec_eval-like text: per run a ``runid`` and a ``num_q`` line, then the rows."""
    lines: list[str] = []
    for run, block in result.groupby("run", sort=False):
        lines.append(f"{'runid':<22}\tall\t{run}")
        lines.append(f"{'num_q':<22}\tall\t{num_q[str(run)]}")
        lines.extend(
            f"{measure:<22}\t{qid}\t{value:.4f}"
            for measure, qid, value in zip(
                block["measure"].astype(str).tolist(),
                block["qid"].astype(str).tolist(),
                block["value"].tolist(),
                strict=True,
            )
        )
    return "".join(line + "\n" for line in lines)


def _columns(result: pd.DataFrame) -> list[str]:
    extra = [c for c in ("std", "stderr", "var", "min", "max") if c in result.columns]
    return ["run", "qid", "measure", "value", *extra]


def _records(result: pd.DataFrame) -> list[dict[str, object]]:
    """Rows as plain Python values (floats keep full precision); NaN becomes None."""
    columns = _columns(result)
    data = {
        c: result[c].astype(str).tolist()
        if c in ("run", "qid", "measure")
        else result[c].astype(float).tolist()
        for c in columns
    }
    return [
        {
            c: (None if isinstance(v, float) and math.isnan(v) else v)
            for c, v in zip(columns, row, strict=True)
        }
        for row in zip(*(data[c] for c in columns), strict=True)
    ]


def format_csv(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """CSV with a header; floats are written with ``repr`` so they read back exactly."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = _columns(result)
    writer.writerow(columns)
    writer.writerows(
        ["" if v is None else repr(v) if isinstance(v, float) else v for v in record.values()]
        for record in _records(result)
    )
    return buffer.getvalue()


def format_json(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """A JSON list of records, one per line; floats read back exactly."""
    records = _records(result)
    return "[\n" + ",\n".join(json.dumps(r) for r in records) + ("\n]\n" if records else "]\n")


_FORMATTERS: dict[str, Callable[[pd.DataFrame, dict[str, int]], str]] = {
    "trec": format_trec,
    "csv": format_csv,
    "json": format_json,
}


def _read_inputs(args: argparse.Namespace) -> tuple[dict, pd.DataFrame, dict[str, str]]:
    """Runs, qrels and each run's source file, from QRELS RUN ... or --letor."""
    import tiecore

    _check_files(args)
    if args.letor is not None:
        runs, qrels = tiecore.read_letor(args.letor, features=args.features)
    else:
        qrels = tiecore.read_qrels(args.files[0])
        runs = tiecore.read_runs(args.files[1:])
    fallback = args.letor or "run file"
    sources = {name: str(run.attrs.get("source") or fallback) for name, run in runs.items()}
    return runs, qrels, sources


def _run_compare(args: argparse.Namespace, stderr: TextIO) -> str:
    """Rank the runs under every tie treatment; returns the text to write."""
    import time

    from tiecore.compare import TooLarge, compare, format_comparison

    measures = parse_measures(split_measures(args.measures or ["AP"]))
    if len(measures) != 1:
        raise _UsageError("compare takes one measure")
    runs, qrels, _ = _read_inputs(args)
    if len(runs) < 2:
        raise _UsageError("compare needs at least two runs (or two --features)")
    show = args.progress if args.progress is not None else stderr.isatty()
    clock = [time.perf_counter()]

    def progress(done: int, total: int, label: str) -> None:
        now = time.perf_counter()
        print(f"tiecore: [{done}/{total}] {label} ({now - clock[0]:.2f}s)", file=stderr, flush=True)
        clock[0] = now

    try:
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
        )
    except TooLarge as error:
        raise _UsageError(f"--samples: {error}") from None
    return format_comparison(comparison, args.format)


def _run_eval(args: argparse.Namespace, stderr: TextIO) -> str:
    """Read, evaluate and format; returns the text to write."""

    measures = parse_measures(split_measures(args.measures or []) or list(DEFAULT_MEASURES))
    _warn_unused(args)
    runs, qrels, sources = _read_inputs(args)
    show = args.progress if args.progress is not None else stderr.isatty()

    def progress(index: int, total: int, name: str, seconds: float) -> None:
        print(f"tiecore: [{index}/{total}] {name} ({seconds:.2f}s)", file=stderr, flush=True)

    result, num_q = evaluate_runs(
        runs,
        qrels,
        measures,
        progress=progress if show else None,
        sources=sources,
        ties=args.ties,
        tiebreak=args.tiebreak or "trec_eval",
        samples=args.samples or DEFAULT_SAMPLES,
        seed=args.seed,
        rel_level=args.rel_level,
        depth=args.depth,
        complete=args.complete,
        spread=args.spread,
    )
    if not args.per_query:
        result = result[result["qid"] == "all"].reset_index(drop=True)
    return _FORMATTERS[args.format](result, num_q)


def _one_line(message: object) -> str:
    return " ".join(str(message).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input or options).

    Warnings (for example run queries missing from the qrels) are printed as
    ``tiecore: warning: ...`` lines on stderr, each distinct message once.
    """
    stdout, stderr = sys.stdout, sys.stderr
    seen: set[str] = set()

    def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
        text = _one_line(message)
        if text not in seen:
            seen.add(text)
            print(f"tiecore: warning: {text}", file=stderr, flush=True)

    def fail(message: object) -> int:
        print(f"tiecore: error: {_one_line(message)}", file=stderr, flush=True)
        return EXIT_USAGE

    try:
        args = build_parser().parse_args(argv)
    except _UsageError as error:
        return fail(error)
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else 0

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show_warning
        try:
            text = args.handler(args, stderr)
        except (InputError, _UsageError) as error:
            return fail(error)
        except UnicodeDecodeError as error:
            return fail(f"cannot decode input as text: {error}")
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            return fail(f"{where}{error.strerror or error}")

    try:
        if args.output is None:
            stdout.write(text)
            stdout.flush()
        else:
            Path(args.output).write_text(text, encoding="utf-8")
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, without a second error at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        except (OSError, ValueError):  # not a real file (io.UnsupportedOperation is both)
            pass
        return 1
    except OSError as error:
        return fail(f"{args.output}: {error.strerror or error}")
    return 0

"""The ``tiecore`` command line: evaluate run files and print trec_eval-like tables.

``tiecore eval QRELS RUN [RUN ...] -m P@10 --ties aware`` reads the files with
:func:`tiecore.read_qrels` / :func:`tiecore.read_runs` (or a LETOR file with
:func:`tiecore.read_letor`), calls :func:`tiecore.evaluate` once per run and prints
the result as trec_eval-style lines, CSV or JSON. Bad input never ends in a
traceback: it prints ``tiecore: error: <message>`` on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import glob
import io
import json
import math
import os
import re
import stat
import sys
import textwrap
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from tiecore.errors import InputError
from tiecore.measures import DEFAULT_MEASURES, Measure, parse_measures, split_measures
from tiecore.options import (
    CI_METHODS,
    COMPARE_FORMATS,
    CONFIDENCE,
    CORRECTIONS,
    DASK_SPEC,
    DEPTH,
    EVAL_FORMATS,
    MODES,
    POSITIVE,
    REL_LEVEL,
    SAMPLES,
    SEED,
    TIEBREAKS,
    ZERO_METHODS,
    cli_type,
)

if TYPE_CHECKING:  # pandas loads only when a command needs it (tiecore.evaluation.small: start-up)
    import pandas as pd

#: Exit status for bad input or bad options (argparse's own convention).
EXIT_USAGE = 2

#: The tie modes, as tiecore.options declares them (it loads neither numpy nor pandas).
TIES = MODES
FORMATS = EVAL_FORMATS
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
map, ndcg_cut_10, recip_rank ...) work too; -m all_trec prints trec_eval's
-m all_trec listing (its names and layout) for the measures tiecore has. Default:
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


#: Option values parsed and checked as tiecore.options declares them for the API
#: (argparse prints the API's text after "argument --NAME:").
_positive_int = cli_type(POSITIVE)
_sample_count = cli_type(SAMPLES)
_non_negative_int = cli_type(SEED)


#: The most features one --features list may name (each becomes a run).
MAX_FEATURES = 100_000
_FEATURE_PART = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def _feature_list(text: str) -> list[int]:
    """Parse ``128,129`` or ``1-5,110`` into 1-based feature numbers, in order, unique.

    Linear in the number of features named; a reversed range, a number past
    ``2**63 - 1`` or more than :data:`MAX_FEATURES` features is refused before any
    list is built.

    >>> _feature_list("3, 1-2,2")
    [3, 1, 2]
    """
    parts: list[tuple[int, int]] = []
    total = 0
    for part in text.split(","):
        if not part.strip():
            continue
        match = _FEATURE_PART.fullmatch(part)
        if match is None:
            raise argparse.ArgumentTypeError(
                f"{part.strip()!r} is not a feature number or range such as 128 or 1-5"
            )
        digits = [d for d in match.groups() if d is not None]
        if any(len(d.lstrip("0")) > 19 or int(d) >= 2**63 for d in digits):
            raise argparse.ArgumentTypeError(f"{part.strip()!r}: feature number too large")
        first, last = int(digits[0]), int(digits[-1])
        if first < 1:
            raise argparse.ArgumentTypeError(f"{part.strip()!r}: features are numbered from 1")
        if last < first:
            raise argparse.ArgumentTypeError(
                f"{part.strip()!r} is a reversed range (expected low-high, e.g. {last}-{first})"
            )
        total += last - first + 1
        if total > MAX_FEATURES:
            raise argparse.ArgumentTypeError(
                f"{text.strip()!r} names more than {MAX_FEATURES} features "
                "(each feature is evaluated as one run)"
            )
        parts.append((first, last))
    if not parts:
        raise argparse.ArgumentTypeError("no feature given")
    features = np.concatenate([np.arange(a, b + 1, dtype=np.int64) for a, b in parts])
    return list(dict.fromkeys(features.tolist()))


def _version() -> str:
    from importlib import metadata  # 20-50 ms of imports: only for --version

    try:
        return metadata.version("tiecore")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """``--version``: looks the version up only when asked."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"tiecore {_version()}", file=sys.stdout, flush=True)
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``tiecore`` argument parser: ``eval``, ``compare`` and ``report``.

    ``only="eval"`` builds the ``eval`` command alone (the same parser for a command
    line that starts with ``eval``), without importing what the others need.
    """
    parser = _Parser(prog="tiecore", description="Tie-aware evaluation of ranking runs.")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
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
    _add_dask(ev)
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print one progress line per run on stderr (default: when stderr is a terminal)",
    )
    ev.set_defaults(handler=_run_eval)
    if only == "eval":
        return parser

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
    _add_review_options(cmp)
    _add_options(cmp, COMPARE_FORMATS)
    _add_dask(cmp)
    cmp.set_defaults(handler=_run_compare)
    from tiecore.report import add_command  # tiecore report: the three-modes table

    add_command(commands, _add_inputs, _add_options, _read_inputs)
    return parser


#: ``local:N`` with N >= 1, or a scheduler address (tiecore.distributed.connect's spec).
_dask_spec = cli_type(DASK_SPEC)


@contextlib.contextmanager
def _dask_client(spec: str | None) -> Iterator[object]:
    """:func:`tiecore.distributed.connect`, with a missing dask as a usage error."""
    if spec is None:
        yield None
        return
    from tiecore.distributed import connect

    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(connect(spec))
        except ImportError as error:
            raise _UsageError(f"--dask: {error}") from None
        yield client


def _add_dask(parser: argparse.ArgumentParser) -> None:
    """--dask ADDRESS | local:N (tiecore.distributed.connect)."""
    parser.add_argument(
        "--dask",
        type=_dask_spec,
        metavar="ADDRESS",
        help="run on a dask.distributed cluster: a scheduler address (tcp://host:8786), or "
        "local:N to start N local worker processes; needs pip install 'dask[distributed]'",
    )


def _add_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """-M, -l, --format (the first of ``formats`` by default) and -o."""
    parser.add_argument(
        "-M", "--depth", type=cli_type(DEPTH), metavar="N", help="cut every ranking at N docs"
    )
    parser.add_argument(
        "-l",
        "--rel-level",
        type=cli_type(REL_LEVEL),
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
        help="the qrels file, then one or more run files: TREC text (plain or .gz), "
        ".parquet or .jsonl (columns qid, docno, score / level); '-' reads one from stdin",
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
    """Reject impossible combinations, missing inputs and an unwritable ``-o`` before reading.

    An input may be any readable non-directory path: a file, ``/dev/null``, a FIFO or
    ``<(zcat run.gz)``; the loaders read it once, front to back.
    """
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
    if args.output is not None:
        _check_output(args.output, paths)
    if paths.count("-") > 1:
        raise _UsageError("at most one input may be '-' (stdin)")
    for path in paths:
        if path == "-":  # stdin: TREC text, JSON Lines or Parquet (tiecore.io.sources)
            continue
        if os.path.isdir(path):
            parts = os.path.join(path, "*.parquet")
            found = glob.glob(os.path.join(glob.escape(path), "*.parquet"))
            hint = f"; for its Parquet runs, {parts}" if found else ""
            raise InputError(path, None, "is a directory", f"a readable file{hint}")
        if not os.path.exists(path):
            raise InputError(path, None, "no such file", "a readable file")
        if not os.access(path, os.R_OK):
            raise InputError(path, None, "permission denied", "a readable file")


def _check_output(path: str, inputs: Sequence[str] = ()) -> None:
    """``-o PATH`` must name a file (new or writable) in an existing, writable directory,
    and none of the ``inputs``: writing the results there would destroy an input (a link
    to one, or another name for it, is the same file)."""
    if os.path.isdir(path):
        raise InputError(path, None, "is a directory", "-o FILE, a file to write")
    for source in inputs:
        if source != "-" and os.path.exists(path) and os.path.exists(source):
            if os.path.samefile(path, source):
                raise InputError(
                    path,
                    None,
                    f"is the input {source}: writing there would destroy it",
                    "-o FILE, a file that is none of the inputs",
                )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(path, None, f"its directory {folder} does not exist", "a writable path")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise InputError(path, None, "is not writable", "a writable path")
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(path, None, f"its directory {folder} is not writable", "a writable path")


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
    runs: dict[str, pd.DataFrame] | Sequence[str],
    qrels: pd.DataFrame,
    measures: list[Measure],
    *,
    progress: Callable[[int, int, str, float], None] | None = None,
    sources: dict[str, str] | None = None,
    spread: bool = False,
    client: object = None,
    **options: object,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Evaluate all runs per query in one call, and count each run's queries.

    ``runs`` is a mapping of names to runs or a list of run files, which are read
    one at a time (memory bounded by two runs) or, with a dask ``client``,
    by the workers.

    Returns the tidy result (per-query rows and the summary rows -- the mean
    over queries, whose ``qid`` is None so that no query id, not even ``all``,
    can be mistaken for it -- ordered by run, then query with the summary
    last, then measure as requested) and
    ``num_q`` per run: the number of queries the ``all`` row averages over
    (trec_eval's ``num_q``).  ``spread`` evaluates with
    :func:`tiecore.spread.evaluate_spread` (aware mode with var, min, max).
    ``sources`` maps run names to their files, so that an error about a run
    names its file; ``progress(done, total, name, seconds)`` follows each run.
    """
    import pandas as pd

    from tiecore import evaluate

    if spread:
        from tiecore.spread import evaluate_spread

        evaluate = partial(evaluate_spread, **_only(options, "rel_level", "depth", "complete"))
        options = {}
    options["client"] = client
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
    # codes in order of first appearance (evaluate keeps the runs' order); a summary
    # row's qid is missing: code -1
    run_rank, names = pd.factorize(result["run"])
    names = [str(name) for name in names]
    qid_code = pd.factorize(result["qid"])[0].astype(np.int64)
    summary = qid_code < 0
    pairs = run_rank * (int(qid_code.max(initial=-1)) + 2) + (qid_code + 1)
    pair_rank = pd.factorize(pairs)[0]
    queries = np.unique(pairs[~summary]) // (int(qid_code.max(initial=-1)) + 2)
    counts = np.bincount(queries, minlength=len(names))
    num_q = {name: int(count) for name, count in zip(names, counts, strict=True)}
    measure_code, labels = pd.factorize(result["measure"])
    rank = {str(m): i for i, m in enumerate(measures)}
    measure_rank = np.array([rank[str(label)] for label in labels], np.int64)[measure_code]
    # Run order as given; in a run, queries in evaluate's order with "all" last; then the
    # measures in the order asked for.
    order = np.lexsort((measure_rank, pair_rank, summary, run_rank))
    result = result.iloc[order].reset_index(drop=True)
    return result, num_q


@contextlib.contextmanager
def _samples_guard() -> Iterator[None]:
    """The sampled-mode memory guard, met while runs are read one by one, as a usage error."""
    try:
        yield
    except ValueError as error:
        if isinstance(error, InputError) or not str(error).startswith("samples "):
            raise
        raise _UsageError(f"--{error}") from None


def _eval_inputs(args: argparse.Namespace) -> tuple[object, pd.DataFrame, dict[str, str] | None]:
    """Runs, qrels and sources for ``eval`` and ``compare``: run files stay paths, read
    one at a time."""
    if args.letor is not None:
        return _read_inputs(args)
    import tiecore

    _check_files(args)
    if "-" in args.files[1:]:  # a run on stdin is read with the others, named as read_runs does
        return _read_inputs(args)
    return list(args.files[1:]), tiecore.read_qrels(args.files[0]), None


def _only(options: dict, *names: str) -> dict:
    return {name: options[name] for name in names}


def format_trec(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """trec_eval-like text: per run a ``runid`` and a ``num_q`` line, then the rows.

    The summary rows (qid None) are labelled ``all``, as trec_eval labels them; a
    query really named ``all`` among the rows would be mistaken for them, so it
    raises ``ValueError``.
    """
    return trec_text(_plain_columns(result), num_q)


def trec_text(columns: dict[str, list], num_q: dict[str, int]) -> str:
    """:func:`format_trec` of plain columns (``qid`` None on summary rows)."""
    if "all" in columns["qid"]:
        raise ValueError(
            "a query is named 'all', the name trec format gives the summary rows "
            "(expected --format csv or json, whose summary rows have no qid, or no -q)"
        )
    blocks: dict[str, list[int]] = {}
    for i, run in enumerate(columns["run"]):
        blocks.setdefault(run, []).append(i)
    measure, qid, value = columns["measure"], columns["qid"], columns["value"]
    lines: list[str] = []
    for run, rows in blocks.items():
        lines.append(f"{'runid':<22}\tall\t{run}")
        lines.append(f"{'num_q':<22}\tall\t{num_q[run]}")
        lines.extend(
            f"{measure[i]:<22}\t{'all' if qid[i] is None else qid[i]}\t{value[i]:.4f}" for i in rows
        )
    return "".join(line + "\n" for line in lines)


def _columns(result: pd.DataFrame) -> list[str]:
    extra = [c for c in ("std", "stderr", "var", "min", "max") if c in result.columns]
    return ["run", "qid", "measure", "value", *extra]


def _plain_columns(result: pd.DataFrame) -> dict[str, list]:
    """The output columns as plain Python lists: str run and measure, qid str or None
    (a summary row), floats at full precision."""
    return {
        c: result[c].astype(str).tolist()
        if c in ("run", "measure")
        else [None if q is None else str(q) for q in result[c].to_numpy(object, na_value=None)]
        if c == "qid"
        else result[c].astype(float).tolist()
        for c in _columns(result)
    }


def _records(columns: dict[str, list]) -> list[dict[str, object]]:
    """Rows of plain columns as dicts; NaN becomes None (so is a summary row's qid)."""
    names = list(columns)
    return [
        {
            c: (None if isinstance(v, float) and math.isnan(v) else v)
            for c, v in zip(names, row, strict=True)
        }
        for row in zip(*columns.values(), strict=True)
    ]


def format_csv(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """CSV with a header; floats are written with ``repr`` so they read back exactly.

    A summary row (the mean over queries) has an empty qid, which no query id can be.
    """
    return csv_text(_plain_columns(result), num_q)


def csv_text(columns: dict[str, list], num_q: dict[str, int]) -> str:
    """:func:`format_csv` of plain columns."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(columns))
    writer.writerows(
        ["" if v is None else repr(v) if isinstance(v, float) else v for v in record.values()]
        for record in _records(columns)
    )
    return buffer.getvalue()


def format_json(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """A JSON list of records, one per line; floats read back exactly.

    A summary row (the mean over queries) has ``"qid": null``.
    """
    return json_text(_plain_columns(result), num_q)


def json_text(columns: dict[str, list], num_q: dict[str, int]) -> str:
    """:func:`format_json` of plain columns."""
    records = _records(columns)
    return "[\n" + ",\n".join(json.dumps(r) for r in records) + ("\n]\n" if records else "]\n")


#: trec_eval's measure names (``-m`` takes ``P.5``; trec_eval prints ``P_5``).
_TREC_NAME = re.compile(
    r"(map|gm_map|Rprec|bpref|recip_rank|ndcg|infAP|P|recall|ndcg_cut|map_cut|success|"
    r"iprec_at_recall|Rprec_mult|set_P|set_recall|set_F)([._][0-9.]+)?"
)


def trec_names(typed: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """tiecore's name -> the name to print, for the measures typed with trec_eval's names.

    A measure asked for as trec_eval names it (``map``, ``P.5``, ``ndcg_cut.10``) is
    printed as trec_eval prints it (``map``, ``P_5``, ``ndcg_cut_10``), so scripts that
    parse trec_eval's output keep working; tiecore's names (``P@5``) stay as they are.

    >>> trec_names(["map", "P.5", "nDCG@10", "ndcg_cut_20"], ["AP", "P@5", "nDCG@10", "nDCG@20"])
    {'AP': 'map', 'P@5': 'P_5', 'nDCG@20': 'ndcg_cut_20'}
    """
    printed: dict[str, str] = {}
    for text, name in zip(typed, names, strict=True):
        if name != "all_trec" and name not in printed:  # the first spelling of a measure
            trec = _TREC_NAME.fullmatch(text) and text != name
            printed[name] = re.sub(r"\.", "_", text, count=1) if trec else name
    return {k: v for k, v in printed.items() if k != v}


def _text(args: argparse.Namespace, columns: dict[str, list], num_q: dict[str, int]) -> str:
    """The output text of ``eval``: measures under the names typed (:func:`trec_names`);
    csv and json name the mode in columns ``ties`` and ``tiebreak`` (the oblivious
    ordering; empty for aware and sampled, which average over orderings); trec format
    stays trec_eval's."""
    printed = getattr(args, "printed", None) or {}
    if printed:
        columns = {**columns, "measure": [printed.get(m, m) for m in columns["measure"]]}
    if args.format != "trec":
        rows = len(columns["run"])
        tiebreak = (args.tiebreak or "trec_eval") if args.ties == "oblivious" else None
        columns = {**columns, "ties": [args.ties] * rows, "tiebreak": [tiebreak] * rows}
    return _TEXTS[args.format](columns, num_q)


_FORMATTERS: dict[str, Callable[[pd.DataFrame, dict[str, int]], str]] = {
    "trec": format_trec,
    "csv": format_csv,
    "json": format_json,
}
#: The same, of plain columns (tiecore.evaluation.small's rows).
_TEXTS: dict[str, Callable[[dict[str, list], dict[str, int]], str]] = {
    "trec": trec_text,
    "csv": csv_text,
    "json": json_text,
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
        type=_positive_int,
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
    import time

    from tiecore.compare import TooLarge, compare
    from tiecore.report.comparison import format_comparison

    measures = parse_measures(split_measures(args.measures or ["AP"]))
    if len(measures) != 1:
        raise _UsageError("compare takes one measure")
    runs, qrels, _ = _eval_inputs(args)  # run files are read one at a time, as scored
    if len(runs) < 2:
        raise _UsageError("compare needs at least two runs (or two --features)")
    show = args.progress if args.progress is not None else stderr.isatty()
    clock = [time.perf_counter()]

    def progress(done: int, total: int, label: str) -> None:
        now = time.perf_counter()
        _progress_line(done, total, label, now - clock[0], stderr)
        clock[0] = now

    try:
        with _dask_client(args.dask) as client:
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
        raise _UsageError(f"--samples: {error}") from None
    except InputError as error:
        if error.source != "baseline":
            raise
        raise _UsageError(f"--baseline: {error.problem} (expected {error.expected})") from None
    return format_comparison(comparison, args.format)


def _run_eval(args: argparse.Namespace, stderr: TextIO) -> str:
    """Read, evaluate and format; returns the text to write."""

    from tiecore.interop import expand_all_trec, measure_name

    names = split_measures(args.measures or [])  # -m '' names none: refused, not the defaults
    names = names if args.measures else list(DEFAULT_MEASURES)
    typed = names
    names = [n if n == "all_trec" else measure_name(n, rel_level=args.rel_level) for n in names]
    args.printed = trec_names(typed, names)  # trec_eval's names out when they came in
    names, all_trec = expand_all_trec(names)  # -m all_trec: trec_eval's listing
    measures = parse_measures(names)
    if all_trec is not None and (args.ties == "aware" or args.spread):
        measures = _without_inexact(measures, all_trec, stderr)
    _warn_unused(args)
    small = _small_eval(args, measures, stderr) if all_trec is None else None
    if small is not None:
        return small
    arrow = _arrow_eval(args, measures, stderr) if all_trec is None else None
    if arrow is not None:
        return arrow
    runs, qrels, sources = _eval_inputs(args) if all_trec is None else _all_trec_inputs(args)
    if args.ties == "sampled":  # refuse a count that cannot fit before the long work
        _check_sample_count(args.samples or DEFAULT_SAMPLES, runs, qrels, measures)
    show = args.progress if args.progress is not None else stderr.isatty()

    def progress(index: int, total: int, name: str, seconds: float) -> None:
        _progress_line(index, total, name, seconds, stderr)

    with _dask_client(args.dask) as client, _samples_guard():
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
            client=client,
        )
        listing = all_trec is not None and args.format == "trec"  # trec_eval's counts too
        counts = _all_trec_counts(runs, qrels, args, client) if listing else None
    full = result
    if not args.per_query:
        result = result[result["qid"].isna()].reset_index(drop=True)
    elif args.format == "trec" and result["qid"].eq("all").any():
        raise InputError(
            args.letor or f"{args.files[0]} and the runs",
            None,
            "a query is named 'all', the name trec format gives the summary rows",
            "--format csv or json, whose summary rows have no qid, or no -q",
        )
    _check_finite(result, args.letor or args.files[0])
    if counts is not None:  # trec_eval's names and counts
        from tiecore.interop import format_all_trec

        return format_all_trec(full, counts, all_trec, per_query=args.per_query)
    return _text(args, _plain_columns(result), num_q)


def _all_trec_inputs(args: argparse.Namespace) -> tuple[object, pd.DataFrame, dict | None]:
    """``-m all_trec``'s inputs: run files stay paths, read one at a time twice (values,
    then trec_eval's counts), unless one cannot be read twice (stdin, a pipe): then every
    run is read once, up front."""
    if all(os.path.isfile(path) for path in args.files[1:]):
        return _eval_inputs(args)
    return _read_inputs(args)


def _all_trec_counts(runs: object, qrels: pd.DataFrame, args: argparse.Namespace, client) -> dict:
    """``num_ret``, ``num_rel``, ``num_rel_ret`` of each run (:func:`tiecore.interop.count_runs`),
    one run at a time; a file's warnings were printed when its values were computed."""
    from tiecore.interop import count_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return count_runs(runs, qrels, rel_level=args.rel_level, depth=args.depth, client=client)


def _without_pandas(args: argparse.Namespace) -> bool:
    """Whether ``eval``'s paths without pandas may take these arguments: TREC files in
    aware or oblivious mode (sampled mode keeps the normal path's memory guard)."""
    return not (
        args.letor is not None
        or args.spread
        or args.dask is not None
        or len(args.files) < 2
        or args.ties == "sampled"
    )


def _eval_options(args: argparse.Namespace) -> dict:
    """The evaluation options of ``eval`` that both pandas-free paths take, by keyword."""
    return {
        "ties": args.ties,
        "tiebreak": args.tiebreak or "trec_eval",
        "seed": args.seed,
        "rel_level": args.rel_level,
        "depth": args.depth,
        "complete": args.complete,
        "per_query": args.per_query,
    }


def _progress_line(done: int, total: int, name: str, seconds: float, stderr: TextIO) -> None:
    """``tiecore: [3/17] MU03rob01 (0.41s)``: one step of a command's progress on stderr."""
    print(f"tiecore: [{done}/{total}] {name} ({seconds:.2f}s)", file=stderr, flush=True)


def _small_eval(args: argparse.Namespace, measures: list, stderr: TextIO) -> str | None:
    """``eval`` on small TREC files without pandas or pyarrow (:mod:`tiecore.evaluation.small`): the
    text to write, or None when the normal path must read the inputs (for anything else,
    and for any problem: its messages are then the usual ones).

    Warnings and progress lines come out as the normal path prints them, in order.
    """
    if not _without_pandas(args):
        return None
    _check_files(args)  # the normal path's first check, with its messages
    from tiecore.evaluation import small as _small

    table = _small.evaluate_files(
        args.files[0],
        args.files[1:],
        measures,
        **_eval_options(args),
        trec=args.format == "trec",
    )
    if table is None:
        return None
    show = args.progress if args.progress is not None else stderr.isatty()
    for kind, event in table.events:
        if kind == "warning":
            warnings.warn_explicit(event.message, event.category, event.filename, event.lineno)
        elif show:
            _progress_line(*event, stderr)
    return _text(args, table.columns, table.num_q)


def _arrow_eval(args: argparse.Namespace, measures: list, stderr: TextIO) -> str | None:
    """``eval`` on TREC text files of any size without pandas (:mod:`tiecore.evaluation.arrow`,
    aware or oblivious, not ``--spread`` or dask): the text to write, or None for the
    normal path. Warnings, progress and errors are the normal path's, in its order."""
    if not _without_pandas(args):
        return None
    from tiecore.evaluation import arrow as _arrow_eval

    if not _arrow_eval.claimed(args.files):
        return None
    _check_files(args)
    show = args.progress if args.progress is not None else stderr.isatty()

    def progress(done: int, total: int, name: str, seconds: float) -> None:
        _progress_line(done, total, name, seconds, stderr)

    table = _arrow_eval.evaluate_files(
        args.files[0],
        args.files[1:],
        measures,
        **_eval_options(args),
        progress=progress if show else None,
    )
    columns = table.columns
    if args.per_query and args.format == "trec" and "all" in columns["qid"]:
        raise InputError(
            f"{args.files[0]} and the runs",
            None,
            "a query is named 'all', the name trec format gives the summary rows",
            "--format csv or json, whose summary rows have no qid, or no -q",
        )
    bad = [i for i, value in enumerate(columns["value"]) if not math.isfinite(value)]
    if bad:  # _check_finite's error
        i = bad[0]
        query = "the mean" if columns["qid"][i] is None else f"query {columns['qid'][i]}"
        raise InputError(
            args.files[0],
            None,
            f"value of {columns['measure'][i]} for run {columns['run'][i]}, {query}, is "
            f"{columns['value'][i]}: the computation overflowed",
            "qrels levels that keep every gain finite (2**level overflows above 1023)",
        )
    return _text(args, columns, table.num_q)


def _without_inexact(measures: list, printed: dict[str, str], stderr: TextIO) -> list:
    """``-m all_trec`` under aware or ``--spread``: leave out, with a note, the listing's
    measures that have no exact tie-aware value (gm_map, see tiecore.measures.gmap); ``printed``
    loses them too."""
    dropped = [m for m in measures if m.spec.aggregate == "geometric" and printed[str(m)] != str(m)]
    if dropped:
        names = ", ".join(printed.pop(str(m)) for m in dropped)
        print(
            f"tiecore: all_trec leaves out {names}: no exact tie-aware value "
            "(use --ties sampled or oblivious for it)",
            file=stderr,
        )
    return [m for m in measures if m not in dropped]


def _check_finite(result: pd.DataFrame, qrels: str) -> None:
    """Never print nan or inf: a value that overflowed is an error naming where it came from."""
    import pandas as pd

    for column in ("value", "std", "stderr", "var", "min", "max"):
        if column not in result:
            continue
        values = result[column].to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            row = result.iloc[int(bad[0])]
            query = "the mean" if pd.isna(row["qid"]) else f"query {row['qid']}"
            raise InputError(
                qrels,
                None,
                f"{column} of {row['measure']} for run {row['run']}, {query}, is "
                f"{values[bad[0]]}: the computation overflowed",
                "qrels levels that keep every gain finite (2**level overflows above 1023)",
            )


def _check_sample_count(
    samples: int, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, measures: list[Measure]
) -> None:
    """:func:`tiecore.evaluation.core.check_samples` for these inputs, as a usage error."""
    from tiecore.evaluation.core import check_samples

    if not isinstance(runs, dict):  # files: each is checked once read (_samples_guard)
        return
    rows = max((len(run) for run in runs.values()), default=0)
    try:
        check_samples(samples, int(qrels["qid"].nunique()), len(measures), rows, name="--samples")
    except ValueError as error:
        raise _UsageError(str(error)) from None


def _one_line(message: object) -> str:
    return " ".join(str(message).split())


#: Exit status after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130
#: Exit status when stdout's reader went away (128 + SIGPIPE), as shells report it.
EXIT_BROKEN_PIPE = 141


class _Stream:
    """A text stream whose writes never raise: once its reader is gone or it is closed
    (``2>&-``, ``| head``), what is written is dropped and ``broken`` is set."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.broken = stream is None

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):  # BrokenPipeError, EBADF, a closed file object
                self.broken = True
                _to_devnull(self.stream)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        try:
            return not self.broken and self.stream.isatty()
        except (OSError, ValueError):
            return False


def _to_devnull(stream: TextIO | None) -> None:
    """Point ``stream``'s descriptor at /dev/null, so that the flush at exit finds no
    broken pipe to complain about (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (io.UnsupportedOperation)
        pass


def _write_all(stream: TextIO, text: str) -> None:
    """Write ``text`` whole, or raise: a pipe whose reader leaves mid-write makes the
    buffered layer return a short count that ``TextIOWrapper.write`` drops silently, so
    the bytes go through the binary buffer until every one is taken."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # an in-memory stream
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    data = memoryview(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))
    while data:
        data = data[buffer.write(data) :]
    buffer.flush()


def _write_output(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a temporary file beside it,
    flushed to disk, then renamed over it (a rename within a directory is atomic), so an
    interrupted run or a full disk leaves no half-written output and the old file intact.
    A link is followed (its target is replaced); an existing non-regular file (a device
    such as /dev/null, a named pipe) is written in place, as it cannot be replaced."""
    import tempfile  # only for -o (its import pulls in random and shutil)

    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        Path(target).write_text(text, encoding="utf-8")
        return
    if mode is None:  # a new file gets the permissions open() would give it
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=os.path.dirname(target)
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    0 ok, 2 bad input or options (one ``tiecore: error: ...`` line on stderr), 130
    after Ctrl-C (one ``tiecore: interrupted`` line), 141 when stdout's reader went
    away (``| head``; nothing more is printed). Warnings (for example run queries
    missing from the qrels) are printed as ``tiecore: warning: ...`` lines on
    stderr, each distinct message once. A closed stderr never stops the work.
    """
    stderr = _Stream(sys.stderr)
    try:
        return _main(argv, stderr)
    except KeyboardInterrupt:
        print("tiecore: interrupted", file=stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None, stderr: _Stream) -> int:
    stdout = sys.stdout
    seen: set[str] = set()

    def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
        text = _one_line(message)
        if text not in seen:
            seen.add(text)
            print(f"tiecore: warning: {text}", file=stderr)

    def fail(message: object) -> int:
        print(f"tiecore: error: {_one_line(message)}", file=stderr)
        return EXIT_USAGE

    try:
        with contextlib.redirect_stderr(stderr):  # argparse prints --help errors there
            line = sys.argv[1:] if argv is None else list(argv)
            args = build_parser("eval" if line[:1] == ["eval"] else None).parse_args(line)
    except _UsageError as error:
        return fail(error)
    except SystemExit as done:  # --help and --version
        if stdout is None:
            return EXIT_BROKEN_PIPE
        return done.code if isinstance(done.code, int) else 0

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # a file left open by an interrupted read is the interpreter's business, not the user's
        warnings.simplefilter("ignore", ResourceWarning)
        warnings.showwarning = show_warning
        try:
            text = args.handler(args, stderr)
        except (InputError, _UsageError) as error:
            return fail(error)
        except UnicodeDecodeError as error:
            return fail(f"cannot decode input as text: {error}")
        except MemoryError:
            return fail("out of memory (try fewer runs, features or --samples)")
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            return fail(f"{where}{error.strerror or error}")

    try:
        if args.output is None:
            if stdout is None:  # started with stdout closed (>&-)
                return EXIT_BROKEN_PIPE
            _write_all(stdout, text)
        else:
            _write_output(args.output, text)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, without a second error at exit.
        _to_devnull(stdout)
        return EXIT_BROKEN_PIPE
    except OSError as error:
        return fail(f"{args.output}: {error.strerror or error}")
    return 0

"""What the ``tiecore`` subcommands share: inputs, common options, their checks.

Every command takes its inputs the same way (``QRELS RUN ...`` or ``--letor FILE
[--features LIST]``), the same ``-M``, ``-l``, ``--format``, ``-o``, ``--dask`` and
``--progress`` options, and reads its files through :func:`read_inputs` or
:func:`eval_inputs`.  A bad command line raises :class:`UsageError`, which
:func:`tiecore.cli.main.main` prints as one ``tiecore: error: ...`` line (exit 2).
Nothing here imports pandas: ``tiecore eval`` on small files starts without it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

import numpy as np

from tiecore import io  # its readers load pyarrow and pandas on first use
from tiecore.errors import InputError
from tiecore.options import DASK_SPEC, DEPTH, POSITIVE, REL_LEVEL, SAMPLES, SEED, cli_type

if TYPE_CHECKING:  # pandas loads only when a command needs it (start-up)
    import pandas as pd


#: The exit status of a command that printed what it could and refused the rest
#: (:class:`tiecore.errors.Refusal`, one line each on stderr).
EXIT_REFUSED = 3


class UsageError(Exception):
    """A bad command line; printed as ``tiecore: error: ...`` with exit status 2."""


#: Option values parsed and checked as tiecore.options declares them for the API
#: (argparse prints the API's text after "argument --NAME:").
positive_int = cli_type(POSITIVE)
sample_count = cli_type(SAMPLES)
seed_value = cli_type(SEED)


#: The most features one --features list may name (each becomes a run).
MAX_FEATURES = 100_000
#: One part of a --features list; compiled (and cached by :mod:`re`) on first use, by
#: --letor alone: compiling it costs every other command 0.1 ms of start-up.
_FEATURE_PART = r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?"


def feature_list(text: str) -> list[int]:
    """Parse ``128,129`` or ``1-5,110`` into 1-based feature numbers, in order, unique.

    Linear in the number of features named; a reversed range, a number past
    ``2**63 - 1`` or more than :data:`MAX_FEATURES` features is refused before any
    list is built.

    >>> feature_list("3, 1-2,2")
    [3, 1, 2]
    """
    part_pattern = re.compile(_FEATURE_PART)
    parts: list[tuple[int, int]] = []
    total = 0
    for part in text.split(","):
        if not part.strip():
            continue
        match = part_pattern.fullmatch(part)
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


#: ``local:N`` with N >= 1, or a scheduler address (tiecore.distributed.connect's spec).
_dask_spec = cli_type(DASK_SPEC)


@contextlib.contextmanager
def dask_client(spec: str | None) -> Iterator[object]:
    """:func:`tiecore.distributed.connect`, with a missing dask as a usage error."""
    if spec is None:
        yield None
        return
    from tiecore.distributed import connect  # lazy: --client only (~2 ms on tiecore eval)

    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(connect(spec))
        except ImportError as error:
            raise UsageError(f"--dask: {error}") from None
        yield client


def add_dask(parser: argparse.ArgumentParser) -> None:
    """--dask ADDRESS | local:N (tiecore.distributed.connect)."""
    parser.add_argument(
        "--dask",
        type=_dask_spec,
        metavar="ADDRESS",
        help="run on a dask.distributed cluster: a scheduler address (tcp://host:8786), or "
        "local:N to start N local worker processes; needs pip install 'dask[distributed]'",
    )


def add_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
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


def add_inputs(parser: argparse.ArgumentParser) -> None:
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
        type=feature_list,
        metavar="LIST",
        help="with --letor: the 1-based features to evaluate as runs, e.g. 128,129 or 1-5 "
        "(default: all)",
    )


def check_files(args: argparse.Namespace) -> None:
    """Reject impossible combinations, missing inputs and an unwritable ``-o`` before reading.

    An input may be any readable non-directory path: a file, ``/dev/null``, a FIFO or
    ``<(zcat run.gz)``; the loaders read it once, front to back.
    """
    if args.letor is not None:
        if args.files:
            raise UsageError("give either QRELS RUN ... or --letor FILE, not both")
        paths = [args.letor]
    else:
        if args.features is not None:
            raise UsageError("--features only applies to --letor")
        if len(args.files) < 2:
            raise UsageError("expected QRELS and at least one RUN file (or --letor FILE)")
        paths = args.files
    if args.output is not None:
        _check_output(args.output, paths)
    if paths.count("-") > 1:
        raise UsageError("at most one input may be '-' (stdin)")
    for path in paths:
        if path == "-":  # stdin: TREC text, JSON Lines or Parquet (tiecore.io.sources)
            continue
        if os.path.isdir(path):
            import glob  # lazy: for this message only (0.2 ms of every start-up)

            parts = os.path.join(path, "*.parquet")
            found = glob.glob(os.path.join(glob.escape(path), "*.parquet"))
            hint = f"; for its Parquet runs, {parts}" if found else ""
            raise InputError(path, None, "is a directory", f"a readable file{hint}")
        if not os.path.exists(path):
            raise InputError(path, None, "no such file", "a readable file")
        if not os.access(path, os.R_OK):
            raise InputError(path, None, "permission denied", "a readable file")


def _same_file(path: str, source: str) -> bool:
    """Whether ``source`` (``-``: the file on standard input, if it is one) is ``path``."""
    try:
        if source == "-":
            found, there = os.fstat(0), os.stat(path)
            return (found.st_dev, found.st_ino) == (there.st_dev, there.st_ino)
        return os.path.exists(source) and os.path.samefile(path, source)
    except OSError:  # no standard input, or nothing to compare
        return False


def _check_output(path: str, inputs: Sequence[str] = ()) -> None:
    """``-o PATH`` must name a file (new or writable) in an existing, writable directory,
    and none of the ``inputs``: writing the results there would destroy an input (a link
    to one, or another name for it, is the same file)."""
    if os.path.isdir(path):
        raise InputError(path, None, "is a directory", "-o FILE, a file to write")
    for source in inputs:
        if os.path.exists(path) and _same_file(path, source):
            shown = "the standard input's file" if source == "-" else f"the input {source}"
            raise InputError(
                path,
                None,
                f"is {shown}: writing there would destroy it",
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


def eval_inputs(args: argparse.Namespace) -> tuple[object, pd.DataFrame, dict[str, str] | None]:
    """Runs, qrels and sources for ``eval`` and ``compare``: run files stay paths, read
    one at a time."""
    if args.letor is not None:
        return read_inputs(args)
    check_files(args)
    if "-" in args.files[1:]:  # a run on stdin is read with the others, named as read_runs does
        return read_inputs(args)
    return list(args.files[1:]), io.read_qrels(args.files[0]), None


def read_inputs(args: argparse.Namespace) -> tuple[dict, pd.DataFrame, dict[str, str]]:
    """Runs, qrels and each run's source file, from QRELS RUN ... or --letor."""
    check_files(args)
    if args.letor is not None:
        runs, qrels = io.read_letor(args.letor, features=args.features)
    else:
        qrels = io.read_qrels(args.files[0])
        runs = io.read_runs(args.files[1:])
    fallback = args.letor or "run file"
    sources = {name: str(run.source or fallback) for name, run in runs.items()}
    return runs, qrels, sources


def progress_line(done: int, total: int, name: str, seconds: float, stderr: TextIO) -> None:
    """``tiecore: [3/17] MU03rob01 (0.41s)``: one step of a command's progress on stderr."""
    print(f"tiecore: [{done}/{total}] {name} ({seconds:.2f}s)", file=stderr, flush=True)


def show_progress(args: argparse.Namespace, stderr: TextIO) -> bool:
    """``--progress`` / ``--no-progress``, or by default whether stderr is a terminal."""
    return args.progress if args.progress is not None else stderr.isatty()


def add_complete(parser: argparse.ArgumentParser) -> None:
    """-c / --complete: every qrels query counts."""
    parser.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="average over every qrels query; queries missing from a run score 0",
    )


def add_progress(parser: argparse.ArgumentParser) -> None:
    """--progress / --no-progress."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print one progress line per run on stderr (default: when stderr is a terminal)",
    )


def check_sample_count(
    samples: int, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, measures: list
) -> None:
    """:func:`tiecore.evaluation.evaluator.check_samples` for these inputs, as a usage error."""
    from tiecore.evaluation.evaluator import check_samples  # lazy: ~8 ms on every command

    if not isinstance(runs, dict):  # files: each is checked once read (_samples_guard)
        return
    rows = max((len(run) for run in runs.values()), default=0)
    try:
        check_samples(samples, int(qrels["qid"].nunique()), len(measures), rows, name="--samples")
    except ValueError as error:
        raise UsageError(str(error)) from None

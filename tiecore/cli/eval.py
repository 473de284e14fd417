"""``tiecore eval``: evaluate run files and print trec_eval-like tables.

``tiecore eval QRELS RUN [RUN ...] -m P@10 --ties aware`` reads the files with
:func:`tiecore.read_qrels` / :func:`tiecore.read_runs` (or a LETOR file with
:func:`tiecore.read_letor`), evaluates every run and prints the result as
trec_eval-style lines, CSV or JSON.  Small TREC files take
:mod:`tiecore.evaluation.small` and larger ones :mod:`tiecore.evaluation.arrow`,
neither of which loads pandas; anything else the normal path (:func:`evaluate_runs`).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import textwrap
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, TextIO

import numpy as np

from tiecore import io
from tiecore.cli.all_trec import (
    all_trec_inputs,
    relevance_strings,
    without_inexact,
    without_strings,
)
from tiecore.cli.common import (
    EXIT_REFUSED,
    UsageError,
    add_complete,
    add_dask,
    add_inputs,
    add_options,
    add_progress,
    check_files,
    check_sample_count,
    dask_client,
    eval_inputs,
    progress_line,
    sample_count,
    seed_value,
    show_progress,
)
from tiecore.cli.trec_eval_flags import (
    add_trec_eval_flags,
    check_trec_eval_flags,
    with_docs,
    zscore_output,
)
from tiecore.cli.trec_eval_names import (
    TrecPlan,
    summed_counts,
    tiecore_layout_text,
    trec_eval_text,
    trec_plan,
)
from tiecore.errors import InputError, Refusal
from tiecore.measures import (
    DEFAULT_MEASURES,
    Measure,
    measure_name,
    parse_measures,
)
from tiecore.options import (
    EVAL_FORMATS,
    MODES,
    TIEBREAKS,
    TREC_EVAL_TIEBREAK,
    TREC_EVAL_VERSIONS,
)
from tiecore.report.formats import csv_text, json_text, plain_columns, trec_text

if TYPE_CHECKING:  # pandas loads only when a command needs it (tiecore.evaluation.small: start-up)
    import pandas as pd

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
nDCG@10, nDCG(gain=exp)@10, Rprec, Success@5, Bpref. trec_eval's -m flags mean
what they mean to trec_eval 9.0.x (10.0 with --trec-eval 10): P (P_5 ...
P_1000), P.5,10, ndcg_cut.10,20, map_cut, success, iprec_at_recall..25,.5,
official, set, all_trec ...; given only those, tiecore prints trec_eval's lines
(its order, counts, runid and num_q when asked for) for the measures tiecore has.
Default:
{defaults}

output: "trec" prints one block per run -- a "runid all NAME" line, a "num_q
all N" line, the per-query rows (with -q), then the "all" rows (the mean over
queries) -- as "%-22s\\t%s\\t%.4f" lines; sampled mode prints the mean there;
aware and sampled mode name themselves in a first "ties all MODE" line.
"csv" and "json" hold run, qid, measure, value (sampled adds std, stderr) at
full precision, and the mode (ties, tiebreak; sampled: samples, seed).

examples:
  tiecore eval qrels.txt run1.gz run2.gz -m P@10,AP --ties aware -q
  tiecore eval qrels.txt run.txt --ties oblivious --tiebreak pessimistic
  tiecore eval --letor train.txt --features 128,129 -m nDCG@10 --format csv"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``tiecore eval`` (:func:`tiecore.cli.main.build_parser`)."""
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
    add_inputs(ev)
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
        help="the order inside tie groups for --ties oblivious (default: trec_eval; "
        "trec_eval_double with --trec-eval 10)",
    )
    ev.add_argument(
        "--trec-eval",
        choices=TREC_EVAL_VERSIONS,
        metavar="VERSION",
        help="whose conventions trec_eval's -m names follow: 9 (trec_eval 9.0.8, the "
        "default) or 10 (trec_eval 10.0: recall levels rounded to nearest, scores tied as "
        "doubles, rbp, rbp_resid, unj, dcg; see docs/cli.md); given, no -m means trec_eval's "
        "default, -m official",
    )
    ev.add_argument(
        "--samples",
        type=sample_count,
        metavar="N",
        help=f"random orders per query for --ties sampled (default: {DEFAULT_SAMPLES})",
    )
    ev.add_argument(
        "--seed",
        type=seed_value,
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
    add_trec_eval_flags(ev)
    add_complete(ev)
    add_options(ev, FORMATS)
    add_dask(ev)
    add_progress(ev)
    ev.set_defaults(handler=_run_eval)


def _warn_unused(args: argparse.Namespace) -> None:
    if args.spread and args.ties != "aware":
        raise UsageError("--spread goes with --ties aware")
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

    from tiecore.evaluation.core import evaluate  # lazy: pandas (~0.5 s)

    if spread:
        from tiecore.spread import evaluate_spread  # lazy: pandas, scipy (~0.85 s)

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
        raise type(error)(where, error.line, error.problem, error.expected) from None
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
        raise UsageError(f"--{error}") from None


def _only(options: dict, *names: str) -> dict:
    return {name: options[name] for name in names}


def _text(args: argparse.Namespace, columns: dict[str, list], num_q: dict[str, int]) -> str:
    """The output text of ``eval``.

    A command line of trec_eval's names only prints trec_eval's lines in trec format
    (:func:`trec_eval_text`: its order, counts and ``runid`` / ``num_q`` where asked
    for).  Otherwise the measures come under the names typed (trec_eval's names
    included; those a nickname brought keep tiecore's in csv and json), a measure
    typed as trec_eval's count (``num_ret``) holds trec_eval's sum in the summary row,
    and trec format leaves out gm_map's per-query rows as trec_eval does.  csv and json
    name the mode in columns ``ties`` and ``tiebreak`` (the oblivious ordering; empty
    for aware and sampled, which average over orderings), and sampled mode's
    ``samples`` and ``seed``; trec format names aware and sampled mode in a first line of
    its own (:func:`mode_line`), and oblivious output stays trec_eval's, byte for byte.
    """
    return mode_line(args) + _rows_text(args, columns, num_q)


def mode_line(args: argparse.Namespace) -> str:
    r"""The first line of trec format outside oblivious mode, in trec_eval's layout: what
    made the numbers below, so that a tie-aware value is never read as trec_eval's.

    >>> mode_line(argparse.Namespace(format="trec", ties="aware", spread=False))
    'ties                  \tall\taware\n'
    >>> mode_line(argparse.Namespace(format="trec", ties="sampled", samples=None, seed=3))
    'ties                  \tall\tsampled(samples=1000,seed=3)\n'
    >>> mode_line(argparse.Namespace(format="trec", ties="oblivious"))
    ''
    """
    if args.format != "trec" or args.ties == "oblivious":
        return ""
    mode = args.ties
    if mode == "sampled":
        mode += f"(samples={args.samples or DEFAULT_SAMPLES},seed={args.seed})"
    return f"{'ties':<22}\tall\t{mode}\n"


def _rows_text(args: argparse.Namespace, columns: dict[str, list], num_q: dict[str, int]) -> str:
    """:func:`_text` but for its mode line."""
    plan = args.plan
    if args.format == "trec" and (plan.trec or plan.counts):
        _check_rows(args, columns)  # a query named "all", before trec_eval's writers
    if args.format == "trec" and plan.trec:
        strings = getattr(args, "strings", None)
        return trec_eval_text(columns, num_q, plan, per_query=args.per_query, strings=strings)
    wanted = set(plan.names)
    shown = {
        ours: printed
        for ours, printed in plan.printed.items()
        if args.format == "trec" or ours not in plan.nicknamed
    }
    counts = {m for m in plan.counts if shown.get(m, m) != m}
    columns = summed_counts(columns, num_q, counts)
    skip = plan.summary_only if args.format == "trec" else set()
    keep = [
        i
        for i, (qid, m) in enumerate(zip(columns["qid"], columns["measure"], strict=True))
        if m in wanted and not (qid is not None and m in skip)
    ]
    if len(keep) != len(columns["measure"]):
        columns = {name: [column[i] for i in keep] for name, column in columns.items()}
    columns = {**columns, "measure": [shown.get(m, m) for m in columns["measure"]]}
    if args.format != "trec":
        rows = len(columns["run"])
        tiebreak = _tiebreak(args) if args.ties == "oblivious" else None
        columns = {**columns, "ties": [args.ties] * rows, "tiebreak": [tiebreak] * rows}
        if args.ties == "sampled":  # what reproduces the draws
            samples = args.samples or DEFAULT_SAMPLES
            columns = {**columns, "samples": [samples] * rows, "seed": [args.seed] * rows}
    elif counts:  # trec_eval's counts as integers
        return tiecore_layout_text(columns, num_q, {shown[m] for m in counts})
    return _TEXTS[args.format](columns, num_q)


#: The writers of plain columns (the rows of every path), by --format.
_TEXTS: dict[str, Callable[[dict[str, list], dict[str, int]], str]] = {
    "trec": trec_text,
    "csv": csv_text,
    "json": json_text,
}


def _run_eval(args: argparse.Namespace, stderr: TextIO) -> str:
    """Read, evaluate and format; returns the text to write.

    tiecore.interop (-m all_trec), tiecore.distributed (--dask) and the allocator
    settings (past the small path) are imported where they are needed: a small
    file's start-up imports none of them.
    """
    # trec_eval's -m values as trec_eval reads them, tiecore's beside them; -N sets utility's
    # collection size
    names = with_docs(partial(measure_name, rel_level=args.rel_level), args.num_docs)
    if args.measures:
        plan = trec_plan(args.measures, names, version=_version(args))
    elif args.trec_eval is not None:  # trec_eval's default measures
        plan = trec_plan(["official"], version=args.trec_eval)
    else:
        plan = trec_plan(list(DEFAULT_MEASURES), names)
    if not plan.names and not (plan.runid or plan.num_q or plan.strings):  # -m '': refused
        parse_measures([])
    for note in plan.notes:
        print(note, file=stderr)
    args.plan = plan
    zscores = check_trec_eval_flags(args, plan)  # -Z, -N, -R: read and checked up front
    if args.rel_format in ("prefs", "qrels_prefs"):  # trec_eval's preference measures
        return _prefs_eval(args, zscores, stderr)
    measures = parse_measures(plan.names or ["AP"])  # runid / num_q alone need some rows
    if plan.trec and args.per_query and args.complete and "NumRet" not in plan.names:
        measures = [*measures, *parse_measures("NumRet")]  # which queries the run has
    if args.ties == "aware" or args.spread:
        measures = without_inexact(measures, plan, stderr, spread=args.spread)
    if plan.strings and (args.ties != "oblivious" or args.format != "trec"):
        without_strings(plan, stderr, trec_format=args.format == "trec")
    _warn_unused(args)
    if args.dask is not None and _local_declines(args.dask, args.files[1:]):
        args.dask = None  # evaluated locally, on the fastest path for the files
    if args.rel_format != "qrels":  # trec_eval's judgment groups (-R qrels_jg)
        return _groups_eval(args, measures, zscores, stderr)
    try:
        return _evaluated_text(args, plan, measures, zscores, stderr)
    except Refusal:  # one run's measure past a budget: the others still print
        return _apart(args, plan, measures, zscores, stderr)


def _evaluated_text(
    args: argparse.Namespace,
    plan: TrecPlan,
    measures: list[Measure],
    zscores: dict | None,
    stderr: TextIO,
    runs_and_qrels: tuple | None = None,
) -> str:
    """Evaluate ``measures`` on the command's runs, on the fastest path that takes them,
    and format the text (``runs_and_qrels``: inputs read already, for the normal path)."""
    # a nickname (-m all_trec, official), a string (relstring) and -Z take the normal
    # path, a run at a time
    normal = bool(plan.nicknamed) or bool(plan.strings) or zscores is not None
    normal = normal or runs_and_qrels is not None
    small = None if normal else _small_eval(args, measures, stderr)
    if small is not None:
        return small
    from tiecore.io import allocators  # lazy: not on the small files' path

    allocators.tune()  # many large arrays from here on (tiecore.io.allocators)
    arrow = None if normal else _arrow_eval(args, measures, stderr)
    if arrow is not None:
        return arrow
    if runs_and_qrels is None:
        runs_and_qrels = all_trec_inputs(args) if plan.nicknamed else eval_inputs(args)
    runs, qrels, sources = runs_and_qrels
    if args.ties == "sampled":  # refuse a count that cannot fit before the long work
        check_sample_count(args.samples or DEFAULT_SAMPLES, runs, qrels, measures)
    show = show_progress(args, stderr)

    def progress(index: int, total: int, name: str, seconds: float) -> None:
        progress_line(index, total, name, seconds, stderr)

    with dask_client(args.dask) as client, _samples_guard():
        result, num_q = evaluate_runs(
            runs,
            qrels,
            measures,
            progress=progress if show else None,
            sources=sources,
            client=client,
            **_evaluation_options(args, zscores),
        )
    return _result_text(args, plan, result, num_q, runs, qrels, zscores, stderr)


def _evaluation_options(args: argparse.Namespace, zscores: dict | None) -> dict:
    """:func:`evaluate_runs`' options from the command line (aware ``-Z`` needs the
    spread: its z-scores transform the variance and bounds too)."""
    return dict(
        ties=args.ties, tiebreak=_tiebreak(args), samples=args.samples or DEFAULT_SAMPLES,
        seed=args.seed, rel_level=args.rel_level, depth=args.depth, complete=args.complete,
        spread=args.spread or (zscores is not None and args.ties == "aware"),
    )  # fmt: skip


def _result_text(args, plan, result, num_q, runs, qrels, zscores, stderr) -> str:
    """The text of an evaluation's rows: z-scores (``-Z``), else the rows (the summary
    alone without ``-q``), relstring's lines from the runs where asked for."""
    if zscores is not None:  # z-scores of the per-query rows, then their summary
        columns = plain_columns(result)
        if plan.strings:  # relstring's text lines, printed as they are
            strings = relevance_strings(runs, qrels, args, _tiebreak(args))
            for (run, qid, name), text in strings.items():
                for column, cell in (("run", run), ("qid", qid), ("measure", name)):
                    columns[column].append(cell)
                for column in set(columns) - {"run", "qid", "measure"}:
                    columns[column].append(f"'{text}'" if column == "value" else None)
        return mode_line(args) + zscore_output(
            args, columns, num_q, zscores, stderr, _tiebreak(args)
        )
    if not args.per_query:
        result = result[result["qid"].isna()].reset_index(drop=True)
    elif plan.strings:
        args.strings = relevance_strings(runs, qrels, args, _tiebreak(args))
    columns = plain_columns(result)
    _check_rows(args, columns)
    return _text(args, columns, num_q)


def _apart(
    args: argparse.Namespace,
    plan: TrecPlan,
    measures: list[Measure],
    zscores: dict | None,
    stderr: TextIO,
) -> str:
    """After a :class:`~tiecore.errors.Refusal`: each run evaluated once per measure, so
    that a refused run and measure lose nothing else.  The values computed print as
    usual; each refusal prints one line (``tiecore: refused: ...``: the run, query and
    measure, why, and what to ask instead) and the command exits with status 3."""
    import pandas as pd

    runs, qrels, sources = all_trec_inputs(args) if plan.nicknamed else eval_inputs(args)
    if not isinstance(runs, dict):  # files: read now, each evaluated many times
        runs = io.read_runs(list(runs))
    found_by_run: dict[str, list[pd.DataFrame]] = {}
    num_q: dict[str, int] = {}
    refusals: list[str] = []
    options = _evaluation_options(args, zscores)
    with dask_client(args.dask) as client, _samples_guard():  # as the first pass ran
        for name, run in runs.items():
            for measure in measures:
                try:
                    found, counted = evaluate_runs(
                        {name: run}, qrels, [measure], sources=sources, client=client, **options
                    )
                except Refusal as refusal:
                    refusals.append(str(refusal))
                    continue
                found_by_run.setdefault(name, []).append(found)
                num_q.update(counted)
    for line in dict.fromkeys(refusals):
        print(f"tiecore: refused: {line}", file=stderr)
    args.status = EXIT_REFUSED
    if not found_by_run:
        return ""
    order = {str(m): i for i, m in enumerate(measures)}
    frames = []
    for parts in found_by_run.values():  # a run's rows: by query (summary last), then measure
        part = pd.concat(parts, ignore_index=True)
        queries = pd.unique(part["qid"].dropna())
        rank = pd.Series(range(len(queries)), index=queries)
        key = part["qid"].map(rank).fillna(len(queries))
        part = part.assign(_q=key, _m=part["measure"].map(order))
        frames.append(part.sort_values(["_q", "_m"], kind="stable").drop(columns=["_q", "_m"]))
    result = pd.concat(frames, ignore_index=True)
    return _result_text(args, plan, result, num_q, runs, qrels, zscores, stderr)


def _tiebreak(args: argparse.Namespace) -> str:
    """The oblivious tie-break: ``--tiebreak``, else the ``--trec-eval`` version's (9.0.8
    ties scores equal as C floats, 10.0 as doubles; both then by docno descending)."""
    return args.tiebreak or TREC_EVAL_TIEBREAK[_version(args)]


def _version(args: argparse.Namespace) -> str:
    """The trec_eval version whose conventions apply: ``--trec-eval``, else 9.0.8's."""
    return args.trec_eval or TREC_EVAL_VERSIONS[0]


def _prefs_eval(args: argparse.Namespace, zscores: dict | None, stderr: TextIO) -> str:
    """``eval -R prefs`` / ``-R qrels_prefs``: trec_eval's preference measures
    (:mod:`tiecore.evaluation.prefs`), in trec_eval's lines."""
    from tiecore.evaluation.prefs import evaluate_prefs  # lazy: pandas (~0.3 s)
    from tiecore.io.trec_eval_files import read_prefs, read_qrels_prefs  # lazy: -R only
    from tiecore.measures.prefs import RANK_RECOUNTED  # lazy: measures.prefs (~9 ms)

    plan = args.plan
    if args.ties == "aware" and args.spread:  # the Rnonrel measures: a value, no spread
        asked = [m for m in RANK_RECOUNTED if m in plan.printed and m not in plan.nicknamed]
        if asked:
            raise UsageError(
                f"-m {', '.join(asked)}: no exact variance and range (they recount by "
                "rank); use --ties aware without --spread, or --ties sampled"
            )
        dropped = [m for m in RANK_RECOUNTED if m in plan.printed]
        if dropped:
            print(
                f"tiecore: {plan.nicknamed[dropped[0]]} --spread leaves out "
                f"{', '.join(dropped)}: no exact variance and range (use --ties aware "
                "without --spread, or --ties sampled, for them)",
                file=stderr,
            )
            plan.names = [m for m in plan.names if m not in dropped]
            plan.lines = [line for line in plan.lines if line[1] not in dropped]
    check_files(args)
    reader = read_prefs if args.rel_format == "prefs" else read_qrels_prefs
    prefs = reader(args.files[0])
    runs = io.read_runs(args.files[1:])
    columns, num_q = evaluate_prefs(
        runs,
        prefs,
        ties=args.ties,
        depth=args.depth,
        complete=args.complete,
        spread=args.spread,
        samples=args.samples or DEFAULT_SAMPLES,
        seed=args.seed,
        recount=any(m in plan.names for m in RANK_RECOUNTED),
    )
    wanted = set(plan.names)  # the measures asked for (--spread: without the Rnonrel ones)
    keep = [i for i, measure in enumerate(columns["measure"]) if measure in wanted]
    columns = {name: [column[i] for i in keep] for name, column in columns.items()}
    if args.ties == "aware":  # an Rnonrel recount without an exact expectation here
        columns = _without_inexact_recounts(columns, plan, stderr)
    return _judgments_text(args, columns, num_q, zscores, stderr)


def _without_inexact_recounts(columns: dict[str, list], plan: TrecPlan, stderr: TextIO) -> dict:
    """Aware ``Rnonrel`` values: a measure that a nickname brought and that has no exact
    value for some query (nan) is left out with a note; asked for by name, refused."""
    from tiecore.measures.prefs import RANK_RECOUNTED  # lazy: measures.prefs (~9 ms)

    missing = {}
    for run, qid, measure, value in zip(
        columns["run"], columns["qid"], columns["measure"], columns["value"], strict=True
    ):
        if qid is not None and measure in RANK_RECOUNTED and math.isnan(value):
            missing.setdefault(measure, (run, qid))
    for measure, (run, qid) in missing.items():
        if measure not in plan.nicknamed:
            raise InputError(
                f"run {run}",
                None,
                f"query {qid}: {measure} has no exact tie-aware value here (a judgment "
                "group's recount keeps, among tied docs, non-relevant docs of which "
                "only some hold a preference, so its ratio is 0/0 in some orderings "
                "only, or non-relevant docs preferred to each other)",
                "--ties sampled (or oblivious) for it",
            )
    if missing:
        print(
            f"tiecore: {plan.nicknamed[next(iter(missing))]} leaves out "
            f"{', '.join(missing)}: no exact tie-aware value for some query (use --ties "
            "sampled for them)",
            file=stderr,
        )
        keep = [i for i, m in enumerate(columns["measure"]) if m not in missing]
        columns = {name: [column[i] for i in keep] for name, column in columns.items()}
        plan.names = [m for m in plan.names if m not in missing]
        plan.lines = [line for line in plan.lines if line[1] not in missing]
    return columns


def _groups_eval(
    args: argparse.Namespace, measures: list[Measure], zscores: dict | None, stderr: TextIO
) -> str:
    """``eval -R qrels_jg``: the measures averaged over each query's judgment groups
    (:mod:`tiecore.evaluation.judgment_groups`), in trec_eval's lines."""
    from tiecore.evaluation.core import evaluate  # lazy: pandas (~0.5 s)
    from tiecore.evaluation.judgment_groups import evaluate_judgment_groups  # lazy: pandas
    from tiecore.io.trec_eval_files import read_qrels_jg  # lazy: -R qrels_jg only

    check_files(args)
    groups = read_qrels_jg(args.files[0])
    runs = io.read_runs(args.files[1:])
    columns, num_q = evaluate_judgment_groups(
        runs,
        groups,
        measures,
        evaluate,
        ties=args.ties,
        tiebreak=_tiebreak(args),
        samples=args.samples or DEFAULT_SAMPLES,
        seed=args.seed,
        rel_level=args.rel_level,
        depth=args.depth,
        complete=args.complete,
        spread=args.spread,
    )
    return _judgments_text(args, columns, num_q, zscores, stderr)


def _judgments_text(
    args: argparse.Namespace,
    columns: dict[str, list],
    num_q: dict[str, int],
    zscores: dict | None,
    stderr: TextIO,
) -> str:
    """The text of ``-R``'s rows: their z-scores (``-Z``), else the rows (the summary
    alone without ``-q``)."""
    _check_rows(args, columns)
    if zscores is not None:
        return mode_line(args) + zscore_output(
            args, columns, num_q, zscores, stderr, _tiebreak(args)
        )
    if not args.per_query:
        keep = [i for i, qid in enumerate(columns["qid"]) if qid is None]
        columns = {name: [column[i] for i in keep] for name, column in columns.items()}
    return _text(args, columns, num_q)


def _local_declines(spec: str, files: Sequence[str]) -> bool:
    """Whether ``--dask spec`` is a one-off cluster too small to pay off for ``files``
    (:func:`tiecore.distributed.local_declines`; its note says why); a missing dask is
    a usage error."""
    from tiecore.distributed import local_declines  # lazy: --dask only

    try:
        return local_declines(spec, files)
    except ImportError as error:  # --dask asked for, dask missing
        raise UsageError(f"--dask: {error}") from None


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
        "tiebreak": _tiebreak(args),
        "seed": args.seed,
        "rel_level": args.rel_level,
        "depth": args.depth,
        "complete": args.complete,
        "per_query": args.per_query,
    }


def _small_eval(args: argparse.Namespace, measures: list, stderr: TextIO) -> str | None:
    """``eval`` on small TREC files without pandas or pyarrow (:mod:`tiecore.evaluation.small`): the
    text to write, or None when the normal path must read the inputs (for anything else,
    and for any problem: its messages are then the usual ones).

    Warnings and progress lines come out as the normal path prints them, in order.
    """
    if not _without_pandas(args):
        return None
    check_files(args)  # the normal path's first check, with its messages
    from tiecore.evaluation import small as _small  # lazy: ~14 ms, not on the arrow path

    table = _small.evaluate_files(
        args.files[0],
        args.files[1:],
        measures,
        **_eval_options(args),
        trec=args.format == "trec",
    )
    if table is None:
        return None
    show = show_progress(args, stderr)
    for kind, event in table.events:
        if kind == "warning":
            warnings.warn_explicit(event.message, event.category, event.filename, event.lineno)
        elif show:
            progress_line(*event, stderr)
    return _text(args, table.columns, table.num_q)


def _arrow_eval(args: argparse.Namespace, measures: list, stderr: TextIO) -> str | None:
    """``eval`` on TREC text files of any size without pandas (:mod:`tiecore.evaluation.arrow`,
    aware or oblivious, not ``--spread`` or dask): the text to write, or None for the
    normal path. Warnings, progress and errors are the normal path's, in its order."""
    if not _without_pandas(args):
        return None
    from tiecore.evaluation import arrow as _arrow_eval  # lazy: pyarrow (~90 ms)

    if not _arrow_eval.claimed(args.files):
        return None
    check_files(args)
    show = show_progress(args, stderr)

    def progress(done: int, total: int, name: str, seconds: float) -> None:
        progress_line(done, total, name, seconds, stderr)

    table = _arrow_eval.evaluate_files(
        args.files[0],
        args.files[1:],
        measures,
        **_eval_options(args),
        progress=progress if show else None,
    )
    columns = table.columns
    _check_rows(args, columns)
    return _text(args, columns, table.num_q)


def _check_rows(args: argparse.Namespace, columns: dict[str, list]) -> None:
    """The rows ``eval`` is about to print, checked: no query named ``all`` in trec
    format with ``-q`` (trec_eval's name for the summary rows), and never nan or inf (a
    value that overflowed is an error naming where it came from)."""
    if args.per_query and args.format == "trec" and "all" in columns["qid"]:
        raise InputError(
            args.letor or f"{args.files[0]} and the runs",
            None,
            "a query is named 'all', the name trec format gives the summary rows",
            "--format csv or json, whose summary rows have no qid, or no -q",
        )
    for column in ("value", "std", "stderr", "var", "min", "max"):
        if column not in columns:
            continue
        bad = np.flatnonzero(~np.isfinite(np.asarray(columns[column], dtype=float)))
        if len(bad):
            i = int(bad[0])
            qid = columns["qid"][i]
            query = "the mean" if qid is None else f"query {qid}"
            raise InputError(
                args.letor or args.files[0],
                None,
                f"{column} of {columns['measure'][i]} for run {columns['run'][i]}, {query}, is "
                f"{columns[column][i]}: the computation overflowed",
                "qrels levels that keep every gain finite (2**level overflows above 1023)",
            )

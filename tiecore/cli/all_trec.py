"""trec_eval's nicknames in ``tiecore eval`` (``-m all_trec``, ``official``, ``set``):
how their runs are read, and what they leave out under tie-aware evaluation.

How trec_eval's ``-m`` values are read and printed is :mod:`tiecore.cli.trec_eval_names`.
"""

from __future__ import annotations

import argparse
import os
import warnings
from typing import TYPE_CHECKING, TextIO

from tiecore import io
from tiecore.cli.common import UsageError, eval_inputs, read_inputs
from tiecore.cli.trec_eval_names import TrecPlan
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking

if TYPE_CHECKING:  # pandas loads only when a command needs it (start-up)
    import pandas as pd


def all_trec_inputs(args: argparse.Namespace) -> tuple[object, pd.DataFrame, dict | None]:
    """``-m all_trec``'s inputs: run files stay paths, read one at a time, unless one is
    no plain file (stdin, a pipe): then every run is read once, up front."""
    if all(os.path.isfile(path) for path in args.files[1:]):
        return eval_inputs(args)
    return read_inputs(args)


def without_inexact(measures: list, plan: TrecPlan, stderr: TextIO, spread: bool = True) -> list:
    """A trec_eval nickname (``official``, ``all_trec``) under aware or ``--spread``:
    leave out, with a note, its measures that have no exact tie-aware value (gm_map,
    see tiecore.measures.gmap, and those whose family says ``inexact``); the plan loses them
    too.  A measure asked for by name
    stays, to be refused with the reason."""
    exact = (lambda m: m.exact_spread) if spread else (lambda m: m.exact_value)
    dropped = [m for m in measures if not exact(m) and str(m) in plan.nicknamed]
    for m in dropped:
        what = "spread" if m.exact_value else "value"
        print(
            f"tiecore: {plan.nicknamed[str(m)]} leaves out {plan.printed[str(m)]}: no exact "
            f"tie-aware {what} (use --ties sampled or oblivious for it)",
            file=stderr,
        )
        plan.names.remove(str(m))
        plan.lines = [line for line in plan.lines if line[1] != str(m)]
    return [m for m in measures if m not in dropped]


def without_strings(plan: TrecPlan, stderr: TextIO, *, trec_format: bool = True) -> None:
    """trec_eval's relstring outside oblivious mode (it names one ordering: a string, not
    a number, has no mean over orderings) or outside trec format (its lines are
    trec_eval's only).  Asked for through a nickname it is left out with a note; asked
    for by name, refused."""
    named = [key for key in plan.strings if key not in plan.nicknamed]
    printed = {ours: name for name, ours in plan.lines}
    if trec_format:
        why = (
            "relstring names the relevance values of one ordering, which has no mean over "
            "the orderings of the tied docs (expected --ties oblivious for it: trec_eval's "
            "tie-break)"
        )
        note = "it names one ordering (use --ties oblivious for it)"
    else:
        why = "relstring prints trec_eval's lines only (expected --format trec for it)"
        note = "it prints in trec format only (use --format trec for it)"
    if named:
        raise UsageError(f"-m {printed[named[0]]}: {why}")
    for key in list(plan.strings):
        print(f"tiecore: {plan.nicknamed[key]} leaves out {printed[key]}: {note}", file=stderr)
        del plan.strings[key]
        plan.lines = [line for line in plan.lines if line[1] != key]


def relevance_strings(
    runs, qrels: pd.DataFrame, args: argparse.Namespace, tiebreak: str = "trec_eval"
) -> dict:
    """``(run, qid, name) -> string``: trec_eval's relstring of each run's queries in the
    ranking's own order (``tiebreak``), for the plan's ``strings``."""
    from tiecore.measures.relstring import relstrings  # lazy: -m relstring only

    judgments = Judgments.from_qrels(qrels, rel_level=args.rel_level)
    frames = runs if isinstance(runs, dict) else io.read_runs(list(runs))
    out = {}
    for name, run in frames.items():
        with warnings.catch_warnings():  # the evaluation has said what it drops
            warnings.simplefilter("ignore")
            ranking = Ranking.build(run, judgments, tiebreak=tiebreak, name=name)
        for key, length in args.plan.strings.items():
            for qid, text in zip(
                judgments.qids.tolist(), relstrings(ranking, length, args.depth), strict=True
            ):
                out[name, qid, key] = text
    return out

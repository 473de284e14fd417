"""trec_eval's nicknames in ``tiecore eval`` (``-m all_trec``, ``official``, ``set``):
how their runs are read, and what they leave out under tie-aware evaluation.

How trec_eval's ``-m`` values are read and printed is :mod:`tiecore.cli.trec_eval_names`.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, TextIO

from tiecore.cli.common import eval_inputs, read_inputs
from tiecore.cli.trec_eval_names import TrecPlan

if TYPE_CHECKING:  # pandas loads only when a command needs it (start-up)
    import pandas as pd


def all_trec_inputs(args: argparse.Namespace) -> tuple[object, pd.DataFrame, dict | None]:
    """``-m all_trec``'s inputs: run files stay paths, read one at a time, unless one is
    no plain file (stdin, a pipe): then every run is read once, up front."""
    if all(os.path.isfile(path) for path in args.files[1:]):
        return eval_inputs(args)
    return read_inputs(args)


def without_inexact(measures: list, plan: TrecPlan, stderr: TextIO) -> list:
    """A trec_eval nickname (``official``, ``all_trec``) under aware or ``--spread``:
    leave out, with a note, its measures that have no exact tie-aware value (gm_map,
    see tiecore.measures.gmap, and those whose family says ``inexact``); the plan loses them
    too.  A measure asked for by name
    stays, to be refused with the reason."""
    dropped = [m for m in measures if not m.exact_spread and str(m) in plan.nicknamed]
    for m in dropped:
        print(
            f"tiecore: {plan.nicknamed[str(m)]} leaves out {plan.printed[str(m)]}: no exact "
            "tie-aware value (use --ties sampled or oblivious for it)",
            file=stderr,
        )
        plan.names.remove(str(m))
        plan.lines = [line for line in plan.lines if line[1] != str(m)]
    return [m for m in measures if m not in dropped]

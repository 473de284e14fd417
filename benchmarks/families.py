"""Section ``families``: the families that are no head sum, each mode beside oblivious.

Such a family (IPrec, ERR, infAP, the local-ideal nDCG, IPrecAvg) computes its values
itself, through hooks that take all of its measures at once
(:func:`tiecore.engine.kernels.families`): trec_eval's eleven IPrec levels share one
counting DP, an ERR at three cutoffs one pass.  Each line times one family's measures
on the data set's runs in one mode against the same measures oblivious (in process, the
runs read once, best of ``repeat``); a mode that refuses a run (a tie group past its
budget of steps) says so instead of a time.
"""

from __future__ import annotations

from benchmarks.common import Result, best_of
from benchmarks.datasets import Dataset

#: Each family's measures, as a user asks for them together.
FAMILIES = {
    "IPrec, trec_eval's 11 levels": [f"IPrec(recall={c / 10})" for c in range(11)],
    "ERR@5,10,20": ["ERR@5", "ERR@10", "ERR@20"],
    "infAP": ["infAP"],
    "nDCG(ideal=local)@10,20": ["nDCG(ideal=local)@10", "nDCG(ideal=local)@20"],
    "IPrecAvg": ["IPrecAvg"],
}

#: The samples of the sampled mode's line.
SAMPLES = 100


def bench_families(ds: Dataset, runs, qrels, repeat: int) -> list[Result]:
    """Per family: aware, the spread and ``SAMPLES`` draws, each / oblivious."""
    import tiecore
    from tiecore.errors import Refusal
    from tiecore.spread import evaluate_spread

    modes = {
        "aware": lambda m: tiecore.evaluate(runs, qrels, m, ties="aware"),
        "spread": lambda m: evaluate_spread(runs, qrels, m),
        f"sampled x{SAMPLES}": lambda m: tiecore.evaluate(
            runs, qrels, m, ties="sampled", samples=SAMPLES
        ),
    }
    out = []
    for family, measures in FAMILIES.items():
        oblivious, _ = best_of(
            lambda m=measures: tiecore.evaluate(runs, qrels, m, ties="oblivious"), repeat
        )
        for mode, evaluate in modes.items():
            try:
                took, _ = best_of(lambda m=measures, e=evaluate: e(m), repeat)
            except Refusal as refusal:
                out.append(Result(ds.name, f"{family}: {mode} / oblivious", None, oblivious,
                                  note=f"refused: {str(refusal)[:120]}"))  # fmt: skip
                continue
            out.append(Result(ds.name, f"{family}: {mode} / oblivious", took, oblivious))
    return out

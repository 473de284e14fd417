"""tiecore: IR evaluation measures that know about tied scores.

Every measure in three modes: tie-oblivious (one ordering, trec_eval's by
default), tie-aware (the exact mean over all orderings of tied documents,
McSherry & Najork, ECIR 2008) and sampled (random tie-breaking).

The public names are those the README documents.  Each is imported on first use
(PEP 562), so ``import tiecore`` loads neither numpy, pandas nor pyarrow, and
scipy (spread, compare) or dask (distributed) only with what needs them.
"""

import importlib

from tiecore.errors import InputError, Refusal, TieCoreWarning
from tiecore.version import __version__ as __version__

#: Public name -> the module that defines it (imported on first access).
_LAZY = {
    "evaluate": "tiecore.evaluation.core",
    "read_letor": "tiecore.io",
    "read_qrels": "tiecore.io",
    "read_run": "tiecore.io",
    "read_runs": "tiecore.io",
    "evaluate_spread": "tiecore.spread",
    "Comparison": "tiecore.compare",
}
#: Public submodules, also imported on first access.
_LAZY_MODULES = (
    "compare",
    "distributed",
    "interop",
    "ir_measures_provider",  # needs ir_measures: imported only when named
    "metrics",
    "pytrec",  # pytrec_eval's RelevanceEvaluator, tie-aware
    "spread",
    "explain",  # anatomy, builder, precision: the math the explorer draws
    "stats",  # ranks within a tolerance
)


def __getattr__(name: str) -> object:
    """``tiecore.evaluate``, ``tiecore.spread`` and the other public names, on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip this hook
        return value
    if name in _LAZY_MODULES:
        return importlib.import_module(f"tiecore.{name}")
    raise AttributeError(f"module 'tiecore' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Comparison",
    "InputError",
    "Refusal",
    "TieCoreWarning",
    "compare",
    "distributed",
    "evaluate",
    "evaluate_spread",
    "explain",
    "interop",
    "ir_measures_provider",
    "metrics",
    "pytrec",
    "read_letor",
    "read_qrels",
    "read_run",
    "read_runs",
    "spread",
    "stats",
]

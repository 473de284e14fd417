"""tiecore: IR evaluation measures that know about tied scores.

Every measure in three modes: tie-oblivious (one ordering, trec_eval's by
default), tie-aware (the exact mean over all orderings of tied documents,
McSherry & Najork, ECIR 2008) and sampled (random tie-breaking).
"""

import importlib

from tiecore.errors import InputError, TieCoreWarning

# Bound at import, not lazily: the submodule tiecore.evaluate shares the function's name,
# and importing it (as the CLI does) would set the package attribute to the module.  The
# evaluation core needs numpy, pandas and pyarrow anyway; scipy (spread, compare) and
# dask (distributed) load only with the submodules that use them, on first access.
from tiecore.evaluate import MODES, evaluate
from tiecore.io import read_letor, read_qrels, read_run, read_runs
from tiecore.measures import DEFAULT_MEASURES, Measure, parse_measures
from tiecore.ranking import TIEBREAKS

_LAZY_MODULES = ("compare", "distributed", "spread")


def __getattr__(name: str) -> object:
    """``tiecore.spread``, ``tiecore.compare``, ``tiecore.distributed`` on first use."""
    if name in _LAZY_MODULES:
        return importlib.import_module(f"tiecore.{name}")
    raise AttributeError(f"module 'tiecore' has no attribute {name!r}")


__all__ = [
    "DEFAULT_MEASURES",
    "MODES",
    "TIEBREAKS",
    "InputError",
    "Measure",
    "TieCoreWarning",
    "evaluate",
    "parse_measures",
    "read_letor",
    "read_qrels",
    "read_run",
    "read_runs",
]
__version__ = "0.1.0"

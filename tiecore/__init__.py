"""tiecore: IR evaluation measures that know about tied scores.

Every measure in three modes: tie-oblivious (one ordering, trec_eval's by
default), tie-aware (the exact mean over all orderings of tied documents,
McSherry & Najork, ECIR 2008) and sampled (random tie-breaking).
"""

from tiecore.errors import InputError, TieCoreWarning
from tiecore.evaluate import MODES, evaluate
from tiecore.measures import DEFAULT_MEASURES, Measure, parse_measures
from tiecore.ranking import TIEBREAKS

try:
    from tiecore.io import read_letor, read_qrels, read_run, read_runs
except ImportError:  # pragma: no cover - io.py is being written
    pass

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

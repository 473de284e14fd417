"""tiecore: IR evaluation measures that know about tied scores.

Every measure in three modes: tie-oblivious (one ordering, trec_eval's by
default), tie-aware (the exact mean over all orderings of tied documents,
McSherry & Najork, ECIR 2008) and sampled (random tie-breaking).

The public names are those the README documents, declared once in
``tiecore/__init__.pyi`` (what type checkers read).  Each is imported on first use
(PEP 562, :mod:`tiecore._lazy`), so ``import tiecore`` loads neither numpy, pandas nor
pyarrow, and scipy (spread, compare) or dask (distributed) only with what needs them.
"""

from tiecore import _lazy
from tiecore.errors import InputError as InputError  # small: imported at once
from tiecore.errors import Refusal as Refusal
from tiecore.errors import TieCoreWarning as TieCoreWarning
from tiecore.version import __version__ as __version__

#: The public names are those of ``__init__.pyi``, each written there once (tiecore._lazy).
__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)

"""The ``tiecore`` command line (``tiecore eval``, ``compare``, ``report``): :func:`main`.

:mod:`tiecore.cli.main` builds the parser and dispatches; one module per subcommand
(:mod:`~tiecore.cli.eval`, :mod:`~tiecore.cli.compare`, :mod:`~tiecore.cli.report`)
holds its options and handler.

Imported before numpy (as the ``tiecore`` command and ``python -m tiecore`` import
it), it sets ``OPENBLAS_NUM_THREADS=1`` unless set already: numpy's OpenBLAS
otherwise starts a thread per core as numpy is imported, which spins for a while
(75 ms of CPU time at every start on 2 cores, taken from pyarrow's reader threads),
and the command does no BLAS work that threads would speed up.
"""

import os
import sys

if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tiecore.cli.main import main  # (after the setting above)

__all__ = ["main"]

"""The ``tiecore`` command line (``tiecore eval``, ``compare``, ``report``): :func:`main`.

:mod:`tiecore.cli.main` builds the parser and dispatches; one module per subcommand
(:mod:`~tiecore.cli.eval`, :mod:`~tiecore.cli.compare`, :mod:`~tiecore.cli.report`)
holds its options and handler.
"""

from tiecore.cli.main import main

__all__ = ["main"]

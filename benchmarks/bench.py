"""``python benchmarks/bench.py [options]``: the same as ``python -m benchmarks run [options]``.

Kept so that the commands written down before the suite became a package still run;
see ``benchmarks/README.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a script, this folder is sys.path[0]: the repository root takes its place, so
    # that ``benchmarks`` is the package and no module of it shadows an installed one.
    sys.path[0] = str(Path(__file__).resolve().parents[1])
    from benchmarks.runner import main

    raise SystemExit(main())

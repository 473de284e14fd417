"""``python -m benchmarks COMMAND [options]`` (``python -m benchmarks COMMAND -h`` for each):

    run          the sections of the engine and command line (python -m benchmarks run --quick)
    compare      a commit's stored figures beside its base's (compare BASE [HEAD])
    results      the commits with stored figures
    explorer     what a user of the explorer waits for, in Chromium
    app-memory   the explorer server's memory as visitors upload and leave
    dicts        tiecore.pytrec's RelevanceEvaluator beside pytrec_eval's on dicts

``run``, ``explorer`` and ``app-memory`` store their figures under the commit measured
(``benchmarks/store.py``); options of ``run`` without a command run it
(``python -m benchmarks --quick``).
"""

from __future__ import annotations

import sys

COMMANDS = ("run", "compare", "results", "explorer", "app-memory", "dicts")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    command, rest = argv[0], argv[1:]
    if command.startswith("-"):
        command, rest = "run", argv
    if command == "run":
        from benchmarks.runner import main as run

        return run(rest)
    if command in ("compare", "results"):
        from benchmarks.store import main as store

        return store([command, *rest])
    if command == "explorer":
        from benchmarks.explorer import main as explorer

        return explorer(rest)
    if command == "app-memory":
        from benchmarks.app_memory import main as app_memory

        return app_memory(rest)
    if command == "dicts":
        from benchmarks.pytrec_dicts import main as dicts

        dicts(rest)
        return 0
    print(f"unknown command {command!r}; one of {', '.join(COMMANDS)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())

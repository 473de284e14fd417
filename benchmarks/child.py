"""One measured job in a fresh interpreter: ``python -m benchmarks.child KIND ARGS``.

Every side of a ratio that is a process is one of these (see :func:`benchmarks.common.
child_cmd`), so that each tool is timed end to end from the files with its own
interpreter, imports and memory.  Only the standard library is imported before the job's
own module.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

from benchmarks.common import HWM_MARK, _rss_mb


def run_as_child(argv: list[str]) -> int:
    """``KIND ARGS``: run one measured job, print its JSON report and its peak RSS.

    ``cli`` runs ``tiecore.cli.main(ARGS)`` exactly as ``python -m tiecore ARGS`` does.
    """
    import atexit

    atexit.register(lambda: print(f"{HWM_MARK} {_rss_mb('VmHWM'):.1f}", file=sys.stderr))
    kind, args = argv[0], argv[1:]
    if kind == "cli":
        from tiecore.cli import main as tiecore_main

        return tiecore_main(args)
    if kind == "dask_forced":  # tiecore eval ... --dask local:N, the cluster always started
        import tiecore.distributed
        from tiecore.cli import main as tiecore_main

        tiecore.distributed.ROW_SECONDS = 1.0
        return tiecore_main(args)
    warnings.simplefilter("ignore")
    if kind == "parse":
        from benchmarks.parsing import child_parse

        report = child_parse(args[0], args[1], int(args[2]), args[3:])
    elif kind == "ir_measures":
        from benchmarks.end_to_end import child_ir_measures

        report = child_ir_measures(args[0].split(","), args[1], args[2:])
    elif kind == "ranx":
        from benchmarks.end_to_end import child_ranx

        report = child_ranx(args[0].split(","), args[1], args[2:])
    elif kind == "pytrec_eval":
        from benchmarks.end_to_end import child_pytrec_eval

        report = child_pytrec_eval(args[0].split(","), args[1], args[2:])
    elif kind == "floor":
        from benchmarks.parsing import child_floor

        report = child_floor(args[0], args[1:])
    elif kind == "eager":
        from benchmarks.stream import child_eager

        report = child_eager(args[0].split(","), args[1], args[2:])
    elif kind == "dask":
        from benchmarks.scale_out import child_dask

        report = child_dask(args[0].split(","), int(args[1]), args[2], args[3:])
    elif kind == "dask_memory":
        from benchmarks.scale_out import child_dask_memory

        report = child_dask_memory(
            args[0].split(","), int(args[1]), int(args[2]), args[3], args[4:]
        )
    elif kind == "import":
        start = time.perf_counter()
        for module in args:
            __import__(module)
        report = {"import": time.perf_counter() - start}
    else:
        raise SystemExit(f"unknown child {kind}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_as_child(sys.argv[1:]))

"""The ``tiecore`` command: its parser, the dispatch to a subcommand, and :func:`main`.

One module per subcommand (:mod:`tiecore.cli.eval`, :mod:`tiecore.cli.compare`,
:mod:`tiecore.cli.report`) adds its parser and handler; none imports pandas before
its handler runs, so ``tiecore eval`` on small files starts without it.  Bad input
never ends in a traceback: it prints ``tiecore: error: <message>`` on stderr and exits
with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Sequence

from tiecore.cli import eval as eval_command
from tiecore.cli.common import UsageError
from tiecore.cli.output import Stream, to_devnull, write_all, write_output
from tiecore.errors import InputError

#: Exit status for bad input or bad options (argparse's own convention).
EXIT_USAGE = 2
#: Exit status after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130
#: Exit status when stdout's reader went away (128 + SIGPIPE), as shells report it.
EXIT_BROKEN_PIPE = 141


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _version() -> str:
    from importlib import metadata  # lazy: 20-50 ms of imports, only for --version

    try:
        return metadata.version("tiecore")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """``--version``: looks the version up only when asked."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"tiecore {_version()}", file=sys.stdout, flush=True)
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``tiecore`` argument parser: ``eval``, ``compare`` and ``report``.

    ``only="eval"`` builds the ``eval`` command alone (the same parser for a command
    line that starts with ``eval``), without importing what the others need: their
    modules (and tiecore.report's tables, which ``report`` imports) are imported here,
    only for a parser that has them.
    """
    parser = _Parser(prog="tiecore", description="Tie-aware evaluation of ranking runs.")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    eval_command.add_parser(commands)
    if only != "eval":
        from tiecore.cli import compare as compare_command  # lazy: not on eval's path
        from tiecore.cli import report as report_command  # lazy: ~9 ms, not on eval's path

        compare_command.add_parser(commands)
        report_command.add_parser(commands)
    return parser


def _one_line(message: object) -> str:
    """``message`` on one line: its whitespace runs, newlines included, as one space."""
    return " ".join(str(message).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    0 ok, 2 bad input or options (one ``tiecore: error: ...`` line on stderr), 3 some
    values refused past a budget and the others printed (``tiecore: refused: ...``), 130
    after Ctrl-C (one ``tiecore: interrupted`` line), 141 when stdout's reader went
    away (``| head``; nothing more is printed). Warnings (for example run queries
    missing from the qrels) are printed as ``tiecore: warning: ...`` lines on
    stderr, each distinct message once. A closed stderr never stops the work.
    """
    stderr = Stream(sys.stderr)
    try:
        return _main(argv, stderr)
    except KeyboardInterrupt:
        print("tiecore: interrupted", file=stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None, stderr: Stream) -> int:
    stdout = sys.stdout
    seen: set[str] = set()

    def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
        text = _one_line(message)
        if text not in seen:
            seen.add(text)
            print(f"tiecore: warning: {text}", file=stderr)

    def fail(message: object) -> int:
        print(f"tiecore: error: {_one_line(message)}", file=stderr)
        return EXIT_USAGE

    try:
        with contextlib.redirect_stderr(stderr):  # argparse prints --help errors there
            line = sys.argv[1:] if argv is None else list(argv)
            args = build_parser("eval" if line[:1] == ["eval"] else None).parse_args(line)
    except UsageError as error:
        return fail(error)
    except SystemExit as done:  # --help and --version
        if stdout is None:
            return EXIT_BROKEN_PIPE
        return done.code if isinstance(done.code, int) else 0

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # a file left open by an interrupted read is the interpreter's business, not the user's
        warnings.simplefilter("ignore", ResourceWarning)
        warnings.showwarning = show_warning
        try:
            text = args.handler(args, stderr)
        except (InputError, UsageError) as error:
            return fail(error)
        except UnicodeDecodeError as error:
            return fail(f"cannot decode input as text: {error}")
        except MemoryError:
            return fail("out of memory (try fewer runs, features or --samples)")
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            return fail(f"{where}{error.strerror or error}")

    try:
        if args.output is None:
            if stdout is None:  # started with stdout closed (>&-)
                return EXIT_BROKEN_PIPE
            write_all(stdout, text)
        else:
            write_output(args.output, text)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, without a second error at exit.
        to_devnull(stdout)
        return EXIT_BROKEN_PIPE
    except OSError as error:
        return fail(f"{args.output}: {error.strerror or error}")
    return getattr(args, "status", 0)  # EXIT_REFUSED where something was refused

"""Where a command's text goes: stdout, whole or not at all, or ``-o FILE``, replaced atomically.

A closed stdout or stderr (``>&-``, ``2>&-``) or a reader that leaves (``| head``) never
ends in a traceback: :class:`Stream` drops what cannot be written, and
:func:`write_all` raises ``BrokenPipeError`` for :func:`tiecore.cli.main.main` to stop
quietly with exit status 141.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path
from typing import TextIO


class Stream:
    """A text stream whose writes never raise: once its reader is gone or it is closed
    (``2>&-``, ``| head``), what is written is dropped and ``broken`` is set."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.broken = stream is None

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):  # BrokenPipeError, EBADF, a closed file object
                self.broken = True
                to_devnull(self.stream)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        try:
            return not self.broken and self.stream.isatty()
        except (OSError, ValueError):
            return False


def to_devnull(stream: TextIO | None) -> None:
    """Point ``stream``'s descriptor at /dev/null, so that the flush at exit finds no
    broken pipe to complain about (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (io.UnsupportedOperation)
        pass


def write_all(stream: TextIO, text: str) -> None:
    """Write ``text`` whole, or raise: a pipe whose reader leaves mid-write makes the
    buffered layer return a short count that ``TextIOWrapper.write`` drops silently, so
    the bytes go through the binary buffer until every one is taken."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # an in-memory stream
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    data = memoryview(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))
    while data:
        data = data[buffer.write(data) :]
    buffer.flush()


def write_output(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a temporary file beside it,
    flushed to disk, then renamed over it (a rename within a directory is atomic), so an
    interrupted run or a full disk leaves no half-written output and the old file intact.
    A link is followed (its target is replaced); an existing non-regular file (a device
    such as /dev/null, a named pipe) is written in place, as it cannot be replaced.

    A SIGTERM or SIGHUP during the write removes the temporary file before the process
    ends (with status 128 + the signal's number); one that no handler sees (SIGKILL, a
    power cut) leaves it behind, named with the writer's process id, and the next write
    to the same file removes it once that process is gone (:func:`_remove_stale`).
    """
    import tempfile  # lazy: -o only (it pulls in random and shutil)

    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        Path(target).write_text(text, encoding="utf-8")
        return
    if mode is None:  # a new file gets the permissions open() would give it
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    folder, name = os.path.split(target)
    _remove_stale(folder, name)
    with _signals_as_exit():
        handle, temporary = tempfile.mkstemp(
            prefix=f"{_temporary_prefix(name)}{os.getpid()}-", suffix=".tmp", dir=folder
        )
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, stat.S_IMODE(mode))
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def _temporary_prefix(name: str) -> str:
    """How the temporary files of writes to ``name`` begin (then the writer's process
    id, ``-``, random letters and ``.tmp``)."""
    return f".{name}.tiecore-"


_SIGNALS = ("SIGTERM", "SIGHUP")


def _remove_stale(folder: str, name: str) -> None:
    """Remove the temporary files of earlier writes to ``name`` whose process is gone."""
    prefix = _temporary_prefix(name)
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
                continue
            pid = entry.name[len(prefix) :].partition("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def _signals_as_exit():
    """SIGTERM and SIGHUP raise ``SystemExit(128 + signal)`` inside the block (so that
    its cleanup runs), where this is the main thread; the old handlers come back after."""
    import signal  # lazy: -o only

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(number, frame):
        raise SystemExit(128 + number)

    kept = {}
    for name in _SIGNALS:
        number = getattr(signal, name, None)
        if number is not None:
            kept[number] = signal.signal(number, leave)
    try:
        yield
    finally:
        for number, handler in kept.items():
            signal.signal(number, handler)

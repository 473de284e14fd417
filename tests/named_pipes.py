"""A named pipe fed by a thread, for tests of inputs that can be read only once."""

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def fed_pipe(path: Path, data: bytes, *, patience: float = 60.0) -> Iterator[Path]:
    """Make ``path`` a named pipe that yields ``data`` to its first reader.

    A reader that opens the pipe again would wait forever for a writer; from
    ``patience`` seconds on, a watchdog opens and closes it every second, so such a
    reader sees an empty text and the test fails instead of hanging.
    """
    os.mkfifo(path)
    done = threading.Event()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), open(path, "wb") as fh:
            fh.write(data)

    def watch() -> None:
        if done.wait(patience):
            return
        while not done.wait(1.0):
            with contextlib.suppress(OSError):  # ENXIO: nobody waits to read
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    writer = threading.Thread(target=feed, daemon=True)
    watchdog = threading.Thread(target=watch, daemon=True)
    writer.start()
    watchdog.start()
    try:
        yield path
    finally:
        done.set()
        writer.join(timeout=patience)

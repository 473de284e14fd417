"""Allocator settings for a process that reads and evaluates runs: the command line's.

Evaluating a run allocates and frees arrays of 0.1 to 100 MB, run after run. Two
defaults of the libraries beneath tiecore make the kernel, not tiecore, do much of
that work:

* glibc's ``malloc`` hands every freed block over its *mmap threshold* (128 KiB at
  first, raised as it goes) back to the kernel, and trims the top of its heap when
  128 KiB are free there; every array of the next run then faults its pages in
  again. Measured on 136 runs of 31,500 rows (4 measures, 2 cores), ``tiecore eval``
  spent 0.4 s of its 1.0 s in the kernel, and on one run of 7M rows 2.0 s of 3.4 s.
* pyarrow's default pool in its Linux wheels (mimalloc) keeps a heap per parser
  thread; its jemalloc pool reads the same files 1.5x as fast with a quarter less
  memory at the peak.

:func:`tune` raises the mmap threshold to 4 MiB and the trim threshold to 32 MiB
(freed memory up to that size stays with the process for the next run) and makes
jemalloc pyarrow's default pool, each only where the platform has it and the user
has not chosen (``MALLOC_*_`` / ``GLIBC_TUNABLES`` or ``ARROW_DEFAULT_MEMORY_POOL``
set). These are process-wide settings: the command line makes them, the library
never does on its own; a program that reads many runs may call :func:`tune` itself.
"""

from __future__ import annotations

import os
import sys

#: glibc's ``mallopt`` parameters (``<malloc.h>``).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: Blocks from this size on are mapped and unmapped one by one (glibc's default: 128 KiB).
MMAP_THRESHOLD = 4 << 20
#: Free memory at the top of the heap kept for the next allocations (glibc: 128 KiB).
TRIM_THRESHOLD = 32 << 20
#: Environment variables by which a user sets glibc's malloc; any of them: hands off.
_GLIBC_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")

_done = False


def tune() -> None:
    """Set glibc's malloc thresholds and pyarrow's default pool for many large arrays.

    Safe to call more than once, and on any platform: on one without glibc or
    without pyarrow's jemalloc pool the setting that does not apply is skipped.
    """
    global _done
    if _done:
        return
    _done = True
    if not any(name in os.environ for name in _GLIBC_SETTINGS) and _is_glibc():
        import ctypes  # lazy: glibc only, ~2 ms before numpy has loaded it

        libc = ctypes.CDLL(None)
        # The trim threshold first: setting either one turns off glibc's own adjustment.
        libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        import pyarrow as pa

        try:
            pa.set_memory_pool(pa.jemalloc_memory_pool())
        except NotImplementedError:  # a build without jemalloc (Windows wheels): keep it
            pass


def _is_glibc() -> bool:
    """Whether this process runs on glibc (where ``mallopt`` takes these parameters)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False

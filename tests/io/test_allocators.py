"""tiecore.io.allocators: the command line's allocator settings, and that they stay off
where the user chose otherwise."""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys

import pyarrow as pa
import pytest

from tiecore.io import allocators

POOL = (
    "import pyarrow as pa\n"
    "from tiecore.io import allocators\n"
    "allocators.tune()\n"
    "print(pa.default_memory_pool().backend_name)\n"
)


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


def _pool_after_tune(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run(
        [sys.executable, "-c", POOL], env=clean | env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow build has no jemalloc pool")
def test_tune_makes_jemalloc_the_default_pool():
    assert _pool_after_tune() == "jemalloc"


def test_tune_keeps_the_pool_the_user_chose():
    assert _pool_after_tune(ARROW_DEFAULT_MEMORY_POOL="system") == "system"


class _Libc:
    def __init__(self, calls: list) -> None:
        self.calls = calls

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


@pytest.fixture
def fresh(monkeypatch):
    """tune() as in a new process, with mallopt recorded instead of called."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(allocators, "_done", False)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: _Libc(calls))
    monkeypatch.setattr(allocators, "_is_glibc", lambda: True)
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "keep")  # pool untouched here
    for name in allocators._GLIBC_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return calls


def test_tune_sets_glibc_trim_then_mmap_threshold_once(fresh):
    allocators.tune()
    allocators.tune()
    assert fresh == [
        (allocators._M_TRIM_THRESHOLD, allocators.TRIM_THRESHOLD),
        (allocators._M_MMAP_THRESHOLD, allocators.MMAP_THRESHOLD),
    ]


@pytest.mark.parametrize("name", allocators._GLIBC_SETTINGS)
def test_tune_leaves_malloc_alone_when_the_user_set_it(fresh, monkeypatch, name):
    monkeypatch.setenv(name, "65536")
    allocators.tune()
    assert fresh == []


def test_tune_leaves_malloc_alone_without_glibc(fresh, monkeypatch):
    monkeypatch.setattr(allocators, "_is_glibc", lambda: False)
    allocators.tune()
    assert fresh == []


def test_is_glibc_agrees_with_the_interpreters_own_libc():
    """Against platform.libc_ver, which reads the interpreter's binary, not confstr."""
    assert allocators._is_glibc() == (
        sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    )

"""The command line keeps numpy's OpenBLAS to one thread (tiecore.cli's docstring says
why), unless the user chose, and only where it is imported before numpy."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SHOW = "import os; {first}import tiecore.cli; print(os.environ.get('OPENBLAS_NUM_THREADS'))"


def _setting(first: str = "", **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = SHOW.format(first=first)
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean | env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_command_runs_openblas_on_one_thread():
    assert _setting() == "1"


def test_a_users_setting_is_kept():
    assert _setting(OPENBLAS_NUM_THREADS="4") == "4"


def test_a_program_that_imported_numpy_first_is_left_alone():
    assert _setting("import numpy; ") == "None"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_numpy_starts_no_blas_threads_under_the_command():
    code = "import tiecore.cli, numpy, os; print(len(os.listdir(f'/proc/{os.getpid()}/task')))"
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True)
    assert done.stdout.strip() == "1"  # the main thread alone

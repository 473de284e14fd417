"""What the explorer's memory checks share: large uploads, the server's resident memory, and
visitors who upload and leave.

``write_upload()`` writes a valid TREC run of a given size (ties included) and its qrels;
``resident()`` reads a process's resident memory; ``uploaded()`` is one visitor (a
browser context of its own, so a Streamlit session of its own) who opens the explorer,
uploads a run and its qrels through the real file inputs, waits for the page, and closes
the tab when the ``with`` block ends; ``settle()`` waits until the server's memory is back
under a line (a state, with a limit), never asserting how long that took.  Used by
``tests/app/test_app_memory.py`` and ``benchmarks/app_memory.py``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from browser_kit import error_messages, new_tab, timed, wait_until_rendered

#: Queries of a generated run (each ranks the same number of documents).
QUERIES = 1000


def write_upload(folder: Path, megabytes: float, seed: int) -> tuple[Path, Path]:
    """A TREC run of about ``megabytes`` MB (plain text, scores with ties) and its qrels
    -> (run, qrels); ``seed`` makes each visitor's files differ (their own content key)."""
    rng = np.random.default_rng(seed)
    line = 37  # bytes of one run line, as written below (on average)
    docs = max(int(megabytes * 1e6 / line / QUERIES), 1)
    qids = np.repeat(np.arange(QUERIES), docs)
    ranks = np.tile(np.arange(1, docs + 1), QUERIES)
    docnos = rng.permutation(qids.size)  # distinct: a docno at most once per query
    scores = np.round(100.0 - ranks / 7.0, 1)  # about seven docs share each score
    text = "".join(
        f"q{q:04d} Q0 d{d:09d} {r} {s:.1f} memrun{seed}\n"
        for q, d, r, s in zip(
            qids.tolist(), docnos.tolist(), ranks.tolist(), scores.tolist(), strict=True
        )
    )
    run = folder / f"memory{seed}.run"
    run.write_text(text)
    judged = np.arange(0, docs, 10)  # every tenth document of each query, levels 0-2
    rows = [
        f"q{q:04d} 0 d{docnos[q * docs + j]:09d} {int(rng.integers(0, 3))}\n"
        for q in range(QUERIES)
        for j in judged
    ]
    qrels = folder / f"memory{seed}.qrels"
    qrels.write_text("".join(rows))
    return run, qrels


def resident(pid: int) -> int:
    """The resident memory of process ``pid`` in bytes (``VmRSS`` of ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def visit(browser, url: str, path: str = "") -> None:
    """A visitor who opens ``path`` on the bundled sample and leaves."""
    context, tab = new_tab(browser)
    tab.goto(f"{url}/{path}")
    wait_until_rendered(tab)
    context.close()


#: True once the sidebar names the uploaded runs or the page shows an error.
SHOWN = """() => document.body.innerText.includes('uploaded run')
    || document.querySelector('[data-testid="stAlertContentError"], [data-testid="stException"]')
        !== null"""


def upload_in(tab, url: str, run: Path, qrels: Path, path: str = "") -> tuple[list[str], str]:
    """In ``tab``: open ``path``, upload ``run`` and ``qrels``, wait until the page is drawn on
    them -> (the error messages on the page, the page's text)."""
    tab.goto(f"{url}/{path}")
    wait_until_rendered(tab)
    label = tab.locator("label").filter(has_text="Upload TREC runs and qrels").first
    timed(tab, label.click)
    inputs = tab.locator('[data-testid="stFileUploaderDropzoneInput"]')
    timed(tab, lambda: inputs.nth(1).set_input_files(str(qrels)))
    timed(tab, lambda: inputs.nth(0).set_input_files(str(run)))
    tab.wait_for_function(SHOWN, polling=100)  # a large file may arrive after that rerun
    wait_until_rendered(tab)
    return error_messages(tab), tab.locator('[data-testid="stApp"]').inner_text()


@contextlib.contextmanager
def uploaded(browser, url: str, run: Path, qrels: Path, path: str = "") -> Iterator[tuple]:
    """One visitor (a tab of its own): :func:`upload_in`; yields what it returns, then closes
    the tab (the visitor leaves)."""
    context, tab = new_tab(browser)
    try:
        yield upload_in(tab, url, run, qrels, path)
    finally:
        context.close()


def replace_run(tab, run: Path) -> tuple[list[str], str]:
    """In an open tab whose visitor has uploaded runs and qrels: remove the runs shown (their
    x buttons), upload ``run`` instead, wait until the page is drawn on it -> (the error
    messages on the page, the page's text)."""
    runs = tab.locator('[data-testid="stFileUploader"]').first
    delete = runs.locator('[data-testid="stFileChipDeleteBtn"]')  # a file's x
    while delete.count():
        before = delete.count()
        timed(tab, delete.first.click)
        tab.wait_for_function(
            f"""() => document.querySelector('[data-testid="stFileUploader"]')
                .querySelectorAll('[data-testid="stFileChipDeleteBtn"]').length < {before}"""
        )
    inputs = tab.locator('[data-testid="stFileUploaderDropzoneInput"]')
    timed(tab, lambda: inputs.nth(0).set_input_files(str(run)))
    tab.wait_for_function(SHOWN, polling=100)
    wait_until_rendered(tab)
    return error_messages(tab), tab.locator('[data-testid="stApp"]').inner_text()


def settle(pid: int, line: int, limit: float) -> int:
    """Wait until process ``pid``'s resident memory is at most ``line`` bytes, or ``limit``
    seconds have passed -> its resident memory then."""
    deadline = time.monotonic() + limit
    while (now := resident(pid)) > line and time.monotonic() < deadline:
        time.sleep(1.0)
    return now

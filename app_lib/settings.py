"""The explorer's settings and limits, as data: the lowest layer of ``app_lib``.

Every other module of the app layer may import this one; it imports only
:mod:`tiecore`.  It holds the sidebar's :class:`Settings` (they key the caches),
the measures it offers, and the bounds that keep one server's memory in check:
how much an upload may take, and how many results the caches keep and for how
long (so memory returns once the sessions that needed it have ended).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tiecore import DEFAULT_MEASURES, Measure
from tiecore.errors import InputError

#: Measures offered in the sidebar; any other ir_measures name can be typed in.
MEASURE_CHOICES = (
    "P@5",
    "P@10",
    "P@20",
    "P@100",
    "R@10",
    "R@100",
    "F1@10",
    "AP",
    "AP@100",
    "RR",
    "RR@10",
    "nDCG",
    "nDCG@5",
    "nDCG@10",
    "nDCG@20",
    "Rprec",
    "Success@1",
    "Success@10",
    "Bpref",
)
#: The highest relevance level the sidebar accepts (higher ones are refused with a reason).
MAX_LEVEL = 10


@dataclass(frozen=True)
class Settings:
    """The sidebar's settings; every field is hashable (they key the caches)."""

    measures: tuple[str, ...] = DEFAULT_MEASURES
    rel_level: int = 1
    gain: str = "linear"
    tiebreak: str = "trec_eval"
    samples: int = 200
    seed: int = 0


def with_gain(names: Sequence[str], gain: str) -> tuple[tuple[str, ...], list[str]]:
    """Parse measure names and give nDCG the chosen gain -> (names, error messages)."""
    out, errors = [], []
    for name in names:
        try:
            measure = Measure.parse(name)
        except InputError as error:
            errors.append(measure_message(error))
            continue
        if measure.family == "nDCG":
            measure = replace(measure, gain=gain)  # keeps ideal=max and the like
        if str(measure) not in out:
            out.append(str(measure))
    return tuple(out), errors


#: A refused cutoff or recall level in tiecore's words: ``'P@x': cutoff 'x' is not ...``,
#: ``'P@0': a cutoff must be ...``; the name quoted first.
_BAD_AT = re.compile(r"^(?P<name>'[^']*'|\"[^\"]*\"): (?:a )?(?P<what>cutoff|recall level) ")
_UNKNOWN = re.compile(r"^unknown measure (?P<name>'[^']*'|\"[^\"]*\")$")


def measure_message(error: InputError) -> str:
    """A measure name tiecore refused, in a reader's words (tiecore's own message, written
    for the command line, names the largest cutoff its integers hold).

    >>> from tiecore import Measure
    >>> def said(name):
    ...     try:
    ...         Measure.parse(name)
    ...     except InputError as error:
    ...         return measure_message(error)
    >>> said("P@x")
    "'P@x': the cutoff after @ must be a whole number, such as P@10"
    >>> said("nDCG@0")
    "'nDCG@0': the cutoff after @ must be a whole number, such as nDCG@10"
    >>> said("IPrec@x")
    "'IPrec@x': the recall level after @ must be a number from 0 to 1, such as IPrec@0.5"
    >>> said("IPrec@2")  # tiecore's words are plain already
    "'IPrec(recall=2)': IPrec's recall must be from 0 to 1"
    >>> said("bogus")[:61]
    "'bogus' is not a measure tiecore knows; it knows P, R, F1, AP"
    """
    problem = str(error.problem)
    bad = _BAD_AT.match(problem)
    if bad:
        name = bad["name"]
        family = name[1:-1].strip().partition("@")[0]
        if bad["what"] == "recall level":
            return (
                f"{name}: the recall level after @ must be a number from 0 to 1, "
                f"such as {family}@0.5"
            )
        return f"{name}: the cutoff after @ must be a whole number, such as {family}@10"
    unknown = _UNKNOWN.match(problem)
    if unknown:
        known = str(error.expected or "").removeprefix("one of ")
        return f"{unknown['name']} is not a measure tiecore knows" + (
            f"; it knows {known}" if known else ""
        )
    return problem + (f" (expected {error.expected})" if error.expected else "")


# ----------------------------------------------------------------------------- limits


def _positive(name: str, default: float) -> float:
    """A positive number from the environment variable ``name``, else ``default``."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


#: Seconds a cached result outlives its last use (``TIECORE_APP_CACHE_TTL``; 30 minutes):
#: a result nobody asked for since is dropped, so the memory of a closed session returns.
CACHE_TTL = _positive("TIECORE_APP_CACHE_TTL", 1800.0)
#: How many times its size a file may grow when gunzipped.  Text compresses 4 to 10 times
#: (the Robust03 runs and qrels 5.7 and 5.8, the MSLR sample 5.5); a file that grows more is
#: refused before it is read (a small file that inflates to gigabytes would stop the server).
MAX_INFLATION = 12
#: Bytes of memory the readers take at their peak per byte of (gunzipped) text, rounded up
#: (measured as the growth of the resident memory: a TREC run 11, qrels 17, a LETOR file 22).
READ_FACTOR = 24
#: Text bytes one upload may hold (``TIECORE_APP_UPLOAD_TEXT``; 200 MiB, Streamlit's largest
#: upload), whatever memory is free; less where tiecore's memory budget
#: (:func:`tiecore.engine.budget.memory_budget`) divided by :data:`READ_FACTOR` is less.
MAX_UPLOAD_TEXT = int(_positive("TIECORE_APP_UPLOAD_TEXT", float(200 << 20)))
#: Bytes of results each scope keeps (``TIECORE_APP_CACHE_BYTES``; 128 MiB): the results of
#: the bundled samples, shared by every session, and each session's results of its own
#: uploads (freed when the session ends).  Each cache has its share (:data:`CACHE_SHARES`),
#: counted in bytes (Streamlit's caches: pickled bytes; the app's own stores: the memory of
#: their frames and arrays); the least recently used results go first.
CACHE_BYTES = int(_positive("TIECORE_APP_CACHE_BYTES", float(128 << 20)))
#: Each cache's share of :data:`CACHE_BYTES` (they add up to 1).
CACHE_SHARES = {
    "evaluate": 0.20,
    "sampled": 0.10,
    "spread": 0.10,
    "modes": 0.05,
    "compare": 0.05,
    "figures": 0.10,
    "coarsened": 0.10,
    "iprec": 0.03,
    "profiles": 0.03,
    "groups": 0.03,
    "distribution": 0.03,
    "anatomy": 0.05,
    "matrix": 0.05,
    "sweep": 0.03,
    "shifts": 0.04,  # the drill-down's query x system shifts (app_lib.track)
    "lists": 0.01,  # the drill-down's ranked lists and values of one query
}


def cache_bytes(name: str) -> int:
    """Bytes the cache ``name`` may hold per scope: its share of :data:`CACHE_BYTES`.

    >>> cache_bytes("evaluate") == int(CACHE_BYTES * CACHE_SHARES["evaluate"])
    True
    """
    return int(CACHE_BYTES * CACHE_SHARES[name])


#: Bytes of uploads one session may hold (``TIECORE_APP_SESSION_BYTES``; 768 MiB): the files
#: as received and the data read from them.  An upload past it is refused in one line (the
#: previous data kept) rather than held.
SESSION_BYTES = int(_positive("TIECORE_APP_SESSION_BYTES", float(768 << 20)))
#: Bytes of memory the data read from an upload hold per byte of its text, rounded up (the
#: frames' memory over the text: a 40 MB TREC run 1.05, its qrels 1.9, the MSLR sample's
#: LETOR file 3.8, its query and document columns counted in each feature's frame); an upload
#: is checked against :data:`SESSION_BYTES` with it before it is read, and with the data's
#: own size after.
HELD_FACTOR = 4
#: Bytes of memory the runs of an archive or folder hold per byte of their text, rounded up
#: (measured 1.09: 150 runs of 50 queries x 1,000 docs, 241 MiB of text, 264 MiB of frames).
#: The archive reader holds one member's text besides the runs read, so a whole track is
#: bounded by this factor, not by the readers' peak (:data:`READ_FACTOR`) over all its text.
TRACK_HELD_FACTOR = 2
#: Seconds a visitor who left keeps their session (``TIECORE_APP_SESSION_GRACE``; 20): a
#: reconnect within them (a network blip) finds its uploads; then the session is closed and
#: its uploads, data and results are freed (Streamlit itself keeps a disconnected session
#: for ``server.disconnectedSessionTTL``, 120 s, and then drops it without freeing its
#: uploaded files).
SESSION_GRACE = _positive("TIECORE_APP_SESSION_GRACE", 20.0)
#: Test-only: ``TIECORE_APP_TEST_DELAY="Page title=seconds"`` makes every run of that page
#: wait that long under the run's spinner, so that a test can make one step slow on purpose
#: and check what a user sees then (tests/app/test_browser.py); unset, nothing waits.
TEST_DELAY_ENV = "TIECORE_APP_TEST_DELAY"


def step_delay(title: str) -> float:
    """Seconds the page called ``title`` waits on each run (:data:`TEST_DELAY_ENV`; 0).

    >>> import os
    >>> os.environ[TEST_DELAY_ENV] = "Playground=1.5"
    >>> step_delay("Playground"), step_delay("Overview")
    (1.5, 0.0)
    >>> del os.environ[TEST_DELAY_ENV]
    """
    page, _, seconds = os.environ.get(TEST_DELAY_ENV, "").partition("=")
    return float(seconds) if page == title and seconds else 0.0

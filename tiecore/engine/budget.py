"""Budgets of time and memory, checked before a long computation starts.

Every computation whose cost grows with a setting the user picks (a count such
as ``--samples``, ``--resamples`` or ``--bootstrap``) or with the size of a tie
group (ERR without a cutoff, infAP) is priced first by a cost model: a count of
steps from the sizes, times the seconds one step takes (measured on a 2-core
x86-64 machine, numpy 2, rounded up).  A request whose estimate passes the
budget is refused with an :class:`~tiecore.errors.InputError` that gives the
estimate and the largest setting that fits, before any work is done.

The budgets: :func:`time_budget` seconds (``TIECORE_TIME_BUDGET``, default
:data:`DEFAULT_SECONDS`) and :func:`memory_budget` bytes
(``TIECORE_MEMORY_BUDGET``, default half the memory available now).

A family whose exact value is priced per tie group in steps of its own (DP cells,
terms, compositions) refuses the costliest group past its budget of steps with
:func:`check_cost`, the one refusal they share; :func:`step_budget` and
:func:`budget_scope` say what that budget is (the family's own, a caller's scope, or
the family's default scaled with ``TIECORE_TIME_BUDGET``).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
from collections.abc import Callable, Iterator

import numpy as np

from tiecore.errors import InputError, Refusal

#: Seconds a computation may take by default.
DEFAULT_SECONDS = 60.0
#: Environment variables that set the budgets (seconds; bytes).
TIME_ENV, MEMORY_ENV = "TIECORE_TIME_BUDGET", "TIECORE_MEMORY_BUDGET"
#: Share of the available memory a computation may take by default.
MEMORY_SHARE = 0.5
#: Bytes that fit whatever memory is available (:func:`within` reads no file for them).
SMALL = 1 << 26

#: Seconds per cell of sampled mode: one sample of one tied row (draw, place, tally).
SAMPLE_SECONDS = 1.2e-7
#: Seconds per cell of the randomization test: one sign vector times (bytes x runs + pairs).
RESAMPLE_SECONDS = 5e-9
#: Seconds per cell of the bootstrap: one resample times (queries + runs + pairs).
BOOTSTRAP_SECONDS = 5e-8
#: Bytes per cell of the bootstrap: the resample counts and means (float64, with temporaries).
BOOTSTRAP_BYTES = 10


def time_budget() -> float:
    """Seconds a computation may take: ``TIECORE_TIME_BUDGET`` if set, else 60.

    >>> time_budget() > 0
    True
    """
    return _setting(TIME_ENV, DEFAULT_SECONDS)


def memory_budget() -> float:
    """Bytes a computation may take: ``TIECORE_MEMORY_BUDGET`` if set, else half of
    the memory available now: ``MemAvailable``, or less where a limit on this process
    (``ulimit -v``) or its control group (``memory.max``) leaves less."""
    free = [available_memory()]
    try:
        import resource  # lazy: not on Windows (the ImportError below)

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            free.append(soft - _status_bytes("VmSize:"))
    except (ImportError, OSError, ValueError):
        pass
    for limit, used in (
        ("memory.max", "memory.current"),
        ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes"),
    ):
        try:
            with open(f"/sys/fs/cgroup/{limit}") as fh, open(f"/sys/fs/cgroup/{used}") as gh:
                free.append(int(fh.read()) - int(gh.read()))
            break
        except (OSError, ValueError):
            continue
    return _setting(MEMORY_ENV, MEMORY_SHARE * max(min(free), 0))


def available_memory() -> int:
    """Bytes of memory available now: ``MemAvailable`` of /proc/meminfo, else all RAM.

    >>> available_memory() > 0
    True
    """
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 1 << 33


def _status_bytes(key: str) -> int:
    """A ``kB`` line of ``/proc/self/status`` in bytes (0 if absent)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _setting(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return float(default)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(name, None, f"{text!r} is not a budget", "a positive number")
    return value


def within(seconds: float, memory: float) -> bool:
    """Whether ``seconds`` and ``memory`` bytes fit both budgets (the memory left unread
    below :data:`SMALL` bytes, unless ``TIECORE_MEMORY_BUDGET`` is set: a cheap test for
    the ordinary case).

    >>> within(1.0, 1e6), within(1e9, 0.0)
    (True, False)
    """
    if seconds > time_budget():
        return False
    if memory <= SMALL and not os.environ.get(MEMORY_ENV, "").strip():
        return True
    return memory <= memory_budget()


def largest(cost: Callable[[int], tuple[float, float]], high: int) -> int:
    """The largest count ``k <= high`` whose ``cost(k) = (seconds, bytes)`` fits both
    budgets (0 if none); ``cost`` must grow with ``k``.

    >>> largest(lambda k: (k * 1.0, 0.0), 10**9) == int(time_budget())
    True
    """
    seconds, memory = time_budget(), memory_budget()
    low, high = 0, int(high)
    while low < high:
        mid = (low + high + 1) // 2
        s, m = cost(mid)
        if s <= seconds and m <= memory:
            low = mid
        else:
            high = mid - 1
    return low


def check(source: str, what: str, seconds: float, memory: float, fits: str) -> None:
    """Refuse (:class:`~tiecore.errors.Refusal`) work estimated at ``seconds`` and ``memory`` bytes
    when either passes its budget; ``fits`` says what would fit.

    >>> check("run r", "the work", 1.0, 1e3, "less")
    >>> check("run r", "the work", 1e9, 0.0, "less")
    Traceback (most recent call last):
    ...
    tiecore.errors.Refusal: run r: the work would take about 1e+09 s, more than the \
60 s allowed (TIECORE_TIME_BUDGET) (expected less)
    """
    limit_s, limit_m = time_budget(), memory_budget()
    if seconds > limit_s:
        raise Refusal(
            source,
            None,
            f"{what} would take about {seconds:.3g} s, more than the {limit_s:.3g} s "
            f"allowed ({TIME_ENV})",
            fits,
        )
    if memory > limit_m:
        raise Refusal(
            source,
            None,
            f"{what} would need about {_size(memory)} of memory, more than the "
            f"{_size(limit_m)} allowed ({MEMORY_ENV}, by default half the memory available)",
            fits,
        )


def _size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


def check_sample_time(samples: int, tied_rows: int, queries: int, measures: int) -> None:
    """Refuse ``samples`` random tie-breaks that would pass the time budget.

    Cost: ``samples x (tied_rows + queries x measures)`` cells of
    :data:`SAMPLE_SECONDS` (each sample draws a place for every row of a tie
    group and finishes every query's measures).
    """
    per = SAMPLE_SECONDS * (int(tied_rows) + int(queries) * max(int(measures), 1))
    samples = int(samples)
    if samples * per <= time_budget():
        return
    fits = largest(lambda k: (k * per, 0.0), samples)
    check(
        "samples",
        f"{samples} samples of {tied_rows} tied rows",
        samples * per,
        0.0,
        f"at most {fits} samples, or a larger {TIME_ENV}",
    )


def compare_cost(
    n_resamples: int, n_bootstrap: int, runs: int, queries: int
) -> dict[str, tuple[float, float]]:
    """``(seconds, bytes)`` of compare's randomization test and bootstrap intervals.

    Randomization: ``resamples x (ceil(queries / 8) x runs + pairs)`` cells (a sign
    vector is summed a byte of queries at a time, then compared per ordered pair),
    in chunks of bounded memory.  Bootstrap: ``bootstrap x (queries + runs + pairs)``
    cells of time (draws, the counts' product, the sorts of the runs' and the pairs'
    intervals) and ``bootstrap x (queries + pairs)`` float64 cells at once.

    >>> cost = compare_cost(2000, 2000, 10, 50)
    >>> bool(cost["resamples"][0] < 1 and cost["bootstrap"][1] < 1e8)
    True
    """
    pairs = runs * max(runs - 1, 0)
    flips = -(-max(queries, 1) // 8) * runs + pairs
    cells = queries + runs + pairs
    return {
        "resamples": (n_resamples * flips * RESAMPLE_SECONDS, 0.0),
        "bootstrap": (
            n_bootstrap * cells * BOOTSTRAP_SECONDS,
            n_bootstrap * (queries + max(runs, pairs)) * BOOTSTRAP_BYTES,
        ),
    }


def check_compare(n_resamples: int, n_bootstrap: int, runs: int, queries: int) -> None:
    """Refuse compare's ``n_resamples`` or ``n_bootstrap`` when either passes a budget."""
    cost = compare_cost(n_resamples, n_bootstrap, runs, queries)
    for option, count, noun in (
        ("resamples", n_resamples, "randomization resamples"),
        ("bootstrap", n_bootstrap, "bootstrap resamples"),
    ):
        seconds, memory = cost[option]
        if within(seconds, memory):
            continue

        def price(k: int, option: str = option) -> tuple[float, float]:
            return compare_cost(k, k, runs, queries)[option]

        fits = largest(price, count)
        check(
            option,
            f"{count} {noun} of {runs} runs on {queries} queries",
            seconds,
            memory,
            f"at most {fits} {noun}, or a larger {TIME_ENV} or {MEMORY_ENV}",
        )


#: The step budget of calls that pass none (:func:`budget_scope`), else None.
_SCOPED_STEPS: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "step_budget", default=None
)


@contextlib.contextmanager
def budget_scope(steps: float) -> Iterator[None]:
    """Within the block (this thread or task only), a family that reads
    :func:`step_budget` refuses tie groups past ``steps`` steps instead of its default:
    an interactive caller that would rather sample than wait.

    >>> with budget_scope(0.0):
    ...     step_budget(4e9)
    0.0
    >>> step_budget(4e9) == 4e9 * time_budget() / DEFAULT_SECONDS
    True
    """
    token = _SCOPED_STEPS.set(float(steps))
    try:
        yield
    finally:
        _SCOPED_STEPS.reset(token)


def step_budget(default: float, given: float | None = None) -> float:
    """The steps a call may take: ``given`` if not None, else the :func:`budget_scope`'s,
    else ``default`` (priced at the default time budget, :data:`DEFAULT_SECONDS`) in
    proportion to ``TIECORE_TIME_BUDGET`` when that is set.

    >>> step_budget(4e9, given=1.0)
    1.0
    """
    if given is not None:
        return given
    scoped = _SCOPED_STEPS.get()
    if scoped is not None:
        return scoped
    return default * time_budget() / DEFAULT_SECONDS


def check_cost(
    cost: np.ndarray,
    budget: float,
    *,
    run: str,
    what: str,
    instead: str | Callable[[int], str],
    group: Callable[[int], str] | None = None,
    unit: str = "steps",
    bound: bool = False,
) -> None:
    """Refuse (:class:`~tiecore.errors.Refusal`) the costliest entry of ``cost`` (steps per
    tie group, or one total) when it passes ``budget`` steps; otherwise do nothing.

    The message names the run, the group (``group(worst)``: its query and make-up),
    the exact computation (``what``), its cost in ``unit`` (``bound``: an upper bound,
    "up to") and the budget, and what to ask instead (``instead``, or
    ``instead(worst)`` where what fits depends on the group).

    >>> check_cost(np.array([3.0, 5.0]), 10.0, run="r", what="AP mean", instead="less")
    >>> check_cost(np.array([3.0, 50.0]), 10.0, run="r", what="AP mean", instead="less",
    ...            group=lambda g: f"query q has a tie group number {g}")
    Traceback (most recent call last):
    ...
    tiecore.errors.Refusal: run r: query q has a tie group number 1: the exact AP mean \
would need 50 steps, more than the 10 allowed (expected less)
    """
    cost = np.asarray(cost, dtype=np.float64).ravel()
    if not cost.size or not cost.max() > budget:
        return
    worst = int(np.argmax(cost))
    where = f"{group(worst)}: " if group is not None else ""
    up_to = "up to " if bound else ""
    raise Refusal(
        f"run {run}",
        None,
        f"{where}the exact {what} would need {up_to}{cost[worst]:.3g} {unit}, more than the "
        f"{budget:.3g} allowed",
        instead(worst) if callable(instead) else instead,
    )

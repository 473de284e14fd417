"""The one evaluation core: a run's checked columns to per-query values and the summary.

Every evaluation path runs through :class:`Evaluator`: :func:`tiecore.evaluate` (runs
as DataFrames, checked by :mod:`tiecore.io.frames`), ``tiecore eval``'s small-input
path (:mod:`tiecore.evaluation.small`, no pandas or pyarrow) and its arrow path
(:mod:`tiecore.evaluation.arrow`, no pandas).  They differ only in how they read a
run's columns (``qid, docno, score``) into a :class:`~tiecore.engine.ranking.Ranking`
and in how they shape the rows; the tie mode is decided here, once (:data:`MODE`):

============  =====================  ===========================  ====================
``ties``      the ranking's order    per-query values             summary row
============  =====================  ===========================  ====================
oblivious     the tie-break          one ordering's profile       mean over queries
aware         the file's (unused)    the expected profile         mean over queries
sampled       the file's (unused)    ``samples`` drawn orderings  mean, std, stderr
============  =====================  ===========================  ====================

As ir_measures' evaluators, an :class:`Evaluator` is built once per qrels (its
:class:`~tiecore.engine.judgments.Judgments`) and options, then applied run by run.
Nothing here imports pandas or pyarrow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from tiecore.engine import budget, kernels, profiles
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.evaluation import summaries
from tiecore.measures import Measure
from tiecore.measures.registry import refuse_inexact

#: Copies of the ``(samples, queries)`` values per measure alive at the peak (the draws,
#: their stack, the concatenated means and two centred temporaries; measured).
_VALUE_COPIES = 5
#: Bytes per cell of a batch of draws (keys, orders, profile components, contributions).
_CELL_BYTES = 96

#: Builds a run's ranking against the judgments: ``build(judgments, tiebreak=, seed=,
#: name=)``, e.g. :meth:`Ranking.build` with the run bound (``functools.partial``).
Builder = Callable[..., Ranking]


def check_measures(measures: Sequence[Measure], ties: str) -> None:
    """Refuse, where the mode is exact (``ties="aware"``), a measure without an exact
    tie-aware value."""
    if MODE[ties].exact:
        refuse_inexact(measures, f"ties={ties!r}", spread=False)


def sample_memory(samples: int, queries: int, measures: int, rows: int) -> int:
    """Bytes sampled mode needs for one run: its per-query values and a batch of draws.

    ``5 * 8 * samples * queries * measures`` (about five copies of the float64 values
    are alive at the peak) plus 96 bytes per cell of a batch of draws, which holds
    ``min(samples * rows, 2_000_000)`` cells, or one draw of ``rows`` when that is more.

    >>> sample_memory(1000, 50, 10, 50_000)  # 20 MB of values, 192 MB of draws
    212000000
    """
    from tiecore.engine.sampling import BATCH_CELLS  # lazy: sampled mode only (~7 ms on eval)

    values = _VALUE_COPIES * 8 * samples * max(queries, 1) * max(measures, 1)
    return values + _CELL_BYTES * max(min(samples * rows, BATCH_CELLS), rows)


def check_samples(
    samples: int,
    queries: int,
    measures: int,
    rows: int,
    *,
    limit: int | None = None,
    name: str = "samples",
) -> None:
    """Refuse a sample count whose memory (:func:`sample_memory`) exceeds ``limit``.

    The limit is :func:`~tiecore.engine.budget.memory_budget` unless given (the one
    budget of every guard: ``TIECORE_MEMORY_BUDGET``, else half the memory available,
    less under ``ulimit -v`` or a control group's limit); the message says how much
    the count would need and the largest count that fits (a bisection: the need grows
    with the count).
    """
    samples, queries, measures, rows = map(int, (samples, queries, measures, rows))
    need = sample_memory(samples, queries, measures, rows)
    limit = int(budget.memory_budget()) if limit is None else limit
    if need <= limit:
        return
    low, high = 0, samples
    while low < high:
        mid = (low + high + 1) // 2
        if sample_memory(mid, queries, measures, rows) <= limit:
            low = mid
        else:
            high = mid - 1
    fits = f"use at most {low} samples" if low >= 2 else "not even 2 samples fit"
    raise ValueError(
        f"{name} {samples} would need about {_size(need)} of memory ({queries} queries x "
        f"{measures} measures x 8 bytes per sample, about {_VALUE_COPIES} copies, plus "
        f"random draws for {rows} rows), more than the {_size(limit)} allowed "
        f"({budget.MEMORY_ENV}, else half the memory available); {fits}"
    )


def _size(n: int) -> str:
    """Bytes for people: ``3.2 GB``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


def query_values(
    ranking: Ranking,
    judgments: Judgments,
    measures: Sequence[Measure],
    *,
    ties: str = "aware",
    depth: int | None = None,
    samples: int = 1000,
    rng: np.random.Generator | None = None,
) -> dict[Measure, np.ndarray]:
    """Per-query values of ``measures`` on one ranking, in the judgments' query order.

    Oblivious and aware give one value per query (arrays ``(queries,)``): the
    measures' head-sum kernels over the ranking's profile (one ordering's, or the
    expectation over all orderings of the tied docs).  Sampled gives ``(samples,
    queries)``, after the memory and time budgets are checked.  ``ranking`` must
    have been built with the wanted tie-break for the oblivious mode; the other modes
    ignore its order.
    """
    return MODE[ties].values(ranking, judgments, measures, depth, samples, rng)


def _oblivious(ranking, judgments, measures, depth, samples, rng) -> dict:
    """One ordering (the ranking's): its profile, then the measures' head-sum kernels."""
    return kernels.values(
        measures, profiles.oblivious(ranking, judgments), ranking, judgments, depth
    )


def _aware(ranking, judgments, measures, depth, samples, rng) -> dict:
    """The expected profile over every ordering of the tied docs, then the kernels."""
    profile = profiles.aware(ranking, judgments, depth)
    return kernels.values(measures, profile, ranking, judgments, depth)


def _sampled(ranking, judgments, measures, depth, samples, rng) -> dict:
    """``samples`` random orderings, once the memory and time they need fit the budgets.

    The sampler is imported here, in sampled mode only: its module costs every other
    command about a millisecond of start-up."""
    from tiecore.engine.sampling import sample_values  # lazy: sampled mode only (~7 ms on eval)

    check_samples(samples, len(judgments.qids), len(measures), ranking.rank.size)
    tied = int(ranking.size[ranking.size > 1].sum())  # the rows a sample draws, at most
    budget.check_sample_time(samples, tied, len(judgments.qids), len(measures))
    rng = rng if rng is not None else np.random.default_rng(0)
    return sample_values(ranking, judgments, list(measures), samples=samples, rng=rng, depth=depth)


def _exact_columns(found: dict, stacked: np.ndarray) -> dict[str, np.ndarray]:
    """One value per query ``(measures, queries)``, then their mean (GMAP where geometric)."""
    mean = summaries.mean(stacked, axis=1) if stacked.shape[1] else np.zeros((len(found), 1))
    summaries.geometric_summaries(found, stacked, mean)
    return {"value": np.concatenate([stacked, mean], axis=1)}


def _sampled_columns(found: dict, stacked: np.ndarray) -> dict[str, np.ndarray]:
    """Draws ``(measures, samples, queries)``: per query and for the summary (per sample
    the mean over queries, or GMAP) the mean over the samples, summed shifted by the
    first sample so that a value that never varies is kept exactly (std 0), ``std``
    (ddof 1) and ``stderr = std / sqrt(samples)``."""
    means = summaries.mean(stacked, axis=2)
    summaries.geometric_summaries(found, stacked, means)
    draws = np.concatenate([stacked, means], axis=2)
    first = draws[:, :1]
    columns = {
        "value": first[:, 0] + summaries.mean(draws - first, axis=1)[:, 0],
        "std": (draws - first).std(axis=1, ddof=1),
    }
    columns["stderr"] = columns["std"] / np.sqrt(stacked.shape[1])
    return columns


class Mode(NamedTuple):
    """What a tie mode does, declared once for every path (:data:`MODE`)."""

    ordered: bool  # the ranking is built in the tie-break's order (else the file's)
    exact: bool  # measures without an exact tie-aware value are refused
    drawn: bool  # a query's values are ``(samples,)`` draws (else one value)
    values: Callable[..., dict]  # (ranking, judgments, measures, depth, samples, rng)
    columns: Callable[[dict, np.ndarray], dict[str, np.ndarray]]  # the rows' values


#: The tie modes (:data:`tiecore.options.MODES`, in its order) and what each does: the
#: table in the module's docstring, as data.
MODE: dict[str, Mode] = {
    "oblivious": Mode(True, False, False, _oblivious, _exact_columns),
    "aware": Mode(False, True, False, _aware, _exact_columns),
    "sampled": Mode(False, False, True, _sampled, _sampled_columns),
}


class Summary(NamedTuple):
    """One run's values as rows: ``qids`` (the chosen queries, then None for the summary)
    and ``columns`` (``value``, and ``std, stderr`` when sampled), each ``(measures,
    len(qids))``, the measures in the order of ``labels``."""

    labels: list[str]
    qids: np.ndarray
    columns: dict[str, np.ndarray]


class Evaluator:
    """The evaluation of runs against one set of judgments, in one tie mode.

    Built once per qrels and options, then :meth:`run` on each run (bit for bit the
    same values whichever path reads the run: the run's generator depends on the seed
    and the run's name only, :func:`~tiecore.evaluation.summaries.run_seed`).  A plain
    class with slots, not a dataclass: the start-up path imports it (1 ms less).

    Parameters
    ----------
    judgments : Judgments
        The qrels, with the relevance threshold applied.
    measures : sequence of Measure
        The measures, parsed; ``ties="aware"`` refuses those without an exact value.
    ties, tiebreak, samples, seed, depth, complete
        As in :func:`tiecore.evaluate`.

    Examples
    --------
    Doc ``c``, the one relevant, is tied with ``b`` below ``a``: aware P@2 is the mean
    over both orders of the tie (1/2 and 0), RR the mean of 1/2 and 1/3.

    >>> from functools import partial
    >>> from tiecore.measures import parse_measures
    >>> judgments = Judgments.from_small(["1"], ["c"], np.array([1]))
    >>> evaluator = Evaluator(judgments, parse_measures(["P@2", "RR"]), ties="aware")
    >>> run = (["1", "1", "1"], ["a", "b", "c"], np.array([2.0, 1.0, 1.0]))
    >>> ranking, found = evaluator.run("run", partial(Ranking.build_small, *run))
    >>> summary = evaluator.summary(ranking.counts > 0, found)
    >>> summary.labels, summary.columns["value"].round(4).tolist()
    (['P@2', 'RR'], [[0.25, 0.25], [0.4167, 0.4167]])
    """

    __slots__ = (
        "complete",
        "depth",
        "judgments",
        "measures",
        "mode",
        "samples",
        "seed",
        "tiebreak",
        "ties",
    )

    def __init__(
        self,
        judgments: Judgments,
        measures: Sequence[Measure],
        ties: str = "aware",
        tiebreak: str = "trec_eval",
        samples: int = 1000,
        seed: int = 0,
        depth: int | None = None,
        complete: bool = False,
    ) -> None:
        self.judgments, self.measures = judgments, tuple(measures)
        self.ties, self.tiebreak, self.samples, self.seed = ties, tiebreak, samples, seed
        self.depth, self.complete = depth, complete
        self.mode = MODE[ties]  # the one dispatch on the tie mode
        check_measures(self.measures, ties)

    @property
    def order(self) -> str:
        """The order a run's ranking is built in: the tie-break when oblivious, else the
        file's (aware and sampled see the tie groups, not an order inside them)."""
        return self.tiebreak if self.mode.ordered else "file_order"

    @property
    def splittable(self) -> bool:
        """Whether a run may be evaluated in query partitions: not under the random
        tie-break, whose seeded permutation covers the run's rows as a whole."""
        return self.order != "random"

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of one query's values: ``(samples,)`` when sampled, else ``()``."""
        return (self.samples,) if self.mode.drawn else ()

    def rng(self, name: str) -> np.random.Generator | None:
        """The run's generator when something draws (sampled, the random tie-break),
        else None: numpy.random is then never imported (20 ms of start-up)."""
        if self.mode.drawn or self.order == "random":
            return summaries.run_seed(self.seed, name)
        return None

    def run(self, name: str, build: Builder) -> tuple[Ranking, dict[Measure, np.ndarray]]:
        """A run's ranking (``build(judgments, tiebreak=, seed=, name=)``) and its
        per-query values (:func:`query_values`), in the judgments' query order."""
        rng = self.rng(name)
        ranking = build(self.judgments, tiebreak=self.order, seed=rng, name=name)
        return ranking, self.values(ranking, rng)

    def values(
        self, ranking: Ranking, rng: np.random.Generator | None = None
    ) -> dict[Measure, np.ndarray]:
        """:func:`query_values` of a ranking built in :attr:`order`."""
        return self.mode.values(
            ranking, self.judgments, self.measures, self.depth, self.samples, rng
        )

    def summary(self, present: np.ndarray, found: dict[Measure, np.ndarray]) -> Summary:
        """The values of the queries shown (all of the judgments' with ``complete``, else
        those in ``present``) and their summary, the mean over those queries.

        Sampled: each query's and the summary's mean over the samples (summed shifted by
        the first sample, so a value that never varies is kept exactly, std 0), ``std``
        (ddof 1) and ``stderr = std / sqrt(samples)``; the summary of a geometric family
        is its GMAP (:func:`~tiecore.evaluation.summaries.geometric_summaries`).
        """
        chosen = np.ones(len(self.judgments.qids), bool) if self.complete else present
        qids = np.append(self.judgments.qids[chosen].astype(object), None)
        stacked = np.stack([value[..., chosen] for value in found.values()])  # measures first
        columns = self.mode.columns(found, stacked)
        return Summary([str(m) for m in found], qids, columns)

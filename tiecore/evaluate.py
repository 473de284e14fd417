"""``evaluate``: every measure of every run in one of three tie modes, as a tidy frame."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from tiecore import kernels, profiles
from tiecore.judgments import Judgments
from tiecore.measures import Measure, parse_measures
from tiecore.ranking import TIEBREAKS, Ranking
from tiecore.sampling import sample_values

MODES = ("oblivious", "aware", "sampled")

Runs = pd.DataFrame | Mapping[str, pd.DataFrame]


def as_run_dict(runs: Runs) -> dict[str, pd.DataFrame]:
    """One run or a mapping of runs -> ``{name: run}`` (a lone run keeps ``attrs['name']``)."""
    if isinstance(runs, pd.DataFrame):
        return {runs.attrs.get("name") or "run": runs}
    return dict(runs)


def run_seed(seed: int, name: str) -> np.random.Generator:
    """A generator for one run: the same seed and name always draw the same orders."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _validate(ties: str, tiebreak: str, samples: int, depth: int | None) -> None:
    if ties not in MODES:
        raise ValueError(f"ties must be one of {MODES}, got {ties!r}")
    if tiebreak not in TIEBREAKS:
        raise ValueError(f"tiebreak must be one of {TIEBREAKS}, got {tiebreak!r}")
    if ties == "sampled" and (not isinstance(samples, int | np.integer) or samples < 2):
        raise ValueError(f"samples must be an integer >= 2, got {samples!r}")
    check_depth(depth)


def check_depth(depth: int | None) -> None:
    """``depth`` (trec_eval ``-M``) is None or a positive integer."""
    if depth is not None and (not isinstance(depth, int | np.integer) or depth < 1):
        raise ValueError(f"depth must be a positive integer, got {depth!r}")


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

    Oblivious and aware give one value per query (arrays ``(queries,)``); sampled
    gives ``(samples, queries)``.  ``ranking`` must have been built with the
    wanted tie-break for the oblivious mode; the other modes ignore its order.
    """
    if ties == "sampled":
        rng = rng if rng is not None else np.random.default_rng(0)
        return sample_values(
            ranking, judgments, list(measures), samples=samples, rng=rng, depth=depth
        )
    profile = (
        profiles.aware(ranking, judgments, depth)
        if ties == "aware"
        else profiles.oblivious(ranking, judgments)
    )
    return {m: kernels.values(m, profile, ranking, judgments, depth) for m in measures}


def evaluate(
    runs: Runs,
    qrels: pd.DataFrame,
    measures: str | Measure | Sequence[str | Measure],
    *,
    ties: str = "aware",
    tiebreak: str = "trec_eval",
    samples: int = 1000,
    seed: int = 0,
    rel_level: int = 1,
    depth: int | None = None,
    complete: bool = False,
    per_query: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> pd.DataFrame:
    """Evaluate runs against qrels with tie-oblivious, tie-aware or sampled measures.

    Parameters
    ----------
    runs : DataFrame or mapping of name to DataFrame
        Columns ``qid``, ``docno``, ``score`` (see :func:`tiecore.read_run`).
    qrels : DataFrame
        Columns ``qid``, ``docno``, ``level`` (see :func:`tiecore.read_qrels`).
    measures : str, Measure or list of them
        Names such as ``"P@10"``, ``"AP"``, ``"nDCG(gain=exp)@10"``.
    ties : {"aware", "oblivious", "sampled"}
        ``aware``: exact mean over all orderings of tied docs; ``oblivious``:
        one ordering chosen by ``tiebreak``; ``sampled``: ``samples`` random
        tie-breaks, reported as mean, ``std`` and ``stderr``.
    tiebreak : str
        Oblivious order inside ties: ``trec_eval`` (docno descending),
        ``docno_asc``, ``file_order``, ``optimistic``, ``pessimistic``, ``random``.
    samples, seed : int
        Sampled mode (and the ``random`` tie-break): how many draws, which seed.
    rel_level : int
        Lowest relevant qrels level (trec_eval ``-l``).
    depth : int, optional
        Cut every ranking at this many docs first (trec_eval ``-M``).
    complete : bool
        Average over every qrels query, missing ones scoring 0 (trec_eval ``-c``).
    per_query : bool
        Also return one row per query, before the ``all`` row.
    progress : callable, optional
        Called as ``progress(done, total, name)`` after each run.

    Returns
    -------
    DataFrame
        Columns ``run, qid, measure, value`` (sampled adds ``std, stderr``).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["c"], "level": [1]})
    >>> evaluate(run, qrels, ["P@2", "RR"], ties="aware")[["measure", "value"]].round(4)
      measure   value
    0     P@2  0.2500
    1      RR  0.4167
    >>> float(evaluate(run, qrels, "RR", ties="oblivious")["value"].iloc[0])
    0.5
    """
    _validate(ties, tiebreak, samples, depth)
    measures = parse_measures(
        list(measures) if not isinstance(measures, str | Measure) else measures
    )
    judgments = Judgments.from_qrels(qrels, rel_level)
    frames = []
    runs = as_run_dict(runs)
    for done, (name, run) in enumerate(runs.items(), start=1):
        rng = run_seed(seed, name)
        order = tiebreak if ties == "oblivious" else "file_order"
        ranking = Ranking.build(run, judgments, tiebreak=order, seed=rng, name=name)
        found = query_values(
            ranking, judgments, measures, ties=ties, depth=depth, samples=samples, rng=rng
        )
        frames.append(_tidy(name, judgments, ranking, found, complete, per_query, ties))
        if progress is not None:
            progress(done, len(runs), name)
    return pd.concat(frames, ignore_index=True)


def _tidy(name, judgments, ranking, found, complete, per_query, ties) -> pd.DataFrame:
    """Rows ``run, qid, measure, value[, std, stderr]``: per measure, queries then ``all``."""
    chosen = np.ones(len(judgments.qids), bool) if complete else ranking.counts > 0
    qids = np.append(judgments.qids[chosen], "all")
    stacked = np.stack([value[..., chosen] for value in found.values()])  # measures first
    if ties == "sampled":  # (measures, samples, queries)
        means = stacked.mean(axis=2, keepdims=True)
        draws = np.concatenate([stacked, means], axis=2)
        first = draws[:, :1]  # shifted sums: a query that never varies keeps its value, std 0
        columns = {
            "value": first[:, 0] + (draws - first).mean(axis=1),
            "std": (draws - first).std(axis=1, ddof=1),
        }
        columns["stderr"] = columns["std"] / np.sqrt(stacked.shape[1])
    else:
        mean = (
            stacked.mean(axis=1, keepdims=True) if stacked.shape[1] else np.zeros((len(found), 1))
        )
        columns = {"value": np.concatenate([stacked, mean], axis=1)}
    keep = slice(None) if per_query else slice(-1, None)
    columns = {key: value[:, keep].ravel() for key, value in columns.items()}
    shown = qids[keep]
    return pd.DataFrame(
        {
            "run": name,
            "qid": np.tile(shown, len(found)),
            "measure": np.repeat([str(m) for m in found], len(shown)),
            **columns,
        }
    )

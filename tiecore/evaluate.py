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
    if depth is not None and (not isinstance(depth, int | np.integer) or depth < 1):
        raise ValueError(f"depth must be a positive integer, got {depth!r}")


def per_query(
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
    per_query_rows: bool = False,
    per_query: bool | None = None,
    progress: Callable[[str], None] | None = None,
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
        Called with a short message as each run starts.

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
    if per_query is not None:
        per_query_rows = per_query
    _validate(ties, tiebreak, samples, depth)
    measures = parse_measures(
        list(measures) if not isinstance(measures, str | Measure) else measures
    )
    judgments = Judgments.from_qrels(qrels, rel_level)
    frames = []
    for name, run in as_run_dict(runs).items():
        if progress is not None:
            progress(f"evaluating {name}")
        rng = run_seed(seed, name)
        order = tiebreak if ties == "oblivious" else "file_order"
        ranking = Ranking.build(run, judgments, tiebreak=order, seed=rng, name=name)
        found = per_query_values(
            ranking, judgments, measures, ties=ties, depth=depth, samples=samples, rng=rng
        )
        frames.append(_tidy(name, judgments, ranking, found, complete, per_query_rows, ties))
    return pd.concat(frames, ignore_index=True)


per_query_values = per_query


def _tidy(name, judgments, ranking, found, complete, per_query_rows, ties) -> pd.DataFrame:
    """Rows ``run, qid, measure, value[, std, stderr]``: queries then ``all``."""
    chosen = np.ones(len(judgments.qids), bool) if complete else ranking.counts > 0
    qids = judgments.qids[chosen]
    parts = []
    for measure, value in found.items():
        value = value[..., chosen]
        if ties == "sampled":
            mean_of_queries = value.mean(axis=1)
            frame = {
                "value": np.append(value.mean(axis=0), mean_of_queries.mean()),
                "std": np.append(value.std(axis=0, ddof=1), mean_of_queries.std(ddof=1)),
            }
            frame["stderr"] = frame["std"] / np.sqrt(value.shape[0])
        else:
            frame = {"value": np.append(value, value.mean() if value.size else 0.0)}
        frame = pd.DataFrame(frame)
        frame.insert(0, "measure", str(measure))
        frame.insert(0, "qid", np.append(qids, "all"))
        parts.append(frame if per_query_rows else frame.iloc[-1:])
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "run", name)
    return out

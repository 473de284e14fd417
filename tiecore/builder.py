"""Build a scoring function from LETOR features and watch ties appear as its scores coarsen.

A weighted sum of chosen features (each scaled to 0..1 within every query first,
LETOR's query-level normalisation, so that weights compare features of
different ranges) is a continuous score; in
practice scores are often coarse: counts, clicks, quantised model outputs.
:func:`quantise` maps a score to ``levels`` equal-width bins (order kept, near
scores merged), and :func:`sweep` shows, level count by level count, how the
share of tied rows grows and how the measure's tie-oblivious value drifts away
from the tie-aware one, with the exact tie sd, the range over all orderings and
the built function's rank among the given features.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tiecore._validation import BUILDER, LEVEL_LIST, LEVELS, validate_params
from tiecore.errors import TieCoreWarning

#: Columns of :func:`sweep`.
COLUMNS = (
    "levels", "distinct_scores", "share_tied_rows", "largest_group", "oblivious", "aware",
    "min", "max", "tie_sd", "rank_aware", "rank_oblivious", "features",
)  # fmt: skip


def combine(runs: Mapping[str, pd.DataFrame], weights: Mapping[str, float]) -> pd.DataFrame:
    """``score = sum_f w_f * (x_f - min_q x_f) / (max_q x_f - min_q x_f)``, min and max per query.

    A feature constant within a query adds 0 for that query.

    Parameters
    ----------
    runs : mapping of name to DataFrame
        Feature runs as :func:`tiecore.read_letor` returns them (the same rows
        in the same order for every feature).
    weights : mapping of name to float
        The chosen features and their weights.

    Returns
    -------
    DataFrame
        ``qid, docno, score``.

    Examples
    --------
    >>> a = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": list("xyzx"),
    ...                   "score": [0.0, 5.0, 10.0, 7.0]})
    >>> b = a.assign(score=[1.0, 1.0, 0.0, 3.0])
    >>> combine({"f1": a, "f2": b}, {"f1": 1.0, "f2": 0.5})["score"].tolist()
    [0.5, 1.0, 1.0, 0.0]
    """
    if not weights:
        raise ValueError("choose at least one feature")
    names = list(weights)
    missing = [n for n in names if n not in runs]
    if missing:
        raise ValueError(f"feature {missing[0]} is not among the runs")
    first = runs[names[0]]
    total = np.zeros(len(first))
    for name in names:
        run = runs[name]
        if len(run) != len(first) or not (
            np.array_equal(run["qid"].to_numpy(), first["qid"].to_numpy())
            and np.array_equal(run["docno"].to_numpy(), first["docno"].to_numpy())
        ):
            raise ValueError(f"feature {name} does not hold the same rows as {names[0]}")
        x = run["score"].astype(np.float64)
        by_query = x.groupby(run["qid"].to_numpy(), sort=False)
        low = by_query.transform("min").to_numpy()
        width = by_query.transform("max").to_numpy() - low
        scaled = np.zeros(len(x))
        np.divide(x.to_numpy() - low, width, out=scaled, where=width > 0)
        total += float(weights[name]) * scaled
    return pd.DataFrame(
        {"qid": first["qid"].to_numpy(), "docno": first["docno"].to_numpy(), "score": total}
    )


@validate_params({"levels": LEVELS})
def quantise(scores: np.ndarray, levels: int | None) -> np.ndarray:
    """Equal-width bins over the scores' range: ``floor(levels (s - min) / (max - min))``.

    The top score goes into the last bin; ``levels=None`` keeps the scores.
    The order of the scores is kept (a monotone map), so only ties are added.

    Examples
    --------
    >>> quantise(np.array([0.0, 0.1, 0.49, 0.5, 1.0]), 2).tolist()
    [0.0, 0.0, 0.0, 1.0, 1.0]
    >>> quantise(np.array([3.0, 3.0]), 4).tolist()
    [0.0, 0.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if levels is None:
        return scores.copy()
    if len(scores) == 0:
        return scores.copy()
    low, high = float(scores.min()), float(scores.max())
    if high <= low:
        return np.zeros_like(scores)
    bins = np.floor((scores - low) / (high - low) * int(levels))
    return np.minimum(bins, int(levels) - 1)


@validate_params({"levels": LEVEL_LIST, **BUILDER})
def sweep(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    weights: Mapping[str, float],
    levels: Sequence[int | None],
    measure: str,
    *,
    rel_level: int = 1,
    tiebreak: str = "trec_eval",
    features: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The built function at each number of score levels, in one evaluation of all of them.

    Parameters
    ----------
    runs, weights
        As in :func:`combine`.
    levels : sequence of int or None
        Level counts to try; None is the continuous score.
    measure : str
        One measure.
    rel_level, tiebreak
        As in :func:`tiecore.evaluate` (``tiebreak`` for the oblivious value).
    features : DataFrame, optional
        The given features' values (index run, columns ``aware`` and
        ``tiebreak``), for the rank; default: computed from ``runs``.

    Returns
    -------
    DataFrame
        :data:`COLUMNS`: ``levels`` (NaN for continuous), ``distinct_scores``
        (most distinct scores of one query), ``share_tied_rows``,
        ``largest_group``, ``oblivious``, ``aware``, ``min``, ``max``,
        ``tie_sd`` (exact sd of the mean over random tie-breaks), ``rank_aware``
        and ``rank_oblivious`` (1 + the number of given features scoring
        higher in that mode) and ``features`` (how many were compared).

    Examples
    --------
    >>> a = pd.DataFrame({"qid": "1", "docno": list("wxyz"), "score": [0.0, 1.0, 2.0, 3.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["x"], "level": [1]})
    >>> found = sweep({"f1": a}, qrels, {"f1": 1.0}, [None, 2], "P@1")
    >>> found[["levels", "share_tied_rows", "aware", "tie_sd"]]
       levels  share_tied_rows  aware  tie_sd
    0     NaN              0.0    0.0     0.0
    1     2.0              1.0    0.0     0.0
    """
    from tiecore._evaluate import evaluate
    from tiecore.spread import evaluate_spread, tie_profile

    base = combine(runs, weights)
    built = {}
    for count in levels:
        built[_name(count)] = base.assign(score=quantise(base["score"].to_numpy(), count))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        spread = evaluate_spread(built, qrels, measure, rel_level=rel_level).set_index("run")
        oblivious = evaluate(
            built, qrels, measure, ties="oblivious", tiebreak=tiebreak, rel_level=rel_level
        ).set_index("run")["value"]
        if features is None:
            features = pd.DataFrame(
                {
                    "aware": evaluate(runs, qrels, measure, rel_level=rel_level).set_index(
                        "run"
                    )["value"],
                    tiebreak: evaluate(
                        runs, qrels, measure, ties="oblivious", tiebreak=tiebreak,
                        rel_level=rel_level,
                    ).set_index("run")["value"],
                }
            )  # fmt: skip
    rows = []
    for count in levels:
        name = _name(count)
        run = built[name]
        profile = tie_profile(run)
        distinct = run.groupby("qid")["score"].nunique()
        aware = float(spread.loc[name, "value"])
        obl = float(oblivious.loc[name])
        rows.append(
            {
                "levels": np.nan if count is None else float(count),
                "distinct_scores": int(distinct.max()) if len(distinct) else 0,
                "share_tied_rows": profile["share_tied_rows"],
                "largest_group": profile["largest_group"],
                "oblivious": obl,
                "aware": aware,
                "min": float(spread.loc[name, "min"]),
                "max": float(spread.loc[name, "max"]),
                "tie_sd": float(np.sqrt(max(float(spread.loc[name, "var"]), 0.0))),
                "rank_aware": 1 + int((features["aware"] > aware).sum()),
                "rank_oblivious": 1 + int((features[tiebreak] > obl).sum()),
                "features": len(features),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _name(levels: int | None) -> str:
    return "continuous" if levels is None else f"levels={int(levels)}"

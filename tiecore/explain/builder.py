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

from tiecore.errors import InputError, TieCoreWarning
from tiecore.evaluation.core import evaluate
from tiecore.options import BUILDER, LEVEL_LIST, LEVELS, validate_params
from tiecore.report import NOISE
from tiecore.spread import evaluate_spread, tie_profile
from tiecore.stats.ranks import rank_change, rank_labels, tie_ranks

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


# ----------------------------------------------------------------------------- precision what-if

#: Columns of :func:`tie_change`, each ``<name>_before`` and ``<name>_after``.
TIE_COLUMNS = ("tie_groups", "tied_rows", "share_tied_rows", "largest_group")


def tie_change(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """How tied each run is before and after its scores were coarsened.

    Parameters
    ----------
    before, after : DataFrame
        Profiles from :func:`tiecore.explain.policies.tie_profiles` (``run, rows,
        share_tied_rows, largest_group, tie_groups``); ``after`` may hold only
        the runs that were coarsened.

    Returns
    -------
    DataFrame
        Indexed by run (those of ``after``): ``rows`` and, for each of
        :data:`TIE_COLUMNS`, ``<name>_before`` and ``<name>_after``.
        ``tied_rows = share_tied_rows * rows`` (rows whose score another row of
        the query shares), an integer; tie groups hold two or more rows.

    Examples
    --------
    >>> from tiecore.explain.policies import tie_profiles
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [1.0, 1.001, 2.0]})
    >>> before, _ = tie_profiles({"x": run})
    >>> after, _ = tie_profiles({"x": run.assign(score=[1.0, 1.0, 2.0])})
    >>> change = tie_change(before, after)
    >>> change.loc["x", ["tied_rows_before", "tied_rows_after", "tie_groups_after"]].tolist()
    [0, 2, 1]
    """
    old = before.set_index("run")
    new = after.set_index("run")
    missing = [run for run in new.index if run not in old.index]
    if missing:
        raise InputError(
            "tie profiles", None, f"run {missing[0]} has no profile before coarsening",
            "the runs of the profile after among those before",
        )  # fmt: skip
    old = old.loc[new.index]
    out = pd.DataFrame({"rows": new["rows"].astype(np.int64)}, index=new.index)
    for column in TIE_COLUMNS:
        for suffix, frame in (("before", old), ("after", new)):
            if column == "tied_rows":
                tied = np.rint(frame["share_tied_rows"] * frame["rows"]).astype(np.int64)
                out[f"tied_rows_{suffix}"] = tied
            elif column == "share_tied_rows":
                out[f"{column}_{suffix}"] = frame[column].astype(np.float64)
            else:
                out[f"{column}_{suffix}"] = frame[column].astype(np.int64)
    return out


def before_after(
    before: pd.DataFrame, after: pd.DataFrame, on: Sequence[str], columns: Sequence[str]
) -> pd.DataFrame:
    """The rows of ``after`` beside the same rows of ``before``, with the change.

    Returns ``on``, then for each column ``<c>_before``, ``<c>_after`` and
    ``<c>_change = after - before`` (0 when below :data:`tiecore.report.NOISE`,
    summation-order noise), in ``after``'s row order.

    Examples
    --------
    >>> old = pd.DataFrame({"run": ["x", "y"], "aware": [0.5, 0.25]})
    >>> new = pd.DataFrame({"run": ["y"], "aware": [0.375]})
    >>> before_after(old, new, ["run"], ["aware"])
      run  aware_before  aware_after  aware_change
    0   y          0.25        0.375         0.125
    """
    keys = list(on)
    old = before[[*keys, *columns]].rename(columns={c: f"{c}_before" for c in columns})
    new = after[[*keys, *columns]].rename(columns={c: f"{c}_after" for c in columns})
    table = new.merge(old, on=keys, how="left", validate="one_to_one")
    out = table[keys].copy()
    for column in columns:
        out[f"{column}_before"] = table[f"{column}_before"]
        out[f"{column}_after"] = table[f"{column}_after"]
        change = (table[f"{column}_after"] - table[f"{column}_before"]).to_numpy(
            np.float64, copy=True
        )
        change[np.abs(change) < NOISE] = 0.0
        out[f"{column}_change"] = change
    return out


def leaderboard_change(before: pd.Series, after: pd.Series) -> pd.DataFrame:
    """Each system's value and rank before and after some of them were coarsened.

    Parameters
    ----------
    before : Series
        Run -> value of every system as given.
    after : Series
        Run -> value of the coarsened systems; the others keep their value.

    Returns
    -------
    DataFrame
        Indexed by run, in ``before``'s order: ``before``, ``after``,
        ``change`` (after - before, 0 below :data:`tiecore.report.NOISE`),
        ``rank_before`` and ``rank_after`` (competition ranks, 1 = best, equal
        values share the best rank: :func:`tiecore.stats.ranks.tie_ranks`),
        their labels ``label_before`` and ``label_after`` (``"=2"`` for a shared
        rank), ``places`` (rank after - rank before: negative moved up,
        :func:`tiecore.stats.ranks.rank_change`) and ``moved`` (the rank changed).

    Examples
    --------
    >>> before = pd.Series({"x": 0.5, "y": 0.4, "z": 0.3})
    >>> found = leaderboard_change(before, pd.Series({"x": 0.4}))
    >>> found[["label_before", "label_after", "places"]].to_dict("list")
    {'label_before': ['1', '2', '3'], 'label_after': ['=1', '=1', '3'], 'places': [0, -1, 0]}
    """
    unknown = [run for run in after.index if run not in before.index]
    if unknown:
        raise InputError(
            "leaderboard", None, f"run {unknown[0]} has no value before coarsening",
            "the coarsened runs among the runs before",
        )  # fmt: skip
    old = before.astype(np.float64)
    new = old.copy()
    new.loc[after.index] = after.astype(np.float64).to_numpy()
    change = (new - old).to_numpy(copy=True)
    change[np.abs(change) < NOISE] = 0.0
    out = pd.DataFrame({"before": old, "after": old + change, "change": change}, index=old.index)
    for suffix in ("before", "after"):
        ranks = tie_ranks(out[suffix].to_numpy())  # equal within rounding noise
        out[f"rank_{suffix}"] = ranks
        out[f"label_{suffix}"] = rank_labels(ranks)
    out["places"] = rank_change(out["rank_before"], out["rank_after"])
    out["moved"] = out["places"] != 0
    out.index.name = "run"
    return out

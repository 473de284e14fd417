"""Whole runs under every tie-break: the values a system gets, and how far its rank moves.

:func:`policy_values` gives each system's tie-aware value beside its value under every
deterministic tie-break (the optimistic and pessimistic orders are the max and min over
all orderings); :func:`rank_ranges` ranks the systems under each and says how far
their rank moves; :func:`sampled_values` draws random tie-breaks as sampled mode does;
:func:`tie_profiles` says how tied each run is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import TIEBREAKS, Ranking
from tiecore.evaluation.core import evaluate
from tiecore.evaluation.evaluator import query_values
from tiecore.evaluation.summaries import run_seed
from tiecore.explain.anatomy import as_measure
from tiecore.measures import Measure
from tiecore.options import ANATOMY, pick, validate_params
from tiecore.report.effects import NOISE, quietly
from tiecore.spread import evaluate_spread

#: Oblivious policies with one deterministic order: :data:`tiecore.engine.ranking.TIEBREAKS`
#: but ``random`` and ``trec_eval_double`` (which differs from ``trec_eval`` only on
#: scores equal in float32).
POLICIES = tuple(policy for policy in TIEBREAKS if policy not in ("random", "trec_eval_double"))
#: The arbitrary orders evaluation tools use (optimistic and pessimistic are bounds).
ARBITRARY = ("trec_eval", "docno_asc", "file_order")


@validate_params(pick(ANATOMY, "samples", "seed", "rel_level"))
def sampled_values(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measure: str | Measure,
    *,
    samples: int,
    seed: int = 0,
    rel_level: int = 1,
    name: str = "run",
) -> pd.DataFrame:
    """Per-query values of one run under each of ``samples`` random tie-breaks.

    Drawn as ``tiecore.evaluate(..., ties="sampled")`` draws them (the run's own
    seed from ``seed`` and ``name``), so each column's mean is that function's
    per-query value.

    Returns
    -------
    DataFrame
        ``(samples, queries)``: index ``sample``, columns the run's judged qids.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["b"], "level": [1]})
    >>> sorted(set(sampled_values(run, qrels, "P@1", samples=50)["1"]))
    [0.0, 1.0]
    """
    measure = as_measure(measure)
    judgments = Judgments.from_qrels(qrels, rel_level)
    rng = run_seed(seed, name)
    ranking = quietly(Ranking.build, run, judgments, tiebreak="file_order", seed=rng, name=name)
    drawn = query_values(ranking, judgments, [measure], ties="sampled", samples=samples, rng=rng)
    chosen = np.asarray(ranking.counts) > 0
    frame = pd.DataFrame(drawn[measure][:, chosen], columns=judgments.qids[chosen])
    frame.index.name, frame.columns.name = "sample", "qid"
    return frame


@validate_params(pick(ANATOMY, "rel_level", "policies"))
def policy_values(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    measure: str | Measure,
    *,
    rel_level: int = 1,
    policies: Sequence[str] = POLICIES,
) -> pd.DataFrame:
    """Each system's tie-aware value and its value under every deterministic tie-break.

    The optimistic and pessimistic orders give the max and min over all
    orderings, which :func:`tiecore.spread.evaluate_spread` computes with the
    aware value in one pass; the other policies are evaluated one by one.

    Returns
    -------
    DataFrame
        Index ``run``; columns ``aware`` and one per policy.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["b"], "level": [1]})
    >>> values = policy_values({"x": run}, qrels, "P@1", policies=["trec_eval", "docno_asc"])
    >>> values.loc["x"].tolist()
    [0.5, 1.0, 0.0]
    """
    spread = quietly(evaluate_spread, dict(runs), qrels, measure, rel_level=rel_level)
    oblivious = {
        policy: quietly(
            evaluate,
            dict(runs),
            qrels,
            measure,
            ties="oblivious",
            tiebreak=policy,
            rel_level=rel_level,
        )
        for policy in policies
        if policy not in BOUNDS
    }
    return assemble_policies(spread, oblivious, measure, policies)


#: Policies whose values are the bounds over all orderings: policy -> spread column.
BOUNDS = {"optimistic": "max", "pessimistic": "min"}


@validate_params(pick(ANATOMY, "policies"))
def assemble_policies(
    spread: pd.DataFrame,
    oblivious: Mapping[str, pd.DataFrame],
    measure: str | Measure,
    policies: Sequence[str] = POLICIES,
) -> pd.DataFrame:
    """:func:`policy_values` from results already computed (the app's cache holds them).

    Parameters
    ----------
    spread : DataFrame
        :func:`tiecore.spread.evaluate_spread` output (any measures; its summary rows,
        ``qid`` NA, are used).
    oblivious : mapping of policy to DataFrame
        :func:`tiecore.evaluate` output per oblivious policy (the bounds excepted).
    measure : str or Measure
        The measure to take.

    Returns
    -------
    DataFrame
        Index ``run``; ``aware``, then one column per policy in ``policies``.
    """
    name = str(as_measure(measure))

    def overall(frame: pd.DataFrame) -> pd.DataFrame:
        rows = frame[frame["measure"] == name]
        if "qid" not in rows:
            return rows
        summary = rows["qid"].isna()  # the mean over queries (qid "all" in earlier output)
        return rows[summary] if summary.any() else rows[rows["qid"] == "all"]

    bounds = overall(spread).set_index("run")
    columns = {"aware": bounds["value"]}
    for policy in policies:
        if policy in BOUNDS:
            columns[policy] = bounds[BOUNDS[policy]]
        else:
            columns[policy] = overall(oblivious[policy]).set_index("run")["value"]
    return pd.DataFrame(columns).rename_axis("run")


def tie_profiles(runs: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How tied each run is, all runs in one pass (what :func:`tiecore.spread.tie_profile` gives).

    Returns
    -------
    profile : DataFrame
        Per run: ``run, rows, share_tied_rows`` (rows whose score another doc of
        the same query shares), ``largest_group`` and ``tie_groups`` (groups of
        two or more docs).
    sizes : DataFrame
        ``run, size, groups``: how many tie groups of each size (1 = untied docs).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": list("abca"),
    ...                     "score": [1.0, 1.0, 0.0, 1.0]})
    >>> profile, sizes = tie_profiles({"x": run})
    >>> profile[["share_tied_rows", "largest_group", "tie_groups"]].values.tolist()
    [[0.5, 2.0, 1.0]]
    >>> sizes[["size", "groups"]].values.tolist()
    [[1, 2], [2, 1]]
    """
    names = list(runs)
    lengths = np.array([len(r) for r in runs.values()], dtype=np.int64)
    columns = ["run", "rows", "share_tied_rows", "largest_group", "tie_groups"]
    if not names:
        return pd.DataFrame(columns=columns), pd.DataFrame(columns=["run", "size", "groups"])
    query = np.empty(int(lengths.sum()), dtype=np.int64)  # a global query code per row
    offset, start = 0, 0
    for run in runs.values():
        codes, uniques = pd.factorize(run["qid"].astype(str), sort=False)
        query[start : start + len(run)] = codes + offset
        offset, start = offset + len(uniques), start + len(run)
    score = np.concatenate([r["score"].to_numpy(np.float64) for r in runs.values()]) + 0.0
    order = np.lexsort((score, query))
    query, score = query[order], score[order]
    first = np.r_[True, (query[1:] != query[:-1]) | (score[1:] != score[:-1])]
    starts = np.flatnonzero(first)
    size = np.diff(np.r_[starts, len(score)])
    run_of = np.repeat(np.arange(len(names)), lengths)[order][starts]
    groups = pd.DataFrame({"run": run_of, "size": size})
    tied = np.bincount(run_of, weights=np.where(size > 1, size, 0), minlength=len(names))
    largest = np.zeros(len(names), dtype=np.int64)
    present, first_group = np.unique(run_of, return_index=True)  # run_of is sorted by run
    if len(present):
        largest[present] = np.maximum.reduceat(size, first_group)
    multi = np.bincount(run_of, weights=size > 1, minlength=len(names))
    profile = pd.DataFrame(
        {
            "run": names,
            "rows": lengths,
            "share_tied_rows": tied / np.maximum(lengths, 1),
            "largest_group": largest,
            "tie_groups": multi.astype(np.int64),
        }
    )
    counts = groups.groupby(["run", "size"]).size().rename("groups").reset_index()
    counts["run"] = np.asarray(names, dtype=object)[counts["run"].to_numpy()]
    return profile, counts.sort_values(["run", "size"], kind="stable").reset_index(drop=True)


@validate_params(pick(ANATOMY, "top"))
def rank_ranges(
    values: pd.DataFrame, policies: Sequence[str] = ARBITRARY, top: int | None = None
) -> pd.DataFrame:
    """Ranks of the systems (1 = best, ties share the best rank) and how far tie-breaks move them.

    Parameters
    ----------
    values : DataFrame
        From :func:`policy_values`: one column per ordering.
    policies : sequence of str
        The columns whose ranks make the range.
    top : int, optional
        Also flag systems in the top ``top`` under some policies and not others.

    Returns
    -------
    DataFrame
        ``rank_<column>`` for every column, ``best_rank``, ``worst_rank``,
        ``rank_range``, ``rank_depends_on_tiebreak`` and (with ``top``)
        ``top_k_depends_on_tiebreak``.

    Examples
    --------
    >>> values = pd.DataFrame({"aware": [0.5, 0.4], "trec_eval": [0.3, 0.4]}, index=["x", "y"])
    >>> rank_ranges(values, ["aware", "trec_eval"])[["best_rank", "worst_rank", "rank_range"]]
       best_rank  worst_rank  rank_range
    x          1           2           1
    y          1           2           1
    """
    ranks = values.rank(ascending=False, method="min").astype(np.int64)
    out = ranks.add_prefix("rank_")
    chosen = ranks[list(policies)]
    out["best_rank"] = chosen.min(axis=1)
    out["worst_rank"] = chosen.max(axis=1)
    out["rank_range"] = out["worst_rank"] - out["best_rank"]
    out["rank_depends_on_tiebreak"] = out["rank_range"] > 0
    if top is not None:
        out["top_k_depends_on_tiebreak"] = (out["best_rank"] <= top) & (out["worst_rank"] > top)
    return out


#: The rank columns of :func:`scoring_table`, tie-aware first.
RANK_COLUMNS = tuple(f"rank_{policy}" for policy in ("aware", *ARBITRARY))


def scoring_table(values: pd.DataFrame, share_tied: pd.Series, top: int) -> pd.DataFrame:
    """Scoring functions side by side: each one's values, ranks, rank range and bias.

    Parameters
    ----------
    values : DataFrame
        :func:`policy_values` (one row per system: ``aware``, the :data:`ARBITRARY`
        tie-breaks, ``optimistic`` and ``pessimistic``).
    share_tied : Series
        Each system's share of tied rows (:func:`tie_profiles`).
    top : int
        The top-k whose membership a tie-break may decide.

    Returns
    -------
    DataFrame
        ``values`` with ``share_tied_rows``, the columns of :func:`rank_ranges` over the
        arbitrary tie-breaks, and ``trec_eval_minus_aware`` (the bias of trec_eval's number;
        a difference below :data:`tiecore.report.NOISE`, summation-order noise, is 0);
        sorted by tie-aware value, then trec_eval's, best first.

    Examples
    --------
    >>> values = pd.DataFrame({"aware": [0.4, 0.5], "trec_eval": [0.45, 0.5],
    ...                        "docno_asc": [0.35, 0.5], "file_order": [0.4, 0.5]},
    ...                       index=["x", "y"])
    >>> t = scoring_table(values, pd.Series({"x": 0.3, "y": 0.0}), top=1)
    >>> t.index.tolist(), t["trec_eval_minus_aware"].round(4).tolist(), t["rank_range"].tolist()
    (['y', 'x'], [0.0, 0.05], [0, 0])
    """
    ranges = rank_ranges(values, ARBITRARY, top=int(top))
    table = values.copy()
    table["share_tied_rows"] = share_tied.reindex(table.index).to_numpy(np.float64)
    keep = [*RANK_COLUMNS, "best_rank", "worst_rank", "rank_range", "rank_depends_on_tiebreak"]
    table = table.join(ranges[[*keep, "top_k_depends_on_tiebreak"]])
    table = table.sort_values(["aware", "trec_eval"], ascending=False, kind="stable")
    difference = table["trec_eval"] - table["aware"]
    table["trec_eval_minus_aware"] = difference.where(difference.abs() >= NOISE, 0.0)
    return table

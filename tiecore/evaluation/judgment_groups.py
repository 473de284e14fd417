"""Measures averaged over judgment groups: trec_eval's ``-R qrels_jg`` measures.

With ``qrels_jg`` judgments (``qid jg docno rel``, :func:`tiecore.io.trec_eval_files.read_qrels_jg`)
each judgment group ``jg`` (a user) judges the query on its own.  trec_eval 9.0.x's
``map_avgjg``, ``P_avgjg`` and ``Rprec_mult_avgjg`` score the run against each group's
judgments as ``map``, ``P`` and ``Rprec_mult`` score it against qrels, and average over
the query's groups, in the groups' (string) order:

    value(q) = (1 / G_q) * sum_{g} M(run_q, judgments_{q,g})

(no division for one group), then average over the queries as any measure.

:func:`evaluate_judgment_groups` does exactly that with tiecore's own measures (``AP``,
``P@k``, ``Rprec(mult=m)``): every (query, group) becomes a query of its own, the run's
docs of the query repeated for it, and the values are summed back over the groups one
after the other (trec_eval's order and rounding).  Under tie-aware evaluation the
average of the groups' exact expectations is the exact expectation of the average
(linearity); its variance holds the covariances between the groups (the same
ordering scores every group): :func:`query_spread` computes it, and the range, per tie
group as one statistic of its order (:mod:`tiecore.engine.assignment`).  Sampled
mode draws one ordering per query for all its groups (:func:`_sampled_groups`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine import assignment
from tiecore.engine.moments import within_bounds
from tiecore.errors import InputError
from tiecore.evaluation import summaries
from tiecore.evaluation.tie_draws import doc_words, run_key, sample_words
from tiecore.io.frames import run_where
from tiecore.io.runs import Qrels, Run
from tiecore.io.trec_eval_files import GroupJudgments

if TYPE_CHECKING:
    import pandas as pd

#: Joins a query id and a group into the id of the (query, group) query; below every
#: printable character, so that the joined ids sort as their query ids do.
SEPARATOR = "\x1f"


def group_queries(groups: GroupJudgments) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgments as qrels of (query, group) queries, and the map from each query to
    its (query, group) ids (columns ``qid``, ``group_qid``, in group order)."""
    import pandas as pd

    joined = np.char.add(np.char.add(groups.qid.astype(str), SEPARATOR), groups.group.astype(str))
    joined = joined.astype(object)
    qrels = Qrels({"qid": joined, "docno": groups.docno, "level": groups.level})
    qrels.source = groups.source
    pairs = pd.DataFrame({"qid": groups.qid, "group_qid": joined}).drop_duplicates("group_qid")
    return qrels, pairs.reset_index(drop=True)


def expand_run(run: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The run's docs of each query repeated for each of its (query, group) queries
    (queries without judgments dropped, as trec_eval skips them)."""
    expanded = run.merge(pairs, on="qid", how="inner", sort=False)
    expanded["qid"] = expanded.pop("group_qid")
    return Run.of(run).renewed(expanded)


def _unjudged(run: pd.DataFrame, name: str) -> InputError:
    """The error for a run none of whose queries the qrels_jg file judges (trec_eval:
    "No queries with both results and relevance info")."""
    return InputError(
        run_where(run, name),
        None,
        "none of its queries has judgments in the qrels_jg file",
        "query ids that match the judgments",
    )


def evaluate_judgment_groups(
    runs: dict[str, pd.DataFrame],
    groups: GroupJudgments,
    measures: Sequence[object],
    evaluate: Callable[..., pd.DataFrame],
    **options: object,
) -> tuple[dict[str, list], dict[str, int]]:
    """Every measure averaged over each query's judgment groups, per query and summary.

    ``evaluate(runs, qrels, measures, per_query=True, **options)`` evaluates the
    (query, group) queries (:func:`tiecore.evaluation.core.evaluate`).  Returns plain
    columns ``run, qid, measure, value`` (a summary row's ``qid`` None; the mean over
    the run's queries, added one after the other as trec_eval does) and ``num_q``.
    ``ties="aware"`` with ``spread=True``: columns ``var``, ``min``, ``max`` too
    (:func:`query_spread`; for the summary, the mean's).  ``ties="sampled"`` (with
    ``samples`` and ``seed``): :func:`_sampled_groups`.
    """
    if options.get("ties") == "sampled":
        return _sampled_groups(runs, groups, measures, evaluate, **options)
    options.pop("samples", None)
    qrels, pairs = group_queries(groups)
    expanded = {name: expand_run(run, pairs) for name, run in runs.items()}
    for name, run in expanded.items():
        if not len(run):
            raise _unjudged(run, name)
    spread = bool(options.pop("spread", False)) and options.get("ties") == "aware"
    result = evaluate(expanded, qrels, list(measures), per_query=True, **options)
    columns = _averaged(result, pairs)
    if spread:
        columns = _with_spread(columns, runs, groups, measures, options)
    return _with_means(columns, [str(m) for m in measures])


def _with_spread(
    columns: dict[str, list],
    runs: dict[str, pd.DataFrame],
    groups: GroupJudgments,
    measures: Sequence[object],
    options: dict,
) -> dict[str, list]:
    """``columns`` with ``var``, ``min`` and ``max`` of each (run, query, measure) over
    the orderings of the run's tie groups (:func:`query_spread`): the value plus
    each tie group's lowest and highest contribution less its mean."""
    spreads = {}
    for name, run in runs.items():
        try:
            spreads[name] = query_spread(
                run, groups, measures, options.get("rel_level", 1), options.get("depth")
            )
        except ValueError as error:  # a measure without one, or a range out of reach
            raise InputError(
                run_where(run, name),
                None,
                f"--spread: {error}",
                "--ties aware without --spread",
            ) from None
    var, low, high = (
        np.array(
            [
                spreads[name].get((qid, measure), (0.0, 0.0, 0.0))[k]
                for name, qid, measure in zip(
                    columns["run"], columns["qid"], columns["measure"], strict=True
                )
            ],
            dtype=np.float64,
        )
        for k in range(3)
    )
    return {**columns, **_bounded(columns["value"], var, low, high, relative=True)}


def _bounded(value, var, low, high, *, relative: bool = False) -> dict[str, list]:
    """``var``, ``min``, ``max`` as the spread module gives them
    (:func:`~tiecore.engine.moments.within_bounds`): the value within its bounds, variance
    0 exactly where they meet, and the bounds within [0, 1], where AP, P and Rprec live
    (the value plus a group's lowest contribution less its mean rounds to -3e-17 where
    the exact minimum is 0).  ``relative``: ``low`` and ``high`` are offsets from the value."""
    value = np.asarray(value, dtype=np.float64)
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if relative:
        low, high = value + low, value + high
    spread = within_bounds(
        {"value": value, "var": var, "min": np.clip(low, 0.0, 1.0), "max": np.clip(high, 0.0, 1.0)}
    )
    return {column: spread[column].tolist() for column in ("var", "min", "max")}


def _measure_kind(measure) -> tuple[str, float]:
    """``("AP", 0)``, ``("P", k)`` or ``("Rprec", mult)``; any other measure (a cut AP,
    another family) a ValueError: its spread over one ordering shared by the groups is
    not derived."""
    family = getattr(measure, "family", None)
    if family == "AP" and measure.cutoff is None:
        return "AP", 0.0
    if family == "P" and measure.cutoff is not None and not measure.params:
        return "P", float(measure.cutoff)
    if family == "Rprec":
        return "Rprec", float(measure.param("mult"))
    raise ValueError(
        f"{measure}: no exact spread over the orderings the judgment groups share (AP, "
        "P@k and Rprec(mult=m) only)"
    )


def _blanks_aside(live: int, size: int, bounds) -> tuple[float, float]:
    """The min and max of a tie group whose ``size - live`` *blank* docs (relevant to no
    group) add nothing: every term is ``>= 0`` with a weight that does not grow down the
    ranking, so moving a live doc above a blank one never lowers the sum (the live docs
    above each live doc stay the same): the max puts the blanks last, the min first.
    ``bounds(places)`` is the programme over the live docs in those places."""
    if not live:
        return 0.0, 0.0
    low = bounds(slice(size - live, size))[0]
    high = bounds(slice(0, live))[1]
    return low, high


def query_spread(
    run: pd.DataFrame,
    groups: GroupJudgments,
    measures: Sequence[object],
    rel_level: int = 1,
    depth: int | None = None,
) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Per (query, measure) with a tie group of two docs or more: the variance of the
    average over the query's judgment groups, and its lowest and highest value less
    its mean, over the orderings of the run's tie groups (equal scores as given).

    The average of ``G`` groups' measures of one ordering is, per tie group, one
    statistic of the group's order (:mod:`tiecore.engine.assignment`): for P@k,
    ``sum_i sum_x [x at i] sum_g rel_g(x) [rank_i <= k] / (G k)``, for
    ``Rprec(mult=m)`` the same with each group's cut ``k_g`` (a linear assignment
    statistic: Hoeffding's variance), for AP ``sum_i w_i (a(x_i) + sum_{j<i}
    B(x_i, x_j))`` with ``w_i = 1/rank_i``, ``a(x) = sum_g rel_g(x) (R_g^above + 1) /
    (G R_g)`` and ``B(x, y) = sum_g rel_g(x) rel_g(y) / (G R_g)`` (its variance from
    the moments of 2, 3 and 4 distinct docs); the tie groups are independent, so
    variances and extremes add.  A loop over queries and tie groups (``--spread``).
    """
    kinds = [(str(m), *_measure_kind(m)) for m in measures]
    judged_qid = groups.qid.astype(str)
    out: dict[tuple[str, str], tuple[float, float, float]] = {}
    for qid, part in run.groupby("qid", sort=False):  # a loop over queries (--spread)
        qid = str(qid)
        mine = judged_qid == qid
        if not mine.any():
            continue
        score = part["score"].to_numpy(dtype=np.float64)
        order = np.argsort(-score, kind="stable")
        score = score[order]
        docno = part["docno"].astype(str).to_numpy()[order]
        n = len(docno) if depth is None else min(len(docno), depth)
        start = np.flatnonzero(np.r_[True, score[1:] != score[:-1]])
        end = np.r_[start[1:], len(score)]
        tied = [(a, b) for a, b in zip(start, end, strict=True) if b - a > 1 and a < n]
        if not tied:
            continue
        names, group = np.unique(groups.group[mine].astype(str), return_inverse=True)
        relevant = groups.level[mine].astype(np.float64) >= rel_level
        size = len(names)
        big_r = np.bincount(group[relevant], minlength=size).astype(np.float64)
        rel = np.zeros((len(docno), size))
        where = {d: k for k, d in enumerate(docno)}
        rows = np.array([where.get(d, -1) for d in groups.docno[mine].astype(str)])
        hit = (rows >= 0) & relevant
        rel[rows[hit], group[hit]] = 1.0
        rank = np.arange(1, len(docno) + 1, dtype=np.float64)
        inside = rank <= n
        above = np.cumsum(rel, axis=0) - rel  # relevant of each group above each row
        for label, kind, param in kinds:
            var = low = high = 0.0
            for a, b in tied:
                r, ranks, keep = rel[a:b], rank[a:b], inside[a:b]
                if kind == "AP":
                    d = np.divide(1.0, size * big_r, out=np.zeros(size), where=big_r > 0)
                    w = np.where(keep, 1.0 / ranks, 0.0)
                    weight = r @ (d * (above[a] + 1.0))
                    pair = (r * d) @ r.T
                    mean, v = assignment.pairwise_spread(w, weight, pair)
                    types, kind_of, counts = np.unique(
                        r, axis=0, return_index=True, return_counts=True
                    )
                    live = types.any(axis=1)  # docs relevant to no group: blanks
                    kind_of, counts = kind_of[live], counts[live]

                    a_t, b_t = weight[kind_of], pair[np.ix_(kind_of, kind_of)]

                    def bounds(places: slice, counts=counts, w=w, a_t=a_t, b_t=b_t):
                        zeros = np.zeros((len(counts), len(w[places])))
                        return assignment.type_bounds(counts, zeros, w[places], a_t, b_t)

                    lo, hi = _blanks_aside(int(counts.sum()), b - a, bounds)
                else:
                    if kind == "P":
                        cut = np.full(size, param)
                    elif param == 1.0:
                        cut = big_r.copy()
                    else:
                        cut = np.floor(param * big_r + 0.9)
                    u = np.divide(r, size * cut, out=np.zeros_like(r), where=cut > 0)
                    v_pos = ((ranks[:, None] <= cut[None, :]) & keep[:, None]).astype(float)
                    mean, v = assignment.linear_spread(u, v_pos)
                    types, counts = np.unique(u, axis=0, return_counts=True)
                    live = types.any(axis=1)
                    types, counts = types[live], counts[live]

                    def bounds(places: slice, types=types, counts=counts, v_pos=v_pos):
                        return assignment.type_bounds(counts, types @ v_pos[places].T)

                    lo, hi = _blanks_aside(int(counts.sum()), b - a, bounds)
                var += v
                low += lo - mean
                high += hi - mean
            out[qid, label] = (var, low, high)
    return out


def _averaged(result: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, list]:
    """The per-query rows of ``result`` (rows of (query, group) queries) averaged over
    each query's groups: columns ``run, qid, measure, value``, one row per (run,
    query, measure) in the order of its first row."""
    rows = result[result["qid"].notna()]
    # each (query, group) query's query and its group's place among the query's groups
    place = pairs.assign(place=pairs.groupby("qid", sort=False).cumcount()).set_index("group_qid")
    group_qid = rows["qid"].astype(str)
    qid = place["qid"].reindex(group_qid).to_numpy(dtype=object)
    position = place["place"].reindex(group_qid).to_numpy(dtype=np.int64)
    run = rows["run"].astype(str).to_numpy(dtype=object)
    measure = rows["measure"].astype(str).to_numpy(dtype=object)
    value = rows["value"].to_numpy(dtype=np.float64)
    # one cell per (run, query, measure), in the order of its first row
    import pandas as pd

    cell, _ = pd.factorize(pd.MultiIndex.from_arrays([run, qid, measure]))
    cells = int(cell.max(initial=-1)) + 1
    table = np.zeros((cells, int(position.max(initial=0)) + 1))
    table[cell, position] = value
    counts = np.bincount(cell, minlength=cells)
    sums = np.cumsum(table, axis=1)[:, -1]  # one group after the other, as trec_eval's loop
    averaged = np.where(counts > 1, sums / np.maximum(counts, 1), sums)
    first = np.unique(cell, return_index=True)[1]
    return {
        "run": run[first].tolist(),
        "qid": qid[first].tolist(),
        "measure": measure[first].tolist(),
        "value": averaged.tolist(),
    }


#: Separates a query id from the number of a sample in :func:`_sampled_groups`' ids
#: (below every printable character and below :data:`SEPARATOR`).
SAMPLE = "\x1e"
#: Rows (the expanded run's and the judgments', per sample) of one batch of samples.
_BATCH_ROWS = 2_000_000


def _sampled_groups(
    runs: dict[str, pd.DataFrame],
    groups: GroupJudgments,
    measures: Sequence[object],
    evaluate: Callable[..., pd.DataFrame],
    **options: object,
) -> tuple[dict[str, list], dict[str, int]]:
    """Sampled mode: ``samples`` random orderings of each query's tie groups (equal
    scores, as given), one ordering shared by all the query's judgment groups
    (:mod:`tiecore.evaluation.tie_draws`, keyed by ``seed`` and the run's name).  Each
    drawn ordering becomes distinct scores, and a batch of samples one oblivious
    evaluation whose queries are (query, sample, group): per sample the average over
    the groups, per sample the mean over the queries; per query and for the summary
    the mean over the samples, ``std`` (ddof 1) and ``stderr = std / sqrt(samples)``,
    as every sampled evaluation (:mod:`tiecore.evaluation.evaluator`)."""
    import pandas as pd

    samples = int(options.pop("samples", 1000))  # type: ignore[call-overload]
    seed = int(options.pop("seed", 0))  # type: ignore[call-overload]
    options = {**options, "ties": "oblivious"}
    options.pop("spread", None)
    names = [str(m) for m in measures]
    columns: dict[str, list] = {"run": [], "qid": [], "measure": [], "value": []}
    columns |= {"std": [], "stderr": []}
    num_q: dict[str, int] = {}
    for name, run in runs.items():
        qid = run["qid"].astype(str).to_numpy(dtype=object)
        docno = run["docno"].astype(str).to_numpy(dtype=object)
        score = run["score"].to_numpy(dtype=np.float64)
        columns_words = doc_words(run_key(seed, name), qid, docno)
        query_code = pd.factorize(qid)[0]
        judged_rows = int(np.isin(groups.qid.astype(str), np.unique(qid)).sum())
        per_sample = len(run) * 4 + judged_rows  # the groups repeat the run's rows
        batch = max(1, min(samples, _BATCH_ROWS // max(per_sample, 1)))
        draws = []  # (samples, queries, measures) per batch
        queries: list[str] = []
        for first in range(0, samples, batch):  # a loop over batches of samples
            size = min(batch, samples - first)
            words = sample_words(columns_words, first, size)
            found, queries = _one_batch(
                name, run, groups, words, query_code, score, first, evaluate, measures, options
            )
            draws.append(found)
        stacked = np.concatenate(draws)  # (samples, queries, measures)
        n = len(queries)
        num_q[name] = n
        summary = np.cumsum(stacked, axis=1)[:, -1] / n  # per sample, in query order
        for q, values in zip([*queries, None], [*np.moveaxis(stacked, 1, 0), summary], strict=True):
            first_draw = values[:1]
            shifted = values - first_draw
            mean = first_draw[0] + summaries.mean(shifted, axis=0)[0]
            std = shifted.std(axis=0, ddof=1) if samples > 1 else np.zeros(len(names))
            for k, m in enumerate(names):
                columns["run"].append(name)
                columns["qid"].append(q)
                columns["measure"].append(m)
                columns["value"].append(float(mean[k]))
                columns["std"].append(float(std[k]))
                columns["stderr"].append(float(std[k] / np.sqrt(samples)))
    return columns, num_q


def _one_batch(name, run, groups, words, query_code, score, first, evaluate, measures, options):
    """One batch of samples (``words``: ``(size, rows)``): per sample, query and
    measure the average over the query's groups, and the queries in order."""
    import pandas as pd

    size, rows = words.shape
    # per sample, the rows in drawn order: query, score descending, word
    code = np.broadcast_to(query_code, words.shape)
    order = np.lexsort((words, np.broadcast_to(-score, words.shape), code), axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(rows), (size, rows)), axis=-1)
    sample = np.repeat(np.arange(first, first + size), rows).astype(str).astype(object)
    qid = np.tile(run["qid"].astype(str).to_numpy(dtype=object), size)
    drawn = pd.DataFrame(
        {
            "qid": qid + SAMPLE + sample,
            "docno": np.tile(run["docno"].to_numpy(dtype=object), size),
            "score": -rank.reshape(-1).astype(np.float64),  # distinct: the drawn order
        }
    )
    drawn = Run.of(run).renewed(drawn)
    labels = np.arange(first, first + size).astype(str).astype(object)
    judged = GroupJudgments(
        qid=(np.tile(groups.qid.astype(str).astype(object), size) + SAMPLE)
        + np.repeat(labels, len(groups.qid)),
        group=np.tile(groups.group, size),
        subgroup=np.tile(groups.subgroup, size),
        docno=np.tile(groups.docno, size),
        level=np.tile(groups.level, size),
        line=np.tile(groups.line, size),
        source=groups.source,
    )
    qrels, pairs = group_queries(judged)
    expanded = {name: expand_run(drawn, pairs)}
    if not len(expanded[name]):
        raise _unjudged(run, name)
    names = [str(m) for m in measures]
    result = evaluate(expanded, qrels, list(measures), per_query=True, **options)
    cells = _averaged(result, pairs)
    split = pd.Series(cells["qid"], dtype=object).str.split(SAMPLE, n=1, expand=True)
    frame = pd.DataFrame(
        {
            "qid": split[0],
            "sample": split[1].astype(np.int64) - first,
            "measure": cells["measure"],
            "value": cells["value"],
        }
    )
    queries = list(dict.fromkeys(frame.loc[frame["sample"] == 0, "qid"]))
    q = pd.Index(queries).get_indexer(frame["qid"])
    m = pd.Index(names).get_indexer(frame["measure"])
    out = np.zeros((size, len(queries), len(names)))
    out[frame["sample"].to_numpy(), q, m] = frame["value"].to_numpy()
    return out, queries


def _with_means(
    columns: dict[str, list], measures: list[str]
) -> tuple[dict[str, list], dict[str, int]]:
    """The per-query rows followed by each run's means over its queries (added one after
    the other, as trec_eval does), in ``measures``' order, and ``num_q``."""
    run = np.asarray(columns["run"], dtype=object)
    measure = np.asarray(columns["measure"], dtype=object)
    value = np.asarray(columns["value"], dtype=np.float64)
    out: dict[str, list] = {name: [] for name in columns}
    num_q: dict[str, int] = {}
    for name in dict.fromkeys(columns["run"]):  # a loop over runs and measures only
        mine = run == name
        num_q[name] = len(set(np.asarray(columns["qid"], dtype=object)[mine].tolist()))
        for column in columns:
            out[column].extend(np.asarray(columns[column], dtype=object)[mine].tolist())
        for m in measures:
            values = value[mine & (measure == m)]
            total = float(np.cumsum(values)[-1]) if len(values) else 0.0
            out["run"].append(name)
            out["qid"].append(None)
            out["measure"].append(m)
            out["value"].append(total / num_q[name] if num_q[name] else 0.0)
            for column in ("var", "min", "max"):  # the mean's: variances over num_q**2
                if column in columns:
                    cells = np.asarray(columns[column], dtype=np.float64)[mine & (measure == m)]
                    total = float(np.cumsum(cells)[-1]) if len(cells) else 0.0
                    scale = num_q[name] ** (2 if column == "var" else 1)
                    out[column].append(total / scale if scale else 0.0)
    if "var" in columns:  # the means' bounds hold their value, as the queries' do
        summary = [k for k, qid in enumerate(out["qid"]) if qid is None]
        fixed = _bounded(*([out[c][k] for k in summary] for c in ("value", "var", "min", "max")))
        for column, cells in fixed.items():
            for k, cell in zip(summary, cells, strict=True):
                out[column][k] = cell
    return out, num_q

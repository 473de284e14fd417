"""trec_eval's preference measures over runs: ``tiecore eval -R prefs`` / ``qrels_prefs``.

:func:`evaluate_prefs` ranks each run's docs of each query as trec_eval 9.0.x ranks
them for preferences -- score descending compared as 32-bit floats, then docno
*ascending* (its preference code breaks ties the other way round from its qrels
code), cut at the depth -- and computes :data:`tiecore.measures.prefs.PREFS_MEASURES`
per query (:func:`tiecore.measures.prefs.query_values`) and their summary: the mean
over the queries (the counts: their sum), added one after the other.

Tie-aware (``ties="aware"``): the docs of equal scores (as given) form tie groups; the
retrieved set does not depend on their order (a depth that cuts a tie group is
refused), so each preference between two tied docs is fulfilled in half of the
orderings and the counts, ``simp``, ``avgjg`` and ``pair`` measures, linear in those
indicators over fixed denominators, have their exact expectation, and with
``spread`` their exact variance and range (:func:`tiecore.measures.prefs.tied_spread`).
The ``Rnonrel`` measures have an exact expectation
(:func:`tiecore.measures.prefs._rnonrel_aware`; nan where it has none here) and no
spread (nan).

Sampled (``ties="sampled"``): each sample orders every tie group at random
(:mod:`tiecore.evaluation.tie_draws`, seeded by the seed and the run's name) and
evaluates that ordering as trec_eval would, the ``Rnonrel`` measures included
(:func:`tiecore.measures.prefs.query_draws`); printed are the mean over the samples,
its ``std`` and ``stderr``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.errors import InputError
from tiecore.evaluation import summaries
from tiecore.evaluation.tie_draws import doc_words, drawn_order, run_key, sample_words
from tiecore.io.frames import run_where
from tiecore.io.trec_eval_files import GroupJudgments
from tiecore.measures.prefs import PREFS_MEASURES, PrefsError, query_draws, query_values

if TYPE_CHECKING:
    import pandas as pd


def _codes(values: np.ndarray) -> np.ndarray:
    """Codes whose order is the values' string order."""
    return np.unique(values.astype(str), return_inverse=True)[1]


def _ranked(run: pd.DataFrame, aware: bool) -> tuple[np.ndarray, np.ndarray]:
    """One query's docnos in trec_eval's preference order, and each one's tie group
    (aware: equal scores as given; oblivious: every doc its own)."""
    docno = run["docno"].to_numpy(dtype=str)
    score = run["score"].to_numpy(dtype=np.float64)
    if aware:
        order = np.lexsort((docno, -score))
        ranked = score[order]
        group = np.concatenate([[0], np.cumsum(ranked[1:] != ranked[:-1])]).astype(np.int64)
        return docno[order], group
    as_float = score.astype(np.float32)
    order = np.lexsort((docno, -as_float))
    return docno[order], np.arange(len(order), dtype=np.int64)


def evaluate_prefs(
    runs: dict[str, pd.DataFrame],
    prefs: GroupJudgments,
    *,
    ties: str = "oblivious",
    depth: int | None = None,
    complete: bool = False,
    spread: bool = False,
    samples: int = 1000,
    seed: int = 0,
    recount: bool = True,
) -> tuple[dict[str, list], dict[str, int]]:
    """Every preference measure of every run, per query and summary.

    Returns plain columns ``run, qid, measure, value`` (per query in query-id order,
    then the summary rows, whose ``qid`` is None) and ``num_q`` per run (with
    ``complete``, every judged query: one the run lacks adds 0).  An inconsistent
    preference, a run without a judged query, or (aware, sampled) a depth that cuts
    a tie group is an :class:`InputError`.
    ``spread`` (aware): columns ``var``, ``min``, ``max`` too, per query the exact
    variance over random orderings and the range over all of them
    (:func:`tiecore.measures.prefs.tied_spread`); for the summary, the mean's (the
    variances summed over ``num_q**2``).
    ``ties="sampled"``: ``samples`` random orderings of each query's tie groups
    (:mod:`tiecore.evaluation.tie_draws`, keyed by ``seed`` and the run's name), each
    evaluated as trec_eval would (:func:`tiecore.measures.prefs.query_draws`; the
    ``Rnonrel`` ones only with ``recount``, else nan); per query and for the summary
    (per sample the mean over the queries) the mean over the samples, ``std`` (ddof
    1) and ``stderr = std / sqrt(samples)``, as every sampled evaluation
    (:mod:`tiecore.evaluation.evaluator`).
    """
    aware = ties in ("aware", "sampled")
    sampled = ties == "sampled"
    qids = prefs.qid.astype(str)
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]])
    ends = np.r_[starts[1:], len(qids)]
    spread = spread and ties == "aware"
    names = ("value", "var", "min", "max") if spread else ("value",)
    if sampled:
        names = ("value", "std", "stderr")
    columns: dict[str, list] = {"run": [], "qid": [], "measure": [], **{n: [] for n in names}}
    num_q: dict[str, int] = {}
    for name, run in runs.items():
        by_query = {str(q): part for q, part in run.groupby("qid", sort=False)}
        draws = (run_key(seed, name), samples, recount) if sampled else None
        values, shown = [], []
        for a, b in zip(starts, ends, strict=True):  # judged queries in id order
            qid = str(qids[a])
            part = by_query.get(qid)
            if part is None:
                continue
            found = _query(part, prefs, a, b, aware, depth, name, qid, spread, draws)
            values.append(found.reshape(-1, len(PREFS_MEASURES)))
            shown.append(qid)
        if not values:  # trec_eval: "No queries with both results and relevance info"
            raise InputError(
                run_where(run, name),
                None,
                "none of its queries has preference judgments",
                "query ids that match the judgments",
            )
        n = len(starts) if complete else len(values)
        num_q[name] = n
        table = np.stack(values)  # (queries, rows, measures)
        if sampled:  # per sample, the mean over the queries (those the run lacks add 0)
            summary = np.cumsum(table, axis=0)[-1] / n
            rows = [_sampled(v) for v in values] + [_sampled(summary)]
        else:
            sums = np.cumsum(table, axis=0)[-1]
            scale = np.array([n * n if c == "var" else n for c in names], dtype=np.float64)
            rows = [*values, sums / scale[:, None]]
        for qid, found in zip([*shown, None], rows, strict=True):
            for k, measure in enumerate(PREFS_MEASURES):
                columns["run"].append(name)
                columns["qid"].append(qid)
                columns["measure"].append(measure)
                for row, column in enumerate(names):
                    columns[column].append(float(found[row, k]))
    return columns, num_q


def _sampled(draws: np.ndarray) -> np.ndarray:
    """Rows ``value, std, stderr`` of draws ``(samples, measures)``: the mean over the
    samples, summed shifted by the first sample (a value that never varies is kept
    exactly, std 0), ``std`` (ddof 1) and ``std / sqrt(samples)``."""
    first = draws[:1]
    shifted = draws - first
    value = first[0] + summaries.mean(shifted, axis=0)[0]
    std = shifted.std(axis=0, ddof=1) if len(draws) > 1 else np.zeros(draws.shape[1])
    return np.stack([value, std, std / np.sqrt(len(draws))])


def _query(
    part: pd.DataFrame,
    prefs: GroupJudgments,
    a: int,
    b: int,
    aware: bool,
    depth: int | None,
    name: str,
    qid: str,
    spread: bool = False,
    draws: tuple[int, int, bool] | None = None,
) -> np.ndarray:
    """One query's values: docid ranks of its judged docs, then the measures (with
    ``draws``, the run's key, the samples and ``recount``: the sampled orderings')."""
    docno, tie = _ranked(part, aware)
    if depth is not None and len(docno) > depth:
        if aware and tie[depth] == tie[depth - 1]:
            raise InputError(
                f"run {name}",
                None,
                f"query {qid}: the depth {depth} cuts a group of tied scores, so the docs "
                "retrieved depend on the ordering",
                "--ties oblivious, or a depth between tie groups, for the preference measures",
            )
        docno, tie = docno[:depth], tie[:depth]
    judged = np.unique(prefs.docno[a:b].astype(str))
    retrieved = np.isin(docno, judged)
    ranked = docno[retrieved]
    rest = judged[~np.isin(judged, ranked)]
    order = np.concatenate([ranked, rest])
    rank_of = np.empty(len(judged), dtype=np.int64)
    rank_of[np.searchsorted(judged, order)] = np.arange(len(order))
    ranks = rank_of[np.searchsorted(judged, prefs.docno[a:b].astype(str))]
    groups = tie[retrieved] if aware else None
    rows = (
        ranks,
        _codes(prefs.group[a:b]),
        _codes(prefs.subgroup[a:b]),
        prefs.level[a:b].astype(np.float32),
        len(judged),
        len(ranked),
        groups,
    )  # the preference rows as both query_values and query_draws take them
    try:
        if draws is not None:
            key, samples, recount = draws
            words = sample_words(doc_words(key, np.full(len(ranked), qid), ranked), 0, samples)
            return query_draws(*rows, drawn_order(words, groups), recount)
        return query_values(*rows, spread)
    except PrefsError as error:
        line = int(prefs.line[a + error.row])
        raise InputError(
            prefs.source, line, f"query {qid}: {error.problem}", "consistent preferences"
        ) from None
    except ValueError as error:  # a tie group too large for the bounds
        raise InputError(
            f"run {name}", None, f"query {qid}: {error}", "--ties aware without --spread"
        ) from None

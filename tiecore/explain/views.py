"""What the explorer's pages show, assembled from tiecore's results in one call each.

- :func:`iprec_curve`: one system's 11-point interpolated precision curve in every mode
  (oblivious, the exact tie-aware mean with its sd, min and max; sampled where the exact
  computation is refused past a step budget);
- :func:`query_parts`: one query of one run taken apart (:mod:`tiecore.explain.anatomy`);
- :func:`unjudged_queries` and :func:`judged_runs`: the run queries without judgments
  (which every evaluation skips, as trec_eval does) and the runs left with none.

The explorer caches these results; it computes none of their numbers itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext

import numpy as np
import pandas as pd

from tiecore.engine.budget import budget_scope
from tiecore.engine.ranking import skipped_message
from tiecore.errors import InputError
from tiecore.evaluation.core import evaluate
from tiecore.explain import anatomy, orderings
from tiecore.explain.variance import tie_sd
from tiecore.measures import Measure
from tiecore.report.effects import quietly
from tiecore.spread import evaluate_spread

#: trec_eval's 11 recall levels of ``iprec_at_recall``: 0.0, 0.1, ..., 1.0.
IPREC_LEVELS = tuple(level / 10 for level in range(11))


def iprec_measures() -> tuple[str, ...]:
    """Canonical names of ``IPrec@r`` for r in :data:`IPREC_LEVELS`.

    >>> iprec_measures()[:3]
    ('IPrec', 'IPrec(recall=0.1)', 'IPrec(recall=0.2)')
    """
    return tuple(str(Measure.parse(f"IPrec@{level:.1f}")) for level in IPREC_LEVELS)


def iprec_curve(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    rel_level: int = 1,
    samples: int = 200,
    seed: int = 0,
    tiebreak: str = "trec_eval",
    budget: float | None = None,
    name: str = "run",
) -> dict:
    """One run's 11-point interpolated precision curve, mean over its judged queries.

    Parameters
    ----------
    run, qrels : pandas.DataFrame
        One run and its qrels (:func:`tiecore.read_run`, :func:`tiecore.read_qrels`).
    rel_level : int
        The lowest relevant level.
    samples, seed : int
        The random tie-breaks drawn when the exact values are refused.
    tiebreak : str
        The oblivious mode's tie-break.
    budget : float or None
        DP steps the exact IPrec may take per tie group (``tiecore.measures.iprec``'s
        budget scope); None: the measure's own budget.
    name : str
        The run's name, as messages give it.

    Returns
    -------
    dict
        ``table``: columns ``recall`` (:data:`IPREC_LEVELS`), ``oblivious``
        (:func:`tiecore.evaluate` under ``tiecore``), and ``aware, sd, min, max``: the
        summary rows of :func:`tiecore.spread.evaluate_spread`, sd = sqrt(var) the standard
        deviation of the mean over random tie-breaks (:func:`~tiecore.explain.variance.
        tie_sd`); or, where the exact values are refused (:class:`tiecore.InputError`: a
        tie group past ``budget``), ``sampled, sampled_sd`` from ``ties="sampled"``.
        ``refused``: the refusal's message (None when exact); ``samples``: the draws
        (0 when exact).
    """
    measures = list(iprec_measures())
    runs = {name: run}
    oblivious = quietly(
        evaluate, runs, qrels, measures, ties="oblivious", tiebreak=tiebreak, rel_level=rel_level
    )
    table = pd.DataFrame({"recall": IPREC_LEVELS})
    table["oblivious"] = oblivious.set_index("measure")["value"].reindex(measures).to_numpy()
    try:
        with nullcontext() if budget is None else budget_scope(budget):
            exact = quietly(evaluate_spread, runs, qrels, measures, rel_level=rel_level)
    except InputError as error:
        drawn = quietly(
            evaluate,
            runs,
            qrels,
            measures,
            ties="sampled",
            samples=samples,
            seed=seed,
            rel_level=rel_level,
        ).set_index("measure")
        table["sampled"] = drawn["value"].reindex(measures).to_numpy()
        table["sampled_sd"] = drawn["std"].reindex(measures).to_numpy()
        return {"table": table, "refused": str(error), "samples": samples}
    exact = exact.set_index("measure").reindex(measures)
    table["aware"] = exact["value"].to_numpy()
    table["sd"] = tie_sd(exact["var"].to_numpy(dtype=float))
    table["min"] = exact["min"].to_numpy()
    table["max"] = exact["max"].to_numpy()
    return {"table": table, "refused": None, "samples": 0}


def query_parts(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    qid: str,
    measure: str,
    rel_level: int = 1,
    tiebreak: str = "trec_eval",
) -> dict:
    """One query of one run taken apart (:mod:`tiecore.explain.anatomy`).

    Returns
    -------
    dict
        ``query`` (:class:`~tiecore.explain.anatomy.QueryList`), ``groups`` (its tie
        groups, gains of the measure's kind: nDCG's, else linear), ``quantities`` (the
        paper's ``R_c, t_c, n_c, r_c`` at the measure's cutoff), ``formula`` (the measure
        recomputed from them, or None for a family without one), ``ranks`` (per-rank
        expectations, or None for a family without them), ``listing`` (the docs in the
        ``tiebreak``'s order, :func:`~tiecore.explain.orderings.ranked_list`) and
        ``num_rel`` (the query's relevant docs).
    """
    query = anatomy.QueryList.of(run, qrels, qid)
    parsed = Measure.parse(measure)
    gain = parsed.gain if parsed.family == "nDCG" else "linear"
    groups = anatomy.tie_groups(query, rel_level, gain)
    num_rel = query.num_rel(rel_level)
    k = anatomy.cutoff(parsed, num_rel, len(query))
    quantities = anatomy.paper_quantities(groups, k)
    try:
        ranks = anatomy.expected_ranks(query, parsed, rel_level)
    except ValueError:
        ranks = None
    listing = quietly(orderings.ranked_list, run, qrels, qid, tiebreak, rel_level)
    return {
        "query": query,
        "groups": groups,
        "quantities": quantities,
        "formula": anatomy.formula(parsed, quantities, num_rel),
        "ranks": ranks,
        "listing": listing,
        "num_rel": num_rel,
    }


def unjudged_queries(
    runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each run's queries and those of them without a judgment in ``qrels``.

    Query ids compare as text.  Returns ``{name: (queries, unjudged)}``, both sorted
    arrays of query ids (``unjudged`` a subset of ``queries``); a query is unjudged when
    no line of ``qrels`` names it, whatever its levels.

    >>> run = pd.DataFrame({"qid": ["2", "1", "9", "1"]})
    >>> qrels = pd.DataFrame({"qid": ["1", "2"]})
    >>> [a.tolist() for a in unjudged_queries({"r": run}, qrels)["r"]]
    [['1', '2', '9'], ['9']]
    """
    judged = pd.unique(qrels["qid"].astype(str).to_numpy())
    out = {}
    for name, run in runs.items():  # one vectorised set difference per run
        queries = np.unique(run["qid"].astype(str).to_numpy())
        out[name] = (queries, queries[~np.isin(queries, judged)])
    return out


def judged_runs(
    runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame
) -> tuple[dict[str, pd.DataFrame], tuple[str, ...]]:
    """The runs with at least one judged query, and a note on each run skipped or cut.

    A run none of whose queries is in the qrels cannot be scored: it is left out with a
    note.  A run's other unjudged queries are skipped by every evaluation, as trec_eval
    does; its note is the text of tiecore's warning about them.

    >>> qrels = pd.DataFrame({"qid": ["1"]})
    >>> kept, notes = judged_runs({"a": pd.DataFrame({"qid": ["1", "2"]}),
    ...                            "b": pd.DataFrame({"qid": ["3"]})}, qrels)
    >>> list(kept), notes
    (['a'], ('run a: 1 queries without judgments skipped (2)', 'run b left out: none of its 1 queries is in the qrels (3)'))
    """  # noqa: E501
    kept, notes = {}, []
    for name, (queries, missing) in unjudged_queries(runs, qrels).items():
        if missing.size == queries.size:
            shown = ", ".join(map(str, missing[:5])) + (" ..." if missing.size > 5 else "")
            notes.append(
                f"run {name} left out: none of its {queries.size} queries is in the qrels ({shown})"
            )
            continue
        kept[name] = runs[name]
        if missing.size:
            notes.append(skipped_message(name, missing))
    return kept, tuple(notes)

"""What ``tiecore compare`` prints: a :class:`~tiecore.compare.Comparison` as text, csv or json.

Beside :mod:`tiecore.report.formats` (the writers every command shares) rather
than in it: this module needs pandas, scipy and :mod:`tiecore.compare`, which
``tiecore eval`` must not load (its start-up); formats stays free of them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from tiecore.compare import ORDERINGS, RANDOM, Comparison, pair_table, swapped_pairs
from tiecore.options import COMPARE_FORMAT, validate_params
from tiecore.report.formats import json_document
from tiecore.stats.ranks import mean_ranks

__all__ = ["format_comparison", "format_pvalue"]


@validate_params({"fmt": COMPARE_FORMAT})
def format_comparison(comparison: Comparison, fmt: str = "text") -> str:
    """What ``tiecore compare`` prints.

    ``text``: the scores and ranks of every run under each ordering (with the
    random tie-breaks' mean and sd), the runs that move between ``trec_eval``
    and ``aware``, the pairs of runs that swap, the tests of the runs next to
    each other under ``aware``, and the agreement of ``trec_eval`` with the
    other orderings; each run's ``tie_sd``, ``topic_sd`` and bootstrap
    interval; the neighbours' Wilcoxon, corrected and Tukey p-values and
    intervals; the :meth:`Comparison.verdict`; the help/hurt table against
    the baseline.  ``csv``: one tidy table with columns ``measure, table,
    run, other, field, value`` holding the scores (with the noise and
    intervals), ranks, swaps, pairs (with Tukey's columns), agreement and,
    with a baseline, ``help_hurt`` (``other``: the baseline) and
    ``help_hurt_queries`` (``other``: the qid).  ``json``: an object with
    those tables as lists of records and the options (``correction``,
    ``baseline``, ``confidence``, ...).
    Undefined statistics are ``undefined`` in text, empty in csv and ``null``
    in json.
    """
    if fmt == "text":
        return _text(comparison)
    if fmt == "csv":
        return _csv_frame(comparison).to_csv(index=False)
    return json_document(_document(comparison))


def _ranking_table(comparison: Comparison) -> pd.DataFrame:
    """Scores and ranks side by side; the random column is the samples' mean, sd and mean rank."""
    scores, ranks = comparison.scores, comparison.ranks
    sampled = comparison.sample_scores[scores.index]
    table = scores.copy()
    table[RANDOM] = sampled.mean().to_numpy()
    table[f"{RANDOM}_sd"] = sampled.std(ddof=1).to_numpy()
    for column in ORDERINGS:
        table[f"rank_{column}"] = ranks[column]
    table[f"rank_{RANDOM}"] = mean_ranks(sampled.to_numpy())
    for column in ("tie_sd", "topic_sd", "ci_low", "ci_high"):
        if column in comparison.systems:
            table[column] = comparison.systems[column].reindex(table.index).to_numpy()
    return table


#: p-values below this print as ``<1e-300`` in text: a t or Wilcoxon tail that underflows
#: is floored at :data:`SMALLEST_P`, a bound (corrected: ``m * SMALLEST_P``), not a value.
SHOWN_BELOW = 1e-300


def format_pvalue(value: float) -> str:
    """A p-value for text: three significant digits, scientific when small; never 0, and
    ``<1e-300`` below :data:`SHOWN_BELOW` (where the floor stands for an underflowed tail).

    >>> from tiecore.stats import SMALLEST_P
    >>> [format_pvalue(p) for p in (0.01234, SMALLEST_P, 4 * SMALLEST_P, float("nan"))]
    ['0.0123', '<1e-300', '<1e-300', 'undefined']
    """
    if value is not None and value < SHOWN_BELOW:
        return f"<{SHOWN_BELOW:g}"
    return _show(value, "{:.3g}")


def _percent(confidence: float) -> str:
    """A confidence level as a percentage with the digits it has (not 0.9999999 as 100%).

    >>> _percent(0.95), _percent(0.9999999), _percent(0.995), _percent(1e-9)
    ('95%', '99.99999%', '99.5%', '1e-07%')
    """
    return f"{100 * confidence:.10g}%"


def _show(value: float, spec: str = "{:.4f}") -> str:
    """A number for text output; NaN is ``undefined``."""
    return "undefined" if value is None or np.isnan(value) else spec.format(value)


def _text(comparison: Comparison) -> str:
    table = _ranking_table(comparison).sort_values(["rank_aware", "rank_trec_eval"])
    shown = pd.DataFrame(index=table.index)
    for column in (*ORDERINGS, RANDOM):
        rank = table[f"rank_{column}"].map(lambda r: f"({r:g})" if r == int(r) else f"({r:.1f})")
        shown[column] = table[column].map("{:.4f}".format) + " " + rank
    shown[RANDOM] = (
        table[RANDOM].map("{:.4f}".format)
        + "+-"
        + table[f"{RANDOM}_sd"].map("{:.4f}".format)
        + " "
        + table[f"rank_{RANDOM}"].map("({:.1f})".format)
    )
    level = _percent(comparison.confidence)
    if "tie_sd" in table:
        shown["tie_sd"] = table["tie_sd"].map(lambda v: _show(v, "{:.2e}"))
        shown["topic_sd"] = table["topic_sd"].map(lambda v: _show(v, "{:.2e}"))
        shown[f"ci{level}"] = [
            "undefined" if np.isnan(lo) else f"[{lo:.4f}, {hi:.4f}]"
            for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)
        ]
    samples = len(comparison.sample_scores)
    over = "every qrels query (missing = 0)" if comparison.complete else "each run's queries"
    lines = [
        f"{comparison.measure}: {len(table)} runs, mean over {over}; "
        f"(rank), 1 = best; {RANDOM} = mean+-sd over {samples} random tie-breaks (mean rank)",
        f"tie_sd: sd of the aware mean over random tie-breaks (exact); topic_sd: sd of the "
        f"per-query values / sqrt(queries); ci{level}: {comparison.ci_method} bootstrap "
        f"interval of the mean ({comparison.n_bootstrap} resamples)",
        shown.to_string(),
        "",
    ]
    swaps = comparison.swaps
    if swaps.empty:
        lines.append("rank changes trec_eval -> aware: none")
    else:
        lines += ["rank changes trec_eval -> aware (shift > 0: climbs under aware):"]
        lines += [swaps.to_string(index=False, float_format="{:g}".format), ""]
        flipped = swapped_pairs(comparison)
        lines += [
            "pairs in opposite order under trec_eval and aware (a: ahead under trec_eval, "
            "or under aware where trec_eval ties them):"
        ]
        lines += [flipped.to_string(index=False, float_format="{:.6f}".format)]
    lines += ["", *_neighbour_lines(comparison, table.index)]
    lines += ["", comparison.verdict()]
    if comparison.baseline is not None:
        lines += ["", *_help_hurt_lines(comparison)]
    agreement = comparison.agreement.xs("trec_eval", level="ordering_a")
    lines += ["", "agreement of trec_eval's order with (tau_ap: trec_eval judged against it):"]
    lines += [agreement.apply(lambda c: c.map(_show)).to_string()]
    return "\n".join(lines) + "\n"


def _neighbour_lines(comparison: Comparison, order: pd.Index) -> list[str]:
    """The pairs of runs next to each other under ``aware``: difference, noise and tests."""
    pairs = comparison.pairs.loc[list(itertools.pairwise(order))]
    frame = pd.DataFrame(
        {
            "a": pairs.index.get_level_values("a"),
            "b": pairs.index.get_level_values("b"),
            "mean_diff": pairs["mean_diff"].map(_show).to_numpy(),
            "tie_noise": pairs["tie_noise"].map(_show).to_numpy(),
            "p_beats": pairs["p_beats_sampled"].map(_show).to_numpy(),
            "p_normal": pairs["p_beats_normal"].map(_show).to_numpy(),
            "t_p": pairs["t_pvalue"].map(format_pvalue).to_numpy(),
            "rand_p": pairs["randomization_pvalue"].map(format_pvalue).to_numpy(),
            "wilcoxon_p": pairs["wilcoxon_pvalue"].map(format_pvalue).to_numpy(),
            "t_p_adj": pairs["t_pvalue_adj"].map(format_pvalue).to_numpy(),
            "effect": pairs["effect_size"].map(lambda v: _show(v, "{:.3f}")).to_numpy(),
            "tie_sd": pairs["tie_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "topic_sd": pairs["topic_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "ci": [
                "undefined" if np.isnan(lo) else f"[{lo:.4f}, {hi:.4f}]"
                for lo, hi in zip(pairs["diff_low"], pairs["diff_high"], strict=True)
            ],
            "queries": pairs["n_queries"].to_numpy(),
        }
    )
    if comparison.tukey is not None:
        frame.insert(
            9,
            "tukey_p",
            comparison.tukey.loc[pairs.index, "tukey_pvalue"].map(format_pvalue).to_numpy(),
        )
    exact = pairs["randomization_exact"]
    how = (
        "exact over every sign flip"
        if exact.all()
        else f"{comparison.n_resamples} random sign flips, p = (b+1)/(N+1)"
        if not exact.any()
        else "exact where 2^queries <= the budget, else random sign flips"
    )
    return [
        "runs next to each other under aware (a above b): tie noise = 2 sd over random "
        f"tie-breaks; paired t-test t_p; randomization test rand_p ({how}); Wilcoxon "
        f"signed-rank wilcoxon_p ({comparison.zero_method} zeros); t_p_adj: t_p "
        f"{comparison.correction}-corrected over all pairs"
        + ("; tukey_p: Tukey's HSD" if comparison.tukey is not None else "")
        + f"; tie_sd beside topic_sd of the difference; ci: {_percent(comparison.confidence)} "
        f"bootstrap interval of the difference; undefined: the difference does not vary",
        frame.to_string(index=False),
    ]


def _help_hurt_lines(comparison: Comparison) -> list[str]:
    """The help/hurt table against the baseline."""
    counts = comparison.help_hurt
    frame = pd.DataFrame(
        {
            "run": counts.index,
            "help": counts["help"].to_numpy(),
            "hurt": counts["hurt"].to_numpy(),
            "equal": counts["equal"].to_numpy(),
            "within_ties": counts["within_tie_noise"].to_numpy(),
            "mean_diff": counts["mean_diff"].map(_show).to_numpy(),
            "tie_sd": counts["tie_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "topic_sd": counts["topic_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "t_p_adj": counts["t_pvalue_adj"].map(format_pvalue).to_numpy(),
            "wilcoxon_p_adj": counts["wilcoxon_pvalue_adj"].map(format_pvalue).to_numpy(),
        }
    )
    return [
        f"per-query help/hurt against the baseline {comparison.baseline} (queries both runs "
        "have; within_ties: helped or hurt by at most 2 tie sd of that query, so ties alone "
        "could reverse it):",
        frame.to_string(index=False),
    ]


def _csv_frame(comparison: Comparison) -> pd.DataFrame:
    """Every table as rows ``table, run, other, field, value``."""
    parts = []
    table = _ranking_table(comparison)
    long = table.rename_axis("run").reset_index().melt(id_vars="run", var_name="field")
    parts.append(long.assign(table="scores", other=""))
    swaps = comparison.swaps.melt(id_vars="run", var_name="field")
    parts.append(swaps.assign(table="swaps", other=""))
    pairs = pair_table(comparison).rename_axis(["run", "other"]).reset_index()
    pairs = pairs.melt(id_vars=["run", "other"], var_name="field")
    parts.append(pairs.assign(table="pairs"))
    if comparison.baseline is not None:
        counts = comparison.help_hurt.reset_index().melt(id_vars="run", var_name="field")
        parts.append(counts.assign(table="help_hurt", other=comparison.baseline))
        queries = comparison.help_hurt_queries.rename(columns={"qid": "other"})
        parts.append(
            queries.melt(id_vars=["run", "other"], var_name="field").assign(
                table="help_hurt_queries"
            )
        )
    agreement = comparison.agreement.rename_axis(["run", "other"]).reset_index()
    parts.append(
        agreement.melt(id_vars=["run", "other"], var_name="field").assign(table="agreement")
    )
    out = pd.concat(parts, ignore_index=True)[["table", "run", "other", "field", "value"]]
    out.insert(0, "measure", str(comparison.measure))
    return out


def _document(comparison: Comparison) -> dict:
    """The JSON document: settings, and the tables as DataFrames (one record a row)."""
    return {
        "measure": str(comparison.measure),
        "samples": len(comparison.sample_scores),
        "complete": comparison.complete,
        "orderings": list(ORDERINGS),
        "scores": _ranking_table(comparison).rename_axis("run").reset_index(),
        "tie_var": comparison.tie_var.rename_axis("run").reset_index(),
        "swaps": comparison.swaps,
        "swapped_pairs": swapped_pairs(comparison),
        "correction": comparison.correction,
        "confidence": comparison.confidence,
        "ci_method": comparison.ci_method,
        "n_bootstrap": comparison.n_bootstrap,
        "zero_method": comparison.zero_method,
        "baseline": comparison.baseline,
        "pairs": pair_table(comparison).reset_index(),
        "agreement": comparison.agreement.reset_index(),
        "help_hurt": comparison.help_hurt.reset_index()
        if comparison.baseline is not None
        else pd.DataFrame(),
        "help_hurt_queries": comparison.help_hurt_queries,
    }

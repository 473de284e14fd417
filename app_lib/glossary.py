"""What the words mean: plain definitions of the measures and terms the pages use.

:func:`define` explains a measure by name with its cutoff filled in
(``define("P@5")`` speaks of the top 5 documents), from the words its family declares
beside its kernel (``Family.words``, :mod:`tiecore.measures.registry`); :func:`term` explains a word
of the pages (oblivious, tie-aware, tie sd, z, ...).  :data:`TERMS` is keyed by
the table columns too, so a column's help is ``TERMS.get(column)``.  An entry
never repeats its key: pages write ``**tie sd**: {term("tie_sd")}``.
"""

from __future__ import annotations

from tiecore import Measure

#: One line for each term the pages use (keys are also table columns), shown where it appears.
TERMS = {
    "tie": "documents of one query that the system gave exactly the same score; their order "
    "in the ranked list is not decided by the system",
    "tie_group": "the documents of one query that share one score",
    "tiebreak": "the rule that puts tied documents in some order (trec_eval: by document id, "
    "descending); the system had no say in it",
    "oblivious": "the value under one tie-break (one arbitrary order inside each tie), as "
    "evaluation tools report it",
    "aware": "the exact mean over every order of the tied documents (McSherry & Najork 2008): "
    "what the system earned, whatever the tie-break",
    "sampled": "the mean over random tie-breaks (Monte Carlo); it estimates the tie-aware value",
    "tie_sd": "the exact standard deviation of the system's mean score over uniformly random "
    "tie-breaks: how much the tie-break alone can move it",
    "delta": "oblivious − tie-aware: how far the one tie-break moved the reported value (its "
    "shift), in the measure's own units",
    "shift": "oblivious − tie-aware: how far the one tie-break moved the reported value, in the "
    "measure's own units (e.g. +0.0050)",
    "visible": "the shift changes the value as printed with 4 decimals",
    "z": "(oblivious − tie-aware) / tie sd: how many tie sd the one tie-break moved the reported "
    "value; beyond ±2 it is flagged",
    "position": "where the oblivious value sits between the lowest (0) and highest (1) mean any "
    "tie-break can give",
    "min": "the lowest mean any order of the tied documents gives (relevant documents last)",
    "max": "the highest mean any order of the tied documents gives (relevant documents first)",
    "flagged": "the tie-break moved the value by more than 2 tie sd (|z| > 2) and the shift "
    "shows in the value as a paper prints it (4 decimals unless set otherwise)",
    "base_rate": "how many flags to expect by chance alone if the tie-break were random; "
    "many more than that point to a tie-break that favours or hurts the system",
    "trec_eval": "the standard TREC evaluation tool; version 9 compares scores as 32-bit floats "
    "(so scores that differ only in later digits tie too) and breaks ties by document id, "
    "descending",
    "float32": "32-bit floating-point numbers, about 7 significant digits: scores such as "
    "0.123456789 and 0.123456780 become equal",
    "tie_noise": "2 × the exact sd of the difference of two systems' means over random "
    "tie-breaks; gaps smaller than it can be produced by tie-breaking alone",
    "within_tie_noise": "the gap of the tie-aware means is smaller than the tie noise",
    "p_beats_sampled": "P(A beats B): share of pairs of random tie-breaks in which A scores "
    "above B (equal scores count half)",
    "p_beats_normal": "P(A beats B) from a normal approximation: Φ(mean difference / √(var_A + "
    "var_B)) with the exact tie variances — no sampling noise",
    "p_beats": "probability that A scores above B under random tie-breaking",
    "t_pvalue": "paired t-test p-value on the tie-aware per-query values",
    "randomization_pvalue": "paired randomization (sign-flip) test p-value on the tie-aware "
    "per-query values",
    "effect_size": "mean per-query difference / its standard deviation",
    "mean_diff": "tie-aware mean of A − tie-aware mean of B",
    "n_queries": "queries both systems retrieved for",
    "kendall_tau": "Kendall's τ (tau-b) between two rankings of the systems: 1 = the same order",
    "tau_ap": "τ_AP (Yilmaz et al. 2008): like Kendall's τ but swaps near the top count more; "
    "row judged against column",
    "tau_ap_sym": "τ_AP averaged over both directions (row against column and column against "
    "row), so the matrix is symmetric",
    "share_tied_rows": "share of rows whose score another document of the same query shares",
    "largest_group": "size of the largest tie group (documents of one query with one score)",
    "tie_groups": "number of tie groups with two or more documents",
    "group": "the legend's “1st tie group from the top”, “2nd …” are the groups of tied "
    "documents whose order can change the value, counted from the top of the ranked list",
    "two_sd_band": "±2 sd/√n: where 95% of sampled means of n random tie-breaks should fall "
    "around the exact tie-aware value (sd = exact tie sd of the mean)",
    "mu_axis": "µ = the measure's mean over the queries",
    "value_squared": "variance is in squared units of the measure (value²): e.g. an sd of 0.01 is "
    "a variance of 0.0001",
    "samples": "random tie-breaks drawn per system in sampled mode",
    "seed": "the starting number of the random tie-breaks (sampled mode and the 'random' "
    "tie-break): the same seed draws the same tie-breaks",
    "rank_range": "worst minus best rank over the tie-breaks trec_eval, docno_asc, file_order",
    "levels": "number of equal-width score levels the built score is quantised to",
}
#: Other spellings :func:`term` accepts.
ALIASES = {
    "tie-aware": "aware",
    "tie aware": "aware",
    "tie-oblivious": "oblivious",
    "tie-break": "tiebreak",
    "tie break": "tiebreak",
    "tie sd": "tie_sd",
    "tie group": "tie_group",
    "base rate": "base_rate",
    "tie noise": "tie_noise",
}

_GAINS = {
    "linear": "its relevance level",
    "exp": "2^level − 1 for relevance level 'level'",
    "binary": "1 when relevant, else 0",
    "scaled": "its relevance level over the qrels' largest level",
    "query_scaled": "its relevance level over the query's largest level when that is above 1",
}


def define(measure_name: str) -> str:
    """A plain-words definition of a measure, its cutoff and parameters filled in.

    Parameters
    ----------
    measure_name : str
        Any name :meth:`tiecore.measures.Measure.parse` accepts (``"nDCG@10"``, ``"P_5"``,
        ``"IPrec@0.3"``).

    Returns
    -------
    str
        ``"<name>: <what the name stands for>: <how it is computed>."``

    Raises
    ------
    tiecore.errors.InputError
        When tiecore does not know the name.

    Examples
    --------
    >>> define("P@5")
    'P@5: precision at 5: the share of the top 5 documents that are relevant (relevant documents in the top 5, divided by 5).'
    """  # noqa: E501
    measure = Measure.parse(measure_name)
    title, text = measure.spec.words.form(measure.cutoff)  # the family's own words
    fields = {
        **{name: measure.param(name) for name in measure.spec.params},
        "k": measure.cutoff,
        "gain": _GAINS.get(measure.gain, measure.gain),
    }
    body = text.format(**fields)
    for name, value, said in measure.spec.words.extra:  # what a parameter's value adds
        default = measure.spec.params[name].default
        if measure.param(name) == value or (value == "*" and measure.param(name) != default):
            body += "" if "{k}" in said and measure.cutoff is None else said.format(**fields)
    return f"{measure_name.strip()}: {title.format(**fields)}: {body}."


def term(name: str) -> str:
    """The definition of a term of the pages (``"tie_sd"``, ``"tie sd"``, ``"tie-aware"``).

    Raises
    ------
    KeyError
        When the glossary has no such term.

    Examples
    --------
    >>> term("tie sd") == TERMS["tie_sd"]
    True
    """
    key = name.strip()
    key = ALIASES.get(key.lower(), key)
    if key not in TERMS:
        raise KeyError(f"no glossary entry {name!r}; known terms: {', '.join(sorted(TERMS))}")
    return TERMS[key]

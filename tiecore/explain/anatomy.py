"""The anatomy of one ranked list under ties: every quantity the explorer draws for a query.

A query's retrieved docs fall into *tie groups* (docs sharing one score).  A
uniformly random order inside each group puts a relevant doc at each position
of a group of ``n`` docs, ``r`` of them relevant, with probability ``r/n``
(McSherry & Najork, ECIR 2008).  This module gives, for one query:

- :func:`tie_groups` and :func:`paper_quantities`: the groups, and the paper's
  ``R_c, t_c, n_c, r_c`` at a measure's cutoff (:func:`cutoff`: ``@k``, ``R``
  for Rprec, the list length otherwise);
- :func:`formula`: P, R, F1, Rprec and Success recomputed from those four numbers;
- :func:`expected_ranks` and :func:`group_contributions`: per rank (and per tie
  group), P(relevant), the expected gain and the expected term added to a measure
  (they sum to the tie-aware value).

Every ordering of a small list is in :mod:`tiecore.explain.orderings`; whole runs
under every tie-break in :mod:`tiecore.explain.policies`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tiecore.engine.binomial import log_choose
from tiecore.engine.judgments import relevant as is_relevant
from tiecore.measures import Measure
from tiecore.options import ANATOMY, pick, validate_params

#: Families :func:`expected_ranks` decomposes rank by rank.
RANK_FAMILIES = ("P", "R", "F1", "Rprec", "AP", "RR", "Success", "nDCG", "Bpref")
#: Families :func:`formula` recomputes from the paper's quantities.
FORMULA_FAMILIES = ("P", "R", "F1", "Rprec", "Success")


def as_measure(measure: str | Measure) -> Measure:
    """``measure`` as a :class:`~tiecore.measures.Measure` (a name is parsed)."""
    return measure if isinstance(measure, Measure) else Measure.parse(measure)


@dataclass(frozen=True, eq=False)
class QueryList:
    """One query's retrieved docs (file order) and the levels of all its judged docs.

    ``level`` is NaN for a doc missing from the qrels.  A doc is relevant at
    ``level >= rel_level`` (and ``>= 0``); judged non-relevant at ``0 <= level < rel_level``.

    Examples
    --------
    >>> docs = pd.DataFrame({"docno": list("abc"), "score": [2.0, 1.0, 1.0], "level": [0, 1, 0]})
    >>> query = QueryList.from_docs(docs)
    >>> query.num_rel(), len(query)
    (1, 3)
    """

    qid: str
    docno: np.ndarray
    score: np.ndarray
    level: np.ndarray
    qrels_levels: np.ndarray
    #: The top level of the whole qrels (nDCG(ideal=max)'s grade); None: this query's.
    top_level: int | None = None

    def __len__(self) -> int:
        return len(self.docno)

    @classmethod
    def of(cls, run: pd.DataFrame, qrels: pd.DataFrame, qid: str) -> QueryList:
        """Query ``qid`` of a run (``qid, docno, score``) and qrels (``qid, docno, level``)."""
        qid = str(qid)
        rows = run[run["qid"].astype(str) == qid]
        judged = qrels[qrels["qid"].astype(str) == qid]
        levels = dict(zip(judged["docno"].astype(str), judged["level"].astype(float), strict=True))
        docno = rows["docno"].astype(str).to_numpy(dtype=object)
        return cls(
            qid=qid,
            docno=docno,
            score=rows["score"].to_numpy(np.float64) + 0.0,
            level=np.array([levels.get(d, np.nan) for d in docno], dtype=np.float64),
            qrels_levels=judged["level"].to_numpy(np.int64),
            top_level=int(qrels["level"].max()) if len(qrels) else 0,
        )

    @classmethod
    def from_docs(cls, docs: pd.DataFrame, qid: str = "q") -> QueryList:
        """A small list (``docno, score, level``) whose docs are also the whole qrels."""
        return cls(
            qid=qid,
            docno=docs["docno"].astype(str).to_numpy(dtype=object),
            score=docs["score"].to_numpy(np.float64) + 0.0,
            level=docs["level"].to_numpy(np.float64),
            qrels_levels=docs["level"].to_numpy(np.int64),
        )

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The list as a one-query run and its qrels.

        Judged docs that were not retrieved get docnos of their own
        (``~unretrieved-0``, ...), so that ``R``, ``N`` and the ideal DCG stay.
        """
        run = pd.DataFrame({"qid": self.qid, "docno": self.docno, "score": self.score})
        judged = ~np.isnan(self.level)
        retrieved = self.level[judged].astype(np.int64)
        rest = Counter(self.qrels_levels.tolist())
        rest.subtract(retrieved.tolist())
        extra = np.array(sorted(rest.elements()), dtype=np.int64)
        names = np.array([f"~unretrieved-{i}" for i in range(len(extra))], dtype=object)
        qrels = pd.DataFrame(
            {
                "qid": self.qid,
                "docno": np.concatenate([self.docno[judged], names]),
                "level": np.concatenate([retrieved, extra]),
            }
        )
        return run, qrels

    @validate_params(pick(ANATOMY, "rel_level"))
    def num_rel(self, rel_level: int = 1) -> int:
        """Relevant docs in the qrels of the query (retrieved or not): ``R``."""
        return int(is_relevant(self.qrels_levels, rel_level).sum())


def _gains(level: np.ndarray, gain: str) -> np.ndarray:
    """nDCG's gain of a level: the level (linear) or ``2**level - 1`` (exp); 0 unless > 0."""
    positive = np.where(np.isnan(level), 0.0, np.maximum(level, 0.0))
    return positive if gain == "linear" else np.exp2(positive) - 1.0


def _order(query: QueryList) -> np.ndarray:
    """Row indices by score descending, file order inside ties (groups are what matters)."""
    return np.argsort(-query.score, kind="stable")


@validate_params(pick(ANATOMY, "rel_level", "gain"))
def tie_groups(query: QueryList, rel_level: int = 1, gain: str = "linear") -> pd.DataFrame:
    """The tie groups of one query, best score first.

    Returns
    -------
    DataFrame
        ``group`` (1-based), ``start_rank``, ``end_rank``, ``size`` (``n``),
        ``relevant`` (``r``), ``judged_nonrelevant`` (``m``), ``gain`` (sum of
        the group's gains), ``relevant_above`` (``R``), ``nonrelevant_above``.

    Examples
    --------
    >>> docs = pd.DataFrame({"docno": list("abcd"), "score": [3.0, 2.0, 2.0, 1.0],
    ...                      "level": [0, 1, 0, 1]})
    >>> tie_groups(QueryList.from_docs(docs))[["start_rank", "size", "relevant", "relevant_above"]]
       start_rank  size  relevant  relevant_above
    0           1     1         0               0
    1           2     2         1               0
    2           4     1         1               1
    """
    order = _order(query)
    score = query.score[order]
    level = query.level[order]
    new = np.r_[True, score[1:] != score[:-1]] if len(score) else np.zeros(0, bool)
    starts = np.flatnonzero(new)
    size = np.diff(np.r_[starts, len(score)]).astype(np.int64)
    judged = ~np.isnan(level)
    rel = judged & is_relevant(np.nan_to_num(level, nan=-1.0), rel_level)
    nonrel = judged & (np.nan_to_num(level, nan=-1.0) >= 0) & ~rel

    def per_group(values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values, starts) if len(starts) else np.zeros(0)

    relevant = per_group(rel.astype(np.int64)).astype(np.int64)
    nonrelevant = per_group(nonrel.astype(np.int64)).astype(np.int64)
    return pd.DataFrame(
        {
            "group": np.arange(1, len(starts) + 1),
            "start_rank": starts + 1,
            "end_rank": starts + size,
            "size": size,
            "relevant": relevant,
            "judged_nonrelevant": nonrelevant,
            "gain": per_group(_gains(level, gain)),
            "relevant_above": np.cumsum(relevant) - relevant,
            "nonrelevant_above": np.cumsum(nonrelevant) - nonrelevant,
        }
    )


def cutoff(measure: str | Measure, num_rel: int, length: int) -> int:
    """The rank ``k`` where a measure stops: its ``@k``, ``R`` for Rprec, else the list length.

    Examples
    --------
    >>> cutoff("P@10", 4, 1000), cutoff("Rprec", 4, 1000), cutoff("AP", 4, 1000)
    (10, 4, 1000)
    """
    measure = as_measure(measure)
    if measure.family == "Rprec":
        return int(num_rel)
    return int(measure.cutoff) if measure.cutoff is not None else int(length)


@validate_params(pick(ANATOMY, "k"))
def paper_quantities(groups: pd.DataFrame, k: int) -> dict:
    """McSherry & Najork's quantities at cutoff ``k``: ``V_c`` is the group holding rank ``k``.

    ``t_c`` ranks lie above ``V_c``, ``R_c`` of them relevant; ``V_c`` has ``n_c``
    docs, ``r_c`` of them relevant; ``inside = k - t_c`` of its slots count
    (clipped to ``0..n_c``: with ``k`` past the list ``V_c`` is the last group).
    ``expected_relevant = R_c + inside * r_c / n_c`` is the mean number of
    relevant docs in the top ``k`` over all orderings.

    Examples
    --------
    >>> docs = pd.DataFrame({"docno": list("abcd"), "score": [3.0, 2.0, 2.0, 1.0],
    ...                      "level": [1, 1, 0, 1]})
    >>> q = paper_quantities(tie_groups(QueryList.from_docs(docs)), 2)
    >>> q["R_c"], q["t_c"], q["n_c"], q["r_c"], q["inside"], q["expected_relevant"]
    (1, 1, 2, 1, 1, 1.5)
    """
    if len(groups) == 0 or k < 1:
        return {
            "k": int(k),
            "group": None,
            "R_c": 0,
            "t_c": 0,
            "n_c": 0,
            "r_c": 0,
            "inside": 0,
            "expected_relevant": 0.0,
        }
    end = groups["end_rank"].to_numpy()
    c = int(np.searchsorted(end, min(k, int(end[-1]))))
    row = groups.iloc[c]
    t_c, n_c, r_c = int(row["start_rank"]) - 1, int(row["size"]), int(row["relevant"])
    R_c = int(row["relevant_above"])
    inside = min(max(k - t_c, 0), n_c)
    return {
        "k": int(k),
        "group": int(row["group"]),
        "R_c": R_c,
        "t_c": t_c,
        "n_c": n_c,
        "r_c": r_c,
        "inside": inside,
        "expected_relevant": R_c + inside * r_c / n_c,
    }


@dataclass(frozen=True)
class Formula:
    """A measure recomputed from the paper's quantities: its value and LaTeX."""

    value: float
    latex: str


def formula(measure: str | Measure, quantities: Mapping, num_rel: int) -> Formula | None:
    """P, R, F1, Rprec or Success from ``R_c, t_c, n_c, r_c`` (None for other measures).

    ``E[relevant in top k] = R_c + (k - t_c) r_c / n_c``; P divides it by ``k``,
    R and Rprec by ``R``, F1 is ``2 E / (k + R)``; Success is 1 when ``R_c > 0``,
    else ``1 - C(n_c - r_c, k - t_c) / C(n_c, k - t_c)``.  A query without
    relevant docs scores 0.

    Examples
    --------
    >>> q = {"k": 2, "R_c": 1, "t_c": 1, "n_c": 2, "r_c": 1, "inside": 1, "expected_relevant": 1.5}
    >>> formula("P@2", q, 3).value, formula("Success@2", q, 3).value
    (0.75, 1.0)
    """
    measure = as_measure(measure)
    family = measure.family
    if family not in FORMULA_FAMILIES:
        return None
    k, R_c, n_c, r_c = (int(quantities[x]) for x in ("k", "R_c", "n_c", "r_c"))
    inside = int(quantities["inside"])
    expected = float(quantities["expected_relevant"])
    if family == "Success":
        if num_rel == 0:
            value = 0.0
        elif R_c > 0:
            value = 1.0
        else:
            value = 1.0 - math.comb(n_c - r_c, inside) / math.comb(n_c, inside) if n_c else 0.0
        latex = (
            rf"\mathrm{{Success@}}{k} = 1 - \frac{{\binom{{n_c - r_c}}{{k - t_c}}}}"
            rf"{{\binom{{n_c}}{{k - t_c}}}} = 1 - \frac{{\binom{{{n_c - r_c}}}{{{inside}}}}}"
            rf"{{\binom{{{n_c}}}{{{inside}}}}} = {value:.4f}"
            if R_c == 0
            else rf"\mathrm{{Success@}}{k} = 1 \quad (R_c = {R_c} > 0)"
        )
        return Formula(value, latex)
    bottom, shown, name = {
        "P": (float(k), "k", f"P@{k}"),
        "R": (float(num_rel), "R", f"R@{k}"),
        "F1": ((k + num_rel) / 2, r"(k + R)/2", f"F1@{k}"),
        "Rprec": (float(num_rel), "R", "Rprec"),
    }[family]
    value = expected / bottom if bottom > 0 and num_rel > 0 else 0.0
    latex = (
        rf"\mathrm{{{name}}} = \frac{{R_c + (k - t_c)\,r_c / n_c}}{{{shown}}}"
        rf" = \frac{{{R_c} + {inside}\cdot {r_c}/{max(n_c, 1)}}}{{{bottom:g}}} = {value:.4f}"
    )
    return Formula(value, latex)


def _ideal_dcg(levels: np.ndarray, k: int | None, gain: str) -> float:
    best = np.sort(_gains(levels.astype(np.float64), gain))[::-1]
    best = best if k is None else best[:k]
    return float(np.sum(best / np.log2(np.arange(2, len(best) + 2))))


def _log_comb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log C(a, b)`` (:func:`tiecore.engine.binomial.log_choose`), ``-inf`` where ``b < 0`` or
    ``b > a``."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    valid = (b >= 0) & (b <= a)
    out = np.full(a.shape, -np.inf)
    out[valid] = log_choose(a[valid], b[valid])
    return out


def _bpref_expectation(n, r, m, p, above, num_rel, num_nonrel) -> np.ndarray:
    """``E[rel at p * f(above + B)]`` with ``B`` the judged non-relevant docs before ``p``.

    Given a relevant doc at position ``p`` of the group, the ``p`` docs before it
    are a uniform subset of the other ``n - 1``, ``m`` of them judged
    non-relevant: ``B ~ Hypergeometric(n - 1, m, p)``.  ``f(y) = 1`` for
    ``y = 0``, else ``1 - min(y, R) / min(N, R)``.
    """
    if len(n) == 0:
        return np.zeros(0)
    cap = min(num_nonrel, num_rel)
    b = np.arange(int(m.max(initial=0)) + 1)[None, :]
    n, m, p = n[:, None], m[:, None].astype(np.float64), p[:, None]
    log_pmf = _log_comb(m, b) + _log_comb(n - 1 - m, p - b) - _log_comb(n - 1, p)
    y = above[:, None] + b
    f = np.where(y == 0, 1.0, 1.0 - np.minimum(y, num_rel) / max(cap, 1))
    return (r / n[:, 0]) * np.sum(np.exp(log_pmf) * f, axis=1)


@validate_params(pick(ANATOMY, "rel_level"))
def expected_ranks(query: QueryList, measure: str | Measure, rel_level: int = 1) -> pd.DataFrame:
    """Per rank: P(relevant), expected gain and the expected term the rank adds to ``measure``.

    Every measure here is ``scale * sum_{j <= cut} c_j / w_j / D``; over all
    orderings rank ``j``, at 0-based position ``p`` of a group (``n`` docs, ``r``
    relevant, ``m`` judged non-relevant, ``G`` total gain, ``R`` relevant and
    ``A`` judged non-relevant docs above), has expected component

    - relevant (P, R, F1, Rprec): ``r/n``;  gain (nDCG): ``G/n``, ``w = log2(j + 1)``;
    - AP: ``r/n (R + 1 + p (r - 1)/(n - 1))``, ``w = j``;
    - first relevant (RR, ``w = j``; Success): ``C(n-1-p, r-1) / C(n, r)`` if ``R = 0``;
    - Bpref: ``r/n E[f(A + B)]``, ``B ~ Hypergeometric(n - 1, m, p)``.

    The ``term`` column sums to the tie-aware value.

    Returns
    -------
    DataFrame
        ``rank, group, position, p_relevant, expected_gain, term``.

    Raises
    ------
    ValueError
        For a family without a per-rank decomposition (see :data:`RANK_FAMILIES`).

    Examples
    --------
    >>> docs = pd.DataFrame({"docno": list("abc"), "score": [1.0, 1.0, 1.0], "level": [1, 0, 0]})
    >>> expected_ranks(QueryList.from_docs(docs), "RR")[["rank", "p_relevant", "term"]].round(4)
       rank  p_relevant    term
    0     1      0.3333  0.3333
    1     2      0.3333  0.1667
    2     3      0.3333  0.1111
    """
    return _rank_terms(query, measure, rel_level)[0]


def _rank_terms(
    query: QueryList, measure: str | Measure, rel_level: int
) -> tuple[pd.DataFrame, float, int]:
    """:func:`expected_ranks`' frame, with the measure's normaliser ``D / scale`` and its
    cut (what :func:`group_contributions` reports beside the sum)."""
    measure = as_measure(measure)
    family = measure.family
    if family not in RANK_FAMILIES or measure.spec.hooked(measure):  # nDCG(ideal=local)
        raise ValueError(f"no per-rank decomposition for {measure}")
    gain = measure.gain if family == "nDCG" else "linear"
    groups = tie_groups(query, rel_level, gain)
    sizes = groups["size"].to_numpy()
    g = np.repeat(np.arange(len(groups)), sizes)
    first_row = np.repeat(groups["start_rank"].to_numpy() - 1, sizes)
    rank = np.arange(1, len(g) + 1)
    p = (rank - 1 - first_row).astype(np.float64)
    n = sizes[g].astype(np.float64)
    r = groups["relevant"].to_numpy()[g].astype(np.float64)
    m = groups["judged_nonrelevant"].to_numpy()[g].astype(np.int64)
    above = groups["relevant_above"].to_numpy()[g].astype(np.float64)
    share = r / np.where(n > 0, n, 1)
    num_rel = query.num_rel(rel_level)
    num_nonrel = int(((query.qrels_levels >= 0) & (query.qrels_levels < rel_level)).sum())
    length = len(rank)
    k = measure.cutoff
    cut = cutoff(measure, num_rel, length) if family != "Bpref" else length
    divisor = np.ones(length)
    scale, denominator = 1.0, 1.0
    if family in ("P", "R", "F1", "Rprec"):
        component = share
        denominator = {"P": k, "R": num_rel, "F1": (k or 0) + num_rel, "Rprec": num_rel}[family]
        scale = 2.0 if family == "F1" else 1.0
        if num_rel == 0:
            denominator = 0
    elif family == "AP":
        pair = np.where(n > 1, (r - 1) / np.where(n > 1, n - 1, 1), 0.0)
        component, divisor = share * (above + 1 + p * pair), rank
        denominator = num_rel
        if measure.param("denom") == "min" and k is not None:
            denominator = min(k, num_rel)
    elif family in ("RR", "Success"):
        log_p = _log_comb(n - 1 - p, r - 1) - _log_comb(n, r)
        component = np.where((above == 0) & (r > 0), np.exp(log_p), 0.0)
        divisor = rank if family == "RR" else divisor
        denominator = 1.0 if num_rel > 0 else 0.0
    elif family == "nDCG":
        component = groups["gain"].to_numpy()[g] / np.where(n > 0, n, 1)
        divisor = np.log2(rank + 1.0)
        denominator = _ideal_dcg(query.qrels_levels, k, gain)
        if measure.param("ideal") == "max":  # the top grade at each of the k ranks
            top = query.top_level
            top = query.qrels_levels.max(initial=0) if top is None else top
            grade = _gains(np.array([max(top, 0)], dtype=np.float64), gain)[0]
            denominator = float(grade * np.sum(1.0 / np.log2(np.arange(2.0, k + 2))))
    else:  # Bpref
        nonrel_above = groups["nonrelevant_above"].to_numpy()[g]
        component = _bpref_expectation(n, r, m, p, nonrel_above, num_rel, num_nonrel)
        denominator = num_rel
    term = np.zeros(length)
    if denominator > 0:
        inside = rank <= cut
        term[inside] = scale * component[inside] / divisor[inside] / denominator
    frame = pd.DataFrame(
        {
            "rank": rank,
            "group": g + 1,
            "position": p.astype(np.int64),
            "p_relevant": share,
            "expected_gain": groups["gain"].to_numpy()[g] / np.where(n > 0, n, 1),
            "term": term,
        }
    )
    return frame, float(denominator) / scale, int(cut)


#: Each family's tie-aware value rank by rank (LaTeX).  Rank ``j`` sits at 0-based
#: position ``p`` of its group (``n`` docs, ``r`` relevant, ``m`` judged non-relevant,
#: ``G`` total gain); ``R_g`` and ``A_g`` count the relevant and judged non-relevant
#: docs above the group; ``R`` and ``N`` the query's relevant and judged
#: non-relevant docs.
EXPECTED_FORMULAS = {
    "P": r"P@k = \frac{1}{k}\sum_{j \le k} \frac{r}{n}",
    "R": r"R@k = \frac{1}{R}\sum_{j \le k} \frac{r}{n}",
    "F1": r"F_1@k = \frac{2}{k + R}\sum_{j \le k} \frac{r}{n}",
    "Rprec": r"R\text{-}prec = \frac{1}{R}\sum_{j \le R} \frac{r}{n}",
    "AP": r"AP = \frac{1}{R}\sum_{j \le k} \frac{1}{j}\cdot\frac{r}{n}"
    r"\Big(R_g + 1 + p\,\frac{r - 1}{n - 1}\Big)",
    "RR": r"RR = \sum_{j \le k} \frac{1}{j}\cdot\frac{\binom{n - 1 - p}{r - 1}}{\binom{n}{r}}"
    r"\quad\text{(in the first group with } r > 0\text{, where } R_g = 0)",
    "Success": r"Success@k = \sum_{j \le k} \frac{\binom{n - 1 - p}{r - 1}}{\binom{n}{r}}"
    r"\quad\text{(in the first group with } r > 0)",
    "nDCG": r"nDCG@k = \frac{1}{IDCG@k}\sum_{j \le k} \frac{G / n}{\log_2(j + 1)}",
    "Bpref": r"Bpref = \frac{1}{R}\sum_{j} \frac{r}{n}\,"
    r"\mathbb{E}\Big[1 - \frac{\min(A_g + B,\ R)}{\min(N,\ R)}\Big],\ "
    r"B \sim \mathrm{Hypergeometric}(n - 1,\ m,\ p)",
}
#: What each family divides its sum by.
NORMALISERS = {
    "P": "k",
    "R": "R",
    "F1": "(k + R)/2",
    "Rprec": "R",
    "AP": "R",
    "RR": "1",
    "Success": "1",
    "nDCG": "IDCG@k",
    "Bpref": "R",
}


@validate_params(pick(ANATOMY, "rel_level"))
def group_contributions(
    query: QueryList, measure: str | Measure, rel_level: int = 1
) -> tuple[pd.DataFrame, dict]:
    """Each tie group's share of the tie-aware value: the sum of its ranks' expected terms.

    Returns
    -------
    groups : DataFrame
        ``group, ranks, size, relevant, relevant_above, contribution`` for the
        groups with a rank above the cut.
    summary : dict
        ``formula`` (:data:`EXPECTED_FORMULAS`), ``normaliser`` (its name),
        ``normaliser_value``, ``cut`` and ``value`` (the sum, the tie-aware value).

    Examples
    --------
    >>> docs = pd.DataFrame({"docno": list("abc"), "score": [2.0, 1.0, 1.0], "level": [0, 1, 0]})
    >>> groups, summary = group_contributions(QueryList.from_docs(docs), "RR")
    >>> groups[["ranks", "contribution"]].round(4), round(summary["value"], 4)
    (  ranks  contribution
    0     1        0.0000
    1   2–3        0.4167, 0.4167)
    """
    measure = as_measure(measure)
    ranks, normaliser, cut = _rank_terms(query, measure, rel_level)
    gain = measure.gain if measure.family == "nDCG" else "linear"
    groups = tie_groups(query, rel_level, gain)
    inside = ranks[ranks["rank"] <= cut]
    contribution = inside.groupby("group")["term"].sum()
    chosen = groups[groups["group"].isin(contribution.index)]
    spans = [
        f"{a}" if a == b else f"{a}–{b}"
        for a, b in zip(chosen["start_rank"], chosen["end_rank"], strict=True)
    ]
    table = pd.DataFrame(
        {
            "group": chosen["group"].to_numpy(),
            "ranks": spans,
            "size": chosen["size"].to_numpy(),
            "relevant": chosen["relevant"].to_numpy(),
            "relevant_above": chosen["relevant_above"].to_numpy(),
            "contribution": contribution.reindex(chosen["group"]).to_numpy(),
        }
    )
    summary = {
        "formula": EXPECTED_FORMULAS[measure.family],
        "normaliser": NORMALISERS[measure.family],
        "normaliser_value": normaliser,
        "cut": cut,
        "value": float(ranks["term"].sum()),
    }
    return table, summary

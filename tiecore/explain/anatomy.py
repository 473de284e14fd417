"""The anatomy of a ranked list under ties: every quantity the explorer draws.

A query's retrieved docs fall into *tie groups* (docs sharing one score).  A
uniformly random order inside each group puts a relevant doc at each position
of a group of ``n`` docs, ``r`` of them relevant, with probability ``r/n``
(McSherry & Najork, ECIR 2008).  This module gives, for one query:

- :func:`tie_groups` and :func:`paper_quantities`: the groups, and the paper's
  ``R_c, t_c, n_c, r_c`` at a measure's cutoff (:func:`cutoff`: ``@k``, ``R``
  for Rprec, the list length otherwise);
- :func:`formula`: P, R, F1, Rprec and Success recomputed from those four numbers;
- :func:`expected_ranks`: per rank, P(relevant), the expected gain and the
  expected term the rank adds to a measure (they sum to the tie-aware value);
- :func:`orderings` and :func:`ordering_values`: every ordering of a small
  list and the measure of each (their mean is the tie-aware value);
- :func:`ranked_list`: the docs in one tie-break's order;

and, for whole runs, :func:`sampled_values` (the samples x queries matrix of
sampled mode), :func:`policy_values` and :func:`rank_ranges` (systems under
every deterministic tie-break, and how far their rank moves).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tiecore.engine.judgments import relevant as is_relevant
from tiecore.engine.ranking import TIEBREAKS
from tiecore.errors import TieCoreWarning
from tiecore.measures import Measure
from tiecore.options import ANATOMY, pick, validate_params

#: At most this many orderings are listed by :func:`orderings` (7! = 5040).
MAX_ORDERINGS = 5040
#: Oblivious policies with one deterministic order: :data:`tiecore.engine.ranking.TIEBREAKS` but
#: ``random`` and ``trec_eval_double`` (which differs from ``trec_eval`` only on scores
#: equal in float32).
POLICIES = tuple(policy for policy in TIEBREAKS if policy not in ("random", "trec_eval_double"))
#: The arbitrary orders evaluation tools use (optimistic and pessimistic are bounds).
ARBITRARY = ("trec_eval", "docno_asc", "file_order")
#: Families :func:`expected_ranks` decomposes rank by rank.
RANK_FAMILIES = ("P", "R", "F1", "Rprec", "AP", "RR", "Success", "nDCG", "Bpref")
#: Families :func:`formula` recomputes from the paper's quantities.
FORMULA_FAMILIES = ("P", "R", "F1", "Rprec", "Success")


def _parse(measure: str | Measure) -> Measure:
    return measure if isinstance(measure, Measure) else Measure.parse(measure)


def _quiet(function, *args, **kwargs):
    """Call ``function`` with tiecore's 'queries skipped' warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        return function(*args, **kwargs)


# ----------------------------------------------------------------------------- one query


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
    measure = _parse(measure)
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
    measure = _parse(measure)
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
    from tiecore.engine.binomial import log_choose

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
    measure = _parse(measure)
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
    frame.attrs.update(normaliser=float(denominator) / scale, cut=int(cut))
    return frame


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
    measure = _parse(measure)
    ranks = expected_ranks(query, measure, rel_level)
    gain = measure.gain if measure.family == "nDCG" else "linear"
    groups = tie_groups(query, rel_level, gain)
    inside = ranks[ranks["rank"] <= ranks.attrs["cut"]]
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
        "normaliser_value": ranks.attrs["normaliser"],
        "cut": ranks.attrs["cut"],
        "value": float(ranks["term"].sum()),
    }
    return table, summary


# ----------------------------------------------------------------------------- orderings


def count_orderings(scores: Sequence[float]) -> int:
    """``prod(n_i!)`` over the tie groups: how many orders the scores allow.

    Examples
    --------
    >>> count_orderings([0.9, 0.7, 0.7, 0.7, 0.4, 0.4])
    12
    """
    _, sizes = np.unique(np.asarray(scores, np.float64) + 0.0, return_counts=True)
    return math.prod(math.factorial(int(n)) for n in sizes)


@validate_params(pick(ANATOMY, "limit"))
def orderings(scores: Sequence[float], limit: int = MAX_ORDERINGS) -> np.ndarray | None:
    """Every order of the rows consistent with ``scores`` (descending), or None past ``limit``.

    Permutations inside each tie group, in the Cartesian product across groups.

    Returns
    -------
    ndarray or None
        ``(orderings, rows)`` row indices, or None when there are more than ``limit``.

    Examples
    --------
    >>> orderings([1.0, 2.0, 1.0]).tolist()
    [[1, 0, 2], [1, 2, 0]]
    """
    scores = np.asarray(scores, dtype=np.float64) + 0.0
    if count_orderings(scores) > limit:
        return None
    order = np.argsort(-scores, kind="stable")
    _, sizes = np.unique(-scores[order], return_counts=True)
    groups = np.split(order, np.cumsum(sizes)[:-1])
    blocks = [list(itertools.permutations(group)) for group in groups]
    return np.array(
        [np.concatenate(choice) for choice in itertools.product(*blocks)], dtype=np.int64
    ).reshape(-1, len(scores))


@validate_params(pick(ANATOMY, "rel_level"))
def ordering_values(
    query: QueryList, orders: np.ndarray, measure: str | Measure, rel_level: int = 1
) -> np.ndarray:
    """The measure of each ordering of one query's list (rows of ``orders``).

    Every ordering becomes a query of one run, its file order that ordering,
    scored by :func:`tiecore.evaluate` with ``tiebreak="file_order"``.

    Examples
    --------
    >>> docs = pd.DataFrame({"docno": list("abc"), "score": [1.0, 1.0, 1.0], "level": [1, 0, 0]})
    >>> query = QueryList.from_docs(docs)
    >>> ordering_values(query, orderings(query.score), "RR").round(4).tolist()
    [1.0, 1.0, 0.5, 0.3333, 0.5, 0.3333]
    """
    from tiecore.evaluation.core import evaluate

    count, width = orders.shape
    names = np.array([f"o{i:06d}" for i in range(count)], dtype=object)
    run, qrels = query.frames()
    flat = orders.ravel()
    many_run = pd.DataFrame(
        {
            "qid": np.repeat(names, width),
            "docno": run["docno"].to_numpy()[flat],
            "score": run["score"].to_numpy()[flat],
        }
    )
    many_qrels = pd.DataFrame(
        {
            "qid": np.repeat(names, len(qrels)),
            "docno": np.tile(qrels["docno"].to_numpy(), count),
            "level": np.tile(qrels["level"].to_numpy(np.int64), count),
        }
    )
    if len(qrels) == 0:  # no judgments at all: every ordering scores 0
        return np.zeros(count)
    found = _quiet(
        evaluate,
        many_run,
        many_qrels,
        measure,
        ties="oblivious",
        tiebreak="file_order",
        rel_level=rel_level,
        per_query=True,
        complete=True,
    )
    found = found[found["qid"].notna()]
    return found.set_index("qid")["value"].reindex(names).to_numpy(np.float64)


@validate_params(pick(ANATOMY, "tiebreak", "rel_level"))
def ranked_list(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    qid: str,
    tiebreak: str = "trec_eval",
    rel_level: int = 1,
) -> pd.DataFrame:
    """One query's docs in the order a tie-break gives (the order its oblivious value uses).

    Returns
    -------
    DataFrame
        ``rank, docno, score, level`` (``level`` missing for docs not in the qrels).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["b", "a", "c"], "score": [1.0, 1.0, 2.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": [1]})
    >>> ranked_list(run, qrels, "1")["docno"].tolist()
    ['c', 'b', 'a']
    """
    from tiecore.engine.judgments import Judgments
    from tiecore.engine.ranking import Ranking

    qid = str(qid)
    rows = run[run["qid"].astype(str) == qid]
    judged = qrels[qrels["qid"].astype(str) == qid]
    columns = {"rank": [], "docno": [], "score": [], "level": []}
    if rows.empty or judged.empty:
        return pd.DataFrame(columns).astype({"rank": "int64", "score": "float64", "level": "Int64"})
    judgments = Judgments.from_qrels(judged, rel_level)
    ranking = _quiet(Ranking.build, rows, judgments, tiebreak=tiebreak)
    level = pd.array(np.where(ranking.judged, ranking.level, 0), dtype="Int64")
    level[~np.asarray(ranking.judged, bool)] = pd.NA
    return pd.DataFrame(
        {
            "rank": np.asarray(ranking.rank, np.int64),
            "docno": np.asarray(ranking.docno.to_pylist(), dtype=object),
            "score": rows["score"].to_numpy(np.float64)[np.asarray(ranking.row)],
            "level": level,
        }
    )


# ----------------------------------------------------------------------------- whole runs


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
    from tiecore.engine.judgments import Judgments
    from tiecore.engine.ranking import Ranking
    from tiecore.evaluation.core import query_values, run_seed

    measure = _parse(measure)
    judgments = Judgments.from_qrels(qrels, rel_level)
    rng = run_seed(seed, name)
    ranking = _quiet(Ranking.build, run, judgments, tiebreak="file_order", seed=rng, name=name)
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
    from tiecore.evaluation.core import evaluate
    from tiecore.spread import evaluate_spread

    spread = _quiet(evaluate_spread, dict(runs), qrels, measure, rel_level=rel_level)
    oblivious = {
        policy: _quiet(
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
    name = str(_parse(measure))

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

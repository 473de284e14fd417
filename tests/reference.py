"""Slow, obviously-correct reference implementations of tiecore's measures.

Everything here works on ONE query and is written straight from the definitions,
with plain Python loops, so that tiecore's vectorized kernels can be checked
against it.

A ranking is given as *labels*: the qrels level of each retrieved document in
rank order, ``None`` for a document that is not in the qrels. ``levels`` holds
the levels of every qrels document of the query, retrieved or not (it gives
``num_rel``, nDCG's ideal ranking and Bpref's ``N``).

Conventions (trec_eval's, see ``form_res_rels.c`` and ``m_*.c`` there):

- a document is relevant when its level is ``>= rel_level``; ``num_rel`` counts
  the relevant qrels documents, retrieved or not;
- a negative level means "in the pool but unjudged": never relevant, gain 0,
  skipped by Bpref and not counted in Bpref's ``N`` -- exactly like a document
  missing from the qrels;
- ``depth`` (trec_eval ``-M``) cuts the ranking to its first ``depth`` documents
  before any measure is taken;
- a query without relevant documents scores 0. nDCG is the one exception to the
  *wording*: like trec_eval it ignores ``rel_level`` and scores 0 exactly when its
  ideal DCG is 0 (with ``rel_level=1`` both rules agree; see ``NDCG_USES_REL_LEVEL``).

The tie-aware value of a measure is its mean over every total order that is
consistent with the scores (McSherry & Najork, ECIR 2008): ``orderings`` lists
those orders literally, ``label_sequences`` lists the distinct label sequences
they produce with how many orders produce each (same mean, far fewer items).
"""

from __future__ import annotations

import itertools
import math
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from tiecore.engine.ranking import TIEBREAKS
from tiecore.measures.registry import lookup

Label = int | None

#: trec_eval's nDCG ignores ``-l`` (rel_level): a query whose judged levels are
#: all below ``rel_level`` but above 0 still gets a non-zero nDCG. Set to True to
#: make nDCG score 0 whenever ``num_rel == 0`` instead.
NDCG_USES_REL_LEVEL = False

#: Tie-break policies with one deterministic order: tiecore's list (tiecore.engine.ranking) but
#: ``random``; :func:`order_indices` implements each from its definition, and refuses
#: one it does not know, so a new policy cannot go unchecked.
DETERMINISTIC_POLICIES = tuple(policy for policy in TIEBREAKS if policy != "random")


def as_c_float(score: float) -> float:
    """``(float) score`` in C: trec_eval 9 keeps scores as 32-bit floats.

    ``struct`` packs through the same C conversion (round to nearest, ties to
    even) but refuses results past the float range, which C turns into +-inf.
    """
    try:
        return struct.unpack("f", struct.pack("f", score))[0]
    except OverflowError:
        return math.copysign(math.inf, score)


# --------------------------------------------------------------------------- labels


def is_relevant(label: Label, rel_level: int) -> bool:
    """A judged document at level ``>= rel_level`` and ``>= 0`` (trec_eval never counts a
    negative level as relevant)."""
    return label is not None and label >= max(rel_level, 0)


def is_judged_nonrelevant(label: Label, rel_level: int) -> bool:
    """Bpref's non-relevant document: judged with ``0 <= level < rel_level``."""
    return label is not None and 0 <= label < rel_level


def num_relevant(levels: Iterable[int], rel_level: int) -> int:
    """``num_rel``: relevant qrels documents, retrieved or not."""
    return sum(1 for level in levels if level >= max(rel_level, 0))


def gain(label: Label, kind: str = "linear") -> float:
    """nDCG's gain: the level (linear) or ``2**level - 1`` (exp); 0 unless level > 0."""
    if label is None or label <= 0:
        return 0.0
    return float(label) if kind == "linear" else float(2**label - 1)


def relevant_in_top(labels: Sequence[Label], k: int, rel_level: int) -> int:
    """Number of relevant documents among the first ``k``."""
    return sum(1 for label in labels[:k] if is_relevant(label, rel_level))


# ------------------------------------------------------------------------- measures


def relative_precision(
    labels: Sequence[Label], levels: Sequence[int], k: int, rel_level: int
) -> float:
    """trec_eval's relative_P@k = relevant in top k / min(k, num_rel) (0 without relevant)."""
    relevant = num_relevant(levels, rel_level)
    return relevant_in_top(labels, k, rel_level) / min(k, relevant) if relevant else 0.0


def precision(labels: Sequence[Label], levels: Sequence[int], k: int, rel_level: int) -> float:
    """P@k = relevant in top k / k (k even when fewer documents were retrieved)."""
    if num_relevant(levels, rel_level) == 0:
        return 0.0
    return relevant_in_top(labels, k, rel_level) / k


def recall(labels: Sequence[Label], levels: Sequence[int], k: int, rel_level: int) -> float:
    """R@k = relevant in top k / num_rel."""
    num_rel = num_relevant(levels, rel_level)
    if num_rel == 0:
        return 0.0
    return relevant_in_top(labels, k, rel_level) / num_rel


def f1(labels: Sequence[Label], levels: Sequence[int], k: int, rel_level: int) -> float:
    """F1@k = 2 * relevant in top k / (k + num_rel), the harmonic mean of P@k and R@k."""
    num_rel = num_relevant(levels, rel_level)
    if num_rel == 0:
        return 0.0
    return 2 * relevant_in_top(labels, k, rel_level) / (k + num_rel)


def average_precision(
    labels: Sequence[Label], levels: Sequence[int], rel_level: int, k: int | None = None
) -> float:
    """AP(@k) = sum of P@i over the relevant documents at ranks i <= k, / num_rel."""
    num_rel = num_relevant(levels, rel_level)
    if num_rel == 0:
        return 0.0
    top = labels if k is None else labels[:k]
    total = 0.0
    for i, label in enumerate(top, start=1):
        if is_relevant(label, rel_level):
            total += relevant_in_top(labels, i, rel_level) / i
    return total / num_rel


def reciprocal_rank(
    labels: Sequence[Label], levels: Sequence[int], rel_level: int, k: int | None = None
) -> float:
    """RR(@k) = 1 / rank of the first relevant document (0 if none within k)."""
    if num_relevant(levels, rel_level) == 0:
        return 0.0
    top = labels if k is None else labels[:k]
    for i, label in enumerate(top, start=1):
        if is_relevant(label, rel_level):
            return 1.0 / i
    return 0.0


def dcg(gains: Sequence[float]) -> float:
    """Sum of gain / log2(rank + 1) over ranks 1, 2, ..."""
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def ndcg(
    labels: Sequence[Label],
    levels: Sequence[int],
    rel_level: int,
    k: int | None = None,
    kind: str = "linear",
) -> float:
    """nDCG(@k) = DCG of the top k / DCG of the query's judged levels sorted descending, top k."""
    if NDCG_USES_REL_LEVEL and num_relevant(levels, rel_level) == 0:
        return 0.0
    top = labels if k is None else labels[:k]
    ideal_levels = sorted(levels, reverse=True)
    ideal = ideal_levels if k is None else ideal_levels[:k]
    if kind == "exp" and max(levels, default=0) > EXACT_ABOVE:
        ideal_exact = exact_dcg(ideal, kind)
        return 0.0 if ideal_exact == 0 else float(exact_dcg(top, kind) / ideal_exact)
    ideal_dcg = dcg([gain(level, kind) for level in ideal])
    if ideal_dcg == 0:
        return 0.0
    return dcg([gain(label, kind) for label in top]) / ideal_dcg


#: Above this level exp gains leave the integers a float holds exactly (and past
#: 1023 the float range): nDCG is then computed in exact rational arithmetic.
EXACT_ABOVE = 50


def exact_dcg(labels: Sequence[Label], kind: str) -> Fraction:
    """DCG as an exact fraction: integer gains (``2**level - 1`` as a Python int,
    any level) times each discount ``1 / log2(rank + 1)`` taken as its float."""
    return sum(
        (
            Fraction(max(label, 0) if kind == "linear" else 2 ** max(label, 0) - 1)
            * Fraction(1 / math.log2(rank + 1))
            for rank, label in enumerate(labels, start=1)
            if label is not None
        ),
        Fraction(0),
    )


def r_precision(
    labels: Sequence[Label], levels: Sequence[int], rel_level: int, mult: float = 1.0
) -> float:
    """Rprec = relevant in top num_rel / num_rel; with ``mult`` (trec_eval's Rprec_mult)
    the rank is int(mult * num_rel + 0.9)."""
    num_rel = num_relevant(levels, rel_level)
    rank = int(mult * num_rel + 0.9)
    if rank == 0:
        return 0.0
    return relevant_in_top(labels, rank, rel_level) / rank


def success(labels: Sequence[Label], levels: Sequence[int], k: int, rel_level: int) -> float:
    """Success@k = 1 if a relevant document is in the top k, else 0."""
    if num_relevant(levels, rel_level) == 0:
        return 0.0
    return 1.0 if relevant_in_top(labels, k, rel_level) > 0 else 0.0


def bpref(labels: Sequence[Label], levels: Sequence[int], rel_level: int) -> float:
    """Bpref as trec_eval's m_bpref.c.

    For each judged relevant retrieved document add ``1 - min(n, R) / min(N, R)``, or 1
    when ``n == 0``, where ``n`` counts the judged non-relevant documents ranked above
    it; divide by ``R = num_rel``. ``N`` counts the query's judged non-relevant documents
    (``0 <= level < rel_level``). Unjudged and negative-level documents are skipped.
    """
    num_rel = num_relevant(levels, rel_level)
    if num_rel == 0:
        return 0.0
    num_nonrel = sum(1 for level in levels if 0 <= level < rel_level)
    nonrel_so_far = 0
    total = 0.0
    for label in labels:
        if is_judged_nonrelevant(label, rel_level):
            nonrel_so_far += 1
        elif is_relevant(label, rel_level):
            if nonrel_so_far == 0:
                total += 1.0
            else:
                total += 1.0 - min(nonrel_so_far, num_rel) / min(num_nonrel, num_rel)
    return total / num_rel


def cumulative_gain(labels: Sequence[Label], k: int | None, kind: str) -> float:
    """CG(@k) = sum of the gains of the top k (unnormalised)."""
    top = labels if k is None else labels[:k]
    return math.fsum(gain(label, kind) for label in top)


def discounted_cumulative_gain(labels: Sequence[Label], k: int | None, kind: str) -> float:
    """DCG(@k) = sum over the top k of gain / log2(rank + 1) (unnormalised)."""
    top = labels if k is None else labels[:k]
    return dcg([gain(label, kind) for label in top])


def ndcg_max_ideal(labels: Sequence[Label], k: int, kind: str, top_level: int) -> float:
    """nDCG@k against the "maximum" ideal: the qrels' top grade at each of the k ranks."""
    if kind == "exp" and top_level > EXACT_ABOVE:
        ideal = Fraction(2**top_level - 1) * sum(
            (Fraction(1 / math.log2(rank + 1)) for rank in range(1, k + 1)), Fraction(0)
        )
        return 0.0 if ideal == 0 else float(exact_dcg(labels[:k], kind) / ideal)
    ideal = gain(top_level, kind) * math.fsum(1 / math.log2(rank + 1) for rank in range(1, k + 1))
    return 0.0 if ideal == 0 else dcg([gain(label, kind) for label in labels[:k]]) / ideal


def ndcg_local_ideal(labels: Sequence[Label], k: int | None, kind: str) -> float:
    """nDCG@k against the "local" ideal: the DCG of the same top k docs sorted by gain
    descending (the ranking's best reordering of its own top k; all docs without k)."""
    top = list(labels if k is None else labels[:k])
    ideal = sorted(top, key=lambda label: gain(label, "linear"), reverse=True)  # level order
    if kind == "exp" and max((lb for lb in top if lb is not None), default=0) > EXACT_ABOVE:
        ideal_exact = exact_dcg(ideal, kind)
        return 0.0 if ideal_exact == 0 else float(exact_dcg(top, kind) / ideal_exact)
    ideal_dcg = dcg([gain(label, kind) for label in ideal])
    return 0.0 if ideal_dcg == 0 else dcg([gain(label, kind) for label in top]) / ideal_dcg


#: trec_eval's ``INFAP_EPSILON`` (infAP's smoothing of the judged precision).
INFAP_EPSILON = 0.00001


def inferred_ap(labels: Sequence[Label], levels: Sequence[int], rel_level: int) -> float:
    """trec_eval 9.0.x's infAP (``m_infAP.c``), its loop and arithmetic as written there.

    Docs absent from the qrels are skipped (not in the pool); a negative level is a
    pooled but unjudged doc; ``0 <= level < rel_level`` judged non-relevant; any other
    level relevant, scoring ``1/(j+1) + (j/(j+1)) ((r + m + u)/j) (r + eps)/(r + m +
    2 eps)`` at 0-based rank ``j > 0`` (1 at ``j = 0``) with the counts above it;
    the sum over ``num_rel``, the qrels docs of level ``>= max(rel_level, 0)``.
    """
    num_rel = sum(1 for level in levels if level >= 0 and level >= rel_level)
    rel = nonrel = unjudged = 0
    total = 0.0
    for j, label in enumerate(labels):
        if label is None:
            continue
        if label < 0:
            unjudged += 1
            continue
        if label < rel_level:
            nonrel += 1
            continue
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            pooled = (rel + nonrel + unjudged) / fj
            smoothed = (rel + INFAP_EPSILON) / (rel + nonrel + 2 * INFAP_EPSILON)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * pooled * smoothed
        rel += 1
    return total / num_rel if num_rel else total


def average_precision_min(
    labels: Sequence[Label], levels: Sequence[int], rel_level: int, k: int
) -> float:
    """AP@k over min(k, num_rel), the recommender libraries' MAP@k denominator."""
    num_rel = num_relevant(levels, rel_level)
    if num_rel == 0:
        return 0.0
    return average_precision(labels, levels, rel_level, k) * num_rel / min(k, num_rel)


def judged_share(labels: Sequence[Label], k: int | None) -> float:
    """Judged@k: docs in the qrels (any level) among the top k / min(k, retrieved)."""
    top = labels if k is None else labels[:k]
    return sum(label is not None for label in top) / len(top) if top else 0.0


def rbp(
    labels: Sequence[Label],
    k: int | None,
    p: float,
    kind: str,
    rel_level: int,
    top_level: int = 0,
    levels: Sequence[int] = (),
) -> float:
    """RBP(p)(@k) = sum over ranks j <= k of g_j (1 - p) p^(j-1); g binary or a gain
    (``scaled``: the level / ``top_level``, the qrels' largest level; 0 when that is <= 0)."""

    def g(label: Label) -> float:
        if kind == "binary":
            return float(is_relevant(label, rel_level))
        if kind == "scaled":
            return gain(label, "linear") / top_level if top_level > 0 else 0.0
        if kind == "query_scaled":  # trec_eval 10's rbp: the query's own largest level
            return gain(label, "linear") / max([1, *levels])
        return gain(label, kind)

    top = labels if k is None else labels[:k]
    return math.fsum(g(label) * (1 - p) * p ** (j - 1) for j, label in enumerate(top, start=1))


def rbp_residual_trec(labels: Sequence[Label], k: int | None, p: float) -> float:
    """trec_eval 10's rbp_resid: with U the top-k ranks j not in the qrels or at a
    negative level, p^min(k, retrieved) + sum_U (1 - p) p^(j-1), or 0 when U is empty."""
    top = labels if k is None else labels[:k]
    unjudged = [j for j, label in enumerate(top, 1) if label is None or label < 0]
    if not unjudged:
        return 0.0
    return p ** len(top) + math.fsum((1 - p) * p ** (j - 1) for j in unjudged)


def unjudged_share(labels: Sequence[Label], k: int) -> float:
    """trec_eval 10's unj@k: docs in the top k not in the qrels or at a negative level, / k."""
    return sum(label is None or label < 0 for label in labels[:k]) / k


def rbp_residual(labels: Sequence[Label], k: int | None, p: float) -> float:
    """RBP's residual: weight of the unjudged ranks j <= k plus the tail p^min(k, retrieved)."""
    top = labels if k is None else labels[:k]
    unjudged = math.fsum((1 - p) * p ** (j - 1) for j, label in enumerate(top, 1) if label is None)
    return unjudged + p ** len(top)


# ------------------------------------------------------------------ measure specs


@dataclass(frozen=True)
class Spec:
    """A measure: family, optional cutoff, gain and other parameters, named as tiecore names it.

    ``params`` holds the parameters besides the gain that differ from their
    defaults (``ideal=max``, ``denom=min``, ``p``), in tiecore's order.
    """

    family: str
    cutoff: int | None = None
    gain: str = "linear"
    params: tuple = ()

    @property
    def name(self) -> str:
        """The ir_measures-style name, e.g. ``nDCG(gain=exp)@10`` or ``RBP(p=0.5,gain=exp)``."""
        gain = [f"gain={self.gain}"] if self.gain != "linear" else []
        rest = [f"{key}={value}" for key, value in self.params]
        shown = rest + gain if self.family.startswith("RBP") else gain + rest
        params = f"({','.join(shown)})" if shown else ""
        cutoff = "" if self.cutoff is None else f"@{self.cutoff}"
        return f"{self.family}{params}{cutoff}"

    @classmethod
    def parse(cls, name: str) -> Spec:
        """``DCG(gain=exp)@3`` -> Spec (the names this module prints)."""
        head, _, cutoff = name.partition("@")
        family, _, inside = head.partition("(")
        params = dict(part.split("=") for part in inside.rstrip(")").split(",") if part)
        gain = params.pop("gain", "linear")
        return cls(family, int(cutoff) if cutoff else None, gain, tuple(params.items()))

    def param(self, key: str, default: str) -> str:
        return dict(self.params).get(key, default)

    def __str__(self) -> str:
        return self.name


# ------------------------------------------------ trec_eval's all_trec extras


def trec_gain(label: Label, levels: Sequence[int], gains: dict | None = None) -> float:
    """trec_eval's gain of a doc (ndcg, ndcg_rel, Rndcg, G): a ``level=gain`` parameter's
    value where one names its relevance value (the level; -1 not in the qrels, -2 a
    negative level), else the level itself for ``0 .. the query's largest level``, else 0."""
    value = -1 if label is None else (-2 if label < 0 else label)
    gains = gains or {}
    if value in gains:
        return float(gains[value])
    top = max((level for level in levels if level >= 0), default=-1)
    return float(value) if 0 <= value <= top else 0.0


def ideal_gains(levels: Sequence[int], gains: dict | None = None) -> list[float]:
    """The qrels docs' gains (levels 0 and up), largest first: trec_eval's ideal ranking."""
    return sorted((trec_gain(level, levels, gains) for level in levels if level >= 0), reverse=True)


def bin_g(labels: Sequence[Label], levels: Sequence[int], rel_level: int) -> float:
    """trec_eval's binG: each relevant doc adds ``1 / log2(2 + docs above it that are not
    relevant)``; the sum over ``num_rel`` (0 when no relevant doc is retrieved)."""
    total, others, found = 0.0, 0, False
    for label in labels:
        if is_relevant(label, rel_level):
            total += 1.0 / math.log2(2 + others)
            found = True
        else:
            others += 1
    return total / num_relevant(levels, rel_level) if found else 0.0


def g_measure(labels: Sequence[Label], levels: Sequence[int], gains: dict | None = None) -> float:
    """trec_eval's G: each doc of non-zero gain ``g`` adds ``g / log2(2 + C - S)``, ``C``
    the ideal's gains so far (each rank at least 1) and ``S`` the ranking's (both through
    this doc); the sum over the ideal's positive gains."""
    ideal = ideal_gains(levels, gains)
    cost = results = total = 0.0
    for i, label in enumerate(labels):
        g = trec_gain(label, levels, gains)
        results += g
        cost += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
        if g != 0:
            total += g / math.log2(2 + cost - results)
    best = sum(x for x in ideal if x > 0)
    return total / best if best > 0 else 0.0


def _idcg(positive: Sequence[float], k: int) -> float:
    return sum(positive[j] / math.log2(j + 2) for j in range(min(k, len(positive))))


def _dcg_of(labels: Sequence[Label], levels: Sequence[int], k: int, gains) -> float:
    return sum(
        trec_gain(label, levels, gains) / math.log2(i + 2) for i, label in enumerate(labels[:k])
    )


def ndcg_rel(labels: Sequence[Label], levels: Sequence[int], gains: dict | None = None) -> float:
    """trec_eval's ndcg_rel: nDCG at each retrieved doc of positive gain (the ideal cut at
    the same rank, at most its positive gains), those of the ideal not retrieved at the
    ranking's end; the mean over the ideal's positive gains (0 if that sum is 0)."""
    positive = [x for x in ideal_gains(levels, gains) if x > 0]
    n = len(positive)
    total, found = 0.0, 0
    for i, label in enumerate(labels):
        if trec_gain(label, levels, gains) > 0:
            total += _dcg_of(labels, levels, i + 1, gains) / _idcg(positive, min(i + 1, n))
            found += 1
    if n:
        total += (n - found) * _dcg_of(labels, levels, len(labels), gains) / _idcg(positive, n)
    return total / n if total > 0 else 0.0


def rndcg(
    labels: Sequence[Label], levels: Sequence[int], rel_level: int, gains: dict | None = None
) -> float:
    """trec_eval's Rndcg: the mean of ``DCG@min(k, NR) / IDCG@k`` over the ranks ``k`` where
    the ideal's gain changes (``1 <= k < n+`` with a new gain at ``k``, and ``k = n+``, the
    ideal's positive gains), and ``NR`` (docs retrieved) where ``n+ + 1 < NR``; 0 without
    relevant docs."""
    if num_relevant(levels, rel_level) == 0:
        return 0.0
    positive = [x for x in ideal_gains(levels, gains) if x > 0]
    n, retrieved = len(positive), len(labels)
    points = [(k, k) for k in range(1, n) if positive[k] != positive[k - 1]]
    points += [(n, n)] if n else []
    points += [(retrieved, n)] if n and n + 1 < retrieved else []
    values = [
        _dcg_of(labels, levels, min(k, retrieved), gains) / _idcg(positive, ideal)
        for k, ideal in points
    ]
    return sum(values) / len(values)


def iprec_avg(
    labels: Sequence[Label],
    levels: Sequence[int],
    rel_level: int,
    recall_levels: Sequence[float],
    rounding: str = "up",
) -> float:
    """trec_eval's 11pt_avg: the mean over the recall levels ``c`` of the largest precision
    at or below relevant doc number ``max(1, (long)(c R + 0.9))`` (``rounding="up"``,
    trec_eval 9.0.x) or ``max(1, lround(c R))`` (``"nearest"``, 10.0; 0 past the
    retrieved)."""
    num_rel = num_relevant(levels, rel_level)
    precisions, found = [], 0
    for i, label in enumerate(labels):
        if is_relevant(label, rel_level):
            found += 1
            precisions.append(found / (i + 1))
    total = 0.0
    for c in reversed(recall_levels):
        x = c * num_rel
        whole = math.floor(x)
        cut = int(x + 0.9) if rounding == "up" else whole + (x - whole >= 0.5)
        first = max(cut, 1)
        total += max(precisions[first - 1 :], default=0.0)
    return total / len(recall_levels)


def _gains_param(spec) -> dict:
    text = spec.param("gains", "")
    return {int(a): float(b) for a, b in (p.split(":") for p in text.split(";") if p)}


#: Families whose extremes are not the optimistic and pessimistic orders: they count
#: judged docs, and those orders rank an unjudged doc as level 0, among judged ones
#: (infAP: a pooled-but-unjudged doc above a relevant one can raise its term).
JUDGED_FAMILIES = ("Judged", "RBP_residual", "infAP", "Unjudged", "NumNonRelJudgedRet")


def set_counts(labels: Sequence[Label], levels: Sequence[int], rel_level: int) -> tuple:
    """trec_eval's ``num_ret``, ``num_rel`` and ``num_rel_ret`` of a ranking cut at the depth."""
    relevant = sum(is_relevant(label, rel_level) for label in labels)
    return len(labels), num_relevant(levels, rel_level), relevant


def set_measure(
    family: str, labels: Sequence[Label], levels: Sequence[int], rel_level: int, x: str = "1"
):
    """trec_eval's set measures: ``set_P = num_rel_ret / num_ret``, ``set_recall =
    num_rel_ret / num_rel``, ``set_F = (x + 1) P R / (x P + R)`` (0 when nothing relevant
    is retrieved), ``set_relative_P = num_rel_ret / min(num_ret, num_rel)`` and ``set_map =
    num_rel_ret^2 / (num_ret num_rel)`` (0 when either is 0), and the three counts
    themselves."""
    ret, rel, rel_ret = set_counts(labels, levels, rel_level)
    precision = Fraction(rel_ret, ret) if ret else Fraction(0)
    recall = Fraction(rel_ret, rel) if rel else Fraction(0)
    values = {
        "NumRet": ret,
        "NumRel": rel,
        "NumRelRet": rel_ret,
        "SetP": precision,
        "SetR": recall,
        "SetF": (Fraction(x) + 1) * precision * recall / (Fraction(x) * precision + recall)
        if rel_ret
        else Fraction(0),
        "SetRelP": Fraction(rel_ret, min(ret, rel)) if ret and rel else Fraction(0),
        "SetAP": Fraction(rel_ret * rel_ret, ret * rel) if ret and rel else Fraction(0),
    }
    return float(values[family])


def utility(
    labels: Sequence[Label],
    levels: Sequence[int],
    rel_level: int,
    weights: Sequence[float],
    docs: float = 0,
) -> float:
    """trec_eval's utility: a per relevant doc retrieved, b per non-relevant retrieved, c
    per relevant not retrieved, d per non-relevant not retrieved, in a collection of
    ``docs`` docs (trec_eval's -N, 0 without it)."""
    a, b, c, d = (Fraction(w) for w in weights)
    ret, rel, rel_ret = set_counts(labels, levels, rel_level)
    not_ret_nonrel = Fraction(docs) + rel_ret - ret - rel
    return float(a * rel_ret + b * (ret - rel_ret) + c * (rel - rel_ret) + d * not_ret_nonrel)


#: trec_eval's set measures and counts (:func:`set_measure`).
SET_FAMILIES = ("SetP", "SetR", "SetF", "SetRelP", "SetAP", "NumRet", "NumRel", "NumRelRet")


def policies_are_extremes(spec: Spec) -> bool:
    """Whether the optimistic and pessimistic orders give the max and min of ``spec``: not
    for :data:`JUDGED_FAMILIES`, nor for nDCG's local ideal (a high gain pushed into the
    top k raises that ideal too), nor for gains given per level (a higher level may gain
    less), nor for G (a higher gain first may lower the later docs' terms more than it
    raises its own), whose extremes only the enumeration gives."""
    local = spec.family == "nDCG" and spec.param("ideal", "global") == "local"
    mapped = bool(spec.param("gains", ""))  # a level's gain need not grow with it
    return spec.family not in (*JUDGED_FAMILIES, "G") and not local and not mapped


def is_head_sum(spec: Spec) -> bool:
    """Whether ``spec`` is a sum over ranks with a fixed normaliser, whose variance
    splits over the tie groups (tiecore.spread.tie_groups): not nDCG's local ideal, nor
    infAP (its groups are independent too, but it is no head sum that tie_groups reads),
    nor trec_eval 10's rbp_resid (0 unless some group puts an unjudged doc above k)."""
    if spec.family in ("infAP", "NumRel", "NumRet", "SetAP", "Rndcg", "BinG", "G", "NDCGRel"):
        return False
    if spec.param("convention", "tiecore") == "trec_eval":  # times "an unjudged doc above k"
        return False
    return not (spec.family == "nDCG" and spec.param("ideal", "global") == "local")


def all_specs(cutoffs: Iterable[int] = range(1, 11)) -> list[Spec]:
    """Every family at every cutoff (and without one where allowed), both gains, and
    the parameters: nDCG's max and local ideals, AP's min denominator, RBP's p and gains."""
    specs = [Spec("AP"), Spec("RR"), Spec("nDCG"), Spec("nDCG", None, "exp")]
    specs += [Spec("Rprec"), Spec("Bpref")]
    specs += [Spec("Rprec", params=(("mult", m),)) for m in ("0.2", "0.6", "1.4", "2.0")]
    specs += [Spec("CG"), Spec("DCG", None, "exp"), Spec("Judged"), Spec("RBP")]
    specs += [Spec("RBP", None, "binary", (("p", "0.5"),)), Spec("RBP_residual")]
    specs += [Spec("RBP", None, "scaled", (("p", "0.5"),))]
    specs += [Spec("RBP", None, "query_scaled", (("p", "0.9"),))]
    specs += [Spec("RBP_residual", None, params=(("p", "0.9"), ("convention", "trec_eval")))]
    specs += [Spec("infAP")]
    specs += [Spec("nDCG", params=(("gains", "1:3.0;2:-1.0;0:0.5"),))]
    specs += [Spec("Rndcg"), Spec("Rndcg", params=(("gains", "2:1.0;1:2.5;0:-1.0"),))]
    specs += [Spec("BinG")]
    specs += [Spec("G"), Spec("G", params=(("gains", "1:3.0;2:9.0;0:0.5"),))]
    specs += [Spec("NDCGRel"), Spec("NDCGRel", params=(("gains", "1:3.0;2:9.0;4:4.5"),))]
    specs += [Spec(family) for family in SET_FAMILIES]
    specs += [Spec("NumNonRelJudgedRet")]
    specs += [Spec("SetF", params=(("x", x),)) for x in ("0.5", "3.0")]
    specs += [Spec("Utility"), Spec("Utility", params=(("a", "2.0"), ("d", "0.5")))]
    specs += [Spec("Utility", params=(("a", "-1.0"), ("b", "2.0"), ("c", "-3.0")))]
    specs += [Spec("Utility", params=(("d", "0.5"), ("docs", "40.0")))]
    for k in cutoffs:
        specs += [Spec(family, k) for family in ("P", "R", "F1", "AP", "RR", "nDCG", "Success")]
        specs.append(Spec("RelP", k))
        specs.append(Spec("nDCG", k, params=(("gains", "1:3.0;2:9.0;4:4.5"),)))
        specs.append(Spec("nDCG", k, "exp"))
        specs += [Spec("nDCG", k, "linear", (("ideal", "max"),))]
        specs += [
            Spec("nDCG", k, "exp", (("ideal", "max"),)),
            Spec("AP", k, params=(("denom", "min"),)),
        ]
        specs += [Spec("CG", k, "exp"), Spec("DCG", k), Spec("Judged", k), Spec("Unjudged", k)]
        specs += [
            Spec("RBP", k, "exp", (("p", "0.9"),)),
            Spec("RBP_residual", k, params=(("p", "0.5"),)),
            Spec("RBP_residual", k, params=(("p", "0.5"), ("convention", "trec_eval"))),
            Spec("RBP", k, "scaled", (("p", "0.5"),)),
        ]
        specs += [Spec("nDCG", k, gain, (("ideal", "local"),)) for gain in ("linear", "exp")]
        specs += [Spec("SDCG", k, params=(("max_rel", "2"),))]
    specs += [Spec("nDCG", None, gain, (("ideal", "local"),)) for gain in ("linear", "exp")]
    return specs


# ------------------------------------------------- the references, by family name


#: The slow, obvious value of each family of tiecore's registry on one total ordering,
#: by the family's name: ``REFERENCES[name](spec, labels, levels, rel_level=...,
#: top_level=...)``, each written once with :func:`reference` (``measure`` dispatches to
#: them; a test holds that every registered family has one).
REFERENCES: dict[str, Callable[..., float]] = {}


def reference(*families: str) -> Callable:
    """Register the decorated function as the reference of ``families`` (registry names)."""

    def add(function: Callable[..., float]) -> Callable[..., float]:
        for family in families:
            if family in REFERENCES:
                raise ValueError(f"{family} has a reference already")
            REFERENCES[family] = function
        return function

    return add


def measure(
    spec: Spec,
    labels: Sequence[Label],
    levels: Sequence[int],
    *,
    rel_level: int = 1,
    depth: int | None = None,
    top_level: int | None = None,
) -> float:
    """Value of ``spec`` on one fully ordered ranking, cut at ``depth`` first.

    ``top_level`` is the largest level of the whole qrels (nDCG's ``max`` ideal;
    the query's own largest level when not given).  The family's name is looked up in
    tiecore's registry (so an alias works) and its :data:`REFERENCES` entry computes it.
    """
    labels = list(labels) if depth is None else list(labels)[:depth]
    family = lookup(spec.family)
    if family is None:
        raise ValueError(f"unknown family {spec.family!r}")
    if family.name not in REFERENCES:
        raise ValueError(f"no reference for {family.name}: write one with @reference")
    compute = REFERENCES[family.name]
    return compute(spec, labels, levels, rel_level=rel_level, top_level=top_level)


def _top(levels: Sequence[int], top_level: int | None) -> int:
    return max(levels, default=0) if top_level is None else top_level


@reference("P")
def _p(spec, labels, levels, *, rel_level, top_level) -> float:
    return precision(labels, levels, spec.cutoff, rel_level)


@reference("RelP")
def _relp(spec, labels, levels, *, rel_level, top_level) -> float:
    return relative_precision(labels, levels, spec.cutoff, rel_level)


@reference("NumNonRelJudgedRet")
def _numnonrel(spec, labels, levels, *, rel_level, top_level) -> float:
    return float(sum(is_judged_nonrelevant(label, rel_level) for label in labels))


@reference("R")
def _r(spec, labels, levels, *, rel_level, top_level) -> float:
    return recall(labels, levels, spec.cutoff, rel_level)


@reference("F1")
def _f1(spec, labels, levels, *, rel_level, top_level) -> float:
    return f1(labels, levels, spec.cutoff, rel_level)


@reference("AP", "GMAP")  # GMAP: AP per query (its geometric mean is over queries)
def _ap(spec, labels, levels, *, rel_level, top_level) -> float:
    if spec.param("denom", "num_rel") == "min":
        return average_precision_min(labels, levels, rel_level, spec.cutoff)
    return average_precision(labels, levels, rel_level, spec.cutoff)


@reference("RR")
def _rr(spec, labels, levels, *, rel_level, top_level) -> float:
    return reciprocal_rank(labels, levels, rel_level, spec.cutoff)


@reference("nDCG")
def _ndcg(spec, labels, levels, *, rel_level, top_level) -> float:
    k = spec.cutoff
    if spec.param("gains", ""):
        gains = _gains_param(spec)
        positive = [x for x in ideal_gains(levels, gains) if x > 0]
        best = _idcg(positive, k if k is not None else len(positive))
        cut = len(labels) if k is None else k
        return _dcg_of(labels, levels, cut, gains) / best if best > 0 else 0.0
    if spec.param("ideal", "global") == "local":
        return ndcg_local_ideal(labels, k, spec.gain)
    if spec.param("ideal", "global") == "max":
        return ndcg_max_ideal(labels, k, spec.gain, _top(levels, top_level))
    return ndcg(labels, levels, rel_level, k, spec.gain)


@reference("Rprec")
def _rprec(spec, labels, levels, *, rel_level, top_level) -> float:
    return r_precision(labels, levels, rel_level, float(spec.param("mult", "1.0")))


@reference("Success")
def _success(spec, labels, levels, *, rel_level, top_level) -> float:
    return success(labels, levels, spec.cutoff, rel_level)


@reference("Bpref", "GMBpref")  # GMBpref: Bpref per query
def _bpref(spec, labels, levels, *, rel_level, top_level) -> float:
    return bpref(labels, levels, rel_level)


@reference("CG")
def _cg(spec, labels, levels, *, rel_level, top_level) -> float:
    return cumulative_gain(labels, spec.cutoff, spec.gain)


@reference("DCG")
def _dcg(spec, labels, levels, *, rel_level, top_level) -> float:
    return discounted_cumulative_gain(labels, spec.cutoff, spec.gain)


@reference("Judged")
def _judged(spec, labels, levels, *, rel_level, top_level) -> float:
    return judged_share(labels, spec.cutoff)


@reference("RBP")
def _rbp(spec, labels, levels, *, rel_level, top_level) -> float:
    p = float(spec.param("p", "0.8"))
    return rbp(labels, spec.cutoff, p, spec.gain, rel_level, _top(levels, top_level), levels)


@reference("Unjudged")
def _unjudged(spec, labels, levels, *, rel_level, top_level) -> float:
    return unjudged_share(labels, spec.cutoff)


@reference("RBP_residual")
def _rbp_residual(spec, labels, levels, *, rel_level, top_level) -> float:
    p = float(spec.param("p", "0.8"))
    if spec.param("convention", "tiecore") == "trec_eval":
        return rbp_residual_trec(labels, spec.cutoff, p)
    return rbp_residual(labels, spec.cutoff, p)


@reference("infAP")
def _infap(spec, labels, levels, *, rel_level, top_level) -> float:
    return inferred_ap(labels, levels, rel_level)


@reference("Utility")
def _utility(spec, labels, levels, *, rel_level, top_level) -> float:
    defaults = {"a": "1", "b": "-1", "c": "0", "d": "0"}
    weights = [spec.param(w, defaults[w]) for w in "abcd"]
    return utility(labels, levels, rel_level, weights, spec.param("docs", "0"))


@reference(*SET_FAMILIES)
def _set(spec, labels, levels, *, rel_level, top_level) -> float:
    return set_measure(spec.family, labels, levels, rel_level, spec.param("x", "1"))


@reference("BinG")
def _bing(spec, labels, levels, *, rel_level, top_level) -> float:
    return bin_g(labels, levels, rel_level)


@reference("G")
def _g(spec, labels, levels, *, rel_level, top_level) -> float:
    return g_measure(labels, levels, _gains_param(spec))


@reference("NDCGRel")
def _ndcgrel(spec, labels, levels, *, rel_level, top_level) -> float:
    return ndcg_rel(labels, levels, _gains_param(spec))


@reference("Rndcg")
def _rndcg(spec, labels, levels, *, rel_level, top_level) -> float:
    return rndcg(labels, levels, rel_level, _gains_param(spec))


@reference("IPrecAvg")
def _iprec_avg(spec, labels, levels, *, rel_level, top_level) -> float:
    default = ";".join(str(i / 10) for i in range(11))
    points = [float(x) for x in spec.param("levels", default).split(";")]
    return iprec_avg(labels, levels, rel_level, points, spec.param("round", "up"))


@reference("IPrec")  # one recall level of 11pt_avg
def _iprec(spec, labels, levels, *, rel_level, top_level) -> float:
    point = [float(spec.param("recall", "0.0"))]
    return iprec_avg(labels, levels, rel_level, point, spec.param("round", "up"))


def expected_reciprocal_rank(labels: Sequence[Label], k: int | None, max_grade: int = 4) -> float:
    """ERR@k straight from the definition (one loop): ``sum_j R_j / j prod_{i<j} (1 - R_i)``,
    ``R = (2^level - 1) / 2^max_grade`` (0 for a level of 0 or less, or no judgment)."""
    score, decay = 0.0, 1.0
    for j, label in enumerate(labels[:k] if k is not None else labels, start=1):
        grade = label if label is not None and label > 0 else 0
        r = (2**grade - 1) / 2**max_grade
        score += r * decay / j
        decay *= 1 - r
    return score


def scaled_dcg(labels: Sequence[Label], k: int, max_rel: int) -> float:
    """SDCG@k (ir_measures' SDCG, cwl_eval's NDCG-k): DCG@k with gains ``min(level, m) /
    m`` (0 for a doc not in the qrels or at a level of 0 or below), over the DCG of ``k``
    docs of gain 1."""
    gains = [0.0 if label is None else min(max(label, 0), max_rel) / max_rel for label in labels]
    return dcg(gains[:k]) / sum(1 / math.log2(j + 1) for j in range(1, k + 1))


@reference("SDCG")
def _sdcg(spec, labels, levels, *, rel_level, top_level) -> float:
    return scaled_dcg(labels, spec.cutoff, int(spec.param("max_rel", "")))


@reference("ERR")
def _err(spec, labels, levels, *, rel_level, top_level) -> float:
    max_grade = int(float(spec.param("max_rel", "4")))
    return expected_reciprocal_rank(labels, spec.cutoff, max_grade)


# ---------------------------------------------------------------------- orderings


def tie_groups(scores: Sequence[float]) -> list[list[int]]:
    """Indices of the documents grouped by equal score, groups by score descending."""
    groups: dict[float, list[int]] = {}
    for index, score in enumerate(scores):
        groups.setdefault(score, []).append(index)
    return [groups[score] for score in sorted(groups, reverse=True)]


def orderings(scores: Sequence[float], docnos: Sequence[str]) -> Iterator[tuple[str, ...]]:
    """Every total order of ``docnos`` consistent with score descending.

    Permutations inside each tie group, Cartesian product across groups.
    """
    per_group = [
        list(itertools.permutations([docnos[i] for i in group])) for group in tie_groups(scores)
    ]
    for choice in itertools.product(*per_group):
        yield tuple(docno for part in choice for docno in part)


def count_orderings(scores: Sequence[float]) -> int:
    """Number of orders ``orderings`` yields: the product of the groups' factorials."""
    return math.prod(math.factorial(len(group)) for group in tie_groups(scores))


def _multiset_permutations(counts: dict[Label, int]) -> Iterator[tuple[Label, ...]]:
    """Distinct arrangements of a multiset given as value -> count."""
    if not any(counts.values()):
        yield ()
        return
    for value in list(counts):
        if counts[value]:
            counts[value] -= 1
            for rest in _multiset_permutations(counts):
                yield (value, *rest)
            counts[value] += 1


def label_sequences(scores: Sequence[float], labels: Sequence[Label]) -> Counter:
    """Distinct label sequences over all orderings, each with how many orderings give it.

    Inside a group with label counts ``c_1, c_2, ...`` each distinct arrangement of the
    labels is produced by ``c_1! * c_2! * ...`` permutations of the documents. Equal to
    ``Counter(labels of each ordering)`` (checked by a test), much smaller.
    """
    per_group = []
    for group in tie_groups(scores):
        counts = Counter(labels[i] for i in group)
        weight = math.prod(math.factorial(c) for c in counts.values())
        per_group.append([(arrangement, weight) for arrangement in _multiset_permutations(counts)])
    sequences: Counter = Counter()
    for choice in itertools.product(*per_group):
        sequence = tuple(label for arrangement, _ in choice for label in arrangement)
        sequences[sequence] += math.prod(weight for _, weight in choice)
    return sequences


def reference_aware(
    specs: Sequence[Spec],
    scores: Sequence[float],
    labels: Sequence[Label],
    levels: Sequence[int],
    *,
    rel_level: int = 1,
    depth: int | None = None,
    top_level: int | None = None,
) -> dict[Spec, float]:
    """Tie-aware values: each measure's mean over all orderings consistent with the scores."""
    sequences = label_sequences(scores, labels)
    total = sum(sequences.values())
    result = {}
    options = {"rel_level": rel_level, "depth": depth, "top_level": top_level}
    for spec in specs:
        weighted = [
            count * measure(spec, sequence, levels, **options)
            for sequence, count in sequences.items()
        ]
        result[spec] = math.fsum(weighted) / total
    return result


def reference_range(
    specs: Sequence[Spec],
    scores: Sequence[float],
    labels: Sequence[Label],
    levels: Sequence[int],
    *,
    rel_level: int = 1,
    depth: int | None = None,
    top_level: int | None = None,
) -> dict[Spec, list[float]]:
    """Every value each measure takes over all orderings, sorted (min first, max last)."""
    sequences = label_sequences(scores, labels)
    options = {"rel_level": rel_level, "depth": depth, "top_level": top_level}
    return {
        spec: sorted({measure(spec, seq, levels, **options) for seq in sequences}) for spec in specs
    }


def _level_key(label: Label) -> int:
    """Sort key for optimistic/pessimistic: an unjudged doc ranks as level 0 (as tiecore
    stores it), with the judged non-relevant docs of level 0, above negative levels."""
    return 0 if label is None else label


def order_indices(
    scores: Sequence[float], docnos: Sequence[str], labels: Sequence[Label], tiebreak: str
) -> list[int]:
    """Row indices (file order = index order) in the order a tie-break policy gives.

    All policies sort by score descending; inside a tie group:

    - ``trec_eval``: trec_eval 9 -- the scores compared as C floats (scores equal
      in float32 tie), then docno descending (Python ``str`` order = strcmp for ASCII);
    - ``trec_eval_double``: trec_eval 10 -- the scores as given, then docno descending;
    - ``docno_asc``: docno ascending;
    - ``file_order``: original row order (a stable sort);
    - ``optimistic``: level descending (unjudged docs as level 0). Relevant
      documents come first and higher gains before lower ones, which maximizes every
      measure at once: P/R/F1/AP/RR/Rprec/Success only see where the relevant documents
      are, nDCG wants higher gains earlier, and Bpref only counts judged non-relevant
      documents *above* a relevant one -- inside a group they are all below the group's
      relevant documents; the order among non-relevant documents changes nothing;
    - ``pessimistic``: level ascending -- the mirror image, the minimum of every measure.

    A test checks that optimistic/pessimistic give the max/min over all orderings.
    """
    rows = list(range(len(scores)))
    if tiebreak == "trec_eval":
        rows.sort(key=lambda i: docnos[i], reverse=True)
        rows.sort(key=lambda i: as_c_float(scores[i]), reverse=True)
        return rows
    if tiebreak == "trec_eval_double":
        rows.sort(key=lambda i: docnos[i], reverse=True)
    elif tiebreak == "docno_asc":
        rows.sort(key=lambda i: docnos[i])
    elif tiebreak == "optimistic":
        rows.sort(key=lambda i: _level_key(labels[i]), reverse=True)
    elif tiebreak == "pessimistic":
        rows.sort(key=lambda i: _level_key(labels[i]))
    elif tiebreak != "file_order":
        raise ValueError(f"no deterministic order for tie-break {tiebreak!r}")
    rows.sort(key=lambda i: scores[i], reverse=True)  # stable: keeps the order inside ties
    return rows


def reference_oblivious(
    specs: Sequence[Spec],
    scores: Sequence[float],
    docnos: Sequence[str],
    labels: Sequence[Label],
    levels: Sequence[int],
    tiebreak: str,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    top_level: int | None = None,
) -> dict[Spec, float]:
    """Tie-oblivious values: each measure on the one order the tie-break policy gives."""
    ranked = [labels[i] for i in order_indices(scores, docnos, labels, tiebreak)]
    options = {"rel_level": rel_level, "depth": depth, "top_level": top_level}
    return {spec: measure(spec, ranked, levels, **options) for spec in specs}


def mean_over_queries(
    values: dict[str, float],
    run_qids: Iterable[str],
    qrels_qids: Iterable[str],
    *,
    complete: bool = False,
    empty: dict[str, float] | None = None,
) -> float:
    """The "all" value: mean over queries in both run and qrels.

    With ``complete`` (trec_eval ``-c``) the mean is over every qrels query, those
    missing from the run counting as an empty ranking: ``empty`` gives their values
    (0 when not given, as every trec_eval measure of an empty ranking; RBP's
    residual is 1).  ``values`` must hold every query in both.
    """
    both = set(run_qids) & set(qrels_qids)
    missing = set(qrels_qids) - both if complete else set()
    denominator = len(set(qrels_qids)) if complete else len(both)
    total = [values[qid] for qid in both] + [(empty or {}).get(qid, 0.0) for qid in missing]
    return math.fsum(total) / denominator


def consistent_spread(value: float, var: float, low: float, high: float) -> tuple:
    """What ``evaluate_spread`` shows of a module's exact value, variance and bounds
    ``(var, min, max)``: where the bounds differ by at most 2**-42 of their magnitude
    (rounding's, 1,024 units in the last place) no ordering moves the value (variance 0,
    min = max = value); elsewhere the variance as computed and the bounds widened to hold
    the value (``min <= value <= max``)."""
    if abs(high - low) <= 2.0**-42 * max(abs(low), abs(high)):
        return 0.0, value, value
    return var, min(low, value), max(high, value)

"""RBP (Moffat & Zobel 2008), rank-biased precision, and its residual.

``RBP@k = sum_{j <= k} g_j (1 - p) p^(j-1)`` with persistence ``p``: the expected
gain of a user who reads on from each rank with probability ``p``.  The gain is the
level (``gain=linear``, ir_measures'), ``2^level - 1`` (``exp``), relevant or not
(``binary``, Moffat & Zobel's), the level / the qrels' largest level (``scaled``,
rbp_eval's, which TREC-COVID published) or the level / the query's own largest qrels
level where that is above 1 (``query_scaled``: trec_eval 10's ``rbp``, whose
``m_rbp.c`` maps the query's gains onto ``[0, 1]`` when the largest is above 1).

``RBP_residual`` is the weight RBP leaves undecided: the weight of the unjudged ranks
``j <= k`` plus the tail ``p^min(k, retrieved)``, that is ``1 - judged weight``.  Both
live here because they are one model read twice: the same persistence parameter and
geometric rank weight, RBP over the gains and its residual over the judged flags.
Both are document values, so under ties linear permutation statistics.

>>> from tiecore.measures import FAMILIES, Measure, lookup
>>> str(Measure.parse("rbp.p=0.5")), FAMILIES["RBP_residual"].offset
('RBP(p=0.5,gain=scaled)', 1.0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.engine.binomial import log_choose
from tiecore.engine.profiles import GAINS, Divisor, geometric
from tiecore.measures.registry import (
    LINEAR_MOMENTS,
    Doc,
    Family,
    Param,
    Words,
    describe,
    each,
    ones,
    register,
    unscaled_gain_component,
)

if TYPE_CHECKING:
    from tiecore.engine.kernels import HeadSum as Measure


def _rbp_component(measure: Measure) -> str:
    """Binary: relevant or not; ``scaled``, ``query_scaled``: the level (divided by
    :func:`rbp_denominator`)."""
    if measure.gain == "binary":
        return "rel"
    if measure.gain in ("scaled", "query_scaled"):
        return "gain:linear"
    return unscaled_gain_component(measure)


def rbp_denominator(measure, judgments, ranking, cut) -> np.ndarray:
    """1, or with ``gain=scaled`` the largest level of the whole qrels (every query), or
    with ``gain=query_scaled`` each query's own largest qrels level, at least 1.

    ``gain=scaled`` is rbp_eval's graded gain, which TREC-COVID published: ``level /
    top`` with ``top`` the qrels' largest level, so every gain is in ``[0, 1]`` and
    RBP at most 1 (a qrels without a positive level scores 0, as its gains are 0).
    """
    if measure.gain == "scaled":
        top = max(int(judgments.levels.max(initial=0)), 0)
        return np.full(len(judgments.qids), float(top))
    if measure.gain == "query_scaled":
        return np.maximum(query_top_level(judgments), 1).astype(np.float64)
    return ones(measure, judgments, ranking, cut)


def query_top_level(judgments) -> np.ndarray:
    """Per query the largest level ``>= 0`` of its qrels docs, retrieved or not (0 when it
    has none): trec_eval's ``num_rel_levels - 1`` (``form_res_rels.c``).

    trec_eval 10's ``rbp`` then divides the gains (the levels) by it when it is above 1;
    its ``m_rbp.c`` reads the smallest and largest gain from variables it never sets,
    and this is the reading its test outputs bear out (the smallest gain 0, level 0's).
    """
    top = np.zeros(len(judgments.qids), np.int64)
    if len(judgments.levels):
        np.maximum.at(top, judgments.query_of_key, np.maximum(judgments.levels, 0))
    return top


def _rbp_divisor(measure: Measure) -> Divisor:
    return geometric(float(measure.param("p")))


PERSISTENCE = Param("0.8", description="the chance of reading on from one rank to the next")
RBP_GAIN = Param(
    "linear",
    (*GAINS, "binary", "scaled", "query_scaled"),
    description="linear: the level; exp: 2^level - 1; binary: relevant or not; scaled: "
    "the level / the qrels' largest level (rbp_eval's); query_scaled: the level / the "
    "query's largest qrels level when above 1 (trec_eval 10's rbp)",
)

register(
    Family(
        "RBP",
        "sum over ranks j <= k of gain (1 - p) p^(j-1); gain the level (linear, "
        "ir_measures'), 2^level - 1 (exp), relevant (binary, Moffat & Zobel's) or the level "
        "/ the qrels' largest level (scaled, rbp_eval's and TREC-COVID's) or / the query's "
        "largest level when above 1 (query_scaled, trec_eval 10's rbp)",
        params={"p": PERSISTENCE, "gain": RBP_GAIN},
        component=_rbp_component,
        divisor=_rbp_divisor,
        denominator=rbp_denominator,
        **LINEAR_MOMENTS,
    )
)


def _residual_component(measure: Measure) -> str | None:
    """``judged`` (tiecore's residual, a head sum), or None for trec_eval 10's
    ``rbp_resid`` (its own hooks: :func:`trec_resid_values` and its neighbours)."""
    return None if measure.param("convention") == "trec_eval" else "judged"


# ------------------------------------------------- trec_eval 10's rbp_resid, exact


def _weights(rank: np.ndarray, p: float) -> np.ndarray:
    """RBP's rank weight ``(1 - p) p^(rank - 1)``."""
    return (1.0 - p) * np.power(p, rank - 1.0)


def _trec_unjudged(ranking) -> np.ndarray:
    """trec_eval 10's unjudged rows: not in the qrels, or at a negative level."""
    return ~(ranking.judged & (ranking.level >= 0))


def trec_resid_oblivious(ranking, p: float, n: np.ndarray) -> np.ndarray:
    """The ranking's own order: ``p^n + sum over unjudged ranks j <= n of (1 - p)
    p^(j-1)`` where the top n holds an unjudged doc, else 0 (trec_eval 10)."""
    nq = len(ranking.counts)
    inside = _trec_unjudged(ranking) & (ranking.rank <= n[ranking.query])
    query = ranking.query[inside]
    count = np.bincount(query, minlength=nq)
    total = np.bincount(query, weights=_weights(ranking.rank[inside], p), minlength=nq)
    return np.where(count > 0, np.power(p, n) + total, 0.0)


def trec_resid_moments(ranking, p: float, n: np.ndarray) -> dict:
    """Exact ``value, var, min, max`` over every ordering of the tied docs.

    With ``L = p^n + sum_{unjudged j <= n} (1 - p) p^(j-1)`` (a linear permutation
    statistic: each group's ``u`` unjudged docs take ``u`` of its positions at
    random) and ``Z`` the event that the top n holds no unjudged doc (then ``L = p^n``
    exactly), the value is ``L (1 - Z) = L - p^n Z``, so with ``P = P(Z)`` (the product
    over groups of the hypergeometric chance of no unjudged doc in the group's slots
    above n)

        E = E[L] - p^n P,    Var = Var(L) - p^2n P (1 + P) + 2 p^n P E[L]

    (``E[L Z] = p^n P``).  ``Var(L)`` is the sum over groups of ``u (n_g - u) / (n_g -
    1)`` times the population variance of the group's weights (0 past n); the extremes
    of ``L`` put the unjudged docs first (max) or last (min) in every group, and the
    value's are ``max L`` (0 when ``P = 1``) and ``min L`` (0 when ``P > 0``).
    """
    nq = len(ranking.counts)
    tail = np.power(p, n.astype(np.float64))
    if ranking.rank.size == 0:
        zeros = np.zeros(nq)
        return {"value": zeros, "var": zeros.copy(), "min": zeros.copy(), "max": zeros.copy()}
    unjudged = _trec_unjudged(ranking)
    start, size, group, gq = ranking.group_start, ranking.size, ranking.group, ranking.group_query
    weight = np.where(ranking.rank <= n[ranking.query], _weights(ranking.rank, p), 0.0)
    u = np.add.reduceat(unjudged.astype(np.int64), start)
    mean_w = np.add.reduceat(weight, start) / size
    square_w = np.add.reduceat(weight * weight, start) / size
    expected = tail + np.bincount(gq, weights=u * mean_w, minlength=nq)
    spread = np.maximum(square_w - mean_w**2, 0.0)
    many = size > 1
    group_var = np.where(many, u * (size - u) / np.where(many, size - 1, 1) * spread, 0.0)
    var_l = np.bincount(gq, weights=group_var, minlength=nq)
    # extremes of L: the unjudged docs on the group's first u positions (max) or last (min)
    first = ranking.position < u[group]
    last = ranking.position >= (size - u)[group]
    high = tail + np.bincount(ranking.query[first], weights=weight[first], minlength=nq)
    low = tail + np.bincount(ranking.query[last], weights=weight[last], minlength=nq)
    # P(no unjudged doc above n): per group C(size - u, s) / C(size, s), s its slots
    slots = np.clip(n[gq] - ranking.offset, 0, size)
    reached = (slots > 0) & (u > 0)
    forced = np.bincount(gq, weights=reached & (slots > size - u), minlength=nq) > 0
    log_zero = np.where(
        reached & (slots <= size - u), _log_choose(size - u, slots) - _log_choose(size, slots), 0.0
    )
    zero = np.where(forced, 0.0, np.exp(np.bincount(gq, weights=log_zero, minlength=nq)))
    zero[np.bincount(gq, weights=reached, minlength=nq) == 0] = 1.0  # no unjudged doc above n
    mixed = (zero > 0.0) & (zero < 1.0)
    var = var_l - tail * tail * zero * (1.0 + zero) + 2.0 * tail * zero * expected
    return {
        "value": np.where(zero >= 1.0, 0.0, expected - tail * zero),
        "var": np.where(mixed, np.maximum(var, 0.0), np.where(zero >= 1.0, 0.0, var_l)),
        "min": np.where(zero > 0.0, 0.0, low),
        "max": np.where(zero < 1.0, high, 0.0),
    }


def _log_choose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log C(a, b)`` for integers ``0 <= b <= a`` (elementwise; anything where ``b > a``)."""
    a = np.asarray(a, np.int64)
    return log_choose(a, np.minimum(np.asarray(b, np.int64), a), table=True)


def trec_resid_sample(ranking, judgments, p: float, n: np.ndarray, *, samples, rng):
    """``(samples, queries)`` under random tie-breaks (:mod:`tiecore.engine.sampling`'s keyed
    draws), each draw read as :func:`trec_resid_oblivious` reads an order: from the
    judged weight ``J`` and count ``c`` of the top n, ``L = 1 - J`` and the value
    ``L`` where ``c < n``, else 0."""
    from tiecore.engine.sampling import Sampler  # lazy: sampling (~7 ms) only when sampled

    nq = len(ranking.counts)
    judged = ~_trec_unjudged(ranking)
    sampler = Sampler(ranking, judgments, int(n.max(initial=0)))
    keep = judged & (ranking.rank <= n[ranking.query])
    keep[sampler.cleared] = False
    fixed_weight = np.bincount(
        ranking.query[keep], weights=_weights(ranking.rank[keep], p), minlength=nq
    ).astype(np.float64)  # (an empty bincount is of integers)
    fixed_count = np.bincount(ranking.query[keep], minlength=nq)
    out = np.empty((samples, nq))
    query = ranking.query[sampler.rows]
    for first, size, doc, slot in sampler.draws(samples, rng):
        weight = np.broadcast_to(fixed_weight, (size, nq)).copy()
        count = np.broadcast_to(fixed_count, (size, nq)).copy()
        if doc is not None:
            rank = ranking.rank[slot]
            inside = judged[doc] & (rank <= n[query][None, :])
            cell = (np.arange(size)[:, None] * nq + query[None, :])[inside]
            weight += np.bincount(
                cell, weights=_weights(rank[inside], p), minlength=size * nq
            ).reshape(size, nq)
            count += np.bincount(cell, minlength=size * nq).reshape(size, nq)
        out[first : first + size] = np.where(count < n, 1.0 - weight, 0.0)
    return out


def trec_resid_values(measure, profile, ranking, judgments, depth=None) -> np.ndarray:
    """Per query, in the profile's mode (oblivious: the ranking's order; aware: the mean)."""
    p, n = float(measure.param("p")), ranking.cut(measure.cutoff, depth)
    if profile.mode == "aware":
        return trec_resid_moments(ranking, p, n)["value"]
    return trec_resid_oblivious(ranking, p, n)


def trec_resid_spread(measure, ranking, judgments, depth=None) -> dict:
    """Per query ``value, var, min, max``, exact (:func:`trec_resid_moments`)."""
    return trec_resid_moments(
        ranking, float(measure.param("p")), ranking.cut(measure.cutoff, depth)
    )


def trec_resid_draws(measure, ranking, judgments, *, samples, rng, depth=None) -> np.ndarray:
    """``(samples, queries)`` (:func:`trec_resid_sample`)."""
    p, n = float(measure.param("p")), ranking.cut(measure.cutoff, depth)
    return trec_resid_sample(ranking, judgments, p, n, samples=samples, rng=rng)


register(
    Family(
        "RBP_residual",
        "RBP's residual: the weight (1 - p) p^(j-1) of the unjudged ranks "
        "j <= k plus the tail p^min(k, retrieved), = 1 - judged weight; convention="
        "trec_eval: trec_eval 10's rbp_resid, 0 when no unjudged doc (none in the qrels "
        "or at a negative level) is in the top k",
        ("rbp_res",),
        params={
            "p": PERSISTENCE,
            "convention": Param(
                "tiecore",
                ("tiecore", "trec_eval"),
                description="tiecore: a doc in the qrels is judged, and the tail always "
                "counts; trec_eval: trec_eval 10's rbp_resid (a negative level is "
                "unjudged, and the residual is 0 without an unjudged doc in the top k)",
            ),
        },
        component=_residual_component,
        divisor=_rbp_divisor,
        denominator=ones,
        scale=-1.0,
        offset=1.0,
        values=each(trec_resid_values),
        spread=each(trec_resid_spread),
        sample=each(trec_resid_draws),
        **LINEAR_MOMENTS,
    )
)


# ---------------------------------- what it means: the glossary's words, the docs' rows
describe(
    "RBP",
    words=Words(
        cut=(
            "rank-biased precision of the top {k} (persistence {p})",
            "each document's gain ({gain}) times (1 − {p}) × {p}^(rank − 1), summed over the top "
            "{k}: a reader goes on to the next document with probability {p}",
        ),
        whole=(
            "rank-biased precision (persistence {p})",
            "each document's gain ({gain}) times (1 − {p}) × {p}^(rank − 1), summed over the "
            "ranked list: a reader goes on to the next document with probability {p}",
        ),
    ),
    docs=(
        Doc(
            "`RBP(p=0.8)`, `RBP(p=0.8)@k`",
            "",
            "Σ over ranks j ≤ k of gain · (1 − p)·p^(j−1); gain the level (as ir_measures), "
            "`gain=exp`, `gain=binary` or `gain=scaled` (next row)",
            "–",
        ),
        Doc(
            "`RBP(p=0.5,gain=scaled)`, `RBP(p=0.5,gain=scaled)@k`",
            "`rbp.p=0.5`, `rbp.p=0.5@k`",
            "RBP with the gain level / the largest level of the whole qrels (every gain in [0, "
            "1]), as rbp_eval computes graded RBP and TREC-COVID published its `RBP(p=0.5)` "
            "column: with levels 0–2 it is `RBP(p=0.5)` / 2. `rbp.p=…` names this gain; plain "
            "`rbp` is `RBP` (ir_measures' level gain)",
            "`RBP(p)` / the largest level, in the three modes",
        ),
        Doc(
            "`RBP(p=0.9,gain=query_scaled)`",
            "`rbp` (trec_eval 10's, `--trec-eval 10`)",
            "RBP with the gain the level / the query's own largest qrels level when that is above "
            "1, as trec_eval 10.0's `rbp` scales it",
            "trec_eval 10.0 (see cli.md on its unset scale variables)",
        ),
    ),
)

describe(
    "RBP_residual",
    words=Words(
        cut=(
            "RBP's residual over the top {k} (persistence {p})",
            "how much RBP could still grow: the weight of the unjudged documents in the top {k} "
            "plus all the weight below rank {k}",
        ),
        whole=(
            "RBP's residual (persistence {p})",
            "how much RBP could still grow: the weight of the unjudged retrieved documents plus "
            "all the weight below the last one",
        ),
        extra=(
            (
                "convention",
                "trec_eval",
                "; as trec_eval 10's rbp_resid: a negative level counts as unjudged, and the "
                "residual is 0 when no unjudged document is ranked",
            ),
        ),
    ),
    docs=(
        Doc(
            "`RBP_residual(p=0.8)`",
            "`rbp_res`",
            "the RBP weight of the unjudged ranks j ≤ k plus the tail p^min(k, retrieved), that "
            "is 1 − Σ over judged ranks of (1 − p)·p^(j−1): how much RBP could still grow",
            "–",
        ),
        Doc(
            "`RBP_residual(p=0.9,convention=trec_eval)`",
            "`rbp_resid` (`--trec-eval 10`)",
            "trec_eval 10.0's residual: a doc not in the qrels or at a negative level is "
            "unjudged, and the value is p^n + Σ over unjudged ranks j ≤ n of (1 − p)·p^(j−1) when "
            "one of the n docs read is unjudged, else 0 (the event counted exactly under ties)",
            "trec_eval 10.0",
        ),
    ),
)

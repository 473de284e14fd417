"""Per-position contributions from which every measure is a sum over the top ranks.

For one ordering of a ranked list, every supported measure is a head sum
``sum_{j <= k} c_j / w_j`` of one of these per-position components ``c``:

=========  =========================================  ==========================
component  oblivious (one ordering)                   aware (mean over orderings)
=========  =========================================  ==========================
``rel``    ``rel_j``                                  ``r/n``
``ap``     ``rel_j * (relevant in 1..j)``             ``r/n (R + 1 + p (r-1)/(n-1))``
``first``  ``[j is the first relevant rank]``          ``C(n-1-p, r-1) / C(n, r)`` if ``R = 0``
``bpref``  ``rel_j (1 - min(N_j, R*) / min(N, R*))``  ``r/n E_b[...]``, see below
``gain``   ``g(level_j)``                             ``(sum of the group's gains) / n``
=========  =========================================  ==========================

Here ``p`` is the 0-based position inside the tie group, ``n, r`` its size and
relevant count, ``R`` the relevant docs ranked above the group and ``N_j`` the
judged non-relevant docs above rank ``j``.  Every aware entry is the expected
value of the oblivious entry under a uniformly random order of each group, so
by linearity every aware measure is the mean over all orderings (McSherry &
Najork 2008, with their AP and RR formulas written per position).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tiecore.judgments import Judgments, gain_of
from tiecore.ranking import Ranking


@dataclass
class Profile:
    """Components per row in ranked order, each with a trailing 0 (length ``rows + 1``)."""

    rel: np.ndarray
    ap: np.ndarray
    first: np.ndarray
    bpref: np.ndarray
    gains: dict[str, np.ndarray] = field(default_factory=dict)
    _gain_source: object = None

    def component(self, name: str) -> np.ndarray:
        """``rel``, ``ap``, ``first``, ``bpref``, ``gain:linear`` or ``gain:exp``."""
        if name.startswith("gain:"):
            gain = name.partition(":")[2]
            if gain not in self.gains:
                self.gains[gain] = self._gain_source(gain)
            return self.gains[gain]
        return getattr(self, name)


def _padded(values: np.ndarray) -> np.ndarray:
    out = np.zeros(len(values) + 1)
    out[:-1] = values
    return out


def bpref_denominator(ranking: Ranking, judgments: Judgments) -> np.ndarray:
    """Per-query ``min(N, R)``; ``R`` relevant and ``N`` judged non-relevant qrels docs."""
    return np.minimum(judgments.num_nonrel, judgments.num_rel).astype(np.float64)


def oblivious(ranking: Ranking, judgments: Judgments) -> Profile:
    """Components of the ranking's own order (its tie-break decides)."""
    rel = ranking.rel.astype(np.float64)
    before_query = ranking.starts[ranking.query]
    cum_rel = _inclusive_within(ranking.rel, before_query)
    nonrel_above = _inclusive_within(ranking.nonrel, before_query) - ranking.nonrel
    num_rel = judgments.num_rel[ranking.query]
    denominator = bpref_denominator(ranking, judgments)[ranking.query]
    with np.errstate(divide="ignore", invalid="ignore"):
        bpref = np.where(
            ranking.rel,
            1.0 - np.minimum(nonrel_above, num_rel) / np.where(denominator > 0, denominator, 1),
            0.0,
        )
    return Profile(
        rel=_padded(rel),
        ap=_padded(rel * cum_rel),
        first=_padded(rel * (cum_rel == 1)),
        bpref=_padded(bpref),
        _gain_source=lambda gain: _padded(row_gains(ranking, judgments, gain)),
    )


def row_gains(ranking: Ranking, judgments: Judgments, gain: str) -> np.ndarray:
    """Each row's nDCG gain, 0 for an unjudged doc (exp gains scaled per query, see
    :func:`tiecore.judgments.gain_of`)."""
    shift = judgments.gain_shift(gain)[ranking.query]
    return np.where(ranking.judged, gain_of(ranking.level, gain, shift), 0.0)


def _inclusive_within(flags: np.ndarray, before_query: np.ndarray) -> np.ndarray:
    """Running count of ``flags`` within each query (integers, exact)."""
    total = np.cumsum(flags, dtype=np.int64)
    return total - (total[before_query] - flags[before_query])


def aware(ranking: Ranking, judgments: Judgments, depth: int | None = None) -> Profile:
    """Expected components over all orderings of every tie group.

    ``depth`` (trec_eval ``-M``) matters only for Bpref, whose per-position
    term inside a group cut by the depth depends on the position.
    """
    g = ranking.group
    n = ranking.size.astype(np.float64)
    r = ranking.rel_count.astype(np.float64)
    p = ranking.position.astype(np.float64)
    share = (r / n)[g]
    with np.errstate(divide="ignore", invalid="ignore"):
        pair = np.where(n > 1, (r - 1) / (n - 1), 0.0)[g]
    ap = share * (ranking.rel_before[g] + 1 + p * pair)
    first = _first_relevant_probability(ranking)
    bpref = _aware_bpref(ranking, judgments, depth)

    def gains(gain: str) -> np.ndarray:
        values = row_gains(ranking, judgments, gain)
        totals = np.add.reduceat(values, ranking.group_start) if len(values) else values
        return _padded((totals / n)[g])

    return Profile(
        rel=_padded(share),
        ap=_padded(ap),
        first=_padded(first),
        bpref=_padded(bpref),
        _gain_source=gains,
    )


def _first_relevant_probability(ranking: Ranking) -> np.ndarray:
    """P(first relevant doc at this position): only in the first group holding one.

    With ``n`` docs and ``r`` relevant ones in random order the first relevant
    one is at 0-based position ``p`` with probability ``C(n-1-p, r-1) / C(n, r)``.
    """
    g = ranking.group
    n, r = ranking.size[g], ranking.rel_count[g]
    p = ranking.position
    live = (ranking.rel_before[g] == 0) & (r > 0) & (p <= n - r)
    out = np.zeros(len(g))
    n, r, p = n[live], r[live], p[live]
    log_factorial = _log_factorials(int(n.max(initial=0)))
    log_p = (
        np.log(r)
        + log_factorial[n - p - 1]
        + log_factorial[n - r]
        - log_factorial[n]
        - log_factorial[n - r - p]
    )
    out[live] = np.where(r == 1, 1.0 / n, np.exp(log_p))
    return out


def _log_factorials(largest: int) -> np.ndarray:
    """``log(k!)`` for ``k = 0..largest``, each from ``math.lgamma`` (no summed rounding)."""
    return np.array([math.lgamma(k + 1.0) for k in range(largest + 1)])


def sum_min(y: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``sum_{x=0}^{y} min(x, cap)`` in closed form (0 for ``y < 0``)."""
    y = y.astype(np.float64)
    low = np.minimum(y, cap)
    return np.where(y < 0, 0.0, low * (low + 1) / 2 + np.maximum(y - cap, 0) * cap)


def _aware_bpref(ranking: Ranking, judgments: Judgments, depth: int | None) -> np.ndarray:
    """Expected Bpref term per position.

    A relevant doc of a group with ``m`` judged non-relevant docs is preceded by
    ``b`` of them, ``b`` uniform on ``0..m``; so the group adds
    ``r (1 - sum_b min(N_g + b, R) / ((m+1) min(N, R)))`` spread evenly over
    its ``n`` positions.  A group cut by ``depth`` needs the term at each
    position ``p``: ``b`` is then hypergeometric (``p`` draws from ``n - 1``).
    """
    q = ranking.group_query
    num_rel = judgments.num_rel[q].astype(np.float64)
    denom = np.minimum(judgments.num_nonrel[q], judgments.num_rel[q]).astype(np.float64)
    a, m = ranking.nonrel_before, ranking.nonrel_count
    mean_min = (sum_min(a + m, num_rel) - sum_min(a - 1, num_rel)) / (m + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(denom > 0, 1.0 - mean_min / denom, 1.0)
    per_row = (ranking.rel_count * term / ranking.size)[ranking.group]
    if depth is not None:
        cut = (
            (ranking.offset < depth)
            & (ranking.offset + ranking.size > depth)
            & (ranking.rel_count > 0)
        )
        rows = np.flatnonzero(cut[ranking.group] & (ranking.rank <= depth))
        if rows.size:
            per_row[rows] = _bpref_at_position(ranking, judgments, rows)
    return per_row


def _bpref_at_position(ranking: Ranking, judgments: Judgments, rows: np.ndarray) -> np.ndarray:
    """Expected Bpref term at given positions: ``r/n (1 - E[min(N_g + X, R)] / min(N, R))``.

    ``X ~ Hypergeom(n - 1, m, p)`` counts the judged non-relevant docs of the
    group ahead of a relevant doc at 0-based position ``p``.
    """
    g = ranking.group[rows]
    q = ranking.query[rows]
    n, m, r = ranking.size[g], ranking.nonrel_count[g], ranking.rel_count[g]
    a, p = ranking.nonrel_before[g], ranking.position[rows]
    cap = judgments.num_rel[q]
    denom = np.minimum(judgments.num_nonrel[q], cap).astype(np.float64)
    support = np.minimum(p, m)
    # E[min(a + X, cap)] = a + E[X] - E[(a + X - cap)+]; the last part only where a + X can pass cap
    expected = a + np.where(n > 1, p * m / np.maximum(n - 1, 1), 0.0)
    over = np.flatnonzero(a + support > cap)
    if over.size:
        from scipy import stats  # only here: importing scipy.stats takes seconds

        width = support[over] + 1
        owner = np.repeat(over, width)
        x = np.arange(width.sum()) - np.repeat(np.cumsum(width) - width, width)
        pmf = stats.hypergeom.pmf(x, n[owner] - 1, m[owner], p[owner])
        excess = np.maximum(a[owner] + x - cap[owner], 0) * pmf
        expected[over] -= np.bincount(
            np.searchsorted(over, owner), weights=excess, minlength=over.size
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(denom > 0, 1.0 - expected / denom, 1.0)
    return r / n * term

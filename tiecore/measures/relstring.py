"""trec_eval's ``relstring``: the relevance values of a ranking's top docs, as a string.

trec_eval (``m_relstring.c``) prints per query the first ``length`` retrieved docs
(default 10; ``relstring.20``; at most the docs retrieved, up to the depth ``-M``) as one
character each: the qrels level ``0`` .. ``9``, ``>`` above 9, ``-`` for a doc not in the
qrels and ``.`` for one whose qrels level is negative; ``'...'`` quoted, per query only.

It names one ordering, not a number: tiecore prints it in oblivious mode only (the
ranking's own order, trec_eval's tie-break); there is no mean over orderings of a string.

>>> import pandas as pd
>>> from tiecore.engine.judgments import Judgments
>>> from tiecore.engine.ranking import Ranking
>>> qrels = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "level": [2, 0, 12]})
>>> run = pd.DataFrame({"qid": "1", "docno": list("abcd"), "score": [4.0, 3.0, 2.0, 1.0]})
>>> j = Judgments.from_qrels(qrels)
>>> relstrings(Ranking.build(run, j), 10)
['20>-']
"""

from __future__ import annotations

import numpy as np

from tiecore.engine.ranking import Ranking
from tiecore.measures.orderings import NONPOOL, UNJUDGED, retrieved, trec_levels

#: trec_eval's character of each relevance value.
_DIGITS = np.frombuffer(b"0123456789", dtype="S1")


def relstrings(ranking: Ranking, length: int, depth: int | None = None) -> list[str]:
    """Per query (the judgments' order) the relevance string of its first ``length`` docs."""
    level = trec_levels(ranking)
    chars = np.full(level.size, b"<", dtype="S1")
    chars[level > 9] = b">"
    digit = (level >= 0) & (level <= 9)
    chars[digit] = _DIGITS[level[digit]]
    chars[level == NONPOOL] = b"-"
    chars[level == UNJUDGED] = b"."
    shown = retrieved(ranking, depth) & (ranking.rank <= max(length, 0))
    counts = np.bincount(ranking.query[shown], minlength=len(ranking.counts))
    text = chars[shown].tobytes().decode("ascii")
    ends = np.cumsum(counts)
    return [
        text[end - count : end] for end, count in zip(ends.tolist(), counts.tolist(), strict=True)
    ]

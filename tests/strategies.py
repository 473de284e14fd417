"""Hypothesis strategies for small, tie-heavy runs and their qrels.

A :class:`Case` holds a few queries: some in both run and qrels, some only in the
run, some only in the qrels. Scores come from a handful of values, so ties are
everywhere; levels come from ``{-1, 0, 1, 2, 3}`` or are missing (unjudged); the
qrels also hold judged documents that were not retrieved. Docnos are short ASCII
strings mixing cases, digits and punctuation, so that byte order (strcmp) differs
from any "natural" order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd
from hypothesis import assume
from hypothesis import strategies as st

#: Exactly representable scores, so equal scores stay equal whatever the code path.
SCORES = (-1.5, 0.0, 0.25, 0.5, 1.0, 2.0, 3.0)
#: Scores that differ as float64 but not once rounded to float32 (trec_eval 9's
#: C float): 1e-9 apart near 1 (float32's spacing there is 1.2e-7), on both sides
#: of a rounding midpoint, beyond the float range (+-inf) and below it (0).
FLOAT32_COLLIDING = (
    1.0,
    1.0 + 1e-9,
    1.0 + 2e-9,
    1.0 - 1e-9,
    1.0 + 2.0**-24,  # the midpoint between 1 and the next float: rounds to even (1)
    1.0 + 2.0**-24 + 2.0**-40,  # just above it: rounds up
    1.0 + 2.0**-23,
    0.5,
    0.5 + 1e-12,
    -2.0,
    -2.0 - 1e-9,
    1e39,
    2e39,
    3.4028235e38,
    -1e39,
    -5e39,
    0.0,
    1e-50,
    -1e-50,
    2e-46,
)
#: Qrels levels; ``None`` (not in the qrels) is added for retrieved documents.
LEVELS = (-1, 0, 1, 2, 3)
#: Levels whose exp gains ``2**level - 1`` pass float64's exact integers (53) and its
#: range (1024): nDCG(gain=exp) must stay exact whatever the levels.
HUGE_LEVELS = (-1, 0, 1, 2, 52, 53, 54, 511, 512, 1023, 1024, 1025, 1100, 1999, 2000)
ALPHABET = "abAB09-_.Z"
QID_ALPHABET = "0123456789q"


@dataclass
class Query:
    """One query: retrieved documents in file order, and the query's qrels (may be None)."""

    docnos: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    qrels: dict[str, int] | None = None

    @property
    def labels(self) -> list[int | None]:
        """Qrels level of each retrieved document (file order), None if not in the qrels."""
        qrels = self.qrels or {}
        return [qrels.get(docno) for docno in self.docnos]

    @property
    def levels(self) -> list[int]:
        """Levels of every qrels document of the query."""
        return list((self.qrels or {}).values())


@dataclass
class Case:
    """Several queries plus the row order of the run file (rows may interleave queries)."""

    queries: dict[str, Query]
    #: qid of each run row in file order; a query's documents keep their own order
    row_qids: list[str]

    @property
    def run_qids(self) -> list[str]:
        return [qid for qid, q in self.queries.items() if q.docnos]

    @property
    def qrels_qids(self) -> list[str]:
        return [qid for qid, q in self.queries.items() if q.qrels]

    @property
    def top_level(self) -> int:
        """The largest level of the whole qrels (nDCG's "max" ideal), 0 without qrels."""
        return max((level for q in self.queries.values() for level in q.levels), default=0)

    @property
    def both_qids(self) -> list[str]:
        return [qid for qid in self.run_qids if self.queries[qid].qrels]

    def run_frame(self) -> pd.DataFrame:
        """Run as tiecore takes it: qid, docno, score; rows in the order of ``row_qids``."""
        pending = {
            qid: iter(zip(q.docnos, q.scores, strict=True)) for qid, q in self.queries.items()
        }
        rows = [(qid, *next(pending[qid])) for qid in self.row_qids]
        frame = pd.DataFrame(rows, columns=["qid", "docno", "score"])
        return frame.astype({"qid": str, "docno": str, "score": "float64"})

    def qrels_frame(self) -> pd.DataFrame:
        """Qrels as tiecore takes them: qid, docno, level (int64)."""
        rows = [
            (qid, docno, level)
            for qid, q in self.queries.items()
            if q.qrels
            for docno, level in q.qrels.items()
        ]
        frame = pd.DataFrame(rows, columns=["qid", "docno", "level"])
        return frame.astype({"qid": str, "docno": str, "level": "int64"})


def docno_lists(n: int, exclude: frozenset[str] = frozenset()) -> st.SearchStrategy[list[str]]:
    """``n`` unique short docnos, none of them in ``exclude``."""
    docno = st.text(ALPHABET, min_size=1, max_size=3).filter(lambda d: d not in exclude)
    return st.lists(docno, min_size=n, max_size=n, unique=True)


@st.composite
def queries(
    draw: st.DrawFn,
    role: str,
    score_values: list[float],
    *,
    max_docs: int = 9,
    max_label_kinds: int = 3,
    distinct_scores: bool = False,
    level_pool: tuple[int, ...] = LEVELS,
) -> Query:
    """One query with ``role`` "both", "run" (no qrels) or "qrels" (not retrieved).

    At most ``max_label_kinds`` different labels per query keep the number of distinct
    label orderings (the brute force's work) small; with ``distinct_scores`` no two
    documents of the query tie.
    """
    query = Query()
    if role != "qrels":
        n = draw(st.integers(1, max_docs))
        query.docnos = draw(docno_lists(n))
        if distinct_scores:
            pool = st.floats(-10, 10, allow_nan=False, width=32).map(lambda x: x + 0.0)
            query.scores = draw(st.lists(pool, min_size=n, max_size=n, unique=True))
        else:
            query.scores = draw(st.lists(st.sampled_from(score_values), min_size=n, max_size=n))
    if role == "run":
        return query
    kinds = st.sampled_from((None, *level_pool))
    palette = draw(st.lists(kinds, min_size=1, max_size=max_label_kinds, unique=True))
    n = len(query.docnos)
    labels = draw(st.lists(st.sampled_from(palette), min_size=n, max_size=n))
    query.qrels = {
        docno: level for docno, level in zip(query.docnos, labels, strict=True) if level is not None
    }
    # a query in the qrels has at least one qrels row
    n_extra = draw(st.integers(0 if query.qrels else 1, 4))
    extra = draw(docno_lists(n_extra, frozenset(query.docnos)))
    for docno in extra:
        query.qrels[docno] = draw(st.sampled_from(level_pool))
    return query


@st.composite
def cases(
    draw: st.DrawFn,
    *,
    max_queries: int = 4,
    max_docs: int = 9,
    max_label_kinds: int = 3,
    distinct_scores: bool = False,
    only_both: bool = False,
    score_pool: tuple[float, ...] = SCORES,
    max_score_values: int = 3,
    level_pool: tuple[int, ...] = LEVELS,
) -> Case:
    """A tie-heavy run with its qrels; the first query is always in both.

    Each case draws up to ``max_score_values`` scores from ``score_pool`` and
    its qrels levels from ``level_pool``.
    """
    n = draw(st.integers(1, max_queries))
    qid = st.text(QID_ALPHABET, min_size=1, max_size=3)
    qids = draw(st.lists(qid, min_size=n, max_size=n, unique=True))
    score_values = draw(
        st.lists(st.sampled_from(score_pool), min_size=1, max_size=max_score_values, unique=True)
    )
    role_pool = ("both",) if only_both else ("both", "both", "both", "run", "qrels")
    result = {}
    for i, qid in enumerate(qids):
        role = "both" if i == 0 else draw(st.sampled_from(role_pool))
        query = queries(
            role,
            score_values,
            max_docs=max_docs,
            max_label_kinds=max_label_kinds,
            distinct_scores=distinct_scores,
            level_pool=level_pool,
        )
        result[qid] = draw(query)
    row_qids = [qid for qid, q in result.items() for _ in q.docnos]
    if draw(st.booleans()):  # interleave the queries' rows
        row_qids = draw(st.permutations(row_qids))
    return Case(result, row_qids)


#: One set of evaluation options per example.
rel_levels = st.sampled_from([1, 2])
depths = st.one_of(st.none(), st.integers(1, 6))


# ------------------------------------------------------------------ generated run files (text)
# Valid TREC run files in every layout trec_eval reads: separators, line endings, tags,
# comments and junk fields after the tag.

token_chars = st.characters(
    codec="utf-8", exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), exclude_characters="#"
)
qids = st.text(token_chars, min_size=1, max_size=4)
# not whitespace to trec_eval (ASCII only): must stay inside a docno
odd_chars = st.sampled_from(["#", "\u00a0", "\u3000", "\x85", "\x1c", "\x01", '"'])
docnos = st.text(st.one_of(token_chars, odd_chars), min_size=1, max_size=40)
tags = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8)
finite = st.floats(allow_nan=False, allow_infinity=False)
score_formats = st.sampled_from(["{!r}", "{:.6f}", "{:e}", "{:+.3g}", "{:.0f}", "{:E}"])
MIXED_SEPARATORS = [" ", "\t", "  ", " \t", "\t\t", "\t  ", "\x0b", "\x0c"]
ENDINGS = {"lf": ["\n"], "crlf": ["\r\n"], "cr": ["\r"], "mixed": ["\n", "\r\n", "\r"]}


def join_lines(draw: st.DrawFn, lines: list[str], endings: list[str]) -> str:
    """Lines joined with endings drawn from ``endings``, perhaps one after the last line."""

    def ending(text: str) -> str:
        chosen = draw(st.sampled_from(endings))
        # CR, an empty line, LF would read as one CR LF break: use a second CR
        return "\r" if chosen == "\n" and text.endswith("\r") else chosen

    text = ""
    for k, line in enumerate(lines):
        text += (ending(text) if k else "") + line
    return text + (ending(text) if draw(st.booleans()) else "")


@st.composite
def run_files(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    """A valid run file and the 1-based line number of every record in it."""
    tagged = draw(st.booleans())
    junk = tagged and draw(st.booleans())
    style = draw(st.sampled_from(["uniform", "padded", "mixed"]))
    endings = ENDINGS[draw(st.sampled_from(sorted(ENDINGS)))]
    sep_choice = draw(st.sampled_from(["\t", " "]))
    tag = draw(tags)
    pairs = draw(
        st.lists(st.tuples(qids, docnos), min_size=1, max_size=30, unique=True),
    )
    lines: list[str] = []
    numbers: list[int] = []
    for rank, (qid, docno) in enumerate(pairs):
        if draw(st.integers(0, 9)) == 0:  # a blank or comment line
            lines.append(draw(st.sampled_from(["", "# a comment", "  ", "\t#x y"])))
        x = draw(finite)
        score = draw(score_formats).format(x)
        assume(math.isfinite(float(score)))
        fields = [qid, "Q0", docno, str(rank + draw(st.integers(0, 3))), score]
        if tagged:
            fields.append(tag)
        if junk:  # trec_eval ignores fields after the tag, as many as the line likes,
            # once the first line and another have some (its own results.trunc)
            some = not numbers or rank == len(pairs) - 1
            fields += draw(
                st.lists(st.sampled_from(["junk", "more"]), min_size=int(some), max_size=3)
            )
        if style == "uniform":
            text = sep_choice.join(fields)
        elif style == "padded":  # as trec_eval's results.test: tabs, spaces around the score
            fields[4] = draw(st.sampled_from(["", " ", "  "])) + fields[4]
            fields[4] += draw(st.sampled_from(["", " "]))
            text = "\t".join(fields)
        else:
            seps = draw(st.lists(st.sampled_from(MIXED_SEPARATORS), min_size=len(fields) + 1))
            lead = draw(st.sampled_from(["", " ", "\t", " \t "]))
            text = lead + "".join(f + s for f, s in zip(fields, seps[1:], strict=False))
        lines.append(text)
        numbers.append(len(lines))
    return join_lines(draw, lines, endings).encode(), numbers

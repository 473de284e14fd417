"""The fast path on a text in memory: read in pyarrow's blocks (a chunk each), with the
values, ids and errors of the careful path; its first line and its scan found in place."""

from __future__ import annotations

import random
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiecore.errors import InputError
from tiecore.io.fastpath import Text, _copied, _first_line, _head, _in_place, _scan
from tiecore.io.trec import _parse_run_columns, read_run_columns


def _run_text(rows: int, seed: int = 7) -> bytes:
    """A run of ``rows`` lines over 40 queries, integer and decimal scores, over 256 KiB
    once it has some 8,000 lines (several blocks of pyarrow's parser)."""
    rng = random.Random(seed)
    per_query = -(-rows // 40)
    lines = []
    for k in range(rows):
        q, rank = divmod(k, per_query)
        score = rng.randint(0, 9) if q % 3 == 0 else round(rng.random() * 10, 4)
        lines.append(f"{400 + q} Q0 DOC-{rng.randrange(10**9):09d}-{k} {rank + 1} {score} sys\n")
    return "".join(lines).encode()


def _same(a, b) -> None:
    assert a.qid.to_pylist() == b.qid.to_pylist()
    assert a.docno.to_pylist() == b.docno.to_pylist()
    assert a.score.to_pylist() == b.score.to_pylist()
    assert a.tags == b.tags
    assert a.ids.qids.equals(b.ids.qids)
    assert np.array_equal(a.ids.query, b.ids.query)
    assert np.array_equal(a.ids.docno_hash, b.ids.docno_hash)


def test_a_run_in_blocks_equals_the_careful_path(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(_run_text(20_000))
    blocks = read_run_columns(path)
    assert blocks.docno.num_chunks > 1  # pyarrow's 256 KiB blocks, each a chunk
    _same(blocks, _parse_run_columns(Text(path), fast=False))


def test_a_duplicate_in_another_block_names_its_line(tmp_path):
    text = _run_text(20_000).splitlines(keepends=True)
    text.insert(15_000, text[9_000])  # same query: lines are 40 queries of 500
    path = tmp_path / "run.txt"
    path.write_bytes(b"".join(text))
    with pytest.raises(InputError) as error:
        read_run_columns(path)
    assert error.value.line == 15_001


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=12).map(lambda b: bytes(b"ab\r\n "[x % 5] for x in b)), st.integers(0, 8))
def test_the_first_line_of_a_text_in_memory_is_found_without_a_copy(data, limit):
    with mock.patch("tiecore.io.fastpath._FIRST_LINE", limit):
        assert _first_line(_head(data)) == _first_line(data[: limit + 1])


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=40).map(lambda b: bytes(b"ab \t\r\n#\x0b"[x % 8] for x in b)),
    st.integers(1, 9),
)
def test_a_text_in_memory_is_scanned_in_place_as_in_copied_windows(data, window):
    with mock.patch("tiecore.io.fastpath._SCAN", window):
        assert _scan(_in_place(data), check_text=False) == _scan(_copied(data), check_text=False)

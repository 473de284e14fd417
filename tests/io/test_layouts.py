"""Every layout trec_eval reads takes the fast path (issue 36, item 1).

trec_eval splits a line at runs of whitespace; published files have runs of spaces
(TREC-COVID's qrels), tabs, CR LF, a fractional iteration or fields after the tag.
:func:`tiecore.io.fastpath.normalise` rewrites such a text to single spaces, which
pyarrow splits exactly: these tests check the careful tokenizer is not called on
them, that the values are those of the single-spaced file, that the rewrite is the
whitespace split (a property test against Python's ``bytes.split``), and that an
error is still named at its line by the careful path.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tiecore.errors import InputError
from tiecore.io import trec
from tiecore.io.fastpath import normalise

RUN = [
    (f"{q}", "Q0", f"d{d}", f"{d}", f"{(d * 7) % 4 / 2}", "tag")
    for q in (3, 10, 2)
    for d in range(9)
]
QRELS = [(f"{q}", "0", f"d{d}", f"{d % 3}") for q in (3, 10, 2) for d in range(0, 9, 2)]

#: (which file, how a line is written from its fields)
LAYOUTS = {
    "qrels double spaces": ("qrels", lambda f: f"{f[0]} {f[1]}  {f[2]} {f[3]}\n"),
    "qrels fractional iteration, spaces": ("qrels", lambda f: f"{f[0]}  1.5  {f[2]}\t{f[3]}\n"),
    "qrels tabs and CRLF": ("qrels", lambda f: "\t".join(f) + "\r\n"),
    "qrels blanks at both ends": ("qrels", lambda f: "  " + " ".join(f) + " \t\n\n"),
    "run runs of spaces": ("run", lambda f: "  ".join(f[:3]) + "   " + " ".join(f[3:]) + "\n"),
    "run CRLF": ("run", lambda f: " ".join(f) + "\r\n"),
    "run lone CR, double tabs": ("run", lambda f: "\t\t".join(f) + "\r"),
    "run tabs and spaces": ("run", lambda f: f"{f[0]}\t{f[1]} {f[2]}\t{f[3]} {f[4]}\t{f[5]}\n"),
    "run vertical tab, form feed": ("run", lambda f: "\x0b".join(f) + "\x0c\n"),
    "run tag with a space": ("run", lambda f: " ".join(f) + " x\n"),
    "run tag with a space, runs of spaces": ("run", lambda f: "  ".join(f) + "  x  y\n"),
}


def _plain(which: str) -> bytes:
    rows = QRELS if which == "qrels" else RUN
    return "".join(" ".join(f) + "\n" for f in rows).encode()


def _columns(which: str, path) -> dict[str, list]:
    if which == "qrels":
        return {k: v.to_pylist() for k, v in trec.read_qrels_columns(path).items()}
    run = trec.read_run_columns(path)
    return {"qid": run.qid.to_pylist(), "docno": run.docno.to_pylist(),
            "score": run.score.to_pylist(), "tags": run.tags}  # fmt: skip


@pytest.fixture
def no_careful(monkeypatch):
    """The careful tokenizer, made to fail: a test passes only on the fast path."""

    def refuse(*args, **kwargs):
        raise AssertionError("the careful path was taken")

    monkeypatch.setattr(trec, "_careful_run", refuse)
    monkeypatch.setattr(trec, "_careful_qrels", refuse)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("gzipped", [False, True])
def test_published_layouts_take_the_fast_path(tmp_path, no_careful, layout, gzipped) -> None:
    which, line = LAYOUTS[layout]
    rows = QRELS if which == "qrels" else RUN
    body = "".join(line(f) for f in rows).encode()
    plain, laid = tmp_path / "plain", tmp_path / "laid"
    plain.write_bytes(_plain(which))
    if gzipped:
        import gzip

        body = gzip.compress(body)
    laid.write_bytes(body)
    assert _columns(which, laid) == _columns(which, plain)


def test_an_error_in_a_rewritten_text_names_its_line(tmp_path) -> None:
    """The fast path finds the bad level; the careful path names its line."""
    lines = [f"{f[0]} 0  {f[2]}  {f[3]}\r\n" for f in QRELS]
    lines[4] = "3 0  dx  1.5\r\n"
    path = tmp_path / "qrels"
    path.write_text("".join(lines), newline="")
    with pytest.raises(InputError) as caught:
        trec.read_qrels_columns(path)
    assert (caught.value.line, caught.value.problem) == (5, "level '1.5' is not an integer")


def test_a_ragged_run_still_names_its_line(tmp_path) -> None:
    lines = ["  ".join(f) + "\n" for f in RUN]
    lines[7] = "3  Q0  d99  7  0.5\n"  # no tag among tagged lines
    path = tmp_path / "run"
    path.write_text("".join(lines))
    with pytest.raises(InputError) as caught:
        trec.read_run_columns(path)
    assert caught.value.line == 8 and caught.value.problem.startswith("5 fields")


_BYTES = st.lists(st.sampled_from([b" ", b"\t", b"\x0b", b"\x0c", b"\r", b"\n", b"a", b"#", b"1"]))


@given(_BYTES)
def test_normalise_is_the_whitespace_split(parts: list[bytes]) -> None:
    """Line by line, the tokens of the rewrite are Python's whitespace split of the text
    (lines ending at ``\\n``, ``\\r\\n`` or ``\\r``, blank lines skipped, as pyarrow
    skips them), split by single spaces; the text starts with a line."""
    data = b"".join(parts)
    normal = normalise(data)
    normal = data if normal is None else normal
    expected = [line.split() for line in re.split(rb"\r\n|\r|\n", data) if line.split()]
    assert re.search(rb"[\t\x0b\x0c]", normal) is None and normal[:1] not in (b"\r", b"\n")
    assert [line.split(b" ") for line in re.split(rb"\r\n|\r|\n", normal) if line] == expected

"""Fuzzing the command line and the API with odd, malformed and random input files.

Three kinds of input, all drawn by Hypothesis:

* **legal but odd** files (a logical run and qrels rendered with mixed spaces and tabs,
  CR LF, blank and comment lines, a BOM, gzip, unicode ids, a query named ``all``,
  scores spelled in several ways, extreme finite scores, float32 collisions): every
  command must exit 0 with values equal to ``tests/reference.py`` (trec_eval's order
  for the oblivious mode, the brute-force mean over all orderings for the aware one);
* **malformed** files (one definite defect spliced into a legal file: a non-number,
  ``nan`` or overflowing score, a missing field, a duplicate, a bad byte, a truncated
  gzip ...): exit 2 with one ``tiecore: error:`` line naming the file;
* **random bytes** and random field soup: never an exception (exit 0 or 2, one line),
  and an exit 0 only with the values of the reference.

No output of any command, in any format, may contain ``nan`` or ``inf``. The
commands run in-process through ``tiecore.cli.main`` with captured streams, and a
few in a real process. ``eval`` on the legal and the malformed files runs through
each of its three paths (:func:`run_cli_three_ways`: the small one, the arrow one
with the small one's size limit lowered, the pandas one with the arrow one
claiming nothing), checks which path answered and that all three print the same
bytes. ``CI=1`` derandomizes (tests/conftest.py).
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import io
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
import reference as ref
import strategies as strat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tiecore
from tiecore.cli import eval as cli_eval
from tiecore.cli import main
from tiecore.evaluation import arrow as _arrow_eval
from tiecore.evaluation import small as _small

ROOT = Path(__file__).resolve().parents[2]
#: nan, inf, infinity as whole tokens, any case (not inside words such as "information").
NONFINITE = re.compile(r"(?i)(?<![a-z0-9_])(nan|inf|infinity)(?![a-z0-9_])")
SPECS = [
    ref.Spec("P", 3),
    ref.Spec("R", 5),
    ref.Spec("F1", 3),
    ref.Spec("AP"),
    ref.Spec("AP", 4),
    ref.Spec("RR"),
    ref.Spec("nDCG"),
    ref.Spec("nDCG", 3),
    ref.Spec("nDCG", 5, "exp"),
    ref.Spec("Rprec"),
    ref.Spec("Success", 2),
    ref.Spec("Bpref"),
]
MEASURES = ",".join(spec.name for spec in SPECS)
FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: Command lines run, by family (the test that ran them) and verdict (exit status 0:
#: values, checked against the reference where the family has one; 2: one error line).
#: With ``TIECORE_FUZZ_REPORT=FILE`` each test process appends its counts to FILE as a
#: JSON line (``scripts/fuzz_cases.py`` runs the suite and sums them).
CASES: collections.Counter = collections.Counter()


def count_case(code: int) -> None:
    """Count one command line under the running test's name and its exit status."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "unknown").split("::")[-1]
    family = test.split(" ")[0].split("[")[0]
    CASES[family, {0: "values", 2: "error line"}.get(code, f"exit {code}")] += 1


@pytest.fixture(scope="module", autouse=True)
def _case_report():
    """After the module's tests: the counts, appended to TIECORE_FUZZ_REPORT if set."""
    yield
    target = os.environ.get("TIECORE_FUZZ_REPORT")
    if target and CASES:
        rows = [[family, verdict, n] for (family, verdict), n in sorted(CASES.items())]
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps(rows) + "\n")


def run_cli(*argv: object) -> tuple[int, str, str]:
    """``tiecore ARGV`` in-process: exit status, stdout, stderr. An exception fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    count_case(code)
    return code, out.getvalue(), err.getvalue()


#: eval's three paths (tiecore/cli/eval.py): the small one, the arrow one, the pandas one.
ROUTES = ("small", "arrow", "pandas")


def run_cli_through(route: str, *argv: object) -> tuple[int, str, str, str | None]:
    """``tiecore ARGV`` in-process with eval's path forced, and the path that answered.

    Parameters
    ----------
    route : str
        ``small``: the usual routing (small inputs go to :mod:`tiecore.evaluation.small`);
        ``arrow``: the small path's size limit below any file, so
        :mod:`tiecore.evaluation.arrow` takes TREC files; ``pandas``: the arrow path
        claiming nothing too, so the normal path reads the inputs.
    *argv : object
        The command line.

    Returns
    -------
    tuple
        Exit status, stdout, stderr and the path that answered: ``small`` (its table
        was printed), ``arrow`` (it was called), ``pandas`` (the normal path read the
        inputs) or None (none of them: an error before any reading).
    """
    taken: list[str] = []
    small_files, arrow_files, eval_inputs = (
        _small.evaluate_files,
        _arrow_eval.evaluate_files,
        cli_eval.eval_inputs,
    )

    def small_spy(*args, **kwargs):
        table = small_files(*args, **kwargs)
        if table is not None:
            taken.append("small")
        return table

    def arrow_spy(*args, **kwargs):
        taken.append("arrow")
        return arrow_files(*args, **kwargs)

    def pandas_spy(*args, **kwargs):
        taken.append("pandas")
        return eval_inputs(*args, **kwargs)

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(_small, "evaluate_files", small_spy))
        stack.enter_context(mock.patch.object(_arrow_eval, "evaluate_files", arrow_spy))
        stack.enter_context(mock.patch.object(cli_eval, "eval_inputs", pandas_spy))
        if route != "small":
            stack.enter_context(mock.patch.object(_small, "SMALL_BYTES", -1))
        if route == "pandas":
            stack.enter_context(mock.patch.object(_arrow_eval, "claimed", lambda paths: False))
        code, out, err = run_cli(*argv)
    assert len(taken) <= 1, taken
    return code, out, err, taken[0] if taken else None


def run_cli_three_ways(*argv: object, small: str = "small", sampled: bool = False) -> tuple:
    """``tiecore ARGV`` through each of eval's three paths: the same exit status,
    stdout and stderr, byte for byte, from each.

    Parameters
    ----------
    *argv : object
        The command line.
    small : str
        The path expected to answer under the usual routing: ``small``, or ``arrow``
        when the small path hands the input on (an error, a query ``all`` in trec -q).
    sampled : bool
        Whether the options keep every route on the pandas path (sampled mode).

    Returns
    -------
    tuple
        Exit status, stdout and stderr (those of the pandas path).
    """
    expected = {"small": small, "arrow": "arrow", "pandas": "pandas"}
    got = {route: run_cli_through(route, *argv) for route in ROUTES}
    for route, (*_, taken) in got.items():
        assert taken == ("pandas" if sampled else expected[route]), (route, argv)
    normal = got["pandas"][:3]
    for route in ("small", "arrow"):
        assert got[route][:3] == normal, (route, argv)
    return normal


def assert_clean(code: int, out: str, err: str) -> None:
    """Exit 0, or 2 with one error line (after warnings); never nan/inf, never a traceback."""
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err
    assert not NONFINITE.search(out), out
    lines = err.splitlines()
    assert all(line.startswith("tiecore: warning: ") for line in lines[: len(lines) - 1]), err
    if code == 2:
        assert out == "" and lines and lines[-1].startswith("tiecore: error: "), err
    else:
        assert all(line.startswith("tiecore: warning: ") for line in lines), err


# --------------------------------------------------------------------- logical data


@dataclass
class Doc:
    docno: str
    score: float
    level: int | None  # None: not in the qrels


@dataclass
class Data:
    """A run and its qrels: per query the retrieved docs (file order) and extra judged docs."""

    run: dict[str, list[Doc]]
    extra: dict[str, dict[str, int]]  # judged docs not retrieved

    def levels(self, qid: str) -> list[int]:
        docs = [d.level for d in self.run.get(qid, []) if d.level is not None]
        return docs + list(self.extra.get(qid, {}).values())

    def judged_qids(self) -> list[str]:
        qids = list(dict.fromkeys([*self.run, *self.extra]))
        return [q for q in qids if self.levels(q)]


#: Exactly representable scores, with pairs that collide in float32 (trec_eval 9 ties them).
SCORES = (-2.0, 0.0, 0.5, 1.0, 1.0000000001, 3.0, 1e300, -1e300, 5e-324, 1e-310)
#: ids: ASCII punctuation, unicode, "all", a no-break space inside (not a separator).
#: U+FEFF too: at the start of a file, after the BOM (render adds one), it stays in the id.
ID_CHARS = st.sampled_from([*list("abAB09-_.Z"), "é", "文", "\xa0", "🙂", "#", "\ufeff"])
ids = st.text(ID_CHARS, min_size=1, max_size=3).filter(
    lambda s: not s.startswith("#") and s.strip() == s
)


@st.composite
def data(draw: st.DrawFn, *, max_queries: int = 3, max_docs: int = 6) -> Data:
    qids = draw(
        st.lists(st.one_of(st.just("all"), ids), min_size=1, max_size=max_queries, unique=True)
    )
    pool = draw(st.lists(st.sampled_from(SCORES), min_size=1, max_size=3, unique=True))
    run: dict[str, list[Doc]] = {}
    extra: dict[str, dict[str, int]] = {}
    for i, qid in enumerate(qids):
        n = draw(st.integers(1, max_docs))
        docnos = draw(st.lists(ids, min_size=n, max_size=n, unique=True))
        palette = draw(st.lists(st.sampled_from((None, -1, 0, 1, 2, 3)), min_size=1, max_size=3))
        run[qid] = [
            Doc(d, draw(st.sampled_from(pool)), draw(st.sampled_from(palette))) for d in docnos
        ]
        more = draw(
            st.lists(ids.filter(lambda d, s=set(docnos): d not in s), max_size=2, unique=True)
        )
        extra[qid] = {d: draw(st.sampled_from((0, 1, 2))) for d in more}
        if i == 0 and not any(d.level is not None for d in run[qid]) and not extra[qid]:
            run[qid][0].level = 1  # the first query has judgments, so the run is evaluable
    return Data(run, extra)


# ----------------------------------------------------------------------- rendering


def score_text(draw: st.DrawFn, value: float) -> str:
    forms = [repr(value), f"{value:.17g}", f"{value:e}".replace("e", draw(st.sampled_from("eE")))]
    if value == int(value) and abs(value) < 1e15:
        forms.append(str(int(value)))
    if value > 0:
        forms.append("+" + repr(value))
    forms = [f for f in forms if float(f) == value]
    return draw(st.sampled_from(forms))


@st.composite
def layout(draw: st.DrawFn) -> dict:
    """How a file is spelled: separators, line ends, blank and comment lines, BOM, gzip."""
    return {
        "seps": draw(st.lists(st.sampled_from([" ", "\t", "  ", " \t", "\t\t"]), min_size=1)),
        "eol": draw(st.sampled_from(["\n", "\r\n"])),
        "indent": draw(st.sampled_from(["", " ", "\t"])),
        "trail": draw(st.sampled_from(["", " ", "\t "])),
        "blank": draw(st.booleans()),
        "comment": draw(st.booleans()),
        "bom": draw(st.booleans()),
        "gzip": draw(st.booleans()),
        "final_eol": draw(st.booleans()),
    }


def render(draw: st.DrawFn, rows: list[list[str]], how: dict) -> bytes:
    lines = []
    if how["comment"]:
        lines.append("# a comment line: q Q0 d 1 nan x")
    for k, fields in enumerate(rows):
        sep = how["seps"][k % len(how["seps"])]
        lines.append(how["indent"] + sep.join(fields) + how["trail"])
        if how["blank"] and k == 0:
            lines.append(draw(st.sampled_from(["", " ", "\t"])))
    text = how["eol"].join(lines) + (how["eol"] if how["final_eol"] else "")
    bom = how["bom"] or text.startswith("\ufeff")  # else that U+FEFF would be the BOM
    raw = ("\ufeff" if bom else "").encode() + text.encode("utf-8")
    return gzip.compress(raw) if how["gzip"] else raw


@st.composite
def files(draw: st.DrawFn, source: Data) -> tuple[bytes, bytes, list[tuple[str, Doc]]]:
    """Run and qrels bytes for ``source``, with the run rows in file order."""
    rows = [(qid, doc) for qid, docs in source.run.items() for doc in docs]
    if draw(st.booleans()):
        rows = draw(st.permutations(rows))  # queries interleaved
    tag = draw(st.sampled_from(["tag", "r.1", "文"]))
    run_rows = [
        [
            qid,
            draw(st.sampled_from(["Q0", "0", "x"])),
            doc.docno,
            str(draw(st.integers(0, 99))),
            score_text(draw, doc.score),
            tag,
        ]
        for qid, doc in rows
    ]
    judged = [(q, d.docno, d.level) for q, d in rows if d.level is not None]
    judged += [(q, d, level) for q, more in source.extra.items() for d, level in more.items()]
    judged = draw(st.permutations(judged))
    qrels_rows = [[q, draw(st.sampled_from(["0", "Q0"])), d, str(level)] for q, d, level in judged]
    run = render(draw, run_rows, draw(layout()))
    qrels = render(draw, qrels_rows, draw(layout()))
    return run, qrels, rows


def expected(source: Data, rows: list[tuple[str, Doc]], ties: str) -> dict:
    """{(qid or None, measure): value} from the reference, with the mean as qid None."""
    judged = set(source.judged_qids())
    values: dict = {}
    shown = [q for q in dict.fromkeys(q for q, _ in rows) if q in judged]
    for qid in shown:
        docs = [d for q, d in rows if q == qid]
        scores = [d.score for d in docs]
        labels = [d.level for d in docs]
        levels = source.levels(qid)
        if ties == "aware":
            found = ref.reference_aware(SPECS, scores, labels, levels)
        else:
            docnos = [d.docno for d in docs]
            found = ref.reference_oblivious(SPECS, scores, docnos, labels, levels, "trec_eval")
        for spec, value in found.items():
            values[(qid, spec.name)] = value
    for spec in SPECS:
        values[(None, spec.name)] = math.fsum(values[(q, spec.name)] for q in shown) / len(shown)
    return values


def write(folder: str, name: str, raw: bytes) -> Path:
    path = Path(folder) / name
    path.write_bytes(raw)
    return path


# ------------------------------------------------------------------------- the tests


@FUZZ
@given(st.data())
def test_legal_odd_files_give_the_reference_values(draw_data) -> None:
    draw = draw_data.draw
    source = draw(data())
    run, qrels, rows = draw(files(source))
    ties = draw(st.sampled_from(["aware", "oblivious"]))
    with tempfile.TemporaryDirectory() as folder:
        run_path = write(folder, "run.txt.gz" if run[:2] == b"\x1f\x8b" else "run.txt", run)
        qrels_path = write(folder, "qrels.txt", qrels)
        code, out, err = run_cli_three_ways(
            "eval", qrels_path, run_path, "-m", MEASURES, "--ties", ties, "-q", "--format", "json"
        )
        assert_clean(code, out, err)
        assert code == 0, err
        got = {(r["qid"], r["measure"]): r["value"] for r in json.loads(out)}
        want = expected(source, rows, ties)
        assert got.keys() == want.keys()
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
        # the API reads the same files to the same values
        frame = tiecore.evaluate(
            tiecore.read_run(run_path),
            tiecore.read_qrels(qrels_path),
            [s.name for s in SPECS],
            ties=ties,
        )
        for name, value in zip(frame["measure"], frame["value"], strict=True):
            assert value == pytest.approx(want[(None, name)], rel=1e-12, abs=1e-12)
        # trec format: one "all" row per measure without -q; with -q only if no query is "all"
        code, out, err = run_cli_three_ways(
            "eval", qrels_path, run_path, "-m", MEASURES, "--ties", ties
        )
        assert_clean(code, out, err)
        summary = [line for line in out.splitlines() if line.split("\t")[1] == "all"]
        assert len(summary) == (2 if ties == "oblivious" else 3) + len(SPECS)  # + the mode
        named_all = any(key[0] == "all" for key in want)  # the small path hands it on
        code, out, err = run_cli_three_ways(
            "eval",
            qrels_path,
            run_path,
            "-m",
            MEASURES,
            "-q",
            small="arrow" if named_all else "small",
        )
        assert_clean(code, out, err)
        assert (code == 2) == named_all, err


def break_run(draw: st.DrawFn, raw: bytes) -> bytes:
    """One definite defect in a run file's first data line."""
    lines = raw.split(b"\n")
    k = next(
        i for i, line in enumerate(lines) if line.strip() and not line.strip().startswith(b"#")
    )
    fields = lines[k].split()
    defect = draw(st.sampled_from(["score", "fields", "byte", "duplicate", "nul"]))
    if defect == "score":
        fields[4] = draw(
            st.sampled_from(
                [
                    b"nan",
                    b"NaN",
                    b"inf",
                    b"-Infinity",
                    b"1e400",
                    b"abc",
                    b"1,5",
                    b"0x1p3",
                    b"--1",
                    b"",
                ]
            )
        )
        fields = [f for f in fields if f]
    elif defect == "fields":
        fields = fields[: draw(st.integers(1, 3))]
    elif defect == "byte":
        fields[2] = fields[2] + b"\xff"
    elif defect == "nul":
        fields[2] = fields[2] + b"\x00"
    else:
        lines.insert(k + 1, lines[k])
    if defect != "duplicate":
        lines[k] = b" ".join(fields)
    return b"\n".join(lines)


def break_qrels(draw: st.DrawFn, raw: bytes) -> bytes:
    lines = raw.split(b"\n")
    k = next(
        i for i, line in enumerate(lines) if line.strip() and not line.strip().startswith(b"#")
    )
    fields = lines[k].split()
    defect = draw(st.sampled_from(["level", "fields", "duplicate", "byte"]))
    if defect == "level":
        fields[3] = draw(st.sampled_from([b"x", b"1.5", b"nan", b"inf", b"1e3", b"2-"]))
    elif defect == "fields":
        fields = fields[: draw(st.sampled_from([1, 2, 3]))] if len(fields) == 4 else [*fields, b"z"]
    elif defect == "byte":
        fields[2] = b"\xc3" + fields[2]
    else:
        lines.insert(k + 1, lines[k])
    if defect != "duplicate":
        lines[k] = b" ".join(fields)
    return b"\n".join(lines)


@FUZZ
@given(st.data())
def test_malformed_files_fail_with_one_line(draw_data) -> None:
    draw = draw_data.draw
    source = draw(data())
    run, qrels, _ = draw(files(source))
    run, qrels = (gzip.decompress(b) if b[:2] == b"\x1f\x8b" else b for b in (run, qrels))
    bom = "\ufeff".encode()
    run, qrels = (b.removeprefix(bom) for b in (run, qrels))
    which = draw(st.sampled_from(["run", "qrels"]))
    if which == "run":
        run = break_run(draw, run)
    else:
        qrels = break_qrels(draw, qrels)
    run, qrels = (bom + b if b.startswith(bom) else b for b in (run, qrels))  # an id's U+FEFF
    if draw(st.booleans()):
        run, qrels = gzip.compress(run), gzip.compress(qrels)
    with tempfile.TemporaryDirectory() as folder:
        paths = {"run": write(folder, "the_run", run), "qrels": write(folder, "the_qrels", qrels)}
        ties = draw(
            st.sampled_from([[], ["--ties", "oblivious"], ["--ties", "sampled", "--samples", "3"]])
        )
        # the small path hands any defect on: the arrow path reports it, as the pandas one
        code, out, err = run_cli_three_ways(
            "eval", paths["qrels"], paths["run"], *ties, small="arrow", sampled="sampled" in ties
        )
        assert_clean(code, out, err)
        assert code == 2 and f"the_{which}" in err.splitlines()[-1], err
        reader = tiecore.read_run if which == "run" else tiecore.read_qrels
        with pytest.raises(tiecore.InputError, match=f"the_{which}"):
            reader(paths[which])


def test_a_second_bom_starts_the_first_qid_on_every_path(tmp_path) -> None:
    """A run file starting with two BOMs: the second is U+FEFF in the first qid, an
    unjudged query here, on all three paths (the arrow and pandas paths read 'q1':
    pyarrow's csv reader skipped the second BOM on tiecore.io's fast path)."""
    bom = "\ufeff".encode()
    run = write(str(tmp_path), "run", bom + bom + b"q1 Q0 a 1 2 t\nq2 Q0 b 1 1 t\n")
    qrels = write(str(tmp_path), "qrels", b"q1 0 a 1\nq2 0 b 0\nq2 0 c 1\n")
    code, out, err = run_cli_three_ways("eval", qrels, run, "-m", "AP", "-q", "--format", "json")
    assert code == 0
    assert err == "tiecore: warning: run t: 1 queries without judgments skipped (\ufeffq1)\n"
    assert [(r["qid"], r["value"]) for r in json.loads(out)] == [("q2", 0.0), (None, 0.0)]


def truncated_gzip(raw: bytes) -> bytes:
    packed = gzip.compress(raw or b"x")
    return packed[: max(3, len(packed) // 2)]


soup_line = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "q1",
                "all",
                "Q0",
                "d1",
                "d2",
                "1",
                "0",
                "2",
                "-1",
                "nan",
                "inf",
                "1e999",
                "-0",
                "9" * 30,
                "qid:1",
                "1:0.5",
                "2:nan",
                "#",
                "é",
                "\x00",
            ]
        ),
        st.text(max_size=4),
    ),
    max_size=8,
).map(lambda fields: " \t"[len(fields) % 2].join(fields))
soup = st.lists(soup_line, max_size=6).map(
    lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")
)
raw_bytes = st.one_of(
    soup,
    st.binary(max_size=64),
    st.just(b""),
    st.binary(max_size=40).map(truncated_gzip),
    soup.map(gzip.compress),
)


@FUZZ
@given(raw_bytes, raw_bytes, st.sampled_from(["aware", "oblivious", "sampled"]), st.booleans())
def test_random_bytes_never_crash(run, qrels, ties, per_query) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run_path, qrels_path = write(folder, "run", run), write(folder, "qrels", qrels)
        argv = ["eval", qrels_path, run_path, "--ties", ties, "--samples", "3", "--format", "json"]
        code, out, err = run_cli(*argv, *(["-q"] if per_query else []))
        assert_clean(code, out, err)
        if code == 0:  # then the files are a legal run and qrels: check against the reference
            check_against_reference(run_path, qrels_path, json.loads(out), ties)
        code, out, err = run_cli("eval", "--letor", run_path, "-m", "P@2,nDCG@3", "--format", "csv")
        assert_clean(code, out, err)


def check_against_reference(run_path: Path, qrels_path: Path, rows: list, ties: str) -> None:
    """Parse the files the plain way (whitespace split) and compare the oblivious/aware means."""
    run, qrels = tiecore.read_run(run_path), tiecore.read_qrels(qrels_path)
    levels: dict[str, dict[str, int]] = {}
    for q, d, level in qrels.itertuples(index=False):
        levels.setdefault(q, {})[d] = int(level)
    values: dict[str, list[float]] = {}
    for qid, docs in run.groupby("qid", sort=False):
        if qid not in levels:
            continue
        labels = [levels[qid].get(d) for d in docs["docno"]]
        specs = [ref.Spec(f, c) for f, c in [("P", 5), ("AP", None), ("nDCG", 10)]]
        if ties == "oblivious":
            found = ref.reference_oblivious(
                specs,
                list(docs["score"]),
                list(docs["docno"]),
                labels,
                list(levels[qid].values()),
                "trec_eval",
            )
        elif ties == "aware":
            found = ref.reference_aware(
                specs, list(docs["score"]), labels, list(levels[qid].values())
            )
        else:
            return
        for spec, value in found.items():
            values.setdefault(spec.name, []).append(value)
    for row in rows:
        if row["qid"] is None and row["measure"] in values:
            want = math.fsum(values[row["measure"]]) / len(values[row["measure"]])
            assert row["value"] == pytest.approx(want, abs=1e-12)


# ------------------------------------------- no nan or inf in any output of any command

EVAL_VARIANTS = [
    [],
    ["-q"],
    ["-c", "-q"],
    ["--spread", "-q"],
    ["--spread", "-c"],
    ["--ties", "oblivious", "-q"],
    ["--ties", "sampled", "--samples", "3", "-q"],
    ["--ties", "sampled", "--samples", "2", "-c"],
    ["-M", "2", "-l", "2", "-q"],
]


VARIANT = itertools.cycle(range(len(EVAL_VARIANTS)))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strat.cases(max_queries=3, max_docs=6), st.randoms(use_true_random=False))
def test_no_nan_or_inf_in_any_output(case, rnd) -> None:
    """Every format of eval (the variants in turn, each at least once) and compare on random
    tie-heavy runs (two of them)."""
    run_a = case.run_frame()
    run_b = run_a.assign(score=rnd.sample(list(run_a["score"]), len(run_a)))
    with tempfile.TemporaryDirectory() as folder:
        qrels = case.qrels_frame().assign(it=0)[["qid", "it", "docno", "level"]]
        qrels_path = write(
            folder, "qrels", qrels.to_csv(sep=" ", header=False, index=False).encode()
        )
        paths = []
        for name, run in (("a", run_a), ("b", run_b)):
            text = "".join(
                f"{q} Q0 {d} {i} {s!r} {name}\n"
                for i, (q, d, s) in enumerate(run.itertuples(index=False))
            )
            paths.append(write(folder, f"run_{name}", text.encode()))
        measures = ["-m", "P@2,R@3,AP,RR,nDCG@3,nDCG(gain=exp),Rprec,Bpref,Success@1,F1@2"]
        variant = EVAL_VARIANTS[next(VARIANT)]
        for fmt in ("trec", "csv", "json"):
            code, out, err = run_cli(
                "eval", qrels_path, *paths, *measures, *variant, "--format", fmt
            )
            assert_clean(code, out, err)
            assert code == 0, (variant, err)
        extra = ["-c"] if rnd.random() < 0.5 else []
        for fmt in ("text", "csv", "json"):
            code, out, err = run_cli(
                "compare",
                qrels_path,
                *paths,
                "-m",
                "AP",
                "--samples",
                "4",
                "--resamples",
                "10",
                "--format",
                fmt,
                *extra,
            )
            assert_clean(code, out, err)
            assert code == 0, err


@pytest.mark.parametrize("variant", EVAL_VARIANTS, ids=" ".join)
def test_huge_levels_are_exact_or_an_error_never_inf(tmp_path, variant) -> None:
    """2**2000 overflows a float: nDCG(gain=exp) must still be exact (gains scaled), or
    one error line; never inf or nan printed."""
    qrels = write(str(tmp_path), "qrels", b"q1 0 a 2000\nq1 0 b 1\n")
    run = write(str(tmp_path), "run", b"q1 Q0 a 1 1 t\nq1 Q0 b 2 1 t\nq1 Q0 c 3 0 t\n")
    # a and b tie; with gains scaled by 2**-2000, a's is 1 and b's 0 (to 1e-600): the order
    # b, a (trec_eval's, docno descending) scores 1/log2(3), the order a, b scores 1
    low, high = 1 / math.log2(3), 1.0
    want = {"oblivious": low, "aware": (low + high) / 2}
    mode = "oblivious" if "oblivious" in variant else "sampled" if "sampled" in variant else "aware"
    for fmt in ("trec", "csv", "json"):
        code, out, err = run_cli(
            "eval", qrels, run, "-m", "AP,nDCG(gain=exp)@2", *variant, "--format", fmt
        )
        assert_clean(code, out, err)
        if code == 2:
            assert "overflow" in err and "qrels" in err
        elif fmt == "json":
            value = next(r["value"] for r in json.loads(out) if r["measure"] != "AP")
            if mode == "sampled":
                assert low - 1e-12 <= value <= high + 1e-12
            else:
                assert value == pytest.approx(want[mode], abs=1e-12)


# --------------------------------------------------------------- LETOR and processes


@st.composite
def letor_files(draw: st.DrawFn) -> tuple[bytes, list[tuple[str, int, dict[int, float]]]]:
    """A LETOR file with odd spacing, comments and labels spelled 2 or 2.0; its records."""
    records = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["1", "all", "q.é"]),
                st.integers(0, 3),
                st.dictionaries(st.integers(1, 4), st.sampled_from([0.0, 0.5, 1.0, -2.0, 1e300])),
            ),
            min_size=1,
            max_size=8,
        )
    )
    lines = []
    for qid, label, feats in records:
        label_text = draw(st.sampled_from([str(label), f"{label}.0"]))
        sep = draw(st.sampled_from([" ", "\t", "  "]))
        pairs = sep.join(f"{i}:{v!r}" for i, v in sorted(feats.items()))
        comment = draw(st.sampled_from(["", " # docid = x", "#c"]))
        lines.append(sep.join(filter(None, [label_text, f"qid:{qid}", pairs])) + comment)
    return ("\n".join(lines) + "\n").encode(), records


@FUZZ
@given(letor_files(), st.sampled_from(["oblivious", "aware"]))
def test_letor_files_give_the_reference_values(letor, ties) -> None:
    raw, records = letor
    features = sorted({i for _, _, feats in records for i in feats})
    with tempfile.TemporaryDirectory() as folder:
        path = write(folder, "train.txt", raw)
        code, out, err = run_cli(
            "eval", "--letor", path, "-m", "P@2,AP,nDCG@3", "--ties", ties, "-q", "--format", "json"
        )
        assert_clean(code, out, err)
        if not features:
            assert code == 2
            return
        assert code == 0, err
        width = len(str(len(records)))
        got = {(r["run"], r["qid"], r["measure"]): r["value"] for r in json.loads(out)}
        specs = [ref.Spec("P", 2), ref.Spec("AP"), ref.Spec("nDCG", 3)]
        for f in features:
            per_query = {}
            for qid in dict.fromkeys(q for q, _, _ in records):
                rows = [
                    (str(k + 1).zfill(width), feats.get(f, 0.0), label)
                    for k, (q, label, feats) in enumerate(records)
                    if q == qid
                ]
                docnos, scores, labels = (list(x) for x in zip(*rows, strict=True))
                if ties == "aware":
                    found = ref.reference_aware(specs, scores, labels, labels)
                else:
                    found = ref.reference_oblivious(
                        specs, scores, docnos, labels, labels, "trec_eval"
                    )
                per_query[qid] = found
            for spec in specs:
                for qid, found in per_query.items():
                    assert got[(f"f{f}", qid, spec.name)] == pytest.approx(found[spec], abs=1e-12)
                mean = math.fsum(v[spec] for v in per_query.values()) / len(per_query)
                assert got[(f"f{f}", None, spec.name)] == pytest.approx(mean, abs=1e-12)


@pytest.mark.parametrize(
    "line",
    [
        b"x qid:1 1:0.5",
        b"1 1:0.5",
        b"1 qid:1 1:abc",
        b"1 qid:1 0:1",
        b"1 qid:1 2:1 1:1",
        b"1 qid:1 1:nan",
        b"1 qid:1 1:inf",
        b"1 qid:1 1:1e999",
        b"1.5 qid:1 1:1",
        b"1 qid: 1:1",
        b"1 qid:1 1:1\xff",
    ],
)
def test_malformed_letor_line_fails_with_one_line(tmp_path, line) -> None:
    path = write(str(tmp_path), "bad.letor", b"2 qid:1 1:0.5 2:1\n" + line + b"\n")
    code, out, err = run_cli("eval", "--letor", path)
    assert_clean(code, out, err)
    assert code == 2 and "bad.letor, line 2" in err


@pytest.mark.parametrize(
    ("run", "qrels", "fmt"),
    [
        (b"q1 Q0 d1 1 nan t\n", b"q1 0 d1 1\n", "trec"),
        (b"\xff\xfe\x00garbage", b"\x1f\x8b\x08\x00broken", "csv"),
        (b"all Q0 d1 1 1 t\n", b"all 0 d1 1\n", "trec"),
        (b"all Q0 d1 1 1e308 t\nall Q0 d2 1 -1e308 t\n", b"all 0 d1 1\n", "json"),
    ],
)
def test_odd_files_in_a_real_process(tmp_path, run, qrels, fmt) -> None:
    """The installed command: exit 0 or 2, one line on stderr, no traceback, no nan/inf."""
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    }
    run_path, qrels_path = write(str(tmp_path), "run", run), write(str(tmp_path), "qrels", qrels)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tiecore",
            "eval",
            str(qrels_path),
            str(run_path),
            "-q",
            "--format",
            fmt,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    count_case(done.returncode)
    assert_clean(done.returncode, done.stdout, done.stderr)
    assert done.stderr.count("\n") <= 1

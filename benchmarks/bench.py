"""Side-by-side benchmark of tiecore: aware vs oblivious, and against ir_measures and ranx.

Every figure is a ratio of two timings taken in the same run of this script, each the
best (minimum) of a few repeats of ``time.perf_counter``; see ``benchmarks/README.md``.

    python benchmarks/bench.py --quick            # small sizes, a smoke test (< 1 minute)
    python benchmarks/bench.py --json bench.json  # full sizes (several minutes)
    python benchmarks/bench.py --profile          # also cProfile tiecore's hot spots

Child processes (``--child KIND ...``) are this same file run again, so that each
tool is timed end to end from the files with its own interpreter, imports and memory.
Only the standard library is imported at module level to keep those children fair.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROBUST = Path("/work/shared/data/robust03")
#: The measures of every race: those ir_measures computes with pytrec_eval (trec_eval), the
#: provider it really uses for them, and ranx too. Not F1@10 (pytrec_eval has none) nor
#: RR@10 (ir_measures sends it to its slow pure-Python msmarco provider, with other ties).
RACE_MEASURES = (
    "P@10",
    "P@5",
    "R@100",
    "AP",
    "AP@100",
    "RR",
    "nDCG@10",
    "nDCG",
    "Rprec",
    "Bpref",
    "Success@10",
)
#: ranx's metric names for tiecore's families.
RANX_FAMILIES = {
    "P": "precision",
    "R": "recall",
    "F1": "f1",
    "AP": "map",
    "RR": "mrr",
    "nDCG": "ndcg",
    "Rprec": "r-precision",
    "Bpref": "bpref",
    "Success": "hit_rate",
}
#: The measures of the track lines: TREC-COVID's official ones (P@5, nDCG@10, MAP, bpref),
#: the 4 measures of issue 26's track rows.
TRACK_MEASURES = ("P@5", "nDCG@10", "AP", "Bpref")
#: pytrec_eval's (trec_eval's) names of tiecore's measures, for plain pytrec_eval.
PYTREC_NAMES = {"P@5": "P_5", "nDCG@10": "ndcg_cut_10", "AP": "map", "Bpref": "bpref"}
#: Tracks shaped like TREC-COVID: name -> (runs, queries, docs per query, seed). Round 2 had
#: 136 runs on 35 topics (4.2M rows), round 3 79 runs on 40 topics (2.8M rows).
TRACKS = {"covid2": (136, 35, 900, 2), "covid3": (79, 40, 900, 3)}
#: Quick mode's: real-sized runs, a tenth of them.
QUICK_TRACKS = {"covid2": (14, 35, 900, 2), "covid3": (8, 40, 900, 3)}
#: Quick-mode subset of robust03: a tie-heavy run (integer scores) and a short one.
QUICK_ROBUST = ("input.MU03rob01.gz", "input.humR03dc.gz")
#: A child process's last stderr line: its peak resident memory (VmHWM) in MB.
HWM_MARK = "BENCH_VMHWM_MB"
#: Where every child keeps its bytecode (see :func:`run_child`).
PYCACHE = Path(tempfile.gettempdir()) / "tiecore-bench-pycache"


# ----------------------------------------------------------------------------- names


def ranx_name(measure: str) -> str:
    """``P@10`` -> ``precision@10``, ``AP`` -> ``map``, ``Success@10`` -> ``hit_rate@10``."""
    family, _, cutoff = measure.partition("@")
    return RANX_FAMILIES[family] + (f"@{cutoff}" if cutoff else "")


def ir_measures_name(measure: str) -> str:
    """tiecore and ir_measures share the names of the race measures."""
    return measure


# ----------------------------------------------------------------------------- timing


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    """Minimum and all wall times (seconds) of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(max(repeat, 1)):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), times


@dataclass
class Child:
    """One finished child process: wall time, peak RSS, its output and its CPU time."""

    wall: float
    max_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    cpu: float = 0.0  # user + system seconds, its own threads and its waited-for children

    def report(self) -> dict:
        """The JSON object a ``--child`` process prints on its last stdout line."""
        for line in reversed(self.stdout.strip().splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        return {}


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> Child:
    """Run ``cmd`` from the repo root: its wall time and its own peak RSS.

    The peak is the ``VmHWM`` a ``--child`` process prints on stderr as it exits
    (``ru_maxrss`` from ``os.wait4`` would include the forked parent's pages).
    """
    full_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    full_env.setdefault("PYTHONWARNINGS", "ignore")
    # Bytecode as an installed package has it, for every tool alike: compiled once into
    # this benchmark's own cache, then read. With PYTHONDONTWRITEBYTECODE (set in some
    # environments) every child would compile tiecore's modules from source again, while
    # the peers' come installed with their .pyc files.
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)
    full_env.setdefault("PYTHONPYCACHEPREFIX", str(PYCACHE))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        peak = usage.ru_maxrss / 1024
        for line in stderr.splitlines():
            if line.startswith(HWM_MARK):
                peak = float(line.split()[1])
        stdout = out.read().decode(errors="replace")
        cpu = usage.ru_utime + usage.ru_stime
        return Child(wall, peak, proc.returncode, stdout, stderr, cpu)


def best_child(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> Child:
    """The fastest of ``repeat`` runs of ``cmd``; raises with its stderr if it fails."""
    best = None
    for _ in range(max(repeat, 1)):
        child = run_child(cmd, env)
        if child.returncode != 0:
            tail = "\n".join(child.stderr.strip().splitlines()[-15:])
            raise RuntimeError(f"{' '.join(cmd[:6])} ... exited {child.returncode}:\n{tail}")
        if best is None or child.wall < best.wall:
            best = child
    return best


def best_children(
    commands: dict[str, list[str]],
    repeat: int,
    env: dict[str, str] | None = None,
    timed: Callable[[Child], float] = lambda child: child.wall,
) -> dict[str, Child]:
    """The fastest run of each command by ``timed`` (its wall time by default), the commands taken
    in turn ``repeat`` times.

    Interleaved (a, b, a, b ... rather than a, a, b, b), so that a change of the
    machine's load hits every command alike: the ratios of a shared machine stay fair.
    """
    best: dict[str, Child] = {}
    for _ in range(max(repeat, 1)):
        for key, cmd in commands.items():
            child = run_child(cmd, env)
            if child.returncode != 0:
                tail = "\n".join(child.stderr.strip().splitlines()[-15:])
                raise RuntimeError(f"{' '.join(cmd[:6])} ... exited {child.returncode}:\n{tail}")
            if key not in best or timed(child) < timed(best[key]):
                best[key] = child
    return best


# ------------------------------------------------------------------------------- data


@dataclass
class Dataset:
    """A qrels file and run files on disk, with the field separator of the runs."""

    name: str
    qrels: Path
    runs: list[Path]
    sep: str
    rows: int = 0
    note: str = ""


def separator(path: Path) -> str:
    """The run file's separator (tab or space), from its first line."""
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return "\t" if "\t" in handle.readline() else " "


def generate(directory: Path, queries: int, docs: int, seed: int = 0) -> Dataset:
    """A tie-heavy TREC run (``queries x docs`` rows) and qrels, written to ``directory``.

    Scores are Poisson(3) integer counts sorted per query (about 12 distinct values for
    1,000 docs, so nearly every doc ties); docnos look like TREC ids (``FBIS3-012345``),
    distinct per query; each query has 100 judged docs, 70 retrieved (drawn towards the
    top) and 30 not, graded 0/1/2 with probabilities 0.6/0.25/0.15.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    prime = 1_000_003  # doc ids base + i * step (mod prime) are distinct for i < prime
    base = rng.integers(0, prime, queries)
    step = rng.integers(1, prime, queries)

    def docnos(index: np.ndarray) -> pa.Array:
        doc = ((base[:, None] + index * step[:, None]) % prime).ravel()
        prefixes = pa.array(["FBIS3-", "FBIS4-", "FT921-", "FT944-", "LA0412", "FR9401"])
        prefix = pa.DictionaryArray.from_arrays(pa.array(doc % 6), prefixes)
        number = pc.utf8_lpad(pc.cast(pa.array(doc // 6), pa.string()), 6, "0")
        return pc.binary_join_element_wise(pc.cast(prefix, pa.string()), number, "")

    qids = np.arange(301, 301 + queries).astype(str)
    counts = -np.sort(-rng.poisson(3.0, (queries, docs)), axis=1).ravel()
    scores = pa.DictionaryArray.from_arrays(
        pa.array(counts), pa.array([f"{v:.6f}" for v in range(int(counts.max()) + 1)])
    )
    run = pa.table(
        {
            "qid": pa.array(np.repeat(qids, docs)),
            "q0": pa.array(np.full(queries * docs, "Q0")),
            "docno": docnos(np.arange(docs)[None, :]),
            "rank": pa.array(np.tile(np.arange(1, docs + 1), queries)),
            "score": pc.cast(scores, pa.string()),
            "tag": pa.array(np.full(queries * docs, "tiebench")),
        }
    )
    retrieved = min(70, docs)
    bias = rng.random((queries, docs)) * (1 + np.arange(docs) / 100)
    picked = np.sort(np.argsort(bias, axis=1)[:, :retrieved], axis=1)
    judged = np.concatenate([picked, np.arange(docs, docs + 30)[None, :].repeat(queries, 0)], 1)
    levels = rng.choice(3, size=judged.size, p=[0.6, 0.25, 0.15])
    qrels = pa.table(
        {
            "qid": pa.array(np.repeat(qids, judged.shape[1])),
            "iter": pa.array(np.zeros(judged.size, np.int64)),
            "docno": pc.take(
                docnos(np.arange(docs + 30)[None, :]),
                pa.array((judged + np.arange(queries)[:, None] * (docs + 30)).ravel()),
            ),
            "level": pa.array(levels),
        }
    )
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    name = f"tie{queries * docs // 1000}k"
    run_path, qrels_path = directory / f"{name}.run.trec", directory / f"{name}.qrels.txt"
    pacsv.write_csv(run, run_path, options)
    pacsv.write_csv(qrels, qrels_path, options)
    return Dataset(name, qrels_path, [run_path], " ", queries * docs, f"{queries}q x {docs}d")


def robust(subset: tuple[str, ...] | None) -> Dataset | None:
    """TREC 2003 Robust: 17 runs (gzip, tab-separated) and qrels, or a subset of them."""
    runs_dir = ROBUST / "runs"
    if not runs_dir.is_dir():
        return None
    runs = sorted(runs_dir.glob("*.gz"))
    if subset:
        runs = [p for p in runs if p.name in subset]
    name = "robust03" if not subset else f"robust03[{len(runs)}]"
    return Dataset(name, ROBUST / "qrels.txt", runs, separator(runs[0]), note=f"{len(runs)} runs")


def generate_collection(
    directory: Path, runs: int, queries: int, docs: int, seed: int = 1
) -> Dataset:
    """``runs`` runs of one track (a shared qrels), written as TREC files to ``directory``.

    Per query a pool of ``4 * docs`` docs, 100 of them (at most half) judged (0/1/2 with
    probabilities 0.6/0.25/0.15). Each run has a quality ``a ~ U(0.3, 2)`` and retrieves
    the ``docs`` pool docs of highest ``a * level + N(0, 1)`` (unjudged docs count as level
    0), ranked by that score; a third of the runs print it as an integer count
    (``floor(2 * score)``, so they tie a lot), the others with 4 decimals.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    pool = 4 * docs
    qids = np.arange(401, 401 + queries).astype(str)
    numbers = pc.utf8_lpad(pc.cast(pa.array(np.arange(queries * pool)), pa.string()), 8, "0")
    docnos = pc.binary_join_element_wise(pa.scalar("WSJ9-"), numbers, "")
    per_query = min(100, pool // 2)
    judged = np.argsort(rng.random((queries, pool)), axis=1)[:, :per_query]
    levels = rng.choice(3, size=judged.shape, p=[0.6, 0.25, 0.15])
    level = np.zeros((queries, pool))
    np.put_along_axis(level, judged, levels, axis=1)
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    flat = (judged + np.arange(queries)[:, None] * pool).ravel()
    qrels = pa.table(
        {
            "qid": pa.array(np.repeat(qids, per_query)),
            "iter": pa.array(np.zeros(flat.size, np.int64)),
            "docno": pc.take(docnos, pa.array(flat)),
            "level": pa.array(levels.ravel()),
        }
    )
    name = f"coll{runs}"
    folder = directory / name
    folder.mkdir(parents=True, exist_ok=True)
    qrels_path = folder / "qrels.txt"
    pacsv.write_csv(qrels, qrels_path, options)
    paths = []
    offsets = np.arange(queries)[:, None] * pool
    for r in range(runs):
        score = rng.uniform(0.3, 2.0) * level + rng.normal(size=level.shape)
        top = np.argsort(-score, axis=1)[:, :docs]
        chosen = np.take_along_axis(score, top, axis=1).ravel()
        text = (
            np.floor(2 * chosen).astype(np.int64).astype(str)
            if r % 3 == 0
            else np.char.mod("%.4f", chosen)
        )
        table = pa.table(
            {
                "qid": pa.array(np.repeat(qids, docs)),
                "q0": pa.array(np.full(chosen.size, "Q0")),
                "docno": pc.take(docnos, pa.array((top + offsets).ravel())),
                "rank": pa.array(np.tile(np.arange(1, docs + 1), queries)),
                "score": pa.array(text),
                "tag": pa.array(np.full(chosen.size, f"sys{r:03d}")),
            }
        )
        paths.append(folder / f"run{r:03d}.txt")
        pacsv.write_csv(table, paths[-1], options)
    note = f"{runs} runs x {queries}q x {docs}d, a third with integer scores"
    return Dataset(name, qrels_path, paths, " ", runs * queries * docs, note)


# ------------------------------------------------------------------------- results


@dataclass
class Result:
    """One line of the table: tiecore's figure, the peer's, their ratio and the goal."""

    dataset: str
    what: str
    tiecore: float | None
    peer: float | None
    goal: str = "info"  # "<= 1.1", "< 1", "info"
    unit: str = "s"
    note: str = ""
    ratio: float | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.ratio is None and self.tiecore is not None and self.peer:
            self.ratio = self.tiecore / self.peer

    @property
    def verdict(self) -> str:
        if self.ratio is None:
            return "n/a"
        if self.goal == "info":
            return "info"
        op, _, bound = self.goal.partition(" ")
        checks = {"<=": float.__le__, "<": float.__lt__, ">=": float.__ge__}
        return "pass" if checks[op](float(self.ratio), float(bound)) else "FAIL"


def print_table(results: list[Result]) -> None:
    """The compact table: what, tiecore, peer, ratio, goal, verdict."""

    def fmt(value: float | None, unit: str) -> str:
        if value is None:
            return "-"
        if unit == "s":
            return f"{value:.3f}s"
        if unit == "MB":
            return f"{value:.0f}MB"
        return f"{value:.4g}{unit}"

    header = ("dataset", "what", "tiecore", "peer", "ratio", "goal", "")
    rows = [
        (
            r.dataset,
            r.what,
            fmt(r.tiecore, r.unit),
            fmt(r.peer, r.unit),
            "-" if r.ratio is None else f"{r.ratio:.3f}",
            r.goal,
            r.verdict,
        )
        for r in results
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = "  ".join(f"{{:{'<' if i < 2 else '>'}{w}}}" for i, w in enumerate(widths))
    print(line.format(*header))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line.format(*row))
    notes = [f"  [{r.dataset}] {r.what}: {r.note}" for r in results if r.note]
    if notes:
        print("notes:")
        print("\n".join(notes))


# --------------------------------------------------------------------- in-process


def load(ds: Dataset):
    """The dataset through tiecore's readers (runs dict, qrels frame)."""
    import tiecore

    runs = tiecore.read_runs([str(p) for p in ds.runs])
    qrels = tiecore.read_qrels(str(ds.qrels))
    ds.rows = sum(len(r) for r in runs.values())
    return runs, qrels


def bench_modes(ds, runs, qrels, measures, repeat) -> tuple[list[Result], float]:
    """Aware vs oblivious on loaded frames, whole evaluate() and its parts."""
    import tiecore
    from tiecore.engine import kernels, profiles
    from tiecore.engine.judgments import Judgments
    from tiecore.engine.ranking import Ranking
    from tiecore.measures import parse_measures

    def ev(ties):
        return lambda: tiecore.evaluate(runs, qrels, measures, ties=ties)

    aware_all, obliv_all = [], []
    for _ in range(max(repeat, 1)):  # interleaved, so that a change of load hits both
        aware_all += best_of(ev("aware"), 1)[1]
        obliv_all += best_of(ev("oblivious"), 1)[1]
    aware, obliv = min(aware_all), min(obliv_all)
    paired = sorted(a / o for a, o in zip(aware_all, obliv_all, strict=True))
    out = [
        Result(
            ds.name,
            "evaluate aware / oblivious",
            aware,
            obliv,
            "<= 1.1",
            note=(
                f"{len(measures)} measures, {ds.rows:,} rows; parsing excluded; paired ratios "
                f"{', '.join(f'{x:.2f}' for x in paired)} (median {paired[len(paired) // 2]:.2f})"
            ),
            extra={"aware_all": aware_all, "oblivious_all": obliv_all},
        )
    ]
    parsed = parse_measures(list(measures))
    judg = Judgments.from_qrels(qrels)
    t_judg, _ = best_of(lambda: Judgments.from_qrels(qrels), repeat)

    def build(tiebreak):
        return {
            name: Ranking.build(run, judg, tiebreak=tiebreak, name=name)
            for name, run in runs.items()
        }

    t_build_file, _ = best_of(lambda: build("file_order"), repeat)
    t_build_trec, _ = best_of(lambda: build("trec_eval"), repeat)
    by_file, by_trec = build("file_order"), build("trec_eval")

    def kern(rankings, make_profile):
        def go():
            for ranking in rankings.values():
                profile = make_profile(ranking, judg)
                for m in parsed:
                    kernels.values(m, profile, ranking, judg)

        return go

    k_aware, _ = best_of(kern(by_file, profiles.aware), repeat)
    k_obliv, _ = best_of(kern(by_trec, profiles.oblivious), repeat)
    out += [
        Result(ds.name, "  profile+kernels aware / obl.", k_aware, k_obliv, note=""),
        Result(
            ds.name,
            "  Ranking.build file_order / trec_eval",
            t_build_file,
            t_build_trec,
            note="aware builds with file_order (lexsort), oblivious with trec_eval (docno sort)",
        ),
    ]
    shared = t_judg + _time_tidy(by_trec, judg, parsed, repeat)
    out.append(
        Result(
            ds.name,
            "  Judgments + _value_frame / evaluate obl.",
            shared,
            obliv,
            note=(
                f"parts both modes share: Judgments.from_qrels {t_judg:.3f}s, the rest in "
                "tidying (Evaluator.summary per run, one frame for all runs)"
            ),
        )
    )
    return out, obliv


def _time_tidy(rankings, judg, parsed, repeat) -> float:
    """Time of tidying all runs' values into one frame (``Evaluator.summary`` and
    ``tiecore.evaluation.core._Rows``, private, so guarded)."""
    module = sys.modules["tiecore.evaluation.core"]
    try:
        from tiecore.evaluation.evaluator import Evaluator

        evaluator = Evaluator(judg, parsed, "oblivious")
        found = {name: evaluator.values(r) for name, r in rankings.items()}

        def tidy():
            module._Rows.frame(
                [
                    module._Rows.of(name, evaluator.summary(r.counts > 0, found[name]), False)
                    for name, r in rankings.items()
                ]
            )

        return best_of(tidy, repeat)[0]
    except (AttributeError, TypeError, ImportError):
        return float("nan")


def bench_sampled(ds, runs, qrels, measures, repeat, oblivious: float) -> list[Result]:
    """Cost of one extra sample of evaluate(ties="sampled") as a share of one oblivious run.

    The slope ``(t(100) - t(10)) / 90``: where a sample costs a thousandth of the
    evaluation (Robust03), an extrapolated base from N = 2 and 10 drowns in the
    noise (it gave negative costs), the 90 extra samples do not.
    """
    import tiecore
    from tiecore.engine import kernels
    from tiecore.engine.judgments import Judgments
    from tiecore.engine.ranking import Ranking
    from tiecore.engine.sampling import mixed_rows
    from tiecore.measures import parse_measures

    times = {}
    for n in (10, 100):
        times[n], _ = best_of(
            lambda n=n: tiecore.evaluate(runs, qrels, measures, ties="sampled", samples=n),
            repeat if n < 100 else max(1, repeat - 1),
        )
    per = (times[100] - times[10]) / 90
    out = [
        Result(
            ds.name,
            "sampled: 1 sample / oblivious",
            per,
            oblivious,
            "<= 0.1",
            note=f"(t(N=100) - t(N=10)) / 90, t(10)={times[10]:.3f}s, t(100)={times[100]:.3f}s",
            extra={"t": times},
        )
    ]
    judg = Judgments.from_qrels(qrels)
    plans = [kernels.plan(m, judg) for m in parse_measures(list(measures))]
    deepest = max(int(p.cut.max(initial=0)) for p in plans)
    mixed = total = 0
    for name, run in runs.items():
        ranking = Ranking.build(run, judg, tiebreak="file_order", name=name)
        mixed += mixed_rows(ranking, deepest).size
        total += len(ranking.query)
    out.append(
        Result(
            ds.name,
            "sampled: rows re-drawn / all rows",
            mixed,
            total,
            unit=" rows",
            note="tiecore.engine.sampling.mixed_rows at the deepest cutoff of the measures",
        )
    )
    return out


# --------------------------------------------------------------------- end to end


def child_cmd(kind: str, *args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", kind, *args]


def tiecore_cmd(ds: Dataset, measures, ties: str) -> list[str]:
    """``tiecore eval`` (run as ``--child cli``: the same as ``python -m tiecore eval``)."""
    cmd = ["eval", "--ties", ties, "--format", "json"]
    for m in measures:
        cmd += ["-m", m]
    return child_cmd("cli", *cmd, str(ds.qrels), *map(str, ds.runs))


def tiecore_values(child: Child) -> dict[str, dict[str, float]]:
    """``{run: {measure: mean}}`` from ``tiecore eval --format json`` (summary rows: no qid)."""
    out: dict[str, dict[str, float]] = {}
    for rec in json.loads(child.stdout):
        if rec.get("qid") in (None, "all"):
            out.setdefault(rec["run"], {})[rec["measure"]] = rec["value"]
    return out


def compare_values(ours, theirs, translate) -> dict[str, float]:
    """Largest |tiecore - peer| per measure over the runs (both list them in file order)."""
    diffs: dict[str, float] = {}
    for values, peer in zip(ours.values(), theirs.values(), strict=False):
        for m, v in values.items():
            name = translate(m)
            if name in peer:
                diffs[m] = max(diffs.get(m, 0.0), abs(v - peer[name]))
    return diffs


def bench_end_to_end(ds, measures, peer_repeat, *, ranx: bool, fresh_jit: bool) -> list[Result]:
    """``tiecore eval`` vs ir_measures vs ranx, each a subprocess reading the files.

    The goal line is tie-aware tiecore against ir_measures at its best (one evaluator,
    pytrec_eval); the oblivious run gives the values compared with the peers'.
    """
    out: list[Result] = []
    files = [str(ds.qrels), *map(str, ds.runs)]
    names = [ir_measures_name(m) for m in measures]
    commands = {
        "aware": tiecore_cmd(ds, measures, "aware"),
        "oblivious": tiecore_cmd(ds, measures, "oblivious"),
        "ir_measures": child_cmd("ir_measures", ",".join(names), *files),
    }
    try:  # interleaved: tiecore and its peer see the same load
        found = best_children(commands, peer_repeat)
    except RuntimeError:
        found = {}
    aware = found.get("aware") or best_child(commands["aware"], peer_repeat)
    ours = found.get("oblivious") or best_child(commands["oblivious"], peer_repeat)
    values = tiecore_values(ours)
    rss = f"peak RSS aware {aware.max_rss_mb:.0f}MB, oblivious {ours.max_rss_mb:.0f}MB"
    out.append(
        Result(ds.name, "tiecore eval aware / oblivious (e2e)", aware.wall, ours.wall, note=rss)
    )
    try:
        irm = found.get("ir_measures") or best_child(commands["ir_measures"], peer_repeat)
    except RuntimeError as error:
        out.append(Result(ds.name, "eval e2e / ir_measures", aware.wall, None, note=str(error)))
    else:
        rep = irm.report()
        diffs = compare_values(values, rep["values"], ir_measures_name)
        split = (
            f"ir_measures: import {rep['import']:.2f}s, evaluator (qrels) {rep['qrels']:.2f}s, "
            f"runs {rep['eval']:.2f}s; providers {rep['providers']}"
        )
        out += [
            Result(
                ds.name,
                "tiecore eval aware / ir_measures (e2e)",
                aware.wall,
                irm.wall,
                "<= 0.3",
                note=(
                    f"{split}; peak RSS ir_measures {irm.max_rss_mb:.0f}MB, tiecore aware "
                    f"{aware.max_rss_mb:.0f}MB"
                ),
                extra={"report": rep, "rss": [aware.max_rss_mb, irm.max_rss_mb]},
            ),
            Result(
                ds.name,
                "  tiecore eval oblivious / ir_measures",
                ours.wall,
                irm.wall,
                note=f"max |mean oblivious - pytrec_eval| {_fmt_diffs(diffs)}",
                extra={"diffs": diffs},
            ),
        ]
    if ranx:
        out += _ranx_lines(ds, measures, aware, values, peer_repeat, fresh_jit=fresh_jit)
    return out


def _ranx_lines(ds, measures, aware: Child, values, peer_repeat, *, fresh_jit) -> list[Result]:
    """``tiecore eval`` aware (``aware``) vs ranx cold, warm and (``fresh_jit``) first use;
    ``values``: the oblivious means its values are compared with."""
    out: list[Result] = []
    files = [str(ds.qrels), *map(str, ds.runs)]
    rnames = [ranx_name(m) for m in measures]
    try:
        rx = best_child(child_cmd("ranx", ",".join(rnames), *files), peer_repeat)
    except RuntimeError as error:
        out.append(Result(ds.name, "eval e2e / ranx", aware.wall, None, note=str(error)))
        return out
    rep = rx.report()
    cold = rx.wall - rep["pass2"]
    warm = rx.wall - rep["pass1"]
    diffs = compare_values(values, rep["values"], ranx_name)
    out += [
        Result(
            ds.name,
            "tiecore eval aware / ranx cold (e2e)",
            aware.wall,
            cold,
            "< 1",
            note=(
                f"ranx: import {rep['import']:.2f}s, first pass load {rep['load1']:.2f}s + "
                f"evaluate {rep['eval1']:.2f}s (numba code from its disk cache), second pass "
                f"load {rep['load2']:.2f}s + evaluate {rep['eval2']:.2f}s; peak RSS "
                f"{rx.max_rss_mb:.0f}MB; max |diff| vs oblivious {_fmt_diffs(diffs)}"
            ),
            extra={"diffs": diffs, "report": rep, "wall": rx.wall},
        ),
        Result(
            ds.name,
            "tiecore eval aware / ranx warm (e2e)",
            aware.wall,
            warm,
            "< 1",
            note="warm = process wall minus the first pass: import + a second load + evaluate",
        ),
    ]
    if fresh_jit:
        with tempfile.TemporaryDirectory() as cache:
            fresh = run_child(
                child_cmd("ranx", ",".join(rnames), *files), {"NUMBA_CACHE_DIR": cache}
            )
        if fresh.returncode == 0:
            rep = fresh.report()
            out.append(
                Result(
                    ds.name,
                    "tiecore eval aware / ranx first use (e2e)",
                    aware.wall,
                    fresh.wall - rep["pass2"],
                    "info",
                    note=(
                        "ranx with an empty NUMBA_CACHE_DIR (JIT compiles everything): "
                        f"load {rep['load1']:.1f}s + evaluate {rep['eval1']:.1f}s"
                    ),
                )
            )
    return out


def bench_imports(repeat: int) -> list[Result]:
    """Start-up: ``import tiecore.cli`` vs the libraries it cannot do without."""
    floor = ["numpy", "pandas", "pyarrow", "pyarrow.compute", "pyarrow.csv"]
    found = best_children(
        {"ours": child_cmd("import", "tiecore.cli"), "base": child_cmd("import", *floor)}, repeat
    )
    ours, base = found["ours"], found["base"]
    return [
        Result(
            "-",
            "import tiecore.cli / numpy+pandas+pyarrow",
            ours.wall,
            base.wall,
            note=(
                "fresh interpreters; every end-to-end figure pays this once "
                f"(in-process import {ours.report()['import']:.2f}s vs "
                f"{base.report()['import']:.2f}s)"
            ),
        )
    ]


def bench_arrays(repeat: int, peer_repeat: int, quick: bool) -> list[Result]:
    """The array API (:mod:`tiecore.metrics`) on one score matrix vs sklearn and trm.

    2,000 queries x 500 candidates (quick: 200 x 500), scores drawn normal and rounded to
    bfloat16 (ties), 5% of candidates relevant (binary: trm takes no levels).  nDCG@10
    against ``sklearn.metrics.ndcg_score(k=10)`` (tie-averaged, as tiecore's aware value)
    and against trm (tie-aware-retrieval-metrics, pure Python, whose ``evaluate`` gives
    the expected value with its min, max and oblivious value: tiecore's ``spread=True``
    is timed beside it); AP@10 and RR@10 against trm.  Best of ``repeat`` calls (trm:
    ``peer_repeat``); the load average is noted, the machine may be shared.
    """
    import ml_dtypes
    import numpy as np
    import trm
    from sklearn.metrics import ndcg_score

    from tiecore import metrics

    queries, candidates, k = (200 if quick else 2000), 500, 10
    rng = np.random.default_rng(0)
    y_score = rng.normal(size=(queries, candidates)).astype(ml_dtypes.bfloat16)
    y_true = (rng.random((queries, candidates)) < 0.05).astype(np.int64)
    scores = y_score.astype(np.float32)  # sklearn and trm take no bfloat16
    score_lists, relevant_lists = scores.tolist(), (y_true > 0).tolist()
    distinct = np.mean([len(np.unique(row)) for row in scores[:100]])

    def trm_time(name: str) -> float:
        call = lambda: trm.evaluate(score_lists, relevant_lists, [name], [k])  # noqa: E731
        return best_of(call, peer_repeat)[0]

    ours = {
        "ndcg": best_of(lambda: metrics.ndcg(y_true, y_score, k=k), repeat)[0],
        "ndcg spread": best_of(lambda: metrics.ndcg(y_true, y_score, k=k, spread=True), repeat)[0],
        "map": best_of(lambda: metrics.average_precision(y_true, y_score, k=k), repeat)[0],
        "mrr": best_of(lambda: metrics.reciprocal_rank(y_true, y_score, k=k), repeat)[0],
    }
    sklearn = best_of(lambda: ndcg_score(y_true, scores, k=k), repeat)[0]
    theirs = {name: trm_time(name) for name in ("ndcg", "map", "mrr")}
    load = f"load average {os.getloadavg()[0]:.1f} at the end"
    data = f"{queries}x{candidates}"
    note = f"bfloat16 scores, {distinct:.0f} distinct per row of {candidates}; {load}"
    return [
        Result(data, "metrics.ndcg(k=10) / sklearn ndcg_score(k=10)", ours["ndcg"], sklearn,
               "<= 0.5", note=note),
        Result(data, "metrics.ndcg(k=10) / trm ndcg@10", ours["ndcg"], theirs["ndcg"],
               "<= 0.05"),
        Result(data, "metrics.ndcg(k=10, spread=True) / trm ndcg@10", ours["ndcg spread"],
               theirs["ndcg"], "<= 0.05", note="both: expected, min, max, oblivious"),
        Result(data, "metrics.average_precision(k=10) / trm map@10", ours["map"],
               theirs["map"], "<= 0.05"),
        Result(data, "metrics.reciprocal_rank(k=10) / trm mrr@10", ours["mrr"],
               theirs["mrr"], "<= 0.05"),
    ]  # fmt: skip


def bench_startup(repeat: int) -> list[Result]:
    """``tiecore eval`` on a one-line run vs ``python -c "import ir_measures, pytrec_eval"``.

    Fresh interpreters, best of ``repeat`` (hyperfine-like) after one warm-up round,
    interleaved so that a change of load hits all of them; the floor imports the
    libraries tiecore's data model needs.
    """
    commands = {
        "tiecore": [sys.executable, "-m", "tiecore", "eval", "QRELS", "RUN"],
        "ir_measures": [sys.executable, "-c", "import ir_measures, pytrec_eval"],
        "floor": [sys.executable, "-c", "import numpy, pandas, pyarrow.compute, pyarrow.csv"],
        "numpy": [sys.executable, "-c", "import numpy"],
    }
    times: dict[str, list[float]] = {k: [] for k in commands}
    with tempfile.TemporaryDirectory() as folder:
        run, qrels = Path(folder) / "one.run", Path(folder) / "one.qrels"
        run.write_text("301 Q0 doc1 1 2.5 one\n")
        qrels.write_text("301 0 doc1 1\n")
        commands["tiecore"][-2:] = [str(qrels), str(run)]
        for cmd in commands.values():  # warm-up, not timed: file cache, bytecode cache
            run_child(cmd)
        for _ in range(max(repeat, 1)):
            for key, cmd in commands.items():
                child = run_child(cmd)
                if child.returncode != 0:
                    raise RuntimeError(f"{cmd} failed: {child.stderr[-500:]}")
                times[key].append(child.wall)
    best = {k: min(v) for k, v in times.items()}
    return [
        Result(
            "-",
            "start-up: tiecore eval 1 line / import ir_measures",
            best["tiecore"],
            best["ir_measures"],
            "<= 1.5",
            note=(
                f"best of {repeat} fresh processes each; floor `import numpy, pandas, "
                f"pyarrow.compute, pyarrow.csv` {best['floor']:.3f}s "
                f"({best['floor'] / best['ir_measures']:.2f}x ir_measures), "
                f"`import numpy` {best['numpy']:.3f}s"
            ),
            extra=times,
        )
    ]


def bench_stream(ds: Dataset, measures) -> list[Result]:
    """Peak memory of ``tiecore eval`` on every run vs on the largest run alone."""
    largest = max(ds.runs, key=lambda p: p.stat().st_size)
    one = Dataset(ds.name, ds.qrels, [largest], ds.sep)
    every = best_child(tiecore_cmd(ds, measures, "aware"), 1)
    alone = best_child(tiecore_cmd(one, measures, "aware"), 1)
    files = [str(ds.qrels), *map(str, ds.runs)]
    eager = best_child(child_cmd("eager", ",".join(measures), *files), 1)
    return [
        Result(
            ds.name,
            f"stream: peak RSS {len(ds.runs)} runs / largest run",
            every.max_rss_mb,
            alone.max_rss_mb,
            "<= 1.5",
            unit="MB",
            note=(
                f"tiecore eval --ties aware, runs read one at a time; loading all of them "
                f"first (read_runs + evaluate) peaks at {eager.max_rss_mb:.0f}MB"
            ),
        )
    ]


def bench_spread(ds: Dataset, measures, runs, qrels, peer_repeat: int, repeat: int) -> list:
    """``eval --spread`` vs ``eval --ties aware`` end to end; in-process as a second view."""
    import tiecore
    from tiecore.spread import evaluate_spread

    spread_cmd = [*tiecore_cmd(ds, measures, "aware")]
    spread_cmd.insert(spread_cmd.index("--format"), "--spread")
    found = best_children({"spread": spread_cmd, "aware": tiecore_cmd(ds, measures, "aware")},
                          peer_repeat)  # fmt: skip
    with_spread, aware = found["spread"], found["aware"]
    t_spread, _ = best_of(lambda: evaluate_spread(runs, qrels, measures), repeat)
    t_aware, _ = best_of(lambda: tiecore.evaluate(runs, qrels, measures), repeat)
    return [
        Result(
            ds.name,
            "eval --spread / eval aware (e2e)",
            with_spread.wall,
            aware.wall,
            "<= 2",
            note=f"in-process evaluate_spread {t_spread:.3f}s / evaluate aware {t_aware:.3f}s "
            f"= {t_spread / t_aware:.2f}",
        )
    ]


def bench_compare(ds: Dataset, peer_repeat: int, samples: int = 200) -> list[Result]:
    """``tiecore compare -m AP`` vs ``tiecore eval --ties aware --spread -m AP``."""
    files = [str(ds.qrels), *map(str, ds.runs)]
    cmp = child_cmd("cli", "compare", "-m", "AP", "--samples", str(samples), "--format", "json")
    ev = child_cmd("cli", "eval", "--ties", "aware", "--spread", "-m", "AP", "--format", "json")
    best = best_children({"compare": [*cmp, *files], "spread": [*ev, *files]}, peer_repeat)
    compared, spread = best["compare"], best["spread"]
    return [
        Result(
            ds.name,
            "compare / eval --spread (e2e)",
            compared.wall,
            spread.wall,
            "<= 3",
            note=f"{len(ds.runs)} runs, AP, {samples} samples per run, 2000 resamples",
        )
    ]


def bench_dask(ds: Dataset, measures, repeat: int) -> list[Result]:
    """Speed-up of ``evaluate(paths, client=)`` on 2 workers (``--dask local:2``) over 1
    worker (``local:1``), and over the local loop.

    As a user with a running cluster sees it: the clusters are started and every
    path warmed up once before timing; the local loop and the clusters then take
    turns (so that all meet the same load of the machine), best of ``repeat`` each.

    The goal is the scaling from 1 core to 2: each worker pinned to a core of its own
    (all its threads; the client and scheduler are free).  Unpinned, one worker
    already uses part of the second core (a gzip run is inflated in a thread while
    it is parsed), so the two figures without pinning are information: the same
    clusters free to use both cores, and the local loop, which also reads the next
    run in a thread while it evaluates one.  The CPU seconds (the local process;
    the client, scheduler and workers) show the overhead of the cluster.
    """
    files = [str(ds.qrels), *map(str, ds.runs)]
    child = best_child(child_cmd("dask", ",".join(measures), str(repeat), *files), 1)
    rep = child.report()
    speedup = rep["one_pinned"] / rep["dask_pinned"]
    serial = 2 / speedup - 1  # Amdahl: S = 1 / (f + (1 - f) / N), N = 2
    common = (
        f"interleaved, best of {repeat}; load average {rep['load'][0]:.1f} -> "
        f"{rep['load'][1]:.1f}; cluster start {rep['start']:.1f}s not counted; identical "
        f"results: {rep['equal']}"
    )
    return [
        Result(
            ds.name,
            "dask: 1 worker on 1 core / 2 workers on 2 cores (speed-up)",
            rep["one_pinned"],
            rep["dask_pinned"],
            ">= 1.5",
            note=(
                f"evaluate(files, client=) on local_cluster(1) vs local_cluster(2), each "
                f"worker pinned to a core of its own ({rep['cores']} cores), {common}; CPU "
                f"{rep['one_pinned_cpu']:.1f}s vs {rep['dask_pinned_cpu']:.1f}s (workers + "
                f"client); serial fraction (Amdahl, f = 2/S - 1) {serial:.3f}; task stream of "
                f"2 workers: {rep['stream']['tasks']} tasks, workers idle "
                f"{rep['stream']['idle']:.1%} of the wall time, first task after "
                f"{rep['stream']['first']:.3f}s, last done {rep['stream']['after']:.3f}s before "
                f"the end"
            ),
            extra=rep | {"serial": serial},
        ),
        Result(
            ds.name,
            "dask: 1 worker / 2 workers, free to use every core",
            rep["one"],
            rep["dask"],
            "info",
            note=(
                f"the same clusters unpinned: one worker may use part of a second core (a "
                f"gzip run is inflated in a thread) (CPU {rep['one_cpu']:.1f}s in "
                f"{rep['one']:.2f}s; "
                f"2 workers: {rep['dask_cpu']:.1f}s in {rep['dask']:.2f}s)"
            ),
        ),
        Result(
            ds.name,
            "dask: local loop / 2 workers",
            rep["local"],
            rep["dask"],
            "info",
            note=(
                f"the local loop (reading ahead on a thread: CPU {rep['local_cpu']:.1f}s in "
                f"{rep['local']:.2f}s) vs local_cluster(2) unpinned (CPU {rep['dask_cpu']:.1f}s)"
            ),
        ),
        *bench_dask_one_off(ds, measures, repeat),
    ]


def bench_dask_one_off(ds: Dataset, measures, repeat: int) -> list[Result]:
    """``tiecore eval --dask local:2`` against the plain ``tiecore eval``, as a user runs
    them (fresh processes, interleaved, best of ``repeat``): once as it is (a collection
    too small for the cluster to pay off is evaluated locally, with a note), once with
    the cluster forced (``tiecore.distributed.ROW_SECONDS`` set so high that it always
    pays off): start, imports, evaluation and close of the cluster, all counted."""
    from tiecore.distributed import least_rows

    base = tiecore_cmd(ds, measures, "oblivious")
    commands = {
        "local": base,
        "asked": [*base, "--dask", "local:2"],
        "forced": [*child_cmd("dask_forced"), *base[4:], "--dask", "local:2"],
    }
    best = best_children(commands, repeat)
    least = least_rows(2, len(os.sched_getaffinity(0)))
    limit = "never" if least is None else f"{least:,.0f} rows"
    declined = "note:" in best["asked"].stderr
    return [
        Result(
            ds.name,
            "dask: tiecore eval / --dask local:2 one-off, cluster forced",
            best["local"].wall,
            best["forced"].wall,
            "info",
            note=(
                f"fresh processes, interleaved, best of {repeat}: start, worker imports "
                f"(preloaded), evaluation and close of local:2 all counted; {ds.rows:,} rows"
            ),
        ),
        Result(
            ds.name,
            "dask: tiecore eval / --dask local:2 one-off, as run",
            best["local"].wall,
            best["asked"].wall,
            ">= 0.8",
            note=(
                f"local:2 pays off from {limit} here (tiecore.distributed.least_rows): "
                f"{'declined, evaluated locally' if declined else 'ran on the cluster'}"
            ),
        ),
    ]


def bench_dask_memory(ds: Dataset, measures, limit_mb: int, split_rows: int) -> list[Result]:
    """A run bigger than a worker's memory limit, from Parquet, in query partitions."""
    files = [str(ds.qrels), *map(str, ds.runs)]
    args = [",".join(measures), str(limit_mb), str(split_rows), *files]
    child = best_child(child_cmd("dask_memory", *args), 1)
    rep = child.report()
    return [
        Result(
            ds.name,
            "dask: collection / worker memory limit",
            rep["loaded_mb"],
            rep["limit_mb"],
            "info",
            unit="MB",
            note=(
                f"{rep['rows']:,} rows as Parquet, {rep['partitions']} query partitions of "
                f"<= {split_rows:,} rows on 2 workers; worker peaks "
                f"{', '.join(f'{x:.0f}' for x in rep['worker_peaks_mb'])}MB, "
                f"failures: {rep['failures']}, identical to local: {rep['equal']}, "
                f"{rep['dask']:.1f}s on the cluster vs {rep['local']:.1f}s locally"
            ),
            extra=rep,
        )
    ]


def import_profile(top: int = 14) -> str:
    """The slowest imports behind ``import tiecore.cli`` (``python -X importtime``)."""
    child = run_child([sys.executable, "-X", "importtime", "-c", "import tiecore.cli"])
    entries = []
    for line in child.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, own, cumulative, name = (x.strip() for x in line.replace(":", "|", 1).split("|"))
            entries.append((int(cumulative), int(own), name))
    wanted = [e for e in entries if "." not in e[2] or e[2].startswith(("tiecore", "scipy."))]
    wanted.sort(reverse=True)
    text = "\n".join(
        f"{c / 1e6:8.3f}s cumulative {o / 1e6:7.3f}s self  {n}" for c, o, n in wanted[:top]
    )
    print("\n=== profile: python -X importtime -c 'import tiecore.cli' ===")
    print(text)
    return text


def _fmt_diffs(diffs: dict[str, float]) -> str:
    return ", ".join(f"{m} {d:.2g}" for m, d in diffs.items()) or "n/a"


# ---------------------------------------------------------------------------- parsing


def bench_parse(ds: Dataset, repeat: int) -> list[Result]:
    """read_run vs pandas(pyarrow) and pyarrow.csv, each in its own process.

    The readers take turns, a process each per round (best of two reads in it),
    so that a change of the machine's speed hits them alike; the fastest round
    of each is kept.
    """
    files = [str(p) for p in ds.runs]
    commands = {
        k: child_cmd("parse", k, ds.sep, "2", *files) for k in ("tiecore", "pandas", "pyarrow")
    }
    rounds = max(2, (repeat + 1) // 2)
    found = best_children(commands, rounds, timed=lambda child: child.report()["time"])
    reports = {kind: child.report() for kind, child in found.items()}
    ours = reports["tiecore"]
    out = [
        Result(
            ds.name,
            f"read_run / {peer}",
            ours["time"],
            reports[peer]["time"],
            goal,
            note=label,
        )
        for peer, goal, label in (
            ("pyarrow", "info", "pyarrow.csv.read_csv, qid/docno/score typed, gzip by extension"),
            (
                "pandas",
                "<= 1.0",
                "pandas.read_csv(engine='pyarrow'), all 6 columns: usecols with names fails "
                "in pandas 3.1 ('fqid' not in include_columns)",
            ),
        )
    ]
    out.append(
        Result(
            ds.name,
            "read_run peak memory / column bytes",
            ours["peak_mb"],
            ours["column_mb"],
            "<= 3",
            unit="MB",
            note=(
                "peak RSS growth during the read (VmHWM after /proc/self/clear_refs) vs "
                "DataFrame.memory_usage(deep=True); pyarrow.csv peak "
                f"{reports['pyarrow']['peak_mb']:.0f}MB for {reports['pyarrow']['column_mb']:.0f}MB"
                f", pandas {reports['pandas']['peak_mb']:.0f}MB for "
                f"{reports['pandas']['column_mb']:.0f}MB"
            ),
            extra=reports,
        )
    )
    return out


def bench_floor(ds: Dataset, measures, peer_repeat: int) -> list[Result]:
    """``tiecore eval`` against the parse floor: a process that only reads the file.

    The floor child imports pyarrow and pyarrow.csv and nothing else, and reads the
    three columns any evaluation needs, typed (qid and docno strings, score float64):
    what no tool reading TREC text with pyarrow can beat. All three processes take
    turns, the fastest of ``peer_repeat`` (at least 2) kept.
    """
    files = [str(p) for p in ds.runs]
    commands = {
        "aware": tiecore_cmd(ds, measures, "aware"),
        "oblivious": tiecore_cmd(ds, measures, "oblivious"),
        "floor": child_cmd("floor", ds.sep, *files),
    }
    found = best_children(commands, max(peer_repeat, 2))
    aware, ours, floor = found["aware"], found["oblivious"], found["floor"]
    rep = floor.report()
    split = (
        f"floor process: import pyarrow+pyarrow.csv {rep['import']:.2f}s, read "
        f"{rep['read']:.2f}s ({rep['rows']:,} rows; numpy imported by pyarrow: "
        f"{rep['numpy']}), peak RSS {floor.max_rss_mb:.0f}MB, CPU {floor.cpu:.2f}s"
    )
    return [
        Result(
            ds.name,
            "floor: tiecore eval aware / pyarrow.csv read (e2e)",
            aware.wall,
            floor.wall,
            "<= 3",
            note=(
                f"{split}; tiecore aware ({len(measures)} measures) peak RSS "
                f"{aware.max_rss_mb:.0f}MB, CPU {aware.cpu:.2f}s; aware / the read alone "
                f"{aware.wall / rep['read']:.1f}"
            ),
            extra={"report": rep, "cpu": [aware.cpu, floor.cpu]},
        ),
        Result(
            ds.name,
            "  floor: tiecore eval oblivious / pyarrow.csv read",
            ours.wall,
            floor.wall,
            note=f"oblivious peak RSS {ours.max_rss_mb:.0f}MB, CPU {ours.cpu:.2f}s",
        ),
    ]


def bench_track(ds: Dataset, peer_repeat: int) -> list[Result]:
    """A track of many real-sized runs: ``tiecore eval`` vs ir_measures and plain
    pytrec_eval, each a process reading every run file, taking turns.

    The 4 measures of TREC-COVID (:data:`TRACK_MEASURES`); the oblivious run (once,
    after) gives the values checked against both peers'.
    """
    measures = list(TRACK_MEASURES)
    files = [str(ds.qrels), *map(str, ds.runs)]
    trec_names = ",".join(PYTREC_NAMES[m] for m in measures)
    commands = {
        "aware": tiecore_cmd(ds, measures, "aware"),
        "ir_measures": child_cmd("ir_measures", ",".join(measures), *files),
        "pytrec_eval": child_cmd("pytrec_eval", trec_names, *files),
    }
    found = best_children(commands, peer_repeat)
    aware, irm, pte = found["aware"], found["ir_measures"], found["pytrec_eval"]
    ours = best_child(tiecore_cmd(ds, measures, "oblivious"), 1)
    values = tiecore_values(ours)
    irm_rep, pte_rep = irm.report(), pte.report()
    diffs = {
        "pytrec_eval": compare_values(values, pte_rep["values"], PYTREC_NAMES.__getitem__),
        "ir_measures": compare_values(values, irm_rep["values"], ir_measures_name),
    }
    worst = max((d for peer in diffs.values() for d in peer.values()), default=float("nan"))
    agree = (
        f"max |mean oblivious - pytrec_eval| {_fmt_diffs(diffs['pytrec_eval'])}; "
        f"vs ir_measures max {max(diffs['ir_measures'].values(), default=float('nan')):.2g}"
        + (" -- VALUES DIFFER" if not worst <= 1e-9 else "")
    )
    return [
        Result(
            ds.name,
            "track: tiecore eval aware / ir_measures (e2e)",
            aware.wall,
            irm.wall,
            "<= 0.2",
            note=(
                f"ir_measures: import {irm_rep['import']:.2f}s, evaluator (qrels) "
                f"{irm_rep['qrels']:.2f}s, runs {irm_rep['eval']:.2f}s; tiecore oblivious "
                f"{ours.wall:.2f}s"
            ),
            extra={"diffs": diffs, "report": irm_rep},
        ),
        Result(
            ds.name,
            "track: tiecore eval aware / pytrec_eval (e2e)",
            aware.wall,
            pte.wall,
            "<= 0.3",
            note=(
                f"pytrec_eval: import {pte_rep['import']:.2f}s, parse_qrel + evaluator "
                f"{pte_rep['qrels']:.2f}s, parse_run + evaluate {pte_rep['eval']:.2f}s; {agree}"
            ),
            extra={"report": pte_rep},
        ),
        Result(
            ds.name,
            "track: peak RSS tiecore aware / ir_measures",
            aware.max_rss_mb,
            irm.max_rss_mb,
            "<= 2",
            unit="MB",
            note=(
                f"pytrec_eval {pte.max_rss_mb:.0f}MB, tiecore oblivious "
                f"{ours.max_rss_mb:.0f}MB; the largest run file "
                f"{max(p.stat().st_size for p in ds.runs) / 2**20:.1f}MB"
            ),
        ),
        Result(ds.name, "track: CPU aware / ir_measures", aware.cpu, irm.cpu, unit="s cpu"),
        Result(ds.name, "track: CPU aware / pytrec_eval", aware.cpu, pte.cpu, unit="s cpu"),
    ]


# ----------------------------------------------------------------------------- children


def _rss_mb(key: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def child_parse(kind: str, sep: str, repeat: int, files: list[str]) -> dict:
    """Time one reader over ``files`` (best of ``repeat``); peak RSS growth of one read."""
    import gzip

    import pandas as pd
    import pyarrow as pa

    import tiecore

    names = ["qid", "q0", "docno", "rank", "score", "tag"]

    def read(path):
        if kind == "tiecore":
            return tiecore.read_run(path)
        if kind == "pandas":
            return pd.read_csv(
                path,
                engine="pyarrow",
                sep=sep,
                header=None,
                names=names,
                dtype={"qid": "str", "docno": "str", "score": "float64"},
            )
        return pyarrow_columns(path, sep)

    def size(obj) -> int:
        if isinstance(obj, pa.Table):
            return obj.nbytes
        return int(obj.memory_usage(deep=True, index=False).sum())

    with tempfile.TemporaryDirectory() as tiny_dir:  # warm up: lazy imports, thread pools
        tiny = Path(tiny_dir) / "tiny.trec"
        opener = gzip.open if files[0].endswith(".gz") else open
        with opener(files[0], "rt") as handle:
            tiny.write_text("".join(line for _, line in zip(range(50), handle, strict=False)))
        read(str(tiny))
    gc.collect()
    before = _rss_mb("VmRSS")
    _reset_peak()
    loaded = [read(f) for f in files]
    peak = _rss_mb("VmHWM") - before
    column = sum(size(x) for x in loaded) / 2**20
    rows = sum(len(x) for x in loaded)
    del loaded
    t, times = best_of(lambda: [read(f) for f in files], repeat)
    return {"time": t, "times": times, "peak_mb": peak, "column_mb": column, "rows": rows}


def child_ir_measures(names: list[str], qrels: str, runs: list[str]) -> dict:
    """ir_measures used at its best: ``evaluator(measures, qrels)`` built once (the qrels
    read and indexed once), then ``calc_aggregate`` per run, all through pytrec_eval."""
    t0 = time.perf_counter()
    import ir_measures

    t1 = time.perf_counter()
    measures = [ir_measures.parse_measure(n) for n in names]
    evaluator = ir_measures.evaluator(measures, ir_measures.read_trec_qrels(qrels))
    t2 = time.perf_counter()
    values = {}
    for path in runs:
        result = evaluator.calc_aggregate(ir_measures.read_trec_run(path))
        values[path] = {str(m): float(v) for m, v in result.items()}
    t3 = time.perf_counter()
    providers = {}
    for m in measures:
        chosen = next(p for p in ir_measures.DefaultPipeline.providers if p.supports(m))
        providers.setdefault(chosen.NAME, []).append(str(m))
    if set(providers) != {"pytrec_eval"}:
        raise SystemExit(f"not all through pytrec_eval: {providers}")
    return {
        "import": t1 - t0,
        "qrels": t2 - t1,
        "eval": t3 - t2,
        "values": values,
        "providers": {k: ",".join(v) for k, v in providers.items()},
    }


def child_pytrec_eval(names: list[str], qrels: str, runs: list[str]) -> dict:
    """Plain pytrec_eval as its README shows it: ``parse_qrel`` and one
    ``RelevanceEvaluator`` built once, then ``parse_run`` + ``evaluate`` per run file;
    each measure's mean over the run's queries by ``compute_aggregated_measure``."""
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()
    with open(qrels) as handle:
        evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(handle), set(names))
    t2 = time.perf_counter()
    values = {}
    for path in runs:
        with open(path) as handle:
            per_query = evaluator.evaluate(pytrec_eval.parse_run(handle))
        values[path] = {
            n: pytrec_eval.compute_aggregated_measure(n, [q[n] for q in per_query.values()])
            for n in names
        }
    t3 = time.perf_counter()
    return {"import": t1 - t0, "qrels": t2 - t1, "eval": t3 - t2, "values": values}


def pyarrow_columns(path: str, sep: str):
    """A run file's qid, docno and score read by ``pyarrow.csv`` alone, typed: the peer
    of ``read_run`` and the parse floor (imports pyarrow only, for the floor's child)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=["qid", "q0", "docno", "rank", "score", "tag"]),
        parse_options=pacsv.ParseOptions(delimiter=sep),
        convert_options=pacsv.ConvertOptions(
            column_types={"qid": pa.string(), "docno": pa.string(), "score": pa.float64()},
            include_columns=["qid", "docno", "score"],
        ),
    )


def child_floor(sep: str, runs: list[str]) -> dict:
    """The parse floor: pyarrow.csv reads each run's qid, docno and score, typed.

    Imports pyarrow and pyarrow.csv only (``numpy`` says whether pyarrow pulled it in)."""
    t0 = time.perf_counter()
    import pyarrow.csv  # noqa: F401  (its import timed apart from the reads)

    t1 = time.perf_counter()
    rows = 0
    for path in runs:
        table = pyarrow_columns(path, sep)
        rows += table.num_rows
        del table
    t2 = time.perf_counter()
    return {"import": t1 - t0, "read": t2 - t1, "rows": rows, "numpy": "numpy" in sys.modules}


def child_ranx(names: list[str], qrels: str, runs: list[str]) -> dict:
    """ranx Qrels/Run.from_file + evaluate, twice in one process (cold, then warm JIT)."""
    t0 = time.perf_counter()
    import ranx

    report: dict = {"import": time.perf_counter() - t0}
    for attempt in (1, 2):
        start = time.perf_counter()
        judged = ranx.Qrels.from_file(qrels)
        loaded = [ranx.Run.from_file(p, kind="gz" if p.endswith(".gz") else "trec") for p in runs]
        middle = time.perf_counter()
        values = {}
        for path, run in zip(runs, loaded, strict=True):
            result = ranx.evaluate(judged, run, names, make_comparable=True)
            values[path] = {k: float(v) for k, v in result.items()}
        end = time.perf_counter()
        report |= {
            f"load{attempt}": middle - start,
            f"eval{attempt}": end - middle,
            f"pass{attempt}": end - start,
        }
        del judged, loaded, result
    report["values"] = values
    return report


def child_eager(names: list[str], qrels: str, runs: list[str]) -> dict:
    """Every run loaded first (read_runs), then evaluated: what streaming avoids."""
    import tiecore

    loaded = tiecore.read_runs(runs)
    tiecore.evaluate(loaded, tiecore.read_qrels(qrels), names)
    return {}


def _worker_peak_mb() -> float:
    return _rss_mb("VmHWM")


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all its threads)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _pin(cores: list[int]) -> list[int]:
    """On a worker: every thread of the process (and so the threads it starts later)
    on ``cores`` only; returns the process's cores."""
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):  # a thread that has just ended
            os.sched_setaffinity(int(tid), cores)
    return sorted(os.sched_getaffinity(0))


def child_dask(names: list[str], repeat: int, qrels: str, runs: list[str]) -> dict:
    """Local loop, ``local:1`` and ``local:2`` on the same files: warmed up, interleaved,
    best of each; the clusters once free to use every core, once with each worker
    pinned to a core of its own (1 worker on core 0; 2 workers on cores 0 and 1)."""
    import pandas as pd
    from distributed import Client

    import tiecore
    from tiecore.distributed import local_cluster

    judged = tiecore.read_qrels(qrels)
    load = os.getloadavg()[0]
    everywhere = sorted(os.sched_getaffinity(0))
    start = time.perf_counter()
    with (
        local_cluster(2) as cluster,
        Client(cluster) as client,
        local_cluster(1) as single,
        Client(single) as one,
    ):
        started = time.perf_counter() - start
        expected = tiecore.evaluate(runs, judged, names)  # warm-ups: imports, first calls
        first = tiecore.evaluate(runs, judged, names, client=client)
        alone = tiecore.evaluate(runs, judged, names, client=one)
        workers = sorted(client.scheduler_info()["workers"])

        def pin(pinned: bool) -> None:
            for core, worker in enumerate(workers):
                cores = [everywhere[core % len(everywhere)]] if pinned else everywhere
                client.run(_pin, cores, workers=[worker])
            one.run(_pin, everywhere[:1] if pinned else everywhere)

        keys = ("local", "dask", "one", "dask_pinned", "one_pinned")
        times: dict[str, list[float]] = {key: [] for key in keys}
        cpus: dict[str, list[float]] = {key: [] for key in keys}
        for _ in range(max(repeat, 1)):
            for key in keys:
                on = {"local": None, "dask": client, "one": one}.get(key.partition("_")[0])
                pin(key.endswith("_pinned"))
                gc.collect()
                workers_cpu = sum(on.run(_cpu_seconds).values()) if on is not None else 0.0
                cpu, begin = _cpu_seconds(), time.perf_counter()
                tiecore.evaluate(runs, judged, names, client=on)
                times[key].append(time.perf_counter() - begin)
                spent = _cpu_seconds() - cpu
                if on is not None:
                    spent += sum(on.run(_cpu_seconds).values()) - workers_cpu
                cpus[key].append(spent)
        pin(False)
        stream = _task_stream(client, lambda: tiecore.evaluate(runs, judged, names, client=client))
    pd.testing.assert_frame_equal(first, expected, check_exact=True)
    pd.testing.assert_frame_equal(alone, expected, check_exact=True)
    report = {key: min(times[key]) for key in keys}
    report["stream"] = stream
    report |= {f"{key}_all": times[key] for key in keys}
    report |= {f"{key}_cpu": min(cpus[key]) for key in keys}
    report |= {
        "cores": len(everywhere),
        "load": [load, os.getloadavg()[0]],
        "start": started,
        "equal": True,
    }
    return report


def _task_stream(client, call) -> dict:
    """Where the wall time of ``call()`` on ``client`` goes, from dask's task stream: the
    tasks, the share of worker time idle, the wait before the first task starts (the
    client's scatter and submit) and after the last one ends (merging, tidying)."""
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        begin, start = time.time(), time.perf_counter()
        call()
        wall = time.perf_counter() - start
    spans = [
        (s["start"] - begin, s["stop"] - begin)
        for task in stream.data
        for s in task["startstops"]
        if s["action"] == "compute"
    ]
    busy = sum(stop - start for start, stop in spans)
    workers = len(client.scheduler_info()["workers"])
    return {
        "wall": wall,
        "tasks": len(spans),
        "idle": 1 - busy / (workers * wall),
        "first": min(start for start, _ in spans),
        "after": wall - max(stop for _, stop in spans),
    }


def child_dask_memory(
    names: list[str], limit_mb: int, split_rows: int, qrels: str, runs: list[str]
) -> dict:
    """The runs written as Parquet, evaluated on 2 workers of ``limit_mb`` each."""
    import pandas as pd
    from distributed import Client, LocalCluster

    import tiecore
    from tiecore.distributed import read_parquet_runs, write_parquet_runs
    from tiecore.evaluation import parallel as _parallel

    judged = tiecore.read_qrels(qrels)
    with tempfile.TemporaryDirectory() as folder:
        loaded = 0.0
        rows = 0
        for path in runs:  # one at a time: the collection is never whole in this process
            run = tiecore.read_run(path)
            loaded += run.memory_usage(deep=True, index=False).sum() / 2**20
            rows += len(run)
            write_parquet_runs([run], folder, row_group_rows=split_rows)
            del run
        stored = read_parquet_runs(folder)
        _parallel.SPLIT_ROWS = split_rows
        start = time.perf_counter()
        local = tiecore.evaluate(stored, judged, names)
        t_local = time.perf_counter() - start
        failures = []
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                memory_limit=f"{limit_mb}MiB",
                dashboard_address=":0",
            ) as cluster,
            Client(cluster) as client,
        ):
            start = time.perf_counter()
            try:
                remote = tiecore.evaluate(stored, judged, names, client=client)
            except Exception as error:  # KilledWorker and the like: the figure to report
                failures.append(f"{type(error).__name__}: {error}")
                remote = None
            t_dask = time.perf_counter() - start
            peaks = list(client.run(_worker_peak_mb).values())
        partitions = sum(len(r.partitions(split_rows)) for r in stored.values())
    equal = remote is not None
    if equal:
        try:
            pd.testing.assert_frame_equal(remote, local, check_exact=True)
        except AssertionError:
            equal = False
    return {
        "rows": rows,
        "loaded_mb": loaded,
        "limit_mb": limit_mb,
        "partitions": partitions,
        "worker_peaks_mb": peaks,
        "failures": failures or "none",
        "equal": equal,
        "local": t_local,
        "dask": t_dask,
    }


def run_as_child(argv: list[str]) -> int:
    """``--child KIND ARGS``: run one measured job, print its JSON report and its peak RSS.

    ``cli`` runs ``tiecore.cli.main(ARGS)`` exactly as ``python -m tiecore ARGS`` does.
    """
    import atexit

    atexit.register(lambda: print(f"{HWM_MARK} {_rss_mb('VmHWM'):.1f}", file=sys.stderr))
    kind, args = argv[0], argv[1:]
    if kind == "cli":
        from tiecore.cli import main as tiecore_main

        return tiecore_main(args)
    if kind == "dask_forced":  # tiecore eval ... --dask local:N, the cluster always started
        import tiecore.distributed
        from tiecore.cli import main as tiecore_main

        tiecore.distributed.ROW_SECONDS = 1.0
        return tiecore_main(args)
    warnings.simplefilter("ignore")
    if kind == "parse":
        report = child_parse(args[0], args[1], int(args[2]), args[3:])
    elif kind == "ir_measures":
        report = child_ir_measures(args[0].split(","), args[1], args[2:])
    elif kind == "ranx":
        report = child_ranx(args[0].split(","), args[1], args[2:])
    elif kind == "pytrec_eval":
        report = child_pytrec_eval(args[0].split(","), args[1], args[2:])
    elif kind == "floor":
        report = child_floor(args[0], args[1:])
    elif kind == "eager":
        report = child_eager(args[0].split(","), args[1], args[2:])
    elif kind == "dask":
        report = child_dask(args[0].split(","), int(args[1]), args[2], args[3:])
    elif kind == "dask_memory":
        report = child_dask_memory(
            args[0].split(","), int(args[1]), int(args[2]), args[3], args[4:]
        )
    elif kind == "import":
        start = time.perf_counter()
        for module in args:
            __import__(module)
        report = {"import": time.perf_counter() - start}
    else:
        raise SystemExit(f"unknown child {kind}")
    print(json.dumps(report))
    return 0


# ----------------------------------------------------------------------------- profile


def profile_hot_spots(ds: Dataset, runs, qrels, measures, top: int) -> dict[str, str]:
    """cProfile of evaluate aware, evaluate oblivious and ``tiecore eval`` in-process."""
    import contextlib
    import cProfile
    import io
    import pstats

    import tiecore
    from tiecore import cli

    jobs = {
        "evaluate(ties='aware')": lambda: tiecore.evaluate(runs, qrels, measures, ties="aware"),
        "evaluate(ties='oblivious')": lambda: tiecore.evaluate(
            runs, qrels, measures, ties="oblivious"
        ),
        "read_run (every run file of the dataset)": lambda: [
            tiecore.read_run(str(p)) for p in ds.runs
        ],
        "tiecore eval --ties oblivious (in-process cli.main)": lambda: cli.main(
            tiecore_cmd(ds, measures, "oblivious")[4:]
        ),
    }
    texts = {}
    for title, job in jobs.items():
        prof = cProfile.Profile()
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            prof.runcall(job)
            took = time.perf_counter() - start
        entries = pstats.Stats(prof).stats  # (file, line, func) -> (cc, nc, tt, ct, callers)
        rows = [(tt, ct, nc, _where(key)) for key, (_, nc, tt, ct, _) in entries.items()]
        ours = [r for r in rows if "tiecore/" in r[3]]
        text = "\n".join(
            [
                f"{took:.3f}s under the profiler; own time / cumulative / calls:",
                "  top functions by own time:",
                *(f"  {tt:8.3f} {ct:8.3f} {nc:7d}  {w}" for tt, ct, nc, w in _top(rows, 0, top)),
                "  tiecore functions by cumulative time:",
                *(f"  {tt:8.3f} {ct:8.3f} {nc:7d}  {w}" for tt, ct, nc, w in _top(ours, 1, top)),
            ]
        )
        texts[title] = text
        print(f"\n=== profile [{ds.name}] {title} ===")
        print(text, flush=True)
    return texts


def _top(rows: list[tuple], key: int, top: int) -> list[tuple]:
    return sorted(rows, key=lambda r: r[key], reverse=True)[:top]


def _where(key: tuple[str, int, str]) -> str:
    """``tiecore/engine/ranking.py:98(build)``, ``pyarrow/compute.py:257(wrapper)``, ``~(sort)``."""
    path, line, func = key
    for marker in ("site-packages/", "/work/main/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{line}({func})" if path != "~" else f"{func}"


# -------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke test")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    parser.add_argument(
        "--repeat", type=int, help="repeats of in-process timings (5, 3 above 2M rows; quick 2)"
    )
    parser.add_argument("--peer-repeat", type=int, help="repeats of each subprocess (2; quick 1)")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {','.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--datasets", help="comma-separated dataset names to run (default: all of the mode)"
    )
    parser.add_argument(
        "--profile",
        nargs="?",
        const="",
        metavar="DATASETS",
        help="cProfile tiecore on these datasets (comma-separated; default the first) and "
        "time its imports",
    )
    parser.add_argument(
        "--ranx",
        action=argparse.BooleanOptionalAction,
        help="time ranx (default: on, off with --quick: its cold start alone takes a minute)",
    )
    parser.add_argument(
        "--no-fresh-jit",
        action="store_true",
        help="skip ranx with an empty numba cache (one extra minute or two of JIT compilation)",
    )
    parser.add_argument("--keep", metavar="DIR", help="write generated data here and keep it")
    return parser.parse_args(argv)


#: Every section, in the order they run for each dataset.
SECTIONS = (
    "startup", "arrays", "modes", "sampled", "parse", "e2e", "stream", "spread", "compare",
    "dask", "track",
)  # fmt: skip


#: The sections that run on each data set (the others have data of their own).
PER_DATASET = {"modes", "sampled", "parse", "e2e", "stream", "spread", "compare", "dask"}


def make_datasets(args: argparse.Namespace, directory: Path, sections: set[str]) -> list[Dataset]:
    """The data sets of the mode (generated into ``directory``), those of ``--datasets``
    only; none where no section runs on them."""
    if not sections & PER_DATASET and args.profile is None:
        return []
    sizes = [(50, 1000)] if args.quick else [(1000, 1000), (7000, 1000)]
    collection = (12, 20, 200) if args.quick else (120, 50, 500)
    wanted = set(args.datasets.split(",")) if args.datasets else None
    datasets = []
    for queries, docs in sizes:
        if wanted is not None and f"tie{queries * docs // 1000}k" not in wanted:
            continue
        start = time.perf_counter()
        ds = generate(directory, queries, docs)
        print(f"generated {ds.name} ({ds.note}) in {time.perf_counter() - start:.1f}s")
        datasets.append(ds)
    rob = robust(QUICK_ROBUST if args.quick else None)
    if rob is None:
        print(f"{ROBUST} not found: robust03 skipped")
    else:
        datasets.append(rob)
    if wanted is None or f"coll{collection[0]}" in wanted:
        start = time.perf_counter()
        coll = generate_collection(directory, *collection)
        print(f"generated {coll.name} ({coll.note}) in {time.perf_counter() - start:.1f}s")
        datasets.append(coll)
    if wanted is not None:
        datasets = [d for d in datasets if d.name in wanted]
    return datasets


def bench_dataset(ds: Dataset, args, sections, measures, repeat, peer_repeat, *, last: bool):
    """Every per-dataset section on ``ds``: its results and its cProfile (or ``None``)."""
    print(f"\n--- {ds.name} ---", flush=True)
    runs, qrels = load(ds)
    print(f"{ds.rows:,} rows in {len(runs)} run(s), {len(qrels):,} qrels", flush=True)
    with_ranx = args.ranx if args.ranx is not None else not args.quick
    obliv = profile = None
    section: list[Result] = []
    reps = repeat if args.repeat or ds.rows <= 2_000_000 else 3
    many = len(ds.runs) > 1
    if "modes" in sections or "sampled" in sections:
        found, obliv = bench_modes(ds, runs, qrels, measures, reps)
        section += found if "modes" in sections else []
    if "sampled" in sections and (args.quick or ds.rows <= 2_000_000):
        section += bench_sampled(ds, runs, qrels, measures, reps, obliv)
    if "spread" in sections and (args.quick or ds.rows <= 3_000_000):
        section += bench_spread(ds, measures, runs, qrels, peer_repeat, reps)
    if args.profile is not None and ds.name in (args.profile or ds.name).split(","):
        profile = profile_hot_spots(ds, runs, qrels, measures, 18)
    del runs, qrels
    gc.collect()
    if "parse" in sections and len(ds.runs) <= 20:
        section += bench_parse(ds, reps)
    if "parse" in sections and ds.name.startswith("tie"):
        section += bench_floor(ds, measures, peer_repeat)
    if "e2e" in sections:
        fresh_jit = with_ranx and not args.no_fresh_jit and last
        section += bench_end_to_end(ds, measures, peer_repeat, ranx=with_ranx, fresh_jit=fresh_jit)
    if "stream" in sections and many:
        section += bench_stream(ds, measures)
    if "compare" in sections and many:
        section += bench_compare(ds, peer_repeat)
    if "dask" in sections and ds.name.startswith(("coll", "robust03")):
        section += bench_dask(ds, measures, reps)
    print_progress(section)
    return section, profile


def bench_tracks(args: argparse.Namespace, directory: Path, peer_repeat: int) -> list[Result]:
    """Section ``track``: the TREC-COVID-like tracks (:data:`TRACKS`) generated and timed."""
    wanted = set(args.datasets.split(",")) if args.datasets else None
    results: list[Result] = []
    for name, (runs, queries, docs, seed) in (QUICK_TRACKS if args.quick else TRACKS).items():
        if wanted is not None and name not in wanted:
            continue
        start = time.perf_counter()
        ds = generate_collection(directory / name, runs, queries, docs, seed)
        ds.name, ds.note = name, f"like TREC-COVID round {name[-1]}: {ds.note}"
        took = time.perf_counter() - start
        print(f"\n--- {name}: {ds.rows:,} rows ({ds.note}), generated in {took:.1f}s ---")
        section = bench_track(ds, peer_repeat)
        print_progress(section)
        results += section
        if args.keep is None:  # hundreds of MB each
            shutil.rmtree(directory / name, ignore_errors=True)
    return results


def commit() -> str:
    """The repository's short commit hash (``+`` if the work tree differs), or ``?``."""
    try:
        head = subprocess.run(
            ["git", "log", "-1", "--format=%h"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=REPO).returncode
    except OSError:
        return "?"
    return (head or "?") + ("+" if dirty else "")


def write_json(path: str, args, measures, datasets, results, profiles) -> None:
    """Every figure, with its notes and extras, as JSON."""
    payload = {
        "mode": "quick" if args.quick else "full",
        "commit": commit(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "measures": measures,
        "datasets": {
            d.name: {"rows": d.rows, "runs": len(d.runs), "note": d.note} for d in datasets
        },
        "results": [
            {
                "dataset": r.dataset,
                "what": r.what.strip(),
                "tiecore": r.tiecore,
                "peer": r.peer,
                "unit": r.unit.strip(),
                "ratio": r.ratio,
                "goal": r.goal,
                "verdict": r.verdict,
                "note": r.note,
                "extra": r.extra,
            }
            for r in results
        ],
        "profiles": profiles,
    }
    Path(path).write_text(json.dumps(payload, indent=1, default=str))
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        return run_as_child(sys.argv[2:])
    args = parse_args(argv)
    sys.path.insert(0, str(REPO))
    warnings.simplefilter("ignore")
    import tiecore

    measures = list(RACE_MEASURES)
    repeat = args.repeat or (2 if args.quick else 5)
    peer_repeat = args.peer_repeat or (1 if args.quick else 2)
    sections = set(args.sections.split(","))
    unknown = sections - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    keep = Path(args.keep) if args.keep else None
    tmp = tempfile.TemporaryDirectory(prefix="tiecore-bench-") if keep is None else None
    directory = keep or Path(tmp.name)
    directory.mkdir(parents=True, exist_ok=True)

    print(
        f"tiecore {tiecore.__version__} ({commit()}) | python {platform.python_version()} | "
        f"{os.cpu_count()} cpus | load average {os.getloadavg()[0]:.1f} | "
        f"{'quick' if args.quick else 'full'} mode | repeats {repeat} in-process, "
        f"{peer_repeat} per subprocess (best taken)"
    )
    print(f"measures: {', '.join(measures)}")
    datasets = make_datasets(args, directory, sections)
    results: list[Result] = []
    profiles: dict[str, dict[str, str]] = {}
    if "startup" in sections:
        results += bench_imports(peer_repeat)
        results += bench_startup(5 if args.quick else 15)
        if args.profile is not None:
            profiles["imports"] = {"python -X importtime -c 'import tiecore.cli'": import_profile()}
        print_progress(results)
    if "arrays" in sections:
        section = bench_arrays(repeat, peer_repeat, args.quick)
        print_progress(section)
        results += section
    if args.profile == "" and datasets:
        args.profile = datasets[0].name
    for ds in datasets:
        section, profile = bench_dataset(
            ds, args, sections, measures, repeat, peer_repeat, last=ds is datasets[-1]
        )
        results += section
        if profile is not None:
            profiles[ds.name] = profile
    wanted = set(args.datasets.split(",")) if args.datasets else None
    if "dask" in sections and (wanted is None or "dask" in wanted):
        queries = 200 if args.quick else 12_000
        print(f"\n--- dask memory: tie{queries}k ---", flush=True)
        (directory / "dask").mkdir(parents=True, exist_ok=True)
        big = generate(directory / "dask", queries, 1000, seed=3)
        section = bench_dask_memory(big, measures, 400, 20_000 if args.quick else 100_000)
        print_progress(section)
        results += section
    if "track" in sections:
        print(f"\ntrack measures: {', '.join(TRACK_MEASURES)}")
        results += bench_tracks(args, directory, peer_repeat)

    print()
    print_table(results)
    if args.json:
        write_json(args.json, args, measures, datasets, results, profiles)
    if tmp is not None:
        tmp.cleanup()
    return 0


def print_progress(section: list[Result]) -> None:
    for r in section:
        print(
            f"  {r.what}: {r.tiecore} vs {r.peer} -> "
            f"{'-' if r.ratio is None else f'{r.ratio:.3f}'} ({r.verdict})",
            flush=True,
        )


if __name__ == "__main__":
    raise SystemExit(main())

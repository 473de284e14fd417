"""Section ``modes`` and ``sampled``: tie-aware vs tie-oblivious in-process, parsing
excluded, and the parts of ``evaluate``; the cost of one sample; cProfile of the hot spots
(``--profile``)."""

from __future__ import annotations

import sys
import time
import warnings

from benchmarks.common import REPO, Result, best_of, tiecore_cmd
from benchmarks.datasets import Dataset


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
                kernels.values(parsed, profile, ranking, judg)

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
    ``tiecore.evaluation.core.Rows``, ``_Rows`` before it had a public name)."""
    module = sys.modules["tiecore.evaluation.core"]
    try:
        rows = getattr(module, "Rows", None) or module._Rows
        from tiecore.evaluation.evaluator import Evaluator

        evaluator = Evaluator(judg, parsed, "oblivious")
        found = {name: evaluator.values(r) for name, r in rankings.items()}

        def tidy():
            rows.frame(
                [
                    rows.of(name, evaluator.summary(r.counts > 0, found[name]), False)
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
    for marker in ("site-packages/", f"{REPO}/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{line}({func})" if path != "~" else f"{func}"

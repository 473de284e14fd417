"""tiecore.report (the three-modes table, LaTeX / Markdown / CSV, closest pairs) and
tiecore.explain.builder (a scoring function built from LETOR features, quantised).

Values are checked against independent computations: tiecore.evaluate and
evaluate_spread called directly, scipy's paired t-test, numpy for the built
scores, and pandas reading the CSV back.
"""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import tiecore
from tiecore import report
from tiecore.compare import compare
from tiecore.explain import builder
from tiecore.spread import evaluate_spread

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
MEASURES = ["P@5", "AP", "RR"]


@pytest.fixture(scope="module")
def data():
    """Four tie-heavy runs on six queries (one query without relevant docs)."""
    rng = np.random.default_rng(11)
    qids = [str(q) for q in range(1, 7)]
    docs = [f"D{i:02d}" for i in range(15)]
    qrels = pd.DataFrame(
        [(q, d, 0 if q == "6" else int(rng.choice([0, 0, 1, 2]))) for q in qids for d in docs[:12]],
        columns=["qid", "docno", "level"],
    )
    runs = {
        name: pd.DataFrame(
            [(q, d, float(rng.integers(values))) for q in qids for d in docs],
            columns=["qid", "docno", "score"],
        )
        for name, values in (("a", 2), ("b", 3), ("c", 4), ("d", 50))
    }
    return runs, qrels


def test_modes_table_holds_each_mode_and_the_exact_tie_sd(data):
    runs, qrels = data
    table = report.modes_table(runs, qrels, MEASURES, tiebreak="docno_asc", samples=30, seed=4)
    assert list(table.columns) == list(report.COLUMNS)
    table = table.set_index(["run", "measure"])
    keys = ["run", "measure"]
    obl = tiecore.evaluate(runs, qrels, MEASURES, ties="oblivious", tiebreak="docno_asc")
    aware = tiecore.evaluate(runs, qrels, MEASURES)
    sampled = tiecore.evaluate(runs, qrels, MEASURES, ties="sampled", samples=30, seed=4)
    spread = evaluate_spread(runs, qrels, MEASURES).set_index(keys)
    assert np.array_equal(table.loc[obl.set_index(keys).index, "oblivious"], obl["value"])
    assert np.allclose(table.loc[aware.set_index(keys).index, "aware"], aware["value"], atol=1e-12)
    assert np.array_equal(table.loc[sampled.set_index(keys).index, "sampled"], sampled["value"])
    assert np.array_equal(table.loc[sampled.set_index(keys).index, "sampled_sd"], sampled["std"])
    sd = np.sqrt(spread["var"])
    assert np.allclose(table.loc[spread.index, "tie_sd"], sd)
    delta = table["oblivious"] - table["aware"]
    expected_z = np.where(
        table["tie_sd"] > 0, delta / table["tie_sd"].where(table["tie_sd"] > 0), 0
    )
    assert np.allclose(table["z"], expected_z)
    assert np.allclose(table["delta"], delta.where(delta.abs() >= 1e-12, 0.0), atol=0)
    # visible: the two values as a paper prints them (Python's format) differ
    shows = [
        f"{o:.4f}" != f"{a:.4f}" for o, a in zip(table["oblivious"], table["aware"], strict=True)
    ]
    assert (table["visible"] == (np.array(shows) & (delta.abs() >= 1e-12))).all()
    assert (table["flagged"] == (table["visible"] & (np.abs(expected_z) > 2))).all()
    inside = table["max"] > table["min"]
    position = (table["oblivious"] - table["min"]) / (table["max"] - table["min"])
    assert np.allclose(table.loc[inside, "position"], position[inside])
    assert table.loc[~inside, "position"].isna().all()
    assert (
        (table["min"] <= table["oblivious"] + 1e-12) & (table["oblivious"] <= table["max"] + 1e-12)
    ).all()
    without = report.modes_table(runs, qrels, MEASURES)
    assert without["sampled"].isna().all()


def _holm(p: dict) -> dict:
    """Holm's step-down correction, written out: the i-th smallest of m p-values times
    m - i + 1, made monotone, capped at 1."""
    ordered = sorted(p, key=p.get)
    out, running = {}, 0.0
    for i, key in enumerate(ordered):
        running = max(running, min(1.0, (len(p) - i) * p[key]))
        out[key] = running
    return out


def test_significance_marks_follow_a_holm_corrected_paired_t_test(data):
    """Every pair of runs by scipy's paired t-test, Holm over all pairs of the measure
    (written out above), the rows those with the best run; and the Rankings page's
    verdict (tiecore.compare, Holm by default) is the same."""
    runs, qrels = data
    per_query = tiecore.evaluate(runs, qrels, MEASURES, per_query=True)
    found = report.significance_vs_best(per_query, alpha=0.1).set_index(["run", "measure"])
    names = list(runs)
    for measure in MEASURES:
        wide = per_query[(per_query["measure"] == measure) & (per_query["qid"].notna())]
        wide = wide.pivot(index="qid", columns="run", values="value")
        best = wide.mean().idxmax()
        raw = {}
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if (wide[a] - wide[b]).std() > 1e-12:
                    raw[(a, b)] = stats.ttest_rel(wide[a], wide[b]).pvalue
        holm = _holm(raw)
        result = compare(runs, qrels, measure, samples=20, n_resamples=20, n_bootstrap=20)
        for run in runs:
            row = found.loc[(run, measure)]
            assert row["best"] == best
            key = (best, run) if names.index(best) < names.index(run) else (run, best)
            if run == best or key not in raw:
                assert np.isnan(row["p_value"]) and not row["significant"]
                continue
            assert row["p_value"] == pytest.approx(raw[key], rel=1e-12)
            assert row["p_value_adj"] == pytest.approx(holm[key], rel=1e-12)
            assert row["significant"] == (holm[key] < 0.1)
            rankings = result.pairs.loc[(best, run), "t_pvalue_adj"]
            assert row["p_value_adj"] == pytest.approx(rankings, rel=1e-9)
    plain = report.significance_vs_best(per_query, correction="none")
    assert plain["p_value_adj"].equals(plain["p_value"]) and plain.attrs["correction"] == "none"


def _tabular(latex: str) -> tuple[str, list[list[str]]]:
    """The column spec and the rows (cells split at ``&``) of the one tabular in ``latex``."""
    spec = re.search(r"\\begin\{tabular\}\{([lrc]+)\}", latex).group(1)
    inner = latex[latex.index("\\toprule") : latex.index("\\bottomrule")]
    rows = [line.removesuffix(" \\\\").split(" & ") for line in inner.splitlines()]
    return spec, [row for row in rows if row[0] not in ("\\toprule", "\\midrule")]


def _balanced(text: str) -> bool:
    """Unescaped braces pair up (escaped ones, \\{ and \\}, are text)."""
    depth = 0
    for brace in re.sub(r"\\[{}]", "", text):
        depth += {"{": 1, "}": -1}.get(brace, 0)
        if depth < 0:
            return False
    return depth == 0


def test_latex_and_markdown_tables_show_one_column_per_measure_with_marks(data):
    runs, qrels = data
    table = report.modes_table(runs, qrels, MEASURES, samples=20)
    table.loc[0, "flagged"] = True  # a flag to print
    per_query = tiecore.evaluate(runs, qrels, MEASURES, per_query=True)
    significance = report.significance_vs_best(per_query, alpha=0.5, correction="none")
    latex = report.to_latex(table, significance, alpha=0.5, provenance={"data set": "t_x"})
    assert latex.startswith("% data set: t_x\n% needs \\usepackage{booktabs} and ")
    assert "\\usepackage{graphicx}" in latex.splitlines()[1]  # the package \resizebox needs
    for command in ("\\toprule", "\\midrule", "\\bottomrule", "\\resizebox{\\columnwidth}{!}{"):
        assert command in latex
    assert _balanced(latex)
    spec, rows = _tabular(latex)
    assert spec == "l" + "r" * len(MEASURES)  # one column per measure: it fits a column
    assert rows[0] == ["System", *MEASURES]
    assert [row[0] for row in rows[1:]] == list(runs)
    assert all(len(row) == len(spec) for row in rows)
    first = table.iloc[0]
    cell = rows[1 + list(runs).index(first["run"])][1 + MEASURES.index(first["measure"])]
    assert cell.endswith("\\dag}") and f"{first['aware']:.4f} $\\pm$ {first['tie_sd']:.4f}" in cell
    stars = significance["significant"].sum()
    assert 0 < stars < len(significance)  # marks and no marks to print
    assert latex.count("\\textsuperscript{*") == stars
    assert latex.count("\\textbf{") == len(MEASURES)
    assert latex.count("\\dag}") == table["flagged"].sum()
    caption = latex[latex.index("\\caption{") :]
    assert "paired t-test vs the best system, uncorrected" in caption
    assert "p $<$ 0.5" in caption
    holm = report.to_latex(table, report.significance_vs_best(per_query))
    assert "paired t-test vs the best system, Holm-corrected over all pairs" in holm
    markdown = report.to_markdown(table, significance, alpha=0.5)
    lines = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert lines[0] == "| system | " + " | ".join(MEASURES) + " |"
    assert len(lines) == 1 + len(runs)
    assert markdown.count("†") == table["flagged"].sum() + 1  # the flags and the legend
    assert "uncorrected" in markdown and "p < 0.5" in markdown
    aware = table.set_index(["run", "measure"]).loc[("b", "AP")]
    assert f"{aware['aware']:.4f} ± {aware['tie_sd']:.4f}" in markdown
    renamed = table.replace({"run": {"a": "x_&_y"}})
    assert "\nx\\_\\&\\_y & " in report.to_latex(renamed)
    # a choice of measures, in the order asked, and no \resizebox when not asked
    chosen = report.to_latex(table, significance, measures=["RR", "P@5"], resize=False)
    spec, rows = _tabular(chosen)
    assert spec == "lrr" and rows[0] == ["System", "RR", "P@5"]
    assert "resizebox" not in chosen and "graphicx" not in chosen and _balanced(chosen)
    assert "| system | AP |" in report.to_markdown(table, measures="AP")
    with pytest.raises(tiecore.InputError, match=r"^measures: not in the table: nDCG"):
        report.to_latex(table, measures=["AP", "nDCG"])  # (no "line ['AP', 'nDCG']": mypy)
    unmarked = report.to_markdown(table)  # no significance given: no sentence about it
    assert "t-test" not in unmarked and "*" not in unmarked.replace("**", "")


def test_a_float32_tie_that_doubles_do_not_see_is_flagged():
    """trec_eval ties 1.00000001 and 1.0 (equal as float32) and puts d2 first (docno
    descending), so RR is 0.5; as doubles the scores differ, so every ordering of the
    tie-aware groups gives 1 with no tie sd: the shift is beyond every ordering, flagged."""
    qrels = pd.DataFrame({"qid": ["1"] * 3, "docno": ["d1", "d2", "d3"], "level": [1, 0, 2]})
    run = pd.DataFrame(
        {"qid": ["1"] * 3, "docno": ["d1", "d2", "d3"], "score": [1.00000001, 1.0, -5.0]}
    )
    table = report.modes_table({"rf": run}, qrels, "RR").iloc[0]
    assert (table["oblivious"], table["aware"], table["tie_sd"]) == (0.5, 1.0, 0.0)
    assert table["z"] == -math.inf and table["flagged"]
    assert table["visible"] and table["delta"] == -0.5
    assert "**1.0000 ± 0.0000**†" in report.to_markdown(
        report.modes_table({"rf": run}, qrels, "RR")
    )
    sentence = report.effect_sentence(table)
    assert "a shift of -0.5000" in sentence and "float32 ties" in sentence
    doubles = report.modes_table({"rf": run}, qrels, "RR", tiebreak="trec_eval_double")
    assert doubles.loc[0, "z"] == 0.0 and not doubles.loc[0, "flagged"]


def test_significance_over_different_query_sets_is_warned_of():
    """b lacks query 3, so its mean (and so which run is best) is over other queries than
    a's while the t-test pairs queries 1 and 2: a warning names b; none for equal sets."""
    import warnings

    rows = pd.DataFrame(
        {"run": ["a"] * 3 + ["b"] * 2, "qid": ["1", "2", "3", "1", "2"], "measure": "AP"}
    ).assign(value=[0.2, 0.3, 0.0, 0.5, 0.4])
    with pytest.warns(tiecore.TieCoreWarning, match=r"different queries \(b: 2 of 3\)") as w:
        marks = report.significance_vs_best(rows)
    assert w[0].filename == __file__
    assert marks["best"].tolist() == ["b", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report.significance_vs_best(rows[rows["qid"] != "3"])


def test_csv_has_provenance_and_no_float_noise():
    frame = pd.DataFrame({"run": ["x"], "value": [0.26799999999999996], "other": [1 / 3]})
    text = report.to_csv(frame, report.provenance(data_set="Robust03", seed=3))
    assert "0.268," in text and "0.333333333333" in text and "0.26799999" not in text
    back = pd.read_csv(io.StringIO(text))  # a plain read: the settings are columns
    assert back.columns.tolist() == ["run", "value", "other", "data_set", "seed", "tiecore_version"]
    assert back[["data_set", "seed"]].iloc[0].tolist() == ["Robust03", 3]
    assert back["tiecore_version"].iloc[0] == tiecore.__version__
    assert back["value"].iloc[0] == 0.268
    assert back["other"].iloc[0] == pytest.approx(1 / 3, rel=1e-11)


def test_closest_pairs_are_those_ties_could_decide(data):
    runs, qrels = data
    result = compare(runs, qrels, "P@5", samples=60, seed=1, n_resamples=50)
    found = report.closest_pairs(result.pairs)
    pairs = result.pairs.reset_index()
    expected = set()
    for row in pairs.itertuples():
        if row.mean_diff > 0 or (row.mean_diff == 0 and row.a < row.b):
            p = row.p_beats_sampled
            if row.tie_noise > 0 and (0.05 < p < 0.95 or abs(row.mean_diff) <= row.tie_noise):
                expected.add((row.a, row.b))
    assert set(zip(found["a"], found["b"], strict=True)) == expected
    distance = (found["p_beats"] - 0.5).abs().to_numpy()
    assert np.all(np.diff(distance) >= 0)
    assert report.closest_pairs(result.pairs.iloc[:0]).empty


def test_nearest_pairs_are_the_smallest_gaps_in_tie_noise(data):
    runs, qrels = data
    result = compare(runs, qrels, "P@5", samples=60, seed=1, n_resamples=50)
    found = report.nearest_pairs(result.pairs, count=4)
    rows = []  # one row per unordered pair, a the better; key: gap / noise, then gap
    for row in result.pairs.reset_index().itertuples():
        if row.mean_diff > 0 or (row.mean_diff == 0 and row.a < row.b):
            gap = abs(row.mean_diff)
            ratio = gap / row.tie_noise if row.tie_noise > 0 else math.inf
            rows.append(((ratio, gap, row.a, row.b), row))
    expected = [row for _, row in sorted(rows, key=lambda item: item[0])[:4]]
    assert list(zip(found["a"], found["b"], strict=True)) == [(r.a, r.b) for r in expected]
    for (_, got), row in zip(found.iterrows(), expected, strict=True):
        ratio = abs(row.mean_diff) / row.tie_noise if row.tie_noise > 0 else math.inf
        assert got["gap_in_tie_noise"] == ratio and got["p_beats"] == row.p_beats_sampled
    assert report.nearest_pairs(result.pairs.iloc[:0]).empty


def test_effect_sentence_names_both_values_and_the_shift_first():
    row = {"run": "MU03rob01", "measure": "P@10", "oblivious": 0.268, "aware": 0.263, "z": 2.5}
    assert report.effect_sentence(row) == (
        "MU03rob01 P@10: trec_eval 0.2680 vs tie-aware 0.2630, a shift of +0.0050 (+2.5 tie sd)"
    )
    tiny = {"run": "BITEM_stem", "measure": "nDCG", "oblivious": 0.389178, "aware": 0.3892,
            "delta": -2.2e-5, "z": -1.8}  # fmt: skip
    assert report.effect_sentence(tiny, "trec_eval") == (
        "BITEM_stem nDCG: trec_eval 0.3892 vs tie-aware 0.3892, a shift of -0.00002 "
        "(-1.8 tie sd; both print as 0.3892)"
    )
    flat = {"run": "x", "measure": "AP", "oblivious": 0.25, "aware": 0.25, "delta": 0.0, "z": 0}
    assert report.effect_sentence(flat, digits=2).endswith(
        "0.25 vs tie-aware 0.25, a shift of 0.00 (no shift: every tie-break gives this value)"
    )


# ----------------------------------------------------------------------------- builder


def test_combine_and_quantise_against_numpy(data):
    runs, _ = data
    weights = {"a": 2.0, "d": 0.5}
    built = builder.combine(runs, weights)
    expected = np.zeros(len(runs["a"]))
    for feature, weight in weights.items():
        for _qid, rows in runs[feature].groupby("qid"):
            x = rows["score"].to_numpy()
            if np.ptp(x) > 0:
                expected[rows.index] += weight * (x - x.min()) / np.ptp(x)
    assert np.allclose(built["score"], expected)
    assert built[["qid", "docno"]].equals(runs["a"][["qid", "docno"]])
    for levels in (1, 2, 3, 7, 40):
        coarse = builder.quantise(built["score"].to_numpy(), levels)
        assert len(np.unique(coarse)) <= levels
        order = np.argsort(built["score"].to_numpy(), kind="stable")
        assert np.all(np.diff(coarse[order]) >= 0)  # the order is kept
    with pytest.raises(ValueError, match="same rows"):
        builder.combine({"a": runs["a"], "b": runs["b"].iloc[::-1]}, {"a": 1, "b": 1})
    with pytest.raises(ValueError, match="at least one"):
        builder.combine(runs, {})


def test_sweep_values_are_tiecore_values_of_the_quantised_runs(data):
    runs, qrels = data
    weights = {"c": 1.0, "d": 1.0}
    levels = [None, 20, 5, 2]
    found = builder.sweep(runs, qrels, weights, levels, "AP", tiebreak="trec_eval")
    assert list(found.columns) == list(builder.COLUMNS)
    base = builder.combine(runs, weights)
    features_aware = tiecore.evaluate(runs, qrels, "AP").set_index("run")["value"]
    features_obl = tiecore.evaluate(runs, qrels, "AP", ties="oblivious").set_index("run")["value"]
    for row, count in zip(found.itertuples(), levels, strict=True):
        scores = base["score"].to_numpy()
        if count is not None:
            low, high = scores.min(), scores.max()
            scores = np.minimum(np.floor((scores - low) / (high - low) * count), count - 1)
        run = base.assign(score=scores)
        aware = tiecore.evaluate(run, qrels, "AP")["value"].iloc[0]
        obl = tiecore.evaluate(run, qrels, "AP", ties="oblivious")["value"].iloc[0]
        spread = evaluate_spread(run, qrels, "AP").iloc[0]
        sizes = run.groupby(["qid", "score"]).size()
        assert row.aware == pytest.approx(aware, abs=1e-12)
        assert row.oblivious == pytest.approx(obl, abs=1e-12)
        assert row.tie_sd == pytest.approx(np.sqrt(spread["var"]), abs=1e-12)
        assert (row.min, row.max) == pytest.approx((spread["min"], spread["max"]), abs=1e-12)
        assert row.share_tied_rows == pytest.approx(sizes[sizes > 1].sum() / len(run))
        assert row.largest_group == sizes.max()
        assert row.rank_aware == 1 + (features_aware > aware).sum()
        assert row.rank_oblivious == 1 + (features_obl > obl).sum()
    shares = found["share_tied_rows"].to_numpy()
    assert np.all(np.diff(shares[1:]) >= 0)  # fewer levels, more ties
    assert found["tie_sd"].iloc[-1] > 0


def test_quantise_rejects_zero_levels():
    with pytest.raises(ValueError, match="levels"):
        builder.quantise(np.array([1.0, 2.0]), 0)
    assert re.fullmatch(r"levels=\d+", builder._name(3))


# ----------------------------------------------------------------------------- command line


def test_the_report_command_prints_the_table_of_the_api(data, tmp_path, capsys):
    from tiecore import cli

    runs, qrels = data
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {lv}\n" for q, d, lv in qrels.itertuples(index=False))
    )
    paths = []
    for name, run in runs.items():
        path = tmp_path / f"{name}.run"
        path.write_text(
            "".join(f"{q} Q0 {d} 0 {s:g} {name}\n" for q, d, s in run.itertuples(index=False))
        )
        paths.append(str(path))
    args = [str(qrels_path), *paths, "-m", "P@5,AP", "--tiebreak", "docno_asc"]
    assert cli.main(["report", *args, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    shown = pd.read_csv(io.StringIO(out)).set_index(["run", "measure"])
    assert set(shown["tie_break"]) == {"docno_asc"}
    assert set(shown["tiecore_version"]) == {tiecore.__version__}
    expected = report.modes_table(runs, qrels, ["P@5", "AP"], tiebreak="docno_asc")
    expected = expected.set_index(["run", "measure"])
    assert np.allclose(shown.loc[expected.index, "aware"], expected["aware"], rtol=1e-11)
    assert np.allclose(shown.loc[expected.index, "oblivious"], expected["oblivious"], rtol=1e-11)
    assert cli.main(["report", *args, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    per_query = tiecore.evaluate(runs, qrels, ["P@5", "AP"], per_query=True)
    marks = report.significance_vs_best(per_query)
    body = report.to_markdown(expected.reset_index(), marks, tiebreak="docno_asc")
    assert markdown.startswith(body.split("\n\n")[0])
    assert cli.main(["report", *args, "--format", "latex", "--samples", "20"]) == 0
    latex = capsys.readouterr().out
    assert _balanced(latex) and "% samples: 20" in latex and "Holm-corrected" in latex
    assert cli.main(["report", *args, "--samples", "1"]) == 2
    assert "--samples: 1 is out of range (expected an integer >= 2" in capsys.readouterr().err

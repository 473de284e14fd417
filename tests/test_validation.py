"""One validation layer (tiecore.options) for the API, the CLI and the app.

Every public function that takes options refuses each bad value with one
``InputError`` line naming the option, the value and what is expected; the CLI
prints the same text (no traceback) and offers the declared choices; the app's
widgets take their choices and bounds from the same declarations.  The constraint
objects are checked against slow, obvious reference predicates (hypothesis).
"""

from __future__ import annotations

import ast
import math
import tempfile
from fractions import Fraction
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tiecore
from tiecore import compare, distributed, interop, metrics, report, spread
from tiecore import options as V
from tiecore.cli import main
from tiecore.cli import report as cli_report
from tiecore.cli.main import build_parser
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.explain import anatomy, builder, orderings, policies
from tiecore.report.comparison import format_comparison
from tiecore.stats.bootstrap import bootstrap_intervals, resample_counts
from tiecore.stats.corrections import adjust_pvalues
from tiecore.stats.paired import paired_tests
from tiecore.stats.summary import system_table
from tiecore.stats.tukey import tukey_hsd
from tiecore.stats.wilcoxon import wilcoxon_pvalues

REPO = Path(__file__).resolve().parents[1]

RUN = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
QRELS = pd.DataFrame({"qid": "1", "docno": ["c", "a"], "level": [1, 0]})
RUNS = {"a": RUN, "b": RUN.assign(score=[1.0, 1.0, 0.5])}
Y_TRUE, Y_SCORE = [[1, 0, 1, 0]], [[3.0, 2.0, 2.0, 1.0]]
NEVER = str(Path(tempfile.gettempdir()) / "tiecore-validation-never-written")
DOCS = pd.DataFrame({"docno": list("abcd"), "score": [3.0, 2.0, 2.0, 1.0], "level": [0, 1, 0, 1]})
QUERY = anatomy.QueryList.from_docs(DOCS)
JUDGMENTS = Judgments.from_qrels(QRELS)
PER_QUERY = tiecore.evaluate(RUNS, QRELS, "P@2", per_query=True)
PAIRS = pd.DataFrame({"a": ["a"], "b": ["b"], "mean_diff": [0.1], "tie_noise": [0.1]})


@pytest.fixture(scope="module")
def comparison() -> compare.Comparison:
    return compare.compare(RUNS, QRELS, "AP", samples=2, n_resamples=10, n_bootstrap=10)


def _metric(function, k=None):
    def call(_, **options):
        return function(Y_TRUE, Y_SCORE, **({"k": k} if k else {}) | options)

    return call


#: Public function -> (how to call it with some options, the options it must check).
CALLS = {
    "evaluate": (
        lambda _, **o: tiecore.evaluate(RUN, QRELS, **{"measures": "P@2", **o}),
        tiecore.evaluate,
        V.EVALUATE,
    ),
    "evaluate_spread": (
        lambda _, **o: spread.evaluate_spread(RUN, QRELS, **{"measures": "P@2", **o}),
        spread.evaluate_spread,
        V.SPREAD,
    ),
    "compare": (
        lambda _, **o: compare.compare(RUNS, QRELS, "AP", **{"samples": 2, **o}),
        compare.compare,
        V.COMPARE,
    ),
    "with_options": (
        lambda c, **o: c.with_options(**o),
        compare.Comparison.with_options,
        {"correction", "baseline", "tukey"},
    ),
    "significant": (
        lambda c, **o: c.significant(**o),
        compare.Comparison.significant,
        {"alpha"},
    ),
    "verdict": (lambda c, **o: c.verdict(**o), compare.Comparison.verdict, {"alpha"}),
    "adjust_pvalues": (
        lambda _, **o: adjust_pvalues(np.array([0.01, 0.2]), **o),
        adjust_pvalues,
        {"method"},
    ),
    "wilcoxon_pvalues": (
        lambda _, **o: wilcoxon_pvalues(np.array([[0.5], [0.25], [0.1]]), **o),
        wilcoxon_pvalues,
        {"zero_method"},
    ),
    "bootstrap_intervals": (
        lambda _, **o: bootstrap_intervals(np.array([[0.0], [1.0], [0.5]]), **o),
        bootstrap_intervals,
        {"confidence", "method", "n_resamples", "seed"},
    ),
    "tukey_hsd": (
        lambda _, **o: tukey_hsd([np.array([1.0, 2.0]), np.array([2.0, 4.0])], **o),
        tukey_hsd,
        {"confidence"},
    ),
    "system_table": (
        lambda c, **o: system_table(c.per_query, c.tie_var, **o),
        system_table,
        {"confidence", "ci_method", "n_bootstrap", "seed"},
    ),
    "paired_tests": (
        lambda _, **o: paired_tests(
            np.array([[0.1, 0.2], [0.3, 0.1], [0.5, 0.4]]), np.array([0]), np.array([1]), **o
        ),
        paired_tests,
        {"seed", "n_resamples", "zero_method", "confidence", "ci_method", "n_bootstrap"},
    ),
    "format_comparison": (
        lambda c, **o: format_comparison(c, **o),
        format_comparison,
        {"fmt"},
    ),
    "swapped_pairs": (
        lambda c, **o: compare.swapped_pairs(c, **o),
        compare.swapped_pairs,
        {"first", "second"},
    ),
    "resample_counts": (
        lambda _, **o: resample_counts(3, **{"n_resamples": 4, "seed": 0, **o}),
        resample_counts,
        {"n_resamples", "seed"},
    ),
    "connect": (lambda _, **o: distributed.connect(**o), distributed.connect, {"spec"}),
    "write_parquet_runs": (
        lambda _, **o: distributed.write_parquet_runs({"a": RUN}, NEVER, **o),
        distributed.write_parquet_runs,
        {"row_group_rows"},
    ),
    **{
        name: (_metric(getattr(metrics, name)), getattr(metrics, name), set(V.METRICS) - {"gain"})
        for name in ("average_precision", "reciprocal_rank")
    },
    **{
        name: (
            lambda _, function=function, extra=extra, **o: function(
                RUN, QRELS, "P@2", **{**extra, **o}
            ),
            function,
            names,
        )
        for name, function, names, extra in [
            (
                "report.modes_table",
                report.modes_table,
                {"tiebreak", "samples", "seed", "rel_level", "depth", "digits"},
                {},
            ),
            ("spread.tie_groups", spread.tie_groups, {"rel_level", "depth"}, {}),
            ("spread.tie_profile", spread.tie_profile, {"rel_level", "depth", "top"}, {}),
            ("spread.distribution", spread.distribution, {"rel_level", "depth"}, {"qid": "1"}),
            (
                "policies.sampled_values",
                policies.sampled_values,
                {"samples", "seed", "rel_level"},
                {"samples": 2},
            ),
        ]
    },
    "report.significance_vs_best": (
        lambda _, **o: report.significance_vs_best(PER_QUERY, **o),
        report.significance_vs_best,
        {"alpha", "correction"},
    ),
    "report.expected_flags": (
        lambda _, **o: report.expected_flags(report.modes_table(RUNS, QRELS, "P@2"), **o),
        report.expected_flags,
        {"digits"},
    ),
    **{
        f"report.{function.__name__}": (
            lambda _, function=function, **o: function(
                report.modes_table(RUNS, QRELS, "P@2"), None, **o
            ),
            function,
            {"digits", "tiebreak", "alpha"},
        )
        for function in (report.to_latex, report.to_markdown)
    },
    "report.closest_pairs": (
        lambda _, **o: report.closest_pairs(PAIRS, **o),
        report.closest_pairs,
        {"low", "high", "width"},
    ),
    "report.nearest_pairs": (
        lambda _, **o: report.nearest_pairs(PAIRS, **o),
        report.nearest_pairs,
        {"count"},
    ),
    "report.format_value": (
        lambda _, **o: report.format_value(0.5, **o),
        report.format_value,
        {"digits"},
    ),
    "spread.query_spread": (
        lambda _, **o: spread.query_spread(Ranking.build(RUN, JUDGMENTS), JUDGMENTS, "P@2", **o),
        spread.query_spread,
        {"depth"},
    ),
    "anatomy.num_rel": (
        lambda _, **o: QUERY.num_rel(**o),
        anatomy.QueryList.num_rel,
        {"rel_level"},
    ),
    "anatomy.tie_groups": (
        lambda _, **o: anatomy.tie_groups(QUERY, **o),
        anatomy.tie_groups,
        {"rel_level", "gain"},
    ),
    "anatomy.paper_quantities": (
        lambda _, **o: anatomy.paper_quantities(anatomy.tie_groups(QUERY), **{"k": 2, **o}),
        anatomy.paper_quantities,
        {"k"},
    ),
    **{
        f"anatomy.{function.__name__}": (
            lambda _, function=function, **o: function(QUERY, "AP", **o),
            function,
            {"rel_level"},
        )
        for function in (anatomy.expected_ranks, anatomy.group_contributions)
    },
    "orderings.orderings": (
        lambda _, **o: orderings.orderings([1.0, 1.0, 0.5], **o),
        orderings.orderings,
        {"limit"},
    ),
    "orderings.ordering_values": (
        lambda _, **o: orderings.ordering_values(
            QUERY, orderings.orderings(QUERY.score), "RR", **o
        ),
        orderings.ordering_values,
        {"rel_level"},
    ),
    "orderings.ranked_list": (
        lambda _, **o: orderings.ranked_list(RUN, QRELS, "1", **o),
        orderings.ranked_list,
        {"tiebreak", "rel_level"},
    ),
    "policies.policy_values": (
        lambda _, **o: policies.policy_values(RUNS, QRELS, "P@2", **o),
        policies.policy_values,
        {"rel_level", "policies"},
    ),
    "policies.assemble_policies": (
        lambda _, **o: policies.assemble_policies(
            spread.evaluate_spread(RUNS, QRELS, "P@2"),
            {"trec_eval": tiecore.evaluate(RUNS, QRELS, "P@2", ties="oblivious")},
            "P@2",
            **{"policies": ["trec_eval"], **o},
        ),
        policies.assemble_policies,
        {"policies"},
    ),
    "policies.rank_ranges": (
        lambda _, **o: policies.rank_ranges(
            pd.DataFrame({"aware": [0.5, 0.4], "trec_eval": [0.3, 0.4]}, index=["x", "y"]),
            ["aware", "trec_eval"],
            **o,
        ),
        policies.rank_ranges,
        {"top"},
    ),
    "builder.quantise": (
        lambda _, **o: builder.quantise(np.array([0.0, 0.5, 1.0]), **{"levels": 2, **o}),
        builder.quantise,
        {"levels"},
    ),
    "builder.sweep": (
        lambda _, **o: builder.sweep(
            RUNS, QRELS, {"a": 1.0}, **{"levels": [None, 2], **o}, measure="P@2"
        ),
        builder.sweep,
        {"levels", "rel_level", "tiebreak"},
    ),
    "interop.measure_name": (
        lambda _, **o: interop.measure_name("AP", **o),
        interop.measure_name,
        {"rel_level"},
    ),
    "interop.count_rows": (
        lambda _, **o: interop.count_rows(RUN, QRELS, **o),
        interop.count_rows,
        {"rel_level", "depth"},
    ),
    "interop.format_all_trec": (
        lambda _, **o: interop.format_all_trec(PER_QUERY, {"P@2": "P_2"}, **o),
        interop.format_all_trec,
        {"per_query"},
    ),
    "ndcg": (_metric(metrics.ndcg), metrics.ndcg, set(V.METRICS) - {"rel_level"}),
    **{
        name: (
            _metric(getattr(metrics, name), 2),
            getattr(metrics, name),
            set(V.METRICS) - {"gain"},
        )
        for name in ("hits_at_k", "precision_at_k", "recall_at_k")
    },
}


# --------------------------------------------------------------------------- references


def reference_accepts(constraint: object, value: object) -> bool:
    """The slow, obvious reading of one constraint (written apart from the module)."""
    if constraint is None or isinstance(constraint, V._NoneConstraint):
        return value is None
    if isinstance(constraint, V.Options):
        if type(value) is not str and not isinstance(value, np.str_):
            return False
        return any(choice == value for choice in constraint.choices)
    if isinstance(constraint, V.Boolean):
        return type(value) in (bool, np.bool_)
    if isinstance(constraint, V.Interval):
        integers = (int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64)
        floats = (float, np.float16, np.float32, np.float64)
        if type(value) in (bool, np.bool_):
            return False
        if constraint.kind is Integral and type(value) not in integers:
            return False
        if constraint.kind is Real and type(value) not in integers + floats:
            return False
        if value != value:  # NaN
            return False
        low_closed = constraint.closed in ("both", "left")
        high_closed = constraint.closed in ("both", "right")
        if math.isinf(value):
            exact = value
        else:
            exact = Fraction(int(value)) if type(value) in integers else Fraction(float(value))
        if constraint.low is not None:
            low = Fraction(constraint.low)
            if exact < low or (exact == low and not low_closed):
                return False
        if constraint.high is not None:
            high = Fraction(constraint.high)
            if exact > high or (exact == high and not high_closed):
                return False
        return True
    if isinstance(constraint, V.Satisfies):  # only its hand-listed bad values are asked
        return False
    raise TypeError(constraint)


#: Values that break a Satisfies constraint, by hand (a predicate has no obvious reading).
SATISFIES_BAD = {
    id(V.MEASURES): [5, None, [1], {"AP": 1}, b"AP"],
    id(V.RUN_NAME): [5, 1.5],
    id(V.DASK_SPEC[0]): ["local:0", "local:x", "", "local:-1", 5],
    id(V.POLICIES): [[], ["aware"], ("trec_eval", 5), ["Random"], "trec_eval", 5, None],
    id(V.LEVEL_LIST): [[0], [None, 2.5], [True], ["10"], 5, "10", None, [np.float64(2)]],
}


def spec_accepts(spec, value) -> bool:
    return any(reference_accepts(c, value) for c in V.constraints_of(spec))


def bad_values(spec) -> list:
    """Wrong choices, out of range, wrong types, bools for numbers, NaN: all the spec
    refuses according to the reference."""
    found = V.constraints_of(spec)
    satisfies = [c for c in found if isinstance(c, V.Satisfies)]
    if satisfies:
        return [v for c in satisfies for v in SATISFIES_BAD[id(c)] if not spec_accepts(spec, v)]
    candidates = ["nope", 5, 2.5, True, False, float("nan"), None, "3", -1, 0, np.int64(-3), [1]]
    for c in found:
        if isinstance(c, V.Options):
            candidates += [c.choices[0].upper() + "x", c.choices[-1] + " "]
        if isinstance(c, V.Interval):
            for bound in (c.low, c.high):
                if bound is not None:
                    candidates += [bound - 1, bound + 1, bound, np.float64(bound) + 0.5]
    return [v for v in candidates if not spec_accepts(spec, v)]


def cases():
    for function, (_, _, names) in CALLS.items():
        table = CALLS[function][1].params
        for name in sorted(names):
            for value in bad_values(table[name]):
                yield pytest.param(function, name, value, id=f"{function}-{name}-{value!r}")


# --------------------------------------------------------------------------- the API


@pytest.mark.parametrize("function", sorted(CALLS))
def test_each_public_function_declares_its_options(function) -> None:
    _, decorated, names = CALLS[function]
    assert set(decorated.params) == set(names)


@pytest.mark.parametrize(("function", "name", "value"), list(cases()))
def test_each_bad_option_is_one_error_naming_it(comparison, function, name, value) -> None:
    call, decorated, _ = CALLS[function]
    spec = decorated.params[name]
    with pytest.raises(InputError) as info:
        call(comparison, **{name: value})
    message = str(info.value)
    assert "\n" not in message and isinstance(info.value, ValueError)
    assert message.startswith(f"{name}: ") and repr(value) in message
    assert message.endswith(f" (expected {V.expected(spec)})")
    assert info.value.source == name and info.value.line is None


@pytest.mark.parametrize("function", sorted(f for f in CALLS if "." in f))
def test_each_call_runs_with_valid_options(comparison, function) -> None:
    """The calls of the modules named ``module.function`` above are real ones: without a
    bad option they run (the decorator lets valid values through)."""
    CALLS[function][0](comparison)


def test_ranking_checks_its_tiebreak_with_the_declaration() -> None:
    ranking = Ranking.build(RUN, JUDGMENTS)
    expected = f" (expected {V.expected(V.TIEBREAK)})"
    for call in (
        lambda: Ranking.build(RUN, JUDGMENTS, tiebreak="trec"),
        lambda: ranking.retie("trec"),
        lambda: ranking.retie(tiebreak="trec"),
    ):
        with pytest.raises(InputError) as info:
            call()
        assert str(info.value) == "tiebreak: unknown tiebreak 'trec'" + expected


def test_the_report_uses_every_option_it_checks() -> None:
    """``depth`` cuts every mode of the report (it was once checked and then ignored)."""
    table = report.modes_table(RUNS, QRELS, "P@2", depth=1, samples=2, tiebreak="docno_asc")
    aware = tiecore.evaluate(RUNS, QRELS, "P@2", depth=1)
    oblivious = tiecore.evaluate(
        RUNS, QRELS, "P@2", depth=1, ties="oblivious", tiebreak="docno_asc"
    )
    sampled = tiecore.evaluate(RUNS, QRELS, "P@2", depth=1, ties="sampled", samples=2)
    for column, frame in (("aware", aware), ("oblivious", oblivious), ("sampled", sampled)):
        assert table[column].tolist() == frame["value"].tolist()
    assert table["aware"].tolist() != report.modes_table(RUNS, QRELS, "P@2")["aware"].tolist()


def test_messages_read_well() -> None:
    with pytest.raises(InputError) as samples:
        tiecore.evaluate(RUN, QRELS, "P@2", samples=True)
    assert str(samples.value) == (
        "samples: True is a bool (expected an integer >= 2; a std needs at least 2 samples)"
    )
    with pytest.raises(InputError) as depth:
        tiecore.evaluate(RUN, QRELS, "P@2", depth=float("nan"))
    assert str(depth.value) == "depth: nan is not a number (expected a positive integer or None)"
    with pytest.raises(InputError) as ties:
        metrics.ndcg(Y_TRUE, Y_SCORE, ties="sampled")
    assert str(ties.value) == "ties: unknown ties 'sampled' (expected one of aware, oblivious)"
    with pytest.raises(InputError) as level:
        tukey_hsd([], confidence=1)
    assert str(level.value) == "confidence: 1 is not a level (expected a number in (0, 1))"


@pytest.mark.parametrize(
    ("options", "column"),
    [
        ({"ties": "sampled", "samples": np.int64(3), "seed": np.uint8(2)}, "std"),
        ({"ties": "oblivious", "tiebreak": "pessimistic", "depth": np.int32(2)}, "value"),
        ({"ties": "aware", "complete": np.bool_(True), "per_query": True}, "value"),
    ],
)
def test_valid_options_of_numpy_types_pass(options, column) -> None:
    found = tiecore.evaluate(RUN, QRELS, ["P@2", "RR"], **options)
    assert column in found and len(found) >= 2


def test_positional_arguments_are_checked_too(comparison) -> None:
    with pytest.raises(InputError, match=r"^method: unknown method 'x' \(expected one of none,"):
        adjust_pvalues(np.array([0.1]), "x")
    with pytest.raises(InputError, match=r"^spec: 'local:0' is not valid"):
        distributed.connect("local:0")
    with pytest.raises(InputError, match=r"^alpha: 0 is not a significance level \(expected"):
        comparison.significant(0)
    with pytest.raises(InputError, match=r"^n_resamples: 0 is out of range"):
        paired_tests(np.zeros((2, 2)), np.array([0]), np.array([1]), None, None, 0, 0)


def test_a_declaration_naming_no_parameter_is_refused_at_import() -> None:
    with pytest.raises(TypeError, match=r"has no parameter \['tie'\]"):
        V.validate_params({"tie": V.TIES})(lambda *, ties="aware": ties)


# --------------------------------------------------------------------------- the properties

NUMBERS = st.one_of(
    st.integers(-5, 5),
    st.floats(-5, 5),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 0.5, -0.0]),
    st.integers(-5, 5).map(np.int64),
    st.floats(-5, 5).map(np.float64),
    st.booleans(),
    st.booleans().map(np.bool_),
)
VALUES = st.one_of(
    NUMBERS, st.none(), st.text(max_size=3), st.sampled_from(["aware", "holm", "BCa", "exp"])
)
BOUND = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([0.5, -1.5]))


@st.composite
def intervals(draw) -> V.Interval:
    kind = draw(st.sampled_from([Integral, Real]))
    low, high = draw(BOUND), draw(BOUND)
    if low is not None and high is not None and low > high:
        low, high = high, low
    return V.Interval(kind, low, high, draw(st.sampled_from(["both", "left", "right", "neither"])))


CONSTRAINTS = st.one_of(
    intervals(),
    st.lists(st.sampled_from(["aware", "holm", "BCa", "exp", "x"]), min_size=1, unique=True).map(
        lambda choices: V.Options(*choices)
    ),
    st.just(V.Boolean()),
    st.none(),
)


@given(spec=st.lists(CONSTRAINTS, min_size=1, max_size=3), value=VALUES)
def test_valid_values_pass_and_invalid_fail_as_the_reference_says(spec, value) -> None:
    valid = spec_accepts(spec, value)
    try:
        V.check("option", value, spec)
    except InputError as error:
        assert not valid, f"{value!r} refused by {spec}: {error}"
        message = str(error)
        assert message.startswith("option: ") and repr(value) in message
        assert message.endswith(f"(expected {V.expected(spec)})") and "\n" not in message
    else:
        assert valid, f"{value!r} accepted by {spec}"


@given(interval=intervals(), value=NUMBERS)
def test_the_cli_parser_agrees_with_the_api(interval, value) -> None:
    """What the CLI type accepts from a number's text is what the API accepts of it."""
    import argparse

    text = str(value)
    parse = V.cli_type(interval)
    try:
        parsed = parse(text)
    except argparse.ArgumentTypeError as error:
        try:
            number = interval.parse(text)
        except ValueError:
            assert str(error).startswith(f"{text!r} is not ")
        else:
            assert not reference_accepts(interval, number)
            assert str(error) == str(_api_error(interval, number)).removeprefix("x: ")
    else:
        assert reference_accepts(interval, parsed) and parsed == interval.parse(text)


def _api_error(spec, value) -> InputError:
    with pytest.raises(InputError) as info:
        V.check("x", value, spec)
    return info.value


# --------------------------------------------------------------------------- the CLI


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("validation")
    paths = {
        "qrels": "1 0 c 1\n1 0 a 0\n",
        "a": "1 Q0 a 1 2.0 a\n1 Q0 b 2 1.0 a\n1 Q0 c 3 1.0 a\n",
        "b": "1 Q0 a 1 1.0 b\n1 Q0 b 2 1.0 b\n1 Q0 c 3 0.5 b\n",
    }
    for name, text in paths.items():
        (folder / f"{name}.txt").write_text(text)
    return {name: str(folder / f"{name}.txt") for name in paths}


#: (command, option, its value on the command line, the API call's option and value, spec).
CLI_CASES = [
    ("eval", ["--ties", "sampled", "--samples"], "1", "evaluate", "samples", 1),
    ("eval", ["--samples"], "2.5", "evaluate", "samples", None),
    ("eval", ["--seed"], "-1", "evaluate", "seed", -1),
    ("eval", ["-M"], "0", "evaluate", "depth", 0),
    ("eval", ["-l"], "two", "evaluate", "rel_level", None),
    ("compare", ["--samples"], "1", "compare", "samples", 1),
    ("compare", ["--confidence"], "1.5", "compare", "confidence", 1.5),
    ("compare", ["--confidence"], "nan", "compare", "confidence", float("nan")),
    ("compare", ["--bootstrap"], "0", "compare", "n_bootstrap", 0),
    ("compare", ["--resamples"], "0", "compare", "n_resamples", 0),
    ("eval", ["--dask"], "local:0", "connect", "spec", "local:0"),
    ("report", ["--samples"], "1", "report.modes_table", "samples", 1),
    ("report", ["--samples"], "two", "report.modes_table", "samples", None),
    ("report", ["--seed"], "-1", "report.modes_table", "seed", -1),
    ("report", ["-M"], "0", "report.modes_table", "depth", 0),
    ("report", ["-l"], "1.5", "report.modes_table", "rel_level", None),
    ("report", ["--alpha"], "0", "report.significance_vs_best", "alpha", 0.0),
    ("report", ["--alpha"], "nan", "report.significance_vs_best", "alpha", float("nan")),
    ("report", ["--alpha"], "1.5", "report.significance_vs_best", "alpha", 1.5),
]


@pytest.mark.parametrize(("command", "flag", "text", "function", "name", "value"), CLI_CASES)
def test_the_cli_shows_the_api_text_in_one_line(
    files, capsys, comparison, command, flag, text, function, name, value
) -> None:
    runs = [files["a"], files["b"]] if command == "compare" else [files["a"]]
    code = main([command, files["qrels"], *runs, *flag, text])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    prefix = f"tiecore: error: argument {flag[-1]}"
    assert err.startswith(prefix), err
    shown = err.split(": ", 3)[3].rstrip("\n")  # after "tiecore: error: argument --x: "
    spec = CALLS[function][1].params[name]
    typed = [c for c in V.constraints_of(spec) if not isinstance(c, V._NoneConstraint)]
    assert shown.endswith(f" (expected {V.expected(typed)})")
    if value is None:  # text that is no number: named as typed
        assert shown.startswith(f"{text!r} is not ")
        return
    with pytest.raises(InputError) as info:
        CALLS[function][0](comparison, **{name: value})
    api = str(info.value).removeprefix(f"{name}: ")
    assert shown.split(" (expected ")[0] == api.split(" (expected ")[0]
    if len(typed) == len(V.constraints_of(spec)):  # nothing but None left out: the same text
        assert shown == api


def _actions(command: str) -> dict[str, object]:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    return {action.dest: action for action in commands.choices[command]._actions}


def test_the_cli_choices_are_the_declared_ones() -> None:
    ev, cmp, rep = _actions("eval"), _actions("compare"), _actions("report")
    assert tuple(rep["tiebreak"].choices) == V.FIXED_TIEBREAKS
    assert tuple(rep["format"].choices) == cli_report.FORMATS
    assert tuple(ev["ties"].choices) == V.MODES
    assert tuple(ev["tiebreak"].choices) == V.TIEBREAKS
    assert tuple(ev["format"].choices) == V.EVAL_FORMATS
    assert tuple(cmp["format"].choices) == V.COMPARE_FORMATS
    assert tuple(cmp["correction"].choices) == V.CORRECTIONS == compare.CORRECTIONS
    assert tuple(cmp["ci_method"].choices) == V.CI_METHODS == compare.CI_METHODS
    assert tuple(cmp["zero_method"].choices) == V.ZERO_METHODS == compare.ZERO_METHODS


@pytest.mark.parametrize(
    ("command", "dest", "good", "bad"),
    [
        ("eval", "samples", "2", "1"),
        ("eval", "seed", "0", "-1"),
        ("eval", "depth", "1", "0"),
        ("eval", "rel_level", "-2", "1.0"),
        ("compare", "confidence", "0.9", "1"),
        ("compare", "bootstrap", "1", "0"),
        ("compare", "resamples", "1", "0"),
        ("eval", "dask", "local:1", "local:0"),
        ("report", "samples", "2", "1"),
        ("report", "seed", "0", "-1"),
        ("report", "alpha", "0.99", "0"),
        ("report", "alpha", "0.05", "1"),
        ("eval", "rel_level", "9223372036854775807", "99999999999999999999"),
        ("report", "depth", "1", "0"),
    ],
)
def test_the_cli_ranges_are_the_declared_ones(command, dest, good, bad) -> None:
    import argparse

    parse = _actions(command)[dest].type
    parse(good)
    with pytest.raises(argparse.ArgumentTypeError):
        parse(bad)


# --------------------------------------------------------------------------- the app


def test_the_sidebar_takes_its_choices_and_bounds_from_the_declarations() -> None:
    from app_lib import sidebar

    assert sidebar.TIEBREAKS is V.TIEBREAKS and sidebar.GAINS is V.GAINS
    assert sidebar.SAMPLES is V.SAMPLES and sidebar.SEED is V.SEED
    source = ast.parse((REPO / "app_lib/sidebar.py").read_text())
    calls = {
        _keyword(call, "key"): call
        for call in ast.walk(source)
        if isinstance(call, ast.Call) and _keyword(call, "key")
    }
    assert ast.unparse(calls["tiebreak"].args[1]) == "TIEBREAKS"
    assert ast.unparse(calls["gain"].args[1]) == "GAINS"
    assert ast.unparse(calls["samples"].args[1]) == "SAMPLES.low"
    assert ast.unparse(calls["seed"].args[1]) == "SEED.low"


def test_the_rankings_page_takes_the_corrections_from_the_declarations() -> None:
    source = ast.parse((REPO / "app_pages/rankings.py").read_text())
    imported = {
        alias.name
        for node in ast.walk(source)
        if isinstance(node, ast.ImportFrom) and node.module in {"tiecore", "tiecore.options"}
        for alias in node.names
    }
    assert "CORRECTIONS" in imported  # the top-level name is tiecore.options' (test_api)
    (call,) = [
        node
        for node in ast.walk(source)
        if isinstance(node, ast.Call) and _keyword(node, "key") == "rankings_correction"
    ]
    assert ast.unparse(call.args[1]) == "CORRECTIONS"


def _keyword(call: ast.Call, name: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return keyword.value.value
    return None


#: The files whose option checks and widgets the layer replaced: none spells a declared
#: list of choices out again.
OPTION_FILES = [
    "tiecore/compare.py",
    "tiecore/metrics.py",
    "tiecore/evaluation/core.py",
    "tiecore/distributed.py",
    "tiecore/explain/anatomy.py",
    "tiecore/explain/builder.py",
    "tiecore/interop.py",
    "tiecore/spread.py",
    "tiecore/engine/ranking.py",
    "tiecore/engine/profiles.py",
    "tiecore/evaluation/small.py",
    "app.py",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "tiecore" / "cli").glob("*.py")),
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "tiecore" / "report").glob("*.py")),
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "app_lib").glob("*.py")),
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "app_pages").glob("*.py")),
]


@pytest.mark.parametrize("path", OPTION_FILES)
def test_no_list_of_choices_is_typed_twice(path) -> None:
    declared = [
        set(getattr(V, name))
        for name in ("MODES", "TIEBREAKS", "CORRECTIONS", "ZERO_METHODS", "CI_METHODS", "GAINS")
    ]
    declared += [set(V.EVAL_FORMATS), set(V.COMPARE_FORMATS), set(V.FIXED_TIEBREAKS)]
    declared += [set(V.EXACT_MODES)]
    for node in ast.walk(ast.parse((REPO / path).read_text())):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) > 1:
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                found = {e.value for e in node.elts}
                assert found not in declared, f"{path}, line {node.lineno}: {sorted(found)}"

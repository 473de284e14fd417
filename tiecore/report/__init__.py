"""Results to take away: systems x measures in the three tie modes, as LaTeX, Markdown or CSV.

:func:`modes_table` scores every run by every measure tie-oblivious (one
tie-break), tie-aware (the exact mean over all orderings) and, optionally,
sampled; beside them the exact standard deviation of the run's mean over random
tie-breaks (the *tie sd*, from :func:`tiecore.spread.evaluate_spread`) and the
min and max over all orderings.  ``delta = oblivious - aware`` is how far the one
tie-break moved the reported number, in the measure's own units (what a paper
prints), and ``z = delta / tie_sd`` the same in units of the tie noise.  A value
is flagged when the shift shows at the decimals a paper prints *and* exceeds 2 tie
sd; :func:`expected_flags` says how many flags random tie-breaking alone would
raise (the base rate to hold the count against).  :func:`to_latex` (booktabs) and
:func:`to_markdown` print one column per measure, tie-aware ``± tie sd`` with
marks (the significance is :func:`significance_vs_best`: the Rankings page's paired
t-test and Holm correction); :func:`frame_to_latex` typesets any small table;
:func:`to_csv` writes any table with its provenance as ``#`` comment lines and
without float noise.  :func:`closest_pairs` lists the pairs of systems whose order
ties could decide.

The modules: :mod:`~tiecore.report.effects` (the modes table, flags, base rate,
verdicts), :mod:`~tiecore.report.significance`, :mod:`~tiecore.report.tables` (what
the LaTeX and Markdown tables share), :mod:`~tiecore.report.latex`,
:mod:`~tiecore.report.markdown`, :mod:`~tiecore.report.escape`,
:mod:`~tiecore.report.pairs`, :mod:`~tiecore.report.formats` (every trec, CSV and JSON
writer) and :mod:`~tiecore.report.comparison` (``tiecore compare``'s output).  None
imports pandas until a table is built, so ``tiecore eval`` can write through
:mod:`~tiecore.report.formats` without it; and this package imports its modules on
first use (PEP 562), so that ``tiecore eval``'s writer loads none of the others
(the LaTeX, Markdown, effects and significance modules cost it about 3 ms of start-up).
"""

from tiecore import _lazy

#: The public names are those of ``__init__.pyi``, each written there once
#: (tiecore._lazy), imported on first use; the modules they come from are attributes too.
__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)

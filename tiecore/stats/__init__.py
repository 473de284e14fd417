"""Statistics over per-query values: pure functions of arrays, no runs or measures.

- :mod:`~tiecore.stats.ranks`: ties within a tolerance, ranks (:func:`tie_ranks`);
- :mod:`~tiecore.stats.correlation`: Kendall's tau-b and the AP correlation of rankings;
- :mod:`~tiecore.stats.beats`: P(a random draw of one sample beats one of another);
- :mod:`~tiecore.stats.paired`: paired t-test and sign-flip randomization test of
  many pairs of columns at once;
- :mod:`~tiecore.stats.wilcoxon`: Wilcoxon signed-rank test, batched;
- :mod:`~tiecore.stats.corrections`: Holm, Bonferroni and Benjamini-Hochberg;
- :mod:`~tiecore.stats.bootstrap`: bootstrap intervals of means and mean differences;
- :mod:`~tiecore.stats.tukey`: Tukey's HSD;
- :mod:`~tiecore.stats.summary`: each run's mean with its tie and topic noise;
- :mod:`~tiecore.stats.pairs`: the table of every pair of runs (difference, tie
  noise, P(beats), the tests, corrections, Tukey) and help/hurt against a baseline.

Importing this package imports none of them (nor scipy).
"""

import numpy as np

#: Cells of the temporary arrays built at once (resamples x pairs, samples x runs x runs).
CHUNK_CELLS = 1 << 21
#: The smallest p-value reported; a t-distribution tail below it is reported as it.
SMALLEST_P = float(np.finfo(np.float64).tiny)

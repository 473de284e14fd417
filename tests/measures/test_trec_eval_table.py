"""trec_eval's table of measures (tiecore.measures.trec_eval_table)."""

from __future__ import annotations

from tiecore.measures.prefs import PREFS_MEASURES
from tiecore.measures.trec_eval_table import PREFS_NAMES, TABLE


def test_the_preference_names_are_those_of_the_preference_measures():
    """The command checks -R against PREFS_NAMES without importing the measures: they
    are the preference measures' own names, in trec_eval's order."""
    assert PREFS_NAMES == PREFS_MEASURES
    assert all(TABLE[name].ours == name for name in PREFS_NAMES)

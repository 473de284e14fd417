"""The test tiers and hypothesis' profiles.

Tiers (``docs/design.md``, *Tests*): ``pytest`` runs the fast tier (``-m "not slow"``,
set in ``pyproject.toml``): every exactness and error-handling promise at small sizes.
``pytest -m slow`` runs the slow tier: the browser tour, the fresh-venv README test, and
every property test (hypothesis) again at its full number of examples.  ``pytest -m ""``
runs both, each property test once at full size.  In the fast tier a property test runs at
most :data:`FAST_EXAMPLES` examples, so that the tier stays within minutes.

Hypothesis: no clock decides a test (no deadline per example, no health check on slow
generation: a busy machine makes a property test slower, never red).  CI (``CI=true``)
derandomizes, so a submission's result does not depend on the draw; developers' runs
keep exploring new examples and the database replays any failure they find.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

#: The most examples a property test runs in the fast tier (its own count in the slow one).
FAST_EXAMPLES = 20
#: A doctest that imports one of these is the slow tier's: ranx compiles its numba functions
#: on first use (about a minute in a new environment on two cores; tests/io/test_peers.py).
SLOW_IMPORTS = ("import ranx",)

settings.register_profile("tiecore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", settings.get_profile("tiecore"), derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "tiecore")


def _tier(config: pytest.Config) -> str:
    """``fast`` (``-m "not slow"``, the default), ``slow`` (``-m slow``) or ``all``."""
    expression = " ".join(config.option.markexpr.split())
    return {"not slow": "fast", "slow": "slow"}.get(expression, "all")


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects: the slow tier takes them in
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Property tests: capped at :data:`FAST_EXAMPLES` in the fast tier; in the slow tier
    marked ``slow`` too, so that ``-m slow`` runs them at their full size.  Doctests that
    import a package of :data:`SLOW_IMPORTS`: marked ``slow``."""
    tier = _tier(config)
    for item in items:
        if isinstance(item, pytest.DoctestItem):
            source = "".join(example.source for example in item.dtest.examples)
            if any(line in source for line in SLOW_IMPORTS):
                item.add_marker(pytest.mark.slow)
            continue
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        if not getattr(test, "is_hypothesis_test", False):
            continue
        if tier == "slow":
            item.add_marker(pytest.mark.slow)
        elif tier == "fast":
            full = test._hypothesis_internal_use_settings
            if full.max_examples > FAST_EXAMPLES:
                test._hypothesis_internal_use_settings = settings(full, max_examples=FAST_EXAMPLES)

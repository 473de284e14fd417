"""Hypothesis profiles: random exploration locally, a fixed set of examples on CI.

CI (``CI=true``) derandomizes, so a submission's result does not depend on the
draw; developers' runs keep exploring new examples and the database replays
any failure they find.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

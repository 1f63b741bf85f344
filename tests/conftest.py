"""Fast tier configuration: Hypothesis runs derandomized (the seed is derived from each test,
so every run explores the same examples and a failure reproduces exactly); set
``HYPOTHESIS_PROFILE=explore`` to draw fresh random examples (the failing seed is printed)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# The session fails when it leaves a broker or client process running (and ends them).
from testlab.leftover_plugin import (  # noqa: F401
    pytest_configure,
    pytest_sessionfinish,
)

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=150,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    deadline=None,
    max_examples=1000,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

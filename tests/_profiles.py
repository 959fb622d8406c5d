"""Hypothesis profiles: ``ci`` (the default) replays the same examples every run, so a
submission that changed nothing there cannot turn the suite red; ``fuzz`` (``make fuzz``)
draws new ones, ten times as many, and keeps what fails in ``.hypothesis/``.

A property test names its example count through :func:`examples`, which the profile
scales; a failing example it finds is pinned with ``@example`` next to the test.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

BASE = 100
"""The ``ci`` profile's ``max_examples``: ``examples(n)`` is ``n`` under it."""

settings.register_profile(
    "ci",
    max_examples=BASE,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
)
settings.register_profile(
    "fuzz",
    max_examples=BASE * 10,
    derandomize=False,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def load_profile() -> str:
    """Loads ``HYPOTHESIS_PROFILE`` (``ci`` when unset) and returns its name."""
    name = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    settings.load_profile(name)
    return name


def examples(n: int) -> int:
    """``n`` examples under ``ci``, scaled by the loaded profile (ten times under ``fuzz``)."""
    loaded = settings.default
    assert loaded is not None, "load_profile() runs first (tests/conftest.py)"
    return max(1, n * loaded.max_examples // BASE)

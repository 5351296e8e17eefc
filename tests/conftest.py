"""Fixtures and hooks shared by the whole test suite.

* A Hypothesis profile ``ci`` (modest ``max_examples``, no deadline) loaded by
  default; ``HYPOTHESIS_PROFILE=dev`` (more examples) or ``thorough`` select others.
* Every test starts in English (:func:`_english`).

The helpers that tests import (building rounds, rigged matches, random play) are in
``koikoi_testkit.py`` beside this file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Assertions in the test kit (``play_random_match``) report their values like a test's.
pytest.register_assert_rewrite("koikoi_testkit")

# ---------------------------------------------------------------- hypothesis


def pytest_configure(config: pytest.Config) -> None:
    """Register the Hypothesis profiles and load ``$HYPOTHESIS_PROFILE`` (default ``ci``)."""
    for name, examples in (("ci", 20), ("dev", 100), ("thorough", 1000)):
        settings.register_profile(
            name,
            max_examples=examples,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# ------------------------------------------------------------------ language


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts in English whatever the machine's locale (``koikoi`` reads
    ``$KOIKOI_LANG`` first), and leaves the language in English for the next one."""
    from koikoi import i18n

    monkeypatch.setenv("KOIKOI_LANG", "en")
    i18n.set_language("en")
    yield
    i18n.set_language("en")

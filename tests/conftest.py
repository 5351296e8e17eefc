"""Fixtures and hooks shared by the whole test suite.

* A Hypothesis profile ``ci`` (modest ``max_examples``, no deadline) loaded by
  default; ``HYPOTHESIS_PROFILE=dev`` (more examples) or ``thorough`` select others.
* Every test starts in English (:func:`_english`).
* The parts of the suite (markers registered in pyproject.toml): tests that use the
  ``browser`` fixture are marked ``browser``, the PostgreSQL case of the
  ``any_db_url`` fixture ``postgres``, and the tests of the two games' faces by
  folder, ``tui`` (``tests/tui``) and ``web`` (``tests/server``)
  (:func:`pytest_collection_modifyitems`); test
  modules mark the rest themselves (``slow``, ``multiprocess``, ``postgres``, ``wheel``).
  ``make test-core`` runs what none of them marks.

The helpers that tests import (building rounds, rigged matches, random play) are in
``koikoi_testkit.py`` beside this file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Assertions in the test kit (``play_random_match``) report their values like a test's.
pytest.register_assert_rewrite("koikoi_testkit")

# ---------------------------------------------------------------- hypothesis


@pytest.hookimpl(tryfirst=True)  # before Hypothesis' plugin: --hypothesis-profile wins
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


# ---------------------------------------------------------------- parts of the suite

PG_URL_ENV = "KOIKOI_TEST_DATABASE_URL"
"""The PostgreSQL database of the ``postgres`` tests; they skip when it is not set."""
FIXTURE_MARKS: dict[str, str] = {"browser": "browser"}
"""A test that uses the fixture (key) gets the marker (value)."""
DIRECTORY_MARKS: dict[str, str] = {"tui": "tui", "server": "web"}
"""Every test under ``tests/<key>/`` gets the marker (value): the two games' faces."""
POSTGRES_PARAMS: dict[str, str] = {"any_db_url": "postgresql"}
"""A test whose fixture (key) takes this parameter (value) gets the ``postgres`` marker."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of the faces by folder, those that need Chromium or PostgreSQL by
    the fixtures they use, and skip
    the ``postgres`` tests when ``$KOIKOI_TEST_DATABASE_URL`` is not set."""
    no_database = pytest.mark.skip(reason=f"{PG_URL_ENV} is not set")
    here = Path(__file__).parent
    for item in items:
        folder = item.path.relative_to(here).parts[0]
        if folder in DIRECTORY_MARKS:
            item.add_marker(DIRECTORY_MARKS[folder])
        fixtures = getattr(item, "fixturenames", ())
        for fixture, mark in FIXTURE_MARKS.items():
            if fixture in fixtures:
                item.add_marker(mark)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(
            callspec.params.get(name) == value for name, value in POSTGRES_PARAMS.items()
        ):
            item.add_marker("postgres")
        if item.get_closest_marker("postgres") is not None and not os.environ.get(PG_URL_ENV):
            item.add_marker(no_database)


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

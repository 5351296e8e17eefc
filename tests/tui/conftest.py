"""Fixtures of the terminal-game tests.

Async pilot tests run on asyncio through AnyIO's pytest plugin (AnyIO comes
with the project's dev dependencies), marked ``pytest.mark.anyio``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("textual")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _test_advisor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The "test-advisor" opponent (an agent with ``evaluate``), for these tests only."""
    from tui_driver import AdvisingAgent

    from koikoi.agents import AGENT_KINDS

    monkeypatch.setitem(AGENT_KINDS, "test-advisor", lambda params, arg: AdvisingAgent())


@pytest.fixture(autouse=True)
def _koikoi_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test writes into the real ~/.local/share/koikoi."""
    monkeypatch.setenv("KOIKOI_HOME", str(tmp_path / "koikoi-home"))

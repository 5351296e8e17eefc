"""Fixtures of the terminal-game tests.

Async pilot tests run on asyncio through AnyIO's pytest plugin (AnyIO comes
with the project's dev dependencies), marked ``pytest.mark.anyio``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("textual")

if TYPE_CHECKING:
    from koikoi.tui.app import KoiKoiApp


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


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[KoiKoiApp]:
    """The apps ``koikoi play`` would run (not run: no terminal in tests)."""
    from koikoi.tui.app import KoiKoiApp

    apps: list[KoiKoiApp] = []

    def fake_run(self: KoiKoiApp, *args: Any, **kwargs: Any) -> None:
        apps.append(self)

    monkeypatch.setattr(KoiKoiApp, "run", fake_run)
    return apps


@pytest.fixture(autouse=True)
def _no_kernel_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's warm-up does nothing here (it would compile the kernel in every test
    process); the tests of the warm-up pass their own (``KoiKoiApp(warm_up=...)``)."""
    from koikoi.tui import app

    monkeypatch.setattr(app, "warm_up_ai", lambda advisor: None)

"""Fixtures of the web game's tests. They skip when the ``web`` extra is missing."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from koikoi.server.app import create_app
from koikoi.server.config import ServerConfig

PG_URL_ENV = "KOIKOI_TEST_DATABASE_URL"

from server_helpers import FAST, ThreadServer  # noqa: E402


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'koikoi-test.db'}"


@pytest.fixture
def make_client(db_url: str) -> Iterator[Callable[..., TestClient]]:
    """Start the app in-process (lifespan included); closed at the end of the test."""
    opened: list[TestClient] = []

    def make(config: ServerConfig = FAST, url: str | None = None, **kwargs: Any) -> TestClient:
        client = TestClient(create_app(url or db_url, config=config), **kwargs)
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in reversed(opened):
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    """The web game on 127.0.0.1 for a module of browser tests, with a SQLite file of its own."""
    db = tmp_path_factory.mktemp("web") / "browser.db"
    with ThreadServer(create_app(f"sqlite:///{db}", config=FAST)) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium for a module of browser tests (see browser_helpers.py)."""
    from browser_helpers import ARGS, ARTIFACTS, CHROMIUM, SHOTS, sync_api

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def pg_url() -> str | None:
    return os.environ.get(PG_URL_ENV) or None


DATABASES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgresql",
        id="postgresql",
        marks=pytest.mark.skipif(pg_url() is None, reason=f"{PG_URL_ENV} is not set"),
    ),
]


@pytest.fixture(params=DATABASES)
def any_db_url(request: pytest.FixtureRequest, db_url: str) -> str:
    """A SQLite file, then PostgreSQL when KOIKOI_TEST_DATABASE_URL is set."""
    if request.param == "sqlite":
        return db_url
    url = pg_url()
    assert url is not None
    return url


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # starlette.testclient warns that it prefers httpx2; the web extra pins httpx.
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.filterwarnings("ignore:Using `httpx`"))

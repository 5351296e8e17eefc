"""``scripts/loadtest.py`` on a few games: the report it writes, and on PostgreSQL the
hand-over of games to the process their clients use (``--affinity game``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "loadtest.py"
PG_URL_ENV = "KOIKOI_TEST_DATABASE_URL"

pytestmark = pytest.mark.multiprocess


def run_loadtest(tmp_path: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    out = tmp_path / "report.json"
    fixed = ["--rounds", "1", "--think", "0.01", "--target-ms", "1000000", "--timeout", "120"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *fixed, "--json", str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.exists(), done.stderr[-2000:]
    reports: list[dict[str, Any]] = json.loads(out.read_text())
    return done.returncode, reports


def test_one_process_on_sqlite(tmp_path: Path) -> None:
    status, [report] = run_loadtest(tmp_path, "--games", "3")
    assert status == 0, report["error_samples"]
    assert report["errors"] == 0 and report["lost_actions"] == 0
    # A one-round game may end after a few actions (or at the deal): the deals are
    # the server's, so only "some actions, every one stored" holds for every run.
    assert report["actions_acked"] == report["actions_stored"] > 0
    # The barrier: every client connected before any played, timed apart.
    assert report["barrier"] and report["connect_s"] is not None
    by_second = report["client_rtt_p95_by_second"]
    assert sum(n for _, n, _ in by_second) == report["actions_acked"]
    assert report["forwarded"] == report["handovers"] == 0


@pytest.mark.postgres
def test_games_move_to_the_process_of_their_clients(tmp_path: Path) -> None:
    """With affinity both players of a game use one process: a game created on the
    other one is handed over after its first forwarded action, so hardly any action
    crosses between the processes."""
    status, [report] = run_loadtest(
        tmp_path,
        "--games",
        "16",
        "--processes",
        "2",
        "--affinity",
        "game",
        "--database-url",
        os.environ[PG_URL_ENV],
    )
    assert status == 0, report["error_samples"]
    assert report["errors"] == 0 and report["lost_actions"] == 0
    assert report["affinity"] == "game"
    # 16 games on 2 processes, each created on a random one: some are created away
    # from their clients' process (all 16 on the right one: probability 2**-16).
    assert report["handovers"] >= 1
    assert report["forwarded"] <= 2 * report["handovers"]
    assert report["forwarded"] < report["actions_acked"] / 4

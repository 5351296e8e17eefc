"""``koikoi stats``: the terminal game's history in figures, as text and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from koikoi.cli import main
from koikoi.features.stats import summarize
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord, record_from_dict
from koikoi.game.rules import get_rules
from koikoi.tui.history import append_game

RULES = get_rules("nintendo").replace(game__rounds=2)


def finished(seed: int, opponent: str) -> GameRecord:
    match = Match(RULES, seed=seed)
    while not match.is_over:
        ids = match.legal_ids()
        match.apply(ids[seed % len(ids)])  # a different line of play per seed
    return GameRecord.from_match(
        match, players=["You", f"AI ({opponent})"], created="2026-02-01T00:00:00Z"
    )


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[GameRecord]]:
    monkeypatch.setenv("KOIKOI_HOME", str(tmp_path))
    path = tmp_path / "history.jsonl"
    records = [finished(s, o) for s, o in ((1, "Expert"), (2, "Casual"), (3, "Expert"))]
    for day, record in enumerate(records, 1):
        append_game(path, record, opponent="expert", finished=f"2026-02-0{day}T10:00:00Z")
    return path, records


def test_the_figures_in_words(
    capsys: pytest.CaptureFixture[str], history: tuple[Path, list[GameRecord]]
) -> None:
    path, records = history
    with path.open("a", encoding="utf-8") as out:
        out.write("{broken\n")
    assert main(["stats"]) == 0  # the default history: $KOIKOI_HOME/history.jsonl
    out = capsys.readouterr().out
    total = summarize([(r, 0) for r in records]).total
    assert f"History: {path}" in out
    assert "Skipped: line 4: not valid JSON" in out
    assert f"3 games: {total.wins} won, {total.losses} lost, {total.draws} drawn" in out
    assert f"net {total.net_points:+d}" in out
    assert "AI (Expert)  2 games" in out and "AI (Casual)  1 game," in out
    listed = [line.split()[:2] for line in out.splitlines() if "T10:00:00Z" in line]
    assert listed == [
        ["3", "2026-02-03T10:00:00Z"],
        ["2", "2026-02-02T10:00:00Z"],
        ["1", "2026-02-01T10:00:00Z"],
    ]


def test_json_is_the_summary_of_koikoi_stats(
    capsys: pytest.CaptureFixture[str], history: tuple[Path, list[GameRecord]]
) -> None:
    path, records = history
    assert main(["stats", "--history", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = summarize([(r, 0) for r in records]).to_dict()
    assert data["total"] == expected["total"]
    assert data["by_opponent"] == expected["by_opponent"]
    assert [g["number"] for g in data["games"]] == [1, 2, 3]
    assert data["games"][0]["finished"] == "2026-02-01T10:00:00Z"
    assert data["problems"] == [] and data["history"] == str(path)


def test_a_match_record_for_replay(
    capsys: pytest.CaptureFixture[str], history: tuple[Path, list[GameRecord]]
) -> None:
    path, records = history
    assert main(["stats", "--history", str(path), "--record", "2"]) == 0
    record = record_from_dict(json.loads(capsys.readouterr().out))
    assert record.to_dict() == records[1].to_dict()
    assert main(["stats", "--history", str(path), "--record", "4"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "koikoi: error: --record must be a match number from 1 to 3, not 4"


def test_no_history_yet(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["stats", "--history", str(tmp_path / "none.jsonl")]) == 0
    assert "No finished matches yet" in capsys.readouterr().out
    assert main(["stats", "--history", str(tmp_path / "none.jsonl"), "--record", "1"]) == 2
    assert "holds no finished match" in capsys.readouterr().err

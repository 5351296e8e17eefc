"""Saving, resuming and recording matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tui_driver import greedy_policy

from koikoi.game.errors import RecordError
from koikoi.game.record import load_record, replay
from koikoi.game.rules import get_rules
from koikoi.tui.controller import GameController
from koikoi.tui.saves import (
    data_home,
    latest_save,
    load_game,
    records_dir,
    restore_match,
    saves_dir,
)

RULES = get_rules("nintendo").replace(game__rounds=2)


def advance(game: GameController, moves: int) -> None:
    for _ in range(moves):
        if game.human_to_act:
            game.apply(greedy_policy(game.view()))
        else:
            game.step_opponent()


def finish(game: GameController) -> None:
    while not game.is_over:
        advance(game, 1)


def test_data_home_follows_koikoi_home_and_xdg(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KOIKOI_HOME", str(tmp_path / "kk"))
    assert data_home() == tmp_path / "kk"
    assert records_dir() == tmp_path / "kk" / "records"
    assert saves_dir() == tmp_path / "kk" / "saves"
    monkeypatch.delenv("KOIKOI_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_home() == tmp_path / "xdg" / "koikoi"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_home() == tmp_path / ".local" / "share" / "koikoi"


def test_a_saved_match_resumes_where_it_stopped_and_goes_on_the_same(tmp_path: Path) -> None:
    game = GameController(RULES, opponent="random", seed=11)
    advance(game, 9)
    path = game.save(tmp_path / "saves" / "game.json")
    data = json.loads(path.read_text())
    assert data["format"] == "koikoi-record" and data["finished"] is False
    assert data["meta"]["opponent"] == "random"
    saved = load_game(path)
    assert saved.seed == 11 and saved.rules == RULES and saved.opponent == "random"
    assert list(saved.actions) == game.match.actions
    resumed = GameController.from_saved(saved)
    assert resumed.view() == game.view()
    assert restore_match(saved).actions == game.match.actions
    # The opponent's choices depend on the seed and the move number only:
    # the resumed match goes on exactly as the uninterrupted one.
    finish(game)
    finish(resumed)
    assert resumed.match.actions == game.match.actions
    assert resumed.match.scores == game.match.scores


def test_a_finished_match_is_recorded_and_replays(tmp_path: Path) -> None:
    game = GameController(RULES, opponent="greedy", seed=5)
    finish(game)
    first = game.save_record(tmp_path / "records", stamp="t")
    second = game.save_record(tmp_path / "records", stamp="t")
    assert first.name == "koikoi-t-seed5.json" and second.name == "koikoi-t-seed5-2.json"
    record = load_record(first)
    assert record.finished and record.players == ["You", "AI (greedy)"]
    assert replay(record).scores == game.match.scores
    with pytest.raises(RecordError, match="finished: nothing to resume"):
        load_game(first)


def test_bad_save_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read"):
        load_game(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(RecordError, match="not valid JSON"):
        load_game(bad)
    other = tmp_path / "other.json"
    other.write_text('{"format": "something"}')
    with pytest.raises(RecordError, match="not a koikoi record"):
        load_game(other)
    # A tampered action is caught where it diverges.
    game = GameController(RULES, opponent="random", seed=3)
    advance(game, 4)
    path = game.save(tmp_path / "t.json")
    data = json.loads(path.read_text())
    data["actions"][0]["action"] = "koikoi"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match="action 1"):
        load_game(path)


def test_latest_save(tmp_path: Path) -> None:
    assert latest_save(tmp_path / "none") is None
    assert latest_save(tmp_path) is None
    game = GameController(RULES, opponent="random", seed=1)
    a = game.save(tmp_path / "a.json")
    advance(game, 2)
    b = game.save(tmp_path / "b.json")
    import os

    os.utime(a, (1, 1))
    assert latest_save(tmp_path) == b

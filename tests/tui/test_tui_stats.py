"""The history of finished matches and the statistics screen over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, TabbedContent
from tui_driver import greedy_policy, plain, play_until, wait_for

from koikoi.features.stats import summarize
from koikoi.game.engine import Match
from koikoi.game.errors import RecordError
from koikoi.game.record import GameRecord
from koikoi.game.rules import get_rules
from koikoi.game.views import view_of
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.history import (
    append_game,
    append_match,
    history_path,
    read_history,
    summary,
)
from koikoi.tui.replay import ReplayScreen
from koikoi.tui.screens import GameSettings, MatchEndScreen, NewGameScreen
from koikoi.tui.stats import HistoryReplayScreen, StatsScreen, finished_at, tally_table

pytestmark = pytest.mark.anyio

ONE_ROUND = get_rules("nintendo").replace(game__rounds=1)
THREE_ROUNDS = get_rules("nintendo").replace(game__rounds=3)


def finished_record(rules: object, seed: int, opponent: str) -> GameRecord:
    """A finished match: both players take the first legal action (greedy for seat 0)."""
    match = Match(rules, seed=seed)  # type: ignore[arg-type]
    while not match.is_over:
        view = view_of(match, match.current, with_history=False)
        match.apply(greedy_policy(view, koikoi=seed % 2 == 0))
    return GameRecord.from_match(
        match,
        players=["You", f"AI ({opponent})"],
        meta={"opponent": opponent, "app": "koikoi play"},
        created="2026-01-01T00:00:00Z",
    )


def write_history(path: Path, specs: list[tuple[object, int, str]]) -> list[GameRecord]:
    records = []
    for day, (rules, seed, opponent) in enumerate(specs, 1):
        record = finished_record(rules, seed, opponent)
        append_game(path, record, opponent=opponent, finished=f"2026-01-{day:02d}T12:00:00Z")
        records.append(record)
    return records


def test_the_history_file_lives_in_the_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KOIKOI_HOME", str(tmp_path / "home"))
    assert history_path() == tmp_path / "home" / "history.jsonl"


def test_a_history_keeps_every_finished_match_in_order(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "history.jsonl"
    assert read_history(path).games == ()  # no file yet: no games
    records = write_history(path, [(ONE_ROUND, 3, "expert"), (THREE_ROUNDS, 4, "level:2")])
    history = read_history(path)
    assert history.problems == ()
    assert [g.record.to_dict() for g in history.games] == [r.to_dict() for r in records]
    assert [(g.opponent, g.seat, g.line) for g in history.games] == [
        ("expert", 0, 1),
        ("level:2", 0, 2),
    ]
    assert summary(history) == summarize([(r, 0) for r in records])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["format"] == "koikoi-history"


def test_only_finished_matches_go_into_the_history(tmp_path: Path) -> None:
    match = Match(ONE_ROUND, seed=1)
    match.apply(match.legal_ids()[0])
    path = tmp_path / "history.jsonl"
    with pytest.raises(RecordError, match="not over"):
        append_match(path, match, opponent="expert")
    record = finished_record(ONE_ROUND, 1, "expert")
    with pytest.raises(RecordError, match="seat must be 0 or 1"):
        append_game(path, record, opponent="expert", seat=2)
    assert not path.exists()


def test_unreadable_lines_are_skipped_and_named(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    write_history(path, [(ONE_ROUND, 3, "expert")])
    good = path.read_text(encoding="utf-8")
    unfinished = json.loads(good)
    unfinished["record"]["finished"] = False
    other = json.loads(good)
    other["format"] = "something"
    with path.open("a", encoding="utf-8") as out:
        out.write('{"format": "koikoi-history", "vers\n')  # cut off by a crash
        out.write("\n")
        out.write(json.dumps(other) + "\n")
        out.write(json.dumps(unfinished) + "\n")
        out.write(good)
    history = read_history(path)
    assert [g.line for g in history.games] == [1, 6]
    assert history.problems == (
        "line 2: not valid JSON: Unterminated string starting at column 30",
        "line 4: format is 'something', expected 'koikoi-history'",
        "line 5: the record is not finished",
    )


def test_the_tally_table_shows_every_name_in_full() -> None:
    records = [finished_record(ONE_ROUND, s, "Level 3 · Casual with a long name") for s in (1, 2)]
    stats = summarize([(r, 0) for r in records])
    wide = plain_table(tally_table("By opponent", stats.by_opponent), width=120)
    assert "AI (Level 3 · Casual with a long name)" in wide
    narrow = plain_table(tally_table("By opponent", stats.by_opponent), width=76)
    assert "…" not in narrow  # a long name folds onto more lines, never cut
    for word in ["AI", "(Level", "3", "·", "Casual", "with", "a", "long", "name)"]:
        assert word in narrow
    tally = stats.by_opponent[0][1]
    assert f"{tally.wins}-{tally.losses}-{tally.draws}" in narrow


def plain_table(table: object, width: int) -> str:
    import io

    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(table)
    return console.export_text()


def test_finished_at_is_local_time_and_leaves_other_text_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert finished_at("2026-01-01T15:30:00Z") == "2026-01-02 00:30"
        assert finished_at("yesterday") == "yesterday"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def stats_app(tmp_path: Path, history: Path) -> KoiKoiApp:
    return KoiKoiApp(
        records=None, saves=tmp_path / "saves", pace=0.0, advisor="test-advisor", history=history
    )


async def test_the_statistics_open_from_the_new_game_screen_and_replay_a_match(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.jsonl"
    records = write_history(
        path, [(ONE_ROUND, 3, "expert"), (THREE_ROUNDS, 4, "level:2"), (ONE_ROUND, 5, "expert")]
    )
    stats = summarize([(r, 0) for r in records])
    app = stats_app(tmp_path, path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.press("f2")
        await wait_for(pilot, lambda: bool(app.screen.query("#st-totals")))
        screen = app.screen
        assert isinstance(screen, StatsScreen)
        assert "3 finished matches" in plain(screen.query_one("#st-title"))
        text = " ".join(
            plain(screen.query_one(f"#st-{part}"), width=78)
            for part in ("totals", "by-rules", "by-opponent")
        )
        text = " ".join(text.split())
        total = stats.total
        assert f"{total.wins} won, {total.losses} lost, {total.draws} drawn" in text
        assert f"Koi-koi calls: {total.koikoi_calls}" in text or total.koikoi_calls == 0
        for name, tally in (*stats.by_rules, *stats.by_opponent):
            assert name in text
            assert f"{tally.wins}-{tally.losses}-{tally.draws}" in text
        # The games, newest first; Enter replays the chosen one; q comes back.
        await pilot.press("g")
        table = screen.query_one("#st-games", DataTable)
        assert screen.query_one(TabbedContent).active == "st-list"
        assert table.row_count == 3
        assert [table.get_row_at(i)[0] for i in range(3)] == [
            finished_at(f"2026-01-0{d}T12:00:00Z") for d in (3, 2, 1)
        ]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        viewer = app.screen
        assert isinstance(viewer, HistoryReplayScreen)
        assert viewer.record.to_dict() == records[1].to_dict()
        await pilot.press("right", "q")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))


async def test_an_empty_history_says_how_to_fill_it(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    app = stats_app(tmp_path, path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        app.open_stats()
        await wait_for(pilot, lambda: bool(app.screen.query("#st-totals")))
        text = plain(app.screen.query_one("#st-totals"))
        assert "No finished matches yet" in text and str(path) in " ".join(text.split())
        problems = plain(app.screen.query_one("#st-problems"))
        assert "1 line of history.jsonl could not be read" in problems
        assert "line 1: not valid JSON" in problems


async def test_no_history_no_statistics_button(tmp_path: Path) -> None:
    app = KoiKoiApp(records=None, saves=tmp_path / "saves", pace=0.0, advisor="test-advisor")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        assert not app.screen.query("#stats")
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, NewGameScreen)


async def test_a_match_played_to_the_end_is_added_to_the_history(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    app = KoiKoiApp(
        settings=GameSettings(ONE_ROUND, "random", 3, 0.0),
        records=tmp_path / "records",
        saves=tmp_path / "saves",
        pace=0.0,
        stamp="test",
        advisor="test-advisor",
        history=path,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, greedy_policy, lambda p: p == "match_end")
        await wait_for(pilot, lambda: isinstance(app.screen, MatchEndScreen))
        game = app.game_screen
        assert game is not None
        history = read_history(path)
        assert len(history.games) == 1 and history.problems == ()
        entry = history.games[0]
        assert entry.opponent == "random" and entry.seat == 0
        assert entry.record.scores == list(game.game.match.scores)
        assert entry.record_file == str(game.record_path)
        assert entry.record.players == list(game.game.names)

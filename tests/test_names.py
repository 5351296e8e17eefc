"""Who a player is, named by one rule in every language (koikoi.features.names, issue #28
bugs 5 and 8): records keep identities, not names in the language the match was played in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from koikoi import i18n
from koikoi.cli import main
from koikoi.features.names import check_name, display_name, record_names, shown_name
from koikoi.features.opponents import level_choice
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord, Identity, load_record
from koikoi.game.rules import get_rules
from koikoi.tui.controller import GameController
from koikoi.tui.history import append_game

RULES = get_rules("nintendo").replace(game__rounds=1)
LEVEL = "level:1"


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    i18n.set_language("en")


def played_in_japanese(tmp_path: Path) -> Path:
    """A match of ``koikoi play`` in Japanese, saved as its record (as the terminal game does)."""
    i18n.set_language("ja")
    game = GameController(RULES, opponent=LEVEL, seed=3)
    while not game.is_over:
        if game.human_to_act:
            game.apply(game.match.legal_ids()[0])
        else:
            game.step_opponent()
    path = game.save_record(tmp_path / "records", stamp="t")
    i18n.set_language("en")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_a_match_played_in_japanese_is_named_in_english_by_stats_and_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Regression (issue #28, bug 5): the record kept "あなた" and "AI（入門）".
    path = played_in_japanese(tmp_path)
    title = level_choice(LEVEL).level.title  # type: ignore[union-attr]
    history = tmp_path / "history.jsonl"
    append_game(history, load_record(path), opponent=LEVEL, finished="2026-02-01T10:00:00Z")

    stats = run(capsys, "--lang", "en", "stats", "--history", str(history))
    assert f"AI ({title})  1 game" in stats
    replay = run(capsys, "--lang", "en", "replay", str(path))
    assert f"Players: player 0 (You) and player 1 (AI ({title}))." in replay
    for out in (stats, replay):
        assert "あなた" not in out and "AI（" not in out

    # ... and in Japanese when asked.
    ja = run(capsys, "--lang", "ja", "stats", "--history", str(history))
    assert "AI（入門）" in ja and f"AI ({title})" not in ja


def test_identities_are_named_in_each_language() -> None:
    ai = Identity.ai("level:8", "Expert")
    assert [display_name(i, "en") for i in (Identity.you(), ai, Identity.guest(2))] == [
        "You",
        "AI (Expert)",
        "Guest 2",
    ]
    assert [display_name(i, "ja") for i in (Identity.you(), ai, Identity.guest(2))] == [
        "あなた",
        "AI（達人）",
        "ゲスト2",
    ]
    assert display_name(Identity.person("Hana"), "ja") == "Hana"
    assert shown_name("Guest 1", "ja") == "ゲスト1" and shown_name("Hana", "ja") == "Hana"


def old_record(names: list[str]) -> dict[str, object]:
    m = Match(RULES, seed=2)
    while not m.is_over:
        m.apply(m.legal_ids()[0])
    data: dict[str, object] = json.loads(GameRecord.from_match(m, players=names).to_json())
    data["version"] = 1
    del data["identities"]
    return data


def test_an_old_record_with_names_only_shows_them_as_before(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old_record(["あなた", "alice"]), ensure_ascii=False), "utf-8")
    record = load_record(path)
    assert record.version == 1
    assert record_names(record, "en") == ["あなた", "alice"]
    out = run(capsys, "--lang", "en", "replay", str(path))
    assert "Players: player 0 (あなた) and player 1 (alice)." in out
    # An old record's English AI title is still an AI, named in the language shown.
    ai = load_record(json.dumps(old_record(["You", "AI (Expert)"])))
    assert record_names(ai, "ja") == ["あなた", "AI（達人）"]


@pytest.mark.parametrize(
    "name",
    [
        "AI (Expert)",
        "ai(expert)",
        "AI（上級）",
        "AI （達人）",
        "Guest 2",
        "guest",
        "ゲスト2",
        "You",
        "あなた",
    ],
)
def test_a_person_may_not_take_someone_elses_name(name: str) -> None:
    with pytest.raises(InvalidInputError, match="not an AI's title such as 'AI \\(Expert\\)'"):
        check_name(name)


@pytest.mark.parametrize(
    ("name", "kept"), [("Hana", "Hana"), (" Ai  Sato ", "Ai Sato"), ("Guesthouse", "Guesthouse")]
)
def test_ordinary_names_are_kept(name: str, kept: str) -> None:
    assert check_name(name) == kept

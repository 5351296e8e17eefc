"""One naming rule in the web game (issue #28, bugs 5 and 8): records name players in the
language asked, the leaderboard never shows "?", and nobody may take an AI's title."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_server_players import establish
from test_server_storage import make_game

from koikoi import i18n
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord
from koikoi.game.rules import get_rules
from koikoi.server.players import PlayerStore, key_hash
from koikoi.server.storage import Storage
from koikoi.tui.controller import GameController

RULES = get_rules("nintendo").replace(game__rounds=1)


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    i18n.set_language("en")


def test_a_record_played_in_japanese_replays_with_english_names(
    client: TestClient, tmp_path: Path
) -> None:
    # Regression (issue #28, bug 5): the web replay said "あなた" and "AI（入門）" in English.
    i18n.set_language("ja")
    game = GameController(RULES, opponent="level:1", seed=3)
    while not game.is_over:
        if game.human_to_act:
            game.apply(game.match.legal_ids()[0])
        else:
            game.step_opponent()
    path = game.save_record(tmp_path, stamp="t")
    i18n.set_language("en")
    body = {"record": json.loads(path.read_text("utf-8"))}
    english = client.post("/api/replay?lang=en", json=body)
    assert english.status_code == 200, english.text
    assert english.json()["names"] == ["You", "AI (Novice)"]
    assert english.json()["identities"] == [
        {"kind": "you"},
        {"kind": "ai", "name": "Novice", "agent": "level:1"},
    ]
    japanese = client.post("/api/replay?lang=ja", json=body).json()
    assert japanese["names"] == ["あなた", "AI（入門）"]


def finished_record(seed: int) -> GameRecord:
    m = Match(get_rules("nintendo").replace(game__rounds=2), seed=seed)
    while not m.is_over:
        m.apply(m.legal_ids()[-1])
    return GameRecord.from_match(m, players=["x", "y"], created="2024-01-01T00:00:00Z")


def test_the_leaderboard_names_an_unnamed_player_a_guest(db_url: str) -> None:
    # Regression (issue #28, bug 8): a player who never set a name was "?".
    store = Storage(db_url)
    try:
        players = PlayerStore(store)
        store.finish_hooks.append(players.rate_game)
        a = players.ensure_player(key_hash(secrets.token_urlsafe(32)), None)
        b = players.ensure_player(key_hash(secrets.token_urlsafe(32)), "Bea")
        game = make_game(store, seed=4)
        players.link(a.id, game.id, 0)
        players.link(b.id, game.id, 1)
        establish(store, players, a.id, b.id)
        rec = finished_record(4)
        store.finish_game(game.id, rec.to_json(), rec.scores, rec.winner)
        humans = [r["name"] for r in players.leaderboard("nintendo") if r["kind"] == "human"]
        assert "?" not in humans and "Bea" in humans
        (guest,) = [n for n in humans if n != "Bea"]
        assert guest.startswith("Guest ") and len(guest) == len("Guest ABCD")
        again = [r["name"] for r in players.leaderboard("nintendo") if r["kind"] == "human"]
        assert guest in again  # stable
    finally:
        store.dispose()


def test_an_unnamed_friend_is_named_by_seat_in_the_record(client: TestClient) -> None:
    r = client.post("/api/games", json={"mode": "friend", "name": "Hana", "seed": 5})
    if r.status_code != 200:
        r = client.post("/api/games", json={"mode": "friend", "name": "Hana"})
    assert r.status_code == 200, r.text
    from koikoi.features.names import seat_identity
    from koikoi.server.records import record_of

    room = client.app.state.hub.rooms[r.json()["game"]].room  # type: ignore[attr-defined]
    seats = [s.public() for s in room.seats]
    record = record_of(room.match, game_id=room.id, mode="friend", players=seats)
    assert record.players == ["Hana", "Guest 2"]
    assert [seat_identity(i, s).kind for i, s in enumerate(seats)] == ["person", "guest"]


@pytest.mark.parametrize("name", ["AI (Expert)", "AI（上級）", "Guest 1", "You"])
def test_a_reserved_name_is_a_clear_400(client: TestClient, name: str) -> None:
    for path, body in (
        ("/api/games", {"mode": "ai", "name": name}),
        ("/api/players/me", {"key": secrets.token_urlsafe(32), "name": name}),
    ):
        r = client.post(path, json=body)
        assert r.status_code == 400, (path, r.text)
        message = r.json()["message"]
        assert message.startswith("name must be your own name, not an AI's title"), message

"""Issue #29: ratings people can trust, names that reach no store unchecked, and no
player row made by a read.

SQLite, then PostgreSQL when ``KOIKOI_TEST_DATABASE_URL`` is set.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient
from test_server_players import establish, play_both, wait_stored
from test_server_protocol import new_game

from koikoi.features.ratings import PAIR_GAMES_PER_WINDOW, PAIR_WINDOW_SECONDS, PROVISIONAL_GAMES
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord
from koikoi.game.rules import Rules, get_rules
from koikoi.server.players import PlayerStore, key_hash
from koikoi.server.rooms import token_hash
from koikoi.server.storage import NewGame, SeatData, Storage


def device_key() -> str:
    return secrets.token_urlsafe(32)


# ------------------------------------------------------------------- names

BAD_NAMES = ["Ao\x00i", "Ao\ni", "Ao\x1bi", "Ao\x7fi", "Ao\x85i"]


def name_requests(client: TestClient, name: str) -> dict[str, Any]:
    """Each endpoint that takes a name, asked with ``name`` (as JSON escapes: a lone
    surrogate travels as ``\\ud800``)."""
    friend = new_game(client, mode="friend")
    bodies: dict[str, dict[str, Any]] = {
        "/api/games": {"mode": "friend"},
        "/api/join": {"invite": friend["invite"]},
        "/api/players/me": {"key": device_key()},
        "/api/players/games": {
            "key": device_key(),
            "game": friend["game"],
            "token": friend["token"],
        },
        "/api/lobby/quick": {"key": device_key(), "rules": "nintendo"},
    }
    headers = {"content-type": "application/json"}
    return {
        path: client.post(path, content=json.dumps({**body, "name": name}), headers=headers)
        for path, body in bodies.items()
    }


@pytest.mark.parametrize("name", BAD_NAMES, ids=lambda n: f"U+{ord(n[2]):04X}")
def test_control_characters_in_a_name_are_a_400_on_every_store(
    any_db_url: str, make_client: Callable[..., TestClient], name: str
) -> None:
    # Regression (#29 bug 4): PostgreSQL answered a NUL with 503 "the database is not
    # answering" and an error log per request; SQLite stored it.
    client = make_client(url=any_db_url)
    for endpoint, r in name_requests(client, name).items():
        assert r.status_code == 400, (endpoint, r.status_code, r.text)
        data = r.json()
        assert data["code"] == "bad_field", endpoint
        assert "name" in data["message"] and "control character" in data["message"], endpoint
        assert f"U+{ord(name[2]):04X}" in data["message"]
    assert client.get("/healthz").status_code == 200


def test_ordinary_names_still_pass(client: TestClient) -> None:
    for endpoint, r in name_requests(client, "Ao i 青い").items():
        assert r.status_code == 200, (endpoint, r.text)


# ------------------------------------------------------------------ players


def test_reading_a_profile_makes_no_player(client: TestClient) -> None:
    # Regression (#29 bug 9): every new key asking /api/players/me made a player row.
    store: PlayerStore = client.app.state.players.store  # type: ignore[attr-defined]
    keys = [device_key() for _ in range(5)]
    for key in keys:
        r = client.post("/api/players/me", json={"key": key})
        assert r.status_code == 200 and r.json() == {"type": "player", "name": "", "games": 0}
    assert all(store.find_player(key_hash(k)) is None for k in keys)
    # Giving a name is a write: the player is made then, once.
    named = client.post("/api/players/me", json={"key": keys[0], "name": "Aoi"})
    assert named.json() == {"type": "player", "name": "Aoi", "games": 0}
    again = client.post("/api/players/me", json={"key": keys[0]})
    assert again.json() == {"type": "player", "name": "Aoi", "games": 0}
    assert store.find_player(key_hash(keys[0])) is not None


# ----------------------------------------------------------------- ratings


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def finish(store: Storage, game_id: str, seed: int) -> None:
    """Finish a stored game with some two-round record (the result is what counts)."""
    m = Match(get_rules("nintendo").replace(game__rounds=2), seed=seed)
    while not m.is_over:
        m.apply(m.legal_ids()[-1])
    rec = GameRecord.from_match(m, players=["A", "B"])
    store.finish_game(game_id, rec.to_json(), rec.scores, rec.winner)


def people_game(
    store: Storage, players: PlayerStore, a: str, b: str, seed: int, rules: Rules | None = None
) -> str:
    """A game between players ``a`` (seat 0) and ``b`` (seat 1), finished."""
    rules = rules or get_rules("nintendo")
    game = NewGame(
        id=secrets.token_urlsafe(9),
        mode="friend",
        rules_name=rules.name,
        rules_toml=rules.to_toml(),
        seed=seed,
        watch_hash=token_hash(secrets.token_urlsafe(32)),
        seats=(
            SeatData(0, "human", token_hash=token_hash(secrets.token_urlsafe(32))),
            SeatData(1, "human", token_hash=token_hash(secrets.token_urlsafe(32))),
        ),
    )
    store.create_game(game)
    players.link(a, game.id, 0)
    players.link(b, game.id, 1)
    finish(store, game.id, seed)
    return game.id


def test_repeated_games_of_one_pair_count_twice_a_day(any_db_url: str) -> None:
    store = Storage(any_db_url)
    try:
        clock = Clock()
        players = PlayerStore(store, clock)
        store.finish_hooks.append(players.rate_game)
        # Names of this run only (a PostgreSQL database outlives the test).
        fa, fb = f"Farmer A {secrets.token_hex(4)}", f"Farmer B {secrets.token_hex(4)}"
        a = players.ensure_player(key_hash(device_key()), fa).id
        b = players.ensure_player(key_hash(device_key()), fb).id
        c = players.ensure_player(key_hash(device_key()), "Chie").id
        # Not established (no games against the AI): nothing is rated.
        people_game(store, players, a, b, seed=1)
        assert not rated(players, fa) and not rated(players, fb)
        establish(store, players, a, b, c)
        for seed in range(20):  # the same two, 20 times in a row
            clock.now += 6
            people_game(store, players, a, b, seed=seed)
        assert rated(players, fa)["games"] == PAIR_GAMES_PER_WINDOW
        assert rated(players, fb)["games"] == PAIR_GAMES_PER_WINDOW
        # Another opponent counts; a day later the pair counts again.
        people_game(store, players, a, c, seed=3)
        assert rated(players, fa)["games"] == PAIR_GAMES_PER_WINDOW + 1
        clock.now += PAIR_WINDOW_SECONDS
        people_game(store, players, a, b, seed=4)
        assert rated(players, fa)["games"] == PAIR_GAMES_PER_WINDOW + 2
        assert rated(players, fa)["provisional"] is True
    finally:
        store.dispose()


def rated(players: PlayerStore, name: str, rules: str = "nintendo") -> dict[str, Any]:
    return next((r for r in players.leaderboard(rules) if r["name"] == name), {})


def test_house_rules_named_after_a_preset_are_not_rated(
    any_db_url: str, make_client: Callable[..., TestClient]
) -> None:
    # Regression (#29 bug 6): custom rules named "nintendo" with one round were rated on
    # the nintendo leaderboard.
    store = Storage(any_db_url)
    try:
        players = PlayerStore(store)
        store.finish_hooks.append(players.rate_game)
        aoi = f"Aoi {secrets.token_hex(4)}"  # of this run only
        a = players.ensure_player(key_hash(device_key()), aoi).id
        b = players.ensure_player(key_hash(device_key()), "Ben").id
        establish(store, players, a, b)
        one_round = get_rules("nintendo").replace(game__rounds=1)
        assert one_round.name == "nintendo"
        people_game(store, players, a, b, seed=5, rules=one_round)
        assert not rated(players, aoi)
        people_game(store, players, a, b, seed=6)  # the preset itself
        assert rated(players, aoi)["games"] == 1
    finally:
        store.dispose()
    # At the API, house rules do not keep a preset's name.
    client = make_client(url=any_db_url)
    house = 'name = "nintendo"\n[game]\nrounds = 1\n'
    g = new_game(client, mode="friend", house_rules=house)
    assert g["rules"] == "nintendo+house"  # as house rules without a name are called
    assert client.app.state.hub.rooms[g["game"]].room.rules.game.rounds == 1  # type: ignore[attr-defined]


def test_provisional_ratings_are_kept_off_the_ranked_list(client: TestClient) -> None:
    service = client.app.state.players  # type: ignore[attr-defined]
    store = service.store
    storage = store.storage
    a = store.ensure_player(key_hash(device_key()), "Aoi").id
    others = [store.ensure_player(key_hash(device_key()), f"O{i}").id for i in range(5)]
    establish(storage, store, a, *others)
    for i in range(PROVISIONAL_GAMES - 1):
        people_game(storage, store, a, others[i // 2], seed=i)
    data = client.get("/api/leaderboard?rules=nintendo").json()
    assert "Aoi" in [p["name"] for p in data["provisional"]]
    assert "Aoi" not in [p["name"] for p in data["players"]]
    assert all(p["provisional"] for p in data["provisional"])
    people_game(storage, store, a, others[4], seed=99)  # the tenth rated game
    data = client.get("/api/leaderboard?rules=nintendo").json()
    (aoi,) = [p for p in data["players"] if p["name"] == "Aoi"]
    assert aoi["games"] == PROVISIONAL_GAMES and aoi["provisional"] is False
    assert "Aoi" not in [p["name"] for p in data["provisional"]]


def test_two_keys_farming_quick_matches_never_reach_the_leaderboard(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acceptance's rating farm (#29 bug 2): two device keys from one address play 20
    one-round quick matches; one used to reach 1666 and first place. Now neither is on
    the leaderboard, ranked or provisional."""
    seeds = iter(range(1000, 2000))
    monkeypatch.setattr(secrets, "randbelow", lambda n: next(seeds) * 7919)
    a, b = device_key(), device_key()
    played = 0
    for _ in range(20):
        first = quick(client, a, "Farmer A")
        second = quick(client, b, "Farmer B")
        if first["type"] == "waiting":
            first = quick(client, a, "Farmer A")
        assert first["type"] == second["type"] == "matched", (first, second)
        tokens = {first["seat"]: first["token"], second["seat"]: second["token"]}
        room = client.app.state.hub.rooms[first["game"]].room  # type: ignore[attr-defined]
        if not room.is_over:
            play_both(client, tokens)
        wait_stored(client, first["game"])
        played += 1
    assert played == 20
    data = client.get("/api/leaderboard?rules=nintendo").json()
    names = [p["name"] for p in data["players"] + data["provisional"]]
    assert "Farmer A" not in names and "Farmer B" not in names
    assert all(p["kind"] == "ai" for p in data["players"])
    for key in (a, b):  # the games were played and are in the statistics
        stats = client.post("/api/players/stats", json={"key": key}).json()
        assert stats["summary"]["total"]["games"] == 20


def quick(client: TestClient, key: str, name: str) -> dict[str, Any]:
    r = client.post(
        "/api/lobby/quick", json={"key": key, "rules": "nintendo", "rounds": 1, "name": name}
    )
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data

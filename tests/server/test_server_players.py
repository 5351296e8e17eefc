"""Players without accounts: device keys, linked seats, statistics and replays.

Storage on SQLite (and PostgreSQL when KOIKOI_TEST_DATABASE_URL is set), then the
``/api/players/...`` requests through the app.
"""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from starlette.testclient import TestClient
from test_server_protocol import connect, new_game
from test_server_storage import make_game

from koikoi.features.ratings import ESTABLISHED_AI_GAMES
from koikoi.features.stats import game_line
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord
from koikoi.game.rules import get_rules
from koikoi.server.players import PlayerStore, key_hash
from koikoi.server.rooms import token_hash
from koikoi.server.storage import NewGame, SeatData, Storage


def device_key() -> str:
    return secrets.token_urlsafe(32)


def finished_record(seed: int, players: list[str]) -> GameRecord:
    m = Match(get_rules("nintendo").replace(game__rounds=2), seed=seed)
    while not m.is_over:
        m.apply(m.legal_ids()[-1])
    return GameRecord.from_match(m, players=players, created="2024-01-01T00:00:00Z")


def establish(store: Storage, players: PlayerStore, *player_ids: str) -> None:
    """Give each player the finished games against the AI that make them established
    (one-round games, which are not rated themselves)."""
    one_round = get_rules("nintendo").replace(game__rounds=1)
    for player_id in player_ids:
        for seed in range(ESTABLISHED_AI_GAMES):
            game = NewGame(
                id=secrets.token_urlsafe(9),
                mode="ai",
                rules_name=one_round.name,
                rules_toml=one_round.to_toml(),
                seed=seed,
                watch_hash=token_hash(secrets.token_urlsafe(32)),
                seats=(
                    SeatData(0, "human", token_hash=token_hash(secrets.token_urlsafe(32))),
                    SeatData(1, "ai", name="AI (greedy)", agent="greedy"),
                ),
            )
            store.create_game(game)
            assert players.link(player_id, game.id, 0) is None
            m = Match(one_round, seed=seed)
            while not m.is_over:
                m.apply(m.legal_ids()[-1])
            rec = GameRecord.from_match(m, players=["P", "AI (greedy)"])
            store.finish_game(game.id, rec.to_json(), rec.scores, rec.winner)


# ------------------------------------------------------------------- storage


def test_player_store(any_db_url: str) -> None:
    store = Storage(any_db_url)
    try:
        players = PlayerStore(store)
        me, other = key_hash(device_key()), key_hash(device_key())
        assert players.find_player(me) is None
        alice = players.ensure_player(me, "Alice")
        assert alice.name == "Alice" and alice.games == 0
        assert players.ensure_player(me, None) == alice  # no name: the name is kept
        renamed = players.ensure_player(me, "Ally")
        assert renamed.id == alice.id and renamed.name == "Ally"
        bob = players.ensure_player(other, "Bob")
        assert bob.id != alice.id

        games = [make_game(store, seed=s) for s in (1, 2, 3)]
        assert players.link(alice.id, games[0].id, 0) is None
        assert players.link(alice.id, games[0].id, 0) is None  # again: nothing changes
        assert players.link(bob.id, games[0].id, 0) == "seat"  # someone else's seat
        assert players.link(alice.id, games[0].id, 1) == "game"  # both seats of one game
        assert players.link(bob.id, games[0].id, 1) is None
        assert players.link(alice.id, games[1].id, 1) is None
        assert players.link(alice.id, games[2].id, 0) is None
        assert players.find_player(me).games == 3  # type: ignore[union-attr]
        assert players.linked_seat(alice.id, games[1].id) == 1
        assert players.linked_seat(bob.id, games[1].id) is None

        # Only finished games with a record count, oldest first.
        assert players.finished_games(alice.id) == []
        establish(store, players, alice.id, bob.id)  # rated games need established players
        store.finish_hooks.append(players.rate_game)  # as the app does
        rec1 = finished_record(1, ["Ally", "Bob"])
        store.finish_game(games[0].id, rec1.to_json(), rec1.scores, rec1.winner)
        rec2 = finished_record(2, ["AI (Casual)", "Ally"])
        store.finish_game(games[1].id, rec2.to_json(), rec2.scores, rec2.winner)
        mine = players.finished_games(alice.id)[-2:]  # after the establishing games
        assert [(g, seat) for g, seat, _, _ in mine] == [(games[0].id, 0), (games[1].id, 1)]
        assert mine[0][2] <= mine[1][2]
        assert [g for g, *_ in players.finished_games(alice.id, limit=1)] == [games[1].id]
        theirs = players.finished_games(bob.id)[-1:]
        assert [(g, seat) for g, seat, _, _ in theirs] == [(games[0].id, 1)]
        # The first game had both seats linked: rated, in the finishing transaction; the
        # second had one seat linked and no AI: not rated.
        board = {row["name"]: row for row in players.leaderboard("nintendo")}
        r0, r1 = expected_ratings(rec1.winner)
        assert board["Ally"]["rating"] == pytest.approx(r0, abs=0.05)
        assert board["Bob"]["rating"] == pytest.approx(r1, abs=0.05)
        assert board["Ally"]["games"] == board["Bob"]["games"] == 1
        assert players.rated_rules() == ["nintendo"]
    finally:
        store.dispose()


# ----------------------------------------------------------------------- API


def wait_stored(client: TestClient, game: str) -> None:
    """Until the finished game's result is stored (it is stored after the last state
    is sent)."""
    import time

    live = client.app.state.hub.rooms[game]  # type: ignore[attr-defined]
    deadline = time.monotonic() + 20
    while not live.finished_stored:
        assert time.monotonic() < deadline, "the finished game was never stored"
        time.sleep(0.02)


def play_out(client: TestClient, token: str, seat: int) -> None:
    """Play ``seat``'s first legal action until the match is over (the AI moves)."""
    ws, ctx = connect(client, token, "human")
    try:
        state = ws.log[1]
        while not state["over"]:
            v = state["view"]
            if v["current"] == seat and v["legal"]:
                ws.send({"type": "act", "action": v["legal"][0]["id"], "seq": state["seq"]})
            state = ws.recv_type("state", timeout=20)
    finally:
        ctx.__exit__(None, None, None)


def ai_game(client: TestClient, key: str, seed: int, **body: Any) -> dict[str, Any]:
    body.setdefault("rounds", 1)
    g = new_game(client, mode="ai", agent="greedy", seed=seed, **body)
    r = client.post("/api/players/games", json={"key": key, "game": g["game"], "token": g["token"]})
    assert r.status_code == 200, r.text
    assert r.json() == {"type": "linked", "game": g["game"], "seat": g["seat"]}
    return g


def test_statistics_of_a_key_are_its_own(client: TestClient) -> None:
    mine, theirs = device_key(), device_key()
    r = client.post("/api/players/me", json={"key": mine, "name": "  Aiko  "})
    assert r.json() == {"type": "player", "name": "Aiko", "games": 0}
    g1 = ai_game(client, mine, seed=3)
    g2 = ai_game(client, mine, seed=4, seat=1, rules="koikoi-japan")
    g3 = ai_game(client, theirs, seed=5)
    unfinished = ai_game(client, mine, seed=6)
    for g in (g1, g2, g3):
        play_out(client, g["token"], g["seat"])
        wait_stored(client, g["game"])

    stats = client.post("/api/players/stats", json={"key": mine})
    assert stats.status_code == 200, stats.text
    data = stats.json()
    assert data["name"] == "Aiko"
    summary = data["summary"]
    assert summary["total"]["games"] == 2
    listed = [g["game_id"] for g in summary["games"]]
    assert listed == [g1["game"], g2["game"]]  # oldest first; not theirs, not unfinished
    assert unfinished["game"] not in listed and g3["game"] not in listed
    assert {b["name"] for b in summary["by_rules"]} == {"nintendo", "koikoi-japan"}
    assert [b["name"] for b in summary["by_opponent"]] == ["AI (greedy)"]
    # Each line is koikoi.features.stats' view of the stored record from the linked seat.
    for g, line in zip((g1, g2), summary["games"], strict=True):
        rec = client.post(f"/api/games/{g['game']}/record", json={"token": g["token"]})
        from koikoi.game.record import load_record

        expected = game_line(load_record(rec.text), g["seat"]).to_dict()
        assert {k: line[k] for k in expected} == expected
        assert line["seat"] == g["seat"] and line["finished_at"] > 0

    other = client.post("/api/players/stats", json={"key": theirs}).json()
    assert [g["game_id"] for g in other["summary"]["games"]] == [g3["game"]]

    # Replays: of the key's own finished games only.
    replay = client.post("/api/players/replay", json={"key": mine, "game": g1["game"]})
    assert replay.status_code == 200 and replay.json()["frames"]
    assert replay.json()["seat"] == g1["seat"]
    refused = client.post("/api/players/replay", json={"key": theirs, "game": g1["game"]})
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    early = client.post("/api/players/replay", json={"key": mine, "game": unfinished["game"]})
    assert early.status_code == 409 and early.json()["code"] == "not_finished"


def test_links_need_the_seat_token(client: TestClient) -> None:
    key, other = device_key(), device_key()
    g = new_game(client, mode="friend", seed=1)
    j = client.post("/api/join", json={"invite": g["invite"]}).json()

    def link(k: str, game: str, token: str) -> Any:
        return client.post("/api/players/games", json={"key": k, "game": game, "token": token})

    watch = link(key, g["game"], g["watch"])
    assert watch.status_code == 404 and watch.json()["code"] == "unknown_token"
    other_game = new_game(client, mode="friend", seed=2)
    wrong = link(key, other_game["game"], g["token"])
    assert wrong.status_code == 404 and "not a seat token of that game" in wrong.json()["message"]
    assert link(key, g["game"], g["token"]).status_code == 200
    taken = link(other, g["game"], g["token"])
    assert taken.status_code == 409 and taken.json()["code"] == "already_linked"
    both = link(key, g["game"], j["token"])
    assert both.status_code == 409 and "other seat" in both.json()["message"]
    assert link(other, g["game"], j["token"]).json()["seat"] == j["seat"]


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({}, "missing_field", "'key'"),
        ({"key": "short"}, "bad_field", "device key"),
        ({"key": "x" * 129}, "bad_field", "32 to 128"),
        ({"key": "a b" * 20}, "bad_field", "URL-safe"),
        ({"key": 12345}, "bad_field", "device key"),
        ({"key": "k" * 43, "token": "t" * 43}, "unexpected_field", "no field 'token'"),
        ({"key": "k" * 43}, "unknown_player", "play a game in this browser first"),
    ],
)
def test_bad_keys_are_refused_clearly(
    client: TestClient, body: dict[str, Any], code: str, words: str
) -> None:
    r = client.post("/api/players/stats", json=body)
    assert r.status_code == (404 if code == "unknown_player" else 400)
    data = r.json()
    assert data["type"] == "error" and data["code"] == code and words in data["message"]


def test_bad_player_requests_change_nothing(client: TestClient) -> None:
    key = device_key()
    r = client.post("/api/players/me", json={"key": key, "name": "n" * 41})
    assert r.status_code == 413 and r.json()["code"] == "too_large"
    assert client.post("/api/players/stats", json={"key": key}).json()["code"] == "unknown_player"
    r = client.post("/api/players/replay", json={"key": key})
    assert r.status_code == 400 and r.json()["code"] == "missing_field"
    r = client.post("/api/players/replay", json={"key": key, "game": "../x"})
    assert r.status_code == 400 and "game id" in r.json()["message"]
    r = client.post("/api/players/games", json={"key": key, "game": "abc", "token": "no"})
    assert r.status_code == 400 and "token" in r.json()["message"]
    assert client.post("/api/players/stats", json={"key": key}).json()["code"] == "unknown_player"
    empty = client.post("/api/players/me", json={"key": key}).json()
    assert empty == {"type": "player", "name": "", "games": 0}
    # A read makes no player (#29): the key is still unknown until it writes something.
    assert client.post("/api/players/stats", json={"key": key}).json()["code"] == "unknown_player"
    client.post("/api/players/me", json={"key": key, "name": "Aoi"})
    stats = client.post("/api/players/stats", json={"key": key}).json()
    assert stats["summary"]["total"]["games"] == 0 and stats["summary"]["games"] == []


def test_the_stats_page_is_served(client: TestClient) -> None:
    r = client.get("/stats")
    assert r.status_code == 200 and "stats.js" in r.text
    assert "script-src 'self'" in r.headers["content-security-policy"]


# --------------------------------------------------------- lobby and ratings


def expected_ratings(winner: int | None) -> tuple[float, float]:
    """Both sides' ratings after one game from the start rating (seat 0, seat 1)."""
    from koikoi.features.ratings import Rating, update

    s0 = 0.5 if winner is None else float(winner == 0)
    return (
        update(Rating(), [(Rating(), s0)]).rating,
        update(Rating(), [(Rating(), 1 - s0)]).rating,
    )


def board(client: TestClient, rules: str = "nintendo") -> dict[str, dict[str, Any]]:
    """Everyone on the leaderboard, ranked or provisional."""
    r = client.get(f"/api/leaderboard?rules={rules}")
    assert r.status_code == 200, r.text
    data = r.json()
    return {p["name"]: p for p in data["players"] + data["provisional"]}


def test_a_game_against_the_ai_rates_both_sides_once(client: TestClient) -> None:
    key = device_key()
    client.post("/api/players/me", json={"key": key, "name": "Rin"})
    # The preset as it is (leaflet: 6 rounds): only unmodified presets are rated.
    g = ai_game(client, key, seed=8, rules="leaflet", rounds=None)
    play_out(client, g["token"], g["seat"])
    wait_stored(client, g["game"])
    room = client.app.state.hub.rooms[g["game"]].room  # type: ignore[attr-defined]
    mine, ai = expected_ratings(room.match.winner)
    rows = board(client, "leaflet")
    # One rated game: Rin's rating is provisional, listed apart from the ranked list.
    data = client.get("/api/leaderboard?rules=leaflet").json()
    assert [p["name"] for p in data["provisional"]] == ["Rin"]
    assert "Rin" not in [p["name"] for p in data["players"]]
    assert rows["Rin"]["provisional"] is True
    assert rows["Rin"]["games"] == 1 and rows["Rin"]["kind"] == "human"
    assert rows["Rin"]["rating"] == pytest.approx(mine, abs=0.05)
    assert rows["AI (greedy)"]["rating"] == pytest.approx(ai, abs=0.05)
    assert rows["AI (greedy)"]["kind"] == "ai" and rows["AI (greedy)"]["games"] == 1
    assert rows["Rin"]["rd"] < 350
    # Every AI level is on the board, unrated ones at the start rating.
    assert rows["AI (Expert)"]["games"] == 0 and rows["AI (Expert)"]["rating"] == 1500
    assert client.get("/api/leaderboard?rules=nintendo").json()["players"][0]["games"] == 0
    # Rated once: the hook does nothing the second time.
    service = client.app.state.players  # type: ignore[attr-defined]
    with service.store.engine.begin() as conn:
        assert service.store.rate_game(conn, g["game"]) is False
    assert board(client, "leaflet")["Rin"]["games"] == 1
    bad = client.get("/api/leaderboard?rules=nope")
    assert bad.status_code == 400 and "allowed" in bad.json()["message"]


def play_both(client: TestClient, tokens: dict[int, str]) -> None:
    """Both seats connected; whoever is to act plays its first legal action."""
    socks = {}
    ctxs = []
    try:
        for seat, token in tokens.items():
            ws, ctx = connect(client, token, f"seat {seat}")
            socks[seat] = ws
            ctxs.append(ctx)
        last = {seat: ws.log[1] for seat, ws in socks.items()}
        while not last[0]["over"]:
            cur = last[0]["view"]["current"]
            mine = last[cur]
            socks[cur].send(
                {"type": "act", "action": mine["view"]["legal"][0]["id"], "seq": mine["seq"]}
            )
            for seat, ws in socks.items():
                last[seat] = ws.recv_type("state", timeout=20)
    finally:
        for ctx in ctxs:
            ctx.__exit__(None, None, None)


def test_quick_match_pairs_players_who_want_the_same_rules(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A deal that does not end the one-round match by itself (about 1 in 200 do,
    # and such a match is over before the players are linked to it).
    monkeypatch.setattr(secrets, "randbelow", lambda n: 12345)
    a, b, c = device_key(), device_key(), device_key()

    def quick(key: str, **body: Any) -> dict[str, Any]:
        r = client.post("/api/lobby/quick", json={"key": key, **body})
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    assert quick(a, rules="nintendo", rounds=1, name="Aoi")["type"] == "waiting"
    assert quick(b, rules="nintendo", rounds=2, name="Ben")["type"] == "waiting"  # other rounds
    assert quick(a, rules="nintendo", rounds=1)["type"] == "waiting"  # asking again: still
    second = quick(c, rules="nintendo", rounds=1, name="Chie")
    assert second["type"] == "matched" and second["seat"] == 1 and second["opponent"] == "Aoi"
    first = quick(a, rules="nintendo", rounds=1)
    assert first["type"] == "matched" and first["game"] == second["game"]
    assert first["seat"] == 0 and first["opponent"] == "Chie"
    assert first["token"] != second["token"]
    assert client.post("/api/lobby/leave", json={"key": b}).json()["was_waiting"] is True
    room = client.app.state.hub.rooms[first["game"]].room  # type: ignore[attr-defined]
    assert room.rules.game.rounds == 1 and room.mode == "friend"
    assert [s.name for s in room.seats] == ["Aoi", "Chie"]

    play_both(client, {0: first["token"], 1: second["token"]})
    wait_stored(client, first["game"])
    # A one-round match is not the preset (12 rounds), and neither key is established:
    # not rated (#29).
    rows = board(client)
    assert "Aoi" not in rows and "Chie" not in rows
    # The game is in both players' statistics.
    for key in (a, c):
        stats = client.post("/api/players/stats", json={"key": key}).json()
        assert [g["game_id"] for g in stats["summary"]["games"]] == [first["game"]]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"rules": "nope"}, "rules must be a preset"),
        ({"rules": "nintendo", "rounds": 0}, "rounds must be an integer from 1 to 12"),
        ({"rules": "nintendo", "rounds": True}, "rounds must be an integer"),
        ({}, "the field 'rules'"),
    ],
)
def test_bad_quick_match_requests_are_refused(
    client: TestClient, body: dict[str, Any], words: str
) -> None:
    r = client.post("/api/lobby/quick", json={"key": device_key(), **body})
    assert r.status_code == 400 and words in r.json()["message"]


def test_a_rating_that_fails_never_costs_the_result(
    any_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Storage(any_db_url)
    try:
        players = PlayerStore(store)
        store.finish_hooks.append(players.rate_game)
        a = players.ensure_player(key_hash(device_key()), "A")
        b = players.ensure_player(key_hash(device_key()), "B")
        game = make_game(store, seed=4)
        players.link(a.id, game.id, 0)
        players.link(b.id, game.id, 1)

        def broken(conn: Any, game_id: str) -> bool:
            raise RuntimeError("boom")

        monkeypatch.setattr(players, "_rate_game", broken)
        rec = finished_record(4, ["A", "B"])
        store.finish_game(game.id, rec.to_json(), rec.scores, rec.winner)
        assert store.get_record(game.id) == rec.to_json()
        names = {row["name"] for row in players.leaderboard("nintendo")}
        assert "A" not in names and "B" not in names  # not rated
    finally:
        store.dispose()


def test_doctests() -> None:
    import doctest

    import koikoi.server.players

    failures, _ = doctest.testmod(koikoi.server.players)
    assert failures == 0

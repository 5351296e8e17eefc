"""Issue #29 bug 7: abandoning dodged a loss. Quick matches from the lobby have a turn
clock; a player whose clock runs out (connected or not) forfeits, and the forfeit is
stored, recorded and rated like any other result. The clock is injected: no sleeping."""

from __future__ import annotations

import argparse
import dataclasses
import json
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from server_helpers import FAST
from starlette.testclient import TestClient
from test_server_players import establish
from test_server_protocol import connect, new_game

from koikoi.game.record import load_record
from koikoi.game.rules import get_rules
from koikoi.server.config import ServerConfig
from koikoi.server.players import key_hash
from koikoi.server.rooms import Room, SeatInfo

SEED = 12345
"""A deal that does not end the match by itself."""


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def quick(client: TestClient, key: str, name: str) -> dict[str, Any]:
    r = client.post("/api/lobby/quick", json={"key": key, "rules": "nintendo", "name": name})
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def rated_pair(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, clock: Clock
) -> tuple[dict[int, str], dict[int, str], str]:
    """Two established people paired by the lobby under the nintendo preset (a game that
    is rated when it ends): their tokens and names by seat, and the game id."""
    monkeypatch.setattr(secrets, "randbelow", lambda n: SEED)
    client.app.state.hub.now = clock  # type: ignore[attr-defined]
    store = client.app.state.players.store  # type: ignore[attr-defined]
    suffix = secrets.token_hex(3)
    keys = {"A": secrets.token_urlsafe(32), "B": secrets.token_urlsafe(32)}
    ids = [store.ensure_player(key_hash(k), f"{n} {suffix}").id for n, k in keys.items()]
    establish(store.storage, store, *ids)
    first = quick(client, keys["A"], f"A {suffix}")
    assert first["type"] == "waiting"
    second = quick(client, keys["B"], f"B {suffix}")
    first = quick(client, keys["A"], f"A {suffix}")
    assert first["type"] == second["type"] == "matched"
    tokens = {first["seat"]: first["token"], second["seat"]: second["token"]}
    names = {first["seat"]: f"A {suffix}", second["seat"]: f"B {suffix}"}
    return tokens, names, str(first["game"])


def board(client: TestClient) -> dict[str, dict[str, Any]]:
    data = client.get("/api/leaderboard?rules=nintendo").json()
    return {p["name"]: p for p in data["players"] + data["provisional"]}


def expire(client: TestClient) -> int:
    hub = client.app.state.hub  # type: ignore[attr-defined]
    done: int = client.portal.call(hub.expire_clocks)  # type: ignore[union-attr]
    return done


def test_a_rated_game_abandoned_by_one_player_is_rated_as_a_loss_for_that_player(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression (#29 bug 7): with no clock, a player who left a losing rated game was
    # never rated: the game stayed unfinished for ever.
    clock = Clock()
    tokens, names, game = rated_pair(client, monkeypatch, clock)
    hub = client.app.state.hub  # type: ignore[attr-defined]
    live = hub.rooms[game]
    mover = live.room.match.current
    # The player to move opens the game, then closes it and never comes back.
    _ws, ctx = connect(client, tokens[mover], "leaver")
    ctx.__exit__(None, None, None)
    clock.now += hub.config.turn_seconds - 1
    assert expire(client) == 0 and not live.room.is_over  # not yet
    clock.now += 1
    assert expire(client) == 1
    assert live.room.is_over and live.room.winner == 1 - mover
    assert live.finished_stored
    rows = board(client)
    loser, winner = rows[names[mover]], rows[names[1 - mover]]
    assert (loser["games"], loser["losses"], loser["wins"]) == (1, 1, 0)
    assert (winner["games"], winner["wins"]) == (1, 1)
    assert loser["rating"] < 1500 < winner["rating"]


def test_expiry_ends_the_game_on_both_pages_and_records_the_forfeit(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    tokens, _, game = rated_pair(client, monkeypatch, clock)
    hub = client.app.state.hub  # type: ignore[attr-defined]
    socks = {seat: connect(client, token, f"seat {seat}") for seat, token in tokens.items()}
    live = hub.rooms[game]
    mover = live.room.match.current
    clock.now += hub.config.turn_seconds
    assert expire(client) == 1
    for seat, (ws, _) in socks.items():
        state = ws.recv_type("state")
        assert state["over"] is True and state["winner"] == 1 - mover, seat
        assert state["forfeit"] == {"player": mover, "reason": "time"}
        assert state["clock"] is None
    # No action is taken any more.
    ws = socks[mover][0]
    ws.send({"type": "act", "action": live.room.match.legal_ids()[0], "seq": live.room.seq})
    assert ws.recv_type("error")["code"] == "game_over"
    text = client.post(f"/api/games/{game}/record", json={"token": tokens[0]})
    assert text.status_code == 200, text.text
    record = load_record(text.text)
    assert record.forfeit == {"player": mover, "reason": "time"}
    assert record.finished and record.winner == 1 - mover
    replay = client.post(f"/api/games/{game}/replay", json={"token": tokens[0]})
    assert replay.status_code == 200, replay.text  # a forfeited game replays too
    assert replay.json()["winner"] == 1 - mover
    for _, ctx in socks.values():
        ctx.__exit__(None, None, None)
    # The room leaves memory as finished games do, and comes back forfeited.
    assert hub.evict_idle(now=live.last_active + hub.config.finished_grace + 1) >= 1
    assert game not in hub.rooms
    ws, ctx = connect(client, tokens[1 - mover], "back")
    try:
        state = ws.log[1]
        assert state["over"] is True and state["forfeit"] == {"player": mover, "reason": "time"}
    finally:
        ctx.__exit__(None, None, None)


def test_the_clock_starts_at_each_decision_and_stops_at_the_move(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    tokens, _, game = rated_pair(client, monkeypatch, clock)
    hub = client.app.state.hub  # type: ignore[attr-defined]
    seconds = hub.config.turn_seconds
    socks = {seat: connect(client, token, f"seat {seat}") for seat, token in tokens.items()}
    try:
        for _ in range(4):
            states = {seat: ws.log[-1] for seat, (ws, _) in socks.items()}
            cur = states[0]["view"]["current"]
            for state in states.values():  # both pages see the same clock
                assert state["clock"]["seat"] == cur
                assert state["clock"]["deadline"] == pytest.approx(clock.now + seconds)
                assert state["clock"]["left"] == pytest.approx(seconds)
                assert state["clock"]["seconds"] == seconds
            clock.now += seconds - 5  # most of the time used, then the move
            assert expire(client) == 0
            mine = states[cur]
            socks[cur][0].send(
                {"type": "act", "action": mine["view"]["legal"][0]["id"], "seq": mine["seq"]}
            )
            for ws, _ in socks.values():
                ws.recv_type("state")
            # The move stopped that clock: the next decision has its full time again.
            assert hub.rooms[game].room.deadline == pytest.approx(clock.now + seconds)
            clock.now += 10  # past the first deadline: nobody forfeits
            assert expire(client) == 0
            clock.now -= 10
    finally:
        for _, ctx in socks.values():
            ctx.__exit__(None, None, None)
    assert not hub.rooms[game].room.is_over


def test_games_against_the_ai_and_between_friends_have_no_clock(client: TestClient) -> None:
    clock = Clock()
    hub = client.app.state.hub  # type: ignore[attr-defined]
    hub.now = clock
    friend = new_game(client, mode="friend", seed=SEED)
    joined = client.post("/api/join", json={"invite": friend["invite"]}).json()
    ai = new_game(client, mode="ai", agent="greedy", seed=SEED)
    for token in (friend["token"], joined["token"], ai["token"]):
        ws, ctx = connect(client, token)
        try:
            assert ws.log[1]["clock"] is None and ws.log[1]["forfeit"] is None
        finally:
            ctx.__exit__(None, None, None)
    clock.now += 10**6
    assert expire(client) == 0
    assert not hub.rooms[friend["game"]].room.is_over
    assert not hub.rooms[ai["game"]].room.is_over


def test_turn_seconds_zero_turns_the_clock_off(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client(config=dataclasses.replace(FAST, turn_seconds=0.0))
    clock = Clock()
    tokens, _, game = rated_pair(client, monkeypatch, clock)
    ws, ctx = connect(client, tokens[0])
    try:
        assert ws.log[1]["clock"] is None
    finally:
        ctx.__exit__(None, None, None)
    clock.now += 10**6
    assert expire(client) == 0
    assert not client.app.state.hub.rooms[game].room.is_over  # type: ignore[attr-defined]


def test_the_setting_from_the_environment_and_the_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ServerConfig().turn_seconds == 90.0
    assert ServerConfig.from_env({"KOIKOI_TURN_SECONDS": "0"}).turn_seconds == 0.0
    assert ServerConfig.from_env({"KOIKOI_TURN_SECONDS": "45"}).turn_seconds == 45.0
    with pytest.raises(ValueError, match=r"KOIKOI_TURN_SECONDS must be 0 \(off\) or a positive"):
        ServerConfig.from_env({"KOIKOI_TURN_SECONDS": "-1"})
    from koikoi.cli import build_parser
    from koikoi.cli.serve import ServeError, _config

    args = build_parser().parse_args(["serve", "--turn-seconds", "30"])
    assert isinstance(args, argparse.Namespace)
    assert _config(args).turn_seconds == 30.0
    assert _config(build_parser().parse_args(["serve", "--turn-seconds", "0"])).turn_seconds == 0
    with pytest.raises(ServeError, match=r"--turn-seconds must be 0 \(off\) or a positive number"):
        _config(build_parser().parse_args(["serve", "--turn-seconds", "-5"]))


# ------------------------------------------------------------------ the room


def clocked_room(clock: Clock, *, seats: list[SeatInfo] | None = None) -> Room:
    return Room(
        "g1",
        mode="friend",
        rules=get_rules("nintendo"),
        seed=SEED,
        seats=seats or [SeatInfo("human", token_hash="a"), SeatInfo("human", token_hash="b")],
        watch_hash="w",
        turn_seconds=60.0,
        clock=clock,
    )


def test_the_room_times_each_decision_of_a_person() -> None:
    clock = Clock()
    room = clocked_room(clock)
    start = clock.now
    assert room.clock_seat == room.match.current and room.deadline == start + 60
    clock.now += 30
    room.restart_clock()  # the same decision keeps its deadline
    assert room.deadline == start + 60 and room.expired() is None
    room.apply(room.match.legal_ids()[0])
    assert room.deadline == clock.now + 60
    clock.now += 60
    assert room.expired() == room.match.current
    loser = room.match.current
    room.forfeit(loser)
    assert room.is_over and room.winner == 1 - loser and room.clock_seat is None
    assert room.state(0, 0)["forfeit"] == {"player": loser, "reason": "time"}
    assert room.to_move() is None


def test_no_clock_while_a_seat_waits_for_its_player_or_the_ai_moves() -> None:
    clock = Clock()
    waiting = clocked_room(
        clock, seats=[SeatInfo("human", token_hash="a"), SeatInfo("human", invite_hash="i")]
    )
    assert waiting.open_seat == 1 and waiting.clock_seat is None and waiting.deadline is None
    assert waiting.state(0, 0)["clock"] is None
    waiting.seats[1].invite_used = True
    clock.now += 500
    waiting.restart_clock()
    assert waiting.deadline == clock.now + 60
    ai_seat = 1 - clocked_room(clock).match.current  # the AI is not the first to move
    seats = [SeatInfo("human", token_hash="a"), SeatInfo("human", token_hash="b")]
    seats[1 - ai_seat] = SeatInfo("ai", agent="greedy")
    room = clocked_room(clock, seats=seats)
    assert room.clock_seat is None and room.expired() is None


def test_stored_clock_and_forfeit_survive_a_restart(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    clock = Clock()
    client = make_client()
    tokens, _, game = rated_pair(client, monkeypatch, clock)
    hub = client.app.state.hub  # type: ignore[attr-defined]
    mover = hub.rooms[game].room.match.current
    client.__exit__(None, None, None)
    again = make_client()  # the same database: the game is loaded from storage
    again.app.state.hub.now = clock  # type: ignore[attr-defined]
    ws, ctx = connect(again, tokens[0])
    try:
        state = ws.log[1]
        assert state["clock"]["seat"] == mover
        assert state["clock"]["deadline"] == pytest.approx(clock.now + FAST.turn_seconds)
    finally:
        ctx.__exit__(None, None, None)
    clock.now += FAST.turn_seconds
    assert expire(again) == 1
    data = json.loads(again.post(f"/api/games/{game}/record", json={"token": tokens[1]}).text)
    assert data["forfeit"] == {"player": mover, "reason": "time"}

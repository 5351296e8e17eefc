"""Storage (SQLite and, when KOIKOI_TEST_DATABASE_URL is set, PostgreSQL) and rooms without I/O."""

from __future__ import annotations

import os
import random
import secrets
import threading
from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from koikoi.agents import make_agent
from koikoi.features.opponents import hint_values
from koikoi.game.errors import RecordError
from koikoi.game.rules import get_rules
from koikoi.game.views import view_of
from koikoi.server.lobby import LobbyQueue
from koikoi.server.players import PlayerStore
from koikoi.server.protocol import ProtocolError
from koikoi.server.rooms import Room, SeatInfo, ai_rng, token_hash
from koikoi.server.storage import NewGame, SeatData, Storage, default_database_url, normalize_url

PG_URL_ENV = "KOIKOI_TEST_DATABASE_URL"


def make_game(store: Storage, seed: int = 5) -> NewGame:
    game = NewGame(
        id=secrets.token_urlsafe(9),
        mode="friend",
        rules_name="nintendo",
        rules_toml=get_rules("nintendo").to_toml(),
        seed=seed,
        watch_hash=token_hash(secrets.token_urlsafe(32)),
        seats=(
            SeatData(0, "human", name="Ann", token_hash=token_hash(secrets.token_urlsafe(32))),
            SeatData(1, "human", invite_hash=token_hash(secrets.token_urlsafe(32))),
        ),
    )
    store.create_game(game)
    return game


def test_storage_round_trip(any_db_url: str) -> None:
    store = Storage(any_db_url)
    try:
        assert store.ping()
        game = make_game(store, seed=2**61 + 3)
        store.append_actions([(game.id, 0, 8, 0), (game.id, 1, 2400, 0)])
        store.append_actions([(game.id, 2, 13, 1)])
        with pytest.raises(IntegrityError):
            store.append_actions([(game.id, 2, 14, 1)])  # the same seq twice
        with pytest.raises(IntegrityError):
            store.append_actions([(game.id, 3, 1, 0), (game.id, 3, 2, 0)])
        data = store.load_game(game.id)
        assert data is not None
        assert data.actions == (8, 2400, 13) and data.seed == 2**61 + 3
        assert data.seats[0].name == "Ann" and data.seats[1].token_hash is None
        assert store.find_token(game.seats[0].token_hash or "") == (game.id, 0)
        assert store.find_token(game.watch_hash) == (game.id, None)
        assert store.find_token("0" * 64) is None
        new = token_hash(secrets.token_urlsafe(32))
        assert store.claim_invite(game.seats[1].invite_hash or "", new, "Bob") == (game.id, 1)
        again = token_hash(secrets.token_urlsafe(32))
        assert store.claim_invite(game.seats[1].invite_hash or "", again, "") is None
        assert store.invite_state(game.seats[1].invite_hash or "") == (game.id, 1, True)
        assert store.find_token(new) == (game.id, 1)
        store.finish_game(game.id, '{"format": "x"}', [3, 4], 1)
        assert store.get_record(game.id) == '{"format": "x"}'
        assert store.load_game(game.id).status == "finished"  # type: ignore[union-attr]
        assert store.count_actions([game.id]) == 3
        assert store.load_game("nope") is None
        assert "password" not in store.describe()
    finally:
        store.dispose()


def test_url_helpers(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"
    monkeypatch.setenv("KOIKOI_HOME", str(tmp_path))
    assert default_database_url() == f"sqlite:///{tmp_path}/koikoi.db"


def seats() -> list[SeatInfo]:
    return [SeatInfo("human", token_hash="a" * 64), SeatInfo("ai", agent="random")]


def test_room_rebuilds_from_actions() -> None:
    rules = get_rules("nintendo").replace(game__rounds=2)
    room = Room("g", mode="ai", rules=rules, seed=77, seats=seats(), watch_hash="w")
    rng = random.Random(1)
    while not room.is_over:
        room.apply(rng.choice(room.match.legal_ids()))
    again = Room(
        "g",
        mode="ai",
        rules=rules,
        seed=77,
        seats=seats(),
        watch_hash="w",
        actions=room.match.actions,
    )
    assert again.is_over and again.match.scores == room.match.scores
    assert again.state(0, 0) == room.state(0, 0)
    with pytest.raises(RecordError, match="does not replay"):
        Room(
            "g",
            mode="ai",
            rules=rules,
            seed=78,
            seats=seats(),
            watch_hash="w",
            actions=room.match.actions,
        )


def test_room_checks_turn_seq_and_legality() -> None:
    room = Room(
        "g",
        mode="friend",
        rules=get_rules("nintendo"),
        seed=3,
        seats=[SeatInfo("human"), SeatInfo("human")],
        watch_hash="w",
    )
    cur = room.match.current
    legal = room.match.legal_ids()
    cases = [
        ((None, legal[0], 0), "spectator"),
        ((cur, legal[0], 1), "stale"),
        ((1 - cur, legal[0], 0), "not_your_turn"),
        ((cur, 2449, 0), "illegal_action"),
    ]
    for args, code in cases:
        with pytest.raises(ProtocolError) as info:
            room.check_act(*args)
        assert info.value.code == code
    room.check_act(cur, legal[0], 0)
    with pytest.raises(ProtocolError, match="legal:"):
        room.check_act(cur, 2449, 0)


def test_room_state_is_the_seat_view_and_tags_deals() -> None:
    room = Room(
        "g",
        mode="friend",
        rules=get_rules("nintendo"),
        seed=11,
        seats=[SeatInfo("human"), SeatInfo("human")],
        watch_hash="w",
    )
    for seat in (0, 1, None):
        state = room.state(seat, 0)
        expected = view_of(room.match, seat, with_history=False).to_dict()
        assert state["view"] == expected and state["full"]
        kinds = [e["type"] for e in state["events"]]
        assert kinds[0] == "first_dealer" and state["events"][0]["deal"] == -1
        assert all(e["deal"] == room.deal for e in state["events"][1:])
        assert ("hand" in kinds) == (seat is not None)
        assert sum(k == "hand" for k in kinds) <= 1
    welcome = room.welcome(None)
    assert welcome["role"] == "spectator" and "seed" not in welcome


def _hint(room: Room, seat: int, spec: str, source: str) -> dict[str, Any]:
    """The hint message as the hub makes it (the rating in-process here)."""
    view = room.hint_view(seat)
    values = hint_values(make_agent(spec), view, ai_rng(room.seed ^ 0x5EED, room.seq))
    return room.hint_message(room.seq, view, values, source)


def test_the_expert_hint_rates_every_legal_action_in_points_and_match_equity() -> None:
    room = Room("g", mode="ai", rules=get_rules("nintendo"), seed=4, seats=seats(), watch_hash="w")
    while room.match.current != 0:
        room.apply(room.match.legal_ids()[0])
    hint = _hint(room, 0, "expert:iterations=8", "expert:iterations=8")
    options = hint["options"]
    assert {o["id"] for o in options} == set(room.match.legal_ids())
    # Best first by what the expert maximises: the chance of winning the match.
    assert [o["score"] for o in options] == sorted((o["score"] for o in options), reverse=True)
    assert all(o["score"] == o["equity"] and 0 <= o["equity"] <= 1 for o in options)
    assert all(isinstance(o["points"], float) for o in options)
    assert hint["best"] == options[0]["id"] and hint["source"] == "expert:iterations=8"
    # A single round is played for its points: no equity.
    one = Room(
        "g1",
        mode="ai",
        rules=get_rules("nintendo").replace(game__rounds=1),
        seed=4,
        seats=seats(),
        watch_hash="w",
    )
    while one.match.current != 0:
        one.apply(one.match.legal_ids()[0])
    hint = _hint(one, 0, "expert:iterations=8", "expert")
    # score is rounded to 4 places, points to 2: the same value (no double rounding).
    assert all(
        "equity" not in o and abs(o["score"] - o["points"]) <= 0.005 + 1e-4 for o in hint["options"]
    )
    assert ai_rng(4, 0).random() == ai_rng(4, 0).random() != ai_rng(4, 1).random()


@pytest.mark.postgres
def test_processes_starting_together_on_an_empty_database_all_start() -> None:
    """Servers started at once on an empty PostgreSQL database each create the tables:
    without the schema lock one of them failed with a unique violation on ``pg_type``
    (and ``koikoi serve --workers`` or a load test lost a process)."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = os.environ.get(PG_URL_ENV)
    if not url:
        pytest.skip(f"{PG_URL_ENV} is not set")
    name = f"koikoi_schema_{secrets.token_hex(4)}"
    admin = make_url(url).set(drivername="postgresql")
    conninfo = admin.render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    fresh = admin.set(database=name).render_as_string(hide_password=False)
    stores: list[Storage] = []
    failures: list[BaseException] = []
    start = threading.Barrier(6)

    def open_store() -> None:
        start.wait()
        try:
            store = Storage(fresh)
            PlayerStore(store)
            LobbyQueue(store)
            stores.append(store)
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    try:
        threads = [threading.Thread(target=open_store) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert failures == [], failures[:1]
        assert len(stores) == 6
        game = make_game(stores[0])
        assert stores[5].load_game(game.id) is not None
    finally:
        for store in stores:
            store.dispose()
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

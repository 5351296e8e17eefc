"""The quick-match queue in the database: several server processes share one queue.

Each "process" here is its own :class:`Storage` (its own connection pool) on one
database, or a whole app (TestClient) on it: what two ``koikoi serve`` processes
would have. SQLite, then PostgreSQL when ``KOIKOI_TEST_DATABASE_URL`` is set.
"""

from __future__ import annotations

import doctest
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import delete, insert, select
from starlette.testclient import TestClient
from test_server_protocol import connect
from test_server_storage import make_game

from koikoi.server import lobby as lobby_module
from koikoi.server.lobby import (
    MATCHED_SECONDS,
    WAIT_SECONDS,
    Claimed,
    LobbyQueue,
    LobbyRow,
    Pair,
    Waiting,
)
from koikoi.server.players import PlayerGameRow, PlayerStore, key_hash
from koikoi.server.rooms import token_hash
from koikoi.server.storage import SeatRow, Storage


def device_key() -> str:
    return secrets.token_urlsafe(32)


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def storages(any_db_url: str) -> Iterator[Callable[[], Storage]]:
    """Storages on one database (one per "process"), the queue emptied first."""
    made: list[Storage] = []

    def make() -> Storage:
        storage = Storage(any_db_url)
        PlayerStore(storage)
        LobbyQueue(storage)
        if not made:
            with storage.engine.begin() as conn:
                conn.execute(delete(LobbyRow))
        made.append(storage)
        return storage

    yield make
    for storage in made:
        storage.dispose()


def new_players(storage: Storage, n: int) -> list[str]:
    store = PlayerStore(storage)
    return [store.ensure_player(key_hash(device_key()), f"P{i}").id for i in range(n)]


def test_a_waiting_player_expires_and_a_match_waits_a_while(
    storages: Callable[[], Storage],
) -> None:
    clock = Clock()
    storage = storages()
    queue = LobbyQueue(storage, clock)
    a, b, c = new_players(storage, 3)
    assert queue.ask(a, "Aoi", "nintendo", 1, device_key()) == Waiting(1)
    assert queue.ask(b, "Ben", "nintendo", None, device_key()) == Waiting(2)  # other rounds
    clock.now += WAIT_SECONDS - 1
    assert queue.ask(b, "Ben", "nintendo", None, device_key()) == Waiting(2)  # b stays
    clock.now += 2  # a stopped asking WAIT_SECONDS ago
    assert queue.ask(c, "Chie", "nintendo", 1, device_key()) == Waiting(2)
    assert [pid for pid, _ in queue.rows()] == [b, c]
    # A match nobody collects expires too.
    found = queue.ask(b, "Ben", "nintendo", 1, device_key())
    assert found == Pair(c, "P2")
    assert dict(queue.rows()) == {b: "creating", c: "pairing"}
    assert queue.ask(c, "Chie", "nintendo", 1, device_key()) == Waiting(1)  # being paired
    assert queue.leave(c) is False  # the match goes on
    clock.now += MATCHED_SECONDS + 1
    assert queue.ask(a, "Aoi", "nintendo", 1, device_key()) == Waiting(1)
    assert queue.rows() == [(a, "waiting")]
    assert queue.leave(a) is True and queue.leave(a) is False
    assert queue.rows() == []


def test_a_failed_game_puts_the_partner_back_in_the_queue(
    storages: Callable[[], Storage],
) -> None:
    storage = storages()
    queue = LobbyQueue(storage, Clock())
    a, b, c = new_players(storage, 3)
    queue.ask(a, "Aoi", "hawaii", 2, device_key())
    assert queue.ask(b, "Ben", "hawaii", 2, device_key()) == Pair(a, "P0")
    assert queue.release(a, creator_id=b) is True
    assert queue.rows() == [(a, "waiting")]
    assert queue.ask(c, "Chie", "hawaii", 2, device_key()) == Pair(a, "P0")


def test_two_servers_on_one_database_pair_players(
    any_db_url: str, make_client: Callable[..., TestClient], storages: Callable[[], Storage]
) -> None:
    storages()  # empties the queue
    one, two = make_client(url=any_db_url), make_client(url=any_db_url)
    a, b = device_key(), device_key()

    def quick(client: TestClient, key: str, **body: Any) -> dict[str, Any]:
        r = client.post("/api/lobby/quick", json={"key": key, "rules": "nintendo", **body})
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    assert quick(one, a, rounds=1, name="Aoi") == {
        "type": "waiting",
        "rules": "nintendo",
        "rounds": 1,
        "waiting": 1,
    }
    second = quick(two, b, rounds=1, name="Ben")
    assert second["type"] == "matched" and second["seat"] == 1 and second["opponent"] == "Aoi"
    # Aoi's next question lands on the other server: the match is there, once.
    first = quick(two, a, rounds=1)
    assert first["type"] == "matched" and first["game"] == second["game"]
    assert first["seat"] == 0 and first["opponent"] == "Ben" and first["mode"] == "friend"
    assert first["rules"] == second["rules"]
    assert first["token"] != second["token"]
    assert quick(one, a, rounds=1)["type"] == "waiting"  # a new wait, not the match again
    assert one.post("/api/lobby/leave", json={"key": a}).json()["was_waiting"] is True

    game = first["game"]
    storage = two.app.state.hub.storage  # type: ignore[attr-defined]
    with storage.engine.connect() as conn:
        seats = conn.execute(
            select(SeatRow.seat, SeatRow.name, SeatRow.invite_used)
            .where(SeatRow.game_id == game)
            .order_by(SeatRow.seat)
        ).all()
        linked = conn.execute(select(PlayerGameRow.seat).where(PlayerGameRow.game_id == game)).all()
    assert [(s.seat, s.name) for s in seats] == [(0, "Aoi"), (1, "Ben")]
    assert seats[0].invite_used is True
    assert sorted(r.seat for r in linked) == [0, 1]
    # Both tokens open their seats, on either server (the game was made on two).
    for client, data in ((two, first), (one, second)):
        ws, ctx = connect(client, data["token"], f"seat {data['seat']}")
        try:
            welcome = ws.log[0]
            assert welcome["type"] == "welcome" and welcome["seat"] == data["seat"]
            assert [p["name"] for p in welcome["players"]] == ["Aoi", "Ben"]
        finally:
            ctx.__exit__(None, None, None)


@pytest.mark.parametrize("round_no", range(2))
def test_concurrent_questions_on_several_servers_never_pair_a_player_twice(
    storages: Callable[[], Storage], round_no: int
) -> None:
    queues = [LobbyQueue(storages()) for _ in range(3)]
    waiting = new_players(queues[0].storage, 40)
    arriving = new_players(queues[0].storage, 20)
    # Twelve players already wait for the same rule set (asking in turn would pair them).
    now = time.time()
    with queues[0].engine.begin() as conn:
        conn.execute(
            insert(LobbyRow),
            [
                {
                    "player_id": pid,
                    "rules": "nintendo",
                    "rounds": 3,
                    "state": "waiting",
                    "since": now + i,
                    "expires_at": now + 600,
                }
                for i, pid in enumerate(waiting)
            ],
        )
    # Everybody asks at once, the waiting ones again (they may claim each other) and
    # the arriving ones, spread over the three servers, two threads each.
    askers = waiting + arriving
    results: dict[str, object] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def work(index: int) -> None:
        queue = queues[index % 3]
        barrier.wait()
        for pid in askers[index::6]:
            try:
                results[pid] = queue.ask(pid, "x", "nintendo", 3, device_key())
            except BaseException as exc:  # reported below
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert len(results) == len(askers)
    claimed = [r.partner_id for r in results.values() if isinstance(r, Pair)]
    claimers = {pid for pid, r in results.items() if isinstance(r, Pair)}
    assert len(claimed) == len(set(claimed)), "a player was paired twice"
    assert not claimers & set(claimed), "two players claimed each other"
    assert not any(isinstance(r, Claimed) for r in results.values())
    rows = dict(queues[1].rows())
    # The claimed are being paired; the rest who asked without a partner wait; the
    # claimers are creating their games.
    assert {pid for pid, state in rows.items() if state == "pairing"} == set(claimed)
    assert {pid for pid, state in rows.items() if state == "creating"} == claimers
    for pid, result in results.items():
        if isinstance(result, Waiting):  # still waiting, or claimed since
            assert rows[pid] in ("waiting", "pairing")
    assert claimed, "nobody was paired"


def test_a_claimed_match_is_collected_once_across_servers(
    storages: Callable[[], Storage],
) -> None:
    one, two = LobbyQueue(storages()), LobbyQueue(storages())
    store = PlayerStore(one.storage)
    a, b = new_players(one.storage, 2)
    one.ask(a, "Aoi", "nintendo", 1, device_key())
    assert two.ask(b, "Ben", "nintendo", 1, device_key()) == Pair(a, "P0")
    game = make_game(one.storage)  # seat 1 is an unclaimed invite
    assert two.matched(a, game.id, 1, "Ben", "nintendo") is True
    token = device_key()
    results: list[object] = []

    def collect(queue: LobbyQueue) -> None:
        results.append(queue.ask(a, "Aoi", "nintendo", 1, token))

    threads = [threading.Thread(target=collect, args=(q,)) for q in (one, two, one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results.count(Claimed(game.id, 1, "Ben", "nintendo")) == 1
    assert sum(isinstance(r, Waiting) for r in results) == 3
    assert store.storage.find_token(token_hash(token)) == (game.id, 1)


def test_a_key_asking_twice_in_a_row_is_paired_once(storages: Callable[[], Storage]) -> None:
    """Bug 3: the asker who found a partner held no row, so its second question at the
    same moment put it in the queue as well (paired and waiting)."""
    storage = storages()
    queue = LobbyQueue(storage, Clock())
    a, b, c = new_players(storage, 3)
    assert queue.ask(a, "Aoi", "nintendo", 1, device_key()) == Waiting(1)
    assert queue.ask(b, "Ben", "nintendo", 1, device_key()) == Pair(a, "P0")
    # Ben's second question, before his game exists: he is being paired, not waiting.
    assert queue.ask(b, "Ben", "nintendo", 1, device_key()) == Waiting(1)
    assert sorted(state for _, state in queue.rows()) == ["creating", "pairing"]
    # Chie finds nobody to pair with: Aoi is taken and Ben is not in the queue.
    assert queue.ask(c, "Chie", "nintendo", 1, device_key()) == Waiting(1)
    game = make_game(storage)
    assert queue.matched(a, game.id, 1, "Ben", "nintendo", creator_id=b) is True
    assert dict(queue.rows()) == {a: "matched", c: "waiting"}


@pytest.mark.parametrize("round_no", range(2))
def test_simultaneous_questions_of_the_same_keys_pair_each_key_once(
    storages: Callable[[], Storage], round_no: int
) -> None:
    """Many questions at once, each key asking several times on several servers: no key
    ends up both paired and waiting, and none is paired twice."""
    queues = [LobbyQueue(storages()) for _ in range(3)]
    players = new_players(queues[0].storage, 12)
    results: list[tuple[str, object]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)
    lock = threading.Lock()

    def work(index: int) -> None:
        queue = queues[index % 3]
        barrier.wait()
        # Every thread asks for every player, in its own order: each key asks 8 times.
        order = players[index:] + players[:index]
        for pid in order:
            try:
                found = queue.ask(pid, "x", "nintendo", 2, device_key())
            except BaseException as exc:  # reported below
                errors.append(exc)
                continue
            with lock:
                results.append((pid, found))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert len(results) == 8 * len(players)
    pairs = [(pid, r.partner_id) for pid, r in results if isinstance(r, Pair)]
    in_pairs = [pid for pair in pairs for pid in pair]
    assert len(in_pairs) == len(set(in_pairs)), f"a key was paired twice: {pairs}"
    rows = dict(queues[1].rows())
    for claimer, partner in pairs:
        assert rows[claimer] == "creating" and rows[partner] == "pairing"
    assert all(state == "waiting" for pid, state in rows.items() if pid not in in_pairs)
    assert pairs, "nobody was paired"


def test_doctests() -> None:
    failures, _ = doctest.testmod(lobby_module)
    assert failures == 0

"""The AI worker pool: fair scheduling, what a worker gets, crashes, timeouts, shutdown,
and the acceptance test: a burst of search-AI games from one address neither slows the
acknowledgements of people's actions nor starves another address's game."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import pickle
import random
import signal
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import SubprocessServer

from koikoi.agents import make_agent
from koikoi.engine import Match
from koikoi.rules import get_rules
from koikoi.server.aipool import (
    AIPool,
    AIUnavailable,
    Decision,
    FairQueue,
    choose,
    decision_seed,
)
from koikoi.views import view_of

# A search that takes real time without the compiled kernel (workers start fast).
SEARCH = "mcts:iterations=40,rollouts=1,backend=python"
LONG = "mcts:time=5,rollouts=1,backend=python"


def decision(spec: str = SEARCH, seed: int = 3, seq: int = 0) -> Decision:
    match = Match(get_rules("nintendo"), seed=seed)
    return Decision.of(spec, view_of(match, match.current), decision_seed(seed, seq))


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# --------------------------------------------------------------- the fair queue


def test_the_queue_takes_groups_in_turn_and_a_groups_games_in_order() -> None:
    queue: FairQueue[str] = FairQueue()
    for i in range(8):
        queue.push(f"a{i}", f"a{i}", group="10.0.0.1")
    queue.push("b0", "b0", group="10.0.0.2")
    queue.push("c0", "c0")  # a game without a group is a group of its own
    assert (len(queue), queue.groups) == (10, 3)
    order = [queue.pop()[0] for _ in range(10)]
    assert order == ["a0", "b0", "c0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"]
    assert (len(queue), queue.groups) == (0, 0)
    with pytest.raises(IndexError):
        queue.pop()


def test_a_game_that_comes_back_waits_behind_the_others() -> None:
    """Eight games of one address and one of another, each asking again as soon as it
    is served: the lone game is served every other time, the eight in turn."""
    queue: FairQueue[int] = FairQueue()
    for i in range(8):
        queue.push(f"a{i}", i, group="A")
    queue.push("b", 0, group="B")
    served: list[str] = []
    for _ in range(40):
        game, _ = queue.pop()
        served.append(game)
        queue.push(game, 0, group="B" if game == "b" else "A")  # its next decision
    assert served[1::2] == ["b"] * 20
    assert served[0::2] == [f"a{i % 8}" for i in range(20)]


def test_one_decision_per_game_and_removal() -> None:
    queue: FairQueue[str] = FairQueue()
    queue.push("g1", "first", group="A")
    with pytest.raises(ValueError, match=r"g1.*already has a decision waiting"):
        queue.push("g1", "second", group="B")
    queue.push("g2", "x", group="A")
    queue.push("g3", "retry", group="B", first=True)
    assert queue.remove("g1") == "first" and queue.remove("g1") is None
    assert "g1" not in queue and "g2" in queue
    assert [queue.pop()[0] for _ in range(2)] == ["g3", "g2"]


# ----------------------------------------------------------- what a worker gets


def test_a_decision_carries_only_what_the_seat_may_know() -> None:
    match = Match(get_rules("nintendo"), seed=11)
    seat = match.current
    assert any(not e.visible_to(seat) for e in match.events)  # the other hand's deal
    full = dataclasses.replace(view_of(match, seat), history=tuple(match.events))
    d = Decision.of("expert", full, decision_seed(11, 0))
    assert d.view.history and all(e.visible_to(seat) for e in d.view.history)
    assert d.view == view_of(match, seat)
    # The seed is a hash: neither the match seed nor a string holding it.
    text = pickle.dumps(d)
    assert d.seed not in (11, 0) and b"koikoi-ai" not in text
    assert decision_seed(11, 0) == d.seed != decision_seed(11, 1) != decision_seed(12, 0)
    other = view_of(match, 1 - seat)
    with pytest.raises(ValueError, match="the view of the seat to move"):
        Decision.of("expert", other, 1)


def test_the_same_seed_gives_the_same_decision() -> None:
    d = decision()
    first = choose({}, d)
    assert first in d.view.legal_ids
    assert choose({SEARCH: make_agent(SEARCH)}, d) == first


# -------------------------------------------------------------- the process pool


async def _ready_pool(**kwargs: Any) -> AIPool:
    pool = AIPool(1, agents=[SEARCH], **kwargs)
    await pool.start()
    await pool.wait_ready(120)
    return pool


def test_a_worker_process_decides_as_the_server_would() -> None:
    d = decision()
    expected = choose({}, d)

    async def main() -> None:
        pool = await _ready_pool()
        try:
            (pid,) = pool.pids
            assert pid != os.getpid()
            assert await pool.decide("g", d, group="127.0.0.1") == expected
            assert pool.stats() == {
                "ai_workers": 1,
                "ai_workers_ready": 1,
                "ai_workers_busy": 0,
                "ai_queue": 0,
                "ai_queue_groups": 0,
            }
        finally:
            await pool.close()
        assert gone(pid)
        with pytest.raises(AIUnavailable, match="stopping"):
            await pool.decide("g", d)

    asyncio.run(main())


def test_a_worker_that_dies_is_replaced_and_the_decision_retried() -> None:
    d = decision()
    expected = choose({}, d)

    async def main() -> None:
        pool = await _ready_pool()
        try:
            (pid,) = pool.pids
            task = asyncio.create_task(pool.decide("g", d))
            while not pool.stats()["ai_workers_busy"]:
                await asyncio.sleep(0.005)
            os.kill(pid, signal.SIGKILL)
            assert await asyncio.wait_for(task, 120) == expected  # same seed, same move
            assert pool.counts["restarts"] == 1 and pool.counts["retries"] == 1
            (new,) = pool.pids
            assert new != pid and gone(pid)
        finally:
            await pool.close()

    asyncio.run(main())


def test_a_decision_that_dies_twice_fails_clearly() -> None:
    async def main() -> None:
        pool = await _ready_pool(retries=0)
        try:
            (pid,) = pool.pids
            task = asyncio.create_task(pool.decide("g", decision()))
            while not pool.stats()["ai_workers_busy"]:
                await asyncio.sleep(0.005)
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(AIUnavailable, match="the AI worker stopped"):
                await asyncio.wait_for(task, 60)
            await pool.wait_ready(120)  # replaced all the same
            assert await pool.decide("g", decision()) in decision().view.legal_ids
        finally:
            await pool.close()

    asyncio.run(main())


def test_a_decision_over_the_timeout_fails_and_its_worker_is_replaced() -> None:
    async def main() -> None:
        pool = await _ready_pool(timeout=0.5)
        try:
            (pid,) = pool.pids
            started = time.monotonic()
            with pytest.raises(AIUnavailable, match=r"longer than 0\.5 s"):
                await pool.decide("g", decision(LONG))
            assert time.monotonic() - started < 4  # not the search's 5 seconds
            assert pool.counts["timeouts"] == 1
            await pool.wait_ready(120)
            (new,) = pool.pids
            assert new != pid
            for _ in range(100):
                if gone(pid):
                    break
                await asyncio.sleep(0.05)
            assert gone(pid)
        finally:
            await pool.close()

    asyncio.run(main())


def test_a_game_has_one_decision_in_flight_and_games_take_turns() -> None:
    """In-process (threads), the same scheduling: one address's four games and another
    address's one, on one worker."""

    async def main() -> None:
        pool = AIPool(1, agents=["random"], in_process=True)
        await pool.start()
        await pool.wait_ready(60)
        done: list[str] = []

        async def one(game: str, group: str) -> None:
            await pool.decide(game, decision("random"), group=group)
            done.append(game)

        try:
            tasks = [asyncio.create_task(one(f"a{i}", "A")) for i in range(4)]
            await asyncio.sleep(0)
            tasks.append(asyncio.create_task(one("b", "B")))
            await asyncio.sleep(0)
            with pytest.raises(ValueError, match="already has an AI decision in flight"):
                await pool.decide("a3", decision("random"), group="A")
            await asyncio.gather(*tasks)
        finally:
            await pool.close()
        assert sorted(done) == ["a0", "a1", "a2", "a3", "b"]
        assert done.index("b") <= 2  # behind the running one and at most one more

    asyncio.run(main())


# --------------------------------------------------------- acceptance: a burst

BURST_AGENT = "level:7"  # the expert with 0.2 s of search per move
BURST_GAMES = 3
DURATION = 12.0


class Seat:
    """A scripted person at one seat: plays a random legal move shortly after its turn
    comes, and measures each action's act -> ack latency."""

    def __init__(self, name: str, token: str, ai_seat: int | None, think: float) -> None:
        self.name = name
        self.token = token
        self.ai_seat = ai_seat
        self.think = think
        self.rng = random.Random(name)
        self.latencies: list[float] = []
        self.ai_moves = 0
        self.ai_waits: list[float] = []
        """Seconds from our acknowledged action to the AI's answer."""

    async def run(self, url: str, until: float) -> None:
        from websockets.asyncio.client import connect

        async with connect(url, open_timeout=10) as ws:
            await ws.send(json.dumps({"type": "hello", "token": self.token}))
            seat: int | None = None
            seq = -1
            sent: float | None = None
            acked_at: float | None = None
            while time.monotonic() < until:
                try:
                    text = await asyncio.wait_for(ws.recv(), max(0.01, until - time.monotonic()))
                except TimeoutError:
                    return
                msg = json.loads(text)
                now = time.monotonic()
                if msg["type"] == "welcome":
                    seat = msg["seat"]
                elif msg["type"] == "error":
                    raise AssertionError(f"{self.name}: {msg}")
                if msg["type"] != "state":
                    continue
                if "ack" in msg:
                    assert sent is not None
                    self.latencies.append(now - sent)
                    sent = None
                    acked_at = now
                elif self.ai_seat is not None and seq >= 0 and msg["seq"] > seq:
                    self.ai_moves += msg["seq"] - seq
                    if acked_at is not None:
                        self.ai_waits.append(now - acked_at)
                        acked_at = None
                seq = msg["seq"]
                legal = [a["id"] for a in msg["view"]["legal"]]
                if msg["over"] or not legal or msg["view"]["current"] != seat:
                    continue
                await asyncio.sleep(self.think)
                sent = time.monotonic()
                await ws.send(
                    json.dumps({"type": "act", "action": self.rng.choice(legal), "seq": seq})
                )


async def _create(client: httpx.AsyncClient, base: str, **body: Any) -> httpx.Response:
    return await client.post(base + "/api/games", json={"name": "p", **body})


async def _burst(server: SubprocessServer) -> tuple[list[Seat], list[Seat], list[Seat]]:
    base = server.base
    burst = httpx.AsyncClient(timeout=10)  # from 127.0.0.1
    other = httpx.AsyncClient(
        timeout=10, transport=httpx.AsyncHTTPTransport(local_address="127.0.0.2")
    )
    async with burst, other:
        games = [await _create(burst, base, mode="ai", agent=BURST_AGENT) for _ in range(4)]
        # As many as one address may have: the cap refuses the next.
        assert [r.status_code for r in games[:BURST_GAMES]] == [200] * BURST_GAMES
        assert games[BURST_GAMES].status_code == 429, games[BURST_GAMES].text
        lone = await _create(other, base, mode="ai", agent=BURST_AGENT)
        friend = await _create(other, base, mode="friend")
        assert lone.status_code == friend.status_code == 200
        invite = friend.json()["invite"]
        joined = await other.post(base + "/api/join", json={"invite": invite, "name": "q"})
        assert joined.status_code == 200
    burst_seats = [
        Seat(f"burst{i}", r.json()["token"], 1 - r.json()["seat"], 0.01)
        for i, r in enumerate(games[:BURST_GAMES])
    ]
    lone_seat = Seat("lone", lone.json()["token"], 1 - lone.json()["seat"], 0.01)
    people = [
        Seat("friend0", friend.json()["token"], None, 0.05),
        Seat("friend1", joined.json()["token"], None, 0.05),
    ]
    until = time.monotonic() + DURATION
    await asyncio.gather(*(s.run(server.ws_url, until) for s in [*burst_seats, lone_seat, *people]))
    return burst_seats, [lone_seat], people


def _health(server: SubprocessServer) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(server.base + "/healthz", timeout=5).json()
    return data


def test_a_burst_of_search_ai_games_neither_slows_acks_nor_starves_a_game(
    tmp_path: Path,
) -> None:
    """One address starts as many games against a searching AI as it may; another plays
    one such game and a friend game. People's actions are acknowledged fast (p95 under
    50 ms) and every AI game moves, the lone one at least as often as the burst's."""
    server = SubprocessServer(
        f"sqlite:///{tmp_path / 'burst.db'}",
        tmp=tmp_path,
        args=(
            "--ai-workers",
            "1",
            "--max-ai-games-per-address",
            str(BURST_GAMES),
            "--log-level",
            "warning",
        ),
    )
    try:
        server.start(timeout=60)
        deadline = time.monotonic() + 180  # a cold start compiles the kernel
        while _health(server)["ai_workers_ready"] < 1:
            assert time.monotonic() < deadline, "the AI worker did not start"
            time.sleep(0.2)
        health = _health(server)
        assert (health["ai_workers"], health["ai_queue"]) == (1, 0)
        burst, lone, people = asyncio.run(_burst(server))
        metrics = httpx.get(server.base + "/metrics", timeout=5).text
        assert "koikoi_ai_workers_busy " in metrics and "koikoi_ai_queue " in metrics
    finally:
        with contextlib.suppress(Exception):
            server.terminate()
        server.stop()
    latencies = sorted(x for s in [*burst, *lone, *people] for x in s.latencies)
    assert len(latencies) >= 50, [len(s.latencies) for s in [*burst, *lone, *people]]
    p95 = latencies[round(0.95 * (len(latencies) - 1))]
    assert p95 < 0.050, f"p95 act->ack {p95 * 1000:.1f} ms over {len(latencies)} actions"
    moves = [s.ai_moves for s in [*burst, *lone]]
    assert min(moves) >= 3, moves  # no AI game starves
    # The lone game shares the worker with the whole burst: it moves at least as
    # often as the burst's average game and waits no longer for its answers.
    assert lone[0].ai_moves >= statistics.mean(s.ai_moves for s in burst), moves
    lone_wait = statistics.median(lone[0].ai_waits)
    burst_wait = statistics.median(w for s in burst for w in s.ai_waits)
    assert lone_wait <= burst_wait, (lone_wait, burst_wait)

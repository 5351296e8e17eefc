"""Two server processes on one PostgreSQL database; one is killed mid-game.

Each friend game has a client on each process (one of them the game's owner,
the other a follower that forwards its actions); an AI game's human plays
through the process that does not own it; a spectator watches through the
other process. Then the owner of half the games dies with ``kill -9``: its
clients reconnect to the survivor, which takes the games over when their
leases expire and finishes every one of them, AI turns included. Every
acknowledged action is in the stored record, and the spectator saw every
move. PostgreSQL only (``KOIKOI_TEST_DATABASE_URL``).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import ROOT, WS, SeatSocket, SubprocessServer, free_port

from koikoi.game.record import load_record, replay

pytest.importorskip("websockets.sync.client")  # SeatSocket's client

PG_URL_ENV = "KOIKOI_TEST_DATABASE_URL"
needs_pg = pytest.mark.postgres  # skips without KOIKOI_TEST_DATABASE_URL (tests/conftest.py)

LEASE_S = 5.0
"""The default lease: a shorter one makes a busy (not dead) process lose its games to the
other one on a loaded machine, which is correct but closes its clients."""
WAIT_S = 30.0
"""Longest wait for one message: a lease's expiry and the takeover fit well within it."""


class Client(SeatSocket):
    """One seat (or a spectator) over a real WebSocket to one server process."""

    def __init__(self, token: str, server: SubprocessServer, name: str) -> None:
        self.token = token
        self.server = server
        self.name = name
        self.ws: Any = None
        self.state: dict[str, Any] = {}
        self.seqs: list[int] = []
        self.events: list[int] = []

    def connect(self, server: SubprocessServer | None = None) -> dict[str, Any]:
        self.server = server or self.server
        return self.hello(self.server.ws_url, self.token, open_timeout=10)

    def recv_type(self, kind: str, timeout: float = WAIT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: no {kind!r} message within {timeout} s")
            msg = json.loads(self.ws.recv(timeout=left))
            if msg["type"] == "error":
                raise AssertionError(f"{self.name}: server error: {msg}")
            if msg["type"] == "state":
                self.state = msg
                self.seqs.append(msg["seq"])
                self.events.extend(e["index"] for e in msg["events"])
            if msg["type"] == kind:
                return msg

    def wait_seq(self, seq: int) -> None:
        while self.state.get("seq", -1) < seq:
            self.recv_type("state")

    def act(self, action: int) -> dict[str, Any]:
        """Send an action and return its acknowledgement (a ``state`` with ``ack``)."""
        seq = self.state["seq"]
        self.ws.send(json.dumps({"type": "act", "action": action, "seq": seq}))
        while True:
            msg = self.recv_type("state")
            if msg.get("ack") is not None:
                assert msg["ack"] == seq
                return msg


class FriendGame:
    def __init__(self, info: dict[str, Any], clients: dict[int, Client]) -> None:
        self.info = info
        self.clients = clients
        self.acked: list[int] = []

    @property
    def over(self) -> bool:
        return bool(next(iter(self.clients.values())).state["over"])

    def step(self, rng: random.Random) -> None:
        """One random legal action by the player to move, acknowledged; both seats see it."""
        state = self.clients[0].state
        me = self.clients[state["view"]["current"]]
        me.wait_seq(len(self.acked))
        action = rng.choice(me.state["view"]["legal"])["id"]
        me.act(action)
        self.acked.append(action)
        for c in self.clients.values():
            c.wait_seq(len(self.acked))


@pytest.mark.multiprocess
@needs_pg
def test_two_processes_one_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = os.environ[PG_URL_ENV]
    monkeypatch.setenv("KOIKOI_LEASE_SECONDS", str(LEASE_S))
    a = SubprocessServer(url, tmp=tmp_path)
    b = SubprocessServer(url, tmp=tmp_path)
    everyone: list[Client] = []
    try:
        a.start()
        b.start()
        rng = random.Random(2024)
        games: list[FriendGame] = []
        for i in range(4):
            # Games 0 and 2 are created on (owned by) A, 1 and 3 on B; the creator
            # plays on the creating process, the invited player on the other one.
            home, away = (a, b) if i % 2 == 0 else (b, a)
            g = httpx.post(
                home.base + "/api/games", json={"mode": "friend", "seed": 100 + i, "rounds": 2}
            ).json()
            j = httpx.post(away.base + "/api/join", json={"invite": g["invite"]}).json()
            clients = {
                g["seat"]: Client(g["token"], home, f"game{i}/seat{g['seat']}"),
                j["seat"]: Client(j["token"], away, f"game{i}/seat{j['seat']}"),
            }
            everyone.extend(clients.values())
            for c in clients.values():
                c.connect()
            games.append(FriendGame(g, clients))
        # The spectator of a game owned by A watches through B.
        watcher = Client(games[0].info["watch"], b, "spectator")
        everyone.append(watcher)
        watcher.connect()
        # An AI game owned by A whose human plays through B.
        ai = httpx.post(
            a.base + "/api/games", json={"mode": "ai", "agent": "random", "seed": 7, "rounds": 2}
        ).json()
        human = Client(ai["token"], b, "human")
        everyone.append(human)
        human.connect()
        human_acked: dict[int, int] = {}

        def human_step() -> None:
            state = human.state
            if state["over"]:
                return
            if state["view"]["current"] != ai["seat"] or not state["view"]["legal"]:
                human.recv_type("state")  # the AI moves (on the owner)
                return
            action = state["view"]["legal"][0]["id"]
            human.act(action)
            human_acked[state["seq"]] = action

        while min(len(game.acked) for game in games) < 12:
            for game in games:
                if len(game.acked) < 12:
                    game.step(rng)
            human_step()
        while human.state["seq"] < 12:
            human_step()

        a.kill()  # SIGKILL: A's leases expire; B takes its games over
        for c in everyone:
            if c.server is a:
                c.close()
                state = c.connect(b)
                game = next(g for g in games if c in g.clients.values())
                assert state["seq"] == len(game.acked), f"{c.name}: acknowledged action lost"

        while not all(game.over for game in games) or not human.state["over"]:
            for game in games:
                if not game.over:
                    game.step(rng)
            human_step()

        # Every game finished through B with every acknowledged action stored.
        for game in games:
            r = httpx.post(
                f"{b.base}/api/games/{game.info['game']}/record",
                json={"token": game.info["watch"]},
            )
            assert r.status_code == 200, r.text
            record = load_record(r.text)
            assert record.finished
            final = replay(record)
            assert final.actions == game.acked
            assert list(final.scores) == game.clients[0].state["view"]["match_scores"]
        r = httpx.post(f"{b.base}/api/games/{ai['game']}/record", json={"token": ai["watch"]})
        assert r.status_code == 200, r.text
        record = load_record(r.text)
        assert record.finished
        stored = replay(record).actions
        assert all(stored[seq] == action for seq, action in human_acked.items())
        assert len(stored) == human.state["seq"]

        # The spectator on B saw every move of game 0: a state for every action, the
        # events in order without a gap.
        watcher.wait_seq(len(games[0].acked))
        assert set(range(1, len(games[0].acked) + 1)) <= set(watcher.seqs)
        assert watcher.events == sorted(set(watcher.events))
        assert watcher.state["over"]

        # B took the games over (its log says so) and A's games were not lost.
        lines = [json.loads(x) for x in b.log_path.read_text().splitlines() if x.startswith("{")]
        assert sum(line["msg"] == "game taken over" for line in lines) >= 3
    finally:
        for c in everyone:
            c.close()
        a.stop()
        b.stop()


def counters(server: SubprocessServer) -> dict[str, int]:
    metrics = httpx.get(server.base + "/metrics", headers={"accept": "application/json"}).json()
    found: dict[str, int] = metrics["counters"]
    return found


@pytest.mark.multiprocess
@needs_pg
def test_game_moves_to_the_process_of_its_clients(tmp_path: Path) -> None:
    """A friend game created on A whose two players both play through B: A stores the
    first action B forwards, then hands the game to B, which plays the rest without
    forwarding. A spectator who then watches through A follows B and sees every move,
    and the stored record has every acknowledged action."""
    url = os.environ[PG_URL_ENV]
    a = SubprocessServer(url, tmp=tmp_path)
    b = SubprocessServer(url, tmp=tmp_path)
    everyone: list[Client] = []
    try:
        a.start()
        b.start()
        g = httpx.post(a.base + "/api/games", json={"mode": "friend", "seed": 31, "rounds": 1})
        info = g.json()
        j = httpx.post(b.base + "/api/join", json={"invite": info["invite"]}).json()
        clients = {
            info["seat"]: Client(info["token"], b, "creator"),
            j["seat"]: Client(j["token"], b, "guest"),
        }
        everyone.extend(clients.values())
        for c in clients.values():
            c.connect()
        game = FriendGame(info, clients)
        rng = random.Random(5)
        game.step(rng)  # forwarded to A, which then gives the game away
        deadline = time.monotonic() + WAIT_S
        while counters(a).get("handovers", 0) < 1:
            if time.monotonic() > deadline:
                raise AssertionError(f"A did not hand the game over: {counters(a)}")
            time.sleep(0.05)
        watcher = Client(info["watch"], a, "spectator")
        everyone.append(watcher)
        watcher.connect()
        while not game.over:
            game.step(rng)
        assert len(game.acked) > 4
        # One action crossed between the processes: the first.
        assert counters(b).get("forwarded", 0) == 1
        assert counters(a).get("forwarded", 0) == 0
        assert counters(a)["handovers"] == 1
        watcher.wait_seq(len(game.acked))
        assert watcher.state["over"]
        assert watcher.events == sorted(set(watcher.events))
        r = httpx.post(f"{a.base}/api/games/{info['game']}/record", json={"token": info["watch"]})
        assert r.status_code == 200, r.text
        record = load_record(r.text)
        assert record.finished
        assert replay(record).actions == game.acked
    finally:
        for c in everyone:
            c.close()
        a.stop()
        b.stop()


def serve_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "koikoi.cli", "serve", "--host", "127.0.0.1", *args]


@pytest.mark.multiprocess
def test_workers_need_postgresql(tmp_path: Path) -> None:
    """More than one worker on SQLite is refused with a clear error before anything starts."""
    env = dict(os.environ, KOIKOI_DATABASE_URL="")
    url = f"sqlite:///{tmp_path / 'games.db'}"
    out = subprocess.run(
        serve_cmd("--port", str(free_port()), "--workers", "2", "--database-url", url),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=str(ROOT),
    )
    assert out.returncode == 2
    assert "--workers 2 needs a PostgreSQL database" in out.stderr
    assert not (tmp_path / "games.db").exists()
    out = subprocess.run(
        serve_cmd("--workers", "0", "--database-url", url),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=str(ROOT),
    )
    assert out.returncode == 2 and "--workers must be 1 to 256, not 0" in out.stderr


def worker_pids(parent: int) -> list[int]:
    """The worker processes of a ``--workers`` server (children of the parent, except
    multiprocessing's resource tracker)."""
    path = Path(f"/proc/{parent}/task/{parent}/children")
    pids = [int(x) for x in path.read_text().split()]
    return [p for p in pids if b"resource_tracker" not in Path(f"/proc/{p}/cmdline").read_bytes()]


@pytest.mark.multiprocess
@needs_pg
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_workers_one_port(tmp_path: Path) -> None:
    """``--workers 2``: two processes behind one port; clients land on either; a worker
    killed with kill -9 is restarted and its games finish on the other one."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "workers.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1", KOIKOI_LEASE_SECONDS=str(LEASE_S))
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            serve_cmd(
                "--port",
                str(port),
                "--workers",
                "2",
                "--allow-seed",
                "--database-url",
                os.environ[PG_URL_ENV],
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(ROOT),
        )
    server = SubprocessServer(os.environ[PG_URL_ENV], port=port)  # only for its URLs
    clients: list[Client] = []
    try:
        nodes: set[str] = set()
        deadline = time.monotonic() + 90
        while len(nodes) < 2 and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                r = httpx.get(base + "/healthz", timeout=2)
                if r.status_code == 200:
                    nodes.add(r.json()["node"])
                    continue
            time.sleep(0.2)
        assert proc.poll() is None, log_path.read_text()[-2000:]
        assert len(worker_pids(proc.pid)) == 2

        rng = random.Random(5)
        g = httpx.post(base + "/api/games", json={"mode": "friend", "seed": 11, "rounds": 2})
        info = g.json()
        j = httpx.post(base + "/api/join", json={"invite": info["invite"]}).json()
        game = FriendGame(
            info,
            {
                info["seat"]: Client(info["token"], server, "creator"),
                j["seat"]: Client(j["token"], server, "invited"),
            },
        )
        clients.extend(game.clients.values())
        for c in clients:
            c.connect()
        for _ in range(10):
            game.step(rng)

        victim = worker_pids(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        for c in clients:  # whichever worker it was on, reconnect (the port stays open)
            c.close()
            state = c.connect()
            assert state["seq"] == len(game.acked), f"{c.name}: acknowledged action lost"
        while not game.over:
            game.step(rng)
        r = httpx.post(
            f"{base}/api/games/{info['game']}/record", json={"token": info["watch"]}, timeout=10
        )
        assert r.status_code == 200, r.text
        assert replay(load_record(r.text)).actions == game.acked
        deadline = time.monotonic() + 60
        pids = worker_pids(proc.pid)
        while time.monotonic() < deadline and (victim in pids or len(pids) < 2):
            time.sleep(0.2)
            pids = worker_pids(proc.pid)
        assert victim not in pids and len(pids) == 2, "uvicorn did not replace the dead worker"
    finally:
        for c in clients:
            c.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@needs_pg
def test_late_renewal_and_lost_lease(make_client: Callable[..., Any]) -> None:
    """An owner whose periodic renewal is late renews before storing (the action is
    played); one whose lease another node took drops the game instead of storing, and
    a client that comes back is served as a follower of the new owner."""
    import psycopg

    from koikoi.server.cluster import conninfo_of

    url = os.environ[PG_URL_ENV]
    client = make_client(url=url)
    hub = client.app.state.hub
    cluster = hub.cluster
    assert cluster is not None
    g = client.post("/api/games", json={"mode": "friend", "seed": 3}).json()
    j = client.post("/api/join", json={"invite": g["invite"]}).json()
    game = g["game"]
    tokens = {g["seat"]: g["token"], j["seat"]: j["token"]}
    assert game in cluster.owned and cluster.may_write(game)
    with client.websocket_connect("/ws") as s0, client.websocket_connect("/ws") as s1:
        socks = {0: WS(s0, "seat0"), 1: WS(s1, "seat1")}
        states = {seat: socks[seat].hello(tokens[seat])[1] for seat in (0, 1)}
        cur = states[0]["view"]["current"]

        cluster.owned[game].valid_until = 0.0  # as if the renewal task were late
        action = states[cur]["view"]["legal"][0]["id"]
        socks[cur].send({"type": "act", "action": action, "seq": 0})
        ack = socks[cur].recv_type("state")
        assert ack["ack"] == 0 and ack["seq"] == 1
        first = action
        assert cluster.may_write(game)  # renewed on demand

        with psycopg.connect(conninfo_of(url), autocommit=True) as conn:
            conn.execute(
                "UPDATE koikoi_leases SET owner = 'elsewhere', "
                "expires_at = now() + interval '1 minute' WHERE game_id = %s",
                (game,),
            )
        cluster.owned[game].valid_until = 0.0
        state = socks[1 - cur].recv_type("state")
        action = state["view"]["legal"][0]["id"]
        socks[1 - cur].send({"type": "act", "action": action, "seq": 1})
        with pytest.raises(ConnectionError):
            socks[1 - cur].recv_type("state")
        assert game not in hub.rooms and game not in cluster.owned
        assert hub.storage.action_ids(game) == [first]

    with client.websocket_connect("/ws") as s:
        _, state = WS(s, "again").hello(tokens[0])
        assert state["seq"] == 1 and cluster.follows(game)
    with psycopg.connect(conninfo_of(url), autocommit=True) as conn:
        conn.execute("DELETE FROM koikoi_leases WHERE game_id = %s", (game,))


@needs_pg
def test_stale_leases_are_swept(make_client: Callable[..., Any]) -> None:
    """Leases left by nodes that died long ago are deleted; a lease expired a moment
    ago (its game may be taken over soon) and a live one stay."""
    import psycopg

    from koikoi.server.cluster import STALE_LEASE_SECONDS, conninfo_of

    url = os.environ[PG_URL_ENV]
    client = make_client(url=url)
    cluster = client.app.state.hub.cluster
    assert cluster is not None
    rows = {
        "sweep-old": STALE_LEASE_SECONDS + 60,
        "sweep-recent": 60.0,
        "sweep-live": -60.0,
    }
    with psycopg.connect(conninfo_of(url), autocommit=True) as conn:
        for game, ago in rows.items():
            conn.execute(
                "INSERT INTO koikoi_leases (game_id, owner, expires_at) VALUES "
                "(%s, 'dead-node', now() - make_interval(secs => %s)) "
                "ON CONFLICT (game_id) DO UPDATE SET expires_at = EXCLUDED.expires_at",
                (game, ago),
            )
    try:
        assert client.portal.call(cluster.sweep_stale_leases) >= 1
        with psycopg.connect(conninfo_of(url), autocommit=True) as conn:
            left = {
                r[0]
                for r in conn.execute(
                    "SELECT game_id FROM koikoi_leases WHERE game_id = ANY(%s)", (list(rows),)
                )
            }
        assert left == {"sweep-recent", "sweep-live"}
        metrics = client.get("/metrics", headers={"accept": "application/json"}).json()
        assert metrics["counters"]["stale_leases_deleted"] >= 1
    finally:
        with psycopg.connect(conninfo_of(url), autocommit=True) as conn:
            conn.execute("DELETE FROM koikoi_leases WHERE game_id = ANY(%s)", (list(rows),))

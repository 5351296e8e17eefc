"""Helpers of the web game's tests: WebSocket clients with timeouts, servers, the leak checker."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import httpx

from koikoi.game.cards import CODES, mask_of
from koikoi.game.engine import Match
from koikoi.game.rules import Rules
from koikoi.server.config import ServerConfig

ROOT = Path(__file__).resolve().parents[2]

# Limits high enough for scripted clients; the rate-limit tests set their own. Hints
# from a small search (the expert's own are tested with EXPERT_HINTS). The AI's
# decisions in a thread of the server (the worker processes are tested on their own,
# test_server_ai_pool.py): no test pays for starting processes it does not need.
FAST = ServerConfig(
    allow_seed=True,
    message_rate=1e6,
    message_burst=1e6,
    http_rate=1e6,
    http_burst=1e6,
    max_ai_games_per_address=1000,
    hint_agent="mcts:iterations=8,rollouts=1",
    ai_in_process=True,
)
EXPERT_HINTS = replace(FAST, hint_agent="expert:iterations=8")
"""Hints from the expert, as the server gives them, on a small budget."""
CODE_SET = frozenset(CODES)
_CODE_RE = re.compile(r"(?:1[0-2]|[1-9])[LARP][1-3]?")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------ TestClient sockets


class WS:
    """A TestClient WebSocket session with a receive timeout and a log of every message."""

    def __init__(self, session: Any, name: str = "") -> None:
        self.session = session
        self.name = name
        self.log: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any] | str | bytes) -> None:
        if isinstance(message, bytes):
            self.session.send_bytes(message)
        elif isinstance(message, str):
            self.session.send_text(message)
        else:
            self.session.send_text(json.dumps(message))

    def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        async def receive() -> Any:
            with anyio.fail_after(timeout):
                return await self.session._send_rx.receive()

        message = self.session.portal.call(receive)
        if message["type"] == "websocket.close":
            raise ConnectionError(f"{self.name}: closed with code {message.get('code')}")
        data: dict[str, Any] = json.loads(message["text"])
        self.log.append(data)
        return data

    def recv_type(self, kind: str, timeout: float = 5.0) -> dict[str, Any]:
        """Receive until a message of type ``kind`` (others are kept in the log)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: no {kind!r} message")
            msg = self.recv(left)
            if msg["type"] == kind:
                return msg

    def hello(self, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
        self.send({"type": "hello", "token": token})
        welcome = self.recv_type("welcome")
        state = self.recv_type("state")
        return welcome, state

    def expect_nothing(self, wait: float = 0.05) -> None:
        try:
            msg = self.recv(wait)
        except TimeoutError:
            return
        raise AssertionError(f"{self.name}: unexpected message {msg}")


def room_of(client: Any, game_id: str) -> Any:
    return client.app.state.hub.rooms[game_id].room


# ------------------------------------------------------------ the leak checker


def codes_in(obj: Any) -> set[str]:
    """Every card code mentioned anywhere in a JSON value (whole words of strings)."""
    out: set[str] = set()
    if isinstance(obj, str):
        for word in re.split(r"[\s,;:()'\"\[\]]+", obj):
            if word in CODE_SET and _CODE_RE.fullmatch(word):
                out.add(word)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            out |= codes_in(key)
            out |= codes_in(value)
    elif isinstance(obj, list):
        for value in obj:
            out |= codes_in(value)
    return out


def hidden_by_deal(match: Match, seat: int | None) -> dict[int, int]:
    """What ``seat`` (None: a spectator) cannot see, per deal, at this moment of ``match``.

    Rebuilt from the shuffled decks and the public events, then checked against the
    engine's own state for the current deal: the opponent's hand (both hands for a
    spectator) plus the stock.
    """
    out: dict[int, int] = {-1: 0}
    revealed: dict[int, int] = {}
    deal = -1
    for event in match.events:
        if event.kind == "round_start":
            deal += 1
            deck = match.deals[deal]
            dealer = int(event.data["dealer"])
            hands = {dealer: mask_of(deck[0:8]), 1 - dealer: mask_of(deck[8:16])}
            hidden = mask_of(deck[24:])
            hidden |= hands[0] | hands[1] if seat is None else hands[1 - seat]
            out[deal] = hidden
        elif event.kind in ("play", "draw", "take"):
            shown = event.cards | ((1 << event.card) if event.card is not None else 0)
            out[deal] &= ~shown
        elif event.kind == "instant":
            out[deal] &= ~event.cards
            revealed[deal] = revealed.get(deal, 0) | event.cards
    rnd = match.round
    truth = mask_of(rnd.stock)
    truth |= rnd.hands[0] | rnd.hands[1] if seat is None else rnd.hands[1 - seat]
    truth &= ~revealed.get(deal, 0)
    assert deal == len(match.deals) - 1
    assert out[deal] == truth, "hidden set rebuilt from events differs from the engine's"
    return out


def message_parts(msg: dict[str, Any]) -> Iterator[tuple[int | None, Any]]:
    """(deal, part) pairs of a server message; deal None: must hold no card at all."""
    kind = msg["type"]
    if kind == "state":
        deal = msg["deal"]
        yield deal, msg["view"]
        yield deal, msg["yaku"]
        yield deal, msg["decision"]
        for event in msg["events"]:
            yield event["deal"], event
        if "tutorial" in msg:  # the guided round's coaching is about this deal
            yield deal, msg["tutorial"]
        parts = ("view", "yaku", "decision", "events", "tutorial")
        rest = {k: v for k, v in msg.items() if k not in parts}
        yield None, rest
    elif kind == "hint":
        yield msg["deal"], msg
    elif kind == "welcome":
        yield None, {k: v for k, v in msg.items() if k != "rules"}
    else:
        yield None, msg


@dataclass
class LeakReport:
    messages: int = 0
    cards_checked: int = 0
    states: int = 0
    kinds: set[str] = field(default_factory=set)


def check_no_leak(
    rules: Rules,
    seed: int,
    actions: list[int],
    seat: int | None,
    messages: list[dict[str, Any]],
    report: LeakReport | None = None,
) -> LeakReport:
    """Assert that no message to ``seat`` names a card hidden from it when it was sent.

    Each ``state``/``hint`` carries ``seq`` (the actions applied when it was built);
    the match is replayed to that point and every card code in each part of the
    message is compared with the hidden set of the deal the part belongs to.
    """
    report = report or LeakReport()
    match = Match(rules, seed=seed)
    applied = 0
    hidden = hidden_by_deal(match, seat)
    last_seq = 0
    for msg in messages:
        report.messages += 1
        report.kinds.add(msg["type"])
        seq = msg.get("seq", last_seq) if msg["type"] in ("state", "hint") else last_seq
        assert seq >= last_seq, "messages out of order"
        while applied < seq:
            match.apply(actions[applied])
            applied += 1
            hidden = hidden_by_deal(match, seat)
        last_seq = seq
        if msg["type"] == "state":
            report.states += 1
            report.kinds.update(f"event:{e['type']}" for e in msg["events"])
        for deal, part in message_parts(msg):
            found = codes_in(part)
            if deal is None:
                assert not found, f"cards {found} in an untagged part of {msg['type']}: {part}"
                continue
            report.cards_checked += len(found)
            leaked = {c for c in found if hidden.get(deal, 0) >> CODES.index(c) & 1}
            assert not leaked, (
                f"seat {seat} was sent hidden cards {sorted(leaked)} of deal {deal} "
                f"at seq {seq} in a {msg['type']} message: {part}"
            )
    return report


# ------------------------------------------------------------ real servers


class SubprocessServer:
    """``koikoi serve`` in a child process on 127.0.0.1 (for restart tests)."""

    def __init__(
        self,
        database_url: str,
        port: int | None = None,
        tmp: Path | None = None,
        args: tuple[str, ...] = (),
        nofile: int | None = None,
    ) -> None:
        self.database_url = database_url
        self.args = args
        """More ``koikoi serve`` options."""
        self.nofile = nofile
        """The server's limit of open files (``ulimit -n``), if not the test's own."""
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = (tmp or Path("/tmp")) / f"server-{self.port}.log"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, timeout: float = 20.0) -> None:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "koikoi.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--database-url",
                self.database_url,
                "--allow-seed",
                *self.args,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(ROOT),
            preexec_fn=None if self.nofile is None else self._limit_files,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise TimeoutError("server did not start")

    def _limit_files(self) -> None:
        """In the child, before ``koikoi serve`` starts: ``ulimit -n NOFILE``."""
        import resource

        assert self.nofile is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, self.nofile))

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown at all."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM: uvicorn's graceful shutdown. Returns the exit status."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


class SeatSocket:
    """A seat (or a spectator) over a real WebSocket to a server process, with websockets'
    synchronous client. A subclass reads messages with its own ``recv_type``."""

    ws: Any = None

    def recv_type(self, kind: str) -> dict[str, Any]:
        """The next message of type ``kind`` (the ones before it are read on the way)."""
        raise NotImplementedError

    def hello(self, url: str, token: str, open_timeout: float) -> dict[str, Any]:
        """Connect, say hello with ``token``; the welcome is read, the first state returned."""
        from websockets.sync.client import connect

        self.ws = connect(url, open_timeout=open_timeout, legacy=True)
        self.ws.send(json.dumps({"type": "hello", "token": token}))
        self.recv_type("welcome")
        return self.recv_type("state")

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.ws.close()
            self.ws = None


class ThreadServer:
    """uvicorn serving an app in a background thread of the test process (browser tests)."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.app = app
        self.port = free_port()
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_config=None,
            access_log=False,
            ws_max_size=64 * 1024,
            lifespan="on",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)

#!/usr/bin/env python3
"""Load benchmark of ``koikoi serve``: many concurrent friend games on one server process.

Starts one server process on 127.0.0.1 (a fresh SQLite file by default, or
``--database-url``), creates ``--games`` friend games (invite claimed by the
second client), and plays every game to its end with two scripted WebSocket
clients making random legal moves (think time ``--think`` seconds on average).
Then it reports:

* the server-side latency per action, p50/p95/p99/max (from receiving the
  ``act`` frame to sending its acknowledgement; there is no AI in friend games),
  read from the server's ``/metrics``;
* the client round trip per action, for comparison;
* errors (any ``error`` message, failed connection or unfinished game);
* lost actions: actions sent but never acknowledged, plus acknowledged actions
  missing from the stored game records.

Loopback only, bounded in games and time (``--timeout``); the server is stopped
at the end. Exit status 0 when there is no error, no lost action and
p95 < ``--target-ms``.

Example::

    python scripts/loadtest.py --games 200 --rounds 2 --think 0.25
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


JSON_METRICS = {"accept": "application/json"}
"""``/metrics`` answers JSON for this (Prometheus text otherwise)."""


def serve(args: argparse.Namespace) -> int:
    """Server mode (run in the child process): the app with limits raised for one client host."""
    import uvicorn

    from koikoi.server.app import create_app
    from koikoi.server.hub import ServerConfig
    from koikoi.server.logs import configure_logging

    configure_logging("warning")
    config = ServerConfig(
        message_rate=1000.0,
        message_burst=1000.0,
        http_rate=1e6,
        http_burst=1e6,
        max_connections=1_000_000,
        max_connections_per_address=1_000_000,
        max_unauthenticated_per_address=1_000_000,
    )
    uvicorn.run(
        create_app(args.database_url, config=config),
        host="127.0.0.1",
        port=args.port,
        log_config=None,
        access_log=False,
        ws_max_size=64 * 1024,
        timeout_graceful_shutdown=10,
        backlog=4096,
    )
    return 0


@dataclass
class Stats:
    sent: int = 0
    acked: int = 0
    errors: list[str] = field(default_factory=list)
    rtt: list[float] = field(default_factory=list)
    finished_games: set[str] = field(default_factory=set)
    acked_by_game: dict[str, int] = field(default_factory=dict)


async def player(
    url: str,
    game: str,
    token: str,
    seat: int,
    think: float,
    rng: random.Random,
    stats: Stats,
    no_deflate: bool,
) -> None:
    from websockets.asyncio.client import connect

    try:
        compression = None if no_deflate else "deflate"
        async with connect(url, open_timeout=60, max_size=2**22, compression=compression) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token}))
            sent_at: float | None = None
            async for raw in ws:
                msg = json.loads(raw)
                kind = msg["type"]
                if kind == "error":
                    stats.errors.append(f"{game}/{seat}: {msg['code']}: {msg['message']}")
                    continue
                if kind != "state":
                    continue
                if "ack" in msg and sent_at is not None:
                    stats.acked += 1
                    stats.acked_by_game[game] = stats.acked_by_game.get(game, 0) + 1
                    stats.rtt.append(time.perf_counter() - sent_at)
                    sent_at = None
                if msg["over"]:
                    stats.finished_games.add(game)
                    return
                view = msg["view"]
                if view["current"] == seat and view["legal"]:
                    if think > 0:
                        await asyncio.sleep(rng.uniform(0, 2 * think))
                    action = rng.choice(view["legal"])["id"]
                    sent_at = time.perf_counter()
                    await ws.send(json.dumps({"type": "act", "action": action, "seq": msg["seq"]}))
                    stats.sent += 1
    except Exception as exc:  # counted, not raised: the benchmark reports it
        stats.errors.append(f"{game}/{seat}: {type(exc).__name__}: {exc}")


def pct(data: list[float], q: float) -> float:
    if not data:
        return float("nan")
    data = sorted(data)
    return data[min(len(data) - 1, round(q * (len(data) - 1)))]


async def run_load(args: argparse.Namespace, base: str) -> dict[str, Any]:
    import httpx

    rng = random.Random(args.seed)
    stats = Stats()
    limits = httpx.Limits(max_connections=50)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        sem = asyncio.Semaphore(50)

        async def make_game() -> tuple[str, list[tuple[int, str]], str]:
            async with sem:
                g = (
                    await http.post("/api/games", json={"mode": "friend", "rounds": args.rounds})
                ).json()
                j = (await http.post("/api/join", json={"invite": g["invite"]})).json()
            return g["game"], [(g["seat"], g["token"]), (j["seat"], j["token"])], g["watch"]

        t0 = time.perf_counter()
        games = await asyncio.gather(*(make_game() for _ in range(args.games)))
        created = time.perf_counter() - t0
        cpu_start = (await http.get("/metrics", headers=JSON_METRICS)).json()["cpu_s"]
        url = base.replace("http://", "ws://") + "/ws"
        t1 = time.perf_counter()
        tasks = [
            player(
                url,
                game,
                token,
                seat,
                args.think,
                random.Random(rng.random()),
                stats,
                args.no_deflate,
            )
            for game, seats, _ in games
            for seat, token in seats
        ]
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.timeout)
        except TimeoutError:
            stats.errors.append(f"timeout after {args.timeout} s")
        played = time.perf_counter() - t1

        # Every acknowledged action must be in the stored record.
        stored = 0
        for game, _, watch in games:
            r = await http.post(f"/api/games/{game}/record", json={"token": watch})
            if r.status_code != 200:
                stats.errors.append(f"{game}: record: {r.status_code} {r.text[:100]}")
                continue
            stored_here = len(r.json()["actions"])
            stored += stored_here
            if stored_here != stats.acked_by_game.get(game, 0):
                stats.errors.append(
                    f"{game}: {stats.acked_by_game.get(game, 0)} acknowledged, {stored_here} stored"
                )
        metrics = (await http.get("/metrics", headers=JSON_METRICS)).json()
        cpu_end = metrics["cpu_s"]

    unfinished = args.games - len(stats.finished_games)
    if unfinished:
        stats.errors.append(f"{unfinished} games did not finish")
    lost = (stats.sent - stats.acked) + max(0, stats.acked - stored)
    server = metrics["action_latency_ms"]
    return {
        "games": args.games,
        "clients": 2 * args.games,
        "rounds_per_game": args.rounds,
        "think_s": args.think,
        "deflate": not args.no_deflate,
        "database": args.database_url.split("://")[0],
        "create_s": round(created, 2),
        "play_s": round(played, 2),
        "actions_sent": stats.sent,
        "actions_acked": stats.acked,
        "actions_stored": stored,
        "actions_per_s": round(stats.acked / played, 1) if played else None,
        "server_latency_ms": server,
        "client_rtt_ms": {
            "p50": round(pct(stats.rtt, 0.5) * 1000, 3),
            "p95": round(pct(stats.rtt, 0.95) * 1000, 3),
            "max": round(max(stats.rtt, default=0) * 1000, 3),
            "mean": round(statistics.fmean(stats.rtt) * 1000, 3) if stats.rtt else None,
        },
        "errors": len(stats.errors),
        "error_samples": stats.errors[:10],
        "lost_actions": lost,
        "store_batches": metrics["counters"].get("store_batches"),
        "server_cpu_ms_per_action": round((cpu_end - cpu_start) * 1000 / max(1, stats.acked), 3),
    }


def wait_healthy(base: str, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with status {proc.returncode}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("server did not start")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="concurrent games (default 200)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per game (default 2)")
    parser.add_argument(
        "--think", type=float, default=0.25, help="mean think time, s (default 0.25)"
    )
    parser.add_argument(
        "--no-deflate",
        action="store_true",
        help="clients refuse permessage-deflate (browsers accept it; default: accept)",
    )
    parser.add_argument("--database-url", default=None, help="default: a fresh SQLite file")
    parser.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    parser.add_argument("--timeout", type=float, default=300, help="give up after (s)")
    parser.add_argument("--target-ms", type=float, default=50.0, help="p95 target (default 50)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the scripted clients")
    parser.add_argument("--json", default=None, help="also write the report to this file")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args)
    if not 1 <= args.games <= 2000 or not 1 <= args.rounds <= 12:
        parser.error("--games must be 1..2000 and --rounds 1..12")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 8 * args.games + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    tmp = tempfile.TemporaryDirectory(prefix="koikoi-load-")
    if args.database_url is None:
        args.database_url = f"sqlite:///{tmp.name}/load.db"
    if args.port == 0:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.port = s.getsockname()[1]
    base = f"http://127.0.0.1:{args.port}"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--serve",
        "--port",
        str(args.port),
        "--database-url",
        args.database_url,
    ]
    proc = subprocess.Popen(cmd, env=env, cwd=str(ROOT), preexec_fn=_raise_fd_limit)
    try:
        wait_healthy(base, proc)
        report = asyncio.run(run_load(args, base))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        tmp.cleanup()
    ok = (
        report["errors"] == 0
        and report["lost_actions"] == 0
        and (report["server_latency_ms"]["p95"] or 0) < args.target_ms
    )
    report["ok"] = ok
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    s = report["server_latency_ms"]
    print(
        f"\n{report['games']} games, {report['actions_acked']} actions in {report['play_s']} s "
        f"({report['actions_per_s']}/s): server p50 {s['p50']} ms, p95 {s['p95']} ms, "
        f"p99 {s['p99']} ms; errors {report['errors']}, lost actions {report['lost_actions']}: "
        + ("OK" if ok else "FAILED"),
        file=sys.stderr,
    )
    return 0 if ok else 1


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8192)), hard))


if __name__ == "__main__":
    sys.exit(main())

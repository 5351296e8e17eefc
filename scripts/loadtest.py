#!/usr/bin/env python3
"""Load benchmark of ``koikoi serve``: many concurrent friend games on 1 or more processes.

For each number of server processes in ``--processes`` and each number of
games in ``--games`` (both comma-separated lists), it starts that many server
processes on 127.0.0.1 (one process: a fresh SQLite file by default, or
``--database-url``; several: one PostgreSQL database, ``--database-url``, else
``$KOIKOI_TEST_DATABASE_URL``, else a throw-away cluster started with
``scripts/pg-test-cluster.sh``), creates the friend games (each on a random
process, the invite claimed on a random process), and plays every game to its
end with two scripted WebSocket clients making random legal moves (think
time ``--think`` seconds on average). Each client connects to a random
process, as behind a load balancer without affinity (``--affinity none``, the
default), or to the process a hash of its game id picks, as a proxy routing
``/ws?game=ID`` does (``--affinity game``). A client on another process than
the game's owner has its actions forwarded; an owner with no client of a game
hands the game to the process that forwards (counted in ``handovers``), so
forwarding stays only where the two players are on different processes: with
two processes and no affinity about a quarter of the actions, with affinity
almost none. Then it reports:

* the server-side latency per action, p50/p95/p99/max (from receiving the
  ``act`` frame to sending its acknowledgement; there is no AI in friend games),
  read from each server's ``/metrics`` (with several processes, the worst
  process's figure);
* the client round trip per action, for comparison;
* errors (any ``error`` message, failed connection or unfinished game);
* lost actions: acknowledged actions missing from the database (counted for
  every game, finished or not); actions sent but never acknowledged (refused
  with an error, or cut by a closed connection) are counted apart.

Loopback only, bounded in games and time (``--timeout``); the servers are
stopped after each run. With several runs it ends with a table of server p95
against games and processes. Exit status 0 when every run has no error, no
lost action and p95 < ``--target-ms``.

Examples::

    python scripts/loadtest.py --games 200 --rounds 2 --think 0.25
    python scripts/loadtest.py --games 100,200,300 --processes 1,2 --rounds 2   # make loadtest
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
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
    from koikoi.server.config import ServerConfig
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
        create_app(args.database_url, config=config, settle_gc=True),
        host="127.0.0.1",
        port=args.port,
        log_config=None,
        access_log=False,
        ws_max_size=64 * 1024,
        ws_per_message_deflate=args.server_deflate,
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
    sent_times: list[float] = field(default_factory=list)
    """When each acknowledged action was sent (perf_counter), beside its round trip."""
    expected: int = 0
    """Clients in the run: the barrier opens when all of them have arrived."""
    arrived: int = 0
    all_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    go: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the clients may start playing (at once without ``--barrier``)."""

    def arrive(self) -> None:
        """A client is connected and has its first state (or failed to connect)."""
        self.arrived += 1
        if self.arrived >= self.expected:
            self.all_arrived.set()

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

    arrived = False
    try:
        compression = None if no_deflate else "deflate"
        async with connect(url, open_timeout=60, max_size=2**22, compression=compression) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token}))
            sent_at: float | None = None
            async for raw in ws:
                msg = json.loads(raw)
                kind = msg["type"]
                if not arrived and kind in ("state", "error"):
                    arrived = True
                    stats.arrive()
                    await stats.go.wait()
                if kind == "error":
                    stats.errors.append(f"{game}/{seat}: {msg['code']}: {msg['message']}")
                    continue
                if kind != "state":
                    continue
                if "ack" in msg and sent_at is not None:
                    stats.acked += 1
                    stats.acked_by_game[game] = stats.acked_by_game.get(game, 0) + 1
                    stats.rtt.append(time.perf_counter() - sent_at)
                    stats.sent_times.append(sent_at)
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
    finally:
        if not arrived:
            stats.arrive()


def by_second(stats: Stats, start: float) -> list[list[float]]:
    """``[second, actions, p95 round trip in ms]`` for each second of play: where in
    the run the slow actions were (the connection burst at the start, the ends of the
    rounds, ...)."""
    buckets: dict[int, list[float]] = {}
    for sent, rtt in zip(stats.sent_times, stats.rtt, strict=True):
        buckets.setdefault(int(sent - start), []).append(rtt)
    return [[k, len(v), round(pct(v, 0.95) * 1000, 1)] for k, v in sorted(buckets.items())]


def stored_counts(url: str, game_ids: list[str]) -> dict[str, int]:
    """How many actions of each game the database holds."""
    from koikoi.server.storage import Storage

    store = Storage(url)
    try:
        return {g: len(store.action_ids(g)) for g in game_ids}
    finally:
        store.dispose()


def pct(data: list[float], q: float) -> float:
    if not data:
        return float("nan")
    data = sorted(data)
    return data[min(len(data) - 1, round(q * (len(data) - 1)))]


async def run_load(args: argparse.Namespace, bases: list[str], n_games: int) -> dict[str, Any]:
    import httpx

    rng = random.Random(args.seed)
    stats = Stats()
    limits = httpx.Limits(max_connections=50)
    base = bases[0]
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        sem = asyncio.Semaphore(50)

        async def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
            # A kept-alive connection the server closed meanwhile: try again.
            for attempt in range(3):
                try:
                    r = await http.post(url, json=body)
                    r.raise_for_status()
                    data: dict[str, Any] = r.json()
                    return data
                except httpx.TransportError:
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

        async def make_game() -> tuple[str, list[tuple[int, str]], str]:
            home, away = rng.choice(bases), rng.choice(bases)
            async with sem:
                g = await post(home + "/api/games", {"mode": "friend", "rounds": args.rounds})
                j = await post(away + "/api/join", {"invite": g["invite"]})
            return g["game"], [(g["seat"], g["token"]), (j["seat"], j["token"])], g["watch"]

        async def cpu_seconds() -> float:
            total = 0.0
            for b in bases:
                total += (await http.get(b + "/metrics", headers=JSON_METRICS)).json()["cpu_s"]
            return total

        t0 = time.perf_counter()
        games = await asyncio.gather(*(make_game() for _ in range(n_games)))
        created = time.perf_counter() - t0

        def ws_url(game: str) -> str:
            if args.affinity == "game":  # a proxy hashing the URL's game id
                digest = int(hashlib.sha256(game.encode()).hexdigest(), 16)
                return bases[digest % len(bases)].replace("http://", "ws://") + f"/ws?game={game}"
            return rng.choice(bases).replace("http://", "ws://") + "/ws"

        stats.expected = 2 * len(games)
        if not args.barrier:
            stats.go.set()
        cpu_start = await cpu_seconds()
        t1 = time.perf_counter()
        tasks = [
            player(
                ws_url(game),
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
        playing = asyncio.gather(*tasks)  # scheduled now: they connect during the barrier
        connected = 0.0
        if args.barrier:
            # Every client connects and receives its first state, then all start to
            # play: the latency is that of the games in play, the connection burst
            # (every client of the run within a fraction of a second) is timed apart.
            try:
                await asyncio.wait_for(stats.all_arrived.wait(), timeout=args.timeout)
            except TimeoutError:
                stats.errors.append(f"not every client connected within {args.timeout} s")
            connected = time.perf_counter() - t1
            cpu_start = await cpu_seconds()
            t1 = time.perf_counter()
            stats.go.set()
        try:
            await asyncio.wait_for(playing, timeout=args.timeout)
        except TimeoutError:
            stats.errors.append(f"timeout after {args.timeout} s")
        played = time.perf_counter() - t1

        # Every acknowledged action must be stored (read from the database, so that
        # an unfinished game counts too), and every finished game has its record.
        counts = await asyncio.to_thread(stored_counts, args.database_url, [g for g, _, _ in games])
        stored = 0
        for game, _, watch in games:
            stored_here = counts[game]
            stored += min(stored_here, stats.acked_by_game.get(game, 0))
            if stored_here < stats.acked_by_game.get(game, 0):
                stats.errors.append(
                    f"{game}: {stats.acked_by_game.get(game, 0)} acknowledged, {stored_here} stored"
                )
            if game not in stats.finished_games:
                continue
            r = await http.post(f"{base}/api/games/{game}/record", json={"token": watch})
            if r.status_code != 200:
                stats.errors.append(f"{game}: record: {r.status_code} {r.text[:100]}")
            elif len(r.json()["actions"]) != stored_here:
                stats.errors.append(f"{game}: the record differs from the stored actions")
        every = [(await http.get(b + "/metrics", headers=JSON_METRICS)).json() for b in bases]
        cpu_end = sum(m["cpu_s"] for m in every)

    unfinished = n_games - len(stats.finished_games)
    if unfinished:
        stats.errors.append(f"{unfinished} games did not finish")
    lost = stats.acked - stored
    # The worst process's quantiles (each process measures its own actions).
    server = max((m["action_latency_ms"] for m in every), key=lambda d: d["p95"] or 0.0)
    return {
        "processes": len(bases),
        "server_p95_ms_each": [m["action_latency_ms"]["p95"] for m in every],
        "forwarded": sum(m["counters"].get("forwarded", 0) for m in every),
        "handovers": sum(m["counters"].get("handovers", 0) for m in every),
        "counters": [m["counters"] for m in every],
        "games": n_games,
        "clients": 2 * n_games,
        "rounds_per_game": args.rounds,
        "think_s": args.think,
        "deflate": args.server_deflate and not args.no_deflate,
        "affinity": args.affinity,
        "database": args.database_url.split("://")[0],
        "create_s": round(created, 2),
        "barrier": args.barrier,
        "connect_s": round(connected, 2) if args.barrier else None,
        "play_s": round(played, 2),
        "actions_sent": stats.sent,
        "actions_acked": stats.acked,
        "actions_stored": stored,
        "actions_unanswered": stats.sent - stats.acked,
        "actions_per_s": round(stats.acked / played, 1) if played else None,
        "server_latency_ms": server,
        "client_rtt_ms": {
            "p50": round(pct(stats.rtt, 0.5) * 1000, 3),
            "p95": round(pct(stats.rtt, 0.95) * 1000, 3),
            "max": round(max(stats.rtt, default=0) * 1000, 3),
            "mean": round(statistics.fmean(stats.rtt) * 1000, 3) if stats.rtt else None,
        },
        "client_rtt_p95_by_second": by_second(stats, t1),
        "errors": len(stats.errors),
        "error_samples": stats.errors[:10],
        "lost_actions": lost,
        "store_batches": sum(m["counters"].get("store_batches", 0) for m in every),
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


def _counts(text: str, what: str, top: int) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"{what} must be numbers separated by commas, not {text!r}") from None
    if not values or not all(1 <= v <= top for v in values):
        raise SystemExit(f"{what} must be 1..{top}, not {text!r}")
    return values


def start_servers(args: argparse.Namespace, url: str, n: int) -> list[tuple[str, Any]]:
    """``n`` server processes on free ports, all on database ``url``; waits until healthy."""
    import socket

    out: list[tuple[str, Any]] = []
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for _ in range(n):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--serve",
            "--port",
            str(port),
            "--database-url",
            url,
        ]
        if args.server_deflate:
            cmd.append("--server-deflate")
        proc = subprocess.Popen(cmd, env=env, cwd=str(ROOT), preexec_fn=_raise_fd_limit)
        out.append((f"http://127.0.0.1:{port}", proc))
    try:
        for base, proc in out:
            wait_healthy(base, proc, timeout=120)
    except BaseException:
        # The others would outlive this script and hold its output pipes open.
        stop_servers(out)
        raise
    return out


def stop_servers(servers: list[tuple[str, Any]]) -> None:
    for _, proc in servers:
        proc.send_signal(signal.SIGTERM)
    for _, proc in servers:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def postgresql_url(args: argparse.Namespace, tmp: str) -> tuple[str, bool]:
    """The PostgreSQL URL for several processes: given, from the environment, or a
    throw-away cluster (returned with True: stop it at the end)."""
    if args.database_url:
        if not args.database_url.startswith(("postgresql", "postgres:")):
            raise SystemExit("several processes need a PostgreSQL --database-url")
        return args.database_url, False
    env_url = os.environ.get("KOIKOI_TEST_DATABASE_URL")
    if env_url:
        return env_url, False
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = ROOT / "scripts" / "pg-test-cluster.sh"
    done = subprocess.run(
        [str(script), "start", f"{tmp}/pg", str(port)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(
            "several processes need PostgreSQL: pass --database-url or install the "
            f"PostgreSQL server to start a throw-away one ({done.stderr.strip()})"
        )
    return done.stdout.strip(), True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--games", default="200", help="concurrent games, or a list: 100,200,300 (default 200)"
    )
    parser.add_argument(
        "--processes",
        default="1",
        help="server processes, or a list: 1,2 (default 1; more than one needs PostgreSQL)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds per game (default 2)")
    parser.add_argument(
        "--think", type=float, default=0.25, help="mean think time, s (default 0.25)"
    )
    parser.add_argument(
        "--no-deflate",
        action="store_true",
        help="clients refuse permessage-deflate (browsers accept it; default: accept)",
    )
    parser.add_argument(
        "--barrier",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="connect every client (hello, first state) before any plays, and time the "
        "connection burst apart (default); --no-barrier: each plays as soon as connected, "
        "the burst inside the latency figures",
    )
    parser.add_argument(
        "--affinity",
        choices=("none", "game"),
        default="none",
        help="how the clients pick a process: none (at random, a proxy without affinity; "
        "the default) or game (by a hash of the game id in /ws?game=, as deploy/nginx.conf "
        "does)",
    )
    parser.add_argument(
        "--server-deflate",
        action="store_true",
        help="the servers accept permessage-deflate (koikoi serve --ws-deflate; default: off, "
        "as in koikoi serve)",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        help="default: a fresh SQLite file for one process; PostgreSQL for several",
    )
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=300, help="give up after (s)")
    parser.add_argument("--target-ms", type=float, default=50.0, help="p95 target (default 50)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the scripted clients")
    parser.add_argument("--json", default=None, help="also write the reports to this file")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args)
    game_counts = _counts(args.games, "--games", 2000)
    process_counts = _counts(args.processes, "--processes", 16)
    if not 1 <= args.rounds <= 12:
        parser.error("--rounds must be 1..12")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 8 * max(game_counts) + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    tmp = tempfile.TemporaryDirectory(prefix="koikoi-load-")
    stop_pg = False
    url = args.database_url
    if max(process_counts) > 1:
        url, stop_pg = postgresql_url(args, tmp.name)
    reports: list[dict[str, Any]] = []
    try:
        for n_proc in process_counts:
            for n_games in game_counts:
                run_url = url or f"sqlite:///{tmp.name}/load-{n_games}.db"
                args.database_url = run_url
                servers = start_servers(args, run_url, n_proc)
                try:
                    report = asyncio.run(run_load(args, [b for b, _ in servers], n_games))
                finally:
                    stop_servers(servers)
                report["ok"] = (
                    report["errors"] == 0
                    and report["lost_actions"] == 0
                    and (report["server_latency_ms"]["p95"] or 0) < args.target_ms
                )
                reports.append(report)
                print(json.dumps(report, indent=2))
                s = report["server_latency_ms"]
                print(
                    f"\n{n_proc} process(es), {n_games} games, {report['actions_acked']} actions "
                    f"in {report['play_s']} s ({report['actions_per_s']}/s): server p50 "
                    f"{s['p50']} ms, p95 {s['p95']} ms, p99 {s['p99']} ms; errors "
                    f"{report['errors']}, lost actions {report['lost_actions']}: "
                    + ("OK" if report["ok"] else "FAILED"),
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if stop_pg:
            subprocess.run(
                [str(ROOT / "scripts" / "pg-test-cluster.sh"), "stop", f"{tmp.name}/pg"],
                check=False,
            )
        tmp.cleanup()
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=2) + "\n", encoding="utf-8")
    if len(reports) > 1:
        print(table(reports))
    return 0 if all(r["ok"] for r in reports) else 1


def table(reports: list[dict[str, Any]]) -> str:
    """Server p95 against games and processes (Markdown)."""
    lines = [
        "| processes | games | actions | actions/s | server p50 | server p95 | p99 "
        "| CPU ms/action | forwarded | handovers | errors | lost |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        s = r["server_latency_ms"]
        lines.append(
            f"| {r['processes']} | {r['games']} | {r['actions_acked']:,} | "
            f"{r['actions_per_s']:,} | {s['p50']} ms | **{s['p95']} ms** | {s['p99']} ms | "
            f"{r['server_cpu_ms_per_action']} | {r['forwarded']:,} | {r['handovers']:,} | "
            f"{r['errors']} | "
            f"{r['lost_actions']} |"
        )
    return "\n".join(lines)


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8192)), hard))


if __name__ == "__main__":
    sys.exit(main())

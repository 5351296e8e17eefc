#!/usr/bin/env python3
"""Soak test of ``koikoi serve``: many short games one after another, memory must stay flat.

Starts one server process on 127.0.0.1 (the app ``koikoi serve`` runs, with a
fresh SQLite file and a short ``finished_grace``, so that finished games leave
memory within a second) and plays ``--games`` one-round friend games to their
end, ``--concurrency`` at a time, each with two scripted WebSocket clients
making random legal moves without think time. Every ``--every`` finished games
it samples the server process's resident memory (``VmRSS`` of
``/proc/PID/status``) and the rooms in memory (``/healthz``), and prints a row.

At the end it checks that every game's record is in the database (finished,
with its record stored) and that the rooms in memory fall to zero once the
grace has passed, then gives a verdict on memory:

* **flat** when the resident memory grows by less than ``--flat-mib`` over the
  second half of the run. The growth is the slope of a least-squares line
  through the second half's samples times the games of that half (one sample
  spike does not decide). The first half is the warm-up: the allocator's
  arenas, SQLite's page cache and the interpreter's caches fill there. The
  default 8 MiB is well above the noise of a healthy server (a few MiB) and well
  below what a leak of the smallest kind would show: a finished game kept in
  memory costs tens of KiB (its engine state, record and room), so 5,000 games
  leaked would be hundreds of MiB, and even 2 KiB per game would be 10 MiB.
* **growing** otherwise.

Exit status 0 when memory is flat, every record is stored, no client saw an
error and the rooms went back to zero.

Example::

    nice -n 15 python scripts/soak.py --games 10000 --every 500
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

FLAT_MIB = 8.0
"""Default bound on the second half's memory growth, MiB (see the module docstring)."""


# ------------------------------------------------------------------ pieces


@dataclass(frozen=True)
class Sample:
    """One row of the table: after ``games`` finished games."""

    games: int
    rss_mib: float
    rooms: int
    elapsed_s: float


def rss_mib(pid: int, proc_root: Path = Path("/proc")) -> float:
    """Resident memory of process ``pid`` in MiB, from ``VmRSS`` of its ``status`` file.

    Raises:
        RuntimeError: the file has no ``VmRSS`` line (not Linux, or the process is gone).
    """
    try:
        text = (proc_root / str(pid) / "status").read_text(encoding="ascii")
    except OSError as exc:
        raise RuntimeError(f"cannot read the memory of process {pid}: {exc}") from None
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            value, unit = line.split()[1:3]
            if unit.lower() != "kb":
                raise RuntimeError(f"VmRSS of process {pid} is in {unit!r}, expected kB")
            return int(value) / 1024
    raise RuntimeError(f"process {pid} has no VmRSS line (a zombie, or not Linux)")


def second_half_growth(samples: Sequence[Sample]) -> float:
    """Memory growth over the second half of the run, MiB: the least-squares slope of
    RSS against games over the samples from the middle on, times the games of that
    half. Zero with fewer than two such samples."""
    if not samples:
        return 0.0
    last = samples[-1].games
    half = [s for s in samples if s.games >= last / 2]
    if len(half) < 2:
        return 0.0
    xs = [float(s.games) for s in half]
    ys = [s.rss_mib for s in half]
    mx = sum(xs) / len(xs)
    my = sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return slope * (xs[-1] - xs[0])


def verdict(samples: Sequence[Sample], flat_mib: float = FLAT_MIB) -> tuple[bool, float]:
    """``(flat, growth)``: whether the second half grew less than ``flat_mib``."""
    growth = second_half_growth(samples)
    return growth < flat_mib, growth


def table(samples: Sequence[Sample]) -> str:
    """The samples as a Markdown table."""
    lines = [
        "| games done | RSS MiB | rooms in memory | elapsed s |",
        "|---:|---:|---:|---:|",
    ]
    lines += [f"| {s.games:,} | {s.rss_mib:.1f} | {s.rooms} | {s.elapsed_s:.0f} |" for s in samples]
    return "\n".join(lines)


# ------------------------------------------------------------------ server


def serve(args: argparse.Namespace) -> int:
    """Server mode (the child process): the app of ``koikoi serve``, with the per-address
    limits raised for one client host and a short grace for finished games."""
    import uvicorn

    from koikoi.server.app import create_app
    from koikoi.server.config import ServerConfig
    from koikoi.server.logs import configure_logging

    configure_logging("warning")
    config = ServerConfig(
        message_rate=1e6,
        message_burst=1e6,
        http_rate=1e6,
        http_burst=1e6,
        max_connections_per_address=100_000,
        max_unauthenticated_per_address=100_000,
        finished_grace=args.grace,
        ai_workers=1,
    )
    uvicorn.run(
        create_app(args.database_url, config=config, settle_gc=True),
        host="127.0.0.1",
        port=args.port,
        log_config=None,
        access_log=False,
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=10,
    )
    return 0


def wait_healthy(base: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with status {proc.returncode}")
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("server did not start")


# ------------------------------------------------------------------ clients


@dataclass
class Run:
    """What the clients saw."""

    done: int = 0
    games: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)


async def play_seat(url: str, game: str, token: str, seat: int, rng: random.Random) -> None:
    """One scripted player: random legal moves until the game is over."""
    from websockets.asyncio.client import connect

    async with connect(url, open_timeout=60, max_size=2**22) as ws:
        await ws.send(json.dumps({"type": "hello", "token": token}))
        async for raw in ws:
            msg = json.loads(raw)
            if msg["type"] == "error":
                raise RuntimeError(f"{msg['code']}: {msg['message']}")
            if msg["type"] != "state":
                continue
            if msg["over"]:
                return
            view = msg["view"]
            if view["current"] == seat and view["legal"]:
                action = rng.choice(view["legal"])["id"]
                await ws.send(json.dumps({"type": "act", "action": action, "seq": msg["seq"]}))
    raise RuntimeError("connection closed before the end of the game")


async def soak(args: argparse.Namespace, base: str, pid: int) -> Run:
    import httpx

    run = Run()
    rng = random.Random(args.seed)
    url = base.replace("http://", "ws://") + "/ws"
    started = time.monotonic()

    async with httpx.AsyncClient(base_url=base, timeout=60) as http:

        async def sample() -> None:
            games = run.done
            health = (await http.get("/healthz")).json()
            s = Sample(games, rss_mib(pid), int(health["rooms"]), time.monotonic() - started)
            run.samples.append(s)
            print(f"| {s.games:,} | {s.rss_mib:.1f} | {s.rooms} | {s.elapsed_s:.0f} |", flush=True)

        async def one_game(index: int) -> None:
            seed = rng.random()
            try:
                g = (await http.post("/api/games", json={"mode": "friend", "rounds": 1})).json()
                j = (await http.post("/api/join", json={"invite": g["invite"]})).json()
                run.games.append(g["game"])
                await asyncio.wait_for(
                    asyncio.gather(
                        play_seat(url, g["game"], g["token"], g["seat"], random.Random(seed)),
                        play_seat(url, g["game"], j["token"], j["seat"], random.Random(-seed)),
                    ),
                    timeout=args.game_timeout,
                )
            except Exception as exc:  # counted and reported, the soak goes on
                run.errors.append(f"game {index}: {type(exc).__name__}: {exc}")
            run.done += 1
            if run.done % args.every == 0:
                await sample()

        print(table([]), flush=True)
        await sample()
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(args.games):
            queue.put_nowait(i)

        stop_at = started + args.max_seconds if args.max_seconds else float("inf")

        async def worker() -> None:
            while not queue.empty() and time.monotonic() < stop_at:
                await one_game(queue.get_nowait())

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        if run.samples[-1].games != run.done:
            await sample()
        # The finished games leave memory once the grace has passed.
        deadline = time.monotonic() + args.grace * 4 + 30
        while time.monotonic() < deadline:
            if (await http.get("/healthz")).json()["rooms"] == 0:
                break
            await asyncio.sleep(max(0.2, args.grace / 2))
        rooms_after = int((await http.get("/healthz")).json()["rooms"])
        if rooms_after:
            run.errors.append(f"{rooms_after} rooms still in memory after the grace")
    return run


def check_records(database_url: str, games: Sequence[str]) -> list[str]:
    """The games whose record is not in the database (unfinished or missing)."""
    from koikoi.server.storage import Storage

    storage = Storage(database_url)
    try:
        return [g for g in games if storage.get_record(g) is None]
    finally:
        storage.engine.dispose()


# ------------------------------------------------------------------ main


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    parser.add_argument(
        "--every", type=int, default=0, help="sample every N games (default: games / 20)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="games played at once (default 8)"
    )
    parser.add_argument(
        "--grace", type=float, default=0.5, help="finished_grace of the server, s (default 0.5)"
    )
    parser.add_argument(
        "--flat-mib",
        type=float,
        default=FLAT_MIB,
        help=f"largest memory growth over the second half that is flat (default {FLAT_MIB:g})",
    )
    parser.add_argument("--game-timeout", type=float, default=120, help="seconds per game")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=0,
        help="start no new game after this many seconds (default: no limit); the checks "
        "and the verdict cover the games played",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the scripted clients")
    parser.add_argument("--json", default=None, help="also write the result to this file")
    parser.add_argument("--database-url", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.serve:
        if args.games < 2:
            parser.error(f"--games must be at least 2, not {args.games}")
        if args.every < 0 or args.concurrency < 1 or args.grace <= 0 or args.flat_mib <= 0:
            parser.error(
                "--every must be 0 or more, --concurrency 1 or more, --grace and --flat-mib above 0"
            )
        if args.every == 0:
            args.every = max(1, args.games // 20)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.serve:
        return serve(args)
    tmp = tempfile.TemporaryDirectory(prefix="koikoi-soak-")
    args.database_url = f"sqlite:///{tmp.name}/soak.db"
    args.port = free_port()
    base = f"http://127.0.0.1:{args.port}"
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--serve",
        "--port",
        str(args.port),
        "--database-url",
        args.database_url,
        "--grace",
        str(args.grace),
    ]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, env=env, cwd=str(ROOT))
    try:
        wait_healthy(base, proc)
        run = asyncio.run(soak(args, base, proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    try:
        missing = check_records(args.database_url, run.games)
    finally:
        tmp.cleanup()
    flat, growth = verdict(run.samples, args.flat_mib)
    first = run.samples[0].rss_mib
    cut = args.games - run.done
    ok = flat and not missing and not run.errors and len(run.games) == run.done
    result: dict[str, Any] = {
        "games": run.done,
        "games_asked": args.games,
        "games_started": len(run.games),
        "records_missing": len(missing),
        "errors": len(run.errors),
        "error_samples": run.errors[:10],
        "rss_start_mib": round(first, 1),
        "rss_end_mib": round(run.samples[-1].rss_mib, 1),
        "rss_max_mib": round(max(s.rss_mib for s in run.samples), 1),
        "second_half_growth_mib": round(growth, 2),
        "flat_mib": args.flat_mib,
        "flat": flat,
        "elapsed_s": round(run.samples[-1].elapsed_s, 1),
        "ok": ok,
        "samples": [s.__dict__ for s in run.samples],
    }
    print()
    if cut:
        print(f"stopped after --max-seconds: {run.done:,} of {args.games:,} games played")
    print(
        f"{run.done:,} games in {result['elapsed_s']} s; records stored "
        f"{len(run.games) - len(missing):,}/{run.done:,}; errors {len(run.errors)}; "
        f"RSS {first:.1f} -> {run.samples[-1].rss_mib:.1f} MiB (max {result['rss_max_mib']}), "
        f"second half {growth:+.2f} MiB: "
        + ("flat" if flat else "GROWING")
        + ("" if ok else "; FAILED")
    )
    for line in run.errors[:10]:
        print("  " + line)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

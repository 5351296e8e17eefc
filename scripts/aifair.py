#!/usr/bin/env python3
"""Fair AI time: how long one address waits for its AI while others keep the AI busy.

Starts ``koikoi serve``'s app in a child process on 127.0.0.1 (one AI worker by
default, as on a two-core machine; a fresh SQLite file; the server's default
limits), then for each number of attacker addresses in ``--attackers`` (a
comma-separated list; 0 is the calm baseline) runs for ``--duration`` seconds:

* each attacker address (127.0.0.2, 127.0.0.3, ...) plays as many games against
  the expert as the server lets one address have (8 by default), answering at
  once and asking for a hint on every turn (one hint in flight per seat: the
  most the protocol allows);
* the victim address (127.0.0.100) plays one game against ``--victim-agent``
  (level 7, the expert with 0.2 s a move) with a person's think time (0.5 to
  1.5 s), and times each *AI reply*: from the acknowledgement of its action to
  the state in which it is to move again (or the round is over).

It prints one line per run and a table (victim median and p95, AI moves made,
hints answered); ``--json FILE`` writes the figures. Loopback only, bounded in
time; the server is stopped at the end. ``--src DIR`` runs the server from
another checkout's ``src`` (for a before/after comparison).

Examples::

    python scripts/aifair.py --attackers 0,1,4 --duration 60
    python scripts/aifair.py --attackers 0,1,4 --src /path/to/old/checkout/src
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VICTIM_ADDRESS = "127.0.0.100"


def serve(args: argparse.Namespace) -> int:
    """Server mode (the child process): the app with the default limits."""
    import uvicorn

    from koikoi.server.app import create_app
    from koikoi.server.config import ServerConfig
    from koikoi.server.logs import configure_logging

    configure_logging("warning")
    config = ServerConfig.from_env(ai_workers=args.ai_workers)
    uvicorn.run(
        create_app(args.database_url, config=config),
        host="127.0.0.1",
        port=args.port,
        log_config=None,
        access_log=False,
    )
    return 0


@dataclass
class Figures:
    replies: list[float] = field(default_factory=list)
    """The victim's AI replies (seconds)."""
    ai_moves: int = 0
    hints: int = 0
    errors: list[str] = field(default_factory=list)


async def create(base: str, address: str, agent: str) -> dict[str, Any] | None:
    """A new game against ``agent`` from ``address``; None if refused (the cap)."""
    import httpx

    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(timeout=10, transport=transport) as client:
        r = await client.post(base + "/api/games", json={"mode": "ai", "agent": agent})
    if r.status_code != 200:
        return None
    data: dict[str, Any] = r.json()
    return data


async def play(
    base: str,
    address: str,
    agent: str,
    until: float,
    figures: Figures,
    *,
    victim: bool,
    rng: random.Random,
) -> None:
    """Play games against ``agent`` from ``address`` until ``until`` (a new one when one
    ends); the victim times its AI replies, an attacker asks a hint every turn."""
    from websockets.asyncio.client import connect

    ws_url = base.replace("http://", "ws://") + "/ws"
    while time.monotonic() < until:
        game = await create(base, address, agent)
        if game is None:
            await asyncio.sleep(1.0)
            continue
        async with connect(ws_url, open_timeout=10, local_addr=(address, 0)) as ws:
            await ws.send(json.dumps({"type": "hello", "token": game["token"]}))
            acked: float | None = None
            hinting = False
            seat = game["seat"]
            while time.monotonic() < until:
                try:
                    text = await asyncio.wait_for(ws.recv(), max(0.01, until - time.monotonic()))
                except TimeoutError:
                    return
                msg = json.loads(text)
                kind = msg["type"]
                if kind == "hint":
                    figures.hints += 1
                    hinting = False
                    continue
                if kind == "error":
                    if msg.get("code") == "hint_unavailable":
                        hinting = False
                    else:
                        figures.errors.append(str(msg.get("message")))
                    continue
                if kind != "state":
                    continue
                now = time.monotonic()
                if "ack" in msg:
                    acked = now
                legal = [a["id"] for a in msg["view"]["legal"]]
                mine = bool(legal) and msg["view"]["current"] == seat
                if msg["over"]:
                    break
                if not mine:
                    continue
                if acked is not None and "ack" not in msg:
                    figures.replies.append(now - acked)
                    figures.ai_moves += 1
                    acked = None
                if not victim and not hinting:
                    await ws.send(json.dumps({"type": "hint"}))
                    hinting = True
                await asyncio.sleep(rng.uniform(0.5, 1.5) if victim else 0.01)
                await ws.send(
                    json.dumps({"type": "act", "action": rng.choice(legal), "seq": msg["seq"]})
                )


async def run(base: str, attackers: int, args: argparse.Namespace) -> dict[str, Any]:
    until = time.monotonic() + args.duration
    victim = Figures()
    attack = Figures()
    rng = random.Random(attackers)
    tasks = [play(base, VICTIM_ADDRESS, args.victim_agent, until, victim, victim=True, rng=rng)]
    for a in range(attackers):
        address = f"127.0.0.{a + 2}"
        for g in range(args.games):
            seat_rng = random.Random(f"{a}/{g}")
            tasks.append(play(base, address, "expert", until, attack, victim=False, rng=seat_rng))
    await asyncio.gather(*tasks)
    replies = sorted(victim.replies)

    def pct(q: float) -> float | None:
        return None if not replies else round(replies[round(q * (len(replies) - 1))], 3)

    return {
        "attackers": attackers,
        "victim_replies": len(replies),
        "victim_median_s": None if not replies else round(statistics.median(replies), 3),
        "victim_p95_s": pct(0.95),
        "victim_max_s": None if not replies else round(replies[-1], 3),
        "attack_ai_moves": attack.ai_moves,
        "attack_hints": attack.hints,
        "errors": len(victim.errors) + len(attack.errors),
        "error_samples": (victim.errors + attack.errors)[:3],
    }


def start_server(args: argparse.Namespace, url: str) -> tuple[str, subprocess.Popen[bytes]]:
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if args.src:
        env["PYTHONPATH"] = str(Path(args.src).resolve())
    cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--port", str(port)]
    cmd += ["--database-url", url, "--ai-workers", str(args.ai_workers)]
    proc = subprocess.Popen(cmd, env=env, cwd=str(ROOT))
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + args.start_timeout  # a cold start compiles the kernel
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with status {proc.returncode}")
        try:
            health = httpx.get(base + "/healthz", timeout=1).json()
            if health.get("ai_workers_ready", 0) >= args.ai_workers:
                return base, proc
        except (httpx.HTTPError, ValueError):
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("the server's AI workers did not start in time")
        time.sleep(0.3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attackers", default="0,1,4", help="attacker addresses, per run")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--games", type=int, default=8, help="games per attacker address")
    parser.add_argument("--victim-agent", default="level:7", help="the victim's AI level")
    parser.add_argument("--ai-workers", type=int, default=1)
    parser.add_argument("--src", help="run the server from this src directory")
    parser.add_argument("--start-timeout", type=float, default=300.0)
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args)
    try:
        counts = [int(x) for x in args.attackers.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--attackers must be numbers separated by commas, not {args.attackers!r}")
    if not counts or not all(0 <= n <= 90 for n in counts):
        parser.error(f"--attackers must be 0 to 90 each, not {args.attackers!r}")
    if not 1 <= args.duration <= 3600:
        parser.error(f"--duration must be 1 to 3600 seconds, not {args.duration}")
    import tempfile

    reports = []
    with tempfile.TemporaryDirectory() as tmp:
        base, proc = start_server(args, f"sqlite:///{tmp}/aifair.db")
        try:
            for n in counts:
                report = asyncio.run(run(base, n, args))
                print(json.dumps(report), flush=True)
                reports.append(report)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    print("attackers | victim median | victim p95 | victim replies | attack AI moves, hints")
    for r in reports:
        print(
            f"{r['attackers']:9} | {r['victim_median_s']} s | {r['victim_p95_s']} s | "
            f"{r['victim_replies']} | {r['attack_ai_moves']}, {r['attack_hints']}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=2) + "\n")
    return 0 if all(r["errors"] == 0 for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())

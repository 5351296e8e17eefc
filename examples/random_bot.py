#!/usr/bin/env python3
"""A tiny Koi-Koi bot speaking koikoi's JSON-lines protocol (standard library only).

Run it in the arena:

    koikoi arena cmd:examples/random_bot.py heuristic --rules nintendo --matches 10

It reads one JSON object per line on stdin and answers each ``act`` with one
line on stdout: a random legal action, except that it always stops when asked
"koi-koi or stop?" and captures a Bright when it can. Logs go to stderr (stdout
is reserved for answers). See docs/bot-protocol.md.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any


def choose(message: dict[str, Any], rng: random.Random) -> int:
    """Pick an action id from an ``act`` message."""
    legal = message["legal"]
    texts: dict[int, str] = {int(item["id"]): str(item["action"]) for item in legal}
    for action_id, text in texts.items():
        if text == "stop":
            return action_id
    brights = ("1L", "3L", "8L", "11L", "12L")
    for action_id, text in texts.items():
        words = text.split()
        if len(words) >= 2 and any(w in brights for w in words[1:]):
            field = message["view"]["field"]
            if any(w in field for w in words[1:]) or words[0] == "take":
                return action_id
    return rng.choice(list(texts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="random seed")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seat = None
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            seat = message["seat"]
            print(f"random_bot: seat {seat}, rules {message['rules']['name']}", file=sys.stderr)
        elif kind == "act":
            print(json.dumps({"action": choose(message, rng)}), flush=True)
        elif kind == "error":
            print(f"random_bot: refused: {message.get('message')}", file=sys.stderr)
        elif kind == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())

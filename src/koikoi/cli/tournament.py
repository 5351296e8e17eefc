"""``koikoi tournament``: a round robin of agents on duplicate deals, rated with intervals.

>>> from koikoi.cli import main
>>> main(["tournament", "greedy", "random", "--rules", "koikoi-japan", "--matches", "2",
...       "--bootstrap", "20", "--json"])  # doctest: +ELLIPSIS
{"rules": "koikoi-japan", "matches_per_pairing": 2, ...
0
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from koikoi.cli.common import add_command, add_json_option, add_rules_option, add_seed_option

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add ``koikoi tournament``."""
    parser = add_command(
        subparsers,
        "tournament",
        run=run,
        help="a round robin of agents on duplicate deals, with Elo ratings and intervals",
        description=(
            "Play every pairing of the agents on the same deals, each deal twice with the "
            "seats swapped, and rate the agents: a Bradley-Terry maximum-likelihood fit on "
            "the Elo scale with 95% bootstrap intervals (docs/research.md)."
        ),
        epilog=(
            "Agents: random, greedy, heuristic, learned, expert, mcts:iterations=200, ..., "
            "cmd:PROGRAM ARGS (an external bot, see docs/bot-protocol.md)."
        ),
    )
    parser.add_argument("agents", nargs="+", metavar="AGENT", help="two agent specs or more")
    add_rules_option(parser)
    parser.add_argument(
        "--matches",
        type=int,
        default=20,
        metavar="N",
        help="matches per pairing, even (default 20)",
    )
    add_seed_option(parser, type=str, help="seed of the deals (default 0)")
    parser.add_argument(
        "--workers", type=int, default=1, metavar="W", help="worker processes (default 1)"
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="B",
        help="bootstrap resamples for the intervals (default 1000)",
    )
    add_json_option(parser)
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar on stderr even when it is not a terminal",
    )


def run(args: argparse.Namespace) -> int:
    from koikoi.game.engine import parse_seed
    from koikoi.game.rules import load_rules
    from koikoi.lab.arena.tournament import TournamentConfig, format_tournament, run_tournament

    config = TournamentConfig(
        agents=tuple(args.agents),
        rules=load_rules(args.rules),
        matches=args.matches,
        seed=parse_seed(str(args.seed)),
        workers=args.workers,
        bootstrap=args.bootstrap,
    )
    show = args.progress or sys.stderr.isatty()
    result = run_tournament(config, progress=sys.stderr if show else None)
    if args.json:
        print(json.dumps(result))
    else:
        print(format_tournament(result))
    return 0

"""``koikoi arena``: two agents over many matches, with duplicate deals and statistics.

>>> from koikoi.cli import main
>>> main(["arena", "greedy", "random", "--rules", "koikoi-japan", "--matches", "2",
...       "--json"])  # doctest: +ELLIPSIS
{"agents": [{"label": "A", "spec": "greedy", ...
0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from koikoi.cli.common import add_command, add_json_option, add_rules_option, add_seed_option

__all__ = ["parse_sprt", "register", "run"]


def register(subparsers: Any) -> None:
    """Add ``koikoi arena``."""
    parser = add_command(
        subparsers,
        "arena",
        run=run,
        help="play two agents against each other and report statistics",
        description=(
            "Play agent A against agent B over many matches. By default each deal is played "
            "twice with the seats swapped (duplicate deals), so luck cancels. Reports match "
            "wins with a 95% interval, net points per round paired by deal, the Elo "
            "difference, koi-koi calls and their success, and yaku frequencies."
        ),
        epilog=(
            "Agents: random, greedy, heuristic, learned, mcts:time=1.0 or mcts:iterations=200, "
            "cmd:PROGRAM ARGS (an external bot, see docs/bot-protocol.md)."
        ),
    )
    parser.add_argument("agent_a", metavar="A", help="agent spec, e.g. heuristic")
    parser.add_argument("agent_b", metavar="B", help="agent spec, e.g. greedy")
    add_rules_option(parser)
    parser.add_argument(
        "--matches", type=int, default=100, metavar="N", help="matches to play (default 100)"
    )
    add_seed_option(parser, type=str, help="arena seed (default 0)")
    parser.add_argument(
        "--workers", type=int, default=1, metavar="W", help="worker processes (default 1)"
    )
    add_json_option(parser)
    parser.add_argument(
        "--records", metavar="DIR", default=None, help="save every match record in DIR"
    )
    parser.add_argument(
        "--no-duplicate",
        dest="duplicate",
        action="store_false",
        help="independent deals (seats alternate) instead of duplicate pairs",
    )
    parser.add_argument(
        "--common-rng",
        action="store_true",
        help="each seat keeps its random generator in both games of a pair, so that two "
        "variants of one player differ only where their choices do (less noise)",
    )
    parser.add_argument(
        "--sprt",
        metavar="ELO0,ELO1",
        default=None,
        help="sequential test of Elo <= ELO0 against Elo >= ELO1; stops when decided",
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", default=None, help="plot the running net points per round"
    )
    parser.add_argument(
        "--backend", choices=("local", "ray"), default="local", help="where to run (default local)"
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar on stderr even when it is not a terminal",
    )


def parse_sprt(text: str) -> tuple[float, float]:
    """``"0,50"`` → ``(0.0, 50.0)``.

    Raises:
        InvalidInputError: not two numbers with elo0 < elo1.
    """
    from koikoi.game.errors import InvalidInputError

    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        elo0, elo1 = float(parts[0]), float(parts[1])
    except ValueError:
        raise InvalidInputError(
            f"--sprt must be two Elo values ELO0,ELO1 (e.g. 0,50), not {text!r}"
        ) from None
    if not elo0 < elo1:
        raise InvalidInputError(f"--sprt needs ELO0 < ELO1, not {text!r}")
    return elo0, elo1


def run(args: argparse.Namespace) -> int:
    from koikoi.game.engine import parse_seed
    from koikoi.game.rules import load_rules
    from koikoi.lab.arena import ArenaConfig, format_report, plot_running_mean, run_arena

    rules = load_rules(args.rules)
    config = ArenaConfig(
        agents=(args.agent_a, args.agent_b),
        rules=rules,
        matches=args.matches,
        seed=parse_seed(str(args.seed)),
        workers=args.workers,
        duplicate=args.duplicate,
        common_rng=args.common_rng,
        sprt=parse_sprt(args.sprt) if args.sprt else None,
        records=Path(args.records) if args.records else None,
        backend=args.backend,
    )
    config.validate()
    show = args.progress or sys.stderr.isatty()
    result = run_arena(config, progress=sys.stderr if show else None)
    if args.plot:
        a, b = config.agents
        plot_running_mean(result.pairs, args.plot, title=f"{a} vs {b} ({rules.name})")
    if args.json:
        print(json.dumps(result.summary))
    else:
        print(format_report(result.summary))
    return 0

"""``koikoi train``: build the AI's learned and measured data.

* ``koikoi train equity``: the round-outcome distributions behind the match-equity
  tables (:mod:`koikoi.agents.equity`), measured by heuristic self-play for every
  preset, written as the JSON file the package ships.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["register"]

DEFAULT_EQUITY_ROUNDS = 3000
DEFAULT_EQUITY_SEED = 1


def register(subparsers: Any) -> None:
    """Add ``koikoi train``."""
    parser = subparsers.add_parser(
        "train",
        help="rebuild the AI's measured and learned data (match equity, value network)",
        description="Rebuild the data the strongest AI player ships with, reproducibly.",
    )
    sub = parser.add_subparsers(dest="what", metavar="WHAT")
    equity = sub.add_parser(
        "equity",
        help="measure the round-outcome distributions behind the match-equity tables",
        description=(
            "Play rounds of heuristic self-play under each preset and count how many points "
            "the dealer or the other player wins. The match-equity tables are computed from "
            "these distributions. The package ships the output of the default command."
        ),
    )
    equity.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_EQUITY_ROUNDS,
        metavar="N",
        help=f"rounds per preset (default {DEFAULT_EQUITY_ROUNDS})",
    )
    equity.add_argument(
        "--seed", type=int, default=DEFAULT_EQUITY_SEED, metavar="S", help="seed (default 1)"
    )
    equity.add_argument(
        "--rules",
        action="append",
        default=None,
        metavar="PRESET",
        help="only this preset (repeatable; default: every preset)",
    )
    equity.add_argument(
        "--out",
        default="-",
        metavar="FILE",
        help="where to write the JSON (default: standard output)",
    )
    equity.set_defaults(func=_run_equity)
    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _run_equity(args: argparse.Namespace) -> int:
    from koikoi.agents.equity import measure_outcomes
    from koikoi.errors import InvalidInputError
    from koikoi.rules import PRESET_NAMES, get_rules

    if args.rounds < 1:
        raise InvalidInputError(f"--rounds must be 1 or more, not {args.rounds}")
    names = args.rules or list(PRESET_NAMES)
    for name in names:
        if name not in PRESET_NAMES:
            raise InvalidInputError(
                f"--rules {name!r} is not a preset: allowed {', '.join(PRESET_NAMES)}"
            )
    presets: dict[str, Any] = {}
    for name in names:
        start = time.perf_counter()
        presets[name] = measure_outcomes(get_rules(name), args.rounds, seed=args.seed).to_dict()
        print(
            f"train equity: {name}: {args.rounds} rounds in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
    data = {
        "format": "koikoi-round-outcomes",
        "version": 1,
        "recipe": f"koikoi train equity --rounds {args.rounds} --seed {args.seed}",
        "presets": presets,
    }
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0

#!/usr/bin/env python3
"""Arena with a player that sees the opponent's hand: how much is inference worth at most?

Kept so that the commands quoted in docs/benchmarks.md still run: the arena now
builds that player itself, as ``oracle:sees=hand`` (:mod:`koikoi.lab.oracle`),
and this script only rewrites its command line to it.

    python scripts/oracle-arena.py SPEC arena oracle mcts:iterations=2000,rollouts=1 \\
        --rules nintendo --matches 400 --seed 2060 --workers 1

is ``koikoi arena oracle:sees=hand,K=V,... mcts:iterations=2000,rollouts=1 ...``,
where ``K=V,...`` are the settings of the ``expert`` spec ``SPEC`` (for example
``expert:iterations=2000``): that expert, whose every re-deal gives the opponent
their true hand; the stock stays unknown to it, re-dealt as usual. Its results
against a fair player bound what any opponent-hand inference could add to that
search. Everything after the spec is the ``koikoi`` command line, where the
word ``oracle`` stands for that player. (``koikoi arena oracle ...`` alone is the
full ceiling, which also knows the stock: see docs/agents.md.)
"""

from __future__ import annotations

import sys

from koikoi.agents.base import parse_agent_spec
from koikoi.cli import main
from koikoi.game.errors import InvalidInputError


def hand_oracle_spec(spec: str) -> str:
    """The arena spec of the hand-seeing oracle built on the ``expert`` spec ``spec``.

    Raises:
        InvalidInputError: ``spec`` is not an ``expert`` spec.
    """
    kind, params, _ = parse_agent_spec(spec)
    if kind != "expert":
        raise InvalidInputError(f"the oracle is built on an expert spec, not {spec!r}")
    return ",".join(["oracle:sees=hand", *(f"{k}={v}" for k, v in params.items())])


def run(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        oracle = hand_oracle_spec(argv[0])
    except InvalidInputError as exc:
        print(exc, file=sys.stderr)
        return 2
    return main([oracle if arg == "oracle" else arg for arg in argv[1:]])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))

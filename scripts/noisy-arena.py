#!/usr/bin/env python3
"""Arena with ``noisy`` players: any agent with the levels' natural mistakes.

The levels for people (``level:1`` ... ``level:8``) add mistakes to a base
player by a softmax over its move values at a temperature (docs/agents.md,
"Levels"). To choose a level's temperature, this registers an agent kind
``noisy`` for one ``koikoi arena`` run, in this process (``--workers 1``:
worker processes would not see it):

    python scripts/noisy-arena.py BASE T arena noisy level:2 --rules nintendo \\
        --matches 2000 --seed 8101 --workers 1

``noisy`` plays like the agent spec ``BASE`` (for example ``greedy`` or
``heuristic``) with mistakes at temperature ``T``; everything after the two
arguments is the ``koikoi`` command line. The figures are in
docs/benchmarks.md.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping

from koikoi.agents.base import AGENT_KINDS, make_agent, register_agent
from koikoi.agents.expert import NoisyAgent
from koikoi.cli import main


def run(argv: list[str]) -> int:
    workers = argv[argv.index("--workers") + 1 :][:1] if "--workers" in argv else ["1"]
    if len(argv) < 3 or workers != ["1"]:
        print(__doc__, file=sys.stderr)
        return 2
    base, temperature, rest = argv[0], argv[1], argv[2:]
    make_agent(base)  # a bad spec fails here, clearly
    try:
        t = float(temperature)
    except ValueError:
        t = math.nan
    if not 0.0 <= t < math.inf:
        print(f"the temperature must be a number 0 or more, not {temperature!r}", file=sys.stderr)
        return 2

    def factory(params: Mapping[str, str], raw: str) -> NoisyAgent:
        return NoisyAgent(make_agent(base), t, name=f"noisy({base}, {t:g})")

    register_agent("noisy", factory)
    try:
        return main(rest)
    finally:
        AGENT_KINDS.pop("noisy", None)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))

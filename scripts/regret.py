#!/usr/bin/env python3
"""Decision regret of agents against a deep reference search, on fixed positions.

An arena needs thousands of games to tell two settings of a search apart. For
settings that change only how a search spends its budget, a cheaper test is
to ask both for their move in the same positions and to value each move by a
much deeper search (the *reference*): the regret of a move is the reference's
value of its best move minus that of the move chosen, in net round points.

    python scripts/regret.py --positions 200 --seed 1 \\
        --reference expert:iterations=100000,prior=0 \\
        expert:iterations=2000,prior=0 expert:iterations=10000,prior=0

The positions are card plays (three or more legal actions, more than four cards
in the two hands together) from one-round nintendo games of
``expert:iterations=1000`` against itself, about one position in three, from
the players' own views. The reference evaluates each position twice (two
seeds) and averages; each agent chooses its move (``act``) ``--repeats`` times
with different seeds, so any agent can be measured. Reported: the mean regret
with its 95% interval, and how often the move was the reference's best; for
every agent after the first, the paired difference of its regret from the
first's (position by position, 95% interval over the positions).

The screen's own noise, to know how large a difference it can tell: the two
evaluations of the reference are compared (how often they name the same best
move, and what each one's best move costs by the other's values), and with
``--twice`` every agent chooses a second time with other seeds, and the
difference between its two runs is reported as a paired difference too (an
agent against itself: any interval that excludes zero there is noise).

With ``--cache PATH`` the reference's values are kept in a JSON file and read
back by a later run with the same positions (checked by a fingerprint of
their encodings), seed and reference, so that agents can be screened one at a
time without paying for the reference again.

The reference is a search too. An agent that searches as it does, with a
smaller budget, is measured on how close it comes to it; an agent that differs
in kind (another evaluation, another prior) is measured partly on how much it
disagrees with it, which is not the same as how much worse it plays. Use arena
runs for those. The figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time

from koikoi.agents.base import Agent, make_agent
from koikoi.game.engine import Match, Phase
from koikoi.game.rules import get_rules, rules_from_dict
from koikoi.game.views import PlayerView, view_of
from koikoi.kernel import encoding
from koikoi.lab.arena import mean_ci

SHARE = 0.35
"""The chance that a qualifying position is taken."""


def positions(count: int, seed: int) -> list[PlayerView]:
    """``count`` card-play positions from seeded one-round self-play."""
    rules = rules_from_dict({"game": {"rounds": 1}}, base=get_rules("nintendo"))
    player = make_agent("expert:iterations=1000")
    out: list[PlayerView] = []
    game = 0
    while len(out) < count:
        m = Match(rules, seed=seed * 100_000 + game)
        rng = random.Random(seed * 100_000 + game)
        game += 1
        while not m.is_over and len(out) < count:
            v = view_of(m, m.current)
            if (
                v.phase is not Phase.DECIDE
                and len(v.legal_ids) > 2
                and sum(v.hand_counts) > 4
                and rng.random() < SHARE
            ):
                out.append(v)
            m.apply_id(player.act(v, rng))
    return out


def values(agent: Agent, view: PlayerView, seed: int) -> dict[int, float]:
    """The reference's net round points for every legal action."""
    detail = getattr(agent, "evaluate_detail", None)
    if detail is None:
        raise SystemExit(f"{agent.name}: the reference must report its values (expert, mcts)")
    return {a: v.points for a, v in detail(view, random.Random(seed)).items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("agents", nargs="+", help="agent specs to measure")
    parser.add_argument("--reference", required=True, help="the deep search's agent spec")
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3, help="choices per agent and position")
    parser.add_argument(
        "--cache",
        metavar="PATH",
        help="a JSON file of the reference's values: read if it was made for the same "
        "positions, seed and reference, else computed and written there",
    )
    parser.add_argument(
        "--twice",
        action="store_true",
        help="each agent chooses again with other seeds: the screen's noise for it",
    )
    args = parser.parse_args(argv)
    if args.positions < 1 or args.repeats < 1:
        parser.error("--positions and --repeats must be 1 or more")
    agents = [make_agent(spec) for spec in args.agents]  # bad specs fail before the work
    reference = make_agent(args.reference)
    t0 = time.perf_counter()
    views = positions(args.positions, args.seed)
    key = {
        "positions": args.positions,
        "seed": args.seed,
        "reference": reference.name,
        "views": _digest(views),
    }
    cached = _read_cache(args.cache, key)
    if cached is None:
        truth, same, cross = _reference(reference, views)
        if args.cache:
            with open(args.cache, "w", encoding="utf-8") as f:
                json.dump({**key, "truth": truth, "same": same, "cross": cross}, f)
    else:
        truth, same, cross = cached
    mean, _, hi = mean_ci(cross)
    print(
        f"{len(views)} positions (seed {args.seed}); reference {args.reference}: "
        f"{time.perf_counter() - t0:.0f} s; its two evaluations name the same best move in "
        f"{same / len(views):.0%}, each one's best costs {mean:.3f} ± {hi - mean:.3f} points "
        "by the other's values"
    )
    first: list[float] | None = None
    for spec, agent in zip(args.agents, agents, strict=True):
        runs = [_run(spec, agent, views, truth, args.repeats, 0)]
        if args.twice:
            runs.append(_run(f"{spec} (again, other seeds)", agent, views, truth, args.repeats, 1))
            _paired(f"{spec}, second run minus first", runs[1], runs[0])
        if first is None:
            first = runs[0]
        else:
            _paired(f"{spec} minus {args.agents[0]}", runs[0], first)
    return 0


def _reference(
    reference: Agent, views: list[PlayerView]
) -> tuple[list[dict[int, float]], int, list[float]]:
    """The reference's mean values at each position (two evaluations), how many times
    its two evaluations named the same best move, and what each best costs by the other."""
    truth = []
    same = 0
    cross: list[float] = []
    for i, v in enumerate(views):
        evals = [values(reference, v, 2 * i + s) for s in (0, 1)]
        truth.append({a: (evals[0][a] + evals[1][a]) / 2 for a in evals[0]})
        best = [max(e, key=e.__getitem__) for e in evals]
        same += best[0] == best[1]
        # What each evaluation's best move costs by the other's values.
        cross.append(
            (evals[1][best[1]] - evals[1][best[0]] + evals[0][best[0]] - evals[0][best[1]]) / 2
        )
    return truth, same, cross


def _digest(views: list[PlayerView]) -> str:
    """A fingerprint of the positions' encodings: a cache made by other code that dealt
    other positions for the same seed is not read for these."""
    h = hashlib.sha256()
    for v in views:
        h.update(encoding.encode(v).tobytes())
    return h.hexdigest()[:16]


def _read_cache(
    path: str | None, key: dict[str, object]
) -> tuple[list[dict[int, float]], int, list[float]] | None:
    """The reference's results from ``path`` if it was made for ``key``, else None."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        print(f"{path}: not a cache this script wrote ({e}); computing again")
        return None
    if not isinstance(data, dict) or any(data.get(k) != v for k, v in key.items()):
        print(f"{path}: made for other positions or another reference; computing again")
        return None
    truth = [{int(a): float(x) for a, x in row.items()} for row in data["truth"]]
    return truth, int(data["same"]), [float(x) for x in data["cross"]]


def _run(
    label: str,
    agent: Agent,
    views: list[PlayerView],
    truth: list[dict[int, float]],
    repeats: int,
    offset: int,
) -> list[float]:
    """Print ``agent``'s regret over the positions; return its mean regret at each."""
    t0 = time.perf_counter()
    regrets = []
    per_position = []
    for i, (v, ref) in enumerate(zip(views, truth, strict=True)):
        best = max(ref.values())
        here = []
        for r in range(repeats):
            seed = 1_000_003 * (r + 1 + repeats * offset) + i
            here.append(best - ref[agent.act(v, random.Random(seed))])
        regrets += here
        per_position.append(sum(here) / repeats)
    n = len(regrets)
    mean, _, hi = mean_ci(regrets)
    half = hi - mean if n > 1 else math.inf
    exact = sum(x <= 1e-9 for x in regrets) / n
    print(
        f"{label}: regret {mean:.3f} ± {half:.3f} points a decision, "
        f"the reference's best {exact:.0%} ({n} choices, {time.perf_counter() - t0:.0f} s)"
    )
    return per_position


def _paired(label: str, a: list[float], b: list[float]) -> None:
    """Print the mean of ``a - b`` position by position, with its 95% interval."""
    mean, lo, hi = mean_ci([x - y for x, y in zip(a, b, strict=True)])
    print(f"  {label}: {mean:+.3f} [{lo:+.3f}, {hi:+.3f}] points a decision")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``koikoi simulate``: full matches between agents, with a record of each.

Match ``i`` (0-based) of a run with ``--seed S`` is seeded with
:func:`match_seed` ``(S, i)``, derived with SHA-256 so that it does not depend
on Python's random generator; each agent's generator is seeded the same way.
A run with the same arguments plays the same matches.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from typing import Any

from koikoi.cli.common import add_command, add_json_option, add_rules_option, add_seed_option

__all__ = ["match_seed", "register", "run", "simulate", "split_agent_specs"]


def register(subparsers: Any) -> None:
    """Add ``koikoi simulate``."""
    parser = add_command(
        subparsers,
        "simulate",
        run=run,
        help="play full matches between agents and record them",
        description=(
            "Play full matches between two agents (random vs random by default), write "
            "one game record per match into --out, and print a summary."
        ),
    )
    add_rules_option(parser)
    parser.add_argument(
        "--games", type=int, default=10, metavar="N", help="matches to play (default 10)"
    )
    add_seed_option(parser, help="seed of the run (default 0)")
    parser.add_argument("--out", metavar="DIR", help="write one record per match into DIR")
    parser.add_argument(
        "--agents",
        default="random,random",
        metavar="A,B",
        help="agent specs of players 0 and 1, comma-separated (default random,random)",
    )
    add_json_option(parser, help="print the summary as JSON")


def match_seed(seed: int, index: int, role: str = "match") -> int:
    """The seed of match ``index`` of a run seeded ``seed`` (``role``: "match", "agent0"...).

    >>> match_seed(1, 0) == match_seed(1, 0) != match_seed(1, 1)
    True
    """
    digest = hashlib.sha256(f"koikoi-simulate:{seed}:{index}:{role}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def split_agent_specs(text: str) -> list[str]:
    """Split ``"A,B"`` into two agent specs; ``key=value`` parts stay with their spec.

    ``"mcts:time=1,iters=50,random"`` is ``["mcts:time=1,iters=50", "random"]``;
    a single spec is used for both players. (A ``cmd:`` spec cannot hold a comma here.)

    Raises:
        InvalidInputError: if there are not one or two specs.
    """
    from koikoi.game.errors import InvalidInputError

    specs: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if specs and "=" in part and ":" not in part:
            specs[-1] += "," + part
        else:
            specs.append(part)
    if len(specs) == 1 and specs[0]:
        specs.append(specs[0])
    if len(specs) != 2 or not all(specs):
        raise InvalidInputError(
            f"--agents takes two agent specs separated by a comma (e.g. random,greedy), "
            f"not {text!r}"
        )
    return specs


def simulate(
    rules_source: str,
    games: int,
    seed: int,
    *,
    agents: tuple[str, str] = ("random", "random"),
    out: str | None = None,
) -> dict[str, Any]:
    """Play ``games`` matches and return the summary (what the command prints).

    Raises:
        InvalidInputError: a bad count, seed or agent spec.
        RulesError: unknown rules.
        RecordError: the output folder cannot be written.
    """
    import random
    import time
    from pathlib import Path

    from koikoi.agents import make_agent
    from koikoi.game.engine import Match
    from koikoi.game.errors import InvalidInputError, RecordError
    from koikoi.game.record import GameRecord, distinct_names
    from koikoi.game.rules import load_rules
    from koikoi.game.views import view_of

    if games < 1:
        raise InvalidInputError(f"--games must be 1 or more, not {games}")
    if seed < 0:
        raise InvalidInputError(f"--seed must be a non-negative integer, not {seed}")
    rules = load_rules(rules_source)
    players = [make_agent(agents[0]), make_agent(agents[1])]
    folder: Path | None = None
    if out is not None:
        folder = Path(out)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordError(f"cannot create {out!r}: {exc.strerror or exc}") from None
    width = max(4, len(str(games)))
    wins = [0, 0]
    draws = 0
    rounds = 0
    points = [0, 0]
    scored = [0, 0]
    start = time.perf_counter()
    try:
        for i in range(games):
            match = Match(rules, seed=match_seed(seed, i))
            rngs = [random.Random(match_seed(seed, i, f"agent{p}")) for p in (0, 1)]
            while not match.is_over:
                p = match.current
                match.apply(players[p].act(view_of(match, p), rngs[p]))
            rounds += len(match.settlements)
            for s in match.settlements:
                for p in (0, 1):
                    points[p] += s.deltas[p]
                if s.winner is not None:
                    scored[s.winner] += 1
            if match.winner is None:
                draws += 1
            else:
                wins[match.winner] += 1
            if folder is not None:
                record = GameRecord.from_match(
                    match,
                    players=distinct_names(agents),
                    meta={"simulate": {"seed": seed, "game": i, "agents": list(agents)}},
                )
                record.save(folder / f"match-{i + 1:0{width}d}.json")
    finally:
        for agent in players:
            close = getattr(agent, "close", None)
            if callable(close):
                close()
    elapsed = time.perf_counter() - start
    return {
        "rules": rules.name,
        "agents": list(agents),
        "seed": seed,
        "matches": games,
        "rounds": rounds,
        "wins": wins,
        "draws": draws,
        "rounds_won": scored,
        "mean_points_per_round": [points[0] / rounds, points[1] / rounds] if rounds else [0, 0],
        "elapsed_s": elapsed,
        "out": str(folder) if folder is not None else None,
    }


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi simulate``."""
    a, b = split_agent_specs(args.agents)
    summary = simulate(args.rules, args.games, args.seed, agents=(a, b), out=args.out)
    if args.json:
        print(json.dumps(summary))
        return 0
    from koikoi.i18n import t, tn

    n, rounds, secs = summary["matches"], summary["rounds"], summary["elapsed_s"]
    names = [t("player 0 ({agent})", agent=a), t("player 1 ({agent})", agent=b)]
    wins, mean = summary["wins"], summary["mean_points_per_round"]
    print(
        tn(
            "{n} match under {rules}, seed {seed}",
            "{n} matches under {rules}, seed {seed}",
            n,
            rules=summary["rules"],
            seed=summary["seed"],
        )
    )
    print(t("rounds: {rounds} ({per} per match)", rounds=rounds, per=f"{rounds / n:.1f}"))
    print(
        t(
            "wins: {a} {a_wins}, {b} {b_wins}, draws {draws}",
            a=names[0],
            a_wins=wins[0],
            b=names[1],
            b_wins=wins[1],
            draws=summary["draws"],
        )
    )
    print(
        t(
            "rounds won: {a} {a_won}, {b} {b_won}",
            a=names[0],
            a_won=summary["rounds_won"][0],
            b=names[1],
            b_won=summary["rounds_won"][1],
        )
    )
    print(
        t(
            "mean points per round: {a} {a_mean}, {b} {b_mean}",
            a=names[0],
            a_mean=f"{mean[0]:.2f}",
            b=names[1],
            b_mean=f"{mean[1]:.2f}",
        )
    )
    print(
        t("elapsed: {secs} s ({rate} matches/s)", secs=f"{secs:.2f}", rate=f"{n / secs:.1f}")
        if secs > 0
        else t("elapsed: 0 s")
    )
    if summary["out"] is not None:
        print(t("records: {path}", path=summary["out"]))
    return 0

#!/usr/bin/env python3
"""The ceiling table: each player's edge over an opponent, and its share of the ceiling's.

For each opponent (``--against``, default ``heuristic`` and the reference search
``mcts:iterations=2000,rollouts=1``) the ceiling (``--oracle``, the arena's
perfect-information ``oracle``), ``--expert`` and ``--reference`` each play one
arena against it with the same seed, so on the same duplicate deals; a player
that is the opponent itself is not played (its edge is 0 by definition). Then
each player's share of the ceiling's edge, in match score and in net points a
round, with 95% bootstrap intervals over the deal pairs
(:func:`koikoi.lab.oracle.edge_share`). The edges themselves have the arena's
pair-level intervals (the normal interval of the pairs' mean match score; the
delta-method interval of the net points a round).

    python scripts/ceiling.py --rules nintendo --matches 2000 --seed 3101 --workers 2

``--json PATH`` keeps every run's per-pair results (written after each run, so
a long table can be stopped and read); ``--table PATH...`` prints the table of
such files without playing, the pairs of runs with other seeds (more deals, the
same rules and players) put together.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from koikoi.game.rules import load_rules
from koikoi.lab.arena import ArenaConfig, mean_ci, ratio_ci, run_arena
from koikoi.lab.oracle import edge_share

REFERENCE = "mcts:iterations=2000,rollouts=1"


def play(args: argparse.Namespace) -> dict[str, Any]:
    """Every run of the table, as ``{"runs": [{"a", "b", "pairs": [[score, net, rounds]]}]}``."""
    rules = load_rules(args.rules)
    data: dict[str, Any] = {"rules": args.rules, "seed": args.seed, "matches": args.matches}
    data["players"] = {"oracle": args.oracle, "expert": args.expert, "reference": args.reference}
    data["runs"] = []
    for b in args.against or ["heuristic", REFERENCE]:
        for a in (args.oracle, args.expert, args.reference):
            if a == b:
                continue
            config = ArenaConfig((a, b), rules, args.matches, seed=args.seed, workers=args.workers)
            result = run_arena(config, progress=sys.stderr)
            pairs = [[p.score, p.net, p.rounds] for p in result.pairs]
            data["runs"].append(
                {"a": a, "b": b, "pairs": pairs, "seconds": round(result.elapsed, 1)}
            )
            print(f"{a} vs {b}: {result.elapsed:.0f} s", file=sys.stderr)
            if args.json:
                Path(args.json).write_text(json.dumps(data))
    return data


def table(data: dict[str, Any]) -> str:
    """The markdown table of ``data`` (see :func:`play`)."""
    runs = {(r["a"], r["b"]): r["pairs"] for r in data["runs"]}
    players = data["players"]
    lines = [
        f"rules {data['rules']}, seed {data['seed']}, {data['matches']} matches a run",
        "",
        "| A vs B | matches | A's match score | A's net points a round | "
        "share of the ceiling's edge: match score | net points a round |",
        "|---|---|---|---|---|---|",
    ]
    for b in dict.fromkeys(r["b"] for r in data["runs"]):
        ceiling = runs.get((players["oracle"], b))
        for name in ("oracle", "expert", "reference"):
            a = players[name]
            pairs = runs.get((a, b))
            if pairs is None:
                continue
            mean, lo, hi = mean_ci([p[0] for p in pairs])
            score = (mean, max(0.0, lo), min(1.0, hi))
            net = ratio_ci([p[1] for p in pairs], [p[2] for p in pairs])
            shares = ["", ""]
            if ceiling is not None and name != "oracle" and len(ceiling) == len(pairs):
                s = edge_share([tuple(p) for p in pairs], [tuple(p) for p in ceiling])
                shares = [f"{v[0]:.2f} [{v[1]:.2f}, {v[2]:.2f}]" for v in (s["score"], s["net"])]
            lines.append(
                f"| `{a}` vs `{b}` | {2 * len(pairs)} | {score[0]:.1%} [{score[1]:.1%}, "
                f"{score[2]:.1%}] | {net[0]:+.2f} [{net[1]:+.2f}, {net[2]:+.2f}] | "
                f"{shares[0]} | {shares[1]} |"
            )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="nintendo")
    parser.add_argument("--matches", type=int, default=2000, help="a run's matches (even)")
    parser.add_argument("--seed", type=int, default=3101)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--oracle", default="oracle")
    parser.add_argument("--expert", default="expert:iterations=2000")
    parser.add_argument("--reference", default=REFERENCE)
    parser.add_argument("--against", action="append", metavar="SPEC")
    parser.add_argument("--json", metavar="PATH", help="keep the per-pair results here")
    parser.add_argument(
        "--table", nargs="+", metavar="PATH", help="print the table of --json files"
    )
    args = parser.parse_args(argv)
    if args.table:
        data = merge([json.loads(Path(path).read_text()) for path in args.table])
    else:
        data = play(args)
    print(table(data))
    return 0


def merge(files: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs of several :func:`play` results as one: each pairing's pairs, in file order.

    Raises:
        SystemExit: the files are of other rules or other players.
    """
    first = files[0]
    for other in files[1:]:
        if (other["rules"], other["players"]) != (first["rules"], first["players"]):
            raise SystemExit("--table: the files must be of the same rules and players")
    runs: dict[tuple[str, str], list[Any]] = {}
    for data in files:
        for run in data["runs"]:
            runs.setdefault((run["a"], run["b"]), []).extend(run["pairs"])
    return {
        "rules": first["rules"],
        "seed": ", ".join(str(d["seed"]) for d in files),
        "matches": "+".join(str(d["matches"]) for d in files),
        "players": first["players"],
        "runs": [{"a": a, "b": b, "pairs": pairs} for (a, b), pairs in runs.items()],
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

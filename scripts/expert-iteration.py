#!/usr/bin/env python3
"""Expert iteration: data from ``expert``'s self-play, and a policy network trained on it.

Two steps (:mod:`koikoi.lab.expert_iteration` has the details):

    # the data: 400 one-round matches under each rule set, in two halves (two cores)
    python scripts/expert-iteration.py generate --games 200 --first 0 --seed 1 --out a.npz
    python scripts/expert-iteration.py generate --games 200 --first 200 --seed 1 --out b.npz
    # the network: trained on the games not held out, agreement on the held-out games
    python scripts/expert-iteration.py train a.npz b.npz --seed 1 --out expert-policy.npz

By default the network starts from the shipped Deep Monte-Carlo network
(``--start dmc``; ``fresh``: a new one) and learns a softmax of the search's
values at a temperature of 1 point (``--target values``; ``choice``: the
search's choice alone), 10 passes over the data.

``train`` holds out every ``--hold``-th game (all its positions) and reports the
network's top-1 agreement with the search's choice there, and the regret of its
choice by the search's own values. The weights file's header records the
command, the seed, the data's size and the held-out figures, as the shipped
learned networks' do, and ``prior_scale``: the root mean square of the
heuristic's centred card-play values over that of the network's centred
log-probabilities, on the card plays of heuristic self-play
(:func:`koikoi.lab.expert_iteration.spread`), so that ``expert:prior=W`` moves the search's
points as much with this guide as with the heuristic.
``expert:guide=policy,guide_file=PATH`` reads the file.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

import numpy as np

from koikoi.agents.learned import shipped
from koikoi.lab.expert_iteration import (
    TARGETS,
    Dataset,
    agreement,
    generate,
    merge,
    spread,
    train_policy,
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="step", required=True)
    gen = sub.add_parser("generate", help="self-play data labelled by the search")
    gen.add_argument("--games", type=int, required=True, help="matches under each rule set")
    gen.add_argument("--first", type=int, default=0, help="number of the first game")
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--agent", default="expert:iterations=1000")
    gen.add_argument("--rules", nargs="+", default=["nintendo", "koikoi-japan"])
    gen.add_argument("--out", required=True, help="the data file (.npz)")
    tr = sub.add_parser("train", help="a policy network trained on data files")
    tr.add_argument("data", nargs="+", help="data files made by generate")
    tr.add_argument("--seed", type=int, default=1)
    tr.add_argument("--target", choices=TARGETS, default="values")
    tr.add_argument("--temperature", type=float, default=1.0, help="points, for --target values")
    tr.add_argument("--epochs", type=int, default=10)
    tr.add_argument(
        "--start",
        choices=("dmc", "fresh"),
        default="dmc",
        help="start from the shipped Deep Monte-Carlo network, or from a fresh one",
    )
    tr.add_argument("--hold", type=int, default=5, help="every HOLD-th game is held out")
    tr.add_argument(
        "--spread-games",
        type=int,
        default=100,
        help="heuristic self-play games on which the prior's scale is measured",
    )
    tr.add_argument("--out", help="the weights file (.npz)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.step == "generate":
        data = generate(
            args.games, seed=args.seed, rules=args.rules, agent=args.agent, first=args.first
        )
        data.save(args.out)
        print(f"{len(data)} positions from {args.games} games a rule set: {args.out}", end="")
        print(f" ({time.perf_counter() - t0:.0f} s)")
        return 0
    if args.hold < 2:
        parser.error("--hold must be 2 or more")
    data = merge([Dataset.load(p) for p in args.data])
    held = data.game % args.hold == 0
    train, test = data.subset(np.flatnonzero(~held)), data.subset(np.flatnonzero(held))
    net, curve = train_policy(
        train,
        seed=args.seed,
        target=args.target,
        temperature=args.temperature,
        epochs=args.epochs,
        start=shipped() if args.start == "dmc" else None,
    )
    top1, regret = agreement(net, test)
    dmc_top1, dmc_regret = agreement(shipped(), test)
    top1_train, _ = agreement(net, train)
    seconds = time.perf_counter() - t0
    print(
        f"{len(train)} positions to train, {len(test)} held out; loss {curve[0]:.3f} -> "
        f"{curve[-1]:.3f}; held-out agreement {top1:.1%} (train {top1_train:.1%}), regret by "
        f"the search's values {regret:.3f} points a decision ({seconds:.0f} s); the shipped "
        f"DMC network there: {dmc_top1:.1%}, {dmc_regret:.3f}"
    )
    if args.out:
        rms_h, rms_p, n = spread(net, games=args.spread_games)
        scale = rms_h / rms_p
        print(
            f"spread on {n} card plays of heuristic self-play: heuristic {rms_h:.3f} points, "
            f"policy {rms_p:.3f} (log-probability); prior_scale {scale:.3f}"
        )
        net.meta.update(
            prior_scale=round(scale, 4),
            recipe={
                "command": "python scripts/expert-iteration.py " + shlex.join(argv),
                "seed": args.seed,
                "target": args.target,
                "start": args.start,
                "epochs": args.epochs,
                "temperature": args.temperature,
                "positions": len(train),
                "held_out": len(test),
                "held_out_agreement": round(top1, 4),
                "held_out_regret": round(regret, 4),
            },
            curve=[round(x, 4) for x in curve],
        )
        net.save(args.out)
        print(f"weights: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``koikoi train``: build the AI's learned and measured data.

* ``koikoi train equity``: the round-outcome distributions behind the match-equity
  tables (:mod:`koikoi.agents.equity`), measured by heuristic self-play for every
  preset, written as the JSON file the package ships.
* ``koikoi train value``: the value network (:mod:`koikoi.agents.valuenet`),
  from self-play positions labelled with the round's result.
* ``koikoi train dmc``: the learned player's Q-network (:mod:`koikoi.agents.learned`),
  by Deep Monte-Carlo self-play in the batched simulator (:mod:`koikoi.lab.dmc`).
* ``koikoi train ppo``: a policy network of the same shape by PPO with action
  masks (:mod:`koikoi.lab.ppo`), played as ``learned:model=ppo``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from koikoi.cli.common import add_command, add_json_option, add_seed_option

__all__ = ["register"]

DEFAULT_EQUITY_ROUNDS = 3000
DEFAULT_EQUITY_SEED = 1
DEFAULT_VALUE_ROUNDS = 20000
DEFAULT_VALUE_EPOCHS = 3
DEFAULT_HIDDEN = "64,32"
DEFAULT_WEIGHT_DECAY = 1e-4
DEFAULT_DMC_STEPS = 30_000_000
DEFAULT_PPO_STEPS = 6_000_000
DEFAULT_DMC_RULES = ("nintendo", "koikoi-japan")


def register(subparsers: Any) -> None:
    """Add ``koikoi train``."""
    parser = add_command(
        subparsers,
        "train",
        help="rebuild the AI's data (equity, value network, learned players)",
        description="Rebuild the data the strongest AI player ships with, reproducibly.",
    )
    sub = parser.add_subparsers(dest="what", metavar="WHAT")
    equity = add_command(
        sub,
        "equity",
        run=_run_equity,
        help="measure the round-outcome distributions behind the match-equity tables",
        description=(
            "Play rounds of self-play under each preset (the heuristic on both sides, or --agent) "
            "and count how many points the dealer or the other player wins. The match-equity "
            "tables are computed from these distributions. The package ships the output of the "
            "default command."
        ),
    )
    equity.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_EQUITY_ROUNDS,
        metavar="N",
        help=f"rounds per preset (default {DEFAULT_EQUITY_ROUNDS})",
    )
    add_seed_option(equity, default=DEFAULT_EQUITY_SEED, help="seed (default 1)")
    equity.add_argument(
        "--rules",
        action="append",
        default=None,
        metavar="PRESET",
        help="only this preset (repeatable; default: every preset)",
    )
    equity.add_argument(
        "--agent",
        default="heuristic",
        metavar="SPEC",
        help="the player on both sides (default heuristic; e.g. mcts:iterations=300,rollouts=1)",
    )
    equity.add_argument(
        "--out",
        default="-",
        metavar="FILE",
        help="where to write the JSON (default: standard output)",
    )
    value = add_command(
        sub,
        "value",
        run=_run_value,
        help="train the value network by self-play",
        description=(
            "Play rounds of self-play (the heuristic player, with some random moves), label "
            "every position with the round's net points for the player to act, and fit the "
            "value network to them. Prints the loss after every epoch. The package ships the "
            "output of the default command (about 3 minutes on one core)."
        ),
    )
    value.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_VALUE_ROUNDS,
        metavar="N",
        help=f"rounds of self-play (default {DEFAULT_VALUE_ROUNDS})",
    )
    value.add_argument(
        "--rules",
        action="append",
        default=None,
        metavar="RULES",
        help="a preset or house-rules file to play under (repeatable; default: every preset)",
    )
    add_seed_option(value, default=1, help="seed (default 1)")
    value.add_argument(
        "--epochs",
        type=int,
        default=DEFAULT_VALUE_EPOCHS,
        metavar="E",
        help=f"passes over the data (default {DEFAULT_VALUE_EPOCHS})",
    )
    value.add_argument(
        "--hidden",
        default=DEFAULT_HIDDEN,
        metavar="SIZES",
        help=f"hidden layer sizes, comma-separated (default {DEFAULT_HIDDEN})",
    )
    value.add_argument(
        "--weight-decay",
        type=float,
        default=DEFAULT_WEIGHT_DECAY,
        metavar="L2",
        help=f"L2 penalty on the weights (default {DEFAULT_WEIGHT_DECAY:g})",
    )
    value.add_argument(
        "--agent",
        default="heuristic",
        metavar="SPEC",
        help="the self-play player (default heuristic)",
    )
    value.add_argument(
        "--explore",
        type=float,
        default=0.1,
        metavar="P",
        help="share of random moves in self-play (default 0.1)",
    )
    value.add_argument(
        "--out", required=True, metavar="FILE", help="where to write the weights (.npz)"
    )
    add_json_option(value, help="print the curve as JSON")
    dmc = add_command(
        sub,
        "dmc",
        run=_run_learned,
        help="train the learned player by Deep Monte-Carlo self-play",
        description=(
            "Train the learned player's Q-network as DouZero does (Deep Monte-Carlo): "
            "epsilon-greedy self-play in the batched simulator, every decision labelled with "
            "its round's net points, the network regressed on them (numpy). Prints a row of the "
            "learning curve as it goes (the loss, and net points a round against random play) "
            "and the wall-clock and CPU time. The package ships the output of the default "
            "command (see docs/research.md)."
        ),
    )
    _learn_options(dmc, steps=DEFAULT_DMC_STEPS, lr=1e-3, batch=1024, eval_every=2000)
    dmc.add_argument(
        "--epsilon",
        type=float,
        default=0.1,
        metavar="P",
        help="share of random moves at the start, falling to 0.02 (default 0.1)",
    )
    dmc.set_defaults(algorithm="dmc")
    ppo = add_command(
        sub,
        "ppo",
        run=_run_learned,
        help="train a policy network by PPO with action masks (self-play)",
        description=(
            "Train a policy network by PPO: a softmax over the legal actions only, self-play in "
            "the batched simulator, Monte-Carlo advantages against a value network, the clipped "
            "objective with an entropy bonus (numpy). Prints the learning curve as it goes and "
            "the wall-clock and CPU time (see docs/research.md)."
        ),
    )
    _learn_options(ppo, steps=DEFAULT_PPO_STEPS, lr=3e-4, batch=8192, eval_every=100)
    ppo.set_defaults(algorithm="ppo")
    parser.set_defaults(func=lambda args: _usage(parser))


def _learn_options(
    parser: argparse.ArgumentParser, *, steps: int, lr: float, batch: int, eval_every: int
) -> None:
    """The options ``koikoi train dmc`` and ``koikoi train ppo`` share."""
    parser.add_argument(
        "--rules",
        action="append",
        default=None,
        metavar="RULES",
        help="a preset or house-rules file to train under (repeatable; default: "
        + " and ".join(DEFAULT_DMC_RULES)
        + ")",
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=steps,
        metavar="N",
        help=f"environment steps (decisions) in all (default {steps})",
    )
    add_seed_option(parser, default=1, help="seed (default 1)")
    parser.add_argument(
        "--envs", type=int, default=256, metavar="N", help="environments (default 256)"
    )
    parser.add_argument(
        "--hidden",
        default="128,64",
        metavar="SIZES",
        help="hidden layer sizes, comma-separated (default 128,64)",
    )
    parser.add_argument(
        "--lr", type=float, default=lr, metavar="LR", help=f"Adam step (default {lr:g})"
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=batch,
        metavar="B",
        help=f"decisions an update (default {batch})",
    )
    parser.add_argument(
        "--eval-every",
        type=int,
        default=eval_every,
        metavar="U",
        help=f"updates between rows of the learning curve (default {eval_every})",
    )
    parser.add_argument(
        "--eval-rounds",
        type=int,
        default=1024,
        metavar="N",
        help="rounds against random play for each row, per rule set (default 1024)",
    )
    parser.add_argument(
        "--out", required=True, metavar="FILE", help="where to write the weights (.npz)"
    )
    parser.add_argument(
        "--curve", default=None, metavar="CSV", help="also write the learning curve as CSV"
    )
    parser.add_argument(
        "--plot",
        default=None,
        metavar="PNG",
        help="also plot the learning curve (needs matplotlib: pip install 'koikoi[plot]')",
    )
    add_json_option(parser, help="print the recipe and the curve as JSON")


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _run_equity(args: argparse.Namespace) -> int:
    from koikoi.agents import make_agent
    from koikoi.agents.equity import measure_outcomes
    from koikoi.game.errors import InvalidInputError
    from koikoi.game.rules import PRESET_NAMES, get_rules

    if args.rounds < 1:
        raise InvalidInputError(f"--rounds must be 1 or more, not {args.rounds}")
    names = args.rules or list(PRESET_NAMES)
    for name in names:
        if name not in PRESET_NAMES:
            raise InvalidInputError(
                f"--rules {name!r} is not a preset: allowed {', '.join(PRESET_NAMES)}"
            )
    make_agent(args.agent)  # a bad spec fails here, before any round is played
    presets: dict[str, Any] = {}
    for name in names:
        start = time.perf_counter()
        presets[name] = measure_outcomes(
            get_rules(name), args.rounds, seed=args.seed, agent=args.agent
        ).to_dict()
        print(
            f"train equity: {name}: {args.rounds} rounds in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
    data = {
        "format": "koikoi-round-outcomes",
        "version": 1,
        "recipe": f"koikoi train equity --rounds {args.rounds} --seed {args.seed}"
        + ("" if args.agent == "heuristic" else f" --agent {args.agent}"),
        "presets": presets,
    }
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


def _hidden_sizes(text: str) -> tuple[int, ...]:
    """The layer sizes of ``--hidden`` ("128,64").

    Raises:
        InvalidInputError: not whole numbers separated by commas.
    """
    from koikoi.game.errors import InvalidInputError

    try:
        return tuple(int(h) for h in text.split(","))
    except ValueError:
        raise InvalidInputError(
            f"--hidden must be whole numbers separated by commas (128,64), not {text!r}"
        ) from None


def _run_value(args: argparse.Namespace) -> int:
    from koikoi.agents import valuenet
    from koikoi.game.errors import InvalidInputError
    from koikoi.game.rules import PRESET_NAMES

    hidden = _hidden_sizes(args.hidden)
    if not hidden or min(hidden) < 1:
        raise InvalidInputError(f"--hidden sizes must be 1 or more, not {args.hidden!r}")
    if not args.weight_decay >= 0:
        raise InvalidInputError(f"--weight-decay must be 0 or more, not {args.weight_decay}")
    if not 0.0 <= args.explore <= 1.0:
        raise InvalidInputError(f"--explore must be from 0 to 1, not {args.explore}")
    names = args.rules or list(PRESET_NAMES)
    start = time.perf_counter()
    data = valuenet.generate(
        names, args.rounds, seed=args.seed, agent=args.agent, explore=args.explore
    )
    made = time.perf_counter() - start
    print(
        f"train value: {len(data)} positions from {args.rounds} rounds in {made:.1f} s",
        file=sys.stderr,
    )

    def show(point: dict[str, float]) -> None:
        if not args.json:
            print(
                f"epoch {int(point['epoch']):3d}  train loss {point['train_loss']:.4f}  "
                f"held-out loss {point['valid_loss']:.4f} "
                f"(held-out variance {point['valid_variance']:.4f})"
            )

    result = valuenet.train(data, hidden=hidden, epochs=args.epochs, seed=args.seed, progress=show)
    command = (
        f"koikoi train value --rounds {args.rounds} --seed {args.seed} --epochs {args.epochs} "
        f"--hidden {args.hidden} --weight-decay {args.weight_decay:g} "
        f"--agent {args.agent} --explore {args.explore:g}"
        + "".join(f" --rules {n}" for n in (args.rules or []))
    )
    result.net.meta["recipe"] = {
        "command": command,
        "seed": args.seed,
        "rounds": args.rounds,
        "rules": names,
        "positions": len(data),
        "generate_seconds": round(made, 1),
        "train_seconds": round(result.seconds, 1),
    }
    result.net.save(args.out)
    if args.json:
        print(json.dumps({"recipe": result.net.meta["recipe"], "curve": result.curve}))
    else:
        print(f"wrote {args.out} ({result.seconds:.1f} s of training)")
    return 0


def _run_learned(args: argparse.Namespace) -> int:
    from koikoi.game.errors import InvalidInputError
    from koikoi.lab.dmc import DMCConfig, DMCResult, train_dmc, write_curve
    from koikoi.lab.ppo import PPOConfig, train_ppo

    hidden = _hidden_sizes(args.hidden)
    rules = tuple(args.rules or DEFAULT_DMC_RULES)
    common: dict[str, Any] = {
        "rules": rules,
        "steps": args.steps,
        "seed": args.seed,
        "num_envs": args.envs,
        "hidden": hidden,
        "lr": args.lr,
        "batch": args.batch,
        "eval_every": args.eval_every,
        "eval_rounds": args.eval_rounds,
    }
    config: DMCConfig | PPOConfig
    if args.algorithm == "dmc":
        config = DMCConfig(epsilon=args.epsilon, **common)
    else:
        config = PPOConfig(minibatch=min(1024, max(1, args.batch)), **common)
    config.validate()
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InvalidInputError("--plot needs matplotlib: pip install 'koikoi[plot]'") from None

    def show(point: dict[str, float]) -> None:
        if not args.json:
            against = "  ".join(
                f"{k.split(':', 1)[1]} {v:+.2f}" for k, v in point.items() if k.startswith("vs_")
            )
            print(
                f"steps {int(point['steps']):>10,}  updates {int(point['updates']):>6}  "
                f"loss {point['loss']:.4f}  net/round vs random: {against}  "
                f"({point['seconds']:.0f} s)",
                flush=True,
            )

    result: DMCResult
    if isinstance(config, DMCConfig):
        result = train_dmc(config, progress=show)
    else:
        result = train_ppo(config, progress=show)
    command = (
        f"koikoi train {args.algorithm} --steps {args.steps} --seed {args.seed} "
        f"--envs {args.envs} --hidden {args.hidden} --lr {args.lr:g} --batch {args.batch} "
        + (f"--epsilon {args.epsilon:g} " if args.algorithm == "dmc" else "")
        + f"--eval-every {args.eval_every} --eval-rounds {args.eval_rounds}"
        + "".join(f" --rules {n}" for n in rules)
    )
    result.net.meta["recipe"] = {
        "command": command,
        "algorithm": args.algorithm,
        "seed": args.seed,
        "rules": list(rules),
        "steps": result.steps,
        "rounds": result.rounds,
        "seconds": round(result.seconds, 1),
        "cpu_seconds": round(result.cpu_seconds, 1),
    }
    result.net.meta["curve"] = result.curve
    result.net.save(args.out)
    if args.curve:
        write_curve(result.curve, args.curve)
    if args.plot:
        from koikoi.lab.dmc import plot_curve

        if args.algorithm == "ppo":
            plot_curve(
                result.curve,
                args.plot,
                title="PPO with action masks, self-play (koikoi train ppo)",
                loss_label="policy loss (clipped objective + entropy)",
            )
        else:
            plot_curve(result.curve, args.plot)
    if args.json:
        print(json.dumps({"recipe": result.net.meta["recipe"], "curve": result.curve}))
    else:
        print(
            f"wrote {args.out}: {result.steps:,} steps, {result.rounds:,} rounds in "
            f"{result.seconds:.1f} s wall-clock, {result.cpu_seconds:.1f} s CPU"
        )
    return 0

"""Fit and check the opponent play model of :mod:`koikoi.agents.inference`.

Plays matches between two agents, records every hand play with the hand the
player really held, then:

1. **fit**: the log-likelihood per play of the softmax play model for a grid of
   temperatures and capture bonuses (maximum likelihood: the best cell);
2. **check** (on other matches, ``--check`` of them): at every hand-play
   decision, how well each way of re-dealing the opponent's hand predicts the
   cards they really hold: the mean log-loss of "card c is in their hand" over
   the unseen cards (lower is better) for uniform re-deals, the declined-months
   rule (``avoid``, as the searches used it) and the fitted play model.

    python scripts/fit-play-model.py --agents heuristic heuristic --matches 200 --check 40

Everything is seeded (``--seed``); the same arguments print the same table.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Sequence

from koikoi.agents import make_agent
from koikoi.agents.inference import DEFAULT_MODEL, PlayModel, opponent_hands, play_value
from koikoi.agents.mcts import INFER_SLACK
from koikoi.game.actions import action_from_id
from koikoi.game.cards import card_list
from koikoi.game.engine import Match, Phase
from koikoi.game.rules import get_rules
from koikoi.game.views import PlayerView, determinize, view_of

Play = tuple[int, int, int]  # hand then, field then, card played


def collect(
    specs: Sequence[str],
    rules_name: str,
    matches: int,
    seed: int,
    models: Sequence[PlayModel] = (),
) -> tuple[list[Play], dict[str, list[float]]]:
    rules = get_rules(rules_name)
    plays: list[Play] = []
    losses: dict[str, list[float]] = {}
    check = bool(models)
    agents = [make_agent(s) for s in specs]
    for g in range(matches):
        rngs = [random.Random(seed * 1000 + 2 * g), random.Random(seed * 1000 + 2 * g + 1)]
        m = Match(rules, seed=seed * 7919 + g, events=False)
        while not m.is_over:
            p = m.current
            rnd = m.round
            view = view_of(m, p, with_history=False)
            if check and rnd.phase is Phase.PLAY and view.hand_counts[1 - p] > 0:
                truth = rnd.hands[1 - p]
                for name, probs in marginals(view, random.Random(g), models).items():
                    losses.setdefault(name, []).append(log_loss(probs, truth, view.unseen))
            a = agents[p].act(view, rngs[p])
            if rnd.phase is Phase.PLAY:
                action = action_from_id(a)
                card = getattr(action, "card", None)
                if card is not None:
                    plays.append((rnd.hands[p], rnd.field, int(card)))
            m.apply(a)
    return plays, losses


def guan_plays(folder: str) -> list[Play]:
    """Every hand play of the human games in ``folder`` (Guan JSON files), with the
    hand the player held: each step of the replay has the full round, whose
    ``plays`` grows by one at a hand play."""
    from koikoi.game.record import iter_steps
    from koikoi.lab.guan import import_guan, json_files

    plays: list[Play] = []
    for path in json_files([folder]):
        before = 0
        for step in iter_steps(import_guan(path), check_seed=False):
            rnd = step.round
            if step.kind == "action" and len(rnd.plays) > before:
                p, card, field = rnd.plays[-1]
                plays.append((rnd.hands[p] | (1 << card), field, card))
            before = len(rnd.plays)
    return plays


def marginals(
    view: PlayerView, rng: random.Random, models: Sequence[PlayModel], n: int = 512
) -> dict[str, dict[int, float]]:
    k = view.hand_counts[view.opponent]
    unseen = card_list(view.unseen)
    out: dict[str, dict[int, float]] = {"uniform": dict.fromkeys(unseen, k / len(unseen))}
    counts = dict.fromkeys(unseen, 0)
    avoid = view.declined[view.opponent]
    for _ in range(n):
        hand = determinize(view, rng, avoid=avoid, slack=INFER_SLACK).hands[view.opponent]
        for c in card_list(hand):
            counts[c] += 1
    out["declined"] = {c: counts[c] / n for c in unseen}
    for model in models:
        name = f"T={model.temperature:g},bonus={model.capture_bonus:g},noise={model.noise:g}"
        pool = opponent_hands(view, rng, n, model=model)
        if pool is None:
            out[name] = out["declined"]
            continue
        counts = dict.fromkeys(unseen, 0)
        for hand in pool:
            for c in card_list(hand):
                counts[c] += 1
        out[name] = {c: counts[c] / n for c in unseen}
    return out


def log_loss(probs: dict[int, float], truth: int, unseen: int) -> float:
    total = 0.0
    cards = card_list(unseen)
    for c in cards:
        p = min(max(probs[c], 1e-3), 1 - 1e-3)
        total -= math.log(p) if (truth >> c) & 1 else math.log(1 - p)
    return total / len(cards)


def likelihood(plays: Sequence[Play], model: PlayModel) -> float:
    total = 0.0
    t = model.temperature
    eps = model.noise
    for hand, field, card in plays:
        values = [play_value(field, c, model) / t for c in card_list(hand)]
        top = max(values)
        norm = top + math.log(sum(math.exp(v - top) for v in values))
        p = math.exp(play_value(field, card, model) / t - norm)
        total += math.log((1 - eps) * p + eps / len(values))
    return total / len(plays)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs=2, default=["heuristic", "heuristic"], metavar="SPEC")
    parser.add_argument("--rules", default="nintendo")
    parser.add_argument("--matches", type=int, default=100, help="matches for the fit")
    parser.add_argument("--check", type=int, default=20, help="other matches for the check")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--guan", metavar="FOLDER", help="fit on these human games instead")
    parser.add_argument(
        "--model",
        nargs=3,
        type=float,
        action="append",
        metavar=("T", "BONUS", "NOISE"),
        help="a play model to check (repeat for several; default: the shipped one)",
    )
    args = parser.parse_args(argv)
    specs = list(args.agents)
    if not args.model:
        args.model = [[DEFAULT_MODEL.temperature, DEFAULT_MODEL.capture_bonus, DEFAULT_MODEL.noise]]
    if args.guan:
        plays = guan_plays(args.guan)
        print(f"{len(plays)} hand plays by people in {args.guan}")
    else:
        plays, _ = collect(specs, args.rules, args.matches, args.seed)
        print(f"{len(plays)} hand plays by {' and '.join(specs)} ({args.rules}, seed {args.seed})")
    temps = (2.0, 4.0, 6.0, 8.0, 12.0, 16.0)
    bonuses = (10.0, 20.0, 30.0, 40.0)
    noises = (0.0, 0.05, 0.1, 0.2, 0.3)
    print("log-likelihood per play; rows: temperature and noise, columns: capture bonus")
    print("T, noise | " + " | ".join(f"{b:g}" for b in bonuses))
    best = (-math.inf, 0.0, 0.0, 0.0)
    for t in temps:
        for eps in noises:
            row = []
            for b in bonuses:
                model = PlayModel(temperature=t, capture_bonus=b, noise=eps)
                ll = likelihood(plays, model)
                row.append(f"{ll:.4f}")
                best = max(best, (ll, t, b, eps))
            print(f"{t:g}, {eps:g} | " + " | ".join(row))
    hand_sizes = [h.bit_count() for h, _, _ in plays]
    uniform = -sum(math.log(n) for n in hand_sizes) / len(plays)
    print(
        f"uniform choice: {uniform:.4f}; best: T={best[1]:g}, bonus={best[2]:g}, "
        f"noise={best[3]:g} ({best[0]:.4f})"
    )
    if args.check:
        models = [PlayModel(temperature=t, capture_bonus=b, noise=e) for t, b, e in args.model]
        _, losses = collect(specs, args.rules, args.check, args.seed + 1, models)
        print(f"\ncheck on {args.check} other matches: log-loss of the opponent's hand cards")
        base = losses["declined"]
        for name, values in losses.items():
            mean = sum(values) / len(values)
            diffs = [a - b for a, b in zip(values, base, strict=True)]
            dm = sum(diffs) / len(diffs)
            sd = math.sqrt(sum((d - dm) ** 2 for d in diffs) / max(1, len(diffs) - 1))
            half = 1.96 * sd / math.sqrt(len(diffs))
            print(
                f"{name}: {mean:.4f} ({len(values)} decisions); vs declined {dm:+.4f} ± {half:.4f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

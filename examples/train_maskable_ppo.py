#!/usr/bin/env python3
"""Train a Koi-Koi policy with sb3-contrib's MaskablePPO that beats the random agent.

An optional example: sb3-contrib and torch are not dependencies of koikoi.

    pip install 'koikoi[rl]' sb3-contrib      # a CPU build of torch is enough
    python examples/train_maskable_ppo.py --steps 150000

It trains on ``koikoi/KoiKoi-v0`` (by default: leaflet rules, one round per
episode, the net points of the round as the reward, vector observations with
the legal actions from ``env.action_masks()``) against ``random``, then plays
``--eval`` rounds with the learned policy and, on the very same seeded deals,
with a random policy, and prints the mean net points per round and the share
of rounds won by each. One run (150,000 steps, 6 minutes on two shared CPU
cores, torch 2.13 CPU, sb3-contrib 2.9.2): the learned policy won 65% of 400
evaluation rounds against ``random`` at +0.96 net points per round, where a
random policy on the same deals won 44% at +0.24.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import gymnasium
import numpy as np

import koikoi.envs.gymnasium  # noqa: F401 - registers koikoi/KoiKoi-v0


def make_env(args: argparse.Namespace) -> Any:
    return gymnasium.make(
        "koikoi/KoiKoi-v0",
        rules=args.rules,
        opponent=args.opponent,
        episode="round",
        reward="net",
        observation="vector",
    )


def evaluate(env: Any, choose: Any, rounds: int, seed: int) -> tuple[float, float]:
    """Mean net points per round and the share of rounds won, on seeded deals."""
    total, won = 0.0, 0
    for i in range(rounds):
        obs, _ = env.reset(seed=seed + i)
        terminated = False
        reward = 0.0
        while not terminated:
            mask = env.unwrapped.action_masks()
            obs, reward, terminated, _, _ = env.step(choose(obs, mask))
        total += float(reward)
        won += reward > 0
    return total / rounds, won / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150_000, help="training steps (decisions)")
    parser.add_argument("--eval", type=int, default=300, help="evaluation rounds")
    parser.add_argument("--rules", default="leaflet", help="a preset or a house-rules file")
    parser.add_argument("--opponent", default="random", help="the agent to train against")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="save the trained model to this path")
    args = parser.parse_args()

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    # Eight environments in one process: the policy runs on a batch of eight.
    envs = DummyVecEnv([lambda: make_env(args)] * 8)
    model = MaskablePPO(
        "MlpPolicy",
        envs,
        n_steps=256,
        batch_size=512,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=1.0,  # the reward comes once, at the end of the round
        policy_kwargs={"net_arch": [128, 128]},
        seed=args.seed,
        verbose=0,
    )
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    print(f"trained {args.steps} steps in {time.perf_counter() - start:.0f} s")
    if args.save:
        model.save(args.save)

    rng = random.Random(args.seed)

    def learned(obs: Any, mask: Any) -> int:
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    def uniform(obs: Any, mask: Any) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    eval_seed = 10**6 + args.seed
    for name, choose in (("MaskablePPO", learned), ("random", uniform)):
        points, wins = evaluate(make_env(args), choose, args.eval, eval_seed)
        print(
            f"{name:>12} vs {args.opponent}: {points:+.2f} net points per round, "
            f"{wins:.0%} of rounds won"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Train a Koi-Koi policy with sb3-contrib's MaskablePPO on the batched simulator.

An optional example: sb3-contrib and torch are not dependencies of koikoi.

    pip install 'koikoi[rl]' sb3-contrib      # a CPU build of torch is enough
    python examples/train_maskable_ppo.py     # about 2 minutes on two CPU cores

It trains against ``random`` on :class:`koikoi.envs.solo.SoloVectorEnv` (the
compiled :class:`~koikoi.envs.vector.VectorEnv`, 64 environments by default,
the learner at player 0 and the opponent's turns played in the simulator;
leaflet rules, one round per episode, the learner's net points of the round as
the reward, the 540-value observation, the action an index into the 334 action
ids that can ever be legal, with its mask) through :class:`KoiKoiVecEnv`, a
stable-baselines3 ``VecEnv``. Then it plays ``--eval`` rounds against
``random`` with the learned policy and, on the very same seeded deals, with a
random policy, and prints the mean net points per round, the share of rounds
won by each, and the difference on the same deals with a 95% interval.
docs/research.md has measured runs.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from koikoi.envs.solo import SoloVectorEnv
from koikoi.kernel import encoding


class KoiKoiVecEnv(VecEnv):  # type: ignore[misc]
    """A :class:`~koikoi.envs.solo.SoloVectorEnv` as a stable-baselines3 ``VecEnv``
    with ``action_masks()`` for MaskablePPO: float32 observations, ``Discrete(334)``
    (indices into :data:`koikoi.envs.solo.PLAYABLE_IDS`) or ``Discrete(2450)``."""

    def __init__(
        self, n: int, rules: str = "leaflet", seed: int = 0, actions: str = "playable"
    ) -> None:
        self.solo = SoloVectorEnv(n, rules, seed, actions=actions)
        self.render_mode = None
        observation_space = spaces.Box(
            low=-np.inf, high=np.inf, shape=(encoding.SIZE,), dtype=np.float32
        )
        super().__init__(n, observation_space, spaces.Discrete(self.solo.num_actions))
        self._actions = np.zeros(n, dtype=np.int64)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]  # set by seed(), as MaskablePPO(seed=...) calls it
        self._reset_seeds()
        return self.solo.reset(seed)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions[:] = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, dones = self.solo.step(self._actions)
        return obs, rewards, dones, [{} for _ in range(self.num_envs)]

    def action_masks(self) -> np.ndarray:
        return self.solo.action_masks()

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kw: Any) -> Any:
        if method_name == "action_masks" and indices is None:
            return self.solo.action_masks()  # one array: get_action_masks stacks its rows
        return [getattr(self, method_name)(*args, **kw)] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))


class Progress(BaseCallback):  # type: ignore[misc]
    """Print the steps, the speed and the mean reward of the last 1,000 rounds now and then."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every
        self.next = every
        self.start = time.perf_counter()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            self.next += self.every
            rewards = [e["r"] for e in self.model.ep_info_buffer]
            mean = f"{np.mean(rewards):+.2f}" if rewards else "-"
            elapsed = time.perf_counter() - self.start
            print(
                f"{self.num_timesteps:>9,} steps  {elapsed:5.0f} s  "
                f"{self.num_timesteps / elapsed:5.0f} steps/s  "
                f"net points a round (last 1,000): {mean}",
                flush=True,
            )
        return True


def make_model(envs: VecEnv, args: argparse.Namespace) -> MaskablePPO:
    """MaskablePPO with the example's settings (one reward, at the end of the round)."""
    return MaskablePPO(
        "MlpPolicy",
        envs,
        n_steps=args.rollout,
        batch_size=args.batch,
        n_epochs=args.epochs,
        learning_rate=3e-4,
        gamma=1.0,  # the reward comes once, at the end of the round
        ent_coef=args.entropy,
        policy_kwargs={"net_arch": [128, 128]},
        seed=args.seed,
        stats_window_size=1000,  # the progress lines' mean: the last 1,000 rounds
        verbose=0,
    )


def evaluate(rules: str, actions: str, choose: Any, rounds: int, seed: int) -> np.ndarray:
    """The learner's net points in each environment's first round against ``random``
    (the deal of environment ``i`` depends only on ``seed``)."""
    env = SoloVectorEnv(rounds, rules, seed, actions=actions)
    obs = env.reset()
    first = np.full(rounds, np.nan)
    while np.isnan(first).any():
        obs, rewards, dones = env.step(choose(obs, env))
        new = dones & np.isnan(first)
        first[new] = rewards[new]
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000, help="training steps (decisions)")
    parser.add_argument("--envs", type=int, default=64, help="environments stepped at once")
    parser.add_argument("--rollout", type=int, default=64, help="steps per environment per update")
    parser.add_argument("--batch", type=int, default=512, help="minibatch size")
    parser.add_argument("--epochs", type=int, default=10, help="passes over each rollout")
    parser.add_argument("--entropy", type=float, default=0.0, help="entropy bonus coefficient")
    parser.add_argument("--eval", type=int, default=1000, help="evaluation rounds")
    parser.add_argument("--rules", default="leaflet", help="a preset or a house-rules file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--actions",
        choices=("playable", "dense"),
        default="playable",
        help="the action space: the 334 ids that can be legal, or all 2,450",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--save", help="save the trained model to this path")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    envs = VecMonitor(KoiKoiVecEnv(args.envs, args.rules, args.seed, args.actions))
    model = make_model(envs, args)
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps, callback=Progress(max(args.steps // 10, 1)))
    print(f"trained {model.num_timesteps:,} steps in {time.perf_counter() - start:.0f} s")
    if args.save:
        model.save(args.save)

    def learned(obs: np.ndarray, env: SoloVectorEnv) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        return np.asarray(actions, dtype=np.int64)

    def uniform(obs: np.ndarray, env: SoloVectorEnv) -> np.ndarray:
        return env.sample_actions()

    eval_seed = 10**6 + args.seed
    results = {}
    for name, choose in (("MaskablePPO", learned), ("random", uniform)):
        points = evaluate(args.rules, args.actions, choose, args.eval, eval_seed)
        results[name] = points
        print(
            f"{name:>12} vs random: {points.mean():+.2f} net points per round, "
            f"{(points > 0).mean():.0%} of rounds won"
        )
    gain = results["MaskablePPO"] - results["random"]
    half = 1.96 * gain.std(ddof=1) / np.sqrt(len(gain))
    print(
        f"MaskablePPO - random on the same {len(gain)} deals: {gain.mean():+.2f} "
        f"[{gain.mean() - half:+.2f}, {gain.mean() + half:+.2f}] net points per round (95%)"
    )


if __name__ == "__main__":
    main()

"""PPO with action masks, in numpy, on the batched simulator: a second learned baseline.

The policy scores each legal action with a :class:`koikoi.agents.learned.QNet`
(the same inputs as Deep Monte-Carlo's: the player's encoding and
:func:`~koikoi.agents.learned.action_features`); a softmax over the legal
actions only is the action mask. A value network of the same shape, with the
action features left at zero, estimates the round's net points from the state.
Self-play in :class:`koikoi.envs.vector.VectorEnv` (round episodes, a random
round of the match each deal), both seats sampled from the current policy.
The reward comes once, at the end of a round, so the advantage is the
Monte-Carlo return less the value (GAE with lambda = 1, no discount),
normalised per batch. Each batch of labelled decisions gets ``epochs`` passes of
the clipped surrogate objective (ratio clipped at ``clip_ratio``) with an
entropy bonus, and the value network a regression on the returns (Adam for
each, gradient norms clipped). Greedy play (the highest score) is what
:class:`~koikoi.agents.learned.LearnedAgent` does with the policy network.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from koikoi.agents.learned import ACTION_FEATURES, SCALE, QNet, action_features
from koikoi.envs.vector import VectorEnv, VectorStep
from koikoi.game.errors import InvalidInputError
from koikoi.lab.dmc import DMCResult, _Adam, _loss_and_grads, backprop, check_settings, curve_point

__all__ = ["PPOConfig", "train_ppo"]

Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class PPOConfig:
    """The settings of a PPO run (the defaults are those of the shipped model)."""

    rules: tuple[str, ...] = ("nintendo", "koikoi-japan")
    steps: int = 10_000_000
    seed: int = 1
    num_envs: int = 256
    hidden: tuple[int, ...] = (128, 64)
    lr: float = 3e-4
    batch: int = 8192
    """Labelled decisions a batch (each gets ``epochs`` passes in minibatches)."""
    minibatch: int = 1024
    epochs: int = 2
    clip_ratio: float = 0.2
    entropy: float = 0.01
    clip: float = 5.0
    eval_every: int = 100
    """Batches between rows of the learning curve."""
    eval_rounds: int = 512

    def validate(self) -> None:
        """Raise :class:`InvalidInputError` naming the first bad setting."""
        if not self.rules:
            raise InvalidInputError("rules: give at least one rule set")
        checks = [
            ("steps", self.steps >= 1, "1 or more"),
            ("num_envs", self.num_envs >= len(self.rules), "at least one per rule set"),
            ("batch", self.batch >= self.minibatch >= 1, "at least minibatch (1 or more)"),
            ("epochs", self.epochs >= 1, "1 or more"),
            ("lr", self.lr > 0 and math.isfinite(self.lr), "a positive number"),
            ("clip_ratio", 0 < self.clip_ratio < 1, "between 0 and 1"),
            ("entropy", self.entropy >= 0, "0 or more"),
            ("eval_every", self.eval_every >= 1, "1 or more"),
            ("hidden", bool(self.hidden) and min(self.hidden) >= 1, "sizes of 1 or more"),
        ]
        check_settings(self, checks)


def _segments(counts: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], ...]:
    starts = np.zeros(len(counts), dtype=np.int64)
    starts[1:] = np.cumsum(counts)[:-1]
    rows = np.repeat(np.arange(len(counts)), counts)
    return starts, rows


def _log_softmax(logits: Array, starts: npt.NDArray[Any], rows: npt.NDArray[Any]) -> Array:
    top = np.maximum.reduceat(logits, starts)[rows]
    e = np.exp(logits - top)
    total = np.add.reduceat(e, starts)[rows]
    out: Array = (logits - top - np.log(total)).astype(np.float32)
    return out


def _flatten(
    legal: npt.NDArray[Any], counts: npt.NDArray[Any]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    counts = counts.astype(np.int64)
    valid = np.arange(legal.shape[1])[None, :] < counts[:, None]
    starts, rows = _segments(counts)
    return legal[valid].astype(np.int64), starts, rows


@dataclass
class _Stream:
    env: VectorEnv
    out: VectorStep
    episode: npt.NDArray[np.int64]
    parts: list[dict[str, Any]] = field(default_factory=list)


def train_ppo(
    config: PPOConfig, *, progress: Callable[[dict[str, float]], None] | None = None
) -> DMCResult:
    """Train a policy network by PPO self-play (see the module docs).

    Returns:
        A :class:`~koikoi.lab.dmc.DMCResult` whose ``net`` is the policy.
    """
    config.validate()
    start, cpu_start = time.perf_counter(), time.process_time()
    rng = np.random.default_rng(config.seed)
    policy = QNet.create(hidden=config.hidden, seed=config.seed)
    policy.meta["algorithm"] = "ppo"
    value = QNet.create(hidden=config.hidden, seed=config.seed + 1)
    opt_pi = _Adam(policy.params(), config.lr)
    opt_v = _Adam(value.params(), config.lr)
    share = config.num_envs // len(config.rules)
    streams = []
    for k, rules in enumerate(config.rules):
        env = VectorEnv(share, rules, seed=config.seed * 1000 + 500 + k, round_number="random")
        streams.append(_Stream(env, env.reset(), np.arange(k * share, (k + 1) * share)))
    next_episode = share * len(streams)
    results = np.full((1 << 16, 2), np.nan, dtype=np.float32)
    ready: list[dict[str, Any]] = []
    n_ready = 0
    steps = rounds = batches = 0
    losses: list[float] = []
    curve: list[dict[str, float]] = []

    def row() -> None:
        point = curve_point(
            policy,
            config.rules,
            config.eval_rounds,
            updates=batches,
            steps=steps,
            rounds=rounds,
            losses=losses,
            start=start,
        )
        curve.append(point)
        if progress is not None:
            progress(point)

    row()
    while steps < config.steps:
        for st in streams:
            out = st.out
            ids, starts, rows = _flatten(out.legal_ids, out.legal_counts)
            logits = policy.q(out.observations, rows, action_features(out.observations[rows], ids))
            logp = _log_softmax(logits, starts, rows)
            cum = np.cumsum(np.exp(logp, dtype=np.float64))
            before = cum[starts] - np.exp(logp[starts])
            target = before + rng.random(len(starts))
            pick = np.searchsorted(cum, target, side="right")
            pick = np.minimum(pick, starts + out.legal_counts.astype(np.int64) - 1)
            st.parts.append(
                {
                    "obs": out.observations.copy(),
                    "legal": out.legal_ids.copy(),
                    "counts": out.legal_counts.copy(),
                    "choice": pick - starts,
                    "logp": logp[pick],
                    "player": out.players.astype(np.int64),
                    "episode": st.episode.copy(),
                }
            )
            st.out = st.env.step(ids[pick])
            steps += share
            done = np.nonzero(st.out.dones)[0]
            if done.size:
                if next_episode + done.size > results.shape[0]:
                    grown = np.full((2 * results.shape[0], 2), np.nan, dtype=np.float32)
                    grown[: results.shape[0]] = results
                    results = grown
                results[st.episode[done]] = st.out.rewards[done]
                st.episode[done] = np.arange(next_episode, next_episode + done.size)
                next_episode += done.size
                rounds += int(done.size)
        if sum(len(p["logp"]) for st in streams for p in st.parts) < config.batch:
            continue
        for st in streams:
            merged = {k: np.concatenate([p[k] for p in st.parts]) for k in st.parts[0]}
            res = results[merged["episode"]]
            ended = ~np.isnan(res[:, 0])
            pl = merged["player"]
            ret = (res[np.arange(len(pl)), pl] - res[np.arange(len(pl)), 1 - pl]) / SCALE
            merged["return"] = ret.astype(np.float32)
            ready.append({k: v[ended] for k, v in merged.items()})
            n_ready += int(ended.sum())
            st.parts = [{k: v[~ended] for k, v in merged.items() if k != "return"}]
        if n_ready < config.batch:
            continue
        data = {k: np.concatenate([r[k] for r in ready]) for k in ready[0]}
        ready, n_ready = [], 0
        _update(policy, value, opt_pi, opt_v, data, config, rng, losses)
        batches += 1
        if batches % config.eval_every == 0:
            row()
    if losses or curve[-1]["updates"] != batches:
        row()
    return DMCResult(
        net=policy,
        curve=curve,
        seconds=time.perf_counter() - start,
        cpu_seconds=time.process_time() - cpu_start,
        steps=steps,
        rounds=rounds,
    )


def _update(
    policy: QNet,
    value: QNet,
    opt_pi: _Adam,
    opt_v: _Adam,
    data: dict[str, Any],
    config: PPOConfig,
    rng: np.random.Generator,
    losses: list[float],
) -> None:
    n = len(data["return"])
    zeros = np.zeros((n, ACTION_FEATURES), dtype=np.float32)
    v = value.q(data["obs"], np.arange(n), zeros)
    adv = data["return"] - v
    adv = ((adv - adv.mean()) / (adv.std() + 1e-6)).astype(np.float32)
    for _ in range(config.epochs):
        order = rng.permutation(n)
        for b in range(0, n - config.minibatch + 1, config.minibatch):
            idx = order[b : b + config.minibatch]
            obs = data["obs"][idx]
            ids, starts, rows = _flatten(data["legal"][idx], data["counts"][idx])
            feats = action_features(obs[rows], ids)
            chosen = starts + data["choice"][idx]
            old = data["logp"][idx]
            m = len(idx)

            surrogate = functools.partial(
                _surrogate,
                starts=starts,
                rows=rows,
                chosen=chosen,
                old=old,
                adv=adv[idx],
                clip_ratio=config.clip_ratio,
                entropy=config.entropy,
            )
            loss, grads = backprop(policy, obs, rows, feats, surrogate)
            opt_pi.step(grads, config.clip)
            _, vgrads = _loss_and_grads(value, obs, zeros[:m], data["return"][idx])
            opt_v.step(vgrads, config.clip)
            losses.append(loss)


def _surrogate(
    logits: Array,
    *,
    starts: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    chosen: npt.NDArray[np.int64],
    old: Array,
    adv: Array,
    clip_ratio: float,
    entropy: float,
) -> tuple[float, Array]:
    """PPO's clipped objective with an entropy bonus (to minimise) and its gradient by logit."""
    m = len(starts)
    logp = _log_softmax(logits, starts, rows)
    p = np.exp(logp)
    ratio = np.exp(logp[chosen] - old)
    clipped = np.clip(ratio, 1 - clip_ratio, 1 + clip_ratio)
    surr = np.minimum(ratio * adv, clipped * adv)
    ent = -np.add.reduceat(p * logp, starts)
    loss = float(-surr.mean() - entropy * ent.mean())
    active = ratio * adv <= clipped * adv
    g_logp = np.where(active, -adv * ratio / m, 0.0).astype(np.float32)
    d = -p * g_logp[rows]
    d[chosen] += g_logp
    d += (entropy / m) * p * (logp + ent[rows])
    return loss, d.astype(np.float32)

"""Deep Monte-Carlo training (DouZero's method) of :class:`koikoi.agents.learned.QNet`.

Self-play in the batched simulator (:class:`koikoi.envs.vector.VectorEnv`,
round episodes, a random round of the match each deal): both seats are played
by the network being trained, epsilon-greedy (a uniformly random legal action
with probability ``epsilon``, else the action of highest value). Every decision
is kept with the information state of the player to act and the features of
the action taken; when its round ends, it is labelled with the round's net
points for that player (own minus the opponent's: the Monte-Carlo return),
and the network is regressed on those labels (mean squared error, Adam,
gradient norm clipped), each labelled decision used once, as DouZero does.

Everything is numpy, batched over the environments: the forward pass scores
every legal action of every environment at once, the backward pass is written
by hand. The same seed gives the same network (on the same machine and numpy).

Every ``eval_every`` updates the learning curve gets a row: the loss since the
last row, and the greedy network's mean net points a round against a uniformly
random player over ``eval_rounds`` fixed deals (seat 0 against the simulator's
own random actions), for each rule set.
"""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from koikoi.agents.learned import SCALE, QNet, action_features
from koikoi.envs.vector import VectorEnv, VectorStep
from koikoi.game.errors import InvalidInputError

__all__ = [
    "DMCConfig",
    "DMCResult",
    "backprop",
    "check_settings",
    "choose",
    "curve_point",
    "evaluate_vs_random",
    "plot_curve",
    "train_dmc",
    "write_curve",
]

Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class DMCConfig:
    """The settings of a training run (the defaults are those of the shipped model)."""

    rules: tuple[str, ...] = ("nintendo", "koikoi-japan")
    steps: int = 2_000_000
    """Environment steps (decisions), all environments together."""
    seed: int = 1
    num_envs: int = 256
    """Environments in all, shared out among the rule sets."""
    hidden: tuple[int, ...] = (128, 64)
    lr: float = 1e-3
    batch: int = 1024
    epsilon: float = 0.1
    """The share of random actions at the start; it falls linearly to ``epsilon_end``."""
    epsilon_end: float = 0.02
    clip: float = 5.0
    """The largest global gradient norm."""
    eval_every: int = 200
    """Updates between rows of the learning curve."""
    eval_rounds: int = 512

    def validate(self) -> None:
        """Raise :class:`InvalidInputError` naming the first bad setting."""
        if not self.rules:
            raise InvalidInputError("rules: give at least one rule set")
        checks = [
            ("steps", self.steps >= 1, "1 or more"),
            ("num_envs", self.num_envs >= len(self.rules), "at least one per rule set"),
            ("batch", self.batch >= 1, "1 or more"),
            ("lr", self.lr > 0 and math.isfinite(self.lr), "a positive number"),
            ("epsilon", 0.0 <= self.epsilon <= 1.0, "from 0 to 1"),
            ("epsilon_end", 0.0 <= self.epsilon_end <= 1.0, "from 0 to 1"),
            ("clip", self.clip > 0, "a positive number"),
            ("eval_every", self.eval_every >= 1, "1 or more"),
            ("eval_rounds", self.eval_rounds >= 0, "0 or more"),
            ("hidden", bool(self.hidden) and min(self.hidden) >= 1, "sizes of 1 or more"),
        ]
        check_settings(self, checks)


def check_settings(config: object, checks: Sequence[tuple[str, bool, str]]) -> None:
    """Raise :class:`InvalidInputError` for the first ``(name, ok, allowed)`` of
    ``checks`` that is not ok, naming the setting, what is allowed and its value."""
    for name, ok, allowed in checks:
        if not ok:
            raise InvalidInputError(f"{name} must be {allowed}, not {getattr(config, name)!r}")


def curve_point(
    net: QNet,
    rules: Sequence[str],
    eval_rounds: int,
    *,
    updates: int,
    steps: int,
    rounds: int,
    losses: list[float],
    start: float,
) -> dict[str, float]:
    """A row of a learning curve: the counts so far, the mean of ``losses`` (emptied),
    the seconds since ``start`` and, with ``eval_rounds``, the net points a round of
    ``net`` against random under each rule set."""
    point: dict[str, float] = {
        "updates": float(updates),
        "steps": float(steps),
        "rounds": float(rounds),
        "loss": float(np.mean(losses)) if losses else float("nan"),
        "seconds": round(time.perf_counter() - start, 1),
    }
    for k, name in enumerate(rules):
        if eval_rounds:
            point[f"vs_random:{name}"] = evaluate_vs_random(net, name, eval_rounds, seed=10_000 + k)
    losses.clear()
    return point


@dataclass
class DMCResult:
    """The trained network, its learning curve, and what training cost."""

    net: QNet
    curve: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    steps: int = 0
    rounds: int = 0


def choose(
    net: QNet,
    observations: Array,
    legal_ids: npt.NDArray[Any],
    legal_counts: npt.NDArray[Any],
    epsilon: float = 0.0,
    rng: np.random.Generator | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], Array]:
    """The network's actions in a batch of environments (epsilon-greedy).

    Returns:
        ``(actions, rows, features)``: one action id per environment, and the
        legal actions' environment rows and :func:`action_features` (for
        :func:`_taken`).
    """
    n = observations.shape[0]
    counts = legal_counts.astype(np.int64)
    valid = np.arange(legal_ids.shape[1])[None, :] < counts[:, None]
    rows = np.nonzero(valid)[0]
    ids = legal_ids[valid].astype(np.int64)
    feats = action_features(observations[rows], ids)
    q = net.q(observations, rows, feats)
    starts = np.zeros(n, dtype=np.int64)
    starts[1:] = np.cumsum(counts)[:-1]
    best = np.maximum.reduceat(q, starts)
    # the first legal action reaching its row's maximum
    hit = q >= best[rows]
    first = np.full(n, len(q), dtype=np.int64)
    np.minimum.at(first, rows[hit], np.nonzero(hit)[0])
    pick = first
    if epsilon > 0 and rng is not None:
        explore = rng.random(n) < epsilon
        offset = (rng.random(n) * counts).astype(np.int64)
        pick = np.where(explore, starts + offset, pick)
    return ids[pick], pick, feats


def evaluate_vs_random(net: QNet, rules: str, rounds: int, seed: int) -> float:
    """The network's mean net points a round as seat 0 against uniformly random play.

    ``rounds`` deals of ``VectorEnv(rounds, rules, seed=seed, round_number="random")``,
    one round each, the network greedy.
    """
    env = VectorEnv(rounds, rules, seed=seed, round_number="random")
    out = env.reset()
    total = np.zeros(rounds, dtype=np.float64)
    live = np.ones(rounds, dtype=bool)
    random_actions = np.zeros(rounds, dtype=np.int64)
    while live.any():
        mine, _, _ = choose(net, out.observations, out.legal_ids, out.legal_counts)
        env.sample_actions(random_actions)
        actions = np.where(out.players == 0, mine, random_actions)
        out = env.step(actions)
        ended = out.dones & live
        total[ended] = out.rewards[ended, 0] - out.rewards[ended, 1]
        live &= ~out.dones
    return float(total.mean())


class _Adam:
    def __init__(self, params: list[Array], lr: float) -> None:
        self.params = params
        self.lr = lr
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[Array], clip: float) -> None:
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
        factor = min(1.0, clip / (norm + 1e-12))
        self.t += 1
        b1, b2 = 0.9, 0.999
        lr = self.lr * math.sqrt(1 - b2**self.t) / (1 - b1**self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            g = g * factor
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= (lr * m / (np.sqrt(v) + 1e-8)).astype(np.float32)


def _loss_and_grads(net: QNet, s: Array, a: Array, y: Array) -> tuple[float, list[Array]]:
    """Mean squared error of ``net`` on (state, action, target) and its gradients."""

    def mse(q: Array) -> tuple[float, Array]:
        err = q - y
        return float((err * err).mean()), ((2.0 / len(y)) * err).astype(np.float32)

    return backprop(net, s, np.arange(len(y)), a, mse)


def backprop(
    net: QNet,
    s: Array,
    rows: npt.NDArray[Any],
    a: Array,
    loss: Callable[[Array], tuple[float, Array]],
) -> tuple[float, list[Array]]:
    """A loss of ``net``'s outputs and its gradients with respect to :meth:`QNet.params`.

    Args:
        s: ``(n, SIZE)`` encodings.
        rows: ``(m,)`` the encoding of each action.
        a: ``(m, ACTION_FEATURES)`` action features.
        loss: from the ``(m,)`` outputs to the loss and its gradient by the outputs.
    """
    x = s[rows]
    z = [x @ net.state + a @ net.action + net.bias]
    hs: list[Array] = []
    for w, b in zip(net.weights, net.biases, strict=True):
        h = np.maximum(z[-1], 0.0)
        hs.append(h)
        z.append(h @ w + b)
    value, d_out = loss(z[-1][:, 0])
    d = d_out[:, None].astype(np.float32)
    grads_w: list[Array] = []
    grads_b: list[Array] = []
    for k in range(len(net.weights) - 1, -1, -1):
        grads_w.append(hs[k].T @ d)
        grads_b.append(d.sum(axis=0))
        d = (d @ net.weights[k].T) * (z[k] > 0)
    grads = [x.T @ d, a.T @ d, d.sum(axis=0)]
    for gw, gb in zip(reversed(grads_w), reversed(grads_b), strict=True):
        grads += [gw, gb]
    return value, grads


@dataclass
class _Stream:
    """One rule set's environments and the decisions waiting for their round to end."""

    env: VectorEnv
    out: VectorStep
    episode: npt.NDArray[np.int64]
    obs: list[Array] = field(default_factory=list)
    feats: list[Array] = field(default_factory=list)
    players: list[npt.NDArray[np.int8]] = field(default_factory=list)
    episodes: list[npt.NDArray[np.int64]] = field(default_factory=list)


def train_dmc(
    config: DMCConfig, *, progress: Callable[[dict[str, float]], None] | None = None
) -> DMCResult:
    """Train a :class:`QNet` by Deep Monte-Carlo self-play (see the module docs).

    Raises:
        InvalidInputError: a bad setting (see :meth:`DMCConfig.validate`).
    """
    config.validate()
    start, cpu_start = time.perf_counter(), time.process_time()
    rng = np.random.default_rng(config.seed)
    net = QNet.create(hidden=config.hidden, seed=config.seed)
    adam = _Adam(net.params(), config.lr)
    share = config.num_envs // len(config.rules)
    streams = []
    for k, rules in enumerate(config.rules):
        env = VectorEnv(share, rules, seed=config.seed * 1000 + k, round_number="random")
        first = env.reset()
        streams.append(_Stream(env, first, np.arange(k * share, (k + 1) * share, dtype=np.int64)))
    next_episode = share * len(streams)
    # results[e] = (net points of seat 0, of seat 1) of episode e, NaN while it runs
    results = np.full((1 << 16, 2), np.nan, dtype=np.float32)
    ready_s: list[Array] = []
    ready_a: list[Array] = []
    ready_y: list[Array] = []
    waiting = 0
    steps = rounds = updates = 0
    losses: list[float] = []
    curve: list[dict[str, float]] = []

    def grow(size: int) -> None:
        nonlocal results
        if size > results.shape[0]:
            bigger = np.full((max(size, 2 * results.shape[0]), 2), np.nan, dtype=np.float32)
            bigger[: results.shape[0]] = results
            results = bigger

    def row() -> None:
        point = curve_point(
            net,
            config.rules,
            config.eval_rounds,
            updates=updates,
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
        epsilon = config.epsilon + (config.epsilon_end - config.epsilon) * min(
            1.0, steps / config.steps
        )
        for st in streams:
            out = st.out
            actions, pick, feats = choose(
                net, out.observations, out.legal_ids, out.legal_counts, epsilon, rng
            )
            st.obs.append(out.observations.copy())
            st.feats.append(feats[pick])
            st.players.append(out.players.copy())
            st.episodes.append(st.episode.copy())
            out = st.out = st.env.step(actions)
            steps += share
            done = np.nonzero(out.dones)[0]
            if done.size:
                grow(next_episode + done.size)
                results[st.episode[done]] = out.rewards[done]
                st.episode[done] = np.arange(next_episode, next_episode + done.size)
                next_episode += done.size
                rounds += int(done.size)
        waiting += share * len(streams)
        if waiting < 8 * config.batch:
            continue
        waiting = 0
        # label the decisions whose round has ended; keep the others waiting
        for st in streams:
            obs = np.concatenate(st.obs)
            feats = np.concatenate(st.feats)
            players = np.concatenate(st.players).astype(np.int64)
            episodes = np.concatenate(st.episodes)
            res = results[episodes]
            ended = ~np.isnan(res[:, 0])
            mine = res[ended, players[ended]]
            theirs = res[ended, 1 - players[ended]]
            ready_s.append(obs[ended])
            ready_a.append(feats[ended])
            ready_y.append(((mine - theirs) / SCALE).astype(np.float32))
            keep = ~ended
            st.obs, st.feats = [obs[keep]], [feats[keep]]
            st.players = [players[keep].astype(np.int8)]
            st.episodes = [episodes[keep]]
        s = np.concatenate(ready_s)
        a = np.concatenate(ready_a)
        y = np.concatenate(ready_y)
        order = rng.permutation(len(y))
        usable = len(y) - len(y) % config.batch
        for b in range(0, usable, config.batch):
            idx = order[b : b + config.batch]
            loss, grads = _loss_and_grads(net, s[idx], a[idx], y[idx])
            adam.step(grads, config.clip)
            losses.append(loss)
            updates += 1
            if updates % config.eval_every == 0:
                row()
        rest = order[usable:]
        ready_s, ready_a, ready_y = [s[rest]], [a[rest]], [y[rest]]
    if losses or not curve or curve[-1]["updates"] != updates:
        row()
    return DMCResult(
        net=net,
        curve=curve,
        seconds=time.perf_counter() - start,
        cpu_seconds=time.process_time() - cpu_start,
        steps=steps,
        rounds=rounds,
    )


def write_curve(curve: Sequence[dict[str, float]], path: str | Path) -> None:
    """Write a learning curve as CSV (a row per point, the columns of the first)."""
    if not curve:
        raise InvalidInputError("the learning curve is empty: nothing to write")
    columns = list(curve[0])
    with Path(path).open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for point in curve:
            writer.writerow([f"{point.get(c, float('nan')):.6g}" for c in columns])


def plot_curve(
    curve: Sequence[dict[str, float]],
    path: str | Path,
    *,
    title: str = "Deep Monte-Carlo self-play (koikoi train dmc)",
    loss_label: str = "loss (MSE, points / 10)",
) -> Path:
    """Plot the net points a round against random play and the loss by steps (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p["steps"] / 1e6 for p in curve]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for key in curve[0]:
        if key.startswith("vs_random:"):
            top.plot(steps, [p[key] for p in curve], marker="o", label=key.split(":", 1)[1])
    top.axhline(0.0, color="grey", linewidth=0.8)
    top.set_ylabel("net points a round vs random")
    top.legend()
    top.set_title(title)
    bottom.plot(steps[1:], [p["loss"] for p in curve[1:]], marker=".")
    bottom.set_ylabel(loss_label)
    bottom.set_xlabel("environment steps (millions)")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out

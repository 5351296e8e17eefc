"""Koi-Koi as a PettingZoo AEC environment (two learners, turn by turn).

A thin adapter over :class:`~koikoi.game.engine.Match` and the information-state
encoding of :mod:`koikoi.kernel.encoding`, in the manner of PettingZoo's classic
games. Needs ``pip install 'koikoi[rl]'``.

* Agents ``"player_0"`` and ``"player_1"`` are the engine's players 0 and 1.
* Observation: ``{"observation": float32[SIZE], "action_mask": int8[NUM_ACTIONS]}``
  from the agent's own :class:`~koikoi.game.views.PlayerView` only; the mask is all
  zeros when it is not the agent's turn.
* ``observation="sequence"`` adds the full history of :mod:`koikoi.kernel.sequence`:
  ``"sequence"`` (int16, ``sequence_length`` x ``TOKEN_WIDTH``: every public event
  of the round, or of the match with ``episode="match"``, in order, then zeros),
  ``"sequence_length"`` (the tokens in it) and ``"hand"`` (int8[48], the agent's
  own hand: the private part, kept apart).
* Action: ``Discrete(NUM_ACTIONS)``, the fixed ids of :mod:`koikoi.game.actions`.
* Rewards come at the end of the episode (``episode="round"``: one round;
  ``"match"``: the whole match): ``reward="points"`` gives each player's score
  change (the settlements' deltas), ``"net"`` own change minus the opponent's,
  ``"win"`` +1 / -1 / 0.
* :func:`env` wraps :class:`raw_env` like PettingZoo's classic games: an illegal
  action ends the game with reward -1 for the player who took it and 0 for the
  other (``TerminateIllegalWrapper``). :class:`raw_env` raises
  :class:`~koikoi.game.errors.IllegalActionError` instead.
* :meth:`raw_env.save` and :meth:`raw_env.restore` (also through the wrappers of
  :func:`env`) snapshot the whole env as plain JSON-able data and bring it back;
  a snapshot holds both hands and the stock order: it is for the experimenter.
* ``reset(seed=s)`` deals the match of ``Match(rules, seed=s)``; later unseeded
  resets follow from it. ``reset(options={"position": TEXT})`` starts from a
  position (:mod:`koikoi.game.positions`; a view position's hidden cards are re-dealt).

>>> e = env(rules="leaflet")
>>> e.reset(seed=1)
>>> for agent in e.agent_iter():
...     obs, reward, terminated, truncated, info = e.last()
...     action = None if terminated else int(obs["action_mask"].nonzero()[0][0])
...     e.step(action)
>>> sorted(e.rewards) == []  # both agents are done and removed
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Final

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from koikoi.envs._runner import (
    SNAPSHOT_VERSION,
    Runner,
    RunnerOptions,
    check_choice,
    check_snapshot,
    observation_bounds,
    resolve_rules,
    sequence_length_option,
    sequence_parts,
    sequence_spaces,
)
from koikoi.game.actions import NUM_ACTIONS
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.kernel.encoding import action_mask, encode

__all__ = ["AGENTS", "env", "raw_env"]

AGENTS: Final = ("player_0", "player_1")
RENDER_MODES: Final = ("human", "ansi")
OBSERVATIONS: Final = ("dict", "sequence")

Observation = dict[str, Any]


def env(
    rules: str | Path | Rules = "nintendo",
    *,
    episode: str = "round",
    reward: str = "points",
    observation: str = "dict",
    sequence_length: int | None = None,
    render_mode: str | None = None,
) -> Any:
    """The environment, wrapped as PettingZoo's classic games are.

    Args:
        rules: a preset name, a house-rules TOML path or a :class:`Rules`.
        episode: ``"round"`` or ``"match"``.
        reward: ``"points"``, ``"net"`` or ``"win"``.
        observation: ``"dict"`` or ``"sequence"`` (the dict and the full history).
        sequence_length: the rows of ``"sequence"`` (the latest events are kept when
            there are more); ``None``: room for every event of an episode.
        render_mode: ``None``, ``"human"`` (prints) or ``"ansi"`` (returns text).

    Raises:
        InvalidInputError: unknown rules or a bad option (the message says what is allowed).
    """
    e = raw_env(
        rules,
        episode=episode,
        reward=reward,
        observation=observation,
        sequence_length=sequence_length,
        render_mode=render_mode,
    )
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return _Wrapped(e)


class _Wrapped(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's order check, with :meth:`raw_env.save` and :meth:`raw_env.restore`
    through the wrappers (a restored env may step without a reset)."""

    def save(self) -> dict[str, Any]:
        """:meth:`raw_env.save` of the wrapped env."""
        snapshot: dict[str, Any] = self.unwrapped.save()
        return snapshot

    def restore(self, snapshot: dict[str, Any]) -> None:
        """:meth:`raw_env.restore` of the wrapped env."""
        self.unwrapped.restore(snapshot)
        self._has_reset = True
        inner = self.env
        while isinstance(inner, wrappers.BaseWrapper):
            if isinstance(inner, wrappers.TerminateIllegalWrapper):
                # Its cache of the last observation belongs to the state left behind;
                # an illegal end is restored as the terminations it left.
                inner._prev_obs = None
                inner._prev_info = None
                inner._terminated = False
            inner = inner.env


class raw_env(RunnerOptions, AECEnv):  # type: ignore[misc]
    """The unwrapped AEC environment (see the module docs)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "koikoi_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: str | Path | Rules = "nintendo",
        *,
        episode: str = "round",
        reward: str = "points",
        observation: str = "dict",
        sequence_length: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        self.rules = resolve_rules(rules)
        self.render_mode = render_mode
        self.observation_kind = check_choice("observation", observation, OBSERVATIONS)
        history = observation == "sequence"
        self._game = Runner(self.rules, episode, reward, history=history)
        self.sequence_length = sequence_length_option(sequence_length, episode, self.rules)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        low, high = observation_bounds(self.rules)
        spaces: dict[str, Any] = {
            "observation": gymnasium.spaces.Box(low, high, dtype=np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
        if history:
            spaces |= sequence_spaces(self.rules, self.sequence_length)
        space = gymnasium.spaces.Dict(spaces)
        self.observation_spaces = {a: space for a in AGENTS}
        self.action_spaces = {a: gymnasium.spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self._reset_dicts()
        self.agent_selection = AGENTS[0]

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def _reset_dicts(self) -> None:
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode (see the module docs for ``seed`` and ``options``).

        Raises:
            InvalidInputError: a bad seed, an unknown option or a bad position.
        """
        position = None
        if options:
            position = options.get("position")
            unknown = sorted(set(options) - {"position"})
            if unknown and not (unknown == ["options"] and position is None):
                # (PettingZoo's api_test passes {"options": 1}; nothing else is read.)
                raise InvalidInputError(
                    f"unknown reset option {unknown[0]!r}: the only one is 'position'"
                )
        self._game.start(seed, position)
        self.agents = list(AGENTS)
        self._reset_dicts()
        current = self._game.current
        self.agent_selection = AGENTS[current if current is not None else 0]

    def observe(self, agent: str) -> Observation:
        history = self.observation_kind == "sequence"
        view = self._game.view(AGENTS.index(agent), with_history=history)
        obs: Observation = {"observation": encode(view), "action_mask": action_mask(view)}
        if history:
            obs |= sequence_parts(view, self.sequence_length, self._game.episode)
        return obs

    def step(self, action: int | None) -> None:
        """Apply the selected agent's action (``None`` for an agent that is done).

        Raises:
            IllegalActionError: an action that is not legal now (the state is unchanged).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise InvalidInputError(f"{agent} is to act: give an action id, not None")
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        game = self._game
        game.act(int(action))
        if game.done:
            returns = game.returns()
            deltas = game.deltas()
            for p, a in enumerate(AGENTS):
                self.rewards[a] = returns[p]
                self.terminations[a] = True
                self.infos[a] = {"points": deltas[p]}
            self._accumulate_rewards()
        else:
            current = game.current
            self.agent_selection = AGENTS[current if current is not None else 0]
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------ save and restore

    def save(self) -> dict[str, Any]:
        """A snapshot of the env: :meth:`restore` brings this env, or a new one made
        with the same options, back to it.

        The snapshot is plain JSON-able data (``json.dumps`` writes it): the match
        (its seed and actions, or the position it started from), the random
        generator of the next deals, and the agents' rewards, terminations, infos
        and turn, so the same actions give the same observations and rewards. It
        holds the **whole state, hidden cards included** (both hands, the stock
        order): it is for the experimenter, never for an agent's observation.

        Raises:
            InvalidInputError: no episode has started.
        """
        snapshot: dict[str, Any] = {
            "format": self.metadata["name"],
            "version": SNAPSHOT_VERSION,
            "config": self._config(),
            "game": self._game.save(),
            "agents": list(self.agents),
            "agent_selection": self.agent_selection,
            "rewards": dict(self.rewards),
            "cumulative_rewards": dict(self._cumulative_rewards),
            "terminations": dict(self.terminations),
            "truncations": dict(self.truncations),
            "infos": {a: dict(info) for a, info in self.infos.items()},
        }
        skip = getattr(self, "_skip_agent_selection", None)
        if skip is not None:
            snapshot["skip_agent_selection"] = skip
        return snapshot

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Bring the env back to a :meth:`save` snapshot (:meth:`last` then gives what
        it gave there; like :meth:`reset`, this returns nothing). The snapshot is not
        changed and can be restored again.

        Raises:
            InvalidInputError: the snapshot is of another env or other options (the
                message names what differs), or damaged; the env is then unchanged.
        """
        snap = check_snapshot(snapshot, self.metadata["name"], self._config())
        agents = snap.get("agents")
        if not isinstance(agents, list) or not set(agents) <= set(AGENTS):
            raise InvalidInputError(
                f"the snapshot's agents must be a list of {', '.join(AGENTS)}, not {agents!r}"
            )
        selection = snap.get("agent_selection")
        if selection not in AGENTS:
            raise InvalidInputError(
                f"the snapshot's agent_selection must be one of {', '.join(AGENTS)}, "
                f"not {selection!r}"
            )
        skip = snap.get("skip_agent_selection")
        if skip is not None and skip not in AGENTS:
            raise InvalidInputError(
                f"the snapshot's skip_agent_selection must be one of {', '.join(AGENTS)}, "
                f"not {skip!r}"
            )
        tables = {
            name: _per_agent(snap, name, agents, kind)
            for name, kind in (
                ("rewards", (int, float)),
                ("cumulative_rewards", (int, float)),
                ("terminations", bool),
                ("truncations", bool),
                ("infos", dict),
            )
        }
        game = Runner(self.rules, self._game.episode, self._game.reward, history=self._game.history)
        game.restore(snap.get("game"))
        self._game = game
        self.agents = list(agents)
        self.agent_selection = selection
        self.rewards = tables["rewards"]
        self._cumulative_rewards = tables["cumulative_rewards"]
        self.terminations = tables["terminations"]
        self.truncations = tables["truncations"]
        self.infos = {a: dict(v) for a, v in tables["infos"].items()}
        self._skip_agent_selection = skip

    def render(self) -> str | None:
        """The full position (hidden cards included), or how the episode ended."""
        return self._game.render(self.render_mode, gymnasium.logger.warn)

    def close(self) -> None:
        """Nothing to release."""


def _per_agent(
    snapshot: dict[str, Any], name: str, agents: list[str], kind: type | tuple[type, ...]
) -> dict[str, Any]:
    """The snapshot's table ``name``: a value of ``kind`` for each of ``agents``."""
    table = snapshot.get(name)
    if (
        not isinstance(table, dict)
        or sorted(table) != sorted(agents)
        or not all(isinstance(v, kind) for v in table.values())
    ):
        raise InvalidInputError(
            f"the snapshot's {name} must give each of the agents {agents} a value, "
            f"not {table!r}: it is damaged"
        )
    return dict(table)

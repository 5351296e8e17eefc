"""Koi-Koi as a single-agent Gymnasium environment: one seat against any agent.

A thin adapter over :class:`~koikoi.game.engine.Match`, the encoding of
:mod:`koikoi.kernel.encoding` and the agents of :mod:`koikoi.agents` (the
opponent is built with :func:`~koikoi.agents.make_agent` and sees only its own
:class:`~koikoi.game.views.PlayerView`). Needs ``pip install 'koikoi[rl]'``.

Importing this module registers ``"koikoi/KoiKoi-v0"``::

    import gymnasium
    import koikoi.envs.gymnasium  # registers koikoi/KoiKoi-v0

    env = gymnasium.make("koikoi/KoiKoi-v0", rules="leaflet", opponent="random")

(``gymnasium.make("koikoi.envs.gymnasium:koikoi/KoiKoi-v0", ...)`` imports it for you.)

* Observation: ``{"observation": float32[SIZE], "action_mask": int8[NUM_ACTIONS]}``
  (``observation="dict"``), or the float32 vector alone (``observation="vector"``;
  the mask is then in ``info["action_mask"]``), or with ``observation="sequence"``
  the dict plus the full history of :mod:`koikoi.kernel.sequence`:
  ``"sequence"`` (int16, ``sequence_length`` x ``TOKEN_WIDTH``: every public event
  of the round, or of the match with ``episode="match"``, in order, then zeros),
  ``"sequence_length"`` (the tokens in it) and ``"hand"`` (int8[48], the seat's
  own hand: the private part, kept apart). :meth:`KoiKoiEnv.action_masks`
  gives the mask either way, as sb3-contrib's ``MaskablePPO`` asks for it.
* Action: ``Discrete(NUM_ACTIONS)``, the fixed ids of :mod:`koikoi.game.actions`.
* The reward comes at the end of the episode (``episode="round"`` or
  ``"match"``): ``reward="points"`` (the seat's score change), ``"net"`` (own
  change minus the opponent's) or ``"win"`` (+1 / -1 / 0). ``info["points"]``
  then holds the seat's score change whatever the reward.
* An illegal action ends the episode with ``illegal_reward`` (default -1) and
  ``info["illegal_action"]``, like PettingZoo's classic games.
* :meth:`KoiKoiEnv.save` and :meth:`KoiKoiEnv.restore` snapshot the whole env
  (plain JSON-able data, hidden cards included: for the experimenter, never the
  learner) and bring it back, the opponent's moves included.
* With ``episode="round"``, unseeded resets go on with the next round of the
  same match; rounds that end before the seat's first decision (an instant
  hand, an opponent who scores and stops on the first turn) are played through
  and are not episodes.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Final, SupportsInt

import gymnasium
import numpy as np
import numpy.typing as npt

from koikoi.agents import Agent, make_agent
from koikoi.envs._runner import (
    SNAPSHOT_VERSION,
    Runner,
    RunnerOptions,
    check_choice,
    check_snapshot,
    observation_bounds,
    resolve_rules,
    rng_from_state,
    rng_state,
    sequence_length_option,
    sequence_parts,
    sequence_spaces,
)
from koikoi.game.actions import NUM_ACTIONS
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.kernel.encoding import action_mask, encode

__all__ = ["ENV_ID", "KoiKoiEnv"]

ENV_ID: Final = "koikoi/KoiKoi-v0"
SEATS: Final = (0, 1, "random")
OBSERVATIONS: Final = ("dict", "vector", "sequence")
RENDER_MODES: Final = ("human", "ansi")
_MAX_SKIPS: Final = 1000


class KoiKoiEnv(RunnerOptions, gymnasium.Env[Any, np.int64]):
    """One seat of Koi-Koi against ``opponent`` (see the module docs).

    Args:
        rules: a preset name, a house-rules TOML path or a :class:`Rules`.
        opponent: an agent spec for :func:`~koikoi.agents.make_agent`
            (``"heuristic"``, ``"random"``, ``"mcts:iterations=200"``, ...) or an agent.
        episode: ``"round"`` or ``"match"``.
        reward: ``"points"``, ``"net"`` or ``"win"``.
        seat: the learner's player number, 0 or 1, or ``"random"`` (drawn per match).
        observation: ``"dict"``, ``"vector"`` or ``"sequence"``.
        sequence_length: the rows of ``"sequence"`` (the latest events are kept when
            there are more); ``None``: room for every event of an episode.
        illegal_reward: the reward of an illegal action, which ends the episode.
        render_mode: ``None``, ``"human"`` (prints) or ``"ansi"`` (returns text).

    Raises:
        InvalidInputError: unknown rules or agent, or a bad option (the message
            says what is allowed).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        rules: str | Path | Rules = "nintendo",
        *,
        opponent: str | Agent = "heuristic",
        episode: str = "round",
        reward: str = "points",
        seat: int | str = 0,
        observation: str = "dict",
        sequence_length: int | None = None,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = resolve_rules(rules)
        history = observation == "sequence"
        self._game = Runner(self.rules, episode, reward, history=history)
        self.sequence_length = sequence_length_option(sequence_length, episode, self.rules)
        if seat not in SEATS or isinstance(seat, bool):
            raise InvalidInputError(f"seat must be 0, 1 or 'random', not {seat!r}")
        self.seat_option = seat
        self.seat = 0 if seat == "random" else int(seat)
        self.observation_kind = check_choice("observation", observation, OBSERVATIONS)
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        self.render_mode = render_mode
        try:
            self.illegal_reward = float(illegal_reward)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"illegal_reward must be a number, not {illegal_reward!r}"
            ) from None
        if isinstance(opponent, str):
            self.opponent: Agent = make_agent(opponent)
        elif isinstance(opponent, Agent):
            self.opponent = opponent
        else:
            raise InvalidInputError(
                f"opponent must be an agent spec such as 'heuristic' or an agent, not {opponent!r}"
            )
        self._opponent_rng = random.Random(0)
        self._illegal = False
        self._illegal_action: int | None = None
        low, high = observation_bounds(self.rules)
        vector = gymnasium.spaces.Box(low, high, dtype=np.float32)
        if self.observation_kind != "vector":
            mask = gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)
            spaces: dict[str, gymnasium.spaces.Space[Any]] = {
                "observation": vector,
                "action_mask": mask,
            }
            if history:
                spaces |= sequence_spaces(self.rules, self.sequence_length)
            self.observation_space: gymnasium.spaces.Space[Any] = gymnasium.spaces.Dict(spaces)
        else:
            self.observation_space = vector
        self.action_space: gymnasium.spaces.Space[np.int64] = gymnasium.spaces.Discrete(NUM_ACTIONS)

    # ----------------------------------------------------------------- API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode.

        ``seed`` deals the match of ``Match(rules, seed=seed)`` (and seeds the
        opponent and the seat draw); ``options={"position": TEXT}`` starts from a
        position (:mod:`koikoi.game.positions`) instead, with ``episode="round"``.

        Raises:
            InvalidInputError: a bad seed, an unknown option or a bad position.
        """
        position = None
        if options:
            unknown = sorted(set(options) - {"position"})
            if unknown:
                raise InvalidInputError(
                    f"unknown reset option {unknown[0]!r}: the only one is 'position'"
                )
            position = options.get("position")
        game = self._game
        game.start(seed, position)  # a bad seed or position raises here and changes nothing
        super().reset(seed=seed)
        self._illegal = False
        self._illegal_action = None
        for _ in range(_MAX_SKIPS):
            if game.new_match:
                self._opponent_rng = random.Random(game.seeder.getrandbits(64))
                if self.seat_option == "random":
                    self.seat = game.seeder.randrange(2)
            self._play_opponent()
            if not game.done:
                if self.render_mode == "human":
                    self.render()
                return self._observation(), self._info()
            if position is not None:
                raise InvalidInputError(
                    "the position gives the learner no decision: the round ends before it acts"
                )
            game.start()
        raise RuntimeError("no episode with a decision for the learner")  # pragma: no cover

    def step(self, action: SupportsInt) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponent's until the learner acts again.

        Returns ``(observation, reward, terminated, truncated, info)``; an
        illegal action terminates the episode with ``illegal_reward``.

        Raises:
            InvalidInputError: the episode is over (call :meth:`reset`).
        """
        game = self._game
        if game.done or self._illegal:
            raise InvalidInputError("the episode is over: call reset()")
        action_id = int(action)
        if action_id not in game.legal_ids():
            self._illegal = True
            self._illegal_action = action_id
            info = self._info()
            info["illegal_action"] = action_id
            return self._observation(), self.illegal_reward, True, False, info
        game.act(action_id)
        self._play_opponent()
        if self.render_mode == "human":
            self.render()
        if not game.done:
            return self._observation(), 0.0, False, False, self._info()
        info = self._info()
        info["points"] = game.deltas()[self.seat]
        return self._observation(), game.returns()[self.seat], True, False, info

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal actions of the learner now (all False at the end), for ``MaskablePPO``."""
        if self._illegal or self._game.round is None:
            return np.zeros(NUM_ACTIONS, dtype=np.bool_)
        return action_mask(self._game.view(self.seat)).astype(np.bool_)

    def render(self) -> str | None:
        """The full position (hidden cards included), or how the episode ended."""
        return self._game.render(self.render_mode, gymnasium.logger.warn)

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------ save and restore

    def save(self) -> dict[str, Any]:
        """A snapshot of the env: :meth:`restore` brings this env, or a new one made
        with the same options, back to it.

        The snapshot is plain JSON-able data (``json.dumps`` writes it): the match
        (its seed and actions, or the position it started from), the seat, the
        random generators of the env, of its next deals and of the opponent, so the
        same actions give the same observations, rewards and infos, the
        opponent's moves included. It holds the **whole state, hidden cards
        included** (the opponent's hand, the stock order): it is for the
        experimenter, never for the learner's observation.

        The opponent must choose from its view and the generator alone, as every
        built-in agent does; one that searches under a time budget (``time=``)
        plays by the clock and repeats only with an iteration budget.

        Raises:
            InvalidInputError: no episode has started, or the opponent keeps a
                state of its own that a snapshot cannot hold (an outside program,
                ``cmd:``).
        """
        from koikoi.agents.external import ExternalAgent

        if isinstance(self.opponent, ExternalAgent):
            raise InvalidInputError(
                f"the opponent {self.opponent.name!r} is an outside program with a state of "
                "its own that a snapshot cannot hold: save() needs a built-in agent"
            )
        snapshot: dict[str, Any] = {
            "format": ENV_ID,
            "version": SNAPSHOT_VERSION,
            "config": self._config(),
            "game": self._game.save(),
            "seat": self.seat,
            "illegal_action": self._illegal_action if self._illegal else None,
            "opponent_rng": rng_state(self._opponent_rng),
        }
        if self._np_random is not None:
            snapshot["np_random"] = self._np_random.bit_generator.state
        return snapshot

    def restore(self, snapshot: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Bring the env back to a :meth:`save` snapshot; return ``(observation, info)``
        at that point, as :meth:`reset` does, so the loop goes on with :meth:`step`.

        ``info`` also holds what the step that led there put in it (``points`` at the
        end of an episode, ``illegal_action``). The snapshot is not changed and can be
        restored again.

        Raises:
            InvalidInputError: the snapshot is of another env or other options (the
                message names what differs), or damaged; the env is then unchanged.
        """
        snap = check_snapshot(snapshot, ENV_ID, self._config())
        seat = snap.get("seat")
        if seat not in (0, 1) or isinstance(seat, bool):
            raise InvalidInputError(f"the snapshot's seat must be 0 or 1, not {seat!r}")
        if self.seat_option != "random" and seat != self.seat_option:
            raise InvalidInputError(
                f"the snapshot's seat {seat} is not this env's seat {self.seat_option}"
            )
        illegal = snap.get("illegal_action")
        if illegal is not None and (not isinstance(illegal, int) or isinstance(illegal, bool)):
            raise InvalidInputError(
                f"the snapshot's illegal_action must be an action id or None, not {illegal!r}"
            )
        opponent_rng = rng_from_state(snap.get("opponent_rng"), "opponent_rng")
        np_random = _generator(snap.get("np_random"))
        game = Runner(self.rules, self._game.episode, self._game.reward, history=self._game.history)
        game.restore(snap.get("game"))
        if game.current not in (None, seat):
            raise InvalidInputError(
                "the snapshot's game waits for the opponent, not the learner: it is damaged"
            )
        self._game = game
        self.seat = seat
        self._illegal = illegal is not None
        self._illegal_action = illegal
        self._opponent_rng = opponent_rng
        if np_random is not None:
            self._np_random = np_random
        info = self._info()
        if illegal is not None:
            info["illegal_action"] = illegal
        elif game.done:
            info["points"] = game.deltas()[seat]
        return self._observation(), info

    def _config(self) -> dict[str, Any]:
        return {
            **super()._config(),
            "seat": self.seat_option,
            "opponent": self.opponent.name,
            "illegal_reward": self.illegal_reward,
        }

    # ------------------------------------------------------------- helpers

    def _play_opponent(self) -> None:
        game = self._game
        other = 1 - self.seat
        while game.current == other:
            view = game.view(other)
            game.act(self.opponent.act(view, self._opponent_rng))

    def _observation(self) -> Any:
        history = self.observation_kind == "sequence"
        view = self._game.view(self.seat, with_history=history)
        vector = encode(view)
        if self.observation_kind == "vector":
            return vector
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8) if self._illegal else action_mask(view)
        obs = {"observation": vector, "action_mask": mask}
        if history:
            obs |= sequence_parts(view, self.sequence_length, self._game.episode)
        return obs

    def _info(self) -> dict[str, Any]:
        if self.observation_kind == "vector":
            return {"action_mask": self.action_masks().astype(np.int8)}
        return {}


def _generator(state: object) -> np.random.Generator | None:
    """The numpy generator of a saved ``bit_generator.state`` (None: none was saved)."""
    if state is None:
        return None
    name = state.get("bit_generator") if isinstance(state, dict) else None
    kind = getattr(np.random, name, None) if isinstance(name, str) else None
    if not (
        isinstance(state, dict)
        and isinstance(kind, type)
        and issubclass(kind, np.random.BitGenerator)
    ):
        raise InvalidInputError(
            f"the snapshot's np_random is not the state of a numpy bit generator: {state!r}"
        )
    bits = kind()
    try:
        bits.state = state
    except (TypeError, ValueError, KeyError) as exc:
        raise InvalidInputError(f"the snapshot's np_random cannot be restored ({exc})") from None
    return np.random.Generator(bits)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="koikoi.envs.gymnasium:KoiKoiEnv")

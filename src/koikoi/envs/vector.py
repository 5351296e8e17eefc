"""The batched simulator: many rounds of Koi-Koi stepped at once in the compiled kernel.

:class:`VectorEnv` holds ``n`` independent rounds (one per environment) and
steps all of them with one call: it applies one action id per environment,
settles and re-deals the rounds that end, and writes into preallocated numpy
arrays, for the player to act in each round:

* ``observations`` (float32, ``n x encoding.SIZE``): exactly
  ``encoding.encode(view)`` of that player's :class:`~koikoi.game.views.PlayerView`;
* ``legal_ids`` (int16, ``n x MAX_LEGAL``: the legal action ids in
  ``Round.legal_ids()`` order, then -1) and ``legal_counts`` (int16, ``n``);
  with ``dense_mask=True`` also ``masks`` (int8, ``n x NUM_ACTIONS``, exactly
  ``encoding.action_mask(view)``);
* ``rewards`` (float32, ``n x 2``): the settlement's deltas (net round points of
  player 0 and player 1) in the step a round ends, else 0;
* ``dones`` (bool, ``n``): the round ended in this step (its environment already
  holds a new deal, whose first observation is in ``observations``);
* ``players`` (int8, ``n``): the player to act.

With ``sequence=True`` each step also writes the sequence observation of
:mod:`koikoi.kernel.sequence` (exactly ``sequence.encode_sequence(view,
length=sequence_length, scope=episode)`` of the player to act, compiled in
:mod:`koikoi.kernel.batch_sequence`):

* ``sequences`` (int16, ``n x sequence_length x TOKEN_WIDTH``): every public
  event of the current episode in order (of the round; of every round of the
  match so far, its redeals and instant hands included), then zeros; the
  latest ``sequence_length`` when there are more;
* ``sequence_lengths`` (int16, ``n``): the tokens of each.

``sequence_length`` defaults to ``sequence.default_length(episode, rules)``, as
in the single environments: a round's most tokens (91), times the rules'
rounds for match episodes (1,092 under nintendo: 19.7 kB an environment).

The private part, the player's own hand, is the observation's first 48 values.

Every rule comes from the playout kernel (:mod:`koikoi.kernel`), which is
checked against the reference engine; ``tests/envs/test_vector.py`` replays the
simulator's rounds through :class:`~koikoi.game.engine.Round` and compares every
observation, mask and reward, compiled with numba (a dependency of koikoi).

With ``episode="round"`` (the default) each episode is one round. A deal is
what :class:`~koikoi.game.engine.Match` deals (eight cards to each hand and eight
to the field from a shuffled deck, the dealer leads) without the match-level
chance: no redeal checks and no instant hands. The observation's match part is
that of a match at ``match_scores`` (default: the rules' ``game.start_points``
each), ``game.rounds`` long, in round ``round_number``.

With ``episode="match"`` each episode is a whole match, played as
:class:`~koikoi.game.engine.Match` plays it: the first dealer, redeals, instant
hands, the dealer and leader of each round, the match scores, a bust and the
end. ``rewards`` are then the deltas of every round settled in the step
(instant rounds dealt before a match's first decision count in its first step),
``dones`` marks the end of a match, and :attr:`VectorEnv.winners` and
:attr:`VectorEnv.final_scores` hold its result;
``tests/envs/test_vector_match.py`` replays the matches through ``Match``.

:meth:`VectorEnv.save` and :meth:`VectorEnv.restore` snapshot every environment
(rounds, matches, random generators, outputs) and bring them back.

>>> env = VectorEnv(4, "nintendo", seed=1)
>>> out = env.reset()
>>> out.observations.shape, int(out.legal_counts.min()) > 0
((4, 540), True)
>>> out = env.step(env.sample_actions())
>>> out.rewards.shape, out.dones.dtype.name
((4, 2), 'bool')
>>> snapshot = env.save()
>>> matches = VectorEnv(2, "koikoi-japan", seed=1, episode="match")
>>> matches.reset().observations.shape, matches.match_scores.tolist()
((2, 540), [[30, 30], [30, 30]])
>>> tokens = VectorEnv(2, "nintendo", seed=1, episode="match", sequence=True)
>>> _ = tokens.reset()
>>> tokens.sequences.shape, int(tokens.sequences[0, 0, 0])  # 12 x 91 rows; round_start
((2, 1092, 9), 1)
"""

from __future__ import annotations

import functools
import sys
import time
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from koikoi.game.actions import NUM_ACTIONS, describe_action_id
from koikoi.game.engine import Round
from koikoi.game.errors import IllegalActionError, InvalidInputError
from koikoi.game.rules import Rules, load_rules
from koikoi.kernel import encoding

if TYPE_CHECKING:
    from koikoi.game.views import PlayerView
    from koikoi.kernel import KernelState

__all__ = ["MAX_LEGAL", "Deal", "VectorEnv", "VectorStep", "available", "benchmark"]

MAX_LEGAL: Final = 128
"""Columns of ``legal_ids``: more than any round can offer."""


@functools.cache
def _impl() -> Any:
    """The compiled module, or None when numba (or numpy) cannot be imported.

    Says so on stderr, in one line, the first time a process loads it: numba
    compiles the kernel on the first run (about 45 s) and loads its cache after.
    """
    if "koikoi.kernel.batch" not in sys.modules:
        print(
            "koikoi: loading the compiled simulator (numba compiles it on the first run, "
            "about 45 s; later runs load the cache)",
            file=sys.stderr,
            flush=True,
        )
    try:
        from koikoi.kernel import batch
    except ImportError:
        return None
    if batch.MAX_LEGAL != MAX_LEGAL:  # pragma: no cover - both change together
        raise RuntimeError(
            f"koikoi.kernel.batch keeps {batch.MAX_LEGAL} legal ids per environment, "
            f"VectorEnv {MAX_LEGAL}: update koikoi.envs.vector.MAX_LEGAL"
        )
    return batch


def available() -> bool:
    """Whether the batched simulator can run (numba and numpy importable)."""
    return _impl() is not None


def _need_impl() -> Any:
    impl = _impl()
    if impl is None:
        raise InvalidInputError(
            "the batched simulator needs numba and numpy: pip install numba numpy"
        )
    return impl


_MASK64: Final = (1 << 64) - 1
_GOLDEN: Final = 0x9E3779B97F4A7C15


def _streams(seed: int, n: int, stream: int) -> npt.NDArray[np.uint64]:
    """``n`` non-zero xorshift states (n x 1): splitmix64 outputs 2i+stream+1 from the seed."""
    z = seed & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64  # mix the seed itself first
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    steps = 2 * np.arange(n, dtype=np.uint64) + np.uint64(stream + 1)
    x = np.uint64(z) + steps * np.uint64(_GOLDEN)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    x[x == 0] = np.uint64(_GOLDEN)
    return x.reshape(n, 1).copy()


class Deal(NamedTuple):
    """The deal of one environment's current round."""

    deck: tuple[int, ...]
    """The shuffled deck, as :attr:`koikoi.game.engine.Match.deals`: cards 0-7 to the
    dealer, 8-15 to the other player, 16-23 to the field, 24-47 the stock (top first)."""
    dealer: int
    round_number: int
    leader: int | None = None
    """Who leads (None: the dealer)."""

    def round(self, rules: Rules) -> Round:
        """A fresh :class:`~koikoi.game.engine.Round` of this deal (events off)."""
        hands = [0, 0]
        hands[self.dealer] = sum(1 << c for c in self.deck[0:8])
        hands[1 - self.dealer] = sum(1 << c for c in self.deck[8:16])
        return Round(
            rules,
            hands=(hands[0], hands[1]),
            field=sum(1 << c for c in self.deck[16:24]),
            stock=list(self.deck[24:]),
            dealer=self.dealer,
            leader=self.leader,
            round_number=self.round_number,
            events=False,
        )


class VectorStep(NamedTuple):
    """What :meth:`VectorEnv.reset` and :meth:`VectorEnv.step` return: the env's own
    arrays (overwritten by the next call: copy what you keep)."""

    observations: npt.NDArray[np.float32]
    legal_ids: npt.NDArray[np.int16]
    legal_counts: npt.NDArray[np.int16]
    masks: npt.NDArray[np.int8] | None
    rewards: npt.NDArray[np.float32]
    dones: npt.NDArray[np.bool_]
    players: npt.NDArray[np.int8]


def _choice(name: str, value: object, allowed: range, word: str) -> int:
    """An int in ``allowed``, or ``word`` (as the code 0 or -1 chosen by the caller)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in allowed:
        return value
    raise InvalidInputError(
        f"{name} must be {word!r} or an integer from {allowed.start} to {allowed.stop - 1}, "
        f"not {value!r}"
    )


EPISODES: Final = ("round", "match")
"""What one episode of :class:`VectorEnv` is."""

_MATCH_STREAM_KEY: Final = 0x6A09E667F3BCC909
"""Mixed into the seed for the first-dealer draws (a stream apart from the deals')."""

_SAVED_ARRAYS: Final = (
    "_states",
    "_stocks",
    "_decks",
    "_extra",
    "_deal_rngs",
    "_act_rngs",
    "_match_rngs",
    "observations",
    "legal_ids",
    "legal_counts",
    "_mask_arg",
    "rewards",
    "dones",
    "players",
)
"""What :meth:`VectorEnv.save` copies: every array that the next step reads or returns."""


class VectorEnv:
    """``n`` rounds (or whole matches) of Koi-Koi stepped together in the compiled kernel.

    Args:
        n: the number of environments (1 or more).
        rules: a preset name, a house-rules file, or a :class:`~koikoi.game.rules.Rules`.
        seed: seeds the deals; the same seed gives the same rounds in each
            environment (environment ``i``'s deals do not depend on ``n``, nor on
            the actions played).
        dense_mask: also write ``masks`` (n x 2450 int8) at every step.
        dealer: round episodes: 0, 1, or ``"random"`` (each deal draws it; the default).
        round_number: round episodes: the round of the match each deal is (sets
            the month and the rounds left), 1 (the default) to
            ``rules.game.rounds``, or ``"random"``.
        episode: ``"round"`` (the default): each episode is one round;
            ``"match"``: each episode is a whole match, as
            :class:`~koikoi.game.engine.Match` plays it (see the module's docs).
        match_scores: round episodes: the match scores (player 0, player 1)
            that each round's observation shows (default: the rules'
            ``game.start_points`` each).
        sequence: also write ``sequences`` and ``sequence_lengths`` at every step
            (see the module docs): the round's events, or the match's.
        sequence_length: the rows of ``sequences`` (the latest tokens are kept), 1 to
            32767; None (the default): every event of an episode
            (:func:`koikoi.kernel.sequence.default_length`).

    Raises:
        InvalidInputError: a bad argument (the message names it and what is
            allowed), or numba is missing.
    """

    def __init__(
        self,
        n: int,
        rules: str | Rules = "nintendo",
        seed: int = 0,
        *,
        dense_mask: bool = False,
        dealer: int | str | None = None,
        round_number: int | str | None = None,
        episode: str = "round",
        match_scores: tuple[int, int] | None = None,
        sequence: bool = False,
        sequence_length: int | None = None,
    ) -> None:
        impl = _need_impl()
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise InvalidInputError(f"n (the number of environments) must be 1 or more, not {n!r}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InvalidInputError(f"seed must be an integer, not {seed!r}")
        if episode not in EPISODES:
            raise InvalidInputError(f"episode must be 'round' or 'match', not {episode!r}")
        if episode == "match":
            given = [
                name
                for name, value in (
                    ("dealer", dealer),
                    ("round_number", round_number),
                    ("match_scores", match_scores),
                )
                if value is not None
            ]
            if given:
                raise InvalidInputError(
                    f"{', '.join(given)}: only for round episodes; a match episode deals, "
                    "rotates the dealer and keeps the scores as the rules say"
                )
        if match_scores is not None and not (
            isinstance(match_scores, tuple)
            and len(match_scores) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in match_scores)
        ):
            raise InvalidInputError(
                f"match_scores must be a tuple of two integers (player 0, player 1), "
                f"not {match_scores!r}"
            )
        if sequence_length is not None and not sequence:
            raise InvalidInputError("sequence_length: only with sequence=True")
        dealer = "random" if dealer is None else dealer
        round_number = 1 if round_number is None else round_number
        self.rules = rules if isinstance(rules, Rules) else load_rules(rules)
        self.num_envs = n
        self.episode = episode
        self.rounds = self.rules.game.rounds
        self.start_points = self.rules.game.start_points
        self._dealer = (
            impl.DEALER_RANDOM
            if dealer == "random"
            else _choice("dealer", dealer, range(2), "random")
        )
        self._round_number = (
            impl.ROUND_RANDOM
            if round_number == "random"
            else _choice("round_number", round_number, range(1, self.rounds + 1), "random")
        )
        self.dense_mask = bool(dense_mask)
        from koikoi import kernel

        self._impl = impl
        self._rules_arr = kernel.encode_rules(self.rules)
        self._match_arr = impl.match_rules(
            self.rules,
            impl.EPISODE_MATCH if episode == "match" else impl.EPISODE_ROUND,
            match_scores,
        )
        self._rule_features = np.ascontiguousarray(encoding.rule_features(self.rules))
        self._states = np.zeros((n, impl.STATE_SIZE), dtype=np.int64)
        self._stocks = np.zeros((n, impl.STOCK_SIZE), dtype=np.int8)
        self._decks = np.zeros((n, 48), dtype=np.int8)
        self._extra = np.zeros((n, impl.X_SIZE), dtype=np.int64)
        self._buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
        self.observations = np.zeros((n, encoding.SIZE), dtype=np.float32)
        self.legal_ids = np.full((n, MAX_LEGAL), -1, dtype=np.int16)
        self.legal_counts = np.zeros(n, dtype=np.int16)
        self.masks: npt.NDArray[np.int8] | None = (
            np.zeros((n, NUM_ACTIONS), dtype=np.int8) if self.dense_mask else None
        )
        self._mask_arg = self.masks if self.masks is not None else np.zeros((0, 0), np.int8)
        self.rewards = np.zeros((n, 2), dtype=np.float32)
        self.dones = np.zeros(n, dtype=np.bool_)
        self.players = np.zeros(n, dtype=np.int8)
        self._actions = np.zeros(n, dtype=np.int64)
        self.sequence = bool(sequence)
        self.sequence_length = (
            _sequence_rows(sequence_length, episode, self.rules) if self.sequence else 0
        )
        self._sequence_impl: Any = None
        self._log = np.zeros((0, 0), dtype=np.int64)
        self._saved: tuple[str, ...] = _SAVED_ARRAYS
        if self.sequence:
            from koikoi.kernel import batch_sequence

            self._sequence_impl = batch_sequence
            rows, width = self.sequence_length, batch_sequence.TOKEN_WIDTH
            self.sequences = np.zeros((n, rows, width), dtype=np.int16)
            self.sequence_lengths = np.zeros(n, dtype=np.int16)
            self._sides = np.zeros(n, dtype=np.int8)
            self._prev = np.zeros_like(self._states)
            if episode == "match":
                self._log = np.zeros((n, impl.LOG_SIZE), dtype=np.int64)
            self._saved += ("sequences", "sequence_lengths", "_sides")
        self._seed(seed)
        self._ready = False

    def _seed(self, seed: int) -> None:
        self.seed = seed
        self._deal_rngs = _streams(seed, self.num_envs, 0)
        self._act_rngs = _streams(seed, self.num_envs, 1)
        self._match_rngs = _streams(seed ^ _MATCH_STREAM_KEY, self.num_envs, 0)

    def __repr__(self) -> str:
        episode = ", episode='match'" if self.episode == "match" else ""
        return (
            f"VectorEnv({self.num_envs}, {self.rules.name!r}, seed={self.seed}, "
            f"dense_mask={self.dense_mask}{episode})"
        )

    @property
    def observation_size(self) -> int:
        """Values per observation (:data:`koikoi.kernel.encoding.SIZE`)."""
        return encoding.SIZE

    @property
    def num_actions(self) -> int:
        """The size of the action space (:data:`koikoi.game.actions.NUM_ACTIONS`)."""
        return NUM_ACTIONS

    def _result(self) -> VectorStep:
        return VectorStep(
            self.observations,
            self.legal_ids,
            self.legal_counts,
            self.masks,
            self.rewards,
            self.dones,
            self.players,
        )

    def _common(self) -> tuple[Any, ...]:
        return (
            self._states,
            self._stocks,
            self._decks,
            self._extra,
            self._rules_arr,
            self._deal_rngs,
            self._match_rngs,
            self._dealer,
            self._round_number,
            self.rounds,
            self._match_arr,
            self._rule_features,
            self._buf,
            self.observations,
            self.legal_ids,
            self.legal_counts,
            self._mask_arg,
            self.players,
        )

    def reset(self, seed: int | None = None) -> VectorStep:
        """Start a new episode in every environment (re-seeded first when ``seed`` is given).

        Rewards are 0 and dones False after a reset.
        """
        if seed is not None:
            if not isinstance(seed, int) or isinstance(seed, bool):
                raise InvalidInputError(f"seed must be an integer, not {seed!r}")
            self._seed(seed)
        code = self._impl.step_all(
            *self._common(), self._actions, self.rewards, self.dones, self._log, True
        )
        if code < -1:  # pragma: no cover - a fresh deal always has a legal hand play
            raise RuntimeError(f"environment {-2 - code}: a fresh deal with no legal action")
        if self.sequence:
            self._record(self._actions, reset=True)
        self._ready = True
        return self._result()

    def step(self, actions: npt.ArrayLike) -> VectorStep:
        """Apply one action id per environment (checked); restart the episodes that end.

        Args:
            actions: ``n`` legal action ids, one per environment, for its player to act.

        Raises:
            InvalidInputError: before :meth:`reset`, or ``actions`` is not ``n`` integers.
            IllegalActionError: an action is not legal in its environment; nothing
                changed (the message names the environment, the action and the legal ones).
        """
        if not self._ready:
            raise InvalidInputError("call reset() before step()")
        arr = np.asarray(actions)
        if arr.shape != (self.num_envs,) or (arr.dtype.kind not in "iu" and arr.size):
            raise InvalidInputError(
                f"actions must be {self.num_envs} integer action ids (one per environment), "
                f"not an array of {arr.dtype} with shape {arr.shape}"
            )
        if arr.dtype != np.int64 or not arr.flags.c_contiguous:
            self._actions[:] = arr
            arr = self._actions
        if self.sequence:
            np.copyto(self._prev, self._states)
        code = self._impl.step_all(*self._common(), arr, self.rewards, self.dones, self._log, False)
        if code >= 0:
            legal = self.legal_ids[code, : self.legal_counts[code]]
            given = int(arr[code])
            what = describe_action_id(given) if 0 <= given < NUM_ACTIONS else "out of range"
            raise IllegalActionError(
                f"environment {code}: action {given} ({what}) is not legal for player "
                f"{int(self.players[code])}; legal: "
                + ", ".join(f"{int(a)} ({describe_action_id(int(a))})" for a in legal)
            )
        if code < -1:
            raise RuntimeError(f"environment {-2 - code}: a live round with no legal action")
        if self.sequence:
            self._record(arr, reset=False)
        return self._result()

    def _record(self, actions: npt.NDArray[np.int64], *, reset: bool) -> None:
        """Bring the sequences up to date after a step (``self._prev``: the states before)."""
        impl = self._sequence_impl
        played = (
            self._prev,
            self._states,
            self._stocks,
            self._extra,
            self._rules_arr,
            actions,
            self.dones,
            self.legal_counts,
            self.players,
        )
        written = (self.sequences, self.sequence_lengths, self._sides, reset)
        if self.episode == "round":
            impl.record_all(*played, *written)
            return
        code = impl.record_match(*played, self._log, *written)
        if code >= 0:  # pragma: no cover - 30-odd redeals or instant hands in one step
            raise RuntimeError(
                f"environment {code}: a step dealt more than {self._impl.LOG_DEALS} decks; "
                "its sequence lacks some of their tokens"
            )

    def sample_actions(self, out: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.int64]:
        """A uniformly random legal action id per environment (chosen in the kernel).

        Each environment has its own generator, seeded with the deals.
        """
        if not self._ready:
            raise InvalidInputError("call reset() before sample_actions()")
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        elif out.shape != (self.num_envs,) or out.dtype != np.int64 or not out.flags.c_contiguous:
            raise InvalidInputError(
                f"out must be a contiguous int64 array of shape ({self.num_envs},), "
                f"not {out.dtype} {out.shape}"
            )
        self._impl.sample_actions(self.legal_ids, self.legal_counts, self._act_rngs, out)
        return out

    def action_masks(self, out: npt.NDArray[np.int8] | None = None) -> npt.NDArray[np.int8]:
        """The dense legal-action masks (n x NUM_ACTIONS int8), from the legal ids."""
        shape = (self.num_envs, NUM_ACTIONS)
        if out is None:
            out = np.empty(shape, dtype=np.int8)
        elif out.shape != shape or out.dtype != np.int8 or not out.flags.c_contiguous:
            raise InvalidInputError(
                f"out must be a contiguous int8 array of shape {shape}, not {out.dtype} {out.shape}"
            )
        self._impl.dense_masks(self.legal_ids, self.legal_counts, out)
        return out

    # ------------------------------------------------------------ inspection

    def _index(self, i: int) -> int:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < self.num_envs:
            raise InvalidInputError(
                f"environment index must be an integer from 0 to {self.num_envs - 1}, not {i!r}"
            )
        if not self._ready:
            raise InvalidInputError("call reset() first: no round is dealt yet")
        return i

    def deal(self, i: int) -> Deal:
        """The deal of environment ``i``'s current round."""
        i = self._index(i)
        impl = self._impl
        return Deal(
            tuple(int(c) for c in self._decks[i]),
            int(self._states[i, impl.S_DEALER]),
            int(self._extra[i, impl.X_ROUND]),
            int(self._extra[i, impl.X_LEADER]),
        )

    def kernel_state(self, i: int) -> KernelState:
        """Copies of environment ``i``'s kernel arrays (as
        :func:`koikoi.kernel.encode_round` writes them)."""
        from koikoi.kernel import KernelState

        i = self._index(i)
        return KernelState(self._states[i].copy(), self._stocks[i].copy())

    def round(self, i: int) -> Round:
        """Environment ``i``'s current round as a :class:`~koikoi.game.engine.Round`
        (events off)."""
        i = self._index(i)
        round_of = self._impl.round_of
        rnd: Round = round_of(self.rules, self._states[i], self._stocks[i], self._extra[i])
        return rnd

    def view(self, i: int) -> PlayerView:
        """The view of environment ``i``'s player to act, as the observation encodes it."""
        from koikoi.game.views import view_of_round

        rnd = self.round(i)
        x = self._extra[i]
        match0 = self._impl.X_MATCH0
        return view_of_round(
            rnd,
            rnd.current,
            match_scores=(int(x[match0]), int(x[match0 + 1])),
            rounds=self.rounds,
        )

    # ---------------------------------------------------------- the matches

    @property
    def match_scores(self) -> npt.NDArray[np.int64]:
        """Each environment's match scores before its current round (n x 2, a read-only
        view): in match episodes the running scores, in round episodes the context."""
        x0 = self._impl.X_MATCH0
        return _read_only(self._extra[:, x0 : x0 + 2])

    @property
    def round_numbers(self) -> npt.NDArray[np.int64]:
        """Each environment's round of the match (n, a read-only view)."""
        return _read_only(self._extra[:, self._impl.X_ROUND])

    @property
    def final_scores(self) -> npt.NDArray[np.int64]:
        """Match episodes: each environment's last finished match's final scores (n x 2,
        a read-only view; new in the step whose ``dones`` is True)."""
        x0 = self._impl.X_FINAL0
        return _read_only(self._extra[:, x0 : x0 + 2])

    @property
    def winners(self) -> npt.NDArray[np.int64]:
        """Match episodes: each environment's last finished match's winner, 0 or 1,
        -1 for a drawn match (n, a read-only view; new in the step whose ``dones`` is True)."""
        return _read_only(self._extra[:, self._impl.X_WINNER])

    def first_dealer(self, i: int) -> dict[str, Any]:
        """How environment ``i``'s current match chose its first dealer, as
        :attr:`koikoi.game.engine.Match.first_dealer` (``draws``: the deciding draw only)."""
        i = self._index(i)
        impl = self._impl
        x = self._extra[i]
        winner = int(x[impl.X_FIRST_WINNER])
        a, b = int(x[impl.X_DRAW_A]), int(x[impl.X_DRAW_B])
        fixed = self.rules.game.dealer == "fixed"
        return {
            "method": "draw" if a >= 0 else "random",
            "winner": winner,
            "draws": [(a, b)] if a >= 0 else [],
            "dealer": 1 - winner if fixed else winner,
            "leader": winner,
        }

    def match_decks(self, i: int) -> int:
        """How many decks environment ``i``'s current match has shuffled (its
        :attr:`~koikoi.game.engine.Match.deals`, redeals included)."""
        i = self._index(i)
        return int(self._extra[i, self._impl.X_DECKS])

    # ------------------------------------------------------- save and restore

    def save(self) -> dict[str, Any]:
        """A snapshot of every environment: :meth:`restore` brings them all back to it.

        The snapshot is a dict of numpy arrays (copies) and plain values; it holds
        the rounds, the matches, the random generators (so the same actions give
        the same future) and the last step's outputs. ``pickle`` serializes it.
        """
        snapshot: dict[str, Any] = {name: getattr(self, name).copy() for name in self._saved}
        snapshot["config"] = self._config()
        snapshot["seed"] = self.seed
        snapshot["ready"] = self._ready
        return snapshot

    def restore(
        self, snapshot: dict[str, Any], *, rows: npt.NDArray[np.bool_] | None = None
    ) -> VectorStep:
        """Bring every environment back to a :meth:`save` snapshot; return its outputs.

        The output arrays stay the env's own (the snapshot is copied into them),
        and the snapshot can be restored again. With ``rows`` (bool, ``n``), only
        those environments are brought back; the others keep their state.

        Raises:
            InvalidInputError: the snapshot is not one of an env like this one (the
                message names what differs), or ``rows`` is not such a mask.
        """
        if not isinstance(snapshot, dict) or "config" not in snapshot:
            raise InvalidInputError(
                f"restore() takes a snapshot from VectorEnv.save(), not {type(snapshot).__name__}"
            )
        config = self._config()
        theirs = snapshot["config"]
        if not isinstance(theirs, dict):
            raise InvalidInputError("the snapshot is of another env: it has no config")
        differ = [k for k in config if theirs.get(k) != config[k]]
        if differ:
            what = "; ".join(
                f"{k}: snapshot {theirs.get(k)!r}, this env {config[k]!r}" for k in differ
            )
            raise InvalidInputError(f"the snapshot is of another env: {what}")
        if rows is not None and (
            not isinstance(rows, np.ndarray)
            or rows.dtype != np.bool_
            or rows.shape != (self.num_envs,)
        ):
            raise InvalidInputError(
                f"rows must be a bool array of {self.num_envs} (one per environment), not {rows!r}"
            )
        for name in self._saved:
            ours = getattr(self, name)
            saved = snapshot.get(name)
            if not isinstance(saved, np.ndarray) or saved.shape != ours.shape:
                raise InvalidInputError(
                    f"the snapshot's {name.lstrip('_')} is missing or not of shape {ours.shape}"
                )
            if rows is None:
                ours[...] = saved
            elif ours.size:  # every array has a row per environment, but an empty mask
                ours[rows] = saved[rows]
        self.seed = snapshot["seed"]
        self._ready = bool(snapshot["ready"])
        return self._result()

    def _config(self) -> dict[str, Any]:
        return {
            "n": self.num_envs,
            "rules": self.rules,
            "episode": self.episode,
            "dense_mask": self.dense_mask,
            "sequence_length": self.sequence_length,
            "dealer": self._dealer,
            "round_number": self._round_number,
            "match": [int(v) for v in self._match_arr],
        }


_MAX_SEQUENCE_ROWS: Final = int(np.iinfo(np.int16).max)
"""The most rows of ``sequences``: ``sequence_lengths`` is int16."""


def _sequence_rows(value: object, episode: str, rules: Rules) -> int:
    """The rows of the sequences: ``value``, or every event of an episode for None."""
    if value is None:
        from koikoi.kernel import sequence

        return min(sequence.default_length(episode, rules), _MAX_SEQUENCE_ROWS)
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or not 1 <= value <= _MAX_SEQUENCE_ROWS
    ):
        raise InvalidInputError(
            f"sequence_length must be an integer from 1 to {_MAX_SEQUENCE_ROWS} or None "
            f"(every event of an episode), not {value!r}"
        )
    return value


def _read_only(view: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    view.flags.writeable = False
    return view


def benchmark(
    seconds: float,
    rules: Rules,
    seed: int = 0,
    *,
    n: int = 1024,
    dense_mask: bool = False,
    episode: str = "round",
    sequence: bool = False,
) -> dict[str, Any]:
    """Environment steps per second of :class:`VectorEnv` with random legal actions.

    The actions are drawn in the kernel (:meth:`VectorEnv.sample_actions`);
    each step writes the observations, the legal ids (and with ``dense_mask``
    the masks; with ``sequence`` the sequences), the rewards and the dones of all
    ``n`` environments. The compilation (or loading the cache) and a warm-up are
    excluded. ``episode="match"`` steps whole-match episodes.

    Returns:
        ``{"steps_per_s", "steps_per_cpu_s", "steps", "episodes", "rounds", "seconds",
        "cpu_seconds", "n", "dense_mask", "episode", "sequence", "rules"}``
        (``rounds``: the rounds ended, for round episodes; None for match episodes).
    """
    if not seconds > 0:
        raise InvalidInputError(f"seconds must be positive, not {seconds}")
    env = VectorEnv(n, rules, seed, dense_mask=dense_mask, episode=episode, sequence=sequence)
    env.reset()
    actions = np.empty(n, dtype=np.int64)
    for _ in range(20):  # warm-up
        env.step(env.sample_actions(actions))
    steps = 0
    rounds = 0
    start, start_cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            env.step(env.sample_actions(actions))
            rounds += int(np.count_nonzero(env.dones))
        steps += 10 * n
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - start_cpu
    return {
        "steps_per_s": steps / elapsed,
        "steps_per_cpu_s": steps / cpu if cpu > 0 else float("inf"),
        "steps": steps,
        "episodes": rounds,
        "rounds": rounds if episode == "round" else None,
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "n": n,
        "dense_mask": dense_mask,
        "episode": episode,
        "sequence": sequence,
        "rules": rules.name,
    }

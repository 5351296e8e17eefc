"""Koi-Koi as an OpenSpiel game, registered as ``"koikoi"``.

Importing this module registers the game with ``pyspiel``::

    import pyspiel
    import koikoi.envs.openspiel  # registers "koikoi"

    game = pyspiel.load_game("koikoi", {"rules": "leaflet", "episode": "round"})

Needs ``pip install 'koikoi[rl]'``. A thin adapter over
:class:`~koikoi.game.engine.Match`: the game (static facts, parameters) is separate
from the state; observations come from the information-state encoding of
:mod:`koikoi.kernel.encoding`.

Parameters (strings):

* ``rules``: a preset name or the path of a house-rules TOML file;
* ``episode``: ``"round"`` (the first round of a match: the game ends at its
  settlement) or ``"match"``;
* ``reward``: ``"points"`` (each player's score change: the settlements'
  deltas), ``"net"`` (own change minus the opponent's: zero-sum) or ``"win"``
  (+1 / -1 / 0). Rewards come at the end (terminal reward model).

**Chance is explicit.** The first node chooses who wins the first-dealer choice
(outcomes 0 and 1, one half each, as the draw or coin of
``game.first_dealer`` gives). Each deal then takes 47 chance nodes that choose
the shuffled deck card by card, uniformly among the cards not yet placed (the
48th is forced): the dealer's hand, the other hand, the field, then the stock,
top card first, as in :attr:`Match.deals <koikoi.game.engine.Match.deals>`. A redeal
or the next round of a match deals again the same way. Chance outcomes are card
ids 0..47.

**Observations.** The information-state tensor and the observation tensor are
the same: :func:`~koikoi.kernel.encoding.encode` of the player's view; the
strings are :func:`~koikoi.kernel.encoding.info_state_string` (the view's
position text, which sums up the history: piles, declined months, koi-koi
calls). During a deal they say only what is public (round, match scores, cards
dealt), and the tensor is zeros; at the end they describe the settlement.

:meth:`KoiKoiState.resample_from_infostate` re-deals what the player cannot see
(the opponent's hand and the stock order, see :func:`~koikoi.game.views.determinize`)
into the current round's deck, uniformly among the deals consistent with the
player's information. :meth:`KoiKoiGame.state_from_position` starts a state at
a position (``episode="round"``) for analysis and search.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyspiel

from koikoi.envs._runner import (
    EPISODES,
    REWARDS,
    check_choice,
    resolve_rules,
    returns_of,
    round_points_bound,
)
from koikoi.game.actions import NUM_ACTIONS, describe_action_id
from koikoi.game.cards import CODES, card_list
from koikoi.game.engine import Match, Round
from koikoi.game.errors import IllegalActionError, InvalidInputError
from koikoi.game.positions import parse_position
from koikoi.game.rules import Rules
from koikoi.game.scoring import Settlement
from koikoi.game.views import PlayerView, determinize, view_of_round
from koikoi.kernel.encoding import SIZE, encode, info_state_string

__all__ = ["GAME_TYPE", "KoiKoiGame", "KoiKoiObserver", "KoiKoiState"]

DECK: Final = 48
MAX_DECISIONS_PER_ROUND: Final = 48
"""16 turns, each at most a hand card, a choice for the drawn card and koi-koi or stop."""
RESAMPLE_TRIES: Final = 200
_PARAMETERS: Final = {"rules": "nintendo", "episode": "round", "reward": "points"}


def _game_type(utility: Any) -> Any:
    return pyspiel.GameType(
        short_name="koikoi",
        long_name="Koi-Koi (Hanafuda)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(_PARAMETERS),
    )


GAME_TYPE: Final = _game_type(pyspiel.GameType.Utility.GENERAL_SUM)
"""The registered type; an instance states ZERO_SUM where its reward is zero-sum."""


def _filler_deck() -> tuple[int, ...]:
    """A deck whose hands and field each hold eight different months: under any
    rules it neither redeals nor deals an instant hand."""
    first = [4 * m for m in range(8)]
    second = [4 * m + 1 for m in range(4, 12)]
    field = [4 * m + 2 for m in (0, 1, 2, 3, 8, 9, 10, 11)]
    dealt = first + second + field
    return tuple(dealt + [c for c in range(DECK) if c not in dealt])


FILLER: Final = _filler_deck()
_DEALER_SEEDS: dict[Rules, tuple[int, int]] = {}


def _dealer_seeds(rules: Rules) -> tuple[int, int]:
    """Seeds whose Match gives the first-dealer choice to player 0 and to player 1.

    The deals themselves come from the chance nodes (``decks=``), so a match
    seed only decides the first dealer.
    """
    cached = _DEALER_SEEDS.get(rules)
    if cached is not None:
        return cached
    found: dict[int, int] = {}
    seed = 0
    while len(found) < 2:
        m = Match(rules, seed=seed, decks=[list(FILLER)], events=False)
        found.setdefault(int(m.first_dealer["winner"]), seed)
        seed += 1
    _DEALER_SEEDS[rules] = (found[0], found[1])
    return found[0], found[1]


@dataclass(frozen=True, slots=True)
class _Settings:
    rules: Rules
    episode: str
    reward: str

    def __deepcopy__(self, memo: dict[int, Any]) -> _Settings:
        return self


class KoiKoiGame(pyspiel.Game):  # type: ignore[misc]
    """The game: rules and options, and the static facts OpenSpiel asks for.

    Raises:
        InvalidInputError: unknown rules or a bad parameter (the message says
            what is allowed).
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        given = dict(params or {})
        unknown = sorted(set(given) - set(_PARAMETERS))
        if unknown:
            raise InvalidInputError(
                f"unknown parameter {unknown[0]!r} of koikoi: allowed {', '.join(_PARAMETERS)}"
            )
        values = {**_PARAMETERS, **given}
        rules = resolve_rules(str(values["rules"]))
        episode = check_choice("episode", values["episode"], EPISODES)
        reward = check_choice("reward", values["reward"], REWARDS)
        self.settings = _Settings(rules, episode, reward)
        rounds = 1 if episode == "round" else max(rules.game.rounds, 1)
        if reward == "win":
            bound = 1.0
        else:
            bound = float(rounds * round_points_bound(rules) * (2 if reward == "net" else 1))
        zero_sum = reward != "points" or rules.game.start_points > 0
        utility = pyspiel.GameType.Utility.ZERO_SUM if zero_sum else GAME_TYPE.utility
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=DECK,
            num_players=2,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=rounds * MAX_DECISIONS_PER_ROUND,
        )
        super().__init__(_game_type(utility), info, values)

    @property
    def rules(self) -> Rules:
        return self.settings.rules

    def new_initial_state(self) -> KoiKoiState:
        """The start of the game: a chance node (the first dealer)."""
        return KoiKoiState(self)

    def state_from_position(self, text: str) -> KoiKoiState:
        """A state at a position (:mod:`koikoi.game.positions`): a full position as it
        is, a view position with its hidden cards re-dealt at random. The game
        ends at the round's settlement.

        Raises:
            InvalidInputError: a bad position, or ``episode="match"`` (a position
                sets up a round, not the match before it).
        """
        if self.settings.episode != "round":
            raise InvalidInputError(
                "a position sets up one round: load the game with episode=round"
            )
        pos = parse_position(text, rules=self.rules)
        if pos.is_view:
            rnd = determinize(PlayerView.from_position(pos), random.Random())
        else:
            rnd = Round.from_position(pos)
        start = self.rules.game.start_points
        scores = pos.match_scores if pos.match_scores is not None else (start, start)
        state = KoiKoiState(self)
        state._core.start_at(rnd, scores, pos.rounds)
        return state

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> KoiKoiObserver:
        """The observer of both tensors and strings (the same for every observation type)."""
        if params:
            raise InvalidInputError(f"the koikoi observer takes no parameters, not {params!r}")
        return KoiKoiObserver()


class _Core:
    """The whole state of a :class:`KoiKoiState`, cheap to copy (OpenSpiel deep-copies
    a state's attributes to clone it)."""

    __slots__ = (
        "actions",
        "dealing",
        "decks",
        "first",
        "over",
        "partial",
        "returns",
        "round",
        "round_number",
        "rounds",
        "scores",
        "settings",
        "settlements",
        "standalone",
    )

    def __init__(self, settings: _Settings) -> None:
        rules = settings.rules
        self.settings = settings
        self.first: int | None = None
        self.decks: list[tuple[int, ...]] = []
        self.partial: list[int] = []
        self.actions: list[int] = []
        self.round: Round | None = None
        self.dealing = True
        self.over = False
        self.standalone = False
        self.scores = (rules.game.start_points, rules.game.start_points)
        self.settlements: tuple[Settlement, ...] = ()
        self.round_number = 1
        self.rounds = rules.game.rounds
        self.returns = (0.0, 0.0)

    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        other = _Core.__new__(_Core)
        for name in _Core.__slots__:  # shared: immutable values; the lists are copied below
            setattr(other, name, getattr(self, name))
        other.decks = self.decks[:]
        other.partial = self.partial[:]
        other.actions = self.actions[:]
        other.round = self.round.clone() if self.round is not None else None
        return other

    # ---------------------------------------------------------------- set-up

    def start_at(self, rnd: Round, scores: tuple[int, int], rounds: int) -> None:
        self.round = rnd
        self.scores = scores
        self.rounds = rounds
        self.round_number = rnd.round_number
        self.dealing = False
        self.standalone = True

    # ---------------------------------------------------------------- chance

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.first is None:
            return [(0, 0.5), (1, 0.5)]
        placed = set(self.partial)
        left = [c for c in range(DECK) if c not in placed]
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    def deal(self, outcome: int) -> None:
        if self.first is None:
            if outcome not in (0, 1):
                raise IllegalActionError(f"the first dealer is player 0 or 1, not {outcome}")
            self.first = outcome
            return
        if not 0 <= outcome < DECK or outcome in self.partial:
            raise IllegalActionError(f"card {outcome} cannot be dealt now")
        self.partial.append(outcome)
        if len(self.partial) == DECK - 1:
            self.partial.append((set(range(DECK)) - set(self.partial)).pop())
            self.decks.append(tuple(self.partial))
            self.partial = []
            self.rebuild()

    def rebuild(self) -> None:
        """Replay the match on the chance decks and set what happens next.

        The deck after the last chance deck is :data:`FILLER`: when the match
        deals it, the next deal belongs to chance, and the match as it stands
        (scores, settlements, round number) is public.
        """
        settings = self.settings
        if self.first is None:  # pragma: no cover - decks come after the first dealer
            raise RuntimeError("a deck was dealt before the first dealer")
        seed = _dealer_seeds(settings.rules)[self.first]
        decks = [list(d) for d in self.decks] + [list(FILLER)]
        m = Match(settings.rules, seed=seed, decks=decks, events=False)
        for a in self.actions:
            m.apply(a)
        self.scores = (m.scores[0], m.scores[1])
        self.settlements = tuple(m.settlements)
        self.round_number = m.round_number
        start = settings.rules.game.start_points
        if m.is_over:
            deltas = (m.scores[0] - start, m.scores[1] - start)
            self.finish(returns_of(deltas, m.winner, settings.reward))
        elif settings.episode == "round" and m.settlements:
            s = m.settlements[0]  # an instant hand settled the round at the deal
            self.finish(returns_of(s.deltas, s.winner, settings.reward))
        elif len(m.deals) > len(self.decks):
            self.dealing = True
            self.round = None
        else:
            self.dealing = False
            self.round = m.round.clone()

    def finish(self, returns: tuple[float, float]) -> None:
        self.over = True
        self.dealing = False
        self.returns = returns

    # ---------------------------------------------------------------- play

    def play(self, action: int) -> None:
        rnd = self.round
        if rnd is None:  # pragma: no cover - OpenSpiel only asks players to act in a round
            raise IllegalActionError("no round is being played")
        rnd.apply(action)
        self.actions.append(action)
        if not rnd.is_over:
            return
        settlement = rnd.settlement
        if settlement is None:  # pragma: no cover - a finished round has a settlement
            raise RuntimeError("round over without a settlement")
        if self.standalone or self.settings.episode == "round":
            self.settlements = (*self.settlements, settlement)
            d = settlement.deltas
            self.scores = (self.scores[0] + d[0], self.scores[1] + d[1])
            self.finish(returns_of(settlement.deltas, settlement.winner, self.settings.reward))
        else:
            self.rebuild()

    def view(self, player: int) -> PlayerView:
        rnd = self.round
        if rnd is None:
            raise InvalidInputError("no round is being played: nothing to view")
        return view_of_round(
            rnd,
            player,
            match_scores=self.scores,
            rounds=self.rounds,
            settlements=self.settlements,
        )

    def public_string(self) -> str:
        """What everybody knows while cards are dealt, or once the game is over."""
        settings = self.settings
        a, b = self.scores
        if self.dealing:
            return (
                f"{settings.rules.name} deal round={self.round_number}/{self.rounds} "
                f"match={a}/{b} decks={len(self.decks)} "
                f"first={'?' if self.first is None else self.first} dealt={len(self.partial)}"
            )
        last = self.settlements[-1] if self.settlements else None
        how = "none" if last is None else f"{last.reason}:{last.winner}:{last.points}"
        r0, r1 = self.returns
        return (
            f"{settings.rules.name} over round={self.round_number}/{self.rounds} "
            f"match={a}/{b} last={how} returns={r0:g}/{r1:g}"
        )

    # ------------------------------------------------------------ re-dealing

    def resampled(self, player: int, rng: random.Random) -> _Core | None:
        """A copy with the current round's hidden cards re-dealt, or None if no
        consistent deal was found."""
        rnd = self.round
        if rnd is None or self.over or self.dealing:
            return None
        view = self.view(player)
        opp = 1 - player
        for _ in range(RESAMPLE_TRIES):
            dealt = determinize(view, rng)
            other = self.__deepcopy__({})
            if self.standalone:
                other.round = dealt
                return other
            other.decks[-1] = self._redeck(dealt, opp)
            try:
                other.rebuild()
            except IllegalActionError:
                continue  # the new hand could not have played as the opponent did
            again = other.round
            if (
                again is not None
                and not other.dealing
                and not other.over
                and again.hands[opp] == dealt.hands[opp]
                and again.stock == dealt.stock
            ):
                return other
        return None

    def _redeck(self, dealt: Round, opp: int) -> tuple[int, ...]:
        """The current round's deck with the opponent's unplayed cards and the
        undrawn stock replaced by those of ``dealt``."""
        rnd = self.round
        if rnd is None:  # pragma: no cover - checked by the caller
            raise RuntimeError("no round")
        deck = list(self.decks[-1])
        first = 0 if opp == rnd.dealer else 8
        held = rnd.hands[opp]
        slots = [i for i in range(first, first + 8) if held >> deck[i] & 1]
        for i, c in zip(slots, card_list(dealt.hands[opp]), strict=True):
            deck[i] = c
        stock = dealt.stock
        for i, c in enumerate(stock, start=DECK - len(stock)):
            deck[i] = c
        return tuple(deck)


class KoiKoiState(pyspiel.State):  # type: ignore[misc]
    """A state of the game (see the module docs)."""

    def __init__(self, game: KoiKoiGame) -> None:
        super().__init__(game)
        self._core = _Core(game.settings)

    @property
    def round(self) -> Round | None:
        """The round being played (hidden information: for tests and analysis)."""
        return self._core.round

    def view(self, player: int) -> PlayerView:
        """``player``'s view of the round being played (or just finished)."""
        return self._core.view(player)

    def current_player(self) -> int:
        core = self._core
        if core.over:
            return int(pyspiel.PlayerId.TERMINAL)
        if core.dealing:
            return int(pyspiel.PlayerId.CHANCE)
        if core.round is None:  # pragma: no cover - a round is set whenever nobody deals
            raise RuntimeError("no round")
        return core.round.current

    def _legal_actions(self, player: int) -> list[int]:
        core = self._core
        if core.over or core.dealing or core.round is None or player != core.round.current:
            return []
        return sorted(core.round.legal_ids())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self._core.dealing:
            return []
        return self._core.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        core = self._core
        if core.over:
            raise IllegalActionError("the game is over: no action is legal")
        if core.dealing:
            core.deal(int(action))
        else:
            core.play(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._core.first is None:
                return f"first dealer choice won by player {action}"
            return f"deal {CODES[action]}" if 0 <= action < DECK else f"deal {action}"
        return describe_action_id(action)

    def is_terminal(self) -> bool:
        return self._core.over

    def returns(self) -> list[float]:
        return list(self._core.returns)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> KoiKoiState:
        """A state ``player_id`` cannot tell from this one: the opponent's hand and
        the stock order re-dealt uniformly among the deals consistent with what the
        player has seen (an unlikely failure to find one returns a copy)."""
        seed = int(float(probability_sampler()) * 2**53)
        other = self.clone()
        core = self._core.resampled(player_id, random.Random(seed))
        if core is not None:
            other._core = core
        return other  # type: ignore[no-any-return]

    def __str__(self) -> str:
        core = self._core
        if core.dealing or core.over or core.round is None:
            return core.public_string()
        from koikoi.game.positions import position

        return position(core.round, match_scores=core.scores, rounds=core.rounds)


class KoiKoiObserver:
    """Tensors and strings for one player (OpenSpiel's PyObserver interface)."""

    def __init__(self) -> None:
        self.tensor: npt.NDArray[np.float32] = np.zeros(SIZE, dtype=np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: KoiKoiState, player: int) -> None:
        core = state._core
        if core.dealing or core.round is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = encode(core.view(player))

    def string_from(self, state: KoiKoiState, player: int) -> str:
        core = state._core
        if core.dealing or core.over or core.round is None:
            return core.public_string()
        return info_state_string(core.view(player))


pyspiel.register_game(GAME_TYPE, KoiKoiGame)

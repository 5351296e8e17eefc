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

**Observations** follow the requested observation type (see
:class:`KoiKoiObserver`): the observation is
:func:`~koikoi.kernel.encoding.encode` of the player's view and its position
text (:func:`~koikoi.kernel.encoding.info_state_string`); the information state
(perfect recall) adds the history; public-only and private-only types give the
parts alone. During a deal they say only what is public, and the tensors are
zeros; at the end they describe the settlement.

**Copies.** ``state.clone()``, ``state.serialize()`` with
``game.deserialize_state``, ``pyspiel.serialize_game_and_state`` and ``pickle``
all work (OpenSpiel's own path for Python games: the history and a pickle of the
state's attributes, both hands and the stock order included; load only trusted
text); a state serialized under other parameters is refused.

:meth:`KoiKoiState.resample_from_infostate` re-deals what the player cannot see
(the opponent's hand and the stock order, see :func:`~koikoi.game.views.determinize`)
into the current round's deck, uniformly among the deals consistent with the
player's information. :meth:`KoiKoiGame.state_from_position` starts a state at
a position (``episode="round"``) for analysis and search.
"""

from __future__ import annotations

import dataclasses
import json
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
from koikoi.game.cards import CODES, FULL_DECK, card_list, format_cards
from koikoi.game.engine import Event, Match, Round
from koikoi.game.errors import IllegalActionError, InvalidInputError
from koikoi.game.positions import parse_position
from koikoi.game.rules import Rules, diff_rules
from koikoi.game.scoring import Settlement
from koikoi.game.views import PlayerView, determinize, view_of_round
from koikoi.kernel import sequence
from koikoi.kernel.encoding import SEGMENTS, SIZE, encode, info_state_string

__all__ = [
    "GAME_TYPE",
    "HISTORY_TURNS",
    "HISTORY_WIDTH",
    "KoiKoiGame",
    "KoiKoiObserver",
    "KoiKoiState",
    "public_encoding",
    "public_text",
    "utility_bound",
]

DECK: Final = 48
MAX_DECISIONS_PER_ROUND: Final = 48
"""16 turns, each at most a hand card, a choice for the drawn card and koi-koi or stop."""
RESAMPLE_TRIES: Final = 200
HISTORY_TURNS: Final = 16
"""Rows of the perfect-recall ``history`` tensor: a round has at most 16 turns
(eight hand cards each)."""
HISTORY_WIDTH: Final = 4 * DECK + 4
"""Columns of a ``history`` row: the card played from the hand, what it captured, the
card drawn, what the draw captured (48 each), koi-koi, stop, and the player (two)."""
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


def utility_bound(rules: Rules, episode: str, reward: str) -> tuple[float, float]:
    """The least and the most return of a player: ``min_utility`` and ``max_utility``.

    From :func:`~koikoi.envs._runner.round_points_bound` ``P``, the most a round's
    settlement gives its winner: a round's ``points`` lie in [0, P], or [-P, P]
    where the loser pays (``game.start_points`` > 0); ``net`` in [-P, P], or
    [-2P, 2P] where the loser pays; a match adds up ``game.rounds`` rounds.
    ``win`` is +1 / -1 / 0.

    >>> from koikoi.game.rules import get_rules
    >>> utility_bound(get_rules("nintendo"), "round", "net")
    (-244.0, 244.0)
    """
    if reward == "win":
        return -1.0, 1.0
    rounds = 1 if episode == "round" else max(rules.game.rounds, 1)
    most = float(rounds * round_points_bound(rules))
    pays = rules.game.start_points > 0
    if reward == "points":
        return (-most if pays else 0.0), most
    return (-2 * most, 2 * most) if pays else (-most, most)


@dataclass(frozen=True, slots=True)
class _Settings:
    rules: Rules
    episode: str
    reward: str

    def __deepcopy__(self, memo: dict[int, Any]) -> _Settings:
        return self


def _differences(theirs: _Settings, ours: _Settings) -> str:
    """What differs between the parameters of a state and of this game, in words."""
    out = []
    if theirs.rules != ours.rules:
        if theirs.rules.name != ours.rules.name:
            out.append(f"rules: {theirs.rules.name!r}, this game {ours.rules.name!r}")
        else:
            options = ", ".join(k for k, _, _ in diff_rules(theirs.rules, ours.rules)) or "name"
            out.append(f"rules {ours.rules.name!r}: the state's differ in {options}")
    for name in ("episode", "reward"):
        a, b = getattr(theirs, name), getattr(ours, name)
        if a != b:
            out.append(f"{name}: {a!r}, this game {b!r}")
    return "; ".join(out)


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
        low, high = utility_bound(rules, episode, reward)
        zero_sum = reward != "points" or rules.game.start_points > 0
        utility = pyspiel.GameType.Utility.ZERO_SUM if zero_sum else GAME_TYPE.utility
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=DECK,
            num_players=2,
            min_utility=low,
            max_utility=high,
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

    def state_from_position(
        self, text: str, *, seed: int | None = None, rng: random.Random | None = None
    ) -> KoiKoiState:
        """A state at a position (:mod:`koikoi.game.positions`): a full position as it
        is, a view position with its hidden cards (the opponent's hand, the stock
        order) re-dealt uniformly at random (:func:`~koikoi.game.views.determinize`).
        The game ends at the round's settlement.

        Args:
            text: the position.
            seed: seeds the re-deal of a view position: the same seed gives the
                same deal.
            rng: the generator of the re-deal instead (it advances); give
                ``seed`` or ``rng``, not both. Neither: an unseeded deal.

        Raises:
            InvalidInputError: a bad position, both ``seed`` and ``rng``, or
                ``episode="match"`` (a position sets up a round, not the match
                before it).
        """
        if seed is not None and rng is not None:
            raise InvalidInputError("give state_from_position a seed or an rng, not both")
        if self.settings.episode != "round":
            raise InvalidInputError(
                "a position sets up one round: load the game with episode=round"
            )
        pos = parse_position(text, rules=self.rules)
        if pos.is_view:
            gen = rng if rng is not None else random.Random(seed)
            rnd = determinize(PlayerView.from_position(pos), gen)
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
        """The observer of tensors and strings for an observation type (see
        :class:`KoiKoiObserver`); OpenSpiel asks for the information state with
        ``perfect_recall=True`` and for the observation with ``perfect_recall=False``."""
        if params:
            raise InvalidInputError(f"the koikoi observer takes no parameters, not {params!r}")
        return KoiKoiObserver(iig_obs_type, self.rules, self.settings.episode)


def _dealt_events(events: list[Event], decks: int) -> tuple[Event, ...]:
    """``events`` up to the deal of deck number ``decks + 1`` (the filler deck: not a real deal)."""
    seen = 0
    for i, e in enumerate(events):
        if e.kind == "round_start":
            seen += 1
            if seen > decks:
                return tuple(events[:i])
    return tuple(events)


class _Core:
    """The whole state of a :class:`KoiKoiState`, cheap to copy (OpenSpiel deep-copies
    a state's attributes to clone it)."""

    __slots__ = (
        "actions",
        "dealing",
        "decks",
        "first",
        "history",
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
        self.history: tuple[Event, ...] = ()
        """The episode's events before the current round's own log (``round.events``)."""
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
        other.round = self.round.clone(events=True) if self.round is not None else None
        return other

    # ---------------------------------------------------------------- set-up

    def start_at(self, rnd: Round, scores: tuple[int, int], rounds: int) -> None:
        rnd.events = []  # the history starts at the position
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
        m = Match(settings.rules, seed=seed, decks=decks, events=True)
        for a in self.actions:
            m.apply(a)
        self.history = _dealt_events(m.events, len(self.decks))
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
            self.round.events = []  # its events so far are in the history

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

    def events(self) -> tuple[Event, ...]:
        """Every event of the episode so far (hidden ones included: filter them)."""
        rnd = self.round
        if rnd is None or not rnd.events:
            return self.history
        return self.history + tuple(rnd.events)

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
                dealt.events = list(rnd.events or ())  # plays and draws: public
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

    def __setattr__(self, name: str, value: Any) -> None:
        """Checks the state that OpenSpiel's deserialization (``game.deserialize_state``,
        ``pyspiel.deserialize_game_and_state``, ``pickle``) sets on a new initial state:
        a state of other parameters is refused, not played under the ones it came with.

        Raises:
            InvalidInputError: a state of another rule set, episode or reward, or
                something that is not a state of this game.
        """
        if name == "_core" and "_core" in self.__dict__:
            ours = self.__dict__["_core"].settings
            if not isinstance(value, _Core):
                raise InvalidInputError(
                    f"the serialized state is not a koikoi state: {type(value).__name__}"
                )
            if value.settings != ours:
                raise InvalidInputError(
                    f"the serialized state is of another game: {_differences(value.settings, ours)}"
                )
        super().__setattr__(name, value)

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


_PRIVATE = pyspiel.PrivateInfoType
_HAND: Final = SEGMENTS["hand"]
_UNSEEN: Final = SEGMENTS["unseen"]


def _check_player(state: KoiKoiState, player: int) -> None:
    """OpenSpiel's check: an observation is of player 0 or 1, never of chance or the end."""
    if not 0 <= int(player) < 2:
        raise pyspiel.SpielError(
            f"an observation is of player 0 or 1, not {int(player)} "
            f"(chance is {int(pyspiel.PlayerId.CHANCE)}, "
            f"the end {int(pyspiel.PlayerId.TERMINAL)}); "
            f"the player to act is {state.current_player()}"
        )


def _cards(mask: int) -> str:
    return ",".join(format_cards(mask).split()) or "-"


def _months(mask: int) -> str:
    return ",".join(str(m + 1) for m in range(12) if mask >> (4 * m) & 1) or "-"


def public_text(view: PlayerView) -> str:
    """What both players see of a round, in the same words for both (seat 0 first)."""
    a, b = view.match_scores
    last = "-" if view.last_improver is None else str(view.last_improver)
    drawn = CODES[view.drawn] if view.drawn >= 0 else "-"
    return (
        f"{view.rules.name} round={view.round_number}/{view.rounds} month={view.month} "
        f"dealer={view.dealer} leader={view.leader} current={view.current} "
        f"phase={view.phase.name.lower()} field={_cards(view.field)} "
        f"piles={_cards(view.piles[0])}/{_cards(view.piles[1])} "
        f"hands={view.hand_counts[0]}/{view.hand_counts[1]} stock={view.stock_count} "
        f"drawn={drawn} yaku={view.round_scores[0]}/{view.round_scores[1]} "
        f"koikoi={view.koikoi_calls[0]}/{view.koikoi_calls[1]} "
        f"called={view.called_scores[0]}/{view.called_scores[1]} last={last} "
        f"declined={_months(view.declined[0])}/{_months(view.declined[1])} match={a}/{b}"
    )


def public_encoding(view: PlayerView) -> npt.NDArray[np.float32]:
    """:func:`~koikoi.kernel.encoding.encode` of seat 0's ``view`` with its private part
    removed: the hand plane zeroed, and ``unseen`` every card that is not face up (both
    hands and the stock). The same for both players."""
    x = encode(view)
    x[_HAND.offset : _HAND.offset + _HAND.size] = 0.0
    drawn = (1 << view.drawn) if view.drawn >= 0 else 0
    hidden = FULL_DECK & ~(view.field | view.piles[0] | view.piles[1] | drawn)
    x[_UNSEEN.offset : _UNSEEN.offset + _UNSEEN.size] = [hidden >> c & 1 for c in range(DECK)]
    return x


def _event_text(e: Event) -> str:
    if e.kind == "first_dealer":  # its draws are the stand-in seed's, not chance's
        return json.dumps({"type": e.kind, "player": e.player}, separators=(",", ":"))
    return json.dumps(e.to_dict(), separators=(",", ":"))


def _write_history(events: tuple[Event, ...], out: npt.NDArray[np.float32]) -> None:
    """The current round's turns into ``out`` (:data:`HISTORY_TURNS` x :data:`HISTORY_WIDTH`)."""
    start = 0
    for i, e in enumerate(events):
        if e.kind == "round_start":
            start = i + 1
    turn = -1
    for e in events[start:]:
        if e.kind == "play":
            turn += 1
            if turn >= HISTORY_TURNS:  # pragma: no cover - a round has at most 16 turns
                break
            out[turn, 4 * DECK + 2 + int(e.player or 0)] = 1.0
        if turn < 0:
            continue
        row = out[turn]
        if e.kind == "play" and e.card is not None:
            row[e.card] = 1.0
            _bits(e.cards, row[DECK : 2 * DECK])
        elif e.kind in ("draw", "take") and e.card is not None:
            row[2 * DECK + e.card] = 1.0
            _bits(e.cards, row[3 * DECK : 4 * DECK])
        elif e.kind == "koikoi":
            row[4 * DECK] = 1.0
        elif e.kind == "stop":
            row[4 * DECK + 1] = 1.0


def _bits(mask: int, out: npt.NDArray[np.float32]) -> None:
    for c in card_list(mask):
        out[c] = 1.0


class KoiKoiObserver:
    """Tensors and strings for one player (OpenSpiel's PyObserver interface), for an
    observation type (``pyspiel.IIGObservationType``; ``None``: OpenSpiel's default
    observation, public and the player's own private information, no history).

    The tensor is the concatenation of these pieces (``dict`` has each, reshaped):

    * ``observation`` (public and single-player private information):
      :func:`~koikoi.kernel.encoding.encode` of the player's view;
    * ``public`` (public information without the player's own):
      :func:`public_encoding`, the same for both players;
    * ``private_hand`` (single-player private information only): the player's hand,
      48 values; ``private_hands`` (all players' private information): both hands,
      2 x 48;
    * ``history`` (perfect recall, with public information): the current round's
      turns in order, :data:`HISTORY_TURNS` x :data:`HISTORY_WIDTH`; earlier rounds
      are summed up in the match part;
    * ``sequence`` (perfect recall, with public information): the sequence
      observation of :mod:`koikoi.kernel.sequence`, every public event of the
      episode (the round, or the match with ``episode="match"``) as tokens, ``length``
      x :data:`~koikoi.kernel.sequence.TOKEN_WIDTH` (the token values as floats, then
      zeros; ``length`` from :func:`~koikoi.kernel.sequence.default_length`), from the
      player's side, or from seat 0's when the type holds no private information of
      the player (so both players get the same).

    The string joins, with `` | ``, the view's position text (public and own
    private information) or :func:`public_text` (public only), the hands the type
    lets the player see, and with perfect recall ``history=`` every event of the
    episode the type lets the player see, in order (JSON, as in records). While
    cards are dealt and once the game is over, the public part is the game's summary
    line and the tensor pieces other than the history are zeros.

    Raises:
        pyspiel.SpielError: for a player that is not 0 or 1 (chance, the end), as
            OpenSpiel's own games do.
    """

    def __init__(
        self, iig_obs_type: Any = None, rules: Rules | None = None, episode: str = "round"
    ) -> None:
        kind = (
            iig_obs_type
            if iig_obs_type is not None
            else pyspiel.IIGObservationType(perfect_recall=False)
        )
        self.public = bool(kind.public_info)
        self.private = kind.private_info
        self.perfect_recall = bool(kind.perfect_recall)
        shapes: list[tuple[str, tuple[int, ...]]] = []
        if self.public:
            own = self.private == _PRIVATE.SINGLE_PLAYER
            shapes.append(("observation" if own else "public", (SIZE,)))
        if self.private == _PRIVATE.ALL_PLAYERS:
            shapes.append(("private_hands", (2, DECK)))
        elif self.private == _PRIVATE.SINGLE_PLAYER and not self.public:
            shapes.append(("private_hand", (DECK,)))
        self.scope = episode
        self.sequence_rows = sequence.default_length(episode, rules or Rules())
        if self.perfect_recall and self.public:
            shapes.append(("history", (HISTORY_TURNS, HISTORY_WIDTH)))
            shapes.append(("sequence", (self.sequence_rows, sequence.TOKEN_WIDTH)))
        total = sum(int(np.prod(shape)) for _, shape in shapes)
        self.tensor: npt.NDArray[np.float32] = np.zeros(total, dtype=np.float32)
        self.dict: dict[str, npt.NDArray[np.float32]] = {}
        offset = 0
        for name, shape in shapes:
            size = int(np.prod(shape))
            self.dict[name] = self.tensor[offset : offset + size].reshape(shape)
            offset += size

    def _visible(self, e: Event, player: int) -> bool:
        if e.private_to is None:
            return self.public
        if self.private == _PRIVATE.ALL_PLAYERS:
            return e.private_to in (0, 1)
        return self.private == _PRIVATE.SINGLE_PLAYER and e.private_to == player

    def set_from(self, state: KoiKoiState, player: int) -> None:
        _check_player(state, player)
        core = state._core
        self.tensor.fill(0.0)
        if core.dealing or core.round is None:
            return
        pieces = self.dict
        if "observation" in pieces:
            pieces["observation"][:] = encode(core.view(player))
        if "public" in pieces:
            pieces["public"][:] = public_encoding(core.view(0))
        rnd = core.round
        if "private_hands" in pieces:
            for p in (0, 1):
                _bits(rnd.hands[p], pieces["private_hands"][p])
        if "private_hand" in pieces:
            _bits(rnd.hands[player], pieces["private_hand"])
        if "history" in pieces:
            _write_history(core.events(), pieces["history"])
        if "sequence" in pieces:
            side = player if self.private == _PRIVATE.SINGLE_PLAYER else 0
            view = dataclasses.replace(core.view(side), history=core.events())
            tokens, _ = sequence.encode_sequence(view, length=self.sequence_rows, scope=self.scope)
            pieces["sequence"][:] = tokens

    def string_from(self, state: KoiKoiState, player: int) -> str:
        _check_player(state, player)
        core = state._core
        parts: list[str] = []
        if core.dealing or core.over or core.round is None:
            if self.public:
                parts.append(core.public_string())
        else:
            rnd = core.round
            if self.public and self.private == _PRIVATE.SINGLE_PLAYER:
                parts.append(info_state_string(core.view(player)))
            else:
                if self.public:
                    parts.append(public_text(core.view(0)))
                if self.private == _PRIVATE.ALL_PLAYERS:
                    parts.append(f"hands={_cards(rnd.hands[0])}/{_cards(rnd.hands[1])}")
                elif self.private == _PRIVATE.SINGLE_PLAYER:
                    parts.append(f"hand={_cards(rnd.hands[player])}")
        if self.perfect_recall:
            seen = [_event_text(e) for e in core.events() if self._visible(e, player)]
            parts.append("history=" + " ".join(seen))
        return " | ".join(parts)


pyspiel.register_game(GAME_TYPE, KoiKoiGame)

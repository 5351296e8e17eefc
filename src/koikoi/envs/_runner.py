"""What the RL adapters share: option checks, observation bounds, and a running game.

Private: :mod:`koikoi.envs.pettingzoo`, :mod:`koikoi.envs.gymnasium` and
:mod:`koikoi.envs.openspiel` are the public faces. Needs numpy.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from koikoi.game.cards import FULL_DECK
from koikoi.game.engine import Match, Round
from koikoi.game.errors import InvalidInputError, KoiKoiError
from koikoi.game.positions import Position, parse_position
from koikoi.game.rules import RANGES, Rules, load_rules
from koikoi.game.scoring import Settlement, shared_scorer
from koikoi.game.views import PlayerView, determinize, view_of, view_of_round
from koikoi.kernel import sequence
from koikoi.kernel.encoding import FEATURES, MATCH_SCALE, ROUND_SCALE, SIZE, rule_features

__all__ = [
    "EPISODES",
    "REWARDS",
    "Runner",
    "RunnerOptions",
    "check_choice",
    "check_snapshot",
    "observation_bounds",
    "resolve_rules",
    "returns_of",
    "rng_from_state",
    "rng_state",
    "round_points_bound",
    "sequence_length_option",
    "sequence_parts",
    "sequence_spaces",
]

EPISODES: Final = ("round", "match")
"""``round``: an episode is one round (deal); ``match``: the whole match."""
REWARDS: Final = ("points", "net", "win")
"""``points``: each player's score change (the settlement's deltas); ``net``: own
change minus the opponent's (zero-sum); ``win``: +1 / -1 / 0."""
_SEED_BITS: Final = 63
SNAPSHOT_VERSION: Final = 1
"""The version of the snapshots of ``save()``: a snapshot of another version is refused."""


def resolve_rules(rules: str | Path | Rules) -> Rules:
    """A :class:`Rules`, a preset name, or the path of a house-rules TOML file, as Rules.

    Raises:
        InvalidInputError: an unknown preset, a file that cannot be read or is not
            valid house rules, or a value of another type (the message says which).
    """
    if isinstance(rules, Rules):
        return rules
    if not isinstance(rules, str | Path):
        raise InvalidInputError(
            f"rules must be a preset name, a house-rules .toml path or a Rules, "
            f"not {type(rules).__name__} {rules!r}"
        )
    try:
        return load_rules(rules)
    except KoiKoiError as exc:
        raise InvalidInputError(str(exc)) from exc


def check_choice(option: str, value: object, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else an error naming the option and the choices."""
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise InvalidInputError(f"{option} must be one of {choices}, not {value!r}")
    return value


MAX_KOIKOI_CALLS: Final = 8
"""A player has eight turns in a round and is offered koi-koi at most once a turn."""


def yaku_total_bound(rules: Rules) -> int:
    """The largest yaku total one capture pile can reach in a round under ``rules``.

    A yaku total never falls when a card joins the pile (each yaku counts cards
    it holds; a higher yaku that absorbs a lower one is worth more), so the pile
    of all 48 cards, in the round's best month and with koi-koi called (for
    ``yaku.viewing_after_koikoi``), bounds every pile. A test checks the
    monotony on random piles.
    """
    scorer = shared_scorer(rules)
    return max(
        scorer.total(FULL_DECK, month, called) for month in range(1, 13) for called in (False, True)
    )


def round_points_bound(rules: Rules) -> int:
    """The most points one round's settlement can give its winner under ``rules``.

    The winner's points are its yaku total (at most :func:`yaku_total_bound`)
    times the multipliers, which never fall as the total rises: x2 at seven or
    more (``koikoi.seven_double``), then the koi-koi bonus (x2 under
    ``opponent_x2`` and ``challenge_x2``; under ``ladder`` +1 to +3 for one to
    three calls, then x(calls - 2): a player is offered koi-koi at most once a
    turn, :data:`MAX_KOIKOI_CALLS` times, one fewer without
    ``koikoi.offer_on_last_card``; a round settled by a stop used one offer to
    stop, unless an exhausted round settles as if stopped; and at most the
    rules' ``koikoi.limit``). Flat awards (instant hands, oya-ken, the
    dealer's point) count as they are. The loser loses as much when a match
    starts with points (``game.start_points`` > 0), else nothing.
    """
    base = yaku_total_bound(rules)
    kk = rules.koikoi
    points = base * 2 if kk.seven_double and base >= 7 else base
    if kk.bonus in ("opponent_x2", "challenge_x2"):
        points *= 2
    elif kk.bonus == "ladder":
        # Offered at most once a turn (not on the last card unless the rules say
        # so); a round that ends by a stop used one offer to stop.
        offers = MAX_KOIKOI_CALLS if kk.offer_on_last_card else MAX_KOIKOI_CALLS - 1
        calls = offers if rules.end.exhausted in ("highest", "last_yaku") else offers - 1
        calls = min(calls, kk.limit) if kk.limit else calls
        points = max(points + min(calls, 3), points * (calls - 2))
    flat = max(rules.instant.teshi, rules.instant.kuttsuki, rules.end.oya_ken, 1)
    return max(points, flat)


def match_points_bound(rules: Rules) -> int:
    """A generous bound of the absolute value of a match score."""
    return rules.game.start_points + max(rules.game.rounds, 1) * round_points_bound(rules)


def observation_bounds(rules: Rules) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Lower and upper bounds of every value of the encoding under ``rules``.

    Card planes, one-hots and counts lie in [0, 1]; scores have generous finite
    bounds derived from the rules' yaku points; the rules part is the rules' own
    values (widened to [0, 1] so no bound is a single point).
    """
    low = np.zeros(SIZE, dtype=np.float32)
    high = np.ones(SIZE, dtype=np.float32)
    yaku = yaku_total_bound(rules) / ROUND_SCALE
    match = match_points_bound(rules) / MATCH_SCALE
    most_rounds = RANGES["game.rounds"][1] / 12.0
    rule_values = rule_features(rules)
    first_rule = SIZE - len(rule_values)
    for i, name in enumerate(FEATURES):
        if name in ("own_score", "opponent_score", "own_called", "opponent_called"):
            high[i] = yaku
        elif name in ("match:own", "match:opponent"):
            low[i], high[i] = -match, match
        elif name == "match:lead":
            low[i], high[i] = -2 * match, 2 * match
        elif name in ("match:rounds_left", "match:rounds"):
            high[i] = most_rounds
        elif i >= first_rule:
            value = float(rule_values[i - first_rule])
            low[i], high[i] = min(0.0, value), max(1.0, value)
    return low, high


def sequence_length_option(value: object, episode: str, rules: Rules) -> int:
    """The rows of a sequence observation: ``value``, or ``None`` for every event of an
    episode (:func:`koikoi.kernel.sequence.default_length`).

    Raises:
        InvalidInputError: a value that is not a positive integer or None.
    """
    if value is None:
        return sequence.default_length(episode, rules)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInputError(
            f"sequence_length must be a positive integer or None (every event), not {value!r}"
        )
    return value


def sequence_spaces(rules: Rules, length: int) -> dict[str, Any]:
    """The Gymnasium spaces of :func:`sequence_parts` under ``rules``."""
    import gymnasium

    high = np.zeros(sequence.TOKEN_WIDTH, dtype=np.int16)
    high[sequence.F_KIND] = len(sequence.KINDS) - 1
    high[sequence.F_WHO] = sequence.WHO_NOBODY
    high[sequence.F_CARD : sequence.F_VALUE] = sequence.NO_CARD
    value = max(round_points_bound(rules), yaku_total_bound(rules), MAX_KOIKOI_CALLS, 48)
    high[sequence.F_VALUE] = min(value, np.iinfo(np.int16).max)
    high[sequence.F_ROUND] = RANGES["game.rounds"][1]
    high[sequence.F_MONTH] = 12
    tokens = np.broadcast_to(high, (length, sequence.TOKEN_WIDTH)).copy()
    return {
        "sequence": gymnasium.spaces.Box(np.zeros_like(tokens), tokens, dtype=np.int16),
        "sequence_length": gymnasium.spaces.Discrete(length + 1),
        "hand": gymnasium.spaces.Box(0, 1, (48,), dtype=np.int8),
    }


def sequence_parts(view: PlayerView, length: int, scope: str) -> dict[str, Any]:
    """The sequence observation's parts of ``view`` (its history in ``scope``):
    ``sequence`` (int16, ``length`` x :data:`~koikoi.kernel.sequence.TOKEN_WIDTH`),
    ``sequence_length`` (the tokens in it) and ``hand`` (the private part)."""
    tokens, count = sequence.encode_sequence(view, length=length, scope=scope)
    hand = sequence.hand_plane(view)
    return {"sequence": tokens, "sequence_length": np.int64(count), "hand": hand}


def returns_of(deltas: tuple[int, int], winner: int | None, reward: str) -> tuple[float, float]:
    """Both players' rewards for score changes ``deltas`` and ``winner`` under ``reward``."""
    if reward == "points":
        return float(deltas[0]), float(deltas[1])
    if reward == "net":
        d = float(deltas[0] - deltas[1])
        return d, -d
    if winner is None:
        return 0.0, 0.0
    return (1.0, -1.0) if winner == 0 else (-1.0, 1.0)


def rng_state(rng: random.Random) -> list[Any]:
    """The state of ``rng`` as plain JSON-able data (:func:`rng_from_state` reads it)."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def rng_from_state(value: object, what: str) -> random.Random:
    """A generator in the state :func:`rng_state` gave.

    Raises:
        InvalidInputError: ``value`` is not such a state (the message names ``what``).
    """
    rng = random.Random()
    try:
        if not isinstance(value, list | tuple) or len(value) != 3:
            raise ValueError("not a list of three")
        version, internal, gauss = value
        if not isinstance(internal, list | tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in internal
        ):
            raise ValueError("its second part is not a list of integers")
        rng.setstate((version, tuple(internal), None if gauss is None else float(gauss)))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"the snapshot's {what} is not the state of a random generator ({exc})"
        ) from None
    return rng


def _difference(key: str, theirs: object, ours: object) -> str:
    if key == "rules" and isinstance(theirs, dict) and isinstance(ours, dict):
        if theirs.get("name") != ours.get("name"):
            return f"rules: snapshot {theirs.get('name')!r}, this env {ours.get('name')!r}"
        options = [
            f"{section}.{k}"
            for section, values in ours.items()
            if isinstance(values, dict)
            for k in values
            if not isinstance(theirs.get(section), dict) or theirs[section].get(k) != values[k]
        ]
        return (
            f"rules {ours.get('name')!r}: the snapshot's differ in {', '.join(options) or 'name'}"
        )
    return f"{key}: snapshot {theirs!r}, this env {ours!r}"


def check_snapshot(snapshot: object, kind: str, config: dict[str, Any]) -> dict[str, Any]:
    """``snapshot`` if it is a ``save()`` snapshot of ``kind`` made with ``config``.

    Raises:
        InvalidInputError: another kind or version, a missing part, or another
            configuration (the message names each option that differs).
    """
    if not isinstance(snapshot, dict) or "format" not in snapshot:
        raise InvalidInputError(
            f"restore() takes a snapshot from {kind}'s save(), not {type(snapshot).__name__}"
        )
    if snapshot["format"] != kind:
        raise InvalidInputError(
            f"the snapshot is of {snapshot['format']!r}, not of {kind!r}: restore it there"
        )
    if snapshot.get("version") != SNAPSHOT_VERSION:
        raise InvalidInputError(
            f"the snapshot is of version {snapshot.get('version')!r}: this koikoi restores "
            f"version {SNAPSHOT_VERSION}"
        )
    theirs = snapshot.get("config")
    if not isinstance(theirs, dict):
        raise InvalidInputError("the snapshot has no config: it is damaged")
    differ = [_difference(k, theirs.get(k), v) for k, v in config.items() if theirs.get(k) != v]
    if differ:
        raise InvalidInputError(f"the snapshot is of another env: {'; '.join(differ)}")
    return snapshot


def _part(snapshot: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = snapshot.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InvalidInputError(f"the snapshot's {key} is missing or not {what}: it is damaged")
    return value


def _action_ids(snapshot: dict[str, Any]) -> list[int]:
    actions = snapshot.get("actions")
    if not isinstance(actions, list) or not all(
        isinstance(a, int) and not isinstance(a, bool) for a in actions
    ):
        raise InvalidInputError(
            "the snapshot's actions are missing or not a list of action ids: it is damaged"
        )
    return actions


class Runner:
    """A running game for the step-by-step adapters (PettingZoo, Gymnasium).

    Holds a :class:`Match` (or a lone :class:`Round` set up from a position) and
    knows where an episode ends. With ``episode="round"``, an unseeded
    :meth:`start` after a finished round goes on with the next round of the same
    match, so episodes cover every month and match situation; a new match starts
    when the match is over, when the last episode was left unfinished, or with a
    seed. Rounds settled at the deal (instant hands) have no decision and are not
    episodes.
    """

    def __init__(self, rules: Rules, episode: str, reward: str, *, history: bool = False) -> None:
        self.rules = rules
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward = check_choice("reward", reward, REWARDS)
        self.history = history
        """Whether the game keeps its events, for :meth:`view` ``with_history``."""
        self.seeder = random.Random()
        self.match: Match | None = None
        self.round: Round | None = None
        self.done = False
        self.new_match = False
        """Whether the last :meth:`start` began a new match (or a position)."""
        self._scores = (0, 0)
        self._rounds = rules.game.rounds
        self._max_score = match_points_bound(rules)
        self._start = ""
        """A round set up from a position: its full position text at the start."""
        self._actions: list[int] = []
        """A round set up from a position: the actions since the start."""

    # ------------------------------------------------------------ episodes

    def start(self, seed: int | None = None, position: str | None = None) -> None:
        """Begin an episode: a new match (``seed`` as for :class:`Match`), the next
        round of the running match, or a round set up from ``position``.

        Raises:
            InvalidInputError: a bad seed or position, or a position with
                ``episode="match"``.
        """
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
        ):
            raise InvalidInputError(f"seed must be a non-negative integer, not {seed!r}")
        seeder = random.Random(int(seed)) if seed is not None else self.seeder
        if position is not None:
            self._start_position(position, seeder)  # a bad position changes nothing
            self.seeder = seeder
            self.done = False
            return
        self.seeder = seeder
        self.done = False
        match = self.match
        if seed is None and self.episode == "round" and match is not None:
            finished = self.round is not None and self.round.is_over
            if finished and not match.is_over:
                self.round = match.round
                self.new_match = False
                return
        game_seed = int(seed) if seed is not None else self.seeder.getrandbits(_SEED_BITS)
        self.match = Match(self.rules, seed=game_seed, events=self.history)
        self.round = self.match.round
        self.new_match = True
        if self.match.is_over:  # every round settled at the deal: practically never
            self.start()

    def _start_position(self, text: str, seeder: random.Random) -> None:
        if not isinstance(text, str):
            raise InvalidInputError(f"position must be a position text, not {text!r}")
        if self.episode != "round":
            raise InvalidInputError(
                "a position sets up one round: use episode='round' to start from it"
            )
        pos = parse_position(text, rules=self.rules)  # its rules must be these
        scores = self._match_scores(pos)
        rnd = (
            determinize(PlayerView.from_position(pos), seeder)
            if pos.is_view
            else Round.from_position(pos)
        )
        if self.history:
            rnd.events = []  # the history starts at the position
        self.match = None
        self.round = rnd
        self._scores = scores
        self._rounds = pos.rounds
        self._start = rnd.to_position(match_scores=scores, rounds=pos.rounds).text()
        self._actions = []
        self.new_match = True

    def _match_scores(self, pos: Position) -> tuple[int, int]:
        """The match scores of a position (the rules' start points if it gives none).

        Raises:
            InvalidInputError: scores no match under these rules can reach.
        """
        start = self.rules.game.start_points
        scores = pos.match_scores if pos.match_scores is not None else (start, start)
        if max(abs(scores[0]), abs(scores[1])) > self._max_score:
            raise InvalidInputError(
                f"match scores {scores[0]}/{scores[1]} are beyond what a match under "
                f"{self.rules.name!r} can reach (±{self._max_score})"
            )
        return scores

    # -------------------------------------------------------------- playing

    @property
    def current(self) -> int | None:
        """The player to act, or None when the episode is over."""
        if self.done or self.round is None:
            return None
        return self.round.current

    def legal_ids(self) -> list[int]:
        if self.done or self.round is None:
            return []
        return self.round.legal_ids()

    def act(self, action_id: int) -> None:
        """Apply a legal action (checked: raises IllegalActionError, changing nothing)."""
        rnd = self.round
        if self.done or rnd is None:
            raise InvalidInputError("the episode is over: start a new one")
        if self.match is not None:
            self.match.apply(action_id)
            if rnd.is_over:
                if self.episode == "round" or self.match.is_over:
                    self.done = True
                else:
                    self.round = self.match.round
        else:
            rnd.apply(action_id)
            self._actions.append(action_id)
            self.done = rnd.is_over

    # ------------------------------------------------------ save and restore

    def save(self) -> dict[str, Any]:
        """The game as plain JSON-able data, hidden cards included (:meth:`restore`).

        A match is its seed and its actions; a round set up from a position, its
        full position at the start and its actions since. The seeder's state
        comes along, so the next unseeded :meth:`start` deals the same.

        Raises:
            InvalidInputError: no episode has started.
        """
        rnd = self.round
        if rnd is None:
            raise InvalidInputError("no episode has started: call reset() before save()")
        out: dict[str, Any] = {
            "seeder": rng_state(self.seeder),
            "done": self.done,
            "new_match": self.new_match,
        }
        match = self.match
        if match is not None:
            out["match"] = {
                "seed": match.seed,
                "actions": list(match.actions),
                "finished_round": rnd is not match.round,
            }
        else:
            out["position"] = {"start": self._start, "actions": list(self._actions)}
        return out

    def restore(self, snapshot: object) -> None:
        """Bring the game back to a :meth:`save` snapshot (replaying its actions).

        Raises:
            InvalidInputError: a damaged snapshot (the message says what is wrong);
                the game is then unchanged.
        """
        if not isinstance(snapshot, dict):
            raise InvalidInputError("the snapshot's game is missing: it is damaged")
        seeder = rng_from_state(snapshot.get("seeder"), "seeder")
        done = _part(snapshot, "done", bool, "true or false")
        new_match = _part(snapshot, "new_match", bool, "true or false")
        match: Match | None = None
        if isinstance(snapshot.get("match"), dict):
            part = snapshot["match"]
            seed = _part(part, "seed", int, "a match seed")
            finished = _part(part, "finished_round", bool, "true or false")
            actions = _action_ids(part)
            try:
                match = Match(self.rules, seed=seed, events=self.history)
                rnd = match.round
                for a in actions:
                    rnd = match.round
                    match.apply(a)
            except KoiKoiError as exc:
                raise InvalidInputError(
                    f"the snapshot's match does not replay ({exc}): it is damaged"
                ) from None
            if not finished:
                rnd = match.round
            scores, rounds, start = self._scores, self._rounds, ""
        elif isinstance(snapshot.get("position"), dict):
            part = snapshot["position"]
            start = _part(part, "start", str, "a position text")
            actions = _action_ids(part)
            try:
                pos = parse_position(start, rules=self.rules)
                scores = self._match_scores(pos)
                rnd = Round.from_position(pos)
                if self.history:
                    rnd.events = []
                for a in actions:
                    rnd.apply(a)
            except KoiKoiError as exc:
                raise InvalidInputError(
                    f"the snapshot's position does not replay ({exc}): it is damaged"
                ) from None
            rounds = pos.rounds
        else:
            raise InvalidInputError("the snapshot holds neither a match nor a position: damaged")
        if done != rnd.is_over or (
            done and self.episode == "match" and match is not None and not match.is_over
        ):
            raise InvalidInputError(
                f"the snapshot says the episode is {'over' if done else 'on'}, but its game "
                "does not: it is damaged"
            )
        self.seeder = seeder
        self.done = done
        self.new_match = new_match
        self.match = match
        self.round = rnd
        self._scores = scores
        self._rounds = rounds
        self._start = start
        self._actions = list(actions) if match is None else []

    # ---------------------------------------------------------- what is seen

    def view(self, player: int, *, with_history: bool = False) -> PlayerView:
        """``player``'s view; at the end of the episode, of the finished round or match.

        ``with_history`` (for a runner made with ``history=True``) fills the view's
        history with the events ``player`` may see: the match's, or those of a round
        set up from a position since the position.
        """
        rnd = self.round
        if rnd is None:
            raise InvalidInputError("no episode has started: call reset() first")
        match = self.match
        if match is not None and (self.episode == "match" or not rnd.is_over):
            return view_of(match, player, with_history=with_history)
        if match is not None:
            scores = (match.scores[0], match.scores[1])
            return view_of_round(
                rnd,
                player,
                match_scores=scores,
                rounds=self.rules.game.rounds,
                settlements=tuple(match.settlements),
                history=tuple(match.events) if with_history else (),
            )
        return view_of_round(
            rnd,
            player,
            match_scores=self.match_scores,
            rounds=self._rounds,
            history=tuple(rnd.events or ()) if with_history else (),
        )

    @property
    def match_scores(self) -> tuple[int, int]:
        """The match scores now (after the settlement when the round is over)."""
        if self.match is not None:
            return self.match.scores[0], self.match.scores[1]
        s = self.round.settlement if self.round is not None else None
        if s is None:
            return self._scores
        return self._scores[0] + s.deltas[0], self._scores[1] + s.deltas[1]

    def settlement(self) -> Settlement | None:
        """The settlement of the episode's round (round episodes), once over."""
        return self.round.settlement if self.round is not None else None

    def deltas(self) -> tuple[int, int]:
        """Both players' score changes over the episode (0, 0 until it is over)."""
        if not self.done:
            return 0, 0
        if self.episode == "match" and self.match is not None:
            start = self.rules.game.start_points
            return self.match.scores[0] - start, self.match.scores[1] - start
        s = self.settlement()
        return s.deltas if s is not None else (0, 0)

    def returns(self) -> tuple[float, float]:
        """Both players' rewards for the episode (0 until it is over)."""
        if not self.done:
            return 0.0, 0.0
        if self.episode == "match" and self.match is not None:
            return returns_of(self.deltas(), self.match.winner, self.reward)
        s = self.settlement()
        return returns_of(self.deltas(), s.winner if s is not None else None, self.reward)

    def text(self) -> str:
        """A human-readable line: the full position, or how the episode ended."""
        from koikoi.game.positions import position

        rnd = self.round
        if rnd is None:
            return "no episode has started"
        if not self.done:
            if self.match is not None:
                return position(self.match)
            return position(rnd, match_scores=self._scores, rounds=self._rounds)
        a, b = self.match_scores
        if self.episode == "match" and self.match is not None:
            who = self.match.winner
            result = "a draw" if who is None else f"won by player {who}"
            return f"match over, {result}: {a}/{b}"
        s = self.settlement()
        explained = s.explain() if s is not None else "no settlement"
        return f"{explained}\nmatch {a}/{b}"

    def render(self, render_mode: str | None, warn: Callable[[str], object]) -> str | None:
        """What an environment's ``render()`` gives in ``render_mode``: :meth:`text`
        for ``"ansi"``, printed for ``"human"``; ``warn`` is told when there is no mode."""
        if render_mode is None:
            warn("render() called without a render_mode: nothing to render")
            return None
        text = self.text()
        if render_mode == "ansi":
            return text
        print(text)
        return None


class RunnerOptions:
    """The options an environment reports from its :class:`Runner` (``self._game``)."""

    _game: Runner
    rules: Rules
    observation_kind: str
    sequence_length: int

    def _config(self) -> dict[str, Any]:
        """The options a ``save()`` snapshot must share with the env restoring it
        (:func:`check_snapshot`); an env with more options adds them."""
        return {
            "rules": self.rules.to_dict(),
            "episode": self._game.episode,
            "reward": self._game.reward,
            "observation": self.observation_kind,
            "sequence_length": self.sequence_length,
        }

    @property
    def episode(self) -> str:
        """What an episode is (one of :data:`EPISODES`)."""
        return self._game.episode

    @property
    def reward(self) -> str:
        """What the rewards are (one of :data:`REWARDS`)."""
        return self._game.reward

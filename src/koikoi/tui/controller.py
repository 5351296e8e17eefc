"""The game behind the screen: the match, the AI opponent, what the human may see.

The :class:`GameController` owns the :class:`~koikoi.game.engine.Match`; the
screens draw only from :meth:`GameController.view` (the human's
:class:`~koikoi.game.views.PlayerView`) and from :class:`Table` snapshots built from
it, never from the round's hidden fields. No Textual here: the controller is
tested on its own.

The human is player 0, the AI player 1. The opponent is ``expert`` unless
told otherwise; hints come from the advisor (:data:`koikoi.features.opponents.HINT_SPEC`,
the expert with a short budget) whatever the opponent.

>>> from koikoi.game.rules import get_rules
>>> game = GameController(get_rules("nintendo"), opponent="level:2", seed=1)
>>> game.view().hand.bit_count(), game.view().opponent_hand_count, game.names[1]
(8, 8, 'AI (Beginner)')
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from koikoi.agents import Agent, make_agent
from koikoi.agents.base import ActionValue
from koikoi.features.narrate import Narrator
from koikoi.features.opponents import (
    DEFAULT_OPPONENT,
    HINT_SPEC,
    hint_values,
    level_choice,
    preload_agent,
)
from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    PLAY_TARGET_BASE,
    STOP_ID,
    TAKE_BASE,
    describe_action_id,
    interchangeable,
)
from koikoi.game.cards import CODES, MONTH_NAMES
from koikoi.game.engine import Event, Match, Phase, Round, month_of_round
from koikoi.game.errors import IllegalActionError
from koikoi.game.rules import Rules
from koikoi.game.scoring import (
    YAKU_NAMES,
    Scorer,
    Settlement,
    YakuResult,
)
from koikoi.game.views import PlayerView, view_of, view_of_round
from koikoi.i18n import N_, language, t, td, tn
from koikoi.tui.cardtext import card_caption
from koikoi.tui.saves import SavedGame, save_game, save_record

__all__ = [
    "HUMAN",
    "OPPONENT",
    "GameController",
    "RoundResult",
    "Step",
    "Table",
    "action_text",
    "interchangeable",
    "narrate",
    "opponent_label",
    "plays_by_card",
]

HUMAN: Final = 0
OPPONENT: Final = 1


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A finished round as the human saw it.

    ``view`` is the human's view of the round as it ended (both capture piles,
    the field); ``None`` for a round that ended at the deal (instant hand).
    """

    round_number: int
    month: int
    dealer: int | None
    settlement: Settlement
    view: PlayerView | None
    scores: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Step:
    """What one action did: who acted, and the events the human may see."""

    player: int
    action_id: int
    events: tuple[Event, ...]
    results: tuple[RoundResult, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """What the human sees on the table at one moment (drawn from a view, then
    moved on event by event while a turn is shown step by step)."""

    round_number: int
    rounds: int
    month: int
    dealer: int
    current: int
    hand: int
    opponent_count: int
    field: int
    piles: tuple[int, int]
    stock_count: int
    drawn: int
    round_scores: tuple[int, int]
    koikoi_calls: tuple[int, int]
    match_scores: tuple[int, int]

    @classmethod
    def from_view(cls, view: PlayerView) -> Table:
        return cls(
            round_number=view.round_number,
            rounds=view.rounds,
            month=view.month,
            dealer=view.dealer,
            current=view.current,
            hand=view.hand,
            opponent_count=view.opponent_hand_count,
            field=view.field,
            piles=view.piles,
            stock_count=view.stock_count,
            drawn=view.drawn,
            round_scores=view.round_scores,
            koikoi_calls=view.koikoi_calls,
            match_scores=view.match_scores,
        )

    def _capture(self, player: int, got: int) -> tuple[int, tuple[int, int]]:
        piles = list(self.piles)
        piles[player] |= got
        return self.field & ~got, (piles[0], piles[1])

    def after(self, event: Event) -> Table:
        """The table once ``event`` has happened (board events only; others: unchanged)."""
        p = event.player
        card = event.card
        if p is None or p not in (0, 1):
            return self
        if event.kind == "play" and card is not None:
            hand, count = self.hand, self.opponent_count
            if p == HUMAN:
                hand &= ~(1 << card)
            else:
                count = max(0, count - 1)
            if event.cards:
                field, piles = self._capture(p, event.cards)
            else:
                field, piles = self.field | (1 << card), self.piles
            return replace(
                self, hand=hand, opponent_count=count, field=field, piles=piles, current=p
            )
        if event.kind == "draw" and card is not None:
            stock = max(0, self.stock_count - 1)
            if "choice" in event.data:
                return replace(self, stock_count=stock, drawn=card)
            if event.cards:
                field, piles = self._capture(p, event.cards)
                return replace(self, stock_count=stock, field=field, piles=piles, drawn=-1)
            return replace(self, stock_count=stock, field=self.field | (1 << card), drawn=-1)
        if event.kind == "take":
            field, piles = self._capture(p, event.cards)
            return replace(self, field=field, piles=piles, drawn=-1)
        if event.kind == "yaku":
            scores = list(self.round_scores)
            scores[p] = int(event.data.get("total", scores[p]))
            return replace(self, round_scores=(scores[0], scores[1]))
        if event.kind == "koikoi":
            calls = list(self.koikoi_calls)
            calls[p] = int(event.data.get("calls", calls[p] + 1))
            return replace(self, koikoi_calls=(calls[0], calls[1]))
        return self


def plays_by_card(view: PlayerView) -> dict[int, list[int]]:
    """The legal play ids of the human's turn, grouped by the hand card they play.

    A card with one entry plays at once; two or more (two matching field cards,
    the wild Lightning, or the option to lay it without capturing) need a choice.
    """
    out: dict[int, list[int]] = {}
    if view.phase is not Phase.PLAY:
        return out
    for action_id in view.legal_ids:
        if action_id < PLAY_TARGET_BASE:
            card = action_id
        elif action_id < DISCARD_BASE:
            card = (action_id - PLAY_TARGET_BASE) // 48
        elif action_id < TAKE_BASE:
            card = action_id - DISCARD_BASE
        else:
            continue
        out.setdefault(card, []).append(action_id)
    return out


def action_text(action_id: int) -> str:
    """An action in words for the human: ``"play 3L Cherry · Curtain, capture 3P1"``."""
    if action_id < PLAY_TARGET_BASE:
        return t("play {card}", card=card_caption(action_id))
    if action_id < DISCARD_BASE:
        c, target = divmod(action_id - PLAY_TARGET_BASE, 48)
        return t("play {card}, capture {target}", card=CODES[c], target=card_caption(target))
    if action_id < TAKE_BASE:
        return t("lay {card} without capturing", card=card_caption(action_id - DISCARD_BASE))
    if action_id < KOIKOI_ID:
        return t("capture {card}", card=card_caption(action_id - TAKE_BASE))
    if action_id == KOIKOI_ID:
        return t("koi-koi (play on)")
    if action_id == STOP_ID:
        return t("stop (shōbu)")
    return describe_action_id(action_id)


def _codes(mask: int) -> str:
    return " ".join(CODES[c] for c in range(48) if mask >> c & 1)


def _points(n: object) -> str:
    return tn("{n} point", "{n} points", n) if isinstance(n, int) else f"{n} points"


_MOVE_LINES: Final[dict[tuple[str, str], tuple[str, str]]] = {
    ("play", "discard"): (
        N_("{who} lay {what} on the field without capturing."),
        N_("{who} lays {what} on the field without capturing."),
    ),
    ("play", "capture"): (
        N_("{who} play {what} and capture {got}."),
        N_("{who} plays {what} and captures {got}."),
    ),
    ("play", "nothing"): (
        N_("{who} play {what}: no match, it stays on the field."),
        N_("{who} plays {what}: no match, it stays on the field."),
    ),
    ("draw", "choice"): (
        N_("{who} draw {what}: it matches {first} and {second}."),
        N_("{who} draws {what}: it matches {first} and {second}."),
    ),
    ("draw", "capture"): (
        N_("{who} draw {what} and capture {got}."),
        N_("{who} draws {what} and captures {got}."),
    ),
    ("draw", "nothing"): (
        N_("{who} draw {what}: no match, it stays on the field."),
        N_("{who} draws {what}: no match, it stays on the field."),
    ),
}
"""The log's sentences of a card played or drawn (a drawn card taken by choice as
drawn), by (play or draw, case): to the player addressed, then about the other."""


def narrate(
    event: Event, names: tuple[str, str] = ("You", "AI"), *, you: int | None = HUMAN
) -> str | None:
    """One sentence about an event for the log, or ``None`` for events not worth a line.

    ``you`` is the player addressed in the second person ("You play"); ``None``
    tells every move in the third person (replays).
    """
    p = event.player
    who = names[p] if p in (0, 1) and p is not None else ""
    second = you is not None and p == you

    def said(yours: str, theirs: str, /, **params: object) -> str:
        # the sentence to the player addressed ("You play ...") or about the other one
        return yours.format(who=who, **params) if second else theirs.format(who=who, **params)

    def said_of(player: int, yours: str, theirs: str, /, **params: object) -> str:
        return (
            yours.format(**params) if you is not None and player == you else theirs.format(**params)
        )

    kind = event.kind
    data = event.data
    card = event.card
    if kind in ("play", "draw", "take") and card is not None:
        if kind == "play" and data.get("discard"):
            case = "discard"
        elif kind == "draw" and "choice" in data:
            case = "choice"
        elif kind == "take" or event.cards:
            case = "capture"
        else:
            case = "nothing"
        yours, theirs = _MOVE_LINES["play" if kind == "play" else "draw", case]
        first, second_card = [*data.get("choice", ()), "?", "?"][:2]
        return said(
            t(yours),
            t(theirs),
            what=card_caption(card),
            got=_codes(event.cards & ~(1 << card)),
            first=first,
            second=second_card,
        )
    if kind == "yaku":
        worth = _points(data.get("total"))
        return said(
            t("{who} now hold yaku worth {worth}."),
            t("{who} now holds yaku worth {worth}."),
            worth=worth,
        )
    if kind == "koikoi":
        n = data.get("calls", 1)
        if n == 1:
            return said(
                t("{who} call KOI-KOI and play on."), t("{who} calls KOI-KOI and plays on.")
            )
        return said(
            t("{who} call KOI-KOI and play on ({n} calls)."),
            t("{who} calls KOI-KOI and plays on ({n} calls)."),
            n=n,
        )
    if kind == "stop":
        if data.get("automatic"):
            return said(
                t("{who} stop the round (automatically: no koi-koi possible)."),
                t("{who} stops the round (automatically: no koi-koi possible)."),
            )
        return said(t("{who} stop the round."), t("{who} stops the round."))
    if kind == "exhausted":
        return t("Both hands are empty: the round is over.")
    if kind == "round_over":
        winner = data.get("winner")
        if winner is None:
            return t("Nobody scores this round.")
        return said_of(
            winner,
            t("{name} score {points}."),
            t("{name} scores {points}."),
            name=names[winner],
            points=data.get("points"),
        )
    if kind == "round_start":
        month = int(data.get("month", 1))
        dealer = names[int(data.get("dealer", 0))]
        return t(
            "Round {round}: month {month} ({name}). Dealer: {dealer}.",
            round=data.get("round"),
            month=month,
            name=td(MONTH_NAMES[month - 1]),
            dealer=dealer,
        )
    if kind == "redeal":
        return t("Redeal ({why}).", why=data.get("why", t("deal check")))
    if kind == "instant":
        yaku = str(data.get("yaku", ""))
        names_of = YAKU_NAMES.get(yaku, (yaku, yaku))
        label = names_of[1] if language() == "en" else td(names_of[0])
        return said(
            t("{who} hold an instant hand: {label} [{cards}], {points}."),
            t("{who} holds an instant hand: {label} [{cards}], {points}."),
            label=label,
            cards=_codes(event.cards),
            points=_points(data.get("points")),
        )
    if kind == "first_dealer":
        dealer = names[int(data.get("dealer", 0))]
        d = int(data.get("dealer", 0))
        if data.get("method") == "random":
            return said_of(
                d,
                t("A coin flip decides: {dealer} deal first."),
                t("A coin flip decides: {dealer} deals first."),
                dealer=dealer,
            )
        draws = data.get("draws", [])
        last = draws[-1] if draws else ["?", "?"]
        return said_of(
            d,
            t(
                "First-dealer draw: {first} {first_card}, {second} {second_card}. "
                "{dealer} deal first."
            ),
            t(
                "First-dealer draw: {first} {first_card}, {second} {second_card}. "
                "{dealer} deals first."
            ),
            first=names[0],
            first_card=last[0],
            second=names[1],
            second_card=last[1],
            dealer=dealer,
        )
    if kind == "match_over":
        winner = data.get("winner", p)
        scores = data.get("scores", [0, 0])
        if winner is None:
            return t("The match is drawn, {first} to {second}.", first=scores[0], second=scores[1])
        return said_of(
            winner,
            t("The match is over: {name} win."),
            t("The match is over: {name} wins."),
            name=names[winner],
        )
    return None


def opponent_label(spec: str, agent: Agent | None = None) -> str:
    """How the opponent is called on screen: a level's title (``"Expert"``), else the
    agent's name (``"greedy"``).

    >>> opponent_label("level:3"), opponent_label("mcts:time=1")
    ('Casual', 'mcts:time=1')
    """
    choice = level_choice(spec)
    if choice is not None:
        return choice.level.title
    return agent.name if agent is not None else spec


class GameController:
    """A match between the human (player 0) and an AI opponent (player 1).

    Args:
        rules: the rules of the match.
        opponent: the opponent's agent spec (see :func:`koikoi.agents.make_agent`;
            default ``expert``).
        seed: the match seed (default: a random one, kept so the match can be saved).
        agent: an already built agent (tests); ``opponent`` then only names it.
        actions: actions to re-play at once (resuming a save).
        advisor: the agent spec of hints and koi-koi advice, whatever the opponent
            (default :data:`~koikoi.features.opponents.HINT_SPEC`).

    Raises:
        InvalidInputError: the opponent or advisor spec names no available agent.
        IllegalActionError: an action to re-play is not legal.
    """

    def __init__(
        self,
        rules: Rules,
        *,
        opponent: str = DEFAULT_OPPONENT,
        seed: int | None = None,
        agent: Agent | None = None,
        actions: tuple[int, ...] = (),
        names: tuple[str, str] | None = None,
        advisor: str = HINT_SPEC,
    ) -> None:
        self.opponent_spec = opponent
        self.agent: Agent = agent if agent is not None else make_agent(opponent)
        self.advisor_spec = advisor
        self.advisor: Agent = make_agent(advisor)
        self._loaded: set[str] = set()
        self._load_lock = threading.Lock()
        self._advice_lock = threading.Lock()
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**32)
        self.names: tuple[str, str] = names or (
            t("You"),
            t("AI ({level})", level=td(opponent_label(opponent, self.agent))),
        )
        self.match = Match(rules, seed=self.seed)
        self.scorer = Scorer(rules)
        self.results: list[RoundResult] = []
        self._collect(0, None)
        for action_id in actions:
            self.apply(action_id)

    @classmethod
    def from_saved(
        cls, saved: SavedGame, *, agent: Agent | None = None, advisor: str = HINT_SPEC
    ) -> GameController:
        """Rebuild a saved match (re-playing its actions)."""
        return cls(
            saved.rules,
            opponent=saved.opponent,
            seed=saved.seed,
            agent=agent,
            actions=saved.actions,
            names=saved.names,
            advisor=advisor,
        )

    def to_saved(self) -> SavedGame:
        """The match so far as a save."""
        return SavedGame(
            self.match.rules,
            self.seed,
            self.opponent_spec,
            tuple(self.match.actions),
            self.names,
        )

    # -------------------------------------------------------------- queries

    @property
    def rules(self) -> Rules:
        return self.match.rules

    @property
    def is_over(self) -> bool:
        return self.match.is_over

    def view(self) -> PlayerView:
        """The human's view of the match: all the screen may draw from."""
        return view_of(self.match, HUMAN)

    def table(self) -> Table:
        return Table.from_view(self.view())

    @property
    def human_to_act(self) -> bool:
        return not self.match.is_over and self.match.current == HUMAN

    def current_yaku(self, player: int) -> YakuResult:
        """The yaku a player holds now (capture piles are public)."""
        v = self.view()
        return self.scorer.evaluate(v.piles[player], v.month, v.koikoi_calls[player] > 0)

    def stop_preview(self, player: int = HUMAN) -> Settlement:
        """What ``player`` would score by stopping now, multipliers included."""
        v = self.view()
        return self.scorer.settle_stop(
            player, v.piles[player], v.month, v.koikoi_calls, v.round_scores, v.called_scores
        )

    @property
    def can_advise(self) -> bool:
        """Whether the advisor can value moves (the expert always can)."""
        return any(
            callable(getattr(self.advisor, name, None)) for name in ("evaluate_detail", "evaluate")
        )

    def advice(self) -> dict[int, ActionValue]:
        """The advisor's value of each of the human's legal actions: expected net round
        points and, in a match of several rounds, the chance of winning it.

        Slow (the advisor's budget, and loading it the first time): run it off the UI.
        The advisor's generator is fixed by the seed and the move number.

        Raises:
            InvalidInputError: the advisor cannot value moves.
        """
        self._load("advisor")
        view = self.view()
        rng = random.Random(f"hint/{self.seed}/{len(self.match.actions)}")
        with self._advice_lock:  # one search at a time: an agent is not thread-safe
            return hint_values(self.advisor, view, rng)

    # ------------------------------------------------------------- preload

    def preload(self) -> None:
        """Load what the opponent and the advisor need before their first decision (the
        compiled kernel, the rules' match-equity table): seconds. Run it off the UI when
        the match starts; the first AI move and the first hint then wait only for what
        is still loading."""
        self._load("opponent")
        self._load("advisor")

    def loaded(self, which: str) -> bool:
        """Whether what the ``"opponent"`` or the ``"advisor"`` needs is loaded."""
        return which in self._loaded

    def _load(self, which: str) -> None:
        if which in self._loaded:
            return
        with self._load_lock:
            if which not in self._loaded:
                preload_agent(self.agent if which == "opponent" else self.advisor, self.rules)
                self._loaded.add(which)

    # -------------------------------------------------------------- actions

    def agent_rng(self) -> random.Random:
        """The opponent's generator for its next choice, fixed by the seed and the move number."""
        return random.Random(f"{self.seed}/{len(self.match.actions)}")

    def choose_opponent_action(self) -> int:
        """Ask the opponent for its action (may be slow for search agents: run off the UI).

        Raises:
            IllegalActionError: the agent chose an action that is not legal.
        """
        self._load("opponent")
        view = view_of(self.match, OPPONENT, with_history=True)
        if not view.legal_ids:
            raise IllegalActionError(
                f"the match is stuck in round {view.round_number}: the opponent has no legal action"
            )
        action_id = self.agent.act(view, self.agent_rng())
        if action_id not in view.legal_ids:
            raise IllegalActionError(
                f"the opponent {self.agent.name!r} chose {describe_action_id(action_id)!r}, "
                "which is not legal"
            )
        return int(action_id)

    def apply(self, action_id: int) -> Step:
        """Apply an action of the player to act (checked).

        Raises:
            IllegalActionError: if it is not legal (nothing changes).
        """
        match = self.match
        if match.is_over:
            raise IllegalActionError("the match is over: no action is legal")
        player = match.current
        old_round = match.round
        n_settled = len(match.settlements)
        n_events = len(match.events)
        match.apply(action_id)
        events = tuple(e for e in match.events[n_events:] if e.visible_to(HUMAN))
        results = self._collect(n_settled, old_round)
        return Step(player, action_id, events, results)

    def step_opponent(self) -> Step:
        """Let the opponent act once."""
        if self.human_to_act or self.match.is_over:
            raise IllegalActionError("it is not the opponent's turn")
        return self.apply(self.choose_opponent_action())

    def _collect(self, n_settled: int, old_round: Round | None) -> tuple[RoundResult, ...]:
        match = self.match
        new = match.settlements[n_settled:]
        if not new:
            return ()
        dealers: dict[int, int] = {}
        for e in match.events:
            if e.kind == "round_start":
                dealers[int(e.data["round"])] = int(e.data["dealer"])
        scores = [match.rules.game.start_points] * 2
        for s in match.settlements[:n_settled]:
            scores[0] += s.deltas[0]
            scores[1] += s.deltas[1]
        out: list[RoundResult] = []
        for i, settlement in enumerate(new):
            number = n_settled + i + 1
            scores[0] += settlement.deltas[0]
            scores[1] += settlement.deltas[1]
            view: PlayerView | None = None
            rnd = old_round if i == 0 else None
            if rnd is not None and rnd.settlement is settlement:
                view = view_of_round(
                    rnd,
                    HUMAN,
                    match_scores=(scores[0], scores[1]),
                    rounds=match.rules.game.rounds,
                )
            out.append(
                RoundResult(
                    number,
                    month_of_round(number),
                    dealers.get(number),
                    settlement,
                    view,
                    (scores[0], scores[1]),
                )
            )
        self.results.extend(out)
        return tuple(out)

    # ----------------------------------------------------------------- files

    def save(self, path: str | Path) -> Path:
        """Save the unfinished match (a record of it, see :mod:`koikoi.tui.saves`)."""
        return save_game(self.match, path, opponent=self.opponent_spec)

    def save_record(self, directory: str | Path, *, stamp: str = "") -> Path:
        """Save the match as a record in ``directory``."""
        return save_record(self.match, directory, opponent=self.opponent_spec, stamp=stamp)

    def explain(self, settlement: Settlement) -> str:
        """The settlement in words with the players' names (:meth:`Narrator.settlement`)."""
        return "\n".join(Narrator(self.names, you=HUMAN).settlement(settlement))

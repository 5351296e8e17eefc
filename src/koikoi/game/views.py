"""What one player may know, and re-dealing the rest for search.

A :class:`PlayerView` holds the player's own hand, the field, both capture
piles, the scores, the public history and the counts of unseen cards — never
the opponent's hand or the stock order. :func:`determinize` re-deals the unseen
cards at random into a :class:`~koikoi.game.engine.Round` consistent with the view.

>>> from koikoi.game.engine import Match
>>> m = Match(seed=3)
>>> v = view_of(m, m.current)
>>> v.opponent_hand_count, v.stock_count
(8, 24)
>>> v.unseen.bit_count() == v.opponent_hand_count + v.stock_count
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from koikoi.game.actions import Action, action_from_id, describe_action_id
from koikoi.game.cards import CODES, FULL_DECK, card_list, format_cards
from koikoi.game.engine import Event, Match, Phase, Round
from koikoi.game.notation import Position, PositionError, parse_position
from koikoi.game.rules import Rules
from koikoi.game.scoring import Scorer, Settlement

__all__ = ["PlayerView", "determinize", "view_of", "view_of_round"]


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything player ``player`` may know at this moment (or a spectator's, ``player=None``)."""

    player: int | None
    rules: Rules
    round_number: int
    month: int
    dealer: int
    leader: int
    current: int
    phase: Phase
    hand: int
    """The player's own hand (0 for a spectator)."""
    field: int
    piles: tuple[int, int]
    hand_counts: tuple[int, int]
    stock_count: int
    drawn: int
    """The drawn card waiting for a capture choice (face up, public), or -1."""
    round_scores: tuple[int, int]
    """Each player's yaku total in this round."""
    turn_score: int
    koikoi_calls: tuple[int, int]
    called_scores: tuple[int, int]
    last_improver: int | None
    match_scores: tuple[int, int]
    rounds: int
    settlements: tuple[Settlement, ...] = ()
    legal_ids: tuple[int, ...] = ()
    """The legal action ids when it is this player's turn, else empty."""
    history: tuple[Event, ...] = dc_field(default=(), repr=False)
    is_over: bool = False
    declined: tuple[int, int] = (0, 0)
    """Per player, the months (all four cards of each) that were on the field when
    they laid a hand card without capturing: public, and a hint that they held no
    card of those months then, nor since (see :func:`determinize`)."""
    plays: tuple[tuple[int, int, int], ...] = ()
    """This round's hand plays so far, ``(player, card, field before the play)``: public,
    and what the opponent's hand is inferred from (:mod:`koikoi.agents.inference`).
    Empty in a view built from a position."""

    @classmethod
    def from_position(
        cls,
        position: str | Position,
        *,
        rules: Rules | None = None,
        player: int | None = None,
    ) -> PlayerView:
        """The view of a view position, or ``player``'s view of a full position
        (:mod:`koikoi.game.positions`). It has no history and no earlier settlements.

        Args:
            position: the position's text, or a parsed :class:`Position`.
            rules: the rule set, needed when the text names house rules.
            player: whose view (default: the view position's own player).

        Raises:
            PositionError: the text cannot be read or the position cannot happen,
                or the position does not hold ``player``'s view.
        """
        pos = parse_position(position, rules=rules) if isinstance(position, str) else position
        if player is None:
            player = pos.viewer
        if player not in (0, 1):
            raise PositionError("say whose view: player 0 or 1")
        if pos.viewer is not None and player != pos.viewer:
            raise PositionError(
                f"this is player {pos.viewer}'s view; player {player}'s is not known"
            )
        if pos.viewer is not None:
            # Only what the view shows is read from this round: the hidden cards
            # are dealt in card order.
            hidden = card_list(pos.unseen)
            n = pos.hand_counts[1 - player]
            pos = pos.deal(sum(1 << c for c in hidden[:n]), hidden[n:])
        scores = pos.match_scores
        if scores is None:
            start = pos.rules.game.start_points
            scores = (start, start)
        return view_of_round(
            Round.from_position(pos), player, match_scores=scores, rounds=pos.rounds
        )

    def to_position(self) -> Position:
        """This view as a view :class:`Position` (unchecked; the text is ``.text()``).

        Raises:
            PositionError: for a spectator's view (it holds no hand) or a finished round.
        """
        if self.player is None:
            raise PositionError("a spectator's view has no position: it holds no hand")
        if self.phase is Phase.OVER:
            raise PositionError(
                "the round is over: a position is a moment that waits for a decision"
            )
        start = self.rules.game.start_points
        return self._position(
            match_scores=self.match_scores if self.match_scores != (start, start) else None
        )

    def _position(
        self,
        *,
        match_scores: tuple[int, int] | None = None,
        opponent_hand: int = 0,
        stock: list[int] | None = None,
    ) -> Position:
        """This view's position; with ``stock``, the full position in which the hidden
        cards are ``opponent_hand`` and ``stock`` (top card first), for :func:`determinize`."""
        player = self.player or 0
        hands = (self.hand, opponent_hand) if player == 0 else (opponent_hand, self.hand)
        return Position(
            rules=self.rules,
            round_number=self.round_number,
            rounds=self.rounds,
            dealer=self.dealer,
            leader=self.leader,
            current=self.current,
            phase=self.phase,
            viewer=player if stock is None else None,
            hands=hands,
            hand_counts=self.hand_counts,
            field=self.field,
            stock=None if stock is None else tuple(stock),
            stock_count=self.stock_count,
            piles=self.piles,
            drawn=self.drawn,
            scores=self.round_scores,
            koikoi_calls=self.koikoi_calls,
            called_scores=self.called_scores,
            last_improver=self.last_improver,
            declined=self.declined,
            match_scores=match_scores,
            plays=self.plays,
        )

    @property
    def opponent(self) -> int:
        return 1 - (self.player or 0)

    @property
    def opponent_hand_count(self) -> int:
        return self.hand_counts[self.opponent]

    @property
    def unseen(self) -> int:
        """Cards this player cannot see: the opponent's hand and the stock, in no order."""
        drawn = (1 << self.drawn) if self.drawn >= 0 else 0
        return FULL_DECK & ~(self.hand | self.field | self.piles[0] | self.piles[1] | drawn)

    @property
    def legal_actions(self) -> list[Action]:
        return [action_from_id(i) for i in self.legal_ids]

    @property
    def is_my_turn(self) -> bool:
        return self.player == self.current and bool(self.legal_ids)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as sent to clients and external bots."""
        return {
            "player": self.player,
            "rules": self.rules.name,
            "round": self.round_number,
            "rounds": self.rounds,
            "month": self.month,
            "dealer": self.dealer,
            "leader": self.leader,
            "current": self.current,
            "phase": self.phase.name.lower(),
            "hand": format_cards(self.hand).split(),
            "field": format_cards(self.field).split(),
            "piles": [format_cards(p).split() for p in self.piles],
            "hand_counts": list(self.hand_counts),
            "stock_count": self.stock_count,
            "drawn": CODES[self.drawn] if self.drawn >= 0 else None,
            "round_scores": list(self.round_scores),
            "koikoi_calls": list(self.koikoi_calls),
            "match_scores": list(self.match_scores),
            "legal": [{"id": i, "action": describe_action_id(i)} for i in self.legal_ids],
            "is_over": self.is_over,
        }


def view_of_round(
    rnd: Round,
    player: int | None,
    *,
    match_scores: tuple[int, int] = (0, 0),
    rounds: int | None = None,
    settlements: tuple[Settlement, ...] = (),
    history: tuple[Event, ...] = (),
    is_over: bool | None = None,
) -> PlayerView:
    """The view of ``player`` (None: spectator) of a round."""
    over = rnd.phase is Phase.OVER if is_over is None else is_over
    legal = tuple(rnd.legal_ids()) if (player == rnd.current and not over) else ()
    return PlayerView(
        player=player,
        rules=rnd.rules,
        round_number=rnd.round_number,
        month=rnd.month,
        dealer=rnd.dealer,
        leader=rnd.leader,
        current=rnd.current,
        phase=Phase.OVER if over else rnd.phase,
        hand=rnd.hands[player] if player is not None else 0,
        field=rnd.field,
        piles=(rnd.piles[0], rnd.piles[1]),
        hand_counts=(rnd.hands[0].bit_count(), rnd.hands[1].bit_count()),
        stock_count=rnd.stock_count,
        drawn=rnd.drawn,
        round_scores=(rnd.scores[0], rnd.scores[1]),
        turn_score=rnd.turn_score,
        koikoi_calls=(rnd.koikoi_calls[0], rnd.koikoi_calls[1]),
        called_scores=(rnd.called_scores[0], rnd.called_scores[1]),
        last_improver=rnd.last_improver,
        match_scores=match_scores,
        rounds=rounds if rounds is not None else rnd.rules.game.rounds,
        settlements=settlements,
        legal_ids=legal,
        history=tuple(e for e in history if e.visible_to(player)),
        is_over=over,
        declined=(rnd.declined[0], rnd.declined[1]),
        plays=rnd.plays,
    )


def view_of(match: Match, player: int | None, *, with_history: bool = True) -> PlayerView:
    """The view of ``player`` (None: spectator) of a match."""
    return view_of_round(
        match.round,
        player,
        match_scores=(match.scores[0], match.scores[1]),
        rounds=match.rules.game.rounds,
        settlements=tuple(match.settlements),
        history=tuple(match.events) if with_history else (),
        is_over=match.is_over,
    )


def determinize(
    view: PlayerView,
    rng: random.Random,
    *,
    scorer: Scorer | None = None,
    avoid: int = 0,
    slack: float = 0.0,
    opponent_hand: int | None = None,
) -> Round:
    """A round consistent with ``view``: the unseen cards re-dealt at random.

    The opponent gets as many unseen cards as they hold; the rest, shuffled, is
    the stock. Everything the view knows is kept as it is. Events are off.
    Pass the ``scorer`` of the rules to share its cache across many re-deals.

    With ``avoid`` (a card set, usually the opponent's :attr:`PlayerView.declined`
    months), the opponent's hand is drawn from the unseen cards outside it first
    and takes cards of ``avoid`` only when there are too few others; except with
    probability ``slack``, when the deal ignores ``avoid`` (a player may lay a
    card on purpose while holding a match). The kernel's
    :func:`koikoi.kernel.BatchSearch` deals the same way.

    With ``opponent_hand`` (as many of the unseen cards as the opponent holds,
    for example drawn by :func:`koikoi.agents.inference.opponent_hands`), the
    opponent gets exactly that hand and only the stock is shuffled.
    """
    if view.player is None:
        raise ValueError("a spectator's view cannot be determinized: it has no hand")
    unseen = card_list(view.unseen)
    rng.shuffle(unseen)
    opp = view.opponent
    n = view.hand_counts[opp]
    avoid &= view.unseen
    if opponent_hand is not None:
        if opponent_hand & ~view.unseen or opponent_hand.bit_count() != n:
            raise ValueError(
                f"opponent_hand must be {n} of the cards this player cannot see, "
                f"not {opponent_hand:#x}"
            )
        unseen = [c for c in unseen if (opponent_hand >> c) & 1] + [
            c for c in unseen if not (opponent_hand >> c) & 1
        ]
    elif avoid and rng.random() >= slack:
        outside = [c for c in unseen if not (avoid >> c) & 1]
        held = (outside + [c for c in unseen if (avoid >> c) & 1])[:n]
        rest = [c for c in unseen if c not in held]
        rng.shuffle(rest)
        unseen = held + rest
    hand = 0
    for c in unseen[:n]:
        hand |= 1 << c
    rnd = Round.from_position(view._position(opponent_hand=hand, stock=unseen[n:]), scorer=scorer)
    rnd.turn_score = view.turn_score
    return rnd

"""The round and match state machine: legal actions, apply, events.

Two levels:

* :class:`Round` — one deal, from the first play to the settlement. Mutable
  for speed (search plays millions of steps), with :meth:`Round.clone`. Its
  chance (the stock order) is fixed when it is dealt.
* :class:`Match` — the whole game: first dealer, deals with their checks
  (instant hands, redeals), rounds, dealer and leader rotation, match end. All
  chance comes from one injected ``random.Random``; the same seed replays the
  same match.

Both offer the same step API: ``legal_actions()`` (action objects),
``legal_ids()`` (the fixed integer encoding), ``apply(action)`` (checked: an
illegal action raises :class:`IllegalActionError` and changes nothing) and
``apply_id(action_id)`` (unchecked fast path for search).

>>> m = Match(seed=7)
>>> while not m.is_over:
...     m.apply_id(m.legal_ids()[0])
>>> sum(s.deltas[0] for s in m.settlements) + m.rules.game.start_points == m.scores[0]
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    PLAY_TARGET_BASE,
    STOP_ID,
    TAKE_BASE,
    Action,
    Phase,
    action_from_id,
    describe_action_id,
)
from koikoi.game.cards import CODES, KINDS, MONTH_MASKS, card_list, format_cards
from koikoi.game.errors import IllegalActionError, InvalidInputError
from koikoi.game.notation import Position, PositionError, parse_position
from koikoi.game.rules import PRESET_NAMES, GameRules, Rules, get_rules
from koikoi.game.scoring import Scorer, Settlement, YakuScore, month_of_round, shared_scorer
from koikoi.game.tables import LIGHTNING
from koikoi.game.tables import WILLOWS as WILLOW_MASK

__all__ = [
    "Event",
    "Match",
    "Phase",
    "Round",
    "month_of_round",
    "shared_scorer",
]

# CARD_MONTH_MASK[c]: the four cards of c's month.
CARD_MONTH_MASK: Final[tuple[int, ...]] = tuple(MONTH_MASKS[c // 4] for c in range(48))
MAX_REDEALS: Final = 1000
# CARD_SHIFT[c]: shift that brings c's month to the low four bits of a card set.
CARD_SHIFT: Final[tuple[int, ...]] = tuple(4 * (c // 4) for c in range(48))


# Nibble constants: a card set holds month m in bits 4m to 4m + 3.
_NIBBLE_LOW: Final = 0x111111111111
"""Bit 0 of every month."""
_NIBBLE_BIT2: Final = _NIBBLE_LOW << 2
"""Bit 2 of every month."""
_NIBBLE_PAIR_LOW: Final = 0x555555555555
"""The low bit of every bit pair."""
_NIBBLE_PAIR_SUM: Final = 0x333333333333
"""The low bit pair of every month."""


def whole_months(cards: int) -> int:
    """Every card of each month that ``cards`` holds at least one card of.

    Folds each month's four bits into its lowest bit, then multiplies by ``0b1111``
    to fill the month again (no carry crosses a month).

    >>> from koikoi.game.cards import format_cards, parse_cards
    >>> format_cards(whole_months(parse_cards("1L 3R")))
    '1L 1R 1P1 1P2 3L 3R 3P1 3P2'
    """
    folded = cards | (cards >> 1)
    folded |= folded >> 2
    return (folded & _NIBBLE_LOW) * 0b1111


def _play_table() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``PLAY_IDS[c][pattern]``: the play ids of hand card ``c`` when the field holds
    ``pattern`` (4 bits) of its month, under the plain matching rule."""
    table: list[tuple[tuple[int, ...], ...]] = []
    for c in range(48):
        rows: list[tuple[int, ...]] = []
        month_first = 4 * (c // 4)
        for pattern in range(16):
            bits = [month_first + i for i in range(4) if pattern >> i & 1 and month_first + i != c]
            if len(bits) == 2:
                base = PLAY_TARGET_BASE + 48 * c
                rows.append((base + bits[0], base + bits[1]))
            else:
                rows.append((c,))
        table.append(tuple(rows))
    return tuple(table)


PLAY_IDS: Final = _play_table()


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for logs, UIs and replays.

    ``private_to`` is the only player allowed to see the event (``None``: public;
    ``-1``: nobody, e.g. the full deal).
    """

    kind: str
    player: int | None = None
    card: int | None = None
    cards: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    private_to: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind}
        if self.player is not None:
            out["player"] = self.player
        if self.card is not None:
            out["card"] = CODES[self.card]
        if self.cards:
            out["cards"] = format_cards(self.cards).split()
        out.update(self.data)
        return out

    def visible_to(self, player: int | None) -> bool:
        """Whether ``player`` (``None``: a spectator) may see this event."""
        if self.private_to is None:
            return True
        return self.private_to == player and player is not None


class Round:
    """One round (one deal), mutable for speed.

    Build one with :class:`Match` (which deals), with this constructor (a deal you
    give: hands, field and the stock, top card first), or mid-round from a
    position with :meth:`Round.from_position`.
    """

    __slots__ = (
        "_any_or_discard",
        "_first_empty",
        "_limit",
        "_limit_round",
        "_must_match",
        "_offer_last",
        "_plain",
        "_stock",
        "_viewing_koikoi",
        "_wild",
        "called_scores",
        "current",
        "dealer",
        "declined",
        "drawn",
        "events",
        "field",
        "hands",
        "koikoi_calls",
        "last_improver",
        "leader",
        "month",
        "phase",
        "piles",
        "plays",
        "round_number",
        "rules",
        "scorer",
        "scores",
        "settlement",
        "turn_score",
    )

    rules: Rules
    scorer: Scorer
    round_number: int
    month: int
    dealer: int
    leader: int
    current: int
    phase: Phase
    hands: list[int]
    field: int
    _stock: list[int]
    """The stock, **bottom card first** (``pop()`` draws the top): internal; read
    :attr:`stock`, which is top card first like every other stock in the package."""
    piles: list[int]
    drawn: int
    scores: list[int]
    turn_score: int
    koikoi_calls: list[int]
    called_scores: list[int]
    last_improver: int | None
    declined: list[int]
    """Per player, every card of each month that was on the field when they laid a
    hand card without capturing (public; a hint that they held none of those months)."""
    plays: tuple[tuple[int, int, int], ...]
    """The hand plays of this round so far, as ``(player, card, field before the play)``
    (public; what :mod:`koikoi.agents.inference` reads the opponent's hand from)."""
    settlement: Settlement | None
    events: list[Event] | None

    def __init__(
        self,
        rules: Rules,
        *,
        hands: tuple[int, int],
        field: int,
        stock: list[int],
        dealer: int,
        leader: int | None = None,
        round_number: int = 1,
        scorer: Scorer | None = None,
        events: bool = True,
    ) -> None:
        """A round ready to play from the deal.

        Args:
            hands: the two hands as card sets.
            field: the field as a card set.
            stock: the stock, **top card first**.
            dealer: 0 or 1.
            leader: who plays first (default: the dealer).
        """
        self.rules = rules
        self.scorer = scorer if scorer is not None else shared_scorer(rules)
        self.round_number = round_number
        self.month = month_of_round(round_number)
        self.dealer = dealer
        self.leader = dealer if leader is None else leader
        self.current = self.leader
        self.phase = Phase.PLAY
        self.hands = [hands[0], hands[1]]
        self.field = field
        self._stock = list(reversed(stock))  # pop() takes the top
        self.piles = [0, 0]
        self.drawn = -1
        self.scores = [0, 0]
        self.turn_score = 0
        self.koikoi_calls = [0, 0]
        self.called_scores = [0, 0]
        self.last_improver = None
        self.declined = [0, 0]
        self.plays = ()
        self.settlement = None
        self.events = [] if events else None
        self._configure()

    def _configure(self) -> None:
        r = self.rules
        self._any_or_discard = r.play.hand_card == "any_or_discard"
        self._must_match = r.play.hand_card == "must_match"
        self._wild = r.play.wild_lightning
        self._first_empty = r.end.first_empty_hand
        self._offer_last = r.koikoi.offer_on_last_card
        self._limit = r.koikoi.limit
        self._limit_round = r.koikoi.limit_scope == "round"
        self._viewing_koikoi = r.yaku.viewing_after_koikoi > 0
        self._plain = not (self._any_or_discard or self._must_match or self._wild)

    @classmethod
    def from_position(
        cls,
        position: str | Position,
        *,
        rules: Rules | None = None,
        scorer: Scorer | None = None,
    ) -> Round:
        """The round of a full position, events off: the one way to set up a round
        mid-play (:mod:`koikoi.game.positions` describes the text).

        Args:
            position: the position's text (read and checked by
                :func:`~koikoi.game.notation.parse_position`) or a parsed
                :class:`~koikoi.game.notation.Position`.
            rules: the rule set, needed when the text names house rules.
            scorer: a scorer of the rules to share (default: the shared one).

        Raises:
            PositionError: the text cannot be read or the position cannot happen
                (the message names the problem), or it is a view (re-deal its
                hidden cards with :func:`koikoi.game.views.determinize`).

        >>> dealt = Match(seed=2).round
        >>> again = Round.from_position(dealt.to_position().text())
        >>> again.hands == dealt.hands and again.stock == dealt.stock
        True
        """
        pos = parse_position(position, rules=rules) if isinstance(position, str) else position
        if pos.stock is None:
            raise PositionError(
                "a view position does not say where the hidden cards are, so it has no "
                "Round: use PlayerView.from_position, then koikoi.game.views.determinize"
            )
        rnd = cls(
            pos.rules,
            hands=pos.hands,
            field=pos.field,
            stock=list(pos.stock),
            dealer=pos.dealer,
            leader=pos.leader,
            round_number=pos.round_number,
            scorer=scorer,
            events=False,
        )
        rnd.resume(
            current=pos.current,
            phase=pos.phase,
            piles=pos.piles,
            drawn=pos.drawn,
            scores=pos.scores,
            koikoi_calls=pos.koikoi_calls,
            called_scores=pos.called_scores,
            last_improver=pos.last_improver,
            declined=pos.declined,
            plays=pos.plays,
        )
        return rnd

    def to_position(
        self,
        *,
        player: int | None = None,
        match_scores: tuple[int, int] | None = None,
        rounds: int | None = None,
    ) -> Position:
        """This moment as a :class:`~koikoi.game.notation.Position` (unchecked).

        Args:
            player: ``None`` for the full position, else that player's view.
            match_scores: the match scores to record (``match=``).
            rounds: the match length (default: the rules', or this round if later).

        Raises:
            PositionError: the round is over (a position waits for a decision).
        """
        if self.phase is Phase.OVER:
            raise PositionError(
                "the round is over: a position is a moment that waits for a decision"
            )
        hands = self.hands
        return Position(
            rules=self.rules,
            round_number=self.round_number,
            rounds=rounds if rounds is not None else max(self.rules.game.rounds, self.round_number),
            dealer=self.dealer,
            leader=self.leader,
            current=self.current,
            phase=self.phase,
            viewer=player,
            hands=(hands[0] if player in (None, 0) else 0, hands[1] if player in (None, 1) else 0),
            hand_counts=(hands[0].bit_count(), hands[1].bit_count()),
            field=self.field,
            stock=tuple(self.stock) if player is None else None,
            stock_count=len(self._stock),
            piles=(self.piles[0], self.piles[1]),
            drawn=self.drawn,
            scores=(self.scores[0], self.scores[1]),
            koikoi_calls=(self.koikoi_calls[0], self.koikoi_calls[1]),
            called_scores=(self.called_scores[0], self.called_scores[1]),
            last_improver=self.last_improver,
            declined=(self.declined[0], self.declined[1]),
            match_scores=match_scores,
            plays=self.plays,
        )

    def __repr__(self) -> str:
        """Code that rebuilds this round: ``Round.from_position('<full position>')``.

        A finished round, or one no position can describe (a hand-made deal that
        breaks the card counts, or house rules, which the text names but cannot
        carry), gets a ``<Round ...>`` summary instead.
        """
        if (
            self.phase is not Phase.OVER
            and self.rules.name in PRESET_NAMES
            and self.rules == get_rules(self.rules.name)
        ):
            try:
                text = self.to_position().text()
                parse_position(text, rules=self.rules)
            except PositionError:
                pass
            else:
                return f"Round.from_position({text!r})"
        return (
            f"<Round {self.rules.name} round={self.round_number} dealer={self.dealer} "
            f"turn={self.current} phase={self.phase.name.lower()} "
            f"score={self.scores[0]}/{self.scores[1]}>"
        )

    def resume(
        self,
        *,
        current: int,
        phase: Phase,
        piles: tuple[int, int],
        drawn: int,
        scores: tuple[int, int],
        koikoi_calls: tuple[int, int],
        called_scores: tuple[int, int],
        last_improver: int | None,
        declined: tuple[int, int],
        turn_score: int | None = None,
        plays: tuple[tuple[int, int, int], ...] = (),
    ) -> None:
        """Set the mid-round part of the state on a freshly built round (unchecked).

        ``turn_score`` (the acting player's score when their turn began) is only
        read in the take phase, where it equals their score: by default it is set so.

        :meth:`from_position` calls it (and through it
        :func:`koikoi.game.views.determinize`); set up rounds that way, not with this.
        """
        self.current = current
        self.phase = phase
        self.piles = [piles[0], piles[1]]
        self.drawn = drawn
        self.scores = [scores[0], scores[1]]
        self.turn_score = scores[current] if turn_score is None else turn_score
        self.koikoi_calls = [koikoi_calls[0], koikoi_calls[1]]
        self.called_scores = [called_scores[0], called_scores[1]]
        self.last_improver = last_improver
        self.declined = [declined[0], declined[1]]
        self.plays = plays

    # ----------------------------------------------------------------- queries

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def stock(self) -> list[int]:
        """The stock, **top card first** (hidden information), as a new list.

        The same order as the ``stock`` argument of :class:`Round`, the decks of
        :attr:`Match.deals` (cards 24 to 47) and the ``stock=`` field of a
        position (:mod:`koikoi.game.positions`): the next card drawn comes first.
        """
        return self._stock[::-1]

    @property
    def stock_count(self) -> int:
        """How many cards are left in the stock."""
        return len(self._stock)

    def clone(self, *, events: bool = False) -> Round:
        """An independent copy (without the event log unless asked)."""
        other = Round.__new__(Round)
        other.rules = self.rules
        other.scorer = self.scorer
        other.round_number = self.round_number
        other.month = self.month
        other.dealer = self.dealer
        other.leader = self.leader
        other.current = self.current
        other.phase = self.phase
        other.hands = self.hands[:]
        other.field = self.field
        other._stock = self._stock[:]
        other.piles = self.piles[:]
        other.drawn = self.drawn
        other.scores = self.scores[:]
        other.turn_score = self.turn_score
        other.koikoi_calls = self.koikoi_calls[:]
        other.called_scores = self.called_scores[:]
        other.last_improver = self.last_improver
        other.declined = self.declined[:]
        other.plays = self.plays
        other.settlement = self.settlement
        other.events = list(self.events) if (events and self.events is not None) else None
        other._any_or_discard = self._any_or_discard
        other._must_match = self._must_match
        other._wild = self._wild
        other._first_empty = self._first_empty
        other._offer_last = self._offer_last
        other._limit = self._limit
        other._limit_round = self._limit_round
        other._viewing_koikoi = self._viewing_koikoi
        other._plain = self._plain
        return other

    def _captures_for(self, card: int) -> list[int]:
        """Field cards ``card`` may capture when it needs a choice; [] when there is none.

        Returns the list of choosable single targets (two or more), else an empty list.
        """
        field_ = self.field
        if card == LIGHTNING and self._wild:
            if (field_ & WILLOW_MASK).bit_count() == 3 or field_.bit_count() < 2:
                return []
            return card_list(field_)
        matches = field_ & CARD_MONTH_MASK[card]
        if matches and matches.bit_count() == 2:
            return card_list(matches)
        return []

    def _matches(self, card: int) -> int:
        if card == LIGHTNING and self._wild:
            return self.field
        return self.field & CARD_MONTH_MASK[card]

    def legal_ids(self) -> list[int]:
        """The legal actions as integer ids (see :mod:`koikoi.game.actions`)."""
        phase = self.phase
        if phase is Phase.PLAY:
            hand = self.hands[self.current]
            field_ = self.field
            out: list[int] = []
            if self._plain:
                table = PLAY_IDS
                shift = CARD_SHIFT
                while hand:
                    low = hand & -hand
                    hand ^= low
                    c = low.bit_length() - 1
                    out += table[c][(field_ >> shift[c]) & 15]
                return out
            if self._must_match:
                playable = 0
                h = hand
                while h:
                    low = h & -h
                    c = low.bit_length() - 1
                    if self._matches(c):
                        playable |= low
                    h ^= low
                if playable:
                    hand = playable
            while hand:
                low = hand & -hand
                c = low.bit_length() - 1
                hand ^= low
                if c == LIGHTNING and self._wild:
                    if (field_ & WILLOW_MASK).bit_count() == 3 or field_.bit_count() < 2:
                        out.append(c)
                    else:
                        base = PLAY_TARGET_BASE + 48 * c
                        f = field_
                        while f:
                            fl = f & -f
                            out.append(base + fl.bit_length() - 1)
                            f ^= fl
                    if field_ and self._any_or_discard:
                        out.append(DISCARD_BASE + c)
                    continue
                m = field_ & CARD_MONTH_MASK[c]
                if m and m.bit_count() == 2:
                    base = PLAY_TARGET_BASE + 48 * c
                    lo = m & -m
                    out.append(base + lo.bit_length() - 1)
                    out.append(base + (m ^ lo).bit_length() - 1)
                else:
                    out.append(c)
                if m and self._any_or_discard:
                    out.append(DISCARD_BASE + c)
            return out
        if phase is Phase.TAKE:
            return [TAKE_BASE + t for t in self._captures_for(self.drawn)]
        if phase is Phase.DECIDE:
            return [KOIKOI_ID, STOP_ID]
        return []

    def legal_actions(self) -> list[Action]:
        """The legal actions as action objects."""
        return [action_from_id(i) for i in self.legal_ids()]

    # ------------------------------------------------------------------ apply

    def apply(self, action: Action | int) -> None:
        """Apply a legal action; raise :class:`IllegalActionError` and change nothing otherwise."""
        if isinstance(action, int) and not isinstance(action, bool):
            action_id = action
            if not 0 <= action_id < STOP_ID + 1:
                raise IllegalActionError(f"action id {action_id} out of range (0 to {STOP_ID})")
        else:
            given = getattr(action, "id", None)
            if not isinstance(given, int) or isinstance(action, bool):
                raise IllegalActionError(f"not an action: {action!r}")
            action_id = given
        if self.phase is Phase.OVER:
            raise IllegalActionError(
                f"{describe_action_id(action_id)!r} is not legal: the round is over"
            )
        legal = self.legal_ids()
        if action_id not in legal:
            raise IllegalActionError(
                f"{describe_action_id(action_id)!r} is not legal for player {self.current} "
                f"in phase {self.phase.name.lower()}; legal: "
                + ", ".join(describe_action_id(i) for i in legal)
            )
        self.apply_id(action_id)

    def apply_id(self, action_id: int) -> None:
        """Apply an action id without checking it is legal (fast path for search)."""
        p = self.current
        if action_id < PLAY_TARGET_BASE:
            self._play(p, action_id, -1, False)
        elif action_id < DISCARD_BASE:
            c, t = divmod(action_id - PLAY_TARGET_BASE, 48)
            self._play(p, c, t, False)
        elif action_id < TAKE_BASE:
            self._play(p, action_id - DISCARD_BASE, -1, True)
        elif action_id < KOIKOI_ID:
            self._take_drawn(p, action_id - TAKE_BASE)
        elif action_id == KOIKOI_ID:
            self._koikoi(p)
        else:
            self._stop(p)

    def _capture(self, p: int, card: int, target: int) -> int:
        """Resolve a card arriving on the field. Returns the captured set (0: laid)."""
        field_ = self.field
        if target >= 0:
            got = (1 << card) | (1 << target)
        else:
            if card == LIGHTNING and self._wild:
                willows = field_ & WILLOW_MASK
                # All three willows: the normal four-card capture. Otherwise the field
                # holds 0 or 1 card here (with more, a target is chosen).
                m = willows if willows.bit_count() == 3 else field_
            else:
                m = field_ & CARD_MONTH_MASK[card]
            if not m:
                self.field = field_ | (1 << card)
                return 0
            got = m | (1 << card)
        self.field = field_ & ~got
        self.piles[p] |= got
        return got

    def _play(self, p: int, card: int, target: int, discard: bool) -> None:
        self.hands[p] &= ~(1 << card)
        self.turn_score = self.scores[p]
        before = self.field
        self.plays += ((p, card, before),)
        if discard:
            self.field = before | (1 << card)
            got = 0
        elif self._plain:
            # _capture for the plain matching rule, inline: the chosen target, or
            # every field card of the month (none: the card is laid).
            if target >= 0:
                got = (1 << card) | (1 << target)
            else:
                got = before & CARD_MONTH_MASK[card]
                if got:
                    got |= 1 << card
            if got:
                self.field = before & ~got
                self.piles[p] |= got
            else:
                self.field = before | (1 << card)
        else:
            got = self._capture(p, card, target)
        if not got and before:
            self.declined[p] |= whole_months(before)
        ev = self.events
        if ev is not None:
            ev.append(
                Event(
                    "play",
                    p,
                    card,
                    got,
                    {"discard": True} if discard else {},
                )
            )
        # draw
        stock = self._stock
        if not stock:  # cannot happen with a full deck; be safe
            self._end_turn(p)
            return
        d = stock.pop()
        if self._plain:
            field_ = self.field
            m = field_ & CARD_MONTH_MASK[d]
            if not m:
                self.field = field_ | (1 << d)
                if ev is not None:
                    ev.append(Event("draw", p, d, 0))
                self._end_turn(p)
                return
            if m & (m - 1) == 0 or m.bit_count() == 3:
                got = m | (1 << d)
                self.field = field_ & ~got
                self.piles[p] |= got
                if ev is not None:
                    ev.append(Event("draw", p, d, got))
                self._end_turn(p)
                return
        choices = self._captures_for(d)
        if choices:
            self.drawn = d
            self.phase = Phase.TAKE
            if ev is not None:
                ev.append(Event("draw", p, d, 0, {"choice": [CODES[c] for c in choices]}))
            return
        got = self._capture(p, d, -1)
        if ev is not None:
            ev.append(Event("draw", p, d, got))
        self._end_turn(p)

    def _take_drawn(self, p: int, target: int) -> None:
        d = self.drawn
        self.drawn = -1
        got = self._capture(p, d, target)
        if self.events is not None:
            self.events.append(Event("take", p, d, got))
        self._end_turn(p)

    def _end_turn(self, p: int) -> None:
        called = self.koikoi_calls[p] > 0
        new = self.scorer.total(self.piles[p], self.month, called)
        self.scores[p] = new
        hands = self.hands
        improved = new > self.turn_score
        if improved:
            self.last_improver = p
            if self.events is not None:
                self.events.append(Event("yaku", p, None, 0, {"total": new}))
        if self._first_empty and not hands[p]:
            self._exhausted()
            return
        if improved:
            both_empty = not hands[0] and not hands[1]
            if both_empty or (not self._offer_last and not hands[p]) or self._limit_reached(p):
                self._stop(p, automatic=True)
                return
            self.phase = Phase.DECIDE
            return
        if not hands[0] and not hands[1]:
            self._exhausted()
            return
        self.current = 1 - p
        self.phase = Phase.PLAY

    def _limit_reached(self, p: int) -> bool:
        limit = self._limit
        if not limit:
            return False
        calls = self.koikoi_calls
        used = calls[0] + calls[1] if self._limit_round else calls[p]
        return used >= limit

    def _koikoi(self, p: int) -> None:
        calls = self.koikoi_calls
        calls[p] += 1
        if self._viewing_koikoi and calls[p] == 1:
            self.scores[p] = self.scorer.total(self.piles[p], self.month, True)
        self.called_scores[p] = self.scores[p]
        if self.events is not None:
            self.events.append(Event("koikoi", p, None, 0, {"calls": calls[p]}))
        hands = self.hands
        if not hands[0] and not hands[1]:  # only reachable if offered on the very last card
            self._exhausted()
            return
        q = 1 - p
        self.current = q if hands[q] else p
        self.phase = Phase.PLAY

    def _stop(self, p: int, automatic: bool = False) -> None:
        if self.events is not None:
            self.events.append(Event("stop", p, None, 0, {"automatic": automatic}))
        self._settle_as_stop(p, "stop")

    def _settle_as_stop(self, p: int, reason: str) -> None:
        settlement = self.scorer.settle_stop(
            p,
            self.piles[p],
            self.month,
            self.koikoi_calls,
            self.scores,
            self.called_scores,
            reason=reason,
        )
        self._finish(settlement)

    def _exhausted(self) -> None:
        rule = self.rules.end.exhausted
        dealer = self.dealer
        if self.events is not None:
            self.events.append(Event("exhausted"))
        if rule == "draw":
            self._finish(self.scorer.no_score("exhausted"))
        elif rule == "dealer_point":
            self._finish(self.scorer.award(dealer, self.rules.end.oya_ken, "dealer_point"))
        elif rule == "highest":
            s0, s1 = self.scores
            if s0 == 0 and s1 == 0:
                self._oya_ken()
            elif s0 == s1:
                self._settle_as_stop(dealer, "exhausted_highest")
            else:
                self._settle_as_stop(0 if s0 > s1 else 1, "exhausted_highest")
        else:  # last_yaku
            if self.last_improver is None:
                self._oya_ken()
            else:
                self._settle_as_stop(self.last_improver, "exhausted_last_yaku")

    def _oya_ken(self) -> None:
        oya_ken = self.rules.end.oya_ken
        if oya_ken:
            self._finish(self.scorer.award(self.dealer, oya_ken, "oya_ken"))
        else:
            self._finish(self.scorer.no_score("exhausted"))

    def _finish(self, settlement: Settlement) -> None:
        self.settlement = settlement
        self.phase = Phase.OVER
        if self.events is not None:
            self.events.append(
                Event("round_over", settlement.winner, None, 0, settlement.to_dict())
            )

    def finish_instant(self, settlement: Settlement) -> None:
        """End the round at the deal (instant hand)."""
        self._finish(settlement)

    # ------------------------------------------------------------- invariants

    def accounted(self) -> int:
        """Bitwise OR of every place a card can be; equals the full deck in a sound state."""
        stock = 0
        for c in self._stock:
            stock |= 1 << c
        drawn = (1 << self.drawn) if self.drawn >= 0 else 0
        return (
            self.hands[0]
            | self.hands[1]
            | self.field
            | self.piles[0]
            | self.piles[1]
            | (stock | drawn)
        )

    def card_count(self) -> int:
        """How many cards the state holds, counting each place separately (48 when sound)."""
        drawn = 1 if self.drawn >= 0 else 0
        return (
            self.hands[0].bit_count()
            + self.hands[1].bit_count()
            + self.field.bit_count()
            + self.piles[0].bit_count()
            + self.piles[1].bit_count()
            + len(self._stock)
            + drawn
        )


# ---------------------------------------------------------------------- deals


def _mask(deck: list[int], start: int, stop: int) -> int:
    m = 0
    for c in deck[start:stop]:
        m |= 1 << c
    return m


def redeal_condition(cards: int, conditions: tuple[str, ...]) -> str | None:
    """The first of ``conditions`` that ``cards`` (a hand or the field) meets, or None.

    Month by month without a loop: a card set holds month ``m`` in bits ``4m`` to
    ``4m + 3`` (one nibble), so summing bit pairs, then pairs of pairs, leaves each
    month's card count (0 to 4) in its own nibble.

    >>> from koikoi.game.cards import parse_cards
    >>> redeal_condition(parse_cards("1L 1R 1P1 1P2 2A"), ("four_of_a_month",))
    'four_of_a_month'
    >>> redeal_condition(parse_cards("1L 1R 2A 2R 3L 3R 4A 4R"), ("four_pairs",))
    'four_pairs'
    """
    if not conditions:
        return None
    pairs = cards - ((cards >> 1) & _NIBBLE_PAIR_LOW)
    counts = (pairs & _NIBBLE_PAIR_SUM) + ((pairs >> 2) & _NIBBLE_PAIR_SUM)
    for cond in conditions:
        # A count of 4 is the only one with bit 2 set; 3 and 4 plus one set it.
        if cond == "four_of_a_month" and counts & _NIBBLE_BIT2:
            return cond
        if cond == "three_of_a_month" and (counts + _NIBBLE_LOW) & _NIBBLE_BIT2:
            return cond
        # Exactly 2: bit 1 set and bit 0 clear (counts stop at 4, so bit 2 is clear then).
        if cond == "four_pairs" and ((counts >> 1) & ~counts & _NIBBLE_LOW).bit_count() == 4:
            return cond
    return None


def first_dealer_winner(a: int, b: int) -> int | None:
    """Who wins the first-dealer draw with cards ``a`` (player 0) and ``b`` (player 1).

    Earlier month wins; same month: higher kind (L > A > R > P); equal: ``None`` (draw again).
    """
    ma, mb = a // 4, b // 4
    if ma != mb:
        return 0 if ma < mb else 1
    ka, kb = KINDS[a], KINDS[b]
    if ka != kb:
        return 0 if ka > kb else 1
    return None


class Match:
    """A whole match between players 0 and 1.

    Args:
        rules: the rule set (default: nintendo).
        seed: seeds a fresh ``random.Random`` (ignored when ``rng`` is given).
        rng: the injected random generator for all chance (deals, coin flips).
        events: keep the event log (turn off for speed).
        decks: shuffled decks (card ids, 48 each) to deal first, in order, instead of
            shuffling (tests, set deals); when they run out, the generator shuffles.
    """

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        seed: int | None = None,
        rng: random.Random | None = None,
        events: bool = True,
        decks: list[list[int]] | None = None,
    ) -> None:
        self.rules = rules if rules is not None else get_rules("nintendo")
        self._preset_decks = [list(d) for d in decks] if decks else []
        if rng is None:
            if seed is None:
                seed = random.SystemRandom().randrange(2**63)
            rng = random.Random(seed)
        elif seed is not None:
            raise InvalidInputError("give either seed or rng to Match, not both")
        self.seed: int | None = seed
        self.rng = rng
        self.scorer = shared_scorer(self.rules)
        self._keep_events = events
        self.events: list[Event] = []
        self.scores = [self.rules.game.start_points] * 2
        self.settlements: list[Settlement] = []
        self.deals: list[list[int]] = []  # every shuffled deck, in order (redeals included)
        self.actions: list[int] = []
        self.round_number = 0
        self.winner: int | None = None
        self.is_over = False
        self.first_dealer: dict[str, Any] = {}
        """How the first dealer was chosen: method, winner, draws, dealer, leader."""
        self.dealer, self.leader, self.first_draw = self._first_dealer()
        self.round: Round
        self._start_round()

    # ------------------------------------------------------------ chance

    def _first_dealer(self) -> tuple[int, int, list[tuple[int, int]]]:
        game = self.rules.game
        draws: list[tuple[int, int]] = []
        if game.first_dealer == "random":
            winner = 0 if self.rng.random() < 0.5 else 1
            method = "random"
        else:
            method = "draw"
            while True:
                a, b = self.rng.sample(range(48), 2)
                draws.append((a, b))
                w = first_dealer_winner(a, b)
                if w is not None:
                    winner = w
                    break
        if game.dealer == "fixed":
            dealer, leader = 1 - winner, winner
        else:
            dealer, leader = winner, winner
        self.first_dealer = {
            "method": method,
            "winner": winner,
            "draws": [[CODES[a], CODES[b]] for a, b in draws],
            "dealer": dealer,
            "leader": leader,
        }
        if self._keep_events:
            self.events.append(
                Event(
                    "first_dealer",
                    winner,
                    None,
                    0,
                    {
                        "method": method,
                        "draws": [[CODES[a], CODES[b]] for a, b in draws],
                        "dealer": dealer,
                        "leader": leader,
                    },
                )
            )
        return dealer, leader, draws

    def _shuffle(self) -> list[int]:
        """A uniformly shuffled deck (Fisher-Yates on ``rng.random()``, fast and seedable)."""
        if self._preset_decks:
            deck = self._preset_decks.pop(0)
            if sorted(deck) != list(range(48)):
                raise InvalidInputError("a preset deck must hold each of the 48 cards once")
            self.deals.append(deck)
            return deck
        deck = list(range(48))
        rand = self.rng.random
        for i in range(47, 0, -1):
            j = int(rand() * (i + 1))
            deck[i], deck[j] = deck[j], deck[i]
        self.deals.append(deck)
        return deck

    def _start_round(self) -> None:
        """Deal the next round into ``self.round`` (an instant hand settles it at once)."""
        self.round_number += 1
        rules = self.rules
        deal = rules.deal
        for _ in range(MAX_REDEALS):
            deck = self._shuffle()
            dealer = self.dealer
            other = 1 - dealer
            hands = [0, 0]
            hands[dealer] = _mask(deck, 0, 8)
            hands[other] = _mask(deck, 8, 16)
            field_ = _mask(deck, 16, 24)
            # The draw's winner leads round 1 under a fixed dealer (docs/rules.md).
            first_fixed = rules.game.dealer == "fixed" and self.round_number == 1
            leader = (
                self.leader if rules.game.leader == "previous_winner" or first_fixed else dealer
            )
            rnd = Round(
                rules,
                hands=(hands[0], hands[1]),
                field=field_,
                stock=deck[24:],
                dealer=dealer,
                leader=leader,
                round_number=self.round_number,
                scorer=self.scorer,
                events=self._keep_events,
            )
            if self._keep_events:
                self.events.append(
                    Event(
                        "round_start",
                        None,
                        None,
                        0,
                        {
                            "round": self.round_number,
                            "month": rnd.month,
                            "dealer": dealer,
                            "leader": leader,
                            "field": format_cards(field_).split(),
                        },
                    )
                )
                for p in (0, 1):
                    self.events.append(Event("hand", p, None, hands[p], private_to=p))
            checks = ("hands", "field") if deal.check_order == "hands_first" else ("field", "hands")
            outcome: str | None = None
            for check in checks:
                if check == "field":
                    cond = redeal_condition(field_, deal.field_redeal)
                    if cond:
                        if self._keep_events:
                            self.events.append(
                                Event("redeal", None, None, 0, {"why": f"field {cond}"})
                            )
                        outcome = "redeal"
                        break
                else:
                    outcome = self._check_hands(rnd, hands)
                    if outcome:
                        break
            if outcome == "redeal":
                if deal.redeal_dealer == "swap":
                    self.dealer = 1 - self.dealer
                    self.leader = 1 - self.leader
                continue
            self.round = rnd
            if outcome == "instant":
                self._round_over()
            return
        raise RuntimeError("too many redeals in a row")  # pragma: no cover

    def _check_hands(self, rnd: Round, hands: list[int]) -> str | None:
        deal = self.rules.deal
        for p in (rnd.dealer, 1 - rnd.dealer):
            cond = redeal_condition(hands[p], deal.hand_redeal)
            if cond:
                if self._keep_events:
                    self.events.append(Event("redeal", p, None, 0, {"why": f"hand {cond}"}))
                return "redeal"
        instants = [self.scorer.instant(hands[0]), self.scorer.instant(hands[1])]
        holders = [p for p in (0, 1) if instants[p] is not None]
        if not holders:
            return None
        if len(holders) == 2:
            if self.rules.instant.both == "redeal":
                if self._keep_events:
                    self.events.append(
                        Event("redeal", None, None, 0, {"why": "both players hold an instant hand"})
                    )
                return "redeal"
            holders = [rnd.dealer]
        p = holders[0]
        result = instants[p]
        if result is None:  # pragma: no cover - holders only lists players with a result
            return None
        if self._keep_events:
            y: YakuScore = result.yaku[0]
            self.events.append(
                Event("instant", p, None, y.cards, {"yaku": y.name, "points": y.points})
            )
        rnd.finish_instant(self.scorer.award(p, result.total, "instant", yaku=result.yaku))
        return "instant"

    # ----------------------------------------------------------- step API

    @property
    def current(self) -> int:
        """The player to act."""
        return self.round.current

    @property
    def phase(self) -> Phase:
        return Phase.OVER if self.is_over else self.round.phase

    def legal_ids(self) -> list[int]:
        return [] if self.is_over else self.round.legal_ids()

    def legal_actions(self) -> list[Action]:
        return [] if self.is_over else self.round.legal_actions()

    def apply(self, action: Action | int) -> None:
        """Apply a legal action (checked). Raises :class:`IllegalActionError`, changing nothing."""
        if self.is_over:
            raise IllegalActionError("the match is over: no action is legal")
        before = len(self.round.events) if self.round.events is not None else 0
        self.round.apply(action)
        # The round accepted it, so it is a valid action or id.
        self._after_action(action if isinstance(action, int) else int(action.id), before)

    def apply_id(self, action_id: int) -> None:
        """Apply an action id without checking it (fast path)."""
        rnd = self.round
        if rnd.events is None:
            rnd.apply_id(action_id)
            self.actions.append(action_id)
            if rnd.phase is Phase.OVER:
                self._round_over()
            return
        before = len(rnd.events)
        rnd.apply_id(action_id)
        self._after_action(action_id, before)

    def _after_action(self, action_id: int, before: int) -> None:
        self.actions.append(action_id)
        rnd = self.round
        if rnd.events is not None and self._keep_events:
            self.events.extend(rnd.events[before:])
        if rnd.phase is Phase.OVER:
            self._round_over()

    def _round_over(self) -> None:
        rnd = self.round
        settlement = rnd.settlement
        if settlement is None:  # pragma: no cover - a finished round always has one
            raise RuntimeError("round over without a settlement")
        if rnd.events is not None and self._keep_events and settlement.reason == "instant":
            self.events.append(rnd.events[-1])
        self.settlements.append(settlement)
        for p in (0, 1):
            self.scores[p] += settlement.deltas[p]
        game = self.rules.game
        w = settlement.winner
        self.dealer = next_dealer(game, self.dealer, w)
        if game.leader == "previous_winner":
            if w is not None:
                self.leader = w
        else:
            self.leader = self.dealer
        if is_bust(game, self.scores) or self.round_number >= game.rounds:
            self._end_match(rnd.dealer)
            return
        self._start_round()

    def _end_match(self, last_dealer: int) -> None:
        self.winner = match_winner(self.rules.game, self.scores, last_dealer)
        self.is_over = True
        if self._keep_events:
            self.events.append(
                Event("match_over", self.winner, None, 0, {"scores": list(self.scores)})
            )

    # ------------------------------------------------------------ helpers

    def describe(self, action_id: int) -> str:
        return describe_action_id(action_id)

    def __repr__(self) -> str:
        """A summary: the rules, the seed, the round, the scores and who is to act.

        >>> Match(seed=7)
        <Match nintendo seed=7 round=1/12 scores=0/0 turn=1 phase=play actions=0>
        """
        seed = "" if self.seed is None else f" seed={self.seed}"
        state = (
            f"over winner={self.winner}"
            if self.is_over
            else f"turn={self.current} phase={self.phase.name.lower()}"
        )
        return (
            f"<Match {self.rules.name}{seed} round={self.round_number}/{self.rules.game.rounds} "
            f"scores={self.scores[0]}/{self.scores[1]} {state} actions={len(self.actions)}>"
        )


def next_dealer(game: GameRules, dealer: int, winner: int | None) -> int:
    """Who deals after a round that ``winner`` won (None: nobody), under
    ``game.dealer`` and ``game.dealer_after_draw``.

    >>> from koikoi.game.rules import get_rules
    >>> game = get_rules("nintendo").game
    >>> next_dealer(game, 0, 1), next_dealer(game, 0, None)  # a draw passes the deal here
    (1, 1)
    """
    if game.dealer != "winner":
        return dealer
    if winner is not None:
        return winner
    return 1 - dealer if game.dealer_after_draw == "swap" else dealer


def is_bust(game: GameRules, scores: Sequence[int]) -> bool:
    """Whether a player's score fell to 0 or below under ``game.start_points``."""
    return game.start_points > 0 and min(scores) <= 0


def match_winner(game: GameRules, scores: Sequence[int], last_dealer: int | None) -> int | None:
    """The winner of a finished match: the higher score; a tie goes to
    ``last_dealer`` under ``game.match_tie = "dealer"``, else None (a draw)."""
    s0, s1 = scores
    if s0 != s1:
        return 0 if s0 > s1 else 1
    if game.match_tie == "dealer":
        return last_dealer
    return None


def parse_seed(text: str) -> int:
    """A seed from the command line: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise InvalidInputError(f"seed must be a non-negative integer, not {text!r}") from None
    if value < 0:
        raise InvalidInputError(f"seed must be a non-negative integer, not {value}")
    return value

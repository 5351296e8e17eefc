"""The position notation: one line of text for one moment of a round, read and written.

This module is the notation only: text to a checked :class:`Position` of plain
fields (card sets, counts, scores) and back. It knows nothing of the engine, so
:class:`~koikoi.game.engine.Round` and :class:`~koikoi.game.views.PlayerView`
are built from it (``Round.from_position``, ``PlayerView.from_position``) and
write it (``Round.to_position``, ``PlayerView.to_position``). The fields and
the text are described in :mod:`koikoi.game.positions`, which also has
:func:`~koikoi.game.positions.position` (the text of a round, match or view).

>>> from koikoi.game.engine import Match
>>> text = Match(seed=1).round.to_position().text()
>>> p = parse_position(text)
>>> p.phase.name, p.hand_counts, p.stock_count
('PLAY', (8, 8), 24)
>>> parse_position(p.text()) == p
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from koikoi.game.actions import Phase
from koikoi.game.cards import CODES, FULL_DECK, MONTH_MASKS, card_list, parse_card
from koikoi.game.errors import InvalidInputError, RulesError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules
from koikoi.game.scoring import shared_scorer
from koikoi.game.tables import LIGHTNING, WILLOWS

__all__ = [
    "HAND_SIZE",
    "KEYS",
    "STOCK_SIZE",
    "Position",
    "PositionError",
    "parse_position",
]

KEYS: Final[tuple[str, ...]] = (
    "round",
    "dealer",
    "leader",
    "turn",
    "phase",
    "view",
    "hands",
    "field",
    "stock",
    "piles",
    "drawn",
    "score",
    "koikoi",
    "called",
    "improver",
    "declined",
    "plays",
    "match",
)
"""The fields of a position, in the canonical order."""
REQUIRED: Final[tuple[str, ...]] = ("round", "dealer", "turn", "phase", "hands", "field", "stock")
HAND_SIZE: Final = 8
STOCK_SIZE: Final = 24
_PHASES: Final[dict[str, Phase]] = {"play": Phase.PLAY, "take": Phase.TAKE, "decide": Phase.DECIDE}


class PositionError(InvalidInputError):
    """A position that cannot be read or cannot happen; the message names the problem."""


@dataclass(frozen=True, slots=True)
class Position:
    """A parsed and checked position (see the module docs for the fields).

    ``viewer`` is ``None`` for a full position, else the player whose view it is;
    then ``stock`` is ``None`` and the hidden hand is 0 (only ``hand_counts`` and
    ``stock_count`` are known).
    """

    rules: Rules
    round_number: int
    rounds: int
    dealer: int
    leader: int
    current: int
    phase: Phase
    viewer: int | None
    hands: tuple[int, int]
    hand_counts: tuple[int, int]
    field: int
    stock: tuple[int, ...] | None
    """Top card first; ``None`` in a view."""
    stock_count: int
    piles: tuple[int, int]
    drawn: int
    scores: tuple[int, int]
    koikoi_calls: tuple[int, int]
    called_scores: tuple[int, int]
    last_improver: int | None
    declined: tuple[int, int]
    """Card sets of whole months, as :attr:`Round.declined`."""
    match_scores: tuple[int, int] | None
    plays: tuple[tuple[int, int, int], ...] = ()
    """This round's hand plays, as :attr:`Round.plays` (empty when the text gives none)."""

    @property
    def is_view(self) -> bool:
        return self.viewer is not None

    @property
    def unseen(self) -> int:
        """The cards whose place the position does not give (a view's hidden cards)."""
        drawn = (1 << self.drawn) if self.drawn >= 0 else 0
        known = self.hands[0] | self.hands[1] | self.field | self.piles[0] | self.piles[1] | drawn
        if self.stock is not None:
            for c in self.stock:
                known |= 1 << c
        return FULL_DECK & ~known

    def deal(self, opponent_hand: int, stock: Sequence[int]) -> Position:
        """The full position of this view with its hidden cards placed as given (unchecked).

        Args:
            opponent_hand: the hidden hand, as many of :attr:`unseen` as it holds.
            stock: the rest of :attr:`unseen`, top card first.

        Raises:
            PositionError: for a full position, which hides nothing.
        """
        if self.viewer is None:
            raise PositionError("a full position hides no cards: there is nothing to deal")
        hands = [self.hands[0], self.hands[1]]
        hands[1 - self.viewer] = opponent_hand
        return replace(self, viewer=None, hands=(hands[0], hands[1]), stock=tuple(stock))

    def text(self) -> str:
        """The canonical text (what :func:`position` writes)."""
        return _format(self)

    def __str__(self) -> str:
        return _format(self)


# ---------------------------------------------------------------- writing


def _cards(mask: int) -> str:
    return ",".join(CODES[c] for c in card_list(mask)) if mask else "-"


def _months(mask: int) -> str:
    months = [str(m + 1) for m in range(12) if mask & MONTH_MASKS[m]]
    return ",".join(months) if months else "-"


def _format(p: Position) -> str:
    out = [
        p.rules.name,
        f"round={p.round_number}/{p.rounds}",
        f"dealer={p.dealer}",
    ]
    if p.leader != p.dealer:
        out.append(f"leader={p.leader}")
    out += [f"turn={p.current}", f"phase={p.phase.name.lower()}"]
    if p.viewer is not None:
        out.append(f"view={p.viewer}")
    hands = [_cards(p.hands[i]) if p.viewer in (None, i) else str(p.hand_counts[i]) for i in (0, 1)]
    out.append(f"hands={hands[0]}/{hands[1]}")
    out.append(f"field={_cards(p.field)}")
    if p.stock is None:
        out.append(f"stock={p.stock_count}")
    else:
        out.append("stock=" + (",".join(CODES[c] for c in p.stock) if p.stock else "-"))
    out.append(f"piles={_cards(p.piles[0])}/{_cards(p.piles[1])}")
    if p.drawn >= 0:
        out.append(f"drawn={CODES[p.drawn]}")
    out.append(f"score={p.scores[0]}/{p.scores[1]}")
    if p.koikoi_calls != (0, 0):
        out.append(f"koikoi={p.koikoi_calls[0]}/{p.koikoi_calls[1]}")
    if p.called_scores != (0, 0):
        out.append(f"called={p.called_scores[0]}/{p.called_scores[1]}")
    if p.last_improver is not None:
        out.append(f"improver={p.last_improver}")
    if p.declined != (0, 0):
        out.append(f"declined={_months(p.declined[0])}/{_months(p.declined[1])}")
    if p.plays:
        out.append("plays=" + ",".join(_play_text(play) for play in p.plays))
    if p.match_scores is not None:
        out.append(f"match={p.match_scores[0]}/{p.match_scores[1]}")
    return " ".join(out)


def _play_text(play: tuple[int, int, int]) -> str:
    player, card, field = play
    before = "+".join(CODES[c] for c in card_list(field)) if field else "-"
    return f"{player}:{CODES[card]}:{before}"


# ---------------------------------------------------------------- reading


def _player(key: str, value: str) -> int:
    if value not in ("0", "1"):
        raise PositionError(f"{key}={value!r}: a player is 0 or 1")
    return int(value)


def _int(key: str, value: str, *, low: int | None = 0) -> int:
    try:
        n = int(value)
    except ValueError:
        raise PositionError(f"{key}: {value!r} is not a whole number") from None
    if low is not None and n < low:
        raise PositionError(f"{key}: {n} is below {low}")
    return n


def _pair(key: str, value: str) -> tuple[str, str]:
    parts = value.split("/")
    if len(parts) != 2:
        raise PositionError(
            f"{key}={value!r}: expected two parts, player 0's and player 1's, 'A/B'"
        )
    return parts[0], parts[1]


def _int_pair(key: str, value: str, *, low: int | None = 0) -> tuple[int, int]:
    a, b = _pair(key, value)
    return _int(key, a, low=low), _int(key, b, low=low)


def _card_seq(key: str, value: str) -> list[int]:
    if value == "-":
        return []
    out: list[int] = []
    for token in value.split(","):
        if not token:
            raise PositionError(f"{key}={value!r}: an empty card code (two commas in a row?)")
        try:
            card = int(parse_card(token))
        except InvalidInputError as exc:
            raise PositionError(f"{key}: {exc}") from None
        if card in out:
            raise PositionError(f"{key}: card {CODES[card]} is listed twice")
        out.append(card)
    return out


def _card_set(key: str, value: str) -> int:
    mask = 0
    for c in _card_seq(key, value):
        mask |= 1 << c
    return mask


def _plays(value: str) -> tuple[tuple[int, int, int], ...]:
    """``plays=``: ``player:card:field`` items joined by commas (field cards by ``+``)."""
    out: list[tuple[int, int, int]] = []
    for n, item in enumerate(value.split(","), start=1):
        parts = item.split(":")
        if len(parts) != 3:
            raise PositionError(
                f"plays: item {n} {item!r} is not player:card:field (e.g. 0:1L:2P1+3L)"
            )
        player = _player(f"plays item {n}", parts[0])
        cards = _card_seq(f"plays item {n}", parts[1])
        if len(cards) != 1:
            raise PositionError(f"plays: item {n} {item!r} plays one card, not {len(cards)}")
        field = _card_set(f"plays item {n}'s field", parts[2].replace("+", ","))
        if field >> cards[0] & 1:
            raise PositionError(
                f"plays: item {n} plays {CODES[cards[0]]}, which its field already holds"
            )
        out.append((player, cards[0], field))
    return tuple(out)


def _month_set(key: str, value: str) -> int:
    if value == "-":
        return 0
    mask = 0
    for token in value.split(","):
        try:
            m = int(token)
        except ValueError:
            raise PositionError(f"{key}: {token!r} is not a month (1 to 12)") from None
        if not 1 <= m <= 12:
            raise PositionError(f"{key}: month {m} is not 1 to 12")
        mask |= MONTH_MASKS[m - 1]
    return mask


def _resolve_rules(name: str, rules: Rules | None) -> Rules:
    if rules is not None:
        if name != rules.name:
            raise PositionError(
                f"the position is for rules {name!r} but rules {rules.name!r} were given"
            )
        return rules
    try:
        return get_rules(name)
    except RulesError:
        raise PositionError(
            f"unknown rules {name!r}: the first word is a preset ({', '.join(PRESET_NAMES)}); "
            "for house rules, pass them (rules=..., or --rules FILE)"
        ) from None


def parse_position(text: str, *, rules: Rules | None = None) -> Position:
    """Read and check a position (full or view).

    Args:
        text: the position (see the module docs).
        rules: the rule set, needed when the position names house rules; when
            given, its name must be the position's first word.

    Raises:
        PositionError: the text cannot be read, or the position cannot happen;
            the message names the field and the problem.
    """
    if not isinstance(text, str):
        raise PositionError(f"a position is text, not {type(text).__name__}")
    words = text.split()
    if not words:
        raise PositionError("empty position: it starts with the rules' name")
    if "=" in words[0]:
        raise PositionError(
            f"a position starts with the rules' name (e.g. 'nintendo'), not {words[0]!r}"
        )
    found: dict[str, str] = {}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq or not value:
            raise PositionError(f"{word!r} is not a field: fields are key=value")
        if key not in KEYS:
            raise PositionError(f"unknown field {key!r}: allowed {', '.join(KEYS)}")
        if key in found:
            raise PositionError(f"field {key!r} is given twice")
        found[key] = value
    missing = [k for k in REQUIRED if k not in found]
    if missing:
        raise PositionError(f"missing field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    rule_set = _resolve_rules(words[0], rules)

    k_text, n_text = _pair("round", found["round"])
    round_number, rounds = _int("round", k_text, low=1), _int("round", n_text, low=1)
    if round_number > rounds:
        raise PositionError(f"round={round_number}/{rounds}: round {round_number} is past the last")
    dealer = _player("dealer", found["dealer"])
    leader = _player("leader", found["leader"]) if "leader" in found else dealer
    current = _player("turn", found["turn"])
    phase = _PHASES.get(found["phase"])
    if phase is None:
        raise PositionError(f"phase={found['phase']!r}: allowed {', '.join(_PHASES)}")
    viewer = _player("view", found["view"]) if "view" in found else None

    hand_texts = _pair("hands", found["hands"])
    hands = [0, 0]
    counts = [0, 0]
    for i in (0, 1):
        if viewer is not None and i != viewer:
            if not hand_texts[i].isdigit():
                raise PositionError(
                    f"hands: in player {viewer}'s view, player {i}'s hand is a count, "
                    f"not {hand_texts[i]!r}"
                )
            counts[i] = _int("hands", hand_texts[i])
        else:
            hands[i] = _card_set(f"player {i}'s hand", hand_texts[i])
            counts[i] = hands[i].bit_count()
    field = _card_set("field", found["field"])
    stock: tuple[int, ...] | None
    if viewer is None:
        stock = tuple(_card_seq("stock", found["stock"]))
        stock_count = len(stock)
    else:
        if not found["stock"].isdigit():
            raise PositionError(f"stock: in a view the stock is a count, not {found['stock']!r}")
        stock, stock_count = None, _int("stock", found["stock"])
    pile_texts = _pair("piles", found.get("piles", "-/-"))
    piles = (
        _card_set("player 0's pile", pile_texts[0]),
        _card_set("player 1's pile", pile_texts[1]),
    )
    drawn = -1
    if "drawn" in found:
        drawn_cards = _card_seq("drawn", found["drawn"])
        if len(drawn_cards) != 1:
            raise PositionError(f"drawn={found['drawn']!r}: one card")
        drawn = drawn_cards[0]
    calls = _int_pair("koikoi", found.get("koikoi", "0/0"))
    called = _int_pair("called", found.get("called", "0/0"))
    improver = _player("improver", found["improver"]) if "improver" in found else None
    declined_texts = _pair("declined", found.get("declined", "-/-"))
    declined = (
        _month_set("declined", declined_texts[0]),
        _month_set("declined", declined_texts[1]),
    )
    match = _int_pair("match", found["match"], low=None) if "match" in found else None
    plays = _plays(found["plays"]) if "plays" in found else ()

    month = (round_number - 1) % 12 + 1
    called_flags = (calls[0] > 0, calls[1] > 0)
    scorer = shared_scorer(rule_set)
    if "score" in found:
        scores = _int_pair("score", found["score"])
    else:
        scores = (
            scorer.total(piles[0], month, called_flags[0]),
            scorer.total(piles[1], month, called_flags[1]),
        )
    pos = Position(
        rules=rule_set,
        round_number=round_number,
        rounds=rounds,
        dealer=dealer,
        leader=leader,
        current=current,
        phase=phase,
        viewer=viewer,
        hands=(hands[0], hands[1]),
        hand_counts=(counts[0], counts[1]),
        field=field,
        stock=stock,
        stock_count=stock_count,
        piles=piles,
        drawn=drawn,
        scores=scores,
        koikoi_calls=calls,
        called_scores=called,
        last_improver=improver,
        declined=declined,
        match_scores=match,
        plays=plays,
    )
    _check(pos)
    return pos


# ---------------------------------------------------------------- checking


def _check(p: Position) -> None:
    """Raise :class:`PositionError` if ``p`` cannot happen in a round."""
    _check_cards(p)
    _check_phase(p)
    _check_counts(p)
    _check_piles(p)
    _check_scores(p)
    if p.plays:
        _check_plays(p)


def _check_plays(p: Position) -> None:
    """Plays given must be the whole round's: one per hand card played, the players
    taking turns from the leader, every card played or seen on a field now in a pile
    or on the field (cards leave the field only for a pile)."""
    for i in (0, 1):
        mine = sum(1 for play in p.plays if play[0] == i)
        if mine != HAND_SIZE - p.hand_counts[i]:
            raise PositionError(
                f"plays: player {i} has played {HAND_SIZE - p.hand_counts[i]} hand cards, "
                f"but {mine} of their plays are given"
            )
    table = p.field | p.piles[0] | p.piles[1]
    later = 0  # the cards played from item n on: a card gone from it was played before
    for _, card, _ in p.plays:
        later |= 1 << card
    for n, (player, card, field) in enumerate(p.plays, start=1):
        turn = p.leader if n % 2 else 1 - p.leader
        if player != turn:
            raise PositionError(
                f"plays: item {n} is player {player}'s, but player {turn} plays it "
                f"(the players take turns, player {p.leader} first)"
            )
        if not later >> card & 1:
            raise PositionError(f"plays: card {CODES[card]} is played twice")
        lost = (field | (1 << card)) & ~table
        if lost:
            raise PositionError(
                f"plays: item {n} has {CODES[card_list(lost)[0]]} played or on the field, "
                "but it is now neither on the field nor in a pile"
            )
        if field & later:
            raise PositionError(
                f"plays: item {n}'s field holds {CODES[card_list(field & later)[0]]}, "
                "a card still in a hand then (it is played at this item or later)"
            )
        later &= ~(1 << card)


def _check_cards(p: Position) -> None:
    places: list[tuple[str, int]] = [
        ("player 0's hand", p.hands[0]),
        ("player 1's hand", p.hands[1]),
        ("the field", p.field),
        ("player 0's pile", p.piles[0]),
        ("player 1's pile", p.piles[1]),
    ]
    if p.drawn >= 0:
        places.append(("the drawn card", 1 << p.drawn))
    if p.stock is not None:
        places.append(("the stock", sum(1 << c for c in p.stock)))
    seen: dict[int, str] = {}
    for name, mask in places:
        for c in card_list(mask):
            if c in seen:
                raise PositionError(f"card {CODES[c]} is in two places: {seen[c]} and {name}")
            seen[c] = name
    if p.stock is not None and len(seen) != 48:
        missing = " ".join(CODES[c] for c in range(48) if c not in seen)
        raise PositionError(f"a full position places all 48 cards; missing: {missing}")
    if p.stock is None:
        hidden = p.hand_counts[1 - (p.viewer or 0)] + p.stock_count
        if len(seen) + hidden != 48:
            raise PositionError(
                f"the view shows {len(seen)} cards and hides {hidden} "
                f"(the opponent's hand and the stock): {len(seen) + hidden}, not 48"
            )


def _check_counts(p: Position) -> None:
    n0, n1 = p.hand_counts
    for i, size in ((0, n0), (1, n1)):
        if size > HAND_SIZE:
            raise PositionError(f"player {i} holds {size} cards; a hand starts with {HAND_SIZE}")
    played = 2 * HAND_SIZE - n0 - n1
    if p.stock_count != STOCK_SIZE - played:
        raise PositionError(
            f"{played} hand cards have been played, so the stock holds {STOCK_SIZE - played} "
            f"cards (one drawn each turn), not {p.stock_count}"
        )
    lead, other = p.leader, 1 - p.leader
    turn_done = p.phase is not Phase.PLAY  # the player to act has already played this turn
    n = p.hand_counts
    n0, n1 = n
    if turn_done:
        expect_lead = n[other] - 1 if p.current == lead else n[other]
    else:
        expect_lead = n[other] if p.current == lead else n[other] - 1
    if n[lead] != expect_lead:
        stage = "has played this turn" if turn_done else "is to play"
        raise PositionError(
            f"hand sizes {n0}/{n1} do not fit: player {p.leader} led the round and player "
            f"{p.current} {stage}, so the leader should hold {max(expect_lead, 0)}"
        )
    if p.phase is Phase.PLAY and n[p.current] == 0:
        raise PositionError(f"player {p.current} is to play a hand card but holds none")


def _check_piles(p: Position) -> None:
    for i in (0, 1):
        pile = p.piles[i]
        if pile.bit_count() % 2:
            raise PositionError(
                f"player {i}'s pile holds {pile.bit_count()} cards: captures take cards "
                "in pairs (or four of a month), so a pile is even"
            )
        if not p.rules.play.wild_lightning:
            for m in range(12):
                k = (pile & MONTH_MASKS[m]).bit_count()
                if k % 2:
                    raise PositionError(
                        f"player {i}'s pile holds {k} card{'s' if k > 1 else ''} of month "
                        f"{m + 1}: without a wild card, captures take a month's cards in pairs"
                    )
    if {"four_of_a_month", "three_of_a_month"} & set(p.rules.deal.field_redeal):
        # Such a deal is redealt, and in play a card laid on three of its month takes them.
        for m in range(12):
            if (p.field & MONTH_MASKS[m]).bit_count() == 4:
                raise PositionError(
                    f"the field holds all four cards of month {m + 1}: under these rules "
                    "that deal is redealt, and in play the fourth card captures the three"
                )


def _check_phase(p: Position) -> None:
    rules = p.rules
    if p.phase is Phase.TAKE:
        if p.drawn < 0:
            raise PositionError("phase take: the drawn card waiting for its target is missing")
        if rules.play.wild_lightning and p.drawn == LIGHTNING:
            ok = p.field.bit_count() >= 2 and (p.field & WILLOWS).bit_count() != 3
        else:
            ok = (p.field & MONTH_MASKS[p.drawn // 4]).bit_count() == 2
        if not ok:
            raise PositionError(
                f"phase take: the drawn card {CODES[p.drawn]} has no choice of target on this "
                "field (a choice needs exactly two field cards of its month)"
            )
    elif p.drawn >= 0:
        raise PositionError(
            f"drawn={CODES[p.drawn]}: only phase take has a drawn card waiting, "
            f"not phase {p.phase.name.lower()}"
        )
    limit = rules.koikoi.limit
    calls = p.koikoi_calls
    if limit:
        used = calls[0] + calls[1] if rules.koikoi.limit_scope == "round" else max(calls)
        if used > limit:
            raise PositionError(f"koikoi={calls[0]}/{calls[1]}: the rules allow {limit} calls")
    if p.phase is Phase.DECIDE:
        me = p.current
        if p.scores[me] <= 0:
            raise PositionError(f"phase decide: player {me} has no yaku (score 0)")
        if p.last_improver != me:
            raise PositionError(f"phase decide: player {me}'s score just went up, so improver={me}")
        n = p.hand_counts
        if n[0] == 0 and n[1] == 0:
            raise PositionError("phase decide with both hands empty: the round stops by itself")
        if not rules.koikoi.offer_on_last_card and n[me] == 0:
            raise PositionError(
                f"phase decide with player {me}'s hand empty: these rules stop by themselves"
            )
        if limit:
            used = calls[0] + calls[1] if rules.koikoi.limit_scope == "round" else calls[me]
            if used >= limit:
                raise PositionError(
                    f"phase decide: player {me} has used the {limit} koi-koi call(s) allowed"
                )


def _check_scores(p: Position) -> None:
    scorer = shared_scorer(p.rules)
    month = (p.round_number - 1) % 12 + 1
    for i in (0, 1):
        if p.koikoi_calls[i] == 0 and p.called_scores[i] != 0:
            raise PositionError(
                f"called={p.called_scores[0]}/{p.called_scores[1]}: player {i} has not "
                "called koi-koi, so their called score is 0"
            )
        if p.phase is Phase.TAKE and i == p.current:
            continue  # the score is counted at the end of the turn
        total = scorer.total(p.piles[i], month, p.koikoi_calls[i] > 0)
        if total != p.scores[i]:
            raise PositionError(
                f"score={p.scores[0]}/{p.scores[1]}: player {i}'s pile makes {total} "
                f"point{'s' if total != 1 else ''} of yaku in month {month}, not {p.scores[i]}"
            )
    if p.last_improver is None and (p.scores[0] or p.scores[1]):
        raise PositionError(
            "a player has scored this round, so say who scored last (improver=0 or improver=1)"
        )

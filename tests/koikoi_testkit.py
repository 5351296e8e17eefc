"""The shared test kit: helpers that test modules import with ``from koikoi_testkit import ...``.

``tests/`` is on the import path (``pythonpath`` in pyproject's pytest options), so this is
an ordinary module; fixtures stay in the conftest.py files.

* Building rounds from card codes (:func:`make_round`), scripted play
  (:func:`play`), full snapshots of a round or match (:func:`snapshot`).
* :func:`rigged_match`: a match that deals chosen decks (written with
  :func:`deck`) and whose first-dealer draw or coin flip is scripted
  (:class:`RiggedRandom`).
* :func:`play_random_match`: a random legal match from a seed, checking on the
  way that a match that is not over always has a legal action.
* :func:`random_views`: the views of the player to act a few random moves into
  seeded matches, where there is a choice.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from koikoi.game.actions import parse_action
from koikoi.game.cards import CODES, FULL_DECK, card_list, format_cards, parse_card, parse_cards
from koikoi.game.engine import Match, Round
from koikoi.game.rules import Rules, get_rules
from koikoi.game.views import PlayerView, view_of

# ---------------------------------------------------------------- cards and rules


def cards(text: str) -> int:
    """A card set from codes, e.g. ``cards("1L 1P1")``."""
    return parse_cards(text)


def codes(text: str) -> list[int]:
    """Card indices from codes, in the given order."""
    return [int(parse_card(t)) for t in text.replace(",", " ").split()]


NO_POINTS: dict[str, int] = {
    f"points__{name}": 0
    for name in (
        "goko",
        "shiko",
        "ame_shiko",
        "sanko",
        "inoshikacho",
        "tane",
        "akatan",
        "aotan",
        "akatan_aotan",
        "tanzaku",
        "kasu",
        "hanami",
        "tsukimi",
        "tsukifuda",
    )
}


def only_yaku(rules: Rules | str = "nintendo", **keep: Any) -> Rules:
    """``rules`` with every yaku and instant hand switched off except ``keep``.

    ``keep`` uses ``replace`` keys, e.g. ``only_yaku("nintendo", points__hanami=5)``.
    """
    base = get_rules(rules) if isinstance(rules, str) else rules
    changes: dict[str, Any] = {**NO_POINTS, "instant__teshi": 0, "instant__kuttsuki": 0}
    changes.update(keep)
    return base.replace(**changes)


# ---------------------------------------------------------------- rounds


def make_round(
    rules: Rules | str = "nintendo",
    *,
    hand0: str = "",
    hand1: str = "",
    field: str = "",
    stock: str = "",
    dealer: int = 0,
    leader: int | None = None,
    round_number: int = 1,
    fill: bool = True,
    piles: tuple[str, str] = ("", ""),
) -> Round:
    """A round from card codes; ``stock`` is top card first.

    With ``fill`` the unused cards go to the bottom of the stock (in card order)
    so that the round holds all 48 cards. ``piles`` seeds the capture piles (and
    their scores, computed by the round's scorer) before play.
    """
    r = get_rules(rules) if isinstance(rules, str) else rules
    used = 0
    for part in (hand0, hand1, field, stock, *piles):
        mask = parse_cards(part)
        if used & mask:
            raise ValueError(f"a card is used twice in the scenario: {format_cards(used & mask)}")
        used |= mask
    top = codes(stock)
    if fill:
        top += card_list(FULL_DECK & ~used)
    rnd = Round(
        r,
        hands=(parse_cards(hand0), parse_cards(hand1)),
        field=parse_cards(field),
        stock=top,
        dealer=dealer,
        leader=leader,
        round_number=round_number,
    )
    if any(piles):
        rnd.piles = [parse_cards(piles[0]), parse_cards(piles[1])]
        rnd.scores = [rnd.scorer.total(p, rnd.month, False) for p in rnd.piles]
    return rnd


def play(state: Round | Match, *moves: str) -> None:
    """Apply actions written as text (``"play 3L"``, ``"take 2A"``, ``"koikoi"``), checked."""
    for move in moves:
        state.apply(parse_action(move))


def position_state(rnd: Round) -> tuple[object, ...]:
    """What a full position of ``rnd`` holds (no events, settlement or turn score):
    equal for a round and the round rebuilt from its position."""
    return (
        rnd.rules,
        rnd.round_number,
        rnd.month,
        rnd.dealer,
        rnd.leader,
        rnd.current,
        rnd.phase,
        tuple(rnd.hands),
        rnd.field,
        tuple(rnd.stock),
        tuple(rnd.piles),
        rnd.drawn,
        tuple(rnd.scores),
        tuple(rnd.koikoi_calls),
        tuple(rnd.called_scores),
        rnd.last_improver,
        tuple(rnd.declined),
        rnd.plays,
        tuple(rnd.legal_ids()),
    )


def snapshot(state: Round | Match) -> dict[str, Any]:
    """Every observable field of a round or match, as comparable plain values."""
    if isinstance(state, Match):
        return {
            "round": snapshot(state.round),
            "round_id": id(state.round),
            "scores": list(state.scores),
            "settlements": list(state.settlements),
            "events": len(state.events),
            "deals": [list(d) for d in state.deals],
            "actions": list(state.actions),
            "round_number": state.round_number,
            "dealer": state.dealer,
            "leader": state.leader,
            "winner": state.winner,
            "is_over": state.is_over,
        }
    return {
        "round_number": state.round_number,
        "month": state.month,
        "dealer": state.dealer,
        "leader": state.leader,
        "current": state.current,
        "phase": state.phase,
        "hands": list(state.hands),
        "field": state.field,
        "stock": list(state.stock),
        "piles": list(state.piles),
        "drawn": state.drawn,
        "scores": list(state.scores),
        "turn_score": state.turn_score,
        "koikoi_calls": list(state.koikoi_calls),
        "called_scores": list(state.called_scores),
        "last_improver": state.last_improver,
        "declined": list(state.declined),
        "settlement": state.settlement,
        "events": None if state.events is None else list(state.events),
        "legal": state.legal_ids(),
    }


# ---------------------------------------------------------------- rigged decks


def deck(
    dealer_hand: str,
    other_hand: str = "",
    field: str = "",
    stock: str = "",
    *,
    bottom: str = "",
) -> list[int]:
    """A 48-card deck in the engine's dealing order.

    The engine deals the first 8 cards to the dealer, the next 8 to the other
    player, 8 to the field, and the rest is the stock, top card first. Parts
    given short are filled with unused cards; ``bottom`` cards go to the very
    bottom of the stock (never drawn in a 16-turn round).

    >>> d = deck("3L 5P1", "6P1", "3P1 9P1", "9A 12P1")
    >>> d[0], d[8], d[16], d[24], len(d)
    (8, 22, 10, 32, 48)
    """
    parts = [codes(dealer_hand), codes(other_hand), codes(field), codes(stock)]
    low = codes(bottom)
    used = [c for part in [*parts, low] for c in part]
    twice = sorted({c for c in used if used.count(c) > 1})
    if twice:
        raise ValueError(f"a card is used twice in the deck: {' '.join(CODES[c] for c in twice)}")
    for name, part in zip(("dealer_hand", "other_hand", "field"), parts[:3], strict=True):
        if len(part) > 8:
            raise ValueError(f"{name} has {len(part)} cards, at most 8 are dealt there")
    # Spare cards: first those of months no given card belongs to, one month
    # after another (1L 2A 4A ... 1R 2R ...), so that filled parts neither match
    # the given cards nor hold four of a month or four pairs.
    named = {c // 4 for part in parts for c in part}
    spare = sorted(
        (c for c in range(48) if c not in used),
        key=lambda c: (c // 4 in named, c % 4, c // 4),
    )
    out: list[int] = []
    for part in parts[:3]:
        need = 8 - len(part)
        out += part + spare[:need]
        spare = spare[need:]
    out += parts[3] + spare + low
    return out


class RiggedRandom(random.Random):
    """A ``random.Random`` that scripts the first-dealer draw and the coin flip.

    ``draws`` are pairs of card codes returned by ``sample`` (player 0's card
    first); ``coins`` are the first values of ``random()``. After them it is an
    ordinary seeded generator.
    """

    def __init__(
        self,
        *,
        draws: Iterable[tuple[str, str]] = (),
        coins: Iterable[float] = (),
        seed: int = 0,
    ) -> None:
        super().__init__(seed)
        self.draws = [(int(parse_card(a)), int(parse_card(b))) for a, b in draws]
        self.coins = list(coins)

    def sample(self, population: Any, k: int, *, counts: Any = None) -> list[Any]:
        if self.draws and k == 2:
            return list(self.draws.pop(0))
        return super().sample(population, k, counts=counts)

    def random(self) -> float:
        if self.coins:
            return self.coins.pop(0)
        return super().random()


def rigged_match(
    rules: Rules | str,
    decks: Iterable[Sequence[int]] = (),
    *,
    draws: Iterable[tuple[str, str]] = (("1L", "2A"),),
    coins: Iterable[float] = (),
    seed: int = 0,
) -> Match:
    """A match dealing ``decks`` first (``Match(decks=...)``), then seeded shuffles.

    By default the first-dealer draw is 1L against 2A: player 0 wins it.
    """
    r = get_rules(rules) if isinstance(rules, str) else rules
    rng = RiggedRandom(draws=draws, coins=coins, seed=seed)
    return Match(r, rng=rng, decks=[list(d) for d in decks])


# ---------------------------------------------------------------- random play

MAX_STEPS = 10_000


def play_random_match(
    rules: Rules | str,
    seed: int,
    *,
    checked: bool = True,
    events: bool = True,
    on_step: Callable[[Match], None] | None = None,
) -> Match:
    """A whole match of uniformly random legal actions; the same seed, the same match.

    Asserts that a match that is not over always has a legal action. ``on_step``
    is called before every action (and once at the end).
    """
    r = get_rules(rules) if isinstance(rules, str) else rules
    m = Match(r, seed=seed, events=events)
    chooser = random.Random(seed ^ 0x5EED)
    for _ in range(MAX_STEPS):
        if on_step is not None:
            on_step(m)
        if m.is_over:
            return m
        ids = m.legal_ids()
        assert ids, (
            f"match not over but no legal action (round {m.round_number}, "
            f"phase {m.round.phase.name}, settlement {m.round.settlement})"
        )
        action = chooser.choice(ids)
        if checked:
            m.apply(action)
        else:
            m.apply_id(action)
    raise AssertionError("match did not end")


def random_views(count: int, seed: int) -> list[PlayerView]:
    """The view of the player to act 0 to 11 random moves into nintendo matches
    ``0 .. count - 1`` (the numbers of moves drawn from ``seed``), where that player
    has a choice (two legal actions or more); the same arguments, the same views.

    >>> views = random_views(10, seed=5)
    >>> 0 < len(views) <= 10 and all(len(v.legal_ids) > 1 for v in views)
    True
    """
    out = []
    rng = random.Random(seed)
    for match_seed in range(count):
        m = Match(get_rules("nintendo"), seed=match_seed)
        for _ in range(rng.randrange(0, 12)):
            if m.is_over:
                break
            m.apply_id(rng.choice(m.legal_ids()))
        if not m.is_over and len(m.legal_ids()) > 1:
            out.append(view_of(m, m.current))
    return out


def follows_its_guide(
    agent: Any,
    other: Any,
    views: list[PlayerView],
    scores: Callable[[PlayerView], dict[int, float]],
) -> tuple[int, int, int]:
    """How a search with a heavy prior follows its guide: over the ``views`` where the
    guide's ``scores`` have a clear best (a lead of 1 or more; an empty dict skips a
    view), ``(total, same,
    differs)``: the views counted, those where ``agent`` plays the guide's best, and
    those where ``other`` (without that guide) does not. View ``k`` is played with
    ``random.Random(k)``.
    """
    same = differs = total = 0
    for k, view in enumerate(views):
        values = scores(view)
        ranked = sorted(values.values(), reverse=True)
        if len(ranked) < 2 or ranked[0] - ranked[1] < 1.0:
            continue  # no scores (a view the guide does not judge), or no clear best
        best = max(values, key=values.__getitem__)
        total += 1
        same += agent.act(view, random.Random(k)) == best
        differs += other.act(view, random.Random(k)) != best
    return total, same, differs


def deal_round(rules: Rules | str, seed: int, *, events: bool = True) -> Round:
    """A round dealt from a seeded shuffle (no deal checks), as the engine deals it."""
    r = get_rules(rules) if isinstance(rules, str) else rules
    rng = random.Random(seed)
    d = list(range(48))
    rng.shuffle(d)
    dealer = rng.randrange(2)
    hands = [0, 0]
    hands[dealer] = sum(1 << c for c in d[0:8])
    hands[1 - dealer] = sum(1 << c for c in d[8:16])
    return Round(
        r,
        hands=(hands[0], hands[1]),
        field=sum(1 << c for c in d[16:24]),
        stock=d[24:],
        dealer=dealer,
        round_number=rng.randint(1, 14),
        events=events,
    )

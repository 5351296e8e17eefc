"""Properties of random legal play under every preset (Hypothesis draws the seeds).

* Round level: every card accounted for exactly once at every step; a state that
  is not over has a legal action; the legal actions are exactly those RULES.md
  §2.4-§2.5 and the ``play`` options allow (an independent reference below);
  every legal action applies; captures follow the matching rule; an illegal
  action is rejected and changes nothing; the koi-koi decision comes exactly
  when the score went up.
* Match level: totals are start points plus the settlement deltas; dealer,
  leader, round count, bust and match winner follow the rules; the same seed
  gives the same game.
* Views: a player's view never holds a hidden card (the opponent's hand, the
  stock), in its fields, its ``to_dict()`` or its history; a spectator sees no
  hand; ``determinize`` keeps every public part and all 48 cards.
* Fast paths: the engine's nibble arithmetic (``whole_months``,
  ``redeal_condition``, ``Round.declined``) agrees with the plain month-by-month
  definition on any card set; a match without events passes through the same
  states and settles the same as one with events.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from koikoi_testkit import deal_round, play_random_match
from koikoi_testkit import snapshot as full_snapshot

from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    NUM_ACTIONS,
    PLAY_TARGET_BASE,
    STOP_ID,
    TAKE_BASE,
)
from koikoi.game.cards import FULL_DECK, MONTH_MASKS, card_list, parse_card, parse_cards
from koikoi.game.engine import Event, Match, Phase, Round, redeal_condition, whole_months
from koikoi.game.errors import IllegalActionError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules
from koikoi.game.views import PlayerView, determinize, view_of

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
LIGHTNING = int(parse_card("11P"))
WILLOWS = MONTH_MASKS[10]


def month_of(card: int) -> int:
    return MONTH_MASKS[card // 4]


# ---------------------------------------------------------------- reference rules


def reference_play_ids(rules: Rules, hand: int, field: int) -> set[int]:
    """The legal hand plays, written from RULES.md §2.4-§2.5 and §4 ``[play]``."""
    wild = rules.play.wild_lightning

    def matches(c: int) -> int:
        if wild and c == LIGHTNING:
            return field
        return field & month_of(c)

    playable = card_list(hand)
    if rules.play.hand_card == "must_match" and any(matches(c) for c in playable):
        playable = [c for c in playable if matches(c)]
    out: set[int] = set()
    for c in playable:
        m = matches(c)
        if wild and c == LIGHTNING and (field & WILLOWS).bit_count() == 3:
            out.add(c)  # all four willows
        elif m.bit_count() == 2 or (wild and c == LIGHTNING and m.bit_count() > 2):
            out.update(PLAY_TARGET_BASE + 48 * c + t for t in card_list(m))
        else:
            out.add(c)  # 0, 1 or 3 matches: no choice
        if rules.play.hand_card == "any_or_discard" and m:
            out.add(DISCARD_BASE + c)
    return out


def reference_choices(rules: Rules, card: int, field: int) -> int:
    """Field cards a card arriving on ``field`` may choose between (0: no choice)."""
    if rules.play.wild_lightning and card == LIGHTNING:
        if (field & WILLOWS).bit_count() == 3 or field.bit_count() < 2:
            return 0
        return field
    m = field & month_of(card)
    return m if m.bit_count() == 2 else 0


def reference_capture(rules: Rules, card: int, field: int) -> int:
    """What a card arriving on ``field`` captures without a choice (0: laid)."""
    if rules.play.wild_lightning and card == LIGHTNING:
        willows = field & WILLOWS
        m = willows if willows.bit_count() == 3 else field
    else:
        m = field & month_of(card)
    return m | (1 << card) if m else 0


def reference_legal(rnd: Round) -> set[int]:
    if rnd.phase is Phase.PLAY:
        return reference_play_ids(rnd.rules, rnd.hands[rnd.current], rnd.field)
    if rnd.phase is Phase.TAKE:
        return {
            TAKE_BASE + t for t in card_list(reference_choices(rnd.rules, rnd.drawn, rnd.field))
        }
    if rnd.phase is Phase.DECIDE:
        return {KOIKOI_ID, STOP_ID}
    return set()


# ---------------------------------------------------------------- invariants


def assert_sound(rnd: Round) -> None:
    assert rnd.card_count() == 48
    assert rnd.accounted() == FULL_DECK
    stock = 0
    for c in rnd.stock:
        stock |= 1 << c
    drawn = 1 << rnd.drawn if rnd.drawn >= 0 else 0
    places = [rnd.hands[0], rnd.hands[1], rnd.field, rnd.piles[0], rnd.piles[1], stock, drawn]
    assert sum(p.bit_count() for p in places) == 48
    assert len(set(rnd.stock)) == len(rnd.stock)
    assert (rnd.drawn >= 0) == (rnd.phase is Phase.TAKE)


def snapshot(rnd: Round) -> tuple[Any, ...]:
    return (
        rnd.current,
        rnd.phase,
        tuple(rnd.hands),
        rnd.field,
        tuple(rnd.stock),
        tuple(rnd.piles),
        rnd.drawn,
        tuple(rnd.scores),
        rnd.turn_score,
        tuple(rnd.koikoi_calls),
        tuple(rnd.called_scores),
        rnd.last_improver,
        rnd.settlement,
        None if rnd.events is None else len(rnd.events),
    )


def check_step(rnd: Round, action: int) -> None:
    """Apply ``action`` to ``rnd`` and check what it did against the rules."""
    rules, p = rnd.rules, rnd.current
    phase, field, top = rnd.phase, rnd.field, (rnd.stock[0] if rnd.stock_count else -1)
    score_before = rnd.turn_score if phase is Phase.TAKE else rnd.scores[p]
    hand_before, calls_before = rnd.hands[p], list(rnd.koikoi_calls)
    events_before = len(rnd.events or [])
    rnd.apply(action)
    new_events = (rnd.events or [])[events_before:]
    assert_sound(rnd)
    if phase is Phase.DECIDE:
        if action == KOIKOI_ID:
            assert rnd.koikoi_calls[p] == calls_before[p] + 1
            assert rnd.phase in (Phase.PLAY, Phase.OVER)
        else:
            assert rnd.phase is Phase.OVER
            assert rnd.settlement is not None and rnd.settlement.winner == p
        return
    field_after_hand = field
    if phase is Phase.PLAY:
        # The hand card.
        if action < PLAY_TARGET_BASE:
            card, expected = action, reference_capture(rules, action, field)
        elif action < DISCARD_BASE:
            card, target = divmod(action - PLAY_TARGET_BASE, 48)
            expected = 1 << card | 1 << target
        else:
            card, expected = action - DISCARD_BASE, 0
        assert rnd.hands[p] == hand_before & ~(1 << card)
        play_event = new_events[0]
        assert (play_event.kind, play_event.player, play_event.card) == ("play", p, card)
        assert play_event.cards == expected
        field_after_hand = (field | 1 << card) & ~expected if expected else field | 1 << card
        # The draw: the top of the stock.
        draw_event = new_events[1]
        assert (draw_event.kind, draw_event.card) == ("draw", top)
        choices = reference_choices(rules, top, field_after_hand)
        if choices:
            assert rnd.phase is Phase.TAKE and rnd.drawn == top and rnd.current == p
            assert draw_event.cards == 0
            return
        assert draw_event.cards == reference_capture(rules, top, field_after_hand)
    else:  # TAKE
        target = action - TAKE_BASE
        take_event = new_events[0]
        assert take_event.kind == "take" and take_event.cards == 1 << target | 1 << take_event.card
    # End of the turn: the score and the koi-koi decision.
    called = rnd.koikoi_calls[p] > 0
    assert rnd.scores[p] == rnd.scorer.total(rnd.piles[p], rnd.month, called)
    went_up = rnd.scores[p] > score_before
    if rnd.phase is Phase.DECIDE:
        assert went_up and rnd.current == p
        assert rnd.hands[0] or rnd.hands[1]  # both empty: automatic stop
        if not rules.koikoi.offer_on_last_card:
            assert rnd.hands[p]
        if rules.koikoi.limit:
            calls = rnd.koikoi_calls
            used = calls[0] + calls[1] if rules.koikoi.limit_scope == "round" else calls[p]
            assert used < rules.koikoi.limit
        assert not (rules.end.first_empty_hand and not rnd.hands[p])
    elif rnd.phase is Phase.PLAY:
        assert not went_up
        assert rnd.current == 1 - p
    else:
        assert rnd.phase is Phase.OVER
        kinds = [e.kind for e in new_events]
        if went_up and "exhausted" not in kinds:
            stop = next(e for e in new_events if e.kind == "stop")
            assert stop.data["automatic"] is True and stop.player == p
        else:
            assert "exhausted" in kinds


def play_round_checked(rnd: Round, rng: random.Random) -> None:
    steps = 0
    while not rnd.is_over:
        assert_sound(rnd)
        legal = rnd.legal_ids()
        assert legal, "a round that is not over has a legal action"
        assert len(set(legal)) == len(legal)
        assert set(legal) == reference_legal(rnd)
        # Every legal action applies (checked) on a copy.
        for action in legal:
            copy = rnd.clone()
            copy.apply(action)
            assert_sound(copy)
        # Random illegal ids are rejected and change nothing.
        before = snapshot(rnd)
        for _ in range(3):
            bad = rng.randrange(-5, NUM_ACTIONS + 5)
            if bad in legal:
                continue
            with pytest.raises(IllegalActionError):
                rnd.apply(bad)
            assert snapshot(rnd) == before
        check_step(rnd, rng.choice(legal))
        steps += 1
        assert steps < 200
    assert rnd.legal_ids() == []
    assert rnd.settlement is not None
    assert_sound(rnd)


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_random_round_invariants(name: str, seed: int) -> None:
    rnd = deal_round(name, seed)
    play_round_checked(rnd, random.Random(seed))


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_random_round_invariants_with_wild_lightning(name: str, seed: int) -> None:
    rnd = deal_round(get_rules(name).replace(play__wild_lightning=True), seed)
    play_round_checked(rnd, random.Random(seed))


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS, limit=st.integers(1, 3), scope=st.sampled_from(["player", "round"]))
def test_random_round_invariants_with_a_koikoi_limit(
    name: str, seed: int, limit: int, scope: str
) -> None:
    rules = get_rules(name).replace(koikoi__limit=limit, koikoi__limit_scope=scope)
    rnd = deal_round(rules, seed)
    rng = random.Random(seed)
    # Prefer koi-koi so that the limit is reached.
    while not rnd.is_over:
        legal = rnd.legal_ids()
        assert legal
        action = KOIKOI_ID if KOIKOI_ID in legal else rng.choice(legal)
        check_step(rnd, action)
        calls = rnd.koikoi_calls
        assert (calls[0] + calls[1] if scope == "round" else max(calls)) <= limit


# ---------------------------------------------------------------- match level


def round_summaries(m: Match) -> Iterator[tuple[dict[str, Any], Event, dict[str, Any] | None]]:
    """(the played deal's round_start data, its round_over event, the next round_start data)."""
    starts: list[dict[str, Any]] = []
    pending: Event | None = None
    last_start: dict[str, Any] | None = None
    for e in m.events:
        if e.kind == "round_start":
            if pending is not None and last_start is not None:
                yield last_start, pending, e.data
                pending = None
            last_start = e.data
            starts.append(e.data)
        elif e.kind == "round_over":
            pending = e
    if pending is not None and last_start is not None:
        yield last_start, pending, None


def check_match(m: Match) -> None:
    rules = m.rules
    game = rules.game
    assert m.is_over and m.phase is Phase.OVER and m.legal_ids() == []
    # Totals: start points plus the settlement deltas.
    for p in (0, 1):
        assert m.scores[p] == game.start_points + sum(s.deltas[p] for s in m.settlements)
    if game.start_points > 0:
        assert sum(m.scores) == 2 * game.start_points  # zero-sum
        for s in m.settlements:
            assert s.deltas[0] + s.deltas[1] == 0
    else:
        for s in m.settlements:
            assert min(s.deltas) == 0
    for s in m.settlements:
        if s.winner is None:
            assert s.points == 0 and s.deltas == (0, 0)
        else:
            assert s.deltas[s.winner] == s.points
    # Rounds, bust.
    n = len(m.settlements)
    assert m.round_number == n
    busted = game.start_points > 0 and min(m.scores) <= 0
    assert n == game.rounds or (busted and n < game.rounds)
    if game.start_points > 0:
        running = [game.start_points] * 2
        for s in m.settlements[:-1]:
            running = [running[0] + s.deltas[0], running[1] + s.deltas[1]]
            assert min(running) > 0  # the match did not go on after a bust
    # Winner.
    s0, s1 = m.scores
    if s0 != s1:
        assert m.winner == (0 if s0 > s1 else 1)
    elif game.match_tie == "draw":
        assert m.winner is None
    else:
        assert m.winner == m.round.dealer
    assert m.events[-1].kind == "match_over" and m.events[-1].data["scores"] == m.scores
    # One round_over event per settlement, in order.
    overs = [e for e in m.events if e.kind == "round_over"]
    assert [e.data for e in overs] == [s.to_dict() for s in m.settlements]
    # Dealer and leader of the next round.
    first = m.events[0].data
    assert m.events[0].kind == "first_dealer"
    for played, over, nxt in round_summaries(m):
        if game.leader == "dealer" and not (game.dealer == "fixed" and played["round"] == 1):
            assert played["leader"] == played["dealer"]
        if nxt is None:
            continue
        w = over.data["winner"]
        if game.dealer == "fixed":
            assert nxt["dealer"] == first["dealer"] or rules.deal.redeal_dealer == "swap"
        elif w is not None:
            assert nxt["dealer"] == w
        elif game.dealer_after_draw == "swap":
            assert nxt["dealer"] == 1 - played["dealer"]
        else:
            assert nxt["dealer"] == played["dealer"]
        if game.leader == "dealer":
            assert nxt["leader"] == nxt["dealer"]
        elif w is not None:
            assert nxt["leader"] == w
        else:
            assert nxt["leader"] == played["leader"]
    starts = [e.data for e in m.events if e.kind == "round_start"]
    assert starts[0]["dealer"] == first["dealer"]
    # Under a fixed dealer the draw's winner leads round 1 whatever game.leader says
    # (RULES.md §2.1); game.leader governs the later rounds.
    assert starts[0]["leader"] == first["leader"]
    assert len(starts) == len(m.deals)
    assert [s["round"] for s in starts] == sorted(s["round"] for s in starts)


def check_match_step(m: Match) -> None:
    if m.is_over:
        return
    rnd = m.round
    assert_sound(rnd)
    assert rnd.round_number == m.round_number
    assert not rnd.is_over
    assert set(m.legal_ids()) == reference_legal(rnd)


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_random_match_invariants(name: str, seed: int) -> None:
    m = play_random_match(name, seed, on_step=check_match_step)
    check_match(m)


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_random_match_unchecked_apply_agrees(name: str, seed: int) -> None:
    a = play_random_match(name, seed)
    b = play_random_match(name, seed, checked=False)
    assert a.actions == b.actions
    assert a.settlements == b.settlements and a.scores == b.scores and a.winner == b.winner


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_same_seed_same_game(name: str, seed: int) -> None:
    a = play_random_match(name, seed)
    b = play_random_match(name, seed)
    assert a.deals == b.deals
    assert a.actions == b.actions
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]
    assert [e.private_to for e in a.events] == [e.private_to for e in b.events]
    assert a.settlements == b.settlements
    assert a.scores == b.scores and a.winner == b.winner
    # Replaying the recorded actions on a fresh match with the same seed.
    c = Match(get_rules(name), seed=seed)
    for action in a.actions:
        c.apply(action)
    assert c.is_over and c.scores == a.scores and c.deals == a.deals


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_illegal_match_actions_change_nothing(name: str, seed: int) -> None:
    rng = random.Random(seed)

    def poke(m: Match) -> None:
        if rng.random() > 0.1:
            return
        before = (
            id(m.round),
            tuple(snapshot(m.round)),
            list(m.scores),
            len(m.events),
            len(m.actions),
            m.round_number,
            m.is_over,
        )
        legal = set(m.legal_ids())
        bad = rng.randrange(-3, NUM_ACTIONS + 3)
        if bad in legal:
            return
        with pytest.raises(IllegalActionError):
            m.apply(bad)
        after = (
            id(m.round),
            tuple(snapshot(m.round)),
            list(m.scores),
            len(m.events),
            len(m.actions),
            m.round_number,
            m.is_over,
        )
        assert after == before

    play_random_match(name, seed, on_step=poke)


# ---------------------------------------------------------------- views


def card_tokens(value: Any) -> int:
    """Every card named anywhere in plain data (codes as whole words), as a set."""
    out = 0
    if isinstance(value, dict):
        for k, v in value.items():
            out |= card_tokens(k) | card_tokens(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            out |= card_tokens(v)
    elif isinstance(value, str):
        for word in value.replace(",", " ").split():
            with contextlib.suppress(ValueError):
                out |= parse_card(word).bit
    return out


def event_cards(e: Event) -> int:
    out = e.cards
    if e.card is not None:
        out |= 1 << e.card
    return out | card_tokens(e.data)


def hidden_from(m: Match, player: int | None) -> int:
    rnd = m.round
    stock = 0
    for c in rnd.stock:
        stock |= 1 << c
    if player is None:
        return rnd.hands[0] | rnd.hands[1] | stock
    return rnd.hands[1 - player] | stock


def check_view(m: Match, view: PlayerView, player: int | None) -> None:
    rnd = m.round
    hidden = hidden_from(m, player)
    assert view.player == player
    # Own hand only.
    if player is None:
        assert view.hand == 0
        assert view.legal_ids == ()
    else:
        assert view.hand == rnd.hands[player]
        if player == m.current and not m.is_over:
            assert list(view.legal_ids) == m.legal_ids()
        else:
            assert view.legal_ids == ()
    # The card-set fields hold no hidden card.
    for mask in (view.hand, view.field, view.piles[0], view.piles[1]):
        assert mask & hidden == 0
    if view.drawn >= 0:
        assert not hidden >> view.drawn & 1
    assert view.hand_counts == (rnd.hands[0].bit_count(), rnd.hands[1].bit_count())
    assert view.stock_count == len(rnd.stock)
    if player is not None:
        assert view.unseen == hidden
        assert view.unseen.bit_count() == view.opponent_hand_count + view.stock_count
    # Nor does its plain form. (Once the match is over the last round's hands are
    # no secret: an instant hand is shown; the stock still is.)
    if m.is_over:
        hidden = sum(1 << c for c in rnd.stock)
    data = view.to_dict()
    assert card_tokens(data) & hidden == 0
    assert parse_cards(data["hand"]) == view.hand
    assert "stock" not in data or not isinstance(data["stock"], list)
    # Nor its history: private events are the viewer's own; this deal's events
    # reveal nothing hidden now.
    for e in view.history:
        assert e.private_to is None or (player is not None and e.private_to == player)
        if e.kind == "hand":
            assert player is not None and e.player == player and e.private_to == player
    starts = [i for i, e in enumerate(view.history) if e.kind == "round_start"]
    current_deal = view.history[starts[-1] :] if starts else view.history
    for e in current_deal:
        assert event_cards(e) & hidden == 0, e
    for s in view.settlements:
        assert s in m.settlements


def check_determinize(m: Match, view: PlayerView, rng: random.Random) -> None:
    rnd = m.round
    d = determinize(view, rng)
    assert d.card_count() == 48 and d.accounted() == FULL_DECK
    assert view.player is not None
    me, opp = view.player, 1 - view.player
    assert d.hands[me] == view.hand
    assert d.hands[opp].bit_count() == view.hand_counts[opp]
    assert d.hands[opp] & ~view.unseen == 0
    assert len(d.stock) == view.stock_count
    public = (
        "field",
        "drawn",
        "current",
        "phase",
        "dealer",
        "leader",
        "round_number",
        "month",
        "turn_score",
        "last_improver",
    )
    for name in public:
        assert getattr(d, name) == getattr(rnd, name), name
    assert d.piles == rnd.piles
    assert d.scores == rnd.scores
    assert d.koikoi_calls == rnd.koikoi_calls
    assert d.called_scores == rnd.called_scores
    if view.legal_ids:
        assert list(d.legal_ids()) == list(view.legal_ids)
    # The determinized round plays to its end.
    steps = 0
    while not d.is_over:
        d.apply(rng.choice(d.legal_ids()))
        steps += 1
        assert steps < 200
    assert d.card_count() == 48 and d.settlement is not None


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_views_never_hold_hidden_cards(name: str, seed: int) -> None:
    rules = get_rules(name).replace(game__rounds=3)
    rng = random.Random(seed + 1)

    def look(m: Match) -> None:
        for player in (0, 1, None):
            view = view_of(m, player)
            check_view(m, view, player)
            if player is not None and not m.is_over and rng.random() < 0.3:
                check_determinize(m, view, rng)

    play_random_match(rules, seed, on_step=look)


# ---------------------------------------------------------------- many matches


def play_many(name: str, seeds: range) -> dict[str, int]:
    """Play random matches; count round endings by reason."""
    reasons: dict[str, int] = {}
    for seed in seeds:
        m = play_random_match(name, seed, checked=False, events=seed % 2 == 0)
        assert m.is_over
        for p in (0, 1):
            assert m.scores[p] == m.rules.game.start_points + sum(
                s.deltas[p] for s in m.settlements
            )
        for s in m.settlements:
            reasons[s.reason] = reasons.get(s.reason, 0) + 1
    return reasons


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_fifty_random_matches(name: str) -> None:
    reasons = play_many(name, range(50))
    rules = get_rules(name)
    assert reasons.get("stop", 0) > 0
    if rules.instant.teshi or rules.instant.kuttsuki:
        assert reasons.get("instant", 0) > 0  # instant hands are met, and the match goes on


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESET_NAMES)
def test_thousand_random_matches(name: str) -> None:
    play_many(name, range(1000, 2000))


# ---------------------------------------------------------------- any rule set

RULE_CHANGES = st.fixed_dictionaries(
    {
        "game__rounds": st.integers(1, 4),
        "game__start_points": st.sampled_from([0, 0, 5, 30]),
        "game__first_dealer": st.sampled_from(["draw", "random"]),
        "game__dealer": st.sampled_from(["winner", "fixed"]),
        "game__leader": st.sampled_from(["dealer", "previous_winner"]),
        "game__dealer_after_draw": st.sampled_from(["same", "swap"]),
        "game__match_tie": st.sampled_from(["draw", "dealer"]),
        "deal__check_order": st.sampled_from(["hands_first", "field_first"]),
        "deal__field_redeal": st.lists(
            st.sampled_from(["four_of_a_month", "four_pairs", "three_of_a_month"]), unique=True
        ).map(tuple),
        "deal__hand_redeal": st.lists(
            st.sampled_from(["four_of_a_month", "four_pairs"]), unique=True
        ).map(tuple),
        "deal__redeal_dealer": st.sampled_from(["same", "swap"]),
        "instant__both": st.sampled_from(["dealer", "redeal"]),
        "play__hand_card": st.sampled_from(["any", "any_or_discard", "must_match"]),
        "play__wild_lightning": st.booleans(),
        "koikoi__limit": st.integers(0, 2),
        "koikoi__limit_scope": st.sampled_from(["player", "round"]),
        "koikoi__offer_on_last_card": st.booleans(),
        "end__exhausted": st.sampled_from(["draw", "highest", "last_yaku", "dealer_point"]),
        "end__first_empty_hand": st.booleans(),
        "end__oya_ken": st.integers(0, 6),
    }
)


@given(base=st.sampled_from(PRESET_NAMES), changes=RULE_CHANGES, seed=SEEDS)
def test_random_matches_under_any_rule_set(base: str, changes: dict[str, Any], seed: int) -> None:
    rules = get_rules(base).replace(**changes)
    m = play_random_match(rules, seed, on_step=check_match_step)
    check_match(m)
    rnd = deal_round(rules, seed)
    play_round_checked(rnd, random.Random(seed))


# ------------------------------------------------- nibble arithmetic and events off

REDEAL_CONDITIONS = ("four_of_a_month", "three_of_a_month", "four_pairs")
# Any card set, drawn month by month (each month any of its 16 subsets), so that
# every count from 0 to 4 turns up in many months at once.
CARD_SETS = st.lists(st.integers(0, 15), min_size=12, max_size=12).map(
    lambda nibbles: sum(n << (4 * m) for m, n in enumerate(nibbles))
)


def reference_whole_months(cards: int) -> int:
    """Every card of each month ``cards`` touches, month by month."""
    out = 0
    for mask in MONTH_MASKS:
        if cards & mask:
            out |= mask
    return out


def reference_redeal_condition(cards: int, conditions: tuple[str, ...]) -> str | None:
    """The first condition ``cards`` meets, from each month's card count (RULES.md §2.2)."""
    counts = [(cards & mask).bit_count() for mask in MONTH_MASKS]
    for cond in conditions:
        if cond == "four_of_a_month" and 4 in counts:
            return cond
        if cond == "three_of_a_month" and max(counts) >= 3:
            return cond
        if cond == "four_pairs" and counts.count(2) == 4:
            return cond
    return None


@given(cards=st.one_of(CARD_SETS, st.integers(0, FULL_DECK)))
def test_whole_months_is_the_union_of_the_touched_months(cards: int) -> None:
    assert whole_months(cards) == reference_whole_months(cards)


@given(
    cards=st.one_of(CARD_SETS, st.integers(0, FULL_DECK)),
    conditions=st.lists(st.sampled_from(REDEAL_CONDITIONS), unique=True).map(tuple),
)
def test_redeal_condition_agrees_with_month_counts(cards: int, conditions: tuple[str, ...]) -> None:
    assert redeal_condition(cards, conditions) == reference_redeal_condition(cards, conditions)


def test_redeal_condition_meets_each_condition_at_its_edge() -> None:
    four = parse_cards("1L 1R 1P1 1P2")
    three = parse_cards("2A 2R 2P1")
    pairs = parse_cards("3L 3R 4A 4R 5A 5R 6A 6R")
    assert redeal_condition(four, ("four_of_a_month",)) == "four_of_a_month"
    assert redeal_condition(three, ("four_of_a_month",)) is None
    assert redeal_condition(three, ("three_of_a_month",)) == "three_of_a_month"
    assert redeal_condition(four, ("three_of_a_month",)) == "three_of_a_month"
    assert redeal_condition(pairs, ("four_pairs",)) == "four_pairs"
    assert redeal_condition(pairs | parse_cards("7A 7R"), ("four_pairs",)) is None
    assert redeal_condition(pairs, ("four_of_a_month", "three_of_a_month")) is None
    assert redeal_condition(four | three, ("three_of_a_month", "four_of_a_month")) == (
        "three_of_a_month"
    )


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(seed=SEEDS)
def test_declined_months_follow_the_laid_hand_cards(name: str, seed: int) -> None:
    """``Round.declined`` gains, month by month, the field of every hand play that captured
    nothing (the ``play`` event with no cards)."""
    rnd = deal_round(name, seed)
    chooser = random.Random(seed)
    expected = [0, 0]
    while not rnd.is_over:
        field_before, logged = rnd.field, len(rnd.events or [])
        rnd.apply(chooser.choice(rnd.legal_ids()))
        for event in (rnd.events or [])[logged:]:
            if event.kind == "play" and not event.cards:
                assert event.player is not None
                expected[event.player] |= reference_whole_months(field_before)
        assert rnd.declined == expected


def comparable(m: Match) -> dict[str, Any]:
    """Everything a match shows except its event log (and the round's identity)."""
    state = full_snapshot(m)
    del state["events"], state["round_id"]
    del state["round"]["events"]
    state["plays"] = m.round.plays
    state["first_dealer"] = m.first_dealer
    state["first_draw"] = m.first_draw
    return state


def assert_events_off_plays_the_same(rules: Rules, seed: int) -> None:
    """A match without events, given the actions of the same match with events, passes
    through the same states and settles the same."""
    on = Match(rules, seed=seed)
    off = Match(rules, seed=seed, events=False)
    chooser = random.Random(seed)
    steps = 0
    while True:
        assert comparable(off) == comparable(on)
        if on.is_over:
            break
        action = chooser.choice(on.legal_ids())
        on.apply(action)
        off.apply_id(action)
        steps += 1
    assert off.is_over and off.winner == on.winner and off.settlements == on.settlements
    assert off.events == [] and off.round.events is None
    assert on.events[-1].kind == "match_over" and steps == len(on.actions)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_events_off_plays_the_same_thirty_seeded_matches(name: str) -> None:
    rules = get_rules(name)
    for seed in range(30):
        assert_events_off_plays_the_same(rules, seed)


@given(base=st.sampled_from(PRESET_NAMES), changes=RULE_CHANGES, seed=SEEDS)
def test_events_off_plays_the_same_under_any_rule_set(
    base: str, changes: dict[str, Any], seed: int
) -> None:
    assert_events_off_plays_the_same(get_rules(base).replace(**changes), seed)

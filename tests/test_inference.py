"""Opponent-hand inference from their plays (koikoi.agents.inference) and the public
record of plays it reads (Round.plays, PlayerView.plays)."""

from __future__ import annotations

import math
import random
import sys

import pytest
from koikoi_testkit import make_round, play

from koikoi.agents.inference import (
    DEFAULT_MODEL,
    PlayModel,
    log_weights,
    opponent_hands,
    past_plays,
    play_value,
)
from koikoi.game.cards import card_list, parse_card, parse_cards
from koikoi.game.engine import CARD_MONTH_MASK, Match, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView, determinize, view_of, view_of_round


def _missed_bright() -> Round:
    """Player 1 captured a Plain of April while the Crane (1L) lay on the field."""
    rnd = make_round(
        hand0="2P1 5A 6A 7A 8L 9A 10A 11A",
        hand1="4P2 8P1 8P2 12P1 12P2 12P3 2A 3R",
        field="1L 4P1 9P1 10P1 5P1 6P1 7P1 11P",
        stock="3P1 3L",
    )
    play(rnd, "play 2P1")  # player 0 lays; draws 3P1 (a lay)
    play(rnd, "play 4P2")  # player 1 takes a Plain, leaving the Crane
    return rnd


def _marginals(pool: list[int]) -> dict[int, float]:
    counts: dict[int, int] = {}
    for hand in pool:
        for c in card_list(hand):
            counts[c] = counts.get(c, 0) + 1
    return {c: n / len(pool) for c, n in counts.items()}


def test_rounds_record_their_plays_publicly() -> None:
    rnd = _missed_bright()
    first_field = parse_cards("1L 4P1 9P1 10P1 5P1 6P1 7P1 11P")
    assert [(p, c) for p, c, _ in rnd.plays] == [(0, parse_card("2P1")), (1, parse_card("4P2"))]
    assert rnd.plays[0][2] == first_field
    # The second play was made on the field after the first turn (2P1 and 3P1 laid).
    assert rnd.plays[1][2] == first_field | parse_cards("2P1 3P1")
    copy = rnd.clone()
    play(copy, "play 5A")
    assert len(copy.plays) == 3 and len(rnd.plays) == 2
    view = view_of_round(rnd, 0)
    assert view.plays == rnd.plays
    # A re-deal keeps them (the view of the re-dealt round is the same view).
    assert view_of_round(determinize(view, random.Random(1)), 0) == view


def test_each_round_starts_with_no_plays() -> None:
    m = Match(seed=8)
    first = m.round
    while m.round is first and not m.is_over:
        m.apply(m.legal_ids()[0])
    if not m.is_over:
        assert m.round.plays == () or all(len(p) == 3 for p in m.round.plays)
        assert view_of(m, m.current).plays == m.round.plays
        assert len(m.round.plays) <= 1


def test_past_plays_list_the_cards_held_then() -> None:
    view = view_of_round(_missed_bright(), 0)
    [only] = past_plays(view, 1)
    assert only.card == parse_card("4P2")
    assert only.later == 1 << parse_card("4P2")
    assert only.field & (1 << parse_card("1L"))
    assert [p.card for p in past_plays(view, 0)] == [parse_card("2P1")]


def test_play_values_follow_the_model() -> None:
    field = parse_cards("1L 4P1")
    bonus = DEFAULT_MODEL.capture_bonus
    assert play_value(field, parse_card("1P1")) == 1 + 20 + bonus
    assert play_value(field, parse_card("4P2")) == 1 + 1 + bonus
    assert play_value(field, parse_card("3L")) == -20  # laid
    three = parse_cards("4A 4R 4P1")
    assert play_value(three, parse_card("4P2")) == 1 + 10 + 5 + 1 + bonus


def _sparse(moves: tuple[str, ...]) -> Round:
    """A field of five months; player 0 takes the 9 and lays the 12 it draws, then
    player 1 makes ``moves``."""
    rnd = make_round(
        hand0="9A 5A 6A 7A 8L 2A 3L 11L",
        hand1="4P2 8P1 8P2 12P1 12P2 3R 2R 6R",
        field="1L 4P1 9P1 10P1 11P 10R 4R 1P2",
        stock="12L 7P1",
    )
    play(rnd, "play 9A", *moves)
    return rnd


def _capturing(view: PlayerView, field: int) -> tuple[list[int], list[int]]:
    unseen = card_list(view.unseen)
    takes = [c for c in unseen if field & CARD_MONTH_MASK[c]]
    return takes, [c for c in unseen if c not in takes]


def test_a_missed_bright_makes_its_months_cards_unlikely() -> None:
    rnd = _sparse(("play 4P2 4P1",))  # player 1 takes a Plain, leaving the Crane (1L)
    view = view_of_round(rnd, 0)
    pool = opponent_hands(view, random.Random(3), 4000)
    assert pool is not None and len(pool) == 4000
    k = view.hand_counts[1]
    assert all(h & ~view.unseen == 0 and h.bit_count() == k for h in pool)
    uniform = k / view.unseen.bit_count()
    seen = _marginals(pool)
    crane_mates = [parse_card(c) for c in ("1R", "1P1")]
    for c in crane_mates:
        assert seen.get(c, 0.0) < 0.8 * uniform, c
    # Cards of a month that was not on the field are more likely than the Crane's mates.
    _, lays = _capturing(view, view.plays[1][2])
    assert min(seen.get(c, 0.0) for c in lays) > max(seen.get(c, 0.0) for c in crane_mates)


def test_a_lay_makes_the_fields_months_unlikely() -> None:
    rnd = _sparse(("play 8P1",))  # player 1 lays with five months on the field
    view = view_of_round(rnd, 0)
    pool = opponent_hands(view, random.Random(4), 4000)
    assert pool is not None
    uniform = view.hand_counts[1] / view.unseen.bit_count()
    seen = _marginals(pool)
    takes, lays = _capturing(view, view.plays[1][2])
    assert takes and lays
    assert max(seen.get(c, 0.0) for c in takes) < uniform
    assert min(seen.get(c, 0.0) for c in lays) > uniform


@pytest.mark.parametrize("numpy", [True, False], ids=["numpy", "python"])
def test_the_chains_sample_the_exact_posterior(
    numpy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Late in a round few hands are possible: the sampled marginals match the exact
    posterior, computed over every hand with :func:`log_weights`."""
    from itertools import combinations

    if not numpy:
        monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy raises ImportError
    rng = random.Random(12)
    checked = 0
    for seed in range(40):
        m = Match(seed=seed, events=False)
        while not m.is_over and not (
            m.round.phase.name == "PLAY" and m.round.hands[1 - m.current].bit_count() == 2
        ):
            ids = m.legal_ids()
            m.apply(ids[rng.randrange(len(ids))])
        if m.is_over:
            continue
        view = view_of(m, m.current)
        plays = past_plays(view, view.opponent)
        unseen = card_list(view.unseen)
        if not plays or len(unseen) > 16:
            continue
        hands = list(combinations(range(len(unseen)), 2))
        weights = [math.exp(w) for w in log_weights(plays, unseen, hands)]
        total = sum(weights)
        exact = dict.fromkeys(unseen, 0.0)
        for h, w in zip(hands, weights, strict=True):
            for j in h:
                exact[unseen[j]] += w / total
        pool = opponent_hands(view, random.Random(seed), 6000)
        assert pool is not None
        seen = _marginals(pool)
        for c in unseen:
            assert abs(seen.get(c, 0.0) - exact[c]) < 0.05, (seed, c)
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_log_weights_rank_hands_by_their_missed_captures() -> None:
    view = view_of_round(_sparse(("play 4P2 4P1",)), 0)
    plays = past_plays(view, 1)
    unseen = card_list(view.unseen)
    pos = {c: i for i, c in enumerate(unseen)}
    plain = [pos[parse_card(c)] for c in ("8P1", "8P2", "3R", "2R", "12P1", "12P2", "6R")]
    with_crane_mate = [pos[parse_card("1P1")], *plain[1:]]
    a, b = log_weights(plays, unseen, [plain, with_crane_mate])
    assert a > b
    # Without noise only the normaliser differs: the ratio is that of the two sums.
    assert DEFAULT_MODEL.noise == 0
    t = DEFAULT_MODEL.temperature
    [only] = plays
    fixed = math.exp(play_value(only.field, only.card) / t)

    def norm(cards: list[int]) -> float:
        return fixed + sum(math.exp(play_value(only.field, unseen[j]) / t) for j in cards)

    assert a - b == pytest.approx(math.log(norm(with_crane_mate)) - math.log(norm(plain)))


def test_sampling_is_seeded_and_works_without_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    view = view_of_round(_missed_bright(), 0)
    fast = opponent_hands(view, random.Random(9), 3000)
    assert fast == opponent_hands(view, random.Random(9), 3000)
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy raises ImportError
    slow = opponent_hands(view, random.Random(9), 3000)
    assert slow is not None and fast is not None
    assert slow == opponent_hands(view, random.Random(9), 3000)
    a, b = _marginals(fast), _marginals(slow)
    for c in card_list(view.unseen):
        assert abs(a.get(c, 0.0) - b.get(c, 0.0)) < 0.08, c


def test_nothing_to_infer_gives_no_pool() -> None:
    m = Match(seed=2)
    view = view_of(m, m.current)  # nobody has played yet
    assert opponent_hands(view, random.Random(1), 10) is None
    rnd = _missed_bright()
    from koikoi.game.positions import position

    # A position carries the plays (plays=): the same view, the same posterior.
    text = position(rnd, player=0)
    again = PlayerView.from_position(text)
    assert again.plays == rnd.plays != ()
    pool = opponent_hands(again, random.Random(1), 10)
    assert pool is not None
    assert pool == opponent_hands(view_of_round(rnd, 0), random.Random(1), 10)
    # Without its plays= field, a view has no plays to infer from.
    bare = " ".join(w for w in text.split() if not w.startswith("plays="))
    assert PlayerView.from_position(bare).plays == ()
    assert opponent_hands(PlayerView.from_position(bare), random.Random(1), 10) is None


def test_bad_arguments_are_clear_errors() -> None:
    view = view_of_round(_missed_bright(), 0)
    with pytest.raises(InvalidInputError, match="hands must be 1 or more"):
        opponent_hands(view, random.Random(1), 0)
    with pytest.raises(InvalidInputError, match="temperature must be above 0"):
        PlayModel(temperature=0.0)
    with pytest.raises(InvalidInputError, match="capture_bonus must be a number"):
        PlayModel(capture_bonus=math.nan)
    spectator = view_of_round(_missed_bright(), None)
    with pytest.raises(InvalidInputError, match="spectator"):
        opponent_hands(spectator, random.Random(1), 5)


def test_determinize_deals_the_given_opponent_hand() -> None:
    view = view_of_round(_missed_bright(), 0)
    pool = opponent_hands(view, random.Random(5), 3)
    assert pool is not None
    det = determinize(view, random.Random(1), opponent_hand=pool[0])
    assert det.hands[1] == pool[0]
    assert view_of_round(det, 0) == view
    wrong = pool[0] ^ (1 << card_list(pool[0])[0])  # one card short
    with pytest.raises(ValueError, match="opponent_hand must be"):
        determinize(view, random.Random(1), opponent_hand=wrong)


def test_search_players_redeal_from_their_pool() -> None:
    from koikoi.agents.mcts import MCTSAgent

    view = view_of_round(_sparse(("play 8P1",)), 0)
    plays = MCTSAgent(iterations=1, infer="plays")
    pool = plays.hand_pool(view, random.Random(2))
    assert pool is not None and len(set(pool)) > 1
    for seed in range(20):
        det = plays.redeal(view, random.Random(seed), pool)
        assert det.hands[1] in pool
        assert view_of_round(det, 0) == view
    assert MCTSAgent(iterations=1, infer="lays").hand_pool(view, random.Random(2)) is None
    assert MCTSAgent(iterations=1, infer=False).hand_pool(view, random.Random(2)) is None
    # Without a pool, the declined months go to the opponent's hand last.
    lays = MCTSAgent(iterations=1, infer="lays")
    det = lays.redeal(view, random.Random(0), None)
    declined = view.declined[1] & view.unseen
    assert declined and not det.hands[1] & declined

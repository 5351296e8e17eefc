"""Koi-koi decisions that decide the match: playouts that know the match, and the choice.

The position of issue #31: the last round of an 8-round koikoi-japan match, the
expert dealing, 16-44 down (transferred points: stopping for 5 makes it 21-39,
the match lost), a 5-point yaku (sanko) just made with 5R 5P2 10P1 10P2 left in
hand, the opponent holding 5 cards, 17 in the stock. Only koi-koi can still win
the match (15 points a win, 14 a draw). And its mirror, 44-16, where stopping
wins the match for certain.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from koikoi import kernel
from koikoi.agents.expert import ExpertAgent, match_candidates
from koikoi.agents.mcts import MatchUtility
from koikoi.game.actions import KOIKOI_ID, STOP_ID
from koikoi.game.engine import Round
from koikoi.game.positions import parse_position
from koikoi.game.views import PlayerView

needs_numba = pytest.mark.skipif(not kernel.available(), reason="numba is not installed")

POSITION = (
    "koikoi-japan round=8/8 dealer=0 turn=0 phase=decide"
    " hands=5R,5P2,10P1,10P2/2P2,3P2,4A,4P2,5A"
    " field=3R,7R,11R,10A,10R,12L,9A,2A"
    " stock=5P1,6R,6P2,7A,7P1,7P2,8A,8P2,9R,9P1,9P2,11L,11A,11P,12P1,12P2,12P3"
    " piles=1L,1P1,3L,3P1,8L,8P1,6A,6P1/1R,1P2,2R,2P1,4R,4P1 improver=0"
)
BEHIND = POSITION + " match=16/44"
AHEAD = POSITION + " match=44/16"
ITERATIONS = 400


def _view(text: str) -> PlayerView:
    return PlayerView.from_position(parse_position(text), player=0)


def test_the_positions_are_as_described() -> None:
    rnd = Round.from_position(BEHIND)
    assert rnd.rules.name == "koikoi-japan" and rnd.rules.game.start_points == 30
    assert rnd.dealer == 0 and rnd.current == 0 and rnd.phase.name == "DECIDE"
    assert list(rnd.scores) == [5, 0]
    assert rnd.hands[0].bit_count() == 4
    assert rnd.hands[1].bit_count() == 5 and len(rnd.stock) == 17
    view = _view(BEHIND)
    assert (view.round_number, view.rounds, view.match_scores) == (8, 8, (16, 44))


@needs_numba
@pytest.mark.parametrize("seed", [0, 1])
def test_behind_koikoi_is_the_only_chance(seed: int) -> None:
    view = _view(BEHIND)
    detail = ExpertAgent(iterations=ITERATIONS).evaluate_detail(view, random.Random(seed))
    # Stopping loses the match for certain (21-39).
    assert detail[STOP_ID].equity == 0.0 and detail[STOP_ID].points == 5.0
    # The playouts play on for the 15 points the match needs, so koi-koi's chance shows
    # (the playouts that stopped at the first new yaku valued it at 0.000).
    koikoi = detail[KOIKOI_ID].equity
    assert koikoi is not None and koikoi > 0.01
    assert ExpertAgent(iterations=ITERATIONS).act(view, random.Random(seed)) == KOIKOI_ID


@needs_numba
@pytest.mark.parametrize("seed", [0, 1])
def test_ahead_stopping_wins_the_match(seed: int) -> None:
    view = _view(AHEAD)
    detail = ExpertAgent(iterations=ITERATIONS).evaluate_detail(view, random.Random(seed))
    assert detail[STOP_ID].equity == 1.0  # 49-11
    assert ExpertAgent(iterations=ITERATIONS).act(view, random.Random(seed)) == STOP_ID


# ------------------------------------------------------------------ the choice


def _choice(view: PlayerView, values: dict[int, float], points: dict[int, float]) -> int:
    """What the expert plays in ``view`` when its search gives these values."""

    class Fixed(ExpertAgent):
        def _search(self, *args: object, **kwargs: object) -> tuple[dict[int, float], ...]:
            return dict(values), dict(points)

    return Fixed(iterations=1).act(view, random.Random(0))


def test_points_never_choose_an_action_without_a_chance() -> None:
    view = _view(BEHIND)
    # Koi-koi won a few playouts, stopping none: the stop's 5 points must not count.
    assert _choice(view, {KOIKOI_ID: 0.002, STOP_ID: 0.0}, {KOIKOI_ID: -3.0, STOP_ID: 5.0}) == (
        KOIKOI_ID
    )
    # No playout of either won: stopping loses for certain, koi-koi cannot do worse.
    assert _choice(view, {KOIKOI_ID: 0.0, STOP_ID: 0.0}, {KOIKOI_ID: -3.0, STOP_ID: 5.0}) == (
        KOIKOI_ID
    )


def test_a_stop_that_wins_the_match_is_taken() -> None:
    # Every playout of koi-koi won too, with more points: only an estimate.
    view = _view(AHEAD)
    assert _choice(view, {KOIKOI_ID: 1.0, STOP_ID: 1.0}, {KOIKOI_ID: 11.0, STOP_ID: 5.0}) == (
        STOP_ID
    )


def test_match_candidates_between_card_plays() -> None:
    last = MatchUtility([0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0])
    assert match_candidates([1, 2, 3], {1: 0.0, 2: 0.003, 3: 0.0}, last) == [2]
    assert match_candidates([1, 2, 3], {1: 1.0, 2: 0.999, 3: 1.0}, last) == [1, 3]
    assert match_candidates([1, 2], {1: 0.0, 2: 0.0}, last) == [1, 2]
    assert match_candidates([1, 2], {1: 0.4, 2: 0.5}, last) == [1, 2]
    # A match already decided whatever happens: the points decide.
    flat = MatchUtility([1.0, 1.0, 1.0])
    assert match_candidates([KOIKOI_ID, STOP_ID], {KOIKOI_ID: 1.0, STOP_ID: 1.0}, flat) == [
        KOIKOI_ID,
        STOP_ID,
    ]


def test_points_still_break_ties_of_equity() -> None:
    view = _view(AHEAD)
    # Neither end reached: equal equity, the points decide (as before).
    values = {KOIKOI_ID: 0.5, STOP_ID: 0.5}
    assert _choice(view, values, {KOIKOI_ID: 2.0, STOP_ID: 5.0}) == STOP_ID
    assert _choice(view, values, {KOIKOI_ID: 8.0, STOP_ID: 5.0}) == KOIKOI_ID


# --------------------------------------------------------------- the playouts


@needs_numba
def test_set_needs_reads_the_points_each_side_needs() -> None:
    from koikoi.kernel import _compiled as impl

    state = np.zeros(impl.STATE_SIZE, dtype=np.int64)
    # Last round, 28 down under transferred points: 14 net points draw, 15 win.
    span = 30
    table = [0.0 if d < 14 else 0.5 if d == 14 else 1.0 for d in range(-span, span + 1)]
    util = kernel.utility_table((float(span), *table))
    impl.set_needs(state, util, 0)
    assert (state[impl.S_NEED0], state[impl.S_NEED1]) == (14, 0)
    impl.set_needs(state, util, 1)
    assert (state[impl.S_NEED0], state[impl.S_NEED1]) == (0, 14)
    # The mirror: the opponent needs 14 for a draw; any stop of ours keeps the win.
    mirror = [1.0 - v for v in reversed(table)]
    impl.set_needs(state, kernel.utility_table((float(span), *mirror)), 0)
    assert (state[impl.S_NEED0], state[impl.S_NEED1]) == (0, 14)
    # Every result moves the equity (a round to go), or no utility: no need.
    smooth = [0.5 + d / (4 * span) for d in range(-span, span + 1)]
    impl.set_needs(state, kernel.utility_table((float(span), *smooth)), 0)
    assert (state[impl.S_NEED0], state[impl.S_NEED1]) == (0, 0)
    impl.set_needs(state, kernel.utility_table(None), 0)
    assert (state[impl.S_NEED0], state[impl.S_NEED1]) == (0, 0)


@needs_numba
@pytest.mark.parametrize("policy", ["greedy", "yaku", "tactical", "bold", "soft"])
def test_a_playout_plays_on_after_a_yaku_when_the_match_needs_more(policy: str) -> None:
    from koikoi.kernel import _compiled as impl

    rnd = Round.from_position(BEHIND)
    st = kernel.encode_round(rnd)
    rules = kernel.encode_rules(rnd.rules)
    buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
    code = kernel.policy_code(policy)

    def first_action(need: int) -> int:
        state = st.state.copy()
        state[impl.S_NEED0] = need
        n = impl.legal_actions(state, rules, buf)
        return int(impl.choose_action(state, rules, buf, n, kernel.rng_state(1), code))

    assert first_action(15) == KOIKOI_ID  # a stop wins 5: the match needs 15
    assert first_action(5) == STOP_ID  # a stop for 5 is enough
    assert first_action(0) == STOP_ID  # no match context: stop at the first yaku
    # A whole playout with the match context calls koi-koi and plays on.
    state = st.state.copy()
    state[impl.S_NEED0] = 15
    record = np.full(64, -1, dtype=np.int64)
    played = impl.play_out(state, st.stock.copy(), rules, buf, kernel.rng_state(2), code, record)
    assert record[0] == KOIKOI_ID and played > 1
    assert state[impl.S_CALLS0] >= 1


def test_behind_the_match_needs_15_points() -> None:
    utility = MatchUtility.of_view(_view(BEHIND))
    assert utility is not None
    assert (utility(5), utility(13), utility(14), utility(15)) == (0.0, 0.0, 0.5, 1.0)

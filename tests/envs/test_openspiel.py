"""The OpenSpiel game: OpenSpiel's random simulation checks, chance, resampling, a search bot."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from koikoi.envs.openspiel import FILLER, KoiKoiGame, KoiKoiState  # noqa: E402
from koikoi.game.engine import Match  # noqa: E402
from koikoi.game.errors import InvalidInputError  # noqa: E402
from koikoi.game.positions import position  # noqa: E402
from koikoi.game.rules import get_rules  # noqa: E402
from koikoi.game.views import determinize, view_of  # noqa: E402
from koikoi.kernel.encoding import SIZE, encode, info_state_string  # noqa: E402


def _deal(state: Any, rng: random.Random) -> None:
    """Resolve chance nodes at random until a player acts or the game ends."""
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(rng.choices(actions, probs)[0])


def _playing_state(params: dict[str, str], seed: int, steps: int = 0) -> Any:
    game = pyspiel.load_game("koikoi", params)
    rng = random.Random(seed)
    while True:
        state = game.new_initial_state()
        _deal(state, rng)
        for _ in range(steps):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
            _deal(state, rng)
        if not state.is_terminal():
            return state


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "leaflet"},
        {"rules": "nintendo", "episode": "match", "reward": "win"},
        {"rules": "koikoi-japan", "episode": "match", "reward": "net"},
        {"rules": "modern-hanafuda", "episode": "round", "reward": "points"},
    ],
)
def test_openspiel_random_simulation(params: dict[str, str]) -> None:
    game = pyspiel.load_game("koikoi", params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)


def test_game_facts() -> None:
    game = pyspiel.load_game("koikoi", {"rules": "leaflet", "episode": "match", "reward": "win"})
    assert game.num_distinct_actions() == 2450
    assert game.max_chance_outcomes() == 48
    assert game.num_players() == 2
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert game.information_state_tensor_shape() == [SIZE]
    assert game.observation_tensor_shape() == [SIZE]
    assert game.max_game_length() == 6 * 48  # leaflet: six rounds
    points = pyspiel.load_game("koikoi", {"rules": "nintendo"})
    assert points.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM  # loser loses 0


def test_chance_deals_the_deck_card_by_card() -> None:
    game = pyspiel.load_game("koikoi", {"rules": "nintendo"})
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(0)  # player 0 wins the first-dealer choice
    deck = list(FILLER)  # hands and field of eight months each: no redeal, no instant hand
    for i, card in enumerate(deck[:47]):
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 48 - i
        assert all(p == pytest.approx(1 / (48 - i)) for _, p in outcomes)
        assert card in dict(outcomes)
        state.apply_action(card)
    assert not state.is_chance_node()
    rnd = state.round
    dealer = rnd.dealer
    assert rnd.hands[dealer] == sum(1 << c for c in deck[:8])
    assert rnd.hands[1 - dealer] == sum(1 << c for c in deck[8:16])
    assert rnd.field == sum(1 << c for c in deck[16:24])
    assert rnd.stock == deck[24:]


def test_a_match_deals_every_round_by_chance() -> None:
    game = pyspiel.load_game("koikoi", {"rules": "leaflet", "episode": "match", "reward": "net"})
    rng = random.Random(5)
    state = game.new_initial_state()
    chance_nodes = 0
    rounds_seen = set()
    while not state.is_terminal():
        if state.is_chance_node():
            chance_nodes += 1
            state.apply_action(rng.choice(state.chance_outcomes())[0])
        else:
            rounds_seen.add(state.round.round_number)
            state.apply_action(rng.choice(state.legal_actions()))
    assert chance_nodes >= 1 + 6 * 47  # the first dealer, then a deck per round (leaflet: 6)
    assert len(rounds_seen) >= 5  # (a round settled at the deal has no decision)
    returns = state.returns()
    assert returns[0] == -returns[1]
    assert "over round=6/6" in str(state)


def test_round_returns_are_the_settlement() -> None:
    for reward in ("points", "net", "win"):
        game = pyspiel.load_game("koikoi", {"rules": "nintendo", "reward": reward})
        rng = random.Random(9)
        state = game.new_initial_state()
        _deal(state, rng)
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        s = state.round.settlement
        d0, d1 = s.deltas
        expected = {
            "points": [d0, d1],
            "net": [d0 - d1, d1 - d0],
            "win": [0, 0] if s.winner is None else ([1, -1] if s.winner == 0 else [-1, 1]),
        }[reward]
        assert state.returns() == expected


def test_tensors_and_strings_are_the_encoding_of_the_view() -> None:
    state = _playing_state({"rules": "leaflet"}, seed=3, steps=4)
    for p in (0, 1):
        view = state.view(p)
        assert np.array_equal(np.asarray(state.information_state_tensor(p)), encode(view))
        assert np.array_equal(np.asarray(state.observation_tensor(p)), encode(view))
        assert state.information_state_string(p) == info_state_string(view)
        assert state.observation_string(p) == info_state_string(view)
    # During a deal only public facts show.
    fresh = pyspiel.load_game("koikoi", {"rules": "leaflet"}).new_initial_state()
    fresh.apply_action(1)
    fresh.apply_action(7)
    assert "dealt=1" in fresh.information_state_string(0)
    assert not any(fresh.information_state_tensor(0))


def test_resample_keeps_the_information_state_and_re_deals_the_rest() -> None:
    state = _playing_state({"rules": "nintendo", "episode": "match"}, seed=7, steps=6)
    p = state.current_player()
    key = state.information_state_string(p)
    tensor = np.asarray(state.information_state_tensor(p))
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    changed = 0
    for _ in range(10):
        other = state.resample_from_infostate(p, sampler)
        assert isinstance(other, KoiKoiState)
        assert other.information_state_string(p) == key
        assert np.array_equal(np.asarray(other.information_state_tensor(p)), tensor)
        assert other.legal_actions() == state.legal_actions()
        assert other.round.hands[p] == state.round.hands[p]
        changed += other.round.hands[1 - p] != state.round.hands[1 - p]
        # The re-dealt state plays on to the end of the match.
        rng = random.Random(1)
        while not other.is_terminal():
            if other.is_chance_node():
                other.apply_action(rng.choice(other.chance_outcomes())[0])
            else:
                other.apply_action(rng.choice(other.legal_actions()))
    assert changed >= 5
    assert state.information_state_string(p) == key  # the original is untouched


@pytest.mark.parametrize("player", [0, 1])
def test_information_state_hides_the_opponents_hand_and_the_stock(player: int) -> None:
    m = Match(get_rules("leaflet"), seed=40, events=False)
    rng = random.Random(40)
    for _ in range(5):
        m.apply_id(rng.choice(m.legal_ids()))
    text = position(m)
    view = view_of(m, player, with_history=False)
    rnd = determinize(view, rng)
    while rnd.hands[1 - player] == m.round.hands[1 - player]:
        rnd = determinize(view, rng)
    twin = position(rnd, match_scores=(m.scores[0], m.scores[1]), rounds=m.rules.game.rounds)
    game = KoiKoiGame({"rules": "leaflet"})
    a, b = game.state_from_position(text), game.state_from_position(twin)
    assert a.information_state_string(player) == b.information_state_string(player)
    assert a.information_state_tensor(player) == b.information_state_tensor(player)
    assert a.information_state_tensor(1 - player) != b.information_state_tensor(1 - player)


def test_ismcts_plays_a_round() -> None:
    game = pyspiel.load_game("koikoi", {"rules": "leaflet"})
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 16, random_state=np.random.RandomState(0))
    rng = random.Random(2)
    state = game.new_initial_state()
    _deal(state, rng)
    moves = 0
    while not state.is_terminal():
        if state.current_player() == 0:
            action = bot.step(state)
            moves += 1
        else:
            action = rng.choice(state.legal_actions())
        assert action in state.legal_actions()
        state.apply_action(action)
    assert moves >= 1
    s = state.round.settlement
    assert state.returns() == [float(s.deltas[0]), float(s.deltas[1])]


def test_mcts_bot_picks_a_legal_action() -> None:
    state = _playing_state({"rules": "leaflet"}, seed=4)
    game = state.get_game()
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = mcts.MCTSBot(game, 2.0, 20, evaluator, random_state=np.random.RandomState(0))
    assert bot.step(state) in state.legal_actions()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"rules": "nope"}, "unknown rules 'nope'"),
        ({"episode": "day"}, "episode must be one of 'round', 'match', not 'day'"),
        ({"reward": "money"}, "reward must be one of 'points', 'net', 'win'"),
        ({"seed": "1"}, "unknown parameter 'seed' of koikoi: allowed rules, episode, reward"),
    ],
)
def test_bad_parameters_name_what_is_allowed(params: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        KoiKoiGame(params)


def test_position_needs_a_round_episode() -> None:
    game = KoiKoiGame({"rules": "leaflet", "episode": "match"})
    with pytest.raises(InvalidInputError, match="episode=round"):
        game.state_from_position(position(Match(get_rules("leaflet"), seed=1)))

"""The Gymnasium environment: Gymnasium's env_checker, registration, the opponent, hidden cards."""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import koikoi.envs.gymnasium as kgym  # noqa: E402
from koikoi.agents import RandomAgent  # noqa: E402
from koikoi.game.engine import Match  # noqa: E402
from koikoi.game.errors import InvalidInputError  # noqa: E402
from koikoi.game.rules import get_rules  # noqa: E402
from koikoi.game.views import PlayerView, view_of  # noqa: E402
from koikoi.kernel.encoding import SIZE, action_mask, encode  # noqa: E402


def twin_positions(rules: str, seed: int, steps: int, player: int) -> tuple[str, str]:
    from koikoi.game.positions import position
    from koikoi.game.views import determinize

    m = Match(get_rules(rules), seed=seed, events=False)
    rng = random.Random(seed)
    for _ in range(steps):
        m.apply_id(rng.choice(m.legal_ids()))
    view = view_of(m, player, with_history=False)
    while True:
        rnd = determinize(view, rng)
        if rnd.hands[1 - player] != m.round.hands[1 - player]:
            break
    twin = position(rnd, match_scores=(m.scores[0], m.scores[1]), rounds=m.rules.game.rounds)
    return position(m), twin


class SpyAgent:
    """Plays at random and keeps every view it was given."""

    name = "spy"

    def __init__(self) -> None:
        self.views: list[PlayerView] = []

    def act(self, view: PlayerView, rng: random.Random) -> int:
        self.views.append(view)
        return RandomAgent().act(view, rng)


def _first_legal(env: Any) -> int:
    return int(np.flatnonzero(env.unwrapped.action_masks())[0])


def _episode(env: Any, seed: int | None = None) -> tuple[list[int], float, dict[str, Any]]:
    env.reset(seed=seed)
    actions = []
    while True:
        a = _first_legal(env)
        actions.append(a)
        _, reward, terminated, truncated, info = env.step(a)
        assert not truncated
        if terminated:
            return actions, float(reward), info


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"observation": "vector", "episode": "match", "reward": "win", "seat": "random"},
        {"opponent": "greedy", "seat": 1, "reward": "net"},
    ],
)
def test_gymnasium_env_checker(kwargs: dict[str, Any]) -> None:
    env = gymnasium.make(kgym.ENV_ID, **{"rules": "leaflet", "opponent": "random", **kwargs})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_registered_on_import_and_made_with_options() -> None:
    assert kgym.ENV_ID in gymnasium.registry
    env = gymnasium.make("koikoi/KoiKoi-v0", rules="leaflet", opponent="random", seat=1)
    assert env.unwrapped.rules.name == "leaflet" and env.unwrapped.seat == 1
    env = gymnasium.make("koikoi.envs.gymnasium:koikoi/KoiKoi-v0", rules="leaflet")
    assert env.unwrapped.opponent.name == "heuristic"


def test_observation_is_the_seats_view() -> None:
    m = Match(get_rules("nintendo"), seed=12, events=False)
    seat = m.current  # the seat that leads: nobody has moved before it
    env = kgym.KoiKoiEnv("nintendo", opponent="random", seat=seat)
    obs, info = env.reset(seed=12)
    assert info == {}
    assert obs["observation"].shape == (SIZE,) and obs["observation"].dtype == np.float32
    view = view_of(m, seat, with_history=False)
    assert np.array_equal(obs["observation"], encode(view))
    assert np.array_equal(obs["action_mask"], action_mask(view))
    assert np.array_equal(env.action_masks(), obs["action_mask"].astype(bool))
    assert env.action_masks().any()


def test_vector_observation_puts_the_mask_in_info() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random", observation="vector")
    obs, info = env.reset(seed=1)
    assert obs.shape == (SIZE,)
    assert np.array_equal(info["action_mask"].astype(bool), env.action_masks())


def test_the_opponent_sees_only_its_own_view() -> None:
    spy = SpyAgent()
    env = kgym.KoiKoiEnv("leaflet", opponent=spy, seat=0, episode="match")
    for seed in range(3):
        _episode(env, seed=seed)
    assert spy.views
    for view in spy.views:
        assert isinstance(view, PlayerView)
        assert view.player == 1 and view.current == 1 and view.legal_ids
        assert view.history == ()


def test_same_seed_same_episode_and_the_reward_is_the_seats_points() -> None:
    env = kgym.KoiKoiEnv("nintendo", opponent="heuristic", reward="points")
    first = _episode(env, seed=4)
    second = _episode(env, seed=4)
    assert first[0] == second[0]
    assert first[1] == first[2]["points"]
    win = kgym.KoiKoiEnv("nintendo", opponent="heuristic", reward="win")
    actions, reward, info = _episode(win, seed=4)
    assert actions == first[0]
    assert info["points"] == first[2]["points"]
    assert reward == 1.0 if info["points"] > 0 else reward in (0.0, -1.0)


def test_match_episode_reward_is_the_match_result() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random", episode="match", reward="win", seat=1)
    _, reward, info = _episode(env, seed=6)
    game = env._game
    assert game.match is not None and game.match.is_over
    winner = game.match.winner
    assert reward == (0.0 if winner is None else (1.0 if winner == 1 else -1.0))
    start = game.rules.game.start_points
    assert info["points"] == game.match.scores[1] - start


def test_round_episodes_go_on_with_the_match() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random")
    _episode(env, seed=3)
    rounds = [env._game.view(0).round_number]
    for _ in range(3):
        _episode(env)
        rounds.append(env._game.view(0).round_number)
    assert rounds[0] == 1 and rounds == sorted(rounds) and len(set(rounds)) == len(rounds)


def test_random_seat_takes_both_seats() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random", seat="random", episode="match")
    env.reset(seed=0)
    seats = set()
    for _ in range(12):
        env.reset()
        seats.add(env.seat)
    assert seats == {0, 1}


def test_illegal_action_ends_the_episode() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random", illegal_reward=-5)
    env.reset(seed=2)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-5.0, True, False)
    assert info["illegal_action"] == illegal
    assert not obs["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(InvalidInputError, match="episode is over"):
        env.step(0)


@pytest.mark.parametrize("seat", [0, 1])
def test_observation_hides_the_opponents_hand_and_the_stock(seat: int) -> None:
    text, twin = twin_positions("leaflet", seed=30, steps=6, player=seat)
    observations = []
    for t in (text, twin):
        env = kgym.KoiKoiEnv("leaflet", opponent="greedy", seat=seat)
        try:
            obs, _ = env.reset(seed=1, options={"position": t})
        except InvalidInputError:
            pytest.skip("the round ends before the seat acts")
        observations.append(obs)
    a, b = observations
    assert np.array_equal(a["observation"], b["observation"])
    assert np.array_equal(a["action_mask"], b["action_mask"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rules": "nope"}, "unknown rules 'nope'"),
        ({"opponent": "nobody"}, "unknown agent 'nobody'"),
        ({"opponent": 3}, "opponent must be an agent spec"),
        ({"seat": 2}, "seat must be 0, 1 or 'random', not 2"),
        ({"observation": "image"}, "observation must be one of 'dict', 'vector'"),
        ({"episode": "game"}, "episode must be one of 'round', 'match'"),
        ({"reward": "money"}, "reward must be one of 'points', 'net', 'win'"),
        ({"illegal_reward": "a lot"}, "illegal_reward must be a number"),
    ],
)
def test_bad_options_name_what_is_allowed(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        kgym.KoiKoiEnv(**kwargs)


def test_bad_reset_options() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random")
    with pytest.raises(InvalidInputError, match="unknown reset option 'deal'"):
        env.reset(options={"deal": 1})
    with pytest.raises(InvalidInputError, match="missing fields: dealer"):
        env.reset(options={"position": "leaflet round=1/6"})

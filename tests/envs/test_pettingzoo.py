"""The PettingZoo AEC environment: PettingZoo's own api_test, rewards, seeding, hidden cards."""

from __future__ import annotations

import doctest
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from pettingzoo.test import api_test

from koikoi.envs import pettingzoo as kpz
from koikoi.game.engine import Match
from koikoi.game.errors import IllegalActionError, InvalidInputError
from koikoi.game.positions import position
from koikoi.game.rules import get_rules
from koikoi.game.views import determinize, view_of
from koikoi.kernel.encoding import SIZE, action_mask, encode

# api_test warns about these for any dict observation of an env not on its own list.
KNOWN_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be",
)


def _first_legal(obs: dict[str, Any]) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


def _play(e: Any, choose: Any = _first_legal) -> list[int]:
    """Play an episode to its end; returns the actions taken."""
    actions = []
    for _agent in e.agent_iter():
        obs, _, terminated, truncated, _ = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        a = choose(obs)
        actions.append(a)
        e.step(a)
    return actions


def twin_positions(rules: str, seed: int, steps: int, player: int) -> tuple[str, str]:
    """Two full positions that differ only in what ``player`` cannot see."""
    m = Match(get_rules(rules), seed=seed, events=False)
    rng = random.Random(seed)
    for _ in range(steps):
        m.apply_id(rng.choice(m.legal_ids()))
    text = position(m)
    view = view_of(m, player, with_history=False)
    while True:
        rnd = determinize(view, rng)
        if rnd.hands[1 - player] != m.round.hands[1 - player]:
            break
    other = position(rnd, match_scores=(m.scores[0], m.scores[1]), rounds=m.rules.game.rounds)
    return text, other


def test_doctests() -> None:
    failures, _ = doctest.testmod(kpz)
    assert failures == 0


@pytest.mark.parametrize(
    ("episode", "reward"), [("round", "points"), ("match", "win"), ("round", "net")]
)
def test_pettingzoo_api_test(episode: str, reward: str) -> None:
    e = kpz.env(rules="leaflet", episode=episode, reward=reward)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(e, num_cycles=300)
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(KNOWN_WARNINGS)]
    assert unexpected == []


def test_spaces_and_metadata() -> None:
    e = kpz.raw_env("leaflet")
    assert e.metadata["name"] == "koikoi_v0"
    assert e.possible_agents == ["player_0", "player_1"]
    space = e.observation_space("player_0")
    assert space["observation"].shape == (SIZE,)
    assert space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (2450,) and space["action_mask"].dtype == np.int8
    assert e.action_space("player_1").n == 2450


def test_observations_are_the_encoding_of_each_view() -> None:
    e = kpz.raw_env("nintendo")
    e.reset(seed=11)
    m = Match(get_rules("nintendo"), seed=11, events=False)  # the same deal
    for p, agent in enumerate(e.possible_agents):
        obs = e.observe(agent)
        view = view_of(m, p, with_history=False)
        assert np.array_equal(obs["observation"], encode(view))
        assert np.array_equal(obs["action_mask"], action_mask(view))
    acting = e.agent_selection
    assert acting == f"player_{m.current}"
    idle = "player_1" if acting == "player_0" else "player_0"
    assert e.observe(idle)["action_mask"].sum() == 0
    assert sorted(np.flatnonzero(e.observe(acting)["action_mask"])) == sorted(m.legal_ids())


def test_same_seed_same_game_and_reward_is_the_settlement() -> None:
    runs = []
    for _ in range(2):
        e = kpz.env(rules="nintendo", reward="points")
        e.reset(seed=3)
        actions = _play(e)
        runs.append((actions, dict(e.unwrapped._cumulative_rewards)))
    assert runs[0][0] == runs[1][0]
    # Replay the actions on the engine: the rewards are the round's deltas.
    m = Match(get_rules("nintendo"), seed=3, events=False)
    first_round = m.round
    for a in runs[0][0]:
        m.apply(a)
    assert first_round.is_over and first_round.settlement is not None
    deltas = first_round.settlement.deltas
    e = kpz.raw_env("nintendo", reward="points")
    e.reset(seed=3)
    for a in runs[0][0]:
        e.step(a)
    assert e.rewards == {"player_0": float(deltas[0]), "player_1": float(deltas[1])}
    assert all(e.terminations.values())


@pytest.mark.parametrize("reward", ["points", "net", "win"])
def test_match_episode_rewards(reward: str) -> None:
    e = kpz.raw_env("leaflet", episode="match", reward=reward)
    e.reset(seed=8)
    m = Match(get_rules("leaflet"), seed=8, events=False)
    while not all(e.terminations.values()):
        a = _first_legal(e.observe(e.agent_selection))
        assert e.agent_selection == f"player_{m.current}"
        m.apply(a)
        e.step(a)
    assert m.is_over
    d = [s - m.rules.game.start_points for s in m.scores]
    expected = {
        "points": (d[0], d[1]),
        "net": (d[0] - d[1], d[1] - d[0]),
        "win": (0, 0) if m.winner is None else ((1, -1) if m.winner == 0 else (-1, 1)),
    }[reward]
    assert (e.rewards["player_0"], e.rewards["player_1"]) == expected
    assert e.infos["player_0"]["points"] == d[0]


def test_round_episodes_go_on_with_the_match() -> None:
    e = kpz.env(rules="leaflet")
    e.reset(seed=5)
    _play(e)
    raw = e.unwrapped
    scores_after = raw._game.match_scores
    e.reset()
    view = raw._game.view(0)
    assert view.round_number >= 2
    assert view.match_scores == scores_after
    e.reset(seed=5)
    assert raw._game.view(0).round_number == 1


def test_illegal_action_ends_the_game_with_minus_one() -> None:
    e = kpz.env(rules="leaflet")
    e.reset(seed=2)
    actor = e.agent_selection
    mask = e.last()[0]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    other = "player_1" if actor == "player_0" else "player_0"
    assert e.rewards[actor] == -1 and e.rewards[other] == 0
    assert all(e.terminations.values())


def test_raw_env_raises_on_an_illegal_action() -> None:
    e = kpz.raw_env("leaflet")
    e.reset(seed=2)
    mask = e.observe(e.agent_selection)["action_mask"]
    before = e.observe(e.agent_selection)["observation"].copy()
    with pytest.raises(IllegalActionError):
        e.step(int(np.flatnonzero(mask == 0)[0]))
    assert np.array_equal(e.observe(e.agent_selection)["observation"], before)


@pytest.mark.parametrize("player", [0, 1])
def test_observation_hides_the_opponents_hand_and_the_stock(player: int) -> None:
    text, twin = twin_positions("leaflet", seed=21, steps=5, player=player)
    assert text != twin
    seen = []
    for t in (text, twin):
        e = kpz.raw_env("leaflet")
        e.reset(options={"position": t})
        seen.append((e.observe(f"player_{player}"), e.observe(f"player_{1 - player}")))
    (mine_a, theirs_a), (mine_b, theirs_b) = seen
    assert np.array_equal(mine_a["observation"], mine_b["observation"])
    assert np.array_equal(mine_a["action_mask"], mine_b["action_mask"])
    # The opponent's own hand did change, and so does what the opponent sees.
    assert not np.array_equal(theirs_a["observation"], theirs_b["observation"])


def test_position_start_plays_to_the_round_end() -> None:
    text, _ = twin_positions("leaflet", seed=4, steps=3, player=0)
    e = kpz.env(rules="leaflet")
    e.reset(options={"position": text})
    _play(e)
    assert e.agents == []


def test_render_ansi_is_the_position() -> None:
    e = kpz.raw_env("leaflet", render_mode="ansi")
    e.reset(seed=9)
    assert e.render() == position(Match(get_rules("leaflet"), seed=9, events=False))


def test_house_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('extends = "leaflet"\nname = "ours"\n[points]\nkasu = 2\n', encoding="utf-8")
    e = kpz.raw_env(str(path))
    assert e.rules.name == "ours" and e.rules.points.kasu == 2
    e.reset(seed=1)
    obs = e.observe("player_0")["observation"]
    assert obs in e.observation_space("player_0")["observation"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rules": "nope"}, "unknown rules 'nope'"),
        ({"rules": 12}, "rules must be a preset name"),
        ({"episode": "day"}, "episode must be one of 'round', 'match', not 'day'"),
        ({"reward": "money"}, "reward must be one of 'points', 'net', 'win'"),
        ({"render_mode": "rgb_array"}, "render_mode must be one of 'human', 'ansi'"),
    ],
)
def test_bad_options_name_what_is_allowed(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        kpz.raw_env(**kwargs)


def test_bad_reset_options() -> None:
    e = kpz.raw_env("leaflet")
    with pytest.raises(InvalidInputError, match="unknown reset option 'deal'"):
        e.reset(options={"deal": 1})
    with pytest.raises(InvalidInputError, match="seed must be a non-negative integer"):
        e.reset(seed=-1)
    with pytest.raises(InvalidInputError, match="episode='round'"):
        kpz.raw_env("leaflet", episode="match").reset(options={"position": "leaflet"})

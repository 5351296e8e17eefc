"""Saving and restoring an environment's state in every interface.

For each interface: a seeded random prefix, a snapshot, a recorded continuation,
then a restore (into the same env and into a fresh one) and the same actions again:
everything the env gives must be equal. And the refusals: snapshots of other
envs, options or rules, damaged ones, opponents that cannot be saved.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import koikoi.envs.gymnasium as kgym
from koikoi.envs import pettingzoo as kpz
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.positions import position
from koikoi.game.rules import get_rules

EXAMPLES = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same(a: Any, b: Any) -> bool:
    """Deep equality of what envs return (numpy arrays compared by value and dtype)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b)
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return (
            isinstance(b, list | tuple)
            and len(a) == len(b)
            and all(same(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(type(a) is type(b) and a == b)


def as_json(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The snapshot after a trip through JSON: a snapshot is plain data."""
    loaded: dict[str, Any] = json.loads(json.dumps(snapshot))
    return loaded


# ------------------------------------------------------------------ Gymnasium


def gym_play(env: Any, rng: random.Random, steps: int, illegal_at: int = -1) -> list[Any]:
    """``steps`` random legal actions (an illegal one at step ``illegal_at``),
    resetting (unseeded) at the end of each episode; everything the env returned."""
    out: list[Any] = []
    for k in range(steps):
        legal = np.flatnonzero(env.action_masks())
        if len(legal) == 0:
            out.append(("reset", *env.reset()))
            continue
        action = int(rng.choice(list(legal)))
        if k == illegal_at:
            action = next(a for a in range(2450) if a not in legal)
        out.append((action, *env.step(action)))
    return out


GYM_SETTINGS = [
    {"rules": "leaflet", "opponent": "random"},
    {"rules": "nintendo", "opponent": "heuristic", "seat": 1, "observation": "vector"},
    {"rules": "koikoi-japan", "opponent": "greedy", "episode": "match", "seat": "random"},
    {"rules": "leaflet", "opponent": "random", "observation": "sequence", "reward": "net"},
]


@pytest.mark.parametrize("options", GYM_SETTINGS)
@EXAMPLES
@given(seed=st.integers(0, 2**32), prefix=st.integers(0, 60))
def test_gymnasium_restore_repeats_the_continuation(
    options: dict[str, Any], seed: int, prefix: int
) -> None:
    env = kgym.KoiKoiEnv(**options)
    env.reset(seed=seed)
    gym_play(env, random.Random(seed), prefix)
    snapshot = env.save()
    kept = copy.deepcopy(snapshot)
    at_save = (env.action_masks().copy(), env.seat)
    after = gym_play(env, random.Random(seed + 1), 80, illegal_at=70)
    assert snapshot == kept  # playing on does not change a snapshot

    obs, info = env.restore(snapshot)
    assert np.array_equal(env.action_masks(), at_save[0]) and env.seat == at_save[1]
    assert same(gym_play(env, random.Random(seed + 1), 80, illegal_at=70), after)

    fresh = kgym.KoiKoiEnv(**options)
    obs2, info2 = fresh.restore(as_json(snapshot))
    assert same((obs, info), (obs2, info2))
    assert same(gym_play(fresh, random.Random(seed + 1), 80, illegal_at=70), after)


def test_gymnasium_restore_returns_what_the_step_returned() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random", observation="vector")
    env.reset(seed=4)
    rng = random.Random(4)
    while True:
        action = int(rng.choice(list(np.flatnonzero(env.action_masks()))))
        obs, _, terminated, _, info = env.step(action)
        if terminated:
            break
    assert "points" in info
    back = kgym.KoiKoiEnv("leaflet", opponent="random", observation="vector")
    assert same(back.restore(env.save()), (obs, info))
    assert not back.action_masks().any()  # the episode is over there too

    env.reset()
    illegal = next(a for a in range(2450) if not env.action_masks()[a])
    obs, _, _, _, info = env.step(illegal)
    assert info["illegal_action"] == illegal
    assert same(back.restore(env.save()), (obs, info))
    with pytest.raises(InvalidInputError, match="the episode is over"):
        back.step(0)


def test_gymnasium_through_make_and_the_position_option() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    m = Match(get_rules("nintendo"), seed=11)
    text = position(m)
    env = gymnasium.make(kgym.ENV_ID, rules="nintendo", opponent="random", seat=m.current)
    env.reset(seed=2, options={"position": text})
    gym_play(env.unwrapped, random.Random(2), 3)
    snapshot = env.unwrapped.save()
    after = gym_play(env.unwrapped, random.Random(3), 40)
    other = gymnasium.make(kgym.ENV_ID, rules="nintendo", opponent="random", seat=m.current)
    other.unwrapped.restore(as_json(snapshot))
    assert same(gym_play(other.unwrapped, random.Random(3), 40), after)


def test_gymnasium_restore_checks_a_positions_match_scores_as_reset_does() -> None:
    m = Match(get_rules("nintendo"), seed=11)
    env = kgym.KoiKoiEnv("nintendo", opponent="random", seat=m.current)
    env.reset(seed=2, options={"position": position(m)})
    snapshot = env.save()
    start = snapshot["game"]["position"]["start"]
    assert start.endswith(" match=0/0")
    broken = copy.deepcopy(snapshot)
    broken["game"]["position"]["start"] = start.replace(" match=0/0", " match=0/99999")
    with pytest.raises(InvalidInputError, match="match scores 0/99999 are beyond"):
        env.restore(broken)
    assert env.save() == snapshot
    with pytest.raises(InvalidInputError, match="match scores 0/99999 are beyond"):
        env.reset(options={"position": broken["game"]["position"]["start"]})


def test_a_failed_position_reset_changes_nothing() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random")
    env.reset(seed=4)
    rng = random.Random(4)
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        _, _, terminated, truncated, _ = env.step(int(rng.choice(list(legal))))
        done = terminated or truncated
    before = env.save()
    for bad in ("not a position", position(Match(get_rules("leaflet"), seed=1)) + " match=0/99999"):
        with pytest.raises(InvalidInputError):
            env.reset(seed=5, options={"position": bad})
        assert env.save() == before  # the seed and the finished episode are as they were
        with pytest.raises(InvalidInputError, match="the episode is over"):
            env.step(0)


def test_gymnasium_snapshots_hold_the_seeded_generators() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random")
    env.reset(seed=8)
    snapshot = env.save()
    first = env.np_random.integers(1 << 30, size=4)
    fresh = kgym.KoiKoiEnv("leaflet", opponent="random")
    fresh.restore(snapshot)
    assert np.array_equal(fresh.np_random.integers(1 << 30, size=4), first)


def test_gymnasium_refusals() -> None:
    env = kgym.KoiKoiEnv("leaflet", opponent="random")
    with pytest.raises(InvalidInputError, match="call reset"):
        env.save()
    env.reset(seed=1)
    snapshot = env.save()
    before = env.save()
    cases: list[tuple[Any, str]] = [
        (kgym.KoiKoiEnv("nintendo", opponent="random"), "rules: snapshot 'leaflet'"),
        (kgym.KoiKoiEnv("leaflet", opponent="random", observation="vector"), "observation"),
        (kgym.KoiKoiEnv("leaflet", opponent="greedy"), "opponent: snapshot 'random'"),
        (kgym.KoiKoiEnv("leaflet", opponent="random", episode="match"), "episode"),
        (kgym.KoiKoiEnv("leaflet", opponent="random", seat=1), "seat"),
    ]
    for other, words in cases:
        with pytest.raises(InvalidInputError, match=words):
            other.restore(snapshot)
    house = get_rules("leaflet").replace(game__rounds=3)
    with pytest.raises(InvalidInputError, match=r"differ in game\.rounds"):
        kgym.KoiKoiEnv(house, opponent="random").restore(snapshot)
    pz_snapshot = kpz.raw_env("leaflet")
    pz_snapshot.reset(seed=1)
    with pytest.raises(InvalidInputError, match="is of 'koikoi_v0'"):
        env.restore(pz_snapshot.save())
    damaged: list[tuple[Callable[[dict[str, Any]], None], str]] = [
        (lambda s: s.update(version=99), "version 99"),
        (lambda s: s.pop("config"), "no config"),
        (lambda s: s["game"]["match"]["actions"].append(12345), "does not replay"),
        (lambda s: s["game"]["match"].update(seed="x"), "seed is missing or not"),
        (lambda s: s["game"].update(done=True), "says the episode is over"),
        (lambda s: s.update(opponent_rng=[3, [1, 2], None]), "opponent_rng is not the state"),
        (lambda s: s.update(seat=7), "seat must be 0 or 1"),
        (lambda s: s.update(np_random={"bit_generator": "os"}), "np_random"),
    ]
    for damage, words in damaged:
        broken = copy.deepcopy(snapshot)
        damage(broken)
        with pytest.raises(InvalidInputError, match=words):
            env.restore(broken)
        assert env.save() == before  # a refused snapshot changes nothing
    for not_a_snapshot in (None, [], {"config": {}}):
        with pytest.raises(InvalidInputError, match="takes a snapshot"):
            env.restore(not_a_snapshot)  # type: ignore[arg-type]


def test_gymnasium_refuses_to_save_an_outside_program() -> None:
    from koikoi.agents.external import ExternalAgent

    bot = ExternalAgent(["a-bot-that-is-never-started"])
    env = kgym.KoiKoiEnv("leaflet", opponent=bot)
    with pytest.raises(InvalidInputError, match="outside program"):
        env.save()


# ------------------------------------------------------------------ PettingZoo


def pz_play(env: Any, rng: random.Random, steps: int, illegal_at: int = -1) -> list[Any]:
    """``steps`` AEC steps (None for agents that are done, an illegal action at
    ``illegal_at``), resetting when every agent is done; everything seen."""
    out: list[Any] = []
    for k in range(steps):
        if not env.agents:
            env.reset()
            out.append("reset")
            continue
        agent = env.agent_selection
        obs, reward, terminated, truncated, info = env.last()
        observed = {a: env.observe(a) for a in env.agents}
        legal = list(np.flatnonzero(obs["action_mask"]))
        if terminated or truncated:
            action = None
        elif k == illegal_at:
            action = next(a for a in range(2450) if a not in legal)
        else:
            action = int(rng.choice(legal))
        out.append((agent, observed, reward, terminated, truncated, info, action))
        out.append(copy.deepcopy((env.rewards, env.terminations, env.infos)))
        env.step(action)
    return out


PZ_SETTINGS = [
    (kpz.env, {"rules": "leaflet"}),
    (kpz.env, {"rules": "nintendo", "episode": "match", "reward": "win"}),
    (kpz.raw_env, {"rules": "koikoi-japan", "observation": "sequence", "reward": "net"}),
]


@pytest.mark.parametrize(("make", "options"), PZ_SETTINGS)
@EXAMPLES
@given(seed=st.integers(0, 2**32), prefix=st.integers(0, 60))
def test_pettingzoo_restore_repeats_the_continuation(
    make: Callable[..., Any], options: dict[str, Any], seed: int, prefix: int
) -> None:
    illegal_at = 50 if make is kpz.env else -1  # the wrapped env ends the game there
    env = make(**options)
    env.reset(seed=seed)
    pz_play(env, random.Random(seed), prefix)
    snapshot = env.save()
    after = pz_play(env, random.Random(seed + 1), 90, illegal_at)

    env.restore(snapshot)
    assert same(pz_play(env, random.Random(seed + 1), 90, illegal_at), after)
    fresh = make(**options)
    fresh.restore(as_json(snapshot))
    assert same(pz_play(fresh, random.Random(seed + 1), 90, illegal_at), after)


def test_pettingzoo_restores_the_ending_agents() -> None:
    env = kpz.env(rules="leaflet")
    env.reset(seed=3)
    rng = random.Random(3)
    while not env.terminations[env.agent_selection]:
        obs = env.last()[0]
        env.step(int(rng.choice(list(np.flatnonzero(obs["action_mask"])))))
    env.step(None)  # one agent leaves
    snapshot = env.save()
    assert len(snapshot["agents"]) == 1
    fresh = kpz.env(rules="leaflet")
    fresh.restore(as_json(snapshot))
    assert fresh.agents == env.agents and same(fresh.last(), env.last())
    fresh.step(None)
    assert fresh.agents == []


def test_pettingzoo_refusals() -> None:
    env = kpz.raw_env("leaflet")
    with pytest.raises(InvalidInputError, match="call reset"):
        env.save()
    env.reset(seed=2)
    snapshot = env.save()
    before = env.save()
    for other, words in [
        (kpz.raw_env("nintendo"), "rules: snapshot 'leaflet'"),
        (kpz.raw_env("leaflet", observation="sequence"), "observation: snapshot 'dict'"),
        (kpz.raw_env("leaflet", reward="win"), "reward"),
    ]:
        with pytest.raises(InvalidInputError, match=words):
            other.restore(snapshot)
    gym = kgym.KoiKoiEnv("leaflet", opponent="random")
    gym.reset(seed=1)
    with pytest.raises(InvalidInputError, match="is of 'koikoi/KoiKoi-v0'"):
        env.restore(gym.save())
    damaged: list[tuple[Callable[[dict[str, Any]], None], str]] = [
        (lambda s: s.update(agents=["player_7"]), "agents must be"),
        (lambda s: s.update(agent_selection=None), "agent_selection"),
        (lambda s: s["rewards"].pop("player_0"), "rewards must give each"),
        (lambda s: s["game"]["match"]["actions"].insert(0, 9999), "does not replay"),
        (lambda s: s["game"].pop("seeder"), "seeder is not the state"),
        (lambda s: s["game"].pop("match"), "neither a match nor a position"),
    ]
    for damage, words in damaged:
        broken = copy.deepcopy(snapshot)
        damage(broken)
        with pytest.raises(InvalidInputError, match=words):
            env.restore(broken)
        assert env.save() == before


# ------------------------------------------------------------------ OpenSpiel


def spiel_trace(state: Any, rng: random.Random, steps: int) -> list[Any]:
    """Up to ``steps`` random actions and chance outcomes from ``state`` (a copy),
    with everything the state shows at each: player, legal actions, chance outcomes,
    strings and tensors of both players, returns."""
    out: list[Any] = []
    for _ in range(steps):
        player = state.current_player()
        row: list[Any] = [player, str(state), state.is_terminal(), state.returns()]
        if not state.is_chance_node() and not state.is_terminal():
            for p in (0, 1):
                row += [
                    state.information_state_string(p),
                    state.information_state_tensor(p),
                    state.observation_string(p),
                    state.observation_tensor(p),
                ]
        out.append(row)
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            out.append(outcomes)
            action = rng.choice(outcomes)[0]
        else:
            out.append(state.legal_actions())
            action = rng.choice(state.legal_actions())
        state.apply_action(action)
    return out


def spiel_copies(game: Any, state: Any) -> dict[str, Any]:
    """Every way OpenSpiel copies a state: clone, serialize, pickle."""
    pyspiel = pytest.importorskip("pyspiel")
    _, both = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    return {
        "clone": state.clone(),
        "deserialize_state": game.deserialize_state(state.serialize()),
        "deserialize_game_and_state": both,
        "pickle": pickle.loads(pickle.dumps(state)),
    }


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "leaflet"},
        {"rules": "koikoi-japan", "episode": "match", "reward": "net"},
        {"rules": "nintendo", "episode": "match", "reward": "win"},
    ],
)
@EXAMPLES
@given(seed=st.integers(0, 2**32), prefix=st.integers(0, 200))
def test_openspiel_copies_continue_identically(
    params: dict[str, str], seed: int, prefix: int
) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    import koikoi.envs.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("koikoi", params)
    state = game.new_initial_state()
    spiel_trace(state, random.Random(seed), prefix)  # a prefix, chance nodes included
    copies = spiel_copies(game, state)
    expected = spiel_trace(state.clone(), random.Random(seed + 1), 150)
    for how, other in copies.items():
        assert str(other) == str(state) and other.history() == state.history(), how
        assert same(spiel_trace(other, random.Random(seed + 1), 150), expected), how


@pytest.mark.parametrize(
    "params", [{"rules": "leaflet"}, {"rules": "koikoi-japan", "episode": "match"}]
)
def test_openspiel_random_simulation_with_serialization(params: dict[str, str]) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    import koikoi.envs.openspiel  # noqa: F401

    game = pyspiel.load_game("koikoi", params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_openspiel_copies_of_positions_and_resampled_states() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    import koikoi.envs.openspiel  # noqa: F401

    game = pyspiel.load_game("koikoi", {"rules": "nintendo"})
    m = Match(get_rules("nintendo"), seed=21)
    rng = random.Random(21)
    for _ in range(9):
        m.apply(rng.choice(m.legal_ids()))
    states = {
        "full position": game.state_from_position(position(m)),
        "view position": game.state_from_position(position(m, player=m.current), seed=3),
    }
    dealt = game.new_initial_state()
    spiel_trace(dealt, random.Random(5), 70)
    if not dealt.is_chance_node() and not dealt.is_terminal():
        states["resampled"] = dealt.resample_from_infostate(
            dealt.current_player(), random.Random(6).random
        )
    states["resampled position"] = states["full position"].resample_from_infostate(
        m.current, random.Random(7).random
    )
    for name, state in states.items():
        expected = spiel_trace(state.clone(), random.Random(8), 80)
        for how, other in spiel_copies(game, state).items():
            assert same(spiel_trace(other, random.Random(8), 80), expected), (name, how)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"rules": "nintendo"}, "rules: 'leaflet', this game 'nintendo'"),
        ({"rules": "leaflet", "episode": "match"}, "episode: 'round', this game 'match'"),
        ({"rules": "leaflet", "reward": "win"}, "reward: 'points', this game 'win'"),
    ],
)
def test_openspiel_refuses_a_state_of_another_game(params: dict[str, str], words: str) -> None:
    """A state serialized under other parameters is refused, not silently played
    under the parameters it came with."""
    pyspiel = pytest.importorskip("pyspiel")
    import koikoi.envs.openspiel  # noqa: F401

    game = pyspiel.load_game("koikoi", {"rules": "leaflet"})
    state = game.new_initial_state()
    spiel_trace(state, random.Random(1), 60)
    other = pyspiel.load_game("koikoi", params)
    with pytest.raises(InvalidInputError, match=words):
        other.deserialize_state(state.serialize())
    again = game.deserialize_state(state.serialize())  # its own game still takes it
    assert str(again) == str(state)

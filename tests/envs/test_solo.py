"""SoloVectorEnv: the learner's seat of the batched simulator, replayed through the engine.

Every environment's round is replayed through :class:`koikoi.game.engine.Round`
with the same learner moves and the same opponent moves (a deterministic
opponent: the last legal id); the learner must be to act in every environment
after each step, with the engine's observation and legal actions, and the
rewards must be the learner's net points of the rounds the engine settles.
"""

from __future__ import annotations

from typing import Any

import pytest

np = pytest.importorskip("numpy")

from koikoi.envs import vector  # noqa: E402
from koikoi.envs.solo import PLAYABLE_IDS, SoloVectorEnv  # noqa: E402
from koikoi.envs.vector import VectorEnv  # noqa: E402
from koikoi.game.actions import NUM_ACTIONS  # noqa: E402
from koikoi.game.engine import Round  # noqa: E402
from koikoi.game.errors import IllegalActionError, InvalidInputError  # noqa: E402
from koikoi.game.rules import Rules, get_rules  # noqa: E402
from koikoi.game.views import view_of_round  # noqa: E402
from koikoi.kernel import encoding  # noqa: E402

pytestmark = pytest.mark.skipif(not vector.available(), reason="numba is not installed")


def _last(obs: Any, legal: Any, counts: Any) -> Any:
    """The opponent of the replay: the last legal id of each row."""
    return legal[np.arange(len(counts)), counts.astype(np.int64) - 1]


def _to_learner(rnd: Round) -> None:
    """Play the replay's opponent (player 1) until the learner is to act or the round ends."""
    while not rnd.is_over and rnd.current == 1:
        rnd.apply(rnd.legal_ids()[-1])


def _synced(solo: SoloVectorEnv, rules: Rules, i: int) -> Round:
    rnd = solo.env.deal(i).round(rules)
    _to_learner(rnd)
    assert not rnd.is_over and rnd.current == 0
    return rnd


def _net(rnd: Round) -> float:
    settlement = rnd.settlement
    assert settlement is not None
    return float(settlement.deltas[0] - settlement.deltas[1])


def _replay(rules: Rules, *, envs: int, rounds: int, seed: int, actions: str) -> dict[str, int]:
    solo = SoloVectorEnv(envs, rules, seed, opponent=_last, actions=actions)
    obs = solo.reset()
    engine = [_synced(solo, rules, i) for i in range(envs)]
    seen = {"rounds": 0, "opponent_ended": 0, "led_by_opponent": 0}
    while seen["rounds"] < rounds:
        masks = solo.action_masks()
        assert masks.shape == (envs, solo.num_actions) and masks.dtype == np.bool_
        for i, rnd in enumerate(engine):
            assert int(solo.env.players[i]) == 0 == rnd.current
            view = view_of_round(
                rnd, 0, match_scores=(rules.game.start_points,) * 2, rounds=rules.game.rounds
            )
            assert np.array_equal(obs[i], encoding.encode(view)), f"env {i}"
            assert sorted(solo.action_ids[masks[i]].tolist()) == sorted(rnd.legal_ids())
        chosen = solo.sample_actions()
        expected = np.zeros(envs, dtype=np.float32)
        ended = np.zeros(envs, dtype=bool)
        for i, rnd in enumerate(engine):
            rnd.apply(int(solo.action_ids[chosen[i]]))
            _to_learner(rnd)
            if rnd.is_over:
                expected[i], ended[i] = _net(rnd), True
                seen["opponent_ended"] += rnd.current == 1
        obs, rewards, dones = solo.step(chosen)
        assert np.array_equal(dones, ended)
        assert np.array_equal(rewards, expected)
        for i in np.flatnonzero(ended):
            engine[i] = _synced(solo, rules, int(i))
            seen["rounds"] += 1
            seen["led_by_opponent"] += int(solo.env.deal(int(i)).round(rules).current == 1)
    return seen


def test_replays_through_the_engine_dense() -> None:
    seen = _replay(get_rules("nintendo"), envs=6, rounds=60, seed=3, actions="dense")
    assert seen["led_by_opponent"] > 0  # the opponent's opening turns were played
    assert seen["opponent_ended"] > 0  # rounds the opponent's move ended


def test_replays_through_the_engine_playable_with_wild_lightning_and_discards() -> None:
    rules = get_rules("nintendo").replace(
        play__wild_lightning=True, play__hand_card="any_or_discard"
    )
    seen = _replay(rules, envs=6, rounds=60, seed=4, actions="playable")
    assert seen["led_by_opponent"] > 0


def test_playable_ids_are_the_ids_that_can_be_legal() -> None:
    assert len(PLAYABLE_IDS) == 334
    assert (np.diff(PLAYABLE_IDS) > 0).all()
    assert PLAYABLE_IDS[0] == 0 and PLAYABLE_IDS[-1] == NUM_ACTIONS - 1
    play_12L_with_a_pine = 48 + 48 * 44 + 0  # a December card on a January card
    assert play_12L_with_a_pine not in PLAYABLE_IDS
    lightning_on_a_pine = 48 + 48 * 43 + 0  # the wild Lightning may take it
    assert lightning_on_a_pine in PLAYABLE_IDS


def _winning_opening(rnd: Round) -> list[int] | None:
    """Opponent moves that end the round before the learner's first decision, if any."""
    if rnd.is_over:
        return []
    if rnd.current != 1:
        return None
    for a in rnd.legal_ids():
        after = rnd.clone()
        after.apply(a)
        rest = _winning_opening(after)
        if rest is not None:
            return [a, *rest]
    return None


def test_a_round_the_opponent_ends_before_the_learners_first_move_is_skipped() -> None:
    rules = get_rules("nintendo")
    n = 400
    plain = VectorEnv(n, rules, seed=11)
    plain.reset()
    plan: dict[bytes, int] = {}  # the opponent's view -> its move, on the winning lines
    ended = []
    for i in range(n):
        rnd = plain.deal(i).round(rules)
        opening = _winning_opening(rnd.clone())
        if opening is None:
            continue
        ended.append(i)
        for a in opening:
            scores = (rules.game.start_points,) * 2
            view = view_of_round(rnd, 1, match_scores=scores, rounds=rules.game.rounds)
            plan[encoding.encode(view).tobytes()] = a
            rnd.apply(a)
    assert ended  # seed 11 deals some

    def opponent(obs: Any, legal: Any, counts: Any) -> Any:
        last = _last(obs, legal, counts)
        return [plan.get(o.tobytes(), int(a)) for o, a in zip(obs, last, strict=True)]

    solo = SoloVectorEnv(n, rules, seed=11, opponent=opponent)
    solo.reset()
    assert solo.skipped == len(ended)
    for i in ended:
        assert solo.env.deal(i) != plain.deal(i)  # already the next deal
    assert (solo.env.players == 0).all()
    _, rewards, dones = solo.step(solo.sample_actions())
    assert not rewards[~dones].any()


def _trajectory(n: int, steps: int) -> list[tuple[Any, ...]]:
    solo = SoloVectorEnv(n, "leaflet", seed=7)
    obs = solo.reset()
    out = [(obs[:3].copy(),)]
    for _ in range(steps):
        legal = solo.env.legal_ids
        obs, rewards, dones = solo.step(legal[:, 0].astype(np.int64))
        out.append((obs[:3].copy(), rewards[:3].copy(), dones[:3].copy()))
    return out


def test_an_environment_does_not_depend_on_the_others() -> None:
    # Rows 0-2 of 3 and of 8 environments: the same deals and the same random opponent,
    # though the other rows wait for the opponent at other times.
    small, large = _trajectory(3, 150), _trajectory(8, 150)
    for a, b in zip(small, large, strict=True):
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
    assert any(t[2].any() for t in small[1:])


def test_match_episode_rewards_add_up_to_the_match_result() -> None:
    solo = SoloVectorEnv(4, "koikoi-japan", seed=2, episode="match")
    solo.reset()
    totals = np.zeros(4)
    checked = 0
    while checked < 6:
        _, rewards, dones = solo.step(solo.sample_actions())
        totals += rewards
        for i in np.flatnonzero(dones):
            final = solo.env.final_scores[i]
            assert totals[i] == final[0] - final[1]
            totals[i] = 0.0
            checked += 1


def test_reset_with_a_seed_repeats() -> None:
    a = SoloVectorEnv(4, "nintendo", seed=0)
    b = SoloVectorEnv(4, "nintendo", seed=99)
    assert np.array_equal(a.reset(5), b.reset(5))
    assert np.array_equal(a.action_masks(), b.action_masks())


def test_bad_arguments_and_moves_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="opponent must be 'random' or a function"):
        SoloVectorEnv(2, opponent="greedy")
    with pytest.raises(InvalidInputError, match="actions must be 'dense' or 'playable'"):
        SoloVectorEnv(2, actions="compact")
    with pytest.raises(InvalidInputError, match="unknown option dense_mask"):
        SoloVectorEnv(2, dense_mask=True)
    solo = SoloVectorEnv(2, actions="playable")
    with pytest.raises(InvalidInputError, match="call reset"):
        solo.step([0, 0])
    solo.reset()
    with pytest.raises(InvalidInputError, match="action index 334 out of range: allowed 0 to 333"):
        solo.step([0, 334])
    with pytest.raises(InvalidInputError, match="2 integer indices"):
        solo.step([0.5, 1.5])
    illegal = int(np.flatnonzero(~solo.action_masks()[0])[0])
    with pytest.raises(IllegalActionError, match="environment 0"):
        solo.step([illegal, int(solo.sample_actions()[1])])
    wrong = SoloVectorEnv(2, opponent=lambda obs, legal, counts: [0, 0, 0])
    with pytest.raises(InvalidInputError, match="the opponent must return"):
        for _ in range(20):
            wrong.reset()
            wrong.step(wrong.sample_actions())

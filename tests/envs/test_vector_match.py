"""Whole-match episodes of the batched simulator agree with the engine's Match; save/restore.

Every environment's match is replayed through :class:`koikoi.game.engine.Match`
built from the simulator's chance outcomes: the same decks in the same order
(the simulator's deal stream, redeals included) and the same first-dealer draw.
At every step the observation must equal ``encoding.encode`` of the engine's
view of the player to act (so the match scores, the round, the dealer and the
leader agree), the legal ids ``Match.legal_ids()``, the number of decks shuffled
``len(Match.deals)``; the rewards the deltas of the rounds settled in the step;
and at the end of a match the winner and the final scores. With ``sequence=True``
the sequences must equal ``sequence.encode_sequence(view, scope="match")`` of the
engine's view (every round of the match so far, redeals and instant hands included).
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Sequence
from typing import Any

import pytest

np = pytest.importorskip("numpy")

from koikoi.envs import vector  # noqa: E402
from koikoi.envs.vector import VectorEnv  # noqa: E402
from koikoi.game.engine import Match  # noqa: E402
from koikoi.game.errors import InvalidInputError  # noqa: E402
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules  # noqa: E402
from koikoi.game.views import view_of  # noqa: E402
from koikoi.kernel import encoding, sequence  # noqa: E402

pytestmark = pytest.mark.skipif(not vector.available(), reason="numba is not installed")


class _FirstDealer(random.Random):
    """The chance of one simulator match's first-dealer choice, for :class:`Match`."""

    def __init__(self, info: dict[str, Any]) -> None:
        super().__init__(0)
        self.info = info

    def random(self) -> float:
        return 0.25 if self.info["winner"] == 0 else 0.75

    def sample(self, population: Sequence[int], k: int, **_: Any) -> list[int]:  # type: ignore[override]
        assert k == 2 and self.info["draws"], "a draw where the simulator flipped a coin"
        return list(self.info["draws"][-1])


class _Decks:
    """One environment's deal stream: the decks it shuffles, in order."""

    def __init__(self, rng: Any) -> None:
        from koikoi.kernel import batch

        self._shuffle = batch.shuffle
        self._rng = rng.copy()
        self._decks: list[list[int]] = []

    def first(self, k: int) -> list[list[int]]:
        while len(self._decks) < k:
            deck = np.arange(48, dtype=np.int8)
            self._shuffle(deck, self._rng)
            self._decks.append([int(c) for c in deck])
        return self._decks[:k]

    def drop(self, k: int) -> None:
        del self._decks[:k]


def _new_match(env: VectorEnv, i: int, decks: _Decks) -> Match:
    info = env.first_dealer(i)
    match = Match(env.rules, rng=_FirstDealer(info), events=env.sequence, decks=decks.first(64))
    assert not match.is_over, "a match over before its first decision"
    expected = {k: info[k] for k in ("method", "winner", "dealer", "leader")}
    assert {k: match.first_dealer[k] for k in expected} == expected
    return match


def _check_sequence(env: VectorEnv, i: int, match: Match, kinds: set[str]) -> None:
    """Environment ``i``'s sequence is the engine's, of the player to act; adds the
    kinds of its tokens to ``kinds``."""
    view = view_of(match, match.current)
    tokens, count = sequence.encode_sequence(view, length=env.sequence_length, scope="match")
    got = env.sequences[i]
    if int(env.sequence_lengths[i]) != count or not np.array_equal(got, tokens):
        rows = np.flatnonzero((got != tokens).any(axis=1))
        first = int(rows[0]) if rows.size else count
        pytest.fail(
            f"{env.rules.name} env {i}: {int(env.sequence_lengths[i])} tokens, the engine's "
            f"{count}; first different row {first}: {got[first].tolist()} against "
            f"{tokens[first].tolist()} ({sequence.KINDS[tokens[first, 0]]})"
        )
    kinds.update(sequence.KINDS[k] for k in tokens[:count, 0])


def _replay_matches(
    rules: Rules,
    *,
    envs: int,
    matches: int,
    seed: int,
    sequence: bool = False,
    sequence_length: int | None = None,
    kinds: set[str] | None = None,
) -> dict[str, int]:
    """Step ``envs`` environments with random actions until ``matches`` matches have
    ended, checking every step against the engine's Match (with ``sequence``, the
    sequences too; their token kinds go to ``kinds``). Returns counts of what was
    reached."""
    env = VectorEnv(
        envs, rules, seed, episode="match", sequence=sequence, sequence_length=sequence_length
    )
    seen_kinds: set[str] = set() if kinds is None else kinds
    streams = [_Decks(env.save()["_deal_rngs"][i]) for i in range(envs)]
    out = env.reset()
    engine = [_new_match(env, i, streams[i]) for i in range(envs)]
    credited = [0] * envs
    seen = dict.fromkeys(
        ("matches", "steps", "rounds", "redeals", "instant", "bust", "draws", "swaps"), 0
    )
    while seen["matches"] < matches:
        for i, match in enumerate(engine):
            view = view_of(match, match.current, with_history=False)
            got = out.observations[i]
            expected = encoding.encode(view)
            if not np.array_equal(got, expected):
                wrong = [encoding.FEATURES[j] for j in np.flatnonzero(got != expected)]
                pytest.fail(f"{rules.name} env {i}: observation differs at {wrong[:8]}")
            count = int(out.legal_counts[i])
            assert [int(a) for a in out.legal_ids[i, :count]] == match.legal_ids()
            assert int(out.players[i]) == match.current
            assert env.match_decks(i) == len(match.deals)
            assert [int(v) for v in env.match_scores[i]] == match.scores
            assert int(env.round_numbers[i]) == match.round_number
            if sequence:
                _check_sequence(env, i, match, seen_kinds)
        actions = env.sample_actions()
        seats = [(m.round.dealer, m.round.leader) for m in engine]
        for i, match in enumerate(engine):
            match.apply(int(actions[i]))
        out = env.step(actions)
        seen["steps"] += envs
        for i, match in enumerate(engine):
            new = match.settlements[credited[i] :]
            credited[i] = len(match.settlements)
            deltas = tuple(sum(s.deltas[p] for s in new) for p in (0, 1))
            assert tuple(int(r) for r in out.rewards[i]) == deltas
            seen["instant"] += sum(s.reason == "instant" for s in new)
            live = not match.is_over
            seen["swaps"] += live and (match.round.dealer, match.round.leader) != seats[i]
            assert bool(out.dones[i]) == match.is_over
            if not match.is_over:
                continue
            assert int(env.winners[i]) == (-1 if match.winner is None else match.winner)
            assert [int(v) for v in env.final_scores[i]] == match.scores
            seen["matches"] += 1
            seen["rounds"] += match.round_number
            seen["redeals"] += len(match.deals) - match.round_number
            seen["bust"] += match.round_number < rules.game.rounds
            seen["draws"] += match.winner is None
            streams[i].drop(len(match.deals))
            engine[i] = _new_match(env, i, streams[i])
            credited[i] = 0
    return seen


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_match_episodes_agree_with_engine_every_preset(name: str) -> None:
    rules = get_rules(name)
    seen = _replay_matches(rules, envs=16, matches=80, seed=13)
    assert seen["matches"] >= 80 and seen["swaps"] > 0
    if rules.game.start_points > 0:
        assert seen["bust"] > 0  # koikoi-japan: 30 points each, a bust ends the match early


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESET_NAMES)
def test_match_episodes_agree_with_engine_every_preset_slow(name: str) -> None:
    seen = _replay_matches(get_rules(name), envs=32, matches=1000, seed=102)
    assert seen["instant"] > 0 or get_rules(name).instant.teshi == 0


def test_match_episodes_reach_redeals_and_instant_hands() -> None:
    """Rules that make the rare chance events common: every deal check and instant
    hand path of the match is compared with the engine."""
    base = get_rules("leaflet")  # redeal_dealer swap, both instant hands redeal
    often = base.replace(
        deal__field_redeal=("three_of_a_month",),
        deal__hand_redeal=("four_pairs",),
        instant__teshi=4,
        instant__kuttsuki=5,
    )
    seen = _replay_matches(often, envs=16, matches=40, seed=4)
    assert seen["redeals"] > 0 and seen["instant"] > 0
    fixed = get_rules("modern-hanafuda").replace(
        deal__check_order="field_first",
        deal__field_redeal=("three_of_a_month",),
        instant__teshi=3,
        game__start_points=10,
    )
    seen = _replay_matches(fixed, envs=16, matches=40, seed=5)
    assert seen["redeals"] > 0 and seen["instant"] > 0 and seen["bust"] > 0


# --------------------------------------------------------------- sequences


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_match_sequences_are_the_engines_every_preset(name: str) -> None:
    kinds: set[str] = set()
    seen = _replay_matches(get_rules(name), envs=6, matches=8, seed=21, sequence=True, kinds=kinds)
    assert seen["matches"] >= 8 and seen["rounds"] > 8
    assert {"round_start", "field", "play", "draw", "yaku", "round_over"} <= kinds
    assert {"stop", "exhausted"} & kinds


def test_match_sequences_hold_redeals_instant_hands_and_the_latest_rows() -> None:
    often = get_rules("leaflet").replace(
        deal__field_redeal=("three_of_a_month",),
        deal__hand_redeal=("four_pairs",),
        instant__teshi=4,
        instant__kuttsuki=5,
    )
    kinds: set[str] = set()
    seen = _replay_matches(often, envs=8, matches=12, seed=4, sequence=True, kinds=kinds)
    assert seen["redeals"] > 0 and seen["instant"] > 0
    assert {"redeal", "instant", "koikoi", "stop", "round_over"} <= kinds
    # fewer rows than a match's tokens: the latest are kept, as the encoder keeps them
    seen = _replay_matches(
        get_rules("koikoi-japan"), envs=4, matches=4, seed=8, sequence=True, sequence_length=40
    )
    assert seen["matches"] >= 4


def _swap_unseen(snapshot: dict[str, Any], i: int) -> tuple[int, int, int] | None:
    """In environment ``i`` of ``snapshot``, swap a card of the opponent of the player to
    act with the stock's last card (drawn last): what neither the player nor, for
    their own sequence, the opponent has seen. Returns (opponent, hand card, stock card)."""
    from koikoi.kernel import batch

    state, stock = snapshot["_states"][i], snapshot["_stocks"][i]
    opp = 1 - int(state[batch.S_CURRENT])
    hand = int(state[batch.S_HAND0 + opp])
    if hand == 0 or int(state[batch.S_NSTOCK]) == 0:
        return None
    x, y = (hand & -hand).bit_length() - 1, int(stock[0])
    state[batch.S_HAND0 + opp] = hand & ~(1 << x) | (1 << y)
    stock[0] = x
    return opp, x, y


def _hidden(env: VectorEnv, i: int, opp: int, card: int, other: int) -> bool:
    """Whether ``card`` is still in ``opp``'s hand and ``other`` still in the stock."""
    from koikoi.kernel import batch

    state, stock = env._states[i], env._stocks[i]
    left = [int(c) for c in stock[: int(state[batch.S_NSTOCK])]]
    return bool(int(state[batch.S_HAND0 + opp]) >> card & 1) and other in left


@pytest.mark.parametrize("name", ["nintendo", "koikoi-japan"])
def test_match_sequences_hide_the_unseen_cards(name: str) -> None:
    """Re-dealing what the players cannot see (an opponent's hand card and a stock card
    swapped in a saved state) leaves every sequence unchanged, for both players, until
    one of the two cards comes into view; a different action changes them."""
    a = VectorEnv(16, name, 7, episode="match", sequence=True)
    a.reset()
    _run(a, 140)  # into the matches: earlier rounds in the sequences
    snapshot = a.save()
    swaps = {i: _swap_unseen(snapshot, i) for i in range(16)}
    b = VectorEnv(16, name, 7, episode="match", sequence=True)
    b.restore(snapshot)
    assert not np.array_equal(a._states, b._states)
    live = {i for i, swap in swaps.items() if swap is not None}
    compared = later = 0
    for _ in range(30):
        actions_a = a.sample_actions()
        actions_b = actions_a.copy()
        for i in range(16):
            legal = set(b.legal_ids[i, : b.legal_counts[i]].tolist())
            if int(actions_a[i]) not in legal:  # the opponent would play the swapped card
                live.discard(i)
                actions_b[i] = b.legal_ids[i, 0]
        a.step(actions_a)
        b.step(actions_b)
        for i in sorted(live):
            opp, x, y = swaps[i]  # type: ignore[misc]
            if a.dones[i] or not (_hidden(a, i, opp, x, y) and _hidden(b, i, opp, y, x)):
                live.discard(i)
                continue
            assert int(a.sequence_lengths[i]) == int(b.sequence_lengths[i])
            assert np.array_equal(a.sequences[i], b.sequences[i]), f"env {i}"
            compared += 1
            later += int(a.round_numbers[i]) > 1  # earlier rounds in the sequence too
    assert compared >= 60 and later > 0
    # a public change: another action changes the sequence
    c = VectorEnv(16, name, 7, episode="match", sequence=True)
    c.restore(snapshot)
    a.restore(snapshot)
    other = c.legal_ids[np.arange(16), c.legal_counts - 1]
    a.step(a.legal_ids[:, 0].astype(np.int64))
    c.step(other.astype(np.int64))
    differs = a.legal_counts != 1
    assert all(not np.array_equal(a.sequences[i], c.sequences[i]) for i in np.flatnonzero(differs))
    assert differs.any()


def test_match_rewards_sum_to_the_final_scores() -> None:
    env = VectorEnv(16, "koikoi-japan", 3, episode="match")
    env.reset()
    totals = np.zeros((16, 2))
    ended = 0
    for _ in range(1500):
        out = env.step(env.sample_actions())
        totals += out.rewards
        for i in np.flatnonzero(out.dones):
            assert list(totals[i] + 30) == [int(v) for v in env.final_scores[i]]
            assert sum(int(v) for v in env.final_scores[i]) == 60  # zero-sum
            totals[i] = 0
            ended += 1
    assert ended > 10


# ------------------------------------------------------- round episodes' context


def test_round_episodes_take_a_match_context() -> None:
    env = VectorEnv(6, "koikoi-japan", 2, match_scores=(41, 19), round_number=8, dealer=1)
    out = env.reset()
    for _ in range(40):
        for i in range(6):
            view = env.view(i)
            assert view.match_scores == (41, 19) and view.round_number == 8
            assert np.array_equal(out.observations[i], encoding.encode(view))
        out = env.step(env.sample_actions())
    lead = encoding.SEGMENTS["match:lead"].offset
    assert set(out.observations[:, lead].tolist()) == {np.float32(22 / 50), np.float32(-22 / 50)}
    assert (env.match_scores == (41, 19)).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episode": "game"}, "episode must be 'round' or 'match', not 'game'"),
        ({"episode": "match", "dealer": 0}, "dealer: only for round episodes"),
        (
            {"episode": "match", "round_number": 3, "match_scores": (1, 2)},
            "round_number, match_scores: only for round episodes",
        ),
        ({"match_scores": (1, 2, 3)}, "match_scores must be a tuple of two integers"),
        ({"match_scores": [1, 2]}, "match_scores must be a tuple of two integers"),
    ],
)
def test_bad_episode_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(")):
        VectorEnv(2, "nintendo", 0, **kwargs)


# ------------------------------------------------------------ save and restore


def _run(env: VectorEnv, steps: int) -> list[Any]:
    rows = []
    for _ in range(steps):
        actions = env.sample_actions()
        out = env.step(actions)
        rows.append([actions.copy(), *(a.copy() for a in out if a is not None)])
        rows[-1] += [env.match_scores.copy(), env.winners.copy()]
    return rows


@pytest.mark.parametrize("episode", ["round", "match"])
def test_restore_replays_the_same_future(episode: str) -> None:
    env = VectorEnv(8, "modern-hanafuda", 6, episode=episode, dense_mask=True)
    env.reset()
    _run(env, 30)
    snapshot = pickle.loads(pickle.dumps(env.save()))
    first = _run(env, 120)
    observations = env.observations
    back = env.restore(snapshot)
    assert back.observations is observations  # the env's own arrays, refilled
    assert np.array_equal(back.observations, snapshot["observations"])
    again = _run(env, 120)
    assert all(
        np.array_equal(x, y)
        for a, b in zip(first, again, strict=True)
        for x, y in zip(a, b, strict=True)
    )
    assert any(row[6].any() for row in first)  # dones: episodes ended on the way
    env.restore(snapshot)  # a snapshot can be restored more than once
    assert all(np.array_equal(x, y) for x, y in zip(first[0], _run(env, 1)[0], strict=True))


def test_restore_into_another_env_of_the_same_kind() -> None:
    a = VectorEnv(4, "nintendo", 1, episode="match")
    a.reset()
    _run(a, 50)
    b = VectorEnv(4, "nintendo", 99, episode="match")
    b.restore(a.save())
    assert b.seed == 1
    assert all(np.array_equal(x, y) for x, y in zip(_run(a, 80)[-1], _run(b, 80)[-1], strict=True))


@pytest.mark.parametrize("sequence", [False, True])
def test_restore_rows_brings_back_only_those_environments(sequence: bool) -> None:
    env = VectorEnv(6, "nintendo", 3, episode="match", sequence=sequence, dense_mask=True)
    env.reset()
    _run(env, 20)
    snapshot = env.save()
    _run(env, 20)
    later = env.save()
    rows = np.array([True, False, True, True, False, False])
    env.restore(snapshot, rows=rows)
    now = env.save()
    names = [k for k, v in snapshot.items() if isinstance(v, np.ndarray) and v.size]
    assert "sequences" in names or not sequence
    for name in names:
        assert np.array_equal(now[name][rows], snapshot[name][rows]), name
        assert np.array_equal(now[name][~rows], later[name][~rows]), name
    for bad in (rows[:5], rows.astype(np.int8), [True] * 6):
        with pytest.raises(InvalidInputError, match="rows must be a bool array of 6"):
            env.restore(snapshot, rows=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("other", "message"),
    [
        ({"n": 5}, "the snapshot is of another env: n: snapshot 4, this env 5"),
        ({"rules": "koikoi-japan"}, "the snapshot is of another env: rules: snapshot"),
        ({"episode": "round"}, "episode: snapshot 'match', this env 'round'"),
    ],
)
def test_restore_refuses_another_kind_of_env(other: dict[str, Any], message: str) -> None:
    settings: dict[str, Any] = {"n": 4, "rules": "nintendo", "episode": "match"} | other
    snapshot = VectorEnv(4, "nintendo", 0, episode="match").save()
    env = VectorEnv(settings.pop("n"), settings.pop("rules"), 0, **settings)
    with pytest.raises(InvalidInputError, match=message):
        env.restore(snapshot)
    with pytest.raises(InvalidInputError, match=r"takes a snapshot from VectorEnv\.save"):
        env.restore(b"\x00")  # type: ignore[arg-type]


def test_match_sequences_have_the_single_envs_default_length() -> None:
    rules = get_rules("nintendo")
    env = VectorEnv(2, rules, episode="match", sequence=True)
    rows = sequence.default_length("match", rules)
    assert env.sequence_length == rows == 12 * sequence.MAX_ROUND_TOKENS
    assert env.sequences.shape == (2, rows, sequence.TOKEN_WIDTH)
    assert VectorEnv(2, "leaflet", episode="match", sequence=True).sequence_length == 6 * 91


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sequence": True, "sequence_length": 0}, "sequence_length must be an integer from 1"),
        ({"sequence": True, "sequence_length": 40000}, "from 1 to 32767 or None"),
        ({"sequence": True, "sequence_length": 2.5}, "sequence_length must be an integer"),
        ({"sequence_length": 100}, "sequence_length: only with sequence=True"),
    ],
)
def test_bad_sequence_length(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        VectorEnv(2, "nintendo", 0, episode="match", **kwargs)


@pytest.mark.parametrize("episode", ["round", "match"])
def test_restore_brings_the_sequences_back(episode: str) -> None:
    env = VectorEnv(6, "koikoi-japan", 2, episode=episode, sequence=True)
    env.reset()
    _run(env, 40)
    snapshot = env.save()
    first = [
        (env.step(a), env.sequences.copy(), env.sequence_lengths.copy())[1:]
        for a in (env.sample_actions() for _ in range(60))
    ]
    env.restore(snapshot)
    again = [
        (env.step(a), env.sequences.copy(), env.sequence_lengths.copy())[1:]
        for a in (env.sample_actions() for _ in range(60))
    ]
    assert all(
        np.array_equal(x, y)
        for a, b in zip(first, again, strict=True)
        for x, y in zip(a, b, strict=True)
    )
    plain = VectorEnv(6, "koikoi-japan", 2, episode=episode)
    with pytest.raises(InvalidInputError, match="sequence_length: snapshot"):
        plain.restore(snapshot)


def test_module_examples_run() -> None:
    import doctest

    assert doctest.testmod(vector).failed == 0

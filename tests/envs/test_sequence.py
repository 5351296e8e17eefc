"""The sequence observation: its tokens, hidden information, and every interface that has it.

* The tokens of :mod:`koikoi.kernel.sequence` follow the engine's events.
* Hidden information: re-dealing what a player cannot see (the opponent's unplayed
  cards, the stock order) and replaying the same actions leaves the player's
  sequence unchanged; a public change (another action) changes it.
* Gymnasium and PettingZoo give it with ``observation="sequence"``.
* :class:`~koikoi.envs.vector.VectorEnv` with ``sequence=True`` writes the tokens of
  the engine's view, step by step, for seeded games under every preset (round
  episodes here; match episodes, and their hidden information, in
  tests/envs/test_vector_match.py).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

np = pytest.importorskip("numpy")

from koikoi.game.cards import card_list, format_cards  # noqa: E402
from koikoi.game.engine import Event, Match, Round  # noqa: E402
from koikoi.game.errors import IllegalActionError, InvalidInputError  # noqa: E402
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules  # noqa: E402
from koikoi.game.views import determinize, view_of, view_of_round  # noqa: E402
from koikoi.kernel import sequence  # noqa: E402
from koikoi.kernel.sequence import (  # noqa: E402
    KIND,
    KINDS,
    MAX_ROUND_TOKENS,
    NO_CARD,
    TOKEN_WIDTH,
    WHO_NOBODY,
    WHO_OPPONENT,
    WHO_OWN,
    encode_sequence,
    hand_plane,
    sequence_tokens,
)


def _random_match(rules: str, seed: int, steps: int) -> Match:
    m = Match(get_rules(rules), seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if m.is_over:
            break
        m.apply(rng.choice(m.legal_ids()))
    return m


# --------------------------------------------------------------- the tokens


def test_tokens_follow_the_engines_events() -> None:
    m = _random_match("nintendo", seed=3, steps=60)
    p = 0
    tokens = sequence_tokens(view_of(m, p), "match")
    kinds = [KINDS[t[0]] for t in tokens]
    public = [e for e in m.events if e.private_to is None and e.kind != "first_dealer"]
    # one token per public event, and eight field tokens after each round start
    starts = sum(e.kind == "round_start" for e in public)
    assert len(tokens) == len(public) + 8 * starts
    plays = [e for e in public if e.kind == "play"]
    play_tokens = [t for t in tokens if KINDS[t[0]] in ("play", "discard")]
    assert [t[2] for t in play_tokens] == [e.card for e in plays]
    for t, e in zip(play_tokens, plays, strict=True):
        assert t[1] == (WHO_OWN if e.player == p else WHO_OPPONENT)
        captured = [c for c in t[3:6] if c != NO_CARD]
        assert captured == card_list(e.cards & ~(1 << e.card))
    assert kinds.count("round_start") == starts >= 2
    assert all(len(t) == TOKEN_WIDTH for t in tokens)
    # the rounds' numbers and months, in order
    assert [t[7] for t in tokens] == sorted(t[7] for t in tokens)


def test_round_scope_is_the_views_round_and_padding_is_zero() -> None:
    m = _random_match("nintendo", seed=3, steps=60)
    assert m.round_number >= 2
    view = view_of(m, 1)
    arr, count = encode_sequence(view)
    assert arr.shape == (MAX_ROUND_TOKENS, TOKEN_WIDTH) and arr.dtype == np.int16
    assert KINDS[arr[0, 0]] == "round_start" and set(arr[:count, 7]) == {m.round_number}
    assert not arr[count:].any()
    whole = sequence_tokens(view, "match")
    assert [tuple(r) for r in arr[:count]] == whole[-count:]
    # a shorter array keeps the latest tokens
    short, n = encode_sequence(view, length=5, scope="match")
    assert n == 5 and [tuple(r) for r in short] == whole[-5:]


def test_both_players_see_the_same_events_from_their_own_side() -> None:
    m = _random_match("koikoi-japan", seed=8, steps=25)
    a, b = sequence_tokens(view_of(m, 0), "match"), sequence_tokens(view_of(m, 1), "match")
    swap = {WHO_OWN: WHO_OPPONENT, WHO_OPPONENT: WHO_OWN, WHO_NOBODY: WHO_NOBODY}

    def turned(t: tuple[int, ...]) -> tuple[int, ...]:
        # a round start's value is the leader, seen from the observer too
        value = swap[t[6]] if t[0] == KIND["round_start"] else t[6]
        return (t[0], swap[t[1]], *t[2:6], value, *t[7:])

    assert [turned(t) for t in a] == b
    assert a[0][0] == KIND["round_start"] and a != b


def test_own_hand_is_apart() -> None:
    m = _random_match("nintendo", seed=2, steps=3)
    view = view_of(m, 0)
    assert list(np.flatnonzero(hand_plane(view))) == card_list(m.round.hands[0])


def test_bad_arguments_name_what_is_allowed() -> None:
    m = Match(seed=1)
    with pytest.raises(InvalidInputError, match="scope must be 'round' or 'match'"):
        sequence_tokens(view_of(m, 0), "game")
    with pytest.raises(InvalidInputError, match="spectator"):
        sequence_tokens(view_of(m, None))
    with pytest.raises(InvalidInputError, match="length must be a positive integer"):
        encode_sequence(view_of(m, 0), length=0)
    with pytest.raises(InvalidInputError, match="int16 array of shape"):
        sequence.encode_sequence_into(view_of(m, 0), np.zeros((4, 3), dtype=np.int16))


# ------------------------------------------------------- hidden information


def _redeck(m: Match, dealt: Round, opp: int) -> list[int]:
    """The current round's deck with the opponent's unplayed cards and the undrawn stock
    replaced by those of ``dealt`` (as the OpenSpiel adapter re-deals)."""
    rnd = m.round
    deck = list(m.deals[-1])
    first = 0 if opp == rnd.dealer else 8
    slots = [i for i in range(first, first + 8) if rnd.hands[opp] >> deck[i] & 1]
    for i, c in zip(slots, card_list(dealt.hands[opp]), strict=True):
        deck[i] = c
    for i, c in enumerate(dealt.stock, start=48 - len(dealt.stock)):
        deck[i] = c
    return deck


def twin_match(m: Match, player: int, rng: random.Random) -> Match | None:
    """``m`` replayed from a deal that differs only in what ``player`` cannot see now."""
    view = view_of(m, player, with_history=False)
    opp = 1 - player
    for _ in range(50):
        dealt = determinize(view, rng)
        if dealt.hands[opp] == m.round.hands[opp] and dealt.stock == m.round.stock:
            continue
        decks = [list(d) for d in m.deals[:-1]] + [_redeck(m, dealt, opp)]
        twin = Match(m.rules, seed=m.seed, decks=decks)
        try:
            for a in m.actions:
                twin.apply(a)
        except IllegalActionError:
            continue  # the new hand could not have played as the opponent did
        if twin.round_number == m.round_number and not twin.is_over:
            return twin
    return None


@pytest.mark.parametrize("rules", ["nintendo", "koikoi-japan", "wikipedia"])
def test_re_dealing_the_unseen_cards_leaves_the_sequence_and_a_public_change_changes_it(
    rules: str,
) -> None:
    checked = changed = 0
    for seed in range(12):
        rng = random.Random(seed)
        m = _random_match(rules, seed=seed, steps=rng.randrange(4, 70))
        if m.is_over:
            continue
        for player in (0, 1):
            twin = twin_match(m, player, rng)
            if twin is None:
                continue
            assert twin.round.hands[1 - player] != m.round.hands[1 - player] or (
                twin.round.stock != m.round.stock
            )
            for scope in ("round", "match"):
                ours = encode_sequence(view_of(m, player), length=600, scope=scope)
                theirs = encode_sequence(view_of(twin, player), length=600, scope=scope)
                assert np.array_equal(ours[0], theirs[0]) and ours[1] == theirs[1]
            assert np.array_equal(hand_plane(view_of(m, player)), hand_plane(view_of(twin, player)))
            checked += 1
            # a public change: the player to act takes another action
            legal = m.legal_ids()
            if len(legal) > 1:
                a, b = _random_match(rules, seed, 0), _random_match(rules, seed, 0)
                for x in m.actions:
                    a.apply(x)
                    b.apply(x)
                a.apply(legal[0])
                b.apply(legal[-1])
                sa = encode_sequence(view_of(a, player), length=600, scope="match")
                sb = encode_sequence(view_of(b, player), length=600, scope="match")
                assert not np.array_equal(sa[0], sb[0])
                changed += 1
    assert checked >= 12 and changed >= 6


# ------------------------------------------------------ Gymnasium, PettingZoo


def test_gymnasium_sequence_observation_is_the_views() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    import koikoi.envs.gymnasium as kgym

    for episode in ("round", "match"):
        env = gymnasium.make(
            kgym.ENV_ID, rules="leaflet", opponent="random", observation="sequence", episode=episode
        )
        check_env(env.unwrapped, skip_render_check=True)
    m = Match(get_rules("nintendo"), seed=12)
    seat = m.current  # the seat that leads: nobody has moved before it
    env = kgym.KoiKoiEnv("nintendo", opponent="random", observation="sequence", seat=seat)
    obs, _ = env.reset(seed=12)
    assert env.observation_space.contains(obs)
    view = view_of(m, seat)
    tokens, count = encode_sequence(view)
    assert obs["sequence_length"] == count == 9 and np.array_equal(obs["sequence"], tokens)
    assert np.array_equal(obs["hand"], hand_plane(view))
    for _ in range(200):
        obs, _, terminated, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert env.observation_space.contains(obs)
        n = int(obs["sequence_length"])
        assert KINDS[obs["sequence"][0, 0]] == "round_start" and not obs["sequence"][n:].any()
        if terminated:
            last = [KINDS[k] for k in obs["sequence"][n - 2 : n, 0]]
            assert last[-1] == "round_over" or last == ["round_over", "match_over"]
            obs, _ = env.reset()


def test_gymnasium_default_is_unchanged_and_bad_length_is_named() -> None:
    pytest.importorskip("gymnasium")
    import koikoi.envs.gymnasium as kgym

    env = kgym.KoiKoiEnv("leaflet", opponent="random")
    obs, _ = env.reset(seed=1)
    assert set(obs) == {"observation", "action_mask"}
    with pytest.raises(InvalidInputError, match="sequence_length must be a positive integer"):
        kgym.KoiKoiEnv("leaflet", observation="sequence", sequence_length=0)
    with pytest.raises(InvalidInputError, match="'dict', 'vector', 'sequence'"):
        kgym.KoiKoiEnv("leaflet", observation="tokens")


def test_pettingzoo_sequence_observation_is_each_views() -> None:
    pytest.importorskip("pettingzoo")
    from koikoi.envs import pettingzoo as kpz

    e = kpz.raw_env("nintendo", observation="sequence", episode="match")
    e.reset(seed=11)
    m = Match(get_rules("nintendo"), seed=11)
    rng = random.Random(0)
    for _ in range(120):
        for p, agent in enumerate(kpz.AGENTS):
            obs = e.observe(agent)
            assert e.observation_space(agent).contains(obs)
            view = view_of(m, p)
            tokens, count = encode_sequence(view, length=e.sequence_length, scope="match")
            assert obs["sequence_length"] == count
            assert np.array_equal(obs["sequence"], tokens)
            assert np.array_equal(obs["hand"], hand_plane(view))
        a = rng.choice(m.legal_ids())
        m.apply(a)
        e.step(a)
        if m.is_over:
            break


# ---------------------------------------------------------------- VectorEnv


def _round_start(rnd: Round) -> Event:
    """The engine's round start event of a fresh ``rnd``, as a match logs it."""
    return Event(
        "round_start",
        None,
        None,
        0,
        {
            "round": rnd.round_number,
            "month": rnd.month,
            "dealer": rnd.dealer,
            "leader": rnd.leader,
            "field": format_cards(rnd.field).split(),
        },
    )


def _fresh(env: Any, i: int, rules: Rules) -> tuple[Round, Event]:
    rnd = env.deal(i).round(rules)
    rnd.events = []  # the engine logs the round's events from here
    return rnd, _round_start(rnd)


def _replay_sequences(
    rules: Rules, *, envs: int, rounds: int, seed: int, **options: Any
) -> set[str]:
    """Step ``envs`` environments with random actions until ``rounds`` rounds have ended,
    comparing every sequence with the engine's. Returns the token kinds compared."""
    from koikoi.envs.vector import VectorEnv

    env = VectorEnv(envs, rules, seed, sequence=True, **options)
    env.reset()
    engine = [_fresh(env, i, rules) for i in range(envs)]
    done = 0
    kinds: set[str] = set()
    while done < rounds:
        for i, (rnd, start) in enumerate(engine):
            history = (start, *(rnd.events or ()))
            view = view_of_round(rnd, rnd.current, history=history)
            tokens, count = encode_sequence(view, length=env.sequence_length)
            got = env.sequences[i]
            if int(env.sequence_lengths[i]) != count or not np.array_equal(got, tokens):
                expected = [KINDS[t[0]] for t in tokens[:count]]
                pytest.fail(
                    f"{rules.name} env {i}: the sequence differs from the engine's {expected}"
                )
            kinds.update(KINDS[k] for k in tokens[:count, 0])
        actions = env.sample_actions()
        for i, (rnd, _) in enumerate(engine):
            rnd.apply(int(actions[i]))
        env.step(actions)
        for i, (rnd, _) in enumerate(engine):
            if rnd.is_over:
                done += 1
                engine[i] = _fresh(env, i, rules)
    return kinds


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_vector_sequences_are_the_engines_step_by_step(name: str) -> None:
    from koikoi.envs import vector

    if not vector.available():
        pytest.skip("numba is not installed")
    kinds = _replay_sequences(get_rules(name), envs=12, rounds=120, seed=4, round_number="random")
    assert {"round_start", "field", "play", "draw", "take", "yaku", "koikoi"} <= kinds


def test_vector_sequences_under_wild_lightning_and_discards() -> None:
    from koikoi.envs import vector

    if not vector.available():
        pytest.skip("numba is not installed")
    rules = get_rules("nintendo").replace(
        play__wild_lightning=True, play__hand_card="any_or_discard"
    )
    kinds = _replay_sequences(rules, envs=12, rounds=150, seed=9)
    assert {"discard", "take", "koikoi"} <= kinds


def test_vector_round_sequences_keep_the_latest_rows() -> None:
    from koikoi.envs import vector

    if not vector.available():
        pytest.skip("numba is not installed")
    kinds = _replay_sequences(
        get_rules("koikoi-japan"), envs=8, rounds=40, seed=2, sequence_length=12
    )
    assert {"play", "draw", "koikoi"} <= kinds


# ------------------------------------------------------------------ OpenSpiel


@pytest.mark.parametrize("episode", ["round", "match"])
def test_openspiel_information_state_carries_the_sequence(episode: str) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.observation import make_observation

    from koikoi.envs.openspiel import KoiKoiState  # noqa: F401  (registers the game)

    game = pyspiel.load_game("koikoi", {"rules": "nintendo", "episode": episode})
    rng = random.Random(5)
    state = game.new_initial_state()
    steps = 0
    while not state.is_terminal() and steps < (8 if episode == "round" else 70):
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(actions, probs)[0])
            continue
        state.apply_action(rng.choice(state.legal_actions()))
        steps += 1
    if state.is_terminal() or state.is_chance_node():
        pytest.skip("the sampled game ended early")
    rows = sequence.default_length(episode, get_rules("nintendo"))
    info = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    public = make_observation(
        game,
        pyspiel.IIGObservationType(
            public_info=True, perfect_recall=True, private_info=pyspiel.PrivateInfoType.NONE
        ),
    )
    seen = []
    for p in (0, 1):
        info.set_from(state, p)
        view = view_of_round(state.round, p, history=state._core.events())
        tokens, count = encode_sequence(view, length=rows, scope=episode)
        assert info.dict["sequence"].shape == (rows, TOKEN_WIDTH) and count > 9
        assert np.array_equal(info.dict["sequence"], tokens.astype(np.float32))
        public.set_from(state, p)
        seen.append(public.dict["sequence"].copy())
    assert np.array_equal(seen[0], seen[1])  # public only: the same for both players

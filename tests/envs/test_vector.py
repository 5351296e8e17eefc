"""The batched simulator agrees with the reference engine, step by step.

Every environment's round is replayed through :class:`koikoi.game.engine.Round`
(built from the simulator's deal, actions applied with the checked ``apply``);
at every step the observation must equal ``encoding.encode`` of the engine's
view of the player to act, the legal ids (in order) ``Round.legal_ids()``, the
dense mask ``encoding.action_mask``, and when a round ends the rewards must be
the settlement's deltas. The default run plays a few hundred rounds per preset;
``-m slow`` plays thousands per preset and per kernel rule variant.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

np = pytest.importorskip("numpy")

from koikoi import kernel  # noqa: E402
from koikoi.cli import main  # noqa: E402
from koikoi.envs import vector  # noqa: E402
from koikoi.envs.vector import MAX_LEGAL, VectorEnv  # noqa: E402
from koikoi.game.engine import Round  # noqa: E402
from koikoi.game.errors import IllegalActionError, InvalidInputError  # noqa: E402
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules  # noqa: E402
from koikoi.game.views import view_of_round  # noqa: E402
from koikoi.kernel import encoding  # noqa: E402

pytestmark = pytest.mark.skipif(not vector.available(), reason="numba is not installed")


def _variants() -> dict[str, Rules]:
    """Rule variants that reach what the presets do not (wild Lightning, zero-sum, ...)."""
    n = get_rules("nintendo")
    mh = get_rules("modern-hanafuda")
    return {
        "wild_any_or_discard": n.replace(
            play__wild_lightning=True, play__hand_card="any_or_discard"
        ),
        "wild_must_match": mh.replace(play__wild_lightning=True),
        "dealer_point_zero_sum": n.replace(
            end__exhausted="dealer_point", end__oya_ken=2, game__start_points=30
        ),
        "viewing_after_koikoi": n.replace(yaku__viewing_after_koikoi=2, koikoi__limit=1),
        "exhausted_last_yaku": n.replace(end__exhausted="last_yaku", end__oya_ken=3),
        "sake_either_exclusive": mh.replace(yaku__sake_cup="either", points__tsukifuda=4),
    }


def _engine_view(env: VectorEnv, rnd: Round) -> Any:
    return view_of_round(
        rnd, rnd.current, match_scores=(env.start_points, env.start_points), rounds=env.rounds
    )


def _replay(
    rules: Rules,
    *,
    envs: int,
    rounds: int,
    seed: int,
    nonzero: Any = None,
    phases: set[str] | None = None,
    **options: Any,
) -> dict[str, int]:
    """Step ``envs`` environments with random actions until ``rounds`` rounds have ended,
    checking every step against the engine. Returns counts of what was reached; marks
    in ``nonzero`` (a bool array of ``SIZE``) each value ever not 0, in ``phases``
    each phase compared."""
    env = VectorEnv(envs, rules, seed, dense_mask=True, **options)
    out = env.reset()
    engine = [env.deal(i).round(rules) for i in range(envs)]
    seen = {"rounds": 0, "steps": 0, "wins": 0, "koikoi": 0, "take": 0, "discard": 0}
    seen |= {"declined": 0, "month_not_1": 0}
    while seen["rounds"] < rounds:
        for i, rnd in enumerate(engine):
            view = _engine_view(env, rnd)
            expected = encoding.encode(view)
            got = out.observations[i]
            if not np.array_equal(got, expected):
                wrong = [encoding.FEATURES[j] for j in np.flatnonzero(got != expected)]
                pytest.fail(f"{rules.name} env {i}: observation differs at {wrong[:8]}")
            if nonzero is not None:
                nonzero |= got != 0
            if phases is not None:
                phases.add(rnd.phase.name)
            count = int(out.legal_counts[i])
            assert [int(a) for a in out.legal_ids[i, :count]] == rnd.legal_ids()
            assert (out.legal_ids[i, count:] == -1).all()
            assert out.masks is not None
            assert np.array_equal(out.masks[i], encoding.action_mask(view))
            assert int(out.players[i]) == rnd.current
            seen["declined"] += bool(rnd.declined[0] or rnd.declined[1])
            seen["month_not_1"] += rnd.month != 1
        actions = env.sample_actions()
        for i, rnd in enumerate(engine):
            a = int(actions[i])
            seen["koikoi"] += a == 2448
            seen["take"] += 2400 <= a < 2448
            seen["discard"] += 2352 <= a < 2400
            rnd.apply(a)  # checked: the simulator's legal ids are the engine's
        out = env.step(actions)
        seen["steps"] += envs
        for i, rnd in enumerate(engine):
            if rnd.is_over:
                settlement = rnd.settlement
                assert settlement is not None
                assert out.dones[i]
                assert tuple(int(r) for r in out.rewards[i]) == settlement.deltas
                seen["rounds"] += 1
                seen["wins"] += settlement.winner is not None
                engine[i] = env.deal(i).round(rules)
            else:
                assert not out.dones[i]
                assert not out.rewards[i].any()
    return seen


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_agrees_with_engine_every_preset(name: str) -> None:
    seen = _replay(get_rules(name), envs=24, rounds=300, seed=11)
    assert seen["rounds"] >= 300
    assert seen["wins"] > 0 and seen["koikoi"] > 0 and seen["declined"] > 0
    if name == "wikipedia":  # any_or_discard
        assert seen["discard"] > 0


def test_agreement_covers_every_segment_and_phase() -> None:
    """The comparison sees every segment of the layout hold something (several presets,
    every phase of a live round), so no segment agrees only by being 0 on both sides."""
    nonzero = np.zeros(encoding.SIZE, dtype=bool)
    phases: set[str] = set()
    for k, name in enumerate(("nintendo", "koikoi-japan", "wikipedia", "compendium")):
        rules = get_rules(name)
        options = {"round_number": "random", "dealer": "random"}
        _replay(rules, envs=12, rounds=60, seed=20 + k, nonzero=nonzero, phases=phases, **options)
    # equal match scores: the lead is always 0 in the batched simulator
    constant = {"match:lead"}
    empty = [
        s.name
        for s in encoding.LAYOUT
        if s.name not in constant and not nonzero[s.offset : s.offset + s.size].any()
    ]
    assert empty == []
    assert phases == {"PLAY", "TAKE", "DECIDE"}
    assert not nonzero[encoding.SEGMENTS["match:lead"].offset]


def test_agrees_with_random_rounds_and_dealer() -> None:
    rules = get_rules("compendium")  # tsukifuda: the month matters
    seen = _replay(rules, envs=16, rounds=200, seed=5, round_number="random", dealer=1)
    assert seen["month_not_1"] > 0


@pytest.mark.parametrize("name", list(_variants()))
def test_agrees_with_engine_variants(name: str) -> None:
    seen = _replay(_variants()[name], envs=16, rounds=120, seed=3)
    assert seen["rounds"] >= 120


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESET_NAMES)
def test_agrees_with_engine_every_preset_slow(name: str) -> None:
    seen = _replay(get_rules(name), envs=64, rounds=5000, seed=101, round_number="random")
    assert seen["take"] > 0


@pytest.mark.slow
def test_agrees_with_engine_kernel_variants_slow() -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent.parent / "test_kernel.py"
    spec = importlib.util.spec_from_file_location("kernel_variants", path)
    assert spec is not None and spec.loader is not None
    kernel_tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernel_tests)
    for rules in kernel_tests.VARIANTS.values():
        _replay(rules, envs=32, rounds=1000, seed=7)


# ----------------------------------------------------------------- the state


def test_state_is_the_engine_state_and_view() -> None:
    rules = get_rules("wikipedia")
    env = VectorEnv(6, rules, 2)
    env.reset()
    engine = [env.deal(i).round(rules) for i in range(6)]
    for _ in range(60):
        for i, rnd in enumerate(engine):
            ours = env.kernel_state(i)
            theirs = kernel.encode_round(rnd)
            assert np.array_equal(ours.state, theirs.state)
            assert np.array_equal(ours.stock[: rnd.stock_count], theirs.stock[: rnd.stock_count])
            back = env.round(i)
            assert back.stock == rnd.stock and back.declined == rnd.declined
            assert np.array_equal(encoding.encode(env.view(i)), env.observations[i])
        actions = env.sample_actions()
        for i, rnd in enumerate(engine):
            rnd.apply(int(actions[i]))
        env.step(actions)
        engine = [env.deal(i).round(rules) if r.is_over else r for i, r in enumerate(engine)]


def test_deal_is_a_match_deal() -> None:
    env = VectorEnv(3, "nintendo", 9, dealer=0, round_number=4)
    env.reset()
    for i in range(3):
        d = env.deal(i)
        assert sorted(d.deck) == list(range(48))
        assert d.dealer == 0 and d.round_number == 4
        rnd = d.round(env.rules)
        assert rnd.month == 4 and rnd.current == 0
        assert rnd.hands[0] == sum(1 << c for c in d.deck[:8])
        assert rnd.stock == list(d.deck[24:])


# ------------------------------------------------------------------ seeding


def _trajectory(env: VectorEnv, steps: int) -> list[Any]:
    out = env.reset()
    rows = [out.observations.copy()]
    for _ in range(steps):
        out = env.step(env.sample_actions())
        rows += [out.observations.copy(), out.rewards.copy(), out.dones.copy()]
    return rows


def test_same_seed_same_rounds() -> None:
    a = _trajectory(VectorEnv(8, "koikoi-japan", 42), 80)
    b = _trajectory(VectorEnv(8, "koikoi-japan", 42), 80)
    c = _trajectory(VectorEnv(8, "koikoi-japan", 43), 80)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_deals_do_not_depend_on_n_or_actions() -> None:
    small = VectorEnv(2, "nintendo", 7)
    big = VectorEnv(5, "nintendo", 7)
    small.reset()
    big.reset()
    assert [small.deal(i) for i in range(2)] == [big.deal(i) for i in range(2)]
    assert len({big.deal(i).deck for i in range(5)}) == 5
    # the next deal of environment 0 is the same whatever was played before it
    firsts = []
    for pick in (0, -1):
        env = VectorEnv(1, "nintendo", 7)
        out = env.reset()
        while True:
            out = env.step([int(out.legal_ids[0, 0 if pick == 0 else out.legal_counts[0] - 1])])
            if out.dones[0]:
                break
        firsts.append(env.deal(0))
    assert firsts[0] == firsts[1] != small.deal(0)


def test_reset_with_seed_restarts_the_deals() -> None:
    env = VectorEnv(4, "nintendo", 1)
    env.reset()
    first = [env.deal(i) for i in range(4)]
    env.reset()
    assert [env.deal(i) for i in range(4)] != first
    env.reset(seed=1)
    assert [env.deal(i) for i in range(4)] == first
    assert env.seed == 1


def test_rewards_are_zero_sum_under_start_points() -> None:
    env = VectorEnv(32, "koikoi-japan", 0)  # start_points 30: zero-sum
    env.reset()
    ended = 0
    for _ in range(100):
        out = env.step(env.sample_actions())
        ended += int(out.dones.sum())
        assert np.array_equal(out.rewards[:, 0], -out.rewards[:, 1])
        assert not out.rewards[~out.dones].any()
    assert ended > 50
    assert env.observations[0, encoding.ROUND_OFFSET + 30] == np.float32(30 / 50)


# ------------------------------------------------------------------- arrays


def test_compact_and_dense_masks_agree() -> None:
    compact = VectorEnv(16, "modern-hanafuda", 4)
    dense = VectorEnv(16, "modern-hanafuda", 4, dense_mask=True)
    a = compact.reset()
    b = dense.reset()
    assert a.masks is None and compact.masks is None
    for _ in range(50):
        assert b.masks is not None
        assert np.array_equal(compact.action_masks(), b.masks)
        assert np.array_equal(a.legal_ids, b.legal_ids)
        assert np.array_equal(a.observations, b.observations)
        actions = compact.sample_actions()
        assert np.array_equal(actions, dense.sample_actions())
        a = compact.step(actions)
        b = dense.step(actions)
    buffer = np.ones((16, 2450), dtype=np.int8)
    assert compact.action_masks(buffer) is buffer
    assert np.array_equal(buffer, b.masks)


def test_arrays_have_the_documented_shapes() -> None:
    env = VectorEnv(3, "nintendo", 0)
    out = env.reset()
    assert out.observations.shape == (3, encoding.SIZE) and out.observations.dtype == np.float32
    assert out.legal_ids.shape == (3, MAX_LEGAL) and out.legal_ids.dtype == np.int16
    assert out.legal_counts.dtype == np.int16 and out.players.dtype == np.int8
    assert out.rewards.shape == (3, 2) and out.rewards.dtype == np.float32
    assert out.dones.dtype == np.bool_ and not out.dones.any()
    assert env.observation_size == encoding.SIZE and env.num_actions == 2450
    assert out.observations is env.observations  # the env's own buffers, reused
    assert "VectorEnv(3, 'nintendo', seed=0" in repr(env)


def test_actions_may_be_any_integer_sequence() -> None:
    env = VectorEnv(2, "nintendo", 0)
    out = env.reset()
    first = [int(out.legal_ids[i, 0]) for i in range(2)]
    env.step(np.array(first, dtype=np.int16))
    out = env.step([int(out.legal_ids[i, 0]) for i in range(2)])
    assert out.observations.shape == (2, encoding.SIZE)


# ------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "n (the number of environments) must be 1 or more, not 0"),
        ({"n": True}, "must be 1 or more, not True"),
        ({"n": 2.0}, "must be 1 or more, not 2.0"),
        ({"n": 2, "seed": "x"}, "seed must be an integer, not 'x'"),
        ({"n": 2, "dealer": 2}, "dealer must be 'random' or an integer from 0 to 1, not 2"),
        ({"n": 2, "round_number": 0}, "round_number must be 'random' or an integer from 1 to 12"),
        ({"n": 2, "round_number": "last"}, "not 'last'"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        VectorEnv(**kwargs)


def test_step_before_reset() -> None:
    env = VectorEnv(2, "nintendo", 0)
    with pytest.raises(InvalidInputError, match=r"call reset\(\) before step\(\)"):
        env.step([0, 0])
    with pytest.raises(InvalidInputError, match="call reset"):
        env.sample_actions()
    with pytest.raises(InvalidInputError, match="no round is dealt yet"):
        env.deal(0)


@pytest.mark.parametrize(
    "actions",
    [[1, 2, 3], [[1, 2]], ["a", "b"], [0.5, 1.0], 7],
)
def test_bad_actions_shape_or_type(actions: Any) -> None:
    env = VectorEnv(2, "nintendo", 0)
    env.reset()
    with pytest.raises(InvalidInputError, match="actions must be 2 integer action ids"):
        env.step(actions)


def test_illegal_action_changes_nothing() -> None:
    env = VectorEnv(3, "nintendo", 0)
    out = env.reset()
    before = [a.copy() for a in (out.observations, out.legal_ids, out.legal_counts)]
    states = [env.kernel_state(i).state for i in range(3)]
    actions = [int(out.legal_ids[i, 0]) for i in range(3)]
    actions[2] = 2449  # stop, in the play phase
    with pytest.raises(
        IllegalActionError, match=r"environment 2: action 2449 \(stop\) is not legal"
    ):
        env.step(actions)
    actions[2] = 99999
    with pytest.raises(IllegalActionError, match=r"action 99999 \(out of range\).*legal: \d+ \("):
        env.step(actions)
    assert all(np.array_equal(x, y) for x, y in zip(before, out[:3], strict=True))
    assert all(np.array_equal(states[i], env.kernel_state(i).state) for i in range(3))


def test_bad_index_and_output_arrays() -> None:
    env = VectorEnv(2, "nintendo", 0)
    env.reset()
    with pytest.raises(InvalidInputError, match="environment index must be an integer from 0 to 1"):
        env.round(2)
    with pytest.raises(InvalidInputError, match="out must be a contiguous int64 array"):
        env.sample_actions(np.zeros(2, dtype=np.int32))
    with pytest.raises(InvalidInputError, match="out must be a contiguous int8 array"):
        env.action_masks(np.zeros((2, 5), dtype=np.int8))
    with pytest.raises(InvalidInputError, match="seed must be an integer"):
        env.reset(seed=1.5)  # type: ignore[arg-type]


# ---------------------------------------------------------- cache and bench


def test_numba_cache_dir_is_chosen_from_the_environment(tmp_path: Any) -> None:
    from koikoi.kernel.numba_cache import numba_cache_dir

    home = tmp_path / "home"
    assert numba_cache_dir({}, home=home) == home / ".cache" / "koikoi" / "numba"
    xdg = str(tmp_path / "xdg")
    assert numba_cache_dir({"XDG_CACHE_HOME": xdg}, home=home) == tmp_path / "xdg/koikoi/numba"
    # a relative XDG_CACHE_HOME is ignored (XDG base directory rule), an empty one too
    for bad in ("relative/cache", ""):
        assert numba_cache_dir({"XDG_CACHE_HOME": bad}, home=home) == home / ".cache/koikoi/numba"
    chosen = {"NUMBA_CACHE_DIR": "/somewhere/else", "XDG_CACHE_HOME": xdg}
    assert str(numba_cache_dir(chosen, home=home)) == "/somewhere/else"


@pytest.mark.parametrize("numba_dir", [None, "given"])
def test_numba_cache_dir_is_set_before_numba_is_imported(tmp_path: Any, numba_dir: Any) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    expected = tmp_path / "xdg" / "koikoi" / "numba"
    if numba_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / numba_dir)
        expected = tmp_path / numba_dir
    code = "import koikoi.kernel.numba_cache, numba; print(numba.config.CACHE_DIR)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str(expected)


def test_numba_cache_dir_is_set_when_numba_came_first(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    code = "import numba, koikoi.kernel.numba_cache; print(numba.config.CACHE_DIR)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str(tmp_path / "koikoi" / "numba")


def test_compiled_code_is_cached_in_the_cache_dir() -> None:
    import doctest
    from pathlib import Path

    from koikoi.kernel import _compiled, batch, numba_cache

    assert doctest.testmod(numba_cache).failed == 0
    for module, fn in ((batch, batch.step_all), (_compiled, _compiled.apply_action)):
        where = Path(fn._cache._cache_path)
        assert where.is_relative_to(numba_cache.CACHE_DIR)
        assert not where.is_relative_to(Path(module.__file__).parent)


def test_cache_key_holds_the_kernel_source() -> None:
    from koikoi.kernel import batch as impl

    cache = impl.step_all._cache
    key = cache._index_key(impl.step_all.signatures[0], impl.step_all.targetctx.codegen())
    assert key[-1] == impl.SOURCE_FINGERPRINT
    assert isinstance(impl.SOURCE_FINGERPRINT, int)


def test_benchmark_function() -> None:
    result = vector.benchmark(0.05, get_rules("nintendo"), 0, n=32)
    assert result["steps"] >= 32 and result["steps_per_s"] > 0 and result["n"] == 32
    with pytest.raises(InvalidInputError, match="seconds must be positive"):
        vector.benchmark(0, get_rules("nintendo"))


def test_bench_env_command(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "env", "--n", "16", "--seconds", "0.05", "--repeat", "1", "--json"]
    assert main([*args, "--baselines", "none"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["command"].startswith("koikoi bench env --n 16 --seconds 0.05")
    names = [row["interface"] for row in data["rows"]]
    assert names == [
        "VectorEnv, legal ids",
        "VectorEnv, match episodes",
        "VectorEnv, dense masks",
        "VectorEnv, legal ids + sequences",
        "VectorEnv, match episodes + sequences",
    ]
    assert all(row["steps_per_s"] > 0 for row in data["rows"])
    assert main(["bench", "env", "--n", "16", "--seconds", "0.05", "--repeat", "1"]) == 0
    text = capsys.readouterr().out
    assert "engine + encode + action_mask" in text and "load average" in text


def test_bench_env_command_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "env", "--n", "0"]) == 2
    assert "--n must be 1 or more" in capsys.readouterr().err


def test_the_first_simulator_of_a_process_says_it_loads_the_compiled_kernel() -> None:
    """docs/research.md: the first run compiles for about 45 s; it is not silent."""
    import subprocess
    import sys

    code = (
        "from koikoi.envs.vector import VectorEnv\n"
        "VectorEnv(2, 'leaflet', seed=0).reset()\n"
        "VectorEnv(2, 'leaflet', seed=1).reset()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("koikoi:")]
    assert lines == [
        "koikoi: loading the compiled simulator (numba compiles it on the first run, "
        "about 45 s; later runs load the cache)"
    ]

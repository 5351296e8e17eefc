"""The learned player: DMC training runs, is reproducible and learns; the shipped model plays
legal moves from its own view; the ``learned`` spec parses and refuses bad options clearly."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest

from koikoi.agents import make_agent
from koikoi.agents.learned import (
    ACTION_FEATURES,
    SCALE,
    LearnedAgent,
    QNet,
    action_features,
    shipped,
)
from koikoi.cli import main
from koikoi.game.actions import KOIKOI_ID, STOP_ID, Play, TakeDrawn, action_from_id
from koikoi.game.cards import Card
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import get_rules
from koikoi.game.views import determinize, view_of, view_of_round
from koikoi.kernel import encoding
from koikoi.lab.arena import ArenaConfig, run_arena
from koikoi.lab.dmc import DMCConfig, DMCResult, _Adam, _loss_and_grads, choose, train_dmc
from koikoi.lab.ppo import PPOConfig, _surrogate, train_ppo

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TINY = DMCConfig(
    rules=("nintendo",),
    steps=6_000,
    seed=3,
    num_envs=64,
    hidden=(16, 8),
    batch=128,
    eval_every=8,
    eval_rounds=32,
)


@pytest.fixture(scope="module")
def tiny() -> tuple[DMCResult, DMCResult]:
    return train_dmc(TINY), train_dmc(TINY)


def test_tiny_training_runs_is_reproducible_and_the_loss_falls(
    tiny: tuple[DMCResult, DMCResult],
) -> None:
    a, b = tiny
    assert a.steps >= TINY.steps and a.rounds > 0
    pa, pb = a.net.params(), b.net.params()
    assert all(np.array_equal(x, y) for x, y in zip(pa, pb, strict=True))

    def timeless(curve: list[dict[str, float]]) -> list[dict[str, float]]:
        return [{k: v for k, v in p.items() if k != "seconds"} for p in curve[1:]]

    assert timeless(a.curve) == timeless(b.curve)
    losses = [p["loss"] for p in a.curve[1:]]
    assert len(losses) >= 3 and all(np.isfinite(losses))
    # every row has the evaluation against random play
    assert all("vs_random:nintendo" in p for p in a.curve)
    other = train_dmc(dataclasses.replace(TINY, seed=4))
    assert not np.array_equal(other.net.state, a.net.state)


def test_updates_lower_the_loss_on_fixed_data() -> None:
    from koikoi.envs.vector import VectorEnv

    env = VectorEnv(64, "nintendo", seed=1, round_number="random")
    out = env.reset()
    net = QNet.create(hidden=(16, 8), seed=0)
    _, pick, feats = choose(net, out.observations, out.legal_ids, out.legal_counts)
    s, a = out.observations.copy(), feats[pick]
    y = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    adam = _Adam(net.params(), 1e-2)
    first, _ = _loss_and_grads(net, s, a, y)
    for _ in range(100):
        _, grads = _loss_and_grads(net, s, a, y)
        adam.step(grads, clip=5.0)
    last, _ = _loss_and_grads(net, s, a, y)
    assert last < 0.5 * first


def test_backward_pass_matches_finite_differences() -> None:
    net = QNet.create(hidden=(6, 5), seed=1)
    rng = np.random.default_rng(0)
    s = rng.random((7, encoding.SIZE), dtype=np.float32)
    a = rng.random((7, ACTION_FEATURES), dtype=np.float32)
    y = rng.standard_normal(7).astype(np.float32)
    _, grads = _loss_and_grads(net, s, a, y)
    for p, g in zip(net.params(), grads, strict=True):
        flat = p.reshape(-1)
        for k in rng.choice(flat.size, size=min(3, flat.size), replace=False):
            old = float(flat[k])
            flat[k] = old + 1e-2
            up, _ = _loss_and_grads(net, s, a, y)
            flat[k] = old - 1e-2
            down, _ = _loss_and_grads(net, s, a, y)
            flat[k] = old
            assert (up - down) / 2e-2 == pytest.approx(float(g.reshape(-1)[k]), rel=0.05, abs=1e-3)


def test_batched_choice_is_the_agents_choice() -> None:
    from koikoi.envs.vector import VectorEnv

    net = QNet.create(hidden=(16, 8), seed=2)
    env = VectorEnv(16, "nintendo", seed=5, round_number="random")
    out = env.reset()
    agent = LearnedAgent(net)
    for _ in range(20):
        actions, _, _ = choose(net, out.observations, out.legal_ids, out.legal_counts)
        for i in range(env.num_envs):
            assert actions[i] == agent.act(env.view(i), random.Random(0))
        out = env.step(actions)


def test_action_features() -> None:
    m = Match(seed=1)
    view = view_of(m, m.current)
    obs = encoding.encode(view)
    ids = np.array(view.legal_ids)
    feats = action_features(np.repeat(obs[None], len(ids), axis=0), ids)
    assert feats.shape == (len(ids), ACTION_FEATURES)
    field = {c for c in range(48) if view.field >> c & 1}
    for row, action_id in zip(feats, ids, strict=True):
        action = action_from_id(int(action_id))
        assert isinstance(action, Play)
        assert np.flatnonzero(row[:48]).tolist() == [int(action.card)]
        same_month = {c for c in field if c // 4 == int(action.card) // 4}
        if action.target is not None:
            taken = {int(action.card), int(action.target)}
        elif same_month:
            taken = {int(action.card), *same_month}
        else:
            taken = set()
        assert set(np.flatnonzero(row[48:96]).tolist()) == taken
        assert row[96:100].sum() == len(taken)
    decide = action_features(
        np.zeros((2, encoding.SIZE), np.float32), np.array([KOIKOI_ID, STOP_ID])
    )
    assert decide[:, :100].sum() == 0 and decide[0, 104] == 1 and decide[1, 105] == 1
    # a drawn-card choice takes the drawn card and the chosen field card
    drawn = np.zeros((1, encoding.SIZE), np.float32)
    drawn[0, encoding.SEGMENTS["drawn"].offset + int(Card(5))] = 1
    take = action_features(drawn, np.array([TakeDrawn(Card(4)).id]))
    assert set(np.flatnonzero(take[0, 48:96]).tolist()) == {4, 5}


def test_the_agent_reads_only_its_own_view() -> None:
    agent = LearnedAgent(shipped())
    m = Match(seed=4)
    for _ in range(6):
        view = view_of(m, m.current)
        choice = agent.act(view, random.Random(0))
        for k in range(5):
            det = determinize(view, random.Random(k))
            again = view_of_round(det, view.player, rounds=view.rounds)
            assert agent.net.values(again) == agent.net.values(view)
        m.apply(choice)


def test_shipped_model_plays_legal_moves_through_the_arena() -> None:
    net = shipped()
    assert net.meta["recipe"]["command"].startswith("koikoi train dmc")
    assert net.meta["curve"] and net.meta["recipe"]["cpu_seconds"] > 0
    size = (Path(__file__).parents[1] / "src/koikoi/agents/data/learned-dmc.npz").stat().st_size
    assert size < 500_000
    config = ArenaConfig(("learned", "random"), get_rules("nintendo"), matches=8, seed=2)
    result = run_arena(config)
    learned = result.summary["agents"][0]
    # an illegal move would have been a forfeit
    assert result.summary["matches"] == 8 and learned["forfeits"] == 0
    assert learned["decisions"] > 100


def test_learned_spec_parses_and_bad_options_are_refused(tmp_path: Path) -> None:
    assert make_agent("learned").name == "learned"
    agent = make_agent("learned:model=dmc")
    assert isinstance(agent, LearnedAgent) and agent.net is shipped()
    ppo = make_agent("learned:model=ppo")
    assert isinstance(ppo, LearnedAgent) and ppo.name == "learned:model=ppo"
    assert ppo.net.meta["recipe"]["command"].startswith("koikoi train ppo")
    view = view_of(Match(seed=8), 0)
    assert ppo.act(view, random.Random(0)) in view.legal_ids
    path = tmp_path / "net.npz"
    QNet.create(hidden=(4, 4), seed=0).save(path)
    from_file = make_agent(f"learned:file={path}")
    assert isinstance(from_file, LearnedAgent) and from_file.net.state.shape == (encoding.SIZE, 4)
    with pytest.raises(InvalidInputError, match=r"unknown parameter 'depth': allowed model, file"):
        make_agent("learned:depth=3")
    with pytest.raises(InvalidInputError, match=r"unknown model 'a2c': allowed dmc, ppo"):
        make_agent("learned:model=a2c")
    with pytest.raises(InvalidInputError, match="not both"):
        make_agent(f"learned:model=dmc,file={path}")
    with pytest.raises(InvalidInputError, match="cannot read"):
        make_agent(f"learned:file={tmp_path / 'missing.npz'}")
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(3))
    with pytest.raises(InvalidInputError, match="not a koikoi-q-net file"):
        QNet.load(bad)


def test_values_are_in_points() -> None:
    net = shipped()
    view = view_of(Match(seed=1), 0)
    values = net.values(view)
    assert set(values) == set(view.legal_ids)
    assert all(abs(v) < 30 * SCALE for v in values.values())


def test_bad_training_settings_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="epsilon must be from 0 to 1, not 2"):
        train_dmc(DMCConfig(epsilon=2.0))
    with pytest.raises(InvalidInputError, match="steps must be 1 or more"):
        train_dmc(DMCConfig(steps=0))


def test_train_dmc_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "net.npz"
    csv_path = tmp_path / "curve.csv"
    argv = ["train", "dmc", "--rules", "leaflet", "--steps", "2000", "--envs", "32"]
    argv += ["--hidden", "8,4", "--batch", "64", "--eval-every", "10", "--eval-rounds", "16"]
    assert main([*argv, "--seed", "2", "--out", str(out), "--curve", str(csv_path)]) == 0
    text = capsys.readouterr().out
    assert "s wall-clock" in text and "s CPU" in text
    net = QNet.load(out)
    assert net.meta["recipe"]["command"].startswith("koikoi train dmc --steps 2000 --seed 2")
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("updates,steps,rounds,loss") and len(lines) >= 3
    assert main([*argv, "--hidden", "a,b", "--out", str(out)]) == 2
    assert "--hidden must be whole numbers separated by commas" in capsys.readouterr().err


def test_tiny_ppo_run_is_reproducible_and_plays() -> None:
    config = PPOConfig(
        rules=("nintendo",),
        steps=6_000,
        seed=2,
        num_envs=64,
        hidden=(16, 8),
        batch=512,
        minibatch=128,
        eval_every=2,
        eval_rounds=16,
    )
    a, b = train_ppo(config), train_ppo(config)
    assert a.steps >= 6_000 and len(a.curve) >= 3
    assert all(np.array_equal(x, y) for x, y in zip(a.net.params(), b.net.params(), strict=True))
    fresh = QNet.create(hidden=(16, 8), seed=2)
    assert not np.array_equal(a.net.state, fresh.state)  # it was updated
    agent = LearnedAgent(a.net)
    m = Match(seed=6)
    view = view_of(m, m.current)
    assert agent.act(view, random.Random(0)) in view.legal_ids


def test_ppo_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    counts = np.array([3, 1, 4])
    starts = np.array([0, 3, 4])
    rows = np.repeat(np.arange(3), counts)
    chosen = np.array([1, 3, 6])
    logits = rng.standard_normal(8).astype(np.float64)
    kwargs = {
        "starts": starts,
        "rows": rows,
        "chosen": chosen,
        "old": np.array([-1.2, 0.0, -1.5]),
        "adv": np.array([0.7, -0.3, -1.1]),
        "clip_ratio": 0.2,
        "entropy": 0.05,
    }
    _, grad = _surrogate(logits, **kwargs)  # type: ignore[arg-type]
    for j in range(8):
        up, down = logits.copy(), logits.copy()
        up[j] += 1e-3
        down[j] -= 1e-3
        numeric = (_surrogate(up, **kwargs)[0] - _surrogate(down, **kwargs)[0]) / 2e-3  # type: ignore[arg-type]
        assert numeric == pytest.approx(float(grad[j]), rel=0.02, abs=2e-4)

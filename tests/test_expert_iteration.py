"""Expert iteration: the search's own choices as data, a policy trained on them, and
that policy as ``expert``'s prior (``expert:guide=policy,guide_file=PATH``)."""

from __future__ import annotations

import copy
import importlib.util
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from koikoi_testkit import follows_its_guide, random_views

from koikoi.agents import make_agent
from koikoi.agents.expert import GUIDES, ExpertAgent, preload
from koikoi.agents.learned import QNet, shipped
from koikoi.game.actions import KOIKOI_ID
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView
from koikoi.kernel import encoding
from koikoi.lab import expert_iteration as exit_lab
from koikoi.lab.expert_iteration import Dataset, agreement, generate, merge, spread, train_policy

SCALE_IN_FILE = 1.5


def _views(count: int) -> list[PlayerView]:
    """Card-play positions (two legal actions or more) a few random moves into matches."""
    return [v for v in random_views(count, seed=32) if KOIKOI_ID not in v.legal_ids]


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The shipped DMC network saved as a policy file, its scores made ten times
    sharper (logits in points: it has clear preferences)."""
    net = copy.deepcopy(shipped())
    net.weights[-1] *= 10
    net.biases[-1] *= 10
    net.meta["prior_scale"] = SCALE_IN_FILE
    path = tmp_path_factory.mktemp("policy") / "policy.npz"
    net.save(path)
    return str(path)


@pytest.fixture(scope="module")
def data() -> Dataset:
    """Two one-round matches (one a rule set) of a short search against itself."""
    return generate(1, seed=5, agent="expert:iterations=30")


# ------------------------------------------------------------------ the data


def test_the_data_holds_card_plays_labelled_by_the_searchs_best(data: Dataset) -> None:
    assert len(data) >= 10
    assert set(np.unique(data.game)) == {0, 10_000}  # one game under each rule set
    assert data.obs.shape == (len(data), encoding.SIZE)
    for i in range(len(data)):
        n = int(data.counts[i])
        assert n >= 2
        assert (data.legal[i, :n] >= 0).all() and (data.legal[i, n:] == -1).all()
        assert np.isfinite(data.values[i, :n]).all() and np.isnan(data.values[i, n:]).all()
        # One-round matches: the search maximises points, and its choice is the best.
        assert data.values[i, data.choice[i]] == np.nanmax(data.values[i])
        assert KOIKOI_ID not in data.legal[i]


def test_the_data_comes_from_the_deciding_players_own_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search and the encoding see only the player's view: what is recorded is the
    encoding of the very view the search was given."""
    seen: list[Any] = []
    original = ExpertAgent.evaluate_detail

    def spy(self: ExpertAgent, view: Any, rng: random.Random) -> Any:
        seen.append(view)
        return original(self, view, rng)

    monkeypatch.setattr(ExpertAgent, "evaluate_detail", spy)
    got = generate(1, seed=6, rules=("nintendo",), agent="expert:iterations=20")
    assert seen and all(isinstance(v, PlayerView) and v.player is not None for v in seen)
    kept = [v for v in seen if exit_lab.labelled(v)]
    assert len(kept) == len(got)
    for v, row in zip(kept, got.obs, strict=True):
        assert np.array_equal(encoding.encode(v), row)


def test_the_data_is_seeded_and_splits_by_game(data: Dataset) -> None:
    again = generate(1, seed=5, agent="expert:iterations=30")
    assert np.array_equal(again.obs, data.obs) and np.array_equal(again.choice, data.choice)
    other = generate(1, seed=5, rules=("nintendo",), agent="expert:iterations=30", first=1)
    assert set(np.unique(other.game)) == {1}
    both = merge([data, other])
    assert len(both) == len(data) + len(other)


def test_the_data_round_trips_through_a_file(data: Dataset, tmp_path: Path) -> None:
    path = str(tmp_path / "data.npz")
    data.save(path)
    back = Dataset.load(path)
    for key in Dataset.__dataclass_fields__:
        assert np.array_equal(getattr(back, key), getattr(data, key), equal_nan=True)


def test_generation_refuses_bad_input() -> None:
    with pytest.raises(InvalidInputError, match="games must be 1 or more, not 0"):
        generate(0, seed=1)
    with pytest.raises(InvalidInputError, match="reports its values"):
        generate(1, seed=1, agent="random")


# --------------------------------------------------------------- the network


@pytest.mark.parametrize("target", ["choice", "values"])
def test_training_learns_the_searchs_choices(data: Dataset, target: str) -> None:
    """On its own training positions the network comes to agree with the search far more
    often than a uniform choice would, and its loss falls."""
    net, curve = train_policy(data, seed=1, target=target, hidden=(32, 16), epochs=60, lr=3e-3)
    assert curve[-1] < curve[0] - 0.5  # (a soft target keeps its own entropy)
    top1, regret = agreement(net, data)
    chance = float(np.mean(1.0 / data.counts))
    assert top1 > max(0.8, 2 * chance)
    assert regret >= 0.0


def test_training_from_a_start_trains_a_copy(data: Dataset) -> None:
    """Starting from the shipped network changes a copy, never the shipped one."""
    before = [p.copy() for p in shipped().params()]
    net, _ = train_policy(data, seed=1, epochs=2, start=shipped())
    assert net is not shipped()
    assert all(np.array_equal(a, b) for a, b in zip(before, shipped().params(), strict=True))
    assert any(not np.array_equal(a, b) for a, b in zip(before, net.params(), strict=True))
    assert net.meta["algorithm"] == "expert-iteration"
    assert "algorithm" not in shipped().meta or shipped().meta["algorithm"] != "expert-iteration"


def test_training_refuses_bad_settings(data: Dataset) -> None:
    with pytest.raises(InvalidInputError, match="target must be one of choice, values, not 'x'"):
        train_policy(data, seed=1, target="x")
    with pytest.raises(InvalidInputError, match="temperature must be above 0"):
        train_policy(data, seed=1, target="values", temperature=0.0)
    with pytest.raises(InvalidInputError, match="training needs positions"):
        train_policy(data.subset(np.arange(0)), seed=1)


def test_log_policy_is_a_distribution_over_the_legal_actions() -> None:
    net = shipped()
    for view in _views(5):
        logp = net.log_policy(view)
        assert set(logp) == set(view.legal_ids)
        assert math.fsum(math.exp(x) for x in logp.values()) == pytest.approx(1.0)
        values = net.values(view)
        assert max(logp, key=logp.__getitem__) == max(values, key=values.__getitem__)


def test_spread_measures_both_guides_on_heuristic_card_plays() -> None:
    rms_h, rms_p, n = spread(shipped(), games=3, seed=1)
    assert n > 20
    assert rms_h > 0 and rms_p > 0


# ----------------------------------------------------------------- the guide


def test_the_policy_guide_parses_and_round_trips(policy_file: str) -> None:
    assert GUIDES == ("heuristic", "learned", "policy")
    spec = f"expert:iterations=300,guide=policy,guide_file={policy_file}"
    agent = make_agent(spec)
    assert isinstance(agent, ExpertAgent)
    assert (agent.guide, agent.guide_file) == ("policy", policy_file)
    assert agent.name == spec
    assert make_agent(agent.name).name == agent.name


@pytest.mark.parametrize(
    "spec",
    ["expert:guide=policy", "expert:guide_file=x.npz", "expert:guide=learned,guide_file=x.npz"],
)
def test_the_policy_guide_and_its_file_go_together(spec: str) -> None:
    with pytest.raises(InvalidInputError, match="guide=policy needs guide_file=PATH"):
        make_agent(spec)


def test_a_file_that_is_not_a_policy_is_refused_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "none.npz"
    with pytest.raises(InvalidInputError, match=r"none\.npz"):
        ExpertAgent(iterations=10, guide="policy", guide_file=str(missing))
    no_scale = tmp_path / "no-scale.npz"
    QNet.create(hidden=(4, 2), seed=0).save(no_scale)
    with pytest.raises(InvalidInputError, match="no prior_scale in the header"):
        ExpertAgent(iterations=10, guide="policy", guide_file=str(no_scale))
    flag = tmp_path / "flag-scale.npz"
    net = QNet.create(hidden=(4, 2), seed=0)
    net.meta["prior_scale"] = True  # JSON true is no scale, though bool is an int
    net.save(flag)
    with pytest.raises(InvalidInputError, match="no prior_scale in the header"):
        ExpertAgent(iterations=10, guide="policy", guide_file=str(flag))


def test_the_policy_guide_gives_scaled_log_probabilities(policy_file: str) -> None:
    agent = ExpertAgent(iterations=10, guide="policy", guide_file=policy_file)
    net = QNet.load(policy_file)
    for view in _views(8):
        got = agent.guide_values(view)
        want = {a: SCALE_IN_FILE * x for a, x in net.log_policy(view).items()}
        assert got == pytest.approx(want)
        assert math.fsum(math.exp(x / SCALE_IN_FILE) for x in got.values()) == pytest.approx(1.0)


def test_the_policy_reads_only_the_players_view(
    policy_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every call of the network during a decision gets the player's own view, nothing else."""
    seen: list[Any] = []
    original = QNet.values

    def spy(self: QNet, view: Any) -> dict[int, float]:
        seen.append(view)
        return original(self, view)

    monkeypatch.setattr(QNet, "values", spy)
    agent = ExpertAgent(iterations=20, guide="policy", guide_file=policy_file, endgame=False)
    views = _views(6)
    for k, view in enumerate(views):
        agent.act(view, random.Random(k))
    assert seen == views  # the very views the player was given: no hidden card added


def test_a_strong_policy_prior_follows_the_policys_card_play(policy_file: str) -> None:
    """With a heavy prior and a short search, the expert plays the policy's most likely
    card (where it is clearly the most likely); the heuristic guide does not always."""
    agent = ExpertAgent(
        iterations=20, prior=10.0, guide="policy", guide_file=policy_file, endgame=False
    )
    other = ExpertAgent(iterations=20, prior=10.0, endgame=False)
    net = QNet.load(policy_file)
    total, same, differs = follows_its_guide(agent, other, _views(80), net.log_policy)
    assert total >= 8
    assert same >= total - 1
    assert differs > 0


def test_the_policy_prior_is_off_at_weight_zero(policy_file: str) -> None:
    view = _views(4)[0]
    a = ExpertAgent(iterations=50, prior=0.0, guide="policy", guide_file=policy_file)
    b = ExpertAgent(iterations=50, prior=0.0)
    assert a.evaluate(view, random.Random(3)) == b.evaluate(view, random.Random(3))


def test_preload_reads_the_policy_file(policy_file: str) -> None:
    from koikoi.agents import expert

    agent = ExpertAgent(iterations=10, guide="policy", guide_file=policy_file)
    expert._policy.cache_clear()
    preload(agent)
    assert expert._policy.cache_info().currsize == 1


# ---------------------------------------------------------------- the script


def test_the_script_makes_data_and_weights_with_their_recipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``generate`` then ``train``: the weights file records the command, the seed, the
    held-out agreement and the prior's scale, and ``expert:guide=policy`` reads it."""
    path = Path(__file__).resolve().parent.parent / "scripts" / "expert-iteration.py"
    spec = importlib.util.spec_from_file_location("expert_iteration", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    parts = []
    for first in (0, 1):
        out = str(tmp_path / f"d{first}.npz")
        argv = f"generate --games 1 --first {first} --seed 3 --agent expert:iterations=20"
        assert script.main([*argv.split(), "--out", out]) == 0
        parts.append(out)
    weights = str(tmp_path / "policy.npz")
    argv = ["train", *parts, "--seed", "2", "--epochs", "3", "--hold", "2"]
    assert script.main([*argv, "--spread-games", "2", "--out", weights]) == 0
    out = capsys.readouterr().out
    assert "held-out agreement" in out and "prior_scale" in out
    meta = QNet.load(weights).meta
    assert meta["recipe"]["seed"] == 2
    assert meta["recipe"]["command"].startswith("python scripts/expert-iteration.py train ")
    assert 0.0 <= meta["recipe"]["held_out_agreement"] <= 1.0
    assert meta["prior_scale"] > 0
    assert len(meta["curve"]) == 3
    agent = make_agent(f"expert:iterations=10,guide=policy,guide_file={weights}")
    view = _views(2)[0]
    assert agent.act(view, random.Random(1)) in view.legal_ids

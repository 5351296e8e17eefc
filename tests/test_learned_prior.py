"""The learned network as ``expert``'s prior (``expert:guide=learned``)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from koikoi_testkit import follows_its_guide, random_views

from koikoi.agents import make_agent
from koikoi.agents.expert import GUIDES, LEARNED_SCALE, ExpertAgent, preload
from koikoi.agents.learned import QNet, shipped
from koikoi.game.actions import KOIKOI_ID
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView


def _views(count: int) -> list[PlayerView]:
    """Card-play positions (two legal actions or more) a few random moves into matches."""
    return [v for v in random_views(count, seed=31) if KOIKOI_ID not in v.legal_ids]


def test_the_guide_option_parses_and_round_trips() -> None:
    """``guide=`` names the prior's source; the name shows it unless it is the default."""
    assert GUIDES[:2] == ("heuristic", "learned")
    learned = make_agent("expert:iterations=300,guide=learned")
    assert isinstance(learned, ExpertAgent)
    assert learned.guide == "learned"
    assert learned.name == "expert:iterations=300,guide=learned"
    assert make_agent(learned.name).name == learned.name
    assert make_agent("expert:guide=LEARNED,prior=2").name == "expert:prior=2,guide=learned"
    assert make_agent("expert:guide=heuristic").name == "expert"  # the default
    assert make_agent("expert").guide == "heuristic"  # type: ignore[attr-defined]


@pytest.mark.parametrize("spec", ["expert:guide=ppo", "expert:guide=", "expert:guide=net"])
def test_an_unknown_guide_is_refused_naming_the_allowed(spec: str) -> None:
    with pytest.raises(InvalidInputError, match="guide must be one of heuristic, learned"):
        make_agent(spec)
    with pytest.raises(InvalidInputError, match="guide must be one of heuristic, learned"):
        ExpertAgent(iterations=10, guide="random")


def test_the_learned_guide_gives_the_networks_points_scaled() -> None:
    """The learned guide's values are the shipped network's, times LEARNED_SCALE."""
    agent = ExpertAgent(iterations=10, guide="learned")
    heuristic = ExpertAgent(iterations=10)
    for view in _views(10):
        net = shipped().values(view)
        got = agent.guide_values(view)
        assert set(got) == set(view.legal_ids)
        assert got == pytest.approx({a: LEARNED_SCALE * v for a, v in net.items()})
        assert heuristic.guide_values(view) != got


def test_the_network_reads_only_the_players_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call of the network during a decision gets the player's own view, nothing else."""
    seen: list[Any] = []
    original = QNet.values

    def spy(self: QNet, view: Any) -> dict[int, float]:
        seen.append(view)
        return original(self, view)

    monkeypatch.setattr(QNet, "values", spy)
    agent = ExpertAgent(iterations=20, guide="learned", endgame=False)
    views = _views(6)
    for k, view in enumerate(views):
        agent.act(view, random.Random(k))
    assert len(seen) == len(views)
    assert all(isinstance(v, PlayerView) for v in seen)
    assert seen == views  # the very views the player was given: no hidden card added


def test_a_strong_learned_prior_follows_the_networks_card_play() -> None:
    """With a heavy prior and a short search, the expert plays the network's best card
    (where it has a clear best); the heuristic guide does not always."""
    agent = ExpertAgent(iterations=20, prior=10.0, guide="learned", endgame=False)
    other = ExpertAgent(iterations=20, prior=10.0, endgame=False)
    net = shipped()
    total, same, differs = follows_its_guide(agent, other, _views(80), net.values)
    assert total >= 8
    assert same >= total - 1
    assert differs > 0  # the heuristic prior has its own view


def test_the_learned_prior_is_off_at_weight_zero() -> None:
    """``prior=0`` values the actions as the search without a guide does."""
    view = _views(4)[0]
    a = ExpertAgent(iterations=50, prior=0.0, guide="learned", endgame=False)
    b = ExpertAgent(iterations=50, prior=0.0, endgame=False)
    assert a.evaluate(view, random.Random(3)) == b.evaluate(view, random.Random(3))


def test_preload_loads_the_network_for_the_learned_guide() -> None:
    """So that the first move does not pay for reading the weights."""
    from koikoi.agents import learned

    learned._SHIPPED.clear()
    preload(ExpertAgent(iterations=10, guide="learned"))
    assert "dmc" in learned._SHIPPED
    learned._SHIPPED.clear()
    preload(ExpertAgent(iterations=10, guide="learned", prior=0.0))
    assert "dmc" not in learned._SHIPPED

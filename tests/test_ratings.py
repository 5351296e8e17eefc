"""Tests of koikoi.features.ratings: Glicko-2 against Glickman's worked example, and its
properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from koikoi.features.ratings import Rating, expected_score, update
from koikoi.game.errors import InvalidInputError

EXAMPLE = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]


def test_glickmans_worked_example() -> None:
    new = update(Rating(1500, 200, 0.06), EXAMPLE, tau=0.5)
    # The paper rounds its intermediate values and prints 1464.06; exactly it is 1464.0507.
    assert new.rating == pytest.approx(1464.06, abs=0.02)
    assert new.rd == pytest.approx(151.52, abs=0.005)
    assert new.volatility == pytest.approx(0.05999, abs=0.00001)


def test_a_period_without_games_only_widens_the_deviation() -> None:
    new = update(Rating(1500, 200, 0.06), [])
    assert new.rating == 1500 and new.volatility == 0.06
    assert new.rd == pytest.approx(((200 / 173.7178) ** 2 + 0.06**2) ** 0.5 * 173.7178)


def test_expected_score_is_symmetric_for_equal_deviations() -> None:
    a, b = Rating(1600, 80), Rating(1450, 80)
    assert expected_score(a, b) + expected_score(b, a) == pytest.approx(1.0)
    assert expected_score(a, b) > 0.5


ratings = st.builds(
    Rating,
    st.floats(800, 2400),
    st.floats(30, 350),
    st.floats(0.03, 0.1),
)


@given(player=ratings, opponent=ratings)
def test_a_win_raises_a_loss_lowers_and_a_game_narrows(player: Rating, opponent: Rating) -> None:
    won = update(player, [(opponent, 1)])
    lost = update(player, [(opponent, 0)])
    drew = update(player, [(opponent, 0.5)])
    assert lost.rating < drew.rating < won.rating
    assert won.rating > player.rating and lost.rating < player.rating
    for new in (won, lost, drew):
        assert new.rd < (player.rd**2 + (new.volatility * 173.7178) ** 2) ** 0.5 + 1e-9


@pytest.mark.parametrize("score", [-0.1, 1.5, "1", None])
def test_bad_scores_are_refused(score: object) -> None:
    with pytest.raises(InvalidInputError, match="a score must be 1"):
        update(Rating(), [(Rating(), score)])  # type: ignore[list-item]


def test_bad_ratings_and_tau_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="rd and volatility must be positive"):
        Rating(1500, 0)
    with pytest.raises(InvalidInputError, match="finite"):
        Rating(float("nan"))
    with pytest.raises(InvalidInputError, match="tau must be a positive number"):
        update(Rating(), [], tau=0)


def test_doctests() -> None:
    import doctest

    import koikoi.features.ratings

    failures, _ = doctest.testmod(koikoi.features.ratings)
    assert failures == 0

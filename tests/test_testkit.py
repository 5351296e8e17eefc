"""The shared test kit (koikoi_testkit.py): its doctests and its errors on bad scenarios."""

from __future__ import annotations

import doctest

import koikoi_testkit
import pytest
from koikoi_testkit import deck, make_round


def test_doctests() -> None:
    failures, tried = doctest.testmod(koikoi_testkit)
    assert tried > 0
    assert failures == 0


def test_a_card_used_twice_in_a_scenario_is_named() -> None:
    with pytest.raises(ValueError, match="used twice in the scenario: 1L"):
        make_round(hand0="1L 2A", field="1L")


def test_a_card_used_twice_in_a_deck_is_named() -> None:
    with pytest.raises(ValueError, match="used twice in the deck: 3L"):
        deck("3L 5P1", "3L")


def test_a_part_of_the_deal_with_more_than_eight_cards_is_named() -> None:
    with pytest.raises(ValueError, match="field has 9 cards"):
        deck("", "", "1L 1R 1P1 1P2 2A 2R 2P1 2P2 3L")

"""Progress toward the yaku of the active rules."""

from __future__ import annotations

from koikoi.features.progress import YakuProgress, yaku_progress
from koikoi.game.cards import parse_cards
from koikoi.game.rules import get_rules
from koikoi.tui.progress import progress_line


def rows_by_name(
    preset: str, own: str, opponent: str = "", month: int = 1
) -> dict[str, YakuProgress]:
    rules = get_rules(preset)
    rows = yaku_progress(rules, parse_cards(own), parse_cards(opponent), month=month)
    return {r.name: r for r in rows}


def test_counts_the_cards_each_yaku_needs() -> None:
    rows = rows_by_name("nintendo", "7A 10A 1L 3L 11L 1R 9P1 9A")
    assert rows["inoshikacho"].describe() == "Inoshikacho 2/3"
    assert rows["sanko"].describe() == "Sanko 2/3"
    assert rows["ame_shiko"].describe() == "Ame-shiko 3/4"
    assert rows["goko"].describe() == "Goko 3/5"
    assert rows["tane"].describe() == "Tane 3/5"
    assert rows["akatan"].describe() == "Akatan 1/3"
    # The Sake cup counts as a Plain too under nintendo (sake_cup = "both").
    assert rows["kasu"].have == 2
    assert rows["tsukimi"].describe() == "Tsukimi 1/2"


def test_a_held_yaku_is_ticked() -> None:
    rows = rows_by_name("nintendo", "6A 7A 10A")
    assert rows["inoshikacho"].done
    assert rows["inoshikacho"].describe() == "Inoshikacho 3/3 ✓"


def test_a_card_in_the_opponents_pile_makes_the_yaku_impossible() -> None:
    rows = rows_by_name("nintendo", "7A 10A", opponent="6A 1L 3L 8L")
    assert not rows["inoshikacho"].possible
    assert rows["inoshikacho"].describe() == "Inoshikacho 2/3 ✗"
    assert not rows["sanko"].possible  # only 12L is left of the non-rain Brights
    assert not rows["goko"].possible
    assert rows["tane"].possible


def test_only_the_yaku_of_the_active_rules_are_listed() -> None:
    nintendo = rows_by_name("nintendo", "")
    assert "tsukifuda" not in nintendo and "teshi" not in nintendo
    assert "kuttsuki" not in nintendo
    leaflet = rows_by_name("leaflet", "")
    assert "hanami" not in leaflet and "akatan_aotan" not in leaflet
    assert leaflet["goko"].points == 15
    # modern-hanafuda scores a collected teshi: the four cards of the round's month.
    modern = rows_by_name("modern-hanafuda", "3L 3R 3P1", month=3)
    assert modern["teshi"].describe() == "Teshi 3/4"
    assert modern["sanko"].need == 3
    boardgame = rows_by_name("boardgame-blog", "9A")
    assert "kasu" not in boardgame


def test_spoiled_viewing_is_impossible() -> None:
    rules = get_rules("compendium").replace(yaku__viewing_spoiled_by=["11L"])
    rows = {r.name: r for r in yaku_progress(rules, parse_cards("3L 9A 11L"), 0, month=1)}
    assert rows["hanami"].have == 2 and not rows["hanami"].possible


def test_progress_line_shows_the_most_advanced_first() -> None:
    rules = get_rules("nintendo")
    rows = yaku_progress(rules, parse_cards("6A 7A 10A 1L 3L"), 0, month=1)
    line = progress_line(rows)
    assert line.startswith("Inoshikacho 3/3 ✓ · Sanko 2/3")
    assert progress_line(yaku_progress(rules, 0, 0, month=1)) == "—"
    short = progress_line(rows, width=30)
    assert len(short) <= 30 and short.startswith("Inoshikacho")
    assert progress_line(rows, limit=1) == "Inoshikacho 3/3 ✓"

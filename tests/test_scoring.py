"""Tests of yaku evaluation and settlement (RULES.md §3, §4, §6)."""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from koikoi.game import scoring
from koikoi.game.cards import ANIMALS, BRIGHTS, FULL_DECK, PLAINS, RIBBONS, parse_cards
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules
from koikoi.game.scoring import (
    YAKU_NAMES,
    YAKU_ORDER,
    Multiplier,
    Scorer,
    Settlement,
    YakuResult,
    YakuScore,
    month_of_round,
    score_cards,
)

NINTENDO = get_rules("nintendo")
SAKE = parse_cards("9A")


def total(rules: Rules, cards: str, month: int = 1, called: bool = False) -> int:
    """Total via both entry points, checking that they agree."""
    scorer = Scorer(rules)
    pile = parse_cards(cards)
    value = scorer.total(pile, month, called)
    assert scorer.evaluate(pile, month, called).total == value
    assert scorer.total(pile, month, called) == value  # cached
    return value


def yaku(rules: Rules, cards: str, month: int = 1, called: bool = False) -> dict[str, int]:
    """The scoring yaku as ``{name: points}``."""
    result = Scorer(rules).evaluate(parse_cards(cards), month, called)
    return {y.name: y.points for y in result.yaku}


def yaku_cards(rules: Rules, cards: str, month: int = 1) -> dict[str, str]:
    """The scoring yaku as ``{name: "codes"}``."""
    result = Scorer(rules).evaluate(parse_cards(cards), month, False)
    return {y.name: " ".join(y.to_dict()["cards"]) for y in result.yaku}


def stop(
    rules: Rules,
    base: int,
    *,
    own: int = 0,
    opponent: int = 0,
    improved: bool = False,
    winner: int = 0,
) -> Settlement:
    """Settle a made-up result of ``base`` points."""
    result = YakuResult((YakuScore("tane", base, ANIMALS),), base)
    return Scorer(rules).settle(
        result,
        winner=winner,
        reason="stop",
        own_koikoi=own,
        opponent_koikoi=opponent,
        improved_after_koikoi=improved,
    )


# ----------------------------------------------------------------- RULES.md §6

# Copied from RULES.md §6: captured, then the base for each preset in PRESET_NAMES order
# (nintendo, compendium, wikipedia, boardgame-blog, modern-hanafuda, leaflet, koikoi-japan).
WORKED_EXAMPLES = [
    ("1L 3L 8L", (5, 6, 5, 5, 6, 6, 5)),
    ("1L 3L 11L", (0, 0, 0, 0, 6, 0, 0)),
    ("1L 3L 8L 11L", (7, 7, 7, 7, 7, 8, 7)),
    ("6A 7A 10A 2A 4A", (7, 7, 7, 7, 5, 6, 6)),
    ("1R 2R 3R 4R 5R", (7, 7, 7, 7, 5, 7, 6)),
    ("1R 2R 3R 6R 9R 10R 4R", (11, 11, 11, 11, 10, 15, 23)),
    ("3L 8L 9A", (10, 10, 10, 10, 10, 0, 2)),
    ("9A 1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2 5P1", (1, 1, 1, 0, 0, 1, 1)),
    ("1L 3L 8L 9A 6A 7A 10A 2A 4A 5A 8A 11A", (26, 27, 26, 26, 16, 16, 17)),
]


def test_presets_in_table_order() -> None:
    assert PRESET_NAMES == (
        "nintendo",
        "compendium",
        "wikipedia",
        "boardgame-blog",
        "modern-hanafuda",
        "leaflet",
        "koikoi-japan",
    )


@pytest.mark.parametrize(
    ("cards", "preset", "expected"),
    [
        (cards, preset, row[i])
        for cards, row in WORKED_EXAMPLES
        for i, preset in enumerate(PRESET_NAMES)
    ],
)
def test_worked_examples(cards: str, preset: str, expected: int) -> None:
    assert total(get_rules(preset), cards) == expected


def test_worked_example_yaku_nintendo() -> None:
    cards = "1L 3L 8L 9A 6A 7A 10A 2A 4A 5A 8A 11A"
    assert yaku(NINTENDO, cards) == {"sanko": 5, "inoshikacho": 11, "hanami": 5, "tsukimi": 5}
    assert yaku(get_rules("modern-hanafuda"), cards) == {
        "inoshikacho": 5,
        "tane": 1,
        "hanami": 5,
        "tsukimi": 5,
    }


def test_nintendo_settlement_examples() -> None:
    s = score_cards(NINTENDO, parse_cards("1L 3L 8L 11L"), opponent_koikoi=True)
    assert (s.base, s.points, s.winner) == (7, 28, 0)
    assert s.multipliers == (
        Multiplier("seven_double", factor=2),
        Multiplier("opponent_koikoi", factor=2),
    )
    s = score_cards(NINTENDO, parse_cards("1L 3L 8L 1R"))
    assert s.points == 5
    six = stop(NINTENDO, 6)
    assert (six.points, six.multipliers, six.deltas) == (6, (), (6, 0))


# ------------------------------------------------------------------ Brights


def test_bright_yaku_only_the_highest() -> None:
    assert yaku(NINTENDO, "1L 3L 8L 11L 12L") == {"goko": 10}
    assert yaku(NINTENDO, "1L 3L 8L 12L") == {"shiko": 8}
    assert yaku(NINTENDO, "1L 3L 11L 12L") == {"ame_shiko": 7}
    assert yaku(NINTENDO, "1L 3L 12L") == {"sanko": 5}
    assert yaku(NINTENDO, "1L 11L") == {}


def test_bright_yaku_cards() -> None:
    assert yaku_cards(NINTENDO, "1L 3L 12L 1R") == {"sanko": "1L 3L 12L"}
    assert yaku_cards(NINTENDO, "1L 3L 11L 12L") == {"ame_shiko": "1L 3L 11L 12L"}
    # A missing higher yaku lets the next one score, on the cards it uses.
    no_goko = NINTENDO.replace(points__goko=0)
    assert yaku_cards(no_goko, "1L 3L 8L 11L 12L") == {"shiko": "1L 3L 8L 12L"}


def test_sanko_with_rainman() -> None:
    assert total(NINTENDO, "1L 3L 11L") == 0
    with_rain = NINTENDO.replace(yaku__sanko_with_rainman=True)
    assert yaku_cards(with_rain, "1L 3L 11L") == {"sanko": "1L 3L 11L"}
    # With four including the Rain man, ame-shiko is higher than sanko.
    assert yaku(with_rain, "1L 3L 11L 12L") == {"ame_shiko": 7}
    # Without ame-shiko, a plain sanko stands in; the Rain man only when needed.
    no_ame = NINTENDO.replace(points__ame_shiko=0)
    assert yaku_cards(no_ame, "1L 3L 11L 12L") == {"sanko": "1L 3L 12L"}
    assert total(no_ame, "1L 3L 11L") == 0


# ------------------------------------------------------------------ Sake cup

NINE_PLAINS = "1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2 5P1"
FOUR_ANIMALS = "2A 4A 5A 8A"


@pytest.mark.parametrize(
    ("mode", "cards", "expected"),
    [
        # 9 Plains and the Sake cup: kasu only if it is a Plain.
        ("animal", f"9A {NINE_PLAINS}", {}),
        ("both", f"9A {NINE_PLAINS}", {"kasu": 1}),
        ("either", f"9A {NINE_PLAINS}", {"kasu": 1}),
        ("both_double_plain", f"9A {NINE_PLAINS}", {"kasu": 2}),
        ("both_double_plain", "9A 1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2", {"kasu": 1}),
        # 4 Animals and the Sake cup: tane only if it is an Animal.
        ("animal", f"9A {FOUR_ANIMALS}", {"tane": 1}),
        ("both", f"9A {FOUR_ANIMALS}", {"tane": 1}),
        ("either", f"9A {FOUR_ANIMALS}", {"tane": 1}),
        ("both_double_plain", f"9A {FOUR_ANIMALS}", {"tane": 1}),
        # Both at once: only "both" modes score the two.
        ("animal", f"9A {FOUR_ANIMALS} {NINE_PLAINS}", {"tane": 1}),
        ("both", f"9A {FOUR_ANIMALS} {NINE_PLAINS}", {"tane": 1, "kasu": 1}),
        ("either", f"9A {FOUR_ANIMALS} {NINE_PLAINS}", {"tane": 1}),  # tie: as an Animal
        ("both_double_plain", f"9A {FOUR_ANIMALS} {NINE_PLAINS}", {"tane": 1, "kasu": 2}),
    ],
)
def test_sake_cup_modes(mode: str, cards: str, expected: dict[str, int]) -> None:
    for combine in ("absorb", "separate", "exclusive"):
        rules = NINTENDO.replace(yaku__sake_cup=mode, yaku__combine=combine)
        assert yaku(rules, cards) == expected, combine


def test_sake_cup_either_takes_the_better_role() -> None:
    rules = NINTENDO.replace(yaku__sake_cup="either", points__kasu=3)
    # As a Plain: kasu 3 beats tane 1 as an Animal.
    assert yaku_cards(rules, f"9A {FOUR_ANIMALS} {NINE_PLAINS}") == {
        "kasu": "1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2 5P1 9A"
    }
    assert total(rules, f"9A {FOUR_ANIMALS} {NINE_PLAINS}") == 3
    # The viewing yaku hold whatever role it plays.
    assert yaku(rules, f"3L 9A {NINE_PLAINS}") == {"kasu": 3, "hanami": 5}


def test_sake_cup_kasu_cards_include_it() -> None:
    assert yaku_cards(NINTENDO, f"9A {NINE_PLAINS}")["kasu"].split()[-1] == "9A"
    animal = NINTENDO.replace(yaku__sake_cup="animal")
    assert yaku_cards(animal, f"9A {FOUR_ANIMALS}") == {"tane": "2A 4A 5A 8A 9A"}


# --------------------------------------------------------------- combine modes

SIX_RIBBONS = "1R 2R 3R 6R 9R 10R"


def test_absorb_best_of_each_family() -> None:
    assert yaku(NINTENDO, SIX_RIBBONS) == {"akatan_aotan": 10}
    assert yaku(NINTENDO, f"{SIX_RIBBONS} 4R 5R") == {"akatan_aotan": 12}
    assert yaku_cards(NINTENDO, "1R 2R 3R 4R") == {"akatan": "1R 2R 3R 4R"}
    assert yaku(NINTENDO, "6A 7A 10A") == {"inoshikacho": 5}
    # Without double ribbons, only the best single of akatan and aotan scores.
    no_double = NINTENDO.replace(points__akatan_aotan=0)
    assert yaku(no_double, SIX_RIBBONS) == {"akatan": 8}
    # Tane beats inoshikacho when it is worth more.
    rich_tane = NINTENDO.replace(points__tane=9)
    assert yaku(rich_tane, "6A 7A 10A 2A 4A") == {"tane": 9}


def test_absorb_bonus_cards_listed() -> None:
    assert yaku_cards(NINTENDO, "6A 7A 10A 2A 1L") == {"inoshikacho": "2A 6A 7A 10A"}
    no_extra = NINTENDO.replace(yaku__extra=0)
    assert yaku_cards(no_extra, "6A 7A 10A 2A 1L") == {"inoshikacho": "6A 7A 10A"}
    assert yaku_cards(no_extra, "1R 2R 3R 4R") == {"akatan": "1R 2R 3R"}


def test_separate_every_yaku_scores() -> None:
    sep = NINTENDO.replace(yaku__combine="separate")
    assert yaku(sep, "6A 7A 10A 2A 4A 5A") == {"inoshikacho": 5, "tane": 2}
    assert yaku(sep, "1R 2R 3R 4R 5R") == {"akatan": 5, "tanzaku": 1}
    # Double ribbons replaces akatan and aotan ...
    assert yaku(sep, SIX_RIBBONS) == {"akatan_aotan": 10, "tanzaku": 2}
    # ... or adds on top of them.
    adds = sep.replace(yaku__akatan_aotan_adds=True)
    assert yaku(adds, SIX_RIBBONS) == {"akatan_aotan": 10, "akatan": 5, "aotan": 5, "tanzaku": 2}
    # Without double ribbons, both single yaku score.
    no_double = sep.replace(points__akatan_aotan=0)
    assert yaku(no_double, SIX_RIBBONS) == {"akatan": 5, "aotan": 5, "tanzaku": 2}


def test_akatan_aotan_adds_ignored_outside_separate() -> None:
    for combine in ("absorb", "exclusive"):
        rules = NINTENDO.replace(yaku__combine=combine, yaku__akatan_aotan_adds=True)
        assert total(rules, SIX_RIBBONS) == 10, combine


def test_exclusive_counts_each_card_once() -> None:
    excl = NINTENDO.replace(yaku__combine="exclusive")
    assert yaku(excl, "1R 2R 3R 4R 5R") == {"akatan": 5}
    assert yaku(excl, "1R 2R 3R 4R 5R 7R 11R") == {"akatan": 5}
    assert yaku(excl, "1R 2R 3R 4R 5R 7R 11R 9R") == {"akatan": 5, "tanzaku": 1}
    assert yaku(excl, "6A 7A 10A 2A 4A 5A 8A 11A") == {"inoshikacho": 5, "tane": 1}
    assert yaku_cards(excl, "6A 7A 10A 2A 4A 5A 8A 11A")["tane"] == "2A 4A 5A 8A 11A"


def test_exclusive_picks_the_better_partition() -> None:
    # 1L 3L 8L 12L 9A: shiko (8) uses 3L and 8L; sanko on three Brights plus one
    # viewing yaku (5 + 5), or both viewing yaku sharing the Sake cup (5 + 5), are
    # worth more, so the engine takes 10.
    excl = NINTENDO.replace(yaku__combine="exclusive")
    cards = "1L 3L 8L 12L 9A"
    assert total(excl, cards) == 10
    assert "shiko" not in yaku(excl, cards)
    # Under absorb everything scores: shiko and both viewing yaku.
    assert yaku(NINTENDO, cards) == {"shiko": 8, "hanami": 5, "tsukimi": 5}
    # modern-hanafuda: sanko 6 + one viewing yaku 5.
    modern = get_rules("modern-hanafuda")
    assert total(modern, cards) == 11
    names = set(yaku(modern, cards))
    assert "sanko" in names and len(names & {"hanami", "tsukimi"}) == 1
    # With cheap viewing yaku, shiko alone is best.
    cheap = excl.replace(points__hanami=1, points__tsukimi=1)
    assert yaku(cheap, cards) == {"shiko": 8}
    # Without the Sake cup, nothing competes with shiko.
    assert yaku(excl, "1L 3L 8L 12L") == {"shiko": 8}


def test_exclusive_viewing_shares_the_sake_cup() -> None:
    excl = get_rules("modern-hanafuda")
    assert yaku(excl, "3L 8L 9A") == {"hanami": 5, "tsukimi": 5}
    assert yaku_cards(excl, "3L 8L 9A") == {"hanami": "3L 9A", "tsukimi": "8L 9A"}


def test_exclusive_sake_cup_roles() -> None:
    animal = get_rules("modern-hanafuda")
    both = animal.replace(yaku__sake_cup="both")
    # The Plain role is a second card: hanami takes one role, kasu the other.
    assert yaku(animal, f"3L 9A {NINE_PLAINS}") == {"hanami": 5}
    assert yaku(both, f"3L 9A {NINE_PLAINS}") == {"hanami": 5, "kasu": 1}
    # ... or tane the Animal role while hanami takes the Plain role.
    assert yaku(animal, f"3L 9A {FOUR_ANIMALS}") == {"hanami": 5}
    assert yaku(both, f"3L 9A {FOUR_ANIMALS}") == {"tane": 1, "hanami": 5}
    # Two Plain roles: kasu counts both when viewing does not use one.
    double = animal.replace(yaku__sake_cup="both_double_plain")
    assert yaku(double, "9A 1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2") == {"kasu": 1}
    # Hanami takes the Animal role, kasu both Plain roles: 9 + 2 Plains.
    assert yaku(double, f"3L 9A {NINE_PLAINS}") == {"hanami": 5, "kasu": 2}
    # With 4 other Animals: 7 either way (hanami on a Plain role: tane 1 + kasu 1).
    assert total(double, f"3L 9A {FOUR_ANIMALS} {NINE_PLAINS}") == 7
    # As "either", the single card plays one role only.
    either = animal.replace(yaku__sake_cup="either")
    assert yaku(either, f"3L 9A {FOUR_ANIMALS}") == {"hanami": 5}
    assert yaku(either, f"9A {NINE_PLAINS}") == {"kasu": 1}


def test_exclusive_double_ribbons() -> None:
    excl = NINTENDO.replace(yaku__combine="exclusive")
    # akatan_aotan (10) and akatan + aotan (10) tie; the pile scores 10 either way.
    assert total(excl, SIX_RIBBONS) == 10
    assert total(excl.replace(points__akatan_aotan=12), SIX_RIBBONS) == 12
    assert yaku(excl.replace(points__akatan_aotan=0), SIX_RIBBONS) == {"akatan": 5, "aotan": 5}
    # Only double ribbons exists.
    only_double = excl.replace(points__akatan=0, points__aotan=0)
    assert yaku(only_double, SIX_RIBBONS) == {"akatan_aotan": 10}


# ------------------------------------------------------------------ viewing


def test_viewing_requires_other() -> None:
    rules = get_rules("compendium").replace(yaku__viewing_requires_other=True)
    assert total(rules, "3L 9A") == 0
    assert total(rules, "3L 8L 9A") == 0
    assert yaku(rules, "3L 9A 1R 2R 3R") == {"akatan": 5, "hanami": 5}
    assert total(get_rules("compendium"), "3L 9A") == 5


def test_viewing_requires_other_exclusive() -> None:
    rules = get_rules("modern-hanafuda").replace(yaku__viewing_requires_other=True)
    assert total(rules, "3L 8L 9A") == 0
    # Sanko (1L 12L + one of 3L/8L) makes the other viewing yaku count: 6 + 5 > shiko 8.
    assert total(rules, "1L 3L 8L 12L 9A") == 11
    # The other yaku may be the leftover tane.
    assert yaku(rules.replace(yaku__sake_cup="both"), f"3L 9A {FOUR_ANIMALS}") == {
        "tane": 1,
        "hanami": 5,
    }


def test_viewing_spoiled_by() -> None:
    spoiled = NINTENDO.replace(yaku__viewing_spoiled_by=["11L", "11P"])
    assert total(NINTENDO, "3L 9A 11P") == 5
    assert total(spoiled, "3L 9A 11P") == 0
    assert total(spoiled, "3L 9A") == 5
    assert yaku(NINTENDO, "1L 3L 8L 11L 9A") == {"ame_shiko": 7, "hanami": 5, "tsukimi": 5}
    assert yaku(spoiled, "1L 3L 8L 11L 9A") == {"ame_shiko": 7}
    excl = get_rules("modern-hanafuda").replace(yaku__viewing_spoiled_by=["11P"])
    assert total(excl, "3L 8L 9A 11P") == 0


def test_viewing_after_koikoi() -> None:
    japan = get_rules("koikoi-japan")
    assert yaku(japan, "8L 9A", called=False) == {"tsukimi": 1}
    assert yaku(japan, "8L 9A", called=True) == {"tsukimi": 3}
    assert total(japan, "3L 8L 9A", called=True) == 6
    # Other rules ignore the call.
    assert total(NINTENDO, "8L 9A", called=True) == 5
    # A viewing yaku with 0 points does not come back after koi-koi.
    leaflet = get_rules("leaflet").replace(yaku__viewing_after_koikoi=3)
    assert total(leaflet, "3L 8L 9A", called=True) == 0
    # score_cards reads the call from koikoi_self.
    assert score_cards(japan, parse_cards("8L 9A"), koikoi_self=1).base == 3


# ------------------------------------------------------- month yaku, extras


def test_tsukifuda() -> None:
    rules = NINTENDO.replace(points__tsukifuda=4)
    march = "3L 3R 3P1 3P2"
    assert total(NINTENDO, march, month=3) == 0
    assert yaku(rules, march, month=3) == {"tsukifuda": 4}
    assert total(rules, march, month=4) == 0
    assert total(rules, "3L 3R 3P1", month=3) == 0
    assert score_cards(rules, parse_cards(march), round_number=3).points == 4
    assert score_cards(rules, parse_cards(march), round_number=15).points == 4
    assert score_cards(rules, parse_cards(march), round_number=4).winner is None
    # Round 13 is month 1 again.
    assert score_cards(rules, parse_cards("1L 1R 1P1 1P2"), round_number=13).points == 4
    assert score_cards(rules, parse_cards("12L 12P1 12P2 12P3"), round_number=12).points == 4
    # Scores on top of other yaku under absorb.
    assert yaku(rules, "1L 1R 1P1 1P2 2R 3R", month=1) == {"akatan": 5, "tsukifuda": 4}


def test_tsukifuda_cached_per_month() -> None:
    scorer = Scorer(NINTENDO.replace(points__tsukifuda=4))
    march = parse_cards("3L 3R 3P1 3P2")
    assert [scorer.total(march, m, False) for m in (3, 4, 3, 4)] == [4, 0, 4, 0]


def test_teshi_collected() -> None:
    modern = get_rules("modern-hanafuda")
    may = "5A 5R 5P1 5P2"
    assert yaku(modern, may, month=5) == {"teshi": 6}
    assert total(modern, may, month=4) == 0
    assert total(NINTENDO, may, month=5) == 0
    assert score_cards(modern, parse_cards(may), round_number=5).base == 6
    # Exclusive: 1R serves teshi (6) or akatan (5), not both.
    assert yaku(modern, "1L 1R 1P1 1P2 2R 3R", month=1) == {"teshi": 6}
    # Absorb: both score.
    absorb = NINTENDO.replace(instant__teshi_collected=True)
    assert yaku(absorb, "1L 1R 1P1 1P2 2R 3R", month=1) == {"akatan": 5, "teshi": 6}
    # Off when teshi is worth 0.
    assert total(absorb.replace(instant__teshi=0), may, month=5) == 0


def test_extra_bonus() -> None:
    animals = "6A 7A 10A 2A 4A"
    assert total(NINTENDO.replace(yaku__extra=0), animals) == 5
    assert total(NINTENDO.replace(yaku__extra=2), animals) == 9
    ribbons = "1R 2R 6R 4R 5R 7R 11R"  # no akatan, no aotan
    assert yaku(NINTENDO, ribbons) == {"tanzaku": 3}
    assert yaku(NINTENDO.replace(yaku__extra=2), ribbons) == {"tanzaku": 5}
    plains = f"{NINE_PLAINS} 5P2 6P1 6P2"
    assert yaku(NINTENDO, plains) == {"kasu": 3}
    assert yaku(NINTENDO.replace(yaku__extra=0), plains) == {"kasu": 1}
    # Separate: no bonus on inoshikacho.
    assert yaku(NINTENDO.replace(yaku__combine="separate"), "6A 7A 10A 2A") == {"inoshikacho": 5}


@pytest.mark.parametrize(
    ("key", "cards"),
    [
        ("goko", "1L 3L 8L 11L 12L"),
        ("inoshikacho", "6A 7A 10A"),
        ("tane", "2A 4A 5A 8A 11A"),
        ("akatan", "1R 2R 3R"),
        ("aotan", "6R 9R 10R"),
        ("tanzaku", "4R 5R 7R 11R 1R"),
        ("kasu", "1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2 5P1 5P2"),
        ("hanami", "3L 9A"),
        ("tsukimi", "8L 9A"),
    ],
)
def test_yaku_with_zero_points_is_absent(key: str, cards: str) -> None:
    for combine in ("absorb", "separate", "exclusive"):
        rules = NINTENDO.replace(yaku__combine=combine)
        assert key in yaku(rules, cards)
        off = rules.replace(**{f"points__{key}": 0})
        assert key not in yaku(off, cards), combine


def test_preset_zero_point_yaku() -> None:
    assert yaku(get_rules("boardgame-blog"), "1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2 5P1 5P2 6P1") == {}
    assert yaku(get_rules("leaflet"), "3L 8L 9A") == {}
    leaflet = get_rules("leaflet")
    assert yaku(leaflet, SIX_RIBBONS) == {"akatan": 6, "aotan": 6, "tanzaku": 2}


# ---------------------------------------------------------------- settlement


def test_seven_double() -> None:
    assert stop(NINTENDO, 7).points == 14
    assert stop(NINTENDO, 7).multipliers == (Multiplier("seven_double", factor=2),)
    assert stop(NINTENDO, 6).points == 6
    assert stop(NINTENDO.replace(koikoi__seven_double=False), 7).points == 7


def test_bonus_opponent_x2() -> None:
    assert stop(NINTENDO, 5, opponent=1).points == 10
    assert stop(NINTENDO, 5, opponent=3).points == 10
    assert stop(NINTENDO, 5, own=2, improved=True).points == 5
    assert stop(NINTENDO, 8, opponent=1).points == 32


def test_bonus_challenge_x2() -> None:
    modern = get_rules("modern-hanafuda")
    assert stop(modern, 5).points == 5
    assert stop(modern, 5, own=1, improved=True).points == 10
    assert stop(modern, 5, own=1, improved=False).points == 5
    assert stop(modern, 5, opponent=1).points == 10
    assert stop(modern, 5, own=2, opponent=1, improved=True).points == 10  # once
    s = stop(modern, 7, opponent=1)
    assert s.points == 28
    assert [m.name for m in s.multipliers] == ["seven_double", "koikoi_challenge"]


@pytest.mark.parametrize(
    ("calls", "expected", "step"),
    [
        (0, 8, None),
        (1, 9, Multiplier("koikoi_ladder", add=1)),
        (2, 10, Multiplier("koikoi_ladder", add=2)),
        (3, 11, Multiplier("koikoi_ladder", add=3)),
        (4, 16, Multiplier("koikoi_ladder", factor=2)),
        (5, 24, Multiplier("koikoi_ladder", factor=3)),
    ],
)
def test_bonus_ladder(calls: int, expected: int, step: Multiplier | None) -> None:
    japan = get_rules("koikoi-japan")  # no seven_double
    s = stop(japan, 8, own=calls, opponent=2, improved=True)
    assert s.points == expected
    assert s.multipliers == (() if step is None else (step,))


def test_bonus_none() -> None:
    leaflet = get_rules("leaflet")
    s = stop(leaflet, 9, own=2, opponent=3, improved=True)
    assert (s.points, s.multipliers) == (9, ())
    none = NINTENDO.replace(koikoi__bonus="none")
    assert stop(none, 7, opponent=1).points == 14


def test_zero_sum_deltas() -> None:
    japan = get_rules("koikoi-japan")
    assert stop(japan, 6, winner=1).deltas == (-6, 6)
    assert stop(japan, 6, winner=0).deltas == (6, -6)
    assert stop(NINTENDO, 6, winner=1).deltas == (0, 6)
    scorer = Scorer(japan)
    assert scorer.award(0, 1, "dealer_point").deltas == (1, -1)
    assert Scorer(NINTENDO).award(1, 6, "oya_ken").deltas == (0, 6)


def test_award_and_no_score() -> None:
    scorer = Scorer(NINTENDO)
    s = scorer.award(1, 6, "oya_ken")
    assert (s.winner, s.reason, s.base, s.points, s.yaku, s.multipliers) == (
        1,
        "oya_ken",
        6,
        6,
        (),
        (),
    )
    inst = scorer.instant(parse_cards("1L 1R 1P1 1P2 2A 3L 4A 5A"))
    assert inst is not None
    s = scorer.award(0, inst.total, "instant", yaku=inst.yaku)
    assert s.yaku == inst.yaku
    n = scorer.no_score("exhausted")
    assert (n.winner, n.points, n.deltas, n.yaku) == (None, 0, (0, 0), ())


def test_settle_with_evaluated_result() -> None:
    scorer = Scorer(NINTENDO)
    result = scorer.evaluate(parse_cards("1L 3L 8L 9A"), 1, True)
    s = scorer.settle(
        result, winner=1, reason="stop", own_koikoi=1, opponent_koikoi=0, improved_after_koikoi=True
    )
    assert s.base == 15
    assert s.points == 30
    assert s.yaku == result.yaku


def test_score_cards_no_yaku() -> None:
    s = score_cards(NINTENDO, parse_cards("1L 2A"))
    assert (s.winner, s.reason, s.points, s.deltas) == (None, "no_yaku", 0, (0, 0))
    assert "Nobody scores" in s.explain()


def test_month_of_round() -> None:
    assert [month_of_round(k) for k in (1, 2, 12, 13, 24, 25)] == [1, 2, 12, 1, 12, 1]
    with pytest.raises(InvalidInputError):
        month_of_round(0)


# ------------------------------------------------------------------ instant


def test_instant_teshi() -> None:
    scorer = Scorer(NINTENDO)
    result = scorer.instant(parse_cards("1L 1R 1P1 1P2 2A 3L 4A 5A"))
    assert result == YakuResult((YakuScore("teshi", 6, parse_cards("1L 1R 1P1 1P2")),), 6)


def test_instant_kuttsuki() -> None:
    scorer = Scorer(NINTENDO)
    hand = parse_cards("1L 1R 2A 2R 3L 3R 4A 4R")
    assert scorer.instant(hand) == YakuResult((YakuScore("kuttsuki", 6, hand),), 6)
    assert scorer.instant(parse_cards("1L 1R 2A 2R 3L 3R 4A 5R")) is None
    assert scorer.instant(parse_cards("1L 1R 1P1 2R 3L 3R 4A 5R")) is None


def test_instant_both_hold() -> None:
    hand = parse_cards("1L 1R 1P1 1P2 2A 2R 3L 3R")  # a four and two pairs
    assert Scorer(NINTENDO).instant(hand) == YakuResult(
        (YakuScore("teshi", 6, parse_cards("1L 1R 1P1 1P2")),), 6
    )
    higher = NINTENDO.replace(instant__kuttsuki=8)
    assert Scorer(higher).instant(hand) == YakuResult((YakuScore("kuttsuki", 8, hand),), 8)


def test_instant_off() -> None:
    japan = Scorer(get_rules("koikoi-japan"))
    assert japan.instant(parse_cards("1L 1R 1P1 1P2 2A 3L 4A 5A")) is None
    assert japan.instant(parse_cards("1L 1R 2A 2R 3L 3R 4A 4R")) is None
    no_teshi = Scorer(NINTENDO.replace(instant__teshi=0))
    assert no_teshi.instant(parse_cards("1L 1R 1P1 1P2 2A 3L 4A 5A")) is None
    hand = parse_cards("1L 1R 1P1 1P2 2A 2R 3L 3R")
    result = no_teshi.instant(hand)
    assert result is not None and result.yaku[0].name == "kuttsuki"


# ------------------------------------------------------------ explanations


def test_explain_nintendo_stop() -> None:
    s = score_cards(NINTENDO, parse_cards("1L 3L 8L 11L"), opponent_koikoi=True)
    text = s.explain()
    assert "Rainy Four Brights" in text
    assert "雨四光" in text
    assert "1L 3L 8L 11L" in text
    assert "Seven or more: x2 -> 14" in text
    assert "Opponent called koi-koi: x2 -> 28" in text
    assert "Player 0 scores 28 points." in text


def test_explain_zero_sum_and_ladder() -> None:
    japan = get_rules("koikoi-japan")
    s = score_cards(japan, parse_cards("1R 2R 3R"), koikoi_self=2)
    text = s.explain()
    assert "Koi-koi ladder: +2 -> 7" in text
    assert "Player 1 pays 7." in text


def test_to_dict_json() -> None:
    s = score_cards(NINTENDO, parse_cards("1L 3L 8L 9A 1R 2R 3R"), opponent_koikoi=True)
    data = json.loads(json.dumps(s.to_dict()))
    assert data["winner"] == 0
    assert data["base"] == 20
    assert data["points"] == 80
    assert data["deltas"] == [80, 0]
    assert data["multipliers"] == [
        {"name": "seven_double", "factor": 2, "add": 0},
        {"name": "opponent_koikoi", "factor": 2, "add": 0},
    ]
    assert data["yaku"][0] == {"name": "sanko", "points": 5, "cards": ["1L", "3L", "8L"]}
    assert [y["name"] for y in data["yaku"]] == ["sanko", "akatan", "hanami", "tsukimi"]
    result = Scorer(NINTENDO).evaluate(parse_cards("3L 9A"), 1, False)
    assert json.loads(json.dumps(result.to_dict())) == {
        "yaku": [{"name": "hanami", "points": 5, "cards": ["3L", "9A"]}],
        "total": 5,
    }


def test_yaku_names_cover_order() -> None:
    assert set(YAKU_ORDER) == set(YAKU_NAMES)


# ------------------------------------------------------------------ caching


def test_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoring, "_CACHE_LIMIT", 8)
    rules = NINTENDO.replace(yaku__combine="exclusive")
    scorer = Scorer(rules)
    reference = Scorer(rules)
    names = ["1L", "3L", "8L", "12L", "9A", "1R", "2R", "3R"]
    piles = [parse_cards(" ".join(c)) for c in combinations(names, 4)]
    for pile in piles * 2:
        assert scorer.total(pile, 1, False) == reference.evaluate(pile, 1, False).total
        assert len(scorer._cache) <= 8


def test_cache_key_ignores_unused_month_and_call() -> None:
    scorer = Scorer(NINTENDO.replace(yaku__combine="exclusive"))
    for month in range(1, 13):
        for called in (False, True):
            assert scorer.total(parse_cards("1L 3L 8L"), month, called) == 5
    assert len(scorer._cache) == 1
    # Piles that differ only in cards no yaku names share an entry ...
    assert scorer.total(parse_cards("1L 3L 8L 2P1 4A"), 1, False) == 5
    assert len(scorer._cache) == 1
    # ... counts that reach tane (5 Animals) make a new one.
    assert scorer.total(parse_cards("1L 3L 8L 2A 4A 5A 8A 11A 1P1"), 1, False) == 6
    assert scorer.total(parse_cards("1L 3L 8L 2A 4A 5A 8A 11A 2P2 4R"), 1, False) == 6
    assert len(scorer._cache) == 2


def test_cache_key_keeps_month_and_call_when_they_matter() -> None:
    scorer = Scorer(get_rules("modern-hanafuda"))
    pile = parse_cards("3L 3R 3P1 3P2")
    assert [scorer.total(pile, m, False) for m in (3, 4, 3)] == [6, 0, 6]
    japan = Scorer(get_rules("koikoi-japan").replace(yaku__combine="exclusive"))
    view = parse_cards("8L 9A")
    assert [japan.total(view, 1, c) for c in (False, True, False)] == [1, 3, 1]


# ------------------------------------------------------------- properties

VARIANTS: list[Rules] = (
    [get_rules(name) for name in PRESET_NAMES]
    + [
        NINTENDO.replace(
            yaku__combine=combine,
            yaku__sake_cup=sake,
            points__tsukifuda=4,
            yaku__viewing_requires_other=combine == "exclusive",
        )
        for combine in ("absorb", "separate", "exclusive")
        for sake in ("animal", "both", "either", "both_double_plain")
    ]
    + [
        get_rules("koikoi-japan").replace(instant__teshi=6, instant__teshi_collected=True),
        get_rules("modern-hanafuda").replace(
            yaku__sake_cup="both_double_plain", points__tsukifuda=3
        ),
    ]
)
SCORERS = [Scorer(r) for r in VARIANTS]
IDS = [f"{i}-{r.name}-{r.yaku.combine}-{r.yaku.sake_cup}" for i, r in enumerate(VARIANTS)]

piles = st.sets(st.integers(0, 47), max_size=30).map(lambda cs: sum(1 << c for c in cs))
months = st.integers(1, 12)


@pytest.mark.parametrize("scorer", SCORERS, ids=IDS)
@settings(max_examples=100, deadline=None)
@given(pile=piles, month=months, called=st.booleans())
def test_evaluate_matches_total(scorer: Scorer, pile: int, month: int, called: bool) -> None:
    result = scorer.evaluate(pile, month, called)
    assert result.total == scorer.total(pile, month, called)
    assert result.total == sum(y.points for y in result.yaku)
    names = [y.name for y in result.yaku]
    assert len(set(names)) == len(names)
    assert names == sorted(names, key=YAKU_ORDER.index)
    for y in result.yaku:
        assert y.points > 0
        assert y.cards & ~pile == 0, y
    assert sum(n in ("goko", "shiko", "ame_shiko", "sanko") for n in names) <= 1
    if scorer.rules.yaku.combine == "absorb":
        assert sum(n in ("inoshikacho", "tane") for n in names) <= 1
        assert sum(n in ("akatan_aotan", "akatan", "aotan", "tanzaku") for n in names) <= 1


@pytest.mark.parametrize("scorer", SCORERS, ids=IDS)
@settings(max_examples=100, deadline=None)
@given(pile=piles, card=st.integers(0, 47), month=months, called=st.booleans())
def test_total_is_monotone(scorer: Scorer, pile: int, card: int, month: int, called: bool) -> None:
    assert scorer.total(pile | 1 << card, month, called) >= scorer.total(pile, month, called)


@pytest.mark.parametrize("scorer", SCORERS, ids=IDS)
def test_total_matches_evaluate_sweep(scorer: Scorer) -> None:
    # Piles biased toward the cards yaku name, so that the fast tables and the
    # exclusive cache (shared by piles with the same named cards and counts) are
    # checked against a fresh evaluation many times.
    rng = random.Random(scorer.rules.name)
    named = [0, 8, 28, 40, 44, 20, 24, 36, 32, 1, 5, 9, 21, 33, 37]
    for _ in range(2000):
        pile = sum(1 << c for c in rng.sample(named, rng.randint(0, len(named))))
        pile |= sum(1 << c for c in rng.sample(range(48), rng.randint(0, 26)))
        month = rng.randint(1, 12)
        called = rng.random() < 0.5
        assert scorer.total(pile, month, called) == scorer.evaluate(pile, month, called).total


def test_total_not_monotone_with_spoilers() -> None:
    spoiled = Scorer(NINTENDO.replace(yaku__viewing_spoiled_by=["11P"]))
    assert spoiled.total(parse_cards("3L 9A 11P"), 1, False) < spoiled.total(
        parse_cards("3L 9A"), 1, False
    )


EXCLUSIVE = [s for s in SCORERS if s.rules.yaku.combine == "exclusive"]


@pytest.mark.parametrize("scorer", EXCLUSIVE, ids=lambda s: f"{s.rules.yaku.sake_cup}")
@settings(max_examples=300, deadline=None)
@given(pile=piles, month=months)
def test_exclusive_uses_each_card_once(scorer: Scorer, pile: int, month: int) -> None:
    result = scorer.evaluate(pile, month, False)
    roles = {"animal": 1, "either": 1, "both": 2, "both_double_plain": 3}
    seen = 0
    for y in result.yaku:
        if y.name in ("hanami", "tsukimi"):
            continue
        assert y.cards & seen & ~SAKE == 0, result
        seen |= y.cards
    sake_users = sum(
        1 for y in result.yaku if y.cards & SAKE and y.name not in ("hanami", "tsukimi")
    )
    viewing = any(y.name in ("hanami", "tsukimi") for y in result.yaku)
    assert sake_users + viewing <= roles[scorer.rules.yaku.sake_cup], result


@pytest.mark.parametrize("scorer", EXCLUSIVE, ids=lambda s: f"{s.rules.yaku.sake_cup}")
@settings(max_examples=100, deadline=None)
@given(pile=piles, month=months)
def test_exclusive_never_beats_separate(scorer: Scorer, pile: int, month: int) -> None:
    separate = Scorer(scorer.rules.replace(yaku__combine="separate"))
    assert scorer.total(pile, month, False) <= separate.total(pile, month, False)


@settings(max_examples=200, deadline=None)
@given(pile=piles)
def test_explain_mentions_everything(pile: int) -> None:
    s = score_cards(NINTENDO, pile, opponent_koikoi=True)
    text = s.explain()
    for y in s.yaku:
        assert YAKU_NAMES[y.name][0] in text
        assert YAKU_NAMES[y.name][1] in text
    if s.winner is not None:
        assert f"scores {s.points} points" in text
    json.dumps(s.to_dict())


@settings(max_examples=200, deadline=None)
@given(hand=st.sets(st.integers(0, 47), min_size=8, max_size=8))
def test_instant_matches_definition(hand: set[int]) -> None:
    mask = sum(1 << c for c in hand)
    months_count = [sum(1 for c in hand if c // 4 == m) for m in range(12)]
    result = Scorer(NINTENDO).instant(mask)
    if 4 in months_count:
        assert result is not None and result.yaku[0].name == "teshi"
    elif all(n % 2 == 0 for n in months_count):
        assert result is not None and result.yaku[0].name == "kuttsuki"
    else:
        assert result is None


def test_kind_masks_sane() -> None:
    # The masks the scorer relies on partition the deck.
    assert BRIGHTS | ANIMALS | RIBBONS | PLAINS == FULL_DECK
    assert (BRIGHTS.bit_count(), ANIMALS.bit_count(), RIBBONS.bit_count()) == (5, 9, 10)

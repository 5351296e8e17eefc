"""Tests of the deck, card codes, names and card sets (RULES.md §1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from koikoi.game.cards import (
    AKATAN,
    ALL_CARDS,
    ANIMALS,
    AOTAN,
    BRIGHTS,
    CODES,
    ENGLISH_NAMES,
    FULL_DECK,
    KIND_MASKS,
    MONTH_MASKS,
    MONTH_NAMES,
    MONTH_NAMES_JA,
    PLAINS,
    RIBBONS,
    Card,
    Kind,
    card_list,
    cards_of,
    format_cards,
    mask_of,
    month_mask,
    parse_card,
    parse_cards,
)
from koikoi.game.errors import InvalidInputError, KoiKoiError

# RULES.md §1, copied: month -> the four codes of the month.
TABLE: dict[int, tuple[str, ...]] = {
    1: ("1L", "1R", "1P1", "1P2"),
    2: ("2A", "2R", "2P1", "2P2"),
    3: ("3L", "3R", "3P1", "3P2"),
    4: ("4A", "4R", "4P1", "4P2"),
    5: ("5A", "5R", "5P1", "5P2"),
    6: ("6A", "6R", "6P1", "6P2"),
    7: ("7A", "7R", "7P1", "7P2"),
    8: ("8L", "8A", "8P1", "8P2"),
    9: ("9A", "9R", "9P1", "9P2"),
    10: ("10A", "10R", "10P1", "10P2"),
    11: ("11L", "11A", "11R", "11P"),
    12: ("12L", "12P1", "12P2", "12P3"),
}
ALL_CODES = [code for month in TABLE.values() for code in month]
KIND_OF_LETTER = {"L": Kind.BRIGHT, "A": Kind.ANIMAL, "R": Kind.RIBBON, "P": Kind.PLAIN}

# RULES.md §1: the names the parser accepts besides the codes.
NAMES = {
    "crane": "1L",
    "curtain": "3L",
    "moon": "8L",
    "rainman": "11L",
    "phoenix": "12L",
    "warbler": "2A",
    "cuckoo": "4A",
    "bridge": "5A",
    "butterflies": "6A",
    "boar": "7A",
    "geese": "8A",
    "sake": "9A",
    "deer": "10A",
    "swallow": "11A",
    "lightning": "11P",
}


def letter(code: str) -> str:
    """The kind letter of a code: the first letter after the month digits."""
    return code.lstrip("0123456789")[0]


# ------------------------------------------------------------------ the deck


def test_48_distinct_cards_with_the_codes_of_the_table() -> None:
    assert len(ALL_CARDS) == 48
    assert len(set(CODES)) == 48
    assert sorted(CODES) == sorted(ALL_CODES)
    assert [c.value for c in ALL_CARDS] == list(range(48))


@pytest.mark.parametrize("code", ALL_CODES)
def test_each_card_month_and_kind_follow_its_code(code: str) -> None:
    card = parse_card(code)
    assert card.code == code
    assert str(card) == code
    month = next(m for m, month_codes in TABLE.items() if code in month_codes)
    assert card.month == month
    assert card.kind is KIND_OF_LETTER[letter(code)]
    assert card.kind.letter == letter(code)
    assert card.bit == 1 << card.value
    assert MONTH_MASKS[month - 1] >> card & 1


@pytest.mark.parametrize(
    ("kind", "mask", "count"),
    [
        (Kind.BRIGHT, BRIGHTS, 5),
        (Kind.ANIMAL, ANIMALS, 9),
        (Kind.RIBBON, RIBBONS, 10),
        (Kind.PLAIN, PLAINS, 24),
    ],
)
def test_counts_per_kind(kind: Kind, mask: int, count: int) -> None:
    assert mask.bit_count() == count
    assert KIND_MASKS[kind] == mask
    assert sum(1 for c in ALL_CARDS if c.kind is kind) == count
    assert {c.code for c in cards_of(mask)} == {
        c for c in ALL_CODES if KIND_OF_LETTER[letter(c)] is kind
    }


def test_kind_masks_partition_the_deck() -> None:
    assert BRIGHTS | ANIMALS | RIBBONS | PLAINS == FULL_DECK
    masks = [BRIGHTS, ANIMALS, RIBBONS, PLAINS]
    for i, a in enumerate(masks):
        for b in masks[i + 1 :]:
            assert a & b == 0


def test_month_masks_partition_the_deck() -> None:
    assert len(MONTH_MASKS) == 12
    union = 0
    for m, mask in enumerate(MONTH_MASKS, start=1):
        assert mask.bit_count() == 4
        assert {c.code for c in cards_of(mask)} == set(TABLE[m])
        assert month_mask(m) == mask
        assert union & mask == 0
        union |= mask
    assert union == FULL_DECK == (1 << 48) - 1


def test_lightning_is_a_plain_and_the_rain_man_a_bright() -> None:
    assert parse_card("11P").kind is Kind.PLAIN
    assert parse_card("11L").kind is Kind.BRIGHT
    assert parse_card("11A").kind is Kind.ANIMAL
    assert parse_card("8A").kind is Kind.ANIMAL
    assert parse_card("9A").kind is Kind.ANIMAL


def test_poetry_and_blue_ribbons() -> None:
    assert format_cards(AKATAN) == "1R 2R 3R"
    assert format_cards(AOTAN) == "6R 9R 10R"
    assert AKATAN & ~RIBBONS == 0
    assert AOTAN & ~RIBBONS == 0


def test_kind_order_for_the_first_dealer_draw() -> None:
    # L > A > R > P (RULES.md §2.1).
    assert Kind.BRIGHT > Kind.ANIMAL > Kind.RIBBON > Kind.PLAIN
    assert [k.letter for k in (Kind.BRIGHT, Kind.ANIMAL, Kind.RIBBON, Kind.PLAIN)] == list("LARP")
    assert Kind.BRIGHT.label == "Brights"
    assert Kind.PLAIN.label == "Plains"


def test_names_and_month_names() -> None:
    assert len(MONTH_NAMES) == len(MONTH_NAMES_JA) == 12
    assert MONTH_NAMES[0] == "Pine"
    assert MONTH_NAMES[10] == "Willow"
    assert MONTH_NAMES[11] == "Paulownia"
    assert len(ENGLISH_NAMES) == 48
    assert len(set(ENGLISH_NAMES)) == 48
    assert Card.PINE_CRANE.name_en == ENGLISH_NAMES[0]
    assert "Crane" in Card.PINE_CRANE.name_en
    assert "Rain man" in parse_card("11L").name_en
    assert "Lightning" in parse_card("11P").name_en
    assert all(ENGLISH_NAMES[c].startswith(MONTH_NAMES[c // 4]) for c in range(48))


def test_repr_pastes_back_as_code() -> None:
    assert repr(Card.PINE_CRANE) == "Card.PINE_CRANE"
    assert eval(repr(Card.WILLOW_LIGHTNING), {"Card": Card}) is Card.WILLOW_LIGHTNING


# ------------------------------------------------------------------ parsing


@pytest.mark.parametrize("code", ALL_CODES)
def test_codes_parse_case_insensitively(code: str) -> None:
    card = parse_card(code)
    assert parse_card(code.lower()) is card
    assert parse_card(code.upper()) is card
    assert parse_card(f"  {code.swapcase()} ") is card


@pytest.mark.parametrize(("name", "code"), sorted(NAMES.items()))
def test_names_parse_case_insensitively(name: str, code: str) -> None:
    assert parse_card(name).code == code
    assert parse_card(name.upper()).code == code
    assert parse_card(name.capitalize()).code == code


@pytest.mark.parametrize(
    "token", ["", "0L", "13L", "1A", "2L", "1P3", "12P4", "11P1", "x", "L1", "1"]
)
def test_bad_tokens_raise_naming_the_token(token: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_card(token)
    assert repr(token) in str(info.value)
    assert isinstance(info.value, KoiKoiError)
    assert isinstance(info.value, ValueError)


def test_parse_cards_spaces_commas_and_iterables() -> None:
    expected = parse_card("1L").bit | parse_card("9A").bit | parse_card("11P").bit
    assert parse_cards("1L 9A 11P") == expected
    assert parse_cards("1l,sake,  lightning") == expected
    assert parse_cards(["crane", "9a", "11P"]) == expected
    assert parse_cards("") == 0
    assert parse_cards(" , ") == 0


def test_parse_cards_bad_token_names_it() -> None:
    with pytest.raises(InvalidInputError, match="'14A'"):
        parse_cards("1L 14A 3L")


@pytest.mark.parametrize("text", ["1L 1L", "1L crane", "moon 8l", "11P,lightning"])
def test_duplicate_card_is_an_error(text: str) -> None:
    card = parse_card(text.replace(",", " ").split()[0])
    with pytest.raises(InvalidInputError, match="twice") as info:
        parse_cards(text)
    assert card.code in str(info.value)


# ------------------------------------------------------------------ masks


@given(st.sets(st.integers(0, 47)))
def test_mask_helpers_agree(indices: set[int]) -> None:
    mask = mask_of(indices)
    assert mask.bit_count() == len(indices)
    assert card_list(mask) == sorted(indices)
    assert [int(c) for c in cards_of(mask)] == sorted(indices)
    assert all(isinstance(c, Card) for c in cards_of(mask))
    text = format_cards(mask)
    assert parse_cards(text) == mask
    assert text.split() == [CODES[i] for i in sorted(indices)]
    assert mask & ~FULL_DECK == 0


def test_mask_helpers_on_the_empty_set_and_the_full_deck() -> None:
    assert format_cards(0) == ""
    assert card_list(0) == []
    assert list(cards_of(0)) == []
    assert mask_of(range(48)) == FULL_DECK
    assert format_cards(FULL_DECK).split() == list(CODES)
    assert mask_of([Card.PINE_CRANE, Card.PINE_CRANE]) == 1

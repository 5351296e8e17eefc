"""Tests of the SVG card art (koikoi.features.svg)."""

from __future__ import annotations

import doctest
import xml.etree.ElementTree as ET

import pytest

from koikoi.features import svg
from koikoi.features.svg import (
    BACK_ID,
    card_back_svg,
    card_svg,
    card_symbol,
    card_title,
    ribbon_style,
    sprite_sheet,
    symbol_id,
)
from koikoi.game.cards import AKATAN, AOTAN, CODES, MONTH_NAMES_JA, RIBBONS, Card, Kind
from koikoi.game.errors import InvalidInputError

NS = "{http://www.w3.org/2000/svg}"
ALL = list(Card)


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def classes(el: ET.Element) -> set[str]:
    return set(el.get("class", "").split())


def find_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [el for el in root.iter() if name in classes(el)]


@pytest.mark.parametrize("card", ALL, ids=CODES)
def test_every_card_is_well_formed_with_title_and_mark(card: Card) -> None:
    root = parse(card_svg(card))
    assert root.tag == f"{NS}svg"
    assert root.get("viewBox") == "0 0 100 160"
    assert (root.get("width"), root.get("height")) == ("120", "192")
    title = root.find(f"{NS}title")
    assert title is not None and title.text is not None
    assert card.name_en in title.text
    assert MONTH_NAMES_JA[card.month - 1] in title.text
    assert card.code in title.text
    (mark,) = find_class(root, "mark")
    texts = [t.text for t in mark.iter(f"{NS}text")]
    assert texts == [str(card.month), card.kind.letter]


def test_options_title_mark_and_width() -> None:
    root = parse(card_svg("8L", width=60, title=False, mark_kind=False))
    assert (root.get("width"), root.get("height")) == ("60", "96")
    assert root.find(f"{NS}title") is None
    assert find_class(root, "mark") == []
    assert "<text" not in card_svg("8L", mark_kind=False)


def test_card_inputs_are_equivalent() -> None:
    expected = card_svg(Card.WILLOW_RAIN_MAN)
    assert card_svg(40) == expected
    assert card_svg("11L") == expected
    assert card_svg("11l") == expected
    assert card_svg("rainman") == expected


def test_output_is_deterministic() -> None:
    assert sprite_sheet() == sprite_sheet()
    assert card_svg("3L") == card_svg("3L")


def test_distinct_cards_give_distinct_art() -> None:
    bodies = {card_svg(c, title=False, mark_kind=False) for c in ALL}
    assert len(bodies) == 48


@pytest.mark.parametrize("bad", ["13L", "1X", "", "crane!", "0L"])
def test_bad_card_code_raises(bad: str) -> None:
    with pytest.raises(InvalidInputError):
        card_svg(bad)


@pytest.mark.parametrize("bad", [-1, 48, 1000, True])
def test_bad_card_number_raises(bad: int) -> None:
    with pytest.raises(InvalidInputError):
        card_svg(bad)
    with pytest.raises(InvalidInputError):
        card_symbol(bad)


def test_bad_card_type_raises() -> None:
    with pytest.raises(InvalidInputError):
        card_svg(1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        symbol_id(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("width", [0, -5])
def test_bad_width_raises(width: int) -> None:
    with pytest.raises(InvalidInputError):
        card_svg("1L", width=width)
    with pytest.raises(InvalidInputError):
        card_back_svg(width=width)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="13L"):
        card_svg("13L")


def ribbon_of(card: Card) -> ET.Element | None:
    found = find_class(parse(card_svg(card)), "ribbon")
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize("card", ALL, ids=CODES)
def test_ribbon_colours(card: Card) -> None:
    ribbon = ribbon_of(card)
    if card.kind is not Kind.RIBBON:
        assert ribbon is None
        assert ribbon_style(card) is None
        return
    assert ribbon is not None
    (strip,) = find_class(ribbon, "strip")
    writing = find_class(ribbon, "writing")
    if AKATAN >> card & 1:
        assert ribbon_style(card) == "poetry"
        assert "ribbon-poetry" in classes(ribbon)
        assert strip.get("fill") == svg.RED
        assert len(writing) == 1
    elif AOTAN >> card & 1:
        assert ribbon_style(card) == "blue"
        assert "ribbon-blue" in classes(ribbon)
        assert strip.get("fill") == svg.BLUE
        assert writing == []
    else:
        assert ribbon_style(card) == "red"
        assert "ribbon-red" in classes(ribbon)
        assert strip.get("fill") == svg.RED
        assert writing == []


def test_ribbon_groups() -> None:
    akatan = {c.code for c in ALL if ribbon_style(c) == "poetry"}
    aotan = {c.code for c in ALL if ribbon_style(c) == "blue"}
    plain = {c.code for c in ALL if ribbon_style(c) == "red"}
    assert akatan == {"1R", "2R", "3R"}
    assert aotan == {"6R", "9R", "10R"}
    assert plain == {"4R", "5R", "7R", "11R"}
    assert sum(1 << Card(i) for i in range(48) if ribbon_style(i)) == RIBBONS
    assert sum(1 << i for i in (1, 5, 9, 21, 33, 37)) == AKATAN | AOTAN


def test_sprite_sheet_has_49_symbols() -> None:
    text = sprite_sheet()
    root = parse(text)
    symbols = root.findall(f"{NS}symbol")
    ids = [s.get("id") for s in symbols]
    assert len(symbols) == 49
    assert ids == [f"card-{code}" for code in CODES] + [BACK_ID]
    assert all(s.get("viewBox") == "0 0 100 160" for s in symbols)
    all_ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert len(all_ids) == len(set(all_ids)) == 49  # no other ids to clash in a page
    assert len(text.encode()) < 160_000


def test_symbol_matches_card() -> None:
    sym = parse(f'<svg xmlns="http://www.w3.org/2000/svg">{card_symbol("9A")}</svg>')[0]
    assert sym.get("id") == symbol_id("9A") == "card-9A"
    assert sym.find(f"{NS}title") is not None
    assert find_class(sym, "mark")
    assert not find_class(
        parse(f'<svg xmlns="{NS[1:-1]}">{card_symbol("9A", mark_kind=False)}</svg>'), "mark"
    )


def test_card_back() -> None:
    root = parse(card_back_svg(width=90))
    assert (root.get("width"), root.get("height")) == ("90", "144")
    assert "card-back" in classes(root)
    assert find_class(root, "mark") == []


def test_titles() -> None:
    assert card_title("1L").startswith("Pine - Crane (1L) · 松に鶴 · month 1, 松 matsu")
    assert card_title("11P").endswith("カス Plain")
    assert card_title("12P3").count("12P3") == 1


def test_special_cards_have_their_features() -> None:
    assert "寿" not in card_svg("9A")  # drawn as strokes, not text in a font
    assert svg.YELLOW in card_svg("11P")  # the lightning bolt
    assert card_svg("8L").count("<circle") >= 1  # the moon


def test_doctests() -> None:
    failures, _ = doctest.testmod(svg, verbose=False)
    assert failures == 0


def test_sprite_without_badges_has_no_code_text() -> None:
    root = parse(sprite_sheet(mark_kind=False))
    assert list(root.iter(f"{NS}text")) == [] and find_class(root, "mark") == []
    for sym in root.iter(f"{NS}symbol"):
        title = sym.find(f"{NS}title")
        if title is not None:
            sym.remove(title)  # the code is only in the accessible title
        code = sym.get("id", "").removeprefix("card-")
        assert f">{code}<" not in ET.tostring(sym, encoding="unicode")

"""Cards drawn as text: chips, marks, piles."""

from __future__ import annotations

import pytest
from rich.text import Text

from koikoi.game.cards import ALL_CARDS, BRIGHTS, Card, Kind, parse_cards
from koikoi.tui.cardtext import (
    CHIP_HEIGHT,
    CHIP_WIDTH,
    KIND_MARKS,
    MONTH_COLOURS,
    SPECIAL_MARKS,
    TALL_CHIP_HEIGHT,
    back_text,
    card_caption,
    card_code_text,
    chip_lines,
    chip_text,
    codes_text,
    pile_groups,
    pile_text,
)


def test_a_tall_chip_adds_the_kind_in_japanese_in_nine_cells() -> None:
    words = {"BRIGHT": "光", "ANIMAL": "タネ", "RIBBON": "短冊", "PLAIN": "カス"}
    for card in ALL_CARDS:
        lines = chip_lines(card, tall=True)
        assert len(lines) == TALL_CHIP_HEIGHT and lines[:3] == chip_lines(card)
        assert Text(lines[3]).cell_len == CHIP_WIDTH
        assert lines[3].rstrip() == words[card.kind.name]
        assert chip_text(card, tall=True).plain == "\n".join(lines)


def test_every_chip_is_three_lines_of_nine_cells_with_code_month_and_kind() -> None:
    for card in ALL_CARDS:
        lines = chip_lines(card)
        assert len(lines) == CHIP_HEIGHT
        assert all(Text(line).cell_len == CHIP_WIDTH for line in lines)
        assert lines[0].startswith(card.code)
        assert KIND_MARKS[card.kind] in lines[0]
        text = chip_text(card)
        assert text.plain == "\n".join(lines)


def test_chip_shows_month_name_and_what_the_card_shows() -> None:
    assert chip_lines(Card.CHERRY_CURTAIN) == ["3L   ★   ", "Cherry   ", "Curtain  "]
    assert chip_lines(Card.WILLOW_LIGHTNING)[2] == "Lightning"
    assert chip_lines(Card.PAULOWNIA_PLAIN_3)[1:] == ["Paulownia", "plain    "]
    assert chip_lines(Card.CHRYSANTHEMUM_RIBBON)[2].startswith("Blue")
    assert chip_lines(Card.PINE_RIBBON)[2].startswith("Poetry")


def test_special_cards_have_their_own_marks() -> None:
    specials = {
        Card.CHRYSANTHEMUM_SAKE_CUP: "◎",
        Card.WILLOW_RAIN_MAN: "☂",
        Card.WILLOW_LIGHTNING: "ϟ",
        Card.PINE_RIBBON: "✎",
        Card.PEONY_RIBBON: "≋",
    }
    for card, mark in specials.items():
        assert chip_lines(card)[0].rstrip().endswith(mark)
        assert mark in card_caption(card)
    # Only the nine special cards carry a second mark, and a plain ribbon has none.
    assert len(SPECIAL_MARKS) == 9
    assert chip_lines(Card.IRIS_RIBBON)[0].rstrip() == "5R   ▬"


def test_month_colours_are_distinct_and_used_as_background() -> None:
    assert len(set(MONTH_COLOURS)) == 12
    text = chip_text(Card.PINE_CRANE)
    styles = {str(span.style) for span in text.spans}
    assert any(MONTH_COLOURS[0][0] in s for s in styles)


def test_captions_name_the_card_in_words() -> None:
    assert card_caption(Card.CHRYSANTHEMUM_SAKE_CUP) == "9A Chrysanthemum · Sake cup ◎"
    assert card_caption(Card.CLOVER_RIBBON) == "7R Bush clover · plain red ribbon"
    assert card_caption(Card.CLOVER_PLAIN_1) == "7P1 Bush clover · plain"


def test_codes_and_backs() -> None:
    assert codes_text(parse_cards("9A 1L")).plain == "1L 9A◎"
    assert card_code_text(Card.WILLOW_RAIN_MAN).plain == "11L☂"
    assert back_text(3).plain == "▒▒ ▒▒ ▒▒"
    assert back_text(0).plain == ""


def test_piles_are_grouped_by_kind_with_counts() -> None:
    pile = parse_cards("1L 3L 7A 1R 2R 1P1 1P2 9P1")
    groups = pile_groups(pile)
    assert [k for k, _ in groups] == [Kind.BRIGHT, Kind.ANIMAL, Kind.RIBBON, Kind.PLAIN]
    assert groups[0][1] == pile & BRIGHTS
    line = pile_text(pile).plain
    assert line == ("★Brights 2 1L 3L │ ◆Animals 1 7A │ ▬Ribbons 2 1R✎ 2R✎ │ ·Plains 3 1P1 1P2 9P1")
    # Narrow: Plains (then Ribbons...) fall back to their counts.
    assert pile_text(pile, width=66).plain == (
        "★Brights 2 1L 3L │ ◆Animals 1 7A │ ▬Ribbons 2 1R✎ 2R✎ │ ·Plains 3"
    )
    multi = pile_text(pile, multiline=True).plain.splitlines()
    assert multi[0] == "★ Brights 2: 1L 3L"
    assert multi[3] == "· Plains 3: 1P1 1P2 9P1"
    assert pile_text(0).plain == "★Brights 0 │ ◆Animals 0 │ ▬Ribbons 0 │ ·Plains 0"


def _contrast(a: str, b: str) -> float:
    def luminance(colour: str) -> float:
        r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("month", range(1, 13))
def test_every_months_cards_stand_out_from_the_table(month: int) -> None:
    """Susuki chips were #262626 and Iris chips #33399a (1.7:1) on the #1e1e1e table."""
    from koikoi.tui.app import KoiKoiApp

    surface = KoiKoiApp(records=None).get_css_variables()["surface"]
    bg, fg = MONTH_COLOURS[month - 1]
    assert _contrast(bg, surface) >= 3.0  # a card's edge against the table (WCAG 1.4.11)
    assert _contrast(bg, fg) >= 4.5  # its text

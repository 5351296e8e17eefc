"""What every rule option and every yaku means, in words for players.

One place for the explanations that the command line (``koikoi rules explain``,
``koikoi rules yaku``), the terminal game's help, the web game's yaku table and
``docs/rules.md`` show. Pure data and functions on :class:`~koikoi.game.rules.Rules`.

>>> OPTION_HELP["koikoi.limit"].summary
'The most koi-koi calls allowed in one round; 0 means no limit.'
>>> allowed_values("game.match_tie")
'one of draw, dealer'
>>> [row.points for row in yaku_rows(get_rules("leaflet")) if row.name == "goko"]
[15]
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields
from typing import Any, Final

from koikoi.game.errors import RulesError
from koikoi.game.rules import (
    CHOICES,
    POINTS_RANGE,
    PRESET_NAMES,
    RANGES,
    REDEAL_CONDITIONS,
    SECTION_TYPES,
    Rules,
    get_rules,
)
from koikoi.game.scoring import YAKU_NAMES, YAKU_ORDER

__all__ = [
    "OPTION_HELP",
    "OPTION_KEYS",
    "SANKO_ANY_NEEDS",
    "YAKU_NEEDS",
    "YAKU_NEEDS_WHEN",
    "OptionHelp",
    "YakuRow",
    "allowed_values",
    "close_options",
    "explain_option",
    "find_option",
    "preset_differences",
    "reference_markdown",
    "yaku_needs",
    "yaku_rows",
]


@dataclass(frozen=True, slots=True)
class OptionHelp:
    """One option: what it does, what each allowed word means, and an example.

    ``example`` is a TOML value (``"6"``, ``'"ladder"'``) and ``example_note`` says
    what the rule set does with it.
    """

    summary: str
    example: str
    example_note: str
    values: dict[str, str] = field(default_factory=dict)


def _points(name: str, needs: str, example: int) -> OptionHelp:
    english = YAKU_NAMES[name][0]
    return OptionHelp(
        f"Points of {name} ({english}: {needs}); 0 removes the yaku from the rule set.",
        str(example),
        f"{name} is worth {example} points" if example else f"there is no {name}",
    )


_OPTIONS: Final[dict[str, OptionHelp]] = {
    # ------------------------------------------------------------------ [game]
    "game.rounds": OptionHelp(
        "How many rounds a match lasts. Round 1 is played in month 1, round 2 in "
        "month 2 and so on, starting again at month 1 after round 12; the month "
        "matters for tsukifuda and for a collected teshi.",
        "6",
        "a short match of six rounds, January to June",
    ),
    "game.start_points": OptionHelp(
        "0: both scores start at 0 and each round's points are added to the winner's "
        "score. Above 0: both players start with this many points, the loser of a "
        "round pays the winner, and the match ends at once when a player has 0 or less.",
        "30",
        "each player starts with 30 and the match may end early by a bust",
    ),
    "game.first_dealer": OptionHelp(
        "How the dealer of the first round is chosen.",
        '"random"',
        "a coin flip picks the first dealer",
        {
            "draw": "each player turns up a card: the earlier month wins; in the same "
            "month the higher kind wins (Bright, Animal, Ribbon, Plain); two cards of "
            "the same month and kind draw again",
            "random": "a coin flip",
        },
    ),
    "game.dealer": OptionHelp(
        "Who deals each round after the first.",
        '"fixed"',
        "one player deals the whole match",
        {
            "winner": "the player who scored the last round deals the next one",
            "fixed": "the winner of the first-dealer choice leads round 1 and the other "
            "player deals every round of the match",
        },
    ),
    "game.leader": OptionHelp(
        "Who plays first in a round.",
        '"previous_winner"',
        "whoever scored last round starts the next one",
        {
            "dealer": "the dealer",
            "previous_winner": "the player who scored in the round before; when nobody "
            "scored, the same player leads again",
        },
    ),
    "game.dealer_after_draw": OptionHelp(
        "Who deals after a round in which nobody scores (when the dealer is the winner "
        "of the last round).",
        '"same"',
        "after a round without a score the same player deals again",
        {"same": "the dealer deals again", "swap": "the other player deals"},
    ),
    "game.match_tie": OptionHelp(
        "Who wins a match that ends with equal scores.",
        '"dealer"',
        "a tie goes to the dealer of the last round",
        {"draw": "nobody: the match is a draw", "dealer": "the dealer of the last round played"},
    ),
    # ------------------------------------------------------------------ [deal]
    "deal.check_order": OptionHelp(
        "A fresh deal is checked twice: the hands (instant hands and hand redeals) and "
        "the field (field redeals). This option says which check comes first, which "
        "decides the outcome when both would apply.",
        '"field_first"',
        "a redeal of the field wins over an instant hand",
        {
            "hands_first": "the hands are checked before the field",
            "field_first": "the field is checked before the hands",
        },
    ),
    "deal.field_redeal": OptionHelp(
        "The patterns of the eight face-up field cards that void the deal and shuffle "
        "the cards again; an empty list never redeals.",
        '["four_of_a_month", "four_pairs"]',
        "four cards of one month, or four months with two cards each, redeal",
        {
            "four_of_a_month": "all four cards of one month",
            "four_pairs": "exactly four months with two cards each",
            "three_of_a_month": "three or more cards of one month",
        },
    ),
    "deal.hand_redeal": OptionHelp(
        "The same patterns, looked for in each dealt hand: a hand that shows one voids "
        "the deal before any instant hand is scored; an empty list never redeals.",
        '["four_of_a_month"]',
        "a hand with all four cards of a month is redealt instead of scoring teshi",
        {
            "four_of_a_month": "all four cards of one month",
            "four_pairs": "exactly four months with two cards each",
            "three_of_a_month": "three or more cards of one month",
        },
    ),
    "deal.redeal_dealer": OptionHelp(
        "Who deals after a redeal.",
        '"swap"',
        "every redeal passes the deal (and the lead) to the other player",
        {"same": "the same dealer", "swap": "the other player, who also leads"},
    ),
    # --------------------------------------------------------------- [instant]
    "instant.teshi": OptionHelp(
        "Points of teshi, an instant hand: all four cards of one month among the eight "
        "dealt cards. The round ends at once and the points are paid without any "
        "multiplier; 0 turns teshi off.",
        "0",
        "a dealt four of a month is played out like any other hand",
    ),
    "instant.kuttsuki": OptionHelp(
        "Points of kuttsuki, an instant hand: the eight dealt cards form four pairs of "
        "months (four cards of a month count as two pairs). Scored like teshi; when a "
        "hand holds both, the higher scores; 0 turns kuttsuki off.",
        "4",
        "four pairs in the dealt hand win the round for 4 points",
    ),
    "instant.both": OptionHelp(
        "What happens when both players are dealt an instant hand.",
        '"redeal"',
        "the deal is void and the cards are shuffled again",
        {"dealer": "only the dealer's instant hand scores", "redeal": "the cards are dealt again"},
    ),
    "instant.teshi_collected": OptionHelp(
        "true: teshi can also be made during play, by capturing all four cards of the "
        "round's month; it then scores as a yaku worth teshi's points.",
        "true",
        "in round 3, capturing all four cherry cards scores teshi",
    ),
    # ------------------------------------------------------------------ [play]
    "play.hand_card": OptionHelp(
        "Which hand cards a player may play, and whether a matching card must capture.",
        '"must_match"',
        "a player holding a card of a field month has to play such a card",
        {
            "any": "any hand card; a card whose month is on the field captures",
            "any_or_discard": "any hand card; a card whose month is on the field may "
            "also be laid beside it without capturing",
            "must_match": "a player holding a card whose month is on the field must "
            "play one of those cards",
        },
    ),
    "play.wild_lightning": OptionHelp(
        "true: the Lightning (11P), played or drawn, captures any one field card the "
        "player picks. With the other three willow cards on the field it takes all "
        "four as usual; on an empty field it is laid.",
        "true",
        "the Lightning is a wild card",
    ),
    # ---------------------------------------------------------------- [koikoi]
    "koikoi.limit": OptionHelp(
        "The most koi-koi calls allowed in one round; 0 means no limit.",
        "1",
        "after one koi-koi, the next improvement stops the round automatically",
    ),
    "koikoi.limit_scope": OptionHelp(
        "Whose calls count toward koikoi.limit.",
        '"round"',
        "both players share the limit",
        {
            "player": "each player's own calls, separately",
            "round": "both players' calls together",
        },
    ),
    "koikoi.offer_on_last_card": OptionHelp(
        "Whether a player whose score goes up on the turn they play their last hand "
        "card may still call koi-koi.",
        "false",
        "a yaku made with the last hand card stops the round automatically",
    ),
    "koikoi.bonus": OptionHelp(
        "The reward for calling koi-koi, applied when a round is stopped.",
        '"ladder"',
        "two koi-koi calls before stopping add 2 points",
        {
            "opponent_x2": "the stopper's points double if the opponent had called "
            "koi-koi in that round; the opponent scores nothing",
            "challenge_x2": "the points double once if the stopper called koi-koi and "
            "then improved, or if the opponent had called koi-koi",
            "ladder": "the stopper's own calls add 1, 2 or 3 points for one to three "
            "calls; from four calls on the points are multiplied by the calls minus two",
            "none": "no bonus; a player who called koi-koi and is beaten just scores nothing",
        },
    ),
    "koikoi.seven_double": OptionHelp(
        "true: a stop whose yaku total is 7 or more is doubled (before the koi-koi bonus).",
        "false",
        "a 7-point stop scores 7",
    ),
    # ------------------------------------------------------------------- [end]
    "end.exhausted": OptionHelp(
        "Who scores when both hands run out and nobody has stopped.",
        '"highest"',
        "the higher yaku total is settled as if that player had stopped",
        {
            "draw": "nobody; points of yaku held are lost",
            "highest": "the player with the higher yaku total, settled as a stop "
            "(multipliers included); a tie goes to the dealer; without any yaku the "
            "dealer gets end.oya_ken",
            "last_yaku": "the last player to make or improve a yaku, settled as a "
            "stop; nobody: the dealer gets end.oya_ken",
            "dealer_point": "the dealer gets end.oya_ken",
        },
    ),
    "end.first_empty_hand": OptionHelp(
        "true: the round is over (as exhausted) at the end of the turn in which either "
        "player plays their last hand card, and that turn has no koi-koi decision. "
        "false: play goes on until both hands are empty.",
        "true",
        "the round may end one turn early",
    ),
    "end.oya_ken": OptionHelp(
        "The dealer's privilege (oya-ken): points the dealer gets for an exhausted "
        "round when nobody holds a yaku (end.exhausted highest or last_yaku), or for "
        "every exhausted round (dealer_point).",
        "6",
        "a dealer with no yaku against none still takes 6",
    ),
    # ------------------------------------------------------------------ [yaku]
    "yaku.combine": OptionHelp(
        "How yaku held together add up. Only the best Bright yaku ever scores.",
        '"separate"',
        "Animals and Boar-Deer-Butterflies both score",
        {
            "absorb": "among the Animal yaku, and among the Ribbon yaku, only the best "
            "scores; inoshikacho and the ribbon sets then earn yaku.extra per further "
            "card of their kind",
            "separate": "every yaku held scores; only tane, tanzaku and kasu count further cards",
            "exclusive": "a card counts toward one yaku only (hanami and tsukimi may "
            "share the Sake cup); the best total allowed by that is scored",
        },
    ),
    "yaku.extra": OptionHelp(
        "Points for each card beyond the minimum of tane (5), tanzaku (5) and kasu "
        "(10), and under combine = absorb for each further card after inoshikacho and "
        "the ribbon sets.",
        "0",
        "6 Animals score the same as 5",
    ),
    "yaku.sake_cup": OptionHelp(
        "Which kinds the Sake cup (9A) counts as.",
        '"animal"',
        "the Sake cup never counts toward kasu",
        {
            "animal": "an Animal only",
            "both": "an Animal and a Plain at the same time",
            "either": "an Animal or a Plain, whichever scores more",
            "both_double_plain": "an Animal and two Plains at the same time",
        },
    ),
    "yaku.sanko_with_rainman": OptionHelp(
        "true: three Brights that include the Rain man (11L) also make sanko.",
        "true",
        "Crane, Curtain and Rain man score sanko",
    ),
    "yaku.akatan_aotan_adds": OptionHelp(
        "With combine = separate and both ribbon sets held: true adds akatan_aotan's "
        "points to those of akatan and aotan; false scores akatan_aotan instead of them.",
        "true",
        "all six ribbons score akatan + aotan + akatan_aotan",
    ),
    "yaku.viewing_requires_other": OptionHelp(
        "true: hanami and tsukimi score only while their holder also has some yaku "
        "other than these two.",
        "true",
        "Curtain and Sake cup alone score nothing",
    ),
    "yaku.viewing_spoiled_by": OptionHelp(
        "Card codes that spoil the viewing yaku: a player who has captured any of them "
        "scores nothing for hanami and tsukimi. An empty list spoils nothing.",
        '["11L", "11P"]',
        "rain (the Rain man or the Lightning) ruins the viewing",
    ),
    "yaku.viewing_after_koikoi": OptionHelp(
        "0: the viewing yaku keep their points. Above 0: each viewing yaku is worth "
        "this many points once its holder has called koi-koi in the round.",
        "3",
        "hanami and tsukimi are worth 3 each after a koi-koi",
    ),
}

YAKU_NEEDS: Final[dict[str, str]] = {
    "goko": "all 5 Brights",
    "shiko": "4 Brights, not the Rain man",
    "ame_shiko": "4 Brights with the Rain man",
    "sanko": "3 Brights, not the Rain man",
    "inoshikacho": "Boar 7A, Deer 10A, Butterflies 6A",
    "tane": "5 Animals (+{extra} each)",
    "akatan": "red poetry ribbons 1R 2R 3R",
    "aotan": "blue ribbons 6R 9R 10R",
    "akatan_aotan": "all six poetry and blue ribbons",
    "tanzaku": "5 Ribbons (+{extra} each)",
    "kasu": "10 Plains (+{extra} each)",
    "hanami": "Curtain 3L + Sake cup 9A",
    "tsukimi": "Moon 8L + Sake cup 9A",
    "tsukifuda": "all 4 cards of the round's month",
    "teshi": "dealt 4 cards of one month",
    "kuttsuki": "dealt 4 pairs of months",
}
"""What each yaku needs, short enough for a table; ``{extra}`` is ``yaku.extra``."""

SANKO_ANY_NEEDS: Final = "any 3 Brights"
"""Sanko's needs when ``yaku.sanko_with_rainman`` is true."""

YAKU_NEEDS_WHEN: Final[dict[str, tuple[str, str]]] = {
    "sanko": ("yaku.sanko_with_rainman", SANKO_ANY_NEEDS),
    "teshi": ("instant.teshi_collected", "dealt 4 of a month, or capture the round's 4"),
}
"""Yaku whose needs change with a true/false option: yaku -> (option, needs when true)."""

_POINT_EXAMPLES: Final[dict[str, int]] = {
    "goko": 15,
    "shiko": 10,
    "ame_shiko": 8,
    "sanko": 6,
    "inoshikacho": 0,
    "tane": 2,
    "akatan": 6,
    "aotan": 6,
    "akatan_aotan": 0,
    "tanzaku": 2,
    "kasu": 0,
    "hanami": 0,
    "tsukimi": 3,
    "tsukifuda": 4,
}
OPTION_HELP: Final[dict[str, OptionHelp]] = {
    **_OPTIONS,
    **{
        f"points.{name}": _points(name, YAKU_NEEDS[name].replace(" (+{extra} each)", ""), n)
        for name, n in _POINT_EXAMPLES.items()
    },
}
"""Every option, ``"section.key"`` -> its explanation."""

OPTION_KEYS: Final[tuple[str, ...]] = tuple(
    f"{section}.{f.name}" for section, cls in SECTION_TYPES.items() for f in fields(cls)
)
"""Every option, ``"section.key"``, in the order of a rule-set file."""


@dataclass(frozen=True, slots=True)
class YakuRow:
    """One yaku of a rule set, for a table: key, names, what it needs, points."""

    name: str
    english: str
    japanese: str
    needs: str
    points: int


def yaku_needs(name: str, rules: Rules) -> str:
    """What yaku ``name`` needs under ``rules`` (sanko with the Rain man, the extra points).

    >>> yaku_needs("tane", get_rules("nintendo"))
    '5 Animals (+1 each)'
    >>> yaku_needs("sanko", get_rules("modern-hanafuda"))
    'any 3 Brights'
    """
    if name in YAKU_NEEDS_WHEN:
        option, needs = YAKU_NEEDS_WHEN[name]
        if rules.flat()[option]:
            return needs
    text = YAKU_NEEDS.get(name, name)
    if "{extra}" in text:
        extra = rules.yaku.extra
        text = text.format(extra=extra) if extra else text.split(" (", 1)[0]
    return text


def yaku_rows(rules: Rules) -> list[YakuRow]:
    """The yaku that exist under ``rules`` (non-zero points), in display order."""
    points = rules.yaku_points()
    rows = []
    for name in YAKU_ORDER:
        if name not in points:
            continue
        english, japanese = YAKU_NAMES.get(name, (name, name))
        rows.append(YakuRow(name, english, japanese, yaku_needs(name, rules), points[name]))
    return rows


# ------------------------------------------------------------ option look-up


def close_options(key: str, n: int = 3) -> list[str]:
    """The option keys nearest to a mistyped ``key`` (``section.key`` or a bare key).

    >>> close_options("koikoi.limt")
    ['koikoi.limit']
    """
    section, _, bare = key.rpartition(".")
    pool = [k for k in OPTION_KEYS if k.startswith(section + ".")] or list(OPTION_KEYS)
    by_bare = {k.split(".", 1)[1]: k for k in reversed(pool)}
    return [by_bare[m] for m in difflib.get_close_matches(bare, list(by_bare), n=n, cutoff=0.75)]


def find_option(key: str) -> str:
    """The full ``"section.key"`` of an option given in full or by its bare key.

    Raises:
        RulesError: no such option (the message names the close matches) or a bare
            key that more than one section has.

    >>> find_option("bonus")
    'koikoi.bonus'
    """
    key = key.strip().lower().replace("-", "_")
    if key in OPTION_KEYS:
        return key
    if "." not in key:
        owners = [k for k in OPTION_KEYS if k.split(".", 1)[1] == key]
        if len(owners) == 1:
            return owners[0]
    close = close_options(key)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise RulesError(f"unknown option {key!r}{hint} (koikoi rules explain lists every option)")


def allowed_values(key: str) -> str:
    """The values option ``key`` accepts, in words.

    >>> allowed_values("game.rounds")
    'an integer from 1 to 120'
    """
    section, name = key.split(".", 1)
    default = getattr(SECTION_TYPES[section](), name)
    if key in CHOICES:
        return "one of " + ", ".join(CHOICES[key])
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int):
        lo, hi = RANGES.get(key, POINTS_RANGE)
        return f"an integer from {lo} to {hi}"
    if name in ("field_redeal", "hand_redeal"):
        return "a list of any of " + ", ".join(REDEAL_CONDITIONS)
    return "a list of card codes (such as 11L)"


def _toml(value: Any) -> str:
    """A value as written in a rule-set file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def explain_option(key: str, rules: Rules | None = None) -> str:
    """A few lines on option ``key``: what it does, allowed values, an example, its value.

    Raises:
        RulesError: an unknown option (see :func:`find_option`).
    """
    full = find_option(key)
    section, name = full.split(".", 1)
    info = OPTION_HELP[full]
    lines = [f"{full}", f"  {info.summary}", f"Allowed: {allowed_values(full)}"]
    for word, meaning in info.values.items():
        lines.append(f"  {word}: {meaning}")
    lines.append(f"Example: [{section}] {name} = {info.example}  ({info.example_note})")
    if rules is not None:
        value = rules.flat()[full]
        lines.append(f"In {rules.name}: {name} = {_toml(value)}")
    return "\n".join(lines)


# --------------------------------------------------------------- presets


def preset_differences() -> list[tuple[str, list[Any]]]:
    """The options on which the presets do not all agree, with each preset's value."""
    flats = [get_rules(name).flat() for name in PRESET_NAMES]
    return [
        (key, [f[key] for f in flats])
        for key in OPTION_KEYS
        if any(f[key] != flats[0][key] for f in flats)
    ]


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (tuple, list)):
        return ", ".join(f"`{v}`" for v in value) if value else "none"
    if isinstance(value, str):
        return f"`{value}`"
    return str(value)


def _preset_table_head(
    heading: str, intro: str, columns: tuple[str, ...], *, numbers: bool
) -> list[str]:
    """Markdown lines: a heading, an introduction, then the head of a table of
    ``columns`` and one column per preset (right-aligned when they hold ``numbers``)."""
    preset_rule = "---:|" if numbers else "---|"
    return [
        heading,
        "",
        intro,
        "",
        "| " + " | ".join((*columns, *PRESET_NAMES)) + " |",
        "|" + "---|" * len(columns) + preset_rule * len(PRESET_NAMES),
    ]


def reference_markdown() -> str:
    """The generated part of ``docs/rules.md``: every option, every preset's yaku, the
    options on which the presets differ."""
    out: list[str] = ["## Every option", ""]
    for section in SECTION_TYPES:
        out.append(f"### `[{section}]`")
        out.append("")
        for key in (k for k in OPTION_KEYS if k.startswith(section + ".")):
            name = key.split(".", 1)[1]
            info = OPTION_HELP[key]
            default = get_rules("nintendo").flat()[key]
            out.append(f"#### `{key}`")
            out.append("")
            out.append(info.summary)
            out.append("")
            out.append(f"Allowed: {allowed_values(key)}. In nintendo: `{_toml(default)}`.")
            out.append("")
            if info.values:
                out.extend(f"- `{word}`: {meaning}." for word, meaning in info.values.items())
                out.append("")
            out.append(
                f"Example: `{name} = {info.example}` under `[{section}]`: {info.example_note}."
            )
            out.append("")
    out += _preset_table_head(
        "## Yaku and points of every preset",
        "Points of each yaku (a dash: the preset does not have it). Teshi and kuttsuki "
        "are instant hands, scored from the dealt cards. What a yaku needs can depend "
        "on the options: the table gives the nintendo wording.",
        ("yaku", "日本語", "needs"),
        numbers=True,
    )
    presets = [get_rules(name) for name in PRESET_NAMES]
    nintendo = get_rules("nintendo")
    all_points = [r.yaku_points() for r in presets]
    for name in YAKU_ORDER:
        english, japanese = YAKU_NAMES[name]
        cells = [str(p.get(name, "—")) for p in all_points]
        out.append(
            f"| {english} (`{name}`) | {japanese} | {yaku_needs(name, nintendo)} | "
            + " | ".join(cells)
            + " |"
        )
    out.append("")
    out.append("## The presets")
    out.append("")
    for rules in presets:
        out.append(f"- **{rules.name}**: {' '.join(rules.description.split())}")
    out.append("")
    out += _preset_table_head(
        "### Where the presets differ",
        "Every option outside `[points]` on which the presets do not all agree (the "
        "points are in the table above); an option not listed here has the same "
        "value in every preset.",
        ("option",),
        numbers=False,
    )
    for key, values in preset_differences():
        if key.startswith("points."):
            continue
        out.append(f"| `{key}` | " + " | ".join(_cell(v) for v in values) + " |")
    return "\n".join(out) + "\n"

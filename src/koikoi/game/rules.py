"""Rule sets: every option (docs/rules.md), the seven presets, house-rules files.

A :class:`Rules` is frozen and made of one frozen section per TOML table
(``game``, ``deal``, ``instant``, ``play``, ``koikoi``, ``end``, ``yaku``,
``points``). Presets are TOML files shipped in ``koikoi/presets``; a house-rules
file names a preset with ``extends`` and overrides any subset of keys.

>>> rules = get_rules("leaflet")
>>> rules.game.rounds, rules.koikoi.bonus
(6, 'none')
>>> load_rules_text('extends = "nintendo"\\n[game]\\nrounds = 6').game.rounds
6
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any, Final

from koikoi.game.cards import parse_card
from koikoi.game.errors import InvalidInputError, RulesError, read_text_file

__all__ = [
    "PRESET_NAMES",
    "DealRules",
    "EndRules",
    "GameRules",
    "InstantRules",
    "KoikoiRules",
    "PlayRules",
    "Points",
    "Rules",
    "YakuRules",
    "diff_rules",
    "get_rules",
    "load_rules",
    "load_rules_file",
    "load_rules_text",
    "rules_from_dict",
]

REDEAL_CONDITIONS: Final = ("four_of_a_month", "four_pairs", "three_of_a_month")

# Allowed values of the string options, by "section.key".
CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "game.first_dealer": ("draw", "random"),
    "game.dealer": ("winner", "fixed"),
    "game.leader": ("dealer", "previous_winner"),
    "game.dealer_after_draw": ("same", "swap"),
    "game.match_tie": ("draw", "dealer"),
    "deal.check_order": ("hands_first", "field_first"),
    "deal.redeal_dealer": ("same", "swap"),
    "instant.both": ("dealer", "redeal"),
    "play.hand_card": ("any", "any_or_discard", "must_match"),
    "koikoi.limit_scope": ("player", "round"),
    "koikoi.bonus": ("opponent_x2", "challenge_x2", "ladder", "none"),
    "end.exhausted": ("draw", "highest", "last_yaku", "dealer_point"),
    "yaku.combine": ("absorb", "separate", "exclusive"),
    "yaku.sake_cup": ("animal", "both", "either", "both_double_plain"),
}

# Inclusive ranges of the integer options.
RANGES: Final[dict[str, tuple[int, int]]] = {
    "game.rounds": (1, 120),
    "game.start_points": (0, 10_000),
    "instant.teshi": (0, 1000),
    "instant.kuttsuki": (0, 1000),
    "koikoi.limit": (0, 100),
    "end.oya_ken": (0, 1000),
    "yaku.extra": (0, 1000),
    "yaku.viewing_after_koikoi": (0, 1000),
}
POINTS_RANGE: Final = (0, 1000)


@dataclass(frozen=True, slots=True)
class GameRules:
    """``[game]``: the match."""

    rounds: int = 12
    start_points: int = 0
    first_dealer: str = "draw"
    dealer: str = "winner"
    leader: str = "dealer"
    dealer_after_draw: str = "swap"
    match_tie: str = "draw"


@dataclass(frozen=True, slots=True)
class DealRules:
    """``[deal]``: checks of the dealt hands and field."""

    check_order: str = "hands_first"
    field_redeal: tuple[str, ...] = ("four_of_a_month",)
    hand_redeal: tuple[str, ...] = ()
    redeal_dealer: str = "same"


@dataclass(frozen=True, slots=True)
class InstantRules:
    """``[instant]``: instant (dealt) hands."""

    teshi: int = 6
    kuttsuki: int = 6
    both: str = "dealer"
    teshi_collected: bool = False


@dataclass(frozen=True, slots=True)
class PlayRules:
    """``[play]``: what may be played."""

    hand_card: str = "any"
    wild_lightning: bool = False


@dataclass(frozen=True, slots=True)
class KoikoiRules:
    """``[koikoi]``: the koi-koi call and its bonus."""

    limit: int = 0
    limit_scope: str = "player"
    offer_on_last_card: bool = True
    bonus: str = "opponent_x2"
    seven_double: bool = True


@dataclass(frozen=True, slots=True)
class EndRules:
    """``[end]``: the end of a round without a stop."""

    exhausted: str = "draw"
    first_empty_hand: bool = False
    oya_ken: int = 0


@dataclass(frozen=True, slots=True)
class YakuRules:
    """``[yaku]``: how yaku are evaluated and combined."""

    combine: str = "absorb"
    extra: int = 1
    sake_cup: str = "both"
    sanko_with_rainman: bool = False
    akatan_aotan_adds: bool = False
    viewing_requires_other: bool = False
    viewing_spoiled_by: tuple[str, ...] = ()
    viewing_after_koikoi: int = 0


@dataclass(frozen=True, slots=True)
class Points:
    """``[points]``: points of each yaku; 0 means the yaku does not exist."""

    goko: int = 10
    shiko: int = 8
    ame_shiko: int = 7
    sanko: int = 5
    inoshikacho: int = 5
    tane: int = 1
    akatan: int = 5
    aotan: int = 5
    akatan_aotan: int = 10
    tanzaku: int = 1
    kasu: int = 1
    hanami: int = 5
    tsukimi: int = 5
    tsukifuda: int = 0


SECTION_TYPES: Final[dict[str, type[Any]]] = {
    "game": GameRules,
    "deal": DealRules,
    "instant": InstantRules,
    "play": PlayRules,
    "koikoi": KoikoiRules,
    "end": EndRules,
    "yaku": YakuRules,
    "points": Points,
}


@dataclass(frozen=True, slots=True)
class Rules:
    """A complete rule set. Immutable and hashable.

    ``name`` is the preset name, or the house-rules file's ``name`` (or its
    preset's name with ``+house``); ``description`` says where it comes from.
    """

    name: str = "nintendo"
    description: str = ""
    game: GameRules = field(default_factory=GameRules)
    deal: DealRules = field(default_factory=DealRules)
    instant: InstantRules = field(default_factory=InstantRules)
    play: PlayRules = field(default_factory=PlayRules)
    koikoi: KoikoiRules = field(default_factory=KoikoiRules)
    end: EndRules = field(default_factory=EndRules)
    yaku: YakuRules = field(default_factory=YakuRules)
    points: Points = field(default_factory=Points)

    def to_dict(self) -> dict[str, Any]:
        """Every option as plain data (lists for tuples), TOML/JSON-ready."""
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        for section in SECTION_TYPES:
            values = dataclasses.asdict(getattr(self, section))
            out[section] = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
        return out

    def flat(self) -> dict[str, Any]:
        """Every option keyed ``"section.key"``."""
        out: dict[str, Any] = {}
        for section in SECTION_TYPES:
            for f in fields(SECTION_TYPES[section]):
                out[f"{section}.{f.name}"] = getattr(getattr(self, section), f.name)
        return out

    def to_toml(self) -> str:
        """A complete, self-contained TOML text of this rule set."""
        lines = [
            f"name = {_toml_value(self.name)}",
            f"description = {_toml_value(self.description)}",
        ]
        for section in SECTION_TYPES:
            lines.append("")
            lines.append(f"[{section}]")
            for f in fields(SECTION_TYPES[section]):
                lines.append(f"{f.name} = {_toml_value(getattr(getattr(self, section), f.name))}")
        return "\n".join(lines) + "\n"

    def replace(self, **changes: Any) -> Rules:
        """A copy with options changed, keyed ``section__key`` or by section object.

        >>> get_rules("nintendo").replace(game__rounds=6).game.rounds
        6
        """
        data = self.to_dict()
        for key, value in changes.items():
            if key in SECTION_TYPES and isinstance(value, SECTION_TYPES[key]):
                data[key] = {
                    k: list(v) if isinstance(v, tuple) else v
                    for k, v in dataclasses.asdict(value).items()
                }
            elif "__" in key:
                section, name = key.split("__", 1)
                if section not in SECTION_TYPES:
                    raise RulesError(
                        f"unknown section {section!r}: allowed {', '.join(SECTION_TYPES)}"
                    )
                data[section][name] = list(value) if isinstance(value, tuple) else value
            else:
                data[key] = value
        return rules_from_dict(data, source="replace()")

    def yaku_points(self) -> dict[str, int]:
        """Points of every yaku that exists in this rule set (non-zero)."""
        pts = {f.name: getattr(self.points, f.name) for f in fields(Points)}
        pts["teshi"] = self.instant.teshi
        pts["kuttsuki"] = self.instant.kuttsuki
        return {k: v for k, v in pts.items() if v}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        # A JSON string is a valid TOML basic string once DEL is escaped too.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", str: "string", list: "list", dict: "table"}.get(
        type(value), type(value).__name__
    )


def _check_value(section: str, key: str, value: Any, default: Any, source: str) -> Any:
    where = f"{source}: {section}.{key}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise RulesError(f"{where} must be true or false, not {_type_name(value)} {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesError(f"{where} must be an integer, not {_type_name(value)} {value!r}")
        lo, hi = RANGES.get(f"{section}.{key}", POINTS_RANGE)
        if not lo <= value <= hi:
            raise RulesError(f"{where} = {value} is out of range: allowed {lo} to {hi}")
        return value
    if isinstance(default, str):
        allowed = CHOICES[f"{section}.{key}"]
        if not isinstance(value, str) or value not in allowed:
            raise RulesError(
                f"{where} = {value!r} is not allowed: allowed {', '.join(repr(a) for a in allowed)}"
            )
        return value
    # tuples of strings
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise RulesError(f"{where} must be a list of strings, not {_type_name(value)} {value!r}")
    if key in ("field_redeal", "hand_redeal"):
        for v in value:
            if v not in REDEAL_CONDITIONS:
                raise RulesError(
                    f"{where}: {v!r} is not allowed: allowed any of "
                    f"{', '.join(repr(a) for a in REDEAL_CONDITIONS)}"
                )
        return tuple(dict.fromkeys(value))
    if key == "viewing_spoiled_by":
        codes = []
        for v in value:
            try:
                codes.append(parse_card(v).code)
            except InvalidInputError as exc:
                raise RulesError(f"{where}: {exc}") from None
        return tuple(dict.fromkeys(codes))
    raise RulesError(f"{where}: unsupported option")  # pragma: no cover - table is exhaustive


def rules_from_dict(
    data: Mapping[str, Any], *, base: Rules | None = None, source: str = "rules"
) -> Rules:
    """Build a :class:`Rules` from nested data, on top of ``base`` (defaults: nintendo's).

    Raises:
        RulesError: an unknown section or key, a wrong type or a value out of range.
    """
    extends = data.get("extends")
    if extends is not None:
        if not isinstance(extends, str) or extends not in PRESET_NAMES:
            raise RulesError(
                f"{source}: extends = {extends!r} is not a preset: "
                f"allowed {', '.join(PRESET_NAMES)}"
            )
        base = get_rules(extends)
    base = base if base is not None else Rules()
    name = data.get("name", base.name)
    description = data.get("description", base.description)
    if not isinstance(name, str) or not name.strip():
        raise RulesError(f"{source}: name must be a non-empty string, not {name!r}")
    if not isinstance(description, str):
        raise RulesError(f"{source}: description must be a string, not {description!r}")
    sections: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("name", "description", "extends"):
            continue
        if key not in SECTION_TYPES:
            raise RulesError(
                f"{source}: unknown key {key!r}: allowed top-level keys are name, description, "
                f"extends and the tables {', '.join(SECTION_TYPES)}"
            )
        if not isinstance(value, Mapping):
            raise RulesError(f"{source}: {key} must be a table, not {_type_name(value)}")
        sections[key] = value
    built: dict[str, Any] = {}
    for section, cls in SECTION_TYPES.items():
        current = getattr(base, section)
        given = sections.get(section, {})
        known = {f.name for f in fields(cls)}
        for key in given:
            if key not in known:
                raise RulesError(
                    f"{source}: unknown key {section}.{key}: allowed keys in [{section}] are "
                    f"{', '.join(sorted(known))}"
                )
        values = {
            f.name: _check_value(section, f.name, given[f.name], getattr(current, f.name), source)
            if f.name in given
            else getattr(current, f.name)
            for f in fields(cls)
        }
        built[section] = cls(**values)
    return Rules(name=name.strip(), description=description, **built)


def _preset_text(name: str) -> str:
    try:
        return (resources.files("koikoi.game") / "presets" / f"{name}.toml").read_text(
            encoding="utf-8"
        )
    except FileNotFoundError:
        raise RulesError(f"unknown preset {name!r}: allowed {', '.join(PRESET_NAMES)}") from None


PRESET_NAMES: Final[tuple[str, ...]] = (
    "nintendo",
    "compendium",
    "wikipedia",
    "boardgame-blog",
    "modern-hanafuda",
    "leaflet",
    "koikoi-japan",
)
_CACHE: dict[str, Rules] = {}


def get_rules(name: str = "nintendo") -> Rules:
    """The preset called ``name``.

    Raises:
        RulesError: if there is no such preset (the message lists them).
    """
    cached = _CACHE.get(name)
    if cached is not None:
        return cached
    if name not in PRESET_NAMES:
        raise RulesError(f"unknown preset {name!r}: allowed {', '.join(PRESET_NAMES)}")
    data = _parse_toml(_preset_text(name), f"preset {name}")
    rules = rules_from_dict(data, base=Rules(), source=f"preset {name}")
    _CACHE[name] = rules
    return rules


def _parse_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise RulesError(
            f"{source}: TOML nested too deeply to read; a rule set needs two levels of tables"
        ) from None


def load_rules_text(text: str, *, source: str = "house rules") -> Rules:
    """House rules from TOML text: ``extends = "<preset>"`` (default nintendo) plus any keys."""
    data = _parse_toml(text, source)
    extends = data.get("extends", "nintendo")
    if not isinstance(extends, str):
        raise RulesError(f"{source}: extends must be a preset name (string), not {extends!r}")
    if extends not in PRESET_NAMES:
        raise RulesError(
            f"{source}: extends = {extends!r} is not a preset: allowed {', '.join(PRESET_NAMES)}"
        )
    base = get_rules(extends)
    if "name" not in data:
        data = {**data, "name": f"{extends}+house"}
    if "description" not in data:
        data = {**data, "description": f"house rules on top of {extends}"}
    return rules_from_dict(data, base=base, source=source)


def load_rules_file(path: str | Path) -> Rules:
    """House rules from a TOML file (see :func:`load_rules_text`)."""
    text = read_text_file(path, what="rules file", error=RulesError)
    return load_rules_text(text, source=str(Path(path)))


def load_rules(name_or_path: str | Path) -> Rules:
    """A preset by name, or a house-rules file by path (what ``--rules`` accepts)."""
    text = str(name_or_path)
    if text in PRESET_NAMES:
        return get_rules(text)
    p = Path(text)
    if p.suffix == ".toml" or p.exists():
        return load_rules_file(p)
    raise RulesError(
        f"unknown rules {text!r}: give a preset ({', '.join(PRESET_NAMES)}) or a .toml file"
    )


def diff_rules(a: Rules, b: Rules) -> list[tuple[str, Any, Any]]:
    """The options that differ: ``(section.key, value in a, value in b)``, in option order."""
    fa, fb = a.flat(), b.flat()
    return [(k, fa[k], fb[k]) for k in fa if fa[k] != fb[k]]

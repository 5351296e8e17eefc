"""Yaku evaluation and settlement, with an explanation of every point.

INTERFACE SKELETON (to be implemented): the engine depends on exactly these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from koikoi.cards import format_cards
from koikoi.rules import Rules

__all__ = [
    "YAKU_NAMES",
    "Multiplier",
    "Scorer",
    "Settlement",
    "YakuResult",
    "YakuScore",
    "score_cards",
]

# snake_case key -> (English display name, Japanese name)
YAKU_NAMES: dict[str, tuple[str, str]] = {
    "goko": ("Five Brights", "五光 gokō"),
    "shiko": ("Four Brights", "四光 shikō"),
    "ame_shiko": ("Rainy Four Brights", "雨四光 ame-shikō"),
    "sanko": ("Three Brights", "三光 sankō"),
    "inoshikacho": ("Boar, Deer, Butterflies", "猪鹿蝶 inoshikachō"),
    "tane": ("Animals", "タネ tane"),
    "akatan": ("Red poetry ribbons", "赤短 akatan"),
    "aotan": ("Blue ribbons", "青短 aotan"),
    "akatan_aotan": ("Red and blue ribbons", "赤短・青短の重複 chōfuku"),
    "tanzaku": ("Ribbons", "短冊 tanzaku"),
    "kasu": ("Plains", "カス kasu"),
    "hanami": ("Flower viewing", "花見酒 hanami-zake"),
    "tsukimi": ("Moon viewing", "月見酒 tsukimi-zake"),
    "tsukifuda": ("Cards of the month", "月札 tsukifuda"),
    "teshi": ("Four of a month", "手四 teshi"),
    "kuttsuki": ("Four pairs", "くっつき kuttsuki"),
}


@dataclass(frozen=True, slots=True)
class YakuScore:
    """One scoring yaku: its key, its points (bonus cards included) and its cards (a mask)."""

    name: str
    points: int
    cards: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "points": self.points, "cards": format_cards(self.cards).split()}


@dataclass(frozen=True, slots=True)
class YakuResult:
    """The yaku a capture pile scores under a rule set; ``total`` is their sum."""

    yaku: tuple[YakuScore, ...]
    total: int


@dataclass(frozen=True, slots=True)
class Multiplier:
    """One step of settlement applied to the running figure: ``x factor`` then ``+ add``."""

    name: str
    factor: int = 1
    add: int = 0


@dataclass(frozen=True, slots=True)
class Settlement:
    """How a round was settled."""

    winner: int | None
    reason: str
    yaku: tuple[YakuScore, ...]
    base: int
    multipliers: tuple[Multiplier, ...]
    points: int
    deltas: tuple[int, int]


class Scorer:
    """Yaku evaluation bound to one rule set, memoized for the engine's hot path."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules

    def total(self, captured: int, month: int, koikoi_called: bool) -> int:
        raise NotImplementedError

    def evaluate(self, captured: int, month: int, koikoi_called: bool) -> YakuResult:
        raise NotImplementedError


def score_cards(
    rules: Rules,
    captured: int,
    *,
    round_number: int = 1,
    koikoi_self: int = 0,
    opponent_koikoi: bool = False,
) -> Settlement:
    raise NotImplementedError

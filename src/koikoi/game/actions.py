"""Actions: small frozen values with a fixed integer encoding.

There are four decisions in Koi-Koi and five action types:

* :class:`Play` — play a hand card; ``target`` is the field card captured when
  the player has a choice (two matching field cards, or the wild Lightning),
  else ``None``.
* :class:`Discard` — lay a matching hand card on the field without capturing
  (only under ``play.hand_card = "any_or_discard"``).
* :class:`TakeDrawn` — choose which field card the drawn card captures.
* :class:`KoiKoi` / :class:`Stop` — the decision after the score went up.

The integer encoding is fixed (``NUM_ACTIONS`` ids):

=================  ===========================
``Play(c)``        ``c``                 (0..47)
``Play(c, t)``     ``48 + 48 * c + t``   (48..2351)
``Discard(c)``     ``2352 + c``          (2352..2399)
``TakeDrawn(t)``   ``2400 + t``          (2400..2447)
``KoiKoi()``       ``2448``
``Stop()``         ``2449``
=================  ===========================

>>> parse_action("play 3L").id
8
>>> action_from_id(2449)
Stop()
>>> parse_action("play 11p 1L")
Play(card=Card.WILLOW_LIGHTNING, target=Card.PINE_CRANE)
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from koikoi.game.cards import CODES, KIND_MASKS, Card, Kind, parse_card
from koikoi.game.errors import InvalidInputError

__all__ = [
    "DISCARD_BASE",
    "KOIKOI_ID",
    "NUM_ACTIONS",
    "PLAY_TARGET_BASE",
    "STOP_ID",
    "TAKE_BASE",
    "Action",
    "Discard",
    "KoiKoi",
    "Phase",
    "Play",
    "Stop",
    "TakeDrawn",
    "action_from_id",
    "describe_action_id",
    "interchangeable",
    "parse_action",
]

PLAY_TARGET_BASE: Final = 48
DISCARD_BASE: Final = 2352
TAKE_BASE: Final = 2400
KOIKOI_ID: Final = 2448
STOP_ID: Final = 2449
NUM_ACTIONS: Final = 2450


class Phase(enum.IntEnum):
    """What a round (or match) is waiting for: which kind of action is legal now."""

    PLAY = 0
    """The player to act plays a hand card."""
    TAKE = 1
    """The drawn card matches two field cards: the player chooses one."""
    DECIDE = 2
    """The player's score went up: koi-koi or stop."""
    OVER = 3
    """The round (or match) is over."""


@dataclass(frozen=True, slots=True)
class Play:
    """Play ``card`` from the hand; ``target`` is the chosen field card, if there is a choice."""

    card: Card
    target: Card | None = None

    @property
    def id(self) -> int:
        if self.target is None:
            return int(self.card)
        return PLAY_TARGET_BASE + 48 * int(self.card) + int(self.target)

    def __str__(self) -> str:
        if self.target is None:
            return f"play {self.card.code}"
        return f"play {self.card.code} {self.target.code}"


@dataclass(frozen=True, slots=True)
class Discard:
    """Lay a matching hand card on the field without capturing."""

    card: Card

    @property
    def id(self) -> int:
        return DISCARD_BASE + int(self.card)

    def __str__(self) -> str:
        return f"discard {self.card.code}"


@dataclass(frozen=True, slots=True)
class TakeDrawn:
    """The drawn card captures ``target`` (a choice between two field cards)."""

    target: Card

    @property
    def id(self) -> int:
        return TAKE_BASE + int(self.target)

    def __str__(self) -> str:
        return f"take {self.target.code}"


@dataclass(frozen=True, slots=True)
class KoiKoi:
    """Call koi-koi: play on for more."""

    @property
    def id(self) -> int:
        return KOIKOI_ID

    def __str__(self) -> str:
        return "koikoi"


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop (shōbu): end the round and score it."""

    @property
    def id(self) -> int:
        return STOP_ID

    def __str__(self) -> str:
        return "stop"


Action = Play | Discard | TakeDrawn | KoiKoi | Stop

_CARDS: Final = tuple(Card)


def action_from_id(action_id: int) -> Action:
    """The action with integer id ``action_id``.

    Raises:
        InvalidInputError: if the id is outside ``0..NUM_ACTIONS-1``.
    """
    if isinstance(action_id, bool) or not isinstance(action_id, int):
        raise InvalidInputError(f"action id must be an integer, not {action_id!r}")
    if 0 <= action_id < PLAY_TARGET_BASE:
        return Play(_CARDS[action_id])
    if PLAY_TARGET_BASE <= action_id < DISCARD_BASE:
        c, t = divmod(action_id - PLAY_TARGET_BASE, 48)
        return Play(_CARDS[c], _CARDS[t])
    if DISCARD_BASE <= action_id < TAKE_BASE:
        return Discard(_CARDS[action_id - DISCARD_BASE])
    if TAKE_BASE <= action_id < KOIKOI_ID:
        return TakeDrawn(_CARDS[action_id - TAKE_BASE])
    if action_id == KOIKOI_ID:
        return KoiKoi()
    if action_id == STOP_ID:
        return Stop()
    raise InvalidInputError(f"action id {action_id} out of range: allowed 0 to {NUM_ACTIONS - 1}")


def describe_action_id(action_id: int) -> str:
    """Text form of an action id (``"play 3L"``), as :func:`parse_action` reads it."""
    if 0 <= action_id < PLAY_TARGET_BASE:
        return f"play {CODES[action_id]}"
    return str(action_from_id(action_id))


def parse_action(text: str) -> Action:
    """Parse ``play CARD [TARGET]``, ``discard CARD``, ``take TARGET``, ``koikoi`` or ``stop``.

    Raises:
        InvalidInputError: naming what was wrong and what is accepted.
    """
    words = text.strip().lower().replace("-", "").split()
    usage = "expected 'play CARD [TARGET]', 'discard CARD', 'take CARD', 'koikoi' or 'stop'"
    if not words:
        raise InvalidInputError(f"empty action: {usage}")
    verb, args = words[0], words[1:]
    if verb in ("koikoi", "koi") and not args:
        return KoiKoi()
    if verb in ("stop", "shobu") and not args:
        return Stop()
    if verb == "play" and len(args) in (1, 2):
        card = parse_card(args[0])
        return Play(card, parse_card(args[1]) if len(args) == 2 else None)
    if verb == "discard" and len(args) == 1:
        return Discard(parse_card(args[0]))
    if verb == "take" and len(args) == 1:
        return TakeDrawn(parse_card(args[0]))
    raise InvalidInputError(f"cannot read action {text!r}: {usage}")


def interchangeable(action_ids: Sequence[int]) -> bool:
    """Whether a choice between captures is no choice: two or more captures of Plains
    of one month (no rule tells such Plains apart), e.g. ``10P1`` or ``10P2``.

    >>> interchangeable([TAKE_BASE + 38, TAKE_BASE + 39])  # 10P1 or 10P2
    True
    >>> interchangeable([TAKE_BASE + 36, TAKE_BASE + 38])  # 10A or 10P1
    False
    """
    targets = []
    for action_id in action_ids:
        if PLAY_TARGET_BASE <= action_id < DISCARD_BASE:
            targets.append((action_id - PLAY_TARGET_BASE) % 48)
        elif action_id >= TAKE_BASE:
            targets.append(action_id - TAKE_BASE)
        else:
            return False  # a plain play or laying the card: a real choice
    plains = KIND_MASKS[Kind.PLAIN]
    return (
        len(targets) >= 2
        and len({t // 4 for t in targets}) == 1
        and all(plains >> t & 1 for t in targets)
    )

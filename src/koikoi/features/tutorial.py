"""The guided first round ("Learn to play"): a fixed deal, a plain opponent, and
what to explain at each moment.

The tutorial is an ordinary one-round match under the ``nintendo`` rules
(:func:`tutorial_rules`), dealt from :data:`TUTORIAL_SEED` and played against
the ``greedy`` agent (:data:`TUTORIAL_OPPONENT`); the newcomer is player
:data:`TUTORIAL_SEAT`, who deals and plays first. The deal was chosen (by
a one-off search over seeds) so that a player who follows the coach's
picks meets, in three turns, a card with one match, a card with two, a turn
where nothing matches, a draw that lays its card and one that captures, the
four kinds of cards, a yaku (the red poetry ribbons) and the koi-koi decision,
and then the settlement. The opponent's choices on
that path have no ties, so the round is the same whatever the host seeds the
opponent with. The deal is public in this source: the tutorial is for
learning, never a real game.

What the coach says is computed from the player's own
:class:`~koikoi.game.views.PlayerView` only (its public history and the player's
hand), so it can never tell the opponent's hand or the stock:

* :func:`lessons` — the explanations of what has happened so far, in order,
  each at most once (the first capture, the first draw, each kind of card the
  first time the player takes one, a yaku, a koi-koi, the settlement, ...).
  A host shows the ones it has not shown yet.
* :func:`prompt` — what to do now, when it is the player's move, with the
  coach's pick (:func:`suggestion`) highlighted.

Each :class:`Tip` carries its English text (the message catalog's key), its
placeholders, the cards it points at and the parts of the table it is about.
:meth:`Tip.text` renders it in the language in use; the web page gets
:meth:`Tip.to_dict` and translates the same message with the same catalog.

>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> match = new_tutorial_match()
>>> [tip.key for tip in lessons(view_of(match, TUTORIAL_SEAT))]
['welcome', 'months', 'goal']
>>> tip = prompt(view_of(match, TUTORIAL_SEAT))
>>> tip.key, len(tip.cards)
('play_match', 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from koikoi.game.actions import DISCARD_BASE, PLAY_TARGET_BASE, STOP_ID, TAKE_BASE
from koikoi.game.cards import CODES, KINDS, MONTH_MASKS, Kind, card_list, parse_card
from koikoi.game.engine import Event, Match, Phase, shared_scorer
from koikoi.game.rules import Rules, get_rules
from koikoi.game.scoring import YAKU_NAMES
from koikoi.game.views import PlayerView
from koikoi.i18n import language, translate

__all__ = [
    "AREAS",
    "PLACES",
    "TUTORIAL_OPPONENT",
    "TUTORIAL_SEAT",
    "TUTORIAL_SEED",
    "Tip",
    "coach",
    "lessons",
    "new_tutorial_match",
    "prompt",
    "suggestion",
    "tutorial_rules",
]

TUTORIAL_SEED: Final = 1535
"""The seed of the tutorial's match (its first-dealer draw and its deal)."""
TUTORIAL_OPPONENT: Final = "greedy"
"""The agent spec of the tutorial's opponent: takes the biggest capture, stops at once."""
TUTORIAL_SEAT: Final = 0
"""The newcomer's seat: player 0, the dealer, who plays first."""

AREAS: Final = ("hand", "field", "stock", "pile", "opponent", "score")
"""The parts of the table a tip may point at besides cards: the player's hand, the
field, the stock, the player's capture pile, the opponent's side, the scores."""
PLACES: Final = ("table", "decide", "settlement", "finish")
"""Where a tip belongs: beside the table, with the koi-koi decision, with the
round's settlement, or at the end of the tutorial."""

_VALUE: Final = {Kind.BRIGHT: 20, Kind.ANIMAL: 10, Kind.RIBBON: 5, Kind.PLAIN: 1}


def t(message: str, /) -> str:
    """Marks ``message`` as a message catalog key and returns it untranslated.

    A tip's text is translated when it is shown, in the language of whoever reads
    it (:meth:`Tip.text` here, ``KK.t`` on the web page), so the tips keep the
    English key. Named ``t`` so that the catalog's checks find these messages.
    """
    return message


@dataclass(frozen=True, slots=True)
class Tip:
    """One thing the coach says.

    Attributes:
        key: what it is about, stable (``"welcome"``, ``"play_match"``, ...);
            a lesson's key appears once per tutorial.
        message: the English text, the message catalog's key.
        params: the text's placeholders. ``yaku`` holds a yaku key (each interface
            shows the yaku's name in its language); the others are numbers.
        cards: the card codes it points at (highlighted where they are).
        areas: parts of the table it points at (see :data:`AREAS`).
        wait: an explanation the player reads and dismisses (True), or a prompt
            that the player's move answers (False).
        place: where it belongs (see :data:`PLACES`).
    """

    key: str
    message: str
    params: Mapping[str, int | str] = field(default_factory=dict)
    cards: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    wait: bool = True
    place: str = "table"

    def text(self, lang: str | None = None) -> str:
        """The tip in ``lang`` (default: the language in use), placeholders filled."""
        lang = language() if lang is None else lang
        params: dict[str, object] = dict(self.params)
        if "yaku" in params:
            names = YAKU_NAMES.get(str(params["yaku"]), (str(params["yaku"]),) * 2)
            params["yaku"] = names[1] if lang == "ja" else names[0]
        return translate(self.message, lang, **params)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for the web page: the English message and its placeholders."""
        return {
            "key": self.key,
            "message": self.message,
            "params": dict(self.params),
            "cards": list(self.cards),
            "areas": list(self.areas),
            "wait": self.wait,
            "place": self.place,
        }


def tutorial_rules() -> Rules:
    """The tutorial's rules: ``nintendo``, one round."""
    return get_rules("nintendo").replace(game__rounds=1)


def new_tutorial_match(*, events: bool = True) -> Match:
    """A fresh tutorial match (the same deal every time)."""
    return Match(tutorial_rules(), seed=TUTORIAL_SEED, events=events)


# ---------------------------------------------------------------- the coach's pick


def _codes(mask: int) -> tuple[str, ...]:
    return tuple(CODES[c] for c in card_list(mask))


def _month(card: int) -> int:
    return MONTH_MASKS[card // 4]


def _captures(view: PlayerView, action_id: int) -> int:
    """The cards a play or take would capture from the field (0: it lays a card)."""
    if action_id >= TAKE_BASE:
        return 1 << (action_id - TAKE_BASE)
    if action_id >= DISCARD_BASE:
        return 0
    if action_id >= PLAY_TARGET_BASE:
        return 1 << ((action_id - PLAY_TARGET_BASE) % 48)
    return view.field & _month(action_id)


def _played_card(action_id: int) -> int:
    if action_id >= DISCARD_BASE:
        return action_id - DISCARD_BASE
    if action_id >= PLAY_TARGET_BASE:
        return (action_id - PLAY_TARGET_BASE) // 48
    return action_id


def _value(mask: int) -> int:
    return sum(_VALUE[KINDS[c]] for c in card_list(mask))


def suggestion(view: PlayerView) -> int | None:
    """The coach's pick among the player's legal actions, or None when it is not
    their move: the play that captures the most valuable cards (by kind: Bright 20,
    Animal 10, Ribbon 5, Plain 1); with nothing to capture, laying the least
    valuable card; stop at a koi-koi decision. Ties go to the lowest action id.

    >>> from koikoi.game.views import view_of
    >>> match = new_tutorial_match()
    >>> suggestion(view_of(match, TUTORIAL_SEAT)) in match.legal_ids()
    True
    """
    ids = view.legal_ids
    if not ids:
        return None
    if STOP_ID in ids:
        return STOP_ID

    def worth(action_id: int) -> int:
        got = _captures(view, action_id)
        if action_id >= TAKE_BASE:
            return _value(got)
        own = _VALUE[KINDS[_played_card(action_id)]]
        return own + _value(got) if got else -own

    return max(sorted(ids), key=worth)


def _field_of(event: Event) -> int:
    mask = 0
    for code in event.data.get("field", ()):
        mask |= 1 << int(parse_card(str(code)))
    return mask


# ------------------------------------------------------------------------ lessons

_KIND_TIPS: Final[dict[Kind, tuple[str, str]]] = {
    Kind.BRIGHT: (
        "kind_bright",
        t("That is a Bright (光), one of the five most valuable cards. Three Brights make a yaku."),
    ),
    Kind.ANIMAL: (
        "kind_animal",
        t(
            "That is an Animal (タネ). Five Animals make a yaku; the Boar, the Deer "
            "and the Butterflies make one on their own."
        ),
    ),
    Kind.RIBBON: (
        "kind_ribbon",
        t(
            "That is a Ribbon (短冊). Five Ribbons make a yaku; the three red poetry "
            "ribbons make one on their own, and so do the three blue ones."
        ),
    ),
    Kind.PLAIN: (
        "kind_plain",
        t("That is a Plain (カス), the most common kind. Ten Plains make a yaku."),
    ),
}


def lessons(view: PlayerView) -> list[Tip]:
    """The explanations of everything that has happened so far, in order.

    Each lesson appears once (the first time its moment comes); a host shows the
    ones it has not shown yet. Computed from ``view.history`` (the events this
    player may see) and public facts only.
    """
    me = view.player
    if me is None:
        return []
    scorer = shared_scorer(view.rules)
    out: list[Tip] = []
    seen: set[str] = set()

    def add(tip: Tip) -> None:
        if tip.key not in seen:
            seen.add(tip.key)
            out.append(tip)

    piles = [0, 0]  # the capture piles as they grew, event by event
    month = view.month
    captured_any = False
    draws = 0
    for event in view.history:
        kind = event.kind
        p = event.player
        if kind == "round_start":
            piles = [0, 0]
            month = int(event.data.get("month", month))
            add(
                Tip(
                    "welcome",
                    t(
                        "Welcome to Koi-Koi! This guided round shows you how to play, one "
                        "step at a time. Your opponent's cards stay hidden, as in a real game."
                    ),
                )
            )
            add(
                Tip(
                    "months",
                    t(
                        "There are twelve months, each with its own flower, and four cards "
                        "of each month. A card captures a card of the same month."
                    ),
                    areas=("field",),
                )
            )
            add(
                Tip(
                    "goal",
                    t(
                        "Capture cards to make yaku, the scoring sets. Whoever makes a "
                        "yaku may end the round and score it."
                    ),
                    areas=("hand",),
                )
            )
            continue
        if kind in ("play", "draw", "take") and event.card is not None and p is not None:
            card = event.card
            got = event.cards
            piles[p] |= got
            if p != me:
                if kind in ("draw", "take") and "choice" not in event.data:
                    add(
                        Tip(
                            "opponent_turn",
                            t(
                                "Your opponent took a turn the same way: a card from their "
                                "hand, then the top card of the stock."
                            ),
                            areas=("opponent",),
                        )
                    )
                continue
            if got and not captured_any:
                captured_any = True
                add(
                    Tip(
                        "pile",
                        t("Captured! The cards go to your capture pile, sorted by kind."),
                        cards=_codes(got),
                        areas=("pile",),
                    )
                )
            for kind_of, (key, message) in _KIND_TIPS.items():
                mine = [c for c in card_list(got) if KINDS[c] is kind_of]
                if mine:
                    add(Tip(key, message, cards=tuple(CODES[c] for c in mine), areas=("pile",)))
            if kind == "draw" and "choice" not in event.data:
                draws += 1
                if draws == 1 and got:
                    add(
                        Tip(
                            "draw",
                            t(
                                "After your card, you turn over the top card of the stock. It "
                                "matched a card on the field, so you captured that pair too."
                            ),
                            cards=(CODES[card],),
                            areas=("stock",),
                        )
                    )
                elif draws == 1:
                    add(
                        Tip(
                            "draw",
                            t(
                                "After your card, you turn over the top card of the stock. It "
                                "matched nothing on the field, so it stays there."
                            ),
                            cards=(CODES[card],),
                            areas=("stock",),
                        )
                    )
                elif got:
                    add(
                        Tip(
                            "draw_match",
                            t("This time the card from the stock matched: another capture."),
                            cards=(CODES[card],),
                            areas=("stock",),
                        )
                    )
            continue
        if kind == "yaku" and p is not None:
            if p == me:
                result = scorer.evaluate(piles[p], month, view.koikoi_calls[p] > 0)
                best = result.yaku[0] if result.yaku else None
                if "yaku" in seen:
                    add(
                        Tip(
                            "yaku_up",
                            t("Your yaku grew: they are now worth {points} points."),
                            {"points": result.total},
                            cards=_codes(best.cards) if best else (),
                            areas=("pile", "score"),
                        )
                    )
                    continue
                add(
                    Tip(
                        "yaku",
                        t("You made a yaku: {yaku}, worth {points} points!"),
                        {"yaku": best.name if best else "", "points": result.total},
                        cards=_codes(best.cards) if best else (),
                        areas=("pile", "score"),
                    )
                )
            else:
                add(
                    Tip(
                        "opponent_yaku",
                        t(
                            "Your opponent made a yaku. They may stop now and score it, or "
                            "call koi-koi and play on."
                        ),
                        areas=("opponent",),
                    )
                )
            continue
        if kind == "koikoi" and p is not None:
            if p == me:
                add(
                    Tip(
                        "koikoi_called",
                        t(
                            "Koi-koi! You play on: each new yaku raises your score. But if "
                            "your opponent makes one first, they score double and you get "
                            "nothing."
                        ),
                        areas=("score",),
                    )
                )
            else:
                add(
                    Tip(
                        "opponent_koikoi",
                        t(
                            "Your opponent called koi-koi and plays on. If you make a yaku "
                            "now and stop, your points are doubled."
                        ),
                        areas=("opponent",),
                    )
                )
            continue
        if kind == "round_over":
            winner = event.data.get("winner")
            points = int(event.data.get("points", 0))
            if winner == me:
                tip = Tip(
                    "settlement",
                    t(
                        "Round over: you score {points} points, the total of your yaku. "
                        "In the settlement, 7 points or more count double."
                    ),
                    {"points": points},
                    areas=("score",),
                    place="settlement",
                )
            elif winner is None:
                tip = Tip(
                    "settlement",
                    t("Round over: the hands ran out without a winner, so nobody scores."),
                    areas=("score",),
                    place="settlement",
                )
            else:
                tip = Tip(
                    "settlement",
                    t(
                        "Round over: your opponent scores {points} points. Yaku are a "
                        "race: whoever stops first with a yaku takes the round."
                    ),
                    {"points": points},
                    areas=("score",),
                    place="settlement",
                )
            add(tip)
            continue
        if kind == "match_over":
            add(
                Tip(
                    "finish",
                    t(
                        "That was a whole round! Match by month, capture, make yaku, then "
                        "koi-koi or stop. A real game is several rounds like this one."
                    ),
                    place="finish",
                )
            )
    return out


# ------------------------------------------------------------------------ prompts


def _your_turn(cards: tuple[str, ...]) -> Tip:
    """The short prompt of a kind of turn already explained: play the highlighted card."""
    return Tip(
        "your_turn",
        t("Your turn: the highlighted card is a good play."),
        cards=cards,
        areas=("hand",),
        wait=False,
    )


def _earlier_turns(view: PlayerView) -> list[int]:
    """How many field cards matched each earlier hand card of the player (0, 1, 2, 3)."""
    me = view.player
    field_ = 0
    out: list[int] = []
    for event in view.history:
        if event.kind == "round_start":
            field_ = _field_of(event)
            out = []
            continue
        if event.kind not in ("play", "draw", "take") or event.card is None:
            continue
        card, got = event.card, event.cards
        if event.kind == "play" and event.player == me:
            out.append((field_ & _month(card)).bit_count())
        if event.kind == "take" or (event.kind == "draw" and "choice" in event.data):
            field_ |= 1 << card
        if got:
            field_ &= ~got
        elif "choice" not in event.data:
            field_ |= 1 << card
    return out


def prompt(view: PlayerView) -> Tip | None:
    """What the player should do now, with the coach's pick highlighted; None when it
    is not the player's move.

    The first time each kind of turn comes (a card with one match, with two, nothing
    to match), the prompt explains it; later it just points at the pick.
    """
    pick = suggestion(view)
    if pick is None or view.player is None:
        return None
    if view.phase is Phase.DECIDE:
        scorer = shared_scorer(view.rules)
        me = view.player
        settled = scorer.settle_stop(
            me, view.piles[me], view.month, view.koikoi_calls, view.round_scores, view.called_scores
        )
        if view.koikoi_calls[me]:
            return Tip(
                "decide_again",
                t("Koi-koi again, or stop and score {points} points?"),
                {"points": settled.points},
                areas=("score",),
                wait=False,
                place="decide",
            )
        return Tip(
            "decide",
            t(
                "Koi-koi or stop? Stop ends the round now and you score {points} points. "
                "Koi-koi plays on for more, but if your opponent makes a yaku first, they "
                "score double. For your first round, stop."
            ),
            {"points": settled.points},
            areas=("score",),
            wait=False,
            place="decide",
        )
    if view.phase is Phase.TAKE:
        targets = [CODES[i - TAKE_BASE] for i in view.legal_ids if i >= TAKE_BASE]
        best = CODES[pick - TAKE_BASE]
        return Tip(
            "take_pick",
            t(
                "The card you drew matches two cards on the field: choose the one it "
                "captures. The highlighted one is worth more."
            ),
            cards=(best, *(c for c in targets if c != best)),
            areas=("stock",),
            wait=False,
        )
    card = _played_card(pick)
    matches = view.field & _month(card)
    earlier = _earlier_turns(view)
    if not matches:
        if any(_captures(view, i) for i in view.legal_ids):
            # Only when a rule forbids it could the pick lay a card while one matches.
            return _your_turn((CODES[card],))
        if 0 in earlier:
            return Tip(
                "your_turn_lay",
                t("Nothing matches: lay the highlighted card on the field."),
                cards=(CODES[card],),
                areas=("hand",),
                wait=False,
            )
        return Tip(
            "play_lay",
            t(
                "None of your cards matches the field, so lay one there. The highlighted "
                "card is the least valuable; a card of its month can capture it later."
            ),
            cards=(CODES[card],),
            areas=("hand", "field"),
            wait=False,
        )
    n = matches.bit_count()
    shown = (CODES[card], *_codes(matches))
    if n == 2:
        target = CODES[(pick - PLAY_TARGET_BASE) % 48] if pick >= PLAY_TARGET_BASE else None
        if 2 in earlier:
            return _your_turn(shown)
        ordered = (
            CODES[card],
            *((target,) if target else ()),
            *(c for c in _codes(matches) if c != target),
        )
        return Tip(
            "play_pick",
            t(
                "This card matches two cards on the field: play it, then pick the one it "
                "captures. Take the more valuable one."
            ),
            cards=ordered,
            areas=("hand", "field"),
            wait=False,
        )
    if n == 3:
        return Tip(
            "play_all",
            t("This card matches all three cards of its month on the field: it captures all four."),
            cards=shown,
            areas=("hand", "field"),
            wait=False,
        )
    if 1 in earlier:
        return _your_turn(shown)
    return Tip(
        "play_match",
        t(
            "This card from your hand matches one card on the field: the same flower, the "
            "same month. Play it to capture both."
        ),
        cards=shown,
        areas=("hand", "field"),
        wait=False,
    )


def coach(view: PlayerView) -> list[Tip]:
    """Every lesson so far, then the prompt for now (if it is the player's move)."""
    out = lessons(view)
    now = prompt(view)
    if now is not None:
        out.append(now)
    return out

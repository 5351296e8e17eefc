"""Replays in words: what each step of a game record did, its settlements, its mistakes.

The terminal replay (``koikoi replay --tui``) and the web replay page both tell a
step with :class:`Narrator`, so the words exist once, in English and (through the
message catalog) Japanese. A move step becomes one sentence ("Aiko plays 3L Cherry
Curtain and captures 3P1; Aiko draws 8A Susuki grass Geese, which matches
nothing, and lays it on the field."), followed by what came of it (yaku, koi-koi,
stop); a round-ending step adds the settlement, explained as in the live game
(:meth:`Narrator.settlement`, which the live terminal game uses too).

Mistakes come from an analysis (:func:`koikoi.lab.analysis.analyze_record`, as
``koikoi analyze --json`` writes it, or carried in a record's ``meta["analysis"]``
by ``koikoi analyze --annotate``): :func:`mistakes_from_analysis` checks that the
analysis belongs to the record and keeps the moves that lost at least
:data:`MISTAKE_THRESHOLD` expected points against the best move.

A replay is reviewed after the game, so the words may name any card.

>>> from koikoi.game.engine import Event
>>> Narrator(("Aiko", "Ben")).event(Event("koikoi", 0, None, 0, {"calls": 1}))
'Aiko calls koi-koi and plays on.'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from koikoi.game.actions import Discard, KoiKoi, Play, Stop, TakeDrawn, parse_action
from koikoi.game.cards import MONTH_NAMES, MONTH_NAMES_JA, Card, card_list
from koikoi.game.engine import Event
from koikoi.game.errors import InvalidInputError, KoiKoiError
from koikoi.game.record import GameRecord, ReplayStep
from koikoi.game.scoring import MULTIPLIER_NAMES, YAKU_NAMES, Multiplier, Settlement, YakuScore
from koikoi.i18n import N_, catalog, language

__all__ = [
    "MISTAKE_THRESHOLD",
    "SETTLED_REASONS",
    "Mistake",
    "Narrator",
    "mistakes_from_analysis",
    "record_analysis",
    "settled_in",
]

MISTAKE_THRESHOLD: Final = 1.0
"""A move that lost at least this many expected round points against the best move
is marked as a mistake (the default of ``koikoi analyze --mistake``)."""

_MAX_DECISIONS: Final = 20_000

SETTLED_REASONS: Final[dict[str, str]] = {
    "stop": N_("stop"),
    "exhausted": N_("no cards left"),
    "exhausted_highest": N_("higher yaku"),
    "exhausted_last_yaku": N_("last yaku"),
    "dealer_point": N_("dealer's point"),
    "oya_ken": N_("dealer's point"),
    "instant": N_("instant hand"),
}
"""How a round was settled, in words (the reasons of :class:`Settlement`)."""


@dataclass(frozen=True, slots=True)
class Mistake:
    """A move of the record that an analysis found clearly worse than the best one.

    Attributes:
        action: the action's number in the record (1-based).
        player: who played it.
        loss: expected round points lost against ``best``.
        played: the move played, as action text (``"play 3L"``).
        best: the best move, as action text.
    """

    action: int
    player: int
    loss: float
    played: str
    best: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"action", "player", "loss", "played", "best"}``."""
        return {
            "action": self.action,
            "player": self.player,
            "loss": round(self.loss, 2),
            "played": self.played,
            "best": self.best,
        }


_MOVE_TEXTS: Final[Mapping[tuple[str, str], tuple[str, str]]] = {
    ("play", "discard"): (
        N_("You lay {card} on the field without capturing"),
        N_("{who} lays {card} on the field without capturing"),
    ),
    ("play", "capture"): (
        N_("You play {card} and capture {cards}"),
        N_("{who} plays {card} and captures {cards}"),
    ),
    ("play", "nothing"): (
        N_("You play {card}, which matches nothing, and lay it on the field"),
        N_("{who} plays {card}, which matches nothing, and lays it on the field"),
    ),
    ("draw", "choice"): (
        N_("You draw {card}, which matches {cards}: a capture to choose"),
        N_("{who} draws {card}, which matches {cards}: a capture to choose"),
    ),
    ("draw", "capture"): (
        N_("You draw {card} and capture {cards}"),
        N_("{who} draws {card} and captures {cards}"),
    ),
    ("draw", "nothing"): (
        N_("You draw {card}, which matches nothing, and lay it on the field"),
        N_("{who} draws {card}, which matches nothing, and lays it on the field"),
    ),
}
"""The sentences of a card played from the hand or drawn from the stock, by (play or
draw, case): the player told in the second person's, then another player's."""

_COUNTED_TEXTS: Final[Mapping[str, tuple[str, str, str, str]]] = {
    "yaku": (
        N_("You now hold yaku worth {n} point."),
        "You now hold yaku worth {n} points.",
        N_("{who} now holds yaku worth {n} point."),
        "{who} now holds yaku worth {n} points.",
    ),
    "instant": (
        N_("You hold an instant hand, {yaku}: {n} point."),
        "You hold an instant hand, {yaku}: {n} points.",
        N_("{who} holds an instant hand, {yaku}: {n} point."),
        "{who} holds an instant hand, {yaku}: {n} points.",
    ),
}
"""The counted sentences of yaku held, by event kind: the singular and plural of the
player told in the second person, then those of another player."""


class Narrator:
    """Tells events, steps, settlements and mistakes in one language.

    Args:
        names: the two players' names (index 0 and 1).
        lang: ``"en"`` or ``"ja"``; ``None``: the language in use
            (:func:`koikoi.i18n.language`). The web server passes the page's
            language, so requests in different languages do not interfere.
        you: the player told in the second person ("You play ..."); by default
            the one named ``"You"`` (the terminal game's records), if any.
    """

    def __init__(
        self, names: Sequence[str], lang: str | None = None, *, you: int | None = -1
    ) -> None:
        if len(names) != 2:
            raise InvalidInputError(f"a replay has two players, not {len(names)}")
        self.names = (str(names[0]), str(names[1]))
        self.lang = language() if lang is None else lang
        self._catalog = catalog(self.lang)
        if you == -1:
            you = self.names.index("You") if self.names.count("You") == 1 else None
        self.you = you

    # ------------------------------------------------------------ language

    def t(self, message: str, /, **params: object) -> str:
        """``message`` in this narrator's language, placeholders filled."""
        text = self._catalog.get(message, message)
        return text.format(**params) if params else text

    def tn(self, singular: str, plural: str, n: int, /, **params: object) -> str:
        """The form of a counted message for ``n`` (``{n}`` is the count)."""
        text = self._catalog.get(singular) or (singular if n == 1 else plural)
        return text.format(n=n, **params)

    def who(self, player: int | None) -> str:
        """A player's name."""
        return self.names[player] if player in (0, 1) and player is not None else "?"

    def card(self, card: int) -> str:
        """A card named for a sentence: ``"3L Cherry Curtain"`` (``"3L 桜"`` in Japanese).

        >>> Narrator(("A", "B"), "en").card(8), Narrator(("A", "B"), "en").card(10)
        ('3L Cherry Curtain', '3P1 Cherry plain')
        """
        c = Card(card)
        if self.lang == "ja":
            return f"{c.code} {MONTH_NAMES_JA[c.month - 1].split()[0]}"
        what = c.name_en.split(" - ", 1)[1]
        if what.startswith("plain ("):
            what = "plain"
        return f"{c.code} {MONTH_NAMES[c.month - 1]} {what}"

    def cards(self, mask: int) -> str:
        """Card codes of a set, joined: ``"3P1 3R"``."""
        return " ".join(Card(c).code for c in card_list(mask))

    def points(self, n: int) -> str:
        """``"1 point"``, ``"6 points"``."""
        return self.tn("{n} point", "{n} points", n)

    # -------------------------------------------------------------- events

    def _you(self, player: int | None) -> bool:
        return self.you is not None and player == self.you

    def _say(self, you: bool, texts: tuple[str, str], /, **params: object) -> str:
        """The first of ``texts`` for the player told in the second person ("You ..."),
        else the second ("{who} ..."), in this narrator's language."""
        return self.t(texts[0] if you else texts[1], **params)

    def _say_n(
        self, you: bool, texts: tuple[str, str, str, str], n: int, /, **params: object
    ) -> str:
        """:meth:`_say` of a counted message: ``texts`` the singular and plural of the
        player told in the second person, then those of another player."""
        singular, plural = texts[:2] if you else texts[2:]
        return self.tn(singular, plural, n, **params)

    def _move(self, event: Event) -> str:
        """A card played from the hand (a ``"play"`` event) or drawn from the stock
        (``"draw"``), told by its case of :data:`_MOVE_TEXTS`: laid on the field
        without capturing, a capture to choose, a capture, or no match."""
        card = event.card if event.card is not None else 0
        got = event.cards & ~(1 << card)
        params: dict[str, object] = {"who": self.who(event.player), "card": self.card(card)}
        if event.kind == "play" and event.data.get("discard"):
            case = "discard"
        elif event.kind == "draw" and "choice" in event.data:
            case = "choice"
            params["cards"] = " ".join(str(c) for c in event.data["choice"])
        elif got:
            case = "capture"
            params["cards"] = self.cards(got)
        else:
            case = "nothing"
        return self._say(self._you(event.player), _MOVE_TEXTS[event.kind, case], **params)

    def _round_start(self, data: Mapping[str, Any]) -> str:
        month = int(data.get("month", 1))
        name = MONTH_NAMES_JA[month - 1].split()[0] if self.lang == "ja" else MONTH_NAMES[month - 1]
        where = {"round": data.get("round", "?"), "month": month, "name": name}
        dealer, leader = data.get("dealer"), data.get("leader")
        if self._you(dealer):
            line = self.t("Round {round}, month {month} ({name}): you deal.", **where)
        else:
            line = self.t(
                "Round {round}, month {month} ({name}): {dealer} deals.",
                dealer=self.who(dealer),
                **where,
            )
        if leader != dealer:
            lead = (
                self.t("You lead.")
                if self._you(leader)
                else self.t("{who} leads.", who=self.who(leader))
            )
            line += " " + lead
        return line

    def event(self, event: Event) -> str | None:
        """One event as a sentence; ``None`` for events told elsewhere (hands are on
        the board, a round's end is its settlement: :meth:`settlement`)."""
        kind = event.kind
        data = event.data
        p = event.player
        who = self.who(p)
        you = self._you(p)
        if kind in ("play", "draw"):
            return self.t("{move}.", move=self._move(event))
        if kind == "take":
            card = event.card if event.card is not None else 0
            got = self.cards(event.cards & ~(1 << card))
            if you:
                return self.t(
                    "You take {cards} with the drawn {card}.", cards=got, card=self.card(card)
                )
            return self.t(
                "{who} takes {cards} with the drawn {card}.",
                who=who,
                cards=got,
                card=self.card(card),
            )
        if kind == "yaku":
            total = int(data.get("total", 0))
            return self._say_n(you, _COUNTED_TEXTS["yaku"], total, who=who)
        if kind == "koikoi":
            calls = int(data.get("calls", 1))
            if calls == 1:
                if you:
                    return self.t("You call koi-koi and play on.")
                return self.t("{who} calls koi-koi and plays on.", who=who)
            if you:
                return self.t("You call koi-koi again (call {calls}).", calls=calls)
            return self.t("{who} calls koi-koi again (call {calls}).", who=who, calls=calls)
        if kind == "stop":
            if data.get("automatic"):
                if you:
                    return self.t("You stop: no koi-koi is possible now.")
                return self.t("{who} stops: no koi-koi is possible now.", who=who)
            if you:
                return self.t("You stop the round (shōbu).")
            return self.t("{who} stops the round (shōbu).", who=who)
        if kind == "exhausted":
            return self.t("Both hands are played out.")
        if kind == "round_start":
            return self._round_start(data)
        if kind == "first_dealer":
            dealer = self.who(data.get("dealer"))
            if data.get("method") == "draw":
                return self.t("A draw decides the first dealer: {who}.", who=dealer)
            return self.t("A coin flip decides the first dealer: {who}.", who=dealer)
        if kind == "redeal":
            return self.t("The cards are dealt again ({why}).", why=data.get("why", ""))
        if kind == "instant":
            yaku = str(data.get("yaku", ""))
            english, japanese = YAKU_NAMES.get(yaku, (yaku, yaku))
            label = japanese if self.lang == "ja" else english
            points = int(data.get("points", 0))
            return self._say_n(you, _COUNTED_TEXTS["instant"], points, who=who, yaku=label)
        if kind == "match_over":
            scores = data.get("scores", [0, 0])
            if p not in (0, 1) or p is None:
                return self.t("The match is over: a draw, {a} to {b}.", a=scores[0], b=scores[1])
            if you:
                return self.t(
                    "The match is over: you win {a} to {b}.", a=scores[p], b=scores[1 - p]
                )
            return self.t(
                "The match is over: {who} wins {a} to {b}.",
                who=who,
                a=scores[p],
                b=scores[1 - p],
            )
        return None

    def events(self, events: Iterable[Event]) -> list[str]:
        """Sentences for a run of events; a play and the draw after it make one sentence."""
        out: list[str] = []
        pending: str | None = None
        for event in events:
            if event.kind == "play":
                if pending is not None:
                    out.append(self.t("{move}.", move=pending))
                pending = self._move(event)
                continue
            if event.kind == "draw" and pending is not None:
                then = self._move(event)
                if self.lang == "en" and then.startswith("You "):
                    then = "you " + then[4:]  # mid-sentence
                out.append(self.t("{first}; {then}.", first=pending, then=then))
                pending = None
                continue
            if pending is not None:
                out.append(self.t("{move}.", move=pending))
                pending = None
            line = self.event(event)
            if line:
                out.append(line)
        if pending is not None:
            out.append(self.t("{move}.", move=pending))
        return out

    # ---------------------------------------------------------------- steps

    def step(self, step: ReplayStep) -> list[str]:
        """What a replay step did, sentence by sentence (settlements not included)."""
        lines = self.events(step.events)
        if not lines and step.kind == "deal":
            lines.append(self.t("The cards are dealt."))
        return lines

    def yaku(self, y: YakuScore) -> str:
        """One yaku in a line: its name, cards and points.

        English keeps both names (:meth:`YakuScore.describe`); Japanese names it once.

        >>> from koikoi.game.cards import parse_cards
        >>> y = YakuScore("sanko", 5, parse_cards("1L 3L 8L"))
        >>> Narrator(("A", "B"), "en").yaku(y), Narrator(("A", "B"), "ja").yaku(y)
        ('Three Brights (三光 sankō) [1L 3L 8L]: 5', '三光 [1L 3L 8L]: 5')
        """
        if self.lang == "en":
            return y.describe()
        english = YAKU_NAMES.get(y.name, (y.name, y.name))[0]
        return f"{self._data(english)} [{self.cards(y.cards)}]: {y.points}"

    def multiplier(self, m: Multiplier) -> str:
        """One multiplier step in words (:meth:`Multiplier.describe` in this language)."""
        if self.lang == "en":
            return m.describe()
        how = " ".join([f"x{m.factor}"] * (m.factor != 1) + [f"+{m.add}"] * bool(m.add)) or "x1"
        return f"{self._data(MULTIPLIER_NAMES.get(m.name, m.name))}: {how}"

    def settlement(self, settlement: Settlement) -> list[str]:
        """A settlement explained line by line, with the players' names.

        The one account of a settlement in words: the terminal game, the terminal
        replay and the web replay all use it (:meth:`Settlement.explain` is the
        core's English account with ``Player 0``/``Player 1``).

        >>> from koikoi.game.rules import Rules
        >>> from koikoi.game.scoring import Scorer
        >>> s = Scorer(Rules()).award(1, 6, "oya_ken")
        >>> Narrator(("Aiko", "Ben"), "en").settlement(s)
        ["Round settled (dealer's point).", 'Flat award: 6', 'Ben scores 6 points.']
        >>> Narrator(("You", "AI"), "en").settlement(Scorer(Rules()).award(0, 6, "oya_ken"))[-1]
        'You score 6 points.'
        """
        s = settlement
        reason = self.t(SETTLED_REASONS[s.reason]) if s.reason in SETTLED_REASONS else s.reason
        lines = [self.t("Round settled ({reason}).", reason=reason)]
        if s.winner is None:
            lines.append(self.t("Nobody scores."))
            return lines
        if s.yaku:
            lines.append(self.t("Yaku:"))
            lines.extend(f"  {self.yaku(y)}" for y in s.yaku)
            lines.append(self.t("Base: {base}", base=s.base))
        else:
            lines.append(self.t("Flat award: {base}", base=s.base))
        figure = s.base
        for m in s.multipliers:
            figure = m.apply(figure)
            lines.append(f"  {self.multiplier(m)} -> {figure}")
        points = self.points(s.points)
        if self._you(s.winner):
            lines.append(self.t("You score {points}.", points=points))
        else:
            lines.append(self.t("{name} scores {points}.", name=self.who(s.winner), points=points))
        loser = 1 - s.winner
        if s.deltas[loser]:
            paid = -s.deltas[loser]
            if self._you(loser):
                lines.append(self.t("You pay {points}.", points=paid))
            else:
                lines.append(self.t("{name} pays {points}.", name=self.who(loser), points=paid))
        return lines

    def _data(self, text: str) -> str:
        """A name from the core's data tables in this language (as :func:`koikoi.i18n.td`)."""
        return self._catalog.get(text, text)

    # ------------------------------------------------------------- mistakes

    def action(self, text: str) -> str:
        """An action's text (``"play 9A"``) in words: ``"play 9A Chrysanthemum Sake cup"``."""
        try:
            action = parse_action(text)
        except InvalidInputError:
            return text
        if isinstance(action, Play):
            if action.target is not None:
                return self.t(
                    "play {card} onto {target}",
                    card=self.card(action.card),
                    target=self.card(action.target),
                )
            return self.t("play {card}", card=self.card(action.card))
        if isinstance(action, Discard):
            return self.t("lay {card} on the field", card=self.card(action.card))
        if isinstance(action, TakeDrawn):
            return self.t("take {card} with the drawn card", card=self.card(action.target))
        if isinstance(action, KoiKoi):
            return self.t("call koi-koi")
        if isinstance(action, Stop):
            return self.t("stop (shōbu)")
        return text  # pragma: no cover - every action kind is handled above

    def mistake(self, mistake: Mistake) -> str:
        """``"Mistake: −2.1 points; better: play 9A Chrysanthemum Sake cup."``"""
        return self.t(
            "Mistake: −{loss} points; better: {best}.",
            loss=f"{mistake.loss:.1f}",
            best=self.action(mistake.best),
        )


def settled_in(step: ReplayStep) -> tuple[Settlement, ...]:
    """The settlements of the rounds that ended in ``step``, in order (usually none or
    one; a deal step can hold rounds ended at the deal by instant hands)."""
    ended = sum(1 for e in step.events if e.kind == "round_over")
    if not ended:
        return ()
    return step.settlements[len(step.settlements) - ended :]


# ------------------------------------------------------------------ analysis


def record_analysis(record: GameRecord) -> Any:
    """The analysis a record carries (``meta["analysis"]``), or ``None``."""
    return record.meta.get("analysis") if isinstance(record.meta, Mapping) else None


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def mistakes_from_analysis(
    data: Any, record: GameRecord, *, threshold: float | None = None
) -> dict[int, Mistake]:
    """The mistakes of an analysis of ``record``, by action number (1-based).

    ``data`` is :meth:`koikoi.lab.analysis.Analysis.to_dict` (``koikoi analyze --json``):
    its ``decisions`` name each analysed action by number, with the move played,
    the best move, the loss and the analysis's own verdict ``mistake`` (a loss above
    its threshold and above the search's noise). Without ``threshold`` the verdict
    decides (an older analysis without it: a loss of at least
    :data:`MISTAKE_THRESHOLD`); with one, moves that lost at least ``threshold``
    points are kept.

    Raises:
        InvalidInputError: ``data`` is not an analysis, or it is the analysis of
            another record (a decision's move is not the record's action there).
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("decisions"), list):
        raise InvalidInputError(
            "the analysis must be the JSON object of 'koikoi analyze --json', with a list "
            "'decisions'"
        )
    decisions = data["decisions"]
    if len(decisions) > _MAX_DECISIONS:
        raise InvalidInputError(f"the analysis has too many decisions (at most {_MAX_DECISIONS})")
    actions = record.actions
    out: dict[int, Mistake] = {}
    for i, d in enumerate(decisions, start=1):
        where = f"analysis decision {i}"
        if not isinstance(d, Mapping):
            raise InvalidInputError(f"{where}: must be an object")
        index = d.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= len(actions):
            raise InvalidInputError(
                f"{where}: index must be an action number from 1 to {len(actions)}, not {index!r}"
            )
        raw = d.get("loss")
        if not _number(raw) or raw < 0:
            raise InvalidInputError(f"{where}: loss must be a number 0 or more, not {raw!r}")
        loss = float(raw)
        played, best = d.get("played"), d.get("best")
        if not isinstance(played, str) or not isinstance(best, str):
            raise InvalidInputError(f"{where}: played and best must be action texts")
        entry = actions[index - 1]
        try:
            same = parse_action(played) == parse_action(entry.action)
            parse_action(best)
        except KoiKoiError as exc:
            raise InvalidInputError(f"{where}: {exc}") from None
        if not same:
            raise InvalidInputError(
                f"{where}: action {index} of the record is {entry.action!r}, not {played!r}: "
                "this analysis is of another record"
            )
        verdict = d.get("mistake")
        if threshold is None and isinstance(verdict, bool):
            kept = verdict
        else:
            kept = loss >= (MISTAKE_THRESHOLD if threshold is None else threshold)
        if kept:
            out[index] = Mistake(index, entry.player, loss, entry.action, best)
    return out

"""Game records: a versioned JSON document of a whole match, replay and validation.

A record holds everything needed to replay a match exactly: the rule set in
full, the seed, the first-dealer decision, every shuffled deck (redeals
included), every action with its round and player, every settlement and the
final scores. :func:`replay` plays the match again from its seed, checking
that every deck equals the recorded one (without a seed, or with the check
off, the recorded decks are dealt as they are, so a record does not depend on
Python's random generator staying the same), applies every action through the
engine's checked API, and checks that every settlement and the final scores
come out as recorded. Anything that does not replay raises
:class:`~koikoi.game.errors.RecordError` saying where it diverges;
:func:`iter_steps` gives the replay step by step, for viewers.

The format is described in ``docs/records.md``.

>>> from koikoi.game.engine import Match
>>> m = Match(seed=11)
>>> while not m.is_over:
...     m.apply(m.legal_ids()[0])
>>> rec = GameRecord.from_match(m, players=["alice", "bob"], created="2024-01-01T00:00:00Z")
>>> again = replay(load_record(rec.to_json()))
>>> again.scores == m.scores and again.winner == m.winner
True
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Iterator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TypeVar

from koikoi.game import __version__
from koikoi.game.actions import parse_action
from koikoi.game.cards import CODES, parse_card
from koikoi.game.engine import Event, Match, Round
from koikoi.game.errors import (
    IllegalActionError,
    InvalidInputError,
    KoiKoiError,
    RecordError,
    json_error_text,
    read_text_file,
)
from koikoi.game.rules import SECTION_TYPES, Rules, rules_from_dict
from koikoi.game.scoring import Settlement
from koikoi.game.views import PlayerView, view_of_round

__all__ = [
    "FORFEIT_REASONS",
    "FORMAT",
    "IDENTITY_KINDS",
    "READ_VERSIONS",
    "VERSION",
    "GameRecord",
    "Identity",
    "RecordedAction",
    "ReplayStep",
    "distinct_names",
    "iter_steps",
    "load_record",
    "read_json_file",
    "record_from_dict",
    "replay",
]

FORMAT: Final = "koikoi-record"
"""The value of a record's ``"format"`` key."""
VERSION: Final = 2
"""The record version this module writes (version 2 added ``identities``)."""
READ_VERSIONS: Final = (1, 2)
"""The record versions this module reads: a version 1 record's identities are
worked out from its names (:meth:`Identity.from_name`)."""
FORFEIT_REASONS: Final = ("time",)
"""Why a match can end by forfeit: ``"time"``, the player's clock ran out (a player
who left the table forfeits that way too)."""
IDENTITY_KINDS: Final = ("you", "ai", "person", "guest")
"""Who a player can be: the local player, an AI, a person who gave a name, a person
who gave none (a guest)."""

_T = TypeVar("_T")
_WIDTH: Final = 100  # JSON lines up to this width are kept on one line


@dataclass(frozen=True, slots=True)
class RecordedAction:
    """One action of a record: its text (``"play 3L"``), round number and player."""

    round: int
    player: int
    action: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"round", "player", "action"}``."""
        return {"round": self.round, "player": self.player, "action": self.action}


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a player of a record is, independent of any language.

    ``kind`` is one of :data:`IDENTITY_KINDS`:

    - ``"you"``: the local player of ``koikoi play`` (shown as "You", "あなた").
    - ``"ai"``: an AI; ``name`` is its level's English title (``"Expert"``) or, for
      an agent that is no offered level, its spec; ``agent`` is the agent spec.
    - ``"person"``: a person, or anything else known only by a name (an agent spec of
      ``koikoi simulate``, an imported game's player): ``name`` as given.
    - ``"guest"``: a person who gave no name; ``name`` is the short tag that tells
      them apart (their seat, 1 or 2).

    Faces translate it when they show it (:mod:`koikoi.features.names`);
    :attr:`english` is the name in English, which the record's ``players`` holds.

    >>> Identity.ai("level:8", "Expert").english, Identity.guest(2).english
    ('AI (Expert)', 'Guest 2')
    >>> Identity.from_name("AI (Novice)")
    Identity(kind='ai', name='Novice', agent='')
    """

    kind: str
    name: str = ""
    agent: str = ""

    def __post_init__(self) -> None:
        if self.kind not in IDENTITY_KINDS:
            raise InvalidInputError(
                f"identity kind {self.kind!r} is not known: allowed {', '.join(IDENTITY_KINDS)}"
            )
        if self.kind != "you" and not self.name.strip():
            raise InvalidInputError(f"a {self.kind!r} identity needs a non-empty name")

    @classmethod
    def you(cls) -> Identity:
        """The local player."""
        return cls("you")

    @classmethod
    def ai(cls, agent: str, level: str | None = None) -> Identity:
        """An AI playing ``agent``, called by its level's English title (else its spec)."""
        return cls("ai", (level or agent).strip(), agent.strip())

    @classmethod
    def person(cls, name: str) -> Identity:
        """A person (or other player) known by ``name``."""
        return cls("person", " ".join(name.split()))

    @classmethod
    def guest(cls, tag: str | int) -> Identity:
        """A person who gave no name, told apart by ``tag`` (their seat, 1 or 2)."""
        return cls("guest", str(tag))

    @classmethod
    def from_name(cls, name: str) -> Identity:
        """The identity an English name stands for (:attr:`english` read back, and the
        names of version 1 records): ``"You"``, ``"AI (Expert)"``, ``"Guest 2"``; any
        other name is a person known by that name."""
        text = name.strip()
        if text == "You":
            return cls.you()
        found = _AI_NAME.fullmatch(text)
        if found is not None:
            return cls("ai", found.group(1))
        found = _GUEST_NAME.fullmatch(text)
        if found is not None:
            return cls.guest(found.group(1))
        return cls.person(name)

    @property
    def english(self) -> str:
        """The name in English: ``"You"``, ``"AI (Expert)"``, ``"Hana"``, ``"Guest 2"``."""
        if self.kind == "you":
            return "You"
        if self.kind == "ai":
            return f"AI ({self.name})"
        if self.kind == "guest":
            return f"Guest {self.name}"
        return self.name

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"kind"}``, with ``"name"`` and ``"agent"`` where they apply."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind != "you":
            out["name"] = self.name
        if self.kind == "ai" and self.agent:
            out["agent"] = self.agent
        return out


_AI_NAME: Final = re.compile(r"AI \((.+)\)")
_GUEST_NAME: Final = re.compile(r"Guest (\S+)")


@dataclass
class GameRecord:
    """A whole match as data. Build with :meth:`from_match` or :func:`load_record`.

    Attributes:
        rules: the rule set in full (:meth:`Rules.to_dict`).
        seed: the match's seed (``None`` when it was played with an injected
            generator: then the recorded deals are the only source of chance).
        players: the two players' names (index 0 and 1), in English.
        first_dealer: how the first dealer was decided: ``method`` (``"draw"``
            or ``"random"``), ``winner``, ``draws`` (pairs of card codes, player
            0's first), ``dealer`` and ``leader``.
        deals: every shuffled deck as card codes, in order, redeals included
            (cards 0-7 go to the dealer, 8-15 to the other player, 16-23 to the
            field; the rest is the stock, top card first).
        actions: every action, in order.
        settlements: :meth:`Settlement.to_dict` of every round, in order.
        scores: the match scores at the end of the record.
        winner: the match winner (``None``: a draw, or not finished).
        finished: whether the match is over.
        created: when the record was made (ISO 8601).
        meta: free-form data (agents, seeds of a simulation, the koikoi version).
        identities: who the two players are (:class:`Identity`), which faces name in
            their language; worked out from ``players`` when not given.
        forfeit: how the match ended when a player forfeited it before its last
            round was played: ``{"player": p, "reason": "time"}`` (then ``finished``
            is true and ``winner`` is the other player); ``None`` otherwise.
    """

    rules: dict[str, Any]
    seed: int | None
    players: list[str]
    first_dealer: dict[str, Any]
    deals: list[list[str]]
    actions: list[RecordedAction]
    settlements: list[dict[str, Any]]
    scores: list[int]
    winner: int | None
    finished: bool = True
    created: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    version: int = VERSION
    identities: list[Identity] = field(default_factory=list)
    forfeit: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.identities:
            self.identities = [Identity.from_name(n) for n in self.players]

    # ------------------------------------------------------------ building

    @classmethod
    def from_match(
        cls,
        match: Match,
        *,
        players: Sequence[str] | None = None,
        meta: Mapping[str, Any] | None = None,
        created: str | None = None,
        identities: Sequence[Identity] | None = None,
        forfeit: Mapping[str, Any] | None = None,
    ) -> GameRecord:
        """The record of ``match`` (finished or not).

        The match is re-run from its recorded chance to note the round and the
        player of every action, so a match played with ``events=False`` can be
        recorded too.

        Args:
            match: the match.
            players: the two players' names (default: the identities' English
                names, else ``"player 0"``, ``"player 1"``).
            meta: free-form JSON-ready data stored under ``"meta"``.
            created: the creation time (default: now, UTC, ISO 8601).
            identities: who the two players are (default: worked out from the
                names, :meth:`Identity.from_name`).
            forfeit: ``{"player": p, "reason": r}`` when player ``p`` forfeited the
                unfinished match (:data:`FORFEIT_REASONS`): the record is finished and
                the other player wins.

        Raises:
            InvalidInputError: if ``players`` is not two non-empty names,
                ``identities`` not two identities, or ``forfeit`` not a forfeit of
                an unfinished match.
            RecordError: if the match cannot be recorded (its seed does not
                reproduce its deals, or its first dealer is unknown).
        """
        who = None if identities is None else list(identities)
        if who is not None and (len(who) != 2 or not all(isinstance(i, Identity) for i in who)):
            raise InvalidInputError(f"identities must be two Identity objects, not {who!r}")
        if players is not None:
            names = list(players)
        elif who is not None:
            names = [i.english for i in who]
        else:
            names = ["player 0", "player 1"]
        if len(names) != 2 or not all(isinstance(n, str) and n.strip() for n in names):
            raise InvalidInputError(f"players must be two non-empty names, not {names!r}")
        lost = None
        if forfeit is not None:
            try:
                lost = _forfeit_from(dict(forfeit), "forfeit")
            except RecordError as exc:
                raise InvalidInputError(str(exc)) from None
            if match.is_over:
                raise InvalidInputError("forfeit: the match is over already: nobody can forfeit it")
        first = _first_dealer_of(match)
        deals = [[CODES[c] for c in deck] for deck in match.deals]
        record = cls(
            rules=match.rules.to_dict(),
            seed=match.seed,
            players=[n.strip() for n in names],
            first_dealer=first,
            deals=deals,
            actions=[],
            settlements=[s.to_dict() for s in match.settlements],
            scores=list(match.scores),
            winner=match.winner if lost is None else 1 - int(lost["player"]),
            finished=match.is_over or lost is not None,
            created=created if created is not None else _now(),
            meta={"koikoi": __version__, **(dict(meta) if meta else {})},
            identities=who or [],
            forfeit=lost,
        )
        record.actions = _annotate_actions(match, record)
        return record

    # ---------------------------------------------------------- conversion

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data, keys in the documented order."""
        return {
            "format": FORMAT,
            "version": self.version,
            "rules": self.rules,
            "seed": self.seed,
            "players": list(self.players),
            **({"identities": [i.to_dict() for i in self.identities]} if self.version >= 2 else {}),
            "first_dealer": self.first_dealer,
            "deals": self.deals,
            "actions": [a.to_dict() for a in self.actions],
            "settlements": self.settlements,
            "scores": list(self.scores),
            "winner": self.winner,
            "finished": self.finished,
            **({"forfeit": dict(self.forfeit)} if self.forfeit is not None else {}),
            "created": self.created,
            "meta": self.meta,
        }

    def to_json(self) -> str:
        """The record as JSON text: readable, one action or deal per line."""
        return _dump(self.to_dict(), 0) + "\n"

    def save(self, path: str | Path) -> Path:
        """Write the record to ``path`` (UTF-8 JSON); returns the path.

        Raises:
            RecordError: if the file cannot be written.
        """
        p = Path(path)
        try:
            p.write_text(self.to_json(), encoding="utf-8")
        except OSError as exc:
            raise RecordError(f"cannot write record {str(p)!r}: {exc.strerror or exc}") from None
        return p

    def build_rules(self) -> Rules:
        """The record's rule set, rebuilt from its full rules dict.

        Raises:
            RecordError: if an option is missing, unknown or out of range.
        """
        data = self.rules
        if not isinstance(data, Mapping):
            raise RecordError("record rules must be an object (Rules.to_dict())")
        full = Rules().to_dict()
        for section, keys in full.items():
            if section not in data:
                raise RecordError(f"record rules are incomplete: missing {section!r}")
            if isinstance(keys, dict):
                given = data[section]
                if not isinstance(given, Mapping):
                    raise RecordError(f"record rules: {section} must be an object")
                for key in keys:
                    if key not in given:
                        raise RecordError(f"record rules are incomplete: missing {section}.{key}")
        try:
            return rules_from_dict(data, base=Rules(), source="record rules")
        except KoiKoiError as exc:
            raise RecordError(str(exc)) from None

    def player_name(self, player: int | None) -> str:
        """``"player 0 (alice)"``, or ``"nobody"`` for ``None``."""
        if player is None:
            return "nobody"
        name = self.players[player]
        default = f"player {player}"
        return default if name == default else f"{default} ({name})"


def distinct_names(names: Sequence[str]) -> list[str]:
    """The players' names, told apart when they are the same (two copies of one agent):
    ``A`` and ``B`` after them, as the arena calls its two agents.

    >>> distinct_names(["random", "random"])
    ['random A', 'random B']
    >>> distinct_names(["greedy", "random"])
    ['greedy', 'random']
    """
    if len(names) == 2 and names[0] == names[1]:
        return [f"{names[0]} A", f"{names[1]} B"]
    return list(names)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _first_dealer_of(match: Match) -> dict[str, Any]:
    """How ``match`` chose its first dealer (kept by the engine, with or without events)."""
    info = match.first_dealer
    return {
        "method": info["method"],
        "winner": info["winner"],
        "draws": [list(d) for d in info["draws"]],
        "dealer": info["dealer"],
        "leader": info["leader"],
    }


def _annotate_actions(match: Match, record: GameRecord) -> list[RecordedAction]:
    """Re-run ``match`` from ``record``'s chance to note each action's round and player."""
    chance = _Chance(record, match.rules, check_seed=True, events=False, recording=True)
    rerun = chance.match
    out: list[RecordedAction] = []
    for i, action_id in enumerate(match.actions, 1):
        text = rerun.describe(action_id)
        entry = RecordedAction(rerun.round_number, rerun.current, text)
        try:
            rerun.apply(action_id)
        except IllegalActionError as exc:
            raise RecordError(
                f"round {entry.round}, action {i} {text!r}: the match's action does not "
                f"replay ({exc}); was it applied with apply_id without being legal?"
            ) from None
        chance.check_deals()
        out.append(entry)
    chance.check_all_dealt()
    return out


# ------------------------------------------------------------------ chance


class _FirstDealerChance(random.Random):
    """Plays back a record's first-dealer decision to a :class:`_RecordedMatch`.

    The engine decides the first dealer with ``random()`` (a coin flip) or one
    ``sample(range(48), 2)`` per draw; these answer with the recorded values.
    """

    def __init__(self, first_dealer: Mapping[str, Any]) -> None:
        super().__init__(0)
        self._winner: int = first_dealer["winner"]
        self._draws = [(parse_card(a), parse_card(b)) for a, b in first_dealer["draws"]]
        self.flips = 0
        self.draws_used = 0

    def random(self) -> float:
        """The first-dealer coin flip: 0.25 for player 0, 0.75 for player 1."""
        self.flips += 1
        if self.flips > 1:
            raise RecordError("the replay asks for chance the record does not hold")
        return 0.25 if self._winner == 0 else 0.75

    def sample(
        self,
        population: Sequence[_T],
        k: int,
        *,
        counts: Iterable[int] | None = None,
    ) -> list[_T]:
        """The next recorded first-dealer draw."""
        i = self.draws_used
        if i >= len(self._draws) or k != 2:
            raise RecordError(
                f"the replay draws for the first dealer {i + 1} times but the record "
                f"shows {len(self._draws)} draws"
            )
        self.draws_used += 1
        return [population[int(c)] for c in self._draws[i]]

    def shuffle(self, x: MutableSequence[Any]) -> None:
        """Never used: the recorded match takes its decks from the record."""
        raise RecordError("the replay asks for chance the record does not hold")


class _RecordedMatch(Match):
    """A match whose decks come from a record instead of its random generator."""

    def __init__(
        self, rules: Rules, decks: list[list[int]], rng: random.Random, *, events: bool
    ) -> None:
        self._recorded_decks = decks
        self.decks_served = 0
        super().__init__(rules, rng=rng, events=events)

    def _shuffle(self) -> list[int]:
        i = self.decks_served
        if i >= len(self._recorded_decks):
            raise RecordError(
                f"the replay needs deal {i + 1} but the record has only "
                f"{len(self._recorded_decks)} deals"
            )
        self.decks_served += 1
        deck = list(self._recorded_decks[i])
        self.deals.append(deck)
        return deck


class _Chance:
    """Starts the match of a record and checks its chance against the record.

    With a seed (and ``check_seed``) the match is played from the seed, as it was,
    and every deal is compared with the recorded one: a difference means the
    record was altered, or this Python's generator differs from the recording's.
    Without a seed, or without the check, the recorded decks are dealt as they are.
    """

    def __init__(
        self,
        record: GameRecord,
        rules: Rules,
        *,
        check_seed: bool,
        events: bool,
        recording: bool = False,
    ) -> None:
        self.record = record
        self.recording = recording
        self.seeded = check_seed and record.seed is not None
        self.decks = [[int(parse_card(c)) for c in deck] for deck in record.deals]
        self.checked = 0
        self.match: Match
        if self.seeded:
            self.match = Match(rules, seed=record.seed, events=events)
        else:
            self.match = _RecordedMatch(
                rules, self.decks, _FirstDealerChance(record.first_dealer), events=events
            )
        self.check_first_dealer()
        self.check_deals()

    def _mismatch(self, what: str, detail: str = "") -> RecordError:
        seed = self.record.seed
        if self.recording:
            return RecordError(
                f"the match's seed {seed} does not reproduce its {what}: was it given an "
                "rng as well as a seed?"
            )
        return RecordError(
            f"{what} differs from the seed's (seed {seed}){detail}: the record was altered, "
            "or this Python's random generator differs; replay without the seed check to "
            "use the recorded deals"
        )

    def check_first_dealer(self) -> None:
        """Compare how the replay chose the first dealer with the record."""
        recorded = self.record.first_dealer
        match = self.match
        draws = [[CODES[a], CODES[b]] for a, b in match.first_draw]
        if draws != recorded["draws"]:
            detail = f": recorded draws {recorded['draws']!r}, replay gives {draws!r}"
            if self.seeded:
                raise self._mismatch("the first dealer", detail)
            raise RecordError(f"first dealer differs{detail}")  # pragma: no cover
        event = next((e for e in match.events if e.kind == "first_dealer"), None)
        if event is None:
            return
        for key, value in (
            ("method", event.data["method"]),
            ("winner", event.player),
            ("dealer", event.data["dealer"]),
            ("leader", event.data["leader"]),
        ):
            if recorded[key] != value:
                detail = f": recorded {key} {recorded[key]!r}, replay gives {value!r}"
                if self.seeded and key == "winner":
                    raise self._mismatch("the first dealer", detail)
                raise RecordError(f"first dealer differs{detail}")

    def check_deals(self) -> None:
        """Compare the deals made so far with the recorded ones."""
        deals = self.match.deals
        while self.checked < len(deals):
            k = self.checked
            if k >= len(self.decks):
                raise RecordError(
                    f"the replay needs deal {k + 1} but the record has only {len(self.decks)} deals"
                )
            if list(deals[k]) != self.decks[k]:
                raise self._mismatch(f"deal {k + 1}")
            self.checked += 1

    def check_all_dealt(self) -> None:
        """At the end: every recorded deal was used."""
        self.check_deals()
        if self.checked != len(self.decks):
            raise RecordError(
                f"the record has {len(self.decks)} deals but the replay uses {self.checked}"
            )


# ------------------------------------------------------------------ replay


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One step of a replayed match, for viewers that step forwards and backwards.

    Attributes:
        index: the position in the list of steps (0: the first deal).
        kind: ``"deal"`` (a round dealt and ready for its first action; redeals
            and instant rounds before it are among its ``events``) or
            ``"action"``.
        action: the recorded action (``None`` for a deal).
        events: the events this step produced.
        round: a copy of the round after the step, full information (hands and
            stock included); after a round-ending action, the finished round
            with its settlement.
        match_scores: the match scores after the step.
        settlements: every settlement so far.
        history: every event so far.
        is_over: whether the match is over.
        winner: the match winner once it is over.
    """

    index: int
    kind: str
    action: RecordedAction | None
    events: tuple[Event, ...]
    round: Round
    match_scores: tuple[int, int]
    settlements: tuple[Settlement, ...]
    history: tuple[Event, ...]
    is_over: bool
    winner: int | None

    def view(self, player: int | None = None) -> PlayerView:
        """What ``player`` (``None``: a spectator) could see at this step."""
        return view_of_round(
            self.round,
            player,
            match_scores=self.match_scores,
            settlements=self.settlements,
            history=self.history,
            is_over=self.is_over or self.round.is_over,
        )


class _Replayer:
    """Replays a record step by step, checking it as it goes."""

    def __init__(self, record: GameRecord, *, check_seed: bool) -> None:
        self.record = record
        self.rules = record.build_rules()
        self.check_seed = check_seed
        self.checked_settlements = 0
        self.match: Match | None = None

    def run(self, *, snapshots: bool) -> Iterator[ReplayStep]:
        record = self.record
        chance = _Chance(record, self.rules, check_seed=self.check_seed, events=True)
        match = chance.match
        self.match = match
        self._check_settlements(match, "the deal")
        index = 0
        if snapshots:
            yield self._step(match, index, "deal", None, match.events, match.round)
        total = len(record.actions)
        for i, entry in enumerate(record.actions, 1):
            where = f"round {entry.round}, action {i} {entry.action!r}"
            if match.is_over:
                raise RecordError(f"{where}: the match is already over after {i - 1} actions")
            if entry.round != match.round_number:
                raise RecordError(
                    f"{where}: recorded in round {entry.round} but the replay is in "
                    f"round {match.round_number}"
                )
            if entry.player != match.current:
                raise RecordError(
                    f"{where}: recorded for player {entry.player} but player "
                    f"{match.current} is to act"
                )
            try:
                action = parse_action(entry.action)
            except InvalidInputError as exc:
                raise RecordError(f"{where}: {exc}") from None
            before_events = len(match.events)
            before_round = match.round
            try:
                match.apply(action)
            except IllegalActionError as exc:
                raise RecordError(f"{where}: {exc}") from None
            chance.check_deals()
            self._check_settlements(match, where)
            if not snapshots:
                continue
            new = match.events[before_events:]
            index += 1
            if match.round is before_round:
                yield self._step(match, index, "action", entry, new, before_round)
                continue
            cut = next((k + 1 for k, e in enumerate(new) if e.kind == "round_over"), len(new))
            history_end = before_events + cut
            yield self._step(match, index, "action", entry, new[:cut], before_round, history_end)
            index += 1
            yield self._step(match, index, "deal", None, new[cut:], match.round)
        self._check_end(match, chance, total)

    def _step(
        self,
        match: Match,
        index: int,
        kind: str,
        entry: RecordedAction | None,
        events: Sequence[Event],
        rnd: Round,
        history_end: int | None = None,
    ) -> ReplayStep:
        history = match.events if history_end is None else match.events[:history_end]
        settlements = tuple(match.settlements)
        scores = (match.scores[0], match.scores[1])
        over = match.is_over
        if history_end is not None:
            # A round-ending action: the state as the round ended, before any later deal.
            n = len(settlements)
            later = settlements[rnd.round_number :] if n > rnd.round_number else ()
            for s in later:
                scores = (scores[0] - s.deltas[0], scores[1] - s.deltas[1])
            settlements = settlements[: rnd.round_number]
            over = over and not later
        return ReplayStep(
            index=index,
            kind=kind,
            action=entry,
            events=tuple(events),
            round=rnd.clone(),
            match_scores=scores,
            settlements=settlements,
            history=tuple(history),
            is_over=over,
            winner=match.winner if over else None,
        )

    def _check_settlements(self, match: Match, where: str) -> None:
        recorded = self.record.settlements
        while self.checked_settlements < len(match.settlements):
            k = self.checked_settlements
            actual = match.settlements[k].to_dict()
            if k >= len(recorded):
                raise RecordError(
                    f"{where}: the replay settles round {k + 1} but the record has only "
                    f"{len(recorded)} settlements"
                )
            problem = _settlement_difference(recorded[k], actual, self.record)
            if problem is not None:
                raise RecordError(f"round {k + 1} settlement differs: {problem}")
            self.checked_settlements += 1

    def _check_end(self, match: Match, chance: _Chance, total: int) -> None:
        record = self.record
        if record.forfeit is not None:
            if match.is_over:
                raise RecordError(
                    "the record says the match ended by forfeit but the replay ends it in play"
                )
        elif record.finished and not match.is_over:
            raise RecordError(
                f"the record ends after {total} actions but the match is not over: round "
                f"{match.round_number} waits for player {match.current}"
            )
        if not record.finished and match.is_over:
            raise RecordError("the record says the match is not finished but the replay ends it")
        chance.check_all_dealt()
        if len(record.settlements) != len(match.settlements):
            raise RecordError(
                f"the record has {len(record.settlements)} settlements but the replay "
                f"settles {len(match.settlements)} rounds"
            )
        if list(record.scores) != list(match.scores):
            raise RecordError(
                f"final scores differ: recorded {list(record.scores)}, replay gives "
                f"{list(match.scores)}"
            )
        winner = match.winner if record.forfeit is None else 1 - int(record.forfeit["player"])
        if record.winner != winner:
            raise RecordError(
                f"winner differs: recorded {record.player_name(record.winner)}, replay gives "
                f"{record.player_name(winner)}"
            )


def _settlement_difference(
    recorded: Mapping[str, Any], actual: Mapping[str, Any], record: GameRecord
) -> str | None:
    """Where a recorded settlement differs from the replayed one, in words; None if equal."""
    actual = dict(actual)
    if "exhausted" not in recorded:  # written before settlements carried the flag
        actual.pop("exhausted", None)
    if dict(recorded) == actual:
        return None
    rw, aw = recorded.get("winner"), actual.get("winner")
    if rw != aw:
        return f"recorded winner {_who(rw, record)}, replay gives {record.player_name(aw)}"
    if recorded.get("points") != actual.get("points"):
        return (
            f"recorded {recorded.get('points')!r} points for {record.player_name(aw)}, "
            f"replay gives {actual.get('points')}"
        )
    for key in ("reason", "exhausted", "base", "deltas", "yaku", "multipliers"):
        if recorded.get(key) != actual.get(key):
            return f"recorded {key} {recorded.get(key)!r}, replay gives {actual.get(key)!r}"
    extra = sorted(set(recorded) - set(actual))
    return f"recorded unexpected keys {', '.join(map(repr, extra))}"


def _who(player: Any, record: GameRecord) -> str:
    if player is None or player in (0, 1):
        return record.player_name(player)
    return repr(player)


def replay(record: GameRecord, *, check_seed: bool = True) -> Match:
    """Replay ``record`` through the engine and check it; returns the match (events on).

    Every deal comes from the record; with ``check_seed`` (and a seed in the
    record) each is also compared with what the seed shuffles. Every action is
    applied with the checked API; every settlement, the final scores and the
    winner are compared with the record.

    Raises:
        RecordError: saying where the record diverges.
    """
    replayer = _Replayer(record, check_seed=check_seed)
    for _ in replayer.run(snapshots=False):
        pass  # pragma: no cover - no steps without snapshots
    if replayer.match is None:  # pragma: no cover - run() always builds it
        raise RecordError("the record did not replay")
    return replayer.match


def iter_steps(record: GameRecord, *, check_seed: bool = True) -> Iterator[ReplayStep]:
    """The replay of ``record`` step by step: each deal and each action with its events.

    Steps are produced as the record is checked: a record that diverges raises
    :class:`RecordError` at the step where it does (after the valid steps).
    """
    return _Replayer(record, check_seed=check_seed).run(snapshots=True)


# ------------------------------------------------------------------ loading


def load_record(source: str | Path) -> GameRecord:
    """A record from a file path or from JSON text.

    A ``str`` that starts with ``{`` is read as JSON text, anything else as a path.

    Raises:
        RecordError: unreadable file, malformed JSON, wrong format or version,
            or a missing or malformed key (named).
    """
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return record_from_dict(_parse_json(source, "record"), where="record")
    data, where = read_json_file(source, what="record")
    return record_from_dict(data, where=where)


def read_json_file(path: str | Path, *, what: str) -> tuple[Any, str]:
    """The parsed JSON of the file at ``path`` and its name for messages.

    Args:
        path: the file.
        what: what the file should be, for messages (``"record"``).

    Raises:
        RecordError: the file cannot be read, is not UTF-8 text or is not JSON.
    """
    where = str(Path(path))
    text = read_text_file(path, what=what, error=RecordError)
    return _parse_json(text, where), where


def _parse_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where}: not valid JSON: {json_error_text(exc)}") from None


def record_from_dict(data: Any, *, where: str = "record") -> GameRecord:
    """A record from parsed JSON data (see :func:`load_record`)."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: not a koikoi record: expected a JSON object")
    if "format" not in data:
        raise RecordError(f"{where}: not a koikoi record: missing key 'format'")
    if data["format"] != FORMAT:
        raise RecordError(
            f"{where}: not a koikoi record: format is {data['format']!r}, expected {FORMAT!r}"
        )
    version = _get(data, "version", int, where)
    if version not in READ_VERSIONS:
        raise RecordError(
            f"unsupported record version {version}: this koikoi reads versions "
            f"{', '.join(map(str, READ_VERSIONS))}"
        )
    rules = _get(data, "rules", dict, where)
    if not all(section in rules for section in SECTION_TYPES):
        missing = [s for s in SECTION_TYPES if s not in rules]
        raise RecordError(f"{where}: rules are incomplete: missing {', '.join(missing)}")
    seed = data.get("seed") if "seed" in data else _missing(where, "seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise RecordError(f"{where}: seed must be a non-negative integer or null, not {seed!r}")
    players = _get(data, "players", list, where)
    if len(players) != 2 or not all(isinstance(p, str) and p for p in players):
        raise RecordError(f"{where}: players must be two non-empty names, not {players!r}")
    identities = (
        [Identity.from_name(p) for p in players]
        if version < 2
        else _identities(_get(data, "identities", list, where), where)
    )
    first = _first_dealer_from(_get(data, "first_dealer", dict, where), where)
    deals = [_deck(deck, i, where) for i, deck in enumerate(_get(data, "deals", list, where), 1)]
    actions = [_action(a, i, where) for i, a in enumerate(_get(data, "actions", list, where), 1)]
    settlements = _get(data, "settlements", list, where)
    for i, s in enumerate(settlements, 1):
        if not isinstance(s, dict):
            raise RecordError(f"{where}: settlement {i} must be an object, not {s!r}")
    scores = _get(data, "scores", list, where)
    if len(scores) != 2 or not all(_is_int(s) for s in scores):
        raise RecordError(f"{where}: scores must be two integers, not {scores!r}")
    winner = data.get("winner") if "winner" in data else _missing(where, "winner")
    if winner not in (None, 0, 1) or isinstance(winner, bool):
        raise RecordError(f"{where}: winner must be 0, 1 or null, not {winner!r}")
    finished = data.get("finished", True)
    if not isinstance(finished, bool):
        raise RecordError(f"{where}: finished must be true or false, not {finished!r}")
    created = _get(data, "created", str, where)
    meta = _get(data, "meta", dict, where)
    forfeit = _forfeit_from(data["forfeit"], where) if data.get("forfeit") is not None else None
    if forfeit is not None and not finished:
        raise RecordError(f"{where}: a match that ended by forfeit must be finished")
    return GameRecord(
        rules=rules,
        seed=seed,
        players=list(players),
        first_dealer=first,
        deals=deals,
        actions=actions,
        settlements=settlements,
        scores=list(scores),
        winner=winner,
        finished=finished,
        created=created,
        meta=meta,
        version=version,
        identities=identities,
        forfeit=forfeit,
    )


def _forfeit_from(data: Any, where: str) -> dict[str, Any]:
    """A record's ``forfeit`` object, checked: ``player`` 0 or 1, ``reason`` one of
    :data:`FORFEIT_REASONS`, nothing else."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: forfeit must be an object or null, not {data!r}")
    extra = sorted(set(data) - {"player", "reason"})
    if extra:
        raise RecordError(f"{where}: forfeit has unknown key {extra[0]!r}: allowed player, reason")
    player, reason = data.get("player"), data.get("reason")
    if player not in (0, 1) or isinstance(player, bool):
        raise RecordError(f"{where}: forfeit player must be 0 or 1, not {player!r}")
    if reason not in FORFEIT_REASONS:
        raise RecordError(
            f"{where}: forfeit reason must be one of {', '.join(FORFEIT_REASONS)}, not {reason!r}"
        )
    return {"player": player, "reason": reason}


def _identities(data: list[Any], where: str) -> list[Identity]:
    if len(data) != 2:
        raise RecordError(f"{where}: identities must be two objects, not {data!r}")
    out: list[Identity] = []
    for i, entry in enumerate(data):
        what = f"identities[{i}]"
        if not isinstance(entry, dict):
            raise RecordError(f"{where}: {what} must be an object, not {entry!r}")
        extra = sorted(set(entry) - {"kind", "name", "agent"})
        if extra:
            raise RecordError(
                f"{where}: {what} has unknown key {extra[0]!r}: allowed kind, name, agent"
            )
        kind, name, agent = entry.get("kind"), entry.get("name", ""), entry.get("agent", "")
        if kind not in IDENTITY_KINDS:
            raise RecordError(
                f"{where}: {what}.kind must be one of {', '.join(IDENTITY_KINDS)}, not {kind!r}"
            )
        if not isinstance(name, str) or not isinstance(agent, str):
            raise RecordError(f"{where}: {what}: name and agent must be strings")
        if kind != "you" and not name.strip():
            raise RecordError(f"{where}: {what}: a {kind!r} identity needs a non-empty name")
        out.append(Identity(kind, name, agent))
    return out


_JSON_TYPES: Final[dict[type, str]] = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
}


def _missing(where: str, key: str) -> Any:
    raise RecordError(f"{where}: missing key {key!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _get(data: Mapping[str, Any], key: str, kind: type[_T], where: str) -> _T:
    if key not in data:
        _missing(where, key)
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordError(f"{where}: {key} must be {_JSON_TYPES[kind]}, not {value!r}")
    return value


def _player(value: Any, what: str, where: str) -> int:
    if value not in (0, 1) or isinstance(value, bool):
        raise RecordError(f"{where}: {what} must be 0 or 1, not {value!r}")
    return int(value)


def _first_dealer_from(data: dict[str, Any], where: str) -> dict[str, Any]:
    for key in ("method", "winner", "draws", "dealer", "leader"):
        if key not in data:
            raise RecordError(f"{where}: missing key 'first_dealer.{key}'")
    if data["method"] not in ("draw", "random"):
        raise RecordError(
            f"{where}: first_dealer.method must be 'draw' or 'random', not {data['method']!r}"
        )
    draws = data["draws"]
    if not isinstance(draws, list):
        raise RecordError(f"{where}: first_dealer.draws must be a list, not {draws!r}")
    pairs: list[list[str]] = []
    for pair in draws:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(c, str) for c in pair)
        ):
            raise RecordError(f"{where}: first_dealer.draws: {pair!r} is not a pair of cards")
        try:
            pairs.append([parse_card(c).code for c in pair])
        except InvalidInputError as exc:
            raise RecordError(f"{where}: first_dealer.draws: {exc}") from None
    return {
        "method": data["method"],
        "winner": _player(data["winner"], "first_dealer.winner", where),
        "draws": pairs,
        "dealer": _player(data["dealer"], "first_dealer.dealer", where),
        "leader": _player(data["leader"], "first_dealer.leader", where),
    }


def _deck(deck: Any, i: int, where: str) -> list[str]:
    if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
        raise RecordError(f"{where}: deal {i} must be a list of card codes")
    try:
        cards = [parse_card(c) for c in deck]
    except InvalidInputError as exc:
        raise RecordError(f"{where}: deal {i}: {exc}") from None
    if len(cards) != 48 or len(set(cards)) != 48:
        raise RecordError(
            f"{where}: deal {i} is not a shuffled deck: {len(cards)} cards, "
            f"{len(set(cards))} distinct (48 of each expected)"
        )
    return [c.code for c in cards]


def _action(entry: Any, i: int, where: str) -> RecordedAction:
    if not isinstance(entry, dict):
        raise RecordError(f"{where}: action {i} must be an object, not {entry!r}")
    for key in ("round", "player", "action"):
        if key not in entry:
            raise RecordError(f"{where}: action {i} is missing key {key!r}")
    rnd, text = entry["round"], entry["action"]
    if not _is_int(rnd) or rnd < 1:
        raise RecordError(f"{where}: action {i}: round must be a positive integer, not {rnd!r}")
    if not isinstance(text, str):
        raise RecordError(f"{where}: action {i}: action must be a string, not {text!r}")
    return RecordedAction(rnd, _player(entry["player"], f"action {i} player", where), text)


# ------------------------------------------------------------------ JSON text


def _dump(value: Any, level: int) -> str:
    """JSON with short containers (and lists of plain values) kept on one line."""
    compact = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (dict, list)) or not value:
        return compact
    flat = isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value)
    if flat or len(compact) + 2 * level <= _WIDTH:
        return compact
    pad = "  " * (level + 1)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {_dump(v, level + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    items = [pad + _dump(v, level + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"

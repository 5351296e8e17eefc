"""The web game's messages: schemas, validation and encoding (no I/O).

Clients send *intentions* over a WebSocket as JSON objects with a ``type``;
:func:`parse_client_message` turns one raw frame into a typed message or raises
:class:`ProtocolError`, whose ``code`` and ``message`` say exactly what was
wrong. The HTTP API's JSON bodies are validated here too (:func:`parse_new_game`,
:func:`parse_join`, :func:`parse_score_request`, ...). docs/protocol.md lists
every message with its fields.

>>> parse_client_message('{"type": "act", "action": 8, "seq": 0}')
Act(action=8, seq=0, ref=None)
>>> try:
...     parse_client_message('{"type": "act", "action": 8}')
... except ProtocolError as exc:
...     print(exc.code, "-", exc.message)
missing_field - 'act' needs the field 'seq' (integer)
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from koikoi.features.names import check_name
from koikoi.features.opponents import LEVEL_CHOICES
from koikoi.game.actions import NUM_ACTIONS
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import PRESET_NAMES

__all__ = [
    "AGENT_CHOICES",
    "CLIENT_TYPES",
    "CLOSE_CODES",
    "ERROR_CODES",
    "LEGACY_AGENTS",
    "LEVEL_AGENTS",
    "MAX_HOUSE_RULES_CHARS",
    "MAX_HOUSE_RULES_DEPTH",
    "MAX_MESSAGE_BYTES",
    "MODES",
    "PROTOCOL_VERSION",
    "Act",
    "ClientMessage",
    "Hello",
    "HintRequest",
    "InviteRequest",
    "JoinRequest",
    "KeeperRequest",
    "KeeperRound",
    "NewGameRequest",
    "Ping",
    "ProtocolError",
    "ScoreRequest",
    "TokenRequest",
    "decode_json",
    "encode",
    "error_message",
    "parse_client_message",
    "parse_invite_request",
    "parse_join",
    "parse_keeper_request",
    "parse_new_game",
    "parse_score_request",
    "parse_token_request",
    "person_name",
    "toml_depth",
    "valid_token",
]

PROTOCOL_VERSION: Final = 1
MAX_MESSAGE_BYTES: Final = 2048
"""Largest WebSocket frame a client may send; larger ones get ``too_large``."""
MAX_HOUSE_RULES_CHARS: Final = 8000
MAX_HOUSE_RULES_DEPTH: Final = 8
"""Deepest nesting of arrays and inline tables in house rules (the presets use 1)."""
MAX_NAME_CHARS: Final = 40
MAX_REF_CHARS: Final = 64
MODES: Final = ("ai", "friend", "tutorial")
"""Kinds of game: against the AI, against a friend by invite link, or the guided
first round ("Learn to play", :mod:`koikoi.features.tutorial`: fixed deal, rules and opponent)."""
LEVEL_AGENTS: Final[tuple[str, ...]] = tuple(choice.agent for choice in LEVEL_CHOICES)
"""The AI levels the client offers, weakest first: ``level:1`` … ``level:7``, ``expert``."""
LEGACY_AGENTS: Final = ("random", "greedy", "heuristic", "mcts")
"""The AI strengths of earlier versions: still accepted (stored games, scripts)."""
AGENT_CHOICES: Final[tuple[str, ...]] = (*LEVEL_AGENTS, "level:8", *LEGACY_AGENTS)
"""AI strengths a client may ask for: the levels (``level:8`` is ``expert``) and the
older names (never ``cmd:``: clients do not start programs)."""

ERROR_CODES: Final[dict[str, str]] = {
    "bad_json": "the frame or body is not a JSON object, not UTF-8, has a lone UTF-16 "
    "surrogate or repeats a key",
    "too_large": "the frame or body is larger than allowed",
    "timeout": "the request body did not arrive in time",
    "unknown_type": "the type is missing or not one of the known message types",
    "missing_field": "a required field is absent",
    "bad_field": "a field has the wrong type or value",
    "unexpected_field": "a field the message type does not have",
    "not_authenticated": "send hello with a token first",
    "already_authenticated": "hello was already accepted on this connection",
    "unknown_token": "no game has this token",
    "spectator": "spectators cannot act",
    "not_your_turn": "the other player is to act",
    "stale": "seq is not the game's current action count",
    "illegal_action": "the action is not legal now",
    "opponent_not_joined": "the invited player has not opened the invite link yet: play "
    "starts when both seats are taken",
    "game_over": "the match is over",
    "rate_limited": "too many messages; slow down",
    "hint_unavailable": "no hint can be given now",
    "invite_used": "this invite link was already used",
    "rules": "the rules or house rules are not valid",
    "not_found": "no such game or page",
    "method_not_allowed": "this path does not take this HTTP method",
    "not_finished": "the game is not finished yet",
    "bad_record": "the record cannot be read or replayed",
    "unknown_player": "no player has this device key",
    "already_linked": "the seat is already linked to another player, or the player holds the "
    "other seat",
    "server_error": "the server could not complete the request (its database is not "
    "answering, it is stopping, or an unexpected fault); nothing was changed; try again",
}
"""Every error code the server sends, with its meaning."""

CLOSE_CODES: Final[dict[int, str]] = {
    1003: "a binary frame: the protocol is JSON text frames",
    1008: "a WebSocket from a foreign origin",
    1011: "the server could not send a message (an unexpected fault; reconnect)",
    1012: "the server is restarting; reconnect",
    1013: "too many connections (from this address, without hello, or in all), too many "
    "unknown tokens or rate-limited messages, or a connection too far behind; try again later",
    4408: "no hello within the deadline after connecting",
}
"""Every WebSocket close code the server uses, with its meaning (the close reason says more)."""

_TOKEN_RE: Final = re.compile(r"[A-Za-z0-9_-]{20,128}")
_CARD_WORD_RE: Final = re.compile(r"[A-Za-z0-9]{1,20}")


class ProtocolError(ValueError):
    """A message or request that the server refuses; nothing was changed.

    ``code`` is one of :data:`ERROR_CODES`; ``message`` names the problem.
    """

    def __init__(self, code: str, message: str, *, ref: str | int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.ref = ref

    def to_message(self) -> dict[str, Any]:
        """The ``error`` message sent to the client."""
        return error_message(self.code, self.message, ref=self.ref)


def error_message(code: str, message: str, *, ref: str | int | None = None) -> dict[str, Any]:
    """``{"type": "error", "code", "message"}`` (plus ``ref`` when the client gave one)."""
    out: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if ref is not None:
        out["ref"] = ref
    return out


def encode(message: Mapping[str, Any]) -> str:
    """Compact JSON text of a message."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(key)
        out[key] = value
    return out


def _shown_key(key: str) -> str:
    return repr(key if len(key) <= 40 else key[:40] + "...")


def _lone_surrogate_at(data: Any) -> str | None:
    """Where (a path like ``players[1]``) the first string with a lone surrogate is."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            strings: list[tuple[str, str]] = [(value, path)]
        elif isinstance(value, dict):
            strings = []
            for key, item in value.items():
                where = f"{path}.{key}" if path else key
                strings.append((key, where))
                stack.append((item, where))
        elif isinstance(value, list):
            strings = []
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
        else:
            continue
        for text, where in strings:
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    return where
    return None


def decode_json(raw: str | bytes, what: str = "message") -> Any:
    """Parse JSON text strictly: UTF-8, no repeated key, no lone UTF-16 surrogate.

    Python's :func:`json.loads` accepts ``{"a": 1, "a": 2}`` (the last wins) and
    ``"\\ud800"`` (a string no UTF-8 text can hold); both are refused here, before
    anything reads the value.

    >>> decode_json('{"type": "ping"}')
    {'type': 'ping'}
    >>> try:
    ...     decode_json('{"type": "act", "type": "ping"}')
    ... except ProtocolError as exc:
    ...     print(exc.code, "-", exc.message)
    bad_json - message repeats the key 'type'

    Raises:
        ProtocolError: ``bad_json``, naming the repeated key or where the surrogate is.
    """
    try:
        data = json.loads(raw, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKeyError as exc:
        raise ProtocolError("bad_json", f"{what} repeats the key {_shown_key(exc.key)}") from None
    except (ValueError, RecursionError):
        raise ProtocolError("bad_json", f"{what} is not valid JSON") from None
    where = _lone_surrogate_at(data)
    if where is not None:
        shown = _shown_key(where) if where else "the value"
        raise ProtocolError(
            "bad_json", f"{what} has a lone UTF-16 surrogate (invalid Unicode) in {shown}"
        )
    return data


def toml_depth(text: str) -> int:
    """How deep arrays and inline tables nest in TOML text (strings and comments skipped).

    >>> toml_depth('a = [[1], {b = [2]}]  # [[[')
    3
    """
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "\"'":
            triple = text.startswith(c * 3, i)
            quote = c * 3 if triple else c
            j = i + len(quote)
            while j < n:
                if c == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(quote, j) or (not triple and text[j] == "\n"):
                    break
                j += 1
            i = j + len(quote)
            continue
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def valid_token(value: object) -> bool:
    """Whether ``value`` has the shape of a token (URL-safe, 20 to 128 characters)."""
    return isinstance(value, str) and _TOKEN_RE.fullmatch(value) is not None


# ---------------------------------------------------------------- WebSocket


@dataclass(frozen=True, slots=True)
class Hello:
    """``hello``: the first message, with a seat token or a watch token."""

    token: str
    ref: str | int | None = None


@dataclass(frozen=True, slots=True)
class Act:
    """``act``: play action id ``action``; ``seq`` is the action count the client saw."""

    action: int
    seq: int
    ref: str | int | None = None


@dataclass(frozen=True, slots=True)
class HintRequest:
    """``hint``: ask the AI to rate the legal actions of the player's own view."""

    ref: str | int | None = None


@dataclass(frozen=True, slots=True)
class Ping:
    """``ping``: the server answers ``pong``."""

    ref: str | int | None = None


ClientMessage = Hello | Act | HintRequest | Ping

# type -> {field: kind}; every field listed is required.
CLIENT_TYPES: Final[dict[str, dict[str, str]]] = {
    "hello": {"token": "token"},
    "act": {"action": "integer", "seq": "integer"},
    "hint": {},
    "ping": {},
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ref(data: Mapping[str, Any]) -> str | int | None:
    ref = data.get("ref")
    if ref is None:
        return None
    if _is_int(ref) and abs(ref) < 2**53:
        return int(ref)
    if isinstance(ref, str) and len(ref) <= MAX_REF_CHARS:
        return ref
    raise ProtocolError(
        "bad_field", f"ref must be an integer or a string of at most {MAX_REF_CHARS} characters"
    )


def parse_client_message(frame: str | bytes) -> ClientMessage:
    """Validate one WebSocket frame from a client.

    Raises:
        ProtocolError: ``too_large``, ``bad_json`` (also a repeated key or a lone
            UTF-16 surrogate), ``unknown_type``,
            ``missing_field``, ``bad_field`` or ``unexpected_field``, naming
            the field and what is allowed.
    """
    size = len(frame.encode("utf-8")) if isinstance(frame, str) else len(frame)
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            "too_large", f"message of {size} bytes is too large: at most {MAX_MESSAGE_BYTES}"
        )
    data = decode_json(frame)
    if not isinstance(data, dict):
        raise ProtocolError("bad_json", "message must be a JSON object with a 'type'")
    ref = _ref(data)
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in CLIENT_TYPES:
        shown = repr(kind) if isinstance(kind, str) and len(kind) <= 40 else "missing or invalid"
        raise ProtocolError(
            "unknown_type",
            f"unknown message type {shown}: allowed {', '.join(CLIENT_TYPES)}",
            ref=ref,
        )
    schema = CLIENT_TYPES[kind]
    for key in data:
        if key not in schema and key not in ("type", "ref"):
            shown_key = key if len(key) <= 40 else key[:40] + "..."
            raise ProtocolError(
                "unexpected_field",
                f"{kind!r} has no field {shown_key!r}: its fields are "
                + (", ".join(schema) if schema else "none besides type and ref"),
                ref=ref,
            )
    for key, field_kind in schema.items():
        if key not in data:
            shown_kind = "string" if field_kind == "token" else field_kind
            raise ProtocolError(
                "missing_field", f"{kind!r} needs the field {key!r} ({shown_kind})", ref=ref
            )
    if kind == "hello":
        token = data["token"]
        if not valid_token(token):
            raise ProtocolError(
                "bad_field", "token must be a string of 20 to 128 URL-safe characters", ref=ref
            )
        return Hello(token, ref)
    if kind == "act":
        action, seq = data["action"], data["seq"]
        if not _is_int(action) or not 0 <= action < NUM_ACTIONS:
            raise ProtocolError(
                "bad_field",
                f"action must be an integer action id from 0 to {NUM_ACTIONS - 1}",
                ref=ref,
            )
        if not _is_int(seq) or not 0 <= seq < 1_000_000:
            raise ProtocolError("bad_field", "seq must be a non-negative integer", ref=ref)
        return Act(int(action), int(seq), ref)
    if kind == "hint":
        return HintRequest(ref)
    return Ping(ref)


# --------------------------------------------------------------------- HTTP


@dataclass(frozen=True, slots=True)
class NewGameRequest:
    """Body of ``POST /api/games``."""

    mode: str
    agent: str | None
    """The AI strength (mode "ai"); None: the server's default."""
    rules: str
    house_rules: str | None
    rounds: int | None
    seat: int
    name: str
    seed: int | None


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """Body of ``POST /api/join``: an invite token."""

    invite: str
    name: str


@dataclass(frozen=True, slots=True)
class InviteRequest:
    """Body of ``POST /api/games/{game}/invite-qr``: the host's seat token and the
    invite it holds."""

    token: str
    invite: str


@dataclass(frozen=True, slots=True)
class TokenRequest:
    """Body of the record and replay requests: a seat or watch token."""

    token: str


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """Body of ``POST /api/score`` (the score keeper)."""

    rules: str
    house_rules: str | None
    cards: tuple[str, ...]
    round_number: int
    koikoi_self: int
    opponent_koikoi: bool


@dataclass(frozen=True, slots=True)
class KeeperRound:
    """One round reported to the match score keeper: the winner (0, 1 or ``None`` for
    nobody), the winner's captured cards (codes) and each player's koi-koi calls."""

    winner: int | None
    cards: tuple[str, ...]
    koikoi: tuple[int, int]


@dataclass(frozen=True, slots=True)
class KeeperRequest:
    """Body of ``POST /api/keeper``: a whole match kept on the page, sent back whole."""

    rules: str
    house_rules: str | None
    rounds: int | None
    first_dealer: int | None
    names: tuple[str, str]
    played: tuple[KeeperRound, ...]
    pending: KeeperRound | None


def _object(body: object, what: str) -> Mapping[str, Any]:
    if not isinstance(body, dict):
        raise ProtocolError("bad_json", f"{what} must be a JSON object")
    return body


def _no_extra(data: Mapping[str, Any], allowed: tuple[str, ...], what: str) -> None:
    for key in data:
        if key not in allowed:
            shown = key if len(key) <= 40 else key[:40] + "..."
            raise ProtocolError(
                "unexpected_field", f"{what} has no field {shown!r}: allowed {', '.join(allowed)}"
            )


def _opt_str(data: Mapping[str, Any], key: str, limit: int) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ProtocolError("bad_field", f"{key} must be a string")
    if len(value) > limit:
        raise ProtocolError("too_large", f"{key} is too long: at most {limit} characters")
    return value


def _opt_int(data: Mapping[str, Any], key: str, lo: int, hi: int) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not _is_int(value) or not lo <= value <= hi:
        raise ProtocolError("bad_field", f"{key} must be an integer from {lo} to {hi}")
    return int(value)


def person_name(name: str) -> str:
    """A display name a person may take, tidied (:func:`~koikoi.features.names.check_name`).

    Checked here, before any store sees it, the same on every store: no control
    character (Unicode category ``Cc``: NUL, line breaks, escapes...) nor lone
    surrogate (``Cs``, which no database can encode), and not someone else's name.

    Raises:
        ProtocolError: ``bad_field``, naming the field and what is wrong.

    >>> person_name(" Aoi ")
    'Aoi'
    >>> try:
    ...     person_name("A" + chr(0))
    ... except ProtocolError as exc:
    ...     print(exc.message.split(":")[0])
    name must not contain control characters (found U+0000)
    """
    for char in name:
        if unicodedata.category(char) in ("Cc", "Cs"):
            raise ProtocolError(
                "bad_field",
                f"name must not contain control characters (found U+{ord(char):04X}): "
                "use letters, digits, spaces and punctuation",
            )
    try:
        return check_name(name)  # not an AI's title, a guest's name or "You"
    except InvalidInputError as exc:
        raise ProtocolError("bad_field", str(exc)) from None


def _name(data: Mapping[str, Any]) -> str:
    name = _opt_str(data, "name", MAX_NAME_CHARS)
    if name is None:
        return ""
    return person_name(name)


def _house_rules(data: Mapping[str, Any]) -> str | None:
    house = _opt_str(data, "house_rules", MAX_HOUSE_RULES_CHARS)
    if house is None or not house.strip():
        return None
    depth = toml_depth(house)
    if depth > MAX_HOUSE_RULES_DEPTH:
        raise ProtocolError(
            "rules",
            f"house rules nest arrays or inline tables {depth} deep: "
            f"at most {MAX_HOUSE_RULES_DEPTH}",
        )
    return house


def _preset(data: Mapping[str, Any]) -> str:
    rules = data.get("rules", "nintendo")
    if not isinstance(rules, str) or rules not in PRESET_NAMES:
        raise ProtocolError(
            "rules", f"unknown rules preset {str(rules)[:40]!r}: allowed {', '.join(PRESET_NAMES)}"
        )
    return rules


def parse_new_game(body: object, *, allow_seed: bool = False) -> NewGameRequest:
    """Validate the body of ``POST /api/games``.

    Fields: ``mode`` ("ai", "friend" or "tutorial"; a tutorial takes only
    ``name``), ``agent`` (AI mode: one of
    :data:`AGENT_CHOICES`, a level or an older name), ``rules`` (a preset name),
    ``house_rules`` (TOML text, used instead of the preset when not blank; at most
    :data:`MAX_HOUSE_RULES_CHARS` characters, arrays and inline tables nested at
    most :data:`MAX_HOUSE_RULES_DEPTH` deep),
    ``rounds`` (1..120), ``seat``
    (0 or 1, the creator's seat), ``name``, and ``seed`` (only when the server
    allows it, for tests).
    """
    data = _object(body, "the new game request")
    _no_extra(
        data,
        ("mode", "agent", "rules", "house_rules", "rounds", "seat", "name", "seed"),
        "the new game request",
    )
    mode = data.get("mode")
    if mode not in MODES:
        raise ProtocolError("bad_field", f"mode must be one of {', '.join(MODES)}")
    if mode == "tutorial":
        # The guided round's deal, rules, opponent and seat are fixed.
        _no_extra(data, ("mode", "name"), "a tutorial request")
        return NewGameRequest(
            mode="tutorial",
            agent=None,
            rules="nintendo",
            house_rules=None,
            rounds=None,
            seat=0,
            name=_name(data),
            seed=None,
        )
    agent = _opt_str(data, "agent", 40)
    if mode == "ai":
        if agent is not None and agent not in AGENT_CHOICES:
            raise ProtocolError(
                "bad_field",
                f"agent {agent!r} is not offered: allowed {', '.join(LEVEL_AGENTS)} "
                f"(level:8 is expert; also the older {', '.join(LEGACY_AGENTS)})",
            )
    elif agent is not None:
        raise ProtocolError("bad_field", "agent is only for mode 'ai'")
    house = _house_rules(data)
    seed = _opt_int(data, "seed", 0, 2**62)
    if seed is not None and not allow_seed:
        raise ProtocolError("unexpected_field", "this server does not accept a seed")
    return NewGameRequest(
        mode=str(mode),
        agent=agent,
        rules=_preset(data),
        house_rules=house,
        rounds=_opt_int(data, "rounds", 1, 120),
        seat=_opt_int(data, "seat", 0, 1) or 0,
        name=_name(data),
        seed=seed,
    )


def parse_join(body: object) -> JoinRequest:
    """Validate the body of ``POST /api/join``: ``invite`` and an optional ``name``."""
    data = _object(body, "the join request")
    _no_extra(data, ("invite", "name"), "the join request")
    invite = data.get("invite")
    if invite is None:
        raise ProtocolError("missing_field", "the join request needs the field 'invite'")
    if not valid_token(invite):
        raise ProtocolError("bad_field", "invite must be a string of 20 to 128 URL-safe characters")
    return JoinRequest(str(invite), _name(data))


def parse_token_request(body: object) -> TokenRequest:
    """Validate ``{"token": ...}`` (record and replay requests)."""
    data = _object(body, "the request")
    _no_extra(data, ("token",), "the request")
    token = data.get("token")
    if token is None:
        raise ProtocolError("missing_field", "the request needs the field 'token'")
    if not valid_token(token):
        raise ProtocolError("bad_field", "token must be a string of 20 to 128 URL-safe characters")
    return TokenRequest(str(token))


def parse_invite_request(body: object) -> InviteRequest:
    """Validate ``{"token": ..., "invite": ...}`` (the invite's QR code).

    >>> parse_invite_request({"token": "t" * 43, "invite": "i" * 43}).invite == "i" * 43
    True
    """
    data = _object(body, "the invite request")
    _no_extra(data, ("token", "invite"), "the invite request")
    values: list[str] = []
    for name in ("token", "invite"):
        value = data.get(name)
        if value is None:
            raise ProtocolError("missing_field", f"the invite request needs the field {name!r}")
        if not valid_token(value):
            raise ProtocolError(
                "bad_field", f"{name} must be a string of 20 to 128 URL-safe characters"
            )
        values.append(str(value))
    return InviteRequest(values[0], values[1])


def parse_score_request(body: object) -> ScoreRequest:
    """Validate the body of ``POST /api/score``.

    Fields: ``cards`` (list of card codes or one string), ``rules`` (preset),
    ``house_rules`` (TOML), ``round`` (1..120), ``koikoi_self`` (0..20),
    ``opponent_koikoi`` (boolean).
    """
    data = _object(body, "the score request")
    _no_extra(
        data,
        ("cards", "rules", "house_rules", "round", "koikoi_self", "opponent_koikoi"),
        "the score request",
    )
    cards = data.get("cards")
    if cards is None:
        raise ProtocolError("missing_field", "the score request needs the field 'cards'")
    if isinstance(cards, str):
        if len(cards) > 400:
            raise ProtocolError("too_large", "cards is too long")
        words = tuple(cards.replace(",", " ").split())
    elif isinstance(cards, list) and all(isinstance(c, str) for c in cards) and len(cards) <= 48:
        words = tuple(cards)
    else:
        raise ProtocolError("bad_field", "cards must be a list of at most 48 card codes")
    for word in words:
        if not _CARD_WORD_RE.fullmatch(word):
            raise ProtocolError("bad_field", f"not a card code: {word[:20]!r}")
    opp = data.get("opponent_koikoi", False)
    if not isinstance(opp, bool):
        raise ProtocolError("bad_field", "opponent_koikoi must be true or false")
    return ScoreRequest(
        rules=_preset(data),
        house_rules=_house_rules(data),
        cards=words,
        round_number=_opt_int(data, "round", 1, 120) or 1,
        koikoi_self=_opt_int(data, "koikoi_self", 0, 20) or 0,
        opponent_koikoi=opp,
    )


MAX_KEEPER_ROUNDS: Final = 120
_KEEPER_PLAYERS: Final = ("A", "B")


def _keeper_player(value: object, what: str, *, nobody: bool) -> int | None:
    if value in _KEEPER_PLAYERS:
        return _KEEPER_PLAYERS.index(str(value))
    if nobody and value in (None, "nobody"):
        return None
    allowed = '"A", "B" or "nobody"' if nobody else '"A" or "B"'
    raise ProtocolError("bad_field", f"{what} must be {allowed}, not {str(value)[:20]!r}")


def _cards(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    words = value if isinstance(value, list) else None
    if words is None or len(words) > 48 or not all(isinstance(c, str) for c in words):
        raise ProtocolError("bad_field", f"{what} must be a list of at most 48 card codes")
    for word in words:
        if not _CARD_WORD_RE.fullmatch(word):
            raise ProtocolError("bad_field", f"{what}: not a card code: {word[:20]!r}")
    return tuple(words)


def _keeper_round(value: object, what: str) -> KeeperRound:
    data = _object(value, what)
    _no_extra(data, ("winner", "cards", "koikoi"), what)
    winner = _keeper_player(data.get("winner"), f"{what}: winner", nobody=True)
    cards = _cards(data.get("cards"), f"{what}: cards")
    calls_data = data.get("koikoi", {})
    if not isinstance(calls_data, dict):
        raise ProtocolError("bad_field", f'{what}: koikoi must be an object such as {{"A": 1}}')
    calls = [0, 0]
    for key, count in calls_data.items():
        p = _keeper_player(key, f"{what}: koikoi", nobody=False)
        if not _is_int(count) or not 0 <= count <= 20:
            raise ProtocolError(
                "bad_field", f"{what}: koikoi.{key} must be a count from 0 to 20, not {count!r}"
            )
        calls[p or 0] = int(count)
    return KeeperRound(winner, cards, (calls[0], calls[1]))


def parse_keeper_request(body: object) -> KeeperRequest:
    """Validate the body of ``POST /api/keeper`` (the match score keeper).

    Fields: ``rules`` (preset), ``house_rules`` (TOML), ``rounds`` (the match
    length), ``first_dealer`` ("A" or "B"), ``names`` (two names), ``played``
    (the rounds so far, each ``{"winner", "cards", "koikoi"}``, winner "A", "B"
    or "nobody") and ``pending`` (the round being entered, to preview).
    """
    data = _object(body, "the keeper request")
    _no_extra(
        data,
        ("rules", "house_rules", "rounds", "first_dealer", "names", "played", "pending"),
        "the keeper request",
    )
    dealer = data.get("first_dealer")
    first_dealer = None if dealer is None else _keeper_player(dealer, "first_dealer", nobody=False)
    raw_names = data.get("names", ["A", "B"])
    if not (
        isinstance(raw_names, list)
        and len(raw_names) == 2
        and all(isinstance(n, str) and 0 < len(n.strip()) <= MAX_NAME_CHARS for n in raw_names)
    ):
        raise ProtocolError(
            "bad_field", f"names must be two names of 1 to {MAX_NAME_CHARS} characters"
        )
    names = (" ".join(raw_names[0].split()), " ".join(raw_names[1].split()))
    if names[0].casefold() == names[1].casefold():
        raise ProtocolError("bad_field", "names: the two players need different names")
    played_data = data.get("played", [])
    if not isinstance(played_data, list) or len(played_data) > MAX_KEEPER_ROUNDS:
        raise ProtocolError(
            "bad_field", f"played must be a list of at most {MAX_KEEPER_ROUNDS} rounds"
        )
    played = tuple(_keeper_round(r, f"round {i}") for i, r in enumerate(played_data, start=1))
    pending_data = data.get("pending")
    pending = None if pending_data is None else _keeper_round(pending_data, "the new round")
    return KeeperRequest(
        rules=_preset(data),
        house_rules=_house_rules(data),
        rounds=_opt_int(data, "rounds", 1, MAX_KEEPER_ROUNDS),
        first_dealer=first_dealer,
        names=names,
        played=played,
        pending=pending,
    )

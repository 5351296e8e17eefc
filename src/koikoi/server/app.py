"""The ASGI app of the web game (Starlette): pages, JSON API, card art, WebSocket.

:func:`create_app` builds the app; ``koikoi serve`` runs it with uvicorn. The
transport only translates: JSON bodies and WebSocket frames are validated by
:mod:`~koikoi.server.protocol`, handed to the :class:`~koikoi.server.hub.Hub`
(which calls the engine), and errors come back as ``{"type": "error", ...}``.

Every HTTP response carries a strict Content-Security-Policy (no inline
script or style, everything from the server itself) and the usual hardening
headers, errors included: every error is ``{"type": "error", "code", "message"}``
JSON, and an unexpected fault answers ``server_error`` (500) and is logged as
one line (the exception's type and where it was raised; no traceback). Request
logs are JSON lines without query strings; tokens travel only in JSON bodies,
WebSocket frames and URL fragments, never in paths.

A WebSocket is admitted by the hub (caps per address and without ``hello``),
must say ``hello`` within :attr:`~.config.ServerConfig.hello_timeout` and send
only text frames; refusals close it with a code of
:data:`~.protocol.CLOSE_CODES` and a reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import PathLike, StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from koikoi import i18n
from koikoi.features.keeper import (
    PLAYER_LETTERS,
    NoYakuError,
    RoundEntry,
    ScoreSheet,
    needs_first_dealer,
)
from koikoi.features.opponents import LEVEL_CHOICES
from koikoi.game import __version__
from koikoi.game.cards import parse_cards
from koikoi.game.errors import InvalidInputError, KoiKoiError, RulesError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules, load_rules_text
from koikoi.game.scoring import MULTIPLIER_NAMES, month_of_round, score_cards
from koikoi.server import catalog, pages
from koikoi.server.config import ServerConfig
from koikoi.server.connections import CLOSE, Connection, ConnectionRefused
from koikoi.server.hub import Hub
from koikoi.server.invites import invite_link, invite_qr_svg
from koikoi.server.limits import ERROR_SCOPE_KEY, RequestBodyLimits
from koikoi.server.logs import LOGGER_NAME, fault_fields, log_event
from koikoi.server.players import (
    PlayerService,
    parse_key_request,
    parse_link_request,
    parse_quick_request,
)
from koikoi.server.protocol import (
    ERROR_CODES,
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    KeeperRound,
    ProtocolError,
    decode_json,
    encode,
    error_message,
    parse_client_message,
    parse_invite_request,
    parse_join,
    parse_keeper_request,
    parse_new_game,
    parse_score_request,
    parse_token_request,
)
from koikoi.server.records import replay_frames
from koikoi.server.storage import Storage, default_database_url

__all__ = ["CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "create_app"]

log = logging.getLogger(LOGGER_NAME)
R = TypeVar("R")
MAX_BODY_BYTES: Final = 64 * 1024
MAX_RECORD_BYTES: Final = 2 * 1024 * 1024

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SVG_POLICY: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
SECURITY_HEADERS: Final[tuple[tuple[str, str], ...]] = (
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
    ("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=()"),
)

_STATUS: Final[dict[str, int]] = {
    "too_large": 413,
    "unknown_token": 404,
    "not_found": 404,
    "method_not_allowed": 405,
    "invite_used": 409,
    "unknown_player": 404,
    "spectator": 403,
    "already_linked": 409,
    "not_finished": 409,
    "rate_limited": 429,
    "server_error": 503,
}
_HTTP_CODES: Final[dict[int, str]] = {
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    429: "rate_limited",
}
"""Error codes of Starlette's own HTTP errors (unknown paths, methods, big bodies)."""
_ERROR_SCOPE_KEY: Final = ERROR_SCOPE_KEY
"""Where an endpoint leaves the code of its error response for the request log."""
FAULT_MESSAGE: Final = "the server met an unexpected fault; nothing was changed; try again"


class SecurityAndLogMiddleware:
    """Adds the security headers to every HTTP response, turns an unexpected exception
    into a JSON ``server_error`` (500), and logs each request as one JSON line (with
    the error code of a refused request, and the type and place of a fault)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        response_started = False
        fault: dict[str, str] = {}

        async def send_with_headers(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = int(message["status"])
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS:
                    if name not in headers:
                        headers[name] = value
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # logged below as one line; the client gets JSON
            fault = fault_fields(exc)
            scope[_ERROR_SCOPE_KEY] = "server_error"
            if not response_started:
                body = encode(error_message("server_error", FAULT_MESSAGE)).encode()
                await send_with_headers(
                    {
                        "type": "http.response.start",
                        "status": 500,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"),
                        ],
                    }
                )
                await send_with_headers({"type": "http.response.body", "body": body})
        finally:
            path = str(scope.get("path", ""))
            # Card images and static files are not worth a line each.
            if not path.startswith(("/static/", "/cards/")) or status >= 400:
                client = scope.get("client")
                code = scope.get(_ERROR_SCOPE_KEY)
                log_event(
                    log,
                    "request",
                    logging.ERROR if fault else logging.INFO,
                    method=scope.get("method"),
                    path=path[:200],
                    status=status,
                    ms=round((time.perf_counter() - started) * 1000, 2),
                    client=client[0] if client else None,
                    **({"code": code} if code else {}),
                    **fault,
                )


def _hub(request: Request | WebSocket) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def _error(exc: ProtocolError, request: Request) -> JSONResponse:
    """The JSON error response of ``exc``, with its HTTP status (the request log
    line names the code)."""
    request.scope[_ERROR_SCOPE_KEY] = exc.code
    status = _STATUS.get(exc.code, 400)
    return JSONResponse(exc.to_message(), status_code=status, headers={"cache-control": "no-store"})


def _wants_html(request: Request) -> bool:
    """Whether ``request`` is a browser's navigation, to be answered with a page rather
    than JSON: its ``Accept`` header names ``text/html`` and its path is not under
    ``/api/`` (API clients always get JSON)."""
    if request.url.path.startswith("/api/"):
        return False
    accept = request.headers.get("accept", "").lower()
    return any(part.split(";")[0].strip() == "text/html" for part in accept.split(","))


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (unknown path or method, body too large) as JSON; an
    unknown path that a browser asks for (:func:`_wants_html`) as the 404 page, with a
    way home. (A browser's GET never meets 405: the routes that take only POST are all
    under ``/api/``.)"""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404 and _wants_html(request):
        request.scope[_ERROR_SCOPE_KEY] = "not_found"
        return HTMLResponse(
            pages.not_found_page(), status_code=404, headers={"cache-control": "no-store"}
        )
    code = _HTTP_CODES.get(status, "server_error")
    detail = exc.detail if isinstance(exc, HTTPException) else ""
    message = ERROR_CODES[code] if code == "server_error" else f"{detail or ERROR_CODES[code]}"
    response = _error(ProtocolError(code, message), request)
    response.status_code = status
    if isinstance(exc, HTTPException) and exc.headers:
        response.headers.update(exc.headers)
    return response


def _ok(data: Any) -> JSONResponse:
    return JSONResponse(data, headers={"cache-control": "no-store"})


async def _json_body(request: Request, limit: int = MAX_BODY_BYTES) -> Any:
    ctype = request.headers.get("content-type", "")
    if not ctype.split(";")[0].strip().lower() == "application/json":
        raise ProtocolError("bad_json", "send the body as application/json")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ProtocolError("too_large", f"the body is larger than {limit} bytes")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ProtocolError("too_large", f"the body is larger than {limit} bytes")
        chunks.append(chunk)
    return decode_json(b"".join(chunks), "the body")


def _client(request: Request) -> str:
    return request.client.host if request.client else "?"


def _rate(request: Request, kind: str) -> None:
    if not _hub(request).allow_http(f"{kind}:{_client(request)}"):
        raise ProtocolError("rate_limited", "too many requests; try again in a moment")


# ----------------------------------------------------------------- pages


def _page(path: str) -> Any:
    html = pages.page(path)  # assembled once, when the app is built

    async def endpoint(request: Request) -> Response:
        return HTMLResponse(html, headers={"cache-control": "no-cache"})

    return endpoint


async def healthz(request: Request) -> Response:
    hub = _hub(request)
    data = hub.health()
    try:
        ok = await anyio.to_thread.run_sync(hub.storage.ping)
    except Exception:
        ok = False
    data["database"] = "ok" if ok else "error"
    if not ok:
        data["status"] = "degraded"
    return JSONResponse(data, status_code=200 if ok else 503, headers={"cache-control": "no-store"})


_GAUGES: Final[dict[str, tuple[str, str]]] = {
    "rooms": ("rooms", "games in memory"),
    "connections": ("connections", "open WebSocket connections"),
    "unauthenticated": ("connections_unauthenticated", "open connections without hello yet"),
    "max_per_address": (
        "connections_max_per_address",
        "open connections of the client address with the most",
    ),
    "addresses": ("connection_addresses", "client addresses with an open connection"),
    "in_games": ("connections_in_games", "connections that said hello (players, spectators)"),
    "inflight": ("inflight_writes", "actions being stored"),
    "ai_workers": ("ai_workers", "AI worker processes (started or starting)"),
    "ai_workers_ready": ("ai_workers_ready", "AI worker processes ready (agents loaded)"),
    "ai_workers_busy": ("ai_workers_busy", "AI worker processes making a decision"),
    "ai_queue": ("ai_queue", "AI decisions waiting for a worker"),
    "ai_queue_groups": ("ai_queue_groups", "client addresses with an AI decision waiting"),
}


async def metrics(request: Request) -> Response:
    """Prometheus text format; JSON (the latency, counters and health) for
    ``Accept: application/json``."""
    hub = _hub(request)
    health = hub.health()
    worker = hub.metrics.worker(hub.cluster.node if hub.cluster is not None else None)
    if "application/json" in request.headers.get("accept", ""):
        data = hub.metrics.snapshot()
        data.update(health)
        data["worker"] = worker
        return _ok(data)
    gauges = {name: (float(health[key]), text) for key, (name, text) in _GAUGES.items()}
    return Response(
        hub.metrics.prometheus(gauges, worker),
        media_type="text/plain; version=0.0.4",
        headers={"cache-control": "no-store"},
    )


async def api_messages(request: Request) -> Response:
    """The message catalog of one language (English message → translation)."""
    lang = request.path_params["lang"]
    if lang not in i18n.LANGUAGES:
        allowed = ", ".join(i18n.LANGUAGES)
        return _error(
            ProtocolError("not_found", f"no messages for language {lang!r}; allowed: {allowed}"),
            request,
        )
    return JSONResponse(dict(i18n.catalog(lang)), headers={"cache-control": "no-cache"})


async def api_config(request: Request) -> Response:
    hub = _hub(request)
    presets = []
    for name in PRESET_NAMES:
        rules = get_rules(name)
        presets.append(
            {"name": name, "description": rules.description, "rounds": rules.game.rounds}
        )
    return JSONResponse(
        {
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "presets": presets,
            "agents": [
                choice.to_dict() for choice in LEVEL_CHOICES if choice.agent in hub.offered_agents
            ],
            "default_agent": hub.default_agent,
            "hint_agent": hub.config.hint_agent,
            "cards": catalog.card_catalog(),
            "yaku": catalog.yaku_catalog(),
            "multipliers": MULTIPLIER_NAMES,
            "errors": ERROR_CODES,
            "max_message_bytes": MAX_MESSAGE_BYTES,
            "allow_seed": hub.config.allow_seed,
            "art": catalog.art_source(),
        },
        headers={"cache-control": "no-cache"},
    )


async def api_rules(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in PRESET_NAMES:
        return _error(
            ProtocolError("rules", f"unknown preset: allowed {', '.join(PRESET_NAMES)}"), request
        )
    rules = get_rules(name)
    return JSONResponse(
        {"rules": rules.to_dict(), "toml": rules.to_toml(), "yaku_points": rules.yaku_points()}
    )


BADGE_VALUES: Final = {"on": True, "off": False}
"""Values of the card images' ``badge`` query parameter (the code badge; default on)."""


async def card_svg(request: Request) -> Response:
    name = str(request.path_params["name"])
    value = request.query_params.get("badge", "on")
    if value not in BADGE_VALUES:
        allowed = ", ".join(BADGE_VALUES)
        return _error(
            ProtocolError("bad_field", f"badge must be one of {allowed}, not {value[:20]!r}"),
            request,
        )
    badge = BADGE_VALUES[value]
    if name == "sprite":
        text: str | None = catalog.sprite_sheet(badge=badge)
    else:
        text = catalog.card_image(name, 100, badge=badge)
    if text is None:
        return _error(ProtocolError("not_found", "no such card"), request)
    return Response(
        text,
        media_type="image/svg+xml",
        headers={
            "cache-control": "public, max-age=86400",
            "content-security-policy": SVG_POLICY,
        },
    )


class VersionedFiles(StaticFiles):
    """Static files linked with their content's hash (``?v=``), so cached for a year.

    Serves ``/static/fonts/``: fonts.css links the bundled font as
    ``NotoSansCJKjp-Regular-subset.woff2?v=<hash>`` (scripts/subset-font.py writes
    both), so a new subset gets a new URL.
    """

    def file_response(
        self,
        full_path: PathLike,
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["cache-control"] = "public, max-age=31536000, immutable"
        return response


# ------------------------------------------------------------------- API


async def api_new_game(request: Request) -> Response:
    hub = _hub(request)
    try:
        _rate(request, "create")
        req = parse_new_game(await _json_body(request), allow_seed=hub.config.allow_seed)
        return _ok(await hub.create_game(req, _client(request)))
    except ProtocolError as exc:
        return _error(exc, request)


async def api_join(request: Request) -> Response:
    try:
        _rate(request, "join")
        req = parse_join(await _json_body(request))
        return _ok(await _hub(request).join(req))
    except ProtocolError as exc:
        return _error(exc, request)


async def api_invite_qr(request: Request) -> Response:
    """The QR code (SVG) of a friend game's invite link, for its host only: the body
    holds the host's seat token and the invite; the link's address is the one the
    request came to, as the page's own link."""
    game_id = str(request.path_params["game"])
    try:
        _rate(request, "invite")
        req = parse_invite_request(await _json_body(request))
        await _hub(request).check_invite(game_id, req.token, req.invite)
    except ProtocolError as exc:
        return _error(exc, request)
    svg = invite_qr_svg(invite_link(str(request.base_url), req.invite))
    return Response(
        svg,
        media_type="image/svg+xml",
        headers={"cache-control": "no-store", "content-security-policy": SVG_POLICY},
    )


async def api_record(request: Request) -> Response:
    game_id = str(request.path_params["game"])
    try:
        _rate(request, "record")
        req = parse_token_request(await _json_body(request))
        text = await _hub(request).record(game_id, req.token)
    except ProtocolError as exc:
        return _error(exc, request)
    return Response(
        text,
        media_type="application/json",
        headers={
            "cache-control": "no-store",
            "content-disposition": f'attachment; filename="koikoi-{game_id}.json"',
        },
    )


def _replay_language(request: Request) -> str:
    """The language of a replay's words: the ``lang`` query parameter (default English)."""
    lang = request.query_params.get("lang", "en")
    if lang not in i18n.LANGUAGES:
        allowed = ", ".join(i18n.LANGUAGES)
        raise ProtocolError("bad_field", f"lang must be one of {allowed}, not {lang[:20]!r}")
    return lang


async def api_game_replay(request: Request) -> Response:
    game_id = str(request.path_params["game"])
    try:
        _rate(request, "record")
        lang = _replay_language(request)
        req = parse_token_request(await _json_body(request))
        return _ok(await _hub(request).replay(game_id, req.token, lang=lang))
    except ProtocolError as exc:
        return _error(exc, request)


async def api_replay_upload(request: Request) -> Response:
    """Replay frames of an uploaded record: the body is the record, or
    ``{"record": ..., "analysis": ...}`` (the analysis optional, as ``koikoi analyze
    --json`` writes it)."""
    try:
        _rate(request, "record")
        lang = _replay_language(request)
        body = await _json_body(request, MAX_RECORD_BYTES)
        analysis = None
        if isinstance(body, dict) and "record" in body and set(body) <= {"record", "analysis"}:
            analysis = body.get("analysis")
            body = body["record"]
        try:
            data = await anyio.to_thread.run_sync(
                functools.partial(replay_frames, body, analysis=analysis, lang=lang)
            )
        except KoiKoiError as exc:
            raise ProtocolError("bad_record", str(exc)) from None
    except ProtocolError as exc:
        return _error(exc, request)
    return _ok(data)


def _keeper_rules(preset: str, house: str | None) -> Rules:
    try:
        return load_rules_text(house, source="house rules") if house else get_rules(preset)
    except RulesError as exc:
        raise ProtocolError("rules", str(exc)) from None


async def api_score(request: Request) -> Response:
    """The score keeper: score a capture pile with :func:`koikoi.game.scoring.score_cards`."""
    try:
        _rate(request, "score")
        req = parse_score_request(await _json_body(request))
        rules = _keeper_rules(req.rules, req.house_rules)
        try:
            pile = parse_cards(" ".join(req.cards))
        except KoiKoiError as exc:
            raise ProtocolError("bad_field", str(exc)) from None
        settlement = score_cards(
            rules,
            pile,
            round_number=req.round_number,
            koikoi_self=req.koikoi_self,
            opponent_koikoi=req.opponent_koikoi,
        )
    except ProtocolError as exc:
        return _error(exc, request)
    return _ok(
        {
            "type": "score",
            "rules": rules.name,
            "round": req.round_number,
            "month": month_of_round(req.round_number),
            "cards": [c for c in catalog.card_catalog() if pile >> c["index"] & 1],
            "settlement": settlement.to_dict(),
            "explain": settlement.explain(),
        }
    )


# --------------------------------------------------------------- players


def _players(request: Request) -> PlayerService:
    service: PlayerService = request.app.state.players
    return service


@dataclass(frozen=True)
class PlayerEndpoint(Generic[R]):
    """One ``POST`` endpoint of the :class:`PlayerService` (``/api/players``,
    ``/api/lobby``): the client's ``rate`` limit, the JSON body validated by
    ``parse``, then the service's ``answer`` (a :class:`ProtocolError` on the way
    answers its error response)."""

    path: str
    rate: str
    parse: Callable[[object], R]
    answer: Callable[[PlayerService, R], Awaitable[dict[str, Any]]]

    async def respond(self, request: Request) -> Response:
        """Answer one request (Starlette's endpoint)."""
        try:
            _rate(request, self.rate)
            req = self.parse(await _json_body(request))
            return _ok(await self.answer(_players(request), req))
        except ProtocolError as exc:
            return _error(exc, request)


_parse_key_and_name = functools.partial(parse_key_request, name=True)
_parse_key_and_game = functools.partial(parse_key_request, game=True)

PLAYER_ENDPOINTS: Final[tuple[PlayerEndpoint[Any], ...]] = (
    # Register a device key (first time) or change the display name.
    PlayerEndpoint("/api/players/me", "player", _parse_key_and_name, PlayerService.me),
    # Link a seat (proved by its token) to the device key's player.
    PlayerEndpoint("/api/players/games", "player", parse_link_request, PlayerService.link),
    # The device key's player's statistics and finished games.
    PlayerEndpoint("/api/players/stats", "player", parse_key_request, PlayerService.stats),
    # Replay frames of one of the device key's player's finished games.
    PlayerEndpoint("/api/players/replay", "record", _parse_key_and_game, PlayerService.replay),
    # Quick match: wait for, or pair with, a player who wants the same rule set.
    PlayerEndpoint("/api/lobby/quick", "player", parse_quick_request, PlayerService.quick),
    # Stop waiting for a quick match.
    PlayerEndpoint("/api/lobby/leave", "player", parse_key_request, PlayerService.leave),
)
"""The player and lobby endpoints, in the order of the routes."""


async def api_leaderboard(request: Request) -> Response:
    """The Glicko-2 ratings of one rule set (``?rules=``, default nintendo)."""
    rules = request.query_params.get("rules", "nintendo")
    try:
        _rate(request, "player")
        if rules not in PRESET_NAMES:
            raise ProtocolError(
                "bad_field", f"rules must be a preset: allowed {', '.join(PRESET_NAMES)}"
            )
        return _ok(await _players(request).leaderboard(rules))
    except ProtocolError as exc:
        return _error(exc, request)


def _keeper_entry(report: KeeperRound, where: str) -> RoundEntry:
    try:
        cards = parse_cards(" ".join(report.cards))
    except KoiKoiError as exc:
        raise ProtocolError("bad_field", f"{where}: {exc}") from None
    if report.winner is None and (cards or any(report.koikoi)):
        raise ProtocolError(
            "bad_field",
            f"{where}: nobody won, so leave out cards and koikoi (only a winner's cards count)",
        )
    return RoundEntry(report.winner, cards, report.koikoi)


async def api_keeper(request: Request) -> Response:
    """The match score keeper: the whole match so far, scored by :mod:`koikoi.features.keeper`.

    The page keeps the match (its rounds as reported) and sends it whole; the answer
    is the score sheet (every round's settlement, the running totals, the match end
    by the rule set's end rules) and a preview of the round being entered. Nothing
    is stored here, so a refused request changes nothing.
    """
    try:
        _rate(request, "score")
        req = parse_keeper_request(await _json_body(request))
        rules = _keeper_rules(req.rules, req.house_rules)
        try:
            sheet = ScoreSheet(
                rules, rounds=req.rounds or 0, first_dealer=req.first_dealer, names=req.names
            )
        except InvalidInputError as exc:
            raise ProtocolError("bad_field", str(exc)) from None
        for i, report in enumerate(req.played, start=1):
            entry = _keeper_entry(report, f"round {i}")
            try:
                sheet = sheet.add(entry)
            except InvalidInputError as exc:
                raise ProtocolError("bad_field", f"round {i}: {exc}") from None
        pending: dict[str, Any] | None = None
        if req.pending is not None and not sheet.is_over:
            entry = _keeper_entry(req.pending, "the new round")
            pending = {"settlement": None, "error": None, "base": 0}
            if entry.winner is not None:
                calls = entry.koikoi
                pending["base"] = score_cards(
                    rules,
                    entry.cards,
                    round_number=sheet.round_number,
                    koikoi_self=calls[entry.winner],
                    opponent_koikoi=calls[1 - entry.winner] > 0,
                ).base
            try:
                pending["settlement"] = sheet.settle(entry).to_dict()
            except NoYakuError as exc:
                pending["error"] = str(exc)
                pending["error_ja"] = exc.words("ja")
            except InvalidInputError as exc:
                pending["error"] = str(exc)
    except ProtocolError as exc:
        return _error(exc, request)
    dealer = sheet.dealer
    return _ok(
        {
            "type": "keeper",
            "sheet": sheet.to_dict(),
            "settlements": [r.settlement.to_dict() for r in sheet.played],
            "needs_first_dealer": needs_first_dealer(rules),
            "next": None
            if sheet.is_over
            else {
                "round": sheet.round_number,
                "month": month_of_round(sheet.round_number),
                "dealer": None if dealer is None else PLAYER_LETTERS[dealer],
            },
            "pending": pending,
        }
    )


# ------------------------------------------------------------- WebSocket


def _same_origin(websocket: WebSocket) -> bool:
    origin = websocket.headers.get("origin")
    if origin is None:
        return True  # not a browser (scripts, tests); the token still decides
    host = websocket.headers.get("host", "")
    return urlsplit(origin).netloc.lower() == host.lower()


async def _sender(websocket: WebSocket, conn: Connection, hub: Hub) -> None:
    while True:
        item = await conn.outbox.get()
        if item is CLOSE:
            code = conn.close_code or (1012 if hub.closing else 1013)
            with contextlib.suppress(Exception):
                await websocket.close(code=code, reason=conn.close_reason)
            return
        if not isinstance(item, tuple):  # pragma: no cover - only tuples and CLOSE are queued
            continue
        text: str = item[0]
        t0: float | None = item[1]
        try:
            await websocket.send_text(text)
        except (WebSocketDisconnect, OSError, RuntimeError):
            return  # the client is gone: the receiving side sees it too
        except Exception as exc:
            # A message that cannot be sent: close rather than stay open and mute.
            hub.metrics.count("send_failures")
            log_event(log, "send failed", logging.ERROR, conn=conn.id, **fault_fields(exc))
            hub.detach(conn)  # the other seat sees this one leave
            with contextlib.suppress(Exception):
                await websocket.close(code=1011, reason="the server could not send a message")
            return
        if t0 is not None:
            hub.metrics.latency(time.perf_counter() - t0)


def _refuse_frame(hub: Hub, conn: Connection, code: int, reason: str, why: str) -> None:
    hub.metrics.count(f"closed_{why}")
    log_event(log, "connection closed", logging.WARNING, conn=conn.id, client=conn.peer, why=why)
    conn.close(code, reason)


async def _receive(websocket: WebSocket, conn: Connection, hub: Hub) -> None:
    """Read frames until the client leaves or the connection is closed."""
    config = hub.config
    deadline = time.monotonic() + config.hello_timeout
    while not conn.closed:
        if conn.live is None:
            failed = hub.hello_waiting_since(conn)  # its hello waits for the database
            if failed is not None:
                deadline = max(deadline, failed + config.outage_hello_wait)
            try:
                message = await asyncio.wait_for(
                    websocket.receive(), max(0.0, deadline - time.monotonic())
                )
            except TimeoutError:
                if conn.live is not None:  # answered meanwhile: the database is back
                    continue
                if hub.hello_waiting_since(conn) is not None:
                    reason = "the database is not answering; reconnect later"
                    _refuse_frame(hub, conn, 1013, reason, "hello_failed")
                else:
                    reason = f"no hello within {config.hello_timeout:g} s"
                    _refuse_frame(hub, conn, 4408, reason, "hello_timeout")
                return
        else:
            message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        t0 = time.perf_counter()
        frame: str | None = message.get("text")
        if frame is None:
            reason = "binary frames are not accepted: send JSON text frames"
            _refuse_frame(hub, conn, 1003, reason, "binary_frame")
            return
        if not conn.bucket.take():
            conn.rate_violations += 1
            hub.metrics.count("rate_limited")
            conn.send(error_message("rate_limited", ERROR_CODES["rate_limited"]))
            if conn.rate_violations >= config.max_rate_violations:
                _refuse_frame(hub, conn, 1013, "too many rate-limited messages", "rate_limited")
            continue
        try:
            msg = parse_client_message(frame)
        except ProtocolError as exc:
            hub.metrics.count("errors")
            log_event(log, "message refused", conn=conn.id, code=exc.code)
            conn.send(exc.to_message())
            continue
        try:
            await hub.handle(conn, msg, t0)
        except ProtocolError as exc:
            hub.metrics.count("errors")
            conn.send(exc.to_message())
        except Exception as exc:
            hub.metrics.count("faults")
            log_event(log, "message failed", logging.ERROR, conn=conn.id, **fault_fields(exc))
            conn.send(error_message("server_error", FAULT_MESSAGE, ref=msg.ref))


async def ws_endpoint(websocket: WebSocket) -> None:
    hub = _hub(websocket)
    client = websocket.client
    peer = client[0] if client else ""
    if not _same_origin(websocket):
        hub.metrics.count("connections_refused")
        hub.log_refusal(peer, "cross-origin")
        await websocket.close(code=1008, reason="cross-origin WebSocket refused")
        return
    try:
        conn = hub.connect(peer)
    except ConnectionRefused as exc:
        with contextlib.suppress(Exception):
            await websocket.accept()
            await websocket.close(code=exc.code, reason=exc.reason)
        return
    sender: asyncio.Task[None] | None = None
    try:
        await websocket.accept()
        sender = asyncio.create_task(_sender(websocket, conn, hub))
        await _receive(websocket, conn, hub)
    except WebSocketDisconnect:
        pass
    except Exception as exc:
        hub.metrics.count("faults")
        log_event(log, "connection failed", logging.ERROR, conn=conn.id, **fault_fields(exc))
        conn.close(1011, "unexpected server fault")
    finally:
        hub.detach(conn)
        if sender is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(sender, timeout=2)
            if not sender.done():
                sender.cancel()


# ------------------------------------------------------------------ app

GC_YOUNG_THRESHOLD: Final = 10_000
"""Net new container objects between two young-generation collections in a server
process (Python's default is 700): most of the server's objects die young, by
reference counting, and fewer collections mean fewer pauses."""


def settle_memory() -> None:
    """Tune the garbage collector of a server process once it has started.

    Every object alive then (modules, compiled tables, the app) is collected once and
    frozen: later full collections do not walk over them again, which made them pause
    the event loop for 40-110 ms under load. Young collections run less often
    (:data:`GC_YOUNG_THRESHOLD`). Process-wide: only the server's entry points call it
    (``create_app(settle_gc=True)``), never a library user or a test.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


def create_app(
    database_url: str | None = None,
    *,
    storage: Storage | None = None,
    config: ServerConfig | None = None,
    settle_gc: bool = False,
) -> Starlette:
    """The web game's ASGI app.

    Args:
        database_url: SQLAlchemy URL (default: :func:`~.storage.default_database_url`,
            a SQLite file); ``postgresql://`` URLs use psycopg 3.
        storage: an existing storage (overrides ``database_url``).
        config: limits and switches (:class:`~.hub.ServerConfig`); default:
            :meth:`ServerConfig.from_env() <.hub.ServerConfig.from_env>`, the defaults
            with the ``KOIKOI_<LIMIT>`` environment variables.
        settle_gc: once started, :func:`settle_memory` (for a process that serves
            only this app: ``koikoi serve``).
    """
    url = database_url or default_database_url()
    settings = config if config is not None else ServerConfig.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = storage if storage is not None else Storage(url)
        hub = Hub(store, settings)
        app.state.hub = hub
        app.state.players = PlayerService(store, hub)
        await hub.start()
        if settle_gc:
            settle_memory()
        try:
            yield
        finally:
            await hub.close()

    routes = [
        *(Route(path, _page(path)) for path in pages.PAGES),
        Route("/healthz", healthz),
        Route("/metrics", metrics),
        Route("/api/config", api_config),
        Route("/api/messages/{lang}", api_messages),
        Route("/api/rules/{name}", api_rules),
        Route("/api/games", api_new_game, methods=["POST"]),
        Route("/api/join", api_join, methods=["POST"]),
        Route("/api/games/{game}/invite-qr", api_invite_qr, methods=["POST"]),
        Route("/api/games/{game}/record", api_record, methods=["POST"]),
        Route("/api/games/{game}/replay", api_game_replay, methods=["POST"]),
        Route("/api/replay", api_replay_upload, methods=["POST"]),
        Route("/api/score", api_score, methods=["POST"]),
        *(Route(e.path, e.respond, methods=["POST"]) for e in PLAYER_ENDPOINTS),
        Route("/api/leaderboard", api_leaderboard),
        Route("/api/keeper", api_keeper, methods=["POST"]),
        Route("/cards/{name}.svg", card_svg),
        WebSocketRoute("/ws", ws_endpoint),
        Mount("/static/fonts", app=VersionedFiles(directory=pages.STATIC_DIR / "fonts")),
        Mount("/static", app=StaticFiles(directory=pages.STATIC_DIR), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityAndLogMiddleware),
            # Inside: its 413 and 408 answers get the headers and a request log line.
            Middleware(
                RequestBodyLimits, max_bytes=MAX_RECORD_BYTES, timeout=settings.body_timeout
            ),
        ],
        exception_handlers={HTTPException: _http_error},
        lifespan=lifespan,
    )
    app.state.database_url = url
    return app

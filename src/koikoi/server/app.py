"""The ASGI app of the web game (Starlette): pages, JSON API, card art, WebSocket.

:func:`create_app` builds the app; ``koikoi serve`` runs it with uvicorn. The
transport only translates: JSON bodies and WebSocket frames are validated by
:mod:`~koikoi.server.protocol`, handed to the :class:`~koikoi.server.hub.Hub`
(which calls the engine), and errors come back as ``{"type": "error", ...}``.

Every HTTP response carries a strict Content-Security-Policy (no inline
script or style, everything from the server itself) and the usual hardening
headers. Request logs are JSON lines without query strings; tokens travel
only in JSON bodies, WebSocket frames and URL fragments, never in paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from koikoi import __version__
from koikoi.cards import parse_cards
from koikoi.errors import KoiKoiError, RulesError
from koikoi.opponents import LEVEL_CHOICES
from koikoi.rules import PRESET_NAMES, Rules, get_rules, load_rules_text
from koikoi.scoring import MULTIPLIER_NAMES, month_of_round, score_cards
from koikoi.server import catalog
from koikoi.server.hub import CLOSE, Connection, Hub, ServerConfig
from koikoi.server.logs import LOGGER_NAME, log_event
from koikoi.server.protocol import (
    ERROR_CODES,
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    ProtocolError,
    parse_client_message,
    parse_join,
    parse_new_game,
    parse_score_request,
    parse_token_request,
)
from koikoi.server.records import replay_frames
from koikoi.server.storage import Storage, default_database_url

__all__ = ["CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "create_app"]

log = logging.getLogger(LOGGER_NAME)
STATIC_DIR: Final = Path(__file__).parent / "static"
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
    "invite_used": 409,
    "not_finished": 409,
    "rate_limited": 429,
    "server_error": 503,
}


class SecurityAndLogMiddleware:
    """Adds the security headers to every HTTP response and logs each request as JSON."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS:
                    if name not in headers:
                        headers[name] = value
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            path = str(scope.get("path", ""))
            # Card images and static files are not worth a line each.
            if not path.startswith(("/static/", "/cards/")) or status >= 400:
                client = scope.get("client")
                log_event(
                    log,
                    "request",
                    method=scope.get("method"),
                    path=path[:200],
                    status=status,
                    ms=round((time.perf_counter() - started) * 1000, 2),
                    client=client[0] if client else None,
                )


def _hub(request: Request | WebSocket) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def _error(exc: ProtocolError) -> JSONResponse:
    status = _STATUS.get(exc.code, 400)
    return JSONResponse(exc.to_message(), status_code=status, headers={"cache-control": "no-store"})


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
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, RecursionError):
        raise ProtocolError("bad_json", "the body is not valid JSON") from None


def _client(request: Request) -> str:
    return request.client.host if request.client else "?"


def _rate(request: Request, kind: str) -> None:
    if not _hub(request).allow_http(f"{kind}:{_client(request)}"):
        raise ProtocolError("rate_limited", "too many requests; try again in a moment")


# ----------------------------------------------------------------- pages


def _page(name: str) -> Any:
    async def endpoint(request: Request) -> Response:
        return FileResponse(STATIC_DIR / name, headers={"cache-control": "no-cache"})

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


async def metrics(request: Request) -> Response:
    hub = _hub(request)
    data = hub.metrics.snapshot()
    data.update(hub.health())
    return _ok(data)


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
        return _error(ProtocolError("rules", f"unknown preset: allowed {', '.join(PRESET_NAMES)}"))
    rules = get_rules(name)
    return JSONResponse(
        {"rules": rules.to_dict(), "toml": rules.to_toml(), "yaku_points": rules.yaku_points()}
    )


async def card_svg(request: Request) -> Response:
    name = str(request.path_params["name"])
    text = catalog.sprite_sheet() if name == "sprite" else catalog.card_image(name, 100)
    if text is None:
        return Response("no such card", status_code=404, media_type="text/plain")
    return Response(
        text,
        media_type="image/svg+xml",
        headers={
            "cache-control": "public, max-age=86400",
            "content-security-policy": SVG_POLICY,
        },
    )


# ------------------------------------------------------------------- API


async def api_new_game(request: Request) -> Response:
    hub = _hub(request)
    try:
        _rate(request, "create")
        req = parse_new_game(await _json_body(request), allow_seed=hub.config.allow_seed)
        return _ok(await hub.create_game(req))
    except ProtocolError as exc:
        return _error(exc)


async def api_join(request: Request) -> Response:
    try:
        _rate(request, "join")
        req = parse_join(await _json_body(request))
        return _ok(await _hub(request).join(req))
    except ProtocolError as exc:
        return _error(exc)


async def api_record(request: Request) -> Response:
    game_id = str(request.path_params["game"])
    try:
        _rate(request, "record")
        req = parse_token_request(await _json_body(request))
        text = await _hub(request).record(game_id, req.token)
    except ProtocolError as exc:
        return _error(exc)
    return Response(
        text,
        media_type="application/json",
        headers={
            "cache-control": "no-store",
            "content-disposition": f'attachment; filename="koikoi-{game_id}.json"',
        },
    )


async def api_game_replay(request: Request) -> Response:
    game_id = str(request.path_params["game"])
    try:
        _rate(request, "record")
        req = parse_token_request(await _json_body(request))
        return _ok(await _hub(request).replay(game_id, req.token))
    except ProtocolError as exc:
        return _error(exc)


async def api_replay_upload(request: Request) -> Response:
    try:
        _rate(request, "record")
        body = await _json_body(request, MAX_RECORD_BYTES)
        if isinstance(body, dict) and "record" in body and len(body) == 1:
            body = body["record"]
        try:
            data = await anyio.to_thread.run_sync(replay_frames, body)
        except KoiKoiError as exc:
            raise ProtocolError("bad_record", str(exc)) from None
    except ProtocolError as exc:
        return _error(exc)
    return _ok(data)


def _keeper_rules(preset: str, house: str | None) -> Rules:
    try:
        return load_rules_text(house, source="house rules") if house else get_rules(preset)
    except RulesError as exc:
        raise ProtocolError("rules", str(exc)) from None


async def api_score(request: Request) -> Response:
    """The score keeper: score a capture pile with :func:`koikoi.scoring.score_cards`."""
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
        return _error(exc)
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
            with contextlib.suppress(Exception):
                await websocket.close(code=1013 if not hub.closing else 1012)
            return
        if not isinstance(item, tuple):  # pragma: no cover - only tuples and CLOSE are queued
            continue
        text: str = item[0]
        t0: float | None = item[1]
        await websocket.send_text(text)
        if t0 is not None:
            hub.metrics.latency(time.perf_counter() - t0)


async def ws_endpoint(websocket: WebSocket) -> None:
    hub = _hub(websocket)
    if not _same_origin(websocket):
        await websocket.close(code=1008, reason="cross-origin WebSocket refused")
        return
    await websocket.accept()
    client = websocket.client
    conn = Connection(hub.config, peer=client[0] if client else "")
    sender = asyncio.create_task(_sender(websocket, conn, hub))
    hub.metrics.count("connections")
    try:
        while not conn.closed:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            t0 = time.perf_counter()
            frame: str | bytes | None = message.get("text")
            if frame is None:
                frame = message.get("bytes") or b""
            if not conn.bucket.take():
                conn.rate_violations += 1
                hub.metrics.count("rate_limited")
                conn.send(
                    {
                        "type": "error",
                        "code": "rate_limited",
                        "message": ERROR_CODES["rate_limited"],
                    }
                )
                if conn.rate_violations >= hub.config.max_rate_violations:
                    conn.close()
                continue
            try:
                msg = parse_client_message(frame)
                await hub.handle(conn, msg, t0)
            except ProtocolError as exc:
                hub.metrics.count("errors")
                conn.send(exc.to_message())
    except WebSocketDisconnect:
        pass
    finally:
        hub.detach(conn)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(sender, timeout=2)
        if not sender.done():
            sender.cancel()


# ------------------------------------------------------------------ app


def create_app(
    database_url: str | None = None,
    *,
    storage: Storage | None = None,
    config: ServerConfig | None = None,
) -> Starlette:
    """The web game's ASGI app.

    Args:
        database_url: SQLAlchemy URL (default: :func:`~.storage.default_database_url`,
            a SQLite file); ``postgresql://`` URLs use psycopg 3.
        storage: an existing storage (overrides ``database_url``).
        config: limits and switches (:class:`~.hub.ServerConfig`).
    """
    url = database_url or default_database_url()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = storage if storage is not None else Storage(url)
        hub = Hub(store, config)
        app.state.hub = hub
        await hub.start()
        try:
            yield
        finally:
            await hub.close()

    routes = [
        Route("/", _page("index.html")),
        Route("/keeper", _page("keeper.html")),
        Route("/replay", _page("replay.html")),
        Route("/healthz", healthz),
        Route("/metrics", metrics),
        Route("/api/config", api_config),
        Route("/api/rules/{name}", api_rules),
        Route("/api/games", api_new_game, methods=["POST"]),
        Route("/api/join", api_join, methods=["POST"]),
        Route("/api/games/{game}/record", api_record, methods=["POST"]),
        Route("/api/games/{game}/replay", api_game_replay, methods=["POST"]),
        Route("/api/replay", api_replay_upload, methods=["POST"]),
        Route("/api/score", api_score, methods=["POST"]),
        Route("/cards/{name}.svg", card_svg),
        WebSocketRoute("/ws", ws_endpoint),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityAndLogMiddleware)],
        lifespan=lifespan,
        max_body_size=MAX_RECORD_BYTES,
    )
    app.state.database_url = url
    return app

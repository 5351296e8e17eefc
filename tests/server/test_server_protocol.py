"""The web game's protocol: message validation, the HTTP API, seats, tokens, limits, headers."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import EXPERT_HINTS, FAST, WS, room_of
from starlette.testclient import TestClient

from koikoi.game.actions import KOIKOI_ID, NUM_ACTIONS, STOP_ID
from koikoi.server.app import CONTENT_SECURITY_POLICY
from koikoi.server.config import ServerConfig
from koikoi.server.limits import TokenBucket
from koikoi.server.protocol import (
    MAX_MESSAGE_BYTES,
    Act,
    Hello,
    HintRequest,
    Ping,
    ProtocolError,
    parse_client_message,
    parse_new_game,
    parse_score_request,
)
from koikoi.server.rooms import new_token, token_hash

TOKEN = "A" * 43


def new_game(client: TestClient, **body: Any) -> dict[str, Any]:
    body.setdefault("mode", "friend")
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def connect(client: TestClient, token: str, name: str = "ws") -> tuple[WS, Any]:
    ctx = client.websocket_connect("/ws")
    ws = WS(ctx.__enter__(), name)
    ws.hello(token)
    return ws, ctx


# ------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    ("frame", "code", "words"),
    [
        ("not json", "bad_json", "not valid JSON"),
        ("[1, 2]", "bad_json", "JSON object"),
        ("42", "bad_json", "JSON object"),
        ("{}", "unknown_type", "unknown message type"),
        ('{"type": "dance"}', "unknown_type", "'dance'"),
        ('{"type": 7}', "unknown_type", "allowed hello, act, hint, ping"),
        ('{"type": "act", "seq": 0}', "missing_field", "'action'"),
        ('{"type": "act", "action": 8}', "missing_field", "'seq'"),
        ('{"type": "hello"}', "missing_field", "'token'"),
        ('{"type": "act", "action": "8", "seq": 0}', "bad_field", "action must be an integer"),
        ('{"type": "act", "action": 8.0, "seq": 0}', "bad_field", "action must be an integer"),
        ('{"type": "act", "action": true, "seq": 0}', "bad_field", "action must be an integer"),
        (f'{{"type": "act", "action": {NUM_ACTIONS}, "seq": 0}}', "bad_field", "0 to 2449"),
        ('{"type": "act", "action": -1, "seq": 0}', "bad_field", "0 to 2449"),
        ('{"type": "act", "action": 8, "seq": -1}', "bad_field", "seq"),
        ('{"type": "act", "action": 8, "seq": 0, "x": 1}', "unexpected_field", "'x'"),
        ('{"type": "ping", "extra": 1}', "unexpected_field", "'extra'"),
        ('{"type": "hello", "token": "short"}', "bad_field", "token"),
        ('{"type": "hello", "token": "bad token with spaces!!"}', "bad_field", "token"),
        ('{"type": "ping", "ref": [1]}', "bad_field", "ref"),
        ('{"type": "act", "action": 1e400, "seq": 0}', "bad_field", "action"),
        ("[" * 5000 + "]" * 5000, "too_large", "too large"),
    ],
)
def test_malformed_messages_name_the_problem(frame: str, code: str, words: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_client_message(frame)
    assert info.value.code == code
    assert words in info.value.message


def test_valid_messages_parse() -> None:
    assert parse_client_message('{"type":"act","action":2449,"seq":3,"ref":"a"}') == Act(
        STOP_ID, 3, "a"
    )
    assert parse_client_message(json.dumps({"type": "hello", "token": TOKEN})) == Hello(TOKEN)
    assert parse_client_message(b'{"type":"hint","ref":5}') == HintRequest(5)
    assert parse_client_message('{"type":"ping"}') == Ping()


def test_oversize_frame_is_refused_before_parsing() -> None:
    frame = json.dumps({"type": "ping", "ref": "x" * MAX_MESSAGE_BYTES})
    with pytest.raises(ProtocolError) as info:
        parse_client_message(frame)
    assert info.value.code == "too_large"
    assert str(MAX_MESSAGE_BYTES) in info.value.message


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )
)
def test_parser_only_raises_protocol_errors(value: Any) -> None:
    for frame in (json.dumps(value), {"type": "act", "action": value, "seq": value}):
        text = frame if isinstance(frame, str) else json.dumps(frame)
        try:
            parse_client_message(text)
        except ProtocolError as exc:
            assert exc.code and exc.message


def test_new_game_request_validation() -> None:
    assert parse_new_game({"mode": "ai"}).agent is None
    # The levels, and the older names of stored games and scripts, are accepted.
    for agent in ("level:1", "level:7", "level:8", "expert", "random", "greedy", "heuristic"):
        assert parse_new_game({"mode": "ai", "agent": agent}).agent == agent
    assert parse_new_game({"mode": "ai", "agent": "mcts"}).agent == "mcts"
    with pytest.raises(ProtocolError) as info:
        parse_new_game({"mode": "ai", "agent": "level:9"})
    assert info.value.code == "bad_field"
    assert "allowed level:1, level:2" in info.value.message and "expert" in info.value.message
    assert "older random, greedy, heuristic, mcts" in info.value.message
    for body, code in [
        ({"mode": "solo"}, "bad_field"),
        ({"mode": "ai", "agent": "cmd:rm -rf /"}, "bad_field"),
        ({"mode": "friend", "agent": "random"}, "bad_field"),
        ({"mode": "ai", "rules": "chess"}, "rules"),
        ({"mode": "ai", "rounds": 0}, "bad_field"),
        ({"mode": "ai", "seed": 5}, "unexpected_field"),
        ({"mode": "ai", "house_rules": "x" * 9000}, "too_large"),
        ({"mode": "ai", "colour": "red"}, "unexpected_field"),
        ([], "bad_json"),
    ]:
        with pytest.raises(ProtocolError) as info:
            parse_new_game(body)
        assert info.value.code == code, body
    assert parse_new_game({"mode": "ai", "seed": 5}, allow_seed=True).seed == 5


def test_score_request_validation() -> None:
    req = parse_score_request({"cards": "3L 8L, 9A", "round": 3, "opponent_koikoi": True})
    assert req.cards == ("3L", "8L", "9A") and req.round_number == 3 and req.opponent_koikoi
    with pytest.raises(ProtocolError):
        parse_score_request({"cards": [1, 2]})
    with pytest.raises(ProtocolError):
        parse_score_request({"cards": ["<script>"]})


def test_token_bucket_refills() -> None:
    bucket = TokenBucket(3, 1000.0)
    assert all(bucket.take() for _ in range(3))
    bucket.tokens = 0
    bucket.updated -= 0.01  # 10 ms at 1000/s
    assert bucket.take()


def test_tokens_are_unguessable() -> None:
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    assert all(len(t) >= 43 for t in tokens)  # 32 random bytes = 256 bits
    assert token_hash(TOKEN) != TOKEN and len(token_hash(TOKEN)) == 64


# ---------------------------------------------------------------- HTTP API


def test_pages_have_strict_security_headers(client: TestClient) -> None:
    for path in ("/", "/keeper", "/replay", "/static/app.js", "/api/config", "/healthz"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "script-src 'self'" in CONTENT_SECURITY_POLICY
        assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["referrer-policy"] == "no-referrer"


def test_pages_have_no_inline_script_or_style(client: TestClient) -> None:
    for path in ("/", "/keeper", "/replay"):
        html = client.get(path).text
        assert "<script>" not in html and "<script " in html
        for tag in html.split("<script")[1:]:
            assert 'src="/static/' in tag.split(">")[0], tag[:80]
        assert " style=" not in html and "<style" not in html
        assert not re.search(r"<[^>]*\son[a-z]+\s*=", html)  # no inline event handlers
        assert "http://" not in html and "https://" not in html  # nothing external


def test_healthz_and_metrics(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.json()["status"] == "ok" and r.json()["database"] == "ok"
    m = client.get("/metrics", headers={"accept": "application/json"}).json()
    assert "action_latency_ms" in m and m["rooms"] == 0
    text = client.get("/metrics").text
    assert "koikoi_rooms 0" in text and "# TYPE koikoi_action_latency_seconds summary" in text


def test_config_lists_cards_with_english_and_japanese_names(client: TestClient) -> None:
    cfg = client.get("/api/config").json()
    assert len(cfg["cards"]) == 48
    crane = cfg["cards"][0]
    assert crane["code"] == "1L" and crane["name_en"] == "Pine - Crane"
    assert crane["month_ja"] == "松 matsu" and crane["name_ja"] == "松に鶴"
    assert "Pine - Crane" in crane["label"] and "松" in crane["label"]
    # The levels, with titles and descriptions for the client; expert (level 8) first chosen.
    assert [a["agent"] for a in cfg["agents"]] == [*(f"level:{n}" for n in range(1, 8)), "expert"]
    assert [a["level"] for a in cfg["agents"]] == list(range(1, 9))
    assert cfg["agents"][0]["title"] == "Novice" and cfg["agents"][-1]["title"] == "Expert"
    assert all(a["description"] for a in cfg["agents"])
    assert cfg["default_agent"] == "expert" and cfg["hint_agent"] == FAST.hint_agent
    assert "nintendo" in [p["name"] for p in cfg["presets"]]
    leaflet = client.get("/api/rules/leaflet").json()
    assert leaflet["rules"]["game"]["rounds"] == 6 and "[game]" in leaflet["toml"]
    assert client.get("/api/rules/chess").status_code == 400


def test_card_art_is_served_as_svg(client: TestClient) -> None:
    r = client.get("/cards/9A.svg")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg") and "max-age" in r.headers["cache-control"]
    assert client.get("/cards/back.svg").status_code == 200
    assert client.get("/cards/sprite.svg").text.count("<symbol") == 49
    assert client.get("/cards/13L.svg").status_code == 404
    assert client.get("/cards/..%2Fapp.svg").status_code == 404


def test_score_keeper_known_example(client: TestClient) -> None:
    r = client.post("/api/score", json={"cards": ["3L", "8L", "9A"], "rules": "nintendo"})
    data = r.json()
    s = data["settlement"]
    assert sum(y["points"] for y in s["yaku"]) == 10 == s["base"]
    assert {y["name"] for y in s["yaku"]} == {"hanami", "tsukimi"}
    assert s["points"] == 20  # seven or more: x2
    assert "Seven or more" in data["explain"]
    leaflet = client.post("/api/score", json={"cards": "3L 8L 9A", "rules": "leaflet"}).json()
    assert leaflet["settlement"]["points"] == 0
    bad = client.post("/api/score", json={"cards": ["3L", "3L"]})
    assert bad.status_code == 400 and "twice" in bad.json()["message"]


def test_house_rules_errors_come_back_with_the_rules_message(client: TestClient) -> None:
    r = client.post(
        "/api/games",
        json={"mode": "ai", "agent": "random", "house_rules": "[koikoi]\nbonus = 'triple'\n"},
    )
    assert r.status_code == 400
    err = r.json()
    assert err["type"] == "error" and err["code"] == "rules"
    assert "koikoi.bonus" in err["message"] and "opponent_x2" in err["message"]
    r = client.post("/api/games", json={"mode": "ai", "house_rules": "[game\nrounds=1"})
    assert r.status_code == 400 and "not valid TOML" in r.json()["message"]


def test_house_rules_and_rounds_are_used(client: TestClient) -> None:
    g = new_game(
        client,
        mode="ai",
        agent="random",
        house_rules='extends = "leaflet"\n[koikoi]\nlimit = 1\n',
        rounds=2,
    )
    room = room_of(client, g["game"])
    assert room.rules.koikoi.limit == 1 and room.rules.game.rounds == 2
    assert room.rules.koikoi.bonus == "none"  # from leaflet


def test_json_body_required(client: TestClient) -> None:
    r = client.post("/api/games", content=b"mode=ai", headers={"content-type": "text/plain"})
    assert r.status_code == 400 and r.json()["code"] == "bad_json"
    r = client.post(
        "/api/games", content=b"{" * 70000, headers={"content-type": "application/json"}
    )
    assert r.status_code == 413


# ------------------------------------------------------- seats and tokens


def test_invite_works_once_and_no_third_seat(client: TestClient) -> None:
    g = new_game(client, seed=4)
    assert {"game", "seat", "token", "invite", "watch"} <= set(g)
    join = client.post("/api/join", json={"invite": g["invite"], "name": "Bob"})
    assert join.status_code == 200
    j = join.json()
    assert j["game"] == g["game"] and j["seat"] == 1 and j["token"] != g["token"]
    again = client.post("/api/join", json={"invite": g["invite"]})
    assert again.status_code == 409 and again.json()["code"] == "invite_used"
    unknown = client.post("/api/join", json={"invite": TOKEN})
    assert unknown.status_code == 404
    ws, ctx = connect(client, j["token"])
    welcome = ws.log[0]
    assert welcome["seat"] == 1 and welcome["players"][1]["name"] == "Bob"
    ctx.__exit__(None, None, None)


def test_watch_token_gives_a_spectator_that_cannot_act(client: TestClient) -> None:
    g = new_game(client, seed=9)
    ws, ctx = connect(client, g["watch"], "spectator")
    welcome, state = ws.log[0], ws.log[1]
    assert welcome["role"] == "spectator" and welcome["seat"] is None
    assert state["view"]["hand"] == [] and state["view"]["legal"] == []
    room = room_of(client, g["game"])
    ws.send({"type": "act", "action": room.match.legal_ids()[0], "seq": 0})
    err = ws.recv_type("error")
    assert err["code"] == "spectator"
    ws.send({"type": "hint"})
    assert ws.recv_type("error")["code"] == "hint_unavailable"
    assert room.seq == 0
    ctx.__exit__(None, None, None)


def test_unknown_tokens_close_the_connection(client: TestClient) -> None:
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        for i in range(4):
            ws.send({"type": "hello", "token": f"{i}" * 43})
            assert ws.recv()["code"] == "unknown_token"
        ws.send({"type": "hello", "token": "9" * 43})
        assert ws.recv()["code"] == "unknown_token"
        with pytest.raises(ConnectionError):
            ws.recv()


def test_messages_before_hello_are_refused(client: TestClient) -> None:
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        ws.send({"type": "act", "action": 1, "seq": 0, "ref": 7})
        err = ws.recv()
        assert err["code"] == "not_authenticated" and err["ref"] == 7
        ws.send({"type": "ping", "ref": "p"})
        assert ws.recv() == {"type": "pong", "ref": "p"}


def test_hello_twice_is_refused(client: TestClient) -> None:
    g = new_game(client, seed=2)
    ws, ctx = connect(client, g["token"])
    ws.send({"type": "hello", "token": g["token"]})
    assert ws.recv_type("error")["code"] == "already_authenticated"
    ctx.__exit__(None, None, None)


def test_cross_origin_websocket_is_refused(client: TestClient) -> None:
    from starlette.websockets import WebSocketDisconnect

    with (
        pytest.raises(WebSocketDisconnect) as info,
        client.websocket_connect("/ws", headers={"origin": "http://evil.example"}),
    ):
        pass
    assert info.value.code == 1008


def test_rate_limit_per_connection(make_client: Any) -> None:
    c = make_client(ServerConfig(message_rate=0.001, message_burst=5, max_rate_violations=3))
    with c.websocket_connect("/ws") as session:
        ws = WS(session)
        for _ in range(5):
            ws.send({"type": "ping"})
            assert ws.recv()["type"] == "pong"
        for _ in range(3):
            ws.send({"type": "ping"})
            assert ws.recv()["code"] == "rate_limited"
        with pytest.raises(ConnectionError):
            ws.recv()


def test_http_rate_limit_on_game_creation(make_client: Any) -> None:
    c = make_client(ServerConfig(http_rate=0.001, http_burst=3))
    codes = [c.post("/api/games", json={"mode": "ai"}).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]


def test_tokens_never_logged(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="koikoi.server")
    g = new_game(client, seed=1)
    j = client.post("/api/join", json={"invite": g["invite"]}).json()
    _, ctx = connect(client, g["token"])
    client.post(f"/api/games/{g['game']}/record", json={"token": g["watch"]})
    ctx.__exit__(None, None, None)
    text = "\n".join(r.getMessage() + json.dumps(getattr(r, "fields", {})) for r in caplog.records)
    assert "game created" in text and "client joined" in text
    for secret in (g["token"], g["invite"], g["watch"], j["token"]):
        assert secret not in text


def test_record_needs_a_finished_game_and_a_token_of_it(client: TestClient) -> None:
    g = new_game(client, seed=1)
    other = new_game(client, seed=2)
    r = client.post(f"/api/games/{g['game']}/record", json={"token": g["token"]})
    assert r.status_code == 409 and r.json()["code"] == "not_finished"
    r = client.post(f"/api/games/{g['game']}/record", json={"token": other["token"]})
    assert r.status_code == 404
    r = client.post(f"/api/games/{g['game']}/replay", json={"token": g["watch"]})
    assert r.status_code == 409


# ------------------------------------------------------------- playing


def test_the_default_opponent_is_the_expert_preloaded_off_the_event_loop(
    client: TestClient,
) -> None:
    g = new_game(client, mode="ai", seed=3)  # nobody connects: the AI does not move yet
    live = client.app.state.hub.rooms[g["game"]]  # type: ignore[attr-defined]
    seat = live.room.seats[1]
    assert (seat.kind, seat.agent, seat.name) == ("ai", "expert", "AI (Expert)")
    pool = client.app.state.hub.ai_pool  # type: ignore[attr-defined]
    # The AI workers load the search agents at start-up, not on a game's first move.
    assert "expert" in pool.specs and "mcts:time=1" in pool.specs

    async def loaded() -> None:
        await pool.wait_ready()

    client.portal.call(loaded)
    assert pool._workers and all(w._agents["expert"]._ready for w in pool._workers)
    # Levels 1 and 2 play like greedy on the event loop: nothing to preload.
    assert "level:2" not in pool.specs and "greedy" not in pool.specs
    fast = new_game(client, mode="ai", agent="level:2", seed=3)
    assert room_of(client, fast["game"]).seats[1].name == "AI (Beginner)"


@pytest.mark.parametrize("agent", ["greedy", "level:1", "heuristic"])
def test_hints_come_from_the_expert_whatever_the_opponent(make_client: Any, agent: str) -> None:
    """Regression: hints used to depend on the AI; now the expert gives them, in points and
    match-win chance, whatever the opponent."""
    client = make_client(EXPERT_HINTS)
    g = new_game(client, mode="ai", agent=agent, seed=5)  # nintendo: 12 rounds
    ws, ctx = connect(client, g["token"], "human")
    state = ws.log[1]
    while state["view"]["current"] != 0 or not state["view"]["legal"]:
        state = ws.recv_type("state", timeout=20)
    ws.send({"type": "hint"})
    hint = ws.recv_type("hint", timeout=60)
    assert hint["source"] == "expert:iterations=8" and hint["seq"] == state["seq"]
    options = hint["options"]
    assert {o["id"] for o in options} == {x["id"] for x in state["view"]["legal"]}
    assert all(o["score"] == o["equity"] for o in options)  # ranked by match-win chance
    assert [o["score"] for o in options] == sorted((o["score"] for o in options), reverse=True)
    ctx.__exit__(None, None, None)


def test_ai_game_to_the_end_with_hint_record_and_replay(client: TestClient) -> None:
    g = new_game(client, mode="ai", agent="greedy", seed=21, rounds=2)
    ws, ctx = connect(client, g["token"], "human")
    state = ws.log[1]
    hints = 0
    while not state["over"]:
        v = state["view"]
        if v["current"] == 0 and v["legal"]:
            if hints < 3:
                ws.send({"type": "hint", "ref": hints})
                hint = ws.recv_type("hint")
                assert hint["ref"] == hints and hint["seq"] == state["seq"]
                assert {o["id"] for o in hint["options"]} == {x["id"] for x in v["legal"]}
                assert hint["best"] == hint["options"][0]["id"]
                hints += 1
            ws.send({"type": "act", "action": v["legal"][0]["id"], "seq": state["seq"]})
            state = ws.recv_type("state")
            assert state.get("ack") == state["seq"] - 1
        else:
            state = ws.recv_type("state")
    assert state["winner"] in (0, 1, None)
    room = room_of(client, g["game"])
    assert room.is_over and room.seq == state["seq"]
    record = client.post(f"/api/games/{g['game']}/record", json={"token": g["token"]})
    assert record.status_code == 200
    assert "attachment" in record.headers["content-disposition"]
    from koikoi.game.record import load_record, replay

    rec = load_record(record.text)
    again = replay(rec)
    assert again.scores == room.match.scores and len(rec.actions) == room.seq
    frames = client.post(f"/api/games/{g['game']}/replay", json={"token": g["watch"]}).json()
    assert len(frames["frames"]) > room.seq
    assert frames["frames"][-1]["match_scores"] == room.match.scores
    upload = client.post("/api/replay", json={"record": json.loads(record.text)})
    assert upload.status_code == 200 and len(upload.json()["frames"]) == len(frames["frames"])
    bad = client.post("/api/replay", json={"record": {"format": "koikoi-record"}})
    assert bad.status_code == 400 and bad.json()["code"] == "bad_record"
    ctx.__exit__(None, None, None)


def test_decision_message_explains_stopping(client: TestClient) -> None:
    # Play random friend games until someone must decide; the state then says what stopping scores.
    import random

    rng = random.Random(5)
    for seed in range(40):
        g = new_game(client, seed=seed, rounds=1)
        j = client.post("/api/join", json={"invite": g["invite"]}).json()
        a, actx = connect(client, g["token"], "a")
        b, bctx = connect(client, j["token"], "b")
        socks = {0: a, 1: b}
        state = a.log[1]
        found = None
        while not state["over"]:
            v = state["view"]
            cur = v["current"]
            mine = socks[cur].log[-1] if socks[cur].log[-1]["type"] == "state" else state
            if mine["decision"] is not None:
                found = mine
                break
            legal = mine["view"]["legal"]
            socks[cur].send({"type": "act", "action": rng.choice(legal)["id"], "seq": state["seq"]})
            state = socks[cur].recv_type("state")
            socks[1 - cur].recv_type("state")
        actx.__exit__(None, None, None)
        bctx.__exit__(None, None, None)
        if found:
            d = found["decision"]
            assert d["player"] == found["view"]["current"]
            assert {x["id"] for x in found["view"]["legal"]} == {KOIKOI_ID, STOP_ID}
            assert d["if_stop"]["points"] >= d["if_stop"]["base"] > 0
            assert "Base" in d["explain"]
            return
    pytest.fail("no koi-koi decision in 40 seeded games")


def play_lockstep(client: TestClient, g: dict[str, Any], j: dict[str, Any], n: int) -> int:
    """Both seats connected; the player to act plays its first legal action, ``n`` times."""
    a, actx = connect(client, g["token"], "a")
    b, bctx = connect(client, j["token"], "b")
    socks = {g["seat"]: a, j["seat"]: b}
    last = {g["seat"]: a.log[-1], j["seat"]: b.log[-1]}
    for _ in range(n):
        cur = last[0]["view"]["current"]
        socks[cur].send(
            {"type": "act", "action": last[cur]["view"]["legal"][0]["id"], "seq": last[cur]["seq"]}
        )
        for seat, ws in socks.items():
            last[seat] = ws.recv_type("state")
    actx.__exit__(None, None, None)
    bctx.__exit__(None, None, None)
    return int(last[0]["seq"])


def test_idle_rooms_are_dropped_and_reloaded(client: TestClient) -> None:
    g = new_game(client, seed=31)
    j = client.post("/api/join", json={"invite": g["invite"]}).json()
    hub = client.app.state.hub
    assert play_lockstep(client, g, j, 4) == 4
    assert hub.evict_idle() == 0  # not idle long enough
    assert hub.evict_idle(now=10**12) == 1 and g["game"] not in hub.rooms
    ws, ctx = connect(client, g["watch"])  # replayed from storage
    assert ws.log[1]["seq"] == 4 and g["game"] in hub.rooms
    assert room_of(client, g["game"]).match.actions == hub.storage.action_ids(g["game"])
    ctx.__exit__(None, None, None)


def test_a_failed_write_plays_nothing(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    g = new_game(client, seed=8)
    j = client.post("/api/join", json={"invite": g["invite"]}).json()
    room = room_of(client, g["game"])
    token = g["token"] if room.match.current == g["seat"] else j["token"]
    ws, ctx = connect(client, token)
    hub = client.app.state.hub

    def broken(rows: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(hub.storage, "append_actions", broken)
    ws.send({"type": "act", "action": room.match.legal_ids()[0], "seq": 0})
    errors = [m for m in (ws.recv(), ws.recv()) if m["type"] == "error"]
    assert {e["code"] for e in errors} == {"server_error"}
    assert room.seq == 0 and hub.storage.count_actions([g["game"]]) == 0
    ctx.__exit__(None, None, None)
    monkeypatch.undo()
    ws, ctx = connect(client, token)  # the game is reloaded from storage, unchanged
    assert ws.log[1]["seq"] == 0
    ws.send({"type": "act", "action": ws.log[1]["view"]["legal"][0]["id"], "seq": 0})
    assert ws.recv_type("state")["ack"] == 0
    ctx.__exit__(None, None, None)


def test_serve_command_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    from koikoi.cli import build_parser, main

    args = build_parser().parse_args(["serve", "--port", "8123", "--database-url", "sqlite://"])
    assert args.host == "127.0.0.1" and args.port == 8123 and callable(args.func)
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be 1 to 65535" in capsys.readouterr().err

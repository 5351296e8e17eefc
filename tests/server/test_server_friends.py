"""Friend games: play starts when the invited player has joined; the invite's QR code
is shown to the host only."""

from __future__ import annotations

import doctest
import io
from typing import Any

import pytest
import segno
from server_helpers import WS, room_of
from starlette.testclient import TestClient

import koikoi.server.invites
from koikoi.server.invites import QR_ERROR_LEVEL, QR_QUIET_ZONE, invite_link, invite_qr_svg
from koikoi.server.protocol import ProtocolError, parse_invite_request

TOKEN = "A" * 43


def friend_game(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"mode": "friend", **body})
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def connect(client: TestClient, token: str, name: str) -> tuple[WS, Any]:
    ctx = client.websocket_connect("/ws")
    ws = WS(ctx.__enter__(), name)
    ws.hello(token)
    return ws, ctx


def first_mover_seed(client: TestClient, mover: int) -> dict[str, Any]:
    """A friend game (the host in seat 0) whose first action is ``mover``'s."""
    for seed in range(1, 60):
        g = friend_game(client, seed=seed)
        if room_of(client, g["game"]).match.current == mover:
            return g
    raise AssertionError(f"no seed in 1..59 where player {mover} moves first")


def test_the_host_cannot_act_before_the_friend_joins_and_nothing_changes(
    client: TestClient,
) -> None:
    g = first_mover_seed(client, 0)
    room = room_of(client, g["game"])
    host, ctx = connect(client, g["token"], "host")
    try:
        state = host.log[1]
        assert state["open_seat"] == 1
        legal = state["view"]["legal"]
        assert legal, "the host is to move: the engine offers actions"
        before = (room.seq, len(room.match.events))
        host.send({"type": "act", "action": legal[0]["id"], "seq": state["seq"], "ref": 7})
        err = host.recv_type("error")
        assert err["code"] == "opponent_not_joined" and err["ref"] == 7
        assert "invite link" in err["message"]
        host.expect_nothing()
        assert (room.seq, len(room.match.events)) == before

        # The friend opens the link: the host's page learns it at once, and play starts.
        j = client.post("/api/join", json={"invite": g["invite"], "name": "Bo"}).json()
        players = host.recv_type("players")["players"]
        assert players[1] == {"kind": "human", "name": "Bo", "claimed": True}
        fresh = host.recv_type("state")
        assert fresh["open_seat"] is None and fresh["events"] == [] and not fresh["full"]
        friend, fctx = connect(client, j["token"], "friend")
        assert friend.log[1]["open_seat"] is None
        host.send({"type": "act", "action": legal[0]["id"], "seq": fresh["seq"]})
        assert host.recv_type("state")["seq"] == before[0] + 1
        assert room.seq == before[0] + 1
        fctx.__exit__(None, None, None)
    finally:
        ctx.__exit__(None, None, None)


def test_an_ai_game_and_a_joined_game_have_no_open_seat(client: TestClient) -> None:
    ai = client.post("/api/games", json={"mode": "ai", "agent": "random", "seed": 3}).json()
    ws, ctx = connect(client, ai["token"], "ai")
    try:
        assert ws.log[1]["open_seat"] is None
    finally:
        ctx.__exit__(None, None, None)
    g = friend_game(client, seed=5)
    client.post("/api/join", json={"invite": g["invite"]})
    assert room_of(client, g["game"]).open_seat is None


def test_the_host_may_act_once_the_friend_has_joined_before_connecting(
    client: TestClient,
) -> None:
    # The join before the host's hello (a reload of the host page after the join).
    g = first_mover_seed(client, 0)
    client.post("/api/join", json={"invite": g["invite"]})
    host, ctx = connect(client, g["token"], "host")
    try:
        state = host.log[1]
        assert state["open_seat"] is None
        host.send({"type": "act", "action": state["view"]["legal"][0]["id"], "seq": 0})
        assert host.recv_type("state")["seq"] == 1
    finally:
        ctx.__exit__(None, None, None)


def qr(client: TestClient, game: str, **body: Any) -> Any:
    return client.post(f"/api/games/{game}/invite-qr", json=body)


def test_the_invite_qr_code_is_segnos_code_of_the_link(client: TestClient) -> None:
    g = friend_game(client)
    r = qr(client, g["game"], token=g["token"], invite=g["invite"])
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.headers["cache-control"] == "no-store"
    link = f"http://testserver/#join={g['invite']}"
    assert invite_link("http://testserver/", g["invite"]) == link
    code = segno.make_qr(link, error=QR_ERROR_LEVEL)
    assert code.designator.endswith("-M") and not code.is_micro
    assert r.text == invite_qr_svg(link)
    out = io.BytesIO()
    code.save(
        out,
        kind="svg",
        xmldecl=False,
        omitsize=True,
        border=QR_QUIET_ZONE,
        dark="#000",
        light="#fff",
        svgclass="invite-qr-code",
        lineclass=None,
    )
    assert r.text == out.getvalue().decode()
    # Nothing in it that the page's Content-Security-Policy would block.
    for banned in ("<script", "style=", "<style", "href", "<?xml"):
        assert banned not in r.text


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [
        ("wrong token", 404, "unknown_token"),
        ("other game's token", 404, "unknown_token"),
        ("watch token", 403, "spectator"),
        ("wrong invite", 404, "unknown_token"),
        ("other game's invite", 404, "unknown_token"),
    ],
)
def test_the_invite_qr_code_needs_the_hosts_token_and_invite(
    client: TestClient, who: str, status: int, code: str
) -> None:
    g, other = friend_game(client), friend_game(client)
    body = {"token": g["token"], "invite": g["invite"]}
    if who == "wrong token":
        body["token"] = TOKEN
    elif who == "other game's token":
        body["token"] = other["token"]
    elif who == "watch token":
        body["token"] = g["watch"]
    elif who == "wrong invite":
        body["invite"] = TOKEN
    else:
        body["invite"] = other["invite"]
    r = qr(client, g["game"], **body)
    assert r.status_code == status and r.json()["code"] == code, r.text
    assert g["invite"] not in r.text and "svg" not in r.headers["content-type"]


def test_the_invite_qr_code_is_gone_once_the_friend_joined(client: TestClient) -> None:
    g = friend_game(client)
    j = client.post("/api/join", json={"invite": g["invite"]}).json()
    r = qr(client, g["game"], token=g["token"], invite=g["invite"])
    assert r.status_code == 409 and r.json()["code"] == "invite_used"
    # The friend holds a seat but not the host's invite.
    r = qr(client, g["game"], token=j["token"], invite=g["invite"])
    assert r.status_code == 404 and r.json()["code"] == "unknown_token"


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"token": TOKEN}, "missing_field", "'invite'"),
        ({"invite": TOKEN}, "missing_field", "'token'"),
        ({"token": TOKEN, "invite": "short"}, "bad_field", "invite must be"),
        ({"token": 5, "invite": TOKEN}, "bad_field", "token must be"),
        ({"token": TOKEN, "invite": TOKEN, "x": 1}, "unexpected_field", "allowed token, invite"),
        ([], "bad_json", "JSON object"),
    ],
)
def test_a_bad_invite_request_names_what_is_wrong(body: Any, code: str, words: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_invite_request(body)
    assert info.value.code == code and words in str(info.value)


def test_the_invites_module_examples() -> None:
    result = doctest.testmod(koikoi.server.invites)
    assert result.attempted >= 2 and result.failed == 0

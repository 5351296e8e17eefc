"""``koikoi serve`` on a port already in use: one clear line, a non-zero status."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from server_helpers import SubprocessServer

pytestmark = pytest.mark.multiprocess


def test_a_busy_port_is_one_clear_error_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from koikoi.cli import main; raise SystemExit(main())",
                "serve",
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines == [
        f"koikoi: error: port {port} on 127.0.0.1 is already in use; choose another with --port"
    ]


def offered_deflate(server: SubprocessServer) -> str:
    """The extensions the server agreed to when a client offered permessage-deflate."""
    from websockets.sync.client import connect

    with connect(server.ws_url, compression="deflate", open_timeout=10) as ws:
        assert ws.response is not None
        return ws.response.headers.get("Sec-WebSocket-Extensions", "")


@pytest.mark.parametrize(("args", "agreed"), [((), False), (("--ws-deflate",), True)])
def test_websocket_compression_only_on_request(
    tmp_path: Path, args: tuple[str, ...], agreed: bool
) -> None:
    """Compression costs CPU on every message and memory on every connection: the
    server declines a browser's offer unless started with --ws-deflate."""
    pytest.importorskip("websockets.sync.client")
    server = SubprocessServer(f"sqlite:///{tmp_path / 'games.db'}", tmp=tmp_path, args=args)
    try:
        server.start()
        assert ("permessage-deflate" in offered_deflate(server)) is agreed
    finally:
        server.stop()


def test_settle_memory_freezes_the_startup_objects() -> None:
    """Process-wide, so checked in a child process: after settle_memory() the objects
    alive at start-up are frozen (full collections skip them) and young collections
    are rarer than Python's default."""
    code = (
        "import gc\n"
        "from koikoi.server.app import GC_YOUNG_THRESHOLD, settle_memory\n"
        "default = gc.get_threshold()\n"
        "settle_memory()\n"
        "print(gc.get_freeze_count(), gc.get_threshold()[0], default[0], GC_YOUNG_THRESHOLD,"
        " gc.get_threshold()[1:] == default[1:])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    frozen, young, default_young, wanted, rest_kept = out
    assert int(frozen) > 10_000
    assert int(young) == int(wanted) > int(default_young)
    assert rest_kept == "True"

"""``koikoi serve`` on a port already in use: one clear line, a non-zero status."""

from __future__ import annotations

import socket
import subprocess
import sys


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

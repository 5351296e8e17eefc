"""External bots: any program speaking JSON lines over stdin/stdout (``cmd:PROGRAM ARGS``).

The protocol is documented in ``docs/bot-protocol.md``. In short, one JSON
object per line each way:

* koikoi → bot, once per seat and rule set: ``{"type": "hello", "protocol": 1,
  "seat": 0, "rules": {...}}``;
* koikoi → bot, at each decision: ``{"type": "act", "view": {...}, "legal":
  [{"id": 8, "action": "play 3L"}, ...]}``;
* bot → koikoi: ``{"action": 8}`` or ``{"action": "play 3L"}``;
* koikoi → bot: ``{"type": "error", "reason": ..., "message": ...}`` when the
  answer is refused (the bot then loses the match), and ``{"type": "bye"}``
  before its standard input is closed.

A bot that answers garbage, plays an illegal action, exits, or does not answer
within ``timeout`` seconds raises :class:`BotError` (a
:class:`~koikoi.game.errors.KoiKoiError`) whose message gives the reason and the
tail of the bot's standard error; the arena records the match as lost by the
bot and carries on.

Spec: ``cmd:[timeout=SECONDS] [name=NAME] PROGRAM ARGS...`` (split like a POSIX
shell, no shell is run). A ``PROGRAM`` ending in ``.py`` is run with the
current Python.

>>> agent = from_spec({}, "timeout=2 examples/random_bot.py --seed 1")
>>> agent.timeout, agent.argv[1:]
(2.0, ['examples/random_bot.py', '--seed', '1'])
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import queue
import random
import shlex
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any, Final

from koikoi.game.actions import describe_action_id, parse_action
from koikoi.game.errors import KoiKoiError
from koikoi.game.rules import Rules
from koikoi.game.views import PlayerView

__all__ = ["PROTOCOL_VERSION", "BotError", "ExternalAgent", "from_spec"]

PROTOCOL_VERSION: Final = 1
DEFAULT_TIMEOUT: Final = 10.0
_EOF: Final = object()
_OPTIONS: Final = ("timeout", "name")


class BotError(KoiKoiError):
    """An external bot broke the protocol: garbage, an illegal action, a crash or a timeout.

    ``reason`` is one of ``"garbage"``, ``"illegal"``, ``"crash"``, ``"timeout"``,
    ``"start"``.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def _drain(stream: IO[str], sink: queue.Queue[object]) -> None:
    try:
        for line in stream:
            sink.put(line)
    except (OSError, ValueError):
        pass
    finally:
        sink.put(_EOF)


def _keep_tail(stream: IO[str], tail: collections.deque[str]) -> None:
    try:
        for line in stream:
            tail.append(line.rstrip("\n"))
    except (OSError, ValueError):
        pass


class ExternalAgent:
    """A bot program driven over the JSON-lines protocol (started at its first decision).

    Args:
        argv: the program and its arguments.
        timeout: seconds the bot may take to answer one decision.
        name: the agent's name (default: ``cmd:`` and the command line).
    """

    def __init__(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT, name: str = ""):
        if not argv:
            raise KoiKoiError("cmd: no program given: expected cmd:PROGRAM ARGS")
        self.argv = list(argv)
        self.timeout = timeout
        self.name = name or "cmd:" + shlex.join(self.argv)
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[object] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._hello: tuple[int, Rules] | None = None
        self._err_thread: threading.Thread | None = None
        self._broken = False

    # -------------------------------------------------------------- process

    def _describe(self) -> str:
        return shlex.join(self.argv)

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is not None:
            return self._proc
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
        except OSError as exc:
            raise BotError(
                f"bot {self._describe()!r} cannot be started: {exc.strerror or exc}",
                reason="start",
            ) from None
        assert proc.stdout is not None and proc.stderr is not None
        threading.Thread(target=_drain, args=(proc.stdout, self._lines), daemon=True).start()
        self._err_thread = threading.Thread(
            target=_keep_tail, args=(proc.stderr, self._stderr), daemon=True
        )
        self._err_thread.start()
        self._proc = proc
        return proc

    def _tail(self) -> str:
        if not self._stderr:
            return ""
        return "; its stderr ends: " + " | ".join(list(self._stderr)[-3:])

    def _crashed(self) -> BotError:
        proc = self._proc
        status: int | None = None
        if proc is not None:
            try:
                status = proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                status = None
            if self._err_thread is not None:  # let the stderr reader catch up
                self._err_thread.join(timeout=0.5)
        how = f"exited with status {status}" if status is not None else "closed its output"
        return BotError(f"bot {self._describe()!r} {how}{self._tail()}", reason="crash")

    def _send(self, message: dict[str, Any]) -> None:
        proc = self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(message, separators=(",", ":")) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crashed() from None

    def _receive(self) -> str:
        try:
            item = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self._broken = True
            raise BotError(
                f"bot {self._describe()!r} timed out: no answer within {self.timeout:g}s"
                f"{self._tail()}",
                reason="timeout",
            ) from None
        if item is _EOF:
            raise self._crashed()
        assert isinstance(item, str)
        return item

    def _refuse(self, reason: str, message: str) -> BotError:
        self._broken = True
        with contextlib.suppress(BotError):
            self._send({"type": "error", "reason": reason, "message": message})
        return BotError(f"bot {self._describe()!r}: {message}", reason=reason)

    # ---------------------------------------------------------------- agent

    def act(self, view: PlayerView, rng: random.Random) -> int:
        """Ask the bot; returns a legal action id or raises :class:`BotError`."""
        seat = view.player if view.player is not None else 0
        if self._hello != (seat, view.rules):
            self._send(
                {
                    "type": "hello",
                    "protocol": PROTOCOL_VERSION,
                    "seat": seat,
                    "rules": view.rules.to_dict(),
                }
            )
            self._hello = (seat, view.rules)
        legal = list(view.legal_ids)
        self._send(
            {
                "type": "act",
                "view": view.to_dict(),
                "legal": [{"id": i, "action": describe_action_id(i)} for i in legal],
            }
        )
        line = self._receive().strip()
        return self._parse_answer(line, legal)

    def _parse_answer(self, line: str, legal: list[int]) -> int:
        shown = line if len(line) <= 80 else line[:77] + "..."
        try:
            answer = json.loads(line)
        except ValueError:
            raise self._refuse("garbage", f"answer is not JSON: {shown!r}") from None
        if not isinstance(answer, dict) or "action" not in answer:
            raise self._refuse(
                "garbage", f'answer must be an object {{"action": ID or TEXT}}, not {shown!r}'
            )
        action = answer["action"]
        if isinstance(action, int) and not isinstance(action, bool):
            action_id = action
        elif isinstance(action, str):
            try:
                action_id = parse_action(action).id
            except KoiKoiError as exc:
                raise self._refuse("garbage", f"cannot read action {action!r}: {exc}") from None
        else:
            raise self._refuse(
                "garbage", f"action must be an id or a text like 'play 3L', not {action!r}"
            )
        if action_id not in legal:
            allowed = ", ".join(describe_action_id(i) for i in legal)
            try:
                what = describe_action_id(action_id)
            except KoiKoiError:
                what = str(action_id)
            raise self._refuse("illegal", f"illegal action {what!r}; legal: {allowed}")
        return action_id

    def close(self) -> None:
        """Say bye, close the bot's input and end it (killed if it lingers).

        A bot that broke the protocol gets no bye and is killed after 0.2 s.
        """
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        self._hello = None
        broken, self._broken = self._broken, False
        try:
            if not broken and proc.poll() is None and proc.stdin is not None:
                proc.stdin.write('{"type":"bye"}\n')
                proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:  # a bot that lost gets a moment to read its error, a good one to finish
            proc.wait(timeout=0.2 if broken else 2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def __enter__(self) -> ExternalAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def from_spec(params: Mapping[str, str], raw: str) -> ExternalAgent:
    """Build from ``cmd:[timeout=SECONDS] [name=NAME] PROGRAM ARGS``.

    Raises:
        InvalidInputError: no program, an unknown option or a bad timeout.
    """
    from koikoi.game.errors import InvalidInputError

    try:
        words = shlex.split(raw)
    except ValueError as exc:
        raise InvalidInputError(f"cmd: cannot split the command line {raw!r}: {exc}") from None
    timeout = DEFAULT_TIMEOUT
    name = ""
    while words and "=" in words[0] and not words[0].startswith(("/", ".")):
        key, _, value = words[0].partition("=")
        if key not in _OPTIONS:
            raise InvalidInputError(
                f"cmd: unknown option {key!r}: allowed {', '.join(_OPTIONS)} "
                "(e.g. cmd:timeout=5 ./bot)"
            )
        if key == "timeout":
            try:
                timeout = float(value)
            except ValueError:
                timeout = math.nan
            if not (timeout > 0 and math.isfinite(timeout)):
                raise InvalidInputError(
                    f"cmd: timeout must be a positive number of seconds, not {value!r}"
                )
        else:
            name = value
        words.pop(0)
    if not words:
        raise InvalidInputError("cmd: no program given: expected cmd:PROGRAM ARGS")
    if words[0].endswith(".py"):
        words.insert(0, sys.executable)
    return ExternalAgent(words, timeout=timeout, name=name)

"""One error hierarchy for the whole package.

Every error the package raises on bad input is a :class:`KoiKoiError`; all of
them are also ``ValueError`` so that callers may catch either.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = [
    "IllegalActionError",
    "InvalidInputError",
    "KoiKoiError",
    "RecordError",
    "RulesError",
    "json_error_text",
    "read_text_file",
]


class KoiKoiError(ValueError):
    """Base class of the package's errors."""


class InvalidInputError(KoiKoiError):
    """Input that cannot be parsed: a card code, an action string, a spec."""


class IllegalActionError(KoiKoiError):
    """An action that is not legal in the current state. The state is unchanged."""


class RulesError(KoiKoiError):
    """A rule set or house-rules file that is not valid. Names the key and what is allowed."""


class RecordError(KoiKoiError):
    """A game record that cannot be loaded or does not replay. Says where it diverges."""


def json_error_text(exc: json.JSONDecodeError) -> str:
    """What is wrong with JSON text and where, the place said once.

    A few of :mod:`json`'s messages end in "at" because the position is meant to
    follow them ("Unterminated string starting at"); that word is dropped before
    the line and column are added.

    >>> try:
    ...     json.loads('{"name": "Aiko')
    ... except json.JSONDecodeError as exc:
    ...     json_error_text(exc)
    'Unterminated string starting at line 1 column 10'
    >>> try:
    ...     json.loads('{"a": }')
    ... except json.JSONDecodeError as exc:
    ...     json_error_text(exc)
    'Expecting value at line 1 column 7'
    """
    message = exc.msg.removesuffix(" at")
    return f"{message} at line {exc.lineno} column {exc.colno}"


def read_text_file(path: str | Path, *, what: str, error: type[KoiKoiError]) -> str:
    """The UTF-8 text of the file at ``path``.

    Args:
        path: the file.
        what: what the file should be, for messages (``"record"``, ``"rules file"``).
        error: the error to raise (:class:`RecordError`, :class:`RulesError`).

    Raises:
        KoiKoiError: ``error``, naming ``what`` and the path, when the file cannot
            be read or is not UTF-8 text.

    >>> read_text_file("nofile", what="rules file", error=RulesError)
    Traceback (most recent call last):
    ...
    koikoi.game.errors.RulesError: cannot read rules file 'nofile': No such file or directory
    """
    p = Path(path)
    where = str(p)
    try:
        return p.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read {what} {where!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise error(f"{what} {where!r} is not UTF-8 text") from None

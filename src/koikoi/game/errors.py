"""One error hierarchy for the whole package.

Every error the package raises on bad input is a :class:`KoiKoiError`; all of
them are also ``ValueError`` so that callers may catch either.
"""

from __future__ import annotations

import json

__all__ = [
    "IllegalActionError",
    "InvalidInputError",
    "KoiKoiError",
    "RecordError",
    "RulesError",
    "json_error_text",
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

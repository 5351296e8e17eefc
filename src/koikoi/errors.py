"""One error hierarchy for the whole package.

Every error the package raises on bad input is a :class:`KoiKoiError`; all of
them are also ``ValueError`` so that callers may catch either.
"""

from __future__ import annotations

__all__ = [
    "IllegalActionError",
    "InvalidInputError",
    "KoiKoiError",
    "RecordError",
    "RulesError",
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

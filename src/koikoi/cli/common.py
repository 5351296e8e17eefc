"""What the command modules share: the usage error and the ``--lang`` option."""

from __future__ import annotations

import argparse

from koikoi import i18n
from koikoi.game.errors import KoiKoiError


class CommandError(KoiKoiError):
    """A command-line usage problem detected after parsing."""


def add_language_option(parser: argparse.ArgumentParser, *, default: object) -> None:
    """``--lang en|ja``: the language of the messages (default: ``$KOIKOI_LANG``, else the
    locale). ``koikoi --lang ja COMMAND`` and ``koikoi COMMAND --lang ja`` (the
    commands that take it, such as ``play``) set the same ``args.lang``; a subcommand
    passes ``default=argparse.SUPPRESS`` so that it leaves the global one alone."""
    parser.add_argument(
        "--lang",
        choices=sorted(i18n.LANGUAGES),
        default=default,
        help="language of the messages: en or ja (default: $KOIKOI_LANG, else the locale)",
    )

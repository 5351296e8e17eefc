"""What the command modules share: the usage error, adding a subcommand, and the
options that several commands take (``--lang``, ``--rules``, ``--seed``, ``--json``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

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


def add_command(
    subparsers: Any, name: str, *, run: Callable[..., int] | None = None, **options: Any
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` (``options`` as for ``add_parser``: ``help``,
    ``description``, ...) and, when given, the function ``run`` that runs it."""
    parser: argparse.ArgumentParser = subparsers.add_parser(name, **options)
    if run is not None:
        parser.set_defaults(func=run)
    return parser


def add_rules_option(
    parser: argparse.ArgumentParser, *, help: str = "preset or house-rules file", **options: Any
) -> None:
    """``--rules NAME|FILE``: a preset or a house-rules file (default ``nintendo``)."""
    options.setdefault("default", "nintendo")
    options.setdefault("metavar", "NAME|FILE")
    parser.add_argument("--rules", help=help, **options)


def add_seed_option(
    parser: argparse.ArgumentParser, *, help: str = "seed (default 0)", **options: Any
) -> None:
    """``--seed S``: an integer seed (default 0); ``type=str`` keeps the text, for
    :func:`koikoi.game.engine.parse_seed`."""
    options.setdefault("type", int)
    options.setdefault("default", 0 if options["type"] is int else "0")
    parser.add_argument("--seed", metavar="S", help=help, **options)


def add_json_option(
    parser: argparse.ArgumentParser, *, help: str = "print one JSON object"
) -> None:
    """``--json``: print the result as JSON instead of text."""
    parser.add_argument("--json", action="store_true", help=help)

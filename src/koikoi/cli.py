"""The ``koikoi`` command.

Each command group lives in its own module under :mod:`koikoi.commands` and
exposes ``register(subparsers)``; registering imports nothing heavy, so
``koikoi rules list`` starts fast even when the web or terminal extras are
installed. Errors the user can fix (a bad card, a bad rules file, an illegal
action) print one line to stderr and exit with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from koikoi import __version__, i18n
from koikoi.errors import KoiKoiError

__all__ = ["COMMAND_MODULES", "build_parser", "main"]

# One module per command group, in the order of ``koikoi --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "koikoi.commands.play",
    "koikoi.commands.rules",
    "koikoi.commands.score",
    "koikoi.commands.keeper",
    "koikoi.commands.replay",
    "koikoi.commands.stats",
    "koikoi.commands.records_io",
    "koikoi.commands.simulate",
    "koikoi.commands.bench",
    "koikoi.commands.arena",
    "koikoi.commands.analyze",
    "koikoi.commands.train",
    "koikoi.commands.serve",
)


class CommandError(KoiKoiError):
    """A command-line usage problem detected after parsing."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="koikoi",
        description="Koi-Koi (Hanafuda) for two: every rule set, exact scoring, AI players.",
    )
    parser.add_argument("--version", action="version", version=f"koikoi {__version__}")
    add_language_option(parser, default=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that command group is not written yet
                continue
            raise
        module.register(sub)
    return parser


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


def choose_language(args: argparse.Namespace) -> None:
    """Set the language of every message: ``--lang``, else ``$KOIKOI_LANG``, else the
    locale (:func:`koikoi.i18n.detect_language`).

    Raises:
        InvalidInputError: ``$KOIKOI_LANG`` names a language that is not supported.
    """
    lang = getattr(args, "lang", None) or os.environ.get("KOIKOI_LANG") or None
    i18n.set_language(lang if lang is not None else i18n.detect_language())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        choose_language(args)
        result = func(args)
    except KoiKoiError as exc:
        print(f"koikoi: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("koikoi: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

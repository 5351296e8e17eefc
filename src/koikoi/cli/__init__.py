"""The ``koikoi`` command.

Each command group lives in its own module under :mod:`koikoi.cli` and
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

from koikoi import i18n
from koikoi.cli.common import CommandError, add_language_option
from koikoi.game import __version__
from koikoi.game.errors import KoiKoiError

__all__ = ["COMMAND_MODULES", "CommandError", "build_parser", "main"]

# One module per command group, in the order of ``koikoi --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "koikoi.cli.play",
    "koikoi.cli.rules",
    "koikoi.cli.score",
    "koikoi.cli.keeper",
    "koikoi.cli.replay",
    "koikoi.cli.stats",
    "koikoi.cli.records_io",
    "koikoi.cli.simulate",
    "koikoi.cli.bench",
    "koikoi.cli.arena",
    "koikoi.cli.tournament",
    "koikoi.cli.analyze",
    "koikoi.cli.train",
    "koikoi.cli.serve",
)


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

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
import sys
from collections.abc import Sequence

from koikoi import __version__
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
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

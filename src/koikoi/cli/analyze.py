"""``koikoi analyze``: the value of every alternative at each decision of a record,
or at one position.

A search agent evaluates every legal action from the deciding player's view
(never the hidden cards) and the biggest losses against its choice are listed,
as on a chess analysis board. With ``--position`` it values every legal action
of one position (:mod:`koikoi.game.positions`), full or a player's view.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from koikoi.cli.common import add_command, add_json_option, add_rules_option, add_seed_option

__all__ = ["DEFAULT_AGENT", "check_output_path", "register", "run"]

DEFAULT_AGENT = "expert:iterations=1500"
"""The hints' evaluator (:data:`koikoi.features.opponents.HINT_SPEC`, ``expert``) on an
iteration budget instead of a clock, so that two runs on one record give the same numbers:
an analysis of a position and a hint in the games rank moves by the same value, in the
same units. Each decision is searched :data:`koikoi.lab.analysis.DEFAULT_RUNS` times
(about the hints' 0.3 s in all on a fast core)."""


def register(subparsers: Any) -> None:
    """Add ``koikoi analyze``."""
    parser = add_command(
        subparsers,
        "analyze",
        run=run,
        help="find the biggest mistakes in a game record, or value every move of a position",
        description=(
            "Replay a game record and, at each decision, let a search agent value every legal "
            "action from that player's view. Lists the biggest mistakes: the moves that lost "
            "the most expected round points against the search's best move. With --position, "
            "value every legal action of one position instead (the player to act's view; a "
            "full position's hidden cards are never used)."
        ),
    )
    parser.add_argument(
        "record", metavar="RECORD", nargs="?", default=None, help="a game record (JSON file)"
    )
    parser.add_argument(
        "--position",
        metavar="TEXT",
        default=None,
        help="a position (full or a view) instead of a record; see docs/positions.md",
    )
    add_rules_option(
        parser,
        metavar="RULES",
        default=None,
        help="with --position: the house-rules file (or preset) the position names",
    )
    parser.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        metavar="SPEC",
        help=(
            f"the evaluating search agent (default {DEFAULT_AGENT}: the games' hints, on an "
            "iteration budget so that two runs agree; a time budget depends on the machine)"
        ),
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        metavar="N",
        help=(
            "independent searches of each decision; their spread is the search's noise, and "
            "a loss within twice that noise is not a mistake (default 4)"
        ),
    )
    parser.add_argument(
        "--player", type=int, choices=(0, 1), default=None, help="analyse only this player"
    )
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="mistakes to list (default 10)"
    )
    parser.add_argument(
        "--mistake",
        type=float,
        default=1.0,
        metavar="POINTS",
        help=(
            "a loss of at least this many points counts as a mistake, when it is also beyond "
            "the search's noise (default 1)"
        ),
    )
    add_seed_option(parser, type=str, help="search seed (default 0)")
    add_json_option(parser)
    parser.add_argument(
        "--annotate",
        metavar="OUT",
        default=None,
        help=(
            "also write the record with its analysis inside (meta.analysis) to OUT: "
            "koikoi replay and the web replay page then mark the mistakes"
        ),
    )
    parser.add_argument(
        "--progress", action="store_true", help="show progress on stderr even when not a terminal"
    )


def run(args: argparse.Namespace) -> int:
    from koikoi.agents import make_agent
    from koikoi.game.engine import parse_seed
    from koikoi.game.errors import InvalidInputError
    from koikoi.game.record import load_record
    from koikoi.i18n import t
    from koikoi.lab.analysis import DEFAULT_RUNS, analyze_record, format_analysis

    if args.top < 1:
        raise InvalidInputError(f"--top must be 1 or more, not {args.top}")
    runs = DEFAULT_RUNS if args.runs is None else args.runs
    if runs < 1:
        raise InvalidInputError(t("--runs must be 1 or more, not {n}", n=runs))
    seed = parse_seed(str(args.seed))
    if (args.record is None) == (args.position is None):
        raise InvalidInputError("give either a RECORD file or --position TEXT (one of them)")
    if args.annotate is not None and args.record is None:
        raise InvalidInputError("--annotate goes with a RECORD file (not --position)")
    if args.rules is not None and args.position is None:
        raise InvalidInputError("--rules goes with --position (a record names its own rules)")
    if args.runs is not None and args.position is not None:
        raise InvalidInputError(t("--runs goes with a RECORD file (not --position)"))
    if args.annotate is not None:
        check_output_path(args.annotate)
    agent: Any = make_agent(args.agent)
    if args.position is not None:
        return _run_position(args, agent, seed)
    record = load_record(args.record)
    players = (0, 1) if args.player is None else (args.player,)
    show = args.progress or sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        sys.stderr.write("\r" + t("analyze: {done}/{total} actions", done=done, total=total))
        sys.stderr.flush()

    analysis = analyze_record(
        record, agent, seed=seed, players=players, runs=runs, progress=progress if show else None
    )
    if show:
        sys.stderr.write("\n")
    if args.annotate is not None:
        import dataclasses

        annotated = dataclasses.replace(
            record,
            meta={**record.meta, "analysis": analysis.to_dict(args.top, mistake=args.mistake)},
        )
        annotated.save(args.annotate)
    if args.json:
        out = analysis.to_dict(args.top, mistake=args.mistake)
        out["record"] = args.record
        print(json.dumps(out))
    else:
        print(t("Record: {path}", path=args.record))
        print(format_analysis(analysis, top=args.top, mistake=args.mistake))
    return 0


def check_output_path(path: str) -> None:
    """Raise :class:`~koikoi.game.errors.InvalidInputError` naming ``path`` unless a file
    can be written there: its folder exists and is writable, and it is not a folder.

    Checked before a long analysis, not after it.

    >>> check_output_path("/")
    Traceback (most recent call last):
    ...
    koikoi.game.errors.InvalidInputError: --annotate '/' is a folder: give a file name ...
    """
    import os
    from pathlib import Path

    from koikoi.game.errors import InvalidInputError
    from koikoi.i18n import t

    target = Path(path)
    if target.is_dir():
        raise InvalidInputError(
            t("--annotate {path!r} is a folder: give a file name to write", path=path)
        )
    folder = target.parent
    if not folder.is_dir():
        raise InvalidInputError(
            t(
                "--annotate {path!r}: the folder {folder!r} does not exist",
                path=path,
                folder=str(folder),
            )
        )
    writable = os.access(target, os.W_OK) if target.exists() else os.access(folder, os.W_OK)
    if not writable:
        raise InvalidInputError(t("--annotate {path!r}: no permission to write there", path=path))


def _run_position(args: argparse.Namespace, agent: Any, seed: int) -> int:
    from koikoi.game.rules import load_rules
    from koikoi.lab.analysis import analyze_position, format_position_analysis

    rules = load_rules(args.rules) if args.rules is not None else None
    result = analyze_position(args.position, agent, seed=seed, rules=rules)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(format_position_analysis(result))
    return 0

"""``koikoi play``: the terminal game against the AI (needs ``koikoi[tui]``).

With no option it opens the new-game screen. ``--rules``, ``--opponent``,
``--rounds`` and ``--seed`` start a match at once with those settings (the
others at their defaults: the opponent is ``expert``, level 8); ``--resume
FILE`` goes on with a saved match; ``--tutorial`` starts "Learn to play", the
guided first round.
Everything given is checked before the screen opens, so a bad option is a
one-line error.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from koikoi.cli.common import add_command, add_language_option

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add ``koikoi play``."""

    parser = add_command(
        subparsers,
        "play",
        run=run,
        help="play Koi-Koi against the AI in the terminal",
        description=(
            "Play Koi-Koi against the AI, full screen in the terminal (80x24 or larger). "
            "With no option, the new-game screen opens."
        ),
    )
    parser.add_argument(
        "--rules", metavar="NAME|FILE", help="a preset (default nintendo) or a house-rules .toml"
    )
    parser.add_argument(
        "--opponent",
        metavar="SPEC",
        help="the AI: level:1 (Novice) to level:8, expert (level 8, the default), "
        "or any agent spec such as heuristic or mcts:time=SECONDS",
    )
    parser.add_argument(
        "--rounds", metavar="N", type=int, help="rounds in the match (default: the rules')"
    )
    parser.add_argument(
        "--seed", metavar="S", help="seed of the deals, for a replayable match (default random)"
    )
    parser.add_argument("--resume", metavar="FILE", help="go on with a saved match")
    add_language_option(parser, default=argparse.SUPPRESS)
    parser.add_argument(
        "--tutorial",
        action="store_true",
        help="learn to play: a guided first round that explains each rule as it happens",
    )
    parser.add_argument(
        "--pace",
        metavar="SECONDS",
        type=float,
        help="seconds per step of the AI's turn (default 0.8; 0: instant)",
    )
    parser.add_argument(
        "--records",
        metavar="DIR",
        help="where finished matches are recorded (default $KOIKOI_HOME/records "
        "or ~/.local/share/koikoi/records)",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi play``."""
    from koikoi.agents import make_agent
    from koikoi.features.opponents import DEFAULT_OPPONENT
    from koikoi.game.engine import parse_seed
    from koikoi.game.errors import InvalidInputError, KoiKoiError

    try:
        import textual  # noqa: F401
    except ImportError:
        raise KoiKoiError("the terminal game needs Textual: pip install 'koikoi[tui]'") from None
    from koikoi.tui.app import KoiKoiApp
    from koikoi.tui.history import history_path
    from koikoi.tui.saves import load_game, records_dir, saves_dir
    from koikoi.tui.screens import DEFAULT_PACE, GameSettings, build_rules

    if args.pace is not None and not 0 <= args.pace <= 10:
        raise InvalidInputError(f"--pace must be between 0 and 10 seconds, not {args.pace}")
    if args.rounds is not None and args.rounds < 1:
        raise InvalidInputError(f"--rounds must be 1 or more, not {args.rounds}")
    records = Path(args.records).expanduser() if args.records else records_dir()
    direct = any(v is not None for v in (args.rules, args.opponent, args.rounds, args.seed))
    if args.tutorial:
        if direct or args.resume is not None:
            raise InvalidInputError(
                "--tutorial plays the guided round, whose deal, rules and opponent are "
                "fixed: it takes no --rules, --opponent, --rounds, --seed or --resume"
            )
        app = KoiKoiApp(
            records=records,
            saves=saves_dir(),
            pace=args.pace,
            tutorial=True,
            history=history_path(),
        )
    elif args.resume is not None:
        if direct:
            raise InvalidInputError(
                "--resume goes on with a saved match: it takes no --rules, --opponent, "
                "--rounds or --seed"
            )
        path = Path(args.resume).expanduser()
        saved = load_game(path)
        make_agent(saved.opponent)
        app = KoiKoiApp(
            saved=saved,
            save_path=path,
            records=records,
            saves=saves_dir(),
            pace=args.pace,
            history=history_path(),
        )
    elif direct:
        rules = build_rules(args.rules or "nintendo", rounds=args.rounds)
        opponent = args.opponent or DEFAULT_OPPONENT
        make_agent(opponent)
        seed = parse_seed(args.seed) if args.seed is not None else None
        pace = DEFAULT_PACE if args.pace is None else args.pace
        settings = GameSettings(rules, opponent, seed, pace)
        app = KoiKoiApp(
            settings=settings,
            records=records,
            saves=saves_dir(),
            pace=args.pace,
            history=history_path(),
        )
    else:
        app = KoiKoiApp(records=records, saves=saves_dir(), pace=args.pace, history=history_path())
    app.run()
    return int(app.return_code or 0)

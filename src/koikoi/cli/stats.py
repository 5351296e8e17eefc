"""``koikoi stats``: your statistics over the terminal game's finished matches.

Reads the history file that ``koikoi play`` keeps (see :mod:`koikoi.tui.history`;
no Textual needed) and prints the figures of :mod:`koikoi.features.stats`: games, wins,
points, yaku made, koi-koi calls and their success, in total, by rule set and by
opponent, then the matches, newest first. ``--json`` prints the summary as one
JSON object; ``--record N`` prints match N's game record, for ``koikoi replay``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from koikoi.cli.common import add_command, add_json_option

if TYPE_CHECKING:
    from koikoi.features.stats import Summary, Tally
    from koikoi.tui.history import History

__all__ = ["format_stats", "register", "run"]


def register(subparsers: Any) -> None:
    """Add ``koikoi stats``."""
    parser = add_command(
        subparsers,
        "stats",
        run=run,
        help="your statistics over the finished matches of koikoi play",
        description=(
            "Statistics over the matches played to the end in the terminal game: games, "
            "wins, points, yaku made, koi-koi calls and their success, in total, by rule "
            "set and by opponent, and the list of matches."
        ),
    )
    parser.add_argument(
        "--history",
        metavar="FILE",
        help="the history file (default $KOIKOI_HOME/history.jsonl "
        "or ~/.local/share/koikoi/history.jsonl)",
    )
    add_json_option(parser)
    parser.add_argument(
        "--record",
        metavar="N",
        type=int,
        help="print the game record of match N of the list (for koikoi replay FILE)",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi stats``."""
    from koikoi.game.errors import InvalidInputError
    from koikoi.tui.history import history_path, read_history, summary

    path = Path(args.history).expanduser() if args.history else history_path()
    history = read_history(path)
    if args.record is not None:
        count = len(history.games)
        if not 1 <= args.record <= count:
            raise InvalidInputError(
                f"--record must be a match number from 1 to {count}, not {args.record}"
                if count
                else f"--record {args.record}: the history {str(path)!r} holds no finished match"
            )
        print(json.dumps(history.games[args.record - 1].record.to_dict(), ensure_ascii=False))
        return 0
    stats = summary(history)
    if args.json:
        out = {"history": str(path), **stats.to_dict(), "problems": list(history.problems)}
        for number, (entry, game) in enumerate(zip(history.games, out["games"], strict=True), 1):
            game["number"] = number
            game["finished"] = entry.finished
            game["opponent_spec"] = entry.opponent
            game["record_file"] = entry.record_file
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    for line in format_stats(history, stats):
        print(line)
    return 0


def _tally_lines(total: Tally) -> list[str]:
    from koikoi.features.progress import YAKU_LABELS
    from koikoi.features.stats import totals_lines
    from koikoi.i18n import t

    games, results, points, koikoi = totals_lines(total)
    made = ", ".join(f"{YAKU_LABELS.get(n, n)} ×{k}" for n, k in total.yaku)
    return [
        games + ": " + results,
        points,
        koikoi,
        t("Yaku made") + ": " + (made or t("none yet")),
    ]


def _breakdown(title: str, rows: tuple[tuple[str, Tally], ...]) -> list[str]:
    from koikoi.features.stats import format_percent, format_signed
    from koikoi.i18n import t, tn

    width = max((len(name) for name, _ in rows), default=0)
    lines = [title]
    for name, tally in rows:
        koikoi = f"{tally.koikoi_successes}/{tally.koikoi_calls}" if tally.koikoi_calls else "0"
        lines.append(
            f"  {name:<{width}}  "
            + tn("{n} game", "{n} games", tally.games)
            + ", "
            + t(
                "{wins}-{losses}-{draws}, {rate} won, net {net} ({per_round} a round), "
                "koi-koi {koikoi}",
                wins=tally.wins,
                losses=tally.losses,
                draws=tally.draws,
                rate=format_percent(tally.win_rate),
                net=f"{tally.net_points:+d}",
                per_round=format_signed(tally.points_per_round, 2),
                koikoi=koikoi,
            )
        )
    return lines


def format_stats(history: History, stats: Summary) -> list[str]:
    """The statistics in lines of text (the human output of ``koikoi stats``): the
    opponents named in the language in use."""
    from koikoi.features.names import shown_name
    from koikoi.i18n import t

    lines = [t("History: {path}", path=str(history.path))]
    lines += [t("Skipped: {problem}", problem=p) for p in history.problems]
    if not stats.games:
        lines.append(t("No finished matches yet: play a match to the end and it is counted here."))
        return lines
    lines.append("")
    lines += _tally_lines(stats.total)
    lines.append("")
    lines += _breakdown(t("By rule set"), stats.by_rules)
    lines += _breakdown(
        t("By opponent"), tuple((shown_name(name), tally) for name, tally in stats.by_opponent)
    )
    lines.append("")
    lines.append(t("Matches, newest first (koikoi stats --record N > FILE to replay one):"))
    results = {"win": t("Won"), "loss": t("Lost"), "draw": t("Drawn")}
    numbered = list(enumerate(zip(history.games, stats.games, strict=True), 1))
    for number, (entry, game) in reversed(numbered):
        lines.append(
            f"  {number:>3}  {entry.finished}  {shown_name(game.opponent)}  {game.rules}  "
            f"{results[game.result]} {game.score[0]}-{game.score[1]}"
        )
    return lines

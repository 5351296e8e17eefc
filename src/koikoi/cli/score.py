"""``koikoi score``: the yaku, multipliers and total of a capture pile.

>>> from koikoi.cli import main
>>> main(["score", "1L", "3L", "8L"])
Rules: nintendo, round 1 (month 1, Pine), no koi-koi
Yaku:
  Three Brights (三光 sankō) [1L 3L 8L]: 5
Base: 5
Total: 5
0
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from koikoi.cli.common import add_command, add_json_option, add_rules_option

__all__ = ["register", "run", "score_report"]


def register(subparsers: Any) -> None:
    """Add ``koikoi score``."""
    parser = add_command(
        subparsers,
        "score",
        run=run,
        help="score a capture pile: yaku, multipliers, total",
        description=(
            "Score a capture pile as a stop: each yaku with its cards and points, the "
            "multipliers (7 or more, koi-koi bonus) and the total."
        ),
    )
    parser.add_argument("cards", nargs="+", metavar="CARD", help="card codes, e.g. 1L 3L 8L 9A")
    add_rules_option(parser)
    add_json_option(parser)
    parser.add_argument(
        "--round",
        type=int,
        default=1,
        metavar="K",
        help="the round number (its month counts for tsukifuda; default 1)",
    )
    parser.add_argument(
        "--koikoi-self",
        type=int,
        default=0,
        metavar="N",
        help="how many times the stopping player called koi-koi (default 0)",
    )
    parser.add_argument(
        "--opponent-koikoi", action="store_true", help="the opponent had called koi-koi"
    )


def score_report(
    rules_source: str,
    cards: list[str],
    *,
    round_number: int = 1,
    koikoi_self: int = 0,
    opponent_koikoi: bool = False,
) -> dict[str, Any]:
    """The score of ``cards`` as JSON-ready data (what ``--json`` prints).

    Raises:
        InvalidInputError: a bad card, round or koi-koi count.
        RulesError: unknown rules.
    """
    from koikoi.game.cards import MONTH_NAMES, format_cards, parse_cards
    from koikoi.game.errors import InvalidInputError
    from koikoi.game.rules import load_rules
    from koikoi.game.scoring import MULTIPLIER_NAMES, YAKU_NAMES, month_of_round, score_cards

    if round_number < 1:
        raise InvalidInputError(f"--round must be 1 or more, not {round_number}")
    if koikoi_self < 0:
        raise InvalidInputError(f"--koikoi-self must be 0 or more, not {koikoi_self}")
    rules = load_rules(rules_source)
    pile = parse_cards(cards)
    settlement = score_cards(
        rules,
        pile,
        round_number=round_number,
        koikoi_self=koikoi_self,
        opponent_koikoi=opponent_koikoi,
    )
    month = month_of_round(round_number)
    yaku = []
    for y in settlement.yaku:
        english, japanese = YAKU_NAMES.get(y.name, (y.name, y.name))
        yaku.append(
            {
                "name": y.name,
                "english": english,
                "japanese": japanese,
                "points": y.points,
                "cards": format_cards(y.cards).split(),
            }
        )
    return {
        "rules": rules.name,
        "cards": format_cards(pile).split(),
        "round": round_number,
        "month": month,
        "month_name": MONTH_NAMES[month - 1],
        "koikoi_self": koikoi_self,
        "opponent_koikoi": opponent_koikoi,
        "yaku": yaku,
        "base": settlement.base,
        "multipliers": [
            {
                "name": m.name,
                "label": MULTIPLIER_NAMES.get(m.name, m.name),
                "factor": m.factor,
                "add": m.add,
            }
            for m in settlement.multipliers
        ],
        "total": settlement.points,
    }


def _text(report: dict[str, Any]) -> list[str]:
    from koikoi.i18n import language, t, td

    english = language() == "en"
    calls = []
    if report["koikoi_self"]:
        n = report["koikoi_self"]
        calls.append(t("own koi-koi x{n}", n=n))
    if report["opponent_koikoi"]:
        calls.append(t("opponent called koi-koi"))
    lines = [
        t(
            "Rules: {rules}, round {round} (month {month}, {name}), {calls}",
            rules=report["rules"],
            round=report["round"],
            month=report["month"],
            name=td(report["month_name"]),
            calls=", ".join(calls) or t("no koi-koi"),
        )
    ]
    if not report["yaku"]:
        lines.append(t("No yaku: 0 points."))
        return lines
    lines.append(t("Yaku:"))
    for y in report["yaku"]:
        name = f"{y['english']} ({y['japanese']})" if english else td(y["english"])
        lines.append(f"  {name} [{' '.join(y['cards'])}]: {y['points']}")
    lines.append(t("Base: {base}", base=report["base"]))
    figure = report["base"]
    for m in report["multipliers"]:
        figure = figure * m["factor"] + m["add"]
        step = " ".join(
            part
            for part in (
                f"x{m['factor']}" if m["factor"] != 1 else "",
                f"+{m['add']}" if m["add"] else "",
            )
            if part
        )
        lines.append(f"  {td(m['label'])}: {step or 'x1'} -> {figure}")
    lines.append(t("Total: {total}", total=report["total"]))
    return lines


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi score``."""
    report = score_report(
        args.rules,
        list(args.cards),
        round_number=args.round,
        koikoi_self=args.koikoi_self,
        opponent_koikoi=args.opponent_koikoi,
    )
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print("\n".join(_text(report)))
    return 0

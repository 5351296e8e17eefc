"""``koikoi rules``: list the presets, show, compare and check rule sets.

* ``koikoi rules list`` — a table of the presets.
* ``koikoi rules show NAME|FILE`` — the complete TOML of a rule set (loadable again).
* ``koikoi rules diff A B`` — the options that differ, as an aligned table.
* ``koikoi rules check FILE`` — validate a house-rules file.
* ``koikoi rules explain [KEY] [--rules NAME|FILE]`` — what an option does, its allowed
  values, an example and its value in a rule set; without KEY, every option.
* ``koikoi rules yaku [NAME|FILE]`` — the yaku of a rule set: names, points, what each needs.
"""

from __future__ import annotations

import argparse
import unicodedata
from typing import Any

from koikoi.cli.common import add_command, add_rules_option
from koikoi.i18n import language, t, td, tn

__all__ = ["format_value", "register", "run", "width"]


def register(subparsers: Any) -> None:
    """Add ``koikoi rules`` and its subcommands."""
    parser = add_command(
        subparsers,
        "rules",
        run=run,
        help="list, show, compare and check rule sets",
        description="List the presets, show a rule set as TOML, compare two, check a file.",
    )
    parser.set_defaults(rules_command=None)
    sub = parser.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")
    sub.add_parser("list", help="the presets: rounds, koi-koi bonus, yaku combination")
    show = sub.add_parser("show", help="the complete TOML of a preset or house-rules file")
    show.add_argument("rules", metavar="NAME|FILE", help="a preset name or a .toml file")
    diff = sub.add_parser("diff", help="the options that differ between two rule sets")
    diff.add_argument("a", metavar="A", help="a preset name or a .toml file")
    diff.add_argument("b", metavar="B", help="a preset name or a .toml file")
    check = sub.add_parser("check", help="validate a house-rules file")
    check.add_argument("file", metavar="FILE", help="a house-rules .toml file")
    explain = sub.add_parser(
        "explain",
        help="what a rule option does: allowed values, an example, its value",
        description="Explain a rule option (KEY as section.key or the bare key, e.g. "
        "koikoi.bonus or bonus); without KEY, list every option.",
    )
    explain.add_argument("key", metavar="KEY", nargs="?", help="an option, e.g. koikoi.bonus")
    add_rules_option(explain, help="show the option's value in this rule set (default nintendo)")
    yaku = sub.add_parser("yaku", help="the yaku of a rule set with their points")
    yaku.add_argument(
        "rules",
        metavar="NAME|FILE",
        nargs="?",
        default="nintendo",
        help="a preset name or a .toml file (default nintendo)",
    )
    parser.set_defaults(_rules_parser=parser)


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi rules SUBCOMMAND``."""
    command = args.rules_command
    if command == "list":
        return _list()
    if command == "show":
        return _show(args.rules)
    if command == "diff":
        return _diff(args.a, args.b)
    if command == "check":
        return _check(args.file)
    if command == "explain":
        return _explain(args.key, args.rules)
    if command == "yaku":
        return _yaku(args.rules)
    args._rules_parser.print_help()
    return 2


def format_value(value: Any) -> str:
    """An option's value as written in TOML (``true``, ``["11L", "11P"]``, ``absorb``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    return str(value)


def width(text: str) -> int:
    """Terminal cells of ``text``: a wide (Japanese) character takes two.

    >>> width("abc"), width("五光")
    (3, 4)
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(width(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell + " " * (w - width(cell)) for cell, w in zip(row, widths, strict=True)
        ).rstrip()
        for row in rows
    ]


def _options_differ(n: int) -> str:
    return tn("{n} option differs", "{n} options differ", n)


def _list() -> int:
    from koikoi.game.rules import PRESET_NAMES, get_rules

    rows = [[t("name"), t("rounds"), t("bonus"), t("combine"), t("description")]]
    for name in PRESET_NAMES:
        r = get_rules(name)
        description = " ".join(td(r.description).split())
        rows.append([name, str(r.game.rounds), r.koikoi.bonus, r.yaku.combine, description])
    print("\n".join(_table(rows)))
    return 0


def _show(source: str) -> int:
    from koikoi.game.rules import load_rules

    print(load_rules(source).to_toml(), end="")
    return 0


def _diff(a_source: str, b_source: str) -> int:
    from koikoi.game.rules import diff_rules, load_rules

    a, b = load_rules(a_source), load_rules(b_source)
    differences = diff_rules(a, b)
    if not differences:
        print(t("no differences: {a} and {b} have the same options", a=a.name, b=b.name))
        return 0
    a_label, b_label = (a.name, b.name) if a.name != b.name else (a_source, b_source)
    rows = [[t("option"), a_label, b_label]]
    rows.extend([key, format_value(va), format_value(vb)] for key, va, vb in differences)
    print("\n".join(_table(rows)))
    print(_options_differ(len(differences)))
    return 0


def _check(path: str) -> int:
    import tomllib
    from pathlib import Path

    from koikoi.game.rules import diff_rules, get_rules, load_rules_file

    rules = load_rules_file(path)
    # The file loaded, so it is valid TOML with a valid ``extends``.
    extends = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("extends", "nintendo")
    n = len(diff_rules(get_rules(extends), rules))
    print(
        t(
            "ok: {name}, {differ} from {extends}",
            name=rules.name,
            differ=_options_differ(n),
            extends=extends,
        )
    )
    return 0


def _explain(key: str | None, source: str) -> int:
    from koikoi.features.rules_help import OPTION_HELP, OPTION_KEYS, explain_option
    from koikoi.game.rules import load_rules

    rules = load_rules(source)
    if key is None:
        flat = rules.flat()
        rows = [[t("option"), rules.name, t("what it does")]]
        for k in OPTION_KEYS:
            summary = OPTION_HELP[k].summary
            first = summary.split(". ", 1)[0].rstrip(".") + "."
            rows.append([k, format_value(flat[k]), first])
        print("\n".join(_table(rows)))
        print(t("koikoi rules explain KEY tells more about one option."))
        return 0
    print(explain_option(key, rules))
    return 0


def _yaku(source: str) -> int:
    from koikoi.features.rules_help import yaku_rows
    from koikoi.game.rules import load_rules

    rules = load_rules(source)
    if language() != "en":
        rows = [[t("yaku"), t("points"), t("needs")]]
        rows.extend([td(r.english), str(r.points), _needs(r.needs)] for r in yaku_rows(rules))
    else:
        # The Japanese names (double-width characters) go last, where they cannot misalign.
        rows = [["yaku", "points", "needs", "japanese"]]
        rows.extend(
            [f"{r.english} ({r.name})", str(r.points), r.needs, r.japanese]
            for r in yaku_rows(rules)
        )
    print(t("Yaku of {name}:", name=rules.name))
    print("\n".join(_table(rows)))
    return 0


def _needs(needs: str) -> str:
    """What a yaku needs (:attr:`~koikoi.features.rules_help.YakuRow.needs`) in the language in
    use; ``{extra}`` already filled in, or dropped with its bracket."""
    from koikoi.features.rules_help import YAKU_NEEDS, YAKU_NEEDS_WHEN

    for english in (*YAKU_NEEDS.values(), *(when[1] for when in YAKU_NEEDS_WHEN.values())):
        head, _, tail = english.partition("{extra}")
        if needs == english or (tail and needs.startswith(head) and needs.endswith(tail)):
            extra = needs[len(head) : len(needs) - len(tail)] if tail else ""
            return td(english).replace("{extra}", extra)
        if tail and needs == english.split(" (")[0]:
            return td(english).split("（")[0]
    return needs

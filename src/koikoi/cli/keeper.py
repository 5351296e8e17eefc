"""``koikoi keeper``: keep the score of a whole match played with real cards.

Interactive (questions on stdin, one answer a line) or from a TOML or JSON match
file (``--file``); both print each round's yaku and multipliers, the running
totals and the match result; ``--json`` prints one object instead. The scoring
is :func:`koikoi.game.scoring.score_cards`, as for ``koikoi score``; the match itself
is a :class:`koikoi.features.keeper.ScoreSheet`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from koikoi.cli.common import add_command, add_json_option, add_rules_option
from koikoi.cli.rules import width
from koikoi.game.errors import InvalidInputError, json_error_text
from koikoi.i18n import N_, language, t, td, tn

if TYPE_CHECKING:
    from koikoi.features.keeper import RoundEntry, ScoreSheet, SheetRound
    from koikoi.game.rules import Rules
    from koikoi.game.scoring import Multiplier, YakuScore

__all__ = ["load_match_file", "parse_names", "register", "run", "summary_lines"]

_NOBODY = ("n", "nobody", "none", "-")
_UNDO = ("u", "undo")
_QUIT = ("q", "quit")
_FILE_KEYS = ("rules", "names", "rounds", "first_dealer", "round")
_ROUND_KEYS = ("winner", "cards", "koikoi")
_FLAT_AWARDS = {
    "dealer_point": N_("Dealer point"),
    "oya_ken": N_("Oya-ken (the dealer's privilege)"),
}


def register(subparsers: Any) -> None:
    """Add ``koikoi keeper``."""
    parser = add_command(
        subparsers,
        "keeper",
        run=run,
        help="keep the score of a match played with real cards, round by round",
        description=(
            "Keep the score of a whole match played with real cards: for each round who "
            "won, the winner's captured cards and the koi-koi calls; prints the yaku, "
            "the multipliers, the running totals and the match result. Interactive on "
            "stdin (u undoes the last round, q ends the match), or from a match file."
        ),
    )
    add_rules_option(
        parser,
        default=None,
        help="preset or house-rules file (default: the match file's, else nintendo)",
    )
    parser.add_argument(
        "--names", default=None, metavar="A,B", help="the two players' names, e.g. Aiko,Ben"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        metavar="N",
        help="rounds in the match, e.g. 6, 8 or 12 (default: the rules' game.rounds)",
    )
    parser.add_argument(
        "--first-dealer",
        default=None,
        metavar="A|B",
        help="who deals round 1, when the rules pay the dealer (asked if missing)",
    )
    parser.add_argument(
        "--file", default=None, metavar="MATCH", help="read the rounds from a .toml or .json file"
    )
    add_json_option(parser)


# ------------------------------------------------------------------ parsing


def parse_names(text: str) -> tuple[str, str]:
    """``"Aiko,Ben"`` as two names.

    Raises:
        InvalidInputError: not two distinct non-empty names.

    >>> parse_names(" Aiko , Ben ")
    ('Aiko', 'Ben')
    """
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise InvalidInputError(
            f"--names takes two names separated by a comma, e.g. Aiko,Ben, not {text!r}"
        )
    if parts[0].casefold() == parts[1].casefold():
        raise InvalidInputError(f"--names: the two players need different names, not {text!r}")
    return parts[0], parts[1]


def _player(text: str, names: tuple[str, str], *, nobody: bool) -> int | None:
    """A player by letter (A, B) or name; with ``nobody``, also N for nobody."""
    from koikoi.features.keeper import PLAYER_LETTERS

    key = text.strip().casefold()
    for p in (0, 1):
        if key == PLAYER_LETTERS[p].casefold():
            return p
    if nobody and key in _NOBODY:
        return None
    for p in (0, 1):
        if key == names[p].casefold():
            return p
    a, b = _labels(names, "{letter} ({name})")
    allowed = f"{a}, {b} or N (nobody)" if nobody else f"{a} or {b}"
    raise InvalidInputError(f"{text.strip()!r} is not a player: answer {allowed}")


def _labels(names: tuple[str, str], form: str) -> tuple[str, str]:
    """Each player as ``form`` (with ``{letter}`` and ``{name}``), or the bare letter
    when the name is the letter."""
    from koikoi.features.keeper import PLAYER_LETTERS

    a, b = (
        letter if name == letter else form.format(letter=letter, name=name)
        for letter, name in zip(PLAYER_LETTERS, names, strict=True)
    )
    return a, b


def _count(text: str, who: str) -> int:
    text = text.strip()
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise InvalidInputError(
            f"koi-koi calls by {who}: {text!r} is not a number: answer 0, 1, 2, ..."
        ) from None
    if value < 0:
        raise InvalidInputError(f"koi-koi calls by {who} must be 0 or more, not {value}")
    return value


def _load_rules(source: str) -> Rules:
    from koikoi.game.rules import load_rules

    return load_rules(source)


def _new_sheet(
    rules: Rules, rounds: int | None, first_dealer: int | None, names: tuple[str, str]
) -> ScoreSheet:
    from koikoi.features.keeper import ScoreSheet

    if rounds is not None and rounds < 1:
        raise InvalidInputError(f"--rounds must be 1 or more, not {rounds}")
    return ScoreSheet(rules, rounds=rounds or 0, first_dealer=first_dealer, names=names)


# ---------------------------------------------------------------- match file


def _check_keys(table: dict[str, Any], allowed: tuple[str, ...], at: str) -> None:
    """Raise :class:`InvalidInputError` naming the first key of ``table`` not ``allowed``."""
    for key in table:
        if key not in allowed:
            raise InvalidInputError(f"{at}: unknown key {key!r}: allowed {', '.join(allowed)}")


def load_match_file(
    path: Path,
    *,
    rules_source: str | None = None,
    names: tuple[str, str] | None = None,
    rounds: int | None = None,
    first_dealer: str | None = None,
) -> ScoreSheet:
    """A score sheet with every round of a TOML or JSON match file (docs/cli.md).

    Options given here override the file's keys.

    Raises:
        InvalidInputError: an unreadable file, an unknown key, or a bad round
            (the message names the round).
        RulesError: unknown rules.
    """
    from koikoi.features.keeper import RoundEntry
    from koikoi.game.cards import parse_cards
    from koikoi.game.rules import PRESET_NAMES

    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"{where}: cannot read the match file: {exc.strerror}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{where}: not valid JSON: {json_error_text(exc)}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(f"{where}: not valid TOML: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{where}: the match file must be a table of keys")
    _check_keys(data, _FILE_KEYS, where)

    if rules_source is None:
        file_rules = data.get("rules", "nintendo")
        if not isinstance(file_rules, str):
            raise InvalidInputError(f"{where}: rules must be a preset name or a file name")
        rules_source = file_rules
        beside = path.parent / file_rules
        if file_rules not in PRESET_NAMES and beside.is_file():
            rules_source = str(beside)
    rules = _load_rules(rules_source)

    if names is None:
        file_names = data.get("names", ["A", "B"])
        if not (isinstance(file_names, list) and all(isinstance(n, str) for n in file_names)):
            raise InvalidInputError(f"{where}: names must be a list of two strings")
        names = parse_names(",".join(file_names))
    if rounds is None:
        file_rounds = data.get("rounds")
        if file_rounds is not None and (
            isinstance(file_rounds, bool) or not isinstance(file_rounds, int)
        ):
            raise InvalidInputError(f"{where}: rounds must be an integer, not {file_rounds!r}")
        rounds = file_rounds
    dealer_text = first_dealer if first_dealer is not None else data.get("first_dealer")
    dealer: int | None = None
    if dealer_text is not None:
        if not isinstance(dealer_text, str):
            raise InvalidInputError(f'{where}: first_dealer must be "A" or "B"')
        try:
            dealer = _player(dealer_text, names, nobody=False)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{where}: first_dealer: {exc}") from None
    try:
        sheet = _new_sheet(rules, rounds, dealer, names)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from None

    entries = data.get("round", [])
    if not isinstance(entries, list):
        raise InvalidInputError(f"{where}: round must be a list of tables ([[round]] in TOML)")
    for i, item in enumerate(entries, start=1):
        at = f"{where}: round {i}"
        if not isinstance(item, dict):
            raise InvalidInputError(f"{at}: must be a table with keys {', '.join(_ROUND_KEYS)}")
        _check_keys(item, _ROUND_KEYS, at)
        try:
            winner_text = item.get("winner")
            if not isinstance(winner_text, str):
                raise InvalidInputError(f'winner must be "A", "B" or "nobody", not {winner_text!r}')
            winner = _player(winner_text, names, nobody=True)
            cards_data = item.get("cards")
            calls_data = item.get("koikoi", {})
            if winner is None:
                if cards_data or calls_data:
                    raise InvalidInputError(
                        "nobody won, so leave out cards and koikoi (only a winner's cards count)"
                    )
                entry = RoundEntry(None)
            else:
                if isinstance(cards_data, list) and all(isinstance(c, str) for c in cards_data):
                    cards_text = " ".join(cards_data)
                elif isinstance(cards_data, str):
                    cards_text = cards_data
                else:
                    raise InvalidInputError(
                        f'cards must be the winner\'s captured cards, e.g. "1L 3L 8L", '
                        f"not {cards_data!r}"
                    )
                entry = RoundEntry(winner, parse_cards(cards_text), _file_calls(calls_data))
            sheet = sheet.add(entry)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{at}: {exc}") from None
    return sheet


def _file_calls(data: Any) -> tuple[int, int]:
    if not isinstance(data, dict):
        raise InvalidInputError(f"koikoi must be a table such as {{A = 1, B = 0}}, not {data!r}")
    calls = [0, 0]
    for key, value in data.items():
        if key not in ("A", "B"):
            raise InvalidInputError(f"koikoi: unknown player {key!r}: allowed A, B")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInputError(f"koikoi.{key} must be a count 0 or more, not {value!r}")
        calls[0 if key == "A" else 1] = value
    return calls[0], calls[1]


# -------------------------------------------------------------------- output


def _header(rules: Rules, rounds: int, names: tuple[str, str], first_dealer: int | None) -> str:
    a, b = _labels(names, "{name} ({letter})")
    parts = [
        tn(
            "Score keeper: {rules}, {n} round, {a} against {b}",
            "Score keeper: {rules}, {n} rounds, {a} against {b}",
            rounds,
            rules=rules.name,
            a=a,
            b=b,
        )
    ]
    if rules.game.start_points:
        parts.append(t("each starts with {points} points", points=rules.game.start_points))
    if first_dealer is not None:
        parts.append(t("{name} deals round 1", name=names[first_dealer]))
    return t(", ").join(parts) + t(".")


def _round_title(number: int, dealer: int | None, names: tuple[str, str]) -> str:
    from koikoi.game.cards import MONTH_NAMES
    from koikoi.game.scoring import month_of_round

    month = month_of_round(number)
    title = t(
        "Round {round} (month {month}, {name})",
        round=number,
        month=month,
        name=td(MONTH_NAMES[month - 1]),
    )
    if dealer is not None:
        title += t(", {name} deals", name=names[dealer])
    return title


def _totals(totals: tuple[int, int], names: tuple[str, str]) -> str:
    return t(
        "Totals: {a} {a_total}, {b} {b_total}",
        a=names[0],
        a_total=totals[0],
        b=names[1],
        b_total=totals[1],
    )


def _yaku_line(y: YakuScore) -> str:
    """One yaku: :meth:`~koikoi.game.scoring.YakuScore.describe`, in the language in use."""
    if language() == "en":
        return y.describe()
    from koikoi.game.cards import format_cards
    from koikoi.game.scoring import YAKU_NAMES

    name = td(YAKU_NAMES.get(y.name, (y.name, y.name))[0])
    return f"{name} [{format_cards(y.cards)}]: {y.points}"


def _step_line(m: Multiplier, text: str) -> str:
    """A multiplier step (``text``: its English description) in the language in use."""
    if language() == "en":
        return text
    from koikoi.game.scoring import MULTIPLIER_NAMES

    label = MULTIPLIER_NAMES.get(m.name, m.name)
    return td(label) + text.removeprefix(label)


def round_lines(row: SheetRound, names: tuple[str, str]) -> list[str]:
    """One round as text: who won, the yaku, each multiplier, the points, the totals."""
    s = row.settlement
    entry = row.entry
    title = _round_title(row.number, row.dealer, names)
    if entry.winner is None:
        lines = [t("{title}: nobody wins", title=title)]
    else:
        lines = [t("{title}: {name} wins", title=title, name=names[entry.winner])]
        if any(entry.koikoi):
            lines[0] += t(
                "; koi-koi: {a} x{a_calls}, {b} x{b_calls}",
                a=names[0],
                a_calls=entry.koikoi[0],
                b=names[1],
                b_calls=entry.koikoi[1],
            )
    if s.winner is None:
        lines.append("  " + t("No score."))
    else:
        if s.yaku:
            lines.extend(f"  {_yaku_line(y)}" for y in s.yaku)
            lines.append("  " + t("Base: {base}", base=s.base))
        else:
            lines.append(f"  {td(_FLAT_AWARDS.get(s.reason, s.reason))}: {s.base}")
        lines.extend(
            f"    {_step_line(m, text)} -> {figure}"
            for m, (text, figure) in zip(s.multipliers, s.steps(), strict=True)
        )
        line = "  " + t("{name} scores {points}", name=names[s.winner], points=s.points)
        loser = 1 - s.winner
        if s.deltas[loser]:
            line += t(", {name} pays {points}", name=names[loser], points=-s.deltas[loser])
        lines.append(line + t("."))
    lines.append(_totals(row.totals, names))
    return lines


def summary_lines(sheet: ScoreSheet) -> list[str]:
    """The table of every round with running totals, then the result."""
    a, b = sheet.names
    rows = [(t("Round"), t("Winner"), t("Points"), a, b)]
    if sheet.start_points:
        rows.append((t("start"), "", "", str(sheet.start_points), str(sheet.start_points)))
    for r in sheet.played:
        s = r.settlement
        winner = "-" if s.winner is None else sheet.names[s.winner]
        if s.winner is not None and r.entry.winner is None:
            winner += t(" (dealer)")
        rows.append((str(r.number), winner, str(s.points), str(r.totals[0]), str(r.totals[1])))
    widths = [max(width(row[i]) for row in rows) for i in range(5)]
    lines = []
    for row in rows:
        pad = [" " * (w - width(cell)) for cell, w in zip(row, widths, strict=True)]
        cells = [
            pad[0] + row[0],
            row[1] + pad[1],
            pad[2] + row[2],
            pad[3] + row[3],
            pad[4] + row[4],
        ]
        lines.append("  ".join(cells).rstrip())
    lines.append(t("Result: {result}", result=sheet.result(language())))
    return lines


# --------------------------------------------------------------- interactive


class _EndOfInput(Exception):
    pass


class _Prompter:
    """Questions on ``out``, answers from ``stdin``; echoes answers that are piped in."""

    def __init__(self, stdin: IO[str], out: IO[str]) -> None:
        self.stdin = stdin
        self.out = out
        try:
            self.echo = not stdin.isatty()
        except (AttributeError, ValueError):
            self.echo = True

    def ask(self, question: str) -> str:
        self.out.write(f"{question}: ")
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            self.out.write("\n")
            raise _EndOfInput
        answer = line.strip()
        if self.echo:
            self.out.write(answer + "\n")
        return answer

    def say(self, text: str) -> None:
        self.out.write(text + "\n")

    def error(self, exc: Exception) -> None:
        self.out.write("  " + t("error: {error}; try again", error=exc) + "\n")


def _ask_round(sheet: ScoreSheet, p: _Prompter) -> RoundEntry | str:
    """One round's answers, or ``"undo"``, ``"quit"`` or ``"restart"``."""
    from koikoi.features.keeper import RoundEntry, check_koikoi
    from koikoi.game.cards import parse_cards

    n = sheet.round_number
    a, b = _labels(sheet.names, "{letter}={name}")
    while True:
        answer = p.ask(t("Who won round {n}? {a}, {b}, N=nobody (u: undo, q: quit)", n=n, a=a, b=b))
        key = answer.casefold()
        if key in _UNDO:
            return "undo"
        if key in _QUIT:
            return "quit"
        try:
            winner = _player(answer, sheet.names, nobody=True)
        except InvalidInputError as exc:
            p.error(exc)
            continue
        break
    if winner is None:
        return RoundEntry(None)
    calls = [0, 0]
    for q in (winner, 1 - winner):
        while True:
            answer = p.ask(t("Koi-koi calls by {name} in round {n} [0]", name=sheet.names[q], n=n))
            if answer.casefold() in _UNDO:
                return "restart"
            try:
                calls[q] = _count(answer, sheet.names[q])
                check_koikoi(sheet.rules, (calls[0], calls[1]), sheet.names)
            except InvalidInputError as exc:
                p.error(exc)
                continue
            break
    while True:
        answer = p.ask(
            t("{name}'s captured cards (codes such as 1L 3L 8L 9A)", name=sheet.names[winner])
        )
        if answer.casefold() in _UNDO:
            return "restart"
        try:
            if not answer:
                raise InvalidInputError("no cards given: type the winner's captured cards")
            entry = RoundEntry(winner, parse_cards(answer), (calls[0], calls[1]))
            sheet.settle(entry)
        except InvalidInputError as exc:
            p.error(exc)
            continue
        return entry


def _interactive(sheet: ScoreSheet, p: _Prompter) -> tuple[ScoreSheet, bool]:
    """Ask round after round; returns the sheet and whether the players quit early."""
    while True:
        while not sheet.is_over:
            p.say("")
            p.say(_round_title(sheet.round_number, sheet.dealer, sheet.names))
            try:
                got = _ask_round(sheet, p)
            except _EndOfInput:
                raise InvalidInputError(
                    f"the input ended in round {sheet.round_number} of {sheet.rounds}, "
                    f"with the score at {sheet.totals[0]} to {sheet.totals[1]} after round "
                    f"{len(sheet.played)}; answer q to end a match early"
                ) from None
            if got == "quit":
                return sheet, True
            if got == "restart":
                p.say(t("Round {n} again from the start.", n=sheet.round_number))
                continue
            if got == "undo":
                if not sheet.played:
                    p.say("  " + t("Nothing to undo: no round entered yet."))
                    continue
                p.say(t("Round {n} undone.", n=sheet.played[-1].number))
                sheet = sheet.undo()
                p.say(_totals(sheet.totals, sheet.names))
                continue
            assert not isinstance(got, str)
            sheet = sheet.add(got)
            p.say("")
            p.say("\n".join(round_lines(sheet.played[-1], sheet.names)))
        p.say("")
        p.say(t("The match is over: {result}", result=sheet.result(language())))
        try:
            answer = p.ask(t("u undoes the last round; Enter finishes"))
        except _EndOfInput:
            return sheet, False
        if answer.casefold() not in _UNDO:
            return sheet, False
        p.say(t("Round {n} undone.", n=sheet.played[-1].number))
        sheet = sheet.undo()
        p.say(_totals(sheet.totals, sheet.names))


def _ask_first_dealer(p: _Prompter, names: tuple[str, str]) -> int:
    while True:
        a, b = _labels(names, "{letter}={name}")
        answer = p.ask(t("Who deals round 1? {a}, {b}", a=a, b=b))
        try:
            dealer = _player(answer, names, nobody=False)
        except InvalidInputError as exc:
            p.error(exc)
            continue
        assert dealer is not None
        return dealer


# ------------------------------------------------------------------------ run


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi keeper``."""
    from koikoi.features.keeper import needs_first_dealer

    names = parse_names(args.names) if args.names is not None else None
    if args.file is not None:
        sheet = load_match_file(
            Path(args.file),
            rules_source=args.rules,
            names=names,
            rounds=args.rounds,
            first_dealer=args.first_dealer,
        )
        if args.json:
            print(json.dumps(sheet.to_dict(), ensure_ascii=False))
            return 0
        lines = [_header(sheet.rules, sheet.rounds, sheet.names, sheet.first_dealer)]
        for row in sheet.played:
            lines.append("")
            lines.extend(round_lines(row, sheet.names))
        lines.append("")
        lines.extend(summary_lines(sheet))
        print("\n".join(lines))
        return 0

    names = names or ("A", "B")
    rules = _load_rules(args.rules or "nintendo")
    out = sys.stderr if args.json else sys.stdout
    p = _Prompter(sys.stdin, out)
    dealer: int | None = None
    if args.first_dealer is not None:
        dealer = _player(args.first_dealer, names, nobody=False)
    # A sheet with a stand-in dealer checks --rounds before any question is asked.
    rounds = _new_sheet(rules, args.rounds, 0 if dealer is None else dealer, names).rounds
    p.say(_header(rules, rounds, names, dealer))
    if dealer is None and needs_first_dealer(rules):
        try:
            dealer = _ask_first_dealer(p, names)
        except _EndOfInput:
            raise InvalidInputError("the input ended before the first dealer was named") from None
    sheet = _new_sheet(rules, args.rounds, dealer, names)
    sheet, stopped = _interactive(sheet, p)
    if args.json:
        data = sheet.to_dict()
        data["stopped"] = stopped
        print(json.dumps(data, ensure_ascii=False))
        return 0
    p.say("")
    p.say("\n".join(summary_lines(sheet)))
    return 0

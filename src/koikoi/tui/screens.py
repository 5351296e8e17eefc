"""Screens around the table: new game, help, captures, round end, match end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Final

from rich import box
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Input, Select, Static

from koikoi.agents import make_agent
from koikoi.features.narrate import SETTLED_REASONS
from koikoi.features.opponents import DEFAULT_OPPONENT, LEVEL_CHOICES, level_choice
from koikoi.features.progress import YakuProgress, yaku_label, yaku_progress
from koikoi.features.rules_help import YAKU_NEEDS, YAKU_NEEDS_WHEN, yaku_rows
from koikoi.game.cards import KIND_MASKS, MONTH_NAMES, MONTH_NAMES_JA
from koikoi.game.errors import KoiKoiError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules, load_rules
from koikoi.i18n import N_, language, t, td, tn
from koikoi.tui.cardtext import KIND_MARKS, codes_text, legend_lines, pile_groups, pile_text
from koikoi.tui.controller import HUMAN, GameController, RoundResult
from koikoi.tui.widgets import OVER_TABLE_CLASS, FitsOverTable, TooSmall, localize_bindings

__all__ = [
    "FIRST_DEALER_CHOICES",
    "OPPONENT_CHOICES",
    "PACE_CHOICES",
    "CapturesScreen",
    "GameSettings",
    "HelpScreen",
    "MatchEndScreen",
    "NewGameScreen",
    "RoundEndScreen",
    "agent_available",
    "build_rules",
    "fold_path",
    "help_text",
    "round_table",
    "rules_summary",
    "yaku_table",
]

OPPONENT_CHOICES: Final[tuple[tuple[str, str], ...]] = tuple(
    (choice.agent, choice.label) for choice in LEVEL_CHOICES
)
"""Opponents offered on the new-game screen: the levels (spec, ``"3 · Casual"``),
weakest first; level 8 is ``expert``, the default."""

FIRST_DEALER_CHOICES: Final[tuple[tuple[str, str], ...]] = (
    ("rules", N_("As the rules say")),
    ("draw", N_("Card draw")),
    ("random", N_("Coin flip")),
)

PACE_CHOICES: Final[tuple[tuple[float, str], ...]] = (
    (0.0, N_("Instant")),
    (0.3, N_("Fast")),
    (0.8, N_("Normal")),
    (1.5, N_("Slow")),
)
DEFAULT_PACE: Final = 0.8


def piles_table(piles: tuple[int, int], names: tuple[str, str]) -> RichTable:
    """Both capture piles side by side, one row per kind."""
    table = RichTable(box=None, pad_edge=False, expand=True, show_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column(names[0], ratio=1)
    table.add_column(names[1], ratio=1)
    for kind, _ in pile_groups(0):
        cells: list[Text] = []
        for pile in piles:
            cards = pile & KIND_MASKS[kind]
            cell = Text(f"{cards.bit_count()} ", style="bold")
            cell.append_text(codes_text(cards))
            cells.append(cell)
        table.add_row(Text(f"{KIND_MARKS[kind]} {td(kind.label)}", style="bold"), *cells)
    return table


@dataclass(frozen=True, slots=True)
class GameSettings:
    """Everything needed to start a match."""

    rules: Rules
    opponent: str = DEFAULT_OPPONENT
    seed: int | None = None
    pace: float = DEFAULT_PACE


def build_rules(
    rules: str | Rules = "nintendo", *, rounds: int | None = None, first_dealer: str = "rules"
) -> Rules:
    """The rules of a new match: a preset or house-rules file, with the rounds and the
    first-dealer method changed when asked.

    Raises:
        RulesError: an unknown preset, a bad file or a value out of range.
    """
    base = load_rules(rules) if isinstance(rules, str) else rules
    changes: dict[str, object] = {}
    if rounds is not None and rounds != base.game.rounds:
        changes["game__rounds"] = rounds
    if first_dealer != "rules" and first_dealer != base.game.first_dealer:
        changes["game__first_dealer"] = first_dealer
    return base.replace(**changes) if changes else base


def agent_available(spec: str) -> bool:
    """Whether :func:`make_agent` can build ``spec`` now."""
    try:
        make_agent(spec)
    except KoiKoiError:
        return False
    return True


# ------------------------------------------------------------------ texts


def rules_summary(rules: Rules) -> list[str]:
    """The active rules in a few sentences."""
    g, p, k, e = rules.game, rules.play, rules.koikoi, rules.end
    lines = [
        t("Rules: {name}", name=rules.name)
        + (f" — {td(rules.description)}" if rules.description else ""),
        tn(
            "A match is {n} round; round k is month k.",
            "A match is {n} rounds; round k is month k.",
            g.rounds,
        )
        + " "
        + (
            t("The first dealer is decided by a card draw (earlier month deals).")
            if g.first_dealer == "draw"
            else t("The first dealer is decided by a coin flip.")
        ),
        t(
            "On your turn play a hand card: it captures a field card of the same month "
            "(with two, you choose one; with three, all four). No match: it stays on the field. "
            "Then the top stock card is drawn and captures the same way."
        ),
    ]
    if p.hand_card == "must_match":
        lines.append(t("You must play a matching card when you have one."))
    elif p.hand_card == "any_or_discard":
        lines.append(t("You may also lay a matching card on the field without capturing."))
    if p.wild_lightning:
        lines.append(t("The Lightning 11P captures any one field card."))
    lines.append(
        t(
            "When your yaku total goes up you choose: stop (shōbu) and score, "
            "or koi-koi to play on for more, at the risk of the opponent stopping first."
        )
    )
    bonus = {
        "opponent_x2": t("points double when the opponent had called koi-koi"),
        "challenge_x2": t("points double after a successful koi-koi or the opponent's koi-koi"),
        "ladder": t("each koi-koi call adds +1, +2, +3, then multiplies"),
        "none": t("no koi-koi bonus"),
    }[k.bonus]
    lines.append(
        t("Settlement: {bonus}", bonus=bonus)
        + (t("; 7 points or more double.") if k.seven_double else t("."))
        + (t(" At most {limit} koi-koi calls.", limit=k.limit) if k.limit else "")
    )
    exhausted = {
        "draw": t("nobody scores"),
        "highest": t("the higher yaku total scores"),
        "last_yaku": t("the last player to improve scores"),
        "dealer_point": t("the dealer gets {points}", points=e.oya_ken),
    }[e.exhausted]
    lines.append(t("If both hands run out: {what}.", what=exhausted))
    if g.start_points:
        lines.append(
            t(
                "Each player starts with {points} points; the loser pays the winner, "
                "and the match ends when a player has none left.",
                points=g.start_points,
            )
        )
    return lines


def yaku_table(rules: Rules) -> RichTable:
    """The yaku of the active rules: names, what each needs, points (:func:`yaku_rows`)."""
    table = RichTable(
        title=t("Yaku of the rules {name}", name=repr(rules.name)),
        title_justify="left",
        expand=False,
        pad_edge=False,
        box=box.SIMPLE_HEAD,
    )
    english = language() == "en"
    table.add_column(t("Yaku"), no_wrap=True)
    if english:
        table.add_column("日本語", no_wrap=True)
    table.add_column(t("Cards"))
    table.add_column(t("Pts"), justify="right", no_wrap=True)
    for row in yaku_rows(rules):
        if english:
            table.add_row(row.english, row.japanese, row.needs, str(row.points))
        else:
            table.add_row(td(row.english), _needs(row.needs, rules), str(row.points))
    return table


def _needs(needs: str, rules: Rules) -> str:
    """What a yaku needs (:attr:`YakuRow.needs`, English) in the language in use."""
    for english in (*YAKU_NEEDS.values(), *(when[1] for when in YAKU_NEEDS_WHEN.values())):
        if "{extra}" in english:
            extra = rules.yaku.extra
            if needs in (english.replace("{extra}", str(extra)), english.split(" (")[0]):
                text = td(english)
                return text.replace("{extra}", str(extra)) if extra else text.split("（")[0]
        elif needs == english:
            return td(english)
    return needs


KEYS_HELP: Final[tuple[tuple[str, str], ...]] = (
    (N_("← → or 1-8"), N_("choose a hand card (its matches on the field are marked ▼)")),
    ("Enter / Space", N_("play the chosen card (or click it twice)")),
    (N_("click a field card"), N_("play the chosen card onto it")),
    ("h", N_("hint: the expert's value of each play")),
    ("c", N_("both capture piles and the yaku progress in full")),
    ("+ / -", N_("opponent slower / faster; Space skips its animation")),
    ("s", N_("save the match (resume: koikoi play --resume FILE)")),
    ("? / F1", N_("this help")),
    ("q / Ctrl+C", N_("quit, offering to save")),
)


def help_text(rules: Rules) -> Group:
    """The help screen: rules summary, yaku table, card marks and keys."""
    parts: list[RenderableType] = []
    parts.append(Text(t("How to play"), style="bold underline"))
    for line in rules_summary(rules):
        parts.append(Text("• " + line))
    parts.append(Text(""))
    parts.append(yaku_table(rules))
    parts.append(Text(""))
    parts.append(Text(t("Card marks"), style="bold underline"))
    for line in legend_lines():
        parts.append(Text("  " + line))
    parts.append(Text(""))
    keys = RichTable(title=t("Keys"), show_header=False, pad_edge=False, box=None)
    keys.add_column(style="bold")
    keys.add_column()
    for key, what in KEYS_HELP:
        keys.add_row(td(key), td(what))
    parts.append(keys)
    return Group(*parts)


def round_table(results: list[RoundResult], names: tuple[str, str]) -> RichTable:
    """One row per finished round: month, dealer, winner, how, points, running scores.

    ``names`` should be short (``("You", "AI")``).
    """
    table = RichTable(expand=False, pad_edge=False, box=box.SIMPLE_HEAVY)
    for title, justify in (
        (t("Rd"), "right"),
        (t("Month"), "left"),
        (t("Dealer"), "left"),
        (t("Winner"), "left"),
        (t("How"), "left"),
        (t("Pts"), "right"),
        (names[0], "right"),
        (names[1], "right"),
    ):
        table.add_column(title, justify=justify)  # type: ignore[arg-type]
    for r in results:
        s = r.settlement
        winner = "—" if s.winner is None else names[s.winner]
        how = ", ".join(yaku_label(y.name) for y in s.yaku) or td(
            SETTLED_REASONS.get(s.reason, s.reason)
        )
        table.add_row(
            str(r.round_number),
            td(MONTH_NAMES[r.month - 1]),
            "?" if r.dealer is None else names[r.dealer],
            winner,
            how,
            str(s.points),
            str(r.scores[0]),
            str(r.scores[1]),
        )
    return table


# ---------------------------------------------------------------- screens


class NewGameScreen(Screen[None]):
    """Choose the opponent, the rules, the rounds, the first dealer, a seed and the pace."""

    DEFAULT_CSS = """
    NewGameScreen { align: center top; }
    #ng-title { text-style: bold; color: $accent; width: 1fr; content-align: center middle;
                height: 1; }
    #ng-grid { grid-size: 4; grid-columns: 13 1fr 13 1fr; grid-rows: 3; height: auto;
               grid-gutter: 0 1; }
    #ng-grid .label { content-align: left middle; height: 3; text-style: bold; }
    #ng-level { height: auto; padding: 0 1; }
    #ng-info { height: auto; color: $text-muted; padding: 0 1; }
    #ng-error { height: auto; color: $error; padding: 0 1; }
    #ng-buttons { height: 3; align-horizontal: center; }
    #ng-buttons Button { margin: 0 0 0 1; min-width: 8; width: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "start", N_("Start")),
        Binding("f1", "help", N_("Help")),
        Binding("f2", "stats", N_("Statistics")),
        Binding("escape", "app.request_quit", N_("Quit")),
    ]

    def __init__(
        self,
        *,
        defaults: GameSettings | None = None,
        resume: Path | None = None,
        on_start: Callable[[GameSettings], str | None] | None = None,
        on_resume: Callable[[Path], str | None] | None = None,
        on_tutorial: Callable[[], None] | None = None,
        on_stats: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        localize_bindings(self)
        self.defaults = defaults or GameSettings(get_rules("nintendo"))
        self.resume_path = resume
        self.on_start = on_start
        self.on_resume = on_resume
        self.on_tutorial = on_tutorial
        self.on_stats = on_stats
        self.available = {spec: agent_available(spec) for spec, _ in OPPONENT_CHOICES}

    def compose(self) -> ComposeResult:
        d = self.defaults
        opponents = [
            (
                self._choice_label(spec, label)
                if self.available[spec]
                else t("{label} (n/a)", label=self._choice_label(spec, label)),
                spec,
            )
            for spec, label in OPPONENT_CHOICES
        ]
        chosen = level_choice(d.opponent)
        opponent = chosen.agent if chosen is not None else d.opponent
        if opponent not in [spec for _, spec in opponents]:
            opponents.append((opponent, opponent))
        preset = d.rules.name if d.rules.name in PRESET_NAMES else "nintendo"
        pace = min(PACE_CHOICES, key=lambda c: abs(c[0] - d.pace))[0]
        yield Static(t("Koi-Koi こいこい — new game"), id="ng-title")
        with Grid(id="ng-grid"):
            yield Static(t("Opponent"), classes="label")
            yield Select(opponents, value=opponent, allow_blank=False, id="opponent")
            yield Static(t("Rules"), classes="label")
            yield Select(
                [(name, name) for name in PRESET_NAMES],
                value=preset,
                allow_blank=False,
                id="preset",
            )
            yield Static(t("Rounds"), classes="label")
            yield Input(str(d.rules.game.rounds), type="integer", id="rounds")
            yield Static(t("House rules"), classes="label")
            yield Input(placeholder=t("optional .toml file"), id="house")
            yield Static(t("First dealer"), classes="label")
            yield Select(
                [(td(label), value) for value, label in FIRST_DEALER_CHOICES],
                value="rules",
                allow_blank=False,
                id="first-dealer",
            )
            yield Static(t("Seed"), classes="label")
            yield Input(
                "" if d.seed is None else str(d.seed),
                placeholder=t("random"),
                type="integer",
                id="seed",
            )
            yield Static(t("AI pace"), classes="label")
            yield Select(
                [(td(label), value) for value, label in PACE_CHOICES],
                value=pace,
                allow_blank=False,
                id="pace",
            )
        yield Static(self._level_text(d.opponent), id="ng-level")
        yield Static("", id="ng-info")
        yield Static("", id="ng-error")
        with Horizontal(id="ng-buttons"):
            yield Button(t("Start"), id="start", variant="primary")
            if self.resume_path is not None:
                yield Button(t("Resume saved"), id="resume", variant="success")
            if self.on_tutorial is not None:
                yield Button(t("Learn to play"), id="learn", variant="warning")
            yield Button(t("Help"), id="help")
            if self.on_stats is not None:
                yield Button(t("Statistics"), id="stats")
            yield Button(t("Quit"), id="quit", variant="error")
        yield Footer()
        yield TooSmall()

    def on_mount(self) -> None:
        self.query_one("#ng-info", Static).update(self._info_text())
        self.query_one("#start", Button).focus()

    @staticmethod
    def _choice_label(spec: str, label: str) -> str:
        """A level's ``"3 · Casual"`` with its title in the language in use."""
        choice = level_choice(spec)
        return label if choice is None else f"{choice.level.number} · {td(choice.level.title)}"

    @staticmethod
    def _level_text(spec: str) -> Text:
        """The chosen opponent in a line: its level, title and description."""
        choice = level_choice(spec)
        text = Text()
        if choice is None:
            text.append(t("Opponent {spec}", spec=spec), "bold")
            text.append(t(": an agent spec given on the command line."))
            return text
        text.append(
            t("Level {level} · {title}", level=choice.level.number, title=td(choice.level.title)),
            "bold",
        )
        text.append(f": {td(choice.level.description)}")
        return text

    @on(Select.Changed, "#opponent")
    def _opponent_changed(self, event: Select.Changed) -> None:
        self.query_one("#ng-level", Static).update(self._level_text(str(event.value)))

    def _info_text(self) -> str:
        try:
            rules = self._rules()
        except KoiKoiError as exc:
            return t("Rules: {name}", name=exc)
        first = rules.game.first_dealer
        description = td(rules.description) if rules.description else t("house rules")
        line = f"{rules.name}: {description.rstrip('.').rstrip('。')}{t('.')} " + (
            t("First dealer by card draw.") if first == "draw" else t("First dealer by coin flip.")
        )
        missing = [spec for spec, ok in self.available.items() if not ok]
        if missing:
            line += "\n" + t("Not available yet: {agents}.", agents=", ".join(missing))
        return line

    def _rules(self) -> Rules:
        house = self.query_one("#house", Input).value.strip()
        preset = str(self.query_one("#preset", Select).value)
        return load_rules(house) if house else get_rules(preset)

    def settings(self) -> GameSettings:
        """The settings as filled in.

        Raises:
            KoiKoiError: a bad rules file, rounds or seed, with a message naming it.
        """
        from koikoi.game.errors import InvalidInputError

        base = self._rules()
        rounds_text = self.query_one("#rounds", Input).value.strip()
        rounds: int | None = None
        if rounds_text:
            try:
                rounds = int(rounds_text)
            except ValueError:
                raise InvalidInputError(
                    f"rounds must be a whole number, not {rounds_text!r}"
                ) from None
        seed_text = self.query_one("#seed", Input).value.strip()
        seed: int | None = None
        if seed_text:
            try:
                seed = int(seed_text)
            except ValueError:
                raise InvalidInputError(f"seed must be a whole number, not {seed_text!r}") from None
            if seed < 0:
                raise InvalidInputError(f"seed must be 0 or more, not {seed}")
        first = str(self.query_one("#first-dealer", Select).value)
        rules = build_rules(base, rounds=rounds, first_dealer=first)
        opponent = str(self.query_one("#opponent", Select).value)
        make_agent(opponent)  # raises InvalidInputError when not available
        pace_value = self.query_one("#pace", Select).value
        pace = float(pace_value) if isinstance(pace_value, (int, float)) else DEFAULT_PACE
        return GameSettings(rules, opponent, seed, pace)

    def _show_error(self, message: str) -> None:
        self.query_one("#ng-error", Static).update(message)

    @on(Select.Changed, "#preset")
    @on(Input.Submitted, "#house")
    def _rules_changed(self) -> None:
        try:
            rules = self._rules()
        except KoiKoiError:
            pass
        else:
            self.query_one("#rounds", Input).value = str(rules.game.rounds)
        self.query_one("#ng-info", Static).update(self._info_text())

    @on(Input.Changed, "#house")
    def _house_changed(self) -> None:
        self.query_one("#ng-info", Static).update(self._info_text())

    def action_start(self) -> None:
        try:
            settings = self.settings()
        except KoiKoiError as exc:
            self._show_error(str(exc))
            return
        self._show_error("")
        if self.on_start is not None:
            error = self.on_start(settings)
            if error:
                self._show_error(error)

    def action_help(self) -> None:
        try:
            rules = self._rules()
        except KoiKoiError:
            rules = get_rules("nintendo")
        self.app.push_screen(HelpScreen(rules))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """F2 is offered only when there are statistics to open (the app keeps a history)."""
        if action == "stats":
            return self.on_stats is not None
        return True

    def action_stats(self) -> None:
        """Open the statistics of finished matches (when the app keeps a history)."""
        if self.on_stats is not None:
            self.on_stats()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        button = event.button.id
        if button == "start":
            self.action_start()
        elif button == "resume" and self.resume_path is not None and self.on_resume:
            error = self.on_resume(self.resume_path)
            if error:
                self._show_error(error)
        elif button == "learn" and self.on_tutorial is not None:
            self.on_tutorial()
        elif button == "help":
            self.action_help()
        elif button == "stats":
            self.action_stats()
        elif button == "quit":
            self.app.exit()

    @on(Input.Submitted, "#rounds")
    @on(Input.Submitted, "#seed")
    def _submitted(self) -> None:
        self.action_start()


class HelpScreen(ModalScreen[None]):
    """Rules summary, the yaku table of the active rules, card marks and keys."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen #help-box { width: 100%; max-width: 110; height: 100%; border: thick $accent;
                           background: $panel; }
    HelpScreen #help-title { text-style: bold; color: $accent; height: 1;
                             content-align: center middle; width: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", N_("Close")),
        Binding("q", "close", show=False),
        Binding("question_mark", "close", show=False),
        Binding("f1", "close", show=False),
    ]

    def __init__(self, rules: Rules) -> None:
        super().__init__()
        localize_bindings(self)
        self.rules = rules

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(t("Help — Esc to close"), id="help-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(help_text(self.rules), id="help-text")
        yield Footer()
        yield TooSmall()

    def action_close(self) -> None:
        self.dismiss(None)


def progress_text(rows: list[YakuProgress], *, only_started: bool = False) -> Text:
    """Yaku progress, one per line with a bar: ``Inoshikacho ██░ 2/3 · 5 pts``."""
    text = Text()
    shown = [r for r in rows if r.have > 0 or r.done] if only_started else rows
    width = max((cell_len(yaku_label(r.name)) for r in shown), default=0)
    for i, row in enumerate(shown):
        if i:
            text.append("\n")
        style = "bold green" if row.done else ("dim strike" if not row.possible else "")
        label = yaku_label(row.name)
        text.append(label + " " * (width - cell_len(label) + 1), style)
        filled = min(row.have, row.need)
        text.append("█" * filled, "green" if row.possible else "dim")
        text.append("░" * (row.need - filled), "dim")
        mark = " ✓" if row.done else ("" if row.possible else " ✗")
        text.append(f" {filled}/{row.need}{mark} · " + tn("{n} pt", "{n} pts", row.points), style)
    if only_started and len(shown) < len(rows):
        if shown:
            text.append("\n")
        text.append(t("({n} more yaku not started)", n=len(rows) - len(shown)), "dim")
    return text


def player_summary(
    game: GameController,
    piles: tuple[int, int],
    month: int,
    player: int,
    *,
    only_started: bool = False,
) -> Group:
    """One player's capture pile by kind and progress toward each yaku."""
    pile = piles[player]
    rows = yaku_progress(game.rules, pile, piles[1 - player], month=month)
    return Group(
        Text(
            t("{name} — captured {count}", name=game.names[player], count=pile.bit_count()),
            style="bold underline",
        ),
        pile_text(pile, multiline=True),
        progress_text(rows, only_started=only_started),
    )


def piles_and_progress(
    game: GameController,
    piles: tuple[int, int],
    month: int,
    *,
    only_started: bool = False,
    side_by_side: bool = False,
) -> RenderableType:
    """Both players' capture piles by kind and yaku progress (the opponent first,
    or the human on the left when ``side_by_side``)."""
    if side_by_side:
        grid = RichTable.grid(expand=True, padding=(0, 2))
        grid.add_column(ratio=1)
        grid.add_column(ratio=1)
        grid.add_row(
            player_summary(game, piles, month, HUMAN, only_started=only_started),
            player_summary(game, piles, month, 1 - HUMAN, only_started=only_started),
        )
        return grid
    return Group(
        player_summary(game, piles, month, 1 - HUMAN, only_started=only_started),
        Text(""),
        player_summary(game, piles, month, HUMAN, only_started=only_started),
    )


class CapturesScreen(ModalScreen[None]):
    """Both capture piles and the progress toward every yaku, in full."""

    DEFAULT_CSS = """
    CapturesScreen { align: center middle; }
    CapturesScreen #cap-box { width: 100%; max-width: 110; height: auto; max-height: 100%;
                              border: thick $accent; background: $panel; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", N_("Close")),
        Binding("c", "close", show=False),
        Binding("enter", "close", show=False),
    ]

    def __init__(self, game: GameController) -> None:
        super().__init__()
        localize_bindings(self)
        self.game = game

    def compose(self) -> ComposeResult:
        view = self.game.view()
        with VerticalScroll(id="cap-box"):
            yield Static(
                Text(
                    t(
                        "Captures — round {round}, month {month} ({name}) — Esc to close",
                        round=view.round_number,
                        month=view.month,
                        name=td(MONTH_NAMES[view.month - 1]),
                    ),
                    style="bold",
                )
            )
            yield Static(
                piles_and_progress(self.game, view.piles, view.month, side_by_side=True),
                id="cap-text",
            )
        yield TooSmall()

    def action_close(self) -> None:
        self.dismiss(None)


class RoundEndScreen(FitsOverTable, ModalScreen[None]):
    """The settlement explained, both piles, the scores; Enter goes on."""

    # The settlement over the lower table: the field (what was left) stays in view.
    FIT_BOX = "#re-box"
    FIT_ANCHOR = "#field"
    FIT_LEAST = 12

    DEFAULT_CSS = """
    RoundEndScreen { align: center bottom; }
    RoundEndScreen #re-box { width: 100%; max-width: 100; height: auto; max-height: 100%;
                             border: thick $success; background: $panel; padding: 0 1; }
    RoundEndScreen #re-title { text-style: bold; color: $success; }
    RoundEndScreen #re-buttons { height: 1; align-horizontal: center; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "close", N_("Continue")),
        Binding("space", "close", show=False),
        Binding("escape", "close", show=False),
    ]

    def __init__(self, result: RoundResult, game: GameController, *, last: bool = False) -> None:
        super().__init__(classes=OVER_TABLE_CLASS)
        localize_bindings(self)
        self.result = result
        self.game = game
        self.last = last

    def title_line(self) -> str:
        r = self.result
        s = r.settlement
        names = self.game.names
        head = t(
            "Round {round} ({name}) is over: ",
            round=r.round_number,
            name=td(MONTH_NAMES[r.month - 1]),
        )
        if s.winner is None:
            return head + t("nobody scores.")
        if s.winner == HUMAN:
            return head + t("{name} score {points}.", name=names[s.winner], points=s.points)
        return head + t("{name} scores {points}.", name=names[s.winner], points=s.points)

    def compose(self) -> ComposeResult:
        r = self.result
        names = self.game.names
        with VerticalScroll(id="re-box"):
            yield Static(self.title_line(), id="re-title")
            yield Static(self.game.explain(r.settlement), id="re-explain")
            if r.view is not None:
                yield Static(piles_table(r.view.piles, names), id="re-piles")
            yield Static(
                Text(
                    t(
                        "Score: {first} {first_score} — {second} {second_score}",
                        first=names[0],
                        first_score=r.scores[0],
                        second=names[1],
                        second_score=r.scores[1],
                    ),
                    style="bold",
                ),
                id="re-scores",
            )
            with Horizontal(id="re-buttons"):
                label = t("See the result (Enter)") if self.last else t("Next round (Enter)")
                yield Button(label, id="next", variant="primary", compact=True)
        yield TooSmall()

    def action_close(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#next")
    def _next(self) -> None:
        self.dismiss(None)


class MatchEndScreen(Screen[str]):
    """Per-round table and the winner; returns ``"new"`` or ``"quit"``."""

    DEFAULT_CSS = """
    MatchEndScreen { align: center top; }
    #me-title { text-style: bold; color: $accent; width: 1fr; content-align: center middle;
                height: auto; }
    #me-scroll { height: 1fr; }
    #me-table { width: 1fr; content-align: center top; }
    #me-record { color: $text-muted; height: auto; }
    #me-path { color: $text-muted; height: auto; }
    #me-buttons { height: 3; align-horizontal: center; }
    #me-buttons Button { margin: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "choose('new')", N_("New game")),
        Binding("q", "choose('quit')", N_("Quit")),
        Binding("escape", "choose('quit')", show=False),
    ]

    def __init__(self, game: GameController, record: str, *, path: Path | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.game = game
        self.record = record
        self.path = path
        """The record's file, shown on its own line(s) under ``record`` (None: none)."""

    def title_line(self) -> str:
        match = self.game.match
        names = self.game.names
        s0, s1 = match.scores
        if match.winner is None:
            return t("The match is drawn, {first} to {second}.", first=s0, second=s1)
        if match.winner == HUMAN:
            return t("You win the match, {first} to {second}!", first=s0, second=s1)
        return t("{name} wins the match, {first} to {second}.", name=names[1], first=s1, second=s0)

    def compose(self) -> ComposeResult:
        yield Static(self.title_line(), id="me-title")
        with VerticalScroll(id="me-scroll"):
            yield Static(round_table(self.game.results, (t("You"), t("AI"))), id="me-table")
        yield Static(self.record, id="me-record")
        if self.path is not None:
            yield Static("", id="me-path")
        with Horizontal(id="me-buttons"):
            yield Button(t("New game (n)"), id="new", variant="primary")
            yield Button(t("Quit (q)"), id="quit", variant="error")
        yield Footer()
        yield TooSmall()

    def on_mount(self) -> None:
        self._show_path()

    def on_resize(self) -> None:
        self._show_path()

    def _show_path(self) -> None:
        """The record's file folded to the screen's width, never mid-word."""
        if self.path is not None:
            width = max(20, self.size.width or self.app.size.width)
            self.query_one("#me-path", Static).update(Text(fold_path(self.path, width)))

    def action_choose(self, what: str) -> None:
        self.dismiss(what)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "quit")


def fold_path(path: Path | str, width: int, *, home: Path | None = None) -> str:
    """``path`` as shown in ``width`` cells: the home directory as ``~``, then folded
    onto more lines only just after a separator (a single name longer than the width
    is the only thing ever cut).

    Args:
        path: the file.
        width: the cells of a line.
        home: the home directory (default: the user's).

    >>> fold_path("/home/ann/.local/share/koikoi/records/r.json", 60, home=Path("/home/ann"))
    '~/.local/share/koikoi/records/r.json'
    >>> print(fold_path("/srv/koikoi/records/koikoi-1-seed4.json", 20, home=Path("/home/ann")))
    /srv/koikoi/records/
    koikoi-1-seed4.json
    """
    text = str(path)
    base = str(home if home is not None else Path.home())
    if base not in ("", "/") and (text == base or text.startswith(base.rstrip("/") + "/")):
        text = "~" + text[len(base.rstrip("/")) :]
    width = max(1, width)
    parts = [part + "/" for part in text.split("/")]
    parts[-1] = parts[-1][:-1]
    lines: list[str] = []
    line = ""
    for part in parts:
        if line and cell_len(line + part) > width:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return "\n".join(lines)


def month_title(month: int) -> str:
    """``"3 Cherry (桜 sakura)"``."""
    if language() != "en":
        return t("{month} {name}", month=month, name=td(MONTH_NAMES[month - 1]))
    return f"{month} {MONTH_NAMES[month - 1]} ({MONTH_NAMES_JA[month - 1]})"

"""Replays in words (koikoi.features.narrate): every event kind told, settlements, mistake marks."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from koikoi.agents.mcts import MCTSAgent
from koikoi.features.narrate import (
    MISTAKE_THRESHOLD,
    Mistake,
    Narrator,
    mistakes_from_analysis,
    record_analysis,
    settled_in,
)
from koikoi.game import engine
from koikoi.game.actions import describe_action_id, parse_action
from koikoi.game.cards import Card, parse_cards
from koikoi.game.engine import Event, Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord, iter_steps, record_from_dict
from koikoi.game.rules import get_rules
from koikoi.game.scoring import Scorer, Settlement
from koikoi.i18n import set_language
from koikoi.lab.analysis import analyze_record
from koikoi.server.records import replay_frames

NAMES = ("Aiko", "Ben")
SILENT = {"hand", "round_over"}
"""Event kinds told elsewhere: hands are on the board, a round's end is its settlement."""


def _engine_event_kinds() -> set[str]:
    """Every event kind the engine's source emits."""
    text = Path(engine.__file__).read_text("utf-8")
    return set(re.findall(r'Event\(\s*"([a-z_]+)"', text))


def _played_match(seed: int, rounds: int = 2, **changes: Any) -> Match:
    rules = get_rules("nintendo").replace(game__rounds=rounds, **changes)
    match = Match(rules, seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_ids()))
    return match


@pytest.fixture(scope="module")
def record() -> GameRecord:
    return GameRecord.from_match(_played_match(5), players=list(NAMES))


# ------------------------------------------------------------------ events

EXAMPLES: list[tuple[Event, str]] = [
    (
        Event("first_dealer", 1, None, 0, {"method": "draw", "dealer": 1, "leader": 1}),
        "A draw decides the first dealer: Ben.",
    ),
    (
        Event("first_dealer", 0, None, 0, {"method": "random", "dealer": 0, "leader": 0}),
        "A coin flip decides the first dealer: Aiko.",
    ),
    (
        Event("round_start", None, None, 0, {"round": 2, "month": 2, "dealer": 0, "leader": 1}),
        "Round 2, month 2 (Plum): Aiko deals. Ben leads.",
    ),
    (Event("redeal", None, None, 0, {"why": "field four of a month"}), "four of a month"),
    (
        Event("instant", 0, None, parse_cards("1L 1R 1P1 1P2"), {"yaku": "teshi", "points": 6}),
        "Aiko holds an instant hand, Four of a month: 6 points.",
    ),
    (
        Event("play", 0, Card.CHERRY_CURTAIN, parse_cards("3L 3P1")),
        "Aiko plays 3L Cherry Curtain and captures 3P1.",
    ),
    (
        Event("play", 1, Card.CHERRY_CURTAIN, 0),
        "Ben plays 3L Cherry Curtain, which matches nothing, and lays it on the field.",
    ),
    (
        Event("play", 0, Card.PINE_CRANE, 0, {"discard": True}),
        "Aiko lays 1L Pine Crane on the field without capturing.",
    ),
    (
        Event("draw", 1, Card.SUSUKI_GEESE, 0),
        "Ben draws 8A Susuki grass Geese, which matches nothing, and lays it on the field.",
    ),
    (
        Event("draw", 1, Card.SUSUKI_GEESE, parse_cards("8A 8L")),
        "Ben draws 8A Susuki grass Geese and captures 8L.",
    ),
    (
        Event("draw", 0, Card.SUSUKI_GEESE, 0, {"choice": ["8L", "8P1"]}),
        "Aiko draws 8A Susuki grass Geese, which matches 8L 8P1: a capture to choose.",
    ),
    (
        Event("take", 0, Card.SUSUKI_GEESE, parse_cards("8A 8L")),
        "Aiko takes 8L with the drawn 8A Susuki grass Geese.",
    ),
    (Event("yaku", 1, None, 0, {"total": 1}), "Ben now holds yaku worth 1 point."),
    (Event("yaku", 1, None, 0, {"total": 5}), "Ben now holds yaku worth 5 points."),
    (Event("koikoi", 0, None, 0, {"calls": 1}), "Aiko calls koi-koi and plays on."),
    (Event("koikoi", 0, None, 0, {"calls": 2}), "Aiko calls koi-koi again (call 2)."),
    (Event("stop", 1, None, 0, {"automatic": False}), "Ben stops the round (shōbu)."),
    (Event("stop", 1, None, 0, {"automatic": True}), "Ben stops: no koi-koi is possible now."),
    (Event("exhausted"), "Both hands are played out."),
    (
        Event("match_over", 1, None, 0, {"scores": [3, 12]}),
        "The match is over: Ben wins 12 to 3.",
    ),
    (
        Event("match_over", None, None, 0, {"scores": [7, 7]}),
        "The match is over: a draw, 7 to 7.",
    ),
]


@pytest.mark.parametrize(("event", "expected"), EXAMPLES, ids=lambda x: getattr(x, "kind", ""))
def test_each_event_is_told_in_words(event: Event, expected: str) -> None:
    line = Narrator(NAMES, "en").event(event)
    assert line is not None and expected in line


@pytest.mark.parametrize(("event", "expected"), EXAMPLES, ids=lambda x: getattr(x, "kind", ""))
def test_the_player_named_you_is_told_in_the_second_person(event: Event, expected: str) -> None:
    """The terminal game's records name the human "You": "You play ...", not "You plays"."""
    narrator = Narrator(("You", "AI"), "en")
    assert narrator.you == 0
    line = narrator.event(event)
    assert line is not None
    for wrong in (
        "You plays",
        "You draws",
        "You lays",
        "You takes",
        "You calls",
        "You stops",
        "You holds",
        "You now holds",
        "You wins",
        "You deals",
        "You leads",
    ):
        assert wrong not in line
    if event.player == 0 and event.kind not in ("first_dealer",):
        assert "You " in line or "you " in line, line
    third = Narrator(("Aiko", "Ben"), "en", you=None).event(event)
    assert third is not None and expected in third


def test_every_event_kind_of_the_engine_is_narrated() -> None:
    """A new event kind in the engine fails here until the narrator tells it."""
    kinds = _engine_event_kinds()
    assert {"play", "draw", "take", "koikoi", "stop", "round_start"} <= kinds
    told = {e.kind for e, _ in EXAMPLES}
    assert kinds - SILENT <= told, f"not narrated: {sorted(kinds - SILENT - told)}"
    narrator = Narrator(NAMES, "en")
    for kind in SILENT:
        assert narrator.event(Event(kind, 0)) is None


def test_a_move_and_its_draw_make_one_sentence(record: GameRecord) -> None:
    narrator = Narrator(NAMES, "en")
    steps = list(iter_steps(record))
    moves = [s for s in steps if s.action is not None and s.action.action.startswith("play")]
    assert moves
    for step in moves:
        lines = narrator.step(step)
        who = NAMES[step.action.player] if step.action else ""
        card = parse_action(step.action.action if step.action else "").card  # type: ignore[union-attr]
        assert lines[0].startswith(f"{who} plays {Card(card).code} ")
        draws = [e for e in step.events if e.kind == "draw"]
        assert len(draws) == 1 and draws[0].card is not None
        assert f"; {who} draws {Card(draws[0].card).code} " in lines[0]
    for step in steps:
        assert narrator.step(step), f"step {step.index} has no words"


def test_a_move_of_you_reads_as_one_sentence() -> None:
    events = [
        Event("play", 0, Card.CHERRY_CURTAIN, parse_cards("3L 3P1")),
        Event("draw", 0, Card.SUSUKI_GEESE, 0),
    ]
    assert Narrator(("You", "AI"), "en").events(events) == [
        "You play 3L Cherry Curtain and capture 3P1; you draw 8A Susuki grass Geese, "
        "which matches nothing, and lay it on the field."
    ]
    assert Narrator(("You", "AI"), "ja").events(events)[0].startswith("あなたは3L 桜を出して")


def test_the_words_are_japanese_in_japanese(record: GameRecord) -> None:
    en, ja = Narrator(NAMES, "en"), Narrator(NAMES, "ja")
    step = next(s for s in iter_steps(record) if s.kind == "action")
    english, japanese = en.step(step), ja.step(step)
    assert english != japanese
    assert "plays" not in " ".join(japanese) and "を出" in japanese[0]
    assert ja.event(Event("koikoi", 0, None, 0, {"calls": 1})) == "Aikoは「こいこい」して続ける。"


def test_a_round_ending_step_explains_its_settlement(record: GameRecord) -> None:
    narrator = Narrator(NAMES, "en")
    steps = list(iter_steps(record))
    ending = [s for s in steps if settled_in(s)]
    assert len(ending) == len(record.settlements) == 2
    for step in ending:
        (settlement,) = settled_in(step)
        lines = narrator.settlement(settlement)
        assert lines[0].startswith("Round settled")
        text = "\n".join(lines)
        assert "Player 0" not in text and "Player 1" not in text
        if settlement.winner is not None:
            assert f"{NAMES[settlement.winner]} scores {settlement.points} point" in text
        else:
            assert "Nobody scores." in text
    assert [settled_in(s)[0].to_dict() for s in ending] == record.settlements
    assert not settled_in(steps[1])


def _koikoi_settlement() -> Settlement:
    """A stop after the opponent's koi-koi: yaku, a base and a doubling step."""
    scorer = Scorer(get_rules("nintendo"))
    result = scorer.evaluate(parse_cards("1L 3L 8L 9A"), 1, False)
    s = scorer.settle(
        result,
        winner=1,
        reason="stop",
        own_koikoi=0,
        opponent_koikoi=1,
        improved_after_koikoi=False,
    )
    # a zero-sum table: the loser pays what the winner scores
    return dataclasses.replace(s, deltas=(-s.points, s.points))


def test_a_settlement_is_told_in_japanese_with_the_names() -> None:
    s = _koikoi_settlement()
    lines = Narrator(NAMES, "ja").settlement(s)
    assert lines[0] == "この回の清算（勝負）。"
    assert lines[1] == "役："
    assert "  三光 [1L 3L 8L]: 5" in lines
    assert f"Benの得点 {s.points}点。" in lines
    assert f"Aikoが{-s.deltas[0]}点支払う。" in lines
    text = "\n".join(lines)
    assert not re.search(r"Player|Round|Yaku|Base|scores|pays|Three", text)
    # every multiplier step, with the running figure, as the core computes it
    figures = [figure for _, figure in s.steps()]
    assert [int(line.rsplit("-> ", 1)[1]) for line in lines if "->" in line] == figures


def test_the_player_called_you_scores_and_pays_in_the_second_person() -> None:
    s = _koikoi_settlement()
    en = Narrator(("AI", "You"), "en", you=1).settlement(s)
    assert en[-2:] == [f"You score {s.points} points.", f"AI pays {-s.deltas[0]}."]
    ja = Narrator(("AI", "あなた"), "ja", you=1).settlement(s)
    assert ja[-2] == f"あなたの得点 {s.points}点。"


def test_the_live_game_and_the_replays_share_the_settlement_words() -> None:
    from koikoi.tui.controller import GameController

    s = _koikoi_settlement()
    controller = GameController(get_rules("nintendo"), opponent="random", seed=1)
    for lang in ("en", "ja"):
        set_language(lang)
        try:
            narrator = Narrator(controller.names, you=0)
            assert controller.explain(s) == "\n".join(narrator.settlement(s))
        finally:
            set_language("en")
    assert "Player" not in controller.explain(s)


# ---------------------------------------------------------------- mistakes


def _fake_analysis(record: GameRecord, losses: dict[int, float]) -> dict[str, Any]:
    """An analysis in the shape of ``koikoi analyze --json``: the given losses at the given
    action numbers, with some other legal move as the best."""
    steps = list(iter_steps(record))
    decisions = []
    number = 0
    previous = None
    for step in steps:
        if step.kind == "action" and step.action is not None and previous is not None:
            number += 1
            if number in losses:
                played = parse_action(step.action.action).id
                others = [a for a in previous.view(step.action.player).legal_ids if a != played]
                decisions.append(
                    {
                        "index": number,
                        "round": step.action.round,
                        "player": step.action.player,
                        "played": describe_action_id(played),
                        "best": describe_action_id(others[0]),
                        "loss": losses[number],
                    }
                )
        previous = step
    return {"agent": "test", "decisions": decisions}


def test_clear_mistakes_are_marked_with_the_loss_and_the_better_move(
    record: GameRecord,
) -> None:
    analysis = _fake_analysis(record, {1: 2.14, 3: 0.2, 5: MISTAKE_THRESHOLD})
    mistakes = mistakes_from_analysis(analysis, record)
    assert sorted(mistakes) == [1, 5]  # 0.2 is not clearly worse
    first = mistakes[1]
    assert first.player == record.actions[0].player and first.played == record.actions[0].action
    best = analysis["decisions"][0]["best"]
    text = Narrator(NAMES, "en").mistake(first)
    assert text.startswith("Mistake: −2.1 points; better: ")
    assert Narrator(NAMES, "en").action(best) in text
    assert "悪手" in Narrator(NAMES, "ja").mistake(first)


def test_the_output_of_analyze_record_is_read(record: GameRecord) -> None:
    short = GameRecord.from_match(_played_match(3, rounds=1), players=list(NAMES))
    analysis = analyze_record(short, MCTSAgent(iterations=2, rollouts=1), seed=1)
    data = analysis.to_dict()
    every = mistakes_from_analysis(data, short, threshold=0.0)
    assert set(every) == {d.index for d in analysis.decisions}
    marked = mistakes_from_analysis(data, short)
    assert set(marked) == {d.index for d in analysis.decisions if d.is_mistake(MISTAKE_THRESHOLD)}
    # The analysis's own verdict decides: a big loss within the search's noise is no
    # mistake; an older analysis without verdicts falls back to the loss alone.
    noisy = {**data, "decisions": [{**d, "loss": 5.0, "mistake": False} for d in data["decisions"]]}
    assert mistakes_from_analysis(noisy, short) == {}
    old = {
        **noisy,
        "decisions": [{k: v for k, v in d.items() if k != "mistake"} for d in noisy["decisions"]],
    }
    assert set(mistakes_from_analysis(old, short)) == {d.index for d in analysis.decisions}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: [], "JSON object of 'koikoi analyze --json'"),
        (lambda a: {"decisions": "x"}, "a list 'decisions'"),
        (lambda a: {"decisions": [1]}, "decision 1: must be an object"),
        (lambda a: {"decisions": [{**a["decisions"][0], "index": 0}]}, "index must be"),
        (lambda a: {"decisions": [{**a["decisions"][0], "loss": -1}]}, "loss must be"),
        (lambda a: {"decisions": [{**a["decisions"][0], "loss": True}]}, "loss must be"),
        (lambda a: {"decisions": [{**a["decisions"][0], "best": "fly"}]}, "cannot read action"),
        (lambda a: {"decisions": [{**a["decisions"][0], "played": "stop"}]}, "another record"),
    ],
)
def test_a_bad_or_foreign_analysis_is_refused(
    record: GameRecord, change: Any, message: str
) -> None:
    analysis = _fake_analysis(record, {2: 3.0})
    with pytest.raises(InvalidInputError, match=re.escape(message)):
        mistakes_from_analysis(change(analysis), record)


def test_replay_frames_carry_the_words_and_the_marks(record: GameRecord) -> None:
    analysis = _fake_analysis(record, {2: 3.0})
    data = replay_frames(record, analysis=analysis)
    assert data["analysed"] and data["mistakes"] == 1
    marked = [f for f in data["frames"] if f["mistake"]]
    assert len(marked) == 1
    frame = marked[0]
    assert (
        frame["action"] == record.actions[1].action and frame["actor"] == record.actions[1].player
    )
    assert frame["mistake"]["text"].startswith("Mistake: −3.0 points; better: ")
    assert all(f["narration"] for f in data["frames"])
    plain = replay_frames(record)
    assert not plain["analysed"] and not any(f["mistake"] for f in plain["frames"])
    japanese = replay_frames(record, lang="ja")
    assert japanese["frames"][1]["narration"] != plain["frames"][1]["narration"]


def test_a_record_can_carry_its_analysis(record: GameRecord) -> None:
    from dataclasses import replace

    carried = replace(record, meta={**record.meta, "analysis": _fake_analysis(record, {4: 1.5})})
    assert record_analysis(record) is None
    data = replay_frames(record_from_dict(json.loads(carried.to_json())))
    assert [f["mistake"]["action"] for f in data["frames"] if f["mistake"]] == [4]
    assert isinstance(mistakes_from_analysis(record_analysis(carried), carried)[4], Mistake)


# --------------------------------------------------------------------- CLI


def test_koikoi_replay_lists_the_mistakes_of_an_analysis(
    record: GameRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from koikoi.cli import main

    path = record.save(tmp_path / "game.json")
    analysis = tmp_path / "analysis.json"
    analysis.write_text(json.dumps(_fake_analysis(record, {2: 2.5, 6: 0.4})), "utf-8")
    assert main(["replay", str(path), "--analysis", str(analysis)]) == 0
    out = capsys.readouterr().out
    assert "1 mistake:" in out
    entry = record.actions[1]
    assert f"action 2, {NAMES[entry.player]} {entry.action}: Mistake: −2.5 points" in out
    foreign = _fake_analysis(record, {2: 2.5})
    foreign["decisions"][0]["played"] = foreign["decisions"][0]["best"]
    analysis.write_text(json.dumps(foreign), "utf-8")
    assert main(["replay", str(path), "--analysis", str(analysis)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "this analysis is of another record" in err and str(analysis) in err


def test_koikoi_analyze_annotate_writes_a_record_that_carries_its_analysis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from koikoi.cli import main
    from koikoi.game.record import load_record

    short = GameRecord.from_match(_played_match(3, rounds=1), players=list(NAMES))
    path = short.save(tmp_path / "game.json")
    out_path = tmp_path / "annotated.json"
    spec = "mcts:iterations=2,rollouts=1"
    assert main(["analyze", str(path), "--agent", spec, "--annotate", str(out_path)]) == 0
    capsys.readouterr()
    annotated = load_record(out_path)
    carried = record_analysis(annotated)
    assert carried["agent"] == "mcts:iterations=2" and carried["decisions"]
    assert annotated.actions == short.actions
    data = replay_frames(annotated)
    assert data["analysed"]
    expected = {d["index"] for d in carried["decisions"] if d["mistake"]}
    assert {f["mistake"]["action"] for f in data["frames"] if f["mistake"]} == expected
    assert main(["analyze", "--position", "x", "--annotate", str(out_path)]) == 2
    assert "--annotate goes with a RECORD" in capsys.readouterr().err

"""The command line's human-readable output in Japanese: ``koikoi --lang ja ...``,
``$KOIKOI_LANG`` or a Japanese locale; JSON output stays the same in every language."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from koikoi import i18n
from koikoi.cli import main
from koikoi.cli.rules import width
from koikoi.game.rules import get_rules


@pytest.fixture(autouse=True)
def _english_locale(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("KOIKOI_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    yield
    i18n.set_language("en")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_rules_list_and_yaku_in_japanese(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "--lang", "ja", "rules", "list")
    assert out.splitlines()[0].split() == ["名前", "回数", "こいこい加点", "役の重複", "説明"]
    assert i18n.translate(get_rules("nintendo").description, "ja") in out
    yaku = _run(capsys, "--lang", "ja", "rules", "yaku", "leaflet")
    assert "五光" in yaku and "Five Brights" not in yaku
    # the points column starts at the same terminal cell in every row (a Japanese
    # character takes two cells)
    lines = yaku.splitlines()[1:]
    starts = {width(line[: re.search(r"\s{2,}\S", line).end() - 1]) for line in lines}
    assert len(lines) > 5 and len(starts) == 1, lines


def test_score_in_japanese_and_english(capsys: pytest.CaptureFixture[str]) -> None:
    cards = ["score", "1L", "3L", "8L", "--koikoi-self", "1"]
    ja = _run(capsys, "--lang", "ja", *cards)
    assert ja.splitlines()[0].startswith("ルール：nintendo、第1回（1月、松）")
    assert "三光 [1L 3L 8L]: 5" in ja and "合計：" in ja
    en = _run(capsys, "--lang", "en", *cards)
    assert en.splitlines()[0].startswith("Rules: nintendo, round 1 (month 1, Pine)")
    assert "Three Brights (三光 sankō) [1L 3L 8L]: 5" in en
    # --json is for programs: the same in every language
    as_json = [_run(capsys, "--lang", lang, *cards, "--json") for lang in ("en", "ja")]
    assert json.loads(as_json[0]) == json.loads(as_json[1])


def test_koikoi_lang_and_the_locale(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")
    assert "役" in _run(capsys, "rules", "yaku")
    monkeypatch.setenv("KOIKOI_LANG", "en")
    assert "Yaku of nintendo:" in _run(capsys, "rules", "yaku")
    assert "nintendo の役：" in _run(capsys, "--lang", "ja", "rules", "yaku")


def test_an_unknown_language_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit):
        main(["--lang", "fr", "rules", "list"])
    assert "invalid choice: 'fr'" in capsys.readouterr().err
    monkeypatch.setenv("KOIKOI_LANG", "de")
    assert main(["rules", "list"]) == 2
    err = capsys.readouterr().err
    assert "'de'" in err and "en, ja" in err


def test_keeper_file_in_japanese(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    from pathlib import Path

    match = Path(str(tmp_path)) / "match.toml"
    match.write_text(
        'rules = "leaflet"\nnames = ["Aiko", "Ben"]\nrounds = 1\nfirst_dealer = "A"\n'
        '[[round]]\nwinner = "A"\ncards = "1L 3L 8L"\n',
        encoding="utf-8",
    )
    out = _run(capsys, "--lang", "ja", "keeper", "--file", str(match))
    assert "点数計算：leaflet、1回戦、Aiko (A) 対 Ben (B)" in out
    assert "第1回（1月、松）、Aikoが親：Aikoの勝ち" in out and "  三光 [1L 3L 8L]: " in out
    assert re.search(r"Aikoの得点 \d+。", out) and "累計：Aiko " in out


# ------------------------------------------------ replay, analyze, keeper result

_LATIN = re.compile(r"[A-Za-z][A-Za-z'-]+")
"""A word in Latin letters; the Japanese output keeps only names and codes in them."""

_NAMES = {"alice", "bob", "Aiko", "Ben", "nintendo", "leaflet", "mcts", "iterations", "rollouts"}
"""Latin words a Japanese output may hold: players' names, rule sets, an agent spec."""


def _english_words(text: str) -> set[str]:
    """Latin words of ``text`` that are not card codes (3L, 8A, 12P3), names or specs."""
    # action notation ("play 3L", "koikoi"), then card codes
    text = re.sub(r"\b(?:play|take) (?=\d)|\b(?:koikoi|stop)(?= [+-]|')", " ", text)
    text = re.sub(r"\b(?:1[0-2]|[1-9])(?:L|A|R|P[1-3]?)\b", " ", text)
    return {w for w in _LATIN.findall(text) if w not in _NAMES}


def _played_record(tmp_path: Path, rounds: int = 2, seed: int = 3) -> Path:
    import random

    from koikoi.game.engine import Match
    from koikoi.game.record import GameRecord

    match = Match(get_rules("nintendo").replace(game__rounds=rounds), seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_ids()))
    return GameRecord.from_match(match, players=["alice", "bob"]).save(tmp_path / "game.json")


def test_replay_in_japanese(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _played_record(tmp_path)
    ja = _run(capsys, "--lang", "ja", "replay", str(path))
    lines = ja.splitlines()
    assert lines[0] == "ルール：nintendo（2回戦）。シード：3。"
    assert lines[1] == "対局者：プレイヤー0（alice）とプレイヤー1（bob）。"
    assert any(line.startswith("== 第1局：1月（松）、親は") for line in lines)
    assert sum("この回の清算（" in line for line in lines) == 2
    assert lines[-1].startswith(("勝者：", "引き分け"))
    assert not _english_words(ja), sorted(_english_words(ja))
    # the same game, line for line, in English
    en = _run(capsys, "--lang", "en", "replay", str(path))
    assert len(en.splitlines()) == len(lines)
    assert en.splitlines()[0] == "Rules: nintendo (2 rounds). Seed: 3."


def test_analyze_in_japanese_and_json_unchanged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _played_record(tmp_path, rounds=1)
    spec = "mcts:iterations=3,rollouts=2"
    ja = _run(capsys, "--lang", "ja", "analyze", str(path), "--agent", spec, "--top", "3")
    ja = ja.replace(str(path), "〈記録〉")
    assert ja.startswith("記録：〈記録〉\n")
    assert "による分析（ルール nintendo）" in ja and "プレイヤー0（alice）：" in ja
    assert not _english_words(ja), sorted(_english_words(ja))
    as_json = [
        _run(capsys, "--lang", lang, "analyze", str(path), "--agent", spec, "--json")
        for lang in ("en", "ja")
    ]
    assert json.loads(as_json[0]) == json.loads(as_json[1])


def test_the_keeper_result_in_japanese_and_english_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    match = tmp_path / "match.toml"
    match.write_text(
        'rules = "leaflet"\nnames = ["Aiko", "Ben"]\nrounds = 1\nfirst_dealer = "A"\n'
        '[[round]]\nwinner = "A"\ncards = "1L 3L 8L"\n',
        encoding="utf-8",
    )
    ja = _run(capsys, "--lang", "ja", "keeper", "--file", str(match))
    assert re.search(r"Aikoの勝ち \d+対0。", ja), ja
    assert not _english_words(ja), sorted(_english_words(ja))
    as_json = [
        json.loads(_run(capsys, "--lang", lang, "keeper", "--file", str(match), "--json"))
        for lang in ("en", "ja")
    ]
    assert as_json[0] == as_json[1]
    assert re.fullmatch(r"Aiko wins \d+ to 0\.", as_json[0]["result"])

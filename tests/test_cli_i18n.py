"""The command line's human-readable output in Japanese: ``koikoi --lang ja ...``,
``$KOIKOI_LANG`` or a Japanese locale; JSON output stays the same in every language."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from koikoi import i18n
from koikoi.cli import main
from koikoi.commands.rules import width
from koikoi.rules import get_rules


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

"""External bots over the JSON-lines protocol: the sample bot, and bots that misbehave.

Each misbehaving bot (garbage, an illegal action, a crash, a timeout, a program
that does not exist) must lose its match with a clear reason while the arena
carries on with the next match.
"""

from __future__ import annotations

import json
import random
import sys
import textwrap
from pathlib import Path

import pytest

from koikoi.agents import make_agent
from koikoi.agents.external import PROTOCOL_VERSION, BotError, ExternalAgent
from koikoi.cli import main
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError, KoiKoiError
from koikoi.game.rules import get_rules
from koikoi.game.views import view_of
from koikoi.lab.arena import ArenaConfig, run_arena

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "random_bot.py"
SHORT = get_rules("koikoi-japan").replace(game__rounds=2)


def _bot(tmp_path: Path, name: str, body: str) -> str:
    """Write a bot script; returns its ``cmd:`` spec."""
    path = tmp_path / f"{name}.py"
    path.write_text("import json, sys, time\n" + textwrap.dedent(body), encoding="utf-8")
    return f"cmd:timeout=5 {path}"


def _loop(answer: str) -> str:
    """A bot body answering each act with the Python expression ``answer`` (message in ``m``)."""
    return f"""
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "act":
            print({answer}, flush=True)
        elif m["type"] == "bye":
            break
    """


def test_sample_bot_plays_whole_matches() -> None:
    config = ArenaConfig((f"cmd:{SAMPLE} --seed 3", "greedy"), SHORT, 4, seed=1)
    result = run_arena(config)
    a, b = result.summary["agents"]
    assert a["forfeits"] == 0 and b["forfeits"] == 0
    assert a["matches"] == 4 and a["decisions"] > 20
    assert all(m.rounds == 2 for p in result.pairs for m in p.matches)


def test_protocol_messages(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    spec = _bot(
        tmp_path,
        "logger",
        f"""
        out = open({str(log)!r}, "w")
        for line in sys.stdin:
            out.write(line)
            out.flush()
            m = json.loads(line)
            if m["type"] == "act":
                print(json.dumps({{"action": m["legal"][-1]["action"]}}), flush=True)
            elif m["type"] == "bye":
                break
        """,
    )
    agent = make_agent(spec)
    other = make_agent("greedy")
    m = Match(SHORT, seed=2)
    with agent:  # type: ignore[attr-defined]
        while not m.is_over:
            view = view_of(m, m.current)
            player = agent if m.current == 1 else other
            m.apply(player.act(view, random.Random(0)))
    messages = [json.loads(line) for line in log.read_text().splitlines()]
    hello = messages[0]
    assert hello["type"] == "hello" and hello["protocol"] == PROTOCOL_VERSION
    assert hello["rules"]["name"] == SHORT.name and "koikoi" in hello["rules"]
    acts = [x for x in messages if x["type"] == "act"]
    assert acts and all(set(x) == {"type", "view", "legal"} for x in acts)
    assert all(x["legal"] == x["view"]["legal"] for x in acts)
    assert {x["view"]["player"] for x in acts} == {1}
    assert all(x["view"]["hand"] for x in acts)  # its own hand, as card codes
    assert sum(x["type"] == "hello" for x in messages) == 1 and hello["seat"] == 1
    assert messages[-1] == {"type": "bye"}


@pytest.mark.parametrize(
    ("name", "body", "reason", "text"),
    [
        ("garbage", _loop('"hello there"'), "garbage", "answer is not JSON"),
        ("shape", _loop("json.dumps([1, 2])"), "garbage", 'must be an object {"action"'),
        ("words", _loop('json.dumps({"action": "dance"})'), "garbage", "cannot read action"),
        ("illegal", _loop('json.dumps({"action": 2449})'), "illegal", "illegal action 'stop'"),
        (
            "crash",
            'sys.stderr.write("boom: out of cheese\\n"); sys.stderr.flush(); sys.exit(3)\n',
            "crash",
            "exited with status 3; its stderr ends: boom: out of cheese",
        ),
    ],
    ids=["garbage", "shape", "words", "illegal", "crash"],
)
def test_misbehaving_bots_raise_bot_errors(
    tmp_path: Path, name: str, body: str, reason: str, text: str
) -> None:
    agent = make_agent(_bot(tmp_path, name, body))
    m = Match(SHORT, seed=5)
    view = view_of(m, m.current)
    with pytest.raises(BotError) as info:
        agent.act(view, random.Random(0))
    agent.close()  # type: ignore[attr-defined]
    assert info.value.reason == reason
    assert text in str(info.value)
    assert isinstance(info.value, KoiKoiError)


def test_timeout(tmp_path: Path) -> None:
    path = tmp_path / "sleepy.py"
    path.write_text("import time\ntime.sleep(30)\n", encoding="utf-8")
    agent = make_agent(f"cmd:timeout=0.3 {path}")
    m = Match(SHORT, seed=5)
    with pytest.raises(BotError, match=r"timed out: no answer within 0.3s") as info:
        agent.act(view_of(m, m.current), random.Random(0))
    assert info.value.reason == "timeout"
    agent.close()  # type: ignore[attr-defined]


def test_missing_program_cannot_start() -> None:
    agent = ExternalAgent(["/nonexistent/bot-program"])
    m = Match(SHORT, seed=5)
    with pytest.raises(BotError, match="cannot be started") as info:
        agent.act(view_of(m, m.current), random.Random(0))
    assert info.value.reason == "start"


def test_bad_bots_lose_and_the_arena_carries_on(tmp_path: Path) -> None:
    bad = _bot(tmp_path, "illegal", _loop('json.dumps({"action": 2449})'))
    result = run_arena(ArenaConfig((bad, "greedy"), SHORT, 4, seed=2))
    a, b = result.summary["agents"]
    assert result.summary["matches"] == 4
    assert a["forfeits"] == 4 and b["forfeits"] == 0
    assert a["match_losses"] == 4 and b["match_wins"] == 4
    assert all("illegal action 'stop'" in r for r in a["forfeit_reasons"])


def test_a_timeout_in_the_arena_is_a_forfeit(tmp_path: Path) -> None:
    path = tmp_path / "slow.py"
    path.write_text(
        textwrap.dedent(
            """
            import json, sys, time
            for line in sys.stdin:
                m = json.loads(line)
                if m["type"] == "act":
                    time.sleep(5)
            """
        ),
        encoding="utf-8",
    )
    result = run_arena(ArenaConfig((f"cmd:timeout=0.2 {path}", "random"), SHORT, 2, seed=2))
    a = result.summary["agents"][0]
    assert a["forfeits"] == 2
    assert "timed out" in a["forfeit_reasons"][0]


def test_cli_reports_forfeits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _bot(tmp_path, "garbage", _loop('"nonsense"'))
    status = main(["arena", bad, "greedy", "--rules", "koikoi-japan", "--matches", "2"])
    out = capsys.readouterr().out
    assert status == 0
    assert "forfeits" in out and "answer is not JSON: 'nonsense'" in out


def test_text_actions_are_accepted(tmp_path: Path) -> None:
    spec = _bot(tmp_path, "texter", _loop('json.dumps({"action": m["legal"][0]["action"]})'))
    result = run_arena(ArenaConfig((spec, "random"), SHORT, 2, seed=3))
    assert result.summary["agents"][0]["forfeits"] == 0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "no program given"),
        ("timeout=2", "no program given"),
        ("timeout=never bot", "timeout must be a positive number"),
        ("timeout=-1 bot", "timeout must be a positive number"),
        ("color=red bot", "unknown option 'color': allowed timeout, name"),
        ('"unclosed', "cannot split the command line"),
    ],
)
def test_bad_cmd_specs(raw: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        make_agent(f"cmd:{raw}")


def test_spec_options_and_python_scripts() -> None:
    agent = make_agent("cmd:timeout=2.5 name=rb examples/random_bot.py --seed 1")
    assert isinstance(agent, ExternalAgent)
    assert agent.timeout == 2.5 and agent.name == "rb"
    assert agent.argv == [sys.executable, "examples/random_bot.py", "--seed", "1"]


def test_doctests(monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest

    from koikoi.agents import external

    monkeypatch.chdir(ROOT)
    failures, _ = doctest.testmod(external, optionflags=doctest.ELLIPSIS)
    assert failures == 0

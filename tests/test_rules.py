"""Tests of rule sets: the presets of RULES.md §5, house rules (§4/§5), diff, TOML."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from koikoi.game.errors import KoiKoiError, RulesError
from koikoi.game.rules import (
    PRESET_NAMES,
    GameRules,
    Points,
    Rules,
    diff_rules,
    get_rules,
    load_rules,
    load_rules_file,
    load_rules_text,
    rules_from_dict,
)

# RULES.md §5, column order.
COLUMNS = (
    "nintendo",
    "compendium",
    "wikipedia",
    "boardgame-blog",
    "modern-hanafuda",
    "leaflet",
    "koikoi-japan",
)

# RULES.md §5, copied row by row: "section.key" -> the value in each column.
# Rows that hold several options in the spec ("dealer / leader", "a / b / c") are
# split into one row per option here.
TABLE: dict[str, tuple[Any, ...]] = {
    "game.rounds": (12, 12, 12, 12, 12, 6, 8),
    "game.first_dealer": ("draw", "draw", "draw", "random", "draw", "random", "random"),
    "game.start_points": (0, 0, 0, 0, 0, 0, 30),
    "game.dealer": ("winner", "winner", "winner", "winner", "fixed", "winner", "winner"),
    "game.leader": ("dealer", "dealer", "dealer", "dealer", "previous_winner", "dealer", "dealer"),
    "game.dealer_after_draw": ("swap", "same", "same", "same", "same", "swap", "same"),
    "game.match_tie": ("draw", "draw", "draw", "draw", "dealer", "draw", "draw"),
    "deal.field_redeal": (
        ("four_of_a_month",),
        ("four_of_a_month", "four_pairs"),
        (),
        (),
        (),
        ("four_of_a_month", "four_pairs"),
        ("four_of_a_month",),
    ),
    "deal.hand_redeal": ((), (), (), (), (), (), ("four_of_a_month",)),
    "deal.redeal_dealer": ("same", "same", "same", "same", "same", "swap", "same"),
    "deal.check_order": (
        "hands_first",
        "field_first",
        "hands_first",
        "hands_first",
        "hands_first",
        "hands_first",
        "hands_first",
    ),
    "instant.teshi": (6, 6, 6, 6, 6, 6, 0),
    "instant.kuttsuki": (6, 6, 6, 6, 6, 6, 0),
    "instant.both": ("dealer", "dealer", "dealer", "dealer", "dealer", "redeal", "dealer"),
    "instant.teshi_collected": (False, False, False, False, True, False, False),
    "play.hand_card": ("any", "any", "any_or_discard", "any", "must_match", "any", "any"),
    "koikoi.limit": (0, 0, 0, 0, 0, 0, 0),
    "koikoi.offer_on_last_card": (True, True, True, True, False, True, False),
    "end.first_empty_hand": (False, False, False, False, True, False, False),
    "koikoi.bonus": (
        "opponent_x2",
        "opponent_x2",
        "opponent_x2",
        "opponent_x2",
        "challenge_x2",
        "none",
        "ladder",
    ),
    "koikoi.seven_double": (True, True, True, True, True, False, False),
    "end.exhausted": ("draw", "highest", "draw", "draw", "last_yaku", "draw", "dealer_point"),
    "end.oya_ken": (0, 6, 0, 0, 1, 0, 1),
    "yaku.combine": (
        "absorb",
        "absorb",
        "absorb",
        "absorb",
        "exclusive",
        "separate",
        "separate",
    ),
    "yaku.akatan_aotan_adds": (False, False, False, False, False, False, True),
    "yaku.sanko_with_rainman": (False, False, False, False, True, False, False),
    "yaku.sake_cup": ("both", "either", "both", "animal", "animal", "both", "both"),
    "points.goko": (10, 10, 10, 10, 10, 15, 10),
    "points.shiko": (8, 8, 8, 8, 8, 10, 8),
    "points.ame_shiko": (7, 7, 7, 7, 7, 8, 7),
    "points.sanko": (5, 6, 5, 5, 6, 6, 5),
    "points.inoshikacho": (5, 5, 5, 5, 5, 5, 5),
    "points.tane": (1, 1, 1, 1, 1, 1, 1),
    "points.akatan": (5, 5, 5, 5, 5, 6, 5),
    "points.aotan": (5, 5, 5, 5, 5, 6, 5),
    "points.akatan_aotan": (10, 10, 10, 10, 0, 0, 10),
    "points.tanzaku": (1, 1, 1, 1, 1, 1, 1),
    "points.kasu": (1, 1, 1, 0, 1, 1, 1),
    "points.hanami": (5, 5, 5, 5, 5, 0, 1),
    "points.tsukimi": (5, 5, 5, 5, 5, 0, 1),
    "yaku.viewing_after_koikoi": (0, 0, 0, 0, 0, 0, 3),
    "points.tsukifuda": (0, 0, 0, 0, 0, 0, 0),
}

# Options the table does not name stay at their §4 defaults in every preset
# (compendium's variants are "off in the preset", RULES.md §5 notes).
UNNAMED_DEFAULTS: dict[str, Any] = {
    "koikoi.limit_scope": "player",
    "play.wild_lightning": False,
    "yaku.extra": 1,
    "yaku.viewing_requires_other": False,
    "yaku.viewing_spoiled_by": (),
}


def test_preset_names() -> None:
    assert PRESET_NAMES == COLUMNS
    assert PRESET_NAMES[0] == "nintendo"


@pytest.mark.parametrize("name", COLUMNS)
def test_preset_loads_and_is_named(name: str) -> None:
    rules = get_rules(name)
    assert isinstance(rules, Rules)
    assert rules.name == name
    assert rules.description
    assert load_rules(name) is rules  # cached, same object
    assert get_rules(name) is rules


@pytest.mark.parametrize("key", sorted(TABLE))
@pytest.mark.parametrize("name", COLUMNS)
def test_preset_matches_the_table(name: str, key: str) -> None:
    expected = TABLE[key][COLUMNS.index(name)]
    value = get_rules(name).flat()[key]
    if isinstance(expected, tuple):
        assert set(value) == set(expected), key
        assert len(value) == len(expected)
    else:
        assert value == expected, key
        assert type(value) is type(expected), key


@pytest.mark.parametrize(("key", "expected"), sorted(UNNAMED_DEFAULTS.items()))
@pytest.mark.parametrize("name", COLUMNS)
def test_options_the_table_does_not_name(name: str, key: str, expected: Any) -> None:
    assert get_rules(name).flat()[key] == expected


def test_table_covers_every_option() -> None:
    assert set(TABLE) | set(UNNAMED_DEFAULTS) == set(get_rules().flat())


def test_default_rules_are_nintendo() -> None:
    assert Rules().name == "nintendo"
    assert diff_rules(Rules(), get_rules("nintendo")) == []
    assert get_rules() is get_rules("nintendo")


def test_unknown_preset_lists_the_presets() -> None:
    with pytest.raises(RulesError) as info:
        get_rules("nintendoo")
    message = str(info.value)
    assert "'nintendoo'" in message
    for name in PRESET_NAMES:
        assert name in message


def test_rules_are_frozen_and_hashable() -> None:
    rules = get_rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.game.rounds = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.name = "x"  # type: ignore[misc]
    assert hash(rules) == hash(get_rules("nintendo").replace())
    assert len({get_rules(n) for n in PRESET_NAMES}) == len(PRESET_NAMES)


def test_yaku_points_lists_existing_yaku() -> None:
    pts = get_rules("leaflet").yaku_points()
    assert "hanami" not in pts and "akatan_aotan" not in pts
    assert pts["goko"] == 15
    assert pts["teshi"] == 6 and pts["kuttsuki"] == 6
    japan = get_rules("koikoi-japan").yaku_points()
    assert "teshi" not in japan and "kuttsuki" not in japan
    assert "kasu" not in get_rules("boardgame-blog").yaku_points()
    assert all(v > 0 for v in japan.values())


# ------------------------------------------------------------ house rules


def test_house_rules_extend_a_preset_with_a_subset_of_keys() -> None:
    text = 'extends = "leaflet"\n[game]\nrounds = 3\n[points]\nkasu = 2\n'
    rules = load_rules_text(text)
    leaflet = get_rules("leaflet")
    assert rules.game.rounds == 3
    assert rules.points.kasu == 2
    assert diff_rules(leaflet, rules) == [("game.rounds", 6, 3), ("points.kasu", 1, 2)]
    assert rules.name == "leaflet+house"
    assert "leaflet" in rules.description


def test_the_one_round_example_is_nintendo_with_one_round() -> None:
    """The house-rules file the one-round arena runs of docs/benchmarks.md use."""
    path = Path(__file__).parent.parent / "examples" / "nintendo-one-round.toml"
    rules = load_rules_file(path)
    assert diff_rules(get_rules("nintendo"), rules) == [("game.rounds", 12, 1)]
    assert rules.name == "nintendo-one-round"


def test_house_rules_default_to_nintendo() -> None:
    rules = load_rules_text("[koikoi]\nlimit = 2\nlimit_scope = 'round'\n")
    assert diff_rules(get_rules("nintendo"), rules) == [
        ("koikoi.limit", 0, 2),
        ("koikoi.limit_scope", "player", "round"),
    ]


def test_house_rules_empty_text_is_the_preset() -> None:
    assert diff_rules(load_rules_text(""), get_rules()) == []
    assert diff_rules(load_rules_text('extends = "compendium"'), get_rules("compendium")) == []


def test_house_rules_name_and_description() -> None:
    rules = load_rules_text('name = "ours"\ndescription = "Our table"\nextends = "wikipedia"')
    assert rules.name == "ours"
    assert rules.description == "Our table"
    assert rules.play.hand_card == "any_or_discard"


def test_house_rules_lists() -> None:
    text = (
        '[deal]\nfield_redeal = ["four_pairs", "three_of_a_month"]\n'
        'hand_redeal = ["four_of_a_month"]\n'
        '[yaku]\nviewing_spoiled_by = ["rainman", "11p"]\n'
    )
    rules = load_rules_text(text)
    assert set(rules.deal.field_redeal) == {"four_pairs", "three_of_a_month"}
    assert rules.deal.hand_redeal == ("four_of_a_month",)
    assert set(rules.yaku.viewing_spoiled_by) == {"11L", "11P"}  # normalised to codes
    assert isinstance(rules.deal.field_redeal, tuple)


def test_house_rules_compendium_variants_are_reachable() -> None:
    # RULES.md §5: compendium's optional variants must be reachable as options.
    text = (
        'extends = "compendium"\n[game]\nrounds = 6\n[play]\nwild_lightning = true\n'
        "[yaku]\nviewing_requires_other = true\n"
        'viewing_spoiled_by = ["11L", "11P"]\n[points]\ntsukifuda = 4\n'
    )
    rules = load_rules_text(text)
    assert rules.game.rounds == 6
    assert rules.play.wild_lightning is True
    assert rules.yaku.viewing_requires_other is True
    assert rules.points.tsukifuda == 4


def test_house_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('extends = "modern-hanafuda"\n[end]\noya_ken = 2\n', encoding="utf-8")
    for rules in (load_rules_file(path), load_rules(path), load_rules(str(path))):
        assert rules.end.oya_ken == 2
        assert rules.game.dealer == "fixed"
        assert diff_rules(get_rules("modern-hanafuda"), rules) == [("end.oya_ken", 1, 2)]


def test_house_rules_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(RulesError, match=r"nope\.toml"):
        load_rules(missing)
    with pytest.raises(RulesError, match=r"nope\.toml"):
        load_rules_file(missing)


def test_load_rules_neither_preset_nor_file() -> None:
    with pytest.raises(RulesError) as info:
        load_rules("not-a-preset")
    assert "'not-a-preset'" in str(info.value)
    assert "nintendo" in str(info.value)


def test_house_rules_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.toml"
    path.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(RulesError, match="UTF-8"):
        load_rules_file(path)


def test_house_rules_bad_toml() -> None:
    with pytest.raises(RulesError, match="TOML"):
        load_rules_text("[game\nrounds = 3")


@pytest.mark.parametrize(
    "text", ["a = " + "[" * 5000 + "]" * 5000, "x = " + "{a = " * 3000 + "1" + "}" * 3000]
)
def test_house_rules_nested_too_deeply_is_a_rules_error(text: str) -> None:
    """Deep nesting overflows the TOML reader's recursion: a clear error, not a crash."""
    with pytest.raises(RulesError, match="nested too deeply"):
        load_rules_text(text)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[game]\nround = 3", ["game.round", "rounds", "start_points", "first_dealer"]),
        ("[points]\ngoku = 3", ["points.goku", "goko", "kasu"]),
        ("[yaku]\nsake = 'both'", ["yaku.sake", "sake_cup", "combine"]),
        ("[rules]\nx = 1", ["'rules'", "game", "deal", "instant", "points"]),
        ("bogus = 1", ["'bogus'", "extends"]),
    ],
)
def test_unknown_keys_and_sections_name_the_key_and_the_allowed(
    text: str, names: list[str]
) -> None:
    with pytest.raises(RulesError) as info:
        load_rules_text(text)
    for name in names:
        assert name in str(info.value)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[game]\nrounds = 'six'", ["game.rounds", "integer"]),
        ("[game]\nrounds = 6.0", ["game.rounds", "integer"]),
        ("[game]\nrounds = true", ["game.rounds", "integer"]),
        ("[koikoi]\nseven_double = 1", ["koikoi.seven_double", "true", "false"]),
        ("[koikoi]\nseven_double = 'yes'", ["koikoi.seven_double", "true", "false"]),
        ("[deal]\nfield_redeal = 'four_pairs'", ["deal.field_redeal", "list"]),
        ("[deal]\nfield_redeal = [1]", ["deal.field_redeal", "list"]),
        ("[game]\ndealer = 1", ["game.dealer", "'winner'", "'fixed'"]),
        ("game = 3", ["game", "table"]),
        ("extends = 3", ["extends"]),
        ("name = ''", ["name"]),
        ("name = 5", ["name"]),
        ("description = 5", ["description"]),
    ],
)
def test_wrong_types_name_the_key(text: str, names: list[str]) -> None:
    with pytest.raises(RulesError) as info:
        load_rules_text(text)
    for name in names:
        assert name in str(info.value)


@pytest.mark.parametrize(
    ("key", "value", "lo", "hi"),
    [
        ("game.rounds", 0, 1, 120),
        ("game.rounds", 121, 1, 120),
        ("game.start_points", -1, 0, 10000),
        ("koikoi.limit", -1, 0, 100),
        ("instant.teshi", -6, 0, 1000),
        ("end.oya_ken", -1, 0, 1000),
        ("yaku.extra", -1, 0, 1000),
        ("points.goko", -10, 0, 1000),
        ("points.kasu", 1001, 0, 1000),
    ],
)
def test_out_of_range_values_name_the_key_and_the_range(
    key: str, value: int, lo: int, hi: int
) -> None:
    section, name = key.split(".")
    with pytest.raises(RulesError) as info:
        load_rules_text(f"[{section}]\n{name} = {value}")
    message = str(info.value)
    assert key in message
    assert str(lo) in message and str(hi) in message
    assert str(value) in message


@pytest.mark.parametrize(
    ("key", "allowed"),
    [
        ("game.first_dealer", ("draw", "random")),
        ("game.dealer", ("winner", "fixed")),
        ("game.leader", ("dealer", "previous_winner")),
        ("game.dealer_after_draw", ("same", "swap")),
        ("game.match_tie", ("draw", "dealer")),
        ("deal.check_order", ("hands_first", "field_first")),
        ("deal.redeal_dealer", ("same", "swap")),
        ("instant.both", ("dealer", "redeal")),
        ("play.hand_card", ("any", "any_or_discard", "must_match")),
        ("koikoi.limit_scope", ("player", "round")),
        ("koikoi.bonus", ("opponent_x2", "challenge_x2", "ladder", "none")),
        ("end.exhausted", ("draw", "highest", "last_yaku", "dealer_point")),
        ("yaku.combine", ("absorb", "separate", "exclusive")),
        ("yaku.sake_cup", ("animal", "both", "either", "both_double_plain")),
    ],
)
def test_choices_every_allowed_value_loads_and_a_bad_one_names_them(
    key: str, allowed: tuple[str, ...]
) -> None:
    section, name = key.split(".")
    for value in allowed:
        assert load_rules_text(f"[{section}]\n{name} = '{value}'").flat()[key] == value
    with pytest.raises(RulesError) as info:
        load_rules_text(f"[{section}]\n{name} = 'bogus'")
    message = str(info.value)
    assert key in message and "'bogus'" in message
    for value in allowed:
        assert value in message


@pytest.mark.parametrize("key", ["deal.field_redeal", "deal.hand_redeal"])
def test_redeal_conditions_bad_name_lists_the_allowed(key: str) -> None:
    section, name = key.split(".")
    with pytest.raises(RulesError) as info:
        load_rules_text(f"[{section}]\n{name} = ['four_of_a_month', 'five_pairs']")
    message = str(info.value)
    assert key in message and "five_pairs" in message
    for cond in ("four_of_a_month", "four_pairs", "three_of_a_month"):
        assert cond in message


def test_viewing_spoiled_by_bad_card_names_the_key() -> None:
    with pytest.raises(RulesError) as info:
        load_rules_text("[yaku]\nviewing_spoiled_by = ['11L', '13Z']")
    assert "yaku.viewing_spoiled_by" in str(info.value)
    assert "13Z" in str(info.value)


def test_extends_unknown_preset_lists_them() -> None:
    with pytest.raises(RulesError) as info:
        load_rules_text('extends = "hanafuda"')
    assert "'hanafuda'" in str(info.value)
    for name in PRESET_NAMES:
        assert name in str(info.value)


def test_rules_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        load_rules_text("[game]\nrounds = 0")
    assert issubclass(RulesError, KoiKoiError)


def test_rules_from_dict_on_a_base() -> None:
    base = get_rules("leaflet")
    rules = rules_from_dict({"game": {"rounds": 2}}, base=base)
    assert diff_rules(base, rules) == [("game.rounds", 6, 2)]
    assert rules.name == "leaflet"


# ------------------------------------------------------------ diff, replace, TOML


def test_diff_rules_between_presets() -> None:
    diff = dict((k, (a, b)) for k, a, b in diff_rules(get_rules("nintendo"), get_rules("leaflet")))
    assert diff["game.rounds"] == (12, 6)
    assert diff["koikoi.bonus"] == ("opponent_x2", "none")
    assert diff["points.hanami"] == (5, 0)
    assert "koikoi.limit" not in diff
    assert diff_rules(get_rules("leaflet"), get_rules("leaflet")) == []
    # In option order, and symmetric.
    flat_keys = list(get_rules().flat())
    keys = [k for k, _, _ in diff_rules(get_rules("nintendo"), get_rules("leaflet"))]
    assert keys == sorted(keys, key=flat_keys.index)
    back = diff_rules(get_rules("leaflet"), get_rules("nintendo"))
    assert back == [
        (k, b, a) for k, a, b in diff_rules(get_rules("nintendo"), get_rules("leaflet"))
    ]


def test_replace_section_key() -> None:
    rules = get_rules("nintendo")
    changed = rules.replace(game__rounds=6, deal__field_redeal=("four_pairs",), koikoi__limit=1)
    assert changed.game.rounds == 6
    assert changed.deal.field_redeal == ("four_pairs",)
    assert changed.koikoi.limit == 1
    assert rules.game.rounds == 12  # unchanged
    assert len(diff_rules(rules, changed)) == 3
    assert rules.replace(name="mine").name == "mine"


def test_replace_checks_values() -> None:
    rules = get_rules()
    with pytest.raises(RulesError, match=r"game\.rounds"):
        rules.replace(game__rounds=0)
    with pytest.raises(RulesError, match=r"game\.bogus"):
        rules.replace(game__bogus=1)
    with pytest.raises(RulesError, match="'gaem'"):
        rules.replace(gaem__rounds=1)
    with pytest.raises(RulesError, match=r"koikoi\.bonus"):
        rules.replace(koikoi__bonus="triple")


def test_replace_by_section_object() -> None:
    # Rules.replace's docstring: "keyed section__key or by section object".
    rules = get_rules("nintendo")
    changed = rules.replace(game=GameRules(rounds=6), points=Points(kasu=2))
    assert changed.game == GameRules(rounds=6)
    assert changed.points.kasu == 2


@pytest.mark.parametrize("name", COLUMNS)
def test_to_toml_round_trips(name: str) -> None:
    rules = get_rules(name)
    text = rules.to_toml()
    data = tomllib.loads(text)
    assert set(data) == {
        "name",
        "description",
        *(s for s in rules.to_dict() if s not in ("name", "description")),
    }
    back = load_rules_text(text)
    assert back == rules
    assert diff_rules(rules, back) == []
    assert back.name == rules.name and back.description == rules.description


def test_to_toml_round_trips_house_rules() -> None:
    rules = get_rules("compendium").replace(
        name='our "house"',
        description="back\\slash",
        yaku__viewing_spoiled_by=("11L", "11P"),
        deal__hand_redeal=("four_pairs",),
        play__wild_lightning=True,
    )
    assert load_rules_text(rules.to_toml()) == rules


def test_to_toml_round_trips_a_multi_line_description() -> None:
    text = 'name = "house"\ndescription = """Two\nlines\twith a tab"""\n'
    rules = load_rules_text(text)
    assert rules.description == "Two\nlines\twith a tab"
    assert load_rules_text(rules.to_toml()) == rules


@given(
    rounds=st.integers(1, 120),
    start=st.integers(0, 10_000),
    limit=st.integers(0, 100),
    bonus=st.sampled_from(["opponent_x2", "challenge_x2", "ladder", "none"]),
    field=st.lists(
        st.sampled_from(["four_of_a_month", "four_pairs", "three_of_a_month"]), unique=True
    ),
    kasu=st.integers(0, 1000),
    wild=st.booleans(),
    base=st.sampled_from(COLUMNS),
)
def test_to_toml_round_trips_any_valid_rules(
    rounds: int,
    start: int,
    limit: int,
    bonus: str,
    field: list[str],
    kasu: int,
    wild: bool,
    base: str,
) -> None:
    rules = get_rules(base).replace(
        game__rounds=rounds,
        game__start_points=start,
        koikoi__limit=limit,
        koikoi__bonus=bonus,
        deal__field_redeal=tuple(field),
        points__kasu=kasu,
        play__wild_lightning=wild,
    )
    assert load_rules_text(rules.to_toml()) == rules
    assert rules_from_dict(rules.to_dict()) == rules


def test_to_dict_is_plain_data() -> None:
    data = get_rules("compendium").to_dict()
    assert data["name"] == "compendium"
    assert data["deal"]["field_redeal"] == ["four_of_a_month", "four_pairs"]
    assert data["end"] == {"exhausted": "highest", "first_empty_hand": False, "oya_ken": 6}
    assert rules_from_dict(data) == get_rules("compendium")

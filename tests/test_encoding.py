"""The information-state encoding: layout, no hidden card, rules as input."""

from __future__ import annotations

import doctest
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from koikoi.game.actions import NUM_ACTIONS
from koikoi.game.engine import Match
from koikoi.game.positions import position
from koikoi.game.rules import PRESET_NAMES, get_rules
from koikoi.game.views import determinize, view_of, view_of_round
from koikoi.kernel import encoding
from koikoi.kernel.encoding import (
    FEATURES,
    RULES_OFFSET,
    SIZE,
    action_mask,
    encode,
    info_state_string,
    rule_features,
)


def _match_at(rules: str, seed: int, steps: int) -> Match:
    m = Match(get_rules(rules), seed=seed, events=False)
    rng = random.Random(seed)
    for _ in range(steps):
        if m.is_over:
            break
        m.apply_id(rng.choice(m.legal_ids()))
    return m


def _plane(obs: np.ndarray, name: str) -> int:
    k = encoding.PLANES.index(name)
    return sum(1 << c for c in range(48) if obs[48 * k + c] == 1.0)


def test_doctests() -> None:
    failures, _ = doctest.testmod(encoding)
    assert failures == 0


def test_layout() -> None:
    assert len(FEATURES) == SIZE == len(set(FEATURES))
    assert FEATURES[0] == "hand:1L" and FEATURES[48] == "field:1L"
    assert FEATURES[RULES_OFFSET].startswith("rules:")
    assert "rules:points.goko" in FEATURES
    assert "rules:koikoi.bonus=ladder" in FEATURES


def test_layout_table_is_the_layout() -> None:
    """The segments tile the vector in order and name every value."""
    offset = 0
    for segment in encoding.LAYOUT:
        assert segment.offset == offset and segment.size == len(segment.features) > 0
        assert FEATURES[offset : offset + segment.size] == segment.features
        assert encoding.SEGMENTS[segment.name] is segment
        assert segment.scale > 0
        offset += segment.size
    assert offset == SIZE and len(encoding.SEGMENTS) == len(encoding.LAYOUT)
    assert [s.name for s in encoding.LAYOUT[: len(encoding.PLANES)]] == list(encoding.PLANES)
    assert tuple(48 * k for k in range(len(encoding.PLANES))) == encoding.PLANE_OFFSETS
    assert encoding.LAYOUT[-1].name == "rules" and encoding.LAYOUT[-1].offset == RULES_OFFSET
    assert FEATURES[encoding.ROUND_OFFSET : RULES_OFFSET] == encoding.ROUND_FEATURES
    assert encoding.SEGMENTS["phase"].features == ("phase:play", "phase:take", "phase:decide")


def test_scales_are_the_segments_scales() -> None:
    """A count is written divided by its segment's scale (here: a match in progress)."""
    m = _match_at("koikoi-japan", 3, 30)
    view = view_of(m, m.current)
    obs = encode(view)
    me = view.player
    assert me is not None

    def value(name: str) -> float:
        return float(obs[encoding.SEGMENTS[name].offset])

    def scaled(name: str, count: int) -> float:
        return float(np.float32(count / encoding.SEGMENTS[name].scale))

    assert value("own_hand_size") == scaled("own_hand_size", view.hand_counts[me])
    assert value("stock_size") == scaled("stock_size", view.stock_count)
    assert value("match:own") == scaled("match:own", view.match_scores[me])
    assert value("match:rounds") == scaled("match:rounds", view.rounds)


@settings(max_examples=80, deadline=None)
@given(
    rules=st.sampled_from(PRESET_NAMES),
    seed=st.integers(0, 10**6),
    steps=st.integers(0, 100),
    player=st.sampled_from((0, 1)),
)
def test_encoding_of_a_view(rules: str, seed: int, steps: int, player: int) -> None:
    m = _match_at(rules, seed, steps)
    if m.is_over:
        return
    view = view_of(m, player, with_history=False)
    obs = encode(view)
    assert obs.dtype == np.float32 and obs.shape == (SIZE,)
    rnd = m.round
    assert _plane(obs, "hand") == rnd.hands[player]
    assert _plane(obs, "field") == rnd.field
    assert _plane(obs, "own_pile") == rnd.piles[player]
    assert _plane(obs, "opponent_pile") == rnd.piles[1 - player]
    hidden = rnd.hands[1 - player] | sum(1 << c for c in rnd.stock)
    assert _plane(obs, "unseen") == hidden
    assert _plane(obs, "opponent_declined") == rnd.declined[1 - player]
    mask = action_mask(view)
    assert mask.shape == (NUM_ACTIONS,)
    assert sorted(np.flatnonzero(mask).tolist()) == sorted(view.legal_ids)
    # A consistent re-deal of the hidden cards encodes the same.
    for k in range(3):
        det = determinize(view, random.Random(k))
        again = view_of_round(det, player, match_scores=view.match_scores, rounds=view.rounds)
        assert np.array_equal(encode(again), obs)
        assert info_state_string(again) == info_state_string(view)
        assert np.array_equal(action_mask(again), mask)


def test_info_state_string_is_the_view_position() -> None:
    m = _match_at("nintendo", 3, 5)
    view = view_of(m, 0)
    assert info_state_string(view) == position(view)
    assert info_state_string(view) != info_state_string(view_of(m, 1))


def test_rules_are_an_input() -> None:
    a, b = rule_features(get_rules("nintendo")), rule_features(get_rules("koikoi-japan"))
    assert not np.array_equal(a, b)
    i = FEATURES.index("rules:koikoi.bonus=ladder") - RULES_OFFSET
    assert b[i] == 1.0 and a[i] == 0.0
    goko = FEATURES.index("rules:points.goko") - RULES_OFFSET
    assert a[goko] == get_rules("nintendo").points.goko / 10
    m = Match(get_rules("koikoi-japan"), seed=1)
    assert np.array_equal(encode(view_of(m, 0))[RULES_OFFSET:], b)


def test_match_features() -> None:
    m = Match(get_rules("koikoi-japan"), seed=2)
    obs = encode(view_of(m, 0))
    assert obs[FEATURES.index("match:own")] == 30 / 50
    assert obs[FEATURES.index("match:lead")] == 0.0
    assert obs[FEATURES.index("match:rounds_left")] == 7 / 12

"""Properties over random whole games of every edition and player count (hypothesis)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorekeeper import Deal, Die, GameState, Roll, pay_casino
from scorekeeper.simulate import play_random_game

CONFIGS = (
    [("classic", n, {}) for n in (2, 3, 4, 5)]
    + [("classic", n, {"neutral_dice": True}) for n in (2, 3, 4)]
    + [("custom", n, {}) for n in (2, 3, 5, 7)]
    + [("custom", n, {"skip_rule": "A"}) for n in (2, 4)]
    + [("custom", n, {"skip_rule": "B", "skip_limit": 1}) for n in (3, 6)]
    + [("custom", 4, {"suits": 2})]
    + [("royale", n, {}) for n in (2, 3, 4, 5)]
)
games = st.tuples(st.sampled_from(CONFIGS), st.integers(0, 2**32 - 1))
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def all_money(state: GameState) -> Counter:
    held = Counter(state.pile) + Counter(state.under)
    for casino in state.casinos.values():
        held += Counter(casino.notes)
    for notes in state.won.values():
        held += Counter(notes)
    return held


def all_dice(state: GameState) -> Counter:
    held = Counter(state.pool)
    for hand in state.hands:
        held += hand
    for casino in state.casinos.values():
        held += casino.dice
    return held


@SETTINGS
@given(games)
def test_money_and_dice_are_conserved(game):
    (edition, n, options), seed = game
    deck = Counter(GameState.new(edition, [(f"p{i}", f"c{i}") for i in range(n)],
                                 options).edition.deck())
    start_dice: dict[int, Counter] = {}

    def check(state, action):
        assert all_money(state) == deck
        if state.phase in ("neutral", "roll", "choose") and state.round not in start_dice:
            start_dice[state.round] = all_dice(state)
        if state.phase in ("roll", "choose", "neutral"):
            assert all_dice(state) == start_dice[state.round]
        for p in state.players:
            assert state.money(p.name) >= 0

    play_random_game(edition, n, seed, options, on_action=check)


@SETTINGS
@given(games)
def test_payouts_follow_the_ranking(game):
    (edition, n, options), seed = game
    state = play_random_game(edition, n, seed, options)
    assert len(state.round_results) == state.edition.rounds
    for rnd in state.round_results:
        for casino in rnd["casinos"]:
            amounts = [p["amount"] for p in casino["payouts"]]
            assert amounts == sorted(amounts, reverse=True)
            winners = [p["player"] for p in casino["payouts"]]
            assert not set(winners) & set(casino["cancelled"])
            if casino["unclaimed"]:
                assert min(amounts, default=casino["unclaimed"][0]) >= casino["unclaimed"][0]


@SETTINGS
@given(games)
def test_replay_is_deterministic_and_undo_restores(game):
    (edition, n, options), seed = game
    state = play_random_game(edition, n, seed, options)
    replay = GameState(state.config)
    rng = random.Random(seed)
    checkpoints = set(rng.sample(range(len(state.history)), 3))
    for i, action in enumerate(state.history):
        before = replay.fingerprint()
        replay.apply_action(action)
        if i in checkpoints:
            after = replay.fingerprint()
            undone = replay.undo()
            assert undone == action and replay.fingerprint() == before
            replay.apply_action(action)
            assert replay.fingerprint() == after
    assert replay.fingerprint() == state.fingerprint()
    again = play_random_game(edition, n, seed, options)
    assert again.fingerprint() == state.fingerprint()


weights = st.dictionaries(st.sampled_from("abcdefg"), st.integers(0, 12), max_size=7)
notes = st.lists(st.sampled_from([10_000, 20_000, 50_000, 90_000]), max_size=4)


@given(notes, weights)
def test_pay_casino_against_the_rule_text(notes_, weights_):
    result = pay_casino(1, notes_, weights_)
    present = {p: w for p, w in weights_.items() if w}
    counts = Counter(present.values())
    # "two or more players have the same number of dice ... return all their dice"
    assert set(result.cancelled) == {p for p, w in present.items() if counts[w] > 1}
    survivors = sorted((p for p in present if counts[present[p]] == 1),
                       key=lambda p: -present[p])
    # "The player with the most dice receives the highest-value banknote, etc."
    assert [p for p, _ in result.payouts] == survivors[: len(notes_)]
    assert sorted([a for _, a in result.payouts] + list(result.unclaimed)) == sorted(notes_)


faces = st.integers(1, 6)


@given(st.lists(faces, min_size=7, max_size=7), faces)
def test_royale_neutral_colour_set_goes_by_its_faces_the_biggy_weighing_two(small, biggy):
    g = GameState.new("royale", [("ben", "blue"), ("carla", "green")])
    g.apply_action(Deal())
    g.apply_action(Roll(tuple(Die("white", v) for v in small) + (Die("white", biggy, True),)))
    for casino in range(1, 7):
        expected = small.count(casino) + (2 if biggy == casino else 0)
        assert g.weights(casino).get("white", 0) == expected
    assert g.phase == "roll" and g.current_player() == "ben" and not g.pool

"""Las Vegas Royale's main game: the casino tiles, the bank, and each tile's effect.

Every expectation is read from ../shared/rules/royale-2019.txt; each tile's test quotes the
line it checks. Games that test one face name the faces in play with the internal option
`tile_pool`.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorekeeper import (
    ConfigError,
    Deal,
    Die,
    GameConfig,
    GameState,
    IllegalAction,
    Pass,
    Place,
    Roll,
    action_from_dict,
)
from scorekeeper.actions import TileChoice
from scorekeeper.simulate import play_random_game
from scorekeeper.store import GameStore
from scorekeeper.tiles import FACES, TILE_CLASSES, draw_tiles, pays_bank, tiles_of

THREE = [("anna", "red"), ("ben", "blue"), ("carla", "green")]
DECK_TOTAL = 10 * sum(range(10_000, 100_000, 10_000))  # the default 90 cards


def game(faces: list[str], n_tiles: int = 1, seed: int = 0, players: Any = THREE,
         **options: Any) -> GameState:
    state = GameState.new("royale", players, {"tiles": n_tiles, "tile_pool": faces, **options},
                          seed=seed)
    state.apply_action(Deal())
    return state


def casino_of(state: GameState, code: str) -> int:
    [casino] = [t["casino"] for t in state.to_dict()["tiles"]["casinos"] if t["tile"] == code]
    return casino


def turn(state: GameState, value: int, small: int, big: bool = False,
         other: int | None = None) -> None:
    """The player to act rolls `small` small dice (and the Biggy if `big`) showing `value`,
    the rest of their dice `other`, and places the `value`s."""
    seat = state.seat_of[state.player_to_act()]
    hand = state.hands[seat]
    colour = state.players[seat].colour
    n_small, n_big = hand[(colour, False)], hand[(colour, True)]
    if other is None:
        other = 6 if value != 6 else 5
    dice = [Die(colour, value)] * small + [Die(colour, other)] * (n_small - small)
    if n_big:
        dice.append(Die(colour, value if big else other, True))
    state.apply_action(Roll(tuple(dice)))
    state.apply_action(Place(value))


def finish_round(state: GameState, value: int = 6) -> None:
    """Everyone places all their remaining dice in casino `value` (no tile there)."""
    rnd = state.round
    while state.round == rnd and state.phase == "roll":
        seat = state.seat_of[state.player_to_act()]
        turn(state, value, state.hands[seat][(state.players[seat].colour, False)], big=True)


def cards_total(state: GameState) -> int:
    bank = sum(tiles_of(state).bank) if state.edition.tile_count else 0
    return (sum(state.pile) + sum(state.under) + bank
            + sum(sum(c.notes) for c in state.casinos.values())
            + sum(sum(w) for w in state.won.values()))


class _Rng:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)


# --- the framework -----------------------------------------------------------------------
def test_sixteen_faces_two_per_tile_with_their_names() -> None:
    assert len(FACES) == 16
    assert {code[0] for code in FACES} == set("ABCDEFGH")
    assert all(f"{letter}{side}" in FACES for letter in "ABCDEFGH" for side in (1, 2))
    assert FACES["A1"] == "Lucky Punch" and FACES["E1"] == "No Entry!"
    assert FACES["H2"] == "My Choice" and FACES["G2"] == "Double Down"


def test_every_face_is_built_and_the_main_game_is_open() -> None:
    assert set(TILE_CLASSES) == set(FACES)
    state = GameState.new("royale", THREE, {"tiles": True}, seed=3)
    assert state.edition.options["tiles"] == 3 and state.edition.options["used_tiles"] == "repeat"
    state.apply_action(Deal())
    assert [t["casino"] for t in state.to_dict()["tiles"]["casinos"]] == [1, 2, 3]
    with pytest.raises(ConfigError, match="tile_pool"):
        GameState.new("royale", THREE, {"tiles": 3, "tile_pool": ["Z9"]})
    with pytest.raises(ConfigError):
        GameState.new("royale", THREE, {"tiles": 7})
    with pytest.raises(ConfigError, match="need tiles"):
        GameState.new("royale", THREE, {"used_tiles": "aside"})


def test_three_tiles_beside_casinos_one_to_three_each_a_random_side() -> None:
    """"randomly select 3 tiles. Each tile has two sides so besides shuffling them, flip them
    over as well. Then randomly select a tile and place it next to the 1 casino. Repeat this
    process for the 2 and 3 casinos. The other casinos (4-6) remain empty." """
    sides: Counter[int] = Counter()
    for seed in range(200):
        drawn = draw_tiles(_Rng(seed), 3, sorted(FACES), [], "repeat")  # type: ignore[arg-type]
        assert sorted(drawn) == [1, 2, 3]
        assert len({code[0] for code in drawn.values()}) == 3  # three different tiles
        sides.update(int(code[1]) for code in drawn.values())
    assert sides[1] > 200 and sides[2] > 200


def test_the_variant_lays_zero_to_six_tiles_one_per_casino() -> None:
    """"you can agree to use fewer or more than three tiles per round. The maximum is six
    tiles (one for each casino)." """
    drawn = draw_tiles(_Rng(1), 6, sorted(FACES), [], "repeat")  # type: ignore[arg-type]
    assert sorted(drawn) == [1, 2, 3, 4, 5, 6]
    assert len({code[0] for code in drawn.values()}) == 6
    assert draw_tiles(_Rng(1), 0, sorted(FACES), [], "repeat") == {}  # type: ignore[arg-type]


def test_used_tiles_may_repeat_unless_set_aside() -> None:
    """"It may happen that the same tile is used multiple times. (If you don't want that to
    happen, put the used tiles aside after each round, or make sure their other face is
    used.)" """
    repeats = 0
    for seed in range(40):
        first = draw_tiles(_Rng(seed), 3, sorted(FACES), [], "repeat")  # type: ignore[arg-type]
        again = draw_tiles(_Rng(seed + 1000), 3, sorted(FACES), list(first.values()),
                           "repeat")  # type: ignore[arg-type]
        repeats += bool({c[0] for c in first.values()} & {c[0] for c in again.values()})
        aside = draw_tiles(_Rng(seed + 1000), 3, sorted(FACES), list(first.values()),
                           "aside")  # type: ignore[arg-type]
        assert not {c[0] for c in first.values()} & {c[0] for c in aside.values()}
        other = draw_tiles(_Rng(seed + 1000), 3, sorted(FACES), list(first.values()),
                           "other_face")  # type: ignore[arg-type]
        assert not set(first.values()) & set(other.values())
    assert repeats > 0


def test_a_game_draws_its_tiles_from_its_seed_each_round() -> None:
    def tiles(seed: int) -> list[list[str]]:
        state = GameState.new("royale", THREE, {"tiles": 2, "tile_pool": sorted(TILE_CLASSES),
                                                "used_tiles": "other_face"}, seed=seed)
        seen = []
        for _ in range(3):
            seen.append([t["tile"] for t in state.to_dict()["tiles"]["casinos"]])
            state.apply_action(Deal())
            finish_round(state)
        return seen

    assert tiles(5) == tiles(5)
    faces = [code for rnd in tiles(5) for code in rnd]
    assert len(faces) == len(set(faces))


def test_round_one_sets_aside_24_cards_and_the_rest_is_the_bank() -> None:
    """"Distribute the money cards (6 x 2 cards) [...] Then, set aside 6 x 2 money cards for
    rounds 2 and 3 (a total of 24 cards). They must remain face down. Put the rest of the
    money cards face up on the table. They serve as "bank"." """
    state = game(["C1"])
    assert len(state.pile) == 24
    assert len(tiles_of(state).bank) == 90 - 12 - 24
    assert cards_total(state) == DECK_TOTAL
    finish_round(state)
    state.apply_action(Deal())
    assert len(state.pile) == 12 and len(tiles_of(state).bank) == 54
    basic = GameState.new("royale", THREE)
    basic.apply_action(Deal())
    assert len(basic.pile) == 90 - 12 and "tiles" not in basic.to_dict()


def test_the_bank_gives_change_but_never_chips() -> None:
    """"The bank can give change. (But chips are never paid out as "change".)" """
    state = game(["C2"])
    ben = "ben"
    state.won[ben].extend([60_000])
    extra = tiles_of(state)
    before = sum(extra.bank)
    paid = pays_bank(state, ben, 50_000, "C2")
    assert paid == 50_000 and sum(state.won[ben]) == 10_000
    assert sum(extra.bank) == before + 50_000
    carla = "carla"  # two chips from round 1 and a $30,000 card
    state.won[carla].append(30_000)
    chips = extra.chips[carla]
    paid = pays_bank(state, carla, 50_000, "C2")
    assert state.won[carla] == [] and extra.chips[carla] == chips - 2 and paid == 50_000
    extra.chips["anna"] = 1
    paid = pays_bank(state, "anna", 50_000, "C2")
    assert paid == 10_000 and extra.chips["anna"] == 0


def test_tile_choice_round_trips_through_its_dict() -> None:
    action = TileChoice("G2", "move", 2, "anna")
    assert action_from_dict(action.to_dict()) == action
    assert action_from_dict({"type": "tile", "tile": "a2", "choice": "Take"}) == \
        TileChoice("A2", "take")
    with pytest.raises(IllegalAction):
        action_from_dict({"type": "tile", "tile": "G2"})


TILE_CONFIGS = [(n, k) for n in (2, 3, 4, 5) for k in (1, 3, 6)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TILE_CONFIGS), st.integers(0, 2**32 - 1))
def test_money_is_conserved_between_players_bank_and_pile(config: tuple[int, int],
                                                         seed: int) -> None:
    n, k = config
    options = {"tiles": k}

    def check(state: GameState, action: Any) -> None:
        assert cards_total(state) == DECK_TOTAL
        for p in state.players:
            assert state.money(p.name) >= 0 and state.chips[p.name] >= 0

    state = play_random_game("royale", n, seed, options, on_action=check)
    assert len(state.round_results) == 3


def test_a_tiles_game_replays_from_the_store_and_undoes(tmp_path: Any) -> None:
    options = {"tiles": 3}
    played = play_random_game("royale", 3, 7, options)
    config = GameConfig("royale", tuple(played.config.players), options, seed=7)
    with GameStore(tmp_path) as store:
        stored = store.create(config)
        for action in played.history:
            stored.apply(action)
        assert stored.state.fingerprint() == played.fingerprint()
    with GameStore(tmp_path) as store:
        assert store.load(stored.id).state.fingerprint() == played.fingerprint()
    undone = played.clone()
    last = undone.undo()
    undone.apply_action(last)
    assert undone.fingerprint() == played.fingerprint()


# --- the tiles ---------------------------------------------------------------------------
def test_high_five_pays_100000_for_the_fifth_die() -> None:
    """HIGH FIVE (C1): "When you place your fifth die (or 3 and your Biggy) in this casino,
    take the token. Exchange it during payout for $100,000 from the bank." """
    state = game(["C1"])
    casino = casino_of(state, "C1")
    turn(state, casino, 3, big=True)  # anna: 3 and her Biggy
    assert state.to_dict()["tiles"]["casinos"][0]["token"] == "anna"
    turn(state, casino, 6)  # ben: six dice, but the token is gone
    assert state.to_dict()["tiles"]["casinos"][0]["token"] == "anna"
    finish_round(state)
    result = state.round_results[0]
    won = sum(p["amount"] for c in result["casinos"] for p in c["payouts"]
              if p["player"] == "anna")
    assert result["money"]["anna"] == won + 100_000


def test_high_five_needs_five_dice_in_the_casino() -> None:
    """HIGH FIVE (C1): four dice are not "your fifth die"; the fifth, a turn later, is."""
    state = game(["C1"])
    casino = casino_of(state, "C1")
    turn(state, casino, 4)
    assert state.to_dict()["tiles"]["casinos"][0]["token"] is None
    turn(state, 6, 7, big=True)  # ben
    turn(state, 6, 7, big=True)  # carla
    turn(state, casino, 1)  # anna's fifth
    assert state.to_dict()["tiles"]["casinos"][0]["token"] == "anna"


def _lowest_pays_setup() -> GameState:
    state = game(["C2"])
    casino = casino_of(state, "C2")
    turn(state, casino, 2)  # anna 2 dice
    turn(state, casino, 1)  # ben 1 die; carla none in this casino
    return state


def test_bad_luck_the_lowest_even_with_zero_dice_pays_50000() -> None:
    """BAD LUCK (C2): "Each player with the lowest amount of dice in this casino (before
    removing any tied dice and including players with zero dice!) must pay $50,000 into the
    bank when the round ends." """
    state = _lowest_pays_setup()
    finish_round(state)  # everything else in casino 6: carla has no die in the Bad Luck casino
    result = state.round_results[0]
    for name in ("anna", "ben", "carla"):
        won = sum(p["amount"] for c in result["casinos"] for p in c["payouts"]
                  if p["player"] == name)
        if name != "carla":
            assert state.money(name) == won
        elif won >= 50_000:
            assert state.money(name) == won - 50_000
        else:  # "they must pay everything they have (including chips [...] $10,000)"
            assert state.money(name) == 0
            assert state.chips[name] == max(0, 2 - -(-(50_000 - won) // 10_000))


def test_bad_luck_hits_everyone_tied_for_lowest() -> None:
    """BAD LUCK (C2): "Each player with the lowest amount" - all of them, here two with none."""
    state = game(["C2"])
    casino = casino_of(state, "C2")
    turn(state, casino, 2)  # anna
    finish_round(state)
    result = state.round_results[0]
    for name in ("ben", "carla"):
        won = sum(p["amount"] for c in result["casinos"] for p in c["payouts"]
                  if p["player"] == name)
        paid = [n for n in state.notices if n["kind"] == "pays" and n["player"] == name]
        assert len(paid) == 1 and paid[0]["owed"] == 50_000
        assert state.money(name) == max(0, won - 50_000)
    assert not [n for n in state.notices if n["kind"] == "pays" and n["player"] == "anna"]


def test_bad_luck_counts_the_biggy_as_two() -> None:
    """BAD LUCK (C2) counts dice as the payout does: "The bigger die (also called "Biggy")
    counts as two smaller dice!" Ben's Biggy (2) is not lower than Anna's two dice."""
    state = game(["C2"])
    casino = casino_of(state, "C2")
    turn(state, casino, 2)  # anna: 2
    turn(state, casino, 0, big=True)  # ben: the Biggy alone = 2
    turn(state, casino, 3)  # carla: 3
    finish_round(state)
    payers = {n["player"] for n in state.notices if n["kind"] == "pays"}
    assert payers == {"anna", "ben"}


def test_pay_day_one_or_two_casinos_give_chips() -> None:
    """PAY DAY (D1): "Count the casinos (not tiles!) that contain at least one die of your
    color. This includes the activated casino. [...] If the total is $10,000 or $20,000, you
    receive 1 or 2 chips." """
    state = game(["D1"])
    casino = casino_of(state, "D1")
    turn(state, casino, 1)  # anna: only this casino
    assert state.chips["anna"] == 2 + 1 and state.money("anna") == 0
    turn(state, 5, 1)  # ben in casino 5
    turn(state, 6, 1)  # carla
    turn(state, 6, 1)  # anna
    turn(state, casino, 1)  # ben: casinos 5 and this one
    assert state.chips["ben"] == 2 + 2 and state.money("ben") == 0


def test_pay_day_three_to_six_casinos_pay_from_the_bank() -> None:
    """PAY DAY (D1): "For $30,000-$60,000 take that much money from the bank." """
    state = game(["D1"])
    casino = casino_of(state, "D1")
    bank = sum(tiles_of(state).bank)
    for value in (4, 5, 6):
        turn(state, value, 1)  # anna in 4, 5, 6 over three turns
        turn(state, 2, 1)  # ben
        turn(state, 2, 1)  # carla
    turn(state, casino, 1)  # anna: 4, 5, 6 and this casino
    assert state.money("anna") == 40_000 and state.chips["anna"] == 2
    assert sum(tiles_of(state).bank) == bank - 40_000


def test_a_tile_is_not_activated_by_the_neutral_dice() -> None:
    """ "Whenever you place any dice in casinos 1, 2, or 3, you "activate" them": the two-player
    game's neutral dice are no one's, and they are placed before anyone's turn."""
    two = [("anna", "red"), ("ben", "blue")]
    state = GameState.new("royale", two, {"tiles": 1, "tile_pool": ["D1"]})
    state.apply_action(Deal())
    state.apply_action(Roll(tuple(Die("white", 1) for _ in range(8))))
    assert state.chips == {"anna": 2, "ben": 2}
    assert not [n for n in state.notices if n.get("did") == "count"]


def black(a: int, b: int) -> Roll:
    return Roll((Die("black", a), Die("black", b)))


def tile_view(state: GameState, code: str) -> dict[str, Any]:
    [view] = [t for t in state.to_dict()["tiles"]["casinos"] if t["tile"] == code]
    return view


def bank_paid(state: GameState, code: str) -> list[tuple[str, int]]:
    return [(n["player"], n["paid"]) for n in state.notices
            if n["kind"] == "bank" and n["tile"] == code]


@pytest.mark.parametrize("thrown", [(3, 4), (6, 1), (2, 2), (6, 6)])
def test_jackpot_a_seven_or_a_double_takes_the_30000(thrown: tuple[int, int]) -> None:
    """JACKPOT (A2): "Put the JACKPOT counter on the first space of this tile ($30,000) [...]
    If you rolled a 7 or a double, take the amount displayed beneath the JACKPOT counter from
    the bank. Then move the counter back onto the $30,000 space." """
    state = game(["A2"])
    casino = casino_of(state, "A2")
    bank = sum(tiles_of(state).bank)
    turn(state, casino, 1)
    assert state.is_chance_node() and state.player_to_act() == "anna"
    assert state.expected_roll() == Counter({("black", False): 2})
    state.apply_action(black(*thrown))
    assert state.money("anna") == 30_000 and sum(tiles_of(state).bank) == bank - 30_000
    assert tile_view(state, "A2")["counter"] == 30_000
    assert state.player_to_act() == "ben" and state.phase == "roll"


def test_jackpot_grows_on_a_miss_up_to_80000_then_pays_it() -> None:
    """JACKPOT (A2): "If you didn't roll a 7 or a double, advance the counter to the next
    space (max. of $80,000)." """
    state = game(["A2"])
    casino = casino_of(state, "A2")
    seen = []
    for _ in range(6):  # six misses: anna, ben, carla, anna, ben, carla
        turn(state, casino, 1)
        state.apply_action(black(1, 2))
        seen.append(tile_view(state, "A2")["counter"])
    assert seen == [40_000, 50_000, 60_000, 70_000, 80_000, 80_000]
    assert all(state.money(p.name) == 0 for p in state.players)
    turn(state, casino, 1)  # anna
    state.apply_action(black(5, 2))
    assert state.money("anna") == 80_000 and tile_view(state, "A2")["counter"] == 30_000


def test_jackpot_throws_exactly_the_two_black_dice() -> None:
    """JACKPOT (A2): "Throw both extra dice": two black dice, each read; the player's own dice
    or a third die are refused and change nothing."""
    state = game(["A2"])
    turn(state, casino_of(state, "A2"), 1)
    before = state.fingerprint()
    for wrong in (Roll((Die("red", 3), Die("red", 4))),
                  Roll((Die("black", 3), Die("black", 4), Die("black", 1))),
                  Roll((Die("black", 3), Die("black", None)))):
        with pytest.raises(IllegalAction):
            state.apply_action(wrong)
        assert state.fingerprint() == before
    with pytest.raises(IllegalAction):
        state.apply_action(Roll(black(3, 4).dice, "ben"))
    with pytest.raises(IllegalAction):
        state.apply_action(TileChoice("A2", "take"))
    assert state.legal_actions() == []


def test_black_is_no_player_colour_with_tiles() -> None:
    """ "Prepare the 2 black and 9 gray dice": neither is a player's colour in the main game."""
    with pytest.raises(ConfigError):
        GameState.new("royale", [("anna", "black"), ("ben", "blue")],
                      {"tiles": 1, "tile_pool": ["A2"]})
    GameState.new("royale", [("anna", "black"), ("ben", "blue")])  # the basic game has none


def _double_down() -> tuple[GameState, int]:
    state = game(["G2"])
    return state, casino_of(state, "G2")


def test_double_down_moves_as_many_dice_as_you_want_onto_the_tile() -> None:
    """DOUBLE DOWN (G2): "If you want, you may move as many of your dice from this casino to
    the corresponding space on the tile. These can be dice you just placed in this casino, or
    dice you placed here previously." """
    state, casino = _double_down()
    turn(state, casino, 3, big=True)
    assert state.player_to_act() == "anna" and state.phase == "tile"
    legal = state.legal_actions()
    assert TileChoice("G2", "keep") in legal
    assert {a.value for a in legal if a.choice == "move"} == {1, 2, 3}
    assert {a.value for a in legal if a.choice == "move_biggy"} == {0, 1, 2, 3}
    before = state.fingerprint()
    with pytest.raises(IllegalAction):
        state.apply_action(TileChoice("G2", "move", 4))
    with pytest.raises(IllegalAction):
        state.apply_action(TileChoice("G2", "move", 1, "ben"))
    assert state.fingerprint() == before
    state.apply_action(TileChoice("G2", "move", 2, "anna"))
    assert state.weights(casino) == {"anna": 3}  # one die and the Biggy stay
    assert tile_view(state, "G2")["dice"] == {"anna": 2}
    turn(state, 6, 7, big=True)  # ben
    turn(state, 6, 7, big=True)  # carla
    turn(state, casino, 1)  # anna again: the earlier die and the Biggy may go too
    assert {a.value for a in state.legal_actions() if a.choice == "move_biggy"} == {0, 1, 2}
    state.apply_action(TileChoice("G2", "move_biggy", 2))
    assert state.weights(casino) == {}
    assert tile_view(state, "G2")["dice"] == {"anna": 6}


def test_double_down_pays_like_a_casino_from_the_bank() -> None:
    """DOUBLE DOWN (G2): "This tile is paid out exactly like a casino. After possible removals
    the winner gets $60,000, and the runner up gets $30,000 from the bank." """
    state, casino = _double_down()
    turn(state, casino, 2)  # anna
    state.apply_action(TileChoice("G2", "move", 2))
    turn(state, casino, 3)  # ben
    state.apply_action(TileChoice("G2", "move", 3))
    turn(state, casino, 1)  # carla keeps hers in the casino
    state.apply_action(TileChoice("G2", "keep"))
    finish_round(state)
    assert sorted(bank_paid(state, "G2")) == [("anna", 30_000), ("ben", 60_000)]


def test_double_down_ties_on_the_tile_are_removed() -> None:
    """DOUBLE DOWN (G2): "exactly like a casino": "Whenever there is a tie, those players
    remove all their dice"; the runner-up's $30,000 then goes to nobody."""
    state, casino = _double_down()
    for n in (2, 3, 2):  # anna 2, ben 3, carla 2
        turn(state, casino, n)
        state.apply_action(TileChoice("G2", "move", n))
    finish_round(state)
    assert bank_paid(state, "G2") == [("ben", 60_000)]


def chips_from(state: GameState, code: str) -> list[tuple[str, int]]:
    return [(n["player"], n["chips"]) for n in state.notices
            if n["kind"] == "chips" and n["tile"] == code]


@pytest.mark.parametrize(("held", "guess", "chips", "money"), [
    (1, 2, 2, 0), (2, 3, 0, 30_000), (3, 1, 0, 40_000), (2, 2, 0, 0),
])
def test_lucky_punch_pays_when_the_left_neighbour_guesses_wrong(
        held: int, guess: int, chips: int, money: int) -> None:
    """LUCKY PUNCH (A1): "Secretly choose 1-3 tokens [...] The player to your left must guess
    how many tokens you are holding in your hand. If they guess correctly, you get nothing. If
    they guess wrong, you get the reward: either 2 chips or $30,000 or $40,000." """
    state = game(["A1"])
    turn(state, casino_of(state, "A1"), 1)
    assert state.player_to_act() == "anna"
    assert {a.value for a in state.legal_actions()} == {1, 2, 3}
    state.apply_action(TileChoice("A1", "hold", held, "anna"))
    assert state.player_to_act() == "ben"  # anna's left: the next in turn order
    with pytest.raises(IllegalAction):
        state.apply_action(TileChoice("A1", "guess", guess, "anna"))
    state.apply_action(TileChoice("A1", "guess", guess))
    assert state.chips["anna"] == 2 + chips and state.money("anna") == money
    assert state.phase == "roll" and state.player_to_act() == "ben"


def test_lucky_punch_keeps_the_tokens_secret_until_the_guess() -> None:
    """LUCKY PUNCH (A1): "Secretly choose 1-3 tokens": no view shows the number before the
    guess; the log tells it once the fist opens."""
    state = game(["A1"], players=THREE[:2] + [("dora", "yellow")])
    turn(state, casino_of(state, "A1"), 1)
    state.apply_action(TileChoice("A1", "hold", 3))
    shown = state.to_dict()
    [entry] = [e for e in shown["log"] if e["kind"] == "tile"]
    assert entry["hidden"] and entry["value"] is None
    assert set(tile_view(state, "A1")) == {"casino", "tile", "name"}
    assert all(c["choice"] == "guess" for c in shown["tiles"]["pending"][0]["choices"])
    assert not [n for n in shown["notices"] if n.get("held") is not None]
    state.apply_action(TileChoice("A1", "guess", 1))
    [revealed] = [n for n in state.notices if n.get("did") == "revealed"]
    assert revealed["held"] == 3 and revealed["guess"] == 1 and not revealed["right"]


def test_lucky_punch_the_last_player_is_guessed_by_the_first() -> None:
    """LUCKY PUNCH (A1): "The player to your left": around the table, Carla's is Anna."""
    state = game(["A1"])
    casino = casino_of(state, "A1")
    turn(state, 6, 1)
    turn(state, 6, 1)
    turn(state, casino, 1)  # carla
    state.apply_action(TileChoice("A1", "hold", 1))
    assert state.player_to_act() == "anna"


def test_nice_dice_puts_a_rolled_or_placed_die_on_its_space_and_bumps() -> None:
    """NICE DICE (H1): "you may place a die you just rolled or one that you just placed on
    this casino, on this tile. Place that die onto the die space corresponding to its rolled
    number. If there is already another die on that space (either your own or an opponent's
    die), place that die in the corresponding casino (this will not trigger that casino)." """
    state = game(["H1"])
    casino = casino_of(state, "H1")
    turn(state, casino, 2, other=4)  # anna: two dice here, the rest showed 4
    assert set(state.legal_actions()) == {TileChoice("H1", "keep"),
                                          TileChoice("H1", "die", casino),
                                          TileChoice("H1", "die", 4),
                                          TileChoice("H1", "biggy", 4)}
    state.apply_action(TileChoice("H1", "die", 4))  # a die she rolled and did not place
    assert state.dice_left("anna") == 8 - 2 - 1
    assert state.weights(casino) == {"anna": 2}
    turn(state, casino, 1, other=5)  # ben
    state.apply_action(TileChoice("H1", "die", casino))  # the die he just placed
    assert state.weights(casino) == {"anna": 2} and state.dice_left("ben") == 7
    turn(state, casino, 1, other=4)  # carla takes space 4: anna's die goes to casino 4
    state.apply_action(TileChoice("H1", "die", 4))
    assert state.weights(4) == {"anna": 1}
    spaces = tile_view(state, "H1")["spaces"]
    assert spaces[str(casino)]["colour"] == "blue" and spaces["4"]["colour"] == "green"


def test_nice_dice_pays_each_die_by_its_space() -> None:
    """NICE DICE (H1): "During payout: Each player removes their dice from this tile and then
    takes the corresponding reward: 1 or 2 chips or $30,000-$60,000." """
    state = game(["H1"])
    casino = casino_of(state, "H1")
    turn(state, casino, 1, other=5)  # anna: a 5 onto space 5
    state.apply_action(TileChoice("H1", "die", 5))
    turn(state, casino, 1, other=2)  # ben: a 2 onto space 2
    state.apply_action(TileChoice("H1", "die", 2))
    turn(state, casino, 1, other=4)  # carla: the placed die onto space 1
    state.apply_action(TileChoice("H1", "die", casino))
    finish_round(state)
    assert bank_paid(state, "H1") == [("anna", 50_000)]
    assert sorted(chips_from(state, "H1")) == [("ben", 2), ("carla", 1)]


def test_knockout_each_opponent_puts_a_remaining_die_in_the_bar() -> None:
    """KNOCKOUT! (E2): "Each opponent must place one of their remaining dice in the bar on
    this tile (unless there are already 2 dice of that opponent in the bar). In exchange, you
    get back all your dice that are currently in the bar (if any)." """
    state = game(["E2"])
    casino = casino_of(state, "E2")
    turn(state, casino, 1)  # anna: ben, then carla, choose a die
    assert state.player_to_act() == "ben"
    assert set(state.legal_actions()) == {TileChoice("E2", "die"), TileChoice("E2", "biggy")}
    state.apply_action(TileChoice("E2", "biggy"))
    assert state.player_to_act() == "carla"
    state.apply_action(TileChoice("E2", "die"))
    assert state.dice_left("ben") == 7 and state.dice_left("carla") == 7
    assert tile_view(state, "E2")["bar"] == {"ben": 1, "carla": 1}
    turn(state, casino, 1)  # ben: carla and anna put one in; ben's Biggy comes back
    state.apply_action(TileChoice("E2", "die"))  # carla
    state.apply_action(TileChoice("E2", "die"))  # anna
    assert tile_view(state, "E2")["bar"] == {"anna": 1, "carla": 2}
    assert state.hands[state.seat_of["ben"]][("blue", True)] == 1
    assert state.dice_left("ben") == 8 - 1 - 1 + 1 and state.dice_left("carla") == 6
    turn(state, 6, 1)  # carla elsewhere
    turn(state, casino, 1)  # anna: only ben is asked, carla has 2 in the bar already
    assert state.player_to_act() == "ben"
    state.apply_action(TileChoice("E2", "die"))
    assert state.phase == "roll" and state.player_to_act() == "ben"
    assert tile_view(state, "E2")["bar"] == {"ben": 1, "carla": 2}
    assert state.dice_left("anna") == 8 - 3 + 1


def test_knockout_dice_in_the_bar_do_not_count() -> None:
    """KNOCKOUT! (E2): "Any dice in the bar are "knocked out" and will not count during
    payout." An opponent with one kind of die left has no choice to make."""
    state = game(["E2"])
    casino = casino_of(state, "E2")
    turn(state, 6, 7, big=True)  # anna: all in casino 6
    turn(state, 5, 7)  # ben keeps only his Biggy
    turn(state, casino, 1)  # carla: anna has none left, ben's Biggy goes to the bar
    assert state.phase == "roll" and state.dice_left("ben") == 0
    finish_round(state)
    casino5 = state.round_results[0]["casinos"][4]
    assert [p["player"] for p in casino5["payouts"]] == ["ben"]
    assert state.round_results[0]["round"] == 1


def test_prime_time_the_winner_throws_and_places_the_black_dice_as_their_own() -> None:
    """PRIME TIME (B1): "If you are the winner of this casino [...] throw both extra dice.
    You now have the option to place either zero, one or both of those dice in the
    corresponding casinos [...] During the subsequent payout they will count as your own
    dice!" """
    state = game(["B1"])
    casino = casino_of(state, "B1")
    turn(state, casino, 3)  # anna wins here
    turn(state, casino, 1)  # ben
    finish_round(state)  # everything else in casino 6
    assert state.phase == "tile" and state.player_to_act() == "anna"
    assert state.expected_roll() == Counter({("black", False): 2})
    notes2, notes5 = list(state.casinos[2].notes), list(state.casinos[5].notes)
    state.apply_action(black(5, 2))
    assert set(state.legal_actions()) == {TileChoice("B1", "none"), TileChoice("B1", "one", 2),
                                          TileChoice("B1", "one", 5), TileChoice("B1", "both")}
    state.apply_action(TileChoice("B1", "both"))
    result = state.round_results[0]["casinos"]
    assert result[1]["payouts"] == [{"player": "anna", "amount": max(notes2)}]
    assert result[4]["payouts"] == [{"player": "anna", "amount": max(notes5)}]


def test_prime_time_a_double_may_go_in_together_or_not_at_all() -> None:
    """PRIME TIME (B1): "zero, one or both of those dice [...] (even if you rolled a
    double!)" """
    state = game(["B1"])
    casino = casino_of(state, "B1")
    turn(state, casino, 1)
    finish_round(state)
    state.apply_action(black(4, 4))
    assert set(state.legal_actions()) == {TileChoice("B1", "none"), TileChoice("B1", "one", 4),
                                          TileChoice("B1", "both")}
    state.apply_action(TileChoice("B1", "none"))
    assert state.round == 2 and state.round_results[0]["casinos"][3]["payouts"] == []


def test_prime_time_is_for_the_winner_after_ties_are_removed() -> None:
    """PRIME TIME (B1): "the winner of this casino (i.e. you are about to receive the higher
    value card)": with Anna and Ben tied, Carla's single die wins."""
    state = game(["B1"])
    casino = casino_of(state, "B1")
    turn(state, casino, 2)
    turn(state, casino, 2)
    turn(state, casino, 1)
    finish_round(state)
    assert state.player_to_act() == "carla"


def test_prime_time_nobody_in_the_casino_nobody_throws() -> None:
    state = game(["B1"])
    finish_round(state)
    assert state.round == 2 and state.phase == "deal"


def test_fifty_fifty_take_the_reward_below_the_counter() -> None:
    """FIFTY FIFTY (B2): "Throw both extra dice and move the counter one space to the right.
    Then, if you choose to end your turn, you get the reward indicated below the counter" -
    the first space after the start pays $0, the next $10,000 (see the docs' readings)."""
    state = game(["B2"])
    turn(state, casino_of(state, "B2"), 1)
    state.apply_action(black(3, 4))
    assert set(state.legal_actions()) == {TileChoice("B2", "take"), TileChoice("B2", "higher"),
                                          TileChoice("B2", "lower")}
    state.apply_action(TileChoice("B2", "higher"))
    assert state.is_chance_node() and state.player_to_act() == "anna"
    state.apply_action(black(6, 5))  # 11 > 7: the bet is won
    state.apply_action(TileChoice("B2", "take"))
    assert state.money("anna") == 10_000
    assert tile_view(state, "B2")["counter"] == 0  # "place the counter back"


@pytest.mark.parametrize(("bet", "second"), [("higher", (1, 2)), ("lower", (6, 6)),
                                             ("higher", (3, 4)), ("lower", (2, 5))])
def test_fifty_fifty_a_lost_bet_or_the_same_number_gets_nothing(
        bet: str, second: tuple[int, int]) -> None:
    """FIFTY FIFTY (B2): "If you lose your bet, your turn ends and you get nothing." and "If
    you roll the same number twice in a row, you lose the bet!" """
    state = game(["B2"])
    turn(state, casino_of(state, "B2"), 1)
    state.apply_action(black(3, 4))
    state.apply_action(TileChoice("B2", bet))
    state.apply_action(black(*second))
    assert state.money("anna") == 0 and state.phase == "roll"
    assert state.player_to_act() == "ben" and tile_view(state, "B2")["counter"] == 0


def test_fifty_fifty_climbs_to_60000_at_most() -> None:
    """FIFTY FIFTY (B2): the reward is "$0-$60,000": at $60,000 there is nothing left to
    gamble for."""
    state = game(["B2"])
    turn(state, casino_of(state, "B2"), 1)
    state.apply_action(black(1, 1))  # 2
    for _ in range(6):
        state.apply_action(TileChoice("B2", "higher" if state.to_dict()["tiles"]["casinos"][0][
            "last"] < 7 else "lower"))
        last = state.to_dict()["tiles"]["casinos"][0]["last"]
        state.apply_action(black(6, 6) if last < 7 else black(1, 1))
    assert state.legal_actions() == [TileChoice("B2", "take")]
    state.apply_action(TileChoice("B2", "take"))
    assert state.money("anna") == 60_000


def test_block_it_puts_a_cluster_of_blank_dice_in_any_casino() -> None:
    """BLOCK IT! (F1): "Place the nine blank gray dice on the dice space clusters of this
    tile, as indicated (2x 1, 2x 2, 1x 3 dice). When activated: Choose one dice space cluster,
    take all blank dice from it and place them in one casino of your choice." """
    state = game(["F1"])
    casino = casino_of(state, "F1")
    turn(state, casino, 1)
    assert {a.value for a in state.legal_actions()} == {1, 2, 3}
    state.apply_action(TileChoice("F1", "cluster", 2))
    assert {a.value for a in state.legal_actions()} == {1, 2, 3, 4, 5, 6}
    state.apply_action(TileChoice("F1", "casino", 5))
    assert state.casinos[5].dice[("gray", False)] == 2
    assert tile_view(state, "F1")["clusters"] == [1, 1, 2, 3]


def test_block_it_blank_dice_are_an_imaginary_player() -> None:
    """BLOCK IT! (F1): "treat any blank dice in casinos as belonging to an imaginary player.
    Example: [...] contains 1 blue, 1 yellow, and 2 red dice. You add 2 blank dice. [...] If
    casino 2 stays that way, no player will win any money there." """
    players = [("anna", "red"), ("ben", "blue"), ("carla", "yellow")]
    state = game(["F1"], players=players)
    casino = casino_of(state, "F1")
    turn(state, 2, 2)  # anna: 2 red in casino 2
    turn(state, 2, 1)  # ben: 1 blue
    turn(state, 2, 1)  # carla: 1 yellow
    turn(state, casino, 1)  # anna activates Block It!
    state.apply_action(TileChoice("F1", "cluster", 2))
    state.apply_action(TileChoice("F1", "casino", 2))
    finish_round(state)
    casino2 = state.round_results[0]["casinos"][1]
    assert casino2["payouts"] == []  # gray 2 ties red 2, blue 1 ties yellow 1
    assert set(casino2["cancelled"]) == {"anna", "ben", "carla", "gray"}


def test_block_it_in_two_player_game_blank_and_neutral_are_different_players() -> None:
    """BLOCK IT! (F1): "In the 2-player game, the neutral dice that were placed at the
    beginning of the round and the blank gray dice count for different imaginary players!" """
    state = GameState.new("royale", [("anna", "red"), ("ben", "blue")],
                          {"tiles": 1, "tile_pool": ["F1"]})
    state.apply_action(Deal())
    state.apply_action(Roll(tuple(Die("white", 5) for _ in range(8))))
    turn(state, casino_of(state, "F1"), 1)
    state.apply_action(TileChoice("F1", "cluster", 3))
    state.apply_action(TileChoice("F1", "casino", 5))
    assert state.weights(5) == {"white": 8, "gray": 3}


def test_handicap_setup_puts_nine_blank_dice_in_the_casinos() -> None:
    """HANDICAP (F2): "one die each in casinos 1-3, two dice each in casinos 4-6." """
    state = game(["F2"])
    assert [state.casinos[c].dice[("gray", False)] for c in range(1, 7)] == [1, 1, 1, 2, 2, 2]


def test_handicap_a_blank_die_onto_a_picture_gives_its_reward() -> None:
    """HANDICAP (F2): "Choose one blank die from any casino and place it onto an empty die
    picture on this tile. You get the reward shown: 1 chip (2x) or $30,000 (3x) [...] You
    don't have to pick up any blank die, but you only get a reward if you do." """
    state = game(["F2"])
    casino = casino_of(state, "F2")
    turn(state, casino, 1)  # anna
    assert TileChoice("F2", "none") in state.legal_actions()
    state.apply_action(TileChoice("F2", "take", 4))
    assert state.casinos[4].dice[("gray", False)] == 1
    assert set(state.legal_actions()) == {TileChoice("F2", k) for k in ("chip", "money",
                                                                        "option")}
    state.apply_action(TileChoice("F2", "money"))
    assert state.money("anna") == 30_000
    turn(state, casino, 1)  # ben takes nothing, gets nothing
    state.apply_action(TileChoice("F2", "none"))
    assert state.money("ben") == 0 and state.chips["ben"] == 2
    for name in ("carla", "anna"):  # both chip pictures
        turn(state, casino, 1)
        state.apply_action(TileChoice("F2", "take", 5))
        state.apply_action(TileChoice("F2", "chip"))
        assert state.chips[name] == 3
    turn(state, casino, 1)  # ben: no chip picture is left
    state.apply_action(TileChoice("F2", "take", 6))
    assert TileChoice("F2", "chip") not in state.legal_actions()


def test_handicap_option_rotates_a_remaining_die_or_returns_one() -> None:
    """HANDICAP (F2): "to rotate one of your remaining dice to any number of your choice and
    then place it in the corresponding casino (this will not activate it!) or return one of
    your dice from any casino to your supply." """
    state = game(["F2"])
    casino = casino_of(state, "F2")
    turn(state, 6, 1)  # anna: one die in casino 6
    turn(state, 6, 1)
    turn(state, 6, 1)
    turn(state, casino, 1)  # anna
    state.apply_action(TileChoice("F2", "take", 6))
    state.apply_action(TileChoice("F2", "option"))
    legal = set(state.legal_actions())
    assert TileChoice("F2", "rotate", 4) in legal and TileChoice("F2", "return", 6) in legal
    assert TileChoice("F2", "rotate_biggy", 2) in legal
    state.apply_action(TileChoice("F2", "rotate", 4))
    assert state.weights(4) == {"anna": 1, "gray": 2} and state.dice_left("anna") == 5
    for _ in range(2):
        turn(state, 6, 1)
    turn(state, casino, 1)  # anna returns her die from casino 6 to her dice
    state.apply_action(TileChoice("F2", "take", 5))
    state.apply_action(TileChoice("F2", "option"))
    state.apply_action(TileChoice("F2", "return", 6))
    assert state.weights(6) == {"ben": 2, "carla": 2, "gray": 1}
    assert state.dice_left("anna") == 5


def _my_choice(thrown: tuple[int, int], faces: list[str] | None = None) -> GameState:
    state = game(faces or ["H2"], n_tiles=len(faces or ["H2"]))
    turn(state, casino_of(state, "H2"), 1)
    state.apply_action(black(*thrown))
    return state


def test_my_choice_choose_one_of_the_two_results() -> None:
    """MY CHOICE (H2): "Throw both black extra dice and choose one of the results. Perform the
    corresponding action: +1 chip, +2 chips, +$30,000" (the results 1, 2, 3)."""
    state = _my_choice((2, 3))
    assert set(state.legal_actions()) == {TileChoice("H2", "result", 2),
                                          TileChoice("H2", "result", 3)}
    state.apply_action(TileChoice("H2", "result", 2))
    assert state.chips["anna"] == 4
    state = _my_choice((3, 1))
    state.apply_action(TileChoice("H2", "result", 3))
    assert state.money("anna") == 30_000


def test_my_choice_activates_another_tile() -> None:
    """MY CHOICE (H2): "Activate any other tile, as if you had just placed dice in that
    casino." (result 4)"""
    state = _my_choice((4, 4), ["H2", "D1"])
    state.apply_action(TileChoice("H2", "result", 4))
    other = casino_of(state, "D1")
    assert state.legal_actions() == [TileChoice("H2", "activate", other)]
    state.apply_action(TileChoice("H2", "activate", other))
    # Pay Day counts the casinos with anna's dice: the My Choice casino only: one chip.
    assert state.chips["anna"] == 3


def test_my_choice_rotate_or_return_and_the_golden_space() -> None:
    """MY CHOICE (H2): result 5 "Rotate one of your remaining dice [...] or return one of your
    dice from a casino to your supply", result 6 "Place one of your remaining dice onto the
    golden framed gray space. If the space is occupied, return that die to its owner before.
    During payout [...] you get $60,000 from the bank." """
    state = _my_choice((5, 6))
    state.apply_action(TileChoice("H2", "result", 5))
    state.apply_action(TileChoice("H2", "rotate", 4))
    assert state.weights(4) == {"anna": 1} and state.dice_left("anna") == 6
    casino = casino_of(state, "H2")
    turn(state, casino, 1)  # ben
    state.apply_action(black(6, 6))
    state.apply_action(TileChoice("H2", "result", 6))
    state.apply_action(TileChoice("H2", "die"))
    assert tile_view(state, "H2")["golden"] == "ben" and state.dice_left("ben") == 6
    turn(state, casino, 1)  # carla takes the space: ben's die goes back to him
    state.apply_action(black(6, 1))
    state.apply_action(TileChoice("H2", "result", 6))
    state.apply_action(TileChoice("H2", "biggy"))
    assert tile_view(state, "H2")["golden"] == "carla" and state.dice_left("ben") == 7
    finish_round(state)
    assert bank_paid(state, "H2")[-1] == ("carla", 60_000)


def test_power_play_the_clear_majority_takes_the_token_a_tie_returns_it() -> None:
    """POWER PLAY (D2): "if you, alone, have more dice here than any other player, take the
    token [...] If at any time during the round no player has a clear dice majority, the token
    is returned to the tile." """
    state = game(["D2"])
    casino = casino_of(state, "D2")
    turn(state, casino, 2)  # anna alone has the most
    assert tile_view(state, "D2")["token"] == "anna"
    turn(state, casino, 2)  # ben ties her: nobody has a clear majority
    assert tile_view(state, "D2")["token"] is None
    turn(state, casino, 3)  # carla, alone with the most, takes it
    assert tile_view(state, "D2")["token"] == "carla"


def test_power_play_next_turn_pass_and_place_a_die_where_you_like() -> None:
    """POWER PLAY (D2): "On your next turn, if you still have the token, you may pass the
    turn. If you do, rotate one of your remaining dice to a number of your choice and place it
    in the corresponding casino" """
    state = game(["D2"])
    casino = casino_of(state, "D2")
    turn(state, casino, 2)  # anna takes the token
    turn(state, 6, 1)
    turn(state, 6, 1)
    assert state.phase == "tile" and state.player_to_act() == "anna"
    assert not state.is_chance_node()
    legal = set(state.legal_actions())
    assert TileChoice("D2", "roll") in legal and TileChoice("D2", "power", 5) in legal
    assert TileChoice("D2", "power_biggy", 4) in legal
    state.apply_action(TileChoice("D2", "power", 5))
    assert state.weights(5) == {"anna": 1} and state.dice_left("anna") == 5
    assert state.phase == "roll" and state.player_to_act() == "ben"
    turn(state, 6, 1)
    turn(state, 6, 1)
    assert state.phase == "roll" and state.player_to_act() == "anna"  # "next turn" only


def test_power_play_declined_the_turn_goes_on_with_a_roll() -> None:
    state = game(["D2"])
    casino = casino_of(state, "D2")
    turn(state, casino, 2)
    turn(state, 6, 1)
    turn(state, 6, 1)
    state.apply_action(TileChoice("D2", "roll"))
    assert state.phase == "roll" and state.player_to_act() == "anna"
    assert state.expected_roll() == Counter({("red", False): 5, ("red", True): 1})


def test_power_play_die_resolves_the_effects_of_its_casino() -> None:
    """POWER PLAY (D2): "place it in the corresponding casino and resolve any effects that
    might have": here Jackpot's throw."""
    state = game(["D2", "A2"], n_tiles=2)
    power, jackpot = casino_of(state, "D2"), casino_of(state, "A2")
    turn(state, power, 2)  # anna takes the token
    turn(state, 6, 1)
    turn(state, 6, 1)
    state.apply_action(TileChoice("D2", "power", jackpot))
    assert state.is_chance_node() and state.player_to_act() == "anna"
    state.apply_action(black(3, 4))
    assert state.money("anna") == 30_000 and state.weights(jackpot) == {"anna": 1}
    assert state.phase == "roll" and state.player_to_act() == "ben"


def test_block_it_example_power_play_token_returns() -> None:
    """BLOCK IT! (F1): "Example: Casino 2 has the POWER PLAY tile and contains 1 blue, 1
    yellow, and 2 red dice. You add 2 blank dice. The red player must immediately return the
    POWER PLAY token to the tile." """
    players = [("anna", "red"), ("ben", "blue"), ("carla", "yellow")]
    state = game(["D2", "F1"], n_tiles=2, players=players)
    power, block = casino_of(state, "D2"), casino_of(state, "F1")
    turn(state, power, 2)  # red takes the token
    turn(state, power, 1)  # blue
    turn(state, power, 1)  # yellow
    assert tile_view(state, "D2")["token"] == "anna"
    state.apply_action(TileChoice("D2", "roll"))
    turn(state, block, 1)  # anna activates Block It!
    state.apply_action(TileChoice("F1", "cluster", 2))
    state.apply_action(TileChoice("F1", "casino", power))
    assert tile_view(state, "D2")["token"] is None


# --- No Entry! (E1) -----------------------------------------------------------------------
def test_no_entry_closes_a_casino_and_pays_the_first_space_of_the_track() -> None:
    """NO ENTRY! (E1): "Choose any casino (except the one with this tile) and place the NO
    ENTRY! token on its die illustration. That casino is now closed. No dice may be added
    [...] In addition, advance the counter one space and take the reward indicated on the new
    space." """
    state = game(["E1"])
    casino = casino_of(state, "E1")
    turn(state, casino, 2)  # anna
    assert state.player_to_act() == "anna"
    assert {a.value for a in state.legal_actions()} == set(range(1, 7)) - {casino}
    assert all(a.choice == "casino" for a in state.legal_actions())  # the first one must
    state.apply_action(TileChoice("E1", "casino", 5))
    assert bank_paid(state, "E1") == [("anna", 30_000)]
    assert tile_view(state, "E1")["closed"] == 5 and tile_view(state, "E1")["counter"] == 1
    # ben rolls 5s and 6s: the 5s may not go into the closed casino
    state.apply_action(Roll((Die("blue", 5),) * 4 + (Die("blue", 6),) * 3
                            + (Die("blue", 5, True),)))
    assert [a for a in state.legal_actions() if isinstance(a, Place)] == [Place(6)]
    before = state.fingerprint()
    with pytest.raises(IllegalAction, match="casino 5 is closed"):
        state.apply_action(Place(5))
    assert state.fingerprint() == before


def test_no_entry_a_roll_of_only_the_closed_number_passes_for_free() -> None:
    """"No dice may be added": a roll that shows only the closed casino's number has nothing
    to place, so the turn passes and costs no chip (the reading docs/rules-engine.md gives)."""
    state = game(["E1"])
    casino = casino_of(state, "E1")
    turn(state, casino, 2)
    closed = 4 if casino != 4 else 5
    state.apply_action(TileChoice("E1", "casino", closed))
    chips = dict(state.chips)
    state.apply_action(Roll((Die("blue", closed),) * 7 + (Die("blue", closed, True),)))
    assert state.legal_actions() == [Pass()]
    state.apply_action(Pass())
    assert state.chips == chips and state.player_to_act() == "carla"
    assert state.dice_left("ben") == 8


def test_no_entry_later_activations_may_move_the_token_or_leave_it() -> None:
    """NO ENTRY! (E1): "The next time a player activates this tile, they may move the NO
    ENTRY! token, but they don't have to. However, if they don't, they also won't move the
    counter and won't get a reward." Empty spaces give nothing."""
    state = game(["E1"])
    casino = casino_of(state, "E1")
    other = [c for c in range(1, 7) if c != casino]
    turn(state, casino, 1)  # anna closes one casino: $30,000
    state.apply_action(TileChoice("E1", "casino", other[0]))
    turn(state, casino, 1)  # ben leaves it: no reward, the counter stays
    assert TileChoice("E1", "keep") in state.legal_actions()
    assert TileChoice("E1", "casino", other[0]) not in state.legal_actions()
    state.apply_action(TileChoice("E1", "keep"))
    assert tile_view(state, "E1")["counter"] == 1 and state.money("ben") == 0
    turn(state, casino, 1)  # carla moves it: onto an empty space, nothing
    state.apply_action(TileChoice("E1", "casino", other[1]))
    assert tiles_of(state).closed == {other[1]} and state.money("carla") == 0
    turn(state, casino, 1)  # anna moves it again: $40,000
    state.apply_action(TileChoice("E1", "casino", other[0]))
    assert bank_paid(state, "E1") == [("anna", 30_000), ("anna", 40_000)]
    assert tiles_of(state).closed == {other[0]}


def test_no_entry_also_holds_for_tile_activations() -> None:
    """NO ENTRY! (E1): "No dice may be added or removed. This also applies to any tile
    activations": Handicap may not take a blank die out of the closed casino."""
    state = game(["E1", "F2"], n_tiles=2)
    entry, handicap = casino_of(state, "E1"), casino_of(state, "F2")
    target = next(c for c in range(1, 7) if c not in (entry, handicap))
    turn(state, entry, 1)
    state.apply_action(TileChoice("E1", "casino", target))
    turn(state, handicap, 1)
    takes = {a.value for a in state.legal_actions() if a.choice == "take"}
    assert target not in takes and takes == set(range(1, 7)) - {target}


def test_no_entry_a_closed_casino_still_pays_and_opens_next_round() -> None:
    state = game(["E1"])
    casino = casino_of(state, "E1")
    turn(state, 6, 2)  # anna: two in casino 6
    turn(state, casino, 1)  # ben closes casino 6 with anna's dice in it
    state.apply_action(TileChoice("E1", "casino", 6))
    notes = list(state.casinos[6].notes)
    finish_round(state, value=5 if casino != 5 else 4)
    assert state.round_results[0]["casinos"][5]["payouts"][0] == {"player": "anna",
                                                                  "amount": max(notes)}
    state.apply_action(Deal())
    assert tiles_of(state).closed == set()


# --- Black Box (G1) -----------------------------------------------------------------------
def _black_box_round(state: GameState) -> int:
    """Ben wins the Black Box casino; everything else goes into casino 6."""
    casino = casino_of(state, "G1")
    turn(state, 6, 1)  # anna
    turn(state, casino, 3)  # ben
    finish_round(state)
    return casino


@pytest.mark.parametrize(("split", "chips_in", "pile", "chips", "money"), [
    (4, 1, 1, 2, 60_000), (4, 2, 1, 0, 80_000), (4, 2, 2, 2, 20_000), (3, 1, 2, 0, 60_000),
    (5, 2, 1, 0, 100_000), (5, 2, 2, 2, 0),
])
def test_black_box_the_left_neighbour_splits_the_winner_chooses(
        split: int, chips_in: int, pile: int, chips: int, money: int) -> None:
    """BLACK BOX (G1): "The player to the left of this casino's winner takes all 6 tokens and
    separates them into two piles (3+3, 4+2, or 5+1 tokens), as he wishes. The winner of the
    casino chooses one of the face down piles. They receive the reward shown on the chosen
    tokens: 2 chips or money ($40,000, $60,000, $80,000 or even $100,000)." """
    state = game(["G1"])
    _black_box_round(state)
    assert state.phase == "tile" and state.player_to_act() == "carla"  # ben's left
    assert {a.value for a in state.legal_actions()} == {3, 4, 5}
    state.apply_action(TileChoice("G1", "split", split))
    state.apply_action(TileChoice("G1", "chips", chips_in, "carla"))
    assert state.player_to_act() == "ben"
    state.apply_action(TileChoice("G1", "pile", pile, "ben"))
    assert sum(n["chips"] for n in state.notices if n["kind"] == "chips") == chips
    assert bank_paid(state, "G1") == ([("ben", money)] if money else [])
    assert state.round == 2  # and then the round was paid out


def test_black_box_the_chips_pile_is_secret_until_the_winner_chooses() -> None:
    state = game(["G1"])
    _black_box_round(state)
    state.apply_action(TileChoice("G1", "split", 4))
    shown = state.to_dict()
    assert shown["tiles"]["pending"][0]["secret"] and shown["tiles"]["pending"][0]["player"] == \
        "carla"
    state.apply_action(TileChoice("G1", "chips", 2))
    shown = state.to_dict()
    [entry] = [e for e in shown["log"] if e["kind"] == "tile" and e["choice"] == "chips"]
    assert entry["hidden"] and entry["value"] is None
    assert tile_view(state, "G1")["piles"] == [4, 2]
    assert "chips_in" not in json.dumps(shown)
    assert not shown["tiles"]["pending"][0]["secret"]
    assert [c["label"] for c in shown["tiles"]["pending"][0]["choices"]] == [
        "Pile 1 (4 tokens)", "Pile 2 (2 tokens)"]
    state.apply_action(TileChoice("G1", "pile", 1))
    [revealed] = [n for n in state.notices if n.get("did") == "revealed"]
    assert revealed["chips_in"] == 2 and revealed["money"] == 80_000


def test_black_box_no_winner_no_tokens() -> None:
    state = game(["G1"])
    finish_round(state)
    assert state.round == 2 and not [n for n in state.notices if n.get("tile") == "G1"
                                      and n.get("did") == "split"]


def test_black_box_asks_after_the_round_end_decisions() -> None:
    """"During payout": Prime Time's black dice come "before payout" and may change who
    wins the Black Box casino, so the split is asked once they are placed."""
    state = game(["B1", "G1"], n_tiles=2, seed=1)
    prime, box = casino_of(state, "B1"), casino_of(state, "G1")
    turn(state, prime, 2)  # anna wins Prime Time's casino
    turn(state, box, 1)  # ben has one die in the Black Box casino
    turn(state, 6, 1)  # carla
    turn(state, box, 1)  # anna ties ben there: nobody wins it yet
    finish_round(state)
    assert state.player_to_act() == "anna" and state.expected_roll() == Counter(
        {("black", False): 2})
    state.apply_action(black(box, box))
    state.apply_action(TileChoice("B1", "one", box))  # anna: two in the box casino now
    assert state.legal_actions() == [TileChoice("G1", "split", n) for n in (3, 4, 5)]
    assert state.player_to_act() == "ben"  # anna's left


# --- every choice in words ----------------------------------------------------------------
def test_every_decision_of_every_face_is_asked_in_words() -> None:
    """The pages show `label`s: every choice any face offers has its own words (no raw
    identifiers), and what every tile did is told in words too."""
    seen: set[str] = set()

    def look(state: GameState, action: Any) -> None:
        for p in state.to_dict().get("tiles", {}).get("pending", []):
            assert p["ask"].startswith(p["name"] + ":")
            if p["roll"] is None:
                assert p["choices"]
            for c in p["choices"]:
                assert c["label"] and "_" not in c["label"], c
                seen.add(c["tile"])
        for n in state.notices:
            if n["kind"] in ("tile", "bank", "chips", "pays"):
                assert n["text"].startswith(n["name"] + ": "), n
                assert "None" not in n["text"] and "_" not in n["text"], n

    for seed in range(40):
        play_random_game("royale", 2 + seed % 4, seed, {"tiles": 6}, on_action=look)
    asking = {"A1", "B1", "B2", "D2", "E1", "E2", "F1", "F2", "G1", "G2", "H1", "H2"}
    assert asking <= seen

"""Engine behaviour beyond the worked examples: refusals, dealing, turn order, standings."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from scorekeeper import (
    CHANCE,
    TERMINAL,
    CannotPass,
    CasinoEffect,
    ConfigError,
    Deal,
    Die,
    GameOver,
    GameState,
    IllegalAction,
    ImpossibleRoll,
    InvalidDeal,
    NothingToUndo,
    NotYourTurn,
    Pass,
    Place,
    Roll,
    UnknownNote,
    ValueNotRolled,
    WrongPhase,
    action_from_dict,
)
from scorekeeper.actions import BadAction
from scorekeeper.editions import CLASSIC_NOTES
from scorekeeper.simulate import play_random_game
from scorekeeper.view import Table

from .scripting import group, play_round

THREE = [("anna", "red"), ("benno", "blue"), ("carla", "green")]


def reds(*values: int, colour: str = "red") -> tuple[Die, ...]:
    return tuple(Die(colour, v) for v in values)


def started(**kw) -> GameState:
    g = GameState.new("classic", THREE, seed=kw.pop("seed", 1), **kw)
    g.apply_action(Deal())
    return g


def refused(g: GameState, action, error: type[IllegalAction], match: str) -> None:
    """The action raises the specific error, with a message, and changes nothing."""
    before = g.fingerprint()
    with pytest.raises(error, match=match):
        g.apply_action(action)
    assert g.fingerprint() == before


def test_classic_deck_is_the_54_notes_of_the_rules():
    assert sum(CLASSIC_NOTES.values()) == 54
    g = GameState.new("classic", THREE)
    assert Counter(g.pile) == Counter(CLASSIC_NOTES)
    assert sum(g.pile) == 2_500_000


def test_app_deal_fills_each_casino_to_at_least_50000_with_no_spare_note():
    for seed in range(30):
        g = started(seed=seed)
        for casino in g.casinos.values():
            assert sum(casino.notes) >= 50_000
            assert sum(casino.notes) - max(casino.notes) < 50_000
            assert casino.notes == sorted(casino.notes, reverse=True)


def test_same_seed_same_deal_other_seed_other_deal():
    assert started(seed=4).to_dict() == started(seed=4).to_dict()
    assert started(seed=4).to_dict()["casinos"] != started(seed=5).to_dict()["casinos"]


def test_roll_refusals_name_the_problem_and_leave_state_untouched():
    g = started()
    refused(g, Roll(reds(1, 2, 3)), ImpossibleRoll, "anna rolls 8 red dice, but the roll has 3")
    refused(g, Roll(reds(1, 2, 3, 4, 5, 6, 1, 7)), ImpossibleRoll, "die 8 shows 7")
    refused(g, Roll(reds(*[1] * 8, colour="blue")), NotYourTurn, "anna's turn.*benno's blue")
    refused(g, Roll(reds(*[1] * 8, colour="purple")), ImpossibleRoll, "purple die")
    refused(g, Roll(reds(*[1] * 8), player="carla"), NotYourTurn, "anna's turn, not carla's")
    refused(g, Place(1), WrongPhase, "anna must roll first")
    refused(g, Pass(), WrongPhase, "must roll first")
    refused(g, Deal(), WrongPhase, "already dealt")


def test_place_refusals():
    g = started()
    g.apply_action(Roll(reds(1, 1, 2, 2, 2, 5, 5, 5)))
    refused(g, Place(3), ValueNotRolled, r"no die shows 3 in this roll \(rolled: 1, 2, 5\)")
    refused(g, Place(0), ValueNotRolled, "no die shows 0")
    refused(g, Place(2, player="benno"), NotYourTurn, "anna's turn")
    refused(g, Pass(), CannotPass, "not part of this edition")
    refused(g, Roll(reds(*[1] * 8)), WrongPhase, "must first place")
    g.apply_action(Place(2, player="anna"))
    assert g.dice_left("anna") == 5 and g.current_player() == "benno"


def test_an_unread_die_stays_in_the_hand_and_offers_no_value():
    g = started()
    unread = Die("red", None)
    g.apply_action(Roll(reds(1, 1, 2, 2, 2, 5, 5) + (unread,)))
    assert {a.value for a in g.legal_actions() if isinstance(a, Place)} == {1, 2, 5}
    refused(g, Place(3), ValueNotRolled, r"\(rolled: 1, 2, 5\)")
    g.apply_action(Place(5))
    assert g.dice_left("anna") == 6  # the two fives went; the unread die stayed with her
    assert g.casinos[5].dice == Counter({("red", False): 2})
    # It is kept and replayed as unread, not as a guess.
    payload = g.history[-2].to_dict()
    assert payload["dice"][-1] == {"colour": "red", "value": None, "big": False}
    assert action_from_dict(payload).dice[-1] == unread


def test_a_roll_with_no_die_read_is_refused_one_partly_read_is_kept():
    g = started()
    refused(g, Roll((Die("red", None),) * 8), ImpossibleRoll,
            "no die of this roll was read: enter the values of anna's 8 red dice")
    # One die read is enough to place it: the unread ones stay in her hand, as before.
    g.apply_action(Roll((Die("red", 4),) + (Die("red", None),) * 7))
    assert g.legal_actions() == [Place(4)]
    # Refused even where a chip would let the player sit the turn out: the roll on record
    # would hold no face at all.
    r = GameState.new("royale", THREE, seed=1)
    r.apply_action(Deal())
    unread = (Die("red", None),) * 7 + (Die("red", None, True),)
    refused(r, Roll(unread), ImpossibleRoll, r"no die of this roll was read.*1 red Biggy")


def test_royale_two_player_neutral_roll_is_eight_plain_dice_or_a_colour_set():
    g = GameState.new("royale", [("ben", "blue"), ("carla", "green")], seed=3)
    g.apply_action(Deal())
    assert g.phase == "neutral"
    two_biggies = (Die("white", 1),) * 6 + (Die("white", 2, True),) * 2
    refused(g, Roll(two_biggies), ImpossibleRoll,
            "rolls 8 white dice or 7 white dice, 1 white Biggy, but the roll has 6 white")
    refused(g, Roll((Die("white", 1),) * 7), ImpossibleRoll, "8 white dice or 7 white dice")
    refused(g, Roll((Die("white", 1),) * 6 + (Die("white", None, True),) + (Die("white", 2),)),
            ImpossibleRoll, "die 7 was not read")
    # Only the 2-player game rolls neutral dice, and only at round start.
    three = GameState.new("royale", THREE, seed=3)
    three.apply_action(Deal())
    refused(three, Roll((Die("white", 1),) * 7 + (Die("white", 2, True),)), ImpossibleRoll,
            "white die")


def test_a_neutral_die_must_be_read_since_its_face_is_its_casino():
    g = started(options={"neutral_dice": True})
    refused(g, Roll((Die("white", 3), Die("white", None))), ImpossibleRoll,
            "die 2 was not read")


def test_hand_deal_checks_values_availability_and_the_50000_rule():
    g = GameState.new("classic", THREE)
    ok = ((60_000,), (50_000,), (90_000,), (20_000, 30_000), (40_000, 10_000), (80_000,))
    refused(g, Deal(ok[:5]), InvalidDeal, "all 6 casinos")
    refused(g, Deal(((15_000, 40_000),) + ok[1:]), UnknownNote, "no note of 15,000")
    refused(g, Deal(((20_000, 20_000),) + ok[1:]), InvalidDeal, r"casino 1 holds \$40,000")
    refused(g, Deal(((40_000, 30_000, 20_000),) + ok[1:]), InvalidDeal, "one note too many")
    six_nineties = ((90_000,),) * 6
    refused(g, Deal(six_nineties), UnknownNote, "only 5 of the 5")
    g.apply_action(Deal(ok))
    assert g.casinos[4].notes == [30_000, 20_000]
    assert len(g.pile) == 54 - 8
    assert Counter(g.pile)[90_000] == 4


def test_hand_deal_only_from_what_is_left_in_later_rounds():
    g = GameState.new("classic", [("anna", "red"), ("benno", "blue")])
    fives = ((90_000,), (90_000,), (90_000,), (90_000,), (90_000,), (80_000,))
    play_round(g, {"anna": [group(1, 8)], "benno": [group(2, 8)]}, deal=fives)
    assert g.won["anna"] == [90_000] and g.won["benno"] == [90_000]
    assert Counter(g.pile + g.under)[90_000] == 3  # three went back under the pile
    refused(g, Deal(((90_000,),) * 4 + ((80_000,),) * 2), UnknownNote, "only 3 of the 5")


def test_pile_runs_out_the_notes_under_it_are_reshuffled_and_it_is_recorded():
    g = GameState.new("classic", [("anna", "red"), ("benno", "blue")], seed=8)
    g.pile = g.pile[:3]
    g.under = [10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000] * 2
    g.apply_action(Deal())
    assert any(n["kind"] == "reshuffled" for n in g.notices)
    assert all(sum(c.notes) >= 50_000 for c in g.casinos.values())


def test_whole_pile_exhausted_deals_what_is_left_and_records_a_short_casino():
    g = GameState.new("classic", [("anna", "red"), ("benno", "blue")], seed=8)
    g.pile = [90_000, 90_000, 90_000, 90_000, 10_000]
    g.under = []
    g.apply_action(Deal())
    totals = [sum(c.notes) for c in g.casinos.values()]
    assert totals == [90_000, 90_000, 90_000, 90_000, 10_000, 0]
    assert [n["casino"] for n in g.notices if n["kind"] == "short"] == [5, 6]


def test_custom_deck_runs_short_in_late_rounds_and_keeps_going():
    state = play_random_game("custom", 6, seed=3, options={"suits": 2})
    assert state.is_over()
    kinds = {n["kind"] for n in state.notices}
    assert "short" in kinds or "reshuffled" in kinds


def test_turn_order_skips_players_without_dice_and_one_player_may_roll_in_a_row():
    g = started()
    g.apply_action(Roll(reds(*[3] * 8)))
    g.apply_action(Place(3))
    g.apply_action(Roll(reds(*[1] * 7, 2, colour="blue")))
    g.apply_action(Place(1))
    g.apply_action(Roll(reds(*[6] * 8, colour="green")))
    g.apply_action(Place(6))
    assert g.current_player() == "benno"  # anna and carla are out
    g.apply_action(Roll(reds(2, colour="blue")))
    g.apply_action(Place(2))
    assert g.round == 2 and g.players[g.start_player].name == "benno"


def test_game_over_refuses_everything_and_undo_reopens_it():
    g = play_random_game("classic", 3, seed=2)
    refused(g, Deal(), GameOver, "game is over")
    last = g.undo()
    assert not g.is_over()
    g.apply_action(last)
    assert g.is_over()


def test_undo_restores_exactly_and_nothing_to_undo_at_start():
    g = GameState.new("royale", THREE, seed=6)
    with pytest.raises(NothingToUndo):
        g.undo()
    rng = random.Random(1)
    prints = [g.fingerprint()]
    for _ in range(40):
        action = Deal() if g.phase == "deal" else (
            g.random_roll(rng) if g.is_chance_node() else rng.choice(g.legal_actions()))
        g.apply_action(action)
        prints.append(g.fingerprint())
    for expected in reversed(prints[:-1]):
        g.undo()
        assert g.fingerprint() == expected


def test_standings_show_ties_and_what_each_would_be_paid_now():
    g = GameState.new("classic", THREE, seed=1)
    g.apply_action(Deal(((60_000, 30_000),) + ((50_000,),) * 5))
    g.apply_action(Roll(reds(1, 1, 2, 2, 2, 2, 2, 2)))
    g.apply_action(Place(1))
    g.apply_action(Roll(reds(1, 1, 3, 3, 3, 3, 3, 3, colour="blue")))
    g.apply_action(Place(1))
    g.apply_action(Roll(reds(1, 4, 4, 4, 4, 4, 4, 4, colour="green")))
    g.apply_action(Place(1))
    view = g.to_dict()
    c1 = view["casinos"][0]
    assert c1["dice"] == {"anna": 2, "benno": 2, "carla": 1}
    assert c1["tied"] == ["anna", "benno"]
    assert c1["projected"] == [{"player": "carla", "amount": 60_000}]
    anna = view["players"][0]
    assert anna["dice_left"] == 6 and anna["money"] == 0 and anna["notes"] == []
    assert view["to_move"] == "anna" and view["phase"] == "roll"
    assert view["expected_roll"] == [{"colour": "red", "big": False, "count": 6}]


def test_config_errors():
    with pytest.raises(ConfigError, match="2–5 players, not 6"):
        GameState.new("classic", [(f"p{i}", f"c{i}") for i in range(6)])
    with pytest.raises(ConfigError, match="neutral-dice variant is for 2–4"):
        GameState.new("classic", [(f"p{i}", f"c{i}") for i in range(5)], {"neutral_dice": True})
    with pytest.raises(ConfigError, match="two players have red dice"):
        GameState.new("classic", [("a", "red"), ("b", "Red")])
    with pytest.raises(ConfigError, match="neutral dice's colour"):
        GameState.new("classic", [("a", "white"), ("b", "red")], {"neutral_dice": True})
    with pytest.raises(ConfigError, match="unknown edition"):
        GameState.new("poker", THREE)
    with pytest.raises(ConfigError, match="no option 'biggy'"):
        GameState.new("royale", THREE, {"biggy": 2})
    with pytest.raises(ConfigError, match="tiles must be a number of tiles from 0 to 6"):
        GameState.new("royale", THREE, {"tiles": 7})
    with pytest.raises(ConfigError, match="black extra dice"):
        GameState.new("royale", [("a", "black"), ("b", "red")], {"tiles": 3})
    with pytest.raises(ConfigError, match="skip_rule"):
        GameState.new("custom", THREE, {"skip_rule": "C"})
    with pytest.raises(ConfigError, match="start_player"):
        GameState.new("custom", THREE, start_player=3)
    # Custom: any number of colours.
    assert GameState.new("custom", [(f"p{i}", f"c{i}") for i in range(8)]).phase == "deal"


def test_royale_deck_is_a_parameter():
    g = GameState.new("royale", THREE, {"deck": {"100000": 12}})
    g.apply_action(Deal())
    assert all(c.notes == [100_000, 100_000] for c in g.casinos.values())
    assert GameState.new("royale", THREE).pile.__len__() == 90


def test_royale_leftover_chips_worth_10000_and_count_for_tiebreak():
    g = GameState.new("royale", [("ben", "blue"), ("carla", "green"), ("anna", "red")])
    g.won = {"ben": [50_000], "carla": [20_000, 20_000], "anna": [30_000, 20_000]}
    g.extra.chips = {"ben": 0, "carla": 1, "anna": 0}
    results = g.results()
    assert [r["player"] for r in results["ranking"]] == ["carla", "anna", "ben"]
    assert results["winners"] == ["carla"]
    assert "carla wins on the tie-break: most money cards and chips (3 to 2)" in (
        results["explanation"])


def test_shared_win_when_money_and_banknotes_tie():
    g = GameState.new("classic", THREE)
    g.won = {"anna": [50_000, 10_000], "benno": [30_000, 30_000], "carla": [60_000]}
    results = g.results()
    assert results["winners"] == ["anna", "benno"]
    assert [r["place"] for r in results["ranking"]] == [1, 1, 3]
    assert "share the win" in results["explanation"]


class GrayBlockers(CasinoEffect):
    """A test effect: placing at its casino adds two gray dice (an imaginary player)."""

    def on_place(self, state, casino, owner, dice):
        if owner != "gray":
            state.add_dice(casino, "gray", 2)


def test_effects_hook_adds_an_imaginary_player_whose_winnings_go_under_the_pile():
    g = GameState.new("royale", [("ben", "blue"), ("carla", "green"), ("anna", "red")], seed=1)
    g.effects = {2: [GrayBlockers()]}
    g.apply_action(Deal())
    g.apply_action(Roll(reds(2, 1, 1, 1, 1, 1, 1, colour="blue") + (Die("blue", 6, True),)))
    g.apply_action(Place(2))
    assert g.weights(2) == {"ben": 1, "gray": 2}
    assert g.casino_view(2)["ranking"] == ["gray", "ben"]


def test_actions_round_trip_and_bad_payloads_are_named():
    for action in (Deal(), Deal(((60_000,),) * 6), Roll(reds(1, 2), player="anna"), Place(3),
                   Pass(player="x")):
        assert action_from_dict(action.to_dict()) == action
    for payload, match in ((None, "JSON object"), ({"type": "jump"}, "unknown action type"),
                           ({"type": "place", "value": "3"}, "whole number"),
                           ({"type": "roll", "dice": [{"value": 2}]}, "die 1: 'colour'"),
                           ({"type": "roll", "dice": "1,2"}, "list of dice"),
                           ({"type": "deal", "casinos": [[1.5]]}, "not a number")):
        with pytest.raises(BadAction, match=match):
            action_from_dict(payload)


def test_legal_actions_offer_pass_only_with_means():
    g = GameState.new("royale", THREE, seed=1)
    g.apply_action(Deal())
    g.extra.chips["anna"] = 0
    g.apply_action(g.random_roll(random.Random(2)))
    assert Pass() not in g.legal_actions()
    refused(g, Pass(), CannotPass, "no chip")


def test_history_keeps_its_own_copy_of_what_the_caller_passed():
    g = started()
    dice = [Die("red", 1)] * 8
    g.apply_action(Roll(dice))  # a list, which the caller then reuses
    dice.clear()
    g.apply_action(Place(1))
    g.undo()
    assert g.phase == "choose" and len(g.roll) == 8


@pytest.mark.parametrize("action", [
    Place(True), Place(1.0), Roll(reds(*[1] * 7) + (Die("red", 1, 1),)),
    Roll((Die("red", 1.0),) + reds(*[1] * 7)), Roll("ab"), Roll(5), Roll(reds(*[1] * 8), player=3),
    "place 1", None,
])
def test_loosely_typed_actions_are_refused_not_coerced(action):
    g = started()
    if isinstance(action, Place):
        g.apply_action(Roll(reds(*[1] * 8)))
    refused(g, action, IllegalAction, ".")


@pytest.mark.parametrize("casinos", [[["x"]] * 6, [[None]] * 6, 5, [[90_000.0]] * 6,
                                     [[True]] * 6])
def test_loosely_typed_hand_deals_are_refused(casinos):
    refused(GameState.new("classic", THREE), Deal(casinos), IllegalAction, "deal")


@pytest.mark.parametrize(("players", "kw"), [
    ([(1, "red"), ("b", "blue")], {}), ([("a",), ("b", "blue")], {}),
    ([{"name": "a"}, ("b", "blue")], {}), (THREE, {"seed": "abc"}), (THREE, {"seed": 1.5}),
    (THREE, {"start_player": 1.0}), (THREE, {"options": [("x", 1)]}), (5, {}),
])
def test_bad_setups_raise_config_error(players, kw):
    with pytest.raises(ConfigError):
        GameState.new("classic", players, **kw)


@pytest.mark.parametrize("deck", [{10000.7: 12}, {"10000": 6, 10000: 6}, {"ten": 12},
                                  {"10000": 11}, {"10000": 1.5}, {"10000": 10**12}])
def test_bad_royale_decks_are_refused(deck):
    with pytest.raises(ConfigError, match="deck"):
        GameState.new("royale", THREE, {"deck": deck})


def test_views_are_copies_not_live_state():
    g = GameState.new("custom", THREE, {"skip_rule": "A"})
    view = g.to_dict()
    view["options"]["skip_rule"] = "none"
    assert g.edition.options["skip_rule"] == "A"


def test_royale_two_players_neutral_takes_casino_6_high_card_other_winner_starts():
    g = GameState.new("royale", [("ben", "blue"), ("carla", "green")], seed=3)
    play_round(g, {
        "ben": [group(1, 7, big=1)],
        "carla": [group(6, 1), group(2, 6, big=1)],
    }, neutral_start=[6, 6, 6, 5, 5, 3, 3, 4])
    assert [p["player"] for p in g.round_results[0]["casinos"][5]["payouts"]] == [
        "white", "carla"]
    assert g.players[g.start_player].name == "carla"


def test_current_player_says_chance_for_the_deal_and_terminal_at_the_end():
    g = GameState.new("classic", THREE, seed=3)
    assert g.current_player() == CHANCE and g.player_to_act() is None
    g.apply_action(Deal())
    assert g.current_player() == g.player_to_act() == "anna"
    done = play_random_game("royale", 3, seed=3)
    assert done.current_player() == TERMINAL and done.player_to_act() is None
    assert CHANCE != TERMINAL and all(isinstance(c, int) for c in (CHANCE, TERMINAL))


def test_each_edition_keeps_its_own_extra_and_the_state_shows_copies():
    royale = GameState.new("royale", THREE)
    assert royale.chips == {"anna": 2, "benno": 2, "carla": 2}
    royale.chips["anna"] = 0  # a copy: the chips are the edition's
    assert royale.extra.chips["anna"] == 2
    custom = GameState.new("custom", THREE, {"skip_rule": "B"})
    assert custom.skip_cards == {"anna": 4, "benno": 4, "carla": 4} and custom.chips["anna"] == 0
    assert GameState.new("custom", THREE, {"skip_rule": "A"}).money("anna") == 2
    assert GameState.new("classic", THREE).skip_cards == {"anna": 0, "benno": 0, "carla": 0}
    assert isinstance(royale, Table)  # what editions and effects are handed

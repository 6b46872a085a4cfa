"""Every worked example in ../shared/rules, played through the engine.

Test names say which text and which example. Where an example only describes the end
position (the printed figure is missing), the round is scripted to reach exactly that position
and the example's stated outcome is checked.
"""

from __future__ import annotations

from collections import Counter

import pytest

from scorekeeper import Deal, Die, GameState, Place, Roll, pay_casino

from .scripting import group, play_round

FOUR = [("anna", "red"), ("benno", "blue"), ("carla", "green"), ("denny", "yellow")]


def paid(state: GameState, rnd: int, casino: int) -> list[tuple[str, int]]:
    result = state.round_results[rnd - 1]["casinos"][casino - 1]
    return [(p["player"], p["amount"]) for p in result["payouts"]]


def cancelled(state: GameState, rnd: int, casino: int) -> list[str]:
    return state.round_results[rnd - 1]["casinos"][casino - 1]["cancelled"]


# --- classic-2012.md ---------------------------------------------------------------------
def test_classic_2012_gameplay_example_benno_four_threes_and_a_five():
    g = GameState.new("classic", [("anna", "red"), ("benno", "blue")], seed=1)
    g.apply_action(Deal())
    g.apply_action(Roll(tuple(Die("red", 1) for _ in range(8))))
    g.apply_action(Place(1))
    g.apply_action(Roll(tuple(Die("blue", v) for v in (1, 1, 1, 3, 3, 3, 3, 5))))
    g.apply_action(Place(1))
    # Anna is out of dice, so Benno rolls again: "four 3s and a 5".
    assert g.current_player() == "benno"
    g.apply_action(Roll(tuple(Die("blue", v) for v in (3, 3, 3, 3, 5))))
    assert g.legal_actions() == [Place(3), Place(5)]  # not one, two or three of the 3s
    g.apply_action(Place(3))
    assert g.casinos[3].dice[("blue", False)] == 4
    assert g.dice_left("benno") == 1
    # "On his next turn, Benno will simply roll and then add his last die."
    g.apply_action(Roll((Die("blue", 5),)))
    assert g.legal_actions() == [Place(5)]
    g.apply_action(Place(5))
    assert g.round == 2 and g.phase == "deal"


def _classic_round_one() -> GameState:
    """The payout examples of classic-2012.md, each in its own casino of one round."""
    g = GameState.new("classic", FOUR, seed=3)
    deal = (
        (80_000, 30_000, 10_000),  # "Caesars Palace": tie example 1 / payout example 1
        (60_000,),                 # "Golden Nugget": tie example 2
        (40_000, 40_000),          # payout example 2
        (70_000, 20_000),          # payout example 3
        (50_000,),
        (90_000,),
    )
    play_round(g, {
        "anna": [group(1, 5), group(2, 2), group(6, 1)],
        "benno": [group(1, 3), group(2, 1), group(3, 1), group(4, 2), group(5, 1)],
        "carla": [group(1, 3), group(2, 2), group(4, 3)],
        "denny": [group(1, 1), group(2, 1), group(4, 1), group(5, 5)],
    }, deal=deal)
    return g


def test_classic_2012_tie_example_1_and_payout_example_1():
    g = _classic_round_one()
    # "Benno and Carla both take their 3 dice back." / "Anna receives the $80,000 note and
    # Denny the $30,000 note. The $10,000 note is returned to the bottom of the pile."
    assert cancelled(g, 1, 1) == ["benno", "carla"]
    assert paid(g, 1, 1) == [("anna", 80_000), ("denny", 30_000)]
    assert 10_000 in g.under


def test_classic_2012_tie_example_2_everyone_takes_dice_back():
    g = _classic_round_one()
    assert cancelled(g, 1, 2) == ["anna", "benno", "carla", "denny"]
    assert paid(g, 1, 2) == []
    assert 60_000 in g.under


def test_classic_2012_payout_example_2_one_forty_back_under_the_pile():
    g = _classic_round_one()
    assert paid(g, 1, 3) == [("benno", 40_000)]
    assert Counter(g.under)[40_000] == 1


def test_classic_2012_payout_example_3_denny_gets_nothing():
    g = _classic_round_one()
    assert paid(g, 1, 4) == [("carla", 70_000), ("benno", 20_000)]
    assert g.money("anna") == 80_000 + 90_000
    assert g.money("denny") == 30_000 + 50_000
    # "The player to the left of the previous start player receives the start player card."
    assert g.players[g.start_player].name == "benno"


def test_classic_2012_variant_example_carla_may_place_three_ones_her_five_or_the_white_six():
    g = GameState.new("classic", FOUR, {"neutral_dice": True}, seed=5)
    g.apply_action(Deal())
    for colour in ("red", "blue"):
        g.apply_action(Roll(tuple(Die(colour, 2) for _ in range(8)) + (Die("white", 3),) * 2))
        g.apply_action(Place(2))
    g.apply_action(Roll(tuple(Die("green", v) for v in (4, 4, 4, 4, 4, 1, 1, 5))
                        + (Die("white", 2), Die("white", 2))))
    g.apply_action(Place(4))  # Carla keeps 3 own dice and her 2 white ones
    g.apply_action(Roll((Die("yellow", 6),) * 8 + (Die("white", 6),) * 2))
    g.apply_action(Place(6))
    for _ in ("red", "blue"):  # both only hold white dice now: they must roll them
        g.apply_action(Roll((Die("white", 3),) * 2))
        g.apply_action(Place(3))
    assert g.current_player() == "carla"
    g.apply_action(Roll((Die("green", 1), Die("green", 1), Die("white", 1), Die("green", 5),
                         Die("white", 6))))
    assert g.legal_actions() == [Place(1), Place(5), Place(6)]
    g.apply_action(Place(1))
    assert g.casinos[1].dice == Counter({("green", False): 2, ("white", False): 1})
    assert g.hands[2] == Counter({("green", False): 1, ("white", False): 1})


def test_classic_2012_variant_payout_example_1_white_takes_the_80000_under_the_pile():
    g = GameState.new("classic", [("anna", "red"), ("benno", "blue")], {"neutral_dice": True})
    deal = ((80_000, 30_000),) + ((50_000,),) * 5
    play_round(g, {
        "anna": [group(1, neutral=3), group(2, 8), group(3, neutral=1)],
        "benno": [group(1, 2), group(4, 6), group(5, neutral=4)],
    }, deal=deal)
    assert paid(g, 1, 1) == [("white", 80_000), ("benno", 30_000)]
    assert 80_000 in g.under and g.money("benno") == 30_000 + 50_000


def test_classic_2012_variant_payout_example_2_white_wins_the_40000_anna_nothing():
    ranking = pay_casino(3, [40_000, 70_000], {"carla": 4, "white": 2, "anna": 1})
    assert ranking.payouts == (("carla", 70_000), ("white", 40_000))
    g = GameState.new("classic", FOUR, {"neutral_dice": True}, seed=2)
    deal = ((50_000,), (50_000,), (70_000, 40_000), (50_000,), (60_000,), (60_000,))
    play_round(g, {
        "anna": [group(3, 1), group(5, 7, neutral=2)],
        "benno": [group(6, 8, neutral=2)],
        "carla": [group(3, 4), group(4, 4, neutral=2)],
        "denny": [group(3, neutral=2), group(1, 8)],
    }, deal=deal)
    assert paid(g, 1, 3) == [("carla", 70_000), ("white", 40_000)]
    assert g.round_results[0]["casinos"][2]["unclaimed"] == []
    assert 40_000 in g.under


def test_classic_2012_variant_three_players_start_player_rolls_the_two_spare_white_dice():
    g = GameState.new("classic", FOUR[:3], {"neutral_dice": True}, seed=4, start_player=1)
    g.apply_action(Deal())
    assert g.phase == "neutral" and g.current_player() == "benno"
    assert g.expected_roll() == Counter({("white", False): 2})
    g.apply_action(Roll((Die("white", 2), Die("white", 6))))
    assert g.casinos[2].dice[("white", False)] == 1
    assert g.casinos[6].dice[("white", False)] == 1
    assert g.current_player() == "benno"  # then the start player takes the first turn
    assert g.expected_roll() == Counter({("blue", False): 8, ("white", False): 2})


def test_classic_2012_variant_two_players_hold_four_white_dice_each():
    g = GameState.new("classic", FOUR[:2], {"neutral_dice": True})
    g.apply_action(Deal())
    assert g.phase == "roll"
    assert g.expected_roll() == Counter({("red", False): 8, ("white", False): 4})


# --- custom-edition.md -------------------------------------------------------------------
def test_custom_edition_tiebreaker_two_red_two_yellow_removed_no_payout():
    g = GameState.new("custom", [("rosa", "red"), ("yann", "yellow"), ("bo", "blue")], seed=1)
    deal = ((10, 9), (8, 7), (6, 5), (10, 4), (9, 3), (8, 3))
    play_round(g, {
        "rosa": [group(1, 2), group(2, 6)],
        "yann": [group(1, 2), group(3, 6)],
        "bo": [group(4, 8)],
    }, deal=deal)
    assert cancelled(g, 1, 1) == ["rosa", "yann"]
    # "Casino Tray has no dice ... all the money cards are discarded."
    assert paid(g, 1, 1) == [] and {10, 9} <= set(g.under)
    # Step 3: no second place: the lower card is discarded.
    assert paid(g, 1, 4) == [("bo", 10)] and 4 in g.under
    assert paid(g, 1, 5) == [] and paid(g, 1, 6) == []
    # Nobody won at casino 6: the same start player starts the next round.
    assert g.players[g.start_player].name == "rosa"


def test_custom_edition_casino_6_winner_starts_next_round_and_cards_sorted():
    g = GameState.new("custom", [("rosa", "red"), ("yann", "yellow"), ("bo", "blue")], seed=1)
    play_round(g, {
        "rosa": [group(6, 1), group(1, 7)],
        "yann": [group(6, 3), group(2, 5)],
        "bo": [group(6, 2), group(3, 6)],
    }, deal=((3, 4), (5, 6), (7, 8), (9, 10), (3, 4), (10, 5)))
    assert paid(g, 1, 6) == [("yann", 10), ("bo", 5)]  # higher card to 1st, lower to 2nd
    assert g.players[g.start_player].name == "yann"


def test_custom_edition_skip_rule_a_costs_one_dollar_and_respects_the_limit():
    g = GameState.new("custom", [("rosa", "red"), ("yann", "yellow")],
                      {"skip_rule": "A", "skip_limit": 1})
    assert g.edition.rounds == 3  # "it is recommended to only play 3 rounds"
    assert g.money("rosa") == 2  # "$2 in chips at the start of the game"
    g.apply_action(Deal())
    g.apply_action(Roll(tuple(Die("red", 1) for _ in range(8))))
    from scorekeeper import CannotPass, Pass

    g.apply_action(Pass())
    assert g.money("rosa") == 1 and g.dice_left("rosa") == 8
    g.apply_action(Roll(tuple(Die("yellow", 2) for _ in range(8))))
    g.apply_action(Place(2))
    g.apply_action(Roll(tuple(Die("red", 1) for _ in range(8))))
    assert Pass() not in g.legal_actions()
    with pytest.raises(CannotPass, match="limit"):
        g.apply_action(Pass())


def test_custom_edition_skip_rule_b_unused_cards_worth_a_dollar_but_not_for_tiebreak():
    from scorekeeper import Pass

    g = GameState.new("custom", [("rosa", "red"), ("yann", "yellow")],
                      {"skip_rule": "B", "rounds": 1})
    g.apply_action(Deal(((8, 3), (8, 3), (5, 4), (5, 4), (10, 9), (10, 9))))
    g.apply_action(Roll(tuple(Die("red", 1) for _ in range(8))))
    g.apply_action(Pass())  # rosa discards one of her 4 skip cards
    assert g.skip_cards["rosa"] == 3
    g.apply_action(Roll(tuple(Die("yellow", 2) for _ in range(8))))
    g.apply_action(Place(2))  # yann: 8 and 3 ... only 8 (alone)
    g.apply_action(Roll(tuple(Die("red", 1) for _ in range(8))))
    g.apply_action(Place(1))  # rosa: 8
    assert g.is_over()
    results = g.results()
    # Both won one $8 card; rosa's 3 unused skip cards and yann's 4 are worth $1 each.
    assert {r["player"]: r["score"] for r in results["ranking"]} == {"rosa": 11, "yann": 12}
    assert results["winners"] == ["yann"]
    assert {r["player"]: r["tiebreak"] for r in results["ranking"]} == {"rosa": 1, "yann": 1}


# --- royale-2019.txt ---------------------------------------------------------------------
ROYALE_FOUR = [("anna", "red"), ("ben", "blue"), ("carla", "green"), ("denny", "yellow")]


def _royale_round_one() -> GameState:
    g = GameState.new("royale", ROYALE_FOUR, seed=9)
    deal = (
        (10_000, 10_000),
        (20_000, 10_000),
        (30_000, 20_000),  # payout example 2: Anna's Biggy ties Carla's two dice
        (40_000, 40_000),  # "Ben wins a $40,000 card. The other $40,000 card is put back"
        (70_000, 30_000),  # "Carla wins the $70,000 card and Ben wins the $30,000 card"
        (80_000, 50_000),  # payout example 1, then "Anna wins $80,000 and Denny $50,000"
    )
    play_round(g, {
        "anna": [group(6, 5), group(3, big=1), group(1, 2)],
        "ben": [group(6, 3), group(5, 2), group(4, 1), group(3, 1), group(2, big=1)],
        "carla": [group(6, 1, big=1), group(5, 3), group(3, 2), group(2, 1)],
        "denny": [group(6, 1), group(5, 1), group(3, 1), group(1, 3, big=1), group(2, 1)],
    }, deal=deal)
    return g


def test_royale_2019_payout_example_1_biggy_counts_two_ben_and_carla_remove():
    g = _royale_round_one()
    assert cancelled(g, 1, 6) == ["ben", "carla"]
    assert paid(g, 1, 6) == [("anna", 80_000), ("denny", 50_000)]


def test_royale_2019_payout_example_2_all_four_remove_their_dice():
    g = _royale_round_one()
    assert cancelled(g, 1, 3) == ["anna", "ben", "carla", "denny"]
    assert paid(g, 1, 3) == []


def test_royale_2019_payout_cards_ben_forty_and_carla_seventy():
    g = _royale_round_one()
    assert paid(g, 1, 4) == [("ben", 40_000)]
    assert paid(g, 1, 5) == [("carla", 70_000), ("ben", 30_000)]
    assert paid(g, 1, 2) == [("ben", 20_000)]  # Biggy (2) vs Carla 1 and Denny 1: tie
    # "The player who won the higher value money card in the 6 casino begins the next round."
    assert g.players[g.start_player].name == "anna"
    assert g.chips["anna"] == 4  # 2 more chips each round, leftovers kept


def test_royale_2019_gameplay_example_ben_four_threes_must_place_all_four():
    g = GameState.new("royale", ROYALE_FOUR[:3], seed=2, start_player=1)
    g.apply_action(Deal())
    g.apply_action(Roll(tuple(Die("blue", 3) for _ in range(4)) + (Die("blue", 5, True),)
                        + tuple(Die("blue", 6) for _ in range(3))))
    assert g.legal_actions()[:3] == [Place(3), Place(5), Place(6)]
    g.apply_action(Place(3))
    assert g.weights(3) == {"ben": 4}


def test_royale_2019_chip_sits_out_the_turn():
    from scorekeeper import Pass

    g = GameState.new("royale", ROYALE_FOUR[:3], seed=2)
    g.apply_action(Deal())
    g.apply_action(g.random_roll(__import__("random").Random(1)))
    g.apply_action(Pass())
    assert g.chips["anna"] == 1 and g.dice_left("anna") == 8
    assert g.current_player() == "ben"


def test_royale_2019_two_player_variant_eight_neutral_dice_and_examples():
    g = GameState.new("royale", [("ben", "blue"), ("carla", "green")], seed=3)
    # Variant example 1: "The $80,000 card is won by the neutral player ... Ben wins the
    # $30,000 card." Example 2: "Carla wins the $70,000 card, the neutral player wins the
    # $40,000 card; Ben gets nothing."
    deal = ((10_000, 10_000), (20_000, 10_000), (20_000, 20_000), (30_000, 20_000),
            (70_000, 40_000), (80_000, 30_000))
    play_round(g, {
        "ben": [group(6, 2), group(5, 1), group(1, 4, big=1)],
        "carla": [group(5, 4), group(2, 3, big=1)],
    }, deal=deal, neutral_start=[6, 6, 6, 5, 5, 3, 3, 4])
    assert paid(g, 1, 6) == [("white", 80_000), ("ben", 30_000)]
    assert paid(g, 1, 5) == [("carla", 70_000), ("white", 40_000)]
    assert 80_000 in g.under and 40_000 in g.under


def test_royale_2019_two_player_variant_neutral_set_with_its_biggy_counts_two():
    # "Roll all eight dice of a non-player color": a Royale colour is "7 + 1 dice", and
    # "The bigger die (also called "Biggy") counts as two smaller dice!"
    g = GameState.new("royale", [("ben", "blue"), ("carla", "green")], seed=3)
    g.apply_action(Deal(((10_000, 10_000), (20_000, 10_000), (20_000, 20_000),
                         (30_000, 20_000), (70_000, 40_000), (80_000, 30_000))))
    neutral = tuple(Die("white", v) for v in (6, 6, 5, 5, 3, 3, 4)) + (Die("white", 6, True),)
    g.apply_action(Roll(neutral))
    six = g.casino_view(6)
    assert (six["dice"], six["big"], six["weights"]) == ({"white": 3}, {"white": 1}, {"white": 4})
    assert g.phase == "roll" and g.current_player() == "ben"
    assert g.expected_roll() == Counter({("blue", False): 7, ("blue", True): 1})

    def turn(colour: str, faces: tuple[int, ...], biggy: int | None, value: int) -> None:
        big = () if biggy is None else (Die(colour, biggy, True),)
        g.apply_action(Roll(tuple(Die(colour, v) for v in faces) + big))
        g.apply_action(Place(value))

    turn("blue", (6, 6, 6, 1, 1, 1, 1), 2, 6)    # Ben's 3 dice against the neutral 2 + Biggy
    turn("green", (5, 5, 5, 5, 2, 2, 2), 2, 5)   # Carla's 4 against the neutral 2
    turn("blue", (1, 1, 1, 1), 1, 1)
    turn("green", (2, 2, 2), 2, 2)
    assert g.round == 2
    # Were the Biggy one die, Ben's 3 would tie the neutral 3 and casino 6 would pay no one.
    assert paid(g, 1, 6) == [("white", 80_000), ("ben", 30_000)]
    assert paid(g, 1, 5) == [("carla", 70_000), ("white", 40_000)]
    assert paid(g, 1, 4) == [("white", 30_000)]
    assert Counter(g.under) >= Counter([80_000, 40_000, 30_000, 20_000, 20_000])
    assert g.money("ben") == 30_000 + 10_000 and g.money("carla") == 70_000 + 20_000
    assert g.players[g.start_player].name == "ben"  # the neutral player cannot start
    assert g.clone().fingerprint() == g.fingerprint()  # the roll replays as it was


def test_royale_2019_pairs_sorted_by_total_equal_totals_higher_card_higher_casino():
    g = GameState.new("royale", ROYALE_FOUR[:3], seed=11)
    g.apply_action(Deal())
    keys = [(sum(c.notes), max(c.notes)) for c in g.casinos.values()]
    assert keys == sorted(keys)
    from scorekeeper import InvalidDeal

    h = GameState.new("royale", ROYALE_FOUR[:3], seed=11)
    bad = ((10_000, 10_000), (20_000, 10_000), (50_000, 40_000), (90_000, 10_000),
           (70_000, 30_000), (80_000, 20_000))  # 4: 90k+10k vs 5: 70k+30k: equal totals
    with pytest.raises(InvalidDeal, match=r"casinos 4 and 5 both got pairs worth \$100,000"):
        h.apply_action(Deal(bad))
    assert h.phase == "deal" and h.seq == 0

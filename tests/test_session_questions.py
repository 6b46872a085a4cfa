"""The table's questions: only answers the rules take are offered, and a game left behind
(ended, switched, or the demo's next) takes no question or setting with it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from scorekeeper import Deal, Die, Place, Roll, RulesError
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from vision.demo import Timing
from web.demo_host import DemoOptions
from web.session import TableSession

QUICK = Timing(lead_in=4, fall=5, settle=9, hand=(12, 20), after_hand=8, lift=3, rest=8, scoop=3,
               empty=7)


def _dealt(table: TableSession) -> None:
    table.apply(Deal())


def _roll_of_mover(table: TableSession, seed: int = 3) -> list[dict]:
    roll = table.game.state.random_roll(random.Random(seed))
    return [d.to_dict() for d in roll.dice]


def _other_colour(table: TableSession) -> tuple[str, str]:
    state = table.game.state
    mover = state.current_player()
    other = next(p for p in state.players if p.name != mover)
    return other.colour, other.name


def _answers(table: TableSession) -> list[dict]:
    (q,) = table.pending_dicts()
    return q["answers"]


def test_a_roll_the_rules_take_leads_with_confirm_and_confirming_it_works(table):
    _dealt(table)
    dice = _roll_of_mover(table)
    table.ask("roll", "unsure", "check it", [], dice)
    (q,) = table.pending_dicts()
    assert [a["do"] for a in q["answers"]] == ["confirm", "correct", "dismiss"]
    mover = table.game.state.current_player()
    assert q["player"] == mover
    assert q["colour"] == next(p.colour for p in table.game.state.players if p.name == mover)
    table.confirm(q["id"])
    assert table.game.state.phase == "choose" and not table.pending


def test_someone_elses_dice_are_not_offered_as_the_roll_but_as_no_roll(table):
    _dealt(table)
    colour, name = _other_colour(table)
    dice = [{**d, "colour": colour} for d in _roll_of_mover(table)]
    table.ask("roll", "rules", "not their dice", [], dice)
    (q,) = table.pending_dicts()
    answers = q["answers"]
    assert "confirm" not in [a["do"] for a in answers]
    assert answers[0]["do"] == "dismiss" and name in answers[0]["label"]
    assert q["player"] == name and q["colour"] == colour
    before = table.game.state.seq
    with pytest.raises(RulesError):
        table.confirm(q["id"])  # what is not offered would indeed fail
    assert table.game.state.seq == before
    table.dismiss(q["id"])
    assert not table.pending and table.game.state.seq == before


def test_an_unread_die_leads_with_correcting_it(table):
    _dealt(table)
    dice = _roll_of_mover(table)
    dice[0] = {**dice[0], "value": None}
    table.ask("roll", "unsure", "a die unread", [2, 5], dice)
    assert [a["do"] for a in _answers(table)] == ["correct", "dismiss"]


def test_a_rethrow_replacing_the_applied_roll_can_be_confirmed(table):
    _dealt(table)
    first = table.game.state.random_roll(random.Random(1))
    dice = _roll_of_mover(table, seed=2)  # the same player's dice, thrown again
    table.apply(first)
    table._roll_open = True  # the camera applied it: a new throw replaces it
    table.ask("roll", "count", "thrown again", [], dice)
    assert _answers(table)[0]["do"] == "confirm"
    (q,) = table.pending_dicts()
    table.confirm(q["id"])
    assert table.game.state.roll == Roll(tuple(_die_of(d) for d in dice)).dice


def _die_of(d: dict) -> Die:
    return Die(d["colour"], d["value"], d["big"])


def test_a_value_question_offers_each_candidate(table):
    _dealt(table)
    table.apply(table.game.state.random_roll(random.Random(1)))
    faces = sorted({d.value for d in table.game.state.roll})
    table.ask("place", "scooped", "which?", faces, [])
    answers = _answers(table)
    assert [a["value"] for a in answers] == faces
    assert all(a["do"] == "value" for a in answers)


def test_ending_the_game_leaves_no_question_or_held_roll(table):
    _dealt(table)
    table.ask("roll", "unsure", "check it", [], _roll_of_mover(table))
    version = table.version
    table.game_ended()
    assert table.pending_dicts() == [] and not table.snapshot()["roll_held"]
    assert table.version > version  # the pages are told


def test_a_saved_game_is_resumed_as_it_was_and_an_unknown_one_refused(table):
    _dealt(table)
    roll = table.game.state.random_roll(random.Random(5))
    table.apply(roll)
    table.apply(Place(roll.dice[0].value))
    first, seq = table.game.id, table.game.state.seq
    table.ask("roll", "unsure", "about the first game", [], _roll_of_mover(table))
    table.new_game(table.game.state.config)
    assert table.game.id != first and not table.pending
    with pytest.raises(KeyError):
        table.resume_game("no-such-game")
    assert table.game.id != first
    table.resume_game(first)
    assert table.game.id == first and table.game.state.seq == seq
    # and it plays on: the next turn is stored in that game
    table.apply(table.game.state.random_roll(random.Random(6)))
    assert GameStore(table.data_dir).load(first).state.seq == seq + 1


@pytest.mark.slow
def test_the_demos_next_game_is_dealt_even_after_a_game_dealt_by_hand(tmp_path: Path):
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", edition="classic", players=players(3),
                         seed=11, realtime=False,
                         demo_options=DemoOptions(size=(640, 480), next_game_after=0.0,
                                                  max_games=2, timing=QUICK))
    table.auto_deal = False  # the host set up a game dealt by hand
    table.is_ended = lambda game_id: True  # and ended it; the demo moves on
    first = table.game.id
    table.run()
    assert table.game.id != first
    assert table.game.state.phase != "deal"  # the demo's own game was dealt, no one waits
    store.close()

"""A roll whose dice the reader names in a colour no one at the table plays.

Without a calibration profile some lamps make a paint read as its neighbour (red under glare
as pink, over-exposed orange as yellow). The reads come from the scripted tray of
`test_tracker`; the real tracker and the real session apply them to a real game in SQLite.
"""

from __future__ import annotations

import pytest

from scorekeeper import Deal, Die, GameState, Place, Roll, agrees
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from web.session import TableSession, facts_for, game_colours, table_colours

from .test_session_held import _feed
from .test_tracker import Table, roll_faces

VALUES = [4, 2, 4, 6, 1, 3, 5, 6]


def _turn(table: TableSession, seed: int, named: str) -> None:
    """The player to move throws VALUES; two of their dice read as `named` throughout."""
    table.apply(Deal())
    colour = table.game.state.to_dict()["players"][0]["colour"]
    faces = roll_faces(VALUES, colour=colour)
    for i in (1, 4):
        faces[i] = (VALUES[i], named)
    tray = Table(seed=seed)
    tray.roll(faces)
    tray.take(tray.ids(4))
    tray.take(tuple(range(len(tray.dice))), hand=5)
    tray.hold(60)
    _feed(table, tray, held=False)  # every die is read surely


def test_the_table_colours_are_the_games_dice(table: TableSession):
    state = table.game.state
    assert table_colours(state) == tuple(sorted(p.colour for p in state.players))
    facts = facts_for(table.game.state)
    assert facts is None  # nothing is rolled before the deal
    table.apply(Deal())
    facts = facts_for(table.game.state)
    assert facts.colour_counts == ((facts.player_colour, 8),)
    assert facts.table_colours == table_colours(table.game.state)


def test_dice_named_in_a_colour_nobody_plays_are_recorded_as_the_movers(table: TableSession):
    assert "pink" not in table_colours(table.game.state)
    _turn(table, 60, "pink")
    assert table.pending == []
    history = table.game.state.history
    roll, place = history[-2], history[-1]
    assert isinstance(roll, Roll) and place == Place(4)
    assert agrees(roll.dice, [Die("red", v) for v in VALUES])
    assert GameStore(table.data_dir).load(table.game.id).state.history[-2] == roll


def test_dice_named_in_another_players_colour_are_asked_about(table: TableSession):
    other = table.game.state.players[1].colour
    _turn(table, 61, other)
    [question] = table.pending
    assert question.kind == "roll" and question.reason == "colour"
    assert table.game.state.phase == "roll"  # nothing applied on a guess


@pytest.mark.parametrize("edition, options, white", [
    ("classic", {}, False), ("classic", {"neutral_dice": True}, True),
    ("custom", {}, False), ("royale", {}, True)])
def test_calibration_asks_for_white_only_where_the_game_throws_neutral_dice(
        edition: str, options: dict, white: bool):
    state = GameState.new(edition, players(3), options)
    colours = game_colours(state)
    assert colours[:3] == [p.colour for p in state.players]
    assert ("white" in colours) is white

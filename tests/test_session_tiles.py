"""Royale's casino tiles at the table: the two black extra dice a tile throws come through
the camera like any roll, and what the camera sees while a tile waits for a decision is
handled once it is made.

The reads come from the scripted tray of `test_tracker`; the real tracker turns them into
events and the real session applies them to a real Royale game in SQLite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scorekeeper import Deal, Die, GameState, Place, Roll, TileChoice
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from web.session import TableSession, facts_for, game_colours

from .conftest import NoReader
from .test_session_held import _feed
from .test_tracker import Table


def _royale(tmp_path: Path, pool: list[str]) -> TableSession:
    """A 3-player Royale game with one tile (of `pool`) beside casino 1, dealt."""
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", NoReader(), edition="royale",
                         players=players(3), options={"tiles": 1, "tile_pool": pool}, seed=1,
                         auto_deal=False)
    table.apply(Deal())
    return table


def _place_on_the_tile(table: TableSession) -> None:
    """The player to move rolls all ones and places them in casino 1: its tile is activated."""
    dice = [Die(c, 1, big) for (c, big), n in table.game.state.expected_roll().items()
            for _ in range(n)]
    table.apply(Roll(tuple(dice)))
    table.apply(Place(1))


def _throw(values: list[int], conf: float | None = None, seed: int = 7) -> Table:
    """Two black dice thrown into the empty tray, read, then taken out."""
    tray = Table(seed=seed)
    tray.roll([(v, "black") for v in values], settle=0)
    if conf is not None:
        tray.dice[0].conf = conf
    tray.hold(20)
    tray.take(tuple(range(len(tray.dice))), hand=5)
    tray.hold(60)
    return tray


def test_calibration_asks_for_black_only_where_tiles_throw_the_black_dice() -> None:
    four = players(4)
    classic = GameState.new("classic", four, seed=1)
    basic = GameState.new("royale", four, seed=1)
    tiles = GameState.new("royale", four, {"tiles": 3}, seed=1)
    assert "black" not in game_colours(classic) and "black" not in game_colours(basic)
    assert game_colours(tiles) == [*game_colours(basic), "black"]
    # A classic table whose player plays black learns it once, as a player's colour.
    black = GameState.new("classic", [("anna", "black"), ("ben", "red")], seed=1)
    assert game_colours(black) == ["black", "red"]


def test_the_tracker_is_told_to_expect_the_two_black_dice(tmp_path: Path) -> None:
    table = _royale(tmp_path, ["A2"])
    _place_on_the_tile(table)
    state = table.game.state
    assert state.phase == "tile" and state.is_chance_node()
    facts = facts_for(state)
    assert facts is not None
    assert (facts.player_colour, facts.dice_count, facts.big_count) == ("black", 2, 0)
    assert facts.colour_counts == (("black", 2),)
    assert "black" in facts.table_colours


def test_a_tiles_black_dice_seen_by_the_camera_are_its_throw(tmp_path: Path) -> None:
    table = _royale(tmp_path, ["A2"])  # Jackpot: a 7 or a double wins
    _place_on_the_tile(table)
    thrower = table.game.state.player_to_act()
    before = table.game.state.seq
    _feed(table, _throw([3, 4]), held=False)
    assert table.pending == [] and table.stats.errors == 0
    state = table.game.state
    assert state.seq == before + 1
    throw = state.history[-1]
    assert isinstance(throw, Roll)
    assert sorted((d.colour, d.value) for d in throw.dice) == [("black", 3), ("black", 4)]
    # Taking the black dice out is no player's move: the next player is still to roll.
    assert state.phase == "roll" and state.player_to_act() != thrower
    again = GameStore(tmp_path).load(table.game.id).state
    assert again.history[-1] == throw


def test_an_unsure_black_die_is_asked_about_at_once_not_held(tmp_path: Path) -> None:
    table = _royale(tmp_path, ["A2"])
    _place_on_the_tile(table)
    before = table.game.state.seq
    _feed(table, _throw([5, 2], conf=0.7), held=False)
    assert not table.snapshot()["roll_held"]  # no placement will read a tile's dice
    (q,) = table.pending_dicts()
    assert q["kind"] == "roll" and q["reason"] == "unsure"
    assert sorted(d["colour"] for d in q["dice"]) == ["black", "black"]
    assert q["answers"][0]["do"] == "confirm"  # the rules take two black dice now
    assert table.game.state.seq == before
    table.confirm(q["id"])
    state = table.game.state
    assert isinstance(state.history[-1], Roll) and state.phase == "roll"
    assert not table._roll_open  # nothing is placed after a tile's throw


def test_dice_thrown_before_the_decision_are_taken_once_it_is_made(tmp_path: Path) -> None:
    """Fifty Fifty: after its first throw the player takes the money or bets; the black dice
    thrown for the bet before anyone tapped the answer are the bet's throw."""
    table = _royale(tmp_path, ["B2"])
    _place_on_the_tile(table)
    _feed(table, _throw([3, 5]), held=False)  # the tile's first throw: 8
    state = table.game.state
    assert state.phase == "tile" and not state.is_chance_node()
    waiting = state.seq
    _feed(table, _throw([6, 6], seed=8), held=False)  # thrown while the bet is not made
    assert table.game.state.seq == waiting and table.pending == []
    table.apply(TileChoice("B2", "higher"))
    history = table.game.state.history
    assert history[waiting] == TileChoice("B2", "higher")
    throw = history[waiting + 1]
    assert isinstance(throw, Roll)
    assert sorted(d.value for d in throw.dice) == [6, 6]
    assert table.pending == [] and table.stats.errors == 0


def test_dice_of_the_next_player_thrown_while_a_tile_waits_are_their_roll(
        tmp_path: Path) -> None:
    table = _royale(tmp_path, ["B2"])
    _place_on_the_tile(table)
    _feed(table, _throw([3, 5]), held=False)
    colour = players(3)[1][1]  # the next player's
    tray = Table(seed=9)
    tray.roll([(v, colour) for v in (2, 4, 4, 6, 1, 3, 5, 2)], settle=0)
    tray.dice[0].big = True  # a Royale hand: seven dice and the Biggy
    tray.hold(20)
    _feed(table, tray, held=False)
    assert table.game.state.phase == "tile"  # still waiting for the answer
    table.apply(TileChoice("B2", "take"))
    state = table.game.state
    assert state.phase == "choose" and state.player_to_act() == players(3)[1][0]
    roll = state.history[-1]
    assert isinstance(roll, Roll) and sorted(d.value for d in roll.dice) == [1, 2, 2, 3, 4, 4,
                                                                            5, 6]


@pytest.mark.parametrize("edition, options", [("classic", {}), ("royale", {})])
def test_no_black_dice_are_expected_without_tiles(tmp_path: Path, edition: str,
                                                  options: dict) -> None:
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", NoReader(), edition=edition,
                         players=players(3), options=options, seed=1, auto_deal=False)
    table.apply(Deal())
    facts = facts_for(table.game.state)
    assert facts is not None and "black" not in dict(facts.colour_counts)

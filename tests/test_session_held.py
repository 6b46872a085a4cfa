"""A roll with a die below the certainty line: the session waits for the placement to read it.

The reads come from the scripted tray of `test_tracker` (what a reader reports while a turn is
played); the real tracker turns them into events and the real session applies them to a real
game in SQLite. Nothing of ours is mocked.
"""

from __future__ import annotations

from scorekeeper import Deal, Die, Place, Roll, agrees
from scorekeeper.store import GameStore
from web.session import TableSession, facts_for

from .test_tracker import Table, roll_faces


def _feed(table: TableSession, tray: Table, held: bool = True) -> None:
    """Play the tray's stream of reads through the session's own tracker, as the loop does.

    `held`: the roll has an unsure die, so it must be held for its placement unless asked.
    """
    tracker = table.tracker
    tracker.expect(facts_for(table.game.state))
    for index, t, reads in tray.stream:
        events = tracker.feed(index, t, reads)
        if events:
            with table.lock:
                table._handle(events)
            if held and events[0].kind == "roll":  # held until the placement, unless asked
                assert table.snapshot()["roll_held"] == (not table.pending)


def _turn(table: TableSession, seed: int, values: list[int], unsure: int,
          take: tuple[int, ...] | int, alt: int | None = None) -> Table:
    """The player to move throws `values`; die `unsure` reads right but at 0.7 (now and then
    as `alt`); they take the dice `take` (indices, or every die of that value), then the rest.
    """
    if table.game.state.phase == "deal":
        table.apply(Deal())
    colour = table.game.state.to_dict()["players"][0]["colour"]
    tray = Table(seed=seed)
    tray.roll(roll_faces(values, colour=colour), settle=0)
    tray.dice[unsure].conf, tray.dice[unsure].alt = 0.7, alt
    tray.hold(20)
    tray.take(tray.ids(take) if isinstance(take, int) else take)
    tray.hold(50)
    tray.take(tuple(range(len(tray.dice))), hand=5)
    tray.hold(60)
    _feed(table, tray)
    return tray


def test_an_unsure_die_that_left_with_the_fours_is_recorded_as_a_four(table: TableSession):
    _turn(table, 50, [4, 2, 4, 6, 1, 3, 5, 6], unsure=2, take=4)
    assert table.pending == []
    history = table.game.state.history
    roll, place = history[-2], history[-1]
    assert isinstance(roll, Roll) and place == Place(4)
    assert agrees(roll.dice, [Die("red", v) for v in (4, 2, 4, 6, 1, 3, 5, 6)])
    assert None not in {d.value for d in roll.dice}
    assert table.stats.settled_by_place == 1
    # Kept in SQLite as it was applied.
    again = GameStore(table.data_dir).load(table.game.id).state
    assert again.history[-2] == roll


def test_an_unsure_die_that_stayed_is_recorded_unread_not_guessed(table: TableSession):
    _turn(table, 51, [4, 2, 4, 6, 1, 3, 5, 6], unsure=1, take=4)
    assert table.pending == []
    roll = table.game.state.history[-2]
    assert sorted(d.face for d in roll.dice) == ["1", "3", "4", "4", "5", "6", "6", "?"]
    assert table.game.state.dice_left("anna") == 6
    state = table.snapshot()
    assert state["last_roll"]["dice"] and not state["roll_held"]


def test_a_placement_of_only_the_unsure_die_asks_about_the_roll(table: TableSession):
    _turn(table, 52, [4, 2, 4, 6, 1, 3, 5, 6], unsure=5, take=3)
    [question] = table.pending
    assert question.kind == "roll" and question.reason == "unsure"
    assert question.seen_place == 3  # confirming the dice will also place the threes
    assert table.game.state.phase == "roll"  # nothing applied on a guess
    table.confirm(question.id)
    assert table.game.state.history[-1] == Place(3)


def test_the_unsure_die_leaving_as_another_value_asks(table: TableSession):
    """Sure fours went out together with the die read (unsurely) as a 2: ask, apply nothing."""
    _turn(table, 53, [4, 2, 4, 6, 1, 3, 5, 6], unsure=1, take=(0, 1, 2))
    assert [q.kind for q in table.pending] == ["roll"]
    assert table.game.state.phase == "roll"


def _held_roll(table: TableSession, seed: int) -> Table:
    """Deal, then a roll whose second die reads at 0.7, left lying: the session holds it."""
    table.apply(Deal())
    tray = Table(seed=seed)
    tray.roll(roll_faces([4, 2, 4, 6, 1, 3, 5, 6]), settle=0)
    tray.dice[1].conf = 0.7
    tray.hold(20)
    _feed(table, tray)
    return tray


def test_the_table_can_ask_for_the_held_roll_at_once(table: TableSession):
    _held_roll(table, 54)
    assert table.snapshot()["roll_held"] and not table.pending
    assert table.ask_held_roll()
    assert [q.reason for q in table.pending] == ["unsure"]
    assert not table.snapshot()["roll_held"] and not table.ask_held_roll()


def test_the_next_roll_waits_while_the_last_turn_is_still_asked_about(table: TableSession):
    """Nobody answered before the next player threw: that roll is kept, not mixed up."""
    table.apply(Deal())
    players = table.game.state.to_dict()["players"]
    tray = Table(seed=55)
    tray.roll(roll_faces([4, 2, 4, 6, 1, 3, 5, 6], colour=players[0]["colour"]), settle=0)
    tray.dice[5].conf = 0.7  # the three, placed alone: the placement cannot read it
    tray.hold(20)
    tray.take(tray.ids(3))
    tray.hold(10)
    tray.take(tuple(range(len(tray.dice))), hand=5)
    tray.hold(10)
    tray.roll(roll_faces([1, 1, 2, 5, 5, 5, 6, 6], colour=players[1]["colour"]))
    _feed(table, tray)
    [question] = table.pending
    assert question.seen_place == 3 and table.game.state.phase == "roll"
    table.confirm(question.id)
    state = table.game.state
    # The first turn went in as answered, then the second player's roll, unasked.
    assert state.phase == "choose" and state.current_player() == players[1]["name"]
    assert sorted(d.value for d in state.roll) == [1, 1, 2, 5, 5, 5, 6, 6]
    assert not table.pending


def test_a_roll_entered_by_hand_replaces_the_held_one(table: TableSession):
    tray = _held_roll(table, 56)
    assert table.snapshot()["roll_held"]
    table.apply(Roll(tuple(Die("red", v) for v in (4, 2, 4, 6, 1, 3, 5, 6))))
    assert not table.snapshot()["roll_held"]
    # The held roll's question is not put when its placement is seen: the roll was entered.
    tray.stream.clear()
    tray.take(tray.ids(4))
    tray.hold(50)
    _feed(table, tray)
    assert not table.pending and table.game.state.phase == "choose"

"""What `serve` prints while the table plays: each action once, what was taken back, each
round's payout casino by casino, and the winner at the end."""

from __future__ import annotations

import random

import pytest

from scorekeeper import Roll
from scorekeeper.simulate import play_random_game
from web.cli import _Narrator


@pytest.mark.parametrize(("edition", "options"), [
    ("classic", None), ("custom", None), ("royale", None), ("royale", {"tiles": 3})])
def test_a_whole_game_is_told_once_with_every_payout_and_the_winner(edition, options, capsys):
    narrator: list[_Narrator] = []

    def tell(state, action) -> None:
        if not narrator:
            narrator.append(_Narrator(state))
        narrator[0].action(state, action, state.player_to_act())

    state = play_random_game(edition, 3, seed=7, options=options, on_action=tell)
    out = capsys.readouterr().out.splitlines()
    actions = [line for line in out if line.startswith("  [")]
    told = [line.split("· ", 1)[1] for line in out if line.startswith("           · ")]
    assert told == [n["text"] for n in state.notices if n.get("text")
                    and n.get("did") != "drawn"]
    assert bool(told) == bool(options)
    assert len(actions) == len(state.history)
    assert [int(line[3:6]) for line in actions] == list(range(1, len(state.history) + 1))
    rounds = [line for line in out if line.startswith("  Payout of round")]
    assert rounds == [f"  Payout of round {r['round']}:" for r in state.round_results]
    casinos = [line for line in out if line.startswith("    casino ")]
    assert len(casinos) == 6 * len(state.round_results)
    winner = state.results()["ranking"][0]
    assert out[-2 - len(state.players)] == "Final ranking:"
    assert winner["player"] in out[-1 - len(state.players)]
    assert out[-1].endswith(".") and state.results()["explanation"] in out[-1]


def test_a_roll_taken_back_is_said_so(table, capsys):
    from scorekeeper import Deal

    narrator = _Narrator(table.game.state)
    table.on_action, table.on_undo = narrator.action, narrator.undone
    table.apply(Deal())
    roll = table.game.state.random_roll(random.Random(2))
    table.apply(roll)
    table.undo()
    out = capsys.readouterr().out.splitlines()
    rolled = [line for line in out if " rolled " in line]
    back = [line for line in out if "taken back" in line]
    assert len(rolled) == 1 and len(back) == 1
    faces = rolled[0].split(" rolled ")[1]
    assert back[0].endswith(f"roll {faces}") and isinstance(roll, Roll)

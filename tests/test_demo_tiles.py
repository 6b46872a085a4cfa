"""The demo plays Royale's main game by itself: the demo camera films the black dice a casino
tile throws, the reader and tracker read them, the session applies them, and the demo's host
answers every tile decision after its patience, through the session as the host's page does.

Whole games through the real chain (demo renderer -> reader -> tracker -> session -> rules ->
SQLite), at the quick pace of the other demo tests.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest

from scorekeeper import Roll, TileChoice, agrees
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from vision.demo import Timing
from web.demo_host import ROYALE_TILES, DemoOptions, script_dice
from web.session import TableSession

QUICK = Timing(lead_in=4, fall=5, settle=9, hand=(12, 20), after_hand=8, lift=3, rest=8, scoop=3,
               empty=7)
THROWING = ["A1", "A2", "B2", "D2", "H2"]  # Jackpot, Fifty Fifty and My Choice throw the dice


def _play(tmp_path: Path, options: dict, seed: int) -> tuple[TableSession, list]:
    cv2.setNumThreads(1)
    table = TableSession(GameStore(tmp_path), tmp_path, "demo", edition="royale",
                         players=players(3), options=options, seed=seed, realtime=False,
                         demo_options=DemoOptions(size=(960, 720), answer_after=1.5,
                                                  max_games=1, timing=QUICK))
    applied: list = []
    table.on_action = lambda state, action, who: applied.append(action)
    table.run()
    return table, applied


def _black(action: object) -> bool:
    return isinstance(action, Roll) and all(d.colour == "black" for d in action.dice)


@pytest.mark.slow
@pytest.mark.parametrize("options, seed", [
    ({**ROYALE_TILES[1]}, 3),  # the demo's own rotation game
    ({"tiles": 3, "tile_pool": THROWING}, 11),  # tiles that throw the black dice
])
def test_a_demo_royale_tiles_game_plays_to_its_end_by_itself(tmp_path: Path, options: dict,
                                                              seed: int) -> None:
    table, applied = _play(tmp_path, options, seed)
    state = table.game.state
    assert state.is_over()
    assert table.stats.errors == 0 and table.stats.last_error == ""
    # Every tile decision was answered by the demo's host, none left waiting.
    decisions = [a for a in state.history if isinstance(a, TileChoice)]
    assert decisions and table.demo_host.decisions == len(decisions)
    assert state.to_dict()["tiles"]["pending"] == []
    # Every roll, the tiles' black-dice throws among them, is what the demo camera filmed.
    rolls = [a for a in state.history if isinstance(a, Roll)]
    script = [script_dice(t) for t in table.demo_host.script]
    assert len(rolls) == len(script)
    for i, (got, want) in enumerate(zip(rolls, script, strict=True)):
        assert agrees(got.dice, want), f"roll {i}: {got.dice}, filmed {want}"
    # The camera, not the demo's stand-in host, did the work.
    assert table.stats.by_hand <= 1
    if "tile_pool" in options:
        assert sum(_black(a) for a in applied) >= 5
    again = GameStore(tmp_path).load(table.game.id).state
    assert again.results() == state.results()


def test_every_second_demo_game_is_royale_with_three_tiles() -> None:
    demo = DemoOptions()
    assert demo.next_game(0) is None  # the first game is the session's own
    assert [demo.next_game(k) for k in (1, 2, 3, 4)] == [ROYALE_TILES, None, ROYALE_TILES, None]
    assert ROYALE_TILES == ("royale", {"tiles": 3})
    assert DemoOptions(rotation=()).next_game(5) is None


def test_the_demo_s_next_game_follows_its_rotation(tmp_path: Path) -> None:
    from .conftest import NoReader

    table = TableSession(GameStore(tmp_path), tmp_path, "demo", NoReader(),
                         players=players(4), seed=5)
    assert table.game.state.edition.key == "classic"
    table.finished_games = 1
    second = table._next_demo_game(6)
    assert second.state.edition.key == "royale" and second.state.edition.tile_count == 3
    assert [p.colour for p in second.state.players] == [c for _, c in players(4)]
    table.finished_games = 2
    assert table._next_demo_game(7).state.edition.key == "classic"

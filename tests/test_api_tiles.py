"""Royale's casino tiles over the HTTP API: a game set up with them, a tile's decision made
through /api/action, a bad or secret choice refused with nothing changed, and the two black
dice a tile throws entered by hand.

The games name the faces in play with the engine's internal option `tile_pool`, so the tile
beside casino 1 is known; the dice are chosen so that the player to move places in it.
"""

from __future__ import annotations

from typing import Any

import pytest

from scorekeeper.actions import TileChoice
from web.app import Settings, create_app
from web.session import TableSession

PIN = "4321"
PLAYERS = [{"name": "anna", "colour": "red"}, {"name": "benno", "colour": "blue"},
           {"name": "carla", "colour": "green"}]


@pytest.fixture
def client(table: TableSession) -> Any:
    app = create_app(table, Settings(pin=PIN))
    c = app.test_client()
    assert c.post("/api/login", json={"pin": PIN}).status_code == 200
    return c


def new_game(client: Any, **options: Any) -> dict[str, Any]:
    r = client.post("/api/game", json={"edition": "royale", "seed": 3, "players": PLAYERS,
                                       "options": options})
    assert r.status_code == 200, r.get_json()
    return state(client)


def state(client: Any) -> dict[str, Any]:
    return client.get("/api/state").get_json()


def lasting(s: dict[str, Any]) -> dict[str, Any]:
    """What an action changes in the state (not the camera's or the clock's parts)."""
    keys = ("seq", "phase", "to_move", "players", "casinos", "tiles", "legal", "expected_roll",
            "round", "log")
    return {k: s.get(k) for k in keys}


def place_in(client: Any, casino: int, count: int = 3) -> dict[str, Any]:
    """The player to move rolls `count` dice showing `casino` (the rest another number) and
    places them there."""
    s = state(client)
    other = 6 if casino != 6 else 5
    dice = []
    for g in s["expected_roll"]:
        for _ in range(g["count"]):
            value = casino if len(dice) < count and not g["big"] else other
            dice.append({"colour": g["colour"], "value": value, "big": g["big"]})
    r = client.post("/api/action", json={"type": "roll", "dice": dice})
    assert r.status_code == 200, r.get_json()
    r = client.post("/api/action", json={"type": "place", "value": casino})
    assert r.status_code == 200, r.get_json()
    return state(client)


def test_a_royale_game_with_tiles_is_set_up_over_the_api(client: Any):
    s = new_game(client, tiles=3, used_tiles="aside")
    assert s["options"]["tiles"] == 3 and s["options"]["used_tiles"] == "aside"
    assert [t["casino"] for t in s["tiles"]["casinos"]] == [1, 2, 3]
    assert all(t["tile"] and t["name"] for t in s["tiles"]["casinos"])
    assert s["tiles"]["bank"] and s["tiles"]["pending"] == []
    royale = client.get("/api/editions").get_json()["editions"]["royale"]
    assert "black" in royale["tiles"]["reserved_colours"]
    assert "gray" in royale["tiles"]["reserved_colours"]
    assert royale["tiles"]["used_tiles"] == ["repeat", "aside", "other_face"]
    # The basic game has no tiles in its state.
    assert "tiles" not in new_game(client, tiles=False)


@pytest.mark.parametrize("options, words", [
    ({"tiles": 3, "used_tiles": "burn"}, "used_tiles"),
    ({"tiles": 9}, "tiles"),
    ({"tiles": 3, "tile_pool": ["Z9"]}, "tile_pool"),
    ({"tiles": 3, "tile_pool": ["A1"] * 40}, "tile_pool"),
])
def test_bad_tile_options_are_refused_by_name(client: Any, options: dict, words: str):
    before = state(client)["game_id"]
    r = client.post("/api/game", json={"edition": "royale", "players": PLAYERS,
                                       "options": options})
    assert r.status_code == 400 and words in r.get_json()["error"]
    assert state(client)["game_id"] == before


def test_black_is_no_players_colour_with_the_tiles(client: Any):
    players = [PLAYERS[0], {"name": "benno", "colour": "black"}]
    r = client.post("/api/game", json={"edition": "royale", "players": players,
                                       "options": {"tiles": 3}})
    assert r.status_code == 400 and "black" in r.get_json()["error"]
    r = client.post("/api/game", json={"edition": "royale", "players": players,
                                       "options": {"tiles": False}})
    assert r.status_code == 200


def test_a_decision_through_the_api_moves_the_game_on(client: Any):
    new_game(client, tiles=1, tile_pool=["G2"])  # Double Down beside casino 1
    s = place_in(client, 1, count=3)
    assert s["phase"] == "tile" and s["to_move"] == "anna"
    [pending] = s["tiles"]["pending"]
    assert pending["name"] == "Double Down" and pending["player"] == "anna"
    assert not pending["secret"] and pending["roll"] is None
    choices = {(c["choice"], c.get("value")): c for c in pending["choices"]}
    assert ("move", 2) in choices and all(c["label"] for c in pending["choices"])
    r = client.post("/api/action", json={"type": "tile", "tile": "G2", "choice": "move",
                                         "value": 2, "player": "anna"})
    assert r.status_code == 200, r.get_json()
    s = state(client)
    assert s["phase"] == "roll" and s["to_move"] == "benno"
    assert s["tiles"]["pending"] == []
    assert s["tiles"]["casinos"][0]["dice"] == {"anna": 2}
    assert s["casinos"][0]["dice"] == {"anna": 1}


@pytest.mark.parametrize("body, status", [
    ({"tile": "G2", "choice": "move", "value": 9, "player": "anna"}, 409),  # not open
    ({"tile": "G2", "choice": "explode", "player": "anna"}, 409),
    ({"tile": "A2", "choice": "keep", "player": "anna"}, 409),  # another face
    ({"tile": "G2", "choice": "keep", "player": "benno"}, 409),  # not benno's decision
    ({"tile": "G2", "player": "anna"}, 400),  # no choice at all
    ({"tile": "G2", "choice": "move", "value": "two", "player": "anna"}, 400),
])
def test_a_bad_choice_is_refused_and_changes_nothing(client: Any, body: dict, status: int):
    new_game(client, tiles=1, tile_pool=["G2"])
    before = lasting(place_in(client, 1, count=3))
    r = client.post("/api/action", json={"type": "tile", **body})
    assert r.status_code == status, r.get_json()
    assert r.get_json()["error"]
    assert lasting(state(client)) == before


def test_a_secret_choice_through_the_hosts_controls_is_403(client: Any, table: TableSession):
    new_game(client, tiles=1, tile_pool=["A1"])  # Lucky Punch beside casino 1
    s = place_in(client, 1)
    [pending] = s["tiles"]["pending"]
    assert pending["secret"] and pending["player"] == "anna"
    before = lasting(s)
    for value in (1, 2, 9):  # an open choice or not: the host's controls make none
        r = client.post("/api/action", json={"type": "tile", "tile": "A1", "choice": "hold",
                                             "value": value, "player": "anna"})
        assert r.status_code == 403
        error = r.get_json()["error"]
        assert "Lucky Punch" in error and "anna" in error and "phone" in error
        assert lasting(state(client)) == before
    # Made where it is secret (the player's own phone), the game goes on, and the guess
    # that follows is no secret: the host's controls make it.
    table.apply(TileChoice("A1", "hold", 2, "anna"))
    [guess] = state(client)["tiles"]["pending"]
    assert guess["player"] == "benno" and not guess["secret"]
    r = client.post("/api/action", json={"type": "tile", "tile": "A1", "choice": "guess",
                                         "value": 1, "player": "benno"})
    assert r.status_code == 200, r.get_json()
    s = state(client)
    assert s["phase"] == "roll" and s["to_move"] == "benno"
    anna = next(p for p in s["players"] if p["name"] == "anna")
    assert anna["money"] == 30_000  # two tokens held, guessed wrong: $30,000


def test_the_black_dice_of_a_tile_are_entered_by_hand(client: Any):
    new_game(client, tiles=1, tile_pool=["A2"])  # Jackpot beside casino 1
    s = place_in(client, 1)
    assert s["phase"] == "tile" and s["to_move"] == "anna"
    assert s["expected_roll"] == [{"colour": "black", "big": False, "count": 2}]
    assert s["tiles"]["pending"][0]["roll"] == [{"colour": "black", "big": False, "count": 2}]
    before = lasting(s)
    for dice in ([{"colour": "black", "value": 3}],
                 [{"colour": "red", "value": 3}, {"colour": "red", "value": 4}],
                 [{"colour": "black", "value": 3}, {"colour": "black", "value": 7}]):
        r = client.post("/api/action", json={"type": "roll", "dice": dice})
        assert r.status_code in (400, 409), r.get_json()
        assert r.get_json()["error"]
        assert lasting(state(client)) == before
    # A choice while the dice are due is refused too.
    r = client.post("/api/action", json={"type": "tile", "tile": "A2", "choice": "take",
                                         "player": "anna"})
    assert r.status_code == 409 and lasting(state(client)) == before
    r = client.post("/api/action", json={"type": "roll", "dice": [
        {"colour": "black", "value": 3}, {"colour": "black", "value": 4}]})
    assert r.status_code == 200, r.get_json()
    s = state(client)
    assert s["phase"] == "roll" and s["to_move"] == "benno"
    anna = next(p for p in s["players"] if p["name"] == "anna")
    assert anna["money"] == 30_000  # a 7: the Jackpot's $30,000 from the bank
    assert s["tiles"]["casinos"][0]["counter"] == 30_000

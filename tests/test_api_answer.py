"""POST /api/answer: a player answers their own tile's question on their own phone.

Only the decision waiting, only by the player it waits for, only with a choice it offers;
everything else is refused in words and changes nothing. A secret choice (Lucky Punch's
tokens) is nowhere in what the table sends before the tile reveals it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scorekeeper import GameConfig
from scorekeeper.simulate import players
from web.app import Settings, create_app
from web.session import TableSession

PIN = "4321"


@pytest.fixture
def client(table: TableSession):
    app = create_app(table, Settings(pin=PIN))
    return app.test_client()


def royale(table: TableSession, pool: list[str], seed: int = 1) -> None:
    """A 3-player Royale game with one tile of `pool` beside casino 1."""
    table.new_game(GameConfig("royale", tuple(players(3)),
                              {"tiles": 1, "tile_pool": pool}, seed=seed))


def host(client: Any, body: dict) -> Any:
    return client.post("/api/action", json=body, headers={"X-Table-Pin": PIN})


def state(client: Any, me: str | None = None) -> dict:
    return client.get("/api/state" + (f"?me={me}" if me else "")).get_json()


def activate_casino_1(client: Any) -> str:
    """Deal, then the player to move rolls ones and places them on casino 1: its tile wakes.
    Returns that player."""
    if state(client)["phase"] == "deal":
        assert host(client, {"type": "deal"}).status_code == 200
    s = state(client)
    who = s["to_move"]
    dice = [{"colour": g["colour"], "value": 1, "big": g["big"]}
            for g in s["expected_roll"] for _ in range(g["count"])]
    r = host(client, {"type": "roll", "dice": dice})
    assert r.status_code == 200, r.get_json()
    r = host(client, {"type": "place", "value": 1})
    assert r.status_code == 200, r.get_json()
    return who


def pending(client: Any) -> dict:
    return state(client)["tiles"]["pending"][0]


def answer(client: Any, body: Any) -> Any:
    return client.post("/api/answer", json=body)


def unchanged(table: TableSession):
    """The game's whole state (the engine's own fingerprint) before and after a refusal."""
    before = (table.game.state.seq, table.game.state.fingerprint())
    return lambda: (table.game.state.seq, table.game.state.fingerprint()) == before


def test_the_player_whose_decision_it_is_answers_and_the_game_moves_on(client, table):
    royale(table, ["A1"])
    holder = activate_casino_1(client)
    p = pending(client)
    assert (p["tile"], p["player"], p["secret"]) == ("A1", holder, True)
    s = state(client)
    assert s["phase"] == "tile" and s["to_move"] == holder
    seq = s["seq"]
    r = answer(client, {"player": holder, "tile": "A1", "choice": "hold", "value": 2})
    assert r.status_code == 200, r.get_json()
    assert r.get_json() == {"ok": True, "seq": seq + 1}
    guess = pending(client)
    guesser = guess["player"]
    assert guesser != holder and [c["choice"] for c in guess["choices"]] == ["guess"] * 3
    assert not guess["secret"]
    # The guess: a wrong one pays the holder ($30,000 for two tokens); the turn goes on.
    r = answer(client, {"player": guesser, "tile": "A1", "choice": "guess", "value": 3})
    assert r.status_code == 200, r.get_json()
    s = state(client)
    assert s["tiles"]["pending"] == [] and s["phase"] == "roll"
    money = {p["name"]: p["money"] for p in s["players"]}
    assert money[holder] == 30_000
    log = s["log"]
    assert log[0]["kind"] == "tile" and log[0]["choice"] == "guess" and log[0]["value"] == 3
    assert log[1]["kind"] == "tile" and log[1]["hidden"] and log[1]["value"] is None


def test_someone_elses_decision_is_refused_and_changes_nothing(client, table):
    royale(table, ["A1"])
    holder = activate_casino_1(client)
    other = next(p["name"] for p in state(client)["players"] if p["name"] != holder)
    same = unchanged(table)
    r = answer(client, {"player": other, "tile": "A1", "choice": "hold", "value": 1})
    assert r.status_code == 409
    assert holder in r.get_json()["error"] and other in r.get_json()["error"]
    r = answer(client, {"player": "zoe", "tile": "A1", "choice": "hold", "value": 1})
    assert r.status_code == 409 and "zoe" in r.get_json()["error"]
    assert same()


@pytest.mark.parametrize("body", [
    {"tile": "A1", "choice": "hold", "value": 4},       # not among the choices
    {"tile": "A1", "choice": "hold"},                   # the choice needs its number
    {"tile": "A1", "choice": "guess", "value": 1},      # the next step's choice, not this one's
    {"tile": "A2", "choice": "hold", "value": 1},       # another tile
])
def test_a_choice_that_is_not_open_is_refused_and_changes_nothing(client, table, body):
    royale(table, ["A1"])
    holder = activate_casino_1(client)
    same = unchanged(table)
    r = answer(client, {"player": holder, **body})
    assert r.status_code == 409
    error = r.get_json()["error"]
    assert "not one of the choices" in error and "1 in my fist" in error
    assert r.get_json()["field"] == "choice"
    assert same()


@pytest.mark.parametrize("body, field", [
    ({"tile": "A1", "choice": "hold", "value": 1}, "player"),
    ({"player": "", "tile": "A1", "choice": "hold", "value": 1}, "player"),
    ({"player": 7, "tile": "A1", "choice": "hold", "value": 1}, "player"),
    ({"player": "anna", "choice": "hold", "value": 1}, "tile"),
    ({"player": "anna", "tile": "A1", "value": 1}, "choice"),
    ({"player": "anna", "tile": "A1", "choice": ["hold"], "value": 1}, "choice"),
    ({"player": "anna", "tile": "A1", "choice": "hold", "value": "1"}, "value"),
    ({"player": "anna", "tile": "A1", "choice": "hold", "value": True}, "value"),
    ({"player": "anna", "tile": "A1", "choice": "hold", "value": 1.5}, "value"),
    ({"player": "anna", "tile": "A1", "choice": "hold", "value": 1, "pin": "x"}, "pin"),
    ({"player": "a" * 41, "tile": "A1", "choice": "hold", "value": 1}, "player"),
])
def test_a_malformed_answer_is_a_400_naming_the_field(client, table, body, field):
    royale(table, ["A1"])
    activate_casino_1(client)
    same = unchanged(table)
    r = answer(client, body)
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["field"] == field and field in r.get_json()["error"]
    assert same()


def test_a_body_that_is_no_json_object_is_refused(client, table):
    royale(table, ["A1"])
    activate_casino_1(client)
    same = unchanged(table)
    assert answer(client, [1, 2]).status_code == 400
    assert answer(client, "hold").status_code == 400
    r = client.post("/api/answer", data="{not json", content_type="application/json")
    assert r.status_code == 400
    r = client.post("/api/answer", data="[" * 100_000 + "]" * 100_000,
                    content_type="application/json")
    assert r.status_code in (400, 413) and "error" in r.get_json()
    r = client.post("/api/answer", data={"player": "anna"})  # a plain form: no CSRF way in
    assert r.status_code == 415
    assert same()


def test_no_decision_waiting_or_a_throw_waiting_is_refused(client, table):
    # The table's classic game: no tiles at all.
    r = answer(client, {"player": "anna", "tile": "A1", "choice": "hold", "value": 1})
    assert r.status_code == 409 and "no tile" in r.get_json()["error"]
    # Jackpot waits for the black dice, thrown at the table, not for an answer.
    royale(table, ["A2"])
    who = activate_casino_1(client)
    assert pending(client)["roll"] is not None
    same = unchanged(table)
    r = answer(client, {"player": who, "tile": "A2", "choice": "take"})
    assert r.status_code == 409 and "black dice" in r.get_json()["error"]
    assert same()


def test_an_ended_game_refuses_answers(client, table):
    royale(table, ["A1"])
    holder = activate_casino_1(client)
    r = client.post("/api/end", json={}, headers={"X-Table-Pin": PIN})
    assert r.status_code == 200
    same = unchanged(table)
    r = answer(client, {"player": holder, "tile": "A1", "choice": "hold", "value": 1})
    assert r.status_code == 409 and "ended" in r.get_json()["error"]
    assert same()
    # Reopened, the same answer goes through.
    client.post("/api/end", json={"ended": False}, headers={"X-Table-Pin": PIN})
    r = answer(client, {"player": holder, "tile": "A1", "choice": "hold", "value": 1})
    assert r.status_code == 200


# --- a secret stays secret ----------------------------------------------------------------
def secrets_in(payload: Any, held: int) -> list[str]:
    """Every place in `payload` that tells how many tokens were held: a "hold" with its number,
    a `held` field, the button's words "N in my fist"."""
    found: list[str] = []

    def walk(x: Any, where: str) -> None:
        if isinstance(x, dict):
            if x.get("choice") == "hold" and x.get("value") is not None \
                    and not x.get("label"):  # a button offered before the choice is no secret
                found.append(f"{where}: {x}")
            if "held" in x:
                found.append(f"{where}: held={x['held']}")
            for k, v in x.items():
                walk(v, f"{where}.{k}")
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, f"{where}[{i}]")
        elif isinstance(x, str) and (f"{held} in my fist" in x or f"held {held}" in x
                                     or f"hold {held}" in x):
            found.append(f"{where}: {x!r}")

    walk(payload, "")
    return found


def first_event(client: Any, me: str | None) -> dict:
    r = client.get("/api/events" + (f"?me={me}" if me else ""), buffered=False)
    chunks = iter(r.response)
    text = ""
    while "event: state" not in text or "\n\n" not in text.split("event: state", 1)[1]:
        text += next(chunks).decode()
    r.close()
    data = text.split("event: state", 1)[1].split("data: ", 1)[1].split("\n\n", 1)[0]
    return json.loads(data)


@pytest.mark.parametrize("hide_money", [False, True])
def test_a_secret_choice_is_in_no_state_stream_or_history_before_the_reveal(client, table,
                                                                          hide_money):
    royale(table, ["A1"])
    client.post("/api/display", json={"hide_money": hide_money}, headers={"X-Table-Pin": PIN})
    held = 3
    holder = activate_casino_1(client)
    names = [p["name"] for p in state(client)["players"]]
    r = answer(client, {"player": holder, "tile": "A1", "choice": "hold", "value": held})
    assert r.status_code == 200
    guesser = pending(client)["player"]
    seen = {}
    for me in [None, *names]:
        seen[f"state?me={me}"] = state(client, me)
        seen[f"events?me={me}"] = first_event(client, me)
    history = client.get("/api/history", headers={"X-Table-Pin": PIN})
    assert history.status_code == 200
    seen["history (host)"] = history.get_json()
    if not hide_money:
        seen["history"] = client.get("/api/history").get_json()
    leaks = {k: secrets_in(v, held) for k, v in seen.items()}
    assert not any(leaks.values()), leaks
    # The history says the choice was made, in secret.
    words = [e["text"] for e in seen["history (host)"]["entries"] if e.get("type") == "tile"]
    assert len(words) == 1 and words[0].startswith(f"Lucky Punch: {holder} chose in secret")
    # The guess reveals it: now everyone may know.
    r = answer(client, {"player": guesser, "tile": "A1", "choice": "guess", "value": 1})
    assert r.status_code == 200
    texts = [e["text"] for e in client.get("/api/history", headers={"X-Table-Pin": PIN})
             .get_json()["entries"] if e.get("type") == "tile"]
    assert texts[0].startswith(f"Lucky Punch: {holder} chose in secret")
    assert f"{guesser} guessed 1, {holder} held {held}" in texts[1]

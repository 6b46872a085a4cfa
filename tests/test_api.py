"""The JSON API: contract shape, PIN, CSRF-safe writes, and bad input that changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import rest_after_stop
from web.app import Settings, create_app
from web.session import TableSession

PIN = "4321"



@pytest.fixture
def client(table: TableSession):
    app = create_app(table, Settings(pin=PIN, login_attempts=3, login_window=60))
    return app.test_client()


def host(client) -> None:
    r = client.post("/api/login", json={"pin": PIN})
    assert r.status_code == 200


def test_state_has_the_design_contract_fields(client, table: TableSession):
    s = client.get("/api/state").get_json()
    for key in ("game_id", "seq", "edition", "round", "over", "to_move", "players", "casinos",
                "pending"):
        assert key in s, key
    assert s["game_id"] == table.game.id and s["seq"] == 0 and s["edition"] == "classic"
    p = s["players"][0]
    assert {"name", "colour", "money", "dice_left"} <= set(p)
    c = s["casinos"][0]
    assert {"casino", "notes", "dice"} <= set(c) and c["casino"] == 1


def test_a_whole_turn_through_the_api(client):
    host(client)
    assert client.post("/api/action", json={"type": "deal"}).status_code == 200
    s = client.get("/api/state").get_json()
    who = s["to_move"]
    colour = next(p["colour"] for p in s["players"] if p["name"] == who)
    dice = [{"colour": colour, "value": v} for v in (1, 1, 2, 3, 4, 5, 6, 6)]
    r = client.post("/api/action", json={"type": "roll", "dice": dice})
    assert r.status_code == 200, r.get_json()
    r = client.post("/api/action", json={"type": "place", "value": 6})
    assert r.status_code == 200
    s = client.get("/api/state").get_json()
    assert s["seq"] == 3
    assert s["casinos"][5]["dice"] == {who: 2}
    r = client.post("/api/undo", json={})
    assert r.status_code == 200 and r.get_json()["undone"]["type"] == "place"
    assert client.get("/api/state").get_json()["casinos"][5]["dice"] == {}


def test_writes_need_the_pin(client):
    r = client.post("/api/action", json={"type": "deal"})
    assert r.status_code == 401 and "PIN" in r.get_json()["error"]
    r = client.post("/api/action", json={"type": "deal"}, headers={"X-Table-Pin": "0000"})
    assert r.status_code == 403
    r = client.post("/api/action", json={"type": "deal"}, headers={"X-Table-Pin": PIN})
    assert r.status_code == 200
    assert client.get("/api/state").get_json()["seq"] == 1


def test_wrong_pins_are_rate_limited(client):
    for _ in range(3):
        assert client.post("/api/login", json={"pin": "9999"}).status_code == 403
    r = client.post("/api/login", json={"pin": PIN})
    assert r.status_code == 429 and "try again" in r.get_json()["error"]


def test_writes_must_be_json_so_a_cross_site_form_cannot_post(client):
    host(client)
    r = client.post("/api/action", data={"type": "deal"})  # a plain HTML form
    assert r.status_code == 415
    assert client.get("/api/state").get_json()["seq"] == 0


@pytest.mark.parametrize("body, status, words", [
    ({"type": "fly"}, 400, "fly"),
    ({"type": "roll", "dice": "six"}, 400, "dice"),
    ({"type": "place", "value": 3}, 409, ""),  # nothing dealt or rolled yet
    ([1, 2], 400, "object"),
])
def test_bad_actions_are_refused_and_change_nothing(client, body, status, words):
    host(client)
    before = client.get("/api/state").get_json()
    r = client.post("/api/action", json=body)
    assert r.status_code == status
    assert words in r.get_json()["error"]
    after = client.get("/api/state").get_json()
    assert after["seq"] == before["seq"] and after["casinos"] == before["casinos"]


def test_an_illegal_roll_names_the_problem(client):
    host(client)
    client.post("/api/action", json={"type": "deal"})
    r = client.post("/api/action", json={"type": "roll",
                                         "dice": [{"colour": "red", "value": 9}]})
    assert r.status_code == 400 and "value" in r.get_json()["error"]
    r = client.post("/api/action", json={"type": "roll",
                                         "dice": [{"colour": "red", "value": 3}]})
    assert r.status_code == 409 and "red" in r.get_json()["error"]
    assert client.get("/api/state").get_json()["seq"] == 1


def test_confirm_validates_its_input(client):
    host(client)
    r = client.post("/api/confirm", json={"id": 99, "value": 3})
    assert r.status_code == 400 and "99" in r.get_json()["error"]
    r = client.post("/api/confirm", json={"id": "x"})
    assert r.status_code == 400
    r = client.post("/api/confirm", json={"id": 1, "value": 7})
    assert r.status_code == 400 and "1-6" in r.get_json()["error"]


def test_checking_a_held_roll_needs_the_pin_and_a_held_roll(client, table: TableSession):
    assert client.post("/api/roll/check", json={}).status_code == 401
    host(client)
    r = client.post("/api/roll/check", json={})
    assert r.status_code == 409 and "no roll is waiting" in r.get_json()["error"]
    assert client.get("/api/state").get_json()["roll_held"] is False
    assert table.pending == []


def test_a_roll_question_about_no_roll_can_be_dismissed(client, table: TableSession):
    host(client)
    client.post("/api/action", json={"type": "deal"})
    table.ask("roll", "count", "The number of dice does not match what the player holds.", [],
              [{"colour": "red", "value": 3, "big": False, "bbox": [0, 0, 9, 9],
                "confidence": 0.99}])
    table.ask("place", "scooped", "Which value?", [2, 4], [])
    roll_q, place_q = (p["id"] for p in client.get("/api/state").get_json()["pending"])
    r = client.post("/api/confirm", json={"id": place_q, "dismiss": True})
    assert r.status_code == 400 and "which value" in r.get_json()["error"]
    r = client.post("/api/confirm", json={"id": roll_q, "dismiss": True})
    assert r.status_code == 200
    s = client.get("/api/state").get_json()
    assert [p["id"] for p in s["pending"]] == [place_q] and s["seq"] == 1  # nothing applied
    r = client.post("/api/confirm", json={"id": roll_q, "dismiss": True})
    assert r.status_code == 400 and str(roll_q) in r.get_json()["error"]


def test_the_camera_leaves_a_game_the_host_ended_alone(client, table: TableSession):
    from vision import tracker as tk
    from vision.reader import DieRead

    host(client)
    client.post("/api/action", json={"type": "deal"})
    state = client.get("/api/state").get_json()
    colour = next(p["colour"] for p in state["players"] if p["name"] == state["to_move"])
    dice = tuple(DieRead(v, colour, False, (60.0 * i, 0.0, 60.0 * i + 50, 50.0), 0.99)
                 for i, v in enumerate((1, 1, 2, 3, 4, 5, 6, 6)))
    roll = tk.Roll(40, 2.7, dice, 34, 2.3, None)
    assert client.post("/api/end", json={"ended": True}).status_code == 200
    with table.lock:
        table._handle([roll])
    assert client.get("/api/state").get_json()["seq"] == 1 and not table.pending
    assert client.post("/api/end", json={"ended": False}).status_code == 200
    with table.lock:
        table._handle([roll])
    assert client.get("/api/state").get_json()["seq"] == 2  # reopened: the camera plays on


def test_oversized_bodies_and_unknown_routes_get_json_errors(client):
    host(client)
    r = client.post("/api/action", data=b"{" + b" " * 100_000 + b"}",
                    content_type="application/json")
    assert r.status_code == 413 and "error" in r.get_json()
    r = client.get("/api/nothing-here")
    assert r.status_code == 404 and "error" in r.get_json()


def test_photos_cannot_escape_their_folder(client, table: TableSession, tmp_path: Path):
    (tmp_path / "secret.jpg").write_bytes(b"x")
    folder = tmp_path / "photos" / table.game.id
    folder.mkdir(parents=True)
    (folder / "event-00001.jpg").write_bytes(b"\xff\xd8jpeg")
    r = client.get(f"/api/photo/{table.game.id}/event-00001.jpg")
    assert r.status_code == 200 and r.mimetype == "image/jpeg"
    assert client.get("/api/photo/../secret.jpg").status_code == 404
    assert client.get(f"/api/photo/{table.game.id}/..%2F..%2Fsecret.jpg").status_code == 404


def test_events_stream_starts_with_a_snapshot(client):
    r = client.get("/api/events", buffered=False)
    assert r.mimetype == "text/event-stream"
    chunks = iter(r.response)
    text = ""
    while "event: state" not in text:
        text += next(chunks).decode()
    r.close()
    assert "retry:" in text


def test_events_stream_ends_when_the_table_stops(client, table: TableSession):
    # The web server waits for open responses when it shuts down: a stream that outlived the
    # table held every `serve` stop for the server's whole grace period (5 s).
    r = client.get("/api/events", buffered=False)
    chunks = iter(r.response)
    text = ""
    while "event: state" not in text:
        text += next(chunks).decode()
    rest = rest_after_stop(chunks, table)
    r.close()
    assert not any(b"event: state" in c for c in rest)


@pytest.mark.parametrize("path", ["/api/action", "/api/confirm", "/api/undo", "/api/game",
                                  "/api/display", "/api/end", "/api/login"])
def test_a_deeply_nested_body_is_a_400_not_a_500(client, path: str):
    host(client)
    for text in ("[" * 20_000 + "]" * 20_000, '{"a":' * 5000 + "1" + "}" * 5000):
        r = client.post(path, data=text, content_type="application/json")
        assert r.status_code == 400 and "error" in r.get_json(), path
    assert client.get("/api/state").get_json()["seq"] == 0


@pytest.mark.parametrize("query", ["me=", "me=%00", "me=" + "x" * 5000, "me=anna&me=benno",
                                   "me=%3Cscript%3E", "me[]=1"])
def test_state_for_any_viewer_name_is_never_an_error(client, query: str):
    r = client.get("/api/state?" + query)
    assert r.status_code == 200 and r.get_json()["seq"] == 0


def test_new_write_endpoints_need_the_pin(client, table: TableSession):
    gid = table.game.id
    for path, body in (("/api/game", {"edition": "classic", "players": []}),
                       ("/api/display", {"hide_money": True}), ("/api/end", {})):
        assert client.post(path, json=body).status_code == 401, path
        r = client.post(path, json=body, headers={"X-Table-Pin": "0000"})
        assert r.status_code == 403, path
    s = client.get("/api/state").get_json()
    assert s["game_id"] == gid and s["display"] == {"hide_money": False, "deal": "hand",
                                                    "ended": False, "money_hidden": False}

"""The host's saved games (list, resume, view, delete), photo thumbnails and ending a game."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from scorekeeper.simulate import players
from web.app import Settings, create_app
from web.session import TableSession

PIN = "4321"


@pytest.fixture
def app(table: TableSession):
    return create_app(table, Settings(pin=PIN))


@pytest.fixture
def client(app):
    c = app.test_client()
    assert c.post("/api/login", json={"pin": PIN}).status_code == 200
    return c


def new_game(client, names: int = 3, edition: str = "classic", **extra) -> str:
    r = client.post("/api/game", json={"edition": edition, "seed": 3, "players": [
        {"name": n, "colour": c} for n, c in players(names)], **extra})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["game_id"]


def play_a_turn(client, value: int = 6) -> None:
    s = client.get("/api/state").get_json()
    if s["phase"] == "deal":
        assert client.post("/api/action", json={"type": "deal"}).status_code == 200
        s = client.get("/api/state").get_json()
    colour = next(p["colour"] for p in s["players"] if p["name"] == s["to_move"])
    dice = [{"colour": colour, "value": v} for v in (1, 1, 2, 3, 4, 5, 6, value)]
    assert client.post("/api/action", json={"type": "roll", "dice": dice}).status_code == 200
    assert client.post("/api/action", json={"type": "place", "value": value}).status_code == 200


def game_ids(client) -> list[str]:
    r = client.get("/api/games")
    assert r.status_code == 200, r.get_json()
    return [g["game_id"] for g in r.get_json()["games"]]


def test_saved_games_are_listed_for_the_host_with_who_leads(client, app, table):
    first = table.game.id
    play_a_turn(client)
    second = new_game(client, 4)
    games = client.get("/api/games").get_json()["games"]
    assert [g["game_id"] for g in games][:2] == [second, first]
    now, before = games[0], games[1]
    assert now["current"] and not before["current"]
    assert now["round"] == 1 and now["rounds"] == 4 and now["title"] == "Las Vegas (2012)"
    assert [p["name"] for p in now["players"]] == [n for n, _ in players(4)]
    assert before["seq"] == 3 and before["updated"] and not before["over"]
    assert before["leaders"] == [] and before["lead_money"] == 0  # nobody won money yet
    anonymous = app.test_client()
    r = anonymous.get("/api/games")
    assert r.status_code == 401 and "PIN" in r.get_json()["error"]


def test_a_saved_games_history_has_turns_and_photos(client, table):
    first = table.game.id
    play_a_turn(client)
    folder = Path(table.data_dir) / "photos" / first
    folder.mkdir(parents=True)
    cv2.imwrite(str(folder / "event-00001.jpg"), np.zeros((48, 64, 3), np.uint8))
    new_game(client)
    r = client.get(f"/api/games/{first}/history")
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    kinds = [(e["type"], e["turn"]) for e in body["entries"]]
    assert kinds == [("deal", None), ("roll", 1), ("place", 1)]
    assert body["entries"][1]["photo"] == f"{first}/event-00001.jpg"
    assert body["game"]["game_id"] == first
    r = client.get("/api/games/nosuchgame/history")
    assert r.status_code == 404 and r.get_json()["error"]


def test_a_saved_game_is_resumed_and_the_one_left_stays_saved(client, table):
    first = table.game.id
    play_a_turn(client)
    second = new_game(client)
    r = client.post(f"/api/games/{first}/resume", json={})
    assert r.status_code == 200, r.get_json()
    s = client.get("/api/state").get_json()
    assert s["game_id"] == first and s["seq"] == 3
    assert set(game_ids(client)) == {first, second}
    for gid, status in ((first, 409), ("nosuchgame", 404)):
        r = client.post(f"/api/games/{gid}/resume", json={})
        assert r.status_code == status and r.get_json()["error"]
    assert client.get("/api/state").get_json()["game_id"] == first


def test_deleting_a_game_removes_it_but_never_the_one_at_the_table(client, app, table):
    first = table.game.id
    play_a_turn(client)
    folder = Path(table.data_dir) / "photos" / first
    folder.mkdir(parents=True)
    (folder / "event-00001.jpg").write_bytes(b"x")
    second = new_game(client)
    r = client.delete(f"/api/games/{second}", json={})
    assert r.status_code == 409 and "being played" in r.get_json()["error"]
    assert client.delete("/api/games/nosuchgame", json={}).status_code == 404
    assert client.delete(f"/api/games/{first}").status_code == 415  # JSON only
    assert app.test_client().delete(f"/api/games/{first}", json={}).status_code == 401
    assert set(game_ids(client)) == {first, second}
    r = client.delete(f"/api/games/{first}", json={})
    assert r.status_code == 200, r.get_json()
    assert game_ids(client) == [second] and not folder.exists()
    assert client.post(f"/api/games/{first}/resume", json={}).status_code == 404
    assert client.get(f"/api/games/{first}/history").status_code == 404


def test_a_photo_is_sent_scaled_to_the_width_asked_and_cached(client, app, table):
    gid = table.game.id
    folder = Path(table.data_dir) / "photos" / gid
    folder.mkdir(parents=True)
    rng = np.random.default_rng(1)
    cv2.imwrite(str(folder / "event-00000.jpg"), rng.integers(0, 255, (720, 960, 3), np.uint8))
    full = client.get(f"/api/photo/{gid}/event-00000.jpg")
    assert full.status_code == 200
    r = client.get(f"/api/photo/{gid}/event-00000.jpg?w=250")
    assert r.status_code == 200 and r.mimetype == "image/jpeg"
    assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    small = cv2.imdecode(np.frombuffer(r.data, np.uint8), cv2.IMREAD_COLOR)
    assert small.shape[1] <= 250 and small.shape[1] >= 200
    assert len(r.data) * 4 < len(full.data)
    thumbs = app.extensions["thumbs"]
    assert len(thumbs.cache) == 1
    again = client.get(f"/api/photo/{gid}/event-00000.jpg?w=250")
    assert again.data == r.data and len(thumbs.cache) == 1  # not scaled again
    for bad in ("0", "79", "1601", "abc", "-5", "2.5"):
        r = client.get(f"/api/photo/{gid}/event-00000.jpg?w={bad}")
        assert r.status_code == 400 and "w:" in r.get_json()["error"], bad
    r = client.get(f"/api/photo/{gid}/nothere.jpg?w=320")
    assert r.status_code == 404 and r.get_json()["error"]
    r = client.get(f"/api/photo/{gid}/..%2F..%2Fgames.sqlite3?w=320")
    assert r.status_code == 404


def test_ending_a_game_leaves_no_question_open(client, table):
    play_a_turn(client)
    table.ask("roll", "count", "The number of dice does not match what the player holds.", [],
              [{"colour": "red", "value": 3}])
    assert client.get("/api/state").get_json()["pending"]
    r = client.post("/api/end", json={"ended": True})
    assert r.status_code == 200
    s = client.get("/api/state").get_json()
    assert s["pending"] == [] and not s["roll_held"]


def test_the_editions_say_how_many_players_they_take(client):
    eds = client.get("/api/editions").get_json()["editions"]
    assert eds["classic"]["max_players"] == 5 and eds["classic"]["neutral"]["max_players"] == 4
    assert eds["royale"]["biggy"] and not eds["classic"]["biggy"]
    assert eds["royale"]["reserved_colours"] == ["white", "gray"]
    assert eds["custom"]["max_players"] >= 8

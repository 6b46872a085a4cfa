"""The pages and the API routes behind them: set-up, display options, end, history, camera.

Flask's test client only; the browser tests (test_browser.py) cover what the pages do.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from scorekeeper import Deal, Place, Roll
from scorekeeper.simulate import players
from tests.conftest import rest_after_stop
from web.app import CAMERA_VIEWERS, Settings, create_app
from web.session import TableSession

PIN = "4321"
STATIC = Path(__file__).resolve().parent.parent / "web" / "static"
TEMPLATES = STATIC.parent / "templates"



@pytest.fixture
def app(table: TableSession):
    return create_app(table, Settings(pin=PIN, login_attempts=3, login_window=60, keepalive=2))


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def host(client):
    assert client.post("/api/login", json={"pin": PIN}).status_code == 200
    return client


def state(client, me: str | None = None) -> dict:
    return client.get("/api/state" + (f"?me={me}" if me else "")).get_json()


def new_game(**extra) -> dict:
    return {"edition": "classic", "seed": 3,
            "players": [{"name": n, "colour": c} for n, c in players(3)], **extra}


def play_round(table: TableSession) -> None:
    """Deal and play until the first round is paid out (always the lowest value)."""
    import random

    rng = random.Random(2)
    start = table.game.state.round
    while table.game.state.round == start and not table.game.state.is_over():
        st = table.game.state
        if st.phase == "deal":
            table.apply(Deal())
        elif st.phase in ("roll", "neutral"):
            table.apply(st.random_roll(rng))
        else:
            table.apply(Place(min(d.value for d in st.roll)))


# --- pages -----------------------------------------------------------------------------------
@pytest.mark.parametrize("path, marker", [("/", 'id="casinos"'), ("/table", 'id="login"'),
                                          ("/camera", 'id="cam"')])
def test_every_page_is_served_with_local_assets_only(client, path: str, marker: str):
    r = client.get(path)
    assert r.status_code == 200 and r.mimetype == "text/html"
    html = r.get_data(as_text=True)
    assert marker in html
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assets = re.findall(r'(?:src|href)="(/[^"]+)"', html)
    assert any(a.startswith("/static/common.js") for a in assets)
    for asset in assets:
        got = client.get(asset)
        assert got.status_code == 200, asset
        got.close()
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html)


def test_text_is_compressed_and_files_are_cached_for_good(client, table: TableSession):
    """What test_browser_shell's weight test relies on: gzip where it pays, and files kept
    by the phone for good under addresses that change with their content."""
    import gzip

    accept = {"Accept-Encoding": "gzip, deflate, br"}
    page = client.get("/", headers=accept)
    assert page.headers["Content-Encoding"] == "gzip"
    assert page.headers["Cache-Control"] == "no-cache"  # a new version is seen at once
    assert "Accept-Encoding" in page.headers["Vary"]
    html = gzip.decompress(page.data).decode()
    files = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert {f.split("?")[0] for f in files} >= {"/static/app.css", "/static/common.js",
                                               "/static/scoreboard.js"}
    for url in files:
        assert re.search(r"\?v=[0-9a-f]{12}$", url), url
        r = client.get(url, headers=accept)
        assert r.status_code == 200
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable", url
        if url.split("?")[0].endswith((".css", ".js")):
            assert r.headers["Content-Encoding"] == "gzip", url
            name = url.split("?")[0].removeprefix("/static/")
            disk = (STATIC / name).read_bytes()
            assert gzip.decompress(r.data) == disk
            assert len(r.data) < len(disk) * 0.6
            again = client.get(url, headers={**accept, "If-None-Match": r.headers["ETag"]})
            assert again.status_code == 304
        r.close()
    # An old or missing version is the file on disk now: not to be kept.
    r = client.get("/static/app.css?v=000000000000", headers=accept)
    assert r.headers["Cache-Control"] == "no-cache"
    r.close()
    r = client.get("/static/app.css")
    assert r.headers["Cache-Control"] == "no-cache" and "Content-Encoding" not in r.headers
    r.close()
    # JSON is compressed; the live stream and photos never are.
    state = client.get("/api/state", headers=accept)
    assert state.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(state.data).startswith(b"{")
    plain = client.get("/api/state")
    assert "Content-Encoding" not in plain.headers and plain.data.startswith(b"{")
    events = client.get("/api/events", headers=accept)
    assert events.mimetype == "text/event-stream"
    assert "Content-Encoding" not in events.headers
    assert next(events.response).startswith(b"retry")
    events.close()
    qr = client.get("/qr.svg", headers=accept)  # SVG is text: compressed when worth it
    assert "Accept-Encoding" in qr.headers["Vary"]
    tiny = client.get("/manifest.webmanifest", headers=accept)
    assert "Content-Encoding" not in tiny.headers  # too small to be worth it


def test_a_changed_file_gets_a_new_address(tmp_path: Path):
    from web.pages import Assets

    (tmp_path / "a.css").write_text("body { color: red }")
    (tmp_path / "b.css").write_text("p { color: blue }")
    assets = Assets(tmp_path)
    a1, b1 = assets.version("a.css"), assets.version("b.css")
    (tmp_path / "a.css").write_text("body { color: green }")
    assert assets.version("a.css") != a1
    assert assets.version("b.css") == b1  # the other files keep their address and cache
    assert assets.version("missing.css") is None
    assert assets.version("../a.css") is None


def test_no_asset_or_template_refers_to_another_host():
    for path in [*STATIC.iterdir(), *TEMPLATES.iterdir()]:
        if path.suffix in (".js", ".css", ".html", ".svg"):
            text = path.read_text("utf-8")
            for url in re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text):
                assert url == "http://www.w3.org", f"{path.name} refers to {url}"


def test_manifest_and_unknown_pages(client):
    r = client.get("/manifest.webmanifest")
    assert r.status_code == 200 and r.get_json()["start_url"] == "/"
    assert client.get("/no-such-page").status_code == 404
    assert client.get("/static/../app.py").status_code == 404


def test_the_qr_code_holds_the_address_the_browser_used(client):
    r = client.get("/qr.svg", base_url="http://192.168.1.20:8080")
    assert r.status_code == 200 and r.mimetype == "image/svg+xml"
    assert r.headers["X-Url"] == "http://192.168.1.20:8080/"
    assert r.get_data(as_text=True).startswith("<svg")
    weird = client.get("/qr.svg", headers={"Host": "x" * 300 + ":99"})
    assert weird.status_code in (200, 400)


def test_whoami_tells_the_page_whether_to_ask_for_the_pin(client):
    assert client.get("/api/whoami").get_json() == {"host": False}
    client.post("/api/login", json={"pin": PIN})
    assert client.get("/api/whoami").get_json()["host"] is True


# --- new game --------------------------------------------------------------------------------
def test_a_new_game_from_the_table(host, table: TableSession, tmp_path: Path):
    old = table.game.id
    r = host.post("/api/game", json=new_game(start_player=1, hide_money=True))
    assert r.status_code == 200, r.get_json()
    gid = r.get_json()["game_id"]
    assert gid != old and table.game.id == gid
    s = state(host)
    assert s["seq"] == 1 and s["phase"] == "roll"  # the app dealt
    assert s["to_move"] == "benno" and s["display"]["hide_money"] is True
    saved = json.loads((tmp_path / "display" / f"{gid}.json").read_text())
    assert saved == {"hide_money": True, "deal": "app", "ended": False}
    assert not list((tmp_path / "display").glob("*.tmp"))


def test_a_hand_dealt_game_waits_for_the_notes(host, table: TableSession):
    r = host.post("/api/game", json=new_game(deal="hand", options={"neutral_dice": True}))
    assert r.status_code == 200
    s = state(host)
    assert s["seq"] == 0 and s["phase"] == "deal" and s["display"]["deal"] == "hand"
    assert s["options"]["neutral_dice"] is True
    assert s["money_values"] == [v * 10_000 for v in range(1, 10)]
    assert table.auto_deal is False


@pytest.mark.parametrize("body, field", [
    ({"edition": "chess"}, "edition"),
    ({"players": "anna"}, "players"),
    ({"players": [{"name": "anna", "colour": "red"}]}, "players"),
    ({"players": [{"name": f"p{i}", "colour": "red"} for i in range(11)]}, "players"),
    ({"players": [{"name": "", "colour": "red"}, {"name": "b", "colour": "blue"}]},
     "players[1].name"),
    ({"players": [{"name": "<script>", "colour": "red"}, {"name": "b", "colour": "blue"}]},
     "players[1].name"),
    ({"players": [{"name": "a" * 21, "colour": "red"}, {"name": "b", "colour": "blue"}]},
     "players[1].name"),
    ({"players": [{"name": "a", "colour": "red"}, {"name": "b", "colour": "Blue!"}]},
     "players[2].colour"),
    ({"players": [{"name": "a", "colour": "red"}, {"name": "b", "colour": "red"}]}, "players"),
    ({"players": [{"name": "a", "colour": "red"}, {"name": "A", "colour": "blue"}]}, "players"),
    ({"players": [["a", "red"], ["b", "blue"]]}, "players[1]"),
    ({"start_player": 3}, "start_player"),
    ({"start_player": True}, "start_player"),
    ({"start_player": "1"}, "start_player"),
    ({"options": []}, "options"),
    ({"options": {"rounds": 3}}, "options"),
    ({"options": {"neutral_dice": "yes"}}, "options"),
    ({"options": {"neutral_dice": {"a": 1}}}, "options.neutral_dice"),
    ({"edition": "royale", "options": {"deck": {"10000": 10**12}}}, "options.deck"),
    ({"edition": "royale", "options": {"deck": {"1" * 50: 1}}}, "options.deck"),
    ({"edition": "royale", "options": {"tiles": 7}}, "options"),
    ({"edition": "royale", "options": {"tiles": 3, "used_tiles": "burn"}}, "options"),
    ({"edition": "custom", "options": {"skip_rule": "C"}}, "options"),
    ({"edition": "custom", "options": {"suits": 10**9}}, "options.suits"),
    ({"seed": -1}, "seed"),
    ({"seed": 1.5}, "seed"),
    ({"deal": "maybe"}, "deal"),
    ({"hide_money": "yes"}, "hide_money"),
    ({"colour": "red"}, "unknown field 'colour'"),
])
def test_a_bad_new_game_names_the_field_and_changes_nothing(host, table: TableSession,
                                                             body: dict, field: str):
    before = state(host)
    r = host.post("/api/game", json=new_game(**body))
    assert r.status_code == 400, r.get_json()
    err = r.get_json()["error"]
    assert err.startswith(field), err
    after = state(host)
    assert after["game_id"] == before["game_id"] and after["seq"] == before["seq"]


def test_new_game_needs_the_pin_and_json(client, table: TableSession):
    gid = table.game.id
    assert client.post("/api/game", json=new_game()).status_code == 401
    client.post("/api/login", json={"pin": PIN})
    assert client.post("/api/game", data={"edition": "classic"}).status_code == 415
    assert client.post("/api/game", data="{", content_type="application/json").status_code == 400
    assert table.game.id == gid


# --- hidden money ----------------------------------------------------------------------------
def test_hidden_money_is_removed_on_the_server_except_for_me(host, table: TableSession):
    play_round(table)
    full = state(host)
    assert any(p["money"] for p in full["players"])
    r = host.post("/api/display", json={"hide_money": True})
    assert r.status_code == 200 and r.get_json()["display"]["hide_money"] is True
    shared = state(host)
    assert shared["display"]["money_hidden"] is True
    for p in shared["players"]:
        assert p["money"] is None and p["score"] is None and p["notes"] == []
    assert all(set(r["money"]) == set() for r in shared["round_results"])
    mine = state(host, "anna")
    assert mine["me"] == "anna"
    anna = next(p for p in mine["players"] if p["name"] == "anna")
    assert anna["money"] == next(p["money"] for p in full["players"] if p["name"] == "anna")
    assert all(p["money"] is None for p in mine["players"] if p["name"] != "anna")
    assert set(mine["round_results"][0]["money"]) == {"anna"}
    text = json.dumps(state(host, "benno"))
    own = next(p["money"] for p in full["players"] if p["name"] == "benno")
    for p in full["players"]:
        if p["name"] != "benno" and p["money"] not in (0, own):
            assert f'"money": {p["money"]}' not in text
    # Nobody by that name, hostile names: treated as a watcher, never an error.
    for who in ("nobody", "%00", "a" * 500, "<script>"):
        r = host.get(f"/api/state?me={who}")
        assert r.status_code == 200 and r.get_json()["me"] is None


def test_hidden_money_shows_once_the_game_is_over(host, table: TableSession):
    host.post("/api/display", json={"hide_money": True})
    while not table.game.state.is_over():
        play_round(table)
    s = state(host)
    assert s["display"]["money_hidden"] is False and s["results"]["winners"]
    assert all(p["money"] is not None for p in s["players"])


def test_display_options_survive_a_restart(host, table: TableSession):
    host.post("/api/display", json={"hide_money": True, "deal": "hand"})
    again = create_app(table, Settings(pin=PIN)).test_client()
    assert state(again)["display"]["hide_money"] is True
    assert state(again)["display"]["deal"] == "hand"


@pytest.mark.parametrize("body", [{"hide_money": 1}, {"hide_money": None}, {"deal": "robot"},
                                  {"colour": "red"}, {"x" * 1000: True}])
def test_bad_display_options_are_refused(host, body: dict):
    r = host.post("/api/display", json=body)
    assert r.status_code == 400 and "error" in r.get_json()
    assert state(host)["display"]["hide_money"] is False


def test_display_options_need_the_pin(client):
    assert client.post("/api/display", json={"hide_money": True}).status_code == 401
    assert state(client)["display"]["hide_money"] is False


def test_the_live_stream_filters_money_and_follows_display_changes(host, table: TableSession):
    play_round(table)
    host.post("/api/display", json={"hide_money": True})
    r = host.get("/api/events?me=carla", buffered=False)
    chunks = iter(r.response)

    def next_state() -> dict:
        text = ""
        while "event: state" not in text or not text.endswith("\n\n"):
            text += next(chunks).decode()
        return json.loads(text.split("data: ", 1)[1])

    first = next_state()
    assert first["me"] == "carla"
    assert [p["money"] is None for p in first["players"]] == [True, True, False]
    t0 = time.monotonic()
    host.post("/api/display", json={"hide_money": False})
    second = next_state()
    assert time.monotonic() - t0 < 1.5
    assert all(p["money"] is not None for p in second["players"])
    r.close()


# --- ending, undo in app-dealt games ---------------------------------------------------------
def test_the_host_ends_the_game_and_may_reopen_it(host, table: TableSession):
    host.post("/api/action", json={"type": "deal"})
    assert host.post("/api/end", json={}).status_code == 200
    s = state(host)
    assert s["display"]["ended"] is True and s["over"] is False
    assert s["results"]["ranking"] and s["results"]["explanation"]
    seq = s["seq"]
    for path, body in (("/api/action", {"type": "pass"}), ("/api/undo", {}),
                       ("/api/confirm", {"id": 1, "value": 3})):
        r = host.post(path, json=body)
        assert r.status_code == 409 and "ended" in r.get_json()["error"]
    assert state(host)["seq"] == seq
    assert host.post("/api/end", json={"ended": "no"}).status_code == 400
    assert host.post("/api/end", json={"ended": False}).status_code == 200
    assert state(host)["results"] is None
    assert host.post("/api/undo", json={}).status_code == 200


def test_ending_an_over_game_is_refused(host, table: TableSession):
    while not table.game.state.is_over():
        play_round(table)
    r = host.post("/api/end", json={})
    assert r.status_code == 409


def test_undo_after_the_apps_own_deal_takes_back_the_last_move(host, table: TableSession):
    assert host.post("/api/game", json=new_game()).status_code == 200
    st = table.game.state
    import random

    rng = random.Random(5)
    while st.round == 1:
        if st.phase in ("roll", "neutral"):
            host.post("/api/action", json=st.random_roll(rng).to_dict())
        else:
            host.post("/api/action", json={"type": "place",
                                           "value": min(d.value for d in st.roll)})
        st = table.game.state
    assert st.phase == "roll" and isinstance(st.history[-1], Deal)  # dealt by the app
    r = host.post("/api/undo", json={})
    assert r.status_code == 200 and r.get_json()["undone"]["type"] == "place"
    assert table.game.state.round == 1 and table.game.state.phase == "choose"


# --- history ---------------------------------------------------------------------------------
def test_history_lists_every_action_with_its_photo(host, table: TableSession, tmp_path: Path):
    table.apply(Deal())
    folder = tmp_path / "photos" / table.game.id
    folder.mkdir(parents=True)
    (folder / f"event-{table.game.events:05d}.jpg").write_bytes(b"\xff\xd8jpeg")
    roll = table.game.state.random_roll(__import__("random").Random(1))
    table.apply(roll)
    table.apply(Place(roll.dice[0].value))
    table.undo()
    table.apply(Place(roll.dice[-1].value))
    r = host.get("/api/history")
    assert r.status_code == 200
    h = r.get_json()
    assert h["game_id"] == table.game.id and h["seq"] == 3
    kinds = [e["type"] for e in h["entries"]]
    assert kinds == ["deal", "roll", "place"]
    deal, rolled, placed = h["entries"]
    assert len(deal["casinos"]) == 6 and deal["player"] is None
    assert rolled["player"] == "anna" and rolled["colour"] == "red"
    assert rolled["photo"] == f"{table.game.id}/event-00001.jpg"
    assert host.get(f"/api/photo/{rolled['photo']}").status_code == 200
    assert placed["value"] == roll.dice[-1].value and "anna placed" in placed["text"]


def test_history_needs_the_pin_while_money_is_hidden(client, host, table: TableSession):
    host.post("/api/display", json={"hide_money": True})
    anonymous = create_app(table, Settings(pin=PIN)).test_client()
    assert anonymous.get("/api/history").status_code == 401
    assert anonymous.get("/api/history", headers={"X-Table-Pin": "0000"}).status_code == 403
    assert anonymous.get("/api/history", headers={"X-Table-Pin": PIN}).status_code == 200
    assert host.get("/api/history").status_code == 200


def test_the_round_end_shows_in_the_history(host, table: TableSession):
    play_round(table)
    entries = host.get("/api/history").get_json()["entries"]
    ends = [e for e in entries if e.get("round_end")]
    assert len(ends) == 1 and "round 1 paid out" in ends[0]["text"]


# --- camera ----------------------------------------------------------------------------------
def test_camera_stream_sends_frames_only_when_they_change(client, table: TableSession,
                                                          monkeypatch):
    frames = iter([(1, b"\xff\xd8one"), (1, b"\xff\xd8one"), (2, b"\xff\xd8two")])
    monkeypatch.setattr(table, "preview_jpeg", lambda: next(frames, (2, b"\xff\xd8two")))
    r = client.get("/api/camera/stream", buffered=False)
    assert r.status_code == 200 and r.mimetype == "multipart/x-mixed-replace"
    assert "boundary=frame" in r.headers["Content-Type"]
    parts = iter(r.response)
    first, second = next(parts), next(parts)
    assert first.startswith(b"--frame\r\nContent-Type: image/jpeg") and b"one" in first
    assert b"two" in second
    r.close()


def test_camera_stream_ends_when_the_table_stops(client, table: TableSession):
    # The web server waits for open responses when it shuts down: a camera page left open
    # held every `serve` stop for the server's whole grace period (5 s).
    r = client.get("/api/camera/stream", buffered=False)
    parts = iter(r.response)
    next(parts)
    rest_after_stop(parts, table)
    r.close()


def test_camera_stream_without_a_picture_shows_a_placeholder(client):
    r = client.get("/api/camera/stream", buffered=False)
    part = next(iter(r.response))
    assert b"Content-Type: image/jpeg" in part and b"\xff\xd8" in part
    r.close()


def test_camera_viewers_are_limited_and_slots_come_back(client):
    streams = [client.get("/api/camera/stream", buffered=False) for _ in range(CAMERA_VIEWERS)]
    extra = client.get("/api/camera/stream", buffered=False)
    assert extra.status_code == 503 and "camera" in extra.get_json()["error"]
    streams[0].close()
    again = client.get("/api/camera/stream", buffered=False)
    assert again.status_code == 200
    for s in [*streams[1:], again]:
        s.close()


# --- confirmations keep working with the new rules of the app --------------------------------
def test_a_confirmation_is_answered_through_the_api(host, table: TableSession):
    table.apply(Deal())
    dice = [{"colour": "red", "value": v, "big": False, "confidence": 0.99}
            for v in (1, 2, 3, 4, 5, 6, 6, 6)]
    dice[0].update(value=None, confidence=0.3)
    with table.lock:
        table.ask("roll", "unsure", "A die could not be read.", [1, 2], dice, None)
        table._after_change()
    pid = state(host)["pending"][0]["id"]
    # As read, the unreadable die makes the roll impossible: 400, nothing applied.
    r = host.post("/api/confirm", json={"id": pid})
    assert r.status_code == 400 and state(host)["seq"] == 1
    fixed = [{**d, "value": d["value"] or 2} for d in dice]
    r = host.post("/api/confirm", json={"id": pid, "dice": fixed})
    assert r.status_code == 200
    assert isinstance(table.game.state.history[-1], Roll) and not state(host)["pending"]


def test_a_corrected_roll_keeps_the_photo_taken_before_the_correction(host, table, tmp_path):
    import random

    table.apply(Deal())
    first = table.game.state.random_roll(random.Random(1))
    table.apply(first)
    folder = tmp_path / "photos" / table.game.id
    folder.mkdir(parents=True)
    # The camera saw a re-throw: its photo is named before the old roll is taken back.
    (folder / f"event-{table.game.events:05d}.jpg").write_bytes(b"\xff\xd8jpeg")
    table.undo()
    table.apply(table.game.state.random_roll(random.Random(2)))
    rolled = host.get("/api/history").get_json()["entries"][-1]
    assert rolled["type"] == "roll" and rolled["photo"].endswith("event-00002.jpg")

"""Calibration through the API, with the session's real frame loop on the demo camera.

While calibrating, the loop feeds the guide instead of the tracker, and the demo camera plays
the people dropping each colour's dice; saving switches the reader to the new profile.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from vision.profile import Profile, load_profile
from web.app import Settings, create_app
from web.demo_host import DemoOptions
from web.session import TableSession

pytestmark = pytest.mark.slow
PIN = {"X-Table-Pin": "1357"}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TableSession, Any]]:
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", None, players=players(2), seed=4,
                         realtime=False,
                         demo_options=DemoOptions(size=(640, 480), answer_after=0.5))
    app = create_app(table, Settings(pin="1357"))
    yield table, app.test_client()
    table.stop()
    store.close()


def wait_for(client: Any, step: str, timeout: float = 90.0) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status = client.get("/api/calibration").get_json()
        if status["step"] == step:
            return status
        time.sleep(0.1)
    raise AssertionError(f"calibration never reached {step}: {status}")


def test_calibrate_over_the_api_and_read_with_the_new_profile(served, tmp_path: Path) -> None:
    table, client = served
    idle = client.get("/api/calibration").get_json()
    assert idle["step"] == "idle" and not idle["calibrated"] and not idle["active"]
    assert idle["default_colours"] == ["red", "blue"]  # classic without neutral dice
    assert client.post("/api/calibration/start", json={}).status_code == 401
    table.start()
    r = client.post("/api/calibration/start", json={"colours": ["red", "blue"]}, headers=PIN)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["active"]
    assert client.get("/api/state").get_json()["calibration"]["active"]
    # saving before the guide is done is refused and changes nothing
    r = client.post("/api/calibration/save", json={}, headers=PIN)
    assert r.status_code == 409 and "not finished" in r.get_json()["error"]
    status = wait_for(client, "review")
    assert [c["name"] for c in status["colours"]] == ["red", "blue"]
    assert status["ready"] and status["can_save"] and status["corners"]
    r = client.post("/api/calibration/save", json={}, headers=PIN)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["step"] == "saved" and body["calibrated"] and not body["active"]
    path = tmp_path / "profiles" / body["profile"]
    assert load_profile(path).colours == table.profile.colours
    assert isinstance(table.reader.profile, Profile)
    assert table.reader.profile.colours == table.profile.colours
    state = client.get("/api/state").get_json()
    assert state["calibration"] == {"calibrated": True, "profile": body["profile"],
                                    "error": None, "active": False}
    # the game goes on: the tracker gets frames again and the demo plays turns
    seq = state["seq"]
    end = time.monotonic() + 60
    while table.game.state.seq <= seq and time.monotonic() < end:
        time.sleep(0.1)
    assert table.game.state.seq > seq


def test_calibration_requests_that_do_not_fit_are_4xx(served) -> None:
    table, client = served
    for path, body in (("/api/calibration/corners", {"corners": [[0, 0], [1, 0], [1, 1], [0, 1]]}),
                       ("/api/calibration/skip", {}), ("/api/calibration/save", {})):
        r = client.post(path, json=body, headers=PIN)
        assert r.status_code == 409 and "no calibration is running" in r.get_json()["error"]
    for bad in ("red", [], ["red", 3], ["x" * 40]):
        r = client.post("/api/calibration/start", json={"colours": bad}, headers=PIN)
        assert r.status_code == 400 and r.get_json()["field"] == "colours", bad
    r = client.post("/api/calibration/start", json={"colours": ["red", "RED"]}, headers=PIN)
    assert r.status_code == 400 and "twice" in r.get_json()["error"]
    r = client.post("/api/calibration/start", json={"colours": ["red"]}, headers=PIN)
    assert r.status_code == 200
    for corners in ("abc", [[0, 0]] * 3, [[0, "a"]] * 4, [[True, 0]] * 4):
        r = client.post("/api/calibration/corners", json={"corners": corners}, headers=PIN)
        assert r.status_code == 400 and r.get_json()["field"] == "corners", corners
    r = client.post("/api/calibration/cancel", json={}, headers=PIN)
    assert r.status_code == 200 and r.get_json()["step"] == "idle"
    assert not (table.data_dir / "profiles").exists()


def test_a_profile_for_another_picture_shape_is_dropped_with_a_banner(tmp_path: Path) -> None:
    store = GameStore(tmp_path)
    profile = Profile(white_balance=(1.0, 1.0, 1.0), image_size=(1000, 1000),
                      tray_corners=((10.0, 10.0), (990.0, 10.0), (990.0, 990.0), (10.0, 990.0)))
    table = TableSession(store, tmp_path, "demo", None, players=players(2), seed=4,
                         realtime=False, demo_options=DemoOptions(size=(640, 480)), profile=profile,
                         profile_name="profile-x.json")
    try:
        assert table.snapshot()["calibration"]["calibrated"]
        table.start()
        end = time.monotonic() + 30
        while table.stats.frames < 2 and time.monotonic() < end:
            time.sleep(0.05)
        cal = table.snapshot()["calibration"]
        assert not cal["calibrated"] and "1000x1000" in cal["error"] and "640x480" in cal["error"]
        assert table.reader.profile is None
    finally:
        table.stop()
        store.close()


def test_damaged_profile_error_is_in_the_state_for_the_banner(table) -> None:
    app = create_app(table, Settings(pin="1357"))
    table.use_profile(None, error="profiles/profile-1.json: not valid JSON")
    state = app.test_client().get("/api/state").get_json()
    assert state["calibration"]["error"] == "profiles/profile-1.json: not valid JSON"
    assert not state["calibration"]["calibrated"]


def test_serve_fixes_the_camera_as_the_profile_says(tmp_path: Path) -> None:
    """The Pi camera (picamera2 stand-in) gets the calibrated controls and echoes them."""
    from tests.test_sources import Camera, FakeTime, pi_source

    cam, ft = Camera(), FakeTime()
    controls = {"AeEnable": False, "AwbEnable": False, "ExposureTime": 12000,
                "AnalogueGain": 2.0, "ColourGains": [1.8, 1.45]}
    profile = Profile(camera={"controls": controls, "confirmed": True})
    sources: list[Any] = []

    def factory() -> Any:
        sources.append(pi_source(cam, ft))
        return sources[-1]

    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "picamera", None, players=players(2), seed=4,
                         source_factory=factory, profile=profile, profile_name="p.json")
    try:
        table.start()
        end = time.monotonic() + 10
        while (not sources or not sources[0].controls().confirmed) and time.monotonic() < end:
            time.sleep(0.02)
        rep = sources[0].controls()
        assert rep.confirmed, rep
        sent = cam.instances[0].received[0]
        assert sent["ExposureTime"] == 12000 and tuple(sent["ColourGains"]) == (1.8, 1.45)
        assert sent["AeEnable"] is False and sent["AwbEnable"] is False
    finally:
        table.stop()
        store.close()

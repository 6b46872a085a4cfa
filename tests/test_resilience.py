"""The table keeps playing: a failing frame, photo or event never ends the camera loop.

Each test runs the real frame loop in its thread on a real source (a folder of images), with
the real tracker, session, rules and SQLite; only the dice reader is scripted where a test
needs a frame to fail. Waits are on the session's own change notifications, bounded.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from scorekeeper import Deal, Roll
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from vision.motion import MotionConfig
from vision.tracker import TurnTracker
from web.app import Settings, create_app
from web.demo_host import DemoOptions
from web.session import TableSession, facts_for

from .test_tracker import Table

PIN = "2468"


class ScriptedReader:
    """Reads no dice, and raises on the frames named: a reader that meets a bad frame."""

    def __init__(self, fail_on: set[int] | None = None) -> None:
        self.fail_on = fail_on or set()
        self.calls = 0

    def read(self, image: np.ndarray) -> list:
        self.calls += 1
        if self.calls in self.fail_on:
            raise RuntimeError(f"bad frame number {self.calls}")
        return []


def _frames(folder: Path, n: int, start: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    img = np.full((120, 160, 3), 90, np.uint8)
    for i in range(start, start + n):
        cv2.imwrite(str(folder / f"f{i:04d}.png"), img)


def _until(table: TableSession, ok: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for the session to reach `ok`, woken by its change notifications (bounded)."""
    end = time.monotonic() + timeout
    version = -1
    while not ok():
        assert time.monotonic() < end, "the table never got there"
        version = table.wait_for_change(version, 0.2)


@pytest.fixture
def folder_table(tmp_path: Path):
    frames = tmp_path / "frames"
    _frames(frames, 12)
    store = GameStore(tmp_path / "data")
    reader = ScriptedReader({3, 4})
    # Every frame read, the motion gate off: what is tested is the loop's handling of them.
    table = TableSession(store, tmp_path / "data", str(frames), reader, players=players(3),
                         seed=2, auto_deal=False, realtime=False,
                         motion=MotionConfig(enabled=False))
    table.retry_after = 0.05
    table.error_hold = 0.0
    yield table, reader, frames
    table.stop()
    store.close()


def test_a_frame_that_fails_is_recorded_shown_and_passed_over(folder_table):
    table, reader, _frames_dir = folder_table
    table.start()
    _until(table, lambda: table.stats.frames >= 12)
    assert table.stats.errors == 2
    cam = table.snapshot()["camera"]
    assert "bad frame number 4" in cam["last_error"]
    assert reader.calls == 12  # every frame after the bad ones was read too
    assert table._thread is not None and table._thread.is_alive()


def test_a_folder_that_gets_new_frames_is_picked_up_again(folder_table):
    table, reader, frames = folder_table
    table.start()
    _until(table, lambda: "waiting for new frames" in table.camera_message)
    assert table.camera_state == "closed"
    assert table.health()[0], "a finished recording is a loop that waits on purpose"
    _frames(frames, 5, start=12)
    _until(table, lambda: reader.calls >= 12 + 5)
    _until(table, lambda: "waiting for new frames" in table.camera_message)
    assert reader.calls == 17  # the new frames only: the played ones are in the game already


def test_health_says_503_when_the_loop_is_not_running_or_no_frame_comes(tmp_path: Path):
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, str(tmp_path / "no-such-folder"), ScriptedReader(),
                         players=players(3), realtime=False)
    table.retry_after = 0.05
    table.stale_after = 0.3
    client = create_app(table, Settings(pin=PIN)).test_client()
    r = client.get("/api/health")
    assert r.status_code == 503 and "not running" in r.get_json()["reason"]
    table.start()
    try:
        _until(table, lambda: table.camera_state == "lost")
        _until(table, lambda: not table.health()[0] and "no frame" in table.health()[1])
        r = client.get("/api/health")
        body = r.get_json()
        assert r.status_code == 503
        assert "no frame" in body["reason"] and "lost" in body["reason"]
        assert body["camera"]["state"] == "lost"
        # The folder comes back: frames flow, and the health check says so.
        frames = tmp_path / "no-such-folder"
        _frames(frames, 400)
        table.stale_after = 30.0
        _until(table, lambda: table.stats.frames > 0)
        assert client.get("/api/health").status_code == 200
    finally:
        table.stop()
        store.close()


def _roll_stream(table: TableSession, seed: int = 5) -> list:
    """The tracker's events for one settled roll of the dice the player to move holds (with
    the frame it settled in), as the camera would see it."""
    state = table.game.state
    rng = random.Random(seed)
    faces = [(rng.randint(1, 6), colour) for (colour, _big), n in state.expected_roll().items()
             for _ in range(n)]
    tray = Table(seed=seed)
    tray.roll(faces, settle=0)
    tray.hold(30)
    image = np.full((120, 160, 3), 70, np.uint8)
    table.tracker = TurnTracker(facts_for(state))
    events = []
    for index, t, reads in tray.stream:
        events += table.tracker.feed(index, t, reads, image)
    return events


def test_a_photo_that_cannot_be_written_never_stops_play(table: TableSession, tmp_path: Path):
    table.apply(Deal())
    (tmp_path / "photos").write_text("a file where the photo folder should be")
    events = _roll_stream(table)
    assert any(e.kind == "roll" for e in events)
    with table.lock:
        table._handle(events)
    state = table.game.state
    assert state.phase == "choose", "the roll is applied without its photo"
    assert table.last_roll["photo"] is None
    assert table.stats.errors == 1
    assert "photo" in table.stats.last_error
    assert table.snapshot()["camera"]["state"] == "error"


def test_bad_input_that_gave_500s_gives_4xx_with_a_message(table: TableSession):
    client = create_app(table, Settings(pin=PIN)).test_client()
    r = client.get("/api/photo/a/b%00")
    assert r.status_code == 404 and "no photo" in r.get_json()["error"]
    r = client.post("/api/login", data='{"pin": "\\ud800"}',
                    content_type="application/json")
    assert r.status_code == 403 and r.get_json()["error"] == "wrong table PIN"


def test_a_roll_of_dice_nobody_could_read_is_refused(table: TableSession):
    client = create_app(table, Settings(pin=PIN)).test_client()
    assert client.post("/api/login", json={"pin": PIN}).status_code == 200
    client.post("/api/action", json={"type": "deal"})
    before = client.get("/api/state").get_json()["seq"]
    colour = table.game.state.to_dict()["players"][0]["colour"]
    dice = [{"colour": colour, "value": None}] * 8
    r = client.post("/api/action", json={"type": "roll", "dice": dice})
    assert r.status_code == 409 and r.get_json()["error"]
    assert client.get("/api/state").get_json()["seq"] == before


@pytest.mark.slow
def test_the_demo_plays_on_after_the_host_passes(tmp_path: Path):
    """Royale: the host's Pass (a chip) between the camera's roll and its placement left the
    demo's script behind (the passing player keeps the dice it had them place); at their
    next turn its automatic host met a roll the rules refused, and the frame loop died."""
    from scorekeeper import Pass

    from .test_session import QUICK

    cv2.setNumThreads(1)
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", edition="royale", players=players(2),
                         seed=3, realtime=False,
                         demo_options=DemoOptions(size=(640, 480), answer_after=1.0, timing=QUICK))
    table.start()
    try:
        def can_pass() -> bool:
            return any(isinstance(a, Pass) for a in table.game.state.legal_actions())

        _until(table, can_pass, timeout=240)
        with table.lock:
            table.apply(Pass())
        passed_at = table.game.state.seq
        rolls = lambda: sum(isinstance(a, Roll) for a in table.game.state.history)  # noqa: E731
        after = rolls()
        _until(table, lambda: rolls() >= after + 3, timeout=240)
        assert table._thread.is_alive()
        assert table.stats.errors == 0, table.stats.last_error
        assert table.game.state.seq > passed_at
        assert table.health()[1] != "the camera loop is not running"
    finally:
        table.stop()
        store.close()



def test_royale_two_players_neutral_set_with_its_biggy_is_read_as_rolled(tmp_path: Path):
    """The start player rolls a colour nobody plays: in the Royale box 7 dice and a Biggy.
    The camera's Biggy stays a Biggy (it counts two in its casino), not asked, not dropped."""
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", ScriptedReader(), edition="royale",
                         players=players(2), seed=3)
    try:
        if table.game.state.phase == "deal":
            table.apply(Deal())
        state = table.game.state
        assert state.phase == "neutral"
        (colour,) = {c for (c, _big) in state.expected_roll()}
        tray = Table(seed=8)
        dice = tray.roll([(v, colour) for v in (1, 2, 3, 4, 5, 6, 6, 2)], settle=0)
        dice[6].big = True
        tray.hold(30)
        table.tracker = TurnTracker(facts_for(state))
        image = np.full((120, 160, 3), 70, np.uint8)
        events = []
        for index, t, reads in tray.stream:
            events += table.tracker.feed(index, t, reads, image)
        with table.lock:
            table._handle(events)
        assert not table.pending, [p.message for p in table.pending]
        rolled = next(a for a in reversed(table.game.state.history) if isinstance(a, Roll))
        assert sum(d.big for d in rolled.dice) == 1 and len(rolled.dice) == 8
        assert table.game.state.phase == "roll", "the neutral dice went to their casinos"
    finally:
        store.close()

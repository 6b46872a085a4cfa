"""The table session: camera events become stored actions, and nothing doubtful slips in.

Whole games are played through the real chain (demo renderer -> reader -> tracker ->
session -> rules -> SQLite) and compared turn by turn with what the demo scripted.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from itertools import pairwise
from pathlib import Path

import cv2
import pytest

from scorekeeper import Place, Roll, agrees
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from vision.demo import Timing
from web.demo_host import DemoOptions, demo_turns, script_dice
from web.session import TableSession

from .conftest import free_port, serve_process

# Shorter than the demo's default pacing, still long enough for every tracker window.
QUICK = Timing(lead_in=4, fall=5, settle=9, hand=(12, 20), after_hand=8, lift=3, rest=8, scoop=3,
               empty=7)


def _turns_of(history: list) -> list[tuple[tuple, int | None]]:
    turns: list[list] = []
    for a in history:
        if isinstance(a, Roll):
            turns.append([a.dice, None])
        elif isinstance(a, Place):
            turns[-1][1] = a.value
    return [(t[0], t[1]) for t in turns]


def _play(tmp_path: Path, edition: str, n: int, options: dict | None = None) -> TableSession:
    cv2.setNumThreads(1)
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", edition=edition, players=players(n),
                         options=options, seed=11, realtime=False,
                         demo_options=DemoOptions(size=(960, 720), answer_after=1.5,
                                                  max_games=1, timing=QUICK))
    table.run()
    return table


@pytest.mark.slow
@pytest.mark.parametrize("edition, n, options", [
    ("classic", 2, None),
    ("royale", 2, None),
    ("custom", 3, None),
])
def test_a_demo_game_plays_to_the_end_exactly_as_scripted(tmp_path: Path, edition: str, n: int,
                                                           options: dict | None):
    table = _play(tmp_path, edition, n, options)
    state = table.game.state
    assert state.is_over()
    live = _turns_of(list(state.history))
    script = [(script_dice(t), t.chosen) for t in table.demo_host.script]
    assert len(live) == len(script)
    for i, (got, want) in enumerate(zip(live, script, strict=True)):
        # A die the camera could not read and the placement did not need stays unread.
        assert agrees(got[0], want[0]), f"turn {i}: rolled {got[0]}, scripted {want[0]}"
        if got[1] is not None:  # a neutral-dice roll places itself
            assert got[1] == want[1], f"turn {i}: placed {got[1]}, scripted {want[1]}"
    # The camera, not the demo's stand-in host, did the work.
    actions = len(live) * 2
    assert table.stats.by_hand <= 1
    assert table.stats.applied_auto >= 0.5 * actions
    # The stored game replays to the same end (payouts included).
    again = GameStore(tmp_path).load(table.game.id).state
    assert again.results() == state.results()
    # Every roll the camera applied has its photo.
    photos = list((tmp_path / "photos" / table.game.id).glob("*.jpg"))
    assert photos
    assert cv2.imread(str(photos[0])) is not None


def test_the_demo_leaves_a_game_the_host_ended_and_moves_on(tmp_path: Path):
    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", edition="classic", players=players(3),
                         seed=11, realtime=False,
                         demo_options=DemoOptions(size=(640, 480), max_games=1, timing=QUICK))
    ended = table.game.id
    table.is_ended = lambda game_id: game_id == ended
    table.run()  # returns once the demo has given up the ended game (max_games=1)
    assert table.finished_games == 1
    assert table.game.state.seq <= 1  # at most the app's deal: no turn was entered
    store.close()


def test_demo_script_is_what_the_rules_allow_and_resumes_the_same(tmp_path: Path):
    from scorekeeper import Deal, GameConfig, GameState

    state = GameState(GameConfig("classic", tuple(players(3)), {"neutral_dice": True}, 5))
    turns = list(demo_turns(state, 5))
    shadow = state.clone()
    for t in turns:
        if shadow.phase == "deal":
            shadow.apply_action(Deal())
        neutral = shadow.phase == "neutral"
        from scorekeeper import Die

        shadow.apply_action(Roll(tuple(Die(c, v, t.is_big(i)) for i, (c, v) in
                                       enumerate(zip(t.colours, t.values, strict=True)))))
        if not neutral:
            shadow.apply_action(Place(t.chosen))
    assert shadow.is_over()
    # From a state part-way through, the script carries on from there.
    mid = state.clone()
    mid.apply_action(Deal())
    assert [t.colours for t in demo_turns(mid, 5)][:1] == [("white", "white")]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


@pytest.mark.slow
def test_serve_survives_a_pulled_power_cable(tmp_path: Path):
    """SIGKILL mid-game: on restart the same game resumes with every acknowledged action."""
    port = free_port()

    def start() -> subprocess.Popen:
        return serve_process(["--source", "demo", "--data-dir", str(tmp_path), "--pin",
                              "2468"], port, ready="/api/health")

    proc = start()
    try:
        deadline = time.time() + 120
        state = _get(f"http://127.0.0.1:{port}/api/state")
        while state["seq"] < 4 and time.time() < deadline:
            time.sleep(0.5)
            state = _get(f"http://127.0.0.1:{port}/api/state")
        assert state["seq"] >= 4, "the demo did not play"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    acknowledged = state["seq"]
    proc = start()
    try:
        after = _get(f"http://127.0.0.1:{port}/api/state")
        assert after["game_id"] == state["game_id"]
        assert after["seq"] >= acknowledged
        deadline = time.time() + 120
        while after["seq"] <= acknowledged + 1 and time.time() < deadline:
            time.sleep(0.5)
            after = _get(f"http://127.0.0.1:{port}/api/state")
        assert after["seq"] > acknowledged + 1, "the resumed demo did not carry on"
        # Phones following the live updates or the camera must not hold the stop up.
        phone = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/events", timeout=5)
        phone.readline()
        camera = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/camera/stream",
                                        timeout=5)
        camera.readline()
    finally:
        stopped_at = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        took = time.monotonic() - stopped_at
    phone.close()
    camera.close()
    # `kill` (SIGTERM) is a clean stop too: the camera, server and store closed, exit 0, and
    # promptly (waitress waited its whole 5 s grace period for the stream before).
    assert proc.returncode == 0, proc.stdout.read().decode(errors="replace")[-3000:]
    assert took < 3.0, f"serve took {took:.1f} s to stop with a phone connected"


def test_the_pages_are_told_each_time_what_the_tracker_sees_changes(tmp_path: Path):
    """The camera page shows the tracker's state beside the live picture; a roll in flight
    must not sit under a stale "settled" until the next game change."""
    seen: list[tuple[int, str]] = []

    class Watched:
        """The demo camera, noting at each frame what the pages were last told."""

        def __init__(self, inner: object) -> None:
            self.inner = inner

        def read(self):
            seen.append((table.version, table.tracker.state))
            return self.inner.read()

        def __getattr__(self, name: str):
            return getattr(self.inner, name)

    class Session(TableSession):
        def _open(self):
            return Watched(super()._open())

    cv2.setNumThreads(1)
    store = GameStore(tmp_path)
    table = Session(store, tmp_path, "demo", edition="classic", players=players(2), seed=11,
                    realtime=False,
                    demo_options=DemoOptions(size=(640, 480), timing=QUICK))
    table.start()
    deadline = time.time() + 120
    while len({s for _, s in seen}) < 4 and time.time() < deadline:
        time.sleep(0.1)
    table.stop()
    store.close()
    states = [s for _, s in seen]
    assert len(set(states)) >= 4, f"the demo showed the tracker only {sorted(set(states))}"
    for (v0, s0), (v1, s1) in pairwise(seen):
        if s1 != s0:
            assert v1 != v0, f"the tracker went {s0} -> {s1} and the pages were not told"

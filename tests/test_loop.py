"""The camera loop `serve` and `track` share (`vision.loop`): one recording, the same turns
whichever way it is played, and a loop that goes on past a frame that fails."""

from __future__ import annotations

import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest

from scorekeeper import Die, GameConfig, GameState, Place, Roll, agrees
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from tests.test_tracker import FACTS8, RED8, ReplayReader, Table, roll_faces, summary
from vision import tracker as tk
from vision.demo import DemoSource, Timing
from vision.loop import CameraLoop, LoopHooks, track_stream
from vision.reader import DiceReader
from vision.sources import Frame, Source, open_source
from web.demo_host import demo_turns
from web.session import TableSession

TIMING = Timing(lead_in=4, fall=5, settle=12, lift=3, rest=8, scoop=3, empty=8)
GAME = {"edition": "classic", "players": players(3), "seed": 5}


@pytest.fixture(scope="module")
def evening(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """The first turns of a classic game as the demo camera films them, as frame files."""
    folder = tmp_path_factory.mktemp("evening")
    state = GameState(GameConfig(GAME["edition"], tuple(GAME["players"]), {}, GAME["seed"]))
    turns = list(itertools.islice(demo_turns(state, GAME["seed"]), 4))
    frames = folder / "frames"
    frames.mkdir()
    for f in DemoSource(turns, seed=2, size=(800, 600), hand_p=0.0, timing=TIMING):
        assert cv2.imwrite(str(frames / f"frame_{f.index:05d}.jpg"), f.image,
                           [cv2.IMWRITE_JPEG_QUALITY, 92])
    return frames, turns


def test_the_table_and_a_replay_follow_a_recording_alike(evening, tmp_path: Path):
    """`serve` on a recording plays the turns that `track` prints for it: one loop."""
    frames, turns = evening
    printed = [(sorted(d.value for d in e.dice) if isinstance(e, tk.Roll) else e.value)
               for e in track_stream(open_source(str(frames)), DiceReader(threads=1))
               if isinstance(e, tk.Roll | tk.Place)]
    assert len(printed) == 2 * len(turns)

    table = TableSession(GameStore(tmp_path), tmp_path, str(frames), realtime=False, **GAME)
    table.start()
    version = table.version
    try:
        while not (table.camera_state == "closed" and table._played):
            changed = table.wait_for_change(version, timeout=60)
            assert changed != version, "the table stopped changing before the recording ended"
            version = changed
    finally:
        table.stop()
    played = []
    for a in table.game.state.history:
        if isinstance(a, Roll):
            played.append(sorted(d.value for d in a.dice if d.value is not None))
        elif isinstance(a, Place):
            played.append(a.value)
    assert played == printed
    rolls = [a for a in table.game.state.history if isinstance(a, Roll)]
    for turn, roll in zip(turns, rolls, strict=True):
        want = tuple(Die(c, v) for c, v in zip(turn.colours, turn.values, strict=True))
        assert agrees(roll.dice, want)
    assert not table.pending
    table.store.close()


def _recording() -> tuple[ReplayReader, list[tuple[int, float, np.ndarray]]]:
    """A red roll of eight and four of them taken, as frames whose pixels carry their index."""
    table = Table(seed=25)
    table.roll(roll_faces(RED8))
    table.take(table.ids(4), after=40)
    frames = []
    for index, t, _ in table.stream:
        img = np.zeros((4, 4, 3), np.uint8)
        img[0, 0, 0], img[0, 0, 1] = index % 256, index // 256
        frames.append((index, t, img))
    return ReplayReader(table), frames


class _Source(Source):
    def __init__(self, frames: list[tuple[int, float, np.ndarray]]) -> None:
        super().__init__()
        self._frames = iter(frames)

    def read(self) -> Frame | None:
        for index, t, image in self._frames:
            return Frame(index, t, image)
        self._set_state("closed", "the recording ended")
        return None


class _Hooks(LoopHooks):
    def __init__(self, fail_at: int | None = None, take: set[int] | None = None) -> None:
        self.fail_at, self.take = fail_at, take or set()
        self.failures: list[int] = []
        self.ends: list[list[tk.Event]] = []

    def frame(self, frame: Frame) -> bool:
        return frame.index not in self.take

    def seen(self, frame: Frame | None, dice, events, tracker_was: str) -> None:
        if frame is None:
            self.ends.append(events)
        elif frame.index == self.fail_at:
            raise RuntimeError("handling this frame's events failed")

    def failed(self, frame: Frame, exc: Exception) -> None:
        self.failures.append(frame.index)


def test_a_frame_that_fails_is_reported_and_the_loop_goes_on():
    reader, frames = _recording()
    hooks = _Hooks(fail_at=frames[5][0])
    events = list(CameraLoop(reader, tk.TurnTracker(FACTS8), hooks=hooks).run(_Source(frames)))
    assert hooks.failures == [frames[5][0]]
    assert summary(events) == [("roll", sorted(RED8)), ("place", 4, 2)]  # followed on


def test_a_replay_stops_at_an_error_rather_than_pass_over_it():
    _, frames = _recording()

    class Broken:
        def read(self, image: np.ndarray) -> list:
            raise RuntimeError("the net failed")

    with pytest.raises(RuntimeError, match="the net failed"):
        list(track_stream(frames, Broken(), FACTS8))


def test_frames_the_caller_takes_are_not_read_and_the_end_is_handed_on():
    reader, frames = _recording()
    asked: list[int] = []

    class Counting:
        def read(self, image: np.ndarray) -> list:
            asked.append(int(image[0, 0, 0]) + 256 * int(image[0, 0, 1]))
            return reader.read(image)

    taken = {index for index, _, _ in frames[:3]}
    hooks = _Hooks(take=taken)
    list(CameraLoop(Counting(), tk.TurnTracker(FACTS8), hooks=hooks).run(_Source(frames)))
    assert asked and not taken & set(asked)
    assert len(hooks.ends) == 1  # the stream's end was handed on once


def test_a_hook_can_end_the_loop():
    reader, frames = _recording()

    class Stop(LoopHooks):
        turns = 0

        def go_on(self) -> bool:
            self.turns += 1
            return self.turns <= 3

    asked: list[int] = []

    class Counting:
        def read(self, image: np.ndarray) -> list:
            asked.append(1)
            return reader.read(image)

    assert list(CameraLoop(Counting(), hooks=Stop()).run(_Source(frames))) == []
    assert len(asked) == 3

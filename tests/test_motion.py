"""The motion gate: the reader runs when the tray changed and has come to rest, and a still
tray is not read again and again."""

from __future__ import annotations

import numpy as np

from vision.motion import MotionConfig, MotionGate
from vision.synth import render_scene


def _tray(seed: int = 5) -> np.ndarray:
    return render_scene(seed, "normal")[0]


def _feed(gate: MotionGate, frames: list[np.ndarray]) -> str:
    """One letter a frame: R read, M moving (not read), u last reads reused."""
    out = []
    for f in frames:
        m = gate.look(f)
        if m.read:
            gate.was_read()
        out.append("R" if m.read else "M" if m.moving else "u")
    return "".join(out)


def test_a_still_tray_is_read_twice_then_given_its_reads() -> None:
    tray = _tray()
    assert _feed(MotionGate(), [tray] * 8) == "RRuuuuuu"


def test_camera_noise_is_no_motion() -> None:
    rng = np.random.default_rng(1)
    tray = _tray().astype(np.int16)
    noisy = [np.clip(tray + rng.normal(0, 4, tray.shape), 0, 255).astype(np.uint8)
             for _ in range(8)]
    assert _feed(MotionGate(), noisy) == "RRuuuuuu"


def test_a_die_that_moves_is_motion_and_the_tray_is_read_once_it_rests() -> None:
    tray = _tray()
    moved = tray.copy()
    h, w = tray.shape[:2]
    # A die-sized patch shifted, as a die knocked a few pixels.
    patch = tray[h // 2 - 30:h // 2 + 30, w // 2 - 30:w // 2 + 30].copy()
    moved[h // 2 - 30 + 12:h // 2 + 30 + 12, w // 2 - 30 + 12:w // 2 + 30 + 12] = patch
    seen = _feed(MotionGate(), [tray] * 5 + [moved] * 5)
    assert seen == "RRuuu" + "MRRuu"


def test_a_change_too_slow_to_be_motion_is_still_read() -> None:
    # The light fading a level a frame never moves between two frames, but the tray is no
    # longer what was read: read again.
    tray = _tray().astype(np.int16)
    frames = [np.clip(tray - k, 0, 255).astype(np.uint8) for k in range(0, 40, 2)]
    seen = _feed(MotionGate(), frames)
    assert "M" not in seen
    assert seen.count("R") > 2  # read again once the drift added up


def test_more_confirming_reads_can_be_asked_for() -> None:
    tray = _tray()
    assert _feed(MotionGate(MotionConfig(confirm_reads=3)), [tray] * 6) == "RRRuuu"


def test_reset_forgets_the_stream() -> None:
    gate = MotionGate()
    tray = _tray()
    _feed(gate, [tray] * 4)
    gate.reset()
    assert _feed(gate, [tray] * 3) == "RRu"


def test_a_tray_that_never_stops_moving_is_still_read_now_and_then() -> None:
    rng = np.random.default_rng(2)
    frames = [rng.integers(0, 256, (120, 160, 3), np.uint8) for _ in range(31)]
    seen = _feed(MotionGate(MotionConfig(patience=10)), frames)
    assert seen[0] == "R" and seen[1:] == ("M" * 9 + "R") * 3


def test_switched_off_every_frame_is_read() -> None:
    tray = _tray()
    assert _feed(MotionGate(MotionConfig(enabled=False)), [tray] * 4) == "RRRR"


class _BusyReader:
    """Reads nothing, but takes CPU time as a reader does."""

    def read(self, frame: np.ndarray) -> list:
        sum(i * i for i in range(200_000))
        return []


def test_a_slower_machine_drops_the_frames_that_come_while_it_is_busy() -> None:
    from vision.pace import Pace

    tray = _tray()
    frames = [(i / 15, tray if i < 20 else tray[::-1].copy()) for i in range(40)]

    def run(pace: Pace) -> Pace:
        for t, image in frames:
            if pace.busy(t):
                continue
            pace.start()
            pace.dice(_BusyReader(), image)
            pace.done(t)
        return pace

    here, slow = run(Pace()), run(Pace(cpu_factor=200.0))
    assert here.dropped == 0 and here.reads + here.reused + here.moving == 40
    assert slow.dropped > 0 and slow.reads + slow.reused + slow.moving + slow.dropped == 40
    assert slow.reads < here.reads  # the changed tray is read once it is free again


def _demo_frames() -> list:
    from vision.demo import DemoSource, Timing, Turn

    turns = [Turn("red", ("red", "red", "red", "white"), (4, 2, 4, 6), 4),
             Turn("blue", ("blue", "blue", "blue"), (1, 5, 5), 5)]
    src = DemoSource(turns, seed=3, size=(960, 720), hand_p=0.0,
                     timing=Timing(lead_in=4, fall=5, settle=12, lift=3, rest=8, scoop=3,
                                   empty=8))
    return list(src)


def test_dice_that_leave_are_seen_without_a_read_and_agree_with_one() -> None:
    """After a placement the tray is told from the last read less the dice that left, and
    that is what a read of it gives."""
    from vision.pace import Pace
    from vision.reader import DiceReader

    reader = DiceReader()
    pace = Pace()
    seen = []
    for f in _demo_frames():
        dice = pace.dice(reader, f.image)
        if dice is not None and f.meta["truth"]["phase"] == "rest":
            seen.append((f, [d.value for d in dice]))
    assert pace.removals >= 1
    for f, values in seen[-1:]:
        assert sorted(values) == sorted(d.value for d in reader.read(f.image))
    # The first turn placed its 4s: the 2 and the white 6 stay.
    assert sorted(seen[0][1]) == [2, 6]


def test_a_die_that_moves_or_comes_is_no_removal() -> None:
    gate = MotionGate()
    tray = _tray()
    h, w = tray.shape[:2]
    box = (w / 2 - 30, h / 2 - 30, w / 2 + 30, h / 2 + 30)
    for _ in range(3):
        if gate.look(tray).read:
            gate.was_read()
    assert gate.settled
    moved = tray.copy()
    patch = tray[h // 2 - 30:h // 2 + 30, w // 2 - 30:w // 2 + 30].copy()
    moved[h // 2 - 18:h // 2 + 42, w // 2 - 18:w // 2 + 42] = patch
    assert gate.look(moved).changed
    assert gate.removed([box], tray.shape) is None  # moved, not gone: read it
    gate.reset()
    for _ in range(3):
        if gate.look(tray).read:
            gate.was_read()
    came = tray.copy()
    came[10:70, 10:70] = patch  # a die where there was none
    assert gate.look(came).changed
    assert gate.removed([box], tray.shape) is None

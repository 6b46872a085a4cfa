"""One camera loop's pace, for the live table and for replays alike: which frames are read.

`Pace` puts the motion gate (`vision.motion`) in front of the reader, and, for a replay that
is to tell the truth about a slower machine, plays that machine's clock: with `cpu_factor` K
each frame's work costs K times its CPU time here, and the frames that come while the loop is
still busy are dropped, as a live camera drops them. `serve` and `track` both go through it,
so a replay at K = 4 lives what a Raspberry Pi 4 at the table would.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .motion import MotionConfig, MotionGate


class _Reader(Protocol):
    def read(self, frame: np.ndarray) -> Sequence[Any]: ...


class Pace:
    """Frame by frame: `busy(t)` (drop it?), `start()`, `dice(reader, image)` (None: the tray
    moves, feed nothing), `done(t)`; `cost()` is the frame's work so far, in the played
    machine's seconds."""

    def __init__(self, motion: MotionConfig | None = None,
                 cpu_factor: float | None = None) -> None:
        if cpu_factor is not None and not cpu_factor > 0:
            raise ValueError(f"cpu_factor must be above 0, not {cpu_factor}")
        self.gate = MotionGate(motion)
        self.cpu_factor = cpu_factor
        self.reads = self.reused = self.moving = self.dropped = 0
        self.removals = 0  # changes worked out as dice leaving, without a read
        self._last: Sequence[Any] | None = None
        self._busy_until = -math.inf
        self._started = 0.0

    def busy(self, t: float) -> bool:
        """Whether a frame of stream time `t` comes while the played machine is still at the
        last one (counted as dropped); never without a `cpu_factor`."""
        if self.cpu_factor is not None and t < self._busy_until:
            self.dropped += 1
            return True
        return False

    def start(self) -> None:
        """A frame's work begins (its CPU time is counted from here)."""
        self._started = time.thread_time()

    def cost(self) -> float:
        """The seconds the frame's work has cost so far, on the played machine."""
        return (time.thread_time() - self._started) * (self.cpu_factor or 1.0)

    def done(self, t: float) -> None:
        """The frame of stream time `t` is done: the played machine is busy until then."""
        if self.cpu_factor is not None:
            self._busy_until = t + self.cost()

    def dice(self, reader: _Reader, image: np.ndarray) -> Sequence[Any] | None:
        """The frame's dice: read, or the last read given again while the tray has not
        changed; None while it moves. A read that raises leaves the gate as it was, so the
        next frame is read."""
        motion = self.gate.look(image)
        if motion.moving and not motion.read:
            self.moving += 1
            return None
        if motion.reuse and self._last is not None:
            self.reused += 1
            return self._last
        if motion.changed and self._last is not None:
            gone = self.gate.removed([d.bbox for d in self._last], image.shape)
            if gone is not None:
                # Dice left and nothing else changed: the placement needs no read.
                left = set(gone)
                self._last = [d for i, d in enumerate(self._last) if i not in left]
                self.gate.confirm()
                self.removals += 1
                return self._last
        dice = reader.read(image)
        self.gate.was_read()
        self._last = dice
        self.reads += 1
        return dice

    def reset(self) -> None:
        """A new stream, camera or profile: the next frame is read afresh."""
        self.gate.reset()
        self._last = None

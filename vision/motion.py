"""Motion first, dice second: a cheap look at every frame decides when the reader runs.

Reading a frame costs a Raspberry Pi several hundred milliseconds; looking at a 160 px grey
copy of it costs about one. Most frames at a table show a tray that does not change (between
turns, while people talk) or dice still tumbling, and neither needs a read: the first gives
what the last read gave, the second will be stale before the read ends. So each frame is
compared, small and blurred, with the frame before it (is anything moving?) and with the
frame the reader last read (has anything changed since?). The reader runs on a still frame
that changed, and once more on the next still frame to confirm; a still frame that has not
changed since a confirmed read is given that read again. A hand over the tray, a flicker or a
bumped lid is motion, then a change: it costs a read or two, and the tracker, which decides
what is a roll, sees no new dice in it.

This is Frigate's design (motion detection on a small grey frame decides when the object
detector runs), cut down to a tray that is either still or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class MotionConfig:
    # Off, every frame is read (a test of the loop itself, or a camera the gate misjudges).
    enabled: bool = True
    # Wide enough that a die (about 40 px of 1280) is 5 px, small enough to cost ~1 ms.
    width: int = 160
    # A pixel of the blurred grey copy that moved this many levels (of 255) has changed:
    # above sensor noise and a Pi camera's frame-to-frame exposure steps, below a die's
    # edge against any tray.
    level: int = 14
    # This share of the copy's pixels changed is motion: a die settling by a few pixels
    # changes about 0.1% of them; noise and compression speckle stay well under.
    share: float = 0.0008
    # Still frames read after a change before reads are given again: the second confirms
    # that the first did not catch a die still rocking.
    confirm_reads: int = 2
    # A tray moving for this many frames running (a second at 15 fps) is read anyway, once
    # per so many frames: a camera that is never still (a shaking table, noise above the
    # level) is read slowly rather than never, and a hand lingering over the tray costs a
    # read a second.
    patience: int = 15


@dataclass(frozen=True)
class Motion:
    """What one frame showed: `moving` (against the frame before), `changed` (against the
    frame last read), and whether the reader should run on it (`read`) or its last reads
    stand (`reuse`); neither while the tray moves."""

    moving: bool
    changed: bool
    read: bool
    reuse: bool
    share: float  # the share of pixels that differ from the frame before


class MotionGate:
    """Says, frame by frame, whether the reader must look (`look`), and is told when it did
    (`was_read`, of the frame it last looked at). One per camera stream."""

    def __init__(self, config: MotionConfig | None = None) -> None:
        self.config = config or MotionConfig()
        self._previous: np.ndarray | None = None
        self._read: np.ndarray | None = None  # the copy of the frame last read
        self._reads_since_change = 0
        self._moving_for = 0  # frames moving in a row
        self.settled = False

    def small(self, image: np.ndarray) -> np.ndarray:
        """The frame as the gate compares it: grey, `width` wide, lightly blurred."""
        h, w = image.shape[:2]
        width = min(self.config.width, w)
        height = max(1, round(h * width / w))
        small = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
        if small.ndim == 3:
            small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)  # shrunk first: 64x fewer pixels
        return cv2.GaussianBlur(small, (3, 3), 0)

    def _differs(self, a: np.ndarray | None, b: np.ndarray) -> float:
        if a is None or a.shape != b.shape:
            return 1.0
        return float(np.count_nonzero(cv2.absdiff(a, b) > self.config.level)) / b.size

    def look(self, image: np.ndarray) -> Motion:
        """Judge one frame (frames in stream order)."""
        if not self.config.enabled:
            return Motion(False, True, True, False, 0.0)
        now = self.small(image)
        # The first frame has nothing before it: it is a change, not motion.
        share = 0.0 if self._previous is None else self._differs(self._previous, now)
        self._previous = now
        moving = share > self.config.share
        changed = self._differs(self._read, now) > self.config.share
        if changed:
            self._reads_since_change = 0
        if moving:
            self._moving_for += 1
            if self._moving_for % self.config.patience:
                return Motion(True, changed, False, False, share)
            return Motion(True, changed, True, False, share)  # moving too long: read anyway
        self._moving_for = 0
        confirmed = self._reads_since_change >= self.config.confirm_reads
        if changed or not confirmed:
            return Motion(False, changed, True, False, share)
        return Motion(False, False, False, True, share)

    def was_read(self) -> None:
        """The reader has read the frame last looked at: later frames are compared with it."""
        self._read = self._previous
        self._reads_since_change += 1
        # The last read is of a settled tray once it is confirmed (see `removed`).
        self.settled = self._reads_since_change >= self.config.confirm_reads

    def removed(self, boxes: Sequence[Sequence[float]], shape: Sequence[int]
                ) -> list[int] | None:
        """Which of the last read's dice (`boxes`, in the frame's pixels; the frame of `shape`)
        have left the tray, where that is all that changed since the read; None where anything
        else changed (a die moved or a new one came, a hand, the light) or the tray was not
        settled, and the reader must look.

        A die that left changed its own box and left floor there: its box now looks like the
        floor around it. Nothing changed outside the dice's boxes."""
        if not self.settled or self._read is None or self._previous is None:
            return None
        before, now = self._read, self._previous
        if before.shape != now.shape:
            return None
        k = now.shape[1] / float(shape[1])
        changed = cv2.absdiff(before, now) > self.config.level
        h, w = now.shape
        inside = np.zeros_like(changed)
        cells = []
        for b in boxes:
            x0, y0, x1, y1 = (float(v) * k for v in b)
            pad = 0.25 * max(x1 - x0, y1 - y0) + 1
            cell = (max(0, int(x0 - pad)), max(0, int(y0 - pad)),
                    min(w, int(np.ceil(x1 + pad))), min(h, int(np.ceil(y1 + pad))))
            cells.append(cell)
            inside[cell[1]:cell[3], cell[0]:cell[2]] = True
        if np.count_nonzero(changed & ~inside) > self.config.share * changed.size:
            return None
        gone = []
        for i, (a0, b0, a1, b1) in enumerate(cells):
            if a1 - a0 < 2 or b1 - b0 < 2:
                return None
            if not np.mean(changed[b0:b1, a0:a1]) > 0.1:
                continue  # this die stayed
            # Left floor behind: the cell is now as even as the floor, and as light.
            ring = now[max(0, 2 * b0 - b1):min(h, 2 * b1 - b0),
                       max(0, 2 * a0 - a1):min(w, 2 * a1 - a0)].astype(np.float32)
            cell = now[b0:b1, a0:a1].astype(np.float32)
            floor = float(np.median(ring))
            if (abs(float(np.median(cell)) - floor) > self.config.level
                    or float(np.percentile(np.abs(cell - floor), 90)) > 2 * self.config.level):
                return None
            gone.append(i)
        return gone or None

    def confirm(self) -> None:
        """The dice of the frame last looked at were worked out without the reader (`removed`):
        later frames are compared with it, and given those dice, as after a confirmed read."""
        self._read = self._previous
        self._reads_since_change = self.config.confirm_reads
        self.settled = True

    def reset(self) -> None:
        """Forget what was seen (a new stream, a new camera)."""
        self._previous = self._read = None
        self._reads_since_change = 0
        self._moving_for = 0
        self.settled = False

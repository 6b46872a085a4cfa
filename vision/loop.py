"""The camera loop, one for the live table and for replays: frames from a source, read at a
pace (`vision.pace`), into the turn tracker.

`serve` runs it in the table session's thread, with hooks for what the table does around it
(calibration takes frames, the events become actions, errors go on the pages); `track` runs
it with none and prints the events. Since both go through this one loop, a replay at
`--cpu-factor` lives what the table would on the slower machine, frame for frame.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from .motion import MotionConfig
from .pace import Pace
from .sources import Frame, Source
from .tracker import Event, Reader, TurnFacts, TurnTracker


class LoopHooks:
    """What the loop's caller does around it. Each hook does nothing by default, and an
    error is raised on: a replay stops at it, while the table records it and goes on."""

    def go_on(self) -> bool:
        """Asked at every turn of the loop: False ends it (the table stops, say)."""
        return True

    def no_frame(self, source: Source) -> None:
        """The source gave no frame now: lost, reconnecting, or at its end (`source.ended`)."""

    def frame(self, frame: Frame) -> bool:
        """A frame the loop will work on (not dropped): False if the caller took it
        (calibration reads its own frames), so the dice are not read."""
        return True

    def seen(self, frame: Frame | None, dice: Sequence[Any], events: list[Event],
             tracker_was: str) -> None:
        """The tracker was fed `dice` (`frame` None: the stream's end) and said `events`.

        Called under the loop's lock, right after the tracker, so what the events change is
        changed before anyone else sees the tracker's new state (`tracker_was` is the state
        it had before)."""

    def done(self, frame: Frame) -> None:
        """The frame's work went through."""

    def unread(self, frame: Frame, exc: Exception) -> None:
        """The reader failed on this frame (a frame it cannot take, a net that raised)."""
        raise exc

    def failed(self, frame: Frame, exc: Exception) -> None:
        """Something else failed on this frame (a hook, an event's handling)."""
        raise exc

    def at_end(self) -> bool:
        """The source ended: whether the tracker is to report what it still holds back."""
        return True


class CameraLoop:
    """Frames of a source, at a pace, through the reader into `tracker`, until the source ends
    or a hook says stop; `run` yields the tracker's events in stream order.

    `tracker` may be replaced between frames (a new game starts afresh); `lock` is held while
    the tracker is fed and its events handed on.
    """

    def __init__(self, reader: Reader, tracker: TurnTracker | None = None,
                 pace: Pace | None = None, hooks: LoopHooks | None = None,
                 lock: AbstractContextManager[Any] | None = None) -> None:
        self.reader = reader
        self.tracker = tracker if tracker is not None else TurnTracker()
        self.pace = pace if pace is not None else Pace(MotionConfig(enabled=False))
        self.hooks = hooks or LoopHooks()
        self.lock: AbstractContextManager[Any] = (lock if lock is not None
                                                  else contextlib.nullcontext())

    def run(self, source: Source) -> Iterator[Event]:
        """Follow `source` to its end (then the tracker's held-back events) or to a stop."""
        while self.hooks.go_on():
            frame = source.read()
            if frame is None:
                self.hooks.no_frame(source)
                if source.ended:
                    yield from self._end()
                    return
                continue
            yield from self.step(frame)

    def step(self, frame: Frame) -> list[Event]:
        """One frame: dropped while the (played) machine is busy, else read at the pace."""
        if frame.image is None or self.pace.busy(frame.t):
            return []
        self.pace.start()
        events: list[Event] = []
        try:
            if self.hooks.frame(frame):
                events = self._read(frame)
            self.hooks.done(frame)
        except Exception as exc:
            self.hooks.failed(frame, exc)
        self.pace.done(frame.t)
        return events

    def _read(self, frame: Frame) -> list[Event]:
        try:
            dice = self.pace.dice(self.reader, frame.image)
        except Exception as exc:
            self.hooks.unread(frame, exc)
            return []
        if dice is None:
            return []  # dice tumbling or a hand over the tray: a read would be stale at once
        with self.lock:
            tracker = self.tracker
            was = tracker.state
            events = tracker.feed(frame.index, frame.t, dice, frame.image)
            self.hooks.seen(frame, dice, events, was)
        return events

    def _end(self) -> list[Event]:
        if not self.hooks.at_end():
            return []
        with self.lock:
            tracker = self.tracker
            was = tracker.state
            events = tracker.flush()
            self.hooks.seen(None, [], events, was)
        return events


class _Recorded(Source):
    """(index, t, image) triples as a source; an image given as None (a frame the recording
    lost) is passed over like a dropped frame."""

    def __init__(self, frames: Iterable[tuple[int, float, np.ndarray | None]]) -> None:
        super().__init__()
        self._frames = iter(frames)
        self._set_state("running", "playing")

    def read(self) -> Frame | None:
        for index, t, image in self._frames:
            if image is not None:
                return Frame(index, t, image)
        self._set_state("closed", "the recording ended")
        return None


def track_stream(frames: Iterable[tuple[int, float, np.ndarray | None]] | Source,
                 reader: Reader, facts: TurnFacts | None = None,
                 tracker: TurnTracker | None = None, pace: Pace | None = None
                 ) -> Iterator[Event]:
    """Replay a recorded stream through the camera loop: the events in stream order.

    Frames are read at `pace` (the motion gate as the live table has it, and a slower
    machine's clock if asked); every frame is read without one. At the end of the stream, a
    removal still waiting for its hold time is reported, so the last turn of a recording is
    not lost. Pass `tracker` to replay with other windows.
    """
    if tracker is None:
        tracker = TurnTracker(facts)
    elif facts is not None:
        tracker.expect(facts)
    source = frames if isinstance(frames, Source) else _Recorded(frames)
    yield from CameraLoop(reader, tracker, pace).run(source)

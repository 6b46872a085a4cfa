"""The candidate dice of one frame, an array per field (like supervision's `Detections`): what
the proposing stage hands to the merging one, and what `Reading.proposals` shows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .boxes import Box
from .valuenet import NOT_A_DIE, UNREADABLE


@dataclass
class Candidates:
    """N candidate boxes and what the detector and the value nets said of each."""

    boxes: np.ndarray  # (N, 4) float64, frame px
    score: np.ndarray  # (N,) float32: the detector's peak
    margin: np.ndarray  # (N,) float64: how far the predicted box stays inside the frame (px)
    probs: np.ndarray  # (N, 8) float32: the value nets' class probabilities
    crops: np.ndarray | None  # (N, ...) float32: the crops they were read on (None: N == 0)
    eligible: np.ndarray  # (N,) bool: may be reported (peak x die probability held up)
    rescued: np.ndarray  # (N,) bool: replaced by its refined box when judged again
    toned: np.ndarray  # (N,) bool: found only in the frame re-toned
    die_p: np.ndarray  # (N,) float32: the nets' belief that the box holds a die

    @classmethod
    def empty(cls) -> Candidates:
        return cls.of([], np.zeros(0, np.float32), np.zeros(0), None,
                      np.zeros((0, UNREADABLE + 1), np.float32), np.zeros(0, bool))

    @classmethod
    def of(cls, boxes: Sequence[Sequence[float]], score: np.ndarray, margin: Sequence[float],
           crops: np.ndarray | None, probs: np.ndarray, eligible: np.ndarray,
           rescued: np.ndarray | None = None, toned: np.ndarray | None = None) -> Candidates:
        n = len(boxes)
        return cls(boxes=np.array(boxes, np.float64).reshape(n, 4), score=score,
                   margin=np.asarray(margin, np.float64), probs=probs, crops=crops,
                   eligible=np.asarray(eligible, bool),
                   rescued=np.zeros(n, bool) if rescued is None else rescued,
                   toned=np.zeros(n, bool) if toned is None else toned,
                   die_p=1.0 - probs[:, NOT_A_DIE])

    def __len__(self) -> int:
        return len(self.boxes)

    def box_list(self) -> list[Box]:
        """The boxes as tuples of floats (exactly the floats they were made of)."""
        return [(float(a), float(b), float(c), float(d)) for a, b, c, d in self.boxes]

    def summary(self) -> Candidates:
        """A copy without the crops: what a reading keeps of the candidates."""
        return replace(self, **{k: None if v is None or k == "crops" else np.array(v, copy=True)
                                for k, v in vars(self).items()})


def shows_face(probs: np.ndarray, least: int, sure: float) -> np.ndarray:
    """Which of the value nets' answers name a face of `least` pips or more with at least
    `sure`: the test every look that keeps a box for its face is held to, so that they
    compare."""
    best = probs.argmax(axis=1)
    return (best >= least) & (best <= 6) & (probs[np.arange(len(probs)), best] >= sure)


def detections_arrays(dets: Sequence[Any]) -> tuple[list[Box], np.ndarray, list[float]]:
    """Boxes, peaks (float32) and margins of detector detections."""
    return ([d.bbox for d in dets], np.array([d.score for d in dets], np.float32),
            [d.margin for d in dets])

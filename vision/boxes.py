"""Box maths, once for the whole package: boxes are (x0, y0, x1, y1) in frame pixels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .config import DEFAULT, SameDieConfig

Box = tuple[float, float, float, float]


def intersection(a: Sequence[float], b: Sequence[float]) -> float:
    """The area two boxes share."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Overlap measure; degenerate boxes overlap nothing rather than dividing by zero."""
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def inside_share(a: Sequence[float], b: Sequence[float]) -> float:
    """The share of the smaller of two boxes that lies inside the other."""
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return intersection(a, b) / smaller if smaller > 0 else 0.0


def same_die(a: Sequence[float], b: Sequence[float], same: SameDieConfig = DEFAULT.same_die
             ) -> bool:
    """Whether two boxes are one die seen twice: dice do not overlap seen from above, so boxes
    overlapping this much are one die, and so is a box lying mostly inside another (a pip or a
    face of a die taken for a die of its own: IoU alone misses it)."""
    return iou(a, b) >= same.iou or inside_share(a, b) >= same.inside


def box_side(box: Sequence[float]) -> float:
    """A box's mean side (px, at least 1): the die's size as its box gives it."""
    return max(1.0, ((box[2] - box[0]) + (box[3] - box[1])) / 2.0)


def scaled(box: Sequence[float], k: float) -> Box:
    """The box scaled about its centre by k, keeping its shape."""
    x0, y0, x1, y1 = box
    cx, cy, hw, hh = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2 * k, (y1 - y0) / 2 * k
    return (cx - hw, cy - hh, cx + hw, cy + hh)


def within_frame(det: Any, tolerance: float) -> bool:
    """Whether a detection's predicted box reaches past the frame edge by no more than
    `tolerance` of its side: a whole die (`det.margin` is how far the predicted box, before
    clipping, stays inside the frame)."""
    return det.margin >= -tolerance * box_side(det.bbox)


def median_side(dets: Sequence[Any]) -> float:
    """The typical side of the dice a detector look found (frame px): the size the looks
    are sized by and the specks are judged against."""
    return float(np.median([box_side(d.bbox) for d in dets]))


def one_box_per_die(boxes: Sequence[Sequence[float]], die_p: np.ndarray, eligible: np.ndarray,
                    same: SameDieConfig = DEFAULT.same_die) -> list[int]:
    """Indices of the eligible boxes to report, surest first: a box on the same die as a surer
    one (`same_die`) is that die again."""
    kept: list[int] = []
    for i in np.argsort(-die_p, kind="stable"):
        if eligible[i] and not any(same_die(boxes[i], boxes[j], same) for j in kept):
            kept.append(int(i))
    return kept

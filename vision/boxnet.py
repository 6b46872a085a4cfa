"""Bring a detector's box to its die's edges with a small learned refiner (`models/boxnet.onnx`).

The detector marks dice on a grid a quarter of its 512 px input and guesses each box's size
there, so its boxes sit a few pixels off: under a low lamp a box takes in the die's shadow,
in a cluster it may hold only part of the die. A box that overlaps its die by less than half
(IoU) is a miss and an invented die at once, for the benchmark and for the tracker alike.
The refiner looks at the box's surroundings at the frame's own resolution (a crop 1.6 times
the box's longer side) and says where the die's four edges are. Trained by
`training/train_boxnet.py`. The reader moves its boxes last, after the value nets and the
checks that were tuned on the detector's boxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .boxes import iou
from .valuenet import crop_for, load_onnx

DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "boxnet.onnx"
CROP_SCALE = 1.6  # the crop square over the box's longer side: room for a die the box cuts
CROP_SIZE = 32
# How far a box is moved towards the refiner's answer. The detector's box and the refiner's
# are two estimates of the die's; on the held-out halves (detector boxes matched to dice, mean
# IoU with the labels, detector alone / moved 0.5 / 0.7 / all the way): byler 0.803 / 0.814 /
# 0.811 / 0.800, rune55 0.783 / 0.801 / 0.802 / 0.798, mounted renders 0.813 / 0.849 / 0.857 /
# 0.854, loose renders 0.639 / 0.748 / 0.790 / 0.833, synthetic 0.877 / 0.924 / 0.939 /
# 0.947. The photos do best near 0.5-0.8, where the labels' convention (side faces, a smear)
# is the refiner's weakest; 0.7 keeps both photo sets within 0.003 of their best.
TRUST = 0.7
# A refined box is taken only where it still overlaps the detector's this much: a refiner
# that moved a box further has not found that box's die but another (a neighbour, a shadow).
KEEP_IOU = 0.4


class BoxNet:
    """The trained refiner, loaded once per reader."""

    def __init__(self, path: str | Path | None = None, threads: int = 1) -> None:
        self.path, self.net, self.meta = load_onnx(path or DEFAULT_MODEL, "train_boxnet",
                                                   threads)
        self.scale = float(self.meta.get("crop_scale", CROP_SCALE))
        self.size = int(self.meta.get("crop_size", CROP_SIZE))

    def crop(self, image_bgr: np.ndarray, bbox: Sequence[float]) -> np.ndarray:
        return crop_for(image_bgr, bbox, 3, None, self.scale, self.size)

    def edges(self, image_bgr: np.ndarray, boxes: Sequence[Sequence[float]]) -> np.ndarray:
        """The net's raw answer per box, (N, 4): the die's left, top, right and bottom edges
        relative to the box's centre, in units of the box's longer side."""
        if len(boxes) == 0:
            return np.zeros((0, 4), np.float32)
        edges = self.net.run(np.stack([self.crop(image_bgr, b) for b in boxes]))
        return np.asarray(edges, np.float32).reshape(len(boxes), 4)

    def refine(self, image_bgr: np.ndarray, boxes: Sequence[Sequence[float]]
               ) -> list[tuple[float, float, float, float]]:
        """Each box moved to its die's edges (clipped to the frame), or kept where the answer
        is no box or one far from the detector's (see KEEP_IOU)."""
        out = []
        for box, e in zip(boxes, self.edges(image_bgr, boxes), strict=True):
            new = apply_edges(box, e, image_bgr.shape)
            new = tuple(float(b) + TRUST * (n - float(b)) for n, b in zip(new, box, strict=True))
            ok = new[2] - new[0] >= 2 and new[3] - new[1] >= 2 and iou(new, box) >= KEEP_IOU
            out.append(new if ok else tuple(float(v) for v in box))
        return out


def apply_edges(box: Sequence[float], edges: Sequence[float], shape: Sequence[int] | None
                ) -> tuple[float, float, float, float]:
    """The box the refiner's answer for `box` describes, clipped to a frame of `shape` (not
    clipped without one: how far a die reaches past the edge tells a cut one): the inverse
    of the training target (`train_boxnet._target`)."""
    x0, y0, x1, y1 = (float(v) for v in box)
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    side = max(x1 - x0, y1 - y0, 1.0)
    out = (cx + float(edges[0]) * side, cy + float(edges[1]) * side,
           cx + float(edges[2]) * side, cy + float(edges[3]) * side)
    if shape is None:
        return out
    h, w = shape[:2]
    return (max(0.0, out[0]), max(0.0, out[1]), min(float(w), out[2]), min(float(h), out[3]))

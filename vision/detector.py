"""Find every die in a frame with a small learned centre detector (`models/detector.onnx`).

A model of the tray's floor fails where the floor itself is hard to model: burnt-out or very
dark trays, strong light gradients, patterned floors, dice packed into clusters. A small fully
convolutional net, trained on synthetic box-lid scenes and the training half of the shared
photo sets (`training/train_detector.py`), marks the centre of every die on a grid a quarter
of its input size and says how big the die's box is there (CenterNet's idea, cut down to run
on a Pi's CPU). The value is read by the value nets on a full-resolution crop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

INPUT_LONG = 512  # the frame's long side at the net's input
STRIDE = 4  # output grid step in input pixels
MULTIPLE = 16  # input sides are padded up to a multiple of this (the net downsamples 4 times)
SIZE_UNIT = 16.0  # box sides are predicted as log(side / SIZE_UNIT) in input pixels
DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "detector.onnx"


@dataclass(frozen=True)
class Detection:
    bbox: tuple[float, float, float, float]  # in the frame's pixels, clipped to it
    score: float  # the centre heatmap's peak, 0..1
    # How far the predicted box, before clipping, stays inside the frame (px; negative when
    # it reaches past an edge): a die the frame cuts is predicted to go on beyond it.
    margin: float = float("inf")


def prepare(frame_bgr: np.ndarray, long_side: int = INPUT_LONG, tone: np.ndarray | None = None
            ) -> tuple[np.ndarray, float]:
    """Scale, pad and normalise one frame for the net; returns (1x3xHxW float32, scale).

    Each channel is normalised by the frame's own mean and spread, so exposure and the lamp's
    colour shift the input far less than they shift the pixels; the padding repeats the edge
    so it does not look like a dark wall. `tone`: a 256-entry lookup table applied to the
    scaled frame first (see `tone_curve`).
    """
    small, scale = _shrink(frame_bgr, long_side)
    if tone is not None:
        small = cv2.LUT(small, tone)
    return _blob(small), scale


def _shrink(frame_bgr: np.ndarray, long_side: int) -> tuple[np.ndarray, float]:
    h, w = frame_bgr.shape[:2]
    scale = long_side / max(h, w)
    nw, nw_h = max(1, round(w * scale)), max(1, round(h * scale))
    src = frame_bgr
    if scale < 0.5:
        # Halve by pixel averaging first (OpenCV's fast integer path), then finish linearly:
        # five times faster than one fractional INTER_AREA, and as free of aliasing.
        k = int(1 / scale) // 2 * 2
        src = cv2.resize(frame_bgr, (max(1, w // k), max(1, h // k)),
                         interpolation=cv2.INTER_AREA)
    # Less than a halving left: linear interpolation barely aliases and is far faster.
    return cv2.resize(src, (nw, nw_h), interpolation=cv2.INTER_LINEAR), scale


def tone_curve(gamma: float) -> np.ndarray:
    """A lookup table raising 8-bit levels to `gamma` (0..255 kept): above 1 it spreads the
    highlights of an overexposed frame apart, below 1 the shadows of a dark one."""
    return np.clip(np.round(255.0 * (np.arange(256) / 255.0) ** gamma), 0, 255).astype(np.uint8)


def space_to_depth(blob: np.ndarray) -> np.ndarray:
    """(N,C,H,W) -> (N,4C,H/2,W/2): each 2x2 block of pixels side by side as channels,
    channel c*4 + 2*row + column. A net whose first conv has stride 2 takes its input so
    rearranged once that conv is rewritten over the blocks (`training.train_detector.
    space_to_depth_stem`): the same arithmetic on 12 channels instead of 3, which the shipped
    model takes."""
    n, c, h, w = blob.shape
    return np.ascontiguousarray(blob.reshape(n, c, h // 2, 2, w // 2, 2)
                                .transpose(0, 1, 3, 5, 2, 4).reshape(n, c * 4, h // 2, w // 2))


def _blob(small: np.ndarray) -> np.ndarray:
    pw = -small.shape[1] % MULTIPLE
    ph = -small.shape[0] % MULTIPLE
    if pw or ph:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
    # cv2 computes the statistics and the planar layout several times faster than numpy.
    mean, std = cv2.meanStdDev(small)
    blob = cv2.dnn.blobFromImage(small, 1.0, mean=tuple(float(m) for m in mean.ravel()))
    for c, sd in enumerate(std.ravel()):
        blob[0, c] *= 1.0 / (float(sd) + 8.0)
    return blob


def decode(
    out: np.ndarray, scale: float, frame_shape: tuple[int, ...], threshold: float = 0.25,
    max_dice: int = 64,
) -> list[Detection]:
    """Turn the net's (1x5xhxw) output into boxes: local maxima of the centre heatmap.

    Channels: centre logit, log width, log height, x and y offset of the centre within its
    cell. A 3x3 maximum filter stands in for non-maximum suppression, as in CenterNet.
    """
    o = out[0]
    heat = 1.0 / (1.0 + np.exp(-o[0]))
    peak = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero((heat >= peak) & (heat >= threshold))
    if len(ys) == 0:
        return []
    order = np.argsort(-heat[ys, xs])[:max_dice]
    ys, xs = ys[order], xs[order]
    h, w = frame_shape[:2]
    inv = 1.0 / scale
    dets = []
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        cx = (x + float(o[3, y, x])) * STRIDE * inv
        cy = (y + float(o[4, y, x])) * STRIDE * inv
        bw = float(np.exp(np.clip(o[1, y, x], -4, 4))) * SIZE_UNIT * inv
        bh = float(np.exp(np.clip(o[2, y, x], -4, 4))) * SIZE_UNIT * inv
        raw = (cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2)
        box = (max(0.0, raw[0]), max(0.0, raw[1]), min(float(w), raw[2]), min(float(h), raw[3]))
        margin = min(raw[0], raw[1], w - raw[2], h - raw[3])
        if box[2] - box[0] >= 2 and box[3] - box[1] >= 2:
            dets.append(Detection(box, float(heat[y, x]), margin))
    return dets


class Detector:
    """The trained net, loaded once per reader."""

    def __init__(self, path: str | Path | None = None, threads: int = 1) -> None:
        from .valuenet import load_onnx

        self.path, self.net, self.meta = load_onnx(path or DEFAULT_MODEL, "train_detector",
                                                   threads)
        self.long_side = int(self.meta.get("input_long", INPUT_LONG))
        self.blocks = bool(self.meta.get("space_to_depth", False))

    def _forward(self, blob: np.ndarray) -> np.ndarray:
        return np.asarray(self.net.run(space_to_depth(blob) if self.blocks else blob), np.float32)

    def heatmap(self, frame_bgr: np.ndarray, long_side: int | None = None,
                tone: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """The raw output and the input scale (for tests and failure analysis); `tone` as
        `prepare` takes it."""
        x, scale = prepare(frame_bgr, long_side or self.long_side, tone)
        return self._forward(x), scale

    def detect(self, frame_bgr: np.ndarray, threshold: float = 0.25,
               long_side: int | None = None, tone: np.ndarray | None = None
               ) -> list[Detection]:
        """Dice in the frame; `long_side` overrides the input size (small dice need more),
        `tone` re-tones the input (see `heatmap`)."""
        out, scale = self.heatmap(frame_bgr, long_side, tone)
        return decode(out, scale, frame_bgr.shape, threshold)

    def detect_shrinking(self, frame_bgr: np.ndarray, threshold: float = 0.25, looks: int = 3
                         ) -> list[list[Detection]]:
        """Dice at the usual input, then at half and a quarter of it (large dice, see the
        reader's `_look`), `looks` in all: each smaller input is shrunk from the one before,
        not from the frame again (1 ms less for the half)."""
        small, scale = _shrink(frame_bgr, self.long_side)
        out = []
        for i in range(looks):
            if i:
                wide = small.shape[1]
                small = cv2.resize(small, (max(1, wide // 2), max(1, small.shape[0] // 2)),
                                   interpolation=cv2.INTER_AREA)
                scale *= small.shape[1] / wide
            out.append(decode(self._forward(_blob(small)), scale, frame_bgr.shape, threshold))
        return out

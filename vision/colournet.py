"""A tiny learned classifier that names a die's colour without a calibration profile.

The pip-relative rule in `colour.py` (a die's body divided by the white of its pips, nearest
built-in colour) reads most dice under any lamp, but not a glossy die whose top face mirrors
the lamp: a black die then looks white and a red one pink, although its bevels and side faces
still show the paint to anyone looking. This net sees the whole die, scaled by the same pip
white, and learns where to look. It is trained by `training/train_colournet.py` on synthetic
scenes and the renders' training halves and shipped as ONNX.

`colour_crop` is the contract between training and inference: both call it, so any change
here means retraining.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import nets
from .valuenet import crop_for, load_onnx

COLOURS = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "black", "white")
SIZE = 24  # crop side in pixels: colour needs no pip detail
CHANNELS = 6  # the die's BGR scaled by its pip white, and the rule's Lab summary
SCALE = 1.15  # crop side over the box's longer side, as for the value nets
DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "colournet.onnx"


def colour_crop(image_bgr: np.ndarray, bbox: Sequence[float], scale: Sequence[float],
                lab: Sequence[float]) -> np.ndarray:
    """The net's input for one die: (6, SIZE, SIZE) float32.

    Channels 0-2: the die, its pip white near 0.42. `scale` (per BGR channel) maps the die's
    reference white (its own white pips, or the other dice's) to `colour.PIP_WHITE`, as
    `colour.relative_colours` works it out: that takes the lamp's colour and level out.
    Unlike the value nets' crops, no per-crop normalisation: the absolute level is what
    tells black from white. Channels 3-5: the pip-relative Lab colour the built-in rule
    names the die by (`lab`, L/100, a/128, b/128), constant over the square: the net learns
    when that summary holds and when the whole die tells more.
    """
    raw = crop_for(image_bgr, bbox, 3, None, SCALE, SIZE, normalise=False)
    gain = np.asarray(scale, np.float32).reshape(3, 1, 1) / 255.0
    summary = np.asarray(lab, np.float32) / np.array([100.0, 128.0, 128.0], np.float32)
    planes = np.broadcast_to(summary.reshape(3, 1, 1), (3, SIZE, SIZE))
    return np.concatenate([np.clip(raw * gain, 0.0, 1.5) - 0.5, planes]).astype(np.float32)


class ColourNet:
    """The trained net, loaded once per reader."""

    def __init__(self, path: str | Path | None = None, threads: int = 1) -> None:
        self.path, self.net, self.meta = load_onnx(path or DEFAULT_MODEL, "train_colournet",
                                                   threads)
        names = tuple(self.meta.get("colours", COLOURS))
        if names != COLOURS:
            raise ValueError(f"{self.path.name}: trained for colours {names}, "
                             f"this reader names {COLOURS}")
        channels = int(self.meta.get("channels", CHANNELS))
        if channels != CHANNELS:
            raise ValueError(f"{self.path.name}: trained on {channels}-channel crops, "
                             f"colour_crop cuts {CHANNELS}")

    def predict(self, crops: np.ndarray) -> np.ndarray:
        """(N, CHANNELS, SIZE, SIZE) crops -> (N, len(COLOURS)) probabilities."""
        crops = np.asarray(crops, np.float32)
        if crops.ndim != 4 or crops.shape[1:] != (CHANNELS, SIZE, SIZE):
            raise ValueError(f"crops must be (N, {CHANNELS}, {SIZE}, {SIZE}), "
                             f"got {crops.shape}")
        if len(crops) == 0:
            return np.zeros((0, len(COLOURS)), np.float32)
        return nets.softmax(self.net.run(crops)).astype(np.float32)

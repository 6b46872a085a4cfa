"""Is the light good enough to read dice? Brightness, glare, shadows, evenness and flicker.

Each check looks at the tray floor only (the table around it does not matter) and gives one
line of advice a player can act on, because "reading is unreliable" alone helps nobody.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from .result import StepResult

# Thresholds, on Lab L (0..100) of the floor
DARK_L = 25.0  # median floor brightness under which pips blur into noise
BRIGHT_L = 92.0  # ... over which light dice clip
CLIP_L = 97.0  # a pixel this bright is clipped (glare)
GLARE_SHARE = 0.01  # share of clipped floor that spoils dice under it
SHADOW_SHARE = 0.15  # share of the floor far darker than its median
SHADOW_RATIO = 0.45  # "far darker": below this share of the median L
UNIFORMITY_MIN = 0.6  # 10th over 90th percentile of the coarse grid
FLICKER_MAX = 0.03  # relative frame-to-frame change of the floor's mean brightness
GRID = 8


def _lightness(frame: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(frame.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)[..., 0]


def _where(ys: np.ndarray, xs: np.ndarray, h: int, w: int) -> str:
    """Name the part of the picture a blob of pixels sits in, as a player would say it."""
    cy, cx = float(np.mean(ys)) / h, float(np.mean(xs)) / w
    vert = "top" if cy < 0.4 else "bottom" if cy > 0.6 else ""
    horiz = "left" if cx < 0.4 else "right" if cx > 0.6 else ""
    return " ".join(p for p in (vert, horiz) if p) or "centre"


def _floor(frame: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    if mask is None:
        return np.ones(frame.shape[:2], bool)
    return mask.astype(bool)


def check_brightness(frame: np.ndarray, mask: np.ndarray | None = None) -> StepResult:
    light = _lightness(frame)[_floor(frame, mask)]
    med = float(np.median(light)) if light.size else 0.0
    if med < DARK_L:
        return StepResult("brightness", False, med, "too dark: add light or raise the exposure")
    if med > BRIGHT_L:
        return StepResult("brightness", False, med, "too bright: lower the exposure or the lamp")
    return StepResult("brightness", True, med, "brightness is fine")


def check_glare(frame: np.ndarray, mask: np.ndarray | None = None) -> StepResult:
    light = _lightness(frame)
    floor = _floor(frame, mask)
    clipped = (light >= CLIP_L) & floor
    share = float(clipped.sum()) / max(1, int(floor.sum()))
    if share > GLARE_SHARE:
        ys, xs = np.nonzero(clipped)
        where = _where(ys, xs, *light.shape)
        return StepResult("glare", False, share, f"move the lamp: glare at {where}",
                          {"where": where})
    return StepResult("glare", True, share, "no glare")


def check_shadows(frame: np.ndarray, mask: np.ndarray | None = None) -> StepResult:
    light = _lightness(frame)
    floor = _floor(frame, mask)
    med = float(np.median(light[floor])) if floor.any() else 0.0
    dark = (light < SHADOW_RATIO * med) & floor
    share = float(dark.sum()) / max(1, int(floor.sum()))
    if share > SHADOW_SHARE:
        ys, xs = np.nonzero(dark)
        where = _where(ys, xs, *light.shape)
        return StepResult("shadows", False, share,
                          f"deep shadow at {where}: light the tray from above or add a lamp",
                          {"where": where})
    return StepResult("shadows", True, share, "no deep shadows")


def check_uniformity(frame: np.ndarray, mask: np.ndarray | None = None) -> StepResult:
    """Coarse-grid cells so dice and floor print do not count, only the light's fall-off."""
    light = _lightness(frame)
    floor = _floor(frame, mask)
    h, w = light.shape
    cells, centres = [], []
    for i in range(GRID):
        for j in range(GRID):
            sl = (slice(i * h // GRID, (i + 1) * h // GRID),
                  slice(j * w // GRID, (j + 1) * w // GRID))
            m = floor[sl]
            if m.mean() > 0.7:
                cells.append(float(np.median(light[sl][m])))
                centres.append(((i + 0.5) * h / GRID, (j + 0.5) * w / GRID))
    if len(cells) < 4:
        return StepResult("uniformity", False, 0.0, "too little floor visible to judge the light")
    arr = np.array(cells)
    p10, p90 = np.percentile(arr, 10), np.percentile(arr, 90)
    ratio = float(p10 / max(p90, 1e-6))
    if ratio < UNIFORMITY_MIN:
        dark = np.array(centres)[arr <= p10]
        where = _where(dark[:, 0], dark[:, 1], h, w)
        return StepResult("uniformity", False, ratio,
                          f"uneven light: the {where} is dark, move the lamp over the middle",
                          {"where": where})
    return StepResult("uniformity", True, ratio, "even light across the tray")


def check_flicker(frames: Sequence[np.ndarray], mask: np.ndarray | None = None) -> StepResult:
    """Mains-powered lamps pulse at 100/120 Hz; exposures not a multiple of it beat visibly."""
    if len(frames) < 3:
        return StepResult("flicker", False, 0.0, "need at least three frames to judge flicker")
    means = []
    for f in frames:
        light = _lightness(f)[_floor(f, mask)]
        means.append(float(light.mean()) if light.size else 0.0)
    arr = np.array(means)
    variation = float(np.abs(np.diff(arr)).mean() / max(arr.mean(), 1e-6))
    if variation > FLICKER_MAX:
        return StepResult("flicker", False, variation,
                          "mains flicker: lower the exposure time to a multiple of 10 ms")
    return StepResult("flicker", True, variation, "no flicker")


def check_light(frames: Sequence[np.ndarray], mask: np.ndarray | None = None) -> list[StepResult]:
    """Every light check on the latest frame, and flicker over all of them."""
    last = frames[-1]
    return [check_brightness(last, mask), check_glare(last, mask), check_shadows(last, mask),
            check_uniformity(last, mask), check_flicker(frames, mask)]

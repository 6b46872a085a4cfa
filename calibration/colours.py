"""Learn this table's dice colours under this lamp, and save them as the reader's profile.

Printed palettes describe dice under daylight; a warm lamp and a camera that only partly
white-balances move every colour, red toward orange and white toward yellow. Measuring each
player's dice where they will be read makes the reference exact for this table, and the
spread measured with it says how far a die may stray before it is doubted.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np

from vision.profile import ColourRef, Profile
from vision.reader import DiceReader, builtin_palette

from .result import StepResult

NEUTRALS = ("white", "gray")
MIN_SPREAD = 3.0  # Lab units; noise alone moves a die's median this much
PIP_L = 15.0  # body pixels lie within this L of the body's median; pips are far off it
CONFUSABLE = 3.0  # separation margin (distance over spread) under which colours get mixed up


@dataclass
class LearnedColour:
    name: str
    lab: tuple[float, float, float]
    spread: float
    n_dice: int
    role: str = "player"
    samples: list[tuple[float, float, float]] = field(default_factory=list)

    def ref(self) -> ColourRef:
        return ColourRef(self.name, self.lab, round(self.spread, 2), self.role)

    def swatch_bgr(self) -> tuple[int, int, int]:
        """The learned colour as a BGR swatch for the page."""
        px = np.array([[self.lab]], np.float32)
        bgr = cv2.cvtColor(px, cv2.COLOR_Lab2BGR)[0, 0]
        return tuple(round(float(v) * 255) for v in np.clip(bgr, 0, 1))


def floor_white_balance(frame: np.ndarray, mask: np.ndarray | None = None
                        ) -> tuple[float, float, float]:
    """Grey-world gains (B, G, R) from the tray floor: it is one material the lamp lights."""
    pixels = frame[mask > 0] if mask is not None else frame.reshape(-1, 3)
    if pixels.size < 30:
        pixels = frame.reshape(-1, 3)
    # leave out clipped and near-black pixels: they carry no colour
    light = pixels.astype(np.float32)
    keep = (light.max(axis=1) < 250) & (light.min(axis=1) > 5)
    if keep.sum() >= 30:
        light = light[keep]
    means = light.mean(axis=0) + 1e-3
    gains = means.mean() / means
    return tuple(float(np.clip(g, 0.2, 5.0)) for g in gains)


def _apply(frame: np.ndarray, gains: Sequence[float] | None) -> np.ndarray:
    if not gains:
        return frame
    g = np.array(gains, np.float32)
    return np.clip(frame.astype(np.float32) * g, 0, 255).astype(np.uint8)


def die_body_lab(frame: np.ndarray, bbox: Sequence[float]) -> tuple[float, float, float] | None:
    """A die's body colour: the inner half of its box, pips left out by their lightness.

    Pips are white on dark dice and black on light ones, so both lie far from the body's
    median lightness; what remains is the plastic the player's colour is.
    """
    x0, y0, x1, y1 = bbox
    cw, ch = (x1 - x0) * 0.25, (y1 - y0) * 0.25
    h, w = frame.shape[:2]
    a0, b0 = max(0, int(x0 + cw)), max(0, int(y0 + ch))
    a1, b1 = min(w, int(x1 - cw) + 1), min(h, int(y1 - ch) + 1)
    if a1 - a0 < 2 or b1 - b0 < 2:
        return None
    patch = frame[b0:b1, a0:a1].astype(np.float32) / 255.0
    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2Lab).reshape(-1, 3)
    med_l = float(np.median(lab[:, 0]))
    body = lab[np.abs(lab[:, 0] - med_l) < PIP_L]
    if len(body) < 4:
        body = lab
    return tuple(float(v) for v in np.median(body, axis=0))


def nearest_name(lab: Sequence[float]) -> str:
    """The built-in palette's name closest to a learned colour (a suggestion to confirm)."""
    refs = builtin_palette()
    d = [math.dist(lab, r.lab) for r in refs]
    return refs[int(np.argmin(d))].name


def learn_colour(frames: Sequence[np.ndarray], gains: Sequence[float] | None = None,
                 name: str | None = None, reader: DiceReader | None = None) -> LearnedColour | None:
    """One player's dice (one colour) lying in the tray in each frame -> their reference.

    Dice are found by the reader; each die gives one body colour, the reference is their
    median (robust to a die the reader mistook) and the spread covers how much they vary.
    """
    if reader is None:
        reader = DiceReader(Profile(white_balance=tuple(gains)) if gains else None)
    samples: list[tuple[float, float, float]] = []
    for frame in frames:
        balanced = _apply(frame, gains)
        for die in reader.read(frame):
            lab = die_body_lab(balanced, die.bbox)
            if lab is not None:
                samples.append(lab)
    if not samples:
        return None
    arr = np.array(samples)
    ref = np.median(arr, axis=0)
    dist = np.linalg.norm(arr - ref, axis=1)
    # a die the reader boxed badly (half floor) is far off: drop it before measuring spread
    keep = dist <= max(3 * float(np.median(dist)), 6.0)
    arr = arr[keep]
    ref = np.median(arr, axis=0)
    dist = np.linalg.norm(arr - ref, axis=1)
    spread = max(MIN_SPREAD, float(np.percentile(dist, 90)) * 1.5)
    label = name or nearest_name(ref)
    role = "neutral" if label in NEUTRALS else "player"
    return LearnedColour(label, tuple(round(float(v), 2) for v in ref), spread, len(arr), role,
                         [tuple(map(float, s)) for s in arr])


def separation(colours: Sequence[LearnedColour]) -> StepResult:
    """Smallest distance between two colours over the largest spread, and who is too close."""
    if len(colours) < 2:
        return StepResult("separation", True, math.inf, "only one colour learned")
    worst, pair = math.inf, ("", "")
    for a, b in itertools.combinations(colours, 2):
        m = math.dist(a.lab, b.lab) / max(a.spread, b.spread)
        if m < worst:
            worst, pair = m, (a.name, b.name)
    if worst < CONFUSABLE:
        return StepResult("separation", False, worst,
                          f"{pair[0]} and {pair[1]} look alike under this light: swap one of "
                          f"those sets for another colour, or use a whiter lamp",
                          {"pair": list(pair)})
    return StepResult("separation", True, worst, "all colours are well apart",
                      {"pair": list(pair)})


def learn_colours(sets: dict[str | None, Sequence[np.ndarray]] | Sequence[Sequence[np.ndarray]],
                  floor_frame: np.ndarray, floor: np.ndarray | None = None
                  ) -> tuple[list[LearnedColour], tuple[float, float, float], StepResult]:
    """Learn every set; keys are names when the players said them, else None for auto-naming.

    Returns the colours, the white-balance gains they were measured under, and the result.
    """
    gains = floor_white_balance(floor_frame, floor)
    reader = DiceReader(Profile(white_balance=gains))
    items = list(sets.items()) if isinstance(sets, dict) else [(None, f) for f in sets]
    learned: list[LearnedColour] = []
    missing = 0
    for name, frames in items:
        c = learn_colour(frames, gains, name, reader)
        if c is None:
            missing += 1
            continue
        if any(o.name == c.name for o in learned):  # two sets named alike: keep both apart
            c.name = f"{c.name}-{sum(o.name.startswith(c.name) for o in learned) + 1}"
        learned.append(c)
    sep = separation(learned)
    if missing:
        sep = StepResult("colours", False, sep.value,
                         f"{missing} set(s) showed no dice: drop them in the middle of the tray",
                         sep.details)
    else:
        sep.name = "colours"
    sep.details["colours"] = [{"name": c.name, "lab": list(c.lab), "spread": c.spread,
                               "n": c.n_dice, "swatch_bgr": list(c.swatch_bgr())}
                              for c in learned]
    return learned, gains, sep


def build_profile(colours: Sequence[LearnedColour], gains: Sequence[float] | None = None,
                  corners: Sequence[Sequence[float]] | None = None,
                  image_size: tuple[int, int] | None = None, die_side_px: float | None = None,
                  camera: dict | None = None) -> Profile:
    return Profile(
        colours=tuple(c.ref() for c in colours),
        white_balance=tuple(round(float(g), 4) for g in gains) if gains else None,
        tray_corners=tuple((float(x), float(y)) for x, y in corners) if corners is not None
        else None,
        image_size=image_size if corners is not None or image_size else None,
        die_side_px=die_side_px, camera=dict(camera or {}),
        created=datetime.now(UTC).isoformat(timespec="seconds"))


def save_profile(profile: Profile, path: str | Path) -> Path:
    """Write atomically, then read it back through the loader: a profile that would be
    refused on the next start is caught now, while the players are still at the table."""
    from vision.profile import load_profile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    profile.save(path)
    load_profile(path)
    return path

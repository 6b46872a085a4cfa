"""The pips, found by rule: a second opinion on the nets' reads (`second_opinion`), the sign
that a die read without a value is no blank one (`shows_pips`), a face with nothing pip-like
on it (`face_contrast`: Royale's blank gray dice), and the top face's size that the Biggy
check trusts (`face_side`).

Pips are small round blobs that stand out from the face around them, lighter or darker;
top-hat and black-hat filters find both kinds whatever the die's colour. Pips on side faces
(seen at an angle) are squashed, so roundness drops them; the pattern test then rejects
anything that is not a real face (glare, cocked dice).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

import cv2
import numpy as np

from .config import DEFAULT, ColourConfig, PipsConfig

# Pip centres of each face on a unit square, before rotation.
FACES: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.25, 0.25), (0.25, 0.5), (0.25, 0.75), (0.75, 0.25), (0.75, 0.5), (0.75, 0.75)],
}


def spread(pts: np.ndarray) -> float:
    """Root-mean-square distance of points from their centroid: a pip layout's size."""
    return math.sqrt(float(((pts - pts.mean(axis=0)) ** 2).sum(axis=1).mean()))


# Each face's pip spread on a unit face.
FACE_SPREAD = {n: spread(np.array(p, np.float64)) for n, p in FACES.items()}
_PERMS = {n: np.array(list(itertools.permutations(range(n))), np.intp) for n in range(1, 7)}


def second_opinion(frame: np.ndarray, box: Sequence[float], value: int,
                   cfg: PipsConfig = DEFAULT.pips) -> str | None:
    """Why a certain read may not stay certain by the pips counted by rule ("glare", "pips"),
    or None where they agree.

    The net and the pip rules fail in different ways; a value both see is far less likely to
    be wrong than either alone, and "certain" must mean well under 1 error in 1,000. A 2 or a
    4 with a bright spot in the middle of its face is never certain: glare there can hide the
    middle pip of a 3 or a 5, which neither the nets nor the count can see.
    """
    x0, y0, x1, y1 = box
    h, w = frame.shape[:2]
    # Seen from an angle, a die's box also holds one or two side faces, whose pips spoil the
    # count. The top face lies towards the side away from the camera's axis, so look at the
    # plain inset box and at an inset box shifted that way.
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    dx, dy = cx - w / 2, cy - h / 2
    norm = math.hypot(dx, dy) or 1.0
    tries = [(0.0, 0.0, cfg.inset), (dx / norm * 0.08, dy / norm * 0.08, 0.14)]
    for ox, oy, inset in tries:
        cut = face_patch(frame, box, inset, ox, oy, cfg.crop)
        if cut is None:
            continue
        if value in (2, 4) and bright_middle(cut[0], cfg.bright_middle):
            return "glare"
        count, _, fit = count_pips(cut[0])
        if count == value and fit > 0.5:
            return None
    return "pips"


def count_pips(light: np.ndarray) -> tuple[int | None, np.ndarray | None, float]:
    """The top face's pips in a lightness patch: their count (None: no face), the binary
    mask they were found in, and how well they sit where a real face puts them (0-1)."""
    pips, binary = find_pips(light)
    if binary is None:
        return None, None, 0.2  # no contrast: blurred, or no face visible
    count = len(pips)
    if not 1 <= count <= 6:
        return None, binary, 0.1
    pts = np.array([(p[0], p[1]) for p in pips], np.float32)
    areas = np.array([p[2] for p in pips], np.float32)
    scatter = float(areas.std() / areas.mean()) if count > 1 else 0.0
    fit = face_fit(pts, count) * math.exp(-((max(scatter - 0.3, 0) / 0.25) ** 2))
    return count, binary, float(fit)


def find_pips(light: np.ndarray) -> tuple[list[tuple[float, float, float]], np.ndarray | None]:
    """The pips in a square lightness patch (0-100) as (x, y, area), x and y in patch
    widths; the binary mask is None where nothing stands out enough to be a pip."""
    size = light.shape[0]
    g8 = np.clip(light * 2.55, 0, 255).astype(np.uint8)
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size // 3 | 1, size // 3 | 1))
    best: tuple[float, list, np.ndarray] | None = None
    for op in (cv2.MORPH_TOPHAT, cv2.MORPH_BLACKHAT):
        hat = cv2.morphologyEx(g8, op, k)
        peak = float(hat.max())
        if peak < 30:
            continue
        _, binary = cv2.threshold(hat, max(25.0, peak * 0.45), 255, cv2.THRESH_BINARY)
        n, _, stats, centroids = cv2.connectedComponentsWithStats(binary)
        blobs = []
        for i in range(1, n):
            a = stats[i, cv2.CC_STAT_AREA]
            bw, bh = stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]
            if not (0.003 * size * size <= a <= 0.06 * size * size):
                continue
            if max(bw, bh) / max(min(bw, bh), 1) > 1.45 or a / float(bw * bh) < 0.5:
                continue
            cx, cy = centroids[i]
            if not (0.04 * size < cx < 0.96 * size and 0.04 * size < cy < 0.96 * size):
                continue
            blobs.append((cx / size, cy / size, float(a)))
        if not blobs:
            continue
        # Keep the dominant pip size: stray specks and glare spots differ from pips.
        med = float(np.median([b[2] for b in blobs]))
        kept = [b for b in blobs if 0.45 * med <= b[2] <= 2.2 * med]
        strength = len(kept) + float(hat[binary > 0].mean()) / 255.0
        if best is None or strength > best[0]:
            best = (strength, kept, binary)
    if best is None:
        return [], None
    return best[1], best[2]


def shows_pips(frame: np.ndarray, box: Sequence[float], least: int = ColourConfig.blank_pips,
               insets: Sequence[float] = ColourConfig.pip_insets,
               crop: int = PipsConfig.crop) -> bool:
    """Whether the pip rule finds `least` pips or more in the box (at either inset): the
    only sign left that a die read without a value (cocked, smeared, tiny) is no blank one.
    A blank die rarely shows that many (a speck of noise or the shading)."""
    for inset in insets:
        cut = face_patch(frame, box, inset, crop=crop)
        if cut is not None and len(find_pips(cut[0])[0]) >= least:
            return True
    return False


@lru_cache(maxsize=4)
def _disc(size: int, radius: float) -> np.ndarray:
    """A disc of `radius` (share of the side) in the middle of a square patch."""
    return np.hypot(*(np.mgrid[0:size, 0:size] - (size - 1) / 2.0)) < radius * size


def face_contrast(frame: np.ndarray, box: Sequence[float], inset: float = 0.05,
                  middle: float = 0.32, crop: int = PipsConfig.crop) -> float | None:
    """How strongly anything pip-like stands out in the middle of a die's face: the top-hat
    and black-hat responses (lightness x 2.55) in a disc of `middle` of the patch's side,
    at their 98th percentile; None when the box is too small to look at.

    The disc lies within the top face whatever the die's turn, and every face has a pip in
    it (the middle pip, or the corner and side pips of the others), light or dark: a face
    with pips stands out there by 30 and more, a blank face only by its noise and shading.
    """
    cut = face_patch(frame, box, inset, crop=crop)
    if cut is None:
        return None
    light = cut[0]
    size = light.shape[0]
    g8 = np.clip(light * 2.55, 0, 255).astype(np.uint8)
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size // 3 | 1, size // 3 | 1))
    disc = _disc(size, middle)
    return max(float(np.percentile(cv2.morphologyEx(g8, op, k)[disc], 98))
               for op in (cv2.MORPH_TOPHAT, cv2.MORPH_BLACKHAT))


def face_patch(frame: np.ndarray, box: Sequence[float], inset: float, ox: float = 0.0,
               oy: float = 0.0, crop: int = PipsConfig.crop
               ) -> tuple[np.ndarray, int, int] | None:
    """The box inset by `inset` and shifted by (`ox`, `oy`) of its longer side, as lightness
    (Lab L) resized to `crop` square, with the cut's width and height in frame pixels; None
    when the cut is under 6 px. The pip rules find pips at one scale whatever the die's."""
    x0, y0, x1, y1 = box
    h, w = frame.shape[:2]
    side = max(x1 - x0, y1 - y0)
    m = side * inset
    a0 = max(0, int(x0 + m + ox * side))
    b0 = max(0, int(y0 + m + oy * side))
    a1 = min(w, int(x1 - m + ox * side) + 1)
    b1 = min(h, int(y1 - m + oy * side) + 1)
    if a1 - a0 < 6 or b1 - b0 < 6:
        return None
    patch = cv2.resize(frame[b0:b1, a0:a1], (crop, crop), interpolation=cv2.INTER_AREA)
    light = cv2.cvtColor(patch.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)[..., 0]
    return light, a1 - a0, b1 - b0


@lru_cache(maxsize=4)
def _middle(size: int) -> np.ndarray:
    """The middle of a face patch: a disc of 0.12 of its side, inside any 2 or 4's pips."""
    return np.hypot(*(np.mgrid[0:size, 0:size] - (size - 1) / 2.0)) < 0.12 * size


def bright_middle(light: np.ndarray, threshold: float = PipsConfig.bright_middle) -> bool:
    """Whether the middle of a face patch (lightness, square), where the 3 and the 5 have a
    pip and the 2 and the 4 none, is lighter than the face's median by `threshold` or more:
    a glare spot that may hide a pip. Right reads of 2s and 4s stay well under it."""
    middle = _middle(light.shape[0])
    return float(light[middle].mean()) - float(np.median(light)) > threshold


def face_side(frame: np.ndarray, box: Sequence[float], value: int,
              cfg: PipsConfig = DEFAULT.pips) -> float | None:
    """The top face's side in frame pixels from its pips' spread, or None when the pips
    found are not `value` of them (a 1 has no spread).

    Unlike the box, the spread grows neither with the die's turn nor with the side faces
    the camera sees; the Biggy checks lean on it. The inset box is resized to a square to
    find the pips, and their places are stretched back, since a box with side faces in it
    is not square."""
    if value < 2:
        return None
    cut = face_patch(frame, box, cfg.inset, crop=cfg.crop)
    if cut is None:
        return None
    light, cut_w, cut_h = cut
    pips, _ = find_pips(light)
    if len(pips) != value:
        return None
    pts = np.array([(p[0] * cut_w, p[1] * cut_h) for p in pips], np.float64)
    return spread(pts) / FACE_SPREAD[value]


def face_fit(pts: np.ndarray, count: int) -> float:
    """How well the pips match face `count`, in [0, 1], whatever the rotation and scale.

    Every face is symmetric about its centre, so the pips' centroid is the face centre; the
    scale comes from the pips' spread, the rotation is searched. One pip must lie near the
    middle of the die.
    """
    centre = pts.mean(axis=0)
    if count == 1:
        off = float(np.linalg.norm(centre - 0.5))
        return 0.97 * math.exp(-((max(off - 0.12, 0) / 0.1) ** 2))
    tpl = np.array(FACES[count], np.float32) - 0.5
    rel = pts - centre
    scale = math.sqrt(float((rel ** 2).sum(axis=1).mean()))
    tscale = math.sqrt(float((tpl ** 2).sum(axis=1).mean()))
    if scale < 0.08 or scale > 0.45:
        return 0.05  # pips far too close or too far apart for one face
    rel = rel / scale * tscale
    # All rotations and all pip-to-template assignments at once (at most 6! = 720).
    t = np.radians(np.arange(0, 180, 6, dtype=np.float32))
    cos, sin = np.cos(t)[:, None], np.sin(t)[:, None]
    rx = tpl[None, :, 0] * cos - tpl[None, :, 1] * sin
    ry = tpl[None, :, 0] * sin + tpl[None, :, 1] * cos
    d = np.hypot(rel[None, :, None, 0] - rx[:, None, :], rel[None, :, None, 1] - ry[:, None, :])
    perms = _PERMS[count]
    costs = d[:, np.arange(count)[None, :], perms].sum(axis=2)
    best = float(costs.min()) / count
    off = float(np.linalg.norm(centre - 0.5))
    return math.exp(-((best / 0.06) ** 2)) * math.exp(-((max(off - 0.15, 0) / 0.1) ** 2))

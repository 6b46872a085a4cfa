"""The size stage: which dice are Biggies. A Biggy is about 1.4x the side of the ordinary
dice in the same frame; Royale counts it twice, so a flag the wrong way miscounts a casino."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import cv2
import numpy as np

from .boxes import scaled
from .config import DEFAULT, PipsConfig, SizeConfig
from .pips import face_side

if TYPE_CHECKING:
    from .dieread import DieRead


def mark_big(reads: Sequence[DieRead], frame: np.ndarray, cfg: SizeConfig = DEFAULT.size,
             pips: PipsConfig = DEFAULT.pips) -> None:
    """Set each read's Biggy flag and size (its side as the test sees it).

    A die's box is axis-aligned, so an ordinary die turned 45 degrees has a box up to 1.41x
    its side, as large as a Biggy lying square. Each die's turn is read from its edges, and
    its side is divided by the box's growth at that turn (`turn_growth`) to the power
    `cfg.turn_follow`: the detector's boxes follow a turn only part of the way. The box also
    holds side faces, which the camera sees more of the further the die lies from the frame's
    centre; that growth, `cfg.perspective_growth` per frame width off the centre, is taken out
    too.
    """
    if not reads:
        return
    height, width = frame.shape[:2]
    off = np.array([abs((r.bbox[0] + r.bbox[2] - width) / 2)
                    + abs((r.bbox[1] + r.bbox[3] - height) / 2) for r in reads]) / 2
    turn = np.array([turn_growth(frame, r.bbox, cfg.turn_px) for r in reads])
    sides = (np.array([r.side for r in reads]) / turn ** cfg.turn_follow
             / (1 + cfg.perspective_growth * off / width))
    base = float(np.median(sides[sides <= np.median(sides) * cfg.typical_within]))
    for r, side in zip(reads, sides, strict=True):
        r.big = bool(side > cfg.big * base)
        r.size = float(side)
    if cfg.pip_check:
        check_big_by_pips(reads, frame, sides / base, cfg, pips)


def check_big_by_pips(reads: Sequence[DieRead], frame: np.ndarray, ratio: np.ndarray,
                      cfg: SizeConfig = DEFAULT.size, pips: PipsConfig = DEFAULT.pips) -> None:
    """Clear a Biggy flag that the die's pips deny, and shrink the box that gave it.

    A box still grows with a turn the edges misjudge and with side faces, but the spread of
    the top face's pips does neither: it scales with the face alone. A die flagged big by its
    box (`ratio`: its side over the typical die's) whose pips spread no wider than those of
    the ordinary dice beside it (under `cfg.pip_big` times their median) is an ordinary die.
    Only ever clears a flag: dice of several makers, whose pips sit closer or further apart,
    would come out big the other way round. Boxes far beyond a Biggy's size are left to the
    box.
    """
    doubtful = [i for i, r in enumerate(reads)
                if r.big and ratio[i] <= cfg.pip_check_max and r.value is not None
                and r.value >= 2]
    if not doubtful:
        return
    # The ordinary dice to compare with: the few whose boxes are nearest the typical one.
    plain = sorted((i for i, r in enumerate(reads)
                    if not r.big and r.value is not None and r.value >= 2),
                   key=lambda i: abs(ratio[i] - 1.0))
    faces = []
    for i in plain:
        face = face_side(frame, reads[i].bbox, reads[i].value, pips)
        if face is not None:
            faces.append(face)
            if len(faces) == cfg.pip_references:
                break
    if len(faces) < 2:
        return
    typical = float(np.median(faces))
    for i in doubtful:
        read, grown = reads[i], float(ratio[i])
        face = face_side(frame, read.bbox, read.value, pips)
        if face is None:
            # In a box much larger than the die the face fills too little of the patch for
            # its pips to be found: look again within a box of the typical die's size (a
            # Biggy looked at so shows too few pips, or pips spread as wide as a Biggy's).
            face = face_side(frame, scaled(read.bbox, 1.0 / grown), read.value, pips)
        if face is not None and face <= cfg.pip_big * typical:
            read.big = False
            read.size = read.size / grown * face / typical
            # Its box is as wrong as its flag, grown round the die by a shadow or a
            # neighbour's edge: shrunk about its centre to the size its pips give, it fits
            # the die. (Centred on the pips instead, it would move: pips are found a few
            # pixels off the middle of the face.)
            k = min(1.0, max(face / typical, 1.0) / grown)
            read.bbox, read.side = scaled(read.bbox, k), read.side * k


def turn_growth(frame: np.ndarray, box: Sequence[float], size: int = SizeConfig.turn_px
                ) -> float:
    """How much larger than the die's side its axis-aligned box is at the die's turn,
    |cos a| + |sin a| (1 to 1.41), with the turn read from the box's edges (looked at `size`
    square): a die's outline and its pips' rows run at the turn and at right angles to it,
    so the gradient directions, taken four-fold, point at it."""
    h, w = frame.shape[:2]
    x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
    x1, y1 = min(w, math.ceil(box[2])), min(h, math.ceil(box[3]))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return 1.0
    grey = cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    grey = cv2.resize(grey, (size, size), interpolation=cv2.INTER_AREA).astype(np.float32)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1)
    # Each gradient's direction four-fold, weighted by its strength: r^2 e^(4ia), from the
    # double angle (gx^2 - gy^2, 2 gx gy) = r^2 e^(2ia) squared and divided by r^2.
    c2, s2 = gx * gx - gy * gy, 2 * gx * gy
    r2 = gx * gx + gy * gy + 1e-6
    a = math.atan2(float((2 * c2 * s2 / r2).sum()), float(((c2 * c2 - s2 * s2) / r2).sum())) / 4
    return abs(math.cos(a)) + abs(math.sin(a))

"""Read every die in one frame: where it is, its pips, its colour, and how sure we are.

A learned detector proposes the dice, the value nets read each box's top face, and checks
of their own (pips counted by rule, a wider view, nets that see what a die rests on) decide
how sure each read is. A value is only reported as certain when nothing doubts it; anything
else (a cocked die, motion blur, a glare spot, a die cut by the frame's edge) is asked about,
because a confident wrong value would silently corrupt a game.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from .profile import ColourRef, Profile

FLOOR_SIZE = 160  # long side of the thumbnail whose median level says a frame is dark or bright
CROP = 64  # side of the face patch the pip count looks at
BOX_PAD = 0.08  # share of the die side added around the mask's box
CERTAIN = 0.9  # confidence from which a read is applied without asking (DESIGN.md)
SURE_FROM = 0.94  # the nets' probability that becomes CERTAIN (see calibrated)...
CALIBRATED_BELOW = 0.8  # ...leaving probabilities up to this one as they are
DETECT_MIN = 0.2  # detector heatmap peaks looked at by the value net
KEEP_MIN = 0.25  # detector peak x value-net die probability for a box to be reported
FAINT_PEAK = 0.15  # a weaker peak of the usual look, on no die found, is a die only where...
FAINT_DIE = 0.95  # ...the nets are this sure it holds a die...
FAINT_FACE = 0.8  # ...and read a face this surely (never certain: see SURE_PEAK)
SAME_DIE_IOU = 0.3  # two reported boxes overlapping this much are one die seen twice
SAME_DIE_INSIDE = 0.6  # ...as is a box with this share of itself inside a surer one
RESCUE_SURE = 0.75  # ...unless the nets are this sure it is a die, and the refined boxes part
PART_LEAST = 0.5  # ...and a dropped box reaching past a kept one by this share of its side...
PART_FACE = 0.8  # ...holds a die there where its refined remainder shows a face this surely
MIRROR_BELOW = 0.9  # a box the value nets read less surely is read again, mirrored...
REFINED_LOOK = 0.5  # ...and refined, this answer's weight against the first two's average
LEAN_DOUBT = 0.03  # value-net belief in "cocked or smeared" above which no read is certain
CONTEXT_DOUBT = 0.3  # ...and the context nets' belief, asked of reads still certain
LEAN_SHARE = 0.25  # a read the four give this much "cocked or smeared" is asked of the context
CONTEXT_SURE = 0.9  # ...nets too, and is no read at all when they are this sure of a lean
REFINED_DOUBT = 0.5  # their belief on a certain read's refined box from which it is uncertain
RIVAL_UNREADABLE = 0.8  # a second box on the same die the four hold this surely unreadable...
WIDER_VIEW = 1.4  # a certain read's box grown this much about its centre, shown to the four...
WIDER_DOUBT = 0.4  # ...who, holding it this unreadable, leave the read uncertain
WIDER_ASK = 0.1  # a read the four give this much "cocked" is shown the wider view too...
WIDER_SURE = 0.7  # ...and is no read at all when they hold that view this unreadable
SURE_PEAK = 0.5  # detector peaks from here on do not lower a read's confidence
SMALL_DIE_INPUT = 16.0  # median die side (px at the detector's input) below which...
SMALL_DIE_GOAL = 24.0  # ...the frame is looked at again, scaled to bring dice to this side,
SMALL_DICE_MAX = 1280  # ...at most this long, and at most this many times the frame's side:
SMALL_DICE_ENLARGE = 2.0  # a small frame's tiny dice are looked at enlarged
LARGE_DIE_INPUT = 52.0  # median die side (px at the detector's input) above which...
LARGE_DIE_GOAL = 32.0  # ...the frame is looked at again, scaled to bring dice to this side,
LARGE_DICE_MIN = 64  # ...at least this long
LARGE_FACE_SURE = 0.8  # a quarter look's box is a die where the nets see a face this surely
OUTREAD_LEAST = 3  # the usual look, seeing this many faces surely and over twice the large
#                    look's, keeps the frame (a far camera's tray is no large die)
SPECK_SHARE = 0.5  # a box under this share of the typical sure die's side is no die...
SPECK_SURE = 3  # ...judged when the detector is sure of at least this many
SURE_SIDE = 24.0  # dice smaller than this (px in the frame) are never read as certain
TURN_PX = 48  # a die's box is looked at this size for its turn...
TURN_FOLLOW = 0.5  # ...and its side divided by the box's growth at that turn to this power
PERSPECTIVE_GROWTH = 0.5  # a die's box grows by this share per frame width off the centre
PIP_BIG = 1.2  # a die flagged big whose pips spread under this x the ordinary dice's is not
PIP_CHECK_MAX = 1.5  # ...checked for boxes up to this x the typical die (beyond: surely big)
PIP_REFERENCES = 4  # ordinary dice whose pips give the typical spread
BRIGHT_MIDDLE = 30.0  # the middle of a 2 or 4 this much lighter than its face (Lab L): glare
EDGE_DOUBT = 0.01  # dice this close to the frame edge (share of its long side): never certain
CUT_TOLERANCE = 0.05  # a predicted box past the edge by this share of its side is still whole
REFINED_CUT = 0.02  # ...as is one the box refiner brings within this share of the edge
REJUDGE_PEAK = 0.5  # a box the nets call no die, peaked this surely, is judged again refined...
REJUDGE_FACE = 0.8  # ...as is a weaker one, kept where its refined box shows a face this surely
AGAIN_DIE = FAINT_DIE  # ...and one still no die, refined again, where the nets are this sure
TONE_BRIGHT = 150.0  # a frame whose median grey level is above this is looked at again...
TONE_DARK = 70.0  # ...as is one below this...
TONE_GAMMA = 2.0  # ...its levels raised to this power (bright) or to its inverse (dark)
TONE_JUDGED = True  # ...judged by the nets re-toned too, as the detector saw it...
TONE_FACE = 0.5  # ...and a die found only there must be read as a face at least this surely
NADIR_FROM = 0.15  # dice this unreadable to the nets (typically) are read again turned...
NADIR_FLAT = 0.05  # ...to a nadir under which they are typically at most this unreadable...
NADIR_DOUBTED = 0.2  # ...and which at least halves the belief of most (NADIR_MOST) of the...
NADIR_MOST = 0.6  # ...dice this doubtful turned to the middle, if there is one
NADIR_DICE = 4  # ...judged on at least this many dice...
NADIR_SAMPLE = 16  # ...and at most this many, the likeliest dice
NADIR_TYPICAL = 0.75  # the typical belief: the mean over this share of the dice, least first
NADIR_REACH = (1.2, 1e6)  # nadirs tried: 8 ways, this many half-diagonals off the centre

# Built-in palette (DESIGN.md), as sRGB of typical plastic dice under neutral light.
PALETTE_SRGB: dict[str, tuple[int, int, int]] = {
    "red": (190, 30, 40),
    "orange": (235, 110, 30),
    "yellow": (235, 200, 40),
    "green": (40, 140, 70),
    "blue": (30, 70, 170),
    "purple": (100, 50, 140),
    "pink": (235, 120, 170),
    "black": (30, 30, 32),
    "white": (225, 225, 220),
    "gray": (125, 125, 125),
}

# Pip centres of each face on a unit square, before rotation.
_FACES: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.25, 0.25), (0.25, 0.5), (0.25, 0.75), (0.75, 0.25), (0.75, 0.5), (0.75, 0.75)],
}


def _spread(pts: np.ndarray) -> float:
    """Root-mean-square distance of points from their centroid: a pip layout's size."""
    return math.sqrt(float(((pts - pts.mean(axis=0)) ** 2).sum(axis=1).mean()))


# Each face's pip spread on a unit face.
_FACE_SPREAD = {n: _spread(np.array(p, np.float64)) for n, p in _FACES.items()}


def _srgb_to_lab(rgb: tuple[int, int, int]) -> np.ndarray:
    px = np.array([[[rgb[2], rgb[1], rgb[0]]]], np.float32) / 255.0
    return cv2.cvtColor(px, cv2.COLOR_BGR2Lab)[0, 0]


# Without a calibration profile a die's colour is read against its own white pips: a die
# body divided by the white of the pips beside it (same lamp, same exposure, same shading) is
# close to its paint, whatever the lamp's colour temperature and the exposure. Dice with dark
# pips (white, yellow, gray) are divided by the white pips of the other dice in the frame.
# Grey world on the floor was the first idea and the worst: a kraft or printed lid is no
# grey, and it made 52% of synthetic and 68% of mounted-render dice right (no balance at all:
# 49% and 76%). The body, scaled so that white pips become PIP_WHITE, in Lab; fitted by
# `bench/colours.py --fit` on the training halves of the renders and on synthetic scenes,
# except gray (Royale's second neutral set), which no labelled set has.
RELATIVE_PALETTE: dict[str, tuple[float, float, float]] = {
    "red": (45.1, 63.2, 41.3),
    "orange": (60.4, 37.6, 64.7),
    "yellow": (87.4, -10.5, 83.2),
    "green": (71.2, -60.8, 39.6),
    "blue": (43.2, 15.2, -54.1),
    "purple": (39.8, 52.1, -43.2),
    "pink": (66.1, 45.0, -7.3),
    "black": (13.7, 0.1, 0.0),
    "white": (93.2, 0.0, 0.0),
    "gray": (48.0, 0.0, 0.0),  # a 0.48 grey beside 0.94 white pips; no set labels gray dice
}
PIP_WHITE = 235.0
RELATIVE_L_WEIGHT = 1.0  # lightness weighs as much as each colour axis (0.5-1.0 measured)
CHROMA_MARGIN = 0.12  # box margin left out when looking for a die's most colourful pixels
VIVID_CHROMA = 30.0  # Lab chroma from which those pixels name a coloured die
SAMPLE_PX = 24  # colour samples: a die's box resized to this side
# Light pips whose hue strays this far from the frame's typical pips are coloured (log-BGR
# chromaticity distance): white pips stay under 0.33 on the renders and under 0.5 on 99%
# of synthetic and rune55's light-pipped dice; byler's gold and red pips reach 1-2.
PIP_TINT = 0.5
BLANK_PIPS = 2  # a die in which the pip rule finds this many pips is no blank (gray) die...
PIP_INSETS = (0.05, 0.12)  # ...looked for in its box inset by these shares of its side
PIP_LIKE = 20.0  # Lab distance within which a pixel of such a die is taken for its pips
_LUMA = np.array([0.114, 0.587, 0.299], np.float32)


def _patches(frame: np.ndarray, boxes: list) -> np.ndarray:
    """Every die's box less CHROMA_MARGIN, resized to SAMPLE_PX square: (dice, pixels, BGR).

    One grid for all dice lets every statistic below run once per frame, not once per die;
    medians over a few hundred pixels say as much as over thousands, and pips stay several
    pixels wide.
    """
    h, w = frame.shape[:2]
    out = np.empty((len(boxes), SAMPLE_PX, SAMPLE_PX, 3), np.float32)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        cw, ch = (x1 - x0) * CHROMA_MARGIN, (y1 - y0) * CHROMA_MARGIN
        a0, b0 = min(max(0, int(x0 + cw)), w - 1), min(max(0, int(y0 + ch)), h - 1)
        a1, b1 = min(w, max(int(x1 - cw), a0 + 1)), min(h, max(int(y1 - ch), b0 + 1))
        patch = frame[b0:b1, a0:a1]
        shrink = max(patch.shape[:2]) > SAMPLE_PX
        out[i] = cv2.resize(patch, (SAMPLE_PX, SAMPLE_PX),
                            interpolation=cv2.INTER_AREA if shrink else cv2.INTER_NEAREST)
    return out.reshape(len(boxes), -1, 3)


def _masked_median(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per-row median of x (rows, n, 3) over the pixels where mask (rows, n) holds; a row
    with an empty mask takes all its pixels."""
    mask = mask | ~mask.any(axis=1, keepdims=True)
    srt = np.sort(np.where(mask[..., None], x, np.inf), axis=1)  # masked-out pixels last
    mid = ((mask.sum(axis=1) - 1) // 2)[:, None, None]
    return np.take_along_axis(srt, np.broadcast_to(mid, (len(x), 1, x.shape[2])), axis=1)[:, 0]


def _otsu_rows(v: np.ndarray) -> np.ndarray:
    """Otsu's split of each row of v (rows, n): True where a value is on the bright side."""
    srt = np.sort(v, axis=1)
    n = v.shape[1]
    k = np.arange(1, n, dtype=np.float64)
    cum = np.cumsum(srt, axis=1, dtype=np.float64)[:, :-1]
    total = cum[:, -1:] + srt[:, -1:]
    mu0, mu1 = cum / k, (total - cum) / (n - k)
    between = (k / n) * (1 - k / n) * (mu0 - mu1) ** 2
    between[srt[:, 1:] <= srt[:, :-1]] = -1.0  # no split between equal values
    t = srt[np.arange(len(v)), np.argmax(between, axis=1)]
    return v > t[:, None]


def relative_colours(frame: np.ndarray, boxes: list) -> list[np.ndarray]:
    """Each die's colour in Lab relative to white pips (see RELATIVE_PALETTE)."""
    return list(_relative(frame, boxes)[0])


def _relative(frame: np.ndarray, boxes: list) -> tuple[np.ndarray, np.ndarray]:
    """Each die's pip-relative Lab colour (dice, 3) and the per-channel gain (dice, 3)
    that maps its reference white to PIP_WHITE.

    The middle of the die (its box less a fifth each side) is split into body and pips by
    brightness (Otsu): the larger side is the body, the brighter half of the other side the
    pips' paint. The reference white is the die's own pips when they are clearly lighter than
    its body and white (`_tinted_pips`), else the white pips of the other dice, else
    (dark-pipped dice only, as in a game of white and yellow) a neutral white as bright as
    the brightest die pixels, which trusts the camera's own white balance. A die whose most
    colourful pixels (coloured pips left out) are clearly coloured takes its colour from
    them: a lamp mirrored in a glossy top face turns that face white, and the bevels and
    sides still show the paint.
    """
    if not len(boxes):
        return np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)
    pix = _patches(frame, boxes)
    g = SAMPLE_PX
    m = round(g * (0.2 - CHROMA_MARGIN) / (1 - 2 * CHROMA_MARGIN))
    mid = pix.reshape(len(boxes), g, g, 3)[:, m : g - m, m : g - m].reshape(len(boxes), -1, 3)
    luma = mid @ _LUMA
    hi = _otsu_rows(luma)
    body_light = hi.sum(axis=1) * 2 >= hi.shape[1]
    body_mask = np.where(body_light[:, None], hi, ~hi)
    body = _masked_median(mid, body_mask)
    pip_mask = ~body_mask
    pip_mid = _masked_median(luma[..., None], pip_mask)[:, 0]
    pips = _masked_median(mid, pip_mask & (luma >= pip_mid[:, None]))
    light = ~body_light & (pip_mask.sum(axis=1) >= 2) & (pips @ _LUMA > body @ _LUMA + 25.0)
    tinted = _tinted_pips(pips, light)
    white = light & ~tinted
    if white.any():
        refs = np.where(white[:, None], pips, np.median(pips[white], axis=0))
    else:
        bright = max(float((pix @ _LUMA).max()), 1.0)
        refs = np.full((len(boxes), 3), bright, np.float32)
    scale = (PIP_WHITE / np.maximum(refs, 1.0)).astype(np.float32)
    rel = np.clip(pix * scale[:, None, :], 0, 255) / 255.0
    lab = cv2.cvtColor(rel.reshape(-1, 1, 3), cv2.COLOR_BGR2Lab).reshape(rel.shape)
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    if tinted.any():
        # Coloured pips are no part of the die's colour (gold pips on a black die are its
        # most colourful pixels): leave out what looks like them before choosing the vivid.
        like_pip = np.linalg.norm(lab - _white_scaled_lab(pips, scale)[:, None], axis=2
                                  ) < PIP_LIKE
        chroma = np.where(tinted[:, None] & like_pip, -1.0, chroma)
    vivid = _masked_median(lab, chroma >= np.percentile(chroma, 70, axis=1, keepdims=True))
    body_lab = _white_scaled_lab(body, scale)
    coloured = np.hypot(vivid[:, 1], vivid[:, 2]) > VIVID_CHROMA
    return np.where(coloured[:, None], vivid, body_lab).astype(np.float32), scale


def _white_scaled_lab(bgr: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """One BGR colour per die (dice, 3) in Lab, after its die's gain to the pip white."""
    rel = np.clip(bgr * scale, 0, 255).reshape(-1, 1, 3).astype(np.float32) / 255.0
    return cv2.cvtColor(rel, cv2.COLOR_BGR2Lab).reshape(-1, 3)


def _tinted_pips(pips: np.ndarray, light: np.ndarray) -> np.ndarray:
    """Which dice's light pips are coloured (gold, yellow, red...) rather than white.

    The game's pips are white, and one lamp lights every die alike, so white pips share one
    hue in a frame whatever the lamp: a die whose light pips stray far from the frame's
    typical pip hue has coloured ones, which taken for white would skew its colour (yellow
    pips on a green die made it read blue-green, on a black die yellow). Judged on each
    pip colour's chromaticity (log BGR less its mean, so brightness is out of it) against
    the median of the light-pipped dice; in a frame where most dice have coloured pips the
    median is coloured too, and nothing can be told.
    """
    out = np.zeros(len(pips), bool)
    if light.sum() < 2:
        return out
    hue = np.log(pips.astype(np.float64) + 8.0)
    hue -= hue.mean(axis=1, keepdims=True)
    typical = np.median(hue[light], axis=0)
    return light & (np.linalg.norm(hue - typical, axis=1) > PIP_TINT)


def nearest_relative(lab: np.ndarray, pips: bool = False) -> str:
    """The built-in colour nearest to a pip-relative Lab colour.

    `pips`: the die shows pips. Royale's gray dice are blank, so such a die is never gray;
    without this, a white die in dim light or shade was named gray (synthetic scenes: 47 of
    its 178 misnamed dice).
    """
    d = _RELATIVE_LABS - np.asarray(lab, np.float32)
    d[:, 0] *= RELATIVE_L_WEIGHT
    dist = (d * d).sum(axis=1)
    if pips:
        dist[_RELATIVE_NAMES.index("gray")] = np.inf
    return _RELATIVE_NAMES[int(np.argmin(dist))]


_RELATIVE_NAMES = list(RELATIVE_PALETTE)
_RELATIVE_LABS = np.array(list(RELATIVE_PALETTE.values()), np.float32)


def builtin_palette() -> list[ColourRef]:
    return [ColourRef(n, tuple(float(v) for v in _srgb_to_lab(c)), 8.0)
            for n, c in PALETTE_SRGB.items()]


@dataclass
class DieRead:
    value: int | None
    colour: str
    big: bool
    bbox: tuple[float, float, float, float]
    confidence: float
    side: float = 0.0
    angle: float = 0.0
    # The die's own side (px) as the Biggy test sees it: its box's, allowing for the die's
    # turn and for side faces off the frame's centre (0 when not worked out).
    size: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "colour": self.colour, "big": self.big,
                "bbox": [round(v, 1) for v in self.bbox],
                "confidence": round(float(self.confidence), 3)}


class DiceReader:
    """Holds what is fixed between frames (palette, profile); `read` is one frame."""

    def __init__(self, profile: Profile | None = None, threads: int = 1) -> None:
        """Load every net once (a missing or damaged model is a `ModelError` here, before the
        first frame); `threads` is how many cores the nets may use for one frame."""
        from .boxnet import BoxNet
        from .colournet import ColourNet
        from .detector import Detector
        from .valuenet import CONTEXT_MODELS, ValueNet

        self.profile = profile
        self.last_proposals: tuple[list, np.ndarray] | None = None
        # Where the last frame's dice put the point below the camera (None: the frame's
        # middle); for failure analysis, not an API.
        self.nadir: tuple[float, float] | None = None
        self.net = ValueNet(threads=threads)
        self.context = ValueNet(CONTEXT_MODELS, threads=threads)
        self.colour_net = ColourNet(threads=threads)
        self.detector = Detector(threads=threads)
        self.refiner = BoxNet(threads=threads)
        refs = list(profile.colours) if profile and profile.colours else builtin_palette()
        self.names = [r.name for r in refs]
        self.labs = np.array([r.lab for r in refs], np.float32)
        self.spreads = np.array([max(r.spread, 3.0) for r in refs], np.float32)
        self._floor_polys: dict[tuple[int, int], np.ndarray | None] = {}

    # --- public ----------------------------------------------------------------------------
    def read(self, frame: np.ndarray) -> list[DieRead]:
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3 or frame.size == 0:
            raise ValueError("a frame must be a BGR image (height x width x 3)")
        h, w = frame.shape[:2]
        if self.profile and self.profile.white_balance:
            gains = np.array(self.profile.white_balance, np.float32)
            frame = np.clip(frame.astype(np.float32) * gains, 0, 255).astype(np.uint8)
        reads = self._on_floor(self._read_detected(frame), w, h)
        self._mark_big(reads, frame)
        return reads

    def floor_polygon(self, w: int, h: int) -> np.ndarray | None:
        """The calibrated tray floor in this frame's pixels, or None without a usable one.

        The profile's corners are scaled to the frame (the same camera view at another
        resolution); a frame of another shape is another view, and its corners mean nothing.
        """
        if (w, h) not in self._floor_polys:
            poly = None
            p = self.profile
            if p is not None and p.tray_corners and p.image_size:
                iw, ih = p.image_size
                if abs((w / h) / (iw / ih) - 1) <= 0.02:
                    poly = (np.array(p.tray_corners, np.float32)
                            * np.float32([w / iw, h / ih])).reshape(-1, 1, 2)
            self._floor_polys[(w, h)] = poly
        return self._floor_polys[(w, h)]

    def _on_floor(self, reads: list[DieRead], w: int, h: int) -> list[DieRead]:
        """Dice lie on the tray floor: what sits on the walls or the table beyond (printed
        art, a spare die, a cup) is not in play. A die leaning on a wall still has its centre
        within half a side of the floor's edge."""
        poly = self.floor_polygon(w, h)
        if poly is None:
            return reads
        kept = []
        for r in reads:
            x0, y0, x1, y1 = r.bbox
            side = max(x1 - x0, y1 - y0)
            inside = cv2.pointPolygonTest(poly, ((x0 + x1) / 2, (y0 + y1) / 2), True)
            if inside >= -0.5 * side:
                kept.append(r)
        return kept

    def _mark_big(self, reads: list[DieRead], frame: np.ndarray) -> None:
        """A Biggy is about 1.4x the side of the ordinary dice in the same frame.

        A die's box is axis-aligned, so an ordinary die turned 45 degrees has a box up to
        1.41x its side, as large as a Biggy lying square (the Royale demo asked the Biggy
        count on 10 of 138 turns). Each die's turn is read from its edges, and its side is
        divided by the box's growth at that turn (`_turn_growth`) to the power TURN_FOLLOW:
        the detector's boxes follow a turn only part of the way (dividing by the whole growth
        did worse). The box also holds side faces, which the camera sees more of the further the
        die lies from the frame's centre: ordinary dice in a wide lens's corners came out
        1.2-1.3x the typical box. That growth, PERSPECTIVE_GROWTH per frame width off the
        centre, is taken out too (0.5 helps the synthetic scenes' 21-59 degree lenses and the
        renders' 66-102 degree ones alike; the renders alone would take 0.8-1.0, the
        synthetic scenes lose from there).
        """
        if reads:
            height, width = frame.shape[:2]
            off = np.array([abs((r.bbox[0] + r.bbox[2] - width) / 2)
                            + abs((r.bbox[1] + r.bbox[3] - height) / 2) for r in reads]) / 2
            turn = np.array([_turn_growth(frame, r.bbox) for r in reads])
            sides = (np.array([r.side for r in reads]) / turn ** TURN_FOLLOW
                     / (1 + PERSPECTIVE_GROWTH * off / width))
            base = float(np.median(sides[sides <= np.median(sides) * 1.15]))
            for r, side in zip(reads, sides, strict=True):
                r.big = bool(side > 1.2 * base)
                r.size = float(side)
            self._check_big_by_pips(reads, frame, sides / base)

    def _check_big_by_pips(self, reads: list[DieRead], frame: np.ndarray,
                           ratio: np.ndarray) -> None:
        """Clear a Biggy flag that the die's pips deny, and shrink the box that gave it.

        A box still grows with a turn the edges misjudge and with side faces, but the spread
        of the top face's pips does neither: it scales with the face alone. A die flagged
        big by its box whose pips spread no wider than those of the ordinary dice beside it
        (under PIP_BIG times their median) is an ordinary die: Biggy flags on the loose
        renders 96.7 -> 98.1% right, synthetic hard 95.9 -> 96.2%, mounted level, and fewer
        dice flagged big on the photo sets, which hold no Biggy. Only ever clears a flag: the
        other way round (pips calling a die big that its box does not) dice of several
        makers, whose pips sit closer or further apart, came out big (byler-d6: 105 -> 139
        of 1,114 flagged). Boxes far beyond a Biggy's size are left to the box.
        """
        doubtful = [i for i, r in enumerate(reads)
                    if r.big and ratio[i] <= PIP_CHECK_MAX and r.value is not None
                    and r.value >= 2]
        if not doubtful:
            return
        # The ordinary dice to compare with: the few whose boxes are nearest the typical one.
        plain = sorted((i for i, r in enumerate(reads)
                        if not r.big and r.value is not None and r.value >= 2),
                       key=lambda i: abs(ratio[i] - 1.0))
        faces = []
        for i in plain:
            face = face_side(frame, reads[i].bbox, reads[i].value)
            if face is not None:
                faces.append(face)
                if len(faces) == PIP_REFERENCES:
                    break
        if len(faces) < 2:
            return
        typical = float(np.median(faces))
        for i in doubtful:
            read, grown = reads[i], float(ratio[i])
            face = face_side(frame, read.bbox, read.value)
            if face is None:
                # In a box much larger than the die the face fills too little of the patch for
                # its pips to be found: look again within a box of the typical die's size
                # (Biggy flags on 300 fresh synthetic scenes 95.15 -> 95.22% right; a Biggy
                # looked at so shows too few pips, or pips spread as wide as a Biggy's).
                face = face_side(frame, _scaled(read.bbox, 1.0 / grown), read.value)
            if face is not None and face <= PIP_BIG * typical:
                read.big = False
                read.size = read.size / grown * face / typical
                # Its box is as wrong as its flag, grown round the die by a shadow or a
                # neighbour's edge (boxes of ordinary dice at IoU 0.3-0.5 with their labels,
                # each counted as a miss and an invented die). Shrunk about its centre to the
                # size its pips give, it fits the die: 34 boxes on 300 fresh synthetic scenes,
                # 2 more dice found there and 1 on byler-d6, none lost on any set. (Centred
                # on the pips instead: byler's gain lost and one confident error more, as
                # its pips are found a few pixels off the middle of the face.)
                k = min(1.0, max(face / typical, 1.0) / grown)
                read.bbox, read.side = _scaled(read.bbox, k), read.side * k

    # --- learned detector -------------------------------------------------------------------
    def _look(self, frame: np.ndarray) -> tuple[list, list, int]:
        """The detector's boxes at an input that shows the dice at a side it was trained on
        (10-50 px), with those it is sure of and the input's long side.

        A camera close to the dice (a small lid, a phone held low) shows them larger than
        that, and the usual look boxes their pips and halves, or nothing (byler photos cut
        to their middle third and enlarged: recall 48.8%). A look at half the input sees such
        dice whole; where its dice are large, the frame is looked at again at the input that
        brings them to LARGE_DIE_GOAL, and that look replaces the usual one (98.6%). Dice
        of a fifth of the frame and more are seen whole only at a quarter of the input (byler
        cut to a sixth: recall 59.4% with the half look, 87.5% with both).
        """
        assert self.detector is not None
        normal = self.detector.long_side
        # The usual look's weaker peaks are kept for `_faint_dice`; the large looks keep theirs.
        found, half, quarter = self.detector.detect_shrinking(frame, FAINT_PEAK, 3)
        half = [d for d in half if d.score >= DETECT_MIN]
        quarter = [d for d in quarter if d.score >= DETECT_MIN]
        sure = [d for d in found if d.score >= SURE_PEAK]
        # Largest first: dice of a fifth of the frame and more, whose pips the half look takes
        # for dice, are seen whole at a quarter only. A tray seen whole with one die in its
        # middle is a "1" to the nets: only faces of two pips and more make the quarter
        # look's boxes dice, and they must hold what the usual look is sure of (the pips
        # and halves it boxes): a die tumbling through a roll near the lens is large beside
        # the dice already lying in the tray, which the usual look sees whole (in
        # bench/tracker.py the quarter look fired on 5 such frames and cost a turn; with
        # this, on none).
        typical = (self._large_dice(frame, quarter, 2 * LARGE_DIE_INPUT, LARGE_FACE_SURE, 2,
                                    sure)
                   or self._large_dice(frame, half, LARGE_DIE_INPUT, 0.0, 1))
        if typical is None:
            return found, sure, normal
        long = max(LARGE_DICE_MIN, int(normal * LARGE_DIE_GOAL / typical) // 32 * 32)
        large = self.detector.detect(frame, DETECT_MIN, long)
        large_sure = [d for d in large if d.score >= SURE_PEAK]
        # A camera far above a small tray: the half look sees the whole tray as one large
        # die, its dice as pips, and at the input that look asks for the dice vanish (a wide
        # lens scene lost all 11). The nets settle it: at their own scale they read the dice
        # as faces. Where the usual look's boxes of under half the large dice's side hold
        # several sure faces, and over twice as many as the large look's boxes, the frame's
        # dice are the usual look's. A close-up's usual look boxes pips and halves, which the
        # nets do not read as faces; dice only somewhat large are seen by both looks alike.
        k = normal / max(frame.shape[:2])
        small = [d for d in sure if box_side(d.bbox) * k < typical / 2]
        usual_faces = self._sure_faces(frame, small)
        if usual_faces >= OUTREAD_LEAST and usual_faces > 2 * self._sure_faces(frame, large_sure):
            return found, sure, normal
        return large, large_sure, long

    def _sure_faces(self, frame: np.ndarray, dets: list) -> int:
        """How many of the boxes the value nets read as a face at LARGE_FACE_SURE: at the
        scale the frame's dice are seen whole, its boxes are faces to them, while pips, halves
        and a whole tray are not."""
        assert self.net is not None
        if not dets:
            return 0
        probs = self.net.predict(self._crops(frame, [d.bbox for d in dets]))
        return int(np.sum(_faces(probs, 1, LARGE_FACE_SURE)))

    def _large_dice(self, frame: np.ndarray, found: list, above: float, face_sure: float,
                    least: int, held_by: list | None = None) -> float | None:
        """The typical side (px at the detector's usual input) of the dice a smaller look is
        sure of, when it is over `above` and they are dice (most read as a face of at least
        `least` pips, with at least `face_sure`); else None. Given `held_by`, only the faces
        over `above` count, and they must hold at least half of those boxes."""
        from .valuenet import NOT_A_DIE

        assert self.detector is not None and self.net is not None
        k = self.detector.long_side / max(frame.shape[:2])
        coarse = [d for d in found if d.score >= SURE_PEAK]
        if not coarse or _median_side(coarse) * k <= above:
            return None
        if held_by is not None and not _holds(
                [d for d in coarse if box_side(d.bbox) * k > above], held_by):
            return None  # as below for the faces among them, before the nets' time is spent
        # A tray seen whole, its dice small, looks like one large die with pips to the
        # detector; the value nets tell it from a die (they call it unreadable, or no die).
        # Glints and pips the coarse look takes for dice are no dice to them either.
        probs = self.net.predict(self._crops(frame, [d.bbox for d in coarse]))
        held = int(np.sum(probs[:, NOT_A_DIE] < 0.5))
        faces = [d for d, face in zip(coarse, _faces(probs, least, face_sure), strict=True)
                 if face]
        if 2 * len(faces) <= held:
            return None
        if held_by is not None:
            faces = [d for d in faces if box_side(d.bbox) * k > above]
            if not faces or not _holds(faces, held_by):
                return None
        typical = _median_side(faces) * k
        return typical if typical > above else None

    def _read_detected(self, frame: np.ndarray) -> list[DieRead]:
        """Boxes from the detector, values from the value net, a rule-based second opinion.

        A die the detector predicts to reach past the frame edge is one the camera only partly
        sees: skipped, as its face may be cut. Both nets must agree that a box holds a die.
        """
        from .valuenet import NOT_A_DIE, UNREADABLE

        assert self.detector is not None and self.net is not None
        h, w = frame.shape[:2]
        near = EDGE_DOUBT * max(h, w)
        self.nadir = None  # the frame's middle, until its dice say otherwise
        found, sure, long = self._look(frame)
        if sure and long == self.detector.long_side:
            # Dice a distant camera sees small shrink to a few pixels at the net's input,
            # where it misses a fifth of them and boxes the rest loosely: look again at an
            # input large enough to bring them to a side the net was trained on and add what
            # it finds (the same die found twice is reported once, below). A fixed 640 px
            # second look left dice of 7-10 px at the first input still at 9-12 px (loose
            # renders: recall 89.5%, against 97.7% scaled to the dice). Judged by the dice
            # the net is sure of, so specks on a hand over the tray do not trigger it. A
            # small frame is enlarged for it: the loose renders at 640 px (dice of 7-10 px)
            # held at the frame's own size gave recall 87.2%, enlarged up to twice 95.0%.
            k = self.detector.long_side / max(h, w)
            small = _median_side(sure) * k
            if small < SMALL_DIE_INPUT:
                goal = self.detector.long_side * SMALL_DIE_GOAL / small
                long = min(goal, SMALL_DICE_MAX, SMALL_DICE_ENLARGE * max(h, w))
                long = max(self.detector.long_side, int(long) // 32 * 32)
                found = found + self.detector.detect(frame, DETECT_MIN, long)
        found = _without_specks(found, sure)
        # A cut die is judged on the predicted box before clipping: a whole die a few pixels
        # from the edge has a box a few pixels too large as often as not (a fixed margin on
        # the clipped box skipped 2% of the synthetic dice, all whole). Nor is any overshoot
        # a cut: the predicted box of a whole die ends past the edge by up to 5% of its side
        # (1st percentile of 346 whole dice within 30 px of the edge, synthetic), while half
        # the cut dice overshoot by more. Those within it are read and asked about (see
        # EDGE_DOUBT): synthetic recall 98.0 -> 98.4%, the photo sets unchanged. A peak below
        # KEEP_MIN can never be reported by the rule below (its die probability would have to
        # exceed 1), nor can it hide another box: only `_faint_dice` looks at such peaks. A
        # box past that tolerance is asked of the box refiner before the die is skipped
        # (`_whole_after_all`).
        faint = [d for d in found if d.score < KEEP_MIN]
        found = [d for d in found if d.score >= KEEP_MIN]
        whole = [_within_frame(d) for d in found]
        rescued = {id(d) for d in self._whole_after_all(
            frame, [d for d, ok in zip(found, whole, strict=True) if not ok])}
        dets = [d for d, ok in zip(found, whole, strict=True) if ok or id(d) in rescued]
        boxes = [d.bbox for d in dets]
        crops = self._crops(frame, boxes) if dets else None
        probs = self.net.predict(crops) if dets else np.zeros((0, UNREADABLE + 1), np.float32)
        score = np.array([d.score for d in dets], np.float32)
        rescued: set[int] = set()
        if dets:
            boxes, crops, probs, rescued = self._rejudged(frame, boxes, crops, probs, score)
        eligible = score * (1.0 - probs[:, NOT_A_DIE]) >= KEEP_MIN
        taken = [b for b, ok in zip(boxes, eligible, strict=True) if ok]
        extra = [self._faint_dice(frame, faint, taken)]
        toned_ids: set[int] = set()  # ids of the detections only the re-toned frame showed
        # A frame whose usual look peaks somewhere it finds no die may hold a die it cannot
        # make out (a box on part of a pale die, a weak peak on a dark one): looked at
        # again re-toned (`_toned_dice`). Asked only there, the second look costs about
        # half as much (7 against 12.5 ms a frame) and finds nearly as many dice.
        if long == self.detector.long_side and any(
                not any(_same_die(d.bbox, b) for b in taken) for d in faint + dets):
            extra.append(self._toned_dice(frame, taken + [d.bbox for d in extra[0][0]], sure))
            toned_ids = {id(d) for d in extra[-1][0]}
        for more, more_crops, more_probs in extra:
            if more:
                dets, boxes = dets + more, boxes + [d.bbox for d in more]
                crops = more_crops if crops is None else np.concatenate([crops, more_crops])
                probs = np.concatenate([probs, more_probs])
                score = np.concatenate([score, np.array([d.score for d in more], np.float32)])
                eligible = np.concatenate([eligible, np.ones(len(more), bool)])
        if not dets:
            self.last_proposals = ([], np.zeros(0, np.float32))
            return []
        die_p = 1.0 - probs[:, NOT_A_DIE]
        self.last_proposals = (boxes, die_p)  # for failure analysis, not an API
        # The detector's 3x3 peak filter leaves two or three peaks on a Biggy or a die seen
        # with a long side face, each with a box of its own: one die reported twice, the
        # second copy an invented die (most of the synthetic scenes' confident extras). Dice
        # do not overlap seen from above, so of boxes overlapping this much only the one the
        # value net is surest holds a die stays.
        # Each box is refined once a frame, whichever step asks first: box -> the box
        # reported for its die (a rescued box is its refined box already).
        settled = {i: boxes[i] for i in rescued}
        kept = self._dice_among(frame, boxes, die_p, eligible, settled)
        for i, (box, crop, p) in self._parted(frame, boxes, kept, eligible, settled).items():
            # A box dropped for its neighbour holds a die of its own beside it: the box
            # becomes that die's, with the crop and the nets' answer it was judged on.
            boxes[i] = settled[i] = box
            crops[i], probs[i], die_p[i] = crop, p, 1.0 - p[NOT_A_DIE]
            kept = kept + [i]
        self.nadir = self._find_nadir(frame, [boxes[i] for i in kept], probs[kept])
        if self.nadir is not None:
            # Which boxes are dice stays the first look's call; every face from here on is
            # read turned to where the camera is.
            crops = self._crops(frame, boxes)
            probs = self.net.predict(crops, paints=True)
        else:
            probs = self._paint_look(crops, probs, kept)
        doubted = _doubted_by_rivals(boxes, probs, kept)
        # Which boxes are dice stays the first look's call (the checks below and the Biggy
        # sizes were tuned on it); the face read in each is the mirrored and the refined
        # looks' too.
        unsure = [i for i in kept if probs[i].max() < MIRROR_BELOW and i not in rescued]
        probs = _mirror_unsure(self.net, crops, probs, kept, MIRROR_BELOW)
        probs = self._refined_look(frame, boxes, probs, unsure, settled)
        reads = []
        box_of: list[int] = []  # reads' boxes
        doubt: list[float] = []  # the four's p(unreadable) per read
        for i in sorted(kept):
            b = boxes[i]
            box_of.append(i)
            p = probs[i]
            # "Unreadable" only when the nets hold it more likely than not: below that the
            # likeliest face is the better guess to ask about (a flat die by a wall the nets
            # half take for cocked is still read; the doubt below keeps it from being certain).
            k = UNREADABLE if p[UNREADABLE] >= 0.5 else int(np.argmax(p[1:UNREADABLE])) + 1
            value = None if k == UNREADABLE else k
            # Both the detector and the value net must be sure there is a die there.
            # p[k] already carries the value net's doubt that this is a die at all; a weak
            # detector peak (below SURE_PEAK) lowers it further.
            confidence = calibrated(float(p[k] * min(1.0, score[i] / SURE_PEAK)))
            if value is not None and p[UNREADABLE] > LEAN_DOUBT:
                # Even a little belief in "cocked or smeared" is enough not to trust the face:
                # a leaning die shows a clean face that is not the one it will count as.
                confidence = min(confidence, CERTAIN - 0.05)
            if value is None:
                # "Surely unreadable" is no claim to stand behind: a flat die by the wall,
                # seen from the side, looks cocked (the mounted renders' confident errors).
                # A null read is asked about anyway; it is never certain.
                confidence = min(confidence, CERTAIN - 0.05)
            bw, bh = b[2] - b[0], b[3] - b[1]
            if (bw + bh) / 2 < SURE_SIDE:
                # A die this small has its pips in a few pixels each: readable, often right,
                # but not to one error in a thousand (the loose renders' confident errors).
                confidence = min(confidence, CERTAIN - 0.05)
            if max(bw, bh) > 1.3 * min(bw, bh):
                # Seen from above a die lying flat has a near-square box; a long one is a die
                # leaning on a wall or another die, whose value may be read but never trusted.
                confidence = min(confidence, CERTAIN - 0.1)
            if dets[i].margin < near:
                # A die cut by the edge may still be predicted just inside it: read, asked about.
                confidence = min(confidence, CERTAIN - 0.05)
            if i in doubted or id(dets[i]) in toned_ids:
                confidence = min(confidence, CERTAIN - 0.05)
            if self.nadir is not None:
                # The nadir is the dice's own guess, and a frame of mostly cocked dice may
                # find one that turns their side faces to the top (under a looser rule, a
                # cocked die of the bench's synthetic scenes was so read 2 at 0.97): the
                # table is asked about every die of a frame seen other than from above.
                confidence = min(confidence, CERTAIN - 0.05)
            reads.append(DieRead(value, "", False, b, confidence, (bw + bh) / 2, 0.0))
            doubt.append(float(p[UNREADABLE]))
        sure = [r for r in reads if r.value is not None and r.confidence >= CERTAIN]
        # Reads the four half take for a lean: a value, but a quarter or more on "cocked".
        leaning = [(r, d) for r, d in zip(reads, doubt, strict=True)
                   if r.value is not None and d >= LEAN_SHARE]
        if self.context is not None and (sure or leaning):
            # A die leaning on a neighbour or a wall shows a clean face the four read
            # straight through (most confident errors on synthetic scenes); the context
            # net sees what the die rests on. Asked, in one batch, of reads still certain
            # and of those the four already half doubt. Where both kinds of net see a lean,
            # the face read is not the one the die will count as: cocked dice read with a
            # value (the largest share of synthetic value errors) are often such reads,
            # flat dice rarely: on 200 fresh synthetic hard scenes 19 cocked dice became
            # right and no flat die was lost; renders: 6 of the 15 cocked dice right, 1 flat
            # die of 458 lost; byler 1 of 1,105 lost; rune55 unchanged. The flat dice lost
            # touch a neighbour or a wall.
            # The context nets are two, averaged: the first was taught leans framed whole,
            # the second (thirty-sixth session) half of them framed by the top face alone,
            # as the detector often boxes them; each sees leans the other misses. Their
            # mean at 0.3 and 0.9 (one net's were 0.2 and 0.95) doubts fewer flat dice and
            # more cocked ones on every set: 700 fresh synthetic hard scenes, confident
            # errors 6 -> 4, certain reads 3,048 -> 3,056; byler certain 726 -> 728.
            _ask_about_leans(self.context, frame, sure, leaning, None, CONTEXT_DOUBT, CONTEXT_SURE,
                             self.nadir)
        sure = [r for r in reads if r.value is not None and r.confidence >= CERTAIN]
        leaning = [(r, d) for r, d in zip(reads, doubt, strict=True)
                   if r.value is not None and d >= WIDER_ASK]
        # The detector often boxes a leaning die's clean top face alone, leaving out the
        # side face it shows (most confident errors left on synthetic scenes: the box
        # sits at IoU 0.5-0.8 of the whole die's). Shown a wider view, the four see the
        # side face: a certain read they doubt there is asked about, and a read they
        # already half took for a lean and are sure of there is no read (on 800
        # synthetic scenes 27 cocked dice became right and 3 flat dice were lost; none
        # of 2,597 reads changed on the photo and render sets). A flat die's wider view
        # is mostly floor.
        _ask_about_leans(self.net, frame, sure, leaning, WIDER_VIEW, WIDER_DOUBT, WIDER_SURE,
                         self.nadir)
        for r in reads:
            if r.value is not None and r.confidence >= CERTAIN:
                # Last, as the costliest check: only a read still certain can be demoted.
                r.confidence = self._second_opinion(frame, r.bbox, r.value, r.confidence)
        colours = self._colours(frame, [r.bbox for r in reads], pips=[r.value is not None
                                                                       for r in reads])
        for r, colour in zip(reads, colours, strict=True):
            r.colour = colour
        if self.refiner is not None:
            # Last, so the checks above see the boxes they were tuned and trained on; what is
            # reported (and sized for the Biggy test) is the die's own box. On 500 synthetic
            # hard scenes: mean IoU with the labels 0.82 -> 0.90, recall 98.5 -> 98.8%,
            # precision 99.4 -> 99.7%, Biggy flags 95.4 -> 98.5% right; loose renders recall
            # 97.7 -> 99.5%, precision 95.1 -> 96.9%; rune55 recall 96.6 -> 97.1%; values and
            # confident errors level. Refined before those checks instead, values moved on
            # the renders (mounted 98.5 -> 97.7%, loose 98.6 -> 97.7%).
            # A box refined already is not moved again (that would move it further than
            # the refiner's trust in one answer: a Biggy so taken looked ordinary).
            for r, box in zip(reads, self._refined(frame, boxes, box_of, settled), strict=True):
                r.bbox, r.side = box, ((box[2] - box[0]) + (box[3] - box[1])) / 2
            if self.context is not None:
                # The context nets judged the detector's box, which on a leaning die may
                # hold the clean top face alone; the refined box takes in more of the die
                # and its side face. A read still certain is asked again there, and held
                # uncertain where they think a lean more likely than not (bench synthetic
                # scenes: confident errors 2 -> 1, certain reads 2,313 -> 2,310; 700 fresh
                # hard scenes: 4 -> 4, 3,056 -> 3,053; photos and renders: one certain
                # read fewer on the loose renders and on byler with its paints swapped).
                # Values are not touched: no half-doubted read is asked here.
                still = [r for r in reads if r.value is not None and r.confidence >= CERTAIN]
                _ask_about_leans(self.context, frame, still, [], None, REFINED_DOUBT,
                                 CONTEXT_SURE, self.nadir)
            # Brought to their dice, two boxes may meet on one: off a wide lens's axis a flat
            # die shows a tall side face with pips, which the detector may box apart from
            # the top face, too far from it to be the same die before the refiner brings
            # that box to the whole die. The one the nets are surer holds a die stays (wide
            # lens scenes: 16 invented dice of 1,789 reports gone, none found lost; loose
            # renders 1, mounted 1, synthetic hard 4, with one smeared die lost where it
            # flew over another).
            kept = _one_box_per_die([r.bbox for r in reads], die_p[box_of],
                                    np.ones(len(reads), bool))
            reads = [reads[i] for i in sorted(kept)]
            faces = [r.side for r in reads if r.value is not None]
            if len(faces) >= SPECK_SURE:
                # So is a speck judged again on the boxes brought to their dice: the small-
                # dice look's boxes on a distant camera's pips and smears, once refined, are
                # a third of a die's side (wide lens scenes: 6 and 12 invented dice gone on
                # 200 and 300 scenes, loose renders 2, rune55 1, none lost anywhere). The
                # dice read with a face give the typical side: specks are seldom read so.
                typical = float(np.median(faces))
                reads = [r for r in reads if r.side >= SPECK_SHARE * typical]
        return reads

    def _crops(self, frame: np.ndarray, boxes: Sequence[Sequence[float]]) -> np.ndarray:
        """The value nets' crops of `boxes`, stacked, turned to the frame's nadir once it is
        known: every crop the learned path cuts comes from here, so no step needs to know
        whether the nadir has been found yet."""
        return np.stack([self.net.crop(frame, b, self.nadir) for b in boxes])

    def _find_nadir(self, frame: np.ndarray, dice: list, probs: np.ndarray
                    ) -> tuple[float, float] | None:
        """Where the point straight below the camera lies in the frame, when its dice say it
        is not the middle; None when they do not.

        The nets learnt that a side face at the top of a crop turned to the frame's middle
        is perspective and one anywhere else a lean. That holds for a camera looking
        straight down with its axis on the frame's centre; a tilted phone, or a frame cut
        off centre, shows every flat die's side faces towards another point, and the nets
        then doubt its flat dice as if they leaned (wide-lens scenes cut to a corner, 60%
        of the frame: 79% of the values right, against 98% whole). Only where the frame's typical
        die is that doubtful (NADIR_FROM) are other nadirs tried, 8 ways, 1.2 half-diagonals
        off the centre and so far off that every crop turns the same way (the far ones
        alone lost rune55's gain). The one under which the dice look flattest is taken
        where it makes the frame flat (NADIR_FLAT) and settles most of the dice doubted
        turned to the middle: an oblique camera's flat dice all lean one way to the nets,
        while cocked dice lean every which way, so a nadir that suits a few of them leaves
        the frame doubtful. The typical doubt is the mean over the least doubted
        three quarters of the dice. A frame whose dice are mostly cocked can still fool it
        (one of 80 synthetic scenes with 5-8 cocked dice of 10-16): every read of a frame
        with a nadir is asked about (see `_read_detected`).
        """
        from .valuenet import NOT_A_DIE, UNREADABLE

        if len(dice) < NADIR_DICE:
            return None
        p_unr = np.asarray(probs[:, UNREADABLE], np.float64)
        if _typical(p_unr) < NADIR_FROM:
            return None
        likeliest = np.argsort(probs[:, NOT_A_DIE], kind="stable")[:NADIR_SAMPLE]
        h, w = frame.shape[:2]
        reach = np.hypot(w, h) / 2.0
        nadirs = [(w / 2.0 + k * reach * math.cos(a), h / 2.0 + k * reach * math.sin(a))
                  for k in NADIR_REACH for a in np.radians(np.arange(0, 360, 45))]
        lean = self.net.unreadable_towards(frame, [dice[i] for i in likeliest], nadirs)
        best = int(np.argmin([_typical(row) for row in lean]))
        before, after = p_unr[likeliest], lean[best]
        doubted = before >= NADIR_DOUBTED
        settled = np.count_nonzero(doubted & (after <= before / 2))
        if _typical(after) > NADIR_FLAT or settled < NADIR_MOST * np.count_nonzero(doubted):
            return None
        return float(nadirs[best][0]), float(nadirs[best][1])

    def _refined_look(self, frame: np.ndarray, boxes: list, probs: np.ndarray,
                      rows: list[int], settled: dict) -> np.ndarray:
        """`probs`, with each of `rows` (the reads the nets were unsure of at first) averaged
        with a read of the box the refiner brings to its die, weighted REFINED_LOOK; the
        refined boxes go into `settled`, where the final refinement finds them.

        The detector's box takes in a low lamp's shadow or a leaning side face, and the
        nets read the face inside it less surely; the die's own box is a third look whose
        errors are partly its own. On the bench's synthetic scenes 22 more dice read right,
        on fresh synthetic sets 43 more of about 10,900, real photos and renders within a
        die. Read on the refined box alone, the renders lost (twentieth session): only as
        one voice of three, for the dice the first look doubts, does it pay."""
        if self.refiner is None or not rows:
            return probs
        refined = self._refined(frame, boxes, rows, settled)
        again = self.net.predict(self._crops(frame, refined), paints=True)
        out = np.array(probs, np.float32)
        out[rows] = (1.0 - REFINED_LOOK) * out[rows] + REFINED_LOOK * again
        return out

    def _paint_look(self, crops: np.ndarray, probs: np.ndarray, rows: list[int]
                    ) -> np.ndarray:
        """`probs`, with the faces' split of each of `rows` read less surely than
        MIRROR_BELOW taken from the nets reading its crop in other paints too.

        Asked only once the dice are decided, so which boxes are dice stays the plain
        look's call, and only the split among the faces moves (a die's "no die" and
        "unreadable" stay as they were): dice of another maker's paints (blue pips on a
        green die, which grey loses too) are read, and no die is found or lost by it."""
        unsure = [i for i in rows if probs[i].max() < MIRROR_BELOW]
        if not unsure:
            return probs
        from .valuenet import faces_split_as

        again = self.net.predict(np.asarray(crops)[unsure], paints=True)
        out = np.array(probs, np.float32)
        out[unsure] = faces_split_as(out[unsure], again)
        return out

    def _refined(self, frame: np.ndarray, boxes: list, rows: Sequence[int], settled: dict
                 ) -> list:
        """The refined box of each of `rows`, from `settled` where a step before refined it
        (the refiner's answer is the same however often it is asked), else refined now and
        kept there."""
        new = [i for i in dict.fromkeys(rows) if i not in settled]
        if new:
            settled.update(zip(new, self.refiner.refine(frame, [boxes[i] for i in new]),
                               strict=True))
        return [settled[i] for i in rows]

    def _rejudged(self, frame: np.ndarray, boxes: list, crops: np.ndarray, probs: np.ndarray,
                  score: np.ndarray) -> tuple[list, np.ndarray, np.ndarray, set[int]]:
        """The boxes, crops and probabilities, and which boxes were replaced: a box the
        detector peaks on surely but the nets call no die gives way to its refined box where
        the nets call that one a die (and, under a weaker peak, read a face on it surely:
        REJUDGE_FACE). In a cluster of touching dice the detector's box may straddle
        two of them: a crop of halves is no die to the nets, and the die under it is lost
        (on the bench's synthetic scenes a black 1 at the foot of a cluster, peak 0.75, die
        probability 0.33 on the straddling box, 1.0 on the refined one)."""
        from .valuenet import NOT_A_DIE

        die_p = 1.0 - probs[:, NOT_A_DIE]
        asked = [i for i in range(len(boxes)) if score[i] * die_p[i] < KEEP_MIN]
        if self.refiner is None or not asked:
            return boxes, crops, probs, set()
        refined = self.refiner.refine(frame, [boxes[i] for i in asked])
        again = self._crops(frame, refined)
        p = self.net.predict(again)
        need = self._moved_again(frame, refined, again, p)
        # A weaker peak's refined box must also show a face surely, as a faint die's must:
        # refined onto a speck, a wide lens's side face or a wall's printed letter, such a
        # box is often a die to the nets, but shows them no face (on the bench's scenes,
        # 400 hard and 300 wide-lens ones: of the 59 they took for dice on no labelled
        # die none read a face at 0.8; of the 28 on dice, 10 did).
        weak_ok = _faces(p, 1, REJUDGE_FACE)
        found = [boxes[i] for i in range(len(boxes)) if score[i] * die_p[i] >= KEEP_MIN]
        boxes, crops, probs = list(boxes), crops.copy(), probs.copy()
        rescued = set()
        for j, i in enumerate(asked):
            # Only a die no other box finds: a box on a die's face alone (the small-dice
            # look boxes the pips of a Biggy) refined is a smaller box of a die found already.
            if 1.0 - p[j, NOT_A_DIE] >= need[j] and (
                    score[i] >= REJUDGE_PEAK or weak_ok[j]) and not any(
                    _same_die(refined[j], f) for f in found):
                boxes[i], crops[i], probs[i] = refined[j], again[j], p[j]
                rescued.add(i)
        return boxes, crops, probs, rescued

    def _moved_again(self, frame: np.ndarray, refined: list, crops: np.ndarray,
                     probs: np.ndarray) -> np.ndarray:
        """The die probability each refined box must reach to be kept: RESCUE_SURE, or
        AGAIN_DIE for a box the nets still call no die, which is moved once more (`refined`,
        `crops` and `probs` are updated in place for those). The refiner moves a box TRUST of
        the way to its die, so a box straddling two dice may end its move still half on the
        neighbour, no die to the nets (the bench's synthetic scenes: a purple 4 between two
        black dice, die probability 0.28 once refined, 1.00 twice). Moved twice, a box has
        travelled far from the detector's guess, so the nets must be as sure of a die there as
        of a faint one: specks (a printed dot, a pebble off the tray) so moved were dice to
        them at 0.84-0.85."""
        from .valuenet import NOT_A_DIE

        need = np.full(len(refined), RESCUE_SURE, np.float32)
        rows = [j for j in range(len(refined)) if 1.0 - probs[j, NOT_A_DIE] < RESCUE_SURE]
        if rows:
            moved = self.refiner.refine(frame, [refined[j] for j in rows])
            moved_crops = self._crops(frame, moved)
            moved_p = self.net.predict(moved_crops)
            for k, j in enumerate(rows):
                refined[j], crops[j], probs[j] = moved[k], moved_crops[k], moved_p[k]
                need[j] = AGAIN_DIE
        return need

    def _faint_dice(self, frame: np.ndarray, faint: list, found: list
                    ) -> tuple[list, np.ndarray | None, np.ndarray | None]:
        """Of the usual look's peaks under KEEP_MIN (`faint`), those on a die no other box
        finds that the nets are sure is a die and read a face on surely: a pale die on pale
        paper, a dark one in shadow or a smeared one gets a weak peak of its own, which the
        peak-times-die-probability rule can never report. Whole dice only, one box per die.
        Of the weak peaks (0.10-0.25) on no reported die, on the bench's synthetic scenes,
        300 wide-lens ones and the photo and render sets, these answers held for 9 of the 23
        on missed dice (8 read right) and for none of the 3,146 on no die. The weak peak
        keeps such a read from being certain (SURE_PEAK), so the table is asked about it.
        `found`: the boxes already taken for dice. Returns the detections kept, with their
        crops and the nets' answers, for the reader's later steps."""
        from .valuenet import NOT_A_DIE

        return self._read_alone(frame, faint, found, lambda probs, peaks: (
            (1.0 - probs[:, NOT_A_DIE] >= FAINT_DIE) & _faces(probs, 1, FAINT_FACE)))

    def _read_alone(self, frame: np.ndarray, candidates: list, found: list,
                    keep: Callable[[np.ndarray, np.ndarray], np.ndarray]
                    ) -> tuple[list, np.ndarray | None, np.ndarray | None]:
        """Of `candidates` (detections), the whole ones on no die `found` (boxes) or a
        stronger candidate holds, read by the value nets; those `keep(probs, peaks)` takes,
        with their crops and the nets' answers (None, None when there are none to read)."""
        assert self.net is not None
        alone, taken = [], list(found)
        for d in sorted(candidates, key=lambda d: -d.score):
            if _within_frame(d) and not any(_same_die(d.bbox, b) for b in taken):
                alone.append(d)
                taken.append(d.bbox)
        if not alone:
            return [], None, None
        crops = self._crops(frame, [d.bbox for d in alone])
        probs = self.net.predict(crops)
        dice = keep(probs, np.array([d.score for d in alone], np.float32))
        return [d for d, ok in zip(alone, dice, strict=True) if ok], crops[dice], probs[dice]

    def _toned_dice(self, frame: np.ndarray, found: list, sure: list
                    ) -> tuple[list, np.ndarray | None, np.ndarray | None]:
        """Dice the usual look finds only in the frame re-toned: in an overexposed frame a pale
        die on pale paper (pink or white on white) and in a dark one a dark die in shadow differ
        from the floor by a few grey levels, and the detector boxes a part of such a die or
        nothing. Raised to a power (`TONE_GAMMA`, or its inverse for a dark frame), those levels
        are spread apart. Kept, like the usual look's boxes, where the peak times the nets' die
        probability reaches KEEP_MIN, whole and not a speck, on a die no other box finds (`found`:
        the boxes taken for dice), and where the nets read a face at TONE_FACE or more: a dark
        frame brightened shows a wide lens's tall side faces well enough to be boxed apart from
        their top faces, and the nets read those less surely (without the face test, 3 invented
        dice on 300 wide-lens scenes; with it, none). The nets judge such a die re-toned too, as
        the detector saw it: the pips of a pale pink die on white paper, faint in the frame, stand
        out there (a pink 6 read at 0.48 in the frame, 0.74 re-toned), as does a dark die in shadow
        (the bench's synthetic scenes: 2 more dice found, read right; 1,000 fresh hard and
        wide-lens scenes: 1 more, and a wide lens's side face boxed apart from its die, uncertain;
        the photo and render sets unchanged). Never certain (see `_read_detected`): the picture
        they were found in is not the one the camera took. A faint peak there (FAINT_PEAK to
        KEEP_MIN) is judged as the usual look's are (`_faint_dice`): a white 1 in a dark frame's
        shadow, peaked at 0.23 re-toned, the nets sure of a die and its face (the bench 1 more die;
        the other sets unchanged)."""
        from .detector import tone_curve
        from .valuenet import NOT_A_DIE

        assert self.detector is not None and self.net is not None
        gamma = _tone_gamma(frame)
        if gamma is None:
            return [], None, None
        curve = tone_curve(gamma)
        toned = _without_specks(self.detector.detect(frame, FAINT_PEAK, tone=curve), sure)
        seen = cv2.LUT(frame, curve) if TONE_JUDGED else frame

        def keep(probs: np.ndarray, peaks: np.ndarray) -> np.ndarray:
            die = 1.0 - probs[:, NOT_A_DIE]
            # The usual look's rule with a face read, or, for a faint peak, the faint dice's.
            return (((peaks * die >= KEEP_MIN) & _faces(probs, 1, TONE_FACE))
                    | ((die >= FAINT_DIE) & _faces(probs, 1, FAINT_FACE)))

        return self._read_alone(seen, toned, found, keep)

    def _whole_after_all(self, frame: np.ndarray, overshooting: list) -> list:
        """Of the detections whose boxes reach past the frame edge by more than
        CUT_TOLERANCE, those whose die the box refiner puts inside the frame after all
        (within REFINED_CUT of its side): a whole die a few pixels from the edge whose
        predicted box overshoots, which the detector's box alone would skip as cut (5 of the
        misses on the bench's synthetic scenes, a Biggy among them). The refiner never saw
        a cut die in training; on 400 fresh synthetic hard scenes it puts each of the 28
        whole dice whose box overshoots within 0.01 of its side of the frame, and 105 of the
        131 cut dice skipped today further out than REFINED_CUT. A cut die let through is
        read and asked about (EDGE_DOUBT), never certain."""
        if self.refiner is None or not overshooting:
            return []
        from .boxnet import apply_edges

        h, w = frame.shape[:2]
        kept = []
        for d, e in zip(overshooting, self.refiner.edges(frame, [d.bbox for d in overshooting]),
                        strict=True):
            x0, y0, x1, y1 = apply_edges(d.bbox, e, None)
            if min(x0, y0, w - x1, h - y1) >= -REFINED_CUT * box_side(d.bbox):
                kept.append(d)
        return kept

    def _dice_among(self, frame: np.ndarray, boxes: list, die_p: np.ndarray,
                    eligible: np.ndarray, settled: dict | None = None) -> list[int]:
        """`_one_box_per_die`, with a second look at the boxes it drops: a detector box
        grown over a neighbour (by a shadow, or a cluster's shared edge) holds most of the
        next die's box and hides it, though the two are dice of their own (on the bench's
        synthetic scenes, 8 misses whose boxes the nets called a die at 0.5-1.0, each lying
        60% inside a surer box that matched its neighbour). The box refiner brings both
        boxes of each such pair to their dice, and the pair is judged again on those: boxes
        on one die (a Biggy's two peaks, a pip's box inside its die) still meet there."""
        kept = _one_box_per_die(boxes, die_p, eligible)
        if self.refiner is None:
            return kept
        settled = {} if settled is None else settled
        hidden = [i for i in range(len(boxes))
                  if eligible[i] and die_p[i] >= RESCUE_SURE and i not in kept]
        # A box grown over its neighbour takes in part of it, and the nets may doubt it is
        # one die at all (a red 2 of the bench's scenes boxed 1.3x, die probability 0.54):
        # such a box is judged on its refined box too.
        weak = [i for i in range(len(boxes))
                if eligible[i] and die_p[i] < RESCUE_SURE and i not in kept]
        if weak:
            from .valuenet import NOT_A_DIE

            # Still no die once refined, such a box is moved once more (a white die in a
            # wide-lens cluster of three); the box it is judged on is the one reported.
            refined = self._refined(frame, boxes, weak, settled)
            crops = self._crops(frame, refined)
            again = self.net.predict(crops)
            need = self._moved_again(frame, refined, crops, again)
            for i, box, p, least in zip(weak, refined, again, need, strict=True):
                if 1.0 - p[NOT_A_DIE] >= least:
                    settled[i] = box
                    hidden.append(i)
        if not hidden:
            return kept
        asked = sorted(set(hidden) | {j for j in kept
                                      if any(_same_die(boxes[i], boxes[j]) for i in hidden)})
        refined = dict(zip(asked, self._refined(frame, boxes, asked, settled), strict=True))
        seen = [refined.get(i, boxes[i]) for i in range(len(boxes))]
        for i in sorted(hidden, key=lambda i: -die_p[i]):
            if not any(_same_die(seen[i], seen[j]) for j in kept):
                kept.append(i)
        return kept

    def _parted(self, frame: np.ndarray, boxes: list, kept: list[int], eligible: np.ndarray,
                settled: dict) -> dict[int, tuple[tuple[float, ...], np.ndarray, np.ndarray]]:
        """The dropped boxes that hold a die of their own beside the kept box they overlap, each
        with that die's box, its crop and the nets' answer on it. Two touching dice of one colour
        (a player's dice lie together after a roll) may get one detector box round both, besides
        the box of the surer of them, which hides it; refined, the box round both stays round both
        (a Biggy pink 5 beside a pink 1 of the bench's scenes). What it holds past the kept box, if
        at least PART_LEAST of that box's side, is refined alone, and is a die where the nets are
        RESCUE_SURE of a die there and read a face on it at PART_FACE, and where it does not meet a
        kept die. A side face of the kept die itself (a cocked die, a wide lens's tall side) gives
        a weaker face read: at 0.5, 6 invented dice on 1,500 synthetic scenes; at 0.8, 1 (beside a
        cocked Biggy boxed in two already), with 7 dice found, all read right (bench 1, hard seed
        91 2, wide-lens seeds 97 and 5000 1 and 3); the photo and render sets unchanged."""
        if self.refiner is None:
            return {}
        from .valuenet import NOT_A_DIE

        seen = {j: settled.get(j, boxes[j]) for j in kept}
        cand: dict[int, tuple[float, float, float, float]] = {}
        for i in range(len(boxes)):
            if i in seen or not eligible[i]:
                continue
            b = boxes[i]
            hiders = [j for j in kept if _same_die(b, boxes[j])]
            if not hiders:
                continue
            j = max(hiders, key=lambda j: _intersection(b, boxes[j]))
            k = boxes[j]
            side = box_side(k)
            parts = [(b[0], b[1], k[0], b[3]), (k[2], b[1], b[2], b[3]),
                     (b[0], b[1], b[2], k[1]), (b[0], k[3], b[2], b[3])]
            parts = [q for q in parts if min(q[2] - q[0], q[3] - q[1]) >= PART_LEAST * side]
            if parts:
                cand[i] = max(parts, key=lambda q: (q[2] - q[0]) * (q[3] - q[1]))
        if not cand:
            return {}
        rows = list(cand)
        refined = self.refiner.refine(frame, [cand[i] for i in rows])
        crops = self._crops(frame, refined)
        probs = self.net.predict(crops)
        dice = (1.0 - probs[:, NOT_A_DIE] >= RESCUE_SURE) & _faces(probs, 1, PART_FACE)
        taken = list(seen.values())
        out = {}
        for k, i in enumerate(rows):
            if dice[k] and not any(_same_die(refined[k], q) for q in taken):
                out[i] = (refined[k], crops[k], probs[k])
                taken.append(refined[k])
        return out

    def _colours(self, frame: np.ndarray, boxes: list, gains: np.ndarray | None = None,
                 pips: list[bool] | None = None) -> list[str]:
        """Name each die's colour: against the profile's colours when it has them (measured
        under its white balance; `gains` are worked out here unless given), else against its
        white pips (`RELATIVE_PALETTE`), which needs no balance. `pips` says which dice were
        read with a value (see `nearest_relative`)."""
        if self.profile and self.profile.colours:
            if gains is None:
                gains = self._balance(frame, boxes)
            return [self._box_colour(frame, b, gains)[0] for b in boxes]
        shown = pips if pips is not None else [False] * len(boxes)
        labs, scale = _relative(frame, boxes)
        names = [nearest_relative(lab, p) for lab, p in zip(labs, shown, strict=True)]
        # A die read without a value may still show its pips: a cocked or smeared white die
        # in shade comes out as gray, which only Royale's blank dice are (on the bench's
        # synthetic scenes 31 of the 72 misnamed dice, 25 of them cocked white dice).
        names = [nearest_relative(lab, True) if name == "gray" and _shows_pips(frame, box)
                 else name for name, lab, box in zip(names, labs, boxes, strict=True)]
        if self.colour_net is None or not len(boxes):
            return names
        from .colournet import COLOURS, colour_crop

        # The net sees the whole die (a glossy top mirroring the lamp hides the paint that
        # its bevels and sides still show); it knows no gray, which only a blank die is.
        probs = self.colour_net.predict(np.stack([
            colour_crop(frame, b, g, lab) for b, g, lab in zip(boxes, scale, labs, strict=True)]))
        return [name if name == "gray" else COLOURS[int(np.argmax(p))]
                for name, p in zip(names, probs, strict=True)]

    def _balance(self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]
                 ) -> np.ndarray:
        """Grey-world white balance on everything that is not a die."""
        h, w = frame.shape[:2]
        f = 80.0 / max(h, w)
        tiny = cv2.resize(frame, (max(1, round(w * f)), max(1, round(h * f))),
                          interpolation=cv2.INTER_AREA)
        keep = np.ones(tiny.shape[:2], np.uint8)
        for x0, y0, x1, y1 in boxes:
            keep[int(y0 * f) : math.ceil(y1 * f), int(x0 * f) : math.ceil(x1 * f)] = 0
        return self._grey_world(tiny, keep)

    # --- learned reading -------------------------------------------------------------------
    def _second_opinion(self, frame: np.ndarray, box: tuple[float, float, float, float],
                        value: int, confidence: float) -> float:
        """Keep a certain read certain only if the pips, counted by rule, agree.

        The net and the pip rules fail in different ways; a value both see is far less likely
        to be wrong than either alone, and "certain" must mean well under 1 error in 1,000.
        A 2 or a 4 with a bright spot in the middle of its face is never certain: glare there
        can hide the middle pip of a 3 or a 5, which neither the nets nor the count can see.
        """
        x0, y0, x1, y1 = box
        h, w = frame.shape[:2]
        # Seen from an angle, a die's box also holds one or two side faces, whose pips spoil
        # the count. The top face lies towards the side away from the camera's axis, so look
        # at the plain inset box and at an inset box shifted that way.
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        dx, dy = cx - w / 2, cy - h / 2
        norm = math.hypot(dx, dy) or 1.0
        tries = [(0.0, 0.0, BOX_PAD), (dx / norm * 0.08, dy / norm * 0.08, 0.14)]
        for ox, oy, inset in tries:
            cut = _face_patch(frame, box, inset, ox, oy)
            if cut is None:
                continue
            if value in (2, 4) and _bright_middle(cut[0]):
                break
            count, _, fit = self._pips(cut[0])
            if count == value and fit > 0.5:
                return confidence
        return min(confidence, CERTAIN - 0.05)

    def _box_colour(self, frame: np.ndarray, box: tuple[float, float, float, float],
                    gains: np.ndarray) -> tuple[str, float]:
        """The die's colour from the middle of its box; the median ignores the pips."""
        x0, y0, x1, y1 = box
        cw, ch = (x1 - x0) * 0.25, (y1 - y0) * 0.25
        h, w = frame.shape[:2]
        a0, b0 = max(0, int(x0 + cw)), max(0, int(y0 + ch))
        a1, b1 = min(w, int(x1 - cw) + 1), min(h, int(y1 - ch) + 1)
        if a1 <= a0 or b1 <= b0:
            return self.names[0], 99.0
        patch = np.clip(frame[b0:b1, a0:a1].astype(np.float32) * gains, 0, 255) / 255.0
        lab = cv2.cvtColor(patch.astype(np.float32), cv2.COLOR_BGR2Lab)
        return self._name_colour(lab.reshape(-1, 3))

    def _name_colour(self, body: np.ndarray) -> tuple[str, float]:
        if body.size == 0:
            return self.names[0], 99.0
        med = np.median(body.reshape(-1, 3), axis=0).astype(np.float32)
        d = np.linalg.norm(self.labs - med, axis=1) / self.spreads
        i = int(np.argmin(d))
        return self.names[i], float(np.linalg.norm(self.labs[i] - med))

    def _pips(self, light: np.ndarray) -> tuple[int | None, np.ndarray | None, float]:
        """Find the top face's pips and check they sit where a real face puts them.

        Pips are small round blobs that stand out from the face around them, lighter or
        darker; top-hat and black-hat filters find both kinds whatever the die's colour.
        Pips on side faces (seen at an angle) are squashed, so roundness drops them; the
        pattern test then rejects anything that is not a real face (glare, cocked dice).
        """
        pips, binary = _find_pips(light)
        if binary is None:
            return None, None, 0.2  # no contrast: blurred, or no face visible
        count = len(pips)
        if not 1 <= count <= 6:
            return None, binary, 0.1
        pts = np.array([(p[0], p[1]) for p in pips], np.float32)
        areas = np.array([p[2] for p in pips], np.float32)
        spread = float(areas.std() / areas.mean()) if count > 1 else 0.0
        fit = _face_fit(pts, count) * math.exp(-((max(spread - 0.3, 0) / 0.25) ** 2))
        return count, binary, float(fit)

    def _grey_world(self, img: np.ndarray, floor: np.ndarray) -> np.ndarray:
        """White balance gains from the floor alone (grey world), unless the profile has them."""
        if self.profile and self.profile.white_balance:
            return np.ones(3, np.float32)
        pixels = img[floor > 0]
        if pixels.size < 30:
            pixels = img.reshape(-1, 3)
        means = pixels.reshape(-1, 3).astype(np.float32).mean(axis=0) + 1e-3
        return (means.mean() / means).astype(np.float32)


_PERMS = {n: np.array(list(itertools.permutations(range(n))), np.intp) for n in range(1, 7)}


def _find_pips(light: np.ndarray
               ) -> tuple[list[tuple[float, float, float]], np.ndarray | None]:
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


def _shows_pips(frame: np.ndarray, box: Sequence[float]) -> bool:
    """Whether the pip rule finds BLANK_PIPS pips or more in the box (at either inset): the
    only sign left that a die read without a value is no blank one. Of such dice it found
    them on 536 of 685 on the bench's synthetic scenes (cocked, smeared, tiny), and on 4 of
    32 blank gray dice in 120 synthetic scenes of them (a speck of noise or the shading)."""
    for inset in PIP_INSETS:
        cut = _face_patch(frame, box, inset)
        if cut is not None and len(_find_pips(cut[0])[0]) >= BLANK_PIPS:
            return True
    return False


def _face_patch(frame: np.ndarray, box: Sequence[float], inset: float, ox: float = 0.0,
                oy: float = 0.0) -> tuple[np.ndarray, int, int] | None:
    """The box inset by `inset` and shifted by (`ox`, `oy`) of its longer side, as lightness
    (Lab L) resized to CROP x CROP, with the cut's width and height in frame pixels; None
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
    patch = cv2.resize(frame[b0:b1, a0:a1], (CROP, CROP), interpolation=cv2.INTER_AREA)
    light = cv2.cvtColor(patch.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)[..., 0]
    return light, a1 - a0, b1 - b0


# The middle of a CROP-square face patch: a disc of 0.12 of its side, inside any 2 or 4's pips.
_MIDDLE = np.hypot(*(np.mgrid[0:CROP, 0:CROP] - (CROP - 1) / 2.0)) < 0.12 * CROP


def _bright_middle(light: np.ndarray) -> bool:
    """Whether the middle of a face patch (lightness, CROP square), where the 3 and the 5 have
    a pip and the 2 and the 4 none, is far lighter than the face: a glare spot that may hide
    a pip. Measured on certain reads of 2 and 4 (300 synthetic hard scenes, both photo sets,
    both render sets): the middle is lighter than the face's median by at most 38 on right
    reads and by 46 on the one wrong (a 5 under glare); from BRIGHT_MIDDLE on, 5 of 445 right
    synthetic reads and 1 of 135 on rune55 are asked about instead, none elsewhere."""
    return float(light[_MIDDLE].mean()) - float(np.median(light)) > BRIGHT_MIDDLE


def calibrated(p: float) -> float:
    """The nets' probability for a read, as the confidence the contract promises: from 0.9 on,
    at most 1 wrong read in 1,000.

    The nets' temperatures were fitted on all their answers, which leaves the top of the
    scale too bold: on the photo and render sets, reads at 0.90-0.94 were wrong 2 times in 46
    (a translucent 3 whose middle pip a reflection hides, read 2; a tiny marbled 2 read 1),
    those above 0.94 never in about 1,200 (the other confident errors there are label
    mistakes), nor in 850 on synthetic scenes. So 0.94 maps to 0.9, 1 stays 1 and everything
    up to 0.8 is left as it is, linearly in between: the order of reads never changes.
    """
    return float(np.interp(p, (0.0, CALIBRATED_BELOW, SURE_FROM, 1.0),
                           (0.0, CALIBRATED_BELOW, CERTAIN, 1.0)))


def face_side(frame: np.ndarray, box: Sequence[float], value: int) -> float | None:
    """The top face's side in frame pixels from its pips' spread, or None when the pips
    found are not `value` of them (a 1 has no spread).

    Unlike the box, the spread grows neither with the die's turn nor with the side faces
    the camera sees; the Biggy checks lean on it. The inset box is resized to a square to
    find the pips, and their places are stretched back, since a box with side faces in it
    is not square."""
    if value < 2:
        return None
    cut = _face_patch(frame, box, BOX_PAD)
    if cut is None:
        return None
    light, cut_w, cut_h = cut
    pips, _ = _find_pips(light)
    if len(pips) != value:
        return None
    pts = np.array([(p[0] * cut_w, p[1] * cut_h) for p in pips], np.float64)
    return _spread(pts) / _FACE_SPREAD[value]


def _face_fit(pts: np.ndarray, count: int) -> float:
    """How well the pips match face `count`, in [0, 1], whatever the rotation and scale.

    Every face is symmetric about its centre, so the pips' centroid is the face centre; the
    scale comes from the pips' spread, the rotation is searched. One pip must lie near the
    middle of the die.
    """
    centre = pts.mean(axis=0)
    if count == 1:
        off = float(np.linalg.norm(centre - 0.5))
        return 0.97 * math.exp(-((max(off - 0.12, 0) / 0.1) ** 2))
    tpl = np.array(_FACES[count], np.float32) - 0.5
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


def _mirror_unsure(net: Any, crops: np.ndarray, probs: np.ndarray, rows: Sequence[int],
                   below: float) -> np.ndarray:
    """`probs` (the nets' answers for `crops`), with each of `rows` whose likeliest class
    stays under `below` read again mirrored left to right and the two answers averaged.

    A die reads the same in a mirror, and a crop turned towards the frame's centre keeps its
    top (the nets learnt from mirrored crops too), so the mirror is a second look at the same
    die whose errors are partly its own: it settles some of the reads the nets waver on,
    without a second pass over the crops they are sure of (about a quarter of the dice).
    """
    out = np.array(probs, np.float32)
    unsure = [i for i in rows if out[i].max() < below]
    if unsure:
        mirrored = np.ascontiguousarray(np.asarray(crops, np.float32)[unsure][..., ::-1])
        out[unsure] = (out[unsure] + net.predict(mirrored, paints=True)) / 2
    return out


def _typical(p_unreadable: np.ndarray) -> float:
    """The belief in "unreadable" of a frame's typical die: the mean over the least doubted
    NADIR_TYPICAL of them, so a few cocked dice do not make the frame look oblique."""
    u = np.sort(np.asarray(p_unreadable, np.float64))
    return float(u[: max(1, round(NADIR_TYPICAL * len(u)))].mean())


def _tone_gamma(frame: np.ndarray) -> float | None:
    """The power `_toned_dice` raises a frame's levels to: TONE_GAMMA where its median grey
    level is above TONE_BRIGHT, the inverse where it is below TONE_DARK, else None (no
    second look)."""
    h, w = frame.shape[:2]
    f = FLOOR_SIZE / max(h, w)
    thumb = cv2.resize(frame, (max(1, round(w * f)), max(1, round(h * f))),
                       interpolation=cv2.INTER_AREA)
    grey = cv2.cvtColor(thumb, cv2.COLOR_BGR2GRAY) if thumb.ndim == 3 else thumb
    level = float(np.median(grey))
    if level > TONE_BRIGHT:
        return TONE_GAMMA
    if level < TONE_DARK:
        return 1.0 / TONE_GAMMA
    return None


def _without_specks(dets: list, sure: list) -> list:
    """`dets` less the boxes under SPECK_SHARE of the typical side of the dice the detector
    is sure of (`sure`), once it is sure of SPECK_SURE or more.

    One camera sees all dice of a game at much the same size (perspective and Biggies make
    them 0.7-1.4 times the typical one): a box half that size is a speck, a pip or a glint,
    most of them found by the small-dice second look (loose renders' precision 94.3 ->
    95.1%, rune55 97.4 -> 97.6%, no die lost; from 0.7 real dice at the far side of a
    slanted photo go too).
    """
    if len(sure) < SPECK_SURE:
        return dets
    typical = _median_side(sure)
    return [d for d in dets if box_side(d.bbox) >= SPECK_SHARE * typical]


def _within_frame(d: Any) -> bool:
    """Whether a detection's predicted box reaches past the frame edge by no more than
    CUT_TOLERANCE of its side: a whole die (see `DiceReader._read_detected`)."""
    return d.margin >= -CUT_TOLERANCE * box_side(d.bbox)


def _faces(probs: np.ndarray, least: int, sure: float) -> np.ndarray:
    """Which of the value nets' answers name a face of `least` pips or more with at least
    `sure`: the test both the large looks and the usual look are held to, so that they
    compare."""
    best = probs.argmax(axis=1)
    return (best >= least) & (best <= 6) & (probs[np.arange(len(probs)), best] >= sure)


def _one_box_per_die(boxes: list, die_p: np.ndarray, eligible: np.ndarray) -> list[int]:
    """Indices of the eligible boxes to report, surest first: dice do not overlap seen from
    above, so a box overlapping a surer one by SAME_DIE_IOU or more is the same die again, and
    so is a box lying mostly inside a surer one (a pip or a face of a die taken for a small
    die of its own: IoU alone misses it, the small box being a sliver of the union)."""
    kept: list[int] = []
    for i in np.argsort(-die_p, kind="stable"):
        if eligible[i] and not any(_same_die(boxes[i], boxes[j]) for j in kept):
            kept.append(int(i))
    return kept


def _holds(large: list, held_by: list) -> bool:
    """Whether most of the boxes `held_by` (what the usual look is sure of) lie inside the
    `large` dice: their pips and halves, or the large dice themselves, and not dice of their
    own beside them (see `DiceReader._look`)."""
    inside = sum(any(_inside(h.bbox, f.bbox) >= SAME_DIE_INSIDE for f in large)
                 for h in held_by)
    return 2 * inside >= len(held_by)


def _same_die(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Two boxes that overlap this much are one die seen twice (see `_one_box_per_die`)."""
    return _iou(a, b) >= SAME_DIE_IOU or _inside(a, b) >= SAME_DIE_INSIDE


def _ask_about_leans(net: Any, frame: np.ndarray, sure: list[DieRead],
                     leaning: list[tuple[DieRead, float]], grow: float | None,
                     doubt_from: float, null_from: float,
                     nadir: tuple[float, float] | None = None) -> None:
    """Ask `net` (in one batch, each box grown by `grow` when given) how much it believes the
    certain reads and the half-doubted ones (`leaning`, with the four's belief) lean: from
    `doubt_from` a certain read is left uncertain, and from `null_from` a half-doubted read
    becomes a null read, at the mean of the two beliefs. A null read is never certain."""
    from .valuenet import UNREADABLE

    asked = sure + [r for r, _ in leaning]
    if not asked:
        return
    boxes = [r.bbox if grow is None else _scaled(r.bbox, grow) for r in asked]
    p_lean = net.predict(np.stack([net.crop(frame, b, nadir) for b in boxes]))[:, UNREADABLE]
    for r, p in zip(sure, p_lean[:len(sure)], strict=True):
        if p >= doubt_from:
            r.confidence = min(r.confidence, CERTAIN - 0.05)
    for (r, p_four), p in zip(leaning, p_lean[len(sure):], strict=True):
        if p >= null_from:
            r.value = None
            r.confidence = min((p_four + float(p)) / 2, CERTAIN - 0.05)


def _doubted_by_rivals(boxes: list, probs: np.ndarray, kept: list[int]) -> set[int]:
    """Kept boxes with a second box on the same die that the value nets surely cannot read.

    A die leaning on a neighbour often gets two detector boxes: one round its clean top face,
    which the nets read as a flat die (and, being the surest box, it is kept), and one round
    the whole die, side face and all, which they hold unreadable. Two views of one die that
    disagree this much are no ground for certainty. On 800 synthetic hard scenes this catches
    3 of the 11 confident errors (all cocked dice) and demotes 2 of 3,363 right certain reads;
    on the photo and render sets it demotes none.
    """
    from .valuenet import UNREADABLE

    doubted: set[int] = set()
    for i in kept:
        for j in range(len(boxes)):
            if (j not in kept and probs[j, UNREADABLE] >= RIVAL_UNREADABLE
                    and _same_die(boxes[i], boxes[j])):
                doubted.add(i)
                break
    return doubted


def _turn_growth(frame: np.ndarray, box: tuple[float, ...]) -> float:
    """How much larger than the die's side its axis-aligned box is at the die's turn,
    |cos a| + |sin a| (1 to 1.41), with the turn read from the box's edges: a die's outline
    and its pips' rows run at the turn and at right angles to it, so the gradient directions,
    taken four-fold, point at it."""
    h, w = frame.shape[:2]
    x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
    x1, y1 = min(w, math.ceil(box[2])), min(h, math.ceil(box[3]))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return 1.0
    grey = cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    grey = cv2.resize(grey, (TURN_PX, TURN_PX), interpolation=cv2.INTER_AREA).astype(np.float32)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1)
    # Each gradient's direction four-fold, weighted by its strength: r^2 e^(4ia), from the
    # double angle (gx^2 - gy^2, 2 gx gy) = r^2 e^(2ia) squared and divided by r^2.
    c2, s2 = gx * gx - gy * gy, 2 * gx * gy
    r2 = gx * gx + gy * gy + 1e-6
    a = math.atan2(float((2 * c2 * s2 / r2).sum()), float(((c2 * c2 - s2 * s2) / r2).sum())) / 4
    return abs(math.cos(a)) + abs(math.sin(a))


def _scaled(box: Sequence[float], k: float) -> tuple[float, float, float, float]:
    """The box scaled about its centre by k, keeping its shape."""
    x0, y0, x1, y1 = box
    cx, cy, hw, hh = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2 * k, (y1 - y0) / 2 * k
    return (cx - hw, cy - hh, cx + hw, cy + hh)


def box_side(box: Sequence[float]) -> float:
    """A box's mean side (px, at least 1): the die's size as its box gives it."""
    return max(1.0, ((box[2] - box[0]) + (box[3] - box[1])) / 2.0)


def _median_side(dets: Sequence[Any]) -> float:
    """The typical side of the dice a detector look found (frame px): the size the looks
    are sized by and the specks are judged against."""
    return float(np.median([box_side(d.bbox) for d in dets]))


def _intersection(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy


def _inside(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The share of the smaller of two boxes that lies inside the other."""
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return _intersection(a, b) / smaller if smaller > 0 else 0.0


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    inter = _intersection(a, b)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


"""The colour stage: each die's colour, named against the profile's measured colours when it
has them, else against its own white pips (`RELATIVE_PALETTE`), checked by the colour net.

Without a calibration profile a die's colour is read against its own white pips: a die body
divided by the white of the pips beside it (same lamp, same exposure, same shading) is close
to its paint, whatever the lamp's colour temperature and the exposure. Dice with dark pips
(white, yellow, gray) are divided by the white pips of the other dice in the frame. Grey
world on the floor does worse: a kraft or printed lid is no grey.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import cv2
import numpy as np

from .config import DEFAULT, ColourConfig
from .pips import face_contrast, shows_pips
from .profile import ColourRef, Profile

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

# The body, scaled so that white pips become PIP_WHITE, in Lab: fitted by `bench/colours.py
# --fit` on the training halves of the renders and on synthetic scenes, except gray (Royale's
# second neutral set), which no labelled set has.
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
# The level white pips are scaled to: the colour net's crops are made the same way
# (`vision.colournet.colour_crop`), so it is part of that net's input, not a tuning value.
PIP_WHITE = 235.0
_RELATIVE_NAMES = list(RELATIVE_PALETTE)
_RELATIVE_LABS = np.array(list(RELATIVE_PALETTE.values()), np.float32)
_LUMA = np.array([0.114, 0.587, 0.299], np.float32)


def _srgb_to_lab(rgb: tuple[int, int, int]) -> np.ndarray:
    px = np.array([[[rgb[2], rgb[1], rgb[0]]]], np.float32) / 255.0
    return cv2.cvtColor(px, cv2.COLOR_BGR2Lab)[0, 0]


def builtin_palette() -> list[ColourRef]:
    return [ColourRef(n, tuple(float(v) for v in _srgb_to_lab(c)), 8.0)
            for n, c in PALETTE_SRGB.items()]


@dataclass(frozen=True)
class Palette:
    """The colours a reader names dice by: the profile's measured ones, or the built-in."""

    names: list[str]
    labs: np.ndarray
    spreads: np.ndarray
    measured: bool  # the profile's own colours (else the pip-relative rule names dice)
    balanced: bool  # the profile has white balance gains (frames come balanced)

    @classmethod
    def of(cls, profile: Profile | None) -> Palette:
        refs = list(profile.colours) if profile and profile.colours else builtin_palette()
        return cls([r.name for r in refs], np.array([r.lab for r in refs], np.float32),
                   np.array([max(r.spread, 3.0) for r in refs], np.float32),
                   bool(profile and profile.colours), bool(profile and profile.white_balance))


class Relative(NamedTuple):
    """The frame's dice measured against white pips (`_relative`), one row per die."""

    labs: np.ndarray  # pip-relative Lab (dice, 3)
    scale: np.ndarray  # the gain (dice, 3) that maps each die's reference white to PIP_WHITE
    measured: bool  # some die showed white pips (else the brightest die pixels stood in)


def colours(frame: np.ndarray, boxes: Sequence[Sequence[float]], palette: Palette,
            colour_net: Any, cfg: ColourConfig = DEFAULT.colour,
            pips: Sequence[bool] | None = None, relative: Relative | None = None
            ) -> list[str]:
    """Name each die's colour: against the profile's colours when it has them (measured
    under its white balance), else against its white pips (`RELATIVE_PALETTE`), which needs
    no balance. `pips` says which dice were read with a value (see `nearest_relative`);
    `relative` is `_relative` of these boxes when the caller has it already."""
    if palette.measured:
        gains = _balance(frame, boxes, palette)
        return [_box_colour(frame, b, gains, palette)[0] for b in boxes]
    shown = pips if pips is not None else [False] * len(boxes)
    labs, scale, _ = relative if relative is not None else _relative(frame, boxes, cfg)
    names = [nearest_relative(lab, p, cfg) for lab, p in zip(labs, shown, strict=True)]
    # A die read without a value may still show its pips: a cocked or smeared white die in
    # shade comes out as gray, which only Royale's blank dice are.
    names = [nearest_relative(lab, True, cfg)
             if name == "gray" and shows_pips(frame, box, cfg.blank_pips, cfg.pip_insets)
             else name for name, lab, box in zip(names, labs, boxes, strict=True)]
    if not cfg.net or not len(boxes):
        return names
    from .colournet import COLOURS, colour_crop

    # The net sees the whole die (a glossy top mirroring the lamp hides the paint that its
    # bevels and sides still show); it knows no gray, which only a blank die is.
    probs = colour_net.predict(np.stack([
        colour_crop(frame, b, g, lab) for b, g, lab in zip(boxes, scale, labs, strict=True)]))
    return [name if name == "gray" else COLOURS[int(np.argmax(p))]
            for name, p in zip(names, probs, strict=True)]


def blank_dice(frame: np.ndarray, boxes: Sequence[Sequence[float]], unsure: Sequence[bool],
               cfg: ColourConfig = DEFAULT.colour, relative: Relative | None = None
               ) -> list[bool]:
    """Which dice are Royale's blank gray ones: among those whose face the nets are
    `unsure` of, each with nothing pip-like in the middle of its face that the pip-relative
    rule calls gray (a glare-washed coloured or white die stays what it is). Where no die in
    the frame shows white pips (gray dice alone, or beside dark-pipped ones), the rule has
    only the brightest die pixels for white, which a lone gray die's own highlights are:
    there a flat face that is not clearly coloured is blank too. With `cfg.blank_pale` (a
    game whose box has gray dice) a flat face the rule calls white is blank too: under a
    warm lamp or glare a gray die comes out as light as white, where a white die's dark pips
    still stand out. `relative` is `_relative` of these boxes when the caller has it."""
    if not (cfg.blank_face and any(unsure)):
        return [False] * len(boxes)
    # The colour test first: it costs one pass over the frame's dice, where the face test
    # costs as much for each die, and most unsure dice are coloured ones.
    labs, _, measured = relative if relative is not None else _relative(frame, boxes, cfg)
    neutral = ("gray", "white") if cfg.blank_pale else ("gray",)
    grayish = [bool(u) and (nearest_relative(lab, False, cfg) in neutral or (
        not measured and math.hypot(float(lab[1]), float(lab[2])) < cfg.vivid_chroma))
        for u, lab in zip(unsure, labs, strict=True)]
    return [g and (c := face_contrast(frame, b)) is not None and c < cfg.blank_contrast
            for g, b in zip(grayish, boxes, strict=True)]


def relative_colours(frame: np.ndarray, boxes: Sequence[Sequence[float]],
                     cfg: ColourConfig = DEFAULT.colour) -> list[np.ndarray]:
    """Each die's colour in Lab relative to white pips (see RELATIVE_PALETTE)."""
    return list(_relative(frame, boxes, cfg)[0])


def nearest_relative(lab: np.ndarray, pips: bool = False, cfg: ColourConfig = DEFAULT.colour
                     ) -> str:
    """The built-in colour nearest to a pip-relative Lab colour. `pips`: the die shows pips;
    Royale's gray dice are blank, so such a die is never gray (a white die in dim light or
    shade would be)."""
    d = _RELATIVE_LABS - np.asarray(lab, np.float32)
    d[:, 0] *= cfg.l_weight
    dist = (d * d).sum(axis=1)
    if pips:
        dist[_RELATIVE_NAMES.index("gray")] = np.inf
    return _RELATIVE_NAMES[int(np.argmin(dist))]


def _relative(frame: np.ndarray, boxes: Sequence[Sequence[float]],
              cfg: ColourConfig = DEFAULT.colour) -> Relative:
    """Each die's pip-relative Lab colour (dice, 3), the per-channel gain (dice, 3)
    that maps its reference white to PIP_WHITE, and whether any die showed white pips to
    measure against (else the brightest die pixels stood for white).

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
        return Relative(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), False)
    pix = _patches(frame, boxes, cfg)
    g = cfg.sample_px
    m = round(g * (0.2 - cfg.chroma_margin) / (1 - 2 * cfg.chroma_margin))
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
    tinted = _tinted_pips(pips, light, cfg.pip_tint)
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
                                  ) < cfg.pip_like
        chroma = np.where(tinted[:, None] & like_pip, -1.0, chroma)
    vivid = _masked_median(lab, chroma >= np.percentile(chroma, 70, axis=1, keepdims=True))
    body_lab = _white_scaled_lab(body, scale)
    coloured = np.hypot(vivid[:, 1], vivid[:, 2]) > cfg.vivid_chroma
    return Relative(np.where(coloured[:, None], vivid, body_lab).astype(np.float32), scale,
                    bool(white.any()))


def _patches(frame: np.ndarray, boxes: Sequence[Sequence[float]], cfg: ColourConfig
             ) -> np.ndarray:
    """Every die's box less `cfg.chroma_margin`, resized to `cfg.sample_px` square: (dice,
    pixels, BGR). One grid for all dice lets every statistic run once per frame, not once
    per die."""
    h, w = frame.shape[:2]
    size, margin = cfg.sample_px, cfg.chroma_margin
    out = np.empty((len(boxes), size, size, 3), np.float32)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        cw, ch = (x1 - x0) * margin, (y1 - y0) * margin
        a0, b0 = min(max(0, int(x0 + cw)), w - 1), min(max(0, int(y0 + ch)), h - 1)
        a1, b1 = min(w, max(int(x1 - cw), a0 + 1)), min(h, max(int(y1 - ch), b0 + 1))
        patch = frame[b0:b1, a0:a1]
        shrink = max(patch.shape[:2]) > size
        out[i] = cv2.resize(patch, (size, size),
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


def _white_scaled_lab(bgr: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """One BGR colour per die (dice, 3) in Lab, after its die's gain to the pip white."""
    rel = np.clip(bgr * scale, 0, 255).reshape(-1, 1, 3).astype(np.float32) / 255.0
    return cv2.cvtColor(rel, cv2.COLOR_BGR2Lab).reshape(-1, 3)


def _tinted_pips(pips: np.ndarray, light: np.ndarray, tint: float) -> np.ndarray:
    """Which dice's light pips are coloured (gold, yellow, red...) rather than white.

    The game's pips are white, and one lamp lights every die alike, so white pips share one
    hue in a frame whatever the lamp: a die whose light pips stray further than `tint` from
    the frame's typical pip hue has coloured ones, which taken for white would skew its
    colour. Judged on each pip colour's chromaticity (log BGR less its mean, so brightness is
    out of it) against the median of the light-pipped dice; in a frame where most dice have
    coloured pips the median is coloured too, and nothing can be told.
    """
    out = np.zeros(len(pips), bool)
    if light.sum() < 2:
        return out
    hue = np.log(pips.astype(np.float64) + 8.0)
    hue -= hue.mean(axis=1, keepdims=True)
    typical = np.median(hue[light], axis=0)
    return light & (np.linalg.norm(hue - typical, axis=1) > tint)


def _balance(frame: np.ndarray, boxes: Sequence[Sequence[float]], palette: Palette
             ) -> np.ndarray:
    """Grey-world white balance on everything that is not a die (none where the profile's
    own gains balanced the frame already)."""
    if palette.balanced:
        return np.ones(3, np.float32)
    h, w = frame.shape[:2]
    f = 80.0 / max(h, w)
    tiny = cv2.resize(frame, (max(1, round(w * f)), max(1, round(h * f))),
                      interpolation=cv2.INTER_AREA)
    keep = np.ones(tiny.shape[:2], np.uint8)
    for x0, y0, x1, y1 in boxes:
        keep[int(y0 * f) : math.ceil(y1 * f), int(x0 * f) : math.ceil(x1 * f)] = 0
    pixels = tiny[keep > 0]
    if pixels.size < 30:
        pixels = tiny.reshape(-1, 3)
    means = pixels.reshape(-1, 3).astype(np.float32).mean(axis=0) + 1e-3
    return (means.mean() / means).astype(np.float32)


def _box_colour(frame: np.ndarray, box: Sequence[float], gains: np.ndarray, palette: Palette
                ) -> tuple[str, float]:
    """The die's colour from the middle of its box; the median ignores the pips."""
    x0, y0, x1, y1 = box
    cw, ch = (x1 - x0) * 0.25, (y1 - y0) * 0.25
    h, w = frame.shape[:2]
    a0, b0 = max(0, int(x0 + cw)), max(0, int(y0 + ch))
    a1, b1 = min(w, int(x1 - cw) + 1), min(h, int(y1 - ch) + 1)
    if a1 <= a0 or b1 <= b0:
        return palette.names[0], 99.0
    patch = np.clip(frame[b0:b1, a0:a1].astype(np.float32) * gains, 0, 255) / 255.0
    lab = cv2.cvtColor(patch.astype(np.float32), cv2.COLOR_BGR2Lab).reshape(-1, 3)
    if lab.size == 0:
        return palette.names[0], 99.0
    med = np.median(lab, axis=0).astype(np.float32)
    d = np.linalg.norm(palette.labs - med, axis=1) / palette.spreads
    i = int(np.argmin(d))
    return palette.names[i], float(np.linalg.norm(palette.labs[i] - med))

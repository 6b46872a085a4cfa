"""Synthetic, labelled top-down frames of a box-lid dice tray.

Real labelled photos are few and slow to make, so tests, benchmarks and the demo use these frames.
Each scene is a pure function of its seed. Dice sit on the tray floor in millimetres (a demo can
move them and re-render) and go through a real pinhole camera, so wall perspective, leaning
side faces and foreshortening come from geometry, not from 2-D tricks. The labels are the truth
the renderer used; they are never read back from the pixels.

World frame: the floor spans x in [0, floor_w_mm], y in [0, floor_h_mm], z is up. The camera looks
down from above a point of the floor, so every inner wall faces it.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

DIE_MM = 16.0  # Las Vegas dice are 16 mm
BIG_SCALE = 1.4  # Biggy dice
SS = 2  # supersampling of the dice patches
PIP_GLARE = 0.25  # share of a highlight a pip shows, beside the face around it

# Albedo in BGR, 0..1. Chosen to look like the opaque plastic dice of the game under the shading
# model below, not colorimetric truth.
COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.13, 0.11, 0.78),
    "blue": (0.72, 0.33, 0.07),
    "green": (0.26, 0.56, 0.09),
    "yellow": (0.08, 0.80, 0.93),
    "black": (0.09, 0.09, 0.09),
    "white": (0.90, 0.90, 0.88),
    "purple": (0.55, 0.13, 0.42),
    "orange": (0.04, 0.38, 0.93),
    "pink": (0.66, 0.43, 0.95),
    "gray": (0.48, 0.48, 0.47),  # Royale's second neutral set; never a random player colour
}
PIP_COLOURS: dict[str, tuple[float, float, float]] = {
    "white": (0.94, 0.94, 0.93),
    "black": (0.05, 0.05, 0.06),
}
BLANK = ("gray",)  # Royale's gray dice have no pips: drawn blank, labelled without a value
DEFAULT_PIP = {c: ("black" if c in ("white", "yellow", "gray") else "white") for c in COLOURS}
PLAYER_COLOURS = [c for c in COLOURS if c not in ("white", "gray")]

PRESETS = ("easy", "normal", "hard", "wide")
_PRESET_SALT = {"easy": 11, "normal": 23, "hard": 37, "wide": 41}


@dataclass(frozen=True)
class _Knobs:
    """How hard a preset pushes each condition; ranges are sampled per scene."""

    n: tuple[int, int]
    loose_p: float
    yaw: float
    tilt: float
    cut_p: float
    cluster_p: float
    wall_p: float
    cocked: tuple[int, int]
    cocked_p: float
    big_p: float
    min_big: int
    blur_p: float
    blur: tuple[float, float]
    glare_p: float
    min_glare: int
    gradient: tuple[float, float]
    vignette: tuple[float, float]
    kelvin: tuple[float, float]
    kelvin_extreme: bool
    wb: tuple[float, float]
    ev: tuple[float, float]
    ev_extreme: bool
    noise: tuple[float, float]
    jpeg: tuple[int, int]
    shadow: tuple[float, float]
    elevation: tuple[float, float]
    # Share of scenes shot through a wide lens (88-105 degrees across, as the Pi Camera Module
    # 3 Wide): dice off the axis show tall side faces and lean outwards in the picture.
    wide_p: float = 0.0


_KNOBS: dict[str, _Knobs] = {
    "easy": _Knobs(
        n=(2, 6), loose_p=0.0, yaw=4, tilt=3, cut_p=0.0, cluster_p=0.15, wall_p=0.1,
        cocked=(0, 0), cocked_p=0.0, big_p=0.1, min_big=0, blur_p=0.0, blur=(0, 0),
        glare_p=0.0, min_glare=0, gradient=(0.0, 0.05), vignette=(0.0, 0.06),
        kelvin=(5000, 6000), kelvin_extreme=False, wb=(0.85, 1.0), ev=(-0.1, 0.1),
        ev_extreme=False, noise=(0.0, 0.0), jpeg=(100, 100), shadow=(0.2, 0.3),
        elevation=(60, 80),
    ),
    "normal": _Knobs(
        n=(3, 12), loose_p=0.25, yaw=10, tilt=7, cut_p=0.0, cluster_p=0.35, wall_p=0.2,
        cocked=(1, 1), cocked_p=0.15, big_p=0.12, min_big=0, blur_p=0.05, blur=(0.1, 0.3),
        glare_p=0.1, min_glare=0, gradient=(0.05, 0.2), vignette=(0.08, 0.25),
        kelvin=(3000, 6500), kelvin_extreme=False, wb=(0.5, 0.85), ev=(-0.5, 0.5),
        ev_extreme=False, noise=(0.006, 0.015), jpeg=(80, 95), shadow=(0.25, 0.45),
        elevation=(45, 80),
    ),
    "hard": _Knobs(
        n=(8, 16), loose_p=0.3, yaw=15, tilt=10, cut_p=0.75, cluster_p=0.55, wall_p=0.35,
        cocked=(1, 2), cocked_p=1.0, big_p=0.2, min_big=1, blur_p=0.2, blur=(0.2, 0.6),
        glare_p=0.35, min_glare=1, gradient=(0.25, 0.4), vignette=(0.2, 0.35),
        kelvin=(2700, 6500), kelvin_extreme=True, wb=(0.2, 0.45), ev=(0.7, 1.0),
        ev_extreme=True, noise=(0.02, 0.035), jpeg=(60, 75), shadow=(0.35, 0.55),
        elevation=(30, 55),
    ),
    # Training scenes for the lenses and heights the other presets leave out; conditions
    # between normal and hard.
    "wide": _Knobs(
        n=(4, 14), loose_p=0.45, yaw=12, tilt=8, cut_p=0.15, cluster_p=0.45, wall_p=0.3,
        cocked=(0, 1), cocked_p=0.3, big_p=0.15, min_big=0, blur_p=0.1, blur=(0.1, 0.4),
        glare_p=0.25, min_glare=0, gradient=(0.05, 0.3), vignette=(0.1, 0.3),
        kelvin=(2700, 6500), kelvin_extreme=False, wb=(0.3, 0.8), ev=(-0.7, 0.7),
        ev_extreme=False, noise=(0.006, 0.025), jpeg=(70, 92), shadow=(0.25, 0.5),
        elevation=(35, 75), wide_p=1.0,
    ),
}

FLOOR_STYLES = ("greyboard", "kraft", "dark_print", "patterned")
TABLE_STYLES = ("wood", "cloth", "white", "dark")


@dataclass
class SceneSpec:
    """Everything random about one scene except the dice.

    Kept separate from the dice so a demo can keep one tray, light and camera while the dice
    move. `camera` is the 3x4 projection matrix K[R|t] (floor mm -> image px).
    """

    width: int
    height: int
    preset: str
    mount: str  # "mounted" (die ~55-90 px at 1280 wide) or "loose" (~20-45 px)
    die_px: float  # nominal die side in px at the floor centre
    floor_w_mm: float
    floor_h_mm: float
    wall_h_mm: float
    rim_mm: float  # thickness of the lid's cardboard, seen as the rim top
    wrap_mm: float  # printed paper wrapped over the rim and down the inner walls
    camera: list[list[float]]
    cam_pos: tuple[float, float, float]
    floor_style: str
    floor_bgr: tuple[float, float, float]
    floor_ink: tuple[float, float, float]  # pattern/print colour on the floor
    art_bgr: tuple[tuple[float, float, float], ...]  # box-art palette, first is the base
    art_style: str
    table_style: str
    table_bgr: tuple[float, float, float]
    texture_seed: int
    light_dir: tuple[float, float, float]  # unit vector towards the light
    ambient: float
    gradient: float  # strength of the linear light fall-off across the frame
    gradient_deg: float
    vignette: float
    shadow_strength: float
    shadow_soft_mm: float
    light_k: float  # colour temperature of the light
    wb_strength: float  # 1 = camera fully white-balances, 0 = not at all
    light_ev: float
    noise_sigma: float
    jpeg_quality: int  # 100 = no JPEG round trip inside render()


@dataclass
class DiePose:
    """One die on the floor, in floor millimetres, so a demo can animate it.

    `value` is what a reader must report: None for a cocked die. `spin` picks which of the four
    upright orientations with that top value the die has (side faces, 2/3/6 pip direction).
    """

    colour: str
    value: int | None
    big: bool
    x: float
    y: float
    angle_deg: float
    pip_colour: str
    cocked: bool = False
    blur: float = 0.0  # motion-blur length in die sides
    glare: bool = False
    # The glare spot's size: 1 is a streak over part of the top face; from about 2 the lamp's
    # mirror image washes the whole face out, which only the bevels and sides then show the
    # colour of (the renders under a second lamp; training scenes for the colour net only).
    glare_size: float = 1.0
    tilt_deg: float = 0.0  # lean of a cocked die (0 -> 25 degrees)
    spin: int = 0
    blur_deg: float = 0.0
    face_up: int = 0  # face shown on top of a cocked die (its value is still None)
    # Other makers' dice (training scenes only; the presets keep the game's opaque ones):
    # "solid", "marbled" (veins of `accent`), "speckled" (glitter and dark flecks) or
    # "translucent" (tinted see-through plastic: the floor shows through the body, and so
    # do the pips of the hidden faces, faint and mirrored).
    material: str = "solid"
    accent: tuple[float, float, float] = (1.0, 1.0, 1.0)  # BGR 0..1, the veins' colour
    one: str = "pip"  # the 1 face: "pip", "big" (one large pip) or "ring" (a pip with a hole)


# --------------------------------------------------------------------------- geometry


def _projection(spec: SceneSpec) -> np.ndarray:
    return np.asarray(spec.camera, dtype=np.float64)


def _project(P: np.ndarray, pts: np.ndarray) -> np.ndarray:
    h = pts @ P[:, :3].T + P[:, 3]
    return h[:, :2] / h[:, 2:3]


def _floor_h(spec: SceneSpec) -> np.ndarray:
    P = _projection(spec)
    return P[:, [0, 1, 3]]


def tray_corners(spec: SceneSpec) -> np.ndarray:
    """The floor's corners in image px, in floor order (0,0), (w,0), (w,h), (0,h).

    A calibration test can fit its tray homography against these.
    """
    fw, fh = spec.floor_w_mm, spec.floor_h_mm
    pts = np.array([[0, 0, 0], [fw, 0, 0], [fw, fh, 0], [0, fh, 0]], dtype=np.float64)
    return _project(_projection(spec), pts)


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _camera(
    w: int, h: int, f: float, zc: float, yaw: float, tx: float, ty: float, target: np.ndarray,
    floor: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray]:
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    r0 = np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]])  # looking straight down
    R = _rot_x(tx) @ _rot_y(ty) @ r0 @ _rot_z(yaw)
    d = R.T @ np.array([0, 0, 1.0])
    c = np.array([target[0], target[1], 0.0]) - d * (zc / -d[2])
    # keep the camera above the floor so that all four inner walls face it
    c[0] = min(max(c[0], 0.15 * floor[0]), 0.85 * floor[0])
    c[1] = min(max(c[1], 0.15 * floor[1]), 0.85 * floor[1])
    t = -R @ c
    return K @ np.hstack([R, t[:, None]]), c


def _die_size(d: DiePose) -> float:
    return DIE_MM * (BIG_SCALE if d.big else 1.0)


def _die_frame(d: DiePose) -> tuple[np.ndarray, np.ndarray]:
    """Rotation (columns = die axes in world) and centre of the cube."""
    s = _die_size(d)
    rz = _rot_z(math.radians(d.angle_deg))
    if not d.cocked:
        return rz, np.array([d.x, d.y, s / 2])
    tilt = d.tilt_deg or 25.0  # a cocked die always leans
    ry = _rot_y(math.radians(tilt))  # lifts the die's -x side about its +x bottom edge
    pivot = np.array([s / 2, 0.0, -s / 2])
    c_local = pivot - ry @ pivot
    return rz @ ry, np.array([d.x, d.y, c_local[2] + s / 2])


_CUBE = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


def _die_corners(d: DiePose) -> np.ndarray:
    m, c = _die_frame(d)
    return c + (_CUBE * (_die_size(d) / 2)) @ m.T


def _top_face_box(d: DiePose, P: np.ndarray) -> list[float]:
    """The image box of the face a die turns uppermost. On a cocked die it is what a detector
    often boxes (the clean top face without the side face the whole die's box holds), so the
    nets can be taught that such a box, too, holds a die that cannot be read."""
    m, c = _die_frame(d)
    h2 = _die_size(d) / 2
    j = int(np.argmax(np.abs(m[2])))  # the die axis nearest the vertical
    up = m[:, j] * math.copysign(1.0, float(m[2, j]))
    a, b = m[:, (j + 1) % 3], m[:, (j + 2) % 3]
    uv = _project(P, np.array([c + h2 * (up + sa * a + sb * b)
                               for sa in (-1, 1) for sb in (-1, 1)]))
    return [float(uv[:, 0].min()), float(uv[:, 1].min()),
            float(uv[:, 0].max()), float(uv[:, 1].max())]


def _footprint(d: DiePose) -> np.ndarray:
    """Convex outline of the die seen from straight above, floor mm, counter-clockwise."""
    if not d.cocked:  # an upright die covers just its square; skip the hull
        s = _die_size(d) / 2
        a = math.radians(d.angle_deg)
        c, si = math.cos(a) * s, math.sin(a) * s
        return np.array([[d.x - c + si, d.y - si - c], [d.x + c + si, d.y + si - c],
                         [d.x + c - si, d.y + si + c], [d.x - c - si, d.y - si + c]])
    pts = _die_corners(d)[:, :2].astype(np.float32)
    return cv2.convexHull(pts)[:, 0, :].astype(np.float64)


def _normals(poly: np.ndarray) -> np.ndarray:
    e = np.roll(poly, -1, axis=0) - poly
    n = np.stack([-e[:, 1], e[:, 0]], axis=1)
    return n / (np.linalg.norm(n, axis=1, keepdims=True) + 1e-12)


def _overlap(a: np.ndarray, b: np.ndarray, tol: float = 0.05) -> bool:
    """Separating-axis test; touching (gap >= -tol mm) does not count as overlap."""
    ca, cb = a.mean(0), b.mean(0)
    ra = math.sqrt(float(((a - ca) ** 2).sum(1).max()))
    rb = math.sqrt(float(((b - cb) ** 2).sum(1).max()))
    if math.hypot(*(ca - cb)) > ra + rb:
        return False
    n = np.vstack([_normals(a), _normals(b)])
    pa, pb = a @ n.T, b @ n.T
    return not bool(np.any((pa.max(0) <= pb.min(0) + tol) | (pb.max(0) <= pa.min(0) + tol)))


# The 24 rotations of a cube, and the canonical right-handed die: 1-2-3 counter-clockwise.
_ROTS = [
    m
    for m in (
        np.array(p, float)
        for p in (
            [[sx if i == a else 0 for i in range(3)], [sy if i == b else 0 for i in range(3)],
             [sz if i == c else 0 for i in range(3)]]
            for a, b, c in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
            for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)
        )
    )
    if np.linalg.det(m) > 0
]
_CANON = {(2, 1): 1, (2, -1): 6, (0, 1): 2, (0, -1): 5, (1, 1): 3, (1, -1): 4}


def _canon_value(v: np.ndarray) -> int:
    k = int(np.argmax(np.abs(v)))
    return _CANON[(k, 1 if v[k] > 0 else -1)]


_BY_TOP = {v: [q for q in _ROTS if _canon_value(q.T @ np.array([0, 0, 1.0])) == v]
           for v in range(1, 7)}


def _orientation(top: int, spin: int) -> np.ndarray:
    cands = _BY_TOP[top]
    return cands[spin % len(cands)]


_PIPS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (-1, 1), (1, -1), (1, 1)],
    5: [(-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)],
    6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}


def _rounded_square(r: float, n: int = 5) -> np.ndarray:
    pts = []
    for k, (sx, sy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
        a0 = k * math.pi / 2
        for t in np.linspace(0, math.pi / 2, n):
            pts.append((sx * (1 - r) + r * math.cos(a0 + t), sy * (1 - r) + r * math.sin(a0 + t)))
    return np.array(pts)


_OUTLINE = _rounded_square(0.3)
_CIRCLE = np.stack([np.cos(np.linspace(0, 2 * math.pi, 14, endpoint=False)),
                    np.sin(np.linspace(0, 2 * math.pi, 14, endpoint=False))], axis=1)


# --------------------------------------------------------------------------- scene sampling


def _kelvin_bgr(k: float) -> np.ndarray:
    t = k / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = 99.4708025861 * math.log(t) - 161.1195681661 if t <= 66 else (
        288.1221695283 * (t - 60) ** -0.0755148492)
    b = 255.0 if t >= 66 else 138.5177312231 * math.log(max(t - 10, 1.0)) - 305.0447927307
    return np.clip(np.array([b, g, r]), 1, 255) / 255.0


def _jitter(rng: np.random.Generator, bgr: tuple[float, ...], amount: float) -> tuple[float, ...]:
    return tuple(float(np.clip(c * (1 + rng.uniform(-amount, amount)), 0, 1)) for c in bgr)


def random_scene(
    seed: int, preset: str = "normal", width: int = 1280, height: int = 960
) -> SceneSpec:
    """Sample a tray, light and camera; the preset decides how nasty each condition gets."""
    if preset not in _KNOBS:
        raise ValueError(f"unknown preset {preset!r}; choose from {PRESETS}")
    kn = _KNOBS[preset]
    rng = np.random.default_rng([seed, _PRESET_SALT[preset], 1])
    scale = width / 1280.0
    cut = rng.random() < kn.cut_p
    loose = not cut and rng.random() < kn.loose_p
    if loose:
        die_px = rng.uniform(20, 45) * scale
        zc = rng.uniform(650, 1000)
        frac = rng.uniform(0.35, 0.7)
    else:
        die_px = rng.uniform(55, 90) * scale
        zc = rng.uniform(330, 600)
        frac = rng.uniform(0.6, 0.8)
    if cut:  # framed tight: the tray is wider than the picture
        frac = rng.uniform(0.95, 1.2)
    f = die_px * zc / DIE_MM
    # Drawn apart, so the other presets' scenes stay exactly as they were.
    lens = np.random.default_rng([seed, _PRESET_SALT[preset], 3])
    if lens.random() < kn.wide_p:
        # The lens fixes the focal length; a mounted camera's height follows from how much
        # of the frame the lid fills, a hand-held one is 40-70 cm up; the dice's size follows.
        f = width / 2 / math.tan(math.radians(lens.uniform(88, 105)) / 2)
        zc = lens.uniform(400, 700) if loose else lens.uniform(220, 330) * f / (frac * width)
        die_px = f * DIE_MM / zc
    fw = float(np.clip(frac * width * zc / f, 150, 330))
    fh = float(fw * rng.uniform(0.62, 0.8))
    wall_h = rng.uniform(25, 45)
    rim = rng.uniform(2.0, 3.5)
    wrap = rng.uniform(4, 14) if rng.random() < 0.7 else 0.0
    yaw = math.radians(rng.uniform(-kn.yaw, kn.yaw))
    # keep the camera above the floor (all inner walls face it): cap the tilt for high cameras
    tmax = min(math.radians(kn.tilt), math.atan(0.3 * fh / zc))
    tx, ty = (float(rng.uniform(-tmax, tmax)) for _ in range(2))
    target = np.array([fw / 2, fh / 2]) + rng.uniform(-0.04, 0.04, 2) * [fw, fh]

    def build(fw: float, fh: float, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _camera(width, height, f, zc, yaw, tx, ty, target, (fw, fh))

    if cut:
        # Frame tight and off-centre so the tray runs out of the picture on one or two sides.
        side = rng.integers(0, 4)
        shift = rng.uniform(0.1, 0.25)
        off = [(-shift * fw, 0), (shift * fw, 0), (0, -shift * fh), (0, shift * fh)][side]
        target = np.array([fw / 2, fh / 2]) + np.array(off) + rng.uniform(-0.05, 0.05, 2) * [fw, fh]
        P, c = build(fw, fh, target)
    else:
        # Shrink the lid until its outer rim fits in the frame with a margin.
        for _ in range(30):
            P, c = build(fw, fh, target)
            t = rim
            rim_pts = np.array([[-t, -t, wall_h], [fw + t, -t, wall_h], [fw + t, fh + t, wall_h],
                                [-t, fh + t, wall_h]])
            q = _project(P, rim_pts)
            m = 0.02 * width
            if q[:, 0].min() > m and q[:, 1].min() > m and q[:, 0].max() < width - m and (
                q[:, 1].max() < height - m
            ):
                break
            fw *= 0.95
            fh *= 0.95
            target = target * 0.95
    floor_style = FLOOR_STYLES[rng.choice(4, p=[0.4, 0.2, 0.2, 0.2])]
    if floor_style == "greyboard":
        g = rng.uniform(0.55, 0.72)
        floor_bgr = (g * rng.uniform(0.97, 1.02), g, g * rng.uniform(0.97, 1.03))
        ink = (0.25, 0.25, 0.25)
    elif floor_style == "kraft":
        floor_bgr = _jitter(rng, (0.40, 0.56, 0.70), 0.08)
        ink = (0.25, 0.38, 0.5)
    elif floor_style == "dark_print":
        floor_bgr = [(0.22, 0.10, 0.06), (0.08, 0.08, 0.09), (0.10, 0.08, 0.30),
                     (0.18, 0.28, 0.10), (0.25, 0.08, 0.20)][rng.integers(5)]
        floor_bgr = _jitter(rng, floor_bgr, 0.1)
        ink = tuple(min(1.0, c * 1.6 + 0.06) for c in floor_bgr)
    else:
        floor_bgr = [(0.55, 0.75, 0.85), (0.80, 0.70, 0.55), (0.60, 0.80, 0.65),
                     (0.70, 0.62, 0.78)][rng.integers(4)]
        floor_bgr = _jitter(rng, floor_bgr, 0.08)
        k_ink = rng.uniform(0.8, 0.9)
        ink = tuple(c * k_ink for c in floor_bgr)
    palettes = [
        ((0.10, 0.07, 0.06), (0.15, 0.55, 0.85), (0.55, 0.20, 0.75), (0.75, 0.45, 0.10)),
        ((0.10, 0.65, 0.85), (0.10, 0.25, 0.80), (0.15, 0.45, 0.85), (0.20, 0.20, 0.25)),
        ((0.25, 0.08, 0.05), (0.20, 0.75, 0.90), (0.80, 0.80, 0.85), (0.10, 0.10, 0.70)),
        ((0.05, 0.05, 0.05), (0.15, 0.15, 0.75), (0.10, 0.70, 0.90), (0.85, 0.85, 0.85)),
        ((0.15, 0.30, 0.10), (0.15, 0.75, 0.90), (0.80, 0.80, 0.80), (0.10, 0.10, 0.55)),
    ]
    art = palettes[rng.integers(len(palettes))]
    art_style = ("stripes", "blobs", "text")[rng.integers(3)]
    table_style = TABLE_STYLES[rng.integers(4)]
    table_bgr = {
        "wood": _jitter(rng, (0.22, 0.38, 0.58), 0.25),
        "cloth": _jitter(rng, [(0.35, 0.30, 0.28), (0.20, 0.35, 0.15), (0.45, 0.25, 0.15),
                               (0.30, 0.30, 0.50)][rng.integers(4)], 0.1),
        "white": _jitter(rng, (0.85, 0.86, 0.86), 0.04),
        "dark": _jitter(rng, (0.10, 0.10, 0.11), 0.2),
    }[table_style]
    elev = math.radians(rng.uniform(*kn.elevation))
    az = rng.uniform(0, 2 * math.pi)
    light = (math.cos(elev) * math.cos(az), math.cos(elev) * math.sin(az), math.sin(elev))
    if kn.kelvin_extreme:
        k = rng.uniform(2700, 2900) if rng.random() < 0.5 else rng.uniform(6200, 6500)
    else:
        k = rng.uniform(*kn.kelvin)
    ev = rng.uniform(*kn.ev)
    if kn.ev_extreme and rng.random() < 0.5:
        ev = -ev
    return SceneSpec(
        width=width, height=height, preset=preset, mount="loose" if loose else "mounted",
        die_px=float(die_px), floor_w_mm=float(fw), floor_h_mm=float(fh), wall_h_mm=float(wall_h),
        rim_mm=float(rim), wrap_mm=float(wrap), camera=P.tolist(),
        cam_pos=(float(c[0]), float(c[1]), float(c[2])),
        floor_style=floor_style, floor_bgr=tuple(floor_bgr), floor_ink=tuple(ink),
        art_bgr=art, art_style=art_style, table_style=table_style, table_bgr=tuple(table_bgr),
        texture_seed=int(rng.integers(2**31)), light_dir=light,
        ambient=float(rng.uniform(0.4, 0.5)),
        gradient=float(rng.uniform(*kn.gradient)), gradient_deg=float(rng.uniform(0, 360)),
        vignette=float(rng.uniform(*kn.vignette)), shadow_strength=float(rng.uniform(*kn.shadow)),
        shadow_soft_mm=float(rng.uniform(1.5, 4.0)), light_k=float(k),
        wb_strength=float(rng.uniform(*kn.wb)), light_ev=float(ev),
        noise_sigma=float(rng.uniform(*kn.noise)),
        jpeg_quality=int(rng.integers(kn.jpeg[0], kn.jpeg[1] + 1)),
    )


# --------------------------------------------------------------------------- dice placement


def _inside(fp: np.ndarray, spec: SceneSpec) -> bool:
    return bool(fp[:, 0].min() >= 0 and fp[:, 1].min() >= 0 and fp[:, 0].max() <= spec.floor_w_mm
                and fp[:, 1].max() <= spec.floor_h_mm)


def _in_view(d: DiePose, spec: SceneSpec, hom: np.ndarray, margin: float) -> bool:
    p = hom @ np.array([d.x, d.y, 1.0])
    u, v = p[0] / p[2], p[1] / p[2]
    return margin <= u <= spec.width - margin and margin <= v <= spec.height - margin


def _with(d: DiePose, **kw: object) -> DiePose:
    return DiePose(**{**d.__dict__, **kw})


def _touch(d: DiePose, other: DiePose, ofp: np.ndarray, u: np.ndarray, gap: float) -> DiePose:
    """Slide `d` out from the centre of `other` along u until the two just touch.

    Exact for convex footprints: on each separating axis the gap grows linearly with the
    slide, so the first axis to open decides.
    """
    fp0 = _footprint(_with(d, x=0.0, y=0.0))  # sliding only translates the footprint
    base = np.array([other.x, other.y])
    n = np.vstack([_normals(fp0), _normals(ofp)])
    pa, pb = fp0 @ n.T, ofp @ n.T
    off, du = n @ base, n @ u
    with np.errstate(divide="ignore", invalid="ignore"):
        t_pos = (pb.max(0) - pa.min(0) - off) / du
        t_neg = (pa.max(0) + off - pb.min(0)) / -du
    t = np.where(du > 1e-9, t_pos, np.where(du < -1e-9, t_neg, np.inf))
    p = base + u * (float(np.min(t)) + gap)
    return _with(d, x=float(p[0]), y=float(p[1]))


def _to_wall(d: DiePose, wall: int, spec: SceneSpec, gap: float) -> DiePose:
    fp = _footprint(d)
    if wall == 0:
        return _with(d, x=d.x - fp[:, 0].min() + gap)
    if wall == 1:
        return _with(d, x=d.x + spec.floor_w_mm - fp[:, 0].max() - gap)
    if wall == 2:
        return _with(d, y=d.y - fp[:, 1].min() + gap)
    return _with(d, y=d.y + spec.floor_h_mm - fp[:, 1].max() - gap)


_WALL_LEAN = (0.0, 180.0, 90.0, 270.0)  # angle_deg that makes a cocked die lean onto wall k


def _image_edge_points(spec: SceneSpec, rng: np.random.Generator) -> list[np.ndarray]:
    """Floor points (mm) that lie on the image border, for dice cut by the frame."""
    hinv = np.linalg.inv(_floor_h(spec))
    w, h = spec.width, spec.height
    out = []
    for _ in range(40):
        t = rng.uniform(0.05, 0.95)
        p = [(t * w, 0), (t * w, h - 1), (0, t * h), (w - 1, t * h)][rng.integers(4)]
        q = hinv @ np.array([p[0], p[1], 1.0])
        q = q[:2] / q[2]
        if 20 < q[0] < spec.floor_w_mm - 20 and 20 < q[1] < spec.floor_h_mm - 20:
            out.append(q)
    return out


def random_dice(
    spec: SceneSpec, rng: np.random.Generator | int, n: int | None = None,
    cocked: tuple[int, int] | None = None, lean: tuple[float, float] | None = None,
) -> list[DiePose]:
    """Place dice without overlap: free, in touching clusters, against walls, cocked, cut.

    Returns fewer than n only if the tray is too full to place the rest. `cocked` (a range)
    overrides the preset's count of cocked dice, and `lean` (degrees) their lean, for
    training sets that need more of them, or more of the shallow leans that pass for flat.
    """
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    kn = _KNOBS[spec.preset]
    if n is None:
        n = int(rng.integers(kn.n[0], kn.n[1] + 1))
    n_cocked = 0
    if rng.random() < kn.cocked_p or cocked is not None:
        lo, hi = cocked if cocked is not None else kn.cocked
        n_cocked = int(rng.integers(lo, hi + 1))
    n_cocked = min(n_cocked, max(0, n - 1)) if n > 1 else 0
    k_col = int(rng.integers(1, 4))
    cols = list(rng.choice(PLAYER_COLOURS, size=k_col, replace=False))
    if rng.random() < 0.6:
        cols.append("white")
    bigs = set(rng.choice(n, size=min(n, kn.min_big), replace=False).tolist()) if n else set()
    glares = set(rng.choice(n, size=min(n, kn.min_glare), replace=False).tolist()) if n else set()
    cut_edges = _image_edge_points(spec, rng) if spec.preset == "hard" else []
    placed: list[DiePose] = []
    fps: list[np.ndarray] = []
    centres = np.zeros((n, 2))
    radii = np.zeros(n)
    hom = _floor_h(spec)
    margin = 0.8 * spec.die_px
    order = ["cocked"] * n_cocked + ["die"] * (n - n_cocked)
    # cocked dice need something to lean on, so plain dice go first
    order = order[n_cocked:] + order[:n_cocked]
    for i, kind in enumerate(order):
        colour = str(cols[int(rng.integers(len(cols)))])
        if i in bigs and colour == "white":  # Biggy dice come in player colours only
            colour = str(cols[0])
        big = (i in bigs or rng.random() < kn.big_p) and colour != "white"
        value = int(rng.integers(1, 7))
        blur = float(rng.uniform(*kn.blur)) if rng.random() < kn.blur_p else 0.0
        base = DiePose(
            colour=colour, value=value, big=big, x=0.0, y=0.0,
            angle_deg=float(rng.uniform(0, 360)), pip_colour=DEFAULT_PIP[colour],
            blur=blur, glare=bool(i in glares or rng.random() < kn.glare_p),
            spin=int(rng.integers(0, 2**16)), blur_deg=float(rng.uniform(0, 360)),
        )
        if kind == "cocked":
            base = _with(base, cocked=True, value=None, face_up=value,
                         tilt_deg=float(rng.uniform(*(lean or (18, 38)))), blur=0.0)
        want_cut = bool(cut_edges) and i == 0
        for _attempt in range(80):
            r = rng.random()
            gap = float(rng.uniform(0.05, 0.6))
            d = base
            if want_cut and _attempt < 40:
                q = cut_edges[_attempt % len(cut_edges)]
                d = _with(d, x=float(q[0] + rng.normal(0, 3)), y=float(q[1] + rng.normal(0, 3)))
            elif kind == "cocked":
                if placed and rng.random() < 0.5:
                    j = int(rng.integers(len(placed)))
                    phi = rng.uniform(0, 2 * math.pi)
                    u = np.array([math.cos(phi), math.sin(phi)])
                    d = _with(d, angle_deg=math.degrees(phi) + rng.normal(0, 8))
                    d = _touch(d, placed[j], fps[j], u, 0.05)
                else:
                    wall = int(rng.integers(4))
                    d = _with(d, angle_deg=_WALL_LEAN[wall] + rng.normal(0, 10),
                              x=rng.uniform(20, spec.floor_w_mm - 20),
                              y=rng.uniform(20, spec.floor_h_mm - 20),
                              tilt_deg=float(rng.uniform(*(lean or (25, 45)))))
                    d = _to_wall(d, wall, spec, 0.05)
            elif placed and r < kn.cluster_p:
                j = int(rng.integers(len(placed)))
                phi = rng.uniform(0, 2 * math.pi)
                if rng.random() < 0.5:  # dice often end up aligned with a neighbour
                    d = _with(d, angle_deg=placed[j].angle_deg + rng.normal(0, 4))
                d = _touch(d, placed[j], fps[j], np.array([math.cos(phi), math.sin(phi)]), gap)
            else:
                d = _with(d, x=float(rng.uniform(0, spec.floor_w_mm)),
                          y=float(rng.uniform(0, spec.floor_h_mm)))
                if r > 1 - kn.wall_p:
                    wall = int(rng.integers(4))
                    d = _to_wall(d, wall, spec, gap)
                    if rng.random() < 0.3:  # into a corner: also against a perpendicular wall
                        d = _to_wall(d, int(rng.integers(2)) + (2 if wall < 2 else 0), spec, gap)
            fp = _footprint(d)
            if not _inside(fp, spec):
                continue
            if fps:  # only neighbours within reach need the full separating-axis test
                ctr = fp.mean(0)
                rad = math.sqrt(float(((fp - ctr) ** 2).sum(1).max()))
                near = np.flatnonzero(np.hypot(*(centres[: len(fps)] - ctr).T)
                                      <= radii[: len(fps)] + rad)
                if any(_overlap(fp, fps[j]) for j in near):
                    continue
            if not (want_cut and _attempt < 40) and not _in_view(d, spec, hom, margin):
                continue  # a die out of the picture tests nothing
            ctr = fp.mean(0)
            centres[len(fps)] = ctr
            radii[len(fps)] = math.sqrt(float(((fp - ctr) ** 2).sum(1).max()))
            placed.append(d)
            fps.append(fp)
            break
    return placed


# --------------------------------------------------------------------------- textures


# numpy broadcasting over a trailing axis of 3 is several times slower than these cv2 forms


def _fill(h: int, w: int, bgr) -> np.ndarray:
    out = np.zeros((h, w, 3), np.float32)
    return cv2.add(out, (*(float(c) for c in bgr), 0.0), dst=out)


def _modulate(tex: np.ndarray, m: np.ndarray) -> np.ndarray:
    return cv2.multiply(tex, cv2.cvtColor(m.astype(np.float32), cv2.COLOR_GRAY2BGR))


def _tint(m: np.ndarray, bgr) -> np.ndarray:
    m = m.astype(np.float32)
    return cv2.merge([m * float(c) for c in bgr])


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cell: float) -> np.ndarray:
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    g = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR)


def _grain(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    g = rng.integers(0, 256, (max(1, h // 2), max(1, w // 2)), dtype=np.uint8)
    g = cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    return (g - 127.5) / 52.0


def _paper(rng: np.random.Generator, h: int, w: int, bgr, ink, style: str, px_mm: float):
    """Floor/wall material in a rectified frame of h x w px (px_mm px per mm)."""
    h, w = max(h, 2), max(w, 2)
    base = _fill(h, w, bgr)
    blot = cv2.addWeighted(_smooth_noise(rng, h, w, 40 * px_mm), 0.03,
                           _smooth_noise(rng, h, w, 8 * px_mm), 0.012, 1.0)
    grain = _grain(rng, h, w)
    ink = tuple(float(c) for c in ink)
    area = h * w / (px_mm * px_mm)

    def mod(tex: np.ndarray, amount: float) -> np.ndarray:
        m = cv2.scaleAdd(grain, amount, blot)
        return _modulate(tex, m)

    if style == "greyboard":
        tex = mod(base, 0.035)
        for _ in range(int(area / 400)):  # flecks in recycled board
            c = (int(rng.integers(w)), int(rng.integers(h)))
            f = rng.uniform(0.4, 0.8) if rng.random() < 0.85 else 1.2
            col = tuple(min(1.0, v * f) for v in bgr)
            cv2.circle(tex, c, int(rng.random() < 0.2), col, -1)
    elif style == "kraft":
        tex = mod(base, 0.045)
        for _ in range(int(area / 150)):  # fibres
            x, y = rng.uniform(0, w), rng.uniform(0, h)
            a = rng.normal(0, 0.5)
            ln = rng.uniform(1, 5) * px_mm
            f = rng.uniform(0.85, 1.12)
            col = tuple(c * f for c in bgr)
            cv2.line(tex, (int(x), int(y)), (int(x + ln * math.cos(a)), int(y + ln * math.sin(a))),
                     col, 1)
    elif style == "plain":
        tex = mod(base, 0.025)
    elif style == "dark_print":
        tex = base.copy()
        step = rng.uniform(18, 35) * px_mm
        kind = rng.integers(3)
        for yi, yy in enumerate(np.arange(-step, h + step, step)):
            for xx in np.arange(-step, w + step, step):
                x0 = xx + (step / 2 if yi % 2 else 0)
                if kind == 0:  # diamonds
                    r = step * 0.3
                    pts = np.array([[x0, yy - r], [x0 + r, yy], [x0, yy + r], [x0 - r, yy]],
                                   np.int32)
                    cv2.fillPoly(tex, [pts], ink, cv2.LINE_8)
                elif kind == 1:  # stars
                    a = np.linspace(0, 2 * math.pi, 11)[:-1] - math.pi / 2
                    rr = np.where(np.arange(10) % 2 == 0, step * 0.25, step * 0.1)
                    pts = np.stack([x0 + rr * np.cos(a), yy + rr * np.sin(a)], 1).astype(np.int32)
                    cv2.fillPoly(tex, [pts], ink)
                else:  # rings
                    cv2.circle(tex, (int(x0), int(yy)), int(step * 0.3), ink, max(1, int(px_mm)))
        tex = mod(cv2.GaussianBlur(tex, (0, 0), 0.7), 0.02)
    else:  # patterned: a low-contrast printed pattern
        tex = base.copy()
        step = rng.uniform(15, 35) * px_mm
        kind = rng.integers(3)
        if kind == 0:  # stripes
            for xx in np.arange(-h, w + h, step):
                pts = np.array([[xx, 0], [xx + step / 2, 0], [xx + step / 2 + h * 0.5, h],
                                [xx + h * 0.5, h]], np.int32)
                cv2.fillPoly(tex, [pts], ink)
        elif kind == 1:  # checker
            for yi, yy in enumerate(np.arange(0, h, step)):
                for xi, xx in enumerate(np.arange(0, w, step)):
                    if (xi + yi) % 2:
                        cv2.rectangle(tex, (int(xx), int(yy)), (int(xx + step), int(yy + step)),
                                      ink, -1)
        else:  # argyle diamonds
            for yy in np.arange(0, h + step, step):
                for xx in np.arange(0, w + step, step):
                    pts = np.array([[xx, yy - step / 2], [xx + step / 2, yy],
                                    [xx, yy + step / 2], [xx - step / 2, yy]], np.int32)
                    cv2.fillPoly(tex, [pts], ink)
        tex = mod(cv2.GaussianBlur(tex, (0, 0), 0.7), 0.025)
    return tex


_STAMP: dict[int, np.ndarray] = {}


def _text_stamp(hpx: int) -> np.ndarray:
    """"LAS VEGAS" in white on black, hpx tall; putText is slow, so draw it once per size."""
    if hpx not in _STAMP:
        fs = hpx / 30.0
        (tw, _th), _base = cv2.getTextSize("LAS VEGAS", cv2.FONT_HERSHEY_DUPLEX, fs, 1)
        m = np.zeros((hpx, tw + 4), np.uint8)
        cv2.putText(m, "LAS VEGAS", (2, int(hpx * 0.75)), cv2.FONT_HERSHEY_DUPLEX, fs, 255,
                    max(1, int(fs * 1.5)), cv2.LINE_AA)
        _STAMP[hpx] = m.astype(np.float32) / 255.0
    return _STAMP[hpx]


def _art(rng: np.random.Generator, h: int, w: int, palette, style: str) -> np.ndarray:
    """Printed box art for the rim and the wrapped-over band on the walls."""
    h, w = max(h, 2), max(w, 2)
    tex = _fill(h, w, palette[0])
    if style == "stripes":
        step = max(4.0, h * 1.2)
        for i, xx in enumerate(np.arange(-h, w + h, step)):
            if i % 2:
                pts = np.array([[xx, 0], [xx + step / 2, 0], [xx + step / 2 + h * 0.6, h],
                                [xx + h * 0.6, h]], np.int32)
                cv2.fillPoly(tex, [pts], palette[1])
    elif style == "blobs":
        for _ in range(int(w / max(h, 4) * 1.5) + 1):
            c = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            ax = (int(rng.uniform(0.5, 3) * h) + 1, int(rng.uniform(0.3, 1.0) * h) + 1)
            col = palette[1 + int(rng.integers(len(palette) - 1))]
            cv2.ellipse(tex, c, ax, float(rng.uniform(0, 180)), 0, 360, col, -1)
        tex = cv2.GaussianBlur(tex, (0, 0), max(0.5, h * 0.15))
    elif h >= 8:
        stamp = _text_stamp(h)
        sw = stamp.shape[1]
        x = int(rng.uniform(0, h * 2))
        ink = np.array(palette[1], np.float32)
        while x + sw < w:
            roi = tex[:, x : x + sw]
            roi += (ink - roi) * stamp[..., None]
            x += sw + int(rng.uniform(h, 6 * h))
    return _modulate(tex, cv2.scaleAdd(_grain(rng, h, w), 0.03, np.ones((h, w), np.float32)))


def _table(rng: np.random.Generator, spec: SceneSpec, w: int, h: int) -> np.ndarray:
    """The table around the lid, made at low resolution: it is context, not content."""
    lw, lh = max(2, spec.width // 4), max(2, spec.height // 4)
    base = np.array(spec.table_bgr, np.float32)
    if spec.table_style == "wood":  # grain needs the finer grid
        lw, lh = w, h
        dd = int(math.hypot(lw, lh)) + 2
        streak = cv2.resize(rng.standard_normal((dd, max(2, dd // 40))).astype(np.float32),
                            (dd, dd), interpolation=cv2.INTER_LINEAR)
        fine = cv2.resize(rng.standard_normal((dd, max(2, dd // 6))).astype(np.float32),
                          (dd, dd), interpolation=cv2.INTER_LINEAR)
        plank_px = rng.uniform(90, 160) * spec.die_px / DIE_MM * lw / spec.width
        rows = np.arange(dd, dtype=np.float32)
        plank = (rng.uniform(-0.08, 0.08, int(dd / plank_px) + 2)[(rows / plank_px).astype(int)]
                 - 0.25 * (np.abs(rows / plank_px - np.round(rows / plank_px)) * plank_px < 0.6))
        m = 1 + 0.07 * streak + 0.03 * fine + plank[:, None].astype(np.float32)
        ang = float(rng.choice([0.0, 90.0]) + rng.normal(0, 8))
        rot = cv2.getRotationMatrix2D((dd / 2, dd / 2), ang, 1.0)
        rot[:, 2] -= [(dd - lw) / 2, (dd - lh) / 2]
        m = cv2.warpAffine(m, rot, (lw, lh), flags=cv2.INTER_LINEAR)
        tex = _tint(m, base)
    elif spec.table_style == "cloth":
        weave = _grain(rng, lh, lw) * 0.05 + _smooth_noise(rng, lh, lw, 12) * 0.04
        tex = _tint(1 + weave, base)
    else:
        tex = _tint(1 + _smooth_noise(rng, lh, lw, 20) * 0.025, base)
    return cv2.resize(cv2.convertScaleAbs(tex, alpha=255.0), (w, h),
                      interpolation=cv2.INTER_LINEAR)


def _paste_quad(img: np.ndarray, tex: np.ndarray, quad: np.ndarray) -> None:
    """Warp the whole of `tex` onto an image quad, in place.

    The quad is grown by ~0.6 px so neighbouring quads pasted in painter's order leave no seams.
    """
    hgt, wid = img.shape[:2]
    ctr = quad.mean(0)
    d = quad - ctr
    quad = quad + d / (np.linalg.norm(d, axis=1, keepdims=True) + 1e-9) * 0.85
    x0 = max(0, math.floor(quad[:, 0].min()))
    y0 = max(0, math.floor(quad[:, 1].min()))
    x1 = min(wid, math.ceil(quad[:, 0].max()) + 1)
    y1 = min(hgt, math.ceil(quad[:, 1].max()) + 1)
    if x1 <= x0 or y1 <= y0:
        return
    if tex.dtype != np.uint8:
        tex = cv2.convertScaleAbs(tex, alpha=255.0)
    th, tw = tex.shape[:2]
    src = np.float32([[-0.5, -0.5], [tw - 0.5, -0.5], [tw - 0.5, th - 0.5], [-0.5, th - 0.5]])
    M = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    roi = np.ascontiguousarray(img[y0:y1, x0:x1])
    cv2.warpPerspective(tex, M, (x1 - x0, y1 - y0), dst=roi, flags=cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_TRANSPARENT)
    img[y0:y1, x0:x1] = roi


# --------------------------------------------------------------------------- rendering


def _lambert(spec: SceneSpec, n: np.ndarray) -> float:
    ld = np.asarray(spec.light_dir)
    return spec.ambient + (1.05 - spec.ambient) * max(0.0, float(n @ ld)) / max(0.5, ld[2])


_BG_CACHE: dict[str, np.ndarray] = {}
_TEX_SCALE = 0.5  # textures are made coarser than the image; the warp upsamples them


def _background(spec: SceneSpec) -> np.ndarray:
    """Table, lid and floor without shadows; cached because a demo re-renders one spec.

    Built at half resolution and upsampled: it is mostly low-frequency texture, and the warps
    were the largest cost of a frame. Dice are drawn at full resolution on top.
    """
    key = repr(spec)
    if key in _BG_CACHE:
        return _BG_CACHE[key]
    rng = np.random.default_rng(spec.texture_seed)
    half = np.array([[0.5, 0, -0.25], [0, 0.5, -0.25], [0, 0, 1]])  # pixel centres stay put
    P = half @ _projection(spec)
    img = _table(rng, spec, (spec.width + 1) // 2, (spec.height + 1) // 2)
    fw, fh, hw, t = spec.floor_w_mm, spec.floor_h_mm, spec.wall_h_mm, spec.rim_mm
    px_mm = spec.die_px / DIE_MM * _TEX_SCALE
    inner = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], float)
    outer = np.array([[-t, -t], [fw + t, -t], [fw + t, fh + t], [-t, fh + t]], float)
    normals = [np.array(v, float) for v in ((0, 1, 0), (-1, 0, 0), (0, -1, 0), (1, 0, 0))]
    # walls are plain board of the floor's colour; prints stay on the floor
    wall_style = spec.floor_style if spec.floor_style in ("greyboard", "kraft") else "plain"
    wall_tex = _paper(rng, int(hw * px_mm), int(max(fw, fh) * px_mm), spec.floor_bgr,
                      spec.floor_ink, wall_style, px_mm)
    art_len = int(max(fw, fh) * px_mm)
    rim_art = _art(rng, max(2, int(t * px_mm * 1.5)), art_len, spec.art_bgr, spec.art_style)
    band_art = (_art(rng, max(3, int(spec.wrap_mm * px_mm)), art_len, spec.art_bgr,
                     spec.art_style) if spec.wrap_mm > 0 else None)
    top_shade = _lambert(spec, np.array([0, 0, 1.0]))
    for k in range(4):
        a, b = inner[k], inner[(k + 1) % 4]
        oa, ob = outer[k], outer[(k + 1) % 4]
        shade = _lambert(spec, normals[k])
        n_px = max(2, int(float(np.linalg.norm(b - a)) * px_mm))
        off = int(rng.integers(0, max(1, art_len - n_px)))
        # print must not read mirrored: from above on the rim, from inside on the walls
        along = np.array([*(b - a), 0.0])
        rim_dir = 1 if np.cross(along, normals[k])[2] < 0 else -1
        wall_dir = 1 if float(np.cross(along, [0.0, 0.0, -1.0]) @ normals[k]) < 0 else -1
        rim = _project(P, np.array([[*oa, hw], [*ob, hw], [*b, hw], [*a, hw]]))
        _paste_quad(img, rim_art[:, off : off + n_px][:, ::rim_dir] * top_shade, rim)
        zs = hw - spec.wrap_mm
        wall = _project(P, np.array([[*a, zs], [*b, zs], [*b, 0], [*a, 0]]))
        tex = wall_tex[:, :n_px]
        ao = np.linspace(1.0, 0.7, tex.shape[0], dtype=np.float32)[:, None, None] * shade
        _paste_quad(img, tex * ao, wall)
        if band_art is not None:
            band = _project(P, np.array([[*a, hw], [*b, hw], [*b, zs], [*a, zs]]))
            _paste_quad(img, band_art[:, off : off + n_px][:, ::wall_dir] * shade, band)
    floor = _paper(rng, int(fh * px_mm), int(fw * px_mm), spec.floor_bgr, spec.floor_ink,
                   spec.floor_style, px_mm)
    fl = _project(P, np.array([[0, 0, 0], [fw, 0, 0], [fw, fh, 0], [0, fh, 0]], float))
    _paste_quad(img, floor * top_shade, fl)
    img = cv2.resize(img, (spec.width, spec.height), interpolation=cv2.INTER_LINEAR)
    if len(_BG_CACHE) >= 4:
        _BG_CACHE.pop(next(iter(_BG_CACHE)))
    img.flags.writeable = False  # shared by later renders of this spec
    _BG_CACHE[key] = img
    return img


def _clip_floor(poly: np.ndarray, spec: SceneSpec) -> np.ndarray | None:
    rect = np.array([[0, 0], [spec.floor_w_mm, 0], [spec.floor_w_mm, spec.floor_h_mm],
                     [0, spec.floor_h_mm]], np.float32)
    hull = cv2.convexHull(poly.astype(np.float32))
    area, inter = cv2.intersectConvexConvex(hull, rect)
    if area <= 0 or inter is None:
        return None
    return inter[:, 0, :].astype(np.float64)


def _shadows(spec: SceneSpec, dice: list[DiePose]) -> np.ndarray:
    """Multiplicative shadow map (H, W) from the lid walls and the dice."""
    q = 4
    w, h = spec.width, spec.height
    lw, lh = (w + q - 1) // q, (h + q - 1) // q
    hom = _floor_h(spec)
    ld = np.asarray(spec.light_dir)
    push = ld[:2] / ld[2]
    px_mm = spec.die_px / DIE_MM
    soft = np.zeros((lh, lw), np.float32)
    contact = np.zeros((lh, lw), np.float32)

    def draw(canvas: np.ndarray, poly_mm: np.ndarray, val: float = 1.0) -> None:
        ph = np.hstack([poly_mm, np.ones((len(poly_mm), 1))]) @ hom.T
        pts = ph[:, :2] / ph[:, 2:3] / q
        cv2.fillPoly(canvas, [np.round(pts * 16).astype(np.int32)], val, cv2.LINE_AA, shift=4)

    fw, fh, hw, t = spec.floor_w_mm, spec.floor_h_mm, spec.wall_h_mm, spec.rim_mm
    # the lid on the table
    outer = np.array([[-t, -t], [fw + t, -t], [fw + t, fh + t], [-t, fh + t]])
    draw(soft, cv2.convexHull(np.vstack([outer, outer - push * hw]).astype(np.float32))[:, 0])
    lid = _project(_projection(spec), np.hstack([outer, np.full((4, 1), hw)])) / q
    cv2.fillPoly(soft, [np.round(lid * 16).astype(np.int32)], 0.0, cv2.LINE_AA, shift=4)
    draw(soft, outer, 0.0)
    # walls onto the floor
    inner = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], float)
    for k in range(4):
        a, b = inner[k], inner[(k + 1) % 4]
        poly = _clip_floor(np.array([a, b, b - push * hw, a - push * hw]), spec)
        if poly is not None:
            draw(soft, poly)
    for k in range(4):  # occlusion where floor meets wall
        a, b = inner[k], inner[(k + 1) % 4]
        pa, pb = (np.append(p, 1) @ hom.T for p in (a, b))
        cv2.line(contact, tuple(np.round(pa[:2] / pa[2] / q * 16).astype(int)),
                 tuple(np.round(pb[:2] / pb[2] / q * 16).astype(int)), 0.6,
                 max(1, int(3 * px_mm / q)), cv2.LINE_AA, shift=4)
    for d in dice:
        c = _die_corners(d)
        proj = c[:, :2] - c[:, 2:3] * push
        poly = _clip_floor(np.vstack([proj, c[:, :2]]), spec)
        if poly is not None:
            draw(soft, poly)
        fp = _footprint(d)
        ctr = fp.mean(0)
        draw(contact, ctr + (fp - ctr) * 1.06)
    sig = max(0.6, spec.shadow_soft_mm * px_mm / q)
    soft = cv2.GaussianBlur(soft, (0, 0), sig)
    contact = cv2.GaussianBlur(contact, (0, 0), max(0.5, 0.8 * px_mm / q))
    m = 1.0 - spec.shadow_strength * np.minimum(soft, 1.0) - 0.3 * contact
    return cv2.resize(np.clip(m, 0.2, 1.0), (w, h), dst=_scratch("shadow", (h, w)),
                      interpolation=cv2.INTER_LINEAR)


_PIP_XY = {v: np.array(p, float) * 0.55 for v, p in _PIPS.items()}
_SIGNS = np.array([1, -1, 1, -1, 1, -1], float)
_AXES = np.array([0, 0, 1, 1, 2, 2])
_FACE_VALUE = np.array([_CANON[(int(k), int(sg))] for k, sg in zip(_AXES, _SIGNS, strict=True)])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def _wall_shadow(spec: SceneSpec, x: float, y: float, z: float) -> float:
    """How deep (0..1) a point sits in the shadow the lid walls cast, soft at the edge."""
    ld = spec.light_dir
    soft = spec.shadow_soft_mm * 2
    best = 0.0
    for dist, lo in ((x, -ld[0]), (spec.floor_w_mm - x, ld[0]), (y, -ld[1]),
                     (spec.floor_h_mm - y, ld[1])):
        if lo <= 0:
            continue
        reach = (spec.wall_h_mm - z) * lo / ld[2]
        best = max(best, min(1.0, max(0.0, (reach - dist) / soft + 0.5)))
    return best


def _motion_blur(
    col: np.ndarray, alpha: np.ndarray, length: int, deg: float
) -> tuple[np.ndarray, np.ndarray]:
    """Blur a premultiplied patch along `deg` (image angle, y down) over `length` px.

    A long line kernel in filter2D cost ~5 ms a die; turning the blur direction horizontal
    lets a box filter do it in a fraction of that.
    """
    h, w = alpha.shape
    dd = math.ceil(math.hypot(h, w)) + 2
    canvas = np.zeros((dd, dd, 4), np.float32)
    oy, ox = (dd - h) // 2, (dd - w) // 2
    canvas[oy : oy + h, ox : ox + w] = cv2.merge([col, alpha])
    rot = cv2.getRotationMatrix2D((dd / 2, dd / 2), deg, 1.0)
    flat = cv2.blur(cv2.warpAffine(canvas, rot, (dd, dd)), (length, 1))
    back = cv2.warpAffine(flat, rot, (dd, dd), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    back = back[oy : oy + h, ox : ox + w]
    return np.ascontiguousarray(back[..., :3]), np.ascontiguousarray(back[..., 3])


def _render_die(
    img: np.ndarray, spec: SceneSpec, d: DiePose, P: np.ndarray, cam: np.ndarray,
    gmap: np.ndarray, gain: tuple[float, float, float, float],
) -> tuple[list[float], np.ndarray, tuple[int, int]] | None:
    """Draw one die at 2x into a patch and composite it; returns silhouette bbox and alpha.

    All 3-D outlines of a die are built as one array and projected once: per-die Python
    overhead is what limits the frame rate.
    """
    s = _die_size(d)
    h2 = s / 2
    m, c = _die_frame(d)
    top = d.face_up if d.cocked else d.value
    mq = m @ _orientation(int(top or 1), d.spin)
    normals = (mq[:, _AXES] * _SIGNS).T  # (6, 3) face normals, canonical face order
    e1s = mq[:, (_AXES + 1) % 3].T * h2
    e2s = (mq[:, (_AXES + 2) % 3] * _SIGNS).T * h2
    centres = c + normals * h2
    vis = np.einsum("ij,ij->i", normals, cam - centres) > 1e-6
    fi = np.flatnonzero(vis)
    ld = np.asarray(spec.light_dir)
    amb = spec.ambient
    diff = (1.05 - amb) / max(0.5, ld[2])

    def lambert(n: np.ndarray) -> np.ndarray:
        return amb + diff * np.maximum(0.0, n @ ld)

    # outlines (full and inset), pip rims and cores, bevel quads -> one projection
    nf = len(fi)
    fc, e1, e2 = centres[fi, None, :], e1s[fi, None, :], e2s[fi, None, :]
    ou = _OUTLINE[None, :, :1]
    ov = _OUTLINE[None, :, 1:]
    outer3 = fc + ou * e1 + ov * e2
    inner3 = fc + 0.87 * (ou * e1 + ov * e2)
    pip_face, pip_uv, pip_r = [], [], []
    for j, f in enumerate(fi):
        v = int(_FACE_VALUE[f])
        pip_face += [j] * len(_PIP_XY[v])
        pip_uv.append(_PIP_XY[v])
        pip_r += [_pip_radius(d, v)] * len(_PIP_XY[v])
    # A ring's hole: one more disc, in the die's colour, on the 1 face when it is seen.
    ring = [j for j, f in enumerate(fi) if d.one == "ring" and int(_FACE_VALUE[f]) == 1]
    pj = np.array(pip_face)
    puv = np.vstack(pip_uv)
    pr = np.array(pip_r)[:, None, None]
    # a recessed pip is darker on the side the light comes from: shift its bright core away
    lu = np.stack([e1s[fi] @ ld, e2s[fi] @ ld], 1)
    lu = lu / (np.linalg.norm(lu, axis=1, keepdims=True) + 1e-9) * 0.03
    cu = _CIRCLE[None, :, :1]
    cv = _CIRCLE[None, :, 1:]
    rims3 = (centres[fi][pj][:, None] + (puv[:, None, :1] + pr * cu) * e1s[fi][pj][:, None]
             + (puv[:, None, 1:] + pr * cv) * e2s[fi][pj][:, None])
    cpuv = puv - lu[pj]
    cores3 = (centres[fi][pj][:, None] + (cpuv[:, None, :1] + 0.85 * pr * cu) * e1s[fi][pj][:, None]
              + (cpuv[:, None, 1:] + 0.85 * pr * cv) * e2s[fi][pj][:, None])
    pairs = [(a, b) for ia, a in enumerate(fi) for b in fi[ia + 1 :] if _AXES[a] != _AXES[b]]
    bev3 = np.zeros((len(pairs), 4, 3))
    bev_n = np.zeros((len(pairs), 3))
    for k, (a, b) in enumerate(pairs):
        na, nb = normals[a], normals[b]
        mid = c + (na + nb) * h2  # midpoint of the shared edge
        along = _cross(na, nb) * h2 * 0.9
        ins = 0.13 * h2
        bev3[k] = [mid + along - na * ins, mid - along - na * ins, mid - along - nb * ins,
                   mid + along - nb * ins]
        bev_n[k] = (na + nb) / math.sqrt(2)
    n_o, n_i = nf * len(_OUTLINE), nf * len(_OUTLINE)
    n_p = len(pj) * len(_CIRCLE)
    n_b = len(pairs) * 4
    hole3 = np.zeros((0, 3))
    if ring:
        j = ring[0]
        hole3 = (centres[fi[j]] + 0.5 * _pip_radius(d, 1) * cu[0] * e1s[fi[j]]
                 + 0.5 * _pip_radius(d, 1) * cv[0] * e2s[fi[j]])
    allp = _project(P, np.vstack([outer3.reshape(-1, 3), inner3.reshape(-1, 3),
                                  rims3.reshape(-1, 3), cores3.reshape(-1, 3),
                                  bev3.reshape(-1, 3), hole3]))
    outer = allp[:n_o]
    hull = cv2.convexHull(outer.astype(np.float32))[:, 0, :].astype(np.float64)
    bbox = [float(hull[:, 0].min()), float(hull[:, 1].min()),
            float(hull[:, 0].max()), float(hull[:, 1].max())]
    blur_px = d.blur * spec.die_px * (BIG_SCALE if d.big else 1.0)
    pad = int(blur_px / 2) + 3
    x0, y0 = math.floor(bbox[0]) - pad, math.floor(bbox[1]) - pad
    x1, y1 = math.ceil(bbox[2]) + pad, math.ceil(bbox[3]) + pad
    hgt, wid = img.shape[:2]
    if x1 <= 0 or y1 <= 0 or x0 >= wid or y0 >= hgt:
        return None
    pw, ph = (x1 - x0) * SS, (y1 - y0) * SS
    col = np.zeros((ph, pw, 3), np.float32)
    alpha = np.zeros((ph, pw), np.float32)
    fix = np.round(((allp - [x0, y0]) * SS + (SS - 1) / 2) * 16).astype(np.int32)
    hullfix = np.round(((hull - [x0, y0]) * SS + (SS - 1) / 2) * 16).astype(np.int32)
    ninner = fix[n_o : n_o + n_i].reshape(nf, -1, 2)
    nrims = fix[n_o + n_i : n_o + n_i + n_p].reshape(len(pj), -1, 2)
    ncores = fix[n_o + n_i + n_p : n_o + n_i + 2 * n_p].reshape(len(pj), -1, 2)
    nbev = fix[n_o + n_i + 2 * n_p : n_o + n_i + 2 * n_p + n_b].reshape(len(pairs), 4, 2)
    nhole = fix[n_o + n_i + 2 * n_p + n_b :]

    albedo = np.array(COLOURS[d.colour], np.float64)
    pip = np.array(PIP_COLOURS.get(d.pip_colour) or COLOURS.get(d.pip_colour)
                   or PIP_COLOURS["white"], np.float64)
    shades = lambert(normals[fi])
    # outer rounded edges turn away from the light and the lens: never brighter than a face
    edge = float(shades.min()) * 0.85
    cv2.fillPoly(alpha, [hullfix], 1.0, shift=4)
    cv2.fillPoly(col, [hullfix], tuple(albedo * edge), shift=4)
    bev_sh = np.minimum(1.2, lambert(bev_n) * 1.08) if len(pairs) else []
    for k in range(len(pairs)):  # rounded edges catch a little more light
        cv2.fillPoly(col, [nbev[k]], tuple(albedo * bev_sh[k]), shift=4)
    for j in range(nf):
        cv2.fillPoly(col, [ninner[j]], tuple(albedo * float(shades[j])), shift=4)
    if d.material != "solid":  # the body's pattern runs under the pips, which cover it
        col *= _material(d, ph, pw, albedo, s * SS * spec.die_px / DIE_MM)
    see = None
    if d.material == "translucent":
        tint = albedo / max(float(albedo.max()), 1e-3)  # light through the plastic
        col, see = _see_through(col, alpha, nrims, _hidden_pips(d, P, centres, e1s, e2s, vis,
                                                                 x0, y0), pip * tint * edge)
    for j in range(nf if d.colour not in BLANK else 0):
        sh = float(shades[j])
        sel = pj == j
        cv2.fillPoly(col, list(nrims[sel]), tuple((pip * 0.55 + albedo * 0.25) * sh), shift=4)
        cv2.fillPoly(col, list(ncores[sel]), tuple(pip * sh), shift=4)
        if ring and j == ring[0]:
            cv2.fillPoly(col, [nhole], tuple(albedo * sh), shift=4)
    glare = None
    if d.glare:
        t = int(fi[np.argmax(normals[fi, 2])])
        glare = np.zeros((ph, pw), np.float32)
        rng = np.random.default_rng(d.spin)
        gc = rng.uniform(-0.45, 0.45, 2)
        ga = rng.uniform(0, math.pi)
        ell = np.stack([0.5 * _CIRCLE[:, 0], 0.25 * _CIRCLE[:, 1]], 1) @ np.array(
            [[math.cos(ga), math.sin(ga)], [-math.sin(ga), math.cos(ga)]])
        if d.glare_size != 1.0:
            ell = ell * d.glare_size
            gc = gc / d.glare_size  # a face-sized mirror image lies over the face
        pts3 = centres[t] + (gc[0] + ell[:, :1]) * e1s[t] + (gc[1] + ell[:, 1:]) * e2s[t]
        gp = np.round(((_project(P, pts3) - [x0, y0]) * SS + (SS - 1) / 2) * 16).astype(np.int32)
        cv2.fillPoly(glare, [gp], 1.0, shift=4)
        if d.glare_size > 1.0:  # mirrored by the flat top face only, not its bevels or sides
            face = np.zeros_like(glare)
            cv2.fillPoly(face, [ninner[int(np.argmax(normals[fi, 2]))]], 1.0, shift=4)
            glare *= face
        # A pip is a matte bowl: it does not mirror the lamp as the glossy face around it
        # does, so under a highlight it keeps part of its contrast (the path-traced renders:
        # white pips faint but there, black ones still dark). Glare laid over the pips as
        # over the face erased them outright.
        bowls = np.zeros((ph, pw), np.float32)
        top = int(np.argmax(normals[fi, 2]))
        cv2.fillPoly(bowls, list(ncores[pj == top]), 1.0, shift=4)
    # outside the hull col is already 0 and alpha is binary: col is premultiplied as drawn
    size = (x1 - x0, y1 - y0)
    col = cv2.resize(col, size, interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(alpha, size, interpolation=cv2.INTER_AREA)
    if see is not None:
        see = cv2.resize(see, size, interpolation=cv2.INTER_AREA)
    if glare is not None:  # a soft specular streak, blended towards white, kept on the die
        glare = cv2.resize(glare, size, interpolation=cv2.INTER_AREA)
        side_px = spec.die_px * (BIG_SCALE if d.big else 1.0)
        # A face-wide mirror image ends at the face's edge, where the bevel turns away.
        soft = 0.09 if d.glare_size <= 1.0 else 0.025
        glare = cv2.GaussianBlur(glare, (0, 0), max(0.8, side_px * soft))
        glare *= 1.0 - (1.0 - PIP_GLARE) * cv2.resize(bowls, size, interpolation=cv2.INTER_AREA)
        glare = cv2.cvtColor(cv2.multiply(glare, alpha, scale=0.85), cv2.COLOR_GRAY2BGR)
        col = cv2.add(col, cv2.multiply(cv2.subtract(cv2.cvtColor(alpha, cv2.COLOR_GRAY2BGR),
                                                     col), glare))
    if blur_px >= 1:
        if see is not None:
            see = _motion_blur(cv2.cvtColor(see, cv2.COLOR_GRAY2BGR), alpha,
                               max(2, round(blur_px)), d.blur_deg)[0][..., 0]
        col, alpha = _motion_blur(col, alpha, max(2, round(blur_px)), d.blur_deg)
    cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(wid, x1), min(hgt, y1)
    col = col[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0]
    alpha = np.ascontiguousarray(alpha[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0])
    dark = 1.0 - spec.shadow_strength * _wall_shadow(spec, float(c[0]), float(c[1]), s)
    light = cv2.multiply(cv2.cvtColor(np.ascontiguousarray(gmap[cy0:cy1, cx0:cx1]) * dark,
                                      cv2.COLOR_GRAY2BGR), gain)
    keep = cv2.cvtColor(1.0 - alpha, cv2.COLOR_GRAY2BGR)
    if see is not None:  # the floor through the body, tinted by the plastic
        see = np.ascontiguousarray(see[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0])
        keep = cv2.add(keep, cv2.cvtColor(see, cv2.COLOR_GRAY2BGR) * tint.astype(np.float32))
    roi = np.ascontiguousarray(img[cy0:cy1, cx0:cx1])
    img[cy0:cy1, cx0:cx1] = cv2.add(cv2.multiply(roi, keep), cv2.multiply(
        np.ascontiguousarray(col), light))
    return bbox, alpha, (cx0, cy0)


CLEAR = 0.55  # share of the floor a translucent die's body lets through
GHOST = 0.45  # how strongly a hidden face's pip shows through the body


def _hidden_pips(d: DiePose, P: np.ndarray, centres: np.ndarray, e1s: np.ndarray,
                 e2s: np.ndarray, vis: np.ndarray, x0: int, y0: int) -> list[np.ndarray]:
    """The pips of the faces the camera does not see, projected as if the body were not
    there, in the patch's fixed-point pixels: what shows through a translucent die."""
    rings = []
    for f in np.flatnonzero(~vis):
        v = int(_FACE_VALUE[f])
        r = _pip_radius(d, v)
        rings += [centres[f] + (u + r * _CIRCLE[:, :1]) * e1s[f]
                  + (w + r * _CIRCLE[:, 1:]) * e2s[f] for u, w in _PIP_XY[v]]
    if not rings:
        return []
    pts = _project(P, np.vstack(rings))  # one projection for all, as for the visible faces
    fixed = np.round(((pts - [x0, y0]) * SS + (SS - 1) / 2) * 16).astype(np.int32)
    return list(fixed.reshape(len(rings), len(_CIRCLE), 2))


def _pip_radius(d: DiePose, value: int) -> float:
    """A pip's radius in half-sides: a maker's large or ringed 1 is wider."""
    if value != 1:
        return 0.19
    return {"pip": 0.23, "big": 0.36, "ring": 0.36}[d.one]


def _see_through(col: np.ndarray, alpha: np.ndarray, rims: np.ndarray,
                 ghosts: list[np.ndarray], pip: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Make a drawn body translucent (before its visible pips, which stay opaque paint).

    Returns the body's colour, scaled down by what it lets through, with the hidden faces'
    pips laid in faintly, and `see`, the share of the floor behind each pixel that shows.
    Such dice fool a reader that takes every pip-like blob inside a die for a pip: the bottom
    face's pips sit under the top face's, mirrored.
    """
    painted = np.zeros_like(alpha)
    if len(rims):
        cv2.fillPoly(painted, list(rims), 1.0, shift=4)
    ghost = np.zeros_like(alpha)
    if ghosts:
        cv2.fillPoly(ghost, ghosts, 1.0, shift=4)
    ghost = cv2.GaussianBlur(ghost, (0, 0), 1.5)  # seen through the plastic, out of focus
    body = alpha * (1.0 - painted)
    see = CLEAR * body * (1.0 - GHOST * ghost)
    col = col * (1.0 - CLEAR * body)[..., None]  # the plastic's own share of the light
    col += (body * GHOST * CLEAR * ghost)[..., None] * pip.astype(np.float32)
    return col.astype(np.float32), see.astype(np.float32)


def _material(d: DiePose, h: int, w: int, albedo: np.ndarray, side_px: float) -> np.ndarray:
    """Per-pixel factors (h, w, 3) that turn a die's plain body into another maker's plastic.

    Marbled dice carry swirling veins of a second colour; speckled ones glitter and flecks a
    few pixels wide. Both put edges on the face that are not pips, which the value nets must
    learn to look past (the real sets' marbled and glittery dice make most of their errors).
    """
    rng = np.random.default_rng([d.spin, 99])
    out = np.ones((h, w, 3), np.float32)
    if d.material == "marbled":
        n = _smooth_noise(rng, h, w, max(3.0, side_px * rng.uniform(0.25, 0.6)))
        n += 0.5 * _smooth_noise(rng, h, w, max(2.0, side_px * 0.12))
        width = rng.uniform(0.15, 0.5)
        veins = np.exp(-((n / width) ** 2))  # thin bands where the noise crosses zero
        ratio = np.asarray(d.accent, np.float32) / np.maximum(albedo.astype(np.float32), 0.05)
        out += veins[..., None] * (ratio - 1.0)[None, None, :] * float(rng.uniform(0.5, 1.0))
    elif d.material == "speckled":
        fleck = max(1, round(side_px * rng.uniform(0.02, 0.05)))
        gh, gw = max(1, h // fleck), max(1, w // fleck)
        u = rng.random((gh, gw)).astype(np.float32)
        density = rng.uniform(0.03, 0.15)
        f = np.where(u < density / 2, rng.uniform(1.6, 2.6),
                     np.where(u > 1 - density / 2, rng.uniform(0.3, 0.6), 1.0)).astype(np.float32)
        f = cv2.resize(f, (w, h), interpolation=cv2.INTER_NEAREST)
        out *= f[..., None]
    return out


def fancy(d: DiePose, rng: np.random.Generator) -> DiePose:
    """The same die made by another maker: a material, an accent colour, a style of 1."""
    material = str(rng.choice(["solid", "marbled", "speckled"], p=[0.3, 0.4, 0.3]))
    accent = tuple(float(v) for v in rng.uniform(0.05, 0.95, 3))
    if rng.random() < 0.3:  # white or black veins, as on the commonest marbled dice
        accent = (0.92, 0.92, 0.9) if rng.random() < 0.6 else (0.06, 0.06, 0.06)
    one = str(rng.choice(["pip", "big", "ring"], p=[0.5, 0.3, 0.2]))
    pip = d.pip_colour
    if rng.random() < 0.25:  # gold, red or another colour's pips
        pip = str(rng.choice([c for c in COLOURS if c != d.colour and c != "gray"]))
    return _with(d, material=material, accent=accent, one=one, pip_colour=pip)


def _hand(
    img: np.ndarray, spec: SceneSpec, rng: np.random.Generator, gmap: np.ndarray,
    gain: np.ndarray,
) -> np.ndarray:
    """A skin-coloured arm and hand reaching over the tray; returns its coverage (H, W)."""
    h, w = img.shape[:2]
    corners = tray_corners(spec)
    tgt = corners.mean(0) + (corners[rng.integers(4)] - corners.mean(0)) * rng.uniform(0, 0.7)
    side = int(rng.integers(4))
    start = [np.array([rng.uniform(0.2, 0.8) * w, h * 1.1]), np.array([w * 1.1, rng.uniform(
        0.2, 0.8) * h]), np.array([rng.uniform(0.2, 0.8) * w, -0.1 * h]), np.array([
            -0.1 * w, rng.uniform(0.2, 0.8) * h])][side]
    u = tgt - start
    u /= np.linalg.norm(u)
    v = np.array([-u[1], u[0]])
    aw = spec.die_px / DIE_MM * 75 * 1.15  # a forearm ~75 mm wide, a little above the floor
    mask = np.zeros((h, w), np.float32)

    def pt(a: float, b: float) -> tuple[int, int]:
        p = tgt + u * a * aw + v * b * aw
        return (round(p[0] * 16), round(p[1] * 16))

    far = -float(np.linalg.norm(tgt - start)) / aw - 1
    arm = np.array([pt(far, -0.6), pt(far, 0.6), pt(0.1, 0.5), pt(0.1, -0.5)], np.int32)
    cv2.fillPoly(mask, [arm], 1.0, cv2.LINE_AA, shift=4)
    ang = math.degrees(math.atan2(u[1], u[0]))
    cv2.ellipse(mask, pt(0.55, 0), (int(0.62 * aw * 16), int(0.55 * aw * 16)), ang, 0, 360, 1.0,
                -1, cv2.LINE_AA, shift=4)
    spread = rng.uniform(0, 0.25)
    for i, off in enumerate((-0.36, -0.12, 0.12, 0.36)):
        ln = (0.75, 0.9, 0.85, 0.65)[i] * rng.uniform(0.85, 1.05)
        a0 = off * spread * 2
        p0 = np.array([1.0, off])
        p1 = p0 + ln * np.array([math.cos(a0), math.sin(a0)])
        cv2.line(mask, pt(*p0), pt(*p1), 1.0, int(0.22 * aw), cv2.LINE_AA, shift=4)
    th = 1 if rng.random() < 0.5 else -1
    cv2.line(mask, pt(0.35, 0.45 * th), pt(0.85, 0.9 * th), 1.0, int(0.26 * aw), cv2.LINE_AA,
             shift=4)
    ld = np.asarray(spec.light_dir)
    hom = _floor_h(spec)
    c0 = hom @ np.array([spec.floor_w_mm / 2, spec.floor_h_mm / 2, 1])
    c1 = hom @ np.array([spec.floor_w_mm / 2 - ld[0] / ld[2] * 90,
                         spec.floor_h_mm / 2 - ld[1] / ld[2] * 90, 1])
    off = c1[:2] / c1[2] - c0[:2] / c0[2]  # the hand is ~90 mm above the floor
    # soft things (shadow, rounded shading) at quarter resolution
    q = 4
    sw, sh_ = max(2, w // q), max(2, h // q)
    small = cv2.resize(mask, (sw, sh_), interpolation=cv2.INTER_AREA)
    shadow = cv2.warpAffine(small, np.float32([[1, 0, off[0] / q], [0, 1, off[1] / q]]), (sw, sh_))
    shadow = cv2.resize(cv2.GaussianBlur(shadow, (0, 0), aw * 0.12 / q), (w, h))
    thick = cv2.resize(cv2.GaussianBlur(small, (0, 0), aw * 0.15 / q), (w, h))
    tone = [(0.55, 0.66, 0.88), (0.42, 0.55, 0.78), (0.30, 0.42, 0.62), (0.20, 0.28, 0.42)]
    skin = np.array(tone[rng.integers(len(tone))]) * gain
    shade = cv2.add(cv2.multiply(np.minimum(thick * 1.3, 1.0), 0.45), 0.65)
    keep = cv2.multiply(cv2.subtract(1.0, cv2.multiply(shadow, 0.45)), cv2.subtract(1.0, mask))
    layer = cv2.multiply(cv2.multiply(mask, gmap), shade)
    out = cv2.add(cv2.multiply(img, cv2.cvtColor(keep, cv2.COLOR_GRAY2BGR)),
                  cv2.multiply(cv2.cvtColor(layer, cv2.COLOR_GRAY2BGR),
                               (*(float(c) for c in skin), 0.0)))
    img[:] = out
    return mask


_SCRATCH = threading.local()


def _scratch(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A per-thread float32 work buffer that lives across frames.

    Fresh full-frame arrays cost thousands of page faults a frame, a large share of the budget
    on a VM; these buffers never leave render().
    """
    bufs = _SCRATCH.__dict__.setdefault("bufs", {})
    buf = bufs.get(name)
    if buf is None or buf.shape != shape:
        buf = bufs[name] = np.empty(shape, np.float32)
    return buf


def _gain_map(spec: SceneSpec) -> np.ndarray:
    q = 8
    w, h = spec.width, spec.height
    lw, lh = max(2, w // q), max(2, h // q)
    yy, xx = np.mgrid[0:lh, 0:lw].astype(np.float32)
    nx, ny = (xx / (lw - 1)) * 2 - 1, (yy / (lh - 1)) * 2 - 1
    a = math.radians(spec.gradient_deg)
    g = 1 + spec.gradient * (nx * math.cos(a) + ny * math.sin(a)) / 1.4
    g *= 1 - spec.vignette * (nx * nx + ny * ny) / 2
    return cv2.resize(g.astype(np.float32), (w, h), dst=_scratch("gain", (h, w)),
                      interpolation=cv2.INTER_LINEAR)


def _camera_gain(spec: SceneSpec) -> np.ndarray:
    """Per-channel gain of light colour after partial white balance, times exposure."""
    wb = _kelvin_bgr(spec.light_k) / _kelvin_bgr(6500.0)
    wb = wb ** (1 - spec.wb_strength)
    return wb / wb[1] * (2.0**spec.light_ev)


_NOISE: dict[tuple[int, int], np.ndarray] = {}


def _noise_tile(h: int, w: int) -> np.ndarray:
    """Uniform 8-bit noise twice the frame size; frames take a random window of it.

    Drawing fresh noise for every pixel cost more than the rest of the finishing together.
    """
    if (h, w) not in _NOISE:
        _NOISE[(h, w)] = np.random.default_rng(12345).integers(0, 256, (2 * h, 2 * w, 3),
                                                               dtype=np.uint8)
    return _NOISE[(h, w)]


def _finish(img: np.ndarray, spec: SceneSpec, rng: np.random.Generator) -> np.ndarray:
    """Sensor noise, 8-bit conversion and JPEG; full-frame work stays in cv2 for speed."""
    h, w = img.shape[:2]
    out = cv2.convertScaleAbs(img)  # saturating cast
    if spec.noise_sigma > 0:
        sig = spec.noise_sigma * 255 * 2 ** (-0.5 * spec.light_ev)  # dark frames are gained up
        k = sig / 73.6  # uniform 0..255 has sd 73.6
        oy, ox = int(rng.integers(0, h)), int(rng.integers(0, w))
        noise = _noise_tile(h, w)[oy : oy + h, ox : ox + w]
        out = cv2.addWeighted(out, 1.0, noise, k, -127.5 * k)
    if spec.jpeg_quality < 100:
        _ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, spec.jpeg_quality])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def render(
    spec: SceneSpec, dice: list[DiePose], seed: int = 0, hand: bool = False
) -> tuple[np.ndarray, list[dict]]:
    """Render a BGR frame and the per-die labels (the truth, not a reading of the pixels).

    `seed` only drives per-frame randomness (noise, the hand), so re-rendering moved dice on one
    spec keeps the tray texture still, as a fixed camera would.
    """
    rng = np.random.default_rng([seed, 7])
    P = _projection(spec)
    cam = np.asarray(spec.cam_pos, float)
    gmap = _gain_map(spec)
    gain = _camera_gain(spec)
    hw = (spec.height, spec.width)
    light = cv2.multiply(_shadows(spec, dice), gmap, dst=_scratch("light", hw))
    gain4 = (*(float(g) for g in gain), 0.0)
    light3 = cv2.merge([cv2.multiply(light, float(g), dst=_scratch(f"light{c}", hw))
                        for c, g in enumerate(gain)], dst=_scratch("light3", (*hw, 3)))
    img = cv2.multiply(_background(spec), light3, dst=_scratch("frame", (*hw, 3)),
                       dtype=cv2.CV_32F)  # 0..255 from here on
    cv2.multiply(gmap, 255.0, dst=gmap)
    order = sorted(range(len(dice)), key=lambda i: -math.hypot(dice[i].x - cam[0],
                                                               dice[i].y - cam[1]))
    drawn: dict[int, tuple[list[float], np.ndarray, tuple[int, int]]] = {}
    for i in order:
        r = _render_die(img, spec, dice[i], P, cam, gmap, gain4)
        if r is not None:
            drawn[i] = r
    cover = _hand(img, spec, rng, gmap, gain) if hand else None
    out = _finish(img, spec, rng)
    labels = []
    w, h = spec.width, spec.height
    for i, d in enumerate(dice):
        if i not in drawn:
            continue
        bbox, alpha, (ax, ay) = drawn[i]
        cb = [max(0.0, bbox[0]), max(0.0, bbox[1]), min(float(w), bbox[2]), min(float(h), bbox[3])]
        if cb[2] - cb[0] < 2 or cb[3] - cb[1] < 2:
            continue
        if cover is not None:
            hidden = cover[ay : ay + alpha.shape[0], ax : ax + alpha.shape[1]]
            if float((alpha * (1 - hidden)).sum()) < 0.03 * max(float(alpha.sum()), 1e-6):
                continue
        cut = bbox[0] < -0.5 or bbox[1] < -0.5 or bbox[2] > w + 0.5 or bbox[3] > h + 0.5
        label = {
            "value": None if d.cocked or d.colour in BLANK else d.value,
            "colour": d.colour,
            "big": d.big,
            "bbox": [round(v, 2) for v in cb],
            "cocked": d.cocked,
            "cut": bool(cut),
        }
        if d.cocked:
            label["top_bbox"] = [round(v, 2) for v in _top_face_box(d, P)]
        labels.append(label)
    return out, labels


MATERIALS = ("solid", "marbled", "speckled", "translucent")


def render_scene(
    seed: int, preset: str = "normal", width: int = 1280, height: int = 960,
    material: str | None = None, top_boxes: bool = False,
) -> tuple[np.ndarray, dict]:
    """One seed -> one frame and its manifest entry (without the "image" key).

    `top_boxes`: a cocked die's label also gives its top face's box (`top_bbox`), for
    training; the manifests written keep the shared format's keys.

    `material`: every die made by another maker (`fancy`: its 1, sometimes its pips) in this
    plastic, placed and labelled as the game's dice of the same seed; None keeps those.
    """
    spec = random_scene(seed, preset, width, height)
    dice = random_dice(spec, np.random.default_rng([seed, _PRESET_SALT[preset], 2]))
    if material is not None:
        if material not in MATERIALS:
            raise ValueError(f"unknown material {material!r}; choose from {', '.join(MATERIALS)}")
        rng = np.random.default_rng([seed, _PRESET_SALT[preset], 3])
        dice = [_with(fancy(d, rng), material=material) for d in dice]
    img, labels = render(spec, dice, seed=seed)
    entry = {
        "width": width,
        "height": height,
        "dice": [{k: lab[k] for k in ("value", "bbox", "colour", "big", "cocked", "cut",
                                      *(("top_bbox",) if top_boxes else ())) if k in lab}
                 for lab in labels],
        "preset": preset,
        "light_k": round(spec.light_k),
        "light_ev": round(spec.light_ev, 3),
    }
    if material is not None:
        entry["material"] = material
    return img, entry


def write_set(
    out_dir: str | Path, n: int, preset: str = "hard", seed: int = 0, width: int = 1280,
    height: int = 960, material: str | None = None,
) -> Path:
    """Write n frames and manifest.jsonl; the same arguments give byte-identical files.
    `material`: other makers' dice (see `render_scene`)."""
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    manifest = out / "manifest.jsonl"
    with manifest.open("w", encoding="utf-8") as fh:
        for i in range(n):
            img, entry = render_scene(seed + i, preset, width, height, material)
            name = f"images/synth_{i:05d}.jpg"
            ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
            if not ok:
                raise RuntimeError(f"JPEG encoding failed for {name}")
            (out / name).write_bytes(buf.tobytes())
            fh.write(json.dumps({"image": name, **entry}, separators=(", ", ": ")) + "\n")
    return manifest

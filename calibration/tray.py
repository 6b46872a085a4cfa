"""Find the box lid's inner floor: four corners in the image and the top-down homography.

The floor meets the lid's walls in a sharp, straight step: the wall is darker than the floor
there (it faces sideways and sits in the corner's occlusion), and that step is the innermost
straight line that runs along a whole side. Floor prints, dice and soft wall shadows also make
steps, but they are short, scattered or blurred, so edge points are gathered along rays from
the middle of the picture, voted into lines, and the innermost well-supported line of each of
the four sides is kept. The corners are where neighbouring sides meet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .result import StepResult

WORK = 640  # long side the search runs at
N_RAYS = 360
MIN_STEP = 0.12  # drop of log brightness over ~3 px that counts as an edge point
BELOW_FLOOR = 0.2  # how far (log brightness) the wall side must lie under the floor's median
SIDE_WINDOW = 30  # degrees a side's normal may stray from its ideal direction
SUPPORT = 0.35  # share of a side's strongest line a candidate needs to be the floor edge


@dataclass
class TrayFit:
    """Corners in image px ordered top-left, top-right, bottom-right, bottom-left."""

    corners: np.ndarray  # (4, 2) float
    homography: np.ndarray  # 3x3, image px -> top-down px
    size: tuple[int, int]  # (width, height) of the top-down rectangle
    support: float  # weakest side's share of its rays that voted for it


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Top-left, top-right, bottom-right, bottom-left: the order a person taps them in."""
    pts = np.asarray(pts, np.float64).reshape(4, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    pts = pts[np.argsort(ang)]  # clockwise on screen (y down), starting near -pi (left)
    start = int(np.argmin(pts.sum(axis=1)))  # top-left has the smallest x + y
    return np.roll(pts, -start, axis=0)


def top_down(corners: np.ndarray, long_side: int = 800) -> tuple[np.ndarray, tuple[int, int]]:
    """Homography from the image to a rectangle; the aspect comes from the mean side lengths.

    Without the camera's intrinsics the true aspect is unknown, but from above the tilt is
    small and the mean of opposite sides is within a few percent, which is all a top-down
    view for the page and the die size needs.
    """
    c = order_corners(corners)
    w = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2
    h = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2
    k = long_side / max(w, h, 1e-6)
    tw, th = max(2, round(w * k)), max(2, round(h * k))
    dst = np.array([[0, 0], [tw - 1, 0], [tw - 1, th - 1], [0, th - 1]], np.float32)
    hom = cv2.getPerspectiveTransform(c.astype(np.float32), dst)
    return hom, (tw, th)


def _edge_points(g: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Points along rays from the centre where brightness drops sharply going outward.

    Only drops to below the floor's own level count: the wall is darker than the floor,
    while the far side of a print's bright star or stripe is just floor again.
    """
    h, w = g.shape
    cx, cy = (w - 1) / 2, (h - 1) / 2
    reach = int(math.hypot(w, h) / 2)
    r = np.arange(reach, dtype=np.float32)
    ang = np.linspace(0, 2 * math.pi, N_RAYS, endpoint=False, dtype=np.float32)
    xs = cx + np.cos(ang)[:, None] * r[None]
    ys = cy + np.sin(ang)[:, None] * r[None]
    inside = (xs >= 0) & (xs <= w - 1) & (ys >= 0) & (ys <= h - 1)
    prof = cv2.remap(g, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    # drop over 3 px: before (r-1) minus after (r+2), sharp steps only
    drop = np.zeros_like(prof)
    drop[:, 1:-2] = prof[:, :-3] - prof[:, 3:]
    after = np.full_like(prof, np.inf)
    after[:, :-4] = np.maximum(prof[:, 2:-2], prof[:, 4:])
    peak = (drop >= MIN_STEP) & inside & (after <= floor - BELOW_FLOOR)
    peak[:, 1:-1] &= (drop[:, 1:-1] >= drop[:, :-2]) & (drop[:, 1:-1] >= drop[:, 2:])
    ri, rj = np.nonzero(peak)
    pts = np.stack([xs[ri, rj] + 0.5 * np.cos(ang[ri]), ys[ri, rj] + 0.5 * np.sin(ang[ri])], 1)
    return pts, ang[ri]


def _vote(pts: np.ndarray, dirs: np.ndarray, centre: np.ndarray,
          reach: int) -> np.ndarray:
    """Hough votes over (outward normal in whole degrees, distance from the centre in px)."""
    acc = np.zeros((360, reach + 1), np.float32)
    if len(pts) == 0:
        return acc
    rel = pts - centre
    base = np.degrees(dirs)
    for off in range(-20, 21):
        th = np.round(base + off).astype(int) % 360
        t = np.radians(th)
        rho = np.round(rel[:, 0] * np.cos(t) + rel[:, 1] * np.sin(t)).astype(int)
        ok = (rho > 0) & (rho <= reach)
        np.add.at(acc, (th[ok], rho[ok]), 1.0)
    # a line's points spread over a pixel or two of rho and a degree of theta
    acc = cv2.GaussianBlur(acc, (3, 3), 0.8)
    return acc


def _pick_sides(acc: np.ndarray) -> list[tuple[int, int, float]] | None:
    """Four lines (theta deg, rho px, votes), one per side: the innermost strong one each."""
    # the strongest line sets the directions; the other sides lie about 90 degrees apart
    base = int(np.argmax(acc.max(axis=1)))
    sides = []
    for k in range(4):
        ths = [(base + k * 90 + d) % 360 for d in range(-SIDE_WINDOW, SIDE_WINDOW + 1)]
        win = acc[ths]
        top = float(win.max())
        if top <= 0:
            return None
        # candidates: local maxima along rho of each theta row's best; the innermost wins
        prof = win.max(axis=0)
        arg = win.argmax(axis=0)
        cand = [j for j in range(2, len(prof) - 1)
                if prof[j] >= SUPPORT * top and prof[j] >= prof[j - 1] and prof[j] >= prof[j + 1]]
        j = cand[0] if cand else int(np.argmax(prof))
        sides.append((ths[int(arg[j])], j, float(prof[j])))
    return sides


def _refine(pts: np.ndarray, centre: np.ndarray, theta: int, rho: int) -> tuple[np.ndarray, ...]:
    """Least-squares line through the edge points near a voted line, as (point, direction)."""
    t = math.radians(theta)
    n = np.array([math.cos(t), math.sin(t)])
    d = (pts - centre) @ n - rho
    near = pts[np.abs(d) <= 2.5]
    if len(near) >= 5:
        vx, vy, x0, y0 = cv2.fitLine(near.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01)
        return np.array([float(x0[0]), float(y0[0])]), np.array([float(vx[0]), float(vy[0])])
    p = centre + n * rho
    return p, np.array([-n[1], n[0]])


def _support(pts: np.ndarray, corners: np.ndarray, centre: np.ndarray) -> float:
    """The weakest side's share of its rays that found an edge point on it."""
    rel = pts - centre
    ang = np.arctan2(rel[:, 1], rel[:, 0])
    shares = []
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        u = (b - a) / (np.linalg.norm(b - a) + 1e-9)
        dist = np.abs((pts - a) @ np.array([-u[1], u[0]]))
        along = (pts - a) @ u
        on = (dist <= 2.0) & (along >= 0) & (along <= np.linalg.norm(b - a))
        a0, a1 = (math.atan2(*(p - centre)[::-1]) for p in (a, b))
        span = (a1 - a0) % (2 * math.pi)
        if span > math.pi:
            span = 2 * math.pi - span
        rays = max(1.0, span / (2 * math.pi) * N_RAYS)
        hit = len(np.unique(np.round(ang[on] / (2 * math.pi) * N_RAYS).astype(int)))
        shares.append(min(1.0, hit / rays))
    return float(min(shares))


def _intersect(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> np.ndarray | None:
    (p, u), (q, v) = a, b
    m = np.array([u, -v]).T
    if abs(np.linalg.det(m)) < 1e-6:
        return None
    s, _ = np.linalg.solve(m, q - p)
    return p + s * u


def _validate(corners: np.ndarray, size: tuple[int, int]) -> str | None:
    """Why these corners cannot be a tray floor seen from above, or None if they can."""
    w, h = size
    c = order_corners(corners)
    if not cv2.isContourConvex(c.astype(np.float32).reshape(-1, 1, 2)):
        return "the corners do not make a convex four-sided shape"
    area = cv2.contourArea(c.astype(np.float32))
    if area < 0.08 * w * h:
        return "the tray floor covers too little of the picture: move the camera closer"
    diag = math.hypot(w, h)
    if np.any(c < -0.05 * diag) or np.any(c[:, 0] > w + 0.05 * diag) or np.any(
            c[:, 1] > h + 0.05 * diag):
        return "the tray runs out of the picture: frame the whole lid"
    for k in range(4):
        a, b = c[k - 1] - c[k], c[(k + 1) % 4] - c[k]
        d = math.degrees(math.acos(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)
                                                    + 1e-9), -1, 1)))
        if not 45 <= d <= 135:
            return "the corners are too skewed for a tray seen from above"
    return None


def find_tray(frame: np.ndarray) -> StepResult:
    """Detect the floor's corners; `details` holds `corners` (tl, tr, br, bl), `homography`.

    Never raises on a picture without a tray: the result fails and says what to change.
    """
    if frame is None or frame.ndim != 3 or frame.size == 0:
        return StepResult("tray", False, 0.0, "no picture from the camera")
    h0, w0 = frame.shape[:2]
    scale = min(1.0, WORK / max(h0, w0))
    small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
        if scale < 1 else frame
    grey = small.astype(np.float32).mean(axis=2)
    g = cv2.GaussianBlur(np.log(grey + 4.0), (0, 0), 1.0)
    h, w = g.shape
    centre = np.array([(w - 1) / 2, (h - 1) / 2])
    reach = int(math.hypot(w, h) / 2) + 2
    ch, cw = h // 4, w // 4
    floor = float(np.median(g[h // 2 - ch:h // 2 + ch, w // 2 - cw:w // 2 + cw]))
    pts, dirs = _edge_points(g, floor)
    acc = _vote(pts, dirs, centre, reach)
    sides = _pick_sides(acc)
    fail = "no tray found: put the whole lid in the picture, or tap its four inner corners"
    if sides is None:
        return StepResult("tray", False, 0.0, fail)
    lines = [_refine(pts, centre, th, rho) for th, rho, _ in sides]
    corners = []
    for k in range(4):
        p = _intersect(lines[k], lines[(k + 1) % 4])
        if p is None:
            return StepResult("tray", False, 0.0, fail)
        corners.append(p)
    support = _support(pts, np.array(corners), centre)
    corners_a = np.array(corners) / scale
    why = _validate(corners_a, (w0, h0))
    if why is None and support < 0.2:
        why = "the tray's edges are too faint: more light, or a floor that differs from the walls"
    if why is not None:
        return StepResult("tray", False, round(support, 3), why if sides else fail,
                          {"corners": order_corners(corners_a).tolist()})
    return tray_result(corners_a, (w0, h0), support, "found the tray floor")


def tray_result(corners: np.ndarray, size: tuple[int, int], support: float = 1.0,
                advice: str = "tray corners set by hand") -> StepResult:
    c = order_corners(corners)
    hom, top = top_down(c)
    fit = TrayFit(c, hom, top, support)
    return StepResult("tray", True, round(support, 3), advice,
                      {"corners": c.tolist(), "homography": hom.tolist(), "top_size": top,
                       "fit": fit, "image_size": size})


def tray_from_user(corners: object, size: tuple[int, int]) -> StepResult:
    """The fallback when detection fails: four tapped points, checked like detected ones."""
    try:
        pts = np.asarray(corners, np.float64)
    except (TypeError, ValueError):
        return StepResult("tray", False, 0.0, "give four corners as [x, y] points")
    if pts.shape != (4, 2) or not np.all(np.isfinite(pts)):
        return StepResult("tray", False, 0.0, "give exactly four corners as [x, y] points")
    w, h = size
    if np.any(pts < 0) or np.any(pts[:, 0] > w) or np.any(pts[:, 1] > h):
        return StepResult("tray", False, 0.0, "every corner must lie inside the picture")
    why = _validate(pts, size)
    if why is not None:
        return StepResult("tray", False, 0.0, why)
    return tray_result(pts, size)


def floor_mask(corners: np.ndarray, size: tuple[int, int], inset: float = 0.04) -> np.ndarray:
    """The floor as a uint8 mask, shrunk a little so the walls' shading is left out."""
    w, h = size
    c = order_corners(corners)
    ctr = c.mean(axis=0)
    c = ctr + (c - ctr) * (1 - inset)
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, np.round(c).astype(np.int32), 1)
    return mask

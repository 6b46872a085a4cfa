"""Find the box lid's inner floor: four corners in the image and the top-down homography.

The floor ends where it meets the lid's walls, in a crease that runs straight along a whole
side. Next to it lie other long straight lines that are not the floor's edge: outward the top of
the wall, the printed band and the rim, the lid's outline and the table's planks; inward the
edge of the shadow a wall throws on the floor, a contact shadow along the crease, and printed
stripes or checks. So edge points vote for lines, and each side keeps the innermost line that

- is seen along most of the side, between its neighbouring sides (a die or a print stops short);
- keeps one direction of step along it, or else has plain floor on its inner side (a band of
  print meeting the floor flips from darker to lighter only on its outer side; a printed
  check flips on both);
- is a sharp step, not a soft penumbra;
- ends at its corners: a printed line runs on into the next printed square.

Everything outward loses to the floor edge by lying farther out. Which stretch of a line counts
depends on its neighbours, so the four sides are settled together, from the outside in.

Steps are measured in log brightness, so they mean the same under a dim or a bright lamp and on
a dark floor or a light one; colour edges (log colour ratios, blind to shading) fill in where
the floor meets print as bright as itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .result import StepResult

WORK = 640  # long side the search runs at; the px below are at this scale

# edge points
FINE, COARSE = 1.0, 2.4  # blur (px) of the edge search, and of the sharpness comparison
EDGE_MIN = 0.03  # log brightness per px below which a gradient is paper grain or sensor noise
CHROMA_MIN = 0.06  # the same for log colour ratios
CHROMA_DARK = 4.0  # grey levels added before colour ratios: in the dark they are mostly noise
BUSY = 0.25  # share of the picture's px on a brightness edge above which it is noise, not a scene
RADIAL_MIN = 0.3  # |cos| of an edge's normal to the ray from the centre; below: not a side

# lines
SIDE_WINDOW = 15  # degrees perspective may turn a side from square to the lid's main direction
VOTE_SPREAD = 8  # degrees an edge point's normal is trusted to (printed bands next to it bend it)
CANDIDATES = 16  # lines tried per side
STRONG = 0.5  # share of a side's most voted line's votes that bounds its neighbours at first
BAND_PX = 24.0  # px around a voted line within which its points are looked for at all
SNAP_PX, SNAP_DEG = 4.0, 3.0  # how far from a voted line the best-supported one is looked for
SNAPS = 2  # searches at most, each from the last one's line: a vote may be several degrees off
SNAP_STEP = 0.25  # degrees between the directions tried
NEAR_PX = 1.0  # px a point may lie off a line and still count as seen on it
NEAR_DEG = 20  # degrees a point's normal may differ from a line's and still count

# what makes a line the floor's edge
MARGIN = 0.05  # share of a side left out at each end: corners are where dice and shadows gather
COVER_MIN = 0.45  # share of a side along which its edge must be seen: a thin wall next to a band
# of two-tone print can hide the crease along half of it
HALF_MIN = 0.3  # the same on each half of the side: a line askew across an edge is seen near one
FLIP = 0.25  # share of a side seen stepping the other way above which the step flips along it
UNIFORM = 0.5  # inner side's spread below this share of the outer side's: the floor meets print
SOFT_RATIO = 1.6  # gradient at the fine / coarse blur below this: a step as wide as a penumbra,
SOFT_GRAD = 0.1  # and no steeper than this (log/px): a shadow's edge, not a crease
EXT, EXT_MIN = 0.2, 12.0  # how far past its corners a side is followed (share of it, px)
BEYOND_MAX = 0.45  # share of that stretch a floor edge may still be seen on: more is a print


@dataclass
class TrayFit:
    """Corners in image px ordered top-left, top-right, bottom-right, bottom-left."""

    corners: np.ndarray  # (4, 2) float
    homography: np.ndarray  # 3x3, image px -> top-down px
    size: tuple[int, int]  # (width, height) of the top-down rectangle
    support: float  # weakest side's share of its length along which its edge was seen


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


# --------------------------------------------------------------------------- edge points


@dataclass
class _Edges:
    """Edge points at the search scale; `theta` is the normal pointing away from the centre."""

    pts: np.ndarray  # (n, 2) sub-pixel positions
    theta: np.ndarray  # (n,) degrees, 0..360
    pol: np.ndarray  # (n,) +1 brighter outward, -1 darker outward, 0 a change of colour
    mag: np.ndarray  # (n,) log brightness per px
    ratio: np.ndarray  # (n,) gradient at the fine scale / at the coarse scale
    radial: np.ndarray  # (n,) bool: the normal runs along the ray from the centre, as a side's

    def take(self, m: np.ndarray) -> _Edges:
        return _Edges(self.pts[m], self.theta[m], self.pol[m], self.mag[m], self.ratio[m],
                      self.radial[m])

    def facing(self, theta: float, within: float) -> _Edges:
        """The points whose normal lies within `within` degrees of `theta`."""
        return self.take(np.abs((self.theta - theta + 180) % 360 - 180) <= within)


def _gradients(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3, scale=0.125),
            cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3, scale=0.125))


def _thin(mag: np.ndarray, vx: np.ndarray, vy: np.ndarray,
          minimum: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sub-pixel local maxima of `mag` across the edge direction (vx, vy): one point per px."""
    w = mag.shape[1]
    strong = mag >= minimum
    strong[:2], strong[-2:], strong[:, :2], strong[:, -2:] = False, False, False, False
    ys, xs = np.nonzero(strong)
    nx, ny = vx[ys, xs], vy[ys, xs]
    # the neighbour across the edge: 0 along x, 1 down-right, 2 along y, 3 down-left
    q = ((np.degrees(np.arctan2(ny, nx)) % 180 + 22.5) // 45).astype(np.intp) % 4
    step = np.array([[1, 0], [1, 1], [0, 1], [-1, 1]])[q]
    flat = mag.ravel()
    idx = ys * w + xs
    di = step[:, 1] * w + step[:, 0]
    mv, a, b = flat[idx], flat[idx - di], flat[idx + di]
    keep = (mv >= a) & (mv > b)
    xs, ys, nx, ny, step, mv, a, b = (v[keep] for v in (xs, ys, nx, ny, step, mv, a, b))
    den = a - 2 * mv + b
    off = np.clip(np.where(den < -1e-9, 0.5 * (a - b) / np.minimum(den, -1e-9), 0.0), -0.5, 0.5)
    nrm = np.stack([nx, ny], 1)
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True) + 1e-12
    return np.stack([xs, ys], 1) + step * off[:, None], nrm, mv


def _chroma(small: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strength and direction (unit x, y) of colour change, blind to shading.

    Log colour ratios do not change where only the light does (a shadow, a wall turned away
    from the lamp), but do where the floor meets printed art of another colour, even one as
    bright as the floor, which the brightness step cannot see.
    """
    lg = np.log(small.astype(np.float32) + CHROMA_DARK)
    jxx = jyy = jxy = 0.0
    for ch in (0, 2):
        c = cv2.GaussianBlur(lg[..., ch] - lg[..., 1], (0, 0), FINE)
        cx, cy = _gradients(c)
        jxx, jyy, jxy = jxx + cx * cx, jyy + cy * cy, jxy + cx * cy
    mag = np.sqrt(0.5 * (jxx + jyy + np.sqrt((jxx - jyy) ** 2 + 4 * jxy**2)))
    phi = 0.5 * np.arctan2(2 * jxy, jxx - jyy)
    return mag, np.cos(phi), np.sin(phi)


def _edge_points(g: np.ndarray, small: np.ndarray, centre: np.ndarray) -> _Edges:
    """Brightness edges (thin, sub-pixel) with their polarity, plus colour edges without one.

    Points whose normal runs across the ray from the centre cannot lie on a side seen from
    inside (dice, pips and flecks make most of them), so they are marked and do not vote.
    """
    gx, gy = _gradients(g)
    pts, nrm, mv = _thin(cv2.magnitude(gx, gy), gx, gy, EDGE_MIN)
    coarse = cv2.GaussianBlur(g, (0, 0), math.sqrt(COARSE**2 - FINE**2))
    cx, cy = _gradients(coarse)
    ip = np.round(pts).astype(np.intp)
    ratio = mv / (cv2.magnitude(cx, cy)[ip[:, 1], ip[:, 0]] + 1e-6)
    cmag, ux, uy = _chroma(small)
    cpts, cnrm, cmv = _thin(cmag, ux, uy, CHROMA_MIN)
    pts, nrm = np.vstack([pts, cpts]), np.vstack([nrm, cnrm])
    mv = np.concatenate([mv, cmv])
    ratio = np.concatenate([ratio, np.full(len(cpts), np.inf)])
    rel = pts - centre
    cos = (nrm * rel).sum(1) / (np.linalg.norm(rel, axis=1) + 1e-9)
    pol = np.where(cos > 0, 1, -1)
    nrm = nrm * pol[:, None]
    pol[len(pol) - len(cpts):] = 0
    theta = np.degrees(np.arctan2(nrm[:, 1], nrm[:, 0])) % 360
    return _Edges(pts, theta, pol, mv, ratio, np.abs(cos) >= RADIAL_MIN)


def _main_direction(e: _Edges) -> int:
    """The lid's orientation modulo 90 degrees: floor, walls, rim and outline all share it."""
    hist = np.bincount(np.round(e.theta).astype(int) % 90, weights=np.minimum(e.mag, 0.3),
                       minlength=90)
    hist = np.convolve(np.concatenate([hist[-3:], hist, hist[:3]]), [1, 2, 3, 2, 1], "valid")
    return int(np.argmax(hist))


def _vote(e: _Edges, centre: np.ndarray, reach: int) -> np.ndarray:
    """Hough votes over (outward normal in whole degrees, distance from the centre in px)."""
    rel = e.pts - centre
    th = (np.round(e.theta).astype(int)[:, None] + np.arange(-VOTE_SPREAD, VOTE_SPREAD + 1)) % 360
    t = np.radians(th)
    rho = np.round(rel[:, :1] * np.cos(t) + rel[:, 1:] * np.sin(t)).astype(int)
    ok = (rho > 0) & (rho <= reach)
    acc = np.bincount(th[ok] * (reach + 1) + rho[ok], minlength=360 * (reach + 1))
    return cv2.GaussianBlur(acc.reshape(360, reach + 1).astype(np.float32), (3, 3), 0)


def _peaks(acc: np.ndarray, ths: list[int],
           n: int = CANDIDATES) -> list[tuple[int, int, float]]:
    """The strongest separate lines within a side's window of directions: (theta, rho, votes)."""
    win = acc[ths]
    dil = cv2.dilate(win, np.ones((3, 3), np.uint8))
    cand = np.argwhere((win >= dil) & (win > 0))
    vals = win[cand[:, 0], cand[:, 1]]
    out: list[tuple[int, int, float]] = []
    for i in np.argsort(-vals):
        ti, r = (int(v) for v in cand[i])
        if any(abs(ti - a) <= 3 and abs(r - b) <= 1 for a, b, _ in out):
            continue
        out.append((ti, r, float(vals[i])))
        if len(out) >= n:
            break
    return [(ths[ti], r, v) for ti, r, v in out]


# --------------------------------------------------------------------------- lines

Line = tuple[np.ndarray, np.ndarray]  # (point, unit direction)


def _line(theta: float, rho: float, centre: np.ndarray) -> Line:
    t = math.radians(theta)
    n = np.array([math.cos(t), math.sin(t)])
    return centre + n * rho, np.array([-n[1], n[0]])


def _intersect(a: Line, b: Line) -> np.ndarray | None:
    (p, u), (q, v) = a, b
    det = v[0] * u[1] - u[0] * v[1]
    if abs(det) < 1e-6:
        return None
    d = q - p
    return p + (v[0] * d[1] - v[1] * d[0]) / det * u


def _fit(p: np.ndarray, robust: bool = False) -> Line:
    """Total least squares; `robust` down-weights outliers (dice, a stray print) as Huber."""
    if robust:
        vx, vy, x0, y0 = cv2.fitLine(p.astype(np.float32), cv2.DIST_HUBER, 0, 0.01,
                                     0.01).ravel()
        return np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)
    m = p.mean(axis=0)
    d = p - m
    sxx, syy, sxy = (d[:, 0] ** 2).sum(), (d[:, 1] ** 2).sum(), (d[:, 0] * d[:, 1]).sum()
    a = 0.5 * math.atan2(2 * sxy, sxx - syy)
    return m, np.array([math.cos(a), math.sin(a)])


def _snap(pts: np.ndarray, line: Line, centre: np.ndarray, deg: float, px: float) -> Line:
    """The line within `deg` degrees and `px` px of `line` that most of `pts` lie on.

    A least-squares fit from a rough start gets pulled by a neighbouring parallel edge or a
    print and tilts; searching direction and offset for the most points on the line does
    not, and a fit afterwards only polishes it.
    """
    n = _outward(line, centre)
    th0, rho0 = math.atan2(n[1], n[0]), float((line[0] - centre) @ n)
    t = th0 + np.radians(np.linspace(-deg, deg, round(2 * deg / SNAP_STEP) + 1))
    rel = pts - centre
    rho = rel[:, :1] * np.cos(t) + rel[:, 1:] * np.sin(t)  # (points, directions)
    nb = int(2 * px / 0.25) + 1
    b = np.round((rho - rho0) / 0.25).astype(np.intp) + nb // 2
    ok = (b >= 0) & (b < nb)
    hist = np.bincount((np.arange(len(t)) * nb + b)[ok], minlength=len(t) * nb)
    w = int(NEAR_PX / 0.25)
    counts = cv2.boxFilter(hist.reshape(len(t), nb).astype(np.float32), -1, (2 * w + 1, 1),
                           normalize=False, borderType=cv2.BORDER_CONSTANT)
    ti, bi = np.unravel_index(int(np.argmax(counts)), counts.shape)
    nn = np.array([math.cos(t[ti]), math.sin(t[ti])])
    return centre + nn * (rho0 + (bi - nb // 2) * 0.25), np.array([-nn[1], nn[0]])


def _close(a: Line, b: Line, centre: np.ndarray) -> bool:
    na, nb = _outward(a, centre), _outward(b, centre)
    return bool(na @ nb > math.cos(math.radians(0.2))
                and abs((a[0] - centre) @ na - (b[0] - centre) @ nb) < 0.5)


@dataclass
class _Candidate:
    start: Line  # as voted
    line: Line  # as fitted to the points along it
    votes: float = 0.0
    rho: float = 0.0  # distance from the centre at the middle of the side: smaller is further in
    cover: float = 0.0  # share of the side along which the line was seen
    pol: int = 0  # -1 darker outward, +1 lighter outward, 0 both (floor meets a print)
    soft: bool = False
    near: _Edges | None = None  # the side's edge points within BAND_PX of the voted line
    opp: float = 0.0  # share of the side seen stepping the other way
    halves: float = 0.0  # the smaller of the shares seen on either half of the side
    beyond: float = 0.0  # share of the line's continuation past the corners seen
    judged: bool = False


def _outward(line: Line, centre: np.ndarray) -> np.ndarray:
    p, u = line
    n = np.array([u[1], -u[0]])
    return n if (p - centre) @ n >= 0 else -n


def _span(line: Line, left: Line, right: Line) -> tuple[float, float] | None:
    """Where along `line` its neighbouring sides cross it, as (start, end) in px."""
    ends = []
    for nb in (left, right):
        q = _intersect(line, nb)
        if q is None:
            return None
        ends.append(float((q - line[0]) @ line[1]))
    s0, s1 = sorted(ends)
    return (s0, s1) if s1 - s0 >= 10 else None


def _spread(v: np.ndarray) -> float:
    """Mean distance from the median: robust to a die or two, yet sees a 60/40 checker."""
    return float(np.mean(np.abs(v - np.median(v))))


def _beyond(e: _Edges, line: Line, n: np.ndarray, th: float, span: tuple[float, float],
            shape: tuple[int, ...]) -> float:
    """Share of the line's continuation past the corners along which it is still seen.

    A floor edge ends at the corners, where the walls stand across it; a print's line runs
    on into the next printed square, with either step.
    """
    s0, s1 = span
    reach = max(EXT_MIN, EXT * (s1 - s0))
    gap = MARGIN * (s1 - s0)
    ts = np.concatenate([np.arange(s0 - reach, s0 - gap), np.arange(s1 + gap, s1 + reach)])
    q = line[0] + ts[:, None] * line[1]
    h, w = shape[:2]
    inside = (q[:, 0] >= 2) & (q[:, 0] <= w - 3) & (q[:, 1] >= 2) & (q[:, 1] <= h - 3)
    if inside.sum() < EXT_MIN / 2:
        return 0.0
    rel = e.pts - line[0]
    along = rel @ line[1]
    on = ((np.abs(rel @ n) <= NEAR_PX) & (e.pol != 0)
          & (np.abs((e.theta - th + 180) % 360 - 180) <= NEAR_DEG)
          & (((along >= s0 - reach) & (along <= s0 - gap))
             | ((along >= s1 + gap) & (along <= s1 + reach))))
    return min(1.0, len(np.unique(np.floor(along[on]))) / float(inside.sum()))


def _start_rho(c: _Candidate, centre: np.ndarray) -> float:
    return float((c.start[0] - centre) @ _outward(c.start, centre))


def _judge(c: _Candidate, e: _Edges, g: np.ndarray, centre: np.ndarray, left: Line,
           right: Line) -> None:
    """Fit the candidate to the points seen along it between its neighbours, and score it.

    Only the stretch between the neighbouring sides counts: a floor edge is as long as the
    floor, while a shadow's edge, a print or a die stops short of it.
    """
    c.cover, c.soft = 0.0, False
    line = c.start  # each round starts afresh, so a line cannot wander off over the rounds
    side = e
    if c.near is None:  # the points the searches from this vote can reach
        n = _outward(line, centre)
        c.near = side.take(np.abs((side.pts - line[0]) @ n) <= BAND_PX)
    e = c.near
    # settle the line: the votes give its direction to a few degrees only, so search for the
    # best-supported line near it, twice, then fit
    steps = ["snap"] * SNAPS + ["fit", "measure"]
    while steps:
        step = steps.pop(0)
        if step == "fit":  # all of the side's points near the line, not just near the vote
            e = side.take(np.abs((side.pts - line[0]) @ _outward(line, centre)) <= SNAP_PX + 1)
        span = _span(line, left, right)
        if span is None:
            return
        n = _outward(line, centre)
        th = math.degrees(math.atan2(n[1], n[0]))
        rel = e.pts - line[0]
        along, off = rel @ line[1], rel @ n
        lo, hi = span[0] + MARGIN * (span[1] - span[0]), span[1] - MARGIN * (span[1] - span[0])
        local = ((np.abs((e.theta - th + 180) % 360 - 180) <= NEAR_DEG) & (along >= lo)
                 & (along <= hi) & (np.abs(off) <= SNAP_PX) & (e.pol != 0))
        near = local & (np.abs(off) <= NEAR_PX)
        if near.sum() < 5:
            return
        if step == "snap":
            # one polarity only: a thin wall's two edges lie a pixel or two apart
            fit_pol = 1 if (near & (e.pol == 1)).sum() > (near & (e.pol == -1)).sum() else -1
            moved = _snap(e.pts[local & (e.pol == fit_pol)], line, centre, SNAP_DEG, SNAP_PX)
            if _close(moved, line, centre):  # settled: no more searching
                steps = [s for s in steps if s != "snap"]
            line = moved
        elif step == "fit":
            own = near & (e.pol == fit_pol)
            if own.sum() >= 5:
                line = _fit(e.pts[own])
        else:  # colour edges count where the floor meets print, not for the fit
            chroma = ((e.pol == 0) & (np.abs(off) <= NEAR_PX) & (along >= lo) & (along <= hi)
                      & (np.abs((e.theta - th + 180) % 360 - 180) <= NEAR_DEG))
            near = near | chroma
    c.line = line
    # which whole px along the side saw a darker step, a lighter one, a change of colour
    length = max(1, int(hi - lo))
    seen = np.zeros((3, length + 1), bool)
    seen[e.pol[near] + 1, np.clip(along[near] - lo, 0, length).astype(np.intp)] = True
    dark, colour, light = seen
    # colour counts for the step only where the brightness does not step the other way
    # (log ratios shift a little with brightness, so a print's step shows in colour too)
    masks = [dark | (colour & ~light), light | (colour & ~dark)]
    k = int(np.argmax([m.mean() for m in masks]))
    c.pol, c.cover = (-1, 1)[k], float(masks[k].mean())
    c.halves = float(min(masks[k][: length // 2].mean(), masks[k][length // 2:].mean()))
    # the other way, a little wider: a print's two kinds of edge need not be exactly in line
    other = local & (np.abs(off) <= 2 * NEAR_PX) & (e.pol == -c.pol)
    c.opp = len(np.unique(np.floor(along[other]))) / length
    if c.opp >= FLIP and seen.any(axis=0).mean() >= COVER_MIN:
        # the step flips along the line: a print on the floor does so on both of its
        # sides, a band of print meeting the floor only on the outer one
        ts = np.arange(lo, hi, 2.0)
        base = line[0] + ts[:, None] * line[1]

        def strip(off: float) -> np.ndarray:
            q = (base + off * n).astype(np.float32)
            return cv2.remap(g, q[:, :1], q[:, 1:], cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_REPLICATE)[:, 0]

        inner, outer = strip(-2.5) + strip(-3.5), strip(2.5) + strip(3.5)
        if _spread(inner) < UNIFORM * _spread(outer):
            both = seen.any(axis=0)
            c.cover, c.pol = float(both.mean()), 0
            c.halves = float(min(both[: length // 2].mean(), both[length // 2:].mean()))
        else:
            c.cover = 0.0
    # how far in: at the middle of the side, not at the foot of the centre, so that a line
    # askew to the edge does not pass for lying inside it
    c.rho = float((line[0] + 0.5 * (span[0] + span[1]) * line[1] - centre) @ n)
    c.beyond = 0.0
    if c.cover < COVER_MIN or c.halves < HALF_MIN:
        return  # not seen enough to be the floor's edge: the costlier tests can wait
    c.beyond = _beyond(e, line, n, th, span, g.shape)
    # a flipping line is only as sharp as its softer half: a shadow's edge plus grain is no crease
    groups = [near & (e.pol == s) for s in ((-1, 1) if c.pol == 0 else (c.pol,))]
    c.soft = any(_soft(float(np.median(e.ratio[m])), float(np.median(e.mag[m])))
                 for m in groups if m.sum() >= 0.25 * near.sum())


def _choose(cands: list[list[_Candidate]], sides: list[_Edges], g: np.ndarray,
            centre: np.ndarray) -> list[_Candidate] | None:
    """Per side the innermost line that is seen along the side, keeps its step and is sharp.

    Each side's length depends on which lines its neighbours are, so this works from the
    outside in: it starts from the outermost strong line of each side (the lid's outline or
    rim) and settles in a few rounds. Started from inside, a printed square whose four sides
    are all seen along their length would pass for the floor; from outside, a print's line
    is judged along the whole floor, where its step flips from square to square.
    """
    for cs in cands:
        cs.sort(key=lambda c: _start_rho(c, centre))
    chosen = [max((c for c in cs if c.votes >= STRONG * max(c.votes for c in cs)),
                  key=lambda c: _start_rho(c, centre)) for cs in cands]
    judged: list[tuple[int, int] | None] = [None] * 4
    for _ in range(4):
        lines = [c.line for c in chosen]
        new = []
        for k in range(4):
            key = (id(chosen[k - 1]), id(chosen[(k + 1) % 4]))
            if key == judged[k]:  # same neighbours as last round: same verdict
                new.append(chosen[k])
                continue
            judged[k] = key
            new.append(_innermost(cands[k], sides[k], g, centre, lines[k - 1],
                                  lines[(k + 1) % 4]))
        settled = all(a is b for a, b in zip(new, chosen, strict=True))
        chosen = new
        if settled:
            break
    if not all(_good(c) for c in chosen):
        return None
    return chosen


def _soft(ratio: float, grad: float) -> bool:
    """Shading, not a crease: a step as wide as a penumbra and gentle with it.

    A wide but steep step is a crease with a second step just beyond (a thin wall, then the
    band), which looks as wide to the two scales.
    """
    return ratio < SOFT_RATIO and grad < SOFT_GRAD


def _good(c: _Candidate) -> bool:
    return (c.cover >= COVER_MIN and c.halves >= HALF_MIN and not c.soft
            and c.beyond <= BEYOND_MAX)


def _innermost(cands: list[_Candidate], e: _Edges, g: np.ndarray, centre: np.ndarray,
               left: Line, right: Line) -> _Candidate:
    """The innermost good line of a side; while there is none, the best-seen one.

    Candidates come sorted from the inside out, and a fit moves a line by at most a few px,
    so the lines beyond the first good one need no judging. The best-seen line stands in
    while the neighbours are still wrong, to bound the side.
    """
    best = None
    for c in cands:
        if best is not None and _start_rho(c, centre) > best.rho + 2 * SNAP_PX:
            break
        # new neighbours change a side's length by a wall's width or so, not a line's cover
        # by half: a line seen that little last round is left out
        if not c.judged or c.cover >= 0.5 * COVER_MIN:
            _judge(c, e, g, centre, left, right)
            c.judged = True
        if _good(c) and (best is None or c.rho < best.rho):
            best = c
    return best or max(cands, key=lambda c: c.cover)


def _refine(gx: np.ndarray, gy: np.ndarray, c: _Candidate, left: Line, right: Line,
            centre: np.ndarray) -> Line:
    """The steepest point of the step across the line at every px, then a robust fit.

    The chosen line was fitted to the thinned edge points, which go missing where a die, a
    shadow or a bright stretch of print beside a thin wall hides the crease, and those
    stretches then hold the fit by a few points. Sampling the step itself all along the
    final side, with outliers down-weighted, rarely moves a line by a pixel, but it steadies
    such sides (on the synthetic scenes: 3 more of 310 within 1 %).
    """
    span = _span(c.line, left, right)
    if span is None:
        return c.line
    p0, u = c.line
    n = _outward(c.line, centre)
    s0, s1 = span
    ts = np.arange(s0 + MARGIN * (s1 - s0), s1 - MARGIN * (s1 - s0), 1.0)
    rs = np.arange(-3.0, 3.01, 0.25)
    base = p0 + ts[:, None] * u
    xs = (base[:, :1] + rs * n[0]).astype(np.float32)
    ys = (base[:, 1:] + rs * n[1]).astype(np.float32)
    dn = (cv2.remap(gx, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE) * n[0]
          + cv2.remap(gy, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE) * n[1])
    dn = np.abs(dn) if c.pol == 0 else dn * c.pol
    j = np.argmax(dn, axis=1)
    best = dn[np.arange(len(j)), j]
    ok = (j > 0) & (j < len(rs) - 1) & (best > 0.3 * np.median(best))
    if ok.sum() < 10:
        return c.line
    jj = j[ok]
    a, b, d = dn[ok, jj - 1], dn[ok, jj], dn[ok, jj + 1]
    den = a - 2 * b + d
    off = np.clip(np.where(den < -1e-9, 0.5 * (a - d) / np.minimum(den, -1e-9), 0.0), -0.5, 0.5)
    r = rs[jj] + off * (rs[1] - rs[0])
    return _fit(base[ok] + r[:, None] * n, robust=True)


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
    if frame is None or frame.ndim != 3 or frame.size == 0 or frame.shape[2] not in (3, 4):
        return StepResult("tray", False, 0.0, "no picture from the camera")
    frame = np.ascontiguousarray(frame[..., :3])
    fail = "no tray found: put the whole lid in the picture, or tap its four inner corners"
    h0, w0 = frame.shape[:2]
    scale = min(1.0, WORK / max(h0, w0))
    small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
        if scale < 1 else frame
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    g = cv2.GaussianBlur(np.log(grey + 4.0), (0, 0), FINE)
    h, w = g.shape
    centre = np.array([(w - 1) / 2, (h - 1) / 2])
    e = _edge_points(g, small, centre)
    if len(e.pts) < 20:
        return StepResult("tray", False, 0.0, fail)
    if np.count_nonzero(e.pol) > BUSY * h * w:
        return StepResult("tray", False, 0.0, "the picture is all noise: more light, or less "
                          "camera gain, then try again")
    radial = e.take(e.radial & (e.pol != 0))
    base = _main_direction(radial)
    acc = _vote(radial, centre, int(math.hypot(w, h) / 2) + 2)
    cands, sides = [], []
    for k in range(4):
        ths = [(base + 90 * k + d) % 360 for d in range(-SIDE_WINDOW, SIDE_WINDOW + 1)]
        cands.append([_Candidate(_line(th, rho, centre), _line(th, rho, centre), votes=v)
                      for th, rho, v in _peaks(acc, ths)])
        sides.append(e.facing(base + 90 * k, SIDE_WINDOW + NEAR_DEG))
    if any(not cs for cs in cands):
        return StepResult("tray", False, 0.0, fail)
    chosen = _choose(cands, sides, g, centre)
    if chosen is None:
        return StepResult("tray", False, 0.0, fail)
    gx, gy = _gradients(g)
    lines = [c.line for c in chosen]
    lines = [_refine(gx, gy, chosen[k], lines[k - 1], lines[(k + 1) % 4], centre)
             for k in range(4)]
    corners = [_intersect(lines[k], lines[(k + 1) % 4]) for k in range(4)]
    if any(p is None for p in corners):
        return StepResult("tray", False, 0.0, fail)
    support = min(c.cover for c in chosen)
    corners_a = np.array(corners) / scale
    why = _validate(corners_a, (w0, h0))
    if why is not None:
        return StepResult("tray", False, round(support, 3), why,
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

"""The dice reader under other cameras, lamps and paints: every labelled set, transformed.

Usage: .venv/bin/python bench/cameras.py [--data DIR] [--sets NAME,...] [--probes NAME,...]
       [--limit N] [--crops DIR]

Why: the reader is judged on photos it has never seen, taken by other cameras under other
lamps, of other makers' dice. `bench/vision.py` measures the sets as they are; this script
measures them as another camera would have taken them, from the same labels: closer (the
middle of each photo cut out and enlarged), turned a quarter, at twice, half and a third of
the resolution (a third once more saved as JPEG), tilted (a homography of a camera turned
about its centre), under a warm, cold or green cast, half or 1.7x the exposure, hazy, heavy
JPEG, blur and sensor noise, and with the dice's paints changed (red and blue swapped; every
hue turned 60 or 180 degrees). A probe that loses much against `plain` names a camera, a
lamp or a maker the reader is not ready for. Dice the transformed frame cuts are neither
required nor counted against the reader (a box mostly inside one is not an extra die). One
thread, frames at 1280 px on the long side before the transform.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vision.evaluate import iou, load_example, load_manifest, match  # noqa: E402

Box = list[float]
Probe = Callable[[np.ndarray, list[dict]], tuple[np.ndarray, list[dict], list[Box]]]


def _corners(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x0, y1], [x1, y1]], np.float64)


def _outline(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """Points on a die of unknown turn within its box: the sides' middles, which any turned
    square touches, and the corners drawn 30% of the way in. A homography takes a box's
    corners far wider than the die they hold (byler tilted 30 degrees: a tenth of the dice
    met their corner-mapped label below IoU 0.5)."""
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    inner = _corners(x0, y0, x1, y1) * 0.7 + np.array([cx, cy]) * 0.3
    return np.vstack([[[cx, y0], [x1, cy], [cx, y1], [x0, cy]], inner])


def _boxes_moved(labels: list[dict], move: Callable[[np.ndarray], np.ndarray], w: int, h: int,
                 points: Callable[..., np.ndarray] = _corners) -> tuple[list[dict], list[Box]]:
    """Labels whose box `move` maps inside a w x h frame (the box round the moved `points`
    of the old one), and the clipped boxes of those it takes (partly) outside: dice the new
    frame cuts."""
    kept, cut = [], []
    for d in labels:
        pts = move(points(*d["bbox"]))
        box = [float(pts[:, 0].min()), float(pts[:, 1].min()),
               float(pts[:, 0].max()), float(pts[:, 1].max())]
        if box[0] >= 2 and box[1] >= 2 and box[2] <= w - 2 and box[3] <= h - 2:
            kept.append(dict(d, bbox=box))
        elif box[2] > 0 and box[3] > 0 and box[0] < w and box[1] < h:
            cut.append([max(0.0, box[0]), max(0.0, box[1]), min(float(w), box[2]),
                        min(float(h), box[3])])
    return kept, cut


def zoom(z: float) -> Probe:
    """The middle 1/z of the frame enlarged back to its size: a camera z times closer."""
    def probe(img: np.ndarray, labels: list[dict]) -> tuple[np.ndarray, list[dict], list[Box]]:
        h, w = img.shape[:2]
        x0, y0 = (w - w / z) / 2, (h - h / z) / 2
        m = np.float32([[z, 0, -x0 * z], [0, z, -y0 * z]])
        out = cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_CUBIC,
                             borderMode=cv2.BORDER_REPLICATE)
        kept, cut = _boxes_moved(labels, lambda p: (p - [x0, y0]) * z, w, h)
        return out, kept, cut
    return probe


def scale(k: float) -> Probe:
    """The whole frame at k times the resolution."""
    def probe(img: np.ndarray, labels: list[dict]) -> tuple[np.ndarray, list[dict], list[Box]]:
        out = cv2.resize(img, None, fx=k, fy=k,
                         interpolation=cv2.INTER_CUBIC if k > 1 else cv2.INTER_AREA)
        h, w = out.shape[:2]
        kept, cut = _boxes_moved(labels, lambda p: p * k, w, h)
        return out, kept, cut
    return probe


def turn(img: np.ndarray, labels: list[dict]) -> tuple[np.ndarray, list[dict], list[Box]]:
    """A quarter turn clockwise: a portrait frame."""
    h = img.shape[0]
    out = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
    kept, cut = _boxes_moved(labels, lambda p: np.stack([h - p[:, 1], p[:, 0]], axis=1),
                             out.shape[1], out.shape[0])
    return out, kept, cut


def tilt(deg: float, axis: str) -> Probe:
    """The view of a camera turned `deg` about its x or y axis (a 57 degree lens), the middle
    of the frame kept in the middle. The dice are flat here, so their side faces do not
    grow as a real tilted camera's would: the probe tests foreshortening and perspective."""
    def probe(img: np.ndarray, labels: list[dict]) -> tuple[np.ndarray, list[dict], list[Box]]:
        h, w = img.shape[:2]
        f = 1.2 * max(w, h)
        k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
        t = math.radians(deg)
        c, s = math.cos(t), math.sin(t)
        r = (np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) if axis == "x"
             else np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]))
        m = k @ r @ np.linalg.inv(k)
        mid = m @ np.array([w / 2, h / 2, 1.0])
        m = np.array([[1, 0, w / 2 - mid[0] / mid[2]], [0, 1, h / 2 - mid[1] / mid[2]],
                      [0, 0, 1]]) @ m
        out = cv2.warpPerspective(img, m, (w, h), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE)
        kept, cut = _boxes_moved(
            labels, lambda p: cv2.perspectiveTransform(p[None], m)[0], w, h, _outline)
        return out, kept, cut
    return probe


def pixels(change: Callable[[np.ndarray], np.ndarray]) -> Probe:
    """A change of the pixels alone (lamp, exposure, compression, blur, noise)."""
    def probe(img: np.ndarray, labels: list[dict]) -> tuple[np.ndarray, list[dict], list[Box]]:
        return change(img), labels, []
    return probe


def _gain(g: tuple[float, float, float]) -> Callable[[np.ndarray], np.ndarray]:
    gains = np.array(g, np.float32)
    return lambda img: np.clip(img.astype(np.float32) * gains, 0, 255).astype(np.uint8)


def _jpeg(img: np.ndarray, quality: int = 25) -> np.ndarray:
    buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _saved(k: float, quality: int) -> Probe:
    """The frame at k times the resolution, saved as JPEG as a small camera would: the
    JPEG's halved chroma smears the colour of a small die's pips into its body (byler at a
    third of the size 97.8%; saved at quality 92, 95.3%; at 92 with full chroma, 97.6%)."""
    smaller = scale(k)

    def probe(img: np.ndarray, labels: list[dict]) -> tuple[np.ndarray, list[dict], list[Box]]:
        out, kept, cut = smaller(img, labels)
        return _jpeg(out, quality), kept, cut
    return probe


def _hazy(img: np.ndarray) -> np.ndarray:
    """A washed-out frame (a hazy lens, a lamp in the lens): contrast cut almost in half."""
    return np.clip(img.astype(np.float32) * 0.55 + 0.45 * 150, 0, 255).astype(np.uint8)


def _hue(deg: int) -> Callable[[np.ndarray], np.ndarray]:
    """Every colour's hue turned by `deg` (saturation and value kept): the same dice as if a
    maker had painted them otherwise (a yellow die with black pips turned half round is a
    violet one), a guess at the paints the photo sets do not show."""
    shift = round(deg * 256 / 360)

    def change(img: np.ndarray) -> np.ndarray:
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV_FULL)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + shift) % 256).astype(np.uint8)
        return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR_FULL)
    return change


def _noise(img: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.clip(img.astype(np.float32) + rng.normal(0, 10, img.shape), 0, 255
                   ).astype(np.uint8)


PROBES: dict[str, Probe] = {
    "plain": pixels(lambda img: img),
    "closer-2x": zoom(2.0),
    "closer-3x": zoom(3.0),
    "closer-4x": zoom(4.0),
    "closer-6x": zoom(6.0),  # dice of a fifth to a third of the frame: the quarter look
    "turned": turn,
    "half-size": scale(0.5),
    "third-size": scale(1 / 3),  # byler's dice 20-36 px: a camera far above a big tray
    "third-jpeg": _saved(1 / 3, 92),
    "double-size": scale(2.0),
    "tilt-x-20": tilt(20, "x"),
    "tilt-y-30": tilt(30, "y"),
    "warm-lamp": pixels(_gain((0.7, 0.95, 1.15))),
    "cold-lamp": pixels(_gain((1.15, 1.0, 0.8))),
    "green-cast": pixels(_gain((0.85, 1.2, 0.8))),  # a fluorescent tube
    "dark": pixels(_gain((0.45, 0.45, 0.45))),
    "bright": pixels(_gain((1.7, 1.7, 1.7))),
    "hazy": pixels(_hazy),
    "jpeg-25": pixels(_jpeg),
    "blur": pixels(lambda img: cv2.GaussianBlur(img, (0, 0), 1.5)),
    "noise": pixels(_noise),
    # Other makers' paints: red and blue swapped (smoky dice with blue pips), hues turned.
    "paint-swap": pixels(lambda img: np.ascontiguousarray(img[:, :, ::-1])),
    "paint-hue60": pixels(_hue(60)),
    "paint-hue180": pixels(_hue(180)),
}


def _on_cut_die(box: Box, cut: list[Box]) -> bool:
    area = max((box[2] - box[0]) * (box[3] - box[1]), 1e-9)
    for c in cut:
        inter = (max(0.0, min(box[2], c[2]) - max(box[0], c[0]))
                 * max(0.0, min(box[3], c[3]) - max(box[1], c[1])))
        if iou(box, c) >= 0.2 or inter / area >= 0.5:
            return True
    return False


def score(preds: list[dict], labels: list[dict], cut: list[Box]
          ) -> tuple[int, int, int, int, int]:
    """(labels, counted predictions, matched, right values, confident errors) for one frame.
    A prediction matched to no label but lying on a die the frame cuts is not counted; an
    invented die read with confidence >= 0.9 is a confident error, as in `vegas-table eval`."""
    pairs, extra, _ = match(preds, labels)
    extra = [p for p in extra if not _on_cut_die(preds[p]["bbox"], cut)]
    right = sum(preds[p]["value"] == labels[q].get("value") for p, q in pairs)
    wrong = sum(preds[p]["value"] != labels[q].get("value") and preds[p]["confidence"] >= 0.9
                for p, q in pairs) + sum(preds[p]["confidence"] >= 0.9 for p in extra)
    return len(labels), len(pairs) + len(extra), len(pairs), right, wrong


def _write_errors(folder: Path, stem: str, frame: np.ndarray, preds: list[dict],
                  labels: list[dict], cut: list[Box]) -> None:
    """Crops of the confident errors in one frame, named by what was read and what is so."""
    pairs, extra, _ = match(preds, labels)
    bad = [(p, f"label{labels[q].get('value')}") for p, q in pairs
           if preds[p]["value"] != labels[q].get("value") and preds[p]["confidence"] >= 0.9]
    bad += [(p, "nodie") for p in extra
            if preds[p]["confidence"] >= 0.9 and not _on_cut_die(preds[p]["bbox"], cut)]
    for p, truth in bad:
        x0, y0, x1, y1 = preds[p]["bbox"]
        pad = 0.5 * max(x1 - x0, y1 - y0)
        h, w = frame.shape[:2]
        crop = frame[max(0, int(y0 - pad)):min(h, int(y1 + pad)),
                     max(0, int(x0 - pad)):min(w, int(x1 + pad))]
        folder.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(folder / f"{stem}_read{preds[p]['value']}_{truth}_"
                                 f"{preds[p]['confidence']:.3f}.png"), crop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"),
                        help="folder holding realdice/ and renders/")
    parser.add_argument("--sets", help="comma-separated set names (default: all)")
    parser.add_argument("--probes", default=",".join(PROBES),
                        help=f"comma-separated, of: {', '.join(PROBES)}")
    parser.add_argument("--limit", type=int, default=None, help="first N images per set")
    parser.add_argument("--crops", type=Path,
                        help="write each confident error, as the probe showed it, here")
    args = parser.parse_args(argv)
    probes = [p.strip() for p in args.probes.split(",") if p.strip()]
    unknown = [p for p in probes if p not in PROBES]
    if unknown:
        parser.error(f"unknown probe {unknown[0]!r}; choose from {', '.join(PROBES)}")
    data = Path(args.data)
    sets = [sub for group in ("realdice", "renders") if (data / group).is_dir()
            for sub in sorted((data / group).iterdir()) if (sub / "manifest.jsonl").is_file()]
    if args.sets:
        wanted = {s.strip() for s in args.sets.split(",")}
        sets = [s for s in sets if s.name in wanted]
    if not sets:
        print(f"no labelled sets under {data}: nothing to measure")
        return 1
    from vision.reader import DiceReader

    cv2.setNumThreads(1)
    reader = DiceReader()
    print(f"{'set':14s} {'probe':12s} {'dice':>5s} {'recall':>7s} {'precision':>9s} "
          f"{'value acc':>9s} {'conf-wrong':>10s}")
    for folder in sets:
        entries = load_manifest(folder)[: args.limit]
        frames = [load_example(e, 1280) for e in entries]
        for name in probes:
            total = np.zeros(5, np.int64)
            for (img, labels), entry in zip(frames, entries, strict=True):
                out, kept, cut = PROBES[name](img, labels)
                preds = [d.to_dict() for d in reader.read(out)]
                total += score(preds, kept, cut)
                if args.crops:
                    _write_errors(args.crops / folder.name / name, Path(entry["image"]).stem,
                                  out, preds, kept, cut)
            n, p, m, right, wrong = (int(v) for v in total)
            print(f"{folder.name:14s} {name:12s} {n:5d} {100 * m / max(n, 1):6.1f}% "
                  f"{100 * m / max(p, 1):8.1f}% {100 * right / max(m, 1):8.1f}% {wrong:10d}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

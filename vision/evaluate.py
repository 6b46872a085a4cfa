"""Measuring harness for the dice reader: how often it finds, miscounts or invents dice, and how
fast it is, on labelled image sets.

The reader is judged on what the game needs: every die found (recall), nothing invented
(precision), the right pips (value accuracy), whole rolls read without a single slip (exact
images), and above all no confident mistakes, since the tracker trusts confident reads and a
confidently wrong die silently moves money. Failures can be written out as crops so a developer
looks at pixels instead of numbers.

Usage: .venv/bin/python -m vision.evaluate FOLDER... [--reader pkg.module:callable]
       [--max-long-side 1280] [--crops DIR] [--limit N] [--confident 0.9]

A data set is a folder with `manifest.jsonl` (see `../shared/data/*/README.md`). Two quirks of
the shared sets are handled here so every reader is measured the same way:
- `stretch.jsonl` (rune55-trays): the photos were squashed to 640×640 from 4:3; each line is
  `{"image": ..., "compressed_axis": "x"|"y", "median_box_w_over_h": r,
  "restore_size": [width, height]}` and the image is resized to `restore_size` before reading,
  its label boxes scaled with it, so the reader sees round dice as on the real table.
- renders label a cocked die (top face tilted over 12°) with value null: the right read is
  "no value" (None), so a reader that guesses pips on it is wrong.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import numbers
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .boxes import iou

Reader = Callable[[np.ndarray], list[dict]]

MANIFEST = "manifest.jsonl"
STRETCH = "stretch.jsonl"
CROP_PAD = 0.30
# A prediction on no whole die that overlaps a cut one this much reads the part in view.
CUT_OVERLAP = 0.3
# Per-die label fields that are image coordinates and must follow every resize.
_BOX_KEYS = ("bbox", "bbox_tight")
_POINT_KEYS = ("center", "top_center")
_MISSING = object()


class ManifestError(ValueError):
    """A data set file is malformed; the message names the file (and line) to fix."""


# ---------------------------------------------------------------------------- loading


def load_manifest(folder: str | Path) -> list[dict]:
    """Read a data set eagerly so a broken line fails before minutes of reading, not after.

    Entries keep every manifest field; `image` becomes an absolute path, `name` keeps the
    manifest's relative path (stable across machines, used in reports), and `restore_size`
    ([width, height]) is added when the set has a `stretch.jsonl`.
    """
    folder = Path(folder).absolute()
    path = folder / MANIFEST
    if not path.is_file():
        raise ManifestError(f"{path}: no such manifest")
    stretch = _load_stretch(folder / STRETCH) if (folder / STRETCH).is_file() else None

    entries: list[dict] = []
    for where, raw in _jsonl(path):
        entry = _check_entry(raw, folder, where)
        if stretch is not None:
            if entry["name"] not in stretch:
                raise ManifestError(
                    f"{folder / STRETCH}: no restore_size for {entry['name']!r} "
                    f"(listed in {where})"
                )
            entry["restore_size"] = list(stretch[entry["name"]])
        entries.append(entry)
    return entries


def _jsonl(path: Path) -> Iterator[tuple[str, Any]]:
    """Each non-blank line decoded, with "file, line N" for error messages."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}, line {lineno}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ManifestError(f"{where}: not valid JSON ({exc.msg})") from None


def _check_entry(raw: Any, folder: Path, where: str) -> dict:
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    name = raw.get("image")
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{where}: 'image' must be a non-empty string")
    image = folder / name
    if not image.is_file():
        raise ManifestError(f"{where}: image {name!r} not found ({image})")
    for key in ("width", "height"):
        if not _is_int(raw.get(key)) or raw[key] <= 0:
            raise ManifestError(f"{where}: {key!r} must be a positive integer")
    dice = raw.get("dice")
    if not isinstance(dice, list):
        raise ManifestError(f"{where}: 'dice' must be a list")
    checked = []
    for i, die in enumerate(dice):
        if not isinstance(die, dict):
            raise ManifestError(f"{where}: die {i} must be a JSON object")
        problem = (_box_problem(die.get("bbox")) or _value_problem(die.get("value", _MISSING))
                   or _flag_problem(die))
        if problem:
            raise ManifestError(f"{where}: die {i}: {problem}")
        checked.append(dict(die))
    return {**raw, "image": str(image), "name": name, "dice": checked}


def _flag_problem(die: dict) -> str | None:
    """A die's yes/no fields must be JSON booleans: a "cut" of "yes" or 1, taken as not
    cut, would score a die the reader rightly skips as a miss, and a "big" of 1 would
    leave the Biggy flag unscored, both without a word."""
    for key in ("cut", "big", "cocked"):
        if key in die and die[key] is not None and not isinstance(die[key], bool):
            return f"{key!r} must be true or false, got {die[key]!r}"
    return None


def _load_stretch(path: Path) -> dict[str, tuple[int, int]]:
    sizes: dict[str, tuple[int, int]] = {}
    for where, raw in _jsonl(path):
        size = raw.get("restore_size") if isinstance(raw, dict) else None
        if (
            not isinstance(size, list)
            or not isinstance(raw.get("image"), str)
            or len(size) != 2
            or not all(_is_int(v) and v > 0 for v in size)
        ):
            raise ManifestError(
                f"{where}: expected {{'image': str, 'restore_size': [width, height]}}"
            )
        sizes[raw["image"]] = (int(size[0]), int(size[1]))
    return sizes


def load_example(entry: dict, max_long_side: int | None = None) -> tuple[np.ndarray, list[dict]]:
    """Give the image exactly as the reader will see it and the labels in its pixel frame.

    Undoing the squash and downscaling both happen here, once, so labels and pixels cannot
    drift apart. Coordinates are pixel-edge based (a box [0, 0, W, H] covers the whole image),
    which is the convention under which cv2.resize is a pure scale.
    """
    image = cv2.imread(entry["image"], cv2.IMREAD_COLOR)
    if image is None:
        raise ManifestError(f"{entry['image']}: cannot be decoded as an image")
    h, w = image.shape[:2]
    if (w, h) != (entry["width"], entry["height"]):
        raise ManifestError(
            f"{entry['image']}: is {w}×{h} but the manifest says "
            f"{entry['width']}×{entry['height']}; its labels would be misplaced"
        )
    sx = sy = 1.0
    restore = entry.get("restore_size")
    if restore and tuple(restore) != (w, h):
        rw, rh = int(restore[0]), int(restore[1])
        grows = rw > w or rh > h
        image = cv2.resize(
            image, (rw, rh), interpolation=cv2.INTER_LINEAR if grows else cv2.INTER_AREA
        )
        sx, sy = rw / w, rh / h
    if max_long_side is not None:
        if not _is_int(max_long_side) or max_long_side <= 0:
            raise ValueError(f"max_long_side must be a positive integer, not {max_long_side!r}")
        h2, w2 = image.shape[:2]
        if max(h2, w2) > max_long_side:
            f = max_long_side / max(h2, w2)
            nw, nh = max(1, round(w2 * f)), max(1, round(h2 * f))
            image = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
            sx, sy = sx * nw / w2, sy * nh / h2
    labels = [_scale_die(d, sx, sy) for d in entry["dice"]]
    return image, labels


def _scale_die(die: dict, sx: float, sy: float) -> dict:
    out = dict(die)
    if sx == 1.0 and sy == 1.0:
        return out
    for key in _BOX_KEYS:
        box = die.get(key)
        if isinstance(box, list) and len(box) == 4:
            out[key] = [box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy]
    for key in _POINT_KEYS:
        pt = die.get(key)
        if isinstance(pt, list) and len(pt) == 2:
            out[key] = [pt[0] * sx, pt[1] * sy]
    return out


# ---------------------------------------------------------------------------- matching


def match(
    preds: list[dict], labels: list[dict], min_iou: float = 0.5
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pair predictions with labels one to one, best overlap first.

    Greedy is enough here because dice do not overlap from above; ties break by index so
    reruns give identical reports. Returns (pairs as (pred, label), unmatched preds,
    unmatched labels), each sorted.
    """
    candidates = []
    for p, pred in enumerate(preds):
        for q, label in enumerate(labels):
            score = iou(pred["bbox"], label["bbox"])
            if score >= min_iou and score > 0:
                candidates.append((-score, p, q))
    candidates.sort()
    used_p: set[int] = set()
    used_q: set[int] = set()
    pairs = []
    for _, p, q in candidates:
        if p in used_p or q in used_q:
            continue
        used_p.add(p)
        used_q.add(q)
        pairs.append((p, q))
    pairs.sort(key=lambda pq: pq[1])
    return (
        pairs,
        [p for p in range(len(preds)) if p not in used_p],
        [q for q in range(len(labels)) if q not in used_q],
    )


def _without_cut(labels: list[dict], preds: list[dict], min_iou: float
                 ) -> tuple[list[dict], list[dict]]:
    """The labels and predictions left once the dice cut by the frame edge are set aside.

    A cut die is to be skipped (issue 3), so it is neither a miss nor, if a reader reports it
    anyway, an invention. A prediction is set aside when it is that cut die's best match, or
    when it matches no whole die and still overlaps a cut one (a read of the part in view).
    A prediction that is a whole die's match stays, however much it overlaps a cut
    neighbour: dice touching a cut one are boxed as closely as any.
    """
    cut = [q for q, d in enumerate(labels) if d.get("cut") is True]
    if not cut:
        return labels, preds
    pairs, extra, _ = match(preds, labels, min_iou)
    on_cut = {p for p, q in pairs if q in cut}
    on_cut |= {p for p in extra if any(iou(preds[p]["bbox"], labels[q]["bbox"]) >= CUT_OVERLAP
                                        for q in cut)}
    return ([d for d in labels if d.get("cut") is not True],
            [pred for p, pred in enumerate(preds) if p not in on_cut])


# ---------------------------------------------------------------------------- evaluation


@dataclass
class Failure:
    """One die to look at: enough to find it in the image and to group failures by cause."""

    kind: str  # "missed" (label not found), "extra" (false detection), "wrong" (value),
    # "colour" (matched, its colour misnamed) or "big" (matched, its Biggy flag wrong)
    image: str  # manifest-relative image name
    bbox: list[float]  # in the evaluated (restored / scaled) image's pixels
    label_value: int | None = None
    pred_value: int | None = None
    confidence: float | None = None
    iou: float | None = None
    label: dict | None = None  # full label (colour, cocked, glare, ... when the set has them)
    pred: dict | None = None
    crop: str | None = None


@dataclass
class SetReport:
    """One reader on one data set; ratios are None when their denominator is zero."""

    name: str
    images: int
    labels: int
    predictions: int
    matched: int
    recall: float | None
    precision: float | None
    value_accuracy: float | None
    exact_images: int
    exact_images_share: float | None
    confident_wrong: int
    ms_per_image: float | None
    ms_p95: float | None
    wrong_values: int = 0
    # reports at or above `confident`, matched or not: what the certain-only claim is over
    confident_reads: int = 0
    mean_iou: float | None = None
    colour_accuracy: float | None = None  # over matched dice whose label names a colour
    big_accuracy: float | None = None  # over matched dice whose label says big or not
    confident: float = 0.9
    max_long_side: int | None = None
    folder: str = ""
    confusion: dict[tuple[int | None, int | None], int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)

    @property
    def missed(self) -> int:
        return self.labels - self.matched

    @property
    def extra(self) -> int:
        return self.predictions - self.matched

    @property
    def confident_wrong_per_1000(self) -> float | None:
        """Issue 3's calibration claim (at most 1 in 1,000 certain reads wrong) as a rate:
        a count of confident errors means little without the number of certain reads."""
        if not self.confident_reads:
            return None
        return 1000 * self.confident_wrong / self.confident_reads


def evaluate(
    folder: str | Path,
    reader: Reader,
    max_long_side: int | None = None,
    crops_dir: str | Path | None = None,
    limit: int | None = None,
    confident: float = 0.9,
    min_iou: float = 0.5,
    only: Callable[[dict], bool] | None = None,
) -> SetReport:
    """Run `reader` over one data set and score it against the labels.

    Only the reader call is timed: decoding and resizing are the harness's cost, not the
    reader's. With `crops_dir` the reader gets a copy, so a reader that draws on its input
    cannot spoil the failure crops.
    """
    folder = Path(folder)
    entries = load_manifest(folder)
    if only is not None:
        entries = [e for e in entries if only(e)]  # e.g. the images a model never trained on
    if limit is not None:
        entries = entries[: max(0, limit)]
    crops = Path(crops_dir) if crops_dir is not None else None
    if crops is not None:
        crops.mkdir(parents=True, exist_ok=True)

    n_labels = n_preds = n_matched = n_wrong = n_exact = n_confident_wrong = n_sure = 0
    colour_seen = colour_right = big_seen = big_right = 0
    ious: list[float] = []
    times_ms: list[float] = []
    confusion: Counter[tuple[int | None, int | None]] = Counter()
    failures: list[Failure] = []

    for entry in entries:
        image, labels = load_example(entry, max_long_side)
        given = image.copy() if crops is not None else image
        t0 = time.perf_counter()
        raw = reader(given)
        times_ms.append((time.perf_counter() - t0) * 1000.0)
        preds = _check_predictions(raw, entry["name"])

        labels, preds = _without_cut(labels, preds, min_iou)
        pairs, extra, missed = match(preds, labels, min_iou)
        n_labels += len(labels)
        n_preds += len(preds)
        n_sure += sum(pred["confidence"] >= confident for pred in preds)
        n_matched += len(pairs)
        all_right = True
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(entry["name"]).stem)

        for p, q in pairs:
            pred, label = preds[p], labels[q]
            overlap = iou(pred["bbox"], label["bbox"])
            ious.append(overlap)
            lv, pv = label.get("value"), pred["value"]
            confusion[(lv, pv)] += 1
            if label.get("colour") is not None:
                colour_seen += 1
                if pred.get("colour") == label["colour"]:
                    colour_right += 1
                else:
                    # A die given to the wrong player is as costly as a wrong value, and
                    # is found only by looking at it.
                    name = (f"colour_{label['colour']}_as_{pred.get('colour')}_{stem}_d{q}"
                            f"{_asked(pred, confident)}.png")
                    failures.append(_slip("colour", name, crops, image, entry["name"], label,
                                          pred, overlap))
            if isinstance(label.get("big"), bool):
                big_seen += 1
                if bool(pred.get("big")) == label["big"]:
                    big_right += 1
                else:
                    # Royale counts a Biggy twice: a flag the wrong way miscounts a casino.
                    said, read = ("big", "plain") if label["big"] else ("plain", "big")
                    name = f"big_{said}_as_{read}_{stem}_d{q}{_asked(pred, confident)}.png"
                    failures.append(_slip("big", name, crops, image, entry["name"], label,
                                          pred, overlap))
            if pv == lv:
                continue
            all_right = False
            n_wrong += 1
            if pred["confidence"] >= confident:
                n_confident_wrong += 1
            name = f"wrong_{_v(lv)}_as_{_v(pv)}_{stem}_d{q}{_asked(pred, confident)}.png"
            failures.append(_slip("wrong", name, crops, image, entry["name"], label, pred,
                                  overlap))
        for p in extra:
            pred = preds[p]
            if pred["confidence"] >= confident:
                n_confident_wrong += 1
            crop = _write_crop(crops, image, pred["bbox"],
                               f"extra_{stem}_p{p}{_asked(pred, confident)}.png")
            failures.append(
                Failure(
                    kind="extra", image=entry["name"], bbox=list(pred["bbox"]),
                    pred_value=pred["value"], confidence=pred["confidence"], pred=pred,
                    crop=crop,
                )
            )
        for q in missed:
            label = labels[q]
            crop = _write_crop(crops, image, label["bbox"], f"missed_{stem}_d{q}.png")
            failures.append(
                Failure(
                    kind="missed", image=entry["name"], bbox=list(label["bbox"]),
                    label_value=label.get("value"), label=label, crop=crop,
                )
            )
        if all_right and not extra and not missed:
            n_exact += 1

    n_images = len(entries)
    return SetReport(
        name=folder.name,
        images=n_images,
        labels=n_labels,
        predictions=n_preds,
        matched=n_matched,
        recall=_ratio(n_matched, n_labels),
        precision=_ratio(n_matched, n_preds),
        value_accuracy=_ratio(n_matched - n_wrong, n_matched),
        exact_images=n_exact,
        exact_images_share=_ratio(n_exact, n_images),
        confident_wrong=n_confident_wrong,
        confident_reads=n_sure,
        ms_per_image=float(np.mean(times_ms)) if times_ms else None,
        ms_p95=float(np.percentile(times_ms, 95)) if times_ms else None,
        wrong_values=n_wrong,
        mean_iou=float(np.mean(ious)) if ious else None,
        colour_accuracy=_ratio(colour_right, colour_seen),
        big_accuracy=_ratio(big_right, big_seen),
        confident=confident,
        max_long_side=max_long_side,
        folder=str(folder.absolute()),
        confusion=dict(sorted(confusion.items(), key=lambda kv: (_v(kv[0][0]), _v(kv[0][1])))),
        failures=failures,
    )


def _check_predictions(raw: Any, image_name: str) -> list[dict]:
    """Reject malformed reader output loudly: a silently skipped die would look like a miss."""
    where = f"reader output for {image_name}"
    if isinstance(raw, Mapping) or not isinstance(raw, Sequence):
        raise ValueError(f"{where}: expected a list of dice, got {type(raw).__name__}")
    preds = []
    for i, pred in enumerate(raw):
        if not isinstance(pred, Mapping):
            raise ValueError(f"{where}, die {i}: expected a dict, got {type(pred).__name__}")
        problem = _box_problem(pred.get("bbox")) or _value_problem(pred.get("value", _MISSING))
        conf = pred.get("confidence")
        if not problem and (
            not isinstance(conf, numbers.Real)
            or isinstance(conf, bool)
            or not 0.0 <= float(conf) <= 1.0
        ):
            problem = f"'confidence' must be a number in [0, 1], not {conf!r}"
        if problem:
            raise ValueError(f"{where}, die {i}: {problem}")
        value = pred["value"]
        preds.append(
            {
                **pred,
                "bbox": [float(v) for v in np.asarray(pred["bbox"]).tolist()],
                "value": None if value is None else int(value),
                "confidence": float(conf),
            }
        )
    return preds


def _slip(kind: str, name: str, crops: Path | None, image: np.ndarray, where: str,
          label: dict, pred: dict, overlap: float) -> Failure:
    """A matched die to look at (a wrong value, colour or Biggy flag): its record, and its
    crop written as `name`, so every kind of slip is kept and named the same way."""
    return Failure(
        kind=kind, image=where, bbox=list(label["bbox"]), label_value=label.get("value"),
        pred_value=pred["value"], confidence=pred["confidence"], iou=overlap, label=label,
        pred=pred, crop=_write_crop(crops, image, label["bbox"], name),
    )


def _asked(pred: dict, confident: float) -> str:
    """The file-name tail of a die the table was asked about: why the reader doubted it
    (`DieRead.doubts`), as "_lean-small"; empty for a certain read or one without doubts."""
    doubts = pred.get("doubts")
    if pred["confidence"] >= confident or not isinstance(doubts, (list, tuple)) or not doubts:
        return ""
    codes = [re.sub(r"[^A-Za-z0-9]+", "", str(d)) for d in doubts]
    return "".join(f"{'-' if i else '_'}{c}" for i, c in enumerate(c for c in codes if c))


def _write_crop(
    crops: Path | None, image: np.ndarray, box: Sequence[float], filename: str
) -> str | None:
    if crops is None:
        return None
    h, w = image.shape[:2]
    pw, ph = (box[2] - box[0]) * CROP_PAD, (box[3] - box[1]) * CROP_PAD
    x0, y0 = max(0, math.floor(box[0] - pw)), max(0, math.floor(box[1] - ph))
    x1, y1 = min(w, math.ceil(box[2] + pw)), min(h, math.ceil(box[3] + ph))
    if x1 <= x0 or y1 <= y0:
        return None  # the box lies outside the image: nothing to show
    path = crops / filename
    if not cv2.imwrite(str(path), image[y0:y1, x0:x1]):
        raise OSError(f"{path}: could not write crop")
    return str(path)


# ---------------------------------------------------------------------------- helpers


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _box_problem(box: Any) -> str | None:
    if isinstance(box, np.ndarray):
        box = box.tolist()
    if (
        not isinstance(box, Sequence)
        or isinstance(box, str)
        or len(box) != 4
        or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in box)
        or not all(math.isfinite(v) for v in box)
    ):
        return f"'bbox' must be [x0, y0, x1, y1] of finite numbers, not {box!r}"
    if box[2] <= box[0] or box[3] <= box[1]:
        return f"'bbox' {list(box)} is empty (needs x1 > x0 and y1 > y0)"
    return None


def _value_problem(value: Any) -> str | None:
    if value is _MISSING:
        return "'value' is missing (use null for a die without a readable value)"
    if not (value is None or (_is_int(value) and 1 <= value <= 6)):
        return f"'value' must be 1-6 or null, not {value!r}"
    return None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _v(value: int | None) -> str:
    return "none" if value is None else str(value)


# ---------------------------------------------------------------------------- table


_COLUMNS = [
    # header, formatter; percentages carry the counts they rest on elsewhere in the row
    ("set", lambda r: r.name),
    ("images", lambda r: str(r.images)),
    ("dice", lambda r: str(r.labels)),
    ("preds", lambda r: str(r.predictions)),
    ("recall", lambda r: _pct(r.recall)),
    ("precision", lambda r: _pct(r.precision)),
    ("value acc", lambda r: _pct(r.value_accuracy)),
    ("exact img", lambda r: _pct(r.exact_images_share)),
    ("conf-wrong", lambda r: str(r.confident_wrong)),
    ("sure", lambda r: str(r.confident_reads)),
    ("wrong/1k sure", lambda r: "-" if r.confident_wrong_per_1000 is None
     else f"{r.confident_wrong_per_1000:.1f}"),
    ("colour acc", lambda r: _pct(r.colour_accuracy)),
    ("big acc", lambda r: _pct(r.big_accuracy)),
    ("IoU", lambda r: "-" if r.mean_iou is None else f"{r.mean_iou:.2f}"),
    ("ms/img", lambda r: _ms(r.ms_per_image)),
    ("ms p95", lambda r: _ms(r.ms_p95)),
]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def format_table(reports: list[SetReport]) -> str:
    """One aligned plain-text table, so runs can be pasted into issues and diffed."""
    rows = [[h for h, _ in _COLUMNS]] + [[fmt(r) for _, fmt in _COLUMNS] for r in reports]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ---------------------------------------------------------------------------- command line


def _empty_reader(image: np.ndarray) -> list[dict]:
    return []


def _load_reader(spec: str) -> Reader:
    module, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"--reader {spec!r}: expected 'package.module:callable'")
    obj = getattr(importlib.import_module(module), attr)
    if not callable(obj):
        raise SystemExit(f"--reader {spec!r}: not callable")
    return obj


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vision.evaluate", description="Score a dice reader on labelled sets."
    )
    parser.add_argument("folders", nargs="+", help="data set folders with manifest.jsonl")
    parser.add_argument(
        "--reader", help="package.module:callable (default: a reader that sees nothing)"
    )
    parser.add_argument("--max-long-side", type=int, default=None)
    parser.add_argument("--crops", help="write failure crops to CROPS/<set name>/")
    parser.add_argument("--limit", type=int, default=None, help="first N images per set")
    parser.add_argument("--confident", type=float, default=0.9)
    args = parser.parse_args(argv)

    reader = _load_reader(args.reader) if args.reader else _empty_reader
    reports = []
    for folder in args.folders:
        crops = Path(args.crops) / Path(folder).name if args.crops else None
        try:
            reports.append(
                evaluate(folder, reader, args.max_long_side, crops, args.limit, args.confident)
            )
        except ManifestError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print(format_table(reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

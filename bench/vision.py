"""Dice-reader accuracy and speed on synthetic, rendered and real photos, on one core.

Usage: .venv/bin/python bench/vision.py [--synthetic N] [--data DIR] [--crops DIR] [--limit N]
       [--valuenet ONNX...] [--context ONNX...|none] [--detector ONNX] [--boxnet ONNX|none]

Why: the reader is judged on photos it has never seen, so it is measured on every labelled
set we have (`../shared/data/realdice/*`, `../shared/data/renders/*`) and on a fresh
synthetic `hard` set, single-threaded (`cv2.setNumThreads(1)`) as on a busy Pi, with images
scaled to 1280 px on the long side. Where the learned value model was trained on half of a
real set, the other half ("held-out") is reported on its own, since only it says anything
about unseen photos. Speed is timed on a 1280×960 frame and on the same frame 800 px wide.
Where `bench/label_fixes.json` lists labels checked by eye to be wrong, the set is also
reported with them fixed ("audited labels"), beside the figures on the labels as published.
Each real photo set is read once more with its red and blue channels swapped ("paints
swapped"): the photos are of a few makers' dice, and the product meets others.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vision.config import ReaderConfig  # noqa: E402
from vision.evaluate import SetReport, evaluate, format_table, iou, load_manifest  # noqa: E402
from vision.job import Nets  # noqa: E402
from vision.reader import DiceReader  # noqa: E402
from vision.valuenet import ValueNet  # noqa: E402

TARGETS = """Targets: synthetic hard: recall, precision, value accuracy >= 99.5%, zero
confident-wrong; byler-d6: recall >= 98%, value accuracy >= 98%; rune55-trays: value accuracy
>= 95%; on every set, at most 1 wrong in 1,000 reads of confidence >= 0.9. One thread:
median <= 40 ms and p95 <= 80 ms per 1280x960 frame, median <= 25 ms at 800x600."""


LABEL_FIXES = REPO / "bench" / "label_fixes.json"


def audited_copy(name: str, folder: Path, tmp: Path, fixes_file: Path = LABEL_FIXES
                 ) -> Path | None:
    """The set with `label_fixes.json`'s corrections, as a manifest beside links to the
    original images; None when nothing is listed for it. A fix is a value (`die`, `was`,
    `value`), a box (`die`, `was_bbox`, `bbox`: a label box plainly round more than its die,
    which no reader's box of the die could match), or a die the labels miss (`add`: its
    value and box in the manifest's pixels). A fix that no longer fits the manifest (`was`
    or `was_bbox` changed, or the added die is labelled by now) stops the benchmark: the set
    changed and the audit must be redone."""
    fixes = json.loads(fixes_file.read_text(encoding="utf-8"))
    listed = fixes.get(name, [])
    todo: dict[tuple[str, int], dict] = {}
    adds: dict[str, list[dict]] = {}
    for f in listed:
        if "add" in f:
            adds.setdefault(f["image"], []).append(f["add"])
        else:
            todo[(f["image"], f["die"])] = f
    if not listed:
        return None
    out = tmp / f"{name}-audited"
    out.mkdir()
    lines = []
    for line in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        for i, die in enumerate(entry["dice"]):
            fix = todo.pop((entry["image"], i), None)
            if fix is not None and "was_bbox" in fix:
                if [float(v) for v in die.get("bbox", [])] != [float(v) for v in fix["was_bbox"]]:
                    raise SystemExit(f"label_fixes.json: {name} {entry['image']} die {i} is "
                                     f"boxed {die.get('bbox')}, not {fix['was_bbox']}: redo "
                                     "the audit")
                die["bbox"] = fix["bbox"]
            elif fix is not None:
                if die.get("value") != fix["was"]:
                    raise SystemExit(f"label_fixes.json: {name} {entry['image']} die {i} is "
                                     f"{die.get('value')}, not {fix['was']}: redo the audit")
                die["value"] = fix["value"]
        for add in adds.pop(entry["image"], []):
            if any(iou(add["bbox"], die["bbox"]) >= 0.3 for die in entry["dice"]):
                raise SystemExit(f"label_fixes.json: {name} {entry['image']}: the die added "
                                 f"at {add['bbox']} is labelled now: redo the audit")
            entry["dice"].append({"value": add["value"], "bbox": add["bbox"]})
        lines.append(json.dumps(entry))
    if todo or adds:
        missing = sorted(todo) + sorted(adds)
        raise SystemExit(f"label_fixes.json: {name}: no such dice or images {missing}")
    (out / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for item in folder.iterdir():
        if item.name != "manifest.jsonl":
            (out / item.name).symlink_to(item)
    return out


def _held_out_filter() -> object | None:
    try:
        from vision.valuenet import is_training_image
    except ImportError:
        return None
    return is_training_image


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=500, help="synthetic hard images")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"),
                        help="folder holding realdice/ and renders/")
    parser.add_argument("--crops", help="write crops of failures here, one folder per set")
    parser.add_argument("--limit", type=int, default=None, help="first N images per set")
    parser.add_argument("--valuenet", type=Path, nargs="+", default=None,
                        help="candidate value nets (.onnx, each .json beside it; several are "
                             "averaged) instead of the shipped four")
    parser.add_argument("--context", nargs="+", default=None, metavar="ONNX|none",
                        help="candidate context nets (asked whether certain reads lean; "
                             "several are averaged) instead of the shipped ones, or none")
    parser.add_argument("--detector", type=Path, default=None,
                        help="a candidate detector (.onnx, its .json beside it) instead of the "
                             "shipped one")
    parser.add_argument("--boxnet", default=None, metavar="ONNX|none",
                        help="a candidate box refiner instead of the shipped one, or none")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    nets, config = Nets.shipped(), ReaderConfig()
    if args.valuenet is not None:
        nets = dataclasses.replace(nets, value=ValueNet(args.valuenet))
        print("value nets:", " + ".join(str(p) for p in args.valuenet))
    if args.context == ["none"]:
        config = config.without("context.enabled")
        print("context nets: none")
    elif args.context is not None:
        nets = dataclasses.replace(nets, context=ValueNet(args.context))
        print("context nets:", " + ".join(args.context))
    if args.detector is not None:
        from vision.detector import Detector

        nets = dataclasses.replace(nets, detector=Detector(args.detector))
    if args.boxnet == "none":
        config = config.without("refine.enabled")
    elif args.boxnet is not None:
        from vision.boxnet import BoxNet

        nets = dataclasses.replace(nets, refiner=BoxNet(args.boxnet))
    reader = DiceReader(config=config, nets=nets)
    print(f"dice found by the learned detector ({nets.detector.path.name})"
          + (f", boxes refined by {nets.refiner.path.name}" if config.refine.enabled else ""))

    def read(image: np.ndarray) -> list[dict]:
        return [d.to_dict() for d in reader.read(image)]

    sets: list[tuple[str, Path]] = []
    with tempfile.TemporaryDirectory(prefix="vegas-synth-") as tmp:
        if args.synthetic:
            from vision.synth import write_set

            t0 = time.perf_counter()
            write_set(Path(tmp) / "synthetic-hard", args.synthetic, "hard", seed=2026)
            print(f"rendered {args.synthetic} synthetic hard scenes in "
                  f"{time.perf_counter() - t0:.0f} s")
            sets.append(("synthetic-hard", Path(tmp) / "synthetic-hard"))
        data = Path(args.data)
        for group in ("realdice", "renders"):
            folder = data / group
            if not folder.is_dir():
                print(f"{folder} is absent: its sets are not measured.")
                continue
            for sub in sorted(p for p in folder.iterdir() if (p / "manifest.jsonl").is_file()):
                sets.append((sub.name, sub))
        reports = []
        held_out = _held_out_filter()
        for name, folder in sets:
            crops = Path(args.crops) / name if args.crops else None
            report = evaluate(folder, read, 1280, crops, args.limit)
            report.name = name
            reports.append(report)
            fixed = audited_copy(name, folder, Path(tmp))
            if fixed is not None:
                part = evaluate(fixed, read, 1280, None, args.limit)
                part.name = f"{name} (audited labels)"
                reports.append(part)
            if held_out is not None and name != "synthetic-hard":
                kept = [e for e in load_manifest(folder) if not held_out(e["name"])]
                if kept and len(kept) < len(load_manifest(folder)):
                    part = evaluate(folder, read, 1280, None, args.limit,
                                    only=lambda e, keep=held_out: not keep(e["name"]))
                    part.name = f"{name} (held-out)"
                    reports.append(part)
            if folder.parent.name == "realdice":
                # Other makers' dice come in other paints: the same photos with red and blue
                # swapped turn byler's red pips on smoky dice blue, which the nets never saw.
                part = evaluate(folder, lambda image: read(np.ascontiguousarray(image[:, :, ::-1])),
                                1280, None, args.limit)
                part.name = f"{name} (paints swapped)"
                reports.append(part)
        print(format_table(reports))
        print()
        speed, measured = _speed(reader, sets)
        print(speed)
    print(TARGETS)
    print("\n".join(verdicts(reports, None, measured)))
    return 0


# (set, what, goal): shares of the table that have a floor.
SHARE_TARGETS = [("synthetic-hard", "recall", 0.995), ("synthetic-hard", "precision", 0.995),
                 ("synthetic-hard", "value accuracy", 0.995), ("byler-d6", "recall", 0.98),
                 ("byler-d6", "value accuracy", 0.98), ("rune55-trays", "value accuracy", 0.95)]
# (what, measured at, ms): the speed a Raspberry Pi's camera loop needs, on one core here.
SPEED_TARGETS = (("median", 1280, 40.0), ("p95", 1280, 80.0), ("median", 800, 25.0))


def verdicts(reports: list[SetReport], median_ms: float | None,
             speed: dict[tuple[str, int], float] | None = None) -> list[str]:
    """Each target met or short, on the exact counts: the table's one decimal shows 99.45%
    as 99.5%, one die short of the synthetic floor, so a glance at it can mislead."""
    by_name = {r.name: r for r in reports}
    lines = []
    for name, what, goal in SHARE_TARGETS:
        r = by_name.get(name)
        if r is None:
            lines.append(f"{name} {what}: not measured")
            continue
        num, den = {"recall": (r.matched, r.labels), "precision": (r.matched, r.predictions),
                    "value accuracy": (r.matched - r.wrong_values, r.matched)}[what]
        need = math.ceil(goal * den - 1e-9)
        state = "met" if num >= need else f"short by {need - num}"
        lines.append(f"{name} {what}: {num:,} of {den:,} = {100 * num / max(den, 1):.2f}% "
                     f"(>= {100 * goal:g}% needs {need:,}): {state}")
    r = by_name.get("synthetic-hard")
    if r is not None:
        state = "met" if r.confident_wrong == 0 else f"short by {r.confident_wrong}"
        lines.append(f"synthetic-hard confident-wrong: {r.confident_wrong} (0 needed): {state}")
    for r in reports:
        # The calibration claim: of the reads at CERTAIN or more, at most 1 in 1,000 wrong.
        n, bad = r.confident_reads, r.confident_wrong
        if 1000 * bad > n:
            state = "short"
        elif n < 1000:
            state = "met so far (fewer than 1,000 certain reads)"
        else:
            state = "met"
        lines.append(f"{r.name} certain reads: {bad} wrong of {n:,} = "
                     f"{1000 * bad / max(n, 1):.1f} per 1,000 (<= 1 needed): {state}")
    measured = dict(speed or {})
    if median_ms is not None:
        measured[("median", 1280)] = median_ms
    for what, width, goal in SPEED_TARGETS:
        ms = measured.get((what, width))
        if ms is not None:
            state = "met" if ms <= goal else "short"
            lines.append(f"speed at {width}x{width * 3 // 4}: {what} {ms:.1f} ms "
                         f"(<= {goal:g} ms needed): {state}")
    return lines


def _speed(reader: DiceReader, sets: list[tuple[str, Path]]
           ) -> tuple[str, dict[tuple[str, int], float]]:
    """Median and p95 time per frame at 1280x960 and at 800 px wide over the first frames
    found, printed and by (what, width) (empty without frames), and each stage's median."""
    frames = []
    for _, folder in sets:
        for entry in load_manifest(folder)[:10]:
            img = cv2.imread(entry["image"])
            if img is not None:
                frames.append(cv2.resize(img, (1280, 960), interpolation=cv2.INTER_AREA))
        if len(frames) >= 30:
            break
    if not frames:
        return "speed: no frames to time", {}
    lines = []
    measured: dict[tuple[str, int], float] = {}
    stages: dict[str, list[float]] = {}
    for frame in frames:
        for k, v in reader.read_traced(frame).stage_ms.items():
            stages.setdefault(k, []).append(v)
    lines.append("stages at 1280x960, median ms a frame: " + ", ".join(
        f"{k} {np.median(v):.1f}" for k, v in stages.items())
        + " (what each pass buys: bench/stages.py)")
    for width in (1280, 800):
        times = []
        for frame in frames:
            f = frame if width == 1280 else cv2.resize(frame, (800, 600),
                                                       interpolation=cv2.INTER_AREA)
            reader.read(f)  # warm
            t0 = time.perf_counter()
            for _ in range(3):
                reader.read(f)
            times.append((time.perf_counter() - t0) / 3 * 1000)
        measured[("median", width)] = float(np.median(times))
        measured[("p95", width)] = float(np.percentile(times, 95))
        lines.append(f"speed at {width}x{width * 3 // 4}: median {np.median(times):.1f} ms, "
                     f"p95 {np.percentile(times, 95):.1f} ms per frame (one thread, "
                     f"{len(frames)} frames)")
    return "\n".join(lines), measured


if __name__ == "__main__":
    raise SystemExit(main())

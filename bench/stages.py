"""What each stage and extra look of the reader costs a frame, and what it buys, set by set.

Usage: .venv/bin/python bench/stages.py [--synthetic N] [--data DIR] [--limit N] [--jobs N]
       [--only STAGE.SWITCH ...]

Why: a pass earns its milliseconds only if the dice it gains (found, read right, kept from a
confident error) are worth them, and that is only seen with the pass switched off. The reader
is run once whole and once with each of `ReaderConfig`'s switches off (every boolean that is
on by default), on the same sets as `bench/vision.py` (a fresh synthetic hard set, the real
photos, the renders), single-threaded at 1280 px. Per stage: the median ms a frame spends in it
(`DiceReader.read_traced`). Per switch: the ms a frame saves without it, and on each set the
dice it finds, reads right and makes confidently wrong, as the whole reader's counts minus
the counts without it (so a positive "right" is what the pass buys; a positive "conf-wrong"
is the confident errors it costs).
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vision.config import ReaderConfig  # noqa: E402
from vision.evaluate import SetReport, evaluate, load_manifest  # noqa: E402
from vision.reader import DiceReader  # noqa: E402

WHOLE = "(whole reader)"


def switches(config: ReaderConfig) -> list[str]:
    """Every "stage.field" of the config that is a boolean on by default."""
    out = []
    for stage in dataclasses.fields(config):
        part = getattr(config, stage.name)
        if not dataclasses.is_dataclass(part):
            continue
        for f in dataclasses.fields(part):
            if isinstance(getattr(part, f.name), bool) and getattr(part, f.name):
                out.append(f"{stage.name}.{f.name}")
    return out


def without(config: ReaderConfig, switch: str) -> ReaderConfig:
    """The config with one switch off."""
    stage, name = switch.split(".")
    return dataclasses.replace(
        config, **{stage: dataclasses.replace(getattr(config, stage), **{name: False})})


def speed_frames(sets: list[tuple[str, Path]], per_set: int = 8) -> list[np.ndarray]:
    frames = []
    for _, folder in sets:
        for entry in load_manifest(folder)[:per_set]:
            img = cv2.imread(entry["image"])
            if img is not None:
                frames.append(cv2.resize(img, (1280, 960), interpolation=cv2.INTER_AREA))
    return frames


def measure(switch: str, sets: list[tuple[str, Path]], limit: int | None
            ) -> tuple[str, dict[str, SetReport], float, dict[str, float]]:
    """One reader (whole, or with `switch` off) on every set: its reports, its median ms a
    frame on the speed frames, and the median ms of each stage there."""
    cv2.setNumThreads(1)
    config = ReaderConfig() if switch == WHOLE else without(ReaderConfig(), switch)
    reader = DiceReader(config=config, threads=1)

    def read(image: np.ndarray) -> list[dict]:
        return [d.to_dict() for d in reader.read(image)]

    reports = {name: evaluate(folder, read, 1280, None, limit) for name, folder in sets}
    totals, stages = [], {}
    for frame in speed_frames(sets):
        reader.read(frame)  # warm
        t0 = time.perf_counter()
        traced = reader.read_traced(frame)
        totals.append((time.perf_counter() - t0) * 1000)
        for k, v in traced.stage_ms.items():
            stages.setdefault(k, []).append(v)
    return (switch, reports, float(np.median(totals)),
            {k: float(np.median(v)) for k, v in stages.items()})


def _right(r: SetReport) -> int:
    return r.matched - r.wrong_values


def table(results: dict[str, Any], names: list[str]) -> str:
    whole, whole_ms = results[WHOLE][0], results[WHOLE][1]
    head = f"{'switched off':34s} {'ms saved':>8s}  " + "  ".join(
        f"{n[:14]:>14s}" for n in names)
    lines = [head, f"{'':34s} {'':>8s}  " + "  ".join(f"{'found right cw':>14s}" for _ in names),
             "-" * len(head)]
    for switch, (reports, ms) in results.items():
        if switch == WHOLE:
            continue
        cells = []
        for n in names:
            a, b = whole[n], reports[n]
            cells.append(f"{a.matched - b.matched:+5d} {_right(a) - _right(b):+5d} "
                         f"{a.confident_wrong - b.confident_wrong:+3d}")
        lines.append(f"{switch:34s} {whole_ms - ms:8.1f}  " + "  ".join(f"{c:>14s}"
                                                                      for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=200, help="synthetic hard images")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"),
                        help="folder holding realdice/ and renders/")
    parser.add_argument("--limit", type=int, default=None, help="first N images per set")
    parser.add_argument("--jobs", type=int, default=2, help="readers run side by side")
    parser.add_argument("--only", nargs="+", default=None, metavar="STAGE.SWITCH",
                        help="measure only these switches")
    args = parser.parse_args(argv)
    every = switches(ReaderConfig())
    todo = args.only or every
    unknown = [s for s in todo if s not in every]
    if unknown:
        raise SystemExit(f"no such switch: {', '.join(unknown)} (there are: {', '.join(every)})")
    with tempfile.TemporaryDirectory(prefix="vegas-stages-") as tmp:
        sets: list[tuple[str, Path]] = []
        if args.synthetic:
            from vision.synth import write_set

            write_set(Path(tmp) / "synthetic-hard", args.synthetic, "hard", seed=2026)
            sets.append(("synthetic-hard", Path(tmp) / "synthetic-hard"))
        for group in ("realdice", "renders"):
            folder = Path(args.data) / group
            if folder.is_dir():
                sets += [(p.name, p) for p in sorted(folder.iterdir())
                         if (p / "manifest.jsonl").is_file()]
        names = [n for n, _ in sets]
        jobs = [(s, sets, args.limit) for s in [WHOLE, *todo]]
        with mp.get_context("spawn").Pool(max(1, args.jobs)) as pool:
            done = pool.starmap(measure, jobs)
    results = {switch: (reports, ms) for switch, reports, ms, _ in done}
    whole_stages = next(st for s, _, _, st in done if s == WHOLE)
    whole_reports = results[WHOLE][0]
    print(f"whole reader: median {results[WHOLE][1]:.1f} ms a 1280x960 frame, one thread")
    print("stage ms (median a frame): " + ", ".join(f"{k} {v:.1f}"
                                                      for k, v in whole_stages.items()))
    print("whole reader per set (dice, found, read right, confidently wrong, certain): "
          + "; ".join(f"{n} {r.labels}/{r.matched}/{_right(r)}/{r.confident_wrong}/"
                      f"{r.confident_reads}" for n, r in whole_reports.items()))
    print()
    print("What each pass buys: the whole reader's count minus the count with it off.")
    print(table(results, names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

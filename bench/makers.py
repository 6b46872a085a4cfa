"""The dice reader on other makers' dice: the same synthetic scenes, the dice in other plastics.

Usage: .venv/bin/python bench/makers.py [--scenes N] [--presets normal,hard]
       [--materials solid,marbled,speckled,translucent] [--crops DIR]

Why: the game's dice are opaque and evenly coloured, but a group may play with any dice it
has, and the reader is judged on dice it has never seen. Each row renders the same seeds
with the dice placed and labelled as in the game's own scenes, made by another maker
(`vision.synth.fancy`: a large or ringed 1, sometimes coloured pips) in one plastic:
`solid`, `marbled` (veins of a second colour), `speckled` (glitter and flecks) or
`translucent` (the floor and the hidden faces' pips show through the body). The `game`
row is the game's own dice of the same seeds, for comparison. A row that loses much
against `game` names dice the reader is not ready for. One thread, as `bench/vision.py`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vision.evaluate import SetReport, evaluate  # noqa: E402
from vision.synth import MATERIALS, PRESETS, write_set  # noqa: E402

SEED = 4100  # away from bench/vision.py's 2026 and the training seeds (50,000 on)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def row(preset: str, kind: str, r: SetReport) -> str:
    return (f"{preset:8s}  {kind:12s}  {r.images:6d}  {r.labels:5d}  {_pct(r.recall):>6s}  "
            f"{_pct(r.precision):>9s}  {_pct(r.value_accuracy):>9s}  {r.confident_wrong:10d}  "
            f"{_pct(r.colour_accuracy):>10s}  {_pct(r.big_accuracy):>7s}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenes", type=int, default=100, help="scenes per preset and row")
    parser.add_argument("--presets", default="normal,hard")
    parser.add_argument("--materials", default=",".join(MATERIALS))
    parser.add_argument("--crops", help="write crops of failures here, one folder per row")
    args = parser.parse_args(argv)
    presets = [p for p in args.presets.split(",") if p]
    materials = [m for m in args.materials.split(",") if m]
    for p in presets:
        if p not in PRESETS:
            parser.error(f"unknown preset {p!r}; choose from {', '.join(PRESETS)}")
    for m in materials:
        if m not in MATERIALS:
            parser.error(f"unknown material {m!r}; choose from {', '.join(MATERIALS)}")
    if args.scenes < 1:
        parser.error("--scenes must be at least 1")

    cv2.setNumThreads(1)
    from vision.reader import DiceReader

    reader = DiceReader()

    def read(image):
        return [d.to_dict() for d in reader.read(image)]

    print("preset    dice          images   dice  recall  precision  value acc  conf-wrong"
          "  colour acc  big acc")
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="vegas-makers-") as tmp:
        for preset in presets:
            for kind in ["game", *materials]:
                folder = Path(tmp) / f"{preset}-{kind}"
                write_set(folder, args.scenes, preset, seed=SEED,
                          material=None if kind == "game" else kind)
                crops = Path(args.crops) / folder.name if args.crops else None
                print(row(preset, kind, evaluate(folder, read, crops_dir=crops)), flush=True)
    print(f"({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

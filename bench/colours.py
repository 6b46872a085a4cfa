"""How often the reader names a die's colour right, without a calibration profile.

Usage: .venv/bin/python bench/colours.py [--synthetic N] [--data DIR] [--fit] [--colournet ONNX]

Runs the reader on synthetic `hard` scenes (seed 2026, the vision benchmark's) and on every
rendered set that labels colours (`../shared/data/renders/*`), matches its dice to the labels
as `vegas-table eval` does, and prints the share of matched dice whose colour is right, for the
whole set and for its held-out half, with the commonest confusions.

`--fit` also refits `vision.reader.RELATIVE_PALETTE` from the training halves of the renders
and from other synthetic scenes (seed 77), through the reader's own boxes and sampling, and
prints it to paste into vision/colour.py; the held-out halves stay out of the fit.

`--colournet` reads with another colour net (a candidate from `training/train_colournet.py
--out`) in place of the shipped one, so that a retrained net is judged on this table.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from vision.colournet import ColourNet  # noqa: E402
from vision.evaluate import load_example, load_manifest, match  # noqa: E402
from vision.job import Nets  # noqa: E402
from vision.reader import RELATIVE_PALETTE, DiceReader, relative_colours  # noqa: E402
from vision.synth import write_set  # noqa: E402
from vision.valuenet import is_training_image  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def matched_dice(reader: DiceReader, folder: Path) -> list[tuple[str, dict, dict, np.ndarray]]:
    """(image name, label, prediction, pip-relative Lab) for every die the reader found."""
    out = []
    for entry in load_manifest(folder):
        image, labels = load_example(entry, 1280)
        preds = [r.to_dict() for r in reader.read(image)]
        pairs, _, _ = match(preds, labels, 0.5)
        pairs = [(p, q) for p, q in pairs if labels[q].get("colour") and not labels[q].get("cut")]
        rel = relative_colours(image, [preds[p]["bbox"] for p, _ in pairs])
        out += [(entry["name"], labels[q], preds[p], lab)
                for (p, q), lab in zip(pairs, rel, strict=True)]
    return out


def report(name: str, dice: list[tuple[str, dict, dict, np.ndarray]]) -> None:
    if not dice:
        print(f"{name:28} no dice with a colour label")
        return
    right = sum(p["colour"] == lab["colour"] for _, lab, p, _ in dice)
    wrong = Counter((lab["colour"], p["colour"]) for _, lab, p, _ in dice
                    if p["colour"] != lab["colour"])
    top = ", ".join(f"{a}->{b} {n}" for (a, b), n in wrong.most_common(4))
    print(f"{name:28} {len(dice):5d} dice  {right / len(dice):6.1%}  {top}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--synthetic", type=int, default=200, help="synthetic hard scenes")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--fit", action="store_true", help="refit RELATIVE_PALETTE and print it")
    ap.add_argument("--colournet", type=Path, default=None,
                    help="read with this colour net instead of the shipped one")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    nets = Nets.shipped()
    if args.colournet is not None:
        nets = dataclasses.replace(nets, colour=ColourNet(args.colournet))
        print("colour net:", args.colournet)
    reader = DiceReader(nets=nets)
    renders = sorted(p for p in (args.data / "renders").glob("*")
                     if (p / "manifest.jsonl").is_file())
    if not renders:
        print(f"{args.data / 'renders'}: no rendered sets; synthetic scenes only")
    fit: dict[str, list[np.ndarray]] = defaultdict(list)
    print(f"{'set':28} {'dice':>5}       right  commonest confusions (label->read)")
    with tempfile.TemporaryDirectory() as tmp:
        if args.synthetic:
            write_set(Path(tmp) / "synth", args.synthetic, "hard", seed=2026)
            report("synthetic hard", matched_dice(reader, Path(tmp) / "synth"))
        for folder in renders:
            dice = matched_dice(reader, folder)
            report(folder.name, dice)
            report(f"{folder.name} (held-out)",
                   [d for d in dice if not is_training_image(d[0])])
            for name, lab, _, rel in dice:
                if is_training_image(name):
                    fit[lab["colour"]].append(rel)
        if args.fit:
            write_set(Path(tmp) / "fit", 150, "hard", seed=77)
            for _, lab, _, rel in matched_dice(reader, Path(tmp) / "fit"):
                fit[lab["colour"]].append(rel)
    if args.fit:
        print("\nRELATIVE_PALETTE: dict[str, tuple[float, float, float]] = {")
        for name, old in RELATIVE_PALETTE.items():
            lab = np.median(fit[name], axis=0) if fit.get(name) else np.array(old)
            how = f"{len(fit[name])} dice" if fit.get(name) else "not refitted"
            print(f'    "{name}": ({lab[0]:.1f}, {lab[1]:.1f}, {lab[2]:.1f}),  # {how}')
        print("}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

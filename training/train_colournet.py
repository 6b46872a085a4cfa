"""Train the colour net (`vision/models/colournet.onnx`): a die's colour without a profile.

Usage (in the training venv, see docs/development.md; never part of `make test`):

    .venv-train/bin/python -m training.train_colournet --coloured-pips 0.2   # the shipped net

Samples are the reader's own boxes (as the net will see them at run time) matched to labelled
dice: synthetic scenes of the `normal`, `hard` and `wide` presets (seeds from 500,000 on, far
from the benchmark's and the tests'; a share of the dice with black pips, and with
`--coloured-pips` a share with pips of another colour), and the training
halves of the rendered sets that label colours (`vision.valuenet.is_training_image`), each of
their dice cut a few times from jittered boxes. The held-out halves are only reported. Each
crop is scaled by the die's reference white exactly as the reader does
(`colournet.colour_crop`); training jitters that gain a little, since the reference is itself
an estimate, and turns and mirrors the crops, which change no colour.

`--washed` (dice under a lamp mirrored over their whole top face) was measured and is no part
of the shipped recipe: off by default (docs/development.md, *What has been measured and left
out*).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.colournet import (
    CHANNELS,
    COLOURS,
    DEFAULT_MODEL,
    SCALE,
    SIZE,
    colour_crop,
)
from vision.evaluate import load_example, load_manifest, match
from vision.reader import DiceReader, _relative
from vision.synth import COLOURS as synth_colours
from vision.synth import random_dice, random_scene, render
from vision.valuenet import is_training_image

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RENDERS = ("mounted", "loose")
PRESETS = ("normal", "hard", "wide")
SEED0 = 500_000
CACHE_VERSION = 2
# The game's dice have white pips but for white and yellow ones; other makers' (and the
# renders') also come with black pips on orange, red, green... A net that only ever saw
# black pips on yellow and white dice named the renders' black-pipped orange dice yellow.
BLACK_PIPS = 0.3  # share of the other colours' dice given black pips in training scenes


def die_samples(reader: DiceReader, image: np.ndarray, labels: list[dict],
                rng: np.random.Generator, copies: int) -> tuple[list[np.ndarray], list[int]]:
    """Crops and colour indices of the labelled dice the reader finds in one image."""
    preds = [r.to_dict() for r in reader.read(image)]
    pairs, _, _ = match(preds, labels, 0.5)
    pairs = [(p, q) for p, q in pairs
             if labels[q].get("colour") in COLOURS and not labels[q].get("cut")]
    if not pairs:
        return [], []
    boxes = [preds[p]["bbox"] for p, _ in pairs]
    labs, gains, _ = _relative(image, boxes)
    crops, ys = [], []
    for (_, q), box, gain, lab in zip(pairs, boxes, gains, labs, strict=True):
        for k in range(copies):
            b = box
            if k:
                # The detector's boxes wander by a few percent of the side from frame to frame.
                side = max(box[2] - box[0], box[3] - box[1])
                dx, dy = rng.normal(0, 0.05 * side, 2)
                grow = rng.normal(0, 0.05 * side)
                b = [box[0] + dx - grow, box[1] + dy - grow, box[2] + dx + grow,
                     box[3] + dy + grow]
            crops.append(colour_crop(image, b, gain, lab))
            ys.append(COLOURS.index(labels[q]["colour"]))
    return crops, ys


def gather(args: argparse.Namespace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{part: (crops, labels)}: synth, renders' training halves, renders' held-out halves."""
    options = [args.washed] if args.washed else []  # keyed only when set: other caches hold
    options += [("coloured-pips", args.coloured_pips)] if args.coloured_pips else []
    key = hashlib.md5(json.dumps([CACHE_VERSION, args.scenes, args.render_copies, *options,
                                  Path(__file__).with_name("colournet.py").read_text(),
                                  Path(__file__).with_name("synth.py").read_text()],
                                 ).encode()).hexdigest()[:10]
    cache = Path(args.cache) / f"colournet-{key}.npz"
    if cache.is_file():
        z = np.load(cache)
        parts = sorted({k.rsplit("_", 1)[0] for k in z.files})
        return {p: (z[f"{p}_x"], z[f"{p}_y"]) for p in parts}
    cv2.setNumThreads(1)
    reader = DiceReader()
    rng = np.random.default_rng(7)
    out: dict[str, tuple[list, list]] = {"synth": ([], []), "train": ([], []), "held": ([], [])}
    t = time.time()
    for i in range(args.scenes):
        spec = random_scene(SEED0 + i, PRESETS[i % len(PRESETS)], 1280, 960)
        dice = [replace(d, pip_colour="black")
                if d.colour not in ("white", "yellow", "gray") and rng.random() < BLACK_PIPS
                else d for d in random_dice(spec, rng)]
        if args.washed:
            dice = [replace(d, glare=True, glare_size=float(rng.uniform(1.5, 4.0)))
                    if rng.random() < args.washed else d for d in dice]
        if args.coloured_pips:
            dice = [replace(d, pip_colour=str(rng.choice(
                        [c for c in synth_colours if c not in (d.colour, "gray")])))
                    if rng.random() < args.coloured_pips else d for d in dice]
        image, labels = render(spec, dice, seed=SEED0 + i)
        x, y = die_samples(reader, image, labels, rng, 1)
        out["synth"][0].extend(x)
        out["synth"][1].extend(y)
        if i % 200 == 199:
            print(f"  {i + 1} scenes, {len(out['synth'][1])} dice, {time.time() - t:.0f} s",
                  flush=True)
    for name in RENDERS:
        folder = DATA / "renders" / name
        if not (folder / "manifest.jsonl").is_file():
            print(f"{folder}: missing, trained without it")
            continue
        for entry in load_manifest(folder):
            image, labels = load_example(entry, 1280)
            part = "train" if is_training_image(entry["name"]) else "held"
            x, y = die_samples(reader, image, labels, rng,
                               args.render_copies if part == "train" else 1)
            out[part][0].extend(x)
            out[part][1].extend(y)
    arrays = {p: (np.asarray(x, np.float32).reshape(-1, CHANNELS, SIZE, SIZE),
                  np.asarray(y, np.int64))
              for p, (x, y) in out.items()}
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **{f"{p}_{k}": v for p, (x, y) in arrays.items()
                       for k, v in (("x", x), ("y", y))})
    return arrays


def make_model() -> object:
    from torch import nn

    def block(i: int, o: int) -> list:
        return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    # Colour is a matter of which pixels hold what, not of fine detail: three small convs
    # and a global average, about 1.4 M multiply-adds per die.
    return nn.Sequential(*block(CHANNELS, 16), nn.MaxPool2d(2), *block(16, 32), nn.MaxPool2d(2),
                         *block(32, 48), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(48, len(COLOURS)))


def augment(x: object, gen: object) -> object:
    import torch

    k = int(torch.randint(0, 4, (1,), generator=gen))
    x = torch.rot90(x, k, dims=(2, 3))
    if bool(torch.randint(0, 2, (1,), generator=gen)):
        x = torch.flip(x, dims=(3,))
    # The reference white is an estimate: a few percent off in level and in each channel.
    n = x.shape[0]
    level = 1.0 + 0.12 * torch.randn(n, 1, 1, 1, generator=gen)
    tint = 1.0 + 0.04 * torch.randn(n, 3, 1, 1, generator=gen)
    die = ((x[:, :3] + 0.5) * level * tint).clamp(0.0, 1.5) - 0.5
    return torch.cat([die, x[:, 3:]], dim=1)


def accuracy(model: object, x: np.ndarray, y: np.ndarray) -> float:
    import torch

    if len(y) == 0:
        return float("nan")
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(1).numpy()
    return float((pred == y).mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=1800, help="synthetic scenes")
    ap.add_argument("--render-copies", type=int, default=8,
                    help="jittered cuts of each training-half render die")
    ap.add_argument("--render-weight", type=int, default=4,
                    help="times each render crop is seen per epoch (synthetic ones: once)")
    ap.add_argument("--washed", type=float, default=0.0, metavar="SHARE",
                    help="this share of the synthetic dice under a lamp mirrored over their "
                         "whole top face (synth.DiePose.glare_size), which then shows only "
                         "the bevels' and sides' colour")
    ap.add_argument("--coloured-pips", type=float, default=0.0, metavar="SHARE",
                    help="this share of the synthetic dice with pips of another colour "
                         "(yellow on black, red on white...), which are no part of the "
                         "die's colour")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default="/tmp/colournet-cache")
    ap.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    args = ap.parse_args(argv)

    import torch
    from torch import nn

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data = gather(args)
    for part, (_, y) in data.items():
        print(f"{part}: {len(y)} dice, per colour {np.bincount(y, minlength=len(COLOURS))}")
    # Synthetic dice outnumber the renders' nearly ten to one, and their paints are not the
    # renders' (an orange there is a yellower one): the renders are weighted up.
    x = np.concatenate([data["synth"][0], *[data["train"][0]] * args.render_weight])
    y = np.concatenate([data["synth"][1], *[data["train"][1]] * args.render_weight])
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = args.epochs * (len(y) // 128 + 1)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps)
    gen = torch.Generator().manual_seed(args.seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(yt), generator=gen)
        total = 0.0
        for i in range(0, len(order), 128):
            idx = order[i : i + 128]
            loss = loss_fn(model(augment(xt[idx], gen)), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        print(f"epoch {epoch + 1}: loss {total / len(yt):.3f}  renders held-out "
              f"{accuracy(model, *data['held']):.1%}  renders training "
              f"{accuracy(model, *data['train']):.1%}", flush=True)

    model.eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(model, (torch.zeros(1, CHANNELS, SIZE, SIZE),), str(args.out),
                      opset_version=13, input_names=["crops"], output_names=["logits"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}}, dynamo=False)
    meta = {"colours": list(COLOURS), "crop": f"bgr{SIZE} max(w,h)*{SCALE:g} x pip gain + rule lab",
            "channels": CHANNELS,
            "scenes": args.scenes, "render_copies": args.render_copies,
            "render_weight": args.render_weight,
            "epochs": args.epochs, "seed": args.seed, "washed": args.washed,
            "coloured_pips": args.coloured_pips,
            "held_out_renders": round(accuracy(model, *data["held"]), 4)}
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

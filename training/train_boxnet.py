"""Train the box refiner (`vision/boxnet.py`) and export it to ONNX for ONNX Runtime.

Run by hand from the repository root, never from `make test`, in the training venv (see
`train_valuenet.py` for how to make it):

    .venv-train/bin/python -m training.train_boxnet    # about 8 minutes on two cores

(2 minutes to cut ~93,000 crops, cached in /tmp/boxnet-cache, then 18 epochs of 20 s.) The
shipped model is this recipe, the defaults (`--copies 24 --epochs 18`): fewer copies and
epochs leave the held-out boxes less well placed. With `--cocked-scenes 600 --top-copies 6`
it cuts about 131,000 crops and a run takes longer in proportion (about 25 minutes on a
slower two-core machine).

Why: the detector's boxes sit a few pixels off their dice (a shadow taken in under a low lamp,
part of a die in a cluster), and a box at IoU 0.3-0.5 with its die is a miss and an invented
die at once. The refiner learns where a die's four edges are from a crop 1.6 times the box.

Data: the training half of every labelled set under /work/shared/data (`is_training_image`;
the other half is held out and reported at the end) and synthetic scenes from `vision.synth`.
The boxes it is shown are the label boxes with each edge moved on its own (out as a shadow or
a neighbour's edge pushes it, in as a cluster cuts it) and the shipped detector's own boxes
for those dice, nudged; the target is the label box. Edges are given relative to the shown
box's centre in units of its longer side, so a flip of the crop is a flip of the target.

`--cocked-scenes N` adds N scenes of three to five cocked dice each
(`train_valuenet.cocked_scene`), and `--top-copies K` shows each of their cocked dice K times
more framed by its top face alone (the label's `top_bbox`, nudged), with the whole die as the
target. The detector often boxes a lean that way, and the value nets, taught leans on the
whole die, then read the clean top face as a flat die. Both default to 0: the shipped recipe
(docs/development.md, *What has been measured and left out*, says how they compared).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from training.train_valuenet import (
    FIT,
    HELD,
    MAX_LONG_SIDE,
    SETS,
    VAL,
    _region,
    _role,
    _seed,
    detector_boxes,
    make_model,
    run_onnx,
)
from vision.boxnet import CROP_SCALE, CROP_SIZE
from vision.evaluate import iou, load_example, load_manifest
from vision.valuenet import crop_for

ROOT = Path(__file__).resolve().parent.parent
CACHE_VERSION = 1
OUT = ROOT / "vision" / "models" / "boxnet.onnx"
MATCH_IOU = 0.3  # a detector box this close to a die is that die's box to refine
PRESETS = ("easy", "normal", "hard", "wide")


# ---------------------------------------------------------------------------- sampling


def _side(box: list[float]) -> float:
    return max(box[2] - box[0], box[3] - box[1], 1.0)  # as `boxnet.apply_edges` takes it


def _moved(box: list[float], rng: np.random.Generator) -> list[float]:
    """The label box with each edge moved on its own: out by up to 35% of the side (a shadow,
    a neighbour's edge), in by up to 20% (part of a die), the whole box shifted a little."""
    s = _side(box)
    dx, dy = rng.uniform(-0.08, 0.08, 2) * s
    a = rng.uniform(-0.2, 0.35, 4) * s
    out = [box[0] - a[0] + dx, box[1] - a[1] + dy, box[2] + a[2] + dx, box[3] + a[3] + dy]
    if out[2] - out[0] < 0.4 * s or out[3] - out[1] < 0.4 * s:
        return list(box)
    return out


def _nudged(box: list[float], rng: np.random.Generator) -> list[float]:
    s = _side(box)
    d = rng.uniform(-0.04, 0.04, 4) * s
    return [box[0] + d[0], box[1] + d[1], box[2] + d[2], box[3] + d[3]]


def _target(shown: list[float], label: list[float]) -> np.ndarray:
    cx, cy = (shown[0] + shown[2]) / 2, (shown[1] + shown[3]) / 2
    s = _side(shown)
    return np.array([(label[0] - cx) / s, (label[1] - cy) / s, (label[2] - cx) / s,
                     (label[3] - cy) / s], np.float32)


def _augmented(image: np.ndarray, box: list[float], rng: np.random.Generator) -> np.ndarray:
    """The crop of `box` under another camera and lamp: size, white balance, gamma, contrast,
    blur, noise, JPEG (the shipped net's recipe, which differs in its details from the
    value nets' `train_valuenet._augmented`). Flips are done per batch, with the target's."""
    patch, b = _region(image, box, CROP_SCALE * 1.1)
    s = _side(b)
    if rng.random() < 0.5:
        f = math.exp(rng.uniform(math.log(16), math.log(90))) / s
        if f < 1:
            patch = cv2.resize(patch, (max(4, round(patch.shape[1] * f)),
                                       max(4, round(patch.shape[0] * f))),
                               interpolation=cv2.INTER_AREA)
            b = [v * f for v in b]
    x = patch.astype(np.float32) * rng.uniform(0.75, 1.25, size=3).astype(np.float32)
    x = 255.0 * np.power(np.clip(x, 0, 255) / 255.0, math.exp(rng.uniform(-0.5, 0.5)))
    m = float(x.mean())
    x = (x - m) * rng.uniform(0.6, 1.3) + m + rng.uniform(-30, 30)
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.3, 1.2) * max(_side(b), 14) / 40)
    if rng.random() < 0.5:
        x += rng.normal(0, rng.uniform(1, 10), x.shape).astype(np.float32)
    u8 = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.4:
        ok, buf = cv2.imencode(".jpg", u8, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 91))])
        if ok:
            u8 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return crop_for(u8, b, 3, None, CROP_SCALE, CROP_SIZE)


def samples_for_scene(image: np.ndarray, dice: list[dict], role: int, seed: int, copies: int,
                      dets: list[list[float]] | None, top_copies: int = 0
                      ) -> tuple[np.ndarray, ...]:
    """(crops float16, targets, shown boxes, label boxes, is-detector-box) of one image.

    Training images give `copies` moved label boxes per die and two nudged detector boxes;
    validation and held-out images give each die's detector box as it is (the reader's case)
    and one moved label box. A cocked die whose label gives its top face's box (`top_bbox`)
    also gives `top_copies` nudged top-face boxes (one on validation images), whose target is
    the whole die: the detector often boxes a lean by its clean top face alone."""
    rng = np.random.default_rng(seed)
    xs, ts, shown, labels, from_det = [], [], [], [], []
    for d in dice:
        if d.get("cut"):
            continue
        lab = [float(v) for v in d["bbox"]]
        det = max(dets or [], key=lambda b: iou(b, lab), default=None)
        boxes: list[tuple[list[float], bool]] = []
        if det is not None and iou(det, lab) >= MATCH_IOU:
            boxes += [(_nudged(det, rng), True) for _ in range(2)] if role == FIT else [(det, True)]
        boxes += [(_moved(lab, rng), False) for _ in range(copies if role == FIT else 1)]
        if top_copies and d.get("top_bbox") is not None and role != HELD:
            top = [float(v) for v in d["top_bbox"]]
            boxes += [(_nudged(top, rng), False) for _ in range(top_copies if role == FIT else 1)]
        for b, is_det in boxes:
            x = (_augmented(image, b, rng) if role == FIT
                 else crop_for(image, b, 3, None, CROP_SCALE, CROP_SIZE))
            xs.append(x)
            ts.append(_target(b, lab))
            shown.append(b)
            labels.append(lab)
            from_det.append(is_det)
    if not xs:
        z = np.zeros((0, 4), np.float32)
        return (np.zeros((0, 3, CROP_SIZE, CROP_SIZE), np.float16), z, z, z,
                np.zeros(0, bool))
    return (np.stack(xs).astype(np.float16), np.stack(ts), np.array(shown, np.float32),
            np.array(labels, np.float32), np.array(from_det))


def _real_task(task: tuple[str, dict, int]) -> tuple[str, int, tuple]:
    name, entry, copies = task
    cv2.setNumThreads(1)
    role = _role(entry["name"])
    image, labels = load_example(entry, max_long_side=MAX_LONG_SIDE)
    return name, role, samples_for_scene(image, labels, role, _seed("box", name, entry["name"]),
                                         copies, detector_boxes(image))


def _synth_task(task: tuple[int, str, int, int, bool]) -> tuple[str, int, tuple] | None:
    """Crops of one synthetic scene: the preset's own, or (`cocked`) one of three to five
    cocked dice (`train_valuenet.cocked_scene`), whose labels give each cocked die's top face.

    A leaning die's label box holds its side face too, but the presets give one or two such
    dice a hard scene, so the refiner is seldom shown the clean top face the detector often
    boxes with the whole die as the target; and the value nets, taught leans on the whole
    die, read that top face alone as a flat die."""
    seed, preset, copies, top_copies, cocked = task
    cv2.setNumThreads(1)
    try:
        if cocked:
            from training.train_valuenet import cocked_scene

            image, dice = cocked_scene(seed, preset)
        else:
            from vision.synth import render_scene

            image, entry = render_scene(seed, preset, 1280, 960)
            dice = entry["dice"]
    except Exception:  # another module's scene: one broken scene must not stop training
        return None
    role = VAL if seed % 20 == 0 else FIT
    return "synth", role, samples_for_scene(image, dice, role,
                                            _seed("box-cocked" if cocked else "box", "synth",
                                                  seed), copies,
                                            detector_boxes(image), top_copies)


def build_dataset(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """Cut every crop once, in two processes, and cache it keyed on what shapes the crops."""
    vision = ROOT / "vision"
    src = b"".join((vision / n).read_bytes() for n in ("valuenet.py", "synth.py", "boxnet.py",
                                                       "models/detector.onnx"))
    made = ((args.cocked_scenes, args.cocked_copies, args.top_copies) if args.cocked_scenes
            else ())
    key = hashlib.md5(repr((CACHE_VERSION, args.scenes, args.copies, args.synth_copies,
                            src, *made)).encode()).hexdigest()[:12]
    cache = Path(args.cache) / f"boxes-{key}.npz"
    if cache.is_file():
        print(f"crops from cache {cache}")
        with np.load(cache) as z:
            return {k: z[k] for k in z.files}
    tasks_real = [(name, e, args.copies) for name, folder in SETS.items()
                  for e in load_manifest(folder)]
    leaning = ("hard", "normal", "wide")
    tasks_synth = [(60_000 + i, PRESETS[i % len(PRESETS)], args.synth_copies, 0, False)
                   for i in range(args.scenes)]
    tasks_synth += [(40_000 + i, leaning[i % 3], args.cocked_copies, args.top_copies, True)
                    for i in range(args.cocked_scenes)]
    names = [*SETS, "synth"]
    parts: dict[str, list] = {k: [] for k in ("x", "t", "shown", "label", "det", "role", "set")}
    t0 = time.time()
    with mp.get_context("spawn").Pool(args.workers) as pool:
        results = [*pool.imap_unordered(_real_task, tasks_real, chunksize=2),
                   *pool.imap_unordered(_synth_task, tasks_synth, chunksize=4)]
    for r in results:
        if r is None:
            continue
        name, role, (x, t, shown, label, det) = r
        for k, v in zip(("x", "t", "shown", "label", "det"), (x, t, shown, label, det),
                        strict=True):
            parts[k].append(v)
        parts["role"].append(np.full(len(t), role, np.int8))
        parts["set"].append(np.full(len(t), names.index(name), np.int8))
    data = {k: np.concatenate(v) for k, v in parts.items()}
    data["set_names"] = np.array(names)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **data)
    print(f"cut {len(data['t'])} crops in {time.time() - t0:.0f} s (cached in {cache})")
    return data


# ---------------------------------------------------------------------------- model


def _flip_batch(x: Any, t: Any) -> tuple[Any, Any]:
    """A random flip or transpose of the whole batch, and the same of its targets."""
    import torch

    r = torch.rand(3)
    if r[0] < 0.5:  # mirror left-right: left edge <- minus right edge
        x = torch.flip(x, dims=(3,))
        t = torch.stack([-t[:, 2], t[:, 1], -t[:, 0], t[:, 3]], dim=1)
    if r[1] < 0.5:
        x = torch.flip(x, dims=(2,))
        t = torch.stack([t[:, 0], -t[:, 3], t[:, 2], -t[:, 1]], dim=1)
    if r[2] < 0.5:
        x = x.transpose(2, 3)
        t = t[:, [1, 0, 3, 2]]
    return x.contiguous(), t


def predict(model: Any, x: np.ndarray, batch: int = 2048) -> np.ndarray:
    import torch

    model.eval()
    with torch.no_grad():
        return np.concatenate([model(torch.from_numpy(x[i:i + batch].astype(np.float32))).numpy()
                               for i in range(0, len(x), batch)] or [np.zeros((0, 4))])


def train(data: dict[str, np.ndarray], args: argparse.Namespace) -> Any:
    """Smooth L1 on the four edges, early-stopped on the validation images' loss."""
    import torch
    from torch import nn

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    fit, val = data["role"] == FIT, data["role"] == VAL
    xf = torch.from_numpy(data["x"][fit].astype(np.float32))
    tf = torch.from_numpy(data["t"][fit])
    xv, tv = data["x"][val].astype(np.float32), data["t"][val]
    print(f"fit {len(tf)} crops, val {len(tv)}")
    model = make_model(outputs=4, channels=3, size=CROP_SIZE)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * math.ceil(len(tf) / args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps,
                                                pct_start=0.15)
    loss_fn = nn.SmoothL1Loss(beta=0.02)
    best, best_state, t0 = float("inf"), None, time.time()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(tf))
        total = 0.0
        for i in range(0, len(perm), args.batch):
            idx = perm[i:i + args.batch]
            xb, tb = _flip_batch(xf[idx], tf[idx])
            loss = loss_fn(model(xb), tb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        vloss = float(np.abs(predict(model, xv) - tv).mean())
        print(f"epoch {epoch + 1:2d}: train {total / len(tf):.4f}  val mean |edge error| "
              f"{vloss:.4f} sides  {time.time() - t0:.0f} s", flush=True)
        if vloss < best:
            best, best_state = vloss, {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    return model


# ---------------------------------------------------------------------------- export, report


def export(model: Any, meta_extra: dict, path: Path) -> None:
    """Write ONNX and its metadata, and prove ONNX Runtime computes what torch computes."""
    import torch

    from training.train_valuenet import fold_bn

    fused = fold_bn(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(fused, (torch.zeros(1, 3, CROP_SIZE, CROP_SIZE),), str(path),
                      opset_version=13, input_names=["crops"], output_names=["edges"],
                      dynamic_axes={"crops": {0: "n"}, "edges": {0: "n"}}, dynamo=False)
    meta = {"crop": f"bgr{CROP_SIZE} max(w,h)*{CROP_SCALE:g} z-norm", "crop_scale": CROP_SCALE,
            "crop_size": CROP_SIZE, "outputs": "left, top, right, bottom edge - box centre, "
            "over the box's longer side", **meta_extra, "date": dt.date.today().isoformat()}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    x = np.random.default_rng(0).normal(size=(16, 3, CROP_SIZE, CROP_SIZE)).astype(np.float32)
    ref = predict(model, x)
    diff = float(np.abs(np.asarray(run_onnx(path, x)).reshape(16, 4) - ref).max())
    print(f"exported {path} ({path.stat().st_size / 1024:.0f} KiB); ONNX Runtime vs torch max "
          f"|diff| {diff:.2e}")
    if diff > 1e-4:
        raise SystemExit("ONNX Runtime disagrees with torch: the export is broken")


def report(model: Any, data: dict[str, np.ndarray]) -> dict:
    """On held-out images (and the synthetic validation scenes): the detector's boxes against
    the labels, before and after refinement."""
    names = [str(s) for s in data["set_names"]]
    out = {}
    print(f"\n{'set':8} {'boxes':>6} {'IoU before':>10} {'after':>6} {'<0.5 -> >=0.5':>14} "
          f"{'>=0.5 -> <0.5':>14}")
    for sid, name in enumerate(names):
        role = VAL if name == "synth" else HELD
        m = (data["set"] == sid) & (data["role"] == role) & data["det"]
        if not m.any():
            continue
        e = predict(model, data["x"][m].astype(np.float32))
        before, after = [], []
        for shown, lab, ed in zip(data["shown"][m], data["label"][m], e, strict=True):
            cx, cy = (shown[0] + shown[2]) / 2, (shown[1] + shown[3]) / 2
            s = max(shown[2] - shown[0], shown[3] - shown[1])
            new = [cx + ed[0] * s, cy + ed[1] * s, cx + ed[2] * s, cy + ed[3] * s]
            before.append(iou(list(shown), list(lab)))
            after.append(iou(new, list(lab)))
        b, a = np.array(before), np.array(after)
        gained, lost = int(((b < 0.5) & (a >= 0.5)).sum()), int(((b >= 0.5) & (a < 0.5)).sum())
        print(f"{name:8} {len(b):6d} {b.mean():10.3f} {a.mean():6.3f} {gained:14d} {lost:14d}")
        out[name] = {"boxes": len(b), "iou_before": round(float(b.mean()), 4),
                     "iou_after": round(float(a.mean()), 4), "gained": gained, "lost": lost}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=1600, help="synthetic scenes")
    ap.add_argument("--copies", type=int, default=24, help="moved label boxes per real die")
    ap.add_argument("--synth-copies", type=int, default=3, help="... per synthetic die")
    ap.add_argument("--cocked-scenes", type=int, default=0,
                    help="extra synthetic scenes with 3-5 cocked dice each (hard/normal/wide)")
    ap.add_argument("--cocked-copies", type=int, default=3,
                    help="moved label boxes per die in those scenes")
    ap.add_argument("--top-copies", type=int, default=0,
                    help="in those scenes, nudged top-face boxes per cocked die, whose "
                         "target is the whole die")
    ap.add_argument("--epochs", type=int, default=18)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default="/tmp/boxnet-cache")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    data = build_dataset(args)
    model = train(data, args)
    held = report(model, data)
    export(model, {"scenes": args.scenes, "copies": args.copies, "epochs": args.epochs,
                   "cocked_scenes": args.cocked_scenes, "top_copies": args.top_copies,
                   "seed": args.seed, "recipe": "train_boxnet.py " + " ".join(argv or sys.argv[1:]),
                   "held_out_note": "IoU after = the net's answer taken all the way; the reader "
                                    "moves boxes boxnet.TRUST of the way",
                   "held_out_detector_boxes": held}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

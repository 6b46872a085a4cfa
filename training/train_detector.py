"""Train the die detector (`vision/detector.py`) and export it to ONNX for ONNX Runtime.

Run by hand from the repository root, never from `make test` (same venv as the value net):

    .venv-train/bin/python -m training.train_detector

Data: synthetic box-lid scenes from `vision/synth.py` (easy, normal and twice as many hard,
rendered once into /tmp/detector-cache) and the *training half* of every labelled set under
/work/shared/data (`vision.valuenet.is_training_image`), read through `vision.evaluate` so
the stretch fix and scaling are the reader's own. Every training sample is a random crop of
one image after a random rescale (0.6-1.6x: other camera heights), flips and quarter turns,
and lamp colour, gamma, contrast, blur and noise changes. Dice cut by the image edge are
"don't care": the reader skips them, so the net is neither taught to find nor to miss them.

The shipped detector is two runs: 3000 steps from scratch (`--steps 3000`), then a
fine-tune from that run's checkpoint with wide-lens scenes besides (`--wide --scenes 3000
--init FIRST.pt --steps 1500 --lr 1e-3`; its .json records the recipe).

Prints held-out recall and precision (IoU >= 0.5) per set at the end, and the speed through
ONNX Runtime on one thread. Writes vision/models/detector.onnx and detector.json, the net's first
conv rewritten to take its input as 2x2 pixel blocks (`--blocks MODEL` does only that, to a
model already exported).
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

from training.train_valuenet import SETS, run_onnx  # the same labelled sets, one list
from vision.detector import (
    INPUT_LONG,
    MULTIPLE,
    SIZE_UNIT,
    STRIDE,
    Detector,
    decode,
    space_to_depth,
)
from vision.evaluate import iou, load_example, load_manifest
from vision.valuenet import is_training_image

ROOT = Path(__file__).resolve().parent.parent

CACHE_VERSION = 1
OUT = ROOT / "vision" / "models" / "detector.onnx"


# ---------------------------------------------------------------------------- data


def _scaled(image: np.ndarray, labels: list[dict]) -> dict:
    """Bring one labelled image to the net's input scale (long side INPUT_LONG)."""
    h, w = image.shape[:2]
    f = INPUT_LONG / max(h, w)
    small = cv2.resize(image, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA)
    boxes, ignore = [], []
    for d in labels:
        b = [v * f for v in d["bbox"]]
        (ignore if d.get("cut") else boxes).append(b)
    return {
        "img": small,
        "boxes": np.array(boxes, np.float32).reshape(-1, 4),
        "ignore": np.array(ignore, np.float32).reshape(-1, 4),
    }


def _real_task(task: tuple[str, dict]) -> tuple[str, str, dict]:
    set_name, entry = task
    cv2.setNumThreads(1)
    image, labels = load_example(entry, max_long_side=1280)
    return set_name, entry["name"], _scaled(image, labels)


# Other makers' plastics (`synth.fancy`), one per scene chosen for `--makers`: the game's dice
# are opaque, but a group may play with any dice, and a translucent die whose body shows the
# floor is missed far more often than the game's dice in normal scenes (bench/makers.py).
# Off by default: fine-tuned so, the detector boxes dice otherwise than the value nets learnt
# from, and byler fell under its target (docs/development.md).
MAKER_MATERIALS = ("translucent", "marbled", "speckled")


def _synth_task(task: tuple[int, str, str | None]) -> tuple[str, str, dict] | None:
    seed, preset, material = task
    cv2.setNumThreads(1)
    from vision.synth import render_scene

    image, entry = render_scene(seed, preset, 1280, 960, material)
    return "synth", f"synth-{preset}-{seed}", _scaled(image, entry["dice"])


def _material_for(i: int, share: float) -> str | None:
    """Scene i's plastic: other makers' in `share` of the scenes, spread evenly over the
    presets (a golden-ratio sequence), None (the game's dice) in the rest."""
    if (i * 0.6180339887) % 1.0 >= share:
        return None
    return MAKER_MATERIALS[(i // 7) % len(MAKER_MATERIALS)]


def build_dataset(args: argparse.Namespace) -> list[tuple[str, str, dict]]:
    """Render and scale every image once (two processes) and cache the result."""
    src = (ROOT / "vision" / "synth.py").read_bytes()
    makers = (args.makers,) if args.makers else ()  # keyed only when set: other caches hold
    key = hashlib.md5(repr((CACHE_VERSION, args.scenes, args.wide, *makers, src)).encode()
                      ).hexdigest()[:12]
    cache = Path(args.cache) / f"detector-{key}.npz"
    if cache.is_file() and not args.no_cache:
        print(f"images from cache {cache}")
        with np.load(cache, allow_pickle=True) as z:
            return list(z["items"])
    presets = ("easy", "normal", "hard", "hard") + (("wide", "wide") if args.wide else ())
    tasks_real = [(n, e) for n, folder in SETS.items() for e in load_manifest(folder)]
    tasks_synth = [(50_000 + i, presets[i % 4], _material_for(i, args.makers))
                   for i in range(args.scenes)]
    items: list[tuple[str, str, dict]] = []
    t0 = time.time()
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for r in pool.imap_unordered(_real_task, tasks_real, chunksize=2):
            items.append(r)
        for i, r in enumerate(pool.imap_unordered(_synth_task, tasks_synth, chunksize=4)):
            if r is not None:
                items.append(r)
            if (i + 1) % 250 == 0:
                print(f"  {i + 1}/{len(tasks_synth)} scenes, {time.time() - t0:.0f} s", flush=True)
    items.sort(key=lambda t: t[1])
    cache.parent.mkdir(parents=True, exist_ok=True)
    arr = np.empty(len(items), object)
    arr[:] = items
    np.savez(cache, items=arr)
    print(f"{len(items)} images in {time.time() - t0:.0f} s (cached in {cache})")
    return items


def _held(set_name: str, name: str) -> bool:
    if set_name == "synth":
        return int(name.rsplit("-", 1)[1]) % 20 == 0
    return not is_training_image(name)


# ---------------------------------------------------------------------------- samples


def _sample(item: dict, rng: np.random.Generator, patch: int) -> tuple[np.ndarray, ...]:
    """One augmented training crop and its targets on the output grid."""
    img, boxes, ignore = item["img"], item["boxes"].copy(), item["ignore"].copy()
    s = math.exp(rng.uniform(math.log(0.6), math.log(1.6)))
    h, w = img.shape[:2]
    nw, nh = max(8, round(w * s)), max(8, round(h * s))
    im = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    boxes *= np.array([nw / w, nh / h, nw / w, nh / h], np.float32)
    ignore *= np.array([nw / w, nh / h, nw / w, nh / h], np.float32)
    # Photometric changes on the whole image, so normalisation sees what inference sees.
    x = im.astype(np.float32) / 255.0
    x = x ** rng.uniform(0.6, 1.5)
    x = x * rng.uniform(0.75, 1.3, size=3).astype(np.float32) * rng.uniform(0.5, 1.4)
    if rng.random() < 0.25:
        k = rng.choice([3, 5])
        x = cv2.GaussianBlur(x, (k, k), 0)
    x = x + rng.normal(0, rng.uniform(0, 0.03), size=x.shape).astype(np.float32)
    x = np.clip(x, 0, 1) * 255.0
    mean = x.reshape(-1, 3).mean(0)
    std = x.reshape(-1, 3).std(0) + 8.0
    # Crop (or pad, repeating the edge as inference does) to patch x patch.
    if nw < patch or nh < patch:
        x = cv2.copyMakeBorder(x, 0, max(0, patch - nh), 0, max(0, patch - nw),
                               cv2.BORDER_REPLICATE)
    ox = int(rng.integers(0, max(1, x.shape[1] - patch + 1)))
    oy = int(rng.integers(0, max(1, x.shape[0] - patch + 1)))
    x = (x[oy : oy + patch, ox : ox + patch] - mean) / std
    boxes -= np.array([ox, oy, ox, oy], np.float32)
    ignore -= np.array([ox, oy, ox, oy], np.float32)
    # Dice the crop cuts in two are like dice cut by the frame edge: don't care.
    cw = np.clip(boxes[:, 2], 0, patch) - np.clip(boxes[:, 0], 0, patch)
    ch = np.clip(boxes[:, 3], 0, patch) - np.clip(boxes[:, 1], 0, patch)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    inside = (cw * ch) >= 0.97 * area
    ignore = np.concatenate([ignore, boxes[~inside & (cw > 0) & (ch > 0)]])
    boxes = boxes[inside]
    # Flips and quarter turns (the image is square now).
    if rng.random() < 0.5:
        x = x[:, ::-1]
        boxes = _flip_x(boxes, patch)
        ignore = _flip_x(ignore, patch)
    if rng.random() < 0.5:
        x = x.transpose(1, 0, 2)
        boxes = boxes[:, [1, 0, 3, 2]]
        ignore = ignore[:, [1, 0, 3, 2]]
    if rng.random() < 0.5:
        x = x[::-1]
        boxes = _flip_y(boxes, patch)
        ignore = _flip_y(ignore, patch)
    g = patch // STRIDE
    heat = np.zeros((g, g), np.float32)
    weight = np.ones((g, g), np.float32)
    reg = np.zeros((4, g, g), np.float32)
    regm = np.zeros((g, g), np.float32)
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32)
    for b in ignore:
        a0, b0 = max(0, int(b[0] / STRIDE)), max(0, int(b[1] / STRIDE))
        a1, b1 = min(g, math.ceil(b[2] / STRIDE)), min(g, math.ceil(b[3] / STRIDE))
        weight[b0:b1, a0:a1] = 0.0
    for b in boxes:
        bw, bh = b[2] - b[0], b[3] - b[1]
        cx, cy = (b[0] + b[2]) / 2 / STRIDE, (b[1] + b[3]) / 2 / STRIDE
        ix, iy = int(cx), int(cy)
        if not (0 <= ix < g and 0 <= iy < g):
            continue
        sigma = max(0.6, min(bw, bh) / STRIDE / 5.0)
        gauss = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma * sigma))
        np.maximum(heat, gauss, out=heat)
        reg[:, iy, ix] = (math.log(bw / SIZE_UNIT), math.log(bh / SIZE_UNIT), cx - ix, cy - iy)
        regm[iy, ix] = 1.0
    weight = np.maximum(weight, (heat > 0.5).astype(np.float32))
    return (np.ascontiguousarray(x.transpose(2, 0, 1)), heat, weight, reg, regm)


def _flip_x(b: np.ndarray, size: int) -> np.ndarray:
    return np.stack([size - b[:, 2], b[:, 1], size - b[:, 0], b[:, 3]], 1).reshape(-1, 4)


def _flip_y(b: np.ndarray, size: int) -> np.ndarray:
    return np.stack([b[:, 0], size - b[:, 3], b[:, 2], size - b[:, 1]], 1).reshape(-1, 4)


# ---------------------------------------------------------------------------- model


def make_model(width: tuple[int, int, int, int] = (16, 32, 48, 64), arch: str = "fpn") -> Any:
    """A small FPN-style net, depthwise wherever channels are many.

    `fpn` (the shipped detector) steps down with full 3x3 convs; `lite` opens with a 2x2
    stride-2 conv and steps down with depthwise stride-2 ones, which run in less time on one
    core (same channels, same head). Trained as the shipped one is (3000 steps, then 1500
    with --init, all with --wide), lite is less accurate on every set but rune55
    (`bench/vision.py`: recall, confident errors and values alike): its training loss stays
    higher, too little net. With `--width 16,48,64,96` it trains as low, but saves little
    time and still loses loose recall and rune55 value accuracy. So `fpn` is the default.
    """
    import torch
    from torch import nn

    def cbr(i: int, o: int, s: int = 1) -> list[nn.Module]:
        return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    def down(i: int, o: int) -> list[nn.Module]:
        if arch == "fpn":
            return cbr(i, o, 2)
        return [nn.Conv2d(i, i, 3, 2, 1, groups=i, bias=False), nn.BatchNorm2d(i), nn.ReLU(),
                nn.Conv2d(i, o, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    def stem(o: int) -> list[nn.Module]:
        if arch == "fpn":
            return cbr(3, o, 2)
        return [nn.Conv2d(3, o, 2, 2, 0, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    def dw(c: int, o: int | None = None, d: int = 1) -> list[nn.Module]:
        o = o or c
        return [nn.Conv2d(c, c, 3, 1, d, dilation=d, groups=c, bias=False), nn.BatchNorm2d(c),
                nn.ReLU(), nn.Conv2d(c, o, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    a, b, c, d = width

    class Det(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.s4 = nn.Sequential(*stem(a), *down(a, b), *dw(b), *dw(b))
            self.s8 = nn.Sequential(*down(b, c), *dw(c), *dw(c))
            self.s16 = nn.Sequential(*down(c, d), *dw(d), *dw(d, d, 2), *dw(d, d, 4))
            self.l16 = nn.Conv2d(d, c, 1)
            self.l8 = nn.Conv2d(c, b, 1)
            self.head = nn.Sequential(*dw(b), nn.Conv2d(b, 5, 1))
            with torch.no_grad():
                self.head[-1].bias.zero_()
                self.head[-1].bias[0] = -4.0  # start from "no die anywhere" (focal-loss prior)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            f4 = self.s4(x)
            f8 = self.s8(f4)
            f16 = self.s16(f8)
            u8 = f8 + nn.functional.interpolate(self.l16(f16), scale_factor=2.0, mode="nearest")
            u4 = f4 + nn.functional.interpolate(self.l8(u8), scale_factor=2.0, mode="nearest")
            return self.head(u4)

    return Det()


def losses(out: Any, heat: Any, weight: Any, reg: Any, regm: Any) -> tuple[Any, Any]:
    """CenterNet's penalty-reduced focal loss on the centres, L1 on size and offset."""
    import torch

    p = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 0.999).float()
    neg = (1 - pos) * weight
    lp = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    ln = -(torch.log(1 - p) * p**2 * (1 - heat) ** 4 * neg).sum()
    n = pos.sum().clamp(min=1)
    focal = (lp + ln) / n
    m = regm.unsqueeze(1)
    l1 = (torch.abs(out[:, 1:5] - reg) * m).sum() / (m.sum() * 4).clamp(min=1)
    return focal, l1


def train(items: list[tuple[str, str, dict]], args: argparse.Namespace) -> Any:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    fit = [(s, it) for s, n, it in items if not _held(s, n)]
    real = [it for s, it in fit if s != "synth"]
    synth = [it for s, it in fit if s == "synth"]
    print(f"fit on {len(real)} real and {len(synth)} synthetic images")
    model = make_model(tuple(int(v) for v in args.width.split(",")), args.arch)
    if args.init:
        # Fine-tuning: the shipped net already knows dice; new scenes only need to move it.
        model.load_state_dict(torch.load(args.init, map_location="cpu"))
        print(f"starting from {args.init}")
    if args.init_onnx:
        load_exported(model, Path(args.init_onnx))
        print(f"starting from {args.init_onnx}, batch-norm statistics frozen")
    model = model.to(memory_format=torch.channels_last)
    print(f"model: {sum(p.numel() for p in model.parameters())} parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps,
                                                pct_start=0.1)
    t0 = time.time()
    run_f = run_r = 0.0
    for step in range(args.steps):
        batch = []
        for _ in range(args.batch):
            pool = real if (rng.random() < args.real_share and real) else synth
            batch.append(_sample(pool[int(rng.integers(len(pool)))], rng, args.patch))
        xb, hb, wb, rb, mb = (torch.from_numpy(np.stack(t)) for t in zip(*batch, strict=True))
        model.train()
        if args.init_onnx:
            # The exported net's batch norms are folded into its convs: unfolded, their
            # statistics are an identity that batch statistics must not replace.
            for m in model.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.eval()
        out = model(xb.contiguous(memory_format=torch.channels_last))
        focal, l1 = losses(out, hb, wb, rb, mb)
        loss = focal + args.reg_weight * l1
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        run_f = 0.98 * run_f + 0.02 * focal.item()
        run_r = 0.98 * run_r + 0.02 * l1.item()
        if (step + 1) % 100 == 0:
            print(f"step {step + 1}/{args.steps}: focal {run_f:.3f}  l1 {run_r:.3f}  "
                  f"{time.time() - t0:.0f} s", flush=True)
        if args.checkpoint and ((step + 1) % 1000 == 0 or step + 1 == args.steps):
            # The last step too: a later fine-tune (--init) starts from the shipped weights.
            torch.save(model.state_dict(), args.checkpoint)
    return model.eval()


# ---------------------------------------------------------------------------- export, report


def fold(model: Any) -> Any:
    """Fold every BatchNorm into the conv before it, for a smaller and faster ONNX graph."""
    from torch import nn
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    for name in ("s4", "s8", "s16", "head"):
        seq = getattr(model, name)
        layers = list(seq)
        out: list[nn.Module] = []
        i = 0
        while i < len(layers):
            if (i + 1 < len(layers) and isinstance(layers[i], nn.Conv2d)
                    and isinstance(layers[i + 1], nn.BatchNorm2d)):
                out.append(fuse_conv_bn_eval(layers[i], layers[i + 1]))
                i += 2
            else:
                out.append(layers[i])
                i += 1
        setattr(model, name, nn.Sequential(*out))
    return model


def export(model: Any, meta_extra: dict, path: Path) -> None:
    import copy

    import torch

    fused = fold(copy.deepcopy(model).eval().to(memory_format=torch.contiguous_format))
    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, 384, 512)
    torch.onnx.export(
        fused, (dummy,), str(path), opset_version=13, input_names=["frame"],
        output_names=["centres"], dynamic_axes={"frame": {2: "h", 3: "w"},
                                                "centres": {2: "gh", 3: "gw"}},
        dynamo=False,
    )
    meta = {"input_long": INPUT_LONG, "stride": STRIDE, "multiple": MULTIPLE,
            "size_unit": SIZE_UNIT, **meta_extra, "date": dt.date.today().isoformat()}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    x = np.random.default_rng(0).normal(size=(1, 3, 384, 512)).astype(np.float32)
    with torch.no_grad():
        ref = model.eval()(torch.from_numpy(x)).numpy()
    diff = float(np.abs(np.asarray(run_onnx(path, x)) - ref).max())
    print(f"exported {path} ({path.stat().st_size / 1024:.0f} KiB); ONNX Runtime vs torch max "
          f"|diff| {diff:.2e}")
    if diff > 1e-3:
        raise SystemExit("ONNX Runtime disagrees with torch: the export is broken")


def load_exported(model: Any, path: Path) -> None:
    """Start a fine-tune from a shipped detector (`path`, as `export` and `to_blocks` wrote
    it), whose training weights were not kept: each folded conv goes back before a batch
    norm that passes it through (mean 0, variance 1 - eps, scale 1, the folded bias as its
    shift), and the block-input stem back to a stride-2 conv. Checked against ONNX Runtime on
    the file itself before training starts."""
    import onnx
    import torch
    from onnx import numpy_helper
    from torch import nn

    weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    meta_path = path.with_suffix(".json")
    blocks = meta_path.is_file() and json.loads(meta_path.read_text("utf-8")).get(
        "space_to_depth", False)

    def put(p: Any, a: np.ndarray) -> None:
        if tuple(p.shape) != a.shape:
            raise SystemExit(f"{path}: a weight of shape {a.shape} where the net has "
                             f"{tuple(p.shape)}: another architecture (--arch, --width)?")
        p.data.copy_(torch.from_numpy(np.array(a, np.float32)))  # a writable copy

    with torch.no_grad():
        for name in ("s4", "s8", "s16", "head"):
            layers = list(getattr(model, name))
            i = j = 0
            while i < len(layers):
                layer = layers[i]
                if isinstance(layer, nn.Conv2d):
                    w, b = weights[f"{name}.{j}.weight"], weights[f"{name}.{j}.bias"]
                    if name == "s4" and j == 0 and blocks:
                        w = _unblocked(w, layer)
                    put(layer.weight, w)
                    nxt = layers[i + 1] if i + 1 < len(layers) else None
                    if isinstance(nxt, nn.BatchNorm2d):
                        nxt.running_mean.zero_()
                        nxt.running_var.fill_(1.0 - nxt.eps)
                        nxt.weight.fill_(1.0)
                        put(nxt.bias, b)
                        i += 1
                    else:
                        put(layer.bias, b)
                i += 1
                j += 1
        for name in ("l16", "l8"):
            put(getattr(model, name).weight, weights[f"{name}.weight"])
            put(getattr(model, name).bias, weights[f"{name}.bias"])
    x = np.random.default_rng(0).normal(size=(1, 3, 384, 512)).astype(np.float32)
    got = np.asarray(run_onnx(path, space_to_depth(x) if blocks else x))
    with torch.no_grad():
        diff = float(np.abs(model.eval()(torch.from_numpy(x)).numpy() - got).max())
    print(f"{path} loaded: torch vs ONNX Runtime max |diff| {diff:.2e}")
    if diff > 1e-3:
        raise SystemExit(f"{path} did not load into this net faithfully")


def _unblocked(w2: np.ndarray, conv: Any) -> np.ndarray:
    """The stride-2 stem conv's taps back from `space_to_depth_stem`'s regrouping."""
    k_out, c_in = conv.weight.shape[:2]
    kh, kw = conv.kernel_size
    pad_h, pad_w = conv.padding

    def taps(k: int, pad: int) -> tuple[list[tuple[int, int]], int]:
        out = [((t - pad) // 2, (t - pad) % 2) for t in range(k)]
        return out, -min(o for o, _ in out)

    rows, top = taps(kh, pad_h)
    cols, left = taps(kw, pad_w)
    w6 = w2.reshape(k_out, c_in, 2, 2, w2.shape[2], w2.shape[3])
    w = np.zeros((k_out, c_in, kh, kw), np.float32)
    for ty, (oy, ay) in enumerate(rows):
        for tx, (ox, ax) in enumerate(cols):
            w[:, :, ty, tx] = w6[:, :, ay, ax, oy + top, ox + left]
    return w


def space_to_depth_stem(model: Any) -> Any:
    """Rewrite an ONNX model's first conv (stride 2) to take `detector.space_to_depth`'s
    input: 2x2 pixel blocks as channels, the conv's taps regrouped by the block phase they
    fall on, so it runs with stride 1 over a quarter of the places. The same sums in another
    order: outputs agree to float rounding. The shipped detector takes its input so."""
    import onnx
    from onnx import helper, numpy_helper

    g = model.graph
    conv = g.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
    if conv.op_type != "Conv" or list(attrs.get("strides", [1, 1])) != [2, 2] \
            or attrs.get("group", 1) != 1 or list(attrs.get("dilations", [1, 1])) != [1, 1] \
            or conv.input[0] != g.input[0].name:
        raise ValueError("the model's first node is not a plain stride-2 conv on its input")
    inits = {i.name: i for i in g.initializer}
    w = numpy_helper.to_array(inits[conv.input[1]])
    k_out, c_in, kh, kw = w.shape
    pads = list(attrs.get("pads", [0, 0, 0, 0]))

    def taps(k: int, pad: int) -> tuple[list[tuple[int, int]], int, int]:
        # Input row 2i + t - pad = 2(i + off) + phase: each tap's block offset and phase.
        out = [((t - pad) // 2, (t - pad) % 2) for t in range(k)]
        lo = min(o for o, _ in out)
        return out, -lo, max(o for o, _ in out) - lo + 1

    rows, top, kh2 = taps(kh, pads[0])
    cols, left, kw2 = taps(kw, pads[1])
    w2 = np.zeros((k_out, c_in, 2, 2, kh2, kw2), np.float32)
    for ty, (oy, ay) in enumerate(rows):
        for tx, (ox, ax) in enumerate(cols):
            w2[:, :, ay, ax, oy + top, ox + left] += w[:, :, ty, tx]
    inits[conv.input[1]].CopyFrom(
        numpy_helper.from_array(w2.reshape(k_out, c_in * 4, kh2, kw2), conv.input[1]))
    del conv.attribute[:]
    conv.attribute.extend([
        helper.make_attribute("dilations", [1, 1]), helper.make_attribute("group", 1),
        helper.make_attribute("kernel_shape", [kh2, kw2]), helper.make_attribute("strides", [1, 1]),
        helper.make_attribute("pads", [top, left, kh2 - 1 - top, kw2 - 1 - left])])
    dims = g.input[0].type.tensor_type.shape.dim
    dims[1].dim_value = c_in * 4
    for d in (dims[2], dims[3]):
        if d.HasField("dim_value"):
            d.dim_value //= 2
    onnx.checker.check_model(model)
    return model


def to_blocks(path: Path) -> None:
    """Rewrite an exported detector in place for `space_to_depth` input (see
    space_to_depth_stem), after checking that it answers as before through ONNX Runtime."""
    import onnx

    meta_path = path.with_suffix(".json")
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    if meta.get("space_to_depth"):
        raise SystemExit(f"{path} takes space-to-depth input already")
    x = np.random.default_rng(0).normal(size=(1, 3, 384, 512)).astype(np.float32)
    ref = np.asarray(run_onnx(path, x))
    model = space_to_depth_stem(onnx.load(str(path)))
    onnx.save(model, str(path))
    diff = float(np.abs(np.asarray(run_onnx(path, space_to_depth(x))) - ref).max())
    print(f"{path}: first conv over 2x2 blocks; ONNX Runtime max |diff| {diff:.2e}")
    if diff > 1e-4:
        raise SystemExit("the rewritten detector disagrees with the plain one")
    meta["space_to_depth"] = True
    meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def report(items: list[tuple[str, str, dict]], path: Path) -> dict:
    """Held-out recall/precision at IoU >= 0.5 through ONNX Runtime, as the reader will run it."""
    det = Detector(path)
    cv2.setNumThreads(1)
    out: dict[str, dict] = {}
    times = []
    for set_name in [*SETS, "synth"]:
        tp = fn = fp = 0
        for s, n, it in items:
            if s != set_name or not _held(s, n):
                continue
            img = it["img"]
            t = time.perf_counter()
            o, scale = det.heatmap(img)
            times.append(time.perf_counter() - t)
            dets = decode(o, scale, img.shape, 0.3)
            labels = [list(b) for b in it["boxes"]]
            ign = [list(b) for b in it["ignore"]]
            used = set()
            for d in dets:
                best, bj = 0.0, -1
                for j, b in enumerate(labels):
                    v = iou(d.bbox, b)
                    if v > best and j not in used:
                        best, bj = v, j
                if best >= 0.5:
                    used.add(bj)
                    tp += 1
                elif not any(iou(d.bbox, b) > 0.3 for b in ign):
                    fp += 1
            fn += len(labels) - len(used)
        rec = tp / max(1, tp + fn)
        prec = tp / max(1, tp + fp)
        out[set_name] = {"recall": round(rec, 4), "precision": round(prec, 4),
                         "dice": tp + fn}
        print(f"  {set_name:8s} held-out dice {tp + fn:5d}  recall {rec:.3f}  "
              f"precision {prec:.3f}")
    print(f"net and its input, one thread, {INPUT_LONG}px: median {np.median(times) * 1000:.1f} ms")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", type=int, default=2400)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--patch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--reg-weight", type=float, default=1.0)
    ap.add_argument("--real-share", type=float, default=0.35)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default="/tmp/detector-cache")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--checkpoint", default="/tmp/detector-cache/last.pt")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--wide", action="store_true",
                    help="a third of the synthetic scenes from the `wide` preset (wide lens, "
                         "hand-held heights)")
    ap.add_argument("--arch", choices=("fpn", "lite"), default="fpn",
                    help="fpn: the shipped detector's full-conv steps; lite: depthwise "
                         "stride-2 steps, quicker but less accurate (see make_model)")
    ap.add_argument("--width", default="16,32,48,64",
                    help="channels of the stem (stride 2) and at strides 4, 8 and 16")
    ap.add_argument("--init", help="state dict to start from (the --checkpoint another run wrote)")
    ap.add_argument("--init-onnx", metavar="MODEL",
                    help="start from an exported detector instead (e.g. the shipped one), "
                         "its batch-norm statistics frozen (see load_exported)")
    ap.add_argument("--makers", type=float, default=0.0, metavar="SHARE",
                    help="this share of the synthetic scenes with other makers' dice "
                         "(translucent, marbled, speckled; see MAKER_MATERIALS)")
    ap.add_argument("--blocks", metavar="MODEL",
                    help="only rewrite this exported detector for space-to-depth input "
                         "(see space_to_depth_stem) and stop")
    args = ap.parse_args(argv)
    if args.blocks:
        to_blocks(Path(args.blocks))
        return 0
    items = build_dataset(args)
    model = train(items, args)
    path = Path(args.out)
    export(model, {"steps": args.steps, "scenes": args.scenes, "patch": args.patch,
                   "wide": args.wide, "init": args.init or args.init_onnx,
                   "arch": args.arch, "width": args.width, "makers": args.makers}, path)
    to_blocks(path)
    figures = report(items, path)
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    meta["held_out"] = figures
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train the die-value classifier (`vision/valuenet.py`) and export it to ONNX for ONNX Runtime.

Run by hand from the repository root, never from `make test`; PyTorch lives in its own venv so
the project venv stays light enough for a Raspberry Pi:

    python3 -m venv .venv-train
    .venv-train/bin/pip install -r training/requirements.txt
    .venv-train/bin/python -m training.train_valuenet --orient      # the colour net
    .venv-train/bin/python -m training.train_valuenet --channels 1  # the grey net
    .venv-train/bin/python -m training.train_valuenet --channels 1 --grey principal \
        --out /tmp/grey-principal.onnx  # a grey net on the crop's principal colour axis
        # (not shipped: docs/development.md, *What has been measured and left out*)

The reader averages four value nets (`vision.valuenet.DEFAULT_MODELS`) and asks two context
nets only whether a sure read leans (`CONTEXT_MODELS`). Each is one run of this script, and
the .json beside each model lists what it was trained on:

    valuenet.onnx              --orient
    valuenet-grey.onnx         --channels 1
    valuenet-wide.onnx         --orient --wide-scenes 500
    valuenet-lean.onnx         --orient --wide-scenes 500 --cocked-weight 8 --cocked-scenes 600
    valuenet-context.onnx      the lean recipe with --crop-scale 1.6
    valuenet-context-top.onnx  the context recipe with --top-face-share 0.5

(each with `--out vision/models/NAME` but the first two, which go there by default). Each run
takes about 20 minutes on two cores: 2-5 to cut ~90,000 crops (rendering 1,200 synthetic
scenes; cached in /tmp/valuenet-cache, so a rerun with the same data options and the same
`crop_for` skips it) and the rest to train 18 epochs at 35-60 s each (over 200 s each while
other jobs share the cores: `--epochs 10` is then the quick variant); a recipe with more scenes
takes longer (the context-top net, its crops cut afresh, about 47 minutes). Writes
vision/models/valuenet.onnx (colour) or valuenet-grey.onnx (grey) and the .json beside it
(`--out` puts a candidate elsewhere), then prints held-out figures and the speed.

Only images for which `vision.valuenet.is_training_image` holds are learnt from; the other half
of every labelled set is kept out so the figures printed at the end (and by the benchmark) are
honest. A slice of the training images (chosen by another hash) is held back for early stopping
and for fitting the softmax temperature.

Data: the real photo sets and renders under /work/shared/data (read through vision.evaluate, so
the stretch fix and the 1280 px downscale are the reader's own) plus, when `vision.synth`
imports, synthetic box-lid scenes. Positives are augmented in scale, light, blur, noise and
JPEG, and cut around the label box jittered in place, as a detector could box the die. With
`--detector-share SHARE` that share of them is cut instead around the box the shipped detector
(`vision/detector.py`, run on the very image as the reader runs it) gives for that die,
matched by IoU >= 0.5 and nudged a little: the reader crops detector boxes, which sit
differently from label boxes (shifted, tighter or looser). Negatives (class 0) are die-sized
boxes on the background and boxes that catch only part of a die or straddle two; class 7 is a
cocked die (renders, synth) or a die smeared by heavy motion blur.

`--edge-scenes N` adds N scenes from `edge_scene`: calm trays of flat dice spread towards the
floor's rim, where a mounted camera's perspective shows a strip of side face (with its pips)
on every die, and where the clean dice the nets doubted on the demo camera lay (just over the
reader's p(unreadable) limit). Edits here change the crops: bump CACHE_VERSION (the cache key
also covers `crop_for`'s module, `vision.synth` and the detector model).

`--detector-share` and `--edge-scenes` are off by default (0 in every shipped recipe): rim
scenes made the demo camera's clean dice surer but the held-out sets less certain and rune55's
values worse, and with detector boxes and hard negatives besides they read every held-out set
worse. The spawned workers that cut the crops receive these options through the pool's
initializer (`_set_options`), like every other option that shapes a crop.

`--wide-scenes N` adds N scenes of `vision.synth`'s `wide` preset, whose wide lens shows tall
side faces, the ones the mounted renders punish; the wide and lean nets learn from 500.

`--hard-negatives K` (6 by default, in every shipped recipe): every box the shipped detector
gives on a training image that overlaps no labelled die is cut K times, augmented, as "not a
die". Random background boxes seldom land on what the detector takes for a die (byler's grey
counters, rune55's printed eyes, tray corners, box art), so without them the nets passed those
on as dice and the reader's precision suffered; they hardly move value accuracy.

`--teachers` adds the given nets' averaged answer as a soft target (`--distil-weight` of the
loss), to distil several nets into one and spend a quarter of the time. Measured with the
four members as teachers: the student reads about as well as one member, not as the four, so
the reader averages the four and no shipped recipe uses it.

`--cocked-scenes N` adds N scenes of 3-5 cocked dice each (hard, normal and wide in turn;
`cocked_scene`), since a cocked die read by its clean top face is the commonest confident
error and the presets show few leans. With `--cocked-weight 8` they make the lean net, the
member quickest to doubt a lean, at little cost to the real sets' values; the wide net does
without them, where they cost rune55 value accuracy. `--shallow-leans` (every other cocked
scene leaning only 18-26 degrees, where the lean net's remaining confident errors lie) was
measured in the lean
and the context recipes and is no better: off by default.

`--crop-scale S` cuts crops S times the box's longer side instead of 1.15, so the net sees
what a die rests on. The context net (`valuenet-context.onnx`) is the lean recipe at 1.6: it
reads values worse than the lean net, the die being smaller in its crop, so the reader does
not average it in, but it doubts cocked dice that all four members read as certain, which is
all the reader asks of it. At 2.0 the die is too small in its crop: more right reads doubted
and values worse still.

`--top-face-share SHARE` cuts that share of a synthetic cocked die's crops round its top
face's box (`top_bbox`, from `vision.synth`) instead of the whole die's: the detector often
boxes a leaning die's clean top face alone, which the other crops never frame so. The second
context net (`valuenet-context-top.onnx`, averaged with the first) is the context recipe with
`--top-face-share 0.5`.

`--exposure SHARE` shoots that share of augmented crops 0.45-2x brighter or darker, clipped,
since the colour gains alone stop at 1.25, and a lamp that clips a glittery die's body to its
pips' white makes rune55 read far worse. Measured as the colour net and in the value nets'
recipes, it read some sets better and others worse, so it is off by default
(docs/development.md, *What has been measured and left out*). So are `--channel-shuffle` and
`--fancy-scenes`, measured likewise.

`--channels 3` cuts colour crops instead of grey ones (see `crop_for`): grey loses pips that
differ from their die in hue more than in brightness, such as the red pips of byler's smoky
black dice, which made most of its wrong reads.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.evaluate import iou, load_example, load_manifest
from vision.reader import DETECT_MIN
from vision.valuenet import (
    CLASSES,
    CROP_SCALE,
    CROP_SIZE,
    GREY_AXES,
    UNREADABLE,
    ValueNet,
    crop_for,
    is_training_image,
    principal_grey,
    towards_centre,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("/work/shared/data")
SETS = {
    "byler": DATA / "realdice" / "byler-d6",
    "rune55": DATA / "realdice" / "rune55-trays",
    "mounted": DATA / "renders" / "mounted",
    "loose": DATA / "renders" / "loose",
}
MAX_LONG_SIDE = 1280
CACHE_VERSION = 6  # bump when the sampling below changes, so stale crops are not reused
# Cocked dice are rare in scenes and their clean top face is the worst confident error
# (the label wants null): many augmented copies teach "unreadable" for a leaning die.
COCKED_WEIGHT = 3  # set from --cocked-weight. 3 in every recipe but the lean net's (8): at 8
# the grey and the colour nets made fewer synthetic confident errors but read the mounted
# renders' held-out values worse, so only the member meant to doubt leans takes it.
MODELS = ROOT / "vision" / "models"
OUT = {3: MODELS / "valuenet.onnx", 1: MODELS / "valuenet-grey.onnx"}  # by --channels
# A die's box from the shipped detector counts as its own when they overlap this much (the
# benchmark's match); that share of a die's augmented copies is then cut around the detector's
# box, the rest around the jittered label box.
DET_IOU = 0.5
DET_SHARE = 0.0  # set from --detector-share, in the workers too (`_set_options`)
# Augmented crops per hard negative: a box the shipped detector gives on a training image that
# overlaps no labelled die (IoU < HARD_IOU): tray corners, printed art, byler's grey counters,
# rune55's printed eyes. Random background boxes rarely land on such things, so without these
# the net took them for dice (byler's precision above all). Set from --hard-negatives.
HARD = 0
HARD_IOU = 0.1  # below this a detection is nobody's die; between it and DET_IOU, a poor box
CHANNELS = 1  # set from --channels likewise: grey (1) or colour (3) crops
GREY = "luma"  # set from --grey likewise: which grey a one-channel crop is (crop_for's grey)
ORIENT = False  # set from --orient likewise: crops turned so the frame's centre is up
SHALLOW = False  # set from --shallow-leans likewise: half the cocked scenes lean 18-26 deg
SCALE = CROP_SCALE  # set from --crop-scale likewise: the crop square over the box's side
# Share of colour crops whose channels are put in a random order, each batch (--channel-shuffle):
# a red die becomes a blue or a green one with the same pips, so the net learns pips against
# their die in any paint rather than the paints of the dice it was shown.
SHUFFLE = 0.0
SIZE = CROP_SIZE  # set from --crop-size: the crop's side in pixels
# Share of augmented crops shot at another exposure (--exposure): the whole patch brightened
# or darkened up to about 2x and clipped as a sensor clips, so pips that merge with a glaring
# body or sink into a dark one are seen in training, not only the 0.75-1.25 colour gains.
EXPOSURE = 0.0
EXPOSURE_RANGE = (0.45, 2.0)
# Share of a synthetic cocked die's augmented crops cut around its top face's box rather than
# the whole die's (--top-face-share): the detector often boxes a leaning die's clean top face
# alone, and crops around the whole die never show the nets a lean framed so.
TOP_SHARE = 0.0
UP_JITTER = 20.0  # degrees: the camera's axis is only roughly the frame's centre

# Roles of an image's crops.
FIT, VAL, HELD = 0, 1, 2
# Kinds of crop, kept so the held-out report can split them.
K_CLEAN, K_AUG, K_BG, K_PART, K_DET, K_HARD = 0, 1, 2, 3, 4, 5


# ---------------------------------------------------------------------------- sampling


def _role(name: str) -> int:
    if not is_training_image(name):
        return HELD
    # About one training image in eight validates; a second hash keeps it independent of the
    # held-out split.
    return VAL if hashlib.md5(f"val:{name}".encode()).hexdigest()[0] in "01" else FIT


def _side(box: list[float]) -> float:
    return max(box[2] - box[0], box[3] - box[1])


def _centred(cx: float, cy: float, w: float, h: float) -> list[float]:
    return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]


def _jitter(box: list[float], rng: np.random.Generator) -> list[float]:
    """A box a detector could plausibly give for this die: shifted ±12%, scaled ±15%."""
    s = _side(box)
    cx = (box[0] + box[2]) / 2 + rng.uniform(-0.12, 0.12) * s
    cy = (box[1] + box[3]) / 2 + rng.uniform(-0.12, 0.12) * s
    k = rng.uniform(0.85, 1.15)
    return _centred(cx, cy, (box[2] - box[0]) * k, (box[3] - box[1]) * k)


def _nudge(box: list[float], rng: np.random.Generator) -> list[float]:
    """The detector's own box, moved a little (±4%, ±6% in size): it sits a bit better on the
    images it was trained on than on new ones."""
    s = _side(box)
    cx = (box[0] + box[2]) / 2 + rng.uniform(-0.04, 0.04) * s
    cy = (box[1] + box[3]) / 2 + rng.uniform(-0.04, 0.04) * s
    k = rng.uniform(0.94, 1.06)
    return _centred(cx, cy, (box[2] - box[0]) * k, (box[3] - box[1]) * k)


_DETECTOR: list[Any] = []


def detector_boxes(image: np.ndarray) -> list[list[float]] | None:
    """The boxes the shipped detector gives the reader for this image (same threshold, same
    frame-edge rule as `DiceReader._read_detected`); None when there is no detector."""
    if not _DETECTOR:
        try:
            from vision.detector import Detector

            _DETECTOR.append(Detector())
        except (ImportError, FileNotFoundError, cv2.error):
            _DETECTOR.append(None)
    if _DETECTOR[0] is None:
        return None
    h, w = image.shape[:2]
    edge = 0.004 * max(h, w)
    return [list(d.bbox) for d in _DETECTOR[0].detect(image, DETECT_MIN)
            if d.bbox[0] > edge and d.bbox[1] > edge and d.bbox[2] < w - edge
            and d.bbox[3] < h - edge]


def match_detections(
    boxes: list[list[float]], dets: list[list[float]] | None
) -> dict[int, list[float]]:
    """Label index -> the detector box that is its best match and it the box's (IoU >= DET_IOU)."""
    if not dets or not boxes:
        return {}
    m = np.array([[iou(b, d) for d in dets] for b in boxes])
    out = {}
    for i in range(len(boxes)):
        j = int(m[i].argmax())
        if m[i, j] >= DET_IOU and int(m[:, j].argmax()) == i:
            out[i] = dets[j]
    return out


def _max_iou(box: list[float], boxes: list[list[float]]) -> float:
    return max((iou(box, b) for b in boxes), default=0.0)


def _background_box(
    rng: np.random.Generator, w: int, h: int, boxes: list[list[float]], sides: list[float]
) -> list[float] | None:
    for _ in range(30):
        s = float(rng.choice(sides)) * rng.uniform(0.6, 1.5) if sides else rng.uniform(20, 120)
        s = min(s, 0.9 * min(w, h))
        ar = rng.uniform(0.8, 1.25)
        cx, cy = rng.uniform(s / 2, w - s / 2), rng.uniform(s / 2, h - s / 2)
        b = _centred(cx, cy, s * ar, s / ar)
        if _max_iou(b, boxes) < 0.1:
            return b
    return None


def _partial_box(
    rng: np.random.Generator, boxes: list[list[float]], i: int
) -> list[float] | None:
    """A box that catches a die badly: half of it, its middle, too much around it, or two dice."""
    box = boxes[i]
    s = _side(box)
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    bw, bh = box[2] - box[0], box[3] - box[1]
    for _ in range(20):
        mode = rng.integers(4)
        if mode == 0:  # shifted off the die
            a = rng.uniform(0, 2 * math.pi)
            d = rng.uniform(0.45, 0.8) * s
            k = rng.uniform(0.8, 1.2)
            b = _centred(cx + d * math.cos(a), cy + d * math.sin(a), bw * k, bh * k)
        elif mode == 1:  # the middle of the top face only
            k = rng.uniform(0.4, 0.6)
            b = _centred(cx, cy, bw * k, bh * k)
        elif mode == 2:  # far too big around the die
            k = rng.uniform(1.7, 2.4)
            b = _centred(
                cx + rng.uniform(-0.3, 0.3) * s, cy + rng.uniform(-0.3, 0.3) * s, bw * k, bh * k
            )
        else:  # straddling this die and its nearest neighbour
            if len(boxes) < 2:
                continue
            ox, oy = min(
                (((o[0] + o[2]) / 2, (o[1] + o[3]) / 2) for j, o in enumerate(boxes) if j != i),
                key=lambda c: math.hypot(c[0] - cx, c[1] - cy),
            )
            if math.hypot(ox - cx, oy - cy) > 2.5 * s:
                continue
            t = rng.uniform(0.35, 0.65)
            mx, my = cx + t * (ox - cx), cy + t * (oy - cy)
            b = _centred(mx, my, bw, bh)
        m = _max_iou(b, boxes)
        if 0.1 <= m <= 0.4:
            return b
    return None


def _region(image: np.ndarray, box: list[float], grow: float | None = None
            ) -> tuple[np.ndarray, list[float]]:
    """Cut a context patch around the crop square (edge pixels repeated outside the image) so
    augmentations act on a few thousand pixels, not the whole frame. `grow`: the patch's side
    over the box's (by default this run's crop scale, with room to turn the crop)."""
    side = _side(box) * (SCALE * (1.6 if ORIENT else 1.25) if grow is None else grow) + 4
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    n = max(4, round(side))
    left, top = round(cx - n / 2), round(cy - n / 2)
    h, w = image.shape[:2]
    ax0, ay0 = min(max(left, 0), w - 1), min(max(top, 0), h - 1)
    ax1, ay1 = max(min(left + n, w), ax0 + 1), max(min(top + n, h), ay0 + 1)
    patch = image[ay0:ay1, ax0:ax1]
    patch = cv2.copyMakeBorder(
        patch, max(ay0 - top, 0), max(top + n - ay1, 0), max(ax0 - left, 0),
        max(left + n - ax1, 0), cv2.BORDER_REPLICATE,
    )
    return patch, [box[0] - left, box[1] - top, box[2] - left, box[3] - top]


def _cut(image: np.ndarray, box: list[float]) -> np.ndarray:
    """`crop_for` as this run's options set it: channels, turn and scale."""
    return crop_for(image, box, CHANNELS, _up(image, box), SCALE, SIZE, grey=GREY)


def _motion_kernel(length: float, angle: float) -> np.ndarray:
    n = max(3, round(length) | 1)
    k = np.zeros((n, n), np.float32)
    c = n // 2
    dx, dy = math.cos(angle) * c, math.sin(angle) * c
    cv2.line(k, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1)
    return k / max(k.sum(), 1e-6)


def _up(image: np.ndarray, box: list[float], rng: np.random.Generator | None = None
        ) -> float | None:
    """The crop's turn (see `crop_for`) for a box of this image, jittered when rng is given."""
    if not ORIENT:
        return None
    up = towards_centre(image.shape, box)
    return up + float(rng.uniform(-UP_JITTER, UP_JITTER)) if rng is not None else up


def _augmented(
    image: np.ndarray, box: list[float], rng: np.random.Generator, smear: bool = False
) -> np.ndarray:
    """crop_for on a copy of the scene with camera and lamp changed: size, white balance, gamma,
    contrast, blur, noise, JPEG, then a random 90° turn and mirror (a face reads the same;
    turned crops are only mirrored, which keeps their top)."""
    up = _up(image, box, rng)
    patch, b = _region(image, box)
    s = _side(b)
    if rng.random() < 0.5:
        target = math.exp(rng.uniform(math.log(16), math.log(90)))
        if target < s:
            f = target / s
            size = (max(4, round(patch.shape[1] * f)), max(4, round(patch.shape[0] * f)))
            patch = cv2.resize(patch, size, interpolation=cv2.INTER_AREA)
            b = [v * f for v in b]
            s *= f
    x = patch.astype(np.float32)
    x *= rng.uniform(0.75, 1.25, size=3).astype(np.float32)
    if EXPOSURE and rng.random() < EXPOSURE:
        lo, hi = EXPOSURE_RANGE
        x *= math.exp(rng.uniform(math.log(lo), math.log(hi)))  # clipped with the gamma below
    x = 255.0 * np.power(np.clip(x, 0, 255) / 255.0, math.exp(rng.uniform(-0.5, 0.5)))
    m = float(x.mean())
    x = (x - m) * rng.uniform(0.6, 1.3) + m + rng.uniform(-30, 30)
    if smear:
        k = _motion_kernel(rng.uniform(0.8, 1.3) * s, rng.uniform(0, math.pi))
        x = cv2.filter2D(x, -1, k, borderType=cv2.BORDER_REPLICATE)
    elif rng.random() < 0.12:
        k = _motion_kernel(rng.uniform(2, max(3, 0.25 * s)), rng.uniform(0, math.pi))
        x = cv2.filter2D(x, -1, k, borderType=cv2.BORDER_REPLICATE)
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.3, 1.2) * max(s, 14) / 40)
    if rng.random() < 0.5:
        x += rng.normal(0, rng.uniform(1, 10), x.shape).astype(np.float32)
    u8 = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.4:
        ok, buf = cv2.imencode(".jpg", u8, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 91))])
        if ok:
            u8 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return _turn(crop_for(u8, b, CHANNELS, up, SCALE, SIZE, grey=GREY), rng)


def _turn(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if not ORIENT:
        crop = np.rot90(crop, int(rng.integers(4)), axes=(-2, -1))
    return np.ascontiguousarray(crop[..., ::-1] if rng.random() < 0.5 else crop)


def _crop_shape() -> tuple[int, ...]:
    return (SIZE, SIZE) if CHANNELS == 1 else (CHANNELS, SIZE, SIZE)


def _nchw(x: np.ndarray) -> np.ndarray:
    """Crops as the net takes them: float32, a channel axis even for grey."""
    x = np.asarray(x, np.float32)
    return x[:, None] if x.ndim == 3 else x


def _label(die: dict) -> int:
    return UNREADABLE if die.get("value") is None or die.get("cocked") else int(die["value"])


def crops_for_scene(
    image: np.ndarray, dice: list[dict], role: int, seed: int, copies: int,
    dets: list[list[float]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All crops one image gives: (crops float16, labels, kinds).

    Held-out images give the label boxes as they are plus unaugmented negatives, the shape of a
    benchmark, and (kind K_DET) the detector's boxes matched to dice, the shape of a run;
    training images give `copies` augmented crops per die, DET_SHARE of them around the
    detector's box when it found the die, and about 0.7 as many negatives per die crop, a mix
    that keeps "not a die" frequent without drowning the values. Validation images also give
    the plain detector crops, so the temperature is fitted on boxes as the reader cuts them.
    """
    rng = np.random.default_rng(seed)
    h, w = image.shape[:2]
    boxes = [list(map(float, d["bbox"])) for d in dice]
    usable = [i for i, d in enumerate(dice) if not d.get("cut")]
    sides = [_side(boxes[i]) for i in usable]
    xs: list[np.ndarray] = []
    ys: list[int] = []
    ks: list[int] = []

    def add(x: np.ndarray, y: int, k: int) -> None:
        xs.append(x)
        ys.append(y)
        ks.append(k)

    matched = match_detections(boxes, dets)
    for i in usable:
        y = _label(dice[i])
        det = matched.get(i)
        if role != FIT:
            add(_cut(image, boxes[i]), y, K_CLEAN)
            if det is not None:
                add(_cut(image, det), y, K_DET)
        if role == HELD:
            continue
        n = copies if role == FIT else 3
        n *= COCKED_WEIGHT if y == UNREADABLE else 1
        n_det = round(n * DET_SHARE) if det is not None else 0
        # (No draw for it unless asked for, so the other recipes' random draws, and so their
        # crops, do not depend on it.)
        top = dice[i].get("top_bbox") if y == UNREADABLE and TOP_SHARE > 0 else None
        for c in range(n):
            smear = y != UNREADABLE and rng.random() < 0.03
            box = _nudge(det, rng) if c < n_det and det is not None else _jitter(boxes[i], rng)
            if top is not None and rng.random() < TOP_SHARE:
                box = _jitter(list(map(float, top)), rng)
            add(_augmented(image, box, rng, smear), UNREADABLE if smear else y, K_AUG)
    n_dice_crops = sum(k != K_DET for k in ks)
    n_bg = max(2, round(0.45 * n_dice_crops)) if role != HELD else max(2, len(usable))
    n_part = max(1, round(0.25 * n_dice_crops)) if role != HELD else max(1, len(usable) // 2)
    for _ in range(n_bg):
        b = _background_box(rng, w, h, boxes, sides)
        if b is not None:
            add(_cut(image, b) if role == HELD
                else _augmented(image, b, rng), 0, K_BG)
    for _ in range(n_part if usable else 0):
        b = _partial_box(rng, boxes, int(rng.choice(usable)))
        if b is not None:
            add(_cut(image, b) if role == HELD
                else _augmented(image, b, rng), 0, K_PART)
    for d in (dets or []) if HARD else []:
        if _max_iou(d, boxes) >= HARD_IOU:
            continue
        if role == HELD:
            add(_cut(image, d), 0, K_HARD)
            continue
        for _ in range(HARD if role == FIT else 1):
            add(_augmented(image, _nudge(d, rng), rng), 0, K_HARD)
    if not xs:
        return (np.zeros((0, *_crop_shape()), np.float16), np.zeros(0, np.int8),
                np.zeros(0, np.int8))
    return np.stack(xs).astype(np.float16), np.array(ys, np.int8), np.array(ks, np.int8)


# ---------------------------------------------------------------------------- data set


def _seed(*parts: object) -> int:
    return int(hashlib.md5(repr(parts).encode()).hexdigest()[:8], 16)


def _real_task(task: tuple[str, dict, int]) -> tuple[str, int, tuple]:
    set_name, entry, copies = task
    cv2.setNumThreads(1)
    role = _role(entry["name"])
    image, labels = load_example(entry, max_long_side=MAX_LONG_SIDE)
    return set_name, role, crops_for_scene(
        image, labels, role, _seed(set_name, entry["name"]), copies,
        detector_boxes(image) if DET_SHARE > 0 or HARD else None
    )


def _synth_task(task: tuple[int, str, int]) -> tuple[str, int, tuple] | None:
    seed, preset, copies = task
    cv2.setNumThreads(1)
    try:
        from vision.synth import render_scene

        image, entry = render_scene(seed, preset, 1280, 960, top_boxes=TOP_SHARE > 0)
    except Exception:  # another developer's module: a broken scene must not stop training
        return None
    # Few synthetic scenes validate, so early stopping and the temperature follow real photos.
    role = VAL if seed % 30 == 0 else FIT
    return "synth", role, crops_for_scene(
        image, entry["dice"], role, _seed("synth", seed, preset), copies,
        detector_boxes(image) if DET_SHARE > 0 or HARD else None
    )


def edge_scene(seed: int, preset: str) -> tuple[np.ndarray, list[dict]]:
    """A calm scene whose dice lie flat and apart, mostly towards the floor's rim.

    Far from the camera's axis a flat die shows a strip of one or two side faces, and its box
    holds them; `random_dice` puts few dice there, so the net learnt to doubt exactly the clean
    dice of a mounted camera (the demo asked about a fifth of its turns). Placement follows
    the demo's (apart, in view), with positions drawn from an arcsine law on each floor axis.
    """
    from vision import synth

    rng = np.random.default_rng([seed, 4242])
    spec = synth.random_scene(seed, preset, 1280, 960)
    hom = synth._floor_h(spec)
    margin = 0.8 * spec.die_px
    k_col = int(rng.integers(1, 4))
    cols = [str(c) for c in rng.choice(synth.PLAYER_COLOURS, size=k_col, replace=False)]
    if rng.random() < 0.7:
        cols.append("white")
    dice: list[Any] = []
    fps: list[np.ndarray] = []
    for _ in range(int(rng.integers(5, 13))):
        colour = cols[int(rng.integers(len(cols)))]
        big = colour != "white" and rng.random() < 0.1
        for _attempt in range(100):
            u, v = (0.5 - 0.5 * math.cos(math.pi * rng.random()) for _ in range(2))
            d = synth.DiePose(
                colour=colour, value=int(rng.integers(1, 7)), big=big,
                x=float(u * spec.floor_w_mm), y=float(v * spec.floor_h_mm),
                angle_deg=float(rng.uniform(0, 360)), pip_colour=synth.DEFAULT_PIP[colour],
                glare=bool(rng.random() < 0.1), spin=int(rng.integers(2**16)))
            fp = synth._footprint(d)
            if (synth._inside(fp, spec) and not any(synth._overlap(fp, q) for q in fps)
                    and synth._in_view(d, spec, hom, margin)):
                dice.append(d)
                fps.append(fp)
                break
    image, labels = synth.render(spec, dice, seed=seed)
    return image, labels


def cocked_scene(seed: int, preset: str) -> tuple[np.ndarray, list[dict]]:
    """A scene of the preset with three to five cocked dice, leaning on dice and walls.

    Most synthetic confident errors are cocked dice read by their clean top face; the presets
    give one or two per hard scene, so the nets see few of the rarer leans (shallow ones, or
    leaning outwards where a flat die's side face shows).
    """
    from vision import synth

    spec = synth.random_scene(seed, preset, 1280, 960)
    # Every other scene leans its dice only 18-26 degrees: the leans still read as certain.
    lean = (18.0, 26.0) if SHALLOW and seed % 2 else None
    dice = synth.random_dice(spec, np.random.default_rng([seed, 5151]), cocked=(3, 5),
                             lean=lean)
    image, labels = synth.render(spec, dice, seed=seed)
    return image, labels


def fancy_scene(seed: int, preset: str) -> tuple[np.ndarray, list[dict]]:
    """A scene of the preset whose dice are other makers': marbled, speckled, odd 1s and pips.

    The presets draw only the game's opaque dice, so everything the nets knew of marbled and
    glittery dice came from the few real photos' training halves, and rune55's held-out half,
    where such dice are, reads worse than the sets of plain dice: veins and flecks are edges
    on the face that are not pips. Measured in the colour net, it read real marbled dice no
    better, so `--fancy-scenes` is off by default (docs/development.md, *What has been
    measured and left out*).
    """
    from vision import synth

    spec = synth.random_scene(seed, preset, 1280, 960)
    rng = np.random.default_rng([seed, 6161])
    dice = [synth.fancy(d, rng) for d in synth.random_dice(spec, rng)]
    image, labels = synth.render(spec, dice, seed=seed)
    return image, labels


def _made_task(task: tuple[str, int, str, int]) -> tuple[str, int, tuple] | None:
    """Crops of one scene placed here rather than by its preset: "edge", "cocked", "fancy"."""
    kind, seed, preset, copies = task
    cv2.setNumThreads(1)
    try:
        image, labels = {"edge": edge_scene, "cocked": cocked_scene,
                         "fancy": fancy_scene}[kind](seed, preset)
    except Exception:  # leans on vision.synth internals: a change there must not stop training
        return None
    role = VAL if seed % 30 == 0 else FIT
    return "synth", role, crops_for_scene(
        image, labels, role, _seed(kind, seed, preset), copies,
        detector_boxes(image) if DET_SHARE > 0 or HARD else None
    )


def synth_available() -> str | None:
    """None when vision.synth renders a scene with usable labels, else why not."""
    try:
        from vision.synth import render_scene

        _, entry = render_scene(0, "easy", 320, 240)
        for d in entry["dice"]:
            _ = d["bbox"], d["value"], d["cocked"]
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _set_options(det_share: float, channels: int, orient: bool = False, hard: int = 0,
                 cocked: int = 3, shallow: bool = False, scale: float = CROP_SCALE,
                 size: int = CROP_SIZE, exposure: float = 0.0, top: float = 0.0,
                 grey: str = "luma") -> None:
    global DET_SHARE, CHANNELS, ORIENT, HARD, COCKED_WEIGHT, SHALLOW, SCALE, SIZE, EXPOSURE
    global TOP_SHARE, GREY
    DET_SHARE, CHANNELS, ORIENT, HARD, COCKED_WEIGHT = det_share, channels, orient, hard, cocked
    SHALLOW, SCALE, SIZE, EXPOSURE, TOP_SHARE, GREY = shallow, scale, size, exposure, top, grey


def build_dataset(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """Cut every crop once (in two processes) and cache it: rendering dominates the run time."""
    why_no_synth = synth_available() if args.scenes > 0 else "disabled (--scenes 0)"
    scenes = args.scenes if why_no_synth is None else 0
    if why_no_synth:
        print(f"synthetic scenes not used: {why_no_synth}")
    edge = args.edge_scenes if why_no_synth is None else 0
    # The crops depend on crop_for, on the scenes drawn and on the detector whose boxes they
    # are cut from: a change to any of them must not reuse crops cut before it.
    models = ROOT / "vision" / "models"
    src = b"".join([(ROOT / "vision" / n).read_bytes() for n in ("valuenet.py", "synth.py")]
                   + [(models / n).read_bytes() for n in ("detector.onnx", "detector.json")
                      if (models / n).is_file()])
    options = (CACHE_VERSION, scenes, edge, args.copies, args.synth_copies, CHANNELS, ORIENT,
               DET_SHARE, HARD, COCKED_WEIGHT, args.wide_scenes, args.cocked_scenes, SHALLOW)
    if SCALE != CROP_SCALE:  # keyed only when set, so the shipped nets' caches stay valid
        options += (SCALE,)
    if SIZE != CROP_SIZE:
        options += ("size", SIZE)
    if args.fancy_scenes:
        options += ("fancy", args.fancy_scenes)
    if EXPOSURE:
        options += ("exposure", EXPOSURE, EXPOSURE_RANGE)
    if TOP_SHARE:
        options += ("top", TOP_SHARE)
    if GREY != "luma":
        options += ("grey", GREY)
    key = hashlib.md5(repr((*options, src)).encode()).hexdigest()[:12]
    cache = Path(args.cache) / f"crops-{key}.npz"
    if cache.is_file() and not args.no_cache:
        print(f"crops from cache {cache}")
        with np.load(cache) as z:
            return {k: z[k] for k in z.files}

    tasks_real = [
        (name, e, args.copies) for name, folder in SETS.items() for e in load_manifest(folder)
    ]
    presets = ("easy", "normal", "hard")
    tasks_synth = [(10_000 + i, presets[i % 3], args.synth_copies) for i in range(scenes)]
    tasks_edge = [("edge", 20_000 + i, presets[i % 2], args.synth_copies) for i in range(edge)]
    tasks_synth += [(30_000 + i, "wide", args.synth_copies) for i in range(args.wide_scenes)]
    leaning = ("hard", "normal", "wide")
    tasks_cocked = [("cocked", 40_000 + i, leaning[i % 3], args.synth_copies)
                    for i in range(args.cocked_scenes if why_no_synth is None else 0)]
    tasks_fancy = [("fancy", 50_000 + i, presets[i % 3], args.synth_copies)
                   for i in range(args.fancy_scenes if why_no_synth is None else 0)]
    parts: dict[str, list] = {"x": [], "y": [], "kind": [], "role": [], "set": []}
    set_ids = {name: i for i, name in enumerate([*SETS, "synth"])}
    t0 = time.time()
    done = 0

    def results() -> Iterator[tuple[str, int, tuple] | None]:
        # Spawned workers import this module afresh: hand them the options set in main().
        with mp.get_context("spawn").Pool(args.workers, initializer=_set_options,
                                          initargs=(DET_SHARE, CHANNELS, ORIENT, HARD,
                                                    COCKED_WEIGHT, SHALLOW, SCALE, SIZE,
                                                    EXPOSURE, TOP_SHARE, GREY)) as pool:
            yield from pool.imap_unordered(_real_task, tasks_real, chunksize=2)
            yield from pool.imap_unordered(_synth_task, tasks_synth, chunksize=4)
            yield from pool.imap_unordered(_made_task, tasks_edge + tasks_cocked + tasks_fancy,
                                           chunksize=4)

    for r in results():
        done += 1
        if r is None:
            continue
        set_name, role, (x, y, k) = r
        parts["x"].append(x)
        parts["y"].append(y)
        parts["kind"].append(k)
        parts["role"].append(np.full(len(y), role, np.int8))
        parts["set"].append(np.full(len(y), set_ids[set_name], np.int8))
        if done % 200 == 0:
            total = (len(tasks_real) + len(tasks_synth) + len(tasks_edge) + len(tasks_cocked)
                     + len(tasks_fancy))
            print(f"  {done}/{total} images, {time.time() - t0:.0f} s", flush=True)
    data = {k: np.concatenate(v) for k, v in parts.items()}
    data["set_names"] = np.array([*SETS, "synth"])
    data["synth_scenes"] = np.array(scenes)
    data["edge_scenes"] = np.array(edge)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **data)
    print(f"cut {len(data['y'])} crops in {time.time() - t0:.0f} s (cached in {cache})")
    return data


# ---------------------------------------------------------------------------- model


def make_model(outputs: int = len(CLASSES), channels: int | None = None,
               size: int | None = None) -> Any:
    """The value nets' CNN (the box refiner's too, with 4 outputs). Torch is imported here,
    late, so the spawned data workers need not load it."""
    import torch
    from torch import nn

    cin = CHANNELS if channels is None else channels
    side = SIZE if size is None else size

    def block(cin: int, cout: int, pool: bool) -> list[nn.Module]:
        layers: list[nn.Module] = [
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()
        ]
        return [*layers, nn.MaxPool2d(2)] if pool else layers

    class Net(nn.Module):
        """32×32 grey or colour -> 8 logits; about 5.5 M multiply-adds per crop."""

        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                *block(cin, 16, True),  # 16×16
                *block(16, 32, True),  # 8×8
                *block(32, 64, False),
                *block(64, 64, True),  # 4×4
                *block(64, 64, False),
            )
            self.head = nn.Sequential(
                nn.Flatten(), nn.Linear(64 * (side // 8) ** 2, 64), nn.ReLU(),
                nn.Linear(64, outputs),
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.features(x))

    return Net()


def fold_bn(model: Any) -> Any:
    """Fold every BatchNorm into the conv before it, so the exported graph is conv+ReLU only."""
    import copy

    import torch
    from torch import nn
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    model = copy.deepcopy(model).eval().to(memory_format=torch.contiguous_format)
    layers = list(model.features)
    out: list[nn.Module] = []
    i = 0
    while i < len(layers):
        if (
            isinstance(layers[i], nn.Conv2d)
            and i + 1 < len(layers)
            and isinstance(layers[i + 1], nn.BatchNorm2d)
        ):
            out.append(fuse_conv_bn_eval(layers[i], layers[i + 1]))
            i += 2
        else:
            out.append(layers[i])
            i += 1
    model.features = nn.Sequential(*out)
    return model


def _augment_batch(x: Any) -> Any:
    import torch

    if SHUFFLE > 0 and x.shape[1] == 3:
        order = torch.argsort(torch.rand(x.shape[0], 3), dim=1)
        keep = torch.rand(x.shape[0]) >= SHUFFLE
        order[keep] = torch.arange(3)
        x = torch.gather(x, 1, order[:, :, None, None].expand_as(x))
    if not ORIENT:  # a turned crop's top is the frame's centre: mirror it, never turn it
        k = torch.randint(0, 4, (1,)).item()
        x = torch.rot90(x, int(k), dims=(2, 3))
    if torch.rand(1).item() < 0.5:
        x = torch.flip(x, dims=(3,))
    return x


def logits_of(model: Any, x: np.ndarray, batch: int = 2048) -> np.ndarray:
    import torch

    model.eval()
    outs = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb = torch.from_numpy(_nchw(x[i : i + batch]))
            outs.append(model(xb).numpy())
    return np.concatenate(outs) if outs else np.zeros((0, len(CLASSES)), np.float32)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _nll(logits: np.ndarray, y: np.ndarray, t: float) -> float:
    p = _softmax(logits.astype(np.float64) / t)
    return float(-np.log(np.maximum(p[np.arange(len(y)), y], 1e-12)).mean())


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """The temperature that minimises validation NLL (golden-section search on log T)."""
    lo, hi = math.log(0.25), math.log(8.0)
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = _nll(logits, y, math.exp(a)), _nll(logits, y, math.exp(b))
    for _ in range(60):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = _nll(logits, y, math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = _nll(logits, y, math.exp(b))
    return math.exp((lo + hi) / 2)


def _grey_of(x: np.ndarray, grey: str = "luma") -> np.ndarray:
    """The grey crop `crop_for(..., channels=1, grey=grey)` would cut, from a normalised
    colour one.

    Each colour channel had its own mean removed and all share one spread, so the BT.601
    weighted sum is the grey crop (mean already zero) up to its spread: rescale that. The
    principal axis is the same whatever the channels' offsets and common scale.
    """
    if grey == "principal":
        return np.stack([principal_grey(c) for c in x])
    g = 0.114 * x[:, 0] + 0.587 * x[:, 1] + 0.299 * x[:, 2]
    return g / (g.std(axis=(1, 2), keepdims=True) + 1e-3)


def teacher_probs(paths: list[Path], x: np.ndarray, batch: int = 4096) -> np.ndarray:
    """The shipped nets' averaged, calibrated answer for every (colour) crop: the soft target
    a student learns besides the label (`--teachers`).

    Grey members see the grey of the student's colour crop; turned crops are off their home
    ground (they learnt from square ones), but on held-out detector boxes the grey net still
    lifts the colour nets' average on rune55 as it does in the reader.
    """
    vn = ValueNet(paths)
    out = []
    for i in range(0, len(x), batch):
        xb = _nchw(x[i : i + batch])
        parts = [xb if m.channels == 3 else _grey_of(xb, m.grey)[:, None] for m in vn.members]
        out.append(vn.predict(np.concatenate(parts, axis=1)))
        if (i // batch) % 20 == 0:
            print(f"  teachers: {i + len(xb)}/{len(x)} crops", flush=True)
    return np.concatenate(out).astype(np.float32)


def train(data: dict[str, np.ndarray], args: argparse.Namespace) -> Any:
    """Early-stopped on the validation slice's NLL against the labels (never the teachers')."""
    import torch
    from torch import nn

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    fit = data["role"] == FIT
    val = data["role"] == VAL
    xf = torch.from_numpy(_nchw(data["x"][fit]))
    yf = torch.from_numpy(data["y"][fit].astype(np.int64))
    soft = torch.from_numpy(data["soft"][fit]) if "soft" in data else None
    xv, yv = data["x"][val], data["y"][val].astype(np.int64)
    counts = np.bincount(data["y"][fit], minlength=len(CLASSES))
    print(f"fit {len(yf)} crops, val {len(yv)}; fit per class {counts.tolist()}")

    # channels_last runs these small convs about 1.4× faster on CPU.
    model = make_model().to(memory_format=torch.channels_last)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params} parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * math.ceil(len(yf) / args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps,
                                                pct_start=0.15)
    # Rare classes (7 above all) would otherwise be learnt as "never happens".
    w = torch.tensor((counts.sum() / np.maximum(counts, 1) / len(CLASSES)) ** 0.5,
                     dtype=torch.float32)
    loss_fn = nn.CrossEntropyLoss(weight=w, label_smoothing=0.03)
    best, best_state, bad = float("inf"), None, 0
    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(yf))
        total = 0.0
        for i in range(0, len(perm), args.batch):
            idx = perm[i : i + args.batch]
            xb = _augment_batch(xf[idx])  # a mirrored or turned face reads the same
            z = model(xb)
            loss = loss_fn(z, yf[idx])
            if soft is not None:
                taught = -(soft[idx] * torch.log_softmax(z, dim=1)).sum(dim=1).mean()
                loss = (1.0 - args.distil_weight) * loss + args.distil_weight * taught
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        lv = logits_of(model, xv)
        vloss = _nll(lv, yv, 1.0)
        acc = float((lv.argmax(1) == yv).mean())
        print(f"epoch {epoch + 1:2d}: train {total / len(yf):.4f}  val nll {vloss:.4f}  "
              f"acc {acc:.4f}  {time.time() - t0:.0f} s", flush=True)
        if vloss < best:
            best, bad = vloss, 0
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            bad += 1
            if bad >= args.patience:
                print("early stop")
                break
    model.load_state_dict(best_state)
    return model


# ---------------------------------------------------------------------------- export, report


def run_onnx(path: Path, x: np.ndarray) -> np.ndarray:
    """The first output of the ONNX model at `path` for the batch `x`, through ONNX
    Runtime's CPU provider (the reader's runtime)."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: np.ascontiguousarray(x, np.float32)})[0]


def export(model: Any, temperature: float, meta_extra: dict, path: Path) -> None:
    """Write ONNX plus its metadata and prove ONNX Runtime computes what torch computes."""
    import torch

    fused = fold_bn(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, CHANNELS, SIZE, SIZE)
    torch.onnx.export(
        fused, (dummy,), str(path), opset_version=13, input_names=["crops"],
        output_names=["logits"], dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
        dynamo=False,
    )
    meta = {
        "temperature": round(temperature, 5),
        "classes": list(CLASSES),
        "crop": f"{'gray' if CHANNELS == 1 else 'bgr'}{SIZE} max(w,h)*{SCALE:g} z-norm",
        "channels": CHANNELS,
        **({"grey": GREY} if CHANNELS == 1 and GREY != "luma" else {}),
        **({"crop_scale": SCALE} if SCALE != CROP_SCALE else {}),
        **({"crop_size": SIZE} if SIZE != CROP_SIZE else {}),
        **({"orient": "centre"} if ORIENT else {}),
        **meta_extra,
        "date": dt.date.today().isoformat(),
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    rng = np.random.default_rng(0)
    x = _nchw(rng.normal(size=(16, *_crop_shape())))
    with torch.no_grad():
        ref = model.eval()(torch.from_numpy(x)).numpy()
    got = np.asarray(run_onnx(path, x)).reshape(16, -1)
    diff = float(np.abs(got - ref).max())
    print(f"exported {path} ({path.stat().st_size / 1024:.0f} KiB); ONNX Runtime vs torch max "
          f"|diff| {diff:.2e}")
    if diff > 1e-4:
        raise SystemExit("ONNX Runtime disagrees with torch: the export is broken")


def confident_report(probs: np.ndarray, y: np.ndarray, name: str) -> str:
    conf = probs.max(1)
    pred = probs.argmax(1)
    sure = conf >= 0.9
    wrong = int((pred[sure] != y[sure]).sum())
    return (f"{name}: {sure.sum()}/{len(y)} predictions with confidence >= 0.9, {wrong} wrong "
            f"({wrong / max(int(sure.sum()), 1) * 1000:.2f} per 1000)")


def _mean(hits: np.ndarray) -> float:
    return float(hits.mean()) if hits.size else float("nan")


def report(data: dict[str, np.ndarray], vn: ValueNet, box_kind: int = K_CLEAN) -> dict:
    """Held-out figures through the exported model, as the product will run it: on the label
    boxes (K_CLEAN) or on the detector's boxes matched to dice (K_DET)."""
    held = data["role"] == HELD
    names = [str(s) for s in data["set_names"]]
    summary: dict = {}
    boxes = "label boxes, no jitter" if box_kind == K_CLEAN else "the detector's matched boxes"
    print(f"\nheld-out images ({boxes}), through ONNX Runtime. 'sure' = confidence >= 0.9;"
          "\n'sure wrong' = a sure value that is not the die's (the costly error), 'sure None' = "
          "\na sure not-a-die/unreadable on a readable die (a miss), 'neg' = not-a-die crops")
    print(f"{'set':8} {'dice':>5} {'value acc':>9} {'sure':>6} {'sure wrong':>10} "
          f"{'sure None':>9} {'cocked->None':>12} {'neg acc':>8} {'bg':>6} {'part':>6} {'hard':>6}")
    for sid, name in enumerate(names):
        if name == "synth":
            continue
        m = held & (data["set"] == sid)
        p = vn.predict(data["x"][m].astype(np.float32))
        y = data["y"][m].astype(int)
        kind = data["kind"][m]
        pred = p.argmax(1)
        conf = p.max(1)
        die = kind == box_kind
        readable = die & (y >= 1) & (y <= 6)
        cocked = die & (y == UNREADABLE)
        value_pred = np.where((pred == 0) | (pred == UNREADABLE), -1, pred)
        acc = _mean(value_pred[readable] == y[readable])
        sure = die & (conf >= 0.9)
        truth = np.where(y == UNREADABLE, -1, y)
        sure_wrong = int((sure & (value_pred != -1) & (value_pred != truth)).sum())
        sure_none = int((sure & readable & (value_pred == -1)).sum())
        cocked_ok = int((value_pred[cocked] == -1).sum())
        neg = (kind == K_BG) | (kind == K_PART) | (kind == K_HARD)
        neg_acc = _mean(pred[neg] == 0)
        hard = _mean(pred[kind == K_HARD] == 0)
        bg = _mean(pred[kind == K_BG] == 0)
        part = _mean(pred[kind == K_PART] == 0)
        share = float(sure.sum() / max(die.sum(), 1))
        print(f"{name:8} {int(die.sum()):5d} {acc:9.1%} {share:6.1%} "
              f"{f'{sure_wrong}/{int(sure.sum())}':>10} {sure_none:9d} "
              f"{f'{cocked_ok}/{int(cocked.sum())}':>12} {neg_acc:8.1%} {bg:6.1%} {part:6.1%} "
              f"{hard:6.1%}")
        summary[name] = {
            "dice": int(die.sum()), "value_acc": round(acc, 4),
            "confident_share": round(share, 4), "confident_wrong_values": sure_wrong,
            "confident_none_on_readable": sure_none, "not_a_die_acc": round(neg_acc, 4),
            "hard_negative_acc": None if math.isnan(hard) else round(hard, 4),
        }
    return summary


def time_inference(vn: ValueNet, x: np.ndarray) -> float:
    cv2.setNumThreads(1)
    batch = x[:16].astype(np.float32)
    for _ in range(20):
        vn.predict(batch)
    t0 = time.perf_counter()
    n = 200
    for _ in range(n):
        vn.predict(batch)
    return (time.perf_counter() - t0) / n * 1000


def main(argv: list[str] | None = None) -> int:
    """Cut crops, train, calibrate, export, then report on the held-out half."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=1200, help="synthetic scenes (0 = none)")
    ap.add_argument("--copies", type=int, default=16, help="augmented crops per real die")
    ap.add_argument("--synth-copies", type=int, default=3, help="augmented crops per synth die")
    ap.add_argument("--wide-scenes", type=int, default=0,
                    help="extra synthetic scenes of the `wide` preset (wide lens, tall side "
                         "faces)")
    ap.add_argument("--edge-scenes", type=int, default=0,
                    help="extra synthetic scenes of flat dice spread to the floor's rim "
                         "(off in the shipped recipes: see the module docstring)")
    ap.add_argument("--detector-share", type=float, default=0.0,
                    help="share of a die's augmented crops cut around the detector's box "
                         "(off in the shipped recipes: see the module docstring)")
    ap.add_argument("--hard-negatives", type=int, default=6,
                    help="augmented 'not a die' crops per detector box that overlaps no "
                         "labelled die (tray corners, printed art, counters)")
    ap.add_argument("--cocked-scenes", type=int, default=0,
                    help="extra synthetic scenes with 3-5 cocked dice each (hard/normal/wide)")
    ap.add_argument("--fancy-scenes", type=int, default=0,
                    help="synthetic scenes of other makers' dice (marbled, speckled, odd 1s)")
    ap.add_argument("--shallow-leans", action="store_true",
                    help="with --cocked-scenes: every other one leans its dice 18-26 degrees")
    ap.add_argument("--cocked-weight", type=int, default=3,
                    help="augmented copies of a cocked die per copy of a flat one")
    ap.add_argument("--channels", type=int, choices=(1, 3), default=3,
                    help="colour (3) or grey (1) crops: the reader averages one net of each")
    ap.add_argument("--grey", choices=GREY_AXES, default="luma",
                    help="with --channels 1: luma, or the crop's principal colour axis, which "
                         "keeps pips that differ from the die in hue (see crop_for)")
    ap.add_argument("--crop-size", type=int, default=CROP_SIZE, choices=(32, 40, 48, 64),
                    help="crop side in pixels: finer crops keep small pips apart from glitter")
    ap.add_argument("--crop-scale", type=float, default=CROP_SCALE,
                    help="crop square over the box's longer side (more context for a lean)")
    ap.add_argument("--orient", action="store_true",
                    help="turn every crop so the frame's centre is up (see crop_for)")
    ap.add_argument("--top-face-share", type=float, default=0.0, metavar="SHARE",
                    help="share of a synthetic cocked die's crops cut round its top face only")
    ap.add_argument("--exposure", type=float, default=0.0, metavar="SHARE",
                    help=f"share of augmented crops shot {EXPOSURE_RANGE[0]}-{EXPOSURE_RANGE[1]}x"
                         " brighter or darker, clipped")
    ap.add_argument("--channel-shuffle", type=float, default=0.0, metavar="SHARE",
                    help="share of colour crops shown with their channels in a random order")
    ap.add_argument("--teachers", type=Path, nargs="+", default=None,
                    help="ONNX nets whose averaged answer the net learns besides the labels "
                         "(distillation: one net in place of several; colour crops only)")
    ap.add_argument("--distil-weight", type=float, default=0.7,
                    help="share of the loss on the teachers' answer (with --teachers)")
    ap.add_argument("--epochs", type=int, default=18)
    ap.add_argument("--patience", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=6e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default="/tmp/valuenet-cache")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--out", type=Path, default=None,
                    help="where to write the model (default: the shipped colour or grey one)")
    args = ap.parse_args(argv)
    if args.grey != "luma" and args.channels != 1:
        ap.error("--grey is for grey crops: give --channels 1 with it")
    _set_options(args.detector_share, args.channels, args.orient, args.hard_negatives,
                 args.cocked_weight, args.shallow_leans, args.crop_scale, args.crop_size,
                 args.exposure, args.top_face_share, args.grey)
    args.out = args.out or OUT[args.channels]
    global SHUFFLE
    SHUFFLE = args.channel_shuffle
    sys.stdout.reconfigure(line_buffering=True)  # progress shows when piped to a log

    t_start = time.time()
    data = build_dataset(args)
    if args.teachers:
        if CHANNELS != 3:
            raise SystemExit("--teachers: the student must take colour crops (--channels 3)")
        taught = data["role"] != HELD
        soft = np.zeros((len(data["y"]), len(CLASSES)), np.float32)
        soft[taught] = teacher_probs(args.teachers, data["x"][taught])
        data["soft"] = soft
    model = train(data, args)

    val = data["role"] == VAL
    lv = logits_of(model, data["x"][val])
    yv = data["y"][val].astype(np.int64)
    t = fit_temperature(lv, yv)
    print(f"\ntemperature {t:.3f} (val nll {_nll(lv, yv, 1.0):.4f} -> {_nll(lv, yv, t):.4f})")
    pv = _softmax(lv / t)
    real = data["set"][val] != list(data["set_names"]).index("synth")
    calib = [
        confident_report(pv, yv, "validation, all crops"),
        confident_report(pv[real], yv[real], "validation, real photos and renders only"),
    ]
    print("\n".join(calib))

    scenes = int(data["synth_scenes"])
    trained_on = [f"{n} (training half)" for n in SETS]
    if scenes:
        trained_on.append(f"vision.synth {scenes} scenes (easy/normal/hard)")
    if args.wide_scenes:
        trained_on.append(f"vision.synth {args.wide_scenes} scenes (wide)")
    if args.fancy_scenes:
        trained_on.append(f"{args.fancy_scenes} scenes of marbled and speckled dice, odd 1s "
                          "and pips (easy/normal/hard)")
    if args.cocked_scenes:
        trained_on.append(f"{args.cocked_scenes} scenes with 3-5 cocked dice each "
                          "(hard/normal/wide, --cocked-scenes"
                          + (", half of them leaning 18-26 degrees)" if SHALLOW else ")"))
    trained_on.append(f"each cocked die cut {COCKED_WEIGHT}x as often as a flat one "
                      "(--cocked-weight)")
    if args.teachers:
        trained_on.append(f"{args.distil_weight:.0%} of the loss on the averaged answer of "
                          + ", ".join(p.name for p in args.teachers) + " (--teachers)")
    if int(data["edge_scenes"]):
        trained_on.append(f"{int(data['edge_scenes'])} flat-dice rim scenes (easy/normal)")
    if DET_SHARE > 0:
        trained_on.append(f"{DET_SHARE:.0%} of positives cut around the shipped detector's "
                          "matched boxes, the rest around jittered label boxes")
    if HARD:
        trained_on.append(f"{HARD} augmented 'not a die' crops per detector box that overlaps "
                          f"no labelled die (IoU < {HARD_IOU})")
    if TOP_SHARE > 0:
        trained_on.append(f"{TOP_SHARE:.0%} of a synthetic cocked die's crops cut round its top "
                          "face's box only (--top-face-share)")
    if EXPOSURE > 0:
        trained_on.append(f"{EXPOSURE:.0%} of augmented crops shot {EXPOSURE_RANGE[0]}-"
                          f"{EXPOSURE_RANGE[1]}x brighter or darker, clipped (--exposure)")
    if SHUFFLE > 0:
        trained_on.append(f"{SHUFFLE:.0%} of crops with their colour channels in a random "
                          "order (--channel-shuffle)")
    export(model, t, {"trained_on": trained_on}, args.out)

    vn = ValueNet(args.out)
    summary = report(data, vn)
    summary_det = report(data, vn, K_DET) if DET_SHARE > 0 else {}
    print(f"\nONNX Runtime, one thread, batch of 16: "
          f"{time_inference(vn, data['x']):.2f} ms per batch")
    meta = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
    meta["heldout"] = summary
    if DET_SHARE > 0 or HARD:  # detector boxes are only cut when some training crops use them
        meta["heldout_detector_boxes"] = summary_det
    meta["calibration"] = calib
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"total {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

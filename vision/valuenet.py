"""A tiny learned classifier that reads a die's value from a crop, run by ONNX Runtime.

Hand-made pip rules break on translucent, marbled and glare-lit dice; a small CNN trained on
real photos, renders and synthetic scenes (`training/train_valuenet.py`) reads those far more
reliably. The crop (`crop_for`) is the contract between training and inference: both sides
call this very function, so any change here means retraining. Classes: 0 = not a die, 1-6 =
the value on the top face, 7 = a die that cannot be read (cocked, leaning, smeared).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from . import nets
from .nets import OnnxNet

CROP_SIZE = 32
CROP_SCALE = 1.15
NOT_A_DIE = 0
UNREADABLE = 7
CLASSES = ("not_a_die", "1", "2", "3", "4", "5", "6", "unreadable")
DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "valuenet.onnx"  # colour crops
GREY_MODEL = DEFAULT_MODEL.with_name("valuenet-grey.onnx")  # grey crops
# Colour crops again, trained with cocked dice 8x as frequent (and wide-lens scenes, and
# scenes of several cocked dice): quicker to doubt a lean.
LEAN_MODEL = DEFAULT_MODEL.with_name("valuenet-lean.onnx")
# Turned colour crops again, trained with 500 wide-lens scenes besides: tall side faces.
WIDE_MODEL = DEFAULT_MODEL.with_name("valuenet-wide.onnx")
DEFAULT_MODELS = (DEFAULT_MODEL, WIDE_MODEL, GREY_MODEL, LEAN_MODEL)
# The lean net's recipe on crops 1.6x the box's side: it sees what a die rests on, and doubts
# leans the four above read straight through. Not averaged in (it reads values worse, as
# the die is smaller in its crop); the reader asks it only whether a sure read is cocked.
CONTEXT_MODEL = DEFAULT_MODEL.with_name("valuenet-context.onnx")
# The same recipe with half of each synthetic cocked die's crops cut round its top face alone,
# as the detector often boxes a leaning die; the first was taught leans framed whole, side
# face and all. The two see different leans, and their mean tells leans from flat dice better
# than either (see `config.ContextConfig`).
CONTEXT_TOP_MODEL = DEFAULT_MODEL.with_name("valuenet-context-top.onnx")
CONTEXT_MODELS = (CONTEXT_MODEL, CONTEXT_TOP_MODEL)
# A colour member less sure than this of a die's face reads the crop again with its colour
# channels turned round twice (B,G,R -> G,R,B -> R,B,G), and the three answers' mean splits
# the faces: each member learnt the paints of the dice it was trained on (red pips on a smoky
# die) and reads the same pips in another paint (blue on a smoky die, which grey loses too)
# worse; turned round, whatever the pips' hue, it once falls in the channel it knows them in.
# (All six orders read no better, at 2.5 times the cost.)
PAINT_BELOW = 0.75
_OTHER_ORDERS = ((1, 2, 0), (2, 0, 1))
# Which grey a one-channel crop is (`crop_for`'s `grey`, a grey member's "grey" metadata).
GREY_AXES = ("luma", "principal")
_LUMA_BGR = np.array([0.114, 0.587, 0.299])  # BT.601, as cv2's BGR2GRAY


def faces_split_as(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Rows of class probabilities `p` whose six faces keep their total but share it as in
    `q`: a second reading may say which face a die shows, while whether it is a die at all,
    and whether it can be read, stay the first reading's call."""
    faces = slice(1, UNREADABLE)
    out = np.array(p, copy=True)
    mass = p[:, faces].sum(axis=1, keepdims=True)
    out[:, faces] = mass * (q[:, faces] / np.maximum(q[:, faces].sum(axis=1, keepdims=True),
                                                     1e-12))
    return out


def is_training_image(name: str) -> bool:
    """Decide once, by a hash of the manifest's image name, which photos the net may learn from.

    A fixed hash (not a random draw) keeps the held-out half the same for every retraining and
    every benchmark, so held-out figures stay honest and comparable.
    """
    return hashlib.md5(name.encode("utf-8")).hexdigest()[0] in "01234567"


def crop_for(image_bgr: np.ndarray, bbox: Sequence[float], channels: int = 1,
             up: float | None = None, scale: float = CROP_SCALE,
             size: int = CROP_SIZE, normalise: bool = True, grey: str = "luma") -> np.ndarray:
    """Cut the net's input for one die box: a float32 square (32×32 unless `size` says
    otherwise), zero mean, unit spread.

    The square with 15% margin keeps the whole top face in view whatever the box's aspect.
    Per-crop normalisation takes lamp level out of the problem, so the net only has to learn
    pip layouts (light on dark as well as dark on light). With one channel the crop is grey
    (shape (32, 32)); with three it keeps the colours (shape (3, 32, 32), each channel's mean
    removed, one spread for all), since grey loses pips that differ from their die in hue
    more than in brightness: red pips on a smoky black die are almost as dark as the die.
    Parts of the square outside the image repeat the edge pixels, as a die cut by the frame
    edge would look.

    `up` (degrees, image axes, y down) turns the crop so that this direction points up: with
    `towards_centre` a flat die's side faces, which the camera sees because the die lies off
    its axis, always show at the crop's top, and a side face anywhere else is a die that leans.

    `scale` is the square's side over the box's longer side: a net that judges a lean from
    what the die rests on (a neighbour, a wall, the gap beneath it) needs more of the
    surroundings than the 15% margin that is enough to read the top face. `size` is the
    crop's side in pixels (32 unless a net was trained on finer crops). `normalise=False`
    keeps the pixel values (0-255) for a net that must see the absolute colour.

    `grey` ("luma" or "principal", one channel only): luma loses pips that differ from their
    die in hue more than in brightness; "principal" takes the colour axis along which the
    middle of the crop varies most (`principal_grey`).
    """
    if grey not in GREY_AXES:
        raise ValueError(f"grey must be one of {', '.join(GREY_AXES)}, not {grey!r}")
    if channels == 1 and grey == "principal" and image_bgr.ndim == 3 and image_bgr.shape[2] == 3:
        return principal_grey(crop_for(image_bgr, bbox, 3, up, scale, size, normalise=False),
                              normalise)
    x0, y0, x1, y1 = (float(v) for v in bbox)
    side = max(x1 - x0, y1 - y0, 1.0) * scale
    # A turned crop is cut from a square √2 larger, so its corners hold image, not border.
    grow = 1.0 if up is None else math.sqrt(2.0)
    side *= grow
    out = size if up is None else math.ceil(size * grow)
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    n = max(1, round(side))
    left = round(cx - side / 2.0)
    top = round(cy - side / 2.0)
    h, w = image_bgr.shape[:2]
    ax0, ay0 = max(0, left), max(0, top)
    ax1, ay1 = min(w, left + n), min(h, top + n)
    if ax1 <= ax0 or ay1 <= ay0:
        # Entirely outside: the nearest edge pixel stretched, as the replicate border would give.
        ex = min(max(left, 0), w - 1)
        ey = min(max(top, 0), h - 1)
        patch = image_bgr[ey : ey + 1, ex : ex + 1]
        ax0, ay0, ax1, ay1 = ex, ey, ex + 1, ey + 1
    else:
        patch = image_bgr[ay0:ay1, ax0:ax1]
    if patch.ndim == 2:
        patch = patch[:, :, None]
    if channels == 1 and patch.shape[2] == 3:
        patch = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)[:, :, None]
    elif channels == 3 and patch.shape[2] == 1:
        patch = np.repeat(patch, 3, axis=2)
    pad_t, pad_l = ay0 - top, ax0 - left
    pad_b, pad_r = top + n - ay1, left + n - ax1
    if pad_t or pad_l or pad_b or pad_r:
        patch = cv2.copyMakeBorder(
            np.ascontiguousarray(patch), max(pad_t, 0), max(pad_b, 0), max(pad_l, 0),
            max(pad_r, 0), cv2.BORDER_REPLICATE,
        )
    interp = cv2.INTER_AREA if n > out else cv2.INTER_LINEAR
    small = cv2.resize(patch, (out, out), interpolation=interp).astype(np.float32)
    if up is not None:
        # Shrunk first (INTER_AREA, no aliasing of small pips), then turned at crop scale.
        m = cv2.getRotationMatrix2D((out / 2.0, out / 2.0), up + 90.0, 1.0)
        m[:, 2] += (size - out) / 2.0
        small = cv2.warpAffine(small, m, (size, size), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
    if normalise:
        small = _normalised(small)
    if small.ndim == 2:
        small = small[:, :, None]
    small = small.transpose(2, 0, 1)  # channels first, as the net takes them
    return small[0] if channels == 1 else np.ascontiguousarray(small)


def _normalised(small: np.ndarray) -> np.ndarray:
    """An (S, S) or (S, S, C) float32 crop with each channel's mean off and one spread for
    all: the spread of the whole centred crop is the root of the channels' mean variance.
    cv2 gives both in one pass over the pixels, ten times faster than numpy's reductions
    over these tiny arrays."""
    mean, sd = cv2.meanStdDev(small)
    small = small - mean.ravel().astype(np.float32)
    small *= np.float32(1.0 / (math.sqrt(float(np.mean(sd * sd))) + 1e-3))
    return small


def _principal_axis(colour: np.ndarray) -> np.ndarray:
    """The unit BGR direction along which the middle of a (3, S, S) crop varies most, signed
    to agree with luma (so light pips stay light, as in a grey crop)."""
    s = colour.shape[1]
    m = s // 5
    mid = colour[:, m : s - m, m : s - m].reshape(3, -1).astype(np.float64)
    # Only the middle: the die's top face, whose pips-against-body contrast is what the net
    # reads; the floor and neighbours at the crop's edge would pull the axis to their colour.
    _, vectors = np.linalg.eigh(np.cov(mid))
    axis = vectors[:, -1]
    return (axis if axis @ _LUMA_BGR >= 0 else -axis).astype(np.float32)


def principal_grey(colour: np.ndarray, normalise: bool = True) -> np.ndarray:
    """A (3, S, S) colour crop (any per-channel offset, one common scale) as the one-channel
    crop a grey net reads: its projection on `_principal_axis`, with zero mean and unit
    spread unless `normalise` is False."""
    g = np.tensordot(_principal_axis(colour), np.asarray(colour, np.float32), axes=1)
    return _normalised(g) if normalise else g


def towards_centre(shape: Sequence[int], bbox: Sequence[float],
                   nadir: Sequence[float] | None = None) -> float:
    """The direction (degrees, image axes) from a box to the middle of the frame: where a
    camera looking straight down sees a flat die's side faces.

    `nadir` (x, y in the frame, possibly far outside it) stands in for the middle when the
    camera's axis is not over the frame's centre (a tilted camera, a photo cropped off
    centre): a flat die's side faces then point to the image of the point straight below
    the camera, wherever that lies."""
    h, w = shape[:2]
    cx, cy = (bbox[0] + bbox[2]) / 2.0, (bbox[1] + bbox[3]) / 2.0
    px, py = (w / 2.0, h / 2.0) if nadir is None else (float(nadir[0]), float(nadir[1]))
    return math.degrees(math.atan2(py - cy, px - cx))


def load_onnx(path: str | Path, trainer: str, threads: int = 1) -> tuple[Path, OnnxNet, dict]:
    """A model, its session and the JSON metadata beside it (empty when there is none);
    a missing or damaged file is a `ModelError` naming the script that makes it."""
    net = nets.load(path, trainer, threads)
    return net.path, net, net.meta


@dataclass
class _Member:
    path: Path
    net: OnnxNet
    meta: dict
    temperature: float
    channels: int
    orient: bool  # trained on crops turned towards the frame's centre
    scale: float = CROP_SCALE  # crop square over the box's longer side
    size: int = CROP_SIZE  # crop side in pixels
    grey: str = "luma"  # a one-channel member's grey (see crop_for)

    @property
    def kind(self) -> tuple[int, bool, float, int, str]:
        """Members whose crops are cut alike share one crop."""
        return self.channels, self.orient, self.scale, self.size, self.grey

    def crop(self, image_bgr: np.ndarray, bbox: Sequence[float],
             nadir: Sequence[float] | None = None) -> np.ndarray:
        up = towards_centre(image_bgr.shape, bbox, nadir) if self.orient else None
        return crop_for(image_bgr, bbox, self.channels, up, self.scale, self.size,
                        grey=self.grey)

    def probs(self, crops: np.ndarray) -> np.ndarray:
        """Class probabilities of (N, channels, S, S) crops at the member's temperature."""
        return nets.softmax(self.net.run(crops), self.temperature)


class ValueNet:
    """The trained nets plus their calibration, loaded once and reused for every frame.

    By default four nets read every crop and their calibrated probabilities are averaged: one
    trained on colour crops, one trained with wide-lens scenes besides, one on grey, and one
    colour net trained with cocked dice far more often. Each is wrong where another is often
    right (grey misses red pips on a smoky die, colour is misled by glittery dice on coloured
    felt, the lean net doubts cocked dice sooner but reads flat dice worse alone), so together
    they make fewer and less confident errors than any one of them.
    """

    def __init__(self, path: str | Path | Sequence[str | Path] | None = None,
                 paint_below: float | None = PAINT_BELOW, threads: int = 1) -> None:
        self.paint_below = paint_below
        if path is None:
            paths: list[str | Path] = list(DEFAULT_MODELS)
        elif isinstance(path, (str, Path)):
            paths = [path]
        else:
            paths = list(path)
        if not paths:
            raise ValueError("a value net needs at least one model")
        self.members = []
        for one in paths:
            model, net, meta = load_onnx(one, "train_valuenet", threads)
            grey = meta.get("grey", "luma")
            if grey not in GREY_AXES:
                raise ValueError(f"{Path(one).with_suffix('.json').name}: \"grey\" must be "
                                 f"one of {', '.join(GREY_AXES)}, not {grey!r}")
            # Models before colour crops were trained on grey ones and carry no "channels".
            self.members.append(_Member(model, net, meta, float(meta.get("temperature", 1.0)),
                                        int(meta.get("channels", 1)),
                                        meta.get("orient") == "centre",
                                        float(meta.get("crop_scale", CROP_SCALE)),
                                        int(meta.get("crop_size", CROP_SIZE)), grey))
        first = self.members[0]
        if any(m.size != first.size for m in self.members):
            # Crops are stacked on the channel axis, so they must be one size.
            raise ValueError("the averaged nets must take crops of one size, got "
                             + ", ".join(f"{m.path.name}: {m.size} px" for m in self.members))
        self.size = first.size
        self.path, self.meta, self.temperature = first.path, first.meta, first.temperature
        # Channels of the crop `crop` cuts: every member's input, stacked.
        self.channels = sum(m.channels for m in self.members)

    def crop(self, image_bgr: np.ndarray, bbox: Sequence[float],
             nadir: Sequence[float] | None = None) -> np.ndarray:
        """The models' input for one box: grey (S,S) for a lone grey model, else every
        member's crop stacked on the channel axis, (channels,S,S); S is 32 unless the nets
        were trained on other crops (`crop_size` in their metadata). Turned crops face
        `nadir` (see `towards_centre`), the frame's middle unless given."""
        if len(self.members) == 1:
            return self.members[0].crop(image_bgr, bbox, nadir)
        cut: dict[tuple[int, bool, float, int], np.ndarray] = {}
        parts = []
        for m in self.members:
            if m.kind not in cut:
                cut[m.kind] = m.crop(image_bgr, bbox, nadir)
            parts.append(cut[m.kind])
        return np.concatenate([c[None] if c.ndim == 2 else c for c in parts])

    def unreadable_towards(self, image_bgr: np.ndarray, bboxes: Sequence[Sequence[float]],
                           nadirs: Sequence[Sequence[float]]) -> np.ndarray:
        """The averaged belief in "unreadable" of each box (columns) with the turned crops
        facing each of `nadirs` (rows).

        A flat die whose side face shows where its crop's top is not reads as a lean, so the
        nadir under which the frame's dice look flattest is where its camera is. Members
        whose crops are not turned answer the same under every nadir and are asked once."""
        out = np.zeros((len(nadirs), len(bboxes)), np.float64)
        if len(bboxes) == 0 or len(nadirs) == 0:
            return out.astype(np.float32)
        kinds: dict[tuple[int, bool, float, int], list[_Member]] = {}
        for m in self.members:
            kinds.setdefault(m.kind, []).append(m)
        for members in kinds.values():
            points = list(nadirs) if members[0].orient else [None]
            crops = np.stack([members[0].crop(image_bgr, b, p) for p in points for b in bboxes])
            if crops.ndim == 3:
                crops = crops[:, None]
            for m in members:
                # A still member's one row adds to every nadir's.
                out += m.probs(crops)[:, UNREADABLE].reshape(len(points), len(bboxes))
        return (out / len(self.members)).astype(np.float32)

    def predict(self, crops: np.ndarray, paints: bool = False) -> np.ndarray:
        """Turn normalised crops (as `crop` cuts them, stacked) into calibrated class
        probabilities, shape (N,8): each member's softmax at its fitted temperature, averaged.

        Dividing by the temperature makes a 0.9 confidence mean what the tracker assumes it
        means; an average of calibrated members leans, if anything, towards doubt.

        `paints`: each colour member reads the crops it is unsure of in other paints too
        (`_in_other_paints`). For reading a die's face, not for telling a die from none.
        """
        crops = np.asarray(crops, dtype=np.float32)
        one = (self.size, self.size) if self.channels == 1 else (
            self.channels, self.size, self.size)
        if crops.ndim == len(one):
            crops = crops[None]
        if crops.shape[1:] != one:
            raise ValueError(f"crops must be (N, {', '.join(map(str, one))}), "
                             f"got {crops.shape}")
        if len(crops) == 0:
            return np.zeros((0, len(CLASSES)), np.float32)
        if self.channels == 1:
            crops = crops[:, None]
        total = np.zeros((len(crops), len(CLASSES)), np.float64)
        at = 0
        for m in self.members:
            part = crops[:, at : at + m.channels]
            p = m.probs(part)
            if paints and m.channels == 3 and self.paint_below is not None:
                p = self._in_other_paints(m, part, p)
            total += p
            at += m.channels
        return (total / len(self.members)).astype(np.float32)

    def _in_other_paints(self, m: _Member, crops: np.ndarray, p: np.ndarray) -> np.ndarray:
        """`p` with the faces' shares taken from the mean over the orders of the colour
        channels (`_OTHER_ORDERS` and the crop's own), for crops that `m` reads less surely
        than `paint_below`.

        Only the split among the six faces moves: what the member gives "not a die" and
        "unreadable" stays its own, so no lean is read through for a paint. (Taking the
        mean's split only where it is surer than the member's own lost rune55 four dice and
        added a confident error: it picks whichever paint happens to look surest.)"""
        unsure = np.flatnonzero(p.max(axis=1) < self.paint_below)
        if not len(unsure):
            return p
        others = np.concatenate([crops[unsure][:, list(o)] for o in _OTHER_ORDERS])
        again = m.probs(others).reshape(len(_OTHER_ORDERS), len(unsure), -1).sum(axis=0)
        p[unsure] = faces_split_as(p[unsure], (p[unsure] + again) / (1 + len(_OTHER_ORDERS)))
        return p

    def read(
        self, image_bgr: np.ndarray, bboxes: Sequence[Sequence[float]]
    ) -> list[tuple[int | None, float, float]]:
        """Read each box as (value or None, confidence of that answer, probability of a die).

        None means the best guess is "not a die" or "a die that cannot be read"; its confidence
        is then that class's probability, so a caller can tell a sure rejection from a shrug.
        """
        if len(bboxes) == 0:
            return []
        probs = self.predict(np.stack([self.crop(image_bgr, b) for b in bboxes]))
        out: list[tuple[int | None, float, float]] = []
        for p in probs:
            k = int(p.argmax())
            value = None if k in (NOT_A_DIE, UNREADABLE) else k
            out.append((value, float(p[k]), float(1.0 - p[NOT_A_DIE])))
        return out

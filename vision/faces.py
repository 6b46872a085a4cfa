"""The faces stage: the value nets' read of each die's top face, turned to where the camera
is, and looked at again where they waver (in other paints, mirrored, refined). Which boxes
are dice stays the first look's call: only the face read moves here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .config import DEFAULT, NadirConfig
from .job import Job
from .valuenet import NOT_A_DIE, UNREADABLE, faces_split_as


def first_look(job: Job, boxes: Sequence[Sequence[float]], crops: np.ndarray,
               probs: np.ndarray, kept: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The crops and the nets' answers once the frame's nadir is known (`job.nadir`): every
    box read again turned to it when it is not the middle; else the faces of the boxes read
    unsurely read in other paints too."""
    job.nadir = find_nadir(job, [boxes[i] for i in kept], probs[kept])
    if job.nadir is not None:
        # Which boxes are dice stays the first look's call; every face from here on is read
        # turned to where the camera is.
        crops = job.crops(boxes)
        return crops, job.nets.value.predict(crops, paints=True)
    return crops, paint_look(job, crops, probs, kept)


def second_looks(job: Job, boxes: Sequence[Sequence[float]], crops: np.ndarray,
                 probs: np.ndarray, kept: list[int], rescued: np.ndarray) -> np.ndarray:
    """`probs` with the faces the nets read unsurely looked at again, mirrored and on their
    refined boxes (not the boxes that are their refined boxes already)."""
    cfg = job.config.faces
    unsure = [i for i in kept if probs[i].max() < cfg.unsure_below and not rescued[i]]
    if cfg.mirror:
        probs = mirror_unsure(job.nets.value, crops, probs, kept, cfg.unsure_below)
    return refined_look(job, boxes, probs, unsure)


def find_nadir(job: Job, dice: Sequence[Sequence[float]], probs: np.ndarray
               ) -> tuple[float, float] | None:
    """Where the point straight below the camera lies in the frame, when its dice say it is
    not the middle; None when they do not.

    The nets learnt that a side face at the top of a crop turned to the frame's middle is
    perspective and one anywhere else a lean. That holds for a camera looking straight down
    with its axis on the frame's centre; a tilted phone, or a frame cut off centre, shows
    every flat die's side faces towards another point, and the nets then doubt its flat dice
    as if they leaned. Only where the frame's typical die is that doubtful are other nadirs
    tried, 8 ways, near the centre and so far off that every crop turns the same way. The one
    under which the dice look flattest is taken where it makes the frame flat and settles
    most of the dice doubted turned to the middle: an oblique camera's flat dice all lean one
    way to the nets, while cocked dice lean every which way. A frame whose dice are mostly
    cocked can still fool it: every read of a frame with a nadir is asked about.
    """
    cfg = job.config.nadir
    if not cfg.enabled or len(dice) < cfg.dice:
        return None
    p_unr = np.asarray(probs[:, UNREADABLE], np.float64)
    if typical_doubt(p_unr, cfg) < cfg.doubt_from:
        return None
    likeliest = np.argsort(probs[:, NOT_A_DIE], kind="stable")[:cfg.sample]
    h, w = job.image.shape[:2]
    reach = np.hypot(w, h) / 2.0
    nadirs = [(w / 2.0 + k * reach * math.cos(a), h / 2.0 + k * reach * math.sin(a))
              for k in cfg.reach for a in np.radians(np.arange(0, 360, 45))]
    lean = job.nets.value.unreadable_towards(job.image, [dice[i] for i in likeliest], nadirs)
    best = int(np.argmin([typical_doubt(row, cfg) for row in lean]))
    before, after = p_unr[likeliest], lean[best]
    doubted = before >= cfg.doubted
    settled = np.count_nonzero(doubted & (after <= before / 2))
    if typical_doubt(after, cfg) > cfg.flat or settled < cfg.most * np.count_nonzero(doubted):
        return None
    return float(nadirs[best][0]), float(nadirs[best][1])


def typical_doubt(p_unreadable: np.ndarray, cfg: NadirConfig = DEFAULT.nadir) -> float:
    """The belief in "unreadable" of a frame's typical die: the mean over the least doubted
    `cfg.typical` of them, so a few cocked dice do not make the frame look oblique."""
    u = np.sort(np.asarray(p_unreadable, np.float64))
    return float(u[: max(1, round(cfg.typical * len(u)))].mean())


def paint_look(job: Job, crops: np.ndarray, probs: np.ndarray, rows: Sequence[int]
               ) -> np.ndarray:
    """`probs`, with the faces' split of each of `rows` read less surely than
    `faces.unsure_below` taken from the nets reading its crop in other paints too.

    Only the split among the faces moves (a die's "no die" and "unreadable" stay as they
    were): dice of another maker's paints (blue pips on a green die, which grey loses too)
    are read, and no die is found or lost by it."""
    cfg = job.config.faces
    unsure = [i for i in rows if probs[i].max() < cfg.unsure_below]
    if not cfg.paint or not unsure:
        return probs
    again = job.nets.value.predict(np.asarray(crops)[unsure], paints=True)
    out = np.array(probs, np.float32)
    out[unsure] = faces_split_as(out[unsure], again)
    return out


def mirror_unsure(net: Any, crops: np.ndarray, probs: np.ndarray, rows: Sequence[int],
                  below: float) -> np.ndarray:
    """`probs` (the nets' answers for `crops`), with each of `rows` whose likeliest class
    stays under `below` read again mirrored left to right and the two answers averaged.

    A die reads the same in a mirror, and a crop turned towards the frame's centre keeps its
    top (the nets learnt from mirrored crops too), so the mirror is a second look at the same
    die whose errors are partly its own: it settles some of the reads the nets waver on,
    without a second pass over the crops they are sure of.
    """
    out = np.array(probs, np.float32)
    unsure = [i for i in rows if out[i].max() < below]
    if unsure:
        mirrored = np.ascontiguousarray(np.asarray(crops, np.float32)[unsure][..., ::-1])
        out[unsure] = (out[unsure] + net.predict(mirrored, paints=True)) / 2
    return out


def refined_look(job: Job, boxes: Sequence[Sequence[float]], probs: np.ndarray,
                 rows: list[int]) -> np.ndarray:
    """`probs`, with each of `rows` (the reads the nets were unsure of at first) averaged
    with a read of the box the refiner brings to its die, weighted `faces.refined_weight`
    (the refined boxes are kept for the final refinement).

    The detector's box takes in a low lamp's shadow or a leaning side face, and the nets read
    the face inside it less surely; the die's own box is a third look whose errors are partly
    its own. Only as one voice of three, for the dice the first look doubts, does it pay."""
    cfg = job.config.faces
    if job.refiner is None or not cfg.refined_look or not rows:
        return probs
    refined = job.refined(boxes, rows)
    again = job.nets.value.predict(job.crops(refined), paints=True)
    out = np.array(probs, np.float32)
    out[rows] = (1.0 - cfg.refined_weight) * out[rows] + cfg.refined_weight * again
    return out

"""The faint stage: dice the usual look barely sees. A pale die on pale paper, a dark one in
shadow or a smeared one gets a weak peak of its own, or none until the frame is re-toned.
Such dice are kept only where the nets are sure of them, and are never certain: the
detector barely saw them, or saw them in a picture the camera did not take."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np

from .boxes import same_die, within_frame
from .candidates import Candidates, shows_face
from .config import DEFAULT, ToneConfig
from .job import Job
from .propose import Found, without_specks
from .valuenet import NOT_A_DIE

Kept = tuple[list, np.ndarray | None, np.ndarray | None]


def more_dice(job: Job, found: Found, cands: Candidates) -> Candidates:
    """`cands` (the usual look's boxes, judged) with the faint and the re-toned looks' dice
    added, and the nets' die belief of each box."""
    cfg = job.config
    boxes = cands.box_list()
    taken = [b for b, ok in zip(boxes, cands.eligible, strict=True) if ok]
    extra: list[Kept] = [faint_dice(job, found.faint, taken)]
    # A frame whose usual look peaks somewhere it finds no die may hold a die it cannot make
    # out (a box on part of a pale die, a weak peak on a dark one): looked at again re-toned.
    # Asked only there, the second look costs about half as much and finds nearly as many.
    if cfg.toned.enabled and found.usual and any(
            not any(same_die(d.bbox, b, cfg.same_die) for b in taken)
            for d in found.faint + found.dets):
        extra.append(toned_dice(job, taken + [d.bbox for d in extra[0][0]], found.sure))
    crops, probs, score, eligible = cands.crops, cands.probs, cands.score, cands.eligible
    margin, toned = list(cands.margin), list(cands.toned)
    for n, (more, more_crops, more_probs) in enumerate(extra):
        if more:
            boxes = boxes + [d.bbox for d in more]
            margin += [d.margin for d in more]
            toned += [n == 1] * len(more)
            crops = more_crops if crops is None else np.concatenate([crops, more_crops])
            probs = np.concatenate([probs, more_probs])
            score = np.concatenate([score, np.array([d.score for d in more], np.float32)])
            eligible = np.concatenate([eligible, np.ones(len(more), bool)])
    rescued = np.concatenate([cands.rescued, np.zeros(len(boxes) - len(cands), bool)])
    return Candidates.of(boxes, score, margin, crops, probs, eligible, rescued,
                         np.array(toned, bool))


def faint_dice(job: Job, faint: Sequence[Any], found: Sequence[Sequence[float]]) -> Kept:
    """Of the usual look's peaks under `propose.keep_min` (`faint`), those on a die no other
    box finds that the nets are sure is a die and read a face on surely: the
    peak-times-die-probability rule can never report them. Whole dice only, one box per die;
    the weak peak keeps such a read from being certain. `found`: the boxes already taken
    for dice. Returns the detections kept, with their crops and the nets' answers."""
    cfg = job.config.faint
    if not cfg.enabled:
        return [], None, None
    return read_alone(job, job.image, faint, found, lambda probs, peaks: (
        (1.0 - probs[:, NOT_A_DIE] >= cfg.die) & shows_face(probs, 1, cfg.face)))


def read_alone(job: Job, frame: np.ndarray, candidates: Sequence[Any],
               found: Sequence[Sequence[float]],
               keep: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Kept:
    """Of `candidates` (detections), the whole ones on no die `found` (boxes) or a stronger
    candidate holds, read by the value nets in `frame`; those `keep(probs, peaks)` takes,
    with their crops and the nets' answers (None, None when there are none to read)."""
    alone, taken = [], list(found)
    for d in sorted(candidates, key=lambda d: -d.score):
        if within_frame(d, job.config.propose.cut_tolerance) and not any(
                same_die(d.bbox, b, job.config.same_die) for b in taken):
            alone.append(d)
            taken.append(d.bbox)
    if not alone:
        return [], None, None
    crops = job.crops([d.bbox for d in alone], frame)
    probs = job.nets.value.predict(crops)
    dice = keep(probs, np.array([d.score for d in alone], np.float32))
    return [d for d, ok in zip(alone, dice, strict=True) if ok], crops[dice], probs[dice]


def toned_dice(job: Job, found: Sequence[Sequence[float]], sure: Sequence[Any]) -> Kept:
    """Dice the usual look finds only in the frame re-toned: in an overexposed frame a pale
    die on pale paper (pink or white on white) and in a dark one a dark die in shadow differ
    from the floor by a few grey levels, and the detector boxes a part of such a die or
    nothing. Raised to a power (`toned.gamma`, or its inverse for a dark frame), those levels
    are spread apart.

    Kept, like the usual look's boxes, where the peak times the nets' die probability reaches
    `propose.keep_min`, whole and not a speck, on a die no other box finds (`found`), and
    where the nets read a face at `toned.face`: a dark frame brightened shows a wide lens's
    tall side faces well enough to be boxed apart from their top faces, and the nets read
    those less surely. The nets judge such a die re-toned too, as the detector saw it: the
    pips of a pale die, faint in the frame, stand out there. A faint peak there is judged as
    the usual look's are (`faint_dice`)."""
    from .detector import tone_curve

    cfg = job.config
    gamma = tone_gamma(job.image, cfg.toned)
    if gamma is None:
        return [], None, None
    curve = tone_curve(gamma)
    toned = without_specks(job.nets.detector.detect(job.image, cfg.propose.faint_peak,
                                                    tone=curve), sure, cfg.specks)
    seen = cv2.LUT(job.image, curve) if cfg.toned.judged else job.image
    keep_min, faint = cfg.propose.keep_min, cfg.faint

    def keep(probs: np.ndarray, peaks: np.ndarray) -> np.ndarray:
        die = 1.0 - probs[:, NOT_A_DIE]
        # The usual look's rule with a face read, or, for a faint peak, the faint dice's.
        usual = (peaks * die >= keep_min) & shows_face(probs, 1, cfg.toned.face)
        if not faint.enabled:
            return usual
        return usual | ((die >= faint.die) & shows_face(probs, 1, faint.face))

    return read_alone(job, seen, toned, found, keep)


def tone_gamma(frame: np.ndarray, cfg: ToneConfig = DEFAULT.toned) -> float | None:
    """The power `toned_dice` raises a frame's levels to: `cfg.gamma` where its median grey
    level is above `cfg.bright`, the inverse where it is below `cfg.dark`, else None (no
    second look)."""
    h, w = frame.shape[:2]
    f = cfg.thumb / max(h, w)
    thumb = cv2.resize(frame, (max(1, round(w * f)), max(1, round(h * f))),
                       interpolation=cv2.INTER_AREA)
    grey = cv2.cvtColor(thumb, cv2.COLOR_BGR2GRAY) if thumb.ndim == 3 else thumb
    level = float(np.median(grey))
    if level > cfg.bright:
        return cfg.gamma
    if level < cfg.dark:
        return 1.0 / cfg.gamma
    return None

"""The propose stage: the detector's looks at the frame, and the value nets' first read of
every box it proposes.

The detector was trained on dice of 10-50 px at its input. A close camera's dice are larger
(the half and quarter looks find them, and the frame is looked at again at their size), a
distant camera's smaller (looked at again at a larger input). Specks and boxes the frame
cuts are set aside before the nets see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .boxes import box_side, inside_share, median_side, within_frame
from .candidates import Candidates, detections_arrays, shows_face
from .config import SpeckConfig
from .job import Job
from .valuenet import NOT_A_DIE, UNREADABLE


@dataclass
class Found:
    """What the detector's looks found."""

    dets: list[Any]  # whole dice (or put inside the frame by the refiner), peak >= keep_min
    faint: list[Any]  # the usual look's weaker peaks (faint_peak to keep_min)
    sure: list[Any]  # the usual (or large) look's detections at sure_peak and more
    usual: bool  # the frame was looked at at the detector's usual input


def look(job: Job) -> Found:
    """The detector's boxes at the input that shows the dice at a side it was trained on,
    less the specks and the dice the frame cuts."""
    frame, cfg, detector = job.image, job.config, job.nets.detector
    h, w = frame.shape[:2]
    found, sure, long = usual_or_large(job)
    small_cfg = cfg.small
    if small_cfg.enabled and sure and long == detector.long_side:
        # Dice a distant camera sees small shrink to a few pixels at the net's input, where it
        # misses some and boxes the rest loosely: look again at an input that brings them to
        # a side it was trained on and add what it finds (the same die found twice is
        # reported once, later). Judged by the dice the net is sure of, so specks on a hand
        # over the tray do not trigger it; a small frame is enlarged for it.
        k = detector.long_side / max(h, w)
        small = median_side(sure) * k
        if small < small_cfg.die_input:
            goal = detector.long_side * small_cfg.die_goal / small
            long = min(goal, small_cfg.dice_max, small_cfg.enlarge * max(h, w))
            long = max(detector.long_side, int(long) // 32 * 32)
            found = found + detector.detect(frame, cfg.propose.detect_min, long)
    found = without_specks(found, sure, cfg.specks)
    # A cut die is judged on the predicted box before clipping: a whole die a few pixels from
    # the edge has a box a few pixels too large as often as not, while half the cut dice
    # overshoot by more than cut_tolerance. A peak under keep_min can never be reported (its
    # die probability would have to exceed 1), nor hide another box: only the faint dice
    # look at them. A box past the tolerance is asked of the box refiner first.
    keep_min = cfg.propose.keep_min
    faint = [d for d in found if d.score < keep_min]
    found = [d for d in found if d.score >= keep_min]
    whole = [within_frame(d, cfg.propose.cut_tolerance) for d in found]
    rescued = {id(d) for d in whole_after_all(
        job, [d for d, ok in zip(found, whole, strict=True) if not ok])}
    dets = [d for d, ok in zip(found, whole, strict=True) if ok or id(d) in rescued]
    return Found(dets, faint, sure, long == detector.long_side)


def first_read(job: Job, dets: Sequence[Any]) -> Candidates:
    """The value nets' read of every detection's box (eligibility is decided once the boxes
    the nets call no die are judged again)."""
    boxes, score, margin = detections_arrays(dets)
    crops = job.crops(boxes) if dets else None
    probs = (job.nets.value.predict(crops) if dets
             else np.zeros((0, UNREADABLE + 1), np.float32))
    return Candidates.of(boxes, score, margin, crops, probs, np.zeros(len(dets), bool))


def usual_or_large(job: Job) -> tuple[list, list, int]:
    """The detections of the usual look, or of the large look where the frame's dice are
    larger than the detector knows; those of them it is sure of; and the input's long side.

    A close camera's dice are boxed by the usual look as pips and halves, or not at all. The
    half look sees such dice whole; where its dice are large, the frame is looked at again
    at the input that brings them to `large.die_goal`, and that look replaces the usual one.
    Dice of a fifth of the frame and more are seen whole only at a quarter of the input.
    """
    frame, cfg, detector = job.image, job.config, job.nets.detector
    large_cfg, detect_min, sure_peak = cfg.large, cfg.propose.detect_min, cfg.propose.sure_peak
    normal = detector.long_side
    looks = 3 if large_cfg.quarter else 2 if large_cfg.half else 1
    # The usual look's weaker peaks are kept for the faint dice; the large looks keep theirs.
    found, *smaller = detector.detect_shrinking(frame, cfg.propose.faint_peak, looks)
    half = [d for d in smaller[0] if d.score >= detect_min] if large_cfg.half else []
    quarter = [d for d in smaller[1] if d.score >= detect_min] if large_cfg.quarter else []
    sure = [d for d in found if d.score >= sure_peak]
    # Largest first: dice of a fifth of the frame and more, whose pips the half look takes
    # for dice, are seen whole at a quarter only. A tray seen whole with one die in its
    # middle is a "1" to the nets: only faces of two pips and more make the quarter look's
    # boxes dice, and they must hold what the usual look is sure of (its pips and halves): a
    # die tumbling near the lens is large beside the dice already lying in the tray, which
    # the usual look sees whole.
    typical = None
    if large_cfg.quarter:
        typical = large_dice(job, quarter, 2 * large_cfg.die_input, large_cfg.face_sure, 2,
                             sure)
    if typical is None and large_cfg.half:
        typical = large_dice(job, half, large_cfg.die_input, 0.0, 1)
    if typical is None:
        return found, sure, normal
    long = max(large_cfg.dice_min, int(normal * large_cfg.die_goal / typical) // 32 * 32)
    large = detector.detect(frame, detect_min, long)
    large_sure = [d for d in large if d.score >= sure_peak]
    # A camera far above a small tray: the half look sees the whole tray as one large die and
    # its dice as pips, and at the input that look asks for, the dice vanish. The nets settle
    # it: at their own scale they read the dice as faces. Where the usual look's boxes of
    # under half the large dice's side hold several sure faces, and over twice as many as
    # the large look's boxes, the frame's dice are the usual look's.
    k = normal / max(frame.shape[:2])
    small = [d for d in sure if box_side(d.bbox) * k < typical / 2]
    usual_faces = sure_faces(job, small)
    if (usual_faces >= large_cfg.outread_least
            and usual_faces > 2 * sure_faces(job, large_sure)):
        return found, sure, normal
    return large, large_sure, long


def sure_faces(job: Job, dets: Sequence[Any]) -> int:
    """How many of the boxes the value nets read as a face at `large.face_sure`: at the
    scale the frame's dice are seen whole, its boxes are faces to them, while pips, halves
    and a whole tray are not."""
    if not dets:
        return 0
    probs = job.nets.value.predict(job.crops([d.bbox for d in dets]))
    return int(np.sum(shows_face(probs, 1, job.config.large.face_sure)))


def large_dice(job: Job, found: Sequence[Any], above: float, face_sure: float, least: int,
               held_by: Sequence[Any] | None = None) -> float | None:
    """The typical side (px at the detector's usual input) of the dice a smaller look is
    sure of, when it is over `above` and they are dice (most read as a face of at least
    `least` pips, with at least `face_sure`); else None. Given `held_by`, only the faces
    over `above` count, and they must hold at least half of those boxes."""
    frame, inside = job.image, job.config.same_die.inside
    k = job.nets.detector.long_side / max(frame.shape[:2])
    coarse = [d for d in found if d.score >= job.config.propose.sure_peak]
    if not coarse or median_side(coarse) * k <= above:
        return None
    if held_by is not None and not holds(
            [d for d in coarse if box_side(d.bbox) * k > above], held_by, inside):
        return None  # as below for the faces among them, before the nets' time is spent
    # A tray seen whole, its dice small, looks like one large die with pips to the
    # detector; the value nets tell it from a die (they call it unreadable, or no die).
    # Glints and pips the coarse look takes for dice are no dice to them either.
    probs = job.nets.value.predict(job.crops([d.bbox for d in coarse]))
    held = int(np.sum(probs[:, NOT_A_DIE] < 0.5))
    faces = [d for d, face in zip(coarse, shows_face(probs, least, face_sure), strict=True)
             if face]
    if 2 * len(faces) <= held:
        return None
    if held_by is not None:
        faces = [d for d in faces if box_side(d.bbox) * k > above]
        if not faces or not holds(faces, held_by, inside):
            return None
    typical = median_side(faces) * k
    return typical if typical > above else None


def holds(large: Sequence[Any], held_by: Sequence[Any], inside: float) -> bool:
    """Whether most of the boxes `held_by` (what the usual look is sure of) lie inside the
    `large` dice: their pips and halves, or the large dice themselves, and not dice of their
    own beside them."""
    within = sum(any(inside_share(h.bbox, f.bbox) >= inside for f in large) for h in held_by)
    return 2 * within >= len(held_by)


def without_specks(dets: list, sure: Sequence[Any], specks: SpeckConfig) -> list:
    """`dets` less the boxes under `specks.share` of the typical side of the dice the detector
    is sure of (`sure`), once it is sure of `specks.sure` or more: a box half a die's size is
    a speck, a pip or a glint, most of them found by the small-dice look."""
    if not specks.enabled or len(sure) < specks.sure:
        return dets
    typical = median_side(sure)
    return [d for d in dets if box_side(d.bbox) >= specks.share * typical]


def whole_after_all(job: Job, overshooting: Sequence[Any]) -> list:
    """Of the detections whose boxes reach past the frame edge by more than the cut
    tolerance, those whose die the box refiner puts inside the frame after all (within
    `propose.refined_cut` of its side): a whole die a few pixels from the edge whose predicted
    box overshoots. The refiner puts whole dice well inside that, most cut dice far outside;
    a cut die let through is read and asked about (it lies at the edge), never certain."""
    cfg = job.config.propose
    if job.refiner is None or not cfg.whole_after_all or not overshooting:
        return []
    from .boxnet import apply_edges

    h, w = job.image.shape[:2]
    kept = []
    for d, e in zip(overshooting, job.refiner.edges(job.image, [d.bbox for d in overshooting]),
                    strict=True):
        x0, y0, x1, y1 = apply_edges(d.bbox, e, None)
        if min(x0, y0, w - x1, h - y1) >= -cfg.refined_cut * box_side(d.bbox):
            kept.append(d)
    return kept

"""Read every die in one frame: where it is, its pips, its colour, and how sure we are.

A learned detector proposes the dice, the value nets read each box's top face, and checks
of their own (pips counted by rule, a wider view, nets that see what a die rests on) decide
how sure each read is. A value is only reported as certain when nothing doubts it; anything
else (a cocked die, motion blur, a glare spot, a die cut by the frame's edge) is asked about,
because a confident wrong value would silently corrupt a game.

The read is a pipeline of stages, each a module of its own, run in this order by
`DiceReader.read_traced` (the names are the keys of `Reading.stage_ms`):

  propose    the detector's looks, specks and cut dice set aside (`vision.propose`)
  rejudge    boxes the nets call no die judged again refined (`vision.refine`)
  faint      dice only a weak peak or the re-toned frame shows (`vision.faint`)
  merge      one box per die, and the dice a surer box hides (`vision.merge`)
  faces      the top face, turned to the camera's nadir, looked at again (`vision.faces`)
  certainty  each read's value, confidence and doubts (`vision.certainty`)
  leans      the context nets and a wider view asked about leans (`vision.leans`)
  pips       the pips counted by rule, a second opinion (`vision.pips`)
  colour     each die's colour, and Royale's blank gray dice (`vision.colour`)
  refine     the boxes brought to their dice, checked there (`vision.refine`)
  floor      what lies off the calibrated tray floor dropped
  size       the Biggy flags (`vision.size`)

Every tuning value is in `vision.config.ReaderConfig`, with a switch for each optional pass.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import cv2
import numpy as np

from . import faces, faint, merge, propose, refine
from .boxes import box_side
from .boxes import one_box_per_die as _one_box_per_die
from .boxes import same_die as _same_die
from .candidates import Candidates
from .certainty import ASKED, CERTAIN, add_doubt, calibrated, judged
from .colour import (
    PIP_WHITE,
    RELATIVE_PALETTE,
    Palette,
    _relative,
    blank_dice,
    builtin_palette,
    colours,
    nearest_relative,
    relative_colours,
)
from .config import DEFAULT, ProposeConfig, ReaderConfig
from .dieread import DieRead
from .faces import mirror_unsure as _mirror_unsure
from .job import Job, Nets
from .leans import check_leans
from .merge import doubted_by_rivals as _doubted_by_rivals
from .pips import face_side, second_opinion
from .pips import shows_pips as _shows_pips
from .profile import Profile
from .size import mark_big
from .valuenet import UNREADABLE

__all__ = [
    "CERTAIN", "DETECT_MIN", "PIP_WHITE", "RELATIVE_PALETTE", "STAGES", "DiceReader",
    "DieRead", "Nets", "ReaderConfig", "Reading", "_doubted_by_rivals", "_mirror_unsure",
    "_one_box_per_die", "_relative", "_same_die", "_shows_pips", "box_side", "builtin_palette",
    "calibrated", "face_side", "nearest_relative", "relative_colours",
]

# The stages of `read_traced`, in pipeline order: the keys of `Reading.stage_ms`.
STAGES = ("propose", "rejudge", "faint", "merge", "faces", "certainty", "leans", "pips",
          "colour", "refine", "floor", "size")

# The detector's threshold, for `training/train_valuenet.py`, which cuts its training boxes
# at it; the reader itself reads `config.propose.detect_min`.
DETECT_MIN = ProposeConfig.detect_min


@dataclass
class Reading:
    """One frame's read with what led to it (`DiceReader.read_traced`)."""

    dice: list[DieRead]
    # Where the frame's dice put the point below the camera (None: the frame's middle).
    nadir: tuple[float, float] | None
    # Every candidate box the nets judged, before one box per die was chosen: boxes, the
    # detector's peaks, the nets' answers and die beliefs (`Candidates`, crops left out).
    proposals: Candidates
    # Wall time (ms) of each stage for this frame, in pipeline order (`STAGES`).
    stage_ms: dict[str, float]


class DiceReader:
    """Holds what is fixed between frames (nets, config, profile); `read` is one frame.

    `config` tunes every stage and switches each optional pass (`ReaderConfig`); `nets` are
    the models (`Nets.shipped(threads)` unless given: a benchmark tries a candidate model
    with `nets=dataclasses.replace(Nets.shipped(), value=ValueNet(path))`).
    """

    def __init__(self, profile: Profile | None = None, config: ReaderConfig = DEFAULT,
                 threads: int = 1, nets: Nets | None = None) -> None:
        """Load every net once (a missing or damaged model is a `ModelError` here, before the
        first frame); `threads` is how many cores the nets may use for one frame."""
        self.profile = profile
        self.config = config
        self.nets = nets if nets is not None else Nets.shipped(threads)
        self.palette = Palette.of(profile)
        self._floor_polys: dict[tuple[int, int], np.ndarray | None] = {}

    # --- public ----------------------------------------------------------------------------
    def read(self, frame: np.ndarray) -> list[DieRead]:
        """The dice in a BGR frame."""
        return self.read_traced(frame).dice

    def read_traced(self, frame: np.ndarray) -> Reading:
        """The dice in a BGR frame, with the nadir, the proposals and each stage's time."""
        t0 = time.perf_counter()
        job = self.job(frame)
        job.stage_ms["propose"] = (time.perf_counter() - t0) * 1000.0  # the white balance
        h, w = job.image.shape[:2]
        with job.stage("propose"):
            found = propose.look(job)
            cands = propose.first_read(job, found.dets)
        with job.stage("rejudge"):
            cands = refine.rejudge(job, cands)
        with job.stage("faint"):
            cands = faint.more_dice(job, found, cands)
        proposals = cands.summary()
        reads = self._read_candidates(job, cands) if len(cands) else []
        with job.stage("floor"):
            reads = self._on_floor(reads, w, h)
        with job.stage("size"):
            mark_big(reads, job.image, self.config.size, self.config.pips)
        # A frame without candidates skips the stages from merge on: they took no time.
        stage_ms = {name: job.stage_ms.get(name, 0.0) for name in STAGES}
        return Reading(reads, job.nadir, proposals, stage_ms)

    def job(self, frame: np.ndarray) -> Job:
        """A frame's read, started: the frame checked and white-balanced by the profile."""
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3 or frame.size == 0:
            raise ValueError("a frame must be a BGR image (height x width x 3)")
        if self.profile and self.profile.white_balance:
            gains = np.array(self.profile.white_balance, np.float32)
            frame = np.clip(frame.astype(np.float32) * gains, 0, 255).astype(np.uint8)
        return Job(frame, self.nets, self.config)

    def floor_polygon(self, w: int, h: int) -> np.ndarray | None:
        """The calibrated tray floor in this frame's pixels, or None without a usable one.

        The profile's corners are scaled to the frame (the same camera view at another
        resolution); a frame of another shape is another view, and its corners mean nothing.
        """
        if (w, h) not in self._floor_polys:
            poly = None
            p = self.profile
            if p is not None and p.tray_corners and p.image_size:
                iw, ih = p.image_size
                if abs((w / h) / (iw / ih) - 1) <= 0.02:
                    poly = (np.array(p.tray_corners, np.float32)
                            * np.float32([w / iw, h / ih])).reshape(-1, 1, 2)
            self._floor_polys[(w, h)] = poly
        return self._floor_polys[(w, h)]

    # --- the stages from merge on -------------------------------------------------------------
    def _read_candidates(self, job: Job, cands: Candidates) -> list[DieRead]:
        cfg = job.config
        with job.stage("merge"):
            boxes, kept = merge.merge(job, cands)
        with job.stage("faces"):
            crops, probs = faces.first_look(job, boxes, cands.crops, cands.probs, kept)
            crowded = (_doubted_by_rivals(boxes, probs, kept, cfg.certainty.rival_unreadable,
                                          cfg.same_die) if cfg.certainty.rivals else set())
            probs = faces.second_looks(job, boxes, crops, probs, kept, cands.rescued)
        with job.stage("certainty"):
            h, w = job.image.shape[:2]
            near = cfg.certainty.edge_doubt * max(h, w)
            box_of = sorted(kept)  # the candidate each read is of
            reads = []
            for i in box_of:
                b = boxes[i]
                value, confidence, doubts = judged(
                    probs[i], cands.score[i], b, cands.margin[i], near, i in crowded,
                    bool(cands.toned[i]), job.nadir is not None, cfg.certainty,
                    cfg.propose.sure_peak)
                side = ((b[2] - b[0]) + (b[3] - b[1])) / 2
                reads.append(DieRead(value, "", False, b, confidence, side, 0.0,
                                     doubts=doubts))
        with job.stage("leans"):
            check_leans(job, reads, [float(probs[i, UNREADABLE]) for i in box_of])
        with job.stage("pips"):
            if cfg.pips.second_opinion:
                for r in reads:
                    if r.value is not None and r.confidence >= CERTAIN:
                        # Last of the checks, as the costliest: only a certain read is asked.
                        why = second_opinion(job.image, r.bbox, r.value, cfg.pips)
                        if why is not None:
                            r.confidence = min(r.confidence, ASKED)
                            add_doubt(r, why)
        with job.stage("colour"):
            net = job.nets.colour if cfg.colour.net else None
            bboxes = [r.bbox for r in reads]
            # Measured against the pips once, for the names and the blank dice both.
            rel = None if self.palette.measured else _relative(job.image, bboxes, cfg.colour)
            names = colours(job.image, bboxes, self.palette, net, cfg.colour,
                            pips=[r.value is not None for r in reads], relative=rel)
            for r, colour in zip(reads, names, strict=True):
                r.colour = colour
            unsure = [r.value is not None and r.confidence < CERTAIN for r in reads]
            for r, blank in zip(reads, blank_dice(job.image, bboxes, unsure, cfg.colour, rel),
                                strict=True):
                if blank:  # Royale's gray dice have no face to read
                    r.value, r.colour = None, "gray"
                    r.doubts = ("blank",)
        with job.stage("refine"):
            reads = refine.final(job, reads, boxes, box_of, cands.die_p)
        return reads

    def _on_floor(self, reads: list[DieRead], w: int, h: int) -> list[DieRead]:
        """Dice lie on the tray floor: what sits on the walls or the table beyond (printed
        art, a spare die, a cup) is not in play. A die leaning on a wall still has its centre
        within half a side of the floor's edge."""
        poly = self.floor_polygon(w, h)
        if poly is None:
            return reads
        kept = []
        for r in reads:
            x0, y0, x1, y1 = r.bbox
            side = max(x1 - x0, y1 - y0)
            inside = cv2.pointPolygonTest(poly, ((x0 + x1) / 2, (y0 + y1) / 2), True)
            if inside >= -0.5 * side:
                kept.append(r)
        return kept

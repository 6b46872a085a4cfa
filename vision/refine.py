"""The box refiner's stages: boxes the nets call no die judged again refined (`rejudge`),
and, last, every reported die's box brought to its die (`final`).

The refiner (`vision.boxnet`) brings a detector box to its die's edges. Which boxes are dice
and what they read is the detector's boxes' call (the checks were tuned on them); the
reported box, which the tracker matches and the Biggy test sizes, is the die's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .boxes import Box, one_box_per_die, same_die
from .candidates import Candidates, shows_face
from .certainty import CERTAIN
from .job import Job
from .leans import ask_about_leans
from .valuenet import NOT_A_DIE

if TYPE_CHECKING:
    from .dieread import DieRead


def rejudge(job: Job, cands: Candidates) -> Candidates:
    """`cands` with the boxes the nets call no die replaced by their refined boxes where
    those are dice (`rejudged`), and which boxes may be reported (peak x die probability
    reaching `propose.keep_min`)."""
    boxes, crops, probs = cands.box_list(), cands.crops, cands.probs
    rescued: set[int] = set()
    if len(cands) and job.config.rejudge.enabled:
        boxes, crops, probs, rescued = rejudged(job, boxes, crops, probs, cands.score)
    # A rescued box is its refined box already: no step refines it again.
    job.settled.update({i: boxes[i] for i in rescued})
    eligible = cands.score * (1.0 - probs[:, NOT_A_DIE]) >= job.config.propose.keep_min
    return Candidates.of(boxes, cands.score, cands.margin, crops, probs, eligible,
                         rescued=np.array([i in rescued for i in range(len(boxes))], bool))


def rejudged(job: Job, boxes: list, crops: np.ndarray, probs: np.ndarray, score: np.ndarray
             ) -> tuple[list, np.ndarray, np.ndarray, set[int]]:
    """The boxes, crops and probabilities, and which boxes were replaced: a box the detector
    peaks on surely but the nets call no die gives way to its refined box where the nets
    call that one a die (and, under a weaker peak, read a face on it surely: `rejudge.face`).
    In a cluster of touching dice the detector's box may straddle two of them: a crop of
    halves is no die to the nets, and the die under it would be lost."""
    cfg = job.config
    die_p = 1.0 - probs[:, NOT_A_DIE]
    keep_min = cfg.propose.keep_min
    asked = [i for i in range(len(boxes)) if score[i] * die_p[i] < keep_min]
    if job.refiner is None or not asked:
        return boxes, crops, probs, set()
    refined = job.refiner.refine(job.image, [boxes[i] for i in asked])
    again = job.crops(refined)
    p = job.nets.value.predict(again)
    need = moved_again(job, refined, again, p)
    # A weaker peak's refined box must also show a face surely, as a faint die's must:
    # refined onto a speck, a wide lens's side face or a wall's printed letter, such a box is
    # often a die to the nets, but shows them no face.
    weak_ok = shows_face(p, 1, cfg.rejudge.face)
    found = [boxes[i] for i in range(len(boxes)) if score[i] * die_p[i] >= keep_min]
    boxes, crops, probs = list(boxes), crops.copy(), probs.copy()
    rescued = set()
    for j, i in enumerate(asked):
        # Only a die no other box finds: a box on a die's face alone (the small-dice look
        # boxes the pips of a Biggy) refined is a smaller box of a die found already.
        if 1.0 - p[j, NOT_A_DIE] >= need[j] and (
                score[i] >= cfg.rejudge.peak or weak_ok[j]) and not any(
                same_die(refined[j], f, cfg.same_die) for f in found):
            boxes[i], crops[i], probs[i] = refined[j], again[j], p[j]
            rescued.add(i)
    return boxes, crops, probs, rescued


def moved_again(job: Job, refined: list, crops: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The die probability each refined box must reach to be kept: `refine.rescue_sure`, or
    `refine.again_die` for a box the nets still call no die, which is moved once more
    (`refined`, `crops` and `probs` are updated in place for those). The refiner moves a box
    only part of the way to its die, so a box straddling two dice may end its move still half
    on the neighbour; moved twice, it has travelled far from the detector's guess, and the
    nets must be as sure of a die there as of a faint one."""
    cfg = job.config.refine
    need = np.full(len(refined), cfg.rescue_sure, np.float32)
    rows = [j for j in range(len(refined)) if 1.0 - probs[j, NOT_A_DIE] < cfg.rescue_sure]
    if rows and cfg.again:
        moved = job.refiner.refine(job.image, [refined[j] for j in rows])
        moved_crops = job.crops(moved)
        moved_p = job.nets.value.predict(moved_crops)
        for k, j in enumerate(rows):
            refined[j], crops[j], probs[j] = moved[k], moved_crops[k], moved_p[k]
            need[j] = cfg.again_die
    return need


def final(job: Job, reads: list[DieRead], boxes: Sequence[Box], box_of: Sequence[int],
          die_p: np.ndarray) -> list[DieRead]:
    """The reads with their boxes brought to their dice, checked again there.

    Last, so the checks before see the boxes they were tuned and trained on; what is reported
    (and sized for the Biggy test) is the die's own box. A box refined already is not moved
    again (that would move it further than the refiner's trust in one answer)."""
    cfg = job.config
    if job.refiner is None or not cfg.refine.final:
        return reads
    for r, box in zip(reads, job.refined(boxes, box_of), strict=True):
        r.bbox, r.side = box, ((box[2] - box[0]) + (box[3] - box[1])) / 2
    if job.context is not None and cfg.context.refined:
        # The context nets judged the detector's box, which on a leaning die may hold the
        # clean top face alone; the refined box takes in more of the die and its side face.
        # A read still certain is asked again there; values are not touched.
        still = [r for r in reads if r.value is not None and r.confidence >= CERTAIN]
        ask_about_leans(job.context, job.image, still, [], None, cfg.context.refined_doubt,
                        cfg.context.sure, job.nadir)
    if cfg.refine.one_per_die:
        # Brought to their dice, two boxes may meet on one: off a wide lens's axis a flat die
        # shows a tall side face with pips, which the detector may box apart from the top
        # face, too far from it to be the same die until the refiner brings that box to the
        # whole die. The one the nets are surer holds a die stays.
        kept = one_box_per_die([r.bbox for r in reads], die_p[list(box_of)],
                               np.ones(len(reads), bool), cfg.same_die)
        reads = [reads[i] for i in sorted(kept)]
    faces = [r.side for r in reads if r.value is not None]
    if cfg.specks.refined and len(faces) >= cfg.specks.sure:
        # A speck is judged again on the boxes brought to their dice: the small-dice look's
        # boxes on a distant camera's pips and smears, once refined, are a third of a die's
        # side. The dice read with a face give the typical side: specks are seldom so read.
        typical = float(np.median(faces))
        reads = [r for r in reads if r.side >= cfg.specks.share * typical]
    return reads

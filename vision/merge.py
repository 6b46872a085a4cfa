"""The merge stage: one box per die, and the dice a surer box hides.

The detector's 3x3 peak filter leaves two or three peaks on a Biggy or on a die seen with a
long side face, each with a box of its own: one die reported twice. Dice do not overlap seen
from above, so of boxes on one die only the one the value nets are surest holds a die stays
(`vision.boxes.one_box_per_die`). A box grown over a neighbour, though, may hide that
neighbour's box: those pairs are judged again on their refined boxes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .boxes import Box, box_side, intersection, one_box_per_die, same_die
from .candidates import Candidates, shows_face
from .config import DEFAULT, CertaintyConfig, SameDieConfig
from .job import Job
from .refine import moved_again
from .valuenet import NOT_A_DIE, UNREADABLE


def merge(job: Job, cands: Candidates) -> tuple[list[Box], list[int]]:
    """The candidates' boxes (a parted box becomes its hidden die's, and its crop, the nets'
    answer and die belief in `cands` become that die's) and the indices of those that are
    dice, one box per die."""
    boxes = cands.box_list()
    kept = dice_among(job, boxes, cands.die_p, cands.eligible)
    if not job.config.merge.parted:
        return boxes, kept
    for i, (box, crop, p) in parted(job, boxes, kept, cands.eligible).items():
        # A box dropped for its neighbour holds a die of its own beside it: the box becomes
        # that die's, with the crop and the nets' answer it was judged on.
        boxes[i] = job.settled[i] = box
        cands.boxes[i] = box
        cands.crops[i], cands.probs[i], cands.die_p[i] = crop, p, 1.0 - p[NOT_A_DIE]
        kept = [*kept, i]
    return boxes, kept


def dice_among(job: Job, boxes: Sequence[Sequence[float]], die_p: np.ndarray,
               eligible: np.ndarray) -> list[int]:
    """`one_box_per_die`, with a second look at the boxes it drops: a detector box grown over
    a neighbour (by a shadow, or a cluster's shared edge) holds most of the next die's box
    and hides it, though the two are dice of their own. The box refiner brings both boxes of
    each such pair to their dice, and the pair is judged again on those: boxes on one die (a
    Biggy's two peaks, a pip's box inside its die) still meet there."""
    cfg = job.config
    kept = one_box_per_die(boxes, die_p, eligible, cfg.same_die)
    if job.refiner is None or not cfg.merge.hidden:
        return kept
    rescue_sure = cfg.refine.rescue_sure
    hidden = [i for i in range(len(boxes))
              if eligible[i] and die_p[i] >= rescue_sure and i not in kept]
    # A box grown over its neighbour takes in part of it, and the nets may doubt it is one
    # die at all: such a box is judged on its refined box too.
    weak = [i for i in range(len(boxes))
            if eligible[i] and die_p[i] < rescue_sure and i not in kept]
    if weak:
        # Still no die once refined, such a box is moved once more (a white die in a
        # wide-lens cluster of three); the box it is judged on is the one reported.
        refined = job.refined(boxes, weak)
        crops = job.crops(refined)
        again = job.nets.value.predict(crops)
        need = moved_again(job, refined, crops, again)
        for i, box, p, least in zip(weak, refined, again, need, strict=True):
            if 1.0 - p[NOT_A_DIE] >= least:
                job.settled[i] = box
                hidden.append(i)
    if not hidden:
        return kept
    asked = sorted(set(hidden) | {j for j in kept if any(
        same_die(boxes[i], boxes[j], cfg.same_die) for i in hidden)})
    refined_of = dict(zip(asked, job.refined(boxes, asked), strict=True))
    seen = [refined_of.get(i, boxes[i]) for i in range(len(boxes))]
    for i in sorted(hidden, key=lambda i: -die_p[i]):
        if not any(same_die(seen[i], seen[j], cfg.same_die) for j in kept):
            kept.append(i)
    return kept


def parted(job: Job, boxes: Sequence[Sequence[float]], kept: Sequence[int],
           eligible: np.ndarray) -> dict[int, tuple[Box, np.ndarray, np.ndarray]]:
    """The dropped boxes that hold a die of their own beside the kept box they overlap, each
    with that die's box, its crop and the nets' answer on it. Two touching dice of one colour
    (a player's dice lie together after a roll) may get one detector box round both, besides
    the box of the surer of them, which hides it; refined, the box round both stays round
    both. What it holds past the kept box, if at least `merge.part_least` of that box's
    side, is refined alone, and is a die where the nets are `refine.rescue_sure` of a die
    there and read a face on it at `merge.part_face`, and where it meets no kept die. A side
    face of the kept die itself (a cocked die, a wide lens's tall side) reads as a face less
    surely."""
    cfg = job.config
    if job.refiner is None:
        return {}
    seen = {j: job.settled.get(j, boxes[j]) for j in kept}
    cand: dict[int, Box] = {}
    for i in range(len(boxes)):
        if i in seen or not eligible[i]:
            continue
        b = boxes[i]
        hiders = [j for j in kept if same_die(b, boxes[j], cfg.same_die)]
        if not hiders:
            continue
        j = max(hiders, key=lambda j: intersection(b, boxes[j]))
        k = boxes[j]
        side = box_side(k)
        parts = [(b[0], b[1], k[0], b[3]), (k[2], b[1], b[2], b[3]),
                 (b[0], b[1], b[2], k[1]), (b[0], k[3], b[2], b[3])]
        parts = [q for q in parts
                 if min(q[2] - q[0], q[3] - q[1]) >= cfg.merge.part_least * side]
        if parts:
            cand[i] = max(parts, key=lambda q: (q[2] - q[0]) * (q[3] - q[1]))
    if not cand:
        return {}
    rows = list(cand)
    refined = job.refiner.refine(job.image, [cand[i] for i in rows])
    crops = job.crops(refined)
    probs = job.nets.value.predict(crops)
    dice = ((1.0 - probs[:, NOT_A_DIE] >= cfg.refine.rescue_sure)
            & shows_face(probs, 1, cfg.merge.part_face))
    taken = list(seen.values())
    out = {}
    for k, i in enumerate(rows):
        if dice[k] and not any(same_die(refined[k], q, cfg.same_die) for q in taken):
            out[i] = (refined[k], crops[k], probs[k])
            taken.append(refined[k])
    return out


def doubted_by_rivals(boxes: Sequence[Sequence[float]], probs: np.ndarray, kept: Sequence[int],
                      unreadable: float = CertaintyConfig.rival_unreadable,
                      same: SameDieConfig = DEFAULT.same_die
                      ) -> set[int]:
    """Kept boxes with a second box on the same die that the value nets hold unreadable at
    `unreadable` or more (`certainty.rival_unreadable`).

    A die leaning on a neighbour often gets two detector boxes: one round its clean top face,
    which the nets read as a flat die (and, being the surest box, it is kept), and one round
    the whole die, side face and all, which they hold unreadable. Two views of one die that
    disagree this much are no ground for certainty.
    """
    doubted: set[int] = set()
    for i in kept:
        for j in range(len(boxes)):
            if (j not in kept and probs[j, UNREADABLE] >= unreadable
                    and same_die(boxes[i], boxes[j], same)):
                doubted.add(i)
                break
    return doubted

"""How sure each read is, and why not (`DieRead.doubts`).

A value is only reported as certain when nothing doubts it: a confident wrong value would
silently corrupt a game, while a doubtful one is merely asked about. Every cap below keeps a
read under CERTAIN and says why, with one of the codes of `DOUBTS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .config import DEFAULT, CertaintyConfig
from .valuenet import UNREADABLE

# The confidence from which a read is applied without asking (the tracker's contract).
CERTAIN = 0.9
# Where a doubt caps a read: under CERTAIN, and a die leaning on a wall further under.
ASKED = CERTAIN - 0.05
LONG_ASKED = CERTAIN - 0.1

# The doubt codes, as `DieRead` documents them.
DOUBTS = ("unsure", "unreadable", "lean", "small", "edge", "crowded", "faint", "angle",
          "glare", "pips")


def calibrated(p: float, cfg: CertaintyConfig = DEFAULT.certainty) -> float:
    """The nets' probability for a read, as the confidence the contract promises: from 0.9 on,
    at most 1 wrong read in 1,000.

    The nets' temperatures were fitted on all their answers, which leaves the top of the scale
    too bold: reads at 0.90-0.94 go wrong far more often than that, those above 0.94 next to
    never. So `cfg.sure_from` maps to CERTAIN, 1 stays 1 and everything up to
    `cfg.calibrated_below` is left as it is, linearly in between: the order of reads never
    changes.
    """
    return float(np.interp(p, (0.0, cfg.calibrated_below, cfg.sure_from, 1.0),
                           (0.0, cfg.calibrated_below, CERTAIN, 1.0)))


def judged(p: np.ndarray, score: float, box: Sequence[float], margin: float, near: float,
           crowded: bool, toned: bool, angled: bool, cfg: CertaintyConfig, sure_peak: float
           ) -> tuple[int | None, float, tuple[str, ...]]:
    """A box's value (None: unreadable), its confidence and the doubts that cap it, from the
    nets' probabilities `p`, the detector's peak `score`, the box, how far the predicted box
    stays inside the frame (`margin`, px; `near` is too near the edge), and whether a rival
    box doubts it (`crowded`), it was found only re-toned (`toned`) and the frame's dice put
    the camera's nadir off the middle (`angled`)."""
    doubts: list[str] = []
    # "Unreadable" only when the nets hold it more likely than not: below that the likeliest
    # face is the better guess to ask about (a flat die by a wall the nets half take for
    # cocked is still read; the lean doubt below keeps it from being certain).
    k = UNREADABLE if p[UNREADABLE] >= 0.5 else int(np.argmax(p[1:UNREADABLE])) + 1
    value = None if k == UNREADABLE else k
    # Both the detector and the value net must be sure there is a die there: p[k] carries
    # the nets' doubt that this is a die at all, and a weak peak lowers it further.
    confidence = calibrated(float(p[k] * min(1.0, score / sure_peak)), cfg)
    if confidence < CERTAIN:
        if calibrated(float(p[k]), cfg) < CERTAIN:
            doubts.append("unsure")
        if score < sure_peak:
            doubts.append("faint")
    if value is not None and p[UNREADABLE] > cfg.lean_doubt:
        # Even a little belief in "cocked or smeared" is enough not to trust the face: a
        # leaning die shows a clean face that is not the one it will count as.
        confidence = min(confidence, ASKED)
        doubts.append("lean")
    if value is None:
        # "Surely unreadable" is no claim to stand behind: a flat die by the wall, seen from
        # the side, looks cocked. A null read is asked about anyway; it is never certain.
        confidence = min(confidence, ASKED)
        doubts.append("unreadable")
    bw, bh = box[2] - box[0], box[3] - box[1]
    if (bw + bh) / 2 < cfg.sure_side:
        # A die this small has its pips in a few pixels each: readable, often right, but not
        # to one error in a thousand.
        confidence = min(confidence, ASKED)
        doubts.append("small")
    if max(bw, bh) > cfg.long_box * min(bw, bh):
        # Seen from above a die lying flat has a near-square box; a long one is a die leaning
        # on a wall or another die, whose value may be read but never trusted.
        confidence = min(confidence, LONG_ASKED)
        doubts.append("lean")
    if margin < near:
        # A die cut by the edge may still be predicted just inside it: read, asked about.
        confidence = min(confidence, ASKED)
        doubts.append("edge")
    if crowded or toned:
        # Two views of one die that disagree (see `merge.doubted_by_rivals`), or a die seen
        # only in a picture that is not the one the camera took.
        confidence = min(confidence, ASKED)
        if crowded:
            doubts.append("crowded")
        if toned:
            doubts.append("faint")
    if angled:
        # The nadir is the dice's own guess, and a frame of mostly cocked dice may find one
        # that turns their side faces to the top: every die of a frame seen other than from
        # above is asked about.
        confidence = min(confidence, ASKED)
        doubts.append("angle")
    return value, confidence, tuple(dict.fromkeys(doubts))


def add_doubt(read: Any, code: str) -> None:
    """Add a doubt code to a read (once; the first reason found stays first)."""
    if code not in read.doubts:
        read.doubts = (*read.doubts, code)


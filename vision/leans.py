"""The lean checks: a die leaning on a neighbour or a wall shows a clean face the value nets
read straight through, which is not the face it will count as. Nets that see more of what a
die rests on are asked about the certain reads, and about the reads the value nets already
half take for a lean."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .boxes import scaled
from .certainty import ASKED, CERTAIN, add_doubt
from .job import Job
from .valuenet import UNREADABLE

if TYPE_CHECKING:
    from .dieread import DieRead


def check_leans(job: Job, reads: list[DieRead], doubt: Sequence[float]) -> None:
    """Ask the context nets, then the value nets shown a wider view, whether the reads lean
    (`doubt`: the value nets' belief in "unreadable" per read)."""
    cfg = job.config
    sure = [r for r in reads if r.value is not None and r.confidence >= CERTAIN]
    leaning = [(r, d) for r, d in zip(reads, doubt, strict=True)
               if r.value is not None and d >= cfg.context.lean_share]
    if job.context is not None and (sure or leaning):
        # The context nets see what the die rests on. Asked, in one batch, of reads still
        # certain and of those the four already half doubt: where both kinds of net see a
        # lean, the face read is not the one the die will count as (cocked dice read with a
        # value are often such reads, flat dice rarely). The context nets are two, averaged:
        # one taught leans framed whole, one half of them framed by the top face alone, as
        # the detector often boxes them; each sees leans the other misses.
        ask_about_leans(job.context, job.image, sure, leaning, None, cfg.context.doubt,
                        cfg.context.sure, job.nadir)
    if not cfg.wider.enabled:
        return
    sure = [r for r in reads if r.value is not None and r.confidence >= CERTAIN]
    leaning = [(r, d) for r, d in zip(reads, doubt, strict=True)
               if r.value is not None and d >= cfg.wider.ask]
    # The detector often boxes a leaning die's clean top face alone, leaving out the side
    # face it shows. Shown a wider view, the four see the side face: a certain read they
    # doubt there is asked about, and a read they already half took for a lean and are sure
    # of there is no read. A flat die's wider view is mostly floor.
    ask_about_leans(job.nets.value, job.image, sure, leaning, cfg.wider.grow, cfg.wider.doubt,
                    cfg.wider.sure, job.nadir)


def ask_about_leans(net: Any, frame: np.ndarray, sure: list[DieRead],
                    leaning: list[tuple[DieRead, float]], grow: float | None,
                    doubt_from: float, null_from: float,
                    nadir: tuple[float, float] | None = None) -> None:
    """Ask `net` (in one batch, each box grown by `grow` when given) how much it believes the
    certain reads and the half-doubted ones (`leaning`, with the four's belief) lean: from
    `doubt_from` a certain read is left uncertain, and from `null_from` a half-doubted read
    becomes a null read, at the mean of the two beliefs. A null read is never certain."""
    asked = sure + [r for r, _ in leaning]
    if not asked:
        return
    boxes = [r.bbox if grow is None else scaled(r.bbox, grow) for r in asked]
    p_lean = net.predict(np.stack([net.crop(frame, b, nadir) for b in boxes]))[:, UNREADABLE]
    for r, p in zip(sure, p_lean[:len(sure)], strict=True):
        if p >= doubt_from:
            r.confidence = min(r.confidence, ASKED)
            add_doubt(r, "lean")
    for (r, p_four), p in zip(leaning, p_lean[len(sure):], strict=True):
        if p >= null_from:
            r.value = None
            r.confidence = min((p_four + float(p)) / 2, ASKED)
            add_doubt(r, "lean")
            add_doubt(r, "unreadable")

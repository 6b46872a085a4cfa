"""The nets a reader holds (`Nets`) and one frame's read on its way through the stages (`Job`).

Nothing of a frame is kept on the reader, so two threads may read at once: what the stages
learn of a frame (where the camera's nadir is, which boxes the refiner has moved, how long
each stage took) lives on the `Job` made for that frame.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .boxes import Box
from .config import ReaderConfig


@dataclass(frozen=True)
class Nets:
    """The reader's nets. `Nets.shipped()` loads the models in `vision/models/` (once per
    process); a benchmark tries a candidate with `dataclasses.replace(Nets.shipped(),
    value=ValueNet(path))`. Whether a net is asked at all is the config's call
    (`refine.enabled`, `context.enabled`, `colour.net`)."""

    value: Any  # the four value nets (`ValueNet`): which box is a die, and its face
    context: Any  # the context nets (`ValueNet`), which see what a die rests on
    colour: Any  # `ColourNet`
    detector: Any  # `Detector`
    refiner: Any  # the box refiner (`BoxNet`)

    @classmethod
    def shipped(cls, threads: int = 1) -> Nets:
        """Every shipped model, for `threads` cores a frame (a missing or damaged one is a
        `vision.nets.ModelError` here, before the first frame)."""
        from .boxnet import BoxNet
        from .colournet import ColourNet
        from .detector import Detector
        from .valuenet import CONTEXT_MODELS, ValueNet

        return cls(value=ValueNet(threads=threads),
                   context=ValueNet(CONTEXT_MODELS, threads=threads),
                   colour=ColourNet(threads=threads), detector=Detector(threads=threads),
                   refiner=BoxNet(threads=threads))


@dataclass
class Job:
    """One frame's read: the frame, the reader's nets and config, and what the stages have
    found out about the frame so far."""

    image: np.ndarray
    nets: Nets
    config: ReaderConfig
    # Where the frame's dice put the point below the camera (None: the frame's middle); every
    # crop the value nets are given is turned to it.
    nadir: tuple[float, float] | None = None
    # Candidate index -> its refined box: each box is refined once a frame, whichever step
    # asks first (the refiner's answer is the same however often it is asked).
    settled: dict[int, Box] = field(default_factory=dict)
    stage_ms: dict[str, float] = field(default_factory=dict)

    @property
    def refiner(self) -> Any:
        """The box refiner, or None where the config keeps every step from asking it."""
        return self.nets.refiner if self.config.refine.enabled else None

    @property
    def context(self) -> Any:
        """The context nets, or None where the config keeps them from being asked."""
        return self.nets.context if self.config.context.enabled else None

    def crops(self, boxes: Sequence[Sequence[float]], image: np.ndarray | None = None
              ) -> np.ndarray:
        """The value nets' crops of `boxes` (in `image`, the frame unless given), stacked,
        turned to the frame's nadir once it is known: every crop the reader cuts comes from
        here, so no step needs to know whether the nadir has been found yet."""
        seen = self.image if image is None else image
        return np.stack([self.nets.value.crop(seen, b, self.nadir) for b in boxes])

    def refined(self, boxes: Sequence[Sequence[float]], rows: Sequence[int]) -> list[Box]:
        """The refined box of each of `rows` (indices into `boxes`), from `settled` where a
        step before refined it, else refined now and kept there."""
        new = [i for i in dict.fromkeys(rows) if i not in self.settled]
        if new:
            self.settled.update(zip(new, self.nets.refiner.refine(
                self.image, [boxes[i] for i in new]), strict=True))
        return [self.settled[i] for i in rows]

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage (wall clock); a stage timed twice adds up."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.stage_ms[name] = (self.stage_ms.get(name, 0.0)
                                   + (time.perf_counter() - t0) * 1000.0)

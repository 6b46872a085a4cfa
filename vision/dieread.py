"""One die as the reader reports it (`DieRead`): the type every stage of the read and the
tracker share, apart from the reader that makes it, so the stages need not import it back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .certainty import CERTAIN


@dataclass
class DieRead:
    """One die read in one frame.

    `doubts` says why `confidence` is under CERTAIN (empty when the read is certain), in the
    order the reader found the reasons:

    - "unsure": the nets' own probability for the face, after calibration, is under CERTAIN
    - "unreadable": the read has no value (cocked, smeared or not readable)
    - "lean": evidence of a lean: the value nets put some belief on "cocked or smeared",
      the context nets or the wider view doubt the face, or the box is much longer than wide
    - "small": the die is smaller than the pips can be told surely at
    - "edge": the die is cut by, or lies too near, the frame's edge
    - "crowded": a second box on the same die, which the nets cannot read, doubts it
    - "faint": found only by a weak detector peak or in the frame re-toned
    - "angle": the frame's dice put the camera's nadir off the middle (a tilted camera)
    - "glare": a bright spot in the middle of a 2 or a 4, where a pip may hide
    - "pips": the pips counted by rule do not agree with the nets
    - "blank": a blank face (Royale's gray dice): `value` is None, there is nothing to read
    """

    value: int | None
    colour: str
    big: bool
    bbox: tuple[float, float, float, float]
    confidence: float
    side: float = 0.0
    angle: float = 0.0
    # The die's own side (px) as the Biggy test sees it: its box's, allowing for the die's
    # turn and for side faces off the frame's centre (0 when not worked out).
    size: float = 0.0
    doubts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        confidence = round(float(self.confidence), 3)
        if self.confidence < CERTAIN:
            # Rounded up to 0.9, a doubted read would look certain to whoever reads the JSON.
            confidence = min(confidence, round(CERTAIN - 0.001, 3))
        return {"value": self.value, "colour": self.colour, "big": self.big,
                "bbox": [round(v, 1) for v in self.bbox], "confidence": confidence,
                "doubts": list(self.doubts)}

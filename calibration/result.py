"""The one shape every calibration step reports in, so the terminal and the page show them alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StepResult:
    """One check: did it pass, the number it judged by, and what to do about it.

    `advice` is always one line a player can act on ("move the lamp: glare at top left");
    `details` carries whatever a later step or the page needs (corners, gains, swatches).
    """

    name: str
    passed: bool
    value: float
    advice: str
    details: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        mark = "ok  " if self.passed else "FAIL"
        return f"[{mark}] {self.name}: {self.value:.3g} - {self.advice}"

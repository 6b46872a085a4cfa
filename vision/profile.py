"""The calibration profile: what the reader knows about one table, as plain validated data.

Calibration writes it; vision only reads it, so the format lives here. A profile that is
corrupt, of another version or inconsistent is refused with a message naming the field, and
the caller runs uncalibrated rather than reading dice with half-valid settings.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "vegas-table-profile"
VERSION = 1


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class ColourRef:
    name: str
    lab: tuple[float, float, float]
    spread: float = 6.0
    role: str = "player"  # or "neutral"


@dataclass(frozen=True)
class Profile:
    colours: tuple[ColourRef, ...] = ()
    white_balance: tuple[float, float, float] | None = None  # per-channel gains, B G R
    tray_corners: tuple[tuple[float, float], ...] | None = None  # floor corners, image px
    image_size: tuple[int, int] | None = None  # (width, height) the geometry refers to
    die_side_px: float | None = None
    camera: dict[str, Any] = field(default_factory=dict)
    created: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "created": self.created,
            "image_size": list(self.image_size) if self.image_size else None,
            "camera": dict(self.camera),
            "white_balance": list(self.white_balance) if self.white_balance else None,
            "tray_corners": [list(c) for c in self.tray_corners] if self.tray_corners else None,
            "die_side_px": self.die_side_px,
            "colours": [
                {"name": c.name, "lab": list(c.lab), "spread": c.spread, "role": c.role}
                for c in self.colours
            ],
        }

    def save(self, path: str | Path) -> None:
        path = Path(path)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2))
        tmp.replace(path)  # atomic: a pulled cable never leaves half a profile


def _number(value: Any, where: str, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ProfileError(f"{where} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ProfileError(f"{where} must be between {low:g} and {high:g}, got {value!r}")
    return float(value)


def profile_from_dict(data: Any, source: str = "profile") -> Profile:
    """Validate a decoded profile; every error names `source` and the field."""
    def fail(msg: str) -> ProfileError:
        return ProfileError(f"{source}: {msg}")

    if not isinstance(data, dict):
        raise fail("not a JSON object")
    if data.get("format") != FORMAT:
        raise fail(f"not a Vegas Table profile (format is {data.get('format')!r})")
    version = data.get("version")
    if version != VERSION:
        raise fail(f"profile version {version!r} is not supported (this app reads version "
                   f"{VERSION}); calibrate again")
    try:
        colours = []
        names: set[str] = set()
        raw_colours = data.get("colours") or []
        if not isinstance(raw_colours, list):
            raise ProfileError("colours must be a list")
        for i, c in enumerate(raw_colours):
            where = f"colours[{i}]"
            if not isinstance(c, dict):
                raise ProfileError(f"{where} must be an object")
            name = c.get("name")
            if not isinstance(name, str) or not name.strip():
                raise ProfileError(f"{where}.name must be a colour name")
            if name in names:
                raise ProfileError(f"{where}.name {name!r} appears twice")
            names.add(name)
            lab = c.get("lab")
            if not isinstance(lab, list) or len(lab) != 3:
                raise ProfileError(f"{where}.lab must be [L, a, b]")
            lab_t = (_number(lab[0], f"{where}.lab[0]", 0, 100),
                     _number(lab[1], f"{where}.lab[1]", -128, 128),
                     _number(lab[2], f"{where}.lab[2]", -128, 128))
            spread = _number(c.get("spread", 6.0), f"{where}.spread", 0, 100)
            role = c.get("role", "player")
            if role not in ("player", "neutral"):
                raise ProfileError(f"{where}.role must be player or neutral")
            colours.append(ColourRef(name, lab_t, spread, role))
        wb = data.get("white_balance")
        if wb is not None:
            if not isinstance(wb, list) or len(wb) != 3:
                raise ProfileError("white_balance must be three gains [b, g, r]")
            wb = tuple(_number(g, f"white_balance[{i}]", 0.05, 20) for i, g in enumerate(wb))
        size = data.get("image_size")
        if size is not None:
            if not isinstance(size, list) or len(size) != 2:
                raise ProfileError("image_size must be [width, height]")
            size = (int(_number(size[0], "image_size[0]", 1, 20000)),
                    int(_number(size[1], "image_size[1]", 1, 20000)))
        corners = data.get("tray_corners")
        if corners is not None:
            if not isinstance(corners, list) or len(corners) != 4:
                raise ProfileError("tray_corners must be four [x, y] points")
            points = []
            for i, p in enumerate(corners):
                if not isinstance(p, list) or len(p) != 2:
                    raise ProfileError(f"tray_corners[{i}] must be [x, y]")
                points.append((_number(p[0], f"tray_corners[{i}][0]"),
                               _number(p[1], f"tray_corners[{i}][1]")))
            corners = tuple(points)
            if size is None:
                raise ProfileError("tray_corners need image_size")
        side = data.get("die_side_px")
        if side is not None:
            side = _number(side, "die_side_px", 2, 2000)
        camera = data.get("camera") or {}
        if not isinstance(camera, dict):
            raise ProfileError("camera must be an object")
    except ProfileError as exc:
        raise fail(str(exc)) from None
    return Profile(tuple(colours), wb, corners, size, side, camera, str(data.get("created", "")))


def load_profile(path: str | Path) -> Profile:
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read the profile ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: not a profile (not text: is the file damaged?)") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ProfileError(f"{path}: not valid JSON (is the file damaged?)") from None
    return profile_from_dict(data, str(path))

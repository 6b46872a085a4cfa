"""The guided calibration: camera, tray, light and colours, fed one frame at a time.

The same guide drives the terminal (`vegas-table calibrate`) and the `/calibrate` page, so it
never blocks and never reads the camera itself: whoever owns the frame loop calls `feed`, shows
`instruction` to the people at the table, and asks `status()` for everything to draw. It waits
for the table rather than for a clock wherever a person has to act (dropping a colour's dice,
taking them out), and uses stream time (`Frame.t`) for everything it measures, so a recorded or
rendered stream gives the same result at any speed.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from vision.profile import Profile, ProfileError, load_profile
from vision.reader import DiceReader
from vision.sources import Frame, Source

from . import colours as col
from .camera import CameraStep
from .light import check_light
from .result import StepResult
from .tray import find_tray, floor_mask, tray_from_user

PROFILE_DIR = "profiles"
PROFILE_NAME = re.compile(r"^profile-\d{8}-\d{6}(-\d+)?\.json$")
STEPS = ("camera", "tray", "light", "colours")

LIGHT_S = 1.0  # stream seconds of empty tray the light checks look at (flicker needs several)
LIGHT_MIN_FRAMES = 8
TRAY_TRIES = 8  # frames find_tray gets before the people are asked to tap the corners
STILL_FRAMES = 5  # frames a dropped set must lie still before it is measured
LEARN_FRAMES = 3  # of those, how many are measured (more frames, less sensor noise)
EMPTY_FRAMES = 3  # frames without dice before the tray counts as empty again
LIT_DIE_L = 55.0  # Lab L a white or yellow die reaches under a lamp good enough to read pips
DARK_FLOOR_L = 50.0  # a floor this dark may be dark material rather than dim light
EMPTY_WAIT_S = 3.0  # how long the empty-tray step waits for dice to leave before going on


@dataclass(frozen=True)
class Instruction:
    """What the people at the table should do now; `kind` lets a page pick its picture."""

    kind: str  # "empty", "corners", "drop", "remove", "review", "saved"
    text: str
    colour: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "colour": self.colour}


class CalibrationError(ValueError):
    """A request the guide cannot take now (corners before a frame, save before colours)."""


def _hex(bgr: Sequence[int]) -> str:
    b, g, r = (int(v) for v in bgr)
    return f"#{r:02x}{g:02x}{b:02x}"


class Calibrator:
    """One calibration run, from the first frame to a saved profile.

    `colours` are the dice sets to learn, in the order the people will drop them (the game's
    player colours, then the neutral white). `source` is the camera whose exposure and white
    balance get fixed; without one the camera step is skipped (a folder of photos).
    `corners` are tapped corners given up front, used when the tray cannot be found.
    """

    def __init__(
        self, colours: Sequence[str], source: Source | None = None, *,
        corners: Sequence[Sequence[float]] | None = None,
        reader_factory: Callable[[Profile | None], Any] = DiceReader,
        camera_step: CameraStep | None = None,
    ) -> None:
        names = [c.strip().lower() for c in colours if c and c.strip()]
        if not names:
            raise CalibrationError("name at least one dice colour to learn")
        if len(set(names)) != len(names):
            raise CalibrationError("a colour is named twice")
        self.colour_names = names
        self._reader_factory = reader_factory
        self.camera = camera_step or (CameraStep(source) if source is not None else None)
        self._given_corners = corners
        self._reset()

    def _reset(self) -> None:
        """Everything measured so far is forgotten (a new resolution invalidates it all)."""
        self.step = "camera" if self.camera is not None else "tray"
        self.results: dict[str, StepResult] = {}
        self.light: list[StepResult] = []
        self.learned: list[col.LearnedColour] = []
        self.skipped: list[str] = []
        self.size: tuple[int, int] | None = None
        self.corners: np.ndarray | None = None
        self.mask: np.ndarray | None = None
        self.gains: tuple[float, float, float] | None = None
        self.reader: Any = None
        self.saved: Path | None = None
        self._tray_tries = 0
        self._light_frames: list[np.ndarray] = []
        self._light_t0: float | None = None
        self._baseline = 0
        self._phantoms: list[int] = []
        self._colour_i = 0
        self._phase = "drop"  # or "remove", per colour
        self._still: list[tuple[np.ndarray, list[Any]]] = []
        self._empty_run = 0
        self._sides: list[float] = []
        self.last_dice: list[Any] = []
        self._progress = "starting"

    # -- what to show ---------------------------------------------------------------------
    @property
    def wanted(self) -> str | None:
        """The colour that should be lying in the tray now; None for an empty tray."""
        if self.step == "colours" and self._phase == "drop":
            return self.colour_names[self._colour_i]
        return None

    @property
    def done(self) -> bool:
        return self.step in ("review", "saved")

    @property
    def instruction(self) -> Instruction:
        if self.step in ("camera", "tray", "light"):
            return Instruction("empty", "Empty the tray and keep hands out of view")
        if self.step == "corners":
            return Instruction("corners", "Tap the four corners of the tray floor on the picture")
        if self.step == "colours":
            name = self.colour_names[self._colour_i]
            if self._phase == "drop":
                return Instruction("drop", f"Drop all the {name} dice into the tray and let "
                                           "them settle", name)
            return Instruction("remove", f"Take the {name} dice out of the tray", name)
        if self.step == "saved":
            return Instruction("saved", "Calibration saved: the camera reads with it now")
        return Instruction("review", "Check the results, then save")

    @property
    def progress(self) -> str:
        if self.step == "camera" and self.camera is not None:
            return self.camera.progress
        return self._progress

    def verdict(self) -> tuple[bool, list[str]]:
        """Will reading be reliable, and what to change if not (one line per problem)."""
        problems = [r.advice for r in self.results.values() if not r.passed]
        problems += [r.advice for r in self.light if not r.passed]
        if self.step not in ("review", "saved"):
            return False, problems
        if not self.learned:
            problems.append("no dice colour was learned")
        return not problems, problems

    def status(self) -> dict[str, Any]:
        """Everything the page and the terminal show, as plain JSON data."""
        steps = []
        for name in STEPS:
            if name == "light":
                steps.extend(_result(r) for r in self.light)
            elif name in self.results:
                steps.append(_result(self.results[name]))
        for name, r in self.results.items():
            if name not in STEPS:
                steps.append(_result(r))
        ready, problems = self.verdict()
        return {
            "step": self.step,
            "instruction": self.instruction.to_dict(),
            "progress": self.progress,
            "steps": steps,
            "image_size": list(self.size) if self.size else None,
            "corners": self.corners.round(1).tolist() if self.corners is not None else None,
            "colours": [{"name": c.name, "lab": list(c.lab), "spread": round(c.spread, 2),
                         "n": c.n_dice, "swatch": _hex(c.swatch_bgr())} for c in self.learned],
            "to_learn": self.colour_names,
            "skipped": self.skipped,
            "dice_seen": len(self.last_dice),
            "ready": ready,
            "problems": problems,
            "can_save": self.step == "review" and bool(self.learned)
            and self.corners is not None,
            "saved": self.saved.name if self.saved else None,
        }

    # -- the frame loop -------------------------------------------------------------------
    def feed(self, frame: Frame) -> None:
        """Take one frame; advances at most one step per frame."""
        image = frame.image
        if image is None or image.ndim != 3:
            return
        h, w = image.shape[:2]
        if self.size is not None and self.size != (w, h):
            self._restart()
            self._progress = f"the camera changed resolution ({w}x{h}); starting over"
            self.size = (w, h)
            return  # said for one frame; the next one starts the tray step afresh
        self.size = (w, h)
        if self.step == "camera":
            assert self.camera is not None
            res = self.camera.feed(frame)
            if res is not None:
                self.results["camera"] = res
                self.step = "tray"
        elif self.step == "tray":
            self._tray(image)
        elif self.step == "light":
            self._light(frame)
        elif self.step == "colours":
            self._colours(image)

    def _restart(self) -> None:
        keep_camera = self.results.get("camera")
        self._reset()
        if keep_camera is not None:
            self.results["camera"] = keep_camera
            self.step = "tray"

    def _tray(self, image: np.ndarray) -> None:
        assert self.size is not None
        if self._given_corners is not None:
            res = tray_from_user(self._given_corners, self.size)
            if not res.passed:  # the corners given up front are wrong: ask for new ones
                self.results["tray"] = res
                self.step = "corners"
                return
            self._take_tray(res)
            return
        res = find_tray(image)
        self._tray_tries += 1
        self._progress = f"looking for the tray ({self._tray_tries}/{TRAY_TRIES})"
        if res.passed:
            self._take_tray(res)
        elif self._tray_tries >= TRAY_TRIES:
            self.results["tray"] = res
            self.step = "corners"
            self._progress = "the tray was not found by itself"

    def set_corners(self, corners: object) -> StepResult:
        """The four floor corners the people tapped (image pixels); checked before use."""
        if self.size is None:
            raise CalibrationError("no camera picture yet: wait for the live view")
        res = tray_from_user(corners, self.size)
        if res.passed:
            self._given_corners = res.details["corners"]
            self._light_frames.clear()
            self._light_t0 = None
            self.light = []
            self._take_tray(res)
        return res

    def _take_tray(self, res: StepResult) -> None:
        assert self.size is not None
        self.results["tray"] = res
        self.corners = np.asarray(res.details["corners"], np.float64)
        self.mask = floor_mask(self.corners, self.size)
        self.step = "light"
        self._progress = "measuring the light"

    def _light(self, frame: Frame) -> None:
        if self._light_t0 is None:
            self._light_t0 = frame.t
        if self.reader is None:
            self.gains = col.floor_white_balance(frame.image, self.mask)
            self.reader = self._reader_factory(self._profile_for_reading())
        dice = self.reader.read(frame.image)
        self.last_dice = dice
        waited = frame.t - self._light_t0
        if dice and waited < EMPTY_WAIT_S:
            # dice in the tray spoil the floor's brightness and colour: wait for them to go
            self._progress = f"{len(dice)} dice still in the tray"
            self._light_frames.clear()
            return
        self._light_frames.append(frame.image)
        self._phantoms.append(len(dice))
        n = len(self._light_frames)
        self._progress = f"measuring the light ({n} frames)"
        if n < LIGHT_MIN_FRAMES or (frame.t - self._light_t0) < LIGHT_S:
            return
        self.light = check_light(self._light_frames[-LIGHT_MIN_FRAMES * 2:], self.mask)
        self.gains = col.floor_white_balance(self._light_frames[-1], self.mask)
        self.reader = self._reader_factory(self._profile_for_reading())
        self._baseline = int(np.median(self._phantoms))
        if self._baseline:
            self.results["empty tray"] = StepResult(
                "empty tray", False, float(self._baseline),
                f"the reader sees {self._baseline} die/dice in the empty tray: remove "
                "anything that looks like a die (printed art, a token) or cover it")
        self._light_frames = []
        self.step = "colours"
        self._start_colour()

    def _profile_for_reading(self) -> Profile:
        corners = None
        if self.corners is not None:
            corners = tuple((float(x), float(y)) for x, y in self.corners)
        return Profile(white_balance=self.gains, tray_corners=corners,
                       image_size=self.size if corners else None)

    def _start_colour(self) -> None:
        self._phase = "drop"
        self._still = []
        self._empty_run = 0
        self._progress = f"waiting for the {self.colour_names[self._colour_i]} dice"

    def skip_colour(self) -> None:
        """This table has no dice of the colour asked for now (fewer players): go on."""
        if self.step != "colours":
            raise CalibrationError("no colour is being learned now")
        self.skipped.append(self.colour_names[self._colour_i])
        self._next_colour()

    def _next_colour(self) -> None:
        self._colour_i += 1
        if self._colour_i >= len(self.colour_names):
            self._finish()
        else:
            self._start_colour()

    def _colours(self, image: np.ndarray) -> None:
        dice = self.reader.read(image)
        self.last_dice = dice
        name = self.colour_names[self._colour_i]
        if self._phase == "remove":
            if len(dice) <= self._baseline:
                self._empty_run += 1
                if self._empty_run >= EMPTY_FRAMES:
                    self._next_colour()
            else:
                self._empty_run = 0
            return
        if len(dice) <= self._baseline:
            self._still = []
            return
        if self._still and not _same_layout(self._still[-1][1], dice):
            self._still = []
        self._still.append((image, dice))
        self._progress = f"{len(dice)} {name} dice seen, holding still " \
                         f"({len(self._still)}/{STILL_FRAMES})"
        if len(self._still) < STILL_FRAMES:
            return
        frames = [f for f, _ in self._still[-LEARN_FRAMES:]]
        learned = col.learn_colour(frames, self.gains, name, self.reader)
        if learned is None:
            self._still = []
            return
        learned.role = "neutral" if name in col.NEUTRALS else "player"
        self.learned.append(learned)
        self._sides.extend(d.side for d in dice if getattr(d, "side", 0) > 0 and not d.big)
        self._phase = "remove"
        self._empty_run = 0
        if self._colour_i == len(self.colour_names) - 1:
            self._finish()
        else:
            self._progress = f"learned {name}: take the dice out"

    def _finish(self) -> None:
        self._recheck_brightness()
        sep = col.separation(self.learned)
        sep.name = "colours"
        if self.skipped:
            sep.details["skipped"] = list(self.skipped)
        self.results["colours"] = sep
        self.last_dice = []  # nothing is read from here on: do not box dice that left
        self.step = "review"
        self._progress = "done: check the results and save"

    def _recheck_brightness(self) -> None:
        """A black tray floor looks "too dark" under a good lamp; the dice tell the truth.

        What must be bright enough is the dice: when the lightest set learned (white or
        yellow plastic) is well lit, a dark floor is the material, not the light.
        """
        for i, r in enumerate(self.light):
            if r.name != "brightness" or r.passed or not self.learned:
                continue
            lightest = max(self.learned, key=lambda c: c.lab[0])
            if r.value < DARK_FLOOR_L and lightest.lab[0] >= LIT_DIE_L:
                self.light[i] = StepResult(
                    "brightness", True, lightest.lab[0],
                    f"the tray floor is dark, but the dice are well lit ({lightest.name} "
                    f"dice at L {lightest.lab[0]:.0f})", {"floor_l": r.value})

    # -- the profile ----------------------------------------------------------------------
    def profile(self) -> Profile:
        if self.corners is None or not self.learned:
            raise CalibrationError("nothing to save yet: finish the tray and colour steps")
        cam = self.results.get("camera")
        camera: dict[str, Any] = {}
        if cam is not None:
            camera = {"controls": dict(cam.details.get("controls") or {}),
                      "confirmed": bool(cam.details.get("confirmed", False))}
        side = float(np.median(self._sides)) if self._sides else None
        return col.build_profile(self.learned, self.gains, self.corners.tolist(), self.size,
                                 round(side, 1) if side else None, camera)

    def save(self, data_dir: str | Path) -> Path:
        """Write the profile as the data dir's newest; `serve` and `read` pick it up."""
        if self.step not in ("review", "saved"):
            raise CalibrationError("calibration is not finished yet")
        profile = self.profile()
        folder = Path(data_dir) / PROFILE_DIR
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        path = folder / f"profile-{stamp}.json"
        n = 1
        while path.exists():
            n += 1
            path = folder / f"profile-{stamp}-{n}.json"
        col.save_profile(profile, path)
        self.saved = path
        self.step = "saved"
        return path


def _result(r: StepResult) -> dict[str, Any]:
    value = r.value if math.isfinite(r.value) else None
    return {"name": r.name, "passed": r.passed, "value": value, "advice": r.advice}


def _same_layout(a: list[Any], b: list[Any]) -> bool:
    """The same dice in the same places: the set has settled (tolerance: a fifth of a die)."""
    if len(a) != len(b):
        return False
    for d in b:
        cx, cy = (d.bbox[0] + d.bbox[2]) / 2, (d.bbox[1] + d.bbox[3]) / 2
        side = max(d.bbox[2] - d.bbox[0], 1.0)
        if not any(math.hypot((e.bbox[0] + e.bbox[2]) / 2 - cx, (e.bbox[1] + e.bbox[3]) / 2 - cy)
                   < 0.2 * side for e in a):
            return False
    return True


# --------------------------------------------------------------------------- latest profile


def profile_paths(data_dir: str | Path) -> list[Path]:
    """The data dir's saved profiles, oldest first (their names sort by time)."""
    folder = Path(data_dir) / PROFILE_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if PROFILE_NAME.match(p.name))


def latest_profile(data_dir: str | Path) -> tuple[Profile | None, Path | None]:
    """The newest profile, validated; (None, None) when the table was never calibrated.

    Raises ProfileError naming the file when the newest one is damaged or of another version:
    the caller runs uncalibrated and says why, rather than quietly using an older profile that
    the people at the table did not choose.
    """
    paths = profile_paths(data_dir)
    if not paths:
        return None, None
    return load_profile(paths[-1]), paths[-1]


def set_aside(path: str | Path) -> Path:
    """Move a damaged file (a profile, the host's PIN file) out of the way as
    `NAME.damaged-<UTC time>`, never deleted, as it may be looked at, so that the next start
    does not meet it again. Returns where it went."""
    path = Path(path)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    path.replace(target)
    return target


def scaled(profile: Profile, size: tuple[int, int]) -> Profile:
    """The profile's geometry moved to another frame size of the same camera view."""
    if profile.image_size is None or profile.image_size == size or not profile.tray_corners:
        return profile
    sx, sy = size[0] / profile.image_size[0], size[1] / profile.image_size[1]
    corners = tuple((x * sx, y * sy) for x, y in profile.tray_corners)
    side = profile.die_side_px * (sx + sy) / 2 if profile.die_side_px else None
    return replace(profile, tray_corners=corners, image_size=size, die_side_px=side)


__all__ = [
    "CalibrationError",
    "Calibrator",
    "Instruction",
    "ProfileError",
    "latest_profile",
    "profile_paths",
    "scaled",
    "set_aside",
]

"""The camera step: let auto exposure and white balance settle, then fix them and confirm.

Left on auto, the camera re-meters whenever a hand or a pile of dark dice enters the tray, so
the same die changes brightness and hue between frames and learned colours stop matching.
Fixing the settled values once, and storing them in the profile, keeps every frame of a game
comparable.

The step is fed frame by frame from whatever loop reads the camera (possibly the web
server's camera thread), so it never sleeps or blocks: every wait is measured in stream time
(`Frame.t`). It only uses the `Source` interface: controls by picamera2 name, confirmed from
what the source reports (frame metadata on the Pi, the driver's read-back on a webcam).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from vision.sources import CONFIRMABLE, ControlReport, Frame, Source

from .result import StepResult

NAME = "camera"
SETTLE_TOL = 0.05  # relative change the auto values may make and still count as steady
BRIGHT_NOISE = 2.0  # grey levels of noise allowed on top, so a dim picture can settle too
CONFIRM_FRAMES = 3  # consecutive frames that must echo the fixed values
# ... and for this long after the request (at most half of confirm_s): cameras apply controls
# a few frames late, and until then the auto loops may still echo the settled values
CONFIRM_HOLD_S = 0.5
LONG_EXPOSURE_US = 33_000  # over one 30 fps frame: a die moved by a hand smears
AUTO_ON = {"AeEnable": True, "AwbEnable": True}

# A webcam reports no exposure in its frames, so its fixed exposure is searched for: the one
# whose picture is as bright as the settled auto picture. Brightness grows as exposure**slope
# (slope 1 for a linear picture, ~0.45 after a 2.2 gamma); the first guess takes a middle.
MATCH_START_US = 10_000  # one half-period of 50 Hz mains: a start that does not beat
MATCH_TOL = 0.06  # relative brightness difference that counts as the same picture
MATCH_WAIT = 2  # frames to skip after a change: drivers apply exposure a frame or two late
MATCH_TRIES = 8
MATCH_SLOPE = 0.6
MATCH_SLOPE_RANGE = (0.3, 1.5)
MATCH_US_RANGE = (50.0, 500_000.0)
CLIPPED, BLACK = 245.0, 3.0  # mean grey levels that carry no information about the slope

# the stream values watched while settling, and how advice names them
WATCHED = {"ExposureTime": "exposure", "AnalogueGain": "gain", "red": "red gain",
           "blue": "blue gain", "brightness": "brightness"}


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f > 0 else None


def _brightness(image: np.ndarray) -> float:
    """Mean grey level of a coarse grid of pixels: enough to see a change, cheap at 15 fps."""
    h, w = image.shape[:2]
    s = max(1, min(h, w) // 64)
    return float(np.mean(image[::s, ::s]))


def _sample(frame: Frame) -> dict[str, float]:
    """The auto values a frame carries (picamera2 metadata names) and its brightness."""
    out = {"brightness": _brightness(frame.image)}
    for k in ("ExposureTime", "AnalogueGain"):
        v = _num(frame.meta.get(k))
        if v is not None:
            out[k] = v
    cg = frame.meta.get("ColourGains")
    if isinstance(cg, (tuple, list)) and len(cg) == 2:
        r, b = _num(cg[0]), _num(cg[1])
        if r is not None and b is not None:
            out["red"], out["blue"] = r, b
    return out


def _steady(a: dict[str, float], b: dict[str, float]) -> bool:
    for k in a.keys() & b.keys():
        slack = SETTLE_TOL * max(a[k], b[k]) + (BRIGHT_NOISE if k == "brightness" else 0.0)
        if abs(a[k] - b[k]) > slack:
            return False
    return True


def _median(samples: list[dict[str, float]]) -> dict[str, float]:
    """Per value, so one odd frame (a hand, a flicker beat) cannot pick what gets fixed."""
    keys = set().union(*samples) if samples else set()
    return {k: float(np.median([s[k] for s in samples if k in s])) for k in keys}


def _jsonable(v: Any) -> Any:
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    if isinstance(v, bool | str) or v is None:
        return v
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        return float(v)
    return str(v)


def _fmt(v: Any) -> str:
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    f = _num(v)
    return f"{f:.3g}" if f is not None else repr(v)


def _summary(controls: Mapping[str, Any]) -> str:
    parts = []
    if "ExposureTime" in controls:
        parts.append(f"exposure {controls['ExposureTime'] / 1000:.1f} ms")
    if "AnalogueGain" in controls:
        parts.append(f"gain {controls['AnalogueGain']:.2f}")
    if "ColourGains" in controls:
        r, b = controls["ColourGains"]
        parts.append(f"colour gains {r:.2f}/{b:.2f}")
    return ", ".join(parts) or "nothing"


class CameraStep:
    """Settle, fix, confirm; one frame at a time.

    Phases: "start" (auto switched back on, in case a profile fixed it before), "settle"
    (auto values and brightness steady for `settle_s`, or `timeout_s` passed), "match" (only
    a camera whose frames carry no exposure, i.e. a webcam: search the exposure that gives the
    auto picture's brightness), "confirm" (the camera echoes the fixed values on
    CONFIRM_FRAMES frames running and CONFIRM_HOLD_S after the request, or `confirm_s`
    passed), "done".
    """

    def __init__(self, source: Source, *, settle_s: float = 2.0, timeout_s: float = 8.0,
                 confirm_s: float = 2.0) -> None:
        if not 0 < settle_s <= timeout_s or confirm_s <= 0:
            raise ValueError(f"camera step: need 0 < settle_s <= timeout_s and confirm_s > 0, "
                             f"got {settle_s}, {timeout_s}, {confirm_s}")
        self.source = source
        self.settle_s, self.timeout_s, self.confirm_s = settle_s, timeout_s, confirm_s
        self.phase = "start"
        self._result: StepResult | None = None
        self._progress = "waiting for the first frame"
        self._t0 = 0.0
        self._steady: deque[tuple[float, dict[str, float]]] = deque()  # agree with the newest
        self._recent: deque[tuple[float, dict[str, float]]] = deque()  # the last settle_s
        self._settled = False
        self._settle_time = 0.0
        self._auto: dict[str, float] = {}  # what was fixed from (medians)
        self._last_meta: dict[str, Any] = {}
        # match (webcam)
        self._target = 0.0
        self._t_match = 0.0
        self._exposure = float(MATCH_START_US)
        self._tries = 0
        self._wait = 0
        self._prev: tuple[float, float] | None = None  # (log exposure, log brightness)
        self._best: tuple[float, float, float] | None = None  # (error, exposure, brightness)
        self._matched = True
        # confirm
        self._fixed: dict[str, Any] = {}
        self._t_fix = 0.0
        self._streak = 0

    @property
    def progress(self) -> str:
        """One line for the terminal or the page; safe to read from another thread."""
        return self._progress

    @property
    def result(self) -> StepResult | None:
        return self._result

    def feed(self, frame: Frame) -> StepResult | None:
        """Take the next frame; None while working, then the result (on every later call)."""
        if self._result is not None:
            return self._result
        self._last_meta = frame.meta
        if self.phase == "start":
            # a profile applied at startup has switched auto off; it must run to be watched
            self.source.set_controls(AUTO_ON)
            self._t0 = frame.t
            self.phase = "settle"
        if self.phase == "settle":
            self._settle(frame)
        elif self.phase == "match":
            self._match(frame)
        elif self.phase == "confirm":
            self._confirm(frame)
        return self._result

    # -- phase 1: settle
    def _settle(self, frame: Frame) -> None:
        rep = self.source.controls()
        if all(k in rep.unsupported for k in AUTO_ON):
            self._finish_without_controls(rep)
            return
        t, s = frame.t, _sample(frame)
        # keep only the run of frames that all agree with this one
        last_off = max((i for i, (_, old) in enumerate(self._steady) if not _steady(old, s)),
                       default=-1)
        for _ in range(last_off + 1):
            self._steady.popleft()
        self._steady.append((t, s))
        while len(self._steady) > 1 and self._steady[1][0] <= t - self.settle_s:
            self._steady.popleft()
        self._recent.append((t, s))
        while self._recent[0][0] < t - self.settle_s:
            self._recent.popleft()
        steady_for = t - self._steady[0][0]
        elapsed = t - self._t0
        if steady_for >= self.settle_s:
            self._settled = True
            self._settle_time = elapsed
            self._fix(frame, _median([x for _, x in self._steady]))
        elif elapsed >= self.timeout_s:
            self._settle_time = elapsed
            self._fix(frame, _median([x for _, x in self._recent]))
        else:
            self._progress = (f"waiting for auto exposure to settle ({steady_for:.1f} of "
                              f"{self.settle_s:g} s steady, {elapsed:.1f} s)")

    def _unsettled_note(self) -> str:
        """Name the value that moved most over the last settle_s: the player's clue."""
        samples = [x for _, x in self._recent]
        spreads = {}
        for k in WATCHED:
            vals = [x[k] for x in samples if k in x]
            if len(vals) >= 2 and max(vals) > 0:
                spreads[k] = (max(vals) - min(vals)) / max(vals)
        what = ""
        if spreads:
            k = max(spreads, key=lambda k: spreads[k])
            what = f" ({WATCHED[k]} still varied by {spreads[k]:.0%})"
        return (f"auto exposure never settled in {self.timeout_s:g} s{what}: flickering or "
                f"changing light? fixed the middle values")

    # -- phase 2: fix
    def _fix(self, frame: Frame, auto: dict[str, float]) -> None:
        self._auto = auto
        controls: dict[str, Any] = {}
        if "ExposureTime" in auto or "AnalogueGain" in auto:
            controls["AeEnable"] = False
        if "red" in auto:
            controls["AwbEnable"] = False
        if "ExposureTime" in auto:
            controls["ExposureTime"] = round(auto["ExposureTime"])  # libcamera wants an int
        # 4 decimals: far finer than any sensor's steps, and a profile a person can read
        if "AnalogueGain" in auto:
            controls["AnalogueGain"] = round(auto["AnalogueGain"], 4)
        if "red" in auto:
            controls["ColourGains"] = (round(auto["red"], 4), round(auto["blue"], 4))
        if controls:
            self._apply(frame, controls)
            return
        rep = self.source.controls()
        if "AeEnable" in rep.unsupported:
            self._finish_without_controls(rep)
            return
        # no values in the frames but auto exposure can be switched: a webcam
        self.phase = "match"
        self._target = auto.get("brightness", 0.0)
        self._t_match = frame.t
        self._try_exposure(self._exposure)

    def _apply(self, frame: Frame, controls: dict[str, Any]) -> None:
        self._fixed = controls
        self.source.set_controls(controls)
        self._t_fix = frame.t
        self._streak = 0
        self.phase = "confirm"
        self._progress = f"fixed {_summary(controls)}; waiting for the camera to confirm"

    # -- phase 2b: match a webcam's exposure to the auto picture
    def _try_exposure(self, us: float) -> None:
        self._exposure = us
        self._tries += 1
        self._wait = MATCH_WAIT
        self.source.set_controls({"AeEnable": False, "ExposureTime": round(us)})
        self._progress = (f"finding a fixed exposure as bright as auto: try {self._tries}, "
                          f"{us / 1000:.1f} ms")

    def _match(self, frame: Frame) -> None:
        if self._wait > 0:
            self._wait -= 1
            return
        rep = self.source.controls()
        if "ExposureTime" in rep.unsupported:
            if self._best is None:
                # leave the webcam metering for itself rather than stuck at a stale exposure
                self.source.set_controls({"AeEnable": True})
                self._finish(False, rep, {}, [
                    f"the camera refused ExposureTime ({rep.unsupported['ExposureTime']}): "
                    "exposure stays automatic and the picture's brightness may drift"])
                return
            self._matched = False  # the last try went past what the driver allows
            self._apply(frame, {"AeEnable": False, "ExposureTime": round(self._best[1])})
            return
        b, target = _brightness(frame.image), self._target
        err = abs(b - target) / max(target, 1.0)
        if self._best is None or err < self._best[0]:
            self._best = (err, self._exposure, b)
        if abs(b - target) <= MATCH_TOL * target + BRIGHT_NOISE:
            self._apply(frame, {"AeEnable": False, "ExposureTime": round(self._exposure)})
            return
        if self._tries >= MATCH_TRIES or frame.t - self._t_match >= self.timeout_s:
            self._matched = False
            self._apply(frame, {"AeEnable": False, "ExposureTime": round(self._best[1])})
            return
        self._try_exposure(self._next_exposure(b, target))

    def _next_exposure(self, b: float, target: float) -> float:
        le = math.log(self._exposure)
        if b >= CLIPPED or b <= BLACK or target <= BLACK:
            self._prev = None  # a clipped or black picture says nothing about the slope
            step = math.log(0.25) if b >= CLIPPED else math.log(4.0)
        else:
            lb = math.log(b)
            slope = MATCH_SLOPE
            if self._prev is not None and abs(le - self._prev[0]) > 1e-3:
                slope = (lb - self._prev[1]) / (le - self._prev[0])
                slope = min(max(slope, MATCH_SLOPE_RANGE[0]), MATCH_SLOPE_RANGE[1])
            self._prev = (le, lb)
            step = (math.log(target) - lb) / slope
        step = min(max(step, math.log(1 / 8)), math.log(8))
        return float(min(max(math.exp(le + step), MATCH_US_RANGE[0]), MATCH_US_RANGE[1]))

    # -- phase 3: confirm
    def _checkable(self, rep: ControlReport) -> list[str]:
        return [k for k in self._fixed if k in CONFIRMABLE and k not in rep.unsupported]

    def _confirm(self, frame: Frame) -> None:
        """Count only frames read after the request: before it, the auto values may equal
        the fixed ones by construction, which would confirm nothing."""
        rep = self.source.controls()
        refused = [k for k in self._fixed if k in rep.unsupported]
        check = self._checkable(rep)
        # judged on the fixed controls alone: a control asked long ago is not this step's
        echoed = bool(check) and all(k in rep.reported and k not in rep.mismatched
                                     for k in check)
        self._streak = self._streak + 1 if echoed else 0
        elapsed = frame.t - self._t_fix
        if (self._streak >= CONFIRM_FRAMES
                and elapsed >= min(CONFIRM_HOLD_S, self.confirm_s / 2)):
            self._finish_fixed(True, rep)
        elif refused or elapsed >= self.confirm_s:
            self._finish_fixed(False, rep)
        else:
            self._progress = (f"fixed {_summary(self._fixed)}; waiting for the camera to "
                              f"confirm ({elapsed:.1f} of {self.confirm_s:g} s)")

    # -- results
    def _finish_without_controls(self, rep: ControlReport) -> None:
        why = next(iter(rep.unsupported.values()), "")
        note = f" ({why})" if why and self.source.live else ""
        self._finish(True, rep, {}, [
            f"this source has no camera controls{note}: frames are used as they come"])

    def _finish_fixed(self, confirmed: bool, rep: ControlReport) -> None:
        fixed = {k: v for k, v in self._fixed.items() if k not in rep.unsupported}
        advice: list[str] = []
        for k in self._fixed:
            if k in rep.unsupported:
                advice.append(f"the camera refused {k} ({rep.unsupported[k]})")
        for k in self._checkable(rep):
            if k in rep.mismatched:
                asked, got = rep.mismatched[k]
                advice.append(f"the camera did not take {k}: asked {_fmt(asked)}, "
                              f"it reports {_fmt(got)}")
        silent = [k for k in self._checkable(rep) if k not in rep.reported]
        if silent:
            advice.append(f"the camera did not report {', '.join(silent)} back within "
                          f"{self.confirm_s:g} s")
        if not confirmed and not advice:
            advice.append(f"the camera's reports of {', '.join(self._checkable(rep))} did not "
                          f"hold steady for {CONFIRM_FRAMES} frames within {self.confirm_s:g} s")
        passed = confirmed and not advice
        if not self._settled:
            passed = False
            advice.append(self._unsettled_note())
        if not self._matched and self._best is not None:
            passed = False
            advice.append(f"no fixed exposure gave the auto picture's brightness "
                          f"({self._best[2]:.0f} against {self._target:.0f}): kept the closest")
        exposure = fixed.get("ExposureTime")
        if exposure is not None and exposure > LONG_EXPOSURE_US:
            advice.append(f"exposure {exposure / 1000:.0f} ms is long: too dark for a sharp "
                          f"picture: more light")
        if not advice:
            advice.append(f"fixed {_summary(fixed)}")
        self._finish(passed, rep, fixed, advice, confirmed)

    def _finish(self, passed: bool, rep: ControlReport, fixed: dict[str, Any],
                advice: list[str], confirmed: bool = False) -> None:
        exposure = fixed.get("ExposureTime")
        details: dict[str, Any] = {
            "controls": {k: _jsonable(v) for k, v in fixed.items()},
            "confirmed": confirmed,
            "unsupported": dict(rep.unsupported),
            "reported": {k: _jsonable(v) for k, v in rep.reported.items()},
            "mismatched": {k: _jsonable(v) for k, v in rep.mismatched.items()
                           if k in fixed},
            "settled": self._settled,
            "settle_time_s": round(self._settle_time, 3),
        }
        if "brightness" in self._auto:
            details["brightness"] = round(self._auto["brightness"], 2)
        for key, name in (("Lux", "lux"), ("ColourTemperature", "colour_temperature")):
            v = _num(self._last_meta.get(key))
            if v is not None:
                details[name] = v
        value = exposure / 1000.0 if exposure is not None else 0.0
        self._result = StepResult(NAME, passed, value, "; ".join(advice), details)
        self.phase = "done"
        self._progress = f"done: {self._result.advice}"

"""Frame sources: one interface for the Pi camera, webcams, video files, image folders and the demo.

The tracker and the web page must not care where frames come from, and a table session lasts
hours: a camera ribbon gets knocked, a USB webcam drops off the bus. So every live source turns
camera errors into a state ("lost") and a message the page can show, and keeps trying to come
back with bounded exponential backoff; nothing a camera does raises out of `read()`.

Controls use picamera2's names (ExposureTime in microseconds, AnalogueGain, ColourGains as
(red, blue), AeEnable, AwbEnable) because the calibration profile stores those. A source applies
what it can, says what it cannot, and reports what the camera says it is doing, so a profile
that was not honoured is visible instead of silently reading dice in the wrong light.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

import cv2
import numpy as np

STATES = ("starting", "running", "lost", "closed")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
DEFAULT_FPS = 15.0

# picamera2 control names a profile may fix; the first three are echoed in frame metadata
CONFIRMABLE = ("ExposureTime", "AnalogueGain", "ColourGains")
KNOWN_CONTROLS = (*CONFIRMABLE, "AeEnable", "AwbEnable")


class SourceError(ValueError):
    """A source that cannot be opened at all (bad spec, no images, missing picamera2).

    A ValueError so the CLI's one "bad input -> exit 2" path covers it.
    """


@dataclass(frozen=True)
class Frame:
    """One BGR frame. `index` numbers frames in stream order (a replay keeps the position in
    the recording, so a skipped file leaves a gap); `t` is seconds of stream time.

    `image` may be shared with later frames and read-only: copy it before drawing on it.
    """

    index: int
    t: float
    image: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ControlReport:
    """What was asked of the camera and what it says it does, for the page and the profile.

    `unsupported` maps a control to why it was not applied; `mismatched` maps a control the
    camera accepted to (asked, reported) while the two still differ.
    """

    requested: dict[str, Any]
    reported: dict[str, Any]
    unsupported: dict[str, str]
    mismatched: dict[str, tuple[Any, Any]]

    @property
    def confirmed(self) -> bool:
        """True once every applied control the camera can echo is echoed back as asked;
        False while nothing checkable was asked (there is nothing to vouch for)."""
        check = [k for k in self.requested if k in CONFIRMABLE and k not in self.unsupported]
        return bool(check) and all(k in self.reported for k in check) and not self.mismatched


def _close_enough(asked: Any, got: Any, rel: float = 0.05) -> bool:
    """Sensors quantise exposure to line times and gain to register steps, so allow 5%."""
    if isinstance(asked, (tuple, list)) or isinstance(got, (tuple, list)):
        try:
            return len(asked) == len(got) and all(
                _close_enough(a, g, rel) for a, g in zip(asked, got, strict=True))
        except TypeError:
            return False
    try:
        a, g = float(asked), float(got)
    except (TypeError, ValueError):
        return asked == got
    return abs(a - g) <= rel * max(abs(a), 1e-9) + 1e-6


class Backoff:
    """Delays between reconnect attempts: initial, doubling, never above `maximum`.

    Bounded so a camera that comes back is picked up within `maximum` seconds, not after a
    delay that grew all night.
    """

    def __init__(self, initial: float = 0.5, maximum: float = 10.0, factor: float = 2.0) -> None:
        self.initial, self.maximum, self.factor = initial, maximum, factor
        self.attempts = 0

    def next_delay(self) -> float:
        d = min(self.maximum, self.initial * self.factor**self.attempts)
        self.attempts += 1
        return d

    def reset(self) -> None:
        self.attempts = 0


class Source(ABC):
    """Base of every frame source: state, message, controls report, pacing, context manager.

    `read()` returns the next frame, or None when there is none right now (camera lost) or
    any more (`ended`). Iterating yields frames until the source ends or is closed.
    """

    live = False

    def __init__(
        self, *, realtime: bool = False, clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Any] | None = None,
    ) -> None:
        self.realtime = realtime
        self._clock = clock
        self._stop = threading.Event()
        # the default sleep wakes up at close(), so a source waiting to reconnect closes at once
        self._sleep = sleep or self._stop.wait
        self._lock = threading.RLock()
        self._state = "starting"
        self._message = "starting"
        self._requested: dict[str, Any] = {}
        self._pending: dict[str, Any] = {}
        self._unsupported: dict[str, str] = {}
        self._reported: dict[str, Any] = {}
        self._t0: float | None = None

    # -- state
    @property
    def state(self) -> str:
        return self._state

    @property
    def message(self) -> str:
        """A line for the page: why the source is lost or ended, or that it runs."""
        return self._message

    @property
    def ended(self) -> bool:
        return self._state == "closed"

    def _set_state(self, state: str, message: str) -> None:
        assert state in STATES, state
        with self._lock:
            self._state, self._message = state, message

    # -- frames
    @abstractmethod
    def read(self) -> Frame | None:
        """The next frame; None if there is none now (see `state`) or the source ended."""

    def __iter__(self) -> Iterator[Frame]:
        while not self.ended:
            f = self.read()
            if f is not None:
                yield f

    def _pace(self, t: float) -> None:
        """Deliver a recorded frame no earlier than its stream time (realtime replay)."""
        if not self.realtime:
            return
        now = self._clock()
        if self._t0 is None:
            self._t0 = now - t
        delay = self._t0 + t - now
        if delay > 0:
            self._sleep(delay)

    # -- controls
    def set_controls(self, controls: Mapping[str, Any]) -> ControlReport:
        """Ask for controls by picamera2 name; applied before the next frame is taken.

        Queued rather than applied here because drivers are not safe to touch from the web
        thread while the frame loop reads; the values are kept and re-applied after a reconnect.
        """
        with self._lock:
            for k, v in controls.items():
                self._requested[k] = v
                self._pending[k] = v
                self._unsupported.pop(k, None)
        return self.controls()

    def controls(self) -> ControlReport:
        """Requested versus reported controls (reported: from the latest frame)."""
        with self._lock:
            requested = dict(self._requested)
            reported = dict(self._reported)
            unsupported = dict(self._unsupported)
        mismatched = {
            k: (v, reported[k]) for k, v in requested.items()
            if k in CONFIRMABLE and k not in unsupported and k in reported
            and not _close_enough(v, reported[k])
        }
        return ControlReport(requested, reported, unsupported, mismatched)

    def _take_pending(self) -> dict[str, Any]:
        with self._lock:
            p, self._pending = self._pending, {}
        return p

    def _refuse_all_controls(self, why: str) -> None:
        with self._lock:
            for k in self._take_pending():
                self._unsupported[k] = why

    # -- lifetime
    def close(self) -> None:
        """Release the device; safe to call twice and from another thread."""
        self._stop.set()
        self._set_state("closed", "closed")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _LiveSource(Source):
    """A camera: opens lazily, and turns any device error into "lost" plus a timed retry."""

    live = True

    def __init__(
        self, *, stall_timeout: float = 2.0, backoff: Backoff | None = None,
        max_retries: int | None = None, realtime: bool = False,
        clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] | None = None,
    ) -> None:
        super().__init__(realtime=realtime, clock=clock, sleep=sleep)
        self.stall_timeout = stall_timeout
        self.backoff = backoff or Backoff()
        self.max_retries = max_retries
        self.reconnects = 0  # successful re-opens after a loss, for the page and tests
        self._opened = False
        self._ever_opened = False
        self._retry_at: float | None = None
        self._index = 0
        self._start = clock()

    @abstractmethod
    def _open(self) -> None:
        """Open and start the device; raise on failure."""

    @abstractmethod
    def _grab(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        """One fresh BGR frame and its metadata; None or an exception when none came."""

    @abstractmethod
    def _release(self) -> None:
        """Stop and close the device; may raise (callers swallow it)."""

    @abstractmethod
    def _apply(self, controls: dict[str, Any]) -> None:
        """Send controls to the open device; record refusals in self._unsupported."""

    def _release_quietly(self) -> None:
        self._opened = False
        with contextlib.suppress(Exception):  # a device that died often fails to close too
            self._release()

    def _lose(self, reason: str) -> None:
        self._release_quietly()
        if self.max_retries is not None and self.backoff.attempts >= self.max_retries:
            self._set_state("closed", f"camera lost: {reason}; gave up after "
                                      f"{self.backoff.attempts} retries")
            return
        delay = self.backoff.next_delay()
        self._retry_at = self._clock() + delay
        self._set_state("lost", f"camera lost: {reason}; retrying in {delay:.1f} s")

    def read(self) -> Frame | None:
        if self.ended or self._stop.is_set():
            return None
        if not self._opened:
            if self._retry_at is not None:
                wait = self._retry_at - self._clock()
                if wait > 0:
                    self._sleep(wait)
                if self._stop.is_set():
                    return None
            try:
                self._open()
            except Exception as e:
                self._lose(f"cannot open ({_why(e)})")
                return None
            self._opened = True
            if self._ever_opened:
                self.reconnects += 1
            self._ever_opened = True
            with self._lock:  # a fresh device knows nothing of what we asked before
                self._pending = {**self._requested, **self._pending}
        pending = self._take_pending()
        if pending:
            try:
                self._apply(pending)
            except Exception as e:
                self._lose(f"setting controls failed ({_why(e)})")
                return None
        try:
            got = self._grab()
        except Exception as e:
            self._lose(f"no frame ({_why(e)})")
            return None
        if got is None:
            self._lose("no frame")
            return None
        if self._stop.is_set():  # closed from another thread while we waited for the frame
            return None
        image, meta = got
        self.backoff.reset()
        self._retry_at = None
        if self._state != "running":
            self._set_state("running", "running")
        frame = Frame(self._index, self._clock() - self._start, image, meta)
        self._index += 1
        return frame

    def close(self) -> None:
        super().close()
        self._release_quietly()


def _why(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


# --------------------------------------------------------------------------- Raspberry Pi camera


AF_CONTINUOUS = 2  # libcamera controls.AfModeEnum.Continuous


class PiCameraSource(_LiveSource):
    """The Pi camera through picamera2 (imported here only: it exists only on a Pi).

    Uses an RGB888 video configuration (BGR in memory, what OpenCV wants) and
    `captured_request(flush=True)` so a slow consumer gets the newest frame, not one queued
    seconds ago. `picamera2_class` lets tests pass a stand-in for the hardware.
    """

    def __init__(
        self, camera_num: int = 0, size: tuple[int, int] = (1280, 960), fps: float = DEFAULT_FPS,
        controls: Mapping[str, Any] | None = None, *, picamera2_class: Any = None,
        **live: Any,
    ) -> None:
        super().__init__(**live)
        if picamera2_class is None:
            try:
                from picamera2 import Picamera2  # type: ignore[import-not-found]
            except ImportError as e:
                raise SourceError(
                    "picamera: picamera2 is not installed (on a Pi: sudo apt install "
                    "python3-picamera2, and a venv made with --system-site-packages)") from e
            picamera2_class = Picamera2
        self._cls = picamera2_class
        self.camera_num = camera_num
        self.size = (int(size[0]), int(size[1]))
        self.fps = fps
        self._cam: Any = None
        if controls:
            self.set_controls(controls)

    @staticmethod
    def _libcamera_controls(controls: Mapping[str, Any]) -> dict[str, Any]:
        """Fixing exposure or white balance only sticks with the automatic loop switched off."""
        out = dict(controls)
        if ("ExposureTime" in out or "AnalogueGain" in out) and "AeEnable" not in out:
            out["AeEnable"] = False
        if "ColourGains" in out:
            out["ColourGains"] = tuple(float(g) for g in out["ColourGains"])
            out.setdefault("AwbEnable", False)
        return out

    def _open(self) -> None:
        cam = self._cls(self.camera_num)
        try:
            frame_us = round(1e6 / self.fps)
            config = cam.create_video_configuration(
                main={"size": self.size, "format": "RGB888"},
                controls={"FrameDurationLimits": (frame_us, frame_us)},
            )
            cam.configure(config)
            cam.start()
            # Camera Module 3 focuses far by default, where dice under a lid-height mount
            # are soft; continuous autofocus keeps the pips sharp (absent on fixed lenses).
            available = getattr(cam, "camera_controls", None) or {}
            if "AfMode" in available:
                cam.set_controls({"AfMode": AF_CONTINUOUS})
        except Exception:
            with contextlib.suppress(Exception):  # the configure error is the one to report
                cam.close()
            raise
        self._cam = cam

    def _apply(self, controls: dict[str, Any]) -> None:
        self._cam.set_controls(self._libcamera_controls(controls))

    def _grab(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        # wait= a number makes picamera2 raise TimeoutError instead of blocking for ever
        with self._cam.captured_request(wait=self.stall_timeout, flush=True) as request:
            arr = request.make_array("main")
            md = dict(request.get_metadata())
        if arr is None or arr.ndim != 3:
            return None
        if arr.shape[2] == 4:  # XRGB8888 if a config was overridden: drop the padding byte
            arr = np.ascontiguousarray(arr[:, :, :3])
        with self._lock:
            self._reported = {k: md[k] for k in CONFIRMABLE if k in md}
        return arr, md

    def _release(self) -> None:
        cam, self._cam = self._cam, None
        if cam is None:
            return
        try:
            cam.stop()
        finally:
            cam.close()


# --------------------------------------------------------------------------- OpenCV VideoCapture


class CaptureSource(_LiveSource):
    """A webcam (`int` index) or a video file (`str` path) through OpenCV.

    A webcam is live: errors become "lost" and a reconnect. A file is a recording: it plays at
    its own fps (or `fps`), paced only when `realtime`, and its end ends the source cleanly.
    Manual exposure and white balance go through CAP_PROP_* as far as the driver honours them;
    what it refuses is listed in `controls().unsupported`. Names starting with "CAP_PROP_" are
    passed to the driver unchanged, for what picamera2's names cannot express.
    """

    def __init__(
        self, target: int | str | Path, *, fps: float | None = None,
        size: tuple[int, int] | None = None,
        capture_factory: Callable[..., Any] = cv2.VideoCapture, **live: Any,
    ) -> None:
        super().__init__(**live)
        self.target: int | str = target if isinstance(target, int) else str(target)
        self.live = isinstance(target, int)
        self.size = size
        self._factory = capture_factory
        self._cap: Any = None
        self.fps = fps
        if not self.live:
            try:
                self._open()
            except Exception as e:
                raise SourceError(f"{self.target}: not a readable video ({_why(e)})") from e
            self._opened = True
            self._ever_opened = True
            native = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)
            if self.fps is None:
                self.fps = native if 0 < native < 1000 else DEFAULT_FPS

    def _open(self) -> None:
        cap = self._factory(self.target)
        if not cap.isOpened():
            cap.release()
            raise OSError("device did not open" if self.live else "cannot open file")
        if self.live:
            cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # the newest frame, not a stale queue
            if self.size:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
            cap.set(cv2.CAP_PROP_FPS, self.fps or DEFAULT_FPS)
            cap.set(cv2.CAP_PROP_READ_TIMEOUT_MSEC, self.stall_timeout * 1000)
        self._cap = cap

    # picamera2 name -> (property, to driver units, from driver units); V4L2 conventions:
    # exposure_time_absolute counts 100 us, auto exposure 1 = manual, 3 = aperture priority
    _MAP: ClassVar[dict[str, tuple[int, Callable[[Any], float], Callable[[float], Any]]]] = {
        "ExposureTime": (cv2.CAP_PROP_EXPOSURE, lambda us: float(us) / 100.0,
                         lambda v: v * 100.0),
        "AeEnable": (cv2.CAP_PROP_AUTO_EXPOSURE, lambda on: 3.0 if on else 1.0,
                     lambda v: v != 1.0),
        "AwbEnable": (cv2.CAP_PROP_AUTO_WB, lambda on: 1.0 if on else 0.0, lambda v: v != 0.0),
    }

    def _apply(self, controls: dict[str, Any]) -> None:
        if not self.live:
            for k in controls:
                self._unsupported[k] = "a video file has no camera controls"
            return
        todo = dict(controls)
        if "ExposureTime" in todo and "AeEnable" not in todo:
            todo["AeEnable"] = False  # manual exposure is ignored while auto exposure runs
        # auto exposure must be off before the exposure value is accepted
        for k in sorted(todo, key=lambda k: k != "AeEnable"):
            v = todo[k]
            if k.startswith("CAP_PROP_") and hasattr(cv2, k):
                prop, to_dev, from_dev = getattr(cv2, k), float, float
            elif k in self._MAP:
                prop, to_dev, from_dev = self._MAP[k]
            elif k == "ColourGains":
                self._unsupported[k] = ("OpenCV has no white-balance gains; fix AwbEnable=False "
                                        "and let the colour profile correct the rest")
                continue
            elif k == "AnalogueGain":
                self._unsupported[k] = ("webcam gain is in driver units, not a multiplier; "
                                        "set CAP_PROP_GAIN directly")
                continue
            else:
                self._unsupported[k] = "unknown control"
                continue
            want = to_dev(v)
            ok = bool(self._cap.set(prop, want))
            got = float(self._cap.get(prop))
            if not ok:
                self._unsupported[k] = "the driver refused it"
            elif not _close_enough(want, got):
                self._unsupported[k] = f"the driver reports {from_dev(got)!r} after asking {v!r}"
            elif k in CONFIRMABLE:
                self._reported[k] = from_dev(got)

    def _grab(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        ok, img = self._cap.read()
        if not ok or img is None:
            return None
        if img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
        return img, {"source": f"webcam:{self.target}" if self.live else self.target}

    def _release(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()

    def read(self) -> Frame | None:
        if self.live:
            return super().read()
        if self.ended:
            return None
        self._apply(self._take_pending())
        try:
            got = self._grab()
        except Exception as e:  # a damaged file ends the replay; it will not heal by retrying
            got = None
            self._message = f"video ended early ({_why(e)})"
        if got is None:
            n = self._index
            self._release_quietly()
            self._set_state("closed", f"end of video after {n} frames")
            return None
        image, meta = got
        fps = self.fps or DEFAULT_FPS
        frame = Frame(self._index, self._index / fps, image, meta)
        self._index += 1
        if self._state != "running":
            self._set_state("running", "playing")
        self._pace(frame.t)
        return frame


# --------------------------------------------------------------------------- folder replay


class FolderSource(Source):
    """A folder of frames taken in name order at `fps`: the replay format of `track`.

    A file that does not decode is skipped and noted (`skipped`), like a dropped frame: the
    indices and times of the others stay where the recording put them.
    """

    def __init__(
        self, folder: str | Path, fps: float = DEFAULT_FPS, *, realtime: bool = False,
        clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] | None = None,
    ) -> None:
        super().__init__(realtime=realtime, clock=clock, sleep=sleep)
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceError(f"{folder}: not a folder")
        if fps <= 0:
            raise SourceError(f"{folder}: fps must be positive, got {fps}")
        self.fps = float(fps)
        self.files = sorted(p for p in self.folder.iterdir()
                            if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise SourceError(f"{folder}: no images ({', '.join(IMAGE_SUFFIXES)})")
        self.skipped: list[tuple[str, str]] = []
        self._pos = 0

    def read(self) -> Frame | None:
        if self.ended:
            return None
        self._refuse_all_controls("a folder of images has no camera controls")
        while self._pos < len(self.files):
            i, path = self._pos, self.files[self._pos]
            self._pos += 1
            try:
                img = cv2.imread(str(path), cv2.IMREAD_COLOR)
            except Exception as e:  # cv2 raises on some malformed headers
                img, why = None, _why(e)
            else:
                why = "not a decodable image"
            if img is None:
                self.skipped.append((path.name, why))
                self._set_state(self._state, f"skipped {path.name}: {why}")
                continue
            frame = Frame(i, i / self.fps, img, {"path": str(path)})
            self._set_state("running", "playing" if not self.skipped else
                            f"playing ({len(self.skipped)} unreadable files skipped)")
            self._pace(frame.t)
            return frame
        note = f", {len(self.skipped)} unreadable skipped" if self.skipped else ""
        self._set_state("closed", f"end of folder ({len(self.files)} files{note})")
        return None


# --------------------------------------------------------------------------- specs


# Sources opened by a name alone, as "module:class": the module is imported only when the
# name is asked for, so the demo's renderer stays off a camera's path and this module never
# imports back the sources built on it.
NAMED_SOURCES: dict[str, str] = {"demo": "vision.demo:DemoSource"}


def named_source(name: str) -> Callable[..., Source]:
    """The class behind a source name in `NAMED_SOURCES`."""
    module, _, attr = NAMED_SOURCES[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def open_source(
    spec: str, *, fps: float | None = None, realtime: bool = False,
    size: tuple[int, int] | None = None, controls: Mapping[str, Any] | None = None,
    **extra: Any,
) -> Source:
    """Turn a `--source` string into a source.

    `spec`: "picamera" (or "picamera:N"), "webcam:N", "demo", a video file or a folder of
    images. Options a source has no use for are dropped (a folder has no controls, a camera
    no replay fps), so one command line works for every kind; `extra` goes to the constructor.
    A spec that names nothing usable raises ValueError naming it.
    """
    s = spec.strip()
    kind, _, arg = s.partition(":")
    if kind in ("picamera", "webcam") and (arg == "" or arg.isdigit()) and not Path(s).exists():
        num = int(arg or 0)
        if kind == "picamera":
            src: Source = PiCameraSource(num, size=size or (1280, 960), fps=fps or DEFAULT_FPS,
                                         controls=controls, **extra)
        else:
            src = CaptureSource(num, fps=fps, size=size or (1280, 960), **extra)
            if controls:
                src.set_controls(controls)
        return src
    if s in NAMED_SOURCES:
        opts: dict[str, Any] = {"realtime": realtime, **extra}
        if fps:
            opts["fps"] = fps
        if size:
            opts["size"] = size
        return named_source(s)(**opts)
    p = Path(s)
    if s and p.is_dir():
        return FolderSource(p, fps or DEFAULT_FPS, realtime=realtime, **extra)
    if s and p.is_file():
        return CaptureSource(str(p), fps=fps, realtime=realtime, **extra)
    raise SourceError(f"unknown source {spec!r}: expected picamera, webcam:N, demo, a video file "
                      "or a folder of images")

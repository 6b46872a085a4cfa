"""Frame sources: the Pi camera against a stand-in that follows picamera2's documented API,
OpenCV on real files written here, folders of images, and the spec parser.

Only hardware we lack is faked (picamera2, a USB webcam); everything else runs for real.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.sources import (
    Backoff,
    CaptureSource,
    FolderSource,
    Frame,
    PiCameraSource,
    open_source,
)

# --------------------------------------------------------------------------- fake time


class FakeTime:
    """A clock that only moves when the source sleeps, so backoff is exact and instant."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(round(s, 6))
        self.now += s


# --------------------------------------------------------------------------- picamera2 stand-in


class Camera:
    """The hardware behind the stand-in: it can be unplugged and can stall."""

    LINE_US = 14.26  # exposure is quantised to sensor lines, as on a real sensor

    def __init__(self) -> None:
        self.present = True
        self.delivering = True
        self.fail_capture: Exception | None = None
        self.instances: list = []  # every stand-in camera opened
        self.frames = 0
        self.autofocus = False  # Camera Module 3 has a focus motor; v1/v2/HQ do not


class FakeRequest:
    def __init__(self, arr: np.ndarray, md: dict) -> None:
        self._arr, self._md, self.released = arr, md, False

    def make_array(self, name: str) -> np.ndarray:
        if name != "main":
            raise RuntimeError(f"Stream {name!r} is not defined")
        return self._arr.copy()  # picamera2 copies out of the camera buffer

    def get_metadata(self) -> dict:
        return dict(self._md)

    def release(self) -> None:
        self.released = True


def picamera2_for(camera: Camera) -> type:
    """A class with Picamera2's methods and behaviour as documented in its manual."""

    class FakePicamera2:
        def __init__(self, camera_num: int = 0) -> None:
            if not camera.present:
                # what Picamera2() raises when global_camera_info() has no such camera
                raise IndexError("list index out of range")
            camera.instances.append(self)
            self.config: dict | None = None
            self.started = False
            self.closed = False
            self.received: list[dict] = []
            self.flushes: list[object] = []
            self.waits: list[object] = []
            self._pending: list[tuple[int, dict]] = []
            self._ctl = {"AeEnable": True, "AwbEnable": True, "ExposureTime": 20000,
                         "AnalogueGain": 1.0, "ColourGains": (2.0, 1.6)}
            self._seq = 0
            # picamera2 lists what the sensor supports as {name: (min, max, default)}
            self.camera_controls = {"ExposureTime": (100, 1_000_000, 20000),
                                    "AnalogueGain": (1.0, 16.0, 1.0)}
            if camera.autofocus:
                self.camera_controls["AfMode"] = (0, 2, 0)

        def create_video_configuration(self, main=None, lores=None, raw=None, transform=None,
                                       colour_space=None, buffer_count=6, controls=None,
                                       display="main", encode="main", queue=True, sensor=None,
                                       use_case="video") -> dict:
            m = {"format": "XBGR8888", "size": (1280, 720), **(main or {})}
            return {"use_case": use_case, "main": m, "lores": lores, "buffer_count": buffer_count,
                    "controls": dict(controls or {})}

        def configure(self, config: dict) -> None:
            if config["main"]["format"] not in ("RGB888", "BGR888", "XBGR8888", "XRGB8888"):
                raise RuntimeError("Bad format")
            self.config = config

        def start(self) -> None:
            if self.config is None:
                raise RuntimeError("Camera has not been configured")
            self.started = True
            self._limit = self.config["controls"].get("FrameDurationLimits", (33333, 33333))[1]

        def stop(self) -> None:
            self.started = False

        def close(self) -> None:
            self.started = False
            self.closed = True

        def set_controls(self, controls: dict) -> None:
            self.received.append(dict(controls))
            self._pending.append((self._seq + 2, dict(controls)))  # takes effect 2 frames later

        @contextlib.contextmanager
        def captured_request(self, wait=None, flush=None):
            self.waits.append(wait)
            self.flushes.append(flush)
            if not self.started or self.closed:
                raise RuntimeError("Camera is not running")
            if not camera.present or not camera.delivering:
                if wait is None or wait is True:
                    raise AssertionError("a real camera would block for ever here")
                raise TimeoutError()
            if camera.fail_capture is not None:
                raise camera.fail_capture
            self._seq += 1
            camera.frames += 1
            for _due, c in [p for p in self._pending if p[0] <= self._seq]:
                self._ctl.update(c)
            self._pending = [p for p in self._pending if p[0] > self._seq]
            w, h = self.config["main"]["size"]
            fmt = self.config["main"]["format"]
            arr = np.zeros((h, w, 4 if fmt.startswith("X") else 3), np.uint8)
            arr[..., 0] = 200  # RGB888 is B, G, R in memory: blue first
            arr[..., 2] = camera.frames % 256
            exp = self._ctl["ExposureTime"] if not self._ctl["AeEnable"] else 20000
            exp = min(exp, self._limit)  # exposure cannot exceed the frame duration
            exp = int(round(exp / Camera.LINE_US) * Camera.LINE_US)
            gain = self._ctl["AnalogueGain"] if not self._ctl["AeEnable"] else 1.0
            cg = self._ctl["ColourGains"] if not self._ctl["AwbEnable"] else (2.0, 1.6)
            md = {"SensorTimestamp": 10**9 + camera.frames * 66_666_000, "ExposureTime": exp,
                  "AnalogueGain": round(gain * 16) / 16, "ColourGains": tuple(cg),
                  "FrameDuration": self._limit, "Lux": 400.0}
            req = FakeRequest(arr, md)
            try:
                yield req
            finally:
                req.release()

    return FakePicamera2


def pi_source(camera: Camera, ft: FakeTime, **kw) -> PiCameraSource:
    return PiCameraSource(picamera2_class=picamera2_for(camera), clock=ft.clock, sleep=ft.sleep,
                          size=(64, 48), **kw)


def test_picamera_uses_rgb888_video_config_and_fresh_frames() -> None:
    cam, ft = Camera(), FakeTime()
    with pi_source(cam, ft) as src:
        assert src.state == "starting"
        f = src.read()
        assert isinstance(f, Frame) and src.state == "running"
        inst = cam.instances[0]
        assert inst.config["main"] == {"format": "RGB888", "size": (64, 48)}
        assert inst.config["controls"]["FrameDurationLimits"] == (66667, 66667)  # 15 fps
        assert inst.flushes == [True]  # stale queued frames are skipped
        assert isinstance(inst.waits[0], float) and inst.waits[0] > 0  # never blocks for ever
        assert f.image.shape == (48, 64, 3) and f.image.dtype == np.uint8
        assert f.image[0, 0, 0] == 200  # blue stays in channel 0: BGR as OpenCV wants
        assert f.meta["SensorTimestamp"] > 0
        frames = [src.read() for _ in range(3)]
        assert [fr.index for fr in frames] == [1, 2, 3]
    assert inst.closed and src.state == "closed" and src.read() is None


def test_picamera_controls_set_by_name_and_confirmed_from_metadata() -> None:
    cam, ft = Camera(), FakeTime()
    asked = {"ExposureTime": 12000, "AnalogueGain": 2.0, "ColourGains": (1.8, 1.45)}
    with pi_source(cam, ft, controls=asked) as src:
        src.read()
        sent = cam.instances[0].received[0]
        assert sent["ExposureTime"] == 12000 and sent["ColourGains"] == (1.8, 1.45)
        assert sent["AeEnable"] is False and sent["AwbEnable"] is False
        rep = src.controls()
        assert not rep.confirmed  # the first frame was exposed before the controls arrived
        assert "ExposureTime" in rep.mismatched
        for _ in range(3):
            src.read()
        rep = src.controls()
        assert rep.confirmed, rep
        assert rep.reported["ExposureTime"] != 12000  # quantised by the sensor, still accepted
        assert abs(rep.reported["ExposureTime"] - 12000) < 20
        assert rep.reported["ColourGains"] == (1.8, 1.45)


def test_picamera_turns_on_autofocus_only_where_the_lens_has_it() -> None:
    cam, ft = Camera(), FakeTime()
    cam.autofocus = True
    with pi_source(cam, ft) as src:
        src.read()
        assert {"AfMode": 2} in cam.instances[0].received
    plain, ft = Camera(), FakeTime()
    with pi_source(plain, ft) as src:
        src.read()
        assert all("AfMode" not in c for c in plain.instances[0].received)


def test_picamera_control_the_camera_cannot_honour_is_reported() -> None:
    cam, ft = Camera(), FakeTime()
    with pi_source(cam, ft) as src:  # 15 fps: a frame lasts 66.7 ms
        src.read()
        src.set_controls({"ExposureTime": 100_000, "AnalogueGain": 1.5})
        for _ in range(4):
            src.read()
        rep = src.controls()
        assert not rep.confirmed
        asked, got = rep.mismatched["ExposureTime"]
        assert asked == 100_000 and got <= 66_667
        assert "AnalogueGain" not in rep.mismatched


def test_picamera_stall_unplug_and_return_recover_with_bounded_backoff() -> None:
    cam, ft = Camera(), FakeTime()
    src = pi_source(cam, ft, controls={"ExposureTime": 8000},
                    backoff=Backoff(initial=0.5, maximum=4.0))
    for _ in range(3):
        assert src.read() is not None
    cam.delivering = False  # stops delivering
    assert src.read() is None
    assert src.state == "lost" and src.message.startswith("camera lost")
    assert cam.instances[0].closed  # the stalled camera is released before retrying
    cam.present = False  # and is gone
    for _ in range(6):
        assert src.read() is None
        assert src.state == "lost"
    assert ft.sleeps == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]  # doubling, capped
    cam.present = cam.delivering = True
    f = src.read()
    assert f is not None and src.state == "running" and src.message == "running"
    assert f.index == 3 and src.reconnects == 1
    new = cam.instances[-1]
    assert new is not cam.instances[0]
    assert new.received and new.received[0]["ExposureTime"] == 8000  # controls re-applied
    for _ in range(3):
        src.read()
    assert src.controls().confirmed
    cam.delivering = False
    ft.sleeps.clear()
    src.read()
    cam.delivering = True
    assert src.read() is not None
    assert ft.sleeps == [0.5]  # a recovery resets the backoff
    src.close()


def test_picamera_capture_errors_never_escape_the_frame_loop() -> None:
    cam, ft = Camera(), FakeTime()
    src = pi_source(cam, ft)
    assert src.read() is not None
    cam.fail_capture = RuntimeError("Device or resource busy")
    for _ in range(3):
        assert src.read() is None
    assert src.state == "lost" and "Device or resource busy" in src.message
    cam.fail_capture = None
    assert src.read() is not None and src.state == "running"


def test_picamera_gives_up_only_when_told_to() -> None:
    cam, ft = Camera(), FakeTime()
    cam.present = False
    src = pi_source(cam, ft, max_retries=3)
    got = list(src)  # iteration ends when the source does; nothing raises
    assert got == [] and src.ended
    assert "gave up after 3 retries" in src.message
    assert len(ft.sleeps) == 3


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None,
                    reason="picamera2 is installed here")
def test_picamera_without_picamera2_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="picamera2 is not installed"):
        open_source("picamera")


# --------------------------------------------------------------------------- video files


def write_video(path: Path, n: int, fps: float, size: tuple[int, int] = (64, 48)) -> None:
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    assert vw.isOpened()
    for i in range(n):
        vw.write(np.full((size[1], size[0], 3), 10 + 20 * i, np.uint8))
    vw.release()


def test_video_file_plays_at_its_fps_and_ends_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "roll.avi"
    write_video(path, 10, 10.0)
    ft = FakeTime()
    src = open_source(str(path), clock=ft.clock, sleep=ft.sleep)
    assert isinstance(src, CaptureSource) and not src.live
    frames = list(src)
    assert [f.index for f in frames] == list(range(10))
    assert [f.t for f in frames] == pytest.approx([i / 10 for i in range(10)])
    means = [float(f.image.mean()) for f in frames]
    assert all(b > a + 10 for a, b in itertools.pairwise(means))  # in order
    assert frames[0].image.shape == (48, 64, 3)
    assert src.ended and src.state == "closed" and "end of video after 10 frames" in src.message
    assert src.read() is None and ft.sleeps == []  # a file is not reconnected, nor paced


def test_video_file_given_fps_and_realtime_pacing(tmp_path: Path) -> None:
    path = tmp_path / "roll.avi"
    write_video(path, 6, 30.0)
    ft = FakeTime()
    src = CaptureSource(path, fps=5.0, realtime=True, clock=ft.clock, sleep=ft.sleep)
    frames = list(src)
    assert frames[-1].t == pytest.approx(1.0)
    assert sum(ft.sleeps) == pytest.approx(1.0)  # five gaps of 0.2 s


def test_video_file_has_no_controls(tmp_path: Path) -> None:
    path = tmp_path / "roll.avi"
    write_video(path, 3, 10.0)
    src = CaptureSource(path)
    src.set_controls({"ExposureTime": 5000, "AwbEnable": False})
    src.read()
    rep = src.controls()
    assert set(rep.unsupported) == {"ExposureTime", "AwbEnable"} and not rep.confirmed


def test_missing_webcam_is_lost_with_bounded_retries_and_no_crash() -> None:
    ft = FakeTime()
    src = CaptureSource(87, clock=ft.clock, sleep=ft.sleep, max_retries=5,
                        backoff=Backoff(initial=0.25, maximum=1.0))
    assert src.read() is None
    assert src.state == "lost" and src.message.startswith("camera lost")
    rest = list(src)
    assert rest == [] and src.ended and "gave up" in src.message
    assert ft.sleeps == [0.25, 0.5, 1.0, 1.0, 1.0]


class FakeCapture:
    """A USB webcam behind cv2.VideoCapture's interface: it refuses white balance."""

    props: dict[int, float]

    def __init__(self, cam: Camera, index: int) -> None:
        self.cam, self.index = cam, index
        self.opened = cam.present
        self.props = {cv2.CAP_PROP_AUTO_EXPOSURE: 3.0, cv2.CAP_PROP_EXPOSURE: 156.0,
                      cv2.CAP_PROP_AUTO_WB: 1.0}

    def isOpened(self) -> bool:
        return self.opened

    def set(self, prop: int, value: float) -> bool:
        if prop == cv2.CAP_PROP_AUTO_WB:
            return False
        if prop == cv2.CAP_PROP_EXPOSURE and self.props[cv2.CAP_PROP_AUTO_EXPOSURE] != 1.0:
            return True  # accepted and ignored while auto exposure runs, as V4L2 drivers do
        self.props[prop] = value
        return True

    def get(self, prop: int) -> float:
        return self.props.get(prop, 0.0)

    def read(self) -> tuple[bool, np.ndarray | None]:
        if not (self.opened and self.cam.present and self.cam.delivering):
            return False, None
        self.cam.frames += 1
        return True, np.full((48, 64, 3), self.cam.frames % 256, np.uint8)

    def release(self) -> None:
        self.opened = False


def test_webcam_controls_through_cap_props_and_refusals_reported() -> None:
    cam, ft = Camera(), FakeTime()
    src = CaptureSource(0, capture_factory=lambda i: FakeCapture(cam, i), clock=ft.clock,
                        sleep=ft.sleep)
    src.set_controls({"ExposureTime": 10000, "AwbEnable": False, "ColourGains": (1.5, 1.2),
                      "AnalogueGain": 2.0})
    assert src.read() is not None
    rep = src.controls()
    assert rep.reported["ExposureTime"] == pytest.approx(10000)  # V4L2 counts 100 us
    assert set(rep.unsupported) == {"AwbEnable", "ColourGains", "AnalogueGain"}
    assert "refused" in rep.unsupported["AwbEnable"]
    assert rep.confirmed  # ExposureTime, the one applied control the camera echoes, matches


def test_webcam_that_drops_off_comes_back() -> None:
    cam, ft = Camera(), FakeTime()
    src = CaptureSource(0, capture_factory=lambda i: FakeCapture(cam, i), clock=ft.clock,
                        sleep=ft.sleep)
    assert src.read() is not None
    cam.present = False
    assert [src.read() for _ in range(3)] == [None, None, None]
    assert src.state == "lost" and "camera lost" in src.message
    cam.present = True
    f = src.read()
    assert f is not None and src.state == "running" and src.reconnects == 1


# --------------------------------------------------------------------------- folders


def test_folder_replays_in_name_order_and_skips_unreadable(tmp_path: Path) -> None:
    for i in (3, 0, 4, 1):
        cv2.imwrite(str(tmp_path / f"f{i:03d}.png"), np.full((24, 32, 3), 40 * i + 5, np.uint8))
    (tmp_path / "f002.png").write_bytes(b"not a png at all")
    (tmp_path / "notes.txt").write_text("ignored")
    ft = FakeTime()
    src = open_source(str(tmp_path), fps=4.0, realtime=True, clock=ft.clock, sleep=ft.sleep)
    assert isinstance(src, FolderSource)
    frames = list(src)
    assert [Path(f.meta["path"]).name for f in frames] == ["f000.png", "f001.png", "f003.png",
                                                           "f004.png"]
    assert [f.index for f in frames] == [0, 1, 3, 4]  # the bad file leaves a gap, like a drop
    assert [f.t for f in frames] == [0.0, 0.25, 0.75, 1.0]
    assert [int(f.image[0, 0, 0]) for f in frames] == [5, 45, 125, 165]
    assert src.skipped == [("f002.png", "not a decodable image")]
    assert src.ended and "1 unreadable skipped" in src.message
    assert sum(ft.sleeps) == pytest.approx(1.0)


def test_folder_without_images_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("x")
    with pytest.raises(ValueError, match="no images"):
        FolderSource(tmp_path)


# --------------------------------------------------------------------------- specs


@pytest.mark.parametrize("spec", ["", "webcam:x", "webcam:-1", "camera", "no/such/dir",
                                  "picamera:one"])
def test_open_source_bad_spec_names_it(spec: str) -> None:
    with pytest.raises(ValueError) as e:
        open_source(spec)
    assert repr(spec) in str(e.value)


def test_open_source_unreadable_video_names_it(tmp_path: Path) -> None:
    bad = tmp_path / "clip.avi"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(ValueError, match=r"clip\.avi"):
        open_source(str(bad))


def test_open_source_kinds(tmp_path: Path) -> None:
    cam = Camera()
    src = open_source("picamera", picamera2_class=picamera2_for(cam), size=(32, 24),
                      controls={"AnalogueGain": 2.0})
    assert isinstance(src, PiCameraSource) and src.size == (32, 24)
    assert src.controls().requested == {"AnalogueGain": 2.0}
    src.close()
    web = open_source("webcam:3")
    assert isinstance(web, CaptureSource) and web.live and web.target == 3
    assert web.state == "starting"  # nothing is opened until the first read
    web.close()
    from vision.demo import DemoSource

    demo = open_source("demo", size=(320, 240))
    assert isinstance(demo, DemoSource) and demo.spec.width == 320

"""The camera step against the picamera2 stand-in of test_sources (with auto loops that chase
a scene), a USB webcam behind cv2.VideoCapture's interface, and real demo, video and folder
sources.

Only hardware we lack is faked; the step and the sources run for real, fed frame by frame.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraStep
from calibration.result import StepResult
from tests.test_sources import Camera, FakeCapture, FakeTime, picamera2_for, write_video
from vision.demo import DemoSource
from vision.sources import CaptureSource, FolderSource, PiCameraSource, Source

FPS = 15.0

# --------------------------------------------------------------------------- the Pi camera


class Scene:
    """What the stand-in sensor looks at and how its auto loops chase it.

    Each frame auto exposure moves `rate` of the way to the exposure that makes the picture
    grey 120 under `light(n)`, and auto white balance to `aim`'s colour gains. With the loops
    off the picture follows the fixed exposure and gain, as a sensor's does.
    """

    def __init__(self, aim: tuple = (16_000, 1.5, (1.6, 2.1)),
                 start: tuple = (40_000, 4.0, (1.2, 2.6)), rate: float = 0.3,
                 light: Callable[[int], float] = lambda n: 1.0,
                 ignore: tuple[str, ...] = ()) -> None:
        self.aim, self.start, self.rate, self.light, self.ignore = aim, start, rate, light, ignore


def picamera2_with(camera: Camera, scene: Scene) -> type:
    base = picamera2_for(camera)

    class ScenePicamera2(base):  # type: ignore[misc, valid-type]
        def __init__(self, camera_num: int = 0) -> None:
            super().__init__(camera_num)
            exp, gain, cg = scene.start
            self.auto = [float(exp), float(gain), float(cg[0]), float(cg[1])]

        def set_controls(self, controls: dict) -> None:
            super().set_controls({k: v for k, v in controls.items() if k not in scene.ignore})

        @contextlib.contextmanager
        def captured_request(self, wait=None, flush=None):
            with super().captured_request(wait, flush) as req:
                light = scene.light(camera.frames)
                aim_exp, aim_gain, (aim_r, aim_b) = scene.aim
                targets = [aim_exp / light, aim_gain, aim_r, aim_b]
                self.auto = [a + scene.rate * (t - a) for a, t in zip(self.auto, targets,
                                                                       strict=True)]
                md = req._md
                if self._ctl["AeEnable"]:
                    md["ExposureTime"] = int(round(self.auto[0] / Camera.LINE_US)
                                             * Camera.LINE_US)
                    md["AnalogueGain"] = round(self.auto[1] * 16) / 16
                if self._ctl["AwbEnable"]:
                    md["ColourGains"] = (self.auto[2], self.auto[3])
                level = 120 * light * md["ExposureTime"] * md["AnalogueGain"] / (aim_exp
                                                                                  * aim_gain)
                req._arr = np.full_like(req._arr, min(255, round(level)))
                yield req

    return ScenePicamera2


def pi(scene: Scene, ft: FakeTime, **kw) -> tuple[PiCameraSource, Camera]:
    cam = Camera()
    src = PiCameraSource(picamera2_class=picamera2_with(cam, scene), clock=ft.clock,
                         sleep=ft.sleep, size=(64, 48), fps=FPS, **kw)
    return src, cam


def run(step: CameraStep, src: Source, ft: FakeTime | None = None,
        limit: int = 400) -> tuple[StepResult, list[str]]:
    """Feed frames as a frame loop would, stream time advancing 1/FPS per frame."""
    seen: list[str] = []
    for _ in range(limit):
        if ft is not None:
            ft.now += 1 / FPS
        f = src.read()
        if f is None:
            assert not src.ended, src.message
            continue
        res = step.feed(f)
        seen.append(step.progress)
        if res is not None:
            return res, seen
    raise AssertionError(f"no result after {limit} frames: {step.progress}")


def sent(cam: Camera) -> dict:
    """Everything the stand-in camera was asked, latest value per control."""
    out: dict = {}
    for c in cam.instances[-1].received:
        out.update(c)
    return out


def test_pi_settles_then_fixes_the_settled_values_and_confirms() -> None:
    ft = FakeTime()
    src, cam = pi(Scene(), ft)
    step = CameraStep(src)
    res, seen = run(step, src, ft)
    assert res.name == "camera" and res.passed, res.line()
    c = res.details["controls"]
    assert c["AeEnable"] is False and c["AwbEnable"] is False
    # the values the loops settled on, not the drifting ones of the first second
    assert c["ExposureTime"] == pytest.approx(16_000, rel=0.02)
    assert isinstance(c["ExposureTime"], int)
    assert c["AnalogueGain"] == pytest.approx(1.5, rel=0.02)
    assert c["ColourGains"] == pytest.approx([1.6, 2.1], rel=0.02)
    assert res.value == pytest.approx(c["ExposureTime"] / 1000)
    assert res.details["confirmed"] is True and res.details["unsupported"] == {}
    assert res.details["settled"] is True and res.details["settle_time_s"] >= 2.0
    assert res.details["lux"] == 400.0
    assert "fixed exposure 16.0 ms" in res.advice
    json.dumps(res.details)  # goes into the profile as it is
    asked = sent(cam)  # what really reached the camera
    assert asked["AeEnable"] is False and asked["AwbEnable"] is False
    assert asked["ColourGains"] == pytest.approx((1.6, 2.1), rel=0.02)
    assert src.controls().confirmed
    assert any(p.startswith("waiting for auto exposure to settle") for p in seen)
    assert any("waiting for the camera to confirm" in p for p in seen)
    assert step.progress.startswith("done:")
    assert ft.sleeps == []  # never waited inside the frame loop
    f = src.read()
    assert f is not None and step.feed(f) is res  # done is done


def test_pi_fixed_by_an_old_profile_is_put_back_on_auto_first() -> None:
    ft = FakeTime()
    old = {"ExposureTime": 5_000, "AnalogueGain": 1.0, "ColourGains": (1.0, 1.0)}
    src, cam = pi(Scene(), ft, controls=old)
    res, _ = run(CameraStep(src), src, ft)
    assert res.passed, res.line()
    assert {"AeEnable": True, "AwbEnable": True} in cam.instances[-1].received
    assert res.details["controls"]["ExposureTime"] == pytest.approx(16_000, rel=0.02)


def test_pi_camera_that_ignores_colour_gains_fails_naming_them() -> None:
    ft = FakeTime()
    src, _ = pi(Scene(ignore=("ColourGains",)), ft)
    step = CameraStep(src, confirm_s=1.0)
    res, _ = run(step, src, ft)
    assert not res.passed
    assert "ColourGains" in res.advice and "ExposureTime" not in res.advice
    assert res.details["confirmed"] is False
    assert set(res.details["mismatched"]) == {"ColourGains"}
    asked, got = res.details["mismatched"]["ColourGains"]
    assert asked == pytest.approx([1.6, 2.1], rel=0.02) and got == [2.0, 1.6]
    json.dumps(res.details)


def test_pi_under_flickering_light_never_settles_fixes_the_middle_and_says_so() -> None:
    ft = FakeTime()
    src, _ = pi(Scene(light=lambda n: 1.0 if n % 2 else 1.5, rate=0.5), ft)
    step = CameraStep(src, settle_s=1.0, timeout_s=4.0)
    res, _ = run(step, src, ft)
    assert not res.passed
    assert "never settled in 4 s" in res.advice and "flicker" in res.advice
    assert "still varied by" in res.advice  # names what moved most
    assert res.details["settled"] is False
    assert 4.0 <= res.details["settle_time_s"] < 4.0 + 2 / FPS
    # what it has is still fixed, between the two exposures the lamp's beats call for
    exp = res.details["controls"]["ExposureTime"]
    assert 16_000 / 1.5 < exp < 16_000
    assert res.details["confirmed"] is True


def test_pi_in_dim_light_warns_of_a_long_exposure() -> None:
    ft = FakeTime()
    src, _ = pi(Scene(aim=(50_000, 4.0, (1.6, 2.1))), ft)
    res, _ = run(CameraStep(src), src, ft)
    assert res.value == pytest.approx(50, rel=0.02)
    assert "too dark for a sharp picture" in res.advice and "more light" in res.advice
    assert res.details["confirmed"] is True


def test_step_settings_are_checked() -> None:
    src = DemoSource(size=(320, 240))
    with pytest.raises(ValueError, match="settle_s"):
        CameraStep(src, settle_s=5.0, timeout_s=2.0)


# --------------------------------------------------------------------------- no controls


def _demo(tmp_path: Path) -> Source:
    return DemoSource(size=(320, 240))


def _video(tmp_path: Path) -> Source:
    path = tmp_path / "tray.avi"
    write_video(path, 6, 10.0)
    return CaptureSource(path)


def _folder(tmp_path: Path) -> Source:
    for i in range(4):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), np.full((24, 32, 3), 30 * i, np.uint8))
    return FolderSource(tmp_path)


@pytest.mark.parametrize("make", [_demo, _video, _folder], ids=["demo", "video", "folder"])
def test_source_without_camera_controls_passes_and_uses_frames_as_they_come(
        make: Callable[[Path], Source], tmp_path: Path) -> None:
    src = make(tmp_path)
    step = CameraStep(src)
    res, seen = run(step, src)
    assert res.passed, res.line()
    assert res.advice == "this source has no camera controls: frames are used as they come"
    assert res.value == 0 and res.details["controls"] == {}
    assert res.details["confirmed"] is False
    assert set(res.details["unsupported"]) == {"AeEnable", "AwbEnable"}
    assert len(seen) == 2  # known as soon as the source has seen the request
    json.dumps(res.details)


# --------------------------------------------------------------------------- a USB webcam


class AutoWebcam(FakeCapture):
    """A V4L2 webcam: in auto it meters in to grey 110; fixed, its picture follows the
    exposure through a 2.2 gamma, and 30 ms (300 driver units of 100 us) gives grey 110.
    Like the base it refuses white balance; it may refuse exposure as well."""

    RIGHT = 300.0

    def __init__(self, cam: Camera, index: int, refuse_exposure: bool = False) -> None:
        super().__init__(cam, index)
        self.refuse_exposure = refuse_exposure

    def set(self, prop: int, value: float) -> bool:
        if self.refuse_exposure and prop == cv2.CAP_PROP_EXPOSURE:
            return False
        return super().set(prop, value)

    def level(self) -> float:
        if self.props[cv2.CAP_PROP_AUTO_EXPOSURE] != 1.0:
            return 110 - 50 * 0.7 ** self.cam.frames
        return 110 * (self.props[cv2.CAP_PROP_EXPOSURE] / self.RIGHT) ** (1 / 2.2)

    def read(self) -> tuple[bool, np.ndarray | None]:
        ok, img = super().read()
        if not ok or img is None:
            return ok, img
        return True, np.full_like(img, min(255, round(self.level())))


def webcam(ft: FakeTime, **kw) -> tuple[CaptureSource, list[AutoWebcam]]:
    cam, made = Camera(), []

    def factory(i: int) -> AutoWebcam:
        made.append(AutoWebcam(cam, i, **kw))
        return made[-1]

    return CaptureSource(0, capture_factory=factory, clock=ft.clock, sleep=ft.sleep), made


def test_webcam_gets_the_fixed_exposure_that_matches_its_auto_picture() -> None:
    ft = FakeTime()
    src, made = webcam(ft)
    step = CameraStep(src)
    res, seen = run(step, src, ft)
    assert res.passed, res.line()
    c = res.details["controls"]
    assert set(c) == {"AeEnable", "ExposureTime"} and c["AeEnable"] is False
    assert c["ExposureTime"] == pytest.approx(30_000, rel=0.15)
    assert res.value == pytest.approx(c["ExposureTime"] / 1000)
    assert res.details["confirmed"] is True
    assert "refused" in res.details["unsupported"]["AwbEnable"]
    assert any(p.startswith("finding a fixed exposure") for p in seen)
    dev = made[-1]
    assert dev.props[cv2.CAP_PROP_AUTO_EXPOSURE] == 1.0  # manual, so it stays put
    assert dev.level() == pytest.approx(110, rel=0.08)  # and looks as auto did
    assert ft.sleeps == []


def test_webcam_that_refuses_exposure_fails_and_is_left_on_auto() -> None:
    ft = FakeTime()
    src, made = webcam(ft, refuse_exposure=True)
    res, _ = run(CameraStep(src), src, ft)
    assert not res.passed
    assert "refused ExposureTime" in res.advice and "driver refused" in res.advice
    assert res.details["controls"] == {} and res.value == 0
    src.read()  # the source applies the request before its next frame
    assert made[-1].props[cv2.CAP_PROP_AUTO_EXPOSURE] == 3.0

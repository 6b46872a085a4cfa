"""The guided calibration end to end: the demo camera plays the people at the table.

The guide is fed real rendered frames and drives the real tray finder, light checks, reader
and colour learning; what it saves is read back by the loader and used by the reader.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from calibration.guide import (
    TRAY_TRIES,
    CalibrationError,
    Calibrator,
    latest_profile,
    profile_paths,
    scaled,
)
from vision import synth
from vision.demo import DemoSource
from vision.profile import ProfileError, load_profile
from vision.reader import DiceReader
from vision.sources import Frame

SIZE = (960, 720)


def run(cal: Calibrator, src: DemoSource, limit: int = 400) -> list[str]:
    """Feed frames until the guide is done (or asks for corners); the instructions seen."""
    seen: list[str] = []
    for _ in range(limit):
        src.show(cal.wanted)
        frame = src.read()
        assert frame is not None
        cal.feed(frame)
        text = cal.instruction.text
        if not seen or seen[-1] != text:
            seen.append(text)
        if cal.done or cal.step == "corners":
            break
    return seen


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Calibrator, DemoSource, Path]:
    src = DemoSource([], size=SIZE, seed=3)
    cal = Calibrator(["red", "blue", "white"], src)
    seen = run(cal, src)
    assert cal.step == "review", (cal.step, cal.progress, seen)
    # the people were asked for each set in turn, and to take each out before the next
    drops = [s for s in seen if s.startswith("Drop")]
    assert [d.split()[3] for d in drops] == ["red", "blue", "white"]
    assert any(s.startswith("Take the red") for s in seen)
    data = tmp_path_factory.mktemp("cal")
    return cal, src, data


def test_guide_learns_every_colour_in_order_and_finds_the_tray(finished) -> None:
    cal, src, _ = finished
    status = cal.status()
    assert [c["name"] for c in status["colours"]] == ["red", "blue", "white"]
    assert all(c["n"] >= 5 for c in status["colours"])
    names = [s["name"] for s in status["steps"]]
    assert names[:2] == ["camera", "tray"]
    assert {"brightness", "glare", "shadows", "uniformity", "flicker", "colours"} <= set(names)
    # the demo camera has no controls: said so, and not counted as a failure
    assert status["steps"][0]["passed"] and "no camera controls" in status["steps"][0]["advice"]
    truth = synth.tray_corners(src.spec)
    found = np.array(status["corners"])
    diag = math.hypot(*SIZE)
    # each rendered corner has a found one within 1% of the diagonal (order may differ)
    gaps = np.linalg.norm(found[None, :, :] - truth[:, None, :], axis=2).min(axis=1)
    assert gaps.max() < 0.01 * diag, gaps
    assert status["ready"], status["problems"]
    assert status["can_save"]
    json.dumps(status)  # plain data for the page


def test_saved_profile_is_the_latest_and_reads_the_table(finished) -> None:
    cal, src, data = finished
    path = cal.save(data)
    assert path.parent == data / "profiles" and path in profile_paths(data)
    profile, latest = latest_profile(data)
    assert latest == path and profile is not None
    assert [c.name for c in profile.colours] == ["red", "blue", "white"]
    assert [c.role for c in profile.colours] == ["player", "player", "neutral"]
    assert profile.image_size == SIZE and profile.tray_corners is not None
    assert profile.die_side_px and 20 < profile.die_side_px < 80
    # new dice, new places: the learned colours name them
    src.show("blue")
    reader = DiceReader(profile)
    for _ in range(12):
        frame = src.read()
    dice = reader.read(frame.image)
    assert len(dice) == 5 and {d.colour for d in dice} == {"blue"}
    src.stop_showing()


def test_reader_with_a_profile_ignores_dice_off_the_tray_floor(finished) -> None:
    cal, src, _ = finished
    src.show("red")
    for _ in range(12):
        frame = src.read()
    src.stop_showing()
    everywhere = DiceReader().read(frame.image)
    assert len(everywhere) == 5
    # a "tray" covering only the left half of the picture: dice on the right are not in play
    w, h = SIZE
    half = cal.profile()
    half = type(half)(**{**half.__dict__, "tray_corners": ((0.0, 0.0), (w / 2, 0.0),
                                                           (w / 2, float(h)), (0.0, float(h)))})
    kept = DiceReader(half).read(frame.image)
    left = [d for d in everywhere if (d.bbox[0] + d.bbox[2]) / 2 < w / 2 - 20]
    right = [d for d in everywhere if (d.bbox[0] + d.bbox[2]) / 2 > w / 2 + 40]
    assert len(kept) >= len(left) and len(kept) <= len(everywhere) - len(right)
    assert right or left  # the scene has dice on at least one side of the line


def test_profile_geometry_follows_the_frame_size(finished) -> None:
    cal, _, _ = finished
    p = cal.profile()
    half = scaled(p, (SIZE[0] // 2, SIZE[1] // 2))
    assert half.image_size == (SIZE[0] // 2, SIZE[1] // 2)
    assert half.tray_corners[2] == pytest.approx((p.tray_corners[2][0] / 2,
                                                  p.tray_corners[2][1] / 2))


def test_no_tray_asks_for_corners_and_checks_them() -> None:
    cal = Calibrator(["red"])
    blank = np.full((480, 640, 3), 128, np.uint8)
    for i in range(TRAY_TRIES):
        assert cal.step == "tray"
        cal.feed(Frame(i, i / 15, blank))
    assert cal.step == "corners"
    assert cal.instruction.kind == "corners"
    assert not cal.status()["steps"][0]["passed"]
    bad = cal.set_corners([[0, 0], [1, 1], [2, 2], [3, 3]])
    assert not bad.passed and cal.step == "corners"
    good = cal.set_corners([[60, 40], [580, 50], [570, 440], [70, 430]])
    assert good.passed and cal.step == "light"


def test_a_colour_nobody_has_is_skipped() -> None:
    src = DemoSource([], size=(640, 480), seed=5)
    cal = Calibrator(["red", "purple"], src)
    for _ in range(300):
        src.show(cal.wanted if cal.wanted != "purple" else None)
        cal.feed(src.read())
        if cal.wanted == "purple":
            cal.skip_colour()
        if cal.done:
            break
    status = cal.status()
    assert cal.step == "review"
    assert [c["name"] for c in status["colours"]] == ["red"] and status["skipped"] == ["purple"]


def test_bad_requests_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="at least one"):
        Calibrator([" ", ""])
    with pytest.raises(CalibrationError, match="twice"):
        Calibrator(["red", "Red"])
    cal = Calibrator(["red"])
    with pytest.raises(CalibrationError, match="no camera picture"):
        cal.set_corners([[0, 0], [1, 0], [1, 1], [0, 1]])
    with pytest.raises(CalibrationError, match="not finished"):
        cal.save(tmp_path)
    with pytest.raises(CalibrationError):
        cal.skip_colour()


def test_newest_profile_damaged_is_an_error_naming_it(tmp_path: Path, finished) -> None:
    cal, _, _ = finished
    assert latest_profile(tmp_path) == (None, None)
    good = cal.profile()
    folder = tmp_path / "profiles"
    folder.mkdir()
    good.save(folder / "profile-20260101-100000.json")
    assert latest_profile(tmp_path)[0] is not None
    (folder / "profile-20260102-100000.json").write_text('{"format": "vegas-table-pr')
    with pytest.raises(ProfileError, match=r"profile-20260102-100000\.json"):
        latest_profile(tmp_path)
    (folder / "profile-20260102-100000.json").write_text(
        json.dumps({**good.to_dict(), "version": 99}))
    with pytest.raises(ProfileError, match="version 99"):
        latest_profile(tmp_path)
    # files that are not profiles (an editor's backup) are not mistaken for the newest
    (folder / "profile-20260102-100000.json").unlink()
    (folder / "profile-20260109-100000.json~").write_text("junk")
    assert latest_profile(tmp_path)[1].name == "profile-20260101-100000.json"
    assert load_profile(folder / "profile-20260101-100000.json").colours == good.colours


def test_a_new_resolution_starts_the_guide_over() -> None:
    src = DemoSource([], size=(640, 480), seed=5)
    cal = Calibrator(["red"], src)
    for _ in range(60):
        src.show(cal.wanted)
        cal.feed(src.read())
        if cal.step == "colours":
            break
    assert cal.step == "colours" and cal.corners is not None
    other = np.zeros((600, 800, 3), np.uint8)
    cal.feed(Frame(99, 9.0, other))
    assert cal.step in ("camera", "tray") and cal.corners is None
    assert "resolution" in cal.progress


def test_a_dark_tray_floor_under_a_good_lamp_is_not_called_too_dark() -> None:
    src = DemoSource([], size=(640, 480), preset="normal", scene_seed=4, seed=1)
    assert src.spec.floor_style == "dark_print"
    cal = Calibrator(["red", "white"], src)
    for _ in range(300):
        src.show(cal.wanted)
        cal.feed(src.read())
        if cal.done:
            break
    assert cal.step == "review"
    bright = next(r for r in cal.light if r.name == "brightness")
    # the floor alone reads as too dark; the white dice show the lamp is good
    assert bright.details["floor_l"] < 25
    assert bright.passed and "floor is dark" in bright.advice

"""`vegas-table calibrate` as a person at a terminal runs it, with the demo camera playing the
table; and `serve` choosing the profile it reads with."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from scorekeeper import GameConfig
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from vision.profile import load_profile


def test_calibrate_demo_saves_a_profile_serve_will_use(cli, tmp_path: Path) -> None:
    r = cli("calibrate", "--source", "demo", "--data-dir", str(tmp_path),
            "--colours", "red,blue,white")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # progress for each step, the instructions, the colours and the verdict, in that order
    for words in ("[ok  ] camera", "[ok  ] tray", "[ok  ] brightness", "-> Drop all the red",
                  "-> Take the red dice out", "-> Drop all the white", "[ok  ] colours",
                  "Saved", "Reading will be reliable"):
        assert words in out, (words, out)
    assert out.index("[ok  ] tray") < out.index("-> Drop all the red") < out.index("Saved")
    saved = list((tmp_path / "profiles").glob("profile-*.json"))
    assert len(saved) == 1
    profile = load_profile(saved[0])
    assert [c.name for c in profile.colours] == ["red", "blue", "white"]


def test_calibrate_json_and_colours_from_the_unfinished_game(cli, tmp_path: Path) -> None:
    store = GameStore(tmp_path)
    store.create(GameConfig("classic", tuple(players(2)), {"neutral_dice": True}, 3))
    store.close()
    r = cli("calibrate", "--source", "demo", "--data-dir", str(tmp_path), "--no-save",
            "--json")
    assert r.returncode == 0, r.stderr
    status = json.loads(r.stdout.strip().splitlines()[-1])
    assert status["to_learn"] == ["red", "blue", "white"]
    assert [c["name"] for c in status["colours"]] == ["red", "blue", "white"]
    assert status["ready"] and status["saved"] is None
    assert not (tmp_path / "profiles").exists()


def test_calibrate_bad_arguments_are_one_line_errors(cli, tmp_path: Path) -> None:
    for args, words in ((["--colours", ","], "--colours"),
                        (["--colours", "red,red"], "twice"),
                        (["--corners", "1,2 3,4"], "--corners"),
                        (["--timeout", "0"], "--timeout"),
                        (["--source", "webcam:x"], "unknown source")):
        r = cli("calibrate", "--source", "demo", "--data-dir", str(tmp_path), *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert words in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr


def test_a_camera_that_gives_no_picture_is_reported_not_waited_for(cli, tmp_path: Path) -> None:
    r = cli("calibrate", "--source", "webcam:9", "--data-dir", str(tmp_path), "--colours", "red",
            "--timeout", "3")
    assert r.returncode == 2
    assert "no picture from webcam:9" in r.stderr and "/calibrate" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_no_tray_in_view_asks_for_corners_and_keeps_the_picture(cli, tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    rng = np.random.default_rng(1)
    for i in range(30):  # a camera looking at a plain wall: nothing like a tray
        img = np.full((480, 640, 3), 120, np.uint8) + rng.integers(0, 6, (480, 640, 3),
                                                                   dtype=np.uint8)
        cv2.imwrite(str(frames / f"f{i:03d}.png"), img)
    data = tmp_path / "data"
    r = cli("calibrate", "--source", str(frames), "--data-dir", str(data), "--colours", "red")
    assert r.returncode == 2
    assert "--corners" in r.stderr and "640x480" in r.stderr
    assert (data / "calibration-frame.jpg").exists()
    # with the corners given, the guide goes on, and says plainly that the frames ran out
    r = cli("calibrate", "--source", str(frames), "--data-dir", str(data), "--colours", "red",
            "--corners", "60,40 580,50 570,440 70,430")
    assert r.returncode == 2
    assert "did not finish (the source ended)" in r.stderr and "red" in r.stderr
    assert not (data / "profiles").exists()


def test_serve_runs_uncalibrated_when_the_newest_profile_is_damaged(tmp_path: Path,
                                                                      capsys) -> None:
    from web.cli import _serve_profile

    assert _serve_profile(None, tmp_path) == (None, None, None)
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "profile-20260101-120000.json").write_text("{ not json")
    profile, name, error = _serve_profile(None, tmp_path)
    assert profile is None and name is None
    assert "profile-20260101-120000.json" in error and "not valid JSON" in error
    assert "uncalibrated" in capsys.readouterr().err


def test_serve_with_a_damaged_profile_named_on_the_command_line_exits(cli, tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"format": "vegas-table-profile", "version": 7}))
    r = cli("serve", "--profile", str(bad), "--data-dir", str(tmp_path), "--port", "0",
            "--no-mdns")
    assert r.returncode == 2
    assert "version 7" in r.stderr and r.stderr.count("\n") == 1

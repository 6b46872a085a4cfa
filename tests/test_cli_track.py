"""`vegas-table track`: a recorded stream replayed through the tracker (DESIGN.md contract)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from vision.demo import DemoSource, Timing, Turn

TURNS = [
    Turn("red", ("red", "red", "red", "white"), (4, 2, 4, 6), 4),
    Turn("blue", ("blue", "blue", "blue"), (1, 5, 5), 5),
]


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoSource]:
    folder = tmp_path_factory.mktemp("frames")
    src = DemoSource(TURNS, seed=3, size=(960, 720), hand_p=0.0,
                     timing=Timing(lead_in=4, fall=5, settle=12, lift=3, rest=8, scoop=3,
                                   empty=8))
    for f in src:
        assert cv2.imwrite(str(folder / f"frame_{f.index:05d}.jpg"), f.image,
                           [cv2.IMWRITE_JPEG_QUALITY, 92])
    return folder, src


def test_track_json_follows_the_contract(cli, recording):
    folder, src = recording
    r = cli("track", str(folder), "--json")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds.count("roll") == 2 and kinds.count("place") == 2
    for e in events:
        assert {"frame", "t", "event"} <= set(e)
        assert e["t"] == pytest.approx(e["frame"] / 15, abs=0.01)
    rolls = [e for e in events if e["event"] == "roll"]
    for roll, turn in zip(rolls, TURNS, strict=True):
        assert sorted(d["value"] for d in roll["dice"]) == sorted(turn.values)
        for d in roll["dice"]:
            assert set(d) == {"value", "colour", "big", "bbox", "confidence", "doubts"}
    places = [e["value"] for e in events if e["event"] == "place"]
    assert places == [t.chosen for t in TURNS]
    # Each roll is reported after its dice settled, within the turn the demo rendered.
    for roll, truth in zip(rolls, src.turns, strict=True):
        first_settled = truth.settled[0].start
        assert first_settled <= roll["frame"] <= truth.settled[0].stop + 8


def test_track_plain_text_and_fps(cli, recording):
    folder, _ = recording
    r = cli("track", str(folder), "--fps", "30")
    assert r.returncode == 0, r.stderr
    assert "roll:" in r.stdout and "place:" in r.stdout


def test_track_bad_source_is_one_line(cli, tmp_path: Path):
    r = cli("track", str(tmp_path / "nope"))
    assert r.returncode == 2 and "nope" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    (tmp_path / "empty").mkdir()
    r = cli("track", str(tmp_path / "empty"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = cli("track", str(tmp_path), "--fps", "0")
    assert r.returncode == 2 and "fps" in r.stderr


def _events(cli, folder: Path, *extra: str) -> list[dict]:
    r = cli("track", str(folder), "--json", *extra)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def _turns(events: list[dict]) -> list[tuple[str, list[int] | int]]:
    return [(e["event"], sorted(d["value"] for d in e["dice"]) if e["event"] == "roll"
             else e["value"]) for e in events if e["event"] in ("roll", "place")]


def test_reading_only_when_the_tray_comes_to_rest_loses_no_turn(cli, recording):
    """The motion gate (the default) reads a fraction of the frames and follows the same
    turns, as soon, as reading every frame does."""
    folder, _ = recording
    gated, every = _events(cli, folder), _events(cli, folder, "--every-frame")
    assert _turns(gated) == _turns(every) == [
        ("roll", sorted(TURNS[0].values)), ("place", 4),
        ("roll", sorted(TURNS[1].values)), ("place", 5)]
    rolls = [e["t"] for e in gated if e["event"] == "roll"]
    assert rolls == pytest.approx([e["t"] for e in every if e["event"] == "roll"], abs=0.15)


def test_a_slower_machine_sees_the_rolls_later_and_still_follows_them(cli, recording):
    folder, _ = recording
    plain = _events(cli, folder)
    slow = _events(cli, folder, "--cpu-factor", "10")
    assert _turns(slow) == _turns(plain)
    late = [s["t"] - p["t"] for s, p in zip(slow, plain, strict=True) if s["event"] == "roll"]
    # A read of a 960x720 frame takes any machine more than a 150th of a second, so ten times
    # that outlasts a frame at 15 fps: frames are dropped and the rolls come later.
    assert all(d >= 0 for d in late) and max(late) > 0


def test_cpu_factor_must_be_positive(cli, recording):
    folder, _ = recording
    r = cli("track", str(folder), "--cpu-factor", "0")
    assert r.returncode == 2 and "--cpu-factor" in r.stderr and "Traceback" not in r.stderr

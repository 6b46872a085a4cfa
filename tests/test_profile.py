"""The calibration profile file: round trip, and clear refusals of bad files."""

from __future__ import annotations

import json

import pytest

from vision.profile import ColourRef, Profile, ProfileError, load_profile

GOOD = Profile(
    colours=(ColourRef("red", (45.0, 60.0, 40.0), 5.0), ColourRef("white", (95.0, 0.0, 2.0), 3.0,
                                                                  "neutral")),
    white_balance=(1.1, 1.0, 0.9),
    tray_corners=((100.0, 80.0), (1180.0, 80.0), (1180.0, 880.0), (100.0, 880.0)),
    image_size=(1280, 960),
    die_side_px=62.0,
    camera={"exposure_us": 8000},
    created="2026-11-22T08:00:00Z",
)


def test_round_trip(tmp_path):
    path = tmp_path / "profile.json"
    GOOD.save(path)
    assert load_profile(path) == GOOD
    assert not (tmp_path / "profile.json.tmp").exists()


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(version=2), "version 2 is not supported"),
    (lambda d: d.update(format="other"), "not a Vegas Table profile"),
    (lambda d: d["colours"][0].update(lab=[45, 60]), r"colours\[0\].lab must be \[L, a, b\]"),
    (lambda d: d["colours"][0].update(lab=[145, 0, 0]), r"colours\[0\].lab\[0\] must be between"),
    (lambda d: d["colours"][1].update(name="red"), "appears twice"),
    (lambda d: d["colours"][1].update(role="judge"), "role must be player or neutral"),
    (lambda d: d.update(white_balance=[1, 1]), "white_balance must be three gains"),
    (lambda d: d.update(tray_corners=[[0, 0]] * 3), "tray_corners must be four"),
    (lambda d: d.update(image_size=None), "tray_corners need image_size"),
    (lambda d: d.update(die_side_px="big"), "die_side_px must be a number"),
])
def test_bad_fields_are_named(tmp_path, mutate, message):
    data = GOOD.to_dict()
    mutate(data)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ProfileError, match=message) as info:
        load_profile(path)
    assert str(path) in str(info.value)


def test_damaged_and_missing_files(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"format": "vegas-table-profile", "vers')
    with pytest.raises(ProfileError, match="not valid JSON"):
        load_profile(path)
    with pytest.raises(ProfileError, match="cannot read the profile"):
        load_profile(tmp_path / "missing.json")

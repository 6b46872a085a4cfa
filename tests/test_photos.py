"""Roll photos: a name is written once, so a phone may cache it for good, and the history
shows the photo of the roll that went on record."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from web.photos import PHOTO_WIDTHS, Thumbnails, photo_bytes, photo_for, photo_width, save_photo


def _image(level: int) -> np.ndarray:
    return np.full((60, 80, 3), level, np.uint8)


def test_a_second_roll_at_the_same_count_gets_a_name_of_its_own(tmp_path: Path):
    first = save_photo(tmp_path / "g", 12, _image(40))  # a roll that was dismissed
    second = save_photo(tmp_path / "g", 12, _image(200))  # the one that went on record
    assert first == "event-00012.jpg" and second != first
    photos = {p.name for p in (tmp_path / "g").iterdir()}
    assert photo_for(photos, 12) == second
    assert photo_for(photos, 11) is None
    back = cv2.imdecode(np.frombuffer((tmp_path / "g" / first).read_bytes(), np.uint8), 1)
    assert abs(int(back.mean()) - 40) < 3  # the first photo was not overwritten
    assert not list((tmp_path / "g").glob("*.tmp"))


def test_photos_outside_the_folder_are_refused(tmp_path: Path):
    save_photo(tmp_path / "photos" / "g", 1, _image(9))
    assert photo_bytes(tmp_path, "g/event-00001.jpg")
    for name in ("../games.sqlite3", "g/../../x", "g/\x00", "g/nope.jpg"):
        assert photo_bytes(tmp_path, name) is None


def test_a_width_is_one_of_the_sizes_sent(tmp_path: Path):
    assert photo_width(None) is None
    assert photo_width("250") == 240 and photo_width(str(PHOTO_WIDTHS[-1])) == PHOTO_WIDTHS[-1]
    for bad in ("0", "-5", "abc", "99999"):
        with pytest.raises(ValueError, match="w: a width"):
            photo_width(bad)
    path = tmp_path / save_photo(tmp_path, 3, np.random.default_rng(0).integers(
        0, 255, (600, 800, 3), np.uint8))
    small = Thumbnails().get(path, 160)
    assert small is not None and cv2.imdecode(np.frombuffer(small, np.uint8), 1).shape[1] == 160

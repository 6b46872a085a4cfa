"""bench/cameras.py: its camera probes move the labels with the picture."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.benches import load_bench
from tests.test_reader import READER
from vision.evaluate import match
from vision.synth import render_scene

CAMERAS = load_bench("cameras")


@pytest.mark.parametrize("probe", ["closer-2x", "turned", "half-size", "third-size", "third-jpeg",
                                   "tilt-x-20", "tilt-y-30"])
def test_a_probe_s_labels_sit_on_its_dice(probe: str):
    """The reader's boxes on the transformed frame meet the transformed labels, and the
    dice the new frame cuts are the ones it no longer labels."""
    img, entry = render_scene(38, "normal", 1280, 960)
    out, kept, cut = CAMERAS.PROBES[probe](img, entry["dice"])
    assert len(kept) >= 3 and len(kept) + len(cut) <= len(entry["dice"])
    reads = [r.to_dict() for r in READER.read(out)]
    pairs, _, _ = match(reads, kept)
    assert len(pairs) >= 0.9 * len(kept)


def test_a_read_on_a_die_the_frame_cuts_is_not_counted():
    labels = [{"value": 3, "bbox": [100, 100, 150, 150]}]
    cut = [[0, 200, 30, 250]]
    preds = [{"value": 3, "bbox": [101, 99, 151, 150], "confidence": 0.99},
             {"value": 1, "bbox": [5, 210, 20, 225], "confidence": 0.95},  # a pip of the cut die
             {"value": 2, "bbox": [400, 400, 450, 450], "confidence": 0.95}]  # an invented die
    n, counted, matched, right, wrong = CAMERAS.score(preds, labels, cut)
    assert (n, counted, matched, right, wrong) == (1, 2, 1, 1, 1)


def _hue_degrees(img: np.ndarray, box: list[float]) -> float:
    """The circular mean hue of the middle of a box, in degrees."""
    x0, y0, x1, y1 = (round(v) for v in box)
    dx, dy = (x1 - x0) // 4, (y1 - y0) // 4
    hsv = cv2.cvtColor(img[y0 + dy:y1 - dy, x0 + dx:x1 - dx], cv2.COLOR_BGR2HSV_FULL)
    angle = hsv[..., 0].astype(np.float64) * 2 * np.pi / 256
    return float(np.degrees(np.arctan2(np.sin(angle).mean(), np.cos(angle).mean())) % 360)


@pytest.mark.parametrize(("probe", "turn"), [("paint-hue60", 60), ("paint-hue180", 180)])
def test_a_paint_probe_turns_the_dice_s_hue_and_keeps_their_labels(probe: str, turn: int):
    img, entry = render_scene(38, "normal", 1280, 960)
    red = next(d for d in entry["dice"] if d["colour"] == "red")
    out, kept, cut = CAMERAS.PROBES[probe](img, entry["dice"])
    assert kept == entry["dice"] and cut == [] and out.shape == img.shape
    moved = (_hue_degrees(out, red["bbox"]) - _hue_degrees(img, red["bbox"])) % 360
    assert abs(moved - turn) < 10


def test_paints_swapped_turn_a_red_die_blue():
    img, entry = render_scene(38, "normal", 1280, 960)
    red = next(d for d in entry["dice"] if d["colour"] == "red")
    out, kept, _ = CAMERAS.PROBES["paint-swap"](img, entry["dice"])
    x0, y0, x1, y1 = (round(v) for v in red["bbox"])
    before = img[y0:y1, x0:x1].reshape(-1, 3).mean(axis=0)
    after = out[y0:y1, x0:x1].reshape(-1, 3).mean(axis=0)
    assert before[2] > 1.5 * before[0] and after[0] > 1.5 * after[2] and kept == entry["dice"]

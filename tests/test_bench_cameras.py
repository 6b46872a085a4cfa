"""bench/cameras.py: its camera probes move the labels with the picture."""

from __future__ import annotations

import pytest

from tests.benches import load_bench
from tests.test_reader import READER
from vision.evaluate import match
from vision.synth import render_scene

CAMERAS = load_bench("cameras")


@pytest.mark.parametrize("probe", ["closer-2x", "turned", "half-size", "tilt-x-20",
                                   "tilt-y-30"])
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

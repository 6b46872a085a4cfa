"""The colour net's crop contract and its guards (the reader's use of it: test_reader.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from vision.colournet import CHANNELS, COLOURS, DEFAULT_MODEL, SIZE, ColourNet, colour_crop
from vision.reader import PIP_WHITE


def test_the_crop_maps_the_die_s_reference_white_to_pip_white_whatever_the_lamp():
    # A warm lamp: the white pips come out (150, 200, 240) in BGR. The reader's gain for the
    # die maps exactly that to PIP_WHITE, so the same paint gives the same crop under any lamp.
    white = np.array([150.0, 200.0, 240.0])
    img = np.zeros((100, 100, 3), np.uint8)
    img[:] = white.astype(np.uint8)
    lab = (62.0, 40.0, -20.0)
    crop = colour_crop(img, (40, 40, 60, 60), PIP_WHITE / white, lab)
    assert crop.shape == (CHANNELS, SIZE, SIZE) and crop.dtype == np.float32
    assert np.allclose(crop[:3], PIP_WHITE / 255.0 - 0.5, atol=1e-4)
    assert np.allclose(crop[3], 0.62) and np.allclose(crop[4], 40 / 128)
    assert np.allclose(crop[5], -20 / 128)


def test_the_crop_keeps_black_apart_from_white():
    # No per-crop normalisation: a black die and a white one must not look alike.
    gain = np.full(3, PIP_WHITE / 235.0)
    dark = np.full((60, 60, 3), 20, np.uint8)
    light = np.full((60, 60, 3), 220, np.uint8)
    a = colour_crop(dark, (20, 20, 40, 40), gain, (10, 0, 0))[:3]
    b = colour_crop(light, (20, 20, 40, 40), gain, (90, 0, 0))[:3]
    assert b.mean() - a.mean() > 0.6


def test_the_shipped_net_names_the_nine_colours_and_refuses_wrong_crops():
    net = ColourNet()
    out = net.predict(np.zeros((2, CHANNELS, SIZE, SIZE), np.float32))
    assert out.shape == (2, len(COLOURS)) and np.allclose(out.sum(axis=1), 1.0, atol=1e-5)
    assert net.predict(np.zeros((0, CHANNELS, SIZE, SIZE), np.float32)).shape == (0, 9)
    with pytest.raises(ValueError, match=r"crops must be \(N, 6, 24, 24\)"):
        net.predict(np.zeros((1, 3, SIZE, SIZE), np.float32))


def test_a_net_trained_for_other_colours_is_refused(tmp_path: Path):
    model = tmp_path / "colournet.onnx"
    shutil.copy(DEFAULT_MODEL, model)
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta["colours"] = ["red", "blue"]
    model.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="trained for colours"):
        ColourNet(model)

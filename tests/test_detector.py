"""The learned die detector: input preparation, output decoding, and the shipped model."""

from __future__ import annotations

import numpy as np
import pytest

from vision.detector import (
    INPUT_LONG,
    MULTIPLE,
    SIZE_UNIT,
    STRIDE,
    Detector,
    decode,
    prepare,
    space_to_depth,
)
from vision.evaluate import iou, match


def test_prepare_scales_long_side_and_pads_to_the_multiple():
    frame = np.random.default_rng(0).integers(0, 255, (300, 1000, 3), dtype=np.uint8)
    x, scale = prepare(frame)
    assert scale == pytest.approx(INPUT_LONG / 1000)
    assert x.shape[:2] == (1, 3)
    assert x.shape[3] == INPUT_LONG
    assert x.shape[2] % MULTIPLE == 0 and x.shape[2] >= round(300 * scale)
    assert x.dtype == np.float32


def test_prepare_takes_the_lamp_out():
    """A frame under a brighter, warmer lamp gives nearly the same input."""
    rng = np.random.default_rng(1)
    frame = rng.integers(40, 160, (240, 320, 3), dtype=np.uint8)
    warm = np.clip(frame.astype(np.float32) * np.array([0.8, 1.1, 1.5]), 0, 255).astype(np.uint8)
    a, _ = prepare(frame)
    b, _ = prepare(warm)
    assert np.abs(a - b).mean() < 0.1
    assert np.abs(a).mean() > 0.5  # and the input is not flattened to nothing


def test_space_to_depth_puts_each_2x2_block_side_by_side():
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    y = space_to_depth(x)
    assert y.shape == (2, 12, 2, 3)
    for n, c, i, j, a, b in [(0, 0, 0, 0, 0, 0), (1, 2, 1, 2, 1, 1), (0, 1, 1, 0, 0, 1),
                             (1, 0, 0, 2, 1, 0)]:
        assert y[n, c * 4 + a * 2 + b, i, j] == x[n, c, 2 * i + a, 2 * j + b]


@pytest.mark.parametrize(("kernel", "pad"), [(3, 1), (2, 0), (5, 2)])
def test_a_stride_2_stem_rewritten_over_blocks_answers_as_before(kernel: int, pad: int):
    """A small net (stride-2 stem, ReLU, 1x1 conv) and the same net rewritten for block
    input give the same output through cv2.dnn, on inputs of several sizes."""
    import cv2
    from onnx import TensorProto, helper, numpy_helper

    from training.train_detector import space_to_depth_stem

    rng = np.random.default_rng(kernel)
    w1 = rng.normal(size=(8, 3, kernel, kernel)).astype(np.float32)
    w2 = rng.normal(size=(5, 8, 1, 1)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], kernel_shape=[kernel, kernel],
                          strides=[2, 2], pads=[pad] * 4),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Conv", ["r", "w2"], ["y"], kernel_shape=[1, 1])],
        "stem", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, "oh", "ow"])],
        [numpy_helper.from_array(w1, "w1"),
         numpy_helper.from_array(rng.normal(size=8).astype(np.float32), "b1"),
         numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    plain = cv2.dnn.readNetFromONNX(np.frombuffer(model.SerializeToString(), np.uint8))
    blocks = cv2.dnn.readNetFromONNX(
        np.frombuffer(space_to_depth_stem(model).SerializeToString(), np.uint8))
    for h, w in [(16, 16), (32, 48), (96, 128)]:
        x = rng.normal(size=(1, 3, h, w)).astype(np.float32)
        plain.setInput(x)
        blocks.setInput(space_to_depth(x))
        want = np.asarray(plain.forward())
        got = np.asarray(blocks.forward())
        assert got.shape == want.shape
        assert np.abs(got - want).max() < 1e-4 * np.abs(want).max()


def test_a_stem_that_is_not_a_stride_2_conv_is_refused():
    from onnx import TensorProto, helper, numpy_helper

    from training.train_detector import space_to_depth_stem

    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1] * 4)],
        "flat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")])
    with pytest.raises(ValueError, match="stride-2"):
        space_to_depth_stem(helper.make_model(graph))


def _output(h: int, w: int) -> np.ndarray:
    out = np.zeros((1, 5, h, w), np.float32)
    out[0, 0] = -8.0  # "no die" everywhere
    return out


def test_decode_turns_a_peak_into_a_box_in_frame_pixels():
    out = _output(96, 128)
    # A die centred at input (41.5 * 4, 20.25 * 4), 32 x 24 input px.
    out[0, 0, 20, 41] = 4.0
    out[0, 0, 20, 40] = 2.0  # a weaker neighbour is not a second die
    out[0, 1:, 20, 41] = (np.log(32 / SIZE_UNIT), np.log(24 / SIZE_UNIT), 0.5, 0.25)
    scale = 0.4  # the frame was 2.5x the input
    [d] = decode(out, scale, (960, 1280, 3), threshold=0.5)
    cx, cy = 41.5 * STRIDE / scale, 20.25 * STRIDE / scale
    want = (cx - 40, cy - 30, cx + 40, cy + 30)
    assert d.bbox == pytest.approx(want, abs=1e-3)
    assert d.score == pytest.approx(1 / (1 + np.exp(-4.0)))
    assert d.margin == pytest.approx(min(want[0], want[1], 1280 - want[2], 960 - want[3]))


def test_decode_threshold_and_clipping():
    out = _output(24, 32)
    out[0, 0, 1, 1] = 0.0  # score 0.5
    out[0, 1:3, 1, 1] = np.log(40 / SIZE_UNIT)
    assert decode(out, 1.0, (96, 128, 3), threshold=0.6) == []
    [d] = decode(out, 1.0, (96, 128, 3), threshold=0.4)
    assert d.bbox[0] == 0.0 and d.bbox[1] == 0.0  # clipped to the frame
    # ...but the margin remembers how far past the edge the die was predicted to reach:
    # centre (1 + 0.0) * 4 = 4 px, half side 20 px.
    assert d.margin == pytest.approx(4.0 - 20.0)


def test_shipped_model_finds_rendered_dice():
    """On fresh synthetic scenes (seeds outside training) the detector finds the dice."""
    from vision.synth import render_scene

    det = Detector()
    found = total = extra = 0
    for seed in (900_001, 900_002, 900_003, 900_004):
        img, entry = render_scene(seed, "normal", 1280, 960)
        labels = [d for d in entry["dice"] if not d["cut"]]
        preds = [{"bbox": list(d.bbox)} for d in det.detect(img, 0.3)]
        pairs, ext, _ = match(preds, labels, 0.5)
        found += len(pairs)
        total += len(labels)
        extra += sum(1 for p in ext
                     if all(iou(preds[p]["bbox"], d["bbox"]) < 0.3 for d in entry["dice"]))
    assert total > 10
    assert found / total >= 0.9
    assert extra <= 2

"""The shipped die-value net: it loads through cv2.dnn, its outputs are probabilities, and it
really reads pips.

The dice here are drawn with OpenCV (a rounded square with the standard pip layout, turned to
any angle, light pips on dark plastic and dark on light), never seen in training, so a net that
merely loads but reads nothing fails `test_reads_drawn_dice`.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.valuenet import (
    CLASSES,
    CROP_SIZE,
    DEFAULT_MODEL,
    GREY_MODEL,
    NOT_A_DIE,
    ValueNet,
    crop_for,
    is_training_image,
    towards_centre,
)

# Pip centres on a unit face, x and y in [-1, 1].
PIPS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}


def draw_die(
    value: int, angle_deg: float, die_bgr: tuple[int, int, int], pip_bgr: tuple[int, int, int],
    table_bgr: tuple[int, int, int] = (150, 160, 170), side: int = 60, canvas: int = 160,
) -> tuple[np.ndarray, list[float]]:
    """A die seen from straight above on a plain table, and its axis-aligned box."""
    s = 4  # draw big, shrink: smooth edges like a camera's
    big = np.full((canvas * s, canvas * s, 3), table_bgr, np.uint8)
    c = canvas * s / 2
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    half = side * s / 2
    r = 0.18 * half  # rounded corners
    outline = []
    for cx, cy, start in ((1, 1, 0), (-1, 1, 90), (-1, -1, 180), (1, -1, 270)):
        for k in range(8):
            t = math.radians(start + k * 90 / 7)
            outline.append(((half - r) * cx + r * math.cos(t), (half - r) * cy + r * math.sin(t)))
    pts = np.array(outline) @ rot.T + c
    cv2.fillPoly(big, [np.round(pts).astype(np.int32)], die_bgr, cv2.LINE_AA)
    for px, py in PIPS[value]:
        x, y = rot @ np.array([px * 0.5 * half, py * 0.5 * half]) + c
        cv2.circle(big, (round(x), round(y)), round(0.2 * half), pip_bgr, -1, cv2.LINE_AA)
    img = cv2.resize(big, (canvas, canvas), interpolation=cv2.INTER_AREA)
    xs, ys = pts[:, 0] / s, pts[:, 1] / s
    return img, [float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())]


@pytest.fixture(scope="module")
def net() -> ValueNet:
    return ValueNet()


def test_model_is_shipped_small_and_loads(net: ValueNet) -> None:
    assert DEFAULT_MODEL.stat().st_size < 1_000_000
    assert net.temperature > 0
    assert net.meta["classes"] == list(CLASSES)


def test_predict_gives_probabilities(net: ValueNet) -> None:
    one = (CROP_SIZE, CROP_SIZE) if net.channels == 1 else (net.channels, CROP_SIZE, CROP_SIZE)
    crops = np.random.default_rng(0).normal(size=(5, *one)).astype(np.float32)
    p = net.predict(crops)
    assert p.shape == (5, len(CLASSES))
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert net.predict(np.zeros((0, *one), np.float32)).shape == (0, 8)
    with pytest.raises(ValueError, match="crops must be"):
        net.predict(np.zeros((2, 5, 7), np.float32))


STYLES = [
    ((40, 40, 200), (245, 245, 245)),  # red die, white pips
    ((30, 30, 30), (240, 240, 240)),  # black die, white pips
    ((235, 235, 235), (20, 20, 20)),  # white die, black pips
    ((40, 210, 230), (25, 25, 25)),  # yellow die, black pips
]


def test_the_shipped_nets_read_colour_and_grey_crops(net: ValueNet) -> None:
    assert [(m.channels, m.orient) for m in net.members] == [
        (3, True), (3, True), (1, False), (3, True)]
    img, box = draw_die(4, 20, (45, 45, 50), (40, 40, 190))
    crop = net.crop(img, box)
    assert crop.shape == (10, CROP_SIZE, CROP_SIZE)
    turned = crop_for(img, box, 3, towards_centre(img.shape, box))
    parts = (crop[:3], crop[3:6], crop[6], crop[7:])
    for part, want in zip(parts, (turned, turned, crop_for(img, box), turned), strict=True):
        np.testing.assert_allclose(part, want)
    # Their answer is the mean of the members' calibrated answers.
    together = net.predict(crop[None])[0]
    alone = [ValueNet(m.path).predict(c[None])[0]
             for m, c in zip(net.members, parts, strict=True)]
    np.testing.assert_allclose(together, sum(alone) / len(alone), atol=1e-6)
    assert [a.argmax() for a in alone] == [4, 4, 4, 4] and together.argmax() == 4


def test_red_pips_on_a_smoky_black_die_are_read(net: ValueNet) -> None:
    # byler's commonest die, made harder: in grey these red pips are as dark as the body (the
    # grey-crop net read 3 of these 18; on byler's held-out photos 90% against 97% now).
    die, pip = (58, 58, 62), (20, 20, 150)
    got = []
    for value in range(1, 7):
        for angle in (12, 33, 61):  # not square to the frame: see test_reads_drawn_dice
            img, box = draw_die(value, angle, die, pip)
            got.append((value, net.read(img, [box])[0]))
    right = [v for v, (r, _, _) in got if r == v]
    assert len(right) >= 15, got
    assert not [g for g in got if g[1][0] not in (None, g[0]) and g[1][1] >= 0.9], got


def test_reads_drawn_dice(net: ValueNet) -> None:
    cases = [
        (value, angle, die, pip)
        for value in range(1, 7)
        for angle in (0, 17, 38, 71)
        for die, pip in STYLES
    ]
    images, boxes, truth = [], [], []
    for value, angle, die, pip in cases:
        img, box = draw_die(value, angle, die, pip)
        images.append(img)
        boxes.append(box)
        truth.append(value)
    reads = [net.read(img, [box])[0] for img, box in zip(images, boxes, strict=True)]
    right = [r[0] == t for r, t in zip(reads, truth, strict=True)]
    sure_right = [r[0] == t and r[1] >= 0.5 for r, t in zip(reads, truth, strict=True)]
    sure_wrong = [r[0] not in (None, t) and r[1] >= 0.9 for r, t in zip(reads, truth, strict=True)]
    assert sum(right) >= 0.85 * len(cases), [(t, r) for t, r in zip(truth, reads, strict=True)]
    assert sum(sure_right) >= 0.75 * len(cases)
    assert sum(sure_wrong) <= 1
    # Nearly every one of them is taken for a die (a drawn die is a crude one: the colour net,
    # which learnt from rendered and photographed dice, doubts 5 of these 96 flat squares
    # with no bevel lying square to the frame; rendered dice lying so are read).
    assert sum(r[2] > 0.5 for r in reads) >= 0.9 * len(reads)


def test_each_value_is_read(net: ValueNet) -> None:
    # Not one value the net never gets: a net stuck on a few classes could pass the total above.
    for value in range(1, 7):
        got = []
        for angle in (5, 50):
            for die, pip in STYLES:
                img, box = draw_die(value, angle, die, pip)
                got.append(net.read(img, [box])[0][0])
        assert got.count(value) >= 6, (value, got)


def test_plain_background_is_not_a_die(net: ValueNet) -> None:
    rng = np.random.default_rng(1)
    flat = np.full((120, 120, 3), (120, 140, 150), np.uint8)
    grain = np.clip(flat + rng.normal(0, 6, flat.shape), 0, 255).astype(np.uint8)
    edge = flat.copy()
    edge[:, 60:] = (60, 70, 80)  # a wall edge
    for img in (flat, grain, edge):
        value, conf, die_p = net.read(img, [[35, 35, 85, 85]])[0]
        assert value is None or conf < 0.5
        assert die_p < 0.5 or conf < 0.5


def test_read_returns_none_with_the_class_probability(net: ValueNet) -> None:
    img = np.full((100, 100, 3), 128, np.uint8)
    value, conf, die_p = net.read(img, [[30, 30, 70, 70]])[0]
    p = net.predict(net.crop(img, [30, 30, 70, 70])[None])[0]
    if value is None:
        assert conf == pytest.approx(float(p.max()), abs=1e-6)
    assert die_p == pytest.approx(1.0 - float(p[NOT_A_DIE]), abs=1e-6)
    assert net.read(img, []) == []


def test_colour_crop_keeps_what_grey_loses() -> None:
    img, box = draw_die(5, 20, (58, 58, 62), (20, 20, 150), side=90, canvas=200)
    c = crop_for(img, box, channels=3)
    assert c.shape == (3, CROP_SIZE, CROP_SIZE) and c.dtype == np.float32
    assert abs(float(c.mean())) < 1e-4 and float(c.std()) == pytest.approx(1.0, abs=0.01)
    # The pips stand out in the red channel far more than the grey crop shows them.
    g = crop_for(img, box)
    mid = slice(CROP_SIZE // 4, 3 * CROP_SIZE // 4)
    assert np.ptp(c[2][mid, mid]) > 1.5 * np.ptp(g[mid, mid]) * float(c.std() / g.std())


def test_turned_crop_puts_the_frame_centre_at_the_top() -> None:
    # A mark on the side of the die that faces the frame's centre, wherever the die lies,
    # lands at the top of the turned crop: where a flat die's visible side face always is.
    for cx, cy in ((430, 110), (120, 300), (500, 330), (90, 60)):
        img = np.zeros((400, 600, 3), np.uint8)
        box = [cx - 30, cy - 30, cx + 30, cy + 30]
        up = towards_centre(img.shape, box)
        a = math.radians(up)
        cv2.circle(img, (round(cx + 20 * math.cos(a)), round(cy + 20 * math.sin(a))), 8,
                   (255, 255, 255), -1)
        c = crop_for(img, box, 1, up)
        ys, xs = np.nonzero(c > c.mean() + c.std())
        assert ys.mean() < CROP_SIZE * 0.3 and abs(xs.mean() - CROP_SIZE / 2) < 3, (cx, cy)
        assert c.shape == (CROP_SIZE, CROP_SIZE) and np.isfinite(c).all()


def test_a_model_trained_on_turned_crops_is_given_turned_crops(tmp_path: Path) -> None:
    shutil.copy(GREY_MODEL, tmp_path / "turned.onnx")
    meta = json.loads(GREY_MODEL.with_suffix(".json").read_text())
    (tmp_path / "turned.json").write_text(json.dumps({**meta, "orient": "centre"}))
    net = ValueNet(tmp_path / "turned.onnx")
    img, box = draw_die(3, 10, (40, 40, 200), (245, 245, 245), canvas=300)
    box = [box[0] + 100, box[1], box[2] + 100, box[3]]
    img = np.roll(img, 100, axis=1)
    np.testing.assert_allclose(net.crop(img, box),
                               crop_for(img, box, 1, towards_centre(img.shape, box)))
    assert not np.allclose(net.crop(img, box), crop_for(img, box, 1))


def test_a_finer_crop_is_the_same_view_at_more_pixels() -> None:
    img, box = draw_die(6, 25, (30, 30, 30), (240, 240, 240), side=120, canvas=260)
    for up in (None, 30.0):
        fine = crop_for(img, box, 3, up, size=48)
        coarse = crop_for(img, box, 3, up)
        assert fine.shape == (3, 48, 48) and coarse.shape == (3, CROP_SIZE, CROP_SIZE)
        assert abs(float(fine.mean())) < 1e-4 and float(fine.std()) == pytest.approx(1, abs=0.01)
        shrunk = cv2.resize(fine.transpose(1, 2, 0), (CROP_SIZE, CROP_SIZE),
                            interpolation=cv2.INTER_AREA).transpose(2, 0, 1)
        assert np.corrcoef(shrunk.ravel(), coarse.ravel())[0, 1] > 0.95


def test_a_net_of_finer_crops_gets_them_and_cannot_be_averaged_with_coarser(
        tmp_path: Path) -> None:
    shutil.copy(DEFAULT_MODEL, tmp_path / "fine.onnx")
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    (tmp_path / "fine.json").write_text(json.dumps({**meta, "crop_size": 48}))
    img, box = draw_die(2, 0, (40, 40, 200), (245, 245, 245), canvas=300)
    assert ValueNet(tmp_path / "fine.onnx").crop(img, box).shape == (3, 48, 48)
    with pytest.raises(ValueError, match=r"one size.*fine\.onnx: 48 px"):
        ValueNet([DEFAULT_MODEL, tmp_path / "fine.onnx"])


def test_a_larger_crop_scale_shows_the_surroundings() -> None:
    # A bright neighbour just beyond the box's margin is out of the usual crop and in a crop
    # cut at twice the box's side, where the die itself shrinks to about half the square.
    img = np.zeros((200, 200, 3), np.uint8)
    box = [80, 80, 120, 120]
    img[80:120, 80:120] = 120
    img[90:110, 126:136] = 255  # 6-16 px right of the box: beyond the 15% margin (3 px)
    near = crop_for(img, box, 1)
    wide = crop_for(img, box, 1, scale=2.0)
    assert near.max() < 2.0  # no neighbour: the brightest is the die against its border
    ys, xs = np.nonzero(wide > wide.max() - 0.5)
    assert xs.min() > 0.75 * CROP_SIZE and abs(ys.mean() - CROP_SIZE / 2) < 2
    die = wide[CROP_SIZE // 2, : CROP_SIZE * 3 // 4] > wide[2, 2] + 0.5
    assert 0.4 * CROP_SIZE < die.sum() < 0.6 * CROP_SIZE


def test_a_model_trained_on_wider_crops_is_given_wider_crops(tmp_path: Path) -> None:
    shutil.copy(GREY_MODEL, tmp_path / "wider.onnx")
    meta = json.loads(GREY_MODEL.with_suffix(".json").read_text())
    (tmp_path / "wider.json").write_text(json.dumps({**meta, "crop_scale": 1.6}))
    img, box = draw_die(3, 10, (40, 40, 200), (245, 245, 245), canvas=300)
    both = ValueNet([GREY_MODEL, tmp_path / "wider.onnx"])
    crop = both.crop(img, box)
    np.testing.assert_allclose(crop[0], crop_for(img, box, 1))
    np.testing.assert_allclose(crop[1], crop_for(img, box, 1, scale=1.6))
    assert not np.allclose(crop[0], crop[1])


def test_crop_is_normalised_grey_square() -> None:
    img, box = draw_die(5, 20, (40, 40, 200), (245, 245, 245), side=90, canvas=200)
    c = crop_for(img, box)
    assert c.shape == (CROP_SIZE, CROP_SIZE)
    assert c.dtype == np.float32
    assert abs(float(c.mean())) < 1e-4
    assert float(c.std()) == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize(
    "box",
    [
        [-20, -20, 30, 30],  # over the top-left corner
        [90, 40, 130, 80],  # over the right edge
        [110, 110, 160, 160],  # wholly outside
        [0, 0, 100, 100],  # the whole image
        [50, 50, 50.4, 50.2],  # degenerate
    ],
)
def test_crop_handles_image_edges(box: list[float]) -> None:
    img = np.random.default_rng(2).integers(0, 255, (100, 100, 3), dtype=np.uint8)
    c = crop_for(img, box)
    assert c.shape == (CROP_SIZE, CROP_SIZE)
    assert np.isfinite(c).all()


def test_crop_repeats_edge_pixels_outside() -> None:
    # Left half dark, right half bright: a box over the left edge sees only dark, repeated.
    img = np.zeros((60, 60, 3), np.uint8)
    img[:, 30:] = 200
    c = crop_for(img, [-10, 10, 10, 30])
    assert float(np.ptp(c)) == 0.0
    c2 = crop_for(img, [20, 10, 40, 30])
    assert c2[:, 0].mean() < 0 < c2[:, -1].mean()


def _pips_against_body(crop: np.ndarray, value: int, angle_deg: float) -> float:
    """How far the pips stand out from the die's body in a normalised crop of a `draw_die`
    die filling the box: pip centres' mean minus the body's, in the crop's spread."""
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    half = CROP_SIZE / 2 / 1.15 / (abs(math.cos(a)) + abs(math.sin(a)))  # the die's half side

    def at(points: list[tuple[float, float]]) -> float:
        xy = [rot @ np.array(q) * 0.5 * half + CROP_SIZE / 2 - 0.5 for q in points]
        return float(np.mean([crop[round(y), round(x)] for x, y in xy]))

    body = [(0, -1), (0, 1)] if value in (4, 5) else [(0.5, -1.5), (-0.5, 1.5)]
    return at(PIPS[value]) - at(body)


def test_principal_grey_keeps_pips_that_luma_loses() -> None:
    # Blue pips on a grey die of the same brightness: luma shows a blank face, the crop's
    # principal colour axis shows the pips (light or dark: luma, which signs the axis, cannot
    # tell these pips from the body either way).
    for angle in (0, 30):
        img, box = draw_die(5, angle, (97, 97, 97), (255, 90, 50), table_bgr=(200, 205, 210),
                            side=90, canvas=200)
        luma = crop_for(img, box)
        principal = crop_for(img, box, grey="principal")
        assert principal.shape == (CROP_SIZE, CROP_SIZE) and principal.dtype == np.float32
        assert abs(float(principal.mean())) < 1e-4
        assert float(principal.std()) == pytest.approx(1.0, abs=0.01)
        assert abs(_pips_against_body(luma, 5, angle)) < 0.3
        assert abs(_pips_against_body(principal, 5, angle)) > 1.0


def test_principal_grey_of_a_black_or_white_die_is_its_luma() -> None:
    # Where brightness is the contrast (the game's dice: white pips on colour, black on
    # white), the principal axis is luma's and the crop is the grey one, sign and all.
    for body, pip in (((245, 245, 245), (25, 25, 25)), ((30, 30, 30), (240, 240, 240)),
                      ((40, 40, 200), (245, 245, 245))):
        img, box = draw_die(6, 20, body, pip, side=90, canvas=200)
        luma, principal = crop_for(img, box), crop_for(img, box, grey="principal")
        assert np.corrcoef(luma.ravel(), principal.ravel())[0, 1] > 0.97, body


def test_a_grey_member_gets_the_grey_its_metadata_names(tmp_path: Path) -> None:
    meta = json.loads(GREY_MODEL.with_suffix(".json").read_text())
    img, box = draw_die(4, 15, (97, 97, 97), (255, 90, 50), side=90, canvas=200)
    for grey in ("luma", "principal"):
        shutil.copy(GREY_MODEL, tmp_path / f"{grey}.onnx")
        (tmp_path / f"{grey}.json").write_text(json.dumps({**meta, "grey": grey}))
        np.testing.assert_allclose(ValueNet(tmp_path / f"{grey}.onnx").crop(img, box),
                                   crop_for(img, box, grey=grey))
    assert not np.allclose(crop_for(img, box), crop_for(img, box, grey="principal"))
    shutil.copy(GREY_MODEL, tmp_path / "hue.onnx")
    (tmp_path / "hue.json").write_text(json.dumps({**meta, "grey": "hue"}))
    with pytest.raises(ValueError, match=r"hue\.json.*grey.*'hue'"):
        ValueNet(tmp_path / "hue.onnx")
    with pytest.raises(ValueError, match="grey must be one of"):
        crop_for(img, box, grey="hue")


def test_training_split_is_stable_and_about_half() -> None:
    names = [f"images/img_{i:04d}.jpg" for i in range(2000)]
    share = sum(map(is_training_image, names)) / len(names)
    assert 0.45 < share < 0.55
    assert is_training_image("images/img_0001.jpg") == is_training_image("images/img_0001.jpg")


def test_grey_teacher_input_from_a_colour_crop_is_the_grey_crop() -> None:
    # The student net is taught by grey members too, through the grey of its colour crop:
    # that must be the crop the grey net is given in the reader, or it teaches nonsense.
    from training.train_valuenet import _grey_of

    for value, pip, body in ((5, (20, 20, 150), (58, 58, 62)), (2, (30, 30, 30), (40, 200, 230))):
        img, box = draw_die(value, 25, body, pip, side=70, canvas=160)
        colour = crop_for(img, box, channels=3)
        np.testing.assert_allclose(_grey_of(colour[None])[0], crop_for(img, box), atol=0.06)
        np.testing.assert_allclose(_grey_of(colour[None], "principal")[0],
                                   crop_for(img, box, grey="principal"), atol=0.06)
        # and not merely any normalised square: one channel alone is not the grey crop
        assert np.abs(colour[2] / colour[2].std() - crop_for(img, box)).max() > 0.2


def test_cocked_training_scenes_hold_several_cocked_dice_in_view() -> None:
    # `--cocked-scenes` exists to show the nets more leaning dice than the presets do; a
    # scene whose cocked dice fell out of view or got a value would teach nothing or worse.
    from training.train_valuenet import cocked_scene

    for seed, preset in ((40_000, "hard"), (40_001, "normal"), (40_002, "wide")):
        image, labels = cocked_scene(seed, preset)
        h, w = image.shape[:2]
        cocked = [d for d in labels if d["cocked"]]
        assert len(cocked) >= 3, (preset, len(cocked))
        assert all(d["value"] is None for d in cocked)
        for d in cocked:
            x0, y0, x1, y1 = d["bbox"]
            assert x1 > 0 and y1 > 0 and x0 < w and y0 < h


def test_training_refuses_a_grey_axis_for_colour_crops(capsys: pytest.CaptureFixture) -> None:
    from training.train_valuenet import main

    with pytest.raises(SystemExit) as stop:
        main(["--channels", "3", "--grey", "principal"])
    assert stop.value.code == 2
    assert "--grey is for grey crops" in capsys.readouterr().err

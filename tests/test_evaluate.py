"""The dice-reader harness: every metric moves exactly as its definition says.

Images are drawn here: filled grey squares on black whose grey level encodes the pip value
(35 * value - 10), so a tiny pixel-only reader (`pixel_reader`) can find and "read" them without
seeing the labels. That makes the geometry tests honest: if the harness resized the pixels
one way and the labels another, the pixel reader's boxes would stop matching.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.benches import load_bench
from vision.evaluate import (
    ManifestError,
    SetReport,
    evaluate,
    format_table,
    iou,
    load_example,
    load_manifest,
    match,
)

# ---------------------------------------------------------------------------- fixtures


def draw(width: int, height: int, dice: list[tuple[int, int, int, int | None]]) -> np.ndarray:
    """Black image with one square per (x, y, side, value); a None value is drawn as 7."""
    img = np.zeros((height, width, 3), np.uint8)
    for x, y, side, value in dice:
        level = 35 * (7 if value is None else value) - 10
        img[y : y + side, x : x + side] = level
    return img


def pixel_reader(image: np.ndarray) -> list[dict]:
    """Find the drawn squares and read their grey level back as a value."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    mask = (grey > 10).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    found = []
    for c in contours:
        x, y, w, h = cv2.boundingRect(c)
        core = grey[y + h // 4 : y + h - h // 4, x + w // 4 : x + w - w // 4]
        level = round((float(np.median(core)) + 10) / 35)
        found.append(
            {
                "value": None if level >= 7 else level,
                "colour": "white",
                "big": False,
                "bbox": [x, y, x + w, y + h],
                "confidence": 0.95,
            }
        )
    found.sort(key=lambda d: (d["bbox"][1], d["bbox"][0]))
    return found


def write_set(
    folder: Path,
    images: dict[str, tuple[np.ndarray, list[dict]]],
    extra_lines: list[str] | None = None,
) -> Path:
    (folder / "images").mkdir(parents=True)
    lines = []
    for name, (img, dice) in images.items():
        rel = f"images/{name}.png"
        assert cv2.imwrite(str(folder / rel), img)
        h, w = img.shape[:2]
        lines.append(json.dumps({"image": rel, "width": w, "height": h, "dice": dice}))
    lines += extra_lines or []
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def labels_for(dice: list[tuple[int, int, int, int | None]]) -> list[dict]:
    return [
        {"value": v, "bbox": [x, y, x + s, y + s], "colour": None, "cocked": v is None}
        for x, y, s, v in dice
    ]


SCENE_A = [(20, 20, 40, 1), (100, 20, 40, 3), (180, 20, 40, 5), (20, 100, 40, 6)]
SCENE_B = [(30, 30, 50, 2), (120, 90, 50, 4), (200, 150, 50, None)]  # last one cocked


@pytest.fixture
def two_images(tmp_path: Path) -> Path:
    return write_set(
        tmp_path / "set",
        {
            "a": (draw(320, 240, SCENE_A), labels_for(SCENE_A)),
            "b": (draw(320, 240, SCENE_B), labels_for(SCENE_B)),
        },
    )


def tweaked(change):
    """pixel_reader with one edit applied to its output, for single-fault readers."""

    def reader(image: np.ndarray) -> list[dict]:
        return change(pixel_reader(image))

    return reader


# ---------------------------------------------------------------------------- iou / match


def test_iou_basic_cases():
    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0  # touching edges only
    assert iou([0, 0, 10, 10], [20, 20, 30, 30]) == 0.0
    assert iou([0, 0, 0, 0], [0, 0, 0, 0]) == 0.0  # degenerate, no ZeroDivisionError


def test_match_pairs_each_pred_with_its_best_label():
    labels = [{"bbox": [0, 0, 10, 10]}, {"bbox": [6, 0, 16, 10]}]
    preds = [{"bbox": [5, 0, 15, 10]}, {"bbox": [0, 0, 9, 10]}, {"bbox": [50, 50, 60, 60]}]
    pairs, extra, missed = match(preds, labels)
    assert pairs == [(1, 0), (0, 1)]  # sorted by label
    assert extra == [2]
    assert missed == []


def test_match_is_greedy_by_iou_not_by_order():
    # p1 fits L0 best of all (IoU 0.82), so it takes L0 although p0 (0.67 with L0) comes first;
    # p0 is then left over, and p1-L1 (0.54) is never used since p1 is taken. Matching in list
    # order instead would pair p0-L0 and p1-L1.
    labels = [{"bbox": [10, 0, 20, 10]}, {"bbox": [14, 0, 24, 10]}]
    preds = [{"bbox": [8, 0, 18, 10]}, {"bbox": [11, 0, 21, 10]}]
    assert iou(preds[1]["bbox"], labels[0]["bbox"]) > iou(preds[0]["bbox"], labels[0]["bbox"])
    assert match(preds, labels) == ([(1, 0)], [0], [1])


def test_match_respects_min_iou():
    labels = [{"bbox": [0, 0, 10, 10]}]
    preds = [{"bbox": [5, 0, 15, 10]}]  # IoU 1/3
    assert match(preds, labels, min_iou=0.5) == ([], [0], [0])
    assert match(preds, labels, min_iou=0.3) == ([(0, 0)], [], [])


def test_match_one_pred_cannot_take_two_labels():
    labels = [{"bbox": [0, 0, 10, 10]}, {"bbox": [0, 0, 10, 10]}]
    preds = [{"bbox": [0, 0, 10, 10]}]
    pairs, extra, missed = match(preds, labels)
    assert pairs == [(0, 0)] and extra == [] and missed == [1]


# ---------------------------------------------------------------------------- metrics


def test_perfect_reader(two_images: Path):
    r = evaluate(two_images, pixel_reader)
    assert (r.images, r.labels, r.predictions, r.matched) == (2, 7, 7, 7)
    assert r.recall == 1.0 and r.precision == 1.0 and r.value_accuracy == 1.0
    assert r.exact_images == 2 and r.exact_images_share == 1.0
    assert r.confident_wrong == 0 and r.wrong_values == 0
    assert r.failures == []
    assert r.mean_iou == pytest.approx(1.0)
    assert r.confusion[(None, None)] == 1  # the cocked die read as "no value" is right
    assert r.ms_per_image is not None and r.ms_per_image >= 0


def test_one_missed_die(two_images: Path, tmp_path: Path):
    reader = tweaked(lambda ds: [d for d in ds if d["value"] != 3])
    r = evaluate(two_images, reader, crops_dir=tmp_path / "crops")
    assert r.matched == 6 and r.predictions == 6
    assert r.recall == pytest.approx(6 / 7)
    assert r.precision == 1.0
    assert r.value_accuracy == 1.0  # a miss is not a wrong value
    assert r.exact_images == 1 and r.exact_images_share == 0.5
    assert r.confident_wrong == 0
    [f] = r.failures
    assert (f.kind, f.image, f.label_value) == ("missed", "images/a.png", 3)
    assert f.bbox == [100, 20, 140, 60]
    assert f.crop is not None and Path(f.crop).name == "missed_a_d1.png"
    crop = cv2.imread(f.crop)
    assert crop.shape[:2] == (40 + 2 * 12, 40 + 2 * 12)  # 30 % of 40 px on each side
    assert sorted(p.name for p in (tmp_path / "crops").iterdir()) == ["missed_a_d1.png"]


def test_dice_cut_by_the_frame_edge_are_dont_care(tmp_path: Path):
    """Issue 3: the reader skips cut dice, so neither skipping nor reporting one is scored."""
    dice = [(20, 20, 40, 2), (290, 100, 30, 5)]  # the second runs off the right edge
    labels = labels_for(dice)
    labels[1]["cut"] = True
    folder = write_set(tmp_path / "set", {"a": (draw(320, 240, dice), labels)})
    both = evaluate(folder, pixel_reader)
    assert (both.labels, both.predictions, both.matched, both.recall) == (1, 1, 1, 1.0)
    skipping = evaluate(folder, tweaked(lambda ds: [d for d in ds if d["bbox"][2] < 300]))
    assert (skipping.labels, skipping.predictions, skipping.recall) == (1, 1, 1.0)
    labels[1]["cut"] = False  # the same die, no longer marked cut, counts again
    (tmp_path / "plain").mkdir()
    plain = evaluate(write_set(tmp_path / "plain" / "s", {"a": (draw(320, 240, dice), labels)}),
                     tweaked(lambda ds: [d for d in ds if d["bbox"][2] < 300]))
    assert (plain.labels, plain.matched, plain.recall) == (2, 1, 0.5)


def test_a_die_touching_a_cut_one_is_still_scored(tmp_path: Path):
    """A whole die's read is not set aside because its box overlaps a cut neighbour's a
    little (boxes include side faces, so touching dice overlap); a read of the cut die's
    visible part is still set aside, matched to its label or not."""
    dice = [(262, 100, 40, 6), (200, 20, 40, 2)]
    labels = labels_for(dice)
    # The cut die's label runs past the right edge; the 6's box reaches into it: IoU 0.31.
    labels.append({"value": 4, "colour": "white", "big": False, "cut": True,
                   "bbox": [279, 103, 329, 143]})
    folder = write_set(tmp_path / "set", {"a": (draw(320, 240, dice), labels)})

    def with_part_of_the_cut_die(ds: list[dict]) -> list[dict]:
        # A read of the cut die's visible strip, as a reader that does not skip cut dice gives.
        return ds + [{"value": 3, "colour": "white", "big": False, "confidence": 0.95,
                      "bbox": [302, 104, 320, 143]}]

    assert iou(labels[0]["bbox"], labels[2]["bbox"]) == pytest.approx(0.31, abs=0.01)
    for reader in (pixel_reader, tweaked(with_part_of_the_cut_die)):
        report = evaluate(folder, reader)
        assert (report.labels, report.predictions, report.matched) == (2, 2, 2)
        assert report.recall == 1.0 and report.value_accuracy == 1.0
        assert report.confident_wrong == 0


@pytest.mark.parametrize("conf, confident_wrong", [(0.95, 1), (0.9, 1), (0.5, 0)])
def test_one_extra_detection(two_images: Path, tmp_path: Path, conf: float, confident_wrong: int):
    ghost = {"value": 4, "colour": "red", "big": False, "bbox": [250, 180, 290, 220]}

    def add(ds: list[dict]) -> list[dict]:
        if ds[0]["value"] == 2:  # image b only
            ds.append({**ghost, "confidence": conf})
        return ds

    r = evaluate(two_images, tweaked(add), crops_dir=tmp_path / "crops")
    assert r.predictions == 8 and r.matched == 7
    assert r.recall == 1.0
    assert r.precision == pytest.approx(7 / 8)
    assert r.value_accuracy == 1.0
    assert r.exact_images_share == 0.5
    assert r.confident_wrong == confident_wrong
    # An invented die reported as certain is a certain read, and a wrong one.
    assert r.confident_reads == 7 + (conf >= 0.9)
    [f] = r.failures
    assert (f.kind, f.image, f.pred_value, f.confidence) == ("extra", "images/b.png", 4, conf)
    assert Path(f.crop).name == "extra_b_p3.png" and Path(f.crop).is_file()


@pytest.mark.parametrize("conf, confident_wrong", [(0.99, 1), (0.9, 1), (0.89, 0), (0.3, 0)])
def test_one_wrong_value(two_images: Path, tmp_path: Path, conf: float, confident_wrong: int):
    def misread(ds: list[dict]) -> list[dict]:
        for d in ds:
            if d["value"] == 5:
                d.update(value=6, confidence=conf)
        return ds

    r = evaluate(two_images, tweaked(misread), crops_dir=tmp_path / "crops")
    assert r.recall == 1.0 and r.precision == 1.0
    assert r.value_accuracy == pytest.approx(6 / 7)
    assert r.wrong_values == 1
    assert r.exact_images == 1
    assert r.confident_wrong == confident_wrong
    # The 1-in-1,000 claim is over every certain report: the six right ones and this one.
    sure = 6 + (conf >= 0.9)
    assert r.confident_reads == sure
    assert r.confident_wrong_per_1000 == pytest.approx(1000 * confident_wrong / sure)
    assert r.confusion[(5, 6)] == 1
    [f] = r.failures
    assert (f.kind, f.label_value, f.pred_value) == ("wrong", 5, 6)
    assert Path(f.crop).name == "wrong_5_as_6_a_d2.png" and Path(f.crop).is_file()


def test_a_crop_of_a_die_asked_about_names_its_doubts(two_images: Path, tmp_path: Path):
    """The reader's reasons for asking (`DieRead.doubts`) end the crop's name, so the crops
    of one kind of doubt sort together; a certain read's crop has none."""
    def misread(ds: list[dict]) -> list[dict]:
        for d in ds:
            if d["value"] == 5:
                d.update(value=6, confidence=0.6, doubts=["lean", "small"])
            elif d["value"] == 2:
                d.update(value=3, confidence=0.95, doubts=[])
        return ds

    r = evaluate(two_images, tweaked(misread), crops_dir=tmp_path / "crops")
    names = sorted(Path(f.crop).name for f in r.failures)
    assert names == ["wrong_2_as_3_b_d0.png", "wrong_5_as_6_a_d2_lean-small.png"]
    assert all(Path(f.crop).is_file() for f in r.failures)


def test_cocked_label_wants_none(two_images: Path, tmp_path: Path):
    # pixel_reader already says None for the cocked die (checked in test_perfect_reader);
    # a reader that guesses pips on it is wrong, and confidently so.
    def guess(ds: list[dict]) -> list[dict]:
        for d in ds:
            if d["value"] is None:
                d["value"] = 4
        return ds

    r = evaluate(two_images, tweaked(guess), crops_dir=tmp_path / "crops")
    assert r.value_accuracy == pytest.approx(6 / 7)
    assert r.confident_wrong == 1
    assert r.confusion[(None, 4)] == 1
    [f] = r.failures
    assert (f.kind, f.label_value, f.pred_value) == ("wrong", None, 4)
    assert f.label["cocked"] is True
    assert Path(f.crop).name == "wrong_none_as_4_b_d2.png"

    # and the reverse: None on a readable die is wrong too
    def abstain(ds: list[dict]) -> list[dict]:
        for d in ds:
            if d["value"] == 1:
                d["value"] = None
        return ds

    r = evaluate(two_images, tweaked(abstain))
    assert r.value_accuracy == pytest.approx(6 / 7) and r.confusion[(1, None)] == 1


def test_failures_combine(two_images: Path):
    def chaos(ds: list[dict]) -> list[dict]:
        if ds[0]["value"] == 1:  # image a: drop the 6, misread the 3 unconfidently
            ds = [d for d in ds if d["value"] != 6]
            for d in ds:
                if d["value"] == 3:
                    d.update(value=2, confidence=0.2)
        else:  # image b: one confident ghost
            ds.append({"value": 1, "bbox": [0, 200, 30, 230], "confidence": 1.0})
        return ds

    r = evaluate(two_images, tweaked(chaos))
    assert (r.labels, r.predictions, r.matched) == (7, 7, 6)
    assert r.recall == pytest.approx(6 / 7) and r.precision == pytest.approx(6 / 7)
    assert r.value_accuracy == pytest.approx(5 / 6)
    assert r.exact_images == 0 and r.confident_wrong == 1
    assert sorted(f.kind for f in r.failures) == ["extra", "missed", "wrong"]


def test_colour_and_big_scored_only_where_labelled(tmp_path: Path):
    dice = [(20, 20, 40, 2), (100, 20, 40, 3)]
    labels = labels_for(dice)
    labels[0].update(colour="white", big=False)
    labels[1].update(colour="red", big=True)
    folder = write_set(tmp_path / "c", {"a": (draw(200, 100, dice), labels)})
    r = evaluate(folder, pixel_reader, crops_dir=tmp_path / "crops")  # white, small for all
    assert r.colour_accuracy == 0.5 and r.big_accuracy == 0.5
    assert r.value_accuracy == 1.0  # a colour slip is no value error...
    # ...but both slips are written out to be looked at
    f, g = sorted(r.failures, key=lambda f: f.kind, reverse=True)
    assert (f.kind, f.label_value, f.pred["colour"]) == ("colour", 3, "white")
    assert Path(f.crop).name == "colour_red_as_white_a_d1.png" and Path(f.crop).is_file()
    assert (g.kind, g.label_value, g.pred.get("big", False)) == ("big", 3, False)
    assert Path(g.crop).name == "big_big_as_plain_a_d1.png" and Path(g.crop).is_file()
    header, _, row = format_table([r]).splitlines()
    assert header.split()[-7:-4] == ["acc", "big", "acc"] and row.split()[-4] == "50.0%"
    r = evaluate(folder, pixel_reader, limit=0)
    assert r.images == 0 and r.recall is None and r.colour_accuracy is None
    assert r.ms_per_image is None and r.ms_p95 is None


def test_sets_without_colour_labels_have_no_colour_score(two_images: Path):
    r = evaluate(two_images, pixel_reader)
    assert r.colour_accuracy is None and r.big_accuracy is None


def test_empty_reader_and_limit(two_images: Path):
    r = evaluate(two_images, lambda img: [], limit=1)
    assert (r.images, r.labels, r.predictions, r.matched) == (1, 4, 0, 0)
    assert r.recall == 0.0 and r.precision is None and r.value_accuracy is None
    assert r.exact_images == 0 and [f.kind for f in r.failures] == ["missed"] * 4


def test_image_without_dice_read_as_empty_is_exact(tmp_path: Path):
    folder = write_set(tmp_path / "e", {"empty": (draw(100, 100, []), [])})
    r = evaluate(folder, lambda img: [])
    assert r.exact_images == 1 and r.recall is None and r.precision is None


def test_timing_covers_the_reader_call(two_images: Path):
    def slow(image: np.ndarray) -> list[dict]:
        time.sleep(0.03)
        return pixel_reader(image)

    r = evaluate(two_images, slow)
    assert r.ms_per_image >= 30
    assert r.ms_p95 >= 30
    assert r.ms_per_image < 1000


def test_timing_excludes_image_decoding(two_images: Path, monkeypatch: pytest.MonkeyPatch):
    real_imread = cv2.imread

    def slow_imread(*args, **kwargs):
        time.sleep(0.05)
        return real_imread(*args, **kwargs)

    monkeypatch.setattr(cv2, "imread", slow_imread)
    r = evaluate(two_images, lambda img: [])
    assert r.ms_per_image < 25


def test_reader_gets_a_copy_when_cropping(two_images: Path, tmp_path: Path):
    def vandal(image: np.ndarray) -> list[dict]:
        found = pixel_reader(image)
        image[:] = 0
        return [d for d in found if d["value"] != 3]

    r = evaluate(two_images, vandal, crops_dir=tmp_path / "crops")
    [f] = r.failures
    assert cv2.imread(f.crop).max() > 0


def test_malformed_reader_output_is_refused(two_images: Path):
    with pytest.raises(ValueError, match=r"images/a\.png, die 0: 'confidence'"):
        evaluate(two_images, lambda img: [{"value": 3, "bbox": [0, 0, 5, 5]}])
    with pytest.raises(ValueError, match="'value' must be 1-6"):
        evaluate(two_images, lambda img: [{"value": 7, "bbox": [0, 0, 5, 5], "confidence": 1}])
    with pytest.raises(ValueError, match="list of dice"):
        evaluate(two_images, lambda img: {"value": 3})


def test_numpy_values_from_reader_are_accepted(two_images: Path):
    def np_reader(image: np.ndarray) -> list[dict]:
        return [
            {**d, "bbox": np.array(d["bbox"], np.float32), "value": None if d["value"] is None
             else np.int64(d["value"]), "confidence": np.float32(0.9)}
            for d in pixel_reader(image)
        ]

    r = evaluate(two_images, np_reader)
    assert r.value_accuracy == 1.0 and r.recall == 1.0


# ---------------------------------------------------------------------------- geometry


def test_max_long_side_scales_image_and_labels(tmp_path: Path):
    dice = [(40, 40, 80, 2), (300, 200, 80, 5), (560, 360, 60, 6)]
    folder = write_set(tmp_path / "big", {"a": (draw(640, 480, dice), labels_for(dice))})
    entry = load_manifest(folder)[0]

    image, labels = load_example(entry, max_long_side=320)
    assert image.shape[:2] == (240, 320)
    assert [d["bbox"] for d in labels] == [
        [20, 20, 60, 60], [150, 100, 190, 140], [280, 180, 310, 210]
    ]
    image, labels = load_example(entry, max_long_side=1280)  # never upscales
    assert image.shape[:2] == (480, 640) and labels[0]["bbox"] == [40, 40, 120, 120]

    shapes = []

    def reader(image: np.ndarray) -> list[dict]:
        shapes.append(image.shape[:2])
        return pixel_reader(image)

    r = evaluate(folder, reader, max_long_side=320)
    assert shapes == [(240, 320)]
    assert r.recall == 1.0 and r.value_accuracy == 1.0 and r.mean_iou > 0.9
    r = evaluate(folder, lambda img: [], max_long_side=320)
    assert r.failures[1].bbox == [150, 100, 190, 140]  # failures are in the read frame


def test_max_long_side_portrait_and_extra_label_geometry(tmp_path: Path):
    dice = [(100, 400, 100, 4)]
    labels = labels_for(dice)
    labels[0].update(bbox_tight=[110, 410, 190, 490], center=[150, 450])
    folder = write_set(tmp_path / "p", {"a": (draw(300, 600, dice), labels)})
    image, [label] = load_example(load_manifest(folder)[0], max_long_side=200)
    assert image.shape[:2] == (200, 100)
    assert label["bbox"] == pytest.approx([100 / 3, 400 / 3, 200 / 3, 500 / 3])
    assert label["bbox_tight"] == pytest.approx([110 / 3, 410 / 3, 190 / 3, 490 / 3])
    assert label["center"] == pytest.approx([50, 150])


def squashed_set(tmp_path: Path, with_stretch: bool = True) -> Path:
    """Like rune55-trays: a 180×240 (W×H) photo squashed to 180×180 along y."""
    dice = [(20, 20, 60, 3), (100, 120, 60, 5), (30, 160, 60, 2)]
    true = draw(180, 240, dice)
    squashed = cv2.resize(true, (180, 180), interpolation=cv2.INTER_AREA)
    labels = [
        {"value": v, "bbox": [x, y * 0.75, x + s, (y + s) * 0.75], "colour": None}
        for x, y, s, v in dice
    ]
    folder = write_set(tmp_path / "rune", {"a": (squashed, labels)})
    if with_stretch:
        line = {
            "image": "images/a.png",
            "median_box_w_over_h": 1.333,
            "compressed_axis": "y",
            "restore_size": [180, 240],
        }
        (folder / "stretch.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    return folder


def test_stretch_restores_image_and_labels(tmp_path: Path):
    folder = squashed_set(tmp_path)
    [entry] = load_manifest(folder)
    assert entry["restore_size"] == [180, 240]
    image, labels = load_example(entry)
    assert image.shape[:2] == (240, 180)
    assert [d["bbox"] for d in labels] == [
        pytest.approx(b) for b in ([20, 20, 80, 80], [100, 120, 160, 180], [30, 160, 90, 220])
    ]

    seen = []

    def reader(image: np.ndarray) -> list[dict]:
        seen.append(image.shape[:2])
        found = pixel_reader(image)
        for d in found:
            x0, y0, x1, y1 = d["bbox"]
            assert abs((x1 - x0) - (y1 - y0)) <= 2  # the reader sees square dice again
        return found

    r = evaluate(folder, reader)
    assert seen == [(240, 180)]
    assert r.recall == 1.0 and r.precision == 1.0 and r.mean_iou > 0.9


def test_stretch_then_max_long_side(tmp_path: Path):
    folder = squashed_set(tmp_path)
    image, labels = load_example(load_manifest(folder)[0], max_long_side=120)
    assert image.shape[:2] == (120, 90)
    assert labels[1]["bbox"] == pytest.approx([50, 60, 80, 90])
    r = evaluate(folder, pixel_reader, max_long_side=120)
    assert r.recall == 1.0 and r.value_accuracy == 1.0


def test_without_stretch_the_squash_stays(tmp_path: Path):
    folder = squashed_set(tmp_path, with_stretch=False)
    [entry] = load_manifest(folder)
    assert "restore_size" not in entry
    image, labels = load_example(entry)
    assert image.shape[:2] == (180, 180) and labels[0]["bbox"] == [20, 15.0, 80, 60.0]


def test_stretch_missing_an_image_is_an_error(tmp_path: Path):
    folder = squashed_set(tmp_path)
    (folder / "stretch.jsonl").write_text(
        json.dumps({"image": "images/other.png", "restore_size": [1, 1]}) + "\n"
    )
    with pytest.raises(ManifestError, match=r"stretch\.jsonl: no restore_size for 'images/a\.png'"):
        load_manifest(folder)
    (folder / "stretch.jsonl").write_text('{"image": "images/a.png", "restore_size": [180]}\n')
    with pytest.raises(ManifestError, match=r"stretch\.jsonl, line 1"):
        load_manifest(folder)


# ---------------------------------------------------------------------------- manifests


def test_load_manifest_gives_absolute_paths(two_images: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(two_images.parent)
    entries = load_manifest("set")
    assert [e["name"] for e in entries] == ["images/a.png", "images/b.png"]
    assert all(Path(e["image"]).is_absolute() and Path(e["image"]).is_file() for e in entries)
    assert entries[1]["dice"][2]["value"] is None and entries[1]["dice"][2]["cocked"] is True


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"image": "images/a.png", "width": 320, "height": 240}', "'dice' must be a list"),
        ('{"image": "images/zz.png", "width": 1, "height": 1, "dice": []}', "not found"),
        ('{"image": "images/a.png", "height": 240, "dice": []}', "'width'"),
        (
            '{"image": "images/a.png", "width": 320, "height": 240,'
            ' "dice": [{"value": 3, "bbox": [0, 0, 5]}]}',
            r"die 0: 'bbox' must be",
        ),
        (
            '{"image": "images/a.png", "width": 320, "height": 240,'
            ' "dice": [{"value": 0, "bbox": [0, 0, 5, 5]}]}',
            "'value' must be 1-6 or null",
        ),
        (
            '{"image": "images/a.png", "width": 320, "height": 240,'
            ' "dice": [{"bbox": [0, 0, 5, 5]}]}',
            "'value' is missing",
        ),
        (
            '{"image": "images/a.png", "width": 320, "height": 240,'
            ' "dice": [{"value": 2, "bbox": [5, 5, 5, 9]}]}',
            "is empty",
        ),
        (
            '{"image": "images/a.png", "width": 320, "height": 240,'
            ' "dice": [{"value": 2, "bbox": [0, 0, 5, 5], "cut": "yes"}]}',
            r"die 0: 'cut' must be true or false, got 'yes'",
        ),
        (
            '{"image": "images/a.png", "width": 320, "height": 240,'
            ' "dice": [{"value": 2, "bbox": [0, 0, 5, 5], "big": 1}]}',
            r"die 0: 'big' must be true or false, got 1",
        ),
    ],
)
def test_bad_manifest_line_names_file_and_line(tmp_path: Path, bad: str, reason: str):
    good = [(10, 10, 20, 1)]
    folder = write_set(
        tmp_path / "bad", {"a": (draw(320, 240, good), labels_for(good))}, extra_lines=["", bad]
    )
    with pytest.raises(ManifestError) as info:
        load_manifest(folder)
    message = str(info.value)
    assert f"{folder / 'manifest.jsonl'}, line 3:" in message  # blank line 2 is skipped
    assert re.search(reason, message), message


def test_missing_manifest(tmp_path: Path):
    with pytest.raises(ManifestError, match=r"manifest\.jsonl: no such manifest"):
        load_manifest(tmp_path)


def test_image_size_must_match_manifest(tmp_path: Path):
    folder = write_set(tmp_path / "s", {"a": (draw(100, 80, []), [])})
    line = json.dumps({"image": "images/a.png", "width": 80, "height": 100, "dice": []})
    (folder / "manifest.jsonl").write_text(line + "\n")
    with pytest.raises(ManifestError, match="100×80 but the manifest says 80×100"):
        evaluate(folder, lambda img: [])


# ---------------------------------------------------------------------------- table


def test_format_table_one_aligned_row_per_set(two_images: Path):
    good = evaluate(two_images, pixel_reader)
    none = evaluate(two_images, lambda img: [])
    none.name = "a-much-longer-set-name"
    table = format_table([good, none])
    lines = table.splitlines()
    assert len(lines) == 4  # header, rule, two rows
    assert lines[2].startswith("set ") and "100.0%" in lines[2]
    assert lines[3].startswith("a-much-longer-set-name") and "0.0%" in lines[3]
    assert re.search(r"\s-\s", lines[3])  # precision with no predictions is undefined
    # numeric columns are right-aligned, so every line ends at the same column
    assert len({len(line) for line in lines}) == 1
    header = lines[0].split()
    assert header[:4] == ["set", "images", "dice", "preds"]
    # Certain reads and the confident errors per thousand of them: 7 reads at 0.95, none
    # wrong; no reads, no rate.
    assert lines[0].index("wrong/1k sure") > lines[0].index("conf-wrong")
    assert re.search(r"\s7\s+0\.0\s", lines[2]) and re.search(r"\s0\s+-\s", lines[3])
    assert lines[2].split()[1:4] == ["2", "7", "7"]
    assert isinstance(good, SetReport)


# ---------------------------------------------------------------------------- audited labels


def _bench_vision():
    return load_bench("vision")


def _audit(tmp_path: Path, folder: Path, *fixes: dict) -> Path | None:
    """bench/vision.py's audited copy of set "set" under these fixes to image a.png."""
    path = tmp_path / "fixes.json"
    path.write_text(json.dumps({"set": [{"image": "images/a.png", "why": "test", **f}
                                        for f in fixes]}))
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return _bench_vision().audited_copy("set", folder, out, path)


def test_audited_labels_fix_only_the_listed_dice(tmp_path: Path):
    """A die labelled 5 that shows 3: the published labels count the pixel reader wrong once,
    the audited copy counts it right, and nothing else moves."""
    wrong = labels_for(SCENE_A)
    wrong[1]["value"] = 5  # the die drawn as 3
    folder = write_set(tmp_path / "set", {"a": (draw(320, 240, SCENE_A), wrong)})
    audited = _audit(tmp_path, folder, {"die": 1, "was": 5, "value": 3})
    assert _bench_vision().audited_copy("other", folder, tmp_path / "out",
                                        tmp_path / "fixes.json") is None
    before = evaluate(folder, pixel_reader)
    after = evaluate(audited, pixel_reader)
    assert (before.value_accuracy, after.value_accuracy) == (0.75, 1.0)
    assert (after.recall, after.precision, after.labels) == (before.recall, before.precision, 4)
    assert load_manifest(folder)[0]["dice"][1]["value"] == 5  # the original is untouched


def test_a_stale_label_fix_stops_the_benchmark(tmp_path: Path):
    folder = write_set(tmp_path / "set", {"a": (draw(320, 240, SCENE_A), labels_for(SCENE_A))})
    with pytest.raises(SystemExit, match="is 3, not 5"):
        _audit(tmp_path, folder, {"die": 1, "was": 5, "value": 3})


def test_an_audit_can_bring_a_loose_label_box_to_its_die(tmp_path: Path):
    """A die labelled with a box far round it: the reader's box of the die misses it (a
    missed die and a confident invention); the audited copy, given the die's box, counts the
    die found and read right. A box fix whose old box no longer fits stops the benchmark."""
    loose = labels_for(SCENE_A)
    loose[3]["bbox"] = [5, 85, 95, 175]  # the 6 at (20, 100), side 40: IoU 0.2
    folder = write_set(tmp_path / "set", {"a": (draw(320, 240, SCENE_A), loose)})
    audited = _audit(tmp_path, folder,
                     {"die": 3, "was_bbox": [5, 85, 95, 175], "bbox": [20, 100, 60, 140]})
    before = evaluate(folder, pixel_reader)
    after = evaluate(audited, pixel_reader)
    assert (before.matched, before.confident_wrong) == (3, 1)
    assert (after.matched, after.confident_wrong, after.value_accuracy) == (4, 0, 1.0)
    assert load_manifest(folder)[0]["dice"][3]["bbox"] == [5, 85, 95, 175]
    (tmp_path / "stale").mkdir()
    with pytest.raises(SystemExit, match="redo the audit"):
        _audit(tmp_path / "stale", folder,
               {"die": 2, "was_bbox": [5, 85, 95, 175], "bbox": [0, 0, 9, 9]})


def test_an_audit_can_add_a_die_the_labels_miss(tmp_path: Path):
    """A die drawn but never labelled: the published labels count the reader's right read as
    an invention; the audited copy, given the die, counts it found and right."""
    missing = labels_for(SCENE_A)[:3]  # the 6 at (20, 100) has no label
    folder = write_set(tmp_path / "set", {"a": (draw(320, 240, SCENE_A), missing)})
    audited = _audit(tmp_path, folder, {"add": {"value": 6, "bbox": [20, 100, 60, 140]}})
    before = evaluate(folder, pixel_reader)
    after = evaluate(audited, pixel_reader)
    assert (before.labels, before.precision, before.confident_wrong) == (3, 0.75, 1)
    assert (after.labels, after.precision, after.confident_wrong) == (4, 1.0, 0)
    assert after.value_accuracy == 1.0


def test_an_added_die_that_is_labelled_by_now_stops_the_benchmark(tmp_path: Path):
    folder = write_set(tmp_path / "set", {"a": (draw(320, 240, SCENE_A), labels_for(SCENE_A))})
    with pytest.raises(SystemExit, match="is labelled now"):
        _audit(tmp_path, folder, {"add": {"value": 6, "bbox": [22, 98, 61, 141]}})


def _report(name: str, labels: int, preds: int, matched: int, wrong: int, cw: int = 0,
            sure: int = 0):
    from vision.evaluate import SetReport

    return SetReport(name=name, images=1, labels=labels, predictions=preds, matched=matched,
                     recall=matched / labels, precision=matched / preds,
                     value_accuracy=(matched - wrong) / matched, exact_images=0,
                     exact_images_share=0.0, confident_wrong=cw, ms_per_image=None, ms_p95=None,
                     wrong_values=wrong, confident_reads=sure)


def test_bench_verdicts_count_a_target_one_die_short_as_short():
    """5,443 of 5,471 dice is 99.49%, printed as 99.5% at one decimal: one die short of the
    floor, and said so; 5,444 meets it."""
    table = [_report("synthetic-hard", 5471, 5452, 5443, 190, cw=2),
             _report("byler-d6", 1108, 1114, 1107, 21),
             _report("rune55-trays", 1040, 1032, 1013, 62)]
    lines = _bench_vision().verdicts(table, 154.7)
    assert "synthetic-hard recall: 5,443 of 5,471 = 99.49% (>= 99.5% needs 5,444): short by 1" \
        in lines
    assert any(li.startswith("byler-d6 recall:") and li.endswith(": met") for li in lines)
    assert any(li.startswith("rune55-trays value accuracy") and "short by 12" in li
               for li in lines)
    assert "synthetic-hard confident-wrong: 2 (0 needed): short by 2" in lines
    assert lines[-1].endswith(": short") and "154.7 ms" in lines[-1]
    table[0] = _report("synthetic-hard", 5471, 5452, 5444, 10)
    assert "5,444 of 5,471 = 99.51% (>= 99.5% needs 5,444): met" in "\n".join(
        _bench_vision().verdicts(table, None))


def test_bench_verdicts_hold_every_set_to_one_wrong_certain_read_in_1000():
    """2 wrong of 2,316 certain reads meets the calibration claim; 5 of 726 does not; none
    wrong of 80 is all a small set can say."""
    table = [_report("synthetic-hard", 5471, 5455, 5443, 190, cw=2, sure=2316),
             _report("byler-d6", 1108, 1114, 1107, 21, cw=5, sure=726),
             _report("loose", 219, 222, 218, 3, sure=80)]
    lines = _bench_vision().verdicts(table, None)
    assert "synthetic-hard certain reads: 2 wrong of 2,316 = 0.9 per 1,000 (<= 1 needed): met" \
        in lines
    assert "byler-d6 certain reads: 5 wrong of 726 = 6.9 per 1,000 (<= 1 needed): short" in lines
    assert ("loose certain reads: 0 wrong of 80 = 0.0 per 1,000 (<= 1 needed): met so far "
            "(fewer than 1,000 certain reads)") in lines


def test_bench_vision_takes_candidate_context_nets(tmp_path: Path, capsys):
    """`--context` puts candidate context nets (averaged) or none in the shipped pair's place,
    so a retrained one is measured on the whole bench, as `--valuenet` does for the four."""
    from vision.valuenet import CONTEXT_MODEL

    bench = _bench_vision()
    for given, shown in ((["none"], "context nets: none"),
                         ([str(CONTEXT_MODEL)], f"context nets: {CONTEXT_MODEL}")):
        assert bench.main(["--synthetic", "2", "--data", str(tmp_path), "--context", *given]) == 0
        out = capsys.readouterr().out
        assert shown in out
        assert "synthetic-hard" in out

"""Why a read is not certain (`DieRead.doubts`): each reason where a scene calls for it, none on
a certain read, and never one that the reader did not act on."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from tests.test_reader import _glare
from vision.certainty import DOUBTS
from vision.config import ReaderConfig
from vision.evaluate import iou
from vision.reader import CERTAIN, DiceReader, DieRead
from vision.synth import DiePose, random_scene, render, render_scene

READER = DiceReader()
CFG = ReaderConfig()


def reader_with(**changes: object) -> DiceReader:
    return DiceReader(config=CFG.with_values(**changes), nets=READER.nets)


def die(x: float, y: float, value: int | None = 4, colour: str = "red", **kw) -> DiePose:
    pip = kw.pop("pip_colour", "black" if colour in ("white", "yellow") else "white")
    return DiePose(colour=colour, value=value, big=False, x=x, y=y,
                   angle_deg=kw.pop("angle_deg", 17.0), pip_colour=pip, **kw)


def easy(dice: list[DiePose], seed: int = 5) -> tuple[np.ndarray, list[dict]]:
    s = random_scene(seed, "easy")
    return render(s, dice, seed=seed)


def middle(seed: int = 5) -> tuple[float, float]:
    s = random_scene(seed, "easy")
    return s.floor_w_mm / 2, s.floor_h_mm / 2


def six_dice() -> tuple[np.ndarray, list[dict]]:
    cx, cy = middle()
    return easy([die(cx + (i % 3 - 1) * 45, cy + (i // 3 - 0.5) * 45, value=i + 1)
                 for i in range(6)])


def on(reads: list[DieRead], label: dict) -> DieRead:
    [read] = [r for r in reads if iou(r.bbox, label["bbox"]) >= 0.5]
    return read


def test_a_certain_read_has_no_doubts_and_an_uncertain_one_says_why():
    """Over hard scenes (lamps, glare, blur, cocked dice, clusters): every certain read has
    none, every other at least one known code, each once; `to_dict` lists them."""
    certain = uncertain = 0
    for seed in range(2026, 2032):
        img, _ = render_scene(seed, "hard", 1280, 960)
        for r in READER.read(img):
            d = r.to_dict()
            assert list(d) == ["value", "colour", "big", "bbox", "confidence", "doubts"]
            assert d["doubts"] == list(r.doubts)
            if r.value is not None and r.confidence >= CERTAIN:
                certain += 1
                assert r.doubts == ()
            else:
                uncertain += 1
                assert r.doubts and set(r.doubts) <= set(DOUBTS)
                assert len(set(r.doubts)) == len(r.doubts)
    assert certain >= 30 and uncertain >= 5


def test_a_die_too_small_for_its_pips_is_small():
    img, _ = six_dice()
    assert all(not r.doubts for r in READER.read(img) if r.value in (2, 3, 4))
    far = cv2.resize(img, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    reads = READER.read(far)
    assert len(reads) == 6
    assert all(r.side < CFG.certainty.sure_side for r in reads)
    assert all(r.confidence < CERTAIN and "small" in r.doubts for r in reads)
    # Told that such dice are large enough, the reader trusts some of them.
    trusting = reader_with(certainty__sure_side=10.0).read(far)
    assert not any("small" in r.doubts for r in trusting)
    assert any(r.confidence >= CERTAIN and not r.doubts for r in trusting)


@pytest.mark.parametrize("gap", [3, 6])
def test_a_die_at_the_frame_edge_is_edge(gap: int):
    cx, cy = middle()
    img, labels = easy([die(cx, cy, 5, "blue"), die(cx - 40, cy, 2)])
    x1 = int(np.ceil(labels[0]["bbox"][2]))
    cropped = np.ascontiguousarray(img[:, : x1 + gap])
    reads = READER.read(cropped)
    assert "edge" in on(reads, labels[0]).doubts
    assert "edge" not in on(reads, labels[1]).doubts
    assert "edge" not in on(READER.read(img), labels[0]).doubts


@pytest.mark.parametrize("tilt", [25.0, 35.0])
def test_a_cocked_die_read_without_a_value_is_unreadable(tilt: float):
    cx, cy = middle()
    img, labels = easy([die(cx, cy, None, cocked=True, tilt_deg=tilt, face_up=6)])
    r = on(READER.read(img), labels[0])
    assert r.value is None and "unreadable" in r.doubts


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_glare_in_the_middle_of_a_two_or_four_is_glare(seed: int):
    s = random_scene(seed, "easy")
    cx, cy = s.floor_w_mm / 2, s.floor_h_mm / 2
    dice = [die(cx - 45, cy, 5, "blue"), die(cx, cy, 4, "red"), die(cx + 45, cy, 3, "green"),
            die(cx, cy + 50, 6, "purple")]
    img, labels = render(s, dice, seed=seed)
    img = _glare(_glare(img, labels[0]["bbox"]), labels[1]["bbox"])
    reads = READER.read(img)
    glared, clean = [on(reads, lab) for lab in labels[:2]], [on(reads, lab) for lab in labels[2:]]
    assert all(r.value in (2, 4) and "glare" in r.doubts for r in glared)
    assert all(r.doubts == () for r in clean)
    # The glare code is the pip rule's: without the second opinion nothing says glare.
    assert not any("glare" in r.doubts for r in reader_with(pips__second_opinion=False).read(img))


def _told(p_face: float, face: int):
    """A value net standing in for the four: sure of `face` at `p_face` on every crop, so that
    what the rest of the reader makes of that is seen alone."""
    real = READER.nets.value

    class Told:
        def crop(self, frame, box, nadir=None):
            return real.crop(frame, box, nadir)

        def predict(self, crops, paints=False):
            p = np.full((len(crops), 8), (1.0 - p_face) / 7, np.float32)
            p[:, face] = p_face
            return p

    return DiceReader(nets=replace(READER.nets, value=Told()))


def test_pips_the_rule_counts_otherwise_are_pips():
    """The nets sure of a 4 on a clean 5: the pips counted by rule disagree, and say so."""
    cx, cy = middle()
    img, labels = easy([die(cx, cy, 5)])
    r = on(_told(0.99, 4).read(img), labels[0])
    assert r.value == 4 and r.confidence < CERTAIN and r.doubts == ("pips",)
    agreed = on(_told(0.99, 5).read(img), labels[0])
    assert agreed.value == 5 and agreed.confidence >= CERTAIN and agreed.doubts == ()


def test_a_face_the_nets_are_not_sure_enough_of_is_unsure():
    cx, cy = middle()
    img, labels = easy([die(cx, cy, 4)])
    r = on(_told(0.92, 4).read(img), labels[0])
    assert r.value == 4 and r.doubts == ("unsure",)


def test_a_leaning_die_the_lean_checks_doubt_is_lean():
    """A leaning die boxed by its clean top face (a fresh hard scene): the four read it as
    certain, the context nets and the wider view doubt it."""
    img, entry = render_scene(8100 + 204, "hard", 1280, 960)
    [cocked] = [d for d in entry["dice"] if d["cocked"] and not d.get("cut")]
    r = on(READER.read(img), cocked)
    assert r.value is not None and "lean" in r.doubts
    blind = on(reader_with(context__enabled=False, wider__enabled=False).read(img), cocked)
    assert blind.confidence >= CERTAIN and blind.doubts == ()


def test_a_second_box_on_the_same_die_is_crowded():
    """A Biggy leaning on a neighbour gets two boxes, its top face read as a 5 and the whole
    die held unreadable (`test_reader`'s scene 491)."""
    img, entry = render_scene(2026 + 491, "hard", 1280, 960)
    faces = [r for d in entry["dice"] if d["cocked"] and not d.get("cut")
             for r in READER.read(img) if r.value is not None and iou(r.bbox, d["bbox"]) >= 0.3]
    assert faces and all("crowded" in r.doubts for r in faces)
    alone = reader_with(certainty__rivals=False).read(img)
    assert not any("crowded" in r.doubts for r in alone)


def test_a_die_found_only_re_toned_is_faint():
    img, entry = render_scene(2071, "hard", 1280, 960)
    [label] = [d for d in entry["dice"] if iou(d["bbox"], [72, 48, 203, 174]) > 0.95]
    r = on(READER.read(img), label)
    assert r.doubts == ("faint",)


def test_every_die_of_a_frame_seen_off_its_axis_is_angle():
    """The top-left of a wide lens's frame: the dice put the camera's nadir off the middle."""
    img, _ = render_scene(121, "wide", 960, 720)
    crop = np.ascontiguousarray(img[:432, :576])
    reading = READER.read_traced(crop)
    assert reading.nadir is not None and reading.dice
    assert all("angle" in r.doubts for r in reading.dice)
    assert not any("angle" in r.doubts for r in READER.read(img))

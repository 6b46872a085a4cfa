"""The synthetic tray renderer: deterministic, labels that match the pixels and the geometry.

Expected values here come from the physical setup (die sizes, colours, image bounds), never from
the renderer's own helpers.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import cv2
import numpy as np
import pytest

from vision.synth import (
    DiePose,
    SceneSpec,
    fancy,
    random_dice,
    random_scene,
    render,
    render_scene,
    tray_corners,
    write_set,
)

W, H = 1280, 960
LABEL_KEYS = {"value", "bbox", "colour", "big", "cocked", "cut"}
HARD_SEEDS = range(6)


def iou(a: list[float], b: list[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def square(d: DiePose) -> np.ndarray:
    """Floor footprint of an upright die, from its pose alone (16 mm, Biggy 1.4x)."""
    s = 16.0 * (1.4 if d.big else 1.0) / 2
    a = math.radians(d.angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    pts = np.array([[-s, -s], [s, -s], [s, s], [-s, s]]) @ rot.T + [d.x, d.y]
    return pts.astype(np.float32)


def centre_die(spec: SceneSpec, colour: str, dx: float = 0.0, **kw) -> DiePose:
    """A plain die near the floor centre, offset dx mm along the floor's long side."""
    defaults = {"value": 5, "big": False, "angle_deg": 0.0, "pip_colour": "white"}
    return DiePose(colour=colour, x=spec.floor_w_mm / 2 + dx, y=spec.floor_h_mm / 2,
                   **{**defaults, **kw})


@pytest.fixture(scope="module")
def hard_frames() -> list[tuple[np.ndarray, dict]]:
    return [render_scene(s, "hard") for s in HARD_SEEDS]


def test_same_seed_gives_identical_frame_and_labels():
    img1, entry1 = render_scene(11, "hard")
    render_scene(12, "hard")
    img2, entry2 = render_scene(11, "hard")
    assert img1.shape == (H, W, 3) and img1.dtype == np.uint8
    assert np.array_equal(img1, img2)
    assert entry1 == entry2


def test_different_seeds_give_different_frames():
    a, ea = render_scene(1, "normal")
    b, eb = render_scene(2, "normal")
    assert np.abs(a.astype(int) - b.astype(int)).mean() > 5
    assert ea["dice"] != eb["dice"]


@pytest.mark.parametrize("preset", ["easy", "normal", "hard", "wide"])
def test_labels_lie_in_the_image_and_do_not_overlap(preset):
    for seed in range(4):
        _, entry = render_scene(seed, preset)
        assert entry["width"] == W and entry["height"] == H
        assert 1 <= len(entry["dice"]) <= 16
        boxes = [d["bbox"] for d in entry["dice"]]
        for x0, y0, x1, y1 in boxes:
            assert 0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H
        ious = [iou(a, b) for a, b in itertools.combinations(boxes, 2)]
        if ious:
            # touching, rotated dice give some box overlap, but never much
            assert max(ious) < 0.35, (seed, max(ious))
            assert np.mean(ious) < 0.03


@pytest.mark.parametrize("preset", ["easy", "normal", "hard"])
def test_placed_dice_do_not_overlap_on_the_floor(preset):
    for seed in range(5):
        spec = random_scene(seed, preset)
        dice = [d for d in random_dice(spec, np.random.default_rng(seed)) if not d.cocked]
        for d in dice:
            fp = square(d)
            assert fp[:, 0].min() > -0.01 and fp[:, 0].max() < spec.floor_w_mm + 0.01
            assert fp[:, 1].min() > -0.01 and fp[:, 1].max() < spec.floor_h_mm + 0.01
        for a, b in itertools.combinations(dice, 2):
            area, _ = cv2.intersectConvexConvex(square(a), square(b))
            assert area < 0.5, (seed, a, b)  # mm^2: touching is fine, overlapping is not


def test_sixteen_dice_fit_with_clusters():
    spec = random_scene(3, "hard")
    dice = random_dice(spec, np.random.default_rng(0), n=16)
    assert len(dice) == 16
    assert all(1 <= d.value <= 6 for d in dice if not d.cocked)


@pytest.mark.parametrize("angle", [0.0, 30.0, 70.0])
def test_biggy_box_is_about_1_4_times_a_normal_one(angle):
    spec = random_scene(4, "easy")
    dice = [centre_die(spec, "red", -25, angle_deg=angle),
            centre_die(spec, "blue", 25, angle_deg=angle, big=True)]
    _, labels = render(spec, dice)
    small, big = sorted(labels, key=lambda lab: lab["big"])
    assert big["big"] and not small["big"]
    for k in (0, 1):  # width, then height
        ratio = (big["bbox"][2 + k] - big["bbox"][k]) / (small["bbox"][2 + k] - small["bbox"][k])
        assert 1.25 < ratio < 1.6, ratio


def test_biggy_boxes_are_larger_in_random_hard_scenes(hard_frames):
    ratios = []
    for _, entry in hard_frames:
        sizes = {True: [], False: []}
        for d in entry["dice"]:
            if not d["cut"] and not d["cocked"]:
                x0, y0, x1, y1 = d["bbox"]
                sizes[d["big"]].append(math.sqrt((x1 - x0) * (y1 - y0)))
        if sizes[True] and sizes[False]:
            ratios.append(np.median(sizes[True]) / np.median(sizes[False]))
    assert ratios
    assert 1.15 < np.median(ratios) < 1.7


def test_hard_preset_stresses_every_condition(hard_frames):
    labels = [d for _, entry in hard_frames for d in entry["dice"]]
    assert {"cocked", "big", "cut"} <= {k for d in labels for k in ("cocked", "big", "cut") if d[k]}
    for d in labels:
        assert set(d) == LABEL_KEYS
        if d["cocked"]:
            assert d["value"] is None
        else:
            assert d["value"] in range(1, 7)
        if d["cut"]:  # a cut die's box is clipped at the frame border
            x0, y0, x1, y1 = d["bbox"]
            assert x0 == 0 or y0 == 0 or x1 == W or y1 == H
    # every hard frame has cocked dice, and the light is at the extremes
    for _, entry in hard_frames:
        assert any(d["cocked"] for d in entry["dice"])
        assert entry["light_k"] <= 2900 or entry["light_k"] >= 6200
        assert 0.7 <= abs(entry["light_ev"]) <= 1.0


def test_easy_preset_is_gentle():
    for seed in range(4):
        _, entry = render_scene(seed, "easy")
        assert not any(d["cocked"] or d["cut"] for d in entry["dice"])
        assert 2 <= len(entry["dice"]) <= 6
        assert 4900 <= entry["light_k"] <= 6100


# OpenCV hue is 0..179; ranges are generous but disjoint where the colours are.
HUES = {
    "red": [(0, 9), (170, 180)],
    "orange": [(7, 21)],
    "yellow": [(20, 38)],
    "green": [(40, 90)],
    "blue": [(95, 125)],
    "purple": [(128, 158)],
    "pink": [(155, 180), (0, 3)],
}


def test_rendered_die_is_coloured_like_its_label():
    colours = [*HUES, "white", "black"]
    for seed in (0, 1):
        spec = random_scene(seed, "easy")
        dice = [centre_die(spec, c, dx=(i - 4) * 25, value=1 + i % 6,
                           pip_colour="black" if c in ("white", "yellow") else "white")
                for i, c in enumerate(colours)]
        img, labels = render(spec, dice)
        assert [lab["colour"] for lab in labels] == colours
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        for lab in labels:
            x0, y0, x1, y1 = lab["bbox"]
            cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 4, (y1 - y0) / 4
            patch = hsv[int(cy - ry) : int(cy + ry), int(cx - rx) : int(cx + rx)].reshape(-1, 3)
            colour = lab["colour"]
            if colour == "white":
                assert np.median(patch[:, 1]) < 60 and np.median(patch[:, 2]) > 150
            elif colour == "black":
                assert np.median(patch[:, 2]) < 70
            else:
                sat = patch[patch[:, 1] > 80]
                assert len(sat) > 0.5 * len(patch), colour
                hue = float(np.median(sat[:, 0]))
                assert any(lo <= hue <= hi for lo, hi in HUES[colour]), (colour, hue)


def test_glare_and_blur_never_change_the_label():
    spec = random_scene(2, "easy")
    dice = [centre_die(spec, "red", -30, value=3, glare=True, blur=0.3, blur_deg=20),
            centre_die(spec, "green", 30, value=6, glare=True)]
    _, labels = render(spec, dice)
    assert [lab["value"] for lab in labels] == [3, 6]


def test_glare_is_a_bright_spot_on_the_die():
    spec = random_scene(3, "easy")
    plain, (lab,) = render(spec, [centre_die(spec, "blue", value=2)])
    shiny, (lab2,) = render(spec, [centre_die(spec, "blue", value=2, glare=True)])
    assert lab == lab2
    x0, y0, x1, y1 = (int(v) for v in lab["bbox"])
    diff = shiny[y0:y1, x0:x1].astype(int) - plain[y0:y1, x0:x1].astype(int)
    brighter = diff.sum(axis=2) > 60
    assert brighter.mean() > 0.03  # a visible highlight...
    assert (diff.sum(axis=2) >= -3).all()  # ...that only ever lightens
    outside = np.ones(plain.shape[:2], bool)
    outside[y0 - 2 : y1 + 3, x0 - 2 : x1 + 3] = False  # box edges are antialiased
    assert np.array_equal(plain[outside], shiny[outside])  # and stays on the die


def test_a_lamp_mirrored_over_the_whole_top_face_washes_it_but_not_the_bevels():
    """glare_size: the renders' second lamp whitens a glossy die's whole top face; what the
    colour still shows in is the bevels and sides around it."""
    spec = random_scene(3, "easy")
    plain, (lab,) = render(spec, [centre_die(spec, "blue", value=2)])
    lit = {}
    for size in (1.0, 3.5):
        img, (lab2,) = render(spec, [centre_die(spec, "blue", value=2, glare=True,
                                                glare_size=size)])
        assert lab2 == lab
        x0, y0, x1, y1 = (int(v) for v in lab["bbox"])
        lit[size] = (img[y0:y1, x0:x1].astype(int) - plain[y0:y1, x0:x1].astype(int)).sum(2)
    assert (lit[3.5] > 60).mean() > 3 * (lit[1.0] > 60).mean()  # most of the face, not a streak
    rim = np.zeros(lit[3.5].shape, bool)
    rim[:3], rim[-3:], rim[:, :3], rim[:, -3:] = True, True, True, True
    face = lit[3.5][~rim]
    assert np.abs(lit[3.5][rim]).mean() < 0.2 * face.mean()  # the outline keeps its colour


def _annulus(img: np.ndarray, bbox: list[float], r0: float, r1: float) -> np.ndarray:
    """Pixels (BGR, float) between r0 and r1 box sides from the box centre."""
    x0, y0, x1, y1 = bbox
    cx, cy, s = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0)
    yy, xx = np.mgrid[0 : img.shape[0], 0 : img.shape[1]]
    r = np.hypot(xx - cx, yy - cy) / s
    return img[(r >= r0) & (r < r1)].astype(float)


def test_marbled_and_speckled_dice_vary_across_the_face_and_keep_their_label():
    spec = random_scene(4, "easy")
    plain, (lab,) = render(spec, [centre_die(spec, "blue", value=1)])
    # between the lone pip (0.12 side) and the face's edge: plain plastic on a plain die
    plain_spread = float(_annulus(plain, lab["bbox"], 0.18, 0.33).sum(axis=1).std())
    for material in ("marbled", "speckled"):
        die = centre_die(spec, "blue", value=1, material=material, accent=(0.95, 0.95, 0.95))
        img, (lab2,) = render(spec, [die])
        assert lab2 == lab  # the label is the die's, whatever its plastic
        spread = float(_annulus(img, lab["bbox"], 0.18, 0.33).sum(axis=1).std())
        assert spread > 3 * plain_spread + 10, material  # veins and flecks are edges


def test_a_ring_one_has_the_die_colour_in_its_middle_and_a_plain_one_does_not():
    spec = random_scene(6, "easy")
    reds, rims = {}, {}
    for one in ("pip", "big", "ring"):
        img, (lab,) = render(spec, [centre_die(spec, "red", value=1, one=one)])
        middle = _annulus(img, lab["bbox"], 0.0, 0.03)
        reds[one] = float(middle[:, 2].mean() - middle[:, 1].mean())  # red over green
        rim = _annulus(img, lab["bbox"], 0.135, 0.155)  # past a plain pip, inside a big one
        rims[one] = float(rim[:, 2].mean() - rim[:, 1].mean())
    assert reds["pip"] < 40 and reds["big"] < 40  # white pip in the middle
    assert reds["ring"] > 80  # red die colour showing through the ring's hole
    assert rims["pip"] > 80 and rims["big"] < 40  # a big 1 is a larger white disc


def test_royale_s_gray_dice_are_blank_and_have_no_value():
    """DESIGN.md: gray is Royale's blank dice. A face of a gray die is one flat grey; the
    same die in white shows its five dark pips there."""
    spec = random_scene(6, "easy")
    spreads = {}
    for colour in ("gray", "white"):
        img, (lab,) = render(spec, [centre_die(spec, colour, pip_colour="black")])
        face = _annulus(img, lab["bbox"], 0.0, 0.42).astype(np.float32).mean(axis=1)
        spreads[colour] = float(np.percentile(face, 95) - np.percentile(face, 5))
        assert lab["value"] == (None if colour == "gray" else 5)
    assert spreads["gray"] < 25 and spreads["white"] > 80


def test_fancy_keeps_what_a_reader_must_report():
    spec = random_scene(7, "normal")
    rng = np.random.default_rng(3)
    dice = random_dice(spec, np.random.default_rng(7))
    made = [fancy(d, rng) for d in dice]
    assert {d.material for d in made} >= {"marbled", "speckled"} or len(made) < 4
    for d, m in zip(dice, made, strict=True):
        assert (m.value, m.colour, m.big, m.cocked, m.x, m.y) == (
            d.value, d.colour, d.big, d.cocked, d.x, d.y)
    _, a = render(spec, dice, seed=7)
    _, b = render(spec, made, seed=7)
    assert [lab["value"] for lab in a] == [lab["value"] for lab in b]
    assert [lab["colour"] for lab in a] == [lab["colour"] for lab in b]


def _flat_and_leaning_labels() -> tuple[dict, dict]:
    """The labels of one blue die drawn flat and drawn leaning 35 degrees, alone in a scene."""
    spec = random_scene(5, "easy")
    flat = centre_die(spec, "blue", angle_deg=10)
    leaning = centre_die(spec, "blue", angle_deg=10, cocked=True, value=None, tilt_deg=35)
    _, (lf,) = render(spec, [flat])
    _, (lc,) = render(spec, [leaning])
    return lf, lc


def test_cocked_die_shows_more_than_its_top_face():
    lf, lc = _flat_and_leaning_labels()
    area = [(b[2] - b[0]) * (b[3] - b[1]) for b in (lf["bbox"], lc["bbox"])]
    assert lc["cocked"] and lc["value"] is None
    assert area[1] > 1.15 * area[0]


def test_a_cocked_dies_top_face_box_frames_its_clean_face_only():
    # Training crops cut round a cocked die's top face stand for the detector's box on it:
    # the face leaning 35 degrees (cos 35 = 0.82 of a flat die's), inside the whole die's box
    # and well short of it, which holds the side face too.
    lf, lc = _flat_and_leaning_labels()
    assert "top_bbox" not in lf
    top, whole = lc["top_bbox"], lc["bbox"]

    def area(b: list[float]) -> float:
        return (b[2] - b[0]) * (b[3] - b[1])

    assert top[0] >= whole[0] - 2 and top[1] >= whole[1] - 2
    assert top[2] <= whole[2] + 2 and top[3] <= whole[3] + 2
    assert area(top) < 0.75 * area(whole)
    assert 0.7 * area(lf["bbox"]) < area(top) < 0.95 * area(lf["bbox"])
    # Manifests keep the shared format's keys unless the top boxes are asked for.
    _, plain = render_scene(40_001, "hard")
    _, asked = render_scene(40_001, "hard", top_boxes=True)
    assert all("top_bbox" not in d for d in plain["dice"])
    assert [("top_bbox" in d) for d in asked["dice"]] == [d["cocked"] for d in asked["dice"]]
    assert any(d["cocked"] for d in asked["dice"])


def test_die_size_follows_the_camera_mount():
    seen = set()
    for seed in range(12):
        spec = random_scene(seed, "normal")
        _, (lab,) = render(spec, [centre_die(spec, "white", pip_colour="black")])
        side = lab["bbox"][2] - lab["bbox"][0]
        if spec.mount == "mounted":
            assert 50 <= side <= 110, side
        else:
            assert 17 <= side <= 55, side
        seen.add(spec.mount)
    assert seen == {"mounted", "loose"}


def _hfov_deg(spec) -> float:
    k, _, _, _, _, _, _ = cv2.decomposeProjectionMatrix(np.array(spec.camera, np.float64))
    return float(np.degrees(2 * np.arctan(spec.width / 2 / (k[0, 0] / k[2, 2]))))


def test_wide_preset_looks_through_a_wide_lens_and_the_others_do_not():
    mounts = set()
    for seed in range(8):
        wide = random_scene(seed, "wide")
        assert 88 <= _hfov_deg(wide) <= 105
        mounts.add(wide.mount)
        _, (lab,) = render(wide, [centre_die(wide, "white", pip_colour="black")])
        side = lab["bbox"][2] - lab["bbox"][0]
        # A hand-held wide camera 40-70 cm up sees dice as small as the loose renders' 17 px.
        assert (12 <= side <= 30) if wide.mount == "loose" else (30 <= side <= 80), side
        for preset in ("easy", "normal", "hard"):
            assert _hfov_deg(random_scene(seed, preset)) < 80
    assert mounts == {"mounted", "loose"}


def test_tray_corners_frame_the_dice():
    for seed in range(3):
        spec = random_scene(seed, "normal")
        corners = tray_corners(spec)
        assert corners.shape == (4, 2)
        assert (corners[:, 0] >= 0).all() and (corners[:, 0] <= W).all()
        assert (corners[:, 1] >= 0).all() and (corners[:, 1] <= H).all()
        _, labels = render(spec, random_dice(spec, np.random.default_rng(seed)))
        poly = corners.astype(np.float32).reshape(-1, 1, 2)
        for lab in labels:
            x0, y0, x1, y1 = lab["bbox"]
            centre = ((x0 + x1) / 2, (y0 + y1) / 2)
            # dice lean outwards in perspective, so allow half a die beyond the floor edge
            assert cv2.pointPolygonTest(poly, centre, True) > -0.5 * (x1 - x0)


def test_hand_hides_dice_and_drops_their_labels():
    dropped = 0
    for seed in range(3):
        spec = random_scene(seed, "normal")
        dice = random_dice(spec, np.random.default_rng(seed), n=14)
        plain, labels = render(spec, dice, seed=seed)
        hand, hand_labels = render(spec, dice, seed=seed, hand=True)
        assert len(plain) and not np.array_equal(plain, hand)
        boxes = [lab["bbox"] for lab in labels]
        assert all(lab["bbox"] in boxes for lab in hand_labels)
        dropped += len(labels) - len(hand_labels)
    assert dropped > 0


def test_write_set_manifest_is_well_formed_and_reproducible(tmp_path):
    m1 = write_set(tmp_path / "a", 3, preset="hard", seed=7, width=640, height=480)
    m2 = write_set(tmp_path / "b", 3, preset="hard", seed=7, width=640, height=480)
    assert m1 == tmp_path / "a" / "manifest.jsonl"
    assert m1.read_bytes() == m2.read_bytes()
    lines = [json.loads(line) for line in m1.read_text().splitlines()]
    assert len(lines) == 3
    for i, entry in enumerate(lines):
        assert entry["image"] == f"images/synth_{i:05d}.jpg"
        assert entry["width"] == 640 and entry["height"] == 480
        path = m1.parent / entry["image"]
        assert path.read_bytes() == (m2.parent / entry["image"]).read_bytes()
        img = cv2.imread(str(path))
        assert img.shape == (480, 640, 3)
        for d in entry["dice"]:
            assert set(d) >= LABEL_KEYS
            assert d["value"] is None or d["value"] in range(1, 7)
            assert d["colour"] in HUES or d["colour"] in ("white", "black")
            assert isinstance(d["big"], bool) and isinstance(d["cut"], bool)
            assert len(d["bbox"]) == 4 and all(isinstance(v, float | int) for v in d["bbox"])
            x0, y0, x1, y1 = d["bbox"]
            assert 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480


def test_cocked_override_places_that_many_leaning_dice():
    # Training sets ask for more cocked dice than the presets give; each must lean on
    # something (a die or a wall), so the tray still holds a plain die for it to rest on.
    for seed in range(4):
        spec = random_scene(seed, "hard")
        dice = random_dice(spec, np.random.default_rng(seed), n=8, cocked=(3, 3))
        cocked = [d for d in dice if d.cocked]
        assert len(cocked) == 3
        assert all(d.value is None and 18 <= d.tilt_deg <= 45 for d in cocked)
        assert sum(not d.cocked for d in dice) >= 1


def test_lean_override_sets_the_cocked_dice_lean():
    spec = random_scene(1, "hard")
    dice = random_dice(spec, np.random.default_rng(1), n=8, cocked=(4, 4), lean=(18, 20))
    tilts = [d.tilt_deg for d in dice if d.cocked]
    assert len(tilts) == 4 and all(18 <= t <= 20 for t in tilts), tilts


def test_a_pip_under_glare_keeps_its_contrast():
    """A pip is a matte bowl that mirrors no lamp: under a highlight a dark pip stays dark
    beside the whitened face (as on the path-traced renders), where glare laid over it as over
    the face would leave it as light as the face and the value unreadable."""
    spec = random_scene(3, "easy")
    covered = 0
    for spin in range(12):
        kw = {"colour": "yellow", "value": 6, "pip_colour": "black", "spin": spin}
        plain, (lab,) = render(spec, [centre_die(spec, **kw)])
        shiny, _ = render(spec, [centre_die(spec, glare=True, **kw)])
        x0, y0, x1, y1 = (int(v) for v in lab["bbox"])
        g0 = cv2.cvtColor(plain[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY).astype(float)
        g1 = cv2.cvtColor(shiny[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY).astype(float)
        face = g0 > 120
        n, blobs = cv2.connectedComponents((g0 < 60).astype(np.uint8))
        for k in range(1, n):
            pip = blobs == k
            if pip.sum() < 6:
                continue
            near = cv2.dilate(pip.astype(np.uint8), np.ones((9, 9), np.uint8)).astype(bool)
            ring = near & face
            lit = (g1 - g0)[ring].mean() if ring.any() else 0.0
            if lit > 15:  # the face around this pip is under the highlight
                covered += 1
                assert g1[pip].mean() < 0.6 * g1[ring].mean(), (spin, k)
    assert covered >= 3  # the highlight did land on pips


def test_a_translucent_die_shows_the_floor_and_its_hidden_pips_through_its_body():
    """Issue 3 names red pips on translucent dice: their bodies let the floor through, and
    the pips of the faces underneath show faintly beside the top face's."""
    light = random_scene(4, "easy")
    dark = dataclasses.replace(light, floor_bgr=(0.15, 0.15, 0.15), floor_ink=(0.1, 0.1, 0.1))
    bodies = {}
    for material in ("solid", "translucent"):
        for name, spec in (("light", light), ("dark", dark)):
            die = centre_die(spec, "white", value=1, pip_colour="red", material=material)
            img, (lab,) = render(spec, [die])
            bodies[material, name] = _annulus(img, lab["bbox"], 0.18, 0.33)
    solid_shift = abs(bodies["solid", "light"].mean() - bodies["solid", "dark"].mean())
    clear_shift = abs(bodies["translucent", "light"].mean() - bodies["translucent", "dark"].mean())
    assert solid_shift < 3 and clear_shift > 15, (solid_shift, clear_shift)  # the floor shows
    # A 1 on top has the 6 beneath it: its pips show as red blotches around the lone pip.
    reddish = [float(np.percentile(b[:, 2] - b[:, 1], 95)) for b in
               (bodies["solid", "light"], bodies["translucent", "light"])]
    assert reddish[1] > reddish[0] + 10, reddish


@pytest.mark.parametrize("material", ["solid", "marbled", "speckled", "translucent"])
def test_another_maker_s_dice_lie_where_the_game_s_would_and_keep_their_labels(material: str):
    """bench/makers.py compares the same scenes across plastics: only the pixels may change."""
    game, entry = render_scene(12, "normal")
    other, made = render_scene(12, "normal", material=material)
    assert made.pop("material") == material
    assert made == entry
    if material != "solid":  # a solid die differs only where its maker's 1 or pips do
        assert np.abs(other.astype(int) - game.astype(int)).max() > 50


def test_an_unknown_material_is_named_in_the_error():
    with pytest.raises(ValueError, match="glass"):
        render_scene(12, "normal", material="glass")

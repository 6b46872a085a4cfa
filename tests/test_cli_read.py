"""`vegas-table read` contract (DESIGN.md): JSON shape, exit 2 on unreadable files."""

from __future__ import annotations

import json

import cv2
import numpy as np

PIPS = {1: [(0.5, 0.5)], 3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
        4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)]}


def draw_table(path, dice=((300, 240, 4), (700, 500, 3), (500, 700, 1))):
    """A grey tray floor with red dice seen from straight above."""
    img = np.full((960, 1280, 3), (150, 160, 165), np.uint8)
    side = 80
    for x, y, value in dice:
        cv2.rectangle(img, (x, y), (x + side, y + side), (40, 40, 200), cv2.FILLED)
        for px, py in PIPS[value]:
            cv2.circle(img, (int(x + px * side), int(y + py * side)), 8, (245, 245, 245),
                       cv2.FILLED, cv2.LINE_AA)
    cv2.imwrite(str(path), img)


def test_read_json_contract(cli, tmp_path):
    image = tmp_path / "table.png"
    draw_table(image)
    out = cli("read", "--json", str(image))
    assert out.returncode == 0, out.stderr
    [line] = out.stdout.splitlines()
    result = json.loads(line)
    assert result["image"] == str(image)
    assert (result["width"], result["height"]) == (1280, 960)
    assert len(result["dice"]) == 3
    for die in result["dice"]:
        assert set(die) == {"value", "colour", "big", "bbox", "confidence", "doubts"}
        assert die["value"] is None or 1 <= die["value"] <= 6
        # Doubts say why a read is not certain, and only then.
        certain = die["value"] is not None and die["confidence"] >= 0.9
        assert all(isinstance(code, str) for code in die["doubts"])
        assert (die["doubts"] == []) == certain
        assert isinstance(die["big"], bool) and 0 <= die["confidence"] <= 1
        x0, y0, x1, y1 = die["bbox"]
        assert 0 <= x0 < x1 <= 1280 and 0 <= y0 < y1 <= 960
    by_x = sorted(result["dice"], key=lambda d: d["bbox"][0])
    assert [d["value"] for d in by_x] == [4, 1, 3]
    assert {d["colour"] for d in by_x} == {"red"}


def test_read_unreadable_file_exits_2_naming_it(cli, tmp_path):
    good = tmp_path / "table.png"
    draw_table(good)
    bad = tmp_path / "notes.txt"
    bad.write_text("not an image")
    out = cli("read", "--json", str(good), str(bad), str(tmp_path / "missing.jpg"))
    assert out.returncode == 2
    assert len(out.stdout.splitlines()) == 1  # the good image is still read
    [message] = out.stderr.strip().splitlines()
    assert "notes.txt" in message and "missing.jpg" in message


def test_read_with_a_broken_profile_exits_2(cli, tmp_path):
    image = tmp_path / "t.png"
    draw_table(image)
    profile = tmp_path / "p.json"
    profile.write_text("{}")
    out = cli("read", "--profile", str(profile), str(image))
    assert out.returncode == 2 and "not a Vegas Table profile" in out.stderr


def test_synth_then_eval_round_trip(cli, tmp_path):
    out = cli("synth", str(tmp_path / "set"), "--n", "2", "--preset", "easy", "--seed", "4")
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "set" / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 2
    entry = json.loads(lines[0])
    assert (tmp_path / "set" / entry["image"]).is_file()
    assert entry["dice"] and {"value", "bbox", "colour", "big"} <= set(entry["dice"][0])
    report = cli("eval", str(tmp_path / "set"))
    assert report.returncode == 0, report.stderr
    assert "recall" in report.stdout and "set" in report.stdout


def test_synth_offers_the_generator_s_presets_and_materials():
    from vision import synth
    from web.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["synth"]
    choices = {a.dest: tuple(a.choices) for a in sub._actions if a.choices}
    assert choices == {"preset": synth.PRESETS, "material": synth.MATERIALS}


def test_synth_writes_other_makers_dice_where_the_game_s_would_lie(cli, tmp_path):
    for name, extra in (("game", ()), ("clear", ("--material", "translucent"))):
        out = cli("synth", str(tmp_path / name), "--n", "1", "--preset", "easy", "--seed", "4",
                  *extra)
        assert out.returncode == 0, out.stderr
    game, clear = (json.loads((tmp_path / n / "manifest.jsonl").read_text())
                   for n in ("game", "clear"))
    assert clear.pop("material") == "translucent" and clear == game
    out = cli("synth", str(tmp_path / "x"), "--material", "glass")
    assert out.returncode == 2 and "glass" in out.stderr


def test_eval_on_a_folder_without_manifest_exits_2(cli, tmp_path):
    out = cli("eval", str(tmp_path))
    assert out.returncode == 2 and "manifest.jsonl" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1

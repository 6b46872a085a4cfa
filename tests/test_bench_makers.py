"""bench/makers.py: one row per plastic, on the same scenes as the game's dice."""

from __future__ import annotations

import pytest

from tests.benches import load_bench

MAKERS = load_bench("makers")


def test_a_row_for_the_game_s_dice_and_each_plastic_asked_for(capsys: pytest.CaptureFixture):
    assert MAKERS.main(["--scenes", "2", "--presets", "easy", "--materials",
                        "translucent"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()
            if line.startswith("easy")]
    assert [r[1] for r in rows] == ["game", "translucent"]
    for r in rows:
        images, dice = int(r[2]), int(r[3])
        assert images == 2 and dice >= 2
        assert rows[0][3] == r[3]  # the same dice, whatever they are made of
        assert all(v.endswith("%") for v in r[4:7])
        assert r[8].endswith("%") and r[9].endswith("%")  # colour, and the Biggy flag


@pytest.mark.parametrize("args, named", [(["--materials", "glass"], "glass"),
                                         (["--presets", "foggy"], "foggy"),
                                         (["--scenes", "0"], "--scenes")])
def test_bad_arguments_are_named(args: list[str], named: str,
                                 capsys: pytest.CaptureFixture):
    with pytest.raises(SystemExit) as stop:
        MAKERS.main(args)
    assert stop.value.code == 2
    assert named in capsys.readouterr().err

"""The demo camera: deterministic, and its frames show exactly what the script says.

The labels compared here come from synth.render (what it drew), not from the script, so a
demo that animated the wrong dice, let the wrong ones leave first or lost a die would fail.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
import pytest

from vision.demo import DemoSource, Timing, Turn, demo_script
from vision.sources import Frame

SIZE = (480, 360)
SCRIPT = [
    ("red", ["red"] * 6 + ["white"] * 2, [], [3, 5, 3, 1, 6, 5, 3, 2], 3),
    ("blue", ["blue"] * 5 + ["white"], [], [4, 4, 2, 6, 1, 4], 4),
    ("green", ["green", "green", "white"], [], [2, 5, 5], 5),
    ("purple", ["purple"] * 4 + ["purple"], [True, False, False, False, False],
     [6, 6, 6, 6, 6], 6),  # one value only: nothing stays behind; one Biggy
]


def play(script=SCRIPT, **kw) -> tuple[DemoSource, list[Frame]]:
    src = DemoSource(script, size=SIZE, **kw)
    return src, list(src)


def dice_of(labels: list[dict]) -> Counter:
    return Counter((d["colour"], d["value"], d["big"]) for d in labels)


def scripted(turn: Turn, which=lambda v: True) -> Counter:
    return Counter((c, v, turn.is_big(i)) for i, (c, v) in enumerate(zip(turn.colours,
                                                                           turn.values,
                                                                           strict=True))
                   if which(v))


def digest(frames: list[Frame]) -> str:
    h = hashlib.sha256()
    for f in frames:
        h.update(f.image.tobytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def game() -> tuple[DemoSource, list[Frame]]:
    return play(seed=3, hand_p=0.5)


def test_same_script_and_seed_give_the_same_frames(game) -> None:
    _src, frames = game
    again = play(seed=3, hand_p=0.5)[1]
    assert len(frames) == len(again) and digest(frames) == digest(again)
    other = play(seed=4, hand_p=0.5)[1]
    assert digest(other) != digest(frames)


def test_stream_is_whole_timed_and_ends(game) -> None:
    src, frames = game
    assert [f.index for f in frames] == list(range(len(frames)))
    assert frames[-1].t == pytest.approx((len(frames) - 1) / 15)
    assert frames[0].image.shape == (SIZE[1], SIZE[0], 3)
    assert src.ended and "4 turns" in src.message and src.read() is None
    assert [t.end for t in src.turns] == [t.start for t in src.turns[1:]] + [len(frames)]


def test_settled_frames_show_exactly_the_rolled_dice(game) -> None:
    src, frames = game
    assert len(src.turns) == len(SCRIPT)
    for tt, raw in zip(src.turns, SCRIPT, strict=True):
        turn = Turn.of(raw)
        want = scripted(turn)
        assert sum(len(r) for r in tt.settled) >= 15  # a 1 s settle window fits
        for r in tt.settled:
            for i in r:
                truth = frames[i].meta["truth"]
                assert truth["phase"] == "settled" and truth["turn"] == tt.turn
                assert dice_of(truth["dice"]) == want, (tt.turn, i)
                assert all(d["cocked"] is False and d["cut"] is False for d in truth["dice"])
        # still frames differ only by sensor noise, as a camera's do
        a, b = (frames[i].image.astype(int) for i in tt.settled[0][:2])
        assert 0 < np.abs(a - b).mean() < 4


def test_chosen_dice_leave_before_the_others(game) -> None:
    src, frames = game
    for tt, raw in zip(src.turns, SCRIPT, strict=True):
        turn = Turn.of(raw)
        chosen = scripted(turn, lambda v, c=turn.chosen: v == c)
        others = scripted(turn, lambda v, c=turn.chosen: v != c)
        assert tt.settled[-1].stop == tt.lift.start
        assert tt.lift.stop == tt.rest.start and tt.rest.stop == tt.scoop.start
        for i in tt.lift:  # the others stay put while the chosen ones move out
            assert dice_of(frames[i].meta["truth"]["dice"]) - chosen == others
        for i in tt.rest:
            assert dice_of(frames[i].meta["truth"]["dice"]) == others
        for i in tt.empty:
            assert frames[i].meta["truth"]["dice"] == []
        if not others:
            assert len(tt.rest) == 0 and len(tt.scoop) == 0
        else:
            assert len(tt.rest) >= 5
            # the pixels agree: where a chosen die sat, the rest frame shows floor
            settled = frames[tt.settled[-1][-1]]
            lab = next(d for d in settled.meta["truth"]["dice"] if d["value"] == turn.chosen)
            x0, y0, x1, y1 = (int(v) for v in lab["bbox"])
            before = settled.image[y0:y1, x0:x1].astype(int)
            after = frames[tt.rest[0]].image[y0:y1, x0:x1].astype(int)
            assert np.abs(before - after).mean() > 15


def test_dice_tumble_in_blurred(game) -> None:
    src, frames = game
    tt = src.turns[0]
    assert len(tt.fall) >= 4
    first = frames[tt.fall[0]].meta["truth"]
    assert first["phase"] == "fall" and len(first["dice"]) >= 1
    settled = frames[tt.settled[0][0]].image.astype(int)
    assert np.abs(frames[tt.fall[0]].image.astype(int) - settled).mean() > 1


def test_a_hand_covers_the_tray_in_some_turn(game) -> None:
    src, frames = game
    hands = [tt for tt in src.turns if tt.hand is not None]
    assert hands, "seed 3 with hand_p=0.5 should bring a hand"
    tt = hands[0]
    assert len(tt.hand) >= Timing().hand[0] and len(tt.settled) == 2
    assert tt.settled[0].stop == tt.hand.start and tt.hand.stop == tt.settled[1].start
    clear = frames[tt.settled[0][-1]].image.astype(int)
    for i in tt.hand:
        assert frames[i].meta["truth"]["hand"] is True
    covered = np.abs(frames[tt.hand[0]].image.astype(int) - clear).max(axis=2) > 40
    assert covered.mean() > 0.03  # a real part of the picture is hand
    assert not any(frames[i].meta["truth"]["hand"] for r in tt.settled for i in r)


def test_no_hand_when_told_and_default_rate_brings_some() -> None:
    quick = Timing(lead_in=0, fall=1, settle=1, hand=(1, 1), after_hand=1, lift=1, rest=1,
                   scoop=1, empty=1)
    src = DemoSource(demo_script(1, rounds=1), size=(160, 120), hand_p=0.0, timing=quick)
    list(src)
    assert all(t.hand is None for t in src.turns)
    src = DemoSource(demo_script(1, rounds=1), size=(160, 120), timing=quick)
    list(src)
    assert 0 < sum(t.hand is not None for t in src.turns) < len(src.turns)


def test_turn_validation_names_the_problem() -> None:
    with pytest.raises(ValueError, match="teal"):
        Turn.of(("anna", ["teal", "red"], [1, 2], 1))
    with pytest.raises(ValueError, match="chosen 4 was not rolled"):
        Turn.of(("anna", ["red", "red"], [1, 2], 4))
    with pytest.raises(ValueError, match="same"):
        Turn.of(("anna", ["red"], [1, 2], 1))
    t = Turn.of(("red", ["red", "white"], [True, False], [2, 2], 2))
    assert t.is_big(0) and not t.is_big(1)


def test_demo_script_places_every_die_once_per_round() -> None:
    turns = demo_script(5, players=("red", "blue"), dice_each=8, white_each=4, rounds=2)
    placed: Counter = Counter()
    for t in turns:
        placed.update(c for c, v in zip(t.colours, t.values, strict=True) if v == t.chosen)
    assert placed == {"red": 16, "blue": 16, "white": 16}


def test_realtime_paces_at_15_fps() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    src = DemoSource(SCRIPT[:1], size=(160, 120), realtime=True, clock=lambda: now[0],
                     sleep=sleep)
    src.set_controls({"ExposureTime": 1000})
    frames = list(src)
    assert sum(slept) == pytest.approx((len(frames) - 1) / 15)
    assert "ExposureTime" in src.controls().unsupported  # the demo camera has no controls

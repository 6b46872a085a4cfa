"""The `demo` camera: a rendered tray in which a scripted game is played, frame by frame.

It lets the whole product (tracker, session, pages) run end to end without a camera, and lets
tests and benchmarks know exactly what the camera showed: every frame carries its truth (the
phase of the turn and the labels synth.render drew), and `turns` lists each turn's frame ranges.

Vision knows nothing of the rules, so the demo is driven by a plain script of turns (who moves,
which dice were rolled, which value they chose); the session builds it from the game, or
`demo_script` makes a rules-free one. Per turn: the dice tumble in (motion-blurred frames),
settle, the chosen value's dice leave, then the rest, then the tray stays empty a moment; now
and then a hand hangs over the tray. Same script and seed -> the same frames.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from vision import synth
from vision.sources import DEFAULT_FPS, Frame, Source, SourceError

DEFAULT_SIZE = (1280, 960)
DEFAULT_SCENE = 5  # easy preset: greyboard floor on a cloth, dice ~68 px at 1280 wide


@dataclass(frozen=True)
class Turn:
    """One roll: the player to move, the dice rolled (colour, value, big) and the value chosen.

    Colours include neutral dice ("white") and the dice no player owns (Royale's black extra
    dice, thrown for a casino tile); `big` is empty or one flag per die (Royale). `pause` is
    how long (s) the tray stays empty before the dice come: the table deciding something
    first (a casino tile's question).
    """

    player: str
    colours: tuple[str, ...]
    values: tuple[int, ...]
    chosen: int
    big: tuple[bool, ...] = ()
    pause: float = 0.0

    def __post_init__(self) -> None:
        n = len(self.colours)
        if n == 0 or len(self.values) != n or (self.big and len(self.big) != n):
            raise ValueError(f"turn of {self.player}: colours, values and big flags must have "
                             f"the same, non-zero length ({n}, {len(self.values)}, "
                             f"{len(self.big)})")
        unknown = sorted({c for c in self.colours if c not in synth.COLOURS})
        if unknown:
            raise ValueError(f"turn of {self.player}: the renderer has no dice of colour "
                             f"{', '.join(unknown)} (it has {', '.join(synth.COLOURS)})")
        if any(v not in range(1, 7) for v in self.values):
            raise ValueError(f"turn of {self.player}: values must be 1-6, got {self.values}")
        if self.chosen not in self.values:
            raise ValueError(f"turn of {self.player}: chosen {self.chosen} was not rolled "
                             f"{self.values}")
        if not 0 <= self.pause < 600:
            raise ValueError(f"turn of {self.player}: pause must be 0-600 s, got {self.pause}")

    @classmethod
    def of(cls, t: Turn | Sequence[Any]) -> Turn:
        """Accept a Turn, (player, colours, values, chosen) or (player, colours, big, values,
        chosen), the last being the order the session's scripts use."""
        if isinstance(t, Turn):
            return t
        if len(t) == 4:
            player, colours, values, chosen = t
            big: Sequence[bool] = ()
        elif len(t) == 5:
            player, colours, big, values, chosen = t
        else:
            raise ValueError(f"a turn is (player, colours, [big,] values, chosen), got {t!r}")
        return cls(str(player), tuple(str(c) for c in colours), tuple(int(v) for v in values),
                   int(chosen), tuple(bool(b) for b in (big or ())))

    def is_big(self, i: int) -> bool:
        return bool(self.big[i]) if self.big else False


@dataclass(frozen=True)
class Timing:
    """Frames per phase (at 15 fps). `settle` exceeds a 1 s settle window with margin."""

    lead_in: int = 8  # empty tray before the first roll
    fall: int = 6  # dice tumbling in, motion-blurred
    settle: int = 18
    hand: tuple[int, int] = (15, 30)  # a hand over the tray, when it comes
    after_hand: int = 12  # settled again after the hand
    lift: int = 3  # the chosen dice moving out
    rest: int = 9  # the others still alone, so "which value left first" is clear
    scoop: int = 3  # the others moving out
    empty: int = 8


@dataclass
class TurnTruth:
    """Where a turn's phases lie in the stream (frame indices, end exclusive)."""

    turn: int
    player: str
    dice: list[dict[str, Any]]  # {"colour", "value", "big"} as scripted
    chosen: int
    start: int
    fall: range  # (after `wait`, the empty tray of the turn's pause)
    settled: list[range]
    hand: range | None
    lift: range
    rest: range
    scoop: range
    empty: range
    end: int
    rolled_out: int | None = None  # index into `dice` of a die that left the tray in the fall
    bumped: int | None = None  # index of a staying die nudged while the chosen ones were lifted
    wait: range = range(0)  # the empty tray of the turn's pause, before the fall


@dataclass
class _Planned:
    dice: list[synth.DiePose]
    phase: str
    turn: int | None
    hand_seed: int | None = None


@dataclass
class _Layout:
    """Per-scene geometry the animation needs, computed once."""

    spec: synth.SceneSpec
    H: np.ndarray  # floor mm -> image px
    margin_px: float

    def to_px(self, x: float, y: float) -> tuple[float, float]:
        p = self.H @ np.array([x, y, 1.0])
        return float(p[0] / p[2]), float(p[1] / p[2])


def demo_script(
    seed: int = 0, players: Sequence[str] = ("red", "blue", "green", "yellow"),
    dice_each: int = 8, white_each: int = 2, rounds: int = 4,
) -> list[Turn]:
    """A rules-free stand-in for a game: players in turn roll what they hold (their dice and
    their neutral white dice) and place one rolled value, until all dice are out, per round.

    Enough for a stand-alone demo; a session that plays a real edition scripts from the game.
    """
    rng = np.random.default_rng([seed, 1234])
    turns: list[Turn] = []
    for _ in range(rounds):
        held = {p: [p] * dice_each + ["white"] * white_each for p in players}
        while any(held.values()):
            for p in players:
                if not held[p]:
                    continue
                values = [int(v) for v in rng.integers(1, 7, len(held[p]))]
                chosen = int(values[int(rng.integers(len(values)))])
                turns.append(Turn(p, tuple(held[p]), tuple(values), chosen))
                held[p] = [c for c, v in zip(held[p], values, strict=True) if v != chosen]
    return turns


class DemoSource(Source):
    """Frames of a scripted game rendered by synth, `fps` frames per second of stream time.

    `script`: Turns or tuples (see Turn.of), consumed lazily, so a session may hand a generator
    that scripts each turn from its game state. The source ends when the script does.
    Unpaced unless `realtime`. Each frame's meta["truth"] is {"turn", "phase", "hand",
    "dice"} (dice: synth.render labels); it is for tests and benchmarks, never for the tracker.
    """

    def __init__(
        self, script: Iterable[Turn | Sequence[Any]] | None = None, *, seed: int = 0,
        size: tuple[int, int] = DEFAULT_SIZE, fps: float = DEFAULT_FPS, preset: str = "easy",
        scene_seed: int = DEFAULT_SCENE, hand_p: float = 0.25, noise: float = 0.006,
        bump_p: float = 0.0, roll_out_p: float = 0.0,
        timing: Timing | None = None, realtime: bool = False,
        clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] | None = None,
    ) -> None:
        super().__init__(realtime=realtime, clock=clock, sleep=sleep)
        if fps <= 0:
            raise SourceError(f"demo: fps must be positive, got {fps}")
        self.seed = seed
        self.fps = float(fps)
        self.hand_p = hand_p
        # Mishaps a table sees now and then, off unless asked for (replay tests): a staying die
        # bumped by the hand that lifts the chosen ones; a die that rolls out of the tray.
        self.bump_p, self.roll_out_p = bump_p, roll_out_p
        self.noise = noise
        self.timing = timing or Timing()
        try:
            spec = synth.random_scene(scene_seed, preset, int(size[0]), int(size[1]))
        except ValueError as e:
            raise SourceError(f"demo: {e}") from e
        # sensor noise is added here per frame, so renders of still dice can be reused
        self.spec = replace(spec, noise_sigma=0.0)
        floor = np.float32([[0, 0], [spec.floor_w_mm, 0], [spec.floor_w_mm, spec.floor_h_mm],
                            [0, spec.floor_h_mm]])
        H = cv2.getPerspectiveTransform(floor, synth.tray_corners(spec).astype(np.float32))
        self._layout = _Layout(self.spec, H.astype(np.float64), 0.8 * spec.die_px)
        self._script: Iterator[Turn | Sequence[Any]] = iter(
            demo_script(seed) if script is None else script)
        self.turns: list[TurnTruth] = []
        self._queue: list[_Planned] = [_Planned([], "empty", None)
                                       for _ in range(self.timing.lead_in)]
        self._index = 0
        self._last: tuple[list[synth.DiePose], int | None, np.ndarray, list[dict]] | None = None
        self._shown: str | None = None  # calibration: the colour on the tray, "" for empty
        self._shown_dice: list[synth.DiePose] = []
        self._shown_since = 0

    # -- calibration
    def show(self, colour: str | None, n: int = 5) -> None:
        """Play the table during calibration: `colour`'s dice lie in the tray (None or "":
        the tray is empty) until `stop_showing` goes back to the game.

        The dice land half a second after being asked for, as a person's would, and keep
        their places until another colour is asked for. A colour the renderer has no dice
        of leaves the tray empty, as a table without that set would.
        """
        wanted = colour or ""
        if wanted == self._shown:
            return
        self._shown = wanted
        self._shown_since = self._index
        if wanted:
            rng = np.random.default_rng([self.seed, self._index, 77])
            values = tuple(int(v) for v in rng.integers(1, 7, n))
            try:
                turn = Turn("table", (wanted,) * n, values, values[0])
            except ValueError:
                self._shown_dice = []
                return
            self._shown_dice = _place(rng, self._layout, turn)
        else:
            self._shown_dice = []

    def stop_showing(self) -> None:
        """Calibration is over: the scripted game carries on where it was."""
        self._shown = None
        self._shown_dice = []

    # -- planning
    def _plan_turn(self, k: int, turn: Turn) -> None:
        tm = self.timing
        rng = np.random.default_rng([self.seed, k, 99])
        lay = self._layout
        spec = lay.spec
        final = _place(rng, lay, turn)
        wall = int(rng.integers(4))  # the thrower's side: dice come in and leave over it
        fw, fh = spec.floor_w_mm, spec.floor_h_mm
        along = float(rng.uniform(0.25, 0.75))
        inset = 14.0
        entry = [(along * fw, inset), (fw - inset, along * fh), (along * fw, fh - inset),
                 (inset, along * fh)][wall]
        starts = [(entry[0] + rng.normal(0, 6), entry[1] + rng.normal(0, 6)) for _ in final]
        spins = [float(rng.uniform(360, 900) * rng.choice([-1, 1])) for _ in final]
        start = self._index + len(self._queue)
        plan: list[_Planned] = []
        # Mishaps draw from their own generator, so a script plays the same with them off.
        mishap = np.random.default_rng([self.seed, k, 7])
        chosen = [i for i, v in enumerate(turn.values) if v == turn.chosen]
        spare = [i for i in range(len(final)) if i not in chosen]
        rolled_out = (int(mishap.choice(spare)) if spare and mishap.random() < self.roll_out_p
                      else None)
        targets = list(final)
        if rolled_out is not None:  # it crosses the tray and leaves over the far wall
            far = _exit_points(lay, (wall + 2) % 4, [final[rolled_out]])[0]
            targets[rolled_out] = replace(final[rolled_out], x=far[0], y=far[1])
            spare.remove(rolled_out)
        bumped = (int(mishap.choice(spare)) if spare and mishap.random() < self.bump_p
                  else None)

        def add(dice: list[synth.DiePose], phase: str, n: int, hand: int | None = None) -> range:
            r = range(start + len(plan), start + len(plan) + n)
            plan.extend(_Planned(list(dice), phase, k, hand) for _ in range(n))
            return r

        wait = add([], "empty", round(turn.pause * self.fps))
        # fall: ease-out from the thrower's side, tumbling (random faces) while fast
        fall_from = start + len(plan)
        us = [1 - (1 - (j + 1) / (tm.fall + 1)) ** 2 for j in range(tm.fall)]
        prev = [0.0] + us[:-1]
        for u, u0 in zip(us, prev, strict=True):
            dice = []
            for d, s, spin in zip(targets, starts, spins, strict=True):
                x, y = s[0] + (d.x - s[0]) * u, s[1] + (d.y - s[1]) * u
                step = math.hypot(d.x - s[0], d.y - s[1]) * (u - u0)
                dice.append(replace(
                    d, x=x, y=y, angle_deg=d.angle_deg + (1 - u) * spin,
                    value=int(rng.integers(1, 7)), spin=int(rng.integers(2**16)),
                    blur=min(2.0, 0.8 * step / _size(d)),
                    blur_deg=_angle(lay, s, (d.x, d.y))))
            plan.append(_Planned(dice, "fall", k))
        fall = range(fall_from, start + len(plan))
        if rolled_out is not None:
            plan[-1] = _Planned([d for i, d in enumerate(plan[-1].dice) if i != rolled_out],
                                "fall", k)  # gone from view by the last frame of the fall
        on_tray = [d for i, d in enumerate(final) if i != rolled_out]
        settled = [add(on_tray, "settled", tm.settle)]
        hand = None
        if rng.random() < self.hand_p:
            n_hand = int(rng.integers(tm.hand[0], tm.hand[1] + 1))
            hand = add(on_tray, "hand", n_hand, int(rng.integers(2**31)))
            settled.append(add(on_tray, "settled", tm.after_hand))
        out = _exit_points(lay, wall, final)
        others = [i for i in range(len(final)) if i not in chosen and i != rolled_out]
        nudge: dict[int, synth.DiePose] = {}
        if bumped is not None:  # the lifting hand shoves it half a die and turns it
            d = final[bumped]
            a = float(mishap.uniform(0, 2 * math.pi))
            r = synth.DIE_MM * 0.5
            nx = float(np.clip(d.x + r * math.cos(a), synth.DIE_MM, spec.floor_w_mm - synth.DIE_MM))
            ny = float(np.clip(d.y + r * math.sin(a), synth.DIE_MM, spec.floor_h_mm - synth.DIE_MM))
            nudge[bumped] = replace(d, x=nx, y=ny, angle_deg=d.angle_deg + 25.0)

        def leave(moving: list[int], staying: list[int], phase: str, n: int) -> range:
            r0 = start + len(plan)
            for j in range(n):
                v = ((j + 1) / (n + 1)) ** 2
                step = ((j + 1) ** 2 - j**2) / (n + 1) ** 2
                dice = [_between(final[i], nudge[i], v) if i in nudge else final[i]
                        for i in staying]
                for i in moving:
                    d, (ox, oy) = final[i], out[i]
                    dist = math.hypot(ox - d.x, oy - d.y)
                    dice.append(replace(d, x=d.x + (ox - d.x) * v, y=d.y + (oy - d.y) * v,
                                        blur=min(2.0, 0.8 * dist * step / _size(d)),
                                        blur_deg=_angle(lay, (d.x, d.y), (ox, oy))))
                plan.append(_Planned(dice, phase, k))
            return range(r0, start + len(plan))

        lift = leave(chosen, others, "lift", tm.lift)
        final = [nudge.get(i, d) for i, d in enumerate(final)]
        rest = add([final[i] for i in others], "rest", tm.rest if others else 0)
        scoop = leave(others, [], "scoop", tm.scoop if others else 0)
        empty = add([], "empty", tm.empty)
        self.turns.append(TurnTruth(
            turn=k, player=turn.player,
            dice=[{"colour": c, "value": v, "big": turn.is_big(i)}
                  for i, (c, v) in enumerate(zip(turn.colours, turn.values, strict=True))],
            chosen=turn.chosen, start=start, fall=fall, settled=settled, hand=hand, lift=lift,
            rest=rest, scoop=scoop, empty=empty, end=start + len(plan),
            rolled_out=rolled_out, bumped=bumped, wait=wait))
        self._queue.extend(plan)

    # -- frames
    def _render(self, p: _Planned, index: int) -> tuple[np.ndarray, list[dict]]:
        """Render, reusing the last render when nothing in view changed (still dice, the same
        hand): still phases are most of a turn, and this keeps 15 fps cheap."""
        last = self._last
        if last is not None and last[1] == p.hand_seed and last[0] == p.dice:
            img, labels = last[2], last[3]
        else:
            img, labels = synth.render(self.spec, p.dice, seed=p.hand_seed or 0,
                                       hand=p.hand_seed is not None)
            self._last = (p.dice, p.hand_seed, img, labels)
        if self.noise > 0:
            img = _add_noise(img, self.noise, np.random.default_rng([self.seed, index, 5]))
        else:
            img.flags.writeable = False  # shared with the next still frame
        return img, labels

    def read(self) -> Frame | None:
        if self.ended:
            return None
        self._refuse_all_controls("the demo camera has no controls")
        if self._shown is not None:
            return self._calibration_frame()
        if not self._queue:
            try:
                nxt = next(self._script)
            except StopIteration:
                self._set_state("closed", f"demo game finished ({len(self.turns)} turns)")
                return None
            try:
                turn = Turn.of(nxt)
            except ValueError as e:
                self._set_state("closed", f"demo script stopped: {e}")
                raise
            self._plan_turn(len(self.turns), turn)
        p = self._queue.pop(0)
        i = self._index
        self._index += 1
        img, labels = self._render(p, i)
        truth = {"turn": p.turn, "phase": p.phase, "hand": p.hand_seed is not None,
                 "dice": labels}
        frame = Frame(i, i / self.fps, img, {"truth": truth})
        if self._state != "running":
            self._set_state("running", "demo playing")
        self._pace(frame.t)
        return frame


    def _calibration_frame(self) -> Frame:
        i = self._index
        self._index += 1
        landed = i - self._shown_since >= self.fps / 2
        dice = self._shown_dice if landed else []
        img, labels = self._render(_Planned(list(dice), "calibration", None), i)
        frame = Frame(i, i / self.fps, img, {"truth": {"turn": None, "phase": "calibration",
                                                       "hand": False, "dice": labels}})
        if self._state != "running":
            self._set_state("running", "demo calibrating")
        self._pace(frame.t)
        return frame


# --------------------------------------------------------------------------- helpers


def _size(d: synth.DiePose) -> float:
    return synth.DIE_MM * (synth.BIG_SCALE if d.big else 1.0)


def _between(a: synth.DiePose, b: synth.DiePose, v: float) -> synth.DiePose:
    """A die part of the way (v in 0..1) from pose a to pose b, face unchanged."""
    return replace(a, x=a.x + (b.x - a.x) * v, y=a.y + (b.y - a.y) * v,
                   angle_deg=a.angle_deg + (b.angle_deg - a.angle_deg) * v)


def _angle(lay: _Layout, a: tuple[float, float], b: tuple[float, float]) -> float:
    """Image direction (degrees, y down) of floor motion a -> b, as synth's blur expects."""
    pa, pb = lay.to_px(*a), lay.to_px(*b)
    return math.degrees(math.atan2(pb[1] - pa[1], pb[0] - pa[0]))


def _place(rng: np.random.Generator, lay: _Layout, turn: Turn) -> list[synth.DiePose]:
    """Final resting poses: apart (circumscribed circles never overlap), on the floor, in view.

    Apart on purpose: the demo shows the product working; clusters are the reader's tests.
    """
    spec = lay.spec
    n = len(turn.colours)
    for _attempt in range(50):
        poses: list[synth.DiePose] = []
        for i, (colour, value) in enumerate(zip(turn.colours, turn.values, strict=True)):
            big = turn.is_big(i)
            r = synth.DIE_MM * (synth.BIG_SCALE if big else 1.0) * math.sqrt(0.5) + 0.5
            for _try in range(300):
                x = float(rng.uniform(r + 1, spec.floor_w_mm - r - 1))
                y = float(rng.uniform(r + 1, spec.floor_h_mm - r - 1))
                u, v = lay.to_px(x, y)
                if not (lay.margin_px <= u <= spec.width - lay.margin_px
                        and lay.margin_px <= v <= spec.height - lay.margin_px):
                    continue
                if all(math.hypot(x - q.x, y - q.y) >= r + _size(q) * math.sqrt(0.5) + 0.5
                       for q in poses):
                    break
            else:
                break
            poses.append(synth.DiePose(
                colour=colour, value=value, big=big, x=x, y=y,
                angle_deg=float(rng.uniform(0, 360)), pip_colour=synth.DEFAULT_PIP[colour],
                spin=int(rng.integers(2**16))))
        if len(poses) == n:
            return poses
    raise ValueError(f"{n} dice do not fit apart on the demo tray")


def _exit_points(
    lay: _Layout, wall: int, dice: list[synth.DiePose]
) -> list[tuple[float, float]]:
    """Where each die is carried to: over the thrower's wall, well past the rim."""
    spec = lay.spec
    past = spec.wall_h_mm + 40.0
    fw, fh = spec.floor_w_mm, spec.floor_h_mm
    out = []
    for d in dice:
        out.append([(d.x, -past), (fw + past, d.y), (d.x, fh + past), (-past, d.y)][wall])
    return out


_NOISE_TILES: dict[tuple[int, int], np.ndarray] = {}


def _add_noise(img: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Sensor noise from a random window of one fixed tile: a fresh field per pixel would
    cost more than the render it decorates. Still frames then differ as a camera's do."""
    h, w = img.shape[:2]
    tile = _NOISE_TILES.get((h, w))
    if tile is None:
        # int8-centred uniform noise, sd ~73.6 in 0..255 units before scaling
        tile = _NOISE_TILES[(h, w)] = np.random.default_rng(4321).integers(
            0, 256, (2 * h, 2 * w, 3), dtype=np.uint8)
    oy, ox = int(rng.integers(0, h)), int(rng.integers(0, w))
    k = sigma * 255 / 73.6
    return cv2.addWeighted(img, 1.0, tile[oy : oy + h, ox : ox + w], k, -127.5 * k)


__all__ = ["DEFAULT_SIZE", "DemoSource", "Timing", "Turn", "TurnTruth", "demo_script"]

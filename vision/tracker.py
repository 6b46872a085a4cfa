"""Turn a stream of per-frame dice reads into turn events, each exactly once.

A single frame says little: dice are still bouncing, a hand hides half the tray, the reader
misses a die or misreads a face now and then. The tracker therefore works on two levels.

Frame level: every read die is matched to a track (nearest centre, gated at half a die). The
tray counts as *still* while the same tracks stay within `still_frac` of a die side of where the
current window began; a die that appears, moves further, or is lost for more than
`miss_frames` frames starts a new window. When a window has lasted `settle_time` seconds of
stream time and at least `settle_frames` frames, the tray is *settled* and each die's reads in
that window are put to a vote: one *snapshot* of the tray.

Turn level: snapshots are compared with the last configuration the tracker vouched for (the
roll, or what is left of it). A settled tray that appears in an empty one is a `Roll`, reported
at once (about 0.33 s after the dice stop, at 15 fps). Dice that vanish are *not* trusted at
once: a hand over the tray and a hand that took the dice look the same in the reads. A removal
stays a candidate until the tray has held it for `hold_time` (default 3 s, longer than a hand
lingers), or a new roll lands (the vanished dice did not come back). If they do come back, the
candidates were occlusion and nothing is reported. Consecutive candidates form a chain (fours
gone, then everything gone), so a fast "take the fours, sweep the rest" still gives
`Place(4)` and then `TrayCleared`, in that order.

The tracker never decides a turn it is unsure of: it reports `NeedsConfirmation` and leaves
the choice to a person. Knowing nothing about the rules, it is told plain facts about the
turn (`TurnFacts`) by its owner.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

import numpy as np

from .reader import CERTAIN, DieRead, box_side, face_side

__all__ = [
    "DieLike",
    "Event",
    "NeedsConfirmation",
    "Place",
    "Reader",
    "Roll",
    "TrayCleared",
    "TurnFacts",
    "TurnTracker",
    "fit_facts",
]

ALL_VALUES = (1, 2, 3, 4, 5, 6)
FACE_SURE = 0.8  # two reads at least this sure showing different faces: not settled


class DieLike(Protocol):
    """What the tracker needs of one read die (`vision.reader.DieRead` is one)."""

    value: int | None
    colour: str
    big: bool
    bbox: tuple[float, float, float, float]
    confidence: float


class Reader(Protocol):
    """What the camera loop (`vision.loop`) needs of a reader (`vision.reader.DiceReader`)."""

    def read(self, frame: np.ndarray) -> Sequence[DieLike]: ...


@dataclass(frozen=True)
class TurnFacts:
    """What the owner knows about the coming roll; the tracker only compares against it.

    `dice_count` is every die expected in the tray (the player's plus neutral ones; a Biggy is
    one die), `big_count` how many of those are Biggy dice. `colour_counts` splits
    `dice_count` by colour, and `table_colours` are the colours of every die in this game
    (players', imaginary players', neutral): with both, a die named in a colour no one plays
    can be given back to the colour the roll lacks (see `fit_facts`).
    """

    player_colour: str
    neutral_colours: tuple[str, ...] = ()
    dice_count: int = 0
    big_count: int = 0
    colour_counts: tuple[tuple[str, int], ...] = ()
    table_colours: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Events


@dataclass(frozen=True)
class Event:
    """Something the tray did, at the frame where the tracker became sure of it."""

    kind: ClassVar[str] = ""
    frame: int
    t: float

    def to_dict(self) -> dict[str, Any]:
        """One line of `vegas-table track --json` (DESIGN.md); `t` to 1/100 s like the contract."""
        return {"frame": self.frame, "t": round(float(self.t), 2), "event": self.kind}


@dataclass(frozen=True)
class Roll(Event):
    """A settled roll. Dice values are the vote over the settle window.

    `since_frame`/`since_t` are the first frame of that window (the delay from there to
    `frame` is what the latency target measures); `image` is the frame the roll was decided on,
    for the owner to keep as JPEG; neither is part of the JSON. A Roll may follow a Roll with
    no Place between (a die landed late, or the first dice settled before the rest were
    thrown): the later one replaces the earlier.
    """

    kind: ClassVar[str] = "roll"
    dice: tuple[DieRead, ...] = ()
    since_frame: int = 0
    since_t: float = 0.0
    image: np.ndarray | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "dice": [d.to_dict() for d in self.dice]}


@dataclass(frozen=True)
class Place(Event):
    """The dice of one value left the tray before any other did: the player chose `value`.

    `dice` are the dice that left, as they were read in the roll. The move is itself a reading
    of the roll, because a player takes every die of the chosen value and only those: `roll` is
    the roll as the placement leaves it known, every die that left showing `value` and every
    die still below the certainty line that stayed set to None (not `value`, and nothing more
    is known of it). `sure` says the value rests on at least one surely read die that left, so
    an owner may settle a roll it held back as `unsure` from this event alone; a placement
    made only of unsure dice is not.
    """

    kind: ClassVar[str] = "place"
    value: int = 0
    dice: tuple[DieRead, ...] = ()
    roll: tuple[DieRead, ...] = ()
    sure: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "value": self.value,
                "dice": [d.to_dict() for d in self.dice]}


@dataclass(frozen=True)
class TrayCleared(Event):
    """The tray is empty, and the tracker is sure it is not a hand over it."""

    kind: ClassVar[str] = "cleared"


@dataclass(frozen=True)
class NeedsConfirmation(Event):
    """A person has to decide; the tracker will not guess.

    Reasons: `count` (number of dice, or of Biggy dice, differs from the facts; no
    candidates), `colour` (a die is neither the player's nor neutral; no candidates), `unsure`
    (a die is unreadable or below 0.9 confidence; candidates are the values it may show, or for
    an unreadable die taken on its own, the values it may have been placed as), `scooped` (dice
    of several values left together, so the chosen value is unknown; candidates are those
    values). `count`, `colour` and `unsure` come right after the `Roll` they are about, which is
    still reported so the person can correct it rather than re-enter it. An `unsure` roll may
    still be settled by its placement (`Place.sure`): an owner can hold the question until then.
    `dice` are the dice concerned (not in the JSON).
    """

    kind: ClassVar[str] = "confirm"
    reason: str = ""
    candidates: tuple[int, ...] = ()
    dice: tuple[DieRead, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "reason": self.reason,
                "candidates": list(self.candidates)}


# ---------------------------------------------------------------------------------------------
# Geometry and voting


def _centre(bbox: Sequence[float]) -> tuple[float, float]:
    return ((bbox[0] + bbox[2]) / 2.0, (bbox[1] + bbox[3]) / 2.0)


def _read_size(die: DieLike) -> float:
    """The die's side as the reader's Biggy test saw it (allowing for its turn and the
    camera's perspective); 0 when the reader did not say."""
    return float(getattr(die, "size", 0.0) or 0.0)


def _size(die: DieLike) -> float:
    """The reader's size for the die, or its box's side when there is none."""
    return _read_size(die) or box_side(die.bbox)


def _pair(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]],
          gate: float) -> list[tuple[int, int]]:
    """Greedy one-to-one matching of boxes by centre distance in die sides.

    Greedy is enough: dice cannot overlap, so within half a die side there is one candidate.
    """
    ca = [(_centre(x), box_side(x)) for x in a]
    cb = [(_centre(x), box_side(x)) for x in b]
    cand = []
    for i, ((ax, ay), sa) in enumerate(ca):
        for j, ((bx, by), sb) in enumerate(cb):
            d = math.hypot(ax - bx, ay - by) / ((sa + sb) / 2.0)
            if d < gate:
                cand.append((d, i, j))
    cand.sort()
    used_a: set[int] = set()
    used_b: set[int] = set()
    out = []
    for _, i, j in cand:
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            out.append((i, j))
    return out


@dataclass(frozen=True)
class _Voted:
    die: DieRead
    plausible: frozenset[int]


def _vote(obs: Sequence[DieLike]) -> _Voted:
    """One die's reads over the settle window -> one value and how far to trust it.

    Unreadable wins only with a strict majority of frames, so a cocked die stays unreadable but
    one blurred frame does not spoil a good die. Otherwise each value scores the sum of its
    confidences. The result's confidence is the mean confidence of the agreeing reads times
    (1 - dissent), dissent being the disagreeing reads' share of the summed confidences to the
    fourth power: a read's say grows steeply with its confidence, so two 0.4 misreads among four
    0.95 reads cost under 2%, while one confident disagreement (0.9 against five 0.95s) costs
    about 14% and the die is asked about. Agreement never raises the confidence above the
    reads' own: six frames of the same photo are not six independent opinions.
    """
    n = len(obs)
    nones = sum(1 for o in obs if o.value is None)
    if 2 * nones > n:
        winner: int | None = None
    else:
        scores: dict[int, list[float]] = {}
        for o in obs:
            if o.value is not None:
                s = scores.setdefault(int(o.value), [0.0, 0.0])
                s[0] += float(o.confidence)
                s[1] += 1
        winner = max(scores, key=lambda v: (scores[v][0], scores[v][1], -v))
    agree = [float(o.confidence) for o in obs if o.value == winner]
    total = sum(float(o.confidence) ** 4 for o in obs)
    against = sum(float(o.confidence) ** 4 for o in obs if o.value != winner)
    dissent = against / total if total > 0 else 1.0 - len(agree) / n
    confidence = (sum(agree) / len(agree)) * (1.0 - dissent)

    colours: dict[str, float] = {}
    big = 0.0
    for o in obs:
        w = max(float(o.confidence), 1e-3)
        colours[o.colour] = colours.get(o.colour, 0.0) + w
        big += w if o.big else -w
    colour = max(colours, key=lambda c: (colours[c], c))
    boxes = np.array([list(o.bbox) for o in obs], dtype=float)
    bbox = tuple(float(v) for v in np.median(boxes, axis=0))
    seen = frozenset(int(o.value) for o in obs if o.value is not None)
    plausible = frozenset(ALL_VALUES) if winner is None or not seen else seen
    sizes = [_read_size(o) for o in obs]
    size = float(np.median([v for v in sizes if v > 0])) if any(v > 0 for v in sizes) else 0.0
    sure = winner is not None and confidence >= CERTAIN
    die = DieRead(winner, colour, big > 0, bbox, round(confidence, 4), size=size,
                  doubts=() if sure else _doubts(obs, winner, dissent))
    return _Voted(die, plausible)


def _doubts(obs: Sequence[DieLike], winner: int | None, dissent: float) -> tuple[str, ...]:
    """Why the voted die is doubted: the reader's reasons that at least a third of its reads
    gave, most often given first, and "disagree" where reads of other faces cost it more than
    the reads' own doubt (the window saw the face change)."""
    counts: Counter[str] = Counter()
    for o in obs:
        counts.update(dict.fromkeys(getattr(o, "doubts", ()) or (), 1))
    out = [code for code, n in counts.most_common() if 3 * n >= len(obs)]
    if dissent > 0.05 and winner is not None:
        out.append("disagree")
    return tuple(out) or ("unreadable" if winner is None else "unsure",)


def _sort_key(v: _Voted) -> tuple[float, float]:
    return (v.die.bbox[0], v.die.bbox[1])


# ---------------------------------------------------------------------------------------------
# The tracker


def _face_changed(before: DieLike, now: DieLike, sure: float = FACE_SURE) -> bool:
    """Two fairly sure reads of different faces: the die is still tumbling in place.

    A die rolling to a stop barely moves its centre in the last frames, but its top face
    changes; counting those frames as settled would vote a face it did not land on.
    """
    return (before.value is not None and now.value is not None and before.value != now.value
            and before.confidence >= sure and now.confidence >= sure)


def _same_die(a: DieLike, b: DieLike, sure: float = FACE_SURE) -> bool:
    return a.colour == b.colour and not _face_changed(a, b, sure)


class _Track:
    """One physical die followed from frame to frame (or a one-frame phantom, until confirmed)."""

    __slots__ = ("anchor", "centre", "confirmed", "hits", "last_seen", "misses", "obs", "side")

    def __init__(self, n: int, die: DieLike) -> None:
        self.centre = _centre(die.bbox)
        self.side = box_side(die.bbox)
        self.anchor = self.centre
        self.obs: deque[tuple[int, DieLike]] = deque([(n, die)], maxlen=64)
        self.hits = 1
        self.misses = 0
        self.last_seen = n
        self.confirmed = False

    def see(self, n: int, die: DieLike) -> None:
        self.centre = _centre(die.bbox)
        self.side = box_side(die.bbox)
        self.obs.append((n, die))
        self.hits += 1
        self.misses = 0
        self.last_seen = n

    def moved(self, frac: float) -> bool:
        return math.hypot(self.centre[0] - self.anchor[0],
                          self.centre[1] - self.anchor[1]) > frac * self.side

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return tuple(self.obs[-1][1].bbox)


@dataclass
class _Candidate:
    dice: list[_Voted]
    since: float


class TurnTracker:
    """Feed it one frame's reads at a time; it returns the turn events those frames complete.

    `state` (for the UI): `empty` (nothing in the tray), `rolling` (dice moving into an empty
    tray), `settled` (a roll is reported and lies untouched), `placing` (the roll is being
    touched: a hand, dice lifted, nothing certain yet), `placed` (a placement or a scooped
    confirmation is reported; the rest still lie there), `clearing` (the rest is being taken
    out). `settled_frame` is the last frame index at which the tray was seen settled.
    """

    def __init__(self, facts: TurnFacts | None = None, *, settle_time: float = 0.3,
                 settle_frames: int = 4, hold_time: float = 3.0, still_frac: float = 0.2,
                 match_frac: float = 0.5, miss_frames: int = 2,
                 certain: float = CERTAIN) -> None:
        """Defaults are for 15 fps: the roll comes 6 frames (0.33 s) after the dice stop.

        `still_frac` (0.2 of a side) sits well above read jitter (a few px on a 50 px die) and
        below the per-frame travel of a bouncing die. `miss_frames` (2) lets a die be missed by
        the reader for two frames without counting as gone. `hold_time` must exceed the longest
        a hand rests over the tray, since until then a removal cannot be told from a hand.
        """
        self.facts = facts
        self.settle_time = settle_time
        self.settle_frames = settle_frames
        self.hold_time = hold_time
        self.still_frac = still_frac
        self.match_frac = match_frac
        self.miss_frames = miss_frames
        self.certain = certain
        self.settled_frame: int | None = None
        self.last_roll: Roll | None = None
        # frame level
        self._n = 0
        self._frame = 0
        self._t = 0.0
        self._recent: deque[tuple[int, int, float]] = deque(maxlen=64)
        self._tracks: list[_Track] = []
        self._win_n = 1
        self._win_frame = 0
        self._win_t = 0.0
        self._snapped = False
        # turn level
        self._phase = "empty"  # empty | rolled | placed
        self._ref: list[_Voted] = []
        # The colours `fit_facts` changed in the last roll (a stray colour -> the colour the
        # roll lacked). Later reads of those dice still carry the reader's name, so `_match`
        # compares them under the fitted one.
        self._renamed: dict[str, str] = {}
        self._taken: list[_Voted] = []
        self._chain: list[_Candidate] = []
        self._at_tail = False
        self._at_ref = True

    # -- public --------------------------------------------------------------------------------

    def expect(self, facts: TurnFacts | None) -> None:
        """Set what the next roll should look like; None checks nothing (no game attached)."""
        self.facts = facts

    @property
    def state(self) -> str:
        if not self._ref:
            return "rolling" if self._tracks else "empty"
        if self._phase == "rolled":
            return "placing" if (self._chain or self._taken or not self._at_ref) else "settled"
        return "clearing" if (self._chain or not self._at_ref) else "placed"

    def feed(self, frame_index: int, t: float, dice: Iterable[DieLike],
             image: np.ndarray | None = None) -> list[Event]:
        """Take one frame's reads. Frames must come in stream order; gaps (drops) are fine.

        Only frames fed count towards windows and misses, so dropped frames cost time, not
        dice; time itself is taken from `t`, so a long gap can complete a window.
        """
        self._n += 1
        n = self._n
        self._frame, self._t = frame_index, float(t)
        if n == 1:
            self._win_frame, self._win_t = frame_index, float(t)
        self._recent.append((n, frame_index, float(t)))
        self._update_tracks(n, list(dice))
        events: list[Event] = []
        if not self._snapped:
            if (n - self._win_n + 1 >= self.settle_frames
                    and self._t - self._win_t >= self.settle_time - 1e-9):
                self._snapped = True
                self.settled_frame = frame_index
                events += self._on_snapshot(self._snapshot(n), image)
        else:
            self.settled_frame = frame_index
        if (self._chain and self._at_tail and self._snapped
                and self._t - self._chain[-1].since >= self.hold_time - 1e-9):
            events += self._commit_chain()
        return events

    def flush(self) -> list[Event]:
        """The stream ended: what the tray last settled into stands, however briefly held.

        Only at a stream's end (`vision.loop`); a live tracker never calls it, because there a
        short-lived removal may still be a hand.
        """
        return self._commit_chain() if self._chain else []

    # -- frame level ---------------------------------------------------------------------------

    def _update_tracks(self, n: int, dets: list[DieLike]) -> None:
        tracks = self._tracks
        pairs = _pair([tr.bbox for tr in tracks], [d.bbox for d in dets], self.match_frac)
        seen_t = {i for i, _ in pairs}
        seen_d = {j for _, j in pairs}
        reset_now = False
        reset_past = 0
        for i, j in pairs:
            tr = tracks[i]
            prev = tr.obs[-1][1]
            tr.see(n, dets[j])
            if tr.hits >= 2:
                tr.confirmed = True
            if tr.moved(self.still_frac) or _face_changed(prev, dets[j]):
                reset_now = True
        keep: list[_Track] = []
        for i, tr in enumerate(tracks):
            if i not in seen_t:
                tr.misses += 1
                if tr.misses > self.miss_frames:
                    if tr.confirmed:
                        reset_past = max(reset_past, tr.last_seen + 1)
                    continue
            keep.append(tr)
        for j, d in enumerate(dets):
            if j not in seen_d:
                keep.append(_Track(n, d))
                reset_now = True
        self._tracks = keep
        if reset_now:
            self._restart(n, self._frame, self._t)
            for tr in self._tracks:
                tr.anchor = tr.centre
        elif reset_past > self._win_n:
            # A die is gone since its first missed frame: the new state began there.
            frame, t = next(((f, tt) for m, f, tt in self._recent if m >= reset_past),
                            (self._frame, self._t))
            self._restart(reset_past, frame, t)

    def _restart(self, n: int, frame: int, t: float) -> None:
        self._win_n, self._win_frame, self._win_t = n, frame, t
        self._snapped = False
        self._at_tail = False
        self._at_ref = False

    def _snapshot(self, n: int) -> list[_Voted]:
        length = n - self._win_n + 1
        out = []
        for tr in self._tracks:
            if not tr.confirmed:
                continue
            obs = [d for m, d in tr.obs if m >= self._win_n]
            if obs and 2 * len(obs) >= length:
                out.append(_vote(obs))
        out.sort(key=_sort_key)
        return out

    # -- turn level ----------------------------------------------------------------------------

    def _match(self, a: list[_Voted], b: list[_Voted]) -> tuple[list[tuple[int, int]],
                                                                  list[int], list[int]]:
        pairs = _pair([v.die.bbox for v in a], [v.die.bbox for v in b], self.match_frac)
        # Where a die lay, another may land: the same place is the same die only if the colour
        # and a surely read face agree, else the old one left and a new one came.
        pairs = [(i, j) for i, j in pairs if _same_die(a[i].die, self._as_fitted(b[j].die))]
        ma = {i for i, _ in pairs}
        mb = {j for _, j in pairs}
        return (pairs, [i for i in range(len(a)) if i not in ma],
                [j for j in range(len(b)) if j not in mb])

    def _on_snapshot(self, snap: list[_Voted], image: np.ndarray | None) -> list[Event]:
        if not self._ref:
            return self._roll(snap, image) if snap else []
        pairs, gone, new = self._match(self._ref, snap)
        untouched_roll = self._phase == "rolled" and not self._taken and not gone
        if new and (len(new) >= 2 or not pairs or untouched_roll):
            # A new roll landed: whatever vanished before it did not come back.
            events = self._commit_chain()
            pairs, _, _ = self._match(self._ref, snap)
            left = [_Voted(replace(self._ref[i].die, bbox=snap[j].die.bbox),
                           self._ref[i].plausible) for i, j in pairs]
            events += self._commit_state(sorted(left, key=_sort_key))
            return events + self._roll(snap, image)
        # Lone new dice next to the roll are taken for phantoms (a hand read as a die).
        kept = sorted((_Voted(replace(self._ref[i].die, bbox=snap[j].die.bbox),
                              self._ref[i].plausible) for i, j in pairs), key=_sort_key)
        if not gone:
            self._chain = []
            self._ref = kept
            self._at_ref = True
            return []
        while self._chain and not self._subset(kept, self._chain[-1].dice):
            self._chain.pop()
        if self._chain and self._subset(self._chain[-1].dice, kept):
            self._chain[-1].dice = kept
        else:
            self._chain.append(_Candidate(kept, self._win_t))
        self._at_tail = True
        return []

    def _as_fitted(self, die: DieLike) -> DieLike:
        """A later read of a die the roll's fit renamed, under the fitted colour."""
        colour = self._renamed.get(die.colour)
        return die if colour is None else replace(die, colour=colour)

    def _subset(self, a: list[_Voted], b: list[_Voted]) -> bool:
        return not self._match(a, b)[1]

    def _commit_chain(self) -> list[Event]:
        events: list[Event] = []
        for cand in self._chain:
            events += self._commit_state(cand.dice)
        self._chain = []
        self._at_ref = self._at_tail
        self._at_tail = False
        return events

    def _commit_state(self, dice: list[_Voted]) -> list[Event]:
        """The tray really went from the vouched-for configuration to `dice`."""
        _, gone, _ = self._match(self._ref, dice)
        events: list[Event] = []
        if gone and self._phase == "rolled":
            self._taken += [self._ref[i] for i in gone]
            events += self._judge_taken(dice)
        if self._ref and not dice:
            events.append(TrayCleared(self._frame, self._t))
            self._phase = "empty"
            self._taken = []
        self._ref = dice
        return events

    def _judge_taken(self, rest: list[_Voted]) -> list[Event]:
        """The dice taken since the roll: a placement, still on the way, or a question."""
        taken = self._taken
        dice = tuple(v.die for v in taken)
        known = {v.die.value for v in taken if v.die.value is not None}
        left = {v.die.value for v in rest if v.die.value is not None}
        if len(known) == 1:
            value = next(iter(known))
            if value in left:
                return []  # some of that value still lie there: the hand goes on
            self._phase = "placed"
            # An unreadable die taken with the fours was a four: all of a value go together.
            # One that stayed is not a four, and that is all the move says of it.
            roll = tuple(replace(v.die, value=value) for v in taken) + tuple(
                v.die if self._sure(v) else replace(v.die, value=None) for v in rest)
            return [Place(self._frame, self._t, value, dice, roll,
                          any(self._sure(v) for v in taken))]
        self._phase = "placed"
        if not known:
            cands = tuple(v for v in ALL_VALUES if v not in left)
            return [NeedsConfirmation(self._frame, self._t, "unsure", cands, dice)]
        return [NeedsConfirmation(self._frame, self._t, "scooped", tuple(sorted(known)), dice)]

    def _sure(self, v: _Voted) -> bool:
        return v.die.value is not None and v.die.confidence >= self.certain

    def _roll(self, snap: list[_Voted], image: np.ndarray | None) -> list[Event]:
        dice, problems = fit_facts([v.die for v in snap], self.facts, image)
        self._renamed = {v.die.colour: d.colour for d, v in zip(dice, snap, strict=True)
                         if d.colour != v.die.colour}
        snap = [_Voted(d, v.plausible) for d, v in zip(dice, snap, strict=True)]
        roll = Roll(self._frame, self._t, dice, self._win_frame, self._win_t, image)
        self.last_roll = roll
        self._ref = list(snap)
        self._phase = "rolled"
        self._taken = []
        self._chain = []
        self._at_tail = False
        self._at_ref = True
        return [roll, *self._check(snap, problems)]

    def _check(self, snap: list[_Voted],
                problems: list[tuple[str, tuple[DieRead, ...]]]) -> list[Event]:
        out: list[Event] = []
        for reason, dice in problems:
            out.append(NeedsConfirmation(self._frame, self._t, reason, (), dice))
        unsure = [v for v in snap if not self._sure(v)]
        if unsure:
            cands = sorted(set().union(*(v.plausible for v in unsure)))
            out.append(NeedsConfirmation(self._frame, self._t, "unsure", tuple(cands),
                                         tuple(v.die for v in unsure)))
        return out


BIG_MARGIN = 1.1  # a Biggy is at least this much larger than the largest ordinary die...
BIG_LOOK = 1.3  # ...and no ordinary die is this much larger than the ordinary dice's median


def fit_facts(dice: Sequence[DieRead], facts: TurnFacts | None,
              image: np.ndarray | None = None
              ) -> tuple[tuple[DieRead, ...], list[tuple[str, tuple[DieRead, ...]]]]:
    """The dice with their Biggy flags fitted to the facts, and what still does not fit.

    The reader calls a die big from its size alone (a Biggy is about 1.4x), and perspective
    makes a die near the camera look up to a fifth larger: a classic game would be asked
    about a Biggy it cannot have. The facts say how many Biggy dice the player holds, so when
    the reader's flags disagree, the largest dice of the player's colour take them, provided
    that leaves no doubt: each Biggy `BIG_MARGIN` larger than every other die, and no other
    die `BIG_LOOK` larger than the ordinary dice's median (that would be a Biggy too many).
    With `image` (the frame the dice were read in), dice the boxes leave in doubt are
    measured again by the spread of their pips before the count is asked. Otherwise the
    count is asked. Colours are fitted first (`_fit_colours`). Problems: ("count", ()) and
    ("colour", the foreign dice). Public so an owner that learns the facts only after the
    roll was seen can check it the same way.
    """
    dice = tuple(dice)
    if facts is None:
        return dice, []
    dice = _fit_colours(dice, facts)
    out: list[tuple[str, tuple[DieRead, ...]]] = []
    counted = len(dice) == facts.dice_count
    if sum(1 for d in dice if d.big) != facts.big_count:
        own = [i for i, d in enumerate(dice) if d.colour == facts.player_colour]
        sizes = {i: _size(dice[i]) for i in own}
        big = _biggies(sizes, facts.big_count)
        if big is None and image is not None:
            # The box can be fooled (a red Biggy on a red floor gets a box too small); the
            # spread of its pips cannot. One player's dice are one set, so pips that sit
            # further apart mean a larger die here (the Royale demo asked the count on 2 of
            # 138 turns, both a Biggy whose box came out 1.07x the next die's).
            big = _biggies(_pip_sizes(image, dice, sizes), facts.big_count)
        if big is not None:
            dice = tuple(replace(d, big=i in big) for i, d in enumerate(dice))
        else:
            counted = False  # no die, or one too many, stands out as a Biggy: ask
    if not counted:
        out.append(("count", ()))
    allowed = {facts.player_colour, *facts.neutral_colours}
    foreign = tuple(d for d in dice if d.colour not in allowed)
    if foreign:
        out.append(("colour", foreign))
    return dice, out


def _fit_colours(dice: tuple[DieRead, ...], facts: TurnFacts) -> tuple[DieRead, ...]:
    """The dice, those named in colours no one at the table plays given the colour the roll
    lacks, when that is beyond doubt.

    Without a calibration profile the reader names a die among every colour it knows, and
    some lamps make one paint look like its neighbour: over-exposed orange dice read yellow,
    red ones under a lamp's glare pink (10 of the 12 misnamed dice of the loose renders).
    The table was then asked about every such roll, each turn of that player. A die in a
    colour that is in no one's hand cannot be in the tray, so when the dice named in such
    colours are exactly as many as one colour of the expected roll lacks, and no colour in
    play has too many, they are that colour's. Anything else (two colours short, a colour in
    play with a die too many, a count that differs) is asked as before, and the rules engine
    still checks the roll against the player's hand.
    """
    if not facts.colour_counts or not facts.table_colours:
        return dice
    strays = {i for i, d in enumerate(dice) if d.colour not in facts.table_colours}
    if not strays:
        return dice
    expected = dict(facts.colour_counts)
    named = Counter(d.colour for i, d in enumerate(dice) if i not in strays)
    short = {c: n - named[c] for c, n in expected.items() if n > named[c]}
    if len(short) != 1 or any(named[c] > expected.get(c, 0) for c in named):
        return dice
    colour, lacking = short.popitem()
    if lacking != len(strays):
        return dice
    return tuple(replace(d, colour=colour) if i in strays else d for i, d in enumerate(dice))


def _biggies(sizes: dict[int, float], want: int) -> set[int] | None:
    """The `want` largest dice, if they stand out clearly (see `fit_facts`); else None."""
    order = sorted(sizes, key=lambda i: -sizes[i])
    if len(order) < want:
        return None
    sides = [sizes[i] for i in order]
    rest = sides[want:]
    if rest and not ((want == 0 or sides[want - 1] >= BIG_MARGIN * rest[0])
                     and rest[0] < BIG_LOOK * float(np.median(rest))):
        return None
    return set(order[:want])


def _pip_sizes(image: np.ndarray, dice: Sequence[DieRead], sizes: dict[int, float]
               ) -> dict[int, float]:
    """`sizes` with each die whose pips can be measured sized by their spread instead, on
    the boxes' scale (the median die keeps its size); a 1, or a die whose pips are not all
    found, keeps its box's size."""
    faces = {i: face_side(image, dice[i].bbox, dice[i].value) for i in sizes
             if dice[i].value is not None}
    faces = {i: f for i, f in faces.items() if f is not None}
    if len(faces) < 2:
        return sizes
    scale = float(np.median([sizes[i] / f for i, f in faces.items()]))
    return {i: faces[i] * scale if i in faces else s for i, s in sizes.items()}

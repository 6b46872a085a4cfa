"""The demo's host: the session knows the turns it scripted for the demo camera, and acts
as a patient host would (answers the table's questions after a while, enters by hand a turn
the camera missed altogether, plays on from the game as it now is).

`demo_turns` scripts the rest of a game from its state, for the demo camera to film.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from scorekeeper import Deal, Die, GameState, Place, Roll
from scorekeeper.store import StoredGame
from vision.demo import Timing, Turn


class Table(Protocol):
    """What the demo host may see and do of the table session: what a host at the table
    sees and does."""

    lock: AbstractContextManager[Any]
    game: StoredGame
    pending: list[Any]
    demo: bool

    @property
    def draining(self) -> bool: ...
    @property
    def stopping(self) -> bool: ...
    def clock(self) -> float: ...
    def dismiss(self, pending_id: int) -> None: ...
    def confirm(self, pending_id: int, value: int | None = None,
                dice: list[dict] | None = None) -> None: ...
    def enter_turn(self, dice: tuple[Die, ...], chosen: int) -> None: ...


def demo_turns(state: GameState, seed: int) -> Iterator[Turn]:
    """Script the rest of a game from `state` on a copy: what the demo camera will show.

    Seeded by the game's seed and how far it is, so a resumed game carries on with the same
    turns it would have had.
    """
    shadow = state.clone()
    rng = random.Random(seed * 1_000_003 + shadow.seq)
    while not shadow.is_over():
        if shadow.phase == "deal":
            shadow.apply_action(Deal())
            continue
        who = shadow.current_player()
        colour = next((p.colour for p in shadow.players if p.name == who), "white")
        if shadow.phase == "choose" and shadow.roll:
            roll_dice = tuple(shadow.roll)  # resumed between a roll and its placement
        else:
            neutral_turn = shadow.phase == "neutral"
            roll = shadow.random_roll(rng)
            shadow.apply_action(roll)
            roll_dice = roll.dice
            if neutral_turn:
                # The start player's leftover white dice go to their casinos by themselves.
                yield _turn(colour, roll_dice, roll_dice[0].value)
                continue
        places = [a for a in shadow.legal_actions() if isinstance(a, Place)]
        choice = rng.choice(places)
        shadow.apply_action(choice)
        yield _turn(colour, roll_dice, choice.value)


def _turn(colour: str, dice: tuple[Die, ...], chosen: int) -> Turn:
    return Turn(colour, tuple(d.colour for d in dice), tuple(d.value for d in dice), chosen,
                tuple(d.big for d in dice))


def script_dice(turn: Turn) -> list[Die]:
    """The dice a demo turn really threw, to enter by hand or to check the record against."""
    return [Die(c, v, turn.is_big(i)) for i, (c, v) in enumerate(zip(turn.colours, turn.values,
                                                                      strict=True))]


@dataclass(frozen=True)
class DemoOptions:
    """How the demo plays: its camera's picture and pace, its host's patience, its games."""

    answer_after: float = 2.0  # s before the demo host answers a question, as a person would
    next_game_after: float = 20.0  # s a finished game's final ranking stays up
    max_games: int | None = None  # stop after this many games (tests, benchmarks)
    size: tuple[int, int] = (1280, 960)  # the demo camera's picture
    timing: Timing | None = None  # the demo camera's pace (`vision.demo.Timing`)


class DemoHost:
    """What the demo's stand-in host knows (the script) and does, on `table`."""

    def __init__(self, table: Table, answer_after: float = 2.0) -> None:
        self.table = table
        self.answer_after = answer_after  # s before it answers a question, as a person would
        self.script: deque[Turn] = deque()
        self.base = 0  # the game's turn number where the script starts

    def script_from_now(self) -> Iterator[Turn]:
        """The demo camera's turns, scripted from the game as it is now (and kept, so the
        host knows what the camera filmed)."""
        t = self.table
        with t.lock:
            self.script.clear()
            self.base = self.turn_number()
        for turn in demo_turns(t.game.state, t.game.state.config.seed):
            with t.lock:
                self.script.append(turn)
            yield turn

    def drained(self) -> None:
        """Demo only, at the end of its script: what the table still asks is answered, and a
        turn the camera missed altogether is entered by hand, as the host would."""
        t = self.table
        while t.pending and not t.stopping:
            before = [q.id for q in t.pending]
            self.answer()
            if [q.id for q in t.pending] == before:
                break  # nothing the demo host can answer (should not happen)
        if not t.game.state.is_over():
            self.enter_by_hand(len(self.script))

    def answer(self) -> None:
        """In the demo the session knows what it rendered, and answers like a patient host.

        Like a person at the table, it first enters by hand any turn the camera missed
        altogether, then answers the question about the dice now in the tray.
        """
        t = self.table
        if not t.demo or not t.pending:
            return
        p = t.pending[0]
        if t.clock() - p.created < self.answer_after and not t.draining:
            return
        target = p.turn if p.turn is not None else self.turn_number() - self.base
        if p.kind == "roll" and target < self.turn_number() - self.base:
            # That turn is already in the game: the camera saw no new roll there (a hand,
            # the dice of the turn before); a person would dismiss it too.
            t.dismiss(p.id)
            return
        self.enter_by_hand(target)
        if p not in t.pending:
            return  # entering the missed turns answered it
        turn = self.current_turn()
        if turn is None:
            return
        if p.kind == "roll":
            t.confirm(p.id, dice=[d._asdict() for d in script_dice(turn)])
        else:
            t.confirm(p.id, value=turn.chosen)

    def enter_by_hand(self, upto: int) -> None:
        """Demo host: enter the scripted turns before `upto` that the game is missing."""
        t = self.table
        while self.turn_number() - self.base < upto:
            missed = self.current_turn()
            if missed is None or t.game.state.is_over():
                break
            t.enter_turn(tuple(script_dice(missed)), missed.chosen)

    def turn_number(self) -> int:
        """How many turns of this game have been rolled before the one now on the tray."""
        t = self.table
        state = t.game.state
        rolls = sum(isinstance(a, Roll) for a in state.history)
        return rolls - 1 if state.phase == "choose" else rolls

    def current_turn(self) -> Turn | None:
        """The scripted turn the live game is in (the script runs ahead of the game)."""
        idx = self.turn_number() - self.base
        return self.script[idx] if 0 <= idx < len(self.script) else None

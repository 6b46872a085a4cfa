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

from scorekeeper import Deal, Die, GameState, Place, Roll, TileChoice
from scorekeeper.store import StoredGame
from vision.demo import Timing, Turn

GameSetup = tuple[str, dict[str, Any]]
ROYALE_TILES: GameSetup = ("royale", {"tiles": 3})
"""Royale's main game, three casino tiles a round: the demo plays it every second game."""
REDRAWS = 50  # scripted rolls drawn again, at most, until one leaves a casino to place in


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
    def apply(self, action: Any, *, rescript: bool = True) -> None: ...
    def deal_if_due(self) -> None: ...


def demo_turns(state: GameState, seed: int, decided: dict[int, TileChoice] | None = None,
               think: float = 0.0) -> Iterator[Turn]:
    """Script the rest of a game from `state` on a copy: what the demo camera will show.

    Seeded by the game's seed and how far it is, so a resumed game carries on with the same
    turns it would have had. A casino tile's decision is made on the copy too
    (`demo_choice`), recorded in `decided` by the game's action number, so the demo's host
    makes the same one when the game gets there; a turn after decisions comes `think`
    seconds later per decision, the time the host takes over each. A tile's throw of the
    black dice is a turn of its own, like the neutral dice at a round's start: nobody places
    them.
    """
    shadow = state.clone()
    rng = random.Random(seed * 1_000_003 + shadow.seq)
    decisions = _decide_all(shadow, seed, decided)  # resumed where a tile asks
    while not shadow.is_over():
        pause = think * decisions
        who = shadow.current_player()
        colour = next((p.colour for p in shadow.players if p.name == who), "white")
        if shadow.phase == "choose" and shadow.roll:
            roll_dice = tuple(shadow.roll)  # resumed between a roll and its placement
        else:
            placed_after = shadow.phase == "roll"
            roll = shadow.random_roll(rng)
            for _ in range(REDRAWS):
                # A closed casino (No Entry!) can leave a roll nothing to place but a pass,
                # which the camera cannot film: the demo throws dice that can be placed.
                if not placed_after or _placeable(shadow, roll):
                    break
                roll = shadow.random_roll(rng)
            shadow.apply_action(roll)
            roll_dice = roll.dice
            if not placed_after:
                # The start player's leftover white dice go to their casinos by themselves,
                # and a tile's black dice only say what the tile does.
                decisions = _decide_all(shadow, seed, decided)
                yield _turn(colour, roll_dice, roll_dice[0].value, pause)
                continue
        places = [a for a in shadow.legal_actions() if isinstance(a, Place)]
        if not places:
            return  # only a pass is left, which no camera sees: the host plays on by hand
        choice = rng.choice(places)
        shadow.apply_action(choice)
        # The decisions the turn leads to are made before it is filmed: the live game may
        # come to them while the camera still shows this turn.
        decisions = _decide_all(shadow, seed, decided)
        yield _turn(colour, roll_dice, choice.value, pause)


def _decide_all(shadow: GameState, seed: int, decided: dict[int, TileChoice] | None) -> int:
    """Deal, and make every tile decision waiting in `shadow` until dice are thrown again
    (or the game ends); how many decisions that was."""
    n = 0
    while not shadow.is_over():
        if shadow.phase == "deal":
            shadow.apply_action(Deal())
        elif shadow.phase == "tile" and not shadow.is_chance_node():
            choice = demo_choice(shadow, seed)
            if decided is not None:
                decided[shadow.seq] = choice
            shadow.apply_action(choice)
            n += 1
        else:
            break
    return n


def demo_choice(state: GameState, seed: int) -> TileChoice:
    """The demo's answer to the tile decision waiting in `state`: one of `legal_actions()`,
    drawn from the game's seed and its action number alone, so the script and a host that
    plays on from the game as it is draw the same."""
    legal = [a for a in state.legal_actions() if isinstance(a, TileChoice)]
    if not legal:
        raise ValueError(f"no tile decision waits at action {state.seq}")
    return random.Random(seed * 7_919 + state.seq * 104_729 + 17).choice(legal)


def _placeable(state: GameState, roll: Roll) -> bool:
    trial = state.clone()
    trial.apply_action(roll)
    return any(isinstance(a, Place) for a in trial.legal_actions())


def _turn(colour: str, dice: tuple[Die, ...], chosen: int | None, pause: float = 0.0
          ) -> Turn:
    return Turn(colour, tuple(d.colour for d in dice), tuple(d.value for d in dice), chosen,
                tuple(d.big for d in dice), pause)


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
    # The games after the first, in turn (None: the edition the session was started with):
    # every second one Royale's main game, so a demo left running shows the casino tiles.
    rotation: tuple[GameSetup | None, ...] = (ROYALE_TILES, None)

    def next_game(self, finished: int) -> GameSetup | None:
        """What the demo plays after `finished` games (None: the session's own edition)."""
        if not self.rotation or finished < 1:
            return None
        return self.rotation[(finished - 1) % len(self.rotation)]


class DemoHost:
    """What the demo's stand-in host knows (the script) and does, on `table`."""

    def __init__(self, table: Table, answer_after: float = 2.0) -> None:
        self.table = table
        self.answer_after = answer_after  # s before it answers a question, as a person would
        self.script: deque[Turn] = deque()
        self.base = 0  # the game's turn number where the script starts
        # The tile decisions the script made, by the game's action number at each.
        self.decided: dict[int, TileChoice] = {}
        self.decisions = 0  # tile decisions the demo host made
        self._waiting: tuple[tuple[str, int], float] | None = None  # decision seen, since

    def script_from_now(self) -> Iterator[Turn]:
        """The demo camera's turns, scripted from the game as it is now (and kept, so the
        host knows what the camera filmed)."""
        t = self.table
        with t.lock:
            self.script.clear()
            self.decided.clear()
            self.base = self.turn_number()
        for turn in demo_turns(t.game.state, t.game.state.config.seed, self.decided,
                               think=self.answer_after):
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
        while self.decision_due() and not t.stopping:
            self.decide()  # the decisions after the script's last throw

    def answer(self) -> None:
        """In the demo the session knows what it rendered, and answers like a patient host.

        Like a person at the table, it first enters by hand any turn the camera missed
        altogether, then answers the question about the dice now in the tray.
        """
        t = self.table
        if not t.demo:
            return
        if self.decision_due():
            # The game waits for a tile's decision, and no roll can be taken before it.
            if self._patient():
                self.decide()
            return
        if not t.pending:
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
            if self.decision_due():
                self.decide()  # catching up: a person would not wait over it either
                continue
            missed = self.current_turn()
            if missed is None or t.game.state.is_over():
                break
            t.enter_turn(tuple(script_dice(missed)), missed.chosen)

    def decision_due(self) -> bool:
        """A casino tile waits for a player's decision (not for the black dice)."""
        state = self.table.game.state
        return state.phase == "tile" and not state.is_chance_node()

    def _patient(self) -> bool:
        """Whether the decision waiting has waited as long as a person takes over it."""
        t = self.table
        key = (t.game.id, t.game.state.seq)
        if self._waiting is None or self._waiting[0] != key:
            self._waiting = (key, t.clock())
        return t.draining or t.clock() - self._waiting[1] >= self.answer_after

    def decide(self) -> None:
        """Make the tile decision waiting, through the session as the host's page does: the
        one the script made, so the camera's next turns still fit; were the game to have
        gone otherwise than scripted, a seeded one of the choices open, and the camera is
        scripted afresh from there."""
        t = self.table
        with t.lock:
            state = t.game.state
            choice = self.decided.get(state.seq)
            scripted = choice is not None and choice in state.legal_actions()
            if not scripted:
                choice = demo_choice(state, state.config.seed)
            assert choice is not None
            t.apply(choice, rescript=not scripted)
            self.decisions += 1
            self._waiting = None
            t.deal_if_due()

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

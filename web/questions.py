"""The table's questions: a roll or a placement the camera could not settle by itself, put
to the people at the table with the answers the rules take.

A question (`Pending`) says what was seen and why it is asked, whose dice it shows, and which
answers to offer, likely first (`answers_for`): "confirm" only when the rules accept the
dice as read now, so no offered answer fails.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scorekeeper import Die, GameState, Roll, RulesError
from vision import tracker as tk


@dataclass
class Pending:
    """A question for the table: what was rolled, or which value was chosen."""

    id: int
    kind: str  # "roll" (confirm or correct the dice) or "place" (which value was taken)
    reason: str  # the tracker's reason (count, colour, unsure, scooped) or "rules"
    message: str
    candidates: list[int]
    dice: list[dict]  # the dice as read, for the page to show and correct
    photo: str | None
    created: float
    seen_place: int | None = None  # a value the tracker saw taken while this was open
    # Values seen leaving together while this was open: which one is asked once the roll is.
    taken: list[int] | None = None
    turn: int | None = None  # demo only: the scripted turn on the tray when it was asked

    @property
    def turn_over(self) -> bool:
        """A roll seen now is the next turn's, and must wait for this answer.

        So it is when the value is asked, or when the player's own dice (only their faces in
        doubt) have left the tray. A roll asked about for its count or colour may be no roll
        at all (a hand, the last player's dice again); a new roll replaces it, as ever.
        """
        gone = self.seen_place is not None or self.taken is not None
        return self.kind == "place" or (self.reason == "unsure" and gone)

    def to_dict(self, state: GameState | None = None, roll_open: bool = False
                ) -> dict[str, Any]:
        """The question as the pages show it; with the game's `state`, also whose dice they
        are and the answers the rules accept now, the likely one first (`answers`)."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "reason": self.reason,
                               "message": self.message, "candidates": list(self.candidates),
                               "dice": self.dice, "photo": self.photo}
        if state is not None:
            out.update(answers_for(self, state, roll_open))
        return out


class ConfirmError(ValueError):
    """A confirmation that does not fit what is pending (unknown id, missing value)."""



def answers_for(p: Pending, state: GameState, roll_open: bool = False) -> dict[str, Any]:
    """Whose dice a question shows, and the answers to offer, likely first.

    "confirm" (the dice as read) is offered only when the rules take that roll now, so no
    answer the table is offered fails; a roll of someone else's dice leads with "dismiss"
    (it was no roll: the last player's dice seen again, say), a misread one with "correct".
    """
    if p.kind == "place":
        return {"colour": None, "player": None,
                "answers": [{"do": "value", "label": f"They took the {v}s", "value": v}
                            for v in p.candidates]}
    players = {pl.colour for pl in state.players}
    counts = Counter(str(d.get("colour")) for d in p.dice if d.get("colour") in players)
    colour = counts.most_common(1)[0][0] if counts else None
    player = state.owner(colour) if colour is not None else None
    accepted = _roll_accepted(p.dice, state, roll_open)
    n = len(p.dice)
    confirm = {"do": "confirm", "label": f"Confirm these {n} {'die' if n == 1 else 'dice'}"}
    correct = {"do": "correct", "label": "Correct the dice"}
    dismiss = {"do": "dismiss", "label": "That was no roll: ignore it"}
    mover = state.player_to_act()
    if accepted:
        answers = [confirm, correct, dismiss]
    elif player is not None and mover is not None and player != mover:
        dismiss = {**dismiss, "label": f"Those were {player}'s dice: no roll, ignore it"}
        answers = [dismiss, correct]
    else:
        answers = [correct, dismiss]
    return {"colour": colour, "player": player, "answers": answers}


def _roll_accepted(dice: list[dict], state: GameState, roll_open: bool) -> bool:
    """Whether confirming `dice` as read would be taken by the rules (on a copy of the game)."""
    if not dice or any(d.get("value") is None for d in dice):
        return False
    try:
        roll = Roll(tuple(die_from_dict(d, i) for i, d in enumerate(dice)))
        trial = state.clone()
        if roll_open and trial.phase == "choose":
            trial.undo()  # confirming replaces the roll the camera applied
        trial.apply_action(roll)
    except (RulesError, ValueError):
        return False
    return True


def die_from_dict(d: dict, i: int) -> Die:
    value = d.get("value")
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 6:
        raise ValueError(f"die {i}: value must be 1-6, not {value!r}")
    colour = d.get("colour")
    if not isinstance(colour, str) or not colour:
        raise ValueError(f"die {i}: colour must be a name")
    return Die(colour, value, bool(d.get("big", False)))



# Why the reader doubts a die (`DieRead.doubts`), as the table's question says it.
DOUBT_WORDS = {
    "lean": "leaning",
    "unreadable": "cocked or blurred",
    "edge": "at the picture's edge",
    "small": "small in the picture",
    "crowded": "touching another die",
    "faint": "hard to make out",
    "glare": "glare on its face",
    "pips": "pips unclear",
    "angle": "seen from the side",
    "disagree": "read differently from frame to frame",
    "unsure": "face unclear",
}


def doubt_words(dice: Sequence[Any]) -> str:
    """The doubts of the dice a question is about, most common first, in words: "leaning,
    at the picture's edge" (empty when the reader gave none)."""
    counts: dict[str, int] = {}
    for d in dice:
        if d.value is not None and d.confidence >= tk.CERTAIN:
            continue
        for code in getattr(d, "doubts", ()) or ():
            counts[code] = counts.get(code, 0) + 1
    order = sorted(counts, key=lambda c: (-counts[c], list(DOUBT_WORDS).index(c)
                                          if c in DOUBT_WORDS else len(DOUBT_WORDS)))
    return ", ".join(DOUBT_WORDS.get(c, c) for c in order[:3])


def doubt_message(ev: tk.NeedsConfirmation) -> str:
    if ev.reason == "unsure":
        unsure = [d for d in ev.dice if d.value is None or d.confidence < tk.CERTAIN]
        n = len(unsure)
        what = "A die" if n <= 1 else f"{n} dice"
        why = doubt_words(unsure)
        return f"{what} could not be read for sure" + (f" ({why})." if why else ".")
    return {
        "count": "The number of dice does not match what the player holds.",
        "colour": "A die's colour is neither the player's nor neutral.",
    }.get(ev.reason, ev.reason)

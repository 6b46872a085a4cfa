"""Actions as plain values (OpenSpiel style): what a player or the table does, nothing more.

They are immutable and serialise to small JSON objects, which is what the event store keeps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from .errors import IllegalAction


class BadAction(IllegalAction):
    """A serialised action that is malformed (unknown type, missing or wrong field)."""


class Die(NamedTuple):
    """One die as read: a NamedTuple because a game creates tens of thousands of them.

    `value` None is a die of a player's roll whose face nobody knows: the camera could not read
    it, and it stayed in the tray, so the turn did not need it. It is never placed; keeping it
    unknown is honest where a guessed face would put a wrong roll on record.
    """

    colour: str
    value: int | None
    big: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"colour": self.colour, "value": self.value, "big": self.big}

    @property
    def face(self) -> str:
        """The value as people write it: "?" for a die that was not read."""
        return "?" if self.value is None else str(self.value)


def by_face(dice: Iterable[Die]) -> list[Die]:
    """Dice in the order a roll is read out: by value, unread ones last."""
    return sorted(dice, key=lambda d: (d.value is None, d.value or 0))


def agrees(recorded: Iterable[Die], shown: Iterable[Die]) -> bool:
    """Whether a recorded roll is true to the dice that lay there: the same dice, and every
    face it records the one shown (an unread die agrees with any face of its kind).

    This is the test of "never a wrong roll on record" for the benchmarks and tests that know
    what was really thrown.
    """
    left = Counter(shown)
    unread: Counter[tuple[str, bool]] = Counter()
    for d in recorded:
        if d.value is None:
            unread[(d.colour, d.big)] += 1
        elif left[d] > 0:
            left[d] -= 1
        else:
            return False
    return Counter((d.colour, d.big) for d in left.elements()) == unread


@dataclass(frozen=True)
class Deal:
    """Money for the coming round.

    `casinos=None` lets the app deal from its seeded virtual deck; otherwise six lists of
    note values (casino 1 first) that the table dealt by hand from the real pile.
    """

    casinos: tuple[tuple[int, ...], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.casinos is None:
            return {"type": "deal"}
        return {"type": "deal", "casinos": [list(c) for c in self.casinos]}


@dataclass(frozen=True)
class Roll:
    """The dice that landed in the tray, as the camera or the table reports them."""

    dice: tuple[Die, ...]
    player: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _with_player({"type": "roll", "dice": [d.to_dict() for d in self.dice]}, self)


@dataclass(frozen=True)
class Place:
    """Move every die showing `value` in the current roll to casino `value`."""

    value: int
    player: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _with_player({"type": "place", "value": self.value}, self)


@dataclass(frozen=True)
class Pass:
    """Sit this turn out after rolling: a chip (Royale) or a skip (Custom house rules)."""

    player: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _with_player({"type": "pass"}, self)


@dataclass(frozen=True)
class TileChoice:
    """A decision a Royale casino tile asks for: `tile` is the face's code ("G2"), `choice`
    what was decided ("move", "guess", "take" ...), `value` the number it needs, if any (how
    many dice, which casino, how many tokens)."""

    tile: str
    choice: str
    value: int | None = None
    player: str | None = None

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"type": "tile", "tile": self.tile, "choice": self.choice}
        if self.value is not None:
            payload["value"] = self.value
        return _with_player(payload, self)


Action = Deal | Roll | Place | Pass | TileChoice


def _with_player(payload: dict[str, Any], action: Roll | Place | Pass | TileChoice
                 ) -> dict[str, Any]:
    if action.player is not None:
        payload["player"] = action.player
    return payload


def _player(payload: dict, where: str) -> str | None:
    player = payload.get("player")
    if player is not None and (not isinstance(player, str) or not player.strip()):
        raise BadAction(f"{where}: 'player' must be a player's name")
    return player.strip() if player else None


def _int(payload: dict, key: str, where: str) -> int:
    value = payload.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadAction(f"{where}: '{key}' must be a whole number, got {value!r}")
    return value


def die_from_dict(payload: Any, where: str = "die") -> Die:
    if not isinstance(payload, dict):
        raise BadAction(f"{where} must be an object with colour and value")
    colour = payload.get("colour")
    if not isinstance(colour, str) or not colour.strip():
        raise BadAction(f"{where}: 'colour' must be a non-empty string")
    big = payload.get("big", False)
    if not isinstance(big, bool):
        raise BadAction(f"{where}: 'big' must be true or false")
    if payload.get("value", 0) is None:
        return Die(colour.strip().lower(), None, big)
    value = _int(payload, "value", where)
    if not 1 <= value <= 6:
        raise BadAction(f"{where}: 'value' must be 1-6 (or null: not read), got {value}")
    return Die(colour.strip().lower(), value, big)


def action_from_dict(payload: Any) -> Action:
    """Parse a serialised action, naming the field that is wrong."""
    if not isinstance(payload, dict):
        raise BadAction("an action must be a JSON object with a 'type'")
    kind = payload.get("type")
    if kind == "deal":
        casinos = payload.get("casinos")
        if casinos is None:
            return Deal()
        if not isinstance(casinos, list) or not all(isinstance(c, list) for c in casinos):
            raise BadAction("deal: 'casinos' must be a list of six lists of note values")
        for i, notes in enumerate(casinos, 1):
            for n in notes:
                if isinstance(n, bool) or not isinstance(n, int):
                    raise BadAction(f"deal: casino {i} has a note that is not a number: {n!r}")
        return Deal(tuple(tuple(c) for c in casinos))
    if kind == "roll":
        dice = payload.get("dice")
        if not isinstance(dice, list):
            raise BadAction("roll: 'dice' must be a list of dice")
        return Roll(
            tuple(die_from_dict(d, f"roll: die {i + 1}") for i, d in enumerate(dice)),
            _player(payload, "roll"),
        )
    if kind == "place":
        return Place(_int(payload, "value", "place"), _player(payload, "place"))
    if kind == "pass":
        return Pass(_player(payload, "pass"))
    if kind == "tile":
        return _tile_choice(payload)
    raise BadAction(f"unknown action type {kind!r} (expected deal, roll, place, pass or tile)")


def _tile_choice(payload: dict) -> TileChoice:
    for key in ("tile", "choice"):
        text = payload.get(key)
        if not isinstance(text, str) or not text.strip():
            raise BadAction(f"tile: '{key}' must be a non-empty string")
    value = None if payload.get("value") is None else _int(payload, "value", "tile")
    return TileChoice(payload["tile"].strip().upper(), payload["choice"].strip().lower(), value,
                      _player(payload, "tile"))

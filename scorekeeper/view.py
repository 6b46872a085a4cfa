"""What an edition's rules and a casino's effects may see and touch of a game.

`GameState` runs the turn loop; the editions (`editions.py`) and the effects (`effects.py`)
decide what differs between games. They get the state typed as `Table`, a narrow view: the
seats, the money won, the draw from the pile, a way to add dice and to tell the players
something, and the edition's own per-game state (`Extra`). They never see the pile, the hands
or the history, so a rule cannot corrupt what undo and the event store replay; and they import
this module, never `state.py`, so the imports point one way: state -> editions -> view.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

HOLDINGS = ("chip", "$1", "skip card")
"""What a player may hold besides the money won, in the order the log names a pass's cost:
Royale's chips, Custom rule A's $1 chips and Custom rule B's skip cards."""


class Extra:
    """An edition's own per-game state (Royale's chips, Custom's skip cards and cash).

    The edition makes it (`Edition.new_extra`) and owns its meaning; the state holds it and
    hands it back through `Table.extra`, so the state knows no edition's rules and one edition
    object serves many games, as an OpenSpiel game holds a variant's parameters and its states
    the rest. This base is an edition with nothing but notes and dice.
    """

    def count(self, what: str, name: str) -> int:
        """How many of `what` (one of HOLDINGS) `name` holds now: the API shows them all."""
        return 0


class Seat(Protocol):
    """A player as the rules see them."""

    @property
    def name(self) -> str: ...

    @property
    def colour(self) -> str: ...


@runtime_checkable
class Table(Protocol):
    """The part of a game an edition's rules and an effect's hooks may use."""

    @property
    def players(self) -> Sequence[Seat]: ...

    @property
    def seat_of(self) -> Mapping[str, int]: ...

    @property
    def start_player(self) -> int: ...

    @property
    def won(self) -> Mapping[str, Sequence[int]]: ...

    @property
    def extra(self) -> Extra: ...

    def money(self, name: str) -> int:
        """Money in hand now: what was won plus any cash the edition's extra holds."""
        ...

    def draw(self, casino: int) -> int | None:
        """The top note of the pile for `casino`, reshuffling when it is out; None when even
        the discards are gone."""
        ...

    def notice(self, kind: str, **data: Any) -> None:
        """Tell the players something happened (a reshuffle, a short casino)."""
        ...

    def add_dice(self, casino: int, colour: str, n: int = 1, big: bool = False) -> None:
        """Put dice straight into a casino (an effect's imaginary player's)."""
        ...

    @property
    def round(self) -> int: ...

    @property
    def rng(self) -> random.Random:
        """The game's seeded randomness: what a rule draws (Royale's tiles) replays alike."""
        ...

    def dice_in(self, casino: int) -> Mapping[tuple[str, bool], int]:
        """The dice in a casino now, (colour, big) -> count."""
        ...

    def remove_dice(self, casino: int, colour: str, n: int = 1, big: bool = False) -> None:
        """Take dice out of a casino (onto a tile): they count there no more this round."""
        ...

    def pay_card(self, name: str, value: int) -> None:
        """Give `name` a money card (one the edition took from its bank)."""
        ...

    def take_card(self, name: str, value: int) -> None:
        """Take a money card of `value` from `name` (paid into the edition's bank)."""
        ...

    def take_pile(self, keep: int) -> list[int]:
        """Take every card of the pile but the top `keep` (Royale's bank is the rest)."""
        ...

    @property
    def last_roll(self) -> tuple[Any, ...]:
        """The dice of the last roll a player placed from (`actions.Die`s), or ()."""
        ...

    @property
    def last_placed(self) -> int | None:
        """The number the player placed from that roll (None: they passed)."""
        ...

    def hand_of(self, name: str) -> Mapping[tuple[str, bool], int]:
        """The dice `name` has still to roll this round, (colour, big) -> count (a copy)."""
        ...

    def take_from_hand(self, name: str, colour: str, big: bool = False) -> None:
        """Take one die out of `name`'s remaining dice (onto a tile, into a casino)."""
        ...

    def give_to_hand(self, name: str, colour: str, big: bool = False) -> None:
        """Give `name` a die back to roll this round."""
        ...

    def end_turn(self) -> None:
        """The turn a tile's offer came before is spent without a roll (Power Play)."""
        ...

    def payout_now(self, casino: int) -> Any:
        """What `casino` pays if the round ended now (a `payout.CasinoPayout`)."""
        ...

"""The one place where per-casino effects (Royale's casino tiles) hook into the rules.

An edition hands the state a mapping casino -> effects at the start of each round. The state
calls the hooks at fixed points; with no effects, the rules are the printed base game. Tiles
(a later issue) are subclasses; nothing else in the engine needs to change for them.
The hooks get the game as a `view.Table`, the part of it rules may touch. Effects may add
dice of imaginary players (e.g. Royale's gray blank dice) with `state.add_dice(casino, colour,
n)`: any dice colour that is not a player's counts as an imaginary player of that colour,
whose winnings go under the pile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .actions import Die
    from .payout import CasinoPayout
    from .view import Table


class CasinoEffect:
    """Base effect: every hook does nothing."""

    name = "none"

    def on_place(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        """Called after `owner`'s dice were moved into `casino` (rolls and neutral dice)."""

    def before_payout(self, state: Table, casino: int, weights: dict[str, int]) -> None:
        """May change the weights (dice per owner, Biggy = 2) in place before ties cancel."""

    def at_payout(self, state: Table, casino: int, payout: CasinoPayout) -> None:
        """Sees the casino's result after the notes were paid out."""

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        """Called when `owner` placed dice from a roll into `casino` on their turn: what
        Royale calls activating the casino's tile (neutral dice and effects' dice do not)."""

    def on_turn(self, state: Table, name: str) -> None:
        """Called when `name`'s turn begins, before they roll: an offer made instead of the
        roll is asked here."""

    def after_action(self, state: Table, casino: int) -> None:
        """Called after every action: what holds "at any time during the round"."""

    def before_round_end(self, state: Table, casino: int) -> None:
        """Called once the last die is placed, before any payout: a decision the round's end
        asks for (a tile's) is asked here."""

    def at_payout_ask(self, state: Table, casino: int) -> None:
        """Called once the round's end decisions are made and the dice are final, before
        any payout: what the payout itself asks (Black Box's piles) is asked here."""

    def at_round_end(self, state: Table, casino: int) -> None:
        """Called after all six casinos paid out, casino 1 first, the dice still in place."""

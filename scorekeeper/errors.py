"""Exceptions of the rules engine.

Every refusal is a specific subclass of :class:`IllegalAction` so that callers (the web API,
the tracker, the CLI) can tell a player's mistake from a bug, and show the message as it is:
each message names what was wrong in words a player understands.
"""

from __future__ import annotations


class RulesError(Exception):
    """Base of everything the rules engine refuses."""


class ConfigError(RulesError):
    """A game cannot be set up with these players or options."""


class IllegalAction(RulesError):
    """An action that the rules do not allow in the current state; the state is unchanged."""


class NotYourTurn(IllegalAction):
    pass


class WrongPhase(IllegalAction):
    """E.g. placing before rolling, or rolling while money still has to be dealt."""


class ValueNotRolled(IllegalAction):
    pass


class ImpossibleRoll(IllegalAction):
    """The roll does not match the dice the player holds (count, colour or Biggy), or a face
    it needs was not read."""


class GameOver(IllegalAction):
    pass


class UnknownNote(IllegalAction):
    """A note or card value that the deck does not have (any more)."""


class InvalidDeal(IllegalAction):
    """Money entered by the table that breaks the edition's dealing rule."""


class CannotPass(IllegalAction):
    """Passing (chip, skip card) without the means or beyond the agreed limit."""


class NothingToUndo(IllegalAction):
    pass


class StoreError(Exception):
    """A saved game that cannot be read back (missing, corrupt, newer schema)."""

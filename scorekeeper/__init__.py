"""The rules engine of Las Vegas: pure Python, no I/O, deterministic under a seed.

Public API: `GameState` (one game; legal actions, apply, undo, results), the action values,
`pay_casino` (one casino's payout) and the exceptions. `store` keeps games in SQLite.
Royale's casino tiles are in `tiles`; their decisions are `TileChoice` actions.
`current_player()` answers CHANCE during the deal and TERMINAL at the end, as OpenSpiel does;
`player_to_act()` is the name or None. Editions and effects see a game as a `Table` and keep
what they add to it in their own `Extra`.
"""

from .actions import (
    Action,
    BadAction,
    Deal,
    Die,
    Pass,
    Place,
    Roll,
    TileChoice,
    action_from_dict,
    agrees,
    by_face,
)
from .editions import EDITIONS, Edition, make_edition
from .effects import CasinoEffect
from .errors import (
    CannotPass,
    ConfigError,
    GameOver,
    IllegalAction,
    ImpossibleRoll,
    InvalidDeal,
    NothingToUndo,
    NotYourTurn,
    RulesError,
    StoreError,
    UnknownNote,
    ValueNotRolled,
    WrongPhase,
)
from .payout import CasinoPayout, pay_casino
from .state import CHANCE, TERMINAL, GameConfig, GameState, Player
from .view import Extra, Table

__all__ = [
    "CHANCE",
    "EDITIONS",
    "TERMINAL",
    "Action",
    "BadAction",
    "CannotPass",
    "CasinoEffect",
    "CasinoPayout",
    "ConfigError",
    "Deal",
    "Die",
    "Edition",
    "Extra",
    "GameConfig",
    "GameOver",
    "GameState",
    "IllegalAction",
    "ImpossibleRoll",
    "InvalidDeal",
    "NotYourTurn",
    "NothingToUndo",
    "Pass",
    "Place",
    "Player",
    "Roll",
    "RulesError",
    "StoreError",
    "Table",
    "TileChoice",
    "UnknownNote",
    "ValueNotRolled",
    "WrongPhase",
    "action_from_dict",
    "agrees",
    "by_face",
    "make_edition",
    "pay_casino",
]

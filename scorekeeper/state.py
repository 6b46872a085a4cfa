"""One game in progress: the single state object every part of the product talks to.

Modelled on OpenSpiel's API: `legal_actions()`, `apply_action()`, `undo()`, `is_over()`,
`returns()`. Rolls come from the real dice, so roll phases are "chance nodes" whose outcome
the caller supplies (`random_roll` draws one for simulations). Everything random inside the
engine (shuffling the money) comes from one `random.Random(seed)`, so replaying the same
actions from the same config always gives the same state: that is how undo and the event
store work.

Every `apply_action` validates completely before it changes anything, so an illegal action
raises and leaves the state exactly as it was.

The state knows no edition's rules: it asks its edition at each decision point, handing it
itself as a `view.Table`, and holds the edition's own per-game state (`extra`) for it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .actions import Action, BadAction, Deal, Die, Pass, Place, Roll, TileChoice
from .editions import CASINOS, DiceKey, Edition, make_edition
from .effects import CasinoEffect
from .errors import (
    ConfigError,
    GameOver,
    IllegalAction,
    ImpossibleRoll,
    InvalidDeal,
    NothingToUndo,
    NotYourTurn,
    UnknownNote,
    ValueNotRolled,
    WrongPhase,
)
from .payout import CasinoPayout, pay_casino
from .view import HOLDINGS, Extra

PHASES = ("deal", "neutral", "roll", "choose", "tile", "over")
CHANCE: Final = -1
"""`current_player()` while the money is dealt: chance, no player, moves (OpenSpiel's -1).
A name is text, so a number can never be mistaken for a player."""
TERMINAL: Final = -4
"""`current_player()` once the game is over (OpenSpiel's -4)."""
LOG_SHOWN = 12
"""Log entries `to_dict` sends: the newest, and none older than the round before this one
(what a phone may see while the money is hidden: only the last payout is on the table)."""


@dataclass(frozen=True)
class Player:
    name: str
    colour: str


@dataclass(frozen=True)
class GameConfig:
    """Everything needed to recreate a game before its first action."""

    edition: str
    players: tuple[Player, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    start_player: int = 0

    def __post_init__(self) -> None:
        # Accept (name, colour) pairs and mappings too, and refuse anything a saved game
        # could not be rebuilt from: a config must survive a JSON round trip unchanged.
        if type(self.edition) is not str:
            raise ConfigError("edition must be a name: classic, custom or royale")
        try:
            raw = list(self.players)
        except TypeError:
            raise ConfigError("players must be a list of (name, colour)") from None
        players = []
        for i, p in enumerate(raw, 1):
            if isinstance(p, Player):
                name, colour = p.name, p.colour
            elif isinstance(p, Mapping):
                name, colour = p.get("name"), p.get("colour")
            elif isinstance(p, tuple | list) and len(p) == 2:
                name, colour = p
            else:
                raise ConfigError(f"player {i} must be a name and a colour")
            if type(name) is not str or type(colour) is not str:
                raise ConfigError(f"player {i} needs a name and a colour, both text")
            players.append(Player(name, colour))
        object.__setattr__(self, "players", tuple(players))
        for key in ("seed", "start_player"):
            if type(getattr(self, key)) is not int:
                raise ConfigError(f"{key} must be a whole number, got {getattr(self, key)!r}")
        if not isinstance(self.options, Mapping) or not all(
            type(k) is str for k in self.options
        ):
            raise ConfigError("options must be an object with named options")
        object.__setattr__(self, "options", dict(self.options))

    def to_dict(self) -> dict[str, Any]:
        return {
            "edition": self.edition,
            "players": [{"name": p.name, "colour": p.colour} for p in self.players],
            "options": dict(self.options),
            "seed": self.seed,
            "start_player": self.start_player,
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> GameConfig:
        if not isinstance(payload, Mapping):
            raise ConfigError("a game config must be a JSON object")
        players = payload.get("players")
        if not isinstance(players, list):
            raise ConfigError("players must be a list of {name, colour}")
        return cls(payload.get("edition"), tuple(players), payload.get("options") or {},
                   payload.get("seed", 0), payload.get("start_player", 0))


@dataclass
class Casino:
    notes: list[int] = field(default_factory=list)
    dice: Counter[DiceKey] = field(default_factory=Counter)


def _count_words(counts: Counter[DiceKey]) -> str:
    parts = []
    for (colour, big), n in sorted(counts.items()):
        if n:
            kind = "Biggy" if big else "dice" if n != 1 else "die"
            parts.append(f"{n} {colour} {kind}")
    return ", ".join(parts) or "no dice"


def _canonical(action: Action) -> Action:
    """The action with exact types (ints, bools, tuples), or BadAction.

    What is kept in the history must replay identically from its JSON: `True` for 1, `1.0`
    for 1 or a list the caller later empties would otherwise poison the saved game.
    """
    player = getattr(action, "player", None)
    if player is not None and type(player) is not str:
        raise BadAction(f"'player' must be a player's name, got {player!r}")
    if isinstance(action, Roll):
        try:
            dice = tuple(action.dice)
        except TypeError:
            raise BadAction("roll: 'dice' must be a list of dice") from None
        for i, d in enumerate(dice, 1):
            if not (isinstance(d, Die) and type(d.colour) is str
                    and (d.value is None or type(d.value) is int) and type(d.big) is bool):
                raise BadAction(f"roll: die {i} must be Die(colour, value, big), got {d!r}")
        return action if type(action.dice) is tuple else Roll(dice, player)
    if isinstance(action, Place):
        if type(action.value) is not int:
            raise BadAction(f"place: the value must be a whole number, got {action.value!r}")
        return action
    if isinstance(action, Deal):
        if action.casinos is None:
            return action
        try:
            casinos = tuple(tuple(notes) for notes in action.casinos)
        except TypeError:
            raise BadAction("deal: 'casinos' must be six lists of note values") from None
        for i, notes in enumerate(casinos, 1):
            for note in notes:
                if type(note) is not int:
                    raise BadAction(f"deal: casino {i} has a note that is not a whole number: "
                                    f"{note!r}")
        return Deal(casinos)
    if isinstance(action, Pass):
        return action
    if isinstance(action, TileChoice):
        if type(action.tile) is not str or type(action.choice) is not str:
            raise BadAction(f"tile: 'tile' and 'choice' must be text, got {action!r}")
        if action.value is not None and type(action.value) is not int:
            raise BadAction(f"tile: the value must be a whole number, got {action.value!r}")
        return action
    raise BadAction(f"not an action: {action!r}")


class GameState:
    """A game of any edition, from the first deal to the final ranking."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.edition: Edition = make_edition(config.edition, config.options)
        self.players = self._checked_players(config.players)
        if not 0 <= config.start_player < len(self.players):
            raise ConfigError(
                f"start_player must be a seat from 0 to {len(self.players) - 1}"
            )
        self.seat_of = {p.name: i for i, p in enumerate(self.players)}
        self.owner_of_colour = {p.colour: p.name for p in self.players}
        self.rng = random.Random(config.seed)
        deck = self.edition.deck()
        self.pile: list[int] = [v for v in sorted(deck) for _ in range(deck[v])]
        self.rng.shuffle(self.pile)
        self.under: list[int] = []
        self.round = 1
        self.phase = "deal"
        self.start_player = config.start_player
        self.to_move: int | None = None
        self.hands: list[Counter[DiceKey]] = [Counter() for _ in self.players]
        self.pool: Counter[DiceKey] = Counter()
        self.casinos: dict[int, Casino] = {c: Casino() for c in CASINOS}
        self.won: dict[str, list[int]] = {p.name: [] for p in self.players}
        self.extra: Extra = self.edition.new_extra([p.name for p in self.players])
        self.roll: tuple[Die, ...] | None = None
        self.last: dict[str, Any] | None = None
        self.history: list[Action] = []
        self.notices: list[dict[str, Any]] = []
        self.round_results: list[dict[str, Any]] = []
        self.effects: dict[int, list[CasinoEffect]] = {}
        self.ending = self.awaiting_roll = self.payout_asked = False
        self.log: list[dict[str, Any]] = []
        self._begin_round()

    @classmethod
    def new(
        cls,
        edition: str,
        players: Iterable[Any],
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        start_player: int = 0,
    ) -> GameState:
        return cls(GameConfig(edition, players, {} if options is None else options,  # type: ignore[arg-type]
                              seed, start_player))

    def _checked_players(self, players: Sequence[Player]) -> tuple[Player, ...]:
        self.edition.validate_player_count(len(players))
        reserved = set(self.edition.reserved_colours())
        seen_names: set[str] = set()
        seen_colours: set[str] = set()
        out = []
        for p in players:
            name, colour = p.name.strip(), p.colour.strip().lower()
            if not name or not colour:
                raise ConfigError("every player needs a name and a dice colour")
            if name.lower() in seen_names:
                raise ConfigError(f"two players are called {name!r}")
            if colour in seen_colours:
                raise ConfigError(f"two players have {colour} dice")
            if colour in reserved or name.lower() in reserved:
                taken = colour if colour in reserved else name.lower()
                raise ConfigError(
                    f"{colour if colour in reserved else name!r} is "
                    f"{self.edition.reserved_for(taken)} in this game; pick another colour "
                    f"or name"
                )
            seen_names.add(name.lower())
            seen_colours.add(colour)
            out.append(Player(name, colour))
        return tuple(out)

    # --- queries -----------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.phase == "over"

    is_terminal = is_over

    def is_chance_node(self) -> bool:
        """A roll is due: its outcome comes from the real dice, not from a choice."""
        if self.phase == "tile":
            pending = self.edition.pending(self)
            return pending is not None and pending.roll is not None
        return self.phase in ("neutral", "roll")

    @property
    def seq(self) -> int:
        return len(self.history)

    def current_player(self) -> str | int:
        """Who moves, OpenSpiel style: a player's name, CHANCE while the money is dealt (the
        app's shuffle or the table's hand decides it), TERMINAL once the game is over.

        A roll is a chance node too (`is_chance_node`), but a named player rolls it and the
        roll is checked against their dice, so during rolls this names the roller."""
        name = self.player_to_act()
        if name is None:
            return TERMINAL if self.phase == "over" else CHANCE
        return name

    def player_to_act(self) -> str | None:
        """The name of the player who rolls, places or passes now, or None while nobody does
        (the deal, the game's end): what the API's `to_move` and the log's `player` say."""
        if self.phase in ("roll", "choose", "neutral"):
            seat = self.start_player if self.phase == "neutral" else self.to_move
            return self.players[seat].name if seat is not None else None
        if self.phase == "tile":
            pending = self.edition.pending(self)
            return pending.player if pending is not None else None
        return None

    def expected_roll(self) -> Counter[DiceKey]:
        """The dice the next roll must contain: who moves, their colours, how many."""
        return Counter(self._due())

    def _due(self) -> Counter[DiceKey]:
        if self.phase == "neutral":
            return self.pool
        if self.phase == "roll" and self.to_move is not None:
            return self.hands[self.to_move]
        if self.phase == "tile":
            pending = self.edition.pending(self)
            if pending is not None and pending.roll is not None:
                return Counter(pending.roll)
        return Counter()

    def legal_actions(self) -> list[Action]:
        """Decisions open now. Rolls (chance) and hand-entered deals are open-ended."""
        if self.phase == "deal":
            return [Deal()]
        if self.phase == "choose" and self.roll is not None:
            closed = self.edition.closed_casinos(self)
            actions: list[Action] = [Place(v) for v in _faces(self.roll) if v not in closed]
            name = self.player_to_act()
            if not actions or (name and self.edition.pass_refusal(self, name) is None):
                actions.append(Pass())
            return actions
        if self.phase == "tile":
            pending = self.edition.pending(self)
            return list(pending.choices) if pending is not None else []
        return []

    def money(self, name: str) -> int:
        """Money in hand now: notes or cards won plus cash (Custom rule A's chips)."""
        return sum(self.won[name]) + self.extra.count("$1", name)

    @property
    def chips(self) -> dict[str, int]:
        """Royale's chips per player (0 in other editions); a copy: the edition owns them."""
        return {p.name: self.extra.count("chip", p.name) for p in self.players}

    @property
    def cash(self) -> dict[str, int]:
        """Custom rule A's $1 chips per player (0 otherwise); a copy."""
        return {p.name: self.extra.count("$1", p.name) for p in self.players}

    @property
    def skip_cards(self) -> dict[str, int]:
        """Custom rule B's skip cards per player (0 otherwise); a copy."""
        return {p.name: self.extra.count("skip card", p.name) for p in self.players}

    def dice_left(self, name: str) -> int:
        return sum(self.hands[self.seat_of[name]].values())

    def owner(self, colour: str) -> str:
        return self.owner_of_colour.get(colour, colour)

    def weights(self, casino: int) -> dict[str, int]:
        """Dice per owner in a casino, a Biggy counting as two: what majority is decided on."""
        out: dict[str, int] = {}
        for (colour, big), n in self.casinos[casino].dice.items():
            if n:
                who = self.owner(colour)
                out[who] = out.get(who, 0) + n * (2 if big else 1)
        return out

    def returns(self) -> list[int]:
        """Final money per seat (edition extras included), OpenSpiel style."""
        return [self.edition.score(self, p.name) for p in self.players]

    # --- actions -----------------------------------------------------------------------
    def apply_action(self, action: Action) -> None:
        if self.phase == "over":
            raise GameOver("the game is over; start a new one or undo the last action")
        action = _canonical(action)
        before = (self.round, self.phase, self.player_to_act())
        spent = self._spendable(before[2])
        if isinstance(action, Deal):
            self._deal(action)
        elif isinstance(action, Roll):
            if self.phase == "tile":
                self._tile_roll(action)
            else:
                self._roll(action)
        elif isinstance(action, Place):
            self._place(action)
        elif isinstance(action, TileChoice):
            self._tile_choice(action)
        else:
            self._pass(action)
        for casino in CASINOS:
            for effect in self.effects.get(casino, ()):
                effect.after_action(self, casino)
        self.history.append(action)
        self._log(action, before, spent)

    def _spendable(self, name: str | None) -> dict[str, int]:
        """What a skip may cost: chips, cash and skip cards of `name`."""
        if name is None or name not in self.seat_of:
            return {}
        return {what: self.extra.count(what, name) for what in HOLDINGS}

    def _log(self, action: Action, before: tuple[int, str, str | None],
             spent: dict[str, int]) -> None:
        """The game log in data: what each action did, for the pages to say in words."""
        rnd, phase, who = before
        entry: dict[str, Any] = {"seq": self.seq, "round": rnd, "player": who}
        if isinstance(action, Deal):
            entry.update(kind="deal", player=None, by="app" if action.casinos is None else "hand")
        elif isinstance(action, TileChoice):
            hidden = self.edition.hidden_choice(action)
            entry.update(kind="tile", tile=action.tile, choice=action.choice,
                         value=None if hidden else action.value, hidden=hidden)
        elif isinstance(action, Roll) and phase == "tile":
            entry.update(kind="tile_roll", dice=_dice_groups(action.dice))
        elif isinstance(action, Roll):
            entry.update(kind="neutral" if phase == "neutral" else "roll",
                         dice=_dice_groups(action.dice))
        else:
            rolled = self.last["dice"] if self.last else ()
            entry["dice"] = _dice_groups(rolled)
            if isinstance(action, Place):
                entry.update(kind="place", value=action.value,
                             count=sum(1 for d in rolled if d.value == action.value))
            else:
                now = self._spendable(who)
                cost = next((k for k, v in spent.items() if now.get(k, v) < v), None)
                entry.update(kind="pass", cost=cost)
            if self.log and self.log[-1]["kind"] == "roll" and self.log[-1]["player"] == who:
                self.log.pop()  # the roll and what its player did with it: one turn
        self.log.append(entry)
        if self.round != rnd or self.is_over():
            self.log.append({"seq": self.seq, "round": rnd, "player": None, "kind": "payout"})

    def undo(self) -> Action:
        """Take back the last action by replaying all the others from the start."""
        if not self.history:
            raise NothingToUndo("there is nothing to undo")
        last = self.history[-1]
        fresh = GameState(self.config)
        for action in self.history[:-1]:
            fresh.apply_action(action)
        self.__dict__.update(fresh.__dict__)
        return last

    def clone(self) -> GameState:
        fresh = GameState(self.config)
        for action in self.history:
            fresh.apply_action(action)
        return fresh

    def _check_player(self, claimed: str | None) -> None:
        expected = self.player_to_act()
        if claimed is not None and claimed != expected:
            raise NotYourTurn(f"it is {expected}'s turn, not {claimed}'s")

    def _deal(self, action: Deal) -> None:
        if self.phase != "deal":
            raise WrongPhase(f"the money for round {self.round} is already dealt")
        if action.casinos is None:
            casinos = self.edition.deal(self)
        else:
            casinos = [sorted(notes, reverse=True) for notes in action.casinos]
            self._check_hand_deal(casinos)
            for notes in casinos:
                for note in notes:
                    (self.pile if note in self.pile else self.under).remove(note)
        for casino, notes in zip(CASINOS, casinos, strict=True):
            self.casinos[casino].notes = list(notes)
        self.edition.after_deal(self)
        if self.pool:
            self.phase = "neutral"
        else:
            self.phase, self.to_move = "roll", self.start_player

    def _check_hand_deal(self, casinos: list[list[int]]) -> None:
        what = self.edition.note_name()
        if len(casinos) != 6:
            raise InvalidDeal(f"money must be entered for all 6 casinos, got {len(casinos)}")
        deck = self.edition.deck()
        used: Counter[int] = Counter()
        for casino, notes in zip(CASINOS, casinos, strict=True):
            for note in notes:
                if note not in deck:
                    values = ", ".join(f"{v:,}" for v in sorted(deck))
                    raise UnknownNote(
                        f"casino {casino}: there is no {what} of {note:,} in this game "
                        f"(values: {values})"
                    )
                used[note] += 1
        available = Counter(self.pile) + Counter(self.under)
        for note, n in sorted(used.items()):
            if n > available[note]:
                raise UnknownNote(
                    f"the deal has {n} {what}s of {note:,}, but only {available[note]} "
                    f"of the {deck[note]} in the game are left to deal"
                )
        exhausts = not (available - used)
        self.edition.validate_deal(casinos, exhausts)

    def _check_roll(self, dice: tuple[Die, ...], expected: Counter[DiceKey], who: str,
                    also: Sequence[Counter[DiceKey]] = ()) -> None:
        """Refuse a roll that is not `expected` (or one of `also`) or whose faces are bad."""
        for i, d in enumerate(dice, 1):
            if d.value is None and self.phase == "roll":
                continue  # not read, and not placed: see `Die`
            if d.value is None:
                raise ImpossibleRoll(f"die {i} was not read; every neutral die goes to the "
                                     "casino of its face, so each needs one")
            if type(d.value) is not int or not 1 <= d.value <= 6:
                raise ImpossibleRoll(f"die {i} shows {d.value!r}; a die shows 1 to 6")
        got = Counter((d.colour, d.big) for d in dice)
        if got == expected or got in also:
            if dice and all(d.value is None for d in dice):
                # Unread dice are dice the turn did not need; with none read there is
                # nothing to place, and the game would wait for a placement that cannot be.
                raise ImpossibleRoll(f"no die of this roll was read: enter the values of "
                                     f"{who}'s {_count_words(got)}")
            return
        expected_words = " or ".join(_count_words(c) for c in (expected, *also))
        colours = {c for c, _ in expected}
        for colour, _ in got:
            if colour not in colours:
                owner = self.owner_of_colour.get(colour)
                if owner is not None and self.phase == "roll":
                    raise NotYourTurn(
                        f"it is {who}'s turn, but the roll has {owner}'s {colour} dice"
                    )
                raise ImpossibleRoll(
                    f"the roll has a {colour} die, which is not one of the dice {who} rolls "
                    f"({expected_words})"
                )
        raise ImpossibleRoll(
            f"{who} rolls {expected_words}, but the roll has {_count_words(got)}"
        )

    def _roll(self, action: Roll) -> None:
        if self.phase not in ("neutral", "roll"):
            raise WrongPhase(self._phase_hint("roll"))
        self._check_player(action.player)
        who = self.player_to_act() or ""
        expected = self._due()
        dice = tuple(action.dice)
        if self.phase == "neutral":
            self._check_roll(dice, expected, f"{who} (the start player, neutral dice)",
                             self.edition.other_start_pools(self))
            for value in sorted({d.value for d in dice}):
                self._move_to_casino(value, tuple(d for d in dice if d.value == value))
            self.pool = Counter()
            self.last = {"player": who, "dice": dice, "value": None, "neutral": True}
            self.phase, self.to_move = "roll", self.start_player
            return
        self._check_roll(dice, expected, who)
        self.roll = dice
        self.phase = "choose"

    def _place(self, action: Place) -> None:
        if self.phase != "choose" or self.roll is None:
            raise WrongPhase(self._phase_hint("place"))
        self._check_player(action.player)
        moved = tuple(d for d in self.roll if d.value == action.value)
        if not moved:
            raise ValueNotRolled(
                f"no die shows {action.value} in this roll (rolled: "
                f"{', '.join(map(str, _faces(self.roll)))})"
            )
        if action.value in self.edition.closed_casinos(self):
            raise IllegalAction(f"casino {action.value} is closed (No Entry!): no die may "
                                f"be added to it; place another number")
        seat = self.to_move
        assert seat is not None
        hand = self.hands[seat]
        for d in moved:  # hands never keep zero counts: `_advance` relies on it
            key = (d.colour, d.big)
            hand[key] -= 1
            if not hand[key]:
                del hand[key]
        self._move_to_casino(action.value, moved)
        name = self.players[seat].name
        self.last = {"player": name, "dice": self.roll, "value": action.value}
        self.roll = None
        for effect in self.effects.get(action.value, ()):
            effect.on_activate(self, action.value, name, moved)
        self._go_on()

    def _go_on(self) -> None:
        """After a turn or a tile's decision: wait for the next decision a tile asks, else
        the next turn (or the round's end, when that was under way)."""
        if self.edition.pending(self) is not None:
            self.phase = "tile"
        elif self.ending:
            self._payout_asks()
        elif self.awaiting_roll:
            self.awaiting_roll = False
            self.phase = "roll"
        else:
            self._advance()

    def end_turn(self) -> None:
        """For effects: the turn a decision was asked before is spent without a roll."""
        self.awaiting_roll = False

    def _tile_choice(self, action: TileChoice) -> None:
        if self.phase != "tile":
            raise WrongPhase(self._phase_hint("decide for a tile"))
        self._check_player(action.player)
        self.edition.decide(self, action)
        self._go_on()

    def _tile_roll(self, action: Roll) -> None:
        self._check_player(action.player)
        pending = self.edition.pending(self)
        if pending is None or pending.roll is None:
            raise WrongPhase(f"no dice are to be thrown now: {self.player_to_act()} decides "
                             f"for a tile first")
        dice = tuple(action.dice)
        if any(d.value is None for d in dice):
            raise ImpossibleRoll("a tile's dice are read to decide what it does: enter each "
                                 "die's value")
        self._check_roll(dice, Counter(pending.roll), self.player_to_act() or "")
        self.edition.tile_roll(self, dice)
        self._go_on()

    def _pass(self, action: Pass) -> None:
        if self.phase != "choose" or self.roll is None:
            raise WrongPhase(self._phase_hint("pass"))
        self._check_player(action.player)
        seat = self.to_move
        assert seat is not None
        name = self.players[seat].name
        if self._blocked():
            pass  # every number rolled is closed: the turn passes, and costs nothing
        else:
            self.edition.apply_pass(self, name)
        self.last = {"player": name, "dice": self.roll, "value": None, "passed": True}
        self.roll = None
        self._advance()

    def _blocked(self) -> bool:
        """Every number of the roll is a closed casino's: nothing can be placed."""
        closed = self.edition.closed_casinos(self)
        return bool(closed) and self.roll is not None and all(
            v in closed for v in _faces(self.roll))

    def _phase_hint(self, verb: str) -> str:
        who = self.player_to_act()
        return {
            "deal": f"cannot {verb}: the money for round {self.round} must be dealt first",
            "neutral": f"cannot {verb}: {who} must first roll the neutral dice",
            "roll": f"cannot {verb}: {who} must roll first",
            "choose": f"cannot {verb}: {who} must first place a number from the roll",
            "tile": f"cannot {verb}: {who} must first decide for a tile",
        }[self.phase]

    def _move_to_casino(self, casino: int, dice: tuple[Die, ...]) -> None:
        counts = self.casinos[casino].dice
        for d in dice:
            counts[(d.colour, d.big)] += 1
        effects = self.effects.get(casino)
        if not effects:
            return
        by_owner: dict[str, list[Die]] = {}
        for d in dice:
            by_owner.setdefault(self.owner(d.colour), []).append(d)
        for effect in effects:
            for owner, owned in by_owner.items():
                effect.on_place(self, casino, owner, tuple(owned))

    def add_dice(self, casino: int, colour: str, n: int = 1, big: bool = False) -> None:
        """For effects: put dice straight into a casino (e.g. Royale's gray blank dice)."""
        self.casinos[casino].dice[(colour, big)] += n

    def dice_in(self, casino: int) -> Mapping[DiceKey, int]:
        """For effects: the dice in a casino now (a copy)."""
        return {k: n for k, n in self.casinos[casino].dice.items() if n}

    def remove_dice(self, casino: int, colour: str, n: int = 1, big: bool = False) -> None:
        """For effects: take dice out of a casino (onto a tile)."""
        counts = self.casinos[casino].dice
        if counts[(colour, big)] < n:
            raise ValueError(f"casino {casino} holds fewer than {n} {colour} dice")
        counts[(colour, big)] -= n
        if not counts[(colour, big)]:
            del counts[(colour, big)]

    @property
    def last_roll(self) -> tuple[Die, ...]:
        """For effects: the dice of the roll last placed from."""
        return tuple(self.last["dice"]) if self.last and not self.last.get("neutral") else ()

    @property
    def last_placed(self) -> int | None:
        """For effects: the number placed from the last roll."""
        return self.last.get("value") if self.last else None

    def hand_of(self, name: str) -> Mapping[DiceKey, int]:
        """For effects: the dice `name` has left to roll (a copy)."""
        return dict(self.hands[self.seat_of[name]])

    def take_from_hand(self, name: str, colour: str, big: bool = False) -> None:
        """For effects: one die out of `name`'s hand."""
        hand = self.hands[self.seat_of[name]]
        if hand[(colour, big)] < 1:
            raise ValueError(f"{name} has no {colour} die left to take")
        hand[(colour, big)] -= 1
        if not hand[(colour, big)]:
            del hand[(colour, big)]

    def give_to_hand(self, name: str, colour: str, big: bool = False) -> None:
        """For effects: a die back into `name`'s hand."""
        self.hands[self.seat_of[name]][(colour, big)] += 1

    def pay_card(self, name: str, value: int) -> None:
        """For editions: hand `name` a card from outside the pile (Royale's bank)."""
        self.won[name].append(value)

    def take_card(self, name: str, value: int) -> None:
        """For editions: take one of `name`'s cards (paid into Royale's bank)."""
        self.won[name].remove(value)

    def take_pile(self, keep: int) -> list[int]:
        """For editions: every card of the pile but the top `keep`, taken out of it."""
        rest, self.pile = self.pile[keep:], self.pile[:keep]
        return rest

    def draw(self, casino: int) -> int | None:
        """Take the top note for `casino`; when the pile is out, reshuffle what went under it
        (and say so). Editions deal through this: the pile and the shuffle stay the state's,
        so replaying the same actions draws the same notes."""
        if not self.pile and self.under:
            self.pile = list(self.under)
            self.under = []
            self.rng.shuffle(self.pile)
            self.notice("reshuffled", casino=casino, notes=len(self.pile))
        if not self.pile:
            return None
        return self.pile.pop(0)

    def notice(self, kind: str, **data: Any) -> None:
        """Record something a player should know happened (reshuffle, short casino, what a
        tile did), with the number of the action that made it happen (`seq`), so a log can
        put it under that action."""
        self.notices.append({"round": self.round, "seq": len(self.history) + 1, "kind": kind,
                             **data})

    def _advance(self) -> None:
        n = len(self.players)
        assert self.to_move is not None
        for k in range(1, n + 1):
            seat = (self.to_move + k) % n
            if self.hands[seat]:
                self.to_move, self.phase = seat, "roll"
                self._start_turn(self.players[seat].name)
                return
        self.ending = True
        for casino in CASINOS:
            for effect in self.effects.get(casino, ()):
                effect.before_round_end(self, casino)
        if self.edition.pending(self) is not None:
            self.phase = "tile"
            return
        self._payout_asks()

    def _payout_asks(self) -> None:
        """The dice are final: ask what the payout itself asks, once, then pay out."""
        if not self.payout_asked:
            self.payout_asked = True
            for casino in CASINOS:
                for effect in self.effects.get(casino, ()):
                    effect.at_payout_ask(self, casino)
            if self.edition.pending(self) is not None:
                self.phase = "tile"
                return
        self._end_round()

    def _start_turn(self, name: str) -> None:
        """A turn begins: a tile may first offer something instead of the roll."""
        for casino in CASINOS:
            for effect in self.effects.get(casino, ()):
                effect.on_turn(self, name)
        if self.edition.pending(self) is not None:
            self.phase, self.awaiting_roll = "tile", True

    def _begin_round(self) -> None:
        self.hands = [+self.edition.hand(self, seat) for seat in range(len(self.players))]
        self.pool = self.edition.start_pool(self)
        self.effects = self.edition.effects_for_round(self)
        self.edition.start_round(self)
        self.phase, self.to_move, self.roll = "deal", None, None
        self.ending = self.awaiting_roll = self.payout_asked = False

    def payout_now(self, casino: int) -> CasinoPayout:
        """What `casino` pays if the round ended now: the round end's own reckoning."""
        weights = self.weights(casino)
        for effect in self.effects.get(casino, ()):
            effect.before_payout(self, casino, weights)
        return pay_casino(casino, self.casinos[casino].notes, weights)

    def round_so_far(self) -> dict[str, int]:
        """Each real player's winnings if the round ended now (0 for nothing)."""
        out = {p.name: 0 for p in self.players}
        for casino in CASINOS:
            for player, amount in self.payout_now(casino).payouts:
                if player in out:
                    out[player] += amount
        return out

    def _end_round(self) -> None:
        payouts: list[CasinoPayout] = []
        for casino in CASINOS:
            result = self.payout_now(casino)
            for player, amount in result.payouts:
                if player in self.seat_of:
                    self.won[player].append(amount)
                else:
                    self.under.append(amount)  # an imaginary player's winnings
            self.under.extend(result.unclaimed)
            for effect in self.effects.get(casino, ()):
                effect.at_payout(self, casino, result)
            payouts.append(result)
        for casino in CASINOS:
            for effect in self.effects.get(casino, ()):
                effect.at_round_end(self, casino)
        next_start = self.edition.next_start(self, payouts)
        self.round_results.append({
            "round": self.round,
            "casinos": [p.to_dict() for p in payouts],
            "money": {p.name: self.money(p.name) for p in self.players},
        })
        self.casinos = {c: Casino() for c in CASINOS}
        self.to_move = None
        if self.round >= self.edition.rounds:
            self.phase = "over"
            return
        self.round += 1
        self.start_player = next_start
        self._begin_round()

    # --- simulation --------------------------------------------------------------------
    def random_roll(self, rng: random.Random) -> Roll:
        """A fair roll of exactly the dice due now, for simulations and the demo."""
        dice = []
        faces = (1, 2, 3, 4, 5, 6)
        for (colour, big), n in sorted(self._due().items()):
            dice.extend(Die(colour, v, big) for v in rng.choices(faces, k=n))
        return Roll(tuple(dice))

    # --- views -------------------------------------------------------------------------
    def casino_view(self, casino: int) -> dict[str, Any]:
        c = self.casinos[casino]
        dice: dict[str, int] = {}
        big: dict[str, int] = {}
        for (colour, is_big), n in sorted(c.dice.items()):
            if n:
                who = self.owner(colour)
                dice[who] = dice.get(who, 0) + n
                if is_big:
                    big[who] = big.get(who, 0) + n
        projected = self.payout_now(casino)
        return {
            "casino": casino,
            "notes": list(c.notes),
            "dice": dice,
            "big": big,
            "weights": self.weights(casino),
            "tied": list(projected.cancelled),
            "ranking": [p for p, _ in projected.ranking],
            "projected": [{"player": p, "amount": a} for p, a in projected.payouts],
            "unclaimed": list(projected.unclaimed),
        }

    def player_view(self, seat: int, so_far: Mapping[str, int] | None = None) -> dict[str, Any]:
        p = self.players[seat]
        hand = self.hands[seat]
        so_far = self.round_so_far() if so_far is None else so_far
        return {
            "name": p.name,
            "colour": p.colour,
            "money": self.money(p.name),
            "score": self.edition.score(self, p.name),
            "dice_left": sum(hand.values()),
            "hand": {f"{c}{' big' if b else ''}": n for (c, b), n in sorted(hand.items()) if n},
            "notes": sorted(self.won[p.name], reverse=True),
            "chips": self.extra.count("chip", p.name),
            "skip_cards": self.extra.count("skip card", p.name),
            "score_extras": self.edition.score_extras(self, p.name),
            "round_so_far": so_far.get(p.name, 0),
        }

    def results(self) -> dict[str, Any]:
        """Ranking with each edition's tie-break; shared places and shared wins allowed."""
        rows = []
        for p in self.players:
            rows.append({"player": p.name, "score": self.edition.score(self, p.name),
                         "tiebreak": self.edition.tiebreak(self, p.name)})
        rows.sort(key=lambda r: (-r["score"], -r["tiebreak"]))
        place = 0
        prev = None
        for i, r in enumerate(rows, 1):
            key = (r["score"], r["tiebreak"])
            if key != prev:
                place, prev = i, key
            r["place"] = place
        winners = [r["player"] for r in rows if r["place"] == 1]
        top = [r for r in rows if r["score"] == rows[0]["score"]]
        rule = self.edition.tiebreak_rule()
        if len(top) == 1:
            explanation = f"{rows[0]['player']} has the most money"
        elif len(winners) == 1:
            explanation = (f"{', '.join(r['player'] for r in top)} have the same money; "
                           f"{winners[0]} wins on the tie-break: {rule} "
                           f"({top[0]['tiebreak']} to {top[1]['tiebreak']})")
        else:
            explanation = (f"{' and '.join(winners)} have the same money and are still tied "
                           f"on {rule}: they share the win")
        return {"over": self.is_over(), "ranking": rows, "winners": winners,
                "tiebreak_rule": rule, "explanation": explanation}

    def to_dict(self) -> dict[str, Any]:
        """The whole visible state, JSON-ready: what the API and the pages show."""
        expected = self.expected_roll()
        so_far = self.round_so_far()
        tiles = self.edition.tiles_view(self)
        return {
            "edition": self.edition.key,
            "options": copy.deepcopy(self.edition.options),
            "round": self.round,
            "rounds": self.edition.rounds,
            "phase": self.phase,
            "over": self.is_over(),
            "seq": self.seq,
            "to_move": self.player_to_act(),
            "start_player": self.players[self.start_player].name,
            "players": [self.player_view(i, so_far) for i in range(len(self.players))],
            "casinos": [self.casino_view(c) for c in CASINOS],
            "roll": [d.to_dict() for d in self.roll] if self.roll is not None else None,
            "expected_roll": [
                {"colour": c, "big": b, "count": n} for (c, b), n in sorted(expected.items())
            ],
            "legal": [a.to_dict() for a in self.legal_actions()],
            "last": self.last and {**self.last, "dice": [d.to_dict() for d in self.last["dice"]]},
            "pile": len(self.pile) + len(self.under),
            "notices": copy.deepcopy(self.notices),
            "round_results": copy.deepcopy(self.round_results),
            "results": self.results() if self.is_over() else None,
            "log": self.log_view(),
            **({} if tiles is None else {"tiles": tiles}),
        }

    def log_view(self) -> list[dict[str, Any]]:
        """The newest log entries, newest first (see LOG_SHOWN)."""
        recent = [e for e in self.log[-LOG_SHOWN:] if e["round"] >= self.round - 1]
        return copy.deepcopy(recent[::-1])

    def fingerprint(self) -> str:
        """Hash of everything that decides the future, for 'identical state' checks."""
        full = {
            "view": self.to_dict(),
            "pile": self.pile,
            "under": self.under,
            "rng": repr(self.rng.getstate()),
            "history": [a.to_dict() for a in self.history],
        }
        return hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()


def _dice_groups(dice: Iterable[Die]) -> list[dict[str, Any]]:
    """Dice as the log keeps them: per colour (and Biggy), the values low to high."""
    groups: dict[tuple[str, bool], list[int | None]] = {}
    for d in dice:
        groups.setdefault((d.colour, d.big), []).append(d.value)
    return [{"colour": c, "big": b, "values": sorted(v, key=lambda x: 7 if x is None else x)}
            for (c, b), v in sorted(groups.items())]


def _faces(dice: tuple[Die, ...]) -> list[int]:
    """The values a roll offers to place; an unread die (value None) offers none."""
    return sorted({d.value for d in dice if d.value is not None})

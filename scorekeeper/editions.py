"""The rules of each edition, one class each.

Everything that differs between the classic 2012 game, the Custom Edition house rules and
Las Vegas Royale lives here; `state.GameState` runs the turn loop they all share and asks its
edition at each decision point, handing it a `view.Table`: the narrow part of the game a rule
may see and touch. Editions hold options only, never game state, so one edition object can be
shared by many games; what an edition adds to a game (Royale's chips, Custom's skip cards and
cash) lives in the `view.Extra` it makes with `new_extra`, which the state holds for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .actions import Die, TileChoice
from .errors import CannotPass, ConfigError, InvalidDeal, WrongPhase
from .payout import CasinoPayout
from .tiles import (
    BLACK,
    FACES,
    SET_ASIDE,
    TILE_CLASSES,
    USED_TILES,
    Pending,
    RoyaleChips,
    RoyaleTiles,
    draw_tiles,
    make_tile,
    pending_now,
    tiles_of,
    tiles_view,
)
from .tiles import decide as decide_tile
from .tiles import thrown as tile_thrown
from .view import Extra, Table

CASINOS = (1, 2, 3, 4, 5, 6)
DiceKey = tuple[str, bool]  # (colour, big)

CLASSIC_NOTES: dict[int, int] = {
    10_000: 6,
    20_000: 8,
    30_000: 8,
    40_000: 6,
    50_000: 6,
    60_000: 5,
    70_000: 5,
    80_000: 5,
    90_000: 5,
}
"""The 54 banknotes of the 2012 game, value -> count (rules: "Game components")."""

ROYALE_DEFAULT_DECK: dict[int, int] = {v * 10_000: 10 for v in range(1, 10)}
"""Royale's 90 money cards. The rule text does not list them; by default 10 each of
$10,000..$90,000 (90 cards, the values its examples use). Pass `deck` to use another."""

CLASSIC_MIN_CASINO = 50_000
ROYALE_CHIP_VALUE = 10_000


MAX_DECK = 1000  # cards in a custom Royale deck


def _deck_list(deck: Mapping[int, int]) -> list[int]:
    return [value for value in sorted(deck) for _ in range(deck[value])]


class Edition:
    """Shared defaults; subclasses override what their rule text changes."""

    key = ""
    title = ""
    min_players = 2
    max_players: int | None = 5
    rounds = 4
    dice_per_player = 8
    big_per_player = 0
    neutral_colour = "white"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options: dict[str, Any] = dict(options or {})
        unknown = set(self.options) - set(self.option_defaults()) - set(self.more_options)
        if unknown:
            raise ConfigError(
                f"edition {self.key!r} has no option {sorted(unknown)[0]!r} "
                f"(options: {', '.join(sorted(self.option_defaults())) or 'none'})"
            )
        self.options = {**self.option_defaults(), **self.options}
        self._validate_options()

    more_options: tuple[str, ...] = ()
    """Options an edition accepts that are kept only when given (not among the defaults)."""

    # --- setup -------------------------------------------------------------------------
    def option_defaults(self) -> dict[str, Any]:
        return {}

    def _validate_options(self) -> None:
        pass

    def validate_player_count(self, n: int) -> None:
        if n < self.min_players or (self.max_players is not None and n > self.max_players):
            limit = f"{self.min_players}–{self.max_players}" if self.max_players else (
                f"at least {self.min_players}"
            )
            raise ConfigError(f"the {self.key} edition is for {limit} players, not {n}")

    def deck(self) -> dict[int, int]:
        """All money in the game, value -> count."""
        raise NotImplementedError

    def imaginary_colours(self) -> tuple[str, ...]:
        """Dice colours that belong to imaginary players in this game (neutral dice)."""
        return ()

    def reserved_colours(self) -> tuple[str, ...]:
        """Dice colours in this game's box that no player may take: the imaginary players'."""
        return self.imaginary_colours()

    def reserved_for(self, colour: str) -> str:
        """Whose dice a colour of `reserved_colours` is, in words."""
        return "the neutral dice's colour"

    def hand(self, state: Table, seat: int) -> Counter[DiceKey]:
        """The dice a player holds at the start of each round."""
        colour = state.players[seat].colour
        hand: Counter[DiceKey] = Counter()
        hand[(colour, False)] = self.dice_per_player - self.big_per_player
        if self.big_per_player:
            hand[(colour, True)] = self.big_per_player
        return hand

    def start_pool(self, state: Table) -> Counter[DiceKey]:
        """Neutral dice the start player rolls at round start; each goes to its casino."""
        return Counter()

    def other_start_pools(self, state: Table) -> list[Counter[DiceKey]]:
        """Other dice the start player may roll instead of `start_pool`: the same number of
        neutral dice, made up the way another real set of them is."""
        return []

    def new_extra(self, players: Sequence[str]) -> Extra:
        """This edition's own state for a new game of `players` (names, in seat order): what
        its rules add to notes and dice. The state holds it and hands it back as
        `state.extra`; the base game adds nothing."""
        return Extra()

    def start_round(self, state: Table) -> None:
        """Per-round bookkeeping at round start (chips, skip counters)."""

    def effects_for_round(self, state: Table) -> dict[int, list]:
        """Per-casino effects for this round: Royale's tiles."""
        return {}

    def after_deal(self, state: Table) -> None:
        """Called once a round's money lies beside the casinos (Royale sets out its bank)."""

    # --- decisions an effect asks for (Royale's tiles) ----------------------------------
    def pending(self, state: Table) -> Pending | None:
        """The decision or throw a casino's effect waits for now, if any."""
        return None

    def decide(self, state: Table, action: TileChoice) -> None:
        raise WrongPhase("no tile is waiting for a decision in this game")

    def tile_roll(self, state: Table, dice: tuple[Die, ...]) -> None:
        raise WrongPhase("no tile is waiting for dice in this game")

    def tiles_view(self, state: Table) -> dict[str, Any] | None:
        """What the tiles show (None: no tiles in this game)."""
        return None

    def hidden_choice(self, action: TileChoice) -> bool:
        """Whether the other players may not see what `action` chose (until a tile says)."""
        return False

    # --- money -------------------------------------------------------------------------
    def deal(self, state: Table) -> list[list[int]]:
        """Deal this round's money from the seeded pile, casino 1 first."""
        raise NotImplementedError

    def validate_deal(self, casinos: list[list[int]], exhausts: bool) -> None:
        """Check the shape of money dealt by hand; `exhausts` if it used up every note."""
        raise NotImplementedError

    def note_name(self) -> str:
        return "note"

    # --- turns -------------------------------------------------------------------------
    def closed_casinos(self, state: Table) -> set[int]:
        """Casinos no die may enter now (Royale's No Entry!)."""
        return set()

    def pass_refusal(self, state: Table, name: str) -> str | None:
        """Why `name` may not pass now, or None when they may."""
        return "passing a turn is not part of this edition's rules"

    def apply_pass(self, state: Table, name: str) -> None:
        reason = self.pass_refusal(state, name)
        if reason:
            raise CannotPass(reason)

    # --- end of round and game ---------------------------------------------------------
    def next_start(self, state: Table, payouts: Sequence[CasinoPayout]) -> int:
        return (state.start_player + 1) % len(state.players)

    def score(self, state: Table, name: str) -> int:
        """Money at the end of the game, extras included."""
        return state.money(name)

    def score_extras(self, state: Table, name: str) -> list[dict[str, Any]]:
        """What `score` adds to the money, each {"what", "count", "value"}: the figure's
        parts a page says where it shows the score."""
        return []

    def tiebreak(self, state: Table, name: str) -> int:
        return len(state.won[name])

    def tiebreak_rule(self) -> str:
        return "most banknotes"

    def describe(self) -> dict[str, Any]:
        return {"edition": self.key, "title": self.title, "rounds": self.rounds,
                "options": dict(self.options)}


def _best_real_player(state: Table, payouts: Sequence[CasinoPayout]) -> int | None:
    """Seat of the best-paid real player at the first casino (in the given order) that paid
    one. An imaginary player cannot hold the start player card, so when the neutral dice take
    the high card, the real player who took the other card there starts instead."""
    for payout in payouts:
        for player, _ in payout.payouts:
            if player in state.seat_of:
                return state.seat_of[player]
    return None


def _draw_pairs(state: Table) -> list[list[int]]:
    """Six pairs of cards; when even the reshuffled discards run out, pairs come up short."""
    pairs = []
    for i in range(6):
        pair = [c for c in (state.draw(i + 1), state.draw(i + 1)) if c is not None]
        if len(pair) < 2:
            state.notice("short", pair=i + 1, notes=len(pair))
        pairs.append(pair)
    return pairs


def _validate_pairs(casinos: list[list[int]], exhausts: bool, what: str) -> None:
    for casino, notes in zip(CASINOS, casinos, strict=True):
        if len(notes) != 2 and not (exhausts and len(notes) < 2):
            raise InvalidDeal(f"casino {casino} must get exactly two {what}s, got {len(notes)}")


class Classic(Edition):
    """Las Vegas (alea 2011/2012) with its neutral-dice variant."""

    key = "classic"
    title = "Las Vegas (2012)"
    max_players = 5

    def option_defaults(self) -> dict[str, Any]:
        return {"neutral_dice": False}

    def _validate_options(self) -> None:
        if not isinstance(self.options["neutral_dice"], bool):
            raise ConfigError("option neutral_dice must be true or false")

    def validate_player_count(self, n: int) -> None:
        super().validate_player_count(n)
        if self.options["neutral_dice"] and n > 4:
            raise ConfigError("the neutral-dice variant is for 2–4 players, not 5")

    def deck(self) -> dict[int, int]:
        return dict(CLASSIC_NOTES)

    def imaginary_colours(self) -> tuple[str, ...]:
        return (self.neutral_colour,) if self.options["neutral_dice"] else ()

    def hand(self, state: Table, seat: int) -> Counter[DiceKey]:
        hand = super().hand(state, seat)
        if self.options["neutral_dice"]:
            hand[(self.neutral_colour, False)] = 4 if len(state.players) == 2 else 2
        return hand

    def start_pool(self, state: Table) -> Counter[DiceKey]:
        # Eight white dice: with three players two are left over for the start player.
        if self.options["neutral_dice"] and len(state.players) == 3:
            return Counter({(self.neutral_colour, False): 2})
        return Counter()

    def deal(self, state: Table) -> list[list[int]]:
        casinos: list[list[int]] = []
        for casino in CASINOS:
            notes: list[int] = []
            while sum(notes) < CLASSIC_MIN_CASINO:
                note = state.draw(casino)
                if note is None:
                    state.notice("short", casino=casino, total=sum(notes))
                    break
                notes.append(note)
            casinos.append(sorted(notes, reverse=True))
        return casinos

    def validate_deal(self, casinos: list[list[int]], exhausts: bool) -> None:
        for casino, notes in zip(CASINOS, casinos, strict=True):
            total = sum(notes)
            if total < CLASSIC_MIN_CASINO:
                if not exhausts:
                    raise InvalidDeal(
                        f"casino {casino} holds ${total:,}: each casino gets notes until it "
                        f"holds at least $50,000"
                    )
            elif total - max(notes) >= CLASSIC_MIN_CASINO:
                raise InvalidDeal(
                    f"casino {casino} holds ${total:,}: it already had $50,000 without its "
                    f"${max(notes):,} note, so one note too many was dealt"
                )


@dataclass
class CustomSkips(Extra):
    """Custom's means to skip a turn: rule A's $1 chips (cash, counted as money), rule B's skip
    cards (worth $1 each at the end, not money), and the skips taken this round (the limit)."""

    cash: dict[str, int]
    skip_cards: dict[str, int]
    skips_this_round: dict[str, int] = field(default_factory=dict)

    def count(self, what: str, name: str) -> int:
        if what == "$1":
            return self.cash[name]
        if what == "skip card":
            return self.skip_cards[name]
        return 0


class Custom(Edition):
    """Custom Edition house rules: playing cards as money, skip rules A and B."""

    key = "custom"
    title = "Las Vegas (Custom Edition)"
    max_players = None

    def option_defaults(self) -> dict[str, Any]:
        return {"skip_rule": "none", "skip_limit": None, "rounds": None, "suits": 4}

    def _validate_options(self) -> None:
        o = self.options
        rule = o["skip_rule"]
        if rule in (None, "", "None"):
            rule = "none"
        if not isinstance(rule, str) or rule.upper() not in ("NONE", "A", "B"):
            raise ConfigError(f"option skip_rule must be none, A or B, not {rule!r}")
        o["skip_rule"] = "none" if rule.upper() == "NONE" else rule.upper()
        limit = o["skip_limit"]
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 1):
            raise ConfigError("option skip_limit must be a whole number of at least 1, or null")
        if o["rounds"] is None:
            o["rounds"] = 4 if o["skip_rule"] == "none" else 3
        r = o["rounds"]
        if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= 10:
            raise ConfigError("option rounds must be a whole number from 1 to 10")
        s = o["suits"]
        if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= 12:
            raise ConfigError("option suits must be a whole number from 1 to 12")
        self.rounds = r

    def deck(self) -> dict[int, int]:
        return {value: self.options["suits"] for value in range(3, 11)}

    def note_name(self) -> str:
        return "card"

    def deal(self, state: Table) -> list[list[int]]:
        return [sorted(pair, reverse=True) for pair in _draw_pairs(state)]

    def validate_deal(self, casinos: list[list[int]], exhausts: bool) -> None:
        _validate_pairs(casinos, exhausts, "card")

    def new_extra(self, players: Sequence[str]) -> CustomSkips:
        rule = self.options["skip_rule"]
        return CustomSkips(cash={name: 2 if rule == "A" else 0 for name in players},
                           skip_cards={name: 4 if rule == "B" else 0 for name in players})

    @staticmethod
    def skips(state: Table) -> CustomSkips:
        """This game's skip means, as `new_extra` made them."""
        extra = state.extra
        if not isinstance(extra, CustomSkips):
            raise TypeError(f"a Custom game holds CustomSkips, not {extra!r}")
        return extra

    def start_round(self, state: Table) -> None:
        self.skips(state).skips_this_round = {p.name: 0 for p in state.players}

    def pass_refusal(self, state: Table, name: str) -> str | None:
        rule = self.options["skip_rule"]
        if rule == "none":
            return "skipping is off: choose the skip house rule A or B when setting up the game"
        skips = self.skips(state)
        limit = self.options["skip_limit"]
        if limit is not None and skips.skips_this_round.get(name, 0) >= limit:
            return f"{name} already skipped {limit} time(s) this round, the agreed limit"
        if rule == "A" and state.money(name) < 1:
            return f"{name} has no money left to pay the $1 for skipping"
        if rule == "B" and skips.skip_cards[name] < 1:
            return f"{name} has no skip card (A, J, Q or K) left"
        return None

    def apply_pass(self, state: Table, name: str) -> None:
        super().apply_pass(state, name)
        skips = self.skips(state)
        skips.skips_this_round[name] = skips.skips_this_round.get(name, 0) + 1
        if self.options["skip_rule"] == "A":
            skips.cash[name] -= 1
        else:
            skips.skip_cards[name] -= 1

    def next_start(self, state: Table, payouts: Sequence[CasinoPayout]) -> int:
        # The casino-6 winner starts; if nobody was paid there, the same start player.
        seat = _best_real_player(state, payouts[5:])
        return state.start_player if seat is None else seat

    def score(self, state: Table, name: str) -> int:
        return state.money(name) + self.skips(state).skip_cards[name]

    def score_extras(self, state: Table, name: str) -> list[dict[str, Any]]:
        n = self.skips(state).skip_cards[name]
        return [{"what": "skip card", "count": n, "value": n}] if n else []

    def tiebreak_rule(self) -> str:
        return "most money cards (skip cards do not count)"


class Royale(Edition):
    """Las Vegas Royale (2019) basic game; tiles hook in through `effects_for_round`."""

    key = "royale"
    title = "Las Vegas Royale (2019)"
    rounds = 3
    dice_per_player = 8
    big_per_player = 1
    chips_per_round = 2

    more_options = ("used_tiles", "tile_pool")

    def option_defaults(self) -> dict[str, Any]:
        return {"tiles": False, "deck": None}

    def reserved_colours(self) -> tuple[str, ...]:
        # The gray blank dice, which tiles' effects put straight into casinos, and with the
        # tiles the two black extra dice.
        black = (BLACK,) if self.options["tiles"] else ()
        return (*self.imaginary_colours(), "gray", *black)

    def reserved_for(self, colour: str) -> str:
        if colour == BLACK:
            return "the colour of the two black extra dice the tiles throw"
        if colour == "gray":
            return "the colour of the nine blank gray dice"
        return super().reserved_for(colour)

    @property
    def tile_count(self) -> int:
        """Tiles per round: 0 in the basic game."""
        return int(self.options["tiles"] or 0)

    def _validate_tiles(self) -> None:
        o = self.options
        tiles, pool = o["tiles"], o.get("tile_pool")
        if tiles in (False, None, 0):
            o["tiles"] = False
            if "used_tiles" in o or pool is not None:
                raise ConfigError("royale options used_tiles and tile_pool need tiles")
            return
        if tiles is True:
            tiles = o["tiles"] = 3
        if type(tiles) is not int or not 1 <= tiles <= 6:
            raise ConfigError("royale option tiles must be a number of tiles from 0 to 6 "
                              "(one per casino at most), or true for 3")
        if pool is not None:
            if (not isinstance(pool, list) or not pool
                    or not all(isinstance(c, str) and c in TILE_CLASSES for c in pool)):
                raise ConfigError(f"royale option tile_pool must list tile faces among "
                                  f"{', '.join(sorted(TILE_CLASSES))}")
            o["tile_pool"] = sorted(set(pool))
        rule = o.setdefault("used_tiles", "repeat")
        if rule not in USED_TILES:
            raise ConfigError(f"royale option used_tiles must be one of "
                              f"{', '.join(USED_TILES)}")

    def _validate_options(self) -> None:
        self._validate_tiles()
        deck = self.options["deck"]
        if deck is None:
            self.options["deck"] = dict(ROYALE_DEFAULT_DECK)
            return
        if not isinstance(deck, Mapping) or not deck:
            raise ConfigError("option deck must map card values to counts")
        parsed: dict[int, int] = {}
        for value, count in deck.items():
            # JSON keys are strings: accept "10000" and 10000, nothing fractional or repeated.
            text = str(value)
            if type(value) not in (int, str) or not text.isdigit() or int(text) <= 0:
                raise ConfigError(f"option deck: {value!r} is not a whole card value")
            if type(count) is not int or count < 0:
                raise ConfigError(f"option deck: the count for {value!r} must be a whole number")
            if int(text) in parsed:
                raise ConfigError(f"option deck: card value {int(text)} is listed twice")
            parsed[int(text)] = count
        total = sum(parsed.values())
        if total < 12:
            raise ConfigError("option deck must hold at least 12 cards (6 pairs)")
        if total > MAX_DECK:
            # A real deck is a box of cards; a huge count would only build a huge pile.
            raise ConfigError(f"option deck holds {total} cards; at most {MAX_DECK} are allowed")
        self.options["deck"] = parsed

    def deck(self) -> dict[int, int]:
        return dict(self.options["deck"])

    def note_name(self) -> str:
        return "card"

    def imaginary_colours(self) -> tuple[str, ...]:
        return (self.neutral_colour,)

    def start_pool(self, state: Table) -> Counter[DiceKey]:
        if len(state.players) == 2:
            return Counter({(self.neutral_colour, False): 8})
        return Counter()

    def other_start_pools(self, state: Table) -> list[Counter[DiceKey]]:
        # "Roll all eight dice of a non-player color": in the Royale box a colour is 7 dice
        # and a Biggy ("7 + 1 dice of a color"), so that is what a table rolls when it takes
        # the set of a colour nobody plays. Eight plain dice stay accepted too: `start_pool`
        # still asks for them, and saved games hold such rolls. The Biggy goes to the casino
        # of its face like any neutral die and counts as two there (`GameState.weights`).
        if len(state.players) != 2:
            return []
        small = self.dice_per_player - self.big_per_player
        return [Counter({(self.neutral_colour, False): small,
                         (self.neutral_colour, True): self.big_per_player})]

    def new_extra(self, players: Sequence[str]) -> RoyaleChips:
        if self.tile_count:
            return RoyaleTiles(chips={name: 0 for name in players})
        return RoyaleChips(chips={name: 0 for name in players})

    def effects_for_round(self, state: Table) -> dict[int, list]:
        if not self.tile_count:
            return {}
        extra = tiles_of(state)
        pool = self.options.get("tile_pool") or sorted(FACES)
        faces = draw_tiles(state, self.tile_count, pool, extra.used,
                                        self.options["used_tiles"])
        extra.tiles = {c: make_tile(code, c) for c, code in faces.items()}
        extra.used.extend(faces.values())
        extra.pending = []
        extra.closed = set()
        for tile in extra.tiles.values():
            tile.setup(state)
            tile.did(state, "drawn")
        return {c: [t] for c, t in extra.tiles.items()}

    def after_deal(self, state: Table) -> None:
        # "Then, set aside 6 x 2 money cards for rounds 2 and 3 (a total of 24 cards). [...]
        # Put the rest of the money cards face up on the table. They serve as 'bank'."
        if self.tile_count and state.round == 1:
            tiles_of(state).bank.extend(state.take_pile(SET_ASIDE))

    def pending(self, state: Table) -> Pending | None:
        return pending_now(state) if self.tile_count else None

    def decide(self, state: Table, action: TileChoice) -> None:
        if not self.tile_count:
            super().decide(state, action)
        decide_tile(state, action)

    def tile_roll(self, state: Table, dice: tuple[Die, ...]) -> None:
        if not self.tile_count:
            super().tile_roll(state, dice)
        tile_thrown(state, dice)

    def tiles_view(self, state: Table) -> dict[str, Any] | None:
        return tiles_view(state) if self.tile_count else None

    def closed_casinos(self, state: Table) -> set[int]:
        return set(tiles_of(state).closed) if self.tile_count else set()

    def hidden_choice(self, action: TileChoice) -> bool:
        cls = TILE_CLASSES.get(action.tile)
        return cls is not None and action.choice in cls.hidden

    @staticmethod
    def chips(state: Table) -> dict[str, int]:
        """Each player's chips in this game, as `new_extra` made them."""
        extra = state.extra
        if not isinstance(extra, RoyaleChips):
            raise TypeError(f"a Royale game holds RoyaleChips, not {extra!r}")
        return extra.chips

    def start_round(self, state: Table) -> None:
        chips = self.chips(state)
        for p in state.players:
            chips[p.name] += self.chips_per_round

    def deal(self, state: Table) -> list[list[int]]:
        pairs = [p for p in _draw_pairs(state) if p]
        pairs.sort(key=lambda p: (sum(p), max(p)), reverse=True)  # highest pair to casino 6
        while len(pairs) < 6:
            pairs.append([])
        return [sorted(p, reverse=True) for p in reversed(pairs)]

    def validate_deal(self, casinos: list[list[int]], exhausts: bool) -> None:
        _validate_pairs(casinos, exhausts, "card")
        keys = [(sum(n), max(n, default=0)) for n in casinos]
        for casino in range(1, 6):
            lower, higher = keys[casino - 1], keys[casino]
            if lower[0] > higher[0]:
                raise InvalidDeal(
                    f"casino {casino} got a pair worth ${lower[0]:,} but casino {casino + 1} "
                    f"only ${higher[0]:,}: pairs go to casinos 6 to 1 from the highest total down"
                )
            if lower > higher:
                raise InvalidDeal(
                    f"casinos {casino} and {casino + 1} both got pairs worth ${lower[0]:,}: "
                    f"the pair with the higher card (${lower[1]:,}) goes to casino {casino + 1}"
                )

    def pass_refusal(self, state: Table, name: str) -> str | None:
        if self.chips(state)[name] < 1:
            return f"{name} has no chip left to sit out a turn"
        return None

    def apply_pass(self, state: Table, name: str) -> None:
        super().apply_pass(state, name)
        self.chips(state)[name] -= 1

    def next_start(self, state: Table, payouts: Sequence[CasinoPayout]) -> int:
        # The winner at casino 6, else at the next lower casino where anyone won anything.
        seat = _best_real_player(state, payouts[::-1])
        return state.start_player if seat is None else seat

    def score(self, state: Table, name: str) -> int:
        return state.money(name) + ROYALE_CHIP_VALUE * self.chips(state)[name]

    def score_extras(self, state: Table, name: str) -> list[dict[str, Any]]:
        n = self.chips(state)[name]
        return [{"what": "chip", "count": n, "value": ROYALE_CHIP_VALUE * n}] if n else []

    def tiebreak(self, state: Table, name: str) -> int:
        return len(state.won[name]) + self.chips(state)[name]

    def tiebreak_rule(self) -> str:
        return "most money cards and chips"


EDITIONS: dict[str, type[Edition]] = {"classic": Classic, "custom": Custom, "royale": Royale}


def make_edition(key: str, options: Mapping[str, Any] | None = None) -> Edition:
    try:
        cls = EDITIONS[key]
    except KeyError:
        raise ConfigError(
            f"unknown edition {key!r} (choose {', '.join(EDITIONS)})"
        ) from None
    return cls(options)

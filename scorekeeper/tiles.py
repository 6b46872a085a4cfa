"""Las Vegas Royale's casino tiles (the main game): the faces as data, the bank, the decisions.

Each round a few of the eight double-sided tiles lie beside casinos 1, 2, 3 (more or fewer in
the variant); a player who places dice in such a casino activates its tile. A tile is a
`CasinoEffect` that sees the game as a `view.Table`. What it asks of a player (whether to use
it, how many dice, which pile) is a `Pending` decision: the game waits in its "tile" phase,
`legal_actions()` lists the `TileChoice`s open, and a black-dice throw a tile asks for is a
chance node like any roll. What tiles pay comes from the bank, the face-up money cards set out
in round 1 (`Bank`), which gives change but never chips.

Built faces are in `TILE_CLASSES`; `FACES` names all sixteen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .actions import Die, TileChoice
from .effects import CasinoEffect
from .errors import IllegalAction, NotYourTurn
from .payout import pay_casino
from .view import Extra, Table

DiceKey = tuple[str, bool]
BLACK = "black"
"""The colour of the two black extra dice: no player's dice in Royale's main game."""
BLACK_DICE: Counter[DiceKey] = Counter({(BLACK, False): 2})
CHIP_VALUE = 10_000
SET_ASIDE = 24
"""Cards set aside face down after round 1's deal, for rounds 2 and 3 ("a total of 24")."""

FACES: dict[str, str] = {
    "A1": "Lucky Punch", "A2": "Jackpot",
    "B1": "Prime Time", "B2": "Fifty Fifty",
    "C1": "High Five", "C2": "Bad Luck",
    "D1": "Pay Day", "D2": "Power Play",
    "E1": "No Entry!", "E2": "Knockout!",
    "F1": "Block It!", "F2": "Handicap",
    "G1": "Black Box", "G2": "Double Down",
    "H1": "Nice Dice", "H2": "My Choice",
}
"""The sixteen faces: tile letter A-H, side 1 or 2, and the name printed on it."""
TILE_LETTERS = tuple(sorted({code[0] for code in FACES}))
USED_TILES = ("repeat", "aside", "other_face")
"""What happens to a round's tiles: back in the draw ("It may happen that the same tile is used
multiple times"), set aside for the game, or back with only their other face to show."""


@dataclass(frozen=True)
class TileFace:
    code: str

    @property
    def letter(self) -> str:
        return self.code[0]

    @property
    def side(self) -> int:
        return int(self.code[1])

    @property
    def name(self) -> str:
        return FACES[self.code]


@dataclass
class Pending:
    """A decision a tile waits for: `choices` open to `player`, or the dice `roll` they
    throw for it (the black dice)."""

    tile: str
    casino: int
    player: str
    ask: str
    choices: tuple[TileChoice, ...] = ()
    roll: Counter[DiceKey] | None = None
    step: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"tile": self.tile, "name": FACES[self.tile], "casino": self.casino,
                "player": self.player, "ask": self.ask,
                "choices": [c.to_dict() for c in self.choices],
                "roll": None if self.roll is None else [
                    {"colour": c, "big": b, "count": n} for (c, b), n in sorted(self.roll.items())
                ]}


@dataclass
class RoyaleChips(Extra):
    """Royale's chips: two more each round, one to sit out a turn, $10,000 each at the end."""

    chips: dict[str, int]

    def count(self, what: str, name: str) -> int:
        return self.chips[name] if what == "chip" else 0


@dataclass
class RoyaleTiles(RoyaleChips):
    """Royale's main game: the chips, the bank, this round's tiles (casino -> tile), the
    faces used in earlier rounds and the decisions waiting, oldest first."""

    bank: list[int] = field(default_factory=list)
    tiles: dict[int, Tile] = field(default_factory=dict)
    used: list[str] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)


def tiles_of(table: Table) -> RoyaleTiles:
    extra = table.extra
    if not isinstance(extra, RoyaleTiles):
        raise TypeError(f"a Royale game with tiles holds RoyaleTiles, not {extra!r}")
    return extra


# --- the bank ----------------------------------------------------------------------------
def _fewest(cards: Sequence[int], limit: int) -> dict[int, tuple[int, ...]]:
    """Every total up to `limit` that some of `cards` make, each with the fewest cards."""
    best: dict[int, tuple[int, ...]] = {0: ()}
    for card in sorted(cards, reverse=True):
        for total, used in list(best.items()):
            new = total + card
            if new <= limit and (new not in best or len(best[new]) > len(used) + 1):
                best[new] = (*used, card)
    return best


def _cover(cards: Sequence[int], debt: int) -> tuple[int, ...] | None:
    """The cards that pay at least `debt` with the least over (then the fewest), or None."""
    below: dict[int, tuple[int, ...]] = {0: ()}
    found: tuple[int, ...] | None = None
    for card in sorted(cards, reverse=True):
        for total, used in list(below.items()):
            new, hand = total + card, (*used, card)
            if new >= debt:
                if found is None or (new, len(hand)) < (sum(found), len(found)):
                    found = hand
            elif new not in below or len(below[new]) > len(hand):
                below[new] = hand
    return found


def bank_pays(table: Table, name: str, amount: int, tile: str) -> int:
    """The bank pays `name` `amount` in its cards: exactly when its cards make it, else the
    most it can below it. Returns what was paid."""
    bank = tiles_of(table).bank
    best = _fewest(bank, amount)
    paid = max(best)
    for card in best[paid]:
        bank.remove(card)
        table.pay_card(name, card)
    table.notice("bank", tile=tile, name=FACES[tile], player=name, owed=amount, paid=paid)
    return paid


def give_chips(table: Table, name: str, n: int, tile: str) -> None:
    tiles_of(table).chips[name] += n
    table.notice("chips", tile=tile, name=FACES[tile], player=name, chips=n)


def pays_bank(table: Table, name: str, debt: int, tile: str) -> int:
    """`name` pays `debt` into the bank: with cards, the bank giving change (as near as its
    cards make it, never more), and when the cards are not enough, all of them and then
    chips at $10,000 each. Returns what was paid, change deducted."""
    extra = tiles_of(table)
    cards = list(table.won[name])
    hand = _cover(cards, debt)
    chips = 0
    if hand is None:
        hand = tuple(cards)
        rest = debt - sum(hand)
        chips = min(extra.chips[name], -(-rest // CHIP_VALUE))
    for card in hand:
        table.take_card(name, card)
        extra.bank.append(card)
    extra.chips[name] -= chips
    change = 0
    if sum(hand) > debt:
        best = _fewest(extra.bank, sum(hand) - debt)
        change = max(best)
        for card in best[change]:
            extra.bank.remove(card)
            table.pay_card(name, card)
    paid = sum(hand) - change + CHIP_VALUE * chips
    table.notice("pays", tile=tile, name=FACES[tile], player=name, owed=debt, paid=paid,
                 cards=sorted(hand, reverse=True), change=change, chips=chips)
    return paid


# --- the tiles ---------------------------------------------------------------------------
def _weight(dice: Iterable[tuple[DiceKey, int]], colour: str) -> int:
    return sum(n * (2 if big else 1) for (c, big), n in dice if c == colour)


def colour_of(table: Table, name: str) -> str:
    return table.players[table.seat_of[name]].colour


class Tile(CasinoEffect):
    """A face lying beside `casino` this round."""

    code = ""

    def __init__(self, casino: int) -> None:
        self.casino = casino

    @property
    def name(self) -> str:  # type: ignore[override]
        return FACES[self.code]

    def ask(self, table: Table, player: str, ask: str, choices: Iterable[TileChoice] = (),
            roll: Counter[DiceKey] | None = None, step: str = "") -> None:
        tiles_of(table).pending.append(Pending(self.code, self.casino, player, ask,
                                               tuple(choices), roll, step))

    def choice(self, choice: str, value: int | None = None) -> TileChoice:
        return TileChoice(self.code, choice, value)

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        """Carry out `action`, one of `pending.choices` (already checked)."""
        raise IllegalAction(f"{self.name} asks no decision")

    def thrown(self, table: Table, pending: Pending, dice: tuple[Die, ...]) -> None:
        """The dice `pending.roll` asked for were thrown."""
        raise IllegalAction(f"{self.name} throws no dice")

    def view(self, table: Table) -> dict[str, Any]:
        return {}

    def did(self, table: Table, what: str, **data: Any) -> None:
        table.notice("tile", tile=self.code, name=self.name, casino=self.casino, did=what,
                     **data)


class HighFive(Tile):
    """C1: "When you place your fifth die (or 3 and your Biggy) in this casino, take the
    token. Exchange it during payout for $100,000 from the bank." """

    code = "C1"
    prize = 100_000

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.holder: str | None = None

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        if self.holder is None and _weight(state.dice_in(casino).items(),
                                           colour_of(state, owner)) >= 5:
            self.holder = owner
            self.did(state, "token", player=owner)

    def at_round_end(self, state: Table, casino: int) -> None:
        if self.holder is not None:
            bank_pays(state, self.holder, self.prize, self.code)

    def view(self, table: Table) -> dict[str, Any]:
        return {"token": self.holder}


class BadLuck(Tile):
    """C2: "Each player with the lowest amount of dice in this casino (before removing any
    tied dice and including players with zero dice!) must pay $50,000 into the bank when the
    round ends." """

    code = "C2"
    fine = 50_000

    def at_round_end(self, state: Table, casino: int) -> None:
        dice = state.dice_in(casino).items()
        amounts = {p.name: _weight(dice, p.colour) for p in state.players}
        low = min(amounts.values())
        for p in state.players:
            if amounts[p.name] == low:
                pays_bank(state, p.name, self.fine, self.code)


class PayDay(Tile):
    """D1: "Count the casinos (not tiles!) that contain at least one die of your color. [...]
    Multiply the number of casinos by $10,000. If the total is $10,000 or $20,000, you receive
    1 or 2 chips. For $30,000-$60,000 take that much money from the bank." """

    code = "D1"

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        colour = colour_of(state, owner)
        n = sum(1 for c in range(1, 7) if _weight(state.dice_in(c).items(), colour))
        self.did(state, "count", player=owner, casinos=n)
        if n <= 2:
            give_chips(state, owner, n, self.code)
        else:
            bank_pays(state, owner, n * 10_000, self.code)


class Jackpot(Tile):
    """A2: "Put the JACKPOT counter on the first space of this tile ($30,000) [...] Throw both
    extra dice: If you rolled a 7 or a double, take the amount displayed beneath the JACKPOT
    counter from the bank. Then move the counter back onto the $30,000 space. If you didn't
    roll a 7 or a double, advance the counter to the next space (max. of $80,000)." """

    code = "A2"
    spaces = (30_000, 40_000, 50_000, 60_000, 70_000, 80_000)

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.space = 0

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        self.ask(state, owner, "Jackpot: throw both black dice (a 7 or a double wins)",
                 roll=Counter(BLACK_DICE))

    def thrown(self, table: Table, pending: Pending, dice: tuple[Die, ...]) -> None:
        a, b = (d.value or 0 for d in dice)
        if a + b == 7 or a == b:
            self.did(table, "jackpot", player=pending.player, thrown=[a, b],
                     amount=self.spaces[self.space])
            bank_pays(table, pending.player, self.spaces[self.space], self.code)
            self.space = 0
        else:
            self.space = min(self.space + 1, len(self.spaces) - 1)
            self.did(table, "advance", player=pending.player, thrown=[a, b],
                     amount=self.spaces[self.space])

    def view(self, table: Table) -> dict[str, Any]:
        return {"counter": self.spaces[self.space]}


class DoubleDown(Tile):
    """G2: "you may move as many of your dice from this casino to the corresponding space on
    the tile. [...] During payout: This tile is paid out exactly like a casino. After possible
    removals the winner gets $60,000, and the runner up gets $30,000 from the bank." """

    code = "G2"
    prizes = (60_000, 30_000)

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.dice: Counter[DiceKey] = Counter()

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        colour = colour_of(state, owner)
        here = state.dice_in(casino)
        small, big = here.get((colour, False), 0), here.get((colour, True), 0)
        choices = [self.choice("keep")]
        choices += [self.choice("move", k) for k in range(1, small + 1)]
        if big:
            choices += [self.choice("move_biggy", k) for k in range(small + 1)]
        self.ask(state, owner, "Double Down: move some of your dice from this casino onto "
                               "the tile? (value: small dice; move_biggy: the Biggy too)",
                 choices)

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if action.choice == "keep":
            return
        colour = colour_of(table, pending.player)
        if action.value:
            table.remove_dice(self.casino, colour, action.value)
            self.dice[(colour, False)] += action.value
        if action.choice == "move_biggy":
            table.remove_dice(self.casino, colour, 1, big=True)
            self.dice[(colour, True)] += 1
        self.did(table, "moved", player=pending.player, dice=action.value or 0,
                 biggy=action.choice == "move_biggy")

    def weights(self, table: Table) -> dict[str, int]:
        return {p.name: w for p in table.players if (w := _weight(self.dice.items(), p.colour))}

    def at_round_end(self, state: Table, casino: int) -> None:
        result = pay_casino(casino, self.prizes, self.weights(state))
        for player, amount in result.payouts:
            bank_pays(state, player, amount, self.code)

    def view(self, table: Table) -> dict[str, Any]:
        return {"dice": self.weights(table)}


TILE_CLASSES: dict[str, type[Tile]] = {
    cls.code: cls for cls in (HighFive, BadLuck, PayDay, Jackpot, DoubleDown)
}
"""The faces built so far; the option `tiles` is refused until all sixteen are."""


def make_tile(code: str, casino: int) -> Tile:
    return TILE_CLASSES[code](casino)


def draw_tiles(table: Table, count: int, pool: Sequence[str], used: Sequence[str],
               rule: str) -> dict[int, str]:
    """This round's faces beside casinos 1..count: distinct tiles drawn at random, each
    turned to a random side ("besides shuffling them, flip them over as well"), from `pool`
    (the faces in play), minus what `rule` keeps out after earlier rounds' `used` faces."""
    faces = [code for code in sorted(FACES) if code in pool]
    if rule == "aside":
        gone = {code[0] for code in used}
        faces = [code for code in faces if code[0] not in gone]
    elif rule == "other_face":
        faces = [code for code in faces if code not in used]
    letters = sorted({code[0] for code in faces})
    drawn = table.rng.sample(letters, min(count, len(letters)))
    out = {}
    for casino, letter in enumerate(drawn, 1):
        out[casino] = table.rng.choice([code for code in faces if code[0] == letter])
    return out


def pending_now(table: Table) -> Pending | None:
    extra = table.extra
    if isinstance(extra, RoyaleTiles) and extra.pending:
        return extra.pending[0]
    return None


def decide(table: Table, action: TileChoice) -> None:
    """Check `action` against the decision due and carry it out."""
    extra = tiles_of(table)
    if not extra.pending:
        raise IllegalAction("no tile is waiting for a decision")
    pending = extra.pending[0]
    if pending.roll is not None:
        raise IllegalAction(f"{FACES[pending.tile]}: {pending.player} throws the "
                            f"{BLACK} dice first")
    if action.player is not None and action.player != pending.player:
        raise NotYourTurn(f"{FACES[pending.tile]}: it is {pending.player}'s decision, not "
                          f"{action.player}'s")
    bare = TileChoice(action.tile, action.choice, action.value)
    if bare not in pending.choices:
        open_ = ", ".join(_words(c) for c in pending.choices)
        raise IllegalAction(f"{FACES[pending.tile]} ({pending.ask}): {_words(bare)} is not "
                            f"open; choose {open_}")
    extra.pending.pop(0)
    extra.tiles[pending.casino].decide(table, pending, bare)


def thrown(table: Table, dice: tuple[Die, ...]) -> None:
    extra = tiles_of(table)
    pending = extra.pending.pop(0)
    extra.tiles[pending.casino].thrown(table, pending, dice)


def _words(choice: TileChoice) -> str:
    return choice.choice if choice.value is None else f"{choice.choice} {choice.value}"


def tiles_view(table: Table) -> dict[str, Any]:
    extra = tiles_of(table)
    return {
        "casinos": [{"casino": c, "tile": t.code, "name": t.name, **t.view(table)}
                    for c, t in sorted(extra.tiles.items())],
        "bank": sorted(extra.bank, reverse=True),
        "used": list(extra.used),
        "pending": [p.to_dict() for p in extra.pending[:1]],
    }

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

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
    labels: tuple[str, ...] = ()
    """Each choice in the tile's words, for the buttons a page shows."""
    secret: bool = False
    """The choice made here is kept from the other players: made on the player's own phone."""

    def to_dict(self) -> dict[str, Any]:
        labels = self.labels or tuple(_words(c) for c in self.choices)
        return {"tile": self.tile, "name": FACES[self.tile], "casino": self.casino,
                "player": self.player, "ask": self.ask, "secret": self.secret,
                "choices": [{**c.to_dict(), "label": w}
                            for c, w in zip(self.choices, labels, strict=True)],
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
    closed: set[int] = field(default_factory=set)
    """Casinos no die may enter or leave (No Entry!'s token)."""


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
    short = "" if paid == amount else f" (the bank had only ${paid:,} of ${amount:,})"
    table.notice("bank", tile=tile, name=FACES[tile], player=name, owed=amount, paid=paid,
                 text=f"{FACES[tile]}: {name} gets ${paid:,} from the bank{short}")
    return paid


def give_chips(table: Table, name: str, n: int, tile: str) -> None:
    tiles_of(table).chips[name] += n
    table.notice("chips", tile=tile, name=FACES[tile], player=name, chips=n,
                 text=f"{FACES[tile]}: {name} gets {n} chip{'s' if n != 1 else ''}")


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
    short = "" if paid >= debt else f" of ${debt:,} (all they had)"
    table.notice("pays", tile=tile, name=FACES[tile], player=name, owed=debt, paid=paid,
                 cards=sorted(hand, reverse=True), change=change, chips=chips,
                 text=f"{FACES[tile]}: {name} pays ${min(paid, debt):,}{short} into the bank"
                      + (f" ({chips} chip{'s' if chips != 1 else ''})" if chips else ""))
    return paid


# --- the tiles ---------------------------------------------------------------------------
def _weight(dice: Iterable[tuple[DiceKey, int]], colour: str) -> int:
    return sum(n * (2 if big else 1) for (c, big), n in dice if c == colour)


def colour_of(table: Table, name: str) -> str:
    return table.players[table.seat_of[name]].colour


class Tile(CasinoEffect):
    """A face lying beside `casino` this round."""

    code = ""
    hidden: frozenset[str] = frozenset()
    """Choices the other players do not see (the log keeps their value back)."""

    def __init__(self, casino: int) -> None:
        self.casino = casino

    @property
    def name(self) -> str:  # type: ignore[override]
        return FACES[self.code]

    words: ClassVar[dict[str, str]] = {}
    """This face's own words for a choice, over `WORDS` ("{v}": the choice's value)."""

    def ask(self, table: Table, player: str, ask: str, choices: Iterable[TileChoice] = (),
            roll: Counter[DiceKey] | None = None, step: str = "") -> None:
        chosen = tuple(choices)
        tiles_of(table).pending.append(Pending(
            self.code, self.casino, player, ask, chosen, roll, step,
            labels=tuple(self.label(table, c) for c in chosen),
            secret=any(c.choice in self.hidden for c in chosen)))

    def label(self, table: Table, choice: TileChoice) -> str:
        """`choice` as a button says it."""
        text = self.words.get(choice.choice) or WORDS.get(choice.choice) or choice.choice
        return text.format(v=choice.value)

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

    def setup(self, table: Table) -> None:
        """Put out what the tile's "Setup:" puts into the casinos at the round's start."""

    def did(self, table: Table, what: str, **data: Any) -> None:
        table.notice("tile", tile=self.code, name=self.name, casino=self.casino, did=what,
                     **data, text=f"{self.name}: {did_words(what, data, self.casino)}")


def _n(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def did_words(what: str, d: dict[str, Any], casino: int) -> str:
    """What a tile did, as the game log says it (never a secret: `did` is told no secret)."""
    who = d.get("player", "")
    die = "the Biggy" if d.get("biggy") else "a die"
    thrown = " and ".join(map(str, d.get("thrown", ())))
    phrases: dict[str, Callable[[], str]] = {
        "drawn": lambda: f"lies beside casino {casino}",
        "token": lambda: f"{who} takes the token",
        "count": lambda: f"{who} has dice in {_n(d.get('casinos', 0), 'casino')}",
        "jackpot": lambda: f"{who} throws {thrown} and wins the jackpot",
        "advance": lambda: f"{who} throws {thrown}: no luck, the jackpot grows to "
                   f"${d.get('amount', 0):,}",
        "moved": lambda: f"{who} moves {_n(d.get('dice', 0), 'die', 'dice')}"
                 f"{' and the Biggy' if d.get('biggy') else ''} onto the tile",
        "fist": lambda: f"{who} holds some tokens in secret; {d.get('guesser')} guesses",
        "revealed": lambda: (f"{d.get('guesser')} guessed {d.get('guess')}, {who} held "
                     f"{d.get('held')}: " + ("right, nothing for " + who if d.get("right")
                                             else "wrong, " + who + " is rewarded"))
        if "held" in d else
        (f"{who} picks pile {d.get('pile')} of {_n(d.get('tokens', 0), 'token')}"
         + (", with the chips token" if d.get("chips") else "")),
        "die": lambda: f"{who} puts {die} on the tile's space {d.get('space')}",
        "bumped": lambda: f"the die on space {d.get('space')} goes to casino {d.get('to')}",
        "back": lambda: f"{who} gets {_n(d.get('dice', 0), 'die', 'dice')} back from the bar",
        "knocked": lambda: f"{who} puts {die} in the bar",
        "placed": lambda: (f"{who} places the black dice as their own in casino "
                   f"{' and '.join(map(str, d['casinos']))}" if d.get("casinos")
                   else f"{who} places neither black die"),
        "thrown": lambda: (f"{who} throws {thrown}" if thrown else
                   f"{who} throws {d.get('total')}"
                   + (f", bet {d['bet']}: {'won' if d.get('won') else 'lost'}"
                      if d.get("bet") else "")),
        "take": lambda: f"{who} takes the reward",
        "blank": lambda: (f"{who} puts {_n(d.get('dice', 0), 'blank die', 'blank dice')} in casino "
                  f"{d.get('to')}" if "to" in d else
                  f"{who} takes a blank die from casino {d.get('casino_from')}"),
        "activate": lambda: f"{who} activates {FACES.get(d.get('other', ''), 'another tile')}",
        "golden": lambda: f"{who} puts {die} on the golden space",
        "golden_back": lambda: f"{who} gets their die back from the golden space",
        "result": lambda: f"{who} chooses {d.get('face')}",
        "returned": lambda: "the token goes back to the tile",
        "power": lambda: f"{who} passes and puts {die} in casino {d.get('to')}",
        "kept": lambda: f"{who} leaves casino {d.get('casino_closed')} closed",
        "closed": lambda: f"{who} closes casino {d.get('casino_closed')}",
        "split": lambda: f"{who} splits the tokens "
                 f"{' + '.join(map(str, d.get('piles', ())))}",
        "rotate": lambda: f"{who} turns a die to {d.get('to')} and puts it in that casino",
        "rotate_biggy": lambda: f"{who} turns the Biggy to {d.get('to')} and puts it in that "
                                f"casino",
        "return": lambda: f"{who} takes a die back from casino {d.get('to')}",
        "return_biggy": lambda: f"{who} takes the Biggy back from casino {d.get('to')}",
    }
    say = phrases.get(what)
    return say() if say is not None else what


WORDS: dict[str, str] = {
    "keep": "No", "none": "None", "take": "Take it", "roll": "Roll as usual",
    "hold": "Hold {v}", "guess": "Guess {v}", "higher": "Bet higher", "lower": "Bet lower",
    "one": "Place the {v}", "both": "Place both",
    "move": "Move {v}", "move_biggy": "Move {v} and the Biggy",
    "die": "A die", "biggy": "The Biggy",
    "cluster": "The cluster of {v}", "casino": "Casino {v}",
    "activate": "Casino {v}'s tile", "result": "{v}",
    "rotate": "Turn a die to {v}", "rotate_biggy": "Turn the Biggy to {v}",
    "return": "Take a die back from casino {v}",
    "return_biggy": "Take the Biggy back from casino {v}",
    "power": "Pass: a die to casino {v}", "power_biggy": "Pass: the Biggy to casino {v}",
    "chip": "1 chip", "money": "$30,000", "option": "Turn or take back a die",
}
"""Every choice in words; a face's own `words` say it better where the same word differs."""


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
    words: ClassVar[dict[str, str]] = {"keep": "Leave them here"}

    def label(self, table: Table, choice: TileChoice) -> str:
        if choice.choice == "move_biggy":
            return f"The Biggy and {choice.value}" if choice.value else "The Biggy"
        return super().label(table, choice)

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


def left_of(table: Table, name: str) -> str:
    """The player to `name`'s left: the next in turn order ("Play continues with the player
    to your left")."""
    return table.players[(table.seat_of[name] + 1) % len(table.players)].name


def reward(table: Table, name: str, what: int | str, tile: str) -> None:
    """A reward printed on a tile: "chip"/"chips2" (1 or 2 chips) or an amount from the bank."""
    if what == "chip":
        give_chips(table, name, 1, tile)
    elif what == "chips2":
        give_chips(table, name, 2, tile)
    elif isinstance(what, int):
        bank_pays(table, name, what, tile)


class LuckyPunch(Tile):
    """A1: "Secretly choose 1-3 tokens and take them into your right hand [...] The player to
    your left must guess how many tokens you are holding in your hand. If they guess
    correctly, you get nothing. If they guess wrong, you get the reward: either 2 chips or
    $30,000 or $40,000." """

    code = "A1"
    words: ClassVar[dict[str, str]] = {"hold": "{v} in my fist"}
    hidden = frozenset({"hold"})
    rewards: ClassVar[dict[int, int | str]] = {1: "chips2", 2: 30_000, 3: 40_000}

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.held: int | None = None

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        self.ask(state, owner, "Lucky Punch: secretly take 1, 2 or 3 tokens",
                 [self.choice("hold", n) for n in (1, 2, 3)], step="hold")

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if pending.step == "hold":
            self.held = action.value
            guesser = left_of(table, pending.player)
            self.did(table, "fist", player=pending.player, guesser=guesser)
            self.ask(table, guesser, f"Lucky Punch: how many tokens does {pending.player} "
                                     f"hold?", [self.choice("guess", n) for n in (1, 2, 3)],
                     step=f"guess:{pending.player}")
            return
        holder = pending.step.split(":", 1)[1]
        held, self.held = self.held or 0, None
        right = action.value == held
        self.did(table, "revealed", player=holder, guesser=pending.player, held=held,
                 guess=action.value, right=right)
        if not right:
            reward(table, holder, self.rewards[held], self.code)


class NiceDice(Tile):
    """H1: "you may place a die you just rolled or one that you just placed on this casino, on
    this tile. Place that die onto the die space corresponding to its rolled number. If there
    is already another die on that space [...] place that die in the corresponding casino
    (this will not trigger that casino). During payout: Each player removes their dice from
    this tile and then takes the corresponding reward: 1 or 2 chips or $30,000-$60,000." """

    code = "H1"
    words: ClassVar[dict[str, str]] = {"die": "The {v} onto the tile",
                                       "biggy": "The Biggy ({v}) onto the tile"}
    rewards: ClassVar[dict[int, int | str]] = {1: "chip", 2: "chips2", 3: 30_000, 4: 40_000,
                                     5: 50_000, 6: 60_000}

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.spaces: dict[int, DiceKey] = {}

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        colour = colour_of(state, owner)
        hand = state.hand_of(owner)
        placed = {(d.value, d.big) for d in dice}
        rolled = {(d.value, d.big) for d in state.last_roll
                  if d.value is not None and d.value != state.last_placed and d.colour == colour
                  and hand.get((colour, d.big))}
        options = sorted(placed | rolled, key=lambda k: (k[1], k[0]))
        choices = [self.choice("keep")]
        choices += [self.choice("biggy" if big else "die", v) for v, big in options]
        where = "here" if dice else "in hand"
        self.ask(state, owner, "Nice Dice: put a die you just rolled or placed here onto the "
                               "tile's space of its number?", choices,
                 step=f"placed:{dice[0].value}" if dice else f"placed:{where}")

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if action.choice == "keep" or action.value is None:
            return
        colour, big, value = colour_of(table, pending.player), action.choice == "biggy", \
            action.value
        if pending.step == f"placed:{value}":  # one of the dice just placed here
            table.remove_dice(self.casino, colour, 1, big)
        else:  # one of the dice rolled and not placed: still in the hand
            table.take_from_hand(pending.player, colour, big)
        bumped = self.spaces.get(value)
        self.spaces[value] = (colour, big)
        self.did(table, "die", player=pending.player, space=value, biggy=big)
        if bumped is not None:
            table.add_dice(value, bumped[0], 1, bumped[1])
            self.did(table, "bumped", space=value, colour=bumped[0], to=value)

    def at_round_end(self, state: Table, casino: int) -> None:
        owners = {p.colour: p.name for p in state.players}
        for space, (colour, _) in sorted(self.spaces.items()):
            if colour in owners:
                reward(state, owners[colour], self.rewards[space], self.code)

    def view(self, table: Table) -> dict[str, Any]:
        return {"spaces": {str(v): {"colour": c, "big": b}
                           for v, (c, b) in sorted(self.spaces.items())}}


class Knockout(Tile):
    """E2: "Each opponent must place one of their remaining dice in the bar on this tile
    (unless there are already 2 dice of that opponent in the bar). In exchange, you get back
    all your dice that are currently in the bar (if any). Any dice in the bar are "knocked
    out" and will not count during payout. The "Biggy" only counts as one of the maximum of
    two dice in the bar." """

    code = "E2"
    words: ClassVar[dict[str, str]] = {"die": "A small die"}

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.bar: Counter[DiceKey] = Counter()

    def in_bar(self, colour: str) -> int:
        return sum(n for (c, _), n in self.bar.items() if c == colour)

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        seat = state.seat_of[owner]
        n = len(state.players)
        for k in range(1, n):
            other = state.players[(seat + k) % n]
            hand = state.hand_of(other.name)
            kinds = [big for big in (False, True) if hand.get((other.colour, big))]
            if not kinds or self.in_bar(other.colour) >= 2:
                continue
            if len(kinds) == 1:
                self.knock(state, other.name, kinds[0])
            else:
                self.ask(state, other.name, f"Knockout!: put one of your remaining dice in "
                                            f"the bar ({owner} activated it)",
                         [self.choice("die"), self.choice("biggy")])
        colour = colour_of(state, owner)
        back = [(key, n) for key, n in self.bar.items() if key[0] == colour]
        for (c, big), count in back:
            for _ in range(count):
                state.give_to_hand(owner, c, big)
            del self.bar[(c, big)]
        if back:
            self.did(state, "back", player=owner, dice=sum(n for _, n in back))

    def knock(self, table: Table, name: str, big: bool) -> None:
        colour = colour_of(table, name)
        table.take_from_hand(name, colour, big)
        self.bar[(colour, big)] += 1
        self.did(table, "knocked", player=name, biggy=big)

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        self.knock(table, pending.player, action.choice == "biggy")

    def view(self, table: Table) -> dict[str, Any]:
        owners = {p.colour: p.name for p in table.players}
        return {"bar": {owners.get(c, c): self.in_bar(c) for c in sorted({c for c, _ in self.bar})}}


class PrimeTime(Tile):
    """B1: "Before payout: If you are the winner of this casino (i.e. you are about to
    receive the higher value card), throw both extra dice. You now have the option to place
    either zero, one or both of those dice in the corresponding casinos (even if you rolled a
    double!). During the subsequent payout they will count as your own dice!" """

    code = "B1"

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.thrown_dice: tuple[int, int] | None = None

    def before_round_end(self, state: Table, casino: int) -> None:
        payout = state.payout_now(casino)
        if payout.payouts and payout.payouts[0][0] in state.seat_of:
            winner = payout.payouts[0][0]
            self.ask(state, winner, "Prime Time: you win this casino; throw both black dice",
                     roll=Counter(BLACK_DICE))

    def thrown(self, table: Table, pending: Pending, dice: tuple[Die, ...]) -> None:
        a, b = sorted(d.value or 0 for d in dice)
        self.thrown_dice = (a, b)
        self.did(table, "thrown", player=pending.player, thrown=[a, b])
        closed = tiles_of(table).closed  # "No dice may be added": a closed casino takes none
        choices = [self.choice("none")]
        choices += [self.choice("one", v) for v in sorted({a, b}) if v not in closed]
        if a not in closed and b not in closed:
            choices.append(self.choice("both"))
        if len(choices) == 1:
            return
        self.ask(table, pending.player, f"Prime Time: place none, one or both of {a} and {b} "
                                        f"as your own dice?", choices)

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        assert self.thrown_dice is not None
        values = {"none": (), "both": self.thrown_dice}.get(action.choice, (action.value,))
        colour = colour_of(table, pending.player)
        for v in values:
            table.add_dice(v, colour)  # type: ignore[arg-type]
        self.did(table, "placed", player=pending.player, casinos=list(values))


class FiftyFifty(Tile):
    """B2: "Throw both extra dice and move the counter one space to the right. Then, if you
    choose to end your turn, you get the reward indicated below the counter ($0-$60,000).
    However, you can gamble [...] you must bet higher or lower. Then you throw the dice and
    advance the counter. If you win your bet, you may choose again [...] If you lose your bet,
    your turn ends and you get nothing. [...] If you roll the same number twice in a row, you
    lose the bet!" """

    code = "B2"
    track = (0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000)

    def label(self, table: Table, choice: TileChoice) -> str:
        if choice.choice == "take":
            return f"Take ${self.track[self.space - 1]:,}"
        return super().label(table, choice)

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.space = 0
        self.last = 0
        self.bet = ""

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        self.space, self.last, self.bet = 0, 0, ""
        self.ask(state, owner, "Fifty Fifty: throw both black dice", roll=Counter(BLACK_DICE))

    def thrown(self, table: Table, pending: Pending, dice: tuple[Die, ...]) -> None:
        total = sum(d.value or 0 for d in dice)
        won = (not self.bet or (self.bet == "higher" and total > self.last)
               or (self.bet == "lower" and total < self.last))
        self.did(table, "thrown", player=pending.player, total=total, bet=self.bet or None,
                 won=won)
        self.last = total
        if not won:
            self.space = 0
            return
        self.space += 1
        amount = self.track[self.space - 1]
        choices = [self.choice("take")]
        if self.space < len(self.track):
            choices += [self.choice("higher"), self.choice("lower")]
        self.ask(table, pending.player, f"Fifty Fifty: take ${amount:,} or bet higher or "
                                        f"lower than {total}?", choices)

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if action.choice == "take":
            amount = self.track[self.space - 1]
            self.space = 0
            self.did(table, "take", player=pending.player, amount=amount)
            if amount:
                bank_pays(table, pending.player, amount, self.code)
            return
        self.bet = action.choice
        self.ask(table, pending.player, f"Fifty Fifty: throw for {action.choice} than "
                                        f"{self.last}", roll=Counter(BLACK_DICE))

    def view(self, table: Table) -> dict[str, Any]:
        return {"counter": self.space, "reward": self.track[self.space - 1] if self.space
                else None, "last": self.last or None}


GRAY = "gray"
"""The nine blank gray dice: an imaginary player's wherever they lie in a casino."""


def open_casinos(table: Table) -> list[int]:
    closed = tiles_of(table).closed
    return [c for c in range(1, 7) if c not in closed]


def shift_choices(tile: Tile, table: Table, name: str) -> list[TileChoice]:
    """ "rotate one of your remaining dice to any number of your choice and then place it in
    the corresponding casino [...] or return one of your dice from any casino to your
    supply": "rotate"/"rotate_biggy" to casino v, "return"/"return_biggy" from casino c."""
    colour = colour_of(table, name)
    hand = table.hand_of(name)
    out = []
    for big, word in ((False, "rotate"), (True, "rotate_biggy")):
        if hand.get((colour, big)):
            out += [tile.choice(word, c) for c in open_casinos(table)]
    for big, word in ((False, "return"), (True, "return_biggy")):
        out += [tile.choice(word, c) for c in open_casinos(table)
                if table.dice_in(c).get((colour, big))]
    return out


def shift(tile: Tile, table: Table, name: str, action: TileChoice) -> None:
    """Carry out one of `shift_choices`: no tile is activated by it."""
    colour, big = colour_of(table, name), action.choice.endswith("_biggy")
    casino = action.value or 0
    if action.choice.startswith("rotate"):
        table.take_from_hand(name, colour, big)
        table.add_dice(casino, colour, 1, big)
    else:
        table.remove_dice(casino, colour, 1, big)
        table.give_to_hand(name, colour, big)
    tile.did(table, action.choice, player=name, to=casino)


class BlockIt(Tile):
    """F1: "Place the nine blank gray dice on the dice space clusters of this tile, as
    indicated (2x 1, 2x 2, 1x 3 dice). When activated: Choose one dice space cluster, take all
    blank dice from it and place them in one casino of your choice. During this round and
    during payout, treat any blank dice in casinos as belonging to an imaginary player." """

    code = "F1"

    def label(self, table: Table, choice: TileChoice) -> str:
        if choice.choice == "cluster":
            return _n(choice.value or 0, "blank die", "blank dice")
        return super().label(table, choice)

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.clusters = [1, 1, 2, 2, 3]

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        if self.clusters:
            self.ask(state, owner, "Block It!: which cluster of blank dice?",
                     [self.choice("cluster", n) for n in sorted(set(self.clusters))],
                     step="cluster")

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if pending.step == "cluster":
            self.ask(table, pending.player, f"Block It!: put the {action.value} blank dice in "
                                            f"which casino?",
                     [self.choice("casino", c) for c in open_casinos(table)],
                     step=f"casino:{action.value}")
            return
        n = int(pending.step.split(":")[1])
        self.clusters.remove(n)
        table.add_dice(action.value or 0, GRAY, n)
        self.did(table, "blank", player=pending.player, dice=n, to=action.value)

    def view(self, table: Table) -> dict[str, Any]:
        return {"clusters": list(self.clusters)}


class Handicap(Tile):
    """F2: "Distribute the nine gray blank dice as follows: one die each in casinos 1-3, two
    dice each in casinos 4-6. When activated: Choose one blank die from any casino and place
    it onto an empty die picture on this tile. You get the reward shown: 1 chip (2x) or
    $30,000 (3x) or one of these two options (4x) [...] You don't have to pick up any blank
    die, but you only get a reward if you do." """

    code = "F2"
    words: ClassVar[dict[str, str]] = {"none": "No blank die", "take": "From casino {v}"}
    pictures: ClassVar[dict[str, int]] = {"chip": 2, "money": 3, "option": 4}

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.filled: Counter[str] = Counter()

    def setup(self, table: Table) -> None:
        for casino in range(1, 7):
            table.add_dice(casino, GRAY, 1 if casino <= 3 else 2)

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        if not self.empty(state, owner):
            return
        choices = [self.choice("none")]
        choices += [self.choice("take", c) for c in open_casinos(state)
                    if state.dice_in(c).get((GRAY, False))]
        if len(choices) > 1:
            self.ask(state, owner, "Handicap: take a blank die from a casino?", choices,
                     step="take")

    def empty(self, table: Table, name: str) -> list[str]:
        """The kinds of picture still empty that would give `name` something."""
        out = [k for k, n in self.pictures.items() if self.filled[k] < n]
        if "option" in out and not shift_choices(self, table, name):
            out.remove("option")
        return out

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        name = pending.player
        if pending.step == "take":
            if action.choice == "none":
                return
            table.remove_dice(action.value or 0, GRAY)
            self.did(table, "blank", player=name, casino_from=action.value)
            self.ask(table, name, "Handicap: onto which picture?",
                     [self.choice(k) for k in self.empty(table, name)], step="picture")
        elif pending.step == "picture":
            self.filled[action.choice] += 1
            if action.choice == "chip":
                give_chips(table, name, 1, self.code)
            elif action.choice == "money":
                bank_pays(table, name, 30_000, self.code)
            else:
                self.ask(table, name, "Handicap: rotate a remaining die into a casino, or "
                                      "return one of your dice from a casino?",
                         shift_choices(self, table, name), step="shift")
        else:
            shift(self, table, name, action)

    def view(self, table: Table) -> dict[str, Any]:
        return {"pictures": {k: {"filled": self.filled[k], "of": n}
                             for k, n in self.pictures.items()}}


class MyChoice(Tile):
    """H2: "Throw both black extra dice and choose one of the results. Perform the
    corresponding action: +1 chip, +2 chips, +$30,000, Activate any other tile, as if you had
    just placed dice in that casino. [...] Rotate one of your remaining dice [...] or return
    one of your dice from a casino to your supply. Place one of your remaining dice onto the
    golden framed gray space. If the space is occupied, return that die to its owner before.
    During payout, remove the die from the gray space and you get $60,000 from the bank." """

    code = "H2"
    golden_prize = 60_000
    results: ClassVar[dict[int, str]] = {
        1: "+1 chip", 2: "+2 chips", 3: "+$30,000", 4: "Activate another tile",
        5: "Turn or take back a die", 6: "A die onto the golden space"}

    def label(self, table: Table, choice: TileChoice) -> str:
        if choice.choice == "result":
            return f"{choice.value}: {self.results[choice.value or 0]}"
        return super().label(table, choice)

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.golden: DiceKey | None = None
        self.thrown_dice: tuple[int, ...] = ()

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        self.ask(state, owner, "My Choice: throw both black dice", roll=Counter(BLACK_DICE))

    def others(self, table: Table) -> list[int]:
        closed = tiles_of(table).closed
        return [c for c in sorted(tiles_of(table).tiles) if c != self.casino and c not in closed]

    def open_faces(self, table: Table, name: str) -> list[int]:
        colour = colour_of(table, name)
        hand = table.hand_of(name)
        possible = {1: True, 2: True, 3: True, 4: bool(self.others(table)),
                    5: bool(shift_choices(self, table, name)),
                    6: bool(hand.get((colour, False)) or hand.get((colour, True)))}
        return [v for v in sorted(set(self.thrown_dice)) if possible[v]]

    def thrown(self, table: Table, pending: Pending, dice: tuple[Die, ...]) -> None:
        self.thrown_dice = tuple(sorted(d.value or 0 for d in dice))
        self.did(table, "thrown", player=pending.player, thrown=list(self.thrown_dice))
        faces = self.open_faces(table, pending.player)
        if faces:
            self.ask(table, pending.player, f"My Choice: which result, "
                                            f"{' or '.join(map(str, faces))}?",
                     [self.choice("result", v) for v in faces], step="result")

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        name = pending.player
        if pending.step == "result":
            self.result(table, name, action.value or 0)
        elif pending.step == "activate":
            other = tiles_of(table).tiles[action.value or 0]
            self.did(table, "activate", player=name, other=other.code)
            other.on_activate(table, other.casino, name, ())
        elif pending.step == "golden":
            colour, big = colour_of(table, name), action.choice == "biggy"
            if self.golden is not None:
                owner = next(p.name for p in table.players if p.colour == self.golden[0])
                table.give_to_hand(owner, *self.golden)
                self.did(table, "golden_back", player=owner)
            table.take_from_hand(name, colour, big)
            self.golden = (colour, big)
            self.did(table, "golden", player=name, biggy=big)
        else:
            shift(self, table, name, action)

    def result(self, table: Table, name: str, face: int) -> None:
        self.did(table, "result", player=name, face=face)
        if face in (1, 2):
            give_chips(table, name, face, self.code)
        elif face == 3:
            bank_pays(table, name, 30_000, self.code)
        elif face == 4:
            self.ask(table, name, "My Choice: activate which other tile?",
                     [self.choice("activate", c) for c in self.others(table)], step="activate")
        elif face == 5:
            self.ask(table, name, "My Choice: rotate a remaining die into a casino, or return "
                                  "one of your dice from a casino?",
                     shift_choices(self, table, name), step="shift")
        else:
            colour, hand = colour_of(table, name), table.hand_of(name)
            self.ask(table, name, "My Choice: which of your remaining dice onto the golden "
                                  "space?",
                     [self.choice(w) for big, w in ((False, "die"), (True, "biggy"))
                      if hand.get((colour, big))], step="golden")

    def at_round_end(self, state: Table, casino: int) -> None:
        if self.golden is not None:
            owner = next(p.name for p in state.players if p.colour == self.golden[0])
            bank_pays(state, owner, self.golden_prize, self.code)

    def view(self, table: Table) -> dict[str, Any]:
        owners = {p.colour: p.name for p in table.players}
        return {"golden": None if self.golden is None else owners[self.golden[0]]}


class PowerPlay(Tile):
    """D2: "After placing your dice on this casino, if you, alone, have more dice here than
    any other player, take the token (from the tile or from an opponent) [...] On your next
    turn, if you still have the token, you may pass the turn. If you do, rotate one of your
    remaining dice to a number of your choice and place it in the corresponding casino and
    resolve any effects that might have. If at any time during the round no player has a
    clear dice majority, the token is returned to the tile." """

    code = "D2"

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.holder: str | None = None
        self.offer: str | None = None

    def leader(self, table: Table) -> str | None:
        """Who alone has the most dice here (an imaginary player too), or None."""
        owners = {p.colour: p.name for p in table.players}
        weights: Counter[str] = Counter()
        for (colour, big), n in table.dice_in(self.casino).items():
            weights[owners.get(colour, colour)] += n * (2 if big else 1)
        ranked = weights.most_common(2)
        if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
            return None
        return ranked[0][0]

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        if self.leader(state) == owner and self.holder != owner:
            self.holder = self.offer = owner
            self.did(state, "token", player=owner)

    def after_action(self, state: Table, casino: int) -> None:
        if self.holder is not None and self.leader(state) is None:
            self.did(state, "returned", player=self.holder)
            self.holder = self.offer = None

    def on_turn(self, state: Table, name: str) -> None:
        if self.offer != name:
            return
        self.offer = None  # "On your next turn": this one only
        colour, hand = colour_of(state, name), state.hand_of(name)
        choices = [self.choice("roll")]
        for big, word in ((False, "power"), (True, "power_biggy")):
            if hand.get((colour, big)):
                choices += [self.choice(word, c) for c in open_casinos(state)]
        self.ask(state, name, "Power Play: roll, or pass the turn and place one of your dice "
                              "in a casino of your choice?", choices, step="turn")

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if action.choice == "roll":
            return
        name, casino = pending.player, action.value or 0
        colour, big = colour_of(table, name), action.choice == "power_biggy"
        table.end_turn()
        table.take_from_hand(name, colour, big)
        table.add_dice(casino, colour, 1, big)
        self.did(table, "power", player=name, to=casino, biggy=big)
        other = tiles_of(table).tiles.get(casino)
        if other is not None:
            other.on_activate(table, casino, name, (Die(colour, casino, big),))

    def view(self, table: Table) -> dict[str, Any]:
        return {"token": self.holder}


class NoEntry(Tile):
    """E1: "Place the round counter on the first space (a) of the running track. When
    activated: Choose any casino (except the one with this tile) and place the NO ENTRY!
    token on its die illustration. That casino is now closed. No dice may be added or
    removed. This also applies to any tile activations. In addition, advance the counter one
    space and take the reward indicated on the new space. [...] The next time a player
    activates this tile, they may move the NO ENTRY! token, but they don't have to. However,
    if they don't, they also won't move the counter and won't get a reward."

    The text lost the track's printed rewards to its scan: `track` is the reading chosen
    (docs/rules-engine.md lists it), one number per space after (a), None for an empty one;
    the last space is the finish, which pays nothing and where the counter stays."""

    code = "E1"
    track: ClassVar[tuple[int | str | None, ...]] = (30_000, None, 40_000, None, 50_000, None)
    words: ClassVar[dict[str, str]] = {"keep": "Leave the token", "casino": "Close casino {v}"}

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.token: int | None = None
        self.space = 0  # 0 is (a); 1.. the spaces of `track`

    def on_activate(self, state: Table, casino: int, owner: str, dice: tuple[Die, ...]) -> None:
        targets = [c for c in range(1, 7) if c not in (self.casino, self.token)]
        choices = [] if self.token is None else [self.choice("keep")]
        choices += [self.choice("casino", c) for c in targets]
        where = "which casino" if self.token is None else \
            f"move the token from casino {self.token} (and take the next reward) or leave it"
        self.ask(state, owner, f"No Entry!: close {where}?", choices)

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if action.choice == "keep":
            self.did(table, "kept", player=pending.player, casino_closed=self.token)
            return
        closed = tiles_of(table).closed
        closed.discard(self.token or 0)
        self.token = action.value
        closed.add(action.value or 0)
        self.did(table, "closed", player=pending.player, casino_closed=action.value)
        if self.space < len(self.track):
            self.space += 1
            prize = self.track[self.space - 1]
            if prize is not None:
                reward(table, pending.player, prize, self.code)

    def view(self, table: Table) -> dict[str, Any]:
        return {"closed": self.token, "counter": self.space,
                "track": list(self.track)}


class BlackBox(Tile):
    """G1: "Put the six BLACK BOX tokens face up [...] During payout: The player to the left
    of this casino's winner takes all 6 tokens and separates them into two piles (3+3, 4+2,
    or 5+1 tokens), as he wishes. The winner of the casino chooses one of the face down
    piles. They receive the reward shown on the chosen tokens: 2 chips or money ($40,000,
    $60,000, $80,000 or even $100,000)."

    The scan lost what each token shows. The reading chosen (docs/rules-engine.md): five
    tokens show $20,000 and one 2 chips, so a pile of k money tokens pays k x $20,000, and
    the piles lie face down, their sizes in sight. The splitter's two choices are the split
    (in sight) and which pile takes the chips token (secret until the winner has chosen)."""

    code = "G1"
    hidden = frozenset({"chips"})
    token_money = 20_000
    words: ClassVar[dict[str, str]] = {"split": "{v} + the rest", "chips": "Chips in pile {v}",
                                       "pile": "Pile {v}"}

    def __init__(self, casino: int) -> None:
        super().__init__(casino)
        self.piles: tuple[int, int] | None = None
        self.chips_in: int | None = None
        self.winner: str | None = None

    def label(self, table: Table, choice: TileChoice) -> str:
        if choice.choice == "split":
            return f"{choice.value} + {6 - (choice.value or 0)}"
        if choice.choice == "chips" and self.piles is not None:
            return f"Chips token in pile {choice.value} ({self.piles[(choice.value or 1) - 1]})"
        if choice.choice == "pile" and self.piles is not None:
            n = self.piles[(choice.value or 1) - 1]
            return f"Pile {choice.value} ({n} tokens)"
        return super().label(table, choice)

    def at_payout_ask(self, state: Table, casino: int) -> None:
        payout = state.payout_now(casino)
        if not payout.payouts or payout.payouts[0][0] not in state.seat_of:
            return  # no winner, or an imaginary player's: nobody takes the tokens
        self.winner = payout.payouts[0][0]
        splitter = left_of(state, self.winner)
        self.ask(state, splitter, f"Black Box: split the six tokens into two piles for "
                                  f"{self.winner}", [self.choice("split", n) for n in (3, 4, 5)],
                 step="split")

    def decide(self, table: Table, pending: Pending, action: TileChoice) -> None:
        if pending.step == "split":
            n = action.value or 3
            self.piles = (n, 6 - n)
            self.did(table, "split", player=pending.player, piles=list(self.piles))
            self.ask(table, pending.player, "Black Box: secretly, which pile takes the chips "
                                            "token?", [self.choice("chips", k) for k in (1, 2)],
                     step="chips")
        elif pending.step == "chips":
            self.chips_in = action.value
            assert self.winner is not None
            self.ask(table, self.winner, f"Black Box: which face-down pile, 1 "
                                         f"({self.piles[0] if self.piles else 0} tokens) or 2 "
                                         f"({self.piles[1] if self.piles else 0})?",
                     [self.choice("pile", k) for k in (1, 2)], step="pile")
        else:
            assert self.piles is not None
            k = action.value or 1
            chips = self.chips_in == k
            money = (self.piles[k - 1] - (1 if chips else 0)) * self.token_money
            self.did(table, "revealed", player=pending.player, pile=k,
                     tokens=self.piles[k - 1], chips=2 if chips else 0, money=money,
                     chips_in=self.chips_in)
            if chips:
                give_chips(table, pending.player, 2, self.code)
            if money:
                bank_pays(table, pending.player, money, self.code)

    def view(self, table: Table) -> dict[str, Any]:
        return {"piles": None if self.piles is None else list(self.piles)}


TILE_CLASSES: dict[str, type[Tile]] = {
    cls.code: cls for cls in (HighFive, BadLuck, PayDay, Jackpot, DoubleDown, LuckyPunch,
                              NiceDice, Knockout, PrimeTime, FiftyFifty, BlockIt, Handicap,
                              MyChoice, PowerPlay, NoEntry, BlackBox)
}
"""Each face's rules, by its code."""


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

"""The `score` contract (DESIGN.md): casinos in, payouts out, every bad field named.

Outside tools call this with hand-made JSON, so validation is strict and each message points
at the exact field (`casinos[2].dice.anna`) instead of failing somewhere inside the maths.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .editions import CLASSIC_NOTES
from .payout import pay_casino


class ScoreInputError(ValueError):
    pass


_EDITION_NOTES: dict[str, tuple[Callable[[int], bool], str]] = {
    "classic": (CLASSIC_NOTES.__contains__,
                "a classic banknote is $10,000 to $90,000 in steps of 10,000"),
    "custom": (range(3, 11).__contains__, "a Custom Edition money card is 3 to 10"),
    # The Royale text does not list its 90 cards (the app's default deck is only a guess,
    # and a game may use another one), and its tiles pay $100,000 from the bank: any card
    # in steps of $10,000 may be on the table.
    "royale": (lambda note: note > 0 and note % 10_000 == 0,
               "a Royale money card is a positive multiple of $10,000"),
}
_BIGGY_EDITIONS = {"royale"}
# Both card texts deal exactly two cards per casino, one for 1st place and one for 2nd
# (Royale: "All other players leave the casino empty-handed"), so a third would pay a
# third player. Fewer stay allowed: a casino whose pair came up short when the deck ran out.
_CARDS_PER_CASINO = {"custom": 2, "royale": 2}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _counts(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, dict):
        raise ScoreInputError(f"{where}: must be an object mapping player names to dice counts")
    for name, n in value.items():
        if not name.strip():
            raise ScoreInputError(f"{where}: a player name is empty")
        if not _is_int(n) or n < 0:
            raise ScoreInputError(f"{where}.{name}: must be a whole number of dice >= 0, "
                                  f"got {json_repr(n)}")
    return value


def json_repr(value: Any) -> str:
    return json.dumps(value)


def score_request(request: Any) -> dict[str, Any]:
    """Validate one `score` request and pay out its casinos."""
    if not isinstance(request, dict):
        raise ScoreInputError("input must be one JSON object")
    edition = request.get("edition")
    if edition not in _EDITION_NOTES:
        raise ScoreInputError(f"edition: must be classic, custom or royale, got "
                              f"{json_repr(edition)}")
    is_note, note_rule = _EDITION_NOTES[edition]
    most_cards = _CARDS_PER_CASINO.get(edition)
    neutral = request.get("neutral", ["white"])
    if not isinstance(neutral, list) or not all(isinstance(n, str) and n for n in neutral):
        raise ScoreInputError("neutral: must be a list of imaginary players' names")
    casinos = request.get("casinos")
    if not isinstance(casinos, list):
        raise ScoreInputError("casinos: must be a list of casinos")
    unknown = set(request) - {"edition", "neutral", "casinos"}
    if unknown:
        raise ScoreInputError(f"{sorted(unknown)[0]}: unknown field")

    results = []
    totals: dict[str, int] = {}
    seen: set[int] = set()
    for i, casino in enumerate(casinos):
        where = f"casinos[{i}]"
        if not isinstance(casino, dict):
            raise ScoreInputError(f"{where}: must be an object")
        extra = set(casino) - {"casino", "notes", "dice", "big_dice"}
        if extra:
            raise ScoreInputError(f"{where}.{sorted(extra)[0]}: unknown field")
        number = casino.get("casino")
        if not _is_int(number) or not 1 <= number <= 6:
            raise ScoreInputError(f"{where}.casino: must be 1 to 6, got {json_repr(number)}")
        if number in seen:
            raise ScoreInputError(f"{where}.casino: casino {number} is listed twice")
        seen.add(number)
        notes = casino.get("notes")
        if not isinstance(notes, list):
            raise ScoreInputError(f"{where}.notes: must be a list of note values")
        for j, note in enumerate(notes):
            if not _is_int(note) or not is_note(note):
                raise ScoreInputError(f"{where}.notes[{j}]: {json_repr(note)} is not a "
                                      f"{edition} note value ({note_rule})")
        if most_cards is not None and len(notes) > most_cards:
            raise ScoreInputError(f"{where}.notes: a {edition} casino holds exactly "
                                  f"{most_cards} cards, got {len(notes)}")
        dice = _counts(casino.get("dice", {}), f"{where}.dice")
        big = _counts(casino.get("big_dice", {}) or {}, f"{where}.big_dice")
        if edition not in _BIGGY_EDITIONS and any(big.values()):
            raise ScoreInputError(f"{where}.big_dice: the {edition} edition has no Biggy dice")
        weights: dict[str, int] = {}
        for name in [*dice, *big]:
            weights[name] = dice.get(name, 0) + 2 * big.get(name, 0)
            if name not in neutral:
                totals.setdefault(name, 0)
        result = pay_casino(number, notes, weights)
        for player, amount in result.payouts:
            if player not in neutral:
                totals[player] += amount
        results.append(result.to_dict())
    return {"casinos": results, "totals": totals}

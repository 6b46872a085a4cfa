"""Play scripted rounds: say where each player's dice end up, get the rolls that do it.

The rule texts describe end positions ("Anna has 5 dice in the casino, Benno 3 ..."); this
turns such a plan into real turns through the engine: every turn the player to move rolls
all the dice they hold, the dice of their next group show that group's casino number, the
others show something else, and the group's number is placed.
"""

from __future__ import annotations

from collections import Counter

from scorekeeper import Deal, Die, GameState, Place, Roll


def group(casino: int, own: int = 0, big: int = 0, neutral: int = 0) -> tuple:
    return (casino, own, big, neutral)


def play_round(state: GameState, plans: dict[str, list[tuple]], deal=None,
               neutral_start: list[int] | None = None) -> None:
    """Deal (by hand if `deal` is given), then play the planned groups to the round's end."""
    state.apply_action(Deal(deal) if deal is not None else Deal())
    if state.phase == "neutral":
        colour = next(iter(state.expected_roll()))[0]
        state.apply_action(Roll(tuple(Die(colour, v) for v in neutral_start or [])))
    queues = {name: list(groups) for name, groups in plans.items()}
    start_round = state.round
    while state.round == start_round and not state.is_over():
        name = state.current_player()
        seat = state.seat_of[name]
        colour = state.players[seat].colour
        casino, own, big, neutral = queues[name].pop(0)
        hand = state.hands[seat]
        other = casino % 6 + 1 if not queues[name] else queues[name][0][0]
        if other == casino:
            other = casino % 6 + 1
        dice: list[Die] = []
        remaining: Counter = Counter()
        for (c, b), n in hand.items():
            if c == colour and not b:
                take = own
            elif c == colour and b:
                take = big
            else:
                take = neutral
            assert take <= n, f"{name} has {n} {c} {'big ' if b else ''}dice, plan says {take}"
            dice += [Die(c, casino, b)] * take
            remaining[(c, b)] = n - take
        for (c, b), n in remaining.items():
            dice += [Die(c, other, b)] * n
        state.apply_action(Roll(tuple(dice)))
        state.apply_action(Place(casino))
    leftovers = {n: q for n, q in queues.items() if q}
    assert not leftovers, f"planned groups never played: {leftovers}"

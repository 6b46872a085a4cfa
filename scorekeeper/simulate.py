"""Random whole games: for property tests, the benchmark and the terminal demo."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from .actions import Deal, Pass
from .state import GameState

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "black")
NAMES = ("anna", "benno", "carla", "denny", "emil", "frida", "gustav", "hanna")


def players(n: int) -> list[tuple[str, str]]:
    if n > len(NAMES):
        return [(f"player{i + 1}", f"colour{i + 1}") for i in range(n)]
    return list(zip(NAMES[:n], COLOURS[:n], strict=True))


def play_random_game(
    edition: str,
    n_players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    pass_rate: float = 0.1,
    on_action: Callable[[GameState, Any], None] | None = None,
) -> GameState:
    """Play to the end with fair dice and random legal choices, all drawn from `seed`."""
    state = GameState.new(edition, players(n_players), options, seed=seed)
    rng = random.Random(seed ^ 0x5EED)
    while not state.is_over():
        if state.phase == "deal":
            action: Any = Deal()
        elif state.is_chance_node():
            action = state.random_roll(rng)
        else:
            legal = state.legal_actions()
            passes = [a for a in legal if isinstance(a, Pass)]
            others = [a for a in legal if not isinstance(a, Pass)]
            if passes and (not others or rng.random() < pass_rate):
                action = passes[0]
            else:
                action = rng.choice(others)
        state.apply_action(action)
        if on_action is not None:
            on_action(state, action)
    return state

"""Golden playthroughs: seeded whole games of each edition, action by action with the standings.

As OpenSpiel keeps its playthroughs, each file is the record of one game played by a seeded
policy, so a change to the rules engine that changes play shows up as a diff of these files,
reviewed like code. Regenerate after an intended rule change:

    .venv/bin/python -m tests.golden.regenerate          # rewrite tests/golden/*.jsonl
    .venv/bin/python -m tests.golden.regenerate --check  # exit 1 at the first difference

File format (one JSON object a line): a header (`format`, `game`, `edition`, `options`,
`players`, `seed`); one line per action (`n`, `actor`, `action`, `standings` after it); and
`results` last.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorekeeper import Action, GameState, Pass, RulesError, action_from_dict

FORMAT = 1
FOLDER = Path(__file__).resolve().parent
PASS_RATE = 0.15
"""How often the policy sits a turn out where the edition allows it: often enough that every
transcript of an edition with passing has some, rarely enough that games still end with dice
placed."""

# Fixed here, not taken from scorekeeper.simulate: the transcripts must depend on the rules
# engine only, not on the helpers other tools share.
NAMES = ("anna", "benno", "carla", "denny")
COLOURS = ("red", "blue", "green", "yellow")


@dataclass(frozen=True)
class GoldenGame:
    name: str
    edition: str
    players: int
    seed: int
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return FOLDER / f"{self.name}.jsonl"

    def header(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "game": self.name,
            "edition": self.edition,
            "options": dict(self.options),
            "players": [{"name": n, "colour": c}
                        for n, c in zip(NAMES[: self.players], COLOURS, strict=False)],
            "seed": self.seed,
        }


GAMES: tuple[GoldenGame, ...] = (
    GoldenGame("classic-standard", "classic", 3, 1, {"neutral_dice": False}),
    GoldenGame("classic-neutral-dice", "classic", 2, 2, {"neutral_dice": True}),
    GoldenGame("custom-skip-a", "custom", 3, 3, {"skip_rule": "A"}),
    GoldenGame("custom-skip-b", "custom", 3, 4, {"skip_rule": "B"}),
    GoldenGame("royale-basic", "royale", 4, 5, {"tiles": False}),
    GoldenGame("royale-tiles", "royale", 3, 6, {"tiles": 3}),
)


# --- what a transcript records ------------------------------------------------------------
def new_state(header: dict[str, Any]) -> GameState:
    """The game a transcript's header describes, before its first action."""
    players = [(p["name"], p["colour"]) for p in header["players"]]
    return GameState.new(header["edition"], players, header["options"], seed=header["seed"])


def actor(state: GameState) -> str | None:
    """Who takes the next action: "chance" for a roll and for the app's deal from the seeded
    pile (outcomes nobody chooses, OpenSpiel's chance player), else the player who decides."""
    if state.phase == "deal" or state.is_chance_node():
        return "chance"
    return state.current_player()


def standings(state: GameState) -> dict[str, Any]:
    """The subset of the state a transcript keeps after each action.

    Picked by name from the API's view rather than stored whole: the view gains keys as the
    product grows, and a new key is not a change of play.
    """
    view = state.to_dict()
    tiles = {"tiles": {"casinos": view["tiles"]["casinos"], "bank": sum(view["tiles"]["bank"]),
                       "chips": {p.name: state.chips[p.name] for p in state.players}}
             } if "tiles" in view else {}
    return {
        **tiles,
        "phase": view["phase"],
        "round": view["round"],
        "to_move": view["to_move"],
        "players": {p["name"]: {"money": p["money"], "score": p["score"]}
                    for p in view["players"]},
        "casinos": [
            {"casino": c["casino"], "notes": list(c["notes"]),
             "dice": dict(sorted(c["dice"].items())), "big": dict(sorted(c["big"].items()))}
            for c in view["casinos"]
        ],
    }


def results(state: GameState) -> dict[str, Any]:
    out = state.results()
    return {"ranking": out["ranking"], "winners": out["winners"],
            "explanation": out["explanation"]}


def action_line(n: int, who: str | None, action: Action, state: GameState) -> dict[str, Any]:
    return {"n": n, "actor": who, "action": action.to_dict(), "standings": standings(state)}


# --- playing and replaying ----------------------------------------------------------------
def choose(state: GameState, rng: random.Random) -> Action:
    """The seeded policy: a fair roll at chance, else a random legal choice, passing now and
    then where the edition allows it."""
    if state.is_chance_node():
        return state.random_roll(rng)
    legal = state.legal_actions()
    passes = [a for a in legal if isinstance(a, Pass)]
    others = [a for a in legal if not isinstance(a, Pass)]
    if passes and (not others or rng.random() < PASS_RATE):
        return passes[0]
    return rng.choice(others)


def play(game: GoldenGame) -> list[dict[str, Any]]:
    """The whole transcript of `game` as the engine plays it now."""
    header = game.header()
    state = new_state(header)
    rng = random.Random(game.seed)
    lines: list[dict[str, Any]] = [header]
    while not state.is_over():
        who = actor(state)
        state.apply_action(choose(state, rng))
        lines.append(action_line(state.seq, who, state.history[-1], state))
    lines.append({"results": results(state)})
    return lines


def recorded_actions(lines: Sequence[dict[str, Any]]) -> list[Action]:
    return [action_from_dict(line["action"]) for line in lines[1:-1]]


def replay(lines: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transcript the engine gives for the recorded actions (rather than the policy's)."""
    state = new_state(lines[0])
    out: list[dict[str, Any]] = [lines[0]]
    for n, action in enumerate(recorded_actions(lines), 1):
        who = actor(state)
        try:
            state.apply_action(action)
        except RulesError as exc:
            # Stop at the refusal and say so: the lines after it could only differ further.
            out.append({"n": n, "actor": who, "action": action.to_dict(), "refused": str(exc)})
            return out
        out.append(action_line(state.seq, who, state.history[-1], state))
    out.append({"results": results(state)})
    return out


# --- comparing ----------------------------------------------------------------------------
def first_difference(expected: Any, actual: Any, where: str = "") -> str | None:
    """The path of the first field where `actual` differs from `expected`, with both values,
    or None when they are equal."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            path = f"{where}.{key}" if where else str(key)
            if key not in actual:
                return f"{path}: missing (recorded {json.dumps(expected[key])})"
            if key not in expected:
                return f"{path}: not recorded (now {json.dumps(actual[key])})"
            found = first_difference(expected[key], actual[key], path)
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(e, a, f"{where}[{i}]")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{where}: {len(expected)} items recorded, now {len(actual)}"
        return None
    if expected != actual or type(expected) is not type(actual):
        return f"{where}: recorded {json.dumps(expected)}, now {json.dumps(actual)}"
    return None


def compare(recorded: Sequence[dict[str, Any]], produced: Sequence[dict[str, Any]]
            ) -> tuple[int, str] | None:
    """(line number from 1, what differs) at the first line that differs, or None."""
    for i, (r, p) in enumerate(zip(recorded, produced, strict=False)):
        found = first_difference(r, p)
        if found and "refused" in p:
            found = f"the engine refuses {json.dumps(p['action'])}: {p['refused']}"
        if found:
            return i + 1, f"{describe_line(i + 1, len(recorded))}: {found}"
    if len(recorded) != len(produced):
        at = min(len(recorded), len(produced))
        return at + 1, (f"the transcript has {len(recorded)} lines, the engine's game "
                        f"{len(produced)}: they part after line {at}")
    return None


def describe_line(number: int, total: int) -> str:
    if number == 1:
        return "line 1 (header)"
    if number == total:
        return f"line {number} (results)"
    return f"line {number} (action {number - 1})"


# --- files --------------------------------------------------------------------------------
def dumps(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False)


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text]


def write(path: Path, lines: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(dumps(line) + "\n" for line in lines), encoding="utf-8")


def transcripts() -> Iterator[tuple[GoldenGame, list[dict[str, Any]]]]:
    """Every golden game with its transcript as recorded in tests/golden."""
    for game in GAMES:
        yield game, read(game.path)


def check(games: Sequence[GoldenGame]) -> int:
    """Exit status of --check: 1, naming the first differing line, if play has changed."""
    for game in games:
        if not game.path.exists():
            print(f"{game.path}: missing; run python -m tests.golden.regenerate")
            return 1
        recorded = read(game.path)
        produced = play(game)
        found = compare(recorded, produced)
        if found is None and game.path.read_text(encoding="utf-8") != "".join(
            dumps(line) + "\n" for line in produced
        ):
            found = 1, "same content, different layout: regenerate to rewrite it"
        if found:
            number, what = found
            print(f"{game.path.relative_to(FOLDER.parent.parent)}:{number}: {what}")
            if number <= len(recorded):
                print(f"  file:   {dumps(recorded[number - 1])}")
            if number <= len(produced):
                print(f"  engine: {dumps(produced[number - 1])}")
            return 1
    print(f"{len(games)} golden transcripts match the engine")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.golden.regenerate",
        description="Write the golden game transcripts, or check them against the engine.")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 at the first line the engine differs")
    args = parser.parse_args(argv)
    if args.check:
        return check(GAMES)
    for game in GAMES:
        lines = play(game)
        write(game.path, lines)
        print(f"{game.path.name}: {len(lines) - 2} actions")
    return 0


if __name__ == "__main__":
    sys.exit(main())

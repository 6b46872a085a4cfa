"""The golden playthroughs in tests/golden: recorded whole games the engine must still play.

A failure here means the engine now plays a recorded game differently. If that is an intended
rule change, regenerate (`python -m tests.golden.regenerate`) and review the diff of the
.jsonl files; if not, the message names the action and the first field that moved.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest

from scorekeeper import GameConfig
from scorekeeper.store import GameStore
from tests.golden import regenerate as golden

GAMES = {game.name: game for game in golden.GAMES}


def _load(name: str) -> list[dict[str, Any]]:
    return golden.read(GAMES[name].path)


def _failure(found: tuple[int, str] | None) -> str:
    return "" if found is None else found[1]


@pytest.fixture(params=sorted(GAMES), name="lines")
def _lines(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return _load(request.param)


def test_every_golden_game_has_its_transcript() -> None:
    files = {p.stem for p in golden.FOLDER.glob("*.jsonl")}
    assert files == set(GAMES)
    editions = {(g.edition, tuple(sorted(g.options.items()))) for g in golden.GAMES}
    assert len(editions) == len(golden.GAMES)


def test_transcript_is_well_formed(lines: list[dict[str, Any]]) -> None:
    header, actions, last = lines[0], lines[1:-1], lines[-1]
    assert header["format"] == golden.FORMAT
    assert header == GAMES[header["game"]].header()
    assert [line["n"] for line in actions] == list(range(1, len(actions) + 1))
    assert actions[-1]["standings"]["phase"] == "over"
    assert set(last) == {"results"} and last["results"]["winners"]


def test_replaying_the_actions_gives_the_recorded_standings(lines: list[dict[str, Any]]) -> None:
    found = golden.compare(lines, golden.replay(lines))
    assert found is None, _failure(found)


def test_the_seeded_policy_plays_the_recorded_actions(lines: list[dict[str, Any]]) -> None:
    played = golden.play(GAMES[lines[0]["game"]])
    recorded = [line.get("action") for line in lines]
    found = golden.compare(recorded, [line.get("action") for line in played])
    assert found is None, _failure(found)


def test_undo_back_to_the_start_and_replay_is_exact(lines: list[dict[str, Any]]) -> None:
    """Each undo must restore the standings recorded one action earlier, and the full replay
    after undoing everything must give the recorded game again."""
    actions = golden.recorded_actions(lines)
    state = golden.new_state(lines[0])
    start, start_print = golden.standings(state), state.fingerprint()
    for action in actions:
        state.apply_action(action)
    end_print = state.fingerprint()
    for n in range(len(actions), 0, -1):
        assert state.undo() == actions[n - 1]
        expected = lines[n - 1]["standings"] if n > 1 else start
        diff = golden.first_difference(expected, golden.standings(state))
        assert diff is None, f"undoing action {n}: {diff}"
    assert state.seq == 0 and golden.standings(state) == start
    assert state.fingerprint() == start_print  # the pile and its shuffle too, not only the view
    for n, action in enumerate(actions, 1):
        state.apply_action(action)
        diff = golden.first_difference(lines[n]["standings"], golden.standings(state))
        assert diff is None, f"action {n} replayed after undoing everything: {diff}"
    assert golden.results(state) == lines[-1]["results"]
    assert state.fingerprint() == end_print


def test_transcript_round_trips_through_the_game_store(
    lines: list[dict[str, Any]], tmp_path: Path
) -> None:
    header = lines[0]
    config = GameConfig(header["edition"],
                        tuple((p["name"], p["colour"]) for p in header["players"]),
                        header["options"], seed=header["seed"])
    with GameStore(tmp_path) as store:
        game = store.create(config)
        for action in golden.recorded_actions(lines):
            game.apply(action)
        game_id = game.id
    with GameStore(tmp_path) as store:
        loaded = store.load(game_id).state
    assert loaded.is_over()
    assert [a.to_dict() for a in loaded.history] == [line["action"] for line in lines[1:-1]]
    assert golden.standings(loaded) == lines[-2]["standings"]
    assert golden.results(loaded) == lines[-1]["results"]


def test_passing_is_exercised_where_the_edition_allows_it() -> None:
    for name, game in GAMES.items():
        kinds = {line["action"]["type"] for line in _load(name)[1:-1]}
        assert ("pass" in kinds) == (game.edition != "classic"), name


@pytest.mark.parametrize("seed", range(5))
def test_the_comparison_catches_one_changed_note(seed: int) -> None:
    """A golden test is only worth having if it can fail: change one note of one casino at a
    random action and the comparison must name that action and that field."""
    rng = random.Random(seed)
    name = rng.choice(sorted(GAMES))
    lines = _load(name)
    tampered = copy.deepcopy(lines)
    candidates = [(i, c) for i in range(1, len(lines) - 1)
                  for c, casino in enumerate(lines[i]["standings"]["casinos"]) if casino["notes"]]
    i, c = rng.choice(candidates)
    tampered[i]["standings"]["casinos"][c]["notes"][0] += 1
    found = golden.compare(tampered, golden.replay(tampered))
    assert found is not None
    number, what = found
    assert number == i + 1
    assert what.startswith(f"line {i + 1} (action {i}): standings.casinos[{c}].notes[0]: "), what


def test_the_comparison_catches_a_changed_action_and_a_shorter_game() -> None:
    lines = _load("classic-standard")
    tampered = copy.deepcopy(lines)
    # The first placement whose roll offered another value: placing that one stays legal, so
    # the replay runs on and the comparison must stop at the action itself.
    place, other = next(
        (i, other) for i, line in enumerate(lines[1:-1], 1) if line["action"]["type"] == "place"
        for other in {d["value"] for d in lines[i - 1]["action"].get("dice", ())}
        if other != line["action"]["value"])
    tampered[place]["action"]["value"] = other
    number, what = golden.compare(lines, golden.replay(tampered)) or (0, "")
    assert number == place + 1 and "action.value" in what, what
    number, what = golden.compare(lines, lines[:-3] + lines[-1:]) or (0, "")
    assert number == len(lines) - 2, what


def test_the_comparison_names_an_action_the_engine_refuses() -> None:
    lines = _load("royale-basic")
    tampered = copy.deepcopy(lines)
    roll = next(i for i, line in enumerate(lines[1:-1], 1)
                if line["action"]["type"] == "roll" and len(line["action"]["dice"]) > 1)
    del tampered[roll]["action"]["dice"][0]
    number, what = golden.compare(tampered, golden.replay(tampered)) or (0, "")
    assert number == roll + 1
    assert what.startswith(f"line {roll + 1} (action {roll}): the engine refuses "), what


def test_check_reports_the_first_differing_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert golden.check(golden.GAMES) == 0
    lines = _load("custom-skip-b")
    lines[40]["standings"]["players"]["anna"]["money"] += 1
    moved = golden.GoldenGame(**{**GAMES["custom-skip-b"].__dict__})
    monkeypatch.setattr(golden, "FOLDER", tmp_path / "tests" / "golden")
    golden.FOLDER.mkdir(parents=True)
    golden.write(moved.path, lines)
    capsys.readouterr()
    assert golden.check([moved]) == 1
    out = capsys.readouterr().out
    assert out.startswith("tests/golden/custom-skip-b.jsonl:41: line 41 (action 40): "
                          "standings.players.anna.money: "), out
    assert "  file:   " in out and "  engine: " in out

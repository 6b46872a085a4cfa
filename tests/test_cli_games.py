"""`vegas-table games` and `vegas-table simulate` as a user runs them."""

from __future__ import annotations

import json


def test_simulate_saves_and_games_lists(cli, tmp_path):
    out = cli("simulate", "--edition", "royale", "--players", "2", "--seed", "3",
              "--data-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    neutral = [line for line in out.stdout.splitlines() if "rolls the neutral dice" in line]
    assert len(neutral) == 3 and all(line.count("n ") == 8 for line in neutral)
    assert "Final ranking:" in out.stdout and "Payout of round 3:" in out.stdout
    listed = cli("games", "--data-dir", str(tmp_path), "--json")
    [game] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert game["over"] and game["edition"] == "royale" and game["round"] == 3
    human = cli("games", "--data-dir", str(tmp_path))
    assert "1 saved game in" in human.stdout and game["game_id"] in human.stdout


def test_simulate_royale_with_tiles_names_each_tile_as_drawn_and_as_it_acts(cli):
    from scorekeeper.tiles import FACES

    out = cli("simulate", "--edition", "royale", "--option", "tiles=3", "--players", "3",
              "--seed", "4")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    drawn = [line.split(": ", 1)[1:] for line in lines if line.startswith("  tiles   ")]
    assert len(drawn) == 3  # one line per round
    for line in (x for x in lines if x.startswith("  tiles   ")):
        named = [part.split(": ", 1)[1] for part in line[10:].split("  ") if part]
        assert len(named) == 3 and set(named) <= set(FACES.values())
    acted = {line.split("· ", 1)[1].split(":")[0] for line in lines if "  · " in line}
    assert acted and acted <= set(FACES.values())
    assert "Final ranking:" in out.stdout


def test_games_in_an_empty_dir(cli, tmp_path):
    out = cli("games", "--data-dir", str(tmp_path / "none"))
    assert out.returncode == 0 and "No saved games" in out.stdout


def test_games_on_a_corrupt_store_exits_2_in_one_line(cli, tmp_path):
    (tmp_path / "games.sqlite3").write_bytes(b"garbage" * 500)
    out = cli("games", "--data-dir", str(tmp_path))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "not a readable game store" in out.stderr


def test_simulate_bad_option_exits_2(cli):
    out = cli("simulate", "--edition", "custom", "--option", "skip_rule=Z")
    assert out.returncode == 2 and "skip_rule" in out.stderr and "Traceback" not in out.stderr
    out = cli("simulate", "--players", "9")
    assert out.returncode == 2 and "2–5 players, not 9" in out.stderr


def test_simulate_resume_continues_the_unfinished_game(cli, tmp_path):
    from scorekeeper import Deal, GameConfig
    from scorekeeper.store import GameStore

    with GameStore(tmp_path) as store:
        game = store.create(GameConfig("classic", (("a", "red"), ("b", "blue")), {}, 4))
        game.apply(Deal())
    out = cli("simulate", "--data-dir", str(tmp_path), "--resume", "--quiet")
    assert out.returncode == 0, out.stderr
    assert f"Resuming game {game.id} at action 1" in out.stdout
    with GameStore(tmp_path) as store:
        assert store.load(game.id).state.is_over()

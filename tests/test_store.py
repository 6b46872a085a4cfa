"""The SQLite event store: replay, undo, corruption, and a real SIGKILL mid-game."""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from scorekeeper import Deal, GameConfig, GameState, ImpossibleRoll, Roll, StoreError
from scorekeeper.simulate import play_random_game
from scorekeeper.store import SCHEMA_VERSION, GameStore, StorageFull

from .conftest import ROOT

CONFIG = GameConfig("classic", (("anna", "red"), ("benno", "blue"), ("carla", "green")),
                    {"neutral_dice": True}, seed=12)


def test_load_replays_to_the_identical_state_including_undos(tmp_path):
    played = play_random_game("classic", 3, 12, {"neutral_dice": True})
    with GameStore(tmp_path) as store:
        game = store.create(CONFIG)
        for i, action in enumerate(played.history):
            game.apply(action)
            if i in (10, 50):
                game.undo()
                game.apply(action)
        assert game.state.fingerprint() == played.fingerprint()
    with GameStore(tmp_path) as store:
        loaded = store.load(game.id)
        assert loaded.state.fingerprint() == played.fingerprint()
        [row] = store.list_games()
        assert row["game_id"] == game.id and row["over"] and row["seq"] == played.seq
        assert row["winners"] == played.results()["winners"]


def test_event_log_numbers_count_undos_too(tmp_path):
    played = play_random_game("classic", 3, 12, {"neutral_dice": True})
    with GameStore(tmp_path) as store:
        game = store.create(CONFIG)
        for action in played.history[:3]:
            game.apply(action)
        game.undo()
        game.apply(played.history[2])
        kinds = store.event_kinds(game.id)
        assert [n for n, _ in kinds] == list(range(1, len(kinds) + 1))
        assert [k for _, k in kinds][-2] == "undo"
        assert len(kinds) == 5 and store.event_kinds("nope") == []


def test_wal_mode_and_schema_version_recorded(tmp_path):
    GameStore(tmp_path).close()
    db = sqlite3.connect(tmp_path / "games.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION)


def test_events_are_append_only(tmp_path):
    with GameStore(tmp_path) as store:
        game = store.create(CONFIG)
        game.apply(Deal())
    db = sqlite3.connect(tmp_path / "games.sqlite3")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE events SET payload='{}'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM events")


def test_a_deleted_game_goes_whole_and_the_others_stay(tmp_path):
    with GameStore(tmp_path) as store:
        keep, gone = store.create(CONFIG), store.create(CONFIG)
        for g in (keep, gone):
            g.apply(Deal())
        store.delete_game(gone.id)
        assert [g["game_id"] for g in store.list_games()] == [keep.id]
        assert store.latest_unfinished() == keep.id  # a restart never picks the deleted one
        with pytest.raises(StoreError, match="no saved game"):
            store.load(gone.id)
        with pytest.raises(StoreError, match="no saved game"):
            store.delete_game(gone.id)
        assert store.load(keep.id).state.seq == 1
    db = sqlite3.connect(tmp_path / "games.sqlite3")
    assert db.execute("SELECT count(*) FROM events WHERE game_id=?", (gone.id,)).fetchone() == (0,)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM events WHERE game_id=?", (keep.id,))  # still one by one: never


def test_a_file_from_before_game_deletion_is_brought_up_to_it(tmp_path):
    with GameStore(tmp_path) as store:
        gid = store.create(CONFIG).id
    db = sqlite3.connect(tmp_path / "games.sqlite3")
    db.executescript("DROP TRIGGER events_append_only_d; CREATE TRIGGER events_append_only_d "
                     "BEFORE DELETE ON events\nBEGIN SELECT RAISE(ABORT, 'events are "
                     "append-only'); END;")
    db.close()
    with GameStore(tmp_path) as store:
        store.delete_game(gid)
        assert store.list_games() == []


def test_illegal_action_is_not_stored(tmp_path):
    with GameStore(tmp_path) as store:
        game = store.create(CONFIG)
        game.apply(Deal())
        with pytest.raises(ImpossibleRoll):
            game.apply(Roll(()))
        assert store.load(game.id).state.seq == 1


def test_newer_schema_and_corrupt_files_give_clear_errors(tmp_path):
    GameStore(tmp_path).close()
    db = sqlite3.connect(tmp_path / "games.sqlite3")
    db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    db.commit()
    db.close()
    before = (tmp_path / "games.sqlite3").read_bytes()
    with pytest.raises(StoreError, match="newer Vegas Table"):
        GameStore(tmp_path)
    # Not damage: a newer app's file is left exactly as it is.
    assert (tmp_path / "games.sqlite3").read_bytes() == before
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "games.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a readable game store"):
        GameStore(bad)


def test_tampered_event_is_reported_with_its_number(tmp_path):
    with GameStore(tmp_path) as store:
        game = store.create(CONFIG)
        game.apply(Deal())
        game.apply(game.state.random_roll(__import__("random").Random(1)))
    db = sqlite3.connect(tmp_path / "games.sqlite3")
    db.execute("DROP TRIGGER events_append_only_u")
    db.execute("UPDATE events SET payload=? WHERE n=2",
               (json.dumps({"type": "roll", "dice": []}),))
    db.commit()
    db.close()
    with GameStore(tmp_path) as store, pytest.raises(StoreError, match="action 2 no longer"):
        store.load(game.id)
    with GameStore(tmp_path) as store, pytest.raises(StoreError, match="no saved game"):
        store.load("nope")


CHILD = textwrap.dedent("""
    import random, sys
    from scorekeeper import Deal, GameConfig
    from scorekeeper.store import GameStore
    store = GameStore(sys.argv[1])
    game = store.create(GameConfig("royale", (("ben", "blue"), ("carla", "green")), {}, 5),
                        game_id="killme")
    rng = random.Random(5)
    while not game.state.is_over():
        s = game.state
        if s.phase == "deal":
            action = Deal()
        elif s.is_chance_node():
            action = s.random_roll(rng)
        else:
            action = rng.choice(s.legal_actions())
        game.apply(action)
        print("ack", game.state.seq, flush=True)
""")


def test_sigkill_mid_game_loses_nothing_acknowledged(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    acked = 0
    deadline = time.monotonic() + 60
    while acked < 25 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acked = int(line.split()[1])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert acked >= 25, "the child never got going"
    with GameStore(tmp_path) as store:
        game = store.load("killme")
        assert game.state.seq >= acked
        # Resume: the game goes on from the recovered state and its log stays consistent.
        rng = __import__("random").Random(1)
        while not game.state.is_over():
            s = game.state
            action = Deal() if s.phase == "deal" else (
                s.random_roll(rng) if s.is_chance_node() else rng.choice(s.legal_actions()))
            game.apply(action)
        final = game.state.fingerprint()
    with GameStore(tmp_path) as store:
        assert store.load("killme").state.fingerprint() == final
        assert store.latest_unfinished() is None


def test_replayed_prefix_matches_a_fresh_engine(tmp_path):
    with GameStore(tmp_path) as store:
        game = store.create(CONFIG)
        game.apply(Deal())
    fresh = GameState(CONFIG)
    fresh.apply_action(Deal())
    with GameStore(tmp_path) as store:
        assert store.load(game.id).state.fingerprint() == fresh.fingerprint()


def test_two_open_copies_cannot_interleave_their_moves(tmp_path):
    with GameStore(tmp_path) as store:
        game_id = store.create(CONFIG).id
        a = store.load(game_id)
        with GameStore(tmp_path) as other:
            b = other.load(game_id)
            a.apply(Deal())
            with pytest.raises(StoreError, match="changed elsewhere"):
                b.apply(Deal())
            assert b.state.seq == 0  # the refused action was taken back in memory too
        assert store.load(game_id).state.fingerprint() == a.state.fingerprint()


def test_duplicate_id_is_refused_and_resolved_options_are_saved(tmp_path):
    with GameStore(tmp_path) as store:
        store.create(CONFIG, game_id="g1")
        with pytest.raises(StoreError, match="already exists"):
            store.create(CONFIG, game_id="g1")
        store.create(GameConfig("royale", CONFIG.players, {}, 1), game_id="r1")
    db = sqlite3.connect(tmp_path / "games.sqlite3")
    (text,) = db.execute("SELECT config FROM games WHERE id='r1'").fetchone()
    # The default deck is written out, so a later change of the default cannot alter it.
    assert sum(json.loads(text)["options"]["deck"].values()) == 90


FULL = "the storage is full: nothing was saved; free some space and try again"


def test_a_full_store_refuses_the_write_changes_nothing_and_resumes_by_itself(tmp_path):
    played = play_random_game("classic", 3, 12, {"neutral_dice": True})
    with GameStore(tmp_path, max_pages=14) as store:
        assert store.max_pages == 14
        game = store.create(CONFIG)
        for action in played.history:
            before, events = game.state.fingerprint(), game.events
            try:
                game.apply(action)
            except StorageFull as exc:
                assert str(exc) == FULL and isinstance(exc, StoreError)
                break
        else:
            pytest.fail("the page limit was never reached")
        assert 0 < game.state.seq < len(played.history) - 1  # refused mid-game
        assert (game.state.fingerprint(), game.events) == (before, events)
        assert store.load(game.id).state.fingerprint() == before  # nothing half-written
        while True:  # an undo refused for lack of space changes nothing either
            before, events = game.state.fingerprint(), game.events
            try:
                game.undo()
            except StorageFull:
                break
        assert (game.state.fingerprint(), game.events) == (before, events)
        assert store.load(game.id).state.fingerprint() == before
        store.max_pages = None  # space freed: the same store object writes again
        assert store.max_pages is None
        for action in played.history[game.state.seq:]:
            game.apply(action)
        assert game.state.fingerprint() == played.fingerprint()
    with GameStore(tmp_path) as store:
        assert store.load(game.id).state.fingerprint() == played.fingerprint()
        assert [k for _, k in store.event_kinds(game.id)].count("undo") >= 1


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 16 MiB filesystem (tmpfs), so that writes fail with ENOSPC as on a full card.

    It has room for a whole game: the write-ahead log grows to about 4 MiB before SQLite
    starts it again.
    """
    mount = tmp_path / "disk"
    mount.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def _fill_up(folder) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        for chunk in (1 << 20, 4096, 512):
            try:
                while True:
                    os.write(fd, b"x" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_a_full_disk_refuses_the_write_and_the_same_store_goes_on_once_freed(tiny_disk):
    played = play_random_game("classic", 3, 12, {"neutral_dice": True})
    store = GameStore(tiny_disk / "data")
    try:
        game = store.create(CONFIG)
        for action in played.history[:20]:
            game.apply(action)
        _fill_up(tiny_disk)
        before = game.state.fingerprint()
        with pytest.raises(StorageFull, match="nothing was saved"):
            for action in played.history[20:]:
                game.apply(action)
                before = game.state.fingerprint()
        assert game.state.fingerprint() == before
        # A new store cannot be made either, and no empty file is left to pass for one.
        with pytest.raises(StorageFull):
            GameStore(tiny_disk / "other")
        assert list((tiny_disk / "other").iterdir()) == []
        (tiny_disk / "filler").unlink()
        for action in played.history[game.state.seq:]:
            game.apply(action)
        assert game.state.fingerprint() == played.fingerprint()
    finally:
        store.close()
    with GameStore(tiny_disk / "data") as again:
        assert again.load(game.id).state.fingerprint() == played.fingerprint()

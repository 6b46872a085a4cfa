"""Opening a damaged or emptied games.sqlite3: set aside, never deleted, games recovered.

Every test damages a real SQLite file the way a worn SD card or a cut copy would (random
bytes over pages, a broken header, a file cut short or emptied) and checks that opening
never fails, that the damaged file is kept byte for byte, and that each recovered game is
exactly its saved log replayed up to the first event that could not be read.
"""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

import scorekeeper.store as store_module
from scorekeeper import GameConfig, GameState, StoreError
from scorekeeper.simulate import play_random_game, players
from scorekeeper.store import GameStore, Recovery

PAGE = 4096
OPTIONS = {"neutral_dice": True}
ASIDE = re.compile(r"games\.sqlite3\.damaged-\d{8}T\d{6}Z$")

Log = list[tuple[str, object]]  # ("action", action) or ("undo", None), as saved


def _config(seed: int) -> GameConfig:
    return GameConfig("classic", tuple(players(3)), OPTIONS, seed=seed)


def _play(store: GameStore, seed: int, logs: dict[str, Log], upto: int | None = None) -> None:
    """Save game `g<seed>` (with a few undos in its log) and note what was saved in `logs`."""
    played = play_random_game("classic", 3, seed, OPTIONS)
    game = store.create(_config(seed), game_id=f"g{seed}")
    log: Log = []
    for i, action in enumerate(played.history[:upto]):
        game.apply(action)
        log.append(("action", action))
        if i % 37 == 5:
            game.undo()
            game.apply(action)
            log += [("undo", None), ("action", action)]
    logs[game.id] = log


def _replayed(game_id: str, log: Log) -> GameState:
    state = GameState(_config(int(game_id[1:])))
    for kind, action in log:
        if kind == "undo":
            state.undo()
        else:
            state.apply_action(action)
    return state


def _check_recovered(store: GameStore, logs: dict[str, Log]) -> int:
    """Each game in the store is its saved log cut at some event; returns the events kept."""
    total = 0
    for row in store.list_games():
        gid = row["game_id"]
        kinds = store.event_kinds(gid)
        kept = logs[gid][:len(kinds)]
        assert [k for _, k in kinds] == [k for k, _ in kept]
        assert [n for n, _ in kinds] == list(range(1, len(kinds) + 1))
        assert store.load(gid).state.fingerprint() == _replayed(gid, kept).fingerprint()
        total += len(kinds)
    return total


def _table_leaves(path: Path) -> list[int]:
    """0-based numbers of the table leaf pages after the schema's own (the events, here)."""
    data = path.read_bytes()
    return [p for p in range(7, len(data) // PAGE) if data[p * PAGE] == 0x0D]


def _overwrite(path: Path, pages: list[int], rng: random.Random, length: int = PAGE) -> None:
    with open(path, "r+b") as f:
        for p in pages:
            f.seek(p * PAGE)
            f.write(rng.randbytes(length))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Log], dict]:
    """A closed store with four finished games, their logs and their creation times."""
    folder = tmp_path_factory.mktemp("pristine")
    logs: dict[str, Log] = {}
    with GameStore(folder) as store:
        for seed in range(4):
            _play(store, seed, logs)
        created = {g["game_id"]: g["created"] for g in store.list_games()}
    return folder / GameStore.FILENAME, logs, created


def _copy(pristine_file: Path, folder: Path) -> Path:
    folder.mkdir()
    shutil.copy(pristine_file, folder / GameStore.FILENAME)
    return folder / GameStore.FILENAME


def test_damaged_pages_are_set_aside_and_every_readable_game_is_recovered(tmp_path, pristine):
    source, logs, created = pristine
    db = _copy(source, tmp_path / "data")
    leaves = _table_leaves(db)
    _overwrite(db, [leaves[len(leaves) // 4], leaves[len(leaves) // 2],
                    leaves[3 * len(leaves) // 4]], random.Random(3))
    damaged = db.read_bytes()
    with GameStore(db.parent) as store:
        r = store.recovery
        assert isinstance(r, Recovery)
        assert ASIDE.match(r.damaged_path.name) and r.damaged_path.parent == db.parent
        assert r.damaged_path.read_bytes() == damaged  # kept exactly as it was found
        assert (r.games_recovered, r.games_lost) == (4, 0)
        assert r.message == (f"games.sqlite3 was damaged: set aside as {r.damaged_path.name}; "
                             f"4 games recovered ({r.events_recovered} actions), the rest "
                             "could not be read")
        assert _check_recovered(store, logs) == r.events_recovered
        assert 0 < r.events_recovered < sum(map(len, logs.values()))
        assert {g["game_id"]: g["created"] for g in store.list_games()} == created
        # The recovered file is a normal store: a game goes on from where it was cut.
        game = store.load("g1")
        game.undo()
        after = game.state.fingerprint()
    with GameStore(db.parent) as store:
        assert store.recovery is None
        assert store.load("g1").state.fingerprint() == after
    assert sorted(p.name for p in db.parent.iterdir()
                  if not p.name.startswith(r.damaged_path.name)) == ["games.sqlite3"]


@pytest.mark.parametrize("length", [100, PAGE], ids=["header", "first page"])
def test_a_broken_header_loses_no_game(tmp_path, pristine, length):
    source, logs, created = pristine
    db = _copy(source, tmp_path / "data")
    _overwrite(db, [0], random.Random(length), length)
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        sqlite3.connect(db).execute("SELECT count(*) FROM events").fetchone()
    with GameStore(db.parent) as store:
        r = store.recovery
        total = sum(map(len, logs.values()))
        assert (r.games_recovered, r.events_recovered, r.games_lost) == (4, total, 0)
        assert r.message.endswith(f"; 4 games recovered in full ({total} actions), though "
                                  "parts of it could not be read")
        assert _check_recovered(store, logs) == total
        assert {g["game_id"]: g["created"] for g in store.list_games()} == created


def test_a_file_cut_by_a_few_bytes_is_damaged_though_sqlite_checks_pass(tmp_path, pristine):
    source, logs, _ = pristine
    db = _copy(source, tmp_path / "data")
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size - 8)  # the end of the last event's text
    probe = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    assert probe.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    probe.close()
    with GameStore(db.parent) as store:
        r = store.recovery
        assert r is not None and (r.games_recovered, r.games_lost) == (4, 0)
        assert _check_recovered(store, logs) == r.events_recovered


def _damage(db: Path, rng: random.Random, kind: int) -> None:
    size = db.stat().st_size
    if kind == 0:  # random bytes over three pages anywhere, the header and roots included
        _overwrite(db, rng.sample(range(size // PAGE), 3), rng)
    elif kind == 1:  # zeroed pages, as a failed flash block reads back
        with open(db, "r+b") as f:
            for p in rng.sample(range(size // PAGE), 4):
                f.seek(p * PAGE)
                f.write(bytes(PAGE))
    elif kind == 2:  # cut short at any byte (the header stays)
        with open(db, "r+b") as f:
            f.truncate(rng.randrange(PAGE, size))
    else:  # a few scattered bytes flipped
        data = bytearray(db.read_bytes())
        for at in rng.sample(range(len(data)), 40):
            data[at] ^= 0xFF
        db.write_bytes(bytes(data))


@pytest.mark.parametrize("seed", range(16))
def test_no_damage_stops_opening_and_what_is_recovered_replays(tmp_path, pristine, seed):
    source, logs, _ = pristine
    db = _copy(source, tmp_path / "data")
    rng = random.Random(seed)
    _damage(db, rng, seed % 4)
    with GameStore(db.parent) as store:
        r = store.recovery
        assert r is not None or seed % 4 == 3  # flipped bytes may miss every page in use
        if r is not None:
            assert _check_recovered(store, logs) == r.events_recovered
            assert r.message.startswith(f"games.sqlite3 was damaged: set aside as "
                                        f"{r.damaged_path.name}; ")
        else:
            _check_recovered(store, logs)
        _play(store, 9, {}, upto=10)  # and the store takes new games
    with GameStore(db.parent) as store:
        assert store.recovery is None and store.load("g9").state.seq == 10


def test_a_write_ahead_log_moves_aside_with_its_file_and_its_games_are_kept(tmp_path):
    live, copy = tmp_path / "live", tmp_path / "copy"
    logs: dict[str, Log] = {}
    with GameStore(live) as store:
        _play(store, 0, logs)
    with GameStore(live) as store:  # open, as a running table is: g1 is in the log only
        _play(store, 1, logs, upto=60)
        assert (live / "games.sqlite3-wal").stat().st_size > 0
        shutil.copytree(live, copy)
    db = copy / GameStore.FILENAME
    wal = (copy / "games.sqlite3-wal").read_bytes()
    leaves = _table_leaves(db)
    _overwrite(db, leaves[2:4], random.Random(1))
    with GameStore(copy) as store:
        r = store.recovery
        assert r.games_recovered == 2
        assert Path(f"{r.damaged_path}-wal").read_bytes() == wal  # SQLite still pairs them
        assert Path(f"{r.damaged_path}-shm").exists()
        assert _check_recovered(store, logs) == r.events_recovered
        assert len(store.event_kinds("g1")) == len(logs["g1"])


def test_an_empty_file_is_set_aside_and_said_to_have_lost_its_games(tmp_path):
    db = tmp_path / GameStore.FILENAME
    db.write_bytes(b"")
    with GameStore(tmp_path) as store:
        r = store.recovery
        assert r.damaged_path == tmp_path / r.damaged_path.name and ASIDE.match(r.damaged_path.name)
        assert r.damaged_path.stat().st_size == 0
        assert r.message == ("games.sqlite3 was empty (0 bytes): its saved games are lost; "
                             f"set aside as {r.damaged_path.name}")
        assert (r.games_recovered, r.events_recovered, r.games_lost) == (0, 0, None)
        assert store.list_games() == []
        _play(store, 2, {}, upto=5)
    with GameStore(tmp_path) as store:
        assert store.recovery is None and store.load("g2").state.seq == 5


def test_an_emptied_file_gets_back_the_games_in_its_write_ahead_log(tmp_path):
    live, copy = tmp_path / "live", tmp_path / "copy"
    logs: dict[str, Log] = {}
    with GameStore(live) as store:
        _play(store, 0, logs, upto=80)
        _play(store, 1, logs, upto=40)
        shutil.copytree(live, copy)
    (copy / GameStore.FILENAME).write_bytes(b"")
    with GameStore(copy) as store:
        r = store.recovery
        total = sum(map(len, logs.values()))
        assert (r.games_recovered, r.events_recovered, r.games_lost) == (2, total, 0)
        assert r.message == (f"games.sqlite3 was empty (0 bytes): set aside as "
                             f"{r.damaged_path.name}; 2 games recovered in full from its "
                             f"write-ahead log ({total} actions), though parts of it could "
                             "not be read")
        assert _check_recovered(store, logs) == total


def test_a_first_start_is_no_recovery(tmp_path):
    with GameStore(tmp_path / "new") as store:
        assert store.recovery is None and store.list_games() == []
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["games.sqlite3"]


def test_a_set_aside_name_never_replaces_an_older_one(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "_stamp", lambda: "20261202T013000Z")
    older = tmp_path / "games.sqlite3.damaged-20261202T013000Z"
    older.write_bytes(b"an older damaged file")
    for expected in ("-2", "-3"):
        (tmp_path / GameStore.FILENAME).write_bytes(b"")
        with GameStore(tmp_path) as store:
            assert store.recovery.damaged_path == Path(f"{older}{expected}")
    assert older.read_bytes() == b"an older damaged file"


def test_a_foreign_file_is_refused_untouched(tmp_path):
    """Not a database at all (no header, not whole pages): someone else's file, not damage.
    (A newer app's store is refused untouched too: tests/test_store.py.)"""
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping list\n" * 30)
    with pytest.raises(StoreError, match="not a readable game store"):
        GameStore(notes)
    assert notes.read_text() == "shopping list\n" * 30
    assert not [p for p in tmp_path.iterdir() if "damaged" in p.name]


def test_openers_at_the_same_time_recover_once(tmp_path, pristine):
    source, _logs, _ = pristine
    db = _copy(source, tmp_path / "data")
    _overwrite(db, _table_leaves(db)[5:6], random.Random(5))
    start = threading.Barrier(4)
    stores: list[GameStore] = []

    def open_one() -> None:
        start.wait()
        stores.append(GameStore(db.parent))

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len(stores) == 4
        assert sum(s.recovery is not None for s in stores) == 1
        assert len([p for p in db.parent.iterdir() if ASIDE.match(p.name)]) == 1
        listed = [[g["game_id"] for g in s.list_games()] for s in stores]
        assert all(names == listed[0] for names in listed) and len(listed[0]) == 4
        stores[0].load("g0").undo()  # all four share the one recovered file
        assert all(s.event_kinds("g0") == stores[0].event_kinds("g0") for s in stores)
    finally:
        for s in stores:
            s.close()

"""Games kept in SQLite as append-only event logs, so a pulled power cable loses nothing.

A game row holds its config; every action (and every undo) is one event row, committed
before the caller is told it happened. Loading replays the log through the rules engine,
which gives back the identical state because the engine is deterministic under its seed.
WAL with `synchronous=FULL` makes each commit durable on its own, not just consistent.

A table must keep running on a worn SD card, so opening checks the file. A damaged or
emptied one is never deleted and never makes opening fail: it is set aside under a dated
name, every game that can still be read is replayed into a fresh file through the normal
writes, and `GameStore.recovery` says what happened in one sentence for a banner. A full
disk refuses the write with `StorageFull`, changes nothing, and the same store writes again
as soon as there is space.
"""

from __future__ import annotations

import errno
import itertools
import json
import logging
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .actions import Action, BadAction, action_from_dict
from .errors import ConfigError, RulesError, StoreError
from .salvage import MAGIC, PAGE_SIZES, WAL_MAGIC, Salvage, file_size, salvage, sqlite_uri
from .state import GameConfig, GameState

try:
    import fcntl
except ImportError:  # Windows: openers there are not kept from recovering at the same time
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("vegas_table.store")

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    id       TEXT PRIMARY KEY,
    created  TEXT NOT NULL,
    updated  TEXT NOT NULL,
    config   TEXT NOT NULL,
    seq      INTEGER NOT NULL DEFAULT 0,
    round    INTEGER NOT NULL DEFAULT 1,
    over     INTEGER NOT NULL DEFAULT 0,
    summary  TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS events (
    game_id  TEXT NOT NULL REFERENCES games(id),
    n        INTEGER NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('action', 'undo')),
    payload  TEXT NOT NULL,
    created  TEXT NOT NULL,
    PRIMARY KEY (game_id, n)
);
CREATE TRIGGER IF NOT EXISTS events_append_only_u BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_d BEFORE DELETE ON events
WHEN EXISTS (SELECT 1 FROM games WHERE id = OLD.game_id)
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
"""
# A file written before a whole game could be deleted refuses every delete of an event.
_OLD_DELETE_TRIGGER = "BEFORE DELETE ON events\nBEGIN"

# Every table, read row by row into Python when the file is checked at open: besides pages
# SQLite cannot read, that finds text that is no longer UTF-8, which SQLite never checks.
_TABLES = ("meta", "games", "events")
_JSON_CHECKS = {
    "games": "SELECT count(*) FROM games WHERE NOT (json_valid(config) AND json_valid(summary))",
    "events": "SELECT count(*) FROM events WHERE NOT json_valid(payload)",
}
_COMPANIONS = ("-wal", "-shm", "-journal")
_FULL_MESSAGE = "the storage is full: nothing was saved; free some space and try again"
# An I/O error with less free space than this is taken for a full disk: SQLite reports a
# failed write of its shared-memory index, say, as an I/O error and not as SQLITE_FULL.
_LOW_SPACE = 64 * 1024


class StorageFull(StoreError):
    """The disk (or the store's page limit) is full: the write was refused, nothing changed.

    The store stays usable: the next write, once space has been freed, goes through.
    """

    def __init__(self, message: str = _FULL_MESSAGE) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class Recovery:
    """What opening a damaged or empty file did, for the log and a banner on the table.

    `games_lost` counts the games seen in the file (a row or an event of theirs) that could
    not be recovered; more may be lost when whole parts of the file were unreadable. It is
    None when nothing at all could be read (an empty file).
    """

    damaged_path: Path
    games_recovered: int
    events_recovered: int
    games_lost: int | None
    message: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _stamp() -> str:
    """The UTC time that names a set-aside file, so a directory listing sorts by age."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _summary(state: GameState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "edition": state.edition.key,
        "players": [
            {"name": p.name, "colour": p.colour, "money": state.money(p.name)}
            for p in state.players
        ],
        "to_move": state.player_to_act(),
    }
    if state.is_over():
        out["winners"] = state.results()["winners"]
    return out


# --- telling damage, a full disk and other failures apart ------------------------------------
def _is_damage(exc: Exception) -> bool:
    """SQLite found the file's content broken (not locked, not unreadable for lack of rights)."""
    text = str(exc)
    if isinstance(exc, UnicodeDecodeError) or text.startswith("Could not decode to UTF-8"):
        return True  # text SQLite stored as UTF-8 that is not any more (the module says so)
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    return "malformed" in text or "not a database" in text


def _free_bytes(folder: Path) -> int | None:
    """Bytes this process may still write in `folder` (0 if no inode is left), None if unknown."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs on Windows
        return None
    root = os.geteuid() == 0  # root may use the blocks kept in reserve
    if st.f_files and (st.f_ffree if root else st.f_favail) == 0:
        return 0
    return (st.f_bfree if root else st.f_bavail) * st.f_frsize


def _is_full(exc: BaseException, folder: Path) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if not isinstance(exc, sqlite3.Error):
        return False
    code = getattr(exc, "sqlite_errorcode", None) or 0
    if code & 0xFF == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc):
        return True
    if code & 0xFF in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN):
        free = _free_bytes(folder)
        return free is not None and free < _LOW_SPACE
    return False


def _newer(version: object) -> bool:
    try:
        return int(str(version)) > SCHEMA_VERSION
    except ValueError:
        return False


def _looks_like_sqlite(path: Path) -> bool:
    """Whether a file SQLite refuses was one of its databases: damage, not a stranger.

    Only a database is set aside and replaced: its header says so, or it is a whole number
    of 512-byte blocks (SQLite writes whole pages, and the header may be what got broken),
    or a write-ahead log lies next to it. Anything else, like a text file given as the path
    by mistake, is refused untouched.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(16)
        size = path.stat().st_size
    except OSError:
        return False
    if head == MAGIC or (size and size % 512 == 0):
        return True
    try:
        with open(f"{path}-wal", "rb") as f:
            return f.read(4) in WAL_MAGIC
    except OSError:
        return False


def _cut_short(head: bytes, size: int, logged: bool) -> bool:
    """Whether a file whose header reads is shorter than that header says (or not whole pages).

    SQLite reads the missing end as zeros and its checks can pass, while the text in the
    rows there is lost. With a write-ahead log in use (`logged`) the size is not compared:
    a checkpoint cut off by a crash leaves the header ahead of the file, and the log makes
    up for it.
    """
    if len(head) < 100 or head[:16] != MAGIC:
        return False
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size not in PAGE_SIZES:
        return False  # SQLite refuses such a header itself
    pages = int.from_bytes(head[28:32], "big")
    header_current = head[24:28] == head[92:96]  # else the size field is not kept up to date
    return size % page_size != 0 or (
        header_current and not logged and pages * page_size > size)


def _inspect(path: Path) -> str:
    """"missing", "empty", "damaged" or "ok" (also for a newer schema, refused later as such).

    Read-only, so checking never changes the file: a damaged file is set aside as it was.
    Besides SQLite's own check of every page, every row is read, and the saved JSON must
    still parse, which catches text garbled inside pages whose structure is intact.
    """
    try:
        size = path.stat().st_size
        if size == 0:
            return "empty"
        with open(path, "rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        return "missing"
    db = sqlite3.connect(sqlite_uri(path, "ro"), uri=True)
    try:
        tables = {name for (name,) in db.execute(
            "SELECT name FROM sqlite_schema WHERE type='table'")}
        if "meta" in tables:
            row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is not None and _newer(row[0]):
                return "ok"
        if _cut_short(head, size, file_size(Path(f"{path}-wal")) > 0):
            return "damaged"
        if db.execute("PRAGMA quick_check").fetchall() != [("ok",)]:
            return "damaged"
        for table in _TABLES:
            if table in tables:
                for _ in db.execute(f"SELECT * FROM {table}"):
                    pass
        for table, query in _JSON_CHECKS.items():
            if table in tables:
                try:
                    (bad,) = db.execute(query).fetchone()
                except sqlite3.OperationalError as exc:
                    if "no such function" in str(exc):
                        break  # an SQLite built without JSON: this check is skipped
                    raise
                if bad:
                    return "damaged"
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if _is_damage(exc) and _looks_like_sqlite(path):
            return "damaged"
        raise
    finally:
        db.close()
    return "ok"


# --- files: moved, never replaced ------------------------------------------------------------
def _move_new(src: Path, dst: Path) -> None:
    """Rename `src` to `dst`, refusing (FileExistsError) if `dst` exists: rename would replace."""
    try:
        os.link(src, dst)
    except FileExistsError:
        raise
    except OSError:  # a filesystem without hard links (FAT): check, then rename
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, "file exists", str(dst)) from None
        os.rename(src, dst)
        return
    os.unlink(src)


def _remove_with_companions(path: Path) -> None:
    for suffix in ("", *_COMPANIONS):
        with suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def _fsync(path: Path) -> None:
    """Flush a file or a folder (so a rename in it survives a power cut), where supported."""
    fd = os.open(path, os.O_RDONLY)
    try:
        with suppress(OSError):  # some filesystems refuse fsync on a folder
            os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """One opener at a time may create, set aside or replace the file (other processes too)."""
    if fcntl is None:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


class GameStore:
    """One SQLite file holding every game of a table.

    `recovery` is None after a normal open; after the file was found damaged or empty it
    says what was set aside and what was recovered. `max_pages` caps the file's size in
    pages (4 KiB each): a limit for tests and for small disks, hit as `StorageFull`.
    """

    FILENAME = "games.sqlite3"

    def __init__(self, path: str | Path, *, max_pages: int | None = None) -> None:
        path = Path(path)
        self.recovery: Recovery | None = None
        self._max_pages = max_pages
        self._lock = threading.RLock()
        try:
            if path.is_dir() or path.suffix == "":
                path.mkdir(parents=True, exist_ok=True)
                path = path / self.FILENAME
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.path = path
            self._open()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if _is_full(exc, path.parent):
                raise StorageFull() from exc
            raise StoreError(f"{path}: not a readable game store ({exc})") from None
        except OSError as exc:
            if _is_full(exc, path.parent):
                raise StorageFull() from exc
            raise

    # --- opening, checking, recovering ---------------------------------------------------------
    def _open(self) -> None:
        """Check the file, deal with a missing, empty or damaged one, then connect.

        Creating and replacing the file happen under a lock on its folder and are checked
        again once the lock is held, so two openers at once (the server and the CLI) neither
        set aside the file the other has just made nor build two replacements.
        """
        suspect = False  # connecting hit damage that the check had not seen
        for _ in range(3):
            state = _inspect(self.path)
            if state != "ok" or suspect:
                with _folder_lock(self.path.parent):
                    state = _inspect(self.path)
                    if suspect and state == "ok":
                        state = "damaged"
                    if state == "missing":
                        self._create()
                    elif state != "ok":
                        self.recovery = self._recover(state)
            try:
                self._connect()
                return
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                if not self.path.exists():
                    continue  # set aside by another opener since the check: look again
                if suspect or not (_is_damage(exc) and _looks_like_sqlite(self.path)):
                    raise
                suspect = True
        raise StoreError(f"{self.path} kept changing while it was being opened; try again")

    def _connect(self) -> None:
        """Open the existing file for good (never creating it: only `_create` does that)."""
        db = sqlite3.connect(sqlite_uri(self.path, "rw"), uri=True, check_same_thread=False,
                             isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA busy_timeout=5000")
            (self._page_limit,) = db.execute("PRAGMA max_page_count").fetchone()
            if self._max_pages is not None:
                db.execute(f"PRAGMA max_page_count={int(self._max_pages)}")
            self._db = db
            self._migrate()
        except BaseException:
            db.close()
            raise

    @classmethod
    def _scratch(cls, path: Path) -> GameStore:
        """A store on a new file, written fast and without fsyncs: a replacement being built.

        It only becomes the real file once complete, closed and flushed, so a crash while it
        is built leaves a stray temporary file (removed next time), never a half-made store.
        """
        store = cls.__new__(cls)
        store.path, store.recovery, store._max_pages = path, None, None
        store._lock = threading.RLock()
        store._db = sqlite3.connect(sqlite_uri(path, "rwc"), uri=True, check_same_thread=False,
                                    isolation_level=None)
        try:
            store._db.execute("PRAGMA journal_mode=MEMORY")
            store._db.execute("PRAGMA synchronous=OFF")
            store._db.execute("PRAGMA foreign_keys=ON")
            store._migrate()
        except BaseException:
            store._db.close()
            raise
        return store

    def _build(self, found: Salvage | None) -> tuple[Path, tuple[int, int, int, bool]]:
        """A complete new file next to the store holding what `found` recovers."""
        temp = self.path.with_name(self.path.name + ".new")
        _remove_with_companions(temp)  # left by a crash while building: ours, incomplete
        try:
            fresh = GameStore._scratch(temp)
            try:
                counts = (0, 0, 0, True) if found is None else _restore(fresh, found)
            finally:
                fresh.close()
            _fsync(temp)
        except BaseException:
            _remove_with_companions(temp)
            raise
        return temp, counts

    def _create(self) -> None:
        """A first start: a new file with the schema, put in place whole (never 0 bytes)."""
        temp, _ = self._build(None)
        try:
            _move_new(temp, self.path)
        except FileExistsError:  # made meanwhile by an opener that does not lock: use it
            _remove_with_companions(temp)
        _fsync(self.path.parent)

    def _set_aside(self) -> Path:
        """Move the file and its companions to one new dated name, never over another file."""
        stamp = f"{self.path.name}.damaged-{_stamp()}"
        for i in itertools.count(1):
            aside = self.path.with_name(stamp if i == 1 else f"{stamp}-{i}")
            if any(os.path.lexists(f"{aside}{s}") for s in ("", *_COMPANIONS)):
                continue
            try:
                _move_new(self.path, aside)
            except FileExistsError:
                continue
            for suffix in _COMPANIONS:
                # Named so that SQLite still pairs the log with its file when it is opened.
                if os.path.lexists(f"{self.path}{suffix}"):
                    _move_new(Path(f"{self.path}{suffix}"), Path(f"{aside}{suffix}"))
            return aside
        raise AssertionError("unreachable")

    def _recover(self, state: str) -> Recovery:
        """Replace a damaged or empty file by a fresh one with every game still readable.

        The replacement is built in full before anything is moved, so a failure on the way
        (the disk is full) leaves the damaged file where it was, to be tried again next time.
        """
        found = salvage(self.path, sql=state == "damaged")
        temp, (games, events, lost, whole) = self._build(found)
        try:
            aside = self._set_aside()
        except BaseException:
            _remove_with_companions(temp)
            raise
        _move_new(temp, self.path)
        _fsync(self.path.parent)
        name, seen = self.path.name, games + lost
        if state == "empty" and not seen:
            message = (f"{name} was empty (0 bytes): its saved games are lost; set aside as "
                       f"{aside.name}")
            recovery = Recovery(aside, 0, 0, None, message)
        else:
            source = " from its write-ahead log" if state == "empty" else ""
            full = " in full" if whole else ""
            got = f"{_count(games, 'game')} recovered{full}{source} ({_count(events, 'action')})"
            if games == 0:
                outcome = ("it held no games" if whole and found.complete
                           else "none of its games could be read")
            elif whole and found.complete:
                outcome = got
            elif whole:
                outcome = f"{got}, though parts of it could not be read"
            else:
                outcome = f"{got}, the rest could not be read"
            what = "was empty (0 bytes)" if state == "empty" else "was damaged"
            message = f"{name} {what}: set aside as {aside.name}; {outcome}"
            known = seen or found.complete  # nothing read at all: the count is unknown
            recovery = Recovery(aside, games, events, lost if known else None, message)
        log.warning("%s", message)
        return recovery

    def _migrate(self) -> None:
        with self._lock:
            row = self._db.execute("SELECT sql FROM sqlite_schema WHERE type='trigger' AND "
                                   "name='events_append_only_d'").fetchone()
            if row is not None and _OLD_DELETE_TRIGGER in str(row[0]):
                self._db.execute("DROP TRIGGER events_append_only_d")
            self._db.executescript(_SCHEMA)  # idempotent: every statement is IF NOT EXISTS
        with self._tx() as db:
            row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} was written by a newer Vegas Table (schema {row[0]}, this "
                    f"version reads up to {SCHEMA_VERSION}); update the app"
                )

    # --- writing -----------------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a full disk becomes `StorageFull` with nothing written."""
        with self._lock:
            self._settle()
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._settle()
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._settle()
                if _is_full(exc, self.path.parent):
                    raise StorageFull() from exc
                raise

    def _settle(self) -> None:
        """End a transaction that a failed statement left open, so the connection stays usable.

        After a failed COMMIT SQLite may have rolled back already or not, and ROLLBACK can
        fail too (the disk still full): then the next write tries again before its BEGIN.
        """
        if self._db.in_transaction:
            with suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")

    @property
    def max_pages(self) -> int | None:
        """The cap on the file's size in pages, None for SQLite's own limit."""
        return self._max_pages

    @max_pages.setter
    def max_pages(self, value: int | None) -> None:
        """Change the cap at once: raising it lets writes refused as `StorageFull` go through.

        SQLite never sets it below the file's current size.
        """
        with self._lock:
            limit = self._page_limit if value is None else int(value)
            self._db.execute(f"PRAGMA max_page_count={limit}")
            self._max_pages = value

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> GameStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- games -------------------------------------------------------------------------
    def create(self, config: GameConfig, game_id: str | None = None) -> StoredGame:
        """Check the config by building the game, then save it; returns the live game.

        What is saved is the config as JSON with the edition's options resolved (defaults
        filled in), and it must rebuild the same game: a later default change or a value
        that JSON cannot carry must not make a saved game unreadable.
        """
        return self._create_game(config, game_id, None)

    def _create_game(self, config: GameConfig, game_id: str | None,
                     when: str | None) -> StoredGame:
        """`create`, with the creation time given when a recovered game keeps its own."""
        state = GameState(config)
        resolved = GameConfig(config.edition, state.players, state.edition.options,
                              config.seed, config.start_player)
        try:
            text = json.dumps(resolved.to_dict())
            rebuilt = GameState(GameConfig.from_dict(json.loads(text)))
        except (TypeError, ValueError, RulesError) as exc:
            raise ConfigError(f"this game setup cannot be saved: {exc}") from None
        if rebuilt.fingerprint() != state.fingerprint():
            raise ConfigError("this game setup does not survive saving (options changed)")
        game_id = game_id or uuid.uuid4().hex[:12]
        now = when or _now()
        try:
            with self._tx() as db:
                db.execute(
                    "INSERT INTO games (id, created, updated, config, summary) "
                    "VALUES (?,?,?,?,?)",
                    (game_id, now, now, text, json.dumps(_summary(rebuilt))),
                )
        except sqlite3.IntegrityError:
            raise StoreError(f"a game with id {game_id!r} already exists") from None
        return StoredGame(self, game_id, rebuilt, 0)

    def load(self, game_id: str) -> StoredGame:
        with self._lock:
            row = self._db.execute("SELECT config FROM games WHERE id=?", (game_id,)).fetchone()
            if row is None:
                raise StoreError(f"no saved game {game_id!r} in {self.path}")
            events = self._db.execute(
                "SELECT n, kind, payload FROM events WHERE game_id=? ORDER BY n", (game_id,)
            ).fetchall()
        try:
            config = GameConfig.from_dict(json.loads(row[0]))
            state = GameState(config)
        except (ValueError, RulesError) as exc:
            raise StoreError(f"saved game {game_id}: its setup cannot be read ({exc})") from None
        actions: list[Action] = []
        for n, kind, payload in events:
            if kind == "undo":
                if not actions:
                    raise StoreError(f"saved game {game_id}: event {n} undoes nothing")
                actions.pop()
                continue
            try:
                actions.append(action_from_dict(json.loads(payload)))
            except (ValueError, RulesError) as exc:
                raise StoreError(f"saved game {game_id}: event {n} is unreadable ({exc})") from None
        for i, action in enumerate(actions, 1):
            try:
                state.apply_action(action)
            except RulesError as exc:
                raise StoreError(
                    f"saved game {game_id}: action {i} no longer applies ({exc})"
                ) from None
        return StoredGame(self, game_id, state, len(events))

    def list_games(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, created, updated, seq, round, over, summary FROM games "
                "ORDER BY updated DESC, created DESC"
            ).fetchall()
        out = []
        for gid, created, updated, seq, rnd, over, summary in rows:
            out.append({"game_id": gid, "created": created, "updated": updated, "seq": seq,
                        "round": rnd, "over": bool(over), **json.loads(summary)})
        return out

    def delete_game(self, game_id: str) -> None:
        """Delete a saved game and its events, all at once (the host's choice on /table).

        Single events stay append-only: the game's row goes first, and only a game that is
        gone may lose its events. StoreError if there is no such game.
        """
        with self._tx() as db:
            db.execute("PRAGMA defer_foreign_keys=ON")  # the events are gone by the commit
            if db.execute("DELETE FROM games WHERE id=?", (game_id,)).rowcount == 0:
                raise StoreError(f"no saved game {game_id!r} in {self.path}")
            db.execute("DELETE FROM events WHERE game_id=?", (game_id,))

    def event_kinds(self, game_id: str) -> list[tuple[int, str]]:
        """(number, kind) of every event logged for the game, in order, undos included.

        Photos of rolls are named after event numbers, so a history page needs the log's own
        numbering, not only the actions that survive undo.
        """
        with self._lock:
            return [(int(n), str(kind)) for n, kind in self._db.execute(
                "SELECT n, kind FROM events WHERE game_id=? ORDER BY n", (game_id,))]

    def latest_unfinished(self) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT id FROM games WHERE over=0 ORDER BY updated DESC, created DESC LIMIT 1"
            ).fetchone()
        return row[0] if row else None

    def _append(self, game_id: str, kind: str, payload: dict, state: GameState,
                known: int, when: str | None = None) -> None:
        """Append event number `known + 1`, refusing if another writer got there first.

        `when` keeps the time of an event replayed from a damaged file.
        """
        now = when or _now()
        with self._tx() as db:
            (last,) = db.execute(
                "SELECT COALESCE(MAX(n), 0) FROM events WHERE game_id=?", (game_id,)
            ).fetchone()
            if last != known:
                raise StoreError(
                    f"game {game_id} was changed elsewhere (another window or process) since "
                    f"it was loaded; reload it"
                )
            n = known + 1
            db.execute(
                "INSERT INTO events (game_id, n, kind, payload, created) VALUES (?,?,?,?,?)",
                (game_id, n, kind, json.dumps(payload), now),
            )
            db.execute(
                "UPDATE games SET updated=?, seq=?, round=?, over=?, summary=? WHERE id=?",
                (now, state.seq, state.round, int(state.is_over()),
                 json.dumps(_summary(state)), game_id),
            )


class StoredGame:
    """A game bound to its log: `apply` and `undo` return only once the event is on disk."""

    def __init__(self, store: GameStore, game_id: str, state: GameState, events: int) -> None:
        self.store = store
        self.id = game_id
        self.state = state
        self.events = events

    def apply(self, action: Action) -> GameState:
        """Apply (the rules refuse bad actions untouched), then commit; roll back if that fails."""
        return self._apply(action, None)

    def undo(self) -> Action:
        return self._undo(None)

    def _apply(self, action: Action, when: str | None) -> GameState:
        with self.store._lock:
            self.state.apply_action(action)
            try:
                stored = self.state.history[-1].to_dict()
                if action_from_dict(stored) != self.state.history[-1]:
                    raise BadAction(f"{stored} does not survive saving")
                self.store._append(self.id, "action", stored, self.state, self.events, when)
            except BaseException:
                self.state.undo()
                raise
            self.events += 1
        return self.state

    def _undo(self, when: str | None) -> Action:
        with self.store._lock:
            action = self.state.undo()
            try:
                self.store._append(self.id, "undo", {"undoes": action.to_dict()}, self.state,
                                   self.events, when)
            except BaseException:
                self.state.apply_action(action)
                raise
            self.events += 1
        return action


def _restore(fresh: GameStore, found: Salvage) -> tuple[int, int, int, bool]:
    """Replay every game of `found` into `fresh` through the normal writes.

    A game needs its config; its events are replayed in order up to the first that is
    missing, unreadable or no longer applies, so what is saved is exactly what replays.
    A game is whole when its row's last update is its last event and its action count
    matches. Returns (games recovered, events recovered, games lost, all known games whole).
    """
    logs: dict[str, list[tuple[int, str, str, str | None]]] = {}
    for (gid, n), (kind, payload, when) in found.events.items():
        logs.setdefault(gid, []).append((n, kind, payload, when))
    known = set(found.games) | set(logs)
    games = events = 0
    whole = True
    for gid, (created, updated, seq, text) in sorted(
            found.games.items(), key=lambda g: (g[1][0] or "", g[0])):
        try:  # anything read from a damaged file may be nonsense of any kind
            config = GameConfig.from_dict(json.loads(text))
            GameState(config)
        except Exception:
            continue
        try:
            game = fresh._create_game(config, gid, created)
        except RulesError:
            continue
        rows = sorted(logs.get(gid, []))
        used, last = 0, created
        for expected, (n, kind, payload, when) in enumerate(rows, 1):
            if n != expected:
                break
            try:
                action = None if kind == "undo" else action_from_dict(json.loads(payload))
            except Exception:
                break
            try:
                if action is None:
                    game._undo(when)
                else:
                    game._apply(action, when)
            except RulesError:
                break
            used, last = used + 1, when
        # The times are only compared when both read: a garbled time loses no action.
        whole = (whole and used == len(rows) and game.state.seq == seq
                 and (last is None or updated is None or last == updated))
        games += 1
        events += used
    lost = len(known) - games
    return games, events, lost, whole and lost == 0

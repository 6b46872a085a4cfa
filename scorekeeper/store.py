"""Games kept in SQLite as append-only event logs, so a pulled power cable loses nothing.

A game row holds its config; every action (and every undo) is one event row, committed
before the caller is told it happened. Loading replays the log through the rules engine,
which gives back the identical state because the engine is deterministic under its seed.
WAL with `synchronous=FULL` makes each commit durable on its own, not just consistent.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .actions import Action, BadAction, action_from_dict
from .errors import ConfigError, RulesError, StoreError
from .state import GameConfig, GameState

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
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _summary(state: GameState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "edition": state.edition.key,
        "players": [
            {"name": p.name, "colour": p.colour, "money": state.money(p.name)}
            for p in state.players
        ],
        "to_move": state.current_player(),
    }
    if state.is_over():
        out["winners"] = state.results()["winners"]
    return out


class GameStore:
    """One SQLite file holding every game of a table."""

    FILENAME = "games.sqlite3"

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if path.is_dir() or path.suffix == "":
            path.mkdir(parents=True, exist_ok=True)
            path = path / self.FILENAME
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a readable game store ({exc})") from None

    def _migrate(self) -> None:
        with self._lock:
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

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

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
        now = _now()
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
                known: int) -> None:
        """Append event number `known + 1`, refusing if another writer got there first."""
        now = _now()
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
        with self.store._lock:
            self.state.apply_action(action)
            try:
                stored = self.state.history[-1].to_dict()
                if action_from_dict(stored) != self.state.history[-1]:
                    raise BadAction(f"{stored} does not survive saving")
                self.store._append(self.id, "action", stored, self.state, self.events)
            except BaseException:
                self.state.undo()
                raise
            self.events += 1
        return self.state

    def undo(self) -> Action:
        with self.store._lock:
            action = self.state.undo()
            try:
                self.store._append(self.id, "undo", {"undoes": action.to_dict()}, self.state,
                                   self.events)
            except BaseException:
                self.state.apply_action(action)
                raise
            self.events += 1
        return action

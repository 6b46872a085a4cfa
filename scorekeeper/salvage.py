"""Reading what is left of a damaged game store: every game row and event that still reads.

SQLite is asked first, row by row, stepping over pages it cannot read; what it cannot walk to
(a broken header, schema page or inner page hides every row below it) is read straight from
the leaf pages of the file, with the committed pages of its write-ahead log laid over them.
Nothing here writes: `scorekeeper.store` replays what is found into a fresh file.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

# What reading a damaged file can raise: SQLite's errors, and text (or an error message
# quoting the file) that is not UTF-8 any more.
READ_ERRORS = (sqlite3.Error, UnicodeDecodeError)
MAGIC = b"SQLite format 3\x00"
WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)


def sqlite_uri(path: Path, mode: str) -> str:
    return f"{path.resolve().as_uri()}?mode={mode}"


# --- salvage: every row that can still be read -----------------------------------------------
@dataclass
class Salvage:
    # game id: (created, updated, seq, config) of its newest copy found
    games: dict[str, tuple[str | None, str | None, int, str]] = field(default_factory=dict)
    # (game id, n): (kind, payload, created)
    events: dict[tuple[str, int], tuple[str, str, str | None]] = field(default_factory=dict)
    complete: bool = True  # every page was read; False if any part of the file was not

    def add(self, values: tuple | list) -> None:
        """Keep a row that has the shape of a game or an event.

        Of an event the first copy wins (events never change); of a game the newest, as its
        `updated` and `seq` tell whether the log that follows is whole.
        """
        if (len(values) == 8 and all(type(v) is str for v in values[:4])
                and type(values[4]) is int):
            gid, created, updated, config, seq = values[:5]
            old = self.games.get(gid)
            if old is None or (updated or "") > (old[1] or ""):
                self.games[gid] = (_timestamp(created), _timestamp(updated), seq, config)
        elif (len(values) == 5 and type(values[0]) is str and type(values[1]) is int
              and values[2] in ("action", "undo") and type(values[3]) is str):
            gid, n, kind, payload, created = values
            self.events.setdefault((gid, n), (kind, payload, _timestamp(created)))


def _timestamp(value: object) -> str | None:
    """A saved time kept as it was, if it still reads as one."""
    if type(value) is not str:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def _scan(db: sqlite3.Connection, table: str, columns: str, found: Salvage,
          most: int) -> Iterator[tuple]:
    """Every readable row of `table` in rowid order, stepping over pages that do not read.

    A damaged page breaks a plain scan at the first row it holds, so after an error the rows
    are looked up one rowid at a time (rows are never deleted here, so rowids are dense) until
    one reads, and the scan goes on from there. `most` bounds the rowids tried, as the
    largest rowid may itself be read from a damaged page.
    """
    scan = f"SELECT rowid, {columns} FROM {table} WHERE rowid > ? ORDER BY rowid"
    one = f"SELECT rowid, {columns} FROM {table} WHERE rowid = ?"
    try:
        (last,) = db.execute(f"SELECT max(rowid) FROM {table}").fetchone()
    except READ_ERRORS:
        last = None
    if type(last) is not int:
        last = None
    after = 0
    while True:
        try:
            for row in db.execute(scan, (after,)):
                if row[0] > after:  # a damaged tree may give rows out of order
                    after = row[0]
                    yield row[1:]
            return
        except READ_ERRORS:
            found.complete = False
        if last is None:
            return
        for rowid in range(after + 1, min(last, most) + 1):
            try:
                row = db.execute(one, (rowid,)).fetchone()
            except READ_ERRORS:
                continue
            if row is not None:
                after = rowid
                yield row[1:]
                break
        else:
            return


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = 0
    for k in range(8):
        b = buf[i + k]
        value = (value << 7) | (b & 0x7F)
        if b < 0x80:
            return value, i + k + 1
    return (value << 8) | buf[i + 8], i + 9


_INT_SIZES = (1, 2, 3, 4, 6, 8)


def _record(payload: bytes) -> list[Any]:
    """The values of one SQLite record (the file format's row encoding)."""
    size, i = _varint(payload, 0)
    if not 0 < size <= len(payload):
        raise ValueError("bad record header")
    types = []
    while i < size:
        t, i = _varint(payload, i)
        types.append(t)
    pos, out = size, []
    for t in types:
        if t == 0:
            out.append(None)
            continue
        if t in (8, 9):
            out.append(t - 8)
            continue
        if t <= 6:
            n = _INT_SIZES[t - 1]
        elif t == 7:
            n = 8
        elif t >= 12:
            n = (t - 12) // 2
        else:
            raise ValueError("reserved serial type")
        raw = payload[pos:pos + n]
        if len(raw) != n:
            raise ValueError("record cut short")
        pos += n
        if t <= 6:
            out.append(int.from_bytes(raw, "big", signed=True))
        elif t == 7:
            out.append(struct.unpack(">d", raw)[0])
        elif t % 2:
            out.append(raw.decode("utf-8"))
        else:
            out.append(bytes(raw))
    return out


def _leaf_records(data: bytes, page_size: int, usable: int) -> Iterator[list[Any]]:
    """Records of every page that reads as a table leaf, overflow chains followed."""
    pages = len(data) // page_size
    most_local = usable - 35
    least_local = (usable - 12) * 32 // 255 - 23
    for pgno in range(1, pages + 1):
        base = (pgno - 1) * page_size
        head = base + (100 if pgno == 1 else 0)
        if data[head] != 0x0D:
            continue
        cells = int.from_bytes(data[head + 3:head + 5], "big")
        if head + 8 + 2 * cells > base + page_size:
            continue
        for c in range(cells):
            try:
                offset = int.from_bytes(data[head + 8 + 2 * c:head + 10 + 2 * c], "big")
                if not 8 <= offset < page_size:
                    continue
                size, p = _varint(data, base + offset)
                _, p = _varint(data, p)  # rowid
                if size > len(data):
                    continue
                local = size
                if size > most_local:
                    local = least_local + (size - least_local) % (usable - 4)
                    if local > most_local:
                        local = least_local
                if p + local > base + page_size:
                    continue
                payload = bytearray(data[p:p + local])
                if local < size:
                    nxt, seen = int.from_bytes(data[p + local:p + local + 4], "big"), set()
                    while len(payload) < size and 0 < nxt <= pages and nxt not in seen:
                        seen.add(nxt)
                        at = (nxt - 1) * page_size
                        nxt = int.from_bytes(data[at:at + 4], "big")
                        payload += data[at + 4:at + 4 + min(usable - 4, size - len(payload))]
                    if len(payload) != size:
                        continue
                yield _record(bytes(payload))
            except (IndexError, ValueError):  # UnicodeDecodeError is a ValueError
                continue


def _wal_checksum(data: bytes, big: bool, s0: int, s1: int) -> tuple[int, int]:
    for x0, x1 in struct.iter_unpack(">II" if big else "<II", data):
        s0 = (s0 + x0 + s1) & 0xFFFFFFFF
        s1 = (s1 + x1 + s0) & 0xFFFFFFFF
    return s0, s1


def _wal_pages(path: Path) -> tuple[int, dict[int, bytes], int] | None:
    """(page size, newest committed image of each page, pages in the database) from a WAL.

    Only frames whose checksums hold, up to the last commit, are taken: a write that was
    refused (the disk was full) may have left frames behind that were never committed, and
    an action the table was told failed must not come back.
    """
    try:
        wal = Path(f"{path}-wal").read_bytes()
    except OSError:
        return None
    if len(wal) < 32 or wal[:4] not in WAL_MAGIC:
        return None
    big = wal[3] == 0x83
    page_size = int.from_bytes(wal[8:12], "big")
    if page_size not in PAGE_SIZES:
        return None
    s0, s1 = _wal_checksum(wal[:24], big, 0, 0)
    if (s0, s1) != struct.unpack(">II", wal[24:32]):
        return None
    pages: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    db_pages, at = 0, 32
    while at + 24 + page_size <= len(wal):
        head, page = wal[at:at + 24], wal[at + 24:at + 24 + page_size]
        if head[8:16] != wal[16:24]:
            break
        s0, s1 = _wal_checksum(head[:8] + page, big, s0, s1)
        if (s0, s1) != struct.unpack(">II", head[16:24]):
            break
        pgno, commit = struct.unpack(">II", head[:8])
        pending[pgno] = page
        if commit:
            pages.update(pending)
            pending.clear()
            db_pages = commit
        at += 24 + page_size
    return (page_size, pages, db_pages) if pages else None


def _raw_records(path: Path) -> list[list[Any]]:
    """Rows read straight from the file's pages, for when SQLite cannot walk to them.

    A broken header, schema page or inner page of a table hides every row below it from
    SQL; the leaf pages themselves are usually intact. The committed pages of the
    write-ahead log are laid over the file first, as SQLite would, since a store in use
    keeps its latest games there. Rows found may be old copies too, which is harmless:
    events never change, and a game's config and creation time never do either.
    """
    try:
        data = path.read_bytes()
    except OSError:
        data = b""
    wal = _wal_pages(path)
    if wal is not None:
        page_size, pages, db_pages = wal
        count = max(len(data) // page_size, db_pages, *pages)
        image = bytearray(data[:count * page_size].ljust(count * page_size, b"\0"))
        for pgno, page in pages.items():
            image[(pgno - 1) * page_size:pgno * page_size] = page
        data = bytes(image)
    sizes, reserved = PAGE_SIZES, 0
    if data[:16] == MAGIC and len(data) >= 100:
        declared = int.from_bytes(data[16:18], "big")
        declared = 65536 if declared == 1 else declared
        if declared in PAGE_SIZES and data[20] < 64:
            sizes, reserved = (declared,), data[20]
    if wal is not None:
        sizes = (wal[0],)
    best: list[list[Any]] = []
    for size in sizes:
        rows = list(_leaf_records(data, size, size - reserved))
        if len(rows) > len(best):
            best = rows
    return best


def salvage(path: Path, *, sql: bool = True) -> Salvage:
    """Every game row and event that can be read, through SQLite and then from the pages.

    `sql=False` for an emptied file: SQLite would take a 0-byte file for a new database and
    drop the write-ahead log beside it, which may still hold the games.
    """
    found = Salvage(complete=sql)
    if sql:
        # A row takes at least 6 bytes of a page: no more rowids than that can be in use.
        most = sum(file_size(Path(f"{path}{s}")) for s in ("", "-wal")) // 6
        db = sqlite3.connect(sqlite_uri(path, "ro"), uri=True)
        try:
            for table, columns in (
                    ("games", "id, created, updated, config, seq, round, over, summary"),
                    ("events", "game_id, n, kind, payload, created")):
                for row in _scan(db, table, columns, found, most):
                    found.add(row)
        finally:
            db.close()
    if not found.complete:
        for values in _raw_records(path):
            found.add(values)
    return found


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0

"""How each game is shown and run beyond its rules (hide the money, who deals, ended by
the host), kept beside the game store as a small file per game."""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from pathlib import Path
from typing import Any

GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DISPLAY_DEFAULTS: dict[str, Any] = {"hide_money": False, "deal": "app", "ended": False}


class BadGameId(ValueError):
    """Not a game id (`GAME_ID`)."""


class DisplayStore:
    """Per-game display options in `data_dir/display/<game_id>.json`.

    A file per game keeps the write small and atomic (write a temp file, then rename), so a
    pulled cable leaves either the old or the new options, never half a file.
    """

    def __init__(self, data_dir: Path) -> None:
        self.folder = Path(data_dir) / "display"
        self.lock = threading.Lock()
        self.cache: dict[str, dict[str, Any]] = {}
        self.version = 0  # bumped on every change, so live streams notice

    def get(self, game_id: str) -> dict[str, Any]:
        with self.lock:
            if game_id not in self.cache:
                self.cache[game_id] = self._read(game_id)
            return dict(self.cache[game_id])

    def _read(self, game_id: str) -> dict[str, Any]:
        out = dict(DISPLAY_DEFAULTS)
        if not GAME_ID.match(game_id):
            return out
        try:
            data = json.loads((self.folder / f"{game_id}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return out
        if isinstance(data, dict):
            for key, default in DISPLAY_DEFAULTS.items():
                if isinstance(data.get(key), type(default)):
                    out[key] = data[key]
        return out

    def exists(self, game_id: str) -> bool:
        return bool(GAME_ID.match(game_id)) and (self.folder / f"{game_id}.json").is_file()

    def update(self, game_id: str, **changes: Any) -> dict[str, Any]:
        if not GAME_ID.match(game_id):
            raise BadGameId(f"not a game id: {game_id!r}")
        with self.lock:
            current = self.cache.get(game_id) or self._read(game_id)
            new = {**current, **changes}
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{game_id}.json"
            tmp = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(new, fh)
                fh.flush()
                os.fsync(fh.fileno())
            tmp.replace(path)
            self.cache[game_id] = new
            self.version += 1
            return dict(new)

"""The host's PIN and login: kept across restarts, guarded against guessing.

The PIN and the key that signs the host's login cookie live in `data_dir/host.json` (mode
0600), so a restart neither logs the host out nor makes them read a new PIN off the console.
A new PIN is made only when the host asks (`vegas-table pin --new`, or the button on /table);
it also ends every login, since each login carries the generation of the PIN it was made
with. `serve --pin` and `$VEGAS_TABLE_PIN` still fix the PIN for one run.

Guessing is limited twice: a few wrong tries per address, and, since a network can have many
addresses, a limit across all of them with a back-off that doubles with every further wrong
try. Wrong tries are counted for the host to see on /table.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calibration.guide import set_aside

PIN_DIGITS = 6
FILENAME = "host.json"


def new_pin(digits: int = PIN_DIGITS) -> str:
    return f"{secrets.randbelow(10 ** digits):0{digits}d}"


def check_pin(text: str) -> str:
    """A PIN given by the user: 4 to 8 digits, else ValueError saying so."""
    if not text.isdigit() or not text.isascii() or not 4 <= len(text) <= 8:
        raise ValueError("the PIN must be 4 to 8 digits")
    return text


def pin_matches(given: Any, pin: str) -> bool:
    """Constant-time comparison; anything that is not a plain string of digits is wrong."""
    if not isinstance(given, str) or not given.isascii():
        return False
    return hmac.compare_digest(given.encode("ascii"), pin.encode("ascii"))


@dataclass(frozen=True)
class Credentials:
    pin: str
    secret_key: str
    generation: int  # raised with every new PIN: logins of an older generation are void


class HostFile:
    """`host.json` in the data dir: read when it changes (another process may write it)."""

    def __init__(self, data_dir: Path, pin_override: str | None = None) -> None:
        self.path = Path(data_dir) / FILENAME
        self.override = pin_override
        self.lock = threading.Lock()
        self.problem = ""  # why the stored file was set aside, for the host to read
        self.unsaved = ""  # why the PIN could not be kept (it then lasts this run only)
        self._stamp: tuple[int, int] | None = None
        self._creds = self._load()

    @property
    def credentials(self) -> Credentials:
        """The current PIN and key, re-read if the file was changed (`pin --new`)."""
        with self.lock:
            creds = self._fresh()
        if self.override is not None:
            return Credentials(self.override, creds.secret_key, creds.generation)
        return creds

    def _fresh(self) -> Credentials:
        try:
            st = self.path.stat()
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._creds = self._load()
        return self._creds

    def _load(self) -> Credentials:
        try:
            data = json.loads(self.path.read_text("utf-8"))
            creds = Credentials(check_pin(str(data["pin"])), str(data["secret_key"]),
                                int(data["generation"]))
            if len(creds.secret_key) < 32:
                raise ValueError("the cookie key is too short")
            st = self.path.stat()
            self._stamp = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            creds = self._write(Credentials(new_pin(), secrets.token_hex(32), 1))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # A damaged file is set aside (never deleted) and the host gets a new PIN.
            try:
                aside = set_aside(self.path)
                self.problem = (f"{FILENAME} could not be read ({exc}); set aside as "
                                f"{aside.name}, and a new PIN was made")
            except OSError:
                self.problem = f"{FILENAME} could not be read ({exc}); a new PIN was made"
            creds = self._write(Credentials(new_pin(), secrets.token_hex(32), 1))
        return creds

    def _write(self, creds: Credentials) -> Credentials:
        """Write atomically with mode 0600; a read-only or full disk keeps them in memory."""
        body = json.dumps({"pin": creds.pin, "secret_key": creds.secret_key,
                           "generation": creds.generation})
        tmp = self.path.with_name(f".{FILENAME}.{secrets.token_hex(4)}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(body)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            st = self.path.stat()
            self._stamp = (st.st_mtime_ns, st.st_size)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            self.unsaved = f"cannot keep the PIN in {self.path} ({exc.strerror or exc})"
        return creds

    def renew(self) -> Credentials:
        """A new PIN and generation (every login ends); the cookie key stays."""
        with self.lock:
            old = self._fresh()
            self._creds = self._write(Credentials(new_pin(), old.secret_key,
                                                  old.generation + 1))
        return self.credentials


class LoginGuard:
    """Wrong PINs: per address (`attempts` a `window`), and across all addresses.

    Past `global_free` wrong tries within `global_window`, every further wrong try from
    anywhere doubles the wait before the next one (up to `max_wait`): 60 addresses that
    share out the 10^6 PINs then need years, not seconds, while the host, whose phone keeps
    its login, is not locked out by someone else's guessing.
    """

    def __init__(self, attempts: int = 5, window: float = 60.0, global_free: int = 20,
                 global_window: float = 600.0, max_wait: float = 300.0) -> None:
        self.attempts, self.window = attempts, window
        self.global_free, self.global_window, self.max_wait = (global_free, global_window,
                                                               max_wait)
        self.failures: dict[str, list[float]] = {}
        self.recent: list[tuple[float, str]] = []  # every wrong try, for the host's page
        self.locked_until = 0.0
        self.total = 0
        self.lock = threading.Lock()

    def blocked(self, who: str) -> float:
        """Seconds `who` must wait before trying a PIN (0: go ahead)."""
        now = time.monotonic()
        with self.lock:
            wait = max(0.0, self.locked_until - now)
            mine = [t for t in self.failures.get(who, []) if now - t < self.window]
            if mine:
                self.failures[who] = mine
            else:
                self.failures.pop(who, None)
            if len(mine) >= self.attempts:
                wait = max(wait, self.window - (now - mine[0]))
            return wait

    def fail(self, who: str) -> None:
        now = time.monotonic()
        with self.lock:
            self.total += 1
            self.failures.setdefault(who, []).append(now)
            self.recent = [(t, w) for t, w in self.recent if now - t < self.global_window]
            self.recent.append((now, who))
            over = len(self.recent) - self.global_free
            if over > 0:
                self.locked_until = now + min(self.max_wait, 2.0 ** (over - 1))
            if len(self.failures) > 4096:  # addresses that never come back
                self.failures = {w: ts for w, ts in self.failures.items()
                                 if now - ts[-1] < self.window}

    def reset(self) -> None:
        """A new PIN: what was guessed at the old one no longer matters."""
        with self.lock:
            self.failures.clear()
            self.recent.clear()
            self.locked_until = 0.0

    def report(self) -> dict[str, Any]:
        """For the host: wrong tries lately, from where, and whether guessing is slowed."""
        now = time.monotonic()
        with self.lock:
            recent = [(t, w) for t, w in self.recent if now - t < self.global_window]
            last = recent[-1] if recent else None
            return {"total": self.total, "recent": len(recent),
                    "window_s": int(self.global_window),
                    "addresses": len({w for _t, w in recent}),
                    "last_from": last[1] if last else None,
                    "last_ago_s": round(now - last[0]) if last else None,
                    "locked_s": round(max(0.0, self.locked_until - now))}

"""Everything the app is configured with, in one place (OctoPrint keeps one settings
file too): the PIN, the live streams' limits, the login guard's."""

from __future__ import annotations

from dataclasses import dataclass

MAX_BODY = 64 * 1024
KEEPALIVE_S = 15.0
CAMERA_VIEWERS = 4  # MJPEG streams at once: each holds a server thread and costs the Pi CPU
LIVE_CLIENTS = 48  # live-update streams at once: each holds a server thread
# Threads for everything else (pages, /api/state, the host's taps) beyond the streams' own,
# so no number of phones watching can take them all.
REQUEST_THREADS = 12


@dataclass
class Settings:
    """Everything the app is configured with, in one place (OctoPrint keeps one file too).

    `pin` fixes the table PIN for this run (`serve --pin`, `$VEGAS_TABLE_PIN`); without it the
    PIN and the cookie key are the data dir's (`web.auth.HostFile`), kept across restarts.
    """

    pin: str | None = None
    secret_key: str | None = None
    keepalive: float = KEEPALIVE_S
    # A live stream ends after this long and the page reconnects (it re-syncs anyway): a
    # phone that vanished without closing its connection cannot hold a thread for long.
    stream_max: float = 600.0
    login_attempts: int = 5  # wrong PINs allowed per client per window
    login_window: float = 60.0
    login_global_free: int = 20  # wrong PINs from all addresses before guessing slows down
    live_clients: int = LIVE_CLIENTS
    camera_viewers: int = CAMERA_VIEWERS

    @property
    def threads(self) -> int:
        """What the web server needs: a thread per stream allowed, and the request threads."""
        return self.live_clients + self.camera_viewers + REQUEST_THREADS

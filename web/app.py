"""The Flask app factory: one table session, one settings object, the API's blueprints
(`web.routes`) and the pages (`web.pages`), and the waitress server `serve` runs it on.

One process owns the camera, so the app is built around one `TableSession`; what its
routes share (the PIN check, errors as JSON) is `web.api`.
"""

from __future__ import annotations

import socket
from typing import Any

from flask import Flask

from . import pages, routes
from .api import ApiError, Context, register_errors
from .auth import HostFile, LoginGuard
from .display import DisplayStore
from .photos import PHOTO_WIDTHS
from .session import TableSession
from .settings import CAMERA_VIEWERS, MAX_BODY, Settings

__all__ = ["CAMERA_VIEWERS", "PHOTO_WIDTHS", "ApiError", "Settings", "create_app",
           "make_server", "socket_options"]

def socket_options() -> list[tuple[int, int, int]]:
    """Options for every accepted connection (waitress sets its own list of them).

    TCP keep-alive and a user timeout: a phone that walks out of the Wi-Fi never closes its
    connection, and its stream's keep-alive comments then go unacknowledged; the kernel gives
    up on them after 30 s, the stream's next write fails, and its thread is free again.
    """
    options: list[tuple[int, int, int]] = [
        (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
    ]
    for name, value in (("TCP_KEEPIDLE", 20), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 3),
                        ("TCP_USER_TIMEOUT", 30_000)):
        if hasattr(socket, name):  # Linux (the Pi) has them all
            options.append((socket.IPPROTO_TCP, getattr(socket, name), value))
    return options


def make_server(app: Flask, settings: Settings, host: str, port: int) -> Any:
    """The waitress server for this app, as `serve` runs it.

    Streams hold a thread each, so the pool is sized from the stream limits; a slow viewer
    blocks its own stream at a small buffer instead of piling frames up in memory.
    """
    from waitress import create_server

    server = create_server(app, host=host, port=port, threads=settings.threads,
                           outbuf_high_watermark=1 << 20, channel_timeout=60)
    server.adj.socket_options = socket_options()
    return server


def create_app(table: TableSession, settings: Settings) -> Flask:
    """The app factory: one table session, one settings object."""
    app = Flask(__name__)
    app.config.update(SECRET_KEY=settings.secret_key, MAX_CONTENT_LENGTH=MAX_BODY,
                      SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict")
    host_file = HostFile(table.data_dir, settings.pin)
    if settings.secret_key is None:
        app.config["SECRET_KEY"] = host_file.credentials.secret_key
    display = DisplayStore(table.data_dir)
    # Whether the host ended a game is a display option, kept beside the game store.
    table.is_ended = lambda game_id: bool(display.get(game_id)["ended"])
    context = Context(table, settings, host_file,
                      LoginGuard(settings.login_attempts, settings.login_window,
                                 settings.login_global_free), display)
    app.extensions.update(vegas=context, table=table, settings=settings, host_file=host_file,
                          login_guard=context.limiter, display=display, thumbs=context.thumbs)
    if display.exists(table.game.id):
        # A resumed game keeps how its money is dealt (the host chose it at set-up).
        table.auto_deal = display.get(table.game.id)["deal"] == "app"
    register_errors(app)
    routes.register(app)
    app.register_blueprint(pages.bp)
    return app

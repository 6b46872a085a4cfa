"""The Flask app: the JSON API and live updates for every phone at the table.

One process owns the camera, so the app is built around one `TableSession`. Reading needs
nothing; anything that changes the game needs the table PIN, sent once to `/api/login` (it
is then kept in the session cookie) or as the `X-Table-Pin` header. Every write must be a
JSON request, which a cross-site form cannot send without a CORS preflight the app never
grants: that is the CSRF protection. Bad input gets a 4xx with a JSON message and changes
nothing; the app never answers a client's mistake with a 500.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, Response, jsonify, request, session
from werkzeug.exceptions import HTTPException

from scorekeeper import RulesError, action_from_dict

from .session import ConfirmError, TableSession, photo_bytes

MAX_BODY = 64 * 1024
KEEPALIVE_S = 15.0


@dataclass
class Settings:
    """Everything the app is configured with, in one place (OctoPrint keeps one file too)."""

    pin: str
    secret_key: str = field(default_factory=lambda: secrets.token_hex(32))
    keepalive: float = KEEPALIVE_S
    login_attempts: int = 5  # wrong PINs allowed per client per window
    login_window: float = 60.0


class _RateLimit:
    """Wrong PIN attempts per client address, forgotten after the window."""

    def __init__(self, attempts: int, window: float) -> None:
        self.attempts, self.window = attempts, window
        self.failures: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def blocked(self, who: str) -> float:
        now = time.monotonic()
        with self.lock:
            recent = [t for t in self.failures.get(who, []) if now - t < self.window]
            self.failures[who] = recent
            if len(recent) >= self.attempts:
                return self.window - (now - recent[0])
        return 0.0

    def fail(self, who: str) -> None:
        with self.lock:
            self.failures.setdefault(who, []).append(time.monotonic())


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def create_app(table: TableSession, settings: Settings) -> Flask:
    """The app factory: one table session, one settings object."""
    app = Flask(__name__)
    app.config.update(SECRET_KEY=settings.secret_key, MAX_CONTENT_LENGTH=MAX_BODY,
                      SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict")
    app.extensions["table"] = table
    app.extensions["settings"] = settings
    limiter = _RateLimit(settings.login_attempts, settings.login_window)

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> tuple[Response, int]:
        return jsonify(error=exc.message), exc.status

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> tuple[Response, int]:
        if request.path.startswith("/api/"):
            return jsonify(error=exc.description or exc.name), exc.code or 500
        return exc  # type: ignore[return-value]

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> tuple[Response, int]:
        app.logger.exception("unexpected error on %s", request.path)
        return jsonify(error=f"internal error: {type(exc).__name__}"), 500

    def body() -> dict[str, Any]:
        if not request.is_json:
            raise ApiError(415, "send JSON (Content-Type: application/json)")
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            raise ApiError(400, "the body must be a JSON object")
        return data

    def need_pin() -> None:
        given = request.headers.get("X-Table-Pin")
        if given is not None:
            if not _pin_ok(given, settings.pin):
                limiter.fail(request.remote_addr or "?")
                raise ApiError(403, "wrong table PIN")
            return
        if not session.get("host"):
            raise ApiError(401, "this needs the table PIN: POST it to /api/login first")

    def write(fn: Any) -> Any:
        """Wrap a write: PIN, JSON body, and rules errors as 409/400 with the rule's words."""

        def inner(*a: Any, **kw: Any) -> Any:
            wait = limiter.blocked(request.remote_addr or "?")
            if wait > 0:
                raise ApiError(429, f"too many wrong PINs; try again in {wait:.0f} s")
            need_pin()
            data = body()
            try:
                return fn(data, *a, **kw)
            except RulesError as exc:
                raise ApiError(409, str(exc)) from None
            except ConfirmError as exc:
                raise ApiError(400, str(exc)) from None

        inner.__name__ = fn.__name__
        return inner

    @app.get("/api/state")
    def state() -> Response:
        return jsonify(table.snapshot())

    @app.get("/api/health")
    def health() -> Response:
        snap = table.snapshot()
        return jsonify(ok=True, camera=snap["camera"], game_id=snap["game_id"])

    @app.get("/api/events")
    def events() -> Response:
        def stream() -> Iterator[str]:
            version = -1
            last = time.monotonic()
            yield "retry: 2000\n\n"
            while True:
                snap = table.snapshot()
                if snap["version"] != version:
                    version = snap["version"]
                    last = time.monotonic()
                    yield f"event: state\ndata: {json.dumps(snap, separators=(',', ':'))}\n\n"
                    continue
                table.wait_for_change(version, max(0.5, settings.keepalive
                                                   - (time.monotonic() - last)))
                if time.monotonic() - last >= settings.keepalive:
                    last = time.monotonic()
                    yield ": keep-alive\n\n"

        return Response(stream(), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/api/photo/<game_id>/<name>")
    def photo(game_id: str, name: str) -> Response:
        data = photo_bytes(table.data_dir, f"{game_id}/{name}")
        if data is None:
            raise ApiError(404, f"no photo {game_id}/{name}")
        return Response(data, mimetype="image/jpeg",
                        headers={"Cache-Control": "public, max-age=86400"})

    @app.post("/api/login")
    def login() -> Response:
        who = request.remote_addr or "?"
        wait = limiter.blocked(who)
        if wait > 0:
            raise ApiError(429, f"too many wrong PINs; try again in {wait:.0f} s")
        data = body()
        pin = data.get("pin")
        if not isinstance(pin, str) or not _pin_ok(pin, settings.pin):
            limiter.fail(who)
            raise ApiError(403, "wrong table PIN")
        session["host"] = True
        return jsonify(ok=True)

    @app.post("/api/logout")
    def logout() -> Response:
        session.pop("host", None)
        return jsonify(ok=True)

    @app.post("/api/action")
    @write
    def action(data: dict[str, Any]) -> Response:
        try:
            act = action_from_dict(data)
        except RulesError as exc:
            raise ApiError(400, str(exc)) from None
        table.apply(act)
        return jsonify(ok=True, seq=table.game.state.seq)

    @app.post("/api/undo")
    @write
    def undo(data: dict[str, Any]) -> Response:
        act = table.undo()
        return jsonify(ok=True, undone=act.to_dict(), seq=table.game.state.seq)

    @app.post("/api/confirm")
    @write
    def confirm(data: dict[str, Any]) -> Response:
        pid = data.get("id")
        if not isinstance(pid, int) or isinstance(pid, bool):
            raise ApiError(400, "'id' must be the pending confirmation's number")
        value = data.get("value")
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or not 1 <= value <= 6):
            raise ApiError(400, "'value' must be 1-6")
        dice = data.get("dice")
        if dice is not None and (not isinstance(dice, list) or len(dice) > 40
                                 or not all(isinstance(d, dict) for d in dice)):
            raise ApiError(400, "'dice' must be a list of {colour, value, big} objects")
        try:
            table.confirm(pid, value, dice)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        return jsonify(ok=True, seq=table.game.state.seq)

    return app


def _pin_ok(given: str, pin: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), pin.encode("utf-8"))

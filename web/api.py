"""What every part of the JSON API shares: its errors, the table it serves, and how a write
is checked (the PIN, a JSON body, rules errors in the rule's own words).

Reading needs nothing; anything that changes the game needs the table PIN, sent once to
`/api/login` (then kept in the session cookie) or as the `X-Table-Pin` header. Every write
must be a JSON request, which a cross-site form cannot send without a CORS preflight the app
never grants: that is the CSRF protection. Bad input gets a 4xx with a JSON message and
changes nothing; the app never answers a client's mistake with a 500.
"""

from __future__ import annotations

import errno
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, current_app, jsonify, request, session
from werkzeug.exceptions import HTTPException

from scorekeeper import Deal, GameState, RulesError, StoreError
from scorekeeper.store import StorageFull

from .auth import HostFile, LoginGuard, pin_matches
from .display import DisplayStore
from .photos import Thumbnails
from .questions import ConfirmError
from .settings import Settings
from .views import event_numbers, history_entries, money_values, photo_names, viewer_state

if TYPE_CHECKING:
    from .session import TableSession


class ApiError(Exception):
    """A client's mistake (or a refusal), answered as `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str, field: str | None = None, *,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.field = status, message, field
        self.retry_after = retry_after


@dataclass
class Context:
    """The one table the app serves and what its routes share (`ctx()` in a request)."""

    table: TableSession
    settings: Settings
    host_file: HostFile
    limiter: LoginGuard
    display: DisplayStore
    thumbs: Thumbnails = field(default_factory=Thumbnails)
    camera_slots: threading.BoundedSemaphore = field(init=False)
    live_slots: threading.BoundedSemaphore = field(init=False)
    # The last roll of the game before this one: not shown as this game's.
    stale_roll: Any = None

    def __post_init__(self) -> None:
        self.camera_slots = threading.BoundedSemaphore(self.settings.camera_viewers)
        self.live_slots = threading.BoundedSemaphore(self.settings.live_clients)

    # --- who asks ----------------------------------------------------------------------
    def is_host(self) -> bool:
        """A login counts while the PIN it was made with is the PIN (a new one ends it)."""
        return session.get("host") == self.host_file.credentials.generation

    def guard(self) -> None:
        wait = self.limiter.blocked(request.remote_addr or "?")
        if wait > 0:
            raise ApiError(429, f"too many wrong PINs; try again in {wait:.0f} s",
                           retry_after=wait)

    def require_host(self) -> None:
        """The PIN check of writes (session login or header), for the few reads too."""
        given = request.headers.get("X-Table-Pin")
        if given is not None:
            self.guard()
            if not pin_matches(given, self.host_file.credentials.pin):
                self.limiter.fail(request.remote_addr or "?")
                raise ApiError(403, "wrong table PIN")
            return
        if not self.is_host():
            raise ApiError(401, "this needs the table PIN: POST it to /api/login first")

    @staticmethod
    def viewer() -> str | None:
        """`?me=NAME`: the player holding this phone."""
        me = request.args.get("me")
        return me if isinstance(me, str) and 0 < len(me) <= 40 else None

    # --- the game ----------------------------------------------------------------------
    def deal_mode(self) -> str:
        """How this game's money comes in: as chosen at set-up, else as the session runs."""
        table = self.table
        if self.display.exists(table.game.id):
            return str(self.display.get(table.game.id)["deal"])
        return "app" if table.auto_deal else "hand"

    def deal_if_due(self) -> None:
        """The app deals the next round itself when the host chose so at set-up."""
        table = self.table
        state = table.game.state
        if (state.phase == "deal" and not state.is_over() and self.deal_mode() == "app"
                and not self.display.get(table.game.id)["ended"]):
            table.apply(Deal())

    def current_view(self, me: str | None) -> dict[str, Any]:
        """`/api/state` as the phone of `me` sees it."""
        table = self.table
        with table.lock:
            snap = table.snapshot()
            state = table.game.state
            disp = {**self.display.get(snap["game_id"]), "deal": self.deal_mode()}
            extras = {"money_values": money_values(state),
                      "results_now": (state.results() if disp["ended"] and not state.is_over()
                                      else None)}
            if snap.get("last_roll") is not None and snap["last_roll"] is self.stale_roll:
                snap["last_roll"] = None
        return viewer_state(snap, disp, me, extras)

    def history_of(self, gid: str, state: GameState) -> dict[str, Any]:
        """A game's every action in words, with its photos; a turn is a roll and what its
        player did with it."""
        actions = list(state.history)
        numbers = event_numbers(self.table.store.event_kinds(gid), len(actions))
        entries = history_entries(state.config, actions, numbers,
                                  photo_names(self.table.data_dir, gid), gid)
        turn = 0
        for entry in entries:
            if entry.get("type") == "roll":
                turn += 1
            entry["turn"] = turn if entry.get("type") != "deal" and turn else None
        return {"game_id": gid, "seq": len(actions), "entries": entries}


def ctx() -> Context:
    """The table of the app handling this request."""
    return current_app.extensions["vegas"]


def body() -> dict[str, Any]:
    """The request's JSON object, or a 4xx saying what is wrong with it."""
    if not request.is_json:
        raise ApiError(415, "send JSON (Content-Type: application/json)")
    try:
        data = request.get_json(silent=True)
    except RecursionError:  # "[[[[...": json gives up by recursion, not ValueError
        raise ApiError(400, "the body is nested too deeply") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def write(fn: Callable[..., Any] | None = None, *, play: bool = False) -> Any:
    """Wrap a write: PIN, JSON body, and rules errors as 409/400 with the rule's words.

    `play` marks the writes that change the game itself: refused once the host ended it.
    """
    if fn is None:
        return lambda f: write(f, play=play)

    @functools.wraps(fn)
    def inner(*a: Any, **kw: Any) -> Any:
        c = ctx()
        c.require_host()
        data = body()
        if play and c.display.get(c.table.game.id)["ended"]:
            raise ApiError(409, "the host ended this game: reopen it or start a new one")
        try:
            return fn(data, *a, **kw)
        except RulesError as exc:
            raise ApiError(409, str(exc)) from None
        except ConfirmError as exc:
            raise ApiError(400, str(exc)) from None

    return inner


def register_errors(app: Flask) -> None:
    """Every error as JSON on the API: a client's mistake as a 4xx, the store's and the
    disk's as 503/507, and nothing unexpected as a page of HTML."""

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> tuple[Response, int]:
        out = {"error": exc.message}
        if exc.field:
            out["field"] = exc.field
        resp = jsonify(out)
        if exc.retry_after is not None:
            resp.headers["Retry-After"] = str(max(1, round(exc.retry_after)))
        return resp, exc.status

    @app.errorhandler(StorageFull)
    def _storage_full(exc: StorageFull) -> tuple[Response, int]:
        return jsonify(error=str(exc), storage="full"), 507

    @app.errorhandler(OSError)
    def _os_error(exc: OSError) -> tuple[Response, int]:
        """A file the app writes beside the game (display options, a profile) failed."""
        app.logger.error("writing on %s: %s", request.path, exc)
        if exc.errno == errno.ENOSPC:
            return _storage_full(StorageFull())
        return jsonify(error=f"cannot save: {exc.strerror or exc}"), 503

    @app.errorhandler(StoreError)
    def _store_error(exc: StoreError) -> tuple[Response, int]:
        app.logger.error("game store: %s", exc)
        return jsonify(error=f"the game could not be saved: {exc}"), 503

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> tuple[Response, int]:
        if request.path.startswith("/api/"):
            return jsonify(error=exc.description or exc.name), exc.code or 500
        return exc  # type: ignore[return-value]

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> tuple[Response, int]:
        app.logger.exception("unexpected error on %s", request.path)
        return jsonify(error=f"internal error: {type(exc).__name__}"), 500

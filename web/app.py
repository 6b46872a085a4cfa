"""The Flask app: the JSON API and live updates for every phone at the table.

One process owns the camera, so the app is built around one `TableSession`. Reading needs
nothing; anything that changes the game needs the table PIN, sent once to `/api/login` (it
is then kept in the session cookie) or as the `X-Table-Pin` header. Every write must be a
JSON request, which a cross-site form cannot send without a CORS preflight the app never
grants: that is the CSRF protection. Bad input gets a 4xx with a JSON message and changes
nothing; the app never answers a client's mistake with a 500.
"""

from __future__ import annotations

import errno
import json
import shutil
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request, session
from werkzeug.exceptions import HTTPException

from scorekeeper import (
    EDITIONS,
    ConfigError,
    Deal,
    GameState,
    RulesError,
    StoreError,
    action_from_dict,
    make_edition,
)
from scorekeeper.store import StorageFull

from .auth import HostFile, LoginGuard, pin_matches
from .pages import (
    GAME_ID,
    MAX_PLAYERS,
    BadRequest,
    DisplayStore,
    Slotted,
    event_numbers,
    history_entries,
    mjpeg,
    money_values,
    parse_new_game,
    photo_names,
    register_pages,
    viewer_state,
)
from .session import (
    CalibrationError,
    CalibrationInput,
    ConfirmError,
    TableSession,
    photo_bytes,
)

MAX_BODY = 64 * 1024
KEEPALIVE_S = 15.0
CAMERA_VIEWERS = 4  # MJPEG streams at once: each holds a server thread and costs the Pi CPU
LIVE_CLIENTS = 48  # live-update streams at once: each holds a server thread
# Threads for everything else (pages, /api/state, the host's taps) beyond the streams' own,
# so no number of phones watching can take them all.
REQUEST_THREADS = 12
# Widths a photo is sent at (`/api/photo/...?w=N` gets the widest of them that is <= N), so
# a phone showing a thumbnail gets a few kilobytes instead of the camera's whole picture.
PHOTO_WIDTHS = (80, 160, 240, 320, 480, 640, 800, 960, 1280, 1600)
THUMBS_KEPT = 128  # scaled photos kept in memory (about 10-60 KB each)


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


class ApiError(Exception):
    def __init__(self, status: int, message: str, field: str | None = None, *,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.field = status, message, field
        self.retry_after = retry_after


class Thumbnails:
    """Photos scaled down to a width, encoded once and kept in memory.

    Keyed by the file's size and modification time too, so a photo written again under its
    name is scaled again; the oldest entries go first once `kept` are held.
    """

    def __init__(self, kept: int = THUMBS_KEPT) -> None:
        self.kept = kept
        self.lock = threading.Lock()
        self.cache: OrderedDict[tuple[str, int, int, int], bytes] = OrderedDict()

    def get(self, path: Path, width: int) -> bytes | None:
        """The JPEG of `path` at most `width` px wide; None if it cannot be read."""
        import cv2
        import numpy as np

        try:
            st = path.stat()
        except OSError:
            return None
        key = (str(path), st.st_mtime_ns, st.st_size, width)
        with self.lock:
            if key in self.cache:
                self.cache.move_to_end(key)
                return self.cache[key]
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        image = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            return None
        h, w = image.shape[:2]
        if w <= width:
            data = raw
        else:
            small = cv2.resize(image, (width, max(1, round(h * width / w))),
                               interpolation=cv2.INTER_AREA)
            ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 80])
            if not ok:
                return None
            data = buf.tobytes()
        with self.lock:
            self.cache[key] = data
            while len(self.cache) > self.kept:
                self.cache.popitem(last=False)
        return data


def photo_path(data_dir: Path, game_id: str, name: str) -> Path | None:
    """A stored roll photo's file, refusing anything outside the photos folder."""
    try:
        base = (Path(data_dir) / "photos").resolve()
        path = (base / game_id / name).resolve()
    except (OSError, ValueError):
        return None
    if base not in path.parents or not path.is_file():
        return None
    return path


def photo_width(raw: str | None) -> int | None:
    """`?w=N` of a photo: None for the whole photo, else the widest allowed width <= N."""
    if raw is None:
        return None
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not PHOTO_WIDTHS[0] <= n <= PHOTO_WIDTHS[-1]:
        raise ApiError(400, f"w: a width in pixels from {PHOTO_WIDTHS[0]} to "
                            f"{PHOTO_WIDTHS[-1]}", "w")
    return max(w for w in PHOTO_WIDTHS if w <= n)


def edition_limits() -> dict[str, dict[str, Any]]:
    """Per edition: player counts the rules accept (with each option that narrows them), the
    rounds, the colours no player may take, and whether dice can be Biggies."""
    out: dict[str, dict[str, Any]] = {}
    for key, cls in EDITIONS.items():
        ed = make_edition(key)

        def most(edition: Any) -> int:
            best = 0
            for n in range(1, MAX_PLAYERS + 1):
                try:
                    edition.validate_player_count(n)
                except ConfigError:
                    continue
                best = n
            return best

        info: dict[str, Any] = {"title": cls.title, "min_players": ed.min_players,
                                "max_players": most(ed), "rounds": ed.rounds,
                                "reserved_colours": list(ed.reserved_colours()),
                                "biggy": ed.big_per_player > 0}
        if key == "classic":
            neutral = make_edition(key, {"neutral_dice": True})
            info["neutral"] = {"max_players": most(neutral),
                               "reserved_colours": list(neutral.reserved_colours())}
        out[key] = info
    return out


def leaders(ranking: list[tuple[str, int]]) -> dict[str, Any]:
    """Who leads among (name, money) pairs, and with how much (none while nobody has any)."""
    top = max((m for _, m in ranking), default=0)
    names = [n for n, m in ranking if m == top] if top > 0 else []
    return {"leaders": names, "lead_money": top}


def create_app(table: TableSession, settings: Settings) -> Flask:
    """The app factory: one table session, one settings object."""
    app = Flask(__name__)
    app.config.update(SECRET_KEY=settings.secret_key, MAX_CONTENT_LENGTH=MAX_BODY,
                      SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict")
    app.extensions["table"] = table
    app.extensions["settings"] = settings
    host_file = HostFile(table.data_dir, settings.pin)
    if settings.secret_key is None:
        app.config["SECRET_KEY"] = host_file.credentials.secret_key
    limiter = LoginGuard(settings.login_attempts, settings.login_window,
                         settings.login_global_free)
    app.extensions["host_file"] = host_file
    app.extensions["login_guard"] = limiter

    display = DisplayStore(table.data_dir)
    table.is_ended = lambda game_id: bool(display.get(game_id)["ended"])
    app.extensions["display"] = display
    thumbs = app.extensions["thumbs"] = Thumbnails()
    limits = edition_limits()
    camera_slots = threading.BoundedSemaphore(settings.camera_viewers)
    live_slots = threading.BoundedSemaphore(settings.live_clients)
    stale_roll: dict[str, Any] = {"roll": None}  # the last roll of the game before this one
    register_pages(app)
    if display.exists(table.game.id):
        # A resumed game keeps how its money is dealt (the host chose it at set-up).
        table.auto_deal = display.get(table.game.id)["deal"] == "app"

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> tuple[Response, int]:
        body = {"error": exc.message}
        if exc.field:
            body["field"] = exc.field
        resp = jsonify(body)
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

    def body() -> dict[str, Any]:
        if not request.is_json:
            raise ApiError(415, "send JSON (Content-Type: application/json)")
        try:
            data = request.get_json(silent=True)
        except RecursionError:  # "[[[[...": json gives up by recursion, not ValueError
            raise ApiError(400, "the body is nested too deeply") from None
        if not isinstance(data, dict):
            raise ApiError(400, "the body must be a JSON object")
        return data

    def is_host() -> bool:
        """A login counts while the PIN it was made with is the PIN (a new one ends it)."""
        return session.get("host") == host_file.credentials.generation

    def guard() -> None:
        wait = limiter.blocked(request.remote_addr or "?")
        if wait > 0:
            raise ApiError(429, f"too many wrong PINs; try again in {wait:.0f} s",
                           retry_after=wait)

    def require_host() -> None:
        """The PIN check of writes (session login or header), for the few reads too."""
        given = request.headers.get("X-Table-Pin")
        if given is not None:
            guard()
            if not pin_matches(given, host_file.credentials.pin):
                limiter.fail(request.remote_addr or "?")
                raise ApiError(403, "wrong table PIN")
            return
        if not is_host():
            raise ApiError(401, "this needs the table PIN: POST it to /api/login first")

    def deal_mode() -> str:
        """How this game's money comes in: as chosen at set-up, else as the session runs."""
        if display.exists(table.game.id):
            return str(display.get(table.game.id)["deal"])
        return "app" if table.auto_deal else "hand"

    def write(fn: Any = None, *, play: bool = False) -> Any:
        """Wrap a write: PIN, JSON body, and rules errors as 409/400 with the rule's words.

        `play` marks the writes that change the game itself: refused once the host ended it.
        """
        if fn is None:
            return lambda f: write(f, play=play)

        def inner(*a: Any, **kw: Any) -> Any:
            require_host()
            data = body()
            if play and display.get(table.game.id)["ended"]:
                raise ApiError(409, "the host ended this game: reopen it or start a new one")
            try:
                return fn(data, *a, **kw)
            except RulesError as exc:
                raise ApiError(409, str(exc)) from None
            except ConfirmError as exc:
                raise ApiError(400, str(exc)) from None

        inner.__name__ = fn.__name__
        return inner

    def deal_if_due() -> None:
        """The app deals the next round itself when the host chose so at set-up."""
        state = table.game.state
        if (state.phase == "deal" and not state.is_over() and deal_mode() == "app"
                and not display.get(table.game.id)["ended"]):
            table.apply(Deal())

    def current_view(me: str | None) -> dict[str, Any]:
        with table.lock:
            snap = table.snapshot()
            state = table.game.state
            disp = {**display.get(snap["game_id"]), "deal": deal_mode()}
            extras = {"money_values": money_values(state),
                      "results_now": (state.results() if disp["ended"] and not state.is_over()
                                      else None)}
            if snap.get("last_roll") is not None and snap["last_roll"] is stale_roll["roll"]:
                snap["last_roll"] = None
        return viewer_state(snap, disp, me, extras)

    def viewer() -> str | None:
        me = request.args.get("me")
        return me if isinstance(me, str) and 0 < len(me) <= 40 else None

    @app.get("/api/state")
    def state() -> Response:
        """The standings (DESIGN.md); `?me=NAME` is the player holding this phone."""
        return jsonify(current_view(viewer()))

    @app.get("/api/whoami")
    def whoami() -> Response:
        if not is_host():
            return jsonify(host=False)
        return jsonify(host=True, wrong_pins=limiter.report(),
                       pin_fixed=settings.pin is not None,
                       pin_problem=host_file.unsaved or host_file.problem or None)

    @app.get("/api/health")
    def health() -> tuple[Response, int]:
        """200 while the frame loop runs and frames come; 503 (with why) when not, for a
        watchdog that restarts the service."""
        ok, why = table.health()
        snap = table.snapshot()
        return jsonify(ok=ok, reason=why, camera=snap["camera"], storage=snap["storage"],
                       game_id=snap["game_id"]), (200 if ok else 503)

    @app.get("/api/events")
    def events() -> Response:
        me = viewer()
        if not live_slots.acquire(blocking=False):
            # The page's EventSource retries by itself; meanwhile it can poll /api/state.
            raise ApiError(503, f"{settings.live_clients} screens follow the table already; "
                                "retrying", retry_after=5)

        def stream() -> Iterator[str]:
            seen: tuple[int, int] | None = None
            opened = last = time.monotonic()
            yield "retry: 2000\n\n"
            while time.monotonic() - opened < settings.stream_max and not table.stopping:
                if (table.version, display.version) != seen:
                    dv = display.version
                    view = current_view(me)
                    seen = (view["version"], dv)
                    last = time.monotonic()
                    yield f"event: state\ndata: {json.dumps(view, separators=(',', ':'))}\n\n"
                    continue
                # Display options change outside the session, so wake at least twice a second.
                started = time.monotonic()
                table.wait_for_change(seen[0], min(0.5, max(0.05, settings.keepalive
                                                             - (started - last))))
                if time.monotonic() - last >= settings.keepalive:
                    last = time.monotonic()
                    yield ": keep-alive\n\n"

        return Response(Slotted(stream(), live_slots), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/api/photo/<game_id>/<name>")
    def photo(game_id: str, name: str) -> Response:
        """A roll photo; `?w=N` scales it to at most N px wide (see PHOTO_WIDTHS)."""
        width = photo_width(request.args.get("w"))
        if width is None:
            data = photo_bytes(table.data_dir, f"{game_id}/{name}")
        else:
            path = photo_path(table.data_dir, game_id, name)
            data = None if path is None else thumbs.get(path, width)
        if data is None:
            raise ApiError(404, f"no photo {game_id}/{name}")
        # A photo is written once under its name; the page asks for a live roll's photo
        # with the roll's own key, so the long cache never shows an older picture.
        return Response(data, mimetype="image/jpeg",
                        headers={"Cache-Control": "public, max-age=31536000, immutable"})

    @app.post("/api/login")
    def login() -> Response:
        who = request.remote_addr or "?"
        guard()
        data = body()
        creds = host_file.credentials
        if not pin_matches(data.get("pin"), creds.pin):
            limiter.fail(who)
            raise ApiError(403, "wrong table PIN")
        session["host"] = creds.generation
        session.permanent = True  # a phone browser restarted mid-game stays the host
        return jsonify(ok=True)

    @app.post("/api/pin/new")
    @write
    def renew_pin(data: dict[str, Any]) -> Response:
        """A new PIN, shown to the host who asked; every other login ends with the old one."""
        if settings.pin is not None:
            raise ApiError(409, "the PIN is fixed by --pin or $VEGAS_TABLE_PIN for this run: "
                                "change it there")
        creds = host_file.renew()
        limiter.reset()
        session["host"] = creds.generation
        return jsonify(ok=True, pin=creds.pin)

    @app.post("/api/notices/dismiss")
    @write
    def dismiss_notice(data: dict[str, Any]) -> Response:
        nid = data.get("id")
        if not isinstance(nid, int) or isinstance(nid, bool):
            raise ApiError(400, "'id' must be the notice's number", "id")
        if not table.dismiss_notice(nid):
            raise ApiError(404, f"no notice {nid}")
        return jsonify(ok=True)

    @app.post("/api/logout")
    def logout() -> Response:
        session.pop("host", None)
        return jsonify(ok=True)

    @app.post("/api/action")
    @write(play=True)
    def action(data: dict[str, Any]) -> Response:
        try:
            act = action_from_dict(data)
        except RulesError as exc:
            raise ApiError(400, str(exc)) from None
        with table.lock:
            table.apply(act)
            deal_if_due()
            return jsonify(ok=True, seq=table.game.state.seq)

    @app.post("/api/undo")
    @write(play=True)
    def undo(data: dict[str, Any]) -> Response:
        with table.lock:
            act = table.undo()
            undone = [act.to_dict()]
            state = table.game.state
            if isinstance(act, Deal) and state.seq and deal_mode() == "app":
                # The app's own deal is not a move: take back the placement that ended the
                # round; placing it again deals the very same notes (the deck is seeded).
                undone.append(table.undo().to_dict())
            return jsonify(ok=True, undone=undone[-1], undone_all=undone,
                           seq=table.game.state.seq)

    @app.post("/api/confirm")
    @write(play=True)
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
        if data.get("dismiss") is True:
            table.dismiss(pid)  # "that was no roll"
            return jsonify(ok=True, seq=table.game.state.seq)
        with table.lock:
            try:
                table.confirm(pid, value, dice)
            except ValueError as exc:
                raise ApiError(400, str(exc)) from None
            deal_if_due()
            return jsonify(ok=True, seq=table.game.state.seq)

    @app.post("/api/roll/check")
    @write(play=True)
    def check_roll(data: dict[str, Any]) -> Response:
        """Check a roll the camera holds back (a die below the line) now, not at the placement."""
        if not table.ask_held_roll():
            raise ApiError(409, "no roll is waiting for its placement")
        return jsonify(ok=True, pending=[p.to_dict() for p in table.pending])

    @app.post("/api/game")
    @write
    def new_game(data: dict[str, Any]) -> Response:
        """Set up the next game: edition, options, players and colours, start player."""
        try:
            config, disp = parse_new_game(data)
        except BadRequest as exc:
            raise ApiError(400, str(exc), str(exc).split(":")[0]) from None
        with table.lock:
            before = table.last_roll
            try:
                game = table.new_game(config)
            except StorageFull:
                raise
            except (RulesError, StoreError) as exc:
                msg = str(exc)
                field = ("options" if "option" in msg else "start_player"
                         if "start_player" in msg else "players")
                raise ApiError(400, f"{field}: {msg}", field) from None
            stale_roll["roll"] = before
            display.update(game.id, **disp)
            table.auto_deal = disp["deal"] == "app"
            deal_if_due()
            return jsonify(ok=True, game_id=game.id, seq=table.game.state.seq)

    @app.post("/api/display")
    @write
    def display_options(data: dict[str, Any]) -> Response:
        """Options of how this game is shown and run that are not rules (hide money, deal)."""
        changes: dict[str, Any] = {}
        for key, value in data.items():
            if key == "hide_money":
                if not isinstance(value, bool):
                    raise ApiError(400, "hide_money: true or false", "hide_money")
                changes[key] = value
            elif key == "deal":
                if value not in ("app", "hand"):
                    raise ApiError(400, "deal: 'app' or 'hand'", "deal")
                changes[key] = value
            else:
                raise ApiError(400, f"unknown field {str(key)[:40]!r}", str(key)[:40])
        with table.lock:
            gid = table.game.id
            new = display.update(gid, **changes)
            if "deal" in changes:
                table.auto_deal = changes["deal"] == "app"
            return jsonify(ok=True, game_id=gid, display=new)

    @app.post("/api/end")
    @write
    def end_game(data: dict[str, Any]) -> Response:
        """The host stops the game early: the scoreboard shows the ranking as it stands."""
        ended = data.get("ended", True)
        if not isinstance(ended, bool):
            raise ApiError(400, "ended: true (end the game) or false (reopen it)", "ended")
        with table.lock:
            if table.game.state.is_over():
                raise ApiError(409, "the game is already over")
            gid = table.game.id
            display.update(gid, ended=ended)
            if ended:
                table.game_ended()  # no question or held roll outlives the game
            return jsonify(ok=True, game_id=gid, ended=ended)

    def history_of(gid: str, state: GameState) -> dict[str, Any]:
        actions = list(state.history)
        numbers = event_numbers(table.store.event_kinds(gid), len(actions))
        entries = history_entries(state.config, actions, numbers,
                                  photo_names(table.data_dir, gid), gid)
        turn = 0
        for entry in entries:  # a turn is a roll and what its player did with it
            if entry.get("type") == "roll":
                turn += 1
            entry["turn"] = turn if entry.get("type") != "deal" and turn else None
        return {"game_id": gid, "seq": len(actions), "entries": entries}

    @app.get("/api/history")
    def history() -> Response:
        """Every action of the current game in words, with the roll photos."""
        with table.lock:
            game = table.game
            state = game.state
            disp = display.get(game.id)
            gid = game.id
            over = state.is_over()
        if disp["hide_money"] and not over and not disp["ended"]:
            require_host()  # deals and placements would add up to the hidden money
        return jsonify(history_of(gid, state))

    # --- saved games (the host's list on /table) -----------------------------------------
    def saved_games() -> list[dict[str, Any]]:
        """Every saved game, the one at the table first."""
        with table.lock:
            current, state = table.game.id, table.game.state
            ranking = [(r["player"], int(r["score"])) for r in state.results()["ranking"]]
            rounds = state.edition.rounds
            games = table.store.list_games()
        out = []
        for g in games:
            gid = g["game_id"]
            is_current = gid == current
            entry = {key: g.get(key) for key in ("game_id", "edition", "created", "updated",
                                                 "seq", "round", "over", "to_move",
                                                 "winners")}
            # The game at the table counts as its ranking does (Royale's chips kept too).
            score = dict(ranking) if is_current else {}
            entry["players"] = [{"name": p["name"], "colour": p["colour"],
                                 "money": score.get(p["name"], p["money"])}
                                for p in g["players"]]
            entry["title"] = limits.get(str(g["edition"]), {}).get("title", g["edition"])
            entry["current"] = is_current
            entry["ended"] = bool(display.get(gid)["ended"]) if GAME_ID.match(gid) else False
            entry["rounds"] = rounds if is_current else None
            entry.update(leaders(ranking if is_current else
                                 [(p["name"], int(p["money"])) for p in g["players"]]))
            out.append(entry)
        out.sort(key=lambda e: not e["current"])  # stable: the rest stay newest first
        return out

    def saved_game(game_id: str) -> dict[str, Any]:
        found = next((g for g in saved_games() if g["game_id"] == game_id), None)
        if found is None:
            raise ApiError(404, f"no saved game {game_id[:64]!r}")
        return found

    @app.get("/api/games")
    def games() -> Response:
        """The saved games (edition, players, round, when, who leads), for the host."""
        require_host()
        return jsonify(games=saved_games())

    @app.get("/api/games/<game_id>/history")
    def game_history(game_id: str) -> Response:
        """One saved game's history in words, with its photos, for the host."""
        require_host()
        entry = saved_game(game_id)
        with table.lock:
            state = table.game.state if table.game.id == game_id else None
        if state is None:
            try:
                state = table.store.load(game_id).state
            except StoreError as exc:
                raise ApiError(409, f"this game cannot be read: {exc}") from None
        return jsonify({**history_of(game_id, state), "game": entry})

    @app.post("/api/games/<game_id>/resume")
    @write
    def resume_game(data: dict[str, Any], game_id: str) -> Response:
        """Play a saved game on: the one at the table stays saved as it is."""
        entry = saved_game(game_id)
        if entry["current"]:
            raise ApiError(409, "this game is the one being played")
        if entry["over"]:
            raise ApiError(409, "this game is over: View shows how it went")
        with table.lock:
            before = table.last_roll
            try:
                game = table.resume_game(game_id)
            except KeyError:
                raise ApiError(404, f"no saved game {game_id[:64]!r}") from None
            except StoreError as exc:
                raise ApiError(409, f"this game cannot be read: {exc}") from None
            stale_roll["roll"] = before
            if display.exists(game.id):
                table.auto_deal = display.get(game.id)["deal"] == "app"
            deal_if_due()
            return jsonify(ok=True, game_id=game.id, seq=table.game.state.seq)

    @app.delete("/api/games/<game_id>")
    @write
    def delete_game(data: dict[str, Any], game_id: str) -> Response:
        """Delete a saved game, its history and photos; never the one at the table."""
        with table.lock:
            entry = saved_game(game_id)
            if entry["current"]:
                raise ApiError(409, "this game is the one being played: start or resume "
                                    "another game first")
            try:
                table.store.delete_game(game_id)
            except StoreError as exc:
                raise ApiError(404, str(exc)) from None
        shutil.rmtree(Path(table.data_dir) / "photos" / game_id, ignore_errors=True)
        return jsonify(ok=True, game_id=game_id)

    @app.get("/api/editions")
    def editions() -> Response:
        """What the set-up form needs from the rules: player counts, rounds, colours."""
        return jsonify(editions=limits)

    # --- calibration (the /calibrate page) ---------------------------------------------
    @app.get("/api/calibration")
    def calibration() -> Response:
        return jsonify(table.calibration_status())

    def calibration_step(fn: Any) -> Response:
        try:
            return jsonify(fn())
        except CalibrationError as exc:
            raise ApiError(409, str(exc)) from None
        except OSError as exc:
            raise ApiError(507, f"cannot save the profile: {exc.strerror or exc}") from None

    @app.post("/api/calibration/start")
    @write
    def calibration_start(data: dict[str, Any]) -> Response:
        colours = data.get("colours")
        if colours is not None and (
                not isinstance(colours, list) or not 1 <= len(colours) <= 12
                or not all(isinstance(c, str) and 0 < len(c.strip()) <= 20 for c in colours)):
            raise ApiError(400, "'colours' must be a list of 1-12 colour names", "colours")
        try:
            return jsonify(table.start_calibration(colours))
        except CalibrationError as exc:
            raise ApiError(400, str(exc), "colours") from None

    @app.post("/api/calibration/corners")
    @write
    def calibration_corners(data: dict[str, Any]) -> Response:
        corners = data.get("corners")
        if (not isinstance(corners, list) or len(corners) != 4
                or not all(isinstance(p, list) and len(p) == 2
                           and all(isinstance(v, int | float) and not isinstance(v, bool)
                                   for v in p) for p in corners)):
            raise ApiError(400, "'corners' must be four [x, y] points in picture pixels",
                           "corners")
        try:
            return jsonify(table.calibration_call("corners", corners))
        except CalibrationInput as exc:
            raise ApiError(400, str(exc), "corners") from None
        except CalibrationError as exc:
            raise ApiError(409, str(exc)) from None

    @app.post("/api/calibration/skip")
    @write
    def calibration_skip(data: dict[str, Any]) -> Response:
        return calibration_step(lambda: table.calibration_call("skip"))

    @app.post("/api/calibration/save")
    @write
    def calibration_save(data: dict[str, Any]) -> Response:
        return calibration_step(table.save_calibration)

    @app.post("/api/calibration/cancel")
    @write
    def calibration_cancel(data: dict[str, Any]) -> Response:
        return calibration_step(table.cancel_calibration)

    @app.get("/api/camera/stream")
    def camera_stream() -> Response:
        """The annotated camera picture as MJPEG, for the camera page."""
        if not camera_slots.acquire(blocking=False):
            raise ApiError(503, "the camera is already shown on "
                                f"{settings.camera_viewers} screens",
                           retry_after=10)
        stream = mjpeg(table.preview_jpeg, running=lambda: not table.stopping)
        return Response(Slotted(stream, camera_slots),
                        mimetype="multipart/x-mixed-replace; boundary=frame",
                        headers={"Cache-Control": "no-cache, no-store",
                                 "X-Accel-Buffering": "no"})

    return app

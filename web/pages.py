"""The three pages (scoreboard, table, camera) and what the API needs to serve them well.

The pages are static shells plus one script each: everything they show comes from the same
JSON the API gives everyone, so a phone that reconnects only has to fetch one snapshot. What
differs per viewer is decided here, on the server: with the `hide_money` display option the
totals of other players never leave the Pi, so no phone can peek by reading the JSON.

Display options (hide money, who deals, ended by the host) are not rules, so they live beside
the game store in `display/<game_id>.json`, one small file per game, written atomically.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from flask import Flask, Response, render_template, request, url_for

from scorekeeper import (
    Deal,
    GameConfig,
    GameState,
    Pass,
    Place,
    Roll,
    by_face,
)

from .photos import photo_for

STATIC = Path(__file__).parent / "static"
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
NAME = re.compile(r"^[^\x00-\x1f\x7f<>]{1,20}$")
COLOUR = re.compile(r"^[a-z][a-z0-9_-]{0,19}$")
EDITION_KEYS = ("classic", "custom", "royale")
MAX_PLAYERS = 10
DISPLAY_DEFAULTS: dict[str, Any] = {"hide_money": False, "deal": "app", "ended": False}

# Content-Security-Policy: nothing but this Pi, ever (the table has no internet, and a page
# that silently waits on a CDN would look broken). Styles may be set from script (colours).
CSP = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; media-src 'self' data: blob:; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


class BadRequest(ValueError):
    """Input that names its problem; the API turns it into a 400 with this message."""


# --- display options -----------------------------------------------------------------------
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
            raise BadRequest(f"not a game id: {game_id!r}")
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


# --- what one viewer may see ---------------------------------------------------------------
def viewer_state(snap: dict[str, Any], display: dict[str, Any], me: str | None,
                 extras: dict[str, Any]) -> dict[str, Any]:
    """The snapshot as one phone may see it.

    With `hide_money` (until the game is over) the money, score and won notes of every player
    but `me` are removed, and so are the running totals in the round results; the payouts of
    the round just ended stay, since everyone saw them being paid at the table.
    """
    out = copy.deepcopy(snap)
    names = {p["name"] for p in out.get("players", [])}
    me = me if me in names else None
    over = bool(out.get("over"))
    ended = bool(display.get("ended")) and not over
    hidden = bool(display.get("hide_money")) and not over and not ended
    out["display"] = {"hide_money": bool(display.get("hide_money")),
                      "deal": display.get("deal", "app"), "ended": ended,
                      "money_hidden": hidden}
    out["me"] = me
    out.update(extras)
    if ended and out.get("results") is None:
        out["results"] = extras.get("results_now")
    out.pop("results_now", None)
    last_roll = out.get("last_roll")
    if last_roll:
        photo = last_roll.get("photo")
        if out.get("seq", 0) == 0 or (photo and not str(photo).startswith(out["game_id"] + "/")):
            out["last_roll"] = None  # the roll of the game before this one
    if hidden:
        for p in out["players"]:
            if p["name"] != me:
                p["money"] = None
                p["score"] = None
                p["notes"] = []
                p["hidden"] = True
        results = out.get("round_results") or []
        for i, r in enumerate(results):
            r["money"] = {k: v for k, v in r.get("money", {}).items() if k == me}
            if i < len(results) - 1:
                r["casinos"] = []  # only the round just paid is on the table to see
    return out


def money_values(state: GameState) -> list[int]:
    """The note (or card) values of this game, for entering a deal by hand."""
    return sorted(state.edition.deck())


# --- setting up a game ---------------------------------------------------------------------
def parse_new_game(data: dict[str, Any]) -> tuple[GameConfig, dict[str, Any]]:
    """Check a new-game request field by field; the rules engine checks the rest.

    Returns the config and the display options. Messages name the field, since they are
    shown as they are next to the form.
    """
    known = {"edition", "players", "options", "start_player", "seed", "deal", "hide_money"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}")
    edition = data.get("edition")
    if edition not in EDITION_KEYS:
        raise BadRequest(f"edition: must be one of {', '.join(EDITION_KEYS)}")
    players = data.get("players")
    if not isinstance(players, list) or not 2 <= len(players) <= MAX_PLAYERS:
        raise BadRequest(f"players: give 2 to {MAX_PLAYERS} players as {{name, colour}}")
    parsed = []
    for i, p in enumerate(players, 1):
        if not isinstance(p, dict):
            raise BadRequest(f"players[{i}]: must be an object with name and colour")
        name, colour = p.get("name"), p.get("colour")
        if not isinstance(name, str) or not NAME.match(name.strip()):
            raise BadRequest(f"players[{i}].name: 1 to 20 characters, no < or >")
        if not isinstance(colour, str) or not COLOUR.match(colour.strip().lower()):
            raise BadRequest(f"players[{i}].colour: a colour name such as red or blue")
        parsed.append((name.strip(), colour.strip().lower()))
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise BadRequest("options: must be an object")
    _check_options(options)
    start = data.get("start_player", 0)
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < len(parsed):
        raise BadRequest(f"start_player: a seat from 0 to {len(parsed) - 1}")
    seed = data.get("seed")
    if seed is None:
        seed = secrets.randbelow(2**31)
    elif isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**53:
        raise BadRequest("seed: a whole number from 0")
    deal = data.get("deal", "app")
    if deal not in ("app", "hand"):
        raise BadRequest("deal: 'app' (the app deals) or 'hand' (enter the notes dealt)")
    hide = data.get("hide_money", False)
    if not isinstance(hide, bool):
        raise BadRequest("hide_money: true or false")
    config = GameConfig(edition, tuple(parsed), options, seed, start)
    return config, {"hide_money": hide, "deal": deal, "ended": False}


def _check_options(options: dict[str, Any]) -> None:
    """Bounds the rules engine does not need but a hostile request could abuse (sizes)."""
    if len(options) > 10:
        raise BadRequest("options: too many options")
    for key, value in options.items():
        if not isinstance(key, str) or len(key) > 40:
            raise BadRequest("options: option names are short words")
        if key == "deck":
            if value is None:
                continue
            if not isinstance(value, dict) or not 1 <= len(value) <= 30:
                raise BadRequest("options.deck: map up to 30 card values to counts")
            total = 0
            for v, n in value.items():
                if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 100:
                    raise BadRequest(f"options.deck: count for {v} must be 0 to 100")
                if len(str(v)) > 9:
                    raise BadRequest(f"options.deck: card value {str(v)[:12]} is too large")
                total += n
            if total > 1000:
                raise BadRequest("options.deck: at most 1000 cards")
        elif value is not None and not isinstance(value, bool | int | str):
            raise BadRequest(f"options.{key}: must be true/false, a number or a word")
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**6:
            raise BadRequest(f"options.{key}: number out of range")
        elif isinstance(value, str) and len(value) > 20:
            raise BadRequest(f"options.{key}: too long")


# --- history -------------------------------------------------------------------------------
def event_numbers(rows: list[tuple[int, str]], count: int) -> list[tuple[int, bool] | None]:
    """The event-log number of each action still in the game's history, and whether the
    event just before it was an undo.

    Photos are named after the number of events logged before their roll was applied,
    which counts undos too, so the log itself (`GameStore.event_kinds`) says which photo
    belongs to which action.
    """
    stack: list[tuple[int, bool]] = []
    undo_before = False
    for n, kind in rows:
        if kind == "undo":
            if stack:
                stack.pop()
        else:
            stack.append((n, undo_before))
        undo_before = kind == "undo"
    if len(stack) != count:
        return [None] * count
    return list(stack)


def history_entries(config: GameConfig, history: list[Any],
                    events: list[tuple[int, bool] | None],
                    photos: set[str], game_id: str) -> list[dict[str, Any]]:
    """Every action of the game, in words, with who did it, the round, and its photo."""
    state = GameState(config)
    colour = {p.name: p.colour for p in state.players}
    out: list[dict[str, Any]] = []
    for i, action in enumerate(history):
        who = state.player_to_act()
        rnd = state.round
        neutral = state.phase == "neutral"
        entry: dict[str, Any] = {**action.to_dict(), "seq": i + 1, "round": rnd,
                                 "player": who, "colour": colour.get(who or "")}
        state.apply_action(action)
        if isinstance(action, Deal):
            entry["player"] = entry["colour"] = None
            entry["casinos"] = [list(state.casinos[k].notes) for k in range(1, 7)]
            entry["text"] = (f"Round {rnd}: money dealt by the app" if action.casinos is None
                             else f"Round {rnd}: money dealt by hand")
        elif isinstance(action, Roll):
            values = " ".join(d.face for d in by_face(action.dice))
            entry["text"] = (f"{who} rolled the neutral dice: {values}" if neutral
                             else f"{who} rolled {values}")
            event = events[i] if i < len(events) else None
            if event is not None:
                n, after_undo = event
                name = photo_for(photos, n - 1)
                if name is None and after_undo:
                    name = photo_for(photos, n - 2)  # a correction undid the camera's roll
                if name is not None:
                    entry["photo"] = f"{game_id}/{name}"
        elif isinstance(action, Place):
            entry["text"] = f"{who} placed the {action.value}s on casino {action.value}"
        elif isinstance(action, Pass):
            entry["text"] = f"{who} passed"
        if state.round != rnd or state.is_over():
            entry["round_end"] = True
            entry["text"] += f" — round {rnd} paid out"
        out.append(entry)
    return out


def photo_names(data_dir: Path, game_id: str) -> set[str]:
    if not GAME_ID.match(game_id):
        return set()
    folder = Path(data_dir) / "photos" / game_id
    try:
        return {p.name for p in folder.iterdir() if p.suffix == ".jpg"}
    except OSError:
        return set()


# --- the camera's live picture -------------------------------------------------------------
_PLACEHOLDER: bytes | None = None


def placeholder_jpeg() -> bytes:
    """Shown until the camera has a frame, so the page never sits on a broken image."""
    global _PLACEHOLDER
    if _PLACEHOLDER is None:
        import cv2
        import numpy as np

        img = np.full((360, 480, 3), 40, np.uint8)
        cv2.putText(img, "waiting for the camera", (70, 185), cv2.FONT_HERSHEY_SIMPLEX, 0.8,
                    (200, 200, 200), 2, cv2.LINE_AA)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 70])
        _PLACEHOLDER = buf.tobytes() if ok else b""
    return _PLACEHOLDER


def mjpeg(frames: Any, fps: float = 12.0, resend: float = 5.0,
          running: Callable[[], bool] = lambda: True) -> Iterator[bytes]:
    """multipart/x-mixed-replace parts: a frame only when its index changes.

    The same frame is sent again every `resend` seconds: writing is the only way a server
    learns the phone went away, and then this generator is closed. It ends by itself once
    `running` says no: the web server waits for open responses when it shuts down.
    """
    last: int | None = -1
    sent = 0.0
    while running():
        got = frames()
        now = time.monotonic()
        index, data = got if got is not None else (None, placeholder_jpeg())
        if index != last or now - sent >= resend:
            last, sent = index, now
            yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                   + str(len(data)).encode() + b"\r\n\r\n" + data + b"\r\n")
        time.sleep(1.0 / fps)


class Slotted:
    """A streamed body holding one of a few slots, given back when the server closes it.

    `close` is what WSGI servers call when the client is gone (or the stream ends), even
    when the body was never iterated, so a slot cannot leak.
    """

    def __init__(self, body: Iterator[bytes], slots: threading.BoundedSemaphore) -> None:
        self.body, self.slots, self.held = body, slots, True

    def __iter__(self) -> Iterator[bytes]:
        return self.body

    def close(self) -> None:
        close = getattr(self.body, "close", None)
        if close is not None:
            close()
        if self.held:
            self.held = False
            self.slots.release()


# --- pages ---------------------------------------------------------------------------------
# The page shells and their files are sent compressed when the phone takes it: on the Pi's
# Wi-Fi, with a dozen phones joining at once, the bytes are the wait.
COMPRESSIBLE = frozenset({"text/html", "text/css", "text/javascript", "application/javascript",
                          "application/json", "image/svg+xml", "application/manifest+json",
                          "text/plain"})
GZIP_MIN = 600  # bytes: under this gzip's own header and the work are not worth it
GZIP_LEVEL = 6
GZIP_KEPT = 48  # compressed bodies kept (the page shells and static files repeat exactly)
# A file's URL names its content (`?v=<hash>`), so it can be kept for good: an update of the
# file is a new URL. An older or missing hash gets no-cache: the file is what is on disk now.
IMMUTABLE = "public, max-age=31536000, immutable"


class Assets:
    """The content hash of each static file, for its URL, recomputed when the file changes.

    Per file, not one hash of the folder: a new scoreboard.js must not make every phone
    fetch the unchanged stylesheet again.
    """

    def __init__(self, folder: Path = STATIC) -> None:
        self.folder = folder
        self.lock = threading.Lock()
        self.known: dict[str, tuple[tuple[int, int], str]] = {}

    def version(self, name: str) -> str | None:
        """A short hash of `name`'s bytes, or None when there is no such file."""
        path = (self.folder / name).resolve()
        if not path.is_relative_to(self.folder.resolve()):
            return None
        try:
            st = path.stat()
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        with self.lock:
            got = self.known.get(name)
            if got is not None and got[0] == stamp:
                return got[1]
        try:
            digest = hashlib.sha1(path.read_bytes()).hexdigest()[:12]
        except OSError:
            return None
        with self.lock:
            self.known[name] = (stamp, digest)
        return digest


class Gzipped:
    """gzip bodies, the last few kept by content: the same page shell or file is compressed
    once, not once per phone."""

    def __init__(self, kept: int = GZIP_KEPT) -> None:
        self.kept = kept
        self.lock = threading.Lock()
        self.cache: OrderedDict[bytes, bytes] = OrderedDict()

    def __call__(self, body: bytes, keep: bool = True) -> bytes:
        """`keep=False` for answers that seldom repeat (one phone's JSON), so they do not
        push the shells and files out."""
        if not keep:
            return gzip.compress(body, GZIP_LEVEL, mtime=0)
        key = hashlib.sha1(body).digest()
        with self.lock:
            got = self.cache.get(key)
            if got is not None:
                self.cache.move_to_end(key)
                return got
        out = gzip.compress(body, GZIP_LEVEL, mtime=0)
        with self.lock:
            self.cache[key] = out
            while len(self.cache) > self.kept:
                self.cache.popitem(last=False)
        return out


def asset_version(name: str, assets: Assets | None = None) -> str | None:
    """The hash that names `name`'s current content in its URL (None: no such file)."""
    return (assets or Assets()).version(name)


def wants_gzip() -> bool:
    return request.accept_encodings.quality("gzip") > 0


def compress(resp: Response, gz: Gzipped) -> Response:
    """gzip a text answer in place when the client takes it; streams and images never.

    A live stream (text/event-stream) must reach the phone event by event, and a JPEG is
    compressed already. Vary tells any cache on the way that the body depends on the header.
    """
    if resp.mimetype not in COMPRESSIBLE:
        return resp
    static = request.endpoint == "static" and resp.direct_passthrough
    if resp.is_streamed and not static:
        return resp
    resp.vary.add("Accept-Encoding")
    if resp.status_code != 200 or "Content-Encoding" in resp.headers or not wants_gzip():
        return resp
    if static:  # a file sent as it is read: read it whole instead (they are small)
        try:
            body = (STATIC / str((request.view_args or {})["filename"])).read_bytes()
        except (OSError, KeyError):
            return resp
    else:
        body = resp.get_data()
    if len(body) < GZIP_MIN:
        return resp
    if static:
        close = getattr(resp.response, "close", None)
        if close is not None:
            close()
        resp.direct_passthrough = False
    resp.set_data(gz(body, keep=static or resp.mimetype == "text/html"))
    resp.headers["Content-Encoding"] = "gzip"
    etag, _weak = resp.get_etag()
    if etag:
        # The compressed bytes are not the file's; a weak tag still lets the phone ask
        # "changed?" and be answered 304.
        resp.set_etag(etag, weak=True)
    return resp


def register_pages(app: Flask) -> None:
    """The HTML routes and the headers every response gets."""
    assets = Assets()
    gz = Gzipped()
    app.extensions["assets"] = assets

    def asset(name: str) -> str:
        """A static file's URL under its content hash (see IMMUTABLE)."""
        return url_for("static", filename=name, v=assets.version(name) or "0")

    @app.context_processor
    def _assets() -> dict[str, Any]:
        return {"asset": asset}

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        if resp.mimetype == "text/html":
            resp.headers.setdefault("Content-Security-Policy", CSP)
            resp.headers.setdefault("Cache-Control", "no-cache")
        if request.endpoint == "static" and resp.status_code in (200, 206, 304):
            name = str((request.view_args or {}).get("filename", ""))
            current = request.args.get("v") == assets.version(name)
            resp.headers["Cache-Control"] = IMMUTABLE if current else "no-cache"
            if current:
                resp.expires = None
        return compress(resp, gz)

    @app.get("/")
    def scoreboard() -> str:
        return render_template("scoreboard.html", page="scoreboard")

    @app.get("/table")
    def table_page() -> str:
        return render_template("table.html", page="table")

    @app.get("/camera")
    def camera_page() -> str:
        return render_template("camera.html", page="camera")

    @app.get("/calibrate")
    def calibrate_page() -> str:
        return render_template("calibrate.html", page="calibrate")

    @app.get("/qr.svg")
    def qr() -> Response:
        """The scoreboard's address as a QR code, as this device reached the table: the
        host shows it (or the TV does) and the other phones join by scanning it."""
        import io

        import segno

        url = request.host_url  # scheme://host:port/ exactly as the browser used it
        buf = io.BytesIO()
        segno.make(url, error="m").save(buf, kind="svg", scale=6, border=2, xmldecl=False,
                                        dark="#000", light="#fff")
        return Response(buf.getvalue(), mimetype="image/svg+xml",
                        headers={"Cache-Control": "no-cache", "X-Url": url})

    @app.get("/manifest.webmanifest")
    def manifest() -> Response:
        body = {"name": "Vegas Table", "short_name": "Vegas", "start_url": "/",
                "display": "standalone", "background_color": "#101418",
                "theme_color": "#101418",
                "icons": [{"src": asset("icon.svg"), "sizes": "any", "type": "image/svg+xml"}]}
        return Response(json.dumps(body), mimetype="application/manifest+json",
                        headers={"Cache-Control": "no-cache"})

"""The pages (scoreboard, table, camera, calibrate) as a blueprint, and how everything is
delivered: static files under their content hash, cached for good; text compressed; the
headers every response gets.

The pages are static shells plus one script each: everything they show comes from the same
JSON the API gives everyone (`web.views`), so a phone that reconnects only has to fetch one
snapshot.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, render_template, request, url_for
from flask.blueprints import BlueprintSetupState

STATIC = Path(__file__).parent / "static"

# Content-Security-Policy: nothing but this Pi, ever (the table has no internet, and a page
# that silently waits on a CDN would look broken). Styles may be set from script (colours).
CSP = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; media-src 'self' data: blob:; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")





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


bp = Blueprint("pages", __name__)


@bp.record_once
def _setup(state: BlueprintSetupState) -> None:
    state.app.extensions["assets"] = Assets()
    state.app.extensions["gzipped"] = Gzipped()


def asset(name: str) -> str:
    """A static file's URL under its content hash (see IMMUTABLE)."""
    assets: Assets = current_app.extensions["assets"]
    return url_for("static", filename=name, v=assets.version(name) or "0")


@bp.app_context_processor
def _assets() -> dict[str, Any]:
    return {"asset": asset}


@bp.after_app_request
def _headers(resp: Response) -> Response:
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    resp.headers.setdefault("Referrer-Policy", "no-referrer")
    resp.headers.setdefault("X-Frame-Options", "DENY")
    if resp.mimetype == "text/html":
        resp.headers.setdefault("Content-Security-Policy", CSP)
        resp.headers.setdefault("Cache-Control", "no-cache")
    if request.endpoint == "static" and resp.status_code in (200, 206, 304):
        assets: Assets = current_app.extensions["assets"]
        name = str((request.view_args or {}).get("filename", ""))
        current = request.args.get("v") == assets.version(name)
        resp.headers["Cache-Control"] = IMMUTABLE if current else "no-cache"
        if current:
            resp.expires = None
    return compress(resp, current_app.extensions["gzipped"])


@bp.get("/")
def scoreboard() -> str:
    return render_template("scoreboard.html", page="scoreboard")


@bp.get("/table")
def table_page() -> str:
    return render_template("table.html", page="table")


@bp.get("/camera")
def camera_page() -> str:
    return render_template("camera.html", page="camera")


@bp.get("/calibrate")
def calibrate_page() -> str:
    return render_template("calibrate.html", page="calibrate")


@bp.get("/qr.svg")
def qr() -> Response:
    """The scoreboard's address as a QR code, as this device reached the table: the host
    shows it (or the TV does) and the other phones join by scanning it."""
    import io

    import segno

    url = request.host_url  # scheme://host:port/ exactly as the browser used it
    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="svg", scale=6, border=2, xmldecl=False,
                                    dark="#000", light="#fff")
    return Response(buf.getvalue(), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-cache", "X-Url": url})


@bp.get("/manifest.webmanifest")
def manifest() -> Response:
    body = {"name": "Vegas Table", "short_name": "Vegas", "start_url": "/",
            "display": "standalone", "background_color": "#101418",
            "theme_color": "#101418",
            "icons": [{"src": asset("icon.svg"), "sizes": "any", "type": "image/svg+xml"}]}
    return Response(json.dumps(body), mimetype="application/manifest+json",
                    headers={"Cache-Control": "no-cache"})

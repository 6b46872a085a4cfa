"""The camera: its annotated live picture, the roll photos, and the health check a
watchdog asks."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from ..api import ApiError, ctx
from ..photos import photo_bytes, photo_path, photo_width
from ..streams import Slotted, mjpeg

bp = Blueprint("camera", __name__)


@bp.get("/api/camera/stream")
def stream() -> Response:
    """The annotated camera picture as MJPEG, for the camera page."""
    c = ctx()
    if not c.camera_slots.acquire(blocking=False):
        raise ApiError(503, f"the camera is already shown on {c.settings.camera_viewers} "
                            "screens", retry_after=10)
    frames = mjpeg(c.table.preview_jpeg, running=lambda: not c.table.stopping)
    return Response(Slotted(frames, c.camera_slots),
                    mimetype="multipart/x-mixed-replace; boundary=frame",
                    headers={"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"})


@bp.get("/api/photo/<game_id>/<name>")
def photo(game_id: str, name: str) -> Response:
    """A roll photo; `?w=N` scales it to at most N px wide (`photos.PHOTO_WIDTHS`)."""
    c = ctx()
    try:
        width = photo_width(request.args.get("w"))
    except ValueError as exc:
        raise ApiError(400, str(exc), "w") from None
    if width is None:
        data = photo_bytes(c.table.data_dir, f"{game_id}/{name}")
    else:
        path = photo_path(c.table.data_dir, game_id, name)
        data = None if path is None else c.thumbs.get(path, width)
    if data is None:
        raise ApiError(404, f"no photo {game_id}/{name}")
    # A photo's name is written once (`photos.save_photo`), so it may be cached for good.
    return Response(data, mimetype="image/jpeg",
                    headers={"Cache-Control": "public, max-age=31536000, immutable"})


@bp.get("/api/health")
def health() -> tuple[Response, int]:
    """200 while the frame loop runs and frames come; 503 (with why) when not, for a
    watchdog that restarts the service."""
    table = ctx().table
    ok, why = table.health()
    snap = table.snapshot()
    return jsonify(ok=ok, reason=why, camera=snap["camera"], storage=snap["storage"],
                   game_id=snap["game_id"]), (200 if ok else 503)

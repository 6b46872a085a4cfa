"""The guided calibration (the /calibrate page's API): start, the tray's corners, skip a
step, save the profile, cancel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, jsonify

from calibration.guide import CalibrationError

from ..api import ApiError, ctx, write
from ..session import CalibrationInput

bp = Blueprint("calibration", __name__)


def _step(fn: Callable[[], dict[str, Any]]) -> Response:
    try:
        return jsonify(fn())
    except CalibrationError as exc:
        raise ApiError(409, str(exc)) from None
    except OSError as exc:
        raise ApiError(507, f"cannot save the profile: {exc.strerror or exc}") from None


@bp.get("/api/calibration")
def status() -> Response:
    return jsonify(ctx().table.calibration_status())


@bp.post("/api/calibration/start")
@write
def start(data: dict[str, Any]) -> Response:
    colours = data.get("colours")
    if colours is not None and (
            not isinstance(colours, list) or not 1 <= len(colours) <= 12
            or not all(isinstance(c, str) and 0 < len(c.strip()) <= 20 for c in colours)):
        raise ApiError(400, "'colours' must be a list of 1-12 colour names", "colours")
    try:
        return jsonify(ctx().table.start_calibration(colours))
    except CalibrationError as exc:
        raise ApiError(400, str(exc), "colours") from None


@bp.post("/api/calibration/corners")
@write
def corners(data: dict[str, Any]) -> Response:
    points = data.get("corners")
    if (not isinstance(points, list) or len(points) != 4
            or not all(isinstance(p, list) and len(p) == 2
                       and all(isinstance(v, int | float) and not isinstance(v, bool)
                               for v in p) for p in points)):
        raise ApiError(400, "'corners' must be four [x, y] points in picture pixels",
                       "corners")
    try:
        return jsonify(ctx().table.calibration_call("corners", points))
    except CalibrationInput as exc:
        raise ApiError(400, str(exc), "corners") from None
    except CalibrationError as exc:
        raise ApiError(409, str(exc)) from None


@bp.post("/api/calibration/skip")
@write
def skip(data: dict[str, Any]) -> Response:
    return _step(lambda: ctx().table.calibration_call("skip"))


@bp.post("/api/calibration/save")
@write
def save(data: dict[str, Any]) -> Response:
    return _step(ctx().table.save_calibration)


@bp.post("/api/calibration/cancel")
@write
def cancel(data: dict[str, Any]) -> Response:
    return _step(ctx().table.cancel_calibration)

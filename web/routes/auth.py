"""The host's login: the table PIN, a new PIN, and the notices only the host dismisses."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request, session

from ..api import ApiError, body, ctx, write
from ..auth import pin_matches

bp = Blueprint("auth", __name__)


@bp.get("/api/whoami")
def whoami() -> Response:
    c = ctx()
    if not c.is_host():
        return jsonify(host=False)
    return jsonify(host=True, wrong_pins=c.limiter.report(),
                   pin_fixed=c.settings.pin is not None,
                   pin_problem=c.host_file.unsaved or c.host_file.problem or None)


@bp.post("/api/login")
def login() -> Response:
    c = ctx()
    who = request.remote_addr or "?"
    c.guard()
    data = body()
    creds = c.host_file.credentials
    if not pin_matches(data.get("pin"), creds.pin):
        c.limiter.fail(who)
        raise ApiError(403, "wrong table PIN")
    session["host"] = creds.generation
    session.permanent = True  # a phone browser restarted mid-game stays the host
    return jsonify(ok=True)


@bp.post("/api/pin/new")
@write
def renew_pin(data: dict[str, Any]) -> Response:
    """A new PIN, shown to the host who asked; every other login ends with the old one."""
    c = ctx()
    if c.settings.pin is not None:
        raise ApiError(409, "the PIN is fixed by --pin or $VEGAS_TABLE_PIN for this run: "
                            "change it there")
    creds = c.host_file.renew()
    c.limiter.reset()
    session["host"] = creds.generation
    return jsonify(ok=True, pin=creds.pin)


@bp.post("/api/notices/dismiss")
@write
def dismiss_notice(data: dict[str, Any]) -> Response:
    nid = data.get("id")
    if not isinstance(nid, int) or isinstance(nid, bool):
        raise ApiError(400, "'id' must be the notice's number", "id")
    if not ctx().table.dismiss_notice(nid):
        raise ApiError(404, f"no notice {nid}")
    return jsonify(ok=True)


@bp.post("/api/logout")
def logout() -> Response:
    session.pop("host", None)
    return jsonify(ok=True)

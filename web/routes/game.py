"""The game: the standings and their live updates for every phone, and the host's moves
(an action, undo, answering the camera's questions, a new game, how it is shown, its end)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, jsonify

from scorekeeper import Deal, GameState, RulesError, StoreError, TileChoice, action_from_dict
from scorekeeper.store import StorageFull
from scorekeeper.tiles import FACES

from ..api import ApiError, ctx, write
from ..forms import BadRequest, parse_new_game
from ..streams import Slotted
from .games import edition_limits

bp = Blueprint("game", __name__)


@bp.get("/api/state")
def state() -> Response:
    """The standings (DESIGN.md); `?me=NAME` is the player holding this phone."""
    c = ctx()
    return jsonify(c.current_view(c.viewer()))


@bp.get("/api/events")
def events() -> Response:
    """The standings pushed at every change (Server-Sent Events), for as long as the page
    stays open (up to `Settings.stream_max`, then it reconnects)."""
    c = ctx()
    table, display, settings = c.table, c.display, c.settings
    me = c.viewer()
    if not c.live_slots.acquire(blocking=False):
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
                view = c.current_view(me)
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

    return Response(Slotted(stream(), c.live_slots), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.post("/api/action")
@write(play=True)
def action(data: dict[str, Any]) -> Response:
    c = ctx()
    try:
        act = action_from_dict(data)
    except RulesError as exc:
        raise ApiError(400, str(exc)) from None
    with c.table.lock:
        if isinstance(act, TileChoice):
            refuse_secret(c.table.game.state)
        c.table.apply(act)
        c.deal_if_due()
        return jsonify(ok=True, seq=c.table.game.state.seq)


def refuse_secret(state: GameState) -> None:
    """A secret tile choice (Lucky Punch's tokens, Black Box's chips pile) is made on the
    deciding player's own phone: through the host's controls the table would see it."""
    pending = state.edition.pending(state)
    if pending is not None and pending.secret:
        raise ApiError(403, f"{FACES[pending.tile]}: {pending.player}'s choice is secret: "
                            f"{pending.player} makes it on their own phone")


@bp.post("/api/undo")
@write(play=True)
def undo(data: dict[str, Any]) -> Response:
    c = ctx()
    table = c.table
    with table.lock:
        act = table.undo()
        undone = [act.to_dict()]
        if isinstance(act, Deal) and table.game.state.seq and c.deal_mode() == "app":
            # The app's own deal is not a move: take back the placement that ended the
            # round; placing it again deals the very same notes (the deck is seeded).
            undone.append(table.undo().to_dict())
        return jsonify(ok=True, undone=undone[-1], undone_all=undone,
                       seq=table.game.state.seq)


@bp.post("/api/confirm")
@write(play=True)
def confirm(data: dict[str, Any]) -> Response:
    c = ctx()
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
        c.table.dismiss(pid)  # "that was no roll"
        return jsonify(ok=True, seq=c.table.game.state.seq)
    with c.table.lock:
        try:
            c.table.confirm(pid, value, dice)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        c.deal_if_due()
        return jsonify(ok=True, seq=c.table.game.state.seq)


@bp.post("/api/roll/check")
@write(play=True)
def check_roll(data: dict[str, Any]) -> Response:
    """Check a roll the camera holds back (a die below the line) now, not at the placement."""
    table = ctx().table
    if not table.ask_held_roll():
        raise ApiError(409, "no roll is waiting for its placement")
    return jsonify(ok=True, pending=table.pending_dicts())


@bp.post("/api/game")
@write
def new_game(data: dict[str, Any]) -> Response:
    """Set up the next game: edition, options, players and colours, start player."""
    c = ctx()
    table = c.table
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
        c.stale_roll = before
        c.display.update(game.id, **disp)
        table.auto_deal = disp["deal"] == "app"
        c.deal_if_due()
        return jsonify(ok=True, game_id=game.id, seq=table.game.state.seq)


@bp.post("/api/display")
@write
def display_options(data: dict[str, Any]) -> Response:
    """Options of how this game is shown and run that are not rules (hide money, deal)."""
    c = ctx()
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
    with c.table.lock:
        gid = c.table.game.id
        new = c.display.update(gid, **changes)
        if "deal" in changes:
            c.table.auto_deal = changes["deal"] == "app"
        return jsonify(ok=True, game_id=gid, display=new)


@bp.post("/api/end")
@write
def end_game(data: dict[str, Any]) -> Response:
    """The host stops the game early: the scoreboard shows the ranking as it stands."""
    c = ctx()
    ended = data.get("ended", True)
    if not isinstance(ended, bool):
        raise ApiError(400, "ended: true (end the game) or false (reopen it)", "ended")
    with c.table.lock:
        if c.table.game.state.is_over():
            raise ApiError(409, "the game is already over")
        gid = c.table.game.id
        c.display.update(gid, ended=ended)
        if ended:
            c.table.game_ended()  # no question or held roll outlives the game
        return jsonify(ok=True, game_id=gid, ended=ended)


@bp.get("/api/history")
def history() -> Response:
    """Every action of the current game in words, with the roll photos."""
    c = ctx()
    with c.table.lock:
        game = c.table.game
        state = game.state
        disp = c.display.get(game.id)
        gid = game.id
        over = state.is_over()
    if disp["hide_money"] and not over and not disp["ended"]:
        c.require_host()  # deals and placements would add up to the hidden money
    return jsonify(c.history_of(gid, state))


@bp.get("/api/editions")
def editions() -> Response:
    """What the set-up form needs from the rules: player counts, rounds, colours."""
    return jsonify(editions=edition_limits())

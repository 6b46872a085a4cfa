"""The saved games (the host's list on /table): list, view, resume, delete."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, jsonify

from scorekeeper import EDITIONS, ConfigError, StoreError, make_edition
from scorekeeper.tiles import USED_TILES

from ..api import ApiError, ctx, write
from ..display import GAME_ID
from ..forms import MAX_PLAYERS

bp = Blueprint("games", __name__)


@functools.cache
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
        if key == "royale":
            # With the casino tiles the two black extra dice are no player's dice either.
            tiles = make_edition(key, {"tiles": 3})
            info["tiles"] = {"max": 6, "reserved_colours": list(tiles.reserved_colours()),
                             "used_tiles": list(USED_TILES)}
        out[key] = info
    return out


def leaders(ranking: list[tuple[str, int]]) -> dict[str, Any]:
    """Who leads among (name, money) pairs, and with how much (none while nobody has any)."""
    top = max((m for _, m in ranking), default=0)
    names = [n for n, m in ranking if m == top] if top > 0 else []
    return {"leaders": names, "lead_money": top}


def saved_games() -> list[dict[str, Any]]:
    """Every saved game, the one at the table first."""
    c = ctx()
    table, limits = c.table, edition_limits()
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
                                             "seq", "round", "over", "to_move", "winners")}
        # The game at the table counts as its ranking does (Royale's chips kept too).
        score = dict(ranking) if is_current else {}
        entry["players"] = [{"name": p["name"], "colour": p["colour"],
                             "money": score.get(p["name"], p["money"])}
                            for p in g["players"]]
        entry["title"] = limits.get(str(g["edition"]), {}).get("title", g["edition"])
        entry["current"] = is_current
        entry["ended"] = bool(c.display.get(gid)["ended"]) if GAME_ID.match(gid) else False
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


@bp.get("/api/games")
def games() -> Response:
    """The saved games (edition, players, round, when, who leads), for the host."""
    ctx().require_host()
    return jsonify(games=saved_games())


@bp.get("/api/games/<game_id>/history")
def game_history(game_id: str) -> Response:
    """One saved game's history in words, with its photos, for the host."""
    c = ctx()
    c.require_host()
    entry = saved_game(game_id)
    with c.table.lock:
        state = c.table.game.state if c.table.game.id == game_id else None
    if state is None:
        try:
            state = c.table.store.load(game_id).state
        except StoreError as exc:
            raise ApiError(409, f"this game cannot be read: {exc}") from None
    return jsonify({**c.history_of(game_id, state), "game": entry})


@bp.post("/api/games/<game_id>/resume")
@write
def resume_game(data: dict[str, Any], game_id: str) -> Response:
    """Play a saved game on: the one at the table stays saved as it is."""
    c = ctx()
    table = c.table
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
        c.stale_roll = before
        if c.display.exists(game.id):
            table.auto_deal = c.display.get(game.id)["deal"] == "app"
        c.deal_if_due()
        return jsonify(ok=True, game_id=game.id, seq=table.game.state.seq)


@bp.delete("/api/games/<game_id>")
@write
def delete_game(data: dict[str, Any], game_id: str) -> Response:
    """Delete a saved game, its history and photos; never the one at the table."""
    c = ctx()
    with c.table.lock:
        entry = saved_game(game_id)
        if entry["current"]:
            raise ApiError(409, "this game is the one being played: start or resume "
                                "another game first")
        try:
            c.table.store.delete_game(game_id)
        except StoreError as exc:
            raise ApiError(404, str(exc)) from None
    shutil.rmtree(Path(c.table.data_dir) / "photos" / game_id, ignore_errors=True)
    return jsonify(ok=True, game_id=game_id)

"""A player answers their own tile's question on their own phone (Royale's casino tiles).

A tile's decision belongs to one player; a secret one (Lucky Punch's tokens, Black Box's
chips pile) can only be made here, since anything the host taps is seen by the table. There
is no PIN: the phone says who holds it, as the scoreboard's "Me?" does, which a table of
friends accepts (docs/api.md). What it may answer is narrow: only the decision waiting, only
for the player it waits for, only with one of the choices it offers.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from scorekeeper import RulesError, TileChoice

from ..api import ApiError, body, ctx

bp = Blueprint("answer", __name__)

NAME_MAX = 40
WORD_MAX = 40


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > WORD_MAX:
        raise ApiError(400, f"'{key}' must be a short text", key)
    return value.strip()


def parse_answer(data: dict[str, Any]) -> TileChoice:
    """The body as a `TileChoice`, or a 400 naming the field that is wrong."""
    unknown = sorted(set(data) - {"player", "tile", "choice", "value"})
    if unknown:
        raise ApiError(400, f"unknown field {str(unknown[0])[:40]!r}", str(unknown[0])[:40])
    player, tile, choice = _text(data, "player"), _text(data, "tile"), _text(data, "choice")
    value = data.get("value")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or abs(value) > 1000):
        raise ApiError(400, "'value' must be a whole number (or left out)", "value")
    return TileChoice(tile, choice, value, player)


@bp.post("/api/answer")
def answer() -> Response:
    """`{"player", "tile", "choice", "value"?}`: the player's answer to their tile's question."""
    c = ctx()
    act = parse_answer(body())
    table = c.table
    with table.lock:
        if c.display.get(table.game.id)["ended"]:
            raise ApiError(409, "the host ended this game: reopen it or start a new one")
        state = table.game.state
        if state.is_over():
            raise ApiError(409, "the game is over")
        pending = state.edition.pending(state)
        if pending is None:
            raise ApiError(409, "no tile is waiting for a decision")
        if act.player != pending.player:
            raise ApiError(409, f"{pending.ask}: this is {pending.player}'s decision, "
                                f"not {act.player}'s")
        if pending.roll is not None:
            raise ApiError(409, f"{pending.ask}: the black dice are thrown first, at the "
                                "table")
        if TileChoice(act.tile, act.choice, act.value) not in pending.choices:
            open_ = ", ".join(ch["label"] for ch in pending.to_dict()["choices"])
            raise ApiError(409, f"{pending.ask}: that is not one of the choices ({open_})",
                           "choice")
        try:
            table.apply(act)
        except RulesError as exc:
            raise ApiError(409, str(exc)) from None
        c.deal_if_due()
        return jsonify(ok=True, seq=table.game.state.seq)


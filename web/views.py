"""What the pages are sent: the standings as one phone may see them, and a game's history
in words with its photos."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from scorekeeper import Deal, GameConfig, GameState, Pass, Place, Roll, TileChoice, by_face
from scorekeeper.tiles import FACES

from .display import GAME_ID
from .photos import photo_for


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
        asked = state.edition.pending(state)
        entry: dict[str, Any] = {**action.to_dict(), "seq": i + 1, "round": rnd,
                                 "player": who, "colour": colour.get(who or "")}
        told = len(state.notices)
        state.apply_action(action)
        if isinstance(action, Deal):
            entry["player"] = entry["colour"] = None
            entry["casinos"] = [list(state.casinos[k].notes) for k in range(1, 7)]
            entry["text"] = (f"Round {rnd}: money dealt by the app" if action.casinos is None
                             else f"Round {rnd}: money dealt by hand")
        elif isinstance(action, TileChoice):
            entry.update(tile_choice_words(state, action, asked, who))
        elif isinstance(action, Roll) and asked is not None and asked.roll is not None:
            values = " and ".join(d.face for d in by_face(action.dice))
            entry["text"] = f"{FACES.get(asked.tile, asked.tile)}: {who} threw {values}"
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
        made = state.notices[told:]
        now = tile_notices([n for n in made if n.get("round") == rnd])
        then = tile_notices([n for n in made if n.get("round") != rnd])  # the next round's
        if now or then:
            entry["tiles"] = now + then  # what the tiles did because of this action
        if now and entry.get("type") == "roll" and asked is not None:
            entry["text"] = ". ".join(now)  # the tile says what the throw did
        elif now:
            entry["text"] += ". " + ". ".join(now)
        if state.round != rnd or state.is_over():
            entry["round_end"] = True
            entry["text"] += f" — round {rnd} paid out"
        if then:
            entry["text"] += ". " + ". ".join(then)
        out.append(entry)
    return out


def tile_choice_words(state: GameState, action: TileChoice, asked: Any,
                      who: str | None) -> dict[str, Any]:
    """A tile decision in the history: its button's words, or only that it was made when
    the choice is secret (its value stays out of the entry: the tile's own reveal tells it)."""
    name = FACES.get(action.tile, action.tile)
    if state.edition.hidden_choice(action):
        return {"value": None, "hidden": True, "text": f"{name}: {who} chose in secret"}
    label = None
    if asked is not None:
        for choice, words in zip(asked.choices, asked.to_dict()["choices"], strict=False):
            if (choice.tile, choice.choice, choice.value) == (action.tile, action.choice,
                                                              action.value):
                label = words["label"]
    said = label or (action.choice if action.value is None
                     else f"{action.choice} {action.value}")
    return {"hidden": False, "text": f"{name}: {who} chose “{said}”"}


def tile_notices(notices: list[dict[str, Any]]) -> list[str]:
    """The engine's words for what tiles did (draws, tokens, money from and to the bank)."""
    out = []
    for n in notices:
        if n.get("kind") not in ("tile", "bank", "chips", "pays"):
            continue
        text = n.get("text")
        if not text:
            what = n.get("did") or n.get("kind")
            text = f"{n.get('name', n.get('tile', 'a tile'))}: {what}"
        out.append(str(text))
    return out


def photo_names(data_dir: Path, game_id: str) -> set[str]:
    if not GAME_ID.match(game_id):
        return set()
    folder = Path(data_dir) / "photos" / game_id
    try:
        return {p.name for p in folder.iterdir() if p.suffix == ".jpg"}
    except OSError:
        return set()

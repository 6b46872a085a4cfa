"""The host's set-up form as the API gets it: parsed and checked into a game's config and
its display options, or a `BadRequest` naming what is wrong."""

from __future__ import annotations

import re
import secrets
from typing import Any

from scorekeeper import GameConfig

NAME = re.compile(r"^[^\x00-\x1f\x7f<>]{1,20}$")
COLOUR = re.compile(r"^[a-z][a-z0-9_-]{0,19}$")
EDITION_KEYS = ("classic", "custom", "royale")
MAX_PLAYERS = 10


class BadRequest(ValueError):
    """Input that names its problem; the API turns it into a 400 with this message."""

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
        elif isinstance(value, list):
            # A list of words (Royale's tile_pool names tile faces): short, and not nested.
            if len(value) > 20 or not all(isinstance(v, str) and len(v) <= 20 for v in value):
                raise BadRequest(f"options.{key}: a list of at most 20 short words")
        elif value is not None and not isinstance(value, bool | int | str):
            raise BadRequest(f"options.{key}: must be true/false, a number or a word")
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**6:
            raise BadRequest(f"options.{key}: number out of range")
        elif isinstance(value, str) and len(value) > 20:
            raise BadRequest(f"options.{key}: too long")


# --- history -------------------------------------------------------------------------------

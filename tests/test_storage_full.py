"""A full disk: nothing that cannot be saved is applied, everyone is told, play resumes.

The store's page limit (SQLite's max_page_count) stands in for a full disk: SQLite answers
both with SQLITE_FULL.
"""

from __future__ import annotations

import random

from scorekeeper import Deal
from scorekeeper.store import StorageFull
from web.app import Settings, create_app
from web.session import TableSession

from .test_resilience import _roll_stream

PIN = "1593"


def _fill(table: TableSession) -> None:
    """Let the store grow no further than it is now."""
    (pages,) = table.store._db.execute("PRAGMA page_count").fetchone()
    table.store.max_pages = pages


def test_an_action_the_store_cannot_take_is_refused_and_changes_nothing(table: TableSession):
    client = create_app(table, Settings(pin=PIN)).test_client()
    assert client.post("/api/login", json={"pin": PIN}).status_code == 200
    assert client.post("/api/action", json={"type": "deal"}).status_code == 200
    _fill(table)
    rng = random.Random(4)
    refused = None
    for _ in range(300):  # a page still has room for a few events
        state = table.game.state
        act = state.random_roll(rng) if state.phase == "roll" else rng.choice(
            state.legal_actions())
        before = client.get("/api/state").get_json()
        r = client.post("/api/action", json=act.to_dict())
        if r.status_code != 200:
            refused = (act, before, r)
            break
    assert refused is not None, "the page limit never filled"
    act, before, r = refused
    assert r.status_code == 507
    assert "storage is full" in r.get_json()["error"]
    after = client.get("/api/state").get_json()
    for key in ("seq", "phase", "players", "casinos", "to_move"):
        assert after[key] == before[key], key
    assert after["storage"] == {"full": True, "message": r.get_json()["error"]}
    # Space comes back: the same action goes through, and the banner goes.
    table.store.max_pages = None
    r = client.post("/api/action", json=act.to_dict())
    assert r.status_code == 200
    assert client.get("/api/state").get_json()["storage"]["full"] is False
    # What was acknowledged is what a restart replays.
    again = type(table.store)(table.store.path).load(table.game.id).state
    assert again.seq == table.game.state.seq


def test_a_roll_seen_while_the_storage_is_full_waits_for_the_table(table: TableSession):
    table.apply(Deal())
    _fill(table)
    rng = random.Random(7)
    asked = []
    for turn in range(300):  # the camera plays turns until the store can take no more
        state = table.game.state
        seq = state.seq
        if state.phase == "roll":
            events = _roll_stream(table, seed=turn)
            with table.lock:
                table._handle(events)
            asked = [p for p in table.pending if p.kind == "roll"]
            if asked:
                break
            assert table.game.state.seq == seq + 1
            continue
        try:
            table.apply(rng.choice(state.legal_actions()))
        except StorageFull:  # full on a placement: let it through, fill again, go on
            table.store.max_pages = None
            table.apply(rng.choice(state.legal_actions()))
            _fill(table)
    assert asked, "the page limit never filled"
    seq = table.game.state.seq
    assert asked[0].reason == "storage"
    assert "storage is full" in asked[0].message
    assert table.game.state.phase == "roll", "a roll that could not be saved is not applied"
    assert table.snapshot()["storage"]["full"] is True
    # Space comes back: the host confirms the roll as read, and it is in the game.
    table.store.max_pages = None
    table.confirm(asked[0].id)
    assert table.game.state.seq == seq + 1
    assert table.game.state.phase == "choose"
    assert table.snapshot()["storage"]["full"] is False

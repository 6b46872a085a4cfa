"""Damaged files never stop the service: `serve` starts, says what happened, sets them aside."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from scorekeeper import Deal
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from web.session import TableSession

from .conftest import NoReader, free_port, serve_process


def _get(url: str) -> dict:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as exc:  # the health check's 503 still carries JSON
        return json.loads(exc.read())


def _played_store(data: Path, actions: int = 6) -> str:
    """A store with one game of a few actions, closed cleanly."""
    store = GameStore(data)
    table = TableSession(store, data, "demo", NoReader(), players=players(3), seed=9)
    import random as rnd

    rng = rnd.Random(1)
    state = table.game.state
    while state.seq < actions:
        if state.phase == "deal":
            table.apply(Deal())
        elif state.phase == "roll":
            table.apply(state.random_roll(rng))
        else:
            table.apply(rng.choice(state.legal_actions()))
    gid = table.game.id
    store.close()
    return gid


def _serve(data: Path, port: int) -> subprocess.Popen:
    return serve_process(["--source", "demo", "--data-dir", str(data), "--no-mdns"], port,
                         env={"VEGAS_TABLE_PIN": ""})


def _stop(p: subprocess.Popen) -> str:
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return p.stdout.read().decode(errors="replace")


@pytest.mark.slow
def test_serve_starts_over_a_damaged_store_and_profile_and_says_so(tmp_path: Path):
    data = tmp_path / "data"
    gid = _played_store(data)
    db = data / GameStore.FILENAME
    size = db.stat().st_size
    rng = random.Random(3)
    with open(db, "r+b") as fh:  # three 4 KB pages of garbage, past the header
        for page in rng.sample(range(1, max(2, size // 4096)), min(3, size // 4096 - 1)):
            fh.seek(page * 4096)
            fh.write(os.urandom(4096))
    profiles = data / "profiles"
    profiles.mkdir()
    (profiles / "profile-20261201-120000.json").write_bytes(os.urandom(2000))

    port = free_port()
    proc = _serve(data, port)
    try:
        state = _get(f"http://127.0.0.1:{port}/api/state")
        assert state["calibration"]["calibrated"] is False
        assert "set aside" in state["calibration"]["error"]
        notices = " ".join(n["message"] for n in state["notices"])
        assert "damaged" in notices and "set aside" in notices
        recovered = [g for g in state["notices"] if "recovered" in g["message"]]
        assert recovered, notices
    finally:
        out = _stop(proc)
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    assert list(data.glob("games.sqlite3.damaged-*")), "the damaged store is kept, aside"
    assert list(profiles.glob("*.damaged-*")), "the damaged profile is kept, aside"
    # What could be read is in the new store; a second start meets no damage at all.
    store = GameStore(data)
    assert store.recovery is None
    assert gid in {g["game_id"] for g in store.list_games()} or not store.list_games()
    store.close()


@pytest.mark.slow
def test_an_emptied_store_is_said_not_hidden(tmp_path: Path):
    data = tmp_path / "data"
    _played_store(data)
    (data / GameStore.FILENAME).write_bytes(b"")
    for extra in data.glob("games.sqlite3-*"):
        extra.unlink()
    port = free_port()
    proc = _serve(data, port)
    try:
        state = _get(f"http://127.0.0.1:{port}/api/state")
        notices = " ".join(n["message"] for n in state["notices"])
        assert "empty" in notices
    finally:
        out = _stop(proc)
    assert proc.returncode == 0, out[-3000:]
